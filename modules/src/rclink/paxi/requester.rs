//! The requester (seed 000 «Segment Dispatch 机制», «跨 LG 事务完成保证»; seed 002 «完整传输流程»:
//! AXI write, «B 响应返回路径», AXI read): a transaction cut into bursts of ≤ MPS (the MPS split)
//! and queued for dispatch; the W and R OST tables; the AR packing buffer's flits; the bursts
//! done by their B, R or RC Link ACK, and the transaction at its last burst.

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{
    mcast_group, ChipId, DataFrame, FlitKind, FrameDone, PackedEntry, PaxiFlit, QpId, Segment, Txn, TxnOp,
};

use super::counters::{set_first, set_max};
use super::dispatch::{Paxi, FLIT_BIT, RSP_QP_BIT};
use super::paxi_pack;

pub(super) struct TxnState {
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
pub(super) struct WEntry {
    pub(super) txn: u64,
    pub(super) seq: u32,
    pub(super) acked: bool,
    pub(super) responded: bool,
}

/// An R OST entry.
#[derive(Clone, Copy)]
pub(super) struct REntry {
    txn: u64,
    seq: u32,
    bytes: u32,
}

/// A read burst waiting for an R OST entry.
pub(super) struct ReadBurst {
    pub(super) ready: Cycle,
    txn: u64,
    seq: u32,
    dst: ChipId,
    qp: QpId,
    bytes: u32,
}

impl Paxi {
    pub(super) fn issue(&mut self, ctx: &mut Ctx<'_>, t: Txn) -> Result<(), String> {
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
            // The injection gate: burst i's first byte (seed 000's ITLV time, i · MPS in), or
            // with `write_collect` its last (seed 002's WLAST: the whole burst in).
            let gate_bytes = if self.p.write_collect && t.op != TxnOp::Read {
                ((i + 1).saturating_mul(mps)).min(t.bytes)
            } else {
                i.saturating_mul(mps)
            };
            let ready = pipeline.saturating_add(if t.milli_bytes_per_ns == 0 {
                now
            } else {
                now.saturating_add(gate_bytes.saturating_mul(1000).div_ceil(t.milli_bytes_per_ns))
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
        // A flow's statistics start with its first transaction after the warm-up.
        if let Some(f) = self.flows.get(t.flow as usize).filter(|_| now >= self.p.metrics_from) {
            let first = f.first;
            set_first(ctx, first);
        }
        Ok(())
    }

    /// Burst `seq` of `txn` is done (or given up); the last one completes the transaction.
    pub(super) fn burst_done(&mut self, ctx: &mut Ctx<'_>, txn: u64, seq: u32, failed: bool) {
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
        let measured = t.issued >= self.p.metrics_from;
        if let Some(f) = self.flows.get_mut(t.flow as usize).filter(|_| measured) {
            f.lats.push(lat);
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
    pub(super) fn acked(&mut self, ctx: &mut Ctx<'_>, d: FrameDone) {
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

    /// An R frame back at this chip's AXI master: its read burst is done.
    pub(super) fn r_back(&mut self, ctx: &mut Ctx<'_>, f: DataFrame) {
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

    /// A B flit back at this chip's AXI master: each entry answers a W OST entry (or, flagged
    /// multicast, a MUL OST entry).
    pub(super) fn b_back(&mut self, ctx: &mut Ctx<'_>, f: DataFrame) {
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

    /// Takes read bursts that are ready into the AR buffer while R OST entries last.
    pub(super) fn issue_reads(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
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
            let e = PackedEntry::new(i, r.bytes);
            self.ar_out.push(paxi_pack::entry_segment(FlitKind::Ar, r.dst, r.qp, e));
        }
        let used = (self.p.r_ost as usize - self.r_free.len()) as u64;
        set_max(ctx, self.c.r_ost_peak, used);
    }

    /// Turns the flits the AR packing buffer (`paxi.ar_pack`) made this cycle into segments.
    pub(super) fn take_packed(&mut self, now: Cycle) {
        while let Some(f) = self.ar_in.pop() {
            let id = self.send_flit(now, f.dst, f.qp, f.bytes, f.paxi);
            self.ar_flits.insert(id, f.paxi);
        }
    }
}
