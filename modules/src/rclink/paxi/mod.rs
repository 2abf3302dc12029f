//! The PAXI of one chip, requester and completer (seed 000 «Segment Dispatch 机制», «多 Link
//! Group 并行模型», «ITLV 分发机制», «跨 LG 事务完成保证»; seed 002 «完整传输流程» (AXI write,
//! B response return, AXI read, «关键差异»), «Buffer 资源全景» (PAXI TX buffers AW+W, R, AR, B)).
//!
//! ```text
//!   txn : stream<Txn> ============================================>+-----------------+==> seg{k} : stream<Segment>
//!                                                                  | core            |<== done{k} : stream<FrameDone>
//!   rx{k} : stream  ==>+-------------------+ bus (R, B)            | (paxi_core)     |--> ost, r_ost, mul_ost : u16
//!     <DataFrame>      | rx_vc (paxi_rx_vc)|======================>| p0: requester,  |== ar_entries ==>+---------+
//!   (frames delivered  | REQ/RSP/MUL MEM   | slave (W, AR, MUL)    |     OST, reads  |                 | ar_pack |--> ar_fill : u8
//!    by LG k's RX)     | W/AR/R/B channels |=====>+-----------+    | p1: flits,      |<== ar_flits ====+---------+
//!                      +-------------------+      | completer |===>|     dispatch    |
//!                        --> rx_req, rx_rsp,      +-----------+send|                 |<== b_flits =====+---------+
//!                            rx_mul : u16,        (R frames)       +-----------------+                 | b_pack  |--> b_fill : u8
//!                            rx_pause : u8          ||== b_entries ===================================>+---------+
//!                                                   --> r_bufs : u16, r_beat, r_sent : u8
//! ```
//! **Nodes.** `paxi` is a composite ([`expand`]): `rx_vc` ([`rx_vc`], `paxi_rx_vc`: the RX VC
//! buffers, their watermarks and `rx_pause`, the AXI channel buffers) hands the frames the bus
//! takes on in the same cycle, R and B to `core` (`paxi_core`: the requester and dispatch, the
//! part not yet cut into nodes) on `bus`, W, AR and multicast copies to `completer`
//! ([`completer`], `paxi_completer`: the AXI slave and the R buffers) on `slave`. The two
//! packing buffers are nodes of the kind module testbenches run, `paxi_pack`
//! ([`paxi_pack`](super::paxi_pack)) in its PAXI form (`inline`: combinational, every entry and
//! flit in its cycle): `ar_pack` takes the AR entries the core's process 0 issues
//! (`ar_entries`) and `b_pack` the Bs the completer makes due (`b_entries`); their flits go to
//! the core's process 1 (`ar_flits`, `b_flits`), which makes them segments (flit ids, ITLV link
//! groups, queues) in the fused block's order: AR flits, then B flits, then the completer's R
//! frames (`send`), then the push to the LGs. Every stream is combinational and every figure is
//! the fused block's. The nodes count in the PAXI's scope (`chip0.paxi.rx_req_peak`,
//! `chip0.paxi.wdata_bytes_in`, `chip0.paxi.ar_flits` as before); the composite's ports are the
//! fused block's, in its order (`ar_fill` and `b_fill` are the packing nodes' `fill`).
//!
//! **Requester.** A transaction is an AXI write or read of `bytes`, cut into bursts of ≤ MPS.
//! - Write: burst i becomes an AW+W segment ready at issue + `tx_latency` + ceil(i · MPS /
//!   bandwidth) (the PAXI TX pipeline, then the CDMA injection gate at seed 000's ITLV time
//!   T0 + i · Δt; unpaced when bandwidth is 0). With `write_collect` (seed 002: the AW+W waits
//!   for the burst's WLAST) the gate opens when the burst's last byte is in instead,
//!   ceil(min((i + 1) · MPS, bytes) / bandwidth) (finding 17). It takes a W OST entry (`w_ost`, ≤ 256; the entry's index travels in the frame) when it
//!   is pushed to its LG. The burst is done when the completer's B response for that index
//!   returns (seed 002 «B 响应返回路径»); the entry is free once the B is in and the RC Link has
//!   ACKed the frame. With `b_response: false` the ACK completes the burst instead (no B flits:
//!   the abstraction of earlier hwsim versions, lighter on big fabrics).
//! - Read: burst i is ready at issue + ceil(i · MPS / bandwidth); it takes an R OST entry
//!   (`r_ost`, ≤ 256) and goes as an AR entry (index, length) into the AR packing buffer; the
//!   packed flit (up to 16 AR, [`paxi_pack`](super::paxi_pack)) becomes a segment ready
//!   `tx_latency` later. The burst is done when its R data returns; the entry is freed then.
//! - Multicast (TYPE2, seed 002 «多播写请求流程»; `op: multicast`, `dst` = `MCAST_BIT | g`):
//!   burst i is ready like a write's; it takes a MUL OST entry (`mul_ost`, 16: «TYPE2 OST»)
//!   when pushed to its LG and goes as one `Mul` segment, which the RC Link TX sends as a TYPE2
//!   frame (no slot, no Go-Back-N). Every member of `groups[g]` answers with a B (flagged as a
//!   multicast B); the burst is done at the last one, so its latency is the slowest member's
//!   («B 响应延迟 = max»). A burst not answered in full `mul_timeout` cycles after it left
//!   (0x03d0_9000 = 64 M by default) is given up and its transaction counted lost
//!   (`mul_timeouts`; TYPE2 resends nothing); a B after that is stale.
//! - A transaction completes when its last burst is done; its latency is from issue.
//!
//! **Completer** (the `completer` node; the AXI slave side of the frames `rx{k}` delivers, whole and in PSN order):
//! - AW+W: the burst's bytes reach the slave; its B is ready `slave_latency` later and goes into
//!   the B packing buffer (up to 16 B per flit) for the requester. A multicast copy (`Mul`)
//!   likewise, always (TYPE2 has no ACK to complete it), with its B flagged multicast.
//! - AR flit: each AR gets an R buffer (`r_bufs` of them, «R: OST 个空间»; ARs beyond wait in
//!   order). From `slave_latency` after the AR's arrival, the slave returns read data in beats of
//!   `beat_bytes`, `slave_bytes_per_cycle` per cycle, one beat per read in turn (interleaved, as
//!   an AXI slave may). A buffer full sends its R frame at once, so R leaves in the order buffers
//!   fill, not the order of the ARs («关键差异»: interleaving allowed).
//! - R and B frames are segments like any other, `tx_latency` after they are made, on the QP of
//!   the request (with `rsp_own_qp`, that QP id + 512: a PSN space of their own, so that a
//!   switch may queue them in the RSP class without reordering the data's QP), to the
//!   requester; their RC Link ACKs come back here and are only counted.
//!
//! **RX VC buffers** (the `rx_vc` node; «PAXI RX 方向» «VC Buffer», «AXI 通道 Buffer»): delivered frames wait in
//! REQ MEM (W, AR), RSP MEM (R, B) or MUL MEM, and move in order into their AXI channel buffer
//! (W: AW+W and multicast copies, AR, R, B; `axi_channel_bytes` each, 16 MPS = 64 KiB) while it
//! has room; each channel hands `rx_axi_bytes_per_cycle` to the bus per cycle on its own
//! («每个通道独立握手»: a W channel held back does not stop B or R). A frame acts (B made, AR
//! answered, read done) when its last byte is taken. Each VC buffer holds N + 2 RTT frames
//! (`rx_req_frames` 32, `rx_rsp_frames` 32, `rx_mul_frames` 8, `rx_rtt_frames` 25); at the
//! high watermark N + 1 RTT its bit of `rx_pause` goes up, and at the low watermark
//! (`rx_xon_frames`, default 1 RTT: seed 003's table; seed 002 names no figure) down. The system connects `rx_pause` to every LG's RX, which
//! holds its CBFC credit returns while it is up, so the senders stop as their credits run out
//! (in PFC mode: to the router, which sends PFC XOFF / XON).
//! A buffer at capacity takes no more: frames wait in the RX (`rx{k}` left unread;
//! `rx_*_held_back` counts the cycles). With `rx_axi_bytes_per_cycle` 0 (the default) the AXI
//! side takes every frame as it arrives and the buffers stay empty. Counters
//! `axi_{w,ar,r,b}_peak_bytes` (the channel buffers' fill).
//!
//! **Dispatch** is push, not polling: a ready segment goes to its LG as soon as the LG's slot
//! FIFO input has room (and, for AW+W, a W OST entry is free); otherwise it waits in one of its
//! LG's two queues here — AW+W bursts, and AR/R/B flits, so that a B never waits behind a write
//! that waits for a W OST entry, which only Bs free (with one queue, all-to-all traffic
//! deadlocked: every chip's OST full, every B stuck) — and is pushed the cycle room appears.
//! Among the queues that can push, the oldest segment goes first. ITLV per segment: `hash` (default) lg = splitmix64 mix of (txn, burst,
//! qp) mod num_lg; `round_robin` (a chip-level counter, for debugging: it phase-locks); `qp`
//! (one LG per QP). Flits (AR, R, B) hash their flit number.
//!
//! **Latency**: a transaction visible at n has its first segment (write) or AR entry (read)
//! taken at n; a segment ready at r is pushed at r (visible to the LG at r + 1); a frame
//! delivered by `rx{k}` at d is at the slave at d; a B or R made at m is a segment ready at
//! m + `tx_latency`.
//!
//! **Counters** (events): `txns_issued`, `txns_done`, `segments`, `frames_done` (bursts done),
//! `bytes_done`, `latency_sum`, `latency_max`, `ost_peak`, `first_issue_at`, `last_done_at`
//! (cycle + 1; 0 = never), `duplicate_done`, `txns_failed`, `bytes_failed`, `last_failed_txn`;
//! by operation `writes_done`, `write_lat_sum`, `write_lat_max`, `reads_done`,
//! `read_bytes_done`, `read_lat_sum`, `read_lat_max`, `r_ost_peak`; responses `frames_acked`,
//! `b_received`, `b_stale` (a B for an entry no longer waiting), `r_received`; the completer's
//! `wdata_bytes_in` / `rdata_bytes_in` (write data at this slave, read data back at this
//! master), `w_in_first_at`, `ar_in_first_at`, `r_in_first_at` (cycle + 1 of the first W, AR,
//! R at this chip's AXI side), `ar_in`, `r_frames_sent`, `r_out_of_order` (R frames sent while
//! an earlier AR's data was still being read), `r_bufs_peak`, `rsp_frames_acked`; the packing
//! buffers' `ar_*` and `b_*` (`entries`, `flits`, `flush_wm`, `flush_da_vc`, `flush_timeout`,
//! `flush_length`, `max_entries`); multicast `multicasts_done`, `mul_lat_sum`, `mul_lat_max`,
//! `mul_timeouts`, `mul_ost_peak`, `mul_b_received`, `mul_copy_bytes` (bytes × members issued),
//! `mul_copy_bytes_failed` (bytes × members not answered, at a timeout), and at a member
//! `mul_bytes_in`; the RX VC buffers' `rx_{req,rsp,mul}_peak` (frames),
//! `_xoff` (times back-pressure went up), `_paused_cycles`, `_held_back`; per flow f: `flow{f}_txns`, `flow{f}_bytes`,
//! `flow{f}_lat_sum`, `flow{f}_lat_max`, `flow{f}_lat_p50` / `_p99` / `_p999` (nearest-rank
//! percentiles of the completed transactions' latencies, exact: every latency is kept, and the
//! three are published when the run ends), `flow{f}_first`, `flow{f}_last`. With a warm-up
//! (`metrics_from` W, cycles) the flow counters count only the transactions issued at or after
//! W (BookSim's measured packets: those injected after the warm-up), so the report's flows,
//! goodput and latency metrics leave the start-up transient out; the block's own counters
//! (`txns_done`, `latency_sum`, …) still count every transaction.
//!
//! **Deviations**: the AXI slave is a latency and a bandwidth (no memory model); a write's B
//! leaves `slave_latency` after its data arrives; its figures (`slave_latency` 0,
//! `slave_bytes_per_cycle` 512, `beat_bytes` 64) are hwsim's, the seeds model no slave. The AR
//! and B entry sizes (16 B, 8 B) are hwsim's (the seed gives none). An R or B flit lost to a
//! fatal QP leaves its transaction waiting (the run ends with work pending and the QP fatal
//! reported). In CBFC mode the
//! back-pressure holds all of an LG's credit returns (see `rclink_rx`); in PFC mode the system
//! wires `rx_pause` to the chip's router instead, which sends XOFF / XON for the switches'
//! lossless priorities to its neighbours (see `router`), whichever buffer crossed its
//! watermark. A paced write burst is ready at seed 000's ITLV time, i · MPS into the
//! injection, not after its own last beat as seed 002's TX buffer has it (`write_collect`). A multicast B is one B entry with a flag bit (the seed gives no B
//! format for it). The MUL channel's weight against REQ/RSP (0x0100 vs 0x0008) is the RC Link
//! TX's MUL VC weight (`rclink_tx.vc_weights[4]`), not a PAXI arbiter: here the oldest ready
//! segment of any queue goes first. CBFC on the ACK+CNP VC is not PAXI's: the RX's control
//! queue gates its ACK / NAK / CNP on the ACK-VC ledger (`rx_ctrl`, `ack_cbfc`) and the TX
//! returns that credit (`rclink_tx`'s `ack_cr`).

use hwsim_hw::{Binder, BuildResult, CounterDecl, PortDecl};
use hwsim_ports::{ChipId, DataFrame, FlitKind, FrameDone, Segment, Txn};
use serde::{Deserialize, Serialize};

use super::paxi_pack;

pub mod completer;
mod counters;
mod dispatch;
mod multicast;
mod requester;
pub mod rx_vc;

pub use dispatch::{itlv_hash, Paxi, TXN_LATENCY};

pub use counters::COUNTERS;

/// The tables that make up this kind's counters: the core's, the packing buffers', the RX
/// side's and the completer's (all in the PAXI's scope).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[
    COUNTERS,
    super::paxi_pack::COUNTERS,
    rx_vc::COUNTERS,
    completer::COUNTERS,
];

/// The tables of the core node (`paxi_core`).
pub const CORE_COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// ITLV link-group choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Itlv {
    /// splitmix64-class hash of (txn, frame_seq, qp) (the spec's default).
    #[default]
    Hash,
    /// A chip-level counter, one step per segment (debug baseline; phase-locks).
    RoundRobin,
    /// Hash of the QP only: one LG per QP.
    Qp,
}

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip.
    pub chip: ChipId,
    /// Link groups.
    pub num_lg: u8,
    /// Maximum payload per frame (MPS), bytes: the largest AXI burst.
    pub mps: u32,
    /// W OST pool: outstanding write bursts chip-wide, 1..=256 (the index is 8 bits).
    pub w_ost: u32,
    /// R OST pool: outstanding read bursts chip-wide, 1..=256.
    pub r_ost: u32,
    /// LG choice.
    pub itlv: Itlv,
    /// Flows accounted for (flow ids 0..flows).
    pub flows: u16,
    /// Warm-up, cycles: the flows' statistics (`flow*_` counters, and so the report's flows
    /// table, goodput and latency metrics) count only the transactions issued at or after this
    /// cycle (0: every transaction). The block's own counters always count the whole run.
    pub metrics_from: u64,
    /// Fixed PAXI TX pipeline, ns (AXI in → segment ready for the RC Link), 0..=10^6. 0 here;
    /// the chip preset sets it (with the PhyLink's `pipeline_latency`) so that an idle P2P
    /// write takes the seed's 150 ns AXI-to-AXI.
    pub tx_latency: u64,
    /// Write bursts wait for their own last beat (seed 002's PAXI TX buffer: the AW+W goes only
    /// after the burst's WLAST, «必须收齐整个 burst 才发出»): with a paced CDMA, burst i is
    /// ready when its last byte is in, ceil(min((i + 1) · MPS, bytes) / bandwidth) after the
    /// issue, not at seed 000's ITLV time T0 + i · Δt (the default, which the ITLV acceptance
    /// runs check; docs/spec-findings.md finding 17). Unpaced transactions are not affected.
    pub write_collect: bool,
    /// Writes complete by the remote B response (the seed; default) or, when false, by the RC
    /// Link ACK of their frames (no B flits).
    pub b_response: bool,
    /// R and B frames on a QP of their own, the request's QP id + 512 (so a PSN space of their
    /// own; the requests' QP ids must then be below 512, CDMA engines 0–127). Off (the seed's
    /// one PSN space per (LG, dst, QP)), a switch that queues responses apart from the data
    /// reorders the QP, and every reorder is a Go-Back-N (docs/spec-findings.md finding 10).
    pub rsp_own_qp: bool,
    /// The AR packing buffer (kind `ar`; entry 16 B).
    pub ar_pack: paxi_pack::Params,
    /// The B packing buffer (kind `b`; entry 8 B).
    pub b_pack: paxi_pack::Params,
    /// R buffers of the completer: ARs being answered at once, 1..=4096 (default 256).
    pub r_bufs: u32,
    /// The AXI slave's latency, ns: from a W burst's arrival to its B, from an AR's arrival to
    /// its first data beat (default 0). The slave's three figures are hwsim's: the seeds model
    /// no AXI slave (it stands for the memory behind PAXI), so the defaults keep it out of the
    /// way of the interconnect being measured.
    pub slave_latency: u64,
    /// Read data the slave returns per cycle, bytes, ≥ 1 (default 512: eight 64 B beats;
    /// hwsim's, see `slave_latency`).
    pub slave_bytes_per_cycle: u32,
    /// One read data beat, bytes, 1..=4096 (default 64; hwsim's, see `slave_latency`).
    pub beat_bytes: u32,
    /// PAXI RX VC buffers (seed 002 «PAXI RX 方向» «VC Buffer»): REQ MEM frames N (32).
    pub rx_req_frames: u32,
    /// RSP MEM frames N (32).
    pub rx_rsp_frames: u32,
    /// MUL MEM frames N (8).
    pub rx_mul_frames: u32,
    /// One RTT of frames (the seed's «1 RTT»: what arrives after back-pressure is asserted),
    /// default 25 (a 254 ns round trip at 400 B/ns in 4 KiB frames). Each buffer holds
    /// N + 2 RTT frames; its high watermark is N + 1 RTT.
    pub rx_rtt_frames: u32,
    /// Low watermark, frames: back-pressure ends when a buffer holds this many or fewer.
    /// Default: 1 RTT (`rx_rtt_frames`), seed 003's PFC watermark table (REQ/RSP/MUL MEM: low
    /// 1 RTT); seed 002 gives no figure. Set N (32) for the earlier hwsim default, one RTT
    /// below the high watermark (docs/spec-findings.md finding 13).
    pub rx_xon_frames: Option<u32>,
    /// Bytes per cycle each AXI channel takes out of its RX VC buffer (the channels are
    /// independent: «每个通道独立握手»); 0 (default) = the AXI side takes every frame the cycle
    /// it arrives, so the buffers never fill.
    pub rx_axi_bytes_per_cycle: u32,
    /// Each AXI channel buffer (W, AR, R, B) between the RX VC buffers and the bus, bytes
    /// (seed 002 «AXI 通道 Buffer»: 16 MPS = 65 536), 1..=2^24.
    pub axi_channel_bytes: u32,
    /// Multicast groups (TYPE2), by group id: each group's member chips. The system builder
    /// fills it from the traffic; a multicast transaction names its group as
    /// `MCAST_BIT | group`.
    pub groups: Vec<Vec<ChipId>>,
    /// MUL OST: multicast bursts outstanding chip-wide, 1..=256 (seed 002: TYPE2 OST 16).
    pub mul_ost: u32,
    /// Multicast timeout, cycles (seed 002 «多播超时»: 0x03d0_9000 = 64 000 000): a burst whose
    /// group has not answered in full by then is given up and its transaction reported lost.
    pub mul_timeout: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            num_lg: 8,
            mps: 4096,
            w_ost: 256,
            r_ost: 256,
            itlv: Itlv::Hash,
            flows: 1,
            metrics_from: 0,
            tx_latency: 0,
            write_collect: false,
            b_response: true,
            rsp_own_qp: false,
            ar_pack: paxi_pack::Params::default(),
            b_pack: paxi_pack::Params {
                kind: FlitKind::B,
                entry_bytes: 8,
                ..paxi_pack::Params::default()
            },
            r_bufs: 256,
            slave_latency: 0,
            slave_bytes_per_cycle: 512,
            beat_bytes: 64,
            rx_req_frames: 32,
            rx_rsp_frames: 32,
            rx_mul_frames: 8,
            rx_rtt_frames: 25,
            rx_xon_frames: None,
            rx_axi_bytes_per_cycle: 0,
            axi_channel_bytes: 16 * 4096,
            groups: Vec::new(),
            mul_ost: 16,
            mul_timeout: MUL_TIMEOUT,
        }
    }
}

/// The seed's multicast timeout, cycles (0x03d0_9000).
pub const MUL_TIMEOUT: u64 = 0x03d0_9000;

/// The core's ports seen from outside: the transactions, per LG the segments out and the
/// ACKed frames in (`rx{k}` between them is the RX side's), its status outputs (the
/// completer's follow them).
fn core_outer(p: &Params) -> (Vec<PortDecl>, Vec<Vec<PortDecl>>, Vec<PortDecl>) {
    let txn = vec![PortDecl::stream_in::<Txn>("txn", 16)
        .doc("AXI write and read transactions from the CDMA (unbound: a completer only)")
        .optional()];
    let per_lg = (0..p.num_lg)
        .map(|k| {
            vec![
                PortDecl::stream_out::<Segment>(&format!("seg{k}")).doc("segments to LG k's slot FIFO"),
                PortDecl::stream_in::<FrameDone>(&format!("done{k}"), 4)
                    .doc("frames fully ACKed on LG k")
                    .optional(),
            ]
        })
        .collect();
    let status = vec![
        PortDecl::output::<u16>("ost").level().doc("W OST entries in use"),
        PortDecl::output::<u16>("r_ost").level().doc("R OST entries in use"),
        PortDecl::output::<u16>("mul_ost")
            .level()
            .doc("MUL OST entries in use (multicast bursts awaiting their group's B)"),
    ];
    (txn, per_lg, status)
}

/// The packing buffers' status outputs, exported by the PAXI after the core's.
fn pack_fills() -> [PortDecl; 2] {
    [
        PortDecl::output::<u8>("ar_fill")
            .level()
            .doc("AR entries held in the AR packing buffer"),
        PortDecl::output::<u8>("b_fill")
            .level()
            .doc("B entries held in the B packing buffer"),
    ]
}

/// The AR packing buffer node's parameters (`paxi.ar_pack`, kind `paxi_pack`): the PAXI's
/// `ar_pack` in the PAXI's form, as wide as the R OST table (the entries a cycle can issue).
fn ar_pack_params(p: &Params) -> paxi_pack::Params {
    paxi_pack::Params {
        inline: true,
        lanes: p.r_ost,
        ..p.ar_pack.clone()
    }
}

/// The B packing buffer node's parameters (`paxi.b_pack`): the PAXI's `b_pack` in the PAXI's
/// form, as wide as the frames that reach the slave in a cycle (each makes at most one B).
fn b_pack_params(p: &Params) -> paxi_pack::Params {
    paxi_pack::Params {
        inline: true,
        lanes: rx_vc::Params::of(p).bus_width(),
        entries_before_timeout: true,
        ..p.b_pack.clone()
    }
}

/// Port list of `paxi` (the composite), in the fused block's order: `txn`; per LG `seg{k}`,
/// `done{k}` (the core's) and `rx{k}` (the RX side's); the core's status outputs; the RX side's
/// levels and `rx_pause`.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let (mut v, per_lg, status) = core_outer(p);
    let mut rx = rx_vc::rx_ports(p.num_lg).into_iter();
    for lg in per_lg {
        v.extend(lg);
        v.extend(rx.next());
    }
    v.extend(status);
    v.extend(pack_fills());
    v.extend(completer::status_ports());
    v.extend(rx_vc::status_ports());
    v
}

/// Port list of the core node (`paxi_core`): the composite's own ports but the RX side's, the
/// completer's and the packing buffers'; the `bus` from the RX side and the completer's `sends`
/// (R); the AR entries out and the packing buffers' flits in. Process 0 (`tick`) reads the
/// transactions, the ACKs and the bus and issues the AR entries; process 1 reads the flits and
/// the R frames and pushes the segments.
pub fn core_ports(p: &Params) -> Vec<PortDecl> {
    let (mut v, per_lg, status) = core_outer(p);
    v.extend(per_lg.into_iter().flatten());
    v.extend(status);
    let rx = rx_vc::Params::of(p).bus_width();
    v.push(
        PortDecl::comb_stream_in::<DataFrame>("bus", rx)
            .doc("R and B frames the RX side's AXI channels hand to the bus, in the cycle they do"),
    );
    let sends = completer::send_width(&completer::Params::of(p), rx);
    v.push(
        PortDecl::comb_stream_in::<Segment>("sends", sends)
            .process(1)
            .doc("R frames the completer sends, in the cycle it does"),
    );
    let (ar, b) = (ar_pack_params(p), b_pack_params(p));
    v.push(
        PortDecl::comb_stream_out::<Segment>("ar_entries")
            .width(ar.lanes)
            .doc("AR entries (R OST index, length) to the AR packing buffer, in the cycle they issue"),
    );
    v.push(
        PortDecl::comb_stream_in::<Segment>("ar_flits", ar.lanes.saturating_add(1))
            .process(1)
            .doc("the AR packing buffer's flits, in the cycle it makes them"),
    );
    v.push(
        PortDecl::comb_stream_in::<Segment>("b_flits", b.lanes.saturating_add(1))
            .process(1)
            .doc("the B packing buffer's flits, in the cycle it makes them (before the completer's R frames)"),
    );
    v
}

/// Creates the composite's children at `path`: the core (`path.core`, kind `paxi_core`: the
/// requester and dispatch), the packing buffers (`path.ar_pack`, `path.b_pack`, kind
/// `paxi_pack`, inline), the RX side (`path.rx_vc`, kind `paxi_rx_vc`) and the completer
/// (`path.completer`, kind `paxi_completer`: the AXI slave and its R buffers), all counting in
/// the composite's scope; the RX side's `bus` (R, B) into the core and `slave` (W, AR,
/// multicast) into the completer, the completer's `send` (R) into the core, the core's AR
/// entries through `ar_pack` and the completer's Bs through `b_pack` back to the core, all
/// combinational; exports the composite's ports.
pub fn expand(p: &Params, path: &str, nl: &mut hwsim_hw::Netlist) -> Result<(), hwsim_hw::ElabError> {
    crate::split::refuse_at(path, check(p))?;
    let core = crate::split::Core {
        kind: "paxi_core",
        ports: core_ports(p),
        build,
        params: p.clone(),
        draws: false,
    };
    let inner = ["bus", "sends", "ar_entries", "ar_flits", "b_flits"];
    crate::split::add_core(nl, path, core, |n| inner.contains(&n))?;
    for (name, pp) in [("ar_pack", ar_pack_params(p)), ("b_pack", b_pack_params(p))] {
        let ports = paxi_pack::ports(&pp);
        crate::split::add_counting_in_scope(nl, path, name, "paxi_pack", ports, pp, paxi_pack::build)?;
    }
    let rp = rx_vc::Params::of(p);
    let width = rp.bus_width();
    let ports = rx_vc::ports(&rp);
    crate::split::add_counting_in_scope(nl, path, "rx_vc", "paxi_rx_vc", ports, rp, rx_vc::build)?;
    let cp = completer::Params::of(p);
    let ports = completer::ports_for(&cp, width);
    crate::split::add_counting_in_scope(nl, path, "completer", "paxi_completer", ports, cp, completer::build)?;
    let node = |n: &str| format!("{path}.{n}");
    for d in rx_vc::rx_ports(p.num_lg).into_iter().chain(rx_vc::status_ports()) {
        nl.export(&node(&d.name), &node(&format!("rx_vc.{}", d.name)))?;
    }
    nl.export(&node("ar_fill"), &node("ar_pack.fill"))?;
    nl.export(&node("b_fill"), &node("b_pack.fill"))?;
    for d in completer::status_ports() {
        nl.export(&node(&d.name), &node(&format!("completer.{}", d.name)))?;
    }
    nl.connect(&node("rx_vc.bus"), &node("core.bus"), None)?;
    nl.connect(&node("rx_vc.slave"), &node("completer.slave"), None)?;
    nl.connect(&node("completer.send"), &node("core.sends"), None)?;
    nl.connect(&node("core.ar_entries"), &node("ar_pack.in"), None)?;
    nl.connect(&node("ar_pack.out"), &node("core.ar_flits"), None)?;
    nl.connect(&node("completer.b_entries"), &node("b_pack.in"), None)?;
    nl.connect(&node("b_pack.out"), &node("core.b_flits"), None)?;
    Ok(())
}

/// The range of the parameter that shapes the ports (`num_lg`), checked before they are declared.
pub fn check_ports(p: &Params) -> Result<(), String> {
    if p.num_lg == 0 || p.num_lg > 8 {
        return Err(format!("num_lg {} out of range 1..=8", p.num_lg));
    }
    Ok(())
}

/// The parameters' ranges: the first one out of range is the error.
fn check(p: &Params) -> Result<(), String> {
    check_ports(p)?;
    if p.mps == 0 || p.mps > 4096 {
        return Err(format!("mps {} out of range 1..=4096", p.mps));
    }
    if p.w_ost == 0 || p.w_ost > 256 {
        return Err(format!("w_ost {} out of range 1..=256 (an 8-bit index)", p.w_ost));
    }
    if p.r_ost == 0 || p.r_ost > 256 {
        return Err(format!("r_ost {} out of range 1..=256 (an 8-bit index)", p.r_ost));
    }
    if p.mul_ost == 0 || p.mul_ost > 256 {
        return Err(format!("mul_ost {} out of range 1..=256 (an 8-bit index)", p.mul_ost));
    }
    if p.mul_timeout == 0 || p.mul_timeout > 1 << 40 {
        return Err(format!("mul_timeout = {}: must be in 1..=2^40 cycles", p.mul_timeout));
    }
    if p.groups.len() > 1 << 15 {
        return Err(format!(
            "groups: {} groups, at most 32768 (a 15-bit group id)",
            p.groups.len()
        ));
    }
    if let Some(g) = p.groups.iter().position(|g| g.is_empty()) {
        return Err(format!("groups[{g}]: a group needs at least one member"));
    }
    if p.tx_latency > 1_000_000 {
        return Err(format!("tx_latency = {}: must be in 0..=1000000 ns", p.tx_latency));
    }
    // The completer's, then the RX side's (in the fused block's order).
    completer::check(&completer::Params::of(p))?;
    rx_vc::check(&rx_vc::Params::of(p))?;
    // The packing buffers' (the core's AR buffer, the completer's B buffer), checked here so
    // that they are refused under the PAXI's name, as the fused block refused them.
    if p.ar_pack.kind != FlitKind::Ar || p.b_pack.kind != FlitKind::B {
        return Err("ar_pack.kind must be `ar` and b_pack.kind `b`".into());
    }
    // The form the nodes run in is the PAXI's to set.
    let standalone = paxi_pack::Params::default();
    for (name, b) in [("ar_pack", &p.ar_pack), ("b_pack", &p.b_pack)] {
        if b.inline != standalone.inline
            || b.lanes != standalone.lanes
            || b.entries_before_timeout != standalone.entries_before_timeout
        {
            return Err(format!(
                "{name}.inline, .lanes and .entries_before_timeout are set by the PAXI (remove them)"
            ));
        }
    }
    p.ar_pack.check().map_err(|e| format!("ar_pack: {e}"))?;
    p.b_pack.check().map_err(|e| format!("b_pack: {e}"))
}

/// Binds the core node's ports (`paxi_core`).
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    Ok(Box::new(Paxi::bind(p, b)?))
}

#[cfg(test)]
mod tests;
