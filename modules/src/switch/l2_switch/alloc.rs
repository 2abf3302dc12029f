//! The L2 switch's crossbar allocator as a node (`switch_alloc`; seed 003 «iSLIP 调度»,
//! «优先级感知调度», «推荐的 PAXI 出口调度»): one allocator per VOQ priority level (`islip`,
//! `pim` or `fifo` behind the allocator contract), run in the strict-priority / WRR order of
//! the egress, matching in the same cycle the requests the switch core shows.
//!
//! ```text
//!                        +-------------------------------------------+
//!  req{i}   ==(comb)==>  | per level l: req[i] = levels[l] & free    | ==(comb)==> grant{i} : stream<XbarGrant>
//!  stream<XbarRequest>   |   outputs, minus inputs and outputs the   |             {out, level}
//!  outputs  ==(comb)==>  |   earlier passes matched; allocator[l]    | --> gptr{k}, aptr{k} : the REQ data
//!  stream<XbarOutputs>   | passes: 3, 1 (RSP-first outputs), 2, 1, 0 |     level's iSLIP pointers
//!                        +-------------------------------------------+
//! ```
//!
//! **Timing.** Latency 0: the core pushes, in its process 0, a request for every input free to
//! start a transfer that holds a frame, and the outputs' state; this node matches in the same
//! cycle; the core's process 1 takes the grants and starts the transfers. So the RTL's
//! request → grant → dequeue within a cycle keeps the timing of the fused switch, where the
//! allocator was a call in its tick. The node runs only in a cycle with requests (a cycle
//! without any calls no allocator, as before), so its pointers move exactly when they did.
//!
//! **Passes.** Level 3 (ACK+CNP) first and level 0 last, in strict priority; levels 2 (REQ data)
//! and 1 (RSP) share each output by WRR: at an output both hold frames for, the level whose
//! turn it is (`rsp_first`, kept by the core, which charges the bytes) matches first and the
//! other may take the output only if the first left it. Each pass is among the inputs and
//! outputs the earlier ones left, and the outputs PFC pauses for it (`paused[l]`). A level's
//! allocator may run twice (RSP), on inputs and outputs the first run left unmatched, so each
//! pointer still moves at most once per cycle.
//!
//! **Deviations.** PIM draws from this node's random stream (derived from its path), not the
//! switch's: a `pim` l2_switch run is a different random draw than before the node existed (no
//! shipped testbench uses one). The node registers no counters (the core counts
//! `crossbar_matches`).

use hwsim_hw::{Binder, BuildResult, Component, Ctx, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{UInt, XbarGrant, XbarOutputs, XbarRequest};
use serde::{Deserialize, Serialize};

use super::super::allocator::{Allocator, AllocatorKind, Matching, Requests};
use super::output::{REQ_LEVEL, RSP_LEVEL};
use super::LEVELS;

/// Parameters (the switch fills them in from its own).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Switch ports, 2..=64.
    pub ports: u32,
    /// `islip`, `pim` or `fifo`.
    pub allocator: AllocatorKind,
    /// Iterations per cycle, 1..=4.
    pub iterations: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            ports: 2,
            allocator: AllocatorKind::Islip,
            iterations: 2,
        }
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let n = p.ports.min(64);
    let mut v = Vec::new();
    for i in 0..n {
        v.push(
            PortDecl::comb_stream_in::<XbarRequest>(&format!("req{i}"), 1)
                .doc("input i's requests this cycle: per level, the outputs it holds frames for"),
        );
    }
    v.push(
        PortDecl::comb_stream_in::<XbarOutputs>("outputs", 1)
            .doc("this cycle's free outputs, those not PFC-paused, and the RSP-first outputs"),
    );
    for i in 0..n {
        v.push(
            PortDecl::comb_stream_out::<XbarGrant>(&format!("grant{i}"))
                .doc("input i's grant this cycle: the output and the level that crosses"),
        );
    }
    for k in 0..n {
        v.push(PortDecl::output::<UInt<6>>(&format!("gptr{k}")).doc("output k's grant pointer (REQ data level)"));
        v.push(PortDecl::output::<UInt<6>>(&format!("aptr{k}")).doc("input k's accept pointer (REQ data level)"));
    }
    v
}

/// The `switch_alloc` block.
pub struct AllocNode {
    n: usize,
    alloc: Vec<Box<dyn Allocator>>,
    req_in: Vec<StreamIn<XbarRequest>>,
    outputs_in: StreamIn<XbarOutputs>,
    grant_out: Vec<StreamOut<XbarGrant>>,
    gptr: Vec<Out<UInt<6>>>,
    aptr: Vec<Out<UInt<6>>>,
    /// This cycle's requests, per level and input.
    levels: [[u64; 64]; LEVELS],
    req: Requests,
    m: Matching,
}

/// Refuses a port count out of range (before the ports are declared from it).
pub fn check(p: &Params) -> Result<(), String> {
    if !(2..=64).contains(&p.ports) {
        return Err(format!("ports = {}: must be in 2..=64", p.ports));
    }
    Ok(())
}

/// Binds the ports; refuses a port count or iteration count out of range.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    let n = p.ports as usize;
    let alloc = p.allocator.build_levels(p.iterations as usize, LEVELS)?;
    let each = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>();
    Ok(Box::new(AllocNode {
        n,
        alloc,
        req_in: each(&|i| format!("req{i}"))
            .iter()
            .map(|s| b.stream_in(s))
            .collect::<Result<_, _>>()?,
        outputs_in: b.stream_in("outputs")?,
        grant_out: each(&|i| format!("grant{i}"))
            .iter()
            .map(|s| b.stream_out(s))
            .collect::<Result<_, _>>()?,
        gptr: each(&|k| format!("gptr{k}"))
            .iter()
            .map(|s| b.output(s))
            .collect::<Result<_, _>>()?,
        aptr: each(&|k| format!("aptr{k}"))
            .iter()
            .map(|s| b.output(s))
            .collect::<Result<_, _>>()?,
        levels: [[0; 64]; LEVELS],
        req: Requests::new(n),
        m: Matching::empty(),
    }))
}

impl Component for AllocNode {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let Some(outs) = self.outputs_in.pop() else {
            // Requests come with the outputs' state, in one cycle; nothing else wakes us.
            if self.req_in.iter().any(|r| !r.is_empty()) {
                ctx.violation("crossbar requests without the outputs' state (`outputs`)");
            }
            return Wake::OnInput;
        };
        let n = self.n;
        let mut any_level = [false; LEVELS];
        for i in 0..n {
            let r = self.req_in[i].pop().unwrap_or_default();
            for (l, any) in any_level.iter_mut().enumerate() {
                self.levels[l][i] = r.levels[l];
                *any |= r.levels[l] != 0;
            }
        }
        let (mut matched_in, mut taken_out) = (0u64, 0u64);
        let passes = [
            (3, !0u64),
            (RSP_LEVEL, outs.rsp_first),
            (REQ_LEVEL, !0),
            (RSP_LEVEL, !0),
            (0, !0),
        ];
        for (l, allowed) in passes {
            if !any_level[l] || allowed == 0 {
                continue;
            }
            let free_out = outs.free_for(l) & allowed & !taken_out;
            let mut any = false;
            for i in 0..n {
                self.req.req[i] = if matched_in & 1 << i != 0 {
                    0
                } else {
                    self.levels[l][i] & free_out
                };
                any |= self.req.req[i] != 0;
            }
            if !any {
                continue;
            }
            self.req.fill_columns();
            self.alloc[l].allocate(&self.req, ctx.rng(), &mut self.m);
            if l == REQ_LEVEL {
                // The REQ data level's pointers on the waves; they move only when it runs.
                for k in 0..n {
                    self.gptr[k].update(UInt::wrap(self.alloc[l].grant_ptr(k) as u64));
                    self.aptr[k].update(UInt::wrap(self.alloc[l].accept_ptr(k) as u64));
                }
            }
            for i in 0..n {
                let Some(o) = self.m.out_of[i] else { continue };
                matched_in |= 1 << i;
                taken_out |= 1 << o;
                self.grant_out[i].push(XbarGrant { out: o, level: l as u8 });
            }
        }
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;

    fn bench() -> Harness {
        let p = Params {
            ports: 4,
            ..Params::default()
        };
        let q = p.clone();
        Harness::new("switch_alloc", ports(&p), Box::new(move |b| build(&q, b)), 1, 4).unwrap()
    }

    /// One cycle's requests `(input, level, outputs)` and outputs' state; the grants by input.
    fn round(h: &mut Harness, reqs: &[(usize, usize, u64)], outs: XbarOutputs) -> Vec<(usize, u8, u8)> {
        let mut per_in = [XbarRequest::default(); 4];
        for &(i, l, m) in reqs {
            per_in[i].levels[l] |= m;
        }
        for (i, r) in per_in.iter().enumerate() {
            if r.levels.iter().any(|&m| m != 0) {
                assert!(h.push(&format!("req{i}"), *r));
            }
        }
        assert!(h.push("outputs", outs));
        h.step().unwrap();
        (0..4)
            .filter_map(|i| h.pop::<XbarGrant>(&format!("grant{i}")).map(|g| (i, g.out, g.level)))
            .collect()
    }

    const ALL: XbarOutputs = XbarOutputs {
        free: 0xF,
        paused: [0; 4],
        rsp_first: 0,
    };

    #[test]
    fn levels_match_in_strict_priority_each_among_what_the_earlier_left() {
        let mut h = bench();
        h.step().unwrap();
        // Inputs 0 and 1 want output 0 at level 2; input 1 also has ACKs (level 3) for output 0.
        let g = round(&mut h, &[(0, 2, 0b1), (1, 2, 0b1), (1, 3, 0b1)], ALL);
        assert_eq!(g, [(1, 0, 3)], "level 3 takes output 0 first; input 0 finds it taken");
        // Output 0 busy: nothing can match there.
        let busy = XbarOutputs { free: 0b10, ..ALL };
        let g = round(&mut h, &[(0, 2, 0b1)], busy);
        assert!(g.is_empty(), "{g:?}");
    }

    #[test]
    fn the_wrr_turn_and_pfc_pick_the_level_at_an_output() {
        let mut h = bench();
        h.step().unwrap();
        let reqs = [(0, 1, 0b1), (1, 2, 0b1)];
        assert_eq!(round(&mut h, &reqs, ALL), [(1, 0, 2)], "REQ data before RSP by default");
        let rsp_first = XbarOutputs { rsp_first: 0b1, ..ALL };
        assert_eq!(round(&mut h, &reqs, rsp_first), [(0, 0, 1)], "RSP's turn at output 0");
        // PFC pauses the REQ data level at output 0: RSP takes it.
        let paused = XbarOutputs {
            paused: [0, 0, 0b1, 0],
            ..ALL
        };
        assert_eq!(round(&mut h, &reqs, paused), [(0, 0, 1)]);
        // Paused for RSP instead (another priority's level): REQ data takes it, RSP's turn or not.
        let rsp_paused = XbarOutputs {
            paused: [0, 0b1, 0, 0],
            rsp_first: 0b1,
            ..ALL
        };
        assert_eq!(round(&mut h, &reqs, rsp_paused), [(1, 0, 2)]);
    }

    #[test]
    fn requests_without_the_outputs_state_are_a_violation() {
        let mut h = bench();
        h.step().unwrap();
        assert!(h.push("req0", XbarRequest { levels: [0, 0, 1, 0] }));
        let e = h.step().unwrap_err().to_string();
        assert!(e.contains("without the outputs' state"), "{e}");
    }
}
