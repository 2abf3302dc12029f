//! Progress bars on stderr (indicatif): a run's simulated time, its rate and ETA; a sweep's
//! points; a regression's testbenches. Only on a terminal, never in CI (`CI` set) or with `-q`;
//! a run's bar appears after about a second, so short runs print nothing.
//!
//! A run's rate and ETA come from its recent throughput ([`Recent`]: the simulated cycles over
//! the last few seconds of wall time), not from the whole run: a run crosses idle stretches in
//! one jump under event skip and then slows down in the busy part, and an average over the run
//! so far promised the end far too soon. The text is ours (`2.40 ms of 20.0 ms simulated,
//! 1.2 M cycles/s, 9 s to until`: a run whose work ends sooner stops then), not indicatif's per-second figure, which printed raw digits
//! (`69,616,455,955.8584/s`).
//!
//! The bar is fed from the run loop between two slices of `Sim::run` (runner.rs): it reads the
//! simulated time and ticks no block, so the results are the same with or without it.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether a requested progress display may be shown: stderr is a terminal and `CI` is unset.
pub fn allowed(requested: bool) -> bool {
    requested && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none_or(|v| v.is_empty())
}

/// Delay before a run's bar appears.
const SHOW_AFTER: Duration = Duration::from_millis(1000);

/// Wall seconds of history the rate is measured over.
pub const WINDOW_S: f64 = 3.0;

/// Recent throughput: `(wall seconds, position)` samples over the last `window` seconds (and the
/// one just before them, the base the window is measured from).
#[derive(Clone, Debug)]
pub struct Recent {
    window: f64,
    samples: VecDeque<(f64, u64)>,
}

impl Recent {
    /// An estimator over `window` wall seconds.
    pub fn new(window: f64) -> Recent {
        Recent {
            window,
            samples: VecDeque::new(),
        }
    }

    /// The position was `pos` at wall time `t` (seconds, not decreasing).
    pub fn push(&mut self, t: f64, pos: u64) {
        self.samples.push_back((t, pos));
        // Keep one sample at or before the window's start as its base.
        while self.samples.len() > 2 && self.samples[1].0 <= t - self.window {
            self.samples.pop_front();
        }
    }

    /// Positions per second over the window (none before two samples a moment apart).
    pub fn per_sec(&self) -> Option<f64> {
        let (&(t0, p0), &(t1, p1)) = (self.samples.front()?, self.samples.back()?);
        let dt = t1 - t0;
        (dt > 1e-6).then(|| p1.saturating_sub(p0) as f64 / dt)
    }

    /// Seconds until `total` at the recent rate (none while the rate is unknown or zero).
    pub fn eta(&self, total: u64) -> Option<f64> {
        let pos = self.samples.back()?.1;
        let rate = self.per_sec().filter(|r| *r > 0.0)?;
        Some(total.saturating_sub(pos) as f64 / rate)
    }
}

/// `x` with an SI prefix and `unit` (`1.2 M cycles/s`, `950 cycles/s`, `12.3 G cycles/s`).
pub fn human_rate(x: f64, unit: &str) -> String {
    const PREFIX: [&str; 5] = ["", "k", "M", "G", "T"];
    let mut v = x.max(0.0);
    let mut i = 0;
    while v >= 999.5 && i + 1 < PREFIX.len() {
        v /= 1000.0;
        i += 1;
    }
    let num = if i == 0 || v >= 99.95 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    };
    match PREFIX[i] {
        "" => format!("{num} {unit}"),
        p => format!("{num} {p} {unit}"),
    }
}

/// A wall duration for an ETA: `0 s`, `9 s`, `1 min 05 s`, `2 h 03 min`.
pub fn human_duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// Simulated time (1 cycle = 1 ns) with a fitting unit: `850 ns`, `12.3 µs`, `2.40 ms`, `1.50 s`.
pub fn human_ns(ns: u64) -> String {
    let x = ns as f64;
    let (v, unit) = match ns {
        0..=999 => return format!("{ns} ns"),
        1_000..=999_999 => (x / 1e3, "µs"),
        1_000_000..=999_999_999 => (x / 1e6, "ms"),
        _ => (x / 1e9, "s"),
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// The text after a run's bar: `2.40 ms of 20.0 ms simulated, 1.2 M cycles/s, 9 s to until`:
/// the time to `until` at the recent rate, said so, because a run whose work ends earlier stops
/// then (quiescent) and a bare "ETA" promised the end of a run that was over 8 s later.
pub fn run_text(now: u64, until: u64, recent: &Recent) -> String {
    let rate = recent
        .per_sec()
        .map_or_else(|| "… cycles/s".to_string(), |r| human_rate(r, "cycles/s"));
    let eta = recent.eta(until).map_or_else(|| "…".to_string(), human_duration);
    format!(
        "{} of {} simulated, {rate}, {eta} to until",
        human_ns(now.min(until)),
        human_ns(until)
    )
}

/// A run's progress: created hidden, shown once the run has taken [`SHOW_AFTER`].
pub struct RunProgress {
    bar: Option<ProgressBar>,
    label: String,
    until: u64,
    t0: Instant,
    recent: Recent,
}

impl RunProgress {
    /// Progress towards `until` cycles; `on` from [`allowed`].
    pub fn new(on: bool, label: &str, until: u64) -> Option<RunProgress> {
        on.then(|| RunProgress {
            bar: None,
            label: label.to_string(),
            until,
            t0: Instant::now(),
            recent: Recent::new(WINDOW_S),
        })
    }

    /// The simulation has reached cycle `now`.
    pub fn update(&mut self, now: u64) {
        let t = self.t0.elapsed();
        self.recent.push(t.as_secs_f64(), now);
        if self.bar.is_none() && t >= SHOW_AFTER {
            let bar = ProgressBar::with_draw_target(Some(self.until), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(self.label.clone());
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_position(now.min(self.until));
            b.set_message(run_text(now, self.until, &self.recent));
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// A bar over `n` items (sweep points), or a hidden one.
pub fn items(on: bool, n: u64, what: &str) -> ProgressBar {
    if !on {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}, ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// The text after a regression's bar: `12/40 done, 1 failed`.
pub fn tally(done: usize, total: usize, failed: usize) -> String {
    format!("{done}/{total} done, {failed} failed")
}

/// A regression's bar over `n` testbenches (done/total, failures so far), or a hidden one.
pub fn regress_bar(on: bool, n: usize) -> ProgressBar {
    if !on {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("regress [{bar:30}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(tally(0, n, 0));
    bar.tick();
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_with_a_prefix_and_a_unit() {
        assert_eq!(human_rate(69_616_455_955.858_4, "cycles/s"), "69.6 G cycles/s");
        assert_eq!(human_rate(1_234_567.0, "cycles/s"), "1.2 M cycles/s");
        assert_eq!(human_rate(950.0, "cycles/s"), "950 cycles/s");
        assert_eq!(human_rate(999.7, "cycles/s"), "1.0 k cycles/s");
        assert_eq!(human_rate(123_456.0, "cycles/s"), "123 k cycles/s");
        assert_eq!(human_rate(0.0, "cycles/s"), "0 cycles/s");
        assert_eq!(human_rate(5e16, "cycles/s"), "50000 T cycles/s");
    }

    #[test]
    fn durations_and_simulated_times_read_at_a_glance() {
        assert_eq!(human_duration(9.8), "10 s");
        assert_eq!(human_duration(0.2), "0 s");
        assert_eq!(human_duration(65.0), "1 min 05 s");
        assert_eq!(human_duration(7380.0), "2 h 03 min");
        assert_eq!(human_ns(850), "850 ns");
        assert_eq!(human_ns(12_345), "12.3 µs");
        assert_eq!(human_ns(2_400_000), "2.40 ms");
        assert_eq!(human_ns(20_000_000), "20.0 ms");
        assert_eq!(human_ns(1_500_000_000), "1.50 s");
    }

    #[test]
    fn the_eta_follows_recent_throughput_not_the_average_since_the_start() {
        // The first second crosses 9 M cycles of idle time (event skip); then the busy part runs
        // at 100 k cycles/s. 1 M cycles are left at t = 5 s.
        let mut r = Recent::new(WINDOW_S);
        assert_eq!(r.per_sec(), None);
        r.push(0.0, 0);
        assert_eq!(r.eta(10), None, "one sample: no rate yet");
        r.push(1.0, 9_000_000);
        for k in 1..=8 {
            r.push(1.0 + k as f64 * 0.5, 9_000_000 + k * 50_000);
        }
        let rate = r.per_sec().unwrap();
        assert!((rate - 100_000.0).abs() < 1e-6, "recent rate {rate}");
        let eta = r.eta(9_000_000 + 400_000 + 1_000_000).unwrap();
        assert!((eta - 10.0).abs() < 1e-6, "eta {eta} s");
        // (The average since the start, 9.4 M cycles in 5 s, would have said half a second.)
        assert_eq!(
            run_text(9_400_000, 10_400_000, &r),
            "9.40 ms of 10.4 ms simulated, 100 k cycles/s, 10 s to until"
        );
        // A stall: no progress over the window, no ETA rather than a wrong one.
        let mut s = Recent::new(1.0);
        s.push(0.0, 5);
        s.push(2.0, 5);
        assert_eq!(s.per_sec(), Some(0.0));
        assert_eq!(s.eta(10), None);
        assert_eq!(run_text(5, 10, &s), "5 ns of 10 ns simulated, 0 cycles/s, … to until");
    }

    #[test]
    fn the_window_keeps_one_base_sample_before_it() {
        let mut r = Recent::new(1.0);
        for k in 0..10 {
            r.push(k as f64, k * 10);
        }
        // Samples at 8 and 9 s remain: the base at 8 (= 9 - window) and the last.
        assert_eq!(r.samples.len(), 2);
        assert_eq!(r.per_sec(), Some(10.0));
        assert_eq!(tally(3, 40, 1), "3/40 done, 1 failed");
    }
}
