//! System-form elaboration: a topology of chips and edges, with traffic, into a netlist of the
//! interconnect blocks, plus the flows and the always-on monitors the report needs.
//!
//! Per chip c: `chip{c}.cdma` → `chip{c}.paxi` → per LG k `chip{c}.lg{k}.tx` → `.mac` →
//! `chip{c}.router` → edge → far router → `.rxcap` → `.rx` → the far `paxi` (its `rx{k}`: W, AR,
//! R, B frames); ACK/NAK/CNP and credit returns come back through the routers to `.tx`; R and B
//! flits travel the same way as data, from the completer's PAXI. Each edge (a, b) is two PhyLinks, `link{a}_{b}` and
//! `link{b}_{a}`. Routes are shortest paths over the topology graph (petgraph); a chip on the
//! way forwards in its router without RC Link processing. `chip{c}.tx_monitor` and
//! `chip{c}.rx_monitor` measure the peak wire bytes sent and received in any 1 µs window.
//!
//! The parts: `topology` (edges and routes), `traffic` (patterns into flows), `faults` (fault
//! rules per edge direction), `assembly` (block instances); this file holds the chip
//! configuration and puts them together.

use hwsim_hw::Netlist;
use hwsim_ports::MCAST_BIT;
use serde::Deserialize;

use crate::budget::{over_budget, txn_memory};
use crate::registry;
use crate::testbench::{elab_error, Loaded};
use crate::yaml::{self, InputError, Value};

/// The chip configuration (configs/sg2262.yaml `system.chip`, with testbench overrides).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipConfig {
    /// Link groups per chip.
    #[serde(default = "eight")]
    pub num_link_groups: u8,
    /// PAXI core parameters (kind `paxi`).
    #[serde(default)]
    pub paxi: Value,
    /// RC Link TX parameters (kind `rclink_tx`).
    #[serde(default)]
    pub tx: Value,
    /// MAC parameters (kind `mac_tx`).
    #[serde(default)]
    pub mac: Value,
    /// RX cap parameters (kind `rx_cap`).
    #[serde(default)]
    pub rx_cap: Value,
    /// RC Link RX parameters (kind `rclink_rx`).
    #[serde(default)]
    pub rx: Value,
}

fn eight() -> u8 {
    8
}

pub use crate::testbench::{FlowInfo, SystemInfo};

fn set(v: &Value, key: &str, x: impl Into<Value>) -> Value {
    let mut m = match v {
        Value::Mapping(m) => m.clone(),
        _ => yaml::Mapping::new(),
    };
    m.insert(Value::from(key), x.into());
    Value::Mapping(m)
}

fn get_u64(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(|x| x.as_u64())
}

mod assembly;
mod faults;
mod topology;
mod traffic;

use assembly::make;
use faults::fault_rules;
use topology::{edges, mcast_trees, node_name, parse_node, routes};
use traffic::expand_traffic;

// The netlist estimate (check_netlist_budget) charges each part of a system what its blocks,
// nets, counters and state take once elaborated, measured on this build from the peak RSS of
// `hwsim check` (/usr/bin/time): 32×32 tori with 2, 4 and 8 LGs per chip (726 / 1 310 /
// 2 484 MiB), 16×16 with 8 (620 MiB), full meshes of 64 and 128 chips (214 / 566 MiB),
// leaf/spine of 256 chips with 16 and 32 leaves (629 / 656 MiB). Fitted: a chip 74 KiB (CDMA,
// PAXI, router, rate monitors), an LG 293 KiB (its TX and RX nodes, MAC, RX cap), a PhyLink
// 17 KiB, a switch port about 20 KiB. Each is charged about 10 % (a switch port 60 %) above
// that, so the estimate stays an upper bound (the 32×32 torus: 2.67 GiB for 2.43 measured).
// Counting "blocks" at a fixed cost went stale as the chips' modules became nodes (37 blocks a
// chip counted against 105, and the 32×32 torus passed a 1 GiB budget to peak at 2.4 GiB).
const CHIP_COST: u64 = 96 << 10;
const LG_COST: u64 = 320 << 10;
const PHYLINK_COST: u64 = 20 << 10;
const SWITCH_PORT_COST: u64 = 32 << 10;

/// Refuses a topology whose netlist would need more memory than the budget (a full mesh grows
/// with the square of the chip count: 1024 chips is a million PhyLinks). `switch_ports`: the
/// edges' ends at switches.
fn check_netlist_budget(l: &Loaded, chips: u16, nlg: u8, edges: usize, switch_ports: usize) -> Result<(), InputError> {
    let need = (chips as u64)
        .saturating_mul(CHIP_COST + nlg as u64 * LG_COST)
        .saturating_add((2 * edges as u64).saturating_mul(PHYLINK_COST))
        .saturating_add((switch_ports as u64).saturating_mul(SWITCH_PORT_COST));
    within_budget(
        l,
        "chips",
        need,
        &match switch_ports {
            0 => format!("topology: {chips} chips of {nlg} LGs and {edges} edges"),
            p => format!("topology: {chips} chips of {nlg} LGs, {edges} edges and {p} switch ports"),
        },
    )
}

/// Refuses `need` bytes over the budget, at `key`, saying what needs them.
fn within_budget(l: &Loaded, key: &str, need: u64, what: &str) -> Result<(), InputError> {
    match over_budget(l.max_memory, need, what) {
        Some(msg) => Err(l.error_at(key, msg)),
        None => Ok(()),
    }
}

/// Refuses traffic whose transactions and frames would need more memory than the budget: an
/// upper bound, every transaction and every frame of every (source, destination, engine) flow
/// charged at once (see TXN_COST, FRAME_COST), saturating rather than overflowing.
fn check_traffic_budget(l: &Loaded, pairs: &[(u16, u16, &crate::schema::Flow)], mps: u64) -> Result<(), InputError> {
    let mut total: u64 = 0;
    for (_, _, f) in pairs {
        let count = f.transactions.saturating_mul(f.engines as u64);
        total = total.saturating_add(txn_memory(f.bytes, mps, count));
    }
    within_budget(l, "traffic", total, "traffic: its transactions and frames")
}

/// Builds the netlist of a system-form testbench.
pub fn elaborate(l: &Loaded, seed: u64) -> Result<(Netlist, SystemInfo), InputError> {
    let s = l.tb.system.as_ref().expect("system form");
    let defaults = &l.system_defaults;
    let chip_v = yaml::merge(defaults.get("chip").unwrap_or(&Value::Null), &s.chip);
    let chip: ChipConfig = yaml::from_value(if chip_v.is_null() {
        Value::Mapping(Default::default())
    } else {
        chip_v
    })
    .map_err(|e| l.error_at_param("chip", format!("system.chip: {e}")))?;
    let link = yaml::merge(defaults.get("link").unwrap_or(&Value::Null), &s.link);
    if l.tb.metrics_from.is_some() && chip.paxi.get("metrics_from").is_some() {
        return Err(l.error_at(
            "metrics_from",
            "metrics_from is given twice: at the top and in system.chip.paxi (keep one)",
        ));
    }
    let nlg = chip.num_link_groups;
    if nlg == 0 || nlg > 8 {
        return Err(l.error_at_param("chip", format!("num_link_groups {nlg} out of range 1..=8")));
    }
    let (n, nsw, edge_list) = edges(l, s)?;
    let switch_ports = edge_list
        .iter()
        .map(|&(a, b)| (a >= n) as usize + (b >= n) as usize)
        .sum();
    check_netlist_budget(l, n, nlg, edge_list.len(), switch_ports)?;
    let total = n + nsw;
    let blocks = registry::blocks();
    let mut nl = Netlist::new();

    // Per node (chips, then switches): its edges (neighbour, edge list index) in edge order.
    let mut per_chip: Vec<Vec<(u16, usize)>> = vec![Vec::new(); total as usize];
    for (i, &(a, b)) in edge_list.iter().enumerate() {
        per_chip[a as usize].push((b, i));
        per_chip[b as usize].push((a, i));
    }
    let route = routes(total, n, &edge_list, &per_chip);

    // Traffic → per chip transactions and flows.
    let (pairs, groups) = expand_traffic(l, s, n, seed)?;
    // Traffic between chips the topology does not connect would wait for a route forever: say
    // so here, with the flow, rather than as a violation in the run.
    // A multicast pair names its group: every member must be reachable from the source.
    let unreachable = pairs.iter().find_map(|&(a, b, f)| {
        let one = [b];
        let dsts: &[u16] = if b & MCAST_BIT != 0 {
            &groups[(b & !MCAST_BIT) as usize].1
        } else {
            &one
        };
        dsts.iter()
            .find(|&&d| route[a as usize][d as usize].is_empty())
            .map(|&d| (a, d, f))
    });
    if let Some((a, b, f)) = unreachable {
        let i = s.traffic.iter().position(|x| std::ptr::eq(x, f)).unwrap_or(0);
        return Err(l.item_error(
            "traffic",
            i,
            "pattern",
            format!("traffic: chip {b} cannot be reached from chip {a} (no path between them in the topology)"),
        ));
    }
    // Multicast: every group's tree, per node; and the member lists the sources' PAXI and TX
    // need (their B count and CBFC ledgers). Nothing is added to a system without multicast.
    let trees = mcast_trees(&groups, &route, &per_chip);
    let members_v = Value::Sequence(
        groups
            .iter()
            .map(|(_, m)| Value::Sequence(m.iter().map(|&c| Value::from(c as u64)).collect()))
            .collect(),
    );
    let with_groups = |v: &Value| {
        if groups.is_empty() {
            v.clone()
        } else {
            set(v, "groups", members_v.clone())
        }
    };
    check_traffic_budget(l, &pairs, get_u64(&chip.paxi, "mps").unwrap_or(1344))?;
    let mut txns: Vec<Vec<Value>> = vec![Vec::new(); n as usize];
    let mut local_flows = vec![0u16; n as usize];
    let mut flows = Vec::new();
    for (src, dst, f) in pairs {
        for e in 0..f.engines.max(1) {
            let cdma = f.cdma + e;
            let local = local_flows[src as usize];
            // The PAXI's flow index is 16 bits: a 65 536th flow from one chip would wrap to 0.
            local_flows[src as usize] = local.checked_add(1).ok_or_else(|| {
                let i = s.traffic.iter().position(|x| std::ptr::eq(x, f)).unwrap_or(0);
                l.item_error(
                    "traffic",
                    i,
                    "engines",
                    format!(
                        "traffic: chip {src} sends more than {} flows (the PAXI's flow index is 16 bits)",
                        u16::MAX
                    ),
                )
            })?;
            let multicast = hwsim_ports::mcast_group(dst);
            flows.push(FlowInfo {
                name: match multicast {
                    Some(g) => format!("chip{src}->group{g} cdma{cdma}"),
                    None => format!("chip{src}->chip{dst} cdma{cdma}"),
                },
                src,
                local,
            });
            for i in 0..f.transactions {
                let mut m = yaml::Mapping::new();
                if multicast.is_some() {
                    m.insert("op".into(), "multicast".into());
                } else if f.is_read(i) {
                    m.insert("op".into(), "read".into());
                }
                m.insert("at".into(), f.start.into());
                m.insert("dst".into(), (dst as u64).into());
                m.insert("bytes".into(), f.bytes.into());
                m.insert("cdma".into(), (cdma as u64).into());
                m.insert("flow".into(), (local as u64).into());
                m.insert("bandwidth".into(), f.bandwidth.unwrap_or(0.0).into());
                txns[src as usize].push(Value::Mapping(m));
            }
        }
    }

    // The TX's packet format decides the RX's credit arithmetic: one source of truth.
    let pkt_ovhd = get_u64(&chip.tx, "pkt_ovhd").unwrap_or(50);
    let credit_size = get_u64(&chip.tx, "credit_size").unwrap_or(256);
    // The MAC's input holds as many frames as the TX has MAC credits: one value for both ends of
    // the MAC2TX credit loop.
    let mac_credits = get_u64(&chip.tx, "mac_credits").unwrap_or(1);
    let mac = set(&chip.mac, "credits", mac_credits);
    // CBFC on the ACK + CNP VC: the RXs send on it and hold the ledgers, the TXs return the
    // credits, the routers carry the returns back; the RX takes the TX's CBFC switches (the
    // seed's are per chip, not per direction).
    let ack_cbfc = get_u64(&chip.rx, "ack_credits").unwrap_or(0) > 0;
    let mut rx_cfg = chip.rx.clone();
    for key in ["uf_limit", "cbfc_vc_enable", "stop_cbfc"] {
        if let Some(v) = chip.tx.get(key) {
            rx_cfg = set(&rx_cfg, key, v.clone());
        }
    }
    // A flow named for its own counters must be able to exist: its destination a chip here.
    if let Some(Value::Sequence(fl)) = chip.tx.get("report_flows") {
        for f in fl {
            if let Some(d) = f.get("dst").and_then(Value::as_u64).filter(|&d| d >= n as u64) {
                return Err(l.error_at(
                    "report_flows",
                    format!("system.chip.tx.report_flows: dst chip {d} out of range 0..{n} (the topology's chips)"),
                ));
            }
        }
    }
    let tx_cfg = if ack_cbfc {
        set(&chip.tx, "ack_cbfc", true)
    } else {
        chip.tx.clone()
    };

    // PFC mode (the switches run PFC): the chips send PFC from their PAXI RX watermarks rather
    // than holding CBFC credits (the seed's TX_PFC_REQ_O serves one mode or the other).
    // The builder sets a switch's ports, routes, ECMP salt and multicast table from the
    // topology and the traffic: a value written for one would be dropped without a word.
    match &s.switch {
        Value::Null | Value::Mapping(_) => {}
        other => {
            return Err(l.error_at(
                "switch",
                format!(
                    "system.switch: expected a mapping of switch parameters, got {}",
                    yaml::show(other)
                ),
            ))
        }
    }
    for owned in ["ports", "routes", "ecmp_salt", "mcast"] {
        if s.switch.get(owned).is_some() {
            return Err(l.error_at(
                owned,
                format!(
                    "system.switch.{owned} is set by the system builder (from the topology and the traffic); remove it"
                ),
            ));
        }
    }
    let switch_cfg = yaml::merge(defaults.get("switch").unwrap_or(&Value::Null), &s.switch);
    let pfc_mode = nsw > 0 && switch_cfg.get("pfc").and_then(Value::as_bool).unwrap_or(false);
    for c in 0..n {
        let p = format!("chip{c}");
        let mut cdma = yaml::Mapping::new();
        cdma.insert("txns".into(), Value::Sequence(txns[c as usize].clone()));
        make(&blocks, l, &mut nl, &format!("{p}.cdma"), "cdma", &Value::Mapping(cdma))?;
        let mut paxi = with_groups(&set(
            &set(&set(&chip.paxi, "chip", c as u64), "num_lg", nlg as u64),
            "flows",
            local_flows[c as usize].max(1) as u64,
        ));
        if let Some(w) = l.tb.metrics_from {
            paxi = set(&paxi, "metrics_from", w);
        }
        make(&blocks, l, &mut nl, &format!("{p}.paxi"), "paxi", &paxi)?;
        let mut router = yaml::Mapping::new();
        router.insert("chip".into(), (c as u64).into());
        router.insert("num_lg".into(), (nlg as u64).into());
        router.insert("edges".into(), (per_chip[c as usize].len() as u64).into());
        router.insert(
            "routes".into(),
            Value::Sequence(
                route[c as usize]
                    .iter()
                    .map(|r| r.first().map_or(Value::Null, |&e| Value::from(e as u64)))
                    .collect(),
            ),
        );
        if !groups.is_empty() {
            let table = trees[c as usize]
                .iter()
                .map(|h| {
                    let mut m = yaml::Mapping::new();
                    m.insert("local".into(), h.local.into());
                    m.insert(
                        "edges".into(),
                        Value::Sequence(h.edges.iter().map(|&e| Value::from(e as u64)).collect()),
                    );
                    Value::Mapping(m)
                })
                .collect();
            router.insert("mcast".into(), Value::Sequence(table));
        }
        if pfc_mode {
            router.insert("pfc".into(), true.into());
            // The router pauses a data frame by the priority the switches give it, and names
            // the switches' lossless priorities in its own XOFF / XON.
            for key in ["pfc_priorities", "trust", "default_priority"] {
                if let Some(v) = switch_cfg.get(key) {
                    router.insert(key.into(), v.clone());
                }
            }
        }
        if ack_cbfc {
            router.insert("ack_cbfc".into(), true.into());
        }
        make(
            &blocks,
            l,
            &mut nl,
            &format!("{p}.router"),
            "router",
            &Value::Mapping(router),
        )?;
        let mut mon = yaml::Mapping::new();
        // The MACs' and RX caps' byte counts as ramps (sent once per frame, not every cycle).
        mon.insert("inputs".into(), 0u64.into());
        mon.insert("ramps".into(), (nlg as u64).into());
        mon.insert("window".into(), 1000u64.into());
        make(
            &blocks,
            l,
            &mut nl,
            &format!("{p}.tx_monitor"),
            "rate_monitor",
            &Value::Mapping(mon.clone()),
        )?;
        make(
            &blocks,
            l,
            &mut nl,
            &format!("{p}.rx_monitor"),
            "rate_monitor",
            &Value::Mapping(mon),
        )?;
        nl.connect(&format!("{p}.cdma.txn"), &format!("{p}.paxi.txn"), None)
            .map_err(|e| elab_error(l, e))?;
        for k in 0..nlg {
            let g = format!("{p}.lg{k}");
            // Credits per destination on the waves: every chip's, up to 64 (a signal each per
            // LG; a larger fabric would spend more on them than on the model).
            let tx = with_groups(&set(
                &set(&set(&tx_cfg, "chip", c as u64), "lg", k as u64),
                "view_dsts",
                (n as u64).min(64),
            ));
            make(&blocks, l, &mut nl, &format!("{g}.tx"), "rclink_tx", &tx)?;
            make(&blocks, l, &mut nl, &format!("{g}.mac"), "mac_tx", &mac)?;
            make(&blocks, l, &mut nl, &format!("{g}.rxcap"), "rx_cap", &chip.rx_cap)?;
            let rx = set(
                &set(
                    &set(
                        &set(&set(&rx_cfg, "chip", c as u64), "lg", k as u64),
                        "pkt_ovhd",
                        pkt_ovhd,
                    ),
                    "credit_size",
                    credit_size,
                ),
                "deliver",
                true,
            );
            make(&blocks, l, &mut nl, &format!("{g}.rx"), "rclink_rx", &rx)?;
            let conns = [
                (format!("{p}.paxi.seg{k}"), format!("{g}.tx.seg")),
                (format!("{g}.tx.done"), format!("{p}.paxi.done{k}")),
                (format!("{g}.tx.frame"), format!("{g}.mac.in")),
                (format!("{g}.mac.credit"), format!("{g}.tx.mac_credit")),
                (format!("{g}.mac.out"), format!("{p}.router.lg{k}_tx")),
                (format!("{p}.router.lg{k}_rx"), format!("{g}.rxcap.in")),
                (format!("{g}.rxcap.out"), format!("{g}.rx.data")),
                (format!("{g}.rx.deliver"), format!("{p}.paxi.rx{k}")),
                // The PAXI RX watermark signal: CBFC mode holds every LG's credit returns, PFC
                // mode has the router send PFC (one connection, at LG 0's turn).
                if pfc_mode {
                    (format!("{p}.paxi.rx_pause"), format!("{p}.router.pause"))
                } else {
                    (format!("{p}.paxi.rx_pause"), format!("{g}.rx.pause"))
                },
                (format!("{g}.rx.ctrl"), format!("{p}.router.lg{k}_ctrl")),
                (format!("{g}.rx.credit"), format!("{p}.router.lg{k}_cr")),
                (format!("{p}.router.lg{k}_ack"), format!("{g}.tx.ctrl")),
                (format!("{p}.router.lg{k}_credit"), format!("{g}.tx.credit")),
                (format!("{g}.mac.wire_ramp"), format!("{p}.tx_monitor.r{k}")),
                (format!("{g}.rxcap.wire_ramp"), format!("{p}.rx_monitor.r{k}")),
            ];
            let ack_conns = [
                (format!("{g}.tx.ack_cr"), format!("{p}.router.lg{k}_tcr")),
                (format!("{p}.router.lg{k}_rcr"), format!("{g}.rx.ack_credit")),
            ];
            let ack_conns = if ack_cbfc { &ack_conns[..] } else { &[] };
            for (a, b) in conns.iter().chain(ack_conns) {
                if k > 0 && b.ends_with(".router.pause") {
                    continue;
                }
                nl.connect(a, b, None).map_err(|e| elab_error(l, e))?;
            }
        }
    }
    // Edges: two PhyLinks each, wired to the routers' edge ports.
    // Switches: one `l2_switch` each, a port per edge, routes by destination chip: one port, or
    // the equal-cost ports the switch spreads flows over (ECMP, hashed with the switch's index
    // as salt so that two levels do not pick alike).
    for j in 0..nsw {
        let node = (n + j) as usize;
        let routes_v = Value::Sequence(
            route[node]
                .iter()
                .map(|r| match r.as_slice() {
                    [] => Value::Null,
                    [e] => Value::from(*e as u64),
                    many => Value::Sequence(many.iter().map(|&e| Value::from(e as u64)).collect()),
                })
                .collect(),
        );
        let mut params = set(
            &set(
                &set(&switch_cfg, "ports", per_chip[node].len() as u64),
                "routes",
                routes_v,
            ),
            "ecmp_salt",
            j as u64,
        );
        if !groups.is_empty() {
            let table = trees[node]
                .iter()
                .map(|h| Value::Sequence(h.edges.iter().map(|&e| Value::from(e as u64)).collect()))
                .collect();
            params = set(&params, "mcast", Value::Sequence(table));
        }
        make(&blocks, l, &mut nl, &format!("sw{j}"), "l2_switch", &params)?;
    }
    // A node's ports: a chip's router edges, a switch's ports.
    let port = |x: u16, e: usize, cls: &str| {
        if x < n {
            format!("chip{x}.router.e{e}_{cls}")
        } else {
            format!("sw{}.e{e}_{cls}", x - n)
        }
    };
    let short = |x: u16| if x < n { x.to_string() } else { format!("sw{}", x - n) };
    // Edges: two PhyLinks each, wired to the nodes' edge ports.
    for &(a, b) in &edge_list {
        for (x, y) in [(a, b), (b, a)] {
            let path = format!("link{}_{}", short(x), short(y));
            let rules = fault_rules(l, s, &node_name(n, x), &node_name(n, y))?;
            let mut params = if rules.is_empty() {
                link.clone()
            } else {
                set(&link, "faults", Value::Sequence(rules))
            };
            if pfc_mode {
                params = set(&params, "pfc", true);
            }
            make(&blocks, l, &mut nl, &path, "phylink", &params)?;
            let ex = per_chip[x as usize]
                .iter()
                .position(|&(nb, _)| nb == y)
                .expect("edge listed");
            let ey = per_chip[y as usize]
                .iter()
                .position(|&(nb, _)| nb == x)
                .expect("edge listed");
            for (cls_out, cls_in, port_in, port_out) in [
                ("req_out", "req_in", "req_in", "req_out"),
                ("rsp_out", "rsp_in", "rsp_in", "rsp_out"),
                ("cr_out", "cr_in", "cr_in", "cr_out"),
            ] {
                nl.connect(&port(x, ex, cls_out), &format!("{path}.{port_in}"), None)
                    .map_err(|e| elab_error(l, e))?;
                nl.connect(&format!("{path}.{port_out}"), &port(y, ey, cls_in), None)
                    .map_err(|e| elab_error(l, e))?;
            }
            // PFC mode: PAUSE frames cross the same edge; chips and switches both send them
            // (a chip from its PAXI RX watermarks) and both honour them.
            if pfc_mode {
                nl.connect(&port(x, ex, "pfc_out"), &format!("{path}.pfc_in"), None)
                    .map_err(|e| elab_error(l, e))?;
                nl.connect(&format!("{path}.pfc_out"), &port(y, ey, "pfc_in"), None)
                    .map_err(|e| elab_error(l, e))?;
            }
        }
    }
    for (i, f) in s.faults.iter().enumerate() {
        let ends = [&f.link[0], &f.link[1]].map(|e| parse_node(e, n, nsw));
        let ok = match ends {
            [Some(a), Some(b)] => edge_list.contains(&(a.min(b), a.max(b))),
            _ => false,
        };
        let bad = if let Some(lg) = f.lg.filter(|&g| g >= nlg as u32) {
            Some(("lg", format!("fault: lg {lg} out of range 0..{nlg}")))
        } else if f.times == 0 {
            Some(("times", "fault: times 0 never fires (give ≥ 1)".to_string()))
        } else if let (Some(a), Some(b)) = (f.from, f.to) {
            (a >= b).then(|| ("from", format!("fault: window from {a} to {b} is empty")))
        } else {
            None
        };
        if let Some((key, msg)) = bad {
            return Err(l.item_error("faults", i, key, msg));
        }
        if !ok {
            return Err(l.item_error(
                "faults",
                i,
                "link",
                format!(
                    "fault on link [{}, {}]: no such edge in the topology",
                    f.link[0], f.link[1]
                ),
            ));
        }
    }
    Ok((
        nl,
        SystemInfo {
            chips: n,
            num_lg: nlg,
            flows,
            lossy: !s.faults.is_empty(),
        },
    ))
}
