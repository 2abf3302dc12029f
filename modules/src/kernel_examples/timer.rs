//! A periodic timer: toggles `tick` every `period` cycles. With a long period it is the idle
//! benchmark (10^9 cycles with one timer must cost milliseconds under event skip).
//!
//! ```text
//!   +-------+
//!   | timer |--> tick : bool (toggles every period)
//!   +-------+    fires : counter
//! ```
//! The level at cycle n is ⌊n / period⌋ mod 2, computed from `now`.

use hwsim_hw::{Binder, Component, CounterDecl, CounterId, Ctx, Out, PortDecl, Wake};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "fires",
    "events",
    "gauge: toggles of `tick` so far, ⌊now / period⌋ at the last tick",
)];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Cycles between toggles (≥ 1).
    pub period: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params { period: 1000 }
    }
}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![PortDecl::output::<bool>("tick").doc("toggles every `period` cycles")]
}

/// The block.
pub struct Timer {
    period: u64,
    tick: Out<bool>,
    fires: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    if p.period == 0 {
        return Err("period must be ≥ 1".into());
    }
    Ok(Box::new(Timer {
        period: p.period,
        tick: b.output("tick")?,
        fires: b.counter("fires"),
    }))
}

impl Component for Timer {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let k = now / self.period;
        let level = k % 2 == 1;
        if level != self.tick.get() {
            self.tick.set(level);
        }
        // Number of toggles so far, from `now` (not from the number of ticks).
        ctx.set_counter(self.fires, k);
        Wake::At((k + 1) * self.period)
    }
}
