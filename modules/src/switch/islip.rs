//! iSLIP (McKeown, «The iSLIP scheduling algorithm for input-queued switches», IEEE/ACM ToN 7(2),
//! 1999; seed 003 «iSLIP 调度»): request, grant, accept with round-robin pointers, 1–4 iterations.
//!
//! Each iteration: every unmatched input requests every unmatched output it holds a cell for;
//! every unmatched output grants the requesting input that appears next at or after its grant
//! pointer; every input that received grants accepts the output next at or after its accept
//! pointer. The pointers move only for matches made in the first iteration — the grant pointer
//! to one past the accepted input, the accept pointer to one past the granted output. Moving them
//! on later iterations would break the desynchronization that gives iSLIP its 100 % throughput
//! under uniform traffic (and could starve a connection), which is why BookSim2 and the paper
//! update on the first iteration only. An output whose grant is not accepted keeps its pointer.

use hwsim_hw::Rng;
use hwsim_ports::MAX_SWITCH_PORTS;

use super::allocator::{all_ports, first_from, Allocator, Matching, Requests};

/// iSLIP state: the pointers.
#[derive(Clone, Debug)]
pub struct Islip {
    iterations: usize,
    grant: [u8; MAX_SWITCH_PORTS],
    accept: [u8; MAX_SWITCH_PORTS],
    /// Scratch of one iteration: the outputs granting each input.
    granted: [u64; MAX_SWITCH_PORTS],
}

impl Islip {
    /// iSLIP with `iterations` (1..=4) iterations per slot.
    pub fn new(iterations: usize) -> Result<Islip, String> {
        if !(1..=4).contains(&iterations) {
            return Err(format!("iterations = {iterations}: must be in 1..=4"));
        }
        Ok(Islip {
            iterations,
            grant: [0; MAX_SWITCH_PORTS],
            accept: [0; MAX_SWITCH_PORTS],
            granted: [0; MAX_SWITCH_PORTS],
        })
    }
}

impl Allocator for Islip {
    fn allocate(&mut self, r: &Requests, _rng: &mut Rng, m: &mut Matching) {
        debug_assert!(r.columns_agree(), "Requests.col is not the transpose of req");
        m.clear();
        let n = r.ports;
        let all = all_ports(n);
        let mut free_in = all;
        let mut free_out = all;
        for it in 0..self.iterations {
            // Grants: each unmatched output picks, from its pointer, among the unmatched inputs
            // asking for it (the requests seen from the outputs, `r.col`). `granted[i]` = the
            // outputs granting input i, valid for the inputs in `got` (so nothing is cleared).
            let mut got = 0u64;
            let mut outs = free_out;
            while outs != 0 {
                let o = outs.trailing_zeros() as usize;
                outs &= outs - 1;
                if let Some(i) = first_from(r.col[o] & free_in, self.grant[o] as usize, n) {
                    let g = if got & 1 << i == 0 { 0 } else { self.granted[i] };
                    self.granted[i] = g | 1 << o;
                    got |= 1 << i;
                }
            }
            if got == 0 {
                break;
            }
            // Accepts: each input picks from its pointer among the grants it got.
            while got != 0 {
                let i = got.trailing_zeros() as usize;
                got &= got - 1;
                if let Some(o) = first_from(self.granted[i], self.accept[i] as usize, n) {
                    m.set(i, o);
                    free_in &= !(1 << i);
                    free_out &= !(1 << o);
                    if it == 0 {
                        // One past the match, wrapping at n (a compare, not a division).
                        self.grant[o] = if i + 1 == n { 0 } else { i as u8 + 1 };
                        self.accept[i] = if o + 1 == n { 0 } else { o as u8 + 1 };
                    }
                }
            }
        }
    }
    fn grant_ptr(&self, o: usize) -> usize {
        self.grant[o] as usize
    }
    fn accept_ptr(&self, i: usize) -> usize {
        self.accept[i] as usize
    }
    fn pointers(&self) -> Option<(&[u8; MAX_SWITCH_PORTS], &[u8; MAX_SWITCH_PORTS])> {
        Some((&self.grant, &self.accept))
    }
}

#[cfg(test)]
mod tests {
    use super::super::allocator::{is_maximal, is_valid};
    use super::*;
    use proptest::prelude::{any, prop_assert, prop_assert_eq, proptest};

    fn req(n: usize, rows: &[u64]) -> Requests {
        let mut r = Requests::new(n);
        r.req[..rows.len()].copy_from_slice(rows);
        r.fill_columns();
        r
    }

    #[test]
    fn pointers_move_one_past_the_match_and_only_on_accept() {
        let mut a = Islip::new(1).unwrap();
        let mut rng = Rng::from_seed(1);
        let mut m = Matching::empty();
        // Inputs 0 and 1 both want output 0 only; input 2 wants outputs 0 and 1.
        let r = req(3, &[0b001, 0b001, 0b011]);
        a.allocate(&r, &mut rng, &mut m);
        // Output 0 grants input 0 (pointer 0), output 1 grants input 2; both accepted.
        assert_eq!(&m.out_of[..3], &[Some(0), None, Some(1)]);
        assert_eq!((a.grant_ptr(0), a.grant_ptr(1)), (1, 0));
        assert_eq!((a.accept_ptr(0), a.accept_ptr(2)), (1, 2));
        // Next slot, same requests: output 0 now starts at input 1.
        a.allocate(&r, &mut rng, &mut m);
        assert_eq!(&m.out_of[..3], &[None, Some(0), Some(1)]);
        assert_eq!(a.grant_ptr(0), 2);
    }

    #[test]
    fn an_unaccepted_grant_does_not_move_the_pointer() {
        let mut a = Islip::new(1).unwrap();
        let mut rng = Rng::from_seed(1);
        let mut m = Matching::empty();
        // Input 0 wants outputs 0 and 1: both grant it, it accepts output 0 (its pointer).
        a.allocate(&req(2, &[0b11, 0]), &mut rng, &mut m);
        assert_eq!(m.out_of[0], Some(0));
        assert_eq!(a.grant_ptr(1), 0, "output 1's grant was refused: pointer stays");
        assert_eq!(a.grant_ptr(0), 1);
    }

    #[test]
    fn later_iterations_fill_the_matching_without_moving_pointers() {
        let mut rng = Rng::from_seed(1);
        let mut m = Matching::empty();
        // Both inputs want both outputs; in iteration 1 both outputs grant input 0.
        let r = req(2, &[0b11, 0b11]);
        let mut one = Islip::new(1).unwrap();
        one.allocate(&r, &mut rng, &mut m);
        assert_eq!(m.size, 1);
        let mut two = Islip::new(2).unwrap();
        two.allocate(&r, &mut rng, &mut m);
        assert_eq!(m.size, 2);
        // Only the first iteration's match (0 → 0) moved pointers.
        assert_eq!((two.grant_ptr(0), two.grant_ptr(1)), (1, 0));
        assert_eq!((two.accept_ptr(0), two.accept_ptr(1)), (1, 0));
    }

    /// iSLIP written the plain way (sets and loops, after the paper), for comparison.
    struct Reference {
        n: usize,
        iterations: usize,
        g: Vec<usize>,
        a: Vec<usize>,
    }

    impl Reference {
        fn allocate(&mut self, req: &[Vec<bool>]) -> Vec<Option<usize>> {
            let n = self.n;
            let mut out_of = vec![None; n];
            let mut taken = vec![false; n];
            for it in 0..self.iterations {
                // Grant: each free output, the first requesting free input from its pointer.
                let mut grants: Vec<Vec<usize>> = vec![Vec::new(); n];
                for o in (0..n).filter(|&o| !taken[o]) {
                    let pick = (0..n)
                        .map(|k| (self.g[o] + k) % n)
                        .find(|&i| out_of[i].is_none() && req[i][o]);
                    if let Some(i) = pick {
                        grants[i].push(o);
                    }
                }
                // Accept: each input, the first granting output from its pointer.
                for i in 0..n {
                    let pick = (0..n).map(|k| (self.a[i] + k) % n).find(|o| grants[i].contains(o));
                    if let Some(o) = pick {
                        out_of[i] = Some(o);
                        taken[o] = true;
                        if it == 0 {
                            self.g[o] = (i + 1) % n;
                            self.a[i] = (o + 1) % n;
                        }
                    }
                }
            }
            out_of
        }
    }

    proptest! {
        /// The bit-mask iSLIP makes the same matchings as the plain reference, slot after slot
        /// (the pointers carry over), for any requests, sizes and iteration counts.
        #[test]
        fn same_matchings_as_the_reference(
            n in 1usize..=12,
            iterations in 1usize..=4,
            slots in proptest::collection::vec(proptest::collection::vec(any::<u64>(), 12), 1..20),
        ) {
            let mut fast = Islip::new(iterations).unwrap();
            let mut slow = Reference { n, iterations, g: vec![0; n], a: vec![0; n] };
            let mut rng = Rng::from_seed(1);
            let mut m = Matching::empty();
            let mask = (1u64 << n) - 1;
            for rows in slots {
                let r = req(n, &rows[..n].iter().map(|x| x & mask).collect::<Vec<_>>());
                let plain: Vec<Vec<bool>> =
                    (0..n).map(|i| (0..n).map(|o| r.req[i] >> o & 1 == 1).collect()).collect();
                fast.allocate(&r, &mut rng, &mut m);
                let want = slow.allocate(&plain);
                let got: Vec<Option<usize>> = m.out_of[..n].iter().map(|o| o.map(|o| o as usize)).collect();
                prop_assert_eq!(got, want);
            }
        }

        /// Any requests: a valid matching; with 4 iterations on ≤ 4 ports, a maximal one.
        #[test]
        fn matchings_are_valid(rows in proptest::collection::vec(0u64..16, 4), slots in 1usize..6) {
            let r = req(4, &rows);
            let mut a = Islip::new(4).unwrap();
            let mut rng = Rng::from_seed(3);
            let mut m = Matching::empty();
            for _ in 0..slots {
                a.allocate(&r, &mut rng, &mut m);
                prop_assert!(is_valid(&r, &m));
                prop_assert!(is_maximal(&r, &m));
            }
        }
    }
}
