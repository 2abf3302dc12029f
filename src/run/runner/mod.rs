//! Running a testbench: elaborate, trace, run with or without event skip, evaluate the checks,
//! and produce the report (text and JSON).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use hwsim_hw::{Cycle, Sim};

use crate::build::testbench::{self, Elaborated, Loaded};
use crate::input::yaml::{self, InputError, Value};

/// The checks: validated before the run, evaluated after it.
mod checks;
/// The run in slices, and its report.
mod pipeline;

pub use checks::{metric_unit, validate_checks, SATURATED_BELOW};
pub use pipeline::run_loaded;

/// Default longest run when neither the testbench nor the command line says.
pub const DEFAULT_UNTIL: Cycle = 100_000_000;

/// Longest run (`until`, `--until`): 2^62 cycles, so that a time plus a latency never wraps.
pub const MAX_UNTIL: Cycle = 1 << 62;

/// A function given the kernel at the end of a run ([`Options::on_end`]).
pub type OnEnd = Box<dyn FnOnce(&Sim)>;

/// How to run.
#[derive(Default)]
pub struct Options {
    /// Write a VCD here.
    pub vcd: Option<PathBuf>,
    /// Or into this writer (tests).
    pub vcd_writer: Option<Box<dyn Write>>,
    /// Override the testbench's seed.
    pub seed: Option<u64>,
    /// Override the run length.
    pub until: Option<Cycle>,
    /// Event skip off.
    pub no_skip: bool,
    /// Trace globs (empty: the testbench's `trace:`, else everything).
    pub trace: Vec<String>,
    /// Trace window start.
    pub trace_from: Option<Cycle>,
    /// Trace window end (exclusive).
    pub trace_to: Option<Cycle>,
    /// A progress line on stderr for long runs (only when stderr is a terminal).
    pub progress: bool,
    /// Shuffle the evaluation order with this seed (tests of the two-phase contract).
    pub shuffle: Option<u64>,
    /// Write the testbench's `probe:` samples here (crate::run::probe).
    pub probe: Option<PathBuf>,
    /// `--stats-every CYCLES --stats-csv FILE`: the counters matching `stats_counters` (all
    /// without it) every CYCLES, a CSV row per window end (crate::run::probe).
    pub stats_every: Option<(Cycle, PathBuf)>,
    pub stats_counters: Option<String>,
    /// Set (by a SIGINT / SIGTERM handler) to stop the run at the current cycle; the report is
    /// then marked `interrupted` and the VCD ends there.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Run a module testbench without `expect:` checks (`vectors`, `plot`: they want the waves
    /// or the samples, not a verdict); otherwise such a testbench is refused (see
    /// [`require_checks`]).
    pub checks_optional: bool,
    /// `--checks off`: evaluate no `expect:` check and no monitor (crate::build::check_policy).
    pub checks_off: bool,
    /// Net paths whose every push is recorded (`hwsim vectors`: several messages in a cycle).
    pub log_nets: Vec<String>,
    /// Called with the kernel when the run has ended, to read what it recorded.
    pub on_end: Option<OnEnd>,
    /// `--log`: the event log's selectors (crate::run::event_log); empty: no log.
    pub log: Vec<String>,
    /// `--log-file`: where the event log goes (stderr without it).
    pub log_file: Option<PathBuf>,
    /// `--log-max`: lines before the log stops (0 with `Default`: the default bound).
    pub log_max: u64,
}

pub use crate::build::verdict::CheckResult;

pub use crate::report::{FlowReport, Report, RunStats};

/// Resident set size of this process now (0 where unknown).
fn rss_bytes() -> u64 {
    proc_status_bytes("VmRSS:")
}

/// The error that ends a run whose check histories reached their budget (`--max-memory`).
fn history_over_budget(l: &Loaded, sim: &Sim, b: &hwsim_hw::LogBudget, cycle: Cycle, net: u32) -> InputError {
    let mib = |x: u64| x as f64 / (1u64 << 20) as f64;
    let path = sim.net_paths().get(net as usize).map_or("?", |p| p.as_str());
    InputError::new(
        Path::new("--max-memory"),
        format!(
            "the history the checks record reached its share of the {:.1} GiB budget at cycle {cycle} (growing `{path}`): {:.1} MiB held of the {:.1} MiB the model left; raise --max-memory, shorten the run, or check fewer changes (a `count` or `value … at` check keeps less)",
            l.max_memory as f64 / (1u64 << 30) as f64,
            mib(b.used()),
            mib(b.limit()),
        ),
    )
}

/// Peak resident set size of this process (0 where unknown).
pub fn peak_rss_bytes() -> u64 {
    proc_status_bytes("VmHWM:")
}

/// A size field of /proc/self/status (`VmRSS:`, `VmHWM:`, in kB there), bytes; 0 where unknown.
fn proc_status_bytes(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Elaborates a loaded testbench into a ready simulation (also used by `hwsim check`).
pub fn build(l: &Loaded, seed: u64) -> Result<(Sim, Elaborated), InputError> {
    build_inner(l, seed).map_err(|e| l.attribute(e))
}

fn build_inner(l: &Loaded, seed: u64) -> Result<(Sim, Elaborated), InputError> {
    let mut el = match crate::build::form(l)? {
        crate::build::Form::System => {
            let (nl, info) = crate::build::system::elaborate(l, seed)?;
            let values = crate::build::values::registry();
            let watches = testbench::watches(l, &nl, &values)?;
            Elaborated {
                netlist: nl,
                watches,
                values,
                system: Some(info),
                kinds: Default::default(),
                monitor_counters: None,
                levels: Vec::new(),
                rtl_ports: BTreeMap::new(),
                rtl_replaced: Vec::new(),
            }
        }
        crate::build::Form::Module => testbench::elaborate(l)?,
    };
    let mut nl = std::mem::take(&mut el.netlist);
    el.kinds = nl.kind_counts();
    let instances = el.system.is_some().then(|| nl.instance_kinds());
    el.levels = nl.level_paths();
    for spec in l.tb.rtl.values() {
        if let Some(p) = nl.ports_of(&spec.instance) {
            el.rtl_ports.insert(spec.instance.clone(), p.to_vec());
        }
    }
    el.rtl_replaced = crate::run::rtl::replace::install(l, &mut nl)?
        .into_iter()
        .map(|r| Box::new(move || r.passed()) as Box<dyn Fn() -> CheckResult>)
        .collect();
    let sim = nl.elaborate(seed).map_err(|e| testbench::elab_error(l, e))?;
    crate::build::registry::check_counter_tables(&sim).map_err(|e| InputError::new(&l.path, e))?;
    if let Some(instances) = instances {
        let m = crate::build::monitors::MonitorCounters::bind(&instances, &sim).map_err(|e| l.error_at("system", e))?;
        el.monitor_counters = Some(m);
    }
    Ok((sim, el))
}

/// The probes of a run: the testbench's `probe:` (written to `--probe`) and `--stats-every`'s
/// counters, each with its row for cycle 0 written.
fn open_probers(
    l: &Loaded,
    opts: &Options,
    sim: &Sim,
    until: Cycle,
) -> Result<(Option<crate::run::probe::Prober>, Option<crate::run::probe::Prober>), InputError> {
    let mut prober = match (&opts.probe, &l.tb.probe) {
        (Some(path), Some(p)) => Some(crate::run::probe::Prober::new(l, p, sim, path, until)?),
        (Some(path), None) => {
            return Err(InputError::new(
                Path::new("--probe"),
                format!(
                    "{}: the testbench has no `probe:` section (`probe: {{every: 1000, signals: [GLOB], counters: [GLOB]}}`)",
                    path.display()
                ),
            ))
        }
        (None, _) => None,
    };
    let mut stats = match &opts.stats_every {
        Some((every, path)) => {
            let glob = opts.stats_counters.as_deref().unwrap_or("*");
            Some(crate::run::probe::Prober::counters_every(
                sim, *every, glob, path, until,
            )?)
        }
        None => None,
    };
    for p in prober.iter_mut().chain(stats.iter_mut()) {
        p.sample(sim)?;
    }
    Ok((prober, stats))
}

/// The end of the run (`--until`, else the testbench's `until`, else the default), checked with
/// what depends on it before anything is built, for `run` and `check` alike: at most 2^62 cycles
/// (every time the model computes is a start or a cycle plus a bounded latency, so none can
/// wrap), no flow starting at or after it (it would send nothing, and nothing would fail), and
/// no warm-up window (`metrics_from`) opening at or after it.
pub fn validate_run(l: &Loaded, until_override: Option<u64>) -> Result<u64, InputError> {
    let until = until_override.or(l.tb.until).unwrap_or(DEFAULT_UNTIL);
    if until > MAX_UNTIL {
        let msg = format!("until {until} out of range 0..={MAX_UNTIL} cycles (2^62 ns is 146 years)");
        return Err(match until_override {
            Some(_) => InputError::new(Path::new("--until"), msg),
            None => l.error_at("until", msg),
        });
    }
    // A warm-up window opening at or after the end would measure nothing, whatever ran.
    // The chip's PAXI may carry its own (`system.chip.paxi.metrics_from`, from the file, an
    // include or a `--set`): the same window, the same rule.
    let paxi_from = || {
        let s = l.tb.system.as_ref()?;
        let chip = yaml::merge(l.system_defaults.get("chip").unwrap_or(&Value::Null), &s.chip);
        chip.get("paxi")?.get("metrics_from")?.as_u64()
    };
    if let Some(m) = l.tb.metrics_from.or_else(paxi_from).filter(|&m| m >= until) {
        return Err(l.error_at(
            "metrics_from",
            format!("metrics_from {m} is at or after the end of the run ({until}): the flows would measure nothing"),
        ));
    }
    // The view opens on the window and marks the markers: past the end of the run (as the file
    // sets it; a shorter `--until` on the command line is a quick look, not a mistake) they
    // would show nothing.
    if let (None, Some(v)) = (until_override, &l.tb.view) {
        if let Some([a, _]) = v.window.filter(|w| w[0] >= until) {
            return Err(l.error_at(
                "window",
                format!("view.window starts at {a}, at or after the end of the run ({until}): the view would open on nothing"),
            ));
        }
        if let Some((i, m)) = v.markers.iter().enumerate().find(|(_, &m)| m > until) {
            return Err(l.error_at(
                "markers",
                format!("view.markers[{i}] = {m} is after the end of the run ({until}): the marker would mark nothing"),
            ));
        }
    }
    let mut traffic = l.tb.system.iter().flat_map(|s| &s.traffic).enumerate();
    if let Some((i, f)) = traffic.find(|(_, f)| f.start >= until) {
        return Err(l.item_error(
            "traffic",
            i,
            "start",
            format!(
                "traffic: a flow starts at cycle {}, at or after the end of the run ({until})",
                f.start
            ),
        ));
    }
    Ok(until)
}

/// A module testbench must check something: with an empty `expect:` (and no monitors, which
/// only the system form has) its run would be reported `PASS (0/0)`, a pass that checked
/// nothing. Refused at the file's `expect:` (or its top), after every other check of the
/// testbench; `vectors` and `plot` run such a testbench for its waves or samples.
pub fn require_checks(l: &Loaded) -> Result<(), InputError> {
    if l.tb.system.is_some() || !l.tb.expect.is_empty() {
        return Ok(());
    }
    let msg = "testbench has no `expect:` checks: its run would pass without checking anything (add one, e.g. `expect: [{metric: end_cycle, min: 1}]`)";
    let e = l.error_at("expect", msg);
    if e.line.is_some() || e.file != l.path {
        return Err(e);
    }
    Err(InputError {
        file: l.path.clone(),
        line: Some(1),
        column: Some(1),
        message: msg.into(),
    })
}

/// Loads and runs a testbench file.
pub fn run_file(path: &Path, opts: Options) -> Result<Report, InputError> {
    let l = testbench::load(path)?;
    run_loaded(&l, opts)
}
