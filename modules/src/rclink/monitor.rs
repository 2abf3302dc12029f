//! A rate monitor: the peak number of bytes that crossed a set of points in any window of
//! `window` cycles (1 µs by default), for the chip-level send and receive caps (seed 000
//! «芯片级聚合发送 cap», «芯片级聚合接收 cap»: ≤ num_lg × line_rate).
//!
//! ```text
//!   b{i} : u64 (cumulative bytes at point i) -->[ monitor ]   counters: peak_window_bytes,
//!                                                             total_bytes
//! ```
//! The inputs are step functions; the largest total(t) − total(t − W) is reached with t at a
//! step, so the monitor evaluates it exactly at each change (the value read at n was committed
//! at n−1, which is the event time). Nothing is sampled, so event skip changes nothing.

use std::collections::VecDeque;

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, In, PortDecl, Wake};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "peak_window_bytes",
        "bytes",
        "gauge: most bytes that crossed the inputs in any window of `window` cycles",
    ),
    CounterDecl::new(
        "total_bytes",
        "bytes",
        "gauge: Σ of the cumulative byte inputs at their last change",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Number of inputs.
    pub inputs: u32,
    /// Window length, cycles.
    pub window: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            inputs: 1,
            window: 1000,
        }
    }
}

/// Most inputs one monitor takes (a chip has at most 8 LGs; the bound keeps a typo such as
/// `inputs: 100000000` from allocating gigabytes of ports before `build` can refuse it).
pub const MAX_INPUTS: u32 = 4096;

/// Port list (none past [`MAX_INPUTS`]: `build` then refuses the parameter by name).
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let n = if p.inputs > MAX_INPUTS { 0 } else { p.inputs };
    (0..n)
        .map(|i| PortDecl::input::<u64>(&format!("b{i}")).doc("cumulative bytes"))
        .collect()
}

/// The block.
pub struct RateMonitor {
    window: u64,
    inputs: Vec<In<u64>>,
    last_sum: u64,
    /// (event time, total); the front is the last event at or before t − window.
    events: VecDeque<(Cycle, u64)>,
    c_peak: CounterId,
    c_total: CounterId,
}

/// Refuses parameters out of range (before the ports are declared: their number is `inputs`).
pub fn check(p: &Params) -> Result<(), String> {
    if p.window == 0 || p.inputs == 0 {
        return Err("window and inputs must be ≥ 1".into());
    }
    if p.inputs > MAX_INPUTS {
        return Err(format!("inputs = {}: must be in 1..={MAX_INPUTS}", p.inputs));
    }
    Ok(())
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    let inputs = (0..p.inputs)
        .map(|i| b.input(&format!("b{i}")))
        .collect::<Result<_, _>>()?;
    Ok(Box::new(RateMonitor {
        window: p.window,
        inputs,
        last_sum: 0,
        events: VecDeque::new(),
        c_peak: b.counter("peak_window_bytes"),
        c_total: b.counter("total_bytes"),
    }))
}

impl Component for RateMonitor {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let sum: u64 = self.inputs.iter().map(|i| i.get()).sum();
        if sum != self.last_sum {
            self.last_sum = sum;
            let t = ctx.now().saturating_sub(1);
            self.events.push_back((t, sum));
            let edge = t.saturating_sub(self.window);
            while self.events.len() >= 2 && self.events[1].0 <= edge {
                self.events.pop_front();
            }
            let (t0, s0) = self.events[0];
            let base = if t0 <= edge && t >= self.window { s0 } else { 0 };
            let in_window = sum - base;
            if in_window > ctx.counter(self.c_peak) {
                ctx.set_counter(self.c_peak, in_window);
            }
            ctx.set_counter(self.c_total, sum);
        }
        Wake::OnInput
    }
}
