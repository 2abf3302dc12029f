//! Waveform files read back and converted: a VCD or FST (ours or an RTL simulator's) opened with
//! the `wellen` reader, and the FST output of `--fst`, written with `fst-writer` from the VCD the
//! run produced, so both files hold the same signals, widths and value changes by construction.
//!
//! `hwsim diff`, `hwsim vectors` and the GTKWave save file all start from [`Wave`]: the list of
//! variables (dotted full names, widths), the time range, and each variable's value changes.
//! A file the reader cannot parse is bad input (the path and the reason), never a panic.

use std::collections::HashMap;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use wellen::{simple, SignalEncoding, SignalRef, SignalValueRef};

use crate::yaml::InputError;

/// One variable of a wave.
#[derive(Clone, Debug)]
pub struct Var {
    /// Dotted full name without the bit range (`chip0.lg7.tx.frame.psn`).
    pub name: String,
    /// Width in bits; `None` for a real.
    pub width: Option<u32>,
    sig: SignalRef,
}

/// A sampled value: bits (most significant first; `x` / `z` kept) or a real.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// `0`/`1`/`x`/`z` characters, most significant bit first.
    Bits(String),
    /// A real.
    Real(f64),
}

/// A waveform opened for reading.
pub struct Wave {
    /// The file (for messages).
    pub path: PathBuf,
    /// Variables in file order.
    pub vars: Vec<Var>,
    /// The `$version` text (`hwsim` for ours).
    pub version: String,
    /// Nanoseconds per time unit of the file.
    pub ns_per_unit: f64,
    inner: simple::Waveform,
}

/// Runs `f`, turning a panic inside the reader into an error (a malformed file must not take
/// the process down); the default panic message is kept off stderr meanwhile.
fn guarded<T>(path: &Path, f: impl FnOnce() -> Result<T, String>) -> Result<T, InputError> {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(prev);
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(InputError::new(path, format!("cannot read the wave: {e}"))),
        Err(_) => Err(InputError::new(path, "cannot read the wave: malformed file")),
    }
}

/// Widest variable read from a wave, bits (hwsim writes at most 4096; RTL memories dumped whole
/// can be wider): a declared width is what the reader allocates for every value.
pub const MAX_WAVE_WIDTH: u64 = 1 << 16;

/// Before a wave reaches the reader, which allocates what the file declares: the file must be a
/// regular one (`/dev/zero` or a FIFO would never end), and a VCD's header must end and declare
/// no variable wider than [`MAX_WAVE_WIDTH`].
fn precheck(path: &Path) -> Result<(), InputError> {
    use std::io::BufRead;
    let meta = std::fs::metadata(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(InputError::new(
            path,
            "cannot read the wave: not a regular file (a VCD or FST file is expected)",
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    let mut r = std::io::BufReader::new(f);
    let first = r
        .fill_buf()
        .map(|b| b.iter().find(|c| !c.is_ascii_whitespace()).copied());
    if first.ok().flatten() != Some(b'$') {
        // Not a VCD (an FST is binary): the reader's own checks apply.
        return Ok(());
    }
    // The header: `$var <type> <width> <id> <name> … $end` declarations up to `$enddefinitions`.
    // Tokens are read one at a time (a declaration may span lines); lines are bounded so a file
    // of one endless line cannot fill memory here either.
    let mut line = String::new();
    let mut n = 0u64;
    let mut pending: Vec<String> = Vec::new();
    loop {
        line.clear();
        let got = std::io::Read::take(&mut r, 1 << 20)
            .read_line(&mut line)
            .map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        if got == 0 {
            return Err(InputError::new(
                path,
                format!(
                    "cannot read the wave: the header ends at line {n} without $enddefinitions (a truncated file?)"
                ),
            ));
        }
        n += 1;
        for tok in line.split_whitespace() {
            if tok == "$enddefinitions" {
                return Ok(());
            }
            if tok == "$var" {
                pending.clear();
            }
            pending.push(tok.to_string());
            if tok == "$end" && pending.first().is_some_and(|t| t == "$var") {
                let width = pending.get(2).and_then(|w| w.parse::<u64>().ok());
                let name = pending.get(4).map_or("?", String::as_str);
                match width {
                    Some(w) if w <= MAX_WAVE_WIDTH => {}
                    Some(w) => {
                        return Err(InputError::new(
                            path,
                            format!(
                                "cannot read the wave: line {n}: variable `{name}` is {w} bits wide; at most {MAX_WAVE_WIDTH} are read"
                            ),
                        ))
                    }
                    None => {
                        return Err(InputError::new(
                            path,
                            format!("cannot read the wave: line {n}: a $var without a width"),
                        ))
                    }
                }
                pending.clear();
            }
        }
        if line.len() >= 1 << 20 && !line.ends_with('\n') {
            return Err(InputError::new(
                path,
                format!("cannot read the wave: line {n} of the header is longer than 1 MiB"),
            ));
        }
    }
}

fn single_thread() -> wellen::LoadOptions {
    wellen::LoadOptions {
        multi_thread: false,
        ..Default::default()
    }
}

impl Wave {
    /// Opens a VCD or FST file (the format is detected from the content).
    pub fn open(path: &Path) -> Result<Wave, InputError> {
        precheck(path)?;
        let p = path.to_path_buf();
        let inner = guarded(path, move || {
            simple::read_with_options(&p, &single_thread()).map_err(|e| e.to_string())
        })?;
        Wave::from_inner(path, inner)
    }

    /// Opens a wave held in memory (`name` for messages).
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<Wave, InputError> {
        let inner = guarded(name, move || {
            simple::read_from_reader(std::io::Cursor::new(bytes)).map_err(|e| e.to_string())
        })?;
        Wave::from_inner(name, inner)
    }

    fn from_inner(path: &Path, inner: simple::Waveform) -> Result<Wave, InputError> {
        let h = inner.hierarchy();
        let mut vars = Vec::new();
        for r in h.all_vars() {
            let v = &h[r];
            let width = match v.signal_encoding(h) {
                SignalEncoding::BitVector(w) => Some(w),
                SignalEncoding::Real => None,
                SignalEncoding::String => continue,
            };
            vars.push(Var {
                name: v.full_name(h),
                width,
                sig: v.signal_ref(),
            });
        }
        let ns_per_unit = match h.timescale() {
            Some(ts) => ts.factor as f64 * 10f64.powi(ts.unit.to_exponent().unwrap_or(-9) as i32 + 9),
            None => 1.0,
        };
        if inner.time_table().is_empty() {
            return Err(InputError::new(path, "cannot read the wave: no timestamps"));
        }
        Ok(Wave {
            path: path.to_path_buf(),
            version: h.version().trim().to_string(),
            ns_per_unit,
            vars,
            inner,
        })
    }

    /// Whether hwsim wrote this wave (one time unit is one cycle).
    pub fn is_hwsim(&self) -> bool {
        self.version.starts_with("hwsim")
    }

    /// Last timestamp, in the file's units.
    pub fn end_time(&self) -> u64 {
        *self.inner.time_table().last().unwrap_or(&0)
    }

    /// The variable named `name` (dotted, no range).
    pub fn find(&self, name: &str) -> Option<usize> {
        self.vars.iter().position(|v| v.name == name)
    }

    /// Loads the value changes of the variables `idx` (in the file's time units).
    pub fn changes(&mut self, idx: &[usize]) -> Vec<Vec<(u64, Val)>> {
        let refs: Vec<SignalRef> = idx.iter().map(|&i| self.vars[i].sig).collect();
        self.inner.load_signals(&refs);
        let times = self.inner.time_table();
        idx.iter()
            .map(|&i| {
                let s = self.inner.get_signal(self.vars[i].sig).expect("loaded");
                s.iter_changes().map(|(t, v)| (times[t as usize], value(v))).collect()
            })
            .collect()
    }
}

fn value(v: SignalValueRef<'_>) -> Val {
    match v {
        SignalValueRef::Real(r) => Val::Real(r),
        SignalValueRef::String(s) => Val::Bits(s.to_string()),
        SignalValueRef::Event => Val::Bits("1".into()),
        other => Val::Bits(other.to_bit_string().unwrap_or_default()),
    }
}

/// Writes `vcd` (a whole VCD hwsim produced) as FST to `out`. Same hierarchy, widths and value
/// changes; no date (same input, same bytes).
pub fn write_fst<W: Write + Seek>(vcd_name: &Path, vcd: Vec<u8>, out: W) -> Result<W, String> {
    use fst_writer::{FstFileType, FstInfo, FstScopeType, FstSignalType, FstVarDirection, FstVarType};
    let mut wave = Wave::from_bytes(vcd_name, vcd).map_err(|e| e.to_string())?;
    let h = wave.inner.hierarchy();
    let info = FstInfo {
        start_time: *wave.inner.time_table().first().unwrap_or(&0),
        timescale_exponent: -9,
        version: h.version().to_string(),
        date: String::new(),
        file_type: FstFileType::Verilog,
    };
    let fe = |e: fst_writer::FstWriteError| e.to_string();
    let mut hw = fst_writer::FstHeaderWriter::new(out, &info).map_err(fe)?;
    let mut ids: HashMap<SignalRef, fst_writer::FstSignalId> = HashMap::new();
    // The scopes and vars in file order (depth first, as the VCD declares them).
    fn scope<W: Write + Seek>(
        h: &wellen::Hierarchy,
        s: wellen::ScopeRef,
        hw: &mut fst_writer::FstHeaderWriter<W>,
        ids: &mut HashMap<SignalRef, fst_writer::FstSignalId>,
    ) -> Result<(), String> {
        let sc = &h[s];
        hw.scope(sc.name(h), "", FstScopeType::Module)
            .map_err(|e| e.to_string())?;
        for item in sc.items(h) {
            match item {
                wellen::ItemRef::Scope(c) => scope(h, c, hw, ids)?,
                wellen::ItemRef::Var(v) => var(h, v, hw, ids)?,
            }
        }
        hw.up_scope().map_err(|e| e.to_string())
    }
    fn var<W: Write + Seek>(
        h: &wellen::Hierarchy,
        v: wellen::VarRef,
        hw: &mut fst_writer::FstHeaderWriter<W>,
        ids: &mut HashMap<SignalRef, fst_writer::FstSignalId>,
    ) -> Result<(), String> {
        let v = &h[v];
        let (st, vt) = match v.signal_encoding(h) {
            SignalEncoding::Real => (FstSignalType::real(), FstVarType::Real),
            SignalEncoding::BitVector(w) => (FstSignalType::bit_vec(w), FstVarType::Wire),
            SignalEncoding::String => return Ok(()),
        };
        let alias = ids.get(&v.signal_ref()).copied();
        let id = hw
            .var(v.name(h), st, vt, FstVarDirection::Implicit, alias)
            .map_err(|e| e.to_string())?;
        ids.entry(v.signal_ref()).or_insert(id);
        Ok(())
    }
    for item in h.items() {
        match item {
            wellen::ItemRef::Scope(s) => scope(h, s, &mut hw, &mut ids)?,
            wellen::ItemRef::Var(v) => var(h, v, &mut hw, &mut ids)?,
        }
    }
    let mut body = hw.finish().map_err(fe)?;
    // Every change of every signal, merged in time order (signals in file order within a time).
    let order: Vec<usize> = (0..wave.vars.len()).collect();
    let changes = wave.changes(&order);
    let mut events: Vec<(u64, usize, usize)> = Vec::new();
    for (vi, ch) in changes.iter().enumerate() {
        for (ci, (t, _)) in ch.iter().enumerate() {
            events.push((*t, vi, ci));
        }
    }
    events.sort_unstable();
    let mut seen = std::collections::HashSet::new();
    let alias: Vec<bool> = wave.vars.iter().map(|v| !seen.insert(v.sig)).collect();
    let mut now = None;
    for (t, vi, ci) in events {
        let Some(&id) = ids.get(&wave.vars[vi].sig) else {
            continue;
        };
        // Two vars on one signal (an alias) write its changes once.
        if alias[vi] {
            continue;
        }
        if now != Some(t) {
            body.time_change(t).map_err(fe)?;
            now = Some(t);
        }
        match &changes[vi][ci].1 {
            Val::Bits(b) => body.signal_change(id, b.as_bytes()).map_err(fe)?,
            Val::Real(r) => body.signal_change(id, &r.to_le_bytes()).map_err(fe)?,
        }
    }
    let end = wave.end_time();
    if now.is_none_or(|n| n < end) {
        body.time_change(end).map_err(fe)?;
    }
    let mut w = body.finish().map_err(fe)?;
    w.flush().map_err(|e| e.to_string())?;
    Ok(w)
}
