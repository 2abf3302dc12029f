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
