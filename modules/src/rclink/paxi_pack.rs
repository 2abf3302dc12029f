//! The PAXI AR / B TX packing buffer (seed 002 «Buffer 资源全景» PAXI TX: the AR and B buffers,
//! depth 16, and «AR/B 打包行为详解»): read requests (AR) or write responses (B) bound for one
//! destination are packed, up to 16, into one flit, sent when any of three triggers fires.
//!
//! ```text
//!   in : stream<Segment> ==>+-----------+==> out : stream<Segment>   (one packed flit each)
//!   (one AR or B entry:     | paxi_pack |--> fill : u8 (entries held)
//!    dst, qp, paxi.ost,     +-----------+--> dst  : u16 (their destination)
//!    bytes = AR length;
//!    a multicast B: kind mul)
//! ```
//!
//! TX_BUF_WM and TX_BUF_ACC_WT are configurable in seed 002 («Buffer 容量参数»: «可配置») with no
//! value given; the defaults (16 entries, 32 cycles) and the entry sizes (16 B AR, 8 B B) are
//! hwsim's choice.
//!
//! - **Watermark** (`TX_BUF_WM`, `wm`): the entry that brings the buffer to `wm` entries sends it.
//! - **DA/VC change**: an entry for another destination or QP first sends what is held (entries
//!   for different targets never share a flit). hwsim keys on (DA, QP): a flit travels on one
//!   RC Link QP, whose bank is its VC.
//! - **Timeout** (`TX_BUF_ACC_WT`, `acc_wt` cycles): held entries leave `acc_wt` cycles after the
//!   first of them came in.
//! - **Frame length**: a flit never exceeds `max_flit_bytes` (the Ethernet Frame Length
//!   Register's limit, less headers): an entry that would not fit first sends what is held.
//!
//! A flit's payload is `n × entry_bytes`. The seed gives no entry size; hwsim's defaults are
//! 16 B for an AR (address, length, ID, attributes) and 8 B for a B; the PAXI core sets them.
//!
//! Latency: an entry visible at n is packed at n; a flit sent by a trigger at n is visible
//! downstream at n + 1 (a timeout at first-entry + `acc_wt`). One flit out per cycle; two flits
//! made in one cycle (a DA change then a watermark of 1) leave on consecutive cycles. `in` is
//! left waiting while the output has flits queued (the buffer's depth is the back-pressure).
//!
//! **The PAXI's form** (`inline: true`, which the PAXI sets on its `ar_pack` and `b_pack`
//! nodes): `in` and `out` are combinational; in a cycle the timeout is polled first, then every
//! entry on `in` is taken in order, then every flit made leaves on `out`, all in that cycle
//! (`lanes` entries a cycle, `lanes` + 1 flits; no back-pressure: the PAXI's OST tables bound
//! what it issues). An entry that arrives in the cycle its buffer times out joins the next
//! flit, as in the standalone form; with `entries_before_timeout` it leaves with the held ones
//! instead. The PAXI's B buffer runs that way and its AR buffer the other, as the fused PAXI
//! did (its slave made the cycle's Bs due, then polled; its requester polled, then issued the
//! cycle's ARs); the seed does not say which an RTL does, and the two orders give different
//! figures (a B one `acc_wt` later) in the system testbenches, so both are kept. The counters
//! are then named `ar_*` / `b_*` (the PAXI's names, in whose scope the node counts).
//!
//! Counters: `entries`, `flits`, and why each flit left: `flush_wm`, `flush_da_vc`,
//! `flush_timeout`, `flush_length`; `max_entries` (most in one flit).
//!
//! Deviations: none known beyond the entry sizes above; the seed does not say whether a
//! timeout counts from the first or the latest entry (hwsim: the first, so an entry waits at
//! most `acc_wt`).

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{ChipId, FlitKind, PackedEntry, PaxiFlit, QpId, Segment, MAX_PACKED};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "*max_entries",
        "entries",
        "gauge: most entries packed in one flit (prefix `ar_`/`b_` in the PAXI core)",
    ),
    CounterDecl::new(
        "*entries",
        "entries",
        "AR or B entries taken into the packing buffer (prefix `ar_`/`b_` in the PAXI core)",
    ),
    CounterDecl::new(
        "*flits",
        "flits",
        "packed flits sent (prefix `ar_`/`b_` in the PAXI core)",
    ),
    CounterDecl::new(
        "*flush_wm",
        "flits",
        "flits sent because the buffer reached the watermark `wm` (TX_BUF_WM)",
    ),
    CounterDecl::new(
        "*flush_da_vc",
        "flits",
        "flits sent because an entry for another destination or QP came in",
    ),
    CounterDecl::new(
        "*flush_timeout",
        "flits",
        "flits sent `acc_wt` cycles after their first entry (TX_BUF_ACC_WT)",
    ),
    CounterDecl::new(
        "*flush_length",
        "flits",
        "flits sent because the next entry would pass `max_flit_bytes`",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Why a flit left the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flush {
    /// It reached TX_BUF_WM entries.
    Watermark,
    /// An entry for another destination or QP came in.
    DaVc,
    /// TX_BUF_ACC_WT passed since its first entry.
    Timeout,
    /// One more entry would exceed the frame length.
    Length,
}

/// Parameters of one packing buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// What it packs: `ar` or `b`.
    pub kind: FlitKind,
    /// TX_BUF_WM: entries that send the flit at once, 1..=16. Default 16, the buffer's depth:
    /// hwsim's choice (seed 002 lists it as «可配置», configurable, with no value).
    pub wm: u8,
    /// TX_BUF_ACC_WT: cycles from the first held entry to sending, ≥ 1. Default 32: hwsim's
    /// choice (seed 002: «可配置», no value).
    pub acc_wt: u64,
    /// Bytes each entry takes in the flit, 1..=1344 (default 16).
    pub entry_bytes: u32,
    /// Most payload bytes in one flit (frame length limit less headers), ≥ `entry_bytes`
    /// (default 1344, TYPE1's maximum payload).
    pub max_flit_bytes: u32,
    /// The form the PAXI runs (its `ar_pack` and `b_pack` nodes, which set it): `in` and `out`
    /// are combinational, every entry is taken and every flit leaves in the cycle it is made
    /// (no back-pressure: the PAXI's OST tables bound the entries), and the counters are
    /// named `ar_*` / `b_*` in the PAXI's scope. Default false: the standalone block above.
    pub inline: bool,
    /// With `inline`: entries taken a cycle at most (the width of `in`), ≥ 1; the flits out
    /// are at most one more. Default 16.
    pub lanes: u32,
    /// With `inline`: whether a cycle's entries are taken before the timeout is polled (an
    /// entry arriving in the cycle its buffer times out then leaves with it), rather than after
    /// (it starts the next flit, the standalone block's order). Default false; the PAXI's B
    /// buffer sets it (see the header).
    pub entries_before_timeout: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            kind: FlitKind::Ar,
            wm: MAX_PACKED as u8,
            acc_wt: 32,
            entry_bytes: 16,
            max_flit_bytes: 1344,
            inline: false,
            lanes: MAX_PACKED as u32,
            entries_before_timeout: false,
        }
    }
}

impl Params {
    /// Refuses values the buffer cannot honour.
    pub fn check(&self) -> Result<(), String> {
        if !matches!(self.kind, FlitKind::Ar | FlitKind::B) {
            return Err(format!("kind {:?}: only `ar` and `b` are packed", self.kind));
        }
        if self.wm == 0 || self.wm as usize > MAX_PACKED {
            return Err(format!("wm {} out of range 1..=16 (the buffer's depth)", self.wm));
        }
        if self.acc_wt == 0 || self.acc_wt > 1 << 32 {
            return Err(format!("acc_wt {} out of range 1..=2^32 cycles", self.acc_wt));
        }
        if self.entry_bytes == 0 || self.entry_bytes > 1344 {
            return Err(format!("entry_bytes {} out of range 1..=1344", self.entry_bytes));
        }
        if self.max_flit_bytes < self.entry_bytes || self.max_flit_bytes > 1 << 16 {
            return Err(format!(
                "max_flit_bytes {} out of range {}..=65536 (at least one entry)",
                self.max_flit_bytes, self.entry_bytes
            ));
        }
        if self.lanes == 0 {
            return Err("lanes 0: at least one entry a cycle".into());
        }
        Ok(())
    }
}

/// A packed flit, ready to become a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed {
    /// Destination chip.
    pub dst: ChipId,
    /// The QP it travels on.
    pub qp: QpId,
    /// Kind, `n` and the entries.
    pub flit: PaxiFlit,
    /// Payload bytes (`n × entry_bytes`).
    pub bytes: u32,
    /// Why it left.
    pub why: Flush,
}

/// The packing buffer core (no ports): the PAXI core holds two, the `paxi_pack` block one.
pub struct Packer {
    p: Params,
    /// Destination, QP and arrival cycle of the first held entry.
    head: Option<(ChipId, QpId, Cycle)>,
    flit: PaxiFlit,
    out: VecDeque<Packed>,
}

impl Packer {
    /// An empty buffer.
    pub fn new(p: &Params) -> Result<Packer, String> {
        p.check()?;
        Ok(Packer {
            p: p.clone(),
            head: None,
            flit: PaxiFlit {
                kind: p.kind,
                ..Default::default()
            },
            out: VecDeque::with_capacity(4),
        })
    }

    /// Entries held now.
    pub fn fill(&self) -> u8 {
        self.flit.n
    }

    /// The destination of the held entries.
    pub fn dst(&self) -> Option<ChipId> {
        self.head.map(|(d, _, _)| d)
    }

    fn flush(&mut self, why: Flush) {
        let Some((dst, qp, _)) = self.head.take() else { return };
        let n = self.flit.n;
        self.out.push_back(Packed {
            dst,
            qp,
            flit: self.flit,
            bytes: n as u32 * self.p.entry_bytes,
            why,
        });
        self.flit.n = 0;
    }

    /// Takes one entry for (`dst`, `qp`) at `now`; the triggers it fires queue flits.
    pub fn push(&mut self, now: Cycle, dst: ChipId, qp: QpId, e: PackedEntry) {
        if let Some((d, q, _)) = self.head {
            if (d, q) != (dst, qp) {
                self.flush(Flush::DaVc);
            } else if (self.flit.n as u32 + 1) * self.p.entry_bytes > self.p.max_flit_bytes {
                self.flush(Flush::Length);
            }
        }
        if self.head.is_none() {
            self.head = Some((dst, qp, now));
        }
        self.flit.entries[self.flit.n as usize] = e;
        self.flit.n += 1;
        if self.flit.n >= self.p.wm {
            self.flush(Flush::Watermark);
        }
    }

    /// Sends the held entries if their timeout is due at `now`.
    pub fn poll(&mut self, now: Cycle) {
        if self.deadline().is_some_and(|d| d <= now) {
            self.flush(Flush::Timeout);
        }
    }

    /// When the held entries time out.
    pub fn deadline(&self) -> Option<Cycle> {
        self.head.map(|(_, _, t)| t.saturating_add(self.p.acc_wt))
    }

    /// The oldest flit made and not yet taken.
    pub fn pop(&mut self) -> Option<Packed> {
        self.out.pop_front()
    }

    /// Flits waiting to be taken.
    pub fn queued(&self) -> usize {
        self.out.len()
    }
}

/// Port list: registered streams (the standalone block), or combinational ones `lanes` wide
/// (`inline`, the PAXI's).
pub fn ports(p: &Params) -> Vec<PortDecl> {
    const IN: &str = "AR or B entries: dst, qp, paxi.ost (a multicast B: paxi.kind `mul`), bytes (AR length)";
    const OUT: &str = "packed flits: paxi.n entries, bytes = n × entry_bytes";
    let (input, out) = if p.inline {
        (
            PortDecl::comb_stream_in::<Segment>("in", p.lanes).doc(IN),
            PortDecl::comb_stream_out::<Segment>("out")
                .width(p.lanes.saturating_add(1))
                .doc(OUT),
        )
    } else {
        (
            PortDecl::stream_in::<Segment>("in", 4).doc(IN),
            PortDecl::stream_out::<Segment>("out").doc(OUT),
        )
    };
    vec![
        input,
        out,
        PortDecl::output::<u8>("fill").level().doc("entries held"),
        PortDecl::output::<u16>("dst").doc("destination of the held entries"),
    ]
}

/// The entry a segment on `in` carries: its OST index and length; a multicast B (kind `mul`)
/// keeps its flag.
fn entry_of(s: &Segment) -> PackedEntry {
    if s.paxi.kind == FlitKind::Mul {
        PackedEntry::mul_b(s.paxi.ost)
    } else {
        PackedEntry::new(s.paxi.ost, s.bytes)
    }
}

/// The segment on `in` of a buffer packing `kind` that carries `e` for (`dst`, `qp`) (the
/// inverse of [`entry_of`]).
pub fn entry_segment(kind: FlitKind, dst: ChipId, qp: QpId, e: PackedEntry) -> Segment {
    Segment {
        dst,
        qp,
        bytes: e.bytes(),
        paxi: PaxiFlit {
            kind: if e.is_mul() { FlitKind::Mul } else { kind },
            ost: e.ost(),
            ..PaxiFlit::default()
        },
        ..Segment::default()
    }
}

/// Counter ids of a packing buffer.
pub struct PackCounters {
    entries: CounterId,
    flits: CounterId,
    wm: CounterId,
    da_vc: CounterId,
    timeout: CounterId,
    length: CounterId,
    max_entries: CounterId,
}

impl PackCounters {
    /// Binds the counters, each name after `prefix`.
    pub fn bind(b: &mut Binder, prefix: &str) -> PackCounters {
        let c = |b: &mut Binder, n: &str| b.counter(&format!("{prefix}{n}"));
        PackCounters {
            entries: c(b, "entries"),
            flits: c(b, "flits"),
            wm: c(b, "flush_wm"),
            da_vc: c(b, "flush_da_vc"),
            timeout: c(b, "flush_timeout"),
            length: c(b, "flush_length"),
            max_entries: c(b, "max_entries"),
        }
    }
    /// Counts one entry taken.
    pub fn entry(&self, ctx: &mut Ctx<'_>) {
        ctx.count(self.entries, 1);
    }
    /// Counts one flit sent.
    pub fn flit(&self, ctx: &mut Ctx<'_>, f: &Packed) {
        ctx.count(self.flits, 1);
        let why = match f.why {
            Flush::Watermark => self.wm,
            Flush::DaVc => self.da_vc,
            Flush::Timeout => self.timeout,
            Flush::Length => self.length,
        };
        ctx.count(why, 1);
        if f.flit.n as u64 > ctx.counter(self.max_entries) {
            ctx.set_counter(self.max_entries, f.flit.n as u64);
        }
    }
}

/// The standalone block.
pub struct PaxiPack {
    core: Packer,
    /// The PAXI's form (see [`Params::inline`]).
    inline: bool,
    entries_first: bool,
    input: StreamIn<Segment>,
    out: StreamOut<Segment>,
    fill: Out<u8>,
    dst: Out<u16>,
    c: PackCounters,
    flits: u64,
}

/// Binds ports; refuses parameters out of range. Inline, the counters are named for what it
/// packs (`ar_*`, `b_*`: the PAXI's names, in whose scope it counts).
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    let prefix = match (p.inline, p.kind) {
        (false, _) => "",
        (true, FlitKind::B) => "b_",
        (true, _) => "ar_",
    };
    Ok(Box::new(PaxiPack {
        core: Packer::new(p)?,
        inline: p.inline,
        entries_first: p.entries_before_timeout,
        input: b.stream_in("in")?,
        out: b.stream_out("out")?,
        fill: b.output("fill")?,
        dst: b.output("dst")?,
        c: PackCounters::bind(b, prefix),
        flits: 0,
    }))
}

impl PaxiPack {
    /// The PAXI's form: the timeout, and every entry of this cycle in order (in the order
    /// `entries_before_timeout` says), then every flit made, all in this cycle.
    fn inline_tick(&mut self, ctx: &mut Ctx<'_>, now: Cycle) -> Wake {
        if !self.entries_first {
            self.core.poll(now);
        }
        while let Some(s) = self.input.pop() {
            self.c.entry(ctx);
            self.core.push(now, s.dst, s.qp, entry_of(&s));
        }
        if self.entries_first {
            self.core.poll(now);
        }
        while let Some(f) = self.core.pop() {
            self.c.flit(ctx, &f);
            let seg = self.segment(&f);
            self.out.push(seg);
        }
        self.show();
        Wake::earliest(self.core.deadline())
    }

    /// A flit as the segment `out` carries.
    fn segment(&mut self, f: &Packed) -> Segment {
        self.flits += 1;
        Segment {
            txn: self.flits - 1,
            frame_seq: 0,
            dst: f.dst,
            qp: f.qp,
            bytes: f.bytes,
            lg: 0,
            paxi: f.flit,
        }
    }

    /// `fill` and `dst`.
    fn show(&mut self) {
        let fill = self.core.fill();
        if fill != self.fill.get() {
            self.fill.set(fill);
        }
        let d = self.core.dst().unwrap_or(0);
        if d != self.dst.get() {
            self.dst.set(d);
        }
    }
}

impl Component for PaxiPack {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if self.inline {
            return self.inline_tick(ctx, now);
        }
        self.core.poll(now);
        // Take entries while no flit waits for the output: the buffer's depth holds them back.
        while self.core.queued() == 0 {
            let Some(s) = self.input.pop() else { break };
            self.c.entry(ctx);
            self.core.push(now, s.dst, s.qp, entry_of(&s));
        }
        if self.out.can_push() {
            if let Some(f) = self.core.pop() {
                self.c.flit(ctx, &f);
                let seg = self.segment(&f);
                self.out.push(seg);
            }
        }
        self.show();
        let more = self.core.queued() > 0 && self.out.space() > 1;
        let input_waiting = self.core.queued() == 0 && !self.input.is_empty();
        Wake::earliest(
            [self.core.deadline(), (more || input_waiting).then_some(now + 1)]
                .into_iter()
                .flatten(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qp(q: u16) -> QpId {
        QpId::new(q).unwrap()
    }

    fn drain(p: &mut Packer) -> Vec<(ChipId, u8, Flush)> {
        std::iter::from_fn(|| p.pop())
            .map(|f| (f.dst, f.flit.n, f.why))
            .collect()
    }

    #[test]
    fn sixteen_entries_make_one_flit_at_the_watermark() {
        let mut p = Packer::new(&Params::default()).unwrap();
        for i in 0..16 {
            p.push(i, 1, qp(0), PackedEntry::new(i as u8, 64));
        }
        let f = p.pop().unwrap();
        assert_eq!((f.flit.n, f.bytes, f.why), (16, 256, Flush::Watermark));
        assert_eq!(f.flit.packed()[15].ost(), 15);
        assert!(p.pop().is_none() && p.deadline().is_none());
    }

    #[test]
    fn a_new_destination_sends_what_is_held() {
        let mut p = Packer::new(&Params::default()).unwrap();
        p.push(0, 1, qp(0), PackedEntry::new(0, 64));
        p.push(1, 1, qp(0), PackedEntry::new(1, 64));
        p.push(2, 2, qp(0), PackedEntry::new(2, 64));
        assert_eq!(drain(&mut p), vec![(1, 2, Flush::DaVc)]);
        // The new entry starts its own timeout.
        assert_eq!(p.deadline(), Some(2 + 32));
        p.poll(33);
        assert!(p.pop().is_none());
        p.poll(34);
        assert_eq!(drain(&mut p), vec![(2, 1, Flush::Timeout)]);
    }

    #[test]
    fn a_flit_never_exceeds_the_frame_length() {
        let mut p = Packer::new(&Params {
            max_flit_bytes: 100,
            ..Params::default()
        })
        .unwrap();
        for i in 0..7 {
            p.push(0, 1, qp(0), PackedEntry::new(i, 64));
        }
        // 6 × 16 = 96 fits, the 7th would make 112.
        assert_eq!(drain(&mut p), vec![(1, 6, Flush::Length)]);
        assert_eq!(p.fill(), 1);
    }

    #[test]
    fn parameters_out_of_range_are_refused() {
        for bad in [
            Params {
                wm: 0,
                ..Params::default()
            },
            Params {
                wm: 17,
                ..Params::default()
            },
            Params {
                acc_wt: 0,
                ..Params::default()
            },
            Params {
                max_flit_bytes: 8,
                ..Params::default()
            },
            Params {
                kind: FlitKind::R,
                ..Params::default()
            },
        ] {
            assert!(Packer::new(&bad).is_err(), "{bad:?}");
        }
    }
}
