//! Slot FIFO of one RC Link TX (one LG): the slot pool with its three states, PSN assignment,
//! what it does to the VC send queues (the `vc_queues` node keeps them), cumulative ACK,
//! Go-Back-N on NAK or retry timeout, and QP fatal.
//!
//! Seed 000 «Slot 管理», «PSN 管理», «事件粒度» (frame-level slot group, packet-level retry),
//! «Go-Back-N 重传» («TX 处理 NAK», «超时重传»); seed 002 L3 (QP fatal); SPEC.md «TX side»,
//! «Go-Back-N».
//!
//! The node (kind `slot_fifo`, `tx.slot_fifo` in every TX; its ports, `build` and cycle are in
//! `node/`; it takes the TX's parameters, [`tx::Params`](super::tx::Params)) runs this core:
//!
//! ```text
//!                       +------------------------------------------------+
//!  seg    ==(cap 1)==>  | Empty → WaitGrant: slots, PSN per (dst, qp)    | ==> q_ops (comb) : stream<QueueOp>
//!  stream<Segment>      |   push on its VC queue (the VC queues' node)   |       push / front / rewind / remove
//!  ctrl   ==(comb 8)==> | WaitAck → Empty: cumulative ACK (whole group)  | --> q_changes (comb) : u64
//!  stream<TxCtrl>       | WaitAck → WaitGrant: NAK / timeout, sorted:    | ==> done : stream<FrameDone>
//!  q_grant =(comb 1)==> |   front ops, largest PSN first                 | --> slots_used : u16
//!  stream<SlotGrant>    | WaitGrant → WaitAck: the grant's k packets     | --> slots : SlotMap (512-slot bitmaps)
//!                       +------------------------------------------------+
//! ```
//!
//! **Slots.** A segment (one PAXI frame) is accepted only when the pool has a free slot for each
//! of its packets (split by `max_payload`; a 0-byte segment is one packet); otherwise it waits in
//! `seg` and `diag_slot_full` counts it once. Each packet takes a slot (the lowest-numbered free
//! one is not promised: slots are reused last-freed-first) and the next PSN of its (dst, qp) flow.
//! Slot states: Empty → WaitGrant (queued) → WaitAck (sent) → Empty; a NAK or a timeout turns
//! WaitAck back into WaitGrant. A frame's packets hold their slots as one group until every
//! packet is ACKed; an ACKed packet of an unfinished frame stays WaitAck («事件粒度»: the whole
//! group is freed at once) and then a [`FrameDone`] goes to PAXI.
//!
//! **Grants.** A grant sends a run of a frame's WaitGrant packets (all of them, or the ones the
//! CBFC per-packet rule admits, decided by the VC queues); a frame with packets left to send
//! stays at its place in the VC queue.
//!
//! **ACK** (cumulative, per (dst = ctrl.src, qp)): WaitAck packets with a PSN before `ack_psn` are
//! ACKed, oldest frame first. **NAK** («TX 处理 NAK»): refused once the flow's retry count reached
//! `max_retry` — the QP goes fatal: its frames are given up (slots freed, reported failed) and
//! later segments of the QP fail at once; else the cumulative part is applied, the flow's
//! remaining WaitAck packets are ring-sorted by `(psn − ack_psn) mod 4096` and put back at the
//! head of their VC queue smallest PSN first ([9,7,8] → 7,8,9), and the retry count goes up.
//! **Timeout** («超时重传»): a transmission not ACKed `retry_timeout` cycles after its grant is
//! treated as a NAK from the flow's smallest WaitAck PSN.
//!
//! **Latency**: a segment visible at n is accepted at n (its `push` on `q_ops` at n); a grant
//! on `q_grant` at n moves its packets to WaitAck at n; an ACK at n frees slots at n (a waiting
//! segment may take them in the same cycle) and its `FrameDone` is on `done` at n+1 (one per
//! cycle, more queue inside). Module testbenches (`tb/modules/slot_fifo_*.yaml`) drive these
//! ports and play the VC queues.
//!
//! Counters: `diag_slot_full`, `diag_nak_processed`, `diag_max_retry_hit`,
//! `diag_nak_retransmit_total`, `diag_timeout`, `diag_timeout_retransmit_total`,
//! `segments_accepted`, `frames_done`, `frames_failed`, `slots_peak`; gauges `slots_in_use`,
//! `fatal_qp` (QP id + 1 of the last fatal QP) and `fatal_at` (cycle + 1).
//!
//! **Deviations and choices**:
//! - The retry count of a flow is reset by any ACK progress (also the cumulative part of a NAK,
//!   before that NAK adds 1), so it counts NAKs/timeouts in a row without progress.
//! - A cumulative ACK acknowledges WaitAck packets only; it stops at a packet waiting for its
//!   resend (WaitGrant), which is resent and ACKed again.
//! - A frame sent in several grants (the CBFC per-packet rule) has one retry timer, restarted by
//!   each grant: the timeout runs from its latest transmission.
//! - `slots` shows slots 0..511 (the default pool) as two 512-bit vectors; a larger pool's
//!   higher slots are counted in `slots_used` but not drawn.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::num::NonZeroU32;

use bitvec::prelude::{BitVec, Lsb0};
use hwsim_hw::{Binder, CounterDecl, CounterId, Cycle};
use hwsim_ports::{packet_count, ChipId, FrameDone, PaxiFlit, Psn, QpId, QueueOp, QueueOpKind, Segment};

use super::vc_queues::QueuedFrame;

// The slot FIFO's parts, each in its own file; this file keeps the counter table, the state and
// its accessors.
/// ACK, NAK, Go-Back-N, the retry timeout and QP fatal.
mod ack;
/// Slots and PSN: a segment taken, a grant, a slot group freed; the segment intake.
mod slots;
/// The slot bitmaps, the waves and the end-of-tick gauge.
mod view;

/// The node (kind `slot_fifo`): ports, state, cycle.
mod node;

pub use ack::misrouted;
pub use node::{build, ports, SlotFifoNode};
pub use slots::accept_segments;
pub use view::SlotView;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// [`SlotCounters::declare`] registers them, in the standalone block and in `rclink_tx`.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "diag_slot_full",
        "segments",
        "segments that had to wait in `seg` for free slots (once each)",
    ),
    CounterDecl::new(
        "diag_nak_processed",
        "messages",
        "NAKs that triggered a Go-Back-N (not those that made the QP fatal)",
    ),
    CounterDecl::new(
        "diag_max_retry_hit",
        "events",
        "NAKs/timeouts refused at max_retry: the QP went fatal",
    ),
    CounterDecl::new(
        "diag_nak_retransmit_total",
        "packets",
        "WaitAck packets put back to WaitGrant by NAKs (to be resent)",
    ),
    CounterDecl::new("diag_timeout", "events", "retry timeouts that triggered a Go-Back-N"),
    CounterDecl::new(
        "diag_timeout_retransmit_total",
        "packets",
        "WaitAck packets put back to WaitGrant by retry timeouts",
    ),
    CounterDecl::new(
        "segments_accepted",
        "segments",
        "segments given slots and a PSN (Empty → WaitGrant)",
    ),
    CounterDecl::new(
        "frames_done",
        "frames",
        "frames whose every packet was ACKed (slot group freed, FrameDone ok)",
    ),
    CounterDecl::new(
        "frames_failed",
        "frames",
        "frames given up on a fatal QP, or refused at once for one (FrameDone failed)",
    ),
    CounterDecl::new("slots_peak", "slots", "the most slots in use at once"),
    CounterDecl::new(
        "slots_in_use",
        "slots",
        "gauge: slots held now (0 at the end when every frame was ACKed)",
    ),
    CounterDecl::new(
        "fatal_qp",
        "qp",
        "gauge: QP id + 1 of the last QP that went fatal (0 = none)",
    ),
    CounterDecl::new("fatal_at", "cycle", "cycle + 1 when the last QP went fatal (0 = never)"),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Largest slot pool: a flow's packets in flight must span less than half the PSN ring
/// (2048), or a cumulative ACK covering all of them would look stale to `Psn::before`.
pub const MAX_SLOTS: u32 = Psn::HALF as u32 - 1;

/// One accepted frame: a slot group of `npkts` slots.
#[derive(Clone, Debug)]
struct FrameRec {
    flow: u32,
    txn: u64,
    frame_seq: u32,
    /// What PAXI put in the frame (carried to every transmission of it).
    paxi: PaxiFlit,
    /// Payload bytes of the whole frame.
    bytes: u32,
    /// Packets of the whole frame (= slots held).
    npkts: u8,
    /// PSN of packet 0.
    first_psn: Psn,
    /// Packets 0..acked are ACKed, acked..sent WaitAck, sent..npkts WaitGrant.
    acked: u8,
    sent: u8,
    /// Sequence number of its last grant: a timeout entry is valid only for that grant.
    grant_seq: u64,
    /// Slot of each packet (the record is reused, so this keeps its capacity).
    slot_ids: Vec<u16>,
}

impl FrameRec {
    fn first_unacked_psn(&self) -> Psn {
        self.first_psn.wrapping_add(self.acked as u16)
    }
    /// Queued on its VC (has WaitGrant packets).
    fn queued(&self) -> bool {
        self.sent < self.npkts
    }
}

/// Per (dst, qp) state of this LG. Flows are never removed: their PSN counter must persist.
#[derive(Clone, Debug)]
struct Flow {
    dst: ChipId,
    qp: QpId,
    next_psn: Psn,
    /// NAKs/timeouts taken since the last ACK progress.
    retry: u32,
    /// Live frames, oldest (smallest PSN) first.
    frames: VecDeque<u32>,
    fatal: bool,
}

/// What triggered a Go-Back-N.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Rewind {
    /// A NAK from the receiver.
    Nak,
    /// The retry timeout.
    Timeout,
}

/// The counters the slot FIFO keeps (declared by whichever block hosts it).
pub struct SlotCounters {
    slot_full: CounterId,
    nak_processed: CounterId,
    max_retry_hit: CounterId,
    nak_retransmit_total: CounterId,
    timeout: CounterId,
    timeout_retransmit_total: CounterId,
    segments_accepted: CounterId,
    frames_done: CounterId,
    frames_failed: CounterId,
    slots_peak: CounterId,
    slots_in_use: CounterId,
    fatal_qp: CounterId,
    fatal_at: CounterId,
}

impl SlotCounters {
    /// Declares the counters on `b`.
    pub fn declare(b: &mut Binder) -> Self {
        SlotCounters {
            slot_full: b.counter("diag_slot_full"),
            nak_processed: b.counter("diag_nak_processed"),
            max_retry_hit: b.counter("diag_max_retry_hit"),
            nak_retransmit_total: b.counter("diag_nak_retransmit_total"),
            timeout: b.counter("diag_timeout"),
            timeout_retransmit_total: b.counter("diag_timeout_retransmit_total"),
            segments_accepted: b.counter("segments_accepted"),
            frames_done: b.counter("frames_done"),
            frames_failed: b.counter("frames_failed"),
            slots_peak: b.counter("slots_peak"),
            slots_in_use: b.counter("slots_in_use"),
            fatal_qp: b.counter("fatal_qp"),
            fatal_at: b.counter("fatal_at"),
        }
    }
}

/// Why a segment is not accepted now.
pub enum Refusal {
    /// Not enough free slots: it waits.
    Full,
    /// Its QP is fatal: it fails at once (a failed FrameDone is queued).
    Failed,
}

/// The slot FIFO's state and rules (no ports).
pub struct SlotFifo {
    slots: u32,
    max_payload: NonZeroU32,
    max_retry: u32,
    retry_timeout: u64,
    frames: Vec<FrameRec>,
    free_frames: Vec<u32>,
    flows: Vec<Flow>,
    flow_index: hwsim_hw::FastMap<(ChipId, QpId), u32>,
    /// The changes of the VC queues since [`drain_ops`](Self::drain_ops), in order: the queues
    /// themselves are [`VcQueues`](super::vc_queues::VcQueues), which its host keeps.
    ops: Vec<QueueOp>,
    used: u32,
    peak: u32,
    /// Free slot numbers (a stack).
    free_slots: Vec<u16>,
    wait_grant: BitVec<u64, Lsb0>,
    wait_ack: BitVec<u64, Lsb0>,
    /// FrameDone messages not yet pushed.
    done: VecDeque<FrameDone>,
    /// (deadline, frame id, grant_seq) per grant; stale entries are skipped when they expire.
    timeouts: BinaryHeap<Reverse<(Cycle, u32, u64)>>,
    grant_seq: u64,
    /// Reused buffer for the Go-Back-N sort: (ring distance from ack_psn, frame id).
    scratch: Vec<(u16, u32)>,
    /// Something changed that a new arbitration round should see.
    changed: bool,
}

impl SlotFifo {
    /// A pool of `slots` (1..=2047) splitting frames into packets of `max_payload`.
    pub fn new(slots: u32, max_payload: u32, max_retry: u32, retry_timeout: u64) -> Result<SlotFifo, String> {
        if slots == 0 || slots > MAX_SLOTS {
            return Err(format!(
                "slots = {slots}: must be in 1..={MAX_SLOTS} (in-flight PSNs of a flow must stay \
                 within half the 12-bit ring)"
            ));
        }
        if max_payload == 0 || max_payload > u16::MAX as u32 {
            return Err(format!("max_payload = {max_payload}: must be in 1..=65535 bytes"));
        }
        if retry_timeout == 0 {
            return Err("retry_timeout = 0: must be ≥ 1 cycle".into());
        }
        Ok(SlotFifo {
            slots,
            max_payload: NonZeroU32::new(max_payload).expect("checked"),
            max_retry,
            retry_timeout,
            frames: Vec::with_capacity(slots as usize),
            free_frames: Vec::with_capacity(slots as usize),
            flows: Vec::new(),
            flow_index: hwsim_hw::fast_map(),
            ops: Vec::new(),
            used: 0,
            peak: 0,
            free_slots: (0..slots as u16).rev().collect(),
            wait_grant: BitVec::repeat(false, slots as usize),
            wait_ack: BitVec::repeat(false, slots as usize),
            done: VecDeque::new(),
            timeouts: BinaryHeap::new(),
            grant_seq: 0,
            scratch: Vec::new(),
            changed: false,
        })
    }

    /// Packets a segment of `bytes` needs.
    pub fn packets_of(&self, bytes: u32) -> u32 {
        packet_count(bytes, self.max_payload)
    }

    /// The VC queues' changes made since the last call, in order (emptied).
    pub fn drain_ops(&mut self) -> std::vec::Drain<'_, QueueOp> {
        self.ops.drain(..)
    }
    /// A frame as its VC queue holds it.
    fn queued_frame(&self, id: u32) -> QueuedFrame {
        let f = &self.frames[id as usize];
        let fl = &self.flows[f.flow as usize];
        QueuedFrame {
            id,
            flow: f.flow,
            seg: Segment {
                txn: f.txn,
                frame_seq: f.frame_seq,
                dst: fl.dst,
                qp: fl.qp,
                bytes: f.bytes,
                lg: 0,
                paxi: f.paxi,
            },
            first_psn: f.first_psn,
            npkts: f.npkts,
            sent: f.sent,
        }
    }
    /// Records a change of frame `id`'s VC queue (as it is now).
    fn queue_op(&mut self, id: u32, op: QueueOpKind) {
        let op = self.queued_frame(id).op(op);
        self.ops.push(op);
    }
    /// Slots not Empty.
    pub fn used(&self) -> u32 {
        self.used
    }
    /// Whether something changed since [`take_changed`](Self::take_changed).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// The flow index of a frame.
    pub fn flow_of_frame(&self, id: u32) -> usize {
        self.frames[id as usize].flow as usize
    }
    /// (dst, qp) of a flow.
    pub fn flow_key(&self, flow: usize) -> (ChipId, QpId) {
        (self.flows[flow].dst, self.flows[flow].qp)
    }
    /// Number of flows so far (flow indices are 0..this).
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// The flow (dst, qp), if it exists.
    pub fn find_flow(&self, dst: ChipId, qp: QpId) -> Option<usize> {
        self.flow_index.get(&(dst, qp)).map(|&f| f as usize)
    }
}

#[cfg(test)]
mod tests;
