//! The block itself (seed 000 «Segment Dispatch 机制», «多 Link Group 并行模型», «ITLV 分发机制»):
//! the PAXI core's state (`Paxi`) and its binding; its cycle (`tick`: the order of the phases,
//! which carries the timing); the ITLV choice of a segment's LG and the push of ready segments
//! to the LGs' slot FIFOs (the header's **Dispatch**); the status outputs and the next wake-up.

use std::collections::{BTreeMap, VecDeque};

use hwsim_hw::rng::splitmix64;
use hwsim_hw::{Binder, Component, Ctx, Cycle, Out, StreamIn, StreamOut, Wake};
use hwsim_ports::{mcast_group, ChipId, DataFrame, FlitKind, FrameDone, PaxiFlit, QpId, Segment, Txn};

use super::counters::{set_max, Counters, FlowCounters};
use super::multicast::MEntry;
use super::requester::{REntry, ReadBurst, TxnState, WEntry};
use super::{Itlv, Params};

/// The ITLV hash: a splitmix64 avalanche over the three inputs (never a linear mix).
pub fn itlv_hash(txn: u64, frame_seq: u32, qp: QpId) -> u64 {
    splitmix64(splitmix64(txn) ^ ((frame_seq as u64) << 16 | qp.value() as u64))
}

/// The run-wide sample set of the flows' transaction latencies (ns, issue to completion, the
/// measured ones: after `metrics_from`), every PAXI's (`hw::Sim::samples`).
pub const TXN_LATENCY: &str = "txn_latency";

/// Segment ids of flits (AR, R, B) have this bit set: their ACKs are not a transaction's.
pub(super) const FLIT_BIT: u64 = 1 << 63;

/// With `rsp_own_qp`, R and B frames go on the request's QP id with this bit set: their own PSN
/// space, which the RC Link keys per (LG, dst, QP).
pub(super) const RSP_QP_BIT: u16 = 1 << 9;

/// The block.
pub struct Paxi {
    pub(super) p: Params,
    pub(super) txn_in: StreamIn<Txn>,
    pub(super) seg_out: Vec<StreamOut<Segment>>,
    pub(super) done_in: Vec<StreamIn<FrameDone>>,
    /// The frames the RX side (`paxi.rx_vc`) hands to the AXI side, in the cycle it does.
    pub(super) bus: StreamIn<DataFrame>,
    /// What the completer sends (R frames), in the cycle it does.
    pub(super) sends: StreamIn<Segment>,
    /// AR entries to the AR packing buffer (`paxi.ar_pack`), and its flits back, in the cycle.
    pub(super) ar_out: StreamOut<Segment>,
    pub(super) ar_in: StreamIn<Segment>,
    /// The B packing buffer's flits (`paxi.b_pack`), in the cycle it makes them.
    pub(super) b_in: StreamIn<Segment>,
    pub(super) ost_sig: Out<u16>,
    pub(super) r_ost_sig: Out<u16>,
    pub(super) mul_ost_sig: Out<u16>,
    /// Per LG k, three queues: `3k` AW+W bursts (which wait for a W OST entry), `3k + 1` AR,
    /// R and B flits (which never do: the AR, R and B buffers are PAXI's own, and a B must not
    /// wait behind a write that waits for a B), `3k + 2` multicast bursts (which wait for a
    /// MUL OST entry). Entries (ready cycle, chip-wide segment number, segment), in (ready,
    /// number) order.
    pub(super) queues: Vec<VecDeque<(Cycle, u64, Segment)>>,
    /// Segments created so far (their order).
    pub(super) seq: u64,
    /// Flits (AR, R, B) made so far: their segment ids.
    pub(super) flits: u64,
    pub(super) txns: BTreeMap<u64, TxnState>,
    /// W OST table by index, its free indices (a stack) and the index of each held burst.
    pub(super) w_tab: Vec<Option<WEntry>>,
    pub(super) w_free: Vec<u8>,
    pub(super) w_index: hwsim_hw::FastMap<(u64, u32), u8>,
    /// R OST table by index and its free indices.
    pub(super) r_tab: Vec<Option<REntry>>,
    pub(super) r_free: Vec<u8>,
    /// MUL OST table by index and its free indices.
    pub(super) m_tab: Vec<Option<MEntry>>,
    pub(super) m_free: Vec<u8>,
    /// Read bursts in issue order, waiting for their ready cycle and an R OST entry.
    pub(super) reads: VecDeque<ReadBurst>,
    /// AR flits in flight: their entries, so a flit lost to a fatal QP fails its reads.
    pub(super) ar_flits: BTreeMap<u64, PaxiFlit>,
    /// Completer: B responses (due, requester, qp, the B entry), due order.
    /// Completer: reads being filled (at most `r_bufs`, arrival order) and those waiting.
    pub(super) rr: u64,
    pub(super) c: Counters,
    pub(super) flows: Vec<FlowCounters>,
}

impl Paxi {
    /// Binds the ports, outputs and counters (in this order: the registry numbers them so).
    pub(super) fn bind(p: &Params, b: &mut Binder) -> Result<Paxi, String> {
        let mut seg_out = Vec::new();
        let mut done_in = Vec::new();
        for k in 0..p.num_lg {
            seg_out.push(b.stream_out(&format!("seg{k}"))?);
            done_in.push(b.stream_in(&format!("done{k}"))?);
        }
        let flows = (0..p.flows).map(|f| FlowCounters::bind(b, f)).collect();
        let c = Counters::bind(b);
        Ok(Paxi {
            txn_in: b.stream_in("txn")?,
            seg_out,
            done_in,
            bus: b.stream_in("bus")?,
            sends: b.stream_in("sends")?,
            ar_out: b.stream_out("ar_entries")?,
            ar_in: b.stream_in("ar_flits")?,
            b_in: b.stream_in("b_flits")?,
            ost_sig: b.output("ost")?,
            r_ost_sig: b.output("r_ost")?,
            mul_ost_sig: b.output("mul_ost")?,
            queues: (0..3 * p.num_lg as usize).map(|_| VecDeque::new()).collect(),
            seq: 0,
            flits: 0,
            txns: BTreeMap::new(),
            w_tab: vec![None; p.w_ost as usize],
            // Stacks popped from the end: index 0 is taken first.
            w_free: (0..p.w_ost).rev().map(|i| i as u8).collect(),
            w_index: hwsim_hw::FastMap::with_capacity_and_hasher(p.w_ost as usize, Default::default()),
            r_tab: vec![None; p.r_ost as usize],
            r_free: (0..p.r_ost).rev().map(|i| i as u8).collect(),
            m_tab: vec![None; p.mul_ost as usize],
            m_free: (0..p.mul_ost).rev().map(|i| i as u8).collect(),
            reads: VecDeque::new(),
            ar_flits: BTreeMap::new(),
            rr: 0,
            c,
            flows,
            p: p.clone(),
        })
    }

    pub(super) fn lg_for(&mut self, txn: u64, seq: u32, qp: QpId) -> u8 {
        (match self.p.itlv {
            Itlv::Hash => itlv_hash(txn, seq, qp) % self.p.num_lg as u64,
            Itlv::RoundRobin => {
                let l = self.rr % self.p.num_lg as u64;
                self.rr += 1;
                l
            }
            Itlv::Qp => splitmix64(qp.value() as u64) % self.p.num_lg as u64,
        }) as u8
    }

    /// Queues `seg` on its LG in (ready, age) order: a frame paced for later must not hold back
    /// another one that is ready now (no head-of-line blocking).
    pub(super) fn enqueue(&mut self, ready: Cycle, seg: Segment) {
        let class = match seg.paxi.kind {
            FlitKind::WData => 0,
            FlitKind::Mul => 2,
            _ => 1,
        };
        let q = &mut self.queues[3 * seg.lg as usize + class];
        // Mostly in order (a transaction's bursts are ready one after another): the tail then.
        if q.back().is_none_or(|&(r, n, _)| (r, n) <= (ready, self.seq)) {
            q.push_back((ready, self.seq, seg));
        } else {
            let at = q.partition_point(|&(r, n, _)| (r, n) <= (ready, self.seq));
            q.insert(at, (ready, self.seq, seg));
        }
        self.seq += 1;
    }

    /// A flit (AR, R, B) for `dst` on `qp` (a response on its own QP with `rsp_own_qp`),
    /// ready `tx_latency` from now.
    pub(super) fn send_flit(&mut self, now: Cycle, dst: ChipId, qp: QpId, bytes: u32, flit: PaxiFlit) -> u64 {
        let qp = if self.p.rsp_own_qp && flit.kind.is_response() {
            QpId::new(qp.value() | RSP_QP_BIT).expect("10 bits")
        } else {
            qp
        };
        let id = FLIT_BIT | self.flits;
        self.flits += 1;
        let lg = self.lg_for(id, 0, qp);
        let seg = Segment {
            txn: id,
            frame_seq: 0,
            dst,
            qp,
            bytes,
            lg,
            paxi: flit,
        };
        self.enqueue(now.saturating_add(self.p.tx_latency), seg);
        id
    }

    /// Whether a segment of `kind` can take its OST entry now (AW+W: W OST; multicast: MUL
    /// OST; flits need none).
    fn has_ost(&self, kind: FlitKind) -> bool {
        match kind {
            FlitKind::WData => !self.w_free.is_empty(),
            FlitKind::Mul => !self.m_free.is_empty(),
            _ => true,
        }
    }

    /// The RC Link's reports of the frames it ACKed (or gave up on), LG by LG.
    fn take_acks(&mut self, ctx: &mut Ctx<'_>) {
        for k in 0..self.done_in.len() {
            while let Some(d) = self.done_in[k].pop() {
                self.acked(ctx, d);
            }
        }
    }

    /// The transactions the CDMA issued this cycle.
    fn take_txns(&mut self, ctx: &mut Ctx<'_>) {
        while let Some(t) = self.txn_in.pop() {
            if let Err(e) = self.issue(ctx, t) {
                ctx.violation(e);
            }
        }
    }

    /// Pushes the ready segments to their LGs; returns the LGs pushed to (a bit per LG).
    fn push_ready(&mut self, ctx: &mut Ctx<'_>, now: Cycle) -> u32 {
        // Push ready segments in segment order (the oldest first, whatever its LG), one per LG
        // stream per cycle; AW+W only while W OST allows. Order matters when OST is scarce:
        // scanning LGs in a fixed order would hand every freed entry to the lowest LG and
        // starve the rest.
        let mut pushed = 0u32;
        loop {
            let mut best: Option<(u64, usize)> = None;
            for qi in 0..self.queues.len() {
                let k = qi / 3;
                if pushed & (1 << k) != 0 || !self.seg_out[k].can_push() {
                    continue;
                }
                if let Some(&(ready, seq, s)) = self.queues[qi].front() {
                    if self.has_ost(s.paxi.kind) && ready <= now && best.is_none_or(|(b, _)| seq < b) {
                        best = Some((seq, qi));
                    }
                }
            }
            let Some((_, qi)) = best else { break };
            let k = qi / 3;
            let (_, _, mut seg) = self.queues[qi].pop_front().expect("front");
            if seg.paxi.kind == FlitKind::Mul {
                let i = self.m_free.pop().expect("room checked");
                seg.paxi.ost = i;
                let g = mcast_group(seg.dst).expect("checked at issue") as usize;
                self.m_tab[i as usize] = Some(MEntry {
                    txn: seg.txn,
                    seq: seg.frame_seq,
                    bytes: seg.bytes,
                    left: self.p.groups[g].len() as u32,
                    deadline: now.saturating_add(self.p.mul_timeout),
                });
            }
            if seg.paxi.kind == FlitKind::WData {
                let i = self.w_free.pop().expect("room checked");
                seg.paxi.ost = i;
                self.w_tab[i as usize] = Some(WEntry {
                    txn: seg.txn,
                    seq: seg.frame_seq,
                    acked: false,
                    responded: false,
                });
                self.w_index.insert((seg.txn, seg.frame_seq), i);
            }
            self.seg_out[k].push(seg);
            pushed |= 1 << k;
            ctx.count(self.c.segments, 1);
        }
        pushed
    }

    /// The next cycle with work for the queues and the reads (`pushed`: the LGs pushed to this
    /// cycle). The AR packing buffer wakes itself at its timeout.
    fn next_wake(&self, now: Cycle, pushed: u32) -> Cycle {
        let mut next = Cycle::MAX;
        for qi in 0..self.queues.len() {
            let k = qi / 3;
            if let Some(&(ready, _, s)) = self.queues[qi].front() {
                if ready > now {
                    next = next.min(ready);
                } else if self.has_ost(s.paxi.kind) && self.seg_out[k].space() > u32::from(pushed & (1 << k) != 0) {
                    next = next.min(now + 1);
                }
                // Otherwise the LG's pop or a completion (freeing OST) wakes us.
            }
        }
        if let Some(r) = self.reads.front() {
            if r.ready > now {
                next = next.min(r.ready);
            }
            // Else it waits for an R OST entry: an R frame's arrival wakes us.
        }
        next
    }

    /// The OST tables in use: their peaks and the outputs `ost`, `r_ost`, `mul_ost`.
    fn show_ost(&mut self, ctx: &mut Ctx<'_>) {
        let w_used = self.p.w_ost as usize - self.w_free.len();
        set_max(ctx, self.c.ost_peak, w_used as u64);
        let ost = w_used as u16;
        if ost != self.ost_sig.get() {
            self.ost_sig.set(ost);
        }
        let r_used = (self.p.r_ost as usize - self.r_free.len()) as u16;
        if r_used != self.r_ost_sig.get() {
            self.r_ost_sig.set(r_used);
        }
        let m_used = (self.p.mul_ost as usize - self.m_free.len()) as u16;
        if m_used != self.mul_ost_sig.get() {
            self.mul_ost_sig.set(m_used);
        }
        set_max(ctx, self.c.mul_ost_peak, m_used as u64);
    }
}

impl Component for Paxi {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        self.take_acks(ctx);
        // The frames the RX side hands on this cycle (`paxi.rx_vc`, earlier in the cycle).
        while let Some(f) = self.bus.pop() {
            match f.paxi.kind {
                FlitKind::R => self.r_back(ctx, f),
                FlitKind::B => self.b_back(ctx, f),
                _ => ctx.violation(format!(
                    "a {:?} frame on the requester's input (W, AR and multicast go to the completer): {f:?}",
                    f.paxi.kind
                )),
            }
        }
        self.mul_expire(ctx, now);
        self.take_txns(ctx);
        self.issue_reads(ctx, now);
        // The AR packing buffer (`paxi.ar_pack`) packs this cycle's entries (after its
        // timeout) now; process 1 follows in this cycle with its flits, the completer's
        // sends and the dispatch, and decides the next wake-up.
        ctx.run_process(1);
        Wake::OnInput
    }

    /// Process 1: the AR flits, then what the completer sends, become segments (in this order:
    /// their ids and link groups are drawn in it); the ready segments go to their LGs. Runs
    /// after process 0 in its cycles, and alone when only the AR buffer's timeout or the
    /// completer has something (where the fused block ticked whole: its other phases had
    /// nothing to do then).
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        self.take_packed(now);
        // The slave's side (`paxi.completer` and `paxi.b_pack`, earlier in the cycle): the B
        // flits, then the R frames, where the fused block ran its slave.
        while let Some(s) = self.b_in.pop() {
            self.send_flit(now, s.dst, s.qp, s.bytes, s.paxi);
        }
        while let Some(s) = self.sends.pop() {
            self.send_flit(now, s.dst, s.qp, s.bytes, s.paxi);
        }
        let pushed = self.push_ready(ctx, now);
        let mut next = self.next_wake(now, pushed);
        self.show_ost(ctx);
        if let Some(d) = self.m_tab.iter().flatten().map(|m| m.deadline).min() {
            next = next.min(d.max(now + 1));
        }
        // The next wake-up runs the block from process 0 (expiries, reads due), then this.
        ctx.run_process_on(0, Wake::earliest((next != Cycle::MAX).then_some(next)));
        Wake::OnInput
    }

    /// The flows' latency percentiles, from every completed transaction's latency; and those
    /// latencies into the run-wide set [`TXN_LATENCY`] (the report's histogram over every chip).
    fn finish(&mut self, ctx: &mut Ctx<'_>) {
        for f in &mut self.flows {
            if let Some(p) = crate::percentile::summarize(&mut f.lats) {
                for (id, v) in f.pct.iter().zip(p) {
                    ctx.set_counter(*id, v);
                }
            }
            ctx.add_samples(TXN_LATENCY, &f.lats);
        }
    }
}
