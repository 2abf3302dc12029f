//! The netlist: instances with declared ports, bindings between them, and elaboration into a
//! runnable [`Sim`].
//!
//! Instances are the nodes of a petgraph graph and bindings its edges (driver → reader, labelled
//! with the port names and value type). Elaboration refuses, with an error naming the instance and
//! port: an unbound input, two drivers on one input, a stream with two consumers, a type, shape or
//! timing (registered / combinational) mismatch, a binding from an input or into an output, an
//! unknown instance or port, and a combinational loop (naming every instance and port on it).
//!
//! The combinational edges also give the static schedule: each process of each instance gets a
//! *level*, the length of the longest chain of combinational bindings (and process orders) that
//! ends at it (0 with no combinational input). The kernel groups processes tied by such edges
//! into clusters and runs each cluster's members in level order (`sim/cluster.rs`), so every
//! combinational driver runs before its readers; registered bindings impose no order.

mod binder;
mod bindings;
mod hier;
mod schedule;

use crate::fastmap::FastMap;
use std::any::Any;
use std::fmt::Write as _;
use std::rc::Rc;

use petgraph::graph::{DiGraph, NodeIndex};

pub use crate::port::{Dir, PortDecl, Shape, Timing};
pub use binder::Binder;
pub use hier::DotOptions;

use crate::component::Component;
use crate::error::ElabError;
use crate::net::{NetDyn, NetShared};
use crate::sim::Sim;
use bindings::{unpack, Bindings, NONE};

/// What a block's build function returns: the component, or why its parameters are refused.
pub type BuildResult = Result<Box<dyn Component>, String>;

/// Builds one component once its nets exist.
pub type BuildFn = Box<dyn FnOnce(&mut Binder) -> Result<Box<dyn Component>, String>>;

struct Instance {
    path: String,
    kind: String,
    ports: Vec<PortDecl>,
    /// Port name → index, for blocks with many ports (a mesh router has six per edge): looking
    /// each one up by a linear scan made elaboration cubic in the chip count.
    port_index: Option<FastMap<String, usize>>,
    build: Option<BuildFn>,
    node: NodeIndex,
}

/// Whether `path` is a hierarchical name: dot-separated segments of ASCII letters, digits, `_`
/// and `-`. A name is also a file name (`hwsim vectors` writes `<instance>.csv`) and a VCD
/// scope, so nothing else is let in: `/x`, `a/b`, `..` or a space would reach outside a folder
/// or break a viewer.
pub(crate) fn good_path(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('.')
            .all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
}

/// `a.b`: a hierarchical name joined in one allocation of its exact size. `format!` took
/// ~1 200 instructions per name (its formatter pads each argument, and the string grows by
/// reallocation); elaboration makes millions of these (a 32×32 torus's ports and nets).
pub fn dotted(a: &str, b: &str) -> String {
    joined(&[a, ".", b])
}

/// The pieces in one string, allocated once at its exact size.
pub fn joined(pieces: &[&str]) -> String {
    let mut s = String::with_capacity(pieces.iter().map(|p| p.len()).sum());
    for p in pieces {
        s.push_str(p);
    }
    s
}

/// Above this many ports an instance keeps a name index (below it a scan is as fast).
const INDEXED_PORTS: usize = 16;

/// The index of port `name`: by the index when there is one, else by a scan.
fn find_port(ports: &[PortDecl], index: Option<&FastMap<String, usize>>, name: &str) -> Option<usize> {
    match index {
        Some(ix) => ix.get(name).copied(),
        None => ports.iter().position(|d| d.name == name),
    }
}

/// Handle of an instance in a [`Netlist`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstId(pub usize);

#[derive(Clone, Debug)]
struct Binding {
    from: (usize, usize),
    to: (usize, usize),
    capacity: Option<u32>,
}

/// Graph edge label: one binding.
#[derive(Clone, Debug)]
pub struct EdgeLabel {
    /// Driver port name.
    pub from_port: String,
    /// Reader port name.
    pub to_port: String,
    /// Value type.
    pub type_name: &'static str,
    /// A combinational binding (orders the two instances within a cycle).
    pub comb: bool,
}

/// A netlist under construction.
#[derive(Default)]
pub struct Netlist {
    insts: Vec<Instance>,
    by_path: FastMap<String, usize>,
    binds: Vec<Binding>,
    graph: DiGraph<String, EdgeLabel>,
    /// Composites (`hier.rs`): scopes with ports and no logic.
    comps: Vec<hier::Composite>,
    comp_by_path: FastMap<String, usize>,
    /// Every composite port by its full name (`composite.port`): (composite, port).
    comp_ports: FastMap<String, (u32, u32)>,
    /// Per leaf endpoint a composite exports: the composite ports standing for it, innermost
    /// first.
    outer_name: FastMap<Endpoint, Vec<String>>,
}

impl Netlist {
    /// An empty netlist.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an instance at hierarchical `path` (dot-separated) of block `kind`.
    pub fn add(&mut self, path: &str, kind: &str, ports: Vec<PortDecl>, build: BuildFn) -> Result<InstId, ElabError> {
        if !good_path(path) {
            return Err(ElabError::BadName { name: path.to_string() });
        }
        if self.by_path.contains_key(path) || self.comp_by_path.contains_key(path) {
            return Err(ElabError::DuplicateInstance { path: path.to_string() });
        }
        let mut seen = crate::fastmap::FastSet::default();
        for p in &ports {
            if !seen.insert(p.name.as_str()) {
                return Err(ElabError::Build {
                    instance: path.to_string(),
                    message: format!("kind {kind} declares port `{}` twice", p.name),
                });
            }
            if p.process >= crate::port::MAX_PROCESSES {
                return Err(ElabError::Build {
                    instance: path.to_string(),
                    message: format!(
                        "kind {kind} puts port `{}` in process {} (a block has at most {} processes)",
                        p.name,
                        p.process,
                        crate::port::MAX_PROCESSES
                    ),
                });
            }
        }
        let idx = self.insts.len();
        let node = self.graph.add_node(joined(&[path, "\n(", kind, ")"]));
        let port_index =
            (ports.len() > INDEXED_PORTS).then(|| ports.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect());
        self.insts.push(Instance {
            path: path.to_string(),
            kind: kind.to_string(),
            ports,
            port_index,
            build: Some(build),
            node,
        });
        self.by_path.insert(path.to_string(), idx);
        Ok(InstId(idx))
    }

    /// Whether an instance exists.
    pub fn has_instance(&self, path: &str) -> bool {
        self.by_path.contains_key(path)
    }

    /// The paths of every instance, in creation order.
    pub fn instance_paths(&self) -> impl Iterator<Item = &str> {
        self.insts.iter().map(|i| i.path.as_str())
    }

    /// The declared ports of an instance or a composite.
    pub fn ports_of(&self, path: &str) -> Option<&[PortDecl]> {
        match self.by_path.get(path) {
            Some(&i) => Some(self.insts[i].ports.as_slice()),
            None => self.comp_by_path.get(path).map(|&c| self.comps[c].ports.as_slice()),
        }
    }

    /// The kind of an instance or a composite.
    pub fn kind_of(&self, path: &str) -> Option<&str> {
        match self.by_path.get(path) {
            Some(&i) => Some(self.insts[i].kind.as_str()),
            None => self.comp_by_path.get(path).map(|&c| self.comps[c].kind.as_str()),
        }
    }

    /// Replaces the builder of instance `path` (not a composite): the node keeps its kind, its
    /// ports and every binding, and a different component stands behind them (an RTL simulator
    /// in place of the model's block). Refused for an unknown path or an elaborated instance.
    pub fn set_build(&mut self, path: &str, build: BuildFn) -> Result<(), ElabError> {
        let Some(&i) = self.by_path.get(path) else {
            return Err(ElabError::Build {
                instance: path.to_string(),
                message: "no such instance (a composite cannot be replaced, only a leaf node)".into(),
            });
        };
        self.insts[i].build = Some(build);
        Ok(())
    }

    /// Number of instances.
    pub fn instance_count(&self) -> usize {
        self.insts.len()
    }

    /// Resolves `inst.port`. A port name may itself contain dots: a block shows the state of its
    /// sub-blocks as ports named `arbiter.ptr`, which the tracer draws as nested scopes
    /// (`chip0.lg3.tx.arbiter.ptr`). The longest instance path that has the rest as a port wins;
    /// without a match the last dot separates the port, for the error.
    pub fn resolve(&self, endpoint: &str) -> Result<(usize, usize), ElabError> {
        for (dot, _) in endpoint.rmatch_indices('.') {
            let (inst, port) = (&endpoint[..dot], &endpoint[dot + 1..]);
            if let Some(&i) = self.by_path.get(inst) {
                let inst = &self.insts[i];
                if let Some(p) = find_port(&inst.ports, inst.port_index.as_ref(), port) {
                    return Ok((i, p));
                }
            }
        }
        // The error names the longest instance on the path, if any, and the rest as its port.
        let split = endpoint
            .rmatch_indices('.')
            .map(|(dot, _)| (&endpoint[..dot], &endpoint[dot + 1..]))
            .find(|(inst, _)| self.by_path.contains_key(*inst));
        let (inst, port) = match split {
            Some(s) => s,
            None => endpoint.rsplit_once('.').ok_or_else(|| ElabError::BadEndpoint {
                endpoint: endpoint.to_string(),
            })?,
        };
        let &i = self.by_path.get(inst).ok_or_else(|| ElabError::UnknownInstance {
            instance: inst.to_string(),
            port: port.to_string(),
        })?;
        Err(ElabError::UnknownPort {
            instance: inst.to_string(),
            kind: self.insts[i].kind.clone(),
            port: port.to_string(),
            available: self.insts[i]
                .ports
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The instance path and port declaration of a resolved endpoint.
    pub fn port_at(&self, (i, p): (usize, usize)) -> (&str, &PortDecl) {
        (&self.insts[i].path, &self.insts[i].ports[p])
    }

    fn endpoint(&self, (i, p): (usize, usize)) -> String {
        dotted(&self.insts[i].path, &self.insts[i].ports[p].name)
    }

    /// Binds output `from` ("inst.port") to input `to`. `capacity` overrides a stream input's
    /// buffer depth.
    pub fn connect(&mut self, from: &str, to: &str, capacity: Option<u32>) -> Result<(), ElabError> {
        let froms = self.resolve_all(from)?;
        if froms.len() != 1 {
            let (_, d) = self.port_at(froms[0]);
            return Err(ElabError::WrongDirection {
                endpoint: from.to_string(),
                expected: if d.dir == Dir::In {
                    "an output (driver)"
                } else {
                    "one driver"
                },
            });
        }
        for t in self.resolve_all(to)? {
            self.bind(froms[0], t, capacity)?;
        }
        Ok(())
    }

    /// One binding between leaf endpoints, checked.
    fn bind(&mut self, f: Endpoint, t: Endpoint, capacity: Option<u32>) -> Result<(), ElabError> {
        let fd = &self.insts[f.0].ports[f.1];
        let td = &self.insts[t.0].ports[t.1];
        if fd.dir != Dir::Out {
            return Err(ElabError::WrongDirection {
                endpoint: self.endpoint(f),
                expected: "an output (driver)",
            });
        }
        if td.dir != Dir::In {
            return Err(ElabError::WrongDirection {
                endpoint: self.endpoint(t),
                expected: "an input (reader)",
            });
        }
        if fd.type_id == td.type_id && fd.shape == td.shape && fd.timing != td.timing {
            return Err(ElabError::TimingMismatch {
                from: self.endpoint(f),
                from_type: fd.describe(),
                to: self.endpoint(t),
                to_type: td.describe(),
            });
        }
        if fd.type_id != td.type_id || fd.shape != td.shape || fd.timing != td.timing {
            return Err(ElabError::TypeMismatch {
                from: self.endpoint(f),
                from_type: fd.describe(),
                to: self.endpoint(t),
                to_type: td.describe(),
            });
        }
        let label = EdgeLabel {
            from_port: fd.name.clone(),
            to_port: td.name.clone(),
            type_name: fd.type_name,
            comb: fd.timing == Timing::Comb,
        };
        self.graph.add_edge(self.insts[f.0].node, self.insts[t.0].node, label);
        self.binds.push(Binding {
            from: f,
            to: t,
            capacity,
        });
        Ok(())
    }

    /// The petgraph graph (instances, bindings).
    pub fn graph(&self) -> &DiGraph<String, EdgeLabel> {
        &self.graph
    }

    /// Graphviz DOT of the whole netlist (see [`Netlist::to_dot_with`]).
    pub fn to_dot(&self) -> String {
        self.to_dot_with(&DotOptions::default())
    }

    /// Graphviz DOT without clusters: one box per instance, one edge per binding labelled
    /// `out → in : type`.
    pub fn to_flat_dot(&self) -> String {
        let mut s = String::from("digraph netlist {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n");
        for n in self.graph.node_indices() {
            let _ = writeln!(
                s,
                "  n{} [label=\"{}\"];",
                n.index(),
                self.graph[n].replace('\n', "\\n")
            );
        }
        for e in self.graph.edge_indices() {
            let (a, b) = self.graph.edge_endpoints(e).expect("edge exists");
            let l = &self.graph[e];
            // A combinational binding is drawn bold and says so: it orders the two instances.
            let (comb, style) = if l.comb { ("comb ", ", style=bold") } else { ("", "") };
            let _ = writeln!(
                s,
                "  n{} -> n{} [label=\"{} → {} : {comb}{}\"{style}];",
                a.index(),
                b.index(),
                l.from_port,
                l.to_port,
                l.type_name
            );
        }
        s.push_str("}\n");
        s
    }

    /// Checks the netlist and builds the simulation. `seed` derives every component's RNG.
    pub fn elaborate(mut self, seed: u64) -> Result<Sim, ElabError> {
        let b = self.bindings()?;
        // The kernel's unit is a process of an instance (an entry): one per instance unless
        // its ports name several.
        let entries = self.entries();
        let levels = self.levels(&entries)?;

        // One net per output port, plus one constant net per unbound optional input.
        let net_count = self
            .insts
            .iter()
            .enumerate()
            .flat_map(|(i, inst)| inst.ports.iter().enumerate().map(move |(p, d)| (i, p, d)))
            .filter(|(i, p, d)| d.dir == Dir::Out || b.driver_of((*i, *p)).is_none())
            .count();
        let shared = Rc::new(NetShared::new(net_count));
        let mut nets: Vec<Rc<dyn NetDyn>> = Vec::with_capacity(net_count);
        let mut net_paths: Vec<String> = Vec::with_capacity(net_count);
        let mut net_writer: Vec<u32> = Vec::with_capacity(net_count);
        let mut net_readers: Vec<Vec<u32>> = Vec::with_capacity(net_count);
        // Per port (flat, as `b`): its net and the handle the block binds.
        let mut port_net: Vec<Option<(u32, Rc<dyn Any>)>> = vec![None; b.len()];
        for (i, inst) in self.insts.iter().enumerate() {
            for (p, d) in inst.ports.iter().enumerate() {
                let is_const_input = d.dir == Dir::In && b.driver_of((i, p)).is_none();
                if d.dir == Dir::Out || is_const_input {
                    let id = nets.len() as u32;
                    let cap = match d.shape {
                        Shape::Signal => 0,
                        Shape::Stream => match b.consumer[b.flat((i, p))] {
                            NONE => 1,
                            c => {
                                let r = unpack(c);
                                match b.cap_override[b.flat(r)] {
                                    0 => self.insts[r.0].ports[r.1].capacity,
                                    cap => cap,
                                }
                            }
                        },
                    };
                    let (dynnet, anynet) = (d.make)(id, shared.clone(), cap, d.timing == Timing::Comb, d.width);
                    nets.push(dynnet);
                    net_paths.push(if d.dir == Dir::Out {
                        self.net_name((i, p))
                    } else {
                        dotted(&inst.path, &d.name)
                    });
                    let entry = entries.of(i, d.process);
                    net_writer.push(if is_const_input { u32::MAX } else { entry });
                    net_readers.push(if is_const_input { vec![entry] } else { Vec::new() });
                    port_net[b.flat((i, p))] = Some((id, anynet));
                }
            }
        }
        // Inputs in port order (the readers are sorted below: the order does not matter).
        for (i, inst) in self.insts.iter().enumerate() {
            for (p, d) in inst.ports.iter().enumerate() {
                let Some(out) = b.driver_of((i, p)) else { continue };
                let (id, any) = port_net[b.flat(out)].clone().expect("an output has a net");
                net_readers[id as usize].push(entries.of(i, d.process));
                port_net[b.flat((i, p))] = Some((id, any));
            }
        }
        for r in &mut net_readers {
            r.sort_unstable();
            r.dedup();
        }

        let Components {
            comps,
            counter_names,
            counter_base,
            counter_len,
            paths,
            rng_paths,
            kinds,
        } = self.build_components(&b, &port_net, &shared)?;
        // Then the composites' ports, whose targets the first ones define: traced under each.
        let export_aliases = self.take_export_aliases(|leaf| port_net[b.flat(leaf)].as_ref().map(|&(id, _)| id));
        let mut sim = Sim::new(
            seed,
            comps,
            paths,
            &rng_paths,
            kinds,
            counter_names,
            counter_base,
            counter_len,
            nets,
            net_paths,
            net_writer,
            net_readers,
            entries.block,
            entries.process,
            levels,
            shared,
        );
        // A net can be found by any endpoint on it, readers included: through the instances'
        // ports (no name is made per reader), then the composites' names.
        sim.set_ports(self.take_port_index(&b, &port_net));
        sim.trace_aliases(export_aliases);
        Ok(sim)
    }
}

impl Netlist {
    /// Every instance's port names (moved out: their last use) and the net bound to each, for
    /// the kernel to find a net by a reader's `inst.port`.
    fn take_port_index(&mut self, b: &Bindings, port_net: &[Option<(u32, Rc<dyn Any>)>]) -> crate::sim::PortIndex {
        let nets = self
            .insts
            .iter()
            .enumerate()
            .map(|(i, inst)| {
                (0..inst.ports.len())
                    .map(|p| port_net[b.flat((i, p))].as_ref().map_or(u32::MAX, |&(id, _)| id))
                    .collect()
            })
            .collect();
        let names = self
            .insts
            .iter_mut()
            .map(|inst| inst.ports.iter_mut().map(|d| std::mem::take(&mut d.name)).collect())
            .collect();
        crate::sim::PortIndex {
            by_path: std::mem::take(&mut self.by_path),
            names,
            nets,
        }
    }

    /// Builds every instance's component with its port handles; collects the counters each
    /// declares.
    fn build_components(
        &mut self,
        b: &Bindings,
        port_net: &[Option<(u32, Rc<dyn Any>)>],
        shared: &Rc<NetShared>,
    ) -> Result<Components, ElabError> {
        let mut comps: Vec<Box<dyn Component>> = Vec::with_capacity(self.insts.len());
        let mut counter_names: Vec<String> = Vec::new();
        let mut counter_base: Vec<u32> = Vec::new();
        let mut counter_len: Vec<u32> = Vec::new();
        let mut paths = Vec::new();
        let mut rng_paths = Vec::new();
        let mut kinds = Vec::new();
        for (i, inst) in self.insts.iter_mut().enumerate() {
            let mut binder = Binder {
                instance: inst.path.clone(),
                ports: &inst.ports,
                port_index: inst.port_index.as_ref(),
                nets: inst
                    .ports
                    .iter()
                    .enumerate()
                    .map(|(p, _)| port_net[b.flat((i, p))].as_ref().map(|(_, a)| a.clone()))
                    .collect(),
                counters: Vec::new(),
                counter_scope: None,
                rng_scope: None,
                shared: shared.clone(),
            };
            let build = inst.build.take().expect("built once");
            let comp = build(&mut binder).map_err(|message| ElabError::Build {
                instance: inst.path.clone(),
                message,
            })?;
            counter_base.push(counter_names.len() as u32);
            counter_len.push(binder.counters.len() as u32);
            counter_names.append(&mut binder.counters);
            comps.push(comp);
            rng_paths.push(binder.rng_scope.take().unwrap_or_else(|| inst.path.clone()));
            paths.push(inst.path.clone());
            kinds.push(inst.kind.clone());
        }
        Ok(Components {
            comps,
            counter_names,
            counter_base,
            counter_len,
            paths,
            rng_paths,
            kinds,
        })
    }
}

/// An endpoint: (instance index, port index).
type Endpoint = (usize, usize);

/// The built components and what the kernel keeps beside them (see `Netlist::build_components`).
struct Components {
    comps: Vec<Box<dyn Component>>,
    counter_names: Vec<String>,
    counter_base: Vec<u32>,
    counter_len: Vec<u32>,
    paths: Vec<String>,
    /// Per component, the path its random stream is derived from (its own unless it asked).
    rng_paths: Vec<String>,
    kinds: Vec<String>,
}
