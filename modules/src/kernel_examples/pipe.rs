//! A latency-N pipe: a registered stream relay that delivers each message `latency` cycles after
//! it was pushed into it, in order, for any value type (the "latency-N pipe" port kind of
//! DESIGN.md §1, as a block).
//!
//! ```text
//!   in : stream<T> (capacity depth) ==>[ pipe, latency N ]==> out : stream<T>
//! ```
//! A message pushed into `in` at n appears on `out` (pushed) at n + latency, when `out` has
//! space; otherwise it waits (back-pressure) and later messages queue behind it. Latency ≥ 1
//! (a push at n is visible at n+1 at the earliest; latency 1 forwards it right then).
//! Counters: `passed`.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, PortDecl, StreamIn, StreamOut, Value, Wake,
};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "passed",
    "messages",
    "messages pushed onto `out` after their latency",
)];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Cycles from the upstream push to the downstream push (≥ 1).
    pub latency: u32,
    /// Messages in flight or waiting (the input buffer), ≥ 1.
    pub depth: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { latency: 1, depth: 8 }
    }
}

/// Port list for value type `T`.
pub fn ports<T: Value>(p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<T>("in", p.depth).doc("messages in"),
        PortDecl::stream_out::<T>("out").doc("the same messages, latency cycles later"),
    ]
}

/// The block.
pub struct Pipe<T: Value> {
    latency: Cycle,
    input: StreamIn<T>,
    out: StreamOut<T>,
    /// Messages taken from `in` with the cycle they are due downstream.
    flight: VecDeque<(Cycle, T)>,
    c_passed: CounterId,
}

/// Binds ports.
pub fn build<T: Value>(p: &Params, b: &mut Binder) -> BuildResult {
    if p.latency == 0 || p.depth == 0 {
        return Err(format!("latency ({}) and depth ({}) must be ≥ 1", p.latency, p.depth));
    }
    Ok(Box::new(Pipe::<T> {
        latency: p.latency as Cycle,
        input: b.stream_in("in")?,
        out: b.stream_out("out")?,
        flight: VecDeque::new(),
        c_passed: b.counter("passed"),
    }))
}

impl<T: Value> Component for Pipe<T> {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Everything visible in `in` was pushed at an earlier cycle; the push cycle is now − 1 at
        // the latest. Messages are taken the cycle they become visible (we are woken by the push),
        // so the push cycle is exactly now − 1.
        while let Some(v) = self.input.pop() {
            self.flight.push_back((now - 1 + self.latency, v));
        }
        if let Some((due, _)) = self.flight.front() {
            if *due <= now && self.out.can_push() {
                let (_, v) = self.flight.pop_front().expect("front");
                self.out.push(v);
                ctx.count(self.c_passed, 1);
            }
        }
        match self.flight.front() {
            None => Wake::OnInput,
            Some(&(due, _)) if due > now => Wake::At(due),
            // Due but blocked or just sent one: next cycle (a pop downstream also wakes us).
            Some(_) => Wake::NextCycle,
        }
    }
}
