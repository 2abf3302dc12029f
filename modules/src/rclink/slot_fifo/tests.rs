//! Unit test of the slot FIFO node (`slot_fifo`, the TX's `tx.slot_fifo`; seed 000 «Slot 管理»,
//! «Go-Back-N 重传»): the three slot states and the Go-Back-N ring sort, the test playing the
//! VC queues.

use super::*;
use crate::rclink::tx;
use hwsim_hw::Harness;
use hwsim_ports::{Ctrl, FrameDone, QueueOp, QueueOpKind, Rh, Segment, SlotGrant, SlotMap, TxCtrl, UInt};

fn qp(v: u16) -> QpId {
    QpId::new(v).unwrap()
}
fn seg(txn: u64, bytes: u32) -> Segment {
    Segment {
        txn,
        frame_seq: 0,
        dst: 1,
        qp: qp(0),
        bytes,
        lg: 0,
        ..Default::default()
    }
}
fn ctrl(rh: Rh) -> TxCtrl {
    TxCtrl {
        ctrl: Ctrl {
            src: 1,
            dst: 0,
            lg: 0,
            rh,
            wire_bytes: 50,
            sent_at: 0,
        },
        filtered: false,
    }
}
fn grant(id: u32) -> SlotGrant {
    SlotGrant {
        id: UInt(id as u64),
        k: 1,
        type2: false,
    }
}

fn harness() -> Harness {
    let p = tx::Params::default();
    Harness::new(
        "slot_fifo",
        super::ports(&p),
        Box::new(move |b| super::build(&p, b)),
        1,
        64,
    )
    .unwrap()
}

/// Pushes `v` on `port`, stepping until the stream has room.
fn push<T: hwsim_hw::Value>(h: &mut Harness, port: &str, v: T, ops: &mut Vec<QueueOp>) {
    while !h.push(port, v.clone()) {
        run(h, 1, ops);
    }
    run(h, 1, ops);
}

/// Steps `cycles`, popping and logging the queue ops (and dropping every done).
fn run(h: &mut Harness, cycles: u64, ops: &mut Vec<QueueOp>) {
    for _ in 0..cycles {
        h.step().unwrap();
        while let Some(op) = h.pop::<QueueOp>("q_ops") {
            ops.push(op);
        }
        while h.pop::<FrameDone>("done").is_some() {}
    }
}

#[test]
fn three_states_and_go_back_n_sort() {
    let mut h = harness();
    let mut frames = Vec::new();
    for i in 0..5 {
        push(&mut h, "seg", seg(i, 1000), &mut frames);
    }
    assert!(frames.iter().all(|o| o.op == QueueOpKind::Push));
    run(&mut h, 2, &mut frames);
    assert_eq!(h.peek::<u16>("slots_used"), 5);
    let m = h.peek::<SlotMap>("slots");
    assert_eq!((m.wait_grant[0].count_ones(), m.wait_ack[0].count_ones()), (5, 0));
    for id in 0..5 {
        push(&mut h, "q_grant", grant(id), &mut frames);
    }
    run(&mut h, 2, &mut frames);
    let m = h.peek::<SlotMap>("slots");
    assert_eq!((m.wait_grant[0].count_ones(), m.wait_ack[0].count_ones()), (0, 5));
    // NAK ack_psn = 2: 0, 1 freed; 2, 3, 4 back to WaitGrant at the head, in PSN order.
    push(&mut h, "ctrl", ctrl(Rh::nak(qp(0), Psn::new(2).unwrap())), &mut frames);
    run(&mut h, 2, &mut frames);
    assert_eq!(h.peek::<u16>("slots_used"), 3);
    let m = h.peek::<SlotMap>("slots");
    assert_eq!((m.wait_grant[0].count_ones(), m.wait_ack[0].count_ones()), (3, 0));
    // The frames back at the head of their queue: pushed largest PSN first, so 2, 3, 4 lead.
    let psns: Vec<(QueueOpKind, u16)> = frames.iter().map(|o| (o.op, o.first_psn.value())).collect();
    use QueueOpKind::{Front, Push};
    assert_eq!(
        psns,
        vec![
            (Push, 0),
            (Push, 1),
            (Push, 2),
            (Push, 3),
            (Push, 4),
            (Front, 4),
            (Front, 3),
            (Front, 2)
        ]
    );
    for id in 2..5 {
        push(&mut h, "q_grant", grant(id), &mut frames);
    }
    run(&mut h, 2, &mut frames);
    assert_eq!(h.sim().counter("dut.diag_nak_retransmit_total"), Some(3));
    push(&mut h, "ctrl", ctrl(Rh::ack(qp(0), Psn::new(5).unwrap())), &mut frames);
    run(&mut h, 3, &mut frames);
    assert_eq!(h.peek::<u16>("slots_used"), 0);
    assert_eq!(h.peek::<SlotMap>("slots"), SlotMap::default());
}
