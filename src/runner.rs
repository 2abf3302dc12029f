//! Running a testbench: elaborate, trace, run with or without event skip, evaluate the checks,
//! and produce the report (text and JSON).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use hwsim_hw::{Cycle, Shape, Sim, SimError, Stop, TraceOptions};

use crate::check_policy::{bounds_text, within_bounds};
use crate::schema::{Bound, Expect};
use crate::testbench::{self, Elaborated, Loaded};
use crate::yaml::{self, InputError, Value};

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
    /// Write the testbench's `probe:` samples here (crate::probe).
    pub probe: Option<PathBuf>,
    /// `--stats-every CYCLES --stats-csv FILE`: the counters matching `stats_counters` (all
    /// without it) every CYCLES, a CSV row per window end (crate::probe).
    pub stats_every: Option<(Cycle, PathBuf)>,
    pub stats_counters: Option<String>,
    /// Set (by a SIGINT / SIGTERM handler) to stop the run at the current cycle; the report is
    /// then marked `interrupted` and the VCD ends there.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Run a module testbench without `expect:` checks (`vectors`, `plot`: they want the waves
    /// or the samples, not a verdict); otherwise such a testbench is refused (see
    /// [`require_checks`]).
    pub checks_optional: bool,
    /// `--checks off`: evaluate no `expect:` check and no monitor (crate::check_policy).
    pub checks_off: bool,
    /// Net paths whose every push is recorded (`hwsim vectors`: several messages in a cycle).
    pub log_nets: Vec<String>,
    /// Called with the kernel when the run has ended, to read what it recorded.
    pub on_end: Option<OnEnd>,
    /// `--log`: the event log's selectors (crate::event_log); empty: no log.
    pub log: Vec<String>,
    /// `--log-file`: where the event log goes (stderr without it).
    pub log_file: Option<PathBuf>,
    /// `--log-max`: lines before the log stops (0 with `Default`: the default bound).
    pub log_max: u64,
}

pub use crate::verdict::CheckResult;

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
    let mut el = if l.tb.system.is_some() {
        if !l.tb.instances.is_empty() || !l.tb.stimulus.is_empty() || !l.tb.connect.is_empty() {
            return Err(l.error_at(
                "system",
                "a testbench is either module form (instances) or system form (system), not both",
            ));
        }
        let (nl, info) = crate::system::elaborate(l, seed)?;
        let values = crate::values::registry();
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
    } else {
        if l.tb.instances.is_empty() {
            return Err(InputError::new(
                &l.path,
                "no `instances:` (module form) and no `system:` (system form)",
            ));
        }
        if l.tb.metrics_from.is_some() {
            return Err(l.error_at(
                "metrics_from",
                "metrics_from is for system form (its flows); in module form set a paxi's own `metrics_from` parameter, or a voq_switch's `warmup`",
            ));
        }
        testbench::elaborate(l)?
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
    el.rtl_replaced = crate::rtl::replace::install(l, &mut nl)?
        .into_iter()
        .map(|r| Box::new(move || r.passed()) as Box<dyn Fn() -> CheckResult>)
        .collect();
    let sim = nl.elaborate(seed).map_err(|e| testbench::elab_error(l, e))?;
    crate::registry::check_counter_tables(&sim).map_err(|e| InputError::new(&l.path, e))?;
    if let Some(instances) = instances {
        let m = crate::monitors::MonitorCounters::bind(&instances, &sim).map_err(|e| l.error_at("system", e))?;
        el.monitor_counters = Some(m);
    }
    Ok((sim, el))
}

/// Flow results from the PAXI counters of each flow's source chip (sender side: from the
/// transaction's issue to its last frame's ACK).
fn flows(sim: &Sim, el: &Elaborated) -> Vec<FlowReport> {
    let Some(info) = &el.system else { return Vec::new() };
    info.flows
        .iter()
        .map(|f| {
            let c = |n: &str| {
                sim.counter(&format!("chip{}.paxi.flow{}_{n}", f.src, f.local))
                    .unwrap_or(0)
            };
            let (bytes, first, last, txns) = (c("bytes"), c("first"), c("last"), c("txns"));
            let (first, last) = (first.saturating_sub(1), last.saturating_sub(1));
            let span = last.saturating_sub(first);
            FlowReport {
                name: f.name.clone(),
                bytes,
                first_byte: first,
                last_byte: last,
                goodput: if span > 0 { bytes as f64 / span as f64 } else { 0.0 },
                latency_mean: if txns > 0 {
                    c("lat_sum") as f64 / txns as f64
                } else {
                    0.0
                },
                latency_max: c("lat_max"),
                latency_p50: c("lat_p50"),
                latency_p99: c("lat_p99"),
                latency_p999: c("lat_p999"),
            }
        })
        .collect()
}

/// Aggregate goodput over all flows: bytes / (last completion − first issue).
fn aggregate_goodput(flows: &[FlowReport]) -> f64 {
    let bytes = flows.iter().map(|f| f.bytes).fold(0, u64::saturating_add);
    let first = flows
        .iter()
        .filter(|f| f.bytes > 0)
        .map(|f| f.first_byte)
        .min()
        .unwrap_or(0);
    let last = flows.iter().map(|f| f.last_byte).max().unwrap_or(0);
    if last > first {
        bytes as f64 / (last - first) as f64
    } else {
        0.0
    }
}

/// The sum of the counters `glob` matches, saturating (the byte counters of a thousand chips
/// under a huge --max-memory could pass 2^64 - 1; a wrapped sum would fake the scoreboard).
fn sum(sim: &Sim, glob: &str) -> u64 {
    sim.counters()
        .filter(|(n, _)| hwsim_hw::glob_match(glob, n))
        .map(|(_, v)| v)
        .fold(0, u64::saturating_add)
}

/// Checks every `expect:` entry against the elaborated simulation (names, forms, bounds).
pub fn validate_checks(l: &Loaded, sim: &Sim) -> Result<(), InputError> {
    crate::check_policy::validate(l)?;
    for (i, e) in l.tb.expect.iter().enumerate() {
        // Errors point at this expect's own field, not the first expect naming the same thing.
        let key = ["port", "counter", "metric"]
            .into_iter()
            .zip([&e.port, &e.counter, &e.metric])
            .find_map(|(k, v)| v.is_some().then_some(k))
            .unwrap_or("expect");
        let at = |field: &str, msg: String| l.item_error("expect", i, field, msg);
        let what = [e.port.is_some(), e.counter.is_some(), e.metric.is_some()]
            .iter()
            .filter(|&&b| b)
            .count();
        let label = e
            .port
            .clone()
            .or(e.counter.clone())
            .or(e.metric.clone())
            .unwrap_or_else(|| "expect".into());
        if what != 1 {
            return Err(at(
                key,
                "each expect names exactly one of `port`, `counter`, `metric`".into(),
            ));
        }
        if e.port.is_some() {
            let forms = [e.value.is_some(), e.count.is_some(), e.sequence.is_some()]
                .iter()
                .filter(|&&b| b)
                .count();
            if forms != 1 {
                return Err(at(
                    key,
                    format!("expect on `{label}`: give exactly one of `value`, `count`, `sequence`"),
                ));
            }
            if e.value.is_some() && e.at.is_none() && e.within.is_none() {
                return Err(at(
                    "value",
                    format!("expect on `{label}`: `value` needs `at` or `within`"),
                ));
            }
            if let Some([a, b]) = e.within {
                if a > b {
                    return Err(at("within", format!("expect on `{label}`: within [{a}, {b}] is empty")));
                }
            }
        } else {
            if e.equals.is_none() && e.min.is_none() && e.max.is_none() {
                return Err(at(key, format!("expect on `{label}`: give `equals`, `min` or `max`")));
            }
            if let (Some(lo), Some(hi)) = (e.min.as_ref().and_then(Bound::num), e.max.as_ref().and_then(Bound::num)) {
                if lo > hi {
                    return Err(at(
                        "min",
                        format!("expect on `{label}`: min {lo} > max {hi} can never hold"),
                    ));
                }
            }
            if let Some(r) = &e.reduce {
                if e.counter.is_none() || !["sum", "max", "min"].contains(&r.as_str()) {
                    return Err(at(
                        "reduce",
                        format!("reduce: `{r}` needs a counter and is one of sum, max, min"),
                    ));
                }
            }
            if let Some(c) = &e.counter {
                if !sim.counters().any(|(n, _)| hwsim_hw::glob_match(c, n)) {
                    let known: Vec<&str> = sim.counters().map(|(n, _)| n).take(12).collect();
                    return Err(at(
                        "counter",
                        format!(
                            "no counter matches `{c}` (counters: {}{})",
                            known.join(", "),
                            if sim.counters().count() > 12 { ", …" } else { "" }
                        ),
                    ));
                }
            }
            if let Some(m) = &e.metric {
                // Only results, never the kernel's own work (activations, executed cycles): those
                // differ between skip and --no-skip by design, and a verdict must not.
                if !METRICS.contains(&m.as_str()) {
                    return Err(at(
                        "metric",
                        format!(
                            "unknown metric `{m}` ({}; activations and executed cycles are in --stats)",
                            METRICS.join(", ")
                        ),
                    ));
                }
                let flow_metric = ["goodput", "latency_max", "latency_mean"].contains(&m.as_str());
                if flow_metric && l.tb.system.is_none() {
                    return Err(at(
                        "metric",
                        format!("metric `{m}` needs a system-form testbench (flows)"),
                    ));
                }
                if metric_value(m, sim, 0, &[]).is_none() && !flow_metric {
                    return Err(at(
                        "metric",
                        format!("metric `{m}` needs a switch (voq_switch) in the testbench"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Metrics a check can bound: `end_cycle`; for system form `goodput` (aggregate bytes/ns over
/// the flows), `latency_max` and `latency_mean` (ns, over every transaction); with a switch
/// (`voq_switch`) `throughput` (measured cells delivered per output per slot, 0–1, after its
/// `warmup`; the mean over switches), `mean_delay` and `p99_delay` (cycles from arrival at the
/// input to crossing the crossbar; p99 the worst switch's) and `drops` (cells).
const METRICS: &[&str] = &[
    "end_cycle",
    "goodput",
    "latency_max",
    "latency_mean",
    "throughput",
    "mean_delay",
    "p99_delay",
    "drops",
];

/// A metric's unit (the plot axes print it).
pub fn metric_unit(m: &str) -> Option<&'static str> {
    Some(match m {
        "end_cycle" | "mean_delay" | "p99_delay" => "cycles",
        "goodput" => "bytes/ns",
        "latency_max" | "latency_mean" => "ns",
        "throughput" => "cells per output per slot",
        "drops" => "cells",
        _ => return None,
    })
}

/// A metric's value, or `None` when the run has nothing it measures (no flows, no switch).
fn metric_value(m: &str, sim: &Sim, end: Cycle, flows: &[FlowReport]) -> Option<f64> {
    let switches = sim.counters().filter(|(n, _)| n.ends_with(".throughput_ppm")).count();
    Some(match m {
        "end_cycle" => end as f64,
        "goodput" if !flows.is_empty() => aggregate_goodput(flows),
        "latency_max" if !flows.is_empty() => flows.iter().map(|f| f.latency_max).max().unwrap_or(0) as f64,
        "latency_mean" if !flows.is_empty() => {
            // The flows' sums: every transaction of a system run belongs to a flow, and the
            // flows leave out the warm-up (`metrics_from`).
            let txns: u64 = sum(sim, "*.paxi.flow*_txns");
            if txns > 0 {
                sum(sim, "*.paxi.flow*_lat_sum") as f64 / txns as f64
            } else {
                0.0
            }
        }
        "throughput" if switches > 0 => sum(sim, "*.throughput_ppm") as f64 / 1e6 / switches as f64,
        "mean_delay" if switches > 0 => {
            let n = sum(sim, "*.delivered");
            if n > 0 {
                sum(sim, "*.delay_sum") as f64 / n as f64
            } else {
                0.0
            }
        }
        "p99_delay" if switches > 0 => sim
            .counters()
            .filter(|(n, _)| n.ends_with(".delay_p99"))
            .map(|(_, v)| v)
            .max()
            .unwrap_or(0) as f64,
        "drops" if switches > 0 => sum(sim, "*.drops") as f64,
        _ => return None,
    })
}

/// Evaluates one check against the finished simulation.
fn evaluate(e: &Expect, sim: &Sim, el: &Elaborated, end: Cycle, flows: &[FlowReport]) -> CheckResult {
    if let Some(c) = &e.counter {
        return counter_check(e, c, sim);
    }
    if let Some(m) = &e.metric {
        return metric_check(e, m, sim, end, flows);
    }
    let ep = e.port.as_deref().expect("validated");
    let w = &el.watches[ep];
    let ops = &el.values[&w.type_id];
    let net = sim.net(ep).expect("watched endpoint has a net");
    if let (Some(n), false, None, None) = (e.count, w.log, e.at, e.within) {
        // Every push of the run, counted by the stream itself (no history was kept).
        let got = net.pushes().unwrap_or(0);
        return CheckResult {
            first_difference: None,
            name: e.name.clone().unwrap_or_else(|| format!("{ep} pushes == {n}")),
            passed: got == n,
            expected: n.to_string(),
            actual: got.to_string(),
        };
    }
    let (lo, hi) = match (e.at, e.within) {
        (Some(a), _) => (a, a),
        (None, Some([a, b])) => (a, b),
        (None, None) => (0, Cycle::MAX),
    };
    let window = if (lo, hi) == (0, Cycle::MAX) {
        String::new()
    } else if lo == hi {
        format!(" @ {lo}")
    } else {
        format!(" in [{lo}, {hi}]")
    };
    // Values present in the window: for a signal its value at `lo` and every change after (a
    // value check), or its changes in the window (a count, a sequence); for a stream each push.
    // Only what the check shows or compares is made a YAML value (values::Query).
    let at_lo = w.shape == Shape::Signal && e.count.is_none() && e.sequence.is_none();
    let want_value = e.value.as_ref().filter(|_| e.count.is_none() && e.sequence.is_none());
    let accept = |v: &Value| want_value.is_some_and(|want| yaml::matches(want, v));
    let q = crate::values::Query {
        lo,
        hi,
        at_lo,
        take: match (&e.sequence, e.count) {
            (_, Some(_)) => 0,
            // The sequence, one more (to show an extra), and the 24 the report shows.
            (Some(seq), None) => (seq.len() + 1).max(24),
            (None, None) => 8,
        },
        want: want_value.is_some().then_some(&accept as &dyn Fn(&Value) -> bool),
    };
    let seen = ops
        .history(net.as_ref(), w.shape, &q)
        .unwrap_or_else(|| crate::values::Seen {
            items: if at_lo { vec![(lo, Value::Null)] } else { Vec::new() },
            count: usize::from(at_lo),
            ..Default::default()
        });
    let kind = if w.shape == Shape::Stream { "pushes" } else { "changes" };
    if let Some(n) = e.count {
        return CheckResult {
            first_difference: None,
            name: e.name.clone().unwrap_or_else(|| format!("{ep} {kind}{window} == {n}")),
            passed: seen.count as u64 == n,
            expected: n.to_string(),
            actual: seen.count.to_string(),
        };
    }
    if let Some(seq) = &e.sequence {
        return sequence_check(e, ep, &window, seq, &seen);
    }
    let want = e.value.as_ref().expect("validated");
    let hit = seen.hit.as_ref();
    let actual = match hit {
        Some((c, v)) => format!("{} @ {c}", yaml::show(v)),
        None if seen.count == 0 => {
            // Say what was nearest, to help.
            match &seen.nearest {
                Some((c, v)) => format!("nothing{window}; nearest {} @ {c}", yaml::show(v)),
                None => format!("nothing ever ({kind}: 0)"),
            }
        }
        None => seen
            .items
            .iter()
            .take(8)
            .map(|(c, v)| format!("{} @ {c}", yaml::show(v)))
            .collect::<Vec<_>>()
            .join(", "),
    };
    CheckResult {
        first_difference: None,
        name: e
            .name
            .clone()
            .unwrap_or_else(|| format!("{ep}{window} == {}", yaml::show(want))),
        passed: hit.is_some(),
        expected: yaml::show(want),
        actual,
    }
}

/// A counter check: the counters `c` matches, summed (or their max or min), within bounds.
fn counter_check(e: &Expect, c: &str, sim: &Sim) -> CheckResult {
    let vals = sim
        .counters()
        .filter(|(n, _)| hwsim_hw::glob_match(c, n))
        .map(|(_, v)| v);
    let (x, how) = match e.reduce.as_deref() {
        Some("max") => (vals.max().unwrap_or(0), "max of "),
        Some("min") => (vals.min().unwrap_or(0), "min of "),
        _ => (vals.fold(0, u64::saturating_add), ""),
    };
    CheckResult {
        first_difference: None,
        name: e.name.clone().unwrap_or_else(|| format!("{how}{c} {}", bounds_text(e))),
        passed: within_bounds(e, x as f64),
        expected: bounds_text(e),
        actual: x.to_string(),
    }
}

/// A metric check: the run's figure within bounds (a metric the run lacks reads 0).
fn metric_check(e: &Expect, m: &str, sim: &Sim, end: Cycle, flows: &[FlowReport]) -> CheckResult {
    // A metric the run does not have reads 0 (a switch metric on a chip-only run).
    let x = metric_value(m, sim, end, flows).unwrap_or(0.0);
    CheckResult {
        first_difference: None,
        name: e.name.clone().unwrap_or_else(|| format!("{m} {}", bounds_text(e))),
        passed: within_bounds(e, x),
        expected: bounds_text(e),
        actual: if x.fract() == 0.0 && x.abs() < 1e16 {
            format!("{x}")
        } else if (1e-4..1e16).contains(&x.abs()) {
            format!("{x:.3}")
        } else {
            crate::schema::exact(x)
        },
    }
}

/// A sequence check: the values in the window, in order, match the expected list exactly; the
/// first difference says where they part.
fn sequence_check(e: &Expect, ep: &str, window: &str, seq: &[Value], seen: &crate::values::Seen) -> CheckResult {
    let items = &seen.items;
    let passed = seq.len() == seen.count && seq.iter().zip(items).all(|(x, (_, y))| yaml::matches(x, y));
    let differ = seq.iter().zip(items).position(|(x, (_, y))| !yaml::matches(x, y));
    let first_difference = match differ {
        _ if passed => None,
        Some(i) => Some(format!(
            "item {i}: expected {}, actual {} @ {}",
            yaml::show(&seq[i]),
            yaml::show(&items[i].1),
            items[i].0
        )),
        None if seen.count > seq.len() => Some(format!(
            "{} more than expected from item {}: {} @ {}",
            seen.count - seq.len(),
            seq.len(),
            yaml::show(&items[seq.len()].1),
            items[seq.len()].0
        )),
        None => Some(format!(
            "{} fewer than expected: item {} ({}) never came",
            seq.len() - seen.count,
            seen.count,
            yaml::show(&seq[seen.count])
        )),
    };
    let shown: Vec<String> = items
        .iter()
        .take(24)
        .map(|(c, v)| format!("{}@{c}", yaml::show(v)))
        .collect();
    CheckResult {
        first_difference,
        name: e.name.clone().unwrap_or_else(|| format!("{ep} sequence{window}")),
        passed,
        expected: format!("[{}]", seq.iter().map(yaml::show).collect::<Vec<_>>().join(", ")),
        actual: format!("[{}{}]", shown.join(", "), if seen.count > 24 { ", …" } else { "" }),
    }
}

/// The probes of a run: the testbench's `probe:` (written to `--probe`) and `--stats-every`'s
/// counters, each with its row for cycle 0 written.
fn open_probers(
    l: &Loaded,
    opts: &Options,
    sim: &Sim,
    until: Cycle,
) -> Result<(Option<crate::probe::Prober>, Option<crate::probe::Prober>), InputError> {
    let mut prober = match (&opts.probe, &l.tb.probe) {
        (Some(path), Some(p)) => Some(crate::probe::Prober::new(l, p, sim, path, until)?),
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
            Some(crate::probe::Prober::counters_every(sim, *every, glob, path, until)?)
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
    // The VCD goes to a temporary name and is renamed when complete (crate::output).
    let mut staged = None;
    let writer: Option<Box<dyn Write>> = match (opts.vcd_writer.take(), &opts.vcd) {
        (Some(w), _) => Some(w),
        (None, Some(p)) => {
            let (f, s) = crate::output::stage(p)?;
            staged = Some(s);
            Some(Box::new(f))
        }
        (None, None) => None,
    };
    let vcd_name = opts.vcd.clone().unwrap_or_else(|| PathBuf::from("VCD output"));
    let write_error = |e: std::io::Error| InputError::new(&vcd_name, format!("cannot write: {e}"));
    if let Some(w) = writer {
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
        let mut named: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for p in sim.net_paths() {
            named.insert(p);
            named.extend(p.char_indices().filter(|&(_, c)| c == '.').map(|(i, _)| &p[..i]));
        }
        let selects_some = |g: &str| {
            if g.contains(['*', '?']) {
                let one = [g.to_string()];
                sim.net_paths().iter().any(|p| hwsim_hw::trace_selected(&one, p))
            } else {
                named.contains(g)
            }
        };
        let globs: Vec<String> = globs
            .into_iter()
            .flat_map(|g| {
                crate::waves::nets_of_field_glob(&g, sim.net_paths(), &selects_some, fields).unwrap_or_else(|| vec![g])
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
        let topts = TraceOptions {
            globs,
            from: opts.trace_from,
            to: opts.trace_to,
        };
        match sim.trace_vcd(w, topts) {
            Ok(_) => {}
            Err(SimError::Io(e)) => return Err(write_error(e)),
            Err(e) => return Err(InputError::new(&l.path, format!("trace: {e}"))),
        }
    }

    // The event log (crate::event_log): to a staged file, or to stderr.
    let event_log = crate::event_log::open(&opts.log, opts.log_file.as_deref(), opts.log_max, &mut sim)?;

    // The testbench's probe and the command line's statistics per window, at cycle 0.
    let (mut prober, mut stats) = open_probers(l, &opts, &sim, until)?;
    // RTL beside the model (crate::rtl): fed and compared every cycle.
    let mut shadows = crate::rtl::start(l, &el.rtl_ports, &sim)?;
    let mut diverged = None;
    if !opts.checks_optional && !opts.checks_off {
        require_checks(l)?;
    }
    let mut progress = crate::progress::RunProgress::new(crate::progress::allowed(opts.progress), &l.name(), until);
    let t0 = Instant::now();
    let mut error = None;
    let mut interrupted = false;
    // Run in slices so a long run can report progress and notice an interrupt between two slices
    // (the kernel's hot loop stays untouched); slicing changes nothing in the results: `run`
    // stops at the slice's end without ticking anything.
    // Slices also bound the histories' memory: a refused growth ends the run at the slice's end.
    let mut slice: Cycle = 1 << 14;
    loop {
        if opts.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            interrupted = true;
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
        for p in prober.iter().chain(stats.iter()) {
            target = target.min(p.next());
        }
        if let Some(s) = shadows.first() {
            target = target.min(s.next());
        }
        let ts = Instant::now();
        let stop = sim.run(target);
        if let Some((cycle, net)) = log_budget.refused() {
            return Err(history_over_budget(l, &sim, &log_budget, cycle, net));
        }
        // At a probe time, or at the end of the run if it falls on one.
        if stop.is_ok() {
            if prober.iter().chain(stats.iter()).any(|p| p.next() == sim.now()) {
                // Counters a block keeps lazily, up to now (a rate monitor's ramps).
                sim.settle();
            }
            for p in prober.iter_mut().chain(stats.iter_mut()) {
                p.sample(&sim)?;
            }
        }
        if stop.is_ok() {
            for s in shadows.iter_mut() {
                if let Some(d) = s.step(&sim)? {
                    diverged = Some(d.check);
                    break;
                }
            }
            if diverged.is_some() {
                break;
            }
        }
        match stop {
            Ok(Stop::Quiescent) => break,
            Ok(Stop::Limit) if sim.now() >= until => break,
            Ok(Stop::Limit) => {}
            Err(SimError::Io(e)) => return Err(write_error(e)),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        // Slices of about 50 ms: a smooth bar, and an interrupt or the budget noticed at once.
        if ts.elapsed().as_millis() < 25 && slice < 1 << 30 {
            slice *= 2;
        }
        if let Some(p) = progress.as_mut() {
            p.update(sim.now());
        }
    }
    if let Some(p) = progress {
        p.finish();
    }
    if diverged.is_none() {
        for s in shadows.iter_mut() {
            if let Some(d) = s.finish()? {
                diverged = Some(d.check);
                break;
            }
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let end = match &error {
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
    let probe = match prober {
        Some(p) => Some(p.finish()?),
        None => None,
    };
    let stats_csv = match stats {
        Some(mut p) => {
            sim.settle();
            p.sample_end(&sim)?;
            Some(p.finish()?)
        }
        None => None,
    };
    let flow_reports = flows(&sim, &el);
    let (kept, dropped) = crate::check_policy::select(l, opts.checks_off, seed);
    let kept = crate::check_policy::resolve_bounds(l, kept)?;
    let mut checks: Vec<CheckResult> = kept
        .iter()
        .map(|e| evaluate(e, &sim, &el, end, &flow_reports))
        .collect();
    // A run stopped by a divergence is cut short: its other checks would fail for that alone.
    let stopped_by_rtl = diverged.is_some();
    match diverged {
        Some(d) => checks = vec![d],
        None => {
            checks.extend(shadows.iter().map(crate::rtl::Shadow::passed));
            // A replaced node that broke the protocol stopped the run with an error instead.
            if error.is_none() {
                checks.extend(el.rtl_replaced.iter().map(|f| f()));
            }
        }
    }
    if error.is_none() && !opts.checks_off && !stopped_by_rtl {
        let expects = |what: &str| {
            l.tb.expect
                .iter()
                .any(|e| e.counter.as_deref().is_some_and(|c| c.contains(what)))
        };
        let expected = crate::monitors::Expected {
            fatal: expects("diag_max_retry_hit"),
            mul_timeout: expects("mul_timeouts"),
        };
        if let (Some(info), Some(m)) = (&el.system, &el.monitor_counters) {
            checks.extend(crate::monitors::monitors(
                &sim,
                m,
                info.lossy,
                sim.is_quiescent(),
                expected,
            ));
        }
    }
    let error_text = error.map(|e| e.to_string());
    if let Some(e) = &error_text {
        checks.push(CheckResult {
            first_difference: None,
            name: "run completes without protocol violation".into(),
            passed: false,
            expected: "no violation".into(),
            actual: e.clone(),
        });
    }
    let st = sim.stats();
    let stats = RunStats {
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
    };
    Ok(Report {
        version: crate::explain::VERSION,
        testbench: l.name(),
        file: l.path.display().to_string(),
        seed,
        overrides: l.overrides.iter().map(|o| o.arg.clone()).collect(),
        metrics_from: l.tb.metrics_from,
        cycles: end,
        passed: checks.iter().all(|c| c.passed) && error_text.is_none() && !interrupted,
        checks,
        counters: sim.counters().map(|(n, v)| (n.to_string(), v)).collect(),
        units: crate::registry::counter_units(&sim),
        metrics: METRICS
            .iter()
            .filter_map(|m| metric_value(m, &sim, end, &flow_reports).map(|x| (m.to_string(), x)))
            .collect(),
        flows: flow_reports,
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
