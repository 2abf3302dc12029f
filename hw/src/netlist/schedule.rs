//! The static schedule of a netlist: the kernel's units (entries: a process of an instance),
//! the level of each over the combinational bindings and the order of a block's processes (a
//! topological order of those edges), and the loop error when there is none.

use crate::fastmap::FastMap;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::Netlist;
use crate::error::ElabError;
use crate::port::Timing;

/// The kernel's units: one entry per process of each instance, the processes of an instance
/// numbered consecutively (so an instance with one process, the usual case, is one entry and
/// a netlist without several-process blocks has entry = instance).
pub(super) struct Entries {
    /// Per instance: its first entry.
    base: Vec<u32>,
    /// Per entry: its instance and process.
    pub(super) block: Vec<u32>,
    pub(super) process: Vec<u32>,
}

impl Entries {
    /// The entry of process `p` of instance `i`.
    pub(super) fn of(&self, i: usize, p: u8) -> u32 {
        self.base[i] + p as u32
    }
}

/// An edge of the schedule graph: a combinational binding, or the order between two
/// consecutive processes of a block (from the entry of the earlier one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Hop {
    Bind(usize),
    Order(u32),
}

impl Netlist {
    /// The entries: per instance, as many as the highest process its ports name, plus one.
    pub(super) fn entries(&self) -> Entries {
        let mut e = Entries {
            base: Vec::with_capacity(self.insts.len()),
            block: Vec::with_capacity(self.insts.len()),
            process: Vec::with_capacity(self.insts.len()),
        };
        for (i, inst) in self.insts.iter().enumerate() {
            e.base.push(e.block.len() as u32);
            let n = inst.ports.iter().map(|d| d.process).max().unwrap_or(0) as u32 + 1;
            for p in 0..n {
                e.block.push(i as u32);
                e.process.push(p);
            }
        }
        e
    }

    /// The static schedule: per entry, the length of the longest chain of combinational
    /// bindings and process orders ending at it (0 without a combinational input; outputs
    /// driven from state do not count; process p + 1 of a block comes after process p). A ring
    /// is refused, naming every binding (and process order) on it in order.
    pub(super) fn levels(&self, entries: &Entries) -> Result<Vec<u32>, ElabError> {
        let n = entries.block.len();
        let mut g: DiGraph<(), Hop> = DiGraph::with_capacity(n, 0);
        for _ in 0..n {
            g.add_node(());
        }
        for (k, b) in self.binds.iter().enumerate() {
            let d = &self.insts[b.from.0].ports[b.from.1];
            if d.timing == Timing::Comb {
                let to = self.insts[b.to.0].ports[b.to.1].process;
                g.add_edge(
                    NodeIndex::new(entries.of(b.from.0, d.process) as usize),
                    NodeIndex::new(entries.of(b.to.0, to) as usize),
                    Hop::Bind(k),
                );
            }
        }
        for e in 1..n {
            if entries.block[e] == entries.block[e - 1] {
                g.add_edge(NodeIndex::new(e - 1), NodeIndex::new(e), Hop::Order(e as u32 - 1));
            }
        }
        let mut levels = vec![0u32; n];
        if g.edge_count() == 0 {
            return Ok(levels);
        }
        let order = petgraph::algo::toposort(&g, None).map_err(|cycle| self.comb_loop(&g, entries, cycle.node_id()))?;
        for v in order {
            let l = levels[v.index()];
            for e in g.edges(v) {
                let t = e.target().index();
                levels[t] = levels[t].max(l + 1);
            }
        }
        Ok(levels)
    }

    /// The combinational loop through `start`: the shortest ring of edges from it back to it
    /// (breadth first, so the message names the tightest loop), as driver → reader endpoints
    /// (a process order as `instance (process p) → instance (process p + 1)`).
    fn comb_loop(&self, g: &DiGraph<(), Hop>, entries: &Entries, start: NodeIndex) -> ElabError {
        let mut via: FastMap<NodeIndex, Hop> = FastMap::default();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        'search: while let Some(v) = queue.pop_front() {
            // Bindings in the order they were made, so the message does not depend on petgraph's
            // edge order.
            let mut out: Vec<(Hop, NodeIndex)> = g.edges(v).map(|e| (*e.weight(), e.target())).collect();
            out.sort_unstable();
            for (k, t) in out {
                if t == start {
                    closing = Some(k);
                    break 'search;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = via.entry(t) {
                    e.insert(k);
                    queue.push_back(t);
                }
            }
        }
        let source = |h: Hop| match h {
            Hop::Bind(k) => {
                let (i, p) = self.binds[k].from;
                NodeIndex::new(entries.of(i, self.insts[i].ports[p].process) as usize)
            }
            Hop::Order(e) => NodeIndex::new(e as usize),
        };
        // `start` is on a cycle (toposort said so), so the search closes it.
        let mut k = closing.expect("a node on a cycle reaches itself");
        let mut ring = Vec::new();
        loop {
            ring.push(k);
            let from = source(k);
            if from == start {
                break;
            }
            k = via[&from];
        }
        ring.reverse();
        // Start the ring at the instance created first, so the message reads the same whichever
        // instance the search began from.
        let first = (0..ring.len()).min_by_key(|&h| source(ring[h]).index()).unwrap_or(0);
        ring.rotate_left(first);
        let process = |e: usize| {
            let path = &self.insts[entries.block[e] as usize].path;
            format!("{path} (process {})", entries.process[e])
        };
        let hops = ring
            .iter()
            .map(|&h| match h {
                Hop::Bind(k) => (self.endpoint(self.binds[k].from), self.endpoint(self.binds[k].to)),
                Hop::Order(e) => (process(e as usize), process(e as usize + 1)),
            })
            .collect();
        ElabError::CombLoop { hops }
    }
}
