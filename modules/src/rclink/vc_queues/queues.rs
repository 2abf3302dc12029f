//! The VC queues' state and rules (no ports): per VC the frames waiting for a grant, in send
//! order; per round, per VC, the first flow head that its gates pass; the per-flow rule (a
//! blocked head holds back the rest of its flow); the blocked heads counted in the VCs the
//! arbiter looked at. One implementation for every form that queues for the arbiter: the
//! `vc_queues` node (frames described by [`QueuedFrame`], kept by the slot FIFO's
//! [`QueueOp`]s), the slot FIFO's standalone block and the standalone bank arbiter's core (one
//! request per entry).

use std::collections::VecDeque;
use std::num::NonZeroU32;

use hwsim_hw::Cycle;
use hwsim_ports::{split_packets, Psn, QueueOp, QueueOpKind, Segment, UInt};

use crate::rclink::bank_arbiter::NUM_VC;

/// What a queue entry must say: its flow (the per-flow rule).
pub trait QueueEntry: Copy {
    /// Index of the entry's flow (dense, from 0).
    fn flow(&self) -> u32;
}

/// A frame of the slot FIFO as its VC queue holds it: which frame, its flow, what the grant
/// frames, and how much of it is left to send (packets `sent..npkts` are WaitGrant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueuedFrame {
    /// The slot FIFO's frame id.
    pub id: u32,
    /// The slot FIFO's flow index.
    pub flow: u32,
    /// The frame as PAXI segmented it (destination, QP, bytes, transaction, PAXI content).
    pub seg: Segment,
    /// PSN of its packet 0.
    pub first_psn: Psn,
    /// Packets of the whole frame.
    pub npkts: u8,
    /// Packets sent (WaitAck or ACKed); `sent..npkts` wait for a grant.
    pub sent: u8,
}

impl QueuedFrame {
    /// The frame an op carries.
    pub fn of(op: &QueueOp) -> QueuedFrame {
        QueuedFrame {
            id: op.id.0 as u32,
            flow: op.flow,
            seg: op.seg,
            first_psn: op.first_psn,
            npkts: op.npkts,
            sent: op.sent,
        }
    }
    /// The op that carries it.
    pub fn op(&self, op: QueueOpKind) -> QueueOp {
        QueueOp {
            op,
            id: UInt::wrap(self.id as u64),
            flow: self.flow,
            seg: self.seg,
            first_psn: self.first_psn,
            npkts: self.npkts,
            sent: self.sent,
        }
    }
    /// Its VC: its QP's bank.
    pub fn vc(&self) -> usize {
        self.seg.qp.vc_bank().index()
    }
}

impl QueueEntry for QueuedFrame {
    fn flow(&self) -> u32 {
        self.flow
    }
}

/// What a flow head's gates say in a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// It may go.
    Pass,
    /// The rate gate holds it until the cycle given.
    Rate(Cycle),
    /// The CBFC per-packet rule holds it.
    Credit,
}

/// What a round found in one VC.
#[derive(Clone, Copy, Debug, Default)]
pub struct VcHead {
    /// Queue position of the first flow head that passes its gates.
    pub pos: Option<u32>,
    /// Flow heads before it (or in the whole queue) blocked by the rate gate.
    pub rate_blocked: u32,
    /// Flow heads before it (or in the whole queue) blocked by CBFC.
    pub credit_blocked: u32,
    /// The earliest ready cycle of those rate-blocked.
    pub ready: Option<Cycle>,
}

/// The blocked heads of the VCs a round's arbiter looked at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Blocked {
    /// Blocked by the rate gate.
    pub rate: u64,
    /// Blocked by CBFC.
    pub credit: u64,
    /// The earliest ready cycle of the rate-blocked ones.
    pub ready: Option<Cycle>,
}

/// The queues, one per VC (banks 0..3, then MUL), and the last round's heads.
pub struct VcQueues<E> {
    queues: [VecDeque<E>; NUM_VC],
    queued: usize,
    /// Per flow, the number of the last round that found its head blocked (the per-flow rule).
    flow_round: Vec<u64>,
    round: u64,
    heads: [VcHead; NUM_VC],
}

impl<E> Default for VcQueues<E> {
    fn default() -> Self {
        VcQueues {
            queues: Default::default(),
            queued: 0,
            flow_round: Vec::new(),
            round: 0,
            heads: Default::default(),
        }
    }
}

impl<E: QueueEntry> VcQueues<E> {
    /// Entries waiting, all VCs.
    pub fn queued(&self) -> usize {
        self.queued
    }
    /// Entries waiting on VC `vc`.
    pub fn depth(&self, vc: usize) -> usize {
        self.queues[vc].len()
    }
    /// VC `vc`'s queue, in send order.
    pub fn queue(&self, vc: usize) -> &VecDeque<E> {
        &self.queues[vc]
    }
    /// Every entry, VC by VC.
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.queues.iter().flatten()
    }
    /// Joins the tail of VC `vc`'s queue.
    pub fn push_back(&mut self, vc: usize, e: E) {
        self.queues[vc].push_back(e);
        self.queued += 1;
    }

    /// One round: per VC, in queue order, the first flow head that `gate` passes; a blocked head
    /// holds back the rest of its flow (a flow is in one VC). Returns the eligible VCs (bit v).
    pub fn find_heads(&mut self, mut gate: impl FnMut(&E) -> Gate) -> u8 {
        self.round += 1;
        let (flow_round, round) = (&mut self.flow_round, self.round);
        let mut eligible = 0u8;
        for (vc, head) in self.heads.iter_mut().enumerate() {
            *head = VcHead::default();
            for (pos, e) in self.queues[vc].iter().enumerate() {
                let f = e.flow() as usize;
                if f >= flow_round.len() {
                    flow_round.resize(f + 1, 0);
                }
                if flow_round[f] == round {
                    continue;
                }
                match gate(e) {
                    Gate::Pass => {
                        head.pos = Some(pos as u32);
                        eligible |= 1 << vc;
                        break;
                    }
                    Gate::Rate(t) => {
                        head.rate_blocked += 1;
                        head.ready = Some(head.ready.map_or(t, |r| r.min(t)));
                    }
                    Gate::Credit => head.credit_blocked += 1,
                }
                flow_round[f] = round;
            }
        }
        eligible
    }

    /// The head the last round found in VC `vc`, if any (`None` also for a VC out of range: an
    /// arbiter standing in as RTL may grant one).
    pub fn head(&self, vc: usize) -> Option<&E> {
        let pos = self.heads.get(vc)?.pos?;
        self.queues[vc].get(pos as usize)
    }

    /// The blocked heads of the VCs in `visited` (bit v), as a round that stops at its grant
    /// counts them.
    pub fn blocked(&self, visited: u8) -> Blocked {
        let mut b = Blocked::default();
        for (vc, h) in self.heads.iter().enumerate() {
            if visited & (1 << vc) == 0 {
                continue;
            }
            b.rate += h.rate_blocked as u64;
            b.credit += h.credit_blocked as u64;
            if let Some(t) = h.ready {
                b.ready = Some(b.ready.map_or(t, |r| r.min(t)));
            }
        }
        b
    }

    /// Takes the head the last round found in VC `vc` off its queue.
    pub fn remove_head(&mut self, vc: usize) -> E {
        let pos = self.heads[vc].pos.expect("the arbiter grants an eligible VC") as usize;
        self.queued -= 1;
        self.queues[vc].remove(pos).expect("found")
    }
}

impl VcQueues<QueuedFrame> {
    /// Applies a change the slot FIFO made.
    pub fn apply(&mut self, op: &QueueOp) {
        let f = QueuedFrame::of(op);
        let vc = f.vc();
        match op.op {
            QueueOpKind::Push => self.push_back(vc, f),
            QueueOpKind::Front => {
                self.queues[vc].push_front(f);
                self.queued += 1;
            }
            QueueOpKind::Rewind => {
                if let Some(q) = self.queues[vc].iter_mut().find(|q| q.id == f.id) {
                    q.sent = f.sent;
                }
            }
            QueueOpKind::Remove => {
                let q = &mut self.queues[vc];
                let before = q.len();
                q.retain(|q| q.id != f.id);
                self.queued -= before - q.len();
            }
        }
    }

    /// Sends `k` WaitGrant packets of the head the last round found in VC `vc`: the frame
    /// leaves the queue when none is left. Returns the frame as it was before the grant.
    pub fn grant(&mut self, vc: usize, k: u8) -> QueuedFrame {
        let pos = self.heads[vc].pos.expect("the arbiter grants an eligible VC") as usize;
        let f = &mut self.queues[vc][pos];
        let before = *f;
        debug_assert!(k > 0 && f.sent + k <= f.npkts);
        f.sent += k;
        if f.sent == f.npkts {
            self.queues[vc].remove(pos);
            self.queued -= 1;
        }
        before
    }
}

/// Payloads of a frame's WaitGrant packets, in order (packets of `max_payload`, the last the
/// rest).
pub fn unsent_payloads(f: &QueuedFrame, max_payload: NonZeroU32) -> impl Iterator<Item = u32> {
    split_packets(f.seg.bytes, max_payload).skip(f.sent as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_ports::QpId;

    fn frame(id: u32, flow: u32, npkts: u8) -> QueuedFrame {
        QueuedFrame {
            id,
            flow,
            seg: Segment {
                dst: 1,
                qp: QpId::new(1).unwrap(),
                bytes: npkts as u32 * 100,
                ..Segment::default()
            },
            first_psn: Psn::ZERO,
            npkts,
            sent: 0,
        }
    }

    #[test]
    fn a_blocked_head_holds_back_its_flow_not_the_others() {
        let mut q = VcQueues::default();
        for (id, flow) in [(0, 0), (1, 0), (2, 1)] {
            q.apply(&frame(id, flow, 1).op(QueueOpKind::Push));
        }
        // Flow 0 is rate-blocked: its second frame is skipped, flow 1's goes.
        let eligible = q.find_heads(|f| if f.flow == 0 { Gate::Rate(50) } else { Gate::Pass });
        assert_eq!(eligible, 0b10);
        assert_eq!(q.head(1).map(|f| f.id), Some(2));
        let b = q.blocked(0b10);
        assert_eq!((b.rate, b.credit, b.ready), (1, 0, Some(50)));
        // Not counted in a VC the arbiter did not look at.
        assert_eq!(q.blocked(0b1), Blocked::default());
    }

    #[test]
    fn ops_keep_the_slot_fifo_order() {
        let mut q = VcQueues::default();
        q.apply(&frame(5, 0, 3).op(QueueOpKind::Push));
        q.find_heads(|_| Gate::Pass);
        // Two of three packets go: the frame stays at its place.
        assert_eq!(q.grant(1, 2).sent, 0);
        assert_eq!(q.queue(1)[0].sent, 2);
        // A Go-Back-N: the partly sent frame rewinds, a sent one goes ahead of it.
        q.apply(&frame(5, 0, 3).op(QueueOpKind::Rewind));
        q.apply(&frame(4, 0, 1).op(QueueOpKind::Front));
        assert_eq!(
            q.queue(1).iter().map(|f| (f.id, f.sent)).collect::<Vec<_>>(),
            [(4, 0), (5, 0)]
        );
        q.apply(&frame(4, 0, 1).op(QueueOpKind::Remove));
        assert_eq!(q.queued(), 1);
        q.find_heads(|_| Gate::Pass);
        q.grant(1, 3);
        assert_eq!(q.queued(), 0);
    }
}
