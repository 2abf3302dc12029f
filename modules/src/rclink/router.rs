//! A chip's port mux: it joins the chip's link groups to its edges, and forwards by routing table
//! (seed 000 «Relay 芯片处理»: a relay chip forwards without any RC Link processing).
//!
//! ```text
//!   lg{k}_tx   (DataFrame from MAC k) ─┐                  ┌─> e{e}_req_out (to PhyLink e)
//!   lg{k}_ctrl (Ctrl from RX k)       ─┤                  ├─> e{e}_rsp_out
//!   lg{k}_cr   (CreditMsg from RX k)  ─┤    [ router ]    ├─> e{e}_cr_out
//!   e{e}_req_in / e{e}_rsp_in / e{e}_cr_in ┤              ├─> lg{k}_rx     (DataFrame to RX cap k)
//!     (from the PhyLink into this chip)   ─┘              ├─> lg{k}_ack    (Ctrl to TX k)
//!                                                          └─> lg{k}_credit (CreditMsg to TX k)
//! ```
//! A message for this chip goes to its LG (`msg.lg`); any other goes to the edge the routing
//! table gives for `msg.dst` (shortest paths, computed at elaboration). Three classes (data,
//! control, credit) use separate streams end to end, so control never waits behind data.
//! Each output takes one message per cycle; inputs are served in a rotating order (by cycle) so
//! no input starves; a blocked head waits in its input stream (back-pressure).
//! Latency: 1 cycle (popped at n, pushed at n, visible downstream at n+1).
//!
//! PFC (seed 003 «PFC 模式»; wired only when the switches run PFC): an XOFF arriving on
//! `e{e}_pfc_in` for the REQ data priority (2) stops data leaving on edge e until the XON; the
//! blocked frames wait in their input streams, so the back-pressure reaches the MAC and the TX
//! (control and credits are other priorities and keep flowing). The chip does not send PFC
//! itself: its RX buffer watermarks belong to the PAXI RX buffers, not modelled yet.
//! Counters: `data_local`, `data_forwarded`, `ctrl_msgs`, `credit_msgs`, `pfc_pauses` (XOFFs
//! received), `pfc_paused_cycles` (edge-cycles spent paused, counted at each XON).

use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, PortDecl, StreamIn, StreamOut, Value, Wake};
use hwsim_ports::{ChipId, CreditMsg, Ctrl, DataFrame, LgId, PfcChange, PfcFrame, PfcPause};
use serde::{Deserialize, Serialize};

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
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            num_lg: 8,
            edges: 1,
            routes: vec![None, Some(0)],
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
    }
    v
}

/// Where a message goes.
trait Routed {
    fn dst(&self) -> ChipId;
    fn lg(&self) -> LgId;
}
impl Routed for DataFrame {
    fn dst(&self) -> ChipId {
        self.dst
    }
    fn lg(&self) -> LgId {
        self.lg
    }
}
impl Routed for Ctrl {
    fn dst(&self) -> ChipId {
        self.dst
    }
    fn lg(&self) -> LgId {
        self.lg
    }
}
impl Routed for CreditMsg {
    fn dst(&self) -> ChipId {
        self.dst
    }
    fn lg(&self) -> LgId {
        self.lg
    }
}

/// One message class: its inputs (LGs then edges) and outputs (LGs then edges).
struct Class<T: Value + Routed> {
    inputs: Vec<StreamIn<T>>,
    outputs: Vec<StreamOut<T>>,
    used: Vec<bool>,
    /// Outputs closed by a PFC pause (edges of the data class only).
    paused: Vec<bool>,
}

/// Outcome of one pass over a class.
#[derive(Default)]
struct Pass {
    local: u64,
    forwarded: u64,
    moved: u64,
    more: bool,
    problem: Option<String>,
}

impl<T: Value + Routed> Class<T> {
    fn target(&self, m: &T, me: ChipId, num_lg: usize, routes: &[Option<u32>]) -> Result<usize, String> {
        if m.dst() == me {
            let k = m.lg() as usize;
            if k >= num_lg {
                return Err(format!("message for LG {k}, chip has {num_lg}: {m:?}"));
            }
            Ok(k)
        } else {
            match routes.get(m.dst() as usize).copied().flatten() {
                Some(e) => Ok(num_lg + e as usize),
                None => Err(format!("no route to chip {}: {m:?}", m.dst())),
            }
        }
    }

    fn pass(&mut self, now: u64, me: ChipId, num_lg: usize, routes: &[Option<u32>]) -> Pass {
        let mut r = Pass::default();
        self.used.iter_mut().for_each(|u| *u = false);
        let n = self.inputs.len();
        if n == 0 {
            return r;
        }
        // Rotate the service order with time, so every input gets first pick in turn.
        let start = (now % n as u64) as usize;
        for i in 0..n {
            let ii = (start + i) % n;
            let Some(head) = self.inputs[ii].peek().map(|m| m.clone()) else {
                continue;
            };
            let o = match self.target(&head, me, num_lg, routes) {
                Ok(o) => o,
                Err(e) => {
                    r.problem.get_or_insert(e);
                    continue;
                }
            };
            if !self.used[o] && !self.paused[o] && self.outputs[o].can_push() {
                let m = self.inputs[ii].pop().expect("peeked");
                self.outputs[o].push(m);
                self.used[o] = true;
                r.moved += 1;
                if o < num_lg {
                    r.local += 1;
                } else {
                    r.forwarded += 1;
                }
            }
        }
        // More to do next cycle if some input still holds a message whose output will have room.
        for inp in &self.inputs {
            if let Some(m) = inp.peek() {
                if let Ok(o) = self.target(&*m, me, num_lg, routes) {
                    let room = self.outputs[o].space() as usize;
                    if !self.paused[o] && room > usize::from(self.used[o]) {
                        r.more = true;
                    }
                }
            }
        }
        r
    }
}

/// The block.
pub struct Router {
    chip: ChipId,
    num_lg: usize,
    routes: Vec<Option<u32>>,
    data: Class<DataFrame>,
    ctrl: Class<Ctrl>,
    credit: Class<CreditMsg>,
    pfc_in: Vec<StreamIn<PfcFrame>>,
    pauses: Vec<PfcPause>,
    c_pauses: CounterId,
    c_paused: CounterId,
    c_local: CounterId,
    c_fwd: CounterId,
    c_ctrl: CounterId,
    c_credit: CounterId,
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
    };
    let mut ctrl = Class {
        inputs: vec![],
        outputs: vec![],
        used: vec![],
        paused: vec![],
    };
    let mut credit = Class {
        inputs: vec![],
        outputs: vec![],
        used: vec![],
        paused: vec![],
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
    for e in 0..p.edges {
        pfc_in.push(b.stream_in(&format!("e{e}_pfc_in"))?);
        data.inputs.push(b.stream_in(&format!("e{e}_req_in"))?);
        ctrl.inputs.push(b.stream_in(&format!("e{e}_rsp_in"))?);
        credit.inputs.push(b.stream_in(&format!("e{e}_cr_in"))?);
        data.outputs.push(b.stream_out(&format!("e{e}_req_out"))?);
        ctrl.outputs.push(b.stream_out(&format!("e{e}_rsp_out"))?);
        credit.outputs.push(b.stream_out(&format!("e{e}_cr_out"))?);
    }
    let outs = p.num_lg as usize + p.edges as usize;
    data.used = vec![false; outs];
    ctrl.used = vec![false; outs];
    credit.used = vec![false; outs];
    data.paused = vec![false; outs];
    ctrl.paused = vec![false; outs];
    credit.paused = vec![false; outs];
    Ok(Box::new(Router {
        chip: p.chip,
        num_lg: p.num_lg as usize,
        routes: p.routes.clone(),
        data,
        ctrl,
        credit,
        pfc_in,
        pauses: vec![PfcPause::default(); p.edges as usize],
        c_pauses: b.counter("pfc_pauses"),
        c_paused: b.counter("pfc_paused_cycles"),
        c_local: b.counter("data_local"),
        c_fwd: b.counter("data_forwarded"),
        c_ctrl: b.counter("ctrl_msgs"),
        c_credit: b.counter("credit_msgs"),
    }))
}

impl Component for Router {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // PFC from the neighbours: XOFF / XON of the REQ data priority close / open an edge.
        for e in 0..self.pfc_in.len() {
            while let Some(f) = self.pfc_in[e].pop() {
                match self.pauses[e].receive(f, now) {
                    PfcChange::Paused => ctx.count(self.c_pauses, 1),
                    PfcChange::Resumed(cycles) => ctx.count(self.c_paused, cycles),
                    PfcChange::None => {}
                }
                self.data.paused[self.num_lg + e] = self.pauses[e].is_paused();
            }
        }
        let d = self.data.pass(now, self.chip, self.num_lg, &self.routes);
        let c = self.ctrl.pass(now, self.chip, self.num_lg, &self.routes);
        let r = self.credit.pass(now, self.chip, self.num_lg, &self.routes);
        ctx.count(self.c_local, d.local);
        ctx.count(self.c_fwd, d.forwarded);
        ctx.count(self.c_ctrl, c.moved);
        ctx.count(self.c_credit, r.moved);
        if let Some(p) = d.problem.or(c.problem).or(r.problem) {
            ctx.violation(p);
        }
        if d.more || c.more || r.more {
            Wake::NextCycle
        } else {
            Wake::OnInput
        }
    }
}
