//! `hwsim sweep`: a testbench run over a grid of `--set` values (the cross product, or `--zip`),
//! each point with `--seeds N` seeds derived from the testbench's seed and the point's values,
//! in parallel threads. Every run leaves its report (`point_K.json`, as `hwsim run --json`);
//! the table (`sweep.csv`, `sweep.json`: parameters, seed, verdict, metrics, chosen counters)
//! and the plots (a metric against a parameter, one line per combination of the other
//! parameters, mean over seeds with min/max error bars, SVG and PNG) are built from those
//! reports, so a sweep run elsewhere (`--emit slurm|parallel DIR`, then `--collect DIR`) gives
//! the same table and plots. Same testbench, values and seeds: the same bytes, whatever `-j`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hwsim_hw::rng::{fnv1a, splitmix64};
use serde::{Deserialize, Serialize};

use crate::build::testbench;
use crate::input::overrides::{self, Override};
use crate::input::yaml::InputError;
use crate::run::runner::{self, Options};

/// The table, the chart and the summary, from the runs' reports.
mod table;
pub use table::*;

/// The plan of a sweep: what runs, with which values and seeds (`plan.json` in the folder).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The testbench (as given).
    pub testbench: PathBuf,
    /// Parameter paths, one per `--set`.
    pub params: Vec<String>,
    /// Every run: its values (one per parameter, as written) and seed.
    pub runs: Vec<PlannedRun>,
    /// The metric plotted (default: goodput, else throughput, else the first metric).
    pub metric: Option<String>,
    /// The parameter on the x axis (default: the first).
    pub x: String,
    /// Counter globs whose counters become columns.
    pub counters: Vec<String>,
    /// `--checks off`: the runs evaluate no check (verdict `-`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checks_off: bool,
    /// `--logx`: a log x axis (without it: when the values are positive and span 100× or more).
    /// Given to the command that draws (the sweep, or `--collect`), not kept in `plan.json`.
    #[serde(skip)]
    pub log_x: bool,
    /// `--logy`: a log y axis (as `log_x`, not kept).
    #[serde(skip)]
    pub log_y: bool,
}

/// One run of a sweep.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PlannedRun {
    /// Grid point (runs of one point differ only in the seed).
    pub point: usize,
    /// Values, one per parameter.
    pub values: Vec<String>,
    /// Seed.
    pub seed: u64,
}

impl PlannedRun {
    /// The run's `--set` arguments.
    pub fn sets(&self, params: &[String]) -> Vec<String> {
        params
            .iter()
            .zip(&self.values)
            .map(|(p, v)| format!("{p}={v}"))
            .collect()
    }
}

fn arg_error(arg: &str, msg: impl Into<String>) -> InputError {
    InputError::new(Path::new(arg), msg)
}

/// Splits `V1,V2,…` at the commas outside brackets and quotes (`[1, 2],{a: 1}` is two values).
pub fn split_values(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, None::<char>, String::new());
    for ch in text.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_string());
    out
}

/// The seed of run `s` of the point with these `--set` arguments: a hash of the testbench's seed,
/// the arguments and `s` (adding a value to a sweep leaves the other points' seeds alone). Kept
/// below 2^53 so it reads back exactly from JSON everywhere.
pub fn derive_seed(base: u64, sets: &[String], s: u64) -> u64 {
    let h = fnv1a(&sets.join(";"));
    splitmix64(splitmix64(base ^ h).wrapping_add(s)) >> 11
}

/// What `hwsim sweep` was asked.
pub struct Request<'a> {
    /// Testbench.
    pub testbench: &'a Path,
    /// `PATH=V1,V2,…` arguments.
    pub sets: &'a [String],
    /// Zip the value lists instead of the cross product.
    pub zip: bool,
    /// Seeds per point.
    pub seeds: u64,
    /// Metric to plot.
    pub metric: Option<String>,
    /// X parameter.
    pub x: Option<String>,
    /// Counter globs.
    pub counters: Vec<String>,
    /// `--checks off`.
    pub checks_off: bool,
}

/// Builds the plan, checking every point's overrides against the testbench (an error names the
/// `--set` argument and value).
pub fn plan(r: &Request) -> Result<Plan, InputError> {
    if r.sets.is_empty() {
        return Err(arg_error("--set", "a sweep needs at least one `--set PATH=V1,V2,…`"));
    }
    if r.seeds == 0 || r.seeds > 10_000 {
        return Err(arg_error("--seeds", format!("{} out of range 1..=10000", r.seeds)));
    }
    let mut params = Vec::new();
    let mut lists = Vec::new();
    for a in r.sets {
        let Some((p, vals)) = a.split_once('=') else {
            return Err(arg_error(&format!("--set {a}"), "expected PATH=V1,V2,…"));
        };
        let vals = split_values(vals);
        if vals.iter().any(|v| v.is_empty()) {
            return Err(arg_error(&format!("--set {a}"), "an empty value in the list"));
        }
        let p = p.trim().to_string();
        if params.contains(&p) {
            return Err(arg_error(&format!("--set {a}"), format!("`{p}` is swept twice")));
        }
        params.push(p);
        lists.push(vals);
    }
    let grid: Vec<Vec<String>> = if r.zip {
        let n = lists[0].len();
        if let Some((i, l)) = lists.iter().enumerate().find(|(_, l)| l.len() != n) {
            return Err(arg_error(
                &format!("--set {}", r.sets[i]),
                format!(
                    "--zip needs lists of one length: {} values here, {n} in the first",
                    l.len()
                ),
            ));
        }
        (0..n).map(|k| lists.iter().map(|l| l[k].clone()).collect()).collect()
    } else {
        let mut g: Vec<Vec<String>> = vec![Vec::new()];
        for l in &lists {
            g = g
                .into_iter()
                .flat_map(|pre| {
                    l.iter().map(move |v| {
                        let mut p = pre.clone();
                        p.push(v.clone());
                        p
                    })
                })
                .collect();
        }
        g
    };
    let total = grid.len() as u64 * r.seeds;
    if total > 100_000 {
        return Err(arg_error("--set", format!("{total} runs: more than 100000")));
    }
    let base = testbench::load(r.testbench)?;
    let mut runs = Vec::new();
    for (point, values) in grid.into_iter().enumerate() {
        let sets: Vec<String> = params.iter().zip(&values).map(|(p, v)| format!("{p}={v}")).collect();
        let ovs = sets
            .iter()
            .map(|a| overrides::parse(a))
            .collect::<Result<Vec<_>, _>>()?;
        testbench::load_with(r.testbench, &ovs)?;
        for s in 0..r.seeds {
            runs.push(PlannedRun {
                point,
                values: values.clone(),
                seed: derive_seed(base.tb.seed, &sets, s),
            });
        }
    }
    let x = r.x.clone().unwrap_or_else(|| params[0].clone());
    if !params.contains(&x) {
        return Err(arg_error(
            &format!("--x {x}"),
            format!("not a swept parameter ({})", params.join(", ")),
        ));
    }
    Ok(Plan {
        testbench: r.testbench.to_path_buf(),
        params,
        runs,
        metric: r.metric.clone(),
        x,
        counters: r.counters.clone(),
        checks_off: r.checks_off,
        log_x: false,
        log_y: false,
    })
}

/// The report file of run `k`.
pub fn point_file(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("point_{k}.json"))
}

/// Runs the plan on `jobs` threads, writing each report to `dir/point_K.json`. `done` is called
/// after each run (a progress bar). Once `interrupt` is set (SIGINT / SIGTERM) no run starts, and
/// the running ones stop at their current cycle and write their report (marked interrupted).
pub fn run(
    plan: &Plan,
    dir: &Path,
    jobs: usize,
    done: &(dyn Fn() + Sync),
    interrupt: Option<&Arc<AtomicBool>>,
) -> Result<(), InputError> {
    let stopped = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
    let next = AtomicUsize::new(0);
    let first_error: Mutex<Option<(usize, InputError)>> = Mutex::new(None);
    // No more threads than runs; a thread the OS refuses leaves the work to the others.
    let threads = jobs.clamp(1, plan.runs.len().max(1));
    let mut started = 0;
    std::thread::scope(|s| {
        for _ in 0..threads {
            let spawned = std::thread::Builder::new().spawn_scoped(s, || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= plan.runs.len() || stopped() || first_error.lock().is_ok_and(|e| e.is_some()) {
                    break;
                }
                let r = &plan.runs[k];
                let result = r
                    .sets(&plan.params)
                    .iter()
                    .map(|a| overrides::parse(a))
                    .collect::<Result<Vec<Override>, _>>()
                    .and_then(|ovs| testbench::load_with(&plan.testbench, &ovs))
                    .and_then(|l| {
                        runner::run_loaded(
                            &l,
                            Options {
                                seed: Some(r.seed),
                                interrupt: interrupt.cloned(),
                                checks_off: plan.checks_off,
                                ..Options::default()
                            },
                        )
                    })
                    .and_then(|rep| {
                        let text = serde_json::to_string_pretty(&rep).expect("report serializes");
                        crate::report::output::write_file(&point_file(dir, k), (text + "\n").as_bytes())
                    });
                if let Err(e) = result {
                    let mut slot = first_error.lock().expect("no poisoned lock");
                    if slot.as_ref().is_none_or(|(k0, _)| k < *k0) {
                        *slot = Some((k, e));
                    }
                }
                done();
            });
            if spawned.is_err() {
                break;
            }
            started += 1;
        }
    });
    if started == 0 {
        return Err(arg_error("-j", "the system refused every thread for the runs"));
    }
    match first_error.into_inner().expect("no poisoned lock") {
        Some((k, e)) => {
            let r = &plan.runs[k];
            Err(InputError {
                message: format!("run {k} (seed {}): {}", r.seed, e.message),
                ..e
            })
        }
        None => Ok(()),
    }
}

/// Writes `dir/plan.json`.
pub fn write_plan(plan: &Plan, dir: &Path) -> Result<(), InputError> {
    let text = serde_json::to_string_pretty(plan).expect("plan serializes") + "\n";
    crate::report::output::write_file(&dir.join("plan.json"), text.as_bytes())
}

/// Reads `dir/plan.json`.
pub fn read_plan(dir: &Path) -> Result<Plan, InputError> {
    let f = dir.join("plan.json");
    let text = std::fs::read_to_string(&f).map_err(|e| {
        InputError::new(
            &f,
            format!("cannot read: {e} (a folder from `hwsim sweep --emit` or `--out`)"),
        )
    })?;
    let plan: Plan = serde_json::from_str(&text).map_err(|e| InputError::new(&f, format!("not a sweep plan: {e}")))?;
    // A plan written by hand (or by another version) must still fit together.
    if !plan.params.contains(&plan.x) {
        return Err(InputError::new(
            &f,
            format!("not a sweep plan: x `{}` is not one of its parameters", plan.x),
        ));
    }
    if let Some((k, r)) = plan
        .runs
        .iter()
        .enumerate()
        .find(|(_, r)| r.values.len() != plan.params.len())
    {
        return Err(InputError::new(
            &f,
            format!(
                "not a sweep plan: run {k} has {} value(s) for {} parameter(s)",
                r.values.len(),
                plan.params.len()
            ),
        ));
    }
    Ok(plan)
}

/// A name made safe to be part of one file name (a metric or a parameter in a plot's name):
/// anything but letters, digits, `_` and `-` becomes `_`, so `--metric ../../x` stays in the
/// folder.
pub fn file_part(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

/// The files a sweep writes into `dir` for `plan`: `plan.json` and the reports (`runs`), the
/// table and plots (`table`, with the metric that names them), the job script of `emit`.
pub fn outputs(plan: &Plan, dir: &Path, runs: bool, table: Option<&str>, emit: Option<&str>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if runs || emit.is_some() {
        v.push(dir.join("plan.json"));
    }
    if runs {
        v.extend((0..plan.runs.len()).map(|k| point_file(dir, k)));
    }
    if let Some(metric) = table {
        let leaf = plan.x.rsplit('.').next().unwrap_or(&plan.x);
        let (m, x) = (file_part(metric), file_part(leaf));
        v.push(dir.join("sweep.csv"));
        v.push(dir.join("sweep.json"));
        v.push(dir.join(format!("{m}_vs_{x}.svg")));
        v.push(dir.join(format!("{m}_vs_{x}.png")));
    }
    match emit {
        Some("slurm") => v.push(dir.join("sweep.slurm")),
        Some(_) => v.push(dir.join("jobs.txt")),
        None => {}
    }
    v
}

/// Refuses a sweep whose outputs would overwrite one of its inputs (the testbench, an include,
/// a collected folder's plan or reports) or each other.
pub fn check_outputs(inputs: &[PathBuf], outputs: &[PathBuf]) -> Result<(), InputError> {
    let named: Vec<(&str, &Path)> = outputs.iter().map(|p| ("sweep output", p.as_path())).collect();
    crate::report::output::check_outputs(inputs, &named).map_err(|m| arg_error("sweep", m))
}

/// Before a run into `dir`: removes the reports an earlier sweep's `plan.json` there lists (so
/// they cannot mix in), and refuses a `point_K.json` that no such plan lists (it is not ours to
/// delete or to read as a result).
pub fn clear_old_reports(dir: &Path) -> Result<(), InputError> {
    let old = read_plan(dir).ok().map_or(0, |p| p.runs.len());
    let mut foreign = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let digits = name.strip_prefix("point_").and_then(|r| r.strip_suffix(".json"));
        let Some(k) = digits
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<usize>().ok())
        else {
            continue;
        };
        if k < old && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        } else {
            foreign.push(name);
        }
    }
    if let Some(f) = foreign.first() {
        return Err(InputError::new(
            &dir.join(f),
            format!(
                "exists, and no plan.json of an earlier sweep in {} lists it: move it, or give --out a folder of its own",
                dir.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_outside_brackets_and_quotes() {
        assert_eq!(split_values("1e-4, 1e-3,1e-2"), ["1e-4", "1e-3", "1e-2"]);
        assert_eq!(
            split_values("[1, 2],{a: 1, b: 2},'x,y'"),
            ["[1, 2]", "{a: 1, b: 2}", "'x,y'"]
        );
    }

    #[test]
    fn seeds_are_stable_and_distinct() {
        let a = derive_seed(1, &["p=1".into()], 0);
        assert_eq!(a, derive_seed(1, &["p=1".into()], 0));
        assert_ne!(a, derive_seed(1, &["p=1".into()], 1));
        assert_ne!(a, derive_seed(1, &["p=2".into()], 0));
        assert_ne!(a, derive_seed(2, &["p=1".into()], 0));
        assert!(a < 1 << 53);
        // Pinned: a sweep's per-point seeds (and so its results) must not move when the hash
        // code does (these are the figures of the FNV-1a + SplitMix64 it has always used).
        assert_eq!(a, 6558298708376585);
        assert_eq!(derive_seed(7, &["a=1".into(), "b=2".into()], 3), 2700981938911219);
    }

    #[test]
    fn the_y_axis_names_the_unit_of_a_metric_or_of_a_counter() {
        let plan = Plan {
            testbench: "t.yaml".into(),
            params: vec!["p".into()],
            runs: vec![PlannedRun {
                point: 0,
                values: vec!["1".into()],
                seed: 1,
            }],
            metric: None,
            x: "p".into(),
            counters: vec!["*.frames_sent".into()],
            checks_off: false,
            log_x: false,
            log_y: false,
        };
        let c = "chip0.lg0.tx.frames_sent".to_string();
        let row = Row {
            run: 0,
            planned: plan.runs[0].clone(),
            verdict: "PASS".into(),
            dropped: Vec::new(),
            reported: true,
            passed: 1,
            checks: 1,
            cycles: 10,
            metrics: [("goodput".to_string(), 1.5)].into(),
            counters: [(c.clone(), 3)].into(),
            units: [(c.clone(), "frames".to_string())].into(),
        };
        let rows = [row];
        assert_eq!(chart(&plan, &rows, "goodput").y_label, "goodput (bytes/ns)");
        assert_eq!(chart(&plan, &rows, &c).y_label, format!("{c} (frames)"));
    }
}
