//! CBFC controller of one RC Link TX (one LG): the credit ledgers per (dst, vc) and per TYPE2
//! member, and the send rule, checked per packet.
//!
//! Seed 000 «CBFC 流控» (and «TX 侧设计» › «VC 仲裁», where CBFC is the arbiter's gate); appendix C
//! «TX 参数» (CREDIT_SIZE, CREDIT_UF_LIMIT, INITIAL_CREDIT, HEADER_OVERHEAD); seed 002 «CBFC 详细行为»
//! and «多播双重流控» (the TYPE2 ledgers, 2048 each); SPEC.md «TX side».
//!
//! The controller is a netlist node of `rclink_tx` (`chip.lgK.tx.cbfc`, kind `cbfc`, the
//! [`node`] module), and the same node is the kind module testbenches drive. It keeps the
//! ledgers: it takes the credit returns, charges each grant, and tells the VC queues every
//! ledger's count when it changes; the core's VC-queue side applies the send rule
//! ([`Cbfc::run`], this file) to the counts it was told, where the seed puts the gate (at VC
//! arbitration, packet by packet, many flow heads a round):
//!
//! ```text
//!                        +-- cbfc ----------------------------------------+
//!  credit ==(8)=======>  | process 0: returns: ledger += credits           | ==(comb ×8)==> counts : stream<CreditMsg>
//!  stream<CreditMsg>     |   (over-return, misrouted: protocol violations) |   the ledger's remaining credits,
//!  (MAC control path)    |                                                 |   in the cycle (vc_queues, process 0)
//!  charge ==(comb 1)===> | process 1: the grant's charge: ledger −= cost   | ==> charged : stream<CreditMsg>
//!  stream<CreditMsg>     |   (vc 4: every member of the TYPE2 group)       |   each charged ledger's remaining
//!  (vc_queues, process 1)|                                                 |   credits, for the next round
//!                        |   (with groups: a TYPE2 member's counts go on   | ==(comb)==> t2_counts, ==> t2_charged
//!                        |    t2_counts / t2_charged, to `tx.type2`)       |   (the TYPE2 queue's gates)
//!                        |                                                 | --> credit_view : signal<CreditMsg>
//!                        |                                                 | --> credits_d{d} : signal<VcCredits>
//!                        +-------------------------------------------------+
//! ```
//!
//! **Rule** (`eq:rc-cbfc-credit-consume`): a packet of `payload` bytes costs
//! `C = ceil((payload + pkt_ovhd) / credit_size)` credits (1344 B → 6 at 256 B, 50 B); it may go
//! only if the ledger of its (dst, vc) holds `remaining ≥ C + uf_limit`. The check is per packet:
//! a frame's packets are checked one after another against the remaining credits, so a frame
//! whose whole cost exceeds the credits still sends the packets that fit (4 KiB = 6+6+6+1 with 16
//! credits: the first two go, the third waits). Zero-byte packets cost nothing and are never
//! blocked (they consume and return no credit). Credit returns add back; a return that would lift
//! a ledger above `initial_credits` is a protocol violation, and so is a charge above what a
//! ledger holds.
//!
//! **Messages** (all `CreditMsg`, `src` = this chip, `lg` = this LG): a return `{src: the
//! receiver, dst: this chip, lg, vc, credits}` (vc 0..3 a TYPE1 bank, 4 TYPE2); a charge `{dst,
//! vc, credits: cost}` (for vc 4 `dst` is the TYPE2 group's address and every member's ledger
//! is charged); `counts` and `charged` `{dst: the ledger's, vc, credits: remaining}`, one per
//! ledger that changed, so `counts` carries one message per return (a return to a stopped CBFC
//! too).
//!
//! **Latency**: a return visible at n is counted at n and its ledger's count reaches the VC queues'
//! round of n (`counts` is combinational); a grant's charge at n (the core's process 2) is counted
//! at n and its count reaches the next round (`charged`, visible at n + 1: the core grants once
//! a cycle, so no round sits between).
//!
//! **Counters** (counted in the TX's scope): `credits_outstanding` (gauge: Σ initial − remaining
//! over the TYPE1 and TYPE2 ledgers; 0 when every credit came home) and `credit_latency_max` (ns
//! from the receiver's send, `CreditMsg::sent_at`). **Waves**: `credit_view` (the last ledger
//! change of a cycle: a charge after a return), `credits_d{d}` (TYPE1 banks of destination d
//! below `view_dsts`), and the messages on `charge`, `counts`, `charged`.
//!
//! **Advanced switches** (seed 002 «CBFC 详细行为» › «高级特性»), each a parameter: `dyn_uf_limit`
//! (dyn_uf_limit_cbfc_en, off): a packet may also go when `remaining < cost + uf_limit` but
//! `remaining ≥` the cost of a MAX_PAYLOAD packet — the lower limit gives way while a whole
//! packet still fits (TYPE1 REQ only; the VCs here are TYPE1 REQ banks); `vc_enable`
//! (software_ctrl_cbfc_vc_status, 0xFF): bit v = 0 stops VC v outright, zero-byte packets
//! included; `stop_cbfc` (stop_cbfc_en, off): the highest priority, CBFC off — nothing checked,
//! nothing charged, returns ignored. The seed says only «禁用所有 CBFC» for the last; hwsim
//! reads it as flow control off, not as traffic stopped. The rule reads them; the node's
//! ledgers follow `stop_cbfc` (no charge, returns ignored).
//!
//! **Deviations**: `pkt_ovhd` is unsigned (the hardware PktOvhd register is 10-bit signed). The
//! rule is evaluated by the VC queues against the counts this node reports, not inside the node:
//! the round asks it for many flow heads, each depending on the last, in one cycle (see
//! docs/modules.md). The waves show destinations below `view_dsts` only (a signal per
//! destination; the ledgers themselves are unbounded).

use hwsim_hw::{fast_map, Binder, CounterDecl, FastMap, Out, PortDecl};
use hwsim_ports::{cbfc_cost, ChipId, CreditSize, LgId, VcCredits};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it. In
/// `rclink_tx` the node counts in the TX's scope (the names the fused TX had).
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "credits_outstanding",
        "credits",
        "gauge: Σ (initial − remaining) over the CBFC ledgers, TYPE2's too; 0 = all home",
    ),
    CounterDecl::new(
        "credit_latency_max",
        "ns",
        "longest credit-return latency: pop from `credit` − `CreditMsg::sent_at`",
    ),
];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Largest CBFC credit count: the hardware counter is 15 bits.
pub const MAX_CREDITS: u32 = (1 << 15) - 1;

/// Most destinations shown on the waves.
pub const MAX_VIEW_DSTS: u32 = 1024;

/// Parameters (seed 000 appendix C «TX 参数»).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id: returns must be addressed to it (`CreditMsg.dst`), and it is the `src` of
    /// the node's messages.
    pub chip: ChipId,
    /// This link group's index, 0..=7 (`CreditMsg.lg` of every return).
    pub lg: LgId,
    /// Bytes per credit CREDIT_SIZE: 32, 64, 128, 256, 1024 or 2048.
    pub credit_size: u32,
    /// Per-packet header bytes in the cost (HEADER_OVERHEAD), 0..=511.
    pub pkt_ovhd: u32,
    /// CREDIT_UF_LIMIT, credits kept in reserve, 1..=7.
    pub uf_limit: u32,
    /// INITIAL_CREDIT per (dst, vc), uf_limit+1..=32767.
    pub initial_credits: u32,
    /// Destinations 0..view_dsts get a `credits_d{d}` signal on the waves (0..=1024).
    pub view_dsts: u32,
    /// `dyn_uf_limit_cbfc_en`: the dynamic lower limit (default off).
    pub dyn_uf_limit: bool,
    /// `software_ctrl_cbfc_vc_status`: bit v = 0 stops VC v (default 0xFF: all run).
    pub vc_enable: u8,
    /// `stop_cbfc_en`: CBFC off altogether (default false).
    pub stop_cbfc: bool,
    /// MAX_PAYLOAD, bytes: the largest packet, for `dyn_uf_limit` (default 1344).
    pub max_payload: u32,
    /// Initial TYPE2 CBFC credits per member, uf_limit+1..=32767 (seed 002 «RC Link 资源»: 2048).
    pub type2_credits: u32,
    /// Multicast groups (TYPE2) by group id: the member chips, each with a TYPE2 ledger; a
    /// TYPE2 charge names its group's address.
    pub groups: Vec<Vec<ChipId>>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            credit_size: 256,
            pkt_ovhd: 50,
            uf_limit: 1,
            initial_credits: 1024,
            view_dsts: 2,
            dyn_uf_limit: false,
            vc_enable: 0xFF,
            stop_cbfc: false,
            max_payload: 1344,
            type2_credits: 2048,
            groups: Vec::new(),
        }
    }
}

/// CBFC credits of one (dst, vc).
#[derive(Clone, Debug)]
struct Ledger {
    dst: ChipId,
    vc: u8,
    remaining: u32,
}

/// The controller's state and rules (no ports): used alone by the `cbfc` block and as the
/// credit gate inside `rclink_tx`.
#[derive(Clone, Debug)]
pub struct Cbfc {
    credit_size: CreditSize,
    pkt_ovhd: u32,
    uf_limit: u32,
    initial: u32,
    ledgers: Vec<Ledger>,
    index: FastMap<(ChipId, u8), u32>,
    /// Σ over ledgers of initial − remaining.
    outstanding: u64,
    mode: CbfcMode,
    /// Cost of a MAX_PAYLOAD packet (the dynamic lower limit's test).
    max_cost: u32,
}

/// Seed 002 «CBFC 详细行为» › «高级特性»: the switches beside the credit rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbfcMode {
    /// `dyn_uf_limit_cbfc_en`: a packet may also go when the credits are below cost +
    /// uf_limit but still at least a maximum-size packet's cost (TYPE1 REQ only; every VC
    /// modelled here is a TYPE1 REQ bank).
    pub dyn_uf_limit: bool,
    /// `software_ctrl_cbfc_vc_status`: bit v = 0 stops VC v outright, 1 lets it run.
    pub vc_enable: u8,
    /// `stop_cbfc_en`: CBFC off, the highest priority: no packet is checked or charged, and
    /// credit returns are ignored.
    pub stop: bool,
    /// MAX_PAYLOAD, bytes (the largest packet, for `dyn_uf_limit`).
    pub max_payload: u32,
}

impl Default for CbfcMode {
    fn default() -> Self {
        CbfcMode {
            dyn_uf_limit: false,
            vc_enable: 0xFF,
            stop: false,
            max_payload: 1344,
        }
    }
}

impl Cbfc {
    /// Checks the parameters; the error names the offending one.
    pub fn new(credit_size: u32, pkt_ovhd: u32, uf_limit: u32, initial_credits: u32) -> Result<Cbfc, String> {
        let cs = CreditSize::new(credit_size.into()).map_err(|e| format!("credit_size = {credit_size}: {e}"))?;
        if pkt_ovhd > 511 {
            return Err(format!(
                "pkt_ovhd = {pkt_ovhd}: must be in 0..=511 bytes (10-bit signed PktOvhd register)"
            ));
        }
        if !(1..=7).contains(&uf_limit) {
            return Err(format!("uf_limit = {uf_limit}: must be in 1..=7 (0 is forbidden)"));
        }
        if initial_credits <= uf_limit || initial_credits > MAX_CREDITS {
            return Err(format!(
                "initial_credits = {initial_credits}: must be in uf_limit+1..={MAX_CREDITS} (15-bit counter)"
            ));
        }
        Ok(Cbfc {
            credit_size: cs,
            pkt_ovhd,
            uf_limit,
            initial: initial_credits,
            ledgers: Vec::new(),
            index: fast_map(),
            outstanding: 0,
            mode: CbfcMode::default(),
            max_cost: cbfc_cost(1344, pkt_ovhd, cs),
        })
    }

    /// Whether CBFC is off (`stop_cbfc`): packets cost nothing.
    pub fn stopped(&self) -> bool {
        self.mode.stop
    }

    /// Sets the «高级特性» switches.
    pub fn set_mode(&mut self, mode: CbfcMode) {
        self.max_cost = cbfc_cost(mode.max_payload.max(1), self.pkt_ovhd, self.credit_size);
        self.mode = mode;
    }

    /// The rule for one packet of cost `c` on VC `vc` with `left` credits: software stop, the
    /// UF limit, and the dynamic lower limit (the global stop is handled by the callers: no
    /// check at all).
    fn passes(&self, vc: u8, left: u32, c: u32) -> bool {
        if self.mode.vc_enable.checked_shr(vc as u32).is_some_and(|b| b & 1 == 0) {
            return false;
        }
        c == 0 || left >= c + self.uf_limit || (self.mode.dyn_uf_limit && left >= self.max_cost.max(c))
    }

    /// Credits a packet of `payload` bytes costs; 0 for a zero-byte packet.
    pub fn cost(&self, payload: u32) -> u32 {
        if payload == 0 {
            0
        } else {
            cbfc_cost(payload, self.pkt_ovhd, self.credit_size)
        }
    }

    /// The ledger of (dst, vc), created full on first use.
    pub fn ledger(&mut self, dst: ChipId, vc: u8) -> usize {
        if let Some(&i) = self.index.get(&(dst, vc)) {
            return i as usize;
        }
        let i = self.ledgers.len();
        self.ledgers.push(Ledger {
            dst,
            vc,
            remaining: self.initial,
        });
        self.index.insert((dst, vc), i as u32);
        i
    }

    /// Remaining credits of a ledger.
    pub fn remaining(&self, ledger: usize) -> u32 {
        self.ledgers[ledger].remaining
    }

    /// Whether a packet costing `cost` may go on `ledger` now.
    pub fn admits(&self, ledger: usize, cost: u32) -> bool {
        let l = &self.ledgers[ledger];
        self.mode.stop || self.passes(l.vc, l.remaining, cost)
    }

    /// The per-packet rule over a run of packets (their payloads, in order): how many leading
    /// packets pass one after another, and their total cost. Charges nothing.
    pub fn run(&self, ledger: usize, payloads: impl Iterator<Item = u32>) -> (u32, u32) {
        let (vc, mut left) = (self.ledgers[ledger].vc, self.ledgers[ledger].remaining);
        let (mut n, mut total) = (0, 0);
        if self.mode.stop {
            // CBFC off: everything goes, nothing is charged.
            return (payloads.count() as u32, 0);
        }
        for p in payloads {
            let c = self.cost(p);
            if !self.passes(vc, left, c) {
                break;
            }
            left -= c;
            total += c;
            n += 1;
        }
        (n, total)
    }

    /// Takes `cost` credits from a ledger (after [`admits`](Self::admits) or [`run`](Self::run)).
    pub fn charge(&mut self, ledger: usize, cost: u32) {
        if self.mode.stop {
            return;
        }
        self.ledgers[ledger].remaining -= cost;
        self.outstanding += cost as u64;
    }

    /// A charge the ledger may not hold (more than `remaining`) is refused with a description,
    /// the ledger left as it was; otherwise as [`Cbfc::charge`].
    pub fn try_charge(&mut self, ledger: usize, cost: u32) -> Result<(), String> {
        let l = &self.ledgers[ledger];
        if !self.mode.stop && cost > l.remaining {
            return Err(format!(
                "charge of {cost} credits to dst {} VC {} holding {}",
                l.dst, l.vc, l.remaining
            ));
        }
        self.charge(ledger, cost);
        Ok(())
    }

    /// Sets the count of (dst, vc) to what the controller reported (the VC queues' view of the
    /// `cbfc` node's ledgers, which only the node changes).
    pub fn set_remaining(&mut self, dst: ChipId, vc: u8, remaining: u32) {
        let l = self.ledger(dst, vc);
        let before = self.ledgers[l].remaining;
        self.ledgers[l].remaining = remaining;
        self.outstanding = self.outstanding + before as u64 - remaining as u64;
    }

    /// A credit return for (dst, vc). Returns the ledger, or a description of an over-return
    /// (the ledger is then clamped to `initial_credits`).
    pub fn give_back(&mut self, dst: ChipId, vc: u8, credits: u32) -> Result<usize, (usize, String)> {
        let l = self.ledger(dst, vc);
        if self.mode.stop {
            // Nothing was charged; the receiver returns credits all the same.
            return Ok(l);
        }
        let before = self.ledgers[l].remaining;
        let after = before + credits;
        let clamped = after.min(self.initial);
        self.ledgers[l].remaining = clamped;
        self.outstanding -= (clamped - before) as u64;
        if after > self.initial {
            return Err((
                l,
                format!(
                    "credit over-return for dst {dst} VC {vc}: {before} remaining + {credits} returned > {} initial",
                    self.initial
                ),
            ));
        }
        Ok(l)
    }

    /// Credits taken and not yet returned, over every ledger.
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }

    /// The largest cost a single packet may have and still be sendable some day.
    pub fn max_packet_cost(&self) -> u32 {
        self.initial - self.uf_limit
    }

    /// (dst, vc) of a ledger.
    pub fn key(&self, ledger: usize) -> (ChipId, u8) {
        (self.ledgers[ledger].dst, self.ledgers[ledger].vc)
    }

    /// Remaining credits of `dst` on VC banks 0..3 (a ledger not used yet is full).
    pub fn vc_credits(&self, dst: ChipId) -> VcCredits {
        let mut v = [self.initial as u16; 4];
        for (vc, c) in v.iter_mut().enumerate() {
            if let Some(&i) = self.index.get(&(dst, vc as u8)) {
                *c = self.ledgers[i as usize].remaining as u16;
            }
        }
        VcCredits(v)
    }
}

/// The ledgers on the waves: one `{prefix}credits_d{d}` signal per destination below
/// `view_dsts`, written when a ledger of that destination changes.
pub struct CbfcView {
    credits: Vec<Out<VcCredits>>,
}

impl CbfcView {
    /// Port declarations (`prefix` is "" for the block itself, "cbfc." inside `rclink_tx`).
    pub fn ports(prefix: &str, view_dsts: u32) -> Vec<PortDecl> {
        (0..view_dsts.min(MAX_VIEW_DSTS))
            .map(|d| {
                PortDecl::output::<VcCredits>(&credits_name(prefix, d))
                    .level()
                    .doc("remaining CBFC credits of destination d per VC bank (15-bit counters)")
            })
            .collect()
    }
    /// Binds the signals; they start at the initial credits (written at cycle 0).
    pub fn bind(prefix: &str, view_dsts: u32, b: &Binder, cbfc: &Cbfc) -> Result<CbfcView, String> {
        let credits = (0..view_dsts.min(MAX_VIEW_DSTS))
            .map(|d| b.output::<VcCredits>(&credits_name(prefix, d)))
            .collect::<Result<Vec<_>, _>>()?;
        for (d, o) in credits.iter().enumerate() {
            o.set(cbfc.vc_credits(d as ChipId));
        }
        Ok(CbfcView { credits })
    }
    /// Shows the ledgers of `dst` (after a change).
    pub fn show(&self, cbfc: &Cbfc, dst: ChipId) {
        if let Some(o) = self.credits.get(dst as usize) {
            o.set(cbfc.vc_credits(dst));
        }
    }
}

/// `{prefix}credits_d{d}`, without `format!` (a 1024-chip fabric names half a million: 64 per
/// LG, declared and bound).
fn credits_name(prefix: &str, d: u32) -> String {
    let digits = d.to_string();
    hwsim_hw::joined(&[prefix, "credits_d", &digits])
}

/// A message about ledger (`dst`, `vc`) of the CBFC controller of `chip`'s LG `lg`: a charge
/// (`credits` = the cost) to the controller, or a count (`credits` = remaining) from it. One
/// shape for the VC queues and the controller node (see the header's
/// «Messages»); `credits` fits the 15-bit field (a cost or a ledger ≤ 32767).
pub fn ledger_msg(chip: ChipId, lg: LgId, dst: ChipId, vc: u8, credits: u32) -> hwsim_ports::CreditMsg {
    hwsim_ports::CreditMsg {
        src: chip,
        dst,
        lg,
        vc,
        credits: credits as u16,
        sent_at: 0,
    }
}

mod node;
pub use node::{add_wired, build, charged_depth, ports, CbfcNode, RETURNS_PER_CYCLE};

/// Refuses out-of-range parameters naming the parameter (before the ports are declared: the
/// destinations shown shape them).
pub fn check_params(p: &Params) -> Result<(), String> {
    check(p).map(|_| ())
}

/// The TYPE2 send rule and ledgers of these parameters (the TYPE2 queue's, `type2`), checked
/// as the controller checks them.
pub fn type2_rule(p: &Params) -> Result<Cbfc, String> {
    check(p).map(|(_, t2)| t2)
}

/// Validates the block's parameters; returns the TYPE1 and the TYPE2 ledgers, empty.
fn check(p: &Params) -> Result<(Cbfc, Cbfc), String> {
    if p.view_dsts > MAX_VIEW_DSTS {
        return Err(format!("view_dsts = {}: must be in 0..={MAX_VIEW_DSTS}", p.view_dsts));
    }
    if p.lg > 7 {
        return Err(format!("lg = {}: must be in 0..=7", p.lg));
    }
    let mut c = Cbfc::new(p.credit_size, p.pkt_ovhd, p.uf_limit, p.initial_credits)?;
    if p.max_payload == 0 || p.max_payload > 65535 {
        return Err(format!("max_payload = {}: must be in 1..=65535", p.max_payload));
    }
    let mode = CbfcMode {
        dyn_uf_limit: p.dyn_uf_limit,
        vc_enable: p.vc_enable,
        stop: p.stop_cbfc,
        max_payload: p.max_payload,
    };
    c.set_mode(mode);
    let mut t2 =
        Cbfc::new(p.credit_size, p.pkt_ovhd, p.uf_limit, p.type2_credits).map_err(|e| format!("type2_credits: {e}"))?;
    // TYPE2 is not a TYPE1 REQ bank: no dynamic lower limit (as the TX's gate).
    t2.set_mode(CbfcMode {
        dyn_uf_limit: false,
        ..mode
    });
    Ok((c, t2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cbfc(initial: u32) -> Cbfc {
        Cbfc::new(256, 50, 1, initial).unwrap()
    }

    #[test]
    fn cost_of_a_full_packet_is_6() {
        let c = cbfc(1024);
        assert_eq!(c.cost(1344), 6);
        assert_eq!(c.cost(64), 1);
        assert_eq!(c.cost(206), 1);
        assert_eq!(c.cost(207), 2);
        assert_eq!(c.cost(0), 0);
    }

    #[test]
    fn per_packet_rule_sends_what_fits() {
        // A 4 KiB frame: 1344, 1344, 1344, 64 → 6 + 6 + 6 + 1 = 19 (20 with the reserve).
        let mut c = cbfc(16);
        let l = c.ledger(1, 0);
        let frame = [1344, 1344, 1344, 64];
        // 16 ≥ 7: 10 ≥ 7: 4 < 7 — two packets go.
        assert_eq!(c.run(l, frame.iter().copied()), (2, 12));
        // The whole-frame rule would need 20: nothing at all.
        c.charge(l, 12);
        assert_eq!(c.remaining(l), 4);
        assert!(!c.admits(l, 6));
        assert!(c.admits(l, 0), "zero-byte packets are never blocked");
        assert!(c.admits(l, 3));
        assert_eq!(c.run(l, [1344, 64].into_iter()), (0, 0));
        // 7 credits: the smallest ledger on which a full packet can ever go.
        let mut c = cbfc(7);
        let l = c.ledger(1, 0);
        assert_eq!(c.run(l, frame.iter().copied()), (1, 6));
    }

    #[test]
    fn returns_add_back_and_over_returns_are_refused() {
        let mut c = cbfc(20);
        let l = c.ledger(3, 2);
        c.charge(l, 6);
        assert_eq!(c.outstanding(), 6);
        assert_eq!(c.give_back(3, 2, 6), Ok(l));
        assert_eq!(c.outstanding(), 0);
        let e = c.give_back(3, 2, 1).unwrap_err();
        assert!(e.1.contains("over-return for dst 3 VC 2"), "{}", e.1);
        assert_eq!(c.remaining(l), 20);
        assert_eq!(c.vc_credits(3), VcCredits([20, 20, 20, 20]));
    }

    #[test]
    fn parameters_out_of_range_name_the_parameter() {
        assert!(Cbfc::new(100, 50, 1, 10).unwrap_err().contains("credit_size = 100"));
        assert!(Cbfc::new(256, 512, 1, 10).unwrap_err().contains("pkt_ovhd = 512"));
        assert!(Cbfc::new(256, 50, 0, 10).unwrap_err().contains("uf_limit = 0"));
        assert!(Cbfc::new(256, 50, 1, 1).unwrap_err().contains("initial_credits = 1"));
        assert!(Cbfc::new(256, 50, 1, 32768)
            .unwrap_err()
            .contains("initial_credits = 32768"));
        let p = Params {
            view_dsts: 5000,
            ..Default::default()
        };
        assert!(check(&p).unwrap_err().contains("view_dsts = 5000"));
        let p = Params {
            type2_credits: 1,
            ..Default::default()
        };
        assert!(check(&p).unwrap_err().contains("type2_credits: initial_credits = 1"));
    }
}
