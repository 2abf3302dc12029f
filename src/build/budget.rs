//! Memory budgets (`--max-memory`): what a testbench's traffic will cost once elaborated and
//! run, estimated before anything is built, so an input that asks for more is refused with its
//! place instead of exhausting the machine. The system form's netlist estimate is in
//! `system` (it knows the topology); the traffic's, shared by both forms, is here.

/// Memory a transaction costs at elaboration and in the PAXI (its parameters, its record and
/// completion state), and each of its frames (a queued segment), bytes: measured on this build
/// as about 2.4 KiB per one-frame transaction (10^7 transactions took 24 GB).
// The traffic estimate (check_traffic_budget) counts what elaboration materialises and what a run
// can hold at once for each transaction and each of its frames; it is an upper bound because
// every term is charged as if it were alive at the same time, at its largest size:
//
// TXN_COST, per transaction: its YAML mapping in the cdma's `txns` (6 keys and values, an
// IndexMap entry each, about 1 KiB with the key strings), the TxnSpec copies in the cdma's
// params and sorted list (48 B each), the Txn in flight, and the PAXI's TxnState in its BTreeMap
// (node share, done_bits vector header). Charged 2 KiB: about twice the sum, for allocator
// rounding and the Vec/IndexMap growth slack (capacity up to 2× the length).
//
// FRAME_COST, per frame: the PAXI segments every transaction into frames the cycle it issues,
// so in the worst case (all transactions start together, nothing drained yet) every frame of
// the traffic sits in an LG queue at once: a (ready, seq, Segment) entry of 40 B in a VecDeque
// whose capacity may be up to twice its length (80 B), plus one done bit. Charged 96 B. Frames
// past the PAXI (TX slots, MAC, PhyLink) are bounded by the blocks' own capacities, already in
// the netlist estimate (LG_COST, PHYLINK_COST), not by the traffic.
pub const TXN_COST: u64 = 2048;
pub const FRAME_COST: u64 = 96;

/// The message for `need` bytes over the budget (`what`: what needs them), if they are.
pub fn over_budget(max_memory: u64, need: u64, what: &str) -> Option<String> {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    (need > max_memory).then(|| {
        format!(
            "{what}: about {:.2} GiB, over the {:.2} GiB budget (--max-memory)",
            gib(need),
            gib(max_memory)
        )
    })
}

/// Memory for `count` transactions of `bytes` each once a PAXI of `mps` segments them (see
/// TXN_COST, FRAME_COST), saturating.
pub fn txn_memory(bytes: u64, mps: u64, count: u64) -> u64 {
    let frames = bytes.div_ceil(mps.max(1));
    let each = frames.saturating_mul(FRAME_COST).saturating_add(TXN_COST);
    each.saturating_mul(count)
}
