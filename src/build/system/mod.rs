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

use crate::build::budget::{over_budget, txn_memory};
use crate::build::registry;
use crate::build::testbench::Loaded;
use crate::input::yaml::{self, InputError, Value};

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

pub use crate::build::testbench::{FlowInfo, SystemInfo};

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
mod build;
mod faults;
mod topology;
mod traffic;

use topology::{edges, mcast_trees, routes};
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
fn check_traffic_budget(
    l: &Loaded,
    pairs: &[(u16, u16, &crate::input::schema::Flow)],
    mps: u64,
) -> Result<(), InputError> {
    let mut total: u64 = 0;
    for (_, _, f) in pairs {
        let count = f.transactions.saturating_mul(f.engines as u64);
        total = total.saturating_add(txn_memory(f.bytes, mps, count));
    }
    within_budget(l, "traffic", total, "traffic: its transactions and frames")
}

/// Builds the netlist of a system-form testbench: the chip configuration, the topology and
/// its routes, the traffic, then the chips, the switches and the links, in that order (the order
/// of the instances is the netlist's, so it stays the same), and the fault rules checked.
pub fn elaborate(l: &Loaded, seed: u64) -> Result<(Netlist, SystemInfo), InputError> {
    let s = l.tb.system.as_ref().expect("system form");
    let chip = chip_config(l)?;
    let nlg = chip.num_link_groups;
    let (n, nsw, edge_list) = edges(l, s)?;
    let switch_ports = edge_list
        .iter()
        .map(|&(a, b)| (a >= n) as usize + (b >= n) as usize)
        .sum();
    check_netlist_budget(l, n, nlg, edge_list.len(), switch_ports)?;
    let fabric = Fabric::new(n, nsw, edge_list);
    // Traffic → per chip transactions and flows.
    let (pairs, groups) = expand_traffic(l, s, n, seed)?;
    check_reachable(l, s, &pairs, &groups, &fabric.route)?;
    // Multicast: every group's tree, per node. Nothing is added to a system without multicast.
    let trees = mcast_trees(&groups, &fabric.route, &fabric.per_chip);
    check_traffic_budget(l, &pairs, get_u64(&chip.paxi, "mps").unwrap_or(1344))?;
    let load = Load::new(l, s, n, pairs)?;
    let cfg = ChipParams::new(l, &chip, n, &groups)?;
    let switch_cfg = switch_config(l, s)?;
    // PFC mode (the switches run PFC): the chips send PFC from their PAXI RX watermarks rather
    // than holding CBFC credits (the seed's TX_PFC_REQ_O serves one mode or the other).
    let pfc_mode = nsw > 0 && switch_cfg.get("pfc").and_then(Value::as_bool).unwrap_or(false);
    let blocks = registry::blocks();
    let mut b = build::Builder {
        l,
        blocks: &blocks,
        nl: Netlist::new(),
        fabric: &fabric,
        trees: &trees,
        multicast: !groups.is_empty(),
        pfc_mode,
        switch_cfg: &switch_cfg,
    };
    for c in 0..n {
        b.chip(c, &chip, &cfg, &load)?;
    }
    for j in 0..nsw {
        b.switch(j)?;
    }
    let link = yaml::merge(l.system_defaults.get("link").unwrap_or(&Value::Null), &s.link);
    b.links(s, &link)?;
    build::check_faults(l, s, &fabric, nlg)?;
    Ok((
        b.nl,
        SystemInfo {
            chips: n,
            num_lg: nlg,
            flows: load.flows,
            lossy: !s.faults.is_empty(),
        },
    ))
}

/// The chip configuration: the defaults (configs/) under the testbench's `system.chip`.
fn chip_config(l: &Loaded) -> Result<ChipConfig, InputError> {
    let s = l.tb.system.as_ref().expect("system form");
    let chip_v = yaml::merge(l.system_defaults.get("chip").unwrap_or(&Value::Null), &s.chip);
    let chip: ChipConfig = yaml::from_value(if chip_v.is_null() {
        Value::Mapping(Default::default())
    } else {
        chip_v
    })
    .map_err(|e| l.error_at_param("chip", format!("system.chip: {e}")))?;
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
    Ok(chip)
}

/// The nodes (chips, then switches), their edges and the routes between them.
pub(super) struct Fabric {
    /// Chips and switches.
    pub(super) n: u16,
    pub(super) nsw: u16,
    /// The edges as node pairs, each once.
    pub(super) edges: Vec<(u16, u16)>,
    /// Per node: its edges (neighbour, edge list index) in edge order.
    pub(super) per_chip: Vec<Vec<(u16, usize)>>,
    /// Per node and destination: the next-hop edges (equal cost).
    pub(super) route: Vec<Vec<Vec<u32>>>,
}

impl Fabric {
    fn new(n: u16, nsw: u16, edges: Vec<(u16, u16)>) -> Fabric {
        let total = n + nsw;
        let mut per_chip: Vec<Vec<(u16, usize)>> = vec![Vec::new(); total as usize];
        for (i, &(a, b)) in edges.iter().enumerate() {
            per_chip[a as usize].push((b, i));
            per_chip[b as usize].push((a, i));
        }
        let route = routes(total, n, &edges, &per_chip);
        Fabric {
            n,
            nsw,
            edges,
            per_chip,
            route,
        }
    }
}

/// Traffic between chips the topology does not connect would wait for a route forever: say so
/// here, with the flow, rather than as a violation in the run. A multicast pair names its
/// group: every member must be reachable from the source.
fn check_reachable(
    l: &Loaded,
    s: &crate::input::schema::System,
    pairs: &[(u16, u16, &crate::input::schema::Flow)],
    groups: &[(u16, Vec<u16>)],
    route: &[Vec<Vec<u32>>],
) -> Result<(), InputError> {
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
    Ok(())
}

/// The traffic as each chip's CDMA takes it: its transactions, its flow count (the PAXI's
/// flow indices), and the flows in definition order.
pub(super) struct Load {
    pub(super) txns: Vec<Vec<Value>>,
    pub(super) local_flows: Vec<u16>,
    pub(super) flows: Vec<FlowInfo>,
}

impl Load {
    fn new(
        l: &Loaded,
        s: &crate::input::schema::System,
        n: u16,
        pairs: Vec<(u16, u16, &crate::input::schema::Flow)>,
    ) -> Result<Load, InputError> {
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
        Ok(Load {
            txns,
            local_flows,
            flows,
        })
    }
}

/// The LG blocks' parameters as every chip shares them, with the values one block takes from
/// another computed once.
pub(super) struct ChipParams {
    /// The TX's (with `ack_cbfc` when the RXs hold ACK-VC credits).
    pub(super) tx: Value,
    /// The RX's, with the TX's CBFC switches.
    pub(super) rx: Value,
    /// The MAC's, its input as deep as the TX's MAC credits.
    pub(super) mac: Value,
    /// The TX's packet format, which decides the RX's credit arithmetic.
    pub(super) pkt_ovhd: u64,
    pub(super) credit_size: u64,
    /// CBFC on the ACK + CNP VC.
    pub(super) ack_cbfc: bool,
    /// The multicast groups' member lists (the sources' PAXI and TX need them), if any.
    members: Option<Value>,
}

impl ChipParams {
    fn new(l: &Loaded, chip: &ChipConfig, n: u16, groups: &[(u16, Vec<u16>)]) -> Result<ChipParams, InputError> {
        let members = (!groups.is_empty()).then(|| {
            Value::Sequence(
                groups
                    .iter()
                    .map(|(_, m)| Value::Sequence(m.iter().map(|&c| Value::from(c as u64)).collect()))
                    .collect(),
            )
        });
        // The TX's packet format decides the RX's credit arithmetic: one source of truth.
        let pkt_ovhd = get_u64(&chip.tx, "pkt_ovhd").unwrap_or(50);
        let credit_size = get_u64(&chip.tx, "credit_size").unwrap_or(256);
        // The MAC's input holds as many frames as the TX has MAC credits: one value for both
        // ends of the MAC2TX credit loop.
        let mac_credits = get_u64(&chip.tx, "mac_credits").unwrap_or(1);
        let mac = set(&chip.mac, "credits", mac_credits);
        // CBFC on the ACK + CNP VC: the RXs send on it and hold the ledgers, the TXs return the
        // credits, the routers carry the returns back; the RX takes the TX's CBFC switches (the
        // seed's are per chip, not per direction).
        let ack_cbfc = get_u64(&chip.rx, "ack_credits").unwrap_or(0) > 0;
        let mut rx = chip.rx.clone();
        for key in ["uf_limit", "cbfc_vc_enable", "stop_cbfc"] {
            if let Some(v) = chip.tx.get(key) {
                rx = set(&rx, key, v.clone());
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
        let tx = if ack_cbfc {
            set(&chip.tx, "ack_cbfc", true)
        } else {
            chip.tx.clone()
        };
        Ok(ChipParams {
            tx,
            rx,
            mac,
            pkt_ovhd,
            credit_size,
            ack_cbfc,
            members,
        })
    }

    /// `v` with the multicast groups' member lists, when there are groups.
    pub(super) fn with_groups(&self, v: &Value) -> Value {
        match &self.members {
            None => v.clone(),
            Some(m) => set(v, "groups", m.clone()),
        }
    }
}

/// The switches' parameters: the defaults under `system.switch`. The builder sets a switch's
/// ports, routes, ECMP salt and multicast table from the topology and the traffic: a value
/// written for one would be dropped without a word, so it is refused.
fn switch_config(l: &Loaded, s: &crate::input::schema::System) -> Result<Value, InputError> {
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
    Ok(yaml::merge(
        l.system_defaults.get("switch").unwrap_or(&Value::Null),
        &s.switch,
    ))
}
