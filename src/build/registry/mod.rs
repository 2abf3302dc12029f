//! The registry of block kinds: name, one-line doc, parameter defaults, ports, and how to build
//! an instance from YAML parameters. `hwsim list` prints it.

use hwsim_hw::{Binder, BuildFn, BuildResult, CounterDecl, ElabError, Netlist, PortDecl};
use hwsim_modules::kernel_examples as kx;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::input::yaml::{self, Value};

/// The table of kinds.
mod kinds;
use kinds::all_blocks;

type Make = Box<dyn Fn(&Value) -> Result<(Vec<PortDecl>, Body), String>>;

/// The parameters a kind's instance runs with: what `make` reads, every default filled in.
type Resolve = Box<dyn Fn(&Value) -> Result<Value, String>>;

/// Creates a composite's children under its path and exports its ports to theirs.
pub type ExpandFn = Box<dyn FnOnce(&str, &mut Netlist) -> Result<(), ElabError>>;

/// How an instance of a kind is made: one block the kernel ticks, or a composite that creates
/// the blocks it is made of (and owns no logic).
pub enum Body {
    /// A block.
    Leaf(BuildFn),
    /// A composite.
    Composite(ExpandFn),
}

/// Adds an instance of `kind` at `path`: the block, or the composite and its children.
pub fn add_instance(
    nl: &mut Netlist,
    path: &str,
    kind: &str,
    ports: Vec<PortDecl>,
    body: Body,
) -> Result<(), ElabError> {
    match body {
        Body::Leaf(build) => nl.add(path, kind, ports, build).map(|_| ()),
        Body::Composite(expand) => {
            nl.add_composite(path, kind, ports)?;
            expand(path, nl)
        }
    }
}

/// One block kind.
pub struct BlockKind {
    /// Name used in `kind:`.
    pub name: &'static str,
    /// What it models.
    pub doc: &'static str,
    /// Parameter defaults.
    pub defaults: Value,
    /// Ports with the default parameters.
    pub default_ports: Vec<PortDecl>,
    /// The counter tables of the kind (its file's and its modules'): every counter an instance
    /// registers is in one, and a composite lists its children's.
    pub counters: &'static [&'static [CounterDecl]],
    make: Make,
    resolve: Resolve,
}

impl BlockKind {
    /// Ports and body for parameters `params` (merged over the defaults by the caller).
    pub fn make(&self, params: &Value) -> Result<(Vec<PortDecl>, Body), String> {
        (self.make)(params)
    }

    /// The parameters an instance made from `params` runs with, every default filled in, as
    /// the block reads them (`hwsim config`).
    pub fn resolved(&self, params: &Value) -> Result<Value, String> {
        (self.resolve)(params)
    }

    /// The declaration of counter `leaf` (the name without the instance path).
    pub fn counter(&self, leaf: &str) -> Option<&'static CounterDecl> {
        self.counters.iter().flat_map(|t| t.iter()).find(|d| d.matches(leaf))
    }
}

/// A kind's typed parameters from their YAML (null: the defaults).
fn params_of<P: DeserializeOwned + Default>(v: &Value) -> Result<P, String> {
    if v.is_null() {
        Ok(P::default())
    } else {
        yaml::from_value(v.clone())
    }
}

/// The parameters an instance runs with, every default filled in: its typed `P` back as YAML.
fn resolve_as<P: Serialize + DeserializeOwned + Default + 'static>() -> Resolve {
    Box::new(|v: &Value| Ok(yaml::to_value(&params_of::<P>(v)?)))
}

/// A composite kind: `ports` are the ones it shows outside, `expand` creates its children
/// (under the path it is given) and exports those ports to theirs.
fn composite_kind<P>(
    name: &'static str,
    doc: &'static str,
    ports: fn(&P) -> Vec<PortDecl>,
    expand: fn(&P, &str, &mut Netlist) -> Result<(), ElabError>,
    check: fn(&P) -> Result<(), String>,
    counters: &'static [&'static [CounterDecl]],
) -> BlockKind
where
    P: Serialize + DeserializeOwned + Default + Clone + 'static,
{
    any_kind(name, doc, ports, check, counters, move |p: P| {
        let e: ExpandFn = Box::new(move |path: &str, nl: &mut Netlist| expand(&p, path, nl));
        Body::Composite(e)
    })
}

fn kind<P>(
    name: &'static str,
    doc: &'static str,
    ports: fn(&P) -> Vec<PortDecl>,
    build: fn(&P, &mut Binder) -> BuildResult,
    counters: &'static [&'static [CounterDecl]],
) -> BlockKind
where
    P: Serialize + DeserializeOwned + Default + Clone + 'static,
{
    checked_kind(name, doc, ports, build, |_| Ok(()), counters)
}

/// A kind whose port count grows with a parameter: `check` refuses an out-of-range value before
/// the ports are declared (its message, not a missing port's, is then the error).
fn checked_kind<P>(
    name: &'static str,
    doc: &'static str,
    ports: fn(&P) -> Vec<PortDecl>,
    build: fn(&P, &mut Binder) -> BuildResult,
    check: fn(&P) -> Result<(), String>,
    counters: &'static [&'static [CounterDecl]],
) -> BlockKind
where
    P: Serialize + DeserializeOwned + Default + Clone + 'static,
{
    any_kind(name, doc, ports, check, counters, move |p: P| {
        let b: BuildFn = Box::new(move |binder: &mut Binder| build(&p, binder));
        Body::Leaf(b)
    })
}

/// A kind, leaf or composite: its defaults and default ports, and `make`, which reads the
/// parameters, checks them, declares the ports and hands the parameters to `body`.
fn any_kind<P>(
    name: &'static str,
    doc: &'static str,
    ports: fn(&P) -> Vec<PortDecl>,
    check: fn(&P) -> Result<(), String>,
    counters: &'static [&'static [CounterDecl]],
    body: impl Fn(P) -> Body + 'static,
) -> BlockKind
where
    P: Serialize + DeserializeOwned + Default + Clone + 'static,
{
    let defaults = yaml::to_value(&P::default());
    let default_ports = ports(&P::default());
    BlockKind {
        name,
        doc,
        defaults,
        default_ports,
        counters,
        make: Box::new(move |v: &Value| {
            let p: P = params_of(v)?;
            check(&p)?;
            let decls = ports(&p);
            Ok((decls, body(p)))
        }),
        resolve: resolve_as::<P>(),
    }
}

/// The `pipe` kind: its `type` parameter picks the message type (u64, psn, qp, rh, tos, vlan,
/// tc, mac); the other keys are the pipe's own parameters (refused if unknown).
fn pipe_kind() -> BlockKind {
    fn typed<T: hwsim_hw::Value>(p: kx::pipe::Params) -> (Vec<PortDecl>, Body) {
        let decls = kx::pipe::ports::<T>(&p);
        (
            decls,
            Body::Leaf(Box::new(move |b: &mut Binder| kx::pipe::build::<T>(&p, b))),
        )
    }
    let mut defaults = yaml::to_value(&kx::pipe::Params::default());
    if let Value::Mapping(m) = &mut defaults {
        m.insert(Value::from("type"), Value::from("u64"));
    }
    BlockKind {
        name: "pipe",
        doc: "latency-N stream relay for any message type (type: u64|psn|qp|rh|tos|vlan|tc|mac)",
        defaults,
        default_ports: kx::pipe::ports::<u64>(&kx::pipe::Params::default()),
        counters: kx::pipe::COUNTER_TABLES,
        make: Box::new(|v: &Value| {
            let mut rest = v.clone();
            let ty = match &mut rest {
                Value::Mapping(m) => match m.remove("type") {
                    Some(Value::String(s)) => s,
                    Some(other) => return Err(format!("type: expected a name, got {}", yaml::show(&other))),
                    None => "u64".to_string(),
                },
                Value::Null => "u64".to_string(),
                other => return Err(format!("expected a mapping, got {}", yaml::show(other))),
            };
            let p: kx::pipe::Params = if rest.is_null() {
                Default::default()
            } else {
                yaml::from_value(rest)?
            };
            use hwsim_ports as hp;
            Ok(match ty.as_str() {
                "u64" => typed::<u64>(p),
                "psn" => typed::<hp::Psn>(p),
                "qp" => typed::<hp::QpId>(p),
                "rh" => typed::<hp::Rh>(p),
                "tos" => typed::<hp::Tos>(p),
                "vlan" => typed::<hp::VlanTag>(p),
                "tc" => typed::<hp::TrafficClass>(p),
                "mac" => typed::<hp::MacAddr>(p),
                other => {
                    return Err(format!(
                        "unknown pipe type `{other}` (u64, psn, qp, rh, tos, vlan, tc, mac)"
                    ))
                }
            })
        }),
        resolve: Box::new(|v: &Value| {
            let mut rest = v.clone();
            let ty = match &mut rest {
                Value::Mapping(m) => m.remove("type").unwrap_or_else(|| Value::from("u64")),
                _ => Value::from("u64"),
            };
            let p: kx::pipe::Params = if rest.is_null() {
                Default::default()
            } else {
                yaml::from_value(rest)?
            };
            let mut out = yaml::to_value(&p);
            if let Value::Mapping(m) = &mut out {
                m.insert(Value::from("type"), ty);
            }
            Ok(out)
        }),
    }
}

/// All block kinds, by name: built once per thread and shared: each kind's defaults are parsed and its
/// default ports declared once, not by every caller (a run asked five times).
pub fn blocks() -> std::rc::Rc<[BlockKind]> {
    thread_local! {
        static BLOCKS: std::cell::OnceCell<std::rc::Rc<[BlockKind]>> = const { std::cell::OnceCell::new() };
    }
    BLOCKS.with(|b| b.get_or_init(|| all_blocks().into()).clone())
}

/// Every counter's unit (full name → unit), from the table of the kind that registers it.
pub fn counter_units(sim: &hwsim_hw::Sim) -> std::collections::BTreeMap<String, &'static str> {
    let blocks = blocks();
    let mut last: Option<(&str, &BlockKind)> = None;
    let mut m = std::collections::BTreeMap::new();
    for (name, kind) in sim.counter_kinds() {
        // Counters come grouped by block: look the kind up once per run of them.
        let k = match last {
            Some((n, k)) if n == kind => Some(k),
            _ => find(&blocks, kind),
        };
        let Some(k) = k else { continue };
        last = Some((kind, k));
        let leaf = name.rsplit_once('.').map_or(name, |(_, l)| l);
        if let Some(d) = k.counter(leaf) {
            m.insert(name.to_string(), d.unit);
        }
    }
    m
}

/// The first counter no counter table declares, as an error naming it and the kind of the
/// block that registers it: one check after elaboration, for the blocks the registry builds and
/// the nodes a composite creates itself (rclink_rx's children) alike.
pub fn check_counter_tables(sim: &hwsim_hw::Sim) -> Result<(), String> {
    let blocks = blocks();
    let mut last: Option<(&str, Option<&BlockKind>)> = None;
    // Every instance of a kind registers the same few counters: each (kind, name) is held to
    // the table once (a 32×32 torus registers over a million).
    let mut seen: hwsim_hw::FastSet<(&str, &str)> = Default::default();
    for (name, kind) in sim.counter_kinds() {
        let leaf = name.rsplit_once('.').map_or(name, |(_, l)| l);
        if !seen.insert((kind, leaf)) {
            continue;
        }
        let k = match last {
            Some((n, k)) if n == kind => k,
            _ => find(&blocks, kind),
        };
        last = Some((kind, k));
        // A kind outside the registry (a test's own block) has no table to hold it to.
        if k.is_some_and(|k| k.counter(leaf).is_none()) {
            return Err(format!(
                "counter `{name}` (registered by a `{kind}` block) is in no counter table of its kind (add it to COUNTERS in the block's file)"
            ));
        }
    }
    Ok(())
}

/// Looks up a kind.
pub fn find<'a>(blocks: &'a [BlockKind], name: &str) -> Option<&'a BlockKind> {
    blocks.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_with_event_pulses_are_kinds_of_blocks() {
        let blocks = blocks();
        for (kind, _) in hwsim_modules::events::KIND_EVENTS {
            assert!(blocks.iter().any(|b| b.name == *kind), "{kind} is no kind of block");
        }
    }

    /// The counter names of every shipped testbench's golden report.
    fn golden_counters() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
        let mut v = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            for l in text.lines() {
                if let Some(rest) = l.strip_prefix("counter ") {
                    v.push(rest.split(' ').next().unwrap().to_string());
                }
            }
        }
        v.sort();
        v.dedup();
        v
    }

    #[test]
    fn time_has_one_vocabulary_a_duration_in_ns_a_moment_in_cycle() {
        // Counters, metrics (runner's checks test them), the JSON's units and the plots' axes
        // say time one way (docs/testbenches.md): `cycles` or any other spelling is refused.
        let time_words = ["cycles", "cyc", "nanoseconds", "clk", "clocks"];
        for b in blocks().iter() {
            for d in b.counters.iter().flat_map(|t| t.iter()) {
                assert!(
                    !time_words.contains(&d.unit),
                    "{}.{}: unit `{}` (a duration is `ns`, a moment `cycle`)",
                    b.name,
                    d.name,
                    d.unit
                );
            }
        }
    }

    #[test]
    fn every_declared_counter_is_counted_by_some_testbench() {
        // A table entry no testbench registers is stale (a renamed counter left behind) or a
        // typo; the registry check catches the other direction.
        let names = golden_counters();
        let leaves: std::collections::BTreeSet<&str> = names
            .iter()
            .map(|n| n.rsplit_once('.').map_or(n.as_str(), |(_, l)| l))
            .collect();
        let mut stale = Vec::new();
        for b in blocks().iter() {
            for d in b.counters.iter().flat_map(|t| t.iter()) {
                if !leaves.iter().any(|l| d.matches(l)) {
                    stale.push(format!("{}.{}", b.name, d.name));
                }
            }
        }
        assert!(stale.is_empty(), "declared but counted by no testbench: {stale:?}");
    }

    #[test]
    fn every_port_of_every_kind_carries_a_value_testbenches_can_drive_and_check() {
        // A port type missing from the value registry is found only when a testbench first
        // names the port (stimulus, check or vectors): catch it here, for every kind.
        let values = crate::build::values::registry();
        let mut missing = Vec::new();
        for b in blocks().iter() {
            for d in &b.default_ports {
                if !values.contains_key(&d.type_id) {
                    missing.push(format!("{}.{}: {}", b.name, d.name, d.type_name));
                }
            }
        }
        assert!(missing.is_empty(), "ports no testbench can read: {missing:?}");
    }

    #[test]
    fn every_entry_has_a_unit_and_a_meaning_and_no_name_twice_in_a_kind() {
        for b in blocks().iter() {
            let decls: Vec<_> = b.counters.iter().flat_map(|t| t.iter()).collect();
            for (i, d) in decls.iter().enumerate() {
                assert!(!d.unit.is_empty() && !d.doc.is_empty(), "{}.{}", b.name, d.name);
                assert!(
                    decls[..i].iter().all(|e| e.name != d.name),
                    "{}: `{}` declared twice",
                    b.name,
                    d.name
                );
            }
        }
    }

    /// Every occupancy a block shows (cells or entries queued, buffer in use, credits due) is
    /// declared a level, so the save file draws it as a curve (issue 52: `voq_total` drew as
    /// digit boxes). A cumulative count (`wire_total`), a flag or a bitmap is not an occupancy.
    #[test]
    fn every_occupancy_output_is_a_level() {
        let occupancy = [
            "_total",
            "depth",
            "entries",
            "_due",
            "_used",
            "queue",
            "backlog",
            "slots_used",
        ];
        let mut missing = Vec::new();
        for b in blocks().iter() {
            for p in b.default_ports.iter().filter(|p| p.dir == hwsim_hw::Dir::Out) {
                let bits = match p.fields() {
                    [f] if f.name.is_empty() => match f.kind {
                        hwsim_hw::TraceKind::Bits(w) => w,
                        _ => 0,
                    },
                    _ => 0,
                };
                let leaf = p.name.rsplit('.').next().unwrap_or(&p.name);
                let occ = occupancy.iter().any(|o| leaf.contains(o)) && leaf != "wire_total";
                if occ && bits > 1 && !p.level {
                    missing.push(format!("{}.{}", b.name, p.name));
                }
            }
        }
        assert!(missing.is_empty(), "occupancies not declared levels: {missing:?}");
    }
}
