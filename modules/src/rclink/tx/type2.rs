//! The TX's TYPE2 (multicast) path (seed 002 «多播双重流控», «RC Link 资源» TYPE2 column): the
//! TYPE2 queue it takes `Mul` segments into, and the grant of its head frame when every member's
//! TYPE2 CBFC ledger and a multicast MAC TX credit admit it.

use hwsim_hw::{Ctx, Out};
use hwsim_ports::{mcast_group, FlitKind, HeaderTags, Psn, Segment, TYPE2_VC};

use super::RcLinkTx;
use crate::rclink::cbfc::Cbfc;
use crate::rclink::framing::Granted;

/// The TYPE2 (multicast) side of the TX (seed 002 «多播双重流控», «RC Link 资源»): no slot, no
/// PSN, no retransmission; a frame goes when every member's TYPE2 CBFC ledger admits it and a
/// multicast MAC TX credit is free.
pub(super) struct Type2 {
    pub(super) q: std::collections::VecDeque<Segment>,
    pub(super) cap: usize,
    pub(super) cbfc: Cbfc,
    /// Per group, the ledger of each member.
    pub(super) ledgers: Vec<Vec<u32>>,
    pub(super) hdr: HeaderTags,
    /// TYPE2 grants in a row while TYPE1 had frames queued (the MUL VC's weighted turn).
    pub(super) run: u32,
    pub(super) weight: u32,
    pub(super) queue_out: Out<u16>,
}

impl RcLinkTx {
    /// Takes TYPE2 segments at the head of `seg` while the TYPE2 queue has room.
    pub(super) fn accept_type2(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut took = false;
        while let Some(seg) = self.seg_in.peek().map(|s| *s) {
            if seg.paxi.kind != FlitKind::Mul || self.t2.q.len() >= self.t2.cap {
                break;
            }
            self.seg_in.pop();
            let group = mcast_group(seg.dst).map(usize::from);
            let cost = self.t2.cbfc.cost(seg.bytes.min(self.p.max_payload));
            let bad = if seg.lg != self.p.lg {
                Some(format!("for LG {}, this is LG {}", seg.lg, self.p.lg))
            } else if group.is_none_or(|g| g >= self.t2.ledgers.len()) {
                Some(format!(
                    "a TYPE2 segment to {:#06x}, not a group in `groups` ({} groups)",
                    seg.dst,
                    self.t2.ledgers.len()
                ))
            } else if seg.bytes.div_ceil(self.p.max_payload) > u8::MAX as u32 {
                Some(format!("{} bytes: more than 255 packets", seg.bytes))
            } else if cost > self.t2.cbfc.max_packet_cost() {
                Some(format!(
                    "a packet costs {cost} credits, never sendable with type2_credits = {}",
                    self.p.type2_credits
                ))
            } else {
                None
            };
            if let Some(why) = bad {
                ctx.violation(format!("segment {seg:?}: {why}"));
                continue;
            }
            self.t2.q.push_back(seg);
            took = true;
            if self.t2.q.len() as u64 > ctx.counter(self.c.type2_queue_peak) {
                ctx.set_counter(self.c.type2_queue_peak, self.t2.q.len() as u64);
            }
        }
        took
    }

    /// The TYPE2 head's gates: every member's TYPE2 ledger admits all its packets and a
    /// multicast MAC TX credit is free (both, «两者均通过才允许发送»). Returns the cost per member
    /// ledger if it may go; a blocked head is counted. The caller has checked the MAC credit
    /// and the stream's room.
    pub(super) fn type2_gates(&self, ctx: &mut Ctx<'_>) -> Option<u32> {
        let seg = self.t2.q.front()?;
        if self.mul_free == 0 {
            ctx.count(self.c.type2_mac_block, 1);
            return None;
        }
        let mp = self.p.max_payload;
        let npkts = seg.bytes.div_ceil(mp).max(1);
        let payloads = |i: u32| (seg.bytes - i * mp).min(mp);
        let g = mcast_group(seg.dst).expect("checked at intake") as usize;
        let mut cost = 0;
        for &l in &self.t2.ledgers[g] {
            let (k, c) = self.t2.cbfc.run(l as usize, (0..npkts).map(payloads));
            if k < npkts {
                ctx.count(self.c.type2_credit_block, 1);
                return None;
            }
            cost = c;
        }
        Some(cost)
    }

    /// The grant of the TYPE2 head, whose gates passed this cycle with `cost` per member ledger.
    pub(super) fn grant_type2(&mut self, ctx: &mut Ctx<'_>, now: u64, cost: u32) {
        let seg = self.t2.q.front().copied().expect("gates passed");
        let npkts = seg.bytes.div_ceil(self.p.max_payload).max(1);
        self.t2.q.pop_front();
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
        let frame = self.slots.framer().frame(&granted, now);
        ctx.count(self.c.frames_sent, 1);
        ctx.count(self.c.pkts_sent, npkts as u64);
        ctx.count(self.c.payload_bytes_sent, seg.bytes as u64);
        ctx.count(self.c.wire_bytes_sent, frame.wire_bytes() as u64);
        ctx.count(self.c.type2_frames, 1);
        ctx.count(self.c.type2_bytes, seg.bytes as u64);
        self.frame_out.push(frame);
    }
}
