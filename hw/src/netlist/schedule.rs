//! The static schedule of a netlist: the level of each instance over its combinational
//! bindings (a topological order of those edges), and the loop error when there is none.

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::Netlist;
use crate::error::ElabError;
use crate::port::Timing;

impl Netlist {
    /// The static schedule: per instance, the length of the longest chain of combinational
    /// bindings ending at it (0 without a combinational input; outputs driven from state do not
    /// count). A ring of combinational bindings is refused, naming every binding on it in order.
    pub(super) fn levels(&self) -> Result<Vec<u32>, ElabError> {
        let n = self.insts.len();
        let mut g: DiGraph<(), usize> = DiGraph::with_capacity(n, 0);
        for _ in 0..n {
            g.add_node(());
        }
        for (k, b) in self.binds.iter().enumerate() {
            let d = &self.insts[b.from.0].ports[b.from.1];
            // An output driven from state is ready before any tick: it orders nothing.
            if d.timing == Timing::Comb && !d.from_state {
                g.add_edge(NodeIndex::new(b.from.0), NodeIndex::new(b.to.0), k);
            }
        }
        let mut levels = vec![0u32; n];
        if g.edge_count() == 0 {
            return Ok(levels);
        }
        let order = petgraph::algo::toposort(&g, None).map_err(|cycle| self.comb_loop(&g, cycle.node_id()))?;
        for v in order {
            let l = levels[v.index()];
            for e in g.edges(v) {
                let t = e.target().index();
                levels[t] = levels[t].max(l + 1);
            }
        }
        Ok(levels)
    }

    /// The combinational loop through `start`: the shortest ring of bindings from it back to it
    /// (breadth first, so the message names the tightest loop), as driver → reader endpoints.
    fn comb_loop(&self, g: &DiGraph<(), usize>, start: NodeIndex) -> ElabError {
        let mut via: HashMap<NodeIndex, usize> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        'search: while let Some(v) = queue.pop_front() {
            // Bindings in the order they were made, so the message does not depend on petgraph's
            // edge order.
            let mut out: Vec<(usize, NodeIndex)> = g.edges(v).map(|e| (*e.weight(), e.target())).collect();
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
        // `start` is on a cycle (toposort said so), so the search closes it.
        let mut k = closing.expect("a node on a cycle reaches itself");
        let mut ring = Vec::new();
        loop {
            ring.push(k);
            let from = NodeIndex::new(self.binds[k].from.0);
            if from == start {
                break;
            }
            k = via[&from];
        }
        ring.reverse();
        // Start the ring at the instance created first, so the message reads the same whichever
        // instance the search began from.
        let first = (0..ring.len()).min_by_key(|&h| self.binds[ring[h]].from.0).unwrap_or(0);
        ring.rotate_left(first);
        let hops = ring
            .iter()
            .map(|&k| (self.endpoint(self.binds[k].from), self.endpoint(self.binds[k].to)))
            .collect();
        ElabError::CombLoop { hops }
    }
}
