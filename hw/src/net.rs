//! Nets with two-phase commit, and the port handles components hold.
//!
//! A net is written during the evaluate phase of cycle n and committed by the kernel after every
//! awake component has ticked; readers see the new value from cycle n+1. This is `sc_signal`'s
//! current/next pair: evaluation order inside a cycle can never change a result.
//!
//! - A **signal** holds a `Copy` value until rewritten. A commit that changes it wakes its readers.
//! - A **stream** is a bounded FIFO of messages. A push at n is visible to the consumer at n+1; a
//!   pop at n frees space that the producer sees at n+1; at most one push per cycle. A push wakes
//!   the consumer, a pop wakes the producer. Pushing into a full stream, or twice in one cycle, is
//!   a protocol violation that stops the run with the cycle and the net's path.
//!
//! Components never see nets, only typed handles ([`In`], [`Out`], [`StreamIn`], [`StreamOut`]),
//! and the direction lives in the handle's type.

use std::any::{Any, TypeId};
use std::cell::{Cell, OnceCell, Ref, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use crate::value::{SignalValue, TraceField, TraceKind, TraceValue, Value};
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
}

impl NetShared {
    pub(crate) fn new(nets: usize) -> Self {
        let dirty: Box<[Cell<*const NetHead>]> = (0..nets).map(|_| Cell::new(std::ptr::null())).collect();
        let top = Cell::new(dirty.as_ptr());
        NetShared {
            dirty,
            top,
            violation: RefCell::new(None),
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
    fn violate(&self, id: u32, msg: String) {
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
    /// The Rust type name of the value.
    fn value_type(&self) -> &'static str;
    /// Downcast support: `SignalNet<T>` or `StreamNet<T>`.
    fn as_any(&self) -> &dyn Any;
    /// Whether this is a stream (its first traced variable is `valid`).
    fn is_stream(&self) -> bool;
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
    /// The net's index in the simulation.
    pub(crate) id: u32,
    /// The single reader when `fast`.
    pub(crate) reader: Cell<u32>,
}

impl NetHead {
    fn new(id: u32) -> Self {
        NetHead {
            dirty: Cell::new(false),
            fast: Cell::new(false),
            logging: Cell::new(false),
            id,
            reader: Cell::new(0),
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

/// A signal net: current and next value of a `Copy` type.
#[repr(C)]
pub struct SignalNet<T: SignalValue> {
    head: NetHead,
    cur: Cell<T>,
    next: Cell<T>,
    /// Recorded changes, once a check asks for them. Boxed behind a `OnceCell` (8 bytes) so a
    /// signal stays small: the kernel's working set is what bounds large netlists. (For the same
    /// reason the dirty list's owner is held by the driver's [`Out`], not here: a `u64` signal
    /// with its `Rc` header is 56 bytes, one 64-byte heap chunk, where it was 80.)
    log: OnceCell<Box<RefCell<ChangeLog<T>>>>,
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
    pub(crate) fn create(id: u32) -> Rc<Self> {
        Rc::new(SignalNet {
            head: NetHead::new(id),
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
    // Kept out of line so the hot commit stays a leaf without spills.
    #[cold]
    #[inline(never)]
    fn record(&self, now: Cycle, v: T) {
        if let Some(log) = self.log.get() {
            log.borrow_mut().push((now, v));
        }
    }
    /// The recorded changes `(cycle, new value)`, if logging was enabled. The reset value at
    /// cycle 0 is not listed unless written.
    pub fn log(&self) -> Option<Ref<'_, Vec<(Cycle, T)>>> {
        self.log.get().map(|l| l.borrow())
    }
}

impl<T: SignalValue> NetDyn for SignalNet<T> {
    #[inline]
    fn commit(&self, now: Cycle) -> u8 {
        self.head.dirty.set(false);
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
    fn enable_log(&self) {
        let _ = self.log.get_or_init(Default::default);
        self.head.logging.set(true);
        self.head.fast.set(false);
    }
    fn word_size(&self) -> u8 {
        word_size::<T>()
    }
    fn value_type(&self) -> &'static str {
        std::any::type_name::<T>()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn is_stream(&self) -> bool {
        false
    }
}

/// Input side of a signal: read the value committed at the end of the previous cycle.
pub struct In<T: SignalValue>(pub(crate) Rc<SignalNet<T>>);

impl<T: SignalValue> In<T> {
    /// The value as committed at the end of the previous cycle.
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
}

// ------------------------------------------------------------------------------------------------
// Streams

/// A bounded stream net.
///
/// A push goes straight to the back of `items`, flagged `pending` until the commit: the
/// consumer sees only the messages before it, so a push at n is still visible only at n + 1,
/// and the commit moves no message. (It used to hold the push aside in an `Option<T>` and move
/// it in, cloning it once more for the trace: those moves of a freshly written message, through
/// the stack, were half of a commit's time on the switch workloads.)
pub struct StreamNet<T: Value> {
    /// The kernel's part (never `fast`; the dirty list points at it, wherever it lies).
    head: NetHead,
    /// The committed messages not yet popped, then this cycle's push while `pending`.
    items: RefCell<VecDeque<T>>,
    /// Whether the back of `items` is this cycle's push (not yet visible to the consumer).
    pending: Cell<bool>,
    /// Occupancy as committed at the end of the previous cycle: what the producer sees.
    committed_len: Cell<u32>,
    popped: Cell<u32>,
    capacity: u32,
    /// Cycle of the last committed push (`valid` is high at exactly that cycle).
    pushed_at: Cell<Cycle>,
    /// The last message pushed, once a pop has left the stream empty (otherwise it is the back
    /// of `items`): the data lines of the trace hold it.
    last_out: RefCell<Option<T>>,
    pushes: Cell<u64>,
    shared: Rc<NetShared>,
    /// Whether `log` records (a flag read on every commit, the log itself rarely).
    logging: Cell<bool>,
    log: RefCell<Option<Vec<(Cycle, T)>>>,
}

impl<T: Value> StreamNet<T> {
    pub(crate) fn create(id: u32, shared: Rc<NetShared>, capacity: u32) -> Rc<Self> {
        Rc::new(StreamNet {
            // The capacity is a bound, not a preallocation: a deep stream (a user's
            // `depth: 4294967295`) grows only as messages actually queue.
            head: NetHead::new(id),
            items: RefCell::new(VecDeque::with_capacity((capacity as usize).min(1024) + 1)),
            pending: Cell::new(false),
            committed_len: Cell::new(0),
            popped: Cell::new(0),
            capacity,
            pushed_at: Cell::new(Cycle::MAX),
            last_out: RefCell::new(None),
            pushes: Cell::new(0),
            shared,
            logging: Cell::new(false),
            log: RefCell::new(None),
        })
    }
    #[inline]
    fn mark(&self) {
        if !self.head.dirty.get() {
            self.head.dirty.set(true);
            self.shared.mark(&self.head);
        }
    }
    /// Messages the consumer may pop now: the queue without this cycle's push.
    #[inline]
    fn visible(&self, q: &VecDeque<T>) -> usize {
        q.len() - self.pending.get() as usize
    }
    /// Capacity in messages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    /// Messages pushed (committed) so far.
    pub fn pushes(&self) -> u64 {
        self.pushes.get()
    }
    /// Committed occupancy.
    pub fn occupancy(&self) -> u32 {
        self.committed_len.get()
    }
    /// The recorded pushes `(cycle of the push, message)`, if logging was enabled.
    pub fn log(&self) -> Ref<'_, Option<Vec<(Cycle, T)>>> {
        self.log.borrow()
    }
    #[cold]
    #[inline(never)]
    fn record(&self, now: Cycle) {
        let v = self.items.borrow().back().cloned();
        if let (Some(log), Some(v)) = (self.log.borrow_mut().as_mut(), v) {
            log.push((now, v));
        }
    }
}

impl<T: Value> NetDyn for StreamNet<T> {
    #[inline]
    fn commit(&self, now: Cycle) -> u8 {
        self.head.dirty.set(false);
        let mut flags = 0;
        if self.pending.replace(false) {
            if self.logging.get() {
                self.record(now);
            }
            self.pushed_at.set(now);
            self.pushes.set(self.pushes.get() + 1);
            flags |= CHANGED;
        }
        if self.popped.replace(0) > 0 {
            flags |= SPACE_FREED;
        }
        self.committed_len.set(self.items.borrow().len() as u32);
        flags
    }
    fn trace_layout(&self) -> Vec<(String, TraceKind)> {
        let mut l = vec![("valid".to_string(), TraceKind::Bits(1))];
        l.extend(layout_of(T::fields(), "data"));
        let occ_bits = (u32::BITS - self.capacity.leading_zeros()).max(1);
        l.push(("occupancy".to_string(), TraceKind::Bits(occ_bits)));
        l
    }
    fn sample(&self, now: Cycle, out: &mut [TraceValue]) {
        let n = out.len();
        // `pushed_at` starts at Cycle::MAX (never), which is also the reset-sample time.
        out[0] = TraceValue::Bits((now != Cycle::MAX && self.pushed_at.get() == now) as u64);
        // Data lines hold the last message, as an RTL data bus holds after valid falls.
        let items = self.items.borrow();
        let last_out = self.last_out.borrow();
        if let Some(v) = items.back().or(last_out.as_ref()) {
            v.sample(&mut out[1..n - 1]);
        } else {
            let mut slots = out[1..n - 1].iter_mut();
            for f in T::fields() {
                let zero = match f.kind {
                    TraceKind::Real => TraceValue::Real(0.0),
                    _ => TraceValue::Bits(0),
                };
                for o in slots.by_ref().take(f.kind.slots()) {
                    *o = zero;
                }
            }
        }
        out[n - 1] = TraceValue::Bits(self.committed_len.get() as u64);
    }
    fn enable_log(&self) {
        let mut l = self.log.borrow_mut();
        if l.is_none() {
            *l = Some(Vec::new());
        }
        self.logging.set(true);
    }
    fn value_type(&self) -> &'static str {
        std::any::type_name::<T>()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn is_stream(&self) -> bool {
        true
    }
}

/// Consumer side of a stream.
pub struct StreamIn<T: Value>(pub(crate) Rc<StreamNet<T>>);

impl<T: Value> StreamIn<T> {
    /// The head message, if any (pushed at an earlier cycle).
    #[inline]
    pub fn peek(&self) -> Option<Ref<'_, T>> {
        let pending = self.0.pending.get() as usize;
        Ref::filter_map(
            self.0.items.borrow(),
            |q| if q.len() > pending { q.front() } else { None },
        )
        .ok()
    }
    /// Removes and returns the head message; its space is visible to the producer next cycle.
    #[inline]
    pub fn pop(&self) -> Option<T> {
        let net = &*self.0;
        let mut q = net.items.borrow_mut();
        if net.visible(&q) == 0 {
            return None;
        }
        if q.len() == 1 {
            // The stream empties: keep the message for the trace's data lines (copied from
            // where it has long been, not from a fresh temporary).
            *net.last_out.borrow_mut() = q.front().cloned();
        }
        let v = q.pop_front();
        net.popped.set(net.popped.get() + 1);
        net.mark();
        v
    }
    /// Messages available now (after this cycle's pops).
    #[inline]
    pub fn len(&self) -> usize {
        self.0.visible(&self.0.items.borrow())
    }
    /// Whether no message is available.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Capacity in messages.
    pub fn capacity(&self) -> u32 {
        self.0.capacity
    }
}

/// Producer side of a stream.
pub struct StreamOut<T: Value>(pub(crate) Rc<StreamNet<T>>);

impl<T: Value> StreamOut<T> {
    /// Whether a push this cycle would be accepted: space as of the end of the previous cycle and
    /// no push yet this cycle.
    #[inline]
    pub fn can_push(&self) -> bool {
        self.0.committed_len.get() < self.0.capacity && !self.0.pending.get()
    }
    /// Pushes `v` if [`can_push`](Self::can_push), else hands it back.
    #[inline]
    pub fn try_push(&self, v: T) -> Result<(), T> {
        if self.can_push() {
            self.0.items.borrow_mut().push_back(v);
            self.0.pending.set(true);
            self.0.mark();
            Ok(())
        } else {
            Err(v)
        }
    }
    /// Pushes `v`. Pushing into a full stream, or twice in one cycle, is a protocol violation:
    /// the message is dropped and the run stops with an error naming this stream.
    pub fn push(&self, v: T) {
        if let Err(v) = self.try_push(v) {
            let why = if self.0.pending.get() {
                "second push in one cycle".to_string()
            } else {
                format!("push into a full stream (capacity {})", self.0.capacity)
            };
            self.0.shared.violate(self.0.head.id, format!("{why}: {v:?}"));
        }
    }
    /// Occupancy as seen by the producer (committed at the end of the previous cycle).
    #[inline]
    pub fn occupancy(&self) -> u32 {
        self.0.committed_len.get()
    }
    /// Free space as seen by the producer.
    #[inline]
    pub fn space(&self) -> u32 {
        self.0.capacity - self.0.committed_len.get()
    }
}
