//! Values on the ports of the RC Link TX modules (seed 000 «TX 侧设计»): what a module-form
//! testbench drives into the slot FIFO, the bank arbiter and the CBFC controller, and the state
//! they show on the waves.
//!
//! | value | where |
//! |---|---|
//! | [`ArbReq`] | a frame entering a VC queue of the bank arbiter, and its grant |
//! | [`MacCreditRet`] | MAC → TX: the MAC2TX credit of one frame it took, TYPE1 or TYPE2 |
//! | [`MacCreditTake`] | TX → its MAC credit counter: the credit a grant takes, TYPE1 or TYPE2 |
//! | [`TxCtrl`] | CNP MERGE → TX core: a control message and whether CNP MERGE filtered it |
//! | [`VcReq`] | TX core → its bank arbiter: the VCs with a head frame that passes its gates |
//! | [`RateCnp`] | TX core → its DCQCN rate gate: a CNP that passed CNP MERGE, for one flow |
//! | [`RateSent`] | TX core → its DCQCN rate gate: a frame of one flow granted, its wire bytes |
//! | [`RatePace`] | DCQCN rate gate → TX core: when one flow may send again (pacing) |
//! | [`VcGrant`] | bank arbiter → TX core: the VC granted this round, and the VCs it looked at |
//! | [`Type2Offer`] | TYPE2 queue → TX core: the head frame and its two gates (CBFC, multicast MAC credit) |
//! | [`Type2Take`] | TX core → TYPE2 queue: the head frame was granted |
//! | [`QueueOp`] | slot FIFO → VC queues: a frame joins, rejoins, rewinds in or leaves its queue |
//! | [`SlotGrant`] | VC queues → slot FIFO: packets of a frame granted (or the TYPE2 head) |
//! | [`VcCredits`] | remaining CBFC credits of one destination, per VC bank (waves) |
//! | [`SlotMap`] | the slot states of the first 512 slots as bitmaps (waves) |

use hwsim_hw::{Trace, TraceField, TraceValue};

use crate::msg::Segment;
use serde::{Deserialize, Serialize};

use crate::msg::{ChipId, Ctrl};
use crate::psn::Psn;
use crate::qp::QpId;

/// A control message (ACK, NAK, CNP) as the TX core takes it, behind CNP MERGE (seed 002 «CNP
/// MERGE»): every message passes through in order; a CNP that CNP MERGE filtered (its QP had one
/// within TIMER_THR) says so, and the core does not cut its rate (it still counts it as received
/// and returns its ACK-VC credit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TxCtrl {
    /// The message.
    pub ctrl: Ctrl,
    /// A CNP CNP MERGE filtered (always false for ACK and NAK).
    pub filtered: bool,
}

impl Trace for TxCtrl {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 8] = crate::msg::ctrl_trace_fields!(TraceField::bits("filtered", 1));
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.filtered.into());
        self.ctrl.sample(&mut out[1..]);
    }
}

/// A frame offered to the bank arbiter: it joins the queue of VC `qp & 3` and is granted when its
/// turn comes and its CBFC gate passes (`cost` credits for the (dst, vc) ledger).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArbReq {
    /// Tag the testbench chooses (a slot or frame number), carried to the grant.
    pub tag: u16,
    /// Destination chip.
    pub dst: ChipId,
    /// Queue pair (the VC is its bank, `qp & 3`; the flow is `(dst, qp)`).
    pub qp: QpId,
    /// CBFC credits the frame needs (0: a zero-byte packet, never credit-blocked).
    pub cost: u16,
}

impl Trace for ArbReq {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 4] = [
            TraceField::bits("tag", 16),
            TraceField::bits("dst", 16),
            TraceField::bits("qp", 10),
            TraceField::bits("cost", 15),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.tag as u64);
        out[1] = TraceValue::Bits(self.dst as u64);
        out[2] = TraceValue::Bits(self.qp.value() as u64);
        out[3] = TraceValue::Bits(self.cost as u64 & 0x7FFF);
    }
}

/// The MAC2TX credit of one frame the MAC took (seed 000 «打包延迟与 MAC Credit»), back to the
/// TX: one message per frame, in the order the MAC frees them (not always the order it took
/// them: a zero-byte frame's comes back at once). `mul` says the frame was a TYPE2 (multicast)
/// one, so its multicast MAC TX credit (seed 002 «多播双重流控») comes back with it; the TX
/// needs no shadow of the MAC's queue to know which credit it got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MacCreditRet {
    /// The frame was TYPE2 (sent to a multicast group address).
    pub mul: bool,
}

impl Trace for MacCreditRet {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("mul", 1)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.mul as u64);
    }
}

/// TX → MAC credit counter: the grant of one frame takes its MAC2TX credit (seed 000 «打包延迟与
/// MAC Credit»), and a TYPE2 frame (`mul`) its multicast MAC TX credit too (seed 002
/// «多播双重流控»). Pushed on a combinational stream in the cycle of the grant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MacCreditTake {
    /// The frame is TYPE2 (sent to a multicast group address).
    pub mul: bool,
}

impl Trace for MacCreditTake {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("mul", 1)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.mul as u64);
    }
}

/// TX core → its DCQCN rate gate (`tx.dcqcn`), combinationally, in the cycle the core takes it
/// in: a CNP for flow (`dst`, `qp`) that passed CNP MERGE (seed 000 «CNP 到达处理 (on_cnp)»).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateCnp {
    /// The flow's destination chip (the CNP's sender).
    pub dst: ChipId,
    /// The flow's queue pair.
    pub qp: QpId,
}

impl Trace for RateCnp {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [TraceField::bits("dst", 16), TraceField::bits("qp", 10)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.dst as u64);
        out[1] = TraceValue::Bits(self.qp.value() as u64);
    }
}

/// TX core → its DCQCN rate gate, combinationally, in the cycle of the grant: a frame (or run of
/// packets) of flow (`dst`, `qp`) went, `bytes` on the wire (the byte counter and the pacing,
/// seed 000 «速率恢复», «TX 速率限制 (pacing)»).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateSent {
    /// The flow's destination chip.
    pub dst: ChipId,
    /// The flow's queue pair.
    pub qp: QpId,
    /// Wire bytes of what was granted (headers included).
    pub bytes: u32,
}

impl Trace for RateSent {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 3] = [
            TraceField::bits("dst", 16),
            TraceField::bits("qp", 10),
            TraceField::bits("bytes", 32),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.dst as u64);
        out[1] = TraceValue::Bits(self.qp.value() as u64);
        out[2] = TraceValue::Bits(self.bytes as u64);
    }
}

/// DCQCN rate gate → TX core: flow (`dst`, `qp`)'s pacing changed. `paced`: the flow is below
/// (or just back at) line rate and may send again at cycle `at` (its last send's wire bytes
/// over R_C, rounded up); not paced: at line rate, the MAC credit paces it (`at` 0). Sent when
/// a CNP cuts the flow (in that cycle, so the round sees it) and when a send moves its time (for
/// the next cycle's round).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RatePace {
    /// The flow's destination chip.
    pub dst: ChipId,
    /// The flow's queue pair.
    pub qp: QpId,
    /// The flow is paced by its rate.
    pub paced: bool,
    /// The first cycle it may send again, when paced.
    pub at: u64,
}

impl RatePace {
    /// The first cycle the flow may send again, if it is paced.
    pub fn ready_at(&self) -> Option<u64> {
        self.paced.then_some(self.at)
    }
}

impl Trace for RatePace {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 4] = [
            TraceField::bits("dst", 16),
            TraceField::bits("qp", 10),
            TraceField::bits("paced", 1),
            TraceField::bits("at", 64),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.dst as u64);
        out[1] = TraceValue::Bits(self.qp.value() as u64);
        out[2] = TraceValue::Bits(self.paced as u64);
        out[3] = TraceValue::Bits(self.at);
    }
}

/// TX core → its bank arbiter (`vc_arbiter`), combinationally, in a cycle the TX runs a TYPE1
/// round: bit v of `eligible` says VC queue v (banks 0..3 by `qp & 3`, 4 = MUL) holds a flow head
/// that passes the rate gate and the CBFC per-packet rule (the per-flow rule and the gates are
/// the VC queues' side; the arbiter only chooses among VCs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcReq {
    /// One bit per VC: a frame of that VC may go this round.
    pub eligible: UInt<5>,
}

impl Trace for VcReq {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("eligible", 5)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(UInt::<5>::wrap(self.eligible.0).0);
    }
    const LOAD: bool = true;
    fn load(v: &[TraceValue]) -> Option<Self> {
        Some(VcReq {
            eligible: UInt::load(v.get(..1)?)?,
        })
    }
}

/// Bank arbiter → TX core, combinationally, in answer to a [`VcReq`]: `granted` and the VC
/// whose frame goes (the first eligible VC from the round-robin pointer), and `visited`, the VCs
/// the round looked at (from the pointer up to and including the granted one; all five when
/// none was eligible) — the TX counts the blocked flow heads of those VCs, as its diagnostic
/// counters define them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcGrant {
    /// A VC was eligible and is granted.
    pub granted: bool,
    /// The granted VC (0 when none).
    pub vc: UInt<3>,
    /// One bit per VC the round looked at.
    pub visited: UInt<5>,
}

impl Trace for VcGrant {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 3] = [
            TraceField::bits("granted", 1),
            TraceField::bits("vc", 3),
            TraceField::bits("visited", 5),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.granted as u64);
        out[1] = TraceValue::Bits(UInt::<3>::wrap(self.vc.0).0);
        out[2] = TraceValue::Bits(UInt::<5>::wrap(self.visited.0).0);
    }
    const LOAD: bool = true;
    fn load(v: &[TraceValue]) -> Option<Self> {
        Some(VcGrant {
            granted: bool::load(v.get(..1)?)?,
            vc: UInt::load(v.get(1..2)?)?,
            visited: UInt::load(v.get(2..3)?)?,
        })
    }
}

/// Remaining CBFC credits of one destination, per VC bank (15-bit hardware counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VcCredits(pub [u16; 4]);

impl Trace for VcCredits {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 4] = [
            TraceField::bits("vc0", 15),
            TraceField::bits("vc1", 15),
            TraceField::bits("vc2", 15),
            TraceField::bits("vc3", 15),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        for (o, c) in out.iter_mut().zip(self.0) {
            *o = TraceValue::Bits(c as u64 & 0x7FFF);
        }
    }
}

/// Words of a [`SlotMap`] bitmap: 8 × 64 = 512 slots, the default pool (TYPE1_OST).
pub const SLOT_MAP_WORDS: usize = 8;

/// The state of slots 0..512 as two bitmaps (a slot in neither is Empty): bit `s % 64` of word
/// `s / 64`. Traced as two 512-bit vectors, `wait_grant[511:0]` and `wait_ack[511:0]`: bit s is
/// slot s, as an RTL slot-state register would be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotMap {
    /// Slots in WaitGrant (queued for a grant: first send or Go-Back-N resend).
    pub wait_grant: [u64; SLOT_MAP_WORDS],
    /// Slots in WaitAck (sent, or ACKed while the rest of their frame's slot group is not).
    pub wait_ack: [u64; SLOT_MAP_WORDS],
}

impl Trace for SlotMap {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [
            TraceField::wide("wait_grant", 64 * SLOT_MAP_WORDS as u32),
            TraceField::wide("wait_ack", 64 * SLOT_MAP_WORDS as u32),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        for (o, w) in out.iter_mut().zip(self.wait_grant.iter().chain(&self.wait_ack)) {
            *o = TraceValue::Bits(*w);
        }
    }
}

/// An unsigned value of a true hardware width `W` (1..=64 bits), for state shown on the waves
/// (a 3-bit pointer, a 9-bit counter). Values are masked to `W` bits when traced; one read from
/// a file (a stimulus, a parameter) wider than `W` bits is refused, not masked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct UInt<const W: u32>(pub u64);

impl<'de, const W: u32> Deserialize<'de> for UInt<W> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = u64::deserialize(d)?;
        if W < 64 && v >> W != 0 {
            return Err(serde::de::Error::custom(format!(
                "{v} is wider than its {W} bits (0..={})",
                (1u64 << W) - 1
            )));
        }
        Ok(UInt(v))
    }
}

impl<const W: u32> UInt<W> {
    /// `v` truncated to `W` bits (the hardware register keeps the low bits).
    pub const fn wrap(v: u64) -> Self {
        if W >= 64 {
            UInt(v)
        } else {
            UInt(v & ((1u64 << W) - 1))
        }
    }
}

impl<const W: u32> Trace for UInt<W> {
    fn fields() -> &'static [TraceField] {
        // One static slice per width.
        struct F<const W: u32>;
        impl<const W: u32> F<W> {
            const FIELDS: [TraceField; 1] = [TraceField::bits("", W)];
        }
        &F::<W>::FIELDS
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(Self::wrap(self.0).0);
    }
    const LOAD: bool = true;
    fn load(v: &[TraceValue]) -> Option<Self> {
        hwsim_hw::bits_of(v.first()?, W).map(UInt)
    }
}

#[cfg(test)]
mod load_tests {
    use super::*;

    #[test]
    fn the_arbiter_messages_load_what_they_sample() {
        let g = VcGrant {
            granted: true,
            vc: UInt(4),
            visited: UInt(0b11001),
        };
        let mut out = [TraceValue::Bits(0); 3];
        g.sample(&mut out);
        assert_eq!(VcGrant::load(&out), Some(g));
        // A VC number wider than its 3 bits is no VcGrant.
        out[1] = TraceValue::Bits(8);
        assert_eq!(VcGrant::load(&out), None);
        assert_eq!(
            VcReq::load(&[TraceValue::Bits(0b10101)]),
            Some(VcReq {
                eligible: UInt(0b10101)
            })
        );
        assert_eq!(VcReq::load(&[]), None);
    }
}

/// Why the TYPE2 head may not go this round ([`Type2Offer::block`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Type2Block {
    /// Both gates pass (or the queue is empty: nothing to block).
    #[default]
    None,
    /// No multicast MAC TX credit is free (checked first).
    Mac,
    /// A member's TYPE2 CBFC ledger does not admit every packet of the frame.
    Credit,
}

/// TYPE2 queue (`tx.type2`) → TX core, combinationally, after the queue took its segments and
/// the ledgers' counts of the cycle (seed 002 «多播双重流控»: «两者均通过才允许发送»): the head
/// frame, whether both gates pass, and what it costs each member's ledger.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Type2Offer {
    /// Frames waiting in the queue (0: `head` means nothing).
    pub queued: u16,
    /// The frame at the head of the queue.
    pub head: Segment,
    /// Why it may not go now (`None`: it may).
    pub block: Type2Block,
    /// Credits its packets cost each member's ledger when it goes (0 with CBFC stopped).
    pub cost: u32,
    /// TYPE2 ledger returns taken so far, wrapping: a change means a return (the TX's round
    /// runs again, as after a TYPE1 return).
    pub returns: u8,
}

impl Trace for Type2Offer {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 8] = [
            TraceField::bits("queued", 9),
            TraceField::bits("txn", 32),
            TraceField::bits("frame_seq", 16),
            TraceField::bits("dst", 16),
            TraceField::bits("bytes", 13),
            TraceField::bits("block", 2),
            TraceField::bits("cost", 16),
            TraceField::bits("returns", 8),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.queued as u64 & 0x1FF);
        out[1] = TraceValue::Bits(self.head.txn & 0xFFFF_FFFF);
        out[2] = TraceValue::Bits(self.head.frame_seq as u64 & 0xFFFF);
        out[3] = TraceValue::Bits(self.head.dst as u64);
        out[4] = TraceValue::Bits(self.head.bytes as u64 & 0x1FFF);
        out[5] = TraceValue::Bits(self.block as u64);
        out[6] = TraceValue::Bits(self.cost as u64 & 0xFFFF);
        out[7] = TraceValue::Bits(self.returns as u64);
    }
}

/// TX core → TYPE2 queue (`tx.type2`), combinationally, in the cycle of the grant: the head
/// frame it offered was sent (its transaction and frame number, checked against the head).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Type2Take {
    /// The granted frame's transaction.
    pub txn: u64,
    /// Its index in the transaction.
    pub frame_seq: u32,
}

impl Trace for Type2Take {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [TraceField::bits("txn", 32), TraceField::bits("frame_seq", 16)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.txn & 0xFFFF_FFFF);
        out[1] = TraceValue::Bits(self.frame_seq as u64 & 0xFFFF);
    }
}

/// What a [`QueueOp`] does to the VC queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueOpKind {
    /// A segment taken: its frame joins the tail of its VC's queue.
    #[default]
    Push,
    /// A Go-Back-N resend of a frame no longer queued: to the head of its VC's queue (a flow's
    /// frames come largest PSN first, so the smallest ends at the head).
    Front,
    /// A Go-Back-N of a frame still queued (partly sent): it keeps its place; its WaitGrant
    /// packets start at `sent` again.
    Rewind,
    /// Its QP went fatal: the frame leaves its queue.
    Remove,
}

/// Slot FIFO (`tx.slot_fifo`) → VC queues (`tx.vc_queues`), combinationally, in the cycle of the
/// change (seed 000 «Slot 管理», «Go-Back-N 重传»): a frame joins, rejoins, rewinds in or leaves
/// its VC's queue (the VC is its QP's bank). The queue holds what the grant frames: the segment,
/// the PSN of packet 0, how many packets were sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueOp {
    /// What happens to the frame.
    pub op: QueueOpKind,
    /// The frame's slot group in the slot FIFO (its id), 0..=2046.
    pub id: UInt<11>,
    /// Its flow's context in the slot FIFO: flows numbered in the order they first took a slot.
    pub flow: u32,
    /// The frame as PAXI segmented it (destination, QP, bytes, transaction, PAXI content).
    pub seg: Segment,
    /// PSN of its packet 0.
    pub first_psn: Psn,
    /// Its packets.
    pub npkts: u8,
    /// Packets sent so far (`sent..npkts` wait for a grant).
    pub sent: u8,
}

impl Trace for QueueOp {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 9] = [
            TraceField::bits("op", 2),
            TraceField::bits("id", 11),
            TraceField::bits("flow", 16),
            TraceField::bits("dst", 16),
            TraceField::bits("qp", 10),
            TraceField::bits("bytes", 13),
            TraceField::bits("first_psn", 12),
            TraceField::bits("npkts", 8),
            TraceField::bits("sent", 8),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.op as u64);
        out[1] = TraceValue::Bits(self.id.0);
        out[2] = TraceValue::Bits(self.flow as u64 & 0xFFFF);
        out[3] = TraceValue::Bits(self.seg.dst as u64);
        out[4] = TraceValue::Bits(self.seg.qp.value() as u64);
        out[5] = TraceValue::Bits(self.seg.bytes as u64 & 0x1FFF);
        out[6] = TraceValue::Bits(self.first_psn.value() as u64);
        out[7] = TraceValue::Bits(self.npkts as u64);
        out[8] = TraceValue::Bits(self.sent as u64);
    }
}

/// VC queues (`tx.vc_queues`) → slot FIFO (`tx.slot_fifo`), combinationally, in the cycle of the
/// grant: the next `k` WaitGrant packets of frame `id` went (WaitGrant → WaitAck, its retry
/// timer starts); or, with `type2`, the TYPE2 queue's head went (its place in the queue is
/// free: the slot FIFO's intake counts the queue's room).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlotGrant {
    /// The frame's slot group (its id; 0 for TYPE2).
    pub id: UInt<11>,
    /// Packets granted.
    pub k: u8,
    /// A TYPE2 frame (no slot).
    pub type2: bool,
}

impl Trace for SlotGrant {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 3] = [
            TraceField::bits("id", 11),
            TraceField::bits("k", 8),
            TraceField::bits("type2", 1),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.id.0);
        out[1] = TraceValue::Bits(self.k as u64);
        out[2] = TraceValue::Bits(self.type2 as u64);
    }
}
