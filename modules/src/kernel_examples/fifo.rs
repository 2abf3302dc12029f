//! A synchronous FIFO of `depth` entries between two streams.
//!
//! ```text
//!   in : stream<u64> (capacity depth) ==>[ fifo ]==> out : stream<u64>
//! ```
//! Storage is the input stream's buffer (depth entries). Each cycle the head moves to `out` if
//! `out` has space: a message pushed into `in` at n is forwarded at n+1 and visible downstream at
//! n+2 (latency 2 cycles from the upstream push, one register stage). Counters: `passed`,
//! `peak_occupancy`.

use hwsim_hw::{Binder, Component, CounterDecl, CounterId, Ctx, PortDecl, StreamIn, StreamOut, Wake};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new("passed", "messages", "messages moved from `in` to `out`"),
    CounterDecl::new(
        "peak_occupancy",
        "messages",
        "gauge: most messages held in the `in` buffer at the start of a tick",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Entries (1..=65536).
    pub depth: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { depth: 4 }
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<u64>("in", p.depth).doc("write side; its buffer is the FIFO storage"),
        PortDecl::stream_out::<u64>("out").doc("read side"),
    ]
}

/// The block.
pub struct Fifo {
    input: StreamIn<u64>,
    out: StreamOut<u64>,
    c_passed: CounterId,
    c_peak: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    if p.depth == 0 || p.depth > 65536 {
        return Err(format!("depth {} out of range 1..=65536", p.depth));
    }
    Ok(Box::new(Fifo {
        input: b.stream_in("in")?,
        out: b.stream_out("out")?,
        c_passed: b.counter("passed"),
        c_peak: b.counter("peak_occupancy"),
    }))
}

impl Component for Fifo {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let occ = self.input.len() as u64;
        if occ > ctx.counter(self.c_peak) {
            ctx.set_counter(self.c_peak, occ);
        }
        if !self.input.is_empty() && self.out.can_push() {
            let v = self.input.pop().expect("non-empty");
            self.out.push(v);
            ctx.count(self.c_passed, 1);
        }
        // More to move: try again next cycle if there is space; otherwise a pop downstream (or a
        // new message upstream) wakes us.
        if !self.input.is_empty() && self.out.space() > 1 {
            Wake::NextCycle
        } else {
            Wake::OnInput
        }
    }
}
