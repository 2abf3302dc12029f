//! RX cap: the per-LG receive serializer (seed 000 «芯片级聚合接收 cap», unit scenario «RX 单 LG
//! 接收串行化» in «单元测试场景»; SPEC.md «RX side», last bullet).
//!
//! Each link group receives data at most at its SerDes line rate (50 B/ns), so a chip with N LGs
//! receives at most N × line rate (8 × 50 = 400 B/ns) however many neighbours send to it. This
//! block is that per-LG timeline: a data frame that arrives at cycle `n` is received from
//! `max(n, busy_until)` for `wire_bytes / line_rate` ns, packet by packet, and each packet is
//! handed to the RC Link RX when its own last byte is in.
//!
//! ```text
//!                             +----------------------------------+
//!   in : stream<DataFrame> ==>| pop at arrival n, split into      |==> out : stream<DataFrame>
//!   (capacity `depth`)        | packets; SerializerClock at rate:|    (one packet each, at its
//!                             |  max(n, busy) + wire/rate, ceil  |     finish cycle)
//!                             | zero-payload packets bypass      |--> busy_until, wire_total
//!                             +----------------------------------+
//! ```
//!
//! **Timing.** A frame is popped the cycle it becomes visible in `in` (a push at `n−1` is visible
//! at `n`, and the push wakes us at `n`), so its arrival cycle is exact: `n`. Its packets are
//! serialized one after another, each for its payload + `pkt_ovhd` at `line_rate`, starting at
//! `max(n, busy_until)`; the fractional ends are kept exactly (`SerializerClock`) and each packet
//! leaves on `out` as a one-packet [`DataFrame`] (`first_idx` = its index, `npkts` = 1, the
//! frame's `frame_bytes`) at the first whole cycle at or after its end (ceil). So the RX checks
//! and ACK-merges packets at their own arrival times (a 1394 B packet every 27.88 ns), as the
//! hardware's 4 ns ACK MERGE poll sees them; the frame's last packet ends exactly where the whole
//! frame would have. Seen from a
//! testbench: a stimulus row `at: 0` is pushed at cycle 0 and visible (arrives) at cycle 1; a
//! 1394 B frame (one 1344 B packet + 50 B header) then ends at 1 + 27.88 = 28.88 → pushed on
//! `out` at cycle 29, visible downstream at 30. A second one pushed at cycle 1 (arrival 2) starts
//! at 28.88 and ends at 1 + 55.76 = 56.76 → pushed at cycle 57: 55.76 ns after the first frame's
//! arrival, i.e. frames visible from cycle `n` leave at `n + 28` and `n + 56`.
//!
//! **Control bypass** (seed: «控制包绕过»). Control (ACK/NAK/CNP, credit) travels on other paths
//! and never reaches this block. A zero-payload frame (FACK / tcredit) that does come here is
//! passed on in its arrival cycle without touching the serializer; it goes ahead of data frames
//! still being received (control latency must not grow with the data backlog).
//!
//! **Back-pressure.** One push per cycle on `out`; a frame that finishes while `out` is full, or
//! in the same cycle as another frame, leaves at the first cycle with space, in order. The
//! serializer timeline is not affected (the wire does not wait for the RX). Frames are taken off
//! `in` on arrival whatever the backlog (a receiver cannot refuse bits on the wire), so the
//! internal queue has no fixed bound: CBFC bounds it, because the RX returns a frame's credit only
//! after this block has received it (seed: the RX cap delays CreditReturn, an indirect back-pressure
//! on the TX). The input stream's capacity `depth` (8 frames) is hwsim's: the seeds size no RX
//! cap buffer.
//!
//! Counters (counted when a packet leaves on `out`): `pkts` (data packets), `frames` (data
//! frames whose last packet left), `payload_bytes`, `wire_bytes`, `bypassed` (zero-payload
//! packets); `backlog_peak`: most packets held at once. The signal `backlog` carries the number
//! held now (received or still on the wire, not yet pushed on `out`), for probes. The
//! signal `wire_total` carries the wire bytes received so far, advancing at line rate while a frame
//! is on the wire (so a window over it measures the rate exactly, not frame by frame), for
//! the chip's receive-rate monitor (acceptance «高 radix incast 接收 cap»: ≤ num_lg × line rate).
//! It steps by whole frames at their finish, so a window of W ns can see up to one frame more than
//! `W × line_rate` (the part of its first frame received before the window). `wire_ramp` is the
//! same count as a function of the cycle ([`WireRamp`]), changed at arrivals only: the monitor
//! integrates it, and `wire_total` is driven cycle by cycle only while something observes it
//! ([`Out::observed`]), so the block runs at arrivals and packet ends, not every cycle.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{ByteRate, DataFrame, SerializerClock, WireRamp};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "pkts",
        "packets",
        "data packets pushed on `out` once their last byte is received",
    ),
    CounterDecl::new("frames", "frames", "data frames whose last packet left on `out`"),
    CounterDecl::new(
        "payload_bytes",
        "bytes",
        "payload bytes of the data packets pushed on `out`",
    ),
    CounterDecl::new(
        "wire_bytes",
        "bytes",
        "wire bytes (payload + pkt_ovhd) of the data packets pushed on `out`",
    ),
    CounterDecl::new(
        "bypassed",
        "packets",
        "zero-payload packets passed on without the serializer (control bypass)",
    ),
    CounterDecl::new(
        "backlog_peak",
        "packets",
        "gauge: most packets held at once (on the wire or waiting for `out`)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters of one RX cap (one per LG).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Receive line rate of the LG (`LINE_RATE_PER_LG_BYTES_PER_NS`), default 50 B/ns. YAML: `50`
    /// or `{bytes: 25, ns: 2}`.
    pub line_rate: ByteRate,
    /// Input buffer in frames (1..=[`MAX_DEPTH`]), default 8: hwsim's figure (the seeds size
    /// no RX cap buffer; it only has to cover the frames in flight between MAC and PAXI).
    pub depth: u32,
}

/// Largest `depth`: the input buffer and the queues behind it are allocated at build for a full
/// buffer, so `depth: 4294967295` asked for 900 GB and aborted.
pub const MAX_DEPTH: u32 = 1 << 16;

impl Default for Params {
    fn default() -> Self {
        Params {
            line_rate: ByteRate::LINE_RATE_PER_LG,
            depth: 8,
        }
    }
}

/// Port list: `in` (frames as they arrive from the link), `out` (frames once received),
/// `busy_until` (the serializer's timeline, for the waves), `wire_total` (cumulative wire bytes
/// of the data frames that have left, for a receive-rate monitor).
pub fn ports(p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<DataFrame>("in", p.depth).doc("data frames arriving from the link"),
        PortDecl::stream_out::<DataFrame>("out")
            .doc("one-packet frames, each at the cycle its last byte is received (ceil)"),
        PortDecl::output::<u64>("busy_until").doc("first whole cycle at which the receive serializer is idle (ns)"),
        PortDecl::output::<u64>("wire_total").doc("wire bytes of the data frames pushed on out (cumulative)"),
        PortDecl::output::<WireRamp>("wire_ramp")
            .doc("`wire_total` as a function of the cycle, changed at arrivals (for a rate monitor)"),
        PortDecl::output::<u64>("backlog")
            .level()
            .doc("packets held (received or on the wire, not yet pushed on out)"),
    ]
}

/// The RX cap block.
pub struct RxCap {
    input: StreamIn<DataFrame>,
    out: StreamOut<DataFrame>,
    busy_until: Out<u64>,
    wire_total: Out<u64>,
    wire_ramp: Out<WireRamp>,
    /// The value of `wire_total` at every cycle since the last arrival (driven on `wire_ramp`).
    ramp: WireRamp,
    backlog: Out<u64>,
    /// The value driven on `backlog`.
    held: u64,
    /// The value driven on `wire_total`.
    wire_sum: u64,
    /// Wire bytes of every data frame started on the serializer.
    started: u64,
    clock: SerializerClock,
    /// Data packets being received: (cycle their last byte is in, sequence number, the packet,
    /// last packet of its frame); due cycles are non-decreasing (one timeline).
    data: VecDeque<(Cycle, u64, DataFrame, bool)>,
    /// Sequence number of the next data packet, and of the last one pushed on `out`.
    next_seq: u64,
    out_seq: u64,
    /// Zero-payload packets waiting (they skip the serializer): the packet, and the sequence
    /// number of the last data packet of its (src, qp) queued before it (it leaves after that one).
    bypass: VecDeque<(u64, DataFrame)>,
    /// Peak of `data.len() + bypass.len()`, mirrored into the counter when it grows.
    peak: u64,
    c_pkts: CounterId,
    c_frames: CounterId,
    c_payload: CounterId,
    c_wire: CounterId,
    c_bypassed: CounterId,
    c_backlog_peak: CounterId,
}

/// Binds ports; refuses `depth` outside 1..=[`MAX_DEPTH`].
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.depth == 0 || p.depth > MAX_DEPTH {
        return Err(format!("depth = {}: must be in 1..={MAX_DEPTH}", p.depth));
    }
    Ok(Box::new(RxCap {
        input: b.stream_in("in")?,
        out: b.stream_out("out")?,
        busy_until: b.output("busy_until")?,
        wire_total: b.output("wire_total")?,
        wire_ramp: b.output("wire_ramp")?,
        ramp: WireRamp::default(),
        backlog: b.output("backlog")?,
        held: 0,
        wire_sum: 0,
        started: 0,
        clock: SerializerClock::new(p.line_rate),
        // Room for a full input buffer plus what is in flight: no growth in steady state.
        data: VecDeque::with_capacity(2 * p.depth as usize),
        bypass: VecDeque::with_capacity(p.depth as usize),
        next_seq: 1,
        out_seq: 0,
        peak: 0,
        c_pkts: b.counter("pkts"),
        c_frames: b.counter("frames"),
        c_payload: b.counter("payload_bytes"),
        c_wire: b.counter("wire_bytes"),
        c_bypassed: b.counter("bypassed"),
        c_backlog_peak: b.counter("backlog_peak"),
    }))
}

impl Component for RxCap {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Arrivals: everything visible now arrived now (we are woken by each push), so `now` is
        // the exact arrival cycle. Taking them at once keeps the input buffer free for the link.
        while let Some(f) = self.input.pop() {
            if f.payload() == 0 {
                // After the last data packet of its (src, qp) still here, if any.
                let after = self
                    .data
                    .iter()
                    .rev()
                    .find(|(_, _, d, _)| d.src == f.src && d.qp == f.qp)
                    .map_or(0, |(_, seq, _, _)| *seq);
                self.bypass.push_back((after, f));
                continue;
            }
            let last = f.first_idx + f.npkts - 1;
            for i in f.first_idx..=last {
                let pkt = DataFrame {
                    first_psn: f.psn_of(i),
                    first_idx: i,
                    npkts: 1,
                    lost: (f.lost >> (i - f.first_idx)) & 1,
                    ..f
                };
                let wire = u64::from(pkt.wire_bytes());
                self.started += wire;
                let done = self.clock.start(now, wire);
                self.data.push_back((done, self.next_seq, pkt, i == last));
                self.next_seq += 1;
            }
            self.busy_until.set(self.clock.busy_until_cycle());
        }
        if self.started != self.ramp.started {
            // Once per cycle of arrivals, from the count as it stood before them.
            self.ramp = self.ramp.restart(now, self.started, self.clock);
            self.wire_ramp.set(self.ramp);
        }
        let held = (self.data.len() + self.bypass.len()) as u64;
        if held > self.peak {
            self.peak = held;
            ctx.set_counter(self.c_backlog_peak, held);
        }

        // One push per cycle: a waiting zero-payload packet first (once the data of its QP ahead
        // of it has left), else the head data packet if due.
        let could_push = self.out.can_push();
        if could_push {
            let free = self.bypass.iter().position(|(after, _)| *after <= self.out_seq);
            if let Some(k) = free {
                let (_, f) = self.bypass.remove(k).expect("found");
                self.out.push(f);
                ctx.count(self.c_bypassed, 1);
            } else if self.data.front().is_some_and(|(due, ..)| *due <= now) {
                let (_, seq, f, last) = self.data.pop_front().expect("front");
                self.out_seq = seq;
                self.out.push(f);
                ctx.count(self.c_pkts, 1);
                ctx.count(self.c_frames, last as u64);
                ctx.count(self.c_payload, f.payload().into());
                ctx.count(self.c_wire, f.wire_bytes().into());
            }
        }
        // Wire bytes received so far, byte by byte at line rate (not whole frames at their
        // end), so a window over `wire_total` measures the receive rate exactly; driven only
        // while someone observes it (the ramp carries it otherwise).
        let observed = self.wire_total.observed();
        if observed {
            let received = self.ramp.at(now);
            if received != self.wire_sum {
                self.wire_sum = received;
                self.wire_total.set(received);
            }
        }
        let held = (self.data.len() + self.bypass.len()) as u64;
        if held != self.held {
            self.held = held;
            self.backlog.set(held);
        }
        let receiving = observed && (self.clock.remaining_bytes(now + 1) > 0 || self.wire_sum < self.started);

        // Next due work. If `out` was full, its consumer's pop wakes us; no need to poll.
        let next_data = self.data.front().map(|(due, ..)| *due);
        let bypass_ready = self.bypass.iter().any(|(after, _)| *after <= self.out_seq);
        let due_now = bypass_ready || next_data.is_some_and(|d| d <= now);
        if receiving {
            // `wire_total` advances every cycle while a frame is on the wire.
            Wake::NextCycle
        } else if due_now {
            if could_push {
                Wake::NextCycle
            } else {
                Wake::OnInput
            }
        } else {
            match next_data {
                Some(d) => Wake::At(d),
                None => Wake::OnInput,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::{Harness, StreamNet};
    use hwsim_ports::QpId;

    fn frame(bytes: u32, txn: u64) -> DataFrame {
        DataFrame {
            src: 1,
            qp: QpId::new(5).unwrap(),
            txn,
            ..DataFrame::whole(bytes, 1344, 50)
        }
    }

    /// A bench with `out` logged; `skip` false ticks the DUT every cycle (`--no-skip`).
    fn bench(p: Params, sink: u32, skip: bool) -> Harness {
        let q = p.clone();
        let mut h = Harness::new("rx_cap", ports(&p), Box::new(move |b| build(&q, b)), 1, sink).unwrap();
        h.sim_mut().set_skip(skip);
        h.sim().net("dut.out").unwrap().enable_log();
        h
    }

    /// Every push on `out` so far: (cycle of the push, txn).
    fn pushes(h: &Harness) -> Vec<(Cycle, u64)> {
        let net = h.sim().net("dut.out").unwrap();
        let net = net.as_any().downcast_ref::<StreamNet<DataFrame>>().unwrap();
        let log = net.log();
        log.as_ref().unwrap().iter().map(|(c, f)| (*c, f.txn)).collect()
    }

    /// Seed «RX 单 LG 接收串行化»: two 1394 B frames on one LG finish 27.88 and 55.76 ns after
    /// the first one arrives: cycles n + 28 and n + 56.
    #[test]
    fn two_frames_finish_at_27_88_and_55_76() {
        for skip in [true, false] {
            let mut h = bench(Params::default(), 4, skip);
            h.steps(3).unwrap();
            // Pushed at 3 and 4 → arrive (visible, popped) at n = 4 and 5.
            assert!(h.push("in", frame(1344, 1)));
            h.step().unwrap();
            assert!(h.push("in", frame(1344, 2)));
            h.run(200).unwrap();
            let n = 4;
            assert_eq!(pushes(&h), vec![(n + 28, 1), (n + 56, 2)], "skip {skip}");
            assert_eq!(h.peek::<u64>("busy_until"), n + 56);
            assert_eq!(h.peek::<u64>("wire_total"), 2788);
            assert_eq!(h.sim().counter("dut.frames"), Some(2));
            assert_eq!(h.sim().counter("dut.wire_bytes"), Some(2788));
            assert_eq!(h.sim().counter("dut.payload_bytes"), Some(2688));
        }
    }

    /// The fraction carries: 50 back-to-back frames of 1394 B take exactly 50 × 27.88 = 1394 ns.
    #[test]
    fn fractional_carry_is_exact() {
        for skip in [true, false] {
            let mut h = bench(Params::default(), 64, skip);
            let mut sent = 0;
            while h.now() < 100 {
                if sent < 50 && h.push("in", frame(1344, sent)) {
                    sent += 1;
                }
                h.step().unwrap();
            }
            h.run(3000).unwrap();
            let p = pushes(&h);
            assert_eq!(p.len(), 50);
            assert!(p.iter().enumerate().all(|(i, (_, t))| *t == i as u64));
            // Arrival of the first at 1; the lane never idles after that.
            assert_eq!(p[49].0, 1 + 1394);
            assert_eq!(p[24].0, 1 + 697);
            assert_eq!(h.sim().counter("dut.frames"), Some(50));
        }
    }

    /// A full 4-packet frame is 4296 wire bytes, received packet by packet: 1394 B at 27.88,
    /// 55.76, 83.64 ns and the 114 B tail at 85.92 ns → out 28, 56, 84, 86 cycles after arrival.
    #[test]
    fn full_frame_leaves_packet_by_packet() {
        let mut h = bench(Params::default(), 4, true);
        h.push("in", frame(4096, 7));
        h.run(200).unwrap();
        assert_eq!(pushes(&h), vec![(1 + 28, 7), (1 + 56, 7), (1 + 84, 7), (1 + 86, 7)]);
        assert_eq!(h.sim().counter("dut.wire_bytes"), Some(4296));
        assert_eq!(h.sim().counter("dut.pkts"), Some(4));
        assert_eq!(h.sim().counter("dut.frames"), Some(1));
    }

    /// Zero-payload packets skip the serializer and overtake the data of other QPs being
    /// received (the bench's frames are all one QP; the zero-byte one here is another).
    #[test]
    fn zero_payload_bypasses() {
        for skip in [true, false] {
            let mut h = bench(Params::default(), 4, skip);
            h.push("in", frame(1344, 1));
            h.step().unwrap();
            h.push(
                "in",
                DataFrame {
                    qp: QpId::new(6).unwrap(),
                    ..frame(0, 2)
                },
            );
            h.run(100).unwrap();
            // The FACK arrives at 2 and leaves at 2; the data frame at 1 + 28.
            assert_eq!(pushes(&h), vec![(2, 2), (29, 1)]);
            assert_eq!(h.sim().counter("dut.bypassed"), Some(1));
            assert_eq!(h.sim().counter("dut.frames"), Some(1));
            assert_eq!(h.peek::<u64>("busy_until"), 29);
        }
    }

    /// A slower lane: 25/2 B/ns → 1394 B take 111.52 ns.
    #[test]
    fn fractional_rate() {
        let p = Params {
            line_rate: ByteRate::new(25, 2).unwrap(),
            depth: 2,
        };
        let mut h = bench(p, 4, true);
        h.push("in", frame(1344, 1));
        h.run(300).unwrap();
        assert_eq!(pushes(&h), vec![(1 + 112, 1)]);
    }

    /// `out` full: frames wait in order and leave one per cycle as space frees; the receive
    /// timeline itself does not wait.
    #[test]
    fn back_pressure_keeps_order() {
        for skip in [true, false] {
            let mut h = bench(Params::default(), 1, skip);
            for t in 0..3 {
                assert!(h.push("in", frame(64, t)));
                h.step().unwrap();
            }
            // 114 B at 50 B/ns = 2.28 ns each from arrival 1: ends 3.28, 5.56, 7.84 → 4, 6, 8.
            // The bench buffer holds one, so frames 1 and 2 wait for its pops.
            h.run(20).unwrap();
            assert_eq!(pushes(&h), vec![(4, 0)]);
            assert_eq!(h.peek::<u64>("busy_until"), 8);
            let t = h.now();
            assert_eq!(h.pop::<DataFrame>("out").unwrap().txn, 0);
            h.step().unwrap(); // t: the pop commits; the space is seen at t + 1
            h.step().unwrap(); // t + 1: frame 1 pushed
            assert_eq!(h.pop::<DataFrame>("out").unwrap().txn, 1);
            h.run(40).unwrap();
            assert_eq!(pushes(&h), vec![(4, 0), (t + 1, 1), (t + 3, 2)]);
            assert_eq!(h.sim().counter("dut.frames"), Some(3));
            assert_eq!(h.sim().counter("dut.backlog_peak"), Some(3));
        }
    }

    #[test]
    fn depth_zero_refused() {
        let p = Params {
            depth: 0,
            ..Params::default()
        };
        let q = p.clone();
        let r = Harness::new("rx_cap", ports(&p), Box::new(move |b| build(&q, b)), 1, 1);
        assert!(r.is_err());
    }
}
