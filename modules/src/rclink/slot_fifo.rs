//! Slot FIFO of one RC Link TX (one LG): the slot pool with its three states, PSN assignment,
//! the VC send queues, cumulative ACK, Go-Back-N on NAK or retry timeout, and QP fatal.
//!
//! Seed 000 «Slot 管理», «PSN 管理», «事件粒度» (frame-level slot group, packet-level retry),
//! «Go-Back-N 重传» («TX 处理 NAK», «超时重传»); seed 002 L3 (QP fatal); SPEC.md «TX side»,
//! «Go-Back-N».
//!
//! ```text
//!                      +------------------------------------------------+
//!  seg   ==(cap 1)==>  | Empty → WaitGrant: slots, PSN per (dst, qp),   | ==> frame : stream<DataFrame>
//!  stream<Segment>     |   queue on VC qp & 3                           | ==> done  : stream<FrameDone>
//!  grant ==(cap 1)==>  | WaitGrant → WaitAck: head frame of VC `grant`  | --> slots_used : u16
//!  stream<u8> (VC)     | WaitAck → Empty: cumulative ACK (whole group)  | --> slots : SlotMap (512-slot bitmaps)
//!  ctrl  ==(cap 8)==>  | WaitAck → WaitGrant: NAK / timeout, sorted     | --> depth_vc0..4 : UInt<11>
//!  stream<Ctrl>        +------------------------------------------------+
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
//! CBFC per-packet rule admits, in `rclink_tx`); a frame with packets left to send stays at its
//! place in the VC queue.
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
//! **Standalone block** (`slot_fifo`): the testbench plays the arbiter: a VC number on `grant`
//! sends every WaitGrant packet of the first frame queued on that VC (nothing if none). Latency:
//! a segment visible at n is accepted at n; a grant visible at n is on `frame` at n+1; an ACK
//! visible at n frees slots at n (a waiting segment may take them in the same cycle) and its
//! `FrameDone` is on `done` at n+1 (one per cycle, more queue inside).
//!
//! **In `rclink_tx`** the core ([`SlotFifo`]) holds the queues the arbiter scans; its state shows
//! as `tx.slot_fifo.slots` (bitmaps) and `tx.slot_fifo.depth_vc*`.
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
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::num::NonZeroU32;

use bitvec::prelude::{BitVec, Lsb0};
use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{
    packet_count, split_packets, ChipId, Ctrl, DataFrame, Ecn, FlitKind, FrameDone, HeaderTags, LgId, Opcode, PaxiFlit,
    Psn, QpId, Segment, SlotMap, UInt, SLOT_MAP_WORDS,
};
use serde::{Deserialize, Serialize};

use super::bank_arbiter::NUM_VC;

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
    vc: usize,
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
    flow_index: HashMap<(ChipId, QpId), u32>,
    /// Frames with WaitGrant packets per VC, in send order.
    queues: [VecDeque<u32>; NUM_VC],
    queued: usize,
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
    /// (this chip, this LG, header bytes per packet) stamped on every frame sent.
    origin: (ChipId, LgId, u16),
    /// The header fields of the frames it sends (format, VLAN PCP, DSCP): [0] for requests
    /// (REQ data, AR), [1] for PAXI responses (R, B), which a switch queues in their own class.
    hdr: [HeaderTags; 2],
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
            flow_index: HashMap::new(),
            queues: Default::default(),
            queued: 0,
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
            origin: (0, 0, 0),
            hdr: [HeaderTags::default(); 2],
        })
    }

    /// Sets the sender fields of the frames it sends: this chip, this LG, `pkt_ovhd`.
    pub fn with_origin(mut self, src: ChipId, lg: LgId, pkt_ovhd: u16) -> SlotFifo {
        self.origin = (src, lg, pkt_ovhd);
        self
    }

    /// Sets the header fields of the frames it sends (format, VLAN PCP, DSCP), responses
    /// included; ECN-capable (ECT(0)) only when the format carries ECN (Standard).
    pub fn with_header(mut self, hdr: HeaderTags) -> SlotFifo {
        self.hdr = [hdr; 2];
        self
    }

    /// Sets the header fields of the PAXI responses (R data, B), whose priority differs from the
    /// requests' (seed 003's mapping: REQ data 2, RSP 1). Call after [`with_header`](Self::with_header).
    pub fn with_rsp_header(mut self, hdr: HeaderTags) -> SlotFifo {
        self.hdr[1] = hdr;
        self
    }

    /// Packets a segment of `bytes` needs.
    pub fn packets_of(&self, bytes: u32) -> u32 {
        packet_count(bytes, self.max_payload)
    }

    /// The VC queues (frame ids), for the arbiter.
    pub fn queues(&self) -> &[VecDeque<u32>; NUM_VC] {
        &self.queues
    }
    /// Frames waiting for a grant.
    pub fn queued(&self) -> usize {
        self.queued
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

    /// Payloads of the WaitGrant packets of frame `id`, in order.
    pub fn unsent_payloads(&self, id: u32) -> impl Iterator<Item = u32> {
        let f = &self.frames[id as usize];
        split_packets(f.bytes, self.max_payload).skip(f.sent as usize)
    }

    /// Tries to take a segment (Empty → WaitGrant).
    pub fn accept(&mut self, ctx: &mut Ctx<'_>, c: &SlotCounters, seg: &Segment) -> Result<(), Refusal> {
        let npkts = self.packets_of(seg.bytes);
        if self.find_flow(seg.dst, seg.qp).is_some_and(|f| self.flows[f].fatal) {
            // The QP is dead: the frame fails at once (PAXI reports the transaction lost).
            self.done.push_back(FrameDone {
                txn: seg.txn,
                frame_seq: seg.frame_seq,
                bytes: seg.bytes,
                failed: true,
            });
            ctx.count(c.frames_failed, 1);
            return Err(Refusal::Failed);
        }
        if npkts > self.slots - self.used {
            return Err(Refusal::Full);
        }
        let flow = match self.find_flow(seg.dst, seg.qp) {
            Some(f) => f,
            None => {
                let f = self.flows.len();
                self.flows.push(Flow {
                    dst: seg.dst,
                    qp: seg.qp,
                    vc: seg.qp.vc_bank().index(),
                    next_psn: Psn::ZERO,
                    retry: 0,
                    frames: VecDeque::new(),
                    fatal: false,
                });
                self.flow_index.insert((seg.dst, seg.qp), f as u32);
                f
            }
        };
        let first_psn = self.flows[flow].next_psn;
        self.flows[flow].next_psn = first_psn.wrapping_add(npkts as u16);
        let id = match self.free_frames.pop() {
            Some(id) => id,
            None => {
                self.frames.push(FrameRec {
                    flow: 0,
                    txn: 0,
                    frame_seq: 0,
                    paxi: PaxiFlit::default(),
                    bytes: 0,
                    npkts: 0,
                    first_psn: Psn::ZERO,
                    acked: 0,
                    sent: 0,
                    grant_seq: 0,
                    slot_ids: Vec::new(),
                });
                self.frames.len() as u32 - 1
            }
        };
        let f = &mut self.frames[id as usize];
        f.flow = flow as u32;
        f.txn = seg.txn;
        f.frame_seq = seg.frame_seq;
        f.paxi = seg.paxi;
        f.bytes = seg.bytes;
        f.npkts = npkts as u8;
        f.first_psn = first_psn;
        f.acked = 0;
        f.sent = 0;
        f.grant_seq = 0;
        f.slot_ids.clear();
        for _ in 0..npkts {
            let s = self.free_slots.pop().expect("free slots counted");
            self.wait_grant.set(s as usize, true);
            f.slot_ids.push(s);
        }
        self.flows[flow].frames.push_back(id);
        let vc = self.flows[flow].vc;
        self.queues[vc].push_back(id);
        self.queued += 1;
        self.used += npkts;
        if self.used > self.peak {
            self.peak = self.used;
            ctx.set_counter(c.slots_peak, self.peak as u64);
        }
        ctx.count(c.segments_accepted, 1);
        self.changed = true;
        Ok(())
    }

    /// Counts a segment that must wait for slots (the caller counts each waiting segment once).
    pub fn count_slot_full(&self, ctx: &mut Ctx<'_>, c: &SlotCounters) {
        ctx.count(c.slot_full, 1);
    }

    /// Sends `k` WaitGrant packets of the frame at `pos` in VC `vc`'s queue (WaitGrant →
    /// WaitAck); the frame leaves the queue when none is left. Returns the frame to transmit.
    pub fn grant(&mut self, vc: usize, pos: usize, k: u8, now: Cycle) -> DataFrame {
        let (src, lg, pkt_ovhd) = self.origin;
        let id = self.queues[vc][pos];
        let (dst, qp) = self.flow_key(self.frames[id as usize].flow as usize);
        self.grant_seq += 1;
        let f = &mut self.frames[id as usize];
        debug_assert!(k > 0 && f.sent + k <= f.npkts);
        let first = f.sent;
        for i in first..first + k {
            let s = f.slot_ids[i as usize] as usize;
            self.wait_grant.set(s, false);
            self.wait_ack.set(s, true);
        }
        f.sent += k;
        f.grant_seq = self.grant_seq;
        let hdr = self.hdr[f.paxi.kind.is_response() as usize];
        let frame = DataFrame {
            src,
            dst,
            lg,
            qp,
            first_psn: f.first_psn.wrapping_add(first as u16),
            first_idx: first,
            npkts: k,
            frame_bytes: f.bytes,
            max_payload: self.max_payload.get() as u16,
            pkt_ovhd,
            txn: f.txn,
            frame_seq: f.frame_seq,
            ecn: if hdr.format.carries_ecn() {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            },
            sent_at: now,
            ts: hwsim_ports::Rh::timestamp_from_ns(now),
            lost: 0,
            hdr,
            paxi: f.paxi,
        };
        if !f.queued() {
            self.queues[vc].remove(pos);
            self.queued -= 1;
        }
        self.timeouts
            .push(Reverse((now + self.retry_timeout, id, self.grant_seq)));
        self.changed = true;
        frame
    }

    /// Frees a frame's slot group (→ Empty) and queues its FrameDone.
    fn release(&mut self, id: u32, failed: bool) {
        let f = &mut self.frames[id as usize];
        for &s in &f.slot_ids {
            self.wait_grant.set(s as usize, false);
            self.wait_ack.set(s as usize, false);
            self.free_slots.push(s);
        }
        self.used -= f.npkts as u32;
        // Empty: no packet waits for an ACK, so its timers are void.
        f.sent = 0;
        f.acked = 0;
        self.done.push_back(FrameDone {
            txn: f.txn,
            frame_seq: f.frame_seq,
            bytes: f.bytes,
            failed,
        });
        self.free_frames.push(id);
        self.changed = true;
    }

    /// A control message for this LG: ACK, NAK or (counted by the caller) CNP. Returns the
    /// packets newly ACKed, or `None` for an ACK that acknowledged nothing.
    pub fn on_ack(
        &mut self,
        ctx: &mut Ctx<'_>,
        c: &SlotCounters,
        src: ChipId,
        qp: QpId,
        ack_psn: Psn,
        nak: bool,
    ) -> Option<u32> {
        let flow = self.find_flow(src, qp)?;
        if nak {
            self.go_back_n(ctx, c, flow, ack_psn, Rewind::Nak);
            Some(0)
        } else {
            match self.cumulative_ack(ctx, c, flow, ack_psn) {
                0 => None,
                n => Some(n),
            }
        }
    }

    /// ACKs every WaitAck packet of the flow before `ack_psn`; frees completed frames. Returns the
    /// number of packets newly ACKed.
    fn cumulative_ack(&mut self, ctx: &mut Ctx<'_>, c: &SlotCounters, flow: usize, ack_psn: Psn) -> u32 {
        let mut acked_total = 0;
        while let Some(&id) = self.flows[flow].frames.front() {
            let f = &mut self.frames[id as usize];
            let d = f.first_unacked_psn().distance(ack_psn);
            // d packets from the first unACKed one are before ack_psn; d ≥ 2048 is a stale ACK.
            if d == 0 || d >= Psn::HALF {
                break;
            }
            // Only WaitAck packets are ACKed (a WaitGrant one waits for its resend).
            let k = (d as u32).min((f.sent - f.acked) as u32);
            f.acked += k as u8;
            acked_total += k;
            if f.acked < f.npkts {
                break;
            }
            // WaitAck → Empty: the whole slot group is freed at once.
            self.flows[flow].frames.pop_front();
            self.release(id, false);
            ctx.count(c.frames_done, 1);
        }
        if acked_total > 0 {
            self.flows[flow].retry = 0;
            self.changed = true;
        }
        acked_total
    }

    /// Go-Back-N («TX 处理 NAK»): cumulative part, then every remaining WaitAck packet of the
    /// flow goes back to the head of its VC queue in ring order from `ack_psn`.
    pub fn go_back_n(&mut self, ctx: &mut Ctx<'_>, c: &SlotCounters, flow: usize, ack_psn: Psn, why: Rewind) {
        if self.flows[flow].retry >= self.max_retry {
            self.qp_fatal(ctx, c, flow);
            return;
        }
        self.cumulative_ack(ctx, c, flow, ack_psn);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut resent = 0u64;
        for &id in &self.flows[flow].frames {
            let f = &mut self.frames[id as usize];
            if f.sent > f.acked {
                // A frame still queued (partly sent) keeps its place: it is the flow's last sent
                // frame, so the ones pushed to the head below all come before it.
                if !f.queued() {
                    scratch.push((ack_psn.distance(f.first_unacked_psn()), id));
                }
                for i in f.acked..f.sent {
                    let s = f.slot_ids[i as usize] as usize;
                    self.wait_ack.set(s, false);
                    self.wait_grant.set(s, true);
                }
                resent += (f.sent - f.acked) as u64;
                f.sent = f.acked;
            }
        }
        // The order of `Psn::sort_from(ack_psn, ..)`: by (psn − ack_psn) mod 4096, stable.
        scratch.sort_by_key(|&(d, _)| d);
        let vc = self.flows[flow].vc;
        // push_front largest first, so the smallest PSN ends up at the head.
        for &(_, id) in scratch.iter().rev() {
            self.queues[vc].push_front(id);
        }
        self.queued += scratch.len();
        self.scratch = scratch;
        self.flows[flow].retry += 1;
        match why {
            Rewind::Nak => {
                ctx.count(c.nak_processed, 1);
                ctx.count(c.nak_retransmit_total, resent);
            }
            Rewind::Timeout => {
                ctx.count(c.timeout, 1);
                ctx.count(c.timeout_retransmit_total, resent);
            }
        }
        self.changed = true;
    }

    /// MAX_RETRY exceeded (seed 000 «TX 处理 NAK», seed 002 L3 QP fatal): every live frame of the
    /// flow is given up — its slots freed, a queued one taken off its VC queue — and reported to
    /// PAXI as failed; later segments of the QP fail at once. The other QPs keep running.
    fn qp_fatal(&mut self, ctx: &mut Ctx<'_>, c: &SlotCounters, flow: usize) {
        let vc = self.flows[flow].vc;
        while let Some(id) = self.flows[flow].frames.pop_front() {
            if self.frames[id as usize].queued() {
                self.queues[vc].retain(|&x| x != id);
                self.queued -= 1;
            }
            self.release(id, true);
            ctx.count(c.frames_failed, 1);
        }
        self.flows[flow].fatal = true;
        ctx.count(c.max_retry_hit, 1);
        ctx.set_counter(c.fatal_qp, self.flows[flow].qp.value() as u64 + 1);
        ctx.set_counter(c.fatal_at, ctx.now() + 1);
    }

    /// Whether timeout entry (frame id, grant_seq) still stands for a transmission waiting for
    /// its ACK. Once false it stays false: an ACKed frame's record is freed (and a reused record
    /// gets a new grant_seq), a resent one has a new grant_seq.
    fn timer_valid(&self, id: u32, seq: u64) -> bool {
        let f = &self.frames[id as usize];
        f.sent > f.acked && f.grant_seq == seq
    }

    /// Treats every grant not ACKed within `retry_timeout` as a NAK from the smallest WaitAck PSN
    /// of its flow («超时重传»).
    pub fn expire_timeouts(&mut self, ctx: &mut Ctx<'_>, c: &SlotCounters, now: Cycle) {
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
            self.go_back_n(ctx, c, flow, base, Rewind::Timeout);
        }
    }

    /// Drops void entries from the top of the timeout heap and returns the next real deadline,
    /// so that no tick is spent per ACKed frame and a run can end once everything is ACKed.
    /// Staleness depends on state only, so pruning on more ticks (event skip off) gives the same
    /// heap top.
    pub fn next_deadline(&mut self) -> Option<Cycle> {
        while let Some(&Reverse((t, id, seq))) = self.timeouts.peek() {
            if self.timer_valid(id, seq) {
                return Some(t);
            }
            self.timeouts.pop();
        }
        None
    }

    /// The next FrameDone to push, if any.
    pub fn pop_done(&mut self) -> Option<FrameDone> {
        self.done.pop_front()
    }
    /// FrameDone messages waiting.
    pub fn done_waiting(&self) -> usize {
        self.done.len()
    }

    /// Slots 0..512 as bitmaps.
    pub fn slot_map(&self) -> SlotMap {
        let mut m = SlotMap::default();
        for (dst, src) in m.wait_grant.iter_mut().zip(self.wait_grant.as_raw_slice()) {
            *dst = *src;
        }
        for (dst, src) in m.wait_ack.iter_mut().zip(self.wait_ack.as_raw_slice()) {
            *dst = *src;
        }
        const { assert!(SLOT_MAP_WORDS * 64 >= 512) };
        m
    }

    /// Gauges at the end of a tick.
    pub fn update_gauges(&self, ctx: &mut Ctx<'_>, c: &SlotCounters) {
        ctx.set_counter(c.slots_in_use, self.used as u64);
    }
}

/// The slot FIFO's state on the waves: `{prefix}slots_used`, `{prefix}slots`,
/// `{prefix}depth_vc{v}` are written by [`SlotView::show`]; `slots_used` keeps its historic
/// name on `rclink_tx` (no prefix).
pub struct SlotView {
    used: Out<u16>,
    map: Out<SlotMap>,
    depth: Vec<Out<UInt<11>>>,
}

impl SlotView {
    /// Port declarations.
    pub fn ports(prefix: &str, used_name: &str) -> Vec<PortDecl> {
        let mut v = vec![
            PortDecl::output::<u16>(used_name).doc("slots not Empty, packets"),
            PortDecl::output::<SlotMap>(&format!("{prefix}slots"))
                .doc("slot states 0..511: WaitGrant and WaitAck bitmaps (neither = Empty)"),
        ];
        for vc in 0..NUM_VC {
            v.push(
                PortDecl::output::<UInt<11>>(&format!("{prefix}depth_vc{vc}"))
                    .doc("frames with WaitGrant packets queued on the VC (4 = MUL)"),
            );
        }
        v
    }
    /// Binds the signals.
    pub fn bind(prefix: &str, used_name: &str, b: &Binder) -> Result<SlotView, String> {
        Ok(SlotView {
            used: b.output(used_name)?,
            map: b.output(&format!("{prefix}slots"))?,
            depth: (0..NUM_VC)
                .map(|vc| b.output(&format!("{prefix}depth_vc{vc}")))
                .collect::<Result<_, _>>()?,
        })
    }
    /// Shows the state (call after a change).
    pub fn show(&self, s: &SlotFifo) {
        self.used.update(s.used as u16);
        self.map.update(s.slot_map());
        for (o, q) in self.depth.iter().zip(&s.queues) {
            o.update(UInt::wrap(q.len() as u64));
        }
    }
}

/// Parameters of the standalone block (seed 000 appendix C «TX 参数»).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (`DataFrame.src`).
    pub chip: ChipId,
    /// This link group, 0..=7.
    pub lg: LgId,
    /// Slot pool size TYPE1_OST, in packets, 1..=2047.
    pub slots: u32,
    /// MAX_PAYLOAD, bytes, 1..=65535.
    pub max_payload: u32,
    /// HEADER_OVERHEAD carried in `DataFrame.pkt_ovhd`, bytes, 0..=511.
    pub pkt_ovhd: u32,
    /// MAX_RETRY.
    pub max_retry: u32,
    /// RETRY_TIMEOUT_NS, ≥ 1.
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
            max_retry: 15,
            retry_timeout: 50_000,
        }
    }
}

/// Port list of the standalone block.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::stream_in::<Segment>("seg", 1).doc("segments (frames) from PAXI; left queued while slots are short"),
        PortDecl::stream_in::<u8>("grant", 1).doc("the arbiter's grant: a VC whose first queued frame is sent"),
        PortDecl::stream_in::<Ctrl>("ctrl", 8).doc("ACK / NAK (src = our dst)"),
        PortDecl::stream_out::<DataFrame>("frame").doc("granted frames (or resent tails)"),
        PortDecl::stream_out::<FrameDone>("done").doc("to PAXI: every packet of the frame was ACKed"),
    ];
    v.extend(SlotView::ports("", "slots_used"));
    v
}

/// The standalone `slot_fifo` block.
pub struct SlotFifoBlock {
    p: Params,
    s: SlotFifo,
    c: SlotCounters,
    view: SlotView,
    seg: StreamIn<Segment>,
    grant: StreamIn<u8>,
    ctrl: StreamIn<Ctrl>,
    frame: StreamOut<DataFrame>,
    done: StreamOut<FrameDone>,
    seg_block_counted: bool,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.lg > 7 {
        return Err(format!("lg = {}: must be in 0..=7", p.lg));
    }
    if p.pkt_ovhd > 511 {
        return Err(format!("pkt_ovhd = {}: must be in 0..=511 bytes", p.pkt_ovhd));
    }
    let s = SlotFifo::new(p.slots, p.max_payload, p.max_retry, p.retry_timeout)?.with_origin(
        p.chip,
        p.lg,
        p.pkt_ovhd as u16,
    );
    Ok(Box::new(SlotFifoBlock {
        p: p.clone(),
        s,
        c: SlotCounters::declare(b),
        view: SlotView::bind("", "slots_used", b)?,
        seg: b.stream_in("seg")?,
        grant: b.stream_in("grant")?,
        ctrl: b.stream_in("ctrl")?,
        frame: b.stream_out("frame")?,
        done: b.stream_out("done")?,
        seg_block_counted: false,
    }))
}

/// Takes segments from `seg` while the pool can hold them (shared by the block and `rclink_tx`).
/// `unsendable` names a segment that can never be sent (a protocol violation).
pub fn accept_segments(
    ctx: &mut Ctx<'_>,
    s: &mut SlotFifo,
    c: &SlotCounters,
    seg_in: &StreamIn<Segment>,
    block_counted: &mut bool,
    unsendable: impl Fn(&Segment, u32) -> Option<String>,
) {
    while let Some(seg) = seg_in.peek().map(|s| *s) {
        if let Some(why) = unsendable(&seg, s.packets_of(seg.bytes)) {
            // Dropped: the run stops at the end of this cycle anyway.
            seg_in.pop();
            *block_counted = false;
            ctx.violation(format!("segment {seg:?}: {why}"));
            continue;
        }
        // A TYPE2 (multicast) segment takes no slot: it has no PSN and no Go-Back-N. The
        // caller (`rclink_tx`) takes it into its own TYPE2 queue; it stops the slot FIFO's
        // intake here so segments keep their order.
        if seg.paxi.kind == FlitKind::Mul {
            return;
        }
        match s.accept(ctx, c, &seg) {
            Ok(()) | Err(Refusal::Failed) => {
                seg_in.pop();
                *block_counted = false;
            }
            Err(Refusal::Full) => {
                // Counted once per blocked segment, not per cycle it waits.
                if !*block_counted {
                    *block_counted = true;
                    s.count_slot_full(ctx, c);
                }
                return;
            }
        }
    }
}

/// Checks a control message's addressing; `None` if it is for (chip, lg).
pub fn misrouted(msg: &Ctrl, chip: ChipId, lg: LgId) -> Option<String> {
    (msg.dst != chip || msg.lg != lg).then(|| {
        format!(
            "ctrl for chip {} LG {} arrived at chip {chip} LG {lg}: {msg:?}",
            msg.dst, msg.lg
        )
    })
}

impl Component for SlotFifoBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        while let Some(msg) = self.ctrl.pop() {
            if let Some(why) = misrouted(&msg, self.p.chip, self.p.lg) {
                ctx.violation(why);
                continue;
            }
            match msg.rh.opcode() {
                Opcode::Ack => {
                    self.s
                        .on_ack(ctx, &self.c, msg.src, msg.rh.qp(), msg.rh.psn(), msg.rh.is_nak());
                }
                Opcode::Cnp => {}
                Opcode::Data => ctx.violation(format!("data opcode on the ctrl path: {msg:?}")),
            }
        }
        self.s.expire_timeouts(ctx, &self.c, now);
        let (lg, slots) = (self.p.lg, self.p.slots);
        accept_segments(
            ctx,
            &mut self.s,
            &self.c,
            &self.seg,
            &mut self.seg_block_counted,
            |seg, n| {
                if seg.lg != lg {
                    Some(format!("for LG {}, this is LG {lg}", seg.lg))
                } else if seg.paxi.kind == FlitKind::Mul {
                    Some("a TYPE2 (multicast) segment: the slot FIFO holds TYPE1 only (rclink_tx takes TYPE2)".into())
                } else if n > u8::MAX as u32 || n > slots {
                    Some(format!(
                        "{n} packets never fit (slots = {slots}, at most 255 per frame)"
                    ))
                } else {
                    None
                }
            },
        );
        if let Some(vc) = self.grant.pop() {
            let vc = vc as usize;
            if vc >= NUM_VC {
                ctx.violation(format!("grant for VC {vc}: VCs are 0..=4"));
            } else if let Some(&id) = self.s.queues()[vc].front() {
                let k = self.s.unsent_payloads(id).count() as u8;
                let f = self.s.grant(vc, 0, k, now);
                self.frame.push(f);
            }
        }
        if self.s.done_waiting() > 0 && self.done.can_push() {
            let d = self.s.pop_done().expect("waiting");
            self.done.push(d);
        }
        if self.s.take_changed() {
            self.view.show(&self.s);
        }
        self.s.update_gauges(ctx, &self.c);
        let deadline = self.s.next_deadline();
        if self.s.done_waiting() > 0 && self.done.space() > 1 {
            Wake::NextCycle
        } else {
            Wake::earliest(deadline)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::Rh;

    fn qp(v: u16) -> QpId {
        QpId::new(v).unwrap()
    }
    fn seg(txn: u64, bytes: u32) -> Segment {
        Segment {
            txn,
            frame_seq: 0,
            dst: 1,
            qp: qp(0),
            bytes,
            lg: 0,
            ..Default::default()
        }
    }
    fn ctrl(rh: Rh) -> Ctrl {
        Ctrl {
            src: 1,
            dst: 0,
            lg: 0,
            rh,
            wire_bytes: 50,
            sent_at: 0,
        }
    }

    fn harness() -> Harness {
        let p = Params::default();
        Harness::new("slot_fifo", ports(&p), Box::new(move |b| build(&p, b)), 1, 1).unwrap()
    }

    /// Pushes `v` on `port`, stepping until the stream has room.
    fn push<T: hwsim_hw::Value>(h: &mut Harness, port: &str, v: T, frames: &mut Vec<DataFrame>) {
        while !h.push(port, v.clone()) {
            run(h, 1, frames);
        }
        run(h, 1, frames);
    }

    /// Steps `cycles`, popping and logging the frames (and dropping every done).
    fn run(h: &mut Harness, cycles: u64, frames: &mut Vec<DataFrame>) {
        for _ in 0..cycles {
            h.step().unwrap();
            if let Some(f) = h.pop::<DataFrame>("frame") {
                frames.push(f);
            }
            while h.pop::<FrameDone>("done").is_some() {}
        }
    }

    #[test]
    fn three_states_and_go_back_n_sort() {
        let mut h = harness();
        let mut frames = Vec::new();
        for i in 0..5 {
            push(&mut h, "seg", seg(i, 1000), &mut frames);
        }
        run(&mut h, 2, &mut frames);
        assert_eq!(h.peek::<u16>("slots_used"), 5);
        let m = h.peek::<SlotMap>("slots");
        assert_eq!((m.wait_grant[0].count_ones(), m.wait_ack[0].count_ones()), (5, 0));
        for _ in 0..5 {
            push(&mut h, "grant", 0u8, &mut frames);
        }
        run(&mut h, 2, &mut frames);
        let m = h.peek::<SlotMap>("slots");
        assert_eq!((m.wait_grant[0].count_ones(), m.wait_ack[0].count_ones()), (0, 5));
        // NAK ack_psn = 2: 0, 1 freed; 2, 3, 4 back to WaitGrant at the head, in PSN order.
        push(&mut h, "ctrl", ctrl(Rh::nak(qp(0), Psn::new(2).unwrap())), &mut frames);
        run(&mut h, 2, &mut frames);
        assert_eq!(h.peek::<u16>("slots_used"), 3);
        let m = h.peek::<SlotMap>("slots");
        assert_eq!((m.wait_grant[0].count_ones(), m.wait_ack[0].count_ones()), (3, 0));
        for _ in 0..3 {
            push(&mut h, "grant", 0u8, &mut frames);
        }
        run(&mut h, 2, &mut frames);
        let psns: Vec<u16> = frames.iter().map(|f| f.first_psn.value()).collect();
        assert_eq!(psns, vec![0, 1, 2, 3, 4, 2, 3, 4]);
        assert_eq!(h.sim().counter("dut.diag_nak_retransmit_total"), Some(3));
        push(&mut h, "ctrl", ctrl(Rh::ack(qp(0), Psn::new(5).unwrap())), &mut frames);
        run(&mut h, 3, &mut frames);
        assert_eq!(h.peek::<u16>("slots_used"), 0);
        assert_eq!(h.peek::<SlotMap>("slots"), SlotMap::default());
    }
}
