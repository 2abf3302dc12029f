//! Unit tests of the TX's TYPE1 path (seed 000 «Slot 管理», «PSN 管理», «VC 仲裁», «CBFC 流控»,
//! «Go-Back-N 重传»): PSN per flow and across the wrap, slot groups, CBFC blocking and returns,
//! misrouted and unsendable inputs, the weighted RR, NAK and timeout resends, QP fatal.

use super::*;

#[test]
fn psn_per_flow_in_order_and_latency() {
    let mut tb = Tb::new(Params::default());
    tb.steps(3);
    let pushed_at = tb.now();
    tb.seg(seg(1, 0, 4096)); // 4 packets: PSN 0..3
    tb.step();
    tb.step();
    // Pushed at n−1, popped and granted at n, visible to the MAC at n+1.
    assert_eq!(tb.frames[0].0, pushed_at + 1);
    tb.seg(seg(2, 0, 100)); // PSN 4
    tb.seg(seg(3, 1, 100)); // another QP: its own PSN space
    tb.seg(seg_to(2, 4, 0, 100)); // another dst, same QP: its own PSN space
    tb.seg(seg(5, 0, 0)); // a 0-byte segment is one packet: PSN 5
    tb.seg(seg(6, 0, 2689)); // 3 packets: PSN 6..8
    tb.steps(20);
    let got: Vec<(u64, u16, u8)> = tb
        .frames
        .iter()
        .map(|(_, f)| (f.txn, f.first_psn.value(), f.npkts))
        .collect();
    assert_eq!(
        got,
        vec![(1, 0, 4), (2, 4, 1), (3, 0, 1), (4, 0, 1), (5, 5, 1), (6, 6, 3)]
    );
    let f = tb.frames[0].1;
    assert_eq!((f.src, f.dst, f.lg, f.first_idx), (0, DST, 0, 0));
    assert_eq!((f.max_payload, f.pkt_ovhd, f.frame_bytes), (1344, 50, 4096));
    assert_eq!(f.ecn, Ecn::Ect0);
    assert_eq!(f.sent_at, pushed_at + 1);
    assert_eq!(tb.counter("frames_sent"), 6);
    assert_eq!(tb.counter("pkts_sent"), 11);
    assert_eq!(tb.counter("payload_bytes_sent"), 4096 + 300 + 2689);
    assert_eq!(tb.counter("wire_bytes_sent"), 4096 + 300 + 2689 + 11 * 50);
    assert_eq!(tb.slots_used(), 11);
    assert_eq!(tb.counter("slots_in_use"), 11);
}

#[test]
fn psn_wraps_and_cumulative_ack_across_the_wrap() {
    let mut tb = Tb::new(Params::default());
    // 1365 frames of 3 packets: PSN 0, 3, …, 4092; the next starts at 4095 and wraps.
    for i in 0..1365 {
        let f = tb.send_and_ack(seg(i, 0, 3 * 1344));
        assert_eq!(f.first_psn.value(), (i * 3) as u16);
    }
    assert_eq!(tb.counter("frames_done"), 1365);
    tb.seg(seg(9000, 0, 3 * 1344));
    tb.steps(4);
    let f = tb.frames.last().unwrap().1;
    assert_eq!(f.first_psn.value(), 4095);
    assert_eq!((f.psn_of(1).value(), f.psn_of(2).value()), (0, 1));
    assert_eq!(tb.slots_used(), 3);
    // ACK up to PSN 0 (exclusive): 4095 is ACKed, but the frame is not complete.
    tb.ctrl(ack(0, 0));
    tb.steps(4);
    assert_eq!(tb.done.len(), 1365);
    assert_eq!(tb.slots_used(), 3);
    // ACK 2 covers 0 and 1 across the wrap: the frame is done and its slots freed.
    tb.ctrl(ack(0, 2));
    tb.steps(4);
    assert_eq!(tb.done.len(), 1366);
    assert_eq!(tb.done.last().unwrap().1.txn, 9000);
    assert_eq!(tb.done.last().unwrap().1.bytes, 3 * 1344);
    assert_eq!(tb.slots_used(), 0);
    assert_eq!(tb.counter("slots_in_use"), 0);
    // Every frame's credit came back but the last one's.
    assert_eq!(tb.counter("credits_outstanding"), 18);
    // A stale ACK (behind the window) and an ACK for an unknown flow are ignored.
    tb.ctrl(ack(0, 4090));
    tb.ctrl(ack(5, 1));
    tb.steps(4);
    assert_eq!(tb.counter("acks_ignored"), 2);
    assert_eq!(tb.counter("acks_received"), 1365 + 2 + 2);
}

#[test]
fn slot_groups_and_backpressure() {
    let mut tb = Tb::new(Params {
        slots: 8,
        ..Default::default()
    });
    tb.seg(seg(1, 0, 4096));
    tb.seg(seg(2, 0, 4096));
    tb.seg(seg(3, 0, 4096)); // needs 4 slots, none left: stays in `seg`
    tb.steps(30);
    assert_eq!(tb.txns(), vec![1, 2]);
    assert_eq!(tb.slots_used(), 8);
    assert_eq!(tb.counter("slots_peak"), 8);
    assert_eq!(tb.counter("segments_accepted"), 2);
    // Counted once per blocked segment, however long it waits.
    assert_eq!(tb.counter("diag_slot_full"), 1);
    // A partial ACK of frame 1 frees nothing: the slot group goes as a whole.
    tb.ctrl(ack(0, 2));
    tb.steps(5);
    assert_eq!(tb.slots_used(), 8);
    assert!(tb.done.is_empty());
    // ACK frame 1 completely: its 4 slots take segment 3 in the same cycle.
    let at = tb.now();
    tb.ctrl(ack(0, 4));
    tb.steps(5);
    assert_eq!(tb.done.len(), 1);
    assert_eq!(
        tb.done[0],
        (
            at + 1,
            FrameDone {
                txn: 1,
                frame_seq: 0,
                bytes: 4096,
                failed: false
            }
        )
    );
    assert_eq!(tb.txns(), vec![1, 2, 3]);
    assert_eq!(tb.frames[2].0, at + 1, "segment 3 admitted and granted with the ACK");
    assert_eq!(tb.slots_used(), 8);
    assert_eq!(tb.counter("slots_peak"), 8);
    // A second blocked segment counts again.
    tb.seg(seg(4, 0, 100));
    tb.steps(10);
    assert_eq!(tb.counter("diag_slot_full"), 2);
    tb.ctrl(ack(0, 12));
    tb.steps(10);
    assert_eq!(tb.txns(), vec![1, 2, 3, 4]);
    assert_eq!(tb.slots_used(), 1);
    assert_eq!(tb.done.len(), 3);
}

#[test]
fn cbfc_cost_blocking_and_credit_return() {
    let p = Params {
        initial_credits: 13,
        ..Default::default()
    };
    {
        let mut b = Tb::new(p.clone());
        b.step();
    }
    // Costs: 1344 B → 6, 4096 B → 6+6+6+1, a 0-byte packet → 0 (no credit consumed).
    let cs = CreditSize::B256;
    let cost = |bytes: u32, from: u8| -> u32 {
        split_packets(bytes, NonZeroU32::new(1344).unwrap())
            .skip(from as usize)
            .filter(|b| *b > 0)
            .map(|b| cbfc_cost(b, 50, cs))
            .sum()
    };
    assert_eq!(cost(1344, 0), 6);
    assert_eq!(cost(4096, 0), 19);
    assert_eq!(cost(4096, 2), 7);
    assert_eq!(cost(0, 0), 0);

    let mut tb = Tb::new(p);
    tb.seg(seg(1, 0, 1344)); // 13 ≥ 6+1 → 7 left
    tb.seg(seg(2, 0, 1344)); // 7 ≥ 7 → 1 left (the boundary goes)
    tb.seg(seg(3, 0, 1344)); // 1 < 7: credit-blocked
    tb.steps(20);
    assert_eq!(tb.txns(), vec![1, 2]);
    let view = tb.h.peek::<CreditMsg>("credit_view");
    assert_eq!((view.src, view.dst, view.vc, view.credits), (0, DST, 0, 1));
    assert_eq!(tb.counter("credits_outstanding"), 12);
    let blocked = tb.counter("diag_credit_block");
    assert!(blocked >= 1);
    // Idle cycles do not count blocks: only rounds do, and rounds need a change.
    tb.steps(100);
    assert_eq!(tb.counter("diag_credit_block"), blocked);
    // 5 credits → 6 remaining < 7: still blocked (one more round, one more block).
    tb.credit(credit(0, 5));
    tb.steps(5);
    assert_eq!(tb.txns(), vec![1, 2]);
    assert_eq!(tb.counter("diag_credit_block"), blocked + 1);
    assert_eq!(tb.h.peek::<CreditMsg>("credit_view").credits, 6);
    // One more credit: 7 ≥ 7 → goes in the cycle the credit is seen.
    let at = tb.now();
    tb.credit(credit(0, 1));
    tb.steps(5);
    assert_eq!(tb.txns(), vec![1, 2, 3]);
    assert_eq!(tb.frames[2].0, at + 1);
    assert_eq!(tb.h.peek::<CreditMsg>("credit_view").credits, 1);
    // Other VCs and other destinations have their own ledgers; a 0-byte frame needs none.
    tb.seg(seg(4, 1, 1344));
    tb.seg(seg_to(2, 5, 0, 1344));
    tb.seg(seg(6, 0, 0));
    tb.steps(20);
    assert_eq!(tb.txns(), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(tb.counter("credits_outstanding"), 12 + 6 + 6);
    // Everything back: the gauge returns to 0.
    tb.credit(credit(0, 12));
    tb.credit(credit(1, 6));
    tb.credit(CreditMsg { src: 2, ..credit(0, 6) });
    tb.steps(10);
    assert_eq!(tb.counter("credits_outstanding"), 0);
}

#[test]
fn credit_over_return_is_a_violation() {
    let mut tb = Tb::new(Params::default());
    tb.seg(seg(1, 0, 1344));
    tb.steps(5);
    tb.credit(credit(0, 6)); // exactly back to 1024: fine
    tb.steps(3);
    tb.credit(credit(0, 1)); // 1025 > 1024
    let err = loop {
        if let Err(e) = tb.try_step() {
            break e.to_string();
        }
        assert!(tb.now() < 100, "no violation reported");
    };
    assert!(err.contains("credit over-return for dst 1 VC 0"), "{err}");
    assert!(err.contains("1024 remaining + 1 returned > 1024"), "{err}");
}

#[test]
fn misrouted_and_unsendable_inputs_are_violations() {
    let run = |p: Params, f: &dyn Fn(&mut Tb)| -> String {
        let mut tb = Tb::new(p);
        f(&mut tb);
        for _ in 0..10 {
            if let Err(e) = tb.try_step() {
                return e.to_string();
            }
        }
        panic!("no violation");
    };
    let e = run(Params::default(), &|tb| tb.seg(Segment { lg: 3, ..seg(1, 0, 10) }));
    assert!(e.contains("for LG 3, this is LG 0"), "{e}");
    let e = run(
        Params {
            slots: 2,
            ..Default::default()
        },
        &|tb| tb.seg(seg(1, 0, 4096)),
    );
    assert!(e.contains("4 packets never fit"), "{e}");
    let e = run(
        Params {
            initial_credits: 6,
            ..Default::default()
        },
        &|tb| tb.seg(seg(1, 0, 4096)),
    );
    assert!(e.contains("a packet costs 6 credits"), "{e}");
    let e = run(Params::default(), &|tb| tb.ctrl(Ctrl { dst: 5, ..ack(0, 1) }));
    assert!(e.contains("ctrl for chip 5 LG 0 arrived at chip 0 LG 0"), "{e}");
    let e = run(Params::default(), &|tb| tb.credit(credit(4, 1)));
    assert!(e.contains("VC 4"), "{e}");
}

/// Fills the VC queues while the MAC is stalled (the first frame granted sits in the MAC's
/// one-entry input), then lets the MAC run: frames come out in arbitration order.
fn order_after_stall(p: Params, segs: &[Segment]) -> Vec<u16> {
    let mut tb = Tb::new(p);
    tb.mac_ready = false;
    for s in segs {
        tb.seg(*s);
    }
    tb.steps(4 * segs.len() as u64 + 4);
    tb.mac_ready = true;
    tb.steps(4 * segs.len() as u64 + 4);
    tb.qps()
}

#[test]
fn rr_weights_are_respected() {
    let segs = [
        seg(0, 3, 100), // granted at once (into the stalled MAC): pointer 3 → 4
        seg(1, 0, 100),
        seg(2, 0, 100),
        seg(3, 0, 100),
        seg(4, 1, 100),
        seg(5, 1, 100),
        seg(6, 1, 100),
    ];
    let p = Params {
        vc_weights: [2, 1, 1, 1, 256],
        ..Default::default()
    };
    // MUL (4) is empty → bank 0 sends: pointer 0, counter 1; its weight 2 gives it a second
    // frame; then bank 1 once; then bank 0 again (pointer 2, 3, 4 empty), …
    assert_eq!(order_after_stall(p, &segs), vec![3, 0, 0, 1, 0, 1, 1]);
    // Equal weights alternate.
    assert_eq!(order_after_stall(Params::default(), &segs), vec![3, 0, 1, 0, 1, 0, 1]);
}

#[test]
fn rr_pointer_and_counter_stay_on_a_credit_blocked_bank() {
    // Bank 0 has weight 2; (dst 1, vc 0) has 12 credits.
    let mut tb = Tb::new(Params {
        vc_weights: [2, 1, 1, 1, 256],
        initial_credits: 12,
        ..Default::default()
    });
    tb.seg(seg(1, 0, 1344)); // a0, cost 6: sent; pointer stays on bank 0 (counter 1 of 2)
    tb.seg(seg(2, 0, 1344)); // a1, cost 6 > 6 − 1: credit-blocked
    tb.seg(seg(3, 0, 0)); // a2, 0 B (no credit needed), behind a1 in its flow
    tb.steps(12);
    assert_eq!(tb.txns(), vec![1]);
    // Rounds that grant nothing: they must move neither the pointer nor the counter.
    let rounds = tb.counter("diag_arb_calls");
    let blocks = tb.counter("diag_credit_block");
    tb.ctrl(ack(0, 1));
    tb.steps(3);
    tb.ctrl(Ctrl {
        rh: Rh::cnp(qp(3)), // a QP that never sent: nothing to slow down
        ..ack(0, 0)
    });
    tb.steps(3);
    tb.credit(credit(2, 0));
    tb.steps(3);
    assert_eq!(tb.counter("diag_arb_calls"), rounds + 3);
    assert_eq!(tb.counter("diag_credit_block"), blocks + 3);
    assert_eq!(tb.txns(), vec![1]);
    assert_eq!(tb.counter("cnp_received"), 1);
    // In one cycle bank 1 gets a frame and bank 0 the credit for a1: bank 0 (the pointer's)
    // goes first and that is its second turn (counter 2 = weight), so bank 1 is next, then
    // bank 0 again. A pointer moved by the empty rounds would send b0 first; a counter reset
    // by them would send a2 before b0.
    tb.seg(seg(4, 1, 1344));
    tb.credit(credit(0, 6));
    tb.steps(12);
    assert_eq!(tb.txns(), vec![1, 2, 4, 3]);
}

#[test]
fn per_flow_blocking_skips_later_frames_of_the_blocked_flow_only() {
    let mut tb = Tb::new(Params {
        initial_credits: 12,
        ..Default::default()
    });
    tb.mac_ready = false;
    tb.seg(seg(1, 0, 1344)); // A0: granted into the stalled MAC; (dst 1, vc 0) 12 → 6
    tb.seg(seg(2, 0, 4096)); // A1: its first packet costs 6, needs 7: blocked
    tb.seg(seg(3, 0, 64)); // A2: costs 1 and would pass, but must not overtake A1
    tb.seg(seg(4, 4, 64)); // C0: QP 4 is bank 0 too, same ledger, another flow: may go
    tb.seg(seg_to(2, 5, 0, 1344)); // B0: dst 2, same VC, its own ledger: may go
    tb.steps(20);
    tb.mac_ready = true;
    tb.steps(20);
    assert_eq!(tb.txns(), vec![1, 4, 5]);
    assert!(tb.counter("diag_credit_block") >= 1);
    // CBFC per packet: 5 + 7 = 12 lets A1's first packet go (12 ≥ 6 + 1 → 6 left), not its
    // second (6 < 7); A2 still waits behind the rest of A1.
    tb.credit(credit(0, 7));
    tb.steps(10);
    assert_eq!(tb.txns(), vec![1, 4, 5, 2]);
    tb.credit(credit(0, 6)); // 12: packet 2 of A1 (PSN 2)
    tb.steps(10);
    // 12: packets 3 and 4 (6 + 1, 5 left), then A2 (1 + 1 ≤ 5).
    tb.credit(credit(0, 6));
    tb.steps(10);
    assert_eq!(tb.txns(), vec![1, 4, 5, 2, 2, 2, 3]);
    let a: Vec<(u16, u8)> = tb
        .frames
        .iter()
        .filter(|(_, f)| f.dst == DST && f.qp == qp(0))
        .map(|(_, f)| (f.first_psn.value(), f.npkts))
        .collect();
    assert_eq!(
        a,
        vec![(0, 1), (1, 1), (2, 1), (3, 2), (5, 1)],
        "flow A on the wire in PSN order, A1 in three runs"
    );
    // (dst 1, vc 0): 12 − 4 outstanding; (dst 2, vc 0): B0's 6.
    assert_eq!(tb.counter("credits_outstanding"), 8 + 6);
}

#[test]
fn nak_seed_example_resends_7_8_9() {
    let mut tb = Tb::new(Params::default());
    for i in 0..5 {
        tb.send_and_ack(seg(i, 0, 1000)); // PSN 0..4, ACKed
    }
    for i in 5..10 {
        tb.seg(seg(i, 0, 1000)); // PSN 5..9 in flight
    }
    tb.steps(20);
    assert_eq!(tb.psns(), (0..10).collect::<Vec<_>>());
    assert_eq!(tb.slots_used(), 5);
    tb.ctrl(nak(0, 7));
    tb.steps(20);
    // 5 and 6 freed (their frames are done), 7, 8, 9 resent in that order.
    let done: Vec<u64> = tb.done.iter().map(|(_, d)| d.txn).collect();
    assert_eq!(done, (0..7).collect::<Vec<_>>());
    assert_eq!(&tb.psns()[10..], &[7, 8, 9]);
    assert_eq!(tb.slots_used(), 3);
    assert_eq!(tb.counter("diag_nak_processed"), 1);
    assert_eq!(tb.counter("diag_nak_retransmit_total"), 3);
    assert_eq!(tb.counter("frames_sent"), 13);
    // PSN 0..4 had their credit back; 5..9 and the three resends consume 5 credits each.
    assert_eq!(tb.counter("credits_outstanding"), 8 * 5);
    tb.ctrl(ack(0, 10));
    tb.steps(10);
    assert_eq!(tb.done.len(), 10);
    assert_eq!(tb.slots_used(), 0);
}

#[test]
fn nak_resends_frame_tails_at_the_head_of_the_vc_queue() {
    let mut tb = Tb::new(Params::default());
    tb.seg(seg(1, 0, 4096)); // PSN 0..3
    tb.seg(seg(2, 0, 2688)); // PSN 4, 5
    tb.steps(10);
    tb.mac_ready = false;
    tb.seg(seg(3, 4, 100)); // another flow of bank 0, waiting behind the stalled MAC
    tb.seg(seg(4, 0, 100)); // flow A's next frame, PSN 6, never sent yet
    tb.steps(10);
    tb.ctrl(nak(0, 2));
    tb.steps(3);
    tb.mac_ready = true;
    tb.steps(20);
    let got: Vec<(u64, u16, u8, u8)> = tb
        .frames
        .iter()
        .map(|(_, f)| (f.txn, f.first_psn.value(), f.first_idx, f.npkts))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 0, 0, 4),
            (2, 4, 0, 2),
            (3, 0, 0, 1), // granted into the stalled MAC before the NAK
            (1, 2, 2, 2), // the tail of frame 1: packets 2, 3
            (2, 4, 0, 2),
            (4, 6, 0, 1),
        ]
    );
    assert!(tb.done.is_empty(), "frame 1 only half ACKed");
    assert_eq!(tb.counter("diag_nak_retransmit_total"), 4);
    assert_eq!(tb.frames[3].1.payload(), 1344 + 64);
    tb.ctrl(ack(0, 7));
    tb.ctrl(ack(4, 1));
    tb.steps(10);
    assert_eq!(tb.done.len(), 4);
    assert_eq!(tb.slots_used(), 0);
}

#[test]
fn nak_ring_sort_across_the_psn_wrap() {
    let mut tb = Tb::new(Params::default());
    for i in 0..1364 {
        tb.send_and_ack(seg(i, 0, 3 * 1344)); // PSN 0..4091
    }
    tb.send_and_ack(seg(9999, 0, 2 * 1344)); // 4092, 4093
    for i in 0..4 {
        tb.seg(seg(10_000 + i, 0, 100)); // 4094, 4095, 0, 1
    }
    tb.steps(20);
    let n = tb.frames.len();
    assert_eq!(&tb.psns()[n - 4..], &[4094, 4095, 0, 1]);
    tb.ctrl(nak(0, 4095));
    tb.steps(20);
    assert_eq!(&tb.psns()[n..], &[4095, 0, 1]);
    assert_eq!(tb.done.last().unwrap().1.txn, 10_000);
}

#[test]
fn retry_limit_makes_the_qp_fatal_and_other_qps_go_on() {
    let mut tb = Tb::new(Params {
        max_retry: 2,
        ..Default::default()
    });
    for i in 0..3 {
        tb.seg(seg(i, 0, 100)); // PSN 0, 1, 2 on QP 0
    }
    tb.steps(10);
    tb.ctrl(nak(0, 0));
    tb.steps(10);
    tb.ctrl(nak(0, 0));
    tb.steps(10);
    tb.ctrl(nak(0, 0)); // third in a row without progress: QP 0 is fatal
    tb.steps(10);
    assert_eq!(tb.counter("diag_nak_processed"), 2);
    assert_eq!(tb.counter("diag_max_retry_hit"), 1);
    assert_eq!(tb.counter("frames_sent"), 9);
    // Its three frames are given up and reported failed; the slots are free again.
    assert_eq!(tb.counter("frames_failed"), 3);
    assert_eq!(tb.counter("slots_in_use"), 0);
    assert_eq!(tb.counter("fatal_qp"), 1, "QP 0 (+1)");
    assert!(tb.counter("fatal_at") > 0);
    let failed: Vec<u64> = tb.done.iter().filter(|(_, d)| d.failed).map(|(_, d)| d.txn).collect();
    assert_eq!(failed, vec![0, 1, 2]);
    // A new segment of the dead QP fails at once; QP 1 still sends.
    tb.seg(seg(7, 0, 100));
    tb.seg(seg(8, 1, 100));
    tb.steps(10);
    assert_eq!(tb.counter("frames_failed"), 4);
    assert_eq!(tb.counter("frames_sent"), 10, "only QP 1's frame went out");
    assert!(tb.done.iter().any(|(_, d)| d.txn == 7 && d.failed));
}

#[test]
fn retry_timeout_resends_from_the_smallest_waitack_psn() {
    let mut tb = Tb::new(Params {
        retry_timeout: 100,
        ..Default::default()
    });
    tb.seg(seg(1, 0, 100)); // PSN 0
    tb.seg(seg(2, 0, 100)); // PSN 1
    tb.steps(10);
    let t0 = tb.frames[0].0;
    tb.ctrl(ack(0, 1)); // frame 1 ACKed: its timer is void
    let t1 = tb.frames[1].0;
    assert!(t1 > t0);
    while tb.now() < t1 + 100 {
        tb.step();
    }
    assert_eq!(tb.psns(), vec![0, 1], "nothing resent before the deadline");
    tb.steps(5);
    // Frame 2's resend is granted exactly at its deadline.
    assert_eq!(tb.psns(), vec![0, 1, 1]);
    assert_eq!(tb.frames[2].0, t1 + 100);
    assert_eq!(tb.counter("diag_timeout"), 1);
    assert_eq!(tb.counter("diag_timeout_retransmit_total"), 1);
    assert_eq!(tb.counter("diag_nak_processed"), 0);
    tb.ctrl(ack(0, 2));
    tb.steps(300);
    assert_eq!(tb.psns(), vec![0, 1, 1], "no timeout after the ACK");
}

#[test]
fn a_run_ends_once_everything_is_acked() {
    let mut tb = Tb::new(Params::default());
    for i in 0..3 {
        tb.seg(seg(i, 0, 100));
    }
    tb.steps(10);
    tb.ctrl(ack(0, 3));
    tb.until("three FrameDone", |tb| tb.done.len() == 3);
    // No timer is left for the ACKed frames: the simulation goes quiescent at once instead
    // of waking at each void retry deadline.
    let activations = tb.h.sim().stats().activations;
    assert_eq!(tb.h.run(1_000_000).unwrap(), hwsim_hw::Stop::Quiescent);
    assert!(tb.now() < 100, "ended at {}", tb.now());
    let extra = tb.h.sim().stats().activations - activations;
    // The last cycle's three processes of the core and the bench: no void deadline after them.
    assert!(extra <= 4, "{extra} activations after the last FrameDone");
}

#[test]
fn done_messages_queue_when_paxi_is_slow() {
    let mut tb = Tb::new(Params::default());
    for i in 0..4 {
        tb.seg(seg(i, 0, 100));
    }
    tb.steps(12);
    // One cumulative ACK completes 4 frames: four FrameDone, one per cycle.
    let at = tb.now();
    tb.ctrl(ack(0, 4));
    tb.steps(10);
    let cycles: Vec<Cycle> = tb.done.iter().map(|(c, _)| *c).collect();
    // The bench pops each at once; the space shows a cycle later: one every 2 cycles.
    assert_eq!(cycles, vec![at + 1, at + 3, at + 5, at + 7]);
    assert_eq!(tb.counter("frames_done"), 4);
}
