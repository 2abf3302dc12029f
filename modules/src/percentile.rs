//! Exact percentiles for the end-of-run summaries (a PAXI flow's transaction latencies, a
//! switch port's frame residences): every sample is kept, one per event (never per cycle), and
//! sorted once when the run ends. Nearest rank, as BookSim2 and SST report them.

/// The percentiles published, in permille: p50, p99, p99.9.
pub const PERCENTILES: [u64; 3] = [500, 990, 999];

/// The nearest-rank `q`-permille percentile of `sorted` (ascending, not empty): the smallest
/// value with at least q/1000 of the values at or below it.
pub fn nearest_rank(sorted: &[u64], q: u64) -> u64 {
    let n = sorted.len() as u64;
    let rank = (n * q).div_ceil(1000).clamp(1, n);
    sorted[rank as usize - 1]
}

/// Sorts `samples` and returns p50, p99 and p99.9 ([`PERCENTILES`]), or `None` without any.
pub fn summarize(samples: &mut [u64]) -> Option<[u64; 3]> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    Some(PERCENTILES.map(|q| nearest_rank(samples, q)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut thousand: Vec<u64> = (1..=1000).rev().collect();
        assert_eq!(summarize(&mut thousand), Some([500, 990, 999]));
        // Three values: the median is the second; p99 and p99.9 the largest.
        assert_eq!(summarize(&mut [30, 10, 20]), Some([20, 30, 30]));
        assert_eq!(nearest_rank(&[7], 500), 7);
        assert_eq!(summarize(&mut []), None);
    }
}
