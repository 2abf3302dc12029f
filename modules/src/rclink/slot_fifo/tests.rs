//! Unit test of the standalone slot FIFO block (seed 000 «Slot 管理», «Go-Back-N 重传»): the
//! three slot states and the Go-Back-N ring sort.

use super::*;
use hwsim_hw::Harness;
use hwsim_ports::{Ctrl, DataFrame, FrameDone, Rh, Segment, SlotMap};

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
fn ctrl(rh: Rh) -> Ctrl {
    Ctrl {
        src: 1,
        dst: 0,
        lg: 0,
        rh,
        wire_bytes: 50,
        sent_at: 0,
    }
}

fn harness() -> Harness {
    let p = Params::default();
    Harness::new("slot_fifo", ports(&p), Box::new(move |b| build(&p, b)), 1, 1).unwrap()
}

/// Pushes `v` on `port`, stepping until the stream has room.
fn push<T: hwsim_hw::Value>(h: &mut Harness, port: &str, v: T, frames: &mut Vec<DataFrame>) {
    while !h.push(port, v.clone()) {
        run(h, 1, frames);
    }
    run(h, 1, frames);
}

/// Steps `cycles`, popping and logging the frames (and dropping every done).
fn run(h: &mut Harness, cycles: u64, frames: &mut Vec<DataFrame>) {
    for _ in 0..cycles {
        h.step().unwrap();
        if let Some(f) = h.pop::<DataFrame>("frame") {
            frames.push(f);
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
    run(&mut h, 2, &mut frames);
    assert_eq!(h.peek::<u16>("slots_used"), 5);
    let m = h.peek::<SlotMap>("slots");
    assert_eq!((m.wait_grant[0].count_ones(), m.wait_ack[0].count_ones()), (5, 0));
    for _ in 0..5 {
        push(&mut h, "grant", 0u8, &mut frames);
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
    for _ in 0..3 {
        push(&mut h, "grant", 0u8, &mut frames);
    }
    run(&mut h, 2, &mut frames);
    let psns: Vec<u16> = frames.iter().map(|f| f.first_psn.value()).collect();
    assert_eq!(psns, vec![0, 1, 2, 3, 4, 2, 3, 4]);
    assert_eq!(h.sim().counter("dut.diag_nak_retransmit_total"), Some(3));
    push(&mut h, "ctrl", ctrl(Rh::ack(qp(0), Psn::new(5).unwrap())), &mut frames);
    run(&mut h, 3, &mut frames);
    assert_eq!(h.peek::<u16>("slots_used"), 0);
    assert_eq!(h.peek::<SlotMap>("slots"), SlotMap::default());
}
