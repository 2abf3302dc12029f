//! The standalone bank arbiter (kind `bank_arbiter`) for module testbenches and the RTL example:
//! the queue side every RC Link TX runs — the VC queues (`arb.vc_queues`, kind
//! [`vc_queues`](super::vc_queues): the five queues, the per-flow rule, the gates), the round
//! robin (`arb.arbiter`, kind [`vc_arbiter`](super::vc_arbiter)), the CBFC controller
//! (`arb.cbfc`, kind [`cbfc`](super::cbfc)), with the rate gate (`arb.dcqcn`, off), the TYPE2
//! queue (`arb.type2`, empty) and the MAC credit counter (`arb.mac_credit`) — built and wired by
//! the TX's own functions, fed by [`queue_feed`](super::queue_feed) (`arb.feed`), which stands
//! where the TX's slot FIFO and MAC stand: a request is a frame of one packet whose CBFC cost is
//! the request's `cost`. So a module testbench of the bank arbiter runs the queue, gate,
//! pointer and ledger code the system runs, and the composite owns no logic.
//!
//! Seed 000 «VC 仲裁» (the RR pointer rule of v1.5.1, «流内 PSN 顺序保证»); the rules are in
//! [`bank_arbiter`](super::bank_arbiter).
//!
//! ```text
//!                      +-- bank_arbiter ---------------------------------------------------+
//!  req    ==(cap 4)==> | feed ── q_ops, q_changes (comb) ──> vc_queues ── arb_req (comb) ──> | --> ptr, counter
//!  stream<ArbReq>      |   <── q_grant (comb) ─────────────┘    ^  │  <── arbiter.grant ──┘   |     (arbiter's)
//!                      |   frames in, a MAC credit back ──> mac_credit.available (comb)      | --> depth_vc0..4
//!  credit ==(cap 8)==> | cbfc: returns ─ counts (comb) ─> vc_queues; <─ the grant's charge    |     (vc_queues')
//!  stream<CreditMsg>   |                                                                     | ==> grant : stream<ArbReq>
//!                      +---------------------------------------------------------------------+     (feed's)
//! ```
//!
//! **Timing** (the TX's: docs/modules.md): a request or credit visible at n is taken at n and
//! a round runs at n if something changed (a request, a credit return, the MAC taking a frame
//! or giving a credit back, or the last round granted); the grant is on `grant` at n+1;
//! pointer, counter, depths and credits show the state after the round at n.
//!
//! Counters (in the composite's scope): the TX's round's (`diag_arb_calls`,
//! `diag_credit_block`, `frames_sent`, …), the controller's, the feed's `grants`. The
//! controller runs with chip 0 and LG 0 (a return must carry `dst: 0`, `lg: 0`, the defaults).
//!
//! Deviations from the fused standalone block this replaced: the MAC's taking a frame and
//! returning its credit runs a round, as it does in a TX (`diag_arb_calls` counts those
//! rounds); a cost is at most 255 credits (the feed's frames are 32 B a credit).

use hwsim_hw::{ElabError, Netlist, PortDecl};
use serde::{Deserialize, Serialize};

use super::bank_arbiter::{BankArbiter, NUM_VC};
use super::cbfc::{self, MAX_VIEW_DSTS};
use super::{mac_credit, queue_feed, tx, vc_arbiter, vc_queues};

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Weighted-RR weights, frames per turn: banks 0..3, then MUL; each 1..=256.
    pub vc_weights: [u32; NUM_VC],
    /// INITIAL_CREDIT per (dst, vc) of the CBFC gate.
    pub initial_credits: u32,
    /// CREDIT_UF_LIMIT of the CBFC gate.
    pub uf_limit: u32,
    /// Destinations shown on the waves (`cbfc.credits_d{d}`).
    pub view_dsts: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            vc_weights: [1, 1, 1, 1, 256],
            initial_credits: 1024,
            uf_limit: 1,
            view_dsts: 2,
        }
    }
}

impl Params {
    /// Every parameter in its range; the error names the one that is not.
    pub fn check(&self) -> Result<(), String> {
        BankArbiter::new(self.vc_weights)?;
        self.tx_params().check()?;
        if self.view_dsts > MAX_VIEW_DSTS {
            return Err(format!(
                "view_dsts = {}: must be in 0..={MAX_VIEW_DSTS}",
                self.view_dsts
            ));
        }
        Ok(())
    }
    /// The TX's parameters the queue side runs with: these weights and ledgers, chip 0 and
    /// LG 0 (the returns a module testbench sends carry those defaults), packets of 32 B a
    /// credit with no overhead (the feed's frames), every MAC2TX credit, no rate gate, no
    /// TYPE2 group.
    pub fn tx_params(&self) -> tx::Params {
        tx::Params {
            vc_weights: self.vc_weights,
            initial_credits: self.initial_credits,
            uf_limit: self.uf_limit,
            view_dsts: self.view_dsts,
            credit_size: queue_feed::CREDIT_BYTES,
            pkt_ovhd: 0,
            max_payload: queue_feed::MAX_PAYLOAD,
            mac_credits: mac_credit::MAX_MAC_CREDITS,
            rate_control: tx::RateControl::Off,
            ..tx::Params::default()
        }
    }

    fn feed_params(&self) -> queue_feed::Params {
        queue_feed::Params {
            max_cost: self.initial_credits.saturating_sub(self.uf_limit),
        }
    }
}

/// The counter tables of the composite: the TX's (the queue side counts in its scope) and the
/// feed's.
pub const COUNTER_TABLES: &[&[hwsim_hw::CounterDecl]] = &[
    super::tx::COUNTERS,
    super::bank_arbiter::COUNTERS,
    super::cbfc::COUNTERS,
    super::dcqcn::COUNTERS,
    super::type2::COUNTERS,
    queue_feed::COUNTERS,
];

/// The composite's ports: (outer name, node, its port), in the order the fused block had them.
const EXPORTS: [(&str, &str, &str); 10] = [
    ("req", "feed", "req"),
    ("credit", "cbfc", "credit"),
    ("grant", "feed", "grant"),
    ("ptr", "arbiter", "ptr"),
    ("counter", "arbiter", "counter"),
    ("depth_vc0", "vc_queues", "depth_vc0"),
    ("depth_vc1", "vc_queues", "depth_vc1"),
    ("depth_vc2", "vc_queues", "depth_vc2"),
    ("depth_vc3", "vc_queues", "depth_vc3"),
    ("depth_vc4", "vc_queues", "depth_vc4"),
];

/// Port list of `bank_arbiter`: each the port of the node it stands for.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let tp = p.tx_params();
    let feed = queue_feed::ports(&p.feed_params());
    let arb = vc_arbiter::ports(&vc_arbiter::Params {
        vc_weights: p.vc_weights,
    });
    let cb = cbfc::ports(&tp.cbfc_params());
    let vq = vc_queues::ports(&tp);
    EXPORTS
        .iter()
        .map(|&(outer, node, port)| {
            let from = match node {
                "feed" => &feed,
                "arbiter" => &arb,
                "cbfc" => &cb,
                _ => &vq,
            };
            let mut d = from
                .iter()
                .find(|d| d.name == port)
                .expect("a port of the node")
                .clone();
            d.name = outer.to_string();
            d.process(0)
        })
        .collect()
}

/// Creates the children at `path`: the feed (`path.feed`, counting in the composite's scope)
/// and the TX's queue side around it, and exports the composite's ports.
pub fn expand(p: &Params, path: &str, nl: &mut Netlist) -> Result<(), ElabError> {
    crate::split::refuse_at(path, p.check())?;
    let node = |n: &str| hwsim_hw::dotted(path, n);
    let fp = p.feed_params();
    let f_ports = queue_feed::ports(&fp);
    crate::split::add_counting_in_scope(nl, path, "feed", "queue_feed", f_ports, fp, queue_feed::build)?;
    let tp = p.tx_params();
    tx::add_vc_queues(nl, path, &tp, "feed")?;
    tx::add_queue_gates(nl, path, &tp, "feed")?;
    nl.connect(&node("vc_queues.frame"), &node("feed.frame"), None)?;
    nl.connect(&node("feed.mac_return"), &node("mac_credit.credit"), None)?;
    for (outer, n, port) in EXPORTS {
        // `credit` is exported by the CBFC controller's wiring.
        if outer != "credit" {
            nl.export(&node(outer), &node(&format!("{n}.{port}")))?;
        }
    }
    Ok(())
}
