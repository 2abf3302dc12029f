//! Elaborating a module-form testbench into a netlist: instances, bindings, stimulus drivers,
//! sinks for unconnected stream outputs, the watch list the checks read after the run, and
//! elaboration errors placed in the testbench.

use std::any::TypeId;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use hwsim_hw::{Dir, ElabError, Netlist, Shape, Timing};

use crate::build::registry::{self, BlockKind};
use crate::build::values::{self, Rows, ValueOps};
use crate::input::yaml::{self, InputError, Value};

use super::*;

/// A port the checks will read.
#[derive(Clone, Debug)]
pub struct Watch {
    /// Endpoint `inst.port`.
    pub endpoint: String,
    /// Value type.
    pub type_id: TypeId,
    /// Signal or stream.
    pub shape: Shape,
    /// Whether a check needs the port's history. A stream whose checks only count every push
    /// of the run reads the stream's own push count: 10^8 pushes cost a counter, not a log.
    pub log: bool,
}

/// One traffic flow: a (source chip, destination chip, CDMA) stream of transactions.
#[derive(Debug, Clone)]
pub struct FlowInfo {
    /// Label.
    pub name: String,
    /// Source chip.
    pub src: u16,
    /// Flow index within the source chip's PAXI.
    pub local: u16,
}

/// What the runner needs besides the netlist.
#[derive(Debug, Clone, Default)]
pub struct SystemInfo {
    /// Chips.
    pub chips: u16,
    /// Link groups per chip.
    pub num_lg: u8,
    /// Flows, in definition order.
    pub flows: Vec<FlowInfo>,
    /// Whether faults are injected (then NAKs and duplicates are expected).
    pub lossy: bool,
}

/// The elaborated testbench.
pub struct Elaborated {
    /// The netlist.
    pub netlist: Netlist,
    /// Ports referenced by checks.
    pub watches: BTreeMap<String, Watch>,
    /// Value operations by type.
    pub values: HashMap<TypeId, ValueOps>,
    /// System form: flows and topology facts.
    pub system: Option<SystemInfo>,
    /// Instances per kind (count, whether the kind is a composite), filled when the netlist is
    /// elaborated (`hwsim check` prints them).
    pub kinds: BTreeMap<String, (usize, bool)>,
    /// System form: the counters the always-on monitors read, bound at elaboration.
    pub monitor_counters: Option<crate::build::monitors::MonitorCounters>,
    /// Paths of the nets whose ports are declared levels (`PortDecl::level`): the GTKWave save
    /// file draws them as analog step traces. Filled when the netlist is elaborated.
    pub levels: Vec<String>,
    /// The ports of the nodes a `rtl:` entry stands beside (crate::run::rtl), kept from the netlist
    /// before it is handed to the kernel.
    pub rtl_ports: BTreeMap<String, Vec<hwsim_hw::PortDecl>>,
    /// The checks of the nodes an RTL drives in place of the model (`rtl:` entries in
    /// `replace` mode), read when the run ends.
    pub rtl_replaced: Vec<Box<dyn Fn() -> crate::build::verdict::CheckResult>>,
}

/// Resolves the ports the checks read.
pub fn watches(
    l: &Loaded,
    nl: &Netlist,
    values: &HashMap<TypeId, ValueOps>,
) -> Result<BTreeMap<String, Watch>, InputError> {
    let mut watches = BTreeMap::new();
    for e in &l.tb.expect {
        if let Some(ep) = &e.port {
            let d = nl.decl_of(ep).map_err(|e| elab_error(l, e))?;
            if !values.contains_key(&d.type_id) {
                return Err(l.error_at(
                    ep,
                    format!("port `{ep}` carries {}, which checks cannot read", d.type_name),
                ));
            }
            // A value matches on the fields it names, so it may leave some out; but a field the
            // type does not have would make the check fail forever, as a wrong stimulus field
            // is bad input too. Building a driver from it tells (serde names the field).
            let ops = &values[&d.type_id];
            for v in e.value.iter().chain(e.sequence.iter().flatten()) {
                if let Err(m) = ops.driver(Shape::Stream, Timing::Registered, vec![(0, v.clone())]) {
                    if m.contains("unknown field") || m.contains("unknown variant") {
                        let m = m.replace(" at cycle 0:", ":");
                        return Err(l.error_at_param(ep, format!("expect on `{ep}`: {m}")));
                    }
                }
            }
            let counts_only = d.shape == Shape::Stream && e.count.is_some() && e.at.is_none() && e.within.is_none();
            let w = watches.entry(ep.clone()).or_insert(Watch {
                endpoint: ep.clone(),
                type_id: d.type_id,
                shape: d.shape,
                log: false,
            });
            w.log |= !counts_only;
        }
    }
    Ok(watches)
}

/// Where in the file an elaboration error points.
fn needle(e: &ElabError) -> String {
    match e {
        ElabError::DuplicateInstance { path } => path.clone(),
        ElabError::BadName { name } => name.clone(),
        ElabError::BadEndpoint { endpoint } => endpoint.clone(),
        ElabError::UnknownInstance { instance, port } => format!("{instance}.{port}"),
        ElabError::UnknownKind { kind, .. } => kind.clone(),
        ElabError::UnknownPort { instance, port, .. } => format!("{instance}.{port}"),
        ElabError::WrongDirection { endpoint, .. } => endpoint.clone(),
        ElabError::TypeMismatch { to, .. } => to.clone(),
        ElabError::TimingMismatch { to, .. } => to.clone(),
        // The binding that closes the ring (its reader is the first driver's instance).
        ElabError::CombLoop { hops } => hops.last().map(|h| h.1.clone()).unwrap_or_default(),
        ElabError::DoubleDriver { second, .. } => second.clone(),
        ElabError::StreamFanout { second, .. } => second.clone(),
        ElabError::UnboundInput { instance, .. } => instance.clone(),
        ElabError::UnboundStreamOutput { instance, .. } => instance.clone(),
        ElabError::Build { instance, .. } => instance.clone(),
        _ => String::new(),
    }
}

/// Converts an elaboration error into bad input located in the testbench.
pub fn elab_error(l: &Loaded, e: ElabError) -> InputError {
    let n = needle(&e);
    // Instance arrays: `stage3` is written as `stage` in the file.
    let trimmed = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').to_string();
    let mut err = l.error_at(&n, e.to_string());
    if err.line.is_none() {
        err = l.error_at(&trimmed, e.to_string());
    }
    if err.line.is_none() {
        // A block built by the system form (`link0_1`) is not in the file; its parameter is.
        err = l.error_at_param(&trimmed, e.to_string());
    }
    if err.line.is_none() {
        // `stage3.inn` from a chain: point at the port name or the array's name.
        if let Some((inst, port)) = n.rsplit_once('.') {
            let base = inst.trim_end_matches(|c: char| c.is_ascii_digit());
            for cand in [port, base] {
                let e2 = l.error_at(cand, e.to_string());
                if e2.line.is_some() {
                    return e2;
                }
            }
        }
    }
    err
}

fn sanitize(endpoint: &str) -> String {
    endpoint.replace('.', "_")
}

/// Builds the netlist of a module-form testbench: the instances, the connections, a driver per
/// driven input, sinks for the streams nothing consumes; then the budget and the watches.
pub fn elaborate(l: &Loaded) -> Result<Elaborated, InputError> {
    let blocks = registry::blocks();
    let values = values::registry();
    let mut nl = Netlist::new();
    let counts = add_instances(l, &blocks, &mut nl)?;
    let bound_outputs = add_connections(l, &mut nl, &counts)?;
    add_stimulus(l, &mut nl, &values)?;
    add_sinks(l, &mut nl, &values, &bound_outputs)?;
    check_txn_budget(l, &blocks, &nl)?;
    let watches = watches(l, &nl, &values)?;
    Ok(Elaborated {
        netlist: nl,
        watches,
        values,
        system: None,
        kinds: BTreeMap::new(),
        monitor_counters: None,
        levels: Vec::new(),
        rtl_ports: BTreeMap::new(),
        rtl_replaced: Vec::new(),
    })
}

/// The testbench's instances (an array of `count` as `name0`, `name1`, …); returns the arrays'
/// sizes by name.
fn add_instances(l: &Loaded, blocks: &[BlockKind], nl: &mut Netlist) -> Result<HashMap<String, u32>, InputError> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for (name, spec) in &l.tb.instances {
        let Some(kind) = registry::find(blocks, &spec.kind) else {
            let known = blocks.iter().map(|b| b.name).collect::<Vec<_>>().join(", ");
            return Err(elab_error(
                l,
                ElabError::UnknownKind {
                    instance: name.clone(),
                    kind: spec.kind.clone(),
                    known,
                },
            ));
        };
        let base = yaml::merge(&kind.defaults, l.defaults.get(&spec.kind).unwrap_or(&Value::Null));
        let params = yaml::merge(&base, &spec.params);
        if let Some(n) = spec.count.filter(|&n| n > MAX_COUNT) {
            return Err(l.error_at(
                name,
                format!("instance `{name}`: count {n} out of range 1..={MAX_COUNT}"),
            ));
        }
        let names: Vec<String> = match spec.count {
            None => vec![name.clone()],
            Some(0) => return Err(l.error_at(name, format!("instance `{name}`: count must be ≥ 1"))),
            Some(n) => (0..n).map(|i| format!("{name}{i}")).collect(),
        };
        if let Some(n) = spec.count {
            counts.insert(name.clone(), n);
        }
        for path in names {
            let (ports, build) = kind
                .make(&params)
                .map_err(|m| l.error_at(name, format!("instance `{name}` ({}): params: {m}", spec.kind)))?;
            l.record_params(&path, kind, &params)
                .map_err(|m| l.error_at(name, format!("instance `{name}` ({}): params: {m}", spec.kind)))?;
            registry::add_instance(nl, &path, kind.name, ports, build).map_err(|e| elab_error(l, e))?;
        }
    }

    Ok(counts)
}

/// The `connect:` entries (one, a pattern, or a chain along an array); returns the outputs
/// bound.
fn add_connections(
    l: &Loaded,
    nl: &mut Netlist,
    counts: &HashMap<String, u32>,
) -> Result<BTreeSet<String>, InputError> {
    let mut bound_outputs: BTreeSet<String> = BTreeSet::new();
    for c in &l.tb.connect {
        // A stream preallocates its capacity: `capacity: 4294967295` would ask for tens of GiB.
        if let Some(cap) = c.capacity.filter(|&x| x == 0 || x > MAX_CAPACITY) {
            return Err(l.error_at(
                "capacity",
                format!(
                    "connect {} → {}: capacity {cap} out of range 1..={MAX_CAPACITY}",
                    c.from, c.to
                ),
            ));
        }
        match &c.chain {
            None if c.from.contains('*') || c.to.contains('*') => {
                for (from, to) in crate::input::connect_pattern::expand(&|n, m| l.error_at(n, m), nl, &c.from, &c.to)? {
                    nl.connect(&from, &to, c.capacity).map_err(|e| elab_error(l, e))?;
                    bound_outputs.insert(from);
                }
            }
            None => {
                nl.connect(&c.from, &c.to, c.capacity).map_err(|e| elab_error(l, e))?;
                bound_outputs.insert(c.from.clone());
            }
            Some(arr) => {
                let Some(&n) = counts.get(arr) else {
                    return Err(l.error_at(
                        arr,
                        format!("chain `{arr}`: no instance array of that name (give it a `count:`)"),
                    ));
                };
                for i in 0..n.saturating_sub(1) {
                    let from = format!("{arr}{i}.{}", c.from);
                    let to = format!("{arr}{}.{}", i + 1, c.to);
                    nl.connect(&from, &to, c.capacity).map_err(|e| elab_error(l, e))?;
                    bound_outputs.insert(from);
                }
            }
        }
    }

    Ok(bound_outputs)
}

/// Stimulus drivers, one per driven input.
fn add_stimulus(l: &Loaded, nl: &mut Netlist, values: &HashMap<TypeId, ValueOps>) -> Result<(), InputError> {
    let mut rows: BTreeMap<String, Rows> = BTreeMap::new();
    for s in &l.tb.stimulus {
        rows.entry(s.port.clone()).or_default().push((s.at, s.value.clone()));
    }
    for (endpoint, mut r) in rows {
        r.sort_by_key(|(c, _)| *c);
        let decl = nl.decl_of(&endpoint).map_err(|e| elab_error(l, e))?.clone();
        if decl.dir != Dir::In {
            return Err(l.error_at(
                &endpoint,
                format!("stimulus drives `{endpoint}`, which is an output (drive inputs only)"),
            ));
        }
        let ops = values.get(&decl.type_id).ok_or_else(|| {
            l.error_at(
                &endpoint,
                format!(
                    "port `{endpoint}` carries {}, which a testbench cannot drive",
                    decl.type_name
                ),
            )
        })?;
        let (ports, build) = ops
            .driver(decl.shape, decl.timing, r)
            .map_err(|m| l.error_at(&endpoint, format!("stimulus for `{endpoint}`: {m}")))?;
        let drv = format!("tb.drive_{}", sanitize(&endpoint));
        nl.add(&drv, "stimulus", ports, build).map_err(|e| elab_error(l, e))?;
        nl.connect(&format!("{drv}.out"), &endpoint, None)
            .map_err(|e| elab_error(l, e))?;
    }

    Ok(())
}

/// Sinks for stream outputs nothing consumes (a module under test needs someone to take its
/// messages; the checks read them from the stream's log).
fn add_sinks(
    l: &Loaded,
    nl: &mut Netlist,
    values: &HashMap<TypeId, ValueOps>,
    bound_outputs: &BTreeSet<String>,
) -> Result<(), InputError> {
    let mut sinks = Vec::new();
    for (name, spec) in &l.tb.instances {
        let names: Vec<String> = match spec.count {
            None => vec![name.clone()],
            Some(n) => (0..n).map(|i| format!("{name}{i}")).collect(),
        };
        for inst in names {
            for d in nl.ports_of(&inst).unwrap_or(&[]) {
                let ep = format!("{inst}.{}", d.name);
                if d.dir == Dir::Out && d.shape == Shape::Stream && !bound_outputs.contains(&ep) {
                    sinks.push((ep, d.type_id, d.type_name, d.timing, d.width));
                }
            }
        }
    }
    // One sink per value type takes all of that type's streams (one activation per cycle for a
    // block's busy outputs rather than one per output), in the order the outputs were found.
    // (Combinational streams have a sink of their own: its inputs must be combinational too.)
    let mut groups: Vec<((TypeId, Timing), Vec<String>, u32)> = Vec::new();
    for (ep, tid, tname, timing, width) in sinks {
        if !values.contains_key(&tid) {
            return Err(l.error_at(
                &ep,
                format!("stream `{ep}` ({tname}) is unconnected and has no testbench sink"),
            ));
        }
        match groups.iter_mut().find(|(t, ..)| *t == (tid, timing)) {
            Some((_, eps, w)) => {
                eps.push(ep);
                *w = (*w).max(width);
            }
            None => groups.push(((tid, timing), vec![ep], width)),
        }
    }
    for ((tid, timing), eps, width) in groups {
        let ops = &values[&tid];
        // Room for one cycle of a wide stream's pushes (the sink takes them all that cycle).
        let (ports, build) = ops.sink(width.max(2), eps.len(), timing);
        let name: String = ops
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let comb = if timing == Timing::Comb { "comb_" } else { "" };
        let sink = format!("tb.sink_{comb}{name}");
        nl.add(&sink, "sink", ports, build).map_err(|e| elab_error(l, e))?;
        for (k, ep) in eps.iter().enumerate() {
            nl.connect(ep, &format!("{sink}.in{k}"), None)
                .map_err(|e| elab_error(l, e))?;
        }
    }

    Ok(())
}

/// Refuses module-form transactions (a stimulus on a `Txn` port, a `cdma`'s `txns`) whose
/// frames would need more memory than the budget once a `paxi` segments them: every frame of a
/// transaction is queued the cycle it issues, so `bytes: 18446744073709551615` asked for 2^52
/// frames and aborted the run. Charged as in the system form's traffic estimate, at the
/// smallest MPS of the testbench's PAXIs (nothing is segmented without one).
fn check_txn_budget<'a>(l: &'a Loaded, blocks: &[BlockKind], nl: &Netlist) -> Result<(), InputError> {
    let params = |spec: &crate::input::schema::InstanceSpec| {
        let kind = registry::find(blocks, &spec.kind)?;
        let base = yaml::merge(&kind.defaults, l.defaults.get(&spec.kind).unwrap_or(&Value::Null));
        Some(yaml::merge(&base, &spec.params))
    };
    let Some(mps) =
        l.tb.instances
            .values()
            .filter(|s| s.kind == "paxi")
            .filter_map(|s| params(s)?.get("mps")?.as_u64())
            .filter(|&m| m > 0)
            .min()
    else {
        return Ok(());
    };
    let bytes_of = |v: &Value| v.get("bytes").and_then(Value::as_u64).unwrap_or(0);
    // The largest contributor is the place to point at: a stimulus row (its index) or a cdma.
    let mut total: u64 = 0;
    let mut worst: Option<(u64, Result<usize, &str>)> = None;
    let mut charge = |need: u64, place: Result<usize, &'a str>| {
        total = total.saturating_add(need);
        if worst.as_ref().is_none_or(|(w, _)| need > *w) {
            worst = Some((need, place));
        }
    };
    let txn = TypeId::of::<hwsim_ports::Txn>();
    for (i, s) in l.tb.stimulus.iter().enumerate() {
        if nl.decl_of(&s.port).is_ok_and(|d| d.type_id == txn) {
            charge(crate::build::budget::txn_memory(bytes_of(&s.value), mps, 1), Ok(i));
        }
    }
    for (name, spec) in l.tb.instances.iter().filter(|(_, s)| s.kind == "cdma") {
        let copies = spec.count.unwrap_or(1) as u64;
        let txns = params(spec).and_then(|p| p.get("txns").cloned());
        let need = txns
            .iter()
            .filter_map(Value::as_sequence)
            .flatten()
            .map(|t| crate::build::budget::txn_memory(bytes_of(t), mps, copies))
            .fold(0u64, u64::saturating_add);
        charge(need, Err(name.as_str()));
    }
    let what = format!("the transactions a PAXI (MPS {mps}) segments into frames");
    match (crate::build::budget::over_budget(l.max_memory, total, &what), worst) {
        (Some(msg), Some((_, Ok(i)))) => Err(l.item_error("stimulus", i, "bytes", msg)),
        (Some(msg), Some((_, Err(name)))) => Err(l.error_at(name, msg)),
        _ => Ok(()),
    }
}
