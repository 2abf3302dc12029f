//! A message sink with a configurable service rate, to create back-pressure.
//!
//! ```text
//!   in : stream<u64> (capacity) ==>[ consumer ]--> last : u64 (signal, last value received)
//! ```
//! Pops at most one message every `interval` cycles, from cycle `ready_from` on. Counters:
//! `received`, `sum` (of values).

use hwsim_hw::{Binder, Component, CounterDecl, CounterId, Ctx, Out, PortDecl, StreamIn, Wake};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new("received", "messages", "messages popped from `in`"),
    CounterDecl::new("sum", "value", "Σ of the values received (a checksum of the stream)"),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Cycles between pops (≥ 1).
    pub interval: u64,
    /// First cycle at which it accepts.
    pub ready_from: u64,
    /// Input buffer (messages, ≥ 1).
    pub capacity: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            interval: 1,
            ready_from: 0,
            capacity: 2,
        }
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<u64>("in", p.capacity).doc("messages to consume"),
        PortDecl::output::<u64>("last").doc("last value received"),
    ]
}

/// The block.
pub struct Consumer {
    interval: u64,
    input: StreamIn<u64>,
    last: Out<u64>,
    next_pop: u64,
    c_received: CounterId,
    c_sum: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    if p.interval == 0 || p.capacity == 0 {
        return Err("interval and capacity must be ≥ 1".into());
    }
    Ok(Box::new(Consumer {
        interval: p.interval,
        input: b.stream_in("in")?,
        last: b.output("last")?,
        next_pop: p.ready_from,
        c_received: b.counter("received"),
        c_sum: b.counter("sum"),
    }))
}

impl Component for Consumer {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if now >= self.next_pop {
            if let Some(v) = self.input.pop() {
                self.last.set(v);
                ctx.count(self.c_received, 1);
                ctx.count(self.c_sum, v);
                self.next_pop = now + self.interval;
            }
        }
        if self.input.is_empty() {
            Wake::OnInput
        } else {
            Wake::At(self.next_pop.max(now + 1))
        }
    }
}
