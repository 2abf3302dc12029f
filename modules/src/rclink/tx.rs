//! RC Link TX of one link group (LG) of one chip, as the composition of its RTL modules: the
//! slot FIFO ([`slot_fifo`](super::slot_fifo): slots, PSN, VC queues, ACK, Go-Back-N, retry
//! timeout, QP fatal), the bank arbiter ([`bank_arbiter`](super::bank_arbiter): weighted RR,
//! per-flow rule) with its gates — the DCQCN rate gate (a hook for now) and the CBFC controller
//! ([`cbfc`](super::cbfc), per packet) — and the MAC credit ([`mac_credit`](super::mac_credit)).
//!
//! Seed 000 «TX 侧设计» («Slot 管理», «PSN 管理», «VC 仲裁», «CBFC 流控», «事件粒度», «打包延迟与
//! MAC Credit», «Go-Back-N 重传»), appendix C «诊断计数器» and «TX 参数»; seed 002 §5.4 (gate
//! order). Every piece of state here belongs to this one LG (seed: «作用域说明»).
//!
//! ```text
//!                       +------------------------------------------------------------+
//!  seg        ==(1)==>  | slot_fifo ──VC queues──> arbiter ─ rate gate ─ cbfc ─ mac_credit | ==> frame : stream<DataFrame> (to the MAC)
//!  ctrl       ==(8)==>  |   ▲ ACK/NAK/timeout (Go-Back-N)          ▲ credit    ▲ credit     | ==> done  : stream<FrameDone> (to PAXI)
//!  credit     ==(8)==>  |   └──────────────────────────────────────┘           │            | --> slots_used, credit_view
//!  mac_credit ==(8)==>  | (from the MAC: MAC2TX credit) ─────────────────────────┘            | --> slot_fifo.*, arbiter.*, cbfc.*,
//!                       |   ctrl taken in ──> ACK-VC credit owed per sender (ack_cbfc)         |     mac_credit.available
//!                       +------------------------------------------------------------+ ==> ack_cr : stream<CreditMsg> (vc 5)
//! ```
//!
//! The modules are plain state machines called in order inside one tick, so the composite adds no
//! register at an internal boundary: its timing is the modules' own. Each module also exists as a
//! block of its own (`slot_fifo`, `bank_arbiter`, `cbfc`, `mac_credit` in `hwsim list`) for
//! module-form testbenches; here their state shows on the waves as nested scopes
//! (`chip0.lg3.tx.arbiter.ptr`, `….tx.slot_fifo.slots`, `….tx.cbfc.credits_d1`,
//! `….tx.mac_credit.available`).
//!
//! **One tick** (cycle n): ACK/NAK/CNP in `ctrl` (slots freed at n), credit returns, MAC credit
//! returns, due retry timeouts, then segments while slots last (a segment freed room for at n is
//! taken at n), one `FrameDone`, then — if anything changed since the last round — one
//! arbitration round: skipped (`diag_arb_tx_busy`) without a MAC credit; else the arbiter visits
//! the VC queues from its pointer, and within a VC the flows' head frames, rate gate first, then
//! the CBFC per-packet rule: a frame sends the run of its WaitGrant packets that the credits admit
//! one by one (all of them when credit is plenty; the rest waits at its place in the queue). A
//! grant takes a MAC credit, charges CBFC, moves the slots to WaitAck, starts the retry timer and
//! pushes the frame (visible to the MAC at n+1). At most one grant per cycle.
//!
//! **MAC credit**: with the default single credit, the next round runs when the MAC gives the
//! credit back, two cycles before its serializer frees (see `mac_tx`), so the next frame is chosen
//! then — not while the previous one is still being serialized — and CBFC is charged then.
//!
//! **TYPE2 (multicast)** (seed 002 «多播双重流控», «RC Link 资源» TYPE2 column): a segment whose
//! PAXI kind is `Mul` takes no slot and gets no PSN (no Go-Back-N: reliability is FEC's). It
//! waits in the TYPE2 queue (`type2_queue`, 16) and is sent whole, as one frame to its group
//! address, when both gates pass: every member's TYPE2 CBFC ledger (`type2_credits` 2048 each,
//! the same per-packet rule and credit size as TYPE1, returns on `CreditMsg.vc` 4) admits all
//! its packets, and a multicast MAC TX credit is free (`mul_mac_credits`: TYPE2 frames in the
//! MAC's replication buffer; back when the MAC returns that frame's MAC2TX credit — the MAC
//! frees frames in order). TYPE2 is the arbiter's fifth VC (MUL, weight `vc_weights[4]`, 256):
//! while TYPE1 has frames queued, TYPE2 sends up to that many frames in a row, then TYPE1 gets
//! one grant. Its frames carry `type2_priority` (0, seed 003's TYPE2 class) in their header,
//! are never ECN-capable (TYPE2 has its own rate limit, SET_TYPE2_RATE, not DCQCN; not
//! modelled), and report no `FrameDone` (nothing ACKs them: PAXI completes them by B).
//! Counters `type2_frames_sent`, `type2_payload_bytes_sent`, `type2_credit_block`,
//! `type2_mac_block`, `type2_queue_peak` (the frames also count in `frames_sent` and the byte
//! counters; `credits_outstanding` includes the TYPE2 ledgers); waves `type2.queue`,
//! `type2.mac_credit`.
//!
//! **ACK-VC credit return** (`ack_cbfc`; seed 002 «CBFC 详细行为» `type1_ack_cbfc`, see
//! `ack_cbfc`): every ACK, NAK and CNP taken in from `ctrl` frees its place in this LG's ACK
//! buffer, so its credit goes back to the RX that sent it on the `ack_cr` stream (vc 5), summed
//! per sender, one message per cycle, in the cycle it was taken in if the stream has room.
//! Counter `ack_credits_returned`. `cbfc_vc_enable` bit 5 and `stop_cbfc` act on the RX that
//! sends on the VC (the system copies them there).
//!
//! **Counters**: `diag_arb_calls`, `diag_arb_tx_busy` (rounds skipped for want of a MAC credit),
//! `diag_credit_block`, `diag_rate_block`, `diag_slot_full`, `diag_nak_processed`,
//! `diag_max_retry_hit`, `diag_nak_retransmit_total`, `diag_timeout`,
//! `diag_timeout_retransmit_total`, `segments_accepted`, `frames_sent`, `pkts_sent`,
//! `payload_bytes_sent`, `wire_bytes_sent` (the four count resends too), `acks_received`,
//! `acks_ignored`, `cnp_received`, `ctrl_latency_max` and `credit_latency_max` (ns from the
//! receiver's send, `Ctrl::sent_at` and `CreditMsg::sent_at`), `rtt_max` (ns from our grant of a
//! packet to the ACK or NAK that echoes its RH timestamp), `frames_done`,
//! `frames_failed`, `slots_peak`; end-of-run gauges `slots_in_use` and `credits_outstanding`
//! (both 0 when every frame was ACKed and every credit returned), `fatal_qp`, `fatal_at`;
//! DCQCN: `cnp_passed`, `cnp_filtered` (by CNP MERGE), `rate_increases`, `dcqcn_recoveries`
//! (flows back at line rate after a cut) and `dcqcn_recovered_at` (the cycle of the last),
//! gauges `dcqcn_rate_min_milli` (the lowest rate any flow was cut to, milli-bytes/ns) and
//! `dcqcn_flows_limited` (flows below line rate now); the state of the flow that changed last
//! on `tx.dcqcn.{qp, rate, alpha, state}`. Per flow, for the flows (dst, qp) named in
//! `report_flows` (at most 64; none by default): `flow_d{dst}_q{qp}_rate_milli` (R_C now,
//! milli-bytes/ns), `…_rate_min_milli` (the lowest it was cut to), `…_state` (0 NORMAL,
//! 1 CONGESTED, 2 RECOVERED: back at line rate, timer stopped, no send since), `…_cuts` (CNPs
//! that passed CNP MERGE) and `…_recovered_at` (the cycle it last got back to line rate, 0 if
//! never cut); a flow that never sent on this LG shows the reset state (line rate, NORMAL, 0).
//! They are written only when they change (a flow table lookup per named flow at creation, no
//! search per cycle).
//!
//! **Deviations and simplifications** (the modules' headers list their own):
//! - CBFC's «高级特性» switches are `dyn_uf_limit`, `cbfc_vc_enable` and `stop_cbfc` (see `cbfc`).
//! - Zero-byte packets cost no credit and bypass the CBFC gate (SPEC: zero-byte packets consume
//!   and return no credit; charging them would leak credit).
//! - The rate gate is DCQCN per flow ([`dcqcn`](super::dcqcn)) behind CNP MERGE
//!   ([`cnp_merge`](super::cnp_merge)): a CNP that passes the merge cuts its flow's rate; a
//!   flow below line rate is paced (its next frame waits until the last one's wire bytes have
//!   left at the current rate); the round that finds it blocked counts `diag_rate_block` and
//!   the block wakes exactly at its ready time. CNP MERGE keys on the QP id per LG (see its
//!   header). `rate_control: false` turns the gate off.
//! - `DataFrame.hdr` says what a switch parses (seed 003 «报文格式»): `frame_format` (Standard
//!   by default), a VLAN tag if `vlan` with PCP `data_priority` (2, REQ data), and on Standard
//!   the DSCP class selector `data_priority << 3`; PAXI responses (R, B) carry `rsp_priority`
//!   (1, RSP) instead (docs/spec-findings.md finding 10). `DataFrame.ecn` is ECT(0) on Standard
//!   (the only format with an IP header, so switches may mark it), Not-ECT on the AFH formats.
//!   `pkt_ovhd` stays its own parameter (the spec's HEADER_OVERHEAD 50 is Standard's header;
//!   set it to the layout's, e.g. 22 for AFH_GEN1). `DataFrame.sent_at` is the grant cycle (the
//!   MAC restamps it).
//! - Misrouted inputs (a segment for another LG, ctrl/credit for another chip or LG, a data
//!   opcode on `ctrl`, a credit for VC > 3) and segments that can never be sent (more packets
//!   than slots or than 255, a packet costing more than `initial_credits − uf_limit`) are
//!   protocol violations.
//! - `credit_view` shows the last ledger change of a cycle when there were two (a return and a
//!   grant).
//! - The frame stream's room is a second condition besides the MAC credit (a testbench sink may
//!   be slower than the credits say). "The stream's space changed" is taken as "the MAC took a
//!   frame" (space grew beyond what our own push left); a grant is followed by a round next cycle
//!   only if credit and room remain, so `--no-skip` runs no extra rounds.
//! - The retry timeout («超时重传») is implemented, with its own counters; MAX_RETRY makes the QP
//!   fatal (seed 002 L3).

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{
    mcast_group, ChipId, CreditMsg, CreditSize, Ctrl, DataFrame, Ecn, FlitKind, FrameDone, FrameFormat, FrameLayout,
    HeaderTags, LgId, Opcode, Psn, QpId, Rh, Segment, UInt,
};
use serde::{Deserialize, Serialize};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::ack_cbfc::AckReturn;
use super::bank_arbiter::{ArbiterView, BankArbiter, Gate};
use super::cbfc::{Cbfc, CbfcMode, CbfcView, MAX_VIEW_DSTS};
use super::cnp_merge::{self, CnpMerge};
use super::dcqcn::{self, Dcqcn};
use super::mac_credit::MacCredit;
use super::slot_fifo::{self, SlotCounters, SlotFifo, SlotView};

pub use super::bank_arbiter::NUM_VC;
pub use super::cbfc::MAX_CREDITS;
pub use super::slot_fifo::MAX_SLOTS;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// The ones it shares with its modules' blocks (`diag_arb_calls`, `diag_credit_block`,
/// `credits_outstanding`) and the slot FIFO's and ACK-VC return's are in those modules' tables.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "diag_arb_tx_busy",
        "events",
        "arbitration rounds skipped for want of a MAC credit (or of room on `frame`)",
    ),
    CounterDecl::new(
        "diag_rate_block",
        "events",
        "flow heads a round found blocked by the DCQCN rate gate (pacing)",
    ),
    CounterDecl::new(
        "frames_sent",
        "frames",
        "frames pushed on `frame` (TYPE1 grants, resends and TYPE2 included)",
    ),
    CounterDecl::new("pkts_sent", "packets", "packets in the frames sent (resends included)"),
    CounterDecl::new(
        "payload_bytes_sent",
        "bytes",
        "payload bytes of the frames sent (resends included)",
    ),
    CounterDecl::new(
        "wire_bytes_sent",
        "bytes",
        "wire bytes (payload + per-packet overhead) of the frames sent",
    ),
    CounterDecl::new("acks_received", "messages", "ACKs (not NAKs) taken in on `ctrl`"),
    CounterDecl::new(
        "acks_ignored",
        "messages",
        "ACKs that acknowledged nothing, and NAKs for a flow that never sent",
    ),
    CounterDecl::new("cnp_received", "messages", "CNPs taken in on `ctrl`"),
    CounterDecl::new(
        "ctrl_latency_max",
        "ns",
        "longest control-path latency: pop from `ctrl` − the RX's `Ctrl::sent_at`",
    ),
    CounterDecl::new(
        "credit_latency_max",
        "ns",
        "longest credit-return latency: pop from `credit` − `CreditMsg::sent_at`",
    ),
    CounterDecl::new(
        "rtt_max",
        "ns",
        "longest round trip: our grant of a packet to the ACK/NAK echoing its RH timestamp",
    ),
    CounterDecl::new(
        "cnp_passed",
        "messages",
        "CNPs that passed CNP MERGE and cut their flow's rate",
    ),
    CounterDecl::new(
        "cnp_filtered",
        "messages",
        "CNPs that CNP MERGE filtered (their QP had one within timer_thr)",
    ),
    CounterDecl::new(
        "rate_increases",
        "events",
        "DCQCN rate_increase steps (byte counter or recovery timer)",
    ),
    CounterDecl::new(
        "dcqcn_recoveries",
        "events",
        "times a flow got back to line rate after a cut",
    ),
    CounterDecl::new(
        "dcqcn_recovered_at",
        "cycle",
        "cycle of the last recovery to line rate (0 = none)",
    ),
    CounterDecl::new(
        "dcqcn_rate_min_milli",
        "milli-bytes/ns",
        "gauge: the lowest rate any flow was cut to (line rate until a cut)",
    ),
    CounterDecl::new(
        "dcqcn_flows_limited",
        "flows",
        "gauge: flows below line rate (CONGESTED) now; 0 at the end = all recovered",
    ),
    CounterDecl::new(
        "type2_frames_sent",
        "frames",
        "TYPE2 (multicast) frames sent, one per segment, to the group address",
    ),
    CounterDecl::new(
        "type2_payload_bytes_sent",
        "bytes",
        "payload bytes of the TYPE2 frames sent",
    ),
    CounterDecl::new(
        "type2_credit_block",
        "events",
        "TYPE2 grant attempts refused: a member's TYPE2 ledger lacked credit",
    ),
    CounterDecl::new(
        "type2_mac_block",
        "events",
        "TYPE2 grant attempts refused: no multicast MAC TX credit free",
    ),
    CounterDecl::new(
        "type2_queue_peak",
        "frames",
        "the most TYPE2 segments waiting in the TYPE2 queue at once",
    ),
    CounterDecl::new(
        "flow_d*_q*_rate_milli",
        "milli-bytes/ns",
        "gauge: R_C of the `report_flows` flow (dst, qp) now",
    ),
    CounterDecl::new(
        "flow_d*_q*_rate_min_milli",
        "milli-bytes/ns",
        "gauge: the lowest rate that flow was cut to",
    ),
    CounterDecl::new(
        "flow_d*_q*_state",
        "state",
        "gauge: that flow's DCQCN state: 0 NORMAL, 1 CONGESTED, 2 RECOVERED",
    ),
    CounterDecl::new(
        "flow_d*_q*_cuts",
        "messages",
        "CNPs of that flow that passed CNP MERGE (rate cuts)",
    ),
    CounterDecl::new(
        "flow_d*_q*_recovered_at",
        "cycle",
        "cycle that flow last got back to line rate (0 = never cut)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[
    COUNTERS,
    super::slot_fifo::COUNTERS,
    super::bank_arbiter::COUNTERS,
    super::cbfc::COUNTERS,
    super::ack_cbfc::RETURN_COUNTERS,
];

/// Parameters (seed 000 appendix C «TX 参数»).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (`DataFrame.src`, `credit_view.src`).
    pub chip: ChipId,
    /// This link group's index, 0..=7.
    pub lg: LgId,
    /// Slot pool size TYPE1_OST, in packets, 1..=2047.
    pub slots: u32,
    /// Largest packet payload MAX_PAYLOAD, bytes, 1..=65535: frames are split into packets of
    /// this size, the Go-Back-N unit.
    pub max_payload: u32,
    /// Per-packet header overhead HEADER_OVERHEAD, bytes, 0..=511 (the hardware PktOvhd
    /// register is 10-bit signed; negative values are not modelled).
    pub pkt_ovhd: u32,
    /// Bytes per CBFC credit: 32, 64, 128, 256, 1024 or 2048.
    pub credit_size: u32,
    /// CREDIT_UF_LIMIT, credits kept in reserve: a packet goes only if
    /// `remaining ≥ cost + uf_limit`; 1..=7.
    pub uf_limit: u32,
    /// INITIAL_CREDIT per (dst, vc), credits, uf_limit+1..=32767 (15-bit counter).
    pub initial_credits: u32,
    /// dyn_uf_limit_cbfc_en: the CBFC dynamic lower limit (default off; see `cbfc`).
    pub dyn_uf_limit: bool,
    /// software_ctrl_cbfc_vc_status: bit v = 0 stops VC v: banks 0..3, bit 4 TYPE2, bit 5 the
    /// ACK + CNP VC (which the RX sends on: the system copies this to it); default 0xFF, all run.
    pub cbfc_vc_enable: u8,
    /// stop_cbfc_en: CBFC off altogether (default false).
    pub stop_cbfc: bool,
    /// Weighted-RR weights, frames per turn: banks 0..3, then MUL; each 1..=256.
    pub vc_weights: [u32; NUM_VC],
    /// MAX_RETRY: NAKs/timeouts in a row a flow may take; one more makes the QP fatal.
    pub max_retry: u32,
    /// RETRY_TIMEOUT_NS: cycles after a grant without ACK before it is resent (≥ 1).
    pub retry_timeout: u64,
    /// MAC2TX credits, 1..=8: frames handed to the MAC ahead of its serializer (the seed: one;
    /// the MAC's `credits` must match). A module testbench without a MAC may raise it.
    pub mac_credits: u32,
    /// Destinations 0..view_dsts get a `cbfc.credits_d{d}` signal on the waves, 0..=1024.
    pub view_dsts: u32,
    /// DCQCN rate control on (the seed: on; with no CNP it never blocks).
    pub rate_control: bool,
    /// DCQCN parameters (seed 000 appendix C «DCQCN 参数»).
    pub dcqcn: dcqcn::Params,
    /// CNP MERGE in front of the rate gate (seed 002).
    pub cnp_merge: cnp_merge::Params,
    /// Frame format of this link's data frames (seed 003 «报文格式»): `standard` (the only one
    /// a switch can ECN-mark), `afh_gen1`, `afh_gen2_16b`, `afh_lite`. `pkt_ovhd` is set apart
    /// (the spec's HEADER_OVERHEAD 50 is Standard's header).
    pub frame_format: FrameFormat,
    /// A VLAN tag on the data frames, its PCP = `data_priority` (not with `afh_lite`).
    pub vlan: bool,
    /// Priority of the data frames (REQ data: 2 in seed 003's mapping), 0..=7: the VLAN PCP if
    /// tagged, and the DSCP class selector (`data_priority << 3`) on Standard.
    pub data_priority: u8,
    /// Priority of the PAXI responses (R data, B), 0..=7, tagged as `data_priority` is (RSP: 1
    /// in seed 003's mapping, so that a switch classifying on that field does not queue them
    /// behind REQ data).
    pub rsp_priority: u8,
    /// Flows (dst, qp) whose DCQCN state gets counters of their own,
    /// `flow_d{dst}_q{qp}_{rate_milli, rate_min_milli, state, cuts, recovered_at}`; at most 64.
    pub report_flows: Vec<FlowKey>,
    /// Multicast groups (TYPE2) by group id: the member chips, each with a TYPE2 CBFC ledger
    /// here. The system builder fills it from the traffic.
    pub groups: Vec<Vec<ChipId>>,
    /// Initial TYPE2 CBFC credits per member, uf_limit+1..=32767 (seed 002 «RC Link 资源»:
    /// 2048).
    pub type2_credits: u32,
    /// Multicast MAC TX credits, frames, 1..=64: TYPE2 frames the MAC's replication buffer may
    /// hold (seed 002 «多播双重流控»; the seed gives no size, 4 is hwsim's).
    pub mul_mac_credits: u32,
    /// TYPE2 frames waiting here for their gates, 1..=256 (default 16, the TYPE2 OST).
    pub type2_queue: u32,
    /// Header priority of TYPE2 frames, 0..=7 (seed 003's mapping: 0 for TYPE2/TYPE3).
    pub type2_priority: u8,
    /// CBFC on the TYPE1 ACK + CNP VC (5): every ACK, NAK and CNP taken in from `ctrl` returns
    /// its credit to the RX that sent it, on `ack_cr` (see `ack_cbfc`). Off by default (no
    /// port); the system form sets it when its RXs hold ACK-VC credits (`rx.ack_credits`).
    pub ack_cbfc: bool,
}

/// A flow named in `report_flows`: destination chip and QP id (0..=1023).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowKey {
    /// Destination chip.
    pub dst: ChipId,
    /// QP id (the 10-bit `{xpu_id, bank}`; CDMA engine e is QP 4e + e mod 4).
    pub qp: u16,
}

/// Most flows `report_flows` may name.
pub const MAX_REPORT_FLOWS: usize = 64;

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            slots: 512,
            max_payload: 1344,
            pkt_ovhd: 50,
            credit_size: 256,
            uf_limit: 1,
            initial_credits: 1024,
            dyn_uf_limit: false,
            cbfc_vc_enable: 0xFF,
            stop_cbfc: false,
            vc_weights: [1, 1, 1, 1, 256],
            max_retry: 15,
            retry_timeout: 50_000,
            mac_credits: 1,
            view_dsts: 2,
            rate_control: true,
            dcqcn: dcqcn::Params::default(),
            cnp_merge: cnp_merge::Params::default(),
            report_flows: Vec::new(),
            frame_format: FrameFormat::Standard,
            vlan: false,
            data_priority: 2,
            groups: Vec::new(),
            type2_credits: 2048,
            mul_mac_credits: 4,
            type2_queue: 16,
            type2_priority: 0,
            ack_cbfc: false,
            rsp_priority: 1,
        }
    }
}

impl Params {
    /// The header fields of this link's data frames; refuses `vlan` with `afh_lite` and a
    /// `data_priority` beyond 3 bits.
    pub fn header(&self) -> Result<HeaderTags, String> {
        self.tags("data_priority", self.data_priority)
    }

    /// The header fields of this link's TYPE2 (multicast) frames: `type2_priority`.
    pub fn type2_header(&self) -> Result<HeaderTags, String> {
        self.tags("type2_priority", self.type2_priority)
    }

    /// The header fields of this link's PAXI responses: as [`header`](Self::header), with
    /// `rsp_priority`.
    pub fn rsp_header(&self) -> Result<HeaderTags, String> {
        self.tags("rsp_priority", self.rsp_priority)
    }

    /// This link's layout tagged with priority `prio` (the parameter `name`): one rule for the
    /// data, response and TYPE2 headers.
    fn tags(&self, name: &str, prio: u8) -> Result<HeaderTags, String> {
        if prio > 7 {
            return Err(format!("{name} = {prio}: must be in 0..=7"));
        }
        let layout = FrameLayout::new(self.frame_format, self.vlan, false)
            .map_err(|e| format!("vlan = true: {e} (frame_format = {})", self.frame_format))?;
        Ok(HeaderTags::for_layout(layout, prio))
    }

    /// Checks every parameter; the error names the offending one.
    pub fn check(&self) -> Result<(), String> {
        if self.lg > 7 {
            return Err(format!("lg = {}: must be in 0..=7", self.lg));
        }
        if self.view_dsts > MAX_VIEW_DSTS {
            return Err(format!(
                "view_dsts = {}: must be in 0..={MAX_VIEW_DSTS}",
                self.view_dsts
            ));
        }
        SlotFifo::new(self.slots, self.max_payload, self.max_retry, self.retry_timeout)?;
        self.header()?;
        self.rsp_header()?;
        Cbfc::new(self.credit_size, self.pkt_ovhd, self.uf_limit, self.initial_credits)?;
        BankArbiter::new(self.vc_weights)?;
        MacCredit::new(self.mac_credits, "mac_credits")?;
        self.type2_header()?;
        Cbfc::new(self.credit_size, self.pkt_ovhd, self.uf_limit, self.type2_credits)
            .map_err(|e| format!("type2_credits: {e}"))?;
        if self.mul_mac_credits == 0 || self.mul_mac_credits > 64 {
            return Err(format!("mul_mac_credits = {}: must be in 1..=64", self.mul_mac_credits));
        }
        if self.type2_queue == 0 || self.type2_queue > 256 {
            return Err(format!("type2_queue = {}: must be in 1..=256", self.type2_queue));
        }
        if self.groups.len() > 1 << 15 {
            return Err(format!("groups: {} groups, at most 32768", self.groups.len()));
        }
        if let Some(g) = self.groups.iter().position(|g| g.is_empty()) {
            return Err(format!("groups[{g}]: a group needs at least one member"));
        }
        RateGate::new(self)?;
        if self.report_flows.len() > MAX_REPORT_FLOWS {
            return Err(format!(
                "report_flows: {} flows, at most {MAX_REPORT_FLOWS}",
                self.report_flows.len()
            ));
        }
        for (k, f) in self.report_flows.iter().enumerate() {
            QpId::new(f.qp).map_err(|e| format!("report_flows.{k}.qp: {e}"))?;
            if self.report_flows[..k].contains(f) {
                return Err(format!("report_flows.{k}: dst {} qp {} named twice", f.dst, f.qp));
            }
        }
        Ok(())
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::stream_in::<Segment>("seg", 1)
            .doc("segments (frames) from the PAXI core; left queued while slots are short"),
        PortDecl::stream_in::<Ctrl>("ctrl", 8).doc("ACK / NAK / CNP back from the receiver (src = our dst)"),
        PortDecl::stream_in::<CreditMsg>("credit", 8).doc("CBFC credit returns (src = our dst, vc, credits)"),
        PortDecl::stream_in::<u8>("mac_credit", 8)
            .optional()
            .doc("MAC2TX credit returns from the MAC (unbound: the mac_credits never come back)"),
        PortDecl::stream_out::<DataFrame>("frame")
            .doc("granted frames (or runs of their packets) to the MAC, at most one per cycle"),
        PortDecl::stream_out::<FrameDone>("done").doc("to PAXI: every packet of the frame was ACKed"),
        PortDecl::output::<CreditMsg>("credit_view")
            .doc("after each ledger change: remaining credits of the (dst, vc) that changed"),
        PortDecl::output::<UInt<4>>("mac_credit.available").doc("MAC credits available"),
        PortDecl::output::<u16>("type2.queue").doc("TYPE2 (multicast) frames waiting for their gates"),
        PortDecl::output::<u8>("type2.mac_credit").doc("multicast MAC TX credits available"),
    ];
    v.extend(SlotView::ports("slot_fifo.", "slots_used"));
    v.extend(ArbiterView::ports("arbiter."));
    v.extend(DcqcnView::ports());
    v.extend(CbfcView::ports("cbfc.", p.view_dsts));
    if p.ack_cbfc {
        v.extend(AckReturn::ports());
    }
    v
}

/// The DCQCN rate gate (seed 000 «DCQCN 拥塞控制», «TX 速率限制 (pacing)»): a [`Dcqcn`] state per
/// flow (dst, qp) of this LG, CNP MERGE in front of it, the flows' recovery timers, and the
/// earliest cycle a rate-blocked flow may send again — the arbiter's exact wake-up, no polling.
pub struct RateGate {
    p: dcqcn::Params,
    enabled: bool,
    merge: CnpMerge,
    /// By slot-FIFO flow index.
    flows: Vec<Dcqcn>,
    /// (expiry, flow) per armed timer; stale entries (the flow's timer moved) are skipped.
    timers: BinaryHeap<Reverse<(Cycle, u32)>>,
    /// The earliest ready time of a flow found rate-blocked in the last round.
    wake: std::cell::Cell<Option<Cycle>>,
    /// The flow whose state changed last (shown on the waves).
    shown: Option<u32>,
    /// Recoveries to line rate (CONGESTED → RECOVERED) and the cycle of the last one.
    recoveries: u64,
    last_recovery: Cycle,
    /// The lowest rate any flow was cut to, bytes/ns.
    rate_min: f64,
    /// Per flow (by slot-FIFO flow index): cuts, the cycle it last got back to line rate, the
    /// lowest rate it was cut to.
    stats: Vec<FlowStats>,
}

/// What the per-flow counters of `report_flows` show beyond the [`Dcqcn`] state.
#[derive(Clone, Copy, Debug)]
struct FlowStats {
    cuts: u64,
    recovered_at: Cycle,
    rate_min: f64,
}

impl RateGate {
    fn new(p: &Params) -> Result<RateGate, String> {
        p.dcqcn.check()?;
        Ok(RateGate {
            p: p.dcqcn.clone(),
            enabled: p.rate_control,
            merge: CnpMerge::new(&p.cnp_merge)?,
            flows: Vec::new(),
            timers: BinaryHeap::new(),
            wake: std::cell::Cell::new(None),
            shown: None,
            recoveries: 0,
            last_recovery: 0,
            rate_min: p.dcqcn.line_rate,
            stats: Vec::new(),
        })
    }
    /// A new flow at line rate.
    fn add_flow(&mut self) {
        self.flows.push(Dcqcn::new(&self.p));
        self.stats.push(FlowStats {
            cuts: 0,
            recovered_at: 0,
            rate_min: self.p.line_rate,
        });
    }
    /// Whether flow `flow` may send at `now`; a blocked flow's ready time feeds the wake-up.
    pub fn allows(&self, flow: usize, now: Cycle) -> bool {
        let Some(t) = self.flows.get(flow).and_then(|d| d.ready_at()) else {
            return true;
        };
        if t <= now {
            return true;
        }
        self.wake.set(Some(self.wake.get().map_or(t, |w| w.min(t))));
        false
    }
    /// A CNP for flow `flow` (QP `qp`) at `now`: through CNP MERGE, then on_cnp. Returns whether
    /// it passed the merge.
    fn on_cnp(&mut self, flow: usize, qp: QpId, now: Cycle) -> bool {
        if !self.merge.pass(qp, now) {
            return false;
        }
        let d = &mut self.flows[flow];
        let armed = d.timer_at;
        d.on_cnp(&self.p, now);
        self.rate_min = self.rate_min.min(d.rate);
        let st = &mut self.stats[flow];
        st.cuts += 1;
        st.rate_min = st.rate_min.min(d.rate);
        if d.timer_at != armed {
            self.timers.push(Reverse((d.timer_at.expect("armed"), flow as u32)));
        }
        self.shown = Some(flow as u32);
        true
    }
    /// Bytes of flow `flow` granted at `now`. Returns whether the rate rose.
    fn on_sent(&mut self, flow: usize, bytes: u64, now: Cycle) -> bool {
        let up = self.flows[flow].on_sent(&self.p, bytes, now);
        if up {
            self.shown = Some(flow as u32);
            self.note_recovery(flow, now);
        }
        up
    }
    /// Runs the recovery timers due at `now`; returns how many fired.
    fn expire(&mut self, now: Cycle) -> u64 {
        let mut fired = 0;
        while let Some(&Reverse((t, f))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            let d = &mut self.flows[f as usize];
            if d.timer_at != Some(t) {
                continue;
            }
            d.on_timer(&self.p, now);
            if let Some(next) = d.timer_at {
                self.timers.push(Reverse((next, f)));
            }
            self.shown = Some(f);
            self.note_recovery(f as usize, now);
            fired += 1;
        }
        fired
    }
    /// After a rate increase: a flow that reached line rate has recovered (acceptance 3).
    fn note_recovery(&mut self, flow: usize, now: Cycle) {
        if self.flows[flow].state == dcqcn::State::Recovered {
            self.recoveries += 1;
            self.last_recovery = now;
            self.stats[flow].recovered_at = now;
        }
    }
    /// Flows still below line rate.
    fn limited(&self) -> u64 {
        self.flows.iter().filter(|d| d.state == dcqcn::State::Congested).count() as u64
    }
    /// The next cycle something is due: a recovery timer or a blocked flow's ready time.
    fn next_event(&self) -> Option<Cycle> {
        let t = self.timers.peek().map(|Reverse((t, _))| *t);
        match (t, self.wake.get()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The counters of one flow named in `report_flows`, written when they change.
struct FlowReport {
    key: (ChipId, u16),
    /// Its slot-FIFO flow index once it exists.
    flow: Option<usize>,
    rate_milli: CounterId,
    rate_min_milli: CounterId,
    state: CounterId,
    cuts: CounterId,
    recovered_at: CounterId,
}

impl FlowReport {
    fn declare(b: &mut Binder, f: &FlowKey) -> FlowReport {
        let n = |what: &str| format!("flow_d{}_q{}_{what}", f.dst, f.qp);
        FlowReport {
            key: (f.dst, f.qp),
            flow: None,
            rate_milli: b.counter(&n("rate_milli")),
            rate_min_milli: b.counter(&n("rate_min_milli")),
            state: b.counter(&n("state")),
            cuts: b.counter(&n("cuts")),
            recovered_at: b.counter(&n("recovered_at")),
        }
    }
    /// Writes what changed: a flow that does not exist (yet) shows the reset state, line rate
    /// and NORMAL.
    fn show(&self, ctx: &mut Ctx<'_>, g: &RateGate) {
        let milli = |r: f64| (r * 1000.0).round() as u64;
        let (rate, rate_min, state, cuts, rec) = match self.flow {
            Some(f) => {
                let (d, st) = (&g.flows[f], &g.stats[f]);
                (d.rate, st.rate_min, d.state_code().0, st.cuts, st.recovered_at)
            }
            None => (g.p.line_rate, g.p.line_rate, 0, 0, 0),
        };
        for (id, v) in [
            (self.rate_milli, milli(rate)),
            (self.rate_min_milli, milli(rate_min)),
            (self.state, state),
            (self.cuts, cuts),
            (self.recovered_at, rec),
        ] {
            if ctx.counter(id) != v {
                ctx.set_counter(id, v);
            }
        }
    }
}

/// The DCQCN state of the flow that changed last: `dcqcn.qp`, `dcqcn.rate` (R_C, real),
/// `dcqcn.alpha` (real), `dcqcn.state` (0 NORMAL, 1 CONGESTED, 2 RECOVERED).
struct DcqcnView {
    qp: Out<QpId>,
    rate: Out<f64>,
    alpha: Out<f64>,
    state: Out<UInt<2>>,
}

impl DcqcnView {
    fn ports() -> Vec<PortDecl> {
        vec![
            PortDecl::output::<QpId>("dcqcn.qp").doc("QP of the flow whose rate state changed last"),
            PortDecl::output::<f64>("dcqcn.rate").doc("its current rate R_C, bytes/ns"),
            PortDecl::output::<f64>("dcqcn.alpha").doc("its α"),
            PortDecl::output::<UInt<2>>("dcqcn.state").doc("0 NORMAL, 1 CONGESTED, 2 RECOVERED"),
        ]
    }
    fn bind(b: &Binder, line_rate: f64) -> Result<DcqcnView, String> {
        let v = DcqcnView {
            qp: b.output("dcqcn.qp")?,
            rate: b.output("dcqcn.rate")?,
            alpha: b.output("dcqcn.alpha")?,
            state: b.output("dcqcn.state")?,
        };
        v.rate.set(line_rate);
        Ok(v)
    }
    fn show(&self, g: &RateGate, slots: &SlotFifo) {
        let Some(f) = g.shown else { return };
        let d = &g.flows[f as usize];
        self.qp.update(slots.flow_key(f as usize).1);
        self.rate.update(d.rate);
        self.alpha.update(d.alpha);
        self.state.update(d.state_code());
    }
}

struct Counters {
    arb_calls: CounterId,
    arb_tx_busy: CounterId,
    credit_block: CounterId,
    rate_block: CounterId,
    frames_sent: CounterId,
    pkts_sent: CounterId,
    payload_bytes_sent: CounterId,
    wire_bytes_sent: CounterId,
    acks_received: CounterId,
    acks_ignored: CounterId,
    cnp_received: CounterId,
    ctrl_latency_max: CounterId,
    credit_latency_max: CounterId,
    rtt_max: CounterId,
    credits_outstanding: CounterId,
    type2_frames: CounterId,
    type2_bytes: CounterId,
    type2_credit_block: CounterId,
    type2_mac_block: CounterId,
    type2_queue_peak: CounterId,
    cnp_passed: CounterId,
    cnp_filtered: CounterId,
    rate_increases: CounterId,
    dcqcn_recoveries: CounterId,
    dcqcn_recovered_at: CounterId,
    dcqcn_rate_min_milli: CounterId,
    dcqcn_flows_limited: CounterId,
}

impl Counters {
    fn declare(b: &mut Binder) -> Self {
        Counters {
            arb_calls: b.counter("diag_arb_calls"),
            arb_tx_busy: b.counter("diag_arb_tx_busy"),
            credit_block: b.counter("diag_credit_block"),
            rate_block: b.counter("diag_rate_block"),
            frames_sent: b.counter("frames_sent"),
            pkts_sent: b.counter("pkts_sent"),
            payload_bytes_sent: b.counter("payload_bytes_sent"),
            wire_bytes_sent: b.counter("wire_bytes_sent"),
            acks_received: b.counter("acks_received"),
            acks_ignored: b.counter("acks_ignored"),
            cnp_received: b.counter("cnp_received"),
            ctrl_latency_max: b.counter("ctrl_latency_max"),
            credit_latency_max: b.counter("credit_latency_max"),
            rtt_max: b.counter("rtt_max"),
            cnp_passed: b.counter("cnp_passed"),
            cnp_filtered: b.counter("cnp_filtered"),
            rate_increases: b.counter("rate_increases"),
            dcqcn_recoveries: b.counter("dcqcn_recoveries"),
            dcqcn_recovered_at: b.counter("dcqcn_recovered_at"),
            dcqcn_rate_min_milli: b.counter("dcqcn_rate_min_milli"),
            dcqcn_flows_limited: b.counter("dcqcn_flows_limited"),
            credits_outstanding: b.counter("credits_outstanding"),
            type2_frames: b.counter("type2_frames_sent"),
            type2_bytes: b.counter("type2_payload_bytes_sent"),
            type2_credit_block: b.counter("type2_credit_block"),
            type2_mac_block: b.counter("type2_mac_block"),
            type2_queue_peak: b.counter("type2_queue_peak"),
        }
    }
}

/// The block.
pub struct RcLinkTx {
    p: Params,
    seg_in: StreamIn<Segment>,
    ctrl_in: StreamIn<Ctrl>,
    credit_in: StreamIn<CreditMsg>,
    mac_credit_in: StreamIn<u8>,
    frame_out: StreamOut<DataFrame>,
    done_out: StreamOut<FrameDone>,
    credit_view_out: Out<CreditMsg>,
    mac_credit_out: Out<UInt<4>>,
    c: Counters,
    sc: SlotCounters,
    rate_gate: RateGate,
    dcqcn_view: DcqcnView,
    /// Counters of the flows in `report_flows`.
    flow_report: Vec<FlowReport>,

    slots: SlotFifo,
    slot_view: SlotView,
    arbiter: BankArbiter,
    arbiter_view: ArbiterView,
    cbfc: Cbfc,
    cbfc_view: CbfcView,
    mac_credit: MacCredit,
    /// CBFC ledger of each slot-FIFO flow (by flow index).
    flow_ledger: Vec<u32>,

    /// Something changed since the last arbitration round.
    arb_pending: bool,
    /// `frame.space()` as it must read next time if the MAC pops nothing: more means the MAC took
    /// a frame (pops are the only way it grows, and a pop wakes us the next cycle whether or not
    /// event skip is on).
    mac_space_seen: u32,
    /// The segment at the head of `seg` was already counted as slot-blocked.
    seg_block_counted: bool,
    /// Value last written to the `credits_outstanding` gauge.
    credits_shown: u64,
    t2: Type2,
    /// ACK-VC credits owed to the RXs whose control messages came in (with `ack_cbfc`).
    ack_return: Option<AckReturn>,
}

/// The TYPE2 (multicast) side of the TX (seed 002 «多播双重流控», «RC Link 资源»): no slot, no
/// PSN, no retransmission; a frame goes when every member's TYPE2 CBFC ledger admits it and a
/// multicast MAC TX credit is free.
struct Type2 {
    q: std::collections::VecDeque<Segment>,
    cap: usize,
    cbfc: Cbfc,
    /// Per group, the ledger of each member.
    ledgers: Vec<Vec<u32>>,
    hdr: HeaderTags,
    mac_credits: u32,
    /// Frames in the MAC, oldest first: TYPE2 or not (a MAC credit return frees the oldest).
    in_mac: std::collections::VecDeque<bool>,
    /// TYPE2 grants in a row while TYPE1 had frames queued (the MUL VC's weighted turn).
    run: u32,
    weight: u32,
    queue_out: Out<u16>,
    mac_out: Out<u8>,
}

/// Binds ports; refuses out-of-range parameters with a message naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    p.check()?;
    let slots = SlotFifo::new(p.slots, p.max_payload, p.max_retry, p.retry_timeout)?
        .with_origin(p.chip, p.lg, p.pkt_ovhd as u16)
        .with_header(p.header()?)
        .with_rsp_header(p.rsp_header()?);
    let mut cbfc = Cbfc::new(p.credit_size, p.pkt_ovhd, p.uf_limit, p.initial_credits)?;
    cbfc.set_mode(CbfcMode {
        dyn_uf_limit: p.dyn_uf_limit,
        vc_enable: p.cbfc_vc_enable,
        stop: p.stop_cbfc,
        max_payload: p.max_payload,
    });
    let arbiter = BankArbiter::new(p.vc_weights)?;
    let mac_credit = MacCredit::new(p.mac_credits, "mac_credits")?;
    let mut t2_cbfc = Cbfc::new(p.credit_size, p.pkt_ovhd, p.uf_limit, p.type2_credits)?;
    t2_cbfc.set_mode(CbfcMode {
        dyn_uf_limit: false,
        vc_enable: p.cbfc_vc_enable,
        stop: p.stop_cbfc,
        max_payload: p.max_payload,
    });
    let ledgers = p
        .groups
        .iter()
        .map(|g| g.iter().map(|&m| t2_cbfc.ledger(m, TYPE2_VC) as u32).collect())
        .collect();
    let t2 = Type2 {
        q: std::collections::VecDeque::with_capacity(p.type2_queue as usize),
        cap: p.type2_queue as usize,
        cbfc: t2_cbfc,
        ledgers,
        hdr: p.type2_header()?,
        mac_credits: p.mul_mac_credits,
        in_mac: std::collections::VecDeque::with_capacity(p.mac_credits as usize),
        run: 0,
        weight: p.vc_weights[NUM_VC - 1],
        queue_out: b.output("type2.queue")?,
        mac_out: b.output("type2.mac_credit")?,
    };
    t2.mac_out.set(p.mul_mac_credits as u8);
    let mac_credit_out: Out<UInt<4>> = b.output("mac_credit.available")?;
    mac_credit_out.set(mac_credit.shown());
    Ok(Box::new(RcLinkTx {
        p: p.clone(),
        seg_in: b.stream_in("seg")?,
        ctrl_in: b.stream_in("ctrl")?,
        credit_in: b.stream_in("credit")?,
        mac_credit_in: b.stream_in("mac_credit")?,
        frame_out: b.stream_out("frame")?,
        done_out: b.stream_out("done")?,
        credit_view_out: b.output("credit_view")?,
        mac_credit_out,
        c: Counters::declare(b),
        sc: SlotCounters::declare(b),
        rate_gate: RateGate::new(p)?,
        dcqcn_view: DcqcnView::bind(b, p.dcqcn.line_rate)?,
        flow_report: p.report_flows.iter().map(|f| FlowReport::declare(b, f)).collect(),
        slot_view: SlotView::bind("slot_fifo.", "slots_used", b)?,
        arbiter_view: ArbiterView::bind("arbiter.", b)?,
        cbfc_view: CbfcView::bind("cbfc.", p.view_dsts, b, &cbfc)?,
        slots,
        arbiter,
        cbfc,
        mac_credit,
        flow_ledger: Vec::new(),
        arb_pending: false,
        mac_space_seen: 0,
        seg_block_counted: false,
        credits_shown: 0,
        t2,
        ack_return: AckReturn::bind(
            p.ack_cbfc,
            p.chip,
            p.lg,
            p.pkt_ovhd,
            CreditSize::new(p.credit_size.into()).map_err(|e| format!("credit_size = {}: {e}", p.credit_size))?,
            b,
        )?,
    }))
}

/// The CBFC VC of TYPE2 credit returns (`CreditMsg.vc`): the arbiter's fifth VC, MUL.
pub const TYPE2_VC: u8 = (NUM_VC - 1) as u8;

/// Why a segment can never be sent, if it cannot.
fn unsendable(p: &Params, cbfc: &Cbfc, seg: &Segment, npkts: u32) -> Option<String> {
    if seg.lg != p.lg {
        return Some(format!("for LG {}, this is LG {}", seg.lg, p.lg));
    }
    if npkts > u8::MAX as u32 || npkts > p.slots {
        return Some(format!(
            "{npkts} packets never fit (slots = {}, at most 255 per frame)",
            p.slots
        ));
    }
    // Per packet: only a packet that alone exceeds the credits can never go (the first packet
    // is the largest of a frame).
    let cost = cbfc.cost(seg.bytes.min(p.max_payload));
    if cost > cbfc.max_packet_cost() {
        return Some(format!(
            "a packet costs {cost} credits, never sendable with initial_credits = {} and uf_limit = {}",
            p.initial_credits, p.uf_limit
        ));
    }
    None
}

impl RcLinkTx {
    fn show_credit(&mut self, ledger: usize) {
        let (dst, vc) = self.cbfc.key(ledger);
        self.credit_view_out.set(CreditMsg {
            src: self.p.chip,
            dst,
            lg: self.p.lg,
            vc,
            credits: self.cbfc.remaining(ledger) as u16,
            sent_at: 0,
        });
        self.cbfc_view.show(&self.cbfc, dst);
    }

    /// The CBFC ledger of every flow the slot FIFO created since the last call.
    fn map_new_flows(&mut self) {
        while self.flow_ledger.len() < self.slots.flow_count() {
            let (dst, qp) = self.slots.flow_key(self.flow_ledger.len());
            let l = self.cbfc.ledger(dst, qp.vc_bank().value());
            self.flow_ledger.push(l as u32);
            self.rate_gate.add_flow();
            let key = (dst, qp.value());
            for r in self.flow_report.iter_mut() {
                if r.key == key {
                    r.flow = Some(self.flow_ledger.len() - 1);
                }
            }
        }
    }

    fn on_ctrl(&mut self, ctx: &mut Ctx<'_>, msg: &Ctrl) {
        if let Some(why) = slot_fifo::misrouted(msg, self.p.chip, self.p.lg) {
            ctx.violation(why);
            return;
        }
        match msg.rh.opcode() {
            Opcode::Cnp => {
                ctx.count(self.c.cnp_received, 1);
                // A CNP for a flow that never sent here has no rate to cut.
                let flow = self.slots.find_flow(msg.src, msg.rh.qp());
                if let (true, Some(f)) = (self.rate_gate.enabled, flow) {
                    if self.rate_gate.on_cnp(f, msg.rh.qp(), ctx.now()) {
                        ctx.count(self.c.cnp_passed, 1);
                        self.arb_pending = true;
                    } else {
                        ctx.count(self.c.cnp_filtered, 1);
                    }
                }
            }
            Opcode::Ack => {
                let nak = msg.rh.is_nak();
                if !nak {
                    ctx.count(self.c.acks_received, 1);
                }
                let r = self
                    .slots
                    .on_ack(ctx, &self.sc, msg.src, msg.rh.qp(), msg.rh.psn(), nak);
                if r.is_none() {
                    // An ACK that acknowledged nothing, or a NAK for a flow that never sent.
                    ctx.count(self.c.acks_ignored, 1);
                }
            }
            Opcode::Data => {
                ctx.violation(format!("data opcode on the ctrl path: {msg:?}"));
            }
        }
    }

    fn on_credit(&mut self, ctx: &mut Ctx<'_>, msg: &CreditMsg) {
        if msg.dst == self.p.chip && msg.lg == self.p.lg && msg.vc == TYPE2_VC {
            if let Err((_, why)) = self.t2.cbfc.give_back(msg.src, TYPE2_VC, msg.credits as u32) {
                ctx.violation(format!("TYPE2: {why}"));
            }
            self.arb_pending = true;
            return;
        }
        if msg.dst != self.p.chip || msg.lg != self.p.lg || msg.vc as usize >= NUM_VC - 1 {
            ctx.violation(format!(
                "credit return for chip {} LG {} VC {} arrived at chip {} LG {}: {msg:?}",
                msg.dst, msg.lg, msg.vc, self.p.chip, self.p.lg
            ));
            return;
        }
        let l = match self.cbfc.give_back(msg.src, msg.vc, msg.credits as u32) {
            Ok(l) => l,
            Err((l, why)) => {
                ctx.violation(why);
                l
            }
        };
        self.show_credit(l);
        self.arb_pending = true;
    }

    /// Takes TYPE2 segments at the head of `seg` while the TYPE2 queue has room.
    fn accept_type2(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut took = false;
        while let Some(seg) = self.seg_in.peek().map(|s| *s) {
            if seg.paxi.kind != FlitKind::Mul || self.t2.q.len() >= self.t2.cap {
                break;
            }
            self.seg_in.pop();
            let group = mcast_group(seg.dst).map(usize::from);
            let cost = self.t2.cbfc.cost(seg.bytes.min(self.p.max_payload));
            let bad = if seg.lg != self.p.lg {
                Some(format!("for LG {}, this is LG {}", seg.lg, self.p.lg))
            } else if group.is_none_or(|g| g >= self.t2.ledgers.len()) {
                Some(format!(
                    "a TYPE2 segment to {:#06x}, not a group in `groups` ({} groups)",
                    seg.dst,
                    self.t2.ledgers.len()
                ))
            } else if seg.bytes.div_ceil(self.p.max_payload) > u8::MAX as u32 {
                Some(format!("{} bytes: more than 255 packets", seg.bytes))
            } else if cost > self.t2.cbfc.max_packet_cost() {
                Some(format!(
                    "a packet costs {cost} credits, never sendable with type2_credits = {}",
                    self.p.type2_credits
                ))
            } else {
                None
            };
            if let Some(why) = bad {
                ctx.violation(format!("segment {seg:?}: {why}"));
                continue;
            }
            self.t2.q.push_back(seg);
            took = true;
            if self.t2.q.len() as u64 > ctx.counter(self.c.type2_queue_peak) {
                ctx.set_counter(self.c.type2_queue_peak, self.t2.q.len() as u64);
            }
        }
        took
    }

    /// One TYPE2 grant attempt: the head frame goes if every member's TYPE2 ledger admits all
    /// its packets and a multicast MAC TX credit is free (both gates, «两者均通过才允许发送»).
    /// The caller has checked the MAC credit and the stream's room.
    fn grant_type2(&mut self, ctx: &mut Ctx<'_>, now: u64) -> bool {
        let Some(seg) = self.t2.q.front().copied() else {
            return false;
        };
        if self.t2.mac_credits == 0 {
            ctx.count(self.c.type2_mac_block, 1);
            return false;
        }
        let mp = self.p.max_payload;
        let npkts = seg.bytes.div_ceil(mp).max(1);
        let payloads = |i: u32| (seg.bytes - i * mp).min(mp);
        let g = mcast_group(seg.dst).expect("checked at intake") as usize;
        let mut cost = 0;
        for &l in &self.t2.ledgers[g] {
            let (k, c) = self.t2.cbfc.run(l as usize, (0..npkts).map(payloads));
            if k < npkts {
                ctx.count(self.c.type2_credit_block, 1);
                return false;
            }
            cost = c;
        }
        self.t2.q.pop_front();
        if cost > 0 {
            for &l in &self.t2.ledgers[g] {
                self.t2.cbfc.charge(l as usize, cost);
            }
        }
        self.t2.mac_credits -= 1;
        self.t2.in_mac.push_back(true);
        self.mac_credit.take();
        let (src, lg, ovhd) = (self.p.chip, self.p.lg, self.p.pkt_ovhd as u16);
        let frame = DataFrame {
            src,
            dst: seg.dst,
            lg,
            qp: seg.qp,
            first_psn: Psn::ZERO,
            first_idx: 0,
            npkts: npkts as u8,
            frame_bytes: seg.bytes,
            max_payload: mp as u16,
            pkt_ovhd: ovhd,
            txn: seg.txn,
            frame_seq: seg.frame_seq,
            // TYPE2 has its own rate control (SET_TYPE2_RATE), not DCQCN: never ECN-capable.
            ecn: Ecn::NotEct,
            sent_at: now,
            ts: Rh::timestamp_from_ns(now),
            lost: 0,
            hdr: self.t2.hdr,
            paxi: seg.paxi,
        };
        ctx.count(self.c.frames_sent, 1);
        ctx.count(self.c.pkts_sent, npkts as u64);
        ctx.count(self.c.payload_bytes_sent, seg.bytes as u64);
        ctx.count(self.c.wire_bytes_sent, frame.wire_bytes() as u64);
        ctx.count(self.c.type2_frames, 1);
        ctx.count(self.c.type2_bytes, seg.bytes as u64);
        self.frame_out.push(frame);
        true
    }

    /// One arbitration round over TYPE2 and TYPE1. TYPE2 is the MUL VC (the arbiter's fifth,
    /// weight `vc_weights[4]`): it goes first for up to that many frames in a row while TYPE1
    /// has frames queued, then TYPE1 gets the next turn.
    fn round(&mut self, ctx: &mut Ctx<'_>, now: u64) -> bool {
        if self.t2.q.is_empty() {
            return self.slots.queued() > 0 && self.arbitrate(ctx, now);
        }
        if !self.mac_credit.can_send() || !self.frame_out.can_push() {
            ctx.count(self.c.arb_calls, 1);
            ctx.count(self.c.arb_tx_busy, 1);
            return false;
        }
        let t1 = self.slots.queued() > 0;
        if !t1 || self.t2.run < self.t2.weight {
            if self.grant_type2(ctx, now) {
                self.t2.run = if t1 { self.t2.run + 1 } else { 0 };
                return true;
            }
            return t1 && self.arbitrate(ctx, now);
        }
        if self.arbitrate(ctx, now) {
            self.t2.run = 0;
            return true;
        }
        self.grant_type2(ctx, now)
    }

    /// One arbitration round. Returns whether a frame was granted.
    fn arbitrate(&mut self, ctx: &mut Ctx<'_>, now: u64) -> bool {
        ctx.count(self.c.arb_calls, 1);
        if !self.mac_credit.can_send() || !self.frame_out.can_push() {
            ctx.count(self.c.arb_tx_busy, 1);
            return false;
        }
        self.rate_gate.wake.set(None);
        let (slots, cbfc, rate_gate, ledgers, c) =
            (&self.slots, &self.cbfc, &self.rate_gate, &self.flow_ledger, &self.c);
        let pick = self.arbiter.arbitrate(
            slots.queues(),
            |id| slots.flow_of_frame(id),
            |id| {
                let flow = slots.flow_of_frame(id);
                if !rate_gate.allows(flow, now) {
                    ctx.count(c.rate_block, 1);
                    return Gate::RateBlocked;
                }
                // CBFC per packet: the frame may go if its first WaitGrant packet passes.
                let (n, _) = cbfc.run(ledgers[flow] as usize, slots.unsent_payloads(id).take(1));
                if n == 0 {
                    ctx.count(c.credit_block, 1);
                    return Gate::CreditBlocked;
                }
                Gate::Pass
            },
        );
        let Some((vc, pos)) = pick else {
            return false;
        };
        let id = self.slots.queues()[vc][pos];
        let ledger = self.flow_ledger[self.slots.flow_of_frame(id)] as usize;
        let (k, cost) = self.cbfc.run(ledger, self.slots.unsent_payloads(id));
        let frame = self.slots.grant(vc, pos, k as u8, now);
        if cost > 0 {
            self.cbfc.charge(ledger, cost);
            self.show_credit(ledger);
        }
        self.arbiter.sent(vc);
        self.mac_credit.take();
        if !self.t2.ledgers.is_empty() {
            self.t2.in_mac.push_back(false);
        }
        if self.rate_gate.enabled {
            let flow = self.slots.flow_of_frame(id);
            if self.rate_gate.on_sent(flow, frame.wire_bytes() as u64, now) {
                ctx.count(self.c.rate_increases, 1);
            }
        }
        ctx.count(self.c.frames_sent, 1);
        ctx.count(self.c.pkts_sent, frame.npkts as u64);
        ctx.count(self.c.payload_bytes_sent, frame.payload() as u64);
        ctx.count(self.c.wire_bytes_sent, frame.wire_bytes() as u64);
        self.frame_out.push(frame);
        true
    }
}

impl Component for RcLinkTx {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Nothing below acts on the mere fact of being ticked: every action follows an input, a
        // timer that is due, or a change of the MAC stream's space (see `mac_space_seen`).
        if self.frame_out.space() > self.mac_space_seen {
            self.arb_pending = true;
        }
        // ACKs first: slots they free can take a waiting segment in the same cycle.
        while let Some(msg) = self.ctrl_in.pop() {
            // Control-path latency from the receiver's push (`sent_at`; 0 = not stamped, e.g.
            // testbench stimulus) to this pop: acceptance 9 bounds it.
            if msg.sent_at != 0 {
                let lat = now.saturating_sub(msg.sent_at);
                if lat > ctx.counter(self.c.ctrl_latency_max) {
                    ctx.set_counter(self.c.ctrl_latency_max, lat);
                }
            }
            // Round trip: the RH timestamp echoes our grant time of the data it answers (32-bit
            // ns, wrapping; 0 = not stamped).
            if msg.rh.timestamp() != 0 && msg.rh.opcode() == Opcode::Ack {
                let rtt = u64::from((now as u32).wrapping_sub(msg.rh.timestamp()));
                if rtt > ctx.counter(self.c.rtt_max) {
                    ctx.set_counter(self.c.rtt_max, rtt);
                }
            }
            self.on_ctrl(ctx, &msg);
            self.arb_pending = true;
            // Its place in the ACK buffer is free: the credit goes back to its RX.
            if let Some(r) = &mut self.ack_return {
                r.took(msg.src);
            }
        }
        let ack_return_next = self.ack_return.as_mut().and_then(|r| r.drive(ctx));
        while let Some(msg) = self.credit_in.pop() {
            if msg.sent_at != 0 {
                let lat = now.saturating_sub(msg.sent_at);
                if lat > ctx.counter(self.c.credit_latency_max) {
                    ctx.set_counter(self.c.credit_latency_max, lat);
                }
            }
            self.on_credit(ctx, &msg);
        }
        while let Some(n) = self.mac_credit_in.pop() {
            if let Err(why) = self.mac_credit.give(n as u32) {
                ctx.violation(why);
            }
            // The MAC frees frames in the order it took them: a TYPE2 frame out of it gives
            // its multicast MAC TX credit back.
            for _ in 0..n {
                if self.t2.in_mac.pop_front() == Some(true) {
                    self.t2.mac_credits += 1;
                }
            }
            self.arb_pending = true;
        }
        self.slots.expire_timeouts(ctx, &self.sc, now);
        // DCQCN: recovery timers due now, and a rate-blocked flow's ready time reached.
        let fired = self.rate_gate.expire(now);
        if fired > 0 {
            ctx.count(self.c.rate_increases, fired);
            self.arb_pending = true;
        }
        if self.rate_gate.wake.get().is_some_and(|t| t <= now) {
            self.rate_gate.wake.set(None);
            self.arb_pending = true;
        }
        // Segments in order: TYPE2 ones into the TYPE2 queue, TYPE1 ones into the slot FIFO,
        // each intake stopping at the other's segment.
        loop {
            if self.accept_type2(ctx) {
                self.arb_pending = true;
            }
            let (p, cbfc) = (&self.p, &self.cbfc);
            slot_fifo::accept_segments(
                ctx,
                &mut self.slots,
                &self.sc,
                &self.seg_in,
                &mut self.seg_block_counted,
                |seg, n| unsendable(p, cbfc, seg, n),
            );
            let more = self
                .seg_in
                .peek()
                .is_some_and(|s| s.paxi.kind == FlitKind::Mul && self.t2.q.len() < self.t2.cap);
            if !more {
                break;
            }
        }
        self.map_new_flows();

        let mut done_pushed = false;
        if self.slots.done_waiting() > 0 && self.done_out.can_push() {
            let d = self.slots.pop_done().expect("waiting");
            self.done_out.push(d);
            done_pushed = true;
        }

        let changed = self.slots.take_changed();
        self.arb_pending |= changed;
        let mut granted = false;
        if self.arb_pending && (self.slots.queued() > 0 || !self.t2.q.is_empty()) {
            granted = self.round(ctx, now);
        }
        self.mac_space_seen = self.frame_out.space() - granted as u32;
        // After a grant the next one can go next cycle if a MAC credit and room remain (the
        // room only grows); otherwise the MAC's credit or pop wakes us.
        self.arb_pending = granted
            && self.mac_space_seen > 0
            && self.mac_credit.can_send()
            && (self.slots.queued() > 0 || !self.t2.q.is_empty());
        // A TYPE2 frame popped from `seg` leaves room there: the PAXI pushes the next.
        self.t2.queue_out.update(self.t2.q.len() as u16);
        self.t2.mac_out.update(self.t2.mac_credits.min(255) as u8);
        if self.slots.take_changed() || changed {
            self.slot_view.show(&self.slots);
        }
        self.arbiter_view.show(&self.arbiter, self.slots.queues());
        self.mac_credit_out.update(self.mac_credit.shown());
        self.slots.update_gauges(ctx, &self.sc);
        let outstanding = self.cbfc.outstanding() + self.t2.cbfc.outstanding();
        if outstanding != self.credits_shown {
            self.credits_shown = outstanding;
            ctx.set_counter(self.c.credits_outstanding, self.credits_shown);
        }

        self.dcqcn_view.show(&self.rate_gate, &self.slots);
        if self.rate_gate.recoveries != ctx.counter(self.c.dcqcn_recoveries) {
            ctx.set_counter(self.c.dcqcn_recoveries, self.rate_gate.recoveries);
            ctx.set_counter(self.c.dcqcn_recovered_at, self.rate_gate.last_recovery);
        }
        // Gauges, written on change: the lowest rate (milli-bytes/ns; line rate until a cut) and
        // the flows still below line rate (0 at the end = acceptance 3).
        let rmin = (self.rate_gate.rate_min * 1000.0).round() as u64;
        if rmin != ctx.counter(self.c.dcqcn_rate_min_milli) {
            ctx.set_counter(self.c.dcqcn_rate_min_milli, rmin);
        }
        for r in &self.flow_report {
            r.show(ctx, &self.rate_gate);
        }
        let limited = self.rate_gate.limited();
        if limited != ctx.counter(self.c.dcqcn_flows_limited) {
            ctx.set_counter(self.c.dcqcn_flows_limited, limited);
        }
        let deadline = [self.slots.next_deadline(), self.rate_gate.next_event()]
            .into_iter()
            .flatten()
            .min();
        let done_more = self.slots.done_waiting() > 0 && done_pushed && self.done_out.space() > 1;
        if self.arb_pending || done_more {
            Wake::NextCycle
        } else {
            Wake::earliest(deadline.into_iter().chain(ack_return_next))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::{Cycle, Harness};
    use hwsim_ports::{cbfc_cost, split_packets, CreditSize, Ecn, Psn, Rh, ACK_VC};
    use std::collections::VecDeque;
    use std::num::NonZeroU32;

    const DST: ChipId = 1;

    fn qp(v: u16) -> QpId {
        QpId::new(v).unwrap()
    }
    fn psn(v: u16) -> Psn {
        Psn::new(v).unwrap()
    }
    fn seg_to(dst: ChipId, txn: u64, q: u16, bytes: u32) -> Segment {
        Segment {
            txn,
            frame_seq: 0,
            dst,
            qp: qp(q),
            bytes,
            lg: 0,
            ..Default::default()
        }
    }
    fn seg(txn: u64, q: u16, bytes: u32) -> Segment {
        seg_to(DST, txn, q, bytes)
    }
    fn ack(q: u16, ack_psn: u16) -> Ctrl {
        Ctrl {
            src: DST,
            dst: 0,
            lg: 0,
            rh: Rh::ack(qp(q), psn(ack_psn)),
            wire_bytes: 50,
            sent_at: 0,
        }
    }
    fn nak(q: u16, ack_psn: u16) -> Ctrl {
        Ctrl {
            rh: Rh::nak(qp(q), psn(ack_psn)),
            ..ack(q, ack_psn)
        }
    }
    fn credit(vc: u8, credits: u16) -> CreditMsg {
        CreditMsg {
            src: DST,
            dst: 0,
            lg: 0,
            vc,
            credits,
            sent_at: 0,
        }
    }

    /// CBFC on the ACK + CNP VC, the receiving end: every control message taken in owes its
    /// sender one credit (50 B at 256 B); while `ack_cr` is full what is owed to one sender is
    /// summed, and it goes back one message per cycle, oldest sender first, with skip on and
    /// off alike.
    #[test]
    fn ack_vc_credits_go_back_to_the_senders() {
        let run = |skip: bool| {
            let p = Params {
                ack_cbfc: true,
                ..Params::default()
            };
            let q = p.clone();
            // Output sinks of one message: `ack_cr` fills with the first return.
            let mut h = Harness::new("rclink_tx", ports(&p), Box::new(move |b| build(&q, b)), 1, 1).unwrap();
            h.sim_mut().set_skip(skip);
            h.sim().net("dut.ack_cr").unwrap().enable_log();
            let from = |src: ChipId| Ctrl { src, ..ack(5, 1) };
            let cnp = |src: ChipId| Ctrl {
                rh: Rh::cnp(qp(5)),
                ..from(src)
            };
            for m in [from(3), from(4), from(3), cnp(3)] {
                assert!(h.push("ctrl", m));
                h.step().unwrap();
            }
            let mut popped = Vec::new();
            for t in 4..20 {
                if t % 4 == 0 {
                    popped.extend(h.pop::<CreditMsg>("ack_cr"));
                }
                h.step().unwrap();
            }
            let net = h.sim().net("dut.ack_cr").unwrap();
            let net = net.as_any().downcast_ref::<hwsim_hw::StreamNet<CreditMsg>>().unwrap();
            let log: Vec<_> = net
                .log()
                .as_ref()
                .unwrap()
                .iter()
                .map(|(c, m)| (*c, m.src, m.dst, m.lg, m.vc, m.credits))
                .collect();
            let returned = h.sim().counter("dut.ack_credits_returned").unwrap();
            (log, returned, popped.len())
        };
        let (log, returned, popped) = run(true);
        assert_eq!(
            log,
            vec![
                (1, 0, 3, 0, ACK_VC, 1),
                (5, 0, 4, 0, ACK_VC, 1),
                (9, 0, 3, 0, ACK_VC, 2)
            ]
        );
        assert_eq!((returned, popped), (4, 3));
        assert_eq!(run(false), (log, returned, popped));
    }

    /// A bench around the DUT: inputs queued per port and pushed (one per port per cycle) as
    /// soon as they are due and the stream has room; a MAC that pops one frame per cycle while
    /// `mac_ready`; PAXI taking every `done` at once. Outputs are logged with their push cycle.
    struct Tb {
        h: Harness,
        segs: VecDeque<(Cycle, Segment)>,
        ctrls: VecDeque<(Cycle, Ctrl)>,
        credits: VecDeque<(Cycle, CreditMsg)>,
        mac_ready: bool,
        /// The MAC keeps the credits it owes (they go back when this is cleared).
        hold_mac_credits: bool,
        credits_owed: u8,
        frames: Vec<(Cycle, DataFrame)>,
        done: Vec<(Cycle, FrameDone)>,
    }

    impl Tb {
        fn new(p: Params) -> Tb {
            Tb::with_skip(p, true)
        }
        fn with_skip(p: Params, skip: bool) -> Tb {
            // The bench plays the MAC: it takes a frame when `mac_ready` and gives its credit
            // back at once; with 8 credits the frame stream's room is what binds, as in a MAC
            // with a one-frame input register.
            let p = Params { mac_credits: 8, ..p };
            let mut h = Harness::new("rclink_tx", ports(&p), Box::new(move |b| build(&p, b)), 1, 1).unwrap();
            h.sim_mut().set_skip(skip);
            Tb {
                h,
                segs: VecDeque::new(),
                ctrls: VecDeque::new(),
                credits: VecDeque::new(),
                mac_ready: true,
                hold_mac_credits: false,
                credits_owed: 0,
                frames: Vec::new(),
                done: Vec::new(),
            }
        }
        fn now(&self) -> Cycle {
            self.h.now()
        }
        fn seg(&mut self, s: Segment) {
            let at = self.now();
            self.segs.push_back((at, s));
        }
        fn ctrl(&mut self, c: Ctrl) {
            let at = self.now();
            self.ctrls.push_back((at, c));
        }
        fn credit(&mut self, c: CreditMsg) {
            let at = self.now();
            self.credits.push_back((at, c));
        }
        fn try_step(&mut self) -> Result<(), hwsim_hw::SimError> {
            let now = self.now();
            if self.credits_owed > 0 && !self.hold_mac_credits && self.h.push("mac_credit", self.credits_owed) {
                self.credits_owed = 0;
            }
            if let Some(&(at, s)) = self.segs.front() {
                if at <= now && self.h.push("seg", s) {
                    self.segs.pop_front();
                }
            }
            if let Some(&(at, c)) = self.ctrls.front() {
                if at <= now && self.h.push("ctrl", c) {
                    self.ctrls.pop_front();
                }
            }
            if let Some(&(at, c)) = self.credits.front() {
                if at <= now && self.h.push("credit", c) {
                    self.credits.pop_front();
                }
            }
            self.h.step()?;
            if self.mac_ready {
                if let Some(f) = self.h.pop::<DataFrame>("frame") {
                    self.frames.push((now, f));
                    self.credits_owed += 1;
                }
            }
            while let Some(d) = self.h.pop::<FrameDone>("done") {
                self.done.push((now, d));
            }
            Ok(())
        }
        fn step(&mut self) {
            self.try_step().unwrap();
        }
        fn steps(&mut self, n: u64) {
            for _ in 0..n {
                self.step();
            }
        }
        fn counter(&self, name: &str) -> u64 {
            self.h
                .sim()
                .counter(&format!("dut.{name}"))
                .unwrap_or_else(|| panic!("no counter {name}"))
        }
        fn slots_used(&self) -> u16 {
            self.h.peek::<u16>("slots_used")
        }
        /// First PSNs of the frames sent so far.
        fn psns(&self) -> Vec<u16> {
            self.frames.iter().map(|(_, f)| f.first_psn.value()).collect()
        }
        fn qps(&self) -> Vec<u16> {
            self.frames.iter().map(|(_, f)| f.qp.value()).collect()
        }
        fn txns(&self) -> Vec<u64> {
            self.frames.iter().map(|(_, f)| f.txn).collect()
        }
        /// Steps until `cond` holds; panics after 1000 cycles (a test must fail, not hang).
        fn until(&mut self, what: &str, cond: impl Fn(&Tb) -> bool) {
            let start = self.now();
            while !cond(self) {
                assert!(self.now() < start + 1000, "waited 1000 cycles for {what}");
                self.step();
            }
        }
        /// Sends one segment, waits for its frame, ACKs it fully and returns its credit (as the
        /// RX would), and waits for its FrameDone.
        fn send_and_ack(&mut self, s: Segment) -> DataFrame {
            let (nf, nd) = (self.frames.len(), self.done.len());
            self.seg(s);
            self.until("the frame", |tb| tb.frames.len() > nf);
            let f = self.frames[nf].1;
            let next = f.psn_of(f.first_idx + f.npkts - 1).next();
            self.ctrl(ack(f.qp.value(), next.value()));
            let cost: u32 = (f.first_idx..f.first_idx + f.npkts)
                .map(|i| f.pkt_bytes(i))
                .filter(|b| *b > 0)
                .map(|b| cbfc_cost(b, 50, CreditSize::B256))
                .sum();
            self.credit(credit(f.qp.vc_bank().value(), cost as u16));
            self.until("the FrameDone", |tb| tb.done.len() > nd);
            f
        }
    }

    #[test]
    fn defaults_follow_appendix_c() {
        let p = Params::default();
        assert_eq!((p.chip, p.lg, p.slots), (0, 0, 512));
        assert_eq!((p.max_payload, p.pkt_ovhd, p.credit_size), (1344, 50, 256));
        assert_eq!((p.uf_limit, p.initial_credits), (1, 1024));
        assert_eq!(p.vc_weights, [1, 1, 1, 1, 256]);
        assert_eq!((p.max_retry, p.retry_timeout), (15, 50_000));
        assert!(p.check().is_ok());
    }

    #[test]
    fn out_of_range_params_name_the_parameter() {
        let cases: Vec<(Params, &str)> = vec![
            (
                Params {
                    lg: 8,
                    ..Default::default()
                },
                "lg = 8",
            ),
            (
                Params {
                    slots: 0,
                    ..Default::default()
                },
                "slots = 0",
            ),
            (
                Params {
                    slots: 2048,
                    ..Default::default()
                },
                "slots = 2048",
            ),
            (
                Params {
                    max_payload: 0,
                    ..Default::default()
                },
                "max_payload = 0",
            ),
            (
                Params {
                    pkt_ovhd: 512,
                    ..Default::default()
                },
                "pkt_ovhd = 512",
            ),
            (
                Params {
                    credit_size: 100,
                    ..Default::default()
                },
                "credit_size = 100",
            ),
            (
                Params {
                    uf_limit: 0,
                    ..Default::default()
                },
                "uf_limit = 0",
            ),
            (
                Params {
                    uf_limit: 8,
                    ..Default::default()
                },
                "uf_limit = 8",
            ),
            (
                Params {
                    initial_credits: 32768,
                    ..Default::default()
                },
                "initial_credits = 32768",
            ),
            (
                Params {
                    initial_credits: 1,
                    ..Default::default()
                },
                "initial_credits = 1",
            ),
            (
                Params {
                    vc_weights: [1, 0, 1, 1, 1],
                    ..Default::default()
                },
                "vc_weights[1] = 0",
            ),
            (
                Params {
                    retry_timeout: 0,
                    ..Default::default()
                },
                "retry_timeout = 0",
            ),
        ];
        for (p, want) in cases {
            let err = p.check().unwrap_err();
            assert!(err.starts_with(want), "{err} should start with {want}");
        }
        let err = Harness::new(
            "rclink_tx",
            ports(&Params::default()),
            Box::new(|b| {
                build(
                    &Params {
                        credit_size: 3,
                        ..Default::default()
                    },
                    b,
                )
            }),
            1,
            1,
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(err.contains("credit_size = 3"), "{err}");
    }

    #[test]
    fn the_frame_format_sets_the_header_tags_and_ect_only_on_standard() {
        let p = Params {
            frame_format: FrameFormat::AfhLite,
            vlan: true,
            ..Params::default()
        };
        let e = p.check().unwrap_err();
        assert!(e.contains("vlan = true") && e.contains("AFH_Lite"), "{e}");
        let p = Params {
            data_priority: 8,
            ..Params::default()
        };
        assert!(p.check().unwrap_err().contains("data_priority = 8"));
        let p = Params {
            frame_format: FrameFormat::AfhGen1,
            vlan: true,
            data_priority: 3,
            ..Params::default()
        };
        let h = p.header().unwrap();
        assert_eq!(
            (h.format, h.pcp, h.dscp),
            (FrameFormat::AfhGen1, Some(UInt(3)), UInt(0))
        );
        assert_eq!(Params::default().header().unwrap().dscp, UInt(16), "Standard: DSCP CS2");
    }

    #[test]
    fn paxi_responses_carry_rsp_priority_and_requests_data_priority() {
        use hwsim_ports::{FlitKind, PaxiFlit};
        let p = Params {
            rsp_priority: 8,
            ..Params::default()
        };
        assert!(p.check().unwrap_err().contains("rsp_priority = 8"));
        // Tagged Standard frames: the PCP and the DSCP class selector both carry the priority.
        let mut tb = Tb::new(Params {
            vlan: true,
            ..Params::default()
        });
        let kinds = [FlitKind::WData, FlitKind::B, FlitKind::Ar, FlitKind::R];
        for (k, kind) in kinds.into_iter().enumerate() {
            tb.seg(Segment {
                paxi: PaxiFlit::data(kind, 0),
                ..seg(k as u64 + 1, 0, 64)
            });
            tb.step();
        }
        tb.steps(10);
        let got: Vec<(FlitKind, Option<UInt<3>>, UInt<6>)> = tb
            .frames
            .iter()
            .map(|(_, f)| (f.paxi.kind, f.hdr.pcp, f.hdr.dscp))
            .collect();
        assert_eq!(
            got,
            vec![
                (FlitKind::WData, Some(UInt(2)), UInt(16)),
                (FlitKind::B, Some(UInt(1)), UInt(8)),
                (FlitKind::Ar, Some(UInt(2)), UInt(16)),
                (FlitKind::R, Some(UInt(1)), UInt(8)),
            ]
        );
    }

    #[test]
    fn psn_per_flow_in_order_and_latency() {
        let mut tb = Tb::new(Params::default());
        tb.steps(3);
        let pushed_at = tb.now();
        tb.seg(seg(1, 0, 4096)); // 4 packets: PSN 0..3
        tb.step();
        tb.step();
        // Pushed at n−1, popped and granted at n, visible to the MAC at n+1.
        assert_eq!(tb.frames[0].0, pushed_at + 1);
        tb.seg(seg(2, 0, 100)); // PSN 4
        tb.seg(seg(3, 1, 100)); // another QP: its own PSN space
        tb.seg(seg_to(2, 4, 0, 100)); // another dst, same QP: its own PSN space
        tb.seg(seg(5, 0, 0)); // a 0-byte segment is one packet: PSN 5
        tb.seg(seg(6, 0, 2689)); // 3 packets: PSN 6..8
        tb.steps(20);
        let got: Vec<(u64, u16, u8)> = tb
            .frames
            .iter()
            .map(|(_, f)| (f.txn, f.first_psn.value(), f.npkts))
            .collect();
        assert_eq!(
            got,
            vec![(1, 0, 4), (2, 4, 1), (3, 0, 1), (4, 0, 1), (5, 5, 1), (6, 6, 3)]
        );
        let f = tb.frames[0].1;
        assert_eq!((f.src, f.dst, f.lg, f.first_idx), (0, DST, 0, 0));
        assert_eq!((f.max_payload, f.pkt_ovhd, f.frame_bytes), (1344, 50, 4096));
        assert_eq!(f.ecn, Ecn::Ect0);
        assert_eq!(f.sent_at, pushed_at + 1);
        assert_eq!(tb.counter("frames_sent"), 6);
        assert_eq!(tb.counter("pkts_sent"), 11);
        assert_eq!(tb.counter("payload_bytes_sent"), 4096 + 300 + 2689);
        assert_eq!(tb.counter("wire_bytes_sent"), 4096 + 300 + 2689 + 11 * 50);
        assert_eq!(tb.slots_used(), 11);
        assert_eq!(tb.counter("slots_in_use"), 11);
    }

    #[test]
    fn psn_wraps_and_cumulative_ack_across_the_wrap() {
        let mut tb = Tb::new(Params::default());
        // 1365 frames of 3 packets: PSN 0, 3, …, 4092; the next starts at 4095 and wraps.
        for i in 0..1365 {
            let f = tb.send_and_ack(seg(i, 0, 3 * 1344));
            assert_eq!(f.first_psn.value(), (i * 3) as u16);
        }
        assert_eq!(tb.counter("frames_done"), 1365);
        tb.seg(seg(9000, 0, 3 * 1344));
        tb.steps(4);
        let f = tb.frames.last().unwrap().1;
        assert_eq!(f.first_psn.value(), 4095);
        assert_eq!((f.psn_of(1).value(), f.psn_of(2).value()), (0, 1));
        assert_eq!(tb.slots_used(), 3);
        // ACK up to PSN 0 (exclusive): 4095 is ACKed, but the frame is not complete.
        tb.ctrl(ack(0, 0));
        tb.steps(4);
        assert_eq!(tb.done.len(), 1365);
        assert_eq!(tb.slots_used(), 3);
        // ACK 2 covers 0 and 1 across the wrap: the frame is done and its slots freed.
        tb.ctrl(ack(0, 2));
        tb.steps(4);
        assert_eq!(tb.done.len(), 1366);
        assert_eq!(tb.done.last().unwrap().1.txn, 9000);
        assert_eq!(tb.done.last().unwrap().1.bytes, 3 * 1344);
        assert_eq!(tb.slots_used(), 0);
        assert_eq!(tb.counter("slots_in_use"), 0);
        // Every frame's credit came back but the last one's.
        assert_eq!(tb.counter("credits_outstanding"), 18);
        // A stale ACK (behind the window) and an ACK for an unknown flow are ignored.
        tb.ctrl(ack(0, 4090));
        tb.ctrl(ack(5, 1));
        tb.steps(4);
        assert_eq!(tb.counter("acks_ignored"), 2);
        assert_eq!(tb.counter("acks_received"), 1365 + 2 + 2);
    }

    #[test]
    fn slot_groups_and_backpressure() {
        let mut tb = Tb::new(Params {
            slots: 8,
            ..Default::default()
        });
        tb.seg(seg(1, 0, 4096));
        tb.seg(seg(2, 0, 4096));
        tb.seg(seg(3, 0, 4096)); // needs 4 slots, none left: stays in `seg`
        tb.steps(30);
        assert_eq!(tb.txns(), vec![1, 2]);
        assert_eq!(tb.slots_used(), 8);
        assert_eq!(tb.counter("slots_peak"), 8);
        assert_eq!(tb.counter("segments_accepted"), 2);
        // Counted once per blocked segment, however long it waits.
        assert_eq!(tb.counter("diag_slot_full"), 1);
        // A partial ACK of frame 1 frees nothing: the slot group goes as a whole.
        tb.ctrl(ack(0, 2));
        tb.steps(5);
        assert_eq!(tb.slots_used(), 8);
        assert!(tb.done.is_empty());
        // ACK frame 1 completely: its 4 slots take segment 3 in the same cycle.
        let at = tb.now();
        tb.ctrl(ack(0, 4));
        tb.steps(5);
        assert_eq!(tb.done.len(), 1);
        assert_eq!(
            tb.done[0],
            (
                at + 1,
                FrameDone {
                    txn: 1,
                    frame_seq: 0,
                    bytes: 4096,
                    failed: false
                }
            )
        );
        assert_eq!(tb.txns(), vec![1, 2, 3]);
        assert_eq!(tb.frames[2].0, at + 1, "segment 3 admitted and granted with the ACK");
        assert_eq!(tb.slots_used(), 8);
        assert_eq!(tb.counter("slots_peak"), 8);
        // A second blocked segment counts again.
        tb.seg(seg(4, 0, 100));
        tb.steps(10);
        assert_eq!(tb.counter("diag_slot_full"), 2);
        tb.ctrl(ack(0, 12));
        tb.steps(10);
        assert_eq!(tb.txns(), vec![1, 2, 3, 4]);
        assert_eq!(tb.slots_used(), 1);
        assert_eq!(tb.done.len(), 3);
    }

    #[test]
    fn cbfc_cost_blocking_and_credit_return() {
        let p = Params {
            initial_credits: 13,
            ..Default::default()
        };
        {
            let mut b = Tb::new(p.clone());
            b.step();
        }
        // Costs: 1344 B → 6, 4096 B → 6+6+6+1, a 0-byte packet → 0 (no credit consumed).
        let cs = CreditSize::B256;
        let cost = |bytes: u32, from: u8| -> u32 {
            split_packets(bytes, NonZeroU32::new(1344).unwrap())
                .skip(from as usize)
                .filter(|b| *b > 0)
                .map(|b| cbfc_cost(b, 50, cs))
                .sum()
        };
        assert_eq!(cost(1344, 0), 6);
        assert_eq!(cost(4096, 0), 19);
        assert_eq!(cost(4096, 2), 7);
        assert_eq!(cost(0, 0), 0);

        let mut tb = Tb::new(p);
        tb.seg(seg(1, 0, 1344)); // 13 ≥ 6+1 → 7 left
        tb.seg(seg(2, 0, 1344)); // 7 ≥ 7 → 1 left (the boundary goes)
        tb.seg(seg(3, 0, 1344)); // 1 < 7: credit-blocked
        tb.steps(20);
        assert_eq!(tb.txns(), vec![1, 2]);
        let view = tb.h.peek::<CreditMsg>("credit_view");
        assert_eq!((view.src, view.dst, view.vc, view.credits), (0, DST, 0, 1));
        assert_eq!(tb.counter("credits_outstanding"), 12);
        let blocked = tb.counter("diag_credit_block");
        assert!(blocked >= 1);
        // Idle cycles do not count blocks: only rounds do, and rounds need a change.
        tb.steps(100);
        assert_eq!(tb.counter("diag_credit_block"), blocked);
        // 5 credits → 6 remaining < 7: still blocked (one more round, one more block).
        tb.credit(credit(0, 5));
        tb.steps(5);
        assert_eq!(tb.txns(), vec![1, 2]);
        assert_eq!(tb.counter("diag_credit_block"), blocked + 1);
        assert_eq!(tb.h.peek::<CreditMsg>("credit_view").credits, 6);
        // One more credit: 7 ≥ 7 → goes in the cycle the credit is seen.
        let at = tb.now();
        tb.credit(credit(0, 1));
        tb.steps(5);
        assert_eq!(tb.txns(), vec![1, 2, 3]);
        assert_eq!(tb.frames[2].0, at + 1);
        assert_eq!(tb.h.peek::<CreditMsg>("credit_view").credits, 1);
        // Other VCs and other destinations have their own ledgers; a 0-byte frame needs none.
        tb.seg(seg(4, 1, 1344));
        tb.seg(seg_to(2, 5, 0, 1344));
        tb.seg(seg(6, 0, 0));
        tb.steps(20);
        assert_eq!(tb.txns(), vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(tb.counter("credits_outstanding"), 12 + 6 + 6);
        // Everything back: the gauge returns to 0.
        tb.credit(credit(0, 12));
        tb.credit(credit(1, 6));
        tb.credit(CreditMsg { src: 2, ..credit(0, 6) });
        tb.steps(10);
        assert_eq!(tb.counter("credits_outstanding"), 0);
    }

    #[test]
    fn credit_over_return_is_a_violation() {
        let mut tb = Tb::new(Params::default());
        tb.seg(seg(1, 0, 1344));
        tb.steps(5);
        tb.credit(credit(0, 6)); // exactly back to 1024: fine
        tb.steps(3);
        tb.credit(credit(0, 1)); // 1025 > 1024
        let err = loop {
            if let Err(e) = tb.try_step() {
                break e.to_string();
            }
            assert!(tb.now() < 100, "no violation reported");
        };
        assert!(err.contains("credit over-return for dst 1 VC 0"), "{err}");
        assert!(err.contains("1024 remaining + 1 returned > 1024"), "{err}");
    }

    #[test]
    fn misrouted_and_unsendable_inputs_are_violations() {
        let run = |p: Params, f: &dyn Fn(&mut Tb)| -> String {
            let mut tb = Tb::new(p);
            f(&mut tb);
            for _ in 0..10 {
                if let Err(e) = tb.try_step() {
                    return e.to_string();
                }
            }
            panic!("no violation");
        };
        let e = run(Params::default(), &|tb| tb.seg(Segment { lg: 3, ..seg(1, 0, 10) }));
        assert!(e.contains("for LG 3, this is LG 0"), "{e}");
        let e = run(
            Params {
                slots: 2,
                ..Default::default()
            },
            &|tb| tb.seg(seg(1, 0, 4096)),
        );
        assert!(e.contains("4 packets never fit"), "{e}");
        let e = run(
            Params {
                initial_credits: 6,
                ..Default::default()
            },
            &|tb| tb.seg(seg(1, 0, 4096)),
        );
        assert!(e.contains("a packet costs 6 credits"), "{e}");
        let e = run(Params::default(), &|tb| tb.ctrl(Ctrl { dst: 5, ..ack(0, 1) }));
        assert!(e.contains("ctrl for chip 5 LG 0 arrived at chip 0 LG 0"), "{e}");
        let e = run(Params::default(), &|tb| tb.credit(credit(4, 1)));
        assert!(e.contains("VC 4"), "{e}");
    }

    /// Fills the VC queues while the MAC is stalled (the first frame granted sits in the MAC's
    /// one-entry input), then lets the MAC run: frames come out in arbitration order.
    fn order_after_stall(p: Params, segs: &[Segment]) -> Vec<u16> {
        let mut tb = Tb::new(p);
        tb.mac_ready = false;
        for s in segs {
            tb.seg(*s);
        }
        tb.steps(4 * segs.len() as u64 + 4);
        tb.mac_ready = true;
        tb.steps(4 * segs.len() as u64 + 4);
        tb.qps()
    }

    #[test]
    fn rr_weights_are_respected() {
        let segs = [
            seg(0, 3, 100), // granted at once (into the stalled MAC): pointer 3 → 4
            seg(1, 0, 100),
            seg(2, 0, 100),
            seg(3, 0, 100),
            seg(4, 1, 100),
            seg(5, 1, 100),
            seg(6, 1, 100),
        ];
        let p = Params {
            vc_weights: [2, 1, 1, 1, 256],
            ..Default::default()
        };
        // MUL (4) is empty → bank 0 sends: pointer 0, counter 1; its weight 2 gives it a second
        // frame; then bank 1 once; then bank 0 again (pointer 2, 3, 4 empty), …
        assert_eq!(order_after_stall(p, &segs), vec![3, 0, 0, 1, 0, 1, 1]);
        // Equal weights alternate.
        assert_eq!(order_after_stall(Params::default(), &segs), vec![3, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn rr_pointer_and_counter_stay_on_a_credit_blocked_bank() {
        // Bank 0 has weight 2; (dst 1, vc 0) has 12 credits.
        let mut tb = Tb::new(Params {
            vc_weights: [2, 1, 1, 1, 256],
            initial_credits: 12,
            ..Default::default()
        });
        tb.seg(seg(1, 0, 1344)); // a0, cost 6: sent; pointer stays on bank 0 (counter 1 of 2)
        tb.seg(seg(2, 0, 1344)); // a1, cost 6 > 6 − 1: credit-blocked
        tb.seg(seg(3, 0, 0)); // a2, 0 B (no credit needed), behind a1 in its flow
        tb.steps(12);
        assert_eq!(tb.txns(), vec![1]);
        // Rounds that grant nothing: they must move neither the pointer nor the counter.
        let rounds = tb.counter("diag_arb_calls");
        let blocks = tb.counter("diag_credit_block");
        tb.ctrl(ack(0, 1));
        tb.steps(3);
        tb.ctrl(Ctrl {
            rh: Rh::cnp(qp(3)), // a QP that never sent: nothing to slow down
            ..ack(0, 0)
        });
        tb.steps(3);
        tb.credit(credit(2, 0));
        tb.steps(3);
        assert_eq!(tb.counter("diag_arb_calls"), rounds + 3);
        assert_eq!(tb.counter("diag_credit_block"), blocks + 3);
        assert_eq!(tb.txns(), vec![1]);
        assert_eq!(tb.counter("cnp_received"), 1);
        // In one cycle bank 1 gets a frame and bank 0 the credit for a1: bank 0 (the pointer's)
        // goes first and that is its second turn (counter 2 = weight), so bank 1 is next, then
        // bank 0 again. A pointer moved by the empty rounds would send b0 first; a counter reset
        // by them would send a2 before b0.
        tb.seg(seg(4, 1, 1344));
        tb.credit(credit(0, 6));
        tb.steps(12);
        assert_eq!(tb.txns(), vec![1, 2, 4, 3]);
    }

    #[test]
    fn per_flow_blocking_skips_later_frames_of_the_blocked_flow_only() {
        let mut tb = Tb::new(Params {
            initial_credits: 12,
            ..Default::default()
        });
        tb.mac_ready = false;
        tb.seg(seg(1, 0, 1344)); // A0: granted into the stalled MAC; (dst 1, vc 0) 12 → 6
        tb.seg(seg(2, 0, 4096)); // A1: its first packet costs 6, needs 7: blocked
        tb.seg(seg(3, 0, 64)); // A2: costs 1 and would pass, but must not overtake A1
        tb.seg(seg(4, 4, 64)); // C0: QP 4 is bank 0 too, same ledger, another flow: may go
        tb.seg(seg_to(2, 5, 0, 1344)); // B0: dst 2, same VC, its own ledger: may go
        tb.steps(20);
        tb.mac_ready = true;
        tb.steps(20);
        assert_eq!(tb.txns(), vec![1, 4, 5]);
        assert!(tb.counter("diag_credit_block") >= 1);
        // CBFC per packet: 5 + 7 = 12 lets A1's first packet go (12 ≥ 6 + 1 → 6 left), not its
        // second (6 < 7); A2 still waits behind the rest of A1.
        tb.credit(credit(0, 7));
        tb.steps(10);
        assert_eq!(tb.txns(), vec![1, 4, 5, 2]);
        tb.credit(credit(0, 6)); // 12: packet 2 of A1 (PSN 2)
        tb.steps(10);
        // 12: packets 3 and 4 (6 + 1, 5 left), then A2 (1 + 1 ≤ 5).
        tb.credit(credit(0, 6));
        tb.steps(10);
        assert_eq!(tb.txns(), vec![1, 4, 5, 2, 2, 2, 3]);
        let a: Vec<(u16, u8)> = tb
            .frames
            .iter()
            .filter(|(_, f)| f.dst == DST && f.qp == qp(0))
            .map(|(_, f)| (f.first_psn.value(), f.npkts))
            .collect();
        assert_eq!(
            a,
            vec![(0, 1), (1, 1), (2, 1), (3, 2), (5, 1)],
            "flow A on the wire in PSN order, A1 in three runs"
        );
        // (dst 1, vc 0): 12 − 4 outstanding; (dst 2, vc 0): B0's 6.
        assert_eq!(tb.counter("credits_outstanding"), 8 + 6);
    }

    #[test]
    fn nak_seed_example_resends_7_8_9() {
        let mut tb = Tb::new(Params::default());
        for i in 0..5 {
            tb.send_and_ack(seg(i, 0, 1000)); // PSN 0..4, ACKed
        }
        for i in 5..10 {
            tb.seg(seg(i, 0, 1000)); // PSN 5..9 in flight
        }
        tb.steps(20);
        assert_eq!(tb.psns(), (0..10).collect::<Vec<_>>());
        assert_eq!(tb.slots_used(), 5);
        tb.ctrl(nak(0, 7));
        tb.steps(20);
        // 5 and 6 freed (their frames are done), 7, 8, 9 resent in that order.
        let done: Vec<u64> = tb.done.iter().map(|(_, d)| d.txn).collect();
        assert_eq!(done, (0..7).collect::<Vec<_>>());
        assert_eq!(&tb.psns()[10..], &[7, 8, 9]);
        assert_eq!(tb.slots_used(), 3);
        assert_eq!(tb.counter("diag_nak_processed"), 1);
        assert_eq!(tb.counter("diag_nak_retransmit_total"), 3);
        assert_eq!(tb.counter("frames_sent"), 13);
        // PSN 0..4 had their credit back; 5..9 and the three resends consume 5 credits each.
        assert_eq!(tb.counter("credits_outstanding"), 8 * 5);
        tb.ctrl(ack(0, 10));
        tb.steps(10);
        assert_eq!(tb.done.len(), 10);
        assert_eq!(tb.slots_used(), 0);
    }

    #[test]
    fn nak_resends_frame_tails_at_the_head_of_the_vc_queue() {
        let mut tb = Tb::new(Params::default());
        tb.seg(seg(1, 0, 4096)); // PSN 0..3
        tb.seg(seg(2, 0, 2688)); // PSN 4, 5
        tb.steps(10);
        tb.mac_ready = false;
        tb.seg(seg(3, 4, 100)); // another flow of bank 0, waiting behind the stalled MAC
        tb.seg(seg(4, 0, 100)); // flow A's next frame, PSN 6, never sent yet
        tb.steps(10);
        tb.ctrl(nak(0, 2));
        tb.steps(3);
        tb.mac_ready = true;
        tb.steps(20);
        let got: Vec<(u64, u16, u8, u8)> = tb
            .frames
            .iter()
            .map(|(_, f)| (f.txn, f.first_psn.value(), f.first_idx, f.npkts))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0, 0, 4),
                (2, 4, 0, 2),
                (3, 0, 0, 1), // granted into the stalled MAC before the NAK
                (1, 2, 2, 2), // the tail of frame 1: packets 2, 3
                (2, 4, 0, 2),
                (4, 6, 0, 1),
            ]
        );
        assert!(tb.done.is_empty(), "frame 1 only half ACKed");
        assert_eq!(tb.counter("diag_nak_retransmit_total"), 4);
        assert_eq!(tb.frames[3].1.payload(), 1344 + 64);
        tb.ctrl(ack(0, 7));
        tb.ctrl(ack(4, 1));
        tb.steps(10);
        assert_eq!(tb.done.len(), 4);
        assert_eq!(tb.slots_used(), 0);
    }

    #[test]
    fn nak_ring_sort_across_the_psn_wrap() {
        let mut tb = Tb::new(Params::default());
        for i in 0..1364 {
            tb.send_and_ack(seg(i, 0, 3 * 1344)); // PSN 0..4091
        }
        tb.send_and_ack(seg(9999, 0, 2 * 1344)); // 4092, 4093
        for i in 0..4 {
            tb.seg(seg(10_000 + i, 0, 100)); // 4094, 4095, 0, 1
        }
        tb.steps(20);
        let n = tb.frames.len();
        assert_eq!(&tb.psns()[n - 4..], &[4094, 4095, 0, 1]);
        tb.ctrl(nak(0, 4095));
        tb.steps(20);
        assert_eq!(&tb.psns()[n..], &[4095, 0, 1]);
        assert_eq!(tb.done.last().unwrap().1.txn, 10_000);
    }

    #[test]
    fn retry_limit_makes_the_qp_fatal_and_other_qps_go_on() {
        let mut tb = Tb::new(Params {
            max_retry: 2,
            ..Default::default()
        });
        for i in 0..3 {
            tb.seg(seg(i, 0, 100)); // PSN 0, 1, 2 on QP 0
        }
        tb.steps(10);
        tb.ctrl(nak(0, 0));
        tb.steps(10);
        tb.ctrl(nak(0, 0));
        tb.steps(10);
        tb.ctrl(nak(0, 0)); // third in a row without progress: QP 0 is fatal
        tb.steps(10);
        assert_eq!(tb.counter("diag_nak_processed"), 2);
        assert_eq!(tb.counter("diag_max_retry_hit"), 1);
        assert_eq!(tb.counter("frames_sent"), 9);
        // Its three frames are given up and reported failed; the slots are free again.
        assert_eq!(tb.counter("frames_failed"), 3);
        assert_eq!(tb.counter("slots_in_use"), 0);
        assert_eq!(tb.counter("fatal_qp"), 1, "QP 0 (+1)");
        assert!(tb.counter("fatal_at") > 0);
        let failed: Vec<u64> = tb.done.iter().filter(|(_, d)| d.failed).map(|(_, d)| d.txn).collect();
        assert_eq!(failed, vec![0, 1, 2]);
        // A new segment of the dead QP fails at once; QP 1 still sends.
        tb.seg(seg(7, 0, 100));
        tb.seg(seg(8, 1, 100));
        tb.steps(10);
        assert_eq!(tb.counter("frames_failed"), 4);
        assert_eq!(tb.counter("frames_sent"), 10, "only QP 1's frame went out");
        assert!(tb.done.iter().any(|(_, d)| d.txn == 7 && d.failed));
    }

    #[test]
    fn retry_timeout_resends_from_the_smallest_waitack_psn() {
        let mut tb = Tb::new(Params {
            retry_timeout: 100,
            ..Default::default()
        });
        tb.seg(seg(1, 0, 100)); // PSN 0
        tb.seg(seg(2, 0, 100)); // PSN 1
        tb.steps(10);
        let t0 = tb.frames[0].0;
        tb.ctrl(ack(0, 1)); // frame 1 ACKed: its timer is void
        let t1 = tb.frames[1].0;
        assert!(t1 > t0);
        while tb.now() < t1 + 100 {
            tb.step();
        }
        assert_eq!(tb.psns(), vec![0, 1], "nothing resent before the deadline");
        tb.steps(5);
        // Frame 2's resend is granted exactly at its deadline.
        assert_eq!(tb.psns(), vec![0, 1, 1]);
        assert_eq!(tb.frames[2].0, t1 + 100);
        assert_eq!(tb.counter("diag_timeout"), 1);
        assert_eq!(tb.counter("diag_timeout_retransmit_total"), 1);
        assert_eq!(tb.counter("diag_nak_processed"), 0);
        tb.ctrl(ack(0, 2));
        tb.steps(300);
        assert_eq!(tb.psns(), vec![0, 1, 1], "no timeout after the ACK");
    }

    #[test]
    fn a_run_ends_once_everything_is_acked() {
        let mut tb = Tb::new(Params::default());
        for i in 0..3 {
            tb.seg(seg(i, 0, 100));
        }
        tb.steps(10);
        tb.ctrl(ack(0, 3));
        tb.until("three FrameDone", |tb| tb.done.len() == 3);
        // No timer is left for the ACKed frames: the simulation goes quiescent at once instead
        // of waking at each void retry deadline.
        let activations = tb.h.sim().stats().activations;
        assert_eq!(tb.h.run(1_000_000).unwrap(), hwsim_hw::Stop::Quiescent);
        assert!(tb.now() < 100, "ended at {}", tb.now());
        assert!(tb.h.sim().stats().activations <= activations + 2);
    }

    #[test]
    fn done_messages_queue_when_paxi_is_slow() {
        let mut tb = Tb::new(Params::default());
        for i in 0..4 {
            tb.seg(seg(i, 0, 100));
        }
        tb.steps(12);
        // One cumulative ACK completes 4 frames: four FrameDone, one per cycle.
        let at = tb.now();
        tb.ctrl(ack(0, 4));
        tb.steps(10);
        let cycles: Vec<Cycle> = tb.done.iter().map(|(c, _)| *c).collect();
        // The bench pops each at once; the space shows a cycle later: one every 2 cycles.
        assert_eq!(cycles, vec![at + 1, at + 3, at + 5, at + 7]);
        assert_eq!(tb.counter("frames_done"), 4);
    }

    /// What a run leaves behind: every counter, and the frames and FrameDone with their cycles.
    /// A TYPE2 (multicast) segment of `bytes` to group `g`.
    fn mul_seg(txn: u64, g: u16, bytes: u32) -> Segment {
        Segment {
            paxi: hwsim_ports::PaxiFlit::data(FlitKind::Mul, 0),
            ..seg_to(hwsim_ports::MCAST_BIT | g, txn, 0, bytes)
        }
    }
    fn t2_credit(from: ChipId, credits: u16) -> CreditMsg {
        CreditMsg {
            src: from,
            vc: TYPE2_VC,
            ..credit(TYPE2_VC, credits)
        }
    }

    #[test]
    fn type2_goes_without_a_slot_when_every_member_has_credit() {
        // 4096 B = 1344 × 3 + 64: 6 + 6 + 6 + 1 = 19 credits at 256 B with 50 B overhead; 20
        // admit one frame (each packet leaves uf_limit 1), not two.
        let p = Params {
            groups: vec![vec![1, 2]],
            type2_credits: 20,
            ..Params::default()
        };
        for skip in [true, false] {
            let mut tb = Tb::with_skip(p.clone(), skip);
            tb.seg(mul_seg(7, 0, 4096));
            tb.seg(mul_seg(8, 0, 4096));
            tb.steps(20);
            assert_eq!(tb.frames.len(), 1, "the second waits for credit");
            let f = tb.frames[0].1;
            assert_eq!(f.dst, hwsim_ports::MCAST_BIT);
            assert_eq!((f.npkts, f.first_idx, f.frame_bytes, f.txn), (4, 0, 4096, 7));
            assert_eq!(f.paxi.kind, FlitKind::Mul);
            assert_eq!(f.ecn, Ecn::NotEct, "TYPE2 is not under DCQCN");
            assert_eq!(tb.slots_used(), 0, "no slot, no PSN");
            assert!(tb.counter("type2_credit_block") > 0);
            assert_eq!(tb.counter("credits_outstanding"), 38, "19 from each member's ledger");
            // One member's return is not enough: both ledgers must admit the frame.
            tb.credit(t2_credit(1, 19));
            tb.steps(20);
            assert_eq!(tb.frames.len(), 1);
            tb.credit(t2_credit(2, 19));
            tb.until("the second frame", |tb| tb.frames.len() == 2);
            assert_eq!(tb.frames[1].1.txn, 8);
            tb.steps(10);
            assert!(tb.done.is_empty(), "TYPE2 is never ACKed: no FrameDone");
            assert_eq!(tb.counter("type2_frames_sent"), 2);
            assert_eq!(tb.counter("type2_payload_bytes_sent"), 8192);
        }
    }

    #[test]
    fn the_multicast_mac_credit_holds_type2_until_the_mac_frees_one() {
        // One multicast MAC TX credit; the MAC keeps its MAC2TX credits for a while (its
        // replication buffer holds the frame): the second TYPE2 frame waits, a TYPE1 frame
        // does not (it needs only a MAC2TX credit, of which the bench has 8).
        let p = Params {
            groups: vec![vec![1]],
            mul_mac_credits: 1,
            ..Params::default()
        };
        for skip in [true, false] {
            let mut tb = Tb::with_skip(p.clone(), skip);
            tb.hold_mac_credits = true;
            tb.seg(mul_seg(1, 0, 64));
            tb.seg(mul_seg(2, 0, 64));
            tb.seg(seg(3, 0, 64));
            tb.steps(30);
            assert_eq!(tb.txns(), [1, 3], "TYPE2 #2 waits for the multicast credit");
            assert!(tb.counter("type2_mac_block") > 0);
            assert_eq!(tb.h.peek::<u8>("type2.mac_credit"), 0);
            // The MAC gives back both credits: the TYPE2 one frees the multicast credit.
            tb.hold_mac_credits = false;
            tb.until("the second TYPE2 frame", |tb| tb.frames.len() == 3);
            assert_eq!(tb.txns(), [1, 3, 2]);
        }
    }

    #[test]
    fn type2_takes_its_weighted_turn_then_type1_gets_one() {
        // MUL weight 2: two TYPE2 frames, then a TYPE1 frame, while both have frames queued.
        let p = Params {
            groups: vec![vec![1]],
            vc_weights: [1, 1, 1, 1, 2],
            ..Params::default()
        };
        let mut tb = Tb::new(p);
        tb.mac_ready = false;
        for t in 0..3 {
            tb.seg(seg(100 + t, 0, 64));
        }
        for t in 0..6 {
            tb.seg(mul_seg(t, 0, 64));
        }
        tb.steps(30);
        tb.mac_ready = true;
        tb.until("nine frames", |tb| tb.frames.len() == 9);
        let kinds: Vec<u8> = tb.frames.iter().map(|(_, f)| f.paxi.kind.bits()).collect();
        // The first TYPE1 frame was granted before the TYPE2 segments arrived (the MAC held it).
        let (w, m) = (FlitKind::WData.bits(), FlitKind::Mul.bits());
        assert_eq!(kinds, [w, m, m, w, m, m, w, m, m], "{kinds:?}");
    }

    type Outcome = (Vec<(String, u64)>, Vec<(Cycle, DataFrame)>, Vec<(Cycle, FrameDone)>);

    /// A scenario mixing every path, run with event skip on and off.
    fn mixed(skip: bool) -> Outcome {
        let mut tb = Tb::with_skip(
            Params {
                slots: 16,
                initial_credits: 40,
                retry_timeout: 500,
                vc_weights: [2, 1, 3, 1, 256],
                ..Default::default()
            },
            skip,
        );
        for i in 0..12u64 {
            let q = (i % 5) as u16;
            tb.seg(seg(i, q, 700 + (i as u32 * 397) % 3000));
        }
        for t in 0..400u64 {
            match t {
                60 => tb.ctrl(ack(0, 3)),
                70 => tb.ctrl(nak(1, 1)),
                80 => tb.credit(credit(0, 10)),
                90 => tb.credit(credit(1, 12)),
                95 => tb.credit(credit(2, 20)),
                120 => tb.ctrl(ack(2, 2)),
                150 => tb.mac_ready = false,
                180 => tb.mac_ready = true,
                _ => {}
            }
            tb.step();
        }
        tb.steps(1000);
        let counters =
            tb.h.sim()
                .counters_of("dut")
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
        (counters, tb.frames, tb.done)
    }

    #[test]
    fn event_skip_on_and_off_give_the_same_results() {
        let a = mixed(true);
        let b = mixed(false);
        assert!(a.1.len() > 10, "the scenario sends: {:?}", a.0);
        assert!(a.0.iter().any(|(n, v)| n.contains("diag_credit_block") && *v > 0));
        assert!(a.0.iter().any(|(n, v)| n.contains("diag_timeout") && *v > 0));
        assert_eq!(a.0, b.0);
        assert_eq!(a.1, b.1);
        assert_eq!(a.2, b.2);
    }

    #[test]
    fn idle_ticks_change_nothing() {
        let mut tb = Tb::with_skip(
            Params {
                initial_credits: 8,
                ..Default::default()
            },
            false,
        );
        tb.seg(seg(1, 0, 1344));
        tb.seg(seg(2, 0, 1344)); // credit-blocked forever
        tb.steps(20);
        let before: Vec<(String, u64)> =
            tb.h.sim()
                .counters_of("dut")
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
        tb.steps(5000);
        let after: Vec<(String, u64)> =
            tb.h.sim()
                .counters_of("dut")
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
        assert_eq!(before, after);
    }
}
