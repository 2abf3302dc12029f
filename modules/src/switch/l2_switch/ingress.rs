//! The L2 switch's ingress as a node (`switch_ingress`; seed 003 «入口处理», «优先级分类»):
//! per input port, each message that arrived is looked up and handed to the buffer side (the
//! switch core) in the same cycle, with the outputs it goes to and, for a data frame, the
//! priority and VOQ level it is classified into.
//!
//! ```text
//!                        +----------------------------------------------+
//!  e{k}_req_in ==(4)==>  | lookup `routes[dst]` (ECMP: a hash of the    | ==(comb)==> fwd{k}     : stream<RoutedFrame>
//!  stream<DataFrame>     |   flow), or `mcast[group]` (every port of    |             {outs, level, prio, frame}
//!  e{k}_rsp_in ==(8)==>  |   the group: one bit each); classify by the  | ==(comb, 8)==> fwd_ctrl{k} : stream<RoutedCtrl>
//!  stream<Ctrl>          |   trusted header field (`trust`), else the   |             {out, msg}
//!  e{k}_cr_in  ==(8)==>  |   port's `default_priority`                  | ==(comb, 8)==> fwd_cr{k}   : stream<RoutedCredit>
//!  stream<CreditMsg>     +----------------------------------------------+             {out, msg}
//! ```
//!
//! **Lookup.** `routes[d]` names the output for destination chip d: one port, or equal-cost
//! ports over which flows are spread by a hash of (src, dst, LG, QP) — ECMP, so one flow's
//! frames take one path and stay in order; a credit return hashes on (src, dst, LG, VC). A
//! TYPE2 (multicast) frame to a group address (`MCAST_BIT | g`) goes to every port of
//! `mcast[g]` (`outs` has one bit per copy; `mcast_copies` counts the copies beyond the first).
//! A destination without a route, or a group without ports, is a protocol violation.
//!
//! **Classification.** `trust: pcp` takes the VLAN tag's PCP, `trust: dscp` the DSCP's class
//! selector (DSCP >> 3, Standard frames only: the AFH formats carry no IP header and fall back
//! to their PCP); a frame without the field gets `default_priority`. The priority's traffic
//! class, its VOQ level, is `tc_map[prio]` (seed 003 «PFC 优先级映射»: PCP → QoS priority → PFC
//! channel). The default map takes priorities 0–3 as levels 0–3 (seed 003's VOQ mapping: 3
//! ACK+CNP, 2 REQ data, 1 RSP, 0 TYPE2/3) and 4–7 into level 3; seed 003's PFC table, where REQ
//! data travels at PCP 3~4, is configs/seed003_pfc_priorities.yaml (docs/spec-findings.md
//! finding 16). The priority goes on with the frame: PFC accounts and pauses by it.
//!
//! **Timing.** Latency 0 in this node: a message popped at n is on `fwd*` at n, which the
//! core takes in the same cycle; the pipeline's `latency` (parse, classify, lookup: seed 003's
//! 50–200 ns) is counted in the core, from the arrival at n, as the delay before the frame
//! reaches the buffer. One data frame per input per cycle (its stream takes one push a cycle),
//! every control message and credit return that waits.
//!
//! **Deviations.** The lookup and classification are done in the cycle of arrival and their
//! latency is the core's delay line after it; in the RTL the decision may come at the end of
//! the pipeline. The results are the same: both depend only on the frame and the tables. A
//! multicast group lists each port once (a port named twice is refused): the copies are per
//! output.

use hwsim_hw::rng::{mix64, GOLDEN_GAMMA};
use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{
    frame_priority, mcast_group, ChipId, CreditMsg, Ctrl, DataFrame, RoutedCredit, RoutedCtrl, RoutedFrame,
    MAX_SWITCH_PORTS,
};
use serde::{Deserialize, Serialize};

use super::{Route, Trust, LEVELS};

/// The counters this node registers (in the switch's scope).
pub const COUNTERS: &[CounterDecl] = &[CounterDecl::new(
    "mcast_copies",
    "frames",
    "multicast frame copies made at ingress beyond the first",
)];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Control messages or credit returns an input hands on per cycle: its stream's capacity.
pub const CTRL_LANES: u32 = 8;

/// Parameters: the lookup tables and the classification (the switch fills them in from its
/// own; see `l2_switch` for each one's meaning).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Ports, 1..=64.
    pub ports: u32,
    /// Output per destination chip: a port, equal-cost ports, or `null` = unreachable.
    pub routes: Vec<Option<Route>>,
    /// Salt of the ECMP hash.
    pub ecmp_salt: u64,
    /// Multicast table by group id: the ports a copy leaves on.
    pub mcast: Vec<Vec<u32>>,
    /// The header field a data frame is classified on.
    pub trust: Trust,
    /// The priority of a frame without that field, 0..=7.
    pub default_priority: u8,
    /// Priority → VOQ level.
    pub tc_map: [u8; 8],
}

impl Default for Params {
    fn default() -> Self {
        let s = super::Params::default();
        Params::of(&s)
    }
}

impl Params {
    /// The ingress's part of a switch's parameters.
    pub fn of(s: &super::Params) -> Params {
        Params {
            ports: s.ports,
            routes: s.routes.clone(),
            ecmp_salt: s.ecmp_salt,
            mcast: s.mcast.clone(),
            trust: s.trust,
            default_priority: s.default_priority,
            tc_map: s.tc_map,
        }
    }
}

/// Refuses out-of-range tables naming the parameter (the switch runs it in its own check).
pub fn check(p: &Params) -> Result<(), String> {
    if p.ports == 0 || p.ports as usize > MAX_SWITCH_PORTS {
        return Err(format!("ports = {}: must be in 1..=64", p.ports));
    }
    for (d, r) in p.routes.iter().enumerate() {
        let Some(r) = r else { continue };
        if r.ports().is_empty() {
            return Err(format!("routes[{d}]: an empty list (use null for unreachable)"));
        }
        if let Some(bad) = r.ports().iter().find(|&&o| o >= p.ports) {
            return Err(format!("routes[{d}]: port {bad} does not exist (ports = {})", p.ports));
        }
    }
    if p.mcast.len() > 1 << 15 {
        return Err(format!("mcast: {} groups, at most 32768", p.mcast.len()));
    }
    for (g, ports) in p.mcast.iter().enumerate() {
        if let Some(bad) = ports.iter().find(|&&o| o >= p.ports) {
            return Err(format!("mcast[{g}]: port {bad} does not exist (ports = {})", p.ports));
        }
        if let Some((i, o)) = ports.iter().enumerate().find(|(i, o)| ports[..*i].contains(o)) {
            return Err(format!("mcast[{g}]: port {o} listed twice (entry {i})"));
        }
    }
    if p.default_priority > 7 {
        return Err(format!("default_priority = {}: must be in 0..=7", p.default_priority));
    }
    if let Some(l) = p.tc_map.iter().find(|&&l| l as usize >= LEVELS) {
        return Err(format!(
            "tc_map = {:?}: level {l} is not one of the {LEVELS} VOQ levels 0..=3",
            p.tc_map
        ));
    }
    Ok(())
}

/// The outer ports of input `k`: what arrives on the switch's port k.
pub fn input_ports(k: u32) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<DataFrame>(&format!("e{k}_req_in"), 4).doc("data frames in on port k"),
        PortDecl::stream_in::<Ctrl>(&format!("e{k}_rsp_in"), CTRL_LANES).doc("ACK/NAK/CNP in on port k"),
        PortDecl::stream_in::<CreditMsg>(&format!("e{k}_cr_in"), CTRL_LANES).doc("credit returns in on port k"),
    ]
}

/// The forwarding decisions of input `k`, as the core takes them (combinational, in the
/// cycle of arrival); [`ports`] declares the same streams from this node's side.
pub fn fwd_inputs(k: u32) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<RoutedFrame>(&format!("fwd{k}"), 1)
            .doc("input k's data frame this cycle, looked up and classified by the ingress"),
        PortDecl::comb_stream_in::<RoutedCtrl>(&format!("fwd_ctrl{k}"), CTRL_LANES)
            .doc("input k's control messages this cycle, looked up by the ingress"),
        PortDecl::comb_stream_in::<RoutedCredit>(&format!("fwd_cr{k}"), CTRL_LANES)
            .doc("input k's credit returns this cycle, looked up by the ingress"),
    ]
}

/// Port list: per input, its three streams in and its three forwarding decisions out.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = Vec::new();
    for k in 0..p.ports.min(MAX_SWITCH_PORTS as u32) {
        v.extend(input_ports(k));
        v.push(
            PortDecl::comb_stream_out::<RoutedFrame>(&format!("fwd{k}"))
                .doc("input k's data frame: the outputs it goes to (one bit each), its VOQ level"),
        );
        v.push(
            PortDecl::comb_stream_out::<RoutedCtrl>(&format!("fwd_ctrl{k}"))
                .width(CTRL_LANES)
                .doc("input k's control messages, each with its output"),
        );
        v.push(
            PortDecl::comb_stream_out::<RoutedCredit>(&format!("fwd_cr{k}"))
                .width(CTRL_LANES)
                .doc("input k's credit returns, each with its output"),
        );
    }
    v
}

/// One input's streams.
struct Input {
    req_in: StreamIn<DataFrame>,
    rsp_in: StreamIn<Ctrl>,
    cr_in: StreamIn<CreditMsg>,
    fwd: StreamOut<RoutedFrame>,
    fwd_ctrl: StreamOut<RoutedCtrl>,
    fwd_cr: StreamOut<RoutedCredit>,
}

/// The node.
pub struct Ingress {
    p: Params,
    /// Per group, its ports as one bit each (from `mcast`).
    groups: Vec<u64>,
    inputs: Vec<Input>,
    c_mcast_copies: CounterId,
}

/// Binds ports; refuses out-of-range tables naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    let mut inputs = Vec::new();
    for k in 0..p.ports {
        inputs.push(Input {
            req_in: b.stream_in(&format!("e{k}_req_in"))?,
            rsp_in: b.stream_in(&format!("e{k}_rsp_in"))?,
            cr_in: b.stream_in(&format!("e{k}_cr_in"))?,
            fwd: b.stream_out(&format!("fwd{k}"))?,
            fwd_ctrl: b.stream_out(&format!("fwd_ctrl{k}"))?,
            fwd_cr: b.stream_out(&format!("fwd_cr{k}"))?,
        });
    }
    let groups = p
        .mcast
        .iter()
        .map(|g| g.iter().fold(0u64, |m, &o| m | 1 << o))
        .collect();
    Ok(Box::new(Ingress {
        p: p.clone(),
        groups,
        inputs,
        c_mcast_copies: b.counter("mcast_copies"),
    }))
}

/// The ECMP hash of a flow key (SplitMix64's finaliser of the salted key): deterministic, well
/// mixed.
fn flow_hash(salt: u64, key: u64) -> u64 {
    mix64(key ^ salt.wrapping_mul(GOLDEN_GAMMA))
}

/// The ECMP key of a flow: (src, dst, LG, x) with x the QP for data and control, the VC for
/// credits.
fn flow_key(src: ChipId, dst: ChipId, lg: u8, x: u64) -> u64 {
    (src as u64) << 48 | (dst as u64) << 32 | (lg as u64) << 24 | x
}

/// A data frame's priority (the header field the switch trusts, else the port default) and
/// its VOQ level (the priority's traffic class, `tc_map`).
fn classify(p: &Params, f: &DataFrame) -> (u8, u8) {
    let prio = frame_priority(p.trust, p.default_priority, f);
    (prio, p.tc_map[prio as usize])
}

impl Ingress {
    /// The output for a message to `dst` of the flow `key`: the route's port, or one of its
    /// equal-cost ports by the flow's hash (so a flow's frames keep their order).
    fn route(&self, ctx: &mut Ctx<'_>, dst: ChipId, key: u64, what: &str) -> Option<u8> {
        match self.p.routes.get(dst as usize).and_then(|r| r.as_ref()) {
            Some(Route::One(o)) => Some(*o as u8),
            Some(Route::Many(v)) => Some(v[(flow_hash(self.p.ecmp_salt, key) % v.len() as u64) as usize] as u8),
            None => {
                ctx.violation(format!("no route to chip {dst} for a {what}"));
                None
            }
        }
    }

    /// A data frame's outputs: the group's ports (multicast) or its route's port.
    fn outputs(&self, ctx: &mut Ctx<'_>, f: &DataFrame) -> Option<u64> {
        if let Some(g) = mcast_group(f.dst) {
            let outs = self.groups.get(g as usize).copied().unwrap_or(0);
            if outs == 0 {
                ctx.violation(format!("no multicast route for group {g}: {f:?}"));
                return None;
            }
            ctx.count(self.c_mcast_copies, outs.count_ones() as u64 - 1);
            return Some(outs);
        }
        let key = flow_key(f.src, f.dst, f.lg, f.qp.value() as u64);
        self.route(ctx, f.dst, key, "data frame").map(|o| 1 << o)
    }
}

impl Component for Ingress {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        for k in 0..self.inputs.len() {
            let i = &self.inputs[k];
            if let Some(frame) = i.req_in.pop() {
                if let Some(outs) = self.outputs(ctx, &frame) {
                    let (prio, level) = classify(&self.p, &frame);
                    // One frame a cycle on a stream of one place the core pops in the cycle.
                    self.inputs[k].fwd.push(RoutedFrame {
                        outs,
                        level,
                        prio,
                        frame,
                    });
                }
            }
            // The streams in hold at most `CTRL_LANES` messages, the lanes out take as many.
            while let Some(msg) = self.inputs[k].rsp_in.pop() {
                let key = flow_key(msg.src, msg.dst, msg.lg, msg.rh.qp().value() as u64);
                if let Some(out) = self.route(ctx, msg.dst, key, "control message") {
                    self.inputs[k].fwd_ctrl.push(RoutedCtrl { out, msg });
                }
            }
            while let Some(msg) = self.inputs[k].cr_in.pop() {
                let key = flow_key(msg.src, msg.dst, msg.lg, msg.vc as u64);
                if let Some(out) = self.route(ctx, msg.dst, key, "credit return") {
                    self.inputs[k].fwd_cr.push(RoutedCredit { out, msg });
                }
            }
        }
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::{FrameFormat, HeaderTags, QpId, UInt, MCAST_BIT};

    fn bench(p: &Params) -> Harness {
        let q = p.clone();
        Harness::new("switch_ingress", ports(p), Box::new(move |b| build(&q, b)), 1, 64).unwrap()
    }

    fn frame(src: ChipId, dst: ChipId, qp: u16, hdr: HeaderTags) -> DataFrame {
        DataFrame {
            src,
            dst,
            qp: QpId::new(qp).unwrap(),
            npkts: 1,
            frame_bytes: 64,
            max_payload: 1344,
            pkt_ovhd: 50,
            hdr,
            ..Default::default()
        }
    }

    /// Four ports; chip 3 behind the equal-cost ports 1 and 2; group 0 on ports 0, 2, 3.
    fn params() -> Params {
        Params {
            ports: 4,
            routes: vec![
                Some(Route::One(0)),
                Some(Route::One(1)),
                None,
                Some(Route::Many(vec![1, 2])),
            ],
            mcast: vec![vec![3, 0, 2]],
            ..Params::default()
        }
    }

    #[test]
    fn a_frame_is_routed_and_classified_in_the_cycle_it_is_taken() {
        let mut h = bench(&params());
        let tagged = HeaderTags {
            pcp: Some(UInt::wrap(5)),
            ..Default::default()
        };
        assert!(h.push("e0_req_in", frame(0, 1, 1, tagged)));
        h.step().unwrap(); // pushed at 0, visible at 1
        assert!(h.pop::<RoutedFrame>("fwd0").is_none());
        h.step().unwrap();
        let r = h.pop::<RoutedFrame>("fwd0").expect("forwarded at 1");
        assert_eq!((r.outs, r.level, r.prio), (1 << 1, 3, 5), "port 1; PCP 5 joins level 3");
        assert_eq!(r.frame.dst, 1);
    }

    #[test]
    fn classification_follows_the_trusted_field_else_the_port_default() {
        let i = |trust| Params {
            trust,
            default_priority: 2,
            ..params()
        };
        let std_tagged = HeaderTags {
            format: FrameFormat::Standard,
            pcp: Some(UInt::wrap(1)),
            dscp: UInt::wrap(3 << 3),
        };
        let afh = HeaderTags {
            format: FrameFormat::AfhGen1,
            pcp: Some(UInt::wrap(1)),
            dscp: UInt::wrap(3 << 3),
        };
        let untagged = HeaderTags::default();
        let (pcp, dscp) = (i(Trust::Pcp), i(Trust::Dscp));
        let level = |p: &Params, h| classify(p, &frame(0, 1, 1, h)).1;
        assert_eq!(level(&pcp, std_tagged), 1);
        assert_eq!(level(&dscp, std_tagged), 3, "DSCP 24 >> 3");
        assert_eq!(level(&dscp, afh), 1, "no IP header: the PCP");
        assert_eq!(level(&pcp, untagged), 2, "untagged: the default");
    }

    #[test]
    fn the_tc_map_gives_each_priority_its_level() {
        // Seed 003's PFC table: REQ data at PCP 3~4 into the REQ level (2), TYPE2 at 2 into 0.
        let p = Params {
            tc_map: [0, 1, 0, 2, 2, 3, 3, 3],
            ..params()
        };
        let pcp = |v| HeaderTags {
            pcp: Some(UInt::wrap(v)),
            ..Default::default()
        };
        let got: Vec<_> = (0..8).map(|v| classify(&p, &frame(0, 1, 1, pcp(v)))).collect();
        assert_eq!(got, [(0, 0), (1, 1), (2, 0), (3, 2), (4, 2), (5, 3), (6, 3), (7, 3)]);
        let bad = Params {
            tc_map: [0, 1, 2, 4, 3, 3, 3, 3],
            ..params()
        };
        assert!(check(&bad).unwrap_err().contains("level 4"));
    }

    #[test]
    fn ecmp_keeps_a_flow_on_one_port_and_spreads_flows() {
        let mut h = bench(&params());
        let mut by_qp = std::collections::BTreeMap::new();
        for n in 0..64u16 {
            let qp = 1 + n % 16;
            assert!(h.push("e0_req_in", frame(0, 3, qp, HeaderTags::default())));
            h.step().unwrap();
            if let Some(r) = h.pop::<RoutedFrame>("fwd0") {
                by_qp.entry(r.frame.qp.value()).or_insert_with(Vec::new).push(r.outs);
            }
        }
        h.step().unwrap();
        while let Some(r) = h.pop::<RoutedFrame>("fwd0") {
            by_qp.entry(r.frame.qp.value()).or_insert_with(Vec::new).push(r.outs);
        }
        assert_eq!(by_qp.values().map(Vec::len).sum::<usize>(), 64);
        let mut used = 0u64;
        for (qp, outs) in &by_qp {
            assert!(outs.iter().all(|&o| o == outs[0]), "QP {qp} split: {outs:?}");
            assert!(outs[0] == 1 << 1 || outs[0] == 1 << 2);
            used |= outs[0];
        }
        assert_eq!(used, 0b110, "16 flows over two equal-cost ports use both");
    }

    #[test]
    fn a_multicast_frame_goes_to_every_port_of_its_group() {
        let mut h = bench(&params());
        assert!(h.push("e1_req_in", frame(1, MCAST_BIT, 1, HeaderTags::default())));
        h.steps(2).unwrap();
        let r = h.pop::<RoutedFrame>("fwd1").expect("forwarded");
        assert_eq!(r.outs, 0b1101);
        assert_eq!(h.sim().counter("dut.mcast_copies"), Some(2));
    }

    #[test]
    fn control_messages_and_credits_follow_their_routes_in_the_cycle_taken() {
        let mut h = bench(&params());
        let ctrl = |dst| Ctrl {
            src: 0,
            dst,
            ..Default::default()
        };
        assert!(h.push("e2_rsp_in", ctrl(0)));
        assert!(h.push(
            "e2_cr_in",
            CreditMsg {
                src: 0,
                dst: 1,
                ..Default::default()
            }
        ));
        h.step().unwrap();
        assert!(h.push("e2_rsp_in", ctrl(3)));
        h.step().unwrap();
        assert_eq!(
            h.pop::<RoutedCtrl>("fwd_ctrl2").map(|r| (r.msg.dst, r.out)),
            Some((0, 0))
        );
        assert_eq!(h.pop::<RoutedCredit>("fwd_cr2").map(|r| r.out), Some(1));
        assert!(h.pop::<RoutedCtrl>("fwd_ctrl2").is_none(), "the second is taken at 2");
        h.step().unwrap();
        let r = h.pop::<RoutedCtrl>("fwd_ctrl2").expect("at 2");
        assert!(r.out == 1 || r.out == 2, "chip 3 behind ports 1 and 2: {}", r.out);
    }

    #[test]
    fn a_frame_without_a_route_is_a_protocol_violation() {
        let mut h = bench(&params());
        assert!(h.push("e0_req_in", frame(0, 2, 1, HeaderTags::default())));
        h.step().unwrap();
        let e = h.step().unwrap_err().to_string();
        assert!(e.contains("no route to chip 2 for a data frame"), "{e}");
    }

    #[test]
    fn bad_tables_are_refused_naming_the_entry() {
        let dup = Params {
            mcast: vec![vec![0, 2, 0]],
            ..params()
        };
        assert_eq!(check(&dup).unwrap_err(), "mcast[0]: port 0 listed twice (entry 2)");
        let far = Params {
            routes: vec![Some(Route::One(4))],
            ..params()
        };
        assert_eq!(check(&far).unwrap_err(), "routes[0]: port 4 does not exist (ports = 4)");
        assert!(check(&params()).is_ok());
    }
}
