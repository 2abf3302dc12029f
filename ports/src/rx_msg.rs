//! Messages and state values inside the RC Link RX (seed 000 «RX 侧设计»): what the PSN check
//! hands to ACK MERGE, and the counts the RX modules show on the waves.
//!
//! | value | from → to | role |
//! |---|---|---|
//! | [`RxAccepted`] | PSN check → ACK MERGE | packets of one arrival accepted in order (or answered at once) |
//! | [`RxCtrl`] ([`CtrlKind`]) | PSN check, CNP generation, ACK MERGE → control queue | one control message and its kind |
//! | [`CeMark`] | PSN check → CNP generation | accepted data packets of one arrival that came marked CE |
//! | [`PktCount`], [`CreditCount`] | module state → waves | counts traced at their counter's width |
//!
//! Widths in the waves: chip id 16, QP 10, PSN 12, packet count 8 (a frame holds at most
//! 255 packets: `DataFrame::npkts` is a `u8`), flags 1, pending packets 13, credits 16.

use hwsim_hw::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

use crate::msg::{ChipId, Ctrl};
use crate::psn::Psn;
use crate::qp::QpId;

/// What an RX control message is, for the counters and the waves (3 bits): the PSN check makes
/// NAKs, FACK ACKs, duplicate re-ACKs and CNPs, ACK MERGE the cumulative ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum CtrlKind {
    /// Cumulative ACK from an ACK MERGE poll.
    #[default]
    Ack = 0,
    /// Immediate ACK answering a zero-byte packet.
    Fack = 1,
    /// Immediate ACK answering a duplicate under `duplicate: ack`.
    DupAck = 2,
    /// NAK for a PSN gap.
    Nak = 3,
    /// Congestion notification for a CE-marked packet.
    Cnp = 4,
}

impl CtrlKind {
    /// Every kind, in declaration order (a kind's discriminant indexes it).
    pub const ALL: [CtrlKind; 5] = [
        CtrlKind::Ack,
        CtrlKind::Fack,
        CtrlKind::DupAck,
        CtrlKind::Nak,
        CtrlKind::Cnp,
    ];

    /// Whether it acknowledges: every kind but NAK and CNP.
    pub fn is_ack(self) -> bool {
        matches!(self, CtrlKind::Ack | CtrlKind::Fack | CtrlKind::DupAck)
    }
}

impl Trace for CtrlKind {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", 3)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(*self as u64);
    }
}

/// One write into the RX's control queue: a message and what it is. The PSN check and ACK MERGE
/// hand theirs to the queue (`rx_ctrl`) in the cycle they make them, in the order they make
/// them; the queue sends them one per cycle as [`Ctrl`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RxCtrl {
    /// What it is.
    pub kind: CtrlKind,
    /// The message.
    pub ctrl: Ctrl,
}

impl Trace for RxCtrl {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 8] = crate::msg::ctrl_trace_fields!(TraceField::bits("kind", 3));
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.kind as u64);
        self.ctrl.sample(&mut out[1..]);
    }
}

/// PSN check → ACK MERGE: the outcome of one arrival for the window `(src, qp)` when it moved
/// ACK MERGE's state. `npkts` in-order data packets were accepted (their PSNs are the `npkts`
/// just before `epsn`); `immediate_ack` says the PSN check already answered the arrival with a
/// cumulative ACK carrying `epsn` (a FACK, or a duplicate re-ACKed under `duplicate: ack`), so
/// whatever ACK MERGE holds for the window is covered.
///
/// One arrival is one frame of one `(src, qp)`, and the packets it gets accepted are always
/// contiguous (they follow EPSN one by one), so one message per arrival carries them all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RxAccepted {
    /// The data sender (the window's chip, and the `dst` of the ACK).
    pub src: ChipId,
    /// The window's queue pair.
    pub qp: QpId,
    /// EPSN after this arrival: max contiguous PSN + 1, the `ack_psn` a cumulative ACK carries.
    pub epsn: Psn,
    /// In-order data packets accepted by this arrival (ACK MERGE pending += npkts).
    pub npkts: u8,
    /// The PSN check sent an ACK with `epsn` at once: ACK MERGE's pending packets are covered.
    pub immediate_ack: bool,
    /// RH timestamp of the arrival's data (the sender's grant time, 32-bit ns): the ACK that
    /// covers it echoes it, so the sender can measure the round trip.
    pub ts: u32,
}

/// PSN check → CNP generation (seed 000 «ECN 检测与 CNP 生成»): the `pkts` data packets of one
/// arrival for the window `(src, qp)` that were accepted and had arrived with ECN = CE (one
/// message per arrival, as [`RxAccepted`]: a frame's packets share its ECN). Zero-byte packets
/// (FACK) and packets the check dropped are never counted: only data the receiver took in
/// counts as congestion seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CeMark {
    /// The data sender (the `dst` of the CNP).
    pub src: ChipId,
    /// The window's queue pair (the CNP's QP).
    pub qp: QpId,
    /// Accepted CE-marked data packets of the arrival (≥ 1; a frame holds at most 255).
    pub pkts: u8,
    /// RH timestamp of the arrival's data (the CNP echoes it).
    pub ts: u32,
}

impl Trace for CeMark {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 4] = [
            TraceField::bits("src", 16),
            TraceField::bits("qp", 10),
            TraceField::bits("pkts", 8),
            TraceField::bits("ts", 32),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.src.into());
        out[1] = TraceValue::Bits(self.qp.value().into());
        out[2] = TraceValue::Bits(self.pkts.into());
        out[3] = TraceValue::Bits(self.ts.into());
    }
}

impl RxAccepted {
    /// PSN of the first packet this arrival got accepted (`epsn − npkts`).
    pub fn first_psn(&self) -> Psn {
        self.epsn.wrapping_sub(self.npkts.into())
    }
}

impl Trace for RxAccepted {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 6] = [
            TraceField::bits("src", 16),
            TraceField::bits("qp", 10),
            TraceField::bits("epsn", 12),
            TraceField::bits("npkts", 8),
            TraceField::bits("immediate_ack", 1),
            TraceField::bits("ts", 32),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.src.into());
        out[1] = TraceValue::Bits(self.qp.value().into());
        out[2] = TraceValue::Bits(self.epsn.value().into());
        out[3] = TraceValue::Bits(self.npkts.into());
        out[4] = TraceValue::Bits(self.immediate_ack.into());
        out[5] = TraceValue::Bits(self.ts.into());
    }
}

/// Defines an unsigned count shown on the waves as a `$bits`-bit vector, the width of the
/// hardware counter it stands for. The model keeps the full value; the trace saturates at
/// `2^$bits − 1` (a count that large is already outside what the counter was sized for, and a
/// saturated value says so more plainly than a wrapped one). Serialized as a plain integer.
macro_rules! count_type {
    ($(#[$doc:meta])* $name:ident, $bits:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// Width on the waves.
            pub const BITS: u32 = $bits;
            /// The largest value the trace shows.
            pub const MAX_SHOWN: u32 = (1 << $bits) - 1;
        }

        impl Trace for $name {
            fn fields() -> &'static [TraceField] {
                const F: [TraceField; 1] = [TraceField::bits("", $name::BITS)];
                &F
            }
            fn sample(&self, out: &mut [TraceValue]) {
                out[0] = TraceValue::Bits(self.0.min(Self::MAX_SHOWN).into());
            }
        }
    };
}

count_type!(
    /// Packets waiting for an ACK in one ACK MERGE window, 13 bits: at most 4095 packets can be
    /// outstanding on a 12-bit PSN ring, so the hardware counter needs 12 bits plus headroom.
    PktCount,
    13
);

count_type!(
    /// CBFC credits queued for return, 16 bits: one return message carries up to 15 bits
    /// (the CBFC counter), and a few may be queued at once.
    CreditCount,
    16
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_first_psn_wraps() {
        let m = RxAccepted {
            epsn: Psn::new(2).unwrap(),
            npkts: 4,
            ..Default::default()
        };
        assert_eq!(m.first_psn().value(), 4094);
    }

    #[test]
    fn count_trace_saturates_at_its_width() {
        let mut out = [TraceValue::default()];
        PktCount(9000).sample(&mut out);
        assert_eq!(out[0], TraceValue::Bits(8191));
        PktCount(17).sample(&mut out);
        assert_eq!(out[0], TraceValue::Bits(17));
        assert_eq!(PktCount::fields()[0].kind, hwsim_hw::value::TraceKind::Bits(13));
        CreditCount(70000).sample(&mut out);
        assert_eq!(out[0], TraceValue::Bits(65535));
    }
}
