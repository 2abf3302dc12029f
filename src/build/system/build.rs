//! The system's instances and wires: per chip its CDMA, PAXI, router, rate monitors and link
//! groups (TX, MAC, RX cap, RX), per switch an `l2_switch`, per edge two PhyLinks; and the fault
//! rules checked against the topology. The order of the instances is the netlist's (and so the
//! waves' and the reports'): chips, then switches, then links.

use hwsim_hw::Netlist;

use super::assembly::make;
use super::faults::fault_rules;
use super::topology::{node_name, parse_node, McastHop};
use super::{set, ChipConfig, ChipParams, Fabric, Load};
use crate::build::registry::BlockKind;
use crate::build::testbench::{elab_error, Loaded};
use crate::input::schema::System;
use crate::input::yaml::{self, InputError, Value};

/// What the instances are made from, and the netlist they go into.
pub(super) struct Builder<'a> {
    pub(super) l: &'a Loaded,
    pub(super) blocks: &'a [BlockKind],
    pub(super) nl: Netlist,
    pub(super) fabric: &'a Fabric,
    /// Per node and group: the multicast tree's hop.
    pub(super) trees: &'a [Vec<McastHop>],
    pub(super) multicast: bool,
    pub(super) pfc_mode: bool,
    /// The switches' parameters (the routers take their PFC priorities from them).
    pub(super) switch_cfg: &'a Value,
}

impl Builder<'_> {
    fn make(&mut self, path: &str, kind: &str, params: &Value) -> Result<(), InputError> {
        make(self.blocks, self.l, &mut self.nl, path, kind, params)
    }

    fn connect(&mut self, a: &str, b: &str) -> Result<(), InputError> {
        self.nl.connect(a, b, None).map_err(|e| elab_error(self.l, e))
    }

    /// Chip `c`: its CDMA, PAXI, router, rate monitors, and its link groups.
    pub(super) fn chip(&mut self, c: u16, chip: &ChipConfig, cfg: &ChipParams, load: &Load) -> Result<(), InputError> {
        let p = format!("chip{c}");
        let nlg = chip.num_link_groups;
        let mut cdma = yaml::Mapping::new();
        cdma.insert("txns".into(), Value::Sequence(load.txns[c as usize].clone()));
        self.make(&format!("{p}.cdma"), "cdma", &Value::Mapping(cdma))?;
        let mut paxi = cfg.with_groups(&set(
            &set(&set(&chip.paxi, "chip", c as u64), "num_lg", nlg as u64),
            "flows",
            load.local_flows[c as usize].max(1) as u64,
        ));
        if let Some(w) = self.l.tb.metrics_from {
            paxi = set(&paxi, "metrics_from", w);
        }
        self.make(&format!("{p}.paxi"), "paxi", &paxi)?;
        let router = self.router(c, nlg, cfg.ack_cbfc);
        self.make(&format!("{p}.router"), "router", &router)?;
        let mut mon = yaml::Mapping::new();
        // The MACs' and RX caps' byte counts as ramps (sent once per frame, not every cycle).
        mon.insert("inputs".into(), 0u64.into());
        mon.insert("ramps".into(), (nlg as u64).into());
        mon.insert("window".into(), 1000u64.into());
        self.make(&format!("{p}.tx_monitor"), "rate_monitor", &Value::Mapping(mon.clone()))?;
        self.make(&format!("{p}.rx_monitor"), "rate_monitor", &Value::Mapping(mon))?;
        self.connect(&format!("{p}.cdma.txn"), &format!("{p}.paxi.txn"))?;
        for k in 0..nlg {
            self.link_group(c, k, chip, cfg)?;
        }
        Ok(())
    }

    /// Chip `c`'s router parameters: its edges, routes, multicast table, PFC and ACK-VC modes.
    fn router(&self, c: u16, nlg: u8, ack_cbfc: bool) -> Value {
        let mut router = yaml::Mapping::new();
        router.insert("chip".into(), (c as u64).into());
        router.insert("num_lg".into(), (nlg as u64).into());
        router.insert("edges".into(), (self.fabric.per_chip[c as usize].len() as u64).into());
        router.insert(
            "routes".into(),
            Value::Sequence(
                self.fabric.route[c as usize]
                    .iter()
                    .map(|r| r.first().map_or(Value::Null, |&e| Value::from(e as u64)))
                    .collect(),
            ),
        );
        if self.multicast {
            let table = self.trees[c as usize]
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
        if self.pfc_mode {
            router.insert("pfc".into(), true.into());
            // The router pauses a data frame by the priority the switches give it, and names
            // the switches' lossless priorities in its own XOFF / XON.
            for key in ["pfc_priorities", "trust", "default_priority"] {
                if let Some(v) = self.switch_cfg.get(key) {
                    router.insert(key.into(), v.clone());
                }
            }
        }
        if ack_cbfc {
            router.insert("ack_cbfc".into(), true.into());
        }
        Value::Mapping(router)
    }

    /// LG `k` of chip `c`: TX, MAC, RX cap, RX, wired to the PAXI, the router and the monitors.
    fn link_group(&mut self, c: u16, k: u8, chip: &ChipConfig, cfg: &ChipParams) -> Result<(), InputError> {
        let n = self.fabric.n;
        let p = format!("chip{c}");
        let g = format!("{p}.lg{k}");
        // Credits per destination on the waves: every chip's, up to 64 (a signal each per LG; a
        // larger fabric would spend more on them than on the model).
        let tx = cfg.with_groups(&set(
            &set(&set(&cfg.tx, "chip", c as u64), "lg", k as u64),
            "view_dsts",
            (n as u64).min(64),
        ));
        self.make(&format!("{g}.tx"), "rclink_tx", &tx)?;
        self.make(&format!("{g}.mac"), "mac_tx", &cfg.mac)?;
        self.make(&format!("{g}.rxcap"), "rx_cap", &chip.rx_cap)?;
        let rx = set(
            &set(
                &set(
                    &set(&set(&cfg.rx, "chip", c as u64), "lg", k as u64),
                    "pkt_ovhd",
                    cfg.pkt_ovhd,
                ),
                "credit_size",
                cfg.credit_size,
            ),
            "deliver",
            true,
        );
        self.make(&format!("{g}.rx"), "rclink_rx", &rx)?;
        let conns = [
            (format!("{p}.paxi.seg{k}"), format!("{g}.tx.seg")),
            (format!("{g}.tx.done"), format!("{p}.paxi.done{k}")),
            (format!("{g}.tx.frame"), format!("{g}.mac.in")),
            (format!("{g}.mac.credit"), format!("{g}.tx.mac_credit")),
            (format!("{g}.mac.out"), format!("{p}.router.lg{k}_tx")),
            (format!("{p}.router.lg{k}_rx"), format!("{g}.rxcap.in")),
            (format!("{g}.rxcap.out"), format!("{g}.rx.data")),
            (format!("{g}.rx.deliver"), format!("{p}.paxi.rx{k}")),
            // The PAXI RX watermark signal: CBFC mode holds every LG's credit returns, PFC mode
            // has the router send PFC (one connection, at LG 0's turn).
            if self.pfc_mode {
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
        let ack_conns = if cfg.ack_cbfc { &ack_conns[..] } else { &[] };
        for (a, b) in conns.iter().chain(ack_conns) {
            if k > 0 && b.ends_with(".router.pause") {
                continue;
            }
            self.connect(a, b)?;
        }
        Ok(())
    }

    /// Switch `j`: one `l2_switch`, a port per edge, routes by destination chip: one port, or
    /// the equal-cost ports the switch spreads flows over (ECMP, hashed with the switch's index
    /// as salt so that two levels do not pick alike).
    pub(super) fn switch(&mut self, j: u16) -> Result<(), InputError> {
        let node = (self.fabric.n + j) as usize;
        let routes_v = Value::Sequence(
            self.fabric.route[node]
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
                &set(self.switch_cfg, "ports", self.fabric.per_chip[node].len() as u64),
                "routes",
                routes_v,
            ),
            "ecmp_salt",
            j as u64,
        );
        if self.multicast {
            let table = self.trees[node]
                .iter()
                .map(|h| Value::Sequence(h.edges.iter().map(|&e| Value::from(e as u64)).collect()))
                .collect();
            params = set(&params, "mcast", Value::Sequence(table));
        }
        self.make(&format!("sw{j}"), "l2_switch", &params)
    }

    /// Edges: two PhyLinks each (one per direction, with the fault rules of that direction),
    /// wired to the nodes' edge ports: a chip's router edges, a switch's ports.
    pub(super) fn links(&mut self, s: &System, link: &Value) -> Result<(), InputError> {
        let n = self.fabric.n;
        let port = |x: u16, e: usize, cls: &str| {
            if x < n {
                format!("chip{x}.router.e{e}_{cls}")
            } else {
                format!("sw{}.e{e}_{cls}", x - n)
            }
        };
        let short = |x: u16| if x < n { x.to_string() } else { format!("sw{}", x - n) };
        for &(a, b) in &self.fabric.edges {
            for (x, y) in [(a, b), (b, a)] {
                let path = format!("link{}_{}", short(x), short(y));
                let rules = fault_rules(self.l, s, &node_name(n, x), &node_name(n, y))?;
                let mut params = if rules.is_empty() {
                    link.clone()
                } else {
                    set(link, "faults", Value::Sequence(rules))
                };
                if self.pfc_mode {
                    params = set(&params, "pfc", true);
                }
                self.make(&path, "phylink", &params)?;
                let per_chip = &self.fabric.per_chip;
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
                    self.connect(&port(x, ex, cls_out), &format!("{path}.{port_in}"))?;
                    self.connect(&format!("{path}.{port_out}"), &port(y, ey, cls_in))?;
                }
                // PFC mode: PAUSE frames cross the same edge; chips and switches both send them
                // (a chip from its PAXI RX watermarks) and both honour them.
                if self.pfc_mode {
                    self.connect(&port(x, ex, "pfc_out"), &format!("{path}.pfc_in"))?;
                    self.connect(&format!("{path}.pfc_out"), &port(y, ey, "pfc_in"))?;
                }
            }
        }
        Ok(())
    }
}

/// Every fault rule names an edge of the topology, an LG the chips have, and fires at all.
pub(super) fn check_faults(l: &Loaded, s: &System, fabric: &Fabric, nlg: u8) -> Result<(), InputError> {
    for (i, f) in s.faults.iter().enumerate() {
        let ends = [&f.link[0], &f.link[1]].map(|e| parse_node(e, fabric.n, fabric.nsw));
        let ok = match ends {
            [Some(a), Some(b)] => fabric.edges.contains(&(a.min(b), a.max(b))),
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
    Ok(())
}
