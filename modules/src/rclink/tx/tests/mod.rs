//! Unit tests of the RC Link TX (seed 000 «TX 侧设计», appendix C; seed 002 TYPE2 and ACK-VC
//! CBFC): one TX in a bench that plays the MAC and PAXI (`Tb`), the parameter checks, and event
//! skip on and off alike.

use super::*;
use hwsim_hw::{Cycle, Harness};
use hwsim_ports::{
    cbfc_cost, split_packets, CreditMsg, CreditSize, Ctrl, DataFrame, Ecn, FlitKind, FrameDone, MacCreditRet, Psn,
    QpId, Rh, Segment, UInt, ACK_VC,
};
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

/// The TYPE1 path: PSN, slots, CBFC, arbitration, Go-Back-N, violations.
mod type1;
/// The seed 002 paths: TYPE2 (multicast) and the ACK-VC credit return.
mod type2;

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
    /// MAC2TX credits owed, one per frame taken (`mul` for a TYPE2 one), oldest first.
    credits_owed: VecDeque<MacCreditRet>,
    frames: Vec<(Cycle, DataFrame)>,
    done: Vec<(Cycle, FrameDone)>,
}

/// Every counter of the composite's nodes (the core's in its scope, `mac_credit.*` in the
/// counter's), by full name.
pub(super) fn dut_counters(h: &Harness) -> Vec<(String, u64)> {
    h.sim()
        .counters()
        .filter(|(n, _)| n.starts_with("dut."))
        .map(|(n, v)| (n.to_string(), v))
        .collect()
}

/// The `rclink_tx` composite (core and MAC credit counter) at `dut`, every outer port on the
/// bench, output sinks of `sink` messages.
pub(super) fn composite(p: &Params, sink: u32) -> Result<Harness, hwsim_hw::ElabError> {
    let q = p.clone();
    Harness::new_composite("rclink_tx", ports(p), move |nl, path| expand(&q, path, nl), 1, sink)
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
        let mut h = composite(&p, 1).unwrap();
        h.sim_mut().set_skip(skip);
        Tb {
            h,
            segs: VecDeque::new(),
            ctrls: VecDeque::new(),
            credits: VecDeque::new(),
            mac_ready: true,
            hold_mac_credits: false,
            credits_owed: VecDeque::new(),
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
        while !self.hold_mac_credits {
            let Some(&ret) = self.credits_owed.front() else { break };
            if !self.h.push("mac_credit", ret) {
                break;
            }
            self.credits_owed.pop_front();
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
                self.credits_owed.push_back(MacCreditRet {
                    mul: hwsim_ports::mcast_group(f.dst).is_some(),
                });
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
    let err = composite(
        &Params {
            credit_size: 3,
            ..Default::default()
        },
        1,
    )
    .err()
    .expect("refused")
    .to_string();
    assert!(err.contains("credit_size = 3") && err.contains("`dut`"), "{err}");
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

/// What a run leaves behind: every counter, and the frames and FrameDone with their cycles.
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
    let counters = dut_counters(&tb.h);
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
    let before: Vec<(String, u64)> = dut_counters(&tb.h);
    tb.steps(5000);
    let after: Vec<(String, u64)> = dut_counters(&tb.h);
    assert_eq!(before, after);
}
