//! The PAXI core's counters: their table (`COUNTERS`: names, units and meanings), and their
//! handles — the chip's, by operation, the responses', the completer's, multicast's and per
//! flow; and the gauge and first-cycle helpers.

use hwsim_hw::{Binder, CounterDecl, CounterId, Ctx};

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
        "ns",
        "Σ issue-to-completion latency of the transactions completed",
    ),
    CounterDecl::new(
        "latency_max",
        "ns",
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
    CounterDecl::new("write_lat_sum", "ns", "Σ latency of the write transactions completed"),
    CounterDecl::new(
        "write_lat_max",
        "ns",
        "gauge: longest latency of a completed write transaction",
    ),
    CounterDecl::new("reads_done", "transactions", "read transactions completed"),
    CounterDecl::new("read_bytes_done", "bytes", "bytes of the read transactions completed"),
    CounterDecl::new("read_lat_sum", "ns", "Σ latency of the read transactions completed"),
    CounterDecl::new(
        "read_lat_max",
        "ns",
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
        "rdata_bytes_in",
        "bytes",
        "read data bytes (R frames) back at this chip's AXI master",
    ),
    CounterDecl::new(
        "r_in_first_at",
        "cycle",
        "cycle + 1 of the first R frame at this AXI side (0 = never)",
    ),
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
    CounterDecl::new("mul_lat_sum", "ns", "Σ latency of the multicast transactions completed"),
    CounterDecl::new(
        "mul_lat_max",
        "ns",
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
    CounterDecl::new("mul_copy_bytes", "bytes", "multicast bytes × group members, at issue"),
    CounterDecl::new(
        "mul_copy_bytes_failed",
        "bytes",
        "multicast bytes × members not answered, at a timeout",
    ),
    CounterDecl::new(
        "flow*_txns",
        "transactions",
        "transactions of flow * completed (issued at or after `metrics_from`, as every flow* counter)",
    ),
    CounterDecl::new("flow*_bytes", "bytes", "bytes of the transactions of flow * completed"),
    CounterDecl::new(
        "flow*_lat_sum",
        "ns",
        "Σ latency of the transactions of flow * completed",
    ),
    CounterDecl::new(
        "flow*_lat_max",
        "ns",
        "gauge: longest latency of a completed transaction of flow *",
    ),
    CounterDecl::new(
        "flow*_lat_p50",
        "ns",
        "median latency of the transactions of flow * completed (nearest rank; at the end of the run)",
    ),
    CounterDecl::new(
        "flow*_lat_p99",
        "ns",
        "99th-percentile latency of flow *'s completed transactions (nearest rank; at the end of the run)",
    ),
    CounterDecl::new(
        "flow*_lat_p999",
        "ns",
        "99.9th-percentile latency of flow *'s completed transactions (nearest rank; at the end of the run)",
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
];

pub(super) struct FlowCounters {
    pub(super) txns: CounterId,
    pub(super) bytes: CounterId,
    pub(super) lat_sum: CounterId,
    pub(super) lat_max: CounterId,
    pub(super) first: CounterId,
    pub(super) last: CounterId,
    /// p50, p99, p999 (published at the end of the run from `lats`).
    pub(super) pct: [CounterId; 3],
    /// Every completed transaction's latency, for the percentiles (one entry per transaction,
    /// pushed on its completion, not per cycle).
    pub(super) lats: Vec<u64>,
}

pub(super) struct Counters {
    pub(super) issued: CounterId,
    pub(super) done: CounterId,
    pub(super) segments: CounterId,
    pub(super) frames_done: CounterId,
    pub(super) bytes_done: CounterId,
    pub(super) lat_sum: CounterId,
    pub(super) lat_max: CounterId,
    pub(super) ost_peak: CounterId,
    pub(super) first: CounterId,
    pub(super) last: CounterId,
    pub(super) dup: CounterId,
    pub(super) failed: CounterId,
    pub(super) bytes_failed: CounterId,
    pub(super) last_failed: CounterId,
    pub(super) writes_done: CounterId,
    pub(super) write_lat_sum: CounterId,
    pub(super) write_lat_max: CounterId,
    pub(super) reads_done: CounterId,
    pub(super) read_bytes: CounterId,
    pub(super) read_lat_sum: CounterId,
    pub(super) read_lat_max: CounterId,
    pub(super) r_ost_peak: CounterId,
    pub(super) frames_acked: CounterId,
    pub(super) b_received: CounterId,
    pub(super) b_stale: CounterId,
    pub(super) r_received: CounterId,
    pub(super) rdata_in: CounterId,
    pub(super) r_in_first: CounterId,
    pub(super) rsp_acked: CounterId,
    pub(super) mul_done: CounterId,
    pub(super) mul_lat_sum: CounterId,
    pub(super) mul_lat_max: CounterId,
    pub(super) mul_timeouts: CounterId,
    pub(super) mul_ost_peak: CounterId,
    pub(super) mul_b: CounterId,
    pub(super) mul_copy: CounterId,
    pub(super) mul_copy_failed: CounterId,
}

impl FlowCounters {
    /// Flow `f`'s counters.
    pub(super) fn bind(b: &mut Binder, f: u16) -> Self {
        FlowCounters {
            txns: b.counter(&format!("flow{f}_txns")),
            bytes: b.counter(&format!("flow{f}_bytes")),
            lat_sum: b.counter(&format!("flow{f}_lat_sum")),
            lat_max: b.counter(&format!("flow{f}_lat_max")),
            first: b.counter(&format!("flow{f}_first")),
            last: b.counter(&format!("flow{f}_last")),
            pct: [
                b.counter(&format!("flow{f}_lat_p50")),
                b.counter(&format!("flow{f}_lat_p99")),
                b.counter(&format!("flow{f}_lat_p999")),
            ],
            lats: Vec::new(),
        }
    }
}

impl Counters {
    /// The block's own counters (the flows' and the packing buffers' apart).
    pub(super) fn bind(b: &mut Binder) -> Self {
        Counters {
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
            rdata_in: b.counter("rdata_bytes_in"),
            r_in_first: b.counter("r_in_first_at"),
            rsp_acked: b.counter("rsp_frames_acked"),
            mul_done: b.counter("multicasts_done"),
            mul_lat_sum: b.counter("mul_lat_sum"),
            mul_lat_max: b.counter("mul_lat_max"),
            mul_timeouts: b.counter("mul_timeouts"),
            mul_ost_peak: b.counter("mul_ost_peak"),
            mul_b: b.counter("mul_b_received"),
            mul_copy: b.counter("mul_copy_bytes"),
            mul_copy_failed: b.counter("mul_copy_bytes_failed"),
        }
    }
}

pub(super) fn set_max(ctx: &mut Ctx<'_>, id: CounterId, v: u64) {
    if v > ctx.counter(id) {
        ctx.set_counter(id, v);
    }
}

pub(super) fn set_first(ctx: &mut Ctx<'_>, id: CounterId) {
    if ctx.counter(id) == 0 {
        let now = ctx.now();
        ctx.set_counter(id, now + 1);
    }
}
