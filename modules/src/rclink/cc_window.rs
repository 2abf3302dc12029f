//! The per-QP window rate control of one link group's TX (seed 002 «Per-QP 速率控制», «流控参数»
//! `CC_WINDOW` / `length_thr`; seed 003 «PAXI 速率控制与交换机的关系», from RCLINK AFH SPEC 5.3):
//! a fixed time window and a byte threshold per QP, «这不是标准的 DCQCN 算法». The rate gate of
//! `rclink_tx` when `rate_control: window` (`chip.lgK.tx.cc_window`, in place of `tx.dcqcn`,
//! with the same ports), and the kind `cc_window` a module testbench drives through them.
//!
//! ```text
//!                          +-- cc_window (one LG) --------------------------------------------+
//!  cnp  ==(comb ×8)==>     | process 0: CNPs counted, reported (the CC interface ABN_INFO_VLD) | ==(comb ×8)==> ready : stream<RatePace> (never: no CNP cut)
//!  stream<RateCnp>         |   — no cut: software moves CC_WINDOW / length_thr                  | --(comb)--> steps : u64 (always 0)
//!  sent ==(comb ×1)==>     | process 1: per grant, flow (dst, qp):                              | ==> paced : stream<RatePace>
//!  stream<RateSent>        |   window w = now / cc_window; a new w clears used; used += bytes   |   masked until (w + 1) cc_window
//!  (the VC queues' grant)  |   used ≥ length_thr(qp): the QP's slots WAIT_CRD to the window end | --> qp, used, masked
//!                          +--------------------------------------------------------------------+
//! ```
//!
//! **The rule.** Windows are fixed: window w covers cycles [w·cc_window, (w+1)·cc_window), the
//! same for every QP (one free-running timer). Each QP counts the bytes its grants put on the
//! wire in the current window (`RateSent.bytes`, headers included, as the DCQCN gate paces); the
//! count starts again at the first grant of a later window. When it reaches `length_thr` (the
//! QP's, or the default) the QP is masked (`cc_mask` set): its slots go to WAIT_CRD and its
//! frames wait at their places in the VC queue — the VC queues' round holds the flow's head back
//! exactly as a paced DCQCN flow, counting `diag_rate_block` — until the window ends, when the
//! mask clears and the slots are WAIT_GRANT again. So a QP sends at most `length_thr` plus one
//! frame per window: rate ≈ length_thr / CC_WINDOW (the seed's «速率 = length_thr / CC_WINDOW»).
//!
//! **Timing.** A grant at n is counted at n; a mask it sets is seen by the round at n + 1 (on
//! `paced`, registered, as DCQCN's pacing) and holds to the window's end; the round at the end
//! cycle may send (the VC queues wake exactly then). `masked` shows the QPs masked now and drops
//! to 0 in the end cycle (the node wakes for it).
//!
//! Counters (in the TX's scope inside `rclink_tx`): `cc_masks` (times a QP reached its
//! threshold and was masked), `cc_cnps_reported` (CNPs that passed CNP MERGE and went to the CC
//! interface). Waves: `qp` and `used` (the QP that sent last, its bytes in the window), `masked`
//! (QPs masked now); the TX shows `tx.slot_fifo.wait_crd` (its WAIT_CRD slots).
//!
//! **Deviations and choices** (the seeds give the scheme, not its corner cases):
//! - A grant is never split at the threshold: the grant that reaches it goes whole, so a window
//!   may carry up to one frame (≤ 4 packets here) over `length_thr`; the next window starts
//!   from 0 (no carry of the excess).
//! - CNPs change nothing in hardware: the seed has the endpoint report them through the CC
//!   interface (ABN_INFO_VLD_I) to software or logic that sets CC_WINDOW / length_thr. That
//!   upper layer is not modelled; `cc_cnps_reported` counts what it would be told. Likewise the
//!   feedback to PAXI (CC_TYPE1_QP_EN_SET_O / CLR_O) is not modelled: PAXI keeps filling the
//!   slot FIFO while a QP is masked.
//! - Defaults: `cc_window` 4096 cycles (4.096 µs, the seed range's low end), `length_thr`
//!   1 638 400 B (400 B/ns × 4096 ns: line rate at seed 000's edge bandwidth, so nothing is
//!   held back until a threshold is set). The seed gives the ranges, not the values.
//! - The TYPE2 rate control (SET_TYPE2_RATE) is not modelled (as under DCQCN).

use hwsim_hw::{
    fast_map, Binder, BuildResult, CombOut, Component, CounterDecl, CounterId, Ctx, Cycle, FastMap, Out, PortDecl,
    StreamIn, StreamOut, Wake,
};
use hwsim_ports::{ChipId, QpId, RateCnp, RatePace, RateSent, UInt};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning). Inside `rclink_tx` they count in
/// the TX's scope.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "cc_masks",
        "events",
        "times a QP's bytes in its window reached length_thr: masked (WAIT_CRD) to the window's end",
    ),
    CounterDecl::new(
        "cc_cnps_reported",
        "messages",
        "CNPs that passed CNP MERGE, reported to the CC interface (no rate change in hardware)",
    ),
];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Shortest window, cycles (4.096 µs at 1 GHz).
pub const MIN_WINDOW: u64 = 4096;
/// Longest window, cycles (65.536 µs).
pub const MAX_WINDOW: u64 = 65_536;
/// Most per-QP thresholds.
pub const MAX_PER_QP: usize = 1024;

/// CNPs the core may hand over in one cycle (as the DCQCN gate's).
const CNPS_PER_CYCLE: u32 = crate::rclink::cnp_merge::CTRL_DEPTH;

/// One QP's own threshold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QpThreshold {
    /// The QP id (every destination's flow of that QP).
    pub qp: u16,
    /// Bytes per window for it, ≥ 1.
    pub length_thr: u64,
}

/// Parameters (seed 002 «流控参数»: CC_WINDOW 4.096–65.536 µs, length_thr per QP).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// CC_WINDOW, cycles (1 ns each), 4096..=65536: the time window every QP's bytes are
    /// counted in (4096: hwsim's default, the range's low end; the seed gives none).
    pub cc_window: u64,
    /// length_thr, bytes a QP may put on the wire per window (headers included), ≥ 1: rate =
    /// length_thr / cc_window. Default 1 638 400 (400 B/ns × 4096: line rate, nothing held).
    pub length_thr: u64,
    /// Per-QP thresholds overriding `length_thr` (the seed: «per-QP 配置»), at most 1024.
    pub per_qp: Vec<QpThreshold>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            cc_window: MIN_WINDOW,
            length_thr: 400 * MIN_WINDOW,
            per_qp: Vec::new(),
        }
    }
}

impl Params {
    /// Every parameter in its range; the error names the one that is not.
    pub fn check(&self) -> Result<(), String> {
        if !(MIN_WINDOW..=MAX_WINDOW).contains(&self.cc_window) {
            return Err(format!(
                "cc_window = {}: must be in {MIN_WINDOW}..={MAX_WINDOW} cycles (4.096–65.536 µs)",
                self.cc_window
            ));
        }
        if self.length_thr == 0 {
            return Err("length_thr = 0: must be ≥ 1 byte per window".into());
        }
        if self.per_qp.len() > MAX_PER_QP {
            return Err(format!("per_qp: {} entries, at most {MAX_PER_QP}", self.per_qp.len()));
        }
        for (k, q) in self.per_qp.iter().enumerate() {
            QpId::new(q.qp).map_err(|e| format!("per_qp.{k}.qp: {e}"))?;
            if q.length_thr == 0 {
                return Err(format!("per_qp.{k}.length_thr = 0: must be ≥ 1 byte per window"));
            }
            if self.per_qp[..k].iter().any(|o| o.qp == q.qp) {
                return Err(format!("per_qp.{k}: qp {} named twice", q.qp));
            }
        }
        Ok(())
    }

    /// The threshold of QP `qp`.
    fn threshold(&self, qp: QpId) -> u64 {
        self.per_qp
            .iter()
            .find(|q| q.qp == qp.value())
            .map_or(self.length_thr, |q| q.length_thr)
    }
}

/// Port list: the DCQCN gate's (the TX wires either).
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<RateCnp>("cnp", CNPS_PER_CYCLE)
            .doc("CNPs that passed CNP MERGE, per flow (dst, qp): counted and reported, no rate change"),
        PortDecl::comb_stream_in::<RateSent>("sent", 1)
            .process(1)
            .doc("the VC queues' grant in its cycle: flow (dst, qp) sent `bytes` on the wire"),
        PortDecl::comb_stream_out::<RatePace>("ready")
            .width(CNPS_PER_CYCLE)
            .doc("unused by the window scheme (no CNP cut): the DCQCN gate's port, never pushed"),
        PortDecl::comb_output::<u64>("steps").doc("unused by the window scheme: always 0"),
        PortDecl::stream_out::<RatePace>("paced")
            .process(1)
            .doc("a QP masked by its threshold: its flow may send again at the window's end (next round on)"),
        PortDecl::output::<QpId>("qp").process(1).doc("the QP that sent last"),
        PortDecl::output::<u64>("used")
            .process(1)
            .level()
            .doc("its bytes in the current window"),
        PortDecl::output::<UInt<11>>("masked")
            .process(1)
            .level()
            .doc("QPs masked now (cc_mask set: their slots WAIT_CRD)"),
    ]
}

/// One flow's window.
#[derive(Clone, Copy, Debug)]
struct Flow {
    key: (ChipId, QpId),
    /// The window its `used` counts in.
    window: u64,
    used: u64,
    thr: u64,
}

/// The window rate control of one LG.
pub struct CcWindow {
    p: Params,
    cnp: StreamIn<RateCnp>,
    sent: StreamIn<RateSent>,
    paced: StreamOut<RatePace>,
    qp: Out<QpId>,
    used: Out<u64>,
    masked: Out<UInt<11>>,
    masks: CounterId,
    cnps: CounterId,
    index: FastMap<(ChipId, u16), u32>,
    flows: Vec<Flow>,
    /// QPs masked in window `masked_window` (they all clear at its end).
    masked_count: u32,
    masked_window: u64,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    p.check()?;
    // The DCQCN gate's ports the window scheme has no use for: bound, never driven.
    let _ready: StreamOut<RatePace> = b.stream_out("ready")?;
    let _steps: CombOut<u64> = b.comb_output("steps")?;
    Ok(Box::new(CcWindow {
        p: p.clone(),
        cnp: b.stream_in("cnp")?,
        sent: b.stream_in("sent")?,
        paced: b.stream_out("paced")?,
        qp: b.output("qp")?,
        used: b.output("used")?,
        masked: b.output("masked")?,
        masks: b.counter("cc_masks"),
        cnps: b.counter("cc_cnps_reported"),
        index: fast_map(),
        flows: Vec::new(),
        masked_count: 0,
        masked_window: 0,
    }))
}

impl CcWindow {
    /// The flow (dst, qp), made on its first grant.
    fn flow(&mut self, dst: ChipId, qp: QpId) -> usize {
        if let Some(&f) = self.index.get(&(dst, qp.value())) {
            return f as usize;
        }
        let f = self.flows.len();
        self.index.insert((dst, qp.value()), f as u32);
        self.flows.push(Flow {
            key: (dst, qp),
            window: 0,
            used: 0,
            thr: self.p.threshold(qp),
        });
        f
    }

    /// The QPs masked at `now`: those of the current window (a mask clears at its window's end).
    fn masked_now(&self, now: Cycle) -> u32 {
        if self.masked_window == now / self.p.cc_window {
            self.masked_count
        } else {
            0
        }
    }
}

impl Component for CcWindow {
    /// Process 0: the CNPs of this cycle, counted (the CC interface's report).
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let mut n = 0;
        while let Some(m) = self.cnp.pop() {
            n += 1;
            if ctx.logs() {
                ctx.log(
                    "cnp",
                    format_args!(
                        "reported dst={} qp={} (window rate control: no cut)",
                        m.dst,
                        m.qp.value()
                    ),
                );
            }
        }
        if n > 0 {
            ctx.count(self.cnps, n);
        }
        Wake::OnInput
    }

    /// Process 1: this cycle's grant counted in its QP's window; a QP reaching its threshold is
    /// masked to the window's end. Then `masked` (also at a window's end, which wakes it).
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let w = now / self.p.cc_window;
        while let Some(m) = self.sent.pop() {
            let f = self.flow(m.dst, m.qp);
            let fl = &mut self.flows[f];
            if fl.window != w {
                fl.window = w;
                fl.used = 0;
            }
            let was_masked = fl.used >= fl.thr;
            fl.used += m.bytes as u64;
            self.qp.update(m.qp);
            self.used.update(fl.used);
            if !was_masked && fl.used >= fl.thr {
                let (dst, qp) = fl.key;
                let end = (w + 1) * self.p.cc_window;
                if !self.paced.can_push() {
                    ctx.violation("cc_window: `paced` full (the VC queues take it in the cycle after each grant)");
                } else {
                    self.paced.push(RatePace {
                        dst,
                        qp,
                        paced: true,
                        at: end,
                    });
                }
                if self.masked_window != w {
                    self.masked_window = w;
                    self.masked_count = 0;
                }
                self.masked_count += 1;
                ctx.count(self.masks, 1);
                if ctx.logs() {
                    ctx.log(
                        "cc_mask",
                        format_args!("set dst={dst} qp={} used={} until={end}", qp.value(), fl.used),
                    );
                }
            }
        }
        let masked = self.masked_now(now);
        self.masked.update(UInt::wrap(masked as u64));
        if masked > 0 {
            // The masks clear at the window's end: show it then.
            Wake::At((w + 1) * self.p.cc_window)
        } else {
            Wake::OnInput
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameters_are_checked_naming_the_one_out_of_range() {
        let mut p = Params::default();
        assert!(p.check().is_ok());
        p.cc_window = 4095;
        assert!(p.check().unwrap_err().contains("cc_window = 4095"));
        p.cc_window = 65_537;
        assert!(p.check().unwrap_err().contains("cc_window"));
        p.cc_window = 8192;
        p.length_thr = 0;
        assert!(p.check().unwrap_err().contains("length_thr = 0"));
        p.length_thr = 1;
        p.per_qp = vec![
            QpThreshold { qp: 3, length_thr: 5 },
            QpThreshold { qp: 3, length_thr: 6 },
        ];
        assert!(p.check().unwrap_err().contains("per_qp.1: qp 3 named twice"));
        p.per_qp = vec![QpThreshold {
            qp: 2000,
            length_thr: 5,
        }];
        assert!(p.check().unwrap_err().contains("per_qp.0.qp"));
    }

    #[test]
    fn a_qp_of_its_own_takes_its_own_threshold() {
        let p = Params {
            per_qp: vec![QpThreshold { qp: 7, length_thr: 99 }],
            ..Params::default()
        };
        assert_eq!(p.threshold(QpId::new(7).unwrap()), 99);
        assert_eq!(p.threshold(QpId::new(6).unwrap()), p.length_thr);
    }
}
