//! The PAXI core of one chip (seed 000 «Segment Dispatch 机制», «多 Link Group 并行模型»,
//! «ITLV 分发机制», «跨 LG 事务完成保证»; seed 002 PAXI layer): AXI write transactions are cut
//! into MPS frames (segments), each assigned to a link group by ITLV and pushed into that LG's
//! slot FIFO; a transaction completes when every one of its frames is ACKed, in any order.
//!
//! ```text
//!   txn : stream<Txn> ==>+-------------+==> seg{k} : stream<Segment>   (k = 0..num_lg)
//!                        |  PAXI core  |<== done{k} : stream<FrameDone>
//!                        +-------------+--> ost : u16 (W OST in use)
//! ```
//! - Segmentation: frame i of a transaction carries min(MPS, rest) bytes and becomes ready at
//!   issue + `tx_latency` + ceil(i · MPS / bandwidth) (the PAXI TX pipeline, then the CDMA
//!   injection gate; unpaced when bandwidth is 0).
//! - ITLV (per segment): `hash` (default) lg = splitmix64 mix of (txn, frame_seq, qp) mod
//!   num_lg; `round_robin` (a chip-level counter, for debugging: it phase-locks); `qp`
//!   (affinity: one LG per QP).
//! - Dispatch is push, not polling: a ready segment goes to its LG as soon as the LG's slot FIFO
//!   input has room and a W OST entry is free (256); otherwise it waits in this LG's queue here
//!   and is pushed the cycle room appears (the LG's pop or a completion wakes us). Among LGs
//!   that can take one, the oldest segment goes first (the segment queue's order).
//! - Completion: `done{k}` frames are counted per transaction; the last one completes it.
//!
//! Latency: a transaction visible at n has its first segment pushed at n + `tx_latency` (visible
//! to the LG one cycle later). Counters: `txns_issued`, `txns_done`, `segments`, `frames_done`, `bytes_done`,
//! `latency_sum`, `latency_max`, `ost_peak`, `first_issue_at`, `last_done_at` (cycle + 1;
//! 0 = never), `duplicate_done`, and per flow f: `flow{f}_txns`, `flow{f}_bytes`,
//! `flow{f}_lat_sum`, `flow{f}_lat_max`, `flow{f}_first`, `flow{f}_last`.

use std::collections::{BTreeMap, VecDeque};

use hwsim_hw::rng::splitmix64;
use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{ChipId, FrameDone, QpId, Segment, Txn};
use serde::{Deserialize, Serialize};

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
    /// Maximum payload per frame (MPS), bytes.
    pub mps: u32,
    /// W OST pool: outstanding frames chip-wide.
    pub w_ost: u32,
    /// LG choice.
    pub itlv: Itlv,
    /// Flows accounted for (flow ids 0..flows).
    pub flows: u16,
    /// Fixed PAXI TX pipeline, ns (AXI write in → segment ready for the RC Link), 0..=10^6. 0
    /// here; the chip preset sets it (with the PhyLink's `pipeline_latency`) so that an idle P2P
    /// write takes the seed's 150 ns AXI-to-AXI.
    pub tx_latency: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            num_lg: 8,
            mps: 4096,
            w_ost: 256,
            itlv: Itlv::Hash,
            flows: 1,
            tx_latency: 0,
        }
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = vec![PortDecl::stream_in::<Txn>("txn", 16).doc("AXI write transactions from the CDMA")];
    for k in 0..p.num_lg {
        v.push(PortDecl::stream_out::<Segment>(&format!("seg{k}")).doc("segments to LG k's slot FIFO"));
        v.push(PortDecl::stream_in::<FrameDone>(&format!("done{k}"), 4).doc("frames fully ACKed on LG k"));
    }
    v.push(PortDecl::output::<u16>("ost").doc("W OST entries in use"));
    v
}

/// The ITLV hash: a splitmix64 avalanche over the three inputs (never a linear mix).
pub fn itlv_hash(txn: u64, frame_seq: u32, qp: QpId) -> u64 {
    splitmix64(splitmix64(txn) ^ ((frame_seq as u64) << 16 | qp.value() as u64))
}

struct TxnState {
    issued: Cycle,
    frames_left: u32,
    bytes: u64,
    flow: u16,
    /// A frame was given up (its QP went fatal): the transaction is lost.
    failed: bool,
    /// Frames reported done (bit per frame), so a duplicate report is caught, not counted.
    done_bits: Vec<u64>,
}

struct FlowCounters {
    txns: CounterId,
    bytes: CounterId,
    lat_sum: CounterId,
    lat_max: CounterId,
    first: CounterId,
    last: CounterId,
}

/// The block.
pub struct Paxi {
    p: Params,
    txn_in: StreamIn<Txn>,
    seg_out: Vec<StreamOut<Segment>>,
    done_in: Vec<StreamIn<FrameDone>>,
    ost_sig: Out<u16>,
    /// Per LG: (ready cycle, chip-wide segment number, segment), in (ready, number) order.
    queues: Vec<VecDeque<(Cycle, u64, Segment)>>,
    /// Segments created so far (their order).
    seq: u64,
    txns: BTreeMap<u64, TxnState>,
    ost: u32,
    rr: u64,
    c_issued: CounterId,
    c_done: CounterId,
    c_segments: CounterId,
    c_frames_done: CounterId,
    c_bytes_done: CounterId,
    c_lat_sum: CounterId,
    c_lat_max: CounterId,
    c_ost_peak: CounterId,
    c_first: CounterId,
    c_last: CounterId,
    c_dup: CounterId,
    c_failed: CounterId,
    c_bytes_failed: CounterId,
    c_last_failed: CounterId,
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
    if p.w_ost == 0 {
        return Err("w_ost must be ≥ 1".into());
    }
    if p.tx_latency > 1_000_000 {
        return Err(format!("tx_latency = {}: must be in 0..=1000000 ns", p.tx_latency));
    }
    let mut seg_out = Vec::new();
    let mut done_in = Vec::new();
    for k in 0..p.num_lg {
        seg_out.push(b.stream_out(&format!("seg{k}"))?);
        done_in.push(b.stream_in(&format!("done{k}"))?);
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
    Ok(Box::new(Paxi {
        p: p.clone(),
        txn_in: b.stream_in("txn")?,
        seg_out,
        done_in,
        ost_sig: b.output("ost")?,
        queues: (0..p.num_lg).map(|_| VecDeque::new()).collect(),
        txns: BTreeMap::new(),
        ost: 0,
        seq: 0,
        rr: 0,
        c_issued: b.counter("txns_issued"),
        c_done: b.counter("txns_done"),
        c_segments: b.counter("segments"),
        c_frames_done: b.counter("frames_done"),
        c_bytes_done: b.counter("bytes_done"),
        c_lat_sum: b.counter("latency_sum"),
        c_lat_max: b.counter("latency_max"),
        c_ost_peak: b.counter("ost_peak"),
        c_first: b.counter("first_issue_at"),
        c_last: b.counter("last_done_at"),
        c_dup: b.counter("duplicate_done"),
        c_failed: b.counter("txns_failed"),
        c_bytes_failed: b.counter("bytes_failed"),
        c_last_failed: b.counter("last_failed_txn"),
        flows,
    }))
}

fn set_max(ctx: &mut Ctx<'_>, id: CounterId, v: u64) {
    if v > ctx.counter(id) {
        ctx.set_counter(id, v);
    }
}

impl Paxi {
    fn segment(&mut self, ctx: &mut Ctx<'_>, t: Txn) -> Result<(), String> {
        let now = ctx.now();
        let qp = QpId::from_cdma(t.cdma).map_err(|e| format!("transaction {}: {e}", t.id))?;
        let mps = self.p.mps as u64;
        let frames = t.bytes.div_ceil(mps).max(1);
        for i in 0..frames {
            let bytes = (t.bytes - i * mps).min(mps) as u32;
            // Saturating: `bytes` is bounded only by the memory budget (`--max-memory` can be
            // huge), and i · MPS · 1000 wraps past 1.4e13 frames.
            let ready = self.p.tx_latency.saturating_add(if t.milli_bytes_per_ns == 0 {
                now
            } else {
                now.saturating_add(
                    i.saturating_mul(mps)
                        .saturating_mul(1000)
                        .div_ceil(t.milli_bytes_per_ns),
                )
            });
            let frame_seq = i as u32;
            let lg = match self.p.itlv {
                Itlv::Hash => itlv_hash(t.id, frame_seq, qp) % self.p.num_lg as u64,
                Itlv::RoundRobin => {
                    let l = self.rr % self.p.num_lg as u64;
                    self.rr += 1;
                    l
                }
                Itlv::Qp => splitmix64(qp.value() as u64) % self.p.num_lg as u64,
            } as u8;
            let seg = Segment {
                txn: t.id,
                frame_seq,
                dst: t.dst,
                qp,
                bytes,
                lg,
            };
            // Keep each LG's queue in (ready, age) order: a frame paced for later must not hold
            // back another transaction's frame that is ready now (no head-of-line blocking).
            let q = &mut self.queues[lg as usize];
            let at = q.partition_point(|&(r, n, _)| (r, n) <= (ready, self.seq));
            q.insert(at, (ready, self.seq, seg));
            self.seq += 1;
        }
        if self
            .txns
            .insert(
                t.id,
                TxnState {
                    issued: now,
                    frames_left: frames as u32,
                    bytes: t.bytes,
                    flow: t.flow,
                    failed: false,
                    done_bits: vec![0; (frames as usize).div_ceil(64)],
                },
            )
            .is_some()
        {
            return Err(format!("transaction id {} issued twice", t.id));
        }
        ctx.count(self.c_issued, 1);
        if ctx.counter(self.c_first) == 0 {
            ctx.set_counter(self.c_first, now + 1);
        }
        if let Some(f) = self.flows.get(t.flow as usize) {
            if ctx.counter(f.first) == 0 {
                ctx.set_counter(f.first, now + 1);
            }
        }
        Ok(())
    }

    fn complete(&mut self, ctx: &mut Ctx<'_>, d: FrameDone) {
        let now = ctx.now();
        // A report for an unknown transaction or a frame already done is a duplicate: counted
        // (the monitor fails the run on it) and otherwise ignored — it frees no OST entry.
        let Some(t) = self.txns.get_mut(&d.txn) else {
            ctx.count(self.c_dup, 1);
            return;
        };
        let (w, b) = (d.frame_seq as usize / 64, d.frame_seq % 64);
        if t.done_bits.get(w).is_none_or(|x| x & (1 << b) != 0) {
            ctx.count(self.c_dup, 1);
            return;
        }
        t.done_bits[w] |= 1 << b;
        self.ost = self.ost.saturating_sub(1);
        ctx.count(self.c_frames_done, 1);
        t.frames_left -= 1;
        t.failed |= d.failed;
        if t.frames_left > 0 {
            return;
        }
        let t = self.txns.remove(&d.txn).expect("present");
        if t.failed {
            // Lost to a fatal QP: counted apart, so the report can say which transactions died.
            ctx.count(self.c_failed, 1);
            ctx.count(self.c_bytes_failed, t.bytes);
            ctx.set_counter(self.c_last_failed, d.txn + 1);
            return;
        }
        let lat = now - t.issued;
        ctx.count(self.c_done, 1);
        ctx.count(self.c_bytes_done, t.bytes);
        ctx.count(self.c_lat_sum, lat);
        set_max(ctx, self.c_lat_max, lat);
        ctx.set_counter(self.c_last, now + 1);
        if let Some(f) = self.flows.get(t.flow as usize) {
            let (txns, bytes, lat_sum, lat_max, last) = (f.txns, f.bytes, f.lat_sum, f.lat_max, f.last);
            ctx.count(txns, 1);
            ctx.count(bytes, t.bytes);
            ctx.count(lat_sum, lat);
            set_max(ctx, lat_max, lat);
            ctx.set_counter(last, now + 1);
        }
    }
}

impl Component for Paxi {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        for k in 0..self.done_in.len() {
            while let Some(d) = self.done_in[k].pop() {
                self.complete(ctx, d);
            }
        }
        while let Some(t) = self.txn_in.pop() {
            if let Err(e) = self.segment(ctx, t) {
                ctx.violation(e);
            }
        }
        // Push ready segments in segment order (the oldest first, whatever its LG), one per LG
        // stream per cycle, while W OST allows. Order matters when OST is scarce: scanning LGs
        // in a fixed order would hand every freed entry to the lowest LG and starve the rest.
        let mut pushed = 0u32;
        loop {
            if self.ost >= self.p.w_ost {
                break;
            }
            let mut best: Option<(u64, usize)> = None;
            for k in 0..self.queues.len() {
                if pushed & (1 << k) != 0 || !self.seg_out[k].can_push() {
                    continue;
                }
                if let Some(&(ready, seq, _)) = self.queues[k].front() {
                    if ready <= now && best.is_none_or(|(b, _)| seq < b) {
                        best = Some((seq, k));
                    }
                }
            }
            let Some((_, k)) = best else { break };
            let (_, _, seg) = self.queues[k].pop_front().expect("front");
            self.seg_out[k].push(seg);
            pushed |= 1 << k;
            self.ost += 1;
            ctx.count(self.c_segments, 1);
        }
        let mut next = Cycle::MAX;
        for k in 0..self.queues.len() {
            if let Some(&(ready, _, _)) = self.queues[k].front() {
                if ready > now {
                    next = next.min(ready);
                } else if self.ost < self.p.w_ost && self.seg_out[k].space() > u32::from(pushed & (1 << k) != 0) {
                    next = next.min(now + 1);
                }
                // Otherwise the LG's pop or a completion (freeing OST) wakes us.
            }
        }
        set_max(ctx, self.c_ost_peak, self.ost as u64);
        let ost = self.ost.min(u16::MAX as u32) as u16;
        if ost != self.ost_sig.get() {
            self.ost_sig.set(ost);
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
