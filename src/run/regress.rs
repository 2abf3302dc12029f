//! `hwsim regress DIR`: every testbench below a folder, run in parallel, one line each.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::run::runner::{self, Options};

/// One testbench's outcome.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The file.
    pub file: PathBuf,
    /// PASS / FAIL / ERROR, INTR (cut short by an interrupt), or SKIP (an `rtl:` testbench on a
    /// machine without Verilator).
    pub verdict: &'static str,
    /// Checks passed / total, or the error.
    pub detail: String,
    /// End cycle.
    pub cycles: u64,
    /// Wall seconds of the run (elaboration excluded).
    pub wall_s: f64,
    /// Wall seconds of the whole testbench: loading, elaboration, run and checks.
    pub elapsed_s: f64,
    /// Checks evaluated.
    pub checks: usize,
    /// Checks passed.
    pub checks_passed: usize,
    /// The checks that failed (`--junit`, `--json`).
    pub failed_checks: Vec<crate::build::verdict::CheckResult>,
}

/// Every `*.yaml` below `dir`, sorted. Each folder is read once, by its real path, and only if
/// it lies inside `dir`: a symlink `up -> ..` or `self -> .` neither escapes the tree nor runs a
/// testbench twice.
pub fn find_testbenches(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(root) = dir.canonicalize() else {
        return out;
    };
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        match d.canonicalize() {
            Ok(real) if real.starts_with(&root) && seen.insert(real.clone()) => {}
            _ => continue,
        }
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file() && p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                // Regular files only: a FIFO or device named *.yaml is no testbench, and opening
                // one would block the whole regression.
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The threads `run_all` starts for `files` testbenches on `-j jobs`: at least one and at most
/// one per testbench (`-j 10000000` once started ten million threads for one testbench, and the
/// first Ctrl-C went unheard while they started; `hwsim regress` also refuses `-j` above
/// `commands::MAX_JOBS`).
pub fn threads(jobs: usize, files: usize) -> usize {
    jobs.max(1).min(files.max(1))
}

/// Runs `files` on `jobs` threads (see [`threads`]); the outcomes in file order. `done` is called with each
/// outcome as it comes (a progress display).
///
/// Once `interrupt` is set (by a SIGINT / SIGTERM handler) the testbenches running stop at their
/// current cycle (verdict INTR) and no other one starts: the outcomes are then those of the
/// files that ran, fewer than `files`.
pub fn run_all(
    files: &[PathBuf],
    jobs: usize,
    no_skip: bool,
    interrupt: Option<&Arc<AtomicBool>>,
    done: &(dyn Fn(&Outcome) + Sync),
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; files.len()]);
    let stopped = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
    std::thread::scope(|s| {
        for _ in 0..threads(jobs, files.len()) {
            s.spawn(|| loop {
                if stopped() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= files.len() {
                    break;
                }
                let f = &files[i];
                let opts = Options {
                    no_skip,
                    interrupt: interrupt.cloned(),
                    ..Options::default()
                };
                let t0 = std::time::Instant::now();
                let result = runner::run_file(f, opts);
                let elapsed_s = t0.elapsed().as_secs_f64();
                let o = match result {
                    Ok(r) if r.interrupted => Outcome {
                        file: f.clone(),
                        verdict: "INTR",
                        detail: format!("interrupted at cycle {}", r.cycles),
                        cycles: r.cycles,
                        wall_s: r.stats.wall_s,
                        elapsed_s,
                        checks: r.checks.len(),
                        checks_passed: r.checks.iter().filter(|c| c.passed).count(),
                        failed_checks: Vec::new(),
                    },
                    Ok(r) => Outcome {
                        file: f.clone(),
                        verdict: if r.passed { "PASS" } else { "FAIL" },
                        detail: match &r.error {
                            Some(e) => e.clone(),
                            None => format!(
                                "{}/{} checks{}",
                                r.checks.iter().filter(|c| c.passed).count(),
                                r.checks.len(),
                                r.checks
                                    .iter()
                                    .find(|c| !c.passed)
                                    .map(|c| format!("; first failure: {}", c.name))
                                    .unwrap_or_default()
                            ),
                        },
                        cycles: r.cycles,
                        wall_s: r.stats.wall_s,
                        elapsed_s,
                        checks: r.checks.len(),
                        checks_passed: r.checks.iter().filter(|c| c.passed).count(),
                        failed_checks: r.checks.iter().filter(|c| !c.passed).cloned().collect(),
                    },
                    Err(e) => Outcome {
                        file: f.clone(),
                        verdict: if e.to_string().contains(crate::run::rtl::build::NO_VERILATOR) {
                            "SKIP"
                        } else {
                            "ERROR"
                        },
                        detail: e.to_string(),
                        cycles: 0,
                        wall_s: 0.0,
                        elapsed_s,
                        checks: 0,
                        checks_passed: 0,
                        failed_checks: Vec::new(),
                    },
                };
                done(&o);
                results.lock().expect("no poisoned lock")[i] = Some(o);
            });
        }
    });
    results
        .into_inner()
        .expect("no poisoned lock")
        .into_iter()
        .flatten()
        .collect()
}

/// The summary table of the `outcomes` of a regression over `total` files. When `interrupted`,
/// a last line says so: how many finished, how many were cut short and how many never started.
pub fn render(outcomes: &[Outcome], total: usize, interrupted: bool) -> String {
    use std::fmt::Write as _;
    let w = outcomes
        .iter()
        .map(|o| o.file.display().to_string().len())
        .max()
        .unwrap_or(10);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<w$}  {:<6} {:>12} {:>9}  detail",
        "testbench", "result", "cycles", "wall s"
    );
    for o in outcomes {
        let _ = writeln!(
            s,
            "{:<w$}  {:<6} {:>12} {:>9.3}  {}",
            o.file.display(),
            o.verdict,
            o.cycles,
            o.wall_s,
            o.detail
        );
    }
    let pass = outcomes.iter().filter(|o| o.verdict == "PASS").count();
    let cut = outcomes.iter().filter(|o| o.verdict == "INTR").count();
    let skip = outcomes.iter().filter(|o| o.verdict == "SKIP").count();
    let skipped = match skip {
        0 => String::new(),
        n => format!(", {n} skipped (they need Verilator)"),
    };
    let _ = writeln!(
        s,
        "{} passed, {} failed{skipped}",
        pass,
        outcomes.len() - pass - cut - skip
    );
    if interrupted {
        let _ = writeln!(
            s,
            "interrupted: {} of {total} testbenches finished, {cut} cut short, {} not run",
            outcomes.len() - cut,
            total - outcomes.len()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::threads;

    #[test]
    fn threads_are_bounded_by_the_testbenches() {
        assert_eq!(threads(10_000_000, 1), 1, "one testbench, one thread");
        assert_eq!(threads(10_000_000, 3), 3);
        assert_eq!(threads(0, 5), 1, "at least one");
        assert_eq!(threads(4, 10), 4);
        assert_eq!(threads(8, 0), 1);
    }
}
