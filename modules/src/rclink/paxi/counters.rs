//! The PAXI core's counters (their names, units and meanings are the table `COUNTERS` in the
//! block's mod.rs): the chip's, by operation, the responses', the completer's, multicast's and
//! per flow; and the gauge and first-cycle helpers.

use hwsim_hw::{Binder, CounterId, Ctx};

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

/// The percentiles published per flow, in permille: p50, p99, p99.9.
pub(super) const PERCENTILES: [u64; 3] = [500, 990, 999];

/// The nearest-rank `q`-permille percentile of `sorted` (ascending, not empty): the smallest
/// value with at least q/1000 of the values at or below it.
pub(super) fn nearest_rank(sorted: &[u64], q: u64) -> u64 {
    let n = sorted.len() as u64;
    let rank = (n * q).div_ceil(1000).clamp(1, n);
    sorted[rank as usize - 1]
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
    pub(super) wdata_in: CounterId,
    pub(super) rdata_in: CounterId,
    pub(super) w_in_first: CounterId,
    pub(super) ar_in_first: CounterId,
    pub(super) r_in_first: CounterId,
    pub(super) ar_in: CounterId,
    pub(super) r_sent: CounterId,
    pub(super) r_ooo: CounterId,
    pub(super) r_bufs_peak: CounterId,
    pub(super) rsp_acked: CounterId,
    pub(super) mul_done: CounterId,
    pub(super) mul_lat_sum: CounterId,
    pub(super) mul_lat_max: CounterId,
    pub(super) mul_timeouts: CounterId,
    pub(super) mul_ost_peak: CounterId,
    pub(super) mul_b: CounterId,
    pub(super) mul_in: CounterId,
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
