//! Hierarchy: composites, and the netlist drawn as clusters.
//!
//! A composite is a named scope with declared ports that owns no logic: its kind creates its
//! children under its path (`chip0.lg3.rx` holds `chip0.lg3.rx.psn_check`, …), wires them, and
//! *exports* each of its ports to the child port (or ports: a signal input may feed several
//! children) that stands for it. Outside, the composite is bound like any instance: a binding to
//! `chip0.lg3.rx.data` is a binding to the child's port it stands for. Inside, nothing is
//! added: no component, no net, no register, so a composite's timing is its children's.
//!
//! Names: a net driven by an exported output is named by the outermost composite port that
//! stands for it (`chip0.lg3.rx.ctrl`, not `chip0.lg3.rx.ctrl_q.ctrl`), so the interface of a
//! block is where users look for it; the child's own name is an alias (checks, `--trace`, probes
//! find the net by either). An unbound input that a composite exports is reported as the
//! composite's.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::fastmap::{FastMap, FastSet};
use std::fmt::Write as _;

use super::{good_path, Endpoint, Netlist};
use crate::error::ElabError;
use crate::port::{Dir, PortDecl, Shape};

/// A composite: its declared ports and, per port, the children's endpoints standing for it.
pub(super) struct Composite {
    pub(super) path: String,
    pub(super) kind: String,
    pub(super) ports: Vec<PortDecl>,
    pub(super) inner: Vec<Vec<Endpoint>>,
}

/// What `hwsim netlist --dot` draws.
#[derive(Clone, Debug, Default)]
pub struct DotOptions {
    /// Draw only what lies under this path (and, dashed, the blocks bound to it from outside).
    pub scope: Option<String>,
    /// Collapse everything more than this many path levels below the scope (or the top) into
    /// one box per path at that depth.
    pub depth: Option<usize>,
}

impl Netlist {
    /// Adds a composite at `path` of kind `kind` with the ports it shows outside. Its children
    /// are added with paths under it; each port is then [exported](Self::export).
    pub fn add_composite(&mut self, path: &str, kind: &str, ports: Vec<PortDecl>) -> Result<(), ElabError> {
        if !good_path(path) {
            return Err(ElabError::BadName { name: path.to_string() });
        }
        if self.by_path.contains_key(path) || self.comp_by_path.contains_key(path) {
            return Err(ElabError::DuplicateInstance { path: path.to_string() });
        }
        let mut seen = FastSet::default();
        for p in &ports {
            if !seen.insert(p.name.as_str()) {
                return Err(ElabError::Build {
                    instance: path.to_string(),
                    message: format!("kind {kind} declares port `{}` twice", p.name),
                });
            }
        }
        let n = ports.len();
        let c = self.comps.len();
        self.comp_by_path.insert(path.to_string(), c);
        for (p, d) in ports.iter().enumerate() {
            // A name two composites give (`a.b` + `c`, `a` + `b.c`) is the longer path's.
            let name = super::dotted(path, &d.name);
            match self.comp_ports.get(&name) {
                Some(&(other, _)) if self.comps[other as usize].path.len() > path.len() => {}
                _ => {
                    self.comp_ports.insert(name, (c as u32, p as u32));
                }
            }
        }
        self.comps.push(Composite {
            path: path.to_string(),
            kind: kind.to_string(),
            ports,
            inner: vec![Vec::new(); n],
        });
        Ok(())
    }

    /// Whether `path` is a composite.
    pub fn is_composite(&self, path: &str) -> bool {
        self.comp_by_path.contains_key(path)
    }

    /// The composite port `endpoint` names, if any: (composite, port index). The longest
    /// composite path that has the rest as a port wins (port names may hold dots).
    pub(super) fn composite_port(&self, endpoint: &str) -> Option<(usize, usize)> {
        // One lookup of the whole name (it was one per dot, each a hash of a prefix, for every
        // endpoint an export or a binding named).
        self.comp_ports.get(endpoint).map(|&(c, p)| (c as usize, p as usize))
    }

    /// Says that composite port `outer` (`composite.port`) stands for `inner` (a child's port or
    /// a nested composite's). Direction, value type, shape and timing must agree; an output
    /// stands for exactly one driver, a stream input for one consumer, a signal input for any
    /// number of readers.
    pub fn export(&mut self, outer: &str, inner: &str) -> Result<(), ElabError> {
        let Some((c, p)) = self.composite_port(outer) else {
            return Err(ElabError::BadEndpoint {
                endpoint: outer.to_string(),
            });
        };
        let targets = self.resolve_all(inner)?;
        let od = &self.comps[c].ports[p];
        for &t in &targets {
            let (_, id) = self.port_at(t);
            if id.dir != od.dir || id.type_id != od.type_id || id.shape != od.shape || id.timing != od.timing {
                return Err(ElabError::TypeMismatch {
                    from: outer.to_string(),
                    from_type: format!("{:?} {}", od.dir, od.describe()),
                    to: inner.to_string(),
                    to_type: format!("{:?} {}", id.dir, id.describe()),
                });
            }
        }
        let one = od.dir == Dir::Out || od.shape == Shape::Stream;
        let have = &mut self.comps[c].inner[p];
        if one && have.len() + targets.len() > 1 {
            return Err(ElabError::Build {
                instance: self.comps[c].path.clone(),
                message: format!("port `{outer}` is exported twice (an output or a stream input stands for one port)"),
            });
        }
        have.extend(&targets);
        for t in targets {
            // Exports are made inside out, so the last name given is the outermost.
            self.outer_name.entry(t).or_default().push(outer.to_string());
        }
        Ok(())
    }

    /// The declaration of the port `endpoint` names: an instance's, or a composite's.
    pub fn decl_of(&self, endpoint: &str) -> Result<&PortDecl, ElabError> {
        match self.composite_port(endpoint) {
            Some((c, p)) => Ok(&self.comps[c].ports[p]),
            None => self.resolve(endpoint).map(|e| self.port_at(e).1),
        }
    }

    /// The leaf endpoints `endpoint` stands for: itself (an instance's port), or what a
    /// composite port is exported to.
    pub(super) fn resolve_all(&self, endpoint: &str) -> Result<Vec<Endpoint>, ElabError> {
        match self.composite_port(endpoint) {
            Some((c, p)) => {
                let inner = &self.comps[c].inner[p];
                if inner.is_empty() {
                    return Err(ElabError::Build {
                        instance: self.comps[c].path.clone(),
                        message: format!(
                            "kind {} does not export its port `{}`",
                            self.comps[c].kind, self.comps[c].ports[p].name
                        ),
                    });
                }
                Ok(inner.clone())
            }
            None => self.resolve(endpoint).map(|e| vec![e]),
        }
    }

    /// The name under which the net of leaf output `e` is known: its outermost export, else the
    /// endpoint itself.
    pub(super) fn net_name(&self, e: Endpoint) -> String {
        self.outer_name
            .get(&e)
            .and_then(|v| v.last())
            .cloned()
            .unwrap_or_else(|| self.endpoint(e))
    }

    /// For a leaf port a composite exports: (composite path, kind, port name) of the
    /// outermost, to report it unbound as the user wrote it.
    pub(super) fn outer_input(&self, e: Endpoint) -> Option<(String, String, String)> {
        let outer = self.outer_name.get(&e)?.last()?;
        let (c, p) = self.composite_port(outer)?;
        let comp = &self.comps[c];
        Some((comp.path.clone(), comp.kind.clone(), comp.ports[p].name.clone()))
    }

    /// (alias, net, indexed) triples that make every composite port findable as a net and
    /// traced under its name: an exported input by the net its child input reads, a child's
    /// exported output by the outer name the net carries (and the child's and the inner
    /// composites' names). `net_of` gives a leaf port's net. An input exported to several
    /// children whose nets differ (unbound, each its own constant) is traced under its name on
    /// each, and found by it on the first child's by path: only that one is `indexed`. No
    /// other alias is given twice (a composite port stands for one output, and a child's name
    /// is not a composite's), so the order of the triples does not matter. The names move out
    /// of the netlist (their last use).
    pub(super) fn take_export_aliases(&mut self, net_of: impl Fn(Endpoint) -> Option<u32>) -> Vec<(String, u32, bool)> {
        // The first child, by path, of each input exported to several.
        let mut first: FastMap<String, Endpoint> = FastMap::default();
        for comp in &self.comps {
            for (p, inner) in comp.inner.iter().enumerate() {
                let d = &comp.ports[p];
                if d.dir != Dir::In || inner.len() < 2 {
                    continue;
                }
                let by_path = |e: &&Endpoint| {
                    let (path, d) = self.port_at(**e);
                    path.bytes()
                        .chain(std::iter::once(b'.'))
                        .chain(d.name.bytes())
                        .collect::<Vec<u8>>()
                };
                if let Some(&e) = inner.iter().min_by_key(by_path) {
                    first.insert(super::dotted(&comp.path, &d.name), e);
                }
            }
        }
        let mut v: Vec<(String, u32, bool)> = Vec::new();
        for (leaf, mut names) in std::mem::take(&mut self.outer_name) {
            let Some(net) = net_of(leaf) else { continue };
            if names.is_empty() {
                continue;
            }
            match self.port_at(leaf).1.dir {
                Dir::In => v.extend(names.into_iter().map(|n| {
                    let indexed = first.get(&n).is_none_or(|&e| e == leaf);
                    (n, net, indexed)
                })),
                Dir::Out => {
                    // The net carries the outermost name; the child's and the inner
                    // composites' names find it too.
                    names.pop();
                    v.push((self.endpoint(leaf), net, true));
                    v.extend(names.into_iter().map(|n| (n, net, true)));
                }
            }
        }
        v
    }

    /// Every instance as (path, kind): the blocks in the order they were added, then the
    /// composites (a system's monitors bind to counters by the kind that declares them).
    pub fn instance_kinds(&self) -> Vec<(String, String)> {
        self.insts
            .iter()
            .map(|i| (i.path.clone(), i.kind.clone()))
            .chain(self.comps.iter().map(|c| (c.path.clone(), c.kind.clone())))
            .collect()
    }

    /// The paths of every port declared a level ([`PortDecl::level`]), blocks' and composites'
    /// alike: a composite's port is the name its net is also traced under, and a view may name
    /// either.
    pub fn level_paths(&self) -> Vec<String> {
        let of = |path: &str, ports: &[PortDecl]| -> Vec<String> {
            ports
                .iter()
                .filter(|d| d.level)
                .map(|d| super::dotted(path, &d.name))
                .collect()
        };
        self.insts
            .iter()
            .flat_map(|i| of(&i.path, &i.ports))
            .chain(self.comps.iter().flat_map(|c| of(&c.path, &c.ports)))
            .collect()
    }

    /// Instances per kind (composites counted under their kind too), sorted by kind.
    pub fn kind_counts(&self) -> BTreeMap<String, (usize, bool)> {
        let mut m: BTreeMap<String, (usize, bool)> = BTreeMap::new();
        for i in &self.insts {
            m.entry(i.kind.clone()).or_insert((0, false)).0 += 1;
        }
        for c in &self.comps {
            let e = m.entry(c.kind.clone()).or_insert((0, true));
            e.0 += 1;
            e.1 = true;
        }
        m
    }

    /// Graphviz DOT of the netlist: instances as boxes inside one cluster per composite, one
    /// edge per binding labelled `out → in : type` (bold when combinational); see
    /// [`DotOptions`] for a scope and a depth.
    pub fn to_dot_with(&self, opts: &DotOptions) -> String {
        let scope = opts.scope.as_deref().unwrap_or("");
        let under = |p: &str| scope.is_empty() || p == scope || p.starts_with(&format!("{scope}."));
        let base = if scope.is_empty() { 0 } else { scope.split('.').count() };
        // The box a leaf is drawn in: its path cut at the depth.
        let boxed = |p: &str| -> String {
            match opts.depth {
                Some(d) => p.split('.').take(base + d.max(1)).collect::<Vec<_>>().join("."),
                None => p.to_string(),
            }
        };
        let mut boxes: BTreeMap<String, String> = BTreeMap::new();
        let mut outside: BTreeSet<String> = BTreeSet::new();
        let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        for inst in &self.insts {
            if under(&inst.path) {
                let b = boxed(&inst.path);
                let label = if b == inst.path {
                    format!("{}\\n({})", inst.path, inst.kind)
                } else {
                    self.box_label(&b)
                };
                boxes.insert(b, label);
            }
        }
        for b in &self.binds {
            let (fp, tp) = (&self.insts[b.from.0].path, &self.insts[b.to.0].path);
            let (fi, ti) = (under(fp), under(tp));
            if !fi && !ti {
                continue;
            }
            let f = if fi { boxed(fp) } else { fp.clone() };
            let t = if ti { boxed(tp) } else { tp.clone() };
            if !fi {
                outside.insert(f.clone());
            }
            if !ti {
                outside.insert(t.clone());
            }
            if f == t {
                continue;
            }
            let fd = &self.insts[b.from.0].ports[b.from.1];
            let td = &self.insts[b.to.0].ports[b.to.1];
            let comb = if fd.timing == crate::port::Timing::Comb {
                "comb "
            } else {
                ""
            };
            edges
                .entry((f, t))
                .or_default()
                .push(format!("{} → {} : {comb}{}", fd.name, td.name, fd.type_name));
        }
        let ids: HashMap<&str, usize> = boxes
            .keys()
            .chain(outside.iter())
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let mut s = String::from("digraph netlist {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n");
        // Clusters: the composites under the scope, nested by path.
        let clusters: Vec<&str> = self
            .comps
            .iter()
            .map(|c| c.path.as_str())
            .filter(|p| under(p) && opts.depth.is_none_or(|d| p.split('.').count() < base + d.max(1)))
            .collect();
        self.write_clusters(&mut s, "", &clusters, &boxes, &ids, 1);
        for o in &outside {
            let _ = writeln!(s, "  n{} [label=\"{o}\", style=dashed];", ids[o.as_str()]);
        }
        for ((f, t), labels) in &edges {
            let bold = labels.iter().any(|l| l.contains(": comb "));
            let label = if labels.len() > 4 {
                format!("{} bindings", labels.len())
            } else {
                labels.join("\\n")
            };
            let style = if bold { ", style=bold" } else { "" };
            let _ = writeln!(
                s,
                "  n{} -> n{} [label=\"{label}\"{style}];",
                ids[f.as_str()],
                ids[t.as_str()]
            );
        }
        s.push_str("}\n");
        s
    }

    /// The label of a box standing for a path cut at the depth: the composite's kind, or the
    /// number of blocks under it.
    fn box_label(&self, b: &str) -> String {
        match self.comp_by_path.get(b) {
            Some(&c) => format!("{b}\\n({})", self.comps[c].kind),
            None => {
                let n = self
                    .insts
                    .iter()
                    .filter(|i| i.path.starts_with(&format!("{b}.")))
                    .count();
                format!("{b}\\n({n} blocks)")
            }
        }
    }

    /// Writes the boxes directly under `parent` (all top-level ones for ""), with a
    /// `subgraph cluster_…` per composite holding its own.
    fn write_clusters(
        &self,
        s: &mut String,
        parent: &str,
        clusters: &[&str],
        boxes: &BTreeMap<String, String>,
        ids: &HashMap<&str, usize>,
        indent: usize,
    ) {
        let pad = "  ".repeat(indent);
        let inside = |p: &str, c: &str| p.len() > c.len() && p.starts_with(c) && p.as_bytes()[c.len()] == b'.';
        let owner = |p: &str| -> &str {
            clusters
                .iter()
                .filter(|c| inside(p, c))
                .max_by_key(|c| c.len())
                .copied()
                .unwrap_or("")
        };
        for c in clusters.iter().filter(|c| owner(c) == parent) {
            let id = c.replace(['.', '-'], "_");
            let kind = self.comp_by_path.get(*c).map_or("", |&i| self.comps[i].kind.as_str());
            let _ = writeln!(s, "{pad}subgraph cluster_{id} {{\n{pad}  label=\"{c} ({kind})\";");
            self.write_clusters(s, c, clusters, boxes, ids, indent + 1);
            let _ = writeln!(s, "{pad}}}");
        }
        for (b, label) in boxes.iter().filter(|(b, _)| owner(b) == parent) {
            let _ = writeln!(s, "{pad}n{} [label=\"{label}\"];", ids[b.as_str()]);
        }
    }
}
