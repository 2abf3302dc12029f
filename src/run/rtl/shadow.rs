//! `mode: shadow`: the model drives, the RTL is fed the node's inputs every cycle and its
//! outputs are compared with the model's (the module doc of [`super`] says how), the first
//! divergence stopping the run with a reproduction CSV.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout};
use std::rc::Rc;

use hwsim_hw::{Cycle, Dir, NetDyn, PortDecl, Sim, TraceKind, TraceValue};

use super::{build, every_input_mapped, launch, no_node, watchdog, Launched, BATCH, KEEP};
use crate::build::testbench::Loaded;
use crate::build::verdict::CheckResult;
use crate::input::schema::{Rtl, RtlSignal};
use crate::input::yaml::InputError;

/// A field of the node's ports on the model's side: which net, which sample slot, its width.
#[derive(Clone)]
struct Field {
    /// `port.field` (or `port` for a single-field signal), as in the map.
    label: String,
    net: usize,
    slot: usize,
    width: u32,
    input: bool,
}

/// A compared output.
struct OutCol {
    field: Field,
    /// Index in the RTL's output line.
    rtl: usize,
    signal: String,
    offset: usize,
    when: Option<Field>,
}

/// One shadowed node.
pub struct Shadow {
    name: String,
    instance: String,
    top: String,
    dir: PathBuf,
    watch: watchdog::Watchdog,
    to: BufWriter<ChildStdin>,
    from: BufReader<ChildStdout>,
    nets: Vec<(Rc<dyn NetDyn>, Vec<TraceValue>)>,
    /// Per net: for a registered input, its sample of the cycle just sampled, handed to the
    /// RTL one cycle later (the node reads at c what the wave shows at c − 1).
    late: Vec<Option<Vec<TraceValue>>>,
    /// The RTL's inputs in its order: the model field feeding each.
    ins: Vec<Field>,
    outs: Vec<OutCol>,
    rtl_outs: usize,
    /// The model's output values (and `when` values) of the last cycles, newest last.
    hist: VecDeque<Vec<(u64, bool)>>,
    max_offset: usize,
    recent: VecDeque<(Cycle, Vec<u64>)>,
    /// The model's outputs of the cycles sent and not yet answered.
    pending: VecDeque<Vec<(u64, bool)>>,
    /// Rows of `hist` that left it, for reuse.
    spare: Vec<Vec<(u64, bool)>>,
    /// The next cycle sent, the next answered.
    next: Cycle,
    answered: Cycle,
    line: String,
    compared: u64,
    /// The files the testbench read (the CSV must not overwrite one).
    inputs: Vec<PathBuf>,
}

/// The fields of `inst`'s ports as the wave has them (net, slot, width), by `port.field`.
fn fields_of(
    inst: &str,
    decls: &[PortDecl],
    sim: &Sim,
    nets: &mut Vec<(Rc<dyn NetDyn>, Vec<TraceValue>)>,
    late: &mut Vec<Option<Vec<TraceValue>>>,
) -> Vec<Field> {
    let mut v = Vec::new();
    for d in decls {
        let Some(net) = sim.net(&format!("{inst}.{}", d.name)) else {
            continue;
        };
        // Sampled every cycle: observed, as a traced net (a block then drives it exactly at
        // every cycle, see `Out::observed`).
        net.set_traced();
        let layout = net.trace_layout();
        let slots: usize = layout.iter().map(|(_, k)| k.slots()).sum();
        let id = nets.len();
        nets.push((net.clone(), vec![TraceValue::Bits(0); slots]));
        // A registered input is read by the node one cycle after the wave shows it (a push in
        // cycle c, on the wave at c, is taken at c + 1); before cycle 0 the RTL sees the reset
        // sample.
        late.push((d.dir == Dir::In && !net.is_comb()).then(|| {
            let mut v = vec![TraceValue::Bits(0); slots];
            net.sample(Cycle::MAX, &mut v);
            v
        }));
        let mut slot = 0;
        for (name, kind) in layout {
            // A signal's single unnamed field is traced under the port's own name.
            let label = if name.is_empty() {
                d.name.clone()
            } else {
                format!("{}.{name}", d.name)
            };
            if let TraceKind::Bits(w) = kind {
                if !(net.is_stream() && name == "occupancy") {
                    v.push(Field {
                        label,
                        net: id,
                        slot,
                        width: w,
                        input: d.dir == Dir::In,
                    });
                }
            }
            slot += kind.slots();
        }
    }
    v
}

/// Starts every `rtl:` entry of the testbench (building what the cache lacks).
pub fn start(l: &Loaded, nl: &BTreeMap<String, Vec<PortDecl>>, sim: &Sim) -> Result<Vec<Shadow>, InputError> {
    let mut v = Vec::new();
    for (name, spec) in &l.tb.rtl {
        if spec.mode == "shadow" {
            v.push(start_one(l, nl, sim, name, spec)?);
        }
    }
    Ok(v)
}

fn start_one(
    l: &Loaded,
    nl: &BTreeMap<String, Vec<PortDecl>>,
    sim: &Sim,
    name: &str,
    spec: &Rtl,
) -> Result<Shadow, InputError> {
    let err = |needle: &str, m: String| l.error_at(needle, format!("rtl `{name}`: {m}"));
    let Some(decls) = nl.get(&spec.instance) else {
        return Err(no_node(spec, &err));
    };
    let Launched {
        built,
        reset,
        dir,
        watch,
        to,
        from,
    } = launch(l, name, spec)?;
    let (mut nets, mut late) = (Vec::new(), Vec::new());
    let fields = fields_of(&spec.instance, decls, sim, &mut nets, &mut late);
    let (ins, outs) = wire(spec, &fields, &built.ports, reset.as_deref(), &err)?;
    let rtl_outs = built.ports.iter().filter(|p| !p.input).count();
    let max_offset = outs.iter().map(|o| o.offset).max().unwrap_or(0);
    Ok(Shadow {
        name: name.to_string(),
        instance: spec.instance.clone(),
        top: spec.top.clone(),
        dir,
        watch,
        to,
        from,
        nets,
        late,
        ins,
        outs,
        rtl_outs,
        hist: VecDeque::new(),
        max_offset,
        recent: VecDeque::new(),
        pending: VecDeque::new(),
        spare: Vec::new(),
        next: 0,
        answered: 0,
        line: String::new(),
        compared: 0,
        inputs: l.files.clone(),
    })
}

/// The map checked against the node's fields and the RTL's ports: the field feeding each RTL
/// input (in the RTL's order), and the compared outputs.
fn wire(
    spec: &Rtl,
    fields: &[Field],
    ports: &[build::RtlPort],
    reset: Option<&str>,
    err: &dyn Fn(&str, String) -> InputError,
) -> Result<(Vec<Field>, Vec<OutCol>), InputError> {
    let field = |key: &str| fields.iter().find(|f| f.label == key).cloned();
    let names = || fields.iter().map(|f| f.label.as_str()).collect::<Vec<_>>().join(", ");
    let rtl_ins: Vec<&build::RtlPort> = ports
        .iter()
        .filter(|p| p.input && p.name != spec.clock && Some(p.name.as_str()) != reset)
        .collect();
    let rtl_outs: Vec<&build::RtlPort> = ports.iter().filter(|p| !p.input).collect();
    let mut ins: Vec<Option<Field>> = vec![None; rtl_ins.len()];
    let mut outs = Vec::new();
    for (key, sig) in &spec.map {
        let (signal, offset, when) = match sig {
            RtlSignal::Name(s) => (s.as_str(), 0u32, None),
            RtlSignal::Full { signal, offset, when } => (signal.as_str(), *offset, when.as_deref()),
        };
        let Some(f) = field(key) else {
            return Err(err(
                key,
                format!(
                    "map: `{}.{key}` is not a field of the node's ports ({})",
                    spec.instance,
                    names()
                ),
            ));
        };
        if let Some(p) = ports.iter().find(|p| p.name == signal) {
            if p.width > 64 {
                return Err(err(
                    signal,
                    format!(
                        "map: `{signal}` is {} bits wide; ports wider than 64 bits are not supported",
                        p.width
                    ),
                ));
            }
            if p.width != f.width {
                return Err(err(
                    signal,
                    format!(
                        "map: `{}.{key}` is {} bits, the RTL's `{signal}` {} bits",
                        spec.instance, f.width, p.width
                    ),
                ));
            }
        }
        if f.input {
            if offset != 0 || when.is_some() {
                return Err(err(key, format!("map: `{key}` is an input: no `offset` or `when`")));
            }
            let Some(i) = rtl_ins.iter().position(|p| p.name == signal) else {
                return Err(err(
                    signal,
                    format!("map: `{key}` → `{signal}`: the top `{}` has no such input", spec.top),
                ));
            };
            ins[i] = Some(f);
        } else {
            let Some(rtl) = rtl_outs.iter().position(|p| p.name == signal) else {
                return Err(err(
                    signal,
                    format!("map: `{key}` → `{signal}`: the top `{}` has no such output", spec.top),
                ));
            };
            let when = match when {
                Some(w) => Some(field(w).ok_or_else(|| {
                    err(
                        w,
                        format!("map: when `{w}` is not a field of the node's ports ({})", names()),
                    )
                })?),
                None => None,
            };
            if offset as usize > KEEP {
                return Err(err(key, format!("map: offset {offset}: at most {KEEP}")));
            }
            outs.push(OutCol {
                field: f,
                rtl,
                signal: signal.to_string(),
                offset: offset as usize,
                when,
            });
        }
    }
    let ins_all = every_input_mapped(&rtl_ins, ins, &spec.instance, &names(), err)?;
    if outs.is_empty() {
        return Err(err("map", "map: no output of the node is compared".into()));
    }
    Ok((ins_all, outs))
}

/// The first disagreement.
pub struct Divergence {
    pub check: CheckResult,
}

fn bits(v: &TraceValue) -> u64 {
    match v {
        TraceValue::Bits(b) => *b,
        _ => 0,
    }
}

impl Shadow {
    /// The next cycle it needs (the run stops there so it can sample the cycle before).
    pub fn next(&self) -> Cycle {
        self.next + 1
    }

    /// Feeds the RTL every cycle up to the end of the last executed one (`sim.now() − 1`) and
    /// compares what it has answered; the first divergence is returned. The inputs go down the
    /// pipe in batches of [`BATCH`] cycles and the answers are read per batch (the model does not
    /// wait for the RTL in a shadow), so the run stops at most a batch after a divergence; the
    /// divergence is the exact cycle.
    pub fn step(&mut self, sim: &Sim) -> Result<Option<Divergence>, InputError> {
        let _wait = self.watch.guard();
        while self.next < sim.now() {
            let c = self.next;
            self.next += 1;
            for ((net, buf), late) in self.nets.iter_mut().zip(&mut self.late) {
                match late {
                    Some(l) => {
                        std::mem::swap(buf, l);
                        net.sample(c, l);
                    }
                    None => net.sample(c, buf),
                }
            }
            let nets = &self.nets;
            let val = |f: &Field| bits(&nets[f.net].1[f.slot]);
            // The rows' buffers come back from the rings they leave (no allocation per cycle
            // once the rings are full).
            let mut inputs = match self.recent.len() >= KEEP + BATCH {
                true => self.recent.pop_front().map(|r| r.1).unwrap_or_default(),
                false => Vec::with_capacity(self.ins.len()),
            };
            inputs.clear();
            inputs.extend(self.ins.iter().map(val));
            let mut model = self.spare.pop().unwrap_or_default();
            model.clear();
            model.extend(
                self.outs
                    .iter()
                    .map(|o| (val(&o.field), o.when.as_ref().is_none_or(|w| val(w) != 0))),
            );
            self.line.clear();
            for (i, x) in inputs.iter().enumerate() {
                if i > 0 {
                    self.line.push(' ');
                }
                let _ = write!(self.line, "{x}");
            }
            self.line.push('\n');
            let line = std::mem::take(&mut self.line);
            let r = self.to.write_all(line.as_bytes());
            self.line = line;
            r.map_err(|e| self.gone(c, e))?;
            self.recent.push_back((c, inputs));
            self.pending.push_back(model);
            if self.pending.len() >= BATCH {
                if let Some(d) = self.drain()? {
                    return Ok(Some(d));
                }
            }
        }
        Ok(None)
    }

    /// Reads the RTL's answers to every cycle sent and compares them.
    fn drain(&mut self) -> Result<Option<Divergence>, InputError> {
        let _wait = self.watch.guard();
        let first = self.next - self.pending.len() as u64;
        self.to.flush().map_err(|e| self.gone(first, e))?;
        while let Some(model) = self.pending.pop_front() {
            let c = self.answered;
            self.answered += 1;
            self.line.clear();
            let n = self.from.read_line(&mut self.line).map_err(|e| self.gone(c, e))?;
            if n == 0 {
                return Err(self.gone(c, std::io::Error::other("no answer")));
            }
            let rtl: Vec<u64> = self.line.split_whitespace().filter_map(|t| t.parse().ok()).collect();
            if rtl.len() != self.rtl_outs {
                let m = format!("{} values, {} expected", rtl.len(), self.rtl_outs);
                return Err(self.gone(c, std::io::Error::other(m)));
            }
            self.hist.push_back(model);
            if self.hist.len() > self.max_offset + 1 {
                if let Some(old) = self.hist.pop_front() {
                    self.spare.push(old);
                }
            }
            for (k, o) in self.outs.iter().enumerate() {
                // The model's cycle this RTL cycle answers for.
                let Some(mc) = c.checked_sub(o.offset as u64) else {
                    continue;
                };
                let (m, on) = self.hist[self.hist.len() - 1 - o.offset][k];
                if !on {
                    continue;
                }
                self.compared += 1;
                if m != rtl[o.rtl] {
                    let csv = self.write_recent(c)?;
                    let off = if o.offset > 0 {
                        format!(" (its cycle {c}: offset {})", o.offset)
                    } else {
                        String::new()
                    };
                    let from = self
                        .recent
                        .iter()
                        .map(|r| r.0)
                        .filter(|&r| r + KEEP as u64 > c)
                        .min()
                        .unwrap_or(c);
                    return Ok(Some(Divergence {
                        check: CheckResult {
                            name: format!("rtl {}: {} shadowed by {}", self.name, self.instance, self.top),
                            passed: false,
                            expected: format!("{}.{} = {m} (model) at cycle {mc}", self.instance, o.field.label),
                            actual: format!("{}.{} = {}{off}", self.top, o.signal, rtl[o.rtl]),
                            first_difference: Some(format!(
                                "first divergence at cycle {mc} on {}.{}; the node's inputs of cycles {from}..={c}: {}",
                                self.instance,
                                o.field.label,
                                csv.display()
                            )),
                        },
                    }));
                }
            }
        }
        Ok(None)
    }

    /// Compares the answers still in the pipe (at the end of the run).
    pub fn finish(&mut self) -> Result<Option<Divergence>, InputError> {
        self.drain()
    }

    fn gone(&self, c: Cycle, e: std::io::Error) -> InputError {
        InputError::new(
            Path::new(&self.instance),
            format!(
                "rtl `{}`: the RTL simulator stopped at cycle {c}: {e}{}",
                self.name,
                self.watch.why()
            ),
        )
    }

    /// The last [`KEEP`] cycles of the node's inputs, as `hwsim vectors` writes them.
    fn write_recent(&self, upto: Cycle) -> Result<PathBuf, InputError> {
        let path = self.dir.join(format!("{}.diverged.csv", self.name));
        crate::report::output::check_outputs(&self.inputs, &[("HWSIM_RTL_DIR", &path)])
            .map_err(|m| InputError::new(&path, m))?;
        let (f, staged) = crate::report::output::stage(&path)?;
        let mut w = BufWriter::new(f);
        let io = |e: std::io::Error| InputError::new(&path, format!("cannot write: {e}"));
        let mut head = String::from("cycle");
        for f in &self.ins {
            head.push_str(&format!(",{}:{}:in", f.label, f.width));
        }
        writeln!(w, "{head}").map_err(io)?;
        for (c, v) in self.recent.iter().filter(|r| r.0 <= upto && r.0 + KEEP as u64 > upto) {
            let cells: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            writeln!(w, "{c},{}", cells.join(",")).map_err(io)?;
        }
        w.flush().map_err(io)?;
        drop(w);
        staged.commit()?;
        Ok(path)
    }

    /// The passing check of a run that agreed to its end.
    pub fn passed(&self) -> CheckResult {
        CheckResult {
            name: format!("rtl {}: {} shadowed by {}", self.name, self.instance, self.top),
            passed: true,
            expected: format!("{} outputs equal the model's every cycle", self.outs.len()),
            actual: format!("equal over {} cycles ({} comparisons)", self.next, self.compared),
            first_difference: None,
        }
    }
}

impl Drop for Shadow {
    fn drop(&mut self) {
        let _ = self.to.flush();
        // The watchdog, dropped after this, stops the process.
    }
}
