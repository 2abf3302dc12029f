//! The composite `rclink_tx` (seed 000 «TX 侧设计»): its ports, and its children — CNP MERGE
//! ([`cnp_merge`](crate::rclink::cnp_merge), the control input in front of the slot FIFO), the
//! slot FIFO ([`slot_fifo`](crate::rclink::slot_fifo), its node in slot_fifo/node/), the VC queues
//! ([`vc_queues`](crate::rclink::vc_queues)), the DCQCN rate gate, the CBFC controller and the
//! TYPE2 queue beside them, the bank arbiter's round robin ([`vc_arbiter`](crate::rclink::vc_arbiter),
//! `arbiter`) and the MAC credit counter ([`mac_credit`](crate::rclink::mac_credit)) — wired
//! combinationally both ways around the round. The composite owns no logic; see the parent
//! module's header for the diagram.

use hwsim_hw::{ElabError, Netlist, PortDecl};

use super::{Params, RateControl};
use crate::rclink::slot_fifo::{build, ports as core_ports};
use crate::rclink::{ack_cbfc, cbfc, cc_window, cnp_merge, dcqcn, mac_credit, type2, vc_arbiter, vc_queues};
use crate::split;

/// The MAC credit counter's parameters, from the TX's.
fn mac_credit_params(p: &Params) -> mac_credit::Params {
    mac_credit::Params {
        credits: p.mac_credits,
        mul_credits: p.mul_mac_credits,
    }
}

/// The composite's ports that stand for a port of the MAC credit counter (outer name, its
/// port); every other port of the composite is the core's under the same name.
const MAC_CREDIT_EXPORTS: [(&str, &str); 2] = [("mac_credit", "credit"), ("type2.mac_credit", "mul_available")];

/// CNP MERGE's parameters, from the TX's: off with the rate gate (`rate_control: false`) or on
/// its own (`cnp_merge: {enabled: false}`: every CNP cuts its flow's rate).
fn cnp_merge_params(p: &Params) -> cnp_merge::Params {
    cnp_merge::Params {
        enabled: p.rate_control.on() && p.cnp_merge.enabled,
        ..p.cnp_merge.clone()
    }
}

/// The slot FIFO's ports the composite exports under the same names (the rest are wired inside,
/// or are its state, seen at its own path: `tx.slot_fifo.slots`).
const SLOT_FIFO_OUTER: [&str; 3] = ["seg", "done", "slots_used"];

/// The VC queues' ports the composite exports (the rest are wired inside), as (outer name, the
/// node's port): the queues' depths and WAIT_CRD keep the names they had as
/// the slot FIFO's state.
const VC_QUEUES_OUTER: [(&str, &str); 7] = [
    ("frame", "frame"),
    ("slot_fifo.depth_vc0", "depth_vc0"),
    ("slot_fifo.depth_vc1", "depth_vc1"),
    ("slot_fifo.depth_vc2", "depth_vc2"),
    ("slot_fifo.depth_vc3", "depth_vc3"),
    ("slot_fifo.depth_vc4", "depth_vc4"),
    ("slot_fifo.wait_crd", "wait_crd"),
];

/// Port list of `rclink_tx` (the composite): the core's outer ports and the MAC credit
/// counter's return input (`mac_credit`) and multicast count (`type2.mac_credit`), each the
/// port of the node it stands for. `mac_credit.available` is the counter node's own port at
/// that path.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mc = mac_credit::ports(&mac_credit_params(p));
    let mut v: Vec<PortDecl> = core_ports(p)
        .into_iter()
        .filter(|d| SLOT_FIFO_OUTER.contains(&d.name.as_str()))
        .map(|d| d.process(0))
        .collect();
    // The VC queues' frames after `seg`, their depths and WAIT_CRD after the slots.
    let vq: Vec<PortDecl> = vc_queues::ports(p)
        .into_iter()
        .filter_map(|mut d| {
            let (outer, _) = VC_QUEUES_OUTER.iter().find(|(_, n)| *n == d.name)?;
            d.name = outer.to_string();
            Some(d.process(0))
        })
        .collect();
    v.insert(1, vq[0].clone());
    v.extend(vq[1..].iter().cloned());
    // `ctrl` is CNP MERGE's input, where the core's was (after `seg`).
    let ctrl = cnp_merge::ports(&cnp_merge_params(p))
        .into_iter()
        .find(|d| d.name == "ctrl")
        .expect("cnp_merge has `ctrl`");
    v.insert(1, ctrl);
    // The CBFC controller's returns and view, where the core had them (after `ctrl`, after
    // `done`); its `credits_d{d}` are its own ports at `cbfc.credits_d{d}`.
    let cb = cbfc::ports(&p.cbfc_params());
    let cb_port = |n: &str| cb.iter().find(|d| d.name == n).expect("a cbfc port").clone();
    v.insert(2, cb_port("credit"));
    let after_done = v.iter().position(|d| d.name == "done").map_or(v.len(), |i| i + 1);
    v.insert(after_done, cb_port("credit_view"));
    for (outer, port) in MAC_CREDIT_EXPORTS {
        let mut d = mc.iter().find(|d| d.name == port).expect("a mac_credit port").clone();
        d.name = outer.to_string();
        // Where the fused block had them: the return after `credit`, the count after the queue.
        let at = if outer == "mac_credit" {
            d.doc = "MAC2TX credit returns from the MAC, one per frame, `mul` for a TYPE2 frame (unbound: the mac_credits never come back)";
            3
        } else {
            v.iter()
                .position(|d| d.name == "credit_view")
                .map_or(v.len(), |i| i + 1)
        };
        v.insert(at, d);
    }
    if p.ack_cbfc {
        v.extend(
            ack_cbfc::return_ports(&ack_return_params(p))
                .into_iter()
                .filter(|d| d.name == "ack_cr"),
        );
    }
    v
}

/// The TYPE2 queue beside the core (`path.type2`, counting in the composite's scope:
/// `tx.type2_queue_peak`): the core's TYPE2 segments in, its offer to the core's round, the
/// grant's take back, all in the cycle; the multicast MAC credits from the counter and, with
/// groups, the TYPE2 ledgers' counts from the CBFC controller.
fn add_type2(nl: &mut Netlist, path: &str, p: &Params, feeder: &str) -> Result<(), ElabError> {
    let node = |n: &str| hwsim_hw::dotted(path, n);
    let tp = p.type2_params();
    let t_ports = type2::ports(&tp);
    split::add_counting_in_scope(nl, path, "type2", "type2", t_ports, tp, type2::build)?;
    for (from, to) in [
        (&*format!("{feeder}.t2_seg"), "type2.seg"),
        ("type2.offer", "vc_queues.t2_offer"),
        ("vc_queues.t2_take", "type2.take"),
        ("mac_credit.mul_available", "type2.mul_available"),
    ] {
        nl.connect(&node(from), &node(to), None)?;
    }
    if !p.groups.is_empty() {
        nl.connect(&node("cbfc.t2_counts"), &node("type2.counts"), None)?;
        nl.connect(&node("cbfc.t2_charged"), &node("type2.charged"), None)?;
    }
    Ok(())
}

/// The ACK-VC credit return's parameters, from the TX's.
fn ack_return_params(p: &Params) -> ack_cbfc::ReturnParams {
    ack_cbfc::ReturnParams {
        chip: p.chip,
        lg: p.lg,
        pkt_ovhd: p.pkt_ovhd,
        credit_size: p.credit_size,
    }
}

/// Creates the composite's children at `path`: the slot FIFO (`path.slot_fifo`, kind
/// `slot_fifo`, counting in the composite's scope, so its counters keep the TX's names), the VC
/// queues (`path.vc_queues`), the arbiter
/// (`path.arbiter`, kind `vc_arbiter`) and the MAC credit counter (`path.mac_credit`), wired
/// combinationally, and with `ack_cbfc` the ACK-VC credit
/// return (`path.ack_return`, fed the control messages the core takes in, in the same cycle);
/// and exports the composite's ports.
pub fn expand(p: &Params, path: &str, nl: &mut Netlist) -> Result<(), ElabError> {
    split::refuse_at(path, p.check())?;
    let node = |n: &str| hwsim_hw::dotted(path, n);
    // The slot FIFO, counting in the composite's scope (its counters keep the TX's names).
    let sp = p.clone();
    split::add_counting_in_scope(nl, path, "slot_fifo", "slot_fifo", core_ports(&sp), sp, build)?;
    for n in SLOT_FIFO_OUTER {
        nl.export(&node(n), &node(&format!("slot_fifo.{n}")))?;
    }
    add_vc_queues(nl, path, p, "slot_fifo")?;
    let vq_ports = vc_queues::ports(p);
    for (outer, name) in VC_QUEUES_OUTER {
        if vq_ports.iter().any(|d| d.name == name) {
            nl.export(&node(outer), &node(&format!("vc_queues.{name}")))?;
        }
    }
    // CNP MERGE in front of the core: every control message through it, in the same cycle;
    // counting in the composite's scope (`tx.cnp_passed`, `tx.cnp_filtered`, as the core did).
    let cm = cnp_merge_params(p);
    let cm_ports = cnp_merge::ports(&cm);
    split::add_counting_in_scope(nl, path, "cnp_merge", "cnp_merge", cm_ports, cm, cnp_merge::build)?;
    nl.connect(&node("cnp_merge.out"), &node("slot_fifo.ctrl"), None)?;
    nl.export(&node("ctrl"), &node("cnp_merge.ctrl"))?;
    add_queue_gates(nl, path, p, "slot_fifo")?;
    nl.export(&node("credit_view"), &node("cbfc.credit_view"))?;
    for (outer, port) in MAC_CREDIT_EXPORTS {
        nl.export(&node(outer), &node(&format!("mac_credit.{port}")))?;
    }
    if p.ack_cbfc {
        // Counting in the composite's scope, as the TX did (`tx.ack_credits_returned`).
        let rp = ack_return_params(p);
        let ports = ack_cbfc::return_ports(&rp);
        split::add_counting_in_scope(nl, path, "ack_return", "ack_return", ports, rp, ack_cbfc::return_build)?;
        nl.connect(&node("slot_fifo.ctrl_taken"), &node("ack_return.taken"), None)?;
        nl.export(&node("ack_cr"), &node("ack_return.ack_cr"))?;
    }
    Ok(())
}

/// Adds the VC queues at `path.vc_queues` (counting in the composite's scope: `tx.diag_arb_calls`,
/// `tx.frames_sent`, …), fed by `feeder` (the slot FIFO in a TX; the testbench's feed in the
/// standalone `bank_arbiter`): its queue ops and change count in, the grants back, all in the
/// cycle. Its frames, depths and WAIT_CRD are left for the caller to export or wire.
pub(crate) fn add_vc_queues(nl: &mut Netlist, path: &str, p: &Params, feeder: &str) -> Result<(), ElabError> {
    let node = |n: &str| hwsim_hw::dotted(path, n);
    let vp = p.clone();
    let vq_ports = vc_queues::ports(&vp);
    split::add_counting_in_scope(nl, path, "vc_queues", "vc_queues", vq_ports, vp, vc_queues::build)?;
    for (from, to) in [
        (format!("{feeder}.q_ops"), "vc_queues.ops".to_string()),
        (format!("{feeder}.q_changes"), "vc_queues.changes".to_string()),
        ("vc_queues.grant".to_string(), format!("{feeder}.q_grant")),
    ] {
        nl.connect(&node(&from), &node(&to), None)?;
    }
    Ok(())
}

/// Adds what stands around the VC queues' round, each wired to `path.vc_queues` and to
/// `feeder` (see [`add_vc_queues`]) both ways in the cycle: the rate gate, the CBFC controller
/// (its `credit` exported as the composite's), the MAC credit counter, the round robin and the
/// TYPE2 queue. One place for the queue side of `rclink_tx` and of the standalone `bank_arbiter`.
pub(crate) fn add_queue_gates(nl: &mut Netlist, path: &str, p: &Params, feeder: &str) -> Result<(), ElabError> {
    let node = |n: &str| hwsim_hw::dotted(path, n);
    // The DCQCN rate gate beside the core: the CNPs it passes and its grants in, the pacing of
    // each flow out to its round; counting in the composite's scope (`tx.rate_increases`, …,
    // as the core did), its waves at `tx.dcqcn.*` (where the core had them).
    // With `rate_control: window` the per-QP window scheme (`tx.cc_window`) takes its place,
    // through the same ports.
    let gate = if p.rate_control == RateControl::Window {
        let wp = p.window.clone();
        let w_ports = cc_window::ports(&wp);
        split::add_counting_in_scope(nl, path, "cc_window", "cc_window", w_ports, wp, cc_window::build)?;
        "cc_window"
    } else {
        let gp = p.rate_gate_params();
        let g_ports = dcqcn::ports(&gp);
        split::add_counting_in_scope(nl, path, "dcqcn", "dcqcn", g_ports, gp, dcqcn::build)?;
        "dcqcn"
    };
    for (from, to) in [
        (&*format!("{feeder}.rate_cnp"), "cnp"),
        ("ready", "vc_queues.rate_pace"),
        ("steps", "vc_queues.rate_steps"),
        ("paced", "vc_queues.rate_paced"),
        ("vc_queues.rate_sent", "sent"),
    ] {
        let at = |n: &str| {
            if n.contains('.') {
                node(n)
            } else {
                node(&format!("{gate}.{n}"))
            }
        };
        nl.connect(&at(from), &at(to), None)?;
    }
    // The CBFC controller beside the core: the returns in, the counts out to the round, the
    // grant's charge in; counting in the composite's scope (`tx.credits_outstanding`,
    // `tx.credit_latency_max`, as the core did), its waves at `tx.cbfc.*` (where the core had
    // them) and `tx.credit_view`.
    cbfc::add_wired(nl, path, p.cbfc_params(), "vc_queues")?;
    let mp = mac_credit_params(p);
    let mc_ports = mac_credit::ports(&mp);
    nl.add(
        &node("mac_credit"),
        "mac_credit",
        mc_ports,
        Box::new(move |b| mac_credit::build(&mp, b)),
    )?;
    nl.connect(&node("vc_queues.mac_take"), &node("mac_credit.take"), None)?;
    // The bank arbiter's round robin: the core's request in, its grant back, both in the cycle.
    let ap = vc_arbiter::Params {
        vc_weights: p.vc_weights,
    };
    vc_arbiter::add_wired(
        nl,
        &node("arbiter"),
        ap,
        &node("vc_queues.arb_req"),
        &node("vc_queues.arb_grant"),
    )?;
    nl.connect(&node("mac_credit.available"), &node("vc_queues.mac_available"), None)?;
    add_type2(nl, path, p, feeder)
}
