//! RC Link RX CNP generation of one link group (seed 000 «RX 侧设计» «ECN 检测与 CNP 生成»;
//! appendix C «RX 参数» CNP_INTERVAL_NS; SPEC.md «RX side»): an accepted data packet that
//! arrived marked CE makes a CNP back to its sender, at most one per `(src, qp)` window per
//! `cnp_interval` cycles. A netlist node of `rclink_rx` (`chip.lgK.rx.cnp_gen`), between the PSN
//! check, which marks, and the control queue, which sends.
//!
//! ```text
//!                         +---------------------------------------------+
//!  ce  ==(comb ×256)====> | last CNP cycle per (src, qp)                | ==(comb)==> cnp : stream<RxCtrl>
//!  stream<CeMark>         |  now − last ≥ cnp_interval (or never):      |   CNP {dst: src, rh: CNP(qp),
//!  (from psn_check)       |    last = now, CNP                          |        ts echoed}, to rx_ctrl
//!                         |  else held back                             | --> src, qp, held (signals)
//!                         +---------------------------------------------+
//! ```
//!
//! **Rule** (the PSN check's before it was cut out, to the cycle): per CE packet (a mark carries
//! an arrival's `pkts`), in the order marked, `now − last_cnp(src, qp) ≥ cnp_interval` or no CNP yet for the window → a CNP
//! `{src: chip, dst: mark.src, lg, rh: Rh::cnp(qp) with the mark's timestamp, wire_bytes:
//! cnp_bytes}` and `last_cnp = now`; otherwise nothing (the sender already heard of this
//! window's congestion within the interval). The PSN check marks only accepted data packets:
//! zero-byte packets (FACK) and dropped ones never lead to a CNP.
//!
//! **Latency**: 0 — a mark written at cycle n (the PSN check runs before this node in the same
//! cycle: the `ce` stream is combinational) makes its CNP at n, handed to the control queue at
//! n, which sends it at n if it is at the head (the sender sees it at n + 1).
//!
//! **Waves**: `src` / `qp` of the last mark taken, `held` (1: that mark fell inside the
//! interval and made no CNP); the marks themselves on `ce`. The CNPs themselves are on `cnp` (valid and fields) and, once
//! sent, on the RX's `ctrl`; `cnps_sent` is counted where they leave (the control queue).
//!
//! **Deviations and choices**:
//! - The interval is kept per `(src_chip, qp_id)` as the seed says, in one node per LG (so per
//!   LG too: a QP's CNPs come back on the LG its data took).
//! - In the control queue a CNP comes after the PSN check's own messages of the same cycle
//!   (NAK, FACK ACK, dup re-ACK) and before ACK MERGE's. In a system the RX cap hands over one
//!   packet per cycle, and one packet makes at most one of those, so this order never shows;
//!   a module testbench that drives a frame of several packets may see a CNP after a NAK the
//!   same frame made (the fused PSN check queued them in packet order).
//! - A mark of a window with no CNP for 2^64 cycles is not a case (`now − last` cannot wrap).

use hwsim_hw::{
    fast_map, Binder, BuildResult, Component, CounterDecl, Ctx, Cycle, FastMap, Out, PortDecl, StreamIn, StreamOut,
    Wake,
};
use hwsim_ports::{CeMark, ChipId, CtrlKind, LgId, QpId, Rh, RxCtrl};
use serde::{Deserialize, Serialize};

use super::rx_ctrl::{RxSource, CHECK_WRITES};

/// The counters this block registers: none (`cnps_sent` counts where CNPs leave, `rx_ctrl`).
pub const COUNTERS: &[CounterDecl] = &[];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters of one CNP generator (one per chip and LG); defaults from seed 000 appendix C.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// This chip's id (the `src` of every CNP).
    pub chip: ChipId,
    /// This instance's link group, 0..=7.
    pub lg: LgId,
    /// CNP_INTERVAL_NS: least cycles between CNPs of one (src, qp), default 2500 (the seed's spec
    /// text; its design document says 50000 — see «ECN 检测与 CNP 生成»).
    pub cnp_interval: u64,
    /// Wire bytes of a CNP, default 64.
    pub cnp_bytes: u16,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            chip: 0,
            lg: 0,
            cnp_interval: 2500,
            cnp_bytes: 64,
        }
    }
}

/// Port list: `ce` in, `cnp` out (both combinational), the state.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<CeMark>("ce", CHECK_WRITES)
            .doc("accepted data packets that arrived marked CE, from the PSN check in the same cycle"),
        PortDecl::comb_stream_out::<RxCtrl>("cnp")
            .width(CHECK_WRITES)
            .doc("CNPs made this cycle, to the control queue"),
        PortDecl::output::<ChipId>("src").doc("sender of the last CE mark taken"),
        PortDecl::output::<QpId>("qp").doc("QP of the last CE mark taken"),
        PortDecl::output::<bool>("held").doc("1: the last mark fell inside cnp_interval (no CNP)"),
    ]
}

/// The interval rule alone (no ports): the last CNP cycle of each window.
#[derive(Debug, Default)]
pub struct CnpRule {
    interval: u64,
    /// Cycle of the last CNP per window; an entry is made once per window, never per packet.
    last: FastMap<(ChipId, QpId), Cycle>,
}

impl CnpRule {
    /// A rule with `interval` cycles between CNPs of one window.
    pub fn new(interval: u64) -> CnpRule {
        CnpRule {
            interval,
            last: fast_map(),
        }
    }

    /// Whether a CE mark of window `(src, qp)` at `now` makes a CNP (and if so, it is the
    /// window's last from now on).
    pub fn mark(&mut self, now: Cycle, src: ChipId, qp: QpId) -> bool {
        let interval = self.interval;
        let last = self.last.entry((src, qp)).or_insert(Cycle::MAX);
        if *last == Cycle::MAX || now - *last >= interval {
            *last = now;
            true
        } else {
            false
        }
    }
}

/// The `cnp_gen` block.
struct CnpGen {
    source: RxSource,
    cnp_bytes: u16,
    rule: CnpRule,
    ce: StreamIn<CeMark>,
    cnp: StreamOut<RxCtrl>,
    src: Out<ChipId>,
    qp: Out<QpId>,
    held: Out<bool>,
}

/// Binds ports; refuses `lg` above 7.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.lg > 7 {
        return Err(format!("lg {} out of range 0..=7", p.lg));
    }
    Ok(Box::new(CnpGen {
        source: RxSource { chip: p.chip, lg: p.lg },
        cnp_bytes: p.cnp_bytes,
        rule: CnpRule::new(p.cnp_interval),
        ce: b.stream_in("ce")?,
        cnp: b.stream_out("cnp")?,
        src: b.output("src")?,
        qp: b.output("qp")?,
        held: b.output("held")?,
    }))
}

impl Component for CnpGen {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        while let Some(m) = self.ce.pop() {
            // Each CE packet of the arrival in turn (with an interval of 0 each makes a CNP).
            let mut sent = false;
            for _ in 0..m.pkts {
                if self.rule.mark(now, m.src, m.qp) {
                    sent = true;
                    let rh = Rh::cnp(m.qp).with_timestamp(m.ts);
                    self.cnp.push(RxCtrl {
                        kind: CtrlKind::Cnp,
                        ctrl: self.source.ctrl(m.src, rh, self.cnp_bytes),
                    });
                }
            }
            self.src.set(m.src);
            self.qp.set(m.qp);
            self.held.set(!sent);
        }
        // Nothing to do until the next mark: the interval is judged from `now` when it comes.
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qp(v: u16) -> QpId {
        QpId::new(v).unwrap()
    }

    /// One CNP per window per interval, windows apart, the boundary cycle included.
    #[test]
    fn one_cnp_per_window_per_interval() {
        let mut r = CnpRule::new(10);
        assert!(r.mark(1, 3, qp(5)), "the first mark of a window");
        assert!(!r.mark(2, 3, qp(5)), "inside the interval");
        assert!(r.mark(3, 3, qp(6)), "another QP");
        assert!(r.mark(3, 4, qp(5)), "another sender, same QP");
        assert!(!r.mark(10, 3, qp(5)), "10 − 1 = 9 < 10");
        assert!(r.mark(11, 3, qp(5)), "11 − 1 = 10 ≥ 10");
        assert!(!r.mark(20, 3, qp(5)), "measured from the last CNP, not the last mark");
        // Interval 0: every mark.
        let mut r = CnpRule::new(0);
        assert!(r.mark(5, 0, qp(0)) && r.mark(5, 0, qp(0)));
    }

    /// A first mark at cycle 0 is a CNP, and the next one waits the whole interval from 0.
    #[test]
    fn a_mark_at_cycle_zero_starts_the_interval() {
        let mut r = CnpRule::new(2500);
        assert!(r.mark(0, 1, qp(1)));
        assert!(!r.mark(2499, 1, qp(1)));
        assert!(r.mark(2500, 1, qp(1)));
    }
}
