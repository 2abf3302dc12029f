//! Probes: a testbench's `probe:` section samples signals (the fields a VCD would trace) and
//! counters every N cycles into a CSV (`cycle,<column>…`), for `hwsim plot`.
//!
//! Sampling ticks nothing. The run loop (runner.rs) asks the kernel to stop at each probe time T
//! (`Sim::run(T)` executes the cycles before T, skipping idle ones under event skip, and stops),
//! then reads the nets' committed values and the counters: the state at the end of cycle T − 1,
//! the same with or without event skip (a signal holds its value between commits). The row for
//! T = 0 is the reset state; rows stop at the end of the run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use hwsim_hw::{Cycle, NetDyn, Sim, TraceKind, TraceValue};

use crate::build::testbench::Loaded;
use crate::input::schema::Probe;
use crate::input::yaml::InputError;
use crate::report::output::Staged;

/// Most columns a probe may have.
pub const MAX_COLUMNS: usize = 4096;

struct NetCols {
    net: Rc<dyn NetDyn>,
    /// Slots the net samples into.
    slots: usize,
    /// (slot, is real) of each column taken from it.
    cols: Vec<(usize, bool)>,
}

/// The counters matching `globs`, in counter order per glob, their names added to `header`;
/// the first glob that matches none is the error. (A set, not a scan of the list per counter:
/// `*` over a large system's counters was quadratic.)
fn counter_columns(sim: &Sim, globs: &[String], header: &mut Vec<String>) -> Result<Vec<usize>, String> {
    let mut counters = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for g in globs {
        let before = counters.len();
        for (i, (name, _)) in sim.counters().enumerate() {
            if hwsim_hw::glob_match(g, name) && taken.insert(i) {
                counters.push(i);
                header.push(name.to_string());
            }
        }
        if counters.len() == before {
            return Err(g.clone());
        }
    }
    Ok(counters)
}

/// A probe being written.
pub struct Prober {
    every: Cycle,
    next: Cycle,
    nets: Vec<NetCols>,
    counters: Vec<usize>,
    buf: Vec<TraceValue>,
    out: BufWriter<File>,
    staged: Staged,
    path: PathBuf,
    rows: u64,
}

/// Most rows a probe CSV may get (one per sample).
pub const MAX_PROBE_ROWS: u64 = 10_000_000;

impl Prober {
    /// Resolves the probe's globs against the simulation and opens `path`.
    pub fn new(l: &Loaded, p: &Probe, sim: &Sim, path: &Path, until: Cycle) -> Result<Prober, InputError> {
        if p.every == 0 {
            return Err(l.error_at("every", "probe: `every` must be ≥ 1 (cycles between samples)"));
        }
        // One row per sample over the whole run at most: bounded before the run starts.
        let rows = until / p.every + 1;
        if rows > MAX_PROBE_ROWS {
            return Err(l.error_at(
                "every",
                format!(
                    "probe: every {} cycles over a run of {until} is {rows} rows, more than {MAX_PROBE_ROWS} (raise `every` or shorten the run)",
                    p.every
                ),
            ));
        }
        if p.signals.is_empty() && p.counters.is_empty() {
            return Err(l.error_at("probe", "probe: give `signals:` or `counters:` (globs)"));
        }
        let mut header = vec!["cycle".to_string()];
        let mut nets = Vec::new();
        for g in &p.signals {
            let mut hit = false;
            for path in sim.net_paths() {
                let Some(net) = sim.net(path) else { continue };
                let layout = net.trace_layout();
                let mut slot = 0;
                let mut cols = Vec::new();
                for (name, kind) in &layout {
                    let col = if name.is_empty() {
                        path.clone()
                    } else {
                        format!("{path}.{name}")
                    };
                    let wide = matches!(kind, TraceKind::Wide(_));
                    if !wide
                        && (hwsim_hw::glob_match(g, path) || hwsim_hw::glob_match(g, &col))
                        && !header.contains(&col)
                    {
                        cols.push((slot, *kind == TraceKind::Real));
                        header.push(col);
                    }
                    slot += kind.slots();
                }
                if !cols.is_empty() {
                    hit = true;
                    nets.push(NetCols {
                        net: Rc::clone(net),
                        slots: slot,
                        cols,
                    });
                }
            }
            if !hit {
                return Err(l.error_at(
                    g,
                    format!(
                        "probe: signal glob `{g}` matches no net (nets look like `{}`)",
                        sim.net_paths().first().map_or("", |p| p.as_str())
                    ),
                ));
            }
        }
        let counters = counter_columns(sim, &p.counters, &mut header)
            .map_err(|g| l.error_at(&g, format!("probe: counter glob `{g}` matches no counter")))?;
        if header.len() > MAX_COLUMNS + 1 {
            return Err(l.error_at(
                "probe",
                format!("probe: {} columns, more than {MAX_COLUMNS}", header.len() - 1),
            ));
        }
        Self::open(header, nets, counters, p.every, path)
    }

    /// `--stats-every CYCLES --stats-csv PATH [--counters GLOB]`: the counters matching `glob`
    /// (all of them without one) every `every` cycles, a row per window end — the cumulative
    /// values, as a probe writes them (`hwsim plot --rate` draws them per window). Errors name
    /// the option.
    pub fn counters_every(
        sim: &Sim,
        every: Cycle,
        glob: &str,
        path: &Path,
        until: Cycle,
    ) -> Result<Prober, InputError> {
        let opt = |o: &str, m: String| InputError::new(Path::new(o), m);
        if every == 0 {
            return Err(opt("--stats-every", "0: give the cycles between two rows (≥ 1)".into()));
        }
        let rows = until / every + 1;
        if rows > MAX_PROBE_ROWS {
            return Err(opt(
                &format!("--stats-every {every}"),
                format!("over a run of {until} cycles is {rows} rows, more than {MAX_PROBE_ROWS}"),
            ));
        }
        let mut header = vec!["cycle".to_string()];
        let counters = counter_columns(sim, &[glob.to_string()], &mut header)
            .map_err(|g| opt("--counters", format!("`{g}` matches no counter")))?;
        if header.len() > MAX_COLUMNS + 1 {
            return Err(opt(
                "--stats-every",
                format!(
                    "{} counters, more than {MAX_COLUMNS} columns: narrow them with --counters GLOB",
                    header.len() - 1
                ),
            ));
        }
        Self::open(header, Vec::new(), counters, every, path)
    }

    fn open(
        header: Vec<String>,
        nets: Vec<NetCols>,
        counters: Vec<usize>,
        every: Cycle,
        path: &Path,
    ) -> Result<Prober, InputError> {
        let (f, staged) = crate::report::output::stage(path)?;
        let mut out = BufWriter::new(f);
        writeln!(out, "{}", header.join(",")).map_err(|e| InputError::new(path, format!("cannot write: {e}")))?;
        let most = nets.iter().map(|n| n.slots).max().unwrap_or(0);
        Ok(Prober {
            every,
            next: 0,
            nets,
            counters,
            buf: vec![TraceValue::Bits(0); most],
            out,
            staged,
            path: path.to_path_buf(),
            rows: 0,
        })
    }

    /// The next probe time.
    pub fn next(&self) -> Cycle {
        self.next
    }

    /// Writes the row for `sim.now()` if it is the next probe time.
    pub fn sample(&mut self, sim: &Sim) -> Result<(), InputError> {
        if sim.now() != self.next {
            return Ok(());
        }
        self.write_row(sim)
    }

    /// At the end of the run: the row of its last, partial window, if the run ended between
    /// two rows (`--stats-every`: the counters' final values; settled by the caller).
    pub fn sample_end(&mut self, sim: &Sim) -> Result<(), InputError> {
        if sim.now().saturating_add(self.every) <= self.next {
            return Ok(());
        }
        self.write_row(sim)
    }

    fn write_row(&mut self, sim: &Sim) -> Result<(), InputError> {
        let now = sim.now();
        // The values committed by the end of cycle now − 1 (a stream's `valid`: pushed then).
        let at = if now == 0 { Cycle::MAX } else { now - 1 };
        let mut line = now.to_string();
        for n in &self.nets {
            let buf = &mut self.buf[..n.slots];
            n.net.sample(at, buf);
            for &(slot, _) in &n.cols {
                line.push(',');
                match buf[slot] {
                    TraceValue::Bits(b) => line.push_str(&b.to_string()),
                    TraceValue::Real(r) => line.push_str(&r.to_string()),
                }
            }
        }
        if !self.counters.is_empty() {
            let mut vals = vec![0u64; self.counters.len()];
            // One pass over the counters, in index order.
            let mut order: Vec<(usize, usize)> =
                self.counters.iter().copied().enumerate().map(|(k, i)| (i, k)).collect();
            order.sort_unstable();
            let mut o = order.iter().peekable();
            for (i, (_, v)) in sim.counters().enumerate() {
                while let Some(&&(ci, k)) = o.peek() {
                    if ci != i {
                        break;
                    }
                    vals[k] = v;
                    o.next();
                }
                if o.peek().is_none() {
                    break;
                }
            }
            for v in vals {
                line.push(',');
                line.push_str(&v.to_string());
            }
        }
        line.push('\n');
        self.out
            .write_all(line.as_bytes())
            .map_err(|e| InputError::new(&self.path, format!("cannot write: {e}")))?;
        self.rows += 1;
        self.next = now.saturating_add(self.every);
        Ok(())
    }

    /// Completes the file; returns its path and the number of rows.
    pub fn finish(mut self) -> Result<(PathBuf, u64), InputError> {
        self.out
            .flush()
            .map_err(|e| InputError::new(&self.path, format!("cannot write: {e}")))?;
        drop(self.out);
        self.staged.commit()?;
        Ok((self.path, self.rows))
    }
}
