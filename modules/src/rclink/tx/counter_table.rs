//! The TX's counter table (name, unit, meaning), which `hwsim explain rclink_tx`, the report's
//! units and the system monitors read; the counter handles are in `report.rs`.

use hwsim_hw::CounterDecl;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// The ones it shares with its modules' blocks (`diag_arb_calls`, `diag_credit_block`,
/// `credits_outstanding`) and the slot FIFO's, CBFC controller's (`cbfc`: `credits_outstanding`,
/// `credit_latency_max`), ACK-VC return's and rate gate's (`dcqcn`) are in those modules' tables.
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
        "rtt_max",
        "ns",
        "longest round trip: our grant of a packet to the ACK/NAK echoing its RH timestamp",
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
];
