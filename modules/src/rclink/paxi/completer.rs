//! The completer, the AXI slave side of the frames the LGs' RX deliver (seed 002 «完整传输流程»:
//! AXI write and its B, AXI read and its R, «关键差异»; «Buffer 资源全景»: B packing buffer, R
//! buffers): a delivered frame at this chip's AXI side; the slave's Bs into the B packing
//! buffer; its read data in beats, one read in turn, into the R buffers, each sent as an R frame
//! when full.

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{ChipId, DataFrame, FlitKind, PackedEntry, PaxiFlit, QpId};

use super::counters::{set_first, set_max};
use super::dispatch::Paxi;

/// A read being answered by the completer's slave.
pub(super) struct RJob {
    src: ChipId,
    qp: QpId,
    ost: u8,
    bytes: u32,
    filled: u32,
    start: Cycle,
    /// Arrival order of its AR.
    order: u64,
}

impl Paxi {
    /// A frame delivered by an LG's RX: this chip's AXI side sees it.
    pub(super) fn deliver(&mut self, ctx: &mut Ctx<'_>, f: DataFrame) {
        let now = ctx.now();
        match f.paxi.kind {
            FlitKind::WData => {
                ctx.count(self.c.wdata_in, f.frame_bytes as u64);
                set_first(ctx, self.c.w_in_first);
                if self.p.b_response {
                    let due = now.saturating_add(self.p.slave_latency);
                    self.b_due
                        .push_back((due, f.src, f.qp, PackedEntry::new(f.paxi.ost, 0)));
                }
            }
            FlitKind::Mul => {
                // A multicast copy: no ACK exists for TYPE2, so its B is always sent (whatever
                // `b_response` says), back to the source on the RSP side of TYPE1.
                ctx.count(self.c.mul_in, f.frame_bytes as u64);
                set_first(ctx, self.c.w_in_first);
                let due = now.saturating_add(self.p.slave_latency);
                self.b_due.push_back((due, f.src, f.qp, PackedEntry::mul_b(f.paxi.ost)));
            }
            FlitKind::Ar => {
                set_first(ctx, self.c.ar_in_first);
                for e in f.paxi.packed() {
                    ctx.count(self.c.ar_in, 1);
                    let job = RJob {
                        src: f.src,
                        qp: f.qp,
                        ost: e.ost(),
                        bytes: e.bytes(),
                        filled: 0,
                        start: now.saturating_add(self.p.slave_latency),
                        order: self.ar_order,
                    };
                    self.ar_order += 1;
                    self.r_wait.push_back(job);
                }
            }
            FlitKind::R => self.r_back(ctx, f),
            FlitKind::B => self.b_back(ctx, f),
        }
    }

    /// The completer's slave: Bs due now into the B buffer; read beats into the R buffers, in
    /// turn; full buffers out as R frames.
    pub(super) fn slave(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        while self.b_due.front().is_some_and(|&(due, ..)| due <= now) {
            let (_, src, qp, e) = self.b_due.pop_front().expect("front");
            self.b_c.entry(ctx);
            self.b_pack.push(now, src, qp, e);
        }
        self.b_pack.poll(now);
        self.take_packed(ctx, now, false);
        while self.r_jobs.len() < self.p.r_bufs as usize {
            let Some(j) = self.r_wait.pop_front() else { break };
            self.r_jobs.push(j);
        }
        set_max(ctx, self.c.r_bufs_peak, self.r_jobs.len() as u64);
        let mut budget = self.p.slave_bytes_per_cycle;
        let mut idle = 0;
        // The last beat's R OST index, shown once per cycle (the wave shows the last beat).
        let mut last_beat = None;
        while budget > 0 && !self.r_jobs.is_empty() && idle < self.r_jobs.len() {
            if self.r_rr >= self.r_jobs.len() {
                self.r_rr = 0;
            }
            let j = &mut self.r_jobs[self.r_rr];
            if j.start > now {
                self.r_rr += 1;
                idle += 1;
                continue;
            }
            idle = 0;
            let beat = self.p.beat_bytes.min(j.bytes - j.filled).min(budget);
            j.filled += beat;
            budget -= beat;
            last_beat = Some(j.ost);
            if j.filled < j.bytes && beat > 0 {
                self.r_rr += 1;
                continue;
            }
            // Full: its R frame leaves now, in the order buffers fill.
            let j = self.r_jobs.remove(self.r_rr);
            if self.r_jobs.first().is_some_and(|e| e.order < j.order)
                || self.r_wait.front().is_some_and(|e| e.order < j.order)
            {
                ctx.count(self.c.r_ooo, 1);
            }
            ctx.count(self.c.r_sent, 1);
            self.r_sent_sig.set(j.ost);
            self.send_flit(now, j.src, j.qp, j.bytes, PaxiFlit::data(FlitKind::R, j.ost));
            if let Some(n) = self.r_wait.pop_front() {
                self.r_jobs.push(n);
            }
        }
        if let Some(ost) = last_beat {
            self.r_beat_sig.set(ost);
        }
    }

    /// When the slave next has work: a B due, a read starting, or beats to move next cycle.
    pub(super) fn slave_next(&self, now: Cycle) -> Option<Cycle> {
        let b = self.b_due.front().map(|&(d, ..)| d);
        let r = self.r_jobs.iter().map(|j| j.start.max(now + 1)).min();
        [b, r, self.b_pack.deadline()].into_iter().flatten().min()
    }
}
