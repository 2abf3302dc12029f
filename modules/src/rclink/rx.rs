//! RC Link RX of one link group: a composite of five netlist nodes, the PSN check, the credit
//! return, the CNP generation, ACK MERGE and the control queue, with no logic of its own (seed
//! 000 «RX 侧设计»: «PSN 校验与三种结果», «FACK», «ACK MERGE 汇聚», «ECN 检测与 CNP 生成», «credit
//! 返还»; appendix C «RX 参数»; SPEC.md «RX side»).
//!
//! ```text
//!  chip.lgK.rx (rclink_rx)
//!  +--------------------------------------------------------------------------------+
//!  |                  accepted (comb ×256)                                            |
//!  | data ==> psn_check ===================> ack_merge                                |
//!  |  (8)     (psn_check/)                    (ack_merge.rs)                          |
//!  |           |  charge (comb ×256)           |                                      |
//!  |           +=========> credit_return ====================================+        |==> credit : stream<CreditMsg>
//!  |           |           (credit_return.rs) <-- pause (PAXI RX VC watermark)        |
//!  |           |  ce (comb ×256)               |                                      |
//!  |           +=========> cnp_gen             |                                      |
//!  |           |           (cnp_gen.rs)        |                                      |
//!  |           |             | cnp (comb ×256) |  ctrl (comb ×1024)                   |
//!  |           |  ctrl       v                 |                                      |
//!  |           +================> ctrl_out <===+                                      |==> ctrl : stream<Ctrl>
//!  |           |                  (rx_ctrl.rs: queue in generation order,           |--> last_ack
//!  |           |                   ACK-VC CBFC gate) <== ack_credit                 |--> ack_cbfc.{credits, blocked}
//!  |           +==> deliver : stream<DataFrame> (to PAXI)                             |
//!  |           --> epsn, psn_check.{src, qp, epsn, nak_pending}                       |
//!  |  credit_return.credits_due, cnp_gen.{src, qp, held},                            |
//!  |  ack_merge.{src, qp, pending, next_poll, last_ack}                               |
//!  +--------------------------------------------------------------------------------+
//! ```
//!
//! The rules live in the five blocks (read their headers): [`PsnCheck`](super::psn_check)
//! (PSN check with its three outcomes, FACK, the credit charge, the CE marks, delivery),
//! [`credit_return`](super::credit_return) (the charges back after CREDIT_RETURN_DELAY, summed
//! per cycle and sender, held by PAXI's pause), [`cnp_gen`](super::cnp_gen) (a CE mark → CNP,
//! once per window per CNP_INTERVAL), [`AckMerge`](super::ack_merge) (demand-driven cumulative
//! ACKs) and the control queue ([`rx_ctrl`](super::rx_ctrl): generation order, one message per
//! cycle, ACK-VC CBFC). They are the same nodes a module testbench runs alone (`psn_check`,
//! `credit_return`, `cnp_gen`, `ack_merge`, `rx_ctrl` in `hwsim list`). The hand-offs between
//! them are combinational streams, so in one cycle: every arrival through the PSN check, whose
//! accepted packets reach ACK MERGE, whose credit charges reach the credit return and whose CE
//! marks reach the CNP generation in that cycle; then ACK MERGE's polls due now (they see this
//! cycle's arrivals); then the control queue takes the PSN check's messages, the CNPs and then
//! ACK MERGE's, and sends its head. The composite's timing is the RTL's (no register between
//! the modules), and it is the fused block's this composite replaced, to the cycle and the
//! counter (tests/golden/).
//!
//! The nodes report their counters in this composite's scope (`chip0.lg3.rx.rx_pkts`, as
//! before), and the composite's ports are the nodes' (`rx.ctrl` is `rx.ctrl_out.ctrl`, also on
//! the waves under both names).
//!
//! **Delivery** (`deliver: true`, as the system form builds it): every frame whose last packet
//! is accepted — so the whole frame, in PSN order — is pushed on `deliver` for the chip's PAXI
//! (one per cycle, in arrival order, in the arrival cycle when the stream has room). Frames PAXI
//! cannot take yet wait here (the RC Link RX buffer; counter `deliver_peak`). PAXI's `pause`
//! (its RX VC buffers above the high watermark) holds every credit return of this LG until it
//! drops: CBFC back-pressure. The seed's signal is per VC (TX_PFC_REQ_O[7:0]); hwsim holds all
//! of the LG's returns, since one RC Link VC (a QP bank) carries both PAXI REQ and RSP flits.
//!
//! **ACK-VC CBFC** (`ack_credits` > 0; seed 002 «CBFC 详细行为» `type1_ack_cbfc`; see
//! `ack_cbfc`): the head of the control queue leaves only with credit for its destination's
//! ACK buffer (one per message at the defaults), returned on the `ack_credit` input by the
//! sender's TX; a head that waits holds back the queue behind it (one VC, one FIFO), and ACKs
//! merged before it keep their PSN (no re-merge while queued). State on `ack_cbfc.credits` /
//! `ack_cbfc.blocked`; counters `ack_credit_block` (messages that waited), `ack_credits_in`,
//! `ack_credits_outstanding` (gauge). Off by default here (`ack_credits` 0: the head goes at
//! once and the state stays 0); the system form sets 256.
//!
//! **TYPE2** (multicast copies, seed 002 «TYPE2 无 Go-Back-N 重传»): no PSN check, no ACK, no
//! CNP; each packet returns its credit on the TYPE2 VC (4); a frame all of whose packets
//! arrived is delivered to PAXI, one with a packet missing is dropped (`type2_dropped`; the
//! sender's multicast timeout reports it). `type2_frames` counts those delivered.
//!
//! **Outputs**: NAKs, FACK ACKs, dup re-ACKs and CNPs from the PSN check and the merged ACKs
//! share `ctrl`; credit returns go on `credit`. Each stream takes one push per cycle, so
//! messages generated together queue in generation order (a cycle's arrivals first, in packet
//! order, then its polls) and leave one per cycle, waiting while the stream is full. `epsn`
//! shows the EPSN of the `(src, qp)` last touched by an arrival (it is `psn_check.epsn`);
//! `last_ack` the `ack_psn` of the last ACK pushed (merged, FACK or dup re-ACK; not NAKs). The
//! modules' state is on `psn_check.*` and `ack_merge.*` (their nodes' own ports).
//!
//! **Latency** (arrival = the cycle the frame is visible on `data`, popped at once): NAK, FACK
//! ACK and CNP are pushed in the arrival cycle (seen downstream one cycle later) if `ctrl` is
//! free; the merged ACK at arrival + `poll_cycle` for the first packet of a merge window;
//! credits at arrival + `credit_return_delay`.
//!
//! **Deviations and choices**: those of the two modules (a multi-packet frame checked in one cycle, one NAK per gap,
//! a FACK's ACK is cumulative and clears ACK MERGE, a FACK off EPSN is ACKed not NAKed, PSN
//! distance 2048 counts as a duplicate, the credit cost uses this block's `pkt_ovhd`, misrouted
//! or malformed frames stop the run, ACK MERGE per window rather than per 4 QP groups), plus
//! `duplicate: ack`, which is not in the seed (default `drop`, the seed's rule; see
//! docs/spec-findings.md).
//!
//! Counters (events, never ticks), the names and values of the fused block this replaced: `rx_frames`, `rx_pkts` (all
//! packets, FACKs included), `lost_pkts`, `rx_payload_bytes` (accepted payload), `dup_pkts`,
//! `ooo_pkts` (after EPSN, NAKed or not), `naks_sent`, `acks_sent` (merged ACKs), `fack_acks`
//! (immediate ACKs), `cnps_sent`, `credits_returned` (credits pushed on `credit`),
//! `first_byte_at` / `last_byte_at` (cycle + 1 of the first / last accepted payload; 0 = none),
//! `data_latency_max`; and `dup_acks` (re-ACKs under `duplicate: ack`). `*_sent` and
//! `credits_returned` count pushes.

use hwsim_hw::{CounterDecl, ElabError, Netlist, PortDecl};
use hwsim_ports::{ChipId, CreditSize, LgId};
use serde::{Deserialize, Serialize};

use super::ack_cbfc::AckCbfcParams;
use super::ack_merge;
use super::cnp_gen;
use super::credit_return;
use super::psn_check::{self, Duplicate};
use super::rx_ctrl;
use crate::split;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// None: the composite has no logic; its nodes count in its scope (their tables below).
pub const COUNTERS: &[CounterDecl] = &[];

/// The tables that make up this kind's counters (its own and those of the modules it runs):
/// the three nodes', the control queue's ACK-VC gate included.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[
    COUNTERS,
    psn_check::COUNTERS,
    credit_return::COUNTERS,
    ack_merge::COUNTERS,
    rx_ctrl::COUNTERS,
    super::ack_cbfc::COUNTERS,
];

/// Parameters of one RC Link RX (one per chip and LG); defaults from seed 000 appendix C.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (the `src` of every ACK/NAK/CNP/credit it sends; frames must be for it).
    pub chip: ChipId,
    /// This instance's link group (frames must carry it), 0..=7.
    pub lg: LgId,
    /// Per-packet header bytes in the credit cost (the sender's CBFC overhead), default 50.
    pub pkt_ovhd: u32,
    /// Bytes per CBFC credit: 32, 64, 128, 256, 1024 or 2048; default 256.
    pub credit_size: CreditSize,
    /// MERGE_DEPTH: most packets one cumulative ACK covers (≥ 1), default 64.
    pub merge_depth: u32,
    /// POLL_CYCLE_NS: cycles from the first pending packet to its ACK MERGE poll (≥ 1), default 4.
    pub poll_cycle: u64,
    /// CREDIT_RETURN_DELAY_NS: cycles from arrival to the credit return, default 1.
    pub credit_return_delay: u64,
    /// CNP_INTERVAL_NS: least cycles between CNPs of one (src, qp), default 2500 (the seed's spec
    /// text; its design document says 50000 — see «ECN 检测与 CNP 生成»).
    pub cnp_interval: u64,
    /// Wire bytes of an ACK or NAK (one header), default 50.
    pub ack_bytes: u16,
    /// Wire bytes of a CNP, default 64.
    pub cnp_bytes: u16,
    /// What a duplicate gets: `drop` (the seed, default) or `ack` (re-ACK with EPSN, as RDMA
    /// receivers do; docs/spec-findings.md).
    pub duplicate: Duplicate,
    /// Hand every whole frame accepted to PAXI on a `deliver` stream (the system form sets it;
    /// off by default, when nothing above the RX is modelled).
    pub deliver: bool,
    /// CBFC credit limit of the TYPE1 ACK + CNP VC per destination (seed 002 «CBFC 详细行为»,
    /// `type1_ack_cbfc`; see `ack_cbfc`): 0 (default) = none (the `ack_credit` input may stay
    /// unbound); the system form takes 256 from configs/sg2262.yaml.
    pub ack_credits: u32,
    /// CREDIT_UF_LIMIT of the ACK VC's ledgers (the system copies the TX's), 1..=7, default 1.
    pub uf_limit: u32,
    /// `software_ctrl_cbfc_vc_status` (the system copies the TX's): bit 5 = 0 stops the ACK VC.
    pub cbfc_vc_enable: u8,
    /// `stop_cbfc_en` (the system copies the TX's): CBFC off on the ACK VC too.
    pub stop_cbfc: bool,
}

impl Default for Params {
    fn default() -> Self {
        let pc = psn_check::Params::default();
        let cg = cnp_gen::Params::default();
        let am = ack_merge::Params::default();
        Params {
            chip: 0,
            lg: 0,
            pkt_ovhd: pc.pkt_ovhd,
            credit_size: pc.credit_size,
            merge_depth: am.merge_depth,
            poll_cycle: am.poll_cycle,
            credit_return_delay: credit_return::Params::default().credit_return_delay,
            cnp_interval: cg.cnp_interval,
            ack_bytes: pc.ack_bytes,
            cnp_bytes: cg.cnp_bytes,
            duplicate: pc.duplicate,
            deliver: false,
            ack_credits: 0,
            uf_limit: 1,
            cbfc_vc_enable: 0xFF,
            stop_cbfc: false,
        }
    }
}

impl Params {
    /// The PSN check's share of the parameters.
    pub fn psn_check(&self) -> psn_check::Params {
        psn_check::Params {
            chip: self.chip,
            lg: self.lg,
            pkt_ovhd: self.pkt_ovhd,
            credit_size: self.credit_size,
            ack_bytes: self.ack_bytes,
            duplicate: self.duplicate,
            deliver: self.deliver,
        }
    }
    /// The credit return's share.
    pub fn credit_return(&self) -> credit_return::Params {
        credit_return::Params {
            credit_return_delay: self.credit_return_delay,
        }
    }
    /// The CNP generation's share.
    pub fn cnp_gen(&self) -> cnp_gen::Params {
        cnp_gen::Params {
            chip: self.chip,
            lg: self.lg,
            cnp_interval: self.cnp_interval,
            cnp_bytes: self.cnp_bytes,
        }
    }
    /// The ACK + CNP VC's CBFC share.
    pub fn ack_cbfc(&self) -> AckCbfcParams {
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
    /// ACK MERGE's share of the parameters.
    pub fn ack_merge(&self) -> ack_merge::Params {
        ack_merge::Params {
            chip: self.chip,
            lg: self.lg,
            merge_depth: self.merge_depth,
            poll_cycle: self.poll_cycle,
            ack_bytes: self.ack_bytes,
        }
    }
}

/// The nodes' port lists with this composite's parameters.
fn parts(p: &Params) -> (psn_check::Params, ack_merge::Params, rx_ctrl::Params) {
    let gate = p.ack_cbfc();
    (
        p.psn_check(),
        p.ack_merge(),
        rx_ctrl::Params {
            chip: p.chip,
            lg: p.lg,
            pkt_ovhd: gate.pkt_ovhd,
            credit_size: gate.credit_size,
            ack_credits: gate.credits,
            uf_limit: gate.uf_limit,
            cbfc_vc_enable: gate.vc_enable,
            stop_cbfc: gate.stop,
        },
    )
}

/// The composite's ports and the node port each stands for: (outer name, node, node's port).
fn exports(p: &Params) -> Vec<(&'static str, &'static str, &'static str)> {
    let mut v = vec![("data", "psn_check", "data"), ("credit", "credit_return", "credit")];
    if p.deliver {
        v.push(("deliver", "psn_check", "deliver"));
        v.push(("pause", "credit_return", "pause"));
    }
    v.extend([
        ("ctrl", "ctrl_out", "ctrl"),
        ("epsn", "psn_check", "epsn"),
        ("last_ack", "ctrl_out", "last_ack"),
        ("ack_credit", "ctrl_out", "ack_credit"),
        ("ack_cbfc.credits", "ctrl_out", "ack_cbfc.credits"),
        ("ack_cbfc.blocked", "ctrl_out", "ack_cbfc.blocked"),
    ]);
    v
}

/// Port list: `data` in; `ctrl`, `credit`, `epsn`, `last_ack` (and `deliver`) out; the ACK-VC
/// CBFC ports. Each is the port of the node it stands for, under its outer name.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let (pc, am, rc) = parts(p);
    let node_ports = |node: &str| match node {
        "psn_check" => psn_check::ports(&pc),
        "credit_return" => credit_return::ports(&p.credit_return()),
        "ack_merge" => ack_merge::ports(&am),
        _ => rx_ctrl::ports(&rc),
    };
    exports(p)
        .into_iter()
        .map(|(outer, node, port)| {
            let mut d = node_ports(node)
                .into_iter()
                .find(|d| d.name == port)
                .expect("every export names a node port");
            d.name = outer.to_string();
            if outer == "epsn" {
                d.doc = "EPSN of the (src, qp) most recently touched (psn_check.epsn)";
            }
            d
        })
        .collect()
}

/// Creates the five nodes under `path`, wires them and exports the composite's ports. Refuses
/// (at the node it concerns) `merge_depth` 0, `poll_cycle` 0 and `lg` above 7.
pub fn expand(p: &Params, path: &str, nl: &mut Netlist) -> Result<(), ElabError> {
    let (pc, am, rc) = parts(p);
    let node = |n: &str| hwsim_hw::dotted(path, n);
    // Each node counts in the composite's scope, as the fused block did.
    split::add_counting_in_scope(
        nl,
        path,
        "psn_check",
        "psn_check",
        psn_check::ports(&pc),
        pc,
        psn_check::build,
    )?;
    let cr = p.credit_return();
    split::add_counting_in_scope(
        nl,
        path,
        "credit_return",
        "credit_return",
        credit_return::ports(&cr),
        cr,
        credit_return::build,
    )?;
    let cg = p.cnp_gen();
    split::add_counting_in_scope(nl, path, "cnp_gen", "cnp_gen", cnp_gen::ports(&cg), cg, cnp_gen::build)?;
    split::add_counting_in_scope(
        nl,
        path,
        "ack_merge",
        "ack_merge",
        ack_merge::ports(&am),
        am,
        ack_merge::build,
    )?;
    split::add_counting_in_scope(nl, path, "ctrl_out", "rx_ctrl", rx_ctrl::ports(&rc), rc, rx_ctrl::build)?;
    nl.connect(&node("psn_check.accepted"), &node("ack_merge.accepted"), None)?;
    nl.connect(&node("psn_check.ctrl"), &node("ctrl_out.from_check"), None)?;
    nl.connect(&node("psn_check.ce"), &node("cnp_gen.ce"), None)?;
    nl.connect(&node("psn_check.charge"), &node("credit_return.charge"), None)?;
    nl.connect(&node("cnp_gen.cnp"), &node("ctrl_out.from_cnp"), None)?;
    nl.connect(&node("ack_merge.ctrl"), &node("ctrl_out.from_merge"), None)?;
    for (outer, n, port) in exports(p) {
        nl.export(
            &hwsim_hw::dotted(path, outer),
            &hwsim_hw::joined(&[path, ".", n, ".", port]),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rclink::rx_test::{self, counter, credits, ctrls, drive, frame, log, psn};
    use hwsim_hw::Harness;
    use hwsim_ports::{CreditCount, CreditMsg, CreditSize, Ctrl, DataFrame, Ecn, PktCount, Psn, ACK_VC};

    /// The composite at `dut` with every port on the bench.
    fn harness(p: &Params, sink: u32) -> Result<Harness, ElabError> {
        let q = p.clone();
        Harness::new_composite("rclink_rx", ports(p), move |nl, path| expand(&q, path, nl), 1, sink)
    }

    /// A bench with both output streams logged and room for 256 messages in each.
    fn bench(p: &Params, skip: bool) -> Harness {
        bench_sink(p, skip, 256)
    }

    fn bench_sink(p: &Params, skip: bool, sink: u32) -> Harness {
        let mut h = harness(p, sink).unwrap();
        h.sim_mut().set_skip(skip);
        h.sim().net("dut.ctrl").unwrap().enable_log();
        h.sim().net("dut.credit").unwrap().enable_log();
        h
    }

    /// Runs `f` with event skip on and off; both must see the same streams and counters.
    fn both_modes(f: impl Fn(bool) -> Harness) {
        rx_test::both_modes(f, &["ctrl", "credit"]);
    }

    /// psn == EPSN: accepted; one cumulative ACK `poll_cycle` after the arrival; 6 credits one
    /// cycle after it.
    #[test]
    fn in_order_accept_and_ack_after_poll() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            // Pushed at 0 → arrives at 1 → poll at 5; credit due at 2.
            drive(&mut h, &[(0, frame(3, 5, 0, 1344))], 50);
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 1)]);
            assert_eq!(credits(&h), vec![(2, 3, 1, 6)]);
            assert_eq!(h.peek::<Psn>("epsn"), psn(1));
            assert_eq!(h.peek::<Psn>("last_ack"), psn(1));
            assert_eq!(counter(&h, "rx_pkts"), 1);
            assert_eq!(counter(&h, "rx_payload_bytes"), 1344);
            assert_eq!(counter(&h, "acks_sent"), 1);
            assert_eq!(counter(&h, "credits_returned"), 6);
            assert_eq!(counter(&h, "first_byte_at"), 2);
            assert_eq!(counter(&h, "last_byte_at"), 2);
            h
        });
    }

    /// Four full frames (16 packets) inside one poll window → one ACK for all of them; one
    /// credit message per frame (6 + 6 + 6 + 1 = 19, summed per cycle).
    #[test]
    fn many_packets_merged_into_one_ack() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows: Vec<_> = (0..4).map(|k| (k, frame(3, 5, 4 * k as u16, 4096))).collect();
            drive(&mut h, &rows, 50);
            // Arrivals 1..=4; the poll scheduled by the first runs at 5 and sees all 16.
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 16)]);
            assert_eq!(
                credits(&h),
                vec![(2, 3, 1, 19), (3, 3, 1, 19), (4, 3, 1, 19), (5, 3, 1, 19)]
            );
            assert_eq!(counter(&h, "rx_pkts"), 16);
            assert_eq!(counter(&h, "acks_sent"), 1);
            assert_eq!(counter(&h, "rx_payload_bytes"), 4 * 4096);
            assert_eq!(counter(&h, "first_byte_at"), 2);
            assert_eq!(counter(&h, "last_byte_at"), 5);
            h
        });
    }

    /// More than MERGE_DEPTH pending: the first ACK covers exactly 64, the rest 4 ns later.
    #[test]
    fn merge_depth_limit_gives_a_second_ack() {
        both_modes(|skip| {
            let p = Params {
                poll_cycle: 20,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            // 17 frames × 4 packets = 68, arriving at 1..=17; poll at 21.
            let rows: Vec<_> = (0..17).map(|k| (k, frame(3, 5, 4 * k as u16, 4096))).collect();
            drive(&mut h, &rows, 100);
            assert_eq!(ctrls(&h), vec![(21, "ACK", 5, 64), (41, "ACK", 5, 68)]);
            h
        });
        both_modes(|skip| {
            let p = Params {
                merge_depth: 4,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            // 2 frames × 4 packets arriving at 1, 2 → ACK 4 at 5, ACK 8 at 9.
            let rows = [(0, frame(3, 5, 0, 4096)), (1, frame(3, 5, 4, 4096))];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 4), (9, "ACK", 5, 8)]);
            assert_eq!(counter(&h, "acks_sent"), 2);
            h
        });
    }

    /// A gap: one NAK with ack_psn = EPSN, one only until EPSN moves; every packet returns
    /// credit; the resend is accepted.
    #[test]
    fn gap_gives_one_nak_and_credit_still_returned() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 0, 1344)),
                (1, frame(3, 5, 2, 1344)), // gap: EPSN 1 → NAK 1
                (2, frame(3, 5, 3, 1344)), // same gap: no second NAK
                (3, frame(3, 5, 1, 1344)), // resend
                (4, frame(3, 5, 2, 1344)),
                (5, frame(3, 5, 3, 1344)),
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(2, "NAK", 5, 1), (5, "ACK", 5, 3), (10, "ACK", 5, 4)]);
            assert_eq!(credits(&h), (2..8).map(|c| (c, 3, 1, 6)).collect::<Vec<_>>());
            assert_eq!(counter(&h, "naks_sent"), 1);
            assert_eq!(counter(&h, "ooo_pkts"), 2);
            assert_eq!(counter(&h, "credits_returned"), 36);
            assert_eq!(counter(&h, "rx_payload_bytes"), 4 * 1344);
            assert_eq!(h.peek::<Psn>("epsn"), psn(4));
            h
        });
    }

    /// Once EPSN has moved, a new gap NAKs again.
    #[test]
    fn new_gap_after_progress_naks_again() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 1, 64)), // NAK 0
                (1, frame(3, 5, 0, 64)), // EPSN 1
                (2, frame(3, 5, 2, 64)), // EPSN 1 ≠ the NAKed 0 … but 2 is after 1: NAK 1
                (3, frame(3, 5, 3, 64)), // suppressed
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(1, "NAK", 5, 0), (3, "NAK", 5, 1), (6, "ACK", 5, 1)]);
            assert_eq!(counter(&h, "naks_sent"), 2);
            assert_eq!(counter(&h, "credits_returned"), 4);
            h
        });
    }

    /// A duplicate is dropped silently but returns its credit.
    #[test]
    fn duplicate_dropped_credit_returned() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 0, 1344)),
                (1, frame(3, 5, 1, 1344)),
                (2, frame(3, 5, 0, 1344)),  // duplicate
                (3, frame(3, 5, 4000, 64)), // far behind in ring order: duplicate
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 2)]);
            assert_eq!(
                credits(&h),
                vec![(2, 3, 1, 6), (3, 3, 1, 6), (4, 3, 1, 6), (5, 3, 1, 1)]
            );
            assert_eq!(counter(&h, "dup_pkts"), 2);
            assert_eq!(counter(&h, "naks_sent"), 0);
            assert_eq!(counter(&h, "rx_payload_bytes"), 2 * 1344);
            assert_eq!(counter(&h, "credits_returned"), 19);
            h
        });
    }

    /// A zero-byte packet (FACK): immediate ACK, no credit, no CNP; it covers what ACK MERGE
    /// holds, so the pending poll sends nothing.
    #[test]
    fn fack_immediate_ack_without_credit() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let mut fack = frame(3, 5, 1, 0);
            fack.ecn = Ecn::Ce;
            let rows = [
                (0, frame(3, 5, 0, 1344)), // arrives 1, poll at 5
                (1, fack),                 // arrives 2: ACK 2 at once
                (9, frame(3, 5, 9, 0)),    // FACK in a gap: ACK with EPSN 2, no NAK
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(2, "ACK", 5, 2), (10, "ACK", 5, 2)]);
            assert_eq!(credits(&h), vec![(2, 3, 1, 6)]);
            assert_eq!(counter(&h, "fack_acks"), 2);
            assert_eq!(counter(&h, "acks_sent"), 0);
            assert_eq!(counter(&h, "cnps_sent"), 0);
            assert_eq!(counter(&h, "rx_pkts"), 3);
            assert_eq!(counter(&h, "rx_payload_bytes"), 1344);
            assert_eq!(h.peek::<Psn>("last_ack"), psn(2));
            h
        });
    }

    /// CE-marked accepted packets: one CNP per (src, qp) per CNP_INTERVAL; dropped packets send
    /// none.
    #[test]
    fn cnp_interval() {
        both_modes(|skip| {
            let p = Params {
                cnp_interval: 10,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            let ce = |mut f: DataFrame| {
                f.ecn = Ecn::Ce;
                f
            };
            let rows = [
                (0, ce(frame(3, 5, 0, 4096))), // 1: CNP (4 CE packets, one CNP)
                (1, ce(frame(3, 5, 4, 64))),   // 2: 2 − 1 < 10: none
                (2, ce(frame(3, 6, 0, 64))),   // 3: another QP: CNP
                (3, ce(frame(3, 5, 0, 64))),   // 4: duplicate: none
                (9, ce(frame(3, 5, 5, 64))),   // 10: 10 − 1 = 9 < 10: none
                (10, ce(frame(3, 5, 6, 64))),  // 11: 11 − 1 = 10 ≥ 10: CNP
            ];
            drive(&mut h, &rows, 50);
            let cnps: Vec<_> = ctrls(&h)
                .into_iter()
                .filter(|c| c.1 == "CNP")
                .map(|c| (c.0, c.2))
                .collect();
            assert_eq!(cnps, vec![(1, 5), (3, 6), (11, 5)]);
            assert_eq!(counter(&h, "cnps_sent"), 3);
            h
        });
        // Default interval 2500: CE at 1 and 100 → one CNP; at 2501 → another.
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let ce = |mut f: DataFrame| {
                f.ecn = Ecn::Ce;
                f
            };
            let rows = [
                (0, ce(frame(3, 5, 0, 64))),
                (99, ce(frame(3, 5, 1, 64))),
                (2499, ce(frame(3, 5, 2, 64))),
                (2500, ce(frame(3, 5, 3, 64))),
            ];
            drive(&mut h, &rows, 2600);
            let cnps: Vec<_> = ctrls(&h).into_iter().filter(|c| c.1 == "CNP").map(|c| c.0).collect();
            assert_eq!(cnps, vec![1, 2501]);
            h
        });
    }

    /// EPSN wraps 4095 → 0: a frame carrying PSNs 4094, 4095, 0, 1 is accepted, the ACK says 2,
    /// 4090 is then a duplicate and 5 a gap.
    #[test]
    fn psn_wraps() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            // 1023 full frames (PSN 0..4091) and a 2-packet one (4092, 4093), arriving at 1..=1024;
            // polls every 4 cycles from 5, the last at 1025.
            let mut rows: Vec<_> = (0..1023u64).map(|k| (k, frame(3, 5, 4 * k as u16, 4096))).collect();
            rows.push((1023, frame(3, 5, 4092, 2688)));
            rows.push((1100, frame(3, 5, 4094, 4096)));
            rows.push((1200, frame(3, 5, 4090, 1344)));
            rows.push((1201, frame(3, 5, 5, 1344)));
            drive(&mut h, &rows, 1300);
            let c = ctrls(&h);
            assert_eq!(
                &c[c.len() - 3..],
                &[(1025, "ACK", 5, 4094), (1105, "ACK", 5, 2), (1202, "NAK", 5, 2)]
            );
            assert_eq!(counter(&h, "rx_pkts"), 4092 + 2 + 4 + 2);
            assert_eq!(counter(&h, "dup_pkts"), 1);
            assert_eq!(counter(&h, "naks_sent"), 1);
            assert_eq!(h.peek::<Psn>("epsn"), psn(2));
            h
        });
    }

    /// Credit returns: the packets of one arrival are summed per (src, vc) into one message;
    /// different senders / VCs get their own; one push per cycle, the rest queue in order.
    #[test]
    fn credit_sums_per_cycle_and_queue() {
        both_modes(|skip| {
            let p = Params {
                credit_return_delay: 3,
                credit_size: CreditSize::B64,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            let rows = [
                (0, frame(3, 5, 0, 4096)), // arrives 1, due 4: 22+22+22+2 = 68 to (3, vc 1)
                (1, frame(4, 6, 0, 1344)), // arrives 2, due 5: 22 to (4, vc 2)
                (2, frame(3, 7, 0, 100)),  // arrives 3, due 6: 3 to (3, vc 3)
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(credits(&h), vec![(4, 3, 1, 68), (5, 4, 2, 22), (6, 3, 3, 3)]);
            assert_eq!(counter(&h, "credits_returned"), 93);
            h
        });
        // A credit sink that holds one message: the returns wait and leave in order.
        both_modes(|skip| {
            let mut h = bench_sink(&Params::default(), skip, 1);
            let rows = [
                (0, frame(3, 5, 0, 1344)),
                (1, frame(3, 5, 1, 1344)),
                (2, frame(3, 5, 2, 64)),
            ];
            drive(&mut h, &rows, 20);
            assert_eq!(credits(&h), vec![(2, 3, 1, 6)]);
            assert!(h.pop::<CreditMsg>("credit").is_some());
            h.step().unwrap();
            h.step().unwrap();
            assert!(h.pop::<CreditMsg>("credit").is_some());
            h.step().unwrap();
            h.step().unwrap();
            assert_eq!(credits(&h), vec![(2, 3, 1, 6), (21, 3, 1, 6), (23, 3, 1, 1)]);
            // The ctrl sink also held one: the ACK went at 5.
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 3)]);
            h
        });
    }

    /// Several messages for `ctrl` in one cycle leave one per cycle in generation order:
    /// arrivals (NAK, CNP) before the cycle's polls.
    #[test]
    fn ctrl_messages_queue_in_order() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let mut a = frame(3, 5, 0, 64);
            a.ecn = Ecn::Ce;
            let rows = [
                (0, frame(3, 6, 0, 64)), // arrives 1, poll for qp 6 at 5
                (3, frame(3, 6, 7, 64)), // arrives 4: NAK (qp 6, 1)
                (4, a),                  // arrives 5: CNP (qp 5), then the qp-6 poll's ACK
            ];
            drive(&mut h, &rows, 30);
            assert_eq!(
                ctrls(&h),
                vec![(4, "NAK", 6, 1), (5, "CNP", 5, 0), (6, "ACK", 6, 1), (9, "ACK", 5, 1)]
            );
            h
        });
        // Polls due in one cycle go in (src, qp) order, not in the order they were scheduled.
        both_modes(|skip| {
            let p = Params {
                merge_depth: 1,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            let rows = [
                (0, frame(3, 5, 0, 2688)), // arrives 1: 2 packets; poll 5 ACKs one, again at 9
                (4, frame(4, 6, 0, 64)),   // arrives 5 (before the poll): its poll at 9 too
            ];
            drive(&mut h, &rows, 30);
            // At 9 the (4, 6) poll was scheduled first, but (3, 5) goes first.
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 1), (9, "ACK", 5, 2), (10, "ACK", 6, 1)]);
            h
        });
    }

    /// `duplicate: ack`: a resent packet is answered at once with ACK EPSN (counted as
    /// `dup_acks`), which also covers what ACK MERGE held, so the poll sends nothing.
    #[test]
    fn duplicate_ack_reacks_and_covers_ack_merge() {
        both_modes(|skip| {
            let p = Params {
                duplicate: Duplicate::Ack,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            let rows = [
                (0, frame(3, 5, 0, 2688)), // arrives 1: PSNs 0, 1; poll at 5
                (1, frame(3, 5, 0, 1344)), // arrives 2: duplicate → ACK 2 at once
            ];
            drive(&mut h, &rows, 30);
            assert_eq!(ctrls(&h), vec![(2, "ACK", 5, 2)]);
            assert_eq!(counter(&h, "dup_acks"), 1);
            assert_eq!(counter(&h, "dup_pkts"), 1);
            assert_eq!(counter(&h, "acks_sent"), 0);
            assert_eq!(counter(&h, "credits_returned"), 18);
            assert_eq!(h.peek::<Psn>("last_ack"), psn(2));
            h
        });
    }

    /// The modules' state on `psn_check.*` and `ack_merge.*`.
    #[test]
    fn module_state_on_nested_signals() {
        let mut h = bench(&Params::default(), true);
        // Arrivals at 1 (PSNs 0..3) and 2 (PSN 6: gap, NAK 4).
        drive(&mut h, &[(0, frame(3, 5, 0, 4096)), (1, frame(3, 5, 6, 64))], 3);
        assert_eq!(h.peek::<u16>("psn_check.src"), 3);
        assert_eq!(h.peek::<hwsim_ports::QpId>("psn_check.qp").value(), 5);
        assert_eq!(h.peek::<Psn>("psn_check.epsn"), psn(4));
        assert!(h.peek::<bool>("psn_check.nak_pending"));
        // 19 returned at 2, the gap packet's 1 at 3.
        assert_eq!(h.peek::<CreditCount>("credit_return.credits_due"), CreditCount(1));
        assert_eq!(h.peek::<PktCount>("ack_merge.pending"), PktCount(4));
        assert_eq!(h.peek::<u64>("ack_merge.next_poll"), 5);
        drive(&mut h, &[], 6);
        assert_eq!(h.peek::<PktCount>("ack_merge.pending"), PktCount(0));
        assert_eq!(h.peek::<u64>("ack_merge.next_poll"), 0);
        assert_eq!(h.peek::<Psn>("ack_merge.last_ack"), psn(4));
        assert_eq!(h.peek::<CreditCount>("credit_return.credits_due"), CreditCount(0));
    }

    /// Several (src, qp) windows are independent.
    #[test]
    fn windows_are_independent() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 0, 64)),
                (1, frame(4, 5, 0, 64)), // same QP, another sender: its own EPSN 0
                (2, frame(3, 9, 0, 64)),
                (3, frame(3, 5, 1, 64)),
            ];
            drive(&mut h, &rows, 30);
            let mut c = ctrls(&h);
            c.sort();
            assert_eq!(c, vec![(5, "ACK", 5, 2), (6, "ACK", 5, 1), (7, "ACK", 9, 1)]);
            let acks: Vec<_> = log::<Ctrl>(&h, "ctrl").iter().map(|(_, m)| m.dst).collect();
            assert_eq!(acks, vec![3, 4, 3]);
            assert_eq!(counter(&h, "naks_sent"), 0);
            h
        });
    }

    /// Frames for another LG or chip, and malformed frames, stop the run.
    #[test]
    fn misrouted_frame_is_a_violation() {
        for bad in [
            DataFrame {
                lg: 1,
                ..frame(3, 5, 0, 64)
            },
            DataFrame {
                dst: 2,
                ..frame(3, 5, 0, 64)
            },
            DataFrame {
                npkts: 0,
                ..frame(3, 5, 0, 64)
            },
            DataFrame {
                npkts: 2,
                ..frame(3, 5, 0, 64)
            },
        ] {
            let mut h = bench(&Params::default(), true);
            h.push("data", bad);
            h.step().unwrap();
            assert!(h.step().is_err(), "{bad:?}");
        }
    }

    /// CBFC on the ACK + CNP VC: with 3 credits and uf_limit 1, two ACKs (cost 1 each) go and
    /// the third waits at the head, holding back another destination's ACK behind it, until a
    /// return of 2 arrives on `ack_credit`.
    #[test]
    fn ack_vc_cbfc_holds_the_head_until_credit_returns() {
        let p = Params {
            ack_credits: 3,
            ..Params::default()
        };
        both_modes(|skip| {
            let mut h = bench(&p, skip);
            let rows = [
                (0, frame(3, 5, 0, 64)), // ACK at 5
                (1, frame(3, 6, 0, 64)), // ACK at 6
                (2, frame(3, 7, 0, 64)), // poll at 7: 1 credit left < 1 + uf_limit
                (3, frame(4, 8, 0, 64)), // poll at 8: queued behind the blocked head
            ];
            drive(&mut h, &rows, 10);
            assert!(h.peek::<bool>("ack_cbfc.blocked"));
            assert_eq!(counter(&h, "ack_credits_outstanding"), 2);
            let back = CreditMsg {
                src: 3,
                dst: 0,
                lg: 0,
                vc: ACK_VC,
                credits: 2,
                sent_at: 0,
            };
            rx_test::drive_port(&mut h, "ack_credit", &[(10, back)], 20);
            assert_eq!(
                ctrls(&h),
                vec![(5, "ACK", 5, 1), (6, "ACK", 6, 1), (11, "ACK", 7, 1), (12, "ACK", 8, 1)]
            );
            assert_eq!(counter(&h, "ack_credit_block"), 1);
            assert_eq!(counter(&h, "ack_credits_in"), 2);
            // Chip 3 holds one (the third ACK), chip 4 one.
            assert_eq!(counter(&h, "ack_credits_outstanding"), 2);
            assert!(!h.peek::<bool>("ack_cbfc.blocked"));
            h
        });
        // `cbfc_vc_enable` bit 5 = 0 stops the VC: nothing leaves; `stop_cbfc` lets all go.
        for (vc_enable, stop, acks) in [(0xDF, false, 0), (0xFF, true, 3)] {
            let q = Params {
                cbfc_vc_enable: vc_enable,
                stop_cbfc: stop,
                ..p.clone()
            };
            let mut h = bench(&q, true);
            let rows = [
                (0, frame(3, 5, 0, 64)),
                (1, frame(3, 6, 0, 64)),
                (2, frame(3, 7, 0, 64)),
            ];
            drive(&mut h, &rows, 20);
            assert_eq!(ctrls(&h).len(), acks, "vc_enable {vc_enable:#x} stop {stop}");
        }
    }

    /// An ACK-VC return for another LG or VC, or one that overfills the ledger, stops the run.
    #[test]
    fn bad_ack_vc_return_is_a_violation() {
        let p = Params {
            ack_credits: 3,
            ..Params::default()
        };
        let ok = CreditMsg {
            src: 3,
            dst: 0,
            lg: 0,
            vc: ACK_VC,
            credits: 1,
            sent_at: 0,
        };
        for bad in [
            CreditMsg { lg: 1, ..ok },
            CreditMsg { vc: 2, ..ok },
            CreditMsg { dst: 9, ..ok },
            ok, // nothing was charged: an over-return
        ] {
            let mut h = bench(&p, true);
            h.push("ack_credit", bad);
            h.step().unwrap();
            assert!(h.step().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_params_refused() {
        for p in [
            Params {
                merge_depth: 0,
                ..Params::default()
            },
            Params {
                poll_cycle: 0,
                ..Params::default()
            },
            Params {
                lg: 8,
                ..Params::default()
            },
            Params {
                ack_credits: 1, // not above uf_limit
                ..Params::default()
            },
            Params {
                ack_credits: 40_000, // past the 15-bit counter
                ..Params::default()
            },
        ] {
            assert!(harness(&p, 1).is_err());
        }
    }
}
