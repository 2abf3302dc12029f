//! An L2 switch carrying the chip-to-chip traffic (seed 003 «交换机行为建模»): frames in on a
//! port, a fixed ingress pipeline (parse, classify, MAC-DA lookup), then an output queue per
//! port in the port's buffer, ECN RED marking at enqueue, serialization at the port rate, and
//! out to the chip's PhyLink. Control (ACK/NAK/CNP) and CBFC credit returns travel on their own
//! streams, as they do in the chips' routers, so they never queue behind data (they are the
//! strict-priority class of seed 003's mapping).
//!
//! ```text
//!   e{k}_req_in  : stream<DataFrame> ─┐  ingress: `latency` ns,   ┌─> e{o}_req_out  (serialized at `rate`,
//!   e{k}_rsp_in  : stream<Ctrl>      ─┤  route by dst chip        │    ECN RED at enqueue)
//!   e{k}_cr_in   : stream<CreditMsg> ─┘  (table `routes`)         ├─> e{o}_rsp_out  (one per cycle)
//!                                                                  └─> e{o}_cr_out   (one per cycle)
//!   e{k}_pfc_in  : stream<PfcFrame> (PFC mode) ── pauses port k    e{k}_pfc_out : stream<PfcFrame>
//! ```
//!
//! **Routing.** `routes[d]` names the output for destination chip d: one port, or a list of
//! equal-cost ports (a leaf's uplinks to the spines) over which flows are spread by a hash of
//! (src, dst, LG, QP) — ECMP: one flow's frames take one path and stay in order; a credit
//! return hashes on (src, dst, LG, VC). The system builder fills the table from the topology.
//!
//! **Timing.** A message popped at n (it arrived at n, its last byte in) is ready at its output
//! at n + `latency`. Data frames then wait in the output's queue and are serialized one after
//! another at `rate` bytes/ns (the fractional end carried exactly); a frame leaves when its last
//! byte is out (store-and-forward). With `forwarding: cut_through` a frame is ready at
//! n + `cut_through_latency` (seed 003: a fixed 300–500 ns, whatever the frame's size); if its
//! egress is idle then (nothing queued, the serializer idle for the frame's whole serialization
//! before), its serialization overlapped the pipeline and it leaves at once: residence exactly
//! `cut_through_latency`. If the egress is busy it queues as store-and-forward («Cut-Through 在
//! 出口拥塞时退化为 Store-and-Forward»). Control and credits leave at their ready cycle
//! (n + `latency`), one per cycle per output.
//!
//! **Buffer and ECN.** Each output holds up to `port_buffer` bytes of data (wire bytes) — a frame
//! beyond it is dropped (tail drop, `drops`; the RC Link's Go-Back-N recovers it). A frame that
//! is ECN-capable (ECT) is marked CE at enqueue with the RED probability of the port's
//! utilization (queued bytes / `port_buffer`; Kmin 0.3, Kmax 0.8, Xorshift64): seed 000 «ECN RED
//! 概率标记（Switch 侧）». The chips' RX then sends CNPs, and their TX cuts its rate (DCQCN).
//!
//! **PFC mode** (`pfc: true`; seed 003: PFC and CBFC are exclusive modes, and in PFC mode the
//! switch takes part). Ingress accounting: the data bytes held anywhere in the switch that came
//! in on port k. Above `pfc_xoff` the switch sends an XOFF for the REQ data priority (2) out of
//! port k to the neighbour feeding it; at or below `pfc_xon`, the XON (`e{k}_pfc_out`). An XOFF
//! received on port k (`e{k}_pfc_in`, from the neighbour it sends to) stops port k starting new
//! data frames (one being serialized finishes) until the XON; control and credits are other
//! priorities and keep going. Chips honour PAUSE in their routers, so back-pressure runs hop by
//! hop to the senders' TX. The PFC watchdog (`pfc_watchdog` ns, 0 = off) ignores a pause in force
//! longer than that until its XON (seed 003 «PFC 风险»: deadlock and storm recovery). Nothing is
//! dropped while the buffer holds every ingress's XOFF plus what is in flight during the PAUSE's
//! round trip (headroom; docs/spec-findings.md gives the sizing); beyond it the tail drop still
//! applies and counts. Waves: `pfc{k}` (bit 0 XOFF sent upstream, bit 1 paused by downstream).
//!
//! Counters: `data_frames`, `data_bytes`, `ctrl_msgs`, `credit_msgs`, `drops`, `ecn_marks`,
//! `queue_peak_bytes` (largest output queue), `cut_through_frames`, `residence_min`,
//! `residence_max`, `residence_sum` (cycles from a data frame's arrival to its departure),
//! `pfc_xoff_sent`, `pfc_xon_sent`, `pfc_pauses_received`, `pfc_watchdog_fired`; per port k
//! `p{k}_frames`, `p{k}_bytes` (payload out), `p{k}_drops`, `p{k}_ecn_marks`, `p{k}_peak_bytes`
//! (output queue), `p{k}_cut_through`, `p{k}_ingress_peak_bytes` (data held that came in on k),
//! `p{k}_pfc_xoff` (XOFFs sent out of k), `p{k}_pfc_paused_cycles`. Waves: `q_bytes{o}` per output.
//!
//! **Deviations:** the crossbar is not modelled in this frame path — outputs are queued as if
//! the fabric had full speedup (an output-queued switch; `voq_switch` is the input-queued model
//! with VOQs, iSLIP and the DT shared buffer, used for the switch studies); every port has its
//! own buffer; frames are not parsed by format (the chips' frames are all Standard, ECN-capable
//! when the sender sets ECT) and all data is one class (the chips send REQ data only).

use std::collections::VecDeque;

use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{
    ByteRate, ChipId, CreditMsg, Ctrl, DataFrame, Ecn, PfcChange, PfcFrame, PfcPause, SerializerClock, UInt,
};
use serde::{Deserialize, Serialize};

use super::ecn::RedMarker;

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Ports, 1..=64.
    pub ports: u32,
    /// Output per destination chip (index = chip id): a port, a list of equal-cost ports (ECMP:
    /// a flow is hashed onto one of them), or `null` = unreachable.
    pub routes: Vec<Option<Route>>,
    /// Salt of the ECMP hash (the system builder gives each switch its own, so that two levels
    /// of a fabric do not split flows alike).
    pub ecmp_salt: u64,
    /// `store_and_forward` (the ingress `latency`, then queue and serialize) or `cut_through`
    /// (a frame finds its egress idle: it leaves `cut_through_latency` ns after it arrived,
    /// whatever its size; else it queues as store-and-forward).
    pub forwarding: Forwarding,
    /// Cut-through latency, ns (seed 003: a fixed 300–500 ns).
    pub cut_through_latency: u64,
    /// PFC mode (seed 003: PFC and CBFC are exclusive; in PFC mode the switch takes part).
    pub pfc: bool,
    /// PFC XOFF threshold: data bytes held in the switch that came in on one port; above it an
    /// XOFF for the REQ data priority goes to the neighbour feeding that port.
    pub pfc_xoff: u64,
    /// PFC XON threshold: at or below it, the XON.
    pub pfc_xon: u64,
    /// PFC watchdog, ns (0 = off): a port paused longer than this ignores the pause until the
    /// XON (deadlock / storm recovery, seed 003 «PFC 风险»).
    pub pfc_watchdog: u64,
    /// Ingress pipeline (parse, classify, lookup), ns: seed 003 gives 50–200.
    pub latency: u64,
    /// Port rate, bytes/ns (400 = the chip edges' bandwidth).
    pub rate: ByteRate,
    /// Data buffer per output port, bytes.
    pub port_buffer: u64,
    /// ECN marking on (Standard format).
    pub ecn: bool,
    /// ECN RED Kmin, fraction of the port buffer (0.3).
    pub ecn_kmin: f64,
    /// ECN RED Kmax (0.8).
    pub ecn_kmax: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            ports: 2,
            routes: vec![Some(Route::One(0)), Some(Route::One(1))],
            ecmp_salt: 0,
            forwarding: Forwarding::StoreAndForward,
            cut_through_latency: 300,
            pfc: false,
            pfc_xoff: 65536,
            pfc_xon: 32768,
            pfc_watchdog: 0,
            latency: 100,
            rate: ByteRate::new(400, 1).expect("400 B/ns"),
            port_buffer: 4 << 20,
            ecn: true,
            ecn_kmin: 0.3,
            ecn_kmax: 0.8,
        }
    }
}

/// A route: one port or several equal-cost ports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Route {
    /// One output port.
    One(u32),
    /// Equal-cost output ports; a flow's hash picks one.
    Many(Vec<u32>),
}

impl Route {
    fn ports(&self) -> &[u32] {
        match self {
            Route::One(p) => std::slice::from_ref(p),
            Route::Many(v) => v,
        }
    }
}

/// Forwarding mode (seed 003 «转发模式»).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Forwarding {
    /// Whole frame in, ingress latency, queue, serialize.
    #[default]
    StoreAndForward,
    /// Fixed latency when the egress is idle; store-and-forward when it is busy.
    CutThrough,
}

/// The ECMP hash of a flow key (splitmix64's finalizer): deterministic, well mixed.
fn flow_hash(salt: u64, key: u64) -> u64 {
    let mut z = key ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = Vec::new();
    for k in 0..p.ports.min(64) {
        v.push(PortDecl::stream_in::<DataFrame>(&format!("e{k}_req_in"), 4).doc("data frames in on port k"));
        v.push(PortDecl::stream_in::<Ctrl>(&format!("e{k}_rsp_in"), 8).doc("ACK/NAK/CNP in on port k"));
        v.push(PortDecl::stream_in::<CreditMsg>(&format!("e{k}_cr_in"), 8).doc("credit returns in on port k"));
        v.push(PortDecl::stream_out::<DataFrame>(&format!("e{k}_req_out")).doc("data frames out of port k"));
        v.push(PortDecl::stream_out::<Ctrl>(&format!("e{k}_rsp_out")).doc("ACK/NAK/CNP out of port k"));
        v.push(PortDecl::stream_out::<CreditMsg>(&format!("e{k}_cr_out")).doc("credit returns out of port k"));
        v.push(PortDecl::output::<UInt<32>>(&format!("q_bytes{k}")).doc("data bytes queued at output k"));
        if p.pfc {
            v.push(
                PortDecl::stream_in::<PfcFrame>(&format!("e{k}_pfc_in"), 4)
                    .optional()
                    .doc("PFC frames from the neighbour on port k (PFC mode)"),
            );
            v.push(
                PortDecl::stream_out::<PfcFrame>(&format!("e{k}_pfc_out"))
                    .doc("PFC frames to the neighbour on port k (PFC mode)"),
            );
            v.push(
                PortDecl::output::<UInt<2>>(&format!("pfc{k}"))
                    .doc("PFC on port k: bit 0 XOFF sent upstream, bit 1 paused by downstream"),
            );
        }
    }
    v
}

/// One output port.
struct Port {
    req_in: StreamIn<DataFrame>,
    rsp_in: StreamIn<Ctrl>,
    cr_in: StreamIn<CreditMsg>,
    req_out: StreamOut<DataFrame>,
    rsp_out: StreamOut<Ctrl>,
    cr_out: StreamOut<CreditMsg>,
    q_sig: Out<UInt<32>>,
    /// PFC ports (PFC mode only): frames in, frames out, the state on the waves.
    pfc_io: Option<(StreamIn<PfcFrame>, StreamOut<PfcFrame>, Out<UInt<2>>)>,
    /// An XOFF we sent upstream on this port is in force.
    xoff_sent: bool,
    /// Paused by the downstream neighbour (and since when).
    pause: PfcPause,
    /// The watchdog fired for the pause in force: ignored until the XON.
    watchdog_fired: bool,
    c_xoff: CounterId,
    c_paused: CounterId,
    c_ingress_peak: CounterId,
    /// Data through the ingress pipeline: (ready cycle, arrival cycle, frame).
    data_pipe: VecDeque<(Cycle, Cycle, u8, DataFrame)>,
    /// Data queued for the link: (arrival cycle, input port, frame).
    queue: VecDeque<(Cycle, u8, DataFrame)>,
    /// Frames being / done serializing: (end cycle, arrival cycle, frame).
    on_wire: VecDeque<(Cycle, Cycle, u8, DataFrame)>,
    clock: SerializerClock,
    queued_bytes: u64,
    rsp: VecDeque<(Cycle, Ctrl)>,
    cr: VecDeque<(Cycle, CreditMsg)>,
    /// Per-port counters: frames and payload bytes out, drops, ECN marks, peak queue bytes.
    c_frames: CounterId,
    c_bytes: CounterId,
    c_drops: CounterId,
    c_marks: CounterId,
    c_peak: CounterId,
    c_cut: CounterId,
}

/// The block.
pub struct L2Switch {
    p: Params,
    ports: Vec<Port>,
    /// Data bytes in the switch per input port (PFC's ingress accounting).
    ingress: Vec<u64>,
    c_xoff: CounterId,
    c_xon: CounterId,
    c_pauses_rx: CounterId,
    c_watchdog: CounterId,
    red: Option<RedMarker>,
    c_data: CounterId,
    c_bytes: CounterId,
    c_ctrl: CounterId,
    c_credit: CounterId,
    c_drops: CounterId,
    c_marks: CounterId,
    c_peak: CounterId,
    c_cut: CounterId,
    c_res_min: CounterId,
    c_res_max: CounterId,
    c_res_sum: CounterId,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.ports == 0 || p.ports > 64 {
        return Err(format!("ports = {}: must be in 1..=64", p.ports));
    }
    if p.latency > 1_000_000 {
        return Err(format!("latency = {}: must be in 0..=1000000 ns", p.latency));
    }
    if p.port_buffer == 0 || p.port_buffer > 1 << 36 {
        return Err(format!("port_buffer = {}: must be in 1..=2^36 bytes", p.port_buffer));
    }
    if p.pfc && (p.pfc_xon > p.pfc_xoff || p.pfc_xoff >= p.port_buffer) {
        return Err(format!(
            "pfc: thresholds must satisfy pfc_xon ({}) ≤ pfc_xoff ({}) < port_buffer ({})",
            p.pfc_xon, p.pfc_xoff, p.port_buffer
        ));
    }
    if p.pfc_watchdog > 1_000_000_000 {
        return Err(format!(
            "pfc_watchdog = {}: must be in 0..=1000000000 ns",
            p.pfc_watchdog
        ));
    }
    if p.cut_through_latency > 1_000_000 {
        return Err(format!(
            "cut_through_latency = {}: must be in 0..=1000000 ns",
            p.cut_through_latency
        ));
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
    RedMarker::new(p.ecn_kmin, p.ecn_kmax, 1)?;
    let mut ports = Vec::new();
    for k in 0..p.ports {
        ports.push(Port {
            req_in: b.stream_in(&format!("e{k}_req_in"))?,
            rsp_in: b.stream_in(&format!("e{k}_rsp_in"))?,
            cr_in: b.stream_in(&format!("e{k}_cr_in"))?,
            req_out: b.stream_out(&format!("e{k}_req_out"))?,
            rsp_out: b.stream_out(&format!("e{k}_rsp_out"))?,
            cr_out: b.stream_out(&format!("e{k}_cr_out"))?,
            q_sig: b.output(&format!("q_bytes{k}"))?,
            pfc_io: if p.pfc {
                Some((
                    b.stream_in(&format!("e{k}_pfc_in"))?,
                    b.stream_out(&format!("e{k}_pfc_out"))?,
                    b.output(&format!("pfc{k}"))?,
                ))
            } else {
                None
            },
            xoff_sent: false,
            pause: PfcPause::default(),
            watchdog_fired: false,
            c_xoff: b.counter(&format!("p{k}_pfc_xoff")),
            c_paused: b.counter(&format!("p{k}_pfc_paused_cycles")),
            c_ingress_peak: b.counter(&format!("p{k}_ingress_peak_bytes")),
            data_pipe: VecDeque::new(),
            queue: VecDeque::new(),
            on_wire: VecDeque::new(),
            clock: SerializerClock::new(p.rate),
            queued_bytes: 0,
            rsp: VecDeque::new(),
            cr: VecDeque::new(),
            c_frames: b.counter(&format!("p{k}_frames")),
            c_bytes: b.counter(&format!("p{k}_bytes")),
            c_drops: b.counter(&format!("p{k}_drops")),
            c_marks: b.counter(&format!("p{k}_ecn_marks")),
            c_peak: b.counter(&format!("p{k}_peak_bytes")),
            c_cut: b.counter(&format!("p{k}_cut_through")),
        });
    }
    Ok(Box::new(L2Switch {
        p: p.clone(),
        ingress: vec![0; ports.len()],
        ports,
        c_xoff: b.counter("pfc_xoff_sent"),
        c_xon: b.counter("pfc_xon_sent"),
        c_pauses_rx: b.counter("pfc_pauses_received"),
        c_watchdog: b.counter("pfc_watchdog_fired"),
        red: None,
        c_data: b.counter("data_frames"),
        c_bytes: b.counter("data_bytes"),
        c_ctrl: b.counter("ctrl_msgs"),
        c_credit: b.counter("credit_msgs"),
        c_drops: b.counter("drops"),
        c_marks: b.counter("ecn_marks"),
        c_peak: b.counter("queue_peak_bytes"),
        c_cut: b.counter("cut_through_frames"),
        c_res_min: b.counter("residence_min"),
        c_res_max: b.counter("residence_max"),
        c_res_sum: b.counter("residence_sum"),
    }))
}

impl Port {
    /// The PFC state on the waves: bit 0 XOFF sent upstream, bit 1 paused by downstream.
    fn show_pfc(&mut self) {
        let v = self.xoff_sent as u64 | (self.pause.is_paused() as u64) << 1;
        if let Some((_, _, sig)) = self.pfc_io.as_mut() {
            sig.update(UInt::wrap(v));
        }
    }
}

impl L2Switch {
    /// The output for a message to `dst` of the flow `key`: the route's port, or one of its
    /// equal-cost ports by the flow's hash (so a flow's frames keep their order).
    fn route(&self, ctx: &mut Ctx<'_>, dst: ChipId, key: u64, what: &str) -> Option<usize> {
        match self.p.routes.get(dst as usize).and_then(|r| r.as_ref()) {
            Some(Route::One(o)) => Some(*o as usize),
            Some(Route::Many(v)) => Some(v[(flow_hash(self.p.ecmp_salt, key) % v.len() as u64) as usize] as usize),
            None => {
                ctx.violation(format!("no route to chip {dst} for a {what}"));
                None
            }
        }
    }
}

impl Component for L2Switch {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if self.red.is_none() {
            let seed = ctx.rng().next_u64();
            self.red = Some(RedMarker::new(self.p.ecn_kmin, self.p.ecn_kmax, seed).expect("checked"));
        }
        let cut = self.p.forwarding == Forwarding::CutThrough;
        let ready = now + self.p.latency;
        let data_ready = if cut { now + self.p.cut_through_latency } else { ready };
        // Ingress: everything that arrived, into its output's pipeline. The ECMP key is the
        // flow: (src, dst, LG, QP) for data and control, (src, dst, LG, VC) for credits.
        let key =
            |src: ChipId, dst: ChipId, lg: u8, x: u64| (src as u64) << 48 | (dst as u64) << 32 | (lg as u64) << 24 | x;
        for k in 0..self.ports.len() {
            if let Some(f) = self.ports[k].req_in.pop() {
                let kf = key(f.src, f.dst, f.lg, f.qp.value() as u64);
                if let Some(o) = self.route(ctx, f.dst, kf, "data frame") {
                    self.ingress[k] += f.wire_bytes() as u64;
                    if self.ingress[k] > ctx.counter(self.ports[k].c_ingress_peak) {
                        ctx.set_counter(self.ports[k].c_ingress_peak, self.ingress[k]);
                    }
                    self.ports[o].data_pipe.push_back((data_ready, now, k as u8, f));
                }
            }
            while let Some(m) = self.ports[k].rsp_in.pop() {
                let km = key(m.src, m.dst, m.lg, m.rh.qp().value() as u64);
                if let Some(o) = self.route(ctx, m.dst, km, "control message") {
                    self.ports[o].rsp.push_back((ready, m));
                }
            }
            while let Some(m) = self.ports[k].cr_in.pop() {
                let km = key(m.src, m.dst, m.lg, m.vc as u64);
                if let Some(o) = self.route(ctx, m.dst, km, "credit return") {
                    self.ports[o].cr.push_back((ready, m));
                }
            }
        }
        let mut next = Cycle::MAX;
        for o in 0..self.ports.len() {
            let port = &mut self.ports[o];
            // PFC from the neighbour on this port: XOFF / XON of the REQ data priority.
            while let Some(f) = port.pfc_io.as_mut().and_then(|io| io.0.pop()) {
                match port.pause.receive(f, now) {
                    PfcChange::Paused => ctx.count(self.c_pauses_rx, 1),
                    PfcChange::Resumed(cycles) => {
                        port.watchdog_fired = false;
                        ctx.count(port.c_paused, cycles);
                    }
                    PfcChange::None => {}
                }
            }
            let mut pfc_wake = None;
            if let Some(t) = port.pause.since {
                if self.p.pfc_watchdog > 0 && !port.watchdog_fired {
                    if now >= t + self.p.pfc_watchdog {
                        port.watchdog_fired = true;
                        ctx.count(self.c_watchdog, 1);
                    } else {
                        pfc_wake = Some(t + self.p.pfc_watchdog);
                    }
                }
            }
            let paused = port.pause.is_paused() && !port.watchdog_fired;
            // Out of the pipeline into the output queue: tail drop, ECN RED at enqueue.
            while port.data_pipe.front().is_some_and(|(t, _, _, _)| *t <= now) {
                let (_, arrived, inp, mut f) = port.data_pipe.pop_front().expect("front");
                let wire = f.wire_bytes() as u64;
                if port.queued_bytes + wire > self.p.port_buffer {
                    self.ingress[inp as usize] -= wire;
                    ctx.count(self.c_drops, 1);
                    ctx.count(port.c_drops, 1);
                    continue;
                }
                if self.p.ecn && matches!(f.ecn, Ecn::Ect0 | Ecn::Ect1) {
                    let util = port.queued_bytes as f64 / self.p.port_buffer as f64;
                    if self.red.as_mut().expect("seeded").mark(util) {
                        f.ecn = Ecn::Ce;
                        ctx.count(self.c_marks, 1);
                        ctx.count(port.c_marks, 1);
                    }
                }
                port.queued_bytes += wire;
                if port.queued_bytes > ctx.counter(port.c_peak) {
                    ctx.set_counter(port.c_peak, port.queued_bytes);
                }
                if port.queued_bytes > ctx.counter(self.c_peak) {
                    ctx.set_counter(self.c_peak, port.queued_bytes);
                }
                // Cut-through: an idle egress (nothing queued, the serializer idle since the
                // frame's first byte could have gone) sends it as it comes, ending now.
                if cut && !paused && port.queue.is_empty() && port.clock.finish_by(now, wire) {
                    ctx.count(self.c_cut, 1);
                    ctx.count(port.c_cut, 1);
                    port.on_wire.push_back((now, arrived, inp, f));
                } else {
                    port.queue.push_back((arrived, inp, f));
                }
            }
            // Serialize: the next frame starts when the link frees (fraction carried).
            // (A port paused by PFC starts no new frame; one already serializing finishes.)
            while !paused && port.clock.free_within(now) && !port.queue.is_empty() && port.on_wire.len() < 2 {
                let (arrived, inp, f) = port.queue.pop_front().expect("non-empty");
                let end = port.clock.start(now, f.wire_bytes() as u64);
                port.on_wire.push_back((end, arrived, inp, f));
            }
            if port.on_wire.front().is_some_and(|(t, _, _, _)| *t <= now) && port.req_out.can_push() {
                let (_, arrived, inp, f) = port.on_wire.pop_front().expect("front");
                port.queued_bytes -= f.wire_bytes() as u64;
                self.ingress[inp as usize] -= f.wire_bytes() as u64;
                // Residence: arrival (last byte in) to departure (last byte out), cycles.
                let res = now - arrived;
                if ctx.counter(self.c_data) == 0 || res < ctx.counter(self.c_res_min) {
                    ctx.set_counter(self.c_res_min, res);
                }
                if res > ctx.counter(self.c_res_max) {
                    ctx.set_counter(self.c_res_max, res);
                }
                ctx.count(self.c_res_sum, res);
                ctx.count(self.c_data, 1);
                ctx.count(self.c_bytes, f.payload() as u64);
                ctx.count(port.c_frames, 1);
                ctx.count(port.c_bytes, f.payload() as u64);
                port.req_out.push(f);
            }
            if port.rsp.front().is_some_and(|(t, _)| *t <= now) && port.rsp_out.can_push() {
                let (_, m) = port.rsp.pop_front().expect("front");
                port.rsp_out.push(m);
                ctx.count(self.c_ctrl, 1);
            }
            if port.cr.front().is_some_and(|(t, _)| *t <= now) && port.cr_out.can_push() {
                let (_, m) = port.cr.pop_front().expect("front");
                port.cr_out.push(m);
                ctx.count(self.c_credit, 1);
            }
            port.q_sig.update(UInt::wrap(port.queued_bytes));
            port.show_pfc();
            // When this output next has something to do (a full stream wakes us on its pop).
            for t in [
                port.data_pipe.front().map(|x| x.0),
                port.on_wire.front().map(|x| x.0),
                port.rsp.front().map(|x| x.0),
                port.cr.front().map(|x| x.0),
                (!paused && !port.queue.is_empty()).then(|| port.clock.busy_until_cycle().saturating_sub(1)),
                pfc_wake,
            ]
            .into_iter()
            .flatten()
            {
                next = next.min(t.max(now + 1));
            }
        }
        // PFC to the neighbours: XOFF when a port's ingress bytes pass `pfc_xoff`, XON when they
        // fall to `pfc_xon` (hysteresis, so one crossing sends one frame).
        if self.p.pfc {
            let mask = 1 << PfcFrame::REQ_DATA_PRIO;
            for k in 0..self.ports.len() {
                let held = self.ingress[k];
                let port = &mut self.ports[k];
                let want = if !port.xoff_sent && held > self.p.pfc_xoff {
                    Some(true)
                } else if port.xoff_sent && held <= self.p.pfc_xon {
                    Some(false)
                } else {
                    None
                };
                let Some((_, out, _)) = port.pfc_io.as_mut() else {
                    continue;
                };
                if let Some(pause) = want {
                    if out.can_push() {
                        out.push(PfcFrame { prio_mask: mask, pause });
                        port.xoff_sent = pause;
                        if pause {
                            ctx.count(self.c_xoff, 1);
                            ctx.count(port.c_xoff, 1);
                        } else {
                            ctx.count(self.c_xon, 1);
                        }
                        port.show_pfc();
                    } else {
                        next = next.min(now + 1);
                    }
                }
            }
        }
        Wake::earliest((next != Cycle::MAX).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;
    use hwsim_ports::QpId;

    /// Two ports, chip d behind port d; PFC on with a 1000 ns watchdog.
    fn harness(watchdog: u64) -> Harness {
        let p = Params {
            pfc: true,
            pfc_watchdog: watchdog,
            ..Params::default()
        };
        Harness::new("l2_switch", ports(&p), Box::new(move |b| build(&p, b)), 1, 8).unwrap()
    }

    fn frame(dst: ChipId) -> DataFrame {
        DataFrame {
            src: 0,
            dst,
            qp: QpId::new(1).unwrap(),
            npkts: 1,
            frame_bytes: 64,
            max_payload: 1344,
            pkt_ovhd: 50,
            ..Default::default()
        }
    }

    /// Steps until a data frame leaves port 1 (or `limit`); returns the cycle.
    fn out_at(h: &mut Harness, limit: u64) -> Option<u64> {
        while h.now() < limit {
            h.step().unwrap();
            if h.pop::<DataFrame>("e1_req_out").is_some() {
                return Some(h.now());
            }
        }
        None
    }

    fn pfc(pause: bool) -> PfcFrame {
        PfcFrame {
            prio_mask: 1 << PfcFrame::REQ_DATA_PRIO,
            pause,
        }
    }

    #[test]
    fn a_paused_port_holds_its_data_until_the_xon() {
        let mut h = harness(0);
        assert!(h.push("e1_pfc_in", pfc(true)));
        h.step().unwrap();
        assert!(h.push("e0_req_in", frame(1)));
        assert_eq!(out_at(&mut h, 500), None, "paused: nothing leaves port 1");
        assert!(h.push("e1_pfc_in", pfc(false)));
        let t = out_at(&mut h, 1000).expect("released by the XON");
        assert!((500..510).contains(&t), "leaves right after the XON, at {t}");
        assert_eq!(h.sim().counter("dut.pfc_pauses_received"), Some(1));
        assert_eq!(h.sim().counter("dut.pfc_watchdog_fired"), Some(0));
    }

    #[test]
    fn the_watchdog_ignores_a_pause_that_lasts_too_long() {
        let mut h = harness(1000);
        assert!(h.push("e1_pfc_in", pfc(true)));
        h.step().unwrap();
        assert!(h.push("e0_req_in", frame(1)));
        // Paused at 1 (popped then): the watchdog fires at 1001 and the frame goes.
        let t = out_at(&mut h, 5000).expect("the watchdog releases the port");
        assert!((1001..1010).contains(&t), "left at {t}");
        assert_eq!(h.sim().counter("dut.pfc_watchdog_fired"), Some(1));
    }

    #[test]
    fn ingress_above_xoff_sends_one_xoff_then_one_xon() {
        let p = Params {
            pfc: true,
            pfc_xoff: 1000,
            pfc_xon: 200,
            ..Params::default()
        };
        let mut h = Harness::new("l2_switch", ports(&p), Box::new(move |b| build(&p, b)), 1, 8).unwrap();
        // Port 1 paused, so what comes in on port 0 stays: 114 B a frame, XOFF after the 9th.
        assert!(h.push("e1_pfc_in", pfc(true)));
        let mut got = Vec::new();
        for i in 0..12 {
            if i > 0 {
                assert!(h.push("e0_req_in", frame(1)));
            }
            h.step().unwrap();
            while let Some(f) = h.pop::<PfcFrame>("e0_pfc_out") {
                got.push((h.now(), f.pause));
            }
        }
        assert_eq!(got.len(), 1, "one XOFF: {got:?}");
        assert!(got[0].1);
        assert!(h.push("e1_pfc_in", pfc(false)));
        for _ in 0..400 {
            h.step().unwrap();
            while let Some(f) = h.pop::<PfcFrame>("e0_pfc_out") {
                got.push((h.now(), f.pause));
            }
            while h.pop::<DataFrame>("e1_req_out").is_some() {}
        }
        assert_eq!(
            got.iter().map(|g| g.1).collect::<Vec<_>>(),
            vec![true, false],
            "{got:?}"
        );
        assert_eq!(h.sim().counter("dut.p0_pfc_xoff"), Some(1));
    }
}
