//! VCD tracing (IEEE 1364 §18) that GTKWave opens.
//!
//! - `$timescale 1ns`; one `$scope module` per hierarchy level (`chip0` › `lg3` › `tx` › `arb`).
//! - A signal is one `$var` per field of its value type at the field's true width (`psn [11:0]`);
//!   a multi-field value gets a scope named after the port holding one var per field.
//! - A stream is a scope with `valid` (high exactly in the cycle of a push, falling at the next
//!   cycle even when the kernel skips it), the fields of the last message, and `occupancy`.
//! - Only changes are written; every variable has a value at the first timestamp (`$dumpvars`).
//!   Changes inside one timestamp are written in variable order, so skip on and off give the same
//!   bytes.
//! - Selection: `--trace GLOB` (repeatable, `*` and `?`) against the net path (`chip0.lg3.tx.arb.grant`)
//!   or any scope prefix of it; a window `[from, to)` of time.
//! - Output goes through a `BufWriter`; the header is written with the `vcd` crate, value changes
//!   directly in VCD syntax.

use std::io::{BufWriter, Write};
use std::rc::Rc;

use crate::error::SimError;
use crate::net::NetDyn;
use crate::value::{TraceKind, TraceValue};
use crate::Cycle;

/// A `Write` into a shared in-memory buffer: give one clone to [`crate::Sim::trace_vcd`] and
/// keep the other to read the VCD back (tests, tools embedding the kernel).
#[derive(Clone, Debug, Default)]
pub struct SharedBuffer(Rc<std::cell::RefCell<Vec<u8>>>);

impl SharedBuffer {
    /// The bytes written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.0.borrow().clone()
    }
    /// The bytes written so far as text (a VCD is ASCII).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What to trace.
#[derive(Clone, Debug, Default)]
pub struct TraceOptions {
    /// Glob patterns over net paths; empty = everything.
    pub globs: Vec<String>,
    /// First cycle written (inclusive).
    pub from: Option<Cycle>,
    /// End of the window (exclusive).
    pub to: Option<Cycle>,
    /// Event pulses offered: `(block, class)`, each a one-cycle 1-bit wire `ev_<class>` in the
    /// block's scope, declared if the globs select its path; the block's reports of that class
    /// ([`crate::Ctx::log`]) raise it for the cycle they happen in.
    pub events: Vec<(u32, &'static str)>,
}

/// Glob match with `*` (any run, dots included) and `?` (one character).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    // Names are ASCII in practice: match bytes then, without collecting either side (a run's
    // checks match every counter against every pattern: ~50 000 calls for 8 chips).
    if pattern.is_ascii() && text.is_ascii() {
        glob_match_in(pattern.as_bytes(), text.as_bytes(), b'*', b'?')
    } else {
        let p: Vec<char> = pattern.chars().collect();
        let t: Vec<char> = text.chars().collect();
        glob_match_in(&p, &t, '*', '?')
    }
}

fn glob_match_in<C: Copy + PartialEq>(p: &[C], t: &[C], any: C, one: C) -> bool {
    // A literal tail after the last `*` must end the text: tested first, it refuses most names
    // at once (`chip*.paxi.wdata_bytes_in` against every counter of a run) where the scan
    // below would try the star at every place.
    if let Some(last) = p.iter().rposition(|&c| c == any) {
        let tail = &p[last + 1..];
        if !tail.contains(&one) && (t.len() < tail.len() || t[t.len() - tail.len()..] != *tail) {
            return false;
        }
    }
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == one || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == any {
            star = Some(pi);
            pi += 1;
            mark = ti;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == any {
        pi += 1;
    }
    pi == p.len()
}

/// Whether `--trace` globs select the net at `path` (no globs: every net).
pub fn selected(globs: &[String], path: &str) -> bool {
    if globs.is_empty() {
        return true;
    }
    globs.iter().any(|g| selected_by(g, path))
}

/// Whether glob `g` selects `path`: matches it, or a scope above it.
fn selected_by(g: &str, path: &str) -> bool {
    glob_match(g, path) || {
        // A pattern naming a scope selects everything below it.
        let mut prefix = String::new();
        path.split('.').any(|seg| {
            if !prefix.is_empty() {
                prefix.push('.');
            }
            prefix.push_str(seg);
            prefix.len() < path.len() && glob_match(g, &prefix)
        })
    }
}

/// [`selected`] for many globs at once: the plain names (no `*` or `?`: `hwsim vectors` gives
/// one per port) in a hash set, looked up for a path and each scope above it; the patterns as
/// before. Thousands of names against thousands of nets were quadratic.
pub struct GlobSet {
    all: bool,
    names: std::collections::HashSet<String>,
    patterns: Vec<String>,
}

impl GlobSet {
    /// The set of `globs` (none: everything).
    pub fn new(globs: &[String]) -> GlobSet {
        let (patterns, names): (Vec<String>, Vec<String>) = globs.iter().cloned().partition(|g| g.contains(['*', '?']));
        GlobSet {
            all: globs.is_empty(),
            names: names.into_iter().collect(),
            patterns,
        }
    }
    /// Whether the set selects `path` (as [`selected`] would).
    pub fn selects(&self, path: &str) -> bool {
        if self.all || self.names.contains(path) {
            return true;
        }
        let scope_named = path
            .char_indices()
            .filter(|&(_, c)| c == '.')
            .any(|(i, _)| self.names.contains(&path[..i]));
        scope_named || self.patterns.iter().any(|g| selected_by(g, path))
    }
}

struct Var {
    code: String,
    kind: TraceKind,
    /// First sample slot (a wide var spans `kind.slots()` slots).
    slot: u32,
}

#[derive(Default)]
struct Scope {
    children: Vec<(String, Scope)>,
    /// (reference name, net, var index within the net)
    vars: Vec<(String, u32, usize)>,
}

impl Scope {
    fn child(&mut self, name: &str) -> &mut Scope {
        let i = match self.children.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.children.push((name.to_string(), Scope::default()));
                self.children.len() - 1
            }
        };
        &mut self.children[i].1
    }
}

/// Writes a VCD of selected nets.
pub struct VcdTracer {
    out: vcd::Writer<BufWriter<Box<dyn Write>>>,
    /// Traced nets, ascending.
    nets: Vec<u32>,
    /// For each net id: (first var, count), or none.
    net_vars: Vec<Option<(u32, u32)>>,
    vars: Vec<Var>,
    /// Last value of each sample slot (what a viewer shows now); a var's slots start at its
    /// `slot`, and a net's vars' slots are contiguous.
    last: Vec<TraceValue>,
    scratch: Vec<TraceValue>,
    /// Streams whose `valid` rose at `lower_at - 1` and must fall at `lower_at`.
    lowers: Vec<u32>,
    lower_at: Cycle,
    /// Per event pulse offered (`TraceOptions::events`' order): its var, if declared.
    pulse_var: Vec<Option<u32>>,
    /// Pulses (vars) that rose at `pulse_lower_at - 1` and fall at `pulse_lower_at`.
    pulse_lowers: Vec<u32>,
    pulse_lower_at: Cycle,
    /// This cycle's pulses to raise (vars, sorted, deduplicated).
    pulse_now: Vec<u32>,
    work: Vec<u32>,
    from: Cycle,
    to: Cycle,
    dumped: bool,
    last_time: Option<Cycle>,
}

fn vcd_io(e: std::io::Error) -> SimError {
    SimError::Io(e)
}

impl VcdTracer {
    pub(crate) fn new(
        out: Box<dyn Write>,
        opts: TraceOptions,
        nets: &[Rc<dyn NetDyn>],
        net_paths: &[String],
        aliases: &[Vec<String>],
        pulse_paths: &[String],
    ) -> Result<VcdTracer, SimError> {
        let mut root = Scope::default();
        let mut net_vars = vec![None; nets.len()];
        let mut vars_kinds: Vec<(u32, usize, TraceKind)> = Vec::new();
        let mut traced = Vec::new();
        let mut order: Vec<usize> = (0..nets.len()).collect();
        order.sort_by(|&a, &b| net_paths[a].cmp(&net_paths[b]));
        let no_aliases: Vec<String> = Vec::new();
        let set = GlobSet::new(&opts.globs);
        for &n in &order {
            // A net appears under each of its names that the selection takes: its own, and the
            // other scopes it passes through (a composite's port), as an RTL simulator shows a
            // wire in every module it enters; the aliases share the net's id codes.
            let names: Vec<&String> = std::iter::once(&net_paths[n])
                .chain(aliases.get(n).unwrap_or(&no_aliases))
                .filter(|p| set.selects(p))
                .collect();
            if names.is_empty() {
                continue;
            }
            let layout = nets[n].trace_layout();
            if layout.is_empty() {
                continue;
            }
            traced.push(n as u32);
            let first = vars_kinds.len() as u32;
            for path in names {
                let segs: Vec<&str> = path.split('.').collect();
                let (port, scopes) = segs.split_last().expect("net path has a port");
                let mut s = &mut root;
                for seg in scopes {
                    s = s.child(seg);
                }
                if layout.len() == 1 && layout[0].0.is_empty() {
                    s.vars.push((port.to_string(), n as u32, 0));
                } else {
                    let ps = s.child(port);
                    for (i, (name, _)) in layout.iter().enumerate() {
                        ps.vars.push((name.clone(), n as u32, i));
                    }
                }
            }
            for (i, (_, k)) in layout.iter().enumerate() {
                vars_kinds.push((n as u32, i, *k));
            }
            net_vars[n] = Some((first, layout.len() as u32));
        }
        traced.sort_unstable();
        // The event pulses the selection takes: 1-bit vars of pseudo-nets numbered after the
        // nets (`nets.len() + j`), declared after the nets of their scope.
        net_vars.resize(nets.len() + pulse_paths.len(), None);
        let mut pulse_var = vec![None; pulse_paths.len()];
        let mut pulse_order: Vec<usize> = (0..pulse_paths.len()).collect();
        pulse_order.sort_by(|&a, &b| pulse_paths[a].cmp(&pulse_paths[b]));
        for j in pulse_order {
            let path = &pulse_paths[j];
            if !set.selects(path) {
                continue;
            }
            let Some((scopes, name)) = path.rsplit_once('.') else {
                continue;
            };
            let mut s = &mut root;
            for seg in scopes.split('.') {
                s = s.child(seg);
            }
            let pseudo = (nets.len() + j) as u32;
            s.vars.push((name.to_string(), pseudo, 0));
            pulse_var[j] = Some(vars_kinds.len() as u32);
            net_vars[pseudo as usize] = Some((vars_kinds.len() as u32, 1));
            vars_kinds.push((pseudo, 0, TraceKind::Bits(1)));
        }

        let mut w = vcd::Writer::new(BufWriter::with_capacity(1 << 16, out));
        w.version("hwsim").map_err(vcd_io)?;
        w.timescale(1, vcd::TimescaleUnit::NS).map_err(vcd_io)?;
        let mut codes: Vec<Option<String>> = vec![None; vars_kinds.len()];
        if root.vars.is_empty() && root.children.is_empty() {
            // GTKWave wants at least one scope; an empty selection still gives a valid file.
            w.add_module("top").map_err(vcd_io)?;
            w.upscope().map_err(vcd_io)?;
        } else {
            let mut top = Scope::default();
            std::mem::swap(&mut top, &mut root);
            // Loose vars at the root (a net whose path has no scope) get a `top` scope.
            if !top.vars.is_empty() {
                let vars = std::mem::take(&mut top.vars);
                top.child("top").vars = vars;
            }
            for (name, s) in &top.children {
                write_scope(&mut w, name, s, &net_vars, &vars_kinds, &mut codes)?;
            }
        }
        w.enddefinitions().map_err(vcd_io)?;
        let mut slots = 0u32;
        let vars: Vec<Var> = vars_kinds
            .iter()
            .zip(codes)
            .map(|((_, _, k), c)| {
                let v = Var {
                    code: c.expect("every var declared"),
                    kind: *k,
                    slot: slots,
                };
                slots += k.slots() as u32;
                v
            })
            .collect();
        // What a viewer would show before anything ran: the reset values.
        let mut last = vec![TraceValue::default(); slots as usize];
        for &n in &traced {
            let (a, b) = slot_range(&vars, net_vars[n as usize].expect("traced"));
            nets[n as usize].sample(Cycle::MAX, &mut last[a..b]);
        }
        Ok(VcdTracer {
            out: w,
            nets: traced,
            net_vars,
            vars,
            last,
            scratch: Vec::new(),
            lowers: Vec::new(),
            lower_at: Cycle::MAX,
            pulse_var,
            pulse_lowers: Vec::new(),
            pulse_lower_at: Cycle::MAX,
            pulse_now: Vec::new(),
            work: Vec::new(),
            from: opts.from.unwrap_or(0),
            to: opts.to.unwrap_or(Cycle::MAX),
            dumped: false,
            last_time: None,
        })
    }
}

fn write_scope<W: Write>(
    w: &mut vcd::Writer<W>,
    name: &str,
    s: &Scope,
    net_vars: &[Option<(u32, u32)>],
    kinds: &[(u32, usize, TraceKind)],
    codes: &mut [Option<String>],
) -> Result<(), SimError> {
    w.add_module(name).map_err(vcd_io)?;
    for (vname, net, i) in &s.vars {
        let (first, _) = net_vars[*net as usize].expect("traced");
        let vi = first as usize + i;
        if let Some(code) = &codes[vi] {
            // Another name of a net already declared: the same id code.
            let id: vcd::IdCode = code.parse().expect("a code the writer made");
            let (width, index) = match kinds[vi].2 {
                TraceKind::Bits(1) => (1, None),
                TraceKind::Bits(b) | TraceKind::Wide(b) => (b, Some(vcd::ReferenceIndex::Range(b as i32 - 1, 0))),
                TraceKind::Real => (64, None),
            };
            let ty = if kinds[vi].2 == TraceKind::Real {
                vcd::VarType::Real
            } else {
                vcd::VarType::Wire
            };
            w.var_def(ty, width, id, vname, index).map_err(vcd_io)?;
            continue;
        }
        let id = match kinds[vi].2 {
            TraceKind::Bits(1) => w.add_var(vcd::VarType::Wire, 1, vname, None),
            TraceKind::Bits(b) => w.add_var(
                vcd::VarType::Wire,
                b,
                vname,
                Some(vcd::ReferenceIndex::Range(b as i32 - 1, 0)),
            ),
            TraceKind::Wide(b) => w.add_var(
                vcd::VarType::Wire,
                b,
                vname,
                Some(vcd::ReferenceIndex::Range(b as i32 - 1, 0)),
            ),
            TraceKind::Real => w.add_var(vcd::VarType::Real, 64, vname, None),
        }
        .map_err(vcd_io)?;
        codes[vi] = Some(id.to_string());
    }
    for (cname, c) in &s.children {
        write_scope(w, cname, c, net_vars, kinds, codes)?;
    }
    w.upscope().map_err(vcd_io)
}

/// The sample slots of a net's vars `(first var, count)`: contiguous, from the first var's slot.
fn slot_range(vars: &[Var], (first, cnt): (u32, u32)) -> (usize, usize) {
    let a = vars[first as usize].slot as usize;
    let last = &vars[(first + cnt - 1) as usize];
    (a, last.slot as usize + last.kind.slots())
}

impl VcdTracer {
    /// Traced net ids, ascending.
    pub(crate) fn nets(&self) -> &[u32] {
        &self.nets
    }

    /// Whether event pulse `j` (`TraceOptions::events`' order) was declared.
    pub(crate) fn pulse_declared(&self, j: usize) -> bool {
        self.pulse_var.get(j).is_some_and(Option::is_some)
    }

    /// Number of VCD variables.
    pub(crate) fn var_count(&self) -> usize {
        self.vars.len()
    }

    fn in_window(&self, t: Cycle) -> bool {
        t >= self.from && t < self.to
    }

    /// Writes a var's value from its slots (`v[0]` for a narrow var, its words for a wide one).
    fn write_value(out: &mut BufWriter<Box<dyn Write>>, var: &Var, vs: &[TraceValue]) -> std::io::Result<()> {
        if let TraceKind::Wide(_) = var.kind {
            let word = |t: &TraceValue| match *t {
                TraceValue::Bits(b) => b,
                TraceValue::Real(r) => r as u64,
            };
            // Most significant non-zero word first without leading zeros, then full words.
            let top = vs.iter().rposition(|t| word(t) != 0);
            out.write_all(b"b")?;
            match top {
                None => out.write_all(b"0")?,
                Some(i) => {
                    write!(out, "{:b}", word(&vs[i]))?;
                    for t in vs[..i].iter().rev() {
                        write!(out, "{:064b}", word(t))?;
                    }
                }
            }
            return writeln!(out, " {}", var.code);
        }
        let v = vs[0];
        match (var.kind, v) {
            (TraceKind::Bits(1), TraceValue::Bits(b)) => writeln!(out, "{}{}", b & 1, var.code),
            (TraceKind::Bits(_), TraceValue::Bits(b)) => writeln!(out, "b{:b} {}", b, var.code),
            (TraceKind::Real, TraceValue::Real(r)) => writeln!(out, "r{} {}", r, var.code),
            (TraceKind::Real, TraceValue::Bits(b)) => writeln!(out, "r{} {}", b as f64, var.code),
            (TraceKind::Bits(_), TraceValue::Real(r)) => {
                writeln!(out, "b{:b} {}", r as u64, var.code)
            }
            (TraceKind::Wide(_), _) => unreachable!("handled above"),
        }
    }

    fn timestamp(&mut self, t: Cycle) -> std::io::Result<()> {
        if self.last_time != Some(t) {
            self.out.timestamp(t)?;
            self.last_time = Some(t);
        }
        Ok(())
    }

    /// Writes every variable's current value at `t` (the first timestamp of the window).
    fn dump(&mut self, t: Cycle) -> std::io::Result<()> {
        self.timestamp(t)?;
        self.out.begin(vcd::SimulationCommand::Dumpvars)?;
        let w = self.out.writer();
        for var in &self.vars {
            let a = var.slot as usize;
            Self::write_value(w, var, &self.last[a..a + var.kind.slots()])?;
        }
        self.out.end()?;
        self.dumped = true;
        Ok(())
    }

    /// Samples `nets` (ascending, deduplicated) at time `t` and records the changes.
    fn apply(
        &mut self,
        t: Cycle,
        nets_now: &[u32],
        pulses: [&[u32]; 2],
        nets: &[Rc<dyn NetDyn>],
    ) -> std::io::Result<()> {
        // The window opens before this time's changes: show the state as it stood at `from`.
        if !self.dumped && t > self.from && self.from < self.to {
            self.dump(self.from)?;
        }
        let write = self.dumped && self.in_window(t);
        for &n in nets_now {
            let Some((first, cnt)) = self.net_vars[n as usize] else {
                continue;
            };
            let (a, b) = slot_range(&self.vars, (first, cnt));
            self.scratch.resize(b - a, TraceValue::default());
            nets[n as usize].sample(t, &mut self.scratch);
            for vi in first as usize..(first + cnt) as usize {
                let var = &self.vars[vi];
                let (s0, k) = (var.slot as usize, var.kind.slots());
                let new = &self.scratch[s0 - a..s0 - a + k];
                if new != &self.last[s0..s0 + k] {
                    self.last[s0..s0 + k].copy_from_slice(new);
                    if write {
                        if self.last_time != Some(t) {
                            self.out.timestamp(t)?;
                            self.last_time = Some(t);
                        }
                        Self::write_value(self.out.writer(), var, new)?;
                    }
                }
            }
        }
        // The event pulses: those falling at t (`pulses[0]`), then those raised (`pulses[1]`).
        for (v, vars) in pulses.into_iter().enumerate() {
            let new = TraceValue::Bits(v as u64);
            for &vi in vars {
                let var = &self.vars[vi as usize];
                let s0 = var.slot as usize;
                if self.last[s0] != new {
                    self.last[s0] = new;
                    if write {
                        if self.last_time != Some(t) {
                            self.out.timestamp(t)?;
                            self.last_time = Some(t);
                        }
                        Self::write_value(self.out.writer(), var, &[new])?;
                    }
                }
            }
        }
        if !self.dumped && t == self.from {
            self.dump(t)?;
        }
        Ok(())
    }

    /// Falls the `valid` of streams pushed, and the event pulses raised, before `t - 1`, at the
    /// cycle after (nothing ran then to record it).
    fn flush_lowers_before(&mut self, t: Cycle, nets: &[Rc<dyn NetDyn>]) -> std::io::Result<()> {
        loop {
            let streams = if self.lowers.is_empty() {
                Cycle::MAX
            } else {
                self.lower_at
            };
            let pulses = if self.pulse_lowers.is_empty() {
                Cycle::MAX
            } else {
                self.pulse_lower_at
            };
            let at = streams.min(pulses);
            if at >= t {
                return Ok(());
            }
            let lowers = if streams == at {
                self.lower_at = Cycle::MAX;
                std::mem::take(&mut self.lowers)
            } else {
                Vec::new()
            };
            let falls = if pulses == at {
                self.pulse_lower_at = Cycle::MAX;
                std::mem::take(&mut self.pulse_lowers)
            } else {
                Vec::new()
            };
            self.apply(at, &lowers, [&falls, &[]], nets)?;
            if !lowers.is_empty() {
                self.lowers = lowers;
                self.lowers.clear();
            }
            if !falls.is_empty() {
                self.pulse_lowers = falls;
                self.pulse_lowers.clear();
            }
        }
    }

    /// Records cycle `t`: `changed` are the traced nets committed with a change (any order; it
    /// is sorted here), `fired` the event pulses offered that fired (their indices in
    /// `TraceOptions::events`, any order, repeats allowed).
    pub(crate) fn cycle(
        &mut self,
        t: Cycle,
        changed: &[u32],
        fired: &[u32],
        nets: &[Rc<dyn NetDyn>],
    ) -> Result<(), SimError> {
        self.flush_lowers_before(t, nets)?;
        // The set sampled at t: this cycle's changes plus the streams whose valid falls now.
        self.work.clear();
        self.work.extend_from_slice(changed);
        if self.lower_at == t {
            self.work.extend_from_slice(&self.lowers);
            self.lowers.clear();
            self.lower_at = Cycle::MAX;
        }
        // The pulses raised at t, and those raised at t - 1 that fall now (unless raised again).
        let mut raised = std::mem::take(&mut self.pulse_now);
        raised.clear();
        raised.extend(
            fired
                .iter()
                .filter_map(|&j| self.pulse_var.get(j as usize).copied().flatten()),
        );
        raised.sort_unstable();
        raised.dedup();
        let mut falls = std::mem::take(&mut self.pulse_lowers);
        if self.pulse_lower_at == t {
            falls.retain(|v| raised.binary_search(v).is_err());
        } else {
            falls.clear();
        }
        self.pulse_lower_at = Cycle::MAX;
        if self.work.is_empty() && raised.is_empty() && falls.is_empty() && (self.dumped || t < self.from) {
            self.pulse_now = raised;
            self.pulse_lowers = falls;
            self.pulse_lowers.clear();
            return Ok(());
        }
        self.work.sort_unstable();
        self.work.dedup();
        let work = std::mem::take(&mut self.work);
        self.apply(t, &work, [&falls, &raised], nets)?;
        // Streams that pushed at t (valid = 1 now) fall at t+1.
        for &n in &work {
            if let Some((first, cnt)) = self.net_vars[n as usize] {
                let is_stream_valid = cnt >= 2
                    && matches!(self.last[self.vars[first as usize].slot as usize], TraceValue::Bits(1))
                    && self.vars[first as usize].kind == TraceKind::Bits(1)
                    && nets[n as usize].is_stream();
                if is_stream_valid {
                    self.lowers.push(n);
                    self.lower_at = t + 1;
                }
            }
        }
        self.work = work;
        // The pulses raised at t fall at t + 1.
        falls.clear();
        falls.extend_from_slice(&raised);
        if !falls.is_empty() {
            self.pulse_lower_at = t + 1;
        }
        self.pulse_lowers = falls;
        self.pulse_now = raised;
        Ok(())
    }

    /// Ends the trace at `end`: pending falls, the window dump if nothing was written yet, a final
    /// timestamp, flush.
    pub(crate) fn finish(&mut self, end: Cycle, nets: &[Rc<dyn NetDyn>]) -> Result<(), SimError> {
        self.flush_lowers_before(end.saturating_add(1), nets)?;
        // A window that starts after the run's end still gets the values (held since the end)
        // at its first time, so the file is a wave a viewer opens, not a header alone.
        if !self.dumped && self.from < self.to {
            self.dump(self.from)?;
        }
        let end_t = end.min(self.to);
        if self.dumped && self.last_time.is_none_or(|l| l < end_t) {
            self.out.timestamp(end_t)?;
            self.last_time = Some(end_t);
        }
        self.out.writer().flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    /// A set of globs selects exactly the paths `selected` does: plain names (a net, a scope
    /// above it), patterns, none (everything).
    #[test]
    fn a_glob_set_selects_what_selected_does() {
        let paths = [
            "chip0.lg7.tx.frame",
            "chip0.lg7.tx",
            "chip0.lg10.rx.ctrl",
            "chip1.lg7.tx.frame",
            "link0_1.injected",
            "c17.count",
            "c1.count",
        ];
        let sets: [&[&str]; 7] = [
            &[],
            &["chip0"],
            &["chip0.lg7"],
            &["chip0.lg7.tx.frame", "c1.count"],
            &["chip0.lg1"],
            &["*.frame", "c1"],
            &["chip?.lg7.*", "link0_1.injected.x"],
        ];
        for globs in sets {
            let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
            let set = super::GlobSet::new(&globs);
            for p in paths {
                assert_eq!(set.selects(p), super::selected(&globs, p), "{globs:?} on {p}");
            }
        }
    }

    /// Byte matching (ASCII names) and char matching (any other) agree with the glob rules:
    /// `*` any run, `?` one character.
    #[test]
    fn globs_match_ascii_and_other_names_alike() {
        for (p, t, want) in [
            ("chip*.lg*.rx.rx_payload_bytes", "chip3.lg7.rx.rx_payload_bytes", true),
            ("chip*.lg*.rx.rx_payload_bytes", "chip3.lg7.tx.rx_payload_bytes", false),
            ("sw?.drops", "sw4.drops", true),
            ("sw?.drops", "sw14.drops", false),
            ("*", "", true),
            ("", "x", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("é?x", "éüx", true),
            ("é*", "éa", true),
            ("?", "ü", true),
            ("??", "ü", false),
            // A literal tail after the last star ends the text; with a `?` in it, or overlapping
            // the head, the scan decides.
            ("chip*.paxi.wdata_bytes_in", "chip3.paxi.wdata_bytes_in", true),
            ("chip*.paxi.wdata_bytes_in", "chip3.paxi.wdata_bytes_in_x", false),
            ("chip*.drops", "chip3.lg1.drops", true),
            ("ab*ba", "aba", false),
            ("ab*ba", "abba", true),
            ("a*b?", "axbc", true),
            ("a*b?", "axcb", false),
            ("*x", "", false),
            ("a*", "a", true),
        ] {
            assert_eq!(glob_match(p, t), want, "{p} ~ {t}");
        }
    }
}
