//! The everyday subcommands' arguments and bodies (`sweep`, `plot`, `explain`), kept out of
//! main.rs: each returns the text for stdout and the exit status, or bad input (exit 2), and
//! main.rs prints.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Args;

use crate::input::yaml::InputError;
use crate::run::sweep;

/// `hwsim sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Testbench file (not with --collect).
    pub testbench: Option<PathBuf>,
    /// A swept field: `PATH=V1,V2,…` (repeatable; the cross product of all, or --zip).
    #[arg(long = "set", value_name = "PATH=V1,V2,…")]
    pub set: Vec<String>,
    /// Pair the value lists item by item instead of the cross product.
    #[arg(long)]
    pub zip: bool,
    /// Runs per point, each with its own seed (derived from the testbench's seed and the values).
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Parallel runs (default: the number of cores).
    #[arg(short, long)]
    pub jobs: Option<usize>,
    /// Output folder: point_K.json per run, sweep.csv, sweep.json, plan.json and the plots.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Metric (or counter column) to plot (default goodput, else throughput, else the first).
    #[arg(long)]
    pub metric: Option<String>,
    /// Parameter on the x axis (default: the first --set).
    #[arg(long, value_name = "PATH")]
    pub x: Option<String>,
    /// Counters matching GLOB become table columns (repeatable).
    #[arg(long = "counter", value_name = "GLOB")]
    pub counter: Vec<String>,
    /// Do not run: write a job script for KIND (`slurm` or `parallel`) into DIR.
    #[arg(long, num_args = 2, value_names = ["KIND", "DIR"])]
    pub emit: Vec<String>,
    /// Merge the reports in DIR (from --emit) into the table and plots.
    #[arg(long, value_name = "DIR")]
    pub collect: Option<PathBuf>,
    /// `off`: the runs evaluate none of the testbench's `expect:` checks and no monitor; the
    /// table's verdict column is `-` (a check `pinned:` to a swept parameter is dropped anyway,
    /// with a note under the table).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    pub checks: String,
    /// Logarithmic x axis on the plot (default: when the values are all positive and span 100×
    /// or more; give it to --collect too: the plan does not keep it).
    #[arg(long)]
    pub logx: bool,
    /// Logarithmic y axis on the plot (refused, exit 2, if a value drawn is 0 or less; give it
    /// to --collect too: the plan does not keep it).
    #[arg(long)]
    pub logy: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// The figures' title, axis labels and size (give them to --collect too: the plan does
    /// not keep them).
    #[command(flatten)]
    pub look: crate::report::plot::options::LookArgs,
}

fn arg(name: &str, msg: impl Into<String>) -> InputError {
    InputError::new(Path::new(name), msg)
}

/// Runs `hwsim sweep`. Once `interrupt` is set (SIGINT / SIGTERM) no run starts and the running
/// ones stop; the table is written with INTR rows for them and for the runs never started, and
/// the status is 130.
pub fn sweep(a: SweepArgs, interrupt: Option<&Arc<AtomicBool>>) -> Result<(String, u8), InputError> {
    if let Some(dir) = &a.collect {
        return collect(&a, dir);
    }
    let look = a.look.look()?;
    let Some(tb) = &a.testbench else {
        return Err(arg("sweep", "give a testbench (or --collect DIR)"));
    };
    let mut plan = sweep::plan(&sweep::Request {
        testbench: tb,
        sets: &a.set,
        zip: a.zip,
        seeds: a.seeds,
        metric: a.metric.clone(),
        x: a.x.clone(),
        counters: a.counter.clone(),
        checks_off: a.checks == "off",
    })?;
    (plan.log_x, plan.log_y) = (a.logx, a.logy);
    // The testbench and its includes: no output may name one. A module testbench without
    // checks is refused before any run (each point would be refused alike).
    let loaded = crate::build::testbench::load(tb)?;
    if !plan.checks_off {
        crate::run::runner::require_checks(&loaded)?;
    }
    let inputs = loaded.files;
    if let [kind, dir] = a.emit.as_slice() {
        let dir = PathBuf::from(dir);
        sweep::check_outputs(&inputs, &sweep::outputs(&plan, &dir, false, None, Some(kind)))?;
        // One job per line: a value with a line break (or another control character) would
        // split a job in two in the emitted list.
        if let Some(v) = plan
            .runs
            .iter()
            .flat_map(|r| &r.values)
            .find(|v| v.chars().any(char::is_control))
        {
            return Err(arg(
                &format!("--set {}", v.escape_debug()),
                "a value with a control character (a line break) cannot go into a job list",
            ));
        }
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hwsim"));
        let script = crate::run::sweep_jobs::emit(&plan, kind, &dir, &exe)?;
        let how = match kind.as_str() {
            "slurm" => format!("sbatch {}", script.display()),
            // As many jobs as this machine has cores (it said `-j 8` on a 2-core machine).
            _ => format!("parallel -j {} < {}", cores(), script.display()),
        };
        return Ok((
            format!(
                "wrote {} ({} runs) and {}\nrun them: {how}\nthen: hwsim sweep --collect {}\n",
                script.display(),
                plan.runs.len(),
                dir.join("plan.json").display(),
                dir.display()
            ),
            0,
        ));
    }
    let Some(out) = &a.out else {
        return Err(arg("--out", "a sweep needs --out DIR (or --emit KIND DIR)"));
    };
    if out.exists() && !out.is_dir() {
        return Err(arg(&format!("--out {}", out.display()), "exists and is not a folder"));
    }
    let jobs = a.jobs.unwrap_or_else(cores);
    if !(1..=MAX_JOBS).contains(&jobs) {
        return Err(arg(&format!("-j {jobs}"), format!("out of range 1..={MAX_JOBS}")));
    }
    // Nothing is written or removed before every output is known not to be an input.
    sweep::check_outputs(&inputs, &sweep::outputs(&plan, out, true, None, None))?;
    std::fs::create_dir_all(out)
        .map_err(|e| arg(&format!("--out {}", out.display()), format!("cannot create: {e}")))?;
    // A rerun into the same folder must not mix in old reports: only those an earlier sweep's
    // plan there lists are removed; any other `point_K.json` stops the sweep.
    sweep::clear_old_reports(out)?;
    sweep::write_plan(&plan, out)?;
    let bar = crate::run::progress::items(crate::run::progress::allowed(!a.quiet), plan.runs.len() as u64, "sweep");
    sweep::run(&plan, out, jobs, &|| bar.inc(1), interrupt)?;
    bar.finish_and_clear();
    let mut rows = sweep::rows(&plan, out)?;
    if interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
        // A partial table: what ran, and INTR for the rest. Plots only if a metric came back.
        sweep::mark_interrupted(&mut rows);
        let mut all_inputs = inputs;
        all_inputs.extend(sweep::outputs(&plan, out, true, None, None));
        let (files, summary) = match sweep::metric_of(&plan, &rows) {
            Ok(metric) => {
                sweep::check_outputs(&all_inputs, &sweep::outputs(&plan, out, false, Some(&metric), None))?;
                sweep::write_outputs(&plan, &rows, out, &look)?
            }
            Err(_) => {
                let tables = sweep::outputs(&plan, out, false, Some("-"), None);
                sweep::check_outputs(&all_inputs, &tables[..2])?;
                let files = sweep::write_tables(&plan, &rows, out)?;
                let n = rows.iter().filter(|r| r.verdict == "INTR").count();
                (
                    files,
                    format!("{} runs: {n} interrupted, no metric to plot\n", rows.len()),
                )
            }
        };
        let mut text = with_files(summary, &files);
        text.push_str("interrupted: the runs cut short or not started are INTR\n");
        return Ok((text, 130));
    }
    let metric = sweep::metric_of(&plan, &rows)?;
    let mut all_inputs = inputs;
    all_inputs.extend(sweep::outputs(&plan, out, true, None, None));
    sweep::check_outputs(&all_inputs, &sweep::outputs(&plan, out, false, Some(&metric), None))?;
    let (files, summary) = sweep::write_outputs(&plan, &rows, out, &look)?;
    Ok((with_files(summary, &files), 0))
}

/// `hwsim sweep --collect DIR`: the table and plots from the reports in DIR.
fn collect(a: &SweepArgs, dir: &Path) -> Result<(String, u8), InputError> {
    if a.testbench.is_some() || !a.set.is_empty() || !a.emit.is_empty() {
        return Err(arg(
            "--collect",
            "takes only the folder (and --out, --metric, --x, --logx, --logy and the figure options)",
        ));
    }
    let look = a.look.look()?;
    let mut plan = sweep::read_plan(dir)?;
    (plan.log_x, plan.log_y) = (a.logx, a.logy);
    if a.metric.is_some() {
        plan.metric = a.metric.clone();
    }
    if let Some(x) = &a.x {
        if !plan.params.contains(x) {
            return Err(arg(
                &format!("--x {x}"),
                format!("not a swept parameter ({})", plan.params.join(", ")),
            ));
        }
        plan.x = x.clone();
    }
    let rows = sweep::rows(&plan, dir)?;
    let out = a.out.clone().unwrap_or_else(|| dir.to_path_buf());
    // The folder's plan and reports are inputs here, and the testbench with its includes
    // (if it is still there): a table or plot never replaces them.
    let mut inputs = sweep::outputs(&plan, dir, true, None, None);
    inputs.retain(|p| p.exists());
    if let Ok(l) = crate::build::testbench::load(&plan.testbench) {
        inputs.extend(l.files);
    }
    let metric = sweep::metric_of(&plan, &rows)?;
    sweep::check_outputs(&inputs, &sweep::outputs(&plan, &out, false, Some(&metric), None))?;
    let (files, summary) = sweep::write_outputs(&plan, &rows, &out, &look)?;
    Ok((with_files(summary, &files), 0))
}

/// Most parallel runs a sweep starts (`-j`): each is a thread with a simulation of its own.
pub const MAX_JOBS: usize = 1024;

fn with_files(mut s: String, files: &[PathBuf]) -> String {
    s.push_str("wrote ");
    s.push_str(
        &files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push('\n');
    s
}

/// Where `hwsim run` writes the probe CSV: `--probe PATH`, else the testbench's `probe.out`,
/// else beside `--json` (`X.json` → `X.probe.csv`); none if the testbench has no `probe:`.
pub fn probe_path(l: &crate::build::testbench::Loaded, probe: Option<&Path>, json: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = probe {
        return Some(p.to_path_buf());
    }
    let p = l.tb.probe.as_ref()?;
    p.out
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| json.map(|j| j.with_extension("probe.csv")))
}

/// `hwsim plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A probe CSV (`cycle,…`), or a testbench with a `probe:` section (run first; its CSV is
    /// written beside the plot).
    pub input: PathBuf,
    /// The plot: `.svg` or `.png`.
    #[arg(long)]
    pub out: PathBuf,
    /// Columns to draw (globs as --trace takes: `*`, `?`, or a scope above the column,
    /// `chip0.lg1`; comma-separated or repeated; default all). A glob that selects none is
    /// refused, naming the nearest columns.
    #[arg(long, value_name = "GLOB,…", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Draw cumulative columns as their rate: the difference over each interval between
    /// samples, per ns (`--rate`: every column drawn; `--rate='*bytes*'`: those selected).
    #[arg(long, value_name = "GLOB,…", value_delimiter = ',', num_args = 0..=1, require_equals = true, default_missing_value = "*")]
    pub rate: Option<Vec<String>>,
    /// Override a testbench field (when INPUT is a testbench; repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// A column's legend label (repeatable; default: the last part of its dotted path, with the
    /// parts that tell alike ones apart in parentheses: `backlog (lg3)`; one too long for the
    /// legend loses the start or end every label shares, then its middle, never what differs).
    #[arg(long = "label", value_name = "COLUMN=TEXT")]
    pub label: Vec<String>,
    /// Logarithmic x axis (refused if a cycle drawn is 0 or less).
    #[arg(long)]
    pub logx: bool,
    /// Logarithmic y axis (refused if a value drawn is 0 or less, naming the column and cycle).
    #[arg(long)]
    pub logy: bool,
    /// The figure's title, axis labels and size.
    #[command(flatten)]
    pub look: crate::report::plot::options::LookArgs,
}

/// Runs `hwsim plot`. Once `interrupt` is set (SIGINT / SIGTERM) a testbench's run stops at its
/// current cycle (its probe CSV holds the samples up to there, as `run` leaves it), no plot is
/// written, and the status is 130.
pub fn plot(a: PlotArgs, interrupt: Option<&Arc<AtomicBool>>) -> Result<(String, u8), InputError> {
    let stopped = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
    let look = a.look.look()?;
    let mut text = String::new();
    let yaml = a.input.extension().is_some_and(|e| e == "yaml" || e == "yml");
    let csv = if yaml {
        let sets = a
            .set
            .iter()
            .map(|s| crate::input::overrides::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let l = crate::build::testbench::load_with(&a.input, &sets)?;
        if l.tb.probe.is_none() {
            return Err(InputError::new(&a.input, "no `probe:` section to plot"));
        }
        let csv = a.out.with_extension("csv");
        crate::report::output::check_outputs(
            &l.files,
            &[("--out", a.out.as_path()), ("the probe CSV", csv.as_path())],
        )
        .map_err(|m| InputError::new(Path::new("--out"), m))?;
        let report = crate::run::runner::run_loaded(
            &l,
            crate::run::runner::Options {
                probe: Some(csv.clone()),
                progress: true,
                // The samples are what is asked for; a testbench without checks has no verdict.
                checks_optional: true,
                interrupt: interrupt.cloned(),
                ..Default::default()
            },
        )?;
        if report.interrupted {
            return Ok((
                format!(
                    "interrupted at cycle {}: {} holds the samples up to there; no plot written\n",
                    report.cycles,
                    csv.display()
                ),
                130,
            ));
        }
        text.push_str(&format!(
            "ran {}: {} at cycle {}; probe {}\n",
            a.input.display(),
            if report.checks.is_empty() {
                "no checks"
            } else if report.passed {
                "PASS"
            } else {
                "FAIL"
            },
            report.cycles,
            csv.display()
        ));
        csv
    } else {
        if !a.set.is_empty() {
            return Err(InputError::new(Path::new("--set"), "needs a testbench, not a CSV"));
        }
        crate::report::output::check_outputs(std::slice::from_ref(&a.input), &[("--out", a.out.as_path())])
            .map_err(|m| InputError::new(Path::new("--out"), m))?;
        a.input.clone()
    };
    let pick = crate::report::plot::Pick {
        columns: a.columns.clone(),
        labels: a.label.clone(),
        rate: a.rate.clone().unwrap_or_default(),
    };
    let mut chart = crate::report::plot::probe_chart_with(&csv, &pick)?;
    (chart.log_x, chart.log_y) = (a.logx, a.logy);
    look.apply(&mut chart);
    if stopped() {
        return Ok(("interrupted: no plot written\n".into(), 130));
    }
    crate::report::plot::write_sized(&a.out, &chart, look.size)?;
    text.push_str(&format!(
        "wrote {} ({} column(s))\n",
        a.out.display(),
        chart.series.len()
    ));
    let (shown, rest) = crate::report::plot::legend(&chart);
    if !rest.is_empty() {
        let names: Vec<&str> = rest.iter().map(|&i| chart.series[i].label.as_str()).collect();
        text.push_str(&format!(
            "legend: the {} of {} columns with the highest last value; not in it: {}\n",
            shown.len(),
            chart.series.len(),
            names.join(", ")
        ));
    }
    Ok((text, 0))
}

/// `hwsim regress`.
#[derive(Args, Debug)]
pub struct RegressArgs {
    /// Folder (default tb/).
    #[arg(default_value = "tb")]
    pub dir: PathBuf,
    /// Event skip off.
    #[arg(long)]
    pub no_skip: bool,
    /// Parallel jobs (default: the number of cores).
    #[arg(short, long)]
    pub jobs: Option<usize>,
    /// Write the outcomes as JUnit XML: one testcase per testbench, a failure with its failing
    /// checks, its wall time.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the outcomes as JSON: totals, then per testbench its verdict, checks, cycles, wall
    /// time and failing checks.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Runs `hwsim regress`: every testbench below the folder, with a live count on a terminal
/// (done/total, failures so far; nothing when stderr is not a terminal); the table, and the
/// JUnit / JSON files (written whole, never over a testbench or one of its includes). Status 0
/// all passed, 1 one did not, 130 interrupted (the files then hold what ran).
pub fn regress(a: RegressArgs, interrupt: &Arc<AtomicBool>) -> Result<(String, u8), InputError> {
    use std::sync::atomic::AtomicUsize;
    let dir = &a.dir;
    if !dir.is_dir() {
        return Err(InputError::new(dir, "not a folder"));
    }
    let files = crate::run::regress::find_testbenches(dir);
    if files.is_empty() {
        return Err(InputError::new(dir, "no *.yaml testbenches"));
    }
    // No output over a testbench or an include of one (those that load).
    let mut inputs = files.clone();
    for f in &files {
        if let Ok(l) = crate::build::testbench::load(f) {
            inputs.extend(l.files);
        }
    }
    let outputs: Vec<(&str, &Path)> = [("--junit", &a.junit), ("--json", &a.json)]
        .into_iter()
        .filter_map(|(o, p)| p.as_deref().map(|p| (o, p)))
        .collect();
    crate::report::output::check_outputs(&inputs, &outputs).map_err(|m| arg("regress", m))?;
    let jobs = a.jobs.unwrap_or_else(cores);
    // As `sweep -j`: a count out of range is refused before anything runs or is written.
    if !(1..=MAX_JOBS).contains(&jobs) {
        return Err(arg(&format!("-j {jobs}"), format!("out of range 1..={MAX_JOBS}")));
    }
    let bar = crate::run::progress::regress_bar(crate::run::progress::allowed(true), files.len());
    let (done, failed) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let on_done = |o: &crate::run::regress::Outcome| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        let bad = if matches!(o.verdict, "PASS" | "INTR" | "SKIP") {
            failed.load(Ordering::Relaxed)
        } else {
            failed.fetch_add(1, Ordering::Relaxed) + 1
        };
        bar.set_message(crate::run::progress::tally(n, files.len(), bad));
        bar.inc(1);
    };
    let out = crate::run::regress::run_all(&files, jobs, a.no_skip, Some(interrupt), &on_done);
    bar.finish_and_clear();
    let interrupted = interrupt.load(Ordering::Relaxed);
    if let Some(p) = &a.junit {
        crate::report::output::write_file(p, crate::run::junit::junit(dir, &files, &out).as_bytes())?;
    }
    if let Some(p) = &a.json {
        crate::report::output::write_file(p, crate::run::junit::json(dir, &files, &out, interrupted).as_bytes())?;
    }
    let code = if interrupted {
        130
    } else if out.iter().all(|o| matches!(o.verdict, "PASS" | "SKIP")) {
        0
    } else {
        1
    };
    Ok((crate::run::regress::render(&out, files.len(), interrupted), code))
}

/// This machine's cores (2 if it cannot tell): the default job count.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}
