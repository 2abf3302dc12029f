//! The TX's inputs (seed 000 «Slot 管理», «Go-Back-N 重传», «CBFC 流控», «打包延迟与 MAC Credit»):
//! ACK/NAK/CNP on `ctrl` (with the ACK-VC credit each one owes), CBFC credit returns on
//! `credit`, and segments on `seg` into the slot FIFO or
//! the TYPE2 queue.

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{Ctrl, FlitKind, Opcode, RateCnp, Segment, TxCtrl};

use super::{Params, SlotFifoNode};
use crate::rclink::cbfc::Cbfc;
use crate::rclink::slot_fifo;

/// Why a segment can never be sent, if it cannot.
fn unsendable(p: &Params, cbfc: &Cbfc, seg: &Segment, npkts: u32) -> Option<String> {
    if seg.lg != p.lg {
        return Some(format!("for LG {}, this is LG {}", seg.lg, p.lg));
    }
    if npkts > u8::MAX as u32 || npkts > p.slots {
        return Some(format!(
            "{npkts} packets never fit (slots = {}, at most 255 per frame)",
            p.slots
        ));
    }
    // Per packet: only a packet that alone exceeds the credits can never go (the first packet
    // is the largest of a frame).
    let cost = cbfc.cost(seg.bytes.min(p.max_payload));
    if cost > cbfc.max_packet_cost() {
        return Some(format!(
            "a packet costs {cost} credits, never sendable with initial_credits = {} and uf_limit = {}",
            p.initial_credits, p.uf_limit
        ));
    }
    None
}

impl SlotFifoNode {
    /// ACK/NAK/CNP on `ctrl`, all of them: latencies, the message itself, its ACK-VC credit.
    /// Returns whether it took any (each runs the VC queues' round).
    pub(super) fn take_ctrl(&mut self, ctx: &mut Ctx<'_>, now: Cycle) -> bool {
        let mut took = false;
        while let Some(TxCtrl { ctrl: msg, filtered }) = self.ctrl_in.pop() {
            // Control-path latency from the receiver's push (`sent_at`; 0 = not stamped, e.g.
            // testbench stimulus) to this pop: acceptance 9 bounds it.
            if msg.sent_at != 0 {
                let lat = now.saturating_sub(msg.sent_at);
                if lat > ctx.counter(self.c.ctrl_latency_max) {
                    ctx.set_counter(self.c.ctrl_latency_max, lat);
                }
            }
            // Round trip: the RH timestamp echoes our grant time of the data it answers (32-bit
            // ns, wrapping; 0 = not stamped).
            if msg.rh.timestamp() != 0 && msg.rh.opcode() == Opcode::Ack {
                let rtt = u64::from((now as u32).wrapping_sub(msg.rh.timestamp()));
                if rtt > ctx.counter(self.c.rtt_max) {
                    ctx.set_counter(self.c.rtt_max, rtt);
                }
            }
            self.on_ctrl(ctx, &msg, filtered);
            took = true;
            // Its place in the ACK buffer is free: the credit goes back to its RX.
            if let Some(t) = &self.ctrl_taken {
                t.push(msg);
            }
        }
        took
    }

    /// One message; `filtered`: a CNP that CNP MERGE (the node in front) filtered.
    fn on_ctrl(&mut self, ctx: &mut Ctx<'_>, msg: &Ctrl, filtered: bool) {
        if let Some(why) = slot_fifo::misrouted(msg, self.p.chip, self.p.lg) {
            ctx.violation(why);
            return;
        }
        match msg.rh.opcode() {
            Opcode::Cnp => {
                ctx.count(self.c.cnp_received, 1);
                // A CNP for a flow that never sent here has no rate to cut.
                let flow = self.slots.find_flow(msg.src, msg.rh.qp());
                if let (true, Some(_)) = (self.p.rate_control.on(), flow) {
                    // CNP MERGE decided in front of us (and counted `cnp_passed` / `cnp_filtered`);
                    // a passed CNP goes to the rate gate, which cuts the flow's rate in this
                    // cycle and tells this cycle's round its pacing (`rate_pace`).
                    let passed = !filtered;
                    if passed {
                        if !self.rate_cnp.can_push() {
                            ctx.violation("rclink_tx: more CNPs in one cycle than `rate_cnp` has lanes");
                        } else {
                            self.rate_cnp.push(RateCnp {
                                dst: msg.src,
                                qp: msg.rh.qp(),
                            });
                        }
                    }
                    if ctx.logs() {
                        ctx.log(
                            "cnp",
                            format_args!(
                                "received from={} qp={} {}",
                                msg.src,
                                msg.rh.qp().value(),
                                if passed {
                                    "to the rate gate (tx.dcqcn: cut)"
                                } else {
                                    "merged (CNP MERGE: no cut)"
                                }
                            ),
                        );
                    }
                }
            }
            Opcode::Ack => {
                let nak = msg.rh.is_nak();
                if !nak {
                    ctx.count(self.c.acks_received, 1);
                }
                let r = self
                    .slots
                    .on_ack(ctx, &self.sc, msg.src, msg.rh.qp(), msg.rh.psn(), nak);
                if r.is_none() {
                    // An ACK that acknowledged nothing, or a NAK for a flow that never sent.
                    ctx.count(self.c.acks_ignored, 1);
                }
            }
            Opcode::Data => {
                ctx.violation(format!("data opcode on the ctrl path: {msg:?}"));
            }
        }
    }

    /// Segments in order: TYPE2 ones into the TYPE2 queue, TYPE1 ones into the slot FIFO,
    /// each intake stopping at the other's segment. Returns whether a TYPE2 one went.
    pub(super) fn take_segments(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut t2 = false;
        loop {
            t2 |= self.accept_type2();
            let (p, cbfc) = (&self.p, &self.cbfc);
            slot_fifo::accept_segments(
                ctx,
                &mut self.slots,
                &self.sc,
                &self.seg_in,
                &mut self.seg_block_counted,
                |seg, n| unsendable(p, cbfc, seg, n),
            );
            let more = self
                .seg_in
                .peek()
                .is_some_and(|s| s.paxi.kind == FlitKind::Mul && self.t2.queued < self.t2.cap);
            if !more {
                break;
            }
        }
        t2
    }

    /// Takes TYPE2 segments at the head of `seg` while the TYPE2 queue has room, and pushes
    /// them to it (checked there).
    fn accept_type2(&mut self) -> bool {
        let mut took = false;
        while let Some(seg) = self.seg_in.peek().map(|s| *s) {
            if seg.paxi.kind != FlitKind::Mul || self.t2.queued >= self.t2.cap {
                break;
            }
            self.seg_in.pop();
            // The stream holds the whole queue and the queue takes it all in the cycle.
            self.t2.seg.push(seg);
            self.t2.queued += 1;
            took = true;
        }
        took
    }
}
