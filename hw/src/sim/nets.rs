//! The kernel's record of each net and the commits it makes without a virtual call.

use crate::net::{NetDyn, NetHead, WordNet, CHANGED};
use crate::Cycle;

pub(super) struct NetSlot {
    /// The net (owned by `net_list`) as a plain pointer for the commit loop: dereferencing an `Rc<dyn _>` costs
    /// an alignment computation from the vtable on every use (measured: 6 of ~95 instructions
    /// per W3 activation).
    pub(super) raw: *const dyn NetDyn,
    /// The readers: `(start, count)` of a range in `reader_list`, except that a single reader
    /// (the common case) is `(reader, 1)`, with no list to load.
    pub(super) readers: (u32, u32),
    /// Producer (woken when stream space is freed); `u32::MAX` for constants.
    pub(super) writer: u32,
    /// [`NetDyn::word_size`]: a signal of that many bytes the kernel commits through its
    /// `WordNet` (no virtual call); 0 for the others.
    pub(super) word: u8,
    pub(super) traced: bool,
}

impl NetSlot {
    /// Sets the net's `NetHead::fast` (and its reader): a 64-bit word signal with one reader,
    /// not traced, not logged. Called at construction and when tracing starts; enabling a log
    /// clears the flag itself.
    pub(super) fn set_fast(&self) {
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
pub(super) unsafe fn commit_narrow(ns: &NetSlot, now: Cycle) -> u8 {
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
pub(super) unsafe fn commit_word<W: Copy + PartialEq>(raw: *const dyn NetDyn, now: Cycle) -> u8 {
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
