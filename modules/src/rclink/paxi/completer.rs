//! The PAXI's completer as a node, `paxi.completer` (kind `paxi_completer`; seed 002 «完整传输流程»:
//! AXI write and its B, AXI read and its R, «关键差异»; «Buffer 资源全景»: B packing buffer, R
//! buffers): the AXI slave side of the frames the LGs' RX deliver. A W (or multicast copy)
//! makes its B `slave_latency` later, into the B packing buffer (`paxi.b_pack`, kind
//! `paxi_pack`, whose flits go to the core); an AR flit's entries become reads whose data the
//! slave reads in beats, one read in turn, into the R buffers, each sent as an R frame when
//! full. The R frames go to the PAXI core (`paxi.core`) on the combinational stream `send`,
//! which the core turns into segments (their flit ids, their ITLV link groups, their queues)
//! where the fused block did, after the B flits of the cycle.
//!
//! ```text
//!   slave : comb stream<DataFrame> ==>+-------------------------+==> send : comb stream<Segment>
//!     (W, AR, MUL frames from         | B due                    |     (R frames; the core
//!      paxi.rx_vc, same cycle)        | AR → R buffers, beats    |      assigns id and LG)
//!                                     +-------------------------+==> b_entries : comb stream<Segment>
//!                                                                 |   (to paxi.b_pack)
//!                                                                 +--> r_bufs : u16, r_beat, r_sent : u8
//! ```
//!
//! **Latency.** A frame on `slave` at d is at the slave at d; a B is due at d + `slave_latency`
//! and goes to the B packing buffer then (which flushes on its watermark, a DA/VC change, its
//! timeout or the frame length, in this cycle: [`paxi_pack`](crate::rclink::paxi_pack)); a read
//! starts at d + `slave_latency`, takes `beat_bytes` per beat within `slave_bytes_per_cycle` a
//! cycle, and its R frame goes on `send` in the cycle its buffer fills. The core makes each a
//! segment ready `tx_latency` later.
//!
//! **Counters** (in the PAXI's scope, under the fused block's names): `wdata_bytes_in`,
//! `mul_bytes_in`, `w_in_first_at`, `ar_in_first_at`, `ar_in`, `r_frames_sent`,
//! `r_out_of_order`, `r_bufs_peak` (the B packing buffer counts its `b_*` there too).
//!
//! **Deviations** (the fused block's): the AXI slave is a latency and a bandwidth (no memory
//! model); its figures (`slave_latency` 0, `slave_bytes_per_cycle` 512, `beat_bytes` 64) are
//! hwsim's, the seeds model no slave; the B entry size (8 B) is hwsim's. A multicast B is one B
//! entry with a flag bit (the seed gives no B format for it). `send` carries a segment without
//! its id, burst number and link group (0 here): the core's dispatch assigns them, as it does
//! to its own flits.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{ChipId, DataFrame, FlitKind, PackedEntry, PaxiFlit, QpId, Segment};
use serde::{Deserialize, Serialize};

use super::counters::{set_first, set_max};
use crate::rclink::paxi_pack;

/// The counters of this node (in the PAXI's scope).
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "wdata_bytes_in",
        "bytes",
        "write data bytes (AW+W frames) that reached this chip's AXI slave",
    ),
    CounterDecl::new(
        "w_in_first_at",
        "cycle",
        "cycle + 1 of the first W (or multicast copy) at this AXI side (0 = never)",
    ),
    CounterDecl::new(
        "ar_in_first_at",
        "cycle",
        "cycle + 1 of the first AR flit at this AXI side (0 = never)",
    ),
    CounterDecl::new(
        "r_frames_sent",
        "frames",
        "R frames the completer sent (one per AR, when its R buffer is full)",
    ),
    CounterDecl::new(
        "r_out_of_order",
        "frames",
        "R frames sent while an earlier AR's data was still being read",
    ),
    CounterDecl::new(
        "mul_bytes_in",
        "bytes",
        "multicast copy bytes that reached this chip as a member",
    ),
    CounterDecl::new("ar_in", "entries", "AR entries received by the completer"),
    CounterDecl::new("r_bufs_peak", "entries", "gauge: most R buffers in use at once"),
];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters: the PAXI's that shape its slave side (the PAXI passes its own; the defaults are
/// its).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// A write's B response is sent (false: the RC Link ACK completes a write at its requester).
    pub b_response: bool,
    /// Cycles from a W or AR at the slave to its B due or its read's first beat, 0..=1000000.
    pub slave_latency: u64,
    /// Bytes the slave reads per cycle, over every read, 1..=1048576.
    pub slave_bytes_per_cycle: u32,
    /// Bytes per read beat, 1..=4096.
    pub beat_bytes: u32,
    /// R buffers (reads filled at once), 1..=4096.
    pub r_bufs: u32,
}

impl Params {
    /// The slave side of the PAXI's parameters `p`.
    pub fn of(p: &super::Params) -> Params {
        Params {
            b_response: p.b_response,
            slave_latency: p.slave_latency,
            slave_bytes_per_cycle: p.slave_bytes_per_cycle,
            beat_bytes: p.beat_bytes,
            r_bufs: p.r_bufs,
        }
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::of(&super::Params::default())
    }
}

/// The most messages `send` carries in a cycle: every R buffer full at once, and as many again
/// as frames reach the slave in a cycle (a bound with room to spare).
pub(super) fn send_width(p: &Params, slave_width: u32) -> u32 {
    p.r_bufs.saturating_add(slave_width).saturating_add(1)
}

/// The status outputs (exported by the PAXI under these names).
pub(super) fn status_ports() -> [PortDecl; 3] {
    [
        PortDecl::output::<u16>("r_bufs")
            .level()
            .doc("R buffers being filled (completer)"),
        PortDecl::output::<u8>("r_beat").doc("R OST index of the last read beat (interleaving)"),
        PortDecl::output::<u8>("r_sent").doc("R OST index of the last R frame sent"),
    ]
}

/// Port list: the frames in (`slave`, `slave_width` a cycle at most), what it sends, its status.
pub fn ports_for(p: &Params, slave_width: u32) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::comb_stream_in::<DataFrame>("slave", slave_width)
            .doc("W, AR and multicast frames at this chip's AXI side, in the cycle the bus takes them"),
        PortDecl::comb_stream_out::<Segment>("send")
            .width(send_width(p, slave_width))
            .doc("R frames to send (to the core, which gives each its id and link group)"),
        PortDecl::comb_stream_out::<Segment>("b_entries")
            .width(slave_width)
            .doc("Bs due this cycle (requester, QP, W or MUL OST index) to the B packing buffer"),
    ];
    v.extend(status_ports());
    v
}

/// Port list of the kind (standalone: a slave input as wide as the PAXI's RX side's default).
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let rx = super::rx_vc::Params::default();
    ports_for(p, rx.bus_width())
}

/// The parameters' ranges (those of the B packing buffer are checked as it is bound): the first
/// one out of range is the error.
pub fn check(p: &Params) -> Result<(), String> {
    if p.slave_latency > 1_000_000 {
        return Err(format!(
            "slave_latency = {}: must be in 0..=1000000 ns",
            p.slave_latency
        ));
    }
    if p.r_bufs == 0 || p.r_bufs > 4096 {
        return Err(format!("r_bufs {} out of range 1..=4096", p.r_bufs));
    }
    if p.beat_bytes == 0 || p.beat_bytes > 4096 {
        return Err(format!("beat_bytes {} out of range 1..=4096", p.beat_bytes));
    }
    if p.slave_bytes_per_cycle == 0 || p.slave_bytes_per_cycle > 1 << 20 {
        return Err(format!(
            "slave_bytes_per_cycle {} out of range 1..=1048576",
            p.slave_bytes_per_cycle
        ));
    }
    Ok(())
}

/// A read being answered by the slave.
struct RJob {
    src: ChipId,
    qp: QpId,
    ost: u8,
    bytes: u32,
    filled: u32,
    start: Cycle,
    /// Arrival order of its AR.
    order: u64,
}

/// The completer's counters.
struct Counters {
    wdata_in: CounterId,
    w_in_first: CounterId,
    ar_in_first: CounterId,
    ar_in: CounterId,
    r_sent: CounterId,
    r_ooo: CounterId,
    r_bufs_peak: CounterId,
    mul_in: CounterId,
}

/// The node.
pub struct Completer {
    p: Params,
    slave_in: StreamIn<DataFrame>,
    send: StreamOut<Segment>,
    /// B responses (due, requester, qp, the B entry), due order.
    b_due: VecDeque<(Cycle, ChipId, QpId, PackedEntry)>,
    /// Bs due, to the B packing buffer (`paxi.b_pack`) in the cycle they are due.
    b_out: StreamOut<Segment>,
    /// Reads being filled (at most `r_bufs`, arrival order) and those waiting.
    r_jobs: Vec<RJob>,
    r_wait: VecDeque<RJob>,
    /// Round-robin position among `r_jobs` for the next beat.
    r_rr: usize,
    ar_order: u64,
    c: Counters,
    r_bufs_sig: Out<u16>,
    r_beat_sig: Out<u8>,
    r_sent_sig: Out<u8>,
}

/// Binds the ports, outputs and counters.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    Ok(Box::new(Completer {
        slave_in: b.stream_in("slave")?,
        send: b.stream_out("send")?,
        b_due: VecDeque::new(),
        b_out: b.stream_out("b_entries")?,
        r_jobs: Vec::with_capacity(p.r_bufs.min(256) as usize),
        r_wait: VecDeque::new(),
        r_rr: 0,
        ar_order: 0,
        c: Counters {
            wdata_in: b.counter("wdata_bytes_in"),
            w_in_first: b.counter("w_in_first_at"),
            ar_in_first: b.counter("ar_in_first_at"),
            ar_in: b.counter("ar_in"),
            r_sent: b.counter("r_frames_sent"),
            r_ooo: b.counter("r_out_of_order"),
            r_bufs_peak: b.counter("r_bufs_peak"),
            mul_in: b.counter("mul_bytes_in"),
        },
        r_bufs_sig: b.output("r_bufs")?,
        r_beat_sig: b.output("r_beat")?,
        r_sent_sig: b.output("r_sent")?,
        p: p.clone(),
    }))
}

impl Completer {
    /// A frame at this chip's AXI slave.
    fn deliver(&mut self, ctx: &mut Ctx<'_>, f: DataFrame) {
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
            // The requester's (the core reads them from the RX side's `bus`).
            FlitKind::R | FlitKind::B => ctx.violation(format!(
                "an {:?} frame on the slave input (R and B go to the requester): {f:?}",
                f.paxi.kind
            )),
        }
    }

    /// A B flit or an R frame to `dst` on `qp`, for the core to send.
    fn send(&mut self, dst: ChipId, qp: QpId, bytes: u32, flit: PaxiFlit) {
        self.send.push(Segment {
            dst,
            qp,
            bytes,
            paxi: flit,
            ..Segment::default()
        });
    }

    /// The slave: Bs due now to the B packing buffer; read beats into the R buffers, in turn;
    /// full buffers out as R frames.
    fn slave(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        while self.b_due.front().is_some_and(|&(due, ..)| due <= now) {
            let (_, src, qp, e) = self.b_due.pop_front().expect("front");
            self.b_out.push(paxi_pack::entry_segment(FlitKind::B, src, qp, e));
        }
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
            self.send(j.src, j.qp, j.bytes, PaxiFlit::data(FlitKind::R, j.ost));
            if let Some(n) = self.r_wait.pop_front() {
                self.r_jobs.push(n);
            }
        }
        if let Some(ost) = last_beat {
            self.r_beat_sig.set(ost);
        }
    }

    /// When the slave next has work: a B due, a read starting, or beats to move next cycle.
    fn next(&self, now: Cycle) -> Option<Cycle> {
        let b = self.b_due.front().map(|&(d, ..)| d);
        let r = self.r_jobs.iter().map(|j| j.start.max(now + 1)).min();
        [b, r].into_iter().flatten().min()
    }
}

impl Component for Completer {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        while let Some(f) = self.slave_in.pop() {
            self.deliver(ctx, f);
        }
        self.slave(ctx, now);
        let rb = self.r_jobs.len() as u16;
        if rb != self.r_bufs_sig.get() {
            self.r_bufs_sig.set(rb);
        }
        Wake::earliest(self.next(now).map(|t| t.max(now + 1)))
    }
}
