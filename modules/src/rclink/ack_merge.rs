//! RC Link RX ACK MERGE of one link group: demand-driven cumulative ACKs (seed 000 «ACK MERGE
//! 汇聚»; appendix C «RX 参数» MERGE_DEPTH, POLL_CYCLE_NS; SPEC.md «RX side»). One netlist node:
//! alone in a module testbench, or `chip.lgK.rx.ack_merge` inside `rclink_rx`, between the PSN
//! check and the control queue (`rx_ctrl`), with both hand-offs in the same cycle.
//!
//! ```text
//!                                          +--------------------------------------+
//!  accepted : comb stream<RxAccepted> ==>  | per (src, qp): pending, EPSN         |==> ctrl : comb stream<RxCtrl> ×1024
//!  (from psn_check, this cycle's           | first pending -> poll at +poll_cycle |    cumulative ACKs of this
//!   arrivals)                              | poll -> ACK covering <= merge_depth  |    cycle's polls, to rx_ctrl
//!                                          | immediate_ack -> pending = 0         |
//!                                          | state: src, qp, pending, next_poll,  |--> (signals, below)
//!                                          |        last_ack                      |
//!                                          +--------------------------------------+
//! ```
//!
//! **Rules.** Demand-driven (no free-running poll): an accepted packet schedules a poll for its
//! `(src, qp)` at now + `poll_cycle` unless one is pending (the seed's `poll_scheduled`). A poll
//! at `t` sees every packet accepted up to and including cycle `t` and emits one cumulative ACK
//! `{src: chip, dst: src, lg, rh: Rh::ack(qp, ack_psn), wire_bytes: ack_bytes}` covering at most
//! `merge_depth` pending packets. The pending packets are always the last accepted ones, i.e. the
//! PSNs just before EPSN, so a count is enough: `ack_psn = EPSN − (pending − covered)`, which is
//! max contiguous PSN + 1 when everything is covered. If packets remain, the next poll is at
//! `t + poll_cycle`. A poll that finds nothing pending sends nothing («pending_count > 0»).
//! Polls due in the same cycle run in `(src, qp)` order. An arrival the PSN check already
//! answered with a cumulative ACK (`immediate_ack`: FACK, dup re-ACK) clears pending. The ACK's
//! RH timestamp echoes that of the last packet accepted in its window (seed 002: the RTT is
//! measured through the RH Timestamp), so the sender can time the round trip.
//!
//! **State on the waves** (true widths): `src` (16) / `qp` (10) of the window last touched (by
//! an arrival or a poll), its `pending` count (13: ≤ 4095 packets can be outstanding on a 12-bit
//! PSN ring; the trace saturates at 8191), `next_poll` (64: the cycle of the earliest scheduled
//! poll, 0 = none), `last_ack` (12: `ack_psn` of the last ACK this module generated). In
//! `rclink_rx` the same signals appear as `ack_merge.*`.
//!
//! **Latency**: the ACK is made at arrival + `poll_cycle` for the first packet of a merge
//! window and handed to the control queue in that cycle (it leaves there in generation order,
//! one per cycle). The arrivals come in the cycle the PSN check saw them, so the PSN check →
//! ACK MERGE → control queue chain has the timing of the RTL, no register between the modules.
//!
//! **Counters**: none of its own; the control queue counts the ACKs it sends (`acks_sent`).
//!
//! **Deviations and choices**: the seed's RX keeps `max_contiguous_psn` and `pending_count`;
//! here EPSN comes with each [`RxAccepted`] (so this module needs no PSN check of its own), and
//! the poll is per `(src, qp)` rather than the hardware's 4 QP groups per round (seed 002): the
//! group round-robin would only change which window's ACK leaves first in a cycle.

use std::collections::{BTreeMap, VecDeque};

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{ChipId, LgId, PktCount, Psn, QpId, Rh, RxAccepted, RxCtrl};
use serde::{Deserialize, Serialize};

use super::rx_ctrl::{hand_over, CtrlKind, CtrlQueue, RxSource, CHECK_WRITES, MERGE_WRITES};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters of one ACK MERGE (one per chip and LG); defaults from seed 000 appendix C.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (the `src` of every ACK).
    pub chip: ChipId,
    /// This instance's link group, 0..=7.
    pub lg: LgId,
    /// MERGE_DEPTH: most packets one cumulative ACK covers (≥ 1), default 64.
    pub merge_depth: u32,
    /// POLL_CYCLE_NS: cycles from the first pending packet to its poll (≥ 1), default 4.
    pub poll_cycle: u64,
    /// Wire bytes of an ACK (one header), default 50.
    pub ack_bytes: u16,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            merge_depth: 64,
            poll_cycle: 4,
            ack_bytes: 50,
        }
    }
}

/// ACK MERGE state of one `(src, qp)` window.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    /// EPSN as of the last accepted arrival.
    epsn: Psn,
    /// Accepted packets not yet covered by an ACK: the PSNs just before `epsn`.
    pending: u32,
    /// Whether a poll is scheduled (the seed's `poll_scheduled`).
    poll_scheduled: bool,
    /// RH timestamp of the last accepted arrival: the merged ACK echoes it.
    ts: u32,
}

/// The ACK MERGE core: windows and scheduled polls; no ports. `rclink_rx` and the `ack_merge`
/// block both drive it.
pub struct AckMerge {
    src: RxSource,
    merge_depth: u32,
    poll_cycle: u64,
    ack_bytes: u16,
    /// Windows by (src, qp); an entry is created once per window, never per packet.
    windows: BTreeMap<(ChipId, QpId), Window>,
    /// Scheduled polls (due cycle, window), due cycles non-decreasing.
    polls: VecDeque<(Cycle, (ChipId, QpId))>,
    /// This cycle's due polls, sorted by window (reused, no allocation per cycle).
    due_polls: Vec<(ChipId, QpId)>,
    /// The window last touched, and the last ACK generated (shown on the waves).
    last: Option<(ChipId, QpId)>,
    last_ack: Psn,
}

impl AckMerge {
    /// A core with nothing pending; refuses `merge_depth` 0, `poll_cycle` 0 (a poll must come
    /// after the packet that schedules it) and `lg` above 7.
    pub fn new(p: &Params) -> Result<AckMerge, String> {
        if p.merge_depth == 0 {
            return Err("merge_depth must be ≥ 1".into());
        }
        if p.poll_cycle == 0 {
            return Err("poll_cycle must be ≥ 1".into());
        }
        if p.lg > 7 {
            return Err(format!("lg {} out of range 0..=7", p.lg));
        }
        Ok(AckMerge {
            src: RxSource { chip: p.chip, lg: p.lg },
            merge_depth: p.merge_depth,
            poll_cycle: p.poll_cycle,
            ack_bytes: p.ack_bytes,
            windows: BTreeMap::new(),
            polls: VecDeque::with_capacity(64),
            due_polls: Vec::with_capacity(64),
            last: None,
            last_ack: Psn::ZERO,
        })
    }

    /// Takes the PSN check's outcome for one arrival at `now`.
    pub fn accept(&mut self, now: Cycle, m: &RxAccepted) {
        let key = (m.src, m.qp);
        let w = self.windows.entry(key).or_default();
        w.epsn = m.epsn;
        if m.npkts > 0 {
            w.ts = m.ts;
        }
        // Saturating: a stimulus can pile up any count; the hardware counter would stick too.
        w.pending = w.pending.saturating_add(u32::from(m.npkts));
        if m.immediate_ack {
            // The PSN check's ACK carried EPSN: everything pending is covered. A scheduled poll
            // stays and will find nothing to send.
            w.pending = 0;
        } else if m.npkts > 0 && !w.poll_scheduled {
            w.poll_scheduled = true;
            self.polls.push_back((now + self.poll_cycle, key));
        }
        self.last = Some(key);
    }

    /// Runs the polls due at or before `now`; their ACKs go into `ctrl`.
    pub fn poll(&mut self, now: Cycle, ctrl: &mut CtrlQueue) {
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
        for &key in &self.due_polls {
            let w = self.windows.get_mut(&key).expect("a poll belongs to a window");
            let covered = w.pending.min(self.merge_depth);
            if covered > 0 {
                let left = w.pending - covered;
                w.pending = left;
                let ack_psn = w.epsn.wrapping_sub((left % u32::from(Psn::MODULUS)) as u16);
                self.last_ack = ack_psn;
                ctrl.push(
                    CtrlKind::Ack,
                    self.src
                        .ctrl(key.0, Rh::ack(key.1, ack_psn).with_timestamp(w.ts), self.ack_bytes),
                );
            }
            w.poll_scheduled = w.pending > 0;
            if w.poll_scheduled {
                // Polls run exactly at their due cycle (we wake for it), so t == now and the
                // queue stays sorted.
                self.polls.push_back((now + self.poll_cycle, key));
            }
            self.last = Some(key);
        }
    }

    /// The earliest scheduled poll.
    pub fn next_poll(&self) -> Option<Cycle> {
        self.polls.front().map(|(t, _)| *t)
    }

    /// Packets pending in the window `(src, qp)`.
    pub fn pending(&self, src: ChipId, qp: QpId) -> u32 {
        self.windows.get(&(src, qp)).map_or(0, |w| w.pending)
    }
}

/// ACK MERGE's state on the waves: signals named `{prefix}src` …; `prefix` is `""` for the
/// standalone block and `"ack_merge."` inside `rclink_rx`.
pub struct AckMergeView {
    src: Out<ChipId>,
    qp: Out<QpId>,
    pending: Out<PktCount>,
    next_poll: Out<u64>,
    last_ack: Out<Psn>,
}

impl AckMergeView {
    /// The view's output ports.
    pub fn ports(prefix: &str) -> Vec<PortDecl> {
        vec![
            PortDecl::output::<ChipId>(&format!("{prefix}src")).doc("sender of the window last touched"),
            PortDecl::output::<QpId>(&format!("{prefix}qp")).doc("QP of the window last touched"),
            PortDecl::output::<PktCount>(&format!("{prefix}pending")).doc("that window's packets awaiting an ACK"),
            PortDecl::output::<u64>(&format!("{prefix}next_poll"))
                .doc("cycle of the earliest scheduled poll (0: none)"),
            PortDecl::output::<Psn>(&format!("{prefix}last_ack")).doc("ack_psn of the last ACK generated"),
        ]
    }

    /// Binds the view's ports.
    pub fn bind(prefix: &str, b: &mut Binder) -> Result<AckMergeView, String> {
        Ok(AckMergeView {
            src: b.output(&format!("{prefix}src"))?,
            qp: b.output(&format!("{prefix}qp"))?,
            pending: b.output(&format!("{prefix}pending"))?,
            next_poll: b.output(&format!("{prefix}next_poll"))?,
            last_ack: b.output(&format!("{prefix}last_ack"))?,
        })
    }

    /// Shows the core's state (a function of the state only, so ticking more often changes
    /// nothing).
    pub fn show(&self, core: &AckMerge) {
        if let Some((src, qp)) = core.last {
            self.src.set(src);
            self.qp.set(qp);
            self.pending.set(PktCount(core.pending(src, qp)));
        }
        self.next_poll.set(core.next_poll().unwrap_or(0));
        self.last_ack.set(core.last_ack);
    }
}

/// Port list: `accepted` in, `ctrl` and the state out (both hand-offs in the same cycle).
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::comb_stream_in::<RxAccepted>("accepted", CHECK_WRITES)
            .doc("the PSN check's accepted packets and immediate ACKs, in the cycle of the arrival"),
        PortDecl::comb_stream_out::<RxCtrl>("ctrl")
            .width(MERGE_WRITES)
            .doc("the cumulative ACKs of this cycle's polls, to the control queue"),
    ];
    v.extend(AckMergeView::ports(""));
    v
}

/// The `ack_merge` block (alone in a module testbench, or `chip.lgK.rx.ack_merge` in a system).
struct AckMergeBlock {
    core: AckMerge,
    accepted: StreamIn<RxAccepted>,
    ctrl_q: CtrlQueue,
    ctrl: StreamOut<RxCtrl>,
    view: AckMergeView,
}

/// Binds ports; refuses `merge_depth` 0, `poll_cycle` 0 and `lg` above 7.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    Ok(Box::new(AckMergeBlock {
        core: AckMerge::new(p)?,
        accepted: b.stream_in("accepted")?,
        ctrl_q: CtrlQueue::default(),
        ctrl: b.stream_out("ctrl")?,
        view: AckMergeView::bind("", b)?,
    }))
}

impl Component for AckMergeBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // This cycle's arrivals first (the PSN check ticked before us), then the polls due
        // now, which see them; the ACKs made go to the control queue in this cycle.
        while let Some(m) = self.accepted.pop() {
            self.core.accept(now, &m);
        }
        self.core.poll(now, &mut self.ctrl_q);
        hand_over(&mut self.ctrl_q, &self.ctrl);
        self.view.show(&self.core);
        Wake::earliest(self.core.next_poll())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rclink::rx_test::*;
    use hwsim_hw::Harness;

    fn acc(src: ChipId, q: u16, epsn: u16, npkts: u8) -> RxAccepted {
        RxAccepted {
            src,
            qp: qp(q),
            epsn: psn(epsn),
            npkts,
            immediate_ack: false,
            ts: 0,
        }
    }

    fn acks(q: &mut CtrlQueue) -> Vec<(u16, u16)> {
        std::iter::from_fn(|| q.pop())
            .map(|(k, m)| {
                assert_eq!(k, CtrlKind::Ack);
                (m.rh.qp().value(), m.rh.psn().value())
            })
            .collect()
    }

    fn bench(p: &Params, skip: bool) -> Harness {
        let q = p.clone();
        let mut h = Harness::new("ack_merge", ports(p), Box::new(move |b| build(&q, b)), 1, 256).unwrap();
        h.sim_mut().set_skip(skip);
        h.sim().net("dut.ctrl").unwrap().enable_log();
        h
    }

    // ---- the core alone ----

    #[test]
    fn core_polls_poll_cycle_after_the_first_packet() {
        let mut m = AckMerge::new(&Params::default()).unwrap();
        let mut q = CtrlQueue::default();
        m.accept(1, &acc(3, 5, 4, 4));
        m.accept(3, &acc(3, 5, 8, 4));
        assert_eq!(m.next_poll(), Some(5), "the second arrival schedules nothing");
        m.poll(4, &mut q);
        assert!(q.is_empty());
        m.accept(5, &acc(3, 5, 9, 1)); // in the poll's cycle: covered
        m.poll(5, &mut q);
        assert_eq!(acks(&mut q), vec![(5, 9)]);
        assert_eq!((m.next_poll(), m.pending(3, qp(5))), (None, 0));
    }

    #[test]
    fn core_merge_depth_splits_and_polls_again() {
        let mut m = AckMerge::new(&Params {
            poll_cycle: 20,
            ..Params::default()
        })
        .unwrap();
        let mut q = CtrlQueue::default();
        // 17 arrivals of 4 packets at 1..=17: 68 pending at the poll (21), MERGE_DEPTH 64.
        for k in 0..17u16 {
            m.accept(1 + u64::from(k), &acc(3, 5, 4 * (k + 1), 4));
        }
        m.poll(21, &mut q);
        assert_eq!(acks(&mut q), vec![(5, 64)]);
        assert_eq!((m.pending(3, qp(5)), m.next_poll()), (4, Some(41)));
        m.poll(41, &mut q);
        assert_eq!(acks(&mut q), vec![(5, 68)]);
        assert_eq!(m.next_poll(), None);
    }

    #[test]
    fn core_immediate_ack_clears_pending() {
        let mut m = AckMerge::new(&Params::default()).unwrap();
        let mut q = CtrlQueue::default();
        m.accept(1, &acc(3, 5, 1, 1));
        m.accept(
            2,
            &RxAccepted {
                immediate_ack: true,
                ..acc(3, 5, 2, 0)
            },
        );
        m.poll(5, &mut q);
        assert!(q.is_empty(), "the FACK's ACK covered the pending packet");
        assert_eq!(m.next_poll(), None);
    }

    #[test]
    fn core_same_cycle_polls_in_window_order_and_psn_wraps() {
        let mut m = AckMerge::new(&Params::default()).unwrap();
        let mut q = CtrlQueue::default();
        m.accept(1, &acc(4, 6, 1, 1));
        m.accept(1, &acc(3, 9, 2, 4)); // PSNs 4094, 4095, 0, 1
        m.poll(5, &mut q);
        assert_eq!(acks(&mut q), vec![(9, 2), (6, 1)]);
    }

    /// Spoils one parameter.
    type Spoil = fn(&mut Params);

    /// Each refusal names its parameter.
    #[test]
    fn bad_params_refused() {
        let cases: [(Spoil, &str); 3] = [
            (|p| p.merge_depth = 0, "merge_depth"),
            (|p| p.poll_cycle = 0, "poll_cycle"),
            (|p| p.lg = 8, "lg 8"),
        ];
        for (spoil, name) in cases {
            let mut p = Params::default();
            spoil(&mut p);
            let e = AckMerge::new(&p).err().unwrap();
            assert!(e.starts_with(name), "{e}");
        }
    }

    // ---- the block ----

    /// Arrivals at 1 and 2 (the stimulus pushed at 0 and 1): one ACK at 5; the view shows the
    /// pending count and the poll time in between.
    #[test]
    fn block_acks_at_the_poll() {
        both_modes(
            |skip| {
                let mut h = bench(&Params::default(), skip);
                // Written (and seen: a combinational input) at 1 and 2: the poll at 1 + 4.
                let rows = [(1, acc(3, 5, 4, 4)), (2, acc(3, 5, 8, 4))];
                drive_port(&mut h, "accepted", &rows, 3);
                assert_eq!(h.peek::<PktCount>("pending"), PktCount(8));
                assert_eq!(h.peek::<u64>("next_poll"), 5);
                drive_port::<RxAccepted>(&mut h, "accepted", &[], 30);
                assert_eq!(ctrls(&h), vec![(5, "ACK", 5, 8)]);
                assert_eq!(h.peek::<PktCount>("pending"), PktCount(0));
                assert_eq!(h.peek::<u64>("next_poll"), 0);
                assert_eq!(h.peek::<Psn>("last_ack"), psn(8));
                h
            },
            &["ctrl"],
        );
    }
}
