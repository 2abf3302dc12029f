//! RC Link TX of one link group (LG) of one chip: the slot FIFO, PSN assignment, the VC bank
//! arbiter with its two gates (DCQCN rate hook, CBFC credit), cumulative ACK, and Go-Back-N on
//! NAK or retry timeout.
//!
//! Seed 000 «TX 侧设计»: «Slot 管理», «PSN 管理», «VC 仲裁», «CBFC 流控», «事件粒度»,
//! «打包延迟与 MAC Credit» (the MAC side is another block), «Go-Back-N 重传» («TX 处理 NAK»,
//! «超时重传»), appendix C «诊断计数器» and «TX 参数»; SPEC.md «TX side», «Go-Back-N», «Counters».
//! Every piece of state here belongs to this one LG (seed: «作用域说明»).
//!
//! ```text
//!                      +--------------------------------------------+
//!  seg    ==(cap 1)==> | slot pool ─> VC queues 0..3,MUL            | ==> frame       : stream<DataFrame> (to the MAC)
//!  stream<Segment>     |   (PSN per (dst,qp))   │                   | ==> done        : stream<FrameDone> (to PAXI)
//!  ctrl   ==(cap 8)==> | ACK / NAK / CNP        ▼                   | --> slots_used  : signal<u16>
//!  stream<Ctrl>        |            weighted RR ─ rate gate ─ CBFC  | --> credit_view : signal<CreditMsg>
//!  credit ==(cap 8)==> | credit ledger per (dst, vc)                |
//!  stream<CreditMsg>   +--------------------------------------------+
//! ```
//!
//! **Slots.** A segment (one PAXI frame) is accepted only when the pool has a free slot for each
//! of its packets (split by `max_payload`; a 0-byte segment is one packet); otherwise it stays in
//! `seg` (PAXI keeps it queued) and `diag_slot_full` counts it once. The frame holds its slot
//! group (WaitGrant → WaitAck) until every packet is ACKed, then frees the whole group and sends a
//! [`FrameDone`] («事件粒度»: frame-level slot group, packet-level retry). Each packet gets the next
//! PSN of its (dst, qp) flow, on acceptance, in order.
//!
//! **Arbitration** runs only when something changed since the last round (a segment, ACK/NAK,
//! credit or timeout was handled, the MAC took a frame, or the last round granted and the MAC
//! stream still has room), and grants at most one frame per cycle, only when `frame.can_push()`.
//! Weighted round robin over the five VCs (`vc_rr_ptr`, `vc_rr_counter`): the VCs are visited
//! from the pointer on; empty, rate-blocked and credit-blocked VCs are skipped without touching
//! the pointer or the counter. After a send from the pointer's VC the counter goes up and at the
//! VC's weight the pointer moves to the next VC with counter 0; a send from another VC moves the
//! pointer there with the counter restarting at 1 (then the same weight rule). Within a VC the
//! first WaitGrant frame is tried, rate gate first, then CBFC (the order of seed 002 §5.4). If a
//! flow's head frame is blocked, every later frame of that flow is skipped this round, so a flow
//! never overtakes itself; other flows of the VC may go.
//!
//! **CBFC** per (dst, vc): a frame (or resent tail) costs Σ over its packets of
//! `ceil((payload + pkt_ovhd) / credit_size)` and goes only if `remaining ≥ cost + uf_limit`.
//! Credit returns add back; a return that would lift the remaining credits above
//! `initial_credits` is a protocol violation.
//!
//! **ACK** (cumulative, per (dst = ctrl.src, qp)): WaitAck packets with a PSN before `ack_psn` are
//! ACKed; a frame whose packets are all ACKed frees its slots. **NAK** («TX 处理 NAK»): refused
//! (counted in `diag_max_retry_hit`) once the flow's retry count reached `max_retry`; else the
//! cumulative part is applied, the remaining WaitAck packets of the flow are ring-sorted by
//! `(psn − ack_psn) mod 4096` and put back at the head of their VC queue smallest PSN first, as
//! frame tails (a frame whose first k packets were ACKed resends packets k.. with `first_idx =
//! k`), and the retry count goes up. **Timeout** («超时重传»): a transmission not ACKed
//! `retry_timeout` cycles after it was granted is treated as a NAK from the flow's smallest WaitAck
//! PSN. **CNP** is counted only (DCQCN comes later).
//!
//! **Latency.** A segment pushed at n−1 is popped at n and can be granted at n; the frame is
//! visible to the MAC at n+1. An ACK visible at n frees slots at n (a waiting segment can be
//! accepted in the same cycle) and the `FrameDone` is visible to PAXI at n+1 (one per cycle;
//! more queue inside). A credit return or a NAK visible at n can let a frame go at n.
//!
//! **Counters**: `diag_arb_calls`, `diag_arb_tx_busy`, `diag_credit_block`, `diag_rate_block`,
//! `diag_slot_full`, `diag_nak_processed`, `diag_max_retry_hit`, `diag_nak_retransmit_total`,
//! `diag_timeout`, `diag_timeout_retransmit_total`, `segments_accepted`, `frames_sent`,
//! `pkts_sent`, `payload_bytes_sent`, `wire_bytes_sent` (the four count resends too),
//! `acks_received`, `acks_ignored`, `cnp_received`, `ctrl_latency_max` and
//! `credit_latency_max` (ns from the receiver's send, from the RH timestamp and
//! `CreditMsg::sent_at`), `frames_done`, `slots_peak`; end-of-run
//! gauges `slots_in_use` and `credits_outstanding` (both 0 when every frame was ACKed and every
//! credit returned).
//!
//! **Deviations and simplifications** (say so if one of them matters):
//! - CBFC is checked per frame transmission: the sum of its packets' costs, all or nothing (the
//!   seed checks per packet; a frame is one datapath event, so its packets go together).
//! - Zero-byte packets cost no credit and bypass the CBFC gate (SPEC: zero-byte packets consume
//!   and return no credit; charging them would leak credit).
//! - The rate gate is a hook that always allows ([`RateGate`]); `diag_rate_block` stays 0 until
//!   DCQCN is in. The hardware's bank-mask rotation is modelled as the weighted RR above, as the
//!   seed's simulator does («与硬件仲裁的建模差异»).
//! - Slots are freed per frame (slot group), so `slots_used` counts an ACKed packet of a
//!   partially ACKed frame until the frame completes.
//! - The retry count of a flow is reset to 0 by any ACK progress (also the cumulative part of a
//!   NAK, before that NAK adds 1), so it counts NAKs/timeouts in a row without progress.
//! - A NAK or timeout at the retry limit is only counted and ignored; making the QP fatal (its
//!   slots cleared and reported) is left for later, so such a flow then stalls.
//! - A cumulative ACK acknowledges WaitAck packets only; it stops at a packet waiting for its
//!   resend (WaitGrant), which is resent and ACKed again.
//! - `DataFrame.ecn` is ECT(0) (the Standard format carries ECN, so switches may mark it);
//!   `DataFrame.sent_at` is the grant cycle (the MAC may restamp it).
//! - Misrouted inputs (a segment for another LG, ctrl/credit for another chip or LG, a data
//!   opcode on `ctrl`, a credit for VC > 3) and segments that can never be sent (more packets
//!   than slots or than 255, a cost above `initial_credits − uf_limit`) are protocol violations.
//! - `credit_view` shows the last ledger change of a cycle when there were two (a return and a
//!   grant).
//! - "The MAC stream's space changed" is taken as "the MAC took a frame" (space grew beyond what
//!   our own push left). The drop caused by our own push is not a change: the cycle after a push
//!   the block is not woken under event skip, so a round there would exist only with `--no-skip`;
//!   instead a grant is followed by a round next cycle only if the stream still has room.
//! - The retry timeout («超时重传») is implemented, with its own counters, since `retry_timeout`
//!   is a parameter and without it a lost last packet would stall its flow.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::num::NonZeroU32;

use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{
    cbfc_cost, packet_count, split_packets, ChipId, CreditMsg, CreditSize, Ctrl, DataFrame, Ecn, FrameDone, LgId,
    Opcode, Psn, QpId, Segment,
};
use serde::{Deserialize, Serialize};

/// Number of TX VCs: banks 0..3 and MUL (index 4, multicast, unused for now).
pub const NUM_VC: usize = 5;

/// Largest slot pool: a flow's packets in flight must span less than half the PSN ring
/// (2048), or a cumulative ACK covering all of them would look stale to `Psn::before`.
pub const MAX_SLOTS: u32 = Psn::HALF as u32 - 1;

/// Largest CBFC credit count: the hardware counter is 15 bits.
pub const MAX_CREDITS: u32 = (1 << 15) - 1;

/// Parameters (seed 000 appendix C «TX 参数»).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (`DataFrame.src`, `credit_view.src`).
    pub chip: ChipId,
    /// This link group's index, 0..=7.
    pub lg: LgId,
    /// Slot pool size TYPE1_OST, in packets, 1..=2047.
    pub slots: u32,
    /// Largest packet payload MAX_PAYLOAD, bytes, 1..=65535: frames are split into packets of
    /// this size, the Go-Back-N unit.
    pub max_payload: u32,
    /// Per-packet header overhead HEADER_OVERHEAD, bytes, 0..=511 (the hardware PktOvhd
    /// register is 10-bit signed; negative values are not modelled).
    pub pkt_ovhd: u32,
    /// Bytes per CBFC credit: 32, 64, 128, 256, 1024 or 2048.
    pub credit_size: u32,
    /// CREDIT_UF_LIMIT, credits kept in reserve: a frame goes only if
    /// `remaining ≥ cost + uf_limit`; 1..=7.
    pub uf_limit: u32,
    /// INITIAL_CREDIT per (dst, vc), credits, uf_limit+1..=32767 (15-bit counter).
    pub initial_credits: u32,
    /// Weighted-RR weights, frames per turn: banks 0..3, then MUL; each ≥ 1.
    pub vc_weights: [u32; NUM_VC],
    /// MAX_RETRY: NAKs/timeouts in a row a flow may take before further ones are refused.
    pub max_retry: u32,
    /// RETRY_TIMEOUT_NS: cycles after a grant without ACK before it is resent (≥ 1).
    pub retry_timeout: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            slots: 512,
            max_payload: 1344,
            pkt_ovhd: 50,
            credit_size: 256,
            uf_limit: 1,
            initial_credits: 1024,
            vc_weights: [1, 1, 1, 1, 256],
            max_retry: 15,
            retry_timeout: 50_000,
        }
    }
}

impl Params {
    /// Checks every parameter; the error names the offending one.
    fn check(&self) -> Result<CreditSize, String> {
        if self.lg > 7 {
            return Err(format!("lg = {}: must be in 0..=7", self.lg));
        }
        if self.slots == 0 || self.slots > MAX_SLOTS {
            return Err(format!(
                "slots = {}: must be in 1..={MAX_SLOTS} (in-flight PSNs of a flow must stay \
                 within half the 12-bit ring)",
                self.slots
            ));
        }
        if self.max_payload == 0 || self.max_payload > u16::MAX as u32 {
            return Err(format!(
                "max_payload = {}: must be in 1..=65535 bytes",
                self.max_payload
            ));
        }
        if self.pkt_ovhd > 511 {
            return Err(format!(
                "pkt_ovhd = {}: must be in 0..=511 bytes (10-bit signed PktOvhd register)",
                self.pkt_ovhd
            ));
        }
        let credit_size =
            CreditSize::new(self.credit_size.into()).map_err(|e| format!("credit_size = {}: {e}", self.credit_size))?;
        if !(1..=7).contains(&self.uf_limit) {
            return Err(format!(
                "uf_limit = {}: must be in 1..=7 (0 is forbidden)",
                self.uf_limit
            ));
        }
        if self.initial_credits <= self.uf_limit || self.initial_credits > MAX_CREDITS {
            return Err(format!(
                "initial_credits = {}: must be in uf_limit+1..={MAX_CREDITS} (15-bit counter)",
                self.initial_credits
            ));
        }
        if let Some(i) = self.vc_weights.iter().position(|w| *w == 0) {
            return Err(format!("vc_weights[{i}] = 0: every weight must be ≥ 1"));
        }
        if self.retry_timeout == 0 {
            return Err("retry_timeout = 0: must be ≥ 1 cycle".into());
        }
        Ok(credit_size)
    }
}

/// Port list (independent of the parameters).
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<Segment>("seg", 1)
            .doc("segments (frames) from the PAXI core; left queued while slots are short"),
        PortDecl::stream_in::<Ctrl>("ctrl", 8).doc("ACK / NAK / CNP back from the receiver (src = our dst)"),
        PortDecl::stream_in::<CreditMsg>("credit", 8).doc("CBFC credit returns (src = our dst, vc, credits)"),
        PortDecl::stream_out::<DataFrame>("frame")
            .doc("granted frames (or resent tails) to the MAC, at most one per cycle"),
        PortDecl::stream_out::<FrameDone>("done").doc("to PAXI: every packet of the frame was ACKed"),
        PortDecl::output::<u16>("slots_used").doc("slots not Empty, packets"),
        PortDecl::output::<CreditMsg>("credit_view")
            .doc("after each ledger change: remaining credits of the (dst, vc) that changed"),
    ]
}

/// The DCQCN rate gate hook. For now every flow may always send; DCQCN pacing will replace the
/// body (and give the wake-up time when it blocks) without changing the arbiter.
#[derive(Clone, Debug, Default)]
pub struct RateGate;

impl RateGate {
    /// Whether flow (dst, qp) may send at cycle `now`.
    pub fn allows(&self, _dst: ChipId, _qp: QpId, _now: Cycle) -> bool {
        true
    }
}

/// Where a frame's not-yet-ACKed packets are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameState {
    /// Its slot group is free (the record waits in `free_frames` for reuse).
    Empty,
    /// In its VC queue, waiting for a grant (first time or resend).
    WaitGrant,
    /// Sent, waiting for the ACK.
    WaitAck,
}

/// One accepted frame: a slot group of `npkts` slots.
#[derive(Clone, Debug)]
struct FrameRec {
    flow: u32,
    txn: u64,
    frame_seq: u32,
    /// Payload bytes of the whole frame.
    bytes: u32,
    /// Packets of the whole frame (= slots held).
    npkts: u8,
    /// PSN of packet 0.
    first_psn: Psn,
    /// Packets 0..acked are ACKed; the rest are all in `state`.
    acked: u8,
    state: FrameState,
    /// Sequence number of its last grant: a timeout entry is valid only for that grant.
    grant_seq: u64,
}

impl FrameRec {
    /// PSN of the first packet not yet ACKed.
    fn first_unacked_psn(&self) -> Psn {
        self.first_psn.wrapping_add(self.acked as u16)
    }
}

/// Per (dst, qp) state of this LG. Flows are never removed: their PSN counter must persist.
#[derive(Clone, Debug)]
struct Flow {
    dst: ChipId,
    qp: QpId,
    vc: usize,
    /// Index of its (dst, vc) credit ledger.
    ledger: usize,
    /// PSN the next accepted packet gets.
    next_psn: Psn,
    /// NAKs/timeouts taken since the last ACK progress.
    retry: u32,
    /// Live frames, oldest (smallest PSN) first. By construction they are: WaitAck frames, then
    /// WaitGrant frames (a NAK turns every WaitAck frame of the flow into WaitGrant, and the
    /// per-flow rule sends a flow's frames in order).
    frames: VecDeque<u32>,
    /// Round in which the flow's head frame was found blocked (per-flow rule).
    blocked_round: u64,
    /// The QP went fatal (MAX_RETRY exceeded): its frames were given up, and new ones fail at
    /// once.
    fatal: bool,
}

/// CBFC credits of one (dst, vc).
#[derive(Clone, Debug)]
struct Ledger {
    dst: ChipId,
    vc: u8,
    remaining: u32,
}

/// What triggered a Go-Back-N.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rewind {
    Nak,
    Timeout,
}

struct Counters {
    arb_calls: CounterId,
    arb_tx_busy: CounterId,
    credit_block: CounterId,
    rate_block: CounterId,
    slot_full: CounterId,
    nak_processed: CounterId,
    max_retry_hit: CounterId,
    nak_retransmit_total: CounterId,
    timeout: CounterId,
    timeout_retransmit_total: CounterId,
    segments_accepted: CounterId,
    frames_sent: CounterId,
    pkts_sent: CounterId,
    payload_bytes_sent: CounterId,
    wire_bytes_sent: CounterId,
    acks_received: CounterId,
    acks_ignored: CounterId,
    cnp_received: CounterId,
    ctrl_latency_max: CounterId,
    credit_latency_max: CounterId,
    frames_done: CounterId,
    slots_peak: CounterId,
    slots_in_use: CounterId,
    frames_failed: CounterId,
    fatal_qp: CounterId,
    fatal_at: CounterId,
    credits_outstanding: CounterId,
}

impl Counters {
    fn declare(b: &mut Binder) -> Self {
        Counters {
            arb_calls: b.counter("diag_arb_calls"),
            arb_tx_busy: b.counter("diag_arb_tx_busy"),
            credit_block: b.counter("diag_credit_block"),
            rate_block: b.counter("diag_rate_block"),
            slot_full: b.counter("diag_slot_full"),
            nak_processed: b.counter("diag_nak_processed"),
            max_retry_hit: b.counter("diag_max_retry_hit"),
            nak_retransmit_total: b.counter("diag_nak_retransmit_total"),
            timeout: b.counter("diag_timeout"),
            timeout_retransmit_total: b.counter("diag_timeout_retransmit_total"),
            segments_accepted: b.counter("segments_accepted"),
            frames_sent: b.counter("frames_sent"),
            pkts_sent: b.counter("pkts_sent"),
            payload_bytes_sent: b.counter("payload_bytes_sent"),
            wire_bytes_sent: b.counter("wire_bytes_sent"),
            acks_received: b.counter("acks_received"),
            acks_ignored: b.counter("acks_ignored"),
            cnp_received: b.counter("cnp_received"),
            ctrl_latency_max: b.counter("ctrl_latency_max"),
            credit_latency_max: b.counter("credit_latency_max"),
            frames_done: b.counter("frames_done"),
            slots_peak: b.counter("slots_peak"),
            slots_in_use: b.counter("slots_in_use"),
            frames_failed: b.counter("frames_failed"),
            fatal_qp: b.counter("fatal_qp"),
            fatal_at: b.counter("fatal_at"),
            credits_outstanding: b.counter("credits_outstanding"),
        }
    }
}

/// The block.
pub struct RcLinkTx {
    p: Params,
    credit_size: CreditSize,
    max_payload: NonZeroU32,
    seg_in: StreamIn<Segment>,
    ctrl_in: StreamIn<Ctrl>,
    credit_in: StreamIn<CreditMsg>,
    frame_out: StreamOut<DataFrame>,
    done_out: StreamOut<FrameDone>,
    slots_used_out: Out<u16>,
    credit_view_out: Out<CreditMsg>,
    c: Counters,
    rate_gate: RateGate,

    /// Frame records by id; ids of Empty slot groups are in `free_frames`.
    frames: Vec<FrameRec>,
    free_frames: Vec<u32>,
    flows: Vec<Flow>,
    flow_index: HashMap<(ChipId, QpId), u32>,
    ledgers: Vec<Ledger>,
    ledger_index: HashMap<(ChipId, u8), u32>,
    /// WaitGrant frames per VC, in send order.
    vc_queues: [VecDeque<u32>; NUM_VC],
    /// Frames in all VC queues.
    queued: usize,
    vc_rr_ptr: usize,
    vc_rr_counter: u32,

    slots_used: u32,
    slots_peak: u32,
    /// Σ over ledgers of initial − remaining.
    credits_outstanding: u64,
    /// FrameDone messages not yet pushed.
    done_queue: VecDeque<FrameDone>,
    /// (deadline, frame id, grant_seq) per grant; stale entries are skipped when they expire.
    timeouts: BinaryHeap<Reverse<(Cycle, u32, u64)>>,
    grant_seq: u64,
    /// Number of the last arbitration round (the per-flow rule stamps flows with it).
    round: u64,
    /// Something changed since the last arbitration round.
    arb_pending: bool,
    /// `frame.space()` as it must read next time if the MAC pops nothing: more means the MAC took
    /// a frame (pops are the only way it grows, and a pop wakes us the next cycle whether or not
    /// event skip is on).
    mac_space_seen: u32,
    /// The segment at the head of `seg` was already counted as slot-blocked.
    seg_block_counted: bool,
    /// Values last written to the gauges / `slots_used`.
    slots_shown: u32,
    credits_shown: u64,
    /// Reused buffer for the Go-Back-N sort: (ring distance from ack_psn, frame id).
    rewind_scratch: Vec<(u16, u32)>,
}

/// Binds ports; refuses out-of-range parameters with a message naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    let credit_size = p.check()?;
    Ok(Box::new(RcLinkTx {
        p: p.clone(),
        credit_size,
        max_payload: NonZeroU32::new(p.max_payload).expect("checked"),
        seg_in: b.stream_in("seg")?,
        ctrl_in: b.stream_in("ctrl")?,
        credit_in: b.stream_in("credit")?,
        frame_out: b.stream_out("frame")?,
        done_out: b.stream_out("done")?,
        slots_used_out: b.output("slots_used")?,
        credit_view_out: b.output("credit_view")?,
        c: Counters::declare(b),
        rate_gate: RateGate,
        frames: Vec::with_capacity(p.slots as usize),
        free_frames: Vec::with_capacity(p.slots as usize),
        flows: Vec::new(),
        flow_index: HashMap::new(),
        ledgers: Vec::new(),
        ledger_index: HashMap::new(),
        vc_queues: Default::default(),
        queued: 0,
        vc_rr_ptr: 0,
        vc_rr_counter: 0,
        slots_used: 0,
        slots_peak: 0,
        credits_outstanding: 0,
        done_queue: VecDeque::new(),
        timeouts: BinaryHeap::new(),
        grant_seq: 0,
        round: 0,
        arb_pending: false,
        mac_space_seen: 0,
        seg_block_counted: false,
        slots_shown: 0,
        credits_shown: 0,
        rewind_scratch: Vec::new(),
    }))
}

impl RcLinkTx {
    /// The credit ledger of (dst, vc), created full on first use.
    fn ledger_of(&mut self, dst: ChipId, vc: u8) -> usize {
        if let Some(&i) = self.ledger_index.get(&(dst, vc)) {
            return i as usize;
        }
        let i = self.ledgers.len();
        self.ledgers.push(Ledger {
            dst,
            vc,
            remaining: self.p.initial_credits,
        });
        self.ledger_index.insert((dst, vc), i as u32);
        i
    }

    /// The flow (dst, qp), created with PSN 0 on first use.
    fn flow_of(&mut self, dst: ChipId, qp: QpId) -> usize {
        if let Some(&i) = self.flow_index.get(&(dst, qp)) {
            return i as usize;
        }
        let vc = qp.vc_bank().index();
        let ledger = self.ledger_of(dst, vc as u8);
        let i = self.flows.len();
        self.flows.push(Flow {
            dst,
            qp,
            vc,
            ledger,
            next_psn: Psn::ZERO,
            retry: 0,
            frames: VecDeque::new(),
            blocked_round: 0,
            fatal: false,
        });
        self.flow_index.insert((dst, qp), i as u32);
        i
    }

    /// CBFC cost of sending packets `from..` of a frame of `bytes`: Σ of the packets' costs,
    /// zero-byte packets free.
    fn cost(&self, bytes: u32, from: u8) -> u32 {
        split_packets(bytes, self.max_payload)
            .skip(from as usize)
            .filter(|b| *b > 0)
            .map(|b| cbfc_cost(b, self.p.pkt_ovhd, self.credit_size))
            .sum()
    }

    fn show_credit(&mut self, ledger: usize) {
        let l = &self.ledgers[ledger];
        self.credit_view_out.set(CreditMsg {
            src: self.p.chip,
            dst: l.dst,
            lg: self.p.lg,
            vc: l.vc,
            credits: l.remaining as u16,
            sent_at: 0,
        });
    }

    // --------------------------------------------------------------------------------------------
    // Inputs

    /// Takes segments while the slot pool can hold them.
    fn accept_segments(&mut self, ctx: &mut Ctx<'_>) {
        loop {
            let Some(seg) = self.seg_in.peek().map(|s| *s) else {
                return;
            };
            let npkts = packet_count(seg.bytes, self.max_payload);
            if let Some(why) = self.unsendable(&seg, npkts) {
                // Dropped: the run stops at the end of this cycle anyway.
                self.seg_in.pop();
                self.seg_block_counted = false;
                ctx.violation(format!("segment {seg:?}: {why}"));
                continue;
            }
            if self
                .flow_index
                .get(&(seg.dst, seg.qp))
                .is_some_and(|&f| self.flows[f as usize].fatal)
            {
                // The QP is dead: the frame fails at once (PAXI reports the transaction lost).
                self.seg_in.pop();
                self.seg_block_counted = false;
                let done = FrameDone {
                    txn: seg.txn,
                    frame_seq: seg.frame_seq,
                    bytes: seg.bytes,
                    failed: true,
                };
                self.done_queue.push_back(done);
                ctx.count(self.c.frames_failed, 1);
                continue;
            }
            if npkts > self.p.slots - self.slots_used {
                // Counted once per blocked segment, not per cycle it waits.
                if !self.seg_block_counted {
                    self.seg_block_counted = true;
                    ctx.count(self.c.slot_full, 1);
                }
                return;
            }
            self.seg_in.pop();
            self.seg_block_counted = false;
            self.admit(ctx, &seg, npkts as u8);
        }
    }

    /// Why a segment can never be sent, if it cannot.
    fn unsendable(&self, seg: &Segment, npkts: u32) -> Option<String> {
        if seg.lg != self.p.lg {
            return Some(format!("for LG {}, this is LG {}", seg.lg, self.p.lg));
        }
        if npkts > u8::MAX as u32 || npkts > self.p.slots {
            return Some(format!(
                "{npkts} packets never fit (slots = {}, at most 255 per frame)",
                self.p.slots
            ));
        }
        let cost = self.cost(seg.bytes, 0);
        if cost + self.p.uf_limit > self.p.initial_credits {
            return Some(format!(
                "costs {cost} credits, never sendable with initial_credits = {} and uf_limit = {}",
                self.p.initial_credits, self.p.uf_limit
            ));
        }
        None
    }

    /// Empty → WaitGrant: takes a slot group, assigns PSNs, queues the frame on its VC.
    fn admit(&mut self, ctx: &mut Ctx<'_>, seg: &Segment, npkts: u8) {
        let flow = self.flow_of(seg.dst, seg.qp);
        let first_psn = self.flows[flow].next_psn;
        self.flows[flow].next_psn = first_psn.wrapping_add(npkts as u16);
        let rec = FrameRec {
            flow: flow as u32,
            txn: seg.txn,
            frame_seq: seg.frame_seq,
            bytes: seg.bytes,
            npkts,
            first_psn,
            acked: 0,
            state: FrameState::WaitGrant,
            grant_seq: 0,
        };
        let id = match self.free_frames.pop() {
            Some(id) => {
                self.frames[id as usize] = rec;
                id
            }
            None => {
                self.frames.push(rec);
                self.frames.len() as u32 - 1
            }
        };
        self.flows[flow].frames.push_back(id);
        let vc = self.flows[flow].vc;
        self.vc_queues[vc].push_back(id);
        self.queued += 1;
        self.slots_used += npkts as u32;
        if self.slots_used > self.slots_peak {
            self.slots_peak = self.slots_used;
            ctx.set_counter(self.c.slots_peak, self.slots_peak as u64);
        }
        ctx.count(self.c.segments_accepted, 1);
        self.arb_pending = true;
    }

    fn on_ctrl(&mut self, ctx: &mut Ctx<'_>, msg: &Ctrl) {
        if msg.dst != self.p.chip || msg.lg != self.p.lg {
            ctx.violation(format!(
                "ctrl for chip {} LG {} arrived at chip {} LG {}: {msg:?}",
                msg.dst, msg.lg, self.p.chip, self.p.lg
            ));
            return;
        }
        let qp = msg.rh.qp();
        let ack_psn = msg.rh.psn();
        match msg.rh.opcode() {
            Opcode::Cnp => {
                // DCQCN (rate decrease on (msg.src, qp)) plugs in here.
                ctx.count(self.c.cnp_received, 1);
            }
            Opcode::Ack if !msg.rh.is_nak() => {
                ctx.count(self.c.acks_received, 1);
                let acked = match self.flow_index.get(&(msg.src, qp)) {
                    Some(&f) => self.cumulative_ack(ctx, f as usize, ack_psn),
                    None => 0,
                };
                if acked == 0 {
                    ctx.count(self.c.acks_ignored, 1);
                }
            }
            Opcode::Ack => match self.flow_index.get(&(msg.src, qp)) {
                Some(&f) => self.go_back_n(ctx, f as usize, ack_psn, Rewind::Nak),
                // A NAK for a flow that never sent: nothing to resend.
                None => ctx.count(self.c.acks_ignored, 1),
            },
            Opcode::Data => {
                ctx.violation(format!("data opcode on the ctrl path: {msg:?}"));
            }
        }
    }

    /// ACKs every WaitAck packet of the flow before `ack_psn`; frees completed frames. Returns the
    /// number of packets newly ACKed.
    fn cumulative_ack(&mut self, ctx: &mut Ctx<'_>, flow: usize, ack_psn: Psn) -> u32 {
        let mut acked_total = 0;
        while let Some(&id) = self.flows[flow].frames.front() {
            let f = &mut self.frames[id as usize];
            if f.state != FrameState::WaitAck {
                // WaitAck frames come first in a flow; nothing after this one was sent.
                break;
            }
            let d = f.first_unacked_psn().distance(ack_psn);
            // d packets from the first unACKed one are before ack_psn; d ≥ 2048 is a stale ACK.
            if d == 0 || d >= Psn::HALF {
                break;
            }
            let k = (d as u32).min((f.npkts - f.acked) as u32);
            f.acked += k as u8;
            acked_total += k;
            if f.acked < f.npkts {
                break;
            }
            // WaitAck → Empty: the whole slot group is freed at once.
            let done = FrameDone {
                txn: f.txn,
                frame_seq: f.frame_seq,
                bytes: f.bytes,
                failed: false,
            };
            f.state = FrameState::Empty;
            self.slots_used -= f.npkts as u32;
            self.flows[flow].frames.pop_front();
            self.free_frames.push(id);
            self.done_queue.push_back(done);
            ctx.count(self.c.frames_done, 1);
        }
        if acked_total > 0 {
            self.flows[flow].retry = 0;
            self.arb_pending = true;
        }
        acked_total
    }

    /// Go-Back-N («TX 处理 NAK»): cumulative part, then every remaining WaitAck packet of the
    /// flow goes back to the head of its VC queue in ring order from `ack_psn`.
    fn go_back_n(&mut self, ctx: &mut Ctx<'_>, flow: usize, ack_psn: Psn, why: Rewind) {
        if self.flows[flow].retry >= self.p.max_retry {
            self.qp_fatal(ctx, flow);
            return;
        }
        self.cumulative_ack(ctx, flow, ack_psn);
        let mut scratch = std::mem::take(&mut self.rewind_scratch);
        scratch.clear();
        for &id in &self.flows[flow].frames {
            let f = &self.frames[id as usize];
            if f.state == FrameState::WaitAck {
                scratch.push((ack_psn.distance(f.first_unacked_psn()), id));
            }
        }
        // The order of `Psn::sort_from(ack_psn, ..)`: by (psn − ack_psn) mod 4096, stable.
        scratch.sort_by_key(|&(d, _)| d);
        let vc = self.flows[flow].vc;
        let mut resent = 0u64;
        // push_front largest first, so the smallest PSN ends up at the head.
        for &(_, id) in scratch.iter().rev() {
            let f = &mut self.frames[id as usize];
            f.state = FrameState::WaitGrant;
            resent += (f.npkts - f.acked) as u64;
            self.vc_queues[vc].push_front(id);
        }
        self.queued += scratch.len();
        self.rewind_scratch = scratch;
        self.flows[flow].retry += 1;
        match why {
            Rewind::Nak => {
                ctx.count(self.c.nak_processed, 1);
                ctx.count(self.c.nak_retransmit_total, resent);
            }
            Rewind::Timeout => {
                ctx.count(self.c.timeout, 1);
                ctx.count(self.c.timeout_retransmit_total, resent);
            }
        }
        self.arb_pending = true;
    }

    /// MAX_RETRY exceeded (seed 000 «TX 处理 NAK», seed 002 L3 QP fatal): the QP is dead. Every
    /// live frame of the flow is given up — its slots freed, a queued one taken off its VC
    /// queue — and reported to PAXI as failed; later segments of the QP fail at once. The other
    /// QPs keep running. Counters: `diag_max_retry_hit`, `frames_failed`, and the gauges
    /// `fatal_qp` (QP id + 1 of the last fatal QP) and `fatal_at` (cycle + 1).
    fn qp_fatal(&mut self, ctx: &mut Ctx<'_>, flow: usize) {
        let now = ctx.now();
        let vc = self.flows[flow].vc;
        let ids: Vec<u32> = self.flows[flow].frames.drain(..).collect();
        for id in ids {
            let f = &mut self.frames[id as usize];
            if f.state == FrameState::WaitGrant {
                self.vc_queues[vc].retain(|&x| x != id);
                self.queued -= 1;
            }
            f.state = FrameState::Empty;
            self.slots_used -= f.npkts as u32;
            let done = FrameDone {
                txn: f.txn,
                frame_seq: f.frame_seq,
                bytes: f.bytes,
                failed: true,
            };
            self.done_queue.push_back(done);
            self.free_frames.push(id);
            ctx.count(self.c.frames_failed, 1);
        }
        self.flows[flow].fatal = true;
        ctx.count(self.c.max_retry_hit, 1);
        ctx.set_counter(self.c.fatal_qp, self.flows[flow].qp.value() as u64 + 1);
        ctx.set_counter(self.c.fatal_at, now + 1);
        self.arb_pending = true;
    }

    fn on_credit(&mut self, ctx: &mut Ctx<'_>, msg: &CreditMsg) {
        if msg.dst != self.p.chip || msg.lg != self.p.lg || msg.vc as usize >= NUM_VC - 1 {
            ctx.violation(format!(
                "credit return for chip {} LG {} VC {} arrived at chip {} LG {}: {msg:?}",
                msg.dst, msg.lg, msg.vc, self.p.chip, self.p.lg
            ));
            return;
        }
        let l = self.ledger_of(msg.src, msg.vc);
        let before = self.ledgers[l].remaining;
        let after = before + msg.credits as u32;
        if after > self.p.initial_credits {
            ctx.violation(format!(
                "credit over-return for dst {} VC {}: {before} remaining + {} returned > {} \
                 initial",
                msg.src, msg.vc, msg.credits, self.p.initial_credits
            ));
        }
        let after = after.min(self.p.initial_credits);
        self.ledgers[l].remaining = after;
        self.credits_outstanding -= (after - before) as u64;
        self.show_credit(l);
        self.arb_pending = true;
    }

    /// Whether timeout entry (frame id, grant_seq) still stands for a transmission waiting for
    /// its ACK. Once false it stays false: an ACKed frame's record is freed (and a reused record
    /// gets a new grant_seq), a resent one has a new grant_seq.
    fn timer_valid(&self, id: u32, seq: u64) -> bool {
        let f = &self.frames[id as usize];
        f.state == FrameState::WaitAck && f.grant_seq == seq
    }

    /// Treats every grant not ACKed within `retry_timeout` as a NAK from the smallest WaitAck PSN
    /// of its flow («超时重传»).
    fn expire_timeouts(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        while let Some(&Reverse((deadline, id, seq))) = self.timeouts.peek() {
            if deadline > now {
                return;
            }
            self.timeouts.pop();
            if !self.timer_valid(id, seq) {
                continue;
            }
            let flow = self.frames[id as usize].flow as usize;
            let head = self.flows[flow].frames[0];
            let base = self.frames[head as usize].first_unacked_psn();
            self.go_back_n(ctx, flow, base, Rewind::Timeout);
        }
    }

    /// Drops void entries from the top of the timeout heap, so that the wake-up hint is a real
    /// deadline: no tick per ACKed frame, and a run can end once everything is ACKed. Staleness
    /// depends on state only, so pruning on more ticks (event skip off) gives the same heap top.
    fn prune_timeouts(&mut self) {
        while let Some(&Reverse((_, id, seq))) = self.timeouts.peek() {
            if self.timer_valid(id, seq) {
                return;
            }
            self.timeouts.pop();
        }
    }

    // --------------------------------------------------------------------------------------------
    // Arbitration

    /// One arbitration round. Returns whether a frame was granted.
    fn arbitrate(&mut self, ctx: &mut Ctx<'_>, now: Cycle) -> bool {
        ctx.count(self.c.arb_calls, 1);
        if !self.frame_out.can_push() {
            ctx.count(self.c.arb_tx_busy, 1);
            return false;
        }
        self.round += 1;
        for k in 0..NUM_VC {
            let vc = (self.vc_rr_ptr + k) % NUM_VC;
            if let Some(pos) = self.pick(ctx, vc, now) {
                self.grant(ctx, vc, pos, now);
                self.advance_pointer(vc);
                return true;
            }
        }
        false
    }

    /// Position in VC `vc`'s queue of the first frame that passes both gates, skipping flows
    /// whose head is blocked this round.
    fn pick(&mut self, ctx: &mut Ctx<'_>, vc: usize, now: Cycle) -> Option<usize> {
        for pos in 0..self.vc_queues[vc].len() {
            let id = self.vc_queues[vc][pos] as usize;
            let flow = self.frames[id].flow as usize;
            if self.flows[flow].blocked_round == self.round {
                continue;
            }
            let (dst, qp, ledger) = {
                let fl = &self.flows[flow];
                (fl.dst, fl.qp, fl.ledger)
            };
            if !self.rate_gate.allows(dst, qp, now) {
                ctx.count(self.c.rate_block, 1);
                self.flows[flow].blocked_round = self.round;
                continue;
            }
            let cost = self.cost(self.frames[id].bytes, self.frames[id].acked);
            if cost > 0 && self.ledgers[ledger].remaining < cost + self.p.uf_limit {
                ctx.count(self.c.credit_block, 1);
                self.flows[flow].blocked_round = self.round;
                continue;
            }
            return Some(pos);
        }
        None
    }

    /// WaitGrant → WaitAck: charges the credit and hands the frame (or tail) to the MAC.
    fn grant(&mut self, ctx: &mut Ctx<'_>, vc: usize, pos: usize, now: Cycle) {
        let id = self.vc_queues[vc].remove(pos).expect("picked position") as usize;
        self.queued -= 1;
        let (bytes, acked) = (self.frames[id].bytes, self.frames[id].acked);
        let cost = self.cost(bytes, acked);
        let flow = self.frames[id].flow as usize;
        let (dst, qp, ledger) = {
            let fl = &self.flows[flow];
            (fl.dst, fl.qp, fl.ledger)
        };
        if cost > 0 {
            self.ledgers[ledger].remaining -= cost;
            self.credits_outstanding += cost as u64;
            self.show_credit(ledger);
        }
        self.grant_seq += 1;
        let f = &mut self.frames[id];
        f.state = FrameState::WaitAck;
        f.grant_seq = self.grant_seq;
        let frame = DataFrame {
            src: self.p.chip,
            dst,
            lg: self.p.lg,
            qp,
            first_psn: f.first_unacked_psn(),
            first_idx: f.acked,
            npkts: f.npkts - f.acked,
            frame_bytes: f.bytes,
            max_payload: self.p.max_payload as u16,
            pkt_ovhd: self.p.pkt_ovhd as u16,
            txn: f.txn,
            frame_seq: f.frame_seq,
            ecn: Ecn::Ect0,
            sent_at: now,
            lost: 0,
        };
        self.timeouts
            .push(Reverse((now + self.p.retry_timeout, id as u32, self.grant_seq)));
        ctx.count(self.c.frames_sent, 1);
        ctx.count(self.c.pkts_sent, frame.npkts as u64);
        ctx.count(self.c.payload_bytes_sent, frame.payload() as u64);
        ctx.count(self.c.wire_bytes_sent, frame.wire_bytes() as u64);
        self.frame_out.push(frame);
    }

    /// The weighted-RR pointer rule, applied only after an actual send from `vc`.
    fn advance_pointer(&mut self, vc: usize) {
        if vc != self.vc_rr_ptr {
            // The pointer's VC was empty or blocked: the turn passes to the VC that sent.
            self.vc_rr_ptr = vc;
            self.vc_rr_counter = 0;
        }
        self.vc_rr_counter += 1;
        if self.vc_rr_counter >= self.p.vc_weights[vc] {
            self.vc_rr_ptr = (vc + 1) % NUM_VC;
            self.vc_rr_counter = 0;
        }
    }

    /// Writes `slots_used` and the gauges when they changed.
    fn update_gauges(&mut self, ctx: &mut Ctx<'_>) {
        if self.slots_used != self.slots_shown {
            self.slots_shown = self.slots_used;
            self.slots_used_out.set(self.slots_used as u16);
            ctx.set_counter(self.c.slots_in_use, self.slots_used as u64);
        }
        if self.credits_outstanding != self.credits_shown {
            self.credits_shown = self.credits_outstanding;
            ctx.set_counter(self.c.credits_outstanding, self.credits_outstanding);
        }
    }
}

impl Component for RcLinkTx {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Nothing below acts on the mere fact of being ticked: every action follows an input, a
        // timer that is due, or a change of the MAC stream's space (see `mac_space_seen`).
        if self.frame_out.space() > self.mac_space_seen {
            self.arb_pending = true;
        }
        // ACKs first: slots they free can take a waiting segment in the same cycle.
        while let Some(msg) = self.ctrl_in.pop() {
            // Control-path latency from the receiver's send (RH timestamp, 32-bit ns; 0 = not
            // stamped, e.g. testbench stimulus) to this pop: acceptance 9 bounds it.
            if msg.rh.timestamp() != 0 {
                let lat = u64::from((now as u32).wrapping_sub(msg.rh.timestamp()));
                if lat > ctx.counter(self.c.ctrl_latency_max) {
                    ctx.set_counter(self.c.ctrl_latency_max, lat);
                }
            }
            self.on_ctrl(ctx, &msg);
            self.arb_pending = true;
        }
        while let Some(msg) = self.credit_in.pop() {
            if msg.sent_at != 0 {
                let lat = now.saturating_sub(msg.sent_at);
                if lat > ctx.counter(self.c.credit_latency_max) {
                    ctx.set_counter(self.c.credit_latency_max, lat);
                }
            }
            self.on_credit(ctx, &msg);
        }
        self.expire_timeouts(ctx, now);
        self.accept_segments(ctx);

        let mut done_pushed = false;
        if !self.done_queue.is_empty() && self.done_out.can_push() {
            let d = self.done_queue.pop_front().expect("non-empty");
            self.done_out.push(d);
            done_pushed = true;
        }

        let mut granted = false;
        if self.arb_pending && self.queued > 0 {
            granted = self.arbitrate(ctx, now);
        }
        self.mac_space_seen = self.frame_out.space() - granted as u32;
        // After a grant the next one can go next cycle if the MAC stream still has room then
        // (it only grows); otherwise the MAC's pop wakes us.
        self.arb_pending = granted && self.mac_space_seen > 0 && self.queued > 0;
        self.update_gauges(ctx);
        self.prune_timeouts();

        let done_more = !self.done_queue.is_empty() && done_pushed && self.done_out.space() > 1;
        if self.arb_pending || done_more {
            Wake::NextCycle
        } else if let Some(&Reverse((deadline, _, _))) = self.timeouts.peek() {
            Wake::At(deadline)
        } else {
            Wake::OnInput
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::Rh;

    const DST: ChipId = 1;

    fn qp(v: u16) -> QpId {
        QpId::new(v).unwrap()
    }
    fn psn(v: u16) -> Psn {
        Psn::new(v).unwrap()
    }
    fn seg_to(dst: ChipId, txn: u64, q: u16, bytes: u32) -> Segment {
        Segment {
            txn,
            frame_seq: 0,
            dst,
            qp: qp(q),
            bytes,
            lg: 0,
        }
    }
    fn seg(txn: u64, q: u16, bytes: u32) -> Segment {
        seg_to(DST, txn, q, bytes)
    }
    fn ack(q: u16, ack_psn: u16) -> Ctrl {
        Ctrl {
            src: DST,
            dst: 0,
            lg: 0,
            rh: Rh::ack(qp(q), psn(ack_psn)),
            wire_bytes: 50,
        }
    }
    fn nak(q: u16, ack_psn: u16) -> Ctrl {
        Ctrl {
            rh: Rh::nak(qp(q), psn(ack_psn)),
            ..ack(q, ack_psn)
        }
    }
    fn credit(vc: u8, credits: u16) -> CreditMsg {
        CreditMsg {
            src: DST,
            dst: 0,
            lg: 0,
            vc,
            credits,
            sent_at: 0,
        }
    }

    /// A bench around the DUT: inputs queued per port and pushed (one per port per cycle) as
    /// soon as they are due and the stream has room; a MAC that pops one frame per cycle while
    /// `mac_ready`; PAXI taking every `done` at once. Outputs are logged with their push cycle.
    struct Tb {
        h: Harness,
        segs: VecDeque<(Cycle, Segment)>,
        ctrls: VecDeque<(Cycle, Ctrl)>,
        credits: VecDeque<(Cycle, CreditMsg)>,
        mac_ready: bool,
        frames: Vec<(Cycle, DataFrame)>,
        done: Vec<(Cycle, FrameDone)>,
    }

    impl Tb {
        fn new(p: Params) -> Tb {
            Tb::with_skip(p, true)
        }
        fn with_skip(p: Params, skip: bool) -> Tb {
            let mut h = Harness::new("rclink_tx", ports(&p), Box::new(move |b| build(&p, b)), 1, 1).unwrap();
            h.sim_mut().set_skip(skip);
            Tb {
                h,
                segs: VecDeque::new(),
                ctrls: VecDeque::new(),
                credits: VecDeque::new(),
                mac_ready: true,
                frames: Vec::new(),
                done: Vec::new(),
            }
        }
        fn now(&self) -> Cycle {
            self.h.now()
        }
        fn seg(&mut self, s: Segment) {
            let at = self.now();
            self.segs.push_back((at, s));
        }
        fn ctrl(&mut self, c: Ctrl) {
            let at = self.now();
            self.ctrls.push_back((at, c));
        }
        fn credit(&mut self, c: CreditMsg) {
            let at = self.now();
            self.credits.push_back((at, c));
        }
        fn try_step(&mut self) -> Result<(), hwsim_hw::SimError> {
            let now = self.now();
            if let Some(&(at, s)) = self.segs.front() {
                if at <= now && self.h.push("seg", s) {
                    self.segs.pop_front();
                }
            }
            if let Some(&(at, c)) = self.ctrls.front() {
                if at <= now && self.h.push("ctrl", c) {
                    self.ctrls.pop_front();
                }
            }
            if let Some(&(at, c)) = self.credits.front() {
                if at <= now && self.h.push("credit", c) {
                    self.credits.pop_front();
                }
            }
            self.h.step()?;
            if self.mac_ready {
                if let Some(f) = self.h.pop::<DataFrame>("frame") {
                    self.frames.push((now, f));
                }
            }
            while let Some(d) = self.h.pop::<FrameDone>("done") {
                self.done.push((now, d));
            }
            Ok(())
        }
        fn step(&mut self) {
            self.try_step().unwrap();
        }
        fn steps(&mut self, n: u64) {
            for _ in 0..n {
                self.step();
            }
        }
        fn counter(&self, name: &str) -> u64 {
            self.h
                .sim()
                .counter(&format!("dut.{name}"))
                .unwrap_or_else(|| panic!("no counter {name}"))
        }
        fn slots_used(&self) -> u16 {
            self.h.peek::<u16>("slots_used")
        }
        /// First PSNs of the frames sent so far.
        fn psns(&self) -> Vec<u16> {
            self.frames.iter().map(|(_, f)| f.first_psn.value()).collect()
        }
        fn qps(&self) -> Vec<u16> {
            self.frames.iter().map(|(_, f)| f.qp.value()).collect()
        }
        fn txns(&self) -> Vec<u64> {
            self.frames.iter().map(|(_, f)| f.txn).collect()
        }
        /// Steps until `cond` holds; panics after 1000 cycles (a test must fail, not hang).
        fn until(&mut self, what: &str, cond: impl Fn(&Tb) -> bool) {
            let start = self.now();
            while !cond(self) {
                assert!(self.now() < start + 1000, "waited 1000 cycles for {what}");
                self.step();
            }
        }
        /// Sends one segment, waits for its frame, ACKs it fully and returns its credit (as the
        /// RX would), and waits for its FrameDone.
        fn send_and_ack(&mut self, s: Segment) -> DataFrame {
            let (nf, nd) = (self.frames.len(), self.done.len());
            self.seg(s);
            self.until("the frame", |tb| tb.frames.len() > nf);
            let f = self.frames[nf].1;
            let next = f.psn_of(f.first_idx + f.npkts - 1).next();
            self.ctrl(ack(f.qp.value(), next.value()));
            let cost: u32 = (f.first_idx..f.first_idx + f.npkts)
                .map(|i| f.pkt_bytes(i))
                .filter(|b| *b > 0)
                .map(|b| cbfc_cost(b, 50, CreditSize::B256))
                .sum();
            self.credit(credit(f.qp.vc_bank().value(), cost as u16));
            self.until("the FrameDone", |tb| tb.done.len() > nd);
            f
        }
    }

    #[test]
    fn defaults_follow_appendix_c() {
        let p = Params::default();
        assert_eq!((p.chip, p.lg, p.slots), (0, 0, 512));
        assert_eq!((p.max_payload, p.pkt_ovhd, p.credit_size), (1344, 50, 256));
        assert_eq!((p.uf_limit, p.initial_credits), (1, 1024));
        assert_eq!(p.vc_weights, [1, 1, 1, 1, 256]);
        assert_eq!((p.max_retry, p.retry_timeout), (15, 50_000));
        assert!(p.check().is_ok());
    }

    #[test]
    fn out_of_range_params_name_the_parameter() {
        let cases: Vec<(Params, &str)> = vec![
            (
                Params {
                    lg: 8,
                    ..Default::default()
                },
                "lg = 8",
            ),
            (
                Params {
                    slots: 0,
                    ..Default::default()
                },
                "slots = 0",
            ),
            (
                Params {
                    slots: 2048,
                    ..Default::default()
                },
                "slots = 2048",
            ),
            (
                Params {
                    max_payload: 0,
                    ..Default::default()
                },
                "max_payload = 0",
            ),
            (
                Params {
                    pkt_ovhd: 512,
                    ..Default::default()
                },
                "pkt_ovhd = 512",
            ),
            (
                Params {
                    credit_size: 100,
                    ..Default::default()
                },
                "credit_size = 100",
            ),
            (
                Params {
                    uf_limit: 0,
                    ..Default::default()
                },
                "uf_limit = 0",
            ),
            (
                Params {
                    uf_limit: 8,
                    ..Default::default()
                },
                "uf_limit = 8",
            ),
            (
                Params {
                    initial_credits: 32768,
                    ..Default::default()
                },
                "initial_credits = 32768",
            ),
            (
                Params {
                    initial_credits: 1,
                    ..Default::default()
                },
                "initial_credits = 1",
            ),
            (
                Params {
                    vc_weights: [1, 0, 1, 1, 1],
                    ..Default::default()
                },
                "vc_weights[1] = 0",
            ),
            (
                Params {
                    retry_timeout: 0,
                    ..Default::default()
                },
                "retry_timeout = 0",
            ),
        ];
        for (p, want) in cases {
            let err = p.check().unwrap_err();
            assert!(err.starts_with(want), "{err} should start with {want}");
        }
        let err = Harness::new(
            "rclink_tx",
            ports(&Params::default()),
            Box::new(|b| {
                build(
                    &Params {
                        credit_size: 3,
                        ..Default::default()
                    },
                    b,
                )
            }),
            1,
            1,
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(err.contains("credit_size = 3"), "{err}");
    }

    #[test]
    fn psn_per_flow_in_order_and_latency() {
        let mut tb = Tb::new(Params::default());
        tb.steps(3);
        let pushed_at = tb.now();
        tb.seg(seg(1, 0, 4096)); // 4 packets: PSN 0..3
        tb.step();
        tb.step();
        // Pushed at n−1, popped and granted at n, visible to the MAC at n+1.
        assert_eq!(tb.frames[0].0, pushed_at + 1);
        tb.seg(seg(2, 0, 100)); // PSN 4
        tb.seg(seg(3, 1, 100)); // another QP: its own PSN space
        tb.seg(seg_to(2, 4, 0, 100)); // another dst, same QP: its own PSN space
        tb.seg(seg(5, 0, 0)); // a 0-byte segment is one packet: PSN 5
        tb.seg(seg(6, 0, 2689)); // 3 packets: PSN 6..8
        tb.steps(20);
        let got: Vec<(u64, u16, u8)> = tb
            .frames
            .iter()
            .map(|(_, f)| (f.txn, f.first_psn.value(), f.npkts))
            .collect();
        assert_eq!(
            got,
            vec![(1, 0, 4), (2, 4, 1), (3, 0, 1), (4, 0, 1), (5, 5, 1), (6, 6, 3)]
        );
        let f = tb.frames[0].1;
        assert_eq!((f.src, f.dst, f.lg, f.first_idx), (0, DST, 0, 0));
        assert_eq!((f.max_payload, f.pkt_ovhd, f.frame_bytes), (1344, 50, 4096));
        assert_eq!(f.ecn, Ecn::Ect0);
        assert_eq!(f.sent_at, pushed_at + 1);
        assert_eq!(tb.counter("frames_sent"), 6);
        assert_eq!(tb.counter("pkts_sent"), 11);
        assert_eq!(tb.counter("payload_bytes_sent"), 4096 + 300 + 2689);
        assert_eq!(tb.counter("wire_bytes_sent"), 4096 + 300 + 2689 + 11 * 50);
        assert_eq!(tb.slots_used(), 11);
        assert_eq!(tb.counter("slots_in_use"), 11);
    }

    #[test]
    fn psn_wraps_and_cumulative_ack_across_the_wrap() {
        let mut tb = Tb::new(Params::default());
        // 1365 frames of 3 packets: PSN 0, 3, …, 4092; the next starts at 4095 and wraps.
        for i in 0..1365 {
            let f = tb.send_and_ack(seg(i, 0, 3 * 1344));
            assert_eq!(f.first_psn.value(), (i * 3) as u16);
        }
        assert_eq!(tb.counter("frames_done"), 1365);
        tb.seg(seg(9000, 0, 3 * 1344));
        tb.steps(4);
        let f = tb.frames.last().unwrap().1;
        assert_eq!(f.first_psn.value(), 4095);
        assert_eq!((f.psn_of(1).value(), f.psn_of(2).value()), (0, 1));
        assert_eq!(tb.slots_used(), 3);
        // ACK up to PSN 0 (exclusive): 4095 is ACKed, but the frame is not complete.
        tb.ctrl(ack(0, 0));
        tb.steps(4);
        assert_eq!(tb.done.len(), 1365);
        assert_eq!(tb.slots_used(), 3);
        // ACK 2 covers 0 and 1 across the wrap: the frame is done and its slots freed.
        tb.ctrl(ack(0, 2));
        tb.steps(4);
        assert_eq!(tb.done.len(), 1366);
        assert_eq!(tb.done.last().unwrap().1.txn, 9000);
        assert_eq!(tb.done.last().unwrap().1.bytes, 3 * 1344);
        assert_eq!(tb.slots_used(), 0);
        assert_eq!(tb.counter("slots_in_use"), 0);
        // Every frame's credit came back but the last one's.
        assert_eq!(tb.counter("credits_outstanding"), 18);
        // A stale ACK (behind the window) and an ACK for an unknown flow are ignored.
        tb.ctrl(ack(0, 4090));
        tb.ctrl(ack(5, 1));
        tb.steps(4);
        assert_eq!(tb.counter("acks_ignored"), 2);
        assert_eq!(tb.counter("acks_received"), 1365 + 2 + 2);
    }

    #[test]
    fn slot_groups_and_backpressure() {
        let mut tb = Tb::new(Params {
            slots: 8,
            ..Default::default()
        });
        tb.seg(seg(1, 0, 4096));
        tb.seg(seg(2, 0, 4096));
        tb.seg(seg(3, 0, 4096)); // needs 4 slots, none left: stays in `seg`
        tb.steps(30);
        assert_eq!(tb.txns(), vec![1, 2]);
        assert_eq!(tb.slots_used(), 8);
        assert_eq!(tb.counter("slots_peak"), 8);
        assert_eq!(tb.counter("segments_accepted"), 2);
        // Counted once per blocked segment, however long it waits.
        assert_eq!(tb.counter("diag_slot_full"), 1);
        // A partial ACK of frame 1 frees nothing: the slot group goes as a whole.
        tb.ctrl(ack(0, 2));
        tb.steps(5);
        assert_eq!(tb.slots_used(), 8);
        assert!(tb.done.is_empty());
        // ACK frame 1 completely: its 4 slots take segment 3 in the same cycle.
        let at = tb.now();
        tb.ctrl(ack(0, 4));
        tb.steps(5);
        assert_eq!(tb.done.len(), 1);
        assert_eq!(
            tb.done[0],
            (
                at + 1,
                FrameDone {
                    txn: 1,
                    frame_seq: 0,
                    bytes: 4096,
                    failed: false
                }
            )
        );
        assert_eq!(tb.txns(), vec![1, 2, 3]);
        assert_eq!(tb.frames[2].0, at + 1, "segment 3 admitted and granted with the ACK");
        assert_eq!(tb.slots_used(), 8);
        assert_eq!(tb.counter("slots_peak"), 8);
        // A second blocked segment counts again.
        tb.seg(seg(4, 0, 100));
        tb.steps(10);
        assert_eq!(tb.counter("diag_slot_full"), 2);
        tb.ctrl(ack(0, 12));
        tb.steps(10);
        assert_eq!(tb.txns(), vec![1, 2, 3, 4]);
        assert_eq!(tb.slots_used(), 1);
        assert_eq!(tb.done.len(), 3);
    }

    #[test]
    fn cbfc_cost_blocking_and_credit_return() {
        let p = Params {
            initial_credits: 13,
            ..Default::default()
        };
        {
            let mut b = Tb::new(p.clone());
            b.step();
        }
        // Costs: 1344 B → 6, 4096 B → 6+6+6+1, a 0-byte packet → 0 (no credit consumed).
        let probe = Params::default();
        let cs = probe.check().unwrap();
        let cost = |bytes: u32, from: u8| -> u32 {
            split_packets(bytes, NonZeroU32::new(1344).unwrap())
                .skip(from as usize)
                .filter(|b| *b > 0)
                .map(|b| cbfc_cost(b, 50, cs))
                .sum()
        };
        assert_eq!(cost(1344, 0), 6);
        assert_eq!(cost(4096, 0), 19);
        assert_eq!(cost(4096, 2), 7);
        assert_eq!(cost(0, 0), 0);

        let mut tb = Tb::new(p);
        tb.seg(seg(1, 0, 1344)); // 13 ≥ 6+1 → 7 left
        tb.seg(seg(2, 0, 1344)); // 7 ≥ 7 → 1 left (the boundary goes)
        tb.seg(seg(3, 0, 1344)); // 1 < 7: credit-blocked
        tb.steps(20);
        assert_eq!(tb.txns(), vec![1, 2]);
        let view = tb.h.peek::<CreditMsg>("credit_view");
        assert_eq!((view.src, view.dst, view.vc, view.credits), (0, DST, 0, 1));
        assert_eq!(tb.counter("credits_outstanding"), 12);
        let blocked = tb.counter("diag_credit_block");
        assert!(blocked >= 1);
        // Idle cycles do not count blocks: only rounds do, and rounds need a change.
        tb.steps(100);
        assert_eq!(tb.counter("diag_credit_block"), blocked);
        // 5 credits → 6 remaining < 7: still blocked (one more round, one more block).
        tb.credit(credit(0, 5));
        tb.steps(5);
        assert_eq!(tb.txns(), vec![1, 2]);
        assert_eq!(tb.counter("diag_credit_block"), blocked + 1);
        assert_eq!(tb.h.peek::<CreditMsg>("credit_view").credits, 6);
        // One more credit: 7 ≥ 7 → goes in the cycle the credit is seen.
        let at = tb.now();
        tb.credit(credit(0, 1));
        tb.steps(5);
        assert_eq!(tb.txns(), vec![1, 2, 3]);
        assert_eq!(tb.frames[2].0, at + 1);
        assert_eq!(tb.h.peek::<CreditMsg>("credit_view").credits, 1);
        // Other VCs and other destinations have their own ledgers; a 0-byte frame needs none.
        tb.seg(seg(4, 1, 1344));
        tb.seg(seg_to(2, 5, 0, 1344));
        tb.seg(seg(6, 0, 0));
        tb.steps(20);
        assert_eq!(tb.txns(), vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(tb.counter("credits_outstanding"), 12 + 6 + 6);
        // Everything back: the gauge returns to 0.
        tb.credit(credit(0, 12));
        tb.credit(credit(1, 6));
        tb.credit(CreditMsg { src: 2, ..credit(0, 6) });
        tb.steps(10);
        assert_eq!(tb.counter("credits_outstanding"), 0);
    }

    #[test]
    fn credit_over_return_is_a_violation() {
        let mut tb = Tb::new(Params::default());
        tb.seg(seg(1, 0, 1344));
        tb.steps(5);
        tb.credit(credit(0, 6)); // exactly back to 1024: fine
        tb.steps(3);
        tb.credit(credit(0, 1)); // 1025 > 1024
        let err = loop {
            if let Err(e) = tb.try_step() {
                break e.to_string();
            }
            assert!(tb.now() < 100, "no violation reported");
        };
        assert!(err.contains("credit over-return for dst 1 VC 0"), "{err}");
        assert!(err.contains("1024 remaining + 1 returned > 1024"), "{err}");
    }

    #[test]
    fn misrouted_and_unsendable_inputs_are_violations() {
        let run = |p: Params, f: &dyn Fn(&mut Tb)| -> String {
            let mut tb = Tb::new(p);
            f(&mut tb);
            for _ in 0..10 {
                if let Err(e) = tb.try_step() {
                    return e.to_string();
                }
            }
            panic!("no violation");
        };
        let e = run(Params::default(), &|tb| tb.seg(Segment { lg: 3, ..seg(1, 0, 10) }));
        assert!(e.contains("for LG 3, this is LG 0"), "{e}");
        let e = run(
            Params {
                slots: 2,
                ..Default::default()
            },
            &|tb| tb.seg(seg(1, 0, 4096)),
        );
        assert!(e.contains("4 packets never fit"), "{e}");
        let e = run(
            Params {
                initial_credits: 10,
                ..Default::default()
            },
            &|tb| tb.seg(seg(1, 0, 4096)),
        );
        assert!(e.contains("costs 19 credits"), "{e}");
        let e = run(Params::default(), &|tb| tb.ctrl(Ctrl { dst: 5, ..ack(0, 1) }));
        assert!(e.contains("ctrl for chip 5 LG 0 arrived at chip 0 LG 0"), "{e}");
        let e = run(Params::default(), &|tb| tb.credit(credit(4, 1)));
        assert!(e.contains("VC 4"), "{e}");
    }

    /// Fills the VC queues while the MAC is stalled (the first frame granted sits in the MAC's
    /// one-entry input), then lets the MAC run: frames come out in arbitration order.
    fn order_after_stall(p: Params, segs: &[Segment]) -> Vec<u16> {
        let mut tb = Tb::new(p);
        tb.mac_ready = false;
        for s in segs {
            tb.seg(*s);
        }
        tb.steps(4 * segs.len() as u64 + 4);
        tb.mac_ready = true;
        tb.steps(4 * segs.len() as u64 + 4);
        tb.qps()
    }

    #[test]
    fn rr_weights_are_respected() {
        let segs = [
            seg(0, 3, 100), // granted at once (into the stalled MAC): pointer 3 → 4
            seg(1, 0, 100),
            seg(2, 0, 100),
            seg(3, 0, 100),
            seg(4, 1, 100),
            seg(5, 1, 100),
            seg(6, 1, 100),
        ];
        let p = Params {
            vc_weights: [2, 1, 1, 1, 256],
            ..Default::default()
        };
        // MUL (4) is empty → bank 0 sends: pointer 0, counter 1; its weight 2 gives it a second
        // frame; then bank 1 once; then bank 0 again (pointer 2, 3, 4 empty), …
        assert_eq!(order_after_stall(p, &segs), vec![3, 0, 0, 1, 0, 1, 1]);
        // Equal weights alternate.
        assert_eq!(order_after_stall(Params::default(), &segs), vec![3, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn rr_pointer_and_counter_stay_on_a_credit_blocked_bank() {
        // Bank 0 has weight 2; (dst 1, vc 0) has 20 credits.
        let mut tb = Tb::new(Params {
            vc_weights: [2, 1, 1, 1, 256],
            initial_credits: 20,
            ..Default::default()
        });
        tb.seg(seg(1, 0, 1344)); // a0, cost 6: sent; pointer stays on bank 0 (counter 1 of 2)
        tb.seg(seg(2, 0, 4096)); // a1, cost 19 > 14 − 1: credit-blocked
        tb.seg(seg(3, 0, 0)); // a2, 0 B (no credit needed), behind a1 in its flow
        tb.steps(12);
        assert_eq!(tb.txns(), vec![1]);
        // Rounds that grant nothing: they must move neither the pointer nor the counter.
        let rounds = tb.counter("diag_arb_calls");
        let blocks = tb.counter("diag_credit_block");
        tb.ctrl(ack(0, 1));
        tb.steps(3);
        tb.ctrl(Ctrl {
            rh: Rh::cnp(qp(0)),
            ..ack(0, 0)
        });
        tb.steps(3);
        tb.credit(credit(2, 0));
        tb.steps(3);
        assert_eq!(tb.counter("diag_arb_calls"), rounds + 3);
        assert_eq!(tb.counter("diag_credit_block"), blocks + 3);
        assert_eq!(tb.txns(), vec![1]);
        assert_eq!(tb.counter("cnp_received"), 1);
        // In one cycle bank 1 gets a frame and bank 0 the credit for a1: bank 0 (the pointer's)
        // goes first and that is its second turn (counter 2 = weight), so bank 1 is next, then
        // bank 0 again. A pointer moved by the empty rounds would send b0 first; a counter reset
        // by them would send a2 before b0.
        tb.seg(seg(4, 1, 1344));
        tb.credit(credit(0, 6));
        tb.steps(12);
        assert_eq!(tb.txns(), vec![1, 2, 4, 3]);
    }

    #[test]
    fn per_flow_blocking_skips_later_frames_of_the_blocked_flow_only() {
        let mut tb = Tb::new(Params {
            initial_credits: 20,
            ..Default::default()
        });
        tb.mac_ready = false;
        tb.seg(seg(1, 0, 1344)); // A0: granted into the stalled MAC; (dst 1, vc 0) 20 → 14
        tb.seg(seg(2, 0, 4096)); // A1: costs 19, needs 20: blocked
        tb.seg(seg(3, 0, 64)); // A2: costs 1 and would pass, but must not overtake A1
        tb.seg(seg(4, 4, 64)); // C0: QP 4 is bank 0 too, same ledger, another flow: may go
        tb.seg(seg_to(2, 5, 0, 1344)); // B0: dst 2, same VC, its own ledger: may go
        tb.steps(20);
        tb.mac_ready = true;
        tb.steps(20);
        assert_eq!(tb.txns(), vec![1, 4, 5]);
        assert!(tb.counter("diag_credit_block") >= 1);
        // Credit for A1 (13 + 7 = 20): A1 goes, then A2 waits for its own credit (1 < 1+1).
        tb.credit(credit(0, 7));
        tb.steps(10);
        assert_eq!(tb.txns(), vec![1, 4, 5, 2]);
        tb.credit(credit(0, 1));
        tb.steps(10);
        assert_eq!(tb.txns(), vec![1, 4, 5, 2, 3]);
        let a: Vec<u16> = tb
            .frames
            .iter()
            .filter(|(_, f)| f.dst == DST && f.qp == qp(0))
            .map(|(_, f)| f.first_psn.value())
            .collect();
        assert_eq!(a, vec![0, 1, 5], "flow A on the wire in PSN order");
    }

    #[test]
    fn nak_seed_example_resends_7_8_9() {
        let mut tb = Tb::new(Params::default());
        for i in 0..5 {
            tb.send_and_ack(seg(i, 0, 1000)); // PSN 0..4, ACKed
        }
        for i in 5..10 {
            tb.seg(seg(i, 0, 1000)); // PSN 5..9 in flight
        }
        tb.steps(20);
        assert_eq!(tb.psns(), (0..10).collect::<Vec<_>>());
        assert_eq!(tb.slots_used(), 5);
        tb.ctrl(nak(0, 7));
        tb.steps(20);
        // 5 and 6 freed (their frames are done), 7, 8, 9 resent in that order.
        let done: Vec<u64> = tb.done.iter().map(|(_, d)| d.txn).collect();
        assert_eq!(done, (0..7).collect::<Vec<_>>());
        assert_eq!(&tb.psns()[10..], &[7, 8, 9]);
        assert_eq!(tb.slots_used(), 3);
        assert_eq!(tb.counter("diag_nak_processed"), 1);
        assert_eq!(tb.counter("diag_nak_retransmit_total"), 3);
        assert_eq!(tb.counter("frames_sent"), 13);
        // PSN 0..4 had their credit back; 5..9 and the three resends consume 5 credits each.
        assert_eq!(tb.counter("credits_outstanding"), 8 * 5);
        tb.ctrl(ack(0, 10));
        tb.steps(10);
        assert_eq!(tb.done.len(), 10);
        assert_eq!(tb.slots_used(), 0);
    }

    #[test]
    fn nak_resends_frame_tails_at_the_head_of_the_vc_queue() {
        let mut tb = Tb::new(Params::default());
        tb.seg(seg(1, 0, 4096)); // PSN 0..3
        tb.seg(seg(2, 0, 2688)); // PSN 4, 5
        tb.steps(10);
        tb.mac_ready = false;
        tb.seg(seg(3, 4, 100)); // another flow of bank 0, waiting behind the stalled MAC
        tb.seg(seg(4, 0, 100)); // flow A's next frame, PSN 6, never sent yet
        tb.steps(10);
        tb.ctrl(nak(0, 2));
        tb.steps(3);
        tb.mac_ready = true;
        tb.steps(20);
        let got: Vec<(u64, u16, u8, u8)> = tb
            .frames
            .iter()
            .map(|(_, f)| (f.txn, f.first_psn.value(), f.first_idx, f.npkts))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0, 0, 4),
                (2, 4, 0, 2),
                (3, 0, 0, 1), // granted into the stalled MAC before the NAK
                (1, 2, 2, 2), // the tail of frame 1: packets 2, 3
                (2, 4, 0, 2),
                (4, 6, 0, 1),
            ]
        );
        assert!(tb.done.is_empty(), "frame 1 only half ACKed");
        assert_eq!(tb.counter("diag_nak_retransmit_total"), 4);
        assert_eq!(tb.frames[3].1.payload(), 1344 + 64);
        tb.ctrl(ack(0, 7));
        tb.ctrl(ack(4, 1));
        tb.steps(10);
        assert_eq!(tb.done.len(), 4);
        assert_eq!(tb.slots_used(), 0);
    }

    #[test]
    fn nak_ring_sort_across_the_psn_wrap() {
        let mut tb = Tb::new(Params::default());
        for i in 0..1364 {
            tb.send_and_ack(seg(i, 0, 3 * 1344)); // PSN 0..4091
        }
        tb.send_and_ack(seg(9999, 0, 2 * 1344)); // 4092, 4093
        for i in 0..4 {
            tb.seg(seg(10_000 + i, 0, 100)); // 4094, 4095, 0, 1
        }
        tb.steps(20);
        let n = tb.frames.len();
        assert_eq!(&tb.psns()[n - 4..], &[4094, 4095, 0, 1]);
        tb.ctrl(nak(0, 4095));
        tb.steps(20);
        assert_eq!(&tb.psns()[n..], &[4095, 0, 1]);
        assert_eq!(tb.done.last().unwrap().1.txn, 10_000);
    }

    #[test]
    fn retry_limit_makes_the_qp_fatal_and_other_qps_go_on() {
        let mut tb = Tb::new(Params {
            max_retry: 2,
            ..Default::default()
        });
        for i in 0..3 {
            tb.seg(seg(i, 0, 100)); // PSN 0, 1, 2 on QP 0
        }
        tb.steps(10);
        tb.ctrl(nak(0, 0));
        tb.steps(10);
        tb.ctrl(nak(0, 0));
        tb.steps(10);
        tb.ctrl(nak(0, 0)); // third in a row without progress: QP 0 is fatal
        tb.steps(10);
        assert_eq!(tb.counter("diag_nak_processed"), 2);
        assert_eq!(tb.counter("diag_max_retry_hit"), 1);
        assert_eq!(tb.counter("frames_sent"), 9);
        // Its three frames are given up and reported failed; the slots are free again.
        assert_eq!(tb.counter("frames_failed"), 3);
        assert_eq!(tb.counter("slots_in_use"), 0);
        assert_eq!(tb.counter("fatal_qp"), 1, "QP 0 (+1)");
        assert!(tb.counter("fatal_at") > 0);
        let failed: Vec<u64> = tb.done.iter().filter(|(_, d)| d.failed).map(|(_, d)| d.txn).collect();
        assert_eq!(failed, vec![0, 1, 2]);
        // A new segment of the dead QP fails at once; QP 1 still sends.
        tb.seg(seg(7, 0, 100));
        tb.seg(seg(8, 1, 100));
        tb.steps(10);
        assert_eq!(tb.counter("frames_failed"), 4);
        assert_eq!(tb.counter("frames_sent"), 10, "only QP 1's frame went out");
        assert!(tb.done.iter().any(|(_, d)| d.txn == 7 && d.failed));
    }

    #[test]
    fn retry_timeout_resends_from_the_smallest_waitack_psn() {
        let mut tb = Tb::new(Params {
            retry_timeout: 100,
            ..Default::default()
        });
        tb.seg(seg(1, 0, 100)); // PSN 0
        tb.seg(seg(2, 0, 100)); // PSN 1
        tb.steps(10);
        let t0 = tb.frames[0].0;
        tb.ctrl(ack(0, 1)); // frame 1 ACKed: its timer is void
        let t1 = tb.frames[1].0;
        assert!(t1 > t0);
        while tb.now() < t1 + 100 {
            tb.step();
        }
        assert_eq!(tb.psns(), vec![0, 1], "nothing resent before the deadline");
        tb.steps(5);
        // Frame 2's resend is granted exactly at its deadline.
        assert_eq!(tb.psns(), vec![0, 1, 1]);
        assert_eq!(tb.frames[2].0, t1 + 100);
        assert_eq!(tb.counter("diag_timeout"), 1);
        assert_eq!(tb.counter("diag_timeout_retransmit_total"), 1);
        assert_eq!(tb.counter("diag_nak_processed"), 0);
        tb.ctrl(ack(0, 2));
        tb.steps(300);
        assert_eq!(tb.psns(), vec![0, 1, 1], "no timeout after the ACK");
    }

    #[test]
    fn a_run_ends_once_everything_is_acked() {
        let mut tb = Tb::new(Params::default());
        for i in 0..3 {
            tb.seg(seg(i, 0, 100));
        }
        tb.steps(10);
        tb.ctrl(ack(0, 3));
        tb.until("three FrameDone", |tb| tb.done.len() == 3);
        // No timer is left for the ACKed frames: the simulation goes quiescent at once instead
        // of waking at each void retry deadline.
        let activations = tb.h.sim().stats().activations;
        assert_eq!(tb.h.run(1_000_000).unwrap(), hwsim_hw::Stop::Quiescent);
        assert!(tb.now() < 100, "ended at {}", tb.now());
        assert!(tb.h.sim().stats().activations <= activations + 2);
    }

    #[test]
    fn done_messages_queue_when_paxi_is_slow() {
        let mut tb = Tb::new(Params::default());
        for i in 0..4 {
            tb.seg(seg(i, 0, 100));
        }
        tb.steps(12);
        // One cumulative ACK completes 4 frames: four FrameDone, one per cycle.
        let at = tb.now();
        tb.ctrl(ack(0, 4));
        tb.steps(10);
        let cycles: Vec<Cycle> = tb.done.iter().map(|(c, _)| *c).collect();
        // The bench pops each at once; the space shows a cycle later: one every 2 cycles.
        assert_eq!(cycles, vec![at + 1, at + 3, at + 5, at + 7]);
        assert_eq!(tb.counter("frames_done"), 4);
    }

    /// What a run leaves behind: every counter, and the frames and FrameDone with their cycles.
    type Outcome = (Vec<(String, u64)>, Vec<(Cycle, DataFrame)>, Vec<(Cycle, FrameDone)>);

    /// A scenario mixing every path, run with event skip on and off.
    fn mixed(skip: bool) -> Outcome {
        let mut tb = Tb::with_skip(
            Params {
                slots: 16,
                initial_credits: 40,
                retry_timeout: 500,
                vc_weights: [2, 1, 3, 1, 256],
                ..Default::default()
            },
            skip,
        );
        for i in 0..12u64 {
            let q = (i % 5) as u16;
            tb.seg(seg(i, q, 700 + (i as u32 * 397) % 3000));
        }
        for t in 0..400u64 {
            match t {
                60 => tb.ctrl(ack(0, 3)),
                70 => tb.ctrl(nak(1, 1)),
                80 => tb.credit(credit(0, 10)),
                90 => tb.credit(credit(1, 12)),
                95 => tb.credit(credit(2, 20)),
                120 => tb.ctrl(ack(2, 2)),
                150 => tb.mac_ready = false,
                180 => tb.mac_ready = true,
                _ => {}
            }
            tb.step();
        }
        tb.steps(1000);
        let counters =
            tb.h.sim()
                .counters_of("dut")
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
        (counters, tb.frames, tb.done)
    }

    #[test]
    fn event_skip_on_and_off_give_the_same_results() {
        let a = mixed(true);
        let b = mixed(false);
        assert!(a.1.len() > 10, "the scenario sends: {:?}", a.0);
        assert!(a.0.iter().any(|(n, v)| n.contains("diag_credit_block") && *v > 0));
        assert!(a.0.iter().any(|(n, v)| n.contains("diag_timeout") && *v > 0));
        assert_eq!(a.0, b.0);
        assert_eq!(a.1, b.1);
        assert_eq!(a.2, b.2);
    }

    #[test]
    fn idle_ticks_change_nothing() {
        let mut tb = Tb::with_skip(
            Params {
                initial_credits: 8,
                ..Default::default()
            },
            false,
        );
        tb.seg(seg(1, 0, 1344));
        tb.seg(seg(2, 0, 1344)); // credit-blocked forever
        tb.steps(20);
        let before: Vec<(String, u64)> =
            tb.h.sim()
                .counters_of("dut")
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
        tb.steps(5000);
        let after: Vec<(String, u64)> =
            tb.h.sim()
                .counters_of("dut")
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
        assert_eq!(before, after);
    }
}
