//! ACK and Go-Back-N of the slot FIFO (seed 000 «Go-Back-N 重传»: «TX 处理 NAK», «超时重传»;
//! seed 002 L3 QP fatal): cumulative ACK, the NAK's ring-sorted resend, the retry timeout as a
//! NAK, MAX_RETRY making the QP fatal; and the control messages' addressing check.

use std::cmp::Reverse;

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{ChipId, Ctrl, LgId, Psn, QpId, QueueOpKind};

use super::{Rewind, SlotCounters, SlotFifo};

impl SlotFifo {
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
        let mut rewound = None;
        for &id in &self.flows[flow].frames {
            let f = &mut self.frames[id as usize];
            if f.sent > f.acked {
                // A frame still queued (partly sent) keeps its place: it is the flow's last sent
                // frame, so the ones pushed to the head below all come before it.
                if f.queued() {
                    rewound = Some(id);
                } else {
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
        if let Some(id) = rewound {
            self.queue_op(id, QueueOpKind::Rewind);
        }
        // push_front largest first, so the smallest PSN ends up at the head.
        for &(_, id) in scratch.iter().rev() {
            self.queue_op(id, QueueOpKind::Front);
        }
        let scratch_len = scratch.len();
        self.scratch = scratch;
        self.flows[flow].retry += 1;
        if ctx.logs() {
            let fl = &self.flows[flow];
            ctx.log(
                match why {
                    Rewind::Nak => "nak",
                    Rewind::Timeout => "timeout",
                },
                format_args!(
                    "rewind dst={} qp={} from_psn={} frames={} pkts={resent} retry={} (Go-Back-N: resent from the PSN on)",
                    fl.dst,
                    fl.qp.value(),
                    ack_psn.value(),
                    scratch_len,
                    fl.retry
                ),
            );
        }
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
        while let Some(id) = self.flows[flow].frames.pop_front() {
            if self.frames[id as usize].queued() {
                self.queue_op(id, QueueOpKind::Remove);
            }
            self.release(id, true);
            ctx.count(c.frames_failed, 1);
        }
        self.flows[flow].fatal = true;
        ctx.count(c.max_retry_hit, 1);
        ctx.set_counter(c.fatal_qp, self.flows[flow].qp.value() as u64 + 1);
        ctx.set_counter(c.fatal_at, ctx.now() + 1);
        if ctx.logs() {
            let fl = &self.flows[flow];
            ctx.log(
                "fatal",
                format_args!(
                    "dst={} qp={} retry={} (MAX_RETRY reached: the QP's frames fail)",
                    fl.dst,
                    fl.qp.value(),
                    fl.retry
                ),
            );
        }
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
