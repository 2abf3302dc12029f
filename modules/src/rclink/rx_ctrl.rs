//! The RX's control output (seed 000 «RX 侧设计»): ACKs, NAKs and CNPs queue in the order they
//! are generated and leave on one `ctrl` stream, one per cycle (the kernel's one push per stream
//! per cycle), waiting while the stream is full or, with ACK-VC CBFC, while the head's
//! destination has no credit (see `ack_cbfc`). Each message is stamped with the cycle it leaves
//! (`sent_at`) so the sender can measure the control path's latency.
//!
//! The block `rx_ctrl` is this queue as a netlist node (inside `rclink_rx` it is
//! `chip.lgK.rx.ctrl_out`):
//!
//! ```text
//!                          +----------------------------------------+
//!  from_check  ==(comb)==> | ctrl queue, generation order          | ==> ctrl : stream<Ctrl> (RSP path)
//!  stream<RxCtrl> ×256     |  this cycle's PSN-check messages first |
//!  from_cnp    ==(comb)==> |  then the CNP generation's CNPs        |
//!  stream<RxCtrl> ×256     |                                        |
//!  from_merge  ==(comb)==> |  then ACK MERGE's polls               | --> last_ack : signal<Psn>
//!  stream<RxCtrl> ×1024    | [AckGate] per destination (VC 5)       | --> ack_cbfc.{credits, blocked}
//!  ack_credit  ==(8)=====> |  ledger, head waits for credit         |
//!  stream<CreditMsg>       +----------------------------------------+
//! ```
//!
//! **Latency**: a message written at cycle n (the three inputs are combinational: the PSN
//! check, the CNP generation and ACK MERGE tick before this block in the same cycle) leaves at n if it reaches the head
//! and the stream and the gate let it; the sender sees it at n + 1.
//!
//! **Counters** (pushes on `ctrl`, per kind): `acks_sent`, `fack_acks`, `dup_acks`,
//! `naks_sent`, `cnps_sent`; the gate's `ack_credit_block`, `ack_credits_in`,
//! `ack_credits_outstanding`.
//!
//! The cores (`PsnCheck`, `AckMerge`) push into a [`CtrlQueue`] they are handed; their blocks
//! hand what a tick queued to this block on their combinational `ctrl` outputs.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{ChipId, CreditSize, Ctrl, LgId, Psn, Rh, RxCtrl};
use serde::{Deserialize, Serialize};

use super::ack_cbfc::{AckCbfcParams, AckGate};

pub use hwsim_ports::CtrlKind;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// [`CtrlPort::bind`] registers them (names from [`counter_name`]); the gate's are
/// `ack_cbfc`'s.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "acks_sent",
        "messages",
        "merged cumulative ACKs (ACK MERGE's) pushed on `ctrl`",
    ),
    CounterDecl::new(
        "fack_acks",
        "messages",
        "immediate ACKs answering a FACK, pushed on `ctrl`",
    ),
    CounterDecl::new(
        "dup_acks",
        "messages",
        "re-ACKs of duplicates (`duplicate: ack`) pushed on `ctrl`",
    ),
    CounterDecl::new("naks_sent", "messages", "NAKs pushed on `ctrl`"),
    CounterDecl::new("cnps_sent", "messages", "CNPs pushed on `ctrl`"),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS, super::ack_cbfc::COUNTERS];

/// The counter that counts pushes of `kind`.
pub fn counter_name(kind: CtrlKind) -> &'static str {
    match kind {
        CtrlKind::Ack => "acks_sent",
        CtrlKind::Fack => "fack_acks",
        CtrlKind::DupAck => "dup_acks",
        CtrlKind::Nak => "naks_sent",
        CtrlKind::Cnp => "cnps_sent",
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
                *slot = Some(b.counter(counter_name(k)));
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
        if ctx.logs() {
            log_sent(ctx, kind, &m);
        }
        Some((kind, m))
    }

    /// When the port next needs a tick: next cycle if messages wait and the stream had room. A
    /// full stream wakes the block when its consumer pops, so a blocked queue needs no timer.
    pub fn next_due(&self, now: Cycle, q: &CtrlQueue) -> Option<Cycle> {
        (self.free && !q.is_empty()).then_some(now + 1)
    }
}

/// The event log's line for a control message sent (out of line: off the send path).
#[cold]
#[inline(never)]
fn log_sent(ctx: &mut Ctx<'_>, kind: CtrlKind, m: &Ctrl) {
    let (class, what) = match kind {
        CtrlKind::Nak => ("nak", "sent"),
        CtrlKind::Cnp => ("cnp", "sent"),
        CtrlKind::Ack => ("ack", "sent"),
        CtrlKind::Fack => ("ack", "sent kind=fack"),
        CtrlKind::DupAck => ("ack", "sent kind=dup"),
    };
    ctx.log(
        class,
        format_args!(
            "{what} dst={} lg={} qp={} psn={}",
            m.dst,
            m.lg,
            m.rh.qp().value(),
            m.rh.psn().value()
        ),
    );
}

/// Messages per cycle the PSN check may hand over (a write port per frame it can check in a
/// cycle, a few messages each): far above the 8 frames a default `data` stream holds.
pub const CHECK_WRITES: u32 = 256;
/// Messages per cycle ACK MERGE may hand over (one per window whose poll is due).
pub const MERGE_WRITES: u32 = 1024;

/// Drains a core's queue onto a combinational `ctrl` output, in order (one write each).
pub fn hand_over(q: &mut CtrlQueue, out: &StreamOut<RxCtrl>) {
    while let Some((kind, ctrl)) = q.pop() {
        out.push(RxCtrl { kind, ctrl });
    }
}

/// Parameters of the `rx_ctrl` block: the ACK + CNP VC's CBFC (the `rclink_rx` composite fills
/// them from its own).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip (the `dst` of the credit returns it takes).
    pub chip: ChipId,
    /// This LG, 0..=7.
    pub lg: LgId,
    /// Per-packet header bytes in a control message's cost, default 50.
    pub pkt_ovhd: u32,
    /// Bytes per CBFC credit, default 256.
    pub credit_size: CreditSize,
    /// ACK-VC credit limit per destination; 0 (default) = no CBFC on the VC.
    pub ack_credits: u32,
    /// CREDIT_UF_LIMIT of the ledgers, 1..=7, default 1.
    pub uf_limit: u32,
    /// `software_ctrl_cbfc_vc_status`: bit 5 = 0 stops the ACK VC.
    pub cbfc_vc_enable: u8,
    /// `stop_cbfc_en`: CBFC off on the ACK VC.
    pub stop_cbfc: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            pkt_ovhd: hwsim_ports::DEFAULT_PKT_OVERHEAD,
            credit_size: CreditSize::default(),
            ack_credits: 0,
            uf_limit: 1,
            cbfc_vc_enable: 0xFF,
            stop_cbfc: false,
        }
    }
}

impl Params {
    fn gate(&self) -> AckCbfcParams {
        AckCbfcParams {
            chip: self.chip,
            lg: self.lg,
            credits: self.ack_credits,
            uf_limit: self.uf_limit,
            pkt_ovhd: self.pkt_ovhd,
            credit_size: self.credit_size,
            vc_enable: self.cbfc_vc_enable,
            stop: self.stop_cbfc,
        }
    }
}

/// Port list: the two combinational inputs, `ctrl` and `last_ack` out, the gate's ports.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::comb_stream_in::<RxCtrl>("from_check", CHECK_WRITES)
            .doc("NAK / FACK ACK / dup re-ACK written by the PSN check this cycle"),
        PortDecl::comb_stream_in::<RxCtrl>("from_cnp", CHECK_WRITES)
            .doc("CNPs written by the CNP generation this cycle"),
        PortDecl::comb_stream_in::<RxCtrl>("from_merge", MERGE_WRITES)
            .doc("cumulative ACKs written by ACK MERGE's polls this cycle"),
        PortDecl::stream_out::<Ctrl>("ctrl").doc("ACK / NAK / CNP back to the sender (RSP path), one per cycle"),
        PortDecl::output::<Psn>("last_ack").doc("ack_psn of the last ACK pushed"),
    ];
    v.extend(AckGate::ports());
    v
}

/// The `rx_ctrl` block.
struct RxCtrlBlock {
    from_check: StreamIn<RxCtrl>,
    from_cnp: StreamIn<RxCtrl>,
    from_merge: StreamIn<RxCtrl>,
    q: CtrlQueue,
    ctrl: CtrlPort,
    gate: AckGate,
    last_ack: Out<Psn>,
}

/// Binds ports; checks the gate's parameters.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.lg > 7 {
        return Err(format!("lg {} out of range 0..=7", p.lg));
    }
    Ok(Box::new(RxCtrlBlock {
        from_check: b.stream_in("from_check")?,
        from_cnp: b.stream_in("from_cnp")?,
        from_merge: b.stream_in("from_merge")?,
        q: CtrlQueue::default(),
        ctrl: CtrlPort::bind(b, "ctrl", &CtrlKind::ALL)?,
        gate: AckGate::bind(&p.gate(), b)?,
        last_ack: b.output("last_ack")?,
    }))
}

impl Component for RxCtrlBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // This cycle's writes in generation order: the PSN check's (arrivals), the CNPs its
        // CE marks made, then ACK MERGE's (its polls see the arrivals).
        while let Some(m) = self.from_check.pop() {
            self.q.push(m.kind, m.ctrl);
        }
        while let Some(m) = self.from_cnp.pop() {
            self.q.push(m.kind, m.ctrl);
        }
        while let Some(m) = self.from_merge.pop() {
            self.q.push(m.kind, m.ctrl);
        }
        // The head leaves only with ACK-VC credit (a return visible now counts).
        self.gate.take_returns(ctx);
        if let Some((kind, m)) = self.ctrl.drive_gated(ctx, &mut self.q, Some(&mut self.gate)) {
            if kind.is_ack() {
                self.last_ack.set(m.rh.psn());
            }
        }
        Wake::earliest(self.ctrl.next_due(now, &self.q))
    }
}
