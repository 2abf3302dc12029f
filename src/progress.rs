//! Progress bars on stderr (indicatif): a run's simulated time, cycles/s and ETA; a sweep's
//! points. Only on a terminal, never in CI (`CI` set) or with `-q`; a run's bar appears after
//! about a second, so short runs print nothing.
//!
//! The bar is fed from the run loop between two slices of `Sim::run` (runner.rs): it reads the
//! simulated time and ticks no block, so the results are the same with or without it.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether a requested progress display may be shown: stderr is a terminal and `CI` is unset.
pub fn allowed(requested: bool) -> bool {
    requested && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none_or(|v| v.is_empty())
}

/// Delay before a run's bar appears.
const SHOW_AFTER: Duration = Duration::from_millis(1000);

/// A run's progress: created hidden, shown once the run has taken [`SHOW_AFTER`].
pub struct RunProgress {
    bar: Option<ProgressBar>,
    label: String,
    until: u64,
    t0: Instant,
}

impl RunProgress {
    /// Progress towards `until` cycles; `on` from [`allowed`].
    pub fn new(on: bool, label: &str, until: u64) -> Option<RunProgress> {
        on.then(|| RunProgress {
            bar: None,
            label: label.to_string(),
            until,
            t0: Instant::now(),
        })
    }

    /// The simulation has reached cycle `now`.
    pub fn update(&mut self, now: u64) {
        if self.bar.is_none() && self.t0.elapsed() >= SHOW_AFTER {
            let bar = ProgressBar::with_draw_target(Some(self.until), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:30}] {human_pos}/{human_len} ns simulated, {per_sec} cycles, ETA {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_message(self.label.clone());
            bar.reset_elapsed();
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_position(now.min(self.until));
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
