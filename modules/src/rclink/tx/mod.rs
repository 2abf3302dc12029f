//! RC Link TX of one link group (LG) of one chip, as the composition of its RTL modules: the
//! slot FIFO ([`slot_fifo`](super::slot_fifo): slots, PSN, ACK, Go-Back-N, retry timeout, QP
//! fatal), the VC queues ([`vc_queues`](super::vc_queues): the bank arbiter's queue side, the
//! per-flow rule, the grant) and the bank arbiter's round robin, with their gates — the DCQCN
//! rate gate (DCQCN per flow behind CNP MERGE, see the deviations below) and the CBFC controller
//! ([`cbfc`](super::cbfc), per packet) — and the MAC credit ([`mac_credit`](super::mac_credit)).
//!
//! Seed 000 «TX 侧设计» («Slot 管理», «PSN 管理», «VC 仲裁», «CBFC 流控», «事件粒度», «打包延迟与
//! MAC Credit», «Go-Back-N 重传»), appendix C «诊断计数器» and «TX 参数»; seed 002 §5.4 (gate
//! order). Every piece of state here belongs to this one LG (seed: «作用域说明»).
//!
//! `rclink_tx` is a composite of eight nodes ([`expand`]), nine with `ack_cbfc`: `cnp_merge`
//! (CNP MERGE, the control input: every ACK, NAK and CNP through it, a repeated CNP marked
//! filtered), `slot_fifo` (kind `slot_fifo`, rclink/slot_fifo/node/: the slot FIFO and the TX's intake
//! of control messages and segments), `vc_queues` (the VC queues: per VC the first flow head the
//! gates pass, the per-flow rule, the MUL VC's turn, the grant and its frame), `cbfc` (the CBFC
//! controller: the credit ledgers, their returns and charges; it tells the VC queues each TYPE1
//! ledger's count), `type2` (the TYPE2 queue, [`type2`](super::type2): the multicast frames and
//! their two gates, the head offered to the round), `dcqcn` (the DCQCN rate gate of every flow:
//! the CNPs that pass the merge cut their rates, the grants pace them; it tells the VC queues
//! each flow's ready cycle), `arbiter` (`vc_arbiter`: the bank arbiter's round robin over the
//! VCs) and `mac_credit` (the MAC2TX and multicast MAC TX credit counters), wired
//! combinationally (docs/kernel.md, «Blocks with several processes»; docs/modules.md):
//!
//! ```text
//!                     +-- rclink_tx ------------------------------------------------------------+
//!  ctrl     ==(8)==>  | cnp_merge: QPID buffer; every message on, repeated CNPs marked ─ (comb) ┐|
//!  seg      ==(1)==>  | slot_fifo (the slot FIFO)                                              v | ==> done  : stream<FrameDone> (to PAXI)
//!                     |  process 0: ACK/NAK/CNP (passed CNPs to dcqcn: rate_cnp), timeouts,      |
//!                     |    segments (TYPE2 ones: t2_seg ─> type2), FrameDone;                    |
//!                     |    q_ops (comb: Push / Front / Rewind / Remove), q_changes (comb) ─┐     |
//!                     | dcqcn 0: on_cnp, timers ─ ready, steps (comb) ─┐                    │     |
//!  credit   ==(8)==>  | cbfc 0: returns ─ counts (comb) ─┐              │                    │     |
//!                     | type2 0: segments, gates ─ offer ─┐              │                    │     |
//!  mac_credit =(8)==> | mac_credit 0: returns ─ available ─┐             │                    │     |
//!                     | vc_queues process 0: <─────────────┴─────────────┴────────────────────┘     |
//!                     |   ops, counts, pacing, offer; the round: per VC the first head the gates  |
//!                     |   pass ─ arb_req (comb) ─> arbiter (vc_arbiter): from ptr, the first     |
//!                     |   eligible VC ─ arb_grant (comb) ─┐                                       |
//!                     | vc_queues process 1: <──────────┘ the frame; grant (comb) ─> sf 1,      | ==> frame : stream<DataFrame> (to the MAC)
//!                     |   cbfc_charge ─> cbfc 1, mac_take ─> mac_credit 1, rate_sent ─> dcqcn 1, |
//!                     |   t2_take ─> type2 1 (all comb)                                          |
//!                     | slot_fifo process 1: the granted packets to WaitAck, retry timer; waves  | --> slots_used, slot_fifo.*, credit_view,
//!                     +---------------------------------------------------------------------------+     cbfc.*, dcqcn.*, type2.queue, ...
//! ```
//!
//! The rate gate (`dcqcn`, [`dcqcn`](super::dcqcn)) sits beside the VC queues: its process 0
//! takes the core's CNPs (`rate_cnp`) and tells the round the cut flows' pacing (`ready`,
//! `rate_pace`) and its timer steps (`steps`) in the same cycle; its process 1 takes the grant
//! (`rate_sent`) and tells the next round the flow's new ready cycle (`paced`, registered).
//! The CBFC controller (`cbfc`) is the same kind of neighbour: its process 0 takes the credit
//! returns and tells the round each changed ledger's count (`counts`) in the same cycle; its
//! process 1 takes the grant's charge (`cbfc_charge`) and tells the next round the charged
//! ledgers (`charged`, registered); the VC queues keep the counts they were told and apply the
//! per-packet rule to their flow heads ([`Cbfc::run`](super::cbfc::Cbfc::run)). No cut adds a
//! register (ops, returns, request, grant, charge and take all in the same cycle): the timing
//! is the modules' own. Each node is a kind of its own (`hwsim list`) that module-form
//! testbenches instantiate alone (`slot_fifo`, `vc_queues`, `cbfc`, …; `bank_arbiter` is the
//! queue side with a feed where the slot FIFO is); the slot FIFO's state shows on the waves as
//! a nested scope (`….tx.slot_fifo.slots`). The nodes' interfaces show under their paths:
//! `chip0.lg3.tx.cbfc.credits_d1`, `….tx.arbiter.ptr`, `….tx.arbiter.grant.vc`, the request's
//! `….tx.vc_queues.arb_req.eligible` (bit v: VC v has a frame the gates let go), the slot
//! FIFO's `….tx.slot_fifo.q_ops.*` and the VC queues' `….tx.vc_queues.grant.*`.
//!
//! **One cycle** n (the slot FIFO's process 0, the gates' first processes, the VC queues' round
//! with the arbiter inside it, the slot FIFO's process 1, the gates' second processes): ACK/NAK/CNP
//! in `ctrl` (slots freed at n), due retry timeouts, then segments while slots last (a segment
//! freed room for at n is taken at n), one `FrameDone`; credit returns, the MAC's credit
//! returns (the counter's); then — if anything changed since the last round — one arbitration
//! round: skipped (`diag_arb_tx_busy`) without a MAC credit; else the VC queues look, in every
//! VC queue, at the flows' head frames, rate gate first, then the CBFC per-packet rule, and
//! request the VCs that have one (`arb_req`); the arbiter grants the first of them from its
//! pointer; the VC queues count the blocked heads of the VCs the arbiter looked at (from its
//! pointer to the grant, as a round that stops at its grant) and send the granted VC's frame:
//! the run of its WaitGrant packets that the credits admit one by one (all of them when credit
//! is plenty; the rest waits at its place in the queue). A grant takes a MAC credit, charges
//! CBFC, moves the slots to WaitAck, starts the retry timer and pushes the frame (visible to
//! the MAC at n+1). At most one grant per cycle.
//!
//! **MAC credit**: with the default single credit, the next round runs when the MAC gives the
//! credit back, two cycles before its serializer frees (see `mac_tx`), so the next frame is chosen
//! then — not while the previous one is still being serialized — and CBFC is charged then. The
//! round reads the counts on `mac_available` (and `mul_mac_available` for TYPE2) in the cycle of
//! the return; a rise of the count is what wakes it.
//!
//! **TYPE2 (multicast)** (seed 002 «多播双重流控», «RC Link 资源» TYPE2 column): a segment whose
//! PAXI kind is `Mul` takes no slot and gets no PSN (no Go-Back-N: reliability is FEC's). It
//! waits in the TYPE2 queue (the `type2` node, `type2_queue`, 16: the slot FIFO's process 0 pushes it
//! there in the cycle it takes it, and counts the queue's room, which the VC queues' TYPE2 grant
//! on `grant` frees) and is sent whole, as one frame to its
//! group address, when both gates pass (the node checks them and offers its head): every member's TYPE2 CBFC ledger (`type2_credits` 2048 each,
//! the same per-packet rule and credit size as TYPE1, returns on `CreditMsg.vc` 4) admits all
//! its packets, and a multicast MAC TX credit is free (`mul_mac_credits`: TYPE2 frames in the
//! MAC's replication buffer; back when the MAC returns that frame's MAC2TX credit, a
//! `MacCreditRet` with `mul` set). TYPE2 is the arbiter's fifth VC (MUL, weight `vc_weights[4]`, 256):
//! while TYPE1 has frames queued, TYPE2 sends up to that many frames in a row, then TYPE1 gets
//! one grant. Its frames carry `type2_priority` (0, seed 003's TYPE2 class) in their header,
//! are never ECN-capable (TYPE2 has its own rate limit, SET_TYPE2_RATE, not DCQCN; not
//! modelled), and report no `FrameDone` (nothing ACKs them: PAXI completes them by B).
//! Counters `type2_frames_sent`, `type2_payload_bytes_sent`, `type2_credit_block`,
//! `type2_mac_block`, `type2_queue_peak` (the node's; the frames also count in `frames_sent` and the byte
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
//! receiver's send, `Ctrl::sent_at` and `CreditMsg::sent_at`; the second counted by the `cbfc`
//! node in this scope, like `credits_outstanding`), `rtt_max` (ns from our grant of a
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
//! - The rate gate is DCQCN per flow ([`dcqcn`](super::dcqcn), a node beside the core) behind CNP
//!   MERGE ([`cnp_merge`](super::cnp_merge), a node in front of the core that decides in the
//!   cycle the CNP arrives; `cnp_passed` and `cnp_filtered` are its counters): a CNP that passes the merge cuts its flow's rate; a
//!   flow below line rate is paced (its next frame waits until the last one's wire bytes have
//!   left at the rate of that send; `dcqcn.pacing: seed` is seed 000's rule, one full packet at
//!   the rate now: docs/spec-findings.md, finding 18); the round that finds it blocked counts
//!   `diag_rate_block` and the block wakes exactly at its ready time. CNP MERGE keys on the QP
//!   id per LG (see its header). `rate_control: false` turns the gate off; `rate_control:
//!   window` puts seed 002/003's per-QP window rate control ([`cc_window`](super::cc_window):
//!   `length_thr` bytes per QP per CC_WINDOW, then the QP is masked to the window's end) in
//!   the gate's place, through the same ports; its WAIT_CRD slots show on
//!   `slot_fifo.wait_crd` (a port only then), and the round also runs when a mask ends.
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
//!   be slower than the credits say): see `vc_queues`. A grant is followed by a round next cycle
//!   only if credit and room remain, so `--no-skip` runs no extra rounds.
//! - A TYPE2 segment waiting at the head of `seg` for room in the TYPE2 queue is taken the cycle
//!   after a TYPE2 grant frees a place (before the VC queues were a node it waited for the
//!   slot FIFO's next run, which a grant with MAC credit and room left scheduled the next cycle too).
//! - The retry timeout («超时重传») is implemented, with its own counters; MAX_RETRY makes the QP
//!   fatal (seed 002 L3).

use hwsim_hw::CounterDecl;
use hwsim_ports::{ChipId, FrameFormat, LgId};
use serde::{Deserialize, Serialize};

use super::cc_window;
use super::cnp_merge;
use super::dcqcn;

// The TX's parameters (their checks in params.rs), its counter table (counter_table.rs) and the
// composite (composite.rs); the slot FIFO node is in rclink/slot_fifo/node/.
/// The composite `rclink_tx`: its ports and children (the slot FIFO, the VC queues, the arbiter, the MAC credit
/// counter, the ACK-VC return).
mod composite;
/// The counter table.
mod counter_table;
/// The parameters' checks and the header fields they select.
mod params;

pub(crate) use composite::{add_queue_gates, add_vc_queues};
pub use composite::{expand, ports};
pub use params::RateControl;

pub use super::bank_arbiter::NUM_VC;
pub use super::cbfc::MAX_CREDITS;
pub use super::slot_fifo::MAX_SLOTS;

pub use counter_table::COUNTERS;

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[
    COUNTERS,
    super::slot_fifo::COUNTERS,
    super::bank_arbiter::COUNTERS,
    super::cbfc::COUNTERS,
    super::ack_cbfc::RETURN_COUNTERS,
    super::cnp_merge::COUNTERS,
    super::dcqcn::COUNTERS,
    super::cc_window::COUNTERS,
    super::type2::COUNTERS,
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
    /// The rate control: `true` / `dcqcn` (DCQCN, the seed 000 default; with no CNP it never
    /// blocks), `false` / `off`, or `window` (seed 002/003's per-QP time window and byte
    /// threshold, `window`).
    pub rate_control: RateControl,
    /// DCQCN parameters (seed 000 appendix C «DCQCN 参数»).
    pub dcqcn: dcqcn::Params,
    /// The window rate control's CC_WINDOW, length_thr and per-QP thresholds (with
    /// `rate_control: window`; seed 002 «流控参数»).
    pub window: cc_window::Params,
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

pub use super::dcqcn::{FlowKey, MAX_REPORT_FLOWS};

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
            rate_control: RateControl::Dcqcn,
            dcqcn: dcqcn::Params::default(),
            window: cc_window::Params::default(),
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

pub use hwsim_ports::TYPE2_VC;

#[cfg(test)]
mod tests;
