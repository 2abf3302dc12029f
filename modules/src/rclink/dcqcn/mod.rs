//! DCQCN rate gate of one link group's TX: the reaction point of seed 000 «DCQCN 拥塞控制»
//! («CNP 到达处理 (on_cnp)», «速率恢复 (rate_increase)», «TX 速率限制 (pacing)», appendix C
//! «DCQCN 参数»; Zhu et al., SIGCOMM 2015) for every flow (dst, qp) of the LG, behind CNP MERGE.
//! A netlist node of `rclink_tx` (`chip.lgK.tx.dcqcn`), and the kind `dcqcn` a module
//! testbench drives through the same ports.
//!
//! ```text
//!                          +-- dcqcn (one LG) -------------------------------------------+
//!  cnp  ==(comb ×8)==>     | process 0: per CNP (dst, qp): on_cnp                         | ==(comb ×8)==> ready : stream<RatePace>
//!  stream<RateCnp>         |   α ← (1−g)α + g; R_T ← R_C; R_C ← max(R_C (1 − α/2), R_min)  |   the flow's pacing after the cut
//!  (the slot FIFO, a CNP   |   then the recovery timers due (55 µs): α ← α(1−g), increase | --(comb)--> steps : u64
//!   that passed CNP MERGE) |                                                              |   timer increases so far
//!  sent ==(comb ×1)==>     | process 1: per grant: pacing (next send ≥ now + bytes / R_C)   | ==> paced : stream<RatePace>
//!  stream<RateSent>        |   ByteCounter 150 KB → increase; then the waves, gauges      |   (next cycle)
//!  (the VC queues' grant)  |   increase: stage ≤ 5: R_C += (R_T − R_C)/2, else R_line/200 | --> qp, rate, alpha, state
//!                          +--------------------------------------------------------------+
//! ```
//!
//! **on_cnp**: α EMA with g, R_T ← R_C, multiplicative decrease R_C ← R_C (1 − α/2) floored at
//! R_min; the byte counter and the recovery stage reset; the timer is armed (now + T) if it is
//! not. **rate_increase** (from the byte counter every `byte_threshold` bytes sent, and from the
//! timer every `timer_interval` after α decays): fast recovery R_C ← R_C + (R_T − R_C)/2 while
//! the stage count is ≤ `fast_recovery_stages`, then additive increase R_C ← R_C + R_line /
//! `additive_increase_factor`; R_C ≤ R_line; the stage count goes up by one per call. When R_C
//! reaches the line rate the flow is RECOVERED and the timer stops; NORMAL again at its next
//! send at line rate (a flow that never saw a CNP is NORMAL).
//!
//! **Pacing** («TX 速率限制»): by default (`pacing: sent`) a flow may send when now ≥
//! last_send + bytes / R_C, the bytes being what the last send put on the wire and R_C the rate
//! of that send; [`Dcqcn::ready_at`] is that cycle (ceil). With `pacing: seed` it is the seed's
//! eq:rc-dcqcn-pacing, now ≥ last_send + (header_overhead + max_payload) / R_C with R_C the rate
//! now ([`Dcqcn::ready_by`]; the TX passes `pkt_ovhd` + `max_payload`), so a cut lengthens and
//! an increase shortens the wait at once. The node
//! tells the VC queues each flow's ready cycle when it changes ([`RatePace`](hwsim_ports::RatePace)):
//! on `ready` in the cycle a CNP cuts the flow (so that cycle's round sees the cut), on `paced`
//! the cycle after a send moved it; the core's round passes or blocks each flow head on it and
//! wakes exactly at the earliest ready cycle, no polling. A recovery timer's increase moves no
//! ready cycle under `sent`, but the rate rose: `steps` counts them, and its change makes the
//! core run a round in that cycle; under `seed` it moves the flow's ready cycle, told on `ready`
//! in that cycle (after the cycle's CNPs; a flow that finds the lanes full is told the next).
//!
//! **Timing.** Process 0 runs after the core's process 0 (which pushes the CNPs it takes from
//! CNP MERGE) and before its round (process 1); process 1 after the core's grant (process 2).
//! A CNP at n cuts at n and the round at n sees it; the timer fires at exactly its cycle; a
//! grant at n paces from n, seen by the round at n + 1. Waves `qp`, `rate`, `alpha`, `state`:
//! the flow whose state changed last (a registered output: the value of cycle n shows at n).
//!
//! Counters (in the TX's scope inside `rclink_tx`: `tx.rate_increases`, …): `rate_increases`,
//! `dcqcn_recoveries` and `dcqcn_recovered_at` (the cycle of the last), gauges
//! `dcqcn_rate_min_milli` and `dcqcn_flows_limited`; per flow named in `report_flows`,
//! `flow_d{dst}_q{qp}_{rate_milli, rate_min_milli, state, cuts, recovered_at}` (a flow that never
//! sent shows the reset state). A flow's state is made when its first CNP or grant arrives (at
//! line rate, as the seed's reset state).
//!
//! Unit scenarios (seed 000 «单元测试场景»): on_cnp with α = 1, g = 1/256, R = 50 → α = 1,
//! R = 25; fast recovery stage 1, R_C 25, R_T 50 → 37.5; additive stage 6, R_C 45 → 45.25
//! (`tb/modules/dcqcn_cnp_and_recovery.yaml` and the tests below).
//!
//! Deviations: the stage test uses the count before the call's increment (stage 0 is the first
//! call after a CNP), so `fast_recovery_stages` = 5 gives six halvings — the seed's unit
//! scenarios (stage 1 fast, stage 6 additive) hold either way. The seed passes RECOVERED on to
//! NORMAL at once; here RECOVERED shows on the waves until the flow's next send (the rate, the
//! pacing and the timer are the same either way). The default pacing (`sent`) departs from the
//! seed twice (docs/spec-findings.md, finding 18): the wait is fixed at the send, at the rate of
//! the send (the first frame after a cut leaves at the old spacing, 28 ns early for a full
//! packet at 50 → 25 B/ns; after an increase a flow waits out the older interval), and it
//! spaces sends by the wire bytes actually sent (a frame of up to four packets) where the
//! seed's formula assumes one full packet, (50 + 1344) / R_C. `pacing: seed` follows the seed
//! in both. In a cycle with both a CNP and a
//! due recovery timer of one flow the CNP is taken first, then the timer (the seed gives no order;
//! the fused TX did the same). The flow table is unbounded (the
//! hardware's is per QP); a CNP for a flow that never sent is the core's to drop (it has no
//! rate to cut).

use hwsim_hw::{CounterDecl, Cycle};
use hwsim_ports::{ChipId, UInt};
use serde::{Deserialize, Serialize};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
/// Inside `rclink_tx` they count in the TX's scope.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "rate_increases",
        "events",
        "DCQCN rate_increase steps (byte counter or recovery timer)",
    ),
    CounterDecl::new(
        "dcqcn_recoveries",
        "events",
        "times a flow got back to line rate after a cut",
    ),
    CounterDecl::new(
        "dcqcn_recovered_at",
        "cycle",
        "cycle of the last recovery to line rate (0 = none)",
    ),
    CounterDecl::new(
        "dcqcn_rate_min_milli",
        "milli-bytes/ns",
        "gauge: the lowest rate any flow was cut to (line rate until a cut)",
    ),
    CounterDecl::new(
        "dcqcn_flows_limited",
        "flows",
        "gauge: flows below line rate (CONGESTED) now; 0 at the end = all recovered",
    ),
    CounterDecl::new(
        "flow_d*_q*_rate_milli",
        "milli-bytes/ns",
        "gauge: R_C of the `report_flows` flow (dst, qp) now",
    ),
    CounterDecl::new(
        "flow_d*_q*_rate_min_milli",
        "milli-bytes/ns",
        "gauge: the lowest rate that flow was cut to",
    ),
    CounterDecl::new(
        "flow_d*_q*_state",
        "state",
        "gauge: that flow's DCQCN state: 0 NORMAL, 1 CONGESTED, 2 RECOVERED",
    ),
    CounterDecl::new(
        "flow_d*_q*_cuts",
        "messages",
        "CNPs of that flow that passed CNP MERGE (rate cuts)",
    ),
    CounterDecl::new(
        "flow_d*_q*_recovered_at",
        "cycle",
        "cycle that flow last got back to line rate (0 = never cut)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Most flows `report_flows` may name.
pub const MAX_REPORT_FLOWS: usize = 64;

/// A flow named in `report_flows`: destination chip and QP id (0..=1023).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowKey {
    /// Destination chip.
    pub dst: ChipId,
    /// QP id (the 10-bit `{xpu_id, bank}`; CDMA engine e is QP 4e + e mod 4).
    pub qp: u16,
}

/// Parameters of the node (kind `dcqcn`): the DCQCN parameters and the flows to report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateParams {
    /// DCQCN parameters (seed 000 appendix C «DCQCN 参数»), as the TX's `dcqcn`.
    pub dcqcn: Params,
    /// Flows (dst, qp) whose DCQCN state gets counters of their own,
    /// `flow_d{dst}_q{qp}_{rate_milli, rate_min_milli, state, cuts, recovered_at}`; at most 64.
    pub report_flows: Vec<FlowKey>,
    /// The bytes of the seed's pacing interval, header_overhead + max_payload (1394), for
    /// `dcqcn.pacing: seed`; `rclink_tx` sets it from its `pkt_ovhd` and `max_payload`.
    pub interval_bytes: u64,
}

impl Default for GateParams {
    fn default() -> Self {
        GateParams {
            dcqcn: Params::default(),
            report_flows: Vec::new(),
            interval_bytes: 50 + 1344,
        }
    }
}

impl GateParams {
    /// Checks every parameter; the error names the offending one.
    pub fn check(&self) -> Result<(), String> {
        self.dcqcn.check()?;
        if self.report_flows.len() > MAX_REPORT_FLOWS {
            return Err(format!(
                "report_flows: {} flows, at most {MAX_REPORT_FLOWS}",
                self.report_flows.len()
            ));
        }
        if self.interval_bytes == 0 {
            return Err("interval_bytes = 0: must be ≥ 1".into());
        }
        for (k, f) in self.report_flows.iter().enumerate() {
            hwsim_ports::QpId::new(f.qp).map_err(|e| format!("report_flows.{k}.qp: {e}"))?;
            if self.report_flows[..k].contains(f) {
                return Err(format!("report_flows.{k}: dst {} qp {} named twice", f.dst, f.qp));
            }
        }
        Ok(())
    }
}

/// Parameters (seed 000 appendix C «DCQCN 参数»).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Initial α (1.0).
    pub initial_alpha: f64,
    /// α EMA factor g (1/256).
    pub g: f64,
    /// ByteCounter threshold, bytes (150 KB).
    pub byte_threshold: u64,
    /// TimeTimer period, ns (55 µs).
    pub timer_interval: u64,
    /// Rate floor, bytes/ns (1.0).
    pub min_rate: f64,
    /// Line rate of the LG, bytes/ns (50).
    pub line_rate: f64,
    /// Fast-recovery stages (5).
    pub fast_recovery_stages: u32,
    /// Additive increase: R_line / this per step (200).
    pub additive_increase_factor: f64,
    /// When a flow below line rate may send again: `sent` (hwsim's default: at each send, the
    /// next one waits for that frame's wire bytes at the rate of the send) or `seed` (seed 000
    /// «TX 速率限制», eq:rc-dcqcn-pacing: at arbitration, now ≥ last send + (header_overhead +
    /// max_payload) / the rate now, so a cut or an increase moves the wait at once).
    pub pacing: Pacing,
}

/// When a paced flow may send again (see [`Params::pacing`]; docs/spec-findings.md, finding 18).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// At the send: next ≥ now + the frame's wire bytes / R_C at the send.
    #[default]
    Sent,
    /// At arbitration: now ≥ last send + (header_overhead + max_payload) / R_C now.
    Seed,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            initial_alpha: 1.0,
            g: 1.0 / 256.0,
            byte_threshold: 150_000,
            timer_interval: 55_000,
            min_rate: 1.0,
            line_rate: 50.0,
            fast_recovery_stages: 5,
            additive_increase_factor: 200.0,
            pacing: Pacing::Sent,
        }
    }
}

impl Params {
    /// Checks every parameter; the error names the offending one.
    pub fn check(&self) -> Result<(), String> {
        let bad = |n: &str, v: f64, r: &str| Err(format!("{n} = {v}: must be {r}"));
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return bad("initial_alpha", self.initial_alpha, "in 0..=1");
        }
        if !(self.g > 0.0 && self.g <= 1.0) {
            return bad("g", self.g, "in (0, 1]");
        }
        if !(self.line_rate > 0.0 && self.line_rate <= 1e6) {
            return bad("line_rate", self.line_rate, "in (0, 10^6] bytes/ns");
        }
        if !(self.min_rate > 0.0 && self.min_rate <= self.line_rate) {
            return bad("min_rate", self.min_rate, "in (0, line_rate]");
        }
        if self.additive_increase_factor.is_nan() || self.additive_increase_factor < 1.0 {
            return bad("additive_increase_factor", self.additive_increase_factor, "≥ 1");
        }
        if self.byte_threshold == 0 || self.timer_interval == 0 {
            return Err("byte_threshold and timer_interval must be ≥ 1".into());
        }
        Ok(())
    }
}

/// The three states of the seed's state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// At line rate, no timer.
    Normal,
    /// Below line rate, recovering.
    Congested,
    /// Back at line rate after congestion (timer stopped).
    Recovered,
}

/// One flow's DCQCN state.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    /// Current rate R_C, bytes/ns.
    pub rate: f64,
    /// Target rate R_T, bytes/ns.
    pub target: f64,
    /// α.
    pub alpha: f64,
    /// Recovery stage count.
    pub stage: u32,
    /// State.
    pub state: State,
    byte_counter: u64,
    /// Next TimeTimer expiry, if armed.
    pub timer_at: Option<Cycle>,
    /// When the last send's bytes have left at the rate of the send (pacing `sent`), ns.
    next_ok: Option<f64>,
    /// The cycle of the last send (pacing `seed`).
    last_send: Option<Cycle>,
}

impl Dcqcn {
    /// A flow at line rate.
    pub fn new(p: &Params) -> Dcqcn {
        Dcqcn {
            rate: p.line_rate,
            target: p.line_rate,
            alpha: p.initial_alpha,
            stage: 0,
            state: State::Normal,
            byte_counter: 0,
            timer_at: None,
            next_ok: None,
            last_send: None,
        }
    }

    /// A CNP arrived at `now`.
    pub fn on_cnp(&mut self, p: &Params, now: Cycle) {
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.target = self.rate;
        self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(p.min_rate);
        self.byte_counter = 0;
        self.stage = 0;
        self.state = State::Congested;
        if self.timer_at.is_none() {
            self.timer_at = Some(now + p.timer_interval);
        }
    }

    /// One recovery step (from the byte counter or the timer).
    pub fn rate_increase(&mut self, p: &Params) {
        if self.stage <= p.fast_recovery_stages {
            self.rate += (self.target - self.rate) / 2.0;
        } else {
            self.rate += p.line_rate / p.additive_increase_factor;
        }
        self.rate = self.rate.min(p.line_rate);
        self.stage += 1;
        if self.rate >= p.line_rate {
            self.state = State::Recovered;
            self.timer_at = None;
        }
    }

    /// `bytes` were sent at `now`: pacing and the byte counter. Returns whether the rate rose.
    pub fn on_sent(&mut self, p: &Params, bytes: u64, now: Cycle) -> bool {
        self.next_ok = Some(now as f64 + bytes as f64 / self.rate);
        self.last_send = Some(now);
        if self.state == State::Recovered {
            self.state = State::Normal;
        }
        if self.state != State::Congested {
            return false;
        }
        self.byte_counter += bytes;
        if self.byte_counter >= p.byte_threshold {
            self.byte_counter = 0;
            self.rate_increase(p);
            return true;
        }
        false
    }

    /// Runs the timer if it is due at `now` (α decays, then a recovery step; re-armed while below
    /// line rate). Returns whether it fired.
    pub fn on_timer(&mut self, p: &Params, now: Cycle) -> bool {
        match self.timer_at {
            Some(t) if t <= now => {
                self.alpha *= 1.0 - p.g;
                self.timer_at = Some(t + p.timer_interval);
                self.rate_increase(p);
                true
            }
            _ => false,
        }
    }

    /// The first cycle the flow may send again (pacing): the last send + its wire bytes / R_C,
    /// rounded up; `None` when it is not paced (never sent, or NORMAL: at line rate the MAC
    /// credit paces it).
    pub fn ready_at(&self) -> Option<Cycle> {
        self.ready_by(Pacing::Sent, 0)
    }

    /// The first cycle the flow may send again under `pacing`: for `seed`, the last send +
    /// `interval_bytes` / R_C now, rounded up. `None` as for [`Dcqcn::ready_at`].
    pub fn ready_by(&self, pacing: Pacing, interval_bytes: u64) -> Option<Cycle> {
        if self.state == State::Normal {
            return None;
        }
        match pacing {
            Pacing::Sent => self.next_ok.map(|t| t.ceil() as Cycle),
            Pacing::Seed => self
                .last_send
                .map(|s| (s as f64 + interval_bytes as f64 / self.rate).ceil() as Cycle),
        }
    }

    /// The state as shown on the waves: 0 NORMAL, 1 CONGESTED, 2 RECOVERED.
    pub fn state_code(&self) -> UInt<2> {
        UInt(match self.state {
            State::Normal => 0,
            State::Congested => 1,
            State::Recovered => 2,
        })
    }
}

/// The node: the rate gate of all flows of one LG.
mod node;

pub use node::{build, ports, RateGate, PACED_DEPTH};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_unit_scenarios() {
        let p = Params::default();
        let mut d = Dcqcn::new(&p);
        d.on_cnp(&p, 0);
        assert!((d.alpha - 1.0).abs() < 1e-12, "α = {}", d.alpha);
        assert_eq!(d.rate, 25.0);
        assert_eq!(d.target, 50.0);
        assert_eq!(d.state, State::Congested);
        // Fast recovery at stage 1: 25 → 37.5 (R_T 50).
        d.stage = 1;
        d.rate_increase(&p);
        assert_eq!(d.rate, 37.5);
        // Additive increase at stage 6: 45 → 45.25.
        d.stage = 6;
        d.rate = 45.0;
        d.rate_increase(&p);
        assert_eq!(d.rate, 45.25);
    }

    #[test]
    fn recovery_by_bytes_and_timer_reaches_line_rate_and_stops_the_timer() {
        let p = Params::default();
        let mut d = Dcqcn::new(&p);
        d.on_cnp(&p, 100);
        assert_eq!(d.timer_at, Some(55_100));
        // 150 KB sent: one increase.
        for k in 0..107 {
            d.on_sent(&p, 1394, 200 + k);
        }
        assert_eq!(d.stage, 0, "149 158 B: not yet");
        assert!(d.on_sent(&p, 1394, 400));
        assert_eq!(d.rate, 37.5);
        // Timer steps until the line rate; then it stops.
        let mut t = 55_100;
        while d.timer_at.is_some() {
            assert!(d.on_timer(&p, t));
            t += p.timer_interval;
        }
        assert_eq!(d.rate, 50.0);
        assert_eq!(d.state, State::Recovered);
        d.on_sent(&p, 1394, t);
        assert_eq!(d.state, State::Normal);
        assert!(d.alpha < 1.0, "α decays on every timer step");
    }

    #[test]
    fn pacing_interval_follows_the_rate() {
        let p = Params::default();
        let mut d = Dcqcn::new(&p);
        d.on_sent(&p, 1394, 10);
        assert_eq!(d.ready_at(), None, "at line rate a flow is not paced");
        d.on_cnp(&p, 20);
        d.on_sent(&p, 1394, 30);
        // 1394 B at 25 B/ns: 55.76 ns → ready at 30 + 56.
        assert_eq!(d.ready_at(), Some(86));
        // The floor: R_min = 1 B/ns after many CNPs.
        for t in 0..20 {
            d.on_cnp(&p, 40 + t);
        }
        assert_eq!(d.rate, 1.0);
    }

    #[test]
    fn the_seeds_pacing_follows_the_rate_now_not_the_rate_of_the_send() {
        let p = Params::default();
        let mut d = Dcqcn::new(&p);
        d.on_cnp(&p, 0);
        d.on_sent(&p, 700, 10);
        // At the send (25 B/ns): 700 B → 38; the seed's: 1394 B → 10 + 55.76.
        assert_eq!(d.ready_by(Pacing::Sent, 1394), Some(38));
        assert_eq!(d.ready_by(Pacing::Seed, 1394), Some(66));
        // A cut after the send: the seed's wait grows (1394 / 12.5 = 111.52), hwsim's stays.
        d.on_cnp(&p, 20);
        assert_eq!(d.rate, 12.5);
        assert_eq!(d.ready_by(Pacing::Sent, 1394), Some(38));
        assert_eq!(d.ready_by(Pacing::Seed, 1394), Some(122));
        // An increase shortens it: 12.5 → 18.75 (half-way back to R_T 25): 10 + 74.35.
        d.rate_increase(&p);
        assert_eq!(d.rate, 18.75);
        assert_eq!(d.ready_by(Pacing::Seed, 1394), Some(85));
    }
}
