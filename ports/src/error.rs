//! Errors for out-of-range header fields, malformed header words and impossible frame layouts.
//!
//! Every bit-accurate value in this crate is built through a checked constructor; a value that does
//! not fit its hardware field is a [`PortsError`], never a silent mask (seed 000 «名词定义» and
//! «PSN 管理» give the widths; seed 003 the frame formats). The messages name the field, the
//! offending value and the allowed range, so a testbench author sees what to fix.

use crate::frame::FrameFormat;
use crate::rh::Opcode;

/// What went wrong when building or decoding a port value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PortsError {
    /// A numeric field outside its hardware range, e.g. `PSN 4096 out of range 0..=4095`.
    #[error("{field} {value} out of range {min}..={max}")]
    OutOfRange {
        /// Field name as a hardware engineer calls it (`PSN`, `QP id`, `VLAN VID`).
        field: &'static str,
        /// The rejected value.
        value: u64,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// A field restricted to a set of values, e.g. the CBFC credit size.
    #[error("{field} {value} is not one of {allowed}")]
    NotAllowed {
        /// Field name.
        field: &'static str,
        /// The rejected value.
        value: u64,
        /// The allowed values, as text (`{32, 64, 128, 256, 1024, 2048}`).
        allowed: &'static str,
    },
    /// An RH word whose opcode is the reserved encoding `0b11`.
    #[error("RH opcode 0b11 is reserved (raw word {raw:#018x})")]
    RhReservedOpcode {
        /// The whole 64-bit RH word.
        raw: u64,
    },
    /// An RH word with reserved bits set.
    #[error("RH reserved bits {bits:#018x} are set (raw word {raw:#018x})")]
    RhReservedBits {
        /// The whole 64-bit RH word.
        raw: u64,
        /// The reserved bits that are set.
        bits: u64,
    },
    /// An RH word with the NAK flag set on an opcode other than `ack`.
    #[error("RH NAK flag set with opcode {opcode}; only ack may carry NAK (raw word {raw:#018x})")]
    RhNakWithoutAck {
        /// The opcode found in the word.
        opcode: Opcode,
        /// The whole 64-bit RH word.
        raw: u64,
    },
    /// A MAC address wider than 48 bits.
    #[error("MAC address {value:#x} does not fit in 48 bits")]
    MacTooWide {
        /// The rejected value.
        value: u64,
    },
    /// A MAC address string not of the form `aa:bb:cc:dd:ee:ff`.
    #[error("MAC address {text:?} is not of the form aa:bb:cc:dd:ee:ff")]
    MacParse {
        /// The rejected text.
        text: String,
    },
    /// A frame format asked for a feature it does not have (AFH_Lite has no VLAN and no ICRC).
    #[error("frame format {format} does not support {feature}")]
    Unsupported {
        /// The format.
        format: FrameFormat,
        /// The missing feature (`a VLAN tag`, `ICRC`).
        feature: &'static str,
    },
    /// A frame longer than the wire maximum.
    #[error("{format} frame of {bytes} B exceeds the {max} B wire maximum")]
    FrameTooLong {
        /// The format.
        format: FrameFormat,
        /// Total frame bytes (header + payload + ICRC + FCS).
        bytes: u64,
        /// The maximum.
        max: u64,
    },
    /// A byte rate with a zero byte count or a zero duration.
    #[error("byte rate of {bytes} B per {ns} ns is not allowed: both must be non-zero")]
    ZeroRate {
        /// Bytes moved.
        bytes: u64,
        /// In this many ns.
        ns: u64,
    },
}

impl PortsError {
    /// Shorthand for [`PortsError::OutOfRange`] with a lower bound of 0.
    pub(crate) fn out_of_range(field: &'static str, value: u64, max: u64) -> Self {
        PortsError::OutOfRange {
            field,
            value,
            min: 0,
            max,
        }
    }
}
