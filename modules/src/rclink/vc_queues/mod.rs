//! The VC queues of one RC Link TX (one LG): the bank arbiter's queue side, as a node of the
//! TX (`tx.vc_queues`, kind `vc_queues`). Per VC the frames the slot FIFO queued, in send order;
//! per round, per VC, the first flow head its gates pass — the rate gate (each flow's pacing
//! from `tx.dcqcn` or `tx.cc_window`), then the CBFC per-packet rule (the ledgers' counts from
//! `tx.cbfc`) — the per-flow rule, the request to the round robin (`tx.arbiter`) and its grant:
//! the TYPE1 head's run of packets CBFC admits, or the TYPE2 queue's head (`tx.type2`, the MUL
//! VC's weighted turn), framed and pushed to the MAC.
//!
//! Seed 000 «VC 仲裁», «流内 PSN 顺序保证», «CBFC 流控», «打包延迟与 MAC Credit»; seed 002 §5.4 (gate
//! order), «多播双重流控» (the MUL VC).
//!
//! ```text
//!                    +-- vc_queues ------------------------------------------------------+
//!  ops ==(comb)====> | process 0: the slot FIFO's QueueOps (Push, Front, Rewind, Remove)  | ==> arb_req (comb) : VcReq
//!  changes -(comb)-> |   and its change count; the MAC credits (mac_available), the      |       to tx.arbiter
//!  cbfc_counts ====> |   ledgers' counts, the pacing, the TYPE2 offer; if anything        |
//!  cbfc_charged ===> |   changed: the round — TYPE2 or the TYPE1 heads the gates pass      |
//!  rate_pace/paced > |                                                                   |
//!  rate_steps ---->  | process 1: the arbiter's grant (arb_grant, comb) — the frame:      | ==> frame : stream<DataFrame> (to the MAC)
//!  t2_offer ------>  |   grant (comb) to the slot FIFO, cbfc_charge, mac_take, rate_sent, | ==> grant, cbfc_charge, mac_take,
//!  mac_available ->  |   t2_take (all comb, charged in the cycle)                         |     rate_sent, t2_take (comb)
//!                    |   waves: depth_vc0..4, wait_crd (window mode)                       | --> depth_vc*, wait_crd (the TX's
//!                    |                                                                   |     slot_fifo.depth_vc*, wait_crd)
//!                    +-------------------------------------------------------------------+
//! ```
//!
//! **Latency**: none of its own. An op at n (a segment taken, a Go-Back-N) is in the round of
//! n; the frame granted at n is on `frame` at n+1 and in the slot FIFO's state at n (WaitAck,
//! its retry timer); the next round runs at n+1 if a MAC credit and room remain, else when
//! the MAC gives a credit back or takes a frame, a ledger's count or a flow's pacing changes,
//! or the slot FIFO changes.
//!
//! **Counters** (in the TX's scope, the names the fused TX had): `diag_arb_calls`,
//! `diag_arb_tx_busy`, `diag_rate_block`, `diag_credit_block`, `frames_sent`, `pkts_sent`,
//! `payload_bytes_sent`, `wire_bytes_sent`, `type2_frames_sent`, `type2_payload_bytes_sent`,
//! `type2_credit_block`, `type2_mac_block`.
//!
//! **Deviations and choices** (the TX's header lists the TX's):
//! - The queue keeps a copy of what framing needs (the segment, the first PSN, `sent`), which
//!   the slot FIFO's ops keep equal to its own; the slot FIFO learns the grant on `grant`.
//! - The frame stream's room is a second condition besides the MAC credit (a testbench sink
//!   may be slower than the credits say). "The stream's space changed" is taken as "the MAC
//!   took a frame" (space grew beyond what our own push left).

use std::num::NonZeroU32;

use hwsim_hw::{Binder, BuildResult, Component, Ctx, Cycle, In, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{
    ChipId, CreditMsg, DataFrame, HeaderTags, MacCreditTake, QpId, QueueOp, RatePace, RateSent, SlotGrant, UInt,
    VcGrant, VcReq,
};

use super::bank_arbiter::NUM_VC;
use super::cbfc::{self, Cbfc, CbfcMode};
use super::cnp_merge;
use super::dcqcn;
use super::framing::Framer;
use super::tx::{Params, RateControl};

/// The queues' state and rules (no ports).
mod queues;
/// The round: TYPE2 against TYPE1, the heads the gates pass, the request, the grant.
mod round;
/// The TYPE2 queue's side of the round: its offer, its gates, its grant.
mod type2;
/// The queues' depths on the waves.
mod view;

pub use queues::{unsent_payloads, Blocked, Gate, QueueEntry, QueuedFrame, VcHead, VcQueues};
pub use round::frame_of;
pub use view::DepthView;

/// Ops the slot FIFO may make in one cycle: a frame rejoins (or rewinds) at most once and
/// leaves at most once per cycle (a Go-Back-N sets its packets back to WaitGrant, so a second
/// one finds nothing to resend), and one segment is taken.
pub fn ops_depth(slots: u32) -> u32 {
    2 * slots + 2
}

/// Port list (the TX's parameters).
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let depth = ops_depth(p.slots);
    let mut v = vec![
        PortDecl::comb_stream_in::<QueueOp>("ops", depth)
            .doc("the slot FIFO's changes of the VC queues, in the cycle (tx.slot_fifo.q_ops)"),
        PortDecl::comb_input::<u64>("changes").doc(
            "the slot FIFO's changes so far (slots, ACKs, segments): a change runs a round (tx.slot_fifo.q_changes)",
        ),
        PortDecl::comb_stream_out::<SlotGrant>("grant")
            .process(1)
            .doc("the packets granted, to the slot FIFO in the same cycle (WaitAck, retry timer)"),
        PortDecl::comb_stream_in::<CreditMsg>("cbfc_counts", cbfc::RETURNS_PER_CYCLE)
            .doc("the CBFC ledgers' counts after this cycle's returns, for this cycle's round (cbfc.counts)"),
        PortDecl::stream_in::<CreditMsg>("cbfc_charged", cbfc::charged_depth(&p.cbfc_params()))
            .doc("the CBFC ledgers' counts after the last grant's charge, for the next round (cbfc.charged)"),
        PortDecl::comb_stream_out::<CreditMsg>("cbfc_charge")
            .process(1)
            .doc("the grant's CBFC charge, to the controller in the same cycle (cbfc.charge)"),
        PortDecl::comb_input::<UInt<4>>("mac_available")
            .doc("MAC2TX credits this cycle's round may use (mac_credit.available)"),
        PortDecl::comb_stream_out::<VcReq>("arb_req").doc(
            "this cycle's TYPE1 round: the VCs with a flow head that passes the rate gate and CBFC (to arbiter.req)",
        ),
        PortDecl::comb_stream_in::<VcGrant>("arb_grant", 1)
            .process(1)
            .doc("the arbiter's answer in the same cycle: the VC granted, the VCs it looked at (arbiter.grant)"),
        PortDecl::comb_stream_out::<MacCreditTake>("mac_take")
            .process(1)
            .doc("the grant's MAC credit, to the counter in the same cycle (`mul`: a TYPE2 frame's)"),
        // Process 0's: the round reads its room (the MAC taking a frame is what wakes it, see
        // `mac_space_seen`); process 1, which follows it in every cycle, pushes the grant.
        PortDecl::stream_out::<DataFrame>("frame")
            .doc("granted frames (or runs of their packets) to the MAC, at most one per cycle"),
        PortDecl::comb_input::<hwsim_ports::Type2Offer>("t2_offer")
            .doc("the TYPE2 queue's head and its gates, for this cycle's round (type2.offer)"),
        PortDecl::comb_stream_out::<hwsim_ports::Type2Take>("t2_take")
            .process(1)
            .doc("the TYPE2 head granted, to the TYPE2 queue in the same cycle (type2.take)"),
    ];
    v.extend(DepthView::ports("").into_iter().map(|d| d.process(1)));
    if p.rate_control == RateControl::Window {
        v.push(
            PortDecl::output::<UInt<11>>("wait_crd")
                .level()
                .process(1)
                .doc("WaitGrant slots of the QPs the window rate control masks now (the seed's WAIT_CRD)"),
        );
    }
    v.extend([
        PortDecl::comb_stream_in::<RatePace>("rate_pace", cnp_merge::CTRL_DEPTH)
            .doc("a flow's pacing after a CNP cut it (with `pacing: seed` also a timer's increase), for this cycle's round (dcqcn.ready)"),
        PortDecl::comb_input::<u64>("rate_steps")
            .doc("the rate gate's timer increases so far: a change runs a round (dcqcn.steps)"),
        PortDecl::stream_in::<RatePace>("rate_paced", dcqcn::PACED_DEPTH)
            .doc("a flow's pacing after a grant moved it, for the next round (dcqcn.paced)"),
        PortDecl::comb_stream_out::<RateSent>("rate_sent")
            .process(1)
            .doc("the grant's flow and wire bytes, to the rate gate in the same cycle (dcqcn.sent)"),
    ]);
    v
}

/// The round's counters (in the TX's scope).
pub(crate) struct Counters {
    pub(crate) arb_calls: hwsim_hw::CounterId,
    pub(crate) arb_tx_busy: hwsim_hw::CounterId,
    pub(crate) credit_block: hwsim_hw::CounterId,
    pub(crate) rate_block: hwsim_hw::CounterId,
    pub(crate) frames_sent: hwsim_hw::CounterId,
    pub(crate) pkts_sent: hwsim_hw::CounterId,
    pub(crate) payload_bytes_sent: hwsim_hw::CounterId,
    pub(crate) wire_bytes_sent: hwsim_hw::CounterId,
    pub(crate) type2_frames: hwsim_hw::CounterId,
    pub(crate) type2_bytes: hwsim_hw::CounterId,
    pub(crate) type2_credit_block: hwsim_hw::CounterId,
    pub(crate) type2_mac_block: hwsim_hw::CounterId,
}

impl Counters {
    fn declare(b: &mut Binder) -> Self {
        Counters {
            arb_calls: b.counter("diag_arb_calls"),
            arb_tx_busy: b.counter("diag_arb_tx_busy"),
            credit_block: b.counter("diag_credit_block"),
            rate_block: b.counter("diag_rate_block"),
            frames_sent: b.counter("frames_sent"),
            pkts_sent: b.counter("pkts_sent"),
            payload_bytes_sent: b.counter("payload_bytes_sent"),
            wire_bytes_sent: b.counter("wire_bytes_sent"),
            type2_frames: b.counter("type2_frames_sent"),
            type2_bytes: b.counter("type2_payload_bytes_sent"),
            type2_credit_block: b.counter("type2_credit_block"),
            type2_mac_block: b.counter("type2_mac_block"),
        }
    }
}

/// The node.
pub struct VcQueuesNode {
    p: Params,
    ops: StreamIn<QueueOp>,
    changes: In<u64>,
    /// `changes` as the last round read it.
    changes_seen: u64,
    grant_out: StreamOut<SlotGrant>,
    cbfc_counts: StreamIn<CreditMsg>,
    cbfc_charged: StreamIn<CreditMsg>,
    cbfc_charge: StreamOut<CreditMsg>,
    mac_available: In<UInt<4>>,
    mac_take: StreamOut<MacCreditTake>,
    arb_req: StreamOut<VcReq>,
    arb_grant: StreamIn<VcGrant>,
    frame_out: StreamOut<DataFrame>,
    c: Counters,
    rate_pace: StreamIn<RatePace>,
    rate_steps: In<u64>,
    rate_paced: StreamIn<RatePace>,
    rate_sent: StreamOut<RateSent>,
    /// `rate_steps` as the last round read it.
    steps_seen: u64,
    /// Per flow: the first cycle it may send again, when the rate gate paces it.
    pace: Vec<Option<Cycle>>,
    /// The earliest ready cycle of a flow the last round found rate-blocked (in a VC the
    /// arbiter looked at), or the end of a window mask: the round's exact wake-up.
    pace_wake: Option<Cycle>,
    vcq: VcQueues<QueuedFrame>,
    /// This cycle's round between processes 0 and 1: what it tries.
    plan: round::Plan,
    /// The CBFC ledgers' counts as the controller (`tx.cbfc`) last told them: the send rule
    /// reads them ([`Cbfc::run`]); only the controller's messages change them.
    cbfc: Cbfc,
    /// MAC2TX credits this cycle's round may still use: the counter's count, less this
    /// cycle's grant.
    mac_free: u32,
    /// `mac_free` after the last round: a larger count next time means the MAC gave a credit
    /// back (only a return raises it).
    mac_seen: u32,
    /// Per flow: its CBFC ledger, its key.
    flow_ledger: Vec<u32>,
    flow_keys: hwsim_hw::FastMap<(ChipId, QpId), u32>,
    /// Something changed since the last arbitration round.
    arb_pending: bool,
    /// `frame.space()` as it must read next time if the MAC pops nothing: more means the MAC took
    /// a frame (pops are the only way it grows, and a pop wakes us the next cycle whether or not
    /// event skip is on).
    mac_space_seen: u32,
    /// The TYPE2 queue's side of the round (`tx.type2` holds the queue and its gates).
    t2: type2::Type2,
    /// The link's part of every frame, and the header fields of requests ([0]) and PAXI
    /// responses ([1]).
    framer: Framer,
    hdr: [HeaderTags; 2],
    max_payload: NonZeroU32,
    depth: DepthView,
    /// With `rate_control: window`: the WAIT_CRD slots on the waves.
    wait_crd: Option<Out<UInt<11>>>,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    p.check()?;
    let mut cbfc = Cbfc::new(p.credit_size, p.pkt_ovhd, p.uf_limit, p.initial_credits)?;
    cbfc.set_mode(CbfcMode {
        dyn_uf_limit: p.dyn_uf_limit,
        vc_enable: p.cbfc_vc_enable,
        stop: p.stop_cbfc,
        max_payload: p.max_payload,
    });
    let t2 = type2::Type2 {
        offer_in: b.input("t2_offer")?,
        take: b.stream_out("t2_take")?,
        offer: Default::default(),
        queued: 0,
        returns_seen: 0,
        hdr: p.type2_header()?,
        run: 0,
        weight: p.vc_weights[NUM_VC - 1],
    };
    Ok(Box::new(VcQueuesNode {
        p: p.clone(),
        ops: b.stream_in("ops")?,
        changes: b.input("changes")?,
        changes_seen: 0,
        grant_out: b.stream_out("grant")?,
        cbfc_counts: b.stream_in("cbfc_counts")?,
        cbfc_charged: b.stream_in("cbfc_charged")?,
        cbfc_charge: b.stream_out("cbfc_charge")?,
        mac_available: b.input("mac_available")?,
        mac_take: b.stream_out("mac_take")?,
        arb_req: b.stream_out("arb_req")?,
        arb_grant: b.stream_in("arb_grant")?,
        frame_out: b.stream_out("frame")?,
        c: Counters::declare(b),
        rate_pace: b.stream_in("rate_pace")?,
        rate_steps: b.input("rate_steps")?,
        rate_paced: b.stream_in("rate_paced")?,
        rate_sent: b.stream_out("rate_sent")?,
        steps_seen: 0,
        pace: Vec::new(),
        pace_wake: None,
        vcq: VcQueues::default(),
        plan: round::Plan::Idle,
        cbfc,
        mac_free: 0,
        mac_seen: p.mac_credits,
        flow_ledger: Vec::new(),
        flow_keys: hwsim_hw::fast_map(),
        arb_pending: false,
        mac_space_seen: 0,
        t2,
        framer: Framer {
            src: p.chip,
            lg: p.lg,
            pkt_ovhd: p.pkt_ovhd as u16,
            max_payload: p.max_payload as u16,
        },
        hdr: [p.header()?, p.rsp_header()?],
        max_payload: NonZeroU32::new(p.max_payload).ok_or("max_payload = 0: must be in 1..=65535 bytes")?,
        depth: DepthView::bind("", b)?,
        wait_crd: if p.rate_control == RateControl::Window {
            Some(b.output("wait_crd")?)
        } else {
            None
        },
    }))
}

impl Component for VcQueuesNode {
    /// Process 0: what changed, and this cycle's round up to its request to the arbiter.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // A rate-blocked flow's ready cycle (or a mask's end) reached: the round runs again.
        if self.pace_wake.is_some_and(|t| t <= now) {
            self.pace_wake = None;
            self.arb_pending = true;
        }
        self.take_ops();
        let changes = self.changes.get();
        if changes != self.changes_seen {
            self.changes_seen = changes;
            self.arb_pending = true;
        }
        // The round runs on a change: the MAC took a frame (the stream's space grew beyond
        // what our own push left, see `mac_space_seen`) or gave a credit back (the count rose).
        if self.frame_out.space() > self.mac_space_seen {
            self.arb_pending = true;
        }
        self.mac_free = self.mac_available.get().0 as u32;
        if self.mac_free > self.mac_seen {
            self.arb_pending = true;
        }
        self.take_cbfc_counts();
        self.take_pacing();
        self.read_type2();
        self.plan_round(ctx, now);
        // Process 1 follows in this cycle and says what comes next.
        ctx.run_process(1);
        Wake::OnInput
    }

    /// Process 1: the arbiter's grant, the frame, the waves.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        self.finish_round(ctx, now);
        self.mac_seen = self.mac_free;
        self.show(now);
        let next = if self.arb_pending {
            Wake::NextCycle
        } else {
            Wake::earliest(self.pace_wake)
        };
        ctx.run_process_on(0, next);
        Wake::OnInput
    }
}

impl VcQueuesNode {
    /// The slot FIFO's changes of the queues, in order; a new flow gets its CBFC ledger.
    fn take_ops(&mut self) {
        while let Some(op) = self.ops.pop() {
            let f = op.flow as usize;
            if f == self.flow_ledger.len() {
                // Flows are numbered in the order they first queue a frame.
                let (dst, qp) = (op.seg.dst, op.seg.qp);
                let l = self.cbfc.ledger(dst, qp.vc_bank().value());
                self.flow_ledger.push(l as u32);
                self.flow_keys.insert((dst, qp), op.flow);
                // Not paced until the rate gate says so.
                self.pace.push(None);
            }
            self.vcq.apply(&op);
        }
    }

    /// What the rate gate says (`tx.dcqcn`): the pacing a grant moved (last cycle's), then the
    /// pacing of the flows a CNP cut in this cycle, and its timer steps; a cut or a step (a
    /// rate rose) runs a round.
    fn take_pacing(&mut self) {
        while let Some(m) = self.rate_paced.pop() {
            self.set_pace(m);
        }
        while let Some(m) = self.rate_pace.pop() {
            self.set_pace(m);
            self.arb_pending = true;
        }
        let steps = self.rate_steps.get();
        if steps != self.steps_seen {
            self.steps_seen = steps;
            self.arb_pending = true;
        }
    }

    /// What the CBFC controller says (`tx.cbfc`): the counts after the last grant's charge
    /// (last cycle's), then after this cycle's returns; a return runs a round.
    fn take_cbfc_counts(&mut self) {
        while let Some(m) = self.cbfc_charged.pop() {
            self.cbfc.set_remaining(m.dst, m.vc, m.credits as u32);
        }
        while let Some(m) = self.cbfc_counts.pop() {
            self.cbfc.set_remaining(m.dst, m.vc, m.credits as u32);
            self.arb_pending = true;
        }
    }

    fn set_pace(&mut self, m: RatePace) {
        // The gate paces only flows the slot FIFO queued here.
        if let Some(&f) = self.flow_keys.get(&(m.dst, m.qp)) {
            self.pace[f as usize] = m.ready_at();
        }
    }

    /// The waves: the queues' depths and, in window mode, the WAIT_CRD slots (whose masks'
    /// end runs the round).
    fn show(&mut self, now: Cycle) {
        self.depth.show(&self.vcq);
        if let Some(out) = &self.wait_crd {
            let mut slots = 0u32;
            let mut end: Option<u64> = None;
            for f in self.vcq.iter() {
                if let Some(t) = self.pace[f.flow as usize].filter(|&t| t > now) {
                    slots += (f.npkts - f.sent) as u32;
                    end = Some(end.map_or(t, |e| e.min(t)));
                }
            }
            out.update(UInt::wrap(slots as u64));
            // The masks clear at their window's end: the round runs then (and this shows 0),
            // whether or not the arbiter looked at the masked flow's VC.
            if let Some(t) = end {
                self.pace_wake = Some(self.pace_wake.map_or(t, |w| w.min(t)));
            }
        }
    }
}
