//! A rate monitor: the peak number of bytes that crossed a set of points in any window of
//! `window` cycles (1 µs by default), for the chip-level send and receive caps (seed 000
//! «芯片级聚合发送 cap», «芯片级聚合接收 cap»: ≤ num_lg × line_rate).
//!
//! ```text
//!   b{i} : u64 (cumulative bytes at point i)  -->[ monitor ]   counters: peak_window_bytes,
//!   r{j} : WireRamp (the same, as a ramp)     -->              total_bytes
//! ```
//! The inputs are step functions (`b{i}`, plain counts) or ramps (`r{j}`, a serializer's
//! [`WireRamp`]: the count at every cycle, sent once per frame); the largest total(t) −
//! total(t − W) is reached with t at a change, so the monitor evaluates it exactly at each
//! change (a value read at n was driven at n−1, which is the event time). A ramp moves every
//! cycle of a frame: the monitor accounts for those cycles when it next runs (a ramp or step
//! changes, or the cycle after the last ramp stops) or when counters are read
//! ([`Component::settle`]), each cycle exactly as if it had read a count changing every cycle.
//! Nothing is sampled, so event skip changes nothing.

use std::collections::VecDeque;

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, In, PortDecl, Wake};
use hwsim_ports::WireRamp;
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
    /// Number of step inputs `b{i}` (cumulative bytes as plain counts).
    pub inputs: u32,
    /// Number of ramp inputs `r{j}` (cumulative bytes advancing at a serializer's rate, as a
    /// MAC's or an RX cap's `wire_ramp`).
    pub ramps: u32,
    /// Window length, cycles.
    pub window: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            inputs: 1,
            ramps: 0,
            window: 1000,
        }
    }
}

/// Most inputs of each kind one monitor takes (a chip has at most 8 LGs; the bound keeps a typo
/// such as `inputs: 100000000` from allocating gigabytes of ports before `build` can refuse it).
pub const MAX_INPUTS: u32 = 4096;

/// Port list (none of a kind past [`MAX_INPUTS`]: `build` then refuses the parameter by name).
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let n = if p.inputs > MAX_INPUTS { 0 } else { p.inputs };
    let r = if p.ramps > MAX_INPUTS { 0 } else { p.ramps };
    (0..n)
        .map(|i| PortDecl::input::<u64>(&format!("b{i}")).doc("cumulative bytes"))
        .chain((0..r).map(|j| {
            PortDecl::input::<WireRamp>(&format!("r{j}")).doc("cumulative bytes at a serializer's rate (a wire_ramp)")
        }))
        .collect()
}

/// The block.
pub struct RateMonitor {
    window: u64,
    steps: Vec<In<u64>>,
    ramp_in: Vec<In<WireRamp>>,
    /// The inputs as last taken: the steps' sum, each ramp and the cycle it stops moving.
    step_sum: u64,
    ramps: Vec<WireRamp>,
    still: Vec<Cycle>,
    /// Per ramp, [`WireRamp::linear`]: where it rises by a whole slope each cycle.
    lin: Vec<Option<(Cycle, u64)>>,
    /// Scratch: the ramps still moving while [`RateMonitor::advance`] walks cycles.
    moving: Vec<u32>,
    /// Cycles before this one are accounted for.
    next_t: Cycle,
    last_sum: u64,
    peak: u64,
    /// The peak and the total as the counters show them.
    published: (u64, u64),
    /// (event time, total); the front is the last event at or before t − window.
    events: VecDeque<(Cycle, u64)>,
    c_peak: CounterId,
    c_total: CounterId,
}

/// Refuses parameters out of range (before the ports are declared: their number is `inputs`
/// plus `ramps`).
pub fn check(p: &Params) -> Result<(), String> {
    if p.window == 0 || (p.inputs == 0 && p.ramps == 0) {
        return Err("window ≥ 1 and at least one input (`inputs` or `ramps`) are needed".into());
    }
    if p.inputs > MAX_INPUTS {
        return Err(format!("inputs = {}: must be in 0..={MAX_INPUTS}", p.inputs));
    }
    if p.ramps > MAX_INPUTS {
        return Err(format!("ramps = {}: must be in 0..={MAX_INPUTS}", p.ramps));
    }
    Ok(())
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    let steps = (0..p.inputs)
        .map(|i| b.input(&format!("b{i}")))
        .collect::<Result<_, _>>()?;
    let ramp_in = (0..p.ramps)
        .map(|j| b.input(&format!("r{j}")))
        .collect::<Result<_, _>>()?;
    Ok(Box::new(RateMonitor {
        window: p.window,
        steps,
        ramp_in,
        step_sum: 0,
        ramps: vec![WireRamp::default(); p.ramps as usize],
        still: vec![0; p.ramps as usize],
        lin: vec![None; p.ramps as usize],
        moving: Vec::with_capacity(p.ramps as usize),
        next_t: 0,
        last_sum: 0,
        peak: 0,
        published: (0, 0),
        events: VecDeque::new(),
        c_peak: b.counter("peak_window_bytes"),
        c_total: b.counter("total_bytes"),
    }))
}

impl RateMonitor {
    /// A change of the total to `sum` at cycle `t`: the window ending at `t` and the peak (the
    /// counters are published once per [`advance`](Self::advance)).
    fn event(&mut self, t: Cycle, sum: u64) {
        self.last_sum = sum;
        self.events.push_back((t, sum));
        let edge = t.saturating_sub(self.window);
        while self.events.len() >= 2 && self.events[1].0 <= edge {
            self.events.pop_front();
        }
        let (t0, s0) = self.events[0];
        let base = if t0 <= edge && t >= self.window { s0 } else { 0 };
        self.peak = self.peak.max(sum.saturating_sub(base));
    }

    /// Accounts for every cycle before `upto` not yet accounted for, with the inputs as last
    /// taken: the total evaluated exactly at each cycle a ramp starts rising, takes its last
    /// step or (at a fractional rate) every cycle it moves, and carried on by the rising ramps'
    /// slopes in between (each of those cycles is a change, as it was read every cycle); then
    /// once for the still stretch after the last ramp stops.
    fn advance(&mut self, upto: Cycle, ctx: &mut Ctx<'_>) {
        let t = self.next_t;
        if t >= upto {
            return;
        }
        self.next_t = upto;
        self.walk(t, upto);
        if (self.peak, self.last_sum) != self.published {
            self.published = (self.peak, self.last_sum);
            ctx.set_counter(self.c_peak, self.peak);
            ctx.set_counter(self.c_total, self.last_sum);
        }
    }

    /// The cycles `t..upto` of [`advance`](Self::advance).
    fn walk(&mut self, mut t: Cycle, upto: Cycle) {
        // The still ramps' part of the total, and the moving ones.
        let mut base = self.step_sum;
        let mut moving = std::mem::take(&mut self.moving);
        moving.clear();
        for (j, (r, &s)) in self.ramps.iter().zip(&self.still).enumerate() {
            if s <= t {
                base += r.at(t);
            } else {
                moving.push(j as u32);
            }
        }
        while t < upto {
            // The exact total at `t`, the ramps that stopped retired; until `brk` it rises by
            // `slope` a cycle.
            let (mut sum, mut slope, mut brk) = (0u64, 0u64, Cycle::MAX);
            let mut i = 0;
            while i < moving.len() {
                let j = moving[i] as usize;
                let (r, s) = (&self.ramps[j], self.still[j]);
                if s <= t {
                    base += r.at(t);
                    moving.swap_remove(i);
                    continue;
                }
                sum += r.at(t);
                brk = brk.min(match self.lin[j] {
                    Some((from, b)) if from <= t => {
                        slope += b;
                        s
                    }
                    Some((from, _)) => from.min(s),
                    None => t + 1,
                });
                i += 1;
            }
            let mut sum = base + sum;
            if moving.is_empty() || slope == 0 {
                // Still until `brk` (for good when no ramp moves).
                if sum != self.last_sum {
                    self.event(t, sum);
                }
                if moving.is_empty() {
                    break;
                }
                t = brk;
                continue;
            }
            let end = brk.min(upto);
            loop {
                if sum != self.last_sum {
                    self.event(t, sum);
                }
                t += 1;
                if t >= end {
                    break;
                }
                sum += slope;
            }
        }
        self.moving = moving;
    }
}

impl Component for RateMonitor {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // What the inputs show now was driven at `now − 1`: the cycles before that are the old
        // inputs', then `now − 1` is the new ones'.
        if let Some(t) = now.checked_sub(1) {
            self.advance(t, ctx);
            self.step_sum = self.steps.iter().map(|i| i.get()).sum();
            for (j, i) in self.ramp_in.iter().enumerate() {
                let v = i.get();
                if v != self.ramps[j] {
                    self.ramps[j] = v;
                    self.still[j] = v.still_from();
                    self.lin[j] = v.linear();
                }
            }
            self.advance(now, ctx);
        }
        // The cycle after a ramp stops moving: its last step is then taken, as it would be were
        // the ramp a signal changing every cycle (so the run ends where it did).
        match self.still.iter().copied().max() {
            Some(s) if s + 1 > now => Wake::At(s + 1),
            _ => Wake::OnInput,
        }
    }

    /// Accounts for the cycles up to the one before the last executed (what the inputs showed
    /// by then), before the counters are read mid-run or at the end.
    fn settle(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(t) = ctx.now().checked_sub(1) {
            self.advance(t, ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::{ByteRate, SerializerClock};
    use proptest::prelude::*;

    /// The monitor's figures computed the old way: the total read every cycle.
    fn brute(window: u64, totals: &[u64]) -> (u64, u64) {
        let (mut peak, mut last) = (0, 0);
        let mut events: VecDeque<(u64, u64)> = VecDeque::new();
        for (t, &sum) in totals.iter().enumerate() {
            let t = t as u64;
            if sum == last {
                continue;
            }
            last = sum;
            events.push_back((t, sum));
            let edge = t.saturating_sub(window);
            while events.len() >= 2 && events[1].0 <= edge {
                events.pop_front();
            }
            let (t0, s0) = events[0];
            let base = if t0 <= edge && t >= window { s0 } else { 0 };
            peak = peak.max(sum - base);
        }
        (peak, last)
    }

    /// Runs the bench to cycle `t` (through quiescence: the cycles nothing is due in run nothing).
    fn go(h: &mut Harness, t: u64) {
        while h.now() < t {
            if h.run(t).unwrap() == hwsim_hw::Stop::Quiescent {
                h.step().unwrap();
            }
        }
    }

    proptest! {
        /// Ramps from frames started at random cycles on two serializers (one at a fractional
        /// rate), run for a random time: the monitor's peak and total equal those of the total
        /// read at every cycle, with event skip and without.
        #[test]
        fn ramps_integrate_to_the_every_cycle_figures(
            starts in proptest::collection::vec((0u64..400, 1u64..3000, 0usize..2), 1..12),
            until in 50u64..900,
            window in 1u64..300,
        ) {
            let rates = [ByteRate::new(50, 1).unwrap(), ByteRate::new(25, 2).unwrap()];
            let mut starts = starts;
            starts.sort();
            // Each serializer's ramps as the MAC makes them, and the value at every cycle.
            let mut plan: Vec<Vec<(u64, WireRamp)>> = vec![Vec::new(), Vec::new()];
            let mut state = [(WireRamp::default(), 0u64, SerializerClock::new(rates[0])), (WireRamp::default(), 0, SerializerClock::new(rates[1]))];
            for &(t, bytes, k) in &starts {
                let (ramp, started, clock) = &mut state[k];
                *started += bytes;
                clock.start_at_least(t, bytes, bytes.div_ceil(64));
                *ramp = ramp.restart(t, *started, *clock);
                plan[k].push((t, *ramp));
            }
            let value = |k: usize, t: u64| {
                plan[k].iter().rev().find(|(s, _)| *s <= t).map_or(0, |(_, r)| r.at(t))
            };
            let totals: Vec<u64> = (0..until.saturating_sub(1)).map(|t| value(0, t) + value(1, t)).collect();
            let want = brute(window, &totals);
            for skip in [true, false] {
                let p = Params { inputs: 0, ramps: 2, window };
                let mut h = Harness::new("rate_monitor", ports(&p), Box::new(move |b| build(&p, b)), 1, 4).unwrap();
                h.sim_mut().set_skip(skip);
                // Each ramp driven in the cycle of its start (seen by the monitor the next).
                let mut drives: Vec<(u64, usize, WireRamp)> =
                    (0..2).flat_map(|k| plan[k].iter().map(move |&(t, r)| (t, k, r))).collect();
                drives.sort_by_key(|d| d.0);
                for (t, k, r) in drives {
                    if t >= until {
                        break;
                    }
                    go(&mut h, t);
                    h.poke(&format!("r{k}"), r);
                }
                go(&mut h, until);
                h.sim_mut().settle();
                let c = |n: &str| h.sim().counter(&format!("dut.{n}")).unwrap();
                prop_assert_eq!((c("peak_window_bytes"), c("total_bytes")), want, "skip {}", skip);
            }
        }
    }
}
