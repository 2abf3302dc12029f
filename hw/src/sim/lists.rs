//! Lists of component ids, with room for every component, and the pointer-held pusher the
//! evaluate and update loops use.

use crate::Cycle;

/// A list of component ids with room for every component. A component is queued at most once
/// per cycle (its `queued` stamp), so a push never needs a growth check.
pub(super) struct IdList {
    pub(super) buf: Box<[u32]>,
    pub(super) len: usize,
}

impl IdList {
    pub(super) fn new(n: usize) -> Self {
        IdList {
            buf: vec![0; n].into_boxed_slice(),
            len: 0,
        }
    }
    #[inline(always)]
    pub(super) fn push(&mut self, c: u32) {
        debug_assert!(self.len < self.buf.len());
        // SAFETY: see the type's doc: at most `buf.len()` distinct ids per cycle.
        unsafe { *self.buf.get_unchecked_mut(self.len) = c };
        self.len += 1;
    }
    #[inline(always)]
    pub(super) fn as_slice(&self) -> &[u32] {
        &self.buf[..self.len]
    }
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }
    /// Holds `0..n` (every entry or cluster: a cycle without event skip).
    pub(super) fn fill_all(&mut self, n: usize) {
        for (i, slot) in self.buf[..n].iter_mut().enumerate() {
            *slot = i as u32;
        }
        self.len = n;
    }
}

/// Pushes onto an [`IdList`] through a bare pointer to its next free slot, held in a register
/// for the duration of a loop (through `self`, the base and the length were reloaded after every
/// tick and store: measured on W3); [`Waker::done`] stores the length back.
pub(super) struct Waker<'a> {
    list: &'a mut IdList,
    top: *mut u32,
}

impl<'a> Waker<'a> {
    #[inline(always)]
    pub(super) fn new(list: &'a mut IdList) -> Self {
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
    pub(super) unsafe fn push(&mut self, c: u32) {
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
    pub(super) unsafe fn wake(&mut self, queued: &mut [Cycle], c: u32, at: Cycle) {
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
    pub(super) fn done(self) {
        // SAFETY: `top` was derived from `buf` and stayed within it (or one past its end).
        let len = unsafe { self.top.offset_from(self.list.buf.as_ptr()) };
        debug_assert!(len >= 0 && len as usize <= self.list.buf.len());
        self.list.len = len as usize;
    }
}
