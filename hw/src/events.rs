//! The event log (`hwsim --log`): one line per event a block reports — `cycle path class
//! key=value …` — for the blocks and event classes asked for, written as it happens.
//!
//! Blocks report through [`Ctx::logs`](crate::Ctx::logs) and [`Ctx::log`](crate::Ctx::log).
//! The log is off unless the runner turns it on, and then only for the blocks it selects: the
//! test a block makes is one load and compare (a flag per block), and a block asks it only
//! where something happens (a NAK, a drop, a timeout), never per cycle, so the log costs the hot
//! path nothing when off. It is bounded: after `max_lines` lines it writes one line saying it
//! stopped, and nothing more.
//!
//! The same reports drive the waves' event pulses (`ev_<class>` beside a traced block's ports,
//! [`crate::Sim::trace_vcd`] with `TraceOptions::events`): a block with a pulse for a class has
//! its events taken whether or not the log is on, and the tracer shows each cycle's as a
//! one-cycle 1 on the pulse.

use std::fmt;
use std::io::{self, Write};

use crate::Cycle;

/// Where the events go, and which.
#[derive(Default)]
pub struct EventLog {
    /// Per block: whether its events are taken, for the log or a pulse (empty: both off).
    on: Vec<bool>,
    /// Per block: whether its events are written as lines (the log's own selection).
    lines_on: Vec<bool>,
    /// Per block: its pulses on the waves, `(class, pulse index)` (empty: none traced).
    pulses: Vec<Vec<(&'static str, u32)>>,
    /// The pulses that fired this cycle (pulse indices, in report order; the tracer takes them).
    fired: Vec<u32>,
    /// Per block: its path (filled when the log is on).
    paths: Vec<String>,
    /// The classes logged (`None`: every class).
    classes: Option<Vec<String>>,
    out: Option<Box<dyn Write>>,
    /// This cycle's lines, by block: written in block order when the cycle is over, so that
    /// the order the kernel evaluates blocks in (event skip on or off, a shuffle) never shows.
    pending: Vec<(u32, String)>,
    pending_at: Cycle,
    lines: u64,
    max_lines: u64,
    /// The first write error, reported when the run ends.
    error: Option<io::Error>,
}

impl EventLog {
    /// A log of the blocks `on` selects (per block, in [`crate::Sim::components`] order; their
    /// `paths` beside), of the event `classes` (`None`: all), to `out`, at most `max_lines`.
    pub fn new(
        on: Vec<bool>,
        paths: Vec<String>,
        classes: Option<Vec<String>>,
        out: Box<dyn Write>,
        max_lines: u64,
    ) -> EventLog {
        EventLog {
            lines_on: on.clone(),
            on,
            pulses: Vec::new(),
            fired: Vec::new(),
            paths,
            classes,
            out: Some(out),
            pending: Vec::new(),
            pending_at: 0,
            lines: 0,
            max_lines,
            error: None,
        }
    }

    /// Whether block `c`'s events are logged.
    #[inline(always)]
    pub(crate) fn on(&self, c: u32) -> bool {
        // An empty list (the log off) fails the bound test: no flag is read.
        self.on.get(c as usize).copied().unwrap_or(false)
    }

    /// Sets the waves' pulses: per block, `(class, pulse index)` (the tracer's numbering);
    /// a block with one has its events taken from now on, logged or not.
    pub(crate) fn set_pulses(&mut self, pulses: Vec<Vec<(&'static str, u32)>>) {
        self.pulses = pulses;
        let n = self.pulses.len().max(self.lines_on.len());
        self.on = (0..n)
            .map(|c| {
                self.lines_on.get(c).copied().unwrap_or(false) || self.pulses.get(c).is_some_and(|p| !p.is_empty())
            })
            .collect();
        if self.on.iter().all(|&o| !o) {
            // Off altogether: the bound test fails again with no flag read.
            self.on.clear();
        }
    }

    /// The pulses, for a new log to keep ([`crate::Sim::set_event_log`]).
    pub(crate) fn take_pulses(&mut self) -> Vec<Vec<(&'static str, u32)>> {
        std::mem::take(&mut self.pulses)
    }

    /// This cycle's fired pulses (pulse indices; repeats possible), emptied by the caller.
    pub(crate) fn fired(&mut self) -> &mut Vec<u32> {
        &mut self.fired
    }

    /// Records one event of block `c` at `now`: its pulse of `class`, if it has one, and its
    /// line, if the log takes this block and class.
    pub(crate) fn write(&mut self, now: Cycle, c: u32, class: &str, fields: fmt::Arguments<'_>) {
        if let Some(ps) = self.pulses.get(c as usize) {
            if let Some(&(_, i)) = ps.iter().find(|(k, _)| *k == class) {
                self.fired.push(i);
            }
        }
        if !self.lines_on.get(c as usize).copied().unwrap_or(false)
            || self.lines > self.max_lines
            || self.error.is_some()
            || self.classes.as_ref().is_some_and(|cs| !cs.iter().any(|k| k == class))
        {
            return;
        }
        if now != self.pending_at {
            self.flush_cycle();
            self.pending_at = now;
        }
        let path = self.paths.get(c as usize).map_or("?", String::as_str);
        self.pending.push((c, format!("{now} {path} {class} {fields}")));
    }

    /// Writes the pending cycle's lines in block order (stable: a block's own in its order).
    fn flush_cycle(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.pending.sort_by_key(|(c, _)| *c);
        let Some(out) = self.out.as_mut() else {
            self.pending.clear();
            return;
        };
        for (_, line) in self.pending.drain(..) {
            if self.error.is_some() || self.lines > self.max_lines {
                break;
            }
            self.lines += 1;
            let r = if self.lines > self.max_lines {
                writeln!(
                    out,
                    "{} - log-stopped lines={} (the --log-max bound; nothing is logged after this)",
                    self.pending_at, self.max_lines
                )
            } else {
                out.write_all(line.as_bytes()).and_then(|_| out.write_all(b"\n"))
            };
            if let Err(e) = r {
                self.error = Some(e);
            }
        }
        self.pending.clear();
    }

    /// Writes what is pending and flushes the log; the first error met while writing, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush_cycle();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.out.as_mut() {
            Some(o) => o.flush(),
            None => Ok(()),
        }
    }

    /// Lines written so far (the stop line included).
    pub fn lines(&self) -> u64 {
        self.lines
    }
}
