//! What a run reports: the verdict's checks, every counter with its unit, the flows, the
//! metrics and the run's statistics (the runner fills it in, crate::report::render prints it, the JSON
//! report serializes it). Kept apart from both so neither depends on the other.
//!
//! This folder is the report layer: what a run leaves for its user. Beside the report types
//! above, their rendering (`render`), the waves (`waves`, `wave_check`, `gtkw`), `diff`,
//! plots (`plot`, `plot_label`, `csv`), the one output policy every writer obeys (`output`)
//! and `explain`. It uses `input/` and `build/`, never `run/`.

pub mod csv;
pub mod diff;
pub mod explain;
pub mod gtkw;
pub mod histogram;
pub mod output;
pub mod plot;
pub mod plot_label;
pub mod render;
pub mod wave_check;
pub mod waves;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

pub use crate::build::verdict::CheckResult;

/// Run statistics.
#[derive(Clone, Debug, Serialize, Default)]
pub struct RunStats {
    /// Wall time of the run (elaboration excluded), seconds.
    pub wall_s: f64,
    /// Simulated cycles (the end time).
    pub cycles: u64,
    /// Simulated cycles per wall second.
    pub cycles_per_s: f64,
    /// Scheduling entries run: a block, or a same-cycle cluster of blocks once (docs/kernel.md).
    pub activations: u64,
    /// Processes run (a block of one process: its ticks); `by_kind` breaks them down.
    pub process_runs: u64,
    /// Ticks per wall second.
    pub activations_per_s: f64,
    /// Cycles executed.
    pub executed_cycles: u64,
    /// Cycles jumped by event skip.
    pub skipped_cycles: u64,
    /// Peak resident memory of the process, bytes (Linux VmHWM).
    pub peak_rss_bytes: u64,
    /// Activations per block kind and process, most first: what a profile of the run names.
    pub by_kind: Vec<KindActivations>,
}

/// The activations of one process of one block kind, over all its instances.
#[derive(Clone, Debug, Serialize, Default, PartialEq)]
pub struct KindActivations {
    /// Block kind.
    pub kind: String,
    /// Process (0 is the block's `tick`).
    pub process: u32,
    /// Instances of the kind.
    pub instances: u64,
    /// Activations of that process over all instances.
    pub activations: u64,
}

impl KindActivations {
    /// Sums `(kind, process, activations)` rows (one per block instance and process) per kind and
    /// process, most activations first (then by kind and process, for stable output).
    pub fn summarize<'a>(rows: impl IntoIterator<Item = (&'a str, u32, u64)>) -> Vec<KindActivations> {
        let mut m: BTreeMap<(&str, u32), (u64, u64)> = BTreeMap::new();
        for (kind, process, n) in rows {
            let e = m.entry((kind, process)).or_default();
            e.0 += 1;
            e.1 += n;
        }
        let mut v: Vec<KindActivations> = m
            .into_iter()
            .map(|((kind, process), (instances, activations))| KindActivations {
                kind: kind.to_string(),
                process,
                instances,
                activations,
            })
            .collect();
        v.sort_by_key(|k| std::cmp::Reverse(k.activations));
        v
    }
}

/// Per-flow results (filled by system-form testbenches).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowReport {
    /// Flow label.
    pub name: String,
    /// Payload bytes delivered.
    pub bytes: u64,
    /// Cycle of the first byte.
    pub first_byte: u64,
    /// Cycle of the last byte.
    pub last_byte: u64,
    /// bytes / (last − first), bytes per ns.
    pub goodput: f64,
    /// Mean transaction latency, ns.
    pub latency_mean: f64,
    /// Worst transaction latency, ns.
    pub latency_max: u64,
    /// Median transaction latency, ns (nearest rank over every transaction of the flow: the
    /// PAXI's `flow*_lat_p50`).
    pub latency_p50: u64,
    /// 99th-percentile transaction latency, ns (`flow*_lat_p99`).
    pub latency_p99: u64,
    /// 99.9th-percentile transaction latency, ns (`flow*_lat_p999`).
    pub latency_p999: u64,
}

/// The report of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The hwsim that made it: package version and git commit.
    pub version: &'static str,
    /// Testbench name.
    pub testbench: String,
    /// Its file.
    pub file: String,
    /// The seed used.
    pub seed: u64,
    /// The `--set` overrides applied to the testbench, as given.
    pub overrides: Vec<String>,
    /// The warm-up (`metrics_from`, cycles): the flows and their metrics count only the
    /// transactions issued from then on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_from: Option<u64>,
    /// End time in cycles.
    pub cycles: u64,
    /// Every check passed and no protocol violation.
    pub passed: bool,
    /// Checks.
    pub checks: Vec<CheckResult>,
    /// Counters by hierarchical name.
    pub counters: BTreeMap<String, u64>,
    /// Each counter's unit, from the counter table of the block kind that registers it.
    pub units: BTreeMap<String, &'static str>,
    /// Flows.
    pub flows: Vec<FlowReport>,
    /// Every flow's transactions over every chip: exact percentiles and power-of-two buckets
    /// (system runs with a transaction done).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<histogram::LatencyHistogram>,
    /// The figures a study plots (`METRICS`): `end_cycle` always; `goodput`, `latency_max`,
    /// `latency_mean` for system runs; `throughput`, `mean_delay`, `p99_delay`, `drops` when the
    /// run has a switch, `offered` with a cell source and `saturated` (0 or 1) with both.
    pub metrics: BTreeMap<String, f64>,
    /// Statistics.
    pub stats: RunStats,
    /// A protocol violation that stopped the run.
    pub error: Option<String>,
    /// The run was stopped by SIGINT / SIGTERM at `cycles`; counters and checks are as of then.
    pub interrupted: bool,
    /// `--checks off`: no `expect:` check and no monitor was evaluated (`passed` then says only
    /// that no protocol violation stopped the run; the verdict is `-`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub checks_off: bool,
    /// Checks pinned to a parameter an override changed: not evaluated (crate::build::check_policy).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<crate::build::check_policy::Dropped>,
    /// The probe CSV written, and its rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<(PathBuf, u64)>,
    /// The `--stats-csv` written (`--stats-every`), and its rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats_csv: Option<(PathBuf, u64)>,
    /// Net paths declared levels (for the GTKWave save file; not part of the report).
    #[serde(skip)]
    pub levels: Vec<String>,
}

impl Report {
    /// One run's counters as CSV: `counter,value,unit` (the unit from the counter table of the
    /// block that registers it), one row per counter in name order.
    pub fn counters_csv(&self) -> String {
        let mut s = String::from("counter,value,unit\n");
        for (name, v) in &self.counters {
            let unit = self.units.get(name).copied().unwrap_or("");
            s.push_str(&format!("{name},{v},{unit}\n"));
        }
        s
    }
}
