//! Messages of the chip-to-chip data path (seed 000 «TX 侧设计», «RX 侧设计», «物理链路模型»):
//! what travels on the streams between PAXI, RC Link TX/RX, the MAC, routers and PhyLinks.
//!
//! | message | from → to | path |
//! |---|---|---|
//! | [`Txn`] | traffic source → PAXI core | AXI write request |
//! | [`Segment`] | PAXI core → RC Link TX (slot FIFO) | one MPS frame's worth of a transaction |
//! | [`DataFrame`] | RC Link TX → MAC → router → PhyLink REQ → … → RX | a frame, or the tail of one being resent |
//! | [`Ctrl`] | RC Link RX → … PhyLink RSP … → RC Link TX | ACK / NAK / CNP (an [`Rh`] with routing) |
//! | [`CreditMsg`] | RC Link RX → … credit side channel … → RC Link TX | CBFC credit return |
//! | [`FrameDone`] | RC Link TX → PAXI core | every packet of a frame was ACKed |
//!
//! Widths in the waves: chip ids 16 bits, LG 3, QP 10, PSN 12, packet count 4, byte counts 13
//! (frames ≤ 4096 B + headers), transaction ids 32 (low bits), frame sequence 16.

use hwsim_hw::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

use crate::frame::HeaderTags;
use crate::link::Ecn;
use crate::paxi::PaxiFlit;
use crate::psn::Psn;
use crate::qp::QpId;
use crate::rh::{Opcode, Rh};

/// A chip's id in the topology (its index).
pub type ChipId = u16;
/// A link group index within a chip (0..num_link_groups ≤ 8).
pub type LgId = u8;

/// The top bit of a destination marks a multicast group address (TYPE2): `MCAST_BIT | g` names
/// group g (0..32 768). Chip ids stay below 4096, so the two never meet; the switches and the
/// chips' routers look the group up in their multicast tables.
pub const MCAST_BIT: ChipId = 0x8000;

/// The multicast group a destination names, if it is a group address.
pub const fn mcast_group(dst: ChipId) -> Option<u16> {
    if dst & MCAST_BIT != 0 {
        Some(dst & !MCAST_BIT)
    } else {
        None
    }
}

/// An AXI write transaction from a CDMA engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Txn {
    /// Chip-unique transaction id.
    pub id: u64,
    /// Destination chip, or a multicast group address ([`MCAST_BIT`] | group).
    pub dst: ChipId,
    /// Bytes to write.
    pub bytes: u64,
    /// CDMA engine (→ QP id).
    pub cdma: u16,
    /// Flow index in the report.
    pub flow: u16,
    /// Injection bandwidth, bytes per ns × 1000 (0: unpaced). Segment i is ready at
    /// `issued + i · MPS / bandwidth`.
    pub milli_bytes_per_ns: u64,
    /// AXI write (AW+W, completed by B) or read (AR, completed by the R data).
    pub op: TxnOp,
}

/// The AXI operation of a transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnOp {
    /// AW + W bursts to `dst`; B responses complete it.
    #[default]
    Write,
    /// AR requests to `dst`; the R data it returns completes it.
    Read,
    /// A multicast write (RC Link TYPE2) to the group `dst` names ([`MCAST_BIT`] | group): one
    /// copy of each burst to every member; the B of the slowest member completes it.
    Multicast,
}

impl Trace for Txn {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 5] = [
            TraceField::bits("id", 32),
            TraceField::bits("dst", 16),
            TraceField::bits("bytes", 32),
            TraceField::bits("cdma", 16),
            TraceField::bits("read", 1),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.id & 0xFFFF_FFFF);
        out[1] = TraceValue::Bits(self.dst as u64);
        out[2] = TraceValue::Bits(self.bytes & 0xFFFF_FFFF);
        out[3] = TraceValue::Bits(self.cdma as u64);
        out[4] = TraceValue::Bits((self.op == TxnOp::Read) as u64);
    }
}

/// One segment (frame) of a transaction, assigned to a link group by ITLV.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Segment {
    /// Transaction id.
    pub txn: u64,
    /// Index of this frame in the transaction.
    pub frame_seq: u32,
    /// Destination chip.
    pub dst: ChipId,
    /// Queue pair.
    pub qp: QpId,
    /// Payload bytes (≤ MPS).
    pub bytes: u32,
    /// Link group chosen by ITLV.
    pub lg: LgId,
    /// What PAXI puts in it (AW+W data by default; AR, R, B, multicast).
    pub paxi: PaxiFlit,
}

impl Trace for Segment {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 9] = [
            TraceField::bits("txn", 32),
            TraceField::bits("frame_seq", 16),
            TraceField::bits("dst", 16),
            TraceField::bits("qp", 10),
            TraceField::bits("bytes", 13),
            TraceField::bits("lg", 3),
            TraceField::bits("kind", 3),
            TraceField::bits("ost", 8),
            TraceField::bits("n", 5),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        self.paxi.sample(&mut out[6..9]);
        out[0] = TraceValue::Bits(self.txn & 0xFFFF_FFFF);
        out[1] = TraceValue::Bits(self.frame_seq as u64 & 0xFFFF);
        out[2] = TraceValue::Bits(self.dst as u64);
        out[3] = TraceValue::Bits(self.qp.value() as u64);
        out[4] = TraceValue::Bits(self.bytes as u64 & 0x1FFF);
        out[5] = TraceValue::Bits(self.lg as u64 & 7);
    }
}

/// A data frame on the REQ path: packets `first_idx .. first_idx + npkts` of a frame of
/// `frame_bytes` payload, split into packets of ≤ `max_payload`. Packet i carries PSN
/// `first_psn + (i − first_idx)`. A first transmission carries every packet; a Go-Back-N resend
/// carries the tail from the NAKed PSN on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DataFrame {
    /// Sender chip.
    pub src: ChipId,
    /// Destination chip.
    pub dst: ChipId,
    /// Link group (the same index on both chips).
    pub lg: LgId,
    /// Queue pair.
    pub qp: QpId,
    /// PSN of the first packet carried.
    pub first_psn: Psn,
    /// Index (in the frame) of the first packet carried.
    pub first_idx: u8,
    /// Packets carried.
    pub npkts: u8,
    /// The whole frame's payload bytes.
    pub frame_bytes: u32,
    /// Packet payload limit used to split the frame.
    pub max_payload: u16,
    /// Per-packet header overhead, bytes.
    pub pkt_ovhd: u16,
    /// Transaction id and frame index (for delivery accounting).
    pub txn: u64,
    /// Frame index in the transaction.
    pub frame_seq: u32,
    /// ECN codepoint (set to CE by a congested switch).
    pub ecn: Ecn,
    /// Cycle the MAC finished sending it (for latency).
    pub sent_at: u64,
    /// The RH timestamp: ns at the TX's grant, low 32 bits (seed 002: RTT is measured through the
    /// RH Timestamp field). 0 = not stamped (testbench stimulus).
    pub ts: u32,
    /// Packets lost or corrupted in transit (bit i: the i-th packet carried): the receiver's MAC
    /// discards them (bad FCS) and they never reach the PSN check. Set by fault injection.
    pub lost: u8,
    /// The header fields a switch classifies on: format, VLAN PCP, DSCP.
    pub hdr: HeaderTags,
    /// What PAXI put in it (kind, OST index, packed AR/B entries).
    pub paxi: PaxiFlit,
}

impl DataFrame {
    /// A whole frame of `frame_bytes` payload split into packets of ≤ `max_payload` with
    /// `pkt_ovhd` header bytes each: every packet carried (`npkts` derived, PSN 0, the other
    /// fields at their defaults — set them with struct update syntax).
    pub fn whole(frame_bytes: u32, max_payload: u16, pkt_ovhd: u16) -> DataFrame {
        let mut f = DataFrame {
            frame_bytes,
            max_payload,
            pkt_ovhd,
            ..Default::default()
        };
        f.npkts = f.frame_pkts();
        f
    }

    /// Payload bytes of packet `i` of the frame (0-based within the frame).
    pub fn pkt_bytes(&self, i: u8) -> u32 {
        let mp = self.max_payload.max(1) as u32;
        if self.frame_bytes == 0 {
            return 0;
        }
        let off = i as u32 * mp;
        self.frame_bytes.saturating_sub(off).min(mp)
    }
    /// Packets in the whole frame.
    pub fn frame_pkts(&self) -> u8 {
        let mp = self.max_payload.max(1) as u32;
        self.frame_bytes.div_ceil(mp).max(1) as u8
    }
    /// Payload bytes carried by this transmission.
    pub fn payload(&self) -> u32 {
        (self.first_idx..self.first_idx + self.npkts)
            .map(|i| self.pkt_bytes(i))
            .sum()
    }
    /// Bytes on the wire: payload plus one header per packet.
    pub fn wire_bytes(&self) -> u32 {
        self.payload() + self.npkts as u32 * self.pkt_ovhd as u32
    }
    /// The PSN of packet `i` of the frame.
    pub fn psn_of(&self, i: u8) -> Psn {
        self.first_psn.wrapping_add((i - self.first_idx) as u16)
    }
    /// The routing header of the first packet carried: opcode data, QP, PSN, the timestamp, and
    /// FACK set on a zero-byte packet (seed 000 «FACK»: a zero-byte packet asks for an immediate
    /// ACK). Its bit layout is [`Rh`]'s.
    pub fn rh(&self) -> Rh {
        Rh::data(self.qp, self.first_psn)
            .with_fack(self.payload() == 0)
            .with_timestamp(self.ts)
    }
}

impl Trace for DataFrame {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 18] = [
            TraceField::bits("src", 16),
            TraceField::bits("dst", 16),
            TraceField::bits("lg", 3),
            TraceField::bits("qp", 10),
            TraceField::bits("psn", 12),
            TraceField::bits("npkts", 4),
            TraceField::bits("wire_bytes", 13),
            TraceField::bits("ecn", 2),
            TraceField::bits("txn", 32),
            TraceField::bits("lost", 8),
            TraceField::bits("rh", 64),
            TraceField::bits("format", 2),
            TraceField::bits("vlan", 1),
            TraceField::bits("pcp", 3),
            TraceField::bits("dscp", 6),
            TraceField::bits("kind", 3),
            TraceField::bits("ost", 8),
            TraceField::bits("n", 5),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        self.hdr.sample(&mut out[11..15]);
        self.paxi.sample(&mut out[15..18]);
        out[0] = TraceValue::Bits(self.src as u64);
        out[1] = TraceValue::Bits(self.dst as u64);
        out[2] = TraceValue::Bits(self.lg as u64 & 7);
        out[3] = TraceValue::Bits(self.qp.value() as u64);
        out[4] = TraceValue::Bits(self.first_psn.value() as u64);
        out[5] = TraceValue::Bits(self.npkts as u64 & 0xF);
        out[6] = TraceValue::Bits(self.wire_bytes() as u64 & 0x1FFF);
        out[7] = TraceValue::Bits(self.ecn.bits() as u64);
        out[8] = TraceValue::Bits(self.txn & 0xFFFF_FFFF);
        out[9] = TraceValue::Bits(self.lost as u64);
        out[10] = TraceValue::Bits(self.rh().pack());
    }
}

/// A control packet on the RSP path: ACK (cumulative, `rh.psn` = next expected PSN), NAK
/// (`rh.psn` = EPSN) or CNP, from the receiver `src` back to the sender `dst`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ctrl {
    /// The receiving chip that generated it.
    pub src: ChipId,
    /// The data sender it goes back to.
    pub dst: ChipId,
    /// Link group.
    pub lg: LgId,
    /// Opcode, QP, PSN, flags.
    pub rh: Rh,
    /// Wire bytes (ACK/NAK: one header; CNP: 64).
    pub wire_bytes: u16,
    /// Cycle the receiver pushed it on the RSP path (model bookkeeping for the control-path
    /// latency counter, not a wire field: the RH timestamp echoes the data's instead). 0 = not
    /// stamped (testbench stimulus).
    pub sent_at: u64,
}

impl Ctrl {
    /// Whether this is an ACK (not a NAK).
    pub fn is_ack(&self) -> bool {
        self.rh.opcode() == Opcode::Ack && !self.rh.is_nak()
    }
    /// Whether this is a NAK.
    pub fn is_nak(&self) -> bool {
        self.rh.opcode() == Opcode::Ack && self.rh.is_nak()
    }
    /// Whether this is a CNP.
    pub fn is_cnp(&self) -> bool {
        self.rh.opcode() == Opcode::Cnp
    }
}

/// The trace fields of a [`Ctrl`], after `$lead` leading fields of the value that carries it
/// (`RxCtrl`'s kind, `TxCtrl`'s verdict): one list of names and widths for the three types.
macro_rules! ctrl_trace_fields {
    ($($lead:expr),*) => {
        [
            $($lead,)*
            TraceField::bits("src", 16),
            TraceField::bits("dst", 16),
            TraceField::bits("lg", 3),
            TraceField::bits("opcode", 2),
            TraceField::bits("nak", 1),
            TraceField::bits("qp", 10),
            TraceField::bits("ack_psn", 12),
        ]
    };
}
pub(crate) use ctrl_trace_fields;

impl Trace for Ctrl {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 7] = ctrl_trace_fields!();
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.src as u64);
        out[1] = TraceValue::Bits(self.dst as u64);
        out[2] = TraceValue::Bits(self.lg as u64 & 7);
        out[3] = TraceValue::Bits(self.rh.opcode() as u64);
        out[4] = TraceValue::Bits(self.rh.is_nak() as u64);
        out[5] = TraceValue::Bits(self.rh.qp().value() as u64);
        out[6] = TraceValue::Bits(self.rh.psn().value() as u64);
    }
}

// The VC numbers, defined here once (seed 000 «Bank 仲裁», 002 «CBFC 详细行为»): hwsim numbers
// the CBFC VCs REQ banks 0–3 (a QP's bank, `qp & 3`), TYPE2 4, ACK + CNP 5.

/// The TX's data VCs, the bank arbiter's: the four QP banks and TYPE2 (MUL).
pub const DATA_VCS: usize = 5;

/// The CBFC VC of TYPE2 (multicast) data and its credit returns (`CreditMsg.vc`): the bank
/// arbiter's fifth VC, MUL.
pub const TYPE2_VC: u8 = 4;

/// The CBFC VC of the TYPE1 ACK + CNP channel (seed 002 «CBFC 详细行为»: `type1_ack_cbfc` → VCa).
/// An RX sending ACK/NAK/CNP holds credits per (LG, sender) on it; the sender's TX returns them
/// as it takes the messages in.
pub const ACK_VC: u8 = 5;

const _: () = assert!(TYPE2_VC as usize == DATA_VCS - 1 && ACK_VC as usize == DATA_VCS);

/// CBFC credits returned by the receiver `src` to the sender `dst` for `(lg, vc)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CreditMsg {
    /// The receiving chip returning credit.
    pub src: ChipId,
    /// The sender it goes back to.
    pub dst: ChipId,
    /// Link group.
    pub lg: LgId,
    /// VC: a TYPE1 REQ bank 0..3, TYPE2 4, or the ACK + CNP channel [`ACK_VC`] (5).
    pub vc: u8,
    /// Credits returned (units of credit_size).
    pub credits: u16,
    /// Cycle the receiver sent it (for the credit-return latency; not traced).
    pub sent_at: u64,
}

impl Trace for CreditMsg {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 5] = [
            TraceField::bits("src", 16),
            TraceField::bits("dst", 16),
            TraceField::bits("lg", 3),
            TraceField::bits("vc", 3),
            TraceField::bits("credits", 15),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.src as u64);
        out[1] = TraceValue::Bits(self.dst as u64);
        out[2] = TraceValue::Bits(self.lg as u64 & 7);
        out[3] = TraceValue::Bits(self.vc as u64 & 7);
        out[4] = TraceValue::Bits(self.credits as u64 & 0x7FFF);
    }
}

/// RC Link TX → PAXI: every packet of frame `frame_seq` of transaction `txn` is ACKed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrameDone {
    /// Transaction id.
    pub txn: u64,
    /// Frame index.
    pub frame_seq: u32,
    /// Payload bytes of the frame.
    pub bytes: u32,
    /// The frame was given up: its QP went fatal (MAX_RETRY exceeded) before every packet was
    /// ACKed.
    pub failed: bool,
}

impl Trace for FrameDone {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [TraceField::bits("txn", 32), TraceField::bits("frame_seq", 16)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.txn & 0xFFFF_FFFF);
        out[1] = TraceValue::Bits(self.frame_seq as u64 & 0xFFFF);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_frame_carries_its_rh_on_the_waves() {
        let f = DataFrame {
            qp: QpId::new(13).unwrap(),
            first_psn: Psn::new(4095).unwrap(),
            ts: 0xDEAD_BEEF,
            ..DataFrame::whole(4096, 1344, 50)
        };
        let rh = f.rh();
        assert_eq!(rh.opcode(), Opcode::Data);
        assert_eq!(
            (rh.qp().value(), rh.psn().value(), rh.timestamp()),
            (13, 4095, 0xDEAD_BEEF)
        );
        assert!(!rh.is_fack());
        let mut out = [TraceValue::default(); 18];
        f.sample(&mut out);
        assert_eq!(DataFrame::fields()[10].name, "rh");
        assert_eq!(out[10], TraceValue::Bits(rh.pack()));
        assert_eq!(Rh::unpack(rh.pack()).unwrap(), rh);
        // A zero-byte packet asks for the immediate ACK (FACK).
        let z = DataFrame { frame_bytes: 0, ..f };
        assert!(z.rh().is_fack());
    }

    fn frame(bytes: u32) -> DataFrame {
        DataFrame {
            first_psn: Psn::new(4094).unwrap(),
            ..DataFrame::whole(bytes, 1344, 50)
        }
    }

    #[test]
    fn full_frame_splits_and_wire_bytes() {
        let f = frame(4096);
        assert_eq!(f.frame_pkts(), 4);
        assert_eq!(
            (0..4).map(|i| f.pkt_bytes(i)).collect::<Vec<_>>(),
            vec![1344, 1344, 1344, 64]
        );
        assert_eq!(f.wire_bytes(), 4296);
        // PSNs wrap: 4094, 4095, 0, 1.
        assert_eq!(f.psn_of(2).value(), 0);
        assert_eq!(f.psn_of(3).value(), 1);
    }

    #[test]
    fn tail_resend_carries_only_the_tail() {
        let mut f = frame(4096);
        f.first_idx = 2;
        f.npkts = 2;
        f.first_psn = Psn::new(0).unwrap();
        assert_eq!(f.payload(), 1344 + 64);
        assert_eq!(f.wire_bytes(), 1408 + 100);
    }

    #[test]
    fn zero_byte_frame_is_one_empty_packet() {
        let f = frame(0);
        assert_eq!(f.frame_pkts(), 1);
        assert_eq!(f.payload(), 0);
        assert_eq!(f.wire_bytes(), 50);
    }
}
