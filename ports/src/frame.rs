//! RC Link frame formats and their sizes on the wire (seed 003 «各格式报文头开销»: TYPE1 REQ
//! header lengths from RCLINK AFH SPEC 5.2; seed 000 «报头开销估算»; seed 002 «报头开销»).
//!
//! | format         | header | + VLAN | ICRC      | ECN |
//! |----------------|--------|--------|-----------|-----|
//! | Standard       | 50 B   | 54 B   | optional  | yes |
//! | AFH_GEN1       | 22 B   | 26 B   | optional  | no  |
//! | AFH_GEN2_16b   | 22 B   | 26 B   | optional  | no  |
//! | AFH_Lite       | 12 B   | —      | none      | no  |
//!
//! A frame on the wire is header + payload (≤ 1344 B) + optional ICRC (4 B) + FCS (4 B), at most
//! 1406 B (Standard with VLAN and ICRC). AFH_Lite has no CRC of its own (seed 002: "无 CRC";
//! seed 003 counts 12 + 1344 + 4 = 1360 B), so hwsim refuses ICRC with it.
//!
//! The model's timing uses a single per-packet overhead instead, 50 B by default as the RC Link
//! spec does ([`crate::wire::DEFAULT_PKT_OVERHEAD`]); [`FrameLayout::overhead_bytes`] gives the
//! exact figure for a layout if a testbench wants it.

use std::fmt;

use hwsim_hw::value::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

use crate::error::PortsError;
use crate::tx_msg::UInt;

/// Bytes of an 802.1Q VLAN tag.
pub const VLAN_TAG_BYTES: u32 = 4;
/// Bytes of the optional TYPE1 invariant CRC.
pub const ICRC_BYTES: u32 = 4;
/// Bytes of the Ethernet frame check sequence.
pub const FCS_BYTES: u32 = 4;
/// Largest payload of one packet, bytes (`max_payload`).
pub const MAX_PAYLOAD_BYTES: u32 = 1344;
/// Largest frame on the wire: Standard + VLAN + 1344 B + ICRC + FCS = 1406 B.
pub const MAX_WIRE_FRAME_BYTES: u32 = 1406;

/// One of the four RC Link frame formats.
///
/// Serialized as `standard`, `afh_gen1`, `afh_gen2_16b`, `afh_lite`; displayed with the spec's
/// names (`Standard`, `AFH_GEN1`, `AFH_GEN2_16b`, `AFH_Lite`). Traced as 2 bits (declaration
/// order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FrameFormat {
    /// MAC + Eth_type + IP + UDP + RH: 12 + 2 + 20 + 8 + 8 = 50 B. The only one with ECN.
    #[default]
    #[serde(rename = "standard")]
    Standard,
    /// 12 B AFH1 header (DA/SA with TC) + Eth_type + RH = 22 B.
    #[serde(rename = "afh_gen1")]
    AfhGen1,
    /// 12 B AFH2 header (16-bit address compression) + Eth_type + RH = 22 B.
    #[serde(rename = "afh_gen2_16b")]
    AfhGen2_16b,
    /// 12 B AFH2 header only (LITE mode: no Eth_type, no RH, no VLAN, no CRC, no retransmission).
    #[serde(rename = "afh_lite")]
    AfhLite,
}

impl FrameFormat {
    /// All formats, in declaration order.
    pub const ALL: [FrameFormat; 4] = [
        FrameFormat::Standard,
        FrameFormat::AfhGen1,
        FrameFormat::AfhGen2_16b,
        FrameFormat::AfhLite,
    ];

    /// TYPE1 REQ header bytes, with or without a VLAN tag. AFH_Lite with a VLAN is an error.
    pub const fn header_bytes(self, vlan: bool) -> Result<u32, PortsError> {
        if !vlan {
            Ok(self.untagged_header_bytes())
        } else if self.supports_vlan() {
            Ok(self.untagged_header_bytes() + VLAN_TAG_BYTES)
        } else {
            Err(PortsError::Unsupported {
                format: self,
                feature: "a VLAN tag",
            })
        }
    }

    /// TYPE1 REQ header bytes without a VLAN tag.
    const fn untagged_header_bytes(self) -> u32 {
        match self {
            FrameFormat::Standard => 50,
            FrameFormat::AfhGen1 | FrameFormat::AfhGen2_16b => 22,
            FrameFormat::AfhLite => 12,
        }
    }

    /// Whether the format has an IP header, so a switch can mark ECN (Standard only).
    pub const fn carries_ecn(self) -> bool {
        matches!(self, FrameFormat::Standard)
    }

    /// Whether a VLAN tag may be inserted (all but AFH_Lite).
    pub const fn supports_vlan(self) -> bool {
        !matches!(self, FrameFormat::AfhLite)
    }

    /// Whether the optional ICRC may be appended (all but AFH_Lite).
    pub const fn supports_icrc(self) -> bool {
        !matches!(self, FrameFormat::AfhLite)
    }

    /// Whether the header carries an RH (all but AFH_Lite).
    pub const fn carries_rh(self) -> bool {
        !matches!(self, FrameFormat::AfhLite)
    }

    /// The spec's name.
    pub const fn name(self) -> &'static str {
        match self {
            FrameFormat::Standard => "Standard",
            FrameFormat::AfhGen1 => "AFH_GEN1",
            FrameFormat::AfhGen2_16b => "AFH_GEN2_16b",
            FrameFormat::AfhLite => "AFH_Lite",
        }
    }
}

impl fmt::Display for FrameFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Trace for FrameFormat {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", 2)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(*self as u64);
    }
}

/// What a switch's ingress parses from a data frame's header to classify it (seed 003 «入口处理»,
/// «优先级分类»): the format, the VLAN tag's PCP if the frame is tagged, and the IP header's DSCP
/// (Standard only: the AFH formats have no IP header).
///
/// Serde: `{format: afh_gen1, pcp: 3, dscp: 16}`; every field optional (Standard, untagged,
/// DSCP 0). Traced as `format` (2 bits), `vlan` (1), `pcp` (3), `dscp` (6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeaderTags {
    /// The frame format.
    pub format: FrameFormat,
    /// The VLAN tag's priority code point, if tagged (never on AFH_Lite).
    pub pcp: Option<UInt<3>>,
    /// The IP DSCP (Standard only; meaningless on the other formats).
    pub dscp: UInt<6>,
}

impl HeaderTags {
    /// Tags for a sender's frames of `layout`, priority `prio` (0..=7): the PCP if the layout
    /// has a VLAN tag, and the DSCP class selector `prio << 3` on Standard.
    pub fn for_layout(layout: FrameLayout, prio: u8) -> HeaderTags {
        HeaderTags {
            format: layout.format(),
            pcp: layout.vlan().then_some(UInt::wrap(prio as u64)),
            dscp: if layout.format().carries_ecn() {
                UInt::wrap((prio as u64) << 3)
            } else {
                UInt(0)
            },
        }
    }
}

impl Trace for HeaderTags {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 4] = [
            TraceField::bits("format", 2),
            TraceField::bits("vlan", 1),
            TraceField::bits("pcp", 3),
            TraceField::bits("dscp", 6),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.format as u64);
        out[1] = TraceValue::Bits(self.pcp.is_some() as u64);
        out[2] = TraceValue::Bits(self.pcp.map_or(0, |p| p.0 & 7));
        out[3] = TraceValue::Bits(self.dscp.0 & 63);
    }
}

/// A validated combination of format, VLAN tag and ICRC: what one link puts around each packet.
///
/// Serde: `{format: afh_gen1, vlan: true, icrc: false}`; fields default to Standard, no VLAN, no
/// ICRC; unknown fields and impossible combinations (AFH_Lite with VLAN or ICRC) are refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "LayoutFields", into = "LayoutFields")]
pub struct FrameLayout {
    format: FrameFormat,
    vlan: bool,
    icrc: bool,
}

impl FrameLayout {
    /// A layout; AFH_Lite with a VLAN tag or an ICRC is an error.
    pub const fn new(format: FrameFormat, vlan: bool, icrc: bool) -> Result<FrameLayout, PortsError> {
        if vlan && !format.supports_vlan() {
            return Err(PortsError::Unsupported {
                format,
                feature: "a VLAN tag",
            });
        }
        if icrc && !format.supports_icrc() {
            return Err(PortsError::Unsupported {
                format,
                feature: "ICRC",
            });
        }
        Ok(FrameLayout { format, vlan, icrc })
    }

    /// The format.
    pub const fn format(self) -> FrameFormat {
        self.format
    }

    /// Whether a VLAN tag is present.
    pub const fn vlan(self) -> bool {
        self.vlan
    }

    /// Whether the ICRC is present.
    pub const fn icrc(self) -> bool {
        self.icrc
    }

    /// Header bytes (including the VLAN tag if any).
    pub const fn header_bytes(self) -> u32 {
        // `new` refused a VLAN tag on formats without one.
        self.format.untagged_header_bytes() + if self.vlan { VLAN_TAG_BYTES } else { 0 }
    }

    /// Trailer bytes: ICRC (if any) + FCS.
    pub const fn trailer_bytes(self) -> u32 {
        FCS_BYTES + if self.icrc { ICRC_BYTES } else { 0 }
    }

    /// Per-packet overhead on the wire: header + trailer.
    pub const fn overhead_bytes(self) -> u32 {
        self.header_bytes() + self.trailer_bytes()
    }

    /// Bytes on the wire of one packet with `payload` bytes (no length check; see
    /// [`FrameLayout::max_frame_bytes`]).
    pub const fn frame_bytes(self, payload: u32) -> u64 {
        self.overhead_bytes() as u64 + payload as u64
    }

    /// Bytes on the wire of a full packet of `max_payload` bytes; an error if that exceeds the
    /// 1406 B wire maximum.
    pub const fn max_frame_bytes(self, max_payload: u32) -> Result<u32, PortsError> {
        let bytes = self.frame_bytes(max_payload);
        if bytes > MAX_WIRE_FRAME_BYTES as u64 {
            Err(PortsError::FrameTooLong {
                format: self.format,
                bytes,
                max: MAX_WIRE_FRAME_BYTES as u64,
            })
        } else {
            Ok(bytes as u32)
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct LayoutFields {
    format: FrameFormat,
    vlan: bool,
    icrc: bool,
}

impl TryFrom<LayoutFields> for FrameLayout {
    type Error = PortsError;
    fn try_from(f: LayoutFields) -> Result<Self, Self::Error> {
        FrameLayout::new(f.format, f.vlan, f.icrc)
    }
}

impl From<FrameLayout> for LayoutFields {
    fn from(l: FrameLayout) -> Self {
        LayoutFields {
            format: l.format,
            vlan: l.vlan,
            icrc: l.icrc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_tags_carry_pcp_only_when_tagged_and_dscp_only_on_standard() {
        let std_vlan = FrameLayout::new(FrameFormat::Standard, true, false).unwrap();
        let t = HeaderTags::for_layout(std_vlan, 2);
        assert_eq!(
            (t.format, t.pcp, t.dscp),
            (FrameFormat::Standard, Some(UInt(2)), UInt(16))
        );
        let afh = FrameLayout::new(FrameFormat::AfhGen1, false, false).unwrap();
        let t = HeaderTags::for_layout(afh, 3);
        assert_eq!((t.format, t.pcp, t.dscp), (FrameFormat::AfhGen1, None, UInt(0)));
        let mut out = [TraceValue::Bits(9); 4];
        HeaderTags::for_layout(std_vlan, 5).sample(&mut out);
        assert_eq!(
            out,
            [
                TraceValue::Bits(0),
                TraceValue::Bits(1),
                TraceValue::Bits(5),
                TraceValue::Bits(40)
            ]
        );
    }

    #[test]
    fn header_sizes_from_seed_003() {
        use FrameFormat::*;
        let table = [
            (Standard, Ok(50), Ok(54)),
            (AfhGen1, Ok(22), Ok(26)),
            (AfhGen2_16b, Ok(22), Ok(26)),
            (
                AfhLite,
                Ok(12),
                Err(PortsError::Unsupported {
                    format: AfhLite,
                    feature: "a VLAN tag",
                }),
            ),
        ];
        for (format, plain, tagged) in table {
            assert_eq!(format.header_bytes(false), plain, "{format}");
            assert_eq!(format.header_bytes(true), tagged, "{format}");
        }
        assert_eq!(
            AfhLite.header_bytes(true).unwrap_err().to_string(),
            "frame format AFH_Lite does not support a VLAN tag"
        );
    }

    #[test]
    fn ecn_only_on_standard() {
        let with_ecn: Vec<_> = FrameFormat::ALL.into_iter().filter(|f| f.carries_ecn()).collect();
        assert_eq!(with_ecn, [FrameFormat::Standard]);
    }

    #[test]
    fn frame_totals_from_seed_003() {
        let std_plain = FrameLayout::new(FrameFormat::Standard, false, true).unwrap();
        assert_eq!(std_plain.max_frame_bytes(1344), Ok(1402));
        let std_vlan = FrameLayout::new(FrameFormat::Standard, true, true).unwrap();
        assert_eq!(std_vlan.max_frame_bytes(1344), Ok(MAX_WIRE_FRAME_BYTES));
        assert_eq!(std_vlan.overhead_bytes(), 62);
        let lite = FrameLayout::new(FrameFormat::AfhLite, false, false).unwrap();
        assert_eq!(lite.max_frame_bytes(1344), Ok(1360));
        let gen1 = FrameLayout::new(FrameFormat::AfhGen1, true, false).unwrap();
        assert_eq!(gen1.frame_bytes(64), 26 + 64 + 4);
        // Every valid layout fits 1344 B within 1406 B; one byte more payload in the biggest does not.
        for format in FrameFormat::ALL {
            for vlan in [false, true] {
                for icrc in [false, true] {
                    if let Ok(layout) = FrameLayout::new(format, vlan, icrc) {
                        assert!(layout.max_frame_bytes(MAX_PAYLOAD_BYTES).is_ok());
                    }
                }
            }
        }
        assert_eq!(
            std_vlan.max_frame_bytes(1345).unwrap_err().to_string(),
            "Standard frame of 1407 B exceeds the 1406 B wire maximum"
        );
    }

    #[test]
    fn impossible_layouts() {
        assert_eq!(
            FrameLayout::new(FrameFormat::AfhLite, false, true)
                .unwrap_err()
                .to_string(),
            "frame format AFH_Lite does not support ICRC"
        );
        assert!(FrameLayout::new(FrameFormat::AfhLite, true, false).is_err());
    }

    #[test]
    fn trace_and_serde() {
        assert_eq!(FrameFormat::fields(), &[TraceField::bits("", 2)]);
        let mut out = [TraceValue::default()];
        FrameFormat::AfhLite.sample(&mut out);
        assert_eq!(out[0], TraceValue::Bits(3));
        for (name, format) in [
            ("standard", FrameFormat::Standard),
            ("afh_gen1", FrameFormat::AfhGen1),
            ("afh_gen2_16b", FrameFormat::AfhGen2_16b),
            ("afh_lite", FrameFormat::AfhLite),
        ] {
            assert_eq!(serde_yaml::from_str::<FrameFormat>(name).unwrap(), format);
            assert_eq!(serde_yaml::to_string(&format).unwrap(), format!("{name}\n"));
        }
        let layout: FrameLayout = serde_yaml::from_str("{format: afh_gen2_16b, vlan: true}").unwrap();
        assert_eq!(layout, FrameLayout::new(FrameFormat::AfhGen2_16b, true, false).unwrap());
        let text = serde_yaml::to_string(&layout).unwrap();
        assert_eq!(serde_yaml::from_str::<FrameLayout>(&text).unwrap(), layout);
        let err = serde_yaml::from_str::<FrameLayout>("{format: afh_lite, vlan: true}")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("frame format AFH_Lite does not support a VLAN tag"),
            "{err}"
        );
        let err = serde_yaml::from_str::<FrameLayout>("{format: standard, crc: true}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `crc`"), "{err}");
    }
}
