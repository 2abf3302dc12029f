//! The Dynamic Threshold admission of a shared buffer (seed 003 «共享缓冲池与 DT 算法»; Choudhury
//! & Hahne): an arrival of `size` joins its queue only if the buffer has room for it and the
//! queue is shorter than `alpha` × the free buffer, or shorter than its static `reserve`.
//!
//! One rule for both switches: the cell switch (`voq_switch`, sizes in cells, `size` 1) and
//! the frame switch (`l2_switch` with `fabric: voq`, sizes in bytes, `size` the frame's wire
//! bytes). The queue length and the free space are taken before the arrival.

/// Whether an arrival of `size` may join a queue holding `queued`, with `free` of the buffer
/// unused (the same unit for all three).
#[inline(always)]
pub fn admits(queued: u64, size: u64, free: u64, reserve: u64, alpha: f64) -> bool {
    size <= free && (queued < reserve || (queued as f64) < alpha * free as f64)
}

#[cfg(test)]
mod tests {
    use super::admits;

    #[test]
    fn a_queue_under_alpha_times_free_or_its_reserve_is_admitted() {
        // α = 2, 10 free: a queue of 19 joins, 20 does not; a reserve of 25 lets 20 in.
        assert!(admits(19, 1, 10, 0, 2.0));
        assert!(!admits(20, 1, 10, 0, 2.0));
        assert!(admits(20, 1, 10, 25, 2.0));
        // No room for the arrival itself: refused whatever the threshold.
        assert!(!admits(0, 11, 10, 100, 2.0));
        assert!(!admits(0, 1, 0, 100, 2.0));
    }
}
