//! Bank arbiter of one RC Link TX (one LG): weighted round robin over the five VC queues, the
//! per-flow head-of-line rule, and its gates (DCQCN rate, then CBFC credit).
//!
//! Seed 000 «VC 仲裁» (the RR pointer rule of v1.5.1, «流内 PSN 顺序保证», «与硬件仲裁的建模差异»);
//! seed 002 §5.4 (arbitration order: slot FIFO → bank rotation → rate gate → CBFC gate);
//! SPEC.md «TX side».
//!
//! The rules only (no ports): the nodes that run them are `vc_arbiter` (the pointer rule, in
//! every RC Link TX and in the standalone `bank_arbiter`) and the VC queues' side that applies
//! the per-flow rule and the gates ([`vc_queues`](super::vc_queues); the standalone
//! [`bank_arbiter_block`](super::bank_arbiter_block) runs the same nodes).
//!
//! **Pointer rule.** `ptr` names the VC whose turn it is and `counter` the frames it has sent in
//! this turn. A round visits the VCs from `ptr` on; an empty, rate-blocked or credit-blocked VC is
//! skipped without touching `ptr` or `counter`. After a send from `ptr`'s VC the counter goes up,
//! and at the VC's weight `ptr` moves to the next VC with counter 0; a send from another VC (the
//! ones before it were empty or blocked) moves `ptr` there with the counter restarting at 1, then
//! the same weight rule. So the RR state follows actual sends, never arbitration attempts.
//!
//! **Per-flow rule.** Within a VC the entries are tried in queue order; if the head entry of a
//! flow (dst, qp) is blocked by rate or credit, every later entry of that flow is skipped this
//! round, so a flow never overtakes itself; other flows of the VC may go.
//!
//! **Split at the VC boundary**, as the RTL is: the queues' side finds, per VC, the first flow
//! head that passes the gates and raises that VC's eligible bit; [`BankArbiter::pick`] takes
//! the first eligible VC from the pointer (and says which VCs it looked at, so blocked heads
//! are counted as a round that stops at its grant counts them); [`BankArbiter::sent`] moves
//! pointer and counter. In `rclink_tx` the pointer node is `tx.arbiter` (`tx.arbiter.ptr`,
//! `tx.arbiter.counter`, `tx.arbiter.grant`); in the standalone `bank_arbiter`, `arb.arbiter`
//! (also exported as `arb.ptr`, `arb.counter`).
//!
//! Counters: `diag_arb_calls` (rounds), `diag_credit_block` (blocked flow heads), counted by
//! the VC queues.
//!
//! Deviations: the hardware's bank-mask rotation is modelled as this weighted RR, as the seed's
//! own simulator does («与硬件仲裁的建模差异»: same fairness, single-packet order may differ).
//! The standalone `bank_arbiter` runs with its rate gate off.

use std::collections::VecDeque;

use hwsim_hw::CounterDecl;

/// The counters of the arbiter's rounds (name, unit, meaning), which the VC queues count in the
/// TX's scope: `hwsim explain`, the report's units and the system monitors read this table.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "diag_arb_calls",
        "events",
        "arbitration rounds run (in rclink_tx also those skipped: diag_arb_tx_busy)",
    ),
    CounterDecl::new(
        "diag_credit_block",
        "events",
        "flow heads a round found blocked by CBFC credit (once per flow per round)",
    ),
];

/// Number of TX VCs: banks 0..3 and MUL (index 4, multicast); defined in ports/.
pub use hwsim_ports::DATA_VCS as NUM_VC;

/// What a gate says of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// It may go.
    Pass,
    /// Its flow is paced by DCQCN.
    RateBlocked,
    /// Its (dst, vc) lacks credit.
    CreditBlocked,
}

/// The arbiter's state and rules (no ports).
#[derive(Clone, Debug)]
pub struct BankArbiter {
    weights: [u32; NUM_VC],
    ptr: usize,
    counter: u32,
    /// Number of the current round; `flow_round[f] == round` marks flow f blocked this round.
    round: u64,
    flow_round: Vec<u64>,
}

impl BankArbiter {
    /// An arbiter with per-VC weights (each ≥ 1; the error names the parameter).
    pub fn new(weights: [u32; NUM_VC]) -> Result<BankArbiter, String> {
        if let Some(i) = weights.iter().position(|w| *w == 0 || *w > 256) {
            return Err(format!(
                "vc_weights[{i}] = {}: every weight must be in 1..=256",
                weights[i]
            ));
        }
        Ok(BankArbiter {
            weights,
            ptr: 0,
            counter: 0,
            round: 0,
            flow_round: Vec::new(),
        })
    }

    /// One round over `queues` (entry ids per VC, in queue order), as the VC queues' side and
    /// [`BankArbiter::pick`] make it: per VC the first entry whose gate passes (a blocked head
    /// holds back the rest of its flow; `flow(id)` names an entry's dense flow index), then the
    /// first such VC from the pointer. Returns its (VC, position). Used by the rule tests; the
    /// blocks split it at the VC boundary (`rclink_tx`, `bank_arbiter`).
    pub fn arbitrate(
        &mut self,
        queues: &[VecDeque<u32>; NUM_VC],
        flow: impl Fn(u32) -> usize,
        mut gate: impl FnMut(u32) -> Gate,
    ) -> Option<(usize, usize)> {
        self.round += 1;
        let mut first = [None; NUM_VC];
        let mut eligible = 0u8;
        for (vc, q) in queues.iter().enumerate() {
            for (pos, &id) in q.iter().enumerate() {
                let f = flow(id);
                if f >= self.flow_round.len() {
                    self.flow_round.resize(f + 1, 0);
                }
                if self.flow_round[f] == self.round {
                    continue;
                }
                match gate(id) {
                    Gate::Pass => {
                        first[vc] = Some(pos);
                        eligible |= 1 << vc;
                        break;
                    }
                    Gate::RateBlocked | Gate::CreditBlocked => self.flow_round[f] = self.round,
                }
            }
        }
        let (vc, _) = self.pick(eligible);
        vc.map(|v| (v, first[v].expect("eligible")))
    }

    /// One round over the VCs' eligible bits (bit v: VC v has a frame that may go): the first
    /// eligible VC from the pointer, and the VCs looked at (from the pointer up to and including
    /// it; all when none is eligible). The pointer moves only on [`BankArbiter::sent`].
    pub fn pick(&self, eligible: u8) -> (Option<usize>, u8) {
        let mut visited = 0u8;
        for k in 0..NUM_VC {
            let vc = (self.ptr + k) % NUM_VC;
            visited |= 1 << vc;
            if eligible & (1 << vc) != 0 {
                return (Some(vc), visited);
            }
        }
        (None, visited)
    }

    /// The pointer rule, applied after an actual send from `vc`.
    pub fn sent(&mut self, vc: usize) {
        if vc != self.ptr {
            // The pointer's VC was empty or blocked: the turn passes to the VC that sent.
            self.ptr = vc;
            self.counter = 0;
        }
        self.counter += 1;
        if self.counter >= self.weights[vc] {
            self.ptr = (vc + 1) % NUM_VC;
            self.counter = 0;
        }
    }

    /// The VC whose turn it is.
    pub fn ptr(&self) -> usize {
        self.ptr
    }
    /// Frames sent in the current turn.
    pub fn counter(&self) -> u32 {
        self.counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs rounds until the queues are empty; every entry passes unless `blocked(id)`.
    fn drain(arb: &mut BankArbiter, q: &mut [VecDeque<u32>; NUM_VC], blocked: &dyn Fn(u32) -> bool) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some((vc, pos)) = arb.arbitrate(
            q,
            |id| id as usize / 100,
            |id| {
                if blocked(id) {
                    Gate::CreditBlocked
                } else {
                    Gate::Pass
                }
            },
        ) {
            out.push(q[vc].remove(pos).unwrap());
            arb.sent(vc);
        }
        out
    }

    #[test]
    fn equal_weights_alternate_and_weights_give_turns() {
        // Ids: flow = id / 100. Bank 0 holds flow 0's entries, bank 1 flow 1's.
        let mk = || {
            let mut q: [VecDeque<u32>; NUM_VC] = Default::default();
            q[0].extend([0, 1, 2]);
            q[1].extend([100, 101, 102]);
            q
        };
        let mut a = BankArbiter::new([1, 1, 1, 1, 256]).unwrap();
        assert_eq!(drain(&mut a, &mut mk(), &|_| false), vec![0, 100, 1, 101, 2, 102]);
        let mut a = BankArbiter::new([2, 1, 1, 1, 256]).unwrap();
        assert_eq!(drain(&mut a, &mut mk(), &|_| false), vec![0, 1, 100, 2, 101, 102]);
    }

    #[test]
    fn blocked_rounds_move_neither_pointer_nor_counter() {
        let mut a = BankArbiter::new([2, 1, 1, 1, 256]).unwrap();
        let mut q: [VecDeque<u32>; NUM_VC] = Default::default();
        q[0].push_back(0);
        assert_eq!(a.arbitrate(&q, |i| i as usize, |_| Gate::Pass), Some((0, 0)));
        q[0].clear();
        a.sent(0);
        assert_eq!((a.ptr(), a.counter()), (0, 1));
        q[0].push_back(1);
        for _ in 0..5 {
            assert_eq!(a.arbitrate(&q, |i| i as usize, |_| Gate::CreditBlocked), None);
        }
        assert_eq!((a.ptr(), a.counter()), (0, 1));
        // A send from another VC moves the pointer there, counter 1 (weight 1 → next VC).
        a.sent(1);
        assert_eq!((a.ptr(), a.counter()), (2, 0));
    }

    #[test]
    fn a_blocked_flow_head_holds_back_its_flow_only() {
        let mut a = BankArbiter::new([1; NUM_VC]).unwrap();
        let mut q: [VecDeque<u32>; NUM_VC] = Default::default();
        // Bank 0: flow 0 head (0, blocked), flow 0 next (1, would pass), flow 2 (200).
        q[0].extend([0, 1, 200]);
        let out = drain(&mut a, &mut q, &|id| id == 0);
        assert_eq!(out, vec![200], "1 must not overtake 0");
    }

    #[test]
    fn weights_out_of_range_are_refused() {
        assert!(BankArbiter::new([1, 0, 1, 1, 1])
            .unwrap_err()
            .contains("vc_weights[1] = 0"));
        assert!(BankArbiter::new([1, 1, 1, 1, 257])
            .unwrap_err()
            .contains("vc_weights[4] = 257"));
    }
}
