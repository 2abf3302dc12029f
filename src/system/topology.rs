//! Topology and routes: the chip graph of a system testbench (p2p, mesh, ring, torus, custom) as
//! a deterministic edge list, and shortest-path routes over it (petgraph).

use std::collections::BTreeSet;

use petgraph::graph::{NodeIndex, UnGraph};

use crate::schema::System;
use crate::testbench::Loaded;
use crate::yaml::InputError;

/// Edges of the topology as chip pairs, each once, in a deterministic order.
pub(super) fn edges(l: &Loaded, s: &System) -> Result<(u16, Vec<(u16, u16)>), InputError> {
    let t = &s.topology;
    let n = t.chips;
    if !(2..=4096).contains(&n) {
        return Err(l.error_at("chips", format!("topology: chips {n} out of range 2..=4096")));
    }
    if t.switches > 0 {
        return Err(l.error_at(
            "switches",
            "topologies with L2 switches need the switch model, which this build does not have yet",
        ));
    }
    let n16 = n as u16;
    let mut e: Vec<(u16, u16)> = Vec::new();
    match t.kind.as_str() {
        "p2p" => {
            if n != 2 {
                return Err(l.error_at("p2p", format!("topology p2p has exactly 2 chips, not {n}")));
            }
            e.push((0, 1));
        }
        "mesh" => {
            for a in 0..n16 {
                for b in a + 1..n16 {
                    e.push((a, b));
                }
            }
        }
        "ring" => {
            for a in 0..n16 {
                let b = (a + 1) % n16;
                if n == 2 && a == 1 {
                    break;
                }
                e.push((a.min(b), a.max(b)));
            }
        }
        "torus" => {
            let dims = &t.dims;
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
            e.extend(set);
        }
        "custom" => {
            if t.links.is_empty() {
                return Err(l.error_at("custom", "topology custom: give its `links: [[chip0, chip1], …]`"));
            }
            for [a, b] in &t.links {
                let parse = |s: &str| -> Result<u16, InputError> {
                    s.strip_prefix("chip")
                        .and_then(|x| x.parse::<u16>().ok())
                        .filter(|&c| c < n16)
                        .ok_or_else(|| l.error_at(s, format!("link endpoint `{s}`: expected chip0..chip{}", n - 1)))
                };
                let (a, b) = (parse(a)?, parse(b)?);
                if a == b {
                    return Err(l.error_at("links", format!("link chip{a}–chip{a} loops back")));
                }
                e.push((a.min(b), a.max(b)));
            }
            e.sort_unstable();
            e.dedup();
        }
        other => {
            return Err(l.error_at(
                other,
                format!("unknown topology `{other}` (p2p, mesh, ring, torus, custom)"),
            ));
        }
    }
    Ok((n16, e))
}

/// Next-hop edge index per (chip, destination): shortest paths over the topology graph; ties
/// go to the lowest edge index.
pub(super) fn routes(n: u16, e: &[(u16, u16)], per_chip: &[Vec<(u16, usize)>]) -> Vec<Vec<Option<u32>>> {
    let mut g: UnGraph<u16, ()> = UnGraph::new_undirected();
    let nodes: Vec<NodeIndex> = (0..n).map(|c| g.add_node(c)).collect();
    for &(a, b) in e {
        g.add_edge(nodes[a as usize], nodes[b as usize], ());
    }
    let mut r = vec![vec![None; n as usize]; n as usize];
    for d in 0..n {
        let dist = petgraph::algo::dijkstra(&g, nodes[d as usize], None, |_| 1u32);
        for c in 0..n {
            if c == d {
                continue;
            }
            let Some(&dc) = dist.get(&nodes[c as usize]) else {
                continue;
            };
            // The first edge (in the chip's edge order) to a neighbour one step closer.
            r[c as usize][d as usize] = per_chip[c as usize]
                .iter()
                .enumerate()
                .find(|(_, (nb, _))| dist.get(&nodes[*nb as usize]).is_some_and(|&x| x + 1 == dc))
                .map(|(i, _)| i as u32);
        }
    }
    r
}
