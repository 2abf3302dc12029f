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
//! Per cycle the kernel allocates nothing: the active lists, the dirty list and the trace list are
//! reused buffers.

use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::Write;
use std::rc::Rc;

use crate::component::{Component, Ctx, Wake};
use crate::error::SimError;
use crate::net::{NetDyn, NetHead, NetShared, WordNet, CHANGED, SPACE_FREED};
use crate::rng::Rng;
use crate::trace::{TraceOptions, VcdTracer};
use crate::Cycle;

const NEVER: Cycle = Cycle::MAX;

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
}

/// A list of component ids with room for every component. A component is queued at most once
/// per cycle (its `queued` stamp), so a push never needs a growth check.
struct IdList {
    buf: Box<[u32]>,
    len: usize,
}

impl IdList {
    fn new(n: usize) -> Self {
        IdList {
            buf: vec![0; n].into_boxed_slice(),
            len: 0,
        }
    }
    #[inline(always)]
    fn push(&mut self, c: u32) {
        debug_assert!(self.len < self.buf.len());
        // SAFETY: see the type's doc: at most `buf.len()` distinct ids per cycle.
        unsafe { *self.buf.get_unchecked_mut(self.len) = c };
        self.len += 1;
    }
    #[inline(always)]
    fn as_slice(&self) -> &[u32] {
        &self.buf[..self.len]
    }
    fn is_empty(&self) -> bool {
        self.len == 0
    }
    fn clear(&mut self) {
        self.len = 0;
    }
}

/// Pushes onto an [`IdList`] through a bare pointer to its next free slot, held in a register
/// for the duration of a loop (through `self`, the base and the length were reloaded after every
/// tick and store: measured on W3); [`Waker::done`] stores the length back.
struct Waker<'a> {
    list: &'a mut IdList,
    top: *mut u32,
}

impl<'a> Waker<'a> {
    #[inline(always)]
    fn new(list: &'a mut IdList) -> Self {
        let len = list.len;
        // SAFETY: `len <= buf.len()`: one past the end at most.
        let top = unsafe { list.buf.as_mut_ptr().add(len) };
        Waker { list, top }
    }
    /// Queues `c`.
    ///
    /// # Safety
    /// `c` is not queued yet for this cycle (its `queued` stamp was not the cycle), so the list
    /// (one slot per component) has room.
    #[inline(always)]
    unsafe fn push(&mut self, c: u32) {
        // SAFETY: the caller's: fewer than `buf.len()` ids are queued, so `top` is in the buffer.
        unsafe {
            *self.top = c;
            self.top = self.top.add(1);
        }
    }
    /// Queues component `c` for cycle `at` unless it already is.
    ///
    /// # Safety
    /// `c < queued.len()`: a reader or writer index recorded at elaboration, and every such
    /// index was a component of this netlist; the component list never shrinks.
    #[inline(always)]
    unsafe fn wake(&mut self, queued: &mut [Cycle], c: u32, at: Cycle) {
        debug_assert!((c as usize) < queued.len());
        // SAFETY: the caller's.
        let q = unsafe { queued.get_unchecked_mut(c as usize) };
        if *q != at {
            *q = at;
            // SAFETY: the stamp just set queues `c` at most once for `at`.
            unsafe { self.push(c) };
        }
    }
    #[inline(always)]
    fn done(self) {
        // SAFETY: `top` was derived from `buf` and stayed within it (or one past its end).
        let len = unsafe { self.top.offset_from(self.list.buf.as_ptr()) };
        debug_assert!(len >= 0 && len as usize <= self.list.buf.len());
        self.list.len = len as usize;
    }
}

struct NetSlot {
    /// The net (owned by `net_list`) as a plain pointer for the commit loop: dereferencing an `Rc<dyn _>` costs
    /// an alignment computation from the vtable on every use (measured: 6 of ~95 instructions
    /// per W3 activation).
    raw: *const dyn NetDyn,
    /// The readers: `(start, count)` of a range in `reader_list`, except that a single reader
    /// (the common case) is `(reader, 1)`, with no list to load.
    readers: (u32, u32),
    /// Producer (woken when stream space is freed); `u32::MAX` for constants.
    writer: u32,
    /// [`NetDyn::word_size`]: a signal of that many bytes the kernel commits through its
    /// `WordNet` (no virtual call); 0 for the others.
    word: u8,
    traced: bool,
}

impl NetSlot {
    /// Sets the net's `NetHead::fast` (and its reader): a 64-bit word signal with one reader,
    /// not traced, not logged. Called at construction and when tracing starts; enabling a log
    /// clears the flag itself.
    fn set_fast(&self) {
        if self.word != 8 {
            // Never fast (the flag stays as created: false).
            return;
        }
        // SAFETY: `word == 8`: `raw` is a live `#[repr(C)]` `SignalNet`, its `NetHead` first.
        let head = unsafe { &*(self.raw as *const NetHead) };
        let fast = self.readers.1 == 1 && !self.traced && !head.logging.get();
        head.reader.set(self.readers.0);
        head.fast.set(fast);
    }
}

/// Commits a signal of a word narrower than 64 bits through its `WordNet` (out of line: the
/// update loop keeps the virtual call of a stream's commit direct, which an extra call in front
/// of it cost W1 5% of its instructions).
///
/// # Safety
/// `ns.raw` is a live net and `ns.word` its `word_size()`.
#[inline(never)]
unsafe fn commit_narrow(ns: &NetSlot, now: Cycle) -> u8 {
    // SAFETY: the caller's.
    unsafe {
        match ns.word {
            4 => commit_word::<u32>(ns.raw, now),
            2 => commit_word::<u16>(ns.raw, now),
            1 => commit_word::<u8>(ns.raw, now),
            _ => (*ns.raw).commit(now),
        }
    }
}

/// Commits a signal whose value is `bool` or an unsigned integer of `W`'s size, as
/// `SignalNet::commit` does; a logged signal takes the virtual commit, which records.
///
/// # Safety
/// `raw` is a live `SignalNet<T>` whose `word_size()` is `size_of::<W>()`, and `W` is the
/// unsigned integer of that size.
#[inline(always)]
unsafe fn commit_word<W: Copy + PartialEq>(raw: *const dyn NetDyn, now: Cycle) -> u8 {
    // SAFETY: `SignalNet<T>` is `#[repr(C)]` with the fields of a `WordNet<T>` first, and `T`
    // has the size (hence, for integers and bool, the alignment and bitwise equality) of `W`.
    let core = unsafe { &*(raw as *const WordNet<W>) };
    if core.head.logging.get() {
        // SAFETY: the caller's.
        return unsafe { (*raw).commit(now) };
    }
    core.head.dirty.set(false);
    let n = core.next.get();
    if n != core.cur.get() {
        core.cur.set(n);
        CHANGED
    } else {
        0
    }
}

impl Sim {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        seed: u64,
        comps: Vec<Box<dyn Component>>,
        paths: Vec<String>,
        kinds: Vec<String>,
        counter_names: Vec<String>,
        counter_base: Vec<u32>,
        counter_len: Vec<u32>,
        nets: Vec<Rc<dyn NetDyn>>,
        net_paths: Vec<String>,
        net_writer: Vec<u32>,
        net_readers: Vec<Vec<u32>>,
        shared: Rc<NetShared>,
    ) -> Sim {
        let n = comps.len();
        let mut reader_list = Vec::new();
        let mut net_slots = Vec::with_capacity(nets.len());
        for (i, r) in net_readers.iter().enumerate() {
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
        let rngs = paths.iter().map(|p| Rng::for_path(seed, p)).collect();
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
        self.stats
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
            .map(|i| (&self.counter_names[i][path.len() + 1..], self.counters[i]))
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
        let tracer = VcdTracer::new(out, opts, &self.net_list, &self.net_paths)?;
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
        let mut ctx = Ctx {
            now: self.now,
            rngs: &mut self.rngs,
            counter_base: &self.counter_base,
            counters: &mut self.counters,
            violation: &mut self.violation,
            me: 0,
        };
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
            let pending = if !self.next_active.is_empty() || self.shared.has_dirty() {
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

    fn step_at(&mut self, t: Cycle) -> Result<(), SimError> {
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
                if self.queued[c as usize] != t {
                    self.queued[c as usize] = t;
                    self.active.push(c);
                }
            }
        }
        if !self.skip {
            self.active.clear();
            for c in 0..self.comps.len() as u32 {
                self.active.push(c);
            }
            self.queued.fill(t);
        }
        if let Some(rng) = self.shuffle.as_mut() {
            for i in (1..self.active.len).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.active.buf.swap(i, j);
            }
        }

        // Evaluate.
        let next = t + 1;
        let mut ctx = Ctx {
            now: t,
            rngs: &mut self.rngs,
            counter_base: &self.counter_base,
            counters: &mut self.counters,
            violation: &mut self.violation,
            me: 0,
        };
        // The loops below keep the lists' bases and lengths in locals: through `self` they were
        // reloaded after every tick and every store (measured on W3).
        let comps = &mut self.comps[..];
        let timers = &mut self.timers[..];
        let queued = &mut self.queued[..];
        let mut wake = Waker::new(&mut self.next_active);
        for &c in self.active.as_slice() {
            let ci = c as usize;
            debug_assert!(ci < comps.len() && ci < timers.len() && ci < queued.len());
            // SAFETY: active lists hold only component indices (from elaboration, timers and
            // wake-ups of recorded readers), all `< comps.len()`, and the three per-component
            // arrays have that length.
            ctx.me = c;
            let wake_hint = unsafe { comps.get_unchecked_mut(ci).tick(&mut ctx) };
            // SAFETY: as above.
            let timer = unsafe { timers.get_unchecked_mut(ci) };
            if let Wake::OnInput = wake_hint {
                // Tested first, alone: a block woken by its inputs then costs one compare here.
                *timer = NEVER;
                continue;
            }
            match wake_hint {
                Wake::At(at) if at > next => {
                    if *timer != at {
                        *timer = at;
                        self.heap.push(Reverse((at, c)));
                    }
                }
                // NextCycle, or a timer due next cycle (or in the past).
                _ => {
                    *timer = NEVER;
                    // SAFETY: as above.
                    let q = unsafe { queued.get_unchecked_mut(ci) };
                    if *q != next {
                        *q = next;
                        // SAFETY: the stamp just set queues `c` at most once for `next`.
                        unsafe { wake.push(c) };
                    }
                }
            }
        }
        self.stats.activations += self.active.len as u64;
        self.stats.cycles_executed += 1;

        // Update.
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
}
