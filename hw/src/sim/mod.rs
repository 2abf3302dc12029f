//! The scheduler: two-phase cycles, wake-ups and event skip.
//!
//! Each executed cycle n: (1) evaluate — every awake component ticks, reading nets as committed at
//! the end of n-1 and writing next values; (2) update — the kernel commits the dirty nets, and a
//! changed net wakes its readers (a freed stream slot wakes the producer) for n+1; (3) the tracer
//! records the changes at time n.
//!
//! A component is awake at n when its last hint was `NextCycle` (from n-1) or `At(n)`, or an input
//! changed at n-1. When nothing is awake at n+1 the kernel jumps to the earliest timer: idle cycles
//! cost nothing. With skip off, every component ticks every cycle; the wake bookkeeping is the same,
//! so the end of the run (quiescence) and, for components that honour the contract, every result
//! are identical.
//!
//! Combinational nets (see `net.rs`) add an order within the evaluate phase. Each component has
//! a level from elaboration (the longest chain of combinational bindings ending at it, 0 without
//! a combinational input). Level 0 ticks first, in any order, as above; then each higher level
//! in turn. Before a level ticks, the kernel wakes the readers of every combinational net that
//! changed (or took a push) so far in this cycle — they are all of higher levels — so a reader
//! ticks after its drivers, in the same cycle, whether or not it had asked to run. A netlist
//! without combinational bindings has only level 0 and takes the loop it always took.
//!
//! Per cycle the kernel allocates nothing: the active lists, the dirty list and the trace list are
//! reused buffers (a level's list has room for every component of that level).

use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::Write;
use std::rc::Rc;

use crate::component::{Component, Ctx, Wake};
use crate::error::SimError;
use crate::net::{NetDyn, NetShared, WordNet, CHANGED, SPACE_FREED};
use crate::rng::Rng;
use crate::trace::{TraceOptions, VcdTracer};
use crate::Cycle;

mod levels;
mod lists;
mod nets;

use levels::{shuffle, Levels};
use lists::{IdList, Waker};
use nets::{commit_narrow, commit_word, NetSlot};

const NEVER: Cycle = Cycle::MAX;

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
            me: 0,
        }
    };
}

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
    /// Component ticks.
    pub activations: u64,
    /// Drive phases run (blocks with outputs driven from state; not counted in `activations`).
    pub drives: u64,
}

/// A runnable simulation, produced by [`crate::Netlist::elaborate`].
pub struct Sim {
    /// Per component, in dense arrays rather than one record: the evaluate loop walks `comps`,
    /// and a wake-up (the update loop's, for every changed net) touches only `queued`, 8 bytes
    /// per component (W3 at N = 1000: fewer L1 misses in cachegrind, no change in wall time
    /// measurable on the 2-core VM; docs/performance.md).
    comps: Vec<Box<dyn Component>>,
    /// Pending timer (`NEVER` if none); a heap entry is valid only if it matches.
    timers: Vec<Cycle>,
    /// The cycle for which each component is already in an active list.
    queued: Vec<Cycle>,
    paths: Vec<String>,
    kinds: Vec<String>,
    counters: Vec<u64>,
    counter_names: Vec<String>,
    /// Counter indices sorted by name (stable: the first of equal names first), built on the
    /// first [`Sim::counter`] lookup: a report looks up a few counters per flow, and a linear
    /// scan per lookup was quadratic (minutes for a 256-chip all-to-all's 65 280 flows).
    counter_index: OnceCell<Vec<u32>>,
    counter_base: Vec<u32>,
    counter_len: Vec<u32>,
    rngs: Vec<Rng>,
    /// Per net: the net and its wake lists, in one record.
    nets: Vec<NetSlot>,
    net_list: Vec<Rc<dyn NetDyn>>,
    net_paths: Vec<String>,
    /// Per net: the other names it is traced under (the scopes it passes through).
    net_aliases: Vec<Vec<String>>,
    net_by_path: HashMap<String, u32>,
    /// Readers of all nets, indexed by `NetSlot::readers`.
    reader_list: Vec<u32>,
    shared: Rc<NetShared>,
    /// The next cycle to execute.
    now: Cycle,
    heap: BinaryHeap<Reverse<(Cycle, u32)>>,
    active: IdList,
    next_active: IdList,
    traced_changed: Vec<u32>,
    violation: Option<(u32, String)>,
    tracer: Option<VcdTracer>,
    skip: bool,
    shuffle: Option<Rng>,
    quiescent: bool,
    stats: Stats,
    /// Per entry: how many times it ran (`Stats::activations` is their sum; `--stats` breaks it
    /// down per kind and process from these).
    acts: Vec<u64>,
    /// The static schedule of a netlist with combinational bindings or blocks with several
    /// processes; `None` without any.
    levels: Option<Levels>,
    /// The processes of blocks with several (`None` when every block has one: then the
    /// kernel's unit, an entry, is the block, and the evaluate loop takes its plain form).
    procs: Option<Procs>,
}

/// Per entry (a process of a block), for netlists with a block of several processes: the kernel
/// keeps timers, wake-ups and levels per entry, the component, its RNG, counters and path per
/// block.
pub(super) struct Procs {
    /// Per entry: its block, its process, whether the block's next process follows it, and
    /// the block's first entry (process 0), which every process's wake hint schedules.
    block: Vec<u32>,
    process: Vec<u32>,
    follows: Vec<bool>,
    first: Vec<u32>,
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
        drives: Vec<bool>,
        shared: Rc<NetShared>,
    ) -> Sim {
        // Timers, wake-ups and levels are per entry (a process of a block), the rest per block.
        let n = entry_block.len();
        let procs = (n > comps.len()).then(|| Procs {
            follows: (0..n)
                .map(|e| entry_block.get(e + 1) == Some(&entry_block[e]))
                .collect(),
            first: (0..n as u32).map(|e| e - entry_process[e as usize]).collect(),
            block: entry_block.clone(),
            process: entry_process,
        });
        let mut reader_list = Vec::new();
        let mut net_slots = Vec::with_capacity(nets.len());
        let net_comb: Vec<bool> = nets.iter().map(|n| n.is_comb()).collect();
        // Any combinational net needs the same-cycle wake list drained every cycle, even one
        // that nothing reads.
        // So do blocks with several processes: their later processes tick in later levels.
        let levels = (procs.is_some() || net_comb.iter().any(|&c| c))
            .then(|| Levels::new(level, entry_block, &net_readers, &net_comb, drives));
        for (i, r) in net_readers.iter().enumerate() {
            // A combinational net's readers are woken in the cycle of the write (`Levels`), not
            // by its commit.
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
        let net_by_path = net_paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i as u32))
            .collect();
        let rngs = rng_paths.iter().map(|p| Rng::for_path(seed, p)).collect();
        let counters = vec![0; counter_names.len()];
        Sim {
            comps,
            timers: vec![NEVER; n],
            // Everything ticks at cycle 0.
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
            net_by_path,
            reader_list,
            shared,
            now: 0,
            heap: BinaryHeap::new(),
            active: IdList::new(n),
            next_active: {
                let mut l = IdList::new(n);
                (0..n as u32).for_each(|c| l.push(c));
                l
            },
            traced_changed: Vec::new(),
            violation: None,
            tracer: None,
            skip: true,
            shuffle: None,
            quiescent: false,
            stats: Stats::default(),
            acts: vec![0; n],
            levels,
            procs,
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
        if !self.next_active.is_empty() || self.shared.has_dirty() || self.drive_due() {
            return Some(self.now);
        }
        self.next_timer().map(|t| t.max(self.now))
    }

    /// Whether a block's drive phase is due next cycle (it ticked in the last one).
    fn drive_due(&self) -> bool {
        self.levels.as_ref().is_some_and(|lv| !lv.drive_next.is_empty())
    }

    /// Whether the simulation has gone quiet (nothing scheduled).
    pub fn is_quiescent(&self) -> bool {
        self.quiescent
    }

    /// Statistics so far.
    pub fn stats(&self) -> Stats {
        Stats {
            activations: self.acts.iter().sum(),
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
        match &self.procs {
            Some(p) => (Box::new(|e| p.block[e] as usize), Box::new(|e| p.process[e])),
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
        let index = self.counter_index.get_or_init(|| {
            let mut v: Vec<u32> = (0..self.counter_names.len() as u32).collect();
            v.sort_by(|&a, &b| self.counter_names[a as usize].cmp(&self.counter_names[b as usize]));
            v
        });
        let at = index.partition_point(|&i| self.counter_names[i as usize].as_str() < name);
        let &i = index.get(at)?;
        (self.counter_names[i as usize] == name).then(|| self.counters[i as usize])
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
        self.net_by_path.get(path).map(|&i| &self.net_list[i as usize])
    }

    /// Net paths, in id order.
    pub fn net_paths(&self) -> &[String] {
        &self.net_paths
    }

    /// Registers another name under which the net at `target` is traced (a composite's port it
    /// passes through); it is also found under it, as [`Sim::alias_net`] does.
    pub fn trace_alias(&mut self, alias: &str, target: &str) -> bool {
        let Some(id) = self.net_by_path.get(target).copied() else {
            return false;
        };
        self.alias_net(alias, target);
        if self.net_aliases.len() < self.net_list.len() {
            self.net_aliases.resize(self.net_list.len(), Vec::new());
        }
        let names = &mut self.net_aliases[id as usize];
        if self.net_paths[id as usize] != alias && !names.iter().any(|n| n == alias) {
            names.push(alias.to_string());
        }
        true
    }

    /// Registers another path under which a net can be found (a reader's `inst.port`).
    pub fn alias_net(&mut self, alias: &str, target: &str) -> bool {
        match self.net_by_path.get(target).copied() {
            Some(id) => {
                self.net_by_path.entry(alias.to_string()).or_insert(id);
                true
            }
            None => false,
        }
    }

    /// Starts a VCD trace of the nets selected by `opts`, written to `out`. Call before running.
    pub fn trace_vcd(&mut self, out: Box<dyn Write>, opts: TraceOptions) -> Result<usize, SimError> {
        let tracer = VcdTracer::new(out, opts, &self.net_list, &self.net_paths, &self.net_aliases)?;
        for &n in tracer.nets() {
            let ns = &mut self.nets[n as usize];
            ns.traced = true;
            ns.set_fast();
        }
        let count = tracer.var_count();
        self.tracer = Some(tracer);
        Ok(count)
    }

    /// Ends the run for the components: calls each one's [`Component::finish`] at the current
    /// cycle, in index order, so end-of-run summary counters are in place. Idempotent in effect
    /// for well-behaved blocks (they recompute from their state).
    pub fn finish(&mut self) {
        let now = self.now;
        let mut ctx = ctx!(self, now);
        for (c, comp) in self.comps.iter_mut().enumerate() {
            ctx.me = c as u32;
            comp.finish(&mut ctx);
        }
    }

    /// Finishes the trace at `end` (writes the final timestamp and flushes).
    pub fn finish_trace(&mut self, end: Cycle) -> Result<(), SimError> {
        if let Some(t) = self.tracer.as_mut() {
            t.finish(end, &self.net_list)?;
        }
        Ok(())
    }

    /// Earliest valid timer, dropping stale heap entries.
    fn next_timer(&mut self) -> Option<Cycle> {
        while let Some(&Reverse((t, c))) = self.heap.peek() {
            if self.timers[c as usize] == t {
                return Some(t);
            }
            self.heap.pop();
        }
        None
    }

    /// Runs cycles `now()..limit`, or until nothing is scheduled. Returns why it stopped.
    pub fn run(&mut self, limit: Cycle) -> Result<Stop, SimError> {
        loop {
            if self.quiescent {
                return Ok(Stop::Quiescent);
            }
            // Whatever is pending decides the next cycle; with skip off we still ask, so that the
            // run ends at the same cycle in both modes.
            let pending = if !self.next_active.is_empty() || self.shared.has_dirty() || self.drive_due() {
                Some(self.now)
            } else {
                self.next_timer()
            };
            let Some(next) = pending else {
                self.quiescent = true;
                return Ok(Stop::Quiescent);
            };
            let t = if self.skip { next } else { self.now };
            if t >= limit {
                if self.skip {
                    self.stats.cycles_skipped += limit.saturating_sub(self.now);
                }
                self.now = self.now.max(limit);
                return Ok(Stop::Limit);
            }
            self.stats.cycles_skipped += t - self.now;
            self.step_at(t)?;
        }
    }

    /// Executes exactly one cycle at `now()`, whether or not anything is scheduled (for
    /// harness-driven tests).
    pub fn step(&mut self) -> Result<(), SimError> {
        self.quiescent = false;
        let t = self.now;
        self.step_at(t)
    }

    /// The start of cycle `t`: the components due (woken for `t`, timers due; every one with
    /// skip off) in `active`, the drive phase run, and the components of higher levels moved to
    /// their level's list.
    fn gather(&mut self, t: Cycle) {
        std::mem::swap(&mut self.active, &mut self.next_active);
        self.next_active.clear();
        if !self.active.is_empty() && self.queued[self.active.buf[0] as usize] != t {
            // Entries were queued for an earlier cycle that `step` skipped past; they are due.
            for &c in self.active.as_slice() {
                self.queued[c as usize] = t;
            }
        }
        while let Some(&Reverse((tt, c))) = self.heap.peek() {
            if tt > t {
                break;
            }
            self.heap.pop();
            if self.timers[c as usize] == tt {
                self.timers[c as usize] = NEVER;
                // A process's timer runs its block from the first process.
                let c = self.procs.as_ref().map_or(c, |p| p.first[c as usize]);
                if self.queued[c as usize] != t {
                    self.queued[c as usize] = t;
                    self.active.push(c);
                }
            }
        }
        if let Some(lv) = self.levels.as_mut() {
            // Blocks with a drive phase that tick now (those woken: the same set with or without
            // skip) drive again next cycle, to show the state their tick leaves.
            lv.begin(t, self.active.as_slice());
        }
        if !self.skip {
            self.active.clear();
            for c in 0..self.timers.len() as u32 {
                self.active.push(c);
            }
            self.queued.fill(t);
        }
        if let Some(lv) = self.levels.as_mut() {
            lv.start_cycle(
                t,
                self.skip,
                &mut self.active,
                &mut self.comps,
                &mut ctx!(self, t),
                self.shuffle.as_mut(),
                &mut self.stats,
            );
            // Outputs driven from state, and combinational writes made before the cycle (a
            // harness poke), wake their readers for this cycle.
            lv.wake_comb_readers(&self.shared, &mut self.queued, t, &mut self.active, 0);
        }
        if let Some(rng) = self.shuffle.as_mut() {
            // Only the order the schedule leaves free: within a level.
            shuffle(rng, &mut self.active);
        }
    }

    fn step_at(&mut self, t: Cycle) -> Result<(), SimError> {
        self.gather(t);

        // Evaluate.
        let next = t + 1;
        let mut ctx = ctx!(self, t);
        // The loops below keep the lists' bases and lengths in locals: through `self` they were
        // reloaded after every tick and every store (measured on W3).
        let comps = &mut self.comps[..];
        let timers = &mut self.timers[..];
        let queued = &mut self.queued[..];
        let acts = &mut self.acts[..];
        let mut wake = Waker::new(&mut self.next_active);
        let procs = self.procs.as_ref();
        evaluate_list(
            self.active.as_slice(),
            comps,
            timers,
            queued,
            acts,
            &mut self.heap,
            &mut ctx,
            &mut wake,
            next,
            procs,
            self.levels.as_mut().map(|lv| &mut lv.followers),
        );
        if let Some(lv) = self.levels.as_mut() {
            for l in 0..lv.lists.len() {
                lv.wake_comb_readers(&self.shared, queued, t, &mut self.active, l + 1);
                lv.queue_followers();
                if let Some(rng) = self.shuffle.as_mut() {
                    shuffle(rng, &mut lv.lists[l]);
                }
                let list = &lv.lists[l];
                evaluate_list(
                    list.as_slice(),
                    comps,
                    timers,
                    queued,
                    acts,
                    &mut self.heap,
                    &mut ctx,
                    &mut wake,
                    next,
                    procs,
                    Some(&mut lv.followers),
                );
                lv.lists[l].clear();
            }
            // Nets written by the top level have no same-cycle readers left to wake.
            let top = lv.lists.len() + 1;
            lv.wake_comb_readers(&self.shared, queued, t, &mut self.active, top);
        }
        self.stats.cycles_executed += 1;

        wake.done();
        self.update(t);
        if let Some(tr) = self.tracer.as_mut() {
            tr.cycle(t, &self.traced_changed, &self.net_list)?;
        }
        self.traced_changed.clear();
        self.now = next;

        if let Some((c, what)) = self.violation.take() {
            return Err(SimError::Protocol {
                cycle: t,
                path: self.paths[c as usize].clone(),
                what,
            });
        }
        if let Some((net, what)) = self.shared.violation.borrow_mut().take() {
            return Err(SimError::Protocol {
                cycle: t,
                path: self.net_paths[net as usize].clone(),
                what,
            });
        }
        Ok(())
    }

    /// The update phase of cycle `t`: commits the dirty nets; a changed one wakes its readers,
    /// a freed stream slot its producer, for `t + 1`; traced ones are noted for the tracer.
    #[inline(always)]
    fn update(&mut self, t: Cycle) {
        let next = t + 1;
        let queued = &mut self.queued[..];
        let mut wake = Waker::new(&mut self.next_active);
        let nets = &self.nets[..];
        let reader_list = &self.reader_list[..];
        for cell in self.shared.take_dirty() {
            let head = cell.get();
            // SAFETY: the dirty list holds the heads of this simulation's nets, which live as long
            // as the simulation (owned by `net_list`); a `fast` net is a `SignalNet` of a 64-bit
            // word (`NetSlot::set_fast`), which `WordNet<u64>` views.
            unsafe {
                if (*head).fast.get() {
                    let w = &*(head as *const WordNet<u64>);
                    w.head.dirty.set(false);
                    let v = w.next.get();
                    if v != w.cur.get() {
                        w.cur.set(v);
                        // A recorded reader; see `Waker::wake`.
                        wake.wake(queued, w.head.reader.get(), next);
                    }
                    continue;
                }
            }
            // SAFETY: as above; its id is `< nets.len()`, and its reader ranges were cut from
            // `reader_list` at construction.
            let n = unsafe { (*head).id };
            debug_assert!((n as usize) < nets.len());
            let ns = unsafe { nets.get_unchecked(n as usize) };
            // SAFETY: `raw` points into the allocation owned by `net_list[n]`, which lives as
            // long as the simulation; nets are never removed or replaced; `word` is that net's
            // own `word_size()`.
            let flags = match ns.word {
                // Streams and other values: the net's own commit, called from here.
                0 => unsafe { (*ns.raw).commit(t) },
                8 => unsafe { commit_word::<u64>(ns.raw, t) },
                _ => unsafe { commit_narrow(ns, t) },
            };
            if flags == 0 {
                continue;
            }
            if flags & CHANGED != 0 {
                let (start, count) = ns.readers;
                if count == 1 {
                    // SAFETY: a recorded reader; see `Waker::wake`.
                    unsafe { wake.wake(queued, start, next) };
                } else {
                    // SAFETY: the range was cut from `reader_list` at construction.
                    let readers = unsafe { reader_list.get_unchecked(start as usize..(start + count) as usize) };
                    for &r in readers {
                        // SAFETY: a recorded reader; see `Waker::wake`.
                        unsafe { wake.wake(queued, r, next) };
                    }
                }
            }
            if flags & SPACE_FREED != 0 && ns.writer != u32::MAX {
                // SAFETY: a recorded writer; see `Waker::wake`.
                unsafe { wake.wake(queued, ns.writer, next) };
            }
            if ns.traced {
                self.traced_changed.push(n);
            }
        }
        wake.done();
    }
}

/// [`evaluate`] in the form the netlist needs: the plain loop without blocks of several
/// processes (`procs` is `None`), else the one that maps entries to blocks and queues the
/// `followers` (the schedule's, present whenever `procs` is).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn evaluate_list(
    list: &[u32],
    comps: &mut [Box<dyn Component>],
    timers: &mut [Cycle],
    queued: &mut [Cycle],
    acts: &mut [u64],
    heap: &mut BinaryHeap<Reverse<(Cycle, u32)>>,
    ctx: &mut Ctx<'_>,
    wake: &mut Waker<'_>,
    next: Cycle,
    procs: Option<&Procs>,
    followers: Option<&mut IdList>,
) {
    match (procs, followers) {
        (Some(p), Some(f)) => evaluate::<true>(
            list,
            comps,
            timers,
            queued,
            acts,
            heap,
            ctx,
            wake,
            next,
            &mut Some((p, f)),
        ),
        _ => evaluate::<false>(list, comps, timers, queued, acts, heap, ctx, wake, next, &mut None),
    }
}

/// Ticks the entries of `list` at cycle `ctx.now`, recording their wake hints: a timer in the
/// heap, or a place in the next cycle's list. With `MULTI` (a netlist with a block of several
/// processes) an entry is a process of a block, found in `procs`, and an entry whose block has
/// a later process queues that one for this cycle in `followers`; without it, an entry is its
/// block and `procs` is `None`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn evaluate<const MULTI: bool>(
    list: &[u32],
    comps: &mut [Box<dyn Component>],
    timers: &mut [Cycle],
    queued: &mut [Cycle],
    acts: &mut [u64],
    heap: &mut BinaryHeap<Reverse<(Cycle, u32)>>,
    ctx: &mut Ctx<'_>,
    wake: &mut Waker<'_>,
    next: Cycle,
    procs: &mut Option<(&Procs, &mut IdList)>,
) {
    for &c in list {
        let ci = c as usize;
        debug_assert!(ci < timers.len() && ci < queued.len());
        // `run`: the entry a hint for the next cycle queues (the block's first process).
        let (wake_hint, run) = if MULTI {
            let (procs, followers) = procs.as_mut().expect("MULTI comes with the processes");
            let b = procs.block[ci];
            ctx.me = b;
            let comp = &mut comps[b as usize];
            let hint = match procs.process[ci] {
                0 => comp.tick(ctx),
                p => comp.process(p, ctx),
            };
            // The block's next process sees what this one did, in this cycle.
            if procs.follows[ci] && queued[ci + 1] != ctx.now {
                queued[ci + 1] = ctx.now;
                followers.push(c + 1);
            }
            (hint, procs.first[ci])
        } else {
            debug_assert!(ci < comps.len());
            // SAFETY: active lists hold only component indices (from elaboration, timers and
            // wake-ups of recorded readers), all `< comps.len()`, and the three per-component
            // arrays have that length.
            ctx.me = c;
            (unsafe { comps.get_unchecked_mut(ci).tick(ctx) }, c)
        };
        // SAFETY: as above (an entry index is `< timers.len()`, the length of `acts`).
        unsafe { *acts.get_unchecked_mut(ci) += 1 };
        // SAFETY: as above (an entry index is `< timers.len()`, the length of `queued`).
        let timer = unsafe { timers.get_unchecked_mut(ci) };
        if let Wake::OnInput = wake_hint {
            // Tested first, alone: a block woken by its inputs then costs one compare here.
            *timer = NEVER;
            continue;
        }
        match wake_hint {
            // The timer is this entry's (each process's latest hint stands); it fires `run`.
            Wake::At(at) if at > next => {
                if *timer != at {
                    *timer = at;
                    heap.push(Reverse((at, c)));
                }
            }
            // NextCycle, or a timer due next cycle (or in the past).
            _ => {
                *timer = NEVER;
                // SAFETY: as above (`run` is an entry too).
                let q = unsafe { queued.get_unchecked_mut(run as usize) };
                if *q != next {
                    *q = next;
                    // SAFETY: the stamp just set queues `run` at most once for `next`.
                    unsafe { wake.push(run) };
                }
            }
        }
    }
}
