//! A chip's port mux: it joins the chip's link groups to its edges, and forwards by routing table
//! (seed 000 «Relay 芯片处理»: a relay chip forwards without any RC Link processing).
//!
//! ```text
//!   lg{k}_tx   (DataFrame from MAC k) ─┐                  ┌─> e{e}_req_out (to PhyLink e)
//!   lg{k}_ctrl (Ctrl from RX k)       ─┤                  ├─> e{e}_rsp_out
//!   lg{k}_cr   (CreditMsg from RX k)  ─┤                  ├─> e{e}_cr_out
//!   lg{k}_tcr  (CreditMsg from TX k,  ─┤    [ router ]    ├─> lg{k}_rx     (DataFrame to RX cap k)
//!               ack_cbfc only)         │                  ├─> lg{k}_ack    (Ctrl to TX k)
//!   e{e}_req_in / e{e}_rsp_in / e{e}_cr_in ┤              ├─> lg{k}_credit (CreditMsg to TX k)
//!     (from the PhyLink into this chip)   ─┘              └─> lg{k}_rcr    (CreditMsg to RX k, ack_cbfc only)
//! ```
//! A message for this chip goes to its LG (`msg.lg`); any other goes to the edge the routing
//! table gives for `msg.dst` (shortest paths, computed at elaboration). Three classes (data,
//! control, credit) use separate streams end to end, so control never waits behind data.
//! Each output takes one message per cycle; inputs are served in a rotating order (by cycle) so
//! no input starves; a blocked head waits in its input stream (back-pressure).
//! Latency: 1 cycle (popped at n, pushed at n, visible downstream at n+1).
//!
//! PFC (seed 003 «PFC 模式»; wired only when the switches run PFC): an XOFF arriving on
//! `e{e}_pfc_in` for priority p stops the data frames of priority p leaving on edge e until p's
//! XON, a frame's priority being the one the switch gives it (`trust`, `default_priority`: the
//! system builder copies the switches'; untagged frames take the default, 2); the blocked
//! frames wait in their input streams, so the back-pressure reaches the MAC and the TX (control
//! and credits are other priorities and keep flowing; a paused head holds its input's stream).
//! With `pfc` the chip sends PFC too (seed 002 «PFC 行为»; TX_PFC_REQ_O, the PAXI RX VC buffers'
//! watermark signal that CBFC mode uses to hold credits): when `pause` (the PAXI's `rx_pause`)
//! goes non-zero, an XOFF for `pfc_priorities` (the switches' lossless priorities, [2]) leaves
//! on every edge in that cycle (one per edge stream; a full one sends it as soon as it drains),
//! and the XON when it is back to zero, whichever PAXI buffer (REQ, RSP, MUL) is full.
//! **ACK-VC credits** (`ack_cbfc`; seed 002 `type1_ack_cbfc`, see `ack_cbfc`): the TXs return
//! credit for the control messages they take in on `lg{k}_tcr`, routed like every other credit
//! return; a return of VC 5 for this chip goes to `lg{k}_rcr`, the RX that spent it, and every
//! other VC's to the TX (`lg{k}_credit`). Without `ack_cbfc` a VC-5 return for this chip stops
//! the run (nothing here could take it).
//! **Multicast** (TYPE2, seed 002 «多播写请求流程», «多播双重流控»: the MAC replicates): a data
//! frame to a group address (`MCAST_BIT | g`) goes to every output of `mcast[g]`: this chip's
//! LG (the frame's `lg`) when the chip is a member, and each edge of the group's tree. The
//! copies leave in one cycle, when every one of those outputs can take one; until then the
//! frame waits at its input (the replication buffer, whose occupancy the TX's multicast MAC
//! credits bound). The same holds on a relay chip, so a group spread over a mesh gets one copy
//! per tree edge, never two on one edge.
//!
//! Counters: `data_local`, `data_forwarded`, `ctrl_msgs`, `credit_msgs`, `mcast_copies` (copies
//! beyond the first), `pfc_pauses` (XOFFs received), `pfc_paused_cycles` (edge-cycles spent
//! paused, counted at each XON), `pfc_xoff_sent`, `pfc_xon_sent` (frames, per edge).

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, In, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{ChipId, CreditMsg, Ctrl, DataFrame, PfcFrame, PfcPause, Trust};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "pfc_xoff_sent",
        "frames",
        "PFC XOFF frames sent to the edges when the PAXI `pause` went non-zero (one per edge)",
    ),
    CounterDecl::new(
        "pfc_xon_sent",
        "frames",
        "PFC XON frames sent to the edges when `pause` went back to zero (one per edge)",
    ),
    CounterDecl::new("pfc_pauses", "events", "PFC XOFFs received that paused an edge's data"),
    CounterDecl::new(
        "pfc_paused_cycles",
        "ns",
        "edge-cycles spent paused by PFC, counted at each XON",
    ),
    CounterDecl::new("data_local", "frames", "data frame copies delivered to this chip's LGs"),
    CounterDecl::new(
        "data_forwarded",
        "frames",
        "data frame copies forwarded to an edge (relayed or sent out)",
    ),
    CounterDecl::new(
        "ctrl_msgs",
        "messages",
        "control messages (ACK/NAK/CNP) moved to their LG or edge",
    ),
    CounterDecl::new("credit_msgs", "messages", "credit returns moved to their LG or edge"),
    CounterDecl::new("mcast_copies", "frames", "multicast frame copies beyond the first"),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip.
    pub chip: ChipId,
    /// Link groups.
    pub num_lg: u8,
    /// Edges (PhyLinks) attached.
    pub edges: u32,
    /// Next-hop edge per destination chip (index = chip id); `null` = unreachable or self.
    pub routes: Vec<Option<u32>>,
    /// Multicast table by group id (TYPE2 frames to `MCAST_BIT | group`): whether this chip
    /// is a member (the frame goes to its LG's RX too) and the edges a copy leaves on. The
    /// system builder fills it from the group's source-rooted shortest-path tree.
    pub mcast: Vec<McastRoute>,
    /// PFC mode (the system sets it when the switches run PFC): the chip sends PFC itself, an
    /// XOFF for `pfc_priorities` on every edge while its PAXI RX VC buffers are above
    /// their high watermark (`pause`), the XON when they are back at the low one.
    pub pfc: bool,
    /// PFC mode: the priorities this chip's XOFF / XON name (the system builder copies the
    /// switches' `pfc_priorities`; [2], the REQ data priority, by default).
    pub pfc_priorities: Vec<u8>,
    /// How the switches on the edges classify a data frame (`pcp` or `dscp`, the system builder
    /// copies the switches' `trust`): a PFC pause received for priority p holds the data frames
    /// the switch would give priority p.
    pub trust: Trust,
    /// The switches' port default priority, 0..=7 (with `trust`).
    pub default_priority: u8,
    /// CBFC on the ACK + CNP VC (the system sets it when the RXs hold ACK-VC credits): each TX's
    /// credit returns come in on `lg{k}_tcr`, and returns of VC 5 for this chip leave on
    /// `lg{k}_rcr` to the RX that spent them (the other VCs' go to the TX, on `lg{k}_credit`).
    pub ack_cbfc: bool,
}

/// Where a multicast group's frames go from this chip.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McastRoute {
    /// This chip is a member: a copy goes to the frame's LG here.
    pub local: bool,
    /// Edges a copy leaves on.
    pub edges: Vec<u32>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            num_lg: 8,
            edges: 1,
            routes: vec![None, Some(0)],
            mcast: Vec::new(),
            pfc: false,
            pfc_priorities: vec![PfcFrame::REQ_DATA_PRIO],
            trust: Trust::Pcp,
            default_priority: PfcFrame::REQ_DATA_PRIO,
            ack_cbfc: false,
        }
    }
}

/// Most edges one router takes: a node id is 16 bits, so no chip has more neighbours. The bound
/// keeps a typo such as `edges: 4294967295` from declaring 30 billion ports (tens of GiB) before
/// `build` can refuse it.
pub const MAX_EDGES: u32 = 1 << 16;

/// Port list (no edge ports past [`MAX_EDGES`]: `build` then refuses the parameter by name).
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = Vec::new();
    let edges = if p.edges > MAX_EDGES { 0 } else { p.edges };
    for k in 0..p.num_lg {
        v.push(PortDecl::stream_in::<DataFrame>(&format!("lg{k}_tx"), 2).doc("frames from MAC k"));
        v.push(PortDecl::stream_in::<Ctrl>(&format!("lg{k}_ctrl"), 4).doc("ACK/NAK/CNP from RX k"));
        v.push(PortDecl::stream_in::<CreditMsg>(&format!("lg{k}_cr"), 4).doc("credit returns from RX k"));
        v.push(PortDecl::stream_out::<DataFrame>(&format!("lg{k}_rx")).doc("frames to RX cap k"));
        v.push(PortDecl::stream_out::<Ctrl>(&format!("lg{k}_ack")).doc("ACK/NAK/CNP to TX k"));
        v.push(PortDecl::stream_out::<CreditMsg>(&format!("lg{k}_credit")).doc("credit returns to TX k"));
        if p.ack_cbfc {
            v.push(
                PortDecl::stream_in::<CreditMsg>(&format!("lg{k}_tcr"), 4)
                    .doc("ACK-VC credit returns from TX k (for the control messages it took in)"),
            );
            v.push(
                PortDecl::stream_out::<CreditMsg>(&format!("lg{k}_rcr"))
                    .doc("ACK-VC credit returns to RX k (VC 5, for the control messages it sent)"),
            );
        }
    }
    for e in 0..edges {
        v.push(PortDecl::stream_in::<DataFrame>(&format!("e{e}_req_in"), 4).doc("frames arriving on edge e"));
        v.push(PortDecl::stream_in::<Ctrl>(&format!("e{e}_rsp_in"), 4).doc("control arriving on edge e"));
        v.push(PortDecl::stream_in::<CreditMsg>(&format!("e{e}_cr_in"), 4).doc("credits arriving on edge e"));
        v.push(PortDecl::stream_out::<DataFrame>(&format!("e{e}_req_out")).doc("frames leaving on edge e"));
        v.push(PortDecl::stream_out::<Ctrl>(&format!("e{e}_rsp_out")).doc("control leaving on edge e"));
        v.push(PortDecl::stream_out::<CreditMsg>(&format!("e{e}_cr_out")).doc("credits leaving on edge e"));
        v.push(
            PortDecl::stream_in::<PfcFrame>(&format!("e{e}_pfc_in"), 4)
                .optional()
                .doc("PFC frames from the neighbour on edge e (PFC mode)"),
        );
        if p.pfc {
            v.push(
                PortDecl::stream_out::<PfcFrame>(&format!("e{e}_pfc_out"))
                    .doc("PFC frames to the neighbour on edge e: this chip's XOFF / XON (PFC mode)"),
            );
        }
    }
    if p.pfc {
        v.push(
            PortDecl::input::<u8>("pause")
                .doc("PAXI RX VC buffers above their high watermark (PFC mode: XOFF to the neighbours)"),
        );
    }
    v
}

mod class;
use class::Class;

/// The block.
pub struct Router {
    chip: ChipId,
    num_lg: usize,
    routes: Vec<Option<u32>>,
    mcast: Vec<McastRoute>,
    data: Class<DataFrame>,
    ctrl: Class<Ctrl>,
    credit: Class<CreditMsg>,
    pfc_in: Vec<StreamIn<PfcFrame>>,
    pauses: Vec<PfcPause>,
    /// PFC mode: the PAXI's back-pressure, the PFC frames out, the state last announced
    /// (XOFF in force) and, per edge, a frame still to send (its stream was full).
    pause_in: Option<In<u8>>,
    pfc_out: Vec<StreamOut<PfcFrame>>,
    xoff: bool,
    /// The priorities its XOFF / XON name (`pfc_priorities`).
    pfc_mask: u8,
    pfc_pending: Vec<Option<bool>>,
    c_xoff_sent: CounterId,
    c_xon_sent: CounterId,
    c_pauses: CounterId,
    c_paused: CounterId,
    c_local: CounterId,
    c_fwd: CounterId,
    c_ctrl: CounterId,
    c_credit: CounterId,
    c_copies: CounterId,
}

/// Refuses parameters out of range (before the ports are declared: their number grows with
/// `edges`).
pub fn check(p: &Params) -> Result<(), String> {
    if p.num_lg == 0 || p.num_lg > 8 {
        return Err(format!("num_lg {} out of range 1..=8", p.num_lg));
    }
    if p.edges > MAX_EDGES {
        return Err(format!("edges = {}: must be in 0..={MAX_EDGES}", p.edges));
    }
    if let Some(bad) = p.routes.iter().flatten().find(|&&e| e >= p.edges) {
        return Err(format!("route to edge {bad}, but the chip has {} edges", p.edges));
    }
    if p.mcast.len() > 1 << 15 {
        return Err(format!("mcast: {} groups, at most 32768", p.mcast.len()));
    }
    for (g, r) in p.mcast.iter().enumerate() {
        if let Some(bad) = r.edges.iter().find(|&&e| e >= p.edges) {
            return Err(format!("mcast[{g}]: edge {bad}, but the chip has {} edges", p.edges));
        }
    }
    if p.pfc_priorities.is_empty() || p.pfc_priorities.iter().any(|&q| q > 7) {
        return Err(format!("pfc_priorities = {:?}: 1 to 8 of 0..=7", p.pfc_priorities));
    }
    if p.default_priority > 7 {
        return Err(format!("default_priority = {}: must be in 0..=7", p.default_priority));
    }
    Ok(())
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    let mut data = Class {
        inputs: vec![],
        outputs: vec![],
        used: vec![],
        paused: vec![],
        classify: (Trust::Pcp, 0),
        rx_base: None,
        targets: Vec::new(),
        ready: Vec::new(),
    };
    let mut ctrl = Class {
        inputs: vec![],
        outputs: vec![],
        used: vec![],
        paused: vec![],
        classify: (Trust::Pcp, 0),
        rx_base: None,
        targets: Vec::new(),
        ready: Vec::new(),
    };
    let mut credit = Class {
        inputs: vec![],
        outputs: vec![],
        used: vec![],
        paused: vec![],
        classify: (Trust::Pcp, 0),
        rx_base: None,
        targets: Vec::new(),
        ready: Vec::new(),
    };
    for k in 0..p.num_lg {
        data.inputs.push(b.stream_in(&format!("lg{k}_tx"))?);
        ctrl.inputs.push(b.stream_in(&format!("lg{k}_ctrl"))?);
        credit.inputs.push(b.stream_in(&format!("lg{k}_cr"))?);
        data.outputs.push(b.stream_out(&format!("lg{k}_rx"))?);
        ctrl.outputs.push(b.stream_out(&format!("lg{k}_ack"))?);
        credit.outputs.push(b.stream_out(&format!("lg{k}_credit"))?);
    }
    let mut pfc_in = Vec::new();
    let mut pfc_out = Vec::new();
    for e in 0..p.edges {
        pfc_in.push(b.stream_in(&format!("e{e}_pfc_in"))?);
        if p.pfc {
            pfc_out.push(b.stream_out(&format!("e{e}_pfc_out"))?);
        }
        data.inputs.push(b.stream_in(&format!("e{e}_req_in"))?);
        ctrl.inputs.push(b.stream_in(&format!("e{e}_rsp_in"))?);
        credit.inputs.push(b.stream_in(&format!("e{e}_cr_in"))?);
        data.outputs.push(b.stream_out(&format!("e{e}_req_out"))?);
        ctrl.outputs.push(b.stream_out(&format!("e{e}_rsp_out"))?);
        credit.outputs.push(b.stream_out(&format!("e{e}_cr_out"))?);
    }
    let outs = p.num_lg as usize + p.edges as usize;
    if p.ack_cbfc {
        credit.rx_base = Some(outs);
        for k in 0..p.num_lg {
            credit.inputs.push(b.stream_in(&format!("lg{k}_tcr"))?);
            credit.outputs.push(b.stream_out(&format!("lg{k}_rcr"))?);
        }
    }
    data.used = vec![false; outs];
    ctrl.used = vec![false; outs];
    credit.used = vec![false; credit.outputs.len()];
    // The passes' scratch, at its largest from the start (no allocation while running).
    data.ready.reserve(data.inputs.len());
    ctrl.ready.reserve(ctrl.inputs.len());
    credit.ready.reserve(credit.inputs.len());
    data.paused = vec![0; outs];
    ctrl.paused = vec![0; outs];
    credit.paused = vec![0; credit.outputs.len()];
    data.classify = (p.trust, p.default_priority);
    Ok(Box::new(Router {
        chip: p.chip,
        num_lg: p.num_lg as usize,
        routes: p.routes.clone(),
        mcast: p.mcast.clone(),
        data,
        ctrl,
        credit,
        pfc_in,
        pauses: vec![PfcPause::default(); p.edges as usize],
        pause_in: if p.pfc { Some(b.input("pause")?) } else { None },
        pfc_pending: vec![None; pfc_out.len()],
        pfc_out,
        xoff: false,
        pfc_mask: p.pfc_priorities.iter().fold(0, |m, &q| m | 1 << q),
        c_xoff_sent: b.counter("pfc_xoff_sent"),
        c_xon_sent: b.counter("pfc_xon_sent"),
        c_pauses: b.counter("pfc_pauses"),
        c_paused: b.counter("pfc_paused_cycles"),
        c_local: b.counter("data_local"),
        c_fwd: b.counter("data_forwarded"),
        c_ctrl: b.counter("ctrl_msgs"),
        c_credit: b.counter("credit_msgs"),
        c_copies: b.counter("mcast_copies"),
    }))
}

impl Component for Router {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // PFC from the neighbours: XOFF / XON of a priority close / open an edge to the data
        // frames of that priority.
        for e in 0..self.pfc_in.len() {
            while let Some(f) = self.pfc_in[e].pop() {
                let c = self.pauses[e].receive(f, now);
                if c.paused != 0 {
                    ctx.count(self.c_pauses, c.paused.count_ones() as u64);
                }
                if c.resumed != 0 {
                    ctx.count(self.c_paused, c.resumed_cycles);
                }
                if (c.paused | c.resumed) != 0 && ctx.logs() {
                    ctx.log(
                        "pfc",
                        format_args!(
                            "received edge={e} paused={:#04x} resumed={:#04x} (the edge's data of those priorities held / let go)",
                            c.paused, c.resumed
                        ),
                    );
                }
                self.data.paused[self.num_lg + e] = self.pauses[e].mask();
            }
        }
        // PFC mode: the PAXI RX VC buffers crossed a watermark: XOFF / XON to every neighbour.
        let mut pfc_more = false;
        if let Some(p) = &self.pause_in {
            let want = p.get() != 0;
            if want != self.xoff {
                self.xoff = want;
                self.pfc_pending.iter_mut().for_each(|x| *x = Some(want));
            }
            for (e, out) in self.pfc_out.iter().enumerate() {
                let Some(pause) = self.pfc_pending[e] else { continue };
                if out.can_push() {
                    out.push(PfcFrame {
                        prio_mask: self.pfc_mask,
                        pause,
                    });
                    self.pfc_pending[e] = None;
                    ctx.count(if pause { self.c_xoff_sent } else { self.c_xon_sent }, 1);
                    if ctx.logs() {
                        ctx.log(
                            "pfc",
                            format_args!(
                                "{} edge={e} priorities={:#04x} (sent: the PAXI RX buffers crossed a watermark)",
                                if pause { "xoff" } else { "xon" },
                                self.pfc_mask
                            ),
                        );
                    }
                } else {
                    // A full stream wakes us when it drains.
                    pfc_more |= out.space() > 0;
                }
            }
        }
        let d = self.data.pass(now, self.chip, self.num_lg, &self.routes, &self.mcast);
        let c = self.ctrl.pass(now, self.chip, self.num_lg, &self.routes, &[]);
        let r = self.credit.pass(now, self.chip, self.num_lg, &self.routes, &[]);
        ctx.count(self.c_local, d.local);
        ctx.count(self.c_fwd, d.forwarded);
        if d.copies > 0 {
            ctx.count(self.c_copies, d.copies);
        }
        ctx.count(self.c_ctrl, c.moved);
        ctx.count(self.c_credit, r.moved);
        if let Some(p) = d.problem.or(c.problem).or(r.problem) {
            ctx.violation(p);
        }
        if d.more || c.more || r.more || pfc_more {
            Wake::NextCycle
        } else {
            Wake::OnInput
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::{HeaderTags, UInt};

    fn bench(p: Params) -> Harness {
        Harness::new("router", ports(&p), Box::new(move |b| build(&p, b)), 1, 8).unwrap()
    }

    /// A data frame from this chip (0) to chip 1, tagged with `pcp` if given.
    fn frame(pcp: Option<u64>, seq: u32) -> DataFrame {
        DataFrame {
            src: 0,
            dst: 1,
            frame_seq: seq,
            hdr: HeaderTags {
                pcp: pcp.map(UInt::wrap),
                ..HeaderTags::default()
            },
            ..DataFrame::default()
        }
    }

    #[test]
    fn a_pfc_pause_holds_only_the_data_of_the_priority_it_names() {
        let mut h = bench(Params {
            pfc: true,
            ..Params::default()
        });
        assert!(h.push(
            "e0_pfc_in",
            PfcFrame {
                prio_mask: 1 << 2,
                pause: true
            }
        ));
        h.steps(2).unwrap();
        // Untagged: the switch's default priority (2), paused; PCP 3: another priority, passes.
        assert!(h.push("lg0_tx", frame(None, 1)));
        assert!(h.push("lg1_tx", frame(Some(3), 2)));
        h.steps(3).unwrap();
        let mut out = Vec::new();
        while let Some(f) = h.pop::<DataFrame>("e0_req_out") {
            out.push(f.frame_seq);
        }
        assert_eq!(out, [2], "only the PCP 3 frame leaves while priority 2 is paused");
        assert!(h.push(
            "e0_pfc_in",
            PfcFrame {
                prio_mask: 1 << 2,
                pause: false
            }
        ));
        h.steps(3).unwrap();
        assert_eq!(
            h.pop::<DataFrame>("e0_req_out").map(|f| f.frame_seq),
            Some(1),
            "released by the XON"
        );
        assert_eq!(h.sim().counter("dut.pfc_pauses"), Some(1));
    }

    #[test]
    fn inputs_with_a_message_are_served_from_the_cycles_turn_on() {
        // Default: 8 LGs and one edge, so the data class has 9 inputs and the turn of cycle t
        // starts at input t mod 9. Frames on LGs 2 and 6 both want edge 0 (one per cycle):
        // the first through is the first of the two at or after the turn, wrapping.
        for start in 0..9u64 {
            let mut h = bench(Params::default());
            h.steps(start).unwrap();
            assert!(h.push("lg2_tx", frame(None, 2)));
            assert!(h.push("lg6_tx", frame(None, 6)));
            // Pushed in cycle `start`, seen by the router's pass in `start + 1`.
            let turn = (start + 1) % 9;
            h.steps(4).unwrap();
            let mut out = Vec::new();
            while let Some(f) = h.pop::<DataFrame>("e0_req_out") {
                out.push(f.frame_seq);
            }
            let want = if (3..=6).contains(&turn) { [6, 2] } else { [2, 6] };
            assert_eq!(out, want, "pushed at {start}: the turn starts at input {turn}");
        }
    }

    #[test]
    fn the_chip_names_the_switches_lossless_priorities_in_its_xoff() {
        let mut h = bench(Params {
            pfc: true,
            pfc_priorities: vec![3, 4],
            ..Params::default()
        });
        h.poke("pause", 1u8);
        h.steps(2).unwrap();
        assert_eq!(
            h.pop::<PfcFrame>("e0_pfc_out"),
            Some(PfcFrame {
                prio_mask: 1 << 3 | 1 << 4,
                pause: true
            })
        );
    }
}
