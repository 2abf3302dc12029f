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
//! **Timing.** A message popped at n (it arrived at n) is ready at its output at n + `latency`.
//! Data frames then wait in the output's queue and are serialized one after another at `rate`
//! bytes/ns (the fractional end carried exactly); a frame leaves when its last byte is out
//! (store-and-forward). Control and credits leave at their ready cycle, one per cycle per output.
//!
//! **Buffer and ECN.** Each output holds up to `port_buffer` bytes of data (wire bytes) — a frame
//! beyond it is dropped (tail drop, `drops`; the RC Link's Go-Back-N recovers it). A frame that
//! is ECN-capable (ECT) is marked CE at enqueue with the RED probability of the port's
//! utilization (queued bytes / `port_buffer`; Kmin 0.3, Kmax 0.8, Xorshift64): seed 000 «ECN RED
//! 概率标记（Switch 侧）». The chips' RX then sends CNPs, and their TX cuts its rate (DCQCN).
//!
//! Counters: `data_frames`, `data_bytes`, `ctrl_msgs`, `credit_msgs`, `drops`, `ecn_marks`,
//! `queue_peak_bytes` (largest output queue); per output port k `p{k}_frames`, `p{k}_bytes`
//! (payload), `p{k}_drops`, `p{k}_ecn_marks`, `p{k}_peak_bytes`. Waves: `q_bytes{o}` per output.
//!
//! **Deviations** (issue 9 builds the rest): the crossbar is not modelled here — outputs are
//! queued as if the fabric had full speedup (an output-queued switch); the VOQs, the iSLIP
//! crossbar and the DT shared buffer of `voq_switch` are not yet in this frame path, nor PFC or
//! cut-through; every port has its own buffer.

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
    /// Output port per destination chip (index = chip id); `null` = unreachable.
    pub routes: Vec<Option<u32>>,
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
            routes: vec![Some(0), Some(1)],
            latency: 100,
            rate: ByteRate::new(400, 1).expect("400 B/ns"),
            port_buffer: 4 << 20,
            ecn: true,
            ecn_kmin: 0.3,
            ecn_kmax: 0.8,
        }
    }
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
    /// Data through the ingress pipeline: (ready cycle, frame).
    data_pipe: VecDeque<(Cycle, DataFrame)>,
    /// Data queued for the link: (done cycle once started, frame); started frames first.
    queue: VecDeque<DataFrame>,
    /// Frames being / done serializing: (end cycle, frame).
    on_wire: VecDeque<(Cycle, DataFrame)>,
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
    if let Some(bad) = p.routes.iter().flatten().find(|&&r| r >= p.ports) {
        return Err(format!("routes: port {bad} does not exist (ports = {})", p.ports));
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
    }))
}

impl L2Switch {
    fn route(&self, ctx: &mut Ctx<'_>, dst: ChipId, what: &str) -> Option<usize> {
        match self.p.routes.get(dst as usize).copied().flatten() {
            Some(o) => Some(o as usize),
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
        let ready = now + self.p.latency;
        // Ingress: everything that arrived, into its output's pipeline.
        for k in 0..self.ports.len() {
            if let Some(f) = self.ports[k].req_in.pop() {
                if let Some(o) = self.route(ctx, f.dst, "data frame") {
                    self.ports[o].data_pipe.push_back((ready, f));
                }
            }
            while let Some(m) = self.ports[k].rsp_in.pop() {
                if let Some(o) = self.route(ctx, m.dst, "control message") {
                    self.ports[o].rsp.push_back((ready, m));
                }
            }
            while let Some(m) = self.ports[k].cr_in.pop() {
                if let Some(o) = self.route(ctx, m.dst, "credit return") {
                    self.ports[o].cr.push_back((ready, m));
                }
            }
        }
        let mut next = Cycle::MAX;
        for o in 0..self.ports.len() {
            let port = &mut self.ports[o];
            // Out of the pipeline into the output queue: tail drop, ECN RED at enqueue.
            while port.data_pipe.front().is_some_and(|(t, _)| *t <= now) {
                let (_, mut f) = port.data_pipe.pop_front().expect("front");
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
                port.queue.push_back(f);
            }
            // Serialize: the next frame starts when the link frees (fraction carried).
            while port.clock.free_within(now) && !port.queue.is_empty() && port.on_wire.len() < 2 {
                let f = port.queue.pop_front().expect("non-empty");
                let end = port.clock.start(now, f.wire_bytes() as u64);
                port.on_wire.push_back((end, f));
            }
            if port.on_wire.front().is_some_and(|(t, _)| *t <= now) && port.req_out.can_push() {
                let (_, f) = port.on_wire.pop_front().expect("front");
                port.queued_bytes -= f.wire_bytes() as u64;
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
