//! The VC queues' side of TYPE2 (multicast; seed 002 «多播双重流控»): the TYPE2 queue's offer
//! (`tx.type2`, [`type2`](crate::rclink::type2): the queue and its two gates) read by the round,
//! and the grant of the offered head — the MUL VC of the bank arbiter, framed here like every
//! frame. The slot FIFO (`tx.slot_fifo`) takes the `Mul` segments from `seg` into the queue.

use hwsim_hw::{Ctx, In, StreamOut};
use hwsim_ports::{HeaderTags, Psn, SlotGrant, Type2Block, Type2Offer, Type2Take, TYPE2_VC};

use super::VcQueuesNode;
use crate::rclink::framing::Granted;

/// The VC queues' TYPE2 side: the ports to the TYPE2 queue, the MUL VC's turn.
pub(super) struct Type2 {
    pub(super) offer_in: In<Type2Offer>,
    pub(super) take: StreamOut<Type2Take>,
    /// The offer as this cycle's round read it (process 0; process 1 grants from it).
    pub(super) offer: Type2Offer,
    /// Frames in the queue as this cycle's round sees them (the offer's count, less this
    /// cycle's grant).
    pub(super) queued: u32,
    /// `offer.returns` as the last round read it: a change is a TYPE2 return.
    pub(super) returns_seen: u8,
    pub(super) hdr: HeaderTags,
    /// TYPE2 grants in a row while TYPE1 had frames queued (the MUL VC's weighted turn).
    pub(super) run: u32,
    pub(super) weight: u32,
}

impl VcQueuesNode {
    /// The TYPE2 queue's word for this cycle's round (process 0): its offer, and whether a
    /// return moved a member's ledger (that runs the round, as a TYPE1 return does).
    pub(super) fn read_type2(&mut self) {
        self.t2.offer = self.t2.offer_in.get();
        self.t2.queued = self.t2.offer.queued as u32;
        if self.t2.offer.returns != self.t2.returns_seen {
            self.t2.returns_seen = self.t2.offer.returns;
            self.arb_pending = true;
        }
    }

    /// The TYPE2 head's gates as the queue offers them: a multicast MAC TX credit, then every
    /// member's ledger (both, «两者均通过才允许发送»). Returns the cost per member ledger if it
    /// may go; a blocked head is counted. The caller has checked the MAC credit and the room.
    pub(super) fn type2_gates(&self, ctx: &mut Ctx<'_>) -> Option<u32> {
        let o = &self.t2.offer;
        if o.queued == 0 {
            return None;
        }
        match o.block {
            Type2Block::Mac => {
                ctx.count(self.c.type2_mac_block, 1);
                None
            }
            Type2Block::Credit => {
                ctx.count(self.c.type2_credit_block, 1);
                None
            }
            Type2Block::None => Some(o.cost),
        }
    }

    /// The grant of the TYPE2 head, whose gates passed this cycle with `cost` per member ledger.
    pub(super) fn grant_type2(&mut self, ctx: &mut Ctx<'_>, now: u64, cost: u32) {
        let seg = self.t2.offer.head;
        let npkts = seg.bytes.div_ceil(self.p.max_payload).max(1);
        // Out of the queue in this cycle; the queue offers the next head next cycle.
        self.t2.take.push(Type2Take {
            txn: seg.txn,
            frame_seq: seg.frame_seq,
        });
        self.t2.queued -= 1;
        // Its place in the queue is free: the slot FIFO's intake counts the queue's room.
        self.grant_out.push(SlotGrant {
            type2: true,
            ..SlotGrant::default()
        });
        if cost > 0 {
            // The controller charges every member's ledger in this cycle.
            self.charge_cbfc(seg.dst, TYPE2_VC, cost);
        }
        self.take_mac_credit(true);
        // TYPE2 has its own rate control (SET_TYPE2_RATE), not DCQCN: never ECN-capable.
        let granted = Granted {
            dst: seg.dst,
            qp: seg.qp,
            first_psn: Psn::ZERO,
            first_idx: 0,
            npkts: npkts as u8,
            frame_bytes: seg.bytes,
            txn: seg.txn,
            frame_seq: seg.frame_seq,
            hdr: self.t2.hdr,
            ecn_capable: false,
            paxi: seg.paxi,
        };
        let frame = self.framer.frame(&granted, now);
        ctx.count(self.c.frames_sent, 1);
        ctx.count(self.c.pkts_sent, npkts as u64);
        ctx.count(self.c.payload_bytes_sent, seg.bytes as u64);
        ctx.count(self.c.wire_bytes_sent, frame.wire_bytes() as u64);
        ctx.count(self.c.type2_frames, 1);
        ctx.count(self.c.type2_bytes, seg.bytes as u64);
        self.frame_out.push(frame);
    }
}
