//! The shared buffer (seed 003 «共享缓冲池与 DT 算法»): a data frame out of the ingress pipeline
//! is admitted by the Dynamic Threshold rule (`fabric: voq`: room in `buffer`, and its VOQ under
//! `dt_alpha` × the free buffer or under its `reserve`; [`dt::admits`](crate::switch::dt::admits),
//! in bytes, the rule the cell switch runs in cells) or by its output queue's size
//! (`output_queued`: `port_buffer`), else tail-dropped; an admitted frame joins its VOQ, or its
//! output queue, or the wire at once when cut-through finds the egress idle.

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{DataFrame, UInt};

use super::port::Tag;
use super::{Forwarding, L2Switch};

impl L2Switch {
    /// A copy of a frame from `tag`'s input enters the switch: its wire bytes are charged to
    /// the input, and in PFC mode to the input's account of the frame's priority if lossless.
    fn charge(&mut self, tag: Tag, wire: u64) {
        self.ingress[tag.inp as usize] += wire;
        if let Some(j) = self.lossless[tag.prio as usize] {
            self.held[tag.inp as usize * self.p.pfc_priorities.len() + j as usize] += wire;
        }
    }

    /// A copy charged by [`Self::charge`] leaves the switch (departed or dropped).
    pub(super) fn release(&mut self, tag: Tag, wire: u64) {
        self.ingress[tag.inp as usize] -= wire;
        if let Some(j) = self.lossless[tag.prio as usize] {
            self.held[tag.inp as usize * self.p.pfc_priorities.len() + j as usize] -= wire;
        }
    }

    /// The ingress node's decisions of this cycle (`fwd*`, combinational): each data frame into
    /// the pipeline of every output it goes to, ready `latency` + `crossbar_latency` ns after
    /// its arrival (data cut-through: `cut_through_latency`), charged to its input's ingress bytes (PFC's
    /// accounting) per copy; each control message and credit return into its output's queue,
    /// ready `latency` ns after.
    pub(super) fn arrivals(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        let cut = self.p.forwarding == Forwarding::CutThrough;
        let ready = now + self.p.latency;
        // Store-and-forward adds the crossbar's traversal (T_crossbar) to the data's pipeline;
        // cut-through's fixed latency is the whole idle path.
        let data_ready = if cut {
            now + self.p.cut_through_latency
        } else {
            ready + self.p.crossbar_latency
        };
        for k in 0..self.ports.len() {
            if let Some(r) = self.ports[k].fwd.pop() {
                let tag = Tag {
                    inp: k as u8,
                    level: r.level,
                    prio: r.prio,
                };
                let mut outs = r.outs;
                while outs != 0 {
                    let o = outs.trailing_zeros() as usize;
                    outs &= outs - 1;
                    self.charge(tag, r.frame.wire_bytes() as u64);
                    self.ports[o].data_pipe.push_back((data_ready, now, tag, r.frame));
                }
                if self.ingress[k] > ctx.counter(self.ports[k].c_ingress_peak) {
                    ctx.set_counter(self.ports[k].c_ingress_peak, self.ingress[k]);
                }
            }
            while let Some(r) = self.ports[k].fwd_ctrl.pop() {
                self.ports[r.out as usize].rsp.push_back((ready, r.msg));
            }
            while let Some(r) = self.ports[k].fwd_cr.pop() {
                self.ports[r.out as usize].cr.push_back((ready, r.msg));
            }
        }
    }

    /// A frame out of the ingress pipeline of output `o` into its queue: tail drop (the output
    /// queue's size, or the DT rule in the shared buffer), ECN RED at enqueue on the output's
    /// utilization. Returns the frame if admitted.
    fn admit(&mut self, ctx: &mut Ctx<'_>, o: usize, tag: Tag, mut f: DataFrame) -> Option<DataFrame> {
        let (inp, l) = (tag.inp, tag.level as usize);
        let wire = f.wire_bytes() as u64;
        let port = &self.ports[o];
        let admitted = match &self.voq {
            None => port.queued_bytes + wire <= self.p.port_buffer,
            Some(v) => {
                // Dynamic Threshold (in bytes): room in the buffer, and the queue under α × free
                // (or under its static reserve).
                let q = v.q_bytes[v.queue_of(l, inp as usize, o)];
                let free = self.p.buffer - v.total;
                crate::switch::dt::admits(q, wire, free, self.p.reserve, self.p.dt_alpha)
            }
        };
        if !admitted {
            self.release(tag, wire);
            ctx.count(self.c_drops, 1);
            ctx.count(self.ports[o].c_drops, 1);
            if let Some(v) = &self.voq {
                ctx.count(v.c_dt_drops, 1);
            }
            if ctx.logs() {
                log_drop(ctx, o, inp, &f, wire);
            }
            return None;
        }
        self.red_mark(ctx, o, &mut f);
        let port = &mut self.ports[o];
        port.queued_bytes += wire;
        if port.queued_bytes > ctx.counter(port.c_peak) {
            ctx.set_counter(port.c_peak, port.queued_bytes);
        }
        if port.queued_bytes > ctx.counter(self.c_peak) {
            ctx.set_counter(self.c_peak, port.queued_bytes);
        }
        Some(f)
    }

    /// The frames out of output `o`'s ingress pipeline this cycle, into their queue.
    pub(super) fn enqueue(&mut self, ctx: &mut Ctx<'_>, o: usize, now: Cycle) {
        let cut = self.p.forwarding == Forwarding::CutThrough;
        while self.ports[o].data_pipe.front().is_some_and(|(t, _, _, _)| *t <= now) {
            let (t, arrived, tag, f) = self.ports[o].data_pipe.pop_front().expect("front");
            let (inp, l) = (tag.inp, tag.level as usize);
            let Some(f) = self.admit(ctx, o, tag, f) else {
                continue;
            };
            let wire = f.wire_bytes() as u64;
            if let Some(v) = self.voq.as_mut() {
                let q = v.queue_of(l, inp as usize, o);
                let i = inp as usize;
                if v.fifo {
                    if v.queues[q].is_empty() {
                        v.nonempty[l * v.n + i] = 1 << o;
                    }
                } else {
                    v.nonempty[l * v.n + i] |= 1 << o;
                }
                v.queues[q].push_back((t, arrived, o as u8, f, tag.prio));
                v.level_frames[l] += 1;
                v.q_bytes[q] += wire;
                v.in_bytes[i] += wire;
                v.in_sig[i].update(UInt::wrap(v.in_bytes[i]));
                v.total += wire;
                if v.q_bytes[q] > ctx.counter(v.c_voq_peak) {
                    ctx.set_counter(v.c_voq_peak, v.q_bytes[q]);
                }
                if v.total > ctx.counter(v.c_buffer_peak) {
                    ctx.set_counter(v.c_buffer_peak, v.total);
                }
                continue;
            }
            let port = &mut self.ports[o];
            // Cut-through: an idle egress (nothing queued, the serializer idle since the
            // frame's first byte could have gone) sends it as it comes, ending now.
            if cut && !tag.held_by(port.paused_levels) && port.queue.is_empty() && port.clock.finish_by(now, wire) {
                ctx.count(self.c_cut, 1);
                ctx.count(port.c_cut, 1);
                port.on_wire.push_back((now, arrived, tag, f));
            } else {
                port.queue.push_back((arrived, tag, f));
            }
        }
    }
}

/// The event log's line for a frame the buffer refused (out of line: off the admission path).
#[cold]
#[inline(never)]
fn log_drop(ctx: &mut Ctx<'_>, o: usize, inp: impl std::fmt::Display, f: &DataFrame, wire: u64) {
    ctx.log(
        "drop",
        format_args!(
            "unit=data port={o} in={inp} src={} dst={} qp={} first_psn={} wire_bytes={wire} (buffer full)",
            f.src,
            f.dst,
            f.qp.value(),
            f.first_psn.value()
        ),
    );
}
