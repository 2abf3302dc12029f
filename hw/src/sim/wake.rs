//! How the kernel queues what is due: an entry in the plain loop, its cluster otherwise
//! (`Wakes`), and the two places wake-ups come from outside a process's own hint: the update
//! phase's commits and the timers (see the parent module).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::lists::Waker;
use super::nets::{commit_narrow, commit_word, NetSlot};
use super::{NEVER, NOTIFY};
use crate::net::{NetShared, WordNet, CHANGED, SPACE_FREED};
use crate::Cycle;

/// Queues an entry for a cycle: in the plain loop the entry itself, else its cluster (and the
/// entry's stamp, which the cluster's walk tests).
pub(super) trait Wakes {
    /// Queues entry `e` for cycle `at` unless it already is.
    ///
    /// # Safety
    /// `e` is an entry of this simulation (a reader, writer or timer recorded at elaboration).
    unsafe fn wake(&mut self, e: u32, at: Cycle);
}

/// The plain loop's: an entry is a block, queued by its stamp.
pub(super) struct Plain<'a> {
    pub(super) queued: &'a mut [Cycle],
    pub(super) w: Waker<'a>,
}

impl Wakes for Plain<'_> {
    #[inline(always)]
    unsafe fn wake(&mut self, e: u32, at: Cycle) {
        // SAFETY: the caller's.
        unsafe { self.w.wake(self.queued, e, at) }
    }
}

/// The clusters': the entry's stamp, and its cluster queued once per cycle.
pub(super) struct Clustered<'a> {
    pub(super) due: &'a mut [Cycle],
    pub(super) unit: &'a [u32],
    pub(super) unit_queued: &'a mut [Cycle],
    pub(super) w: Waker<'a>,
}

impl Wakes for Clustered<'_> {
    #[inline(always)]
    unsafe fn wake(&mut self, e: u32, at: Cycle) {
        debug_assert!((e as usize) < self.due.len());
        // SAFETY: the caller's; `due` and `unit` have one slot per entry, and a unit index is
        // `< unit_queued.len()` by construction (`Clusters::new`).
        unsafe {
            let d = self.due.get_unchecked_mut(e as usize);
            if *d != at {
                *d = at;
                let u = *self.unit.get_unchecked(e as usize);
                self.w.wake(self.unit_queued, u, at);
            }
        }
    }
}

/// The update phase of cycle `t`: commits the dirty nets; a changed one wakes its readers, a
/// freed stream slot its producer, for `t + 1`; traced ones are noted for the tracer.
#[inline(always)]
pub(super) fn update<W: Wakes>(
    t: Cycle,
    shared: &NetShared,
    nets: &[NetSlot],
    reader_list: &[u32],
    traced_changed: &mut Vec<u32>,
    mut wake: W,
) -> W {
    {
        let next = t + 1;
        for cell in shared.take_dirty() {
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
                        // A recorded reader; see `Wakes::wake`.
                        wake.wake(w.head.reader.get(), next);
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
                    // SAFETY: a recorded reader; see `Wakes::wake`.
                    unsafe { wake.wake(start, next) };
                } else {
                    // SAFETY: the range was cut from `reader_list` at construction.
                    let readers = unsafe { reader_list.get_unchecked(start as usize..(start + count) as usize) };
                    for &r in readers {
                        // SAFETY: a recorded reader; see `Wakes::wake`.
                        unsafe { wake.wake(r, next) };
                    }
                }
            }
            if flags & SPACE_FREED != 0 && ns.writer != u32::MAX {
                // SAFETY: a recorded writer; see `Wakes::wake`.
                unsafe { wake.wake(ns.writer, next) };
            }
            if ns.traced {
                traced_changed.push(n);
            }
        }
    }
    wake
}

/// Fires the timers due at `t` (own hints and requests), waking their entries.
#[inline]
pub(super) fn fire_timers<W: Wakes>(
    heap: &mut BinaryHeap<Reverse<(Cycle, u32)>>,
    timers: &mut [Cycle],
    (notify, notify_to, notify_run, acts): (&mut [Cycle], &[u32], &[u64], &[u64]),
    wake: &mut W,
    t: Cycle,
) {
    while let Some(&Reverse((tt, id))) = heap.peek() {
        if tt > t {
            break;
        }
        heap.pop();
        // A request's timer is its requester's; it wakes the process requested.
        let (e, slot) = if id & NOTIFY != 0 {
            let r = (id & !NOTIFY) as usize;
            if notify[r] == tt && acts[r] != notify_run[r] {
                // Withdrawn: its requester ran again since (and asked nothing for then). Out of
                // the heap now, which `notify` says.
                notify[r] = NEVER;
                continue;
            }
            (notify_to[r], &mut notify[r])
        } else {
            (id, &mut timers[id as usize])
        };
        if *slot == tt {
            *slot = NEVER;
            // SAFETY: timers are set only for entries.
            unsafe { wake.wake(e, t) };
        }
    }
}
