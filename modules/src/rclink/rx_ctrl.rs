//! The RX's control output, shared by the PSN check, ACK MERGE and their composition `rclink_rx`
//! (seed 000 «RX 侧设计»): ACKs, NAKs and CNPs queue in the order they are generated and leave on
//! one `ctrl` stream, one per cycle (the kernel's one push per stream per cycle), waiting while
//! the stream is full. Each message is stamped with the cycle it leaves (RH timestamp field,
//! 32-bit ns) so the sender can measure the control path's latency.
//!
//! Not a block: the cores push into a [`CtrlQueue`] they are handed (the standalone blocks each
//! own one; `rclink_rx` hands the same one to both cores so that a cycle's arrivals and polls keep
//! today's order), and a [`CtrlPort`] drains it onto the stream and counts what left, per kind.

use std::collections::VecDeque;

use hwsim_hw::{Binder, CounterId, Ctx, Cycle, StreamOut};
use hwsim_ports::{ChipId, Ctrl, LgId, Rh};

use super::ack_cbfc::AckGate;

/// What a queued control message is, for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtrlKind {
    /// Cumulative ACK from an ACK MERGE poll (counter `acks_sent`).
    Ack,
    /// Immediate ACK answering a zero-byte packet (counter `fack_acks`).
    Fack,
    /// Immediate ACK answering a duplicate under `duplicate: ack` (counter `dup_acks`).
    DupAck,
    /// NAK for a PSN gap (counter `naks_sent`).
    Nak,
    /// Congestion notification for a CE-marked packet (counter `cnps_sent`).
    Cnp,
}

impl CtrlKind {
    /// Every kind, in declaration order (a kind's discriminant indexes it).
    const ALL: [CtrlKind; 5] = [
        CtrlKind::Ack,
        CtrlKind::Fack,
        CtrlKind::DupAck,
        CtrlKind::Nak,
        CtrlKind::Cnp,
    ];

    /// The counter that counts pushes of this kind.
    pub fn counter_name(self) -> &'static str {
        match self {
            CtrlKind::Ack => "acks_sent",
            CtrlKind::Fack => "fack_acks",
            CtrlKind::DupAck => "dup_acks",
            CtrlKind::Nak => "naks_sent",
            CtrlKind::Cnp => "cnps_sent",
        }
    }

    /// Whether it acknowledges (shown on `last_ack`): every kind but NAK and CNP.
    pub fn is_ack(self) -> bool {
        matches!(self, CtrlKind::Ack | CtrlKind::Fack | CtrlKind::DupAck)
    }
}

/// Who sends: this chip and LG, the `src` and `lg` of every control message.
#[derive(Clone, Copy, Debug)]
pub struct RxSource {
    /// This chip.
    pub chip: ChipId,
    /// This link group.
    pub lg: LgId,
}

impl RxSource {
    /// A control message from this RX back to `dst`.
    pub fn ctrl(self, dst: ChipId, rh: Rh, wire_bytes: u16) -> Ctrl {
        Ctrl {
            src: self.chip,
            dst,
            lg: self.lg,
            rh,
            wire_bytes,
            sent_at: 0,
        }
    }
}

/// Control messages waiting for the `ctrl` stream, in generation order. Preallocated: pushing
/// allocates only when more than 64 wait at once (a stalled RSP path).
#[derive(Debug)]
pub struct CtrlQueue(VecDeque<(CtrlKind, Ctrl)>);

impl Default for CtrlQueue {
    fn default() -> Self {
        CtrlQueue(VecDeque::with_capacity(64))
    }
}

impl CtrlQueue {
    /// Queues `msg` behind everything generated before it.
    pub fn push(&mut self, kind: CtrlKind, msg: Ctrl) {
        self.0.push_back((kind, msg));
    }
    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Takes the oldest message (for a core's unit tests and the port).
    pub fn pop(&mut self) -> Option<(CtrlKind, Ctrl)> {
        self.0.pop_front()
    }
}

/// The `ctrl` stream output with a push counter per kind the block can emit.
pub struct CtrlPort {
    port: StreamOut<Ctrl>,
    counters: [Option<CounterId>; CtrlKind::ALL.len()],
    /// Whether the stream had room at the last [`CtrlPort::drive`] (for the wake-up).
    free: bool,
}

impl CtrlPort {
    /// Binds the stream `name` and registers the counters of `kinds` (what this block emits).
    pub fn bind(b: &mut Binder, name: &str, kinds: &[CtrlKind]) -> Result<CtrlPort, String> {
        let mut counters = [None; CtrlKind::ALL.len()];
        for (slot, k) in counters.iter_mut().zip(CtrlKind::ALL) {
            if kinds.contains(&k) {
                *slot = Some(b.counter(k.counter_name()));
            }
        }
        Ok(CtrlPort {
            port: b.stream_out(name)?,
            counters,
            free: false,
        })
    }

    /// Pushes the oldest queued message if the stream has room, `sent_at` = `now`; returns its
    /// kind and the message.
    pub fn drive(&mut self, ctx: &mut Ctx<'_>, q: &mut CtrlQueue) -> Option<(CtrlKind, Ctrl)> {
        self.drive_gated(ctx, q, None)
    }

    /// [`drive`](Self::drive) with the ACK-VC CBFC gate (`rclink_rx` with `ack_credits`): the
    /// head leaves only when the gate admits it, and is charged then.
    pub fn drive_gated(
        &mut self,
        ctx: &mut Ctx<'_>,
        q: &mut CtrlQueue,
        gate: Option<&mut AckGate>,
    ) -> Option<(CtrlKind, Ctrl)> {
        self.free = self.port.can_push();
        if !self.free {
            return None;
        }
        if let (Some(g), Some((_, head))) = (gate, q.0.front()) {
            if !g.admit(ctx, head) {
                // Waiting for credit: the return (an input) wakes the block, no timer needed.
                self.free = false;
                return None;
            }
        }
        let (kind, mut m) = q.pop()?;
        // The RH timestamp echoes the data's (set where the message was made); the send time is
        // kept beside it for the control-path latency the sender measures.
        m.sent_at = ctx.now();
        self.port.push(m);
        // `ALL` lists the kinds in declaration order, so a kind's discriminant is its index.
        if let Some(c) = self.counters[kind as usize] {
            ctx.count(c, 1);
        }
        Some((kind, m))
    }

    /// When the port next needs a tick: next cycle if messages wait and the stream had room. A
    /// full stream wakes the block when its consumer pops, so a blocked queue needs no timer.
    pub fn next_due(&self, now: Cycle, q: &CtrlQueue) -> Option<Cycle> {
        (self.free && !q.is_empty()).then_some(now + 1)
    }
}
