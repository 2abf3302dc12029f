//! A sweep's table: a row per run read back from its report, the CSV and JSON tables, the chart
//! of a metric against a parameter, the summary under the table.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::input::yaml::InputError;
use crate::report::plot::{self, Chart, Series};

use super::*;

/// One row of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Run index.
    pub run: usize,
    /// The planned run.
    pub planned: PlannedRun,
    /// PASS, FAIL, `-` (nothing checked: `--checks off`, or every check dropped), INTR (cut
    /// short by an interrupt, or not run because of one: see [`mark_interrupted`]), or MISSING
    /// (no report).
    pub verdict: String,
    /// The checks the run dropped (pinned to a swept parameter), as notes.
    pub dropped: Vec<String>,
    /// Whether the run's report was read (the counts and metrics are its).
    pub reported: bool,
    /// Checks passed.
    pub passed: u64,
    /// Checks.
    pub checks: u64,
    /// End cycle.
    pub cycles: u64,
    /// Metrics.
    pub metrics: BTreeMap<String, f64>,
    /// Chosen counters.
    pub counters: BTreeMap<String, u64>,
    /// Their units, from the report (`units`).
    pub units: BTreeMap<String, String>,
}

/// Reads the reports of a plan's runs from `dir` into rows (a missing report: verdict MISSING).
pub fn rows(plan: &Plan, dir: &Path) -> Result<Vec<Row>, InputError> {
    let mut out = Vec::new();
    for (k, r) in plan.runs.iter().enumerate() {
        let f = point_file(dir, k);
        let mut row = Row {
            run: k,
            planned: r.clone(),
            verdict: "MISSING".into(),
            dropped: Vec::new(),
            reported: false,
            passed: 0,
            checks: 0,
            cycles: 0,
            metrics: BTreeMap::new(),
            counters: BTreeMap::new(),
            units: BTreeMap::new(),
        };
        if f.exists() {
            let text = std::fs::read_to_string(&f).map_err(|e| InputError::new(&f, format!("cannot read: {e}")))?;
            let j: Json = serde_json::from_str(&text).map_err(|e| InputError::new(&f, format!("not a report: {e}")))?;
            let bad = || InputError::new(&f, "not an `hwsim run --json` report");
            if j["seed"].as_u64() != Some(r.seed) {
                return Err(InputError::new(
                    &f,
                    format!("seed {} in the report, {} in the plan", j["seed"], r.seed),
                ));
            }
            let checks = j["checks"].as_array().ok_or_else(bad)?;
            row.checks = checks.len() as u64;
            row.passed = checks.iter().filter(|c| c["passed"] == Json::Bool(true)).count() as u64;
            row.cycles = j["cycles"].as_u64().ok_or_else(bad)?;
            row.reported = true;
            row.verdict = crate::build::check_policy::verdict(
                j["passed"] == Json::Bool(true),
                j["interrupted"] == Json::Bool(true),
                j["checks_off"] == Json::Bool(true),
                checks.len(),
            )
            .into();
            row.dropped = crate::run::sweep_notes::dropped(&j["dropped"]);
            for (m, v) in j["metrics"].as_object().ok_or_else(bad)? {
                if let Some(x) = v.as_f64() {
                    row.metrics.insert(m.clone(), x);
                }
            }
            for (c, v) in j["counters"].as_object().ok_or_else(bad)? {
                if plan.counters.iter().any(|g| hwsim_hw::glob_match(g, c)) {
                    row.counters.insert(c.clone(), v.as_u64().unwrap_or(0));
                    if let Some(u) = j["units"][c.as_str()].as_str() {
                        row.units.insert(c.clone(), u.to_string());
                    }
                }
            }
        }
        out.push(row);
    }
    Ok(out)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Metric and counter columns: every name any row has, sorted.
fn columns(rows: &[Row]) -> (Vec<String>, Vec<String>) {
    let m: BTreeSet<&String> = rows.iter().flat_map(|r| r.metrics.keys()).collect();
    let c: BTreeSet<&String> = rows.iter().flat_map(|r| r.counters.keys()).collect();
    (m.into_iter().cloned().collect(), c.into_iter().cloned().collect())
}

/// The table as CSV.
pub fn csv(plan: &Plan, rows: &[Row]) -> String {
    let (mcols, ccols) = columns(rows);
    let mut s = String::new();
    let mut head = vec!["run".to_string(), "point".into()];
    head.extend(plan.params.iter().cloned());
    head.extend(["seed", "verdict", "checks_passed", "checks", "cycles"].map(String::from));
    head.extend(mcols.iter().cloned());
    head.extend(ccols.iter().cloned());
    let _ = writeln!(s, "{}", head.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(","));
    for r in rows {
        let mut f = vec![r.run.to_string(), r.planned.point.to_string()];
        f.extend(r.planned.values.iter().cloned());
        f.push(r.planned.seed.to_string());
        f.push(r.verdict.clone());
        if !r.reported {
            f.extend(["", "", ""].map(String::from));
        } else {
            f.extend([r.passed, r.checks, r.cycles].map(|x| x.to_string()));
        }
        f.extend(
            mcols
                .iter()
                .map(|m| r.metrics.get(m).map(|x| x.to_string()).unwrap_or_default()),
        );
        f.extend(
            ccols
                .iter()
                .map(|c| r.counters.get(c).map(|x| x.to_string()).unwrap_or_default()),
        );
        let _ = writeln!(s, "{}", f.iter().map(|x| csv_field(x)).collect::<Vec<_>>().join(","));
    }
    s
}

/// The table as JSON: `{testbench, params, rows: [{run, point, params: {…}, seed, verdict, …}]}`.
pub fn json(plan: &Plan, rows: &[Row]) -> String {
    let rows: Vec<Json> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "run": r.run,
                "point": r.planned.point,
                "params": plan.params.iter().zip(&r.planned.values).map(|(p, v)| (p.clone(), Json::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
                "seed": r.planned.seed,
                "verdict": r.verdict,
                "checks_passed": r.passed,
                "checks": r.checks,
                "cycles": r.cycles,
                "metrics": r.metrics,
                "counters": r.counters,
                "dropped": r.dropped,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "testbench": plan.testbench.display().to_string(),
        "params": plan.params,
        "checks": if plan.checks_off { "off" } else { "on" },
        "rows": rows,
    });
    serde_json::to_string_pretty(&doc).expect("table serializes") + "\n"
}

/// The metric a plan plots: as asked, else goodput, throughput, or the first the rows have.
pub fn metric_of(plan: &Plan, rows: &[Row]) -> Result<String, InputError> {
    let (mcols, ccols) = columns(rows);
    match &plan.metric {
        // Nothing reported yet (a collect before the jobs ran): the plot is empty.
        Some(m) if mcols.contains(m) || ccols.contains(m) || mcols.is_empty() => Ok(m.clone()),
        Some(m) => Err(arg_error(
            &format!("--metric {m}"),
            format!(
                "no such metric or counter column (metrics: {}; counters: --counter GLOB)",
                mcols.join(", ")
            ),
        )),
        None => Ok(["goodput", "throughput"]
            .iter()
            .map(|s| s.to_string())
            .find(|m| mcols.contains(m))
            .or_else(|| mcols.first().cloned())
            .unwrap_or_else(|| "end_cycle".into())),
    }
}

/// The chart of `metric` against the plan's x parameter.
pub fn chart(plan: &Plan, rows: &[Row], metric: &str) -> Chart {
    let xi = plan.params.iter().position(|p| p == &plan.x).unwrap_or(0);
    let x_values: Vec<String> = {
        let mut seen = Vec::new();
        for r in rows {
            if !seen.contains(&r.planned.values[xi]) {
                seen.push(r.planned.values[xi].clone());
            }
        }
        seen
    };
    let numeric: Option<Vec<f64>> = x_values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let x_of = |v: &str| match &numeric {
        Some(_) => v.parse::<f64>().unwrap_or(0.0),
        None => x_values.iter().position(|x| x == v).unwrap_or(0) as f64,
    };
    // Group by the other parameters' values, in the order they first appear.
    let mut groups: Vec<(String, BTreeMap<String, Vec<f64>>)> = Vec::new();
    for r in rows {
        let y = r
            .metrics
            .get(metric)
            .copied()
            .or_else(|| r.counters.get(metric).map(|&c| c as f64));
        let Some(y) = y else { continue };
        let label = plan
            .params
            .iter()
            .zip(&r.planned.values)
            .enumerate()
            .filter(|(i, _)| *i != xi)
            .map(|(_, (p, v))| format!("{}={v}", p.rsplit('.').next().unwrap_or(p)))
            .collect::<Vec<_>>()
            .join(", ");
        let gi = match groups.iter().position(|(l, _)| *l == label) {
            Some(i) => i,
            None => {
                groups.push((label, BTreeMap::new()));
                groups.len() - 1
            }
        };
        groups[gi].1.entry(r.planned.values[xi].clone()).or_default().push(y);
    }
    let series = groups
        .into_iter()
        .map(|(label, by_x)| {
            let mut points: Vec<(f64, f64, f64, f64)> = by_x
                .iter()
                .map(|(xv, ys)| {
                    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
                    let lo = ys.iter().cloned().fold(f64::INFINITY, f64::min);
                    let hi = ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    (x_of(xv), mean, lo, hi)
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { label, points }
        })
        .collect();
    let xs: Vec<f64> = x_values.iter().map(|v| x_of(v)).collect();
    let seeds = rows.iter().filter(|r| r.planned.point == 0).count();
    Chart {
        title: format!(
            "{metric} vs {} ({}; mean of {seeds} seed(s), band and bars min..max)",
            plan.x.rsplit('.').next().unwrap_or(&plan.x),
            plan.testbench
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
        x_label: match &numeric {
            Some(_) => plot::options::param_label_in(&plan.testbench, &plan.x),
            None => format!(
                "{} ({})",
                plot::options::param_label_in(&plan.testbench, &plan.x),
                x_values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| format!("{i} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        // The unit from the metric's definition or the counter's table, as the report gives it.
        y_label: match crate::run::runner::metric_unit(metric)
            .map(str::to_string)
            .or_else(|| rows.iter().find_map(|r| r.units.get(metric).cloned()))
        {
            Some(u) => format!("{metric} ({u})"),
            None => metric.to_string(),
        },
        log_x: plan.log_x || (numeric.is_some() && plot::wants_log(&xs)),
        log_y: plan.log_y,
        series,
    }
}

/// Writes the plan, table and plots into `dir`; returns the files written and a summary.
pub fn write_outputs(
    plan: &Plan,
    rows: &[Row],
    dir: &Path,
    look: &plot::options::Look,
) -> Result<(Vec<PathBuf>, String), InputError> {
    let metric = metric_of(plan, rows)?;
    let files = outputs(plan, dir, false, Some(&metric), None);
    crate::report::output::write_file(&files[0], csv(plan, rows).as_bytes())?;
    crate::report::output::write_file(&files[1], json(plan, rows).as_bytes())?;
    let mut c = chart(plan, rows, &metric);
    look.apply(&mut c);
    plot::check_log(&c).map_err(|e| InputError {
        message: format!(
            "{} (the table is written; `hwsim sweep --collect {}` without the option draws the plots)",
            e.message,
            dir.display()
        ),
        ..e
    })?;
    plot::write_sized(&files[2], &c, look.size)?;
    plot::write_sized(&files[3], &c, look.size)?;
    Ok((files.to_vec(), summary(plan, rows, &metric)))
}

/// After an interrupted sweep: the runs that never started (no report) are INTR, not MISSING.
pub fn mark_interrupted(rows: &mut [Row]) {
    for r in rows.iter_mut().filter(|r| !r.reported) {
        r.verdict = "INTR".into();
    }
}

/// The table only (`sweep.csv`, `sweep.json`), for an interrupted sweep whose runs gave no metric
/// to plot.
pub fn write_tables(plan: &Plan, rows: &[Row], dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let files = [dir.join("sweep.csv"), dir.join("sweep.json")];
    crate::report::output::write_file(&files[0], csv(plan, rows).as_bytes())?;
    crate::report::output::write_file(&files[1], json(plan, rows).as_bytes())?;
    Ok(files.to_vec())
}

/// An aligned table of the runs: values, seed, verdict, the plotted metric.
pub fn summary(plan: &Plan, rows: &[Row], metric: &str) -> String {
    let mut head: Vec<String> = plan.params.clone();
    head.extend(["seed".into(), "verdict".into(), metric.to_string()]);
    // With a cell source and a switch, each point's offered load and whether the switch
    // accepted it (crate::run::runner's `saturated`).
    let load = rows.iter().any(|r| r.metrics.contains_key("saturated"));
    if load {
        head.extend(["offered".into(), "saturated".into()]);
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut f = r.planned.values.clone();
            f.push(r.planned.seed.to_string());
            f.push(r.verdict.clone());
            f.push(
                r.metrics
                    .get(metric)
                    .map(|&x| crate::report::render::number(x))
                    .or_else(|| r.counters.get(metric).map(|c| c.to_string()))
                    .unwrap_or_default(),
            );
            if load {
                f.push(
                    r.metrics
                        .get("offered")
                        .map_or_else(String::new, |&x| format!("{x:.3}")),
                );
                f.push(match r.metrics.get("saturated") {
                    Some(&x) if x > 0.0 => "yes".into(),
                    Some(_) => "no".into(),
                    None => String::new(),
                });
            }
            f
        })
        .collect();
    let w: Vec<usize> = (0..head.len())
        .map(|i| {
            body.iter()
                .map(|r| r[i].len())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |f: &[String]| {
        f.iter()
            .zip(&w)
            .map(|(x, w)| format!("{x:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut s = line(&head) + "\n";
    for r in &body {
        s += &(line(r) + "\n");
    }
    let count = |v: &str| rows.iter().filter(|r| r.verdict == v).count();
    let saturated = rows
        .iter()
        .filter(|r| r.metrics.get("saturated").is_some_and(|&x| x > 0.0))
        .count();
    let _ = writeln!(
        s,
        "{} runs: {} passed, {} failed{}{}{}",
        rows.len(),
        count("PASS"),
        count("FAIL"),
        if load {
            format!(
                ", {saturated} saturated (throughput below {:.0} % of the load offered)",
                crate::run::runner::SATURATED_BELOW * 100.0
            )
        } else {
            String::new()
        },
        match count("-") {
            0 => String::new(),
            n if plan.checks_off => format!(", {n} not checked (--checks off)"),
            n => format!(", {n} with no check left (all dropped)"),
        },
        match (count("MISSING"), count("INTR")) {
            (0, 0) => String::new(),
            (m, 0) => format!(", {m} missing"),
            (0, i) => format!(", {i} interrupted"),
            (m, i) => format!(", {m} missing, {i} interrupted"),
        }
    );
    s + &crate::run::sweep_notes::summary(rows.iter().map(|r| r.dropped.as_slice()), rows.len())
}
