//! The static schedule at run time: the components of each level of a cycle, the same-cycle
//! readers of the combinational nets, and the drive phase (see the parent module).

use super::{IdList, Stats, NEVER};
use crate::component::{Component, Ctx};
use crate::net::NetShared;
use crate::rng::Rng;
use crate::Cycle;

/// The levels of the static schedule and the same-cycle readers of the combinational nets.
/// Indices are entries (a process of a block; the block itself unless a block has several).
pub(super) struct Levels {
    /// Per entry: its level (0: no combinational input, the first process of its block).
    level: Vec<u32>,
    /// Per entry: its block (the component whose `drive` it runs).
    block: Vec<u32>,
    /// This cycle's later processes of blocks whose earlier process ran, not yet in their
    /// level's list (`evaluate` pushes them, [`Levels::queue_followers`] moves them).
    pub(super) followers: IdList,
    /// This cycle's components of levels 1, 2, …: `lists[l - 1]`, each with room for every
    /// component of its level.
    pub(super) lists: Vec<IdList>,
    /// Per net: the `(start, count)` of its same-cycle readers in `readers` (empty for a
    /// registered net).
    comb_readers: Vec<(u32, u32)>,
    readers: Vec<u32>,
    /// Per component: whether it has a `drive` phase (an output driven from state).
    drives: Vec<bool>,
    /// The blocks with a drive phase, for `--no-skip` (every one drives every cycle).
    all_drives: Vec<u32>,
    /// Whether any block has a drive phase.
    any_drive: bool,
    /// Per component: the cycle for which its `drive` is in `drive_now`, and in `drive_next`.
    now_stamp: Vec<Cycle>,
    next_stamp: Vec<Cycle>,
    /// This cycle's `drive` phase, and the next cycle's: every block with a drive phase woken
    /// in this one. Both are decided from the blocks woken, never from those ticked only
    /// because skip is off, so the end of the run is the same with and without skip.
    drive_now: IdList,
    pub(super) drive_next: IdList,
}

impl Levels {
    pub(super) fn new(
        level: Vec<u32>,
        block: Vec<u32>,
        net_readers: &[Vec<u32>],
        net_comb: &[bool],
        drives: Vec<bool>,
    ) -> Levels {
        let n = level.len();
        let top = level.iter().copied().max().unwrap_or(0) as usize;
        let mut size = vec![0usize; top];
        for &l in &level {
            if l > 0 {
                size[l as usize - 1] += 1;
            }
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
        Levels {
            level,
            block,
            followers: IdList::new(n),
            lists: size.into_iter().map(IdList::new).collect(),
            comb_readers,
            readers,
            all_drives: (0..n as u32).filter(|&c| drives[c as usize]).collect(),
            any_drive: drives.iter().any(|&d| d),
            drives,
            now_stamp: vec![NEVER; n],
            next_stamp: vec![NEVER; n],
            drive_now: IdList::new(n),
            drive_next: IdList::new(n),
        }
    }

    /// The drive lists of cycle `t`: the blocks queued for it by the last cycle, and the blocks
    /// of `woken` (the blocks due now, before `--no-skip` adds the rest) that have a drive
    /// phase, which are also queued for `t + 1`.
    pub(super) fn begin(&mut self, t: Cycle, woken: &[u32]) {
        std::mem::swap(&mut self.drive_now, &mut self.drive_next);
        self.drive_next.clear();
        for &c in self.drive_now.as_slice() {
            self.now_stamp[c as usize] = t;
        }
        for &c in woken {
            let ci = c as usize;
            if !self.drives[ci] {
                continue;
            }
            if self.next_stamp[ci] != t + 1 {
                self.next_stamp[ci] = t + 1;
                self.drive_next.push(c);
            }
            if self.now_stamp[ci] != t {
                self.now_stamp[ci] = t;
                self.drive_now.push(c);
            }
        }
    }

    /// The start of cycle `t` after [`Levels::begin`]: runs the drive phase (every block's with
    /// skip off), then moves the woken blocks of a level above 0 from `active` to their level's
    /// list.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_cycle(
        &mut self,
        t: Cycle,
        skip: bool,
        active: &mut IdList,
        comps: &mut [Box<dyn Component>],
        ctx: &mut Ctx<'_>,
        shuffle_rng: Option<&mut Rng>,
        stats: &mut Stats,
    ) {
        if !skip {
            self.drive_now.clear();
            for &c in &self.all_drives {
                self.now_stamp[c as usize] = t;
                self.drive_now.push(c);
            }
        }
        if !self.drive_now.is_empty() {
            if let Some(rng) = shuffle_rng {
                shuffle(rng, &mut self.drive_now);
            }
            for &c in self.drive_now.as_slice() {
                let b = self.block[c as usize];
                ctx.me = b;
                comps[b as usize].drive(ctx);
            }
            stats.drives += self.drive_now.len as u64;
        }
        // Components of a higher level tick in their level's turn.
        let mut keep = 0;
        for i in 0..active.len {
            let c = active.buf[i];
            match self.level[c as usize] {
                0 => {
                    active.buf[keep] = c;
                    keep += 1;
                }
                l => self.lists[l as usize - 1].push(c),
            }
        }
        active.len = keep;
    }

    /// Moves the followers (later processes of blocks that ran in this cycle, queued by
    /// `evaluate` with this cycle's stamp) to their levels' lists: each is of a level above the
    /// one that queued it, so of a level not yet evaluated.
    #[inline]
    pub(super) fn queue_followers(&mut self) {
        for &e in self.followers.as_slice() {
            let l = self.level[e as usize] as usize;
            debug_assert!(l > 0, "a later process has a level above its block's first");
            self.lists[l - 1].push(e);
        }
        self.followers.clear();
    }

    /// Queues for cycle `t` the readers of the combinational nets woken so far: into their
    /// level's list, or `active` for level 0 (readers only of outputs driven from state). A
    /// reader of a level below `from` has ticked already: its driver wrote after it read, which
    /// only a block writing an output declared from state in its `tick` can do; that is
    /// reported as a protocol violation of the net.
    #[inline(always)]
    pub(super) fn wake_comb_readers(
        &mut self,
        shared: &NetShared,
        queued: &mut [Cycle],
        t: Cycle,
        active: &mut IdList,
        from: usize,
    ) {
        for n in shared.take_comb() {
            let n = n.get();
            let (start, count) = self.comb_readers[n as usize];
            for i in start..start + count {
                let r = self.readers[i as usize];
                let ri = r as usize;
                let l = self.level[ri] as usize;
                if l < from {
                    late_write(shared, n);
                    continue;
                }
                // Woken by a change: with or without skip, it drives again next cycle.
                if self.any_drive && self.drives[ri] && self.next_stamp[ri] != t + 1 {
                    self.next_stamp[ri] = t + 1;
                    self.drive_next.push(r);
                }
                let q = &mut queued[ri];
                if *q != t {
                    *q = t;
                    match l {
                        0 => active.push(r),
                        l => self.lists[l - 1].push(r),
                    }
                }
            }
        }
    }
}

/// Reports a combinational net written after its reader ticked (out of line: never taken by a
/// block that keeps the contract).
#[cold]
#[inline(never)]
fn late_write(shared: &NetShared, net: u32) {
    shared.violate(
        net,
        "combinational output written after its reader ticked (an output declared from state is written only in `drive`)"
            .to_string(),
    );
}

/// Shuffles a list in place (the contract test of `Sim::set_shuffle`).
pub(super) fn shuffle(rng: &mut Rng, list: &mut IdList) {
    for i in (1..list.len).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        list.buf.swap(i, j);
    }
}
