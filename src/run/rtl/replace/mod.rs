//! `mode: replace`: the RTL drives a node's outputs in place of the model's block.
//!
//! The node keeps its path, kind, ports and bindings; [`install`] puts a component behind it
//! ([`Netlist::set_build`]) that, in every cycle it runs, reads the node's inputs through
//! type-erased handles ([`AnyPort`]), hands them to the Verilated model (the same shim and
//! protocol as a shadow: the clock edge that ends the previous cycle, this cycle's inputs,
//! `eval`, the outputs), and drives the RTL's outputs onto the node's output ports in the same
//! cycle — a combinational output of the node stays combinational, its readers tick after it.
//!
//! **What the RTL sees and drives.** A signal's fields are its value. A stream input's
//! `PORT.valid` is 1 while the stream holds a message for the node (the head of its FIFO, as
//! an RTL input FIFO's not-empty), its fields the head's; the message is popped in that cycle,
//! or, if the map names an RTL output `PORT.ready`, only in the cycles it is 1. A stream
//! output's `PORT.valid` from the RTL pushes the message its fields make; an RTL input mapped
//! from `PORT.ready` gets 1 while the stream has room. Every RTL input (but clock and reset)
//! and every field of the node's outputs must be mapped; `offset` and `when` are a shadow's.
//!
//! **Sleeping.** Like every block, the RTL runs while something happens: after a cycle with a
//! message on a stream input, one on a stream output, or outputs that changed, it runs the next
//! cycle; once its outputs held still for a cycle with no message, it sleeps until an input
//! changes. On waking it is clocked through the cycles it slept with the inputs it had (which
//! cannot have changed: a change would have woken it), and its outputs in those cycles must be
//! the ones it left: an RTL whose outputs move with its inputs held (a timer inside) stops the
//! run with the cycle at its next wake. That is a safety net, not a schedule: a black box cannot
//! say when it next wants to act, so a timer that fires while nothing wakes the RTL before the
//! run ends goes unseen. Such an RTL's entry says `sleep: false`: it then runs every cycle, and
//! the run ends at `until`, never quiescent. So event skip and `--no-skip` give the same
//! results, or the run says why they could not.
//!
//! **Several processes.** A node of several processes keeps them: the RTL is evaluated where
//! each sat in the cycle, each driving its own outputs ([`node`] says how, and what stops a run).
//!
//! Refused at elaboration (exit 2): a composite (only a leaf node can be replaced), a field
//! wider than 64 bits or real, an
//! output whose value type cannot be built from fields ([`Trace::load`](hwsim_hw::Trace)), a
//! field or signal missing from the map, widths that differ.
//!
//! Counters: the node's own counters are not counted (the RTL has none); the report gains a
//! passing check saying in how many cycles a message went in or out of the RTL. The cycles it
//! slept at the end of the run are not clocked (nothing woke it to show their outputs).

mod node;

use std::cell::Cell;
use std::rc::Rc;

use hwsim_hw::{Cycle, Dir, Netlist, PortDecl, Shape, TraceKind, TraceValue};

use self::node::{Node, Role};
use super::{build::RtlPort, launch, no_node, Launched};
use crate::build::testbench::Loaded;
use crate::build::verdict::CheckResult;
use crate::input::schema::{Rtl, RtlSignal};
use crate::input::yaml::InputError;

/// Where an RTL input's value comes from.
#[derive(Clone, Copy)]
pub(super) enum Src {
    /// Slot `slot` of port `port`'s value.
    Field { port: usize, slot: usize },
    /// Whether stream input `port` holds a message.
    Valid(usize),
    /// Whether stream output `port` has room.
    Room(usize),
}

/// One output port of the node and where its parts come from in the RTL's output line.
pub(super) struct OutPort {
    port: usize,
    name: String,
    stream: bool,
    /// For a stream: the RTL output of its `valid`.
    valid: Option<usize>,
    /// Per field slot: the RTL output.
    fields: Vec<usize>,
}

/// A replaced node, as the report shows it.
pub struct Replaced {
    name: String,
    instance: String,
    top: String,
    /// Cycles with a message in or out, and the last of them (the same with and without event
    /// skip, unlike the cycles the RTL was clocked awake).
    active: Rc<Cell<(u64, Cycle)>>,
}

impl Replaced {
    /// The passing check of a run the RTL drove to its end (a run it broke stops with a
    /// protocol error instead).
    pub fn passed(&self) -> CheckResult {
        CheckResult {
            name: format!("rtl {}: {} replaced by {}", self.name, self.instance, self.top),
            passed: true,
            expected: "the RTL drives the node's outputs without a protocol error".into(),
            actual: match self.active.get() {
                (0, _) => "no message in or out in the whole run".into(),
                (n, last) => format!("{n} cycles with a message in or out, the last at cycle {last}"),
            },
            first_difference: None,
        }
    }
}

/// The model's side of the map: each field of the node's ports by its label.
struct ModelField {
    label: String,
    port: usize,
    /// `None` for a stream's `valid` or `ready`.
    slot: Option<usize>,
    width: u32,
    dir: Dir,
    ready: bool,
}

fn model_fields(decls: &[PortDecl]) -> Result<Vec<ModelField>, String> {
    let mut v = Vec::new();
    for (port, d) in decls.iter().enumerate() {
        let stream = d.shape == Shape::Stream;
        if stream {
            for (name, ready) in [("valid", false), ("ready", true)] {
                v.push(ModelField {
                    label: format!("{}.{name}", d.name),
                    port,
                    slot: None,
                    width: 1,
                    dir: d.dir,
                    ready,
                });
            }
        }
        for (slot, f) in d.fields().iter().enumerate() {
            let width = match f.kind {
                TraceKind::Bits(w) => w,
                _ => {
                    return Err(format!(
                        "port `{}` field `{}` is {}: only bit fields up to 64 bits can pass to and from an RTL",
                        d.name,
                        f.name,
                        if f.kind == TraceKind::Real {
                            "a real"
                        } else {
                            "wider than 64 bits"
                        }
                    ))
                }
            };
            let label = if f.name.is_empty() {
                d.name.clone()
            } else {
                format!("{}.{}", d.name, f.name)
            };
            v.push(ModelField {
                label,
                port,
                slot: Some(slot),
                width,
                dir: d.dir,
                ready: false,
            });
        }
    }
    Ok(v)
}

/// Checks every `replace` entry and puts its RTL behind its node; returns what the report
/// shows of them. Unknown modes are refused here, for every entry.
pub fn install(l: &Loaded, nl: &mut Netlist) -> Result<Vec<Replaced>, InputError> {
    let mut v = Vec::new();
    for (name, spec) in &l.tb.rtl {
        let err = |needle: &str, m: String| l.error_at(needle, format!("rtl `{name}`: {m}"));
        match spec.mode.as_str() {
            "shadow" => continue,
            "replace" => {}
            m => {
                return Err(err(
                    m,
                    format!("mode `{m}`: `shadow` (the RTL compared beside the model) or `replace` (the RTL drives in its place)"),
                ))
            }
        }
        v.push(install_one(l, nl, name, spec, &err)?);
    }
    Ok(v)
}

fn install_one(
    l: &Loaded,
    nl: &mut Netlist,
    name: &str,
    spec: &Rtl,
    err: &dyn Fn(&str, String) -> InputError,
) -> Result<Replaced, InputError> {
    let inst = &spec.instance;
    if nl.is_composite(inst) {
        return Err(err(
            inst,
            format!("instance `{inst}` is a composite: only a leaf node can be replaced (`hwsim netlist TB --dot F` shows its children)"),
        ));
    }
    let Some(decls) = nl.ports_of(inst).map(<[PortDecl]>::to_vec) else {
        return Err(no_node(spec, err));
    };
    let fields = model_fields(&decls).map_err(|m| err(inst, format!("instance `{inst}`: {m}")))?;
    if let Some(d) = decls.iter().find(|d| d.dir == Dir::Out && !d.loadable()) {
        return Err(err(
            inst,
            format!(
                "instance `{inst}`: output `{}` carries {}, which cannot be built from RTL values yet (its type has no Trace::load)",
                d.name, d.type_name
            ),
        ));
    }
    let launched = launch(l, name, spec)?;
    let (ins, outs, ready) = wire(
        spec,
        &decls,
        &fields,
        &launched.built.ports,
        launched.reset.as_deref(),
        err,
    )?;
    let active = Rc::new(Cell::new((0, 0)));
    let Launched {
        built, watch, to, from, ..
    } = launched;
    let out_names: Vec<String> = built
        .ports
        .iter()
        .filter(|p| !p.input)
        .map(|p| p.name.clone())
        .collect();
    let rtl_outs = out_names.len();
    let names: Vec<String> = decls.iter().map(|d| d.name.clone()).collect();
    let procs = decls.iter().map(|d| d.process).max().unwrap_or(0) as u32 + 1;
    let mut roles = vec![Role::None; rtl_outs];
    for o in &outs {
        let q = decls[o.port].process;
        if let Some(v) = o.valid {
            roles[v] = Role::Valid(q);
        }
        for &r in &o.fields {
            roles[r] = match o.valid {
                Some(v) => Role::Field(q, v),
                None => Role::Signal(q),
            };
        }
    }
    for &(port, r) in &ready {
        roles[r] = Role::Ready(decls[port].process);
    }
    let node = Node {
        name: name.to_string(),
        ports: Vec::new(),
        bufs: decls
            .iter()
            .map(|d| vec![TraceValue::Bits(0); d.fields().len()])
            .collect(),
        decl: decls.iter().map(|d| (d.dir, d.shape, d.process)).collect(),
        held: vec![false; decls.len()],
        ins,
        outs,
        ready,
        roles,
        procs,
        watch,
        to,
        from,
        out_names,
        last: None,
        ran: 0,
        answer: vec![0; rtl_outs],
        prev: vec![0; rtl_outs],
        driven: vec![0; rtl_outs],
        line: String::new(),
        reply: String::new(),
        sleep: spec.sleep.unwrap_or(true),
        active: active.clone(),
    };
    nl.set_build(
        inst,
        Box::new(move |b| {
            let mut node = node;
            for n in &names {
                node.ports.push(b.any_port(n)?);
            }
            Ok(Box::new(node))
        }),
    )
    .map_err(|e| err(inst, e.to_string()))?;
    Ok(Replaced {
        name: name.to_string(),
        instance: inst.clone(),
        top: spec.top.clone(),
        active,
    })
}

type Wired = (Vec<Src>, Vec<OutPort>, Vec<(usize, usize)>);

/// The map checked against the node's fields and the RTL's ports: the source of each RTL
/// input (in the RTL's order), the node's outputs, and the stream inputs with a `ready`.
fn wire(
    spec: &Rtl,
    decls: &[PortDecl],
    fields: &[ModelField],
    ports: &[RtlPort],
    reset: Option<&str>,
    err: &dyn Fn(&str, String) -> InputError,
) -> Result<Wired, InputError> {
    let inst = &spec.instance;
    let names = || fields.iter().map(|f| f.label.as_str()).collect::<Vec<_>>().join(", ");
    let rtl_ins: Vec<&RtlPort> = ports
        .iter()
        .filter(|p| p.input && p.name != spec.clock && Some(p.name.as_str()) != reset)
        .collect();
    let rtl_outs: Vec<&RtlPort> = ports.iter().filter(|p| !p.input).collect();
    let mut ins: Vec<Option<Src>> = vec![None; rtl_ins.len()];
    let mut outs: Vec<OutPort> = decls
        .iter()
        .enumerate()
        .filter(|(_, d)| d.dir == Dir::Out)
        .map(|(port, d)| OutPort {
            port,
            name: d.name.clone(),
            stream: d.shape == Shape::Stream,
            valid: None,
            fields: vec![usize::MAX; d.fields().len()],
        })
        .collect();
    let mut ready = Vec::new();
    for (key, sig) in &spec.map {
        let signal = match sig {
            RtlSignal::Name(s) => s.as_str(),
            RtlSignal::Full { signal, offset, when } => {
                if *offset != 0 || when.is_some() {
                    return Err(err(
                        key,
                        format!("map: `{key}`: `offset` and `when` belong to a shadow's comparison; in replace mode the RTL's value drives the port as it is"),
                    ));
                }
                signal.as_str()
            }
        };
        let Some(f) = fields.iter().find(|f| f.label == *key) else {
            return Err(err(
                key,
                format!("map: `{inst}.{key}` is not a field of the node's ports ({})", names()),
            ));
        };
        if signal == spec.clock || Some(signal) == reset {
            return Err(err(
                signal,
                format!(
                    "map: `{key}` → `{signal}`: `{signal}` is the clock or the reset of `{}`, which hwsim drives",
                    spec.top
                ),
            ));
        }
        let Some(p) = ports.iter().find(|p| p.name == signal) else {
            return Err(err(
                signal,
                format!("map: `{key}` → `{signal}`: the top `{}` has no such port", spec.top),
            ));
        };
        if p.width != f.width {
            return Err(err(
                signal,
                format!(
                    "map: `{inst}.{key}` is {} bits, the RTL's `{signal}` {} bits",
                    f.width, p.width
                ),
            ));
        }
        // Which way the value goes: into the RTL for the node's inputs and an output's room,
        // out of it for the node's outputs and an input's ready.
        let into_rtl = (f.dir == Dir::In) != f.ready;
        if into_rtl != p.input {
            let want = if into_rtl { "an input" } else { "an output" };
            return Err(err(
                signal,
                format!(
                    "map: `{key}` → `{signal}`: the RTL's `{signal}` must be {want} of `{}`",
                    spec.top
                ),
            ));
        }
        if into_rtl {
            let i = rtl_ins.iter().position(|q| q.name == signal).ok_or_else(|| {
                err(
                    signal,
                    format!("map: `{signal}` is the clock or the reset of `{}`", spec.top),
                )
            })?;
            ins[i] = Some(match (f.slot, f.dir) {
                (Some(slot), _) => Src::Field { port: f.port, slot },
                (None, Dir::In) => Src::Valid(f.port),
                (None, Dir::Out) => Src::Room(f.port),
            });
        } else {
            let r = rtl_outs.iter().position(|q| q.name == signal).expect("an output");
            if f.dir == Dir::In {
                ready.push((f.port, r));
                continue;
            }
            let o = outs.iter_mut().find(|o| o.port == f.port).expect("an output port");
            match f.slot {
                Some(s) => o.fields[s] = r,
                None => o.valid = Some(r),
            }
        }
    }
    let srcs = super::every_input_mapped(&rtl_ins, ins, inst, &names(), err)?;
    every_output_driven(inst, decls, &outs, err)?;
    Ok((srcs, outs, ready))
}

/// Refuses a node output field no RTL output drives.
fn every_output_driven(
    inst: &str,
    decls: &[PortDecl],
    outs: &[OutPort],
    err: &dyn Fn(&str, String) -> InputError,
) -> Result<(), InputError> {
    for o in outs {
        let missing = |what: String| {
            err(
                "map",
                format!("map: `{inst}.{what}` is driven by no RTL output (in replace mode the RTL drives every output field)"),
            )
        };
        if o.stream && o.valid.is_none() {
            return Err(missing(format!("{}.valid", o.name)));
        }
        if let Some(s) = o.fields.iter().position(|&r| r == usize::MAX) {
            let f = decls[o.port].fields()[s].name;
            let label = if f.is_empty() {
                o.name.clone()
            } else {
                format!("{}.{f}", o.name)
            };
            return Err(missing(label));
        }
    }
    Ok(())
}
