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
//! A row holds one message per port and cycle, so a stimulus that pushes two messages on one port
//! in the same cycle is refused (at its line), and so is an instance with a stream port that may
//! carry several messages a cycle (declared wider than one: `ack_return.taken`), which the
//! rows cannot show yet.
//!
//! The values come from the run's own VCD (read back with `wellen`): the CSV shows exactly what
//! `--vcd` shows.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hwsim_hw::{Dir, SharedBuffer};

use crate::runner;
use crate::testbench;
use crate::waves::{Val, Wave};
use crate::yaml::InputError;

/// A port of an instance: its name, direction, the net path it is bound to, and whether that
/// net is a stream.
struct Port {
    name: String,
    dir: Dir,
    net: String,
    stream: bool,
}

/// One CSV column: a wave variable and its header.
struct Column {
    var: usize,
    header: String,
}

/// Runs the testbench and writes the CSV files; returns the summary text.
pub fn run(tb: &Path, out: &Path, only: &[String], interrupt: Option<&Arc<AtomicBool>>) -> Result<String, InputError> {
    let stopped = || interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
    let l = testbench::load(tb)?;
    if l.tb.system.is_some() && only.is_empty() {
        return Err(l.error_at(
            "system",
            "vectors: a system-form testbench needs `--instance PATH` (a node of the system, e.g. chip0.lg7.tx.mac_credit; `hwsim netlist TB` lists them)",
        ));
    }
    // Two messages on one port in one cycle do not fit in a row.
    let mut seen: BTreeMap<(&str, u64), usize> = BTreeMap::new();
    for s in &l.tb.stimulus {
        let n = seen.entry((s.port.as_str(), s.at)).or_default();
        *n += 1;
        if *n == 2 {
            let msg = format!(
                "vectors: two values on `{}` at cycle {}; a CSV row holds one value per port and cycle",
                s.port, s.at
            );
            // At the second row of that cycle when it is written `at: N, port: P`.
            let needle = format!("at: {}, port: {}", s.at, s.port);
            let hits: Vec<(usize, usize)> = l
                .text
                .lines()
                .enumerate()
                .filter_map(|(i, line)| line.find(&needle).map(|c| (i + 1, line[..c].chars().count() + 1)))
                .collect();
            let mut e = l.error_at(&s.port, msg);
            if let Some(&(line, col)) = hits.get(1) {
                e.line = Some(line);
                e.column = Some(col);
            }
            return Err(e);
        }
    }
    // The declared ports (the build below hands its netlist to the kernel).
    let netlist = if l.tb.system.is_some() {
        crate::system::elaborate(&l, l.tb.seed)?.0
    } else {
        testbench::elaborate(&l)?.netlist
    };
    let names = instance_names(&l, &netlist, only)?;
    let (sim, _) = runner::build(&l, l.tb.seed)?;
    // Instance ports → the net path each is bound to.
    let mut insts: Vec<(String, Vec<Port>)> = Vec::new();
    let paths = sim.net_paths();
    {
        for inst in names {
            let mut ports = Vec::new();
            for d in netlist.ports_of(&inst).unwrap_or(&[]) {
                if d.shape == hwsim_hw::Shape::Stream && d.width > 1 {
                    return Err(InputError::new(
                        tb,
                        format!(
                            "vectors: `{inst}.{}` may carry {} messages a cycle, and a CSV row holds one value per port and cycle",
                            d.name, d.width
                        ),
                    ));
                }
                let ep = format!("{inst}.{}", d.name);
                let Some(net) = sim.net(&ep) else { continue };
                let Some(p) = paths
                    .iter()
                    .find(|p| sim.net(p).is_some_and(|n| std::rc::Rc::ptr_eq(n, net)))
                else {
                    continue;
                };
                ports.push(Port {
                    name: d.name.clone(),
                    dir: d.dir,
                    net: p.clone(),
                    stream: net.is_stream(),
                });
            }
            insts.push((inst, ports));
        }
    }
    drop(sim);
    let files: Vec<std::path::PathBuf> = insts.iter().map(|(i, _)| out.join(format!("{i}.csv"))).collect();
    let outs: Vec<(&str, &Path)> = files.iter().map(|f| ("--out", f.as_path())).collect();
    crate::output::check_outputs(&l.files, &outs).map_err(|m| InputError::new(out, m))?;

    let buf = SharedBuffer::default();
    let globs: Vec<String> = insts
        .iter()
        .flat_map(|(_, ps)| ps.iter().map(|p| p.net.clone()))
        .collect();
    let report = runner::run_loaded(
        &l,
        runner::Options {
            vcd_writer: Some(Box::new(buf.clone())),
            trace: globs,
            // Stimulus and outputs are what vectors writes; the checks are not needed.
            checks_optional: true,
            interrupt: interrupt.cloned(),
            ..Default::default()
        },
    )?;
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
    // The wave's variables by name, sorted: a port's are its net and the `net.field`s after it,
    // found by a range, not by a scan per port (4000 instances took 13.6 s).
    let by_name: std::collections::BTreeMap<String, usize> =
        wave.vars.iter().enumerate().map(|(i, v)| (v.name.clone(), i)).collect();
    let mut summary = String::new();
    for ((_, ports), file) in insts.iter().zip(&files) {
        let mut cols: Vec<Column> = Vec::new();
        for Port {
            name: port,
            dir,
            net,
            stream,
        } in ports
        {
            let d = if *dir == Dir::In { "in" } else { "out" };
            let prefix = format!("{net}.");
            let hits = by_name
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
            let mut hits = hits;
            hits.sort_by_key(|h| h.0);
            for (i, field) in hits {
                let v = &wave.vars[i];
                let width = v.width.map_or("real".to_string(), |w| w.to_string());
                cols.push(Column {
                    var: i,
                    header: format!("{port}{field}:{width}:{d}"),
                });
            }
        }
        let idx: Vec<usize> = cols.iter().map(|c| c.var).collect();
        let changes = wave.changes(&idx);
        // Rows go to the file as they are made (through a temporary name), not into memory.
        let (f, staged) = crate::output::stage(file)?;
        use std::io::Write as _;
        let mut w = std::io::BufWriter::new(f);
        let io = |e: std::io::Error| InputError::new(file, format!("cannot write: {e}"));
        let mut head = String::from("cycle");
        for c in &cols {
            head.push(',');
            head.push_str(&c.header);
        }
        writeln!(w, "{head}").map_err(io)?;
        let mut pos = vec![0usize; cols.len()];
        let mut cur: Vec<String> = vec![String::new(); cols.len()];
        let mut row = String::new();
        for cycle in 0..=end {
            if cycle % 65536 == 0 && stopped() {
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
            row.clear();
            let _ = std::fmt::Write::write_fmt(&mut row, format_args!("{cycle}"));
            for k in 0..cols.len() {
                while pos[k] < changes[k].len() && changes[k][pos[k]].0 <= cycle {
                    cur[k] = show(&changes[k][pos[k]].1);
                    pos[k] += 1;
                }
                row.push(',');
                row.push_str(&cur[k]);
            }
            row.push('\n');
            w.write_all(row.as_bytes()).map_err(io)?;
        }
        w.flush().map_err(io)?;
        drop(w);
        staged.commit()?;
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
