//! The RC Link routing header (RH), 64 bits (seed 002 «名词定义»: RH, ACK/NAK Opcode=01, CNP
//! Opcode=10, FACK, RTT via the RH Timestamp; seed 000 «PSN 管理», «FACK»).
//!
//! The seeds name the fields but give no bit positions, so hwsim defines the layout (in the table
//! on [`Rh`]) and keeps it in exactly one place: the private `modular-bitfield` struct `RhWord`
//! below. Everything else goes through [`Rh::pack`] / [`Rh::unpack`].

use hwsim_hw::value::{Trace, TraceField, TraceValue};
use modular_bitfield::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::PortsError;
use crate::psn::Psn;
use crate::qp::QpId;

/// RH opcode (2 bits). The fourth encoding, `0b11`, is reserved: [`Rh::unpack`] refuses it.
///
/// Serialized as a lowercase name: `data`, `ack`, `cnp`. A NAK is an `ack` with the NAK flag.
#[derive(Specifier, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[bits = 2]
#[serde(rename_all = "snake_case")]
pub enum Opcode {
    /// `0b00`: a data packet (TYPE1 REQ), carrying its PSN.
    #[default]
    Data = 0b00,
    /// `0b01`: a cumulative ACK, or a NAK when the NAK flag is set; carries `ack_psn`.
    Ack = 0b01,
    /// `0b10`: a congestion notification packet.
    Cnp = 0b10,
}

impl Opcode {
    /// The 2-bit encoding.
    pub const fn bits(self) -> u8 {
        self as u8
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Opcode::Data => "data",
            Opcode::Ack => "ack",
            Opcode::Cnp => "cnp",
        })
    }
}

impl Trace for Opcode {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", 2)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.bits().into());
    }
}

/// The bit layout, LSB first (modular-bitfield puts the first field at bit 0). The table in the
/// [`Rh`] doc comment is the same layout MSB first; the `layout_table_matches` test pins them.
mod layout {
    // The macro generates every accessor; unpack uses `opcode_or_err`, not the panicking
    // `opcode`, and the reserved fields are only ever written (to build the reserved mask).
    #![allow(dead_code)]
    use super::Opcode;
    use modular_bitfield::prelude::*;

    #[bitfield]
    #[repr(u64)]
    #[derive(Clone, Copy)]
    pub(super) struct RhWord {
        pub(super) timestamp: B32,
        pub(super) psn: B12,
        pub(super) reserved_44: B4,
        pub(super) qp: B10,
        pub(super) reserved_58: B2,
        pub(super) fack: bool,
        pub(super) nak: bool,
        pub(super) opcode: Opcode,
    }
}
use layout::RhWord;

/// The 64-bit RC Link routing header.
///
/// hwsim's layout (an assumption: the seeds name the fields but not their positions). Reserved
/// bits are zero on [`pack`](Rh::pack) and must be zero on [`unpack`](Rh::unpack):
///
/// | bits    | field       | meaning                                                           |
/// |---------|-------------|-------------------------------------------------------------------|
/// | 63..=62 | `opcode`    | `00` data, `01` ACK/NAK, `10` CNP, `11` reserved (unpack error)   |
/// | 61      | `nak`       | NAK flag; only with opcode `01` (else unpack error)               |
/// | 60      | `fack`      | FACK (forced ACK): the receiver ACKs at once, bypassing ACK MERGE |
/// | 59..=58 | reserved    | zero                                                              |
/// | 57..=48 | `qp`        | QP id `{XPU_ID[7:0], BANK[1:0]}`                                  |
/// | 47..=44 | reserved    | zero                                                              |
/// | 43..=32 | `psn`       | data: its PSN; ACK/NAK: `ack_psn` (next expected); CNP: 0 default |
/// | 31..=0  | `timestamp` | send time in ns modulo 2^32 (wraps every ~4.29 s), for RTT        |
///
/// The upper 16 bits therefore read `{opcode, nak, fack, 00, qp}`, the next 16 `{0000, psn}` and
/// the low 32 the timestamp, so a hex dump of the raw word is legible.
///
/// Every `Rh` that can be built is valid (a NAK flag only on `ack`), so [`pack`](Rh::pack) cannot
/// fail and `Rh::unpack(rh.pack()) == Ok(rh)`. The default is a data header, QP 0, PSN 0.
///
/// Serde: a map by field name, e.g. `{opcode: ack, qp: 13, psn: 4094}`; missing fields take the
/// default, unknown fields and out-of-range values are refused. Traced as `opcode` 2, `nak` 1,
/// `fack` 1, `qp` 10, `psn` 12, `timestamp` 32 and `raw` 64 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RhFields", into = "RhFields")]
pub struct Rh {
    opcode: Opcode,
    nak: bool,
    fack: bool,
    qp: QpId,
    psn: Psn,
    timestamp: u32,
}

impl Rh {
    /// Width of the packed header in bits.
    pub const BITS: u32 = 64;
    /// Width of the timestamp field in bits.
    pub const TIMESTAMP_BITS: u32 = 32;
    /// Size of the header on the wire, bytes.
    pub const BYTES: u32 = 8;

    /// A data header for `qp` carrying `psn`.
    pub const fn data(qp: QpId, psn: Psn) -> Rh {
        Rh::plain(Opcode::Data, qp, psn)
    }

    /// A cumulative ACK for `qp`: every PSN before `ack_psn` is acknowledged.
    pub const fn ack(qp: QpId, ack_psn: Psn) -> Rh {
        Rh::plain(Opcode::Ack, qp, ack_psn)
    }

    /// A NAK for `qp`: opcode `ack` with the NAK flag; `ack_psn` is the receiver's EPSN, the
    /// first PSN to resend (everything before it is acknowledged).
    pub const fn nak(qp: QpId, ack_psn: Psn) -> Rh {
        Rh {
            nak: true,
            ..Rh::plain(Opcode::Ack, qp, ack_psn)
        }
    }

    /// A CNP for `qp` (PSN 0).
    pub const fn cnp(qp: QpId) -> Rh {
        Rh::plain(Opcode::Cnp, qp, Psn::ZERO)
    }

    const fn plain(opcode: Opcode, qp: QpId, psn: Psn) -> Rh {
        Rh {
            opcode,
            nak: false,
            fack: false,
            qp,
            psn,
            timestamp: 0,
        }
    }

    /// This header with the FACK flag set or cleared.
    #[must_use]
    pub const fn with_fack(self, fack: bool) -> Rh {
        Rh { fack, ..self }
    }

    /// This header with the timestamp field set (ns modulo 2^32; see [`Rh::timestamp_from_ns`]).
    #[must_use]
    pub const fn with_timestamp(self, timestamp: u32) -> Rh {
        Rh { timestamp, ..self }
    }

    /// This header with another PSN (or `ack_psn`).
    #[must_use]
    pub const fn with_psn(self, psn: Psn) -> Rh {
        Rh { psn, ..self }
    }

    /// This header with another QP id.
    #[must_use]
    pub const fn with_qp(self, qp: QpId) -> Rh {
        Rh { qp, ..self }
    }

    /// The timestamp field value for time `ns` (cycle number at 1 GHz): `ns mod 2^32`.
    pub const fn timestamp_from_ns(ns: u64) -> u32 {
        ns as u32
    }

    /// The opcode.
    pub const fn opcode(self) -> Opcode {
        self.opcode
    }

    /// Whether this is a NAK (opcode `ack` with the NAK flag).
    pub const fn is_nak(self) -> bool {
        self.nak
    }

    /// Whether the FACK flag is set.
    pub const fn is_fack(self) -> bool {
        self.fack
    }

    /// The QP id.
    pub const fn qp(self) -> QpId {
        self.qp
    }

    /// The PSN field: the packet's PSN for data, `ack_psn` for ACK/NAK.
    pub const fn psn(self) -> Psn {
        self.psn
    }

    /// The timestamp field (ns modulo 2^32).
    pub const fn timestamp(self) -> u32 {
        self.timestamp
    }

    /// The 64-bit word in hwsim's layout (see the table on [`Rh`]).
    pub fn pack(self) -> u64 {
        RhWord::new()
            .with_opcode(self.opcode)
            .with_nak(self.nak)
            .with_fack(self.fack)
            .with_qp(self.qp.value())
            .with_psn(self.psn.value())
            .with_timestamp(self.timestamp)
            .into()
    }

    /// Decodes a 64-bit word. Refuses the reserved opcode `0b11`, any reserved bit set, and a NAK
    /// flag on an opcode other than `ack`.
    pub fn unpack(raw: u64) -> Result<Rh, PortsError> {
        let word = RhWord::from(raw);
        let opcode = word.opcode_or_err().map_err(|_| PortsError::RhReservedOpcode { raw })?;
        let reserved = raw & reserved_mask();
        if reserved != 0 {
            return Err(PortsError::RhReservedBits { raw, bits: reserved });
        }
        if word.nak() && opcode != Opcode::Ack {
            return Err(PortsError::RhNakWithoutAck { opcode, raw });
        }
        Ok(Rh {
            opcode,
            nak: word.nak(),
            fack: word.fack(),
            qp: QpId::new(word.qp())?,
            psn: Psn::new(word.psn())?,
            timestamp: word.timestamp(),
        })
    }
}

/// The reserved bits of the layout, derived from `RhWord` so the layout stays in one place.
fn reserved_mask() -> u64 {
    RhWord::new()
        .with_reserved_44(u8::MAX >> 4)
        .with_reserved_58(u8::MAX >> 6)
        .into()
}

impl TryFrom<u64> for Rh {
    type Error = PortsError;
    fn try_from(raw: u64) -> Result<Self, Self::Error> {
        Rh::unpack(raw)
    }
}

impl From<Rh> for u64 {
    fn from(rh: Rh) -> u64 {
        rh.pack()
    }
}

impl Trace for Rh {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 7] = [
            TraceField::bits("opcode", 2),
            TraceField::bits("nak", 1),
            TraceField::bits("fack", 1),
            TraceField::bits("qp", QpId::BITS),
            TraceField::bits("psn", Psn::BITS),
            TraceField::bits("timestamp", Rh::TIMESTAMP_BITS),
            TraceField::bits("raw", Rh::BITS),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.opcode.bits().into());
        out[1] = TraceValue::Bits(self.nak.into());
        out[2] = TraceValue::Bits(self.fack.into());
        out[3] = TraceValue::Bits(self.qp.value().into());
        out[4] = TraceValue::Bits(self.psn.value().into());
        out[5] = TraceValue::Bits(self.timestamp.into());
        out[6] = TraceValue::Bits(self.pack());
    }
}

/// The serde form of [`Rh`]: its fields by name, each defaulting.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RhFields {
    opcode: Opcode,
    nak: bool,
    fack: bool,
    qp: QpId,
    psn: Psn,
    timestamp: u32,
}

impl TryFrom<RhFields> for Rh {
    type Error = PortsError;
    fn try_from(f: RhFields) -> Result<Self, Self::Error> {
        if f.nak && f.opcode != Opcode::Ack {
            // Report it exactly as unpack would for the same fields.
            let raw = Rh::plain(f.opcode, f.qp, f.psn)
                .with_fack(f.fack)
                .with_timestamp(f.timestamp)
                .pack()
                | u64::from(RhWord::new().with_nak(true));
            return Err(PortsError::RhNakWithoutAck { opcode: f.opcode, raw });
        }
        Ok(Rh {
            opcode: f.opcode,
            nak: f.nak,
            fack: f.fack,
            qp: f.qp,
            psn: f.psn,
            timestamp: f.timestamp,
        })
    }
}

impl From<Rh> for RhFields {
    fn from(rh: Rh) -> RhFields {
        RhFields {
            opcode: rh.opcode,
            nak: rh.nak,
            fack: rh.fack,
            qp: rh.qp,
            psn: rh.psn,
            timestamp: rh.timestamp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn qp(v: u16) -> QpId {
        QpId::new(v).unwrap()
    }
    fn psn(v: u16) -> Psn {
        Psn::new(v).unwrap()
    }

    /// The doc table, MSB first, as (field, high bit, low bit): checked against the bitfield.
    #[test]
    fn layout_table_matches() {
        let all_ones = |hi: u32, lo: u32| ((u64::MAX >> (63 - hi)) >> lo) << lo;
        let w = |f: fn(RhWord) -> RhWord| -> u64 { f(RhWord::new()).into() };
        assert_eq!(w(|x| x.with_opcode(Opcode::Cnp)), 0b10 << 62);
        assert_eq!(w(|x| x.with_nak(true)), 1 << 61);
        assert_eq!(w(|x| x.with_fack(true)), 1 << 60);
        assert_eq!(w(|x| x.with_reserved_58(3)), all_ones(59, 58));
        assert_eq!(w(|x| x.with_qp(1023)), all_ones(57, 48));
        assert_eq!(w(|x| x.with_reserved_44(15)), all_ones(47, 44));
        assert_eq!(w(|x| x.with_psn(4095)), all_ones(43, 32));
        assert_eq!(w(|x| x.with_timestamp(u32::MAX)), all_ones(31, 0));
        assert_eq!(reserved_mask(), all_ones(59, 58) | all_ones(47, 44));
    }

    #[test]
    fn pack_known_words() {
        assert_eq!(Rh::default(), Rh::data(qp(0), psn(0)));
        assert_eq!(Rh::default().pack(), 0);
        assert_eq!(
            Rh::data(qp(13), psn(4094)).with_timestamp(0xDEAD_BEEF).pack(),
            0x000D_0FFE_DEAD_BEEF
        );
        assert_eq!(Rh::ack(qp(1023), psn(7)).pack(), 0x43FF_0007_0000_0000);
        assert_eq!(Rh::nak(qp(5), psn(7)).pack(), 0x6005_0007_0000_0000);
        assert_eq!(Rh::cnp(qp(26)).with_fack(true).pack(), 0x901A_0000_0000_0000);
    }

    #[test]
    fn getters() {
        let rh = Rh::nak(qp(26), psn(7)).with_fack(true).with_timestamp(99);
        assert_eq!(rh.opcode(), Opcode::Ack);
        assert!(rh.is_nak());
        assert!(rh.is_fack());
        assert_eq!(rh.qp(), qp(26));
        assert_eq!(rh.psn(), psn(7));
        assert_eq!(rh.timestamp(), 99);
        assert!(!Rh::ack(qp(1), psn(1)).is_nak());
        assert_eq!(Rh::timestamp_from_ns((1 << 32) + 5), 5);
    }

    #[test]
    fn unpack_errors_pinned() {
        assert_eq!(
            Rh::unpack(0xC000_0000_0000_0000).unwrap_err().to_string(),
            "RH opcode 0b11 is reserved (raw word 0xc000000000000000)"
        );
        assert_eq!(
            Rh::unpack(0x0400_0000_0000_0001).unwrap_err().to_string(),
            "RH reserved bits 0x0400000000000000 are set (raw word 0x0400000000000001)"
        );
        assert_eq!(
            Rh::unpack(0x0000_1000_0000_0000).unwrap_err().to_string(),
            "RH reserved bits 0x0000100000000000 are set (raw word 0x0000100000000000)"
        );
        assert_eq!(
            Rh::unpack(0xA000_0000_0000_0000).unwrap_err().to_string(),
            "RH NAK flag set with opcode cnp; only ack may carry NAK (raw word 0xa000000000000000)"
        );
    }

    #[test]
    fn trace_fields() {
        let widths: Vec<_> = Rh::fields().iter().map(|f| (f.name, f.kind)).collect();
        use hwsim_hw::value::TraceKind::Bits;
        assert_eq!(
            widths,
            [
                ("opcode", Bits(2)),
                ("nak", Bits(1)),
                ("fack", Bits(1)),
                ("qp", Bits(10)),
                ("psn", Bits(12)),
                ("timestamp", Bits(32)),
                ("raw", Bits(64)),
            ]
        );
        let rh = Rh::nak(qp(5), psn(7)).with_timestamp(3);
        let mut out = [TraceValue::default(); 7];
        rh.sample(&mut out);
        assert_eq!(
            out.map(|v| match v {
                TraceValue::Bits(b) => b,
                TraceValue::Real(_) => unreachable!(),
            }),
            [1, 1, 0, 5, 7, 3, rh.pack()]
        );
    }

    #[test]
    fn serde_by_field_name() {
        let rh: Rh = serde_yaml::from_str("{opcode: ack, qp: 13, psn: 4094}").unwrap();
        assert_eq!(rh, Rh::ack(qp(13), psn(4094)));
        let rh: Rh = serde_yaml::from_str("{}").unwrap();
        assert_eq!(rh, Rh::default());
        let full = Rh::nak(qp(5), psn(9)).with_fack(true).with_timestamp(77);
        let text = serde_yaml::to_string(&full).unwrap();
        assert_eq!(
            text,
            "opcode: ack\nnak: true\nfack: true\nqp: 5\npsn: 9\ntimestamp: 77\n"
        );
        assert_eq!(serde_yaml::from_str::<Rh>(&text).unwrap(), full);
        assert_eq!(
            serde_yaml::from_str::<Rh>("opcode: cnp\nqp: 26").unwrap(),
            Rh::cnp(qp(26))
        );
    }

    #[test]
    fn serde_refusals() {
        let err = serde_yaml::from_str::<Rh>("{opcode: ack, qpn: 13}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `qpn`"), "{err}");
        let err = serde_yaml::from_str::<Rh>("{psn: 4096}").unwrap_err().to_string();
        assert!(err.contains("PSN 4096 out of range 0..=4095"), "{err}");
        let err = serde_yaml::from_str::<Rh>("{opcode: reserved}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `reserved`"), "{err}");
        let err = serde_yaml::from_str::<Rh>("{opcode: data, nak: true}")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("RH NAK flag set with opcode data; only ack may carry NAK"),
            "{err}"
        );
    }

    fn any_rh() -> impl Strategy<Value = Rh> {
        (
            0u8..3,
            any::<bool>(),
            any::<bool>(),
            0u16..1024,
            0u16..4096,
            any::<u32>(),
        )
            .prop_map(|(op, nak, fack, q, p, ts)| {
                let base = match op {
                    0 => Rh::data(qp(q), psn(p)),
                    1 if nak => Rh::nak(qp(q), psn(p)),
                    1 => Rh::ack(qp(q), psn(p)),
                    _ => Rh::cnp(qp(q)).with_psn(psn(p)),
                };
                base.with_fack(fack).with_timestamp(ts)
            })
    }

    proptest! {
        #[test]
        fn pack_unpack_round_trip(rh in any_rh()) {
            prop_assert_eq!(Rh::unpack(rh.pack()), Ok(rh));
            let raw = rh.pack();
            prop_assert_eq!(raw & reserved_mask(), 0);
            // Reference model of the layout table.
            let model = (u64::from(rh.opcode().bits()) << 62)
                | (u64::from(rh.is_nak()) << 61)
                | (u64::from(rh.is_fack()) << 60)
                | (u64::from(rh.qp().value()) << 48)
                | (u64::from(rh.psn().value()) << 32)
                | u64::from(rh.timestamp());
            prop_assert_eq!(raw, model);
        }

        #[test]
        fn unpack_pack_round_trip(raw in any::<u64>()) {
            // Every word either decodes and re-packs to itself, or is refused.
            if let Ok(rh) = Rh::unpack(raw) {
                prop_assert_eq!(rh.pack(), raw);
            } else {
                let bad_opcode = raw >> 62 == 0b11;
                let bad_reserved = raw & reserved_mask() != 0;
                let bad_nak = (raw >> 61) & 1 == 1 && raw >> 62 != 0b01;
                prop_assert!(bad_opcode || bad_reserved || bad_nak);
            }
        }

        #[test]
        fn serde_round_trip(rh in any_rh()) {
            let text = serde_yaml::to_string(&rh).unwrap();
            prop_assert_eq!(serde_yaml::from_str::<Rh>(&text).unwrap(), rh);
        }
    }
}
