//! Unit tests of the TX's seed 002 paths: TYPE2 (multicast: both gates, the multicast MAC
//! credit, the MUL VC's weighted turn) and the ACK-VC credit return (`ack_cbfc`).

use super::*;

/// CBFC on the ACK + CNP VC, the receiving end: every control message taken in owes its
/// sender one credit (50 B at 256 B); while `ack_cr` is full what is owed to one sender is
/// summed, and it goes back one message per cycle, oldest sender first, with skip on and
/// off alike.
#[test]
fn ack_vc_credits_go_back_to_the_senders() {
    let run = |skip: bool| {
        let p = Params {
            ack_cbfc: true,
            ..Params::default()
        };
        let q = p.clone();
        // Output sinks of one message: `ack_cr` fills with the first return.
        let mut h = super::composite(&q, 1).unwrap();
        h.sim_mut().set_skip(skip);
        h.sim().net("dut.ack_cr").unwrap().enable_log();
        let from = |src: ChipId| Ctrl { src, ..ack(5, 1) };
        let cnp = |src: ChipId| Ctrl {
            rh: Rh::cnp(qp(5)),
            ..from(src)
        };
        for m in [from(3), from(4), from(3), cnp(3)] {
            assert!(h.push("ctrl", m));
            h.step().unwrap();
        }
        let mut popped = Vec::new();
        for t in 4..20 {
            if t % 4 == 0 {
                popped.extend(h.pop::<CreditMsg>("ack_cr"));
            }
            h.step().unwrap();
        }
        let net = h.sim().net("dut.ack_cr").unwrap();
        let net = net.as_any().downcast_ref::<hwsim_hw::StreamNet<CreditMsg>>().unwrap();
        let log: Vec<_> = net
            .log()
            .as_ref()
            .unwrap()
            .iter()
            .map(|(c, m)| (*c, m.src, m.dst, m.lg, m.vc, m.credits))
            .collect();
        let returned = h.sim().counter("dut.ack_credits_returned").unwrap();
        (log, returned, popped.len())
    };
    let (log, returned, popped) = run(true);
    assert_eq!(
        log,
        vec![
            (1, 0, 3, 0, ACK_VC, 1),
            (5, 0, 4, 0, ACK_VC, 1),
            (9, 0, 3, 0, ACK_VC, 2)
        ]
    );
    assert_eq!((returned, popped), (4, 3));
    assert_eq!(run(false), (log, returned, popped));
}

/// A TYPE2 (multicast) segment of `bytes` to group `g`.
fn mul_seg(txn: u64, g: u16, bytes: u32) -> Segment {
    Segment {
        paxi: hwsim_ports::PaxiFlit::data(FlitKind::Mul, 0),
        ..seg_to(hwsim_ports::MCAST_BIT | g, txn, 0, bytes)
    }
}
fn t2_credit(from: ChipId, credits: u16) -> CreditMsg {
    CreditMsg {
        src: from,
        vc: TYPE2_VC,
        ..credit(TYPE2_VC, credits)
    }
}

#[test]
fn type2_goes_without_a_slot_when_every_member_has_credit() {
    // 4096 B = 1344 × 3 + 64: 6 + 6 + 6 + 1 = 19 credits at 256 B with 50 B overhead; 20
    // admit one frame (each packet leaves uf_limit 1), not two.
    let p = Params {
        groups: vec![vec![1, 2]],
        type2_credits: 20,
        ..Params::default()
    };
    for skip in [true, false] {
        let mut tb = Tb::with_skip(p.clone(), skip);
        tb.seg(mul_seg(7, 0, 4096));
        tb.seg(mul_seg(8, 0, 4096));
        tb.steps(20);
        assert_eq!(tb.frames.len(), 1, "the second waits for credit");
        let f = tb.frames[0].1;
        assert_eq!(f.dst, hwsim_ports::MCAST_BIT);
        assert_eq!((f.npkts, f.first_idx, f.frame_bytes, f.txn), (4, 0, 4096, 7));
        assert_eq!(f.paxi.kind, FlitKind::Mul);
        assert_eq!(f.ecn, Ecn::NotEct, "TYPE2 is not under DCQCN");
        assert_eq!(tb.slots_used(), 0, "no slot, no PSN");
        assert!(tb.counter("type2_credit_block") > 0);
        assert_eq!(tb.counter("credits_outstanding"), 38, "19 from each member's ledger");
        // One member's return is not enough: both ledgers must admit the frame.
        tb.credit(t2_credit(1, 19));
        tb.steps(20);
        assert_eq!(tb.frames.len(), 1);
        tb.credit(t2_credit(2, 19));
        tb.until("the second frame", |tb| tb.frames.len() == 2);
        assert_eq!(tb.frames[1].1.txn, 8);
        tb.steps(10);
        assert!(tb.done.is_empty(), "TYPE2 is never ACKed: no FrameDone");
        assert_eq!(tb.counter("type2_frames_sent"), 2);
        assert_eq!(tb.counter("type2_payload_bytes_sent"), 8192);
    }
}

#[test]
fn the_multicast_mac_credit_holds_type2_until_the_mac_frees_one() {
    // One multicast MAC TX credit; the MAC keeps its MAC2TX credits for a while (its
    // replication buffer holds the frame): the second TYPE2 frame waits, a TYPE1 frame
    // does not (it needs only a MAC2TX credit, of which the bench has 8).
    let p = Params {
        groups: vec![vec![1]],
        mul_mac_credits: 1,
        ..Params::default()
    };
    for skip in [true, false] {
        let mut tb = Tb::with_skip(p.clone(), skip);
        tb.hold_mac_credits = true;
        tb.seg(mul_seg(1, 0, 64));
        tb.seg(mul_seg(2, 0, 64));
        tb.seg(seg(3, 0, 64));
        tb.steps(30);
        assert_eq!(tb.txns(), [1, 3], "TYPE2 #2 waits for the multicast credit");
        assert!(tb.counter("type2_mac_block") > 0);
        assert_eq!(tb.h.peek::<u8>("type2.mac_credit"), 0);
        // The MAC gives back both credits: the TYPE2 one frees the multicast credit.
        tb.hold_mac_credits = false;
        tb.until("the second TYPE2 frame", |tb| tb.frames.len() == 3);
        assert_eq!(tb.txns(), [1, 3, 2]);
    }
}

#[test]
fn type2_takes_its_weighted_turn_then_type1_gets_one() {
    // MUL weight 2: two TYPE2 frames, then a TYPE1 frame, while both have frames queued.
    let p = Params {
        groups: vec![vec![1]],
        vc_weights: [1, 1, 1, 1, 2],
        ..Params::default()
    };
    let mut tb = Tb::new(p);
    tb.mac_ready = false;
    for t in 0..3 {
        tb.seg(seg(100 + t, 0, 64));
    }
    for t in 0..6 {
        tb.seg(mul_seg(t, 0, 64));
    }
    tb.steps(30);
    tb.mac_ready = true;
    tb.until("nine frames", |tb| tb.frames.len() == 9);
    let kinds: Vec<u8> = tb.frames.iter().map(|(_, f)| f.paxi.kind.bits()).collect();
    // The first TYPE1 frame was granted before the TYPE2 segments arrived (the MAC held it).
    let (w, m) = (FlitKind::WData.bits(), FlitKind::Mul.bits());
    assert_eq!(kinds, [w, m, m, w, m, m, w, m, m], "{kinds:?}");
}

#[test]
fn a_type2_credit_frees_the_multicast_credit_whatever_order_the_mac_returns_them_in() {
    // The MAC frees a zero-byte frame ahead of the TYPE2 frame before it. The credit message
    // says which frame it was: the TYPE1 credit frees no multicast credit, the TYPE2 one does.
    let p = Params {
        groups: vec![vec![1]],
        mul_mac_credits: 1,
        ..Params::default()
    };
    let mut tb = Tb::new(p);
    tb.hold_mac_credits = true;
    tb.seg(mul_seg(1, 0, 64));
    tb.seg(seg(2, 0, 0));
    tb.steps(20);
    assert_eq!(tb.txns(), [1, 2]);
    assert_eq!(tb.h.peek::<u8>("type2.mac_credit"), 0);
    tb.credits_owed.make_contiguous().reverse();
    assert!(tb.h.push("mac_credit", tb.credits_owed.pop_front().unwrap()));
    tb.steps(3);
    assert_eq!(tb.h.peek::<u8>("type2.mac_credit"), 0, "a TYPE1 frame's credit");
    assert!(tb.h.push("mac_credit", tb.credits_owed.pop_front().unwrap()));
    tb.steps(3);
    assert_eq!(tb.h.peek::<u8>("type2.mac_credit"), 1, "the TYPE2 frame's credit");
    // A TYPE2 credit for a TYPE1 frame (the multicast credits all free) is a protocol
    // violation.
    tb.seg(seg(3, 0, 64));
    tb.until("the TYPE1 frame", |tb| tb.frames.len() == 3);
    assert!(tb.h.push("mac_credit", MacCreditRet { mul: true }));
    let err = (0..3).find_map(|_| tb.try_step().err()).expect("a violation");
    assert!(err.to_string().contains("TYPE2 credit returned"), "{err}");
}
