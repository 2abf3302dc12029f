//! CNP MERGE at the CNP receiver (the data sender): a QPID buffer of depth 8 and a timer
//! threshold that filter repeated CNPs of one QP before they reach the rate gate (seed 002
//! «CNP MERGE (拥塞通知过滤)», key parameters «CNP MERGE 深度 8», «CNP MERGE 时间窗口
//! TIMER_THR_I»; seed 003 «CNP MERGE»). A netlist node of `rclink_tx` (`chip.lgK.tx.cnp_merge`):
//! the TX's control input, in front of the core, which cuts a flow's DCQCN rate for each CNP
//! that passes.
//!
//! ```text
//!                      +---------------------------------------------+
//!  ctrl ==(cap 8)==>   | ACK / NAK: passed through                    | ==(comb ×8)==> out : stream<TxCtrl>
//!  stream<Ctrl>        | CNP: QPID buffer, 8 entries (qp, last pass)  |    every message, in order,
//!  (ACK / NAK / CNP    |  seen within timer_thr → filtered            |    `filtered` set on a CNP
//!   from the receiver) |  else passed, recorded (oldest replaced)     |    the merge dropped
//!                      |                                              | --> entries : UInt<7>
//!                      +---------------------------------------------+ --> last_qp : QpId
//! ```
//!
//! **Rule.** A CNP for a QP that the buffer holds, recorded less than `timer_thr` cycles ago, is
//! filtered (`cnp_filtered`). Otherwise it is passed on (`cnp_passed`) and recorded: the QP's
//! entry gets time `now`, or, for a new QP, a free entry — the oldest entry (earliest recorded)
//! is replaced when all 8 are in use. The buffer keys on the QP id as the hardware's QPID buffer
//! does; CNPs from different destinations for one QP id share an entry (a per-LG buffer sees one
//! peer per QP in a P2P fabric). With `enabled: false` (the TX's `rate_control: false`: no rate
//! to protect) every CNP passes unrecorded and uncounted.
//!
//! Every message leaves on `out`, the filtered CNPs too (marked): the core still counts them as
//! received (`cnp_received`) and returns their ACK-VC credit, as the hardware's ACK buffer frees
//! a CNP's place whatever the merge decides.
//!
//! **Latency.** 0: a message visible on `ctrl` at n is decided at n and on `out` at n, for the
//! core in the same cycle (`out` is combinational). Counters: `cnp_passed`, `cnp_filtered`.
//!
//! Deviations: the seeds give no default for TIMER_THR_I; hwsim uses 2500 ns, the RX's CNP
//! interval (so at most one CNP per QP per interval reaches the rate gate), as a parameter. At
//! that value it filters nothing an RX with the same CNP interval sends (one CNP per (src, QP)
//! per LG per 2.5 µs); `tb/acceptance/a2_incast_ecn.yaml` sets 10 µs, the drain time of its hot
//! queue, and the merge filters repeats there. A CNP for a flow that never sent on this LG is
//! decided (and recorded) like any other, though the core has no rate to cut for it (before
//! this node was cut out of the core, such a CNP bypassed the merge; no system sends one: a CNP
//! answers data).

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{Ctrl, Opcode, QpId, TxCtrl, UInt};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "cnp_passed",
        "messages",
        "CNPs passed on to the rate gate by CNP MERGE (QP not seen within timer_thr)",
    ),
    CounterDecl::new(
        "cnp_filtered",
        "messages",
        "CNPs filtered by CNP MERGE: their QP passed one less than timer_thr cycles ago",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// QPID buffer entries (8), 1..=64.
    pub depth: u32,
    /// TIMER_THR: a repeat within this many cycles is filtered (2500), ≥ 1.
    pub timer_thr: u64,
    /// Whether CNPs are filtered at all (true); inside `rclink_tx` also off when the TX's
    /// `rate_control` is.
    pub enabled: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            depth: 8,
            timer_thr: 2500,
            enabled: true,
        }
    }
}

/// Most control messages one cycle hands on: the `ctrl` stream's capacity.
pub const CTRL_DEPTH: u32 = 8;

/// The filter (no ports).
#[derive(Clone, Debug)]
pub struct CnpMerge {
    depth: usize,
    timer_thr: u64,
    /// (qp, cycle recorded).
    entries: Vec<(QpId, Cycle)>,
}

impl CnpMerge {
    /// A filter; the error names the parameter.
    pub fn new(p: &Params) -> Result<CnpMerge, String> {
        if !(1..=64).contains(&p.depth) {
            return Err(format!("depth = {}: must be in 1..=64", p.depth));
        }
        if p.timer_thr == 0 {
            return Err("timer_thr = 0: must be ≥ 1 cycle".into());
        }
        Ok(CnpMerge {
            depth: p.depth as usize,
            timer_thr: p.timer_thr,
            entries: Vec::with_capacity(p.depth as usize),
        })
    }

    /// Whether a CNP for `qp` at `now` passes (and is recorded) or is filtered.
    pub fn pass(&mut self, qp: QpId, now: Cycle) -> bool {
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == qp) {
            if now - e.1 < self.timer_thr {
                return false;
            }
            e.1 = now;
            return true;
        }
        if self.entries.len() < self.depth {
            self.entries.push((qp, now));
        } else {
            // Replace the oldest record (ties: the lowest slot).
            let oldest = (0..self.entries.len())
                .min_by_key(|&k| self.entries[k].1)
                .expect("depth ≥ 1");
            self.entries[oldest] = (qp, now);
        }
        true
    }

    /// Entries in use.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// Whether no QP is recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Port list: `ctrl` in, `out` (combinational) out, the buffer's state.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<Ctrl>("ctrl", CTRL_DEPTH).doc("ACK / NAK / CNP back from the receiver (src = our dst)"),
        PortDecl::comb_stream_out::<TxCtrl>("out")
            .width(CTRL_DEPTH)
            .doc("every message taken this cycle, in order, a CNP the merge filtered marked `filtered`"),
        PortDecl::output::<UInt<7>>("entries")
            .level()
            .doc("QPID buffer entries in use"),
        PortDecl::output::<QpId>("last_qp").doc("QP of the last CNP decided"),
    ]
}

/// The `cnp_merge` block (alone in a module testbench, or `chip.lgK.tx.cnp_merge`).
pub struct CnpMergeBlock {
    m: CnpMerge,
    enabled: bool,
    input: StreamIn<Ctrl>,
    out: StreamOut<TxCtrl>,
    entries: Out<UInt<7>>,
    last_qp: Out<QpId>,
    c_passed: CounterId,
    c_filtered: CounterId,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    Ok(Box::new(CnpMergeBlock {
        m: CnpMerge::new(p)?,
        enabled: p.enabled,
        input: b.stream_in("ctrl")?,
        out: b.stream_out("out")?,
        entries: b.output("entries")?,
        last_qp: b.output("last_qp")?,
        c_passed: b.counter("cnp_passed"),
        c_filtered: b.counter("cnp_filtered"),
    }))
}

impl Component for CnpMergeBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        while let Some(c) = self.input.pop() {
            let mut filtered = false;
            if self.enabled && c.rh.opcode() == Opcode::Cnp {
                let qp = c.rh.qp();
                self.last_qp.set(qp);
                filtered = !self.m.pass(qp, now);
                ctx.count(if filtered { self.c_filtered } else { self.c_passed }, 1);
            }
            self.out.push(TxCtrl { ctrl: c, filtered });
        }
        self.entries.update(UInt::wrap(self.m.len() as u64));
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qp(v: u16) -> QpId {
        QpId::new(v).unwrap()
    }

    #[test]
    fn repeats_within_the_threshold_are_filtered() {
        let mut m = CnpMerge::new(&Params::default()).unwrap();
        assert!(m.pass(qp(1), 100));
        assert!(!m.pass(qp(1), 2599), "2499 cycles later: filtered");
        assert!(m.pass(qp(1), 2600), "2500 later: passed and re-recorded");
        assert!(!m.pass(qp(1), 5099));
        assert!(m.pass(qp(2), 5099), "another QP");
    }

    #[test]
    fn a_full_buffer_replaces_its_oldest_entry() {
        let mut m = CnpMerge::new(&Params::default()).unwrap();
        for q in 0..8 {
            assert!(m.pass(qp(q), 10 + q as u64));
        }
        assert_eq!(m.len(), 8);
        // QP 8 evicts QP 0 (recorded at 10): a QP 0 CNP then passes although it is recent.
        assert!(m.pass(qp(8), 20));
        assert!(m.pass(qp(0), 21));
        // QP 1 was the oldest left and is now gone too.
        assert!(m.pass(qp(1), 22));
        assert!(!m.pass(qp(7), 23), "QP 7 is still recorded");
        assert!(CnpMerge::new(&Params {
            depth: 0,
            ..Default::default()
        })
        .is_err());
    }
}
