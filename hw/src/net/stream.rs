//! Streams: bounded FIFOs of messages between one producer and one consumer (see the parent
//! module for the timing).

use std::any::Any;
use std::cell::{Cell, OnceCell, Ref, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use super::{layout_of, log_room, LogBudget, NetDyn, NetHead, NetShared, CHANGED, SPACE_FREED};
use crate::value::{TraceKind, TraceValue, Value};
use crate::Cycle;

/// A bounded stream net.
///
/// A push goes straight to the back of `items`, counted in `pushed` until the commit: the
/// consumer sees only the messages before it, so a push at n is still visible only at n + 1,
/// and the commit moves no message. A stream takes one push per cycle, or up to its declared
/// width (a bundle of lanes: several messages handed over in one cycle). (It used to hold the push aside in an `Option<T>` and move
/// it in, cloning it once more for the trace: those moves of a freshly written message, through
/// the stack, were half of a commit's time on the switch workloads.)
pub struct StreamNet<T: Value> {
    /// The kernel's part (never `fast`; the dirty list points at it, wherever it lies).
    head: NetHead,
    /// The committed messages not yet popped, then this cycle's pushes.
    items: RefCell<VecDeque<T>>,
    /// This cycle's pushes: the back `pushed` messages of `items` (not yet visible to the
    /// consumer of a registered stream).
    pushed: Cell<u32>,
    /// Pushes allowed per cycle: 1, or more for a declared-wide stream (`PortDecl::width`).
    width: u32,
    /// This cycle's pushes, kept while logging (a combinational consumer may pop them before
    /// the commit records them).
    log_pending: RefCell<Vec<T>>,
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
    /// What the log's growth is charged to, if a run set a budget.
    log_budget: OnceCell<Rc<LogBudget>>,
}

impl<T: Value> StreamNet<T> {
    pub(crate) fn create(id: u32, shared: Rc<NetShared>, capacity: u32, comb: bool, width: u32) -> Rc<Self> {
        Rc::new(StreamNet {
            // The capacity is a bound, not a preallocation: a deep stream (a user's
            // `depth: 4294967295`, a TX's queue-op stream of 2 × slots + 2) grows only as
            // messages actually queue, and keeps what it grew to (no allocation once a run has
            // reached its depth). 16 places cover what most streams ever hold; preallocating
            // up to 1 024 cost a 512-slot TX 70 KB of messages it never queues.
            head: NetHead::new(id, comb),
            items: RefCell::new(VecDeque::with_capacity((capacity as usize).min(16) + 1)),
            pushed: Cell::new(0),
            width: width.max(1),
            log_pending: RefCell::new(Vec::new()),
            committed_len: Cell::new(0),
            popped: Cell::new(0),
            capacity,
            pushed_at: Cell::new(Cycle::MAX),
            last_out: RefCell::new(None),
            pushes: Cell::new(0),
            shared,
            logging: Cell::new(false),
            log: RefCell::new(None),
            log_budget: OnceCell::new(),
        })
    }
    #[inline]
    fn mark(&self) {
        if !self.head.dirty.get() {
            self.head.dirty.set(true);
            self.shared.mark(&self.head);
        }
    }
    /// Messages the consumer may pop now: the queue without this cycle's push (with it, for a
    /// combinational stream).
    #[inline]
    fn visible(&self, q: &VecDeque<T>) -> usize {
        q.len() - self.hidden()
    }
    /// This cycle's pushes while they are hidden from the consumer (a registered stream), else 0.
    #[inline]
    fn hidden(&self) -> usize {
        if self.head.comb {
            0
        } else {
            self.pushed.get() as usize
        }
    }
    /// Pushes allowed per cycle.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Whether this is a combinational stream.
    pub fn is_comb(&self) -> bool {
        self.head.comb
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
        let mut pending = self.log_pending.borrow_mut();
        if let Some(log) = self.log.borrow_mut().as_mut() {
            if log_room(log, pending.len(), self.log_budget.get(), now, self.head.id) {
                log.extend(pending.drain(..).map(|v| (now, v)));
            }
        }
        pending.clear();
    }
    #[cold]
    #[inline(never)]
    fn keep_for_log(&self, v: &T) {
        self.log_pending.borrow_mut().push(v.clone());
    }
}

impl<T: Value> NetDyn for StreamNet<T> {
    fn logged_pushes(&self) -> Option<Vec<(Cycle, Vec<TraceValue>)>> {
        let n = crate::value::slot_count(T::fields());
        let log = self.log.borrow();
        let log = log.as_ref()?;
        Some(
            log.iter()
                .map(|(c, v)| {
                    let mut out = vec![TraceValue::Bits(0); n];
                    v.sample(&mut out);
                    (*c, out)
                })
                .collect(),
        )
    }
    #[inline]
    fn commit(&self, now: Cycle) -> u8 {
        self.head.dirty.set(false);
        self.head.woken.set(false);
        let mut flags = 0;
        let pushed = self.pushed.replace(0);
        if pushed > 0 {
            if self.logging.get() {
                self.record(now);
            }
            self.pushed_at.set(now);
            self.pushes.set(self.pushes.get() + u64::from(pushed));
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
    fn set_log_budget(&self, budget: &Rc<LogBudget>) {
        let _ = self.log_budget.set(budget.clone());
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
    fn into_any(self: Rc<Self>) -> Rc<dyn Any> {
        self
    }
    fn is_stream(&self) -> bool {
        true
    }
    fn is_comb(&self) -> bool {
        self.head.comb
    }
    fn pushes(&self) -> Option<u64> {
        Some(self.pushes.get())
    }
}

/// Consumer side of a stream.
pub struct StreamIn<T: Value>(pub(crate) Rc<StreamNet<T>>);

impl<T: Value> StreamIn<T> {
    /// The head message, if any (pushed at an earlier cycle; or in this one, on a combinational
    /// stream).
    #[inline]
    pub fn peek(&self) -> Option<Ref<'_, T>> {
        let hidden = self.0.hidden();
        Ref::filter_map(
            self.0.items.borrow(),
            |q| if q.len() > hidden { q.front() } else { None },
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
    /// Messages available now (after this cycle's pops). From the counters, without borrowing
    /// the queue (a router asks it of every input every cycle): the queue holds the committed
    /// messages less this cycle's pops, then this cycle's pushes, which only a combinational
    /// consumer sees.
    #[inline]
    pub fn len(&self) -> usize {
        let n = &*self.0;
        let seen = if n.head.comb { n.pushed.get() } else { 0 };
        let len = (n.committed_len.get() + seen - n.popped.get()) as usize;
        debug_assert_eq!(len, n.visible(&n.items.borrow()));
        len
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
        let n = &*self.0;
        n.committed_len.get() + n.pushed.get() < n.capacity && n.pushed.get() < n.width
    }
    /// Pushes `v` if [`can_push`](Self::can_push), else hands it back.
    #[inline]
    pub fn try_push(&self, v: T) -> Result<(), T> {
        if self.can_push() {
            if self.0.logging.get() {
                self.0.keep_for_log(&v);
            }
            self.0.items.borrow_mut().push_back(v);
            self.0.pushed.set(self.0.pushed.get() + 1);
            self.0.mark();
            if self.0.head.comb {
                self.0.shared.comb_wake(&self.0.head);
            }
            Ok(())
        } else {
            Err(v)
        }
    }
    /// Pushes `v`. Pushing into a full stream, or twice in one cycle, is a protocol violation:
    /// the message is dropped and the run stops with an error naming this stream.
    pub fn push(&self, v: T) {
        if let Err(v) = self.try_push(v) {
            let why = if self.0.pushed.get() >= self.0.width {
                if self.0.width == 1 {
                    "second push in one cycle".to_string()
                } else {
                    format!("push beyond the stream's width ({} per cycle)", self.0.width)
                }
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
