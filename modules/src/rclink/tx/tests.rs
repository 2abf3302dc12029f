//! Unit tests of the RC Link TX (seed 000 «TX 侧设计», appendix C; seed 002 TYPE2 and ACK-VC
//! CBFC): one TX in a bench that plays the MAC and PAXI (`Tb`), the parameter checks, and event
//! skip on and off alike.

use super::*;
use hwsim_hw::{Cycle, Harness};
use hwsim_ports::{cbfc_cost, split_packets, CreditSize, Ecn, FlitKind, Psn, Rh, ACK_VC};
use std::collections::VecDeque;
use std::num::NonZeroU32;

const DST: ChipId = 1;

fn qp(v: u16) -> QpId {
    QpId::new(v).unwrap()
}
fn psn(v: u16) -> Psn {
    Psn::new(v).unwrap()
}
fn seg_to(dst: ChipId, txn: u64, q: u16, bytes: u32) -> Segment {
    Segment {
        txn,
        frame_seq: 0,
        dst,
        qp: qp(q),
        bytes,
        lg: 0,
        ..Default::default()
    }
}
fn seg(txn: u64, q: u16, bytes: u32) -> Segment {
    seg_to(DST, txn, q, bytes)
}
fn ack(q: u16, ack_psn: u16) -> Ctrl {
    Ctrl {
        src: DST,
        dst: 0,
        lg: 0,
        rh: Rh::ack(qp(q), psn(ack_psn)),
        wire_bytes: 50,
        sent_at: 0,
    }
}
fn nak(q: u16, ack_psn: u16) -> Ctrl {
    Ctrl {
        rh: Rh::nak(qp(q), psn(ack_psn)),
        ..ack(q, ack_psn)
    }
}
fn credit(vc: u8, credits: u16) -> CreditMsg {
    CreditMsg {
        src: DST,
        dst: 0,
        lg: 0,
        vc,
        credits,
        sent_at: 0,
    }
}

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
        let mut h = Harness::new("rclink_tx", ports(&p), Box::new(move |b| build(&q, b)), 1, 1).unwrap();
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

/// A bench around the DUT: inputs queued per port and pushed (one per port per cycle) as
/// soon as they are due and the stream has room; a MAC that pops one frame per cycle while
/// `mac_ready`; PAXI taking every `done` at once. Outputs are logged with their push cycle.
struct Tb {
    h: Harness,
    segs: VecDeque<(Cycle, Segment)>,
    ctrls: VecDeque<(Cycle, Ctrl)>,
    credits: VecDeque<(Cycle, CreditMsg)>,
    mac_ready: bool,
    /// The MAC keeps the credits it owes (they go back when this is cleared).
    hold_mac_credits: bool,
    credits_owed: u8,
    frames: Vec<(Cycle, DataFrame)>,
    done: Vec<(Cycle, FrameDone)>,
}

impl Tb {
    fn new(p: Params) -> Tb {
        Tb::with_skip(p, true)
    }
    fn with_skip(p: Params, skip: bool) -> Tb {
        // The bench plays the MAC: it takes a frame when `mac_ready` and gives its credit
        // back at once; with 8 credits the frame stream's room is what binds, as in a MAC
        // with a one-frame input register.
        let p = Params { mac_credits: 8, ..p };
        let mut h = Harness::new("rclink_tx", ports(&p), Box::new(move |b| build(&p, b)), 1, 1).unwrap();
        h.sim_mut().set_skip(skip);
        Tb {
            h,
            segs: VecDeque::new(),
            ctrls: VecDeque::new(),
            credits: VecDeque::new(),
            mac_ready: true,
            hold_mac_credits: false,
            credits_owed: 0,
            frames: Vec::new(),
            done: Vec::new(),
        }
    }
    fn now(&self) -> Cycle {
        self.h.now()
    }
    fn seg(&mut self, s: Segment) {
        let at = self.now();
        self.segs.push_back((at, s));
    }
    fn ctrl(&mut self, c: Ctrl) {
        let at = self.now();
        self.ctrls.push_back((at, c));
    }
    fn credit(&mut self, c: CreditMsg) {
        let at = self.now();
        self.credits.push_back((at, c));
    }
    fn try_step(&mut self) -> Result<(), hwsim_hw::SimError> {
        let now = self.now();
        if self.credits_owed > 0 && !self.hold_mac_credits && self.h.push("mac_credit", self.credits_owed) {
            self.credits_owed = 0;
        }
        if let Some(&(at, s)) = self.segs.front() {
            if at <= now && self.h.push("seg", s) {
                self.segs.pop_front();
            }
        }
        if let Some(&(at, c)) = self.ctrls.front() {
            if at <= now && self.h.push("ctrl", c) {
                self.ctrls.pop_front();
            }
        }
        if let Some(&(at, c)) = self.credits.front() {
            if at <= now && self.h.push("credit", c) {
                self.credits.pop_front();
            }
        }
        self.h.step()?;
        if self.mac_ready {
            if let Some(f) = self.h.pop::<DataFrame>("frame") {
                self.frames.push((now, f));
                self.credits_owed += 1;
            }
        }
        while let Some(d) = self.h.pop::<FrameDone>("done") {
            self.done.push((now, d));
        }
        Ok(())
    }
    fn step(&mut self) {
        self.try_step().unwrap();
    }
    fn steps(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }
    fn counter(&self, name: &str) -> u64 {
        self.h
            .sim()
            .counter(&format!("dut.{name}"))
            .unwrap_or_else(|| panic!("no counter {name}"))
    }
    fn slots_used(&self) -> u16 {
        self.h.peek::<u16>("slots_used")
    }
    /// First PSNs of the frames sent so far.
    fn psns(&self) -> Vec<u16> {
        self.frames.iter().map(|(_, f)| f.first_psn.value()).collect()
    }
    fn qps(&self) -> Vec<u16> {
        self.frames.iter().map(|(_, f)| f.qp.value()).collect()
    }
    fn txns(&self) -> Vec<u64> {
        self.frames.iter().map(|(_, f)| f.txn).collect()
    }
    /// Steps until `cond` holds; panics after 1000 cycles (a test must fail, not hang).
    fn until(&mut self, what: &str, cond: impl Fn(&Tb) -> bool) {
        let start = self.now();
        while !cond(self) {
            assert!(self.now() < start + 1000, "waited 1000 cycles for {what}");
            self.step();
        }
    }
    /// Sends one segment, waits for its frame, ACKs it fully and returns its credit (as the
    /// RX would), and waits for its FrameDone.
    fn send_and_ack(&mut self, s: Segment) -> DataFrame {
        let (nf, nd) = (self.frames.len(), self.done.len());
        self.seg(s);
        self.until("the frame", |tb| tb.frames.len() > nf);
        let f = self.frames[nf].1;
        let next = f.psn_of(f.first_idx + f.npkts - 1).next();
        self.ctrl(ack(f.qp.value(), next.value()));
        let cost: u32 = (f.first_idx..f.first_idx + f.npkts)
            .map(|i| f.pkt_bytes(i))
            .filter(|b| *b > 0)
            .map(|b| cbfc_cost(b, 50, CreditSize::B256))
            .sum();
        self.credit(credit(f.qp.vc_bank().value(), cost as u16));
        self.until("the FrameDone", |tb| tb.done.len() > nd);
        f
    }
}

#[test]
fn defaults_follow_appendix_c() {
    let p = Params::default();
    assert_eq!((p.chip, p.lg, p.slots), (0, 0, 512));
    assert_eq!((p.max_payload, p.pkt_ovhd, p.credit_size), (1344, 50, 256));
    assert_eq!((p.uf_limit, p.initial_credits), (1, 1024));
    assert_eq!(p.vc_weights, [1, 1, 1, 1, 256]);
    assert_eq!((p.max_retry, p.retry_timeout), (15, 50_000));
    assert!(p.check().is_ok());
}

#[test]
fn out_of_range_params_name_the_parameter() {
    let cases: Vec<(Params, &str)> = vec![
        (
            Params {
                lg: 8,
                ..Default::default()
            },
            "lg = 8",
        ),
        (
            Params {
                slots: 0,
                ..Default::default()
            },
            "slots = 0",
        ),
        (
            Params {
                slots: 2048,
                ..Default::default()
            },
            "slots = 2048",
        ),
        (
            Params {
                max_payload: 0,
                ..Default::default()
            },
            "max_payload = 0",
        ),
        (
            Params {
                pkt_ovhd: 512,
                ..Default::default()
            },
            "pkt_ovhd = 512",
        ),
        (
            Params {
                credit_size: 100,
                ..Default::default()
            },
            "credit_size = 100",
        ),
        (
            Params {
                uf_limit: 0,
                ..Default::default()
            },
            "uf_limit = 0",
        ),
        (
            Params {
                uf_limit: 8,
                ..Default::default()
            },
            "uf_limit = 8",
        ),
        (
            Params {
                initial_credits: 32768,
                ..Default::default()
            },
            "initial_credits = 32768",
        ),
        (
            Params {
                initial_credits: 1,
                ..Default::default()
            },
            "initial_credits = 1",
        ),
        (
            Params {
                vc_weights: [1, 0, 1, 1, 1],
                ..Default::default()
            },
            "vc_weights[1] = 0",
        ),
        (
            Params {
                retry_timeout: 0,
                ..Default::default()
            },
            "retry_timeout = 0",
        ),
    ];
    for (p, want) in cases {
        let err = p.check().unwrap_err();
        assert!(err.starts_with(want), "{err} should start with {want}");
    }
    let err = Harness::new(
        "rclink_tx",
        ports(&Params::default()),
        Box::new(|b| {
            build(
                &Params {
                    credit_size: 3,
                    ..Default::default()
                },
                b,
            )
        }),
        1,
        1,
    )
    .err()
    .expect("refused")
    .to_string();
    assert!(err.contains("credit_size = 3"), "{err}");
}

#[test]
fn the_frame_format_sets_the_header_tags_and_ect_only_on_standard() {
    let p = Params {
        frame_format: FrameFormat::AfhLite,
        vlan: true,
        ..Params::default()
    };
    let e = p.check().unwrap_err();
    assert!(e.contains("vlan = true") && e.contains("AFH_Lite"), "{e}");
    let p = Params {
        data_priority: 8,
        ..Params::default()
    };
    assert!(p.check().unwrap_err().contains("data_priority = 8"));
    let p = Params {
        frame_format: FrameFormat::AfhGen1,
        vlan: true,
        data_priority: 3,
        ..Params::default()
    };
    let h = p.header().unwrap();
    assert_eq!(
        (h.format, h.pcp, h.dscp),
        (FrameFormat::AfhGen1, Some(UInt(3)), UInt(0))
    );
    assert_eq!(Params::default().header().unwrap().dscp, UInt(16), "Standard: DSCP CS2");
}

#[test]
fn paxi_responses_carry_rsp_priority_and_requests_data_priority() {
    use hwsim_ports::{FlitKind, PaxiFlit};
    let p = Params {
        rsp_priority: 8,
        ..Params::default()
    };
    assert!(p.check().unwrap_err().contains("rsp_priority = 8"));
    // Tagged Standard frames: the PCP and the DSCP class selector both carry the priority.
    let mut tb = Tb::new(Params {
        vlan: true,
        ..Params::default()
    });
    let kinds = [FlitKind::WData, FlitKind::B, FlitKind::Ar, FlitKind::R];
    for (k, kind) in kinds.into_iter().enumerate() {
        tb.seg(Segment {
            paxi: PaxiFlit::data(kind, 0),
            ..seg(k as u64 + 1, 0, 64)
        });
        tb.step();
    }
    tb.steps(10);
    let got: Vec<(FlitKind, Option<UInt<3>>, UInt<6>)> = tb
        .frames
        .iter()
        .map(|(_, f)| (f.paxi.kind, f.hdr.pcp, f.hdr.dscp))
        .collect();
    assert_eq!(
        got,
        vec![
            (FlitKind::WData, Some(UInt(2)), UInt(16)),
            (FlitKind::B, Some(UInt(1)), UInt(8)),
            (FlitKind::Ar, Some(UInt(2)), UInt(16)),
            (FlitKind::R, Some(UInt(1)), UInt(8)),
        ]
    );
}

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
    assert!(tb.h.sim().stats().activations <= activations + 2);
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

/// What a run leaves behind: every counter, and the frames and FrameDone with their cycles.
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

type Outcome = (Vec<(String, u64)>, Vec<(Cycle, DataFrame)>, Vec<(Cycle, FrameDone)>);

/// A scenario mixing every path, run with event skip on and off.
fn mixed(skip: bool) -> Outcome {
    let mut tb = Tb::with_skip(
        Params {
            slots: 16,
            initial_credits: 40,
            retry_timeout: 500,
            vc_weights: [2, 1, 3, 1, 256],
            ..Default::default()
        },
        skip,
    );
    for i in 0..12u64 {
        let q = (i % 5) as u16;
        tb.seg(seg(i, q, 700 + (i as u32 * 397) % 3000));
    }
    for t in 0..400u64 {
        match t {
            60 => tb.ctrl(ack(0, 3)),
            70 => tb.ctrl(nak(1, 1)),
            80 => tb.credit(credit(0, 10)),
            90 => tb.credit(credit(1, 12)),
            95 => tb.credit(credit(2, 20)),
            120 => tb.ctrl(ack(2, 2)),
            150 => tb.mac_ready = false,
            180 => tb.mac_ready = true,
            _ => {}
        }
        tb.step();
    }
    tb.steps(1000);
    let counters =
        tb.h.sim()
            .counters_of("dut")
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
    (counters, tb.frames, tb.done)
}

#[test]
fn event_skip_on_and_off_give_the_same_results() {
    let a = mixed(true);
    let b = mixed(false);
    assert!(a.1.len() > 10, "the scenario sends: {:?}", a.0);
    assert!(a.0.iter().any(|(n, v)| n.contains("diag_credit_block") && *v > 0));
    assert!(a.0.iter().any(|(n, v)| n.contains("diag_timeout") && *v > 0));
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert_eq!(a.2, b.2);
}

#[test]
fn idle_ticks_change_nothing() {
    let mut tb = Tb::with_skip(
        Params {
            initial_credits: 8,
            ..Default::default()
        },
        false,
    );
    tb.seg(seg(1, 0, 1344));
    tb.seg(seg(2, 0, 1344)); // credit-blocked forever
    tb.steps(20);
    let before: Vec<(String, u64)> =
        tb.h.sim()
            .counters_of("dut")
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
    tb.steps(5000);
    let after: Vec<(String, u64)> =
        tb.h.sim()
            .counters_of("dut")
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
    assert_eq!(before, after);
}
