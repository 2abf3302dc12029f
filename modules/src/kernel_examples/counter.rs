//! Free-running counter: the source of the W3 register pipeline.
//!
//! ```text
//!            +---------+
//!            | counter |--> count : u64 (signal)
//!            +---------+
//! ```
//! count = start + step × (now − first) from cycle `first` until `stop` (exclusive), then holds.
//! Latency: the value for cycle n is driven at n (visible to readers at n+1). Computed from `now`,
//! so ticks at extra cycles change nothing.

use hwsim_hw::{Binder, Component, CounterDecl, Ctx, Out, PortDecl, Wake};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Value at cycle `first`.
    pub start: u64,
    /// Increment per cycle.
    pub step: u64,
    /// First counting cycle.
    pub first: u64,
    /// Cycle at which counting stops (exclusive); the value then holds. `null` = never.
    pub stop: Option<u64>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            start: 0,
            step: 1,
            first: 0,
            stop: None,
        }
    }
}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![PortDecl::output::<u64>("count").doc("counter value (driven each cycle)")]
}

/// The block.
pub struct Counter {
    p: Params,
    count: Out<u64>,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    if p.stop.is_some_and(|s| s <= p.first) {
        return Err(format!("stop ({:?}) must be after first ({})", p.stop, p.first));
    }
    Ok(Box::new(Counter {
        p: p.clone(),
        count: b.output("count")?,
    }))
}

impl Component for Counter {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if now < self.p.first {
            return Wake::At(self.p.first);
        }
        let last = self.p.stop.map_or(now, |s| now.min(s - 1));
        self.count
            .set(self.p.start.wrapping_add(self.p.step.wrapping_mul(last - self.p.first)));
        match self.p.stop {
            Some(s) if now + 1 >= s => Wake::OnInput,
            _ => Wake::NextCycle,
        }
    }
}
