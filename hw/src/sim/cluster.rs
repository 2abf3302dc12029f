//! Same-cycle clusters: the kernel's scheduling entries of a netlist with combinational
//! bindings or blocks of several processes.
//!
//! A cluster is a set of processes tied by same-cycle edges (a combinational binding, or the
//! order of two processes of one block), closed under them: the weakly connected components of
//! the schedule graph. Its members are ordered once, at elaboration, by their level (a
//! topological order of those edges). At run time the kernel queues clusters, not processes:
//! a process due in a cycle (its input changed, its time came, or another process of its block
//! handed it work) stamps itself and queues its cluster once; running a cluster walks its
//! members in their fixed order and runs those stamped for the cycle, skipping the others with
//! one compare. A combinational write stamps its readers, which come later in the same walk. So
//! a boundary inside a cluster costs a stamp and a compare, not a trip through the scheduler's
//! lists (as Verilator orders the flattened netlist once and keeps the hierarchy for names).
//!
//! Most clusters have one member (a block of one process with no combinational neighbour): the
//! walk is then the member alone.

use super::lists::IdList;
use crate::net::NetShared;
use crate::Cycle;

/// An entry as the walk needs it, in one load: its block, its process, and how many processes
/// its block has (a request naming another is refused).
#[derive(Clone, Copy, Debug)]
pub(super) struct EntryInfo {
    pub(super) block: u32,
    pub(super) process: u16,
    pub(super) procs: u16,
}

/// The clusters, their members in order, and the same-cycle readers of the combinational nets.
pub(super) struct Clusters {
    /// Per entry (a process of a block).
    pub(super) info: Vec<EntryInfo>,
    /// Per entry: the cluster it belongs to and its rank (its index in `members`).
    pub(super) unit: Vec<u32>,
    pub(super) rank: Vec<u32>,
    /// Per cluster: `(start, len)` of its members in `members`, in their order.
    pub(super) units: Vec<(u32, u32)>,
    pub(super) members: Vec<u32>,
    /// Per net: the `(start, count)` of its same-cycle readers in `readers` (empty for a
    /// registered net).
    comb_readers: Vec<(u32, u32)>,
    readers: Vec<u32>,
}

/// Union-find root of `x`, halving the path.
fn root(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = parent[x as usize];
    }
    x
}

impl Clusters {
    /// The clusters of entries `0..block.len()`: tied by every combinational net (its writer
    /// and its readers) and by consecutive processes of one block; members ordered by `level`,
    /// then by entry.
    pub(super) fn new(
        block: Vec<u32>,
        process: Vec<u32>,
        level: &[u32],
        net_writer: &[u32],
        net_readers: &[Vec<u32>],
        net_comb: &[bool],
    ) -> Clusters {
        let n = block.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        let join = |parent: &mut Vec<u32>, a: u32, b: u32| {
            let (ra, rb) = (root(parent, a), root(parent, b));
            if ra != rb {
                // The lower entry is the root, so a cluster's id does not depend on the order
                // of the joins.
                let (lo, hi) = (ra.min(rb), ra.max(rb));
                parent[hi as usize] = lo;
            }
        };
        for (net, readers) in net_readers.iter().enumerate() {
            let w = net_writer[net];
            if !net_comb[net] || w == u32::MAX {
                continue;
            }
            for &r in readers {
                join(&mut parent, w, r);
            }
        }
        for e in 1..n {
            if block[e] == block[e - 1] {
                join(&mut parent, e as u32 - 1, e as u32);
            }
        }
        // Clusters numbered by their first entry; members by (level, entry).
        let roots: Vec<u32> = (0..n as u32).map(|e| root(&mut parent, e)).collect();
        let mut id_of_root = vec![u32::MAX; n];
        let mut count = 0u32;
        for &r in &roots {
            if id_of_root[r as usize] == u32::MAX {
                id_of_root[r as usize] = count;
                count += 1;
            }
        }
        let unit: Vec<u32> = roots.iter().map(|&r| id_of_root[r as usize]).collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&e| (unit[e as usize], level[e as usize], e));
        let mut units = vec![(0u32, 0u32); count as usize];
        let mut rank = vec![0u32; n];
        for (i, &e) in order.iter().enumerate() {
            let u = &mut units[unit[e as usize] as usize];
            if u.1 == 0 {
                u.0 = i as u32;
            }
            u.1 += 1;
            rank[e as usize] = i as u32;
        }
        let mut procs = vec![1u32; n];
        let mut e = 0;
        while e < n {
            let mut k = e;
            while k < n && block[k] == block[e] {
                k += 1;
            }
            procs[e..k].fill((k - e) as u32);
            e = k;
        }
        let mut readers = Vec::new();
        let comb_readers = net_readers
            .iter()
            .zip(net_comb)
            .map(|(r, &comb)| {
                let start = readers.len() as u32;
                if comb {
                    readers.extend_from_slice(r);
                }
                (start, readers.len() as u32 - start)
            })
            .collect();
        let info = (0..n)
            .map(|e| EntryInfo {
                block: block[e],
                process: process[e] as u16,
                procs: procs[e] as u16,
            })
            .collect();
        Clusters {
            info,
            unit,
            rank,
            units,
            members: order,
            comb_readers,
            readers,
        }
    }

    /// Stamps for cycle `t` the same-cycle readers of the combinational nets written since the
    /// last call, queueing their clusters into `list` where not queued yet (before a cycle's
    /// evaluation: a harness's poke).
    pub(super) fn wake_comb_readers(
        &self,
        shared: &NetShared,
        due: &mut [Cycle],
        unit_queued: &mut [Cycle],
        t: Cycle,
        list: &mut IdList,
    ) {
        shared.drain_comb(|n| {
            let (start, count) = self.comb_readers[n as usize];
            for i in start..start + count {
                let r = self.readers[i as usize] as usize;
                due[r] = t;
                let u = self.unit[r] as usize;
                if unit_queued[u] != t {
                    unit_queued[u] = t;
                    list.push(u as u32);
                }
            }
        });
    }

    /// Within a cluster's walk, after the member of rank `rank` ran: stamps for cycle `t` the
    /// same-cycle readers of the combinational nets it wrote (all later in the walk). A reader
    /// at or before `rank` ran already: its driver wrote after it read, which only a block
    /// writing a combinational output from a process other than the one the port names can do;
    /// that is reported as a protocol violation of the net.
    #[inline(always)]
    pub(super) fn stamp_comb_readers(&self, shared: &NetShared, due: &mut [Cycle], t: Cycle, rank: u32) {
        shared.drain_comb(|n| {
            let (start, count) = self.comb_readers[n as usize];
            for i in start..start + count {
                let r = self.readers[i as usize] as usize;
                if self.rank[r] <= rank {
                    late_write(shared, n);
                    continue;
                }
                due[r] = t;
            }
        });
    }
}

/// Reports a combinational net written after its reader ran (out of line: never taken by a
/// block that keeps the contract).
#[cold]
#[inline(never)]
fn late_write(shared: &NetShared, net: u32) {
    shared.violate(
        net,
        "combinational output written after its reader ticked (a block writes a port only from the process the port names)"
            .to_string(),
    );
}

/// Shuffles a list in place (the contract test of `Sim::set_shuffle`).
pub(super) fn shuffle(rng: &mut crate::rng::Rng, list: &mut IdList) {
    for i in (1..list.len).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        list.buf.swap(i, j);
    }
}
