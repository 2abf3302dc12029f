//! A hash map for the per-packet paths and for elaboration's names: multiply-rotate hashing of whole words, as rustc hashes
//! its own tables, instead of the standard library's SipHash, whose keyed, DoS-resistant rounds
//! cost ~100 instructions per lookup of a small integer key. The keys here are the model's own
//! (chip, QP, VC numbers), never an attacker's, and a fixed hash also makes iteration order the
//! same on every run. W4 looked up the CBFC ledgers alone ~12 times a simulated cycle
//! (docs/performance.md, «Hashing and the routers' scans»).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A [`HashMap`] hashed with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A [`HashSet`] hashed with [`FastHasher`] (elaboration's name sets: paths and port names).
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

/// A new, empty [`FastMap`].
pub fn fast_map<K, V>() -> FastMap<K, V> {
    HashMap::with_hasher(BuildHasherDefault::default())
}

/// Multiply-rotate hashing of whole words (not keyed: for keys the program makes itself).
#[derive(Default, Clone, Copy, Debug)]
pub struct FastHasher {
    hash: u64,
}

/// An odd constant with well-spread bits (2^64 / φ, rounded to odd), as Fibonacci hashing uses.
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl FastHasher {
    #[inline(always)]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            // The length too, so "a" and "a\0" differ.
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The table takes its control byte from the top 7 bits and its bucket from the low
        // ones; a multiply leaves the low bits of a small key poorly mixed, so fold the high
        // half down.
        self.hash ^ (self.hash >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn h<T: std::hash::Hash>(k: T) -> u64 {
        BuildHasherDefault::<FastHasher>::default().hash_one(k)
    }

    #[test]
    fn keys_that_differ_in_any_field_hash_apart_and_the_map_finds_them() {
        let mut m: FastMap<(u16, u8), u32> = fast_map();
        for d in 0..512u16 {
            for vc in 0..6u8 {
                m.insert((d, vc), d as u32 * 8 + vc as u32);
            }
        }
        for d in 0..512u16 {
            for vc in 0..6u8 {
                assert_eq!(m.get(&(d, vc)), Some(&(d as u32 * 8 + vc as u32)));
            }
        }
        assert_eq!(m.get(&(512, 0)), None);
        assert_ne!(h((1u16, 0u8)), h((0u16, 1u8)));
        assert_ne!(h((1u16, 2u8)), h((2u16, 1u8)));
        // Fixed, unkeyed: the same key hashes the same in every map and every run.
        assert_eq!(h((7u16, 3u8)), h((7u16, 3u8)));
        assert_eq!(h(12345u64), 12345u64.wrapping_mul(K) ^ (12345u64.wrapping_mul(K) >> 32));
    }

    #[test]
    fn small_keys_spread_over_the_low_bits() {
        // The buckets of a 64-slot table: 64 consecutive chips fill most of them.
        let used: std::collections::BTreeSet<u64> = (0..64u16).map(|d| h(d) & 63).collect();
        assert!(used.len() >= 32, "{} buckets of 64", used.len());
    }

    #[test]
    fn byte_slices_hash_every_byte_and_their_length() {
        let hb = |b: &[u8]| {
            let mut s = FastHasher::default();
            s.write(b);
            s.finish()
        };
        assert_ne!(hb(b"abcdefgh1"), hb(b"abcdefgh2"));
        assert_ne!(hb(b"a"), hb(b"b"));
        assert_ne!(hb(b"a"), hb(b"a\0"));
    }
}
