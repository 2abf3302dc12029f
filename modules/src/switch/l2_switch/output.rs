//! The egress of each output (seed 003 «推荐的 PAXI 出口调度»; seed 000 «ECN RED 概率标记（Switch
//! 侧）»): the WRR turns of the REQ data and RSP levels (`voq`: strict priority and WRR are the
//! order of the crossbar's passes), ECN RED marking at enqueue on the output's utilization, the
//! output queue's serialization at the port rate (`output_queued`), the departures and their
//! counters, control and credits one per cycle, and when the output next has work. (Not named
//! `egress.rs`: `hwsim explain` finds the `switch_egress` block's header by that file stem.)

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{DataFrame, Ecn, UInt};

use super::port::Tag;
use super::voq::Voq;
use super::L2Switch;
use crate::switch::wrr::Wrr;

/// The two levels that share an output by WRR (seed 003 «推荐的 PAXI 出口调度»): REQ data and RSP.
pub(super) const REQ_LEVEL: usize = 2;
pub(super) const RSP_LEVEL: usize = 1;

/// How far one WRR level may get ahead of its share at an output, in bytes per unit of the larger
/// weight (`switch::wrr`): a level that could not be matched for a long while (its inputs busy
/// elsewhere) catches up by a few frames, not by all it missed.
pub(super) const WRR_CATCH_UP_BYTES: i64 = 4 * 8192;

impl Voq {
    /// The outputs for which both WRR levels hold frames (contended), and among them those
    /// where it is RSP's turn to match first. Both 0 unless both levels hold frames somewhere
    /// (the common case of data alone costs two comparisons).
    pub(super) fn wrr_turns(&self) -> (u64, u64) {
        if self.level_frames[REQ_LEVEL] == 0 || self.level_frames[RSP_LEVEL] == 0 {
            return (0, 0);
        }
        let n = self.n;
        let req_for = self.nonempty[REQ_LEVEL * n..(REQ_LEVEL + 1) * n]
            .iter()
            .fold(0, |a, m| a | m);
        let rsp_for = self.nonempty[RSP_LEVEL * n..(RSP_LEVEL + 1) * n]
            .iter()
            .fold(0, |a, m| a | m);
        let contended = req_for & rsp_for;
        let (mut rsp_first, mut outs) = (0u64, contended);
        while outs != 0 {
            let o = outs.trailing_zeros() as usize;
            outs &= outs - 1;
            if Wrr::rsp_first(self.wrr_balance[o]) {
                rsp_first |= 1 << o;
            }
        }
        (contended, rsp_first)
    }

    pub(super) fn show_rsp_first(&mut self, rsp_first: u64) {
        if rsp_first != self.rsp_first_shown {
            let mut changed = rsp_first ^ self.rsp_first_shown;
            while changed != 0 {
                let o = changed.trailing_zeros() as usize;
                changed &= changed - 1;
                self.rsp_first_sig[o].update(UInt::wrap(rsp_first >> o & 1));
            }
            self.rsp_first_shown = rsp_first;
        }
    }
}

impl L2Switch {
    /// ECN RED at enqueue on output `o`: a frame of a format with an ECN field, ECN-capable, is
    /// marked CE with the RED probability of the output's utilization (data bytes held for it /
    /// `port_buffer`).
    pub(super) fn red_mark(&mut self, ctx: &mut Ctx<'_>, o: usize, f: &mut DataFrame) {
        let port = &mut self.ports[o];
        // Only a format with an IP header has an ECN field to mark (Standard).
        if self.p.ecn && f.hdr.format.carries_ecn() && matches!(f.ecn, Ecn::Ect0 | Ecn::Ect1) {
            let util = port.queued_bytes as f64 / self.p.port_buffer as f64;
            if self.red.as_mut().expect("seeded").mark(util) {
                f.ecn = Ecn::Ce;
                ctx.count(self.c_marks, 1);
                ctx.count(port.c_marks, 1);
                if ctx.logs() {
                    log_mark(ctx, o, f, port.queued_bytes);
                }
            }
        }
    }

    /// Records a data frame leaving the switch on output `o`: residence and the counters.
    fn depart(&mut self, ctx: &mut Ctx<'_>, o: usize, now: Cycle, arrived: Cycle, tag: Tag, f: &DataFrame) {
        let wire = f.wire_bytes() as u64;
        self.ports[o].queued_bytes -= wire;
        self.release(tag, wire);
        let port = &mut self.ports[o];
        if let Some(v) = self.voq.as_mut() {
            v.total -= wire;
        }
        // Residence: arrival (last byte in) to departure (last byte out), cycles.
        let res = now - arrived;
        if ctx.counter(self.c_data) == 0 || res < ctx.counter(self.c_res_min) {
            ctx.set_counter(self.c_res_min, res);
        }
        if res > ctx.counter(self.c_res_max) {
            ctx.set_counter(self.c_res_max, res);
        }
        ctx.count(self.c_res_sum, res);
        ctx.count(self.c_data, 1);
        ctx.count(self.c_bytes, f.payload() as u64);
        ctx.count(port.c_frames, 1);
        ctx.count(port.c_bytes, f.payload() as u64);
        port.residences.push(res);
        let l = tag.level as usize;
        ctx.count(self.c_class_frames[l], 1);
        ctx.count(self.c_class_bytes[l], f.payload() as u64);
        if res > ctx.counter(self.c_class_res[l]) {
            ctx.set_counter(self.c_class_res[l], res);
        }
    }

    /// Output `o`'s egress this cycle: the output queue's next frame onto the wire, a frame
    /// whose last byte is out leaves, one control message and one credit return leave; the
    /// waves. Returns when the output next has something to do (`Cycle::MAX`: nothing).
    pub(super) fn egress(&mut self, ctx: &mut Ctx<'_>, o: usize, now: Cycle) -> Cycle {
        let mut next = Cycle::MAX;
        let port = &mut self.ports[o];
        let paused = port.paused_levels;
        // Output-queued: the next frame starts when the link frees (fraction carried). A head
        // frame of a level PFC pauses starts not (one already serializing finishes), and the
        // FIFO waits behind it.
        let startable = |q: &std::collections::VecDeque<(Cycle, Tag, DataFrame)>| {
            q.front().is_some_and(|(_, tag, _)| !tag.held_by(paused))
        };
        while startable(&port.queue) && port.clock.free_within(now) && port.on_wire.len() < 2 {
            let (arrived, tag, f) = port.queue.pop_front().expect("non-empty");
            let end = port.clock.start(now, f.wire_bytes() as u64);
            port.on_wire.push_back((end, arrived, tag, f));
        }
        if port.on_wire.front().is_some_and(|(t, _, _, _)| *t <= now) && port.req_out.can_push() {
            let (_, arrived, tag, f) = port.on_wire.pop_front().expect("front");
            self.depart(ctx, o, now, arrived, tag, &f);
            self.ports[o].req_out.push(f);
        }
        let port = &mut self.ports[o];
        if port.rsp.front().is_some_and(|(t, _)| *t <= now) && port.rsp_out.can_push() {
            let (_, m) = port.rsp.pop_front().expect("front");
            port.rsp_out.push(m);
            ctx.count(self.c_ctrl, 1);
        }
        if port.cr.front().is_some_and(|(t, _)| *t <= now) && port.cr_out.can_push() {
            let (_, m) = port.cr.pop_front().expect("front");
            port.cr_out.push(m);
            ctx.count(self.c_credit, 1);
        }
        port.q_sig.update(UInt::wrap(port.queued_bytes));
        // When this output next has something to do (a full stream wakes us on its pop).
        for t in [
            port.data_pipe.front().map(|x| x.0),
            port.on_wire.front().map(|x| x.0),
            port.rsp.front().map(|x| x.0),
            port.cr.front().map(|x| x.0),
            startable(&port.queue).then(|| port.clock.busy_until_cycle().saturating_sub(1)),
        ]
        .into_iter()
        .flatten()
        {
            next = next.min(t.max(now + 1));
        }
        next
    }
}

/// The event log's line for an ECN mark (out of line: off the enqueue path).
#[cold]
#[inline(never)]
fn log_mark(ctx: &mut Ctx<'_>, o: usize, f: &DataFrame, queued: u64) {
    ctx.log(
        "ecn",
        format_args!(
            "mark port={o} src={} dst={} qp={} first_psn={} queued_bytes={queued} (RED at enqueue)",
            f.src,
            f.dst,
            f.qp.value(),
            f.first_psn.value()
        ),
    );
}
