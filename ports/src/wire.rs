//! Wire and credit arithmetic, in one place (seed 000 «名词定义» frame / packet / MPS / CBFC credit,
//! «CBFC 流控», «MAC credit», «报头开销估算», «单元测试场景»; seed 002 credit_size).
//!
//! - A frame (one AXI burst, ≤ MPS 4096 B) is split into packets of ≤ `max_payload` 1344 B, the
//!   Go-Back-N unit: 4096 B → 1344, 1344, 1344, 64 ([`split_packets`]).
//! - Each packet costs `payload + pkt_overhead` (50 B by default, the Standard header the RC Link
//!   spec assumes) on the wire: 4096 B → 4296 B ([`frame_wire_bytes`]).
//! - CBFC cost of a packet: `ceil((payload + pkt_overhead) / credit_size)`; 1344 B at 256 B → 6
//!   ([`cbfc_cost`]).
//! - Serialization at a byte rate, with the fractional remainder carried exactly as a rational:
//!   two 1394 B packets at 50 B/ns end at 27.88 and 55.76 ns, visible at cycles 28 and 56
//!   ([`SerializerClock`]). No floating point on that path, so long runs are exact.

use std::fmt;
use std::num::NonZeroU32;

use hwsim_hw::value::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

use crate::error::PortsError;
use crate::frame::MAX_PAYLOAD_BYTES;

/// The model's per-packet overhead, bytes: the Standard format header, as the RC Link spec
/// assumes (`HEADER_OVERHEAD`, seed 000 appendix C).
pub const DEFAULT_PKT_OVERHEAD: u32 = 50;
/// Default maximum frame size (MPS), bytes.
pub const DEFAULT_MPS: u32 = 4096;
/// Size of a CNP on the RSP path, bytes (seed 000 «名词定义»).
pub const CNP_BYTES: u32 = 64;

/// Packet sizing parameters. Defaults: `{max_payload: 1344, pkt_overhead: 50, mps: 4096}`.
///
/// `max_payload` and `mps` are non-zero by type (a zero in YAML is a deserialization error).
/// Unknown fields are refused; missing ones take the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WireParams {
    /// Largest payload of one packet (the Go-Back-N unit), bytes.
    pub max_payload: NonZeroU32,
    /// Bytes added to every packet on the wire and in the CBFC cost (headers and trailers).
    pub pkt_overhead: u32,
    /// Largest frame (one AXI burst), bytes.
    pub mps: NonZeroU32,
}

impl WireParams {
    /// The defaults, as a constant.
    pub const DEFAULT: WireParams = WireParams {
        max_payload: NonZeroU32::new(MAX_PAYLOAD_BYTES).unwrap(),
        pkt_overhead: DEFAULT_PKT_OVERHEAD,
        mps: NonZeroU32::new(DEFAULT_MPS).unwrap(),
    };

    /// The packets a frame of `payload` bytes is split into (see [`split_packets`]).
    pub fn packets(&self, payload: u32) -> Packets {
        split_packets(payload, self.max_payload)
    }

    /// Bytes on the wire of a frame of `payload` bytes (see [`frame_wire_bytes`]).
    pub fn frame_wire_bytes(&self, payload: u32) -> u64 {
        frame_wire_bytes(payload, self)
    }
}

impl Default for WireParams {
    fn default() -> Self {
        WireParams::DEFAULT
    }
}

/// Number of packets for `payload` bytes: `ceil(payload / max_payload)`, and 1 for a zero-byte
/// control packet.
pub const fn packet_count(payload: u32, max_payload: NonZeroU32) -> u32 {
    if payload == 0 {
        1
    } else {
        payload.div_ceil(max_payload.get())
    }
}

/// Splits a frame of `payload` bytes into packet payloads of at most `max_payload` bytes, full
/// packets first: 4096 at 1344 → 1344, 1344, 1344, 64.
///
/// A zero-byte frame is one zero-byte packet (a control packet such as FACK is still one packet
/// on the wire), so the iterator always yields at least one item.
pub const fn split_packets(payload: u32, max_payload: NonZeroU32) -> Packets {
    Packets {
        remaining_bytes: payload,
        remaining_packets: packet_count(payload, max_payload),
        max_payload: max_payload.get(),
    }
}

/// Iterator over packet payload sizes, from [`split_packets`].
#[derive(Clone, Debug)]
pub struct Packets {
    remaining_bytes: u32,
    remaining_packets: u32,
    max_payload: u32,
}

impl Iterator for Packets {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.remaining_packets == 0 {
            return None;
        }
        self.remaining_packets -= 1;
        let size = self.remaining_bytes.min(self.max_payload);
        self.remaining_bytes -= size;
        Some(size)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.remaining_packets as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Packets {}

/// Bytes on the wire for a frame of `payload` bytes: Σ over its packets of
/// (packet payload + `pkt_overhead`). 4096 B with the defaults → 4096 + 4 × 50 = 4296 B; a
/// zero-byte control packet → 50 B.
pub const fn frame_wire_bytes(payload: u32, params: &WireParams) -> u64 {
    payload as u64 + packet_count(payload, params.max_payload) as u64 * params.pkt_overhead as u64
}

/// Bytes one CBFC credit stands for: one of 32, 64, 128, 256, 1024, 2048 (seed 002 credit_size).
///
/// Serialized as the plain byte count; any other number is a deserialization error. Default 256.
/// Traced as 12 bits holding the byte count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u32")]
#[repr(u32)]
pub enum CreditSize {
    /// 32 B.
    B32 = 32,
    /// 64 B.
    B64 = 64,
    /// 128 B.
    B128 = 128,
    /// 256 B (the RC Link default).
    #[default]
    B256 = 256,
    /// 1024 B.
    B1024 = 1024,
    /// 2048 B.
    B2048 = 2048,
}

impl CreditSize {
    /// All sizes, ascending.
    pub const ALL: [CreditSize; 6] = [
        CreditSize::B32,
        CreditSize::B64,
        CreditSize::B128,
        CreditSize::B256,
        CreditSize::B1024,
        CreditSize::B2048,
    ];

    /// The size for a byte count; anything but the six allowed sizes is an error.
    pub const fn new(bytes: u64) -> Result<CreditSize, PortsError> {
        match bytes {
            32 => Ok(CreditSize::B32),
            64 => Ok(CreditSize::B64),
            128 => Ok(CreditSize::B128),
            256 => Ok(CreditSize::B256),
            1024 => Ok(CreditSize::B1024),
            2048 => Ok(CreditSize::B2048),
            _ => Err(PortsError::NotAllowed {
                field: "credit size",
                value: bytes,
                allowed: "{32, 64, 128, 256, 1024, 2048}",
            }),
        }
    }

    /// Bytes per credit.
    pub const fn bytes(self) -> u32 {
        self as u32
    }
}

impl TryFrom<u64> for CreditSize {
    type Error = PortsError;
    fn try_from(bytes: u64) -> Result<Self, Self::Error> {
        CreditSize::new(bytes)
    }
}

impl TryFrom<u32> for CreditSize {
    type Error = PortsError;
    fn try_from(bytes: u32) -> Result<Self, Self::Error> {
        CreditSize::new(bytes.into())
    }
}

impl From<CreditSize> for u32 {
    fn from(size: CreditSize) -> u32 {
        size.bytes()
    }
}

impl Trace for CreditSize {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", 12)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.bytes().into());
    }
}

/// CBFC credits one packet costs: `ceil((payload + pkt_overhead) / credit_size)` (1344 B + 50 B at
/// 256 B → 6). The same formula gives the credits the receiver returns.
///
/// This is the formula only: zero-byte control packets (FACK, tcredit) consume and return no
/// credit, and the caller must not charge them.
pub const fn cbfc_cost(payload: u32, pkt_overhead: u32, credit_size: CreditSize) -> u32 {
    let bytes = payload as u64 + pkt_overhead as u64;
    // At most (2 × u32::MAX) / 32, which fits in u32.
    bytes.div_ceil(credit_size.bytes() as u64) as u32
}

/// CBFC credits one ACK, NAK or CNP costs on the ACK + CNP VC: the formula with no payload,
/// `ceil(pkt_overhead / credit_size)`, and at least 1 (a control message has no data, but it takes
/// a place in the receiver's ACK buffer; 50 B at 256 B → 1).
pub const fn ctrl_cost(pkt_overhead: u32, credit_size: CreditSize) -> u32 {
    let c = cbfc_cost(0, pkt_overhead, credit_size);
    if c == 0 {
        1
    } else {
        c
    }
}

/// A byte rate held exactly as the rational `bytes / ns` bytes per ns (= GB/s), in lowest terms.
///
/// 50 B/ns is `50/1`; 12.5 B/ns is `25/2`. Serde: a plain integer for whole bytes per ns
/// (`50`) or `{bytes: 25, ns: 2}`. Traced as one real (bytes per ns). Default: 50 B/ns, the
/// per-LG line rate.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ByteRate {
    bytes: u64,
    ns: u64,
}

impl ByteRate {
    /// The per-LG line rate, 50 B/ns.
    pub const LINE_RATE_PER_LG: ByteRate = ByteRate { bytes: 50, ns: 1 };

    /// `bytes` bytes every `ns` ns; both must be non-zero. Reduced to lowest terms.
    pub const fn new(bytes: u64, ns: u64) -> Result<ByteRate, PortsError> {
        if bytes == 0 || ns == 0 {
            return Err(PortsError::ZeroRate { bytes, ns });
        }
        let g = gcd(bytes, ns);
        Ok(ByteRate {
            bytes: bytes / g,
            ns: ns / g,
        })
    }

    /// Numerator: bytes moved every [`ns`](ByteRate::ns) ns (lowest terms).
    pub const fn bytes(self) -> u64 {
        self.bytes
    }

    /// Denominator: ns (lowest terms).
    pub const fn ns(self) -> u64 {
        self.ns
    }

    /// The rate as a float, for reports and traces only (never for timing).
    pub fn as_f64(self) -> f64 {
        self.bytes as f64 / self.ns as f64
    }

    /// Whole cycles to move `bytes` at this rate, rounded up: `ceil(bytes × ns / rate_bytes)`.
    /// (E.g. the 64 B/cycle datapath: 4296 B → 68 cycles.)
    pub const fn duration_ceil(self, bytes: u64) -> u64 {
        (bytes as u128 * self.ns as u128).div_ceil(self.bytes as u128) as u64
    }
}

const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let r = a % b;
        a = b;
        b = r;
    }
    a
}

impl Default for ByteRate {
    fn default() -> Self {
        ByteRate::LINE_RATE_PER_LG
    }
}

impl fmt::Debug for ByteRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ByteRate({}/{} B/ns)", self.bytes, self.ns)
    }
}

impl fmt::Display for ByteRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ns == 1 {
            write!(f, "{} B/ns", self.bytes)
        } else {
            write!(f, "{}/{} B/ns", self.bytes, self.ns)
        }
    }
}

impl Trace for ByteRate {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::real("")];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Real(self.as_f64());
    }
}

impl<'de> Deserialize<'de> for ByteRate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            bytes: u64,
            #[serde(default = "one")]
            ns: u64,
        }
        fn one() -> u64 {
            1
        }
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = ByteRate;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes per ns as an integer, or {bytes: B, ns: N}")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ByteRate, E> {
                ByteRate::new(v, 1).map_err(E::custom)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<ByteRate, A::Error> {
                let f = Fields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                ByteRate::new(f.bytes, f.ns).map_err(serde::de::Error::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A serializer's busy-until time, kept exactly: the `tx_busy` of a MAC/SerDes lane or an RX cap.
///
/// Time is held in units of `1 / rate.bytes()` ns, so every start and finish is an integer and the
/// fractional remainder of one packet carries into the next. A packet starting at cycle `now`
/// starts at `max(now, busy_until)` and occupies `bytes / rate`; [`start`](SerializerClock::start)
/// returns the first whole cycle at or after its end. At 50 B/ns two 1394 B packets sent at cycle
/// 0 end at 27.88 and 55.76 ns: cycles 28 and 56.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SerializerClock {
    rate: ByteRate,
    /// Busy until this time, in units of `1 / rate.bytes` ns.
    busy_until: u128,
}

impl SerializerClock {
    /// An idle serializer at `rate`.
    pub const fn new(rate: ByteRate) -> SerializerClock {
        SerializerClock { rate, busy_until: 0 }
    }

    /// The rate.
    pub const fn rate(&self) -> ByteRate {
        self.rate
    }

    /// Serializes `bytes` starting at `max(now_cycle, busy_until)`; returns the cycle it finishes,
    /// rounded up to a whole cycle (the exact end is kept for the next packet).
    pub fn start(&mut self, now_cycle: u64, bytes: u64) -> u64 {
        let now = u128::from(now_cycle) * u128::from(self.rate.bytes);
        let begin = now.max(self.busy_until);
        self.busy_until = begin + u128::from(bytes) * u128::from(self.rate.ns);
        self.busy_until_cycle()
    }

    /// Like [`start`](SerializerClock::start), but the occupancy is at least `min_ns` whole ns
    /// (a MAC whose datapath needs `ceil(wire / datapath_bytes)` ns even when the SerDes is
    /// faster): occupancy = max(bytes / rate, min_ns).
    pub fn start_at_least(&mut self, now_cycle: u64, bytes: u64, min_ns: u64) -> u64 {
        let now = u128::from(now_cycle) * u128::from(self.rate.bytes);
        let begin = now.max(self.busy_until);
        let serdes = u128::from(bytes) * u128::from(self.rate.ns);
        let datapath = u128::from(min_ns) * u128::from(self.rate.bytes);
        self.busy_until = begin + serdes.max(datapath);
        self.busy_until_cycle()
    }

    /// Cut-through: a frame of `bytes` whose last byte is to leave at `now_cycle`, its
    /// serialization overlapped with the pipeline it came through. Possible when the serializer
    /// was idle from `now − bytes / rate` on; then it is busy until `now` and the call returns
    /// true. Otherwise nothing changes and the frame must queue (store-and-forward).
    pub fn finish_by(&mut self, now_cycle: u64, bytes: u64) -> bool {
        let now = u128::from(now_cycle) * u128::from(self.rate.bytes);
        let need = u128::from(bytes) * u128::from(self.rate.ns);
        if now >= need && self.busy_until <= now - need {
            self.busy_until = now;
            true
        } else {
            false
        }
    }

    /// Whether the serializer is free by the end of cycle `now_cycle` (`busy_until ≤ now + 1`):
    /// a frame waiting in its input register can start within this cycle, at `busy_until`.
    pub const fn free_within(&self, now_cycle: u64) -> bool {
        self.busy_until <= (now_cycle as u128 + 1) * self.rate.bytes as u128
    }

    /// Bytes still to serialize at the start of cycle `now_cycle` (rounded up): everything
    /// started minus this is what has crossed the serializer by then.
    pub const fn remaining_bytes(&self, now_cycle: u64) -> u64 {
        let now = now_cycle as u128 * self.rate.bytes as u128;
        if self.busy_until <= now {
            0
        } else if self.rate.ns == 1 {
            // A whole number of bytes per ns (the line rates): no 128-bit division.
            (self.busy_until - now) as u64
        } else {
            (self.busy_until - now).div_ceil(self.rate.ns as u128) as u64
        }
    }

    /// The first whole cycle at which the serializer is idle: `ceil(busy_until)`.
    pub const fn busy_until_cycle(&self) -> u64 {
        self.busy_until.div_ceil(self.rate.bytes as u128) as u64
    }

    /// Whether a packet could start at `now_cycle` without waiting (`busy_until ≤ now`).
    pub const fn is_idle(&self, now_cycle: u64) -> bool {
        self.busy_until <= now_cycle as u128 * self.rate.bytes as u128
    }

    /// The exact busy-until time as `(numerator, denominator)` ns, e.g. `(2788, 50)` = 55.76 ns.
    pub const fn busy_until_exact(&self) -> (u128, u64) {
        (self.busy_until, self.rate.bytes)
    }
}

/// The bytes that have crossed a serializer, as a function of the cycle: what a MAC or an RX
/// cap shows on `wire_total` byte by byte at line rate, sent once per frame instead of once
/// per cycle, so a rate monitor integrates it without the serializer ticking every cycle.
///
/// At cycle `t` the value is `max(floor, started − clock.remaining_bytes(t))`: `started` is the
/// wire bytes of every frame started, `clock` the serializer after the last start, `floor` the
/// value the cycle before that start (the count never goes back, though a datapath-bound frame
/// occupies more time than its bytes need). From [`still_from`](WireRamp::still_from) on it no
/// longer moves. The default is 0 at every cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireRamp {
    /// The value the cycle before the last start (never gone back below).
    pub floor: u64,
    /// Wire bytes of every frame started.
    pub started: u64,
    /// The serializer as the last start left it.
    pub clock: SerializerClock,
}

impl WireRamp {
    /// The value at cycle `t` (the cumulative bytes a `wire_total` shows at `t`).
    #[inline]
    pub const fn at(&self, t: u64) -> u64 {
        let v = self.started.saturating_sub(self.clock.remaining_bytes(t));
        if v > self.floor {
            v
        } else {
            self.floor
        }
    }

    /// The first cycle from which the value stays `max(floor, started)`.
    pub const fn still_from(&self) -> u64 {
        self.clock.busy_until_cycle()
    }

    /// For a serializer of a whole number of bytes per ns: `(from, slope)`, the cycle from which
    /// the value rises by exactly `slope` bytes a cycle up to [`still_from`](Self::still_from)
    /// − 1 (before `from` it holds at `floor`; at `still_from` it takes its last, partial step).
    /// `None` at a fractional rate (there the steps vary by a byte).
    pub const fn linear(&self) -> Option<(u64, u64)> {
        let (busy_until, bytes) = self.clock.busy_until_exact();
        if self.clock.rate().ns() != 1 {
            return None;
        }
        // started − (busy_until − t·bytes) ≥ floor  ⟺  t·bytes ≥ floor + busy_until − started.
        let need = self.floor as u128 + busy_until;
        let from = if need <= self.started as u128 {
            0
        } else {
            (need - self.started as u128).div_ceil(bytes as u128) as u64
        };
        Some((from, bytes))
    }

    /// The ramp after a start at cycle `t` (`started` and `clock` as they are after it): its
    /// floor is this ramp's value at `t − 1`.
    pub const fn restart(&self, t: u64, started: u64, clock: SerializerClock) -> WireRamp {
        WireRamp {
            floor: if t == 0 { 0 } else { self.at(t - 1) },
            started,
            clock,
        }
    }
}

/// A ramp as a testbench writes and reads it: `{floor, started, still_from}` (what the waves
/// show). Driven from a testbench, a ramp does not move (`{floor, started}`: the serializer
/// idle, the value `max(floor, started)` at every cycle); a `still_from` other than 0 is refused.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[derive(Default)]
struct RampFields {
    floor: u64,
    started: u64,
    still_from: u64,
}

impl Serialize for WireRamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RampFields {
            floor: self.floor,
            started: self.started,
            still_from: self.still_from(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for WireRamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = RampFields::deserialize(d)?;
        if f.still_from != 0 {
            return Err(serde::de::Error::custom(
                "a ramp driven by a testbench does not move: give `floor` and `started` only",
            ));
        }
        Ok(WireRamp {
            floor: f.floor,
            started: f.started,
            clock: SerializerClock::default(),
        })
    }
}

impl Trace for WireRamp {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 3] = [
            TraceField::bits("floor", 64),
            TraceField::bits("started", 64),
            TraceField::bits("still_from", 64),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.floor);
        out[1] = TraceValue::Bits(self.started);
        out[2] = TraceValue::Bits(self.still_from());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cut_through_finishes_only_on_an_idle_serializer() {
        // 400 B/ns: 1406 B take 3.515 ns.
        let mut c = SerializerClock::new(ByteRate::new(400, 1).unwrap());
        assert!(!c.finish_by(3, 1406), "the frame could not have started before time 0");
        assert!(c.finish_by(100, 1406));
        assert_eq!(c.busy_until_exact(), (100 * 400, 400));
        // A second frame ending 2 ns later would have overlapped the first: refused, unchanged.
        assert!(!c.finish_by(102, 1406));
        assert_eq!(c.busy_until_cycle(), 100);
        assert!(c.finish_by(104, 1406), "3.515 ns after 100 ends by 104");
        // After a cut-through frame the next one queues behind it exactly.
        assert_eq!(c.start(104, 400), 105);
    }

    #[test]
    fn mac_occupancy_is_the_slower_of_datapath_and_serdes() {
        let mut c = SerializerClock::new(ByteRate::LINE_RATE_PER_LG);
        // 1394 B: datapath ceil(1394/64) = 22 ns < SerDes 27.88 ns.
        assert_eq!(c.start_at_least(0, 1394, 1394u64.div_ceil(64)), 28);
        assert_eq!(c.busy_until_exact(), (1394, 50));
        // 65 B: datapath 2 ns > SerDes 1.3 ns.
        let mut d = SerializerClock::new(ByteRate::LINE_RATE_PER_LG);
        assert_eq!(d.start_at_least(10, 65, 2), 12);
        assert!(!d.free_within(10));
        assert!(d.free_within(11));
    }

    fn nz(v: u32) -> NonZeroU32 {
        NonZeroU32::new(v).unwrap()
    }

    #[test]
    fn defaults() {
        let p = WireParams::default();
        assert_eq!(p.max_payload.get(), 1344);
        assert_eq!(p.pkt_overhead, 50);
        assert_eq!(p.mps.get(), 4096);
        assert_eq!(DEFAULT_PKT_OVERHEAD, 50);
    }

    #[test]
    fn full_frame_splits_and_wire_bytes() {
        let sizes: Vec<u32> = split_packets(4096, nz(1344)).collect();
        assert_eq!(sizes, [1344, 1344, 1344, 64]);
        assert_eq!(frame_wire_bytes(4096, &WireParams::default()), 4296);
        assert_eq!(WireParams::default().packets(4096).len(), 4);
        assert_eq!(split_packets(1344, nz(1344)).collect::<Vec<_>>(), [1344]);
        assert_eq!(split_packets(1345, nz(1344)).collect::<Vec<_>>(), [1344, 1]);
    }

    #[test]
    fn zero_byte_frame_is_one_empty_packet() {
        assert_eq!(split_packets(0, nz(1344)).collect::<Vec<_>>(), [0]);
        assert_eq!(frame_wire_bytes(0, &WireParams::default()), 50);
    }

    #[test]
    fn credit_cost_spec_case() {
        assert_eq!(cbfc_cost(1344, 50, CreditSize::B256), 6);
        assert_eq!(cbfc_cost(64, 50, CreditSize::B256), 1);
        assert_eq!(cbfc_cost(206, 50, CreditSize::B256), 1);
        assert_eq!(cbfc_cost(207, 50, CreditSize::B256), 2);
    }

    #[test]
    fn credit_size_checked() {
        assert_eq!(CreditSize::new(256), Ok(CreditSize::B256));
        assert_eq!(
            CreditSize::new(100).unwrap_err().to_string(),
            "credit size 100 is not one of {32, 64, 128, 256, 1024, 2048}"
        );
        for size in CreditSize::ALL {
            assert_eq!(CreditSize::try_from(size.bytes()), Ok(size));
        }
        assert_eq!(serde_yaml::from_str::<CreditSize>("2048").unwrap(), CreditSize::B2048);
        assert_eq!(serde_yaml::to_string(&CreditSize::B32).unwrap(), "32\n");
        let err = serde_yaml::from_str::<CreditSize>("512").unwrap_err().to_string();
        assert!(err.contains("credit size 512 is not one of"), "{err}");
    }

    #[test]
    fn two_packets_at_50_finish_at_56() {
        let mut lane = SerializerClock::new(ByteRate::new(50, 1).unwrap());
        assert_eq!(lane.start(0, 1394), 28);
        assert_eq!(lane.busy_until_exact(), (1394, 50)); // 27.88 ns
        assert!(!lane.is_idle(27));
        assert!(lane.is_idle(28));
        assert_eq!(lane.start(0, 1394), 56);
        assert_eq!(lane.busy_until_exact(), (2788, 50)); // 55.76 ns
        assert!(!lane.is_idle(55));
        assert!(lane.is_idle(56));
        // An idle lane starts at `now`, not at the stale busy time.
        assert_eq!(lane.start(100, 50), 101);
    }

    #[test]
    fn fractional_carry_is_exact_over_long_runs() {
        // 1000 full packets at 50 B/ns: 1_394_000 B / 50 = 27_880 ns exactly.
        let mut lane = SerializerClock::new(ByteRate::LINE_RATE_PER_LG);
        let mut end = 0;
        for _ in 0..1000 {
            end = lane.start(0, 1394);
        }
        assert_eq!(end, 27_880);
        // A fractional rate: 12.5 B/ns, 25 B → 2 ns, three times → 6.
        let mut slow = SerializerClock::new(ByteRate::new(25, 2).unwrap());
        assert_eq!(slow.start(0, 25), 2);
        assert_eq!(slow.start(0, 1), 3); // 2.08 → 3
        assert_eq!(slow.start(0, 24), 4);
    }

    #[test]
    fn byte_rate_forms() {
        let r = ByteRate::new(100, 4).unwrap();
        assert_eq!((r.bytes(), r.ns()), (25, 1));
        assert_eq!(r, ByteRate::new(25, 1).unwrap());
        assert_eq!(ByteRate::new(64, 1).unwrap().duration_ceil(4296), 68);
        assert_eq!(
            ByteRate::new(0, 1).unwrap_err().to_string(),
            "byte rate of 0 B per 1 ns is not allowed: both must be non-zero"
        );
        assert_eq!(
            serde_yaml::from_str::<ByteRate>("50").unwrap(),
            ByteRate::LINE_RATE_PER_LG
        );
        assert_eq!(
            serde_yaml::from_str::<ByteRate>("{bytes: 25, ns: 2}").unwrap(),
            ByteRate::new(25, 2).unwrap()
        );
        let text = serde_yaml::to_string(&ByteRate::new(25, 2).unwrap()).unwrap();
        assert_eq!(
            serde_yaml::from_str::<ByteRate>(&text).unwrap(),
            ByteRate::new(25, 2).unwrap()
        );
        let err = serde_yaml::from_str::<ByteRate>("{bytes: 25, per: 2}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `per`"), "{err}");
        let err = serde_yaml::from_str::<ByteRate>("0").unwrap_err().to_string();
        assert!(err.contains("byte rate of 0 B per 1 ns is not allowed"), "{err}");
        assert_eq!(ByteRate::new(25, 2).unwrap().to_string(), "25/2 B/ns");
        let mut out = [TraceValue::default()];
        ByteRate::new(25, 2).unwrap().sample(&mut out);
        assert_eq!(out[0], TraceValue::Real(12.5));
    }

    #[test]
    fn wire_params_serde() {
        let p: WireParams = serde_yaml::from_str("{pkt_overhead: 22}").unwrap();
        assert_eq!(
            p,
            WireParams {
                pkt_overhead: 22,
                ..WireParams::default()
            }
        );
        let text = serde_yaml::to_string(&WireParams::default()).unwrap();
        assert_eq!(text, "max_payload: 1344\npkt_overhead: 50\nmps: 4096\n");
        assert_eq!(
            serde_yaml::from_str::<WireParams>(&text).unwrap(),
            WireParams::default()
        );
        assert!(serde_yaml::from_str::<WireParams>("{max_payload: 0}").is_err());
        let err = serde_yaml::from_str::<WireParams>("{overhead: 50}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `overhead`"), "{err}");
    }

    proptest! {
        #[test]
        fn credit_cost_never_undercounts(payload in 0u32..=1_000_000, ovhd in 0u32..=200, i in 0usize..6) {
            let size = CreditSize::ALL[i];
            let cost = u64::from(cbfc_cost(payload, ovhd, size));
            let bytes = u64::from(payload) + u64::from(ovhd);
            let unit = u64::from(size.bytes());
            prop_assert!(cost * unit >= bytes);
            prop_assert!(cost == 0 || (cost - 1) * unit < bytes);
        }

        #[test]
        fn split_sums_and_bounds(payload in 0u32..=100_000, max in 1u32..=5000) {
            let sizes: Vec<u32> = split_packets(payload, nz(max)).collect();
            prop_assert_eq!(sizes.iter().map(|s| u64::from(*s)).sum::<u64>(), u64::from(payload));
            prop_assert!(!sizes.is_empty());
            prop_assert!(sizes.iter().all(|s| *s <= max));
            // Only the last packet may be short.
            prop_assert!(sizes[..sizes.len() - 1].iter().all(|s| *s == max));
            prop_assert_eq!(sizes.len() as u32, packet_count(payload, nz(max)));
            let params = WireParams { max_payload: nz(max), pkt_overhead: 50, mps: nz(4096) };
            prop_assert_eq!(frame_wire_bytes(payload, &params), u64::from(payload) + 50 * sizes.len() as u64);
        }

        #[test]
        fn serializer_matches_rational_model(
            rate_bytes in 1u64..200, rate_ns in 1u64..5,
            packets in proptest::collection::vec((0u64..50, 0u64..3000), 1..30),
        ) {
            // Reference: exact rationals kept as (numerator over rate_bytes) with gaps between starts.
            let rate = ByteRate::new(rate_bytes, rate_ns).unwrap();
            let mut lane = SerializerClock::new(rate);
            let (num, den) = (u128::from(rate.bytes()), u128::from(rate.ns()));
            let mut busy: u128 = 0; // in ns * num
            let mut now = 0u64;
            for (gap, bytes) in packets {
                now += gap;
                busy = busy.max(u128::from(now) * num) + u128::from(bytes) * den;
                let finish = lane.start(now, bytes);
                prop_assert_eq!(u128::from(finish), busy.div_ceil(num));
                // The finish cycle is the first whole cycle not before the exact end.
                prop_assert!(u128::from(finish) * num >= busy);
                prop_assert!(finish == 0 || u128::from(finish - 1) * num < busy);
            }
        }
    }

    proptest! {
        /// A ramp's linear stretch is what `at` gives cycle by cycle: `floor` before `from`,
        /// `slope` more each cycle from `from` to `still_from − 1`, `max(floor, started)` on.
        #[test]
        fn a_ramp_rises_by_its_slope_between_its_breaks(
            frames in proptest::collection::vec((0u64..300, 1u64..3000), 1..6),
            dp in 32u64..128,
        ) {
            let mut clock = SerializerClock::new(ByteRate::LINE_RATE_PER_LG);
            let (mut ramp, mut started) = (WireRamp::default(), 0u64);
            let mut frames = frames;
            frames.sort();
            for (t, bytes) in frames {
                started += bytes;
                clock.start_at_least(t, bytes, bytes.div_ceil(dp));
                ramp = ramp.restart(t, started, clock);
                let (from, slope) = ramp.linear().unwrap();
                let still = ramp.still_from();
                for c in t..still + 3 {
                    let v = ramp.at(c);
                    if c < from.min(still) {
                        prop_assert_eq!(v, ramp.floor);
                    } else if c < still {
                        prop_assert_eq!(v, ramp.at(from) + (c - from) * slope);
                    } else {
                        prop_assert_eq!(v, ramp.floor.max(ramp.started));
                    }
                }
            }
            let fractional = WireRamp { clock: SerializerClock::new(ByteRate::new(25, 2).unwrap()), ..ramp };
            prop_assert!(fractional.linear().is_none());
        }
    }
}
