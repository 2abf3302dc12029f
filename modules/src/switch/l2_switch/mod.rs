//! An L2 switch carrying the chip-to-chip traffic (seed 003 «交换机行为建模»): frames in on a
//! port, a fixed ingress pipeline (parse, classify, MAC-DA lookup), then a virtual output queue
//! per (input, output) in a shared buffer under Dynamic Threshold, a crossbar matched by iSLIP
//! (or PIM, or input FIFOs), ECN RED marking at enqueue, serialization at the port rate, and out
//! to the chip's PhyLink. Control (ACK/NAK/CNP) and CBFC credit returns travel on their own
//! streams, as they do in the chips' routers, so they never queue behind data (they are the
//! strict-priority class of seed 003's mapping).
//!
//! ```text
//!   e{k}_req_in  : stream<DataFrame> ─┐  ingress: `latency` ns,  VOQ[k][o] ─ crossbar ─┬─> e{o}_req_out
//!   e{k}_rsp_in  : stream<Ctrl>      ─┤  route by dst chip       (DT buffer) (iSLIP)   │   (serialized at `rate`)
//!   e{k}_cr_in   : stream<CreditMsg> ─┘  (table `routes`)                              ├─> e{o}_rsp_out (one per cycle)
//!                                                                                      └─> e{o}_cr_out  (one per cycle)
//!   e{k}_pfc_in  : stream<PfcFrame> (PFC mode) ── pauses port k    e{k}_pfc_out : stream<PfcFrame>
//! ```
//!
//! **Nodes.** `l2_switch` is a composite ([`expand`]): `ingress` ([`ingress`], `switch_ingress`:
//! per input the lookup and the classification, handed on combinationally in the cycle of
//! arrival as `fwd{k}` {outs, level, prio, frame}, `fwd_ctrl{k}`, `fwd_cr{k}`), `core` (this block,
//! `l2_switch_core`: the pipeline delay, the buffer, the VOQs, the egress, PFC's accounting),
//! `pfc` ([`pfc`], `switch_pfc`: the pauses received with their watchdog, shown to the core as
//! `paused{k}` (a mask of priorities) in the cycle; XOFF / XON from the `ingress_bytes{k}_p{q}`
//! the core shows after its departures, in the same cycle) and, with
//! `fabric: voq`, `alloc` ([`alloc`], `switch_alloc`: the allocators and their passes). The
//! core shows each cycle's crossbar requests in its process 0 (`alloc_req{i}`,
//! `alloc_outputs`), the allocator matches in the same cycle, and the core's process 1 takes
//! the grants (`alloc_grant{i}`) and runs the egress: the request → grant → dequeue of the RTL
//! within one cycle, the timing of the fused switch. The core counts in the switch's scope and
//! draws the switch's random stream (ECN RED), so reports keep their names and figures.
//!
//! **Routing.** `routes[d]` names the output for destination chip d: one port, or a list of
//! equal-cost ports (a leaf's uplinks to the spines) over which flows are spread by a hash of
//! (src, dst, LG, QP) — ECMP: one flow's frames take one path and stay in order; a credit
//! return hashes on (src, dst, LG, VC). The system builder fills the table from the topology.
//! A TYPE2 (multicast) frame to a group address (`MCAST_BIT | g`) is replicated at ingress:
//! `mcast[g]` lists the ports of the group's tree, and a copy enters each one's pipeline, then
//! queues, is admitted (DT), marked and counted like any frame (`mcast_copies` counts the copies
//! beyond the first; a shared-memory switch would hold one copy with a reference count, hwsim
//! charges the buffer per copy).
//!
//! **Ingress** (seed 003 «入口处理», «优先级分类»; the `ingress` node, see its header). The
//! pipeline parses the frame's header
//! (`DataFrame.hdr`: format, VLAN PCP, DSCP) and classifies it: `trust: pcp` takes the VLAN
//! tag's PCP, `trust: dscp` the DSCP's class selector (DSCP >> 3, Standard only: the AFH
//! formats have no IP header, and fall back to their PCP); a frame without the field gets the
//! port's `default_priority` (2, the REQ data class). The priority's VOQ level is `tc_map[p]`:
//! by default priorities 0–3 are levels 0–3 (seed 003's VOQ mapping: 3 ACK+CNP, 2 REQ data, 1
//! RSP, 0 TYPE2/3) and 4–7 join level 3; seed 003's PFC table (REQ data at PCP 3~4) is the
//! preset configs/seed003_pfc_priorities.yaml (docs/spec-findings.md finding 16). The chips tag
//! PAXI responses (R, B) with `rclink_tx.rsp_priority` (1), their requests with `data_priority`
//! (2), in the DSCP class selector and, if tagged, the PCP. (The system config trusts the PCP,
//! which the chips' untagged frames lack, so responses share the data's level unless it is
//! told otherwise: they share its PSN sequence too; docs/spec-findings.md finding 10.)
//!
//! **Fabric** (`fabric: voq`, the default; seed 003 «VOQ 架构», «iSLIP 调度», «共享缓冲池与 DT
//! 算法»). A frame out of the ingress pipeline joins VOQ[level][input][output] if the shared `buffer`
//! has room and the queue holds fewer bytes than `dt_alpha` × the free buffer (or fewer than its
//! static `reserve`); otherwise it is dropped (`drops`, `dt_drops`). Every cycle the allocator
//! (`islip` with `iterations` 1–4, `pim`, or `fifo`: one queue per input and level, the
//! head-of-line baseline) matches the inputs not crossing to the outputs free to start a frame
//! (serializer free within the cycle; not paused, for the paused priority), level by level, each
//! level with its own allocator, each among the inputs and outputs the earlier ones left (seed
//! 003 «优先级感知调度», scheme A). Level 3 matches first and level 0 last (strict priority);
//! levels 2 (REQ data) and 1 (RSP) share each output by weighted round robin in bytes (seed 003
//! «推荐的 PAXI 出口调度»: SP for ACK/CNP, WRR for REQ vs RSP): while both hold frames for an
//! output, the one behind its share (`wrr_req` : `wrr_rsp`, 8 : 8) matches there first, and
//! the other may take the output if the first leaves it. The share is kept as a per-output
//! balance, `wrr_rsp` × REQ bytes − `wrr_req` × RSP bytes sent while both contend (RSP first
//! when it is > 0), reset when either level has nothing for the output (as deficit round robin
//! forgets an empty queue's deficit) and clamped at 32 KiB times the larger weight, so a level
//! that could not be matched (its input busy elsewhere) catches up by about eight 4 KiB frames
//! at most (even weights). Bytes, not frames, so the weights are shares of bandwidth whatever
//! the frame sizes (a packed B-response flit is tens of bytes, an R or W frame up to 4 KiB).
//! The WRR costs nothing while level 1 or 2 is empty (two comparisons a cycle). The crossbar
//! is frame-based: a matched frame crosses whole, at the port rate, holding its input and its
//! output until its last byte is out — the crossing is the egress serialization (speedup 1),
//! and the frame leaves when it ends. The iSLIP pointers move as seed 003 says (grant pointer
//! only on an accepted grant, to one past the input; accept pointer to one past the output;
//! first iteration only). `fabric: output_queued` instead gives each output a queue of
//! `port_buffer` bytes, as if the crossbar had full speedup.
//!
//! **Timing.** A message popped at n (it arrived at n, its last byte in) is ready at n +
//! `latency` (a data frame at n + `latency` + `crossbar_latency`: seed 003's T_ingress and
//! T_crossbar; the latter 0 by default, 30 in the seed-003 presets
//! configs/seed003_switch_{100g,200g,400g}.yaml; docs/switch-validation.md «An idle switch's
//! latency» decomposes both modes per frame size). A data frame is then queued, matched (at once if its input and output are free)
//! and serialized at `rate` bytes/ns (the fractional end carried exactly); it leaves when its last
//! byte is out (store-and-forward). With `forwarding: cut_through` a frame is ready at n +
//! `cut_through_latency` (seed 003: a fixed 300–500 ns, whatever the frame's size); if it is
//! matched then and its egress was idle for the frame's whole serialization before, its
//! serialization overlapped the pipeline and it leaves at once: residence exactly
//! `cut_through_latency`. Otherwise it queues as store-and-forward («Cut-Through 在出口拥塞时退化为
//! Store-and-Forward»). Control and credits leave at their ready cycle (n + `latency`), one per
//! cycle per output.
//!
//! **ECN.** A Standard frame (the only format with an IP header, so an ECN field) that is
//! ECN-capable (ECT) is marked CE at enqueue with the RED probability of
//! its egress's utilization: the data bytes held for that output (queued in any VOQ, or crossing)
//! / `port_buffer` (Kmin 0.3, Kmax 0.8, Xorshift64): seed 000 «ECN RED 概率标记（Switch 侧）»,
//! seed 003 «当出口队列深度超过 ECN 阈值时». The chips' RX then sends CNPs, and their TX cuts its
//! rate (DCQCN). With `fabric: output_queued`, `port_buffer` is also the output queue's size.
//!
//! **PFC mode** (`pfc: true`; seed 003: PFC and CBFC are exclusive modes, and in PFC mode the
//! switch takes part; the `pfc` node, see its header, with the accounting in the core). Ingress accounting: the data bytes held anywhere in the switch that came
//! in on port k, per lossless priority (`pfc_priorities`, [2] by default: the REQ data
//! priority; seed 003 «交换机需要为每个 PFC 优先级维护独立的入口/出口队列»). Above the XOFF level
//! the switch sends an XOFF for that priority out of port k to the neighbour feeding it; at or
//! below the XON level, the XON (`e{k}_pfc_out`; one frame per cycle and direction names every
//! priority that crossed). Data of the other priorities is not accounted and never paused
//! upstream (it is lossy: the tail drop is all that bounds it).
//! The levels are fractions of the queue depth `port_buffer`, as seed 003 gives them
//! (`pfc_threshold` 85 %; XON at `pfc_xon_threshold` 50 %, seed 002's depth/2, seed 003 having
//! none), or absolute bytes (`pfc_xoff`, `pfc_xon`). Departure: seed 003's switch sends PFC when
//! its own egress queue passes the threshold; hwsim measures each ingress's bytes against it,
//! which names the neighbour to pause (docs/spec-findings.md finding 15). An XOFF for
//! priority p received on port k (`e{k}_pfc_in`, from the neighbour it sends to) stops port k
//! starting new data frames of p's VOQ level (`tc_map[p]`; one being serialized finishes)
//! until p's XON; the other levels, control and credits keep going. Chips honour PAUSE in their
//! routers, per priority (a data frame is held while the priority the switch would give it is
//! paused), so back-pressure runs hop by hop to the senders' TX. The PFC watchdog (`pfc_watchdog` ns, 0 = off) ignores a pause in force
//! longer than that until its XON (seed 003 «PFC 风险»: deadlock and storm recovery). Nothing is
//! dropped while the buffer holds every ingress's XOFF plus what is in flight during the PAUSE's
//! round trip (headroom; docs/spec-findings.md gives the sizing); beyond it the tail drop still
//! applies and counts. Waves: `pfc{k}` (bit 0 XOFF sent upstream, bit 1 paused by downstream).
//!
//! Counters: `data_frames`, `data_bytes`, `ctrl_msgs`, `credit_msgs`, `drops`, `ecn_marks`,
//! `queue_peak_bytes` (most data held for one output), `cut_through_frames`, `residence_min`,
//! `residence_max`, `residence_sum` (cycles from a data frame's arrival to its departure),
//! `pfc_xoff_sent`, `pfc_xon_sent`, `pfc_pauses_received`, `pfc_watchdog_fired`; with `voq`
//! `crossbar_matches`, `buffer_peak_bytes` (shared buffer), `voq_peak_bytes` (largest VOQ),
//! `dt_drops`; per level l `class{l}_frames`, `class{l}_bytes` (payload out),
//! `class{l}_residence_max`; per port k `p{k}_frames`, `p{k}_bytes` (payload out), `p{k}_drops`,
//! `p{k}_ecn_marks`, `p{k}_peak_bytes` (held for output k), `p{k}_cut_through`,
//! `p{k}_residence_p50` / `_p99` / `_p999` (nearest-rank percentiles of the residences of the
//! frames that left on k, exact: every residence is kept, published when the run ends),
//! `p{k}_ingress_peak_bytes` (data held that came in on k), `p{k}_pfc_xoff` (XOFFs sent out of
//! k), `p{k}_pfc_paused_cycles`. Waves: `q_bytes{o}` (held for output o); with `voq`
//! `in_bytes{i}` (in input i's VOQs), `gptr{o}`, `aptr{i}` (the REQ data level's allocator),
//! `rsp_first{o}` (the WRR gives output o to RSP first this cycle: both levels hold frames for
//! it and REQ is ahead of its share), `matches` (transfers started this cycle), `buffer_bytes`.
//!
//! **Deviations:** the egress has no queue of its own: a frame crosses the crossbar at the port
//! rate into the serializer (no speedup), so the egress's strict priority and WRR between REQ and
//! RSP are the order in which the levels' allocators match each output (above). An input holding
//! frames of both WRR levels is offered first to its RSP-first outputs (the RSP pass runs before
//! REQ's), so at the input side RSP is slightly favoured. The WRR is deficit-style in bytes where
//! seed 003 suggests plain WRR (frames), and its default weights are even where seed 003 says
//! RSP's may be a little lower (set `wrr_rsp` below `wrr_req`). PFC pauses VOQ levels, not
//! priorities: two priorities `tc_map` puts on one level pause together (seed 003 wants up to
//! 8 priority queues; the VOQs have 4 levels), and with `output_queued` a paused head frame
//! holds its port's one FIFO. The crossbar decides once per cycle, so a
//! frame shorter than a ns after another on one output starts at the next cycle (a 114 B frame:
//! 0.29 ns of serialization, one cycle of wait).
//! `fabric: output_queued` has one FIFO per output (no levels).
//! A multicast frame's copies are separate frames in the fabric: they cross from their input
//! one at a time (no fan-out in one crossing), so a group of n spends n − 1 more port
//! serializations at the switch's input.
//! Defaults that are hwsim's, not a seed's (each parameter's text says why): `port_buffer`
//! 4 MiB (seed 003 estimates 1.75 MB per egress port), `reserve` 0, `pfc_watchdog` 0 (off; the
//! seed gives no timeout). `rate` 400 B/ns is seed 000's edge bandwidth, not seed 003's
//! 100 / 200 / 400 Gb/s ports, and `crossbar_latency` 0 where seed 003 gives T_crossbar
//! 10–50 ns (docs/spec-findings.md, the table of conflicts; the presets
//! configs/seed003_switch_{100g,200g,400g}.yaml set the seed's). With seed 003's figures its
//! own fixed cut-through (300 ns) is slower than its store-and-forward at 400 Gb/s for every
//! PAXI frame (docs/switch-validation.md «An idle switch's latency»).

use hwsim_hw::{Binder, BuildResult, CombOut, Component, CounterDecl, CounterId, Ctx, Cycle, PortDecl, Wake};
use hwsim_ports::{CreditMsg, Ctrl, DataFrame, UInt, XbarGrant, XbarOutputs, XbarRequest};

use super::ecn::RedMarker;

/// The crossbar allocator node (`switch_alloc`).
pub mod alloc;
mod buffer;
mod check;
/// The composite `l2_switch`: its ports and children (the core and the allocator).
mod composite;
/// The ingress node (`switch_ingress`: lookup and classification).
pub mod ingress;
mod output;
mod params;
/// The PFC node (`switch_pfc`: pauses received, the watchdog, XOFF / XON sent).
pub mod pfc;
mod port;
mod voq;

use port::Port;
use voq::Voq;

pub use check::check;
pub use composite::{expand, ports};
pub use params::{Fabric, Forwarding, Params, Route, Trust};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "crossbar_matches",
        "frames",
        "`voq`: frame transfers the crossbar allocator started",
    ),
    CounterDecl::new(
        "buffer_peak_bytes",
        "bytes",
        "`voq`, gauge: most wire bytes held in the shared buffer at once",
    ),
    CounterDecl::new(
        "voq_peak_bytes",
        "bytes",
        "`voq`, gauge: most wire bytes held in one VOQ at once",
    ),
    CounterDecl::new(
        "dt_drops",
        "frames",
        "`voq`: data frames dropped by the shared buffer's Dynamic Threshold rule",
    ),
    CounterDecl::new("data_frames", "frames", "data frames that left the switch"),
    CounterDecl::new(
        "data_bytes",
        "bytes",
        "payload bytes of the data frames that left the switch",
    ),
    CounterDecl::new("ctrl_msgs", "messages", "control messages (ACK/NAK/CNP) sent out"),
    CounterDecl::new("credit_msgs", "messages", "credit returns sent out"),
    CounterDecl::new(
        "drops",
        "frames",
        "data frames tail-dropped at enqueue (output queue full, or DT)",
    ),
    CounterDecl::new("ecn_marks", "frames", "ECT data frames marked CE by RED at enqueue"),
    CounterDecl::new(
        "queue_peak_bytes",
        "bytes",
        "gauge: most data wire bytes held for one output, over all outputs",
    ),
    CounterDecl::new(
        "cut_through_frames",
        "frames",
        "data frames that left cut-through (egress idle when matched)",
    ),
    CounterDecl::new(
        "residence_min",
        "ns",
        "gauge: shortest arrival-to-departure time of a data frame",
    ),
    CounterDecl::new(
        "residence_max",
        "ns",
        "gauge: longest arrival-to-departure time of a data frame",
    ),
    CounterDecl::new(
        "residence_sum",
        "ns",
        "Σ arrival-to-departure times of the data frames that left",
    ),
    CounterDecl::new(
        "class*_frames",
        "frames",
        "data frames of VOQ level * (priority class 0–3) that left",
    ),
    CounterDecl::new(
        "class*_residence_max",
        "ns",
        "gauge: longest residence of a data frame of level * (0–3)",
    ),
    CounterDecl::new(
        "class*_bytes",
        "bytes",
        "payload bytes of the data frames of level * (0–3) that left",
    ),
    CounterDecl::new(
        "p*_ingress_peak_bytes",
        "bytes",
        "gauge: most data wire bytes held that came in on port *",
    ),
    CounterDecl::new(
        "p*_peak_bytes",
        "bytes",
        "gauge: most data wire bytes held for output port *",
    ),
    CounterDecl::new("p*_frames", "frames", "data frames that left on port *"),
    CounterDecl::new(
        "p*_bytes",
        "bytes",
        "payload bytes of the data frames that left on port *",
    ),
    CounterDecl::new(
        "p*_drops",
        "frames",
        "data frames for output port * tail-dropped at enqueue",
    ),
    CounterDecl::new(
        "p*_ecn_marks",
        "frames",
        "data frames for output port * marked CE at enqueue",
    ),
    CounterDecl::new("p*_cut_through", "frames", "data frames that left port * cut-through"),
    CounterDecl::new(
        "p*_residence_p50",
        "ns",
        "median residence (arrival to departure) of the data frames that left on port * (nearest rank; at the end of the run)",
    ),
    CounterDecl::new(
        "p*_residence_p99",
        "ns",
        "99th-percentile residence of the data frames that left on port * (nearest rank; at the end of the run)",
    ),
    CounterDecl::new(
        "p*_residence_p999",
        "ns",
        "99.9th-percentile residence of the data frames that left on port * (nearest rank; at the end of the run)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS, ingress::COUNTERS, pfc::COUNTERS];

/// Port list of the core (`l2_switch_core`): per port the ingress node's decisions in (`fwd*`,
/// combinational) and the switch's outputs, and with `voq` its side of the allocator node's
/// (requests out in process 0, grants in in process 1). The outputs are written by process 1
/// (the egress), the inputs read by process 0 (arrivals).
pub fn core_ports(p: &Params) -> Vec<PortDecl> {
    let mut v = Vec::new();
    for k in 0..p.ports.min(64) {
        v.extend(core_port(p, k));
    }
    v.extend(core_shared(p));
    v
}

/// The core's ports of switch port `k` (see [`core_ports`]).
fn core_port(p: &Params, k: u32) -> Vec<PortDecl> {
    let mut v = Vec::new();
    v.extend(ingress::fwd_inputs(k));
    v.push(
        PortDecl::stream_out::<DataFrame>(&format!("e{k}_req_out"))
            .process(1)
            .doc("data frames out of port k"),
    );
    v.push(
        PortDecl::stream_out::<Ctrl>(&format!("e{k}_rsp_out"))
            .process(1)
            .doc("ACK/NAK/CNP out of port k"),
    );
    v.push(
        PortDecl::stream_out::<CreditMsg>(&format!("e{k}_cr_out"))
            .process(1)
            .doc("credit returns out of port k"),
    );
    v.push(
        PortDecl::output::<UInt<32>>(&format!("q_bytes{k}"))
            .level()
            .doc("data bytes held for output k"),
    );
    if p.fabric == Fabric::Voq {
        v.push(
            PortDecl::output::<UInt<32>>(&format!("in_bytes{k}"))
                .level()
                .doc("data bytes in input k's VOQs"),
        );
        v.push(
            PortDecl::comb_stream_out::<XbarRequest>(&format!("alloc_req{k}"))
                .doc("input k's crossbar requests this cycle, to the allocator"),
        );
        v.push(
            PortDecl::comb_stream_in::<XbarGrant>(&format!("alloc_grant{k}"), 1)
                .process(1)
                .doc("input k's crossbar grant this cycle, from the allocator"),
        );
        v.push(
            PortDecl::output::<UInt<1>>(&format!("rsp_first{k}"))
                .doc("output k's WRR turn is RSP's: level 1 matches before level 2 this cycle"),
        );
    }
    if p.pfc {
        v.extend(pfc::core_side(k, &p.pfc_priorities));
    }
    v
}

/// The core's ports shared by all switch ports (see [`core_ports`]).
fn core_shared(p: &Params) -> Vec<PortDecl> {
    let mut v = Vec::new();
    if p.fabric == Fabric::Voq {
        v.push(
            PortDecl::comb_stream_out::<XbarOutputs>("alloc_outputs")
                .doc("the outputs' state this cycle (free, PFC-paused per level, RSP first), to the allocator"),
        );
        v.push(PortDecl::output::<UInt<7>>("matches").doc("crossbar transfers started this cycle"));
        v.push(
            PortDecl::output::<UInt<32>>("buffer_bytes")
                .level()
                .doc("data bytes in the shared buffer"),
        );
    }
    v
}

/// Priority levels of the VOQs (seed 003's mapping: 3 ACK+CNP, 2 REQ data, 1 RSP, 0 TYPE2/3;
/// priorities 4–7 join level 3).
const LEVELS: usize = 4;

/// The block.
pub struct L2Switch {
    p: Params,
    ports: Vec<Port>,
    /// The VOQ fabric (`fabric: voq`).
    voq: Option<Voq>,
    /// Data bytes in the switch per input port (`p{k}_ingress_peak_bytes`).
    ingress: Vec<u64>,
    /// PFC mode, PFC's ingress accounting: per (input k, lossless priority j) at
    /// `k * pfc_priorities.len() + j`, the data bytes of that priority in the switch that came
    /// in on k, on the waves and to the PFC node (`ingress_bytes{k}_p{q}`).
    held: Vec<u64>,
    held_out: Vec<CombOut<UInt<48>>>,
    /// Per priority p, its index j among the lossless priorities (PFC mode), if it is one.
    lossless: [Option<u8>; 8],
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
    /// Per priority level: data frames out, longest residence, payload bytes out.
    c_class_frames: [CounterId; LEVELS],
    c_class_res: [CounterId; LEVELS],
    c_class_bytes: [CounterId; LEVELS],
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check::check(p)?;
    let voq = if p.fabric == Fabric::Voq {
        Some(Voq::bind(p, b)?)
    } else {
        None
    };
    let mut ports = Vec::new();
    for k in 0..p.ports {
        ports.push(Port::bind(p, k, b)?);
    }
    Ok(Box::new(L2Switch {
        p: p.clone(),
        voq,
        ingress: vec![0; ports.len()],
        held: vec![0; if p.pfc { ports.len() * p.pfc_priorities.len() } else { 0 }],
        held_out: if p.pfc {
            let mut v = Vec::new();
            for k in 0..p.ports {
                for &q in &p.pfc_priorities {
                    v.push(b.comb_output(&pfc::held_name(k, q))?);
                }
            }
            v
        } else {
            Vec::new()
        },
        lossless: {
            let mut m = [None; 8];
            if p.pfc {
                for (j, &q) in p.pfc_priorities.iter().enumerate() {
                    m[q as usize] = Some(j as u8);
                }
            }
            m
        },
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
        c_class_frames: [0, 1, 2, 3].map(|l| b.counter(&format!("class{l}_frames"))),
        c_class_res: [0, 1, 2, 3].map(|l| b.counter(&format!("class{l}_residence_max"))),
        c_class_bytes: [0, 1, 2, 3].map(|l| b.counter(&format!("class{l}_bytes"))),
    }))
}

impl Component for L2Switch {
    /// Process 0: arrivals, PFC received, enqueue, and the crossbar's requests to the allocator.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if self.red.is_none() {
            let seed = ctx.rng().next_u64();
            self.red = Some(RedMarker::new(self.p.ecn_kmin, self.p.ecn_kmax, seed).expect("checked"));
        }
        // Ingress: everything that arrived, into its output's pipeline.
        self.arrivals(ctx, now);
        // Per output: the levels PFC pauses this cycle (the PFC node's priorities through the
        // `tc_map`), then the frames out of the pipeline into their queue.
        for o in 0..self.ports.len() {
            let port = &mut self.ports[o];
            if let Some(i) = &port.paused_in {
                port.paused_levels = self.p.levels_of(i.get().0 as u8);
            }
            self.enqueue(ctx, o, now);
        }
        self.crossbar_request(now);
        // Process 1 follows in this cycle and decides the next wake-up.
        ctx.run_process(1);
        Wake::OnInput
    }

    /// The end of the run: each output's residence percentiles, from every frame that left.
    fn finish(&mut self, ctx: &mut Ctx<'_>) {
        for port in &mut self.ports {
            if let Some(p) = crate::percentile::summarize(&mut port.residences) {
                for (id, v) in port.c_res_pct.iter().zip(p) {
                    ctx.set_counter(*id, v);
                }
            }
        }
    }

    /// Process 1: the allocator's grants, the egress, PFC to the neighbours.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let matched = self.crossbar(ctx, now);
        // A cycle with matches is followed by a tick, so that `matches` shows the next cycle's
        // count (0 or more) as it would when every cycle ticks.
        let mut next = if matched { now + 1 } else { Cycle::MAX };
        for o in 0..self.ports.len() {
            next = next.min(self.egress(ctx, o, now));
        }
        // After the departures: an output they freed may match next cycle.
        if let Some(t) = self.crossbar_wake(now) {
            next = next.min(t);
        }
        if let Some(v) = self.voq.as_mut() {
            v.buffer_sig.update(UInt::wrap(v.total));
        }
        // PFC's accounting, to the PFC node, which sends XOFF / XON from it in this cycle.
        for (out, &held) in self.held_out.iter().zip(&self.held) {
            out.set(UInt::wrap(held));
        }
        // The next wake-up runs the block from process 0 (arrivals due, then the crossbar).
        ctx.run_process_on(0, Wake::earliest((next != Cycle::MAX).then_some(next)));
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests;
