//! Deterministic per-component random streams: xoshiro256** seeded by SplitMix64 from the run's
//! seed and the component's hierarchical name, so adding a component never perturbs another's
//! stream and the same testbench and seed give the same bytes. The hashes here (SplitMix64 and
//! its finaliser, FNV-1a) are the only ones in hwsim: the switch's ECMP, the sweep's per-point
//! seeds and the RTL build cache use them too.

/// SplitMix64's increment (the golden ratio, 2^64 / φ).
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser alone: a full-avalanche 64-bit mix of `z`.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64 step: the increment, then the finaliser.
#[inline]
pub fn splitmix64(z: u64) -> u64 {
    mix64(z.wrapping_add(GOLDEN_GAMMA))
}

/// FNV-1a's offset basis: the hash of no bytes.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a continued over `bytes` from the hash `h` (start from [`FNV_OFFSET`]).
pub fn fnv1a_extend(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// FNV-1a of a name, the stable input to stream derivation.
pub fn fnv1a(s: &str) -> u64 {
    fnv1a_extend(FNV_OFFSET, s.as_bytes())
}

/// xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream of `path` under `seed`.
    pub fn for_path(seed: u64, path: &str) -> Rng {
        Rng::from_seed(splitmix64(seed) ^ fnv1a(path))
    }
    /// A generator from one 64-bit seed.
    pub fn from_seed(seed: u64) -> Rng {
        let mut x = seed;
        let mut s = [0u64; 4];
        for w in &mut s {
            x = x.wrapping_add(GOLDEN_GAMMA);
            *w = splitmix64(x);
        }
        Rng { s }
    }
    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [0, n) (n > 0), by widening multiply (Lemire, without rejection: bias < 2^-32
    /// for n < 2^32, irrelevant here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// True with probability p.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn streams_differ_by_path_and_repeat_by_seed() {
        let mut a = Rng::for_path(1, "chip0.lg0");
        let mut b = Rng::for_path(1, "chip0.lg1");
        let mut a2 = Rng::for_path(1, "chip0.lg0");
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xa2: Vec<u64> = (0..4).map(|_| a2.next_u64()).collect();
        assert_ne!(xa, xb);
        assert_eq!(xa, xa2);
    }
    #[test]
    fn below_and_f64_in_range() {
        let mut r = Rng::from_seed(7);
        for _ in 0..10_000 {
            assert!(r.below(10) < 10);
            let f = r.next_f64();
            assert!((0.0..1.0).contains(&f));
        }
    }
}
