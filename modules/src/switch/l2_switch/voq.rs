//! The VOQ fabric (`fabric: voq`; seed 003 «VOQ 架构», «iSLIP 调度», «优先级感知调度»): a queue
//! per (level, input, output) in the shared buffer; each cycle the requests to the allocator
//! node (`alloc`: one allocator per level, level by level in the egress's strict-priority and
//! WRR order) and, in the same cycle, its grants: a matched frame crossing whole at the port
//! rate; and when the crossbar next may match.

use std::collections::VecDeque;

use hwsim_hw::{Binder, CounterId, Ctx, Cycle, Out, StreamIn, StreamOut};
use hwsim_ports::{DataFrame, UInt, XbarGrant, XbarOutputs, XbarRequest};

use super::super::allocator::AllocatorKind;
use super::output::{REQ_LEVEL, RSP_LEVEL, WRR_CATCH_UP_BYTES};
use super::port::{Port, Tag};
use super::{Forwarding, L2Switch, Params, LEVELS};
use crate::switch::wrr::Wrr;

/// A frame in a VOQ: (ready cycle, arrival cycle, output, frame, priority).
type Queued = (Cycle, Cycle, u8, DataFrame, u8);

/// The VOQ fabric (`fabric: voq`): the queues in the shared buffer, the allocator, and the
/// inputs' crossbar occupancy.
pub(super) struct Voq {
    pub(super) n: usize,
    /// One queue per input (`allocator: fifo`) instead of one per (input, output).
    pub(super) fifo: bool,
    /// To the allocator node: per input its requests, and the outputs' state (process 0);
    /// from it, per input its grant (process 1).
    pub(super) req_out: Vec<StreamOut<XbarRequest>>,
    pub(super) outputs_out: StreamOut<XbarOutputs>,
    pub(super) grant_in: Vec<StreamIn<XbarGrant>>,
    /// This cycle's outputs where REQ data and RSP both hold frames (the WRR's), from process 0
    /// to process 1.
    pub(super) contended: u64,
    /// Queue (level l, input i, output o) at `(l * n + i) * n + o` (FIFO: `(l * n + i) * n`).
    pub(super) queues: Vec<VecDeque<Queued>>,
    /// Bytes in each queue.
    pub(super) q_bytes: Vec<u64>,
    /// Per (level l, input i) at `l * n + i`: the outputs it holds frames for (a bit per
    /// output; FIFO: the output of its head frame).
    pub(super) nonempty: Vec<u64>,
    /// Per input: bytes in its queues.
    pub(super) in_bytes: Vec<u64>,
    /// Bytes in the shared buffer (queued and crossing).
    pub(super) total: u64,
    /// Per input: its crossbar transfer ends at this time, in 1/rate.bytes ns (as the
    /// serializer clock counts).
    pub(super) in_busy: Vec<u128>,
    pub(super) in_sig: Vec<Out<UInt<32>>>,
    pub(super) matches: Out<UInt<7>>,
    pub(super) buffer_sig: Out<UInt<32>>,
    pub(super) c_matches: CounterId,
    pub(super) c_buffer_peak: CounterId,
    pub(super) c_voq_peak: CounterId,
    pub(super) c_dt_drops: CounterId,
    /// Frames queued per level (the WRR work is skipped unless levels 1 and 2 both hold some).
    pub(super) level_frames: [u64; LEVELS],
    /// The WRR rule (`switch::wrr`): REQ (level 2) and RSP (level 1) weights, in wire bytes.
    pub(super) wrr: Wrr,
    /// Per output: the WRR balance in weighted bytes, `wrr_rsp` × REQ bytes − `wrr_req` × RSP
    /// bytes sent while both levels held frames for it (reset to 0 when one had none); > 0:
    /// REQ is ahead of its share, so RSP matches first.
    pub(super) wrr_balance: Vec<i64>,
    pub(super) rsp_first_sig: Vec<Out<UInt<1>>>,
    /// The outputs shown as RSP-first on the waves.
    pub(super) rsp_first_shown: u64,
}

impl Voq {
    /// Binds the VOQ fabric's waves and counters (`check` has passed).
    pub(super) fn bind(p: &Params, b: &mut Binder) -> Result<Voq, String> {
        let n = p.ports as usize;
        Ok(Voq {
            n,
            fifo: p.allocator == AllocatorKind::Fifo,
            req_out: (0..n)
                .map(|k| b.stream_out(&format!("alloc_req{k}")))
                .collect::<Result<_, _>>()?,
            outputs_out: b.stream_out("alloc_outputs")?,
            grant_in: (0..n)
                .map(|k| b.stream_in(&format!("alloc_grant{k}")))
                .collect::<Result<_, _>>()?,
            contended: 0,
            queues: (0..LEVELS * n * n).map(|_| VecDeque::new()).collect(),
            q_bytes: vec![0; LEVELS * n * n],
            nonempty: vec![0; LEVELS * n],
            in_bytes: vec![0; n],
            total: 0,
            in_busy: vec![0; n],
            in_sig: (0..n)
                .map(|k| b.output(&format!("in_bytes{k}")))
                .collect::<Result<_, _>>()?,
            matches: b.output("matches")?,
            buffer_sig: b.output("buffer_bytes")?,
            c_matches: b.counter("crossbar_matches"),
            c_buffer_peak: b.counter("buffer_peak_bytes"),
            c_voq_peak: b.counter("voq_peak_bytes"),
            c_dt_drops: b.counter("dt_drops"),
            level_frames: [0; LEVELS],
            wrr: Wrr::new(p.wrr_req, p.wrr_rsp, WRR_CATCH_UP_BYTES),
            wrr_balance: vec![0; n],
            rsp_first_sig: (0..n)
                .map(|k| b.output(&format!("rsp_first{k}")))
                .collect::<Result<_, _>>()?,
            rsp_first_shown: 0,
        })
    }

    pub(super) fn queue_of(&self, l: usize, i: usize, o: usize) -> usize {
        (l * self.n + i) * self.n + if self.fifo { 0 } else { o }
    }

    /// Takes the head frame of the matched VOQ (level `l`, input `i`, output `o`) out of the
    /// queue's, the input's and the level's counts, charged to the WRR. Returns (ready cycle,
    /// arrival cycle, frame, priority).
    fn pop_matched(&mut self, l: usize, i: usize, o: usize, contended: u64) -> (Cycle, Cycle, DataFrame, u8) {
        let q = self.queue_of(l, i, o);
        let (ready, arrived, _, f, prio) = self.queues[q].pop_front().expect("requested");
        let wire = f.wire_bytes() as u64;
        self.level_frames[l] -= 1;
        if l == REQ_LEVEL || l == RSP_LEVEL {
            self.wrr
                .charge(&mut self.wrr_balance[o], l == REQ_LEVEL, wire, contended & 1 << o != 0);
        }
        self.q_bytes[q] -= wire;
        self.in_bytes[i] -= wire;
        self.in_sig[i].update(UInt::wrap(self.in_bytes[i]));
        let ne = &mut self.nonempty[l * self.n + i];
        if self.fifo {
            *ne = self.queues[q].front().map_or(0, |e| 1 << e.2);
        } else if self.queues[q].is_empty() {
            *ne &= !(1 << o);
        }
        (ready, arrived, f, prio)
    }
}

/// The outputs free to start a frame this cycle (serializer free within it, fewer than two
/// frames on the wire), and per level the outputs PFC pauses for it.
fn free_outputs(ports: &[Port], now: Cycle) -> (u64, [u64; LEVELS]) {
    let (mut free_any, mut paused) = (0u64, [0u64; LEVELS]);
    for (o, port) in ports.iter().enumerate() {
        if port.clock.free_within(now) && port.on_wire.len() < 2 {
            free_any |= 1 << o;
        }
        let mut m = port.paused_levels;
        while m != 0 {
            paused[m.trailing_zeros() as usize] |= 1 << o;
            m &= m - 1;
        }
    }
    (free_any, paused)
}

impl L2Switch {
    /// The crossbar's requests (`fabric: voq`, process 0): for each input not crossing that holds
    /// frames, its VOQs' outputs per level, and with them the outputs' state (free to start a
    /// frame, not PFC-paused, RSP's WRR turn), to the allocator node, which matches in this
    /// cycle. Nothing is pushed when no input can ask: the allocators then do not run.
    pub(super) fn crossbar_request(&mut self, now: Cycle) {
        let Some(v) = self.voq.as_mut() else { return };
        let end_of_now = (now as u128 + 1) * self.p.rate.bytes() as u128;
        let (free_any, paused) = free_outputs(&self.ports, now);
        // Egress scheduling (seed 003 «推荐的 PAXI 出口调度»): the allocator's passes follow
        // the levels' strict priority and, at outputs REQ data and RSP both hold frames for,
        // the WRR's turn; the bytes are charged here when the grants come back.
        let (contended, rsp_first) = v.wrr_turns();
        v.show_rsp_first(rsp_first);
        v.contended = contended;
        let mut any = false;
        for i in 0..v.n {
            if v.in_busy[i] > end_of_now {
                continue;
            }
            // Written out rather than `[0, 1, 2, 3].map(…)`, which the compiler sometimes
            // leaves as a call per input per cycle (W4: 225 instructions a cycle).
            let n = v.n;
            let levels = [
                v.nonempty[i],
                v.nonempty[n + i],
                v.nonempty[2 * n + i],
                v.nonempty[3 * n + i],
            ];
            if levels.iter().all(|&m| m & free_any == 0) {
                continue;
            }
            v.req_out[i].push(XbarRequest { levels });
            any = true;
        }
        if any {
            v.outputs_out.push(XbarOutputs {
                free: free_any,
                paused,
                rsp_first,
            });
        }
    }

    /// The crossbar's grants (`fabric: voq`, process 1): each moves its VOQ's head frame, which
    /// crosses at the port rate and leaves when its last byte is out (the crossbar transfer is
    /// the egress serialization: no speedup). A frame matched in the cycle it left the pipeline,
    /// on an egress idle for its whole serialization before, leaves at once (cut-through).
    pub(super) fn crossbar(&mut self, ctx: &mut Ctx<'_>, now: Cycle) -> bool {
        let cut = self.p.forwarding == Forwarding::CutThrough;
        let Some(v) = self.voq.as_mut() else { return false };
        let contended = v.contended;
        let mut made = 0u64;
        // One grant per input and per output: the transfers are independent of their order.
        for i in 0..v.n {
            let Some(g) = v.grant_in[i].pop() else { continue };
            let (l, o) = (g.level as usize, g.out as usize);
            let (ready, arrived, f, prio) = v.pop_matched(l, i, o, contended);
            let wire = f.wire_bytes() as u64;
            let port = &mut self.ports[o];
            let end = if cut && ready == now && port.clock.finish_by(now, wire) {
                ctx.count(self.c_cut, 1);
                ctx.count(port.c_cut, 1);
                now
            } else {
                port.clock.start(now, wire)
            };
            v.in_busy[i] = port.clock.busy_until_exact().0;
            let tag = Tag {
                inp: i as u8,
                level: l as u8,
                prio,
            };
            port.on_wire.push_back((end, arrived, tag, f));
            made += 1;
        }
        ctx.count(v.c_matches, made);
        v.matches.update(UInt::wrap(made));
        made > 0
    }

    /// When the crossbar next may match (`fabric: voq`): the earliest cycle at which an input
    /// holding frames and an output it holds frames for are both free. A pair free now that the
    /// allocator left unmatched tries again next cycle.
    pub(super) fn crossbar_wake(&self, now: Cycle) -> Option<Cycle> {
        let v = self.voq.as_ref()?;
        let bytes = self.p.rate.bytes() as u128;
        // The first cycle within which a clock busy until `t` is free (`free_within`).
        let free_at = |t: u128| (t.div_ceil(bytes) as u64).saturating_sub(1).max(now + 1);
        let mut next = None::<Cycle>;
        for li in 0..LEVELS * v.n {
            let (l, i) = (li / v.n, li % v.n);
            let mut outs = v.nonempty[li];
            if outs == 0 {
                continue;
            }
            let ti = free_at(v.in_busy[i]);
            while outs != 0 {
                let o = outs.trailing_zeros() as usize;
                outs &= outs - 1;
                let port = &self.ports[o];
                if port.paused_levels & 1 << l != 0 || port.on_wire.len() >= 2 {
                    // Woken by the XON, or by the departure (on_wire's end is a wake-up).
                    continue;
                }
                let t = ti.max(free_at(port.clock.busy_until_exact().0));
                next = Some(next.map_or(t, |n: Cycle| n.min(t)));
            }
        }
        next
    }
}
