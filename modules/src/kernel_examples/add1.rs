//! An add-one stage: `out = in + 1`. By default a clocked register, `out(n) = in(n−1) + 1`;
//! chained N deep it is the W3 workload (the SystemC reference: a chain of clocked SC_METHOD
//! registers). Either side can be made combinational (`input: comb`, `output: comb`), so a chain
//! of stages can be a combinational path between two registers (tb/modules/comb_chain.yaml).
//!
//! ```text
//!   in : u64 -->[ +1 | reg ]--> out : u64     (input: registered, output: registered)
//!   in : u64 -->[ +1 ]--------> out : u64     (input: comb, output: comb: same cycle)
//! ```
//! Latency: 1 cycle from a registered input to a registered output; 0 cycles through a
//! combinational side (a value read at n is written at n; a combinational output is seen at n,
//! a registered one at n + 1). Woken only when `in` changes (a stage whose input holds keeps its
//! output).

use hwsim_hw::{Binder, CombOut, Component, CounterDecl, Ctx, In, Out, PortDecl, Wake};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// When a side of the stage is seen (hwsim's kernel-example choice; no seed describes it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Written at n, seen at n + 1.
    #[default]
    Registered,
    /// Written at n, seen at n.
    Comb,
}

/// Parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Timing of `in`: `registered` (default) or `comb` (driven by a combinational output).
    pub input: Side,
    /// Timing of `out`: `registered` (default) or `comb` (its readers see it in the same cycle).
    pub output: Side,
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let i = PortDecl::input::<u64>("in");
    let o = PortDecl::output::<u64>("out");
    vec![
        match p.input {
            Side::Registered => i.doc("stage input"),
            Side::Comb => i.comb().doc("stage input, read in the cycle it is driven"),
        },
        match p.output {
            Side::Registered => o.doc("in + 1, seen by readers one cycle later"),
            Side::Comb => o.comb().doc("in + 1, seen by readers in the same cycle"),
        },
    ]
}

/// The registered form (the W3 stage, kept apart so its tick is exactly what it was).
pub struct Add1 {
    input: In<u64>,
    out: Out<u64>,
}

/// The form with a combinational output.
pub struct Add1Comb {
    input: In<u64>,
    out: CombOut<u64>,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    Ok(match p.output {
        Side::Registered => Box::new(Add1 {
            input: b.input("in")?,
            out: b.output("out")?,
        }),
        Side::Comb => Box::new(Add1Comb {
            input: b.input("in")?,
            out: b.comb_output("out")?,
        }),
    })
}

impl Component for Add1 {
    #[inline]
    fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
        self.out.set(self.input.get().wrapping_add(1));
        Wake::OnInput
    }
}

impl Component for Add1Comb {
    #[inline]
    fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
        self.out.set(self.input.get().wrapping_add(1));
        Wake::OnInput
    }
}
