//! Unit tests of the PAXI core: the ITLV hash.

use hwsim_ports::QpId;

use super::itlv_hash;

#[test]
fn hash_spreads_one_transaction_over_all_lgs() {
    let qp = QpId::from_cdma(3).unwrap();
    let mut seen = [0u32; 8];
    for f in 0..4096 {
        seen[(itlv_hash(7, f, qp) % 8) as usize] += 1;
    }
    // Uniform within a few percent over 4096 frames.
    assert!(seen.iter().all(|&n| (460..=564).contains(&n)), "{seen:?}");
}

#[test]
fn hash_differs_from_a_linear_mix() {
    // (txn + frame_seq) % 8 would phase-lock: consecutive frames land on consecutive LGs.
    let qp = QpId::from_cdma(0).unwrap();
    let lgs: Vec<u64> = (0..8).map(|f| itlv_hash(1, f, qp) % 8).collect();
    assert_ne!(lgs, (0..8).map(|f| (1 + f) % 8).collect::<Vec<_>>());
}

#[test]
fn latency_percentiles_are_nearest_rank() {
    use super::counters::{nearest_rank, PERCENTILES};
    let thousand: Vec<u64> = (1..=1000).collect();
    let got: Vec<u64> = PERCENTILES.iter().map(|&q| nearest_rank(&thousand, q)).collect();
    assert_eq!(got, [500, 990, 999]);
    // Three values: the median is the second; p99 and p99.9 the largest.
    let three = [10, 20, 30];
    let got: Vec<u64> = PERCENTILES.iter().map(|&q| nearest_rank(&three, q)).collect();
    assert_eq!(got, [20, 30, 30]);
    assert_eq!(nearest_rank(&[7], 500), 7);
}
