//! Unit tests of the PSN check: the core alone (in order, TYPE2, gaps, duplicates, FACK,
//! misrouted frames) and the standalone block (streams and waves, parameters).

use super::*;
use crate::rclink::rx_ctrl::{CtrlKind, CtrlQueue};
use crate::rclink::rx_test::*;
use hwsim_hw::Harness;
use hwsim_ports::{cbfc_cost, CreditMsg, DataFrame, FlitKind, Psn};

fn bench(p: &Params, skip: bool) -> Harness {
    let q = p.clone();
    let mut h = Harness::new("psn_check", ports(p), Box::new(move |b| build(&q, b)), 1, 256).unwrap();
    h.sim_mut().set_skip(skip);
    for port in ["ctrl", "charge", "accepted"] {
        h.sim().net(&format!("dut.{port}")).unwrap().enable_log();
    }
    h
}

fn core_with(p: Params) -> (PsnCheck, CtrlQueue) {
    (PsnCheck::new(&p).unwrap(), CtrlQueue::default())
}

/// Drains a queue as (kind, qp, psn).
fn drained(q: &mut CtrlQueue) -> Vec<(CtrlKind, u16, u16)> {
    std::iter::from_fn(|| q.pop())
        .map(|(k, m)| (k, m.rh.qp().value(), m.rh.psn().value()))
        .collect()
}

// ---- the core alone ----

#[test]
fn core_accepts_in_order_and_reports_to_ack_merge() {
    let (mut c, mut q) = core_with(Params::default());
    let r = c.receive(&frame(3, 5, 0, 4096), &mut q).unwrap();
    assert_eq!(r.pkts, 4);
    assert_eq!(r.accepted_bytes, 4096);
    assert_eq!(
        r.accepted,
        Some(RxAccepted {
            src: 3,
            qp: qp(5),
            epsn: psn(4),
            npkts: 4,
            immediate_ack: false,
            ts: 0,
        })
    );
    assert!(q.is_empty());
    assert_eq!(c.epsn(3, qp(5)), psn(4));
    // 6 + 6 + 6 + 1 credits charged on QP 5's bank, VC 1.
    assert_eq!((r.credits, r.credit_vc), (19, 1));
}

/// Packet `i` of a TYPE2 copy of 4096 B from chip 3 to group 0, as the RX cap delivers
/// them (one packet per arrival), `lost` if the wire lost it.
fn t2_pkt(i: u8, lost: bool) -> DataFrame {
    DataFrame {
        dst: hwsim_ports::MCAST_BIT,
        first_idx: i,
        npkts: 1,
        lost: lost as u8,
        paxi: hwsim_ports::PaxiFlit::data(FlitKind::Mul, 9),
        ..frame(3, 5, 0, 4096)
    }
}

#[test]
fn core_type2_delivers_whole_copies_without_a_check_and_returns_credit_on_vc4() {
    let (mut c, mut q) = core_with(Params::default());
    let mut delivered = Vec::new();
    let mut credits = 0;
    for i in 0..4 {
        let r = c.receive(&t2_pkt(i, false), &mut q).unwrap();
        assert_eq!(r.accepted, None, "no ACK MERGE: TYPE2 is never ACKed");
        assert_eq!(r.credit_vc, 4, "TYPE2's VC");
        credits += r.credits;
        delivered.push(r.delivered);
    }
    assert_eq!(delivered, [false, false, false, true], "delivered at its last packet");
    assert!(q.is_empty(), "no ACK, NAK or CNP");
    assert_eq!(c.epsn(3, qp(5)), psn(0), "no PSN window touched");
    assert_eq!(credits, 19);
    // A copy with its second packet lost: dropped at its end, its credits still returned.
    let mut broken = Vec::new();
    let mut credits = 0;
    for i in 0..4 {
        let r = c.receive(&t2_pkt(i, i == 1), &mut q).unwrap();
        credits += r.credits;
        broken.push((r.delivered, r.type2_broken));
    }
    assert_eq!(broken, [(false, false), (false, false), (false, false), (false, true)]);
    assert_eq!(credits, 19);
    // The next copy starts afresh.
    let r: Vec<bool> = (0..4)
        .map(|i| c.receive(&t2_pkt(i, false), &mut q).unwrap().delivered)
        .collect();
    assert_eq!(r, [false, false, false, true]);
}

#[test]
fn core_gap_naks_once_per_epsn() {
    let (mut c, mut q) = core_with(Params::default());
    let mut credits = c.receive(&frame(3, 5, 0, 64), &mut q).unwrap().credits;
    let r = c.receive(&frame(3, 5, 2, 64), &mut q).unwrap();
    credits += r.credits;
    assert_eq!((r.ooo, r.accepted), (1, None));
    assert_eq!(c.last_window(), Some(((3, qp(5)), psn(1), true)));
    credits += c.receive(&frame(3, 5, 3, 64), &mut q).unwrap().credits;
    assert_eq!(drained(&mut q), vec![(CtrlKind::Nak, 5, 1)]);
    credits += c.receive(&frame(3, 5, 1, 64), &mut q).unwrap().credits;
    assert_eq!(c.last_window(), Some(((3, qp(5)), psn(2), false)));
    // Every data packet, NAKed or not, owes its credit.
    assert_eq!(credits, 4);
}

#[test]
fn core_duplicate_policy() {
    let (mut c, mut q) = core_with(Params::default());
    c.receive(&frame(3, 5, 0, 2688), &mut q).unwrap();
    let r = c.receive(&frame(3, 5, 1, 1344), &mut q).unwrap();
    assert_eq!((r.dup, r.accepted), (1, None));
    assert!(q.is_empty(), "the seed drops a duplicate silently");

    let (mut c, mut q) = core_with(Params {
        duplicate: Duplicate::Ack,
        ..Params::default()
    });
    c.receive(&frame(3, 5, 0, 2688), &mut q).unwrap();
    let r = c.receive(&frame(3, 5, 0, 2688), &mut q).unwrap();
    assert_eq!(r.dup, 2);
    assert_eq!(drained(&mut q), vec![(CtrlKind::DupAck, 5, 2)]);
    assert_eq!(
        r.accepted,
        Some(RxAccepted {
            src: 3,
            qp: qp(5),
            epsn: psn(2),
            npkts: 0,
            immediate_ack: true,
            ts: 0,
        })
    );
}

#[test]
fn core_fack_acks_at_once_without_credit() {
    let (mut c, mut q) = core_with(Params::default());
    assert_eq!(c.receive(&frame(3, 5, 0, 1344), &mut q).unwrap().credits, 6);
    let r = c.receive(&frame(3, 5, 1, 0), &mut q).unwrap();
    assert_eq!(drained(&mut q), vec![(CtrlKind::Fack, 5, 2)]);
    assert_eq!(
        r.accepted.map(|m| (m.epsn, m.npkts, m.immediate_ack)),
        Some((psn(2), 0, true))
    );
    assert_eq!(r.credits, 0, "a zero-byte packet used no buffer");
}

#[test]
fn core_refuses_misrouted_frames() {
    let (mut c, mut q) = core_with(Params::default());
    let e = c
        .receive(
            &DataFrame {
                lg: 1,
                ..frame(3, 5, 0, 64)
            },
            &mut q,
        )
        .unwrap_err();
    assert!(e.contains("reached the RX of chip 0 lg 0"), "{e}");
}

proptest::proptest! {
    /// Against a per-packet reference: EPSN, packets handed to ACK MERGE, NAKs (one per EPSN
    /// value) and credit conservation (every data packet's cost comes back, lost or not,
    /// FACKs none) hold for any mix of in-order, gap, duplicate, lost and zero-byte frames.
    #[test]
    fn core_matches_a_per_packet_reference(
        frames in proptest::collection::vec((-6i32..6, 0u32..=4096, proptest::num::u8::ANY), 1..40)
    ) {
        let (mut c, mut q) = core_with(Params::default());
        let (mut epsn, mut nak_for, mut credits, mut accepted, mut naks) = (0u16, None, 0u32, 0u32, 0u32);
        let (mut handed, mut charged) = (0u32, 0u32);
        for &(offset, bytes, lost) in frames.iter() {
            let first = (i32::from(epsn) + offset).rem_euclid(4096) as u16;
            let f = DataFrame { lost, ..frame(3, 5, first, bytes) };
            for i in 0..f.npkts {
                let (p, b) = (f.psn_of(i).value(), f.pkt_bytes(i));
                if b > 0 {
                    credits += cbfc_cost(b, 50, CreditSize::B256);
                }
                if i < 8 && lost & (1 << i) != 0 {
                    continue;
                }
                if p == epsn {
                    epsn = (epsn + 1) % 4096;
                    accepted += u32::from(b > 0);
                } else if b > 0 && Psn::new(p).unwrap().after(Psn::new(epsn).unwrap()) && nak_for != Some(epsn) {
                    nak_for = Some(epsn);
                    naks += 1;
                }
            }
            let r = c.receive(&f, &mut q).unwrap();
            handed += r.accepted.map_or(0, |m| u32::from(m.npkts));
            charged += r.credits;
            proptest::prop_assert_eq!(c.epsn(3, qp(5)).value(), epsn);
        }
        proptest::prop_assert_eq!(handed, accepted);
        let sent_naks = std::iter::from_fn(|| q.pop()).filter(|(k, _)| *k == CtrlKind::Nak).count();
        proptest::prop_assert_eq!(sent_naks as u32, naks);
        proptest::prop_assert_eq!(charged, credits);
    }
}

// ---- the block ----

/// The block's outputs: NAK, the credit charge and `accepted` at arrival.
#[test]
fn block_streams_and_view() {
    both_modes(
        |skip| {
            let mut h = bench(&Params::default(), skip);
            let rows = [
                (0, frame(3, 5, 0, 4096)), // arrives 1: 4 accepted
                (1, frame(3, 5, 6, 1344)), // arrives 2: gap, NAK 4
                (2, frame(3, 5, 1, 1344)), // arrives 3: duplicate
            ];
            drive(&mut h, &rows, 30);
            assert_eq!(ctrls(&h), vec![(2, "NAK", 5, 4)]);
            let charged: Vec<_> = log::<CreditMsg>(&h, "charge")
                .into_iter()
                .map(|(c, m)| (c, m.dst, m.vc, m.credits))
                .collect();
            assert_eq!(charged, vec![(1, 3, 1, 19), (2, 3, 1, 6), (3, 3, 1, 6)]);
            let acc: Vec<_> = log::<RxAccepted>(&h, "accepted")
                .into_iter()
                .map(|(c, m)| (c, m.epsn.value(), m.npkts))
                .collect();
            assert_eq!(acc, vec![(1, 4, 4)]);
            assert_eq!(h.peek::<Psn>("epsn"), psn(4));
            assert!(h.peek::<bool>("nak_pending"));
            assert_eq!(counter(&h, "dup_pkts"), 1);
            assert_eq!(counter(&h, "ooo_pkts"), 1);
            h
        },
        &["ctrl", "charge", "accepted"],
    );
}

#[test]
fn bad_params_refused() {
    let p = Params {
        lg: 8,
        ..Params::default()
    };
    let q = p.clone();
    assert!(Harness::new("psn_check", ports(&p), Box::new(move |b| build(&q, b)), 1, 1).is_err());
}
