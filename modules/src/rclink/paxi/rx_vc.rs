//! The RX VC buffers and the AXI channel buffers (seed 002 «PAXI RX 方向» «VC Buffer», «AXI 通道
//! Buffer»): the frames the LGs' RX deliver wait in REQ, RSP or MUL MEM, move in order into
//! their AXI channel buffer (W, AR, R, B) and go to the bus at `rx_axi_bytes_per_cycle` per
//! channel; the VC buffers' watermarks drive `rx_pause`.

use std::collections::VecDeque;

use hwsim_hw::{Binder, CounterId, Ctx, Cycle, Out};
use hwsim_ports::{DataFrame, FlitKind};

use super::counters::set_max;
use super::dispatch::Paxi;
use super::Params;

/// The RX VC buffers: name and the flits each holds.
pub(super) const RX_VCS: [(&str, [FlitKind; 2]); 3] = [
    ("req", [FlitKind::WData, FlitKind::Ar]),
    ("rsp", [FlitKind::R, FlitKind::B]),
    ("mul", [FlitKind::Mul, FlitKind::Mul]),
];

fn rx_vc(k: FlitKind) -> usize {
    RX_VCS
        .iter()
        .position(|(_, ks)| ks.contains(&k))
        .expect("every kind has a buffer")
}

/// One RX VC buffer: frames waiting for their AXI channel buffer.
pub(super) struct RxVc {
    pub(super) q: VecDeque<DataFrame>,
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

/// The AXI channel buffers a delivered frame goes through: W (AW+W bursts, multicast copies),
/// AR, R, B (seed 002 «AXI 通道 Buffer»; AW travels with its W here).
const AXI_CHANS: [&str; 4] = ["w", "ar", "r", "b"];

fn axi_chan(k: FlitKind) -> usize {
    match k {
        FlitKind::WData | FlitKind::Mul => 0,
        FlitKind::Ar => 1,
        FlitKind::R => 2,
        FlitKind::B => 3,
    }
}

/// One AXI channel buffer: frames (bytes `held`) waiting for the bus, the head's bytes still to
/// go.
pub(super) struct AxiChan {
    pub(super) q: VecDeque<DataFrame>,
    held: u32,
    head_left: u32,
    peak: CounterId,
}

/// The RX VC buffers (REQ, RSP, MUL), their watermarks, level outputs and counters.
pub(super) fn bind_rx_vcs(p: &Params, b: &mut Binder) -> Result<Vec<RxVc>, String> {
    let mut rx_vcs = Vec::new();
    for (i, n) in [p.rx_req_frames, p.rx_rsp_frames, p.rx_mul_frames]
        .into_iter()
        .enumerate()
    {
        let name = RX_VCS[i].0;
        let high = n + p.rx_rtt_frames;
        // Seed 003 «PFC 缓冲水位» (REQ/RSP/MUL MEM): the low watermark is 1 RTT; seed 002 names a
        // low watermark without a figure (docs/spec-findings.md finding 13).
        let low = p.rx_xon_frames.unwrap_or(p.rx_rtt_frames);
        if low >= high {
            return Err(format!(
                "rx_xon_frames {low} (the low watermark; default 1 RTT = rx_rtt_frames) must be below the {name} high watermark {high} (N + 1 RTT)"
            ));
        }
        rx_vcs.push(RxVc {
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
    Ok(rx_vcs)
}

/// The AXI channel buffers (W, AR, R, B) and their peak counters.
pub(super) fn bind_axi_chans(b: &mut Binder) -> Vec<AxiChan> {
    AXI_CHANS
        .iter()
        .map(|n| AxiChan {
            q: VecDeque::new(),
            held: 0,
            head_left: 0,
            peak: b.counter(&format!("axi_{n}_peak_bytes")),
        })
        .collect()
}

impl Paxi {
    /// Frames from the LGs' RX into the RX VC buffers, then out to the AXI channels at
    /// `rx_axi_bytes_per_cycle` each (all at once when 0); the watermarks set `rx_pause`. A
    /// buffer at capacity takes nothing more: frames wait in the RX (the RC Link RX buffer,
    /// whose credits the pause is holding back).
    pub(super) fn receive(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        let rate = self.p.rx_axi_bytes_per_cycle;
        for k in 0..self.rx_in.len() {
            while let Some(vc) = self.rx_in[k].peek().map(|f| rx_vc(f.paxi.kind)) {
                if rate == 0 {
                    let f = self.rx_in[k].pop().expect("peeked");
                    self.deliver(ctx, f);
                    continue;
                }
                let v = &mut self.rx_vcs[vc];
                if v.q.len() as u32 >= v.cap {
                    ctx.count(v.over, 1);
                    break;
                }
                let f = self.rx_in[k].pop().expect("peeked");
                v.q.push_back(f);
                set_max(ctx, v.peak, v.q.len() as u64);
            }
        }
        if rate == 0 {
            return;
        }
        // VC buffers into the AXI channel buffers, in order, while the head's channel has room
        // (a channel holding nothing takes any frame, so an MPS larger than the channel still
        // passes).
        let cap = self.p.axi_channel_bytes;
        for v in self.rx_vcs.iter_mut() {
            while let Some(f) = v.q.front() {
                let ch = &mut self.axi_chans[axi_chan(f.paxi.kind)];
                if ch.held > 0 && ch.held + f.frame_bytes > cap {
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
        // Each AXI channel hands `rate` bytes a cycle to the bus, on its own handshake: a
        // channel the bus holds back (a full W) does not stop the others.
        for c in 0..self.axi_chans.len() {
            let mut budget = rate;
            loop {
                let ch = &mut self.axi_chans[c];
                if ch.q.is_empty() {
                    break;
                }
                let take = ch.head_left.min(budget);
                ch.head_left -= take;
                budget -= take;
                if ch.head_left > 0 {
                    break;
                }
                let f = ch.q.pop_front().expect("non-empty");
                ch.held -= f.frame_bytes;
                ch.head_left = ch.q.front().map_or(0, |n| n.frame_bytes);
                self.deliver(ctx, f);
                if budget == 0 {
                    break;
                }
            }
        }
        let mut pause = 0u8;
        for (i, v) in self.rx_vcs.iter_mut().enumerate() {
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
