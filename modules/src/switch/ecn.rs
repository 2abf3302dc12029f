//! ECN RED marking on a switch egress (seed 000 «ECN RED 概率标记（Switch 侧）», appendix C
//! `ecn_kmin` 0.3 / `ecn_kmax` 0.8; seed 003 «ECN»): an ECN-capable packet is marked CE with
//! probability p(util), util = egress buffer in use / its size:
//!
//! ```text
//!   p = 0                          util < Kmin
//!   p = (util − Kmin)/(Kmax − Kmin) Kmin ≤ util < Kmax
//!   p = 1                          util ≥ Kmax
//! ```
//!
//! util is measured per output: the data bytes held for it (every VOQ toward it, or its output
//! queue) over `port_buffer`. Seed 003 «建模参数汇总» gives `ecn_threshold_low` 50 % and
//! `ecn_threshold_high` 80 % of the queue depth instead of seed 000's 0.3 / 0.8: hwsim keeps seed
//! 000's; configs/seed003_switch.yaml sets seed 003's (docs/spec-findings.md finding 14).
//!
//! The draw uses Xorshift64 (the seed's generator: deterministic, reproducible), seeded from the
//! block's own stream. Only the Standard format carries ECN; other packets are never marked.

/// Marsaglia's xorshift64 (shifts 13, 7, 17).
#[derive(Clone, Debug)]
pub struct Xorshift64(u64);

impl Xorshift64 {
    /// A generator from a seed (0 is replaced: xorshift must not start at 0).
    pub fn new(seed: u64) -> Xorshift64 {
        Xorshift64(if seed == 0 { hwsim_hw::rng::GOLDEN_GAMMA } else { seed })
    }
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// A uniform draw in [0, 1) (53 bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The RED marking probability at utilization `util` (`eq:rc-ecn-red-probability`).
pub fn red_probability(util: f64, kmin: f64, kmax: f64) -> f64 {
    if util < kmin {
        0.0
    } else if util >= kmax {
        1.0
    } else {
        (util - kmin) / (kmax - kmin)
    }
}

/// A RED marker: thresholds and its generator.
#[derive(Clone, Debug)]
pub struct RedMarker {
    kmin: f64,
    kmax: f64,
    rng: Xorshift64,
}

impl RedMarker {
    /// Thresholds as fractions of the buffer, 0 ≤ kmin < kmax ≤ 1 (the error names them).
    pub fn new(kmin: f64, kmax: f64, seed: u64) -> Result<RedMarker, String> {
        if !((0.0..1.0).contains(&kmin) && kmin < kmax && kmax <= 1.0) {
            return Err(format!(
                "ecn_kmin = {kmin}, ecn_kmax = {kmax}: need 0 ≤ kmin < kmax ≤ 1"
            ));
        }
        Ok(RedMarker {
            kmin,
            kmax,
            rng: Xorshift64::new(seed),
        })
    }
    /// Whether a packet arriving at utilization `util` is marked. Draws only in the random band,
    /// so the stream of draws depends on the packets that needed one, not on the others.
    pub fn mark(&mut self, util: f64) -> bool {
        let p = red_probability(util, self.kmin, self.kmax);
        if p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            self.rng.next_f64() < p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 000 «单元测试场景»: p(0.55) = 0.5, p(0.2) = 0, p(0.9) = 1 with Kmin 0.3, Kmax 0.8.
    #[test]
    fn the_seeds_unit_scenarios() {
        assert!((red_probability(0.55, 0.3, 0.8) - 0.5).abs() < 1e-12);
        assert_eq!(red_probability(0.2, 0.3, 0.8), 0.0);
        assert_eq!(red_probability(0.9, 0.3, 0.8), 1.0);
        assert_eq!(red_probability(0.8, 0.3, 0.8), 1.0);
        assert_eq!(red_probability(0.3, 0.3, 0.8), 0.0);
    }

    #[test]
    fn marking_rate_follows_the_probability() {
        let mut m = RedMarker::new(0.3, 0.8, 42).unwrap();
        let marks = (0..100_000).filter(|_| m.mark(0.55)).count();
        assert!((49_000..51_000).contains(&marks), "{marks}");
        assert!(!(0..1000).any(|_| m.mark(0.1)));
        assert!((0..1000).all(|_| m.mark(0.85)));
        assert!(RedMarker::new(0.8, 0.3, 1).unwrap_err().contains("ecn_kmin = 0.8"));
    }

    #[test]
    fn xorshift_is_deterministic_and_never_zero() {
        let (mut a, mut b) = (Xorshift64::new(7), Xorshift64::new(7));
        for _ in 0..1000 {
            let x = a.next_u64();
            assert_eq!(x, b.next_u64());
            assert_ne!(x, 0);
        }
        // Marsaglia's first output from seed 1 with shifts (13, 7, 17).
        assert_eq!(Xorshift64::new(1).next_u64(), 1082269761);
    }
}
