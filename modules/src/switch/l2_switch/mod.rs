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
//! **Ingress** (seed 003 «入口处理», «优先级分类»). The pipeline parses the frame's header
//! (`DataFrame.hdr`: format, VLAN PCP, DSCP) and classifies it: `trust: pcp` takes the VLAN
//! tag's PCP, `trust: dscp` the DSCP's class selector (DSCP >> 3, Standard only: the AFH
//! formats have no IP header, and fall back to their PCP); a frame without the field gets the
//! port's `default_priority` (2, the REQ data class). Priorities 0–3 are VOQ levels 0–3 (seed
//! 003's mapping: 3 ACK+CNP, 2 REQ data, 1 RSP, 0 TYPE2/3); 4–7 join level 3. The chips tag
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
//! `latency`. A data frame is then queued, matched (at once if its input and output are free)
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
//! `queue_peak_bytes` (most data held for one output), `cut_through_frames`, `residence_min`,
//! `residence_max`, `residence_sum` (cycles from a data frame's arrival to its departure),
//! `pfc_xoff_sent`, `pfc_xon_sent`, `pfc_pauses_received`, `pfc_watchdog_fired`; with `voq`
//! `crossbar_matches`, `buffer_peak_bytes` (shared buffer), `voq_peak_bytes` (largest VOQ),
//! `dt_drops`; per level l `class{l}_frames`, `class{l}_bytes` (payload out),
//! `class{l}_residence_max`; per port k `p{k}_frames`, `p{k}_bytes` (payload out), `p{k}_drops`,
//! `p{k}_ecn_marks`, `p{k}_peak_bytes` (held for output k), `p{k}_cut_through`,
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
//! RSP's may be a little lower (set `wrr_rsp` below `wrr_req`). PFC pauses the REQ data level
//! only (the one priority chips and switches send XOFF for): RSP frames keep leaving a paused
//! port, while a chip's router pauses all its data. The crossbar decides once per cycle, so a
//! frame shorter than a ns after another on one output starts at the next cycle (a 114 B frame:
//! 0.29 ns of serialization, one cycle of wait).
//! `fabric: output_queued` has one FIFO per output (no levels).
//! A multicast frame's copies are separate frames in the fabric: they cross from their input
//! one at a time (no fan-out in one crossing), so a group of n spends n − 1 more port
//! serializations at the switch's input.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{
    mcast_group, ByteRate, ChipId, CreditMsg, Ctrl, DataFrame, Ecn, PfcChange, PfcFrame, PfcPause, SerializerClock,
    UInt,
};
use serde::{Deserialize, Serialize};

use super::allocator::{Allocator, AllocatorKind, Matching, Requests};
use super::ecn::RedMarker;

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
    CounterDecl::new(
        "pfc_xoff_sent",
        "frames",
        "PFC XOFF frames sent upstream, all ports (ingress bytes above `pfc_xoff`)",
    ),
    CounterDecl::new(
        "pfc_xon_sent",
        "frames",
        "PFC XON frames sent upstream, all ports (ingress bytes back at `pfc_xon`)",
    ),
    CounterDecl::new(
        "pfc_pauses_received",
        "events",
        "PFC XOFFs received that paused a port's REQ data",
    ),
    CounterDecl::new(
        "mcast_copies",
        "frames",
        "multicast frame copies made at ingress beyond the first",
    ),
    CounterDecl::new(
        "pfc_watchdog_fired",
        "events",
        "pauses ignored by the PFC watchdog after `pfc_watchdog` ns in force",
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
        "cycles",
        "gauge: shortest arrival-to-departure time of a data frame",
    ),
    CounterDecl::new(
        "residence_max",
        "cycles",
        "gauge: longest arrival-to-departure time of a data frame",
    ),
    CounterDecl::new(
        "residence_sum",
        "cycles",
        "Σ arrival-to-departure times of the data frames that left",
    ),
    CounterDecl::new(
        "class*_frames",
        "frames",
        "data frames of VOQ level * (priority class 0–3) that left",
    ),
    CounterDecl::new(
        "class*_residence_max",
        "cycles",
        "gauge: longest residence of a data frame of level * (0–3)",
    ),
    CounterDecl::new(
        "class*_bytes",
        "bytes",
        "payload bytes of the data frames of level * (0–3) that left",
    ),
    CounterDecl::new("p*_pfc_xoff", "frames", "PFC XOFF frames sent out of port *"),
    CounterDecl::new(
        "p*_pfc_paused_cycles",
        "cycles",
        "cycles port * was paused by PFC, counted at each XON",
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
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

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
    /// Multicast table by group id (TYPE2 frames to `MCAST_BIT | group`): the ports a copy
    /// leaves on (the group's tree from its source). Filled by the system builder.
    pub mcast: Vec<Vec<u32>>,
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
    /// `voq` (seed 003: VOQ per (input, output) in a shared buffer, a crossbar matched by
    /// `allocator`) or `output_queued` (an output queue of `port_buffer` bytes per port, as if
    /// the crossbar had full speedup).
    pub fabric: Fabric,
    /// Crossbar allocator (`voq`): `islip`, `pim`, or `fifo` (one queue per input: the
    /// head-of-line baseline).
    pub allocator: AllocatorKind,
    /// Allocator iterations per cycle, 1..=4 (seed 003: 2 recommended).
    pub iterations: u32,
    /// Shared buffer, bytes (`voq`; seed 003: 16–64 MB).
    pub buffer: u64,
    /// Dynamic Threshold α (`voq`): a VOQ may grow while its bytes < α × the free buffer
    /// (seed 003: 0.5, 1, 2; 4–8 for all-reduce bursts), 1/64..=64.
    pub dt_alpha: f64,
    /// Bytes each VOQ may always hold (static reserve, inside the buffer).
    pub reserve: u64,
    /// Which header field classifies a data frame (seed 003 «优先级分类»): `pcp` (the VLAN
    /// tag's PCP) or `dscp` (the IP DSCP's class selector, DSCP >> 3; Standard only). A frame
    /// without that field (untagged; an AFH format under `dscp` falls back to its PCP) gets
    /// `default_priority`.
    pub trust: Trust,
    /// The port default priority, 0..=7 (2: the REQ data class, so untagged chip data lands
    /// where seed 003's mapping puts it).
    pub default_priority: u8,
    /// WRR weight of the REQ data level (2) against the RSP level (1) at each output, 1..=65535
    /// (`voq`): while both hold frames for an output they share it in bytes in the ratio
    /// `wrr_req` : `wrr_rsp` (8 : 8, seed 002's channel-weight reset value: an even split).
    pub wrr_req: u32,
    /// WRR weight of the RSP level (1), 1..=65535 (see `wrr_req`).
    pub wrr_rsp: u32,
}

/// The header field a switch classifies on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// VLAN PCP.
    #[default]
    Pcp,
    /// IP DSCP (Standard format only).
    Dscp,
}

/// The switch fabric (seed 003 «VOQ 架构»).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fabric {
    /// VOQs per (input, output) in a shared DT buffer, an allocator-matched crossbar.
    #[default]
    Voq,
    /// An output queue per port (full crossbar speedup).
    OutputQueued,
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
            fabric: Fabric::Voq,
            allocator: AllocatorKind::Islip,
            iterations: 2,
            buffer: 16 << 20,
            dt_alpha: 1.0,
            reserve: 0,
            trust: Trust::Pcp,
            default_priority: 2,
            mcast: Vec::new(),
            wrr_req: 8,
            wrr_rsp: 8,
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
        v.push(PortDecl::output::<UInt<32>>(&format!("q_bytes{k}")).doc("data bytes held for output k"));
        if p.fabric == Fabric::Voq {
            v.push(PortDecl::output::<UInt<32>>(&format!("in_bytes{k}")).doc("data bytes in input k's VOQs"));
            v.push(PortDecl::output::<UInt<6>>(&format!("gptr{k}")).doc("output k's grant pointer"));
            v.push(PortDecl::output::<UInt<6>>(&format!("aptr{k}")).doc("input k's accept pointer"));
            v.push(
                PortDecl::output::<UInt<1>>(&format!("rsp_first{k}"))
                    .doc("output k's WRR turn is RSP's: level 1 matches before level 2 this cycle"),
            );
        }
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
    if p.fabric == Fabric::Voq {
        v.push(PortDecl::output::<UInt<7>>("matches").doc("crossbar transfers started this cycle"));
        v.push(PortDecl::output::<UInt<32>>("buffer_bytes").doc("data bytes in the shared buffer"));
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
    /// This cycle: paused (and the watchdog not fired), and when the watchdog would fire.
    paused: bool,
    pfc_wake: Option<Cycle>,
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

/// Priority levels of the VOQs (seed 003's mapping: 3 ACK+CNP, 2 REQ data, 1 RSP, 0 TYPE2/3;
/// priorities 4–7 join level 3).
const LEVELS: usize = 4;

/// The level PFC pauses: the REQ data priority the switches' XOFF/XON name.
const PFC_LEVEL: usize = PfcFrame::REQ_DATA_PRIO as usize;

/// The two levels that share an output by WRR (seed 003 «推荐的 PAXI 出口调度»): REQ data and RSP.
const REQ_LEVEL: usize = 2;
const RSP_LEVEL: usize = 1;

/// How far one WRR level may get ahead of its share at an output: the balance is clamped at this
/// times the larger weight, so a level that could not be matched for a long while (its inputs
/// busy elsewhere) catches up by a few frames, not by all it missed.
const WRR_CATCH_UP_BYTES: i64 = 4 * 8192;

/// A frame in a VOQ: (ready cycle, arrival cycle, output, frame).
type Queued = (Cycle, Cycle, u8, DataFrame);

/// The VOQ fabric (`fabric: voq`): the queues in the shared buffer, the allocator, and the
/// inputs' crossbar occupancy.
struct Voq {
    n: usize,
    /// One queue per input (`allocator: fifo`) instead of one per (input, output).
    fifo: bool,
    /// One allocator per priority level (strict priority across levels, each its own pointers).
    alloc: Vec<Box<dyn Allocator>>,
    /// Queue (level l, input i, output o) at `(l * n + i) * n + o` (FIFO: `(l * n + i) * n`).
    queues: Vec<VecDeque<Queued>>,
    /// Bytes in each queue.
    q_bytes: Vec<u64>,
    /// Per (level l, input i) at `l * n + i`: the outputs it holds frames for (a bit per
    /// output; FIFO: the output of its head frame).
    nonempty: Vec<u64>,
    /// Per input: bytes in its queues.
    in_bytes: Vec<u64>,
    /// Bytes in the shared buffer (queued and crossing).
    total: u64,
    /// Per input: its crossbar transfer ends at this time, in 1/rate.bytes ns (as the
    /// serializer clock counts).
    in_busy: Vec<u128>,
    req: Requests,
    m: Matching,
    in_sig: Vec<Out<UInt<32>>>,
    gptr: Vec<Out<UInt<6>>>,
    aptr: Vec<Out<UInt<6>>>,
    matches: Out<UInt<7>>,
    buffer_sig: Out<UInt<32>>,
    c_matches: CounterId,
    c_buffer_peak: CounterId,
    c_voq_peak: CounterId,
    c_dt_drops: CounterId,
    /// Frames queued per level (the WRR work is skipped unless levels 1 and 2 both hold some).
    level_frames: [u64; LEVELS],
    /// WRR weights: REQ (level 2), RSP (level 1).
    wrr_req: i64,
    wrr_rsp: i64,
    /// Per output: the WRR balance in weighted bytes, `wrr_rsp` × REQ bytes − `wrr_req` × RSP
    /// bytes sent while both levels held frames for it (reset to 0 when one had none); > 0:
    /// REQ is ahead of its share, so RSP matches first.
    wrr_balance: Vec<i64>,
    /// Bound of `wrr_balance`'s magnitude.
    wrr_cap: i64,
    rsp_first_sig: Vec<Out<UInt<1>>>,
    /// The outputs shown as RSP-first on the waves.
    rsp_first_shown: u64,
}

impl Voq {
    fn queue_of(&self, l: usize, i: usize, o: usize) -> usize {
        (l * self.n + i) * self.n + if self.fifo { 0 } else { o }
    }

    /// The outputs for which both WRR levels hold frames (contended), and among them those
    /// where it is RSP's turn to match first. Both 0 unless both levels hold frames somewhere
    /// (the common case of data alone costs two comparisons).
    fn wrr_turns(&self) -> (u64, u64) {
        if self.level_frames[REQ_LEVEL] == 0 || self.level_frames[RSP_LEVEL] == 0 {
            return (0, 0);
        }
        let n = self.n;
        let req_for = self.nonempty[REQ_LEVEL * n..(REQ_LEVEL + 1) * n]
            .iter()
            .fold(0, |a, m| a | m);
        let rsp_for = self.nonempty[RSP_LEVEL * n..(RSP_LEVEL + 1) * n]
            .iter()
            .fold(0, |a, m| a | m);
        let contended = req_for & rsp_for;
        let (mut rsp_first, mut outs) = (0u64, contended);
        while outs != 0 {
            let o = outs.trailing_zeros() as usize;
            outs &= outs - 1;
            if self.wrr_balance[o] > 0 {
                rsp_first |= 1 << o;
            }
        }
        (contended, rsp_first)
    }

    /// Charges a frame of `wire` bytes matched at output `o` from level `l` to the WRR balance:
    /// while both levels contend for `o` the sender moves ahead by its bytes over its weight;
    /// otherwise the balance restarts (a level with nothing queued keeps no credit, as in
    /// deficit round robin).
    fn wrr_charge(&mut self, l: usize, o: usize, wire: u64, contended: u64) {
        let b = &mut self.wrr_balance[o];
        if contended & 1 << o == 0 {
            *b = 0;
        } else if l == REQ_LEVEL {
            *b = (*b + wire as i64 * self.wrr_rsp).min(self.wrr_cap);
        } else if l == RSP_LEVEL {
            *b = (*b - wire as i64 * self.wrr_req).max(-self.wrr_cap);
        }
    }
}

/// The block.
pub struct L2Switch {
    p: Params,
    ports: Vec<Port>,
    /// The VOQ fabric (`fabric: voq`).
    voq: Option<Voq>,
    /// Data bytes in the switch per input port (PFC's ingress accounting).
    ingress: Vec<u64>,
    c_xoff: CounterId,
    c_xon: CounterId,
    c_pauses_rx: CounterId,
    c_mcast_copies: CounterId,
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
    /// Per priority level: data frames out, longest residence, payload bytes out.
    c_class_frames: [CounterId; LEVELS],
    c_class_res: [CounterId; LEVELS],
    c_class_bytes: [CounterId; LEVELS],
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
    let (buf_name, buf) = match p.fabric {
        Fabric::Voq => ("buffer", p.buffer),
        Fabric::OutputQueued => ("port_buffer", p.port_buffer),
    };
    if p.pfc && (p.pfc_xon > p.pfc_xoff || p.pfc_xoff >= buf) {
        return Err(format!(
            "pfc: thresholds must satisfy pfc_xon ({}) ≤ pfc_xoff ({}) < {buf_name} ({buf})",
            p.pfc_xon, p.pfc_xoff
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
    if p.mcast.len() > 1 << 15 {
        return Err(format!("mcast: {} groups, at most 32768", p.mcast.len()));
    }
    for (g, ports) in p.mcast.iter().enumerate() {
        if let Some(bad) = ports.iter().find(|&&o| o >= p.ports) {
            return Err(format!("mcast[{g}]: port {bad} does not exist (ports = {})", p.ports));
        }
    }
    RedMarker::new(p.ecn_kmin, p.ecn_kmax, 1)?;
    if p.default_priority > 7 {
        return Err(format!("default_priority = {}: must be in 0..=7", p.default_priority));
    }
    for (name, w) in [("wrr_req", p.wrr_req), ("wrr_rsp", p.wrr_rsp)] {
        if !(1..=65535).contains(&w) {
            return Err(format!("{name} = {w}: must be in 1..=65535"));
        }
    }
    let voq = if p.fabric == Fabric::Voq {
        if p.buffer == 0 || p.buffer > 1 << 36 {
            return Err(format!("buffer = {}: must be in 1..=2^36 bytes", p.buffer));
        }
        if !(1.0 / 64.0..=64.0).contains(&p.dt_alpha) {
            return Err(format!("dt_alpha = {}: must be in 1/64..=64", p.dt_alpha));
        }
        let n = p.ports as usize;
        if p.reserve.saturating_mul((n * n) as u64) > p.buffer {
            return Err(format!(
                "reserve = {}: the {} queues' reserves exceed the buffer of {} bytes",
                p.reserve,
                n * n,
                p.buffer
            ));
        }
        let it = p.iterations as usize;
        let alloc = p.allocator.build_levels(it, LEVELS)?;
        let outs = |prefix: &str| -> Result<Vec<Out<UInt<6>>>, String> {
            (0..n).map(|k| b.output(&format!("{prefix}{k}"))).collect()
        };
        Some(Voq {
            n,
            fifo: p.allocator == AllocatorKind::Fifo,
            alloc,
            queues: (0..LEVELS * n * n).map(|_| VecDeque::new()).collect(),
            q_bytes: vec![0; LEVELS * n * n],
            nonempty: vec![0; LEVELS * n],
            in_bytes: vec![0; n],
            total: 0,
            in_busy: vec![0; n],
            req: Requests::new(n),
            m: Matching::empty(),
            in_sig: (0..n)
                .map(|k| b.output(&format!("in_bytes{k}")))
                .collect::<Result<_, _>>()?,
            gptr: outs("gptr")?,
            aptr: outs("aptr")?,
            matches: b.output("matches")?,
            buffer_sig: b.output("buffer_bytes")?,
            c_matches: b.counter("crossbar_matches"),
            c_buffer_peak: b.counter("buffer_peak_bytes"),
            c_voq_peak: b.counter("voq_peak_bytes"),
            c_dt_drops: b.counter("dt_drops"),
            level_frames: [0; LEVELS],
            wrr_req: p.wrr_req as i64,
            wrr_rsp: p.wrr_rsp as i64,
            wrr_balance: vec![0; n],
            wrr_cap: WRR_CATCH_UP_BYTES * p.wrr_req.max(p.wrr_rsp) as i64,
            rsp_first_sig: (0..n)
                .map(|k| b.output(&format!("rsp_first{k}")))
                .collect::<Result<_, _>>()?,
            rsp_first_shown: 0,
        })
    } else {
        None
    };
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
            paused: false,
            pfc_wake: None,
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
        voq,
        ingress: vec![0; ports.len()],
        ports,
        c_xoff: b.counter("pfc_xoff_sent"),
        c_xon: b.counter("pfc_xon_sent"),
        c_pauses_rx: b.counter("pfc_pauses_received"),
        c_mcast_copies: b.counter("mcast_copies"),
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
        c_class_frames: [0, 1, 2, 3].map(|l| b.counter(&format!("class{l}_frames"))),
        c_class_res: [0, 1, 2, 3].map(|l| b.counter(&format!("class{l}_residence_max"))),
        c_class_bytes: [0, 1, 2, 3].map(|l| b.counter(&format!("class{l}_bytes"))),
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

impl L2Switch {
    /// The ingress classification of a data frame: its priority from the header field the
    /// switch trusts, else the port default; the VOQ level is the priority, 4–7 at level 3.
    fn level_of(&self, f: &DataFrame) -> usize {
        let h = f.hdr;
        let prio = match (self.p.trust, h.pcp) {
            (Trust::Dscp, _) if h.format.carries_ecn() => (h.dscp.0 >> 3) as u8 & 7,
            (_, Some(pcp)) => pcp.0 as u8 & 7,
            _ => self.p.default_priority,
        };
        (prio as usize).min(LEVELS - 1)
    }

    /// Records a data frame leaving the switch on output `o`: residence and the counters.
    fn depart(&mut self, ctx: &mut Ctx<'_>, o: usize, now: Cycle, arrived: Cycle, inp: u8, f: &DataFrame) {
        let wire = f.wire_bytes() as u64;
        let port = &mut self.ports[o];
        port.queued_bytes -= wire;
        self.ingress[inp as usize] -= wire;
        if let Some(v) = self.voq.as_mut() {
            v.total -= wire;
        }
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
        let l = self.level_of(f);
        ctx.count(self.c_class_frames[l], 1);
        ctx.count(self.c_class_bytes[l], f.payload() as u64);
        if res > ctx.counter(self.c_class_res[l]) {
            ctx.set_counter(self.c_class_res[l], res);
        }
    }

    /// A frame out of the ingress pipeline of output `o` into its queue: tail drop (the output
    /// queue's size, or the DT rule in the shared buffer), ECN RED at enqueue on the output's
    /// utilization. Returns the frame if admitted.
    fn admit(&mut self, ctx: &mut Ctx<'_>, o: usize, inp: u8, l: usize, mut f: DataFrame) -> Option<DataFrame> {
        let wire = f.wire_bytes() as u64;
        let port = &self.ports[o];
        let admitted = match &self.voq {
            None => port.queued_bytes + wire <= self.p.port_buffer,
            Some(v) => {
                // Dynamic Threshold: room in the buffer, and the queue under α × free (or under
                // its static reserve).
                let q = v.q_bytes[v.queue_of(l, inp as usize, o)];
                let free = self.p.buffer - v.total;
                wire <= free && (q < self.p.reserve || (q as f64) < self.p.dt_alpha * free as f64)
            }
        };
        if !admitted {
            self.ingress[inp as usize] -= wire;
            ctx.count(self.c_drops, 1);
            ctx.count(self.ports[o].c_drops, 1);
            if let Some(v) = &self.voq {
                ctx.count(v.c_dt_drops, 1);
            }
            return None;
        }
        let port = &mut self.ports[o];
        // Only a format with an IP header has an ECN field to mark (Standard).
        if self.p.ecn && f.hdr.format.carries_ecn() && matches!(f.ecn, Ecn::Ect0 | Ecn::Ect1) {
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
        Some(f)
    }

    /// The crossbar (`fabric: voq`): inputs not crossing and outputs free to start a frame are
    /// matched by the allocator; each match moves its VOQ's head frame, which crosses at the port
    /// rate and leaves when its last byte is out (the crossbar transfer is the egress
    /// serialization: no speedup). A frame matched in the cycle it left the pipeline, on an
    /// egress idle for its whole serialization before, leaves at once (cut-through).
    fn crossbar(&mut self, ctx: &mut Ctx<'_>, now: Cycle) -> bool {
        let cut = self.p.forwarding == Forwarding::CutThrough;
        let Some(v) = self.voq.as_mut() else { return false };
        let end_of_now = (now as u128 + 1) * self.p.rate.bytes() as u128;
        let (mut free_any, mut free_data) = (0u64, 0u64);
        for (o, port) in self.ports.iter().enumerate() {
            if port.clock.free_within(now) && port.on_wire.len() < 2 {
                free_any |= 1 << o;
                if !port.paused {
                    free_data |= 1 << o;
                }
            }
        }
        // Egress scheduling (seed 003 «推荐的 PAXI 出口调度»): level 3 (ACK/CNP class) matches
        // first and level 0 last, in strict priority; levels 2 (REQ data) and 1 (RSP) share each
        // output by WRR. At an output both hold frames for, the level whose turn it is matches
        // first and the other may take the output only if the first left it (work-conserving);
        // so the passes are 3, 1 on its RSP-first outputs, 2, 1 on the rest, 0. Each pass is
        // among the inputs and outputs the earlier ones left. PFC pauses only the priority it
        // names (the REQ data's).
        let (contended, rsp_first) = v.wrr_turns();
        if rsp_first != v.rsp_first_shown {
            let mut changed = rsp_first ^ v.rsp_first_shown;
            while changed != 0 {
                let o = changed.trailing_zeros() as usize;
                changed &= changed - 1;
                v.rsp_first_sig[o].update(UInt::wrap(rsp_first >> o & 1));
            }
            v.rsp_first_shown = rsp_first;
        }
        let (mut matched_in, mut taken_out) = (0u64, 0u64);
        let mut made = 0u64;
        let passes = [
            (3, !0u64),
            (RSP_LEVEL, rsp_first),
            (REQ_LEVEL, !0),
            (RSP_LEVEL, !0),
            (0, !0),
        ];
        for (l, allowed) in passes {
            if v.level_frames[l] == 0 || allowed == 0 {
                continue;
            }
            let free_out = if l == PFC_LEVEL { free_data } else { free_any } & allowed & !taken_out;
            let mut any = false;
            for i in 0..v.n {
                v.req.req[i] = if v.in_busy[i] > end_of_now || matched_in & 1 << i != 0 {
                    0
                } else {
                    v.nonempty[l * v.n + i] & free_out
                };
                any |= v.req.req[i] != 0;
            }
            if !any {
                continue;
            }
            v.req.fill_columns();
            // A level's allocator may run twice in a cycle (RSP: its first outputs, then the
            // rest), but on outputs and inputs the first run left unmatched, whose pointers it
            // did not move: each pointer still moves at most once per cycle.
            v.alloc[l].allocate(&v.req, ctx.rng(), &mut v.m);
            if l == PFC_LEVEL {
                // The pointers move only when the level's allocator runs.
                for k in 0..v.n {
                    v.gptr[k].update(UInt::wrap(v.alloc[l].grant_ptr(k) as u64));
                    v.aptr[k].update(UInt::wrap(v.alloc[l].accept_ptr(k) as u64));
                }
            }
            for i in 0..v.n {
                let Some(o) = v.m.out_of[i] else { continue };
                let o = o as usize;
                matched_in |= 1 << i;
                taken_out |= 1 << o;
                let q = v.queue_of(l, i, o);
                let (ready, arrived, _, f) = v.queues[q].pop_front().expect("requested");
                let wire = f.wire_bytes() as u64;
                v.level_frames[l] -= 1;
                if l == REQ_LEVEL || l == RSP_LEVEL {
                    v.wrr_charge(l, o, wire, contended);
                }
                v.q_bytes[q] -= wire;
                v.in_bytes[i] -= wire;
                v.in_sig[i].update(UInt::wrap(v.in_bytes[i]));
                let ne = &mut v.nonempty[l * v.n + i];
                if v.fifo {
                    *ne = v.queues[q].front().map_or(0, |e| 1 << e.2);
                } else if v.queues[q].is_empty() {
                    *ne &= !(1 << o);
                }
                let port = &mut self.ports[o];
                let end = if cut && ready == now && port.clock.finish_by(now, wire) {
                    ctx.count(self.c_cut, 1);
                    ctx.count(port.c_cut, 1);
                    now
                } else {
                    port.clock.start(now, wire)
                };
                v.in_busy[i] = port.clock.busy_until_exact().0;
                port.on_wire.push_back((end, arrived, i as u8, f));
                made += 1;
            }
        }
        ctx.count(v.c_matches, made);
        v.matches.update(UInt::wrap(made));
        made > 0
    }

    /// When the crossbar next may match (`fabric: voq`): the earliest cycle at which an input
    /// holding frames and an output it holds frames for are both free. A pair free now that the
    /// allocator left unmatched tries again next cycle.
    fn crossbar_wake(&self, now: Cycle) -> Option<Cycle> {
        let v = self.voq.as_ref()?;
        let bytes = self.p.rate.bytes() as u128;
        // The first cycle within which a clock busy until `t` is free (`free_within`).
        let free_at = |t: u128| (t.div_ceil(bytes) as u64).saturating_sub(1).max(now + 1);
        let mut next = None::<Cycle>;
        for li in 0..LEVELS * v.n {
            let (l, i) = (li / v.n, li % v.n);
            let mut outs = v.nonempty[li];
            if outs == 0 {
                continue;
            }
            let ti = free_at(v.in_busy[i]);
            while outs != 0 {
                let o = outs.trailing_zeros() as usize;
                outs &= outs - 1;
                let port = &self.ports[o];
                if (l == PFC_LEVEL && port.paused) || port.on_wire.len() >= 2 {
                    // Woken by the XON, or by the departure (on_wire's end is a wake-up).
                    continue;
                }
                let t = ti.max(free_at(port.clock.busy_until_exact().0));
                next = Some(next.map_or(t, |n: Cycle| n.min(t)));
            }
        }
        next
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
                if let Some(g) = mcast_group(f.dst) {
                    // Multicast: the lookup gives the group's ports; a copy of the frame goes
                    // into each one's pipeline (each copy queued and counted on its own).
                    let n = self.p.mcast.get(g as usize).map_or(0, |v| v.len());
                    if n == 0 {
                        ctx.violation(format!("no multicast route for group {g}: {f:?}"));
                        continue;
                    }
                    ctx.count(self.c_mcast_copies, n as u64 - 1);
                    for j in 0..n {
                        let o = self.p.mcast[g as usize][j] as usize;
                        self.ingress[k] += f.wire_bytes() as u64;
                        self.ports[o].data_pipe.push_back((data_ready, now, k as u8, f));
                    }
                    if self.ingress[k] > ctx.counter(self.ports[k].c_ingress_peak) {
                        ctx.set_counter(self.ports[k].c_ingress_peak, self.ingress[k]);
                    }
                    continue;
                }
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
        // Per output: PFC received, then the frames out of the pipeline into their queue.
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
            port.pfc_wake = None;
            if let Some(t) = port.pause.since {
                if self.p.pfc_watchdog > 0 && !port.watchdog_fired {
                    if now >= t + self.p.pfc_watchdog {
                        port.watchdog_fired = true;
                        ctx.count(self.c_watchdog, 1);
                    } else {
                        port.pfc_wake = Some(t + self.p.pfc_watchdog);
                    }
                }
            }
            port.paused = port.pause.is_paused() && !port.watchdog_fired;
            while self.ports[o].data_pipe.front().is_some_and(|(t, _, _, _)| *t <= now) {
                let (t, arrived, inp, f) = self.ports[o].data_pipe.pop_front().expect("front");
                let l = self.level_of(&f);
                let Some(f) = self.admit(ctx, o, inp, l, f) else {
                    continue;
                };
                let wire = f.wire_bytes() as u64;
                if let Some(v) = self.voq.as_mut() {
                    let q = v.queue_of(l, inp as usize, o);
                    let i = inp as usize;
                    if v.fifo {
                        if v.queues[q].is_empty() {
                            v.nonempty[l * v.n + i] = 1 << o;
                        }
                    } else {
                        v.nonempty[l * v.n + i] |= 1 << o;
                    }
                    v.queues[q].push_back((t, arrived, o as u8, f));
                    v.level_frames[l] += 1;
                    v.q_bytes[q] += wire;
                    v.in_bytes[i] += wire;
                    v.in_sig[i].update(UInt::wrap(v.in_bytes[i]));
                    v.total += wire;
                    if v.q_bytes[q] > ctx.counter(v.c_voq_peak) {
                        ctx.set_counter(v.c_voq_peak, v.q_bytes[q]);
                    }
                    if v.total > ctx.counter(v.c_buffer_peak) {
                        ctx.set_counter(v.c_buffer_peak, v.total);
                    }
                    continue;
                }
                let port = &mut self.ports[o];
                // Cut-through: an idle egress (nothing queued, the serializer idle since the
                // frame's first byte could have gone) sends it as it comes, ending now.
                if cut && !port.paused && port.queue.is_empty() && port.clock.finish_by(now, wire) {
                    ctx.count(self.c_cut, 1);
                    ctx.count(port.c_cut, 1);
                    port.on_wire.push_back((now, arrived, inp, f));
                } else {
                    port.queue.push_back((arrived, inp, f));
                }
            }
        }
        let matched = self.crossbar(ctx, now);
        // A cycle with matches is followed by a tick, so that `matches` shows the next cycle's
        // count (0 or more) as it would when every cycle ticks.
        let mut next = if matched { now + 1 } else { Cycle::MAX };
        for o in 0..self.ports.len() {
            let port = &mut self.ports[o];
            let paused = port.paused;
            // Output-queued: the next frame starts when the link frees (fraction carried).
            // (A port paused by PFC starts no new frame; one already serializing finishes.)
            while !paused && port.clock.free_within(now) && !port.queue.is_empty() && port.on_wire.len() < 2 {
                let (arrived, inp, f) = port.queue.pop_front().expect("non-empty");
                let end = port.clock.start(now, f.wire_bytes() as u64);
                port.on_wire.push_back((end, arrived, inp, f));
            }
            if port.on_wire.front().is_some_and(|(t, _, _, _)| *t <= now) && port.req_out.can_push() {
                let (_, arrived, inp, f) = port.on_wire.pop_front().expect("front");
                self.depart(ctx, o, now, arrived, inp, &f);
                self.ports[o].req_out.push(f);
            }
            let port = &mut self.ports[o];
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
                port.pfc_wake,
            ]
            .into_iter()
            .flatten()
            {
                next = next.min(t.max(now + 1));
            }
        }
        // After the departures: an output they freed may match next cycle.
        if let Some(t) = self.crossbar_wake(now) {
            next = next.min(t);
        }
        if let Some(v) = self.voq.as_mut() {
            v.buffer_sig.update(UInt::wrap(v.total));
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
mod tests;
