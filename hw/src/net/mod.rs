//! Nets with two-phase commit, and the port handles components hold.
//!
//! A net is written during the evaluate phase of cycle n and committed by the kernel after every
//! awake component has ticked; readers see the new value from cycle n+1. This is `sc_signal`'s
//! current/next pair: evaluation order inside a cycle can never change a result.
//!
//! - A **signal** holds a `Copy` value until rewritten. A commit that changes it wakes its readers.
//! - A **combinational** signal or stream (a net created for a port declared `comb`) is seen by
//!   its readers in the cycle it is written: the driver's write goes straight to the value the
//!   readers read, and the first change in a cycle puts the net on the same-cycle wake list, from
//!   which the kernel wakes its readers for the current cycle (they tick after the driver: the
//!   static order, `sim.rs`). The commit then only records the change for the trace and the log;
//!   it wakes nobody for the next cycle. A combinational stream's push is visible to the consumer
//!   at once; the space a pop frees is still seen by the producer at n + 1, as a registered ready
//!   would be.
//! - A **stream** is a bounded FIFO of messages. A push at n is visible to the consumer at n+1; a
//!   pop at n frees space that the producer sees at n+1; at most one push per cycle. A push wakes
//!   the consumer, a pop wakes the producer. Pushing into a full stream, or twice in one cycle, is
//!   a protocol violation that stops the run with the cycle and the net's path.
//!
//! Components never see nets, only typed handles ([`In`], [`Out`], [`StreamIn`], [`StreamOut`]),
//! and the direction lives in the handle's type.

use std::any::{Any, TypeId};
use std::cell::{Cell, OnceCell, Ref, RefCell};
use std::rc::Rc;

use crate::value::{SignalValue, TraceField, TraceKind, TraceValue};
use crate::Cycle;

/// State shared by all nets of one simulation: the dirty list the kernel commits, and the first
/// protocol violation seen this cycle.
///
/// A net is marked dirty at most once per cycle (its own `dirty` flag guards it), so the list is
/// a fixed buffer of one slot per net: marking is a store through `top` and a bump, never a growth
/// check (a pointer rather than a length: one load less per write, measured on W3). The list holds
/// the nets' [`NetHead`]s, so the kernel reaches a dirty net without an index.
pub(crate) struct NetShared {
    dirty: Box<[Cell<*const NetHead>]>,
    /// The next free slot of `dirty`.
    top: Cell<*const Cell<*const NetHead>>,
    pub(crate) violation: RefCell<Option<(u32, String)>>,
    /// Combinational nets that changed (signals) or took a push (streams) since the kernel last
    /// looked: their readers tick in this cycle. Each net is listed at most once between two
    /// drains (its `woken` flag, cleared by the drain), and the kernel drains the list at least
    /// once per cycle, so one slot per net is room enough.
    comb: Box<[Cell<*const NetHead>]>,
    comb_len: Cell<usize>,
}

impl NetShared {
    pub(crate) fn new(nets: usize) -> Self {
        let dirty: Box<[Cell<*const NetHead>]> = (0..nets).map(|_| Cell::new(std::ptr::null())).collect();
        let top = Cell::new(dirty.as_ptr());
        NetShared {
            dirty,
            top,
            violation: RefCell::new(None),
            comb: (0..nets).map(|_| Cell::new(std::ptr::null())).collect(),
            comb_len: Cell::new(0),
        }
    }
    #[inline]
    fn comb_wake(&self, head: &NetHead) {
        if !head.woken.get() {
            head.woken.set(true);
            let n = self.comb_len.get();
            // A net is listed at most once between drains (`woken`, cleared by the drain), and
            // the kernel drains at least once per cycle: `n < comb.len()`.
            self.comb[n].set(head);
            self.comb_len.set(n + 1);
        }
    }
    /// Calls `f` with the id of each combinational net woken since the last drain, and empties
    /// the list; each may be woken again (a write after the drain lists it anew, so a write
    /// after its reader ran is seen). `f` must not write nets.
    #[inline]
    pub(crate) fn drain_comb(&self, mut f: impl FnMut(u32)) {
        let n = self.comb_len.replace(0);
        for c in &self.comb[..n] {
            // SAFETY: the list holds the heads of this simulation's nets, which live as long as
            // the simulation (`comb_wake` is only called by its nets).
            let head = unsafe { &*c.get() };
            head.woken.set(false);
            f(head.id);
        }
    }

    #[inline(always)]
    fn mark(&self, head: &NetHead) {
        let p = self.top.get();
        debug_assert!(self.dirty_len() < self.dirty.len());
        // SAFETY: one slot per net, and a net marks itself at most once per cycle (its `dirty`
        // flag, cleared by its commit), so at most `dirty.len()` marks happen before the kernel
        // empties the list: `p` is in the buffer, and `p + 1` at most one past its end.
        unsafe {
            (*p).set(head);
            self.top.set(p.add(1));
        }
    }
    fn dirty_len(&self) -> usize {
        // SAFETY: `top` is derived from `dirty`'s pointer and stays within it (or one past).
        unsafe { self.top.get().offset_from(self.dirty.as_ptr()) as usize }
    }
    /// Whether anything was written since the last update (a harness poke before `run`).
    pub(crate) fn has_dirty(&self) -> bool {
        self.top.get() != self.dirty.as_ptr()
    }
    /// This cycle's dirty nets; the list is emptied. Commits never mark a net dirty, so the
    /// slots stay valid while the kernel walks them.
    #[inline]
    pub(crate) fn take_dirty(&self) -> &[Cell<*const NetHead>] {
        let n = self.dirty_len();
        self.top.set(self.dirty.as_ptr());
        &self.dirty[..n]
    }
    pub(crate) fn violate(&self, id: u32, msg: String) {
        // The lowest net id wins, whatever the evaluation order.
        let mut v = self.violation.borrow_mut();
        if v.as_ref().is_none_or(|(n, _)| id < *n) {
            *v = Some((id, msg));
        }
    }
}

/// Commit result flags.
pub(crate) const CHANGED: u8 = 1;
pub(crate) const SPACE_FREED: u8 = 2;

/// What the kernel needs of any net, whatever its value type.
pub trait NetDyn: Any {
    /// Commits this cycle's writes; returns [`CHANGED`] / [`SPACE_FREED`] flags.
    #[doc(hidden)]
    fn commit(&self, now: Cycle) -> u8;
    /// The traced variables: name suffix (empty for the port itself) and kind.
    fn trace_layout(&self) -> Vec<(String, TraceKind)>;
    /// Samples the traced variables as of the end of cycle `now` (one slot per variable, a wide
    /// variable's words for a [`TraceKind::Wide`] one).
    fn sample(&self, now: Cycle, out: &mut [TraceValue]);
    /// Starts recording every committed change (signals) or push (streams) for checks.
    fn enable_log(&self);
    /// Charges the growth of this net's log (once enabled) to `budget`.
    fn set_log_budget(&self, budget: &Rc<LogBudget>);
    /// The Rust type name of the value.
    fn value_type(&self) -> &'static str;
    /// Downcast support: `SignalNet<T>` or `StreamNet<T>`.
    fn as_any(&self) -> &dyn Any;
    /// The shared net as `Rc<dyn Any>` (downcast to `Rc<SignalNet<T>>` or `Rc<StreamNet<T>>`).
    fn into_any(self: Rc<Self>) -> Rc<dyn Any>;
    /// Whether this is a stream (its first traced variable is `valid`).
    fn is_stream(&self) -> bool;
    /// Whether this is a combinational net (read by its readers in the cycle it is written).
    fn is_comb(&self) -> bool {
        false
    }
    /// Marks the net traced (the kernel's: a traced net's changes go through its commit).
    #[doc(hidden)]
    fn set_traced(&self) {}
    /// Marks a signal bound to a reader (the kernel's, at elaboration: see [`Out::observed`]).
    #[doc(hidden)]
    fn set_read(&self) {}
    /// For a stream: the messages pushed (committed) so far; `None` for a signal.
    fn pushes(&self) -> Option<u64> {
        None
    }
    /// For a stream whose log is enabled ([`NetDyn::enable_log`]): every push, in order, as
    /// (cycle of the push, its data fields sampled as [`NetDyn::sample`] samples them, without
    /// `valid` and `occupancy`) — every message of a cycle, where the wave shows the last.
    fn logged_pushes(&self) -> Option<Vec<(Cycle, Vec<TraceValue>)>> {
        None
    }
    /// For a signal of `bool` or an unsigned integer (u8 … u64): its size in bytes (1, 2, 4 or
    /// 8), and the net is a `#[repr(C)]` [`SignalNet`] the kernel may commit through its
    /// `WordNet`; 0 otherwise.
    #[doc(hidden)]
    fn word_size(&self) -> u8 {
        0
    }
}

fn layout_of(fields: &[TraceField], single_name: &str) -> Vec<(String, TraceKind)> {
    fields
        .iter()
        .map(|f| {
            let name = if f.name.is_empty() {
                single_name.to_string()
            } else {
                f.name.to_string()
            };
            (name, f.kind)
        })
        .collect()
}

// ------------------------------------------------------------------------------------------------
// Signals

/// A signal's recorded changes: (cycle, new value).
pub type ChangeLog<T> = Vec<(Cycle, T)>;

/// The memory the logs of one simulation's nets may take, bytes (the run's `--max-memory`
/// share), and what they take: every growth of a log is charged before it allocates, and a
/// growth over the limit is refused — the log stops there and the first refusal is kept (cycle,
/// net), for the runner to end the run with an error instead of checking a history cut short.
#[derive(Debug)]
pub struct LogBudget {
    limit: u64,
    used: Cell<u64>,
    refused: Cell<Option<(Cycle, u32)>>,
}

impl LogBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Rc<LogBudget> {
        Rc::new(LogBudget {
            limit,
            used: Cell::new(0),
            refused: Cell::new(None),
        })
    }
    /// Bytes the logs hold (their allocated room).
    pub fn used(&self) -> u64 {
        self.used.get()
    }
    /// The limit, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }
    /// The first growth refused: its cycle and the net's id.
    pub fn refused(&self) -> Option<(Cycle, u32)> {
        self.refused.get()
    }
    /// Charges `bytes` for net `net` at `now` if they fit; otherwise records the refusal.
    fn take(&self, bytes: u64, now: Cycle, net: u32) -> bool {
        let used = self.used.get().saturating_add(bytes);
        if used > self.limit || self.refused.get().is_some() {
            if self.refused.get().is_none() {
                self.refused.set(Some((now, net)));
            }
            return false;
        }
        self.used.set(used);
        true
    }
}

/// Makes room in `log` for `more` entries, charged to `budget` (if any) before it allocates:
/// the room at least doubles, as a `Vec`'s would. Returns false (nothing allocated) when the
/// budget refuses.
fn log_room<T>(log: &mut Vec<(Cycle, T)>, more: usize, budget: Option<&Rc<LogBudget>>, now: Cycle, net: u32) -> bool {
    if log.capacity() - log.len() >= more {
        return true;
    }
    let add = log.capacity().max(more).max(4);
    if let Some(b) = budget {
        if !b.take((add * std::mem::size_of::<(Cycle, T)>()) as u64, now, net) {
            return false;
        }
    }
    log.reserve_exact(add);
    true
}

/// A signal's recorded changes and the budget they are charged to.
struct SignalLog<T> {
    changes: RefCell<ChangeLog<T>>,
    budget: OnceCell<Rc<LogBudget>>,
}

impl<T> Default for SignalLog<T> {
    fn default() -> Self {
        SignalLog {
            changes: RefCell::new(Vec::new()),
            budget: OnceCell::new(),
        }
    }
}

/// The kernel's part of every net, first in its `#[repr(C)]` layout: what the update loop reads
/// of a dirty net before (and, on its fast path, instead of) anything else.
#[repr(C)]
pub(crate) struct NetHead {
    /// Marked this cycle (in the dirty list).
    pub(crate) dirty: Cell<bool>,
    /// Set by the kernel for a 64-bit word signal (see [`NetDyn::word_size`]) with exactly one
    /// reader, not traced and not logged: the update loop commits it through a
    /// [`WordNet<u64>`] and wakes `reader`, with no other look-up.
    pub(crate) fast: Cell<bool>,
    /// Whether changes are logged (a signal's log; the kernel then takes the virtual commit,
    /// which records). Enabling a log clears `fast`.
    pub(crate) logging: Cell<bool>,
    /// A combinational net (fixed at creation): written values are read in the same cycle.
    pub(crate) comb: bool,
    /// Traced or logged: a combinational signal's changes then go through the commit (for the
    /// trace and the log); otherwise its same-cycle write is all there is, and it is never
    /// marked dirty.
    pub(crate) recorded: Cell<bool>,
    /// A combinational net already on this cycle's same-cycle wake list (cleared by the commit).
    pub(crate) woken: Cell<bool>,
    /// The net's index in the simulation.
    pub(crate) id: u32,
    /// The single reader when `fast`.
    pub(crate) reader: Cell<u32>,
    /// Bound to a reader (set by the kernel at elaboration): with `recorded`, what
    /// [`Out::observed`] says.
    pub(crate) read: Cell<bool>,
}

impl NetHead {
    fn new(id: u32, comb: bool) -> Self {
        NetHead {
            dirty: Cell::new(false),
            fast: Cell::new(false),
            logging: Cell::new(false),
            comb,
            recorded: Cell::new(false),
            woken: Cell::new(false),
            id,
            reader: Cell::new(0),
            read: Cell::new(false),
        }
    }
}

/// The view of a signal the kernel commits itself, without a virtual call, when the value is a
/// `bool` or an unsigned integer (see [`NetDyn::word_size`]): a `*const SignalNet<T>` read as a
/// `*const WordNet<W>` (W the unsigned integer of T's size, hence of its alignment) sees the same
/// cells, both being `#[repr(C)]` with these fields first. Integers and `bool` compare bitwise,
/// so the kernel's comparison of the words is `T`'s own `PartialEq`.
#[repr(C)]
pub(crate) struct WordNet<W> {
    pub(crate) head: NetHead,
    pub(crate) cur: Cell<W>,
    pub(crate) next: Cell<W>,
}

/// A signal net: current and next value of a `Copy` type. In a combinational net `cur` is the
/// value readers see (written by the driver during the cycle) and `next` the value it had when
/// the cycle began, so the commit can tell the trace whether it changed.
#[repr(C)]
pub struct SignalNet<T: SignalValue> {
    head: NetHead,
    cur: Cell<T>,
    next: Cell<T>,
    /// Recorded changes, once a check asks for them. Boxed behind a `OnceCell` (8 bytes) so a
    /// signal stays small: the kernel's working set is what bounds large netlists. (For the same
    /// reason the dirty list's owner is held by the driver's [`Out`], not here: a `u64` signal
    /// with its `Rc` header is 56 bytes, one 64-byte heap chunk, where it was 80.)
    log: OnceCell<Box<SignalLog<T>>>,
}

/// The size in bytes of `T` when it is `bool` or an unsigned integer with a [`Trace`](crate::value::Trace) impl (values
/// whose `PartialEq` is bitwise equality of their bytes), else 0.
fn word_size<T: 'static>() -> u8 {
    let t = TypeId::of::<T>();
    let word = [
        TypeId::of::<bool>(),
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
    ]
    .contains(&t);
    if word {
        std::mem::size_of::<T>() as u8
    } else {
        0
    }
}

impl<T: SignalValue> SignalNet<T> {
    pub(crate) fn create(id: u32, comb: bool) -> Rc<Self> {
        Rc::new(SignalNet {
            head: NetHead::new(id, comb),
            cur: Cell::new(T::default()),
            next: Cell::new(T::default()),
            log: OnceCell::new(),
        })
    }
    /// The committed value.
    #[inline]
    pub fn get(&self) -> T {
        self.cur.get()
    }
    #[inline]
    fn set(&self, v: T, shared: &NetShared) {
        self.next.set(v);
        if !self.head.dirty.get() {
            self.head.dirty.set(true);
            shared.mark(&self.head);
        }
    }
    /// A combinational write: readers see `v` at once; the first change in a cycle wakes them
    /// for this cycle.
    #[inline]
    fn set_comb(&self, v: T, shared: &NetShared) {
        // A write of the value it holds changes nothing: no commit, no wake (a block that shows
        // its state every time it runs costs nothing on the nets that did not move).
        if v == self.cur.get() {
            return;
        }
        // Only a traced or logged net is committed (to record the change); the readers are
        // stamped through the same-cycle list either way.
        if self.head.recorded.get() && !self.head.dirty.get() {
            self.head.dirty.set(true);
            // The value the cycle began with, for the commit's change test.
            self.next.set(self.cur.get());
            shared.mark(&self.head);
        }
        self.cur.set(v);
        shared.comb_wake(&self.head);
    }
    /// Whether this is a combinational net.
    pub fn is_comb(&self) -> bool {
        self.head.comb
    }
    // Kept out of line so the hot commit stays a leaf without spills.
    #[cold]
    #[inline(never)]
    fn record(&self, now: Cycle, v: T) {
        if let Some(log) = self.log.get() {
            let mut changes = log.changes.borrow_mut();
            if log_room(&mut changes, 1, log.budget.get(), now, self.head.id) {
                changes.push((now, v));
            }
        }
    }
    /// The recorded changes `(cycle, new value)`, if logging was enabled. The reset value at
    /// cycle 0 is not listed unless written.
    pub fn log(&self) -> Option<Ref<'_, Vec<(Cycle, T)>>> {
        self.log.get().map(|l| l.changes.borrow())
    }
}

impl<T: SignalValue> NetDyn for SignalNet<T> {
    #[inline]
    fn commit(&self, now: Cycle) -> u8 {
        self.head.dirty.set(false);
        if self.head.comb {
            // Written in place during the cycle; `next` held the value the cycle began with.
            self.head.woken.set(false);
            let v = self.cur.get();
            if v == self.next.get() {
                return 0;
            }
            self.next.set(v);
            if self.log.get().is_some() {
                self.record(now, v);
            }
            return CHANGED;
        }
        let n = self.next.get();
        if n != self.cur.get() {
            self.cur.set(n);
            if self.log.get().is_some() {
                self.record(now, n);
            }
            CHANGED
        } else {
            0
        }
    }
    fn trace_layout(&self) -> Vec<(String, TraceKind)> {
        layout_of(T::fields(), "")
    }
    fn sample(&self, _now: Cycle, out: &mut [TraceValue]) {
        self.cur.get().sample(out);
    }
    fn set_log_budget(&self, budget: &Rc<LogBudget>) {
        if let Some(l) = self.log.get() {
            let _ = l.budget.set(budget.clone());
        }
    }
    fn enable_log(&self) {
        let _ = self.log.get_or_init(Default::default);
        self.head.logging.set(true);
        self.head.recorded.set(true);
        self.head.fast.set(false);
    }
    fn set_traced(&self) {
        self.head.recorded.set(true);
    }
    fn set_read(&self) {
        self.head.read.set(true);
    }
    fn word_size(&self) -> u8 {
        // A combinational net commits differently (see `commit`): never through a `WordNet`.
        if self.head.comb {
            0
        } else {
            word_size::<T>()
        }
    }
    fn is_comb(&self) -> bool {
        self.head.comb
    }
    fn value_type(&self) -> &'static str {
        std::any::type_name::<T>()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Rc<Self>) -> Rc<dyn Any> {
        self
    }
    fn is_stream(&self) -> bool {
        false
    }
}

/// Input side of a signal: read the value committed at the end of the previous cycle (of a
/// combinational signal: the value its driver wrote in this cycle, or holds from before).
pub struct In<T: SignalValue>(pub(crate) Rc<SignalNet<T>>);

impl<T: SignalValue> In<T> {
    /// The value as committed at the end of the previous cycle (combinational: as driven now).
    #[inline]
    pub fn get(&self) -> T {
        self.0.get()
    }
}

/// Output side of a signal: the single driver. It holds the simulation's dirty list beside the
/// net, so a write finds both in the driving component's own memory.
pub struct Out<T: SignalValue> {
    net: Rc<SignalNet<T>>,
    shared: Rc<NetShared>,
}

impl<T: SignalValue> Out<T> {
    pub(crate) fn new(net: Rc<SignalNet<T>>, shared: Rc<NetShared>) -> Self {
        Out { net, shared }
    }
    /// Drives `v`; readers see it from the next cycle. Writing the current value is a no-op for
    /// readers (no wake-up, nothing traced). The last write in a cycle wins.
    #[inline]
    pub fn set(&self, v: T) {
        self.net.set(v, &self.shared)
    }
    /// The value as committed at the end of the previous cycle (what readers see now).
    #[inline]
    pub fn get(&self) -> T {
        self.net.get()
    }
    /// Drives `v` only if it differs from the committed value: a state signal shown every tick
    /// then costs a comparison, not a commit. (Use once per cycle: a second write in the same
    /// cycle must be a plain [`set`](Self::set).)
    #[inline]
    pub fn update(&self, v: T) {
        if self.net.get() != v {
            self.net.set(v, &self.shared)
        }
    }
    /// Whether anything sees this signal cycle by cycle: a reader bound to it, the trace, a
    /// testbench check or probe, a shadowing RTL. A block may leave a signal nobody observes
    /// unwritten between its events (a serializer's byte count, which it also sends once per frame
    /// as a function of time for a monitor to integrate), but must then drive it
    /// exactly at every cycle whenever it is observed. Fixed before the first cycle.
    #[inline]
    pub fn observed(&self) -> bool {
        self.net.head.read.get() || self.net.head.recorded.get()
    }
}

/// Output side of a combinational signal: the single driver. Its readers, ticked after it in the
/// same cycle (the kernel's static order), see what it writes at once.
///
/// A combinational signal holds its value until rewritten, like any signal: a driver that is not
/// ticked in a cycle keeps its output, so what it drives must be a function of its state and of
/// inputs that have not changed (a one-cycle event belongs on a combinational stream).
pub struct CombOut<T: SignalValue> {
    net: Rc<SignalNet<T>>,
    shared: Rc<NetShared>,
}

impl<T: SignalValue> CombOut<T> {
    pub(crate) fn new(net: Rc<SignalNet<T>>, shared: Rc<NetShared>) -> Self {
        debug_assert!(net.head.comb);
        CombOut { net, shared }
    }
    /// Drives `v`; readers ticked later in this cycle see it. Writing the current value wakes
    /// nobody and traces nothing. The last write in a cycle wins (readers run after the driver).
    #[inline]
    pub fn set(&self, v: T) {
        self.net.set_comb(v, &self.shared)
    }
    /// The value readers see now (this cycle's write, or the value held from before).
    #[inline]
    pub fn get(&self) -> T {
        self.net.get()
    }
}

mod stream;
pub use stream::{StreamIn, StreamNet, StreamOut};
