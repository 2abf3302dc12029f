//! RC Link RX of one link group: PSN check, ACK MERGE, FACK, credit return and ECN → CNP (seed 000
//! «RX 侧设计»: «PSN 校验与三种结果», «FACK», «ACK MERGE 汇聚», «ECN 检测与 CNP 生成», «credit 返还»;
//! appendix C «RX 参数»; SPEC.md «RX side»).
//!
//! ```text
//!                              +-------------------------------------------+
//!  data : stream<DataFrame> ==>| PSN check per (src, qp) against EPSN      |==> ctrl : stream<Ctrl>
//!  (capacity 8, from rx_cap)   |  accept -> ACK MERGE poll, CNP if CE      |    ACK / NAK / CNP (RSP path)
//!                              |  gap    -> NAK (one per gap), drop        |==> credit : stream<CreditMsg>
//!                              |  dup    -> drop                           |    CBFC returns (MAC path)
//!                              |  every data packet -> credit return       |--> epsn : signal<Psn>
//!                              |  zero-byte (FACK) -> immediate ACK        |--> last_ack : signal<Psn>
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
//! |                            |               | bypassing ACK MERGE; no credit, no CNP             |
//! | `psn == EPSN`              | accept        | EPSN++, deliver, ACK MERGE pending += 1 (poll at   |
//! |                            |               | now + `poll_cycle` if none), credit, CNP if CE     |
//! | `psn` after EPSN (ring)    | gap           | NAK `ack_psn = EPSN` (once per gap), drop, credit  |
//! | `psn` before EPSN (ring)   | duplicate     | drop silently, credit                              |
//!
//! All three data paths return credit («三条路径都返还 credit»): the packet used receive buffer
//! whatever its PSN, and a path that kept it would leak credit until the sender deadlocks.
//!
//! **Credit return**: `ceil((payload + pkt_ovhd) / credit_size)` per data packet (the TX's CBFC
//! cost, `cbfc_cost`), due `credit_return_delay` cycles after the arrival, per `(src, vc =
//! qp & 3)`. Everything due in one cycle for one `(src, vc)` leaves as one [`CreditMsg`]
//! `{src: chip, dst: frame.src, lg, vc, credits}` (split if above the 15-bit credit field).
//!
//! **ACK MERGE**: demand-driven (no free-running poll): an accepted packet schedules a poll for
//! its `(src, qp)` at now + `poll_cycle` unless one is pending. A poll at `t` sees every packet
//! checked up to and including cycle `t` and emits one cumulative ACK `{src: chip, dst: src, lg,
//! rh: Rh::ack(qp, ack_psn), wire_bytes: ack_bytes}` covering at most `merge_depth` pending
//! packets. The pending packets are always the last accepted ones, i.e. the PSNs just before
//! EPSN, so a count is enough: `ack_psn = EPSN − (pending − covered)`. If packets remain, the
//! next poll is at `t + poll_cycle`. Polls due in the same cycle run in `(src, qp)` order.
//!
//! **ECN → CNP**: an accepted data packet marked CE emits a CNP `{rh: Rh::cnp(qp), wire_bytes:
//! cnp_bytes}` if no CNP was sent for its `(src, qp)` in the last `cnp_interval` cycles (`now −
//! last_cnp ≥ cnp_interval`, or never). Zero-byte packets and dropped packets never trigger one.
//!
//! **Outputs**: ACKs, NAKs and CNPs share `ctrl`, credit returns go on `credit`; each stream takes
//! one push per cycle, so messages generated together queue in generation order (a cycle's
//! arrivals first, in packet order, then its polls) and leave one per cycle, waiting while the
//! stream is full. `epsn` shows the EPSN of the `(src, qp)` last touched by an arrival;
//! `last_ack` the `ack_psn` of the last ACK pushed (merged or FACK; not NAKs).
//!
//! **Latency** (arrival = the cycle the frame is visible on `data`, popped at once): NAK, FACK ACK
//! and CNP are pushed in the arrival cycle (seen downstream one cycle later) if `ctrl` is free;
//! the merged ACK at arrival + `poll_cycle` for the first packet of a merge window; credits at
//! arrival + `credit_return_delay`.
//!
//! **Deviations and choices** (the seed is silent or frame-granular):
//! - Frame-level arrival: the RX cap delivers a frame when its last byte is received and the RX
//!   checks all of the frame's packets in that cycle (one event per frame, as everywhere in
//!   hwsim). Their credit, poll and CNP times are that cycle.
//! - One NAK per gap: after a NAK for EPSN `e`, further out-of-order packets produce no NAK until
//!   EPSN moves (they are still dropped and still return credit; counter `ooo_pkts`). This avoids
//!   a NAK storm — every packet in flight behind a loss would otherwise NAK the same PSN and make
//!   the sender rewind repeatedly. If that NAK or the resend is lost, the sender's RETRY_TIMEOUT
//!   recovers. Once EPSN moves, a new gap NAKs again.
//! - A FACK's immediate ACK is cumulative (`ack_psn = EPSN`), so it also covers the packets
//!   pending in ACK MERGE: pending is cleared and the scheduled poll then sends nothing (the seed:
//!   a poll with `pending_count == 0` emits no ACK). A FACK not at EPSN is not accepted but is
//!   still answered with an ACK carrying EPSN (never a NAK).
//! - A PSN exactly half a ring (2048) from EPSN is neither before nor after it; it is treated as a
//!   duplicate (dropped, no NAK).
//! - `pkt_ovhd` for the credit cost is this block's parameter (it must equal the sender's CBFC
//!   setting), not the frame's `pkt_ovhd` field, which the RX cap uses for wire time.
//! - A frame addressed to another chip or LG, or malformed (no packets, `max_payload` 0, packets
//!   beyond the frame), is a protocol violation: the run stops naming this instance.
//!
//! Counters (events, never ticks): `rx_frames`, `rx_pkts` (all packets, FACKs included),
//! `rx_payload_bytes` (accepted payload), `dup_pkts`, `ooo_pkts` (after EPSN, NAKed or not),
//! `naks_sent`, `acks_sent` (merged ACKs), `fack_acks` (immediate ACKs), `cnps_sent`,
//! `credits_returned` (credits pushed on `credit`), `first_byte_at` / `last_byte_at` (cycle + 1
//! of the first / last accepted payload; 0 = none). `*_sent` and `credits_returned` count pushes.

use std::collections::{BTreeMap, VecDeque};

use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{cbfc_cost, ChipId, CreditMsg, CreditSize, Ctrl, DataFrame, Ecn, LgId, Psn, QpId, Rh};
use serde::{Deserialize, Serialize};

/// Parameters of one RC Link RX (one per chip and LG); defaults from seed 000 appendix C.
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
    /// MERGE_DEPTH: most packets one cumulative ACK covers (≥ 1), default 64.
    pub merge_depth: u32,
    /// POLL_CYCLE_NS: cycles from the first pending packet to its ACK MERGE poll (≥ 1), default 4.
    pub poll_cycle: u64,
    /// CREDIT_RETURN_DELAY_NS: cycles from arrival to the credit return, default 1.
    pub credit_return_delay: u64,
    /// CNP_INTERVAL_NS: least cycles between CNPs of one (src, qp), default 2500 (the seed's spec
    /// text; its design document says 50000 — see «ECN 检测与 CNP 生成»).
    pub cnp_interval: u64,
    /// Wire bytes of an ACK or NAK (one header), default 50.
    pub ack_bytes: u16,
    /// Wire bytes of a CNP, default 64.
    pub cnp_bytes: u16,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            pkt_ovhd: 50,
            credit_size: CreditSize::B256,
            merge_depth: 64,
            poll_cycle: 4,
            credit_return_delay: 1,
            cnp_interval: 2500,
            ack_bytes: 50,
            cnp_bytes: 64,
        }
    }
}

/// Port list: `data` in; `ctrl`, `credit`, `epsn`, `last_ack` out.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<DataFrame>("data", 8).doc("received data frames (from the rx_cap), checked at arrival"),
        PortDecl::stream_out::<Ctrl>("ctrl").doc("ACK / NAK / CNP back to the sender (RSP path)"),
        PortDecl::stream_out::<CreditMsg>("credit").doc("CBFC credit returns per (src, vc) (MAC control path)"),
        PortDecl::output::<Psn>("epsn").doc("EPSN of the (src, qp) most recently touched"),
        PortDecl::output::<Psn>("last_ack").doc("ack_psn of the last ACK pushed"),
    ]
}

/// Largest credit count in one [`CreditMsg`]: the 15-bit CBFC counter.
const CREDIT_FIELD_MAX: u32 = 0x7FFF;

/// Receive state of one `(src, qp)` window.
#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    /// Next expected PSN (= max contiguous PSN + 1).
    epsn: Psn,
    /// Accepted packets not yet covered by an ACK: the PSNs just before `epsn`.
    pending: u32,
    /// Whether an ACK MERGE poll is scheduled (the seed's `poll_scheduled`).
    poll_scheduled: bool,
    /// EPSN a NAK was sent for; no further NAK until EPSN moves past it.
    nak_for: Option<Psn>,
    /// Cycle of the last CNP for this window.
    last_cnp: Option<Cycle>,
}

/// What a queued control message is, for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CtrlKind {
    Ack,
    Fack,
    Nak,
    Cnp,
}

/// The RC Link RX block.
pub struct RcLinkRx {
    chip: ChipId,
    lg: LgId,
    pkt_ovhd: u32,
    credit_size: CreditSize,
    merge_depth: u32,
    poll_cycle: u64,
    credit_return_delay: u64,
    cnp_interval: u64,
    ack_bytes: u16,
    cnp_bytes: u16,

    data: StreamIn<DataFrame>,
    ctrl: StreamOut<Ctrl>,
    credit: StreamOut<CreditMsg>,
    epsn_out: Out<Psn>,
    last_ack: Out<Psn>,

    /// Windows by (src, qp); an entry is created once per window, never per packet.
    flows: BTreeMap<(ChipId, QpId), Flow>,
    /// Scheduled polls (due cycle, window), due cycles non-decreasing.
    polls: VecDeque<(Cycle, (ChipId, QpId))>,
    /// This cycle's due polls, sorted by window (reused, no allocation per cycle).
    due_polls: Vec<(ChipId, QpId)>,
    /// Credit returns (due cycle, message), due cycles non-decreasing; entries of the same due
    /// cycle and (dst, vc) are summed.
    credits: VecDeque<(Cycle, CreditMsg)>,
    /// Control messages waiting for the `ctrl` stream, in generation order.
    ctrl_q: VecDeque<(CtrlKind, Ctrl)>,

    c_rx_frames: CounterId,
    c_lost: CounterId,
    c_data_latency_max: CounterId,
    c_rx_pkts: CounterId,
    c_rx_payload: CounterId,
    c_dup: CounterId,
    c_ooo: CounterId,
    c_naks: CounterId,
    c_acks: CounterId,
    c_facks: CounterId,
    c_cnps: CounterId,
    c_credits: CounterId,
    c_first_byte: CounterId,
    c_last_byte: CounterId,
}

/// Binds ports; refuses `merge_depth` 0, `poll_cycle` 0 (a poll must come after the packet that
/// schedules it) and `lg` above 7.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.merge_depth == 0 {
        return Err("merge_depth must be ≥ 1".into());
    }
    if p.poll_cycle == 0 {
        return Err("poll_cycle must be ≥ 1".into());
    }
    if p.lg > 7 {
        return Err(format!("lg {} out of range 0..=7", p.lg));
    }
    Ok(Box::new(RcLinkRx {
        chip: p.chip,
        lg: p.lg,
        pkt_ovhd: p.pkt_ovhd,
        credit_size: p.credit_size,
        merge_depth: p.merge_depth,
        poll_cycle: p.poll_cycle,
        credit_return_delay: p.credit_return_delay,
        cnp_interval: p.cnp_interval,
        ack_bytes: p.ack_bytes,
        cnp_bytes: p.cnp_bytes,
        data: b.stream_in("data")?,
        ctrl: b.stream_out("ctrl")?,
        credit: b.stream_out("credit")?,
        epsn_out: b.output("epsn")?,
        last_ack: b.output("last_ack")?,
        flows: BTreeMap::new(),
        polls: VecDeque::with_capacity(64),
        due_polls: Vec::with_capacity(64),
        credits: VecDeque::with_capacity(64),
        ctrl_q: VecDeque::with_capacity(64),
        c_rx_frames: b.counter("rx_frames"),
        c_lost: b.counter("lost_pkts"),
        c_data_latency_max: b.counter("data_latency_max"),
        c_rx_pkts: b.counter("rx_pkts"),
        c_rx_payload: b.counter("rx_payload_bytes"),
        c_dup: b.counter("dup_pkts"),
        c_ooo: b.counter("ooo_pkts"),
        c_naks: b.counter("naks_sent"),
        c_acks: b.counter("acks_sent"),
        c_facks: b.counter("fack_acks"),
        c_cnps: b.counter("cnps_sent"),
        c_credits: b.counter("credits_returned"),
        c_first_byte: b.counter("first_byte_at"),
        c_last_byte: b.counter("last_byte_at"),
    }))
}

/// Why a frame cannot be checked, if it cannot.
fn malformed(f: &DataFrame, chip: ChipId, lg: LgId) -> Option<String> {
    if f.dst != chip || f.lg != lg {
        return Some(format!(
            "frame for chip {} lg {} reached the RX of chip {chip} lg {lg}",
            f.dst, f.lg
        ));
    }
    if f.npkts == 0 {
        return Some("frame carries no packet".into());
    }
    if f.frame_bytes > 0 && f.max_payload == 0 {
        return Some("frame with payload has max_payload 0".into());
    }
    if u32::from(f.first_idx) + u32::from(f.npkts) > u32::from(f.frame_pkts()) {
        return Some(format!(
            "packets {}..{} beyond the frame's {}",
            f.first_idx,
            u32::from(f.first_idx) + u32::from(f.npkts),
            f.frame_pkts()
        ));
    }
    None
}

impl RcLinkRx {
    fn ctrl_msg(&self, dst: ChipId, rh: Rh, wire_bytes: u16) -> Ctrl {
        Ctrl {
            src: self.chip,
            dst,
            lg: self.lg,
            rh,
            wire_bytes,
        }
    }

    /// Adds `credits` for `(dst, vc)` due at `due`, summed with what is already due then.
    fn add_credit(&mut self, due: Cycle, dst: ChipId, vc: u8, credits: u32) {
        // Due cycles only grow (now + a constant), so the entries of `due` are at the tail.
        for (d, m) in self.credits.iter_mut().rev() {
            if *d != due {
                break;
            }
            if m.dst == dst && m.vc == vc && u32::from(m.credits) + credits <= CREDIT_FIELD_MAX {
                m.credits += credits as u16;
                return;
            }
        }
        self.credits.push_back((
            due,
            CreditMsg {
                src: self.chip,
                dst,
                lg: self.lg,
                vc,
                credits: credits as u16,
                sent_at: 0,
            },
        ));
    }

    /// Checks every packet of one arriving frame.
    fn receive(&mut self, ctx: &mut Ctx<'_>, now: Cycle, f: &DataFrame) {
        ctx.count(self.c_rx_frames, 1);
        // Data-path latency from the sender's MAC (0 = unstamped stimulus): with control
        // latency on the sender side it shows that control does not queue behind data.
        if f.sent_at != 0 && f.payload() > 0 {
            let lat = now.saturating_sub(f.sent_at);
            if lat > ctx.counter(self.c_data_latency_max) {
                ctx.set_counter(self.c_data_latency_max, lat);
            }
        }
        if let Some(why) = malformed(f, self.chip, self.lg) {
            ctx.violation(format!("{why}: {f:?}"));
            return;
        }
        let key = (f.src, f.qp);
        let mut flow = *self.flows.entry(key).or_default();
        let vc = f.qp.vc_bank().value();
        for i in f.first_idx..f.first_idx + f.npkts {
            let psn = f.psn_of(i);
            let bytes = f.pkt_bytes(i);
            if f.lost & (1 << (i - f.first_idx)) != 0 {
                // Lost or corrupted on the wire: the MAC discards it (bad FCS), so the PSN check
                // never sees it; it occupied the receive buffer, so its credit still returns.
                ctx.count(self.c_lost, 1);
                if bytes > 0 {
                    let cost = cbfc_cost(bytes, self.pkt_ovhd, self.credit_size);
                    self.add_credit(now + self.credit_return_delay, f.src, vc, cost);
                }
                continue;
            }
            ctx.count(self.c_rx_pkts, 1);
            if bytes == 0 {
                // FACK / tcredit: answered at once with a cumulative ACK, which also covers what
                // ACK MERGE holds; no credit (it used no data buffer), no CNP.
                if psn == flow.epsn {
                    flow.epsn = flow.epsn.next();
                }
                flow.pending = 0;
                let m = self.ctrl_msg(f.src, Rh::ack(f.qp, flow.epsn), self.ack_bytes);
                self.ctrl_q.push_back((CtrlKind::Fack, m));
                continue;
            }
            let cost = cbfc_cost(bytes, self.pkt_ovhd, self.credit_size);
            self.add_credit(now + self.credit_return_delay, f.src, vc, cost);
            if psn == flow.epsn {
                flow.epsn = flow.epsn.next();
                ctx.count(self.c_rx_payload, bytes.into());
                if ctx.counter(self.c_first_byte) == 0 {
                    ctx.set_counter(self.c_first_byte, now + 1);
                }
                ctx.set_counter(self.c_last_byte, now + 1);
                flow.pending += 1;
                if !flow.poll_scheduled {
                    flow.poll_scheduled = true;
                    self.polls.push_back((now + self.poll_cycle, key));
                }
                if f.ecn == Ecn::Ce && flow.last_cnp.is_none_or(|t| now - t >= self.cnp_interval) {
                    flow.last_cnp = Some(now);
                    let m = self.ctrl_msg(f.src, Rh::cnp(f.qp), self.cnp_bytes);
                    self.ctrl_q.push_back((CtrlKind::Cnp, m));
                }
            } else if psn.after(flow.epsn) {
                ctx.count(self.c_ooo, 1);
                if flow.nak_for != Some(flow.epsn) {
                    flow.nak_for = Some(flow.epsn);
                    let m = self.ctrl_msg(f.src, Rh::nak(f.qp, flow.epsn), self.ack_bytes);
                    self.ctrl_q.push_back((CtrlKind::Nak, m));
                }
            } else {
                ctx.count(self.c_dup, 1);
            }
        }
        self.epsn_out.set(flow.epsn);
        *self.flows.get_mut(&key).expect("entry made above") = flow;
    }

    /// Runs the ACK MERGE polls due at or before `now`.
    fn run_polls(&mut self, now: Cycle) {
        self.due_polls.clear();
        while let Some(&(t, key)) = self.polls.front() {
            if t > now {
                break;
            }
            self.polls.pop_front();
            self.due_polls.push(key);
        }
        if self.due_polls.is_empty() {
            return;
        }
        // Same-cycle polls in (src, qp) order, whatever order their packets came in.
        self.due_polls.sort_unstable();
        for i in 0..self.due_polls.len() {
            let key = self.due_polls[i];
            let flow = self.flows.get_mut(&key).expect("a poll belongs to a window");
            let covered = flow.pending.min(self.merge_depth);
            let ack = (covered > 0).then(|| {
                let left = flow.pending - covered;
                flow.pending = left;
                flow.epsn.wrapping_sub((left % u32::from(Psn::MODULUS)) as u16)
            });
            let again = flow.pending > 0;
            flow.poll_scheduled = again;
            if let Some(ack_psn) = ack {
                let m = self.ctrl_msg(key.0, Rh::ack(key.1, ack_psn), self.ack_bytes);
                self.ctrl_q.push_back((CtrlKind::Ack, m));
            }
            if again {
                // Polls run exactly at their due cycle (we wake for it), so t == now and the
                // queue stays sorted.
                self.polls.push_back((now + self.poll_cycle, key));
            }
        }
    }
}

impl Component for RcLinkRx {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // 1. Arrivals: everything visible arrived now (each push wakes us the next cycle).
        while let Some(f) = self.data.pop() {
            self.receive(ctx, now, &f);
        }
        // 2. ACK MERGE polls due now (they see this cycle's arrivals).
        self.run_polls(now);

        // 3. One push per stream per cycle.
        let ctrl_free = self.ctrl.can_push();
        if ctrl_free {
            if let Some((kind, mut m)) = self.ctrl_q.pop_front() {
                // Stamped when it leaves, so the sender can measure the control path's latency
                // (32-bit ns in the RH timestamp field).
                m.rh = m.rh.with_timestamp(now as u32);
                self.ctrl.push(m);
                let c = match kind {
                    CtrlKind::Ack => self.c_acks,
                    CtrlKind::Fack => self.c_facks,
                    CtrlKind::Nak => self.c_naks,
                    CtrlKind::Cnp => self.c_cnps,
                };
                ctx.count(c, 1);
                if matches!(kind, CtrlKind::Ack | CtrlKind::Fack) {
                    self.last_ack.set(m.rh.psn());
                }
            }
        }
        let credit_free = self.credit.can_push();
        if credit_free && self.credits.front().is_some_and(|(d, _)| *d <= now) {
            let (_, mut m) = self.credits.pop_front().expect("front");
            m.sent_at = now;
            self.credit.push(m);
            ctx.count(self.c_credits, m.credits.into());
        }

        // 4. Next due work. A full stream wakes us when its consumer pops, so a blocked queue
        //    needs no timer.
        let mut next: Option<Cycle> = None;
        let mut at = |t: Cycle| next = Some(next.map_or(t, |n: Cycle| n.min(t)));
        if !self.ctrl_q.is_empty() && ctrl_free {
            at(now + 1);
        }
        match self.credits.front() {
            Some(&(d, _)) if d > now => at(d),
            Some(_) if credit_free => at(now + 1),
            _ => {}
        }
        if let Some(&(t, _)) = self.polls.front() {
            at(t);
        }
        match next {
            Some(t) if t <= now + 1 => Wake::NextCycle,
            Some(t) => Wake::At(t),
            None => Wake::OnInput,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::{Harness, StreamNet, Value};

    fn qp(v: u16) -> QpId {
        QpId::new(v).unwrap()
    }
    fn psn(v: u16) -> Psn {
        Psn::new(v).unwrap()
    }

    /// A frame of `bytes` payload from `src` on `qp`, first PSN `first`, every packet carried.
    fn frame(src: ChipId, q: u16, first: u16, bytes: u32) -> DataFrame {
        DataFrame {
            src,
            qp: qp(q),
            first_psn: psn(first),
            ..DataFrame::whole(bytes, 1344, 50)
        }
    }

    /// A bench with both output streams logged and room for 256 messages in each.
    fn bench(p: &Params, skip: bool) -> Harness {
        bench_sink(p, skip, 256)
    }

    fn bench_sink(p: &Params, skip: bool, sink: u32) -> Harness {
        let q = p.clone();
        let mut h = Harness::new("rclink_rx", ports(p), Box::new(move |b| build(&q, b)), 1, sink).unwrap();
        h.sim_mut().set_skip(skip);
        h.sim().net("dut.ctrl").unwrap().enable_log();
        h.sim().net("dut.credit").unwrap().enable_log();
        h
    }

    /// Drives `rows` (push cycle, frame; cycles ascending, at most one per cycle) and steps
    /// one cycle at a time until `end`.
    fn drive(h: &mut Harness, rows: &[(Cycle, DataFrame)], end: Cycle) {
        let mut rows = rows.iter().peekable();
        while h.now() < end {
            if let Some((_, f)) = rows.next_if(|(c, _)| *c == h.now()) {
                assert!(h.push("data", *f), "data full at {}", h.now());
            }
            h.step().unwrap();
        }
        assert!(rows.next().is_none(), "rows after the end");
    }

    fn log<T: Value>(h: &Harness, port: &str) -> Vec<(Cycle, T)> {
        let net = h.sim().net(&format!("dut.{port}")).unwrap();
        let net = net.as_any().downcast_ref::<StreamNet<T>>().unwrap();
        let l = net.log();
        l.as_ref().unwrap().clone()
    }

    /// The control stream as (cycle, "ACK"/"NAK"/"CNP", qp, psn).
    fn ctrls(h: &Harness) -> Vec<(Cycle, &'static str, u16, u16)> {
        log::<Ctrl>(h, "ctrl")
            .into_iter()
            .map(|(c, m)| {
                assert_eq!((m.src, m.lg), (0, 0));
                let kind = if m.is_nak() {
                    "NAK"
                } else if m.is_ack() {
                    "ACK"
                } else {
                    assert!(m.is_cnp());
                    "CNP"
                };
                (c, kind, m.rh.qp().value(), m.rh.psn().value())
            })
            .collect()
    }

    /// The credit stream as (cycle, dst, vc, credits).
    fn credits(h: &Harness) -> Vec<(Cycle, ChipId, u8, u16)> {
        log::<CreditMsg>(h, "credit")
            .into_iter()
            .map(|(c, m)| {
                assert_eq!((m.src, m.lg), (0, 0));
                (c, m.dst, m.vc, m.credits)
            })
            .collect()
    }

    fn counter(h: &Harness, name: &str) -> u64 {
        h.sim().counter(&format!("dut.{name}")).unwrap()
    }

    /// Runs `f` with event skip on and off; both must see the same streams and counters.
    fn both_modes(f: impl Fn(bool) -> Harness) {
        let a = f(true);
        let b = f(false);
        assert_eq!(ctrls(&a), ctrls(&b));
        assert_eq!(credits(&a), credits(&b));
        let ca: Vec<_> = a.sim().counters().collect();
        let cb: Vec<_> = b.sim().counters().collect();
        assert_eq!(ca, cb);
    }

    /// psn == EPSN: accepted; one cumulative ACK `poll_cycle` after the arrival; 6 credits one
    /// cycle after it.
    #[test]
    fn in_order_accept_and_ack_after_poll() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            // Pushed at 0 → arrives at 1 → poll at 5; credit due at 2.
            drive(&mut h, &[(0, frame(3, 5, 0, 1344))], 50);
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 1)]);
            assert_eq!(credits(&h), vec![(2, 3, 1, 6)]);
            assert_eq!(h.peek::<Psn>("epsn"), psn(1));
            assert_eq!(h.peek::<Psn>("last_ack"), psn(1));
            assert_eq!(counter(&h, "rx_pkts"), 1);
            assert_eq!(counter(&h, "rx_payload_bytes"), 1344);
            assert_eq!(counter(&h, "acks_sent"), 1);
            assert_eq!(counter(&h, "credits_returned"), 6);
            assert_eq!(counter(&h, "first_byte_at"), 2);
            assert_eq!(counter(&h, "last_byte_at"), 2);
            h
        });
    }

    /// Four full frames (16 packets) inside one poll window → one ACK for all of them; one
    /// credit message per frame (6 + 6 + 6 + 1 = 19, summed per cycle).
    #[test]
    fn many_packets_merged_into_one_ack() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows: Vec<_> = (0..4).map(|k| (k, frame(3, 5, 4 * k as u16, 4096))).collect();
            drive(&mut h, &rows, 50);
            // Arrivals 1..=4; the poll scheduled by the first runs at 5 and sees all 16.
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 16)]);
            assert_eq!(
                credits(&h),
                vec![(2, 3, 1, 19), (3, 3, 1, 19), (4, 3, 1, 19), (5, 3, 1, 19)]
            );
            assert_eq!(counter(&h, "rx_pkts"), 16);
            assert_eq!(counter(&h, "acks_sent"), 1);
            assert_eq!(counter(&h, "rx_payload_bytes"), 4 * 4096);
            assert_eq!(counter(&h, "first_byte_at"), 2);
            assert_eq!(counter(&h, "last_byte_at"), 5);
            h
        });
    }

    /// More than MERGE_DEPTH pending: the first ACK covers exactly 64, the rest 4 ns later.
    #[test]
    fn merge_depth_limit_gives_a_second_ack() {
        both_modes(|skip| {
            let p = Params {
                poll_cycle: 20,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            // 17 frames × 4 packets = 68, arriving at 1..=17; poll at 21.
            let rows: Vec<_> = (0..17).map(|k| (k, frame(3, 5, 4 * k as u16, 4096))).collect();
            drive(&mut h, &rows, 100);
            assert_eq!(ctrls(&h), vec![(21, "ACK", 5, 64), (41, "ACK", 5, 68)]);
            h
        });
        both_modes(|skip| {
            let p = Params {
                merge_depth: 4,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            // 2 frames × 4 packets arriving at 1, 2 → ACK 4 at 5, ACK 8 at 9.
            let rows = [(0, frame(3, 5, 0, 4096)), (1, frame(3, 5, 4, 4096))];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 4), (9, "ACK", 5, 8)]);
            assert_eq!(counter(&h, "acks_sent"), 2);
            h
        });
    }

    /// A gap: one NAK with ack_psn = EPSN, one only until EPSN moves; every packet returns
    /// credit; the resend is accepted.
    #[test]
    fn gap_gives_one_nak_and_credit_still_returned() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 0, 1344)),
                (1, frame(3, 5, 2, 1344)), // gap: EPSN 1 → NAK 1
                (2, frame(3, 5, 3, 1344)), // same gap: no second NAK
                (3, frame(3, 5, 1, 1344)), // resend
                (4, frame(3, 5, 2, 1344)),
                (5, frame(3, 5, 3, 1344)),
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(2, "NAK", 5, 1), (5, "ACK", 5, 3), (10, "ACK", 5, 4)]);
            assert_eq!(credits(&h), (2..8).map(|c| (c, 3, 1, 6)).collect::<Vec<_>>());
            assert_eq!(counter(&h, "naks_sent"), 1);
            assert_eq!(counter(&h, "ooo_pkts"), 2);
            assert_eq!(counter(&h, "credits_returned"), 36);
            assert_eq!(counter(&h, "rx_payload_bytes"), 4 * 1344);
            assert_eq!(h.peek::<Psn>("epsn"), psn(4));
            h
        });
    }

    /// Once EPSN has moved, a new gap NAKs again.
    #[test]
    fn new_gap_after_progress_naks_again() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 1, 64)), // NAK 0
                (1, frame(3, 5, 0, 64)), // EPSN 1
                (2, frame(3, 5, 2, 64)), // EPSN 1 ≠ the NAKed 0 … but 2 is after 1: NAK 1
                (3, frame(3, 5, 3, 64)), // suppressed
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(1, "NAK", 5, 0), (3, "NAK", 5, 1), (6, "ACK", 5, 1)]);
            assert_eq!(counter(&h, "naks_sent"), 2);
            assert_eq!(counter(&h, "credits_returned"), 4);
            h
        });
    }

    /// A duplicate is dropped silently but returns its credit.
    #[test]
    fn duplicate_dropped_credit_returned() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 0, 1344)),
                (1, frame(3, 5, 1, 1344)),
                (2, frame(3, 5, 0, 1344)),  // duplicate
                (3, frame(3, 5, 4000, 64)), // far behind in ring order: duplicate
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 2)]);
            assert_eq!(
                credits(&h),
                vec![(2, 3, 1, 6), (3, 3, 1, 6), (4, 3, 1, 6), (5, 3, 1, 1)]
            );
            assert_eq!(counter(&h, "dup_pkts"), 2);
            assert_eq!(counter(&h, "naks_sent"), 0);
            assert_eq!(counter(&h, "rx_payload_bytes"), 2 * 1344);
            assert_eq!(counter(&h, "credits_returned"), 19);
            h
        });
    }

    /// A zero-byte packet (FACK): immediate ACK, no credit, no CNP; it covers what ACK MERGE
    /// holds, so the pending poll sends nothing.
    #[test]
    fn fack_immediate_ack_without_credit() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let mut fack = frame(3, 5, 1, 0);
            fack.ecn = Ecn::Ce;
            let rows = [
                (0, frame(3, 5, 0, 1344)), // arrives 1, poll at 5
                (1, fack),                 // arrives 2: ACK 2 at once
                (9, frame(3, 5, 9, 0)),    // FACK in a gap: ACK with EPSN 2, no NAK
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(ctrls(&h), vec![(2, "ACK", 5, 2), (10, "ACK", 5, 2)]);
            assert_eq!(credits(&h), vec![(2, 3, 1, 6)]);
            assert_eq!(counter(&h, "fack_acks"), 2);
            assert_eq!(counter(&h, "acks_sent"), 0);
            assert_eq!(counter(&h, "cnps_sent"), 0);
            assert_eq!(counter(&h, "rx_pkts"), 3);
            assert_eq!(counter(&h, "rx_payload_bytes"), 1344);
            assert_eq!(h.peek::<Psn>("last_ack"), psn(2));
            h
        });
    }

    /// CE-marked accepted packets: one CNP per (src, qp) per CNP_INTERVAL; dropped packets send
    /// none.
    #[test]
    fn cnp_interval() {
        both_modes(|skip| {
            let p = Params {
                cnp_interval: 10,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            let ce = |mut f: DataFrame| {
                f.ecn = Ecn::Ce;
                f
            };
            let rows = [
                (0, ce(frame(3, 5, 0, 4096))), // 1: CNP (4 CE packets, one CNP)
                (1, ce(frame(3, 5, 4, 64))),   // 2: 2 − 1 < 10: none
                (2, ce(frame(3, 6, 0, 64))),   // 3: another QP: CNP
                (3, ce(frame(3, 5, 0, 64))),   // 4: duplicate: none
                (9, ce(frame(3, 5, 5, 64))),   // 10: 10 − 1 = 9 < 10: none
                (10, ce(frame(3, 5, 6, 64))),  // 11: 11 − 1 = 10 ≥ 10: CNP
            ];
            drive(&mut h, &rows, 50);
            let cnps: Vec<_> = ctrls(&h)
                .into_iter()
                .filter(|c| c.1 == "CNP")
                .map(|c| (c.0, c.2))
                .collect();
            assert_eq!(cnps, vec![(1, 5), (3, 6), (11, 5)]);
            assert_eq!(counter(&h, "cnps_sent"), 3);
            h
        });
        // Default interval 2500: CE at 1 and 100 → one CNP; at 2501 → another.
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let ce = |mut f: DataFrame| {
                f.ecn = Ecn::Ce;
                f
            };
            let rows = [
                (0, ce(frame(3, 5, 0, 64))),
                (99, ce(frame(3, 5, 1, 64))),
                (2499, ce(frame(3, 5, 2, 64))),
                (2500, ce(frame(3, 5, 3, 64))),
            ];
            drive(&mut h, &rows, 2600);
            let cnps: Vec<_> = ctrls(&h).into_iter().filter(|c| c.1 == "CNP").map(|c| c.0).collect();
            assert_eq!(cnps, vec![1, 2501]);
            h
        });
    }

    /// EPSN wraps 4095 → 0: a frame carrying PSNs 4094, 4095, 0, 1 is accepted, the ACK says 2,
    /// 4090 is then a duplicate and 5 a gap.
    #[test]
    fn psn_wraps() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            // 1023 full frames (PSN 0..4091) and a 2-packet one (4092, 4093), arriving at 1..=1024;
            // polls every 4 cycles from 5, the last at 1025.
            let mut rows: Vec<_> = (0..1023u64).map(|k| (k, frame(3, 5, 4 * k as u16, 4096))).collect();
            rows.push((1023, frame(3, 5, 4092, 2688)));
            rows.push((1100, frame(3, 5, 4094, 4096)));
            rows.push((1200, frame(3, 5, 4090, 1344)));
            rows.push((1201, frame(3, 5, 5, 1344)));
            drive(&mut h, &rows, 1300);
            let c = ctrls(&h);
            assert_eq!(
                &c[c.len() - 3..],
                &[(1025, "ACK", 5, 4094), (1105, "ACK", 5, 2), (1202, "NAK", 5, 2)]
            );
            assert_eq!(counter(&h, "rx_pkts"), 4092 + 2 + 4 + 2);
            assert_eq!(counter(&h, "dup_pkts"), 1);
            assert_eq!(counter(&h, "naks_sent"), 1);
            assert_eq!(h.peek::<Psn>("epsn"), psn(2));
            h
        });
    }

    /// Credit returns: the packets of one arrival are summed per (src, vc) into one message;
    /// different senders / VCs get their own; one push per cycle, the rest queue in order.
    #[test]
    fn credit_sums_per_cycle_and_queue() {
        both_modes(|skip| {
            let p = Params {
                credit_return_delay: 3,
                credit_size: CreditSize::B64,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            let rows = [
                (0, frame(3, 5, 0, 4096)), // arrives 1, due 4: 22+22+22+2 = 68 to (3, vc 1)
                (1, frame(4, 6, 0, 1344)), // arrives 2, due 5: 22 to (4, vc 2)
                (2, frame(3, 7, 0, 100)),  // arrives 3, due 6: 3 to (3, vc 3)
            ];
            drive(&mut h, &rows, 50);
            assert_eq!(credits(&h), vec![(4, 3, 1, 68), (5, 4, 2, 22), (6, 3, 3, 3)]);
            assert_eq!(counter(&h, "credits_returned"), 93);
            h
        });
        // A credit sink that holds one message: the returns wait and leave in order.
        both_modes(|skip| {
            let mut h = bench_sink(&Params::default(), skip, 1);
            let rows = [
                (0, frame(3, 5, 0, 1344)),
                (1, frame(3, 5, 1, 1344)),
                (2, frame(3, 5, 2, 64)),
            ];
            drive(&mut h, &rows, 20);
            assert_eq!(credits(&h), vec![(2, 3, 1, 6)]);
            assert!(h.pop::<CreditMsg>("credit").is_some());
            h.step().unwrap();
            h.step().unwrap();
            assert!(h.pop::<CreditMsg>("credit").is_some());
            h.step().unwrap();
            h.step().unwrap();
            assert_eq!(credits(&h), vec![(2, 3, 1, 6), (21, 3, 1, 6), (23, 3, 1, 1)]);
            // The ctrl sink also held one: the ACK went at 5.
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 3)]);
            h
        });
    }

    /// Several messages for `ctrl` in one cycle leave one per cycle in generation order:
    /// arrivals (NAK, CNP) before the cycle's polls.
    #[test]
    fn ctrl_messages_queue_in_order() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let mut a = frame(3, 5, 0, 64);
            a.ecn = Ecn::Ce;
            let rows = [
                (0, frame(3, 6, 0, 64)), // arrives 1, poll for qp 6 at 5
                (3, frame(3, 6, 7, 64)), // arrives 4: NAK (qp 6, 1)
                (4, a),                  // arrives 5: CNP (qp 5), then the qp-6 poll's ACK
            ];
            drive(&mut h, &rows, 30);
            assert_eq!(
                ctrls(&h),
                vec![(4, "NAK", 6, 1), (5, "CNP", 5, 0), (6, "ACK", 6, 1), (9, "ACK", 5, 1)]
            );
            h
        });
        // Polls due in one cycle go in (src, qp) order, not in the order they were scheduled.
        both_modes(|skip| {
            let p = Params {
                merge_depth: 1,
                ..Params::default()
            };
            let mut h = bench(&p, skip);
            let rows = [
                (0, frame(3, 5, 0, 2688)), // arrives 1: 2 packets; poll 5 ACKs one, again at 9
                (4, frame(4, 6, 0, 64)),   // arrives 5 (before the poll): its poll at 9 too
            ];
            drive(&mut h, &rows, 30);
            // At 9 the (4, 6) poll was scheduled first, but (3, 5) goes first.
            assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 1), (9, "ACK", 5, 2), (10, "ACK", 6, 1)]);
            h
        });
    }

    /// Several (src, qp) windows are independent.
    #[test]
    fn windows_are_independent() {
        both_modes(|skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 0, 64)),
                (1, frame(4, 5, 0, 64)), // same QP, another sender: its own EPSN 0
                (2, frame(3, 9, 0, 64)),
                (3, frame(3, 5, 1, 64)),
            ];
            drive(&mut h, &rows, 30);
            let mut c = ctrls(&h);
            c.sort();
            assert_eq!(c, vec![(5, "ACK", 5, 2), (6, "ACK", 5, 1), (7, "ACK", 9, 1)]);
            let acks: Vec<_> = log::<Ctrl>(&h, "ctrl").iter().map(|(_, m)| m.dst).collect();
            assert_eq!(acks, vec![3, 4, 3]);
            assert_eq!(counter(&h, "naks_sent"), 0);
            h
        });
    }

    /// Frames for another LG or chip, and malformed frames, stop the run.
    #[test]
    fn misrouted_frame_is_a_violation() {
        for bad in [
            DataFrame {
                lg: 1,
                ..frame(3, 5, 0, 64)
            },
            DataFrame {
                dst: 2,
                ..frame(3, 5, 0, 64)
            },
            DataFrame {
                npkts: 0,
                ..frame(3, 5, 0, 64)
            },
            DataFrame {
                npkts: 2,
                ..frame(3, 5, 0, 64)
            },
        ] {
            let mut h = bench(&Params::default(), true);
            h.push("data", bad);
            h.step().unwrap();
            assert!(h.step().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bad_params_refused() {
        for p in [
            Params {
                merge_depth: 0,
                ..Params::default()
            },
            Params {
                poll_cycle: 0,
                ..Params::default()
            },
            Params {
                lg: 8,
                ..Params::default()
            },
        ] {
            let q = p.clone();
            let r = Harness::new("rclink_rx", ports(&p), Box::new(move |b| build(&q, b)), 1, 1);
            assert!(r.is_err());
        }
    }
}
