//! `hwsim vectors TB.yaml --out DIR [--instance PATH …]`: the per-cycle values on every port of
//! a testbench's instances, as CSV, so an RTL testbench can drive the same stimulus and check
//! the same outputs cycle by cycle. A module-form testbench gives its instances (all, or those
//! `--instance` names); a system-form testbench the nodes `--instance` names, anywhere in the
//! system (`chip0.lg7.tx.mac_credit`, `sw0.alloc`, a composite such as `chip0.lg7.rx`): the
//! module's stimulus as the system scenario drives it.
//!
//! One file per instance, `DIR/<instance>.csv`. The header is `cycle` then one column per traced
//! field, `<port>.<field>:<width>:<in|out>` (`<port>:<width>:<dir>` for a single-field port;
//! `real` for a real's width); a stream port has its `valid` (high in the cycle of a push) and the
//! fields of the last message. Row `c` holds the values on the wave at cycle `c` (an input's value
//! at `c` is read by the block at `c + 1`), for cycles 0 to the end of the run. Numbers are
//! decimal; fields wider than 64 bits are hexadecimal with `0x`.
//!
//! Several messages in one cycle: a stream port that may carry more than one a cycle (declared
//! wider than one, `ack_return.taken`: 8) gets a column group per slot, `<port>[k].valid`,
//! `<port>[k].<field>` for k = 0 … n−1 (n: the declared width; for a port declared wider than
//! 64, the most messages it carried in one cycle of the run): the k-th message of the cycle,
//! in push order, in slot k; a slot without a message has `valid` 0 and its fields 0 (not the
//! last message, as a single-slot port shows). Stimulus rows written for the same cycle on one
//! port need nothing of the kind: the driver pushes them one per cycle, as the wave shows.
//!
//! The values come from the run's own VCD (read back with `wellen`): the CSV shows exactly what
//! `--vcd` shows; a port with slots comes from the kernel's log of its pushes instead (the wave
//! shows the last message of a cycle only).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hwsim_hw::{Dir, SharedBuffer};

use crate::build::testbench;
use crate::input::yaml::InputError;
use crate::report::waves::{Val, Wave};
use crate::run::runner;

/// A port of an instance: its name, direction, the net path it is bound to, and whether that
/// net is a stream.
struct Port {
    name: String,
    dir: Dir,
    net: String,
    stream: bool,
    /// Slots per cycle (0: the wave's one message, see the header).
    slots: u32,
    /// A stream's data fields (name, kind), as the kernel samples them.
    fields: Vec<(String, hwsim_hw::TraceKind)>,
}

/// Where a CSV column's values come from.
enum Source {
    /// A variable of the wave.
    Wave(usize),
    /// Slot `k` of a port with slots: its `valid` (None) or the field starting at sample slot j.
    Slot {
        port: usize,
        k: usize,
        field: Option<(usize, hwsim_hw::TraceKind)>,
    },
}

/// One CSV column: where its values come from, and its header.
struct Column {
    src: Source,
    header: String,
}

/// An instance to write: its path and its ports.
type Instance = (String, Vec<Port>);

/// The pushes of the ports with slots, per net: (cycle, sampled fields) each.
type Pushes = Vec<(u64, Vec<hwsim_hw::TraceValue>)>;

/// Runs the testbench and writes the CSV files; returns the summary text.
pub fn run(tb: &Path, out: &Path, only: &[String], interrupt: Option<&Arc<AtomicBool>>) -> Result<String, InputError> {
    let stopped = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
    let l = testbench::load(tb)?;
    if crate::build::form(&l)? == crate::build::Form::System && only.is_empty() {
        return Err(l.error_at(
            "system",
            "vectors: a system-form testbench needs `--instance PATH` (a node of the system, e.g. chip0.lg7.tx.mac_credit; `hwsim netlist TB` lists them)",
        ));
    }
    let mut insts = instances(&l, only)?;
    let files: Vec<std::path::PathBuf> = insts.iter().map(|(i, _)| out.join(format!("{i}.csv"))).collect();
    let outs: Vec<(&str, &Path)> = files.iter().map(|f| ("--out", f.as_path())).collect();
    crate::report::output::check_outputs(&l.files, &outs).map_err(|m| InputError::new(out, m))?;

    let buf = SharedBuffer::default();
    let pushes: std::rc::Rc<std::cell::RefCell<BTreeMap<String, Pushes>>> = Default::default();
    let report = record(&l, &insts, &buf, &pushes, interrupt)?;
    let end = report.cycles;
    if report.interrupted {
        return Ok(format!("interrupted at cycle {end}: no vectors written\n"));
    }
    if end >= MAX_ROWS {
        return Err(InputError::new(
            tb,
            format!(
                "the run ended at cycle {end}: one row per cycle would be {} rows, more than the {MAX_ROWS} vectors writes (give --until or shorten the run)",
                end.saturating_add(1)
            ),
        ));
    }
    let mut wave = Wave::from_bytes(Path::new("VCD output"), buf.bytes())?;
    let pushes_ref = pushes.borrow();
    used_slots(&mut insts, &pushes_ref);
    // The wave's variables by name, sorted: a port's are its net and the `net.field`s after it,
    // found by a range, not by a scan per port (4000 instances took 13.6 s).
    let by_name: std::collections::BTreeMap<String, usize> =
        wave.vars.iter().enumerate().map(|(i, v)| (v.name.clone(), i)).collect();
    let mut summary = String::new();
    for ((_, ports), file) in insts.iter().zip(&files) {
        let cols = columns(ports, &by_name, &wave);
        let csv = Csv {
            file,
            ports,
            cols: &cols,
            pushes: &pushes_ref,
            end,
        };
        if !csv.write(&mut wave, &stopped)? {
            // The file being written is dropped with its temporary name; those before it
            // are whole.
            let written = files.iter().position(|f| f == file).unwrap_or(0);
            summary.push_str(&format!(
                "interrupted while writing {}: {written} of {} files written\n",
                file.display(),
                files.len()
            ));
            return Ok(summary);
        }
        let _ = writeln!(
            summary,
            "wrote {} ({} cycles, {} columns)",
            file.display(),
            end + 1,
            cols.len()
        );
    }
    if report.checks.is_empty() {
        // No checks, no verdict (a PASS of nothing checked is no pass).
        let _ = writeln!(summary, "run: no checks, ended at cycle {end}");
    } else {
        let _ = writeln!(
            summary,
            "run: {}",
            report.render(false, false).lines().last().unwrap_or("")
        );
    }
    Ok(summary)
}

/// The instances to write and their ports, each bound to the net path it shows on the wave.
fn instances(l: &testbench::Loaded, only: &[String]) -> Result<Vec<Instance>, InputError> {
    // The declared ports (the build below hands its netlist to the kernel).
    let netlist = crate::build::netlist(l, l.tb.seed)?;
    let names = instance_names(l, &netlist, only)?;
    let (sim, _) = runner::build(l, l.tb.seed)?;
    let paths = sim.net_paths();
    // Each net's first path (its own name, before any alias), by the net's address: one pass,
    // not a scan of every path per port (quadratic in the instances).
    let mut first_path: std::collections::HashMap<*const (), &String> = std::collections::HashMap::new();
    for p in paths {
        if let Some(n) = sim.net(p) {
            first_path.entry(std::rc::Rc::as_ptr(n) as *const ()).or_insert(p);
        }
    }
    let mut insts: Vec<Instance> = Vec::new();
    for inst in names {
        let mut ports = Vec::new();
        for d in netlist.ports_of(&inst).unwrap_or(&[]) {
            let ep = format!("{inst}.{}", d.name);
            let slots = if d.shape == hwsim_hw::Shape::Stream && d.width > 1 {
                d.width
            } else {
                0
            };
            let Some(net) = sim.net(&ep) else { continue };
            let Some(&p) = first_path.get(&(std::rc::Rc::as_ptr(net) as *const ())) else {
                continue;
            };
            let fields = net
                .trace_layout()
                .into_iter()
                .filter(|(n, _)| n != "valid" && n != "occupancy")
                .collect();
            ports.push(Port {
                name: d.name.clone(),
                dir: d.dir,
                net: p.clone(),
                stream: net.is_stream(),
                slots,
                fields,
            });
        }
        insts.push((inst, ports));
    }
    Ok(insts)
}

/// The run, tracing the instances' nets into `buf` and, at its end, the pushes of the ports
/// with slots into `pushes`.
fn record(
    l: &testbench::Loaded,
    insts: &[Instance],
    buf: &SharedBuffer,
    pushes: &std::rc::Rc<std::cell::RefCell<BTreeMap<String, Pushes>>>,
    interrupt: Option<&Arc<AtomicBool>>,
) -> Result<crate::report::Report, InputError> {
    let globs: Vec<String> = insts
        .iter()
        .flat_map(|(_, ps)| ps.iter().map(|p| p.net.clone()))
        .collect();
    // The ports with slots: their pushes, logged by the kernel, read when the run ends.
    let logged: Vec<String> = insts
        .iter()
        .flat_map(|(_, ps)| ps.iter().filter(|p| p.slots > 0).map(|p| p.net.clone()))
        .collect();
    let on_end = {
        let (pushes, logged) = (pushes.clone(), logged.clone());
        move |sim: &hwsim_hw::Sim| {
            for n in &logged {
                if let Some(v) = sim.net(n).and_then(|net| net.logged_pushes()) {
                    pushes.borrow_mut().insert(n.clone(), v);
                }
            }
        }
    };
    runner::run_loaded(
        l,
        runner::Options {
            vcd_writer: Some(Box::new(buf.clone())),
            trace: globs,
            // Stimulus and outputs are what vectors writes; the checks are not needed.
            checks_optional: true,
            interrupt: interrupt.cloned(),
            log_nets: logged,
            on_end: Some(Box::new(on_end)),
            ..Default::default()
        },
    )
}

/// An instance's columns: per port, its wave variables in file order (a stream's without its
/// occupancy), or its slots' columns.
fn columns(ports: &[Port], by_name: &BTreeMap<String, usize>, wave: &Wave) -> Vec<Column> {
    let mut cols: Vec<Column> = Vec::new();
    for (pi, p) in ports.iter().enumerate() {
        let Port {
            name: port,
            dir,
            net,
            stream,
            ..
        } = p;
        let d = if *dir == Dir::In { "in" } else { "out" };
        if p.slots > 0 {
            slot_columns(&mut cols, pi, p, d);
            continue;
        }
        let prefix = format!("{net}.");
        let mut hits = by_name
            .get(net)
            .map(|&i| (i, String::new()))
            .into_iter()
            .chain(
                by_name
                    .range(prefix.clone()..)
                    .take_while(|(n, _)| n.starts_with(prefix.as_str()))
                    .filter_map(|(n, &i)| {
                        let f = &n[prefix.len()..];
                        (!(*stream && f == "occupancy")).then(|| (i, format!(".{f}")))
                    }),
            )
            .collect::<Vec<_>>();
        // A port's vars in file order, as the scan gave them.
        hits.sort_by_key(|h| h.0);
        for (i, field) in hits {
            let v = &wave.vars[i];
            let width = v.width.map_or("real".to_string(), |w| w.to_string());
            cols.push(Column {
                src: Source::Wave(i),
                header: format!("{port}{field}:{width}:{d}"),
            });
        }
    }
    cols
}

/// One instance's CSV: its columns over cycles 0..=end.
struct Csv<'a> {
    file: &'a Path,
    ports: &'a [Port],
    cols: &'a [Column],
    pushes: &'a BTreeMap<String, Pushes>,
    end: u64,
}

impl Csv<'_> {
    /// Writes the file, row by row (through a temporary name), not into memory; false if
    /// `stopped` said so first (the temporary is dropped).
    fn write(&self, wave: &mut Wave, stopped: &dyn Fn() -> bool) -> Result<bool, InputError> {
        let (file, cols) = (self.file, self.cols);
        let idx: Vec<usize> = cols
            .iter()
            .filter_map(|c| match c.src {
                Source::Wave(v) => Some(v),
                Source::Slot { .. } => None,
            })
            .collect();
        let changes = wave.changes(&idx);
        // Per port with slots: its pushes, and a cursor to the first of the current cycle.
        let logs: Vec<&[(u64, Vec<hwsim_hw::TraceValue>)]> = self
            .ports
            .iter()
            .map(|p| {
                if p.slots == 0 {
                    return &[][..];
                }
                self.pushes.get(&p.net).map_or(&[][..], |v| v.as_slice())
            })
            .collect();
        let mut at = vec![0usize; self.ports.len()];
        let (f, staged) = crate::report::output::stage(file)?;
        use std::io::Write as _;
        let mut w = std::io::BufWriter::new(f);
        let io = |e: std::io::Error| InputError::new(file, format!("cannot write: {e}"));
        let mut head = String::from("cycle");
        for c in cols {
            head.push(',');
            head.push_str(&c.header);
        }
        writeln!(w, "{head}").map_err(io)?;
        let mut pos = vec![0usize; idx.len()];
        let mut cur: Vec<String> = vec![String::new(); cols.len()];
        let mut row = String::new();
        for cycle in 0..=self.end {
            if cycle % 65536 == 0 && stopped() {
                return Ok(false);
            }
            row.clear();
            let _ = std::fmt::Write::write_fmt(&mut row, format_args!("{cycle}"));
            for (p, log) in logs.iter().enumerate() {
                while at[p] < log.len() && log[at[p]].0 < cycle {
                    at[p] += 1;
                }
            }
            let mut wk = 0;
            for (k, col) in cols.iter().enumerate() {
                row.push(',');
                match col.src {
                    Source::Wave(_) => {
                        while pos[wk] < changes[wk].len() && changes[wk][pos[wk]].0 <= cycle {
                            cur[k] = show(&changes[wk][pos[wk]].1);
                            pos[wk] += 1;
                        }
                        wk += 1;
                        row.push_str(&cur[k]);
                    }
                    Source::Slot { port, k: slot, field } => {
                        let log = logs[port];
                        let i = at[port] + slot;
                        let msg = log.get(i).filter(|m| m.0 == cycle);
                        match (field, msg) {
                            (None, m) => row.push(if m.is_some() { '1' } else { '0' }),
                            (Some((j, kind)), Some(m)) => row.push_str(&show_sample(&m.1[j..], kind)),
                            (Some(_), None) => row.push('0'),
                        }
                    }
                }
            }
            row.push('\n');
            w.write_all(row.as_bytes()).map_err(io)?;
        }
        w.flush().map_err(io)?;
        drop(w);
        staged.commit()?;
        Ok(true)
    }
}

/// The instances to write: those `only` names (each an instance or composite of the netlist),
/// or every instance of a module-form testbench.
fn instance_names(l: &testbench::Loaded, nl: &hwsim_hw::Netlist, only: &[String]) -> Result<Vec<String>, InputError> {
    if only.is_empty() {
        return Ok(l
            .tb
            .instances
            .iter()
            .flat_map(|(name, spec)| match spec.count {
                None => vec![name.clone()],
                Some(n) => (0..n).map(|i| format!("{name}{i}")).collect(),
            })
            .collect());
    }
    let mut v: Vec<String> = Vec::new();
    for p in only {
        if nl.ports_of(p).is_none() {
            return Err(InputError::new(
                &l.path,
                format!("vectors: --instance {p}: no such instance in the netlist (`hwsim netlist` lists them)"),
            ));
        }
        if !v.contains(p) {
            v.push(p.clone());
        }
    }
    Ok(v)
}

/// Lanes a port may keep as declared; a wider one (the TX slot FIFO's `q_ops`: 2 × slots + 2,
/// every frame a Go-Back-N can put back in one cycle) gets the lanes its busiest cycle used.
const MAX_DECLARED_SLOTS: u32 = 64;

/// Cuts each port declared wider than [`MAX_DECLARED_SLOTS`] to the most messages it carried in
/// one cycle of the run (at least one slot): a column per unused lane of a 1 026-lane stream
/// made go_back_n's slot FIFO vectors 10 000 columns and 1 GB.
fn used_slots(insts: &mut [Instance], pushes: &BTreeMap<String, Pushes>) {
    for (_, ports) in insts.iter_mut() {
        for p in ports.iter_mut().filter(|p| p.slots > MAX_DECLARED_SLOTS) {
            let mut most = 1u32;
            if let Some(v) = pushes.get(&p.net) {
                let mut i = 0;
                while i < v.len() {
                    let k = v[i..].iter().take_while(|(c, _)| *c == v[i].0).count();
                    most = most.max(k as u32);
                    i += k;
                }
            }
            p.slots = most.min(p.slots);
        }
    }
}

/// The columns of a port with slots: per slot, `valid` then the data fields at their widths.
fn slot_columns(cols: &mut Vec<Column>, pi: usize, p: &Port, d: &str) {
    for k in 0..p.slots as usize {
        cols.push(Column {
            src: Source::Slot {
                port: pi,
                k,
                field: None,
            },
            header: format!("{}[{k}].valid:1:{d}", p.name),
        });
        let mut j = 0;
        for (name, kind) in &p.fields {
            let width = match kind {
                hwsim_hw::TraceKind::Bits(w) | hwsim_hw::TraceKind::Wide(w) => w.to_string(),
                hwsim_hw::TraceKind::Real => "real".to_string(),
            };
            cols.push(Column {
                src: Source::Slot {
                    port: pi,
                    k,
                    field: Some((j, *kind)),
                },
                header: format!("{}[{k}].{name}:{width}:{d}", p.name),
            });
            j += kind.slots();
        }
    }
}

/// A sampled field as CSV text: decimal up to 64 bits, a wide one's words as `0x` hex.
fn show_sample(v: &[hwsim_hw::TraceValue], kind: hwsim_hw::TraceKind) -> String {
    use hwsim_hw::{TraceKind, TraceValue};
    match (kind, v.first()) {
        (TraceKind::Real, Some(TraceValue::Real(r))) => r.to_string(),
        (TraceKind::Wide(_), _) => {
            let words: Vec<u64> = v[..kind.slots()]
                .iter()
                .map(|x| if let TraceValue::Bits(b) = x { *b } else { 0 })
                .collect();
            let mut hex = String::new();
            for w in words.iter().rev() {
                if hex.is_empty() {
                    if *w != 0 {
                        let _ = write!(hex, "{w:x}");
                    }
                } else {
                    let _ = write!(hex, "{w:016x}");
                }
            }
            format!("0x{}", if hex.is_empty() { "0" } else { &hex })
        }
        (_, Some(TraceValue::Bits(b))) => b.to_string(),
        _ => "0".to_string(),
    }
}

/// Most rows (cycles) one vectors file holds: one row per cycle of the run, written as it goes.
pub const MAX_ROWS: u64 = 10_000_000;

/// A value as CSV text: decimal up to 64 bits, else `0x` hex; `x`/`z` bits as they are.
fn show(v: &Val) -> String {
    match v {
        Val::Real(r) => r.to_string(),
        Val::Bits(b) if b.bytes().all(|c| c == b'0' || c == b'1') => {
            if b.len() <= 64 {
                u64::from_str_radix(b, 2).map_or_else(|_| b.clone(), |x| x.to_string())
            } else {
                let t = b.trim_start_matches('0');
                let mut hex = String::new();
                let pad = (4 - t.len() % 4) % 4;
                let full: String = "0".repeat(pad) + t;
                for ch in full.as_bytes().chunks(4) {
                    let n = ch.iter().fold(0u8, |a, &c| a * 2 + (c - b'0'));
                    let _ = write!(hex, "{n:x}");
                }
                format!("0x{}", if hex.is_empty() { "0" } else { &hex })
            }
        }
        Val::Bits(b) => b.clone(),
    }
}
