//! The run-wide latency histogram: every flow's transaction latencies over every chip (the
//! PAXIs' sample set `txn_latency`, `hw::Sim::samples`), with exact nearest-rank percentiles
//! (as the flows table's, BookSim2's and SST's) and the shape in power-of-two buckets.

use std::fmt::Write as _;

use hwsim_modules::percentile::nearest_rank as rank;
use serde::Serialize;

/// One bucket: latencies in `[lo, hi)` ns, and how many.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Bucket {
    pub lo: u64,
    pub hi: u64,
    pub count: u64,
}

/// Latencies of every measured transaction of the run (issue to completion, ns; after
/// `metrics_from`, as the flows table counts them).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LatencyHistogram {
    /// Always `ns`.
    pub unit: &'static str,
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    /// Power-of-two buckets `[2^k, 2^(k+1))` (the first `[0, 1)`), from the one holding `min`
    /// to the one holding `max`, empty ones between included.
    pub buckets: Vec<Bucket>,
}

/// The bucket of `v`: 0 for 0, else k + 1 for `[2^k, 2^(k+1))`.
fn bucket_of(v: u64) -> usize {
    (u64::BITS - v.leading_zeros()) as usize
}

/// The bounds of bucket `b`.
fn bounds(b: usize) -> (u64, u64) {
    match b {
        0 => (0, 1),
        64 => (1 << 63, u64::MAX),
        _ => (1 << (b - 1), 1 << b),
    }
}

impl LatencyHistogram {
    /// The histogram of `samples` (any order), or `None` without any.
    pub fn of(samples: &[u64]) -> Option<LatencyHistogram> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_unstable();
        let (lo, hi) = (bucket_of(s[0]), bucket_of(s[s.len() - 1]));
        let mut counts = vec![0u64; hi - lo + 1];
        for &v in &s {
            counts[bucket_of(v) - lo] += 1;
        }
        let sum: u128 = s.iter().map(|&v| v as u128).sum();
        Some(LatencyHistogram {
            unit: "ns",
            count: s.len() as u64,
            min: s[0],
            mean: sum as f64 / s.len() as f64,
            p50: rank(&s, 500),
            p90: rank(&s, 900),
            p99: rank(&s, 990),
            p999: rank(&s, 999),
            max: s[s.len() - 1],
            buckets: counts
                .into_iter()
                .enumerate()
                .map(|(i, count)| {
                    let (lo, hi) = bounds(lo + i);
                    Bucket { lo, hi, count }
                })
                .collect(),
        })
    }

    /// The report's lines: the percentiles, then a bar per bucket (`#` scaled to the fullest).
    pub fn render(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "latency, every transaction ({}, ns): min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {:.1}",
            self.count, self.min, self.p50, self.p90, self.p99, self.p999, self.max, self.mean
        );
        let top = self.buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1);
        let w = self
            .buckets
            .last()
            .map_or(1, |b| b.lo.to_string().len().max(b.hi.to_string().len()));
        for b in &self.buckets {
            // A bucket with anything in it shows at least one mark.
            let bar = (b.count * 40).div_ceil(top) as usize;
            let _ = writeln!(
                s,
                "  [{:>w$}, {:>w$})  {:<40}  {}",
                b.lo,
                b.hi,
                "#".repeat(bar),
                b.count
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_exact_and_buckets_span_min_to_max() {
        // 1..=1000 ns: nearest ranks 500, 900, 990, 999; buckets [1,2) … [512,1024).
        let v: Vec<u64> = (1..=1000).rev().collect();
        let h = LatencyHistogram::of(&v).unwrap();
        assert_eq!((h.count, h.min, h.max), (1000, 1, 1000));
        assert_eq!((h.p50, h.p90, h.p99, h.p999), (500, 900, 990, 999));
        assert_eq!(h.mean, 500.5);
        assert_eq!(h.buckets.len(), 10);
        assert_eq!(h.buckets[0], Bucket { lo: 1, hi: 2, count: 1 });
        assert_eq!(
            h.buckets[9],
            Bucket {
                lo: 512,
                hi: 1024,
                count: 489
            }
        );
        assert_eq!(h.buckets.iter().map(|b| b.count).sum::<u64>(), 1000);
        // Empty buckets between two clusters stay (the gap is the shape).
        let h = LatencyHistogram::of(&[3, 100]).unwrap();
        let counts: Vec<u64> = h.buckets.iter().map(|b| b.count).collect();
        assert_eq!(counts, [1, 0, 0, 0, 0, 1]);
        assert_eq!((h.p50, h.p99), (3, 100));
        assert_eq!(LatencyHistogram::of(&[]), None);
        let h = LatencyHistogram::of(&[0, u64::MAX]).unwrap();
        assert_eq!(h.buckets.first().unwrap().lo, 0);
        assert_eq!(h.buckets.last().unwrap().hi, u64::MAX);
        let mut s = String::new();
        LatencyHistogram::of(&[3, 100, 100]).unwrap().render(&mut s);
        assert!(
            s.starts_with("latency, every transaction (3, ns): min 3  p50 100"),
            "{s}"
        );
        assert!(
            s.contains("  [ 64, 128)  ########################################  2\n"),
            "{s}"
        );
        assert!(
            s.contains("  [  2,   4)  ####################                      1\n"),
            "{s}"
        );
    }
}
