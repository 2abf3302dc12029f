//! Input-FIFO allocation (no VOQ): each input offers only the cell at the head of its single
//! FIFO, so it requests exactly one output; each output grants one of its requesters in
//! round-robin order. A cell behind a blocked head waits even when its own output is idle —
//! head-of-line blocking, which caps uniform-traffic throughput at 2 − √2 ≈ 58.6 % for large N
//! (Karol, Hluchyj, Morgan, «Input versus output queueing on a space-division packet switch»,
//! IEEE Trans. Commun. 35(12), 1987).
//!
//! The switch hands this allocator requests with one bit per input (its head's output).

use hwsim_hw::Rng;
use hwsim_ports::MAX_SWITCH_PORTS;

use super::allocator::{first_from, Allocator, Matching, Requests};

/// Per-output round-robin pointers.
#[derive(Clone, Debug)]
pub struct Fifo {
    grant: [u8; MAX_SWITCH_PORTS],
}

impl Fifo {
    /// A FIFO allocator.
    pub fn new() -> Fifo {
        Fifo {
            grant: [0; MAX_SWITCH_PORTS],
        }
    }
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo::new()
    }
}

impl Allocator for Fifo {
    fn allocate(&mut self, r: &Requests, _rng: &mut Rng, m: &mut Matching) {
        m.clear();
        let n = r.ports;
        let mut col = [0u64; MAX_SWITCH_PORTS];
        for i in 0..n {
            debug_assert!(r.req[i].count_ones() <= 1, "a FIFO input requests its head only");
            if r.req[i] != 0 {
                col[r.req[i].trailing_zeros() as usize] |= 1 << i;
            }
        }
        for (o, &c) in col.iter().enumerate().take(n) {
            if let Some(i) = first_from(c, self.grant[o] as usize, n) {
                m.set(i, o);
                self.grant[o] = ((i + 1) % n) as u8;
            }
        }
    }
    fn grant_ptr(&self, o: usize) -> usize {
        self.grant[o] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::super::allocator::is_valid;
    use super::*;

    #[test]
    fn round_robin_among_heads_for_one_output() {
        let mut f = Fifo::new();
        let mut rng = Rng::from_seed(1);
        let mut m = Matching::empty();
        let mut r = Requests::new(3);
        r.req[..3].copy_from_slice(&[0b1, 0b1, 0b10]);
        f.allocate(&r, &mut rng, &mut m);
        assert!(is_valid(&r, &m));
        assert_eq!(&m.out_of[..3], &[Some(0), None, Some(1)]);
        f.allocate(&r, &mut rng, &mut m);
        assert_eq!(&m.out_of[..3], &[None, Some(0), Some(1)]);
    }
}
