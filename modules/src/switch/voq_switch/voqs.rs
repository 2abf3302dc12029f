//! The VOQs of the cell switch (`voq_switch`): per level, input and output a queue (one per
//! input and level in FIFO mode), with the occupancy the allocator's requests and the DT
//! admission read; a cell's arrival and its departure.

use std::collections::VecDeque;

use hwsim_ports::{Cell, MAX_SWITCH_PORTS};

/// The queues and their occupancy, apart from the ports so that a tick can walk its inputs
/// while cells join.
pub(super) struct Voqs {
    pub(super) n: usize,
    pub(super) fifo: bool,
    pub(super) levels: usize,
    /// One level of VOQs and no shared buffer (W1, most studies): the tick is compiled for this
    /// case apart (`PLAIN`), without the level, FIFO and buffer tests on every cell.
    pub(super) plain: bool,
    pub(super) depth: usize,
    pub(super) buffer: usize,
    pub(super) alpha: f64,
    pub(super) reserve: usize,
    /// VOQ (i, o) of level l at `(l * n + i) * n + o`; in FIFO mode one queue per input and
    /// level at `(l * n + i) * n`.
    pub(super) queues: Vec<VecDeque<Cell>>,
    /// Per level and input, the outputs whose VOQ is non-empty (bit o), at `l * 64 + i`.
    pub(super) nonempty: Vec<u64>,
    /// The same seen from the outputs: per level and output, the inputs whose VOQ for it is
    /// non-empty (bit i), at `l * 64 + o`.
    pub(super) nonempty_col: Vec<u64>,
    pub(super) per_input: [u32; MAX_SWITCH_PORTS],
    pub(super) total: u32,
}

/// What became of an arriving cell.
pub(super) enum Arrival {
    Joined,
    Dropped,
    /// Not a cell for this input of this switch (a violation).
    Refused,
}

impl Voqs {
    /// The queue a cell of level l from input i for output o joins.
    #[inline(always)]
    pub(super) fn queue_of<const PLAIN: bool>(&self, l: usize, i: usize, o: usize) -> usize {
        let base = (l * self.n + i) * self.n;
        if !PLAIN && self.fifo {
            base
        } else {
            base + o
        }
    }

    /// A cell arriving at input i joins its VOQ, or is dropped.
    #[inline(always)]
    pub(super) fn arrive<const PLAIN: bool>(&mut self, i: usize, cell: &Cell) -> Arrival {
        let o = cell.dst as usize;
        if o >= self.n || cell.src as usize != i {
            return Arrival::Refused;
        }
        let l = if PLAIN {
            0
        } else {
            (cell.prio as usize).min(self.levels - 1)
        };
        let q = self.queue_of::<PLAIN>(l, i, o);
        let queue = &mut self.queues[q];
        let len = queue.len();
        let admitted = if PLAIN || self.buffer == 0 {
            len < self.depth
        } else {
            // DT (in cells): room in the buffer, and the queue under α × free (or under its
            // reserve).
            let free = (self.buffer - self.total as usize) as u64;
            len < self.depth && crate::switch::dt::admits(len as u64, 1, free, self.reserve as u64, self.alpha)
        };
        if !admitted {
            return Arrival::Dropped;
        }
        queue.push_back(*cell);
        if PLAIN || !self.fifo {
            self.nonempty[l * MAX_SWITCH_PORTS + i] |= 1 << o;
            self.nonempty_col[l * MAX_SWITCH_PORTS + o] |= 1 << i;
        }
        self.per_input[i] += 1;
        self.total += 1;
        Arrival::Joined
    }

    /// The head cell of level l's queue from input i to output o (matched, so non-empty)
    /// leaves it.
    #[inline(always)]
    pub(super) fn depart<const PLAIN: bool>(&mut self, l: usize, i: usize, o: usize) -> Cell {
        let q = self.queue_of::<PLAIN>(l, i, o);
        let queue = &mut self.queues[q];
        // Copied from the queue's buffer, then popped (see `arrivals`).
        let cell = *queue.front().expect("requested queue is non-empty");
        queue.pop_front();
        if (PLAIN || !self.fifo) && queue.is_empty() {
            self.nonempty[l * MAX_SWITCH_PORTS + i] &= !(1 << o);
            self.nonempty_col[l * MAX_SWITCH_PORTS + o] &= !(1 << i);
        }
        self.per_input[i] -= 1;
        self.total -= 1;
        cell
    }
}
