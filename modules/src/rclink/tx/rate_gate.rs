//! The TX's DCQCN rate gate (seed 000 «DCQCN 拥塞控制», «TX 速率限制 (pacing)», appendix C
//! «DCQCN 参数»): a [`Dcqcn`] state per flow behind CNP MERGE (the `cnp_merge` node), the
//! flows' recovery timers and the pacing wake-up; the `tx.dcqcn.*` waves, the DCQCN gauges and
//! the per-flow counters of `report_flows`.

use hwsim_hw::{Binder, CounterId, Ctx, Cycle, Out, PortDecl};
use hwsim_ports::{ChipId, QpId, UInt};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{FlowKey, Params, RcLinkTx};
use crate::rclink::dcqcn::{self, Dcqcn};
use crate::rclink::slot_fifo::SlotFifo;

/// The DCQCN rate gate (seed 000 «DCQCN 拥塞控制», «TX 速率限制 (pacing)»): a [`Dcqcn`] state per
/// flow (dst, qp) of this LG (CNP MERGE, a node of its own, in front of it), the flows' recovery timers, and the
/// earliest cycle a rate-blocked flow may send again — the arbiter's exact wake-up, no polling.
pub struct RateGate {
    p: dcqcn::Params,
    pub(super) enabled: bool,
    /// By slot-FIFO flow index.
    flows: Vec<Dcqcn>,
    /// (expiry, flow) per armed timer; stale entries (the flow's timer moved) are skipped.
    timers: BinaryHeap<Reverse<(Cycle, u32)>>,
    /// The earliest ready time of a flow the last round found rate-blocked (in a VC the
    /// arbiter looked at).
    pub(super) wake: std::cell::Cell<Option<Cycle>>,
    /// The flow whose state changed last (shown on the waves).
    shown: Option<u32>,
    /// Recoveries to line rate (CONGESTED → RECOVERED) and the cycle of the last one.
    recoveries: u64,
    last_recovery: Cycle,
    /// The lowest rate any flow was cut to, bytes/ns.
    rate_min: f64,
    /// Per flow (by slot-FIFO flow index): cuts, the cycle it last got back to line rate, the
    /// lowest rate it was cut to.
    stats: Vec<FlowStats>,
}

/// What the per-flow counters of `report_flows` show beyond the [`Dcqcn`] state.
#[derive(Clone, Copy, Debug)]
struct FlowStats {
    cuts: u64,
    recovered_at: Cycle,
    rate_min: f64,
}

impl RateGate {
    pub(super) fn new(p: &Params) -> Result<RateGate, String> {
        p.dcqcn.check()?;
        Ok(RateGate {
            p: p.dcqcn.clone(),
            enabled: p.rate_control,
            flows: Vec::new(),
            timers: BinaryHeap::new(),
            wake: std::cell::Cell::new(None),
            shown: None,
            recoveries: 0,
            last_recovery: 0,
            rate_min: p.dcqcn.line_rate,
            stats: Vec::new(),
        })
    }
    /// A new flow at line rate.
    pub(super) fn add_flow(&mut self) {
        self.flows.push(Dcqcn::new(&self.p));
        self.stats.push(FlowStats {
            cuts: 0,
            recovered_at: 0,
            rate_min: self.p.line_rate,
        });
    }
    /// When flow `flow`, paced by its rate, may send again, if that is after `now` (None: it
    /// may send now).
    pub fn blocked_until(&self, flow: usize, now: Cycle) -> Option<Cycle> {
        self.flows.get(flow).and_then(|d| d.ready_at()).filter(|&t| t > now)
    }
    /// Flow `flow`'s DCQCN rate R_C now (B/ns), if it has one (for the event log).
    pub(super) fn flow_rate(&self, flow: usize) -> Option<f64> {
        self.flows.get(flow).map(|d| d.rate)
    }
    /// A CNP for flow `flow` at `now` that passed CNP MERGE: DCQCN's cut.
    pub(super) fn on_cnp(&mut self, flow: usize, now: Cycle) {
        let d = &mut self.flows[flow];
        let armed = d.timer_at;
        d.on_cnp(&self.p, now);
        self.rate_min = self.rate_min.min(d.rate);
        let st = &mut self.stats[flow];
        st.cuts += 1;
        st.rate_min = st.rate_min.min(d.rate);
        if d.timer_at != armed {
            self.timers.push(Reverse((d.timer_at.expect("armed"), flow as u32)));
        }
        self.shown = Some(flow as u32);
    }
    /// Bytes of flow `flow` granted at `now`. Returns whether the rate rose.
    pub(super) fn on_sent(&mut self, flow: usize, bytes: u64, now: Cycle) -> bool {
        let up = self.flows[flow].on_sent(&self.p, bytes, now);
        if up {
            self.shown = Some(flow as u32);
            self.note_recovery(flow, now);
        }
        up
    }
    /// Runs the recovery timers due at `now`; returns how many fired.
    fn expire(&mut self, now: Cycle) -> u64 {
        let mut fired = 0;
        while let Some(&Reverse((t, f))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            let d = &mut self.flows[f as usize];
            if d.timer_at != Some(t) {
                continue;
            }
            d.on_timer(&self.p, now);
            if let Some(next) = d.timer_at {
                self.timers.push(Reverse((next, f)));
            }
            self.shown = Some(f);
            self.note_recovery(f as usize, now);
            fired += 1;
        }
        fired
    }
    /// After a rate increase: a flow that reached line rate has recovered (acceptance 3).
    fn note_recovery(&mut self, flow: usize, now: Cycle) {
        if self.flows[flow].state == dcqcn::State::Recovered {
            self.recoveries += 1;
            self.last_recovery = now;
            self.stats[flow].recovered_at = now;
        }
    }
    /// Flows still below line rate.
    fn limited(&self) -> u64 {
        self.flows.iter().filter(|d| d.state == dcqcn::State::Congested).count() as u64
    }
    /// The next cycle something is due: a recovery timer or a blocked flow's ready time.
    pub(super) fn next_event(&self) -> Option<Cycle> {
        let t = self.timers.peek().map(|Reverse((t, _))| *t);
        match (t, self.wake.get()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The counters of one flow named in `report_flows`, written when they change.
pub(super) struct FlowReport {
    pub(super) key: (ChipId, u16),
    /// Its slot-FIFO flow index once it exists.
    pub(super) flow: Option<usize>,
    rate_milli: CounterId,
    rate_min_milli: CounterId,
    state: CounterId,
    cuts: CounterId,
    recovered_at: CounterId,
}

impl FlowReport {
    pub(super) fn declare(b: &mut Binder, f: &FlowKey) -> FlowReport {
        let n = |what: &str| format!("flow_d{}_q{}_{what}", f.dst, f.qp);
        FlowReport {
            key: (f.dst, f.qp),
            flow: None,
            rate_milli: b.counter(&n("rate_milli")),
            rate_min_milli: b.counter(&n("rate_min_milli")),
            state: b.counter(&n("state")),
            cuts: b.counter(&n("cuts")),
            recovered_at: b.counter(&n("recovered_at")),
        }
    }
    /// Writes what changed: a flow that does not exist (yet) shows the reset state, line rate
    /// and NORMAL.
    fn show(&self, ctx: &mut Ctx<'_>, g: &RateGate) {
        let milli = |r: f64| (r * 1000.0).round() as u64;
        let (rate, rate_min, state, cuts, rec) = match self.flow {
            Some(f) => {
                let (d, st) = (&g.flows[f], &g.stats[f]);
                (d.rate, st.rate_min, d.state_code().0, st.cuts, st.recovered_at)
            }
            None => (g.p.line_rate, g.p.line_rate, 0, 0, 0),
        };
        for (id, v) in [
            (self.rate_milli, milli(rate)),
            (self.rate_min_milli, milli(rate_min)),
            (self.state, state),
            (self.cuts, cuts),
            (self.recovered_at, rec),
        ] {
            if ctx.counter(id) != v {
                ctx.set_counter(id, v);
            }
        }
    }
}

/// The DCQCN state of the flow that changed last: `dcqcn.qp`, `dcqcn.rate` (R_C, real),
/// `dcqcn.alpha` (real), `dcqcn.state` (0 NORMAL, 1 CONGESTED, 2 RECOVERED).
pub(super) struct DcqcnView {
    qp: Out<QpId>,
    rate: Out<f64>,
    alpha: Out<f64>,
    state: Out<UInt<2>>,
}

impl DcqcnView {
    pub(super) fn ports() -> Vec<PortDecl> {
        vec![
            PortDecl::output::<QpId>("dcqcn.qp").doc("QP of the flow whose rate state changed last"),
            PortDecl::output::<f64>("dcqcn.rate")
                .level()
                .doc("its current rate R_C, bytes/ns"),
            PortDecl::output::<f64>("dcqcn.alpha").level().doc("its α"),
            PortDecl::output::<UInt<2>>("dcqcn.state").doc("0 NORMAL, 1 CONGESTED, 2 RECOVERED"),
        ]
    }
    pub(super) fn bind(b: &Binder, line_rate: f64) -> Result<DcqcnView, String> {
        let v = DcqcnView {
            qp: b.output("dcqcn.qp")?,
            rate: b.output("dcqcn.rate")?,
            alpha: b.output("dcqcn.alpha")?,
            state: b.output("dcqcn.state")?,
        };
        v.rate.set(line_rate);
        Ok(v)
    }
    fn show(&self, g: &RateGate, slots: &SlotFifo) {
        let Some(f) = g.shown else { return };
        let d = &g.flows[f as usize];
        self.qp.update(slots.flow_key(f as usize).1);
        self.rate.update(d.rate);
        self.alpha.update(d.alpha);
        self.state.update(d.state_code());
    }
}

impl RcLinkTx {
    /// DCQCN: recovery timers due now, and a rate-blocked flow's ready time reached.
    pub(super) fn expire_rate_timers(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        let fired = self.rate_gate.expire(now);
        if fired > 0 {
            ctx.count(self.c.rate_increases, fired);
            self.arb_pending = true;
        }
        if self.rate_gate.wake.get().is_some_and(|t| t <= now) {
            self.rate_gate.wake.set(None);
            self.arb_pending = true;
        }
    }

    /// The DCQCN waves and gauges, and the `report_flows` counters, written on change.
    pub(super) fn show_dcqcn(&self, ctx: &mut Ctx<'_>) {
        self.dcqcn_view.show(&self.rate_gate, &self.slots);
        if self.rate_gate.recoveries != ctx.counter(self.c.dcqcn_recoveries) {
            ctx.set_counter(self.c.dcqcn_recoveries, self.rate_gate.recoveries);
            ctx.set_counter(self.c.dcqcn_recovered_at, self.rate_gate.last_recovery);
        }
        // Gauges, written on change: the lowest rate (milli-bytes/ns; line rate until a cut) and
        // the flows still below line rate (0 at the end = acceptance 3).
        let rmin = (self.rate_gate.rate_min * 1000.0).round() as u64;
        if rmin != ctx.counter(self.c.dcqcn_rate_min_milli) {
            ctx.set_counter(self.c.dcqcn_rate_min_milli, rmin);
        }
        for r in &self.flow_report {
            r.show(ctx, &self.rate_gate);
        }
        let limited = self.rate_gate.limited();
        if limited != ctx.counter(self.c.dcqcn_flows_limited) {
            ctx.set_counter(self.c.dcqcn_flows_limited, limited);
        }
    }
}
