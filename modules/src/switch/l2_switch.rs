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
//! Counters: `data_frames`, `data_bytes`, `ctrl_msgs`, `credit_msgs`, `drops`, `ecn_marks`,
//! `queue_peak_bytes` (largest output queue), `cut_through_frames`, `residence_min`,
//! `residence_max`, `residence_sum` (cycles from a data frame's arrival to its departure);
//! per output port k `p{k}_frames`, `p{k}_bytes` (payload), `p{k}_drops`, `p{k}_ecn_marks`,
//! `p{k}_peak_bytes`, `p{k}_cut_through`. Waves: `q_bytes{o}` per output.
//!
//! **Deviations:** the crossbar is not modelled in this frame path — outputs are queued as if
//! the fabric had full speedup (an output-queued switch; `voq_switch` is the input-queued model
//! with VOQs, iSLIP and the DT shared buffer, used for the switch studies); every port has its
//! own buffer; frames are not parsed by format (the chips' frames are all Standard, ECN-capable
//! when the sender sets ECT) and all data is one class (the chips send REQ data only).

use std::collections::VecDeque;

use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{ByteRate, ChipId, CreditMsg, Ctrl, DataFrame, Ecn, SerializerClock, UInt};
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
    /// Data through the ingress pipeline: (ready cycle, arrival cycle, frame).
    data_pipe: VecDeque<(Cycle, Cycle, DataFrame)>,
    /// Data queued for the link: (arrival cycle, frame).
    queue: VecDeque<(Cycle, DataFrame)>,
    /// Frames being / done serializing: (end cycle, arrival cycle, frame).
    on_wire: VecDeque<(Cycle, Cycle, DataFrame)>,
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
        ports,
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
                    self.ports[o].data_pipe.push_back((data_ready, now, f));
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
            // Out of the pipeline into the output queue: tail drop, ECN RED at enqueue.
            while port.data_pipe.front().is_some_and(|(t, _, _)| *t <= now) {
                let (_, arrived, mut f) = port.data_pipe.pop_front().expect("front");
                let wire = f.wire_bytes() as u64;
                if port.queued_bytes + wire > self.p.port_buffer {
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
                if cut && port.queue.is_empty() && port.clock.finish_by(now, wire) {
                    ctx.count(self.c_cut, 1);
                    ctx.count(port.c_cut, 1);
                    port.on_wire.push_back((now, arrived, f));
                } else {
                    port.queue.push_back((arrived, f));
                }
            }
            // Serialize: the next frame starts when the link frees (fraction carried).
            while port.clock.free_within(now) && !port.queue.is_empty() && port.on_wire.len() < 2 {
                let (arrived, f) = port.queue.pop_front().expect("non-empty");
                let end = port.clock.start(now, f.wire_bytes() as u64);
                port.on_wire.push_back((end, arrived, f));
            }
            if port.on_wire.front().is_some_and(|(t, _, _)| *t <= now) && port.req_out.can_push() {
                let (_, arrived, f) = port.on_wire.pop_front().expect("front");
                port.queued_bytes -= f.wire_bytes() as u64;
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
            // When this output next has something to do (a full stream wakes us on its pop).
            for t in [
                port.data_pipe.front().map(|x| x.0),
                port.on_wire.front().map(|x| x.0),
                port.rsp.front().map(|x| x.0),
                port.cr.front().map(|x| x.0),
                (!port.queue.is_empty()).then(|| port.clock.busy_until_cycle().saturating_sub(1)),
            ]
            .into_iter()
            .flatten()
            {
                next = next.min(t.max(now + 1));
            }
        }
        Wake::earliest((next != Cycle::MAX).then_some(next))
    }
}
