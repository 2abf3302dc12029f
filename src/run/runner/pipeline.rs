//! The run itself: the trace opened, the kernel run in slices (progress, interrupts, probes,
//! RTL shadows, the histories' budget), then the checks and the report.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use hwsim_hw::{Cycle, Sim, SimError, Stop, TraceOptions};

use super::checks::{evaluate, flows, metric_value, METRICS};
use super::{
    build, history_over_budget, open_probers, peak_rss_bytes, require_checks, rss_bytes, validate_checks, validate_run,
    CheckResult, Options, Report, RunStats,
};
use crate::build::testbench::{Elaborated, Loaded};
use crate::input::yaml::InputError;

/// Runs a loaded testbench.
pub fn run_loaded(l: &Loaded, mut opts: Options) -> Result<Report, InputError> {
    let seed = opts.seed.unwrap_or(l.tb.seed);
    let until = validate_run(l, opts.until)?;
    let (mut sim, el) = build(l, seed)?;
    validate_checks(l, &sim)?;
    // The histories the checks record grow with the run: charged to what the budget leaves
    // after the model (what the process holds now), each growth before it allocates.
    let log_budget = hwsim_hw::LogBudget::new(l.max_memory.saturating_sub(rss_bytes()));
    for (ep, w) in &el.watches {
        if let Some(n) = sim.net(ep).filter(|_| w.log) {
            n.enable_log();
            n.set_log_budget(&log_budget);
        }
    }
    for p in &opts.log_nets {
        if let Some(n) = sim.net(p) {
            n.enable_log();
            n.set_log_budget(&log_budget);
        }
    }
    sim.set_skip(!opts.no_skip);
    sim.set_shuffle(opts.shuffle);
    let vcd_name = opts.vcd.clone().unwrap_or_else(|| PathBuf::from("VCD output"));
    let write_error = |e: std::io::Error| InputError::new(&vcd_name, format!("cannot write: {e}"));
    // The VCD goes to a temporary name and is renamed when complete (crate::report::output).
    let staged = open_trace(l, &mut opts, &mut sim, &write_error)?;

    // The event log (crate::run::event_log): to a staged file, or to stderr.
    let event_log = crate::run::event_log::open(&opts.log, opts.log_file.as_deref(), opts.log_max, &mut sim)?;

    // The testbench's probe and the command line's statistics per window, at cycle 0.
    let (prober, stats) = open_probers(l, &opts, &sim, until)?;
    // RTL beside the model (crate::run::rtl): fed and compared every cycle.
    let shadows = crate::run::rtl::start(l, &el.rtl_ports, &sim)?;
    if !opts.checks_optional && !opts.checks_off {
        require_checks(l)?;
    }
    let progress =
        crate::run::progress::RunProgress::new(crate::run::progress::allowed(opts.progress), &l.name(), until);
    let t0 = Instant::now();
    let mut run = Slices {
        prober,
        stats,
        shadows,
        progress,
        error: None,
        interrupted: false,
        diverged: None,
    };
    run.run(l, &opts, &mut sim, until, &log_budget, &write_error)?;
    let wall = t0.elapsed().as_secs_f64();
    let end = match &run.error {
        Some(SimError::Protocol { cycle, .. }) => cycle + 1,
        _ => sim.now(),
    };
    sim.finish();
    if let Some(f) = opts.on_end.take() {
        f(&sim);
    }
    sim.finish_trace(end).map_err(|e| match e {
        SimError::Io(e) => write_error(e),
        e => InputError::new(&vcd_name, e.to_string()),
    })?;
    if let Some(s) = staged {
        s.commit()?;
    }
    event_log.close(&mut sim)?;
    let probe = match run.prober.take() {
        Some(p) => Some(p.finish()?),
        None => None,
    };
    let stats_csv = match run.stats.take() {
        Some(mut p) => {
            sim.settle();
            p.sample_end(&sim)?;
            Some(p.finish()?)
        }
        None => None,
    };
    let flow_reports = flows(&sim, &el);
    let (kept, dropped) = crate::build::check_policy::select(l, opts.checks_off, seed);
    let kept = crate::build::check_policy::resolve_bounds(l, kept)?;
    let mut checks: Vec<CheckResult> = kept
        .iter()
        .map(|e| evaluate(e, &sim, &el, end, &flow_reports))
        .collect();
    let error_text = run.error.as_ref().map(|e| e.to_string());
    run.more_checks(l, &opts, &sim, &el, &mut checks);
    let interrupted = run.interrupted;
    let stats = run_stats(&sim, wall, end);
    Ok(Report {
        version: crate::report::explain::VERSION,
        testbench: l.name(),
        file: l.path.display().to_string(),
        seed,
        overrides: l.overrides.iter().map(|o| o.arg.clone()).collect(),
        metrics_from: l.tb.metrics_from,
        cycles: end,
        passed: checks.iter().all(|c| c.passed) && error_text.is_none() && !interrupted,
        checks,
        counters: sim.counters().map(|(n, v)| (n.to_string(), v)).collect(),
        units: crate::build::registry::counter_units(&sim),
        metrics: METRICS
            .iter()
            .filter_map(|m| metric_value(m, &sim, end, &flow_reports).map(|x| (m.to_string(), x)))
            .collect(),
        flows: flow_reports,
        latency: sim
            .samples(hwsim_modules::rclink::paxi::TXN_LATENCY)
            .and_then(crate::report::histogram::LatencyHistogram::of),
        stats,
        error: error_text,
        interrupted,
        checks_off: opts.checks_off,
        dropped,
        probe,
        stats_csv,
        levels: el.levels.clone(),
    })
}

/// The VCD, if one is asked for (a writer, or a file staged under a temporary name), traced
/// with the globs of the command line (else the testbench's); a glob that selects no net is
/// refused. Returns the staged file, committed when the run is over.
fn open_trace(
    l: &Loaded,
    opts: &mut Options,
    sim: &mut Sim,
    write_error: &dyn Fn(std::io::Error) -> InputError,
) -> Result<Option<crate::report::output::Staged>, InputError> {
    let mut staged = None;
    let writer: Option<Box<dyn Write>> = match (opts.vcd_writer.take(), &opts.vcd) {
        (Some(w), _) => Some(w),
        (None, Some(p)) => {
            let (f, s) = crate::report::output::stage(p)?;
            staged = Some(s);
            Some(Box::new(f))
        }
        (None, None) => None,
    };
    let Some(w) = writer else {
        return Ok(staged);
    };
    let globs: Vec<String> = if opts.trace.is_empty() {
        l.tb.trace.clone()
    } else {
        opts.trace.clone()
    };
    // A field's name as GTKWave shows it (`chip0.lg7.tx.frame.psn`) selects its net.
    let fields = |net: &str| {
        sim.net(net)
            .map(|n| n.trace_layout().into_iter().map(|(name, _)| name).collect())
            .unwrap_or_default()
    };
    // Whether a glob selects some net: a plain name is looked up among the nets and their
    // scopes (`hwsim vectors` gives one per port: thousands), a pattern tried on each.
    // The event pulses offered (hwsim_modules::events::KIND_EVENTS): `ev_<class>` beside the
    // ports of each block of a kind that reports that class; a glob may name them too.
    let events: Vec<(u32, &'static str)> = sim
        .components()
        .enumerate()
        .flat_map(|(i, (_, kind))| {
            hwsim_modules::events::kind_events(kind)
                .iter()
                .map(move |&c| (i as u32, c))
        })
        .collect();
    let pulse_paths = sim.pulse_paths(&events);
    let mut named: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for p in sim.net_paths().iter().chain(&pulse_paths) {
        named.insert(p);
        named.extend(p.char_indices().filter(|&(_, c)| c == '.').map(|(i, _)| &p[..i]));
    }
    let selects_some = |g: &str| {
        if g.contains(['*', '?']) {
            let one = [g.to_string()];
            sim.net_paths()
                .iter()
                .chain(&pulse_paths)
                .any(|p| hwsim_hw::trace_selected(&one, p))
        } else {
            named.contains(g)
        }
    };
    let globs: Vec<String> = globs
        .into_iter()
        .flat_map(|g| {
            crate::report::waves::nets_of_field_glob(&g, sim.net_paths(), &selects_some, fields)
                .unwrap_or_else(|| vec![g])
        })
        .collect();
    // A glob that selects nothing is a typo, not a wish for an empty trace.
    for g in &globs {
        if !selects_some(g) {
            let msg = format!(
                "trace glob `{g}` matches no net (nets look like `{}`)",
                sim.net_paths().first().map_or("", |p| p.as_str())
            );
            return Err(if opts.trace.is_empty() {
                l.error_at(g, msg)
            } else {
                InputError::new(Path::new("--trace"), msg)
            });
        }
    }
    drop(named);
    let topts = TraceOptions {
        globs,
        from: opts.trace_from,
        to: opts.trace_to,
        events,
    };
    match sim.trace_vcd(w, topts) {
        Ok(_) => Ok(staged),
        Err(SimError::Io(e)) => Err(write_error(e)),
        Err(e) => Err(InputError::new(&l.path, format!("trace: {e}"))),
    }
}

/// The run in slices, and what it met: a protocol error, an interrupt, an RTL divergence.
struct Slices {
    prober: Option<crate::run::probe::Prober>,
    stats: Option<crate::run::probe::Prober>,
    shadows: Vec<crate::run::rtl::Shadow>,
    progress: Option<crate::run::progress::RunProgress>,
    error: Option<SimError>,
    interrupted: bool,
    diverged: Option<CheckResult>,
}

impl Slices {
    /// Runs to `until` (or to quiescence, an error, an interrupt, a divergence) in slices, so a
    /// long run can report progress and notice an interrupt between two slices (the kernel's
    /// hot loop stays untouched); slicing changes nothing in the results: `run` stops at the
    /// slice's end without ticking anything. Slices also bound the histories' memory: a refused
    /// growth ends the run at the slice's end.
    fn run(
        &mut self,
        l: &Loaded,
        opts: &Options,
        sim: &mut Sim,
        until: Cycle,
        log_budget: &hwsim_hw::LogBudget,
        write_error: &dyn Fn(std::io::Error) -> InputError,
    ) -> Result<(), InputError> {
        let mut slice: Cycle = 1 << 14;
        loop {
            if opts.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
                self.interrupted = true;
                break;
            }
            // A slice starts at the next event, so a long idle stretch (a flow starting at cycle
            // 2^60) is crossed in one slice instead of 2^46 empty ones.
            let from = if opts.no_skip {
                sim.now()
            } else {
                sim.next_event().unwrap_or(sim.now())
            };
            let mut target = from.saturating_add(slice).min(until);
            for p in self.prober.iter().chain(self.stats.iter()) {
                target = target.min(p.next());
            }
            if let Some(s) = self.shadows.first() {
                target = target.min(s.next());
            }
            let ts = Instant::now();
            let stop = sim.run(target);
            if let Some((cycle, net)) = log_budget.refused() {
                return Err(history_over_budget(l, sim, log_budget, cycle, net));
            }
            if stop.is_ok() && self.at_probes_and_shadows(sim)? {
                break;
            }
            match stop {
                Ok(Stop::Quiescent) => break,
                Ok(Stop::Limit) if sim.now() >= until => break,
                Ok(Stop::Limit) => {}
                Err(SimError::Io(e)) => return Err(write_error(e)),
                Err(e) => {
                    self.error = Some(e);
                    break;
                }
            }
            // Slices of about 50 ms: a smooth bar, and an interrupt or the budget noticed at once.
            if ts.elapsed().as_millis() < 25 && slice < 1 << 30 {
                slice *= 2;
            }
            if let Some(p) = self.progress.as_mut() {
                p.update(sim.now());
            }
        }
        if let Some(p) = self.progress.take() {
            p.finish();
        }
        if self.diverged.is_none() {
            for s in self.shadows.iter_mut() {
                if let Some(d) = s.finish()? {
                    self.diverged = Some(d.check);
                    break;
                }
            }
        }
        Ok(())
    }

    /// After a slice that ended well: the probes due now sampled, the RTL shadows stepped;
    /// returns whether one diverged (the run stops).
    fn at_probes_and_shadows(&mut self, sim: &mut Sim) -> Result<bool, InputError> {
        // At a probe time, or at the end of the run if it falls on one.
        if self
            .prober
            .iter()
            .chain(self.stats.iter())
            .any(|p| p.next() == sim.now())
        {
            // Counters a block keeps lazily, up to now (a rate monitor's ramps).
            sim.settle();
        }
        for p in self.prober.iter_mut().chain(self.stats.iter_mut()) {
            p.sample(sim)?;
        }
        for s in self.shadows.iter_mut() {
            if let Some(d) = s.step(sim)? {
                self.diverged = Some(d.check);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The checks besides `expect:`: an RTL divergence (alone: the run was cut short, its other
    /// checks would fail for that alone), the shadows' and replaced nodes' passes, the system's
    /// monitors, and a protocol error.
    fn more_checks(&mut self, l: &Loaded, opts: &Options, sim: &Sim, el: &Elaborated, checks: &mut Vec<CheckResult>) {
        let stopped_by_rtl = self.diverged.is_some();
        match self.diverged.take() {
            Some(d) => *checks = vec![d],
            None => {
                checks.extend(self.shadows.iter().map(crate::run::rtl::Shadow::passed));
                // A replaced node that broke the protocol stopped the run with an error instead.
                if self.error.is_none() {
                    checks.extend(el.rtl_replaced.iter().map(|f| f()));
                }
            }
        }
        if self.error.is_none() && !opts.checks_off && !stopped_by_rtl {
            let expects = |what: &str| {
                l.tb.expect
                    .iter()
                    .any(|e| e.counter.as_deref().is_some_and(|c| c.contains(what)))
            };
            let expected = crate::build::monitors::Expected {
                fatal: expects("diag_max_retry_hit"),
                mul_timeout: expects("mul_timeouts"),
            };
            if let (Some(info), Some(m)) = (&el.system, &el.monitor_counters) {
                checks.extend(crate::build::monitors::monitors(
                    sim,
                    m,
                    info.lossy,
                    sim.is_quiescent(),
                    expected,
                ));
            }
        }
        if let Some(e) = &self.error {
            checks.push(CheckResult {
                first_difference: None,
                name: "run completes without protocol violation".into(),
                passed: false,
                expected: "no violation".into(),
                actual: e.to_string(),
            });
        }
    }
}

/// The run's statistics (`--stats`, the report's `stats`).
fn run_stats(sim: &Sim, wall: f64, end: Cycle) -> RunStats {
    let st = sim.stats();
    RunStats {
        wall_s: wall,
        cycles: end,
        cycles_per_s: if wall > 0.0 { end as f64 / wall } else { 0.0 },
        activations: st.activations,
        process_runs: st.process_runs,
        activations_per_s: if wall > 0.0 { st.activations as f64 / wall } else { 0.0 },
        executed_cycles: st.cycles_executed,
        skipped_cycles: st.cycles_skipped,
        peak_rss_bytes: peak_rss_bytes(),
        by_kind: crate::report::KindActivations::summarize(sim.activations().into_iter().map(|(_, k, p, n)| (k, p, n))),
    }
}
