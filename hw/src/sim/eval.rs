//! The cycle: gathering what is due, the evaluate phase (the plain loop, or the clusters'
//! walks), the update phase, and the run loop with event skip (see the parent module).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cluster::{shuffle, Clusters};
use super::lists::Waker;
use super::wake::{fire_timers, update, Clustered, Plain, Wakes};
use super::{ctx, Sim, Stop, NEVER, NOTIFY};
use crate::component::{Component, Ctx, Wake};
use crate::error::SimError;
use crate::Cycle;

/// What an evaluate loop needs beside the list it walks: the per-entry arrays, the timer heap,
/// the context, and where next-cycle requests wait.
struct Eval<'a, 'c> {
    comps: &'a mut [Box<dyn Component>],
    timers: &'a mut [Cycle],
    acts: &'a mut [u64],
    heap: &'a mut BinaryHeap<Reverse<(Cycle, u32)>>,
    ctx: &'a mut Ctx<'c>,
    req: Req<'a>,
    next: Cycle,
}

/// What requests (`Ctx::run_process`) change beside the entries' stamps, apart from the hot
/// loop's locals (built into them, the rare path cost the plain loop spills: W3 +12%).
struct Req<'a> {
    notify: &'a mut [Cycle],
    notify_to: &'a mut [u32],
    notify_run: &'a mut [u64],
    deferred: &'a mut Vec<u32>,
}

impl Sim {
    /// Earliest valid timer, dropping stale heap entries.
    pub(super) fn next_timer(&mut self) -> Option<Cycle> {
        while let Some(&Reverse((t, id))) = self.heap.peek() {
            if id & NOTIFY != 0 {
                let r = (id & !NOTIFY) as usize;
                if self.notify[r] == t {
                    // A request stands until its requester runs again.
                    if self.acts[r] == self.notify_run[r] {
                        return Some(t);
                    }
                    // Out of the heap: `notify` says so (a renewal pushes it again).
                    self.notify[r] = NEVER;
                }
            } else if self.timers[id as usize] == t {
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

    /// The start of cycle `t`: the entries due (woken for `t`, timers due; every one with skip
    /// off) in `active` — blocks, or the clusters that hold them.
    fn gather(&mut self, t: Cycle) {
        std::mem::swap(&mut self.active, &mut self.next_active);
        self.next_active.clear();
        match self.clusters.as_ref() {
            None => self.gather_plain(t),
            Some(cl) => {
                if let Some(&u) = self.active.as_slice().first() {
                    let old = self.unit_queued[u as usize];
                    if old != t {
                        // Clusters were queued for an earlier cycle that `step` skipped past;
                        // their due members are due now.
                        for &u in self.active.as_slice() {
                            self.unit_queued[u as usize] = t;
                            let (s, len) = cl.units[u as usize];
                            for &m in &cl.members[s as usize..(s + len) as usize] {
                                if self.queued[m as usize] == old {
                                    self.queued[m as usize] = t;
                                }
                            }
                        }
                    }
                }
                let mut wake = Clustered {
                    due: &mut self.queued,
                    unit: &cl.unit,
                    unit_queued: &mut self.unit_queued,
                    w: Waker::new(&mut self.active),
                };
                fire_timers(
                    &mut self.heap,
                    &mut self.timers,
                    (&mut self.notify, &self.notify_to, &self.notify_run, &self.acts),
                    &mut wake,
                    t,
                );
                wake.w.done();
                if !self.skip {
                    self.active.fill_all(cl.units.len());
                    self.unit_queued.fill(t);
                    self.queued.fill(t);
                }
                // Combinational writes made before the cycle (a harness poke) wake their
                // readers for this cycle.
                cl.wake_comb_readers(
                    &self.shared,
                    &mut self.queued,
                    &mut self.unit_queued,
                    t,
                    &mut self.active,
                );
            }
        }
        if let Some(rng) = self.shuffle.as_mut() {
            // Only the order the schedule leaves free: of blocks, or of clusters.
            shuffle(rng, &mut self.active);
        }
    }

    fn gather_plain(&mut self, t: Cycle) {
        if !self.active.is_empty() && self.queued[self.active.buf[0] as usize] != t {
            // Entries were queued for an earlier cycle that `step` skipped past; they are due.
            for &c in self.active.as_slice() {
                self.queued[c as usize] = t;
            }
        }
        let mut wake = Plain {
            queued: &mut self.queued,
            w: Waker::new(&mut self.active),
        };
        fire_timers(
            &mut self.heap,
            &mut self.timers,
            (&mut self.notify, &self.notify_to, &self.notify_run, &self.acts),
            &mut wake,
            t,
        );
        wake.w.done();
        if !self.skip {
            self.active.fill_all(self.timers.len());
            self.queued.fill(t);
        }
    }

    pub(super) fn step_at(&mut self, t: Cycle) -> Result<(), SimError> {
        self.gather(t);

        // Evaluate.
        let next = t + 1;
        let mut ctx = ctx!(self, t);
        let mut ev = Eval {
            comps: &mut self.comps[..],
            timers: &mut self.timers[..],
            acts: &mut self.acts[..],
            heap: &mut self.heap,
            ctx: &mut ctx,
            req: Req {
                notify: &mut self.notify[..],
                notify_to: &mut self.notify_to[..],
                notify_run: &mut self.notify_run[..],
                deferred: &mut self.deferred,
            },
            next,
        };
        let list = self.active.as_slice();
        // One waker for the cycle: the evaluation's hints and requests, then the commits, all
        // queue into the next cycle's list.
        let (nets, readers, traced) = (&self.nets[..], &self.reader_list[..], &mut self.traced_changed);
        match self.clusters.as_ref() {
            None => {
                let wake = Plain {
                    queued: &mut self.queued[..],
                    w: Waker::new(&mut self.next_active),
                };
                let mut wake = evaluate_plain(list, &mut ev, wake);
                wake_deferred(ev.req.deferred, &mut wake, next);
                update(t, &self.shared, nets, readers, traced, wake).w.done();
            }
            Some(cl) => {
                let mut wake = Clustered {
                    due: &mut self.queued[..],
                    unit: &cl.unit,
                    unit_queued: &mut self.unit_queued[..],
                    w: Waker::new(&mut self.next_active),
                };
                evaluate_clusters(list, cl, &self.shared, t, &mut ev, &mut wake);
                wake_deferred(ev.req.deferred, &mut wake, next);
                // Combinational writes no one reads (a cluster of one) leave nothing to wake.
                self.shared.drain_comb(|_| {});
                update(t, &self.shared, nets, readers, traced, wake).w.done();
            }
        }
        self.stats.activations += list.len() as u64;
        self.stats.cycles_executed += 1;
        if let Some(tr) = self.tracer.as_mut() {
            tr.cycle(t, &self.traced_changed, self.events.fired(), &self.net_list)?;
        }
        self.events.fired().clear();
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

/// Queues for `next` the entries requests asked for then, once the evaluation is over (an
/// entry due in this cycle and not yet run keeps that).
#[inline]
fn wake_deferred<W: Wakes>(deferred: &mut Vec<u32>, wake: &mut W, next: Cycle) {
    for &e in deferred.iter() {
        // SAFETY: requests name entries of the requesting block.
        unsafe { wake.wake(e, next) };
    }
    deferred.clear();
}

/// Records entry `e`'s wake hint: a timer in the heap, or a place in the next cycle's list.
#[inline(always)]
fn record_hint<W: Wakes>(
    timers: &mut [Cycle],
    heap: &mut BinaryHeap<Reverse<(Cycle, u32)>>,
    next: Cycle,
    wake: &mut W,
    e: u32,
    hint: Wake,
) {
    debug_assert!((e as usize) < timers.len());
    // SAFETY: `e` is an entry (from a list or a cluster's members), `< timers.len()`.
    let timer = unsafe { timers.get_unchecked_mut(e as usize) };
    if let Wake::OnInput = hint {
        // Tested first, alone: a block woken by its inputs then costs one compare here.
        *timer = NEVER;
        return;
    }
    match hint {
        Wake::At(at) if at > next => {
            if *timer != at {
                *timer = at;
                heap.push(Reverse((at, e)));
            }
        }
        // NextCycle, or a timer due next cycle (or in the past).
        _ => {
            *timer = NEVER;
            // SAFETY: as above.
            unsafe { wake.wake(e, next) };
        }
    }
}

/// Takes what process `p` of entry `e` (a block of `procs` processes) asked of its block
/// (`Ctx::run_process`): a later process in this cycle is stamped `due` now (its cluster is
/// the one being walked, and it comes later in the walk); one for the next cycle is deferred
/// until the evaluation ends; one for a later cycle becomes `e`'s request timer, which, like a
/// hint, stands until `e` runs again (the earliest of one run's requests).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn take_requests(
    req: &mut Req<'_>,
    heap: &mut BinaryHeap<Reverse<(Cycle, u32)>>,
    ctx: &mut Ctx<'_>,
    due: &mut [Cycle],
    e: u32,
    p: u32,
    procs: u32,
    run: u64,
) {
    let now = ctx.now;
    let base = e - p;
    // The earliest request for a later cycle, and the process it names.
    let mut timed = (NEVER, 0u32);
    ctx.asked = false;
    for i in 0..ctx.requests.len() {
        let (_, q, at) = ctx.requests[i];
        if q >= procs {
            ctx.violation(format!(
                "run_process({q}): the block has {procs} process(es), 0..={}",
                procs - 1
            ));
            continue;
        }
        let qe = base + q;
        if at <= now && q > p {
            due[qe as usize] = now;
        } else if at <= now + 1 {
            req.deferred.push(qe);
        } else if at < timed.0 {
            timed = (at, qe);
        }
    }
    ctx.requests.clear();
    let ei = e as usize;
    if timed.0 != NEVER {
        // Valid while `e` has not run again (its run count stays this one's).
        req.notify_run[ei] = run;
        // The same request as the standing one: its heap entry is still there (a popped one
        // leaves `notify` at NEVER), renewed by the run count alone, as an unchanged hint is.
        if req.notify[ei] != timed.0 || req.notify_to[ei] != timed.1 {
            req.notify[ei] = timed.0;
            req.notify_to[ei] = timed.1;
            heap.push(Reverse((timed.0, e | NOTIFY)));
        }
    }
}

/// The plain loop: every entry of `list` is a block of one process; ticks each and records its
/// hint. The arrays are taken out of `ev` into locals for the loop (read through the struct,
/// their bases were reloaded after every tick: W3 took 28% more instructions per activation).
#[inline(always)]
fn evaluate_plain<'w>(list: &[u32], ev: &mut Eval<'_, '_>, mut wake: Plain<'w>) -> Plain<'w> {
    let comps = &mut *ev.comps;
    let acts = &mut *ev.acts;
    let timers = &mut *ev.timers;
    let next = ev.next;
    for &c in list {
        let ci = c as usize;
        debug_assert!(ci < comps.len() && ci < acts.len() && ci < timers.len());
        let ctx = &mut *ev.ctx;
        ctx.me = c;
        // SAFETY: active lists hold only entry indices (from elaboration, timers and wake-ups
        // of recorded readers), all `< comps.len()`; in the plain loop an entry is its block,
        // and the per-entry arrays have that length.
        let hint = unsafe { comps.get_unchecked_mut(ci).tick(ctx) };
        unsafe { *acts.get_unchecked_mut(ci) += 1 };
        // The hint, as `record_hint` records it, written out: through the call the plain loop
        // took 9% more instructions per activation (W3).
        // SAFETY: as above.
        let timer = unsafe { timers.get_unchecked_mut(ci) };
        if let Wake::OnInput = hint {
            *timer = NEVER;
            continue;
        }
        match hint {
            Wake::At(at) if at > next => {
                if *timer != at {
                    *timer = at;
                    ev.heap.push(Reverse((at, c)));
                }
            }
            _ => {
                *timer = NEVER;
                // SAFETY: as above.
                unsafe { wake.wake(c, next) };
            }
        }
    }
    if ev.ctx.asked {
        plain_requests(ev, wake.queued);
    }
    wake
}

/// The requests of a plain loop's blocks (one process each: a request names process 0, the
/// block itself), taken after the loop: none of them can be for this cycle.
#[cold]
#[inline(never)]
fn plain_requests(ev: &mut Eval<'_, '_>, queued: &mut [Cycle]) {
    let all = std::mem::take(ev.ctx.requests);
    let mut i = 0;
    while i < all.len() {
        // One block's requests are together (it asked them while it ran).
        let me = all[i].0;
        let mut k = i;
        while k < all.len() && all[k].0 == me {
            ev.ctx.requests.push(all[k]);
            k += 1;
        }
        ev.ctx.me = me;
        let run = ev.acts[me as usize];
        take_requests(&mut ev.req, &mut *ev.heap, &mut *ev.ctx, queued, me, 0, 1, run);
        i = k;
    }
    // Keep the list's buffer (no allocation per cycle).
    *ev.ctx.requests = all;
    ev.ctx.requests.clear();
    ev.ctx.asked = false;
}

/// The clusters of `list`: each walks its members in order and runs those due at `t`; after a
/// member of a cluster of several, the readers of its combinational writes are stamped.
#[inline(always)]
fn evaluate_clusters(
    list: &[u32],
    cl: &Clusters,
    shared: &crate::net::NetShared,
    t: Cycle,
    ev: &mut Eval<'_, '_>,
    wake: &mut Clustered<'_>,
) {
    for &u in list {
        // SAFETY: a list holds cluster indices (`< units.len()`), a cluster's range lies in
        // `members`, and members are entries (`< info.len()`, the per-entry arrays' length; a
        // block index `< comps.len()`).
        let (start, len) = unsafe { *cl.units.get_unchecked(u as usize) };
        if len == 1 {
            // A cluster of one: it is queued only when its member is due, and it has no
            // same-cycle reader to stamp.
            let e = unsafe { *cl.members.get_unchecked(start as usize) };
            run_entry(cl, e, ev, wake);
            continue;
        }
        for i in start..start + len {
            let e = unsafe { *cl.members.get_unchecked(i as usize) };
            if unsafe { *wake.due.get_unchecked(e as usize) } != t {
                continue;
            }
            run_entry(cl, e, ev, wake);
            cl.stamp_comb_readers(shared, wake.due, t, i);
        }
    }
}

/// Runs entry `e` (a process of a block) and records what it asked.
#[inline(always)]
fn run_entry(cl: &Clusters, e: u32, ev: &mut Eval<'_, '_>, wake: &mut Clustered<'_>) {
    let ei = e as usize;
    debug_assert!(ei < cl.info.len() && ei < ev.acts.len());
    // SAFETY: see `evaluate_clusters`.
    let info = unsafe { *cl.info.get_unchecked(ei) };
    ev.ctx.me = info.block;
    let comp = unsafe { ev.comps.get_unchecked_mut(info.block as usize) };
    let hint = if info.process == 0 {
        comp.tick(ev.ctx)
    } else {
        comp.process(info.process as u32, ev.ctx)
    };
    unsafe { *ev.acts.get_unchecked_mut(ei) += 1 };
    if ev.ctx.asked {
        let p = info.process as u32;
        let now = ev.ctx.now;
        if ev.ctx.requests.len() == 1
            && ev.ctx.requests[0].1 == p + 1
            && ev.ctx.requests[0].2 == now
            && p + 1 < info.procs as u32
        {
            // The common request, inline: the block's next process, later in this walk.
            ev.ctx.requests.clear();
            ev.ctx.asked = false;
            // SAFETY: `e + 1` is the block's next process, an entry.
            unsafe { *wake.due.get_unchecked_mut(ei + 1) = ev.ctx.now };
        } else {
            let run = ev.acts[ei];
            take_requests(
                &mut ev.req,
                &mut *ev.heap,
                &mut *ev.ctx,
                wake.due,
                e,
                p,
                info.procs as u32,
                run,
            );
        }
    }
    record_hint(ev.timers, &mut *ev.heap, ev.next, wake, e, hint);
}
