//! A chip's CDMA engines as a traffic source: the AXI write and read transactions a testbench
//! asks for, issued at their start cycles into the PAXI core.
//!
//! ```text
//!   +------+
//!   | cdma |==> txn : stream<Txn>
//!   +------+
//! ```
//! Transactions are issued in start order; one per cycle at most; when the PAXI input is full
//! they wait (back-pressure). Ids are chip-unique, in issue order. Counters: `txns`, `bytes`
//! (written or read; a multicast write's bytes once, not per member), `reads` (transactions that
//! are reads), `multicasts` (multicast writes) and `multicast_bytes` (their bytes, once).

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, PortDecl, StreamOut, Wake};
use hwsim_ports::{ChipId, Txn, TxnOp};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "txns",
        "transactions",
        "transactions issued into the PAXI core (writes, reads and multicasts)",
    ),
    CounterDecl::new(
        "bytes",
        "bytes",
        "bytes of the transactions issued, written or read (a multicast's bytes once)",
    ),
    CounterDecl::new("reads", "transactions", "issued transactions that are reads"),
    CounterDecl::new(
        "multicasts",
        "transactions",
        "issued transactions that are multicast writes",
    ),
    CounterDecl::new(
        "multicast_bytes",
        "bytes",
        "bytes of the multicast writes issued, once per write (not per member)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// One transaction to issue.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TxnSpec {
    /// Start cycle.
    pub at: u64,
    /// Destination chip, or a multicast group address (`0x8000 | group`, with `op: multicast`).
    pub dst: ChipId,
    /// Bytes.
    pub bytes: u64,
    /// CDMA engine id (→ QP).
    pub cdma: u16,
    /// Flow index (report).
    pub flow: u16,
    /// Injection bandwidth, bytes/ns (0 = unpaced).
    pub bandwidth: f64,
    /// `write` (default), `read` or `multicast`.
    pub op: TxnOp,
}

/// Smallest nonzero `bandwidth`, bytes/ns (1 milli-byte per ns, the pacing unit).
pub const MIN_BANDWIDTH: f64 = 0.001;
/// Largest `bandwidth`, bytes/ns.
pub const MAX_BANDWIDTH: f64 = 1e6;

/// Parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// The transactions, any order (sorted by start at build time, stable).
    pub txns: Vec<TxnSpec>,
}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![PortDecl::stream_out::<Txn>("txn").doc("AXI write and read transactions")]
}

/// The block.
pub struct Cdma {
    txns: Vec<TxnSpec>,
    next: usize,
    out: StreamOut<Txn>,
    c_txns: CounterId,
    c_bytes: CounterId,
    c_reads: CounterId,
    c_multicasts: CounterId,
    c_mul_bytes: CounterId,
}

/// Binds ports.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    let mut txns = p.txns.clone();
    let mut total: u64 = 0;
    for t in &txns {
        // Paced in milli-bytes per ns: below 0.001 the rate would round to 0, which means
        // unpaced, the opposite of what was asked.
        if !(t.bandwidth == 0.0 || (MIN_BANDWIDTH..=MAX_BANDWIDTH).contains(&t.bandwidth)) {
            return Err(format!(
                "bandwidth = {}: must be 0 (unpaced) or in {MIN_BANDWIDTH}..={MAX_BANDWIDTH} B/ns",
                t.bandwidth
            ));
        }
        // The `bytes` counter (and the scoreboard that sums it) must not wrap.
        total = total.checked_add(t.bytes).ok_or_else(|| {
            format!(
                "bytes = {}: the transactions' bytes add up past 2^64 - 1 (the `bytes` counter would wrap)",
                t.bytes
            )
        })?;
    }
    txns.sort_by_key(|t| t.at);
    Ok(Box::new(Cdma {
        txns,
        next: 0,
        out: b.stream_out("txn")?,
        c_txns: b.counter("txns"),
        c_bytes: b.counter("bytes"),
        c_reads: b.counter("reads"),
        c_multicasts: b.counter("multicasts"),
        c_mul_bytes: b.counter("multicast_bytes"),
    }))
}

impl Component for Cdma {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if let Some(t) = self.txns.get(self.next) {
            if t.at <= now && self.out.can_push() {
                self.out.push(Txn {
                    id: self.next as u64,
                    dst: t.dst,
                    bytes: t.bytes,
                    cdma: t.cdma,
                    flow: t.flow,
                    milli_bytes_per_ns: (t.bandwidth * 1000.0).round() as u64,
                    op: t.op,
                });
                ctx.count(self.c_txns, 1);
                ctx.count(self.c_bytes, t.bytes);
                match t.op {
                    TxnOp::Read => ctx.count(self.c_reads, 1),
                    TxnOp::Multicast => {
                        ctx.count(self.c_multicasts, 1);
                        ctx.count(self.c_mul_bytes, t.bytes);
                    }
                    TxnOp::Write => {}
                }
                self.next += 1;
            }
        }
        match self.txns.get(self.next) {
            None => Wake::OnInput,
            Some(t) if t.at > now => Wake::At(t.at),
            Some(_) if self.out.space() > 1 => Wake::NextCycle,
            Some(_) => Wake::OnInput,
        }
    }
}
