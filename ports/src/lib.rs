//! hwsim-ports: the vocabulary of connections in the PAXI / RC Link model, and the bit-accurate
//! values that flow on them (DESIGN.md §1; SPEC.md «Identifiers», «Switch»).
//!
//! | module    | models                                                        | seed section |
//! |-----------|---------------------------------------------------------------|--------------|
//! | [`psn`]   | [`Psn`], the 12-bit PSN ring and Go-Back-N order              | 000 «PSN 管理» |
//! | [`qp`]    | [`QpId`] `{XPU_ID, BANK}` and [`VcBank`]                      | 000 «PSN 管理» |
//! | [`rh`]    | [`Rh`], the 64-bit routing header, and its [`Opcode`]         | 002 «名词定义» |
//! | [`link`]  | [`Tos`] / [`Ecn`], [`VlanTag`], [`TrafficClass`], [`MacAddr`] | 003 «报文格式» |
//! | [`frame`] | [`FrameFormat`], [`FrameLayout`]: header and frame sizes      | 003 «各格式报文头开销» |
//! | [`wire`]  | packet split, wire bytes, CBFC cost, exact serialization time | 000 «CBFC 流控», «MAC credit» |
//! | [`paxi`]  | [`PaxiFlit`]: a frame's AXI kind, OST index, packed AR/B entries | 002 «完整传输流程», «AR/B 打包» |
//! | [`rx_msg`] | [`RxAccepted`] (PSN check → ACK MERGE), [`CeMark`] (PSN check → CNP generation), [`PktCount`] / [`CreditCount`] (state at a width) | 000 «RX 侧设计» |
//! | [`error`] | [`PortsError`]                                                |              |
//!
//! Every value type implements [`hwsim_hw::value::Trace`] with fields at their true hardware
//! widths, and serde (by field name for structs, lowercase names for enums, plain integers for
//! ids), refusing unknown fields and out-of-range values.

#![warn(missing_docs)]

pub mod error;
pub mod frame;
pub mod link;
pub mod msg;
pub mod paxi;
pub mod psn;
pub mod qp;
pub mod rh;
pub mod rx_msg;
pub mod switch_msg;
pub mod tx_msg;
pub mod wire;

pub use error::PortsError;
pub use frame::{
    FrameFormat, FrameLayout, HeaderTags, FCS_BYTES, ICRC_BYTES, MAX_PAYLOAD_BYTES, MAX_WIRE_FRAME_BYTES,
    VLAN_TAG_BYTES,
};
pub use link::{Ecn, MacAddr, Tos, TrafficClass, VlanTag};
pub use msg::{
    mcast_group, ChipId, CreditMsg, Ctrl, DataFrame, FrameDone, LgId, Segment, Txn, TxnOp, ACK_VC, DATA_VCS, MCAST_BIT,
    TYPE2_VC,
};
pub use paxi::{FlitKind, PackedEntry, PaxiFlit, MAX_PACKED};
pub use psn::Psn;
pub use qp::{QpId, VcBank};
pub use rh::{Opcode, Rh};
pub use rx_msg::{CeMark, CreditCount, CtrlKind, PktCount, RxAccepted, RxCtrl};
pub use switch_msg::{
    frame_priority, Cell, PfcChange, PfcFrame, PfcPause, PortId, RoutedCredit, RoutedCtrl, RoutedFrame, Trust,
    XbarGrant, XbarOutputs, XbarRequest, MAX_SWITCH_PORTS,
};
pub use tx_msg::{
    ArbReq, MacCreditRet, MacCreditTake, QueueOp, QueueOpKind, RateCnp, RatePace, RateSent, SlotGrant, SlotMap, TxCtrl,
    Type2Block, Type2Offer, Type2Take, UInt, VcCredits, VcGrant, VcReq, SLOT_MAP_WORDS,
};
pub use wire::{
    cbfc_cost, ctrl_cost, frame_wire_bytes, packet_count, split_packets, ByteRate, CreditSize, Packets,
    SerializerClock, WireParams, WireRamp, CNP_BYTES, DEFAULT_MPS, DEFAULT_PKT_OVERHEAD,
};

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::value::{SignalValue, TraceKind, TraceValue};

    fn signal<T: SignalValue>(v: T) {
        // Every sampled bit value fits its declared width.
        let fields = T::fields();
        let mut out = vec![TraceValue::default(); hwsim_hw::value::slot_count(fields)];
        v.sample(&mut out);
        let mut slots = out.iter();
        for field in fields {
            for value in slots.by_ref().take(field.kind.slots()) {
                match (field.kind, value) {
                    (TraceKind::Bits(w), TraceValue::Bits(b)) => {
                        assert!((1..=64).contains(&w));
                        assert!(w == 64 || *b >> w == 0, "{v:?}.{} = {b:#x} wider than {w}", field.name);
                    }
                    (TraceKind::Wide(w), TraceValue::Bits(_)) => assert!((65..=4096).contains(&w)),
                    (TraceKind::Real, TraceValue::Real(_)) => {}
                    other => panic!("{v:?}: field kind and value differ: {other:?}"),
                }
            }
        }
        assert_eq!(T::default(), T::default());
    }

    #[test]
    fn every_value_is_a_signal_value_within_its_widths() {
        signal(Psn::MAX);
        signal(QpId::MAX);
        signal(VcBank::ALL[3]);
        signal(Opcode::Cnp);
        signal(Rh::nak(QpId::MAX, Psn::MAX).with_fack(true).with_timestamp(u32::MAX));
        signal(Ecn::Ce);
        signal(Tos::new(63, Ecn::Ce).unwrap());
        signal(VlanTag::new(7, true, 4094).unwrap());
        signal(TrafficClass::from_bits(0xFF));
        signal(MacAddr::BROADCAST);
        signal(FrameFormat::AfhLite);
        signal(CreditSize::B2048);
        signal(ByteRate::new(25, 2).unwrap());
        signal(FrameLayout::default().format());
        signal(RxAccepted {
            src: u16::MAX,
            qp: QpId::MAX,
            epsn: Psn::MAX,
            npkts: u8::MAX,
            immediate_ack: true,
            ts: u32::MAX,
        });
        signal(TxCtrl {
            filtered: true,
            ctrl: Ctrl::default(),
        });
        signal(CeMark {
            src: u16::MAX,
            qp: QpId::MAX,
            pkts: u8::MAX,
            ts: u32::MAX,
        });
        signal(SlotMap {
            wait_grant: [u64::MAX; SLOT_MAP_WORDS],
            wait_ack: [1; SLOT_MAP_WORDS],
        });
        signal(PktCount(u32::MAX));
        signal(CreditCount(u32::MAX));
        signal(QueueOp {
            op: QueueOpKind::Remove,
            id: UInt(2046),
            flow: u32::MAX,
            seg: Segment {
                dst: u16::MAX,
                qp: QpId::MAX,
                bytes: 4096,
                ..Segment::default()
            },
            first_psn: Psn::MAX,
            npkts: u8::MAX,
            sent: u8::MAX,
        });
        signal(SlotGrant {
            id: UInt(2046),
            k: u8::MAX,
            type2: true,
        });
    }
}
