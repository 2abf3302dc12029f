//! A message source: emits `count` values on a stream, one every `interval` cycles from `start`,
//! waiting while the stream is full (back-pressure).
//!
//! ```text
//!   +----------+
//!   | producer |==> out : stream<u64>   values first_value, first_value+1, …
//!   +----------+
//! ```
//! Message i is due at max(start + i·interval, push cycle of i−1 + 1); when the stream is full it
//! goes at the first cycle with space (the producer is woken when the consumer pops).
//! Counters: `sent`, `stall_cycles` (Σ cycles messages waited past their due cycle).

use hwsim_hw::{Binder, Component, CounterDecl, CounterId, Ctx, PortDecl, StreamOut, Wake};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new("sent", "messages", "messages pushed onto `out`"),
    CounterDecl::new(
        "stall_cycles",
        "ns",
        "Σ cycles messages waited past their due cycle (back-pressure)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Number of messages.
    pub count: u64,
    /// Cycles between messages (≥ 1).
    pub interval: u64,
    /// Cycle of the first message.
    pub start: u64,
    /// Value of the first message; each next one is +1.
    pub first_value: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            count: 16,
            interval: 1,
            start: 0,
            first_value: 0,
        }
    }
}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![PortDecl::stream_out::<u64>("out").doc("messages first_value, first_value+1, …")]
}

/// The block.
pub struct Producer {
    p: Params,
    out: StreamOut<u64>,
    sent: u64,
    due: u64,
    c_sent: CounterId,
    c_stall: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    if p.interval == 0 {
        return Err("interval must be ≥ 1".into());
    }
    // The values first_value .. first_value + count - 1 must not wrap.
    if p.count > 0 && p.first_value.checked_add(p.count - 1).is_none() {
        return Err(format!(
            "first_value = {}: with count {} the values go past 2^64 - 1",
            p.first_value, p.count
        ));
    }
    Ok(Box::new(Producer {
        p: p.clone(),
        out: b.stream_out("out")?,
        sent: 0,
        due: p.start,
        c_sent: b.counter("sent"),
        c_stall: b.counter("stall_cycles"),
    }))
}

impl Component for Producer {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if self.sent >= self.p.count {
            return Wake::OnInput;
        }
        if now < self.due {
            return Wake::At(self.due);
        }
        if !self.out.can_push() {
            // Woken when the consumer frees space.
            return Wake::OnInput;
        }
        self.out.push(self.p.first_value + self.sent);
        ctx.count(self.c_sent, 1);
        ctx.count(self.c_stall, now - self.due);
        self.sent += 1;
        // A due time past the end of time is never (it saturates instead of wrapping).
        let offset = self.sent.saturating_mul(self.p.interval);
        self.due = self.p.start.saturating_add(offset).max(now + 1);
        if self.sent >= self.p.count {
            Wake::OnInput
        } else {
            Wake::At(self.due)
        }
    }
}
