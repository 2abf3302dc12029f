//! Unit tests of the L2 switch (`l2_switch`): PFC, the VOQ fabric, the WRR, classification.

use super::*;
use crate::switch::allocator::AllocatorKind;
use hwsim_hw::Harness;
use hwsim_ports::{ChipId, PfcFrame, QpId};

/// The `l2_switch` composite (core and allocator) at `dut`, every outer port on the bench, output
/// sinks of 8 messages.
fn composite(p: &Params) -> Harness {
    try_composite(p).unwrap()
}

fn try_composite(p: &Params) -> Result<Harness, hwsim_hw::ElabError> {
    let q = p.clone();
    Harness::new_composite("l2_switch", ports(p), move |nl, path| expand(&q, path, nl), 1, 8)
}

/// Two ports, chip d behind port d; PFC on with a 1000 ns watchdog.
fn harness(watchdog: u64) -> Harness {
    let p = Params {
        pfc: true,
        pfc_watchdog: watchdog,
        ..Params::default()
    };
    composite(&p)
}

fn frame(dst: ChipId) -> DataFrame {
    DataFrame {
        src: 0,
        dst,
        qp: QpId::new(1).unwrap(),
        npkts: 1,
        frame_bytes: 64,
        max_payload: 1344,
        pkt_ovhd: 50,
        ..Default::default()
    }
}

/// Steps until a data frame leaves port 1 (or `limit`); returns the cycle.
fn out_at(h: &mut Harness, limit: u64) -> Option<u64> {
    while h.now() < limit {
        h.step().unwrap();
        if h.pop::<DataFrame>("e1_req_out").is_some() {
            return Some(h.now());
        }
    }
    None
}

fn pfc(pause: bool) -> PfcFrame {
    PfcFrame {
        prio_mask: 1 << PfcFrame::REQ_DATA_PRIO,
        pause,
    }
}

#[test]
fn a_paused_port_holds_its_data_until_the_xon() {
    let mut h = harness(0);
    assert!(h.push("e1_pfc_in", pfc(true)));
    h.step().unwrap();
    assert!(h.push("e0_req_in", frame(1)));
    assert_eq!(out_at(&mut h, 500), None, "paused: nothing leaves port 1");
    assert!(h.push("e1_pfc_in", pfc(false)));
    let t = out_at(&mut h, 1000).expect("released by the XON");
    assert!((500..510).contains(&t), "leaves right after the XON, at {t}");
    assert_eq!(h.sim().counter("dut.pfc_pauses_received"), Some(1));
    assert_eq!(h.sim().counter("dut.pfc_watchdog_fired"), Some(0));
}

#[test]
fn the_watchdog_ignores_a_pause_that_lasts_too_long() {
    let mut h = harness(1000);
    assert!(h.push("e1_pfc_in", pfc(true)));
    h.step().unwrap();
    assert!(h.push("e0_req_in", frame(1)));
    // Paused at 1 (popped then): the watchdog fires at 1001 and the frame goes.
    let t = out_at(&mut h, 5000).expect("the watchdog releases the port");
    assert!((1001..1010).contains(&t), "left at {t}");
    assert_eq!(h.sim().counter("dut.pfc_watchdog_fired"), Some(1));
}

#[test]
fn ingress_above_xoff_sends_one_xoff_then_one_xon() {
    let p = Params {
        pfc: true,
        pfc_xoff: Some(1000),
        pfc_xon: Some(200),
        ..Params::default()
    };
    let mut h = composite(&p);
    // Port 1 paused, so what comes in on port 0 stays: 114 B a frame, XOFF after the 9th.
    assert!(h.push("e1_pfc_in", pfc(true)));
    let mut got = Vec::new();
    for i in 0..12 {
        if i > 0 {
            assert!(h.push("e0_req_in", frame(1)));
        }
        h.step().unwrap();
        while let Some(f) = h.pop::<PfcFrame>("e0_pfc_out") {
            got.push((h.now(), f.pause));
        }
    }
    assert_eq!(got.len(), 1, "one XOFF: {got:?}");
    assert!(got[0].1);
    assert!(h.push("e1_pfc_in", pfc(false)));
    for _ in 0..400 {
        h.step().unwrap();
        while let Some(f) = h.pop::<PfcFrame>("e0_pfc_out") {
            got.push((h.now(), f.pause));
        }
        while h.pop::<DataFrame>("e1_req_out").is_some() {}
    }
    assert_eq!(
        got.iter().map(|g| g.1).collect::<Vec<_>>(),
        vec![true, false],
        "{got:?}"
    );
    assert_eq!(h.sim().counter("dut.p0_pfc_xoff"), Some(1));
}

/// The XOFF frame's cycle for a port held by a paused output, 114 B a frame in on port 0.
fn first_xoff(p: &Params) -> Option<u64> {
    let mut h = composite(p);
    assert!(h.push("e1_pfc_in", pfc(true)));
    for i in 0..40 {
        if i > 0 {
            assert!(h.push("e0_req_in", frame(1)));
        }
        h.step().unwrap();
        if let Some(f) = h.pop::<PfcFrame>("e0_pfc_out") {
            assert!(f.pause);
            return Some(h.now());
        }
    }
    None
}

#[test]
fn the_default_thresholds_are_fractions_of_the_port_buffer() {
    // Seed 003: XOFF above 85 % of the queue depth. 2000 B of port_buffer: 1700 B, passed by the
    // 15th frame of 114 B; absolute bytes win over the fraction; seed 002's 3/4: 1500 B, the 14th.
    let rel = Params {
        pfc: true,
        port_buffer: 2000,
        ..Params::default()
    };
    assert_eq!((rel.xoff_bytes(), rel.xon_bytes()), (1700, 1000));
    let abs = Params {
        pfc_xoff: Some(1000),
        pfc_xon: Some(200),
        ..rel.clone()
    };
    let s002 = Params {
        pfc_threshold: 0.75,
        ..rel.clone()
    };
    let (r, a, t) = (
        first_xoff(&rel).unwrap(),
        first_xoff(&abs).unwrap(),
        first_xoff(&s002).unwrap(),
    );
    assert!(a < t && t < r, "absolute 1000 B at {a}, 3/4 at {t}, 85 % at {r}");
    assert_eq!(r - t, 1, "one frame more for 1700 B than for 1500 B");
    let bad = Params {
        pfc_xon_threshold: 0.9,
        ..rel
    };
    assert!(super::check::check(&bad)
        .unwrap_err()
        .contains("pfc_xon_threshold (0.9) ≤ pfc_threshold (0.85)"));
}

/// Three ports, chip d behind port d, PFC on (to hold an output), VOQ with `alloc`.
fn three(alloc: AllocatorKind, buffer: u64) -> Harness {
    let p = Params {
        ports: 3,
        routes: (0..3).map(|d| Some(Route::One(d))).collect(),
        pfc: true,
        pfc_xoff: Some(600),
        pfc_xon: Some(100),
        allocator: alloc,
        buffer,
        ..Params::default()
    };
    composite(&p)
}

fn from(src: ChipId, dst: ChipId) -> DataFrame {
    DataFrame { src, ..frame(dst) }
}

/// Runs until `n` data frames left `port` (or 2000 cycles): their sources and cycles.
fn collect(h: &mut Harness, port: &str, n: usize) -> Vec<(ChipId, u64)> {
    let mut got = Vec::new();
    while got.len() < n && h.now() < 2000 {
        h.step().unwrap();
        while let Some(f) = h.pop::<DataFrame>(port) {
            got.push((f.src, h.now()));
        }
    }
    got
}

#[test]
fn voqs_let_a_frame_pass_one_held_by_a_paused_output_and_input_fifos_do_not() {
    for (alloc, blocked) in [(AllocatorKind::Islip, false), (AllocatorKind::Fifo, true)] {
        let mut h = three(alloc, 1 << 20);
        assert!(h.push("e1_pfc_in", pfc(true)));
        h.step().unwrap();
        assert!(h.push("e0_req_in", frame(1)));
        h.step().unwrap();
        assert!(h.push("e0_req_in", frame(2)));
        let got = collect(&mut h, "e2_req_out", 1);
        if blocked {
            assert!(
                got.is_empty(),
                "{alloc:?}: head-of-line blocked behind the paused output"
            );
        } else {
            assert_eq!(got.len(), 1, "{alloc:?}");
            assert!(got[0].1 < 110, "{alloc:?}: passes at once, at {}", got[0].1);
        }
    }
}

#[test]
fn dynamic_threshold_admits_while_the_queue_is_under_alpha_times_free() {
    // 114 B frames into one VOQ of a 1000 B buffer, α = 1: the k-th is admitted while
    // 114·k < 1000 − 114·k, so 5 of 8 (k = 0..4) and 3 dropped.
    let mut h = three(AllocatorKind::Islip, 1000);
    assert!(h.push("e1_pfc_in", pfc(true)));
    h.step().unwrap();
    for _ in 0..8 {
        assert!(h.push("e0_req_in", frame(1)));
        h.step().unwrap();
    }
    h.steps(200).unwrap();
    assert_eq!(h.sim().counter("dut.dt_drops"), Some(3));
    assert_eq!(h.sim().counter("dut.p1_drops"), Some(3));
    assert_eq!(h.sim().counter("dut.voq_peak_bytes"), Some(5 * 114));
}

#[test]
fn islip_alternates_between_inputs_where_an_output_queue_keeps_arrival_order() {
    for fabric in [Fabric::Voq, Fabric::OutputQueued] {
        let p = Params {
            ports: 3,
            routes: (0..3).map(|d| Some(Route::One(d))).collect(),
            pfc: true,
            pfc_xoff: Some(60000),
            pfc_xon: Some(100),
            fabric,
            ..Params::default()
        };
        let mut h = composite(&p);
        assert!(h.push("e2_pfc_in", pfc(true)));
        h.step().unwrap();
        // Input 0's four frames first, then input 1's, all held behind the paused output 2.
        for src in [0, 0, 0, 0, 1, 1, 1, 1] {
            assert!(h.push(&format!("e{src}_req_in"), from(src, 2)));
            h.step().unwrap();
        }
        h.steps(200).unwrap();
        assert!(h.push("e2_pfc_in", pfc(false)));
        let order: Vec<ChipId> = collect(&mut h, "e2_req_out", 8).iter().map(|g| g.0).collect();
        let want = match fabric {
            Fabric::Voq => vec![0, 1, 0, 1, 0, 1, 0, 1],
            Fabric::OutputQueued => vec![0, 0, 0, 0, 1, 1, 1, 1],
        };
        assert_eq!(order, want, "{fabric:?}");
    }
}

/// A frame of `payload` bytes from chip `src` to chip `dst` at priority `pcp` (VLAN-tagged).
fn tagged(src: ChipId, dst: ChipId, pcp: u64, payload: u32) -> DataFrame {
    DataFrame {
        src,
        dst,
        qp: QpId::new(1).unwrap(),
        npkts: payload.div_ceil(1344).max(1) as u8,
        frame_bytes: payload,
        max_payload: 1344,
        pkt_ovhd: 50,
        hdr: hwsim_ports::HeaderTags {
            pcp: Some(UInt::wrap(pcp)),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Ports 0..n−1 each push `count` frames (`sources[k]` = (pcp, payload)) towards the last
/// port as fast as their streams take them; returns the PCPs and payloads leaving the last
/// port, in order.
fn saturate(p: Params, sources: &[(u64, u32)], count: usize) -> Vec<(u64, u32)> {
    let out = p.ports as usize - 1;
    let mut h = composite(&p);
    let mut pushed = vec![0; sources.len()];
    let mut got = Vec::new();
    let port = format!("e{out}_req_out");
    while got.len() < count * sources.len() && h.now() < 200_000 {
        for (k, &(pcp, payload)) in sources.iter().enumerate() {
            if pushed[k] < count
                && h.push(
                    &format!("e{k}_req_in"),
                    tagged(k as ChipId, out as ChipId, pcp, payload),
                )
            {
                pushed[k] += 1;
            }
        }
        h.step().unwrap();
        while let Some(f) = h.pop::<DataFrame>(&port) {
            got.push((f.hdr.pcp.map_or(9, |p| p.0), f.frame_bytes));
        }
    }
    got
}

/// Payload bytes per PCP (REQ 2, RSP 1) in `got[..k]`.
fn bytes_by_class(got: &[(u64, u32)]) -> (u64, u64) {
    let req = got.iter().filter(|g| g.0 == 2).map(|g| g.1 as u64).sum();
    let rsp = got.iter().filter(|g| g.0 == 1).map(|g| g.1 as u64).sum();
    (req, rsp)
}

fn wrr_params(wrr_req: u32, wrr_rsp: u32) -> Params {
    Params {
        ports: 3,
        routes: (0..3).map(|d| Some(Route::One(d))).collect(),
        wrr_req,
        wrr_rsp,
        ..Params::default()
    }
}

#[test]
fn req_and_rsp_share_a_saturated_output_by_the_wrr_weights() {
    // REQ (level 2) from input 0 and RSP (level 1) from input 1, both 4 KiB frames, all
    // for output 2; both stay backlogged for the first 60 departures.
    for (w_req, w_rsp) in [(8, 8), (3, 1), (1, 3)] {
        let got = saturate(wrr_params(w_req, w_rsp), &[(2, 4096), (1, 4096)], 80);
        let (req, rsp) = bytes_by_class(&got[..60]);
        let want = w_req as f64 / (w_req + w_rsp) as f64;
        let share = req as f64 / (req + rsp) as f64;
        assert!(
            (share - want).abs() < 0.04,
            "weights {w_req}:{w_rsp}: REQ share {share:.3}, want {want:.3} ({:?})",
            &got[..12]
        );
    }
}

#[test]
fn the_wrr_shares_bytes_not_frames() {
    // Even weights, REQ frames of 4096 B and RSP frames of 1024 B (B-response-sized flits
    // are smaller still): the output's bytes split evenly, so RSP sends ~4 frames per REQ.
    let got = saturate(wrr_params(8, 8), &[(2, 4096), (1, 1024)], 200);
    let head = &got[..100];
    let (req, rsp) = bytes_by_class(head);
    let share = req as f64 / (req + rsp) as f64;
    assert!(
        (share - 0.5).abs() < 0.05,
        "REQ byte share {share:.3}: {:?}",
        &got[..12]
    );
    let rsp_frames = head.iter().filter(|g| g.0 == 1).count();
    assert!(rsp_frames > 70, "RSP frames {rsp_frames} of 100");
}

#[test]
fn level_3_keeps_strict_priority_over_the_wrr_levels() {
    // Inputs 0, 1, 2: ACK/CNP class (3), REQ (2), RSP (1), all to output 3.
    let p = Params {
        ports: 4,
        routes: (0..4).map(|d| Some(Route::One(d))).collect(),
        ..Params::default()
    };
    let got = saturate(p, &[(3, 4096), (2, 4096), (1, 4096)], 20);
    let classes: Vec<u64> = got.iter().map(|g| g.0).collect();
    let last3 = classes.iter().rposition(|&c| c == 3).expect("level 3 frames");
    assert_eq!(last3, 19, "the 20 level-3 frames leave first: {classes:?}");
    // Then REQ and RSP alternate (even weights, equal frames).
    let (req, rsp) = bytes_by_class(&got[20..40]);
    assert_eq!((req, rsp), (10 * 4096, 10 * 4096), "{classes:?}");
}

#[test]
fn wrr_weights_out_of_range_are_refused() {
    let p = Params {
        wrr_rsp: 0,
        ..Params::default()
    };
    let err = try_composite(&p).err().expect("refused").to_string();
    assert!(err.contains("wrr_rsp = 0") && err.contains("`dut`"), "{err}");
}

/// Per-port residence percentiles: three 4 KiB frames a cycle apart queue behind each other on
/// output 1 (each takes about 10 ns to serialize), so their residences differ; the median is
/// the middle one, p99 and p99.9 the longest (`residence_max`), and output 0, which sent
/// nothing, publishes nothing.
#[test]
fn each_output_publishes_its_residence_percentiles_at_the_end() {
    let mut h = composite(&Params::default());
    let mut sent = 0;
    while sent < 3 {
        if h.push("e0_req_in", tagged(0, 1, 2, 4096)) {
            sent += 1;
        }
        h.step().unwrap();
    }
    let mut out = 0;
    while out < 3 && h.now() < 10_000 {
        h.step().unwrap();
        while h.pop::<DataFrame>("e1_req_out").is_some() {
            out += 1;
        }
    }
    assert_eq!(out, 3);
    h.sim_mut().finish();
    let c = |n: &str| h.sim().counter(&format!("dut.{n}")).unwrap();
    let (min, max) = (c("residence_min"), c("residence_max"));
    let (p50, p99, p999) = (c("p1_residence_p50"), c("p1_residence_p99"), c("p1_residence_p999"));
    assert!(min < p50 && p50 < max, "{min} {p50} {max}");
    assert_eq!((p99, p999), (max, max));
    assert_eq!(c("p0_residence_p50"), 0);
}
