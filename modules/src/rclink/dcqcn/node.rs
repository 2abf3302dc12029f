//! The `dcqcn` node: a [`Dcqcn`] state per flow of the LG, the flows' recovery timers, the
//! pacing each flow's next send waits for, and what it shows (see the folder's header).

use hwsim_hw::{
    fast_map, Binder, BuildResult, CombOut, Component, CounterId, Ctx, Cycle, FastMap, Out, PortDecl, StreamIn,
    StreamOut, Wake,
};
use hwsim_ports::{ChipId, QpId, RateCnp, RatePace, RateSent, UInt};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Dcqcn, FlowKey, GateParams, Pacing, Params, State};

/// CNPs the core may hand over in one cycle: every control message it takes in a cycle
/// (CNP MERGE's output, [`crate::rclink::cnp_merge::CTRL_DEPTH`]).
const CNPS_PER_CYCLE: u32 = crate::rclink::cnp_merge::CTRL_DEPTH;

/// Places the VC queues give `paced` (its `rate_paced`): one grant a cycle, taken by the core's
/// round in the next.
pub const PACED_DEPTH: u32 = 2;

/// Port list.
pub fn ports(_p: &GateParams) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<RateCnp>("cnp", CNPS_PER_CYCLE)
            .doc("CNPs that passed CNP MERGE, per flow (dst, qp), in the cycle the slot FIFO takes them"),
        PortDecl::comb_stream_in::<RateSent>("sent", 1)
            .process(1)
            .doc("the VC queues' grant in its cycle: flow (dst, qp) sent `bytes` on the wire"),
        PortDecl::comb_stream_out::<RatePace>("ready")
            .width(CNPS_PER_CYCLE)
            .doc("a cut flow's pacing, in the cycle of the cut (the VC queues' round of that cycle sees it); with `pacing: seed` also a timer's increase"),
        PortDecl::comb_output::<u64>("steps")
            .doc("rate increases by the recovery timers so far; a change makes the VC queues run a round"),
        PortDecl::stream_out::<RatePace>("paced")
            .process(1)
            .doc("a flow's pacing after a send moved it, for the VC queues' next round"),
        PortDecl::output::<QpId>("qp")
            .process(1)
            .doc("QP of the flow whose rate state changed last"),
        PortDecl::output::<f64>("rate")
            .process(1)
            .level()
            .doc("its current rate R_C, bytes/ns"),
        PortDecl::output::<f64>("alpha").process(1).level().doc("its α"),
        PortDecl::output::<UInt<2>>("state")
            .process(1)
            .doc("0 NORMAL, 1 CONGESTED, 2 RECOVERED"),
    ]
}

/// What the per-flow counters of `report_flows` show beyond the [`Dcqcn`] state.
#[derive(Clone, Copy, Debug)]
struct FlowStats {
    cuts: u64,
    recovered_at: Cycle,
    rate_min: f64,
}

/// The ids of the node's counters.
struct Counters {
    rate_increases: CounterId,
    recoveries: CounterId,
    recovered_at: CounterId,
    rate_min_milli: CounterId,
    flows_limited: CounterId,
}

/// The counters of one flow named in `report_flows`, written when they change.
struct FlowReport {
    key: (ChipId, u16),
    /// Its flow index once it exists.
    flow: Option<usize>,
    rate_milli: CounterId,
    rate_min_milli: CounterId,
    state: CounterId,
    cuts: CounterId,
    recovered_at: CounterId,
}

/// The DCQCN rate gate of one LG.
pub struct RateGate {
    p: Params,
    /// The seed's pacing interval in bytes (`pacing: seed`).
    interval_bytes: u64,
    /// Flows whose timer moved their ready cycle (`pacing: seed`) and found `ready` full: told
    /// next cycle.
    retell: Vec<u32>,
    cnp: StreamIn<RateCnp>,
    sent: StreamIn<RateSent>,
    ready: StreamOut<RatePace>,
    steps: CombOut<u64>,
    paced: StreamOut<RatePace>,
    qp: Out<QpId>,
    rate: Out<f64>,
    alpha: Out<f64>,
    state: Out<UInt<2>>,
    c: Counters,
    flow_report: Vec<FlowReport>,
    /// Flow index by (dst, qp value).
    index: FastMap<(ChipId, u16), u32>,
    /// By flow index: its key, its state, the ready cycle last told to the core, its stats.
    keys: Vec<(ChipId, QpId)>,
    flows: Vec<Dcqcn>,
    told: Vec<Option<Cycle>>,
    stats: Vec<FlowStats>,
    /// (expiry, flow) per armed timer; stale entries (the flow's timer moved) are skipped.
    timers: BinaryHeap<Reverse<(Cycle, u32)>>,
    /// Rate increases by the timers so far (`steps`).
    timer_steps: u64,
    /// The flow whose state changed last (shown on the waves).
    shown: Option<u32>,
    /// Recoveries to line rate (CONGESTED → RECOVERED) and the cycle of the last one.
    recoveries: u64,
    last_recovery: Cycle,
    /// The lowest rate any flow was cut to, bytes/ns.
    rate_min: f64,
    /// Process 1 has shown the gauges once (at cycle 0).
    started: bool,
    /// Something shown changed since process 1 last showed it (process 0 to process 1).
    to_show: bool,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &GateParams, b: &mut Binder) -> BuildResult {
    p.check()?;
    let gate = RateGate {
        p: p.dcqcn.clone(),
        interval_bytes: p.interval_bytes,
        retell: Vec::new(),
        cnp: b.stream_in("cnp")?,
        sent: b.stream_in("sent")?,
        ready: b.stream_out("ready")?,
        steps: b.comb_output("steps")?,
        paced: b.stream_out("paced")?,
        qp: b.output("qp")?,
        rate: b.output("rate")?,
        alpha: b.output("alpha")?,
        state: b.output("state")?,
        c: Counters {
            rate_increases: b.counter("rate_increases"),
            recoveries: b.counter("dcqcn_recoveries"),
            recovered_at: b.counter("dcqcn_recovered_at"),
            rate_min_milli: b.counter("dcqcn_rate_min_milli"),
            flows_limited: b.counter("dcqcn_flows_limited"),
        },
        flow_report: p.report_flows.iter().map(|f| FlowReport::declare(b, f)).collect(),
        index: fast_map(),
        keys: Vec::new(),
        flows: Vec::new(),
        told: Vec::new(),
        stats: Vec::new(),
        timers: BinaryHeap::new(),
        timer_steps: 0,
        shown: None,
        recoveries: 0,
        last_recovery: 0,
        rate_min: p.dcqcn.line_rate,
        started: false,
        to_show: false,
    };
    gate.rate.set(p.dcqcn.line_rate);
    Ok(Box::new(gate))
}

impl FlowReport {
    fn declare(b: &mut Binder, f: &FlowKey) -> FlowReport {
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
}

impl RateGate {
    /// The index of flow (dst, qp), made at line rate on its first message.
    fn flow(&mut self, dst: ChipId, qp: QpId) -> usize {
        if let Some(&f) = self.index.get(&(dst, qp.value())) {
            return f as usize;
        }
        let f = self.flows.len();
        self.index.insert((dst, qp.value()), f as u32);
        self.keys.push((dst, qp));
        self.flows.push(Dcqcn::new(&self.p));
        self.told.push(None);
        self.stats.push(FlowStats {
            cuts: 0,
            recovered_at: 0,
            rate_min: self.p.line_rate,
        });
        for r in self.flow_report.iter_mut() {
            if r.key == (dst, qp.value()) {
                r.flow = Some(f);
            }
        }
        f
    }

    /// A CNP for flow `flow` at `now`: DCQCN's cut.
    fn on_cnp(&mut self, flow: usize, now: Cycle) {
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
            if self.p.pacing == Pacing::Seed && !self.retell.contains(&f) {
                // The rate rose, so the seed's wait is shorter now: the core must know.
                self.retell.push(f);
            }
            self.shown = Some(f);
            self.note_recovery(f as usize, now);
            fired += 1;
        }
        fired
    }

    /// After a rate increase: a flow that reached line rate has recovered (acceptance 3).
    fn note_recovery(&mut self, flow: usize, now: Cycle) {
        if self.flows[flow].state == State::Recovered {
            self.recoveries += 1;
            self.last_recovery = now;
            self.stats[flow].recovered_at = now;
        }
    }

    /// Flow `flow`'s pacing as the core is to see it.
    fn pace(&self, flow: usize) -> RatePace {
        let (dst, qp) = self.keys[flow];
        let at = self.flows[flow].ready_by(self.p.pacing, self.interval_bytes);
        RatePace {
            dst,
            qp,
            paced: at.is_some(),
            at: at.unwrap_or(0),
        }
    }

    /// The waves of the flow that changed last, the gauges and the `report_flows` counters,
    /// each written on change.
    fn show(&self, ctx: &mut Ctx<'_>) {
        if let Some(f) = self.shown {
            let d = &self.flows[f as usize];
            self.qp.update(self.keys[f as usize].1);
            self.rate.update(d.rate);
            self.alpha.update(d.alpha);
            self.state.update(d.state_code());
        }
        if self.recoveries != ctx.counter(self.c.recoveries) {
            ctx.set_counter(self.c.recoveries, self.recoveries);
            ctx.set_counter(self.c.recovered_at, self.last_recovery);
        }
        let milli = |r: f64| (r * 1000.0).round() as u64;
        let rmin = milli(self.rate_min);
        if rmin != ctx.counter(self.c.rate_min_milli) {
            ctx.set_counter(self.c.rate_min_milli, rmin);
        }
        for r in &self.flow_report {
            let (rate, rate_min, state, cuts, rec) = match r.flow {
                Some(f) => {
                    let (d, st) = (&self.flows[f], &self.stats[f]);
                    (d.rate, st.rate_min, d.state_code().0, st.cuts, st.recovered_at)
                }
                None => (self.p.line_rate, self.p.line_rate, 0, 0, 0),
            };
            for (id, v) in [
                (r.rate_milli, milli(rate)),
                (r.rate_min_milli, milli(rate_min)),
                (r.state, state),
                (r.cuts, cuts),
                (r.recovered_at, rec),
            ] {
                if ctx.counter(id) != v {
                    ctx.set_counter(id, v);
                }
            }
        }
        let limited = self.flows.iter().filter(|d| d.state == State::Congested).count() as u64;
        if limited != ctx.counter(self.c.flows_limited) {
            ctx.set_counter(self.c.flows_limited, limited);
        }
    }
}

impl RateGate {
    /// `pacing: seed`: the flows whose timers raised their rate this cycle (or found `ready`
    /// full last cycle) tell the core their new ready cycle, after the CNPs' (which take the
    /// lanes first).
    fn retell_paces(&mut self) {
        while let Some(&f) = self.retell.last() {
            let pace = self.pace(f as usize);
            if pace.ready_at() != self.told[f as usize] {
                if !self.ready.can_push() {
                    return;
                }
                self.told[f as usize] = pace.ready_at();
                self.ready.push(pace);
            }
            self.retell.pop();
        }
    }
}

impl Component for RateGate {
    /// Process 0: the CNPs of this cycle, then the recovery timers due.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let mut changed = !self.started;
        while let Some(m) = self.cnp.pop() {
            let f = self.flow(m.dst, m.qp);
            self.on_cnp(f, now);
            if ctx.logs() {
                let r = self.flows[f].rate;
                ctx.log(
                    "cnp",
                    format_args!("cut dst={} qp={} rate_cut_to={r:.3} (B/ns, DCQCN)", m.dst, m.qp.value()),
                );
            }
            let pace = self.pace(f);
            self.told[f] = pace.ready_at();
            if !self.ready.can_push() {
                ctx.violation("dcqcn: more CNPs in one cycle than `ready` has lanes");
            } else {
                self.ready.push(pace);
            }
            changed = true;
        }
        let fired = self.expire(now);
        if fired > 0 {
            ctx.count(self.c.rate_increases, fired);
            self.timer_steps += fired;
            self.steps.set(self.timer_steps);
            changed = true;
        }
        self.retell_paces();
        if changed {
            self.to_show = true;
            ctx.run_process(1);
        }
        let mut next = self.timers.peek().map(|Reverse((t, _))| *t);
        if !self.retell.is_empty() {
            // Flows still to tell the core: the next cycle.
            next = Some(next.map_or(now + 1, |t| t.min(now + 1)));
        }
        Wake::earliest(next)
    }

    /// Process 1: the grant of this cycle (pacing, byte counter), then what the node shows.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        self.started = true;
        while let Some(m) = self.sent.pop() {
            let f = self.flow(m.dst, m.qp);
            let state = self.flows[f].state;
            if self.flows[f].on_sent(&self.p, m.bytes as u64, now) {
                ctx.count(self.c.rate_increases, 1);
                self.shown = Some(f as u32);
                self.note_recovery(f, now);
                self.to_show = true;
            }
            // A send at line rate changes nothing shown, but RECOVERED → NORMAL.
            self.to_show |= self.flows[f].state != state;
            let pace = self.pace(f);
            if pace.ready_at() != self.told[f] {
                self.told[f] = pace.ready_at();
                if !self.paced.can_push() {
                    ctx.violation("dcqcn: `paced` full (the VC queues take it in the cycle after each grant)");
                } else {
                    self.paced.push(pace);
                }
            }
        }
        // Only what changed is shown: a grant at line rate (most of them) costs no pass over
        // the flows.
        if std::mem::take(&mut self.to_show) {
            self.show(ctx);
        }
        Wake::OnInput
    }
}
