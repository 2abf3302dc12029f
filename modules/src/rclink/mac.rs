//! Per-LG MAC / SerDes transmit serializer: the MAC credit of seed 000 «打包延迟与 MAC Credit»
//! and «芯片级聚合发送 cap».
//!
//! ```text
//!                    +-----------------------------+
//!   in : stream<DataFrame> (capacity `credits`:    |==> out    : stream<DataFrame> (to the router)
//!   the frames the TX may hand over ahead, its     |==> credit : stream<MacCreditRet> (MAC2TX, to the TX)
//!   MAC credits) ==>[ datapath ‖ SerDes ]          |--> busy : bool, wire_total : u64
//!                    +-----------------------------+
//! ```
//! A frame occupies the LG for max(ceil(wire / datapath_bytes) ns, wire / line_rate) — the NoC
//! datapath and the SerDes overlap in a pipeline and the slower binds (`eq:rc-frame-done`); at
//! 64 B and 50 B/ns the SerDes binds, so one LG carries 50 B/ns and a chip 8 × 50 = 400 B/ns
//! whatever the number of edges. The next frame starts exactly when the previous one ends (the
//! fractional end is carried), so two 1394 B frames granted at cycle 0 end at 27.88 and 55.76 ns
//! and leave the MAC at cycles 28 and 56.
//!
//! Latency: a frame visible at n starts at max(n, busy_until) and is pushed to `out` at the
//! first whole cycle at or after its end (`sent_at` = that cycle).
//!
//! **MAC credit** («打包延迟与 MAC Credit»: the MAC releases MAC2TX credit once it has
//! serialized the frame; the TX sends nothing without one): each frame started returns one credit
//! on `credit` at cycle `max(start, F − credit_lead)`, where F is the cycle in which the serializer
//! frees for the next frame (`ceil(end) − 1`). `credit_lead` (2) is the latency of the loop: the
//! credit is seen by the TX one cycle later, its grant by the MAC one more, so the next frame is
//! in `in` exactly when the serializer frees and back-to-back frames keep the line rate. The TX
//! side of the loop is `mac_credit`. Each credit is a typed message, one per frame, with `mul` set
//! for a TYPE2 frame (one sent to a multicast group address): the TX takes back its multicast MAC
//! TX credit from it rather than guessing from the order frames went in (the order credits come
//! back in is not always that, see below).
//!
//! **Zero-byte packets** bypass the send cap (seed 000 «芯片级聚合发送 cap»: the cap is for data):
//! a frame with no payload takes no serializer time and returns its credit in the cycle it is
//! taken, but leaves `out` after the frames ahead of it (never overtaking its QP's data).
//!
//! Counters: `frames`, `payload_bytes`, `wire_bytes` (data only), `bypassed` (zero-byte
//! frames). Signals: `busy`, and `wire_total`, the wire bytes serialized so far, advancing at
//! line rate (while the datapath binds, for tiny frames, it lags by up to one frame and catches up
//! when the frame ends); `wire_ramp`, the same count as a function of the cycle
//! ([`WireRamp`]), changed once per frame start, for the chip's rate monitor.
//!
//! **Events, not cycles.** The block runs at a frame's start and end, a credit's due cycle and
//! the cycle `busy` falls. `wire_total` advances every cycle of a frame only when something
//! observes it ([`Out::observed`]: a reader, the trace, a check, a shadow); it then runs every
//! such cycle to drive it, as it always did. The rate monitor integrates `wire_ramp` instead,
//! so in a system the serializer no longer runs once per cycle per busy LG.
//!
//! Deviation: the credit goes back `credit_lead` cycles before the serializer frees (see above),
//! where the seed's event model re-arbitrates at the instant the frame is done.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{mcast_group, ByteRate, DataFrame, MacCreditRet, SerializerClock, WireRamp};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "frames",
        "frames",
        "frames started on the serializer, zero-byte (bypassed) frames included",
    ),
    CounterDecl::new("payload_bytes", "bytes", "payload bytes of the data frames started"),
    CounterDecl::new(
        "wire_bytes",
        "bytes",
        "wire bytes (payload + overheads) of the data frames started",
    ),
    CounterDecl::new(
        "bypassed",
        "frames",
        "zero-byte frames passed on without serializer time (outside the send cap)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// NoC datapath width, bytes per ns (PACK_DATAPATH_WIDTH, 64).
    pub datapath_bytes: u32,
    /// SerDes line rate per LG, bytes/ns (50).
    pub line_rate: ByteRate,
    /// MAC2TX credits: frames the input holds (1..=8; the TX's `mac_credits`).
    pub credits: u32,
    /// Cycles before the serializer frees at which a frame's credit goes back (0..=16): the
    /// loop latency from this credit to the next frame in `in`.
    pub credit_lead: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            datapath_bytes: 64,
            line_rate: ByteRate::LINE_RATE_PER_LG,
            credits: 1,
            credit_lead: 2,
        }
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<DataFrame>("in", p.credits.max(1))
            .doc("granted frames (as many as the TX has MAC credits)"),
        PortDecl::stream_out::<DataFrame>("out").doc("frames leaving the SerDes"),
        PortDecl::stream_out::<MacCreditRet>("credit")
            .doc("MAC2TX credit returns to the TX: one per frame, `mul` for a TYPE2 frame"),
        PortDecl::output::<bool>("busy").doc("serializer busy"),
        PortDecl::output::<u64>("wire_total").doc("wire bytes serialized so far (cumulative, byte-accurate)"),
        PortDecl::output::<WireRamp>("wire_ramp")
            .doc("`wire_total` as a function of the cycle, changed at each frame start (for a rate monitor)"),
    ]
}

/// The credit a frame gives back: TYPE2 when it goes to a multicast group address.
fn credit_of(f: &DataFrame) -> MacCreditRet {
    MacCreditRet {
        mul: mcast_group(f.dst).is_some(),
    }
}

/// The block.
pub struct MacTx {
    datapath: u64,
    clock: SerializerClock,
    input: StreamIn<DataFrame>,
    out: StreamOut<DataFrame>,
    busy: Out<bool>,
    wire_total: Out<u64>,
    wire_ramp: Out<WireRamp>,
    /// The value of `wire_total` at every cycle since the last start (driven on `wire_ramp`).
    ramp: WireRamp,
    /// Wire bytes of every frame started, and the value driven on `wire_total`.
    started: u64,
    sent: u64,
    /// Frames being serialized or finished but not yet accepted downstream: (end cycle, frame).
    serialized: VecDeque<(Cycle, DataFrame)>,
    credit: StreamOut<MacCreditRet>,
    credit_lead: u64,
    /// Credits to go back: (cycle, the frame's credit), cycles ascending.
    credit_due: VecDeque<(Cycle, MacCreditRet)>,
    c_frames: CounterId,
    c_payload: CounterId,
    c_wire: CounterId,
    c_bypassed: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.datapath_bytes == 0 {
        return Err("datapath_bytes must be ≥ 1".into());
    }
    if !(1..=8).contains(&p.credits) {
        return Err(format!("credits = {}: must be in 1..=8", p.credits));
    }
    if p.credit_lead > 16 {
        return Err(format!("credit_lead = {}: must be in 0..=16", p.credit_lead));
    }
    Ok(Box::new(MacTx {
        datapath: p.datapath_bytes as u64,
        clock: SerializerClock::new(p.line_rate),
        input: b.stream_in("in")?,
        out: b.stream_out("out")?,
        busy: b.output("busy")?,
        wire_total: b.output("wire_total")?,
        wire_ramp: b.output("wire_ramp")?,
        ramp: WireRamp::default(),
        started: 0,
        sent: 0,
        serialized: VecDeque::with_capacity(4),
        credit: b.stream_out("credit")?,
        credit_lead: p.credit_lead,
        credit_due: VecDeque::with_capacity(8),
        c_frames: b.counter("frames"),
        c_payload: b.counter("payload_bytes"),
        c_wire: b.counter("wire_bytes"),
        c_bypassed: b.counter("bypassed"),
    }))
}

impl Component for MacTx {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // A finished frame leaves (one per cycle).
        if let Some(&(end, _)) = self.serialized.front() {
            if end <= now && self.out.can_push() {
                let (_, mut f) = self.serialized.pop_front().expect("front");
                f.sent_at = now;
                self.out.push(f);
            }
        }
        let zero_head = self.input.peek().is_some_and(|f| f.payload() == 0);
        if zero_head && self.serialized.len() < 2 {
            // A zero-byte packet bypasses the send cap («芯片级聚合发送 cap»): no serializer time,
            // its credit back at once; it still leaves after the frames ahead of it (their QP's
            // PSN order).
            let f = self.input.pop().expect("non-empty");
            let ret = credit_of(&f);
            let end = self.serialized.back().map_or(now, |&(e, _)| e.max(now));
            self.serialized.push_back((end, f));
            let at = self.credit_due.partition_point(|&(t, _)| t <= now);
            self.credit_due.insert(at, (now, ret));
            ctx.count(self.c_frames, 1);
            ctx.count(self.c_bypassed, 1);
        } else if !self.input.is_empty() && self.clock.free_within(now) && self.serialized.len() < 2 {
            // The waiting frame starts as soon as the serializer frees up within this cycle; keep
            // at most one finished-but-blocked frame so back-pressure reaches the TX.
            let f = self.input.pop().expect("non-empty");
            let wire = f.wire_bytes() as u64;
            self.started += wire;
            let end = self.clock.start_at_least(now, wire, wire.div_ceil(self.datapath));
            self.ramp = self.ramp.restart(now, self.started, self.clock);
            self.wire_ramp.set(self.ramp);
            self.serialized.push_back((end, f));
            // The serializer frees for the next frame within cycle end − 1.
            let frees = end.saturating_sub(1);
            self.credit_due
                .push_back((frees.saturating_sub(self.credit_lead).max(now), credit_of(&f)));
            ctx.count(self.c_frames, 1);
            ctx.count(self.c_payload, f.payload() as u64);
            ctx.count(self.c_wire, wire);
        }
        if self.credit_due.front().is_some_and(|&(t, _)| t <= now) && self.credit.can_push() {
            let (_, ret) = self.credit_due.pop_front().expect("front");
            self.credit.push(ret);
        }
        // Busy at this cycle: the serializer's work extends past `now`. (Computed from `now`, so
        // it reads the same whether or not the kernel skipped the cycles in between.)
        let busy = !self.clock.is_idle(now);
        if busy != self.busy.get() {
            self.busy.set(busy);
        }
        // Wire bytes sent so far, byte by byte at line rate, so a window over `wire_total`
        // measures the send rate exactly rather than frame by frame; driven only while someone
        // observes it (the ramp carries it otherwise). `remaining` counts datapath padding too
        // (a tiny frame occupies more time than its bytes need), so it can exceed what was
        // started: the ramp saturates, and never goes backwards.
        let observed = self.wire_total.observed();
        if observed {
            let sent = self.ramp.at(now);
            if sent != self.sent {
                self.sent = sent;
                self.wire_total.set(sent);
            }
        }
        // Next: the front frame's end, the cycle the serializer frees for a waiting frame, or
        // the cycle `busy` falls.
        let mut next = Cycle::MAX;
        if let Some(&(end, _)) = self.serialized.front() {
            if end > now {
                next = next.min(end);
            } else if self.out.space() > 1 {
                next = now + 1;
            }
        }
        if !self.input.is_empty() && self.serialized.len() < 2 {
            next = next.min(self.clock.busy_until_cycle().saturating_sub(1).max(now + 1));
        }
        if let Some(&(t, _)) = self.credit_due.front() {
            // Due: next cycle (a full credit stream wakes us when it drains).
            next = next.min(t.max(now + 1));
        }
        if observed && (busy || self.sent < self.started) {
            // `wire_total` advances cycle by cycle while serializing.
            next = now + 1;
        } else if busy {
            // `busy` falls when the serializer frees.
            next = next.min(self.clock.busy_until_cycle().max(now + 1));
        }
        Wake::earliest((next != Cycle::MAX).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::QpId;

    fn frame(bytes: u32) -> DataFrame {
        DataFrame {
            qp: QpId::new(1).unwrap(),
            ..DataFrame::whole(bytes, 1344, 50)
        }
    }

    fn harness() -> Harness {
        let p = Params::default();
        Harness::new("mac_tx", ports(&p), Box::new(move |b| build(&p, b)), 1, 4).unwrap()
    }

    #[test]
    fn two_1394_byte_frames_leave_at_28_and_56() {
        let mut h = harness();
        // The TX grants frame 1 during cycle 0 (visible at 1); frame 2 waits in the register.
        assert!(h.push("in", frame(1344)));
        h.step().unwrap();
        let mut out = Vec::new();
        let mut pushed_second = false;
        for _ in 0..80 {
            if !pushed_second && h.push("in", frame(1344)) {
                pushed_second = true;
            }
            let now = h.now();
            h.step().unwrap();
            while let Some(f) = h.pop::<DataFrame>("out") {
                out.push((now, f.sent_at));
            }
        }
        // Frame 1 starts at cycle 1 (visible then): ends 1 + 27.88 = 28.88 → 29; frame 2 starts
        // at 28.88 exactly: ends 56.76 → 57. (Relative to the first start: 28 and 56.)
        let sent: Vec<u64> = out.iter().map(|(_, s)| *s).collect();
        assert_eq!(sent, vec![29, 57]);
    }

    #[test]
    fn a_zero_byte_frame_credit_overtakes_a_type2_frame_and_says_which_it_is() {
        let mut h = harness();
        let mut t2 = frame(1344);
        t2.dst = hwsim_ports::MCAST_BIT | 3;
        let mut zero = frame(0);
        zero.npkts = 1;
        assert_eq!(zero.payload(), 0);
        assert!(h.push("in", t2));
        h.step().unwrap();
        let mut credits = Vec::new();
        let mut pushed_zero = false;
        for _ in 0..60 {
            if !pushed_zero && h.push("in", zero) {
                pushed_zero = true;
            }
            let now = h.now();
            h.step().unwrap();
            while let Some(c) = h.pop::<MacCreditRet>("credit") {
                credits.push((now, c.mul));
            }
        }
        // The zero-byte frame's credit comes back first, and is not the TYPE2 one: a TX that
        // paired credits with the order it sent frames in would free the multicast MAC credit
        // while the TYPE2 frame is still being serialized.
        assert_eq!(credits.len(), 2, "{credits:?}");
        assert!(!credits[0].1 && credits[1].1, "{credits:?}");
        assert!(credits[0].0 < credits[1].0, "{credits:?}");
    }

    #[test]
    fn datapath_binds_for_tiny_frames() {
        let mut h = harness();
        // 0-byte frame: 50 B on the wire: SerDes 1 ns, datapath ceil(50/64) = 1 ns.
        let mut f = frame(15);
        f.pkt_ovhd = 50;
        // 65 B on the wire: datapath 2 ns > SerDes 1.3 ns.
        assert_eq!(f.wire_bytes(), 65);
        assert!(h.push("in", f));
        for _ in 0..10 {
            h.step().unwrap();
        }
        assert_eq!(h.sim().counter("dut.frames"), Some(1));
        // Visible at 1, ends at 3.
        let _ = h.pop::<DataFrame>("out");
        assert_eq!(h.sim().counter("dut.wire_bytes"), Some(65));
    }
}
