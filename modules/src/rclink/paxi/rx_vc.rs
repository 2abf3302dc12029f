//! The PAXI's RX VC buffers and AXI channel buffers as a node, `paxi.rx_vc` (kind `paxi_rx_vc`;
//! seed 002 «PAXI RX 方向» «VC Buffer», «AXI 通道 Buffer»; seed 003 «PFC 缓冲水位»): the frames the
//! LGs' RX deliver wait in REQ, RSP or MUL MEM, move in order into their AXI channel buffer (W,
//! AR, R, B) and go to the bus at `rx_axi_bytes_per_cycle` per channel; the VC buffers'
//! watermarks drive `rx_pause`. The frames the bus takes go on in the same cycle on
//! combinational streams: R and B to the requester (`paxi.core`) on `bus`, W, AR and multicast
//! copies to the completer (`paxi.completer`) on `slave`.
//!
//! ```text
//!   rx{k} : stream<DataFrame> ==>+------------------------------+==> bus : comb stream<DataFrame>
//!     (k = 0..num_lg, from LG    | REQ / RSP / MUL MEM (frames)  |      (R, B to paxi.core)
//!                                |                              |==> slave : comb stream<DataFrame>
//!                                |                              |      (W, AR, MUL to paxi.completer)
//!      k's RX, whole, in PSN     |   → W / AR / R / B channels   |--> rx_req, rx_rsp, rx_mul : u16
//!      order)                    |   (bytes) → the bus           |--> rx_pause : u8 (bit per VC)
//!                                +------------------------------+
//! ```
//!
//! **Buffers.** Each VC buffer holds N + 2 RTT frames (`rx_req_frames` 32, `rx_rsp_frames` 32,
//! `rx_mul_frames` 8, `rx_rtt_frames` 25); at the high watermark N + 1 RTT its bit of `rx_pause`
//! goes up, at the low watermark (`rx_xon_frames`, default 1 RTT: seed 003's table; seed 002
//! names no figure, docs/spec-findings.md finding 13) down. A buffer at capacity takes no more:
//! frames wait in the RX stream (`rx_*_held_back` counts the LG-cycles). Frames move in order
//! into their AXI channel buffer (W: AW+W and multicast copies, AR, R, B; `axi_channel_bytes`
//! each) while it has room (an empty channel takes any frame, so an MPS larger than the channel
//! still passes); each channel hands `rx_axi_bytes_per_cycle` to the bus per cycle on its own
//! handshake («每个通道独立握手»: a W channel held back does not stop B or R), and a frame goes on
//! when its last byte is taken. With `rx_axi_bytes_per_cycle` 0 (the default) every frame goes
//! on as it arrives and the buffers stay empty.
//!
//! **Latency.** 0 through the node: a frame the bus takes in cycle t is at the core or the
//! completer in t; `rx_*` and `rx_pause` show the end of cycle t from t + 1.
//!
//! **Counters** (in the PAXI's scope, under the names they had in the fused block):
//! `rx_{req,rsp,mul}_peak`, `_xoff`, `_paused_cycles`, `_held_back`; `axi_{w,ar,r,b}_peak_bytes`.
//!
//! **Deviations.** None from the seeds beyond the fused block's (finding 13). The bus takes every
//! frame one cycle can hand it: its width is the RX streams' capacity, the VC buffers' and one
//! frame per byte of each channel (frames carry at least one byte); a run past it would be a
//! protocol violation of `bus`, never a frame held silently.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{DataFrame, FlitKind};
use serde::{Deserialize, Serialize};

use super::counters::set_max;

/// The RX VC buffers: name and the flits each holds.
pub(super) const RX_VCS: [(&str, [FlitKind; 2]); 3] = [
    ("req", [FlitKind::WData, FlitKind::Ar]),
    ("rsp", [FlitKind::R, FlitKind::B]),
    ("mul", [FlitKind::Mul, FlitKind::Mul]),
];

/// The AXI channel buffers a delivered frame goes through: W (AW+W bursts, multicast copies),
/// AR, R, B (seed 002 «AXI 通道 Buffer»; AW travels with its W here).
const AXI_CHANS: [&str; 4] = ["w", "ar", "r", "b"];

/// The counters of this node (in the PAXI's scope).
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "rx_*_peak",
        "frames",
        "gauge: most frames held in RX VC buffer * (req, rsp, mul)",
    ),
    CounterDecl::new(
        "rx_*_xoff",
        "events",
        "times RX VC buffer * (req, rsp, mul) reached its high watermark (pause up)",
    ),
    CounterDecl::new(
        "rx_*_paused_cycles",
        "ns",
        "cycles RX VC buffer * (req, rsp, mul) held its pause up, counted at XON",
    ),
    CounterDecl::new(
        "rx_*_held_back",
        "ns",
        "LG-cycles a frame waited in an RX because VC buffer * (req, rsp, mul) was full",
    ),
    CounterDecl::new(
        "axi_*_peak_bytes",
        "bytes",
        "gauge: most bytes held in AXI channel buffer * (w, ar, r, b)",
    ),
];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters: the PAXI's that shape its RX side (the PAXI passes its own; the defaults are its).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Link groups, 1..=8: one `rx{k}` input each.
    pub num_lg: u8,
    /// REQ MEM (W, AR) size N, frames, 1..=4096.
    pub rx_req_frames: u32,
    /// RSP MEM (R, B) size N, frames, 1..=4096.
    pub rx_rsp_frames: u32,
    /// MUL MEM (multicast copies) size N, frames, 1..=4096.
    pub rx_mul_frames: u32,
    /// One RTT of frames, 0..=4096: each buffer holds N + 2 RTT, high watermark N + 1 RTT.
    pub rx_rtt_frames: u32,
    /// The low watermark (XON), frames; default 1 RTT.
    pub rx_xon_frames: Option<u32>,
    /// Bytes per cycle each AXI channel hands to the bus, 0..=1048576 (0: every frame at once).
    pub rx_axi_bytes_per_cycle: u32,
    /// Each AXI channel buffer's size, bytes, 1..=16777216.
    pub axi_channel_bytes: u32,
}

impl Params {
    /// The RX side of the PAXI's parameters `p`.
    pub fn of(p: &super::Params) -> Params {
        Params {
            num_lg: p.num_lg,
            rx_req_frames: p.rx_req_frames,
            rx_rsp_frames: p.rx_rsp_frames,
            rx_mul_frames: p.rx_mul_frames,
            rx_rtt_frames: p.rx_rtt_frames,
            rx_xon_frames: p.rx_xon_frames,
            rx_axi_bytes_per_cycle: p.rx_axi_bytes_per_cycle,
            axi_channel_bytes: p.axi_channel_bytes,
        }
    }

    /// The VC buffers' sizes N (REQ, RSP, MUL).
    fn frames(&self) -> [u32; 3] {
        [self.rx_req_frames, self.rx_rsp_frames, self.rx_mul_frames]
    }

    /// The low and high watermarks of a VC buffer of N = `n` frames: seed 003 «PFC 缓冲水位»
    /// (REQ/RSP/MUL MEM): the low watermark is 1 RTT; seed 002 names a low watermark without a
    /// figure (docs/spec-findings.md finding 13).
    fn watermarks(&self, n: u32) -> (u32, u32) {
        (self.rx_xon_frames.unwrap_or(self.rx_rtt_frames), n + self.rx_rtt_frames)
    }

    /// The most frames one cycle can hand on (on either stream): the RX streams' (`RX_DEPTH` each), every
    /// VC buffer's capacity and one per byte of each AXI channel.
    pub(super) fn bus_width(&self) -> u32 {
        let streams = self.num_lg as u64 * RX_DEPTH as u64;
        let vcs: u64 = self
            .frames()
            .iter()
            .map(|&n| n as u64 + 2 * self.rx_rtt_frames as u64)
            .sum();
        let chans = AXI_CHANS.len() as u64 * (self.axi_channel_bytes as u64 + 1);
        (streams + vcs + chans).min(u32::MAX as u64) as u32
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::of(&super::Params::default())
    }
}

/// Each `rx{k}` stream's capacity, frames.
pub const RX_DEPTH: u32 = 8;

/// The `rx{k}` inputs (exported by the PAXI under these names).
pub(super) fn rx_ports(num_lg: u8) -> Vec<PortDecl> {
    (0..num_lg)
        .map(|k| {
            PortDecl::stream_in::<DataFrame>(&format!("rx{k}"), RX_DEPTH)
                .doc("frames LG k's RX delivered (whole, in PSN order): W, AR, R, B")
                .optional()
        })
        .collect()
}

/// The level and pause outputs (exported by the PAXI under these names).
pub(super) fn status_ports() -> Vec<PortDecl> {
    let mut v: Vec<PortDecl> = RX_VCS
        .iter()
        .map(|(name, _)| {
            PortDecl::output::<u16>(&format!("rx_{name}"))
                .level()
                .doc("frames held in this RX VC buffer")
        })
        .collect();
    v.push(
        PortDecl::output::<u8>("rx_pause")
            .doc("back-pressure per RX VC buffer (bit 0 REQ, 1 RSP, 2 MUL): high watermark on, low off"),
    );
    v
}

/// Port list: the `rx{k}` inputs, the levels and the pause, and the `bus` to the core.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = rx_ports(p.num_lg);
    v.extend(status_ports());
    v.push(
        PortDecl::comb_stream_out::<DataFrame>("bus")
            .width(p.bus_width())
            .doc("R and B frames the AXI side takes, to the requester (the PAXI core) in the same cycle"),
    );
    v.push(
        PortDecl::comb_stream_out::<DataFrame>("slave")
            .width(p.bus_width())
            .doc("W, AR and multicast frames the AXI side takes, to the completer in the same cycle"),
    );
    v
}

/// The range of the parameter that shapes the ports (`num_lg`), checked before they are declared.
pub fn check_ports(p: &Params) -> Result<(), String> {
    if p.num_lg == 0 || p.num_lg > 8 {
        return Err(format!("num_lg {} out of range 1..=8", p.num_lg));
    }
    Ok(())
}

/// The parameters' ranges: the first one out of range is the error.
pub fn check(p: &Params) -> Result<(), String> {
    check_ports(p)?;
    for (i, n) in p.frames().into_iter().enumerate() {
        if n == 0 || n > 4096 {
            return Err(format!("rx_{}_frames {n} out of range 1..=4096", RX_VCS[i].0));
        }
    }
    if p.rx_rtt_frames > 4096 {
        return Err(format!("rx_rtt_frames {} out of range 0..=4096", p.rx_rtt_frames));
    }
    for (i, n) in p.frames().into_iter().enumerate() {
        let (low, high) = p.watermarks(n);
        if low >= high {
            return Err(format!(
                "rx_xon_frames {low} (the low watermark; default 1 RTT = rx_rtt_frames) must be below the {} high watermark {high} (N + 1 RTT)",
                RX_VCS[i].0
            ));
        }
    }
    if p.axi_channel_bytes == 0 || p.axi_channel_bytes > 1 << 24 {
        return Err(format!(
            "axi_channel_bytes {} out of range 1..=16777216",
            p.axi_channel_bytes
        ));
    }
    if p.rx_axi_bytes_per_cycle > 1 << 20 {
        return Err(format!(
            "rx_axi_bytes_per_cycle {} out of range 0..=1048576",
            p.rx_axi_bytes_per_cycle
        ));
    }
    Ok(())
}

fn rx_vc(k: FlitKind) -> usize {
    RX_VCS
        .iter()
        .position(|(_, ks)| ks.contains(&k))
        .expect("every kind has a buffer")
}

fn axi_chan(k: FlitKind) -> usize {
    match k {
        FlitKind::WData | FlitKind::Mul => 0,
        FlitKind::Ar => 1,
        FlitKind::R => 2,
        FlitKind::B => 3,
    }
}

/// One RX VC buffer: frames waiting for their AXI channel buffer.
struct RxVc {
    q: VecDeque<DataFrame>,
    /// Capacity, high and low watermarks, frames.
    cap: u32,
    high: u32,
    low: u32,
    paused: bool,
    paused_since: Cycle,
    level: Out<u16>,
    peak: CounterId,
    xoff: CounterId,
    paused_cycles: CounterId,
    over: CounterId,
}

/// One AXI channel buffer: frames (bytes `held`) waiting for the bus, the head's bytes still to
/// go.
struct AxiChan {
    q: VecDeque<DataFrame>,
    held: u32,
    head_left: u32,
    peak: CounterId,
}

/// The node.
pub struct RxVcNode {
    rx_in: Vec<StreamIn<DataFrame>>,
    /// To the requester (R, B) and to the completer (W, AR, multicast).
    bus: StreamOut<DataFrame>,
    slave: StreamOut<DataFrame>,
    vcs: Vec<RxVc>,
    chans: Vec<AxiChan>,
    rx_pause: Out<u8>,
    /// `rx_axi_bytes_per_cycle` and `axi_channel_bytes`.
    rate: u32,
    chan_bytes: u32,
}

/// Binds the ports, outputs and counters (in the fused block's order: the VC buffers' counters,
/// then the inputs, then the channels').
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    let mut vcs = Vec::new();
    for (i, n) in p.frames().into_iter().enumerate() {
        let name = RX_VCS[i].0;
        let (low, high) = p.watermarks(n);
        vcs.push(RxVc {
            q: VecDeque::new(),
            cap: n + 2 * p.rx_rtt_frames,
            high,
            low,
            paused: false,
            paused_since: 0,
            level: b.output(&format!("rx_{name}"))?,
            peak: b.counter(&format!("rx_{name}_peak")),
            xoff: b.counter(&format!("rx_{name}_xoff")),
            paused_cycles: b.counter(&format!("rx_{name}_paused_cycles")),
            over: b.counter(&format!("rx_{name}_held_back")),
        });
    }
    let mut rx_in = Vec::new();
    for k in 0..p.num_lg {
        rx_in.push(b.stream_in(&format!("rx{k}"))?);
    }
    let chans = AXI_CHANS
        .iter()
        .map(|n| AxiChan {
            q: VecDeque::new(),
            held: 0,
            head_left: 0,
            peak: b.counter(&format!("axi_{n}_peak_bytes")),
        })
        .collect();
    Ok(Box::new(RxVcNode {
        rx_in,
        bus: b.stream_out("bus")?,
        slave: b.stream_out("slave")?,
        vcs,
        chans,
        rx_pause: b.output("rx_pause")?,
        rate: p.rx_axi_bytes_per_cycle,
        chan_bytes: p.axi_channel_bytes,
    }))
}

/// A frame the AXI side took: R and B to the requester (`bus`), the rest to the completer.
fn hand_on(bus: &StreamOut<DataFrame>, slave: &StreamOut<DataFrame>, f: DataFrame) {
    match f.paxi.kind {
        FlitKind::R | FlitKind::B => bus.push(f),
        _ => slave.push(f),
    }
}

impl RxVcNode {
    /// Frames from the LGs' RX into the VC buffers (or, with no AXI rate, straight on).
    fn take_rx(&mut self, ctx: &mut Ctx<'_>) {
        for k in 0..self.rx_in.len() {
            while let Some(vc) = self.rx_in[k].peek().map(|f| rx_vc(f.paxi.kind)) {
                if self.rate == 0 {
                    let f = self.rx_in[k].pop().expect("peeked");
                    hand_on(&self.bus, &self.slave, f);
                    continue;
                }
                let v = &mut self.vcs[vc];
                if v.q.len() as u32 >= v.cap {
                    ctx.count(v.over, 1);
                    break;
                }
                let f = self.rx_in[k].pop().expect("peeked");
                v.q.push_back(f);
                set_max(ctx, v.peak, v.q.len() as u64);
            }
        }
    }

    /// VC buffers into the AXI channel buffers, in order, while the head's channel has room (a
    /// channel holding nothing takes any frame, so an MPS larger than the channel still passes).
    fn fill_chans(&mut self, ctx: &mut Ctx<'_>) {
        for v in self.vcs.iter_mut() {
            while let Some(f) = v.q.front() {
                let ch = &mut self.chans[axi_chan(f.paxi.kind)];
                if ch.held > 0 && ch.held + f.frame_bytes > self.chan_bytes {
                    break;
                }
                let f = v.q.pop_front().expect("front");
                if ch.q.is_empty() {
                    ch.head_left = f.frame_bytes;
                }
                ch.held += f.frame_bytes;
                set_max(ctx, ch.peak, ch.held as u64);
                ch.q.push_back(f);
            }
        }
    }

    /// Each AXI channel hands `rate` bytes a cycle to the bus, on its own handshake: a channel
    /// the bus holds back (a full W) does not stop the others.
    fn drain_chans(&mut self) {
        for ch in self.chans.iter_mut() {
            let mut budget = self.rate;
            while !ch.q.is_empty() {
                let take = ch.head_left.min(budget);
                ch.head_left -= take;
                budget -= take;
                if ch.head_left > 0 {
                    break;
                }
                let f = ch.q.pop_front().expect("non-empty");
                ch.held -= f.frame_bytes;
                ch.head_left = ch.q.front().map_or(0, |n| n.frame_bytes);
                hand_on(&self.bus, &self.slave, f);
                if budget == 0 {
                    break;
                }
            }
        }
    }

    /// The watermarks: `rx_pause` and the levels.
    fn show(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        let mut pause = 0u8;
        for (i, v) in self.vcs.iter_mut().enumerate() {
            let n = v.q.len() as u32;
            if !v.paused && n >= v.high {
                v.paused = true;
                v.paused_since = now;
                ctx.count(v.xoff, 1);
            } else if v.paused && n <= v.low {
                v.paused = false;
                ctx.count(v.paused_cycles, now - v.paused_since);
            }
            pause |= (v.paused as u8) << i;
            let lvl = n.min(u16::MAX as u32) as u16;
            if lvl != v.level.get() {
                v.level.set(lvl);
            }
        }
        if pause != self.rx_pause.get() {
            self.rx_pause.set(pause);
        }
    }
}

impl Component for RxVcNode {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        self.take_rx(ctx);
        if self.rate == 0 {
            return Wake::OnInput;
        }
        self.fill_chans(ctx);
        self.drain_chans();
        self.show(ctx, now);
        if self.vcs.iter().any(|v| !v.q.is_empty()) || self.chans.iter().any(|c| !c.q.is_empty()) {
            // The AXI channels drain every cycle while they hold frames; a full buffer that
            // left frames in an RX stream takes them as it drains.
            Wake::NextCycle
        } else {
            Wake::OnInput
        }
    }
}
