//! RC Link RX PSN check of one link group: the per-window EPSN check with its three outcomes,
//! FACK, the credit charge and the ECN marks (seed 000 «RX 侧设计»: «PSN 校验与三种结果», «FACK»,
//! «credit 返还», «ECN 检测与 CNP 生成»; appendix C «RX 参数»; SPEC.md «RX side»). It is the
//! first node of `rclink_rx` (rx.rs: `chip.lgK.rx.psn_check`); the block `psn_check` is the same
//! node alone, for module-by-module comparison with the RTL.
//!
//! ```text
//!                              +-------------------------------------------+
//!  data : stream<DataFrame> ==>| PSN check per (src, qp) against EPSN      |==> ctrl : stream<Ctrl>
//!  (capacity 8, from rx_cap)   |  accept -> `accepted`, `ce` if CE         |    NAK / FACK ACK
//!                              |  gap    -> NAK (one per gap), drop        |    (/ dup re-ACK)
//!                              |  dup    -> drop (or re-ACK, `duplicate`)  |==> charge : stream<CreditMsg>
//!                              |  every data packet -> credit charge       |    to the credit return
//!                              |  zero-byte (FACK) -> immediate ACK        |==> accepted : stream<RxAccepted>
//!                              |                                           |    to ACK MERGE
//!                              |                                           |==> ce : stream<CeMark>
//!                              |                                           |    to the CNP generation
//!                              |  state: src, qp, epsn, nak_pending        |--> (signals, below)
//!                              +-------------------------------------------+
//! ```
//!
//! **PSN check**, per packet `i` of an arriving frame, in order (PSN `frame.psn_of(i)`, payload
//! `frame.pkt_bytes(i)`), against the EPSN of `(frame.src, frame.qp)` (starting at 0; one
//! instance per LG, so this is the seed's `(src_chip, lg_id, qp_id)` window):
//!
//! | condition                  | result        | action                                             |
//! |----------------------------|---------------|----------------------------------------------------|
//! | payload 0 (FACK / tcredit) | immediate ACK | EPSN++ if `psn == EPSN`; ACK `ack_psn = EPSN` now, |
//! |                            |               | bypassing ACK MERGE; no credit, no CE mark         |
//! | `psn == EPSN`              | accept        | EPSN++, deliver, to ACK MERGE, credit, mark if CE  |
//! | `psn` after EPSN (ring)    | gap           | NAK `ack_psn = EPSN` (once per gap), drop, credit  |
//! | `psn` before EPSN (ring)   | duplicate     | drop silently (`duplicate: drop`, the seed) or     |
//! |                            |               | re-ACK `ack_psn = EPSN` (`duplicate: ack`); credit |
//!
//! All three data paths return credit («三条路径都返还 credit»): the packet used receive buffer
//! whatever its PSN, and a path that kept it would leak credit until the sender deadlocks.
//!
//! **TYPE2** (a multicast copy, PAXI kind `Mul`; seed 002: TYPE2 has no Go-Back-N): no window,
//! no check, no ACK, no CNP. Each packet's credit returns on the TYPE2 VC (`CreditMsg.vc` 4),
//! lost ones too; the frame is delivered when its last packet arrives and none before it went
//! missing (its packets arrive back to back from one source), otherwise it is dropped
//! (`type2_dropped`). `type2_frames` counts the TYPE2 frames delivered.
//!
//! **To ACK MERGE**: one [`RxAccepted`] per arrival that accepted data packets or was answered
//! at once (FACK, dup re-ACK): `{src, qp, epsn after the arrival, npkts accepted, immediate_ack}`.
//!
//! **Credit charge**: `ceil((payload + pkt_ovhd) / credit_size)` per data packet (the TX's CBFC
//! cost, `cbfc_cost`), summed per arrival into one [`CreditMsg`](hwsim_ports::CreditMsg) `{src:
//! chip, dst: frame.src, lg, vc = qp & 3 (TYPE2: 4), credits}` on `charge` in the arrival cycle
//! (in pieces if above the 15-bit credit field), for the credit return (`credit_return`), which
//! sends it `credit_return_delay` cycles later, summed per cycle and `(src, vc)`, held while
//! PAXI's `pause` is up.
//!
//! **ECN → CE mark**: the accepted data packets of an arrival that came marked CE leave as one
//! [`CeMark`](hwsim_ports::CeMark) `{src, qp, pkts, ts}` on `ce`, in the arrival cycle, for the
//! CNP generation (`cnp_gen`), which keeps the CNP_INTERVAL per window and makes the CNP.
//! Zero-byte packets and dropped packets are never marked.
//!
//! **Timestamps**: every ACK and NAK made here (and the CE mark) echoes the RH timestamp of the data packet
//! that caused it (seed 002: RTT via the RH Timestamp), so the sender can time the round trip.
//!
//! **State on the waves** (true widths): `src` (16) / `qp` (10) of the window the last arrival
//! touched, its `epsn` (12), `nak_pending` (1: a NAK was sent for this EPSN and no resend has
//! moved it yet). In `rclink_rx` the same signals appear as `psn_check.*` (the credits queued for
//! return are `credit_return.credits_due`).
//!
//! **Latency** (arrival = the cycle the frame is visible on `data`, popped at once): NAK, FACK
//! ACK, dup re-ACK, the CE mark, the credit charge and `accepted` are written in the arrival
//! cycle, to nodes that take them in that cycle (combinational streams); `deliver` takes one frame
//! per cycle, and frames generated together queue in generation order.
//!
//! **Counters** (events, never ticks): `rx_frames`, `rx_pkts` (all packets checked, FACKs
//! included), `lost_pkts` (discarded by the MAC before the check), `rx_payload_bytes` (accepted
//! payload), `dup_pkts`, `ooo_pkts` (after EPSN, NAKed or not), `first_byte_at` /
//! `last_byte_at` (cycle + 1 of the first / last accepted payload; 0 = none),
//! `data_latency_max` (arrival − the sender MAC's `sent_at`, data frames only), `type2_frames`,
//! `type2_dropped`, `deliver_peak`. The messages are counted where they leave: `naks_sent`,
//! `fack_acks`, `dup_acks` by the control queue (`rx_ctrl`), `credits_returned` by the credit
//! return.
//!
//! **Deviations and choices** (the seed is silent or frame-granular):
//! - Arrival: in a chip the RX cap hands over one packet at a time, when its last byte is in
//!   (the seed's per-packet arrival). A frame of several packets (a module testbench may drive
//!   one) is checked packet by packet in its arrival cycle, so their credit charge, CE mark and
//!   ACK MERGE times are that cycle.
//! - One NAK per gap: after a NAK for EPSN `e`, further out-of-order packets produce no NAK until
//!   EPSN moves (still dropped, still credited; counter `ooo_pkts`). Every packet in flight
//!   behind a loss would otherwise NAK the same PSN and make the sender rewind again and again.
//!   If that NAK or the resend is lost, the sender's RETRY_TIMEOUT recovers.
//! - A FACK's immediate ACK is cumulative (`ack_psn = EPSN`), so it also covers what ACK MERGE
//!   holds (`immediate_ack`). A FACK not at EPSN is not accepted but is still answered with an
//!   ACK carrying EPSN (never a NAK).
//! - `duplicate: ack` is not in the seed (which drops duplicates silently, the default here): see
//!   docs/spec-findings.md — with cumulative ACKs, one lost tail ACK otherwise ends in MAX_RETRY
//!   timeouts and a fatal QP. One re-ACK per arrival holding duplicates, not one per packet.
//! - A PSN exactly half a ring (2048) from EPSN is neither before nor after it; it is treated as a
//!   duplicate (dropped, no NAK).
//! - `pkt_ovhd` for the credit cost is this block's parameter (it must equal the sender's CBFC
//!   setting), not the frame's `pkt_ovhd` field, which the RX cap uses for wire time.
//! - A frame addressed to another chip or LG, or malformed (no packets, `max_payload` 0, packets
//!   beyond the frame), is a protocol violation: the run stops naming this instance.

use std::collections::BTreeMap;

use hwsim_hw::CounterDecl;
use hwsim_ports::{ChipId, CreditSize, LgId, Psn, QpId, RxAccepted};
use serde::{Deserialize, Serialize};

use super::rx_ctrl::RxSource;

// The PSN check's parts, each in its own file; this file keeps the counter table, the
// parameters and the core's state.
/// The standalone `psn_check` block: its ports, `build` and `tick`.
mod block;
/// The check itself: an arrival through its window, TYPE2 copies, the credits it charges.
mod check;
/// The data input and the per-arrival outputs with their counters.
mod io;
/// The state on the waves.
mod view;

pub use block::{build, ports};
pub use io::PsnCheckIo;
pub use view::PsnCheckView;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new("rx_frames", "frames", "frames taken in on `data` and checked"),
    CounterDecl::new(
        "lost_pkts",
        "packets",
        "packets the MAC discarded before the check (credit still returned)",
    ),
    CounterDecl::new(
        "data_latency_max",
        "ns",
        "longest data-path latency: arrival − the sender MAC's `sent_at`",
    ),
    CounterDecl::new(
        "rx_pkts",
        "packets",
        "packets checked, FACKs and TYPE2 included, lost ones not",
    ),
    CounterDecl::new("rx_payload_bytes", "bytes", "payload bytes of the packets accepted"),
    CounterDecl::new("dup_pkts", "packets", "duplicates (PSN before EPSN), dropped"),
    CounterDecl::new(
        "ooo_pkts",
        "packets",
        "out-of-order packets (PSN after EPSN), dropped, NAKed or not",
    ),
    CounterDecl::new(
        "first_byte_at",
        "cycle",
        "cycle + 1 of the first accepted payload (0 = none)",
    ),
    CounterDecl::new(
        "last_byte_at",
        "cycle",
        "cycle + 1 of the last accepted payload (0 = none)",
    ),
    CounterDecl::new("type2_frames", "frames", "TYPE2 (multicast) frames delivered whole"),
    CounterDecl::new(
        "type2_dropped",
        "frames",
        "TYPE2 frames dropped: a packet of theirs went missing",
    ),
    CounterDecl::new(
        "deliver_peak",
        "frames",
        "the most frames waiting at once for `deliver` (0 without `deliver`)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// What the PSN check does with a duplicate (a PSN before EPSN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Duplicate {
    /// Drop it silently (seed 000 «PSN 校验与三种结果»; the default).
    #[default]
    Drop,
    /// Drop it and answer the arrival with a cumulative ACK `ack_psn = EPSN` at once, as RDMA
    /// receivers do, so a sender whose ACK was lost learns its data arrived.
    Ack,
}

/// Parameters of one PSN check (one per chip and LG); defaults from seed 000 appendix C.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (the `src` of every ACK/NAK/CNP/credit it sends; frames must be for it).
    pub chip: ChipId,
    /// This instance's link group (frames must carry it), 0..=7.
    pub lg: LgId,
    /// Per-packet header bytes in the credit cost (the sender's CBFC overhead), default 50.
    pub pkt_ovhd: u32,
    /// Bytes per CBFC credit: 32, 64, 128, 256, 1024 or 2048; default 256.
    pub credit_size: CreditSize,
    /// Wire bytes of an ACK or NAK (one header), default 50.
    pub ack_bytes: u16,
    /// What a duplicate gets: `drop` (the seed, default) or `ack` (re-ACK with EPSN).
    pub duplicate: Duplicate,
    /// Hand every whole frame accepted to PAXI on a `deliver` stream (the system form sets it;
    /// off by default, when nothing above the RX is modelled). PAXI's `pause` holds the credit
    /// returns at the credit return node.
    pub deliver: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            pkt_ovhd: 50,
            credit_size: CreditSize::B256,
            ack_bytes: 50,
            duplicate: Duplicate::Drop,
            deliver: false,
        }
    }
}

/// Receive state of one `(src, qp)` window.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    /// Next expected PSN (= max contiguous PSN + 1).
    epsn: Psn,
    /// EPSN a NAK was sent for; no further NAK until EPSN moves past it.
    nak_for: Option<Psn>,
}

/// What one arrival did, for the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Packets checked (FACKs included, lost ones not).
    pub pkts: u32,
    /// Packets lost on the wire (the MAC discarded them; credit still returned).
    pub lost: u32,
    /// Duplicates (before EPSN), dropped.
    pub dup: u32,
    /// Out-of-order packets (after EPSN), dropped.
    pub ooo: u32,
    /// Payload bytes accepted.
    pub accepted_bytes: u64,
    /// Data packets accepted that arrived marked CE (a mark for `cnp_gen`).
    pub ce: u8,
    /// CBFC credits the arrival used (every data packet, lost, dropped or accepted; none for a
    /// zero-byte packet), to return on `credit_vc`.
    pub credits: u32,
    /// The VC of the charge: the QP's bank, or TYPE2's.
    pub credit_vc: u8,
    /// What ACK MERGE must hear, if anything.
    pub accepted: Option<RxAccepted>,
    /// The frame's last packet was accepted: the whole frame is delivered (its earlier packets
    /// were accepted before it, in PSN order).
    pub delivered: bool,
    /// A TYPE2 (multicast) frame: no PSN check, no ACK.
    pub type2: bool,
    /// A TYPE2 frame ended here with a packet missing: it is lost (no retransmission).
    pub type2_broken: bool,
}

/// The PSN check core: windows, TYPE2 reassembly, the credit charge; no ports (the `psn_check`
/// block drives it).
pub struct PsnCheck {
    src: RxSource,
    pkt_ovhd: u32,
    credit_size: CreditSize,
    ack_bytes: u16,
    duplicate: Duplicate,
    /// Windows by (src, qp); an entry is created once per window, never per packet.
    windows: BTreeMap<(ChipId, QpId), Window>,
    /// TYPE2 reassembly per source: the next packet index expected of the frame arriving, and
    /// whether every packet of it so far arrived (a frame's packets arrive back to back: the
    /// sender's MAC sends it whole and the switches forward it whole).
    type2: BTreeMap<ChipId, (u8, bool)>,
    /// The window the last arrival touched (shown on the waves).
    last: Option<(ChipId, QpId)>,
}

#[cfg(test)]
mod tests;
