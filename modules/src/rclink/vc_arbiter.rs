//! The bank arbiter's round robin over the VCs, as the node `tx.arbiter` of every RC Link TX
//! (kind `vc_arbiter`): given the VCs whose queue holds a frame that may go this round, it
//! grants the first from its pointer, and moves pointer and counter after the grant by the
//! weighted rule.
//!
//! Seed 000 «VC 仲裁» (the RR pointer rule of v1.5.1, «与硬件仲裁的建模差异»); seed 002 §5.4
//! (arbitration order: slot FIFO → bank rotation → rate gate → CBFC gate); SPEC.md «TX side».
//!
//! ```text
//!                               +---------------------------------------+
//!  req   ==(comb, cap 1)==>     | from ptr: first VC with eligible bit  | ==(comb)==> grant : stream<VcGrant>
//!  stream<VcReq>                | sent(vc): counter+1, at weight → next | --> ptr : UInt<3>, counter : UInt<9>
//!  (eligible: UInt<5>)          +---------------------------------------+
//! ```
//!
//! **The cut.** The rules of [`BankArbiter`](super::bank_arbiter::BankArbiter) — the pointer
//! rule and the per-flow rule — split at the VC boundary, as they do in the RTL: the VC queues'
//! side (`tx.vc_queues`, over the queues the slot FIFO fills) finds, per VC, the first flow head that passes
//! the rate gate and the CBFC per-packet rule, skipping the later frames of a blocked flow, and
//! raises that VC's `eligible` bit; this node picks the VC. Which VCs a round looked at
//! (`grant.visited`: from the pointer up to the granted VC, all when none was eligible) goes back
//! with the grant, so the TX counts blocked flow heads exactly as a round that stops at its grant
//! does (`diag_credit_block`, `diag_rate_block`) and wakes at the ready time of a paced flow it
//! looked at.
//!
//! **Timing.** Combinational both ways: a request pushed by the TX's round in cycle n is granted
//! in cycle n and the grant read back in n (the VC queues' processes 0 and 1, this node between
//! them: docs/kernel.md «Blocks with several processes»). Pointer and counter show the state
//! after the grant already in cycle n, as the fused TX showed them (the value the next round
//! uses; an RTL register's Q shows it at n+1). A cycle without a request leaves the state alone, so a
//! round that grants nothing moves neither pointer nor counter.
//!
//! No counters: the TX counts its rounds (`diag_arb_calls`) and blocked heads. The standalone
//! `bank_arbiter` (module testbenches and the RTL example) is the TX's queue side with this
//! same node at `arb.arbiter`.
//!
//! Deviations: as `bank_arbiter`'s (the bank-mask rotation modelled as this weighted RR).

use hwsim_hw::{Binder, BuildResult, Component, Ctx, ElabError, Netlist, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{UInt, VcGrant, VcReq};
use serde::{Deserialize, Serialize};

use super::bank_arbiter::{BankArbiter, NUM_VC};

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Weighted-RR weights, frames per turn: banks 0..3, then MUL; each 1..=256.
    pub vc_weights: [u32; NUM_VC],
}

impl Default for Params {
    fn default() -> Self {
        Params {
            vc_weights: [1, 1, 1, 1, 256],
        }
    }
}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<VcReq>("req", 1)
            .doc("this cycle's round: the VCs with a frame that may go (bit v: VC v)"),
        PortDecl::comb_stream_out::<VcGrant>("grant")
            .doc("the round's answer in the same cycle: the granted VC and the VCs looked at"),
        PortDecl::output::<UInt<3>>("ptr").doc("RR pointer: the VC whose turn it is"),
        PortDecl::output::<UInt<9>>("counter").doc("frames sent in the pointer VC's turn"),
    ]
}

/// Adds the node at `at` and wires `req_from` (a VC queues' side's `arb_req`) to its request
/// and its grant to `grant_to`, both combinational: the composites that hold one (`rclink_tx`,
/// `bank_arbiter`) wire it the same way.
pub fn add_wired(nl: &mut Netlist, at: &str, p: Params, req_from: &str, grant_to: &str) -> Result<(), ElabError> {
    nl.add(at, "vc_arbiter", ports(&p), Box::new(move |b| build(&p, b)))?;
    nl.connect(req_from, &format!("{at}.req"), None)?;
    nl.connect(&format!("{at}.grant"), grant_to, None)?;
    Ok(())
}

/// The `vc_arbiter` block.
pub struct VcArbiter {
    arb: BankArbiter,
    req: StreamIn<VcReq>,
    grant: StreamOut<VcGrant>,
    ptr: Out<UInt<3>>,
    counter: Out<UInt<9>>,
}

/// Binds ports; refuses weights out of range naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    Ok(Box::new(VcArbiter {
        arb: BankArbiter::new(p.vc_weights)?,
        req: b.stream_in("req")?,
        grant: b.stream_out("grant")?,
        ptr: b.output("ptr")?,
        counter: b.output("counter")?,
    }))
}

impl Component for VcArbiter {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let Some(r) = self.req.pop() else {
            return Wake::OnInput;
        };
        if !self.grant.can_push() {
            // The TX reads the grant in the cycle of its request: a full stream is a wiring error.
            ctx.violation("vc_arbiter: grant not taken before the next request".to_string());
            return Wake::OnInput;
        }
        let (pick, visited) = self.arb.pick(r.eligible.0 as u8);
        if let Some(vc) = pick {
            self.arb.sent(vc);
        }
        self.grant.push(VcGrant {
            granted: pick.is_some(),
            vc: UInt::wrap(pick.unwrap_or(0) as u64),
            visited: UInt::wrap(visited as u64),
        });
        self.ptr.update(UInt::wrap(self.arb.ptr() as u64));
        self.counter.update(UInt::wrap(self.arb.counter() as u64));
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;

    fn bench(weights: [u32; NUM_VC], skip: bool) -> Harness {
        let p = Params { vc_weights: weights };
        let q = p.clone();
        let mut h = Harness::new("vc_arbiter", ports(&p), Box::new(move |b| build(&q, b)), 1, 4).unwrap();
        h.sim_mut().set_skip(skip);
        h
    }

    /// One round with `eligible`; returns the grant seen in the same cycle.
    fn round(h: &mut Harness, eligible: u64) -> VcGrant {
        assert!(h.push(
            "req",
            VcReq {
                eligible: UInt::wrap(eligible)
            }
        ));
        h.step().unwrap();
        h.pop::<VcGrant>("grant").expect("a grant in the cycle of the request")
    }

    #[test]
    fn grants_from_the_pointer_and_reports_what_it_looked_at() {
        for skip in [true, false] {
            let mut h = bench([2, 1, 1, 1, 256], skip);
            // VC 0 and 2 eligible: 0 has the turn (weight 2), twice, then the pointer moves on.
            let g = round(&mut h, 0b00101);
            assert!(g.granted && g.vc.0 == 0 && g.visited.0 == 0b00001, "{g:?}");
            let g = round(&mut h, 0b00101);
            assert_eq!((g.vc.0, g.visited.0), (0, 0b00001));
            // Pointer at 1: VC 1 is looked at and skipped, 2 granted.
            let g = round(&mut h, 0b00101);
            assert_eq!((g.granted, g.vc.0, g.visited.0), (true, 2, 0b00110));
            h.step().unwrap();
            assert_eq!(h.peek::<UInt<3>>("ptr").0, 3, "weight 1: on past 2");
            assert_eq!(h.peek::<UInt<9>>("counter").0, 0);
            // Nothing eligible: every VC looked at, the state unchanged.
            let g = round(&mut h, 0);
            assert_eq!((g.granted, g.visited.0), (false, 0b11111));
            h.step().unwrap();
            assert_eq!(h.peek::<UInt<3>>("ptr").0, 3);
        }
    }

    #[test]
    fn weights_out_of_range_are_refused() {
        let p = Params {
            vc_weights: [1, 1, 0, 1, 1],
        };
        let q = p.clone();
        let e = Harness::new("vc_arbiter", ports(&p), Box::new(move |b| build(&q, b)), 1, 4)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("vc_weights[2] = 0"), "{e}");
    }
}
