//! Topology and routes: the graph of a system testbench (p2p, mesh, ring, torus, star,
//! leaf_spine, custom) as a deterministic edge list over nodes — chips 0..n, then switches
//! n..n+s — and shortest-path routes over it (petgraph): for every node and destination chip,
//! every neighbour one hop closer (the equal-cost next hops a switch spreads flows over, ECMP;
//! a chip's router takes the first).
//!
//! `leaf_spine` with L leaves and S spines: leaves are `sw0..sw{L-1}`, spines `sw{L}..`; chip c
//! sits on leaf ⌊c·L/n⌋ (the chips spread evenly, in order), and every leaf links to every spine.

use std::collections::BTreeSet;

use petgraph::graph::{NodeIndex, UnGraph};

use crate::build::testbench::Loaded;
use crate::input::schema::{System, Topology};
use crate::input::yaml::InputError;

/// A node's name: `chip{c}` for c < n, else `sw{j}`.
pub(super) fn node_name(n: u16, id: u16) -> String {
    if id < n {
        format!("chip{id}")
    } else {
        format!("sw{}", id - n)
    }
}

/// The node a name (`chip3`, `sw0`) stands for, if it exists among n chips and `sw` switches.
pub(super) fn parse_node(name: &str, n: u16, sw: u16) -> Option<u16> {
    if let Some(c) = name.strip_prefix("chip").and_then(|x| x.parse::<u16>().ok()) {
        return (c < n).then_some(c);
    }
    let j = name.strip_prefix("sw").and_then(|x| x.parse::<u16>().ok())?;
    (j < sw).then_some(n + j)
}

/// A topology: (chips, switches, edges as node pairs).
pub(super) type Graph = (u16, u16, Vec<(u16, u16)>);

/// An error at `key` if the testbench sets it, else (a field left out, so 0) at the topology.
fn at_or(l: &Loaded, key: &str, msg: String) -> InputError {
    let e = l.error_at(key, msg.clone());
    if e.line.is_some() {
        return e;
    }
    l.error_at("topology", format!("{msg} (`{key}` is required)"))
}

/// Edges of the topology as node pairs, each once, in a deterministic order.
pub(super) fn edges(l: &Loaded, s: &System) -> Result<Graph, InputError> {
    let t = &s.topology;
    let n = t.chips;
    if !(2..=4096).contains(&n) {
        return Err(l.error_at("chips", format!("topology: chips {n} out of range 2..=4096")));
    }
    if t.kind != "leaf_spine" && (t.leaves > 0 || t.spines > 0) {
        return Err(l.error_at(
            if t.leaves > 0 { "leaves" } else { "spines" },
            "leaves and spines go with the `leaf_spine` topology",
        ));
    }
    let sw = switches(l, t)?;
    if sw > 0 && n > 64 && t.kind != "leaf_spine" {
        return Err(l.error_at("chips", format!("a switch has at most 64 ports: {n} chips")));
    }
    let n16 = n as u16;
    let e = match t.kind.as_str() {
        "p2p" => {
            if n != 2 {
                return Err(l.error_at("p2p", format!("topology p2p has exactly 2 chips, not {n}")));
            }
            vec![(0, 1)]
        }
        "mesh" => (0..n16).flat_map(|a| (a + 1..n16).map(move |b| (a, b))).collect(),
        "ring" => {
            let mut e = Vec::new();
            for a in 0..n16 {
                let b = (a + 1) % n16;
                if n == 2 && a == 1 {
                    break;
                }
                e.push((a.min(b), a.max(b)));
            }
            e
        }
        "torus" => torus(l, t)?,
        "star" => (0..n16).map(|c| (c, n16)).collect(),
        "leaf_spine" => leaf_spine(t),
        "custom" => custom(l, t, sw)?,
        other => {
            return Err(l.error_at(
                other,
                format!("unknown topology `{other}` (p2p, mesh, ring, torus, star, leaf_spine, custom)"),
            ));
        }
    };
    Ok((n16, sw, e))
}

/// The switches a topology has: a star's one, a leaf/spine's leaves and spines (checked
/// against the chips and the 64 ports of a switch), a custom topology's `switches`.
fn switches(l: &Loaded, t: &Topology) -> Result<u16, InputError> {
    let n = t.chips;
    Ok(match t.kind.as_str() {
        // A star has one switch in the middle (`switches` may say so or be left out).
        "star" if t.switches <= 1 => 1u16,
        "star" => return Err(l.error_at("switches", format!("star: one switch, not {}", t.switches))),
        "leaf_spine" => {
            if !(1..=64).contains(&t.leaves) {
                return Err(at_or(
                    l,
                    "leaves",
                    format!("leaf_spine: leaves {} out of range 1..=64", t.leaves),
                ));
            }
            if !(1..=64).contains(&t.spines) {
                return Err(at_or(
                    l,
                    "spines",
                    format!("leaf_spine: spines {} out of range 1..=64", t.spines),
                ));
            }
            if t.switches != 0 && t.switches != t.leaves + t.spines {
                return Err(l.error_at(
                    "switches",
                    format!(
                        "leaf_spine: switches is leaves + spines ({}), not {}",
                        t.leaves + t.spines,
                        t.switches
                    ),
                ));
            }
            if t.leaves > n {
                return Err(l.error_at("leaves", format!("leaf_spine: {} leaves for {n} chips", t.leaves)));
            }
            let per_leaf = n.div_ceil(t.leaves);
            if per_leaf + t.spines > 64 {
                return Err(l.error_at(
                    "leaves",
                    format!(
                        "leaf_spine: a leaf would have {per_leaf} chips + {} spines > 64 ports",
                        t.spines
                    ),
                ));
            }
            (t.leaves + t.spines) as u16
        }
        "custom" if t.switches <= 64 => t.switches as u16,
        "custom" => return Err(l.error_at("switches", format!("switches {} out of range 0..=64", t.switches))),
        _ if t.switches > 0 => {
            return Err(l.error_at("switches", "switches go with `star` or `custom` topologies"));
        }
        _ => 0,
    })
}

/// A 2-D torus of `dims` [x, y]: each chip to its right and lower neighbour, wrapping.
fn torus(l: &Loaded, t: &Topology) -> Result<Vec<(u16, u16)>, InputError> {
    let (n, dims) = (t.chips, &t.dims);
    if dims.len() != 2 || dims[0].checked_mul(dims[1]) != Some(n) || dims.iter().any(|&d| d < 2) {
        return Err(l.error_at(
            if t.dims.is_empty() { "torus" } else { "dims" },
            format!("torus: dims {dims:?} must be [x, y] with x·y = chips ({n}), each ≥ 2"),
        ));
    }
    let (x, y) = (dims[0] as u16, dims[1] as u16);
    let mut set = BTreeSet::new();
    for j in 0..y {
        for i in 0..x {
            let c = j * x + i;
            for d in [j * x + (i + 1) % x, ((j + 1) % y) * x + i] {
                if d != c {
                    set.insert((c.min(d), c.max(d)));
                }
            }
        }
    }
    Ok(set.into_iter().collect())
}

/// Leaf/spine: each chip to its leaf (chips spread evenly over the leaves), every leaf to every
/// spine.
fn leaf_spine(t: &Topology) -> Vec<(u16, u16)> {
    let (n, n16) = (t.chips, t.chips as u16);
    let (nl, ns) = (t.leaves as u16, t.spines as u16);
    let mut e = Vec::new();
    for c in 0..n16 {
        e.push((c, n16 + (c as u32 * nl as u32 / n) as u16));
    }
    for lf in 0..nl {
        for sp in 0..ns {
            e.push((n16 + lf, n16 + nl + sp));
        }
    }
    e
}

/// A custom topology: its `links` between chips and switches, each once, sorted.
fn custom(l: &Loaded, t: &Topology, sw: u16) -> Result<Vec<(u16, u16)>, InputError> {
    let (n, n16) = (t.chips, t.chips as u16);
    if t.links.is_empty() {
        return Err(l.error_at("custom", "topology custom: give its `links: [[chip0, chip1], …]`"));
    }
    let mut e = Vec::new();
    for [a, b] in &t.links {
        let parse = |s: &str| -> Result<u16, InputError> {
            parse_node(s, n16, sw).ok_or_else(|| {
                l.error_at(
                    s,
                    format!("link endpoint `{s}`: expected chip0..chip{} or a switch sw0..", n - 1),
                )
            })
        };
        let (a, b) = (parse(a)?, parse(b)?);
        if a == b {
            return Err(l.error_at("links", format!("link {} loops back", node_name(n16, a))));
        }
        e.push((a.min(b), a.max(b)));
    }
    e.sort_unstable();
    e.dedup();
    Ok(e)
}

/// Next hops per (node, destination chip): the node's edge indices (in its edge order) to every
/// neighbour one step closer on a shortest path over the topology graph of `total` nodes (chips
/// first); empty when unreachable.
pub(super) fn routes(total: u16, chips: u16, e: &[(u16, u16)], per_chip: &[Vec<(u16, usize)>]) -> Vec<Vec<Vec<u32>>> {
    let n = total;
    let mut g: UnGraph<u16, ()> = UnGraph::new_undirected();
    let nodes: Vec<NodeIndex> = (0..n).map(|c| g.add_node(c)).collect();
    for &(a, b) in e {
        g.add_edge(nodes[a as usize], nodes[b as usize], ());
    }
    let mut r = vec![vec![Vec::new(); chips as usize]; n as usize];
    for d in 0..chips {
        let dist = petgraph::algo::dijkstra(&g, nodes[d as usize], None, |_| 1u32);
        for c in 0..n {
            if c == d {
                continue;
            }
            let Some(&dc) = dist.get(&nodes[c as usize]) else {
                continue;
            };
            // Every edge (in the node's edge order) to a neighbour one step closer.
            r[c as usize][d as usize] = per_chip[c as usize]
                .iter()
                .enumerate()
                .filter(|(_, (nb, _))| dist.get(&nodes[*nb as usize]).is_some_and(|&x| x + 1 == dc))
                .map(|(i, _)| i as u32)
                .collect();
        }
    }
    r
}

/// One node's share of a multicast tree: whether it is a member (the copy is delivered here)
/// and the edges (in the node's edge order) a copy leaves on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct McastHop {
    pub local: bool,
    pub edges: Vec<u32>,
}

/// The multicast trees, per node and group: for each group (source, members), the union of the
/// unicast paths from the source to every member (the first equal-cost next hop at each node,
/// so the tree is the one unicast routing would take, and no edge carries a group's frame
/// twice). Each node of a path forwards on its edge of the path; each member delivers locally.
pub(super) fn mcast_trees(
    groups: &[(u16, Vec<u16>)],
    route: &[Vec<Vec<u32>>],
    per_chip: &[Vec<(u16, usize)>],
) -> Vec<Vec<McastHop>> {
    let mut t = vec![vec![McastHop::default(); groups.len()]; per_chip.len()];
    for (g, (src, members)) in groups.iter().enumerate() {
        for &m in members {
            let mut x = *src;
            // A shortest path has fewer hops than nodes; the bound only guards the loop.
            for _ in 0..per_chip.len() {
                if x == m {
                    break;
                }
                let Some(&e) = route[x as usize][m as usize].first() else {
                    break;
                };
                let hop = &mut t[x as usize][g];
                if !hop.edges.contains(&e) {
                    hop.edges.push(e);
                }
                x = per_chip[x as usize][e as usize].0;
            }
            t[m as usize][g].local = true;
        }
    }
    t
}
