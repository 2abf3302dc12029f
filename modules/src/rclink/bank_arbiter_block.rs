//! The standalone bank arbiter (kind `bank_arbiter`) for module testbenches and the RTL example:
//! a composite of its VC queues (`core`, kind `bank_arbiter_core`: five queues, the per-flow
//! rule, the CBFC gate), the same round robin node every RC Link TX runs (`arbiter`, kind
//! [`vc_arbiter`](super::vc_arbiter)) and the same CBFC controller (`cbfc`, kind
//! [`cbfc`](super::cbfc): the ledgers, their returns and charges), wired as the TX wires them:
//! so a module testbench of the bank arbiter runs the pointer and ledger code the system runs.
//!
//! Seed 000 «VC 仲裁» (the RR pointer rule of v1.5.1, «流内 PSN 顺序保证»); the rules are in
//! [`bank_arbiter`](super::bank_arbiter).
//!
//! ```text
//!                      +-- bank_arbiter -------------------------------------------------+
//!  credit ==(cap 8)==> | cbfc process 0: returns ─ counts (comb) ─┐                        | --> cbfc.credits_d{d},
//!  stream<CreditMsg>   |                                          v                        |     cbfc.credit_view
//!  req    ==(cap 4)==> | core: process 0: requests join queue qp & 3; per VC the first    | ==> grant : stream<ArbReq>
//!  stream<ArbReq>      |   flow head CBFC admits ── arb_req (comb) ──> arbiter (vc_arbiter) | --> ptr, counter (the arbiter's)
//!                      |   process 1: <── arb_grant (comb): push the grant;               | --> depth_vc0..4
//!                      |     cbfc_charge (comb) ─> cbfc process 1: ledger −= cost;         |
//!                      |     `charged` (next cycle) to core process 0                      |
//!                      +-----------------------------------------------------------------+
//! ```
//!
//! **Timing** (unchanged from the fused block it replaces: every module golden identical but
//! for the controller's two counters): a request or credit visible at n is taken at n and a
//! round runs at n if something changed (a request, a credit return, or the last round granted)
//! and `grant` has room; the grant is on `grant` at n+1; pointer, counter, depths and credits
//! show the state after the round at n. The CBFC gate reads the counts the controller told the
//! core: a return's in its cycle (`counts`), the last grant's charge in the next (`charged`,
//! taken before the round: the core grants once a cycle).
//!
//! Counters (in the composite's scope): `diag_arb_calls` (rounds), `diag_credit_block`
//! (blocked flow heads in the VCs the round looked at), `grants`; the controller's
//! `credits_outstanding` and `credit_latency_max`. The controller runs with chip 0 and LG 0
//! (a return must carry `dst: 0`, `lg: 0`, the defaults) and cost per request as given
//! (`ArbReq.cost`, no overhead).

use hwsim_hw::{
    Binder, BuildResult, Component, CounterId, Ctx, ElabError, Netlist, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{ArbReq, ChipId, CreditMsg, QpId, UInt, VcGrant, VcReq};
use serde::{Deserialize, Serialize};

use super::bank_arbiter::{BankArbiter, NUM_VC};
use super::cbfc::{self, Cbfc, MAX_VIEW_DSTS};
use super::vc_arbiter;
use super::vc_queues::{Gate, QueueEntry, VcQueues};

/// Parameters.
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

impl Params {
    /// Every parameter in its range; the error names the one that is not.
    pub fn check(&self) -> Result<(), String> {
        BankArbiter::new(self.vc_weights)?;
        self.cbfc()?;
        if self.view_dsts > MAX_VIEW_DSTS {
            return Err(format!(
                "view_dsts = {}: must be in 0..={MAX_VIEW_DSTS}",
                self.view_dsts
            ));
        }
        Ok(())
    }
    /// One-packet requests carry their cost: a credit is a credit (size and overhead unused).
    fn cbfc(&self) -> Result<Cbfc, String> {
        Cbfc::new(256, 0, self.uf_limit, self.initial_credits)
    }

    /// The CBFC controller's parameters (`arb.cbfc`, the node every RC Link TX runs): chip 0,
    /// LG 0 (the returns a module testbench sends carry those defaults), no TYPE2 group.
    fn cbfc_params(&self) -> cbfc::Params {
        cbfc::Params {
            pkt_ovhd: 0,
            uf_limit: self.uf_limit,
            initial_credits: self.initial_credits,
            view_dsts: self.view_dsts,
            ..cbfc::Params::default()
        }
    }
}

/// The counter tables of the composite: the bank arbiter's and those the CBFC controller
/// counts in its scope.
pub const COUNTER_TABLES: &[&[hwsim_hw::CounterDecl]] = &[
    super::bank_arbiter::COUNTERS,
    super::bank_arbiter::BLOCK_COUNTERS,
    cbfc::COUNTERS,
];

/// The core's ports inside the composite, wired to the arbiter and the CBFC controller (not
/// exported).
const INNER: [&str; 5] = ["arb_req", "arb_grant", "cbfc_counts", "cbfc_charged", "cbfc_charge"];

/// The composite's ports that are the arbiter's (outer name = the arbiter's port name).
const ARBITER_EXPORTS: [&str; 2] = ["ptr", "counter"];

/// Port list of the core (`bank_arbiter_core`).
pub fn core_ports(p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::stream_in::<ArbReq>("req", 4).doc("a frame joining the queue of VC qp & 3"),
        PortDecl::comb_stream_in::<CreditMsg>("cbfc_counts", cbfc::RETURNS_PER_CYCLE)
            .doc("the CBFC ledgers' counts after this cycle's returns, for this cycle's round (cbfc.counts)"),
        PortDecl::stream_in::<CreditMsg>("cbfc_charged", cbfc::charged_depth(&p.cbfc_params()))
            .doc("the CBFC ledgers' counts after the last grant's charge, for the next round (cbfc.charged)"),
        // Process 0's: the round needs its room (a pop frees it and wakes the round); process
        // 1, which follows in every cycle, pushes the grant.
        PortDecl::stream_out::<ArbReq>("grant").doc("granted frames, one per cycle at most"),
        PortDecl::comb_stream_out::<VcReq>("arb_req")
            .doc("this cycle's round: the VCs with a flow head CBFC admits (to arbiter.req)"),
        PortDecl::comb_stream_in::<VcGrant>("arb_grant", 1)
            .process(1)
            .doc("the arbiter's answer in the same cycle (arbiter.grant)"),
        PortDecl::comb_stream_out::<CreditMsg>("cbfc_charge")
            .process(1)
            .doc("the grant's CBFC charge, to the controller in the same cycle (cbfc.charge)"),
    ];
    for vc in 0..NUM_VC {
        v.push(
            PortDecl::output::<UInt<11>>(&format!("depth_vc{vc}"))
                .process(1)
                .level()
                .doc("entries waiting in the VC queue (4 = MUL)"),
        );
    }
    v
}

/// Port list of `bank_arbiter` (the composite): the core's outer ports with the CBFC
/// controller's `credit` after `req` and the arbiter's pointer and counter after `grant`, where
/// the fused block had them.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v: Vec<PortDecl> = core_ports(p)
        .into_iter()
        .filter(|d| !INNER.contains(&d.name.as_str()))
        .map(|d| d.process(0))
        .collect();
    let credit = cbfc::ports(&p.cbfc_params()).into_iter().find(|d| d.name == "credit");
    v.insert(1, credit.expect("the cbfc node's port").process(0));
    let ap = arbiter_params(p);
    let arb = vc_arbiter::ports(&ap);
    for (k, name) in ARBITER_EXPORTS.iter().enumerate() {
        v.insert(
            3 + k,
            arb.iter().find(|d| d.name == *name).expect("a vc_arbiter port").clone(),
        );
    }
    v
}

fn arbiter_params(p: &Params) -> vc_arbiter::Params {
    vc_arbiter::Params {
        vc_weights: p.vc_weights,
    }
}

/// Creates the children at `path`: `path.core` (counting in the composite's scope),
/// `path.cbfc` (the CBFC controller, likewise) and `path.arbiter`, each wired to the core both
/// ways in the cycle, and exports the composite's ports.
pub fn expand(p: &Params, path: &str, nl: &mut Netlist) -> Result<(), ElabError> {
    crate::split::refuse_at(path, p.check())?;
    let node = |n: &str| format!("{path}.{n}");
    let core = crate::split::Core {
        kind: "bank_arbiter_core",
        ports: core_ports(p),
        build,
        params: p.clone(),
        draws: false,
    };
    crate::split::add_core(nl, path, core, |n| INNER.contains(&n))?;
    vc_arbiter::add_wired(
        nl,
        &node("arbiter"),
        arbiter_params(p),
        &node("core.arb_req"),
        &node("core.arb_grant"),
    )?;
    for name in ARBITER_EXPORTS {
        nl.export(&node(name), &node(&format!("arbiter.{name}")))?;
    }
    cbfc::add_wired(nl, path, p.cbfc_params(), "core")
}

/// What the round found in one VC: the first flow head CBFC admits, and the heads before it
/// (or in the whole queue) it found blocked.
/// A request as its VC queue holds it: its entry and its flow.
#[derive(Clone, Copy, Debug)]
struct Queued {
    id: u32,
    flow: u32,
}

impl QueueEntry for Queued {
    fn flow(&self) -> u32 {
        self.flow
    }
}

/// The VC queues with their CBFC gate (kind `bank_arbiter_core`).
pub struct BankArbiterCore {
    /// The CBFC ledgers' counts as the controller (`arb.cbfc`) last told them: the gate reads
    /// these.
    cbfc: Cbfc,
    depth: [Out<UInt<11>>; NUM_VC],
    req: StreamIn<ArbReq>,
    cbfc_counts: StreamIn<CreditMsg>,
    cbfc_charged: StreamIn<CreditMsg>,
    cbfc_charge: StreamOut<CreditMsg>,
    grant: StreamOut<ArbReq>,
    arb_req: StreamOut<VcReq>,
    arb_grant: StreamIn<VcGrant>,
    /// Entries by id (ids of granted entries are reused) and their flow index.
    entries: Vec<(ArbReq, u32)>,
    free: Vec<u32>,
    flows: hwsim_hw::FastMap<(ChipId, QpId), u32>,
    /// The VC queues (the TX's implementation: the per-flow rule, the blocked heads).
    queues: VcQueues<Queued>,
    /// A request is on `arb_req` this cycle.
    asked: bool,
    pending: bool,
    c_calls: CounterId,
    c_block: CounterId,
    c_grants: CounterId,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    p.check()?;
    let cbfc = p.cbfc()?;
    let d = |vc: usize| b.output::<UInt<11>>(&format!("depth_vc{vc}"));
    Ok(Box::new(BankArbiterCore {
        cbfc,
        depth: [d(0)?, d(1)?, d(2)?, d(3)?, d(4)?],
        req: b.stream_in("req")?,
        cbfc_counts: b.stream_in("cbfc_counts")?,
        cbfc_charged: b.stream_in("cbfc_charged")?,
        cbfc_charge: b.stream_out("cbfc_charge")?,
        grant: b.stream_out("grant")?,
        arb_req: b.stream_out("arb_req")?,
        arb_grant: b.stream_in("arb_grant")?,
        entries: Vec::new(),
        free: Vec::new(),
        flows: hwsim_hw::fast_map(),
        queues: VcQueues::default(),
        asked: false,
        pending: false,
        c_calls: b.counter("diag_arb_calls"),
        c_block: b.counter("diag_credit_block"),
        c_grants: b.counter("grants"),
    }))
}

impl BankArbiterCore {
    /// The ledgers' counts (the last grant's charge, then this cycle's returns, as the
    /// controller applied them) and the requests in. A return runs a round.
    fn take_inputs(&mut self, ctx: &mut Ctx<'_>) {
        while let Some(m) = self.cbfc_charged.pop() {
            self.cbfc.set_remaining(m.dst, m.vc, m.credits as u32);
        }
        while let Some(m) = self.cbfc_counts.pop() {
            self.cbfc.set_remaining(m.dst, m.vc, m.credits as u32);
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
            self.queues.push_back(r.qp.vc_bank().index(), Queued { id, flow });
            self.pending = true;
        }
    }

    /// Per VC, in queue order, the first flow head CBFC admits; a blocked head holds back the
    /// rest of its flow. Returns the eligible VCs.
    fn find_heads(&mut self) -> u8 {
        let (cbfc, entries) = (&mut self.cbfc, &self.entries);
        self.queues.find_heads(|q| {
            let r = entries[q.id as usize].0;
            let l = cbfc.ledger(r.dst, r.qp.vc_bank().value());
            if cbfc.admits(l, r.cost as u32) {
                Gate::Pass
            } else {
                Gate::Credit
            }
        })
    }
}

impl Component for BankArbiterCore {
    /// Process 0: the inputs, and the round's request to the arbiter.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        self.take_inputs(ctx);
        self.asked = false;
        if self.pending && self.grant.can_push() && self.queues.queued() > 0 {
            ctx.count(self.c_calls, 1);
            let eligible = self.find_heads();
            self.arb_req.push(VcReq {
                eligible: UInt::wrap(eligible as u64),
            });
            self.asked = true;
        }
        // Process 1 takes the arbiter's grant in this cycle.
        ctx.run_process(1);
        Wake::OnInput
    }

    /// Process 1: the arbiter's grant, the charge, the frame out, the waves.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let mut granted = false;
        if self.asked {
            let Some(g) = self.arb_grant.pop() else {
                ctx.violation("bank_arbiter: no grant from the arbiter in the cycle of the request");
                return Wake::OnInput;
            };
            // The blocked heads of the VCs the round looked at: a round that stops at its grant.
            ctx.count(self.c_block, self.queues.blocked(g.visited.0 as u8).credit);
            if g.granted {
                let vc = g.vc.0 as usize;
                // The arbiter may be an RTL standing in for the node (`rtl` replace mode): a
                // grant of a VC with no eligible head is its protocol error.
                if self.queues.head(vc).is_none() {
                    ctx.violation(format!(
                        "bank_arbiter: the arbiter node granted VC {vc}, which the request did not name eligible"
                    ));
                    return Wake::OnInput;
                }
                let id = self.queues.remove_head(vc).id;
                let r = self.entries[id as usize].0;
                self.free.push(id);
                // The controller charges it in this cycle; its count comes back for the next
                // round. One grant a cycle on a stream of one place popped in the cycle.
                if r.cost > 0 {
                    let vc = r.qp.vc_bank().value();
                    self.cbfc_charge.push(cbfc::ledger_msg(0, 0, r.dst, vc, r.cost as u32));
                }
                self.grant.push(r);
                ctx.count(self.c_grants, 1);
                granted = true;
            }
        }
        for (vc, o) in self.depth.iter().enumerate() {
            o.update(UInt::wrap(self.queues.depth(vc) as u64));
        }
        // After a grant the next round is next cycle; otherwise only a change runs one.
        self.pending = granted && self.queues.queued() > 0;
        ctx.run_process_on(0, Wake::next_cycle_if(self.pending));
        Wake::OnInput
    }
}
