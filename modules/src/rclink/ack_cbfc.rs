//! CBFC on the TYPE1 ACK + CNP VC (seed 002 «CBFC 详细行为»: `TYPE1_ACK + CNP → type1_ack_cbfc
//! → VCa`, one of the seven flows each with its own VC; «流控参数»; SPEC.md «CBFC»). Both ends of
//! it, each a part of an existing block rather than a block of its own:
//!
//! ```text
//!   chip B, LG k: rclink_rx                                  chip A, LG k: rclink_tx
//!  +-------------------------------+   ctrl (ACK/NAK/CNP)   +------------------------------+
//!  | ctrl queue ─> [AckGate] ─────────> router ... router ───> ctrl ─> [AckReturn]          |
//!  |   ledger per (sender, VC 5)   |                        |   credits per sender, summed |
//!  |   send iff remaining ≥ C + uf |   CreditMsg vc = 5     |   one return per cycle       |
//!  |   ack_credit <───────────────────── router ... router <── ack_cr                       |
//!  +-------------------------------+                        +------------------------------+
//! ```
//!
//! **Sender** ([`AckGate`], in `rclink_rx`, which sends the ACKs, NAKs and CNPs): a ledger per
//! (LG, destination) of `ack_credits` (the credit limit of the receiver's ACK buffer), each
//! message costing [`ctrl_cost`] = `max(1, ceil(pkt_ovhd / credit_size))` (1 at 50 B / 256 B: a
//! control message has no payload, but it takes a place in the buffer). The head of the RX's
//! control queue leaves only if its destination's ledger holds `remaining ≥ C + uf_limit`; the
//! queue is one FIFO, so a head waiting for credit holds back the messages behind it, for every
//! destination (one VC, one queue). The seed's switches apply: `cbfc_vc_enable` bit 5 = 0 stops
//! the VC («所有 VC»), `stop_cbfc` turns the check off. The dynamic lower limit is TYPE1 REQ
//! only and does not apply here.
//!
//! **Receiver** ([`AckReturn`], the `ack_return` node in `rclink_tx` beside the slot FIFO, which
//! takes the control messages in and hands each to it on `taken` in the same cycle): every
//! message popped from the TX's `ctrl` input frees its place at once, so its cost is owed back to the
//! sender; what is owed to one sender is summed and goes back as one `CreditMsg` (vc
//! [`ACK_VC`]), one message per cycle, oldest sender first (the same coalescing a busy credit
//! stream gives any CBFC return). The routers carry it like any credit return and deliver it to
//! the sending RX's `ack_credit` input.
//!
//! **Defaults and deviations.** The seed gives no credit limit for this VC. hwsim takes 256 per
//! (LG, sender) in configs/sg2262.yaml: the ACK channel's fixed PFC thresholds, XON 0x80 and XOFF
//! 0xC0 («流控参数»), are the half and three quarters of a 256-entry buffer. Blocks default to
//! `ack_credits: 0` (no ACK-VC CBFC: the RX's `ack_credit` input may stay unbound and its
//! `ack_cbfc.*` state stays at 0; the TX and the router get no extra ports) so a module
//! testbench of the RX or TX alone needs no return path; the system form wires the returns
//! whenever `system.chip.rx.ack_credits` > 0. A control message lost on the wire (a fault)
//! never reaches the receiver, so its credit never comes back: the ledger leaks, and after
//! `ack_credits` − `uf_limit` losses (at cost 1) the RX can send that sender nothing more (docs/spec-findings.md finding 12; `ack_credits: 0` is the way out hwsim offers).
//! The seed's ACK-channel PFC thresholds (PFC mode) are not modelled: the TX takes every control
//! message in the cycle it arrives, so that buffer never fills.

use std::collections::VecDeque;

use hwsim_hw::{Binder, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{ctrl_cost, ChipId, CreditMsg, CreditSize, Ctrl, LgId, ACK_VC};

use super::cbfc::{Cbfc, CbfcMode};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// These are the sender's ([`AckGate`], in `rx_ctrl` and so `rclink_rx`); the receiver's are in
/// [`RETURN_COUNTERS`].
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "ack_credit_block",
        "messages",
        "control messages that waited at the queue head for ACK-VC credit (once each)",
    ),
    CounterDecl::new(
        "ack_credits_in",
        "credits",
        "ACK-VC credits returned by the senders' TXs on `ack_credit`",
    ),
    CounterDecl::new(
        "ack_credits_outstanding",
        "credits",
        "gauge: ACK-VC credits charged and not yet returned, all destinations",
    ),
];

/// The receiver's counter ([`AckReturn`], in `rclink_tx` with `ack_cbfc`).
pub const RETURN_COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "ack_credits_returned",
    "credits",
    "ACK-VC credits pushed on `ack_cr` to the RXs whose ACKs, NAKs and CNPs were taken in",
)];

/// The ACK + CNP VC's CBFC parameters of one RX (the system copies `uf_limit`, `cbfc_vc_enable`
/// and `stop_cbfc` from the TX, `pkt_ovhd` and `credit_size` from the TX's packet format).
#[derive(Clone, Copy, Debug)]
pub struct AckCbfcParams {
    /// This chip and LG (the `dst` and `lg` of the returns it takes).
    pub chip: ChipId,
    /// This LG.
    pub lg: LgId,
    /// Credit limit per (LG, destination); 0 = no CBFC on the VC.
    pub credits: u32,
    /// CREDIT_UF_LIMIT, 1..=7.
    pub uf_limit: u32,
    /// Per-packet overhead bytes (the cost).
    pub pkt_ovhd: u32,
    /// Bytes per credit.
    pub credit_size: CreditSize,
    /// `software_ctrl_cbfc_vc_status`: bit 5 = 0 stops the VC.
    pub vc_enable: u8,
    /// `stop_cbfc_en`: CBFC off.
    pub stop: bool,
}

/// Signal prefix of the sender's state in the RX's scope.
const PREFIX: &str = "ack_cbfc.";

/// The sender's side: the ledgers, the credit input and the state on the waves.
pub struct AckGate {
    /// The ledgers; `None` with `credits` 0 (no CBFC on the VC: every message goes at once).
    cbfc: Option<Cbfc>,
    cost: u32,
    chip: ChipId,
    lg: LgId,
    credit_in: StreamIn<CreditMsg>,
    /// Remaining credits of the ledger last charged or refilled.
    credits_out: Out<u16>,
    /// High while the head message waits for credit.
    blocked_out: Out<bool>,
    /// The head waits for credit (counted once per message).
    blocked: bool,
    c_block: CounterId,
    c_outstanding: CounterId,
    c_returned: CounterId,
}

impl AckGate {
    /// The ports it adds to the RX, whatever `credits` is: a testbench that looks at them works
    /// with the VC's CBFC off too (`ack_credits: 0`, the way out of finding 12). `ack_credit` may
    /// stay unbound (a module testbench without a return path).
    pub fn ports() -> Vec<PortDecl> {
        vec![
            PortDecl::stream_in::<CreditMsg>("ack_credit", 8)
                .optional()
                .doc("credit returns of the ACK + CNP VC (5) from the senders' TXs (with ack_credits)"),
            PortDecl::output::<u16>(&format!("{PREFIX}credits"))
                .doc("remaining ACK-VC credits of the destination last charged or refilled"),
            PortDecl::output::<bool>(&format!("{PREFIX}blocked"))
                .doc("high while the head control message waits for credit"),
        ]
    }

    /// Binds the ports and checks the parameters.
    pub fn bind(p: &AckCbfcParams, b: &mut Binder) -> Result<AckGate, String> {
        let cbfc = if p.credits == 0 {
            None
        } else {
            let mut cbfc = Cbfc::new(p.credit_size.bytes(), p.pkt_ovhd, p.uf_limit, p.credits)
                .map_err(|e| format!("ACK-VC CBFC: {}", e.replace("initial_credits", "ack_credits")))?;
            cbfc.set_mode(CbfcMode {
                vc_enable: p.vc_enable,
                stop: p.stop,
                ..CbfcMode::default()
            });
            Some(cbfc)
        };
        let credits_out: Out<u16> = b.output(&format!("{PREFIX}credits"))?;
        credits_out.set(p.credits as u16);
        Ok(AckGate {
            cbfc,
            cost: ctrl_cost(p.pkt_ovhd, p.credit_size),
            chip: p.chip,
            lg: p.lg,
            credit_in: b.stream_in("ack_credit")?,
            credits_out,
            blocked_out: b.output(&format!("{PREFIX}blocked"))?,
            blocked: false,
            c_block: b.counter("ack_credit_block"),
            c_outstanding: b.counter("ack_credits_outstanding"),
            c_returned: b.counter("ack_credits_in"),
        })
    }

    /// Takes in the credit returns that arrived; a return for another chip, LG or VC, one that
    /// overfills a ledger, or any return with the VC's CBFC off is a protocol violation.
    pub fn take_returns(&mut self, ctx: &mut Ctx<'_>) {
        let mut any = false;
        while let Some(m) = self.credit_in.pop() {
            if m.dst != self.chip || m.lg != self.lg || m.vc != ACK_VC {
                ctx.violation(format!(
                    "ACK-VC credit return for chip {} LG {} VC {} arrived at chip {} LG {}: {m:?}",
                    m.dst, m.lg, m.vc, self.chip, self.lg
                ));
                continue;
            }
            let Some(cbfc) = &mut self.cbfc else {
                ctx.violation(format!("ACK-VC credit return, but this RX has ack_credits 0: {m:?}"));
                continue;
            };
            let l = match cbfc.give_back(m.src, ACK_VC, m.credits.into()) {
                Ok(l) => l,
                Err((l, why)) => {
                    ctx.violation(format!("ACK VC: {why}"));
                    l
                }
            };
            ctx.count(self.c_returned, m.credits.into());
            self.credits_out.set(cbfc.remaining(l) as u16);
            any = true;
        }
        if let (true, Some(cbfc)) = (any, &self.cbfc) {
            ctx.set_counter(self.c_outstanding, cbfc.outstanding());
        }
    }

    /// Whether `head` may leave now; if so its cost is charged. A head that must wait is
    /// counted once (`ack_credit_block`) and shows on `ack_cbfc.blocked` until it leaves.
    pub fn admit(&mut self, ctx: &mut Ctx<'_>, head: &Ctrl) -> bool {
        let Some(cbfc) = &mut self.cbfc else {
            return true;
        };
        let l = cbfc.ledger(head.dst, ACK_VC);
        if !cbfc.admits(l, self.cost) {
            if !self.blocked {
                self.blocked = true;
                self.blocked_out.set(true);
                ctx.count(self.c_block, 1);
            }
            return false;
        }
        if self.blocked {
            self.blocked = false;
            self.blocked_out.set(false);
        }
        cbfc.charge(l, self.cost);
        self.credits_out.set(cbfc.remaining(l) as u16);
        ctx.set_counter(self.c_outstanding, cbfc.outstanding());
        true
    }
}

/// Parameters of the receiver's side, the `ack_return` node (the TX's chip, LG and packet
/// format; `rclink_tx` fills them in with `ack_cbfc`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReturnParams {
    /// This chip (the `src` of the returns).
    pub chip: ChipId,
    /// This LG.
    pub lg: LgId,
    /// Per-packet overhead bytes (a control message's cost).
    pub pkt_ovhd: u32,
    /// Bytes per credit: 32, 64, 128, 256, 1024 or 2048.
    pub credit_size: u32,
}

impl Default for ReturnParams {
    fn default() -> Self {
        ReturnParams {
            chip: 0,
            lg: 0,
            pkt_ovhd: 50,
            credit_size: 256,
        }
    }
}

/// Most control messages the TX takes in per cycle (its `ctrl` stream's capacity).
pub const TAKEN_PER_CYCLE: u32 = 8;

/// Ports of the `ack_return` node.
pub fn return_ports(_p: &ReturnParams) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<Ctrl>("taken", TAKEN_PER_CYCLE)
            .width(TAKEN_PER_CYCLE)
            .doc("the control messages the TX took in this cycle (their places are free)"),
        PortDecl::stream_out::<CreditMsg>("ack_cr")
            .doc("ACK-VC credit returns to the RXs that sent the control messages taken in"),
    ]
}

/// Builds the `ack_return` node.
pub fn return_build(p: &ReturnParams, b: &mut Binder) -> hwsim_hw::BuildResult {
    if !(0..=7).contains(&p.lg) {
        return Err(format!("lg = {}: must be in 0..=7", p.lg));
    }
    let credit_size =
        CreditSize::new(p.credit_size.into()).map_err(|e| format!("credit_size = {}: {e}", p.credit_size))?;
    Ok(Box::new(AckReturn {
        cost: ctrl_cost(p.pkt_ovhd, credit_size),
        chip: p.chip,
        lg: p.lg,
        taken: b.stream_in("taken")?,
        out: b.stream_out("ack_cr")?,
        owed: VecDeque::with_capacity(16),
        c_returned: b.counter("ack_credits_returned"),
    }))
}

/// The receiver's side, the `ack_return` node (`chip.lgK.tx.ack_return` in `rclink_tx` with
/// `ack_cbfc`, between the slot FIFO's `ctrl` intake and the router): credits owed per sender,
/// returned one message per cycle. Latency 0: a message taken in at n is owed at n and its
/// return pushed at n when the stream has room (seen by the router at n + 1).
pub struct AckReturn {
    cost: u32,
    chip: ChipId,
    lg: LgId,
    taken: StreamIn<Ctrl>,
    out: StreamOut<CreditMsg>,
    /// Senders owed credit, oldest first, with the sum owed (a sender appears once).
    owed: VecDeque<(ChipId, u32)>,
    c_returned: CounterId,
}

impl Component for AckReturn {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        while let Some(m) = self.taken.pop() {
            self.took(m.src);
        }
        match self.drive(ctx) {
            Some(t) => Wake::At(t),
            None => Wake::OnInput,
        }
    }
}

impl AckReturn {
    /// A control message from `src` was taken in: its place is free again.
    fn took(&mut self, src: ChipId) {
        match self.owed.iter_mut().find(|(s, _)| *s == src) {
            Some((_, c)) => *c += self.cost,
            None => self.owed.push_back((src, self.cost)),
        }
    }

    /// Pushes the oldest sender's return if the stream has room; returns the cycle it next
    /// needs a tick (a full stream wakes the block when it drains).
    fn drive(&mut self, ctx: &mut Ctx<'_>) -> Option<Cycle> {
        if self.owed.is_empty() || !self.out.can_push() {
            return None;
        }
        let (src, owed) = self.owed[0];
        // The message's field is 15 bits: a larger sum goes back in pieces.
        let n = owed.min(super::cbfc::MAX_CREDITS);
        if n == owed {
            self.owed.pop_front();
        } else {
            self.owed[0].1 -= n;
        }
        self.out.push(CreditMsg {
            src: self.chip,
            dst: src,
            lg: self.lg,
            vc: ACK_VC,
            credits: n as u16,
            sent_at: ctx.now(),
        });
        ctx.count(self.c_returned, n.into());
        (!self.owed.is_empty() && self.out.space() > 1).then_some(ctx.now() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;

    fn ctrl_from(src: ChipId) -> Ctrl {
        Ctrl {
            src,
            ..Default::default()
        }
    }

    #[test]
    fn the_ack_return_node_sums_per_sender_and_returns_one_per_cycle() {
        for skip in [true, false] {
            let p = ReturnParams {
                chip: 7,
                lg: 2,
                ..Default::default()
            };
            let q = p.clone();
            let mut h = Harness::new(
                "ack_return",
                return_ports(&p),
                Box::new(move |b| return_build(&q, b)),
                1,
                8,
            )
            .unwrap();
            h.sim_mut().set_skip(skip);
            h.sim().net("dut.ack_cr").unwrap().enable_log();
            h.step().unwrap();
            // Three messages taken in at cycle 1 (a combinational input: seen at 1): two from
            // chip 3, one from chip 4.
            for src in [3, 4, 3] {
                assert!(h.push("taken", ctrl_from(src)));
            }
            h.steps(5).unwrap();
            let mut got = Vec::new();
            while let Some(m) = h.pop::<CreditMsg>("ack_cr") {
                got.push((m.sent_at, m.src, m.dst, m.lg, m.vc, m.credits));
            }
            // Cost 1 each (50 B of overhead, 256 B credits): chip 3 is owed 2, returned at 1;
            // chip 4 its 1 at 2.
            assert_eq!(got, [(1, 7, 3, 2, ACK_VC, 2), (2, 7, 4, 2, ACK_VC, 1)], "skip = {skip}");
            assert_eq!(h.sim().counter("dut.ack_credits_returned"), Some(3));
        }
    }
}
