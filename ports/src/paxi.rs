//! What a PAXI flit says (seed 002 «完整传输流程», «Buffer 资源全景» «AR/B 打包行为详解»): the
//! kind of AXI traffic a frame carries, the outstanding-table index it answers, and for packed
//! AR / B flits the entries packed into it.
//!
//! PAXI maps AXI channels onto RC Link frames: AW+W bursts and AR requests travel on the REQ
//! side, R data and B responses come back on the RSP side, multicast writes on MUL. A requester
//! names each outstanding burst by its OST-table index (W OST and R OST, 256 entries each, so
//! 8 bits, as the AXI ID the response echoes); the completer returns that index in the B or R.
//! Up to 16 AR or 16 B are packed into one flit: each packed entry is the index (8 bits) and,
//! for an AR, the burst length in bytes (13 bits: 1..=4096, the PAXI MPS), packed in a `u32`
//! the way the flit holds it.

use hwsim_hw::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

/// Most AR or B entries one flit packs (seed 002: AR/B TX packing depth 16).
pub const MAX_PACKED: usize = 16;

/// What a frame carries, as PAXI sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum FlitKind {
    /// An AW+W burst (REQ): write data of one burst of ≤ MPS bytes.
    #[default]
    WData = 0,
    /// Packed AR requests (REQ): `n` entries of (R OST index, bytes).
    Ar = 1,
    /// R data (RSP): one read burst's bytes, for R OST index `ost`.
    R = 2,
    /// Packed B responses (RSP): `n` entries of W OST index.
    B = 3,
    /// A multicast write burst (MUL, RC Link TYPE2): one group member's copy.
    Mul = 4,
}

impl FlitKind {
    /// The 3-bit encoding on the waves.
    pub const fn bits(self) -> u8 {
        self as u8
    }
    /// A response (RSP side: R, B) rather than a request.
    pub const fn is_response(self) -> bool {
        matches!(self, FlitKind::R | FlitKind::B)
    }
}

/// One packed AR or B entry: bits 0..8 the OST index, bits 8..21 the burst bytes (AR; 0 for B),
/// bit 21 set on a B that answers a multicast burst (its index is the requester's MUL OST entry,
/// not a W OST entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackedEntry(u32);

impl PackedEntry {
    /// An entry for OST index `ost` and `bytes` (AR: 1..=4096; B: 0). Bytes above 13 bits are
    /// truncated, as the register would (callers check the MPS first).
    pub const fn new(ost: u8, bytes: u32) -> PackedEntry {
        PackedEntry(ost as u32 | (bytes & 0x1FFF) << 8)
    }
    /// A B entry answering multicast OST entry `ost`.
    pub const fn mul_b(ost: u8) -> PackedEntry {
        PackedEntry(ost as u32 | 1 << 21)
    }
    /// A B for a multicast burst.
    pub const fn is_mul(self) -> bool {
        self.0 & 1 << 21 != 0
    }
    /// The OST index.
    pub const fn ost(self) -> u8 {
        (self.0 & 0xFF) as u8
    }
    /// The burst length, bytes (AR).
    pub const fn bytes(self) -> u32 {
        (self.0 >> 8) & 0x1FFF
    }
}

/// The PAXI view of a frame: its kind; for WData and R the OST index it belongs to; for AR and
/// B the `n` packed entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PaxiFlit {
    /// What it carries.
    pub kind: FlitKind,
    /// WData: the requester's W OST index; R: the R OST index; Mul: the multicast OST index.
    pub ost: u8,
    /// AR / B: entries packed (1..=16).
    pub n: u8,
    /// AR / B: the packed entries (the first `n` are valid).
    pub entries: [PackedEntry; MAX_PACKED],
}

impl PaxiFlit {
    /// A flit carrying data for OST index `ost` (WData, R, Mul).
    pub fn data(kind: FlitKind, ost: u8) -> PaxiFlit {
        PaxiFlit {
            kind,
            ost,
            ..Default::default()
        }
    }
    /// The valid packed entries.
    pub fn packed(&self) -> &[PackedEntry] {
        &self.entries[..(self.n as usize).min(MAX_PACKED)]
    }
}

impl Trace for PaxiFlit {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 3] = [
            TraceField::bits("kind", 3),
            TraceField::bits("ost", 8),
            TraceField::bits("n", 5),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.kind.bits() as u64);
        out[1] = TraceValue::Bits(self.ost as u64);
        out[2] = TraceValue::Bits(self.n as u64 & 0x1F);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_entry_keeps_index_and_length_at_their_widths() {
        let e = PackedEntry::new(255, 4096);
        assert_eq!((e.ost(), e.bytes()), (255, 4096));
        // 13 bits hold 4096 (0x1000) but not 8192: the register keeps the low bits.
        assert_eq!(PackedEntry::new(1, 8192).bytes(), 0);
        assert_eq!(PackedEntry::new(7, 0).bytes(), 0);
        // The multicast flag is its own bit: neither the index nor the length sees it.
        let m = PackedEntry::mul_b(15);
        assert_eq!((m.ost(), m.bytes(), m.is_mul()), (15, 0, true));
        assert!(!PackedEntry::new(255, 4096).is_mul());
    }

    #[test]
    fn responses_are_r_and_b() {
        let r: Vec<bool> = [FlitKind::WData, FlitKind::Ar, FlitKind::R, FlitKind::B, FlitKind::Mul]
            .iter()
            .map(|k| k.is_response())
            .collect();
        assert_eq!(r, [false, false, true, true, false]);
    }
}
