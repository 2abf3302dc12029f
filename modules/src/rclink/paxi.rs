//! The PAXI core of one chip, requester and completer (seed 000 «Segment Dispatch 机制», «多 Link
//! Group 并行模型», «ITLV 分发机制», «跨 LG 事务完成保证»; seed 002 «完整传输流程» (AXI write,
//! B response return, AXI read, «关键差异»), «Buffer 资源全景» (PAXI TX buffers AW+W, R, AR, B)).
//!
//! ```text
//!   txn : stream<Txn> ==>+--------------------------+==> seg{k} : stream<Segment>   (k = 0..num_lg)
//!                        |  PAXI core               |<== done{k} : stream<FrameDone> (ACKed frames)
//!   rx{k} : stream  ====>|  requester  |  completer |--> ost, r_ost, mul_ost : u16 (OST in use)
//!     <DataFrame>        |W/R/MUL OST  |  AXI slave |--> ar_fill, b_fill : u8 (packing buffers)
//!   (frames delivered    |  AR packer  |  R buffers |--> r_bufs : u16, r_beat, r_sent : u8
//!    by LG k's RX)       |             |  B packer  |
//!                        +--------------------------+
//! ```
//! **Requester.** A transaction is an AXI write or read of `bytes`, cut into bursts of ≤ MPS.
//! - Write: burst i becomes an AW+W segment ready at issue + `tx_latency` + ceil(i · MPS /
//!   bandwidth) (the PAXI TX pipeline, then the CDMA injection gate; unpaced when bandwidth is
//!   0). It takes a W OST entry (`w_ost`, ≤ 256; the entry's index travels in the frame) when it
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
//! **Completer** (the AXI slave side of the frames `rx{k}` delivers, whole and in PSN order):
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
//! **RX VC buffers** («PAXI RX 方向» «VC Buffer», «AXI 通道 Buffer»): delivered frames wait in
//! REQ MEM (W, AR), RSP MEM (R, B) or MUL MEM, and move in order into their AXI channel buffer
//! (W: AW+W and multicast copies, AR, R, B; `axi_channel_bytes` each, 16 MPS = 64 KiB) while it
//! has room; each channel hands `rx_axi_bytes_per_cycle` to the bus per cycle on its own
//! («每个通道独立握手»: a W channel held back does not stop B or R). A frame acts (B made, AR
//! answered, read done) when its last byte is taken. Each VC buffer holds N + 2 RTT frames
//! (`rx_req_frames` 32, `rx_rsp_frames` 32, `rx_mul_frames` 8, `rx_rtt_frames` 25); at the
//! high watermark N + 1 RTT its bit of `rx_pause` goes up, and at the low watermark
//! (`rx_xon_frames`, default N) down. The system connects `rx_pause` to every LG's RX, which
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
//! `flow{f}_lat_sum`, `flow{f}_lat_max`, `flow{f}_first`, `flow{f}_last`.
//!
//! **Deviations**: the AXI slave is a latency and a bandwidth (no memory model); a write's B
//! leaves `slave_latency` after its data arrives. The AR and B entry sizes (16 B, 8 B) are
//! hwsim's (the seed gives none). An R or B flit lost to a fatal QP leaves its transaction
//! waiting (the run ends with work pending and the QP fatal reported). In CBFC mode the
//! back-pressure holds all of an LG's credit returns (see `rclink_rx`); in PFC mode the system
//! wires `rx_pause` to the chip's router instead, which sends XOFF / XON for the REQ data
//! priority to its neighbours (see `router`), whichever buffer crossed its watermark. A multicast B is one B entry with a flag bit (the seed gives no B
//! format for it). The MUL channel's weight against REQ/RSP (0x0100 vs 0x0008) is the RC Link
//! TX's MUL VC weight (`rclink_tx.vc_weights[4]`), not a PAXI arbiter: here the oldest ready
//! segment of any queue goes first. CBFC on the ACK+CNP VC is not modelled (control messages
//! bypass CBFC).

use std::collections::{BTreeMap, HashMap, VecDeque};

use hwsim_hw::rng::splitmix64;
use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{
    mcast_group, ChipId, DataFrame, FlitKind, FrameDone, PackedEntry, PaxiFlit, QpId, Segment, Txn, TxnOp,
};
use serde::{Deserialize, Serialize};

use super::paxi_pack::{self, PackCounters, Packer};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "txns_issued",
        "transactions",
        "transactions taken from `txn` (writes, reads and multicasts)",
    ),
    CounterDecl::new(
        "txns_done",
        "transactions",
        "transactions completed (last burst done, none failed)",
    ),
    CounterDecl::new(
        "segments",
        "segments",
        "segments pushed to the LGs (AW+W, MUL, and AR/R/B flits)",
    ),
    CounterDecl::new(
        "frames_done",
        "bursts",
        "bursts done (B, R, ACK or given up); a transaction completes at its last",
    ),
    CounterDecl::new("bytes_done", "bytes", "bytes of the transactions completed"),
    CounterDecl::new(
        "latency_sum",
        "cycles",
        "Σ issue-to-completion latency of the transactions completed",
    ),
    CounterDecl::new(
        "latency_max",
        "cycles",
        "gauge: longest issue-to-completion latency of a completed transaction",
    ),
    CounterDecl::new("ost_peak", "entries", "gauge: most W OST entries in use at once"),
    CounterDecl::new(
        "first_issue_at",
        "cycle",
        "cycle + 1 of the first transaction issued (0 = never)",
    ),
    CounterDecl::new(
        "last_done_at",
        "cycle",
        "cycle + 1 of the last transaction completed (0 = never)",
    ),
    CounterDecl::new(
        "duplicate_done",
        "events",
        "completion reports for an unknown transaction or a burst already done",
    ),
    CounterDecl::new(
        "txns_failed",
        "transactions",
        "transactions with a burst lost to a fatal QP (or a multicast timeout)",
    ),
    CounterDecl::new("bytes_failed", "bytes", "bytes of the failed transactions"),
    CounterDecl::new(
        "last_failed_txn",
        "id",
        "id + 1 of the last failed transaction (0 = none)",
    ),
    CounterDecl::new("writes_done", "transactions", "write transactions completed"),
    CounterDecl::new(
        "write_lat_sum",
        "cycles",
        "Σ latency of the write transactions completed",
    ),
    CounterDecl::new(
        "write_lat_max",
        "cycles",
        "gauge: longest latency of a completed write transaction",
    ),
    CounterDecl::new("reads_done", "transactions", "read transactions completed"),
    CounterDecl::new("read_bytes_done", "bytes", "bytes of the read transactions completed"),
    CounterDecl::new("read_lat_sum", "cycles", "Σ latency of the read transactions completed"),
    CounterDecl::new(
        "read_lat_max",
        "cycles",
        "gauge: longest latency of a completed read transaction",
    ),
    CounterDecl::new("r_ost_peak", "entries", "gauge: most R OST entries in use at once"),
    CounterDecl::new(
        "frames_acked",
        "frames",
        "AW+W frames the RC Link ACKed (or gave up on)",
    ),
    CounterDecl::new(
        "b_received",
        "entries",
        "B entries received in B flits (multicast Bs included)",
    ),
    CounterDecl::new(
        "b_stale",
        "entries",
        "B entries for an OST entry no longer waiting (late or never sent)",
    ),
    CounterDecl::new("r_received", "frames", "R frames received at this requester"),
    CounterDecl::new(
        "wdata_bytes_in",
        "bytes",
        "write data bytes (AW+W frames) that reached this chip's AXI slave",
    ),
    CounterDecl::new(
        "rdata_bytes_in",
        "bytes",
        "read data bytes (R frames) back at this chip's AXI master",
    ),
    CounterDecl::new(
        "w_in_first_at",
        "cycle",
        "cycle + 1 of the first W (or multicast copy) at this AXI side (0 = never)",
    ),
    CounterDecl::new(
        "ar_in_first_at",
        "cycle",
        "cycle + 1 of the first AR flit at this AXI side (0 = never)",
    ),
    CounterDecl::new(
        "r_in_first_at",
        "cycle",
        "cycle + 1 of the first R frame at this AXI side (0 = never)",
    ),
    CounterDecl::new("ar_in", "entries", "AR entries received by the completer"),
    CounterDecl::new(
        "r_frames_sent",
        "frames",
        "R frames the completer sent (one per AR, when its R buffer is full)",
    ),
    CounterDecl::new(
        "r_out_of_order",
        "frames",
        "R frames sent while an earlier AR's data was still being read",
    ),
    CounterDecl::new("r_bufs_peak", "entries", "gauge: most R buffers in use at once"),
    CounterDecl::new(
        "rsp_frames_acked",
        "frames",
        "AR/R/B flit frames the RC Link ACKed (or gave up on)",
    ),
    CounterDecl::new(
        "multicasts_done",
        "transactions",
        "multicast transactions completed (every member's B in)",
    ),
    CounterDecl::new(
        "mul_lat_sum",
        "cycles",
        "Σ latency of the multicast transactions completed",
    ),
    CounterDecl::new(
        "mul_lat_max",
        "cycles",
        "gauge: longest latency of a completed multicast transaction",
    ),
    CounterDecl::new(
        "mul_timeouts",
        "bursts",
        "multicast bursts given up `mul_timeout` cycles after they left",
    ),
    CounterDecl::new("mul_ost_peak", "entries", "gauge: most MUL OST entries in use at once"),
    CounterDecl::new(
        "mul_b_received",
        "entries",
        "multicast B entries received from the group members",
    ),
    CounterDecl::new(
        "mul_bytes_in",
        "bytes",
        "multicast copy bytes that reached this chip as a member",
    ),
    CounterDecl::new("mul_copy_bytes", "bytes", "multicast bytes × group members, at issue"),
    CounterDecl::new(
        "mul_copy_bytes_failed",
        "bytes",
        "multicast bytes × members not answered, at a timeout",
    ),
    CounterDecl::new(
        "rx_*_peak",
        "frames",
        "gauge: most frames held in RX VC buffer * (req, rsp, mul)",
    ),
    CounterDecl::new(
        "rx_*_xoff",
        "events",
        "times RX VC buffer * (req, rsp, mul) reached its high watermark (pause up)",
    ),
    CounterDecl::new(
        "rx_*_paused_cycles",
        "cycles",
        "cycles RX VC buffer * (req, rsp, mul) held its pause up, counted at XON",
    ),
    CounterDecl::new(
        "rx_*_held_back",
        "cycles",
        "LG-cycles a frame waited in an RX because VC buffer * (req, rsp, mul) was full",
    ),
    CounterDecl::new("flow*_txns", "transactions", "transactions of flow * completed"),
    CounterDecl::new("flow*_bytes", "bytes", "bytes of the transactions of flow * completed"),
    CounterDecl::new(
        "flow*_lat_sum",
        "cycles",
        "Σ latency of the transactions of flow * completed",
    ),
    CounterDecl::new(
        "flow*_lat_max",
        "cycles",
        "gauge: longest latency of a completed transaction of flow *",
    ),
    CounterDecl::new(
        "flow*_first",
        "cycle",
        "cycle + 1 of the first transaction of flow * issued (0 = never)",
    ),
    CounterDecl::new(
        "flow*_last",
        "cycle",
        "cycle + 1 of the last transaction of flow * completed (0 = never)",
    ),
    CounterDecl::new(
        "axi_*_peak_bytes",
        "bytes",
        "gauge: most bytes held in AXI channel buffer * (w, ar, r, b)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS, super::paxi_pack::COUNTERS];

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
    /// Fixed PAXI TX pipeline, ns (AXI in → segment ready for the RC Link), 0..=10^6. 0 here;
    /// the chip preset sets it (with the PhyLink's `pipeline_latency`) so that an idle P2P
    /// write takes the seed's 150 ns AXI-to-AXI.
    pub tx_latency: u64,
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
    /// its first data beat (default 0).
    pub slave_latency: u64,
    /// Read data the slave returns per cycle, bytes, ≥ 1 (default 512: eight 64 B beats).
    pub slave_bytes_per_cycle: u32,
    /// One read data beat, bytes, 1..=4096 (default 64).
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
    /// Low watermark, frames: back-pressure ends when a buffer holds this many or fewer
    /// (default: N, one RTT below the high watermark; the seed gives no figure).
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
            tx_latency: 0,
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

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = vec![PortDecl::stream_in::<Txn>("txn", 16)
        .doc("AXI write and read transactions from the CDMA (unbound: a completer only)")
        .optional()];
    for k in 0..p.num_lg {
        v.push(PortDecl::stream_out::<Segment>(&format!("seg{k}")).doc("segments to LG k's slot FIFO"));
        v.push(
            PortDecl::stream_in::<FrameDone>(&format!("done{k}"), 4)
                .doc("frames fully ACKed on LG k")
                .optional(),
        );
        v.push(
            PortDecl::stream_in::<DataFrame>(&format!("rx{k}"), 8)
                .doc("frames LG k's RX delivered (whole, in PSN order): W, AR, R, B")
                .optional(),
        );
    }
    v.push(PortDecl::output::<u16>("ost").doc("W OST entries in use"));
    v.push(PortDecl::output::<u16>("r_ost").doc("R OST entries in use"));
    v.push(
        PortDecl::output::<u16>("mul_ost").doc("MUL OST entries in use (multicast bursts awaiting their group's B)"),
    );
    v.push(PortDecl::output::<u8>("ar_fill").doc("AR entries held in the AR packing buffer"));
    v.push(PortDecl::output::<u8>("b_fill").doc("B entries held in the B packing buffer"));
    v.push(PortDecl::output::<u16>("r_bufs").doc("R buffers being filled (completer)"));
    v.push(PortDecl::output::<u8>("r_beat").doc("R OST index of the last read beat (interleaving)"));
    v.push(PortDecl::output::<u8>("r_sent").doc("R OST index of the last R frame sent"));
    for (name, _) in RX_VCS {
        v.push(PortDecl::output::<u16>(&format!("rx_{name}")).doc("frames held in this RX VC buffer"));
    }
    v.push(
        PortDecl::output::<u8>("rx_pause")
            .doc("back-pressure per RX VC buffer (bit 0 REQ, 1 RSP, 2 MUL): high watermark on, low off"),
    );
    v
}

/// The RX VC buffers: name and the flits each holds.
const RX_VCS: [(&str, [FlitKind; 2]); 3] = [
    ("req", [FlitKind::WData, FlitKind::Ar]),
    ("rsp", [FlitKind::R, FlitKind::B]),
    ("mul", [FlitKind::Mul, FlitKind::Mul]),
];

fn rx_vc(k: FlitKind) -> usize {
    RX_VCS
        .iter()
        .position(|(_, ks)| ks.contains(&k))
        .expect("every kind has a buffer")
}

/// One RX VC buffer: frames waiting for their AXI channel buffer.
struct RxVc {
    q: VecDeque<DataFrame>,
    /// Capacity, high and low watermarks, frames.
    cap: u32,
    high: u32,
    low: u32,
    paused: bool,
    paused_since: Cycle,
    level: Out<u16>,
    peak: CounterId,
    xoff: CounterId,
    paused_cycles: CounterId,
    over: CounterId,
}

/// The AXI channel buffers a delivered frame goes through: W (AW+W bursts, multicast copies),
/// AR, R, B (seed 002 «AXI 通道 Buffer»; AW travels with its W here).
const AXI_CHANS: [&str; 4] = ["w", "ar", "r", "b"];

fn axi_chan(k: FlitKind) -> usize {
    match k {
        FlitKind::WData | FlitKind::Mul => 0,
        FlitKind::Ar => 1,
        FlitKind::R => 2,
        FlitKind::B => 3,
    }
}

/// One AXI channel buffer: frames (bytes `held`) waiting for the bus, the head's bytes still to
/// go.
struct AxiChan {
    q: VecDeque<DataFrame>,
    held: u32,
    head_left: u32,
    peak: CounterId,
}

/// The ITLV hash: a splitmix64 avalanche over the three inputs (never a linear mix).
pub fn itlv_hash(txn: u64, frame_seq: u32, qp: QpId) -> u64 {
    splitmix64(splitmix64(txn) ^ ((frame_seq as u64) << 16 | qp.value() as u64))
}

/// Segment ids of flits (AR, R, B) have this bit set: their ACKs are not a transaction's.
const FLIT_BIT: u64 = 1 << 63;

/// With `rsp_own_qp`, R and B frames go on the request's QP id with this bit set: their own PSN
/// space, which the RC Link keys per (LG, dst, QP).
const RSP_QP_BIT: u16 = 1 << 9;

struct TxnState {
    issued: Cycle,
    op: TxnOp,
    bursts_left: u32,
    bytes: u64,
    flow: u16,
    /// A burst was given up (its QP went fatal): the transaction is lost.
    failed: bool,
    /// Bursts done (bit per burst), so a duplicate report is caught, not counted.
    done_bits: Vec<u64>,
}

/// A W OST entry: the burst it holds and what has come back for it.
#[derive(Clone, Copy)]
struct WEntry {
    txn: u64,
    seq: u32,
    acked: bool,
    responded: bool,
}

/// An R OST entry.
#[derive(Clone, Copy)]
struct REntry {
    txn: u64,
    seq: u32,
    bytes: u32,
}

/// A MUL OST entry: a multicast burst waiting for the B of every member of its group.
#[derive(Clone, Copy)]
struct MEntry {
    txn: u64,
    seq: u32,
    bytes: u32,
    /// Members whose B has not come back.
    left: u32,
    /// The cycle it is given up at (`mul_timeout` after it left).
    deadline: Cycle,
}

/// A read burst waiting for an R OST entry.
struct ReadBurst {
    ready: Cycle,
    txn: u64,
    seq: u32,
    dst: ChipId,
    qp: QpId,
    bytes: u32,
}

/// A read being answered by the completer's slave.
struct RJob {
    src: ChipId,
    qp: QpId,
    ost: u8,
    bytes: u32,
    filled: u32,
    start: Cycle,
    /// Arrival order of its AR.
    order: u64,
}

struct FlowCounters {
    txns: CounterId,
    bytes: CounterId,
    lat_sum: CounterId,
    lat_max: CounterId,
    first: CounterId,
    last: CounterId,
}

struct Counters {
    issued: CounterId,
    done: CounterId,
    segments: CounterId,
    frames_done: CounterId,
    bytes_done: CounterId,
    lat_sum: CounterId,
    lat_max: CounterId,
    ost_peak: CounterId,
    first: CounterId,
    last: CounterId,
    dup: CounterId,
    failed: CounterId,
    bytes_failed: CounterId,
    last_failed: CounterId,
    writes_done: CounterId,
    write_lat_sum: CounterId,
    write_lat_max: CounterId,
    reads_done: CounterId,
    read_bytes: CounterId,
    read_lat_sum: CounterId,
    read_lat_max: CounterId,
    r_ost_peak: CounterId,
    frames_acked: CounterId,
    b_received: CounterId,
    b_stale: CounterId,
    r_received: CounterId,
    wdata_in: CounterId,
    rdata_in: CounterId,
    w_in_first: CounterId,
    ar_in_first: CounterId,
    r_in_first: CounterId,
    ar_in: CounterId,
    r_sent: CounterId,
    r_ooo: CounterId,
    r_bufs_peak: CounterId,
    rsp_acked: CounterId,
    mul_done: CounterId,
    mul_lat_sum: CounterId,
    mul_lat_max: CounterId,
    mul_timeouts: CounterId,
    mul_ost_peak: CounterId,
    mul_b: CounterId,
    mul_in: CounterId,
    mul_copy: CounterId,
    mul_copy_failed: CounterId,
}

/// The block.
pub struct Paxi {
    p: Params,
    txn_in: StreamIn<Txn>,
    seg_out: Vec<StreamOut<Segment>>,
    done_in: Vec<StreamIn<FrameDone>>,
    rx_in: Vec<StreamIn<DataFrame>>,
    ost_sig: Out<u16>,
    r_ost_sig: Out<u16>,
    mul_ost_sig: Out<u16>,
    ar_fill_sig: Out<u8>,
    b_fill_sig: Out<u8>,
    r_bufs_sig: Out<u16>,
    r_beat_sig: Out<u8>,
    r_sent_sig: Out<u8>,
    /// Per LG k, three queues: `3k` AW+W bursts (which wait for a W OST entry), `3k + 1` AR,
    /// R and B flits (which never do: the AR, R and B buffers are PAXI's own, and a B must not
    /// wait behind a write that waits for a B), `3k + 2` multicast bursts (which wait for a
    /// MUL OST entry). Entries (ready cycle, chip-wide segment number, segment), in (ready,
    /// number) order.
    queues: Vec<VecDeque<(Cycle, u64, Segment)>>,
    /// Segments created so far (their order).
    seq: u64,
    /// Flits (AR, R, B) made so far: their segment ids.
    flits: u64,
    txns: BTreeMap<u64, TxnState>,
    /// W OST table by index, its free indices (a stack) and the index of each held burst.
    w_tab: Vec<Option<WEntry>>,
    w_free: Vec<u8>,
    w_index: HashMap<(u64, u32), u8>,
    /// R OST table by index and its free indices.
    r_tab: Vec<Option<REntry>>,
    r_free: Vec<u8>,
    /// MUL OST table by index and its free indices.
    m_tab: Vec<Option<MEntry>>,
    m_free: Vec<u8>,
    /// Read bursts in issue order, waiting for their ready cycle and an R OST entry.
    reads: VecDeque<ReadBurst>,
    /// AR flits in flight: their entries, so a flit lost to a fatal QP fails its reads.
    ar_flits: BTreeMap<u64, PaxiFlit>,
    ar_pack: Packer,
    b_pack: Packer,
    ar_c: PackCounters,
    b_c: PackCounters,
    /// Completer: B responses (due, requester, qp, the B entry), due order.
    b_due: VecDeque<(Cycle, ChipId, QpId, PackedEntry)>,
    /// Completer: reads being filled (at most `r_bufs`, arrival order) and those waiting.
    r_jobs: Vec<RJob>,
    r_wait: VecDeque<RJob>,
    /// Round-robin position among `r_jobs` for the next beat.
    r_rr: usize,
    ar_order: u64,
    rr: u64,
    rx_vcs: Vec<RxVc>,
    axi_chans: Vec<AxiChan>,
    rx_pause: Out<u8>,
    c: Counters,
    flows: Vec<FlowCounters>,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.num_lg == 0 || p.num_lg > 8 {
        return Err(format!("num_lg {} out of range 1..=8", p.num_lg));
    }
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
    if p.slave_latency > 1_000_000 {
        return Err(format!(
            "slave_latency = {}: must be in 0..=1000000 ns",
            p.slave_latency
        ));
    }
    if p.r_bufs == 0 || p.r_bufs > 4096 {
        return Err(format!("r_bufs {} out of range 1..=4096", p.r_bufs));
    }
    if p.beat_bytes == 0 || p.beat_bytes > 4096 {
        return Err(format!("beat_bytes {} out of range 1..=4096", p.beat_bytes));
    }
    if p.slave_bytes_per_cycle == 0 || p.slave_bytes_per_cycle > 1 << 20 {
        return Err(format!(
            "slave_bytes_per_cycle {} out of range 1..=1048576",
            p.slave_bytes_per_cycle
        ));
    }
    for (name, n) in [
        ("rx_req_frames", p.rx_req_frames),
        ("rx_rsp_frames", p.rx_rsp_frames),
        ("rx_mul_frames", p.rx_mul_frames),
    ] {
        if n == 0 || n > 4096 {
            return Err(format!("{name} {n} out of range 1..=4096"));
        }
    }
    if p.rx_rtt_frames > 4096 {
        return Err(format!("rx_rtt_frames {} out of range 0..=4096", p.rx_rtt_frames));
    }
    if p.axi_channel_bytes == 0 || p.axi_channel_bytes > 1 << 24 {
        return Err(format!(
            "axi_channel_bytes {} out of range 1..=16777216",
            p.axi_channel_bytes
        ));
    }
    if p.rx_axi_bytes_per_cycle > 1 << 20 {
        return Err(format!(
            "rx_axi_bytes_per_cycle {} out of range 0..=1048576",
            p.rx_axi_bytes_per_cycle
        ));
    }
    let mut rx_vcs = Vec::new();
    for (i, n) in [p.rx_req_frames, p.rx_rsp_frames, p.rx_mul_frames]
        .into_iter()
        .enumerate()
    {
        let name = RX_VCS[i].0;
        let high = n + p.rx_rtt_frames;
        let low = p.rx_xon_frames.unwrap_or(n);
        if low >= high {
            return Err(format!(
                "rx_xon_frames {low} must be below the {name} high watermark {high} (N + 1 RTT)"
            ));
        }
        rx_vcs.push(RxVc {
            q: VecDeque::new(),
            cap: n + 2 * p.rx_rtt_frames,
            high,
            low,
            paused: false,
            paused_since: 0,
            level: b.output(&format!("rx_{name}"))?,
            peak: b.counter(&format!("rx_{name}_peak")),
            xoff: b.counter(&format!("rx_{name}_xoff")),
            paused_cycles: b.counter(&format!("rx_{name}_paused_cycles")),
            over: b.counter(&format!("rx_{name}_held_back")),
        });
    }
    if p.ar_pack.kind != FlitKind::Ar || p.b_pack.kind != FlitKind::B {
        return Err("ar_pack.kind must be `ar` and b_pack.kind `b`".into());
    }
    let ar_pack = Packer::new(&p.ar_pack).map_err(|e| format!("ar_pack: {e}"))?;
    let b_pack = Packer::new(&p.b_pack).map_err(|e| format!("b_pack: {e}"))?;
    let mut seg_out = Vec::new();
    let mut done_in = Vec::new();
    let mut rx_in = Vec::new();
    for k in 0..p.num_lg {
        seg_out.push(b.stream_out(&format!("seg{k}"))?);
        done_in.push(b.stream_in(&format!("done{k}"))?);
        rx_in.push(b.stream_in(&format!("rx{k}"))?);
    }
    let flows = (0..p.flows)
        .map(|f| FlowCounters {
            txns: b.counter(&format!("flow{f}_txns")),
            bytes: b.counter(&format!("flow{f}_bytes")),
            lat_sum: b.counter(&format!("flow{f}_lat_sum")),
            lat_max: b.counter(&format!("flow{f}_lat_max")),
            first: b.counter(&format!("flow{f}_first")),
            last: b.counter(&format!("flow{f}_last")),
        })
        .collect();
    let c = Counters {
        issued: b.counter("txns_issued"),
        done: b.counter("txns_done"),
        segments: b.counter("segments"),
        frames_done: b.counter("frames_done"),
        bytes_done: b.counter("bytes_done"),
        lat_sum: b.counter("latency_sum"),
        lat_max: b.counter("latency_max"),
        ost_peak: b.counter("ost_peak"),
        first: b.counter("first_issue_at"),
        last: b.counter("last_done_at"),
        dup: b.counter("duplicate_done"),
        failed: b.counter("txns_failed"),
        bytes_failed: b.counter("bytes_failed"),
        last_failed: b.counter("last_failed_txn"),
        writes_done: b.counter("writes_done"),
        write_lat_sum: b.counter("write_lat_sum"),
        write_lat_max: b.counter("write_lat_max"),
        reads_done: b.counter("reads_done"),
        read_bytes: b.counter("read_bytes_done"),
        read_lat_sum: b.counter("read_lat_sum"),
        read_lat_max: b.counter("read_lat_max"),
        r_ost_peak: b.counter("r_ost_peak"),
        frames_acked: b.counter("frames_acked"),
        b_received: b.counter("b_received"),
        b_stale: b.counter("b_stale"),
        r_received: b.counter("r_received"),
        wdata_in: b.counter("wdata_bytes_in"),
        rdata_in: b.counter("rdata_bytes_in"),
        w_in_first: b.counter("w_in_first_at"),
        ar_in_first: b.counter("ar_in_first_at"),
        r_in_first: b.counter("r_in_first_at"),
        ar_in: b.counter("ar_in"),
        r_sent: b.counter("r_frames_sent"),
        r_ooo: b.counter("r_out_of_order"),
        r_bufs_peak: b.counter("r_bufs_peak"),
        rsp_acked: b.counter("rsp_frames_acked"),
        mul_done: b.counter("multicasts_done"),
        mul_lat_sum: b.counter("mul_lat_sum"),
        mul_lat_max: b.counter("mul_lat_max"),
        mul_timeouts: b.counter("mul_timeouts"),
        mul_ost_peak: b.counter("mul_ost_peak"),
        mul_b: b.counter("mul_b_received"),
        mul_in: b.counter("mul_bytes_in"),
        mul_copy: b.counter("mul_copy_bytes"),
        mul_copy_failed: b.counter("mul_copy_bytes_failed"),
    };
    Ok(Box::new(Paxi {
        txn_in: b.stream_in("txn")?,
        seg_out,
        done_in,
        rx_in,
        ost_sig: b.output("ost")?,
        r_ost_sig: b.output("r_ost")?,
        mul_ost_sig: b.output("mul_ost")?,
        ar_fill_sig: b.output("ar_fill")?,
        b_fill_sig: b.output("b_fill")?,
        r_bufs_sig: b.output("r_bufs")?,
        r_beat_sig: b.output("r_beat")?,
        r_sent_sig: b.output("r_sent")?,
        queues: (0..3 * p.num_lg as usize).map(|_| VecDeque::new()).collect(),
        seq: 0,
        flits: 0,
        txns: BTreeMap::new(),
        w_tab: vec![None; p.w_ost as usize],
        // Stacks popped from the end: index 0 is taken first.
        w_free: (0..p.w_ost).rev().map(|i| i as u8).collect(),
        w_index: HashMap::with_capacity(p.w_ost as usize),
        r_tab: vec![None; p.r_ost as usize],
        r_free: (0..p.r_ost).rev().map(|i| i as u8).collect(),
        m_tab: vec![None; p.mul_ost as usize],
        m_free: (0..p.mul_ost).rev().map(|i| i as u8).collect(),
        reads: VecDeque::new(),
        ar_flits: BTreeMap::new(),
        ar_pack,
        b_pack,
        ar_c: PackCounters::bind(b, "ar_"),
        b_c: PackCounters::bind(b, "b_"),
        b_due: VecDeque::new(),
        r_jobs: Vec::with_capacity(p.r_bufs.min(256) as usize),
        r_wait: VecDeque::new(),
        r_rr: 0,
        ar_order: 0,
        rr: 0,
        rx_vcs,
        axi_chans: AXI_CHANS
            .iter()
            .map(|n| AxiChan {
                q: VecDeque::new(),
                held: 0,
                head_left: 0,
                peak: b.counter(&format!("axi_{n}_peak_bytes")),
            })
            .collect(),
        rx_pause: b.output("rx_pause")?,
        c,
        flows,
        p: p.clone(),
    }))
}

fn set_max(ctx: &mut Ctx<'_>, id: CounterId, v: u64) {
    if v > ctx.counter(id) {
        ctx.set_counter(id, v);
    }
}

fn set_first(ctx: &mut Ctx<'_>, id: CounterId) {
    if ctx.counter(id) == 0 {
        let now = ctx.now();
        ctx.set_counter(id, now + 1);
    }
}

impl Paxi {
    fn lg_for(&mut self, txn: u64, seq: u32, qp: QpId) -> u8 {
        (match self.p.itlv {
            Itlv::Hash => itlv_hash(txn, seq, qp) % self.p.num_lg as u64,
            Itlv::RoundRobin => {
                let l = self.rr % self.p.num_lg as u64;
                self.rr += 1;
                l
            }
            Itlv::Qp => splitmix64(qp.value() as u64) % self.p.num_lg as u64,
        }) as u8
    }

    /// Queues `seg` on its LG in (ready, age) order: a frame paced for later must not hold back
    /// another one that is ready now (no head-of-line blocking).
    fn enqueue(&mut self, ready: Cycle, seg: Segment) {
        let class = match seg.paxi.kind {
            FlitKind::WData => 0,
            FlitKind::Mul => 2,
            _ => 1,
        };
        let q = &mut self.queues[3 * seg.lg as usize + class];
        let at = q.partition_point(|&(r, n, _)| (r, n) <= (ready, self.seq));
        q.insert(at, (ready, self.seq, seg));
        self.seq += 1;
    }

    /// A flit (AR, R, B) for `dst` on `qp` (a response on its own QP with `rsp_own_qp`),
    /// ready `tx_latency` from now.
    fn send_flit(&mut self, now: Cycle, dst: ChipId, qp: QpId, bytes: u32, flit: PaxiFlit) -> u64 {
        let qp = if self.p.rsp_own_qp && flit.kind.is_response() {
            QpId::new(qp.value() | RSP_QP_BIT).expect("10 bits")
        } else {
            qp
        };
        let id = FLIT_BIT | self.flits;
        self.flits += 1;
        let lg = self.lg_for(id, 0, qp);
        let seg = Segment {
            txn: id,
            frame_seq: 0,
            dst,
            qp,
            bytes,
            lg,
            paxi: flit,
        };
        self.enqueue(now.saturating_add(self.p.tx_latency), seg);
        id
    }

    fn issue(&mut self, ctx: &mut Ctx<'_>, t: Txn) -> Result<(), String> {
        let now = ctx.now();
        let qp = QpId::from_cdma(t.cdma).map_err(|e| format!("transaction {}: {e}", t.id))?;
        if self.p.rsp_own_qp && qp.value() & RSP_QP_BIT != 0 {
            return Err(format!(
                "transaction {}: cdma {} (QP {}) with rsp_own_qp: requests must use QPs below {RSP_QP_BIT}",
                t.id,
                t.cdma,
                qp.value()
            ));
        }
        if t.id & FLIT_BIT != 0 {
            return Err(format!("transaction id {} out of range (below 2^63)", t.id));
        }
        let members = match (t.op, mcast_group(t.dst)) {
            (TxnOp::Multicast, Some(g)) => match self.p.groups.get(g as usize) {
                Some(m) => m.len() as u64,
                None => return Err(format!("transaction {}: multicast group {g} is not in `groups`", t.id)),
            },
            (TxnOp::Multicast, None) => {
                return Err(format!(
                    "transaction {}: a multicast to chip {}, not to a group address",
                    t.id, t.dst
                ))
            }
            (_, Some(g)) => return Err(format!("transaction {}: a {:?} to multicast group {g}", t.id, t.op)),
            _ => 0,
        };
        let mps = self.p.mps as u64;
        let bursts = t.bytes.div_ceil(mps).max(1);
        let pipeline = if t.op == TxnOp::Read { 0 } else { self.p.tx_latency };
        for i in 0..bursts {
            let bytes = (t.bytes - i * mps).min(mps) as u32;
            // Saturating: `bytes` is bounded only by the memory budget (`--max-memory` can be
            // huge), and i · MPS · 1000 wraps past 1.4e13 frames.
            let ready = pipeline.saturating_add(if t.milli_bytes_per_ns == 0 {
                now
            } else {
                now.saturating_add(
                    i.saturating_mul(mps)
                        .saturating_mul(1000)
                        .div_ceil(t.milli_bytes_per_ns),
                )
            });
            let seq = i as u32;
            match t.op {
                TxnOp::Write | TxnOp::Multicast => {
                    let lg = self.lg_for(t.id, seq, qp);
                    let kind = if t.op == TxnOp::Write {
                        FlitKind::WData
                    } else {
                        FlitKind::Mul
                    };
                    let seg = Segment {
                        txn: t.id,
                        frame_seq: seq,
                        dst: t.dst,
                        qp,
                        bytes,
                        lg,
                        paxi: PaxiFlit::data(kind, 0),
                    };
                    self.enqueue(ready, seg);
                }
                TxnOp::Read => self.reads.push_back(ReadBurst {
                    ready,
                    txn: t.id,
                    seq,
                    dst: t.dst,
                    qp,
                    bytes,
                }),
            }
        }
        if self
            .txns
            .insert(
                t.id,
                TxnState {
                    issued: now,
                    op: t.op,
                    bursts_left: bursts as u32,
                    bytes: t.bytes,
                    flow: t.flow,
                    failed: false,
                    done_bits: vec![0; (bursts as usize).div_ceil(64)],
                },
            )
            .is_some()
        {
            return Err(format!("transaction id {} issued twice", t.id));
        }
        ctx.count(self.c.issued, 1);
        ctx.count(self.c.mul_copy, t.bytes.saturating_mul(members));
        set_first(ctx, self.c.first);
        if let Some(f) = self.flows.get(t.flow as usize) {
            let first = f.first;
            set_first(ctx, first);
        }
        Ok(())
    }

    /// Burst `seq` of `txn` is done (or given up); the last one completes the transaction.
    fn burst_done(&mut self, ctx: &mut Ctx<'_>, txn: u64, seq: u32, failed: bool) {
        let now = ctx.now();
        // A report for an unknown transaction or a burst already done is a duplicate: counted
        // (the monitor fails the run on it) and otherwise ignored.
        let Some(t) = self.txns.get_mut(&txn) else {
            ctx.count(self.c.dup, 1);
            return;
        };
        let (w, b) = (seq as usize / 64, seq % 64);
        if t.done_bits.get(w).is_none_or(|x| x & (1 << b) != 0) {
            ctx.count(self.c.dup, 1);
            return;
        }
        t.done_bits[w] |= 1 << b;
        ctx.count(self.c.frames_done, 1);
        t.bursts_left -= 1;
        t.failed |= failed;
        if t.bursts_left > 0 {
            return;
        }
        let t = self.txns.remove(&txn).expect("present");
        if t.failed {
            // Lost to a fatal QP: counted apart, so the report can say which transactions died.
            ctx.count(self.c.failed, 1);
            ctx.count(self.c.bytes_failed, t.bytes);
            ctx.set_counter(self.c.last_failed, txn + 1);
            return;
        }
        let lat = now - t.issued;
        let c = &self.c;
        ctx.count(c.done, 1);
        ctx.count(c.bytes_done, t.bytes);
        ctx.count(c.lat_sum, lat);
        set_max(ctx, c.lat_max, lat);
        ctx.set_counter(c.last, now + 1);
        let (n, sum, max) = match t.op {
            TxnOp::Write => (c.writes_done, c.write_lat_sum, c.write_lat_max),
            TxnOp::Read => {
                ctx.count(c.read_bytes, t.bytes);
                (c.reads_done, c.read_lat_sum, c.read_lat_max)
            }
            TxnOp::Multicast => (c.mul_done, c.mul_lat_sum, c.mul_lat_max),
        };
        ctx.count(n, 1);
        ctx.count(sum, lat);
        set_max(ctx, max, lat);
        if let Some(f) = self.flows.get(t.flow as usize) {
            let (txns, bytes, lat_sum, lat_max, last) = (f.txns, f.bytes, f.lat_sum, f.lat_max, f.last);
            ctx.count(txns, 1);
            ctx.count(bytes, t.bytes);
            ctx.count(lat_sum, lat);
            set_max(ctx, lat_max, lat);
            ctx.set_counter(last, now + 1);
        }
    }

    /// Frees W OST entry `i`.
    fn free_w(&mut self, i: u8) {
        if let Some(e) = self.w_tab[i as usize].take() {
            self.w_index.remove(&(e.txn, e.seq));
            self.w_free.push(i);
        }
    }

    /// The RC Link ACKed (or gave up) a frame we sent.
    fn acked(&mut self, ctx: &mut Ctx<'_>, d: FrameDone) {
        if d.txn & FLIT_BIT != 0 {
            // An AR, R or B flit. A lost AR flit fails its reads; R and B answer someone
            // else's transactions, so they are only counted.
            ctx.count(self.c.rsp_acked, 1);
            if let Some(f) = self.ar_flits.remove(&d.txn) {
                if d.failed {
                    for e in f.packed() {
                        if let Some(r) = self.r_tab[e.ost() as usize].take() {
                            self.r_free.push(e.ost());
                            self.burst_done(ctx, r.txn, r.seq, true);
                        }
                    }
                }
            }
            return;
        }
        let Some(&i) = self.w_index.get(&(d.txn, d.frame_seq)) else {
            ctx.count(self.c.dup, 1);
            return;
        };
        let e = self.w_tab[i as usize].as_mut().expect("indexed");
        if e.acked {
            ctx.count(self.c.dup, 1);
            return;
        }
        e.acked = true;
        ctx.count(self.c.frames_acked, 1);
        if e.responded {
            // The B came first: the burst is done; a frame the RC Link gave up on after its
            // data arrived (a lost ACK, then MAX_RETRY) only frees the entry now.
            self.free_w(i);
        } else if d.failed || !self.p.b_response {
            self.free_w(i);
            self.burst_done(ctx, d.txn, d.frame_seq, d.failed);
        }
    }

    /// A frame delivered by an LG's RX: this chip's AXI side sees it.
    fn deliver(&mut self, ctx: &mut Ctx<'_>, f: DataFrame) {
        let now = ctx.now();
        match f.paxi.kind {
            FlitKind::WData => {
                ctx.count(self.c.wdata_in, f.frame_bytes as u64);
                set_first(ctx, self.c.w_in_first);
                if self.p.b_response {
                    let due = now.saturating_add(self.p.slave_latency);
                    self.b_due
                        .push_back((due, f.src, f.qp, PackedEntry::new(f.paxi.ost, 0)));
                }
            }
            FlitKind::Mul => {
                // A multicast copy: no ACK exists for TYPE2, so its B is always sent (whatever
                // `b_response` says), back to the source on the RSP side of TYPE1.
                ctx.count(self.c.mul_in, f.frame_bytes as u64);
                set_first(ctx, self.c.w_in_first);
                let due = now.saturating_add(self.p.slave_latency);
                self.b_due.push_back((due, f.src, f.qp, PackedEntry::mul_b(f.paxi.ost)));
            }
            FlitKind::Ar => {
                set_first(ctx, self.c.ar_in_first);
                for e in f.paxi.packed() {
                    ctx.count(self.c.ar_in, 1);
                    let job = RJob {
                        src: f.src,
                        qp: f.qp,
                        ost: e.ost(),
                        bytes: e.bytes(),
                        filled: 0,
                        start: now.saturating_add(self.p.slave_latency),
                        order: self.ar_order,
                    };
                    self.ar_order += 1;
                    self.r_wait.push_back(job);
                }
            }
            FlitKind::R => {
                set_first(ctx, self.c.r_in_first);
                ctx.count(self.c.r_received, 1);
                let i = f.paxi.ost;
                match self.r_tab.get(i as usize).copied().flatten() {
                    Some(r) => {
                        if r.bytes != f.frame_bytes {
                            ctx.violation(format!(
                                "R for R OST {i} carries {} bytes, its AR asked for {}",
                                f.frame_bytes, r.bytes
                            ));
                        }
                        ctx.count(self.c.rdata_in, f.frame_bytes as u64);
                        self.r_tab[i as usize] = None;
                        self.r_free.push(i);
                        self.burst_done(ctx, r.txn, r.seq, false);
                    }
                    None => ctx.violation(format!("R from chip {} for R OST {i}, which holds no read", f.src)),
                }
            }
            FlitKind::B => {
                for e in f.paxi.packed() {
                    ctx.count(self.c.b_received, 1);
                    let i = e.ost();
                    if e.is_mul() {
                        self.mul_b(ctx, i);
                        continue;
                    }
                    match self.w_tab.get_mut(i as usize).and_then(|x| x.as_mut()) {
                        Some(w) if !w.responded => {
                            w.responded = true;
                            let (txn, seq, acked) = (w.txn, w.seq, w.acked);
                            if acked {
                                self.free_w(i);
                            }
                            self.burst_done(ctx, txn, seq, false);
                        }
                        _ => ctx.count(self.c.b_stale, 1),
                    }
                }
            }
        }
    }

    /// A member's B for MUL OST entry `i`: the last of the group completes the burst (so its
    /// latency is the slowest member's, seed 002 «B 响应延迟 = max»).
    fn mul_b(&mut self, ctx: &mut Ctx<'_>, i: u8) {
        ctx.count(self.c.mul_b, 1);
        match self.m_tab.get_mut(i as usize).and_then(|x| x.as_mut()) {
            Some(m) if m.left > 0 => {
                m.left -= 1;
                if m.left == 0 {
                    let (txn, seq) = (m.txn, m.seq);
                    self.m_tab[i as usize] = None;
                    self.m_free.push(i);
                    self.burst_done(ctx, txn, seq, false);
                }
            }
            // Late (its burst timed out) or never sent.
            _ => ctx.count(self.c.b_stale, 1),
        }
    }

    /// Multicast bursts whose group has not answered by their deadline: given up, their
    /// transaction lost (TYPE2 has no retransmission).
    fn mul_expire(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        for i in 0..self.m_tab.len() {
            let Some(m) = self.m_tab[i] else { continue };
            if m.deadline > now {
                continue;
            }
            self.m_tab[i] = None;
            self.m_free.push(i as u8);
            ctx.count(self.c.mul_timeouts, 1);
            ctx.count(self.c.mul_copy_failed, u64::from(m.bytes) * u64::from(m.left));
            self.burst_done(ctx, m.txn, m.seq, true);
        }
    }

    /// Takes read bursts that are ready into the AR buffer while R OST entries last.
    fn issue_reads(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        while let Some(r) = self.reads.front() {
            if r.ready > now {
                break;
            }
            let Some(i) = self.r_free.pop() else { break };
            let r = self.reads.pop_front().expect("front");
            self.r_tab[i as usize] = Some(REntry {
                txn: r.txn,
                seq: r.seq,
                bytes: r.bytes,
            });
            self.ar_c.entry(ctx);
            self.ar_pack.push(now, r.dst, r.qp, PackedEntry::new(i, r.bytes));
            self.take_packed(ctx, now, true);
        }
        let used = (self.p.r_ost as usize - self.r_free.len()) as u64;
        set_max(ctx, self.c.r_ost_peak, used);
    }

    /// Turns the flits a packing buffer made into segments.
    fn take_packed(&mut self, ctx: &mut Ctx<'_>, now: Cycle, ar: bool) {
        while let Some(f) = if ar { self.ar_pack.pop() } else { self.b_pack.pop() } {
            if ar {
                self.ar_c.flit(ctx, &f);
            } else {
                self.b_c.flit(ctx, &f);
            }
            let id = self.send_flit(now, f.dst, f.qp, f.bytes, f.flit);
            if ar {
                self.ar_flits.insert(id, f.flit);
            }
        }
    }

    /// The completer's slave: Bs due now into the B buffer; read beats into the R buffers, in
    /// turn; full buffers out as R frames.
    fn slave(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        while self.b_due.front().is_some_and(|&(due, ..)| due <= now) {
            let (_, src, qp, e) = self.b_due.pop_front().expect("front");
            self.b_c.entry(ctx);
            self.b_pack.push(now, src, qp, e);
        }
        self.b_pack.poll(now);
        self.take_packed(ctx, now, false);
        while self.r_jobs.len() < self.p.r_bufs as usize {
            let Some(j) = self.r_wait.pop_front() else { break };
            self.r_jobs.push(j);
        }
        set_max(ctx, self.c.r_bufs_peak, self.r_jobs.len() as u64);
        let mut budget = self.p.slave_bytes_per_cycle;
        let mut idle = 0;
        // The last beat's R OST index, shown once per cycle (the wave shows the last beat).
        let mut last_beat = None;
        while budget > 0 && !self.r_jobs.is_empty() && idle < self.r_jobs.len() {
            if self.r_rr >= self.r_jobs.len() {
                self.r_rr = 0;
            }
            let j = &mut self.r_jobs[self.r_rr];
            if j.start > now {
                self.r_rr += 1;
                idle += 1;
                continue;
            }
            idle = 0;
            let beat = self.p.beat_bytes.min(j.bytes - j.filled).min(budget);
            j.filled += beat;
            budget -= beat;
            last_beat = Some(j.ost);
            if j.filled < j.bytes && beat > 0 {
                self.r_rr += 1;
                continue;
            }
            // Full: its R frame leaves now, in the order buffers fill.
            let j = self.r_jobs.remove(self.r_rr);
            if self.r_jobs.first().is_some_and(|e| e.order < j.order)
                || self.r_wait.front().is_some_and(|e| e.order < j.order)
            {
                ctx.count(self.c.r_ooo, 1);
            }
            ctx.count(self.c.r_sent, 1);
            self.r_sent_sig.set(j.ost);
            self.send_flit(now, j.src, j.qp, j.bytes, PaxiFlit::data(FlitKind::R, j.ost));
            if let Some(n) = self.r_wait.pop_front() {
                self.r_jobs.push(n);
            }
        }
        if let Some(ost) = last_beat {
            self.r_beat_sig.set(ost);
        }
    }

    /// Frames from the LGs' RX into the RX VC buffers, then out to the AXI channels at
    /// `rx_axi_bytes_per_cycle` each (all at once when 0); the watermarks set `rx_pause`. A
    /// buffer at capacity takes nothing more: frames wait in the RX (the RC Link RX buffer,
    /// whose credits the pause is holding back).
    fn receive(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        let rate = self.p.rx_axi_bytes_per_cycle;
        for k in 0..self.rx_in.len() {
            while let Some(vc) = self.rx_in[k].peek().map(|f| rx_vc(f.paxi.kind)) {
                if rate == 0 {
                    let f = self.rx_in[k].pop().expect("peeked");
                    self.deliver(ctx, f);
                    continue;
                }
                let v = &mut self.rx_vcs[vc];
                if v.q.len() as u32 >= v.cap {
                    ctx.count(v.over, 1);
                    break;
                }
                let f = self.rx_in[k].pop().expect("peeked");
                v.q.push_back(f);
                set_max(ctx, v.peak, v.q.len() as u64);
            }
        }
        if rate == 0 {
            return;
        }
        // VC buffers into the AXI channel buffers, in order, while the head's channel has room
        // (a channel holding nothing takes any frame, so an MPS larger than the channel still
        // passes).
        let cap = self.p.axi_channel_bytes;
        for v in self.rx_vcs.iter_mut() {
            while let Some(f) = v.q.front() {
                let ch = &mut self.axi_chans[axi_chan(f.paxi.kind)];
                if ch.held > 0 && ch.held + f.frame_bytes > cap {
                    break;
                }
                let f = v.q.pop_front().expect("front");
                if ch.q.is_empty() {
                    ch.head_left = f.frame_bytes;
                }
                ch.held += f.frame_bytes;
                set_max(ctx, ch.peak, ch.held as u64);
                ch.q.push_back(f);
            }
        }
        // Each AXI channel hands `rate` bytes a cycle to the bus, on its own handshake: a
        // channel the bus holds back (a full W) does not stop the others.
        for c in 0..self.axi_chans.len() {
            let mut budget = rate;
            loop {
                let ch = &mut self.axi_chans[c];
                if ch.q.is_empty() {
                    break;
                }
                let take = ch.head_left.min(budget);
                ch.head_left -= take;
                budget -= take;
                if ch.head_left > 0 {
                    break;
                }
                let f = ch.q.pop_front().expect("non-empty");
                ch.held -= f.frame_bytes;
                ch.head_left = ch.q.front().map_or(0, |n| n.frame_bytes);
                self.deliver(ctx, f);
                if budget == 0 {
                    break;
                }
            }
        }
        let mut pause = 0u8;
        for (i, v) in self.rx_vcs.iter_mut().enumerate() {
            let n = v.q.len() as u32;
            if !v.paused && n >= v.high {
                v.paused = true;
                v.paused_since = now;
                ctx.count(v.xoff, 1);
            } else if v.paused && n <= v.low {
                v.paused = false;
                ctx.count(v.paused_cycles, now - v.paused_since);
            }
            pause |= (v.paused as u8) << i;
            let lvl = n.min(u16::MAX as u32) as u16;
            if lvl != v.level.get() {
                v.level.set(lvl);
            }
        }
        if pause != self.rx_pause.get() {
            self.rx_pause.set(pause);
        }
    }

    /// Whether a segment of `kind` can take its OST entry now (AW+W: W OST; multicast: MUL
    /// OST; flits need none).
    fn has_ost(&self, kind: FlitKind) -> bool {
        match kind {
            FlitKind::WData => !self.w_free.is_empty(),
            FlitKind::Mul => !self.m_free.is_empty(),
            _ => true,
        }
    }

    /// When the slave next has work: a B due, a read starting, or beats to move next cycle.
    fn slave_next(&self, now: Cycle) -> Option<Cycle> {
        let b = self.b_due.front().map(|&(d, ..)| d);
        let r = self.r_jobs.iter().map(|j| j.start.max(now + 1)).min();
        [b, r, self.b_pack.deadline()].into_iter().flatten().min()
    }
}

impl Component for Paxi {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        for k in 0..self.done_in.len() {
            while let Some(d) = self.done_in[k].pop() {
                self.acked(ctx, d);
            }
        }
        self.receive(ctx, now);
        self.mul_expire(ctx, now);
        while let Some(t) = self.txn_in.pop() {
            if let Err(e) = self.issue(ctx, t) {
                ctx.violation(e);
            }
        }
        self.ar_pack.poll(now);
        self.issue_reads(ctx, now);
        self.take_packed(ctx, now, true);
        self.slave(ctx, now);
        // Push ready segments in segment order (the oldest first, whatever its LG), one per LG
        // stream per cycle; AW+W only while W OST allows. Order matters when OST is scarce:
        // scanning LGs in a fixed order would hand every freed entry to the lowest LG and
        // starve the rest.
        let mut pushed = 0u32;
        loop {
            let mut best: Option<(u64, usize)> = None;
            for qi in 0..self.queues.len() {
                let k = qi / 3;
                if pushed & (1 << k) != 0 || !self.seg_out[k].can_push() {
                    continue;
                }
                if let Some(&(ready, seq, s)) = self.queues[qi].front() {
                    if self.has_ost(s.paxi.kind) && ready <= now && best.is_none_or(|(b, _)| seq < b) {
                        best = Some((seq, qi));
                    }
                }
            }
            let Some((_, qi)) = best else { break };
            let k = qi / 3;
            let (_, _, mut seg) = self.queues[qi].pop_front().expect("front");
            if seg.paxi.kind == FlitKind::Mul {
                let i = self.m_free.pop().expect("room checked");
                seg.paxi.ost = i;
                let g = mcast_group(seg.dst).expect("checked at issue") as usize;
                self.m_tab[i as usize] = Some(MEntry {
                    txn: seg.txn,
                    seq: seg.frame_seq,
                    bytes: seg.bytes,
                    left: self.p.groups[g].len() as u32,
                    deadline: now.saturating_add(self.p.mul_timeout),
                });
            }
            if seg.paxi.kind == FlitKind::WData {
                let i = self.w_free.pop().expect("room checked");
                seg.paxi.ost = i;
                self.w_tab[i as usize] = Some(WEntry {
                    txn: seg.txn,
                    seq: seg.frame_seq,
                    acked: false,
                    responded: false,
                });
                self.w_index.insert((seg.txn, seg.frame_seq), i);
            }
            self.seg_out[k].push(seg);
            pushed |= 1 << k;
            ctx.count(self.c.segments, 1);
        }
        let mut next = Cycle::MAX;
        for qi in 0..self.queues.len() {
            let k = qi / 3;
            if let Some(&(ready, _, s)) = self.queues[qi].front() {
                if ready > now {
                    next = next.min(ready);
                } else if self.has_ost(s.paxi.kind) && self.seg_out[k].space() > u32::from(pushed & (1 << k) != 0) {
                    next = next.min(now + 1);
                }
                // Otherwise the LG's pop or a completion (freeing OST) wakes us.
            }
        }
        if let Some(r) = self.reads.front() {
            if r.ready > now {
                next = next.min(r.ready);
            }
            // Else it waits for an R OST entry: an R frame's arrival wakes us.
        }
        if self.rx_vcs.iter().any(|v| !v.q.is_empty()) || self.axi_chans.iter().any(|c| !c.q.is_empty()) {
            // The AXI channels drain every cycle while they hold frames; a full buffer that
            // left frames in an RX stream takes them as it drains.
            next = next.min(now + 1);
        }
        for t in [self.ar_pack.deadline(), self.slave_next(now)].into_iter().flatten() {
            next = next.min(t.max(now + 1));
        }
        let w_used = self.p.w_ost as usize - self.w_free.len();
        set_max(ctx, self.c.ost_peak, w_used as u64);
        let ost = w_used as u16;
        if ost != self.ost_sig.get() {
            self.ost_sig.set(ost);
        }
        let r_used = (self.p.r_ost as usize - self.r_free.len()) as u16;
        if r_used != self.r_ost_sig.get() {
            self.r_ost_sig.set(r_used);
        }
        let m_used = (self.p.mul_ost as usize - self.m_free.len()) as u16;
        if m_used != self.mul_ost_sig.get() {
            self.mul_ost_sig.set(m_used);
        }
        set_max(ctx, self.c.mul_ost_peak, m_used as u64);
        if let Some(d) = self.m_tab.iter().flatten().map(|m| m.deadline).min() {
            next = next.min(d.max(now + 1));
        }
        let (af, bf) = (self.ar_pack.fill(), self.b_pack.fill());
        if af != self.ar_fill_sig.get() {
            self.ar_fill_sig.set(af);
        }
        if bf != self.b_fill_sig.get() {
            self.b_fill_sig.set(bf);
        }
        let rb = self.r_jobs.len() as u16;
        if rb != self.r_bufs_sig.get() {
            self.r_bufs_sig.set(rb);
        }
        Wake::earliest((next != Cycle::MAX).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_spreads_one_transaction_over_all_lgs() {
        let qp = QpId::from_cdma(3).unwrap();
        let mut seen = [0u32; 8];
        for f in 0..4096 {
            seen[(itlv_hash(7, f, qp) % 8) as usize] += 1;
        }
        // Uniform within a few percent over 4096 frames.
        assert!(seen.iter().all(|&n| (460..=564).contains(&n)), "{seen:?}");
    }

    #[test]
    fn hash_differs_from_a_linear_mix() {
        // (txn + frame_seq) % 8 would phase-lock: consecutive frames land on consecutive LGs.
        let qp = QpId::from_cdma(0).unwrap();
        let lgs: Vec<u64> = (0..8).map(|f| itlv_hash(1, f, qp) % 8).collect();
        assert_ne!(lgs, (0..8).map(|f| (1 + f) % 8).collect::<Vec<_>>());
    }
}
