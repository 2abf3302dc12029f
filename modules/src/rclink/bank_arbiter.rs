//! Bank arbiter of one RC Link TX (one LG): weighted round robin over the five VC queues, the
//! per-flow head-of-line rule, and its gates (DCQCN rate, then CBFC credit).
//!
//! Seed 000 «VC 仲裁» (the RR pointer rule of v1.5.1, «流内 PSN 顺序保证», «与硬件仲裁的建模差异»);
//! seed 002 §5.4 (arbitration order: slot FIFO → bank rotation → rate gate → CBFC gate);
//! SPEC.md «TX side».
//!
//! ```text
//!                      +----------------------------------------------+
//!  req    ==(cap 4)==> | VC queues 0..3 (qp & 3), MUL (4)             | ==> grant : stream<ArbReq>
//!  stream<ArbReq>      | from ptr: first entry passing rate ─ CBFC     | --> ptr : UInt<3>, counter : UInt<9>
//!  credit ==(cap 8)==> | (a flow whose head is blocked is skipped)    | --> depth_vc0..4 : UInt<11>
//!  stream<CreditMsg>   | CBFC ledgers (dst, vc) (the `cbfc` core)      | --> cbfc.credits_d{d} : VcCredits
//!                      +----------------------------------------------+
//! ```
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
//! **Standalone block** (`bank_arbiter`): a request joins its VC queue when popped; a round runs
//! when something changed (a request, a credit return, or the last round granted) and
//! `grant` has room; at most one grant per cycle, charged to the block's own CBFC ledgers
//! (`cost` credits, per-packet rule on a one-packet request). Latency: a request visible at n can
//! be granted at n (on `grant` at n+1).
//!
//! **In `rclink_tx`** the pointer rule is the node `tx.arbiter` (kind `vc_arbiter`, the same
//! [`BankArbiter::pick`] and [`BankArbiter::sent`]); the per-flow rule and the gates run on the
//! VC queues' side, in the TX core, which requests the VCs that have a frame to go. Its state
//! shows as `tx.arbiter.ptr`, `tx.arbiter.counter`, its grant as `tx.arbiter.grant`.
//!
//! Counters (standalone): `diag_arb_calls` (rounds), `diag_credit_block` (blocked flow heads),
//! `grants`.
//!
//! Deviations: the hardware's bank-mask rotation is modelled as this weighted RR, as the seed's
//! own simulator does («与硬件仲裁的建模差异»: same fairness, single-packet order may differ).
//! The rate gate always passes until DCQCN is in (issue: congestion control).

use std::collections::{HashMap, VecDeque};

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{ArbReq, ChipId, CreditMsg, QpId, UInt};
use serde::{Deserialize, Serialize};

use super::cbfc::{Cbfc, CbfcView};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// These are the arbiter's rounds', which `rclink_tx` counts too (same names, same meaning);
/// the standalone block's own are in [`BLOCK_COUNTERS`].
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

/// The counters only the standalone `bank_arbiter` block registers.
pub const BLOCK_COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "grants",
    "frames",
    "requests granted and pushed on `grant`",
)];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS, BLOCK_COUNTERS];

/// Number of TX VCs: banks 0..3 and MUL (index 4, multicast).
pub const NUM_VC: usize = 5;

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

    /// One round over `queues` (entry ids per VC, in queue order). `flow(id)` names an entry's
    /// flow (a dense index); `gate(id)` applies the gates in order and may count. Returns the
    /// (VC, position) of the first entry that passes, visiting VCs from the pointer.
    pub fn arbitrate(
        &mut self,
        queues: &[VecDeque<u32>; NUM_VC],
        flow: impl Fn(u32) -> usize,
        mut gate: impl FnMut(u32) -> Gate,
    ) -> Option<(usize, usize)> {
        self.round += 1;
        for k in 0..NUM_VC {
            let vc = (self.ptr + k) % NUM_VC;
            for (pos, &id) in queues[vc].iter().enumerate() {
                let f = flow(id);
                if f >= self.flow_round.len() {
                    self.flow_round.resize(f + 1, 0);
                }
                if self.flow_round[f] == self.round {
                    continue;
                }
                match gate(id) {
                    Gate::Pass => return Some((vc, pos)),
                    Gate::RateBlocked | Gate::CreditBlocked => self.flow_round[f] = self.round,
                }
            }
        }
        None
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

/// The arbiter's state on the waves: `{prefix}ptr`, `{prefix}counter`, `{prefix}depth_vc{v}`.
pub struct ArbiterView {
    ptr: Out<UInt<3>>,
    counter: Out<UInt<9>>,
    depth: [Out<UInt<11>>; NUM_VC],
}

impl ArbiterView {
    /// Port declarations (`prefix` "" for the block itself, "arbiter." inside `rclink_tx`).
    pub fn ports(prefix: &str) -> Vec<PortDecl> {
        let mut v = vec![
            PortDecl::output::<UInt<3>>(&format!("{prefix}ptr")).doc("RR pointer: the VC whose turn it is"),
            PortDecl::output::<UInt<9>>(&format!("{prefix}counter")).doc("frames sent in the pointer VC's turn"),
        ];
        for vc in 0..NUM_VC {
            v.push(
                PortDecl::output::<UInt<11>>(&format!("{prefix}depth_vc{vc}"))
                    .doc("entries waiting in the VC queue (4 = MUL)"),
            );
        }
        v
    }
    /// Binds the signals.
    pub fn bind(prefix: &str, b: &Binder) -> Result<ArbiterView, String> {
        let d = |vc: usize| b.output::<UInt<11>>(&format!("{prefix}depth_vc{vc}"));
        Ok(ArbiterView {
            ptr: b.output(&format!("{prefix}ptr"))?,
            counter: b.output(&format!("{prefix}counter"))?,
            depth: [d(0)?, d(1)?, d(2)?, d(3)?, d(4)?],
        })
    }
    /// Shows the current state (a write of an unchanged value costs nothing downstream).
    pub fn show(&self, a: &BankArbiter, queues: &[VecDeque<u32>; NUM_VC]) {
        self.ptr.update(UInt::wrap(a.ptr as u64));
        self.counter.update(UInt::wrap(a.counter as u64));
        for (o, q) in self.depth.iter().zip(queues) {
            o.update(UInt::wrap(q.len() as u64));
        }
    }
}

/// Parameters of the standalone block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Weighted-RR weights, frames per turn: banks 0..3, then MUL; each 1..=256.
    pub vc_weights: [u32; NUM_VC],
    /// INITIAL_CREDIT per (dst, vc) of the CBFC gate.
    pub initial_credits: u32,
    /// CREDIT_UF_LIMIT of the CBFC gate.
    pub uf_limit: u32,
    /// Destinations shown on the waves (`cbfc.credits_d{d}`).
    pub view_dsts: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            vc_weights: [1, 1, 1, 1, 256],
            initial_credits: 1024,
            uf_limit: 1,
            view_dsts: 2,
        }
    }
}

/// Port list of the standalone block.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::stream_in::<ArbReq>("req", 4).doc("a frame joining the queue of VC qp & 3"),
        PortDecl::stream_in::<CreditMsg>("credit", 8).doc("CBFC credit returns (src = the ledger's dst)"),
        PortDecl::stream_out::<ArbReq>("grant").doc("granted frames, one per cycle at most"),
    ];
    v.extend(ArbiterView::ports(""));
    v.extend(CbfcView::ports("cbfc.", p.view_dsts));
    v
}

/// The standalone `bank_arbiter` block.
pub struct BankArbiterBlock {
    arb: BankArbiter,
    cbfc: Cbfc,
    view: ArbiterView,
    cbfc_view: CbfcView,
    req: StreamIn<ArbReq>,
    credit: StreamIn<CreditMsg>,
    grant: StreamOut<ArbReq>,
    /// Entries by id (ids of granted entries are reused) and their flow index.
    entries: Vec<(ArbReq, u32)>,
    free: Vec<u32>,
    flows: HashMap<(ChipId, QpId), u32>,
    queues: [VecDeque<u32>; NUM_VC],
    pending: bool,
    c_calls: CounterId,
    c_block: CounterId,
    c_grants: CounterId,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    let arb = BankArbiter::new(p.vc_weights)?;
    // One-packet requests carry their cost: a credit is a credit (size and overhead unused).
    let cbfc = Cbfc::new(256, 0, p.uf_limit, p.initial_credits)?;
    if p.view_dsts > super::cbfc::MAX_VIEW_DSTS {
        return Err(format!("view_dsts = {}: must be in 0..=1024", p.view_dsts));
    }
    let cbfc_view = CbfcView::bind("cbfc.", p.view_dsts, b, &cbfc)?;
    Ok(Box::new(BankArbiterBlock {
        arb,
        cbfc,
        view: ArbiterView::bind("", b)?,
        cbfc_view,
        req: b.stream_in("req")?,
        credit: b.stream_in("credit")?,
        grant: b.stream_out("grant")?,
        entries: Vec::new(),
        free: Vec::new(),
        flows: HashMap::new(),
        queues: Default::default(),
        pending: false,
        c_calls: b.counter("diag_arb_calls"),
        c_block: b.counter("diag_credit_block"),
        c_grants: b.counter("grants"),
    }))
}

impl Component for BankArbiterBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        while let Some(m) = self.credit.pop() {
            if m.vc > 3 {
                ctx.violation(format!("credit return for VC {} (banks are 0..=3): {m:?}", m.vc));
                continue;
            }
            if let Err((_, why)) = self.cbfc.give_back(m.src, m.vc, m.credits as u32) {
                ctx.violation(why);
            }
            self.cbfc_view.show(&self.cbfc, m.src);
            self.pending = true;
        }
        while let Some(r) = self.req.pop() {
            if r.cost as u32 > self.cbfc.max_packet_cost() {
                ctx.violation(format!("{r:?}: cost never sendable"));
                continue;
            }
            let n = self.flows.len() as u32;
            let flow = *self.flows.entry((r.dst, r.qp)).or_insert(n);
            let id = match self.free.pop() {
                Some(id) => {
                    self.entries[id as usize] = (r, flow);
                    id
                }
                None => {
                    self.entries.push((r, flow));
                    self.entries.len() as u32 - 1
                }
            };
            self.queues[r.qp.vc_bank().index()].push_back(id);
            self.pending = true;
        }
        let mut granted = false;
        if self.pending && self.grant.can_push() && self.queues.iter().any(|q| !q.is_empty()) {
            ctx.count(self.c_calls, 1);
            let (entries, cbfc) = (&self.entries, &mut self.cbfc);
            let c_block = self.c_block;
            let pick = self.arb.arbitrate(
                &self.queues,
                |id| entries[id as usize].1 as usize,
                |id| {
                    let r = entries[id as usize].0;
                    let l = cbfc.ledger(r.dst, r.qp.vc_bank().value());
                    if cbfc.admits(l, r.cost as u32) {
                        Gate::Pass
                    } else {
                        ctx.count(c_block, 1);
                        Gate::CreditBlocked
                    }
                },
            );
            if let Some((vc, pos)) = pick {
                let id = self.queues[vc].remove(pos).expect("picked");
                let r = self.entries[id as usize].0;
                self.free.push(id);
                let l = self.cbfc.ledger(r.dst, r.qp.vc_bank().value());
                self.cbfc.charge(l, r.cost as u32);
                self.cbfc_view.show(&self.cbfc, r.dst);
                self.arb.sent(vc);
                self.grant.push(r);
                ctx.count(self.c_grants, 1);
                granted = true;
            }
        }
        self.view.show(&self.arb, &self.queues);
        // After a grant the next round is next cycle; otherwise only a change runs one.
        self.pending = granted && self.queues.iter().any(|q| !q.is_empty());
        Wake::next_cycle_if(self.pending)
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
