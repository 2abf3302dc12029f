//! Synthetic cell traffic for switch studies (issue 9, «Traffic»): per input, Bernoulli arrivals
//! of fixed-size cells at `load` cells per slot, destinations uniform (or a hotspot, or a fixed
//! permutation), from the block's seeded stream.
//!
//! ```text
//!   +---------------------------+==> out0 : stream<Cell>  (to the switch's in0)
//!   | per input: next arrival   |==> out1 …
//!   | = now + Geometric(load)   |==> out{N−1}
//!   +---------------------------+
//! ```
//!
//! Bernoulli arrivals are drawn as geometric gaps (the number of slots to the next arrival), so
//! the block runs only when a cell arrives: idle slots cost nothing, and the draws — one gap and
//! one destination per cell, per input in order — are the same with event skip on or off.
//! Latency: a cell born at t is pushed at t and seen by the switch at t + 1. A cell that finds
//! its stream full is counted in `blocked` and dropped (the switch pops its inputs every slot,
//! so that only happens behind a stalled switch).
//!
//! Counters: `cells` (generated), `blocked`, `offered_ppm` (the offered load measured: the cells
//! generated per input per slot × 10^6 over the run, or up to `stop_at`, published at its end;
//! the runner's metric `offered`, which a switch's `throughput` is compared with to flag a
//! saturated point).

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, PortDecl, Rng, StreamOut, Wake};
use hwsim_ports::{Cell, MAX_SWITCH_PORTS};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "cells",
        "cells",
        "cells generated and pushed to the switch inputs (blocked ones not included)",
    ),
    CounterDecl::new(
        "blocked",
        "cells",
        "cells generated that found their output stream full and were dropped",
    ),
    CounterDecl::new(
        "offered_ppm",
        "ppm",
        "at the end of the run: cells generated (pushed or blocked) per input per slot × 10^6, over the slots it generated in (to `stop_at`): the offered load",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Destination pattern.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Every output equally likely.
    #[default]
    Uniform,
    /// Output `hotspot` with probability `hot_fraction`, else uniform.
    Hotspot,
    /// Input i always sends to output (i + 1) mod N (a permutation: no output conflict).
    Permutation,
}

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Inputs (N), 1..=64.
    pub ports: u32,
    /// Offered load per input, cells per slot, 0..=1.
    pub load: f64,
    /// Destination pattern.
    pub pattern: Pattern,
    /// Hotspot output (pattern `hotspot`).
    pub hotspot: u32,
    /// Share of cells sent to the hotspot (pattern `hotspot`), 0..=1.
    pub hot_fraction: f64,
    /// Priority class of the cells, 0..=3.
    pub prio: u8,
    /// No arrivals at or after this cycle (0: never stop; the testbench's `until` ends the run).
    pub stop_at: u64,
    /// Cells are ECN-capable (the Standard format), so a switch egress may mark them.
    pub ect: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            ports: 16,
            load: 0.5,
            pattern: Pattern::Uniform,
            hotspot: 0,
            hot_fraction: 0.5,
            prio: 2,
            stop_at: 0,
            ect: true,
        }
    }
}

impl Params {
    /// Every parameter in its range; the error names the one that is not.
    pub fn check(&self) -> Result<(), String> {
        if self.ports == 0 || self.ports as usize > MAX_SWITCH_PORTS {
            return Err(format!("ports = {}: must be in 1..={MAX_SWITCH_PORTS}", self.ports));
        }
        if !(0.0..=1.0).contains(&self.load) {
            return Err(format!("load = {}: must be in 0..=1", self.load));
        }
        if !(0.0..=1.0).contains(&self.hot_fraction) {
            return Err(format!("hot_fraction = {}: must be in 0..=1", self.hot_fraction));
        }
        if self.hotspot >= self.ports {
            return Err(format!("hotspot = {}: must be a port, 0..{}", self.hotspot, self.ports));
        }
        if self.prio > 3 {
            return Err(format!("prio = {}: must be in 0..=3", self.prio));
        }
        Ok(())
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    (0..p.ports.min(MAX_SWITCH_PORTS as u32))
        .map(|i| PortDecl::stream_out::<Cell>(&format!("out{i}")).doc("cells arriving at input i"))
        .collect()
}

/// The gap for a uniform draw `u` in (0, 1]: 1 + ⌊ln u / ln(1 − load)⌋, Geometric(load).
fn geometric(u: f64, ln_q: f64) -> u64 {
    1 + (u.ln() / ln_q).floor() as u64
}

/// Short gaps without a logarithm. [`geometric`] falls as `u` grows, so gap k is the `u` in
/// [U_k, U_(k−1)), where U_k, the least `u` whose gap is at most k, is found once by bisection
/// over the f64 bit patterns (which order positive values) with `geometric` itself. A draw
/// within 10⁻⁹ (relative) of a bound is left to `geometric`: rounding moves ln u / ln q by
/// ~10⁻¹⁵, so everywhere else the table gives exactly what `geometric` would, and the run's
/// results do not depend on it.
struct GapTable {
    /// Per k = 1..=GAPS: U_k (1 + 10⁻⁹), at or above which the gap is k (or less).
    sure: [f64; GapTable::GAPS],
    /// Per k: U_k (1 − 10⁻⁹), below which the gap is above k.
    above: [f64; GapTable::GAPS],
}

impl GapTable {
    const GAPS: usize = 16;

    /// A table when gaps are mostly short (load ≥ 1/4: more than 99 % of gaps are ≤ 16);
    /// otherwise scanning it would cost more than the logarithm it saves.
    fn new(load: f64) -> Option<GapTable> {
        if !(0.25..1.0).contains(&load) {
            return None;
        }
        let ln_q = (1.0 - load).ln();
        let (mut sure, mut above) = ([0.0; Self::GAPS], [0.0; Self::GAPS]);
        for k in 1..=Self::GAPS {
            // geometric(1.0) = 1 ≤ k; bits 0 (u = 0) is never drawn and never evaluated.
            let (mut lo, mut hi) = (0u64, 1.0f64.to_bits());
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if geometric(f64::from_bits(mid), ln_q) <= k as u64 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let u_k = f64::from_bits(hi);
            sure[k - 1] = u_k * (1.0 + 1e-9);
            above[k - 1] = u_k * (1.0 - 1e-9);
        }
        Some(GapTable { sure, above })
    }

    /// The gap for `u`, when it is sure.
    #[inline]
    fn gap(&self, u: f64) -> Option<u64> {
        for k in 0..Self::GAPS {
            if u >= self.sure[k] {
                return Some(k as u64 + 1);
            }
            if u >= self.above[k] {
                return None;
            }
        }
        None
    }
}

/// The block.
pub struct CellSource {
    p: Params,
    out: Vec<StreamOut<Cell>>,
    /// Next arrival per input (`Cycle::MAX`: none).
    next: Vec<Cycle>,
    seq: Vec<u32>,
    /// ln(1 − load), for the geometric gaps.
    ln_q: f64,
    /// Where the short gaps start (see [`GapTable`]); `None` at light load.
    table: Option<GapTable>,
    c_cells: CounterId,
    c_blocked: CounterId,
    c_offered: CounterId,
    /// Cells generated so far, pushed or blocked (the offered load's numerator).
    generated: u64,
    started: bool,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    p.check()?;
    let n = p.ports as usize;
    Ok(Box::new(CellSource {
        out: (0..n)
            .map(|i| b.stream_out(&format!("out{i}")))
            .collect::<Result<_, _>>()?,
        next: vec![Cycle::MAX; n],
        seq: vec![0; n],
        ln_q: (1.0 - p.load).ln(),
        table: GapTable::new(p.load),
        c_cells: b.counter("cells"),
        c_blocked: b.counter("blocked"),
        c_offered: b.counter("offered_ppm"),
        generated: 0,
        started: false,
        p: p.clone(),
    }))
}

impl CellSource {
    /// Slots from one arrival to the next (≥ 1): Geometric(load).
    #[inline]
    fn gap(&self, rng: &mut Rng) -> Option<u64> {
        if self.p.load <= 0.0 {
            return None;
        }
        if self.p.load >= 1.0 {
            return Some(1);
        }
        // 1 − U is in (0, 1], so the log is finite.
        let u = 1.0 - rng.next_f64();
        if let Some(g) = self.table.as_ref().and_then(|t| t.gap(u)) {
            return Some(g);
        }
        Some(geometric(u, self.ln_q))
    }

    #[inline]
    fn destination(&self, rng: &mut Rng, i: usize) -> u8 {
        let n = self.p.ports as u64;
        match self.p.pattern {
            Pattern::Uniform => rng.below(n) as u8,
            Pattern::Permutation => ((i as u64 + 1) % n) as u8,
            Pattern::Hotspot => {
                if rng.chance(self.p.hot_fraction) {
                    self.p.hotspot as u8
                } else {
                    rng.below(n) as u8
                }
            }
        }
    }

    /// The arrival after one at `from` on input i.
    #[inline]
    fn next_after(&self, rng: &mut Rng, from: Cycle) -> Cycle {
        match self.gap(rng) {
            Some(g) => {
                let t = from.saturating_add(g);
                if self.p.stop_at != 0 && t >= self.p.stop_at {
                    Cycle::MAX
                } else {
                    t
                }
            }
            None => Cycle::MAX,
        }
    }
}

impl Component for CellSource {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // The block's stream, drawn from a copy held in registers through the loop and stored
        // back at the end (the same draws in the same order; through `ctx` its state was loaded
        // and stored on every draw).
        let mut rng = ctx.rng().clone();
        if !self.started {
            // The first arrival of each input is a gap after cycle 0 (so at ≥ 1), input by input.
            self.started = true;
            for i in 0..self.next.len() {
                self.next[i] = self.next_after(&mut rng, 0);
            }
        }
        // Arrivals due now, and the earliest next one (counted once per tick).
        let (mut cells, mut blocked) = (0, 0);
        let mut earliest = Cycle::MAX;
        for i in 0..self.next.len() {
            let due = self.next[i];
            if due <= now {
                let cell = Cell {
                    src: i as u8,
                    dst: self.destination(&mut rng, i),
                    prio: self.p.prio,
                    born: due,
                    seq: self.seq[i],
                    ect: self.p.ect,
                    ce: false,
                };
                self.seq[i] = self.seq[i].wrapping_add(1);
                if self.out[i].try_push(cell).is_ok() {
                    cells += 1;
                } else {
                    blocked += 1;
                }
                self.next[i] = self.next_after(&mut rng, now);
            }
            earliest = earliest.min(self.next[i]);
        }
        *ctx.rng() = rng;
        ctx.count(self.c_cells, cells);
        ctx.count(self.c_blocked, blocked);
        self.generated += cells + blocked;
        if earliest == Cycle::MAX {
            Wake::OnInput
        } else {
            Wake::At(earliest)
        }
    }

    /// The offered load measured: cells per input per slot over the slots arrivals could fall
    /// in (1 up to the end, or to `stop_at`, excluded: the first gap is drawn after slot 0).
    fn finish(&mut self, ctx: &mut Ctx<'_>) {
        let end = if self.p.stop_at != 0 {
            ctx.now().min(self.p.stop_at)
        } else {
            ctx.now()
        };
        let slots = end.saturating_sub(1);
        let per = (self.p.ports as u64).saturating_mul(slots);
        if per > 0 {
            let ppm = (self.generated as u128 * 1_000_000 / per as u128) as u64;
            ctx.set_counter(self.c_offered, ppm);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table gives the logarithm's gap for every draw it answers: random draws, and draws
    /// at and next to each bound.
    #[test]
    fn gap_table_agrees_with_the_logarithm() {
        for load in [0.25, 0.5, 0.75, 0.9, 0.99, 0.999_999] {
            let t = GapTable::new(load).expect("a table at this load");
            let ln_q = (1.0 - load).ln();
            let mut rng = Rng::from_seed(9);
            let mut draws: Vec<f64> = (0..200_000).map(|_| 1.0 - rng.next_f64()).collect();
            for k in 0..GapTable::GAPS {
                for b in [t.sure[k], t.above[k], t.sure[k] / (1.0 + 1e-9)] {
                    let bits = b.to_bits();
                    draws.extend(
                        (bits - 3..=bits + 3)
                            .map(f64::from_bits)
                            .filter(|u| *u > 0.0 && *u <= 1.0),
                    );
                }
            }
            let mut answered = 0;
            for u in draws {
                if let Some(g) = t.gap(u) {
                    assert_eq!(g, geometric(u, ln_q), "load {load}, u {u:e}");
                    answered += 1;
                }
            }
            assert!(answered > 190_000, "load {load}: {answered} answered");
        }
        assert!(GapTable::new(0.1).is_none() && GapTable::new(1.0).is_none());
    }
}
