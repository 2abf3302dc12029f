//! Link-level header fields a switch reads (seed 003 «报文格式与交换机可见性», «Standard 格式的交换机
//! 行为», «AFH 格式的交换机行为», «PFC 优先级映射», «ECN 与拥塞通知»; seed 002 «名词定义» ECN, TC, VLAN).
//!
//! - IP ToS `{DSCP[5:0], ECN[1:0]}` (Standard format only): [`Tos`], [`Ecn`].
//! - VLAN tag control information `{PCP[2:0], DEI, VID[11:0]}`: [`VlanTag`].
//! - Traffic Class, 8 bits, VC information in `TC[7:2]` (AFH formats, in the MAC SA high byte):
//!   [`TrafficClass`].
//! - MAC address, 48 bits: [`MacAddr`].
//!
//! The packed layouts of ToS and TCI are standard (RFC 3168, IEEE 802.1Q) and written once, as
//! `modular-bitfield` structs.

use std::fmt;
use std::str::FromStr;

use hwsim_hw::value::{Trace, TraceField, TraceValue};
use modular_bitfield::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::PortsError;

/// The 2-bit ECN field of the IP ToS byte (RFC 3168).
///
/// Serialized as `not_ect`, `ect1`, `ect0`, `ce`. Traced as 2 bits.
#[derive(Specifier, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ecn {
    /// `00`: the sender does not support ECN; a switch never marks it.
    #[default]
    NotEct = 0b00,
    /// `01`: ECN-capable transport (1).
    Ect1 = 0b01,
    /// `10`: ECN-capable transport (0).
    Ect0 = 0b10,
    /// `11`: congestion experienced; the receiver answers with a CNP.
    Ce = 0b11,
}

impl Ecn {
    /// The 2-bit encoding.
    pub const fn bits(self) -> u8 {
        self as u8
    }

    /// The codepoint for a 2-bit value; values above 3 are an error.
    pub const fn from_bits(bits: u8) -> Result<Ecn, PortsError> {
        match bits {
            0b00 => Ok(Ecn::NotEct),
            0b01 => Ok(Ecn::Ect1),
            0b10 => Ok(Ecn::Ect0),
            0b11 => Ok(Ecn::Ce),
            _ => Err(PortsError::OutOfRange {
                field: "ECN",
                value: bits as u64,
                min: 0,
                max: 3,
            }),
        }
    }

    /// ECT(0) or ECT(1): a switch may mark this packet.
    pub const fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }

    /// Congestion experienced.
    pub const fn is_ce(self) -> bool {
        matches!(self, Ecn::Ce)
    }
}

impl Trace for Ecn {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", 2)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.bits().into());
    }
}

#[bitfield]
#[repr(u8)]
#[derive(Clone, Copy)]
struct TosByte {
    ecn: Ecn,
    dscp: B6,
}

/// The IP ToS byte `{DSCP[5:0], ECN[1:0]}` (ECN in the low 2 bits).
///
/// Serde: `{dscp: 26, ecn: ect0}`, fields default to 0 / `not_ect`, unknown fields refused.
/// Traced as `dscp` 6 and `ecn` 2 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "TosFields", into = "TosFields")]
pub struct Tos {
    dscp: u8,
    ecn: Ecn,
}

impl Tos {
    /// Largest DSCP value.
    pub const MAX_DSCP: u8 = 63;

    /// A ToS byte; DSCP above 63 is an error.
    pub const fn new(dscp: u8, ecn: Ecn) -> Result<Tos, PortsError> {
        if dscp > Self::MAX_DSCP {
            return Err(PortsError::OutOfRange {
                field: "DSCP",
                value: dscp as u64,
                min: 0,
                max: Self::MAX_DSCP as u64,
            });
        }
        Ok(Tos { dscp, ecn })
    }

    /// DSCP, 0..=63.
    pub const fn dscp(self) -> u8 {
        self.dscp
    }

    /// The ECN codepoint.
    pub const fn ecn(self) -> Ecn {
        self.ecn
    }

    /// This ToS with another ECN codepoint.
    #[must_use]
    pub const fn with_ecn(self, ecn: Ecn) -> Tos {
        Tos { ecn, ..self }
    }

    /// What a congested switch writes (seed 003 «ECN 与拥塞通知»): ECT(0)/ECT(1) become CE;
    /// Not-ECT and CE stay as they are.
    #[must_use]
    pub const fn marked(self) -> Tos {
        if self.ecn.is_ect() {
            self.with_ecn(Ecn::Ce)
        } else {
            self
        }
    }

    /// The 8-bit ToS byte.
    pub fn pack(self) -> u8 {
        TosByte::new().with_dscp(self.dscp).with_ecn(self.ecn).into()
    }

    /// Decodes a ToS byte; every byte is valid.
    pub fn unpack(byte: u8) -> Tos {
        let b = TosByte::from(byte);
        // Both fields exactly fill the byte and every 2-bit ECN value is a variant.
        Tos {
            dscp: b.dscp(),
            ecn: b.ecn(),
        }
    }
}

impl Trace for Tos {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [TraceField::bits("dscp", 6), TraceField::bits("ecn", 2)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.dscp.into());
        out[1] = TraceValue::Bits(self.ecn.bits().into());
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TosFields {
    dscp: u8,
    ecn: Ecn,
}

impl TryFrom<TosFields> for Tos {
    type Error = PortsError;
    fn try_from(f: TosFields) -> Result<Self, Self::Error> {
        Tos::new(f.dscp, f.ecn)
    }
}

impl From<Tos> for TosFields {
    fn from(t: Tos) -> Self {
        TosFields {
            dscp: t.dscp,
            ecn: t.ecn,
        }
    }
}

#[bitfield]
#[repr(u16)]
#[derive(Clone, Copy)]
struct Tci {
    vid: B12,
    dei: bool,
    pcp: B3,
}

/// An IEEE 802.1Q VLAN tag's TCI `{PCP[2:0], DEI, VID[11:0]}` (the TPID 0x8100 is implied).
///
/// VID 0xFFF is reserved by 802.1Q, so hwsim refuses it (allowed VIDs 0..=4094). In CBFC mode the
/// PCP maps directly to the VC (seed 003 «PFC 优先级映射»: `pri[2:0]` → `VC[2:0]`).
///
/// Serde: `{pcp: 3, dei: false, vid: 100}`, fields default to 0, unknown fields refused. Traced
/// as `pcp` 3, `dei` 1 and `vid` 12 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "VlanFields", into = "VlanFields")]
pub struct VlanTag {
    pcp: u8,
    dei: bool,
    vid: u16,
}

impl VlanTag {
    /// The 802.1Q tag protocol identifier.
    pub const TPID: u16 = 0x8100;
    /// Largest PCP.
    pub const MAX_PCP: u8 = 7;
    /// Largest usable VID (0xFFF is reserved).
    pub const MAX_VID: u16 = 0xFFE;

    /// A VLAN tag; PCP above 7 or VID above 4094 is an error.
    pub const fn new(pcp: u8, dei: bool, vid: u16) -> Result<VlanTag, PortsError> {
        if pcp > Self::MAX_PCP {
            return Err(PortsError::OutOfRange {
                field: "VLAN PCP",
                value: pcp as u64,
                min: 0,
                max: Self::MAX_PCP as u64,
            });
        }
        if vid > Self::MAX_VID {
            return Err(PortsError::OutOfRange {
                field: "VLAN VID",
                value: vid as u64,
                min: 0,
                max: Self::MAX_VID as u64,
            });
        }
        Ok(VlanTag { pcp, dei, vid })
    }

    /// Priority code point, 0..=7.
    pub const fn pcp(self) -> u8 {
        self.pcp
    }

    /// Drop eligible indicator.
    pub const fn dei(self) -> bool {
        self.dei
    }

    /// VLAN id, 0..=4094.
    pub const fn vid(self) -> u16 {
        self.vid
    }

    /// The CBFC VC this tag selects: `pri[2:0]` maps directly to `VC[2:0]`.
    pub const fn cbfc_vc(self) -> u8 {
        self.pcp
    }

    /// The 16-bit TCI.
    pub fn pack(self) -> u16 {
        Tci::new()
            .with_pcp(self.pcp)
            .with_dei(self.dei)
            .with_vid(self.vid)
            .into()
    }

    /// Decodes a TCI; the reserved VID 0xFFF is an error.
    pub fn unpack(tci: u16) -> Result<VlanTag, PortsError> {
        let t = Tci::from(tci);
        VlanTag::new(t.pcp(), t.dei(), t.vid())
    }
}

impl Trace for VlanTag {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 3] = [
            TraceField::bits("pcp", 3),
            TraceField::bits("dei", 1),
            TraceField::bits("vid", 12),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.pcp.into());
        out[1] = TraceValue::Bits(self.dei.into());
        out[2] = TraceValue::Bits(self.vid.into());
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct VlanFields {
    pcp: u8,
    dei: bool,
    vid: u16,
}

impl TryFrom<VlanFields> for VlanTag {
    type Error = PortsError;
    fn try_from(f: VlanFields) -> Result<Self, Self::Error> {
        VlanTag::new(f.pcp, f.dei, f.vid)
    }
}

impl From<VlanTag> for VlanFields {
    fn from(v: VlanTag) -> Self {
        VlanFields {
            pcp: v.pcp,
            dei: v.dei,
            vid: v.vid,
        }
    }
}

/// The 8-bit AFH Traffic Class, embedded in the MAC SA high byte; `TC[7:2]` carry the traffic
/// type / priority / VC information, `TC[1:0]` are not described by the seeds (kept as given).
///
/// Serialized as a plain integer 0..=255; traced as one 8-bit field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u8")]
pub struct TrafficClass(u8);

impl TrafficClass {
    /// Largest value of the VC part, `TC[7:2]`.
    pub const MAX_VC: u8 = 63;

    /// A traffic class from its 8 bits; every byte is valid.
    pub const fn from_bits(bits: u8) -> TrafficClass {
        TrafficClass(bits)
    }

    /// A traffic class `{vc[5:0], low[1:0]}`; `vc` above 63 or `low` above 3 is an error.
    pub const fn from_vc(vc: u8, low: u8) -> Result<TrafficClass, PortsError> {
        if vc > Self::MAX_VC {
            return Err(PortsError::OutOfRange {
                field: "TC VC",
                value: vc as u64,
                min: 0,
                max: Self::MAX_VC as u64,
            });
        }
        if low > 3 {
            return Err(PortsError::OutOfRange {
                field: "TC[1:0]",
                value: low as u64,
                min: 0,
                max: 3,
            });
        }
        Ok(TrafficClass((vc << 2) | low))
    }

    /// The 8 bits.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The VC information, `TC[7:2]`.
    pub const fn vc(self) -> u8 {
        self.0 >> 2
    }

    /// `TC[1:0]`.
    pub const fn low_bits(self) -> u8 {
        self.0 & 0b11
    }
}

impl TryFrom<u64> for TrafficClass {
    type Error = PortsError;
    fn try_from(value: u64) -> Result<Self, Self::Error> {
        u8::try_from(value)
            .map(TrafficClass)
            .map_err(|_| PortsError::out_of_range("TC", value, 255))
    }
}

impl TryFrom<u32> for TrafficClass {
    type Error = PortsError;
    fn try_from(value: u32) -> Result<Self, Self::Error> {
        TrafficClass::try_from(u64::from(value))
    }
}

impl TryFrom<u16> for TrafficClass {
    type Error = PortsError;
    fn try_from(value: u16) -> Result<Self, Self::Error> {
        TrafficClass::try_from(u64::from(value))
    }
}

impl From<TrafficClass> for u8 {
    fn from(tc: TrafficClass) -> u8 {
        tc.0
    }
}

impl Trace for TrafficClass {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", 8)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.0.into());
    }
}

/// A 48-bit MAC address (the switch forwards on the DA).
///
/// Displayed and serialized as `aa:bb:cc:dd:ee:ff`; deserialized from that form or from an
/// integer. Traced as one 48-bit field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MacAddr(u64);

impl MacAddr {
    /// Width in bits.
    pub const BITS: u32 = 48;
    /// The largest address, ff:ff:ff:ff:ff:ff (broadcast).
    pub const BROADCAST: MacAddr = MacAddr((1 << Self::BITS) - 1);

    /// An address from the low 48 bits of `value`; wider values are an error.
    pub const fn new(value: u64) -> Result<MacAddr, PortsError> {
        if value > Self::BROADCAST.0 {
            Err(PortsError::MacTooWide { value })
        } else {
            Ok(MacAddr(value))
        }
    }

    /// An address from its six octets, first octet first on the wire.
    pub const fn from_octets(o: [u8; 6]) -> MacAddr {
        MacAddr(
            (o[0] as u64) << 40
                | (o[1] as u64) << 32
                | (o[2] as u64) << 24
                | (o[3] as u64) << 16
                | (o[4] as u64) << 8
                | o[5] as u64,
        )
    }

    /// The six octets, first octet first.
    pub const fn octets(self) -> [u8; 6] {
        let b = self.0.to_be_bytes();
        [b[2], b[3], b[4], b[5], b[6], b[7]]
    }

    /// The address as an integer, 0..2^48.
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = self.octets();
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            o[0], o[1], o[2], o[3], o[4], o[5]
        )
    }
}

impl FromStr for MacAddr {
    type Err = PortsError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || PortsError::MacParse { text: text.to_owned() };
        let mut octets = [0u8; 6];
        let mut parts = text.split(':');
        for octet in &mut octets {
            let part = parts.next().ok_or_else(bad)?;
            if part.len() != 2 {
                return Err(bad());
            }
            *octet = u8::from_str_radix(part, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(MacAddr::from_octets(octets))
    }
}

impl TryFrom<u64> for MacAddr {
    type Error = PortsError;
    fn try_from(value: u64) -> Result<Self, Self::Error> {
        MacAddr::new(value)
    }
}

impl From<MacAddr> for u64 {
    fn from(mac: MacAddr) -> u64 {
        mac.0
    }
}

impl Serialize for MacAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MacAddr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = MacAddr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a MAC address aa:bb:cc:dd:ee:ff or a 48-bit integer")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MacAddr, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<MacAddr, E> {
                MacAddr::new(v).map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl Trace for MacAddr {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", MacAddr::BITS)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ecn_encodings() {
        assert_eq!(Ecn::NotEct.bits(), 0b00);
        assert_eq!(Ecn::Ect1.bits(), 0b01);
        assert_eq!(Ecn::Ect0.bits(), 0b10);
        assert_eq!(Ecn::Ce.bits(), 0b11);
        for b in 0..4 {
            assert_eq!(Ecn::from_bits(b).unwrap().bits(), b);
        }
        assert_eq!(Ecn::from_bits(4).unwrap_err().to_string(), "ECN 4 out of range 0..=3");
        assert!(Ecn::Ect0.is_ect() && Ecn::Ect1.is_ect());
        assert!(!Ecn::NotEct.is_ect() && !Ecn::Ce.is_ect());
        assert!(Ecn::Ce.is_ce());
    }

    #[test]
    fn tos_layout_and_marking() {
        // DSCP 26 (AF31), ECT(0): 26 << 2 | 0b10 = 0x6a.
        let tos = Tos::new(26, Ecn::Ect0).unwrap();
        assert_eq!(tos.pack(), 0x6a);
        assert_eq!(Tos::unpack(0x6b), Tos::new(26, Ecn::Ce).unwrap());
        assert_eq!(tos.marked().ecn(), Ecn::Ce);
        assert_eq!(Tos::new(1, Ecn::NotEct).unwrap().marked().ecn(), Ecn::NotEct);
        assert_eq!(
            Tos::new(64, Ecn::Ce).unwrap_err().to_string(),
            "DSCP 64 out of range 0..=63"
        );
    }

    #[test]
    fn vlan_layout_and_errors() {
        let tag = VlanTag::new(5, true, 0x123).unwrap();
        // PCP 101, DEI 1, VID 0x123.
        assert_eq!(tag.pack(), 0b1011_0001_0010_0011);
        assert_eq!(VlanTag::unpack(0xB123).unwrap(), tag);
        assert_eq!(tag.cbfc_vc(), 5);
        assert_eq!(
            VlanTag::unpack(0x0FFF).unwrap_err().to_string(),
            "VLAN VID 4095 out of range 0..=4094"
        );
        assert_eq!(
            VlanTag::new(8, false, 1).unwrap_err().to_string(),
            "VLAN PCP 8 out of range 0..=7"
        );
    }

    #[test]
    fn traffic_class() {
        let tc = TrafficClass::from_vc(5, 2).unwrap();
        assert_eq!(tc.bits(), 0b0001_0110);
        assert_eq!(tc.vc(), 5);
        assert_eq!(tc.low_bits(), 2);
        assert_eq!(TrafficClass::from_bits(0xFF).vc(), 63);
        assert_eq!(
            TrafficClass::from_vc(64, 0).unwrap_err().to_string(),
            "TC VC 64 out of range 0..=63"
        );
        assert_eq!(
            TrafficClass::from_vc(1, 4).unwrap_err().to_string(),
            "TC[1:0] 4 out of range 0..=3"
        );
        assert_eq!(
            TrafficClass::try_from(256u32).unwrap_err().to_string(),
            "TC 256 out of range 0..=255"
        );
    }

    #[test]
    fn mac_display_parse_errors() {
        let mac = MacAddr::new(0x0200_0000_1a2b).unwrap();
        assert_eq!(mac.to_string(), "02:00:00:00:1a:2b");
        assert_eq!("02:00:00:00:1A:2b".parse::<MacAddr>().unwrap(), mac);
        assert_eq!(mac.octets(), [2, 0, 0, 0, 0x1a, 0x2b]);
        assert_eq!(MacAddr::BROADCAST.to_string(), "ff:ff:ff:ff:ff:ff");
        assert_eq!(
            MacAddr::new(1 << 48).unwrap_err().to_string(),
            "MAC address 0x1000000000000 does not fit in 48 bits"
        );
        for bad in [
            "02:00:00:00:1a",
            "02:00:00:00:1a:2b:3c",
            "2:00:00:00:1a:2b",
            "zz:00:00:00:00:00",
        ] {
            assert_eq!(
                bad.parse::<MacAddr>().unwrap_err().to_string(),
                format!("MAC address {bad:?} is not of the form aa:bb:cc:dd:ee:ff")
            );
        }
    }

    #[test]
    fn trace_widths() {
        use hwsim_hw::value::TraceKind::Bits;
        let kinds = |f: &[TraceField]| f.iter().map(|x| (x.name, x.kind)).collect::<Vec<_>>();
        assert_eq!(kinds(Ecn::fields()), [("", Bits(2))]);
        assert_eq!(kinds(Tos::fields()), [("dscp", Bits(6)), ("ecn", Bits(2))]);
        assert_eq!(
            kinds(VlanTag::fields()),
            [("pcp", Bits(3)), ("dei", Bits(1)), ("vid", Bits(12))]
        );
        assert_eq!(kinds(TrafficClass::fields()), [("", Bits(8))]);
        assert_eq!(kinds(MacAddr::fields()), [("", Bits(48))]);
        let mut out = [TraceValue::default(); 3];
        VlanTag::new(7, true, 4094).unwrap().sample(&mut out);
        assert_eq!(out, [TraceValue::Bits(7), TraceValue::Bits(1), TraceValue::Bits(4094)]);
        let mut out = [TraceValue::default(); 2];
        Tos::new(63, Ecn::Ce).unwrap().sample(&mut out);
        assert_eq!(out, [TraceValue::Bits(63), TraceValue::Bits(3)]);
    }

    #[test]
    fn serde_forms() {
        let tos: Tos = serde_yaml::from_str("{dscp: 26, ecn: ect0}").unwrap();
        assert_eq!(tos, Tos::new(26, Ecn::Ect0).unwrap());
        assert_eq!(serde_yaml::to_string(&tos).unwrap(), "dscp: 26\necn: ect0\n");
        for (name, ecn) in [
            ("not_ect", Ecn::NotEct),
            ("ect1", Ecn::Ect1),
            ("ect0", Ecn::Ect0),
            ("ce", Ecn::Ce),
        ] {
            assert_eq!(serde_yaml::from_str::<Ecn>(name).unwrap(), ecn);
            assert_eq!(serde_yaml::to_string(&ecn).unwrap(), format!("{name}\n"));
        }
        let err = serde_yaml::from_str::<Tos>("{dscp: 64}").unwrap_err().to_string();
        assert!(err.contains("DSCP 64 out of range 0..=63"), "{err}");
        let err = serde_yaml::from_str::<Tos>("{dscp: 1, ecm: ce}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `ecm`"), "{err}");

        let tag: VlanTag = serde_yaml::from_str("{pcp: 3, vid: 100}").unwrap();
        assert_eq!(tag, VlanTag::new(3, false, 100).unwrap());
        assert_eq!(
            serde_yaml::from_str::<VlanTag>(&serde_yaml::to_string(&tag).unwrap()).unwrap(),
            tag
        );
        let err = serde_yaml::from_str::<VlanTag>("{vid: 4095}").unwrap_err().to_string();
        assert!(err.contains("VLAN VID 4095 out of range 0..=4094"), "{err}");

        assert_eq!(serde_yaml::from_str::<TrafficClass>("22").unwrap().vc(), 5);
        let err = serde_yaml::from_str::<TrafficClass>("300").unwrap_err().to_string();
        assert!(err.contains("TC 300 out of range 0..=255"), "{err}");

        let mac: MacAddr = serde_yaml::from_str("\"02:00:00:00:00:01\"").unwrap();
        assert_eq!(mac.value(), 0x0200_0000_0001);
        assert_eq!(serde_yaml::to_string(&mac).unwrap(), "02:00:00:00:00:01\n");
        assert_eq!(serde_yaml::from_str::<MacAddr>("5").unwrap().value(), 5);
        let err = serde_yaml::from_str::<MacAddr>("02:00").unwrap_err().to_string();
        assert!(err.contains("is not of the form aa:bb:cc:dd:ee:ff"), "{err}");
    }

    fn any_ecn() -> impl Strategy<Value = Ecn> {
        (0u8..4).prop_map(|b| Ecn::from_bits(b).unwrap())
    }

    proptest! {
        #[test]
        fn tos_round_trip(dscp in 0u8..64, ecn in any_ecn(), byte in any::<u8>()) {
            let tos = Tos::new(dscp, ecn).unwrap();
            prop_assert_eq!(Tos::unpack(tos.pack()), tos);
            prop_assert_eq!(tos.pack(), dscp << 2 | ecn.bits());
            prop_assert_eq!(Tos::unpack(byte).pack(), byte);
            prop_assert_eq!(Tos::new(dscp + 64, ecn).is_err(), true);
        }

        #[test]
        fn vlan_round_trip(pcp in 0u8..8, dei in any::<bool>(), vid in 0u16..4095, tci in any::<u16>()) {
            let tag = VlanTag::new(pcp, dei, vid).unwrap();
            prop_assert_eq!(VlanTag::unpack(tag.pack()), Ok(tag));
            prop_assert_eq!(tag.pack(), u16::from(pcp) << 13 | u16::from(dei) << 12 | vid);
            match VlanTag::unpack(tci) {
                Ok(t) => prop_assert_eq!(t.pack(), tci),
                Err(_) => prop_assert_eq!(tci & 0xFFF, 0xFFF),
            }
        }

        #[test]
        fn tc_round_trip(vc in 0u8..64, low in 0u8..4) {
            let tc = TrafficClass::from_vc(vc, low).unwrap();
            prop_assert_eq!((tc.vc(), tc.low_bits()), (vc, low));
            prop_assert_eq!(TrafficClass::from_bits(tc.bits()), tc);
        }

        #[test]
        fn mac_round_trip(v in 0u64..(1 << 48)) {
            let mac = MacAddr::new(v).unwrap();
            prop_assert_eq!(mac.to_string().parse::<MacAddr>().unwrap(), mac);
            prop_assert_eq!(MacAddr::from_octets(mac.octets()), mac);
        }
    }
}
