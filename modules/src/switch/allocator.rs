//! The crossbar allocator contract (seed 003 «iSLIP 调度»): each crossbar slot, every input says
//! which outputs it holds cells for, and the allocator returns a matching — each input to at most
//! one output and each output to at most one input. One file per variant behind this small
//! contract, as BookSim2's allocators are: [`Islip`](super::islip::Islip),
//! [`Pim`](super::pim::Pim) and, for input-FIFO switches, [`Fifo`](super::fifo::Fifo).
//!
//! Requests and matches are bit masks (≤ 64 ports), so one slot costs O(N × iterations) word
//! operations and allocates nothing.

use hwsim_hw::Rng;
use hwsim_ports::MAX_SWITCH_PORTS;

/// Which allocator a switch uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocatorKind {
    /// iSLIP (McKeown 1999): round-robin grant and accept pointers, 1–4 iterations.
    #[default]
    Islip,
    /// Parallel iterative matching (Anderson et al. 1993): random grants and accepts.
    Pim,
    /// Input FIFOs (no VOQ): each input requests only its head cell's output; each output grants
    /// round robin. The head-of-line blocking baseline.
    Fifo,
}

impl AllocatorKind {
    /// One allocator of this kind per priority level, with `iterations` each (FIFO has none).
    pub fn build_levels(self, iterations: usize, levels: usize) -> Result<Vec<Box<dyn Allocator>>, String> {
        (0..levels)
            .map(|_| -> Result<Box<dyn Allocator>, String> {
                Ok(match self {
                    AllocatorKind::Islip => Box::new(super::islip::Islip::new(iterations)?),
                    AllocatorKind::Pim => Box::new(super::pim::Pim::new(iterations)?),
                    AllocatorKind::Fifo => Box::new(super::fifo::Fifo::new()),
                })
            })
            .collect()
    }
}

/// One slot's requests: `req[i]` has bit o set when input i holds a cell for output o, and
/// `col[o]` is the same matrix seen from the outputs (bit i set when input i asks for o). A
/// switch that keeps its queues' occupancy both ways fills both; one that writes only the rows
/// calls [`fill_columns`](Requests::fill_columns).
#[derive(Clone, Debug)]
pub struct Requests {
    /// Per input, the outputs requested.
    pub req: [u64; MAX_SWITCH_PORTS],
    /// Per output, the inputs requesting it: the transpose of `req`.
    pub col: [u64; MAX_SWITCH_PORTS],
    /// Ports in use (N).
    pub ports: usize,
}

impl Requests {
    /// No requests on `ports` ports.
    pub fn new(ports: usize) -> Requests {
        Requests {
            req: [0; MAX_SWITCH_PORTS],
            col: [0; MAX_SWITCH_PORTS],
            ports,
        }
    }
    /// Sets `col` to the transpose of `req`.
    pub fn fill_columns(&mut self) {
        self.col = [0; MAX_SWITCH_PORTS];
        for i in 0..self.ports {
            let mut outs = self.req[i];
            while outs != 0 {
                let o = outs.trailing_zeros() as usize;
                outs &= outs - 1;
                self.col[o] |= 1 << i;
            }
        }
    }
    /// Whether `col` is the transpose of `req` (for debug assertions).
    pub fn columns_agree(&self) -> bool {
        (0..self.ports).all(|o| {
            let mut c = 0u64;
            for i in 0..self.ports {
                c |= (self.req[i] >> o & 1) << i;
            }
            c == self.col[o]
        })
    }
}

/// A matching: `out_of[i]` is input i's output, if matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matching {
    /// Per input, the matched output.
    pub out_of: [Option<u8>; MAX_SWITCH_PORTS],
    /// Matches made.
    pub size: usize,
    /// The matched inputs (bit i), kept by [`set`](Self::set): a switch visits its matches,
    /// and [`clear`](Self::clear) forgets them, without scanning every input.
    pub ins: u64,
}

impl Matching {
    /// The empty matching.
    pub fn empty() -> Matching {
        Matching {
            out_of: [None; MAX_SWITCH_PORTS],
            size: 0,
            ins: 0,
        }
    }
    /// Forgets every match.
    #[inline]
    pub fn clear(&mut self) {
        // Only the matched entries are set (`set` is the only writer).
        while self.ins != 0 {
            self.out_of[self.ins.trailing_zeros() as usize] = None;
            self.ins &= self.ins - 1;
        }
        self.size = 0;
    }
    /// Matches input i with output o.
    #[inline]
    pub fn set(&mut self, i: usize, o: usize) {
        debug_assert!(self.out_of[i].is_none());
        self.out_of[i] = Some(o as u8);
        self.size += 1;
        self.ins |= 1 << i;
    }
    /// The matches `(input, output)`, by input.
    #[inline]
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut ins = self.ins;
        std::iter::from_fn(move || {
            if ins == 0 {
                return None;
            }
            let i = ins.trailing_zeros() as usize;
            ins &= ins - 1;
            self.out_of[i].map(|o| (i, o as usize))
        })
    }
}

/// A crossbar allocator: holds its own state (pointers) between slots. Its pointers move only
/// for ports it matches in that slot (a switch drives its pointer waves from the matches alone).
pub trait Allocator {
    /// Computes this slot's matching into `m` (cleared first). `rng` is the switch's stream (PIM
    /// draws from it; the others ignore it).
    fn allocate(&mut self, r: &Requests, rng: &mut Rng, m: &mut Matching);
    /// Round-robin pointer of output `o` (its grant pointer), for the waves; 0 if none.
    fn grant_ptr(&self, _o: usize) -> usize {
        0
    }
    /// Round-robin pointer of input `i` (its accept pointer), for the waves; 0 if none.
    fn accept_ptr(&self, _i: usize) -> usize {
        0
    }
    /// The grant pointers (per output) and accept pointers (per input) as arrays, when the
    /// allocator keeps both: a switch reads them for its waves without two virtual calls per
    /// match. `None`: ask [`grant_ptr`](Self::grant_ptr) and [`accept_ptr`](Self::accept_ptr).
    fn pointers(&self) -> Option<(&[u8; MAX_SWITCH_PORTS], &[u8; MAX_SWITCH_PORTS])> {
        None
    }
}

/// The first set bit of `mask` at or after position `from`, wrapping around `n` bits.
#[inline]
pub fn first_from(mask: u64, from: usize, n: usize) -> Option<usize> {
    if mask == 0 {
        return None;
    }
    let high = mask & (!0u64 << from);
    let bit = if high != 0 {
        high.trailing_zeros()
    } else {
        mask.trailing_zeros()
    } as usize;
    debug_assert!(bit < n);
    Some(bit)
}

/// A uniformly random set bit of `mask`, if any.
#[inline]
pub fn random_bit(mask: u64, rng: &mut Rng) -> Option<usize> {
    let k = mask.count_ones() as u64;
    if k == 0 {
        return None;
    }
    let mut pick = rng.below(k);
    let mut m = mask;
    loop {
        let b = m.trailing_zeros() as usize;
        if pick == 0 {
            return Some(b);
        }
        pick -= 1;
        m &= m - 1;
    }
}

/// Every port bit of an `n`-port switch.
#[inline]
pub fn all_ports(n: usize) -> u64 {
    if n == 64 {
        !0
    } else {
        (1u64 << n) - 1
    }
}

/// The requests seen from the outputs: `col[o]` = inputs in `free_in` asking for output o,
/// for the outputs in `free_out` (the grant step of iSLIP and PIM reads it).
#[inline]
pub fn columns(r: &Requests, free_in: u64, free_out: u64) -> [u64; MAX_SWITCH_PORTS] {
    debug_assert!(r.columns_agree(), "Requests.col is not the transpose of req");
    let mut col = [0u64; MAX_SWITCH_PORTS];
    let mut outs = free_out;
    while outs != 0 {
        let o = outs.trailing_zeros() as usize;
        outs &= outs - 1;
        col[o] = r.col[o] & free_in;
    }
    col
}

/// Checks that `m` is a matching of `r`: every match requested, no output used twice.
pub fn is_valid(r: &Requests, m: &Matching) -> bool {
    let mut used = 0u64;
    let mut size = 0;
    for i in 0..r.ports {
        if let Some(o) = m.out_of[i] {
            let bit = 1u64 << o;
            if r.req[i] & bit == 0 || used & bit != 0 {
                return false;
            }
            used |= bit;
            size += 1;
        }
    }
    size == m.size
}

/// Whether no request could be added to `m` (a maximal matching).
pub fn is_maximal(r: &Requests, m: &Matching) -> bool {
    let used: u64 = (0..r.ports).filter_map(|i| m.out_of[i]).fold(0, |a, o| a | 1u64 << o);
    (0..r.ports).all(|i| m.out_of[i].is_some() || r.req[i] & !used == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_from_wraps() {
        assert_eq!(first_from(0b1001, 1, 4), Some(3));
        assert_eq!(first_from(0b0001, 1, 4), Some(0));
        assert_eq!(first_from(0b1000, 3, 4), Some(3));
        assert_eq!(first_from(0, 0, 4), None);
    }

    #[test]
    fn random_bit_is_a_set_bit_and_covers_all() {
        let mut rng = Rng::from_seed(7);
        let mut seen = 0u64;
        for _ in 0..200 {
            let b = random_bit(0b1010_0110, &mut rng).unwrap();
            assert!(0b1010_0110u64 & (1 << b) != 0);
            seen |= 1 << b;
        }
        assert_eq!(seen, 0b1010_0110);
    }
}
