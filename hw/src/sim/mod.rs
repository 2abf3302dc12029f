//! The scheduler: two-phase cycles, wake-ups and event skip.
//!
//! Each executed cycle n: (1) evaluate — every awake process runs, reading nets as committed at
//! the end of n-1 and writing next values; (2) update — the kernel commits the dirty nets, and a
//! changed net wakes its readers (a freed stream slot wakes the producer) for n+1; (3) the tracer
//! records the changes at time n.
//!
//! The kernel's unit of work is an *entry*: a process of a block (a block of one process is one
//! entry). An entry is due at n when its own last hint was `NextCycle` (from n-1) or `At(n)`, an
//! input it reads changed at n-1, another process of its block asked for it
//! ([`Ctx::run_process`]), or, within the cycle, a combinational input changed. When nothing is
//! due at n+1 the kernel jumps to the earliest timer: idle cycles cost nothing. With skip off,
//! every entry runs every cycle; the wake bookkeeping is the same, so the end of the run
//! (quiescence) and, for components that honour the contract, every result are identical.
//!
//! A netlist of single-process blocks without combinational bindings takes the plain loop: the
//! active lists hold blocks. Otherwise the kernel schedules *clusters* (`cluster.rs`): entries
//! tied by same-cycle edges, ordered once at elaboration, run as one scheduling entry that walks
//! its members in order and runs those due; a combinational write stamps its readers later in the
//! walk, so every driver runs before its readers, in the same cycle.
//!
//! Per cycle the kernel allocates nothing: the active lists, the dirty list and the trace list are
//! reused buffers with room for every entry.

use crate::fastmap::FastMap;
use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::rc::Rc;

use crate::component::{Component, Ctx};
use crate::error::SimError;
use crate::events::EventLog;
use crate::net::{NetDyn, NetShared};
use crate::rng::Rng;
use crate::trace::{TraceOptions, VcdTracer};
use crate::Cycle;

mod cluster;
mod eval;
mod lists;
mod nets;
mod ports;
mod wake;

use cluster::Clusters;
use lists::IdList;
use nets::NetSlot;
pub(crate) use ports::PortIndex;

const NEVER: Cycle = Cycle::MAX;

/// A heap entry's flag: the timer is a request of another process (`Sim::notify`), not the
/// entry's own hint (`Sim::timers`).
const NOTIFY: u32 = 1 << 31;

/// The context components tick with at cycle `$t`, from the simulation's fields (a macro, not a
/// method, so the other fields stay free to borrow beside it).
macro_rules! ctx {
    ($sim:ident, $t:expr) => {
        Ctx {
            now: $t,
            rngs: &mut $sim.rngs,
            counter_base: &$sim.counter_base,
            counters: &mut $sim.counters,
            violation: &mut $sim.violation,
            requests: &mut $sim.requests,
            asked: false,
            me: 0,
            events: &mut $sim.events,
            samples: &mut $sim.samples,
        }
    };
}
use ctx;

/// Why [`Sim::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The limit was reached; `now() == limit`.
    Limit,
    /// Nothing is scheduled any more: no timer, no pending input. The run ended at `now()`.
    Quiescent,
}

/// Run statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Cycles executed (ticks and commits happened).
    pub cycles_executed: u64,
    /// Cycles jumped over by event skip.
    pub cycles_skipped: u64,
    /// Scheduling entries run: a block, or a same-cycle cluster once however many of its
    /// processes ran.
    pub activations: u64,
    /// Processes run (a block of one process: its ticks). Per kind and process:
    /// [`Sim::activations`].
    pub process_runs: u64,
}

/// A runnable simulation, produced by [`crate::Netlist::elaborate`].
pub struct Sim {
    /// Per block, in dense arrays rather than one record: the evaluate loop walks `comps`, and a
    /// wake-up (the update loop's, for every changed net) touches only `queued`, 8 bytes per
    /// entry (W3 at N = 1000: fewer L1 misses in cachegrind, no change in wall time measurable
    /// on the 2-core VM; docs/performance.md).
    comps: Vec<Box<dyn Component>>,
    /// Per entry: the pending timer of its own hint (`NEVER` if none); a heap entry is valid
    /// only if it matches.
    timers: Vec<Cycle>,
    /// Per entry: the pending request it made of another process of its block for a later cycle
    /// ([`Ctx::run_process_at`]), `NEVER` if none, and the entry it wakes; in the heap with the
    /// `NOTIFY` flag. Like a hint, it stands until the entry runs again.
    notify: Vec<Cycle>,
    notify_to: Vec<u32>,
    /// Per entry: its run count (`acts`) when it made its request; the request stands while
    /// that is still its count (it has not run again).
    notify_run: Vec<u64>,
    /// Per entry: the cycle for which it is due (plain netlist: queued in an active list).
    queued: Vec<Cycle>,
    paths: Vec<String>,
    kinds: Vec<String>,
    counters: Vec<u64>,
    counter_names: Vec<String>,
    /// Counters by name (the first of equal names), built on the first [`Sim::counter`]
    /// lookup: a report looks up a few counters per flow, and a linear scan per lookup was
    /// quadratic (minutes for a 256-chip all-to-all's 65 280 flows).
    counter_index: OnceCell<ports::NameIndex>,
    counter_base: Vec<u32>,
    counter_len: Vec<u32>,
    rngs: Vec<Rng>,
    /// Per net: the net and its wake lists, in one record.
    nets: Vec<NetSlot>,
    net_list: Vec<Rc<dyn NetDyn>>,
    net_paths: Vec<String>,
    /// Per net: the other names it is traced under (the scopes it passes through).
    net_aliases: Vec<Vec<String>>,
    /// The nets by their own paths (an index over `net_paths`, no copy of them).
    net_index: ports::NameIndex,
    /// The nets by the other names given them (composites' ports, `alias_net`).
    net_alias: FastMap<String, u32>,
    /// Every instance's ports and their nets: a net found by a reader's `inst.port`.
    ports: PortIndex,
    /// Readers of all nets, indexed by `NetSlot::readers`.
    reader_list: Vec<u32>,
    shared: Rc<NetShared>,
    /// The next cycle to execute.
    now: Cycle,
    heap: BinaryHeap<Reverse<(Cycle, u32)>>,
    /// This cycle's and the next cycle's scheduling entries: blocks (plain) or clusters.
    active: IdList,
    next_active: IdList,
    /// What the running process asked of its block's processes (`Ctx::run_process`).
    requests: Vec<(u32, u32, Cycle)>,
    /// Entries asked for the next cycle during this cycle's evaluation, queued after it (so an
    /// entry due in this cycle and not yet run keeps that).
    deferred: Vec<u32>,
    traced_changed: Vec<u32>,
    violation: Option<(u32, String)>,
    tracer: Option<VcdTracer>,
    skip: bool,
    shuffle: Option<Rng>,
    quiescent: bool,
    stats: Stats,
    /// Per entry: how many times it ran (`Stats::process_runs` is their sum; `--stats` breaks
    /// it down per kind and process from these).
    acts: Vec<u64>,
    /// The same-cycle clusters of a netlist with combinational bindings or blocks with several
    /// processes; `None` without any (the plain loop).
    clusters: Option<Clusters>,
    /// Per cluster: the cycle it is queued for (empty without clusters).
    unit_queued: Vec<Cycle>,
    /// The event log (`Ctx::log`), off by default.
    events: EventLog,
    /// The run-wide sample sets blocks add to at `finish` (name, values).
    samples: Vec<(&'static str, Vec<u64>)>,
}

impl Sim {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        seed: u64,
        comps: Vec<Box<dyn Component>>,
        paths: Vec<String>,
        rng_paths: &[String],
        kinds: Vec<String>,
        counter_names: Vec<String>,
        counter_base: Vec<u32>,
        counter_len: Vec<u32>,
        nets: Vec<Rc<dyn NetDyn>>,
        net_paths: Vec<String>,
        net_writer: Vec<u32>,
        net_readers: Vec<Vec<u32>>,
        entry_block: Vec<u32>,
        entry_process: Vec<u32>,
        level: Vec<u32>,
        shared: Rc<NetShared>,
    ) -> Sim {
        // Timers and wake-ups are per entry (a process of a block), the rest per block.
        let n = entry_block.len();
        let mut reader_list = Vec::new();
        let mut net_slots = Vec::with_capacity(nets.len());
        let net_comb: Vec<bool> = nets.iter().map(|n| n.is_comb()).collect();
        let clusters = (n > comps.len() || net_comb.iter().any(|&c| c))
            .then(|| Clusters::new(entry_block, entry_process, &level, &net_writer, &net_readers, &net_comb));
        let unit_queued = clusters.as_ref().map_or(Vec::new(), |c| vec![0; c.units.len()]);
        let units = clusters.as_ref().map_or(n, |c| c.units.len());
        for (i, r) in net_readers.iter().enumerate() {
            if !r.is_empty() {
                nets[i].set_read();
            }
            // A combinational net's readers are stamped in the cycle of the write (`Clusters`),
            // not woken by its commit.
            let r: &[u32] = if net_comb[i] { &[] } else { r };
            let readers = if let [only] = r[..] {
                (only, 1)
            } else {
                let start = reader_list.len() as u32;
                reader_list.extend_from_slice(r);
                (start, r.len() as u32)
            };
            let ns = NetSlot {
                raw: Rc::as_ptr(&nets[i]),
                readers,
                writer: net_writer[i],
                word: nets[i].word_size(),
                traced: false,
            };
            ns.set_fast();
            net_slots.push(ns);
        }
        let net_index = ports::NameIndex::new(&net_paths);
        let rngs = rng_paths.iter().map(|p| Rng::for_path(seed, p)).collect();
        let counters = vec![0; counter_names.len()];
        Sim {
            comps,
            timers: vec![NEVER; n],
            notify: vec![NEVER; n],
            notify_to: vec![0; n],
            notify_run: vec![0; n],
            // Everything runs at cycle 0.
            queued: vec![0; n],
            paths,
            kinds,
            counters,
            counter_names,
            counter_index: OnceCell::new(),
            counter_base,
            counter_len,
            rngs,
            nets: net_slots,
            net_list: nets,
            net_paths,
            net_aliases: Vec::new(),
            net_index,
            net_alias: FastMap::default(),
            ports: PortIndex::default(),
            reader_list,
            shared,
            now: 0,
            heap: BinaryHeap::new(),
            active: IdList::new(n),
            next_active: {
                let mut l = IdList::new(n);
                l.fill_all(units);
                l
            },
            requests: Vec::with_capacity(64),
            deferred: Vec::with_capacity(64),
            traced_changed: Vec::new(),
            violation: None,
            tracer: None,
            skip: true,
            shuffle: None,
            quiescent: false,
            stats: Stats::default(),
            acts: vec![0; n],
            clusters,
            unit_queued,
            events: EventLog::default(),
            samples: Vec::new(),
        }
    }

    /// The dirty list's owner (for a harness's driver handles).
    pub(crate) fn shared(&self) -> Rc<NetShared> {
        self.shared.clone()
    }

    /// Event skip on (default) or off (`--no-skip`: every component ticks every cycle).
    pub fn set_skip(&mut self, skip: bool) {
        self.skip = skip;
    }

    /// Shuffles the evaluation order of each cycle with `seed` (a test of the two-phase
    /// contract: results must not change).
    pub fn set_shuffle(&mut self, seed: Option<u64>) {
        self.shuffle = seed.map(Rng::from_seed);
    }

    /// The next cycle to execute (after a run: the time reached).
    pub fn now(&self) -> Cycle {
        self.now
    }

    /// The next cycle at which something is scheduled (`now()` when a component is due now),
    /// `None` when nothing is. A driver that runs in slices of time starts its slice there, so an
    /// idle stretch of any length costs one slice.
    pub fn next_event(&mut self) -> Option<Cycle> {
        if self.quiescent {
            return None;
        }
        if !self.next_active.is_empty() || self.shared.has_dirty() {
            return Some(self.now);
        }
        self.next_timer().map(|t| t.max(self.now))
    }

    /// Whether the simulation has gone quiet (nothing scheduled).
    pub fn is_quiescent(&self) -> bool {
        self.quiescent
    }

    /// Statistics so far.
    pub fn stats(&self) -> Stats {
        Stats {
            process_runs: self.acts.iter().sum(),
            ..self.stats
        }
    }

    /// Activations per process of each block: `(block path, kind, process, activations)`, in
    /// elaboration order (a block with one process has one row, process 0).
    pub fn activations(&self) -> Vec<(&str, &str, u32, u64)> {
        let (block, process) = self.entry_map();
        (0..self.acts.len())
            .map(|e| {
                let b = block(e);
                (self.paths[b].as_str(), self.kinds[b].as_str(), process(e), self.acts[e])
            })
            .collect()
    }

    /// Each entry's block and process.
    #[allow(clippy::type_complexity)]
    fn entry_map(&self) -> (Box<dyn Fn(usize) -> usize + '_>, Box<dyn Fn(usize) -> u32 + '_>) {
        match &self.clusters {
            Some(c) => (
                Box::new(|e| c.info[e].block as usize),
                Box::new(|e| c.info[e].process as u32),
            ),
            None => (Box::new(|e| e), Box::new(|_| 0)),
        }
    }

    /// Number of components.
    pub fn component_count(&self) -> usize {
        self.comps.len()
    }

    /// Number of nets.
    pub fn net_count(&self) -> usize {
        self.nets.len()
    }

    /// Component paths and kinds.
    pub fn components(&self) -> impl Iterator<Item = (&str, &str)> {
        self.paths
            .iter()
            .map(|s| s.as_str())
            .zip(self.kinds.iter().map(|s| s.as_str()))
    }

    /// All counters as `(<path>.<name>, value)`, in elaboration order.
    pub fn counters(&self) -> impl Iterator<Item = (&str, u64)> {
        self.counter_names
            .iter()
            .map(|s| s.as_str())
            .zip(self.counters.iter().copied())
    }

    /// All counters as `(<scope>.<name>, kind of the block that registers it)`, in
    /// elaboration order (a counter a block registers in its composite's scope is its block's).
    pub fn counter_kinds(&self) -> impl Iterator<Item = (&str, &str)> {
        self.kinds.iter().enumerate().flat_map(move |(c, kind)| {
            let b = self.counter_base[c] as usize;
            let l = self.counter_len[c] as usize;
            self.counter_names[b..b + l]
                .iter()
                .map(move |n| (n.as_str(), kind.as_str()))
        })
    }

    /// A counter by full name.
    pub fn counter(&self, name: &str) -> Option<u64> {
        let index = self
            .counter_index
            .get_or_init(|| ports::NameIndex::new(&self.counter_names));
        let i = index.find(&self.counter_names, name)?;
        Some(self.counters[i as usize])
    }

    /// Counters of one component: `(name without path, value)`.
    pub fn counters_of(&self, path: &str) -> Vec<(&str, u64)> {
        let Some(c) = self.paths.iter().position(|p| p == path) else {
            return Vec::new();
        };
        let b = self.counter_base[c] as usize;
        let l = self.counter_len[c] as usize;
        (b..b + l)
            // The name after its scope (a block may count in its composite's scope).
            .map(|i| {
                let n = &self.counter_names[i];
                (n.rsplit_once('.').map_or(n.as_str(), |(_, c)| c), self.counters[i])
            })
            .collect()
    }

    /// The net driven by (or bound to) `inst.port`.
    pub fn net(&self, path: &str) -> Option<&Rc<dyn NetDyn>> {
        self.net_id(path).map(|i| &self.net_list[i as usize])
    }

    /// The id of the net named `path`, or bound to the port `path` names.
    fn net_id(&self, path: &str) -> Option<u32> {
        self.net_index
            .find(&self.net_paths, path)
            .or_else(|| self.net_alias.get(path).copied())
            .or_else(|| self.ports.net_of(path))
    }

    /// Keeps the instances' ports, so that a net is found by any port bound to it.
    pub(crate) fn set_ports(&mut self, ports: PortIndex) {
        self.ports = ports;
    }

    /// Net paths, in id order.
    pub fn net_paths(&self) -> &[String] {
        &self.net_paths
    }

    /// Registers another name under which the net at `target` is traced (a composite's port it
    /// passes through); it is also found under it, as [`Sim::alias_net`] does.
    pub fn trace_alias(&mut self, alias: &str, target: &str) -> bool {
        let Some(id) = self.net_id(target) else {
            return false;
        };
        self.trace_alias_of(alias.to_string(), id);
        true
    }

    /// [`Sim::trace_alias`] of net `id`, the name given owned.
    fn trace_alias_of(&mut self, alias: String, id: u32) {
        if self.net_aliases.len() < self.net_list.len() {
            self.net_aliases.resize(self.net_list.len(), Vec::new());
        }
        let names = &mut self.net_aliases[id as usize];
        let new = self.net_paths[id as usize] != alias && !names.contains(&alias);
        if new {
            names.push(alias.clone());
        }
        self.add_alias(alias, id);
    }

    /// Finds net `id` by `alias` too, unless the name is taken (a net's own path, or an
    /// earlier alias).
    fn add_alias(&mut self, alias: String, id: u32) {
        if self.net_index.find(&self.net_paths, &alias).is_none() {
            self.net_alias.entry(alias).or_insert(id);
        }
    }

    /// The composites' names of the nets, in any order: `(alias, net, indexed)`, each traced
    /// under its alias, and found by it where `indexed` (a name already taken keeps its net).
    /// Each net's names end sorted, as if given one by one in the order of the names.
    pub(crate) fn trace_aliases(&mut self, aliases: Vec<(String, u32, bool)>) {
        if self.net_aliases.len() < self.net_list.len() {
            self.net_aliases.resize(self.net_list.len(), Vec::new());
        }
        self.net_alias.reserve(aliases.len());
        for (alias, id, indexed) in aliases {
            if self.net_paths[id as usize] != alias {
                self.net_aliases[id as usize].push(alias.clone());
            }
            if indexed {
                self.add_alias(alias, id);
            }
        }
        for names in &mut self.net_aliases {
            if names.len() > 1 {
                names.sort_unstable();
                names.dedup();
            }
        }
    }

    /// Registers another path under which a net can be found (a reader's `inst.port`).
    pub fn alias_net(&mut self, alias: &str, target: &str) -> bool {
        match self.net_id(target) {
            Some(id) => {
                self.add_alias(alias.to_string(), id);
                true
            }
            None => false,
        }
    }

    /// The paths of the event pulses `events` offers (`<block>.ev_<class>`, as
    /// [`Sim::trace_vcd`] declares them); a block index out of range is no block's: empty.
    pub fn pulse_paths(&self, events: &[(u32, &'static str)]) -> Vec<String> {
        events
            .iter()
            .map(|&(b, class)| match self.paths.get(b as usize) {
                Some(p) => format!("{p}.ev_{class}"),
                None => String::new(),
            })
            .collect()
    }

    /// Starts a VCD trace of the nets selected by `opts`, written to `out`. Call before running.
    pub fn trace_vcd(&mut self, out: Box<dyn Write>, opts: TraceOptions) -> Result<usize, SimError> {
        let pulse_paths = self.pulse_paths(&opts.events);
        let events = opts.events.clone();
        let tracer = VcdTracer::new(
            out,
            opts,
            &self.net_list,
            &self.net_paths,
            &self.net_aliases,
            &pulse_paths,
        )?;
        let mut pulses: Vec<Vec<(&'static str, u32)>> = vec![Vec::new(); self.comps.len()];
        for (j, &(b, class)) in events.iter().enumerate() {
            if tracer.pulse_declared(j) && (b as usize) < pulses.len() {
                pulses[b as usize].push((class, j as u32));
            }
        }
        self.events.set_pulses(pulses);
        for &n in tracer.nets() {
            let ns = &mut self.nets[n as usize];
            ns.traced = true;
            ns.set_fast();
            self.net_list[n as usize].set_traced();
        }
        let count = tracer.var_count();
        self.tracer = Some(tracer);
        Ok(count)
    }

    /// Ends the run for the components: calls each one's [`Component::finish`] at the current
    /// cycle, in index order, so end-of-run summary counters are in place. Idempotent in effect
    /// for well-behaved blocks (they recompute from their state).
    pub fn finish(&mut self) {
        self.settle();
        // The sample sets are the blocks' `finish`'s to fill, anew each time.
        self.samples.clear();
        let now = self.now;
        let mut ctx = ctx!(self, now);
        for (c, comp) in self.comps.iter_mut().enumerate() {
            ctx.me = c as u32;
            comp.finish(&mut ctx);
        }
    }

    /// Brings every block's lazily kept counters up to the current cycle
    /// ([`Component::settle`]): before counters are read mid-run (a probe) and at the end.
    pub fn settle(&mut self) {
        let now = self.now;
        let mut ctx = ctx!(self, now);
        for (c, comp) in self.comps.iter_mut().enumerate() {
            ctx.me = c as u32;
            comp.settle(&mut ctx);
        }
    }

    /// The run-wide sample set `name` the blocks' [`Ctx::add_samples`] filled at the last
    /// [`Sim::finish`] (unsorted), if any block added to it.
    pub fn samples(&self, name: &str) -> Option<&[u64]> {
        self.samples.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_slice())
    }

    /// Turns the event log on (see [`EventLog`]); call before running.
    pub fn set_event_log(&mut self, log: EventLog) {
        // The waves' event pulses stay (the trace may have been opened first).
        let pulses = self.events.take_pulses();
        self.events = log;
        self.events.set_pulses(pulses);
    }

    /// Flushes the event log: the first error met writing it, if any.
    pub fn finish_events(&mut self) -> std::io::Result<()> {
        self.events.finish()
    }

    /// Lines the event log wrote.
    pub fn event_lines(&self) -> u64 {
        self.events.lines()
    }

    /// Finishes the trace at `end` (writes the final timestamp and flushes).
    pub fn finish_trace(&mut self, end: Cycle) -> Result<(), SimError> {
        if let Some(t) = self.tracer.as_mut() {
            t.finish(end, &self.net_list)?;
        }
        Ok(())
    }
}
