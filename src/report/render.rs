//! The terminal report of a run: by default one screen (the checks with long values shortened,
//! the flows table, the headline metrics, the verdict); counters on request (`--counters GLOB`),
//! everything with `-v`. The JSON report (`--json`) always has everything.
//!
//! Colour (PASS green, FAIL red) only when asked, which the command line does on a terminal
//! without `NO_COLOR`.

use std::fmt::Write as _;

use crate::report::Report;

/// What the terminal report shows.
#[derive(Clone, Debug, Default)]
pub struct View {
    /// Everything: every counter, every flow, check values in full.
    pub verbose: bool,
    /// Counters matching this glob (`*` for all).
    pub counters: Option<String>,
    /// The statistics line.
    pub stats: bool,
    /// ANSI colour.
    pub color: bool,
}

/// A report with at most this many counters prints them all by default (a module testbench).
pub const SHORT_COUNTERS: usize = 24;
/// Flows shown by default.
const SHORT_FLOWS: usize = 12;
/// Longest check value shown by default, characters.
const SHORT_VALUE: usize = 100;

/// Whether colour suits stdout: a terminal, and `NO_COLOR` unset or empty.
pub fn color_on_stdout() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// `text` cut to `max` characters with an ellipsis and the full length.
pub fn shorten(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… ({n} characters; -v or --json for all)")
}

/// A number for the report: integers as such, others with 4 significant-ish decimals; beyond
/// 10^15 or below 10^-4 in scientific notation (fixed notation would print 300 digits for 1e300).
pub fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.is_finite() && (x.abs() >= 1e15 || x.abs() < 1e-4) {
        format!("{x:.3e}")
    } else if x.abs() >= 100.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

impl Report {
    /// The verdict and checks as text: counters with `with_counters` (all), the statistics line
    /// with `with_stats`; long values in full. (The terminal's view: [`Report::render_view`].)
    pub fn render(&self, with_counters: bool, with_stats: bool) -> String {
        self.render_view(&crate::report::render::View {
            verbose: true,
            counters: Some(if with_counters { "*" } else { "" }.to_string()),
            stats: with_stats,
            color: false,
        })
    }

    /// The terminal report.
    pub fn render_view(&self, v: &View) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "hwsim: {}  ({}, seed {})", self.testbench, self.file, self.seed);
        if let Some(e) = &self.error {
            let _ = writeln!(s, "  {} {e}", paint(v.color, "1;31", "ERROR"));
        }
        self.render_checks(&mut s, v);
        for d in &self.dropped {
            let _ = writeln!(s, "  {}  {}", paint(v.color, "33", "DROP"), d.note());
        }
        if self.checks_off {
            let _ = writeln!(s, "  checks off: no `expect:` check or monitor evaluated");
        }
        self.render_flows(&mut s, v);
        let figures: Vec<String> = self
            .metrics
            .iter()
            .map(|(k, x)| format!("{k} {}", number(*x)))
            .collect();
        if !figures.is_empty() {
            let _ = writeln!(s, "metrics: {}", figures.join(", "));
        }
        self.render_counters(&mut s, v);
        if v.stats {
            self.render_stats(&mut s);
        }
        if self.interrupted {
            let _ = writeln!(s, "interrupted at cycle {}", self.cycles);
        }
        s.push_str(&self.verdict_line(v.color));
        s
    }

    /// The checks, PASS or FAIL, names aligned; long values cut unless verbose.
    fn render_checks(&self, s: &mut String, v: &View) {
        let w = self.checks.iter().map(|c| c.name.chars().count()).max().unwrap_or(0);
        let cut = |t: &str| {
            if v.verbose {
                t.to_string()
            } else {
                shorten(t, SHORT_VALUE)
            }
        };
        for c in &self.checks {
            let pad = w - c.name.chars().count();
            if c.passed {
                let _ = writeln!(
                    s,
                    "  {}  {}{:pad$}  {}",
                    paint(v.color, "32", "PASS"),
                    c.name,
                    "",
                    cut(&c.actual)
                );
            } else {
                let _ = writeln!(
                    s,
                    "  {}  {}{:pad$}  expected {}, actual {}",
                    paint(v.color, "1;31", "FAIL"),
                    c.name,
                    "",
                    cut(&c.expected),
                    cut(&c.actual)
                );
                if let Some(d) = &c.first_difference {
                    let _ = writeln!(s, "        {:w$}  first difference: {}", "", cut(d));
                }
            }
        }
    }

    /// The flows' table (the first few unless verbose), after the `metrics_from` note.
    fn render_flows(&self, s: &mut String, v: &View) {
        if !self.flows.is_empty() {
            if let Some(w) = self.metrics_from {
                let late = if w >= self.cycles {
                    format!(" — after the run's end ({}): nothing measured", self.cycles)
                } else {
                    String::new()
                };
                let _ = writeln!(
                    s,
                    "flows and their metrics: transactions issued from cycle {w} on (metrics_from){late}"
                );
            }
            let nw = self.flows.iter().map(|f| f.name.len()).max().unwrap_or(4).max(4);
            let _ = writeln!(
                s,
                "flows:\n  {:<nw$} {:>12} {:>10} {:>10} {:>9} {:>10} {:>9} {:>9} {:>9}",
                "flow", "bytes", "first", "last", "B/ns", "lat mean", "lat p50", "lat p99", "lat max"
            );
            let shown = if v.verbose { self.flows.len() } else { SHORT_FLOWS };
            for f in self.flows.iter().take(shown) {
                let _ = writeln!(
                    s,
                    "  {:<nw$} {:>12} {:>10} {:>10} {:>9.2} {:>10.1} {:>9} {:>9} {:>9}",
                    f.name,
                    f.bytes,
                    f.first_byte,
                    f.last_byte,
                    f.goodput,
                    f.latency_mean,
                    f.latency_p50,
                    f.latency_p99,
                    f.latency_max
                );
            }
            if self.flows.len() > shown {
                let _ = writeln!(s, "  … {} more flows (-v or --json)", self.flows.len() - shown);
            }
        }
        if let Some(h) = &self.latency {
            h.render(s);
        }
    }

    /// The counters: those `--counters GLOB` picks, all when few or verbose, else their count.
    fn render_counters(&self, s: &mut String, v: &View) {
        let glob = match (&v.counters, v.verbose || self.counters.len() <= SHORT_COUNTERS) {
            (Some(g), _) => Some(g.as_str()),
            (None, true) => Some("*"),
            (None, false) => None,
        };
        match glob {
            Some("") => {}
            Some(g) => {
                let picked: Vec<(&String, &u64)> = self
                    .counters
                    .iter()
                    .filter(|(k, _)| hwsim_hw::glob_match(g, k))
                    .collect();
                if picked.is_empty() && !self.counters.is_empty() {
                    let _ = writeln!(s, "counters: none matches `{g}` ({} in all)", self.counters.len());
                } else if !picked.is_empty() {
                    let _ = writeln!(s, "counters:");
                    for (k, x) in picked {
                        let _ = writeln!(s, "  {k} = {x}");
                    }
                }
            }
            None => {
                let _ = writeln!(
                    s,
                    "counters: {} (`--counters GLOB` prints those matching, `-v` all, `--json` has them)",
                    self.counters.len()
                );
            }
        }
    }

    /// `--stats`: the run's figures, then the runs per kind and process.
    fn render_stats(&self, s: &mut String) {
        let st = &self.stats;
        let _ = writeln!(
            s,
            "stats: wall {:.3} s, {} cycles ({:.3e} cycles/s), {} activations ({:.3e}/s), {} process runs, {} executed, {} skipped, peak RSS {:.1} MiB",
            st.wall_s,
            st.cycles,
            st.cycles_per_s,
            st.activations,
            st.activations_per_s,
            st.process_runs,
            st.executed_cycles,
            st.skipped_cycles,
            st.peak_rss_bytes as f64 / (1 << 20) as f64
        );
        // Per kind and process: which blocks the kernel runs, and how often per executed
        // cycle (a profile's first question).
        let per = |n: u64| n as f64 / st.executed_cycles.max(1) as f64;
        for k in st.by_kind.iter().filter(|k| k.activations > 0) {
            let name = if k.process == 0 {
                k.kind.clone()
            } else {
                format!("{} (process {})", k.kind, k.process)
            };
            let _ = writeln!(
                s,
                "  {name}: {} runs ({:.2} per executed cycle) over {} instance(s)",
                k.activations,
                per(k.activations),
                k.instances
            );
        }
    }

    /// The last line: the verdict (`PASS`, `FAIL`, `INTERRUPTED`, `-` when nothing was checked),
    /// the checks passed, those dropped or `checks off`, and the end cycle.
    fn verdict_line(&self, color: bool) -> String {
        let passed = self.checks.iter().filter(|c| c.passed).count();
        let word =
            crate::build::check_policy::verdict(self.passed, self.interrupted, self.checks_off, self.checks.len());
        let verdict = match word {
            "INTR" => paint(color, "1;33", "INTERRUPTED"),
            "PASS" => paint(color, "1;32", "PASS"),
            "FAIL" => paint(color, "1;31", "FAIL"),
            other => other.to_string(),
        };
        let counted = match (self.checks_off, self.dropped.len()) {
            (true, _) if self.checks.is_empty() => "checks off".to_string(),
            (true, _) => format!("{passed}/{} checks, checks off", self.checks.len()),
            (false, 0) => format!("{passed}/{} checks", self.checks.len()),
            (false, n) => format!("{passed}/{} checks, {n} dropped", self.checks.len()),
        };
        format!("verdict: {verdict} ({counted}) at cycle {}\n", self.cycles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_cuts_long_text_and_says_so() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 3), "abc… (6 characters; -v or --json for all)");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(381.4567), "381.46");
        assert_eq!(number(0.123456), "0.1235");
        assert_eq!(number(1e300), "1.000e300");
        assert_eq!(number(-2.5e-300), "-2.500e-300");
        assert_eq!(number(0.0), "0");
    }
}
