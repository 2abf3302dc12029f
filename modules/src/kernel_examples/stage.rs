//! A stage of datapath logic for the price of a module boundary (docs/performance.md, "What a
//! boundary costs"): `out = f^stages(in)`, where `f(x)` is `work` rounds of SplitMix64's
//! finaliser then `+ 1` (about 8 instructions a round: `work` 12 is the body of a small block
//! such as the MAC credit counter). The same logic as one block (`stages: 4`) and as four
//! blocks of one stage joined by combinational connections gives the same values cycle by
//! cycle, so the two runs differ only by what the kernel spends on the three boundaries
//! (tb/perf/boundary_fused.yaml, tb/perf/boundary_split4.yaml, `cargo bench --bench kernel`).
//!
//! ```text
//!   in : u64 -->[ f ∘ … ∘ f (stages) ]--> out : u64   (each side registered or comb)
//! ```
//! Latency: as `add1`: 1 cycle from a registered input to a registered output, 0 through a
//! combinational side. Woken only when `in` changes. No seed describes it (a kernel example).

use hwsim_hw::{Binder, CombOut, Component, CounterDecl, Ctx, In, Out, PortDecl, Wake};
use serde::{Deserialize, Serialize};

pub use super::add1::Side;

/// The counters this block registers: none.
pub const COUNTERS: &[CounterDecl] = &[];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Most stages in one block.
pub const MAX_STAGES: u32 = 64;
/// Most mixing rounds per stage.
pub const MAX_WORK: u32 = 10_000;

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Timing of `in`: `registered` (default) or `comb` (driven by a combinational output).
    pub input: Side,
    /// Timing of `out`: `registered` (default) or `comb` (its readers see it in the same cycle).
    pub output: Side,
    /// Stages applied in turn within the block, 1..=64 (4: the fused form of four blocks).
    pub stages: u32,
    /// Rounds of SplitMix64's finaliser per stage, 0..=10000 (0: `out = in + stages`).
    pub work: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            input: Side::Registered,
            output: Side::Registered,
            stages: 1,
            work: 12,
        }
    }
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
            Side::Registered => o.doc("f applied `stages` times to `in`"),
            Side::Comb => o.comb().doc("f applied `stages` times to `in`, seen in the same cycle"),
        },
    ]
}

/// Where the block writes.
enum Output {
    Registered(Out<u64>),
    Comb(CombOut<u64>),
}

/// The block.
pub struct Stage {
    input: In<u64>,
    out: Output,
    stages: u32,
    work: u32,
}

/// Binds ports; refuses counts out of range naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    if !(1..=MAX_STAGES).contains(&p.stages) {
        return Err(format!("stages = {}: 1..={MAX_STAGES}", p.stages));
    }
    if p.work > MAX_WORK {
        return Err(format!("work = {}: 0..={MAX_WORK}", p.work));
    }
    Ok(Box::new(Stage {
        input: b.input("in")?,
        out: match p.output {
            Side::Registered => Output::Registered(b.output("out")?),
            Side::Comb => Output::Comb(b.comb_output("out")?),
        },
        stages: p.stages,
        work: p.work,
    }))
}

/// One stage: `work` rounds of the finaliser, then + 1.
#[inline]
pub fn f(mut x: u64, work: u32) -> u64 {
    for _ in 0..work {
        x = hwsim_hw::rng::mix64(x);
    }
    x.wrapping_add(1)
}

impl Component for Stage {
    fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
        let mut x = self.input.get();
        for _ in 0..self.stages {
            x = f(x, self.work);
        }
        match &self.out {
            Output::Registered(o) => o.set(x),
            Output::Comb(o) => o.set(x),
        }
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_work_a_stage_adds_one() {
        assert_eq!(f(41, 0), 42);
        // With work the rounds mix first: four stages fused are four applications.
        let four = (0..4).fold(7u64, |x, _| f(x, 12));
        assert_ne!(four, 11);
        assert_eq!(four, f(f(f(f(7, 12), 12), 12), 12));
    }
}
