//! The VC queues of an RC Link TX: the bank arbiter's queue side (seed 000 «VC 仲裁», «流内 PSN
//! 顺序保证», «CBFC 流控»; seed 002 §5.4 gate order) — per VC the frames waiting for a grant,
//! in send order; per round, per VC, the first flow head that its gates pass; the per-flow rule
//! (a blocked head holds back the rest of its flow); the blocked heads counted in the VCs the
//! arbiter looked at.
//!
//! One implementation, used by every form that queues for the arbiter: the TX core
//! (`rclink_tx_core`, frames described by [`QueuedFrame`], fed by the slot FIFO's
//! [`QueueOp`]s), the slot FIFO's standalone block (`slot_fifo`, the testbench grants a VC's
//! first frame) and the standalone bank arbiter's core (`bank_arbiter_core`, one request per
//! entry).
//!
//! ```text
//!                   +-- VcQueues ------------------------------------------+
//!  QueueOp  ──────> | Push (a segment taken), Front (a Go-Back-N resend,  |
//!  (slot FIFO)      |   ahead of the queue), Rewind (a partly sent frame's |
//!                   |   WaitGrant packets grow), Remove (its QP fatal)     |
//!  gate(entry) ───> | find_heads: per VC the first head the gate passes   | ──> eligible VCs (bit v)
//!                   | grant(vc, k): k packets of that head leave           |
//!                   +------------------------------------------------------+
//! ```
//!
//! **Latency**: none of its own — it is state its host reads and changes inside its processes:
//! an op applied at n is seen by the round at n, a grant at n leaves the queue at n.
//!
//! **Deviations**: none beyond its hosts' (the queue keeps a copy of each frame's `sent`,
//! which the slot FIFO's ops and the grants keep equal to the slot FIFO's own).

use std::collections::VecDeque;
use std::num::NonZeroU32;

use hwsim_hw::Cycle;
use hwsim_ports::{split_packets, ChipId, QpId};

use super::bank_arbiter::NUM_VC;

/// What a queue entry must say: its flow (the per-flow rule).
pub trait QueueEntry: Copy {
    /// Index of the entry's flow (dense, from 0).
    fn flow(&self) -> u32;
}

/// A frame of the slot FIFO as its VC queue holds it: which frame, its flow, and how much of it
/// is left to send (packets `sent..npkts` are WaitGrant).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueuedFrame {
    /// The slot FIFO's frame id.
    pub id: u32,
    /// The slot FIFO's flow index.
    pub flow: u32,
    /// The flow's destination chip.
    pub dst: ChipId,
    /// The flow's QP.
    pub qp: QpId,
    /// Payload bytes of the whole frame.
    pub bytes: u32,
    /// Packets of the whole frame.
    pub npkts: u8,
    /// Packets sent (WaitAck or ACKed); `sent..npkts` wait for a grant.
    pub sent: u8,
}

impl QueueEntry for QueuedFrame {
    fn flow(&self) -> u32 {
        self.flow
    }
}

/// A change of the VC queues the slot FIFO makes (in the order it makes them); `vc` is the
/// frame's VC, `id` the slot FIFO's frame id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum QueueOp {
    /// A segment taken: its frame joins the tail of its VC's queue.
    Push { vc: u8, frame: QueuedFrame },
    /// A Go-Back-N resend of a frame no longer queued: it goes to the head of its VC's queue
    /// (the slot FIFO pushes a flow's frames largest PSN first).
    Front { vc: u8, frame: QueuedFrame },
    /// A Go-Back-N of a frame still queued (partly sent): it keeps its place, its WaitGrant
    /// packets start at `sent` again.
    Rewind { vc: u8, id: u32, sent: u8 },
    /// Its QP went fatal: the frame leaves the queue.
    Remove { vc: u8, id: u32 },
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
    pub fn apply(&mut self, op: QueueOp) {
        match op {
            QueueOp::Push { vc, frame } => self.push_back(vc as usize, frame),
            QueueOp::Front { vc, frame } => {
                self.queues[vc as usize].push_front(frame);
                self.queued += 1;
            }
            QueueOp::Rewind { vc, id, sent } => {
                if let Some(f) = self.queues[vc as usize].iter_mut().find(|f| f.id == id) {
                    f.sent = sent;
                }
            }
            QueueOp::Remove { vc, id } => {
                let q = &mut self.queues[vc as usize];
                let before = q.len();
                q.retain(|f| f.id != id);
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
    split_packets(f.bytes, max_payload).skip(f.sent as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: u32, flow: u32, npkts: u8) -> QueuedFrame {
        QueuedFrame {
            id,
            flow,
            dst: 1,
            qp: QpId::new(0).unwrap(),
            bytes: npkts as u32 * 100,
            npkts,
            sent: 0,
        }
    }

    #[test]
    fn a_blocked_head_holds_back_its_flow_not_the_others() {
        let mut q = VcQueues::default();
        for (id, flow) in [(0, 0), (1, 0), (2, 1)] {
            q.apply(QueueOp::Push {
                vc: 0,
                frame: frame(id, flow, 1),
            });
        }
        // Flow 0 is rate-blocked: its second frame is skipped, flow 1's goes.
        let eligible = q.find_heads(|f| if f.flow == 0 { Gate::Rate(50) } else { Gate::Pass });
        assert_eq!(eligible, 1);
        assert_eq!(q.head(0).map(|f| f.id), Some(2));
        let b = q.blocked(1);
        assert_eq!((b.rate, b.credit, b.ready), (1, 0, Some(50)));
        // Not counted in a VC the arbiter did not look at.
        assert_eq!(q.blocked(2), Blocked::default());
    }

    #[test]
    fn ops_keep_the_slot_fifo_order() {
        let mut q = VcQueues::default();
        q.apply(QueueOp::Push {
            vc: 1,
            frame: frame(5, 0, 3),
        });
        q.find_heads(|_| Gate::Pass);
        // Two of three packets go: the frame stays at its place.
        assert_eq!(q.grant(1, 2).sent, 0);
        assert_eq!(q.queue(1)[0].sent, 2);
        // A Go-Back-N: the partly sent frame rewinds, a sent one goes ahead of it.
        q.apply(QueueOp::Rewind { vc: 1, id: 5, sent: 0 });
        q.apply(QueueOp::Front {
            vc: 1,
            frame: frame(4, 0, 1),
        });
        assert_eq!(
            q.queue(1).iter().map(|f| (f.id, f.sent)).collect::<Vec<_>>(),
            [(4, 0), (5, 0)]
        );
        q.apply(QueueOp::Remove { vc: 1, id: 4 });
        assert_eq!(q.queued(), 1);
        q.find_heads(|_| Gate::Pass);
        q.grant(1, 3);
        assert_eq!(q.queued(), 0);
    }
}
