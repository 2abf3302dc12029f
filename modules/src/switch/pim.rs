//! Parallel iterative matching (Anderson, Owicki, Saxe, Thacker, «High-speed switch scheduling
//! for local-area networks», ACM TOCS 11(4), 1993): like iSLIP but every output grants a
//! requesting input at random and every input accepts a grant at random, from the switch's seeded
//! stream. A baseline: with one iteration its uniform-traffic throughput saturates near
//! 1 − 1/e ≈ 63 %.

use hwsim_hw::Rng;
use hwsim_ports::MAX_SWITCH_PORTS;

use super::allocator::{all_ports, columns, random_bit, Allocator, Matching, Requests};

/// PIM: no state but the iteration count.
#[derive(Clone, Debug)]
pub struct Pim {
    iterations: usize,
}

impl Pim {
    /// PIM with `iterations` (1..=4).
    pub fn new(iterations: usize) -> Result<Pim, String> {
        if !(1..=4).contains(&iterations) {
            return Err(format!("iterations = {iterations}: must be in 1..=4"));
        }
        Ok(Pim { iterations })
    }
}

impl Allocator for Pim {
    fn allocate(&mut self, r: &Requests, rng: &mut Rng, m: &mut Matching) {
        m.clear();
        let n = r.ports;
        let all = all_ports(n);
        let (mut free_in, mut free_out) = (all, all);
        for _ in 0..self.iterations {
            let col = columns(r, free_in, free_out);
            let mut granted = [0u64; MAX_SWITCH_PORTS];
            let mut any = false;
            let mut outs = free_out;
            while outs != 0 {
                let o = outs.trailing_zeros() as usize;
                outs &= outs - 1;
                if let Some(i) = random_bit(col[o], rng) {
                    granted[i] |= 1 << o;
                    any = true;
                }
            }
            if !any {
                break;
            }
            let mut ins = free_in;
            while ins != 0 {
                let i = ins.trailing_zeros() as usize;
                ins &= ins - 1;
                if let Some(o) = random_bit(granted[i], rng) {
                    m.set(i, o);
                    free_in &= !(1 << i);
                    free_out &= !(1 << o);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::allocator::is_valid;
    use super::*;

    #[test]
    fn matchings_are_valid_and_seeded() {
        let mut r = Requests::new(8);
        for i in 0..8 {
            r.req[i] = 0xFF;
        }
        r.fill_columns();
        let run = |seed| {
            let mut p = Pim::new(1).unwrap();
            let mut rng = Rng::from_seed(seed);
            let mut m = Matching::empty();
            let mut sizes = Vec::new();
            for _ in 0..50 {
                p.allocate(&r, &mut rng, &mut m);
                assert!(is_valid(&r, &m));
                sizes.push(m.size);
            }
            sizes
        };
        assert_eq!(run(5), run(5));
        // One iteration under full load matches about 1 − 1/e of the ports on average.
        let mean = run(5).iter().sum::<usize>() as f64 / 50.0 / 8.0;
        assert!((0.55..0.75).contains(&mean), "{mean}");
    }
}
