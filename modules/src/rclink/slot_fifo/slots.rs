//! Slots and PSN of the slot FIFO (seed 000 «Slot 管理», «PSN 管理», «事件粒度»): a segment
//! taken (Empty → WaitGrant, the next PSNs of its flow), a grant (WaitGrant → WaitAck, the retry
//! timer started), a slot group freed with its `FrameDone`; and the segment intake from `seg`
//! shared by the standalone block and `rclink_tx`.

use std::cmp::Reverse;
use std::collections::VecDeque;

use hwsim_hw::{Ctx, Cycle, StreamIn};
use hwsim_ports::{FlitKind, FrameDone, PaxiFlit, Psn, QueueOpKind, Segment};

use super::{Flow, FrameRec, Refusal, SlotCounters, SlotFifo};

impl SlotFifo {
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
        self.queue_op(id, QueueOpKind::Push);
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

    /// The next `k` WaitGrant packets of frame `id` were granted (its VC queue took the same
    /// grant, [`VcQueues::grant`](crate::rclink::vc_queues::VcQueues::grant)): WaitGrant →
    /// WaitAck, and the retry timer of this transmission starts.
    pub fn granted(&mut self, id: u32, k: u8, now: Cycle) {
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
        self.timeouts
            .push(Reverse((now + self.retry_timeout, id, self.grant_seq)));
        self.changed = true;
    }

    /// Frees a frame's slot group (→ Empty) and queues its FrameDone.
    pub(super) fn release(&mut self, id: u32, failed: bool) {
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

    /// The next FrameDone to push, if any.
    pub fn pop_done(&mut self) -> Option<FrameDone> {
        self.done.pop_front()
    }
    /// FrameDone messages waiting.
    pub fn done_waiting(&self) -> usize {
        self.done.len()
    }
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
