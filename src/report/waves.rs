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

use crate::input::yaml::InputError;

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
    /// What the reader printed while reading the file (its warnings), line by line; hwsim
    /// reports them on stderr, never in a report.
    pub warnings: Vec<String>,
    inner: simple::Waveform,
}

/// Runs `f` with the process's stdout (fd 1) drained into a string meanwhile, and returns both:
/// the wave reader prints its warnings (`INFO: detected a VHDL Var Type…`, `WARN: time
/// decreased…`) with `println!`, where they would land in the middle of a report. One capture
/// at a time (fd 1 is the process's). If the pipe cannot be set up, `f` runs as is.
#[cfg(unix)]
pub fn capture_stdout<T>(f: impl FnOnce() -> T) -> (T, String) {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let _ = std::io::stdout().flush();
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: plain fd calls on fds this function owns; fd 1 is restored before returning.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return (f(), String::new());
    }
    let saved = unsafe { libc::dup(1) };
    if saved < 0 {
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        return (f(), String::new());
    }
    // SAFETY: fds[0] is the pipe's read end, owned by the File from here on.
    let mut reader = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    // The pipe is drained as it fills (a reader printing more than the pipe holds must not
    // block); the first 64 KiB are kept.
    let drain = std::thread::Builder::new().spawn(move || {
        let (mut kept, mut buf) = (Vec::new(), [0u8; 8192]);
        while let Ok(k) = reader.read(&mut buf) {
            if k == 0 {
                break;
            }
            let room = (1usize << 16).saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..k.min(room)]);
        }
        String::from_utf8_lossy(&kept).into_owned()
    });
    let Ok(drain) = drain else {
        unsafe {
            libc::close(fds[1]);
            libc::close(saved);
        }
        return (f(), String::new());
    };
    unsafe {
        libc::dup2(fds[1], 1);
        libc::close(fds[1]);
    }
    let out = f();
    let _ = std::io::stdout().flush();
    unsafe {
        libc::dup2(saved, 1);
        libc::close(saved);
    }
    (out, drain.join().unwrap_or_default())
}

/// Elsewhere, `f` as is.
#[cfg(not(unix))]
pub fn capture_stdout<T>(f: impl FnOnce() -> T) -> (T, String) {
    (f(), String::new())
}

/// An error with the errors under it (`io error: failed to fill whole buffer`): the reader's
/// own message alone can be a bare `io error`.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let t = c.to_string();
        if !s.ends_with(&t) {
            s = format!("{s}: {t}");
        }
        cause = c.source();
    }
    s
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
        // One line: the reader's message may span several.
        Ok(Err(e)) => Err(InputError::new(
            path,
            format!(
                "cannot read the wave: {}",
                e.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
        )),
        Err(_) => Err(InputError::new(path, "cannot read the wave: malformed file")),
    }
}

use crate::report::wave_check::precheck;
pub use crate::report::wave_check::MAX_WAVE_WIDTH;

fn single_thread() -> wellen::LoadOptions {
    wellen::LoadOptions {
        multi_thread: false,
        ..Default::default()
    }
}

impl Wave {
    /// The signal variable `i` shows: two variables with the same number are one signal under
    /// two names (a composite's exported port and its node's, which hwsim's VCD declares with
    /// one identifier).
    pub fn signal_index(&self, i: usize) -> usize {
        self.vars[i].sig.index()
    }

    /// Opens a VCD or FST file (the format is detected from the content).
    pub fn open(path: &Path) -> Result<Wave, InputError> {
        precheck(path)?;
        let p = path.to_path_buf();
        let (inner, said) = capture_stdout(|| {
            guarded(path, move || {
                simple::read_with_options(&p, &single_thread()).map_err(|e| with_causes(&e))
            })
        });
        // A binary file the reader took for an FST (its first block, the header, has type 0)
        // and could not read is cut short or damaged: say so, as its own message can be a bare
        // `I/O operation failed` or a missing file (the part of the FST it looked for).
        let inner = inner.map_err(|mut e| {
            let mut first = [1u8];
            let fst = std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut first))
                .is_ok()
                && first[0] == 0;
            if fst {
                let size = std::fs::metadata(path).map_or(0, |m| m.len());
                e.message = e.message.replacen(
                    "cannot read the wave: ",
                    &format!("cannot read the wave: an FST cut short or damaged ({size} bytes; the reader: "),
                    1,
                ) + ")";
            }
            e
        });
        let mut w = Wave::from_inner(path, inner?)?;
        w.warnings = said
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        Ok(w)
    }

    /// Opens a VCD hwsim itself just wrote (no outside-file checks: it is whole and well
    /// formed), read from the file, not copied into memory first.
    pub fn open_written(path: &Path) -> Result<Wave, InputError> {
        let p = path.to_path_buf();
        let inner = guarded(path, move || {
            simple::read_with_options(&p, &single_thread()).map_err(|e| with_causes(&e))
        })?;
        Wave::from_inner(path, inner)
    }

    /// Opens a wave held in memory (`name` for messages).
    pub fn from_bytes(name: &Path, bytes: Vec<u8>) -> Result<Wave, InputError> {
        let inner = guarded(name, move || {
            simple::read_from_reader(std::io::Cursor::new(bytes)).map_err(|e| with_causes(&e))
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
        if !(ns_per_unit.is_finite() && ns_per_unit > 0.0) {
            // `$timescale 0ns`: every time would be at 0, and a cycle of no time units.
            return Err(InputError::new(
                path,
                format!("cannot read the wave: a timescale of {ns_per_unit} ns (it must be more than 0)"),
            ));
        }
        if inner.time_table().is_empty() {
            return Err(InputError::new(path, "cannot read the wave: no timestamps"));
        }
        Ok(Wave {
            path: path.to_path_buf(),
            version: h.version().trim().to_string(),
            ns_per_unit,
            vars,
            warnings: Vec::new(),
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

/// Writes `wave` (a VCD hwsim produced, opened with [`Wave::open_written`]) as FST to `out`.
/// Same hierarchy, widths and value changes; no date (same input, same bytes). The changes go
/// out merged in time order straight from the reader's signals (a heap of one cursor per
/// signal), not gathered into a list of every change first: the conversion holds the reader's
/// compressed signals and no second copy of the wave.
pub fn write_fst<W: Write + Seek>(wave: &mut Wave, out: W) -> Result<W, String> {
    use fst_writer::{FstFileType, FstInfo, FstScopeType, FstSignalType, FstVarDirection, FstVarType};
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
    // Two vars on one signal (an alias) write its changes once: one cursor per signal, in file
    // order (the first var of each).
    let mut seen = std::collections::HashSet::new();
    let sigs: Vec<SignalRef> = wave.vars.iter().map(|v| v.sig).filter(|s| seen.insert(*s)).collect();
    wave.inner.load_signals(&sigs);
    let inner = &wave.inner;
    let times = inner.time_table();
    let mut cursors: Vec<_> = sigs
        .iter()
        .map(|&s| inner.get_signal(s).expect("loaded").iter_changes().peekable())
        .collect();
    // (time index, signal order): the earliest change first, signals in file order within a time.
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, usize)>> = cursors
        .iter_mut()
        .enumerate()
        .filter_map(|(k, c)| c.peek().map(|(t, _)| std::cmp::Reverse((*t, k))))
        .collect();
    let mut now = None;
    while let Some(std::cmp::Reverse((ti, k))) = heap.pop() {
        let (_, v) = cursors[k].next().expect("peeked");
        if let Some(&id) = ids.get(&sigs[k]) {
            let t = times[ti as usize];
            if now != Some(t) {
                body.time_change(t).map_err(fe)?;
                now = Some(t);
            }
            match value(v) {
                Val::Bits(b) => body.signal_change(id, b.as_bytes()).map_err(fe)?,
                Val::Real(r) => body.signal_change(id, &r.to_le_bytes()).map_err(fe)?,
            }
        }
        if let Some((t, _)) = cursors[k].peek() {
            heap.push(std::cmp::Reverse((*t, k)));
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

#[cfg(test)]
mod tests {
    use std::io::Write;

    #[test]
    fn what_the_reader_prints_is_captured_not_shown() {
        // Written to fd 1 directly, as the reader's println! is outside the test harness.
        let (v, said) = super::capture_stdout(|| {
            let mut out = std::io::stdout();
            let _ = writeln!(out, "WARN: time decreased from 5 to 3. Skipping!");
            let _ = out.write_all(&vec![b'.'; 200_000]);
            7
        });
        assert_eq!(v, 7);
        assert!(
            said.starts_with("WARN: time decreased from 5 to 3. Skipping!\n"),
            "{said}"
        );
        assert_eq!(said.len(), 1 << 16, "the first 64 KiB kept, the rest drained");
    }
}

/// A trace glob that names a field of a net the way the VCD and GTKWave show it
/// (`chip0.lg7.tx.frame.psn`, `chip1.lg7.rx.ctrl.rh.opcode`, `*.psn`) rather than the net
/// (`chip0.lg7.tx.frame`): the nets it means, when the glob itself selects no net. Up to two
/// trailing segments are the field (`fields(net)` gives a net's traced variables' names); the
/// rest must match a net's whole path, not merely a scope above it, so a typo
/// (`chip0.nosuch.nosuch2`) selects nothing rather than all of `chip0`, and `*.psn` the nets
/// with a `psn` field rather than every net. `None` when the glob selects a net as it is, or
/// nothing either way.
/// `selects_some(glob)`: whether the glob as it is selects a net (the caller answers it from a
/// table for many globs).
pub fn nets_of_field_glob(
    glob: &str,
    nets: &[String],
    selects_some: &dyn Fn(&str) -> bool,
    fields: impl Fn(&str) -> Vec<String>,
) -> Option<Vec<String>> {
    if selects_some(glob) {
        return None;
    }
    let mut head = glob;
    let mut tail = String::new();
    for _ in 0..2 {
        let (h, last) = head.rsplit_once('.')?;
        tail = if tail.is_empty() {
            last.to_string()
        } else {
            format!("{last}.{tail}")
        };
        head = h;
        let found: Vec<String> = nets
            .iter()
            .filter(|p| hwsim_hw::glob_match(head, p) && fields(p).iter().any(|f| hwsim_hw::glob_match(&tail, f)))
            .cloned()
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    None
}

#[cfg(test)]
mod field_glob_tests {
    use super::nets_of_field_glob;

    fn fields(net: &str) -> Vec<String> {
        match net {
            "chip0.lg7.tx.frame" => vec!["valid".into(), "psn".into(), "occupancy".into()],
            "chip1.lg7.rx.ctrl" => vec!["valid".into(), "rh.opcode".into(), "rh.psn".into()],
            _ => vec!["data".into()],
        }
    }

    #[test]
    fn a_field_name_selects_its_net_and_a_net_name_stays() {
        let nets = vec![
            "chip0.lg7.tx.frame".to_string(),
            "chip1.lg7.rx.ctrl".to_string(),
            "chip0.lg7.tx.busy".to_string(),
        ];
        let some = |g: &str| nets.iter().any(|p| hwsim_hw::trace_selected(&[g.to_string()], p));
        let sel = |g: &str| nets_of_field_glob(g, &nets, &some, fields);
        assert_eq!(
            sel("chip0.lg7.tx.frame.psn"),
            Some(vec!["chip0.lg7.tx.frame".to_string()])
        );
        assert_eq!(
            sel("chip1.lg7.rx.ctrl.rh.opcode"),
            Some(vec!["chip1.lg7.rx.ctrl".to_string()])
        );
        assert_eq!(sel("chip0.lg7.tx.frame"), None, "already a net");
        assert_eq!(sel("chip0.*"), None, "already selects");
        assert_eq!(sel("chip9.lg7.tx.frame.psn"), None, "no such net");
        // A field glob: the nets with such a field, not every net.
        assert_eq!(sel("*.psn"), Some(vec!["chip0.lg7.tx.frame".to_string()]));
        assert_eq!(
            sel("*.rh.*"),
            Some(vec!["chip1.lg7.rx.ctrl".to_string()]),
            "two trailing segments"
        );
        // A typo below a scope selects nothing (it once selected the whole scope).
        assert_eq!(sel("chip0.nosuch.nosuch2"), None);
        assert_eq!(sel("chip0.lg7.tx.frame.nosuch"), None, "a field the net lacks");
    }
}
