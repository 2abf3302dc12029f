//! Spec findings whose fix is a parameter (docs/spec-findings.md): the testbench shows the
//! seed's behaviour, and here the same testbench with the fix set from the command line must
//! lose the symptom. (The testbenches themselves run in tests/regression.rs, skip and no-skip.)

use std::path::PathBuf;
use std::process::Command;

/// Runs `hwsim TB -q --json … args…` and returns the report.
fn run(tb: &str, args: &[&str]) -> serde_json::Value {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // One file per call: the tests run in parallel threads of one process, and two of them
    // may run the same arguments (the name alone collided: one removed the other's report).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let json = std::env::temp_dir().join(format!("hwsim-findings-{}-{n}.json", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args([tb, "-q", "--json", json.to_str().unwrap()])
        .args(args)
        .current_dir(&root)
        .output()
        .expect("runs");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    let _ = std::fs::remove_file(&json);
    serde_json::from_str(&text).unwrap()
}

/// Sum of the counters whose name starts with `prefix` and ends with `suffix`.
fn sum(r: &serde_json::Value, prefix: &str, suffix: &str) -> u64 {
    r["counters"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with(prefix) && k.ends_with(suffix))
        .map(|(_, v)| v.as_u64().unwrap())
        .sum()
}

#[test]
fn finding_6_a_longer_retry_timeout_ends_the_spurious_timeouts_of_islip_at_a_leaf() {
    let tb = "tb/cc/incast64.yaml";
    let seed = run(tb, &[]);
    let fixed = run(tb, &["--set", "system.chip.tx.retry_timeout=100000"]);
    let oq = run(tb, &["--set", "system.switch.fabric=output_queued"]);
    for r in [&seed, &fixed, &oq] {
        assert_eq!(sum(r, "chip0.", ".rx_payload_bytes"), 66060288, "every byte");
        assert_eq!(sum(r, "sw", ".drops"), 0, "nothing dropped");
    }
    assert!(
        sum(&seed, "chip", ".diag_timeout") >= 100,
        "the seed's setting times out"
    );
    assert!(sum(&seed, "chip", ".dup_pkts") >= 1000);
    assert_eq!(sum(&fixed, "chip", ".diag_timeout"), 0, "the fix: no timeout");
    assert_eq!(sum(&fixed, "chip", ".dup_pkts"), 0);
    assert_eq!(
        sum(&oq, "chip", ".diag_timeout"),
        0,
        "an output queue serves per sender"
    );
    let end = |r: &serde_json::Value| r["metrics"]["end_cycle"].as_f64().unwrap();
    assert!(end(&fixed) < end(&seed), "{} vs {}", end(&fixed), end(&seed));
}

#[test]
fn finding_7_the_seeds_dcqcn_recovery_collapses_a_sustained_incast_and_faster_recovery_fixes_it() {
    let tb = "tb/cc/fairness.yaml";
    let fixed = run(tb, &[]);
    let seed = run(
        tb,
        &[
            "--set",
            "system.chip.tx.dcqcn.timer_interval=55000",
            "--set",
            "system.chip.tx.dcqcn.additive_increase_factor=200",
        ],
    );
    let done = |r: &serde_json::Value| -> Vec<u64> {
        (1..=4)
            .map(|c| r["counters"][format!("chip{c}.paxi.last_done_at")].as_u64().unwrap())
            .collect()
    };
    let spread = |v: &[u64]| *v.iter().max().unwrap() as f64 / *v.iter().min().unwrap() as f64;
    let goodput = |r: &serde_json::Value| r["metrics"]["goodput"].as_f64().unwrap();
    // 292 B/ns with the seed's values (349 fixed): the port idles a quarter of the time.
    assert!(goodput(&seed) < 310.0, "seed: the port idles ({})", goodput(&seed));
    assert!(
        spread(&done(&seed)) > 1.15,
        "seed: shares drift apart {:?}",
        done(&seed)
    );
    assert!(goodput(&fixed) > 340.0, "fixed: {}", goodput(&fixed));
    assert!(spread(&done(&fixed)) < 1.03, "fixed: {:?}", done(&fixed));
}

/// Seed 003 «[建模] AFH 格式下, 交换机的 ECN 机制失效»: the same incast with AFH_GEN1 frames (no
/// IP header) builds the same queue but is never marked, so no CNP and no rate cut.
#[test]
fn afh_frames_hide_the_incast_from_ecn_and_dcqcn() {
    let tb = "tb/acceptance/a2_incast_ecn.yaml";
    let afh = run(
        tb,
        &[
            "--set",
            "system.chip.tx.frame_format=afh_gen1",
            "--set",
            "system.chip.tx.pkt_ovhd=22",
        ],
    );
    let std = run(tb, &[]);
    assert!(sum(&std, "sw0.", ".ecn_marks") > 0);
    assert_eq!(sum(&afh, "sw0.", ".ecn_marks"), 0, "nothing to mark");
    assert_eq!(sum(&afh, "chip0.", ".cnps_sent"), 0);
    assert_eq!(sum(&afh, "chip", ".diag_rate_block"), 0);
    let peak = |r: &serde_json::Value| r["counters"]["sw0.p0_peak_bytes"].as_u64().unwrap();
    assert!(peak(&afh) > 3_000_000, "the same queue builds: {}", peak(&afh));
    assert_eq!(sum(&afh, "chip0.", ".rx_payload_bytes"), 16777216);
}

/// Finding 8: with the seed's CBFC credits the data in flight after back-pressure overruns the RX
/// VC buffer's 1 RTT of headroom; with credits sized to it, the buffer never fills.
#[test]
fn finding_8_the_rx_buffer_headroom_holds_what_cbfc_lets_go_only_with_credits_sized_to_it() {
    let tb = "tb/paxi/rx_watermark.yaml";
    let sized = run(tb, &[]);
    let seed = run(tb, &["--set", "system.chip.tx.initial_credits=1024"]);
    let peak = |r: &serde_json::Value| r["counters"]["chip1.paxi.rx_req_peak"].as_u64().unwrap();
    let waiting = |r: &serde_json::Value| {
        (0..8)
            .map(|k| r["counters"][format!("chip1.lg{k}.rx.deliver_peak")].as_u64().unwrap())
            .max()
            .unwrap()
    };
    // Capacity 32 + 2 × 25 = 82 frames.
    assert_eq!(peak(&seed), 82, "seed credits: the buffer fills");
    assert!(
        waiting(&seed) > 20,
        "and frames wait in the RC Link RX: {}",
        waiting(&seed)
    );
    assert!(peak(&sized) < 82, "sized credits: {}", peak(&sized));
    assert!(waiting(&sized) <= 1, "nothing waits: {}", waiting(&sized));
    for r in [&seed, &sized] {
        assert_eq!(sum(r, "chip1.", ".wdata_bytes_in"), 2097152, "nothing lost");
    }
}

/// Finding 10: seed 003's RSP switch class reorders a QP whose responses share its PSN space
/// (Go-Back-N on every reorder); with the responses on a QP of their own the class lifts the
/// all-to-all above the W OST bound that B responses queued behind data set.
#[test]
fn finding_10_an_rsp_switch_class_needs_the_responses_in_a_psn_space_of_their_own() {
    let tb = "tb/perf/w4_system_a2a.yaml";
    let small = ["--set", "system.traffic.0.bytes=1048576"];
    let with = |extra: &[&str]| run(tb, &[&small[..], extra].concat());
    let seed = with(&[]);
    let class_only = with(&["--set", "system.switch.trust=dscp"]);
    let fixed = with(&[
        "--set",
        "system.switch.trust=dscp",
        "--set",
        "system.chip.paxi.rsp_own_qp=true",
    ]);
    for r in [&seed, &class_only, &fixed] {
        assert_eq!(sum(r, "chip", ".wdata_bytes_in"), 56 << 20, "every byte");
    }
    let goodput = |r: &serde_json::Value| r["metrics"]["goodput"].as_f64().unwrap();
    // Responses in the data's class (the default): in order, but B waits behind data.
    assert_eq!(sum(&seed, "chip", ".rx.naks_sent"), 0);
    assert_eq!(sum(&seed, "sw0.", "class1_frames"), 0, "no RSP class");
    // RSP class on one PSN space: the switch reorders each QP, the receivers NAK.
    assert!(sum(&class_only, "chip", ".rx.naks_sent") >= 100);
    assert!(sum(&class_only, "chip", ".rx.dup_pkts") >= 1000);
    assert!(goodput(&class_only) < goodput(&seed));
    // RSP class and its own QP: no NAK, and the B responses no longer bound the run.
    assert!(sum(&fixed, "sw0.", "class1_frames") > 1000, "responses in class 1");
    assert_eq!(sum(&fixed, "chip", ".rx.naks_sent"), 0);
    assert_eq!(sum(&fixed, "chip", ".rx.dup_pkts"), 0);
    assert!(
        goodput(&fixed) > 1.2 * goodput(&seed),
        "{} vs {}",
        goodput(&fixed),
        goodput(&seed)
    );
}

/// Finding 11: sixteen lost multicast copies hold every TYPE2 OST entry for the seed's 64 M-cycle
/// timeout, and the chip's other multicasts wait with them; a timeout sized to the round trip
/// ends it in microseconds.
#[test]
fn finding_11_lost_multicast_copies_stall_the_chips_multicast_for_the_whole_timeout() {
    let tb = "tb/spec_findings/multicast_lost_copies_stall.yaml";
    let seed = run(tb, &[]);
    let short = run(tb, &["--set", "system.chip.paxi.mul_timeout=100000"]);
    let c = |r: &serde_json::Value, k: &str| r["counters"][k].as_u64().unwrap();
    for r in [&seed, &short] {
        assert_eq!(c(r, "chip0.paxi.mul_timeouts"), 16, "the 16 broken bursts time out");
        assert_eq!(c(r, "chip0.paxi.multicasts_done"), 16, "the 16 others complete");
    }
    // The others cannot leave while the 16 dead entries are held.
    assert!(c(&seed, "chip0.paxi.last_done_at") > 64_000_000);
    assert!(c(&short, "chip0.paxi.last_done_at") < 110_000);
    assert!(c(&short, "chip0.paxi.last_done_at") > 100_000);
}

/// Finding 12: lost control messages take their ACK-VC credits with them. With a ledger of 8
/// (7 in flight), 7 lost ACKs leave the RX unable to answer its sender again, and the QP goes
/// fatal; without CBFC on the ACK VC, or with the default 256 credits, the next ACK covers the
/// lost ones.
#[test]
fn finding_12_lost_acks_use_up_the_ack_vc_credits_and_the_qp_dies() {
    let tb = "tb/spec_findings/lost_acks_exhaust_ack_vc.yaml";
    let c = |r: &serde_json::Value, k: &str| r["counters"][k].as_u64().unwrap();
    let seed = run(tb, &[]);
    assert_eq!(c(&seed, "chip1.lg7.rx.ack_credits_outstanding"), 7);
    assert_eq!(c(&seed, "chip1.lg7.rx.ack_credit_block"), 1);
    assert_eq!(c(&seed, "chip0.lg7.tx.diag_max_retry_hit"), 1);
    for fix in ["system.chip.rx.ack_credits=0", "system.chip.rx.ack_credits=256"] {
        let r = run(tb, &["--set", fix]);
        assert_eq!(c(&r, "chip0.lg7.tx.diag_max_retry_hit"), 0, "{fix}");
        assert_eq!(c(&r, "chip0.lg7.tx.diag_timeout"), 0, "{fix}");
        assert!(r["metrics"]["end_cycle"].as_f64().unwrap() < 3000.0, "{fix}");
        assert_eq!(sum(&r, "chip1.", ".rx.rx_payload_bytes"), 65536, "{fix}");
    }
}

/// Finding 13: the PAXI RX VC buffers' low watermark follows seed 003 (1 RTT); N, hwsim's
/// earlier default, sends one more round of back-pressure for the same transfer.
#[test]
fn finding_13_the_rx_vc_low_watermark_is_one_rtt_and_n_gives_one_more_pause() {
    let tb = "tb/paxi/rx_watermark.yaml";
    let seed003 = run(tb, &[]);
    let at_n = run(tb, &["--set", "system.chip.paxi.rx_xon_frames=32"]);
    let c = |r: &serde_json::Value, k: &str| r["counters"][format!("chip1.paxi.{k}")].as_u64().unwrap();
    assert_eq!((c(&seed003, "rx_req_xoff"), c(&seed003, "rx_req_peak")), (5, 67));
    assert_eq!((c(&at_n, "rx_req_xoff"), c(&at_n, "rx_req_peak")), (6, 69));
    for r in [&seed003, &at_n] {
        assert_eq!(c(r, "wdata_bytes_in"), 2097152, "nothing lost");
    }
}

/// Finding 14: seed 003's ECN K_min (50 %) leaves acceptance 2's incast, whose hot queue peaks at
/// 0.31 of the buffer, unmarked; seed 000's 0.3 (the default) marks it. The writes end alike.
#[test]
fn finding_14_seed_003s_ecn_threshold_leaves_the_acceptance_2_incast_unmarked() {
    let seed000 = run("tb/acceptance/a2_incast_ecn.yaml", &[]);
    let seed003 = run("tb/spec_findings/ecn_thresholds_seed003.yaml", &[]);
    let marks = |r: &serde_json::Value| r["counters"]["sw0.ecn_marks"].as_u64().unwrap();
    assert_eq!((marks(&seed000), marks(&seed003)), (16, 0));
    assert_eq!(sum(&seed003, "chip0.lg", ".cnps_sent"), 0);
    for r in [&seed000, &seed003] {
        assert_eq!(r["counters"]["sw0.p0_peak_bytes"].as_u64(), Some(3913656));
        assert_eq!(r["counters"]["chip0.paxi.wdata_bytes_in"].as_u64(), Some(16777216));
    }
}

#[test]
fn finding_15_seed_003s_pfc_threshold_sits_above_what_one_chip_has_in_flight() {
    let seed = run("tb/spec_findings/pfc_threshold_seed003.yaml", &[]);
    let abs = run(
        "tb/spec_findings/pfc_threshold_seed003.yaml",
        &[
            "--set",
            "system.switch.pfc_xoff=65536",
            "--set",
            "system.switch.pfc_xon=32768",
            "--checks",
            "off",
        ],
    );
    let c = |r: &serde_json::Value, k: &str| r["counters"][k].as_u64().unwrap();
    assert_eq!((c(&seed, "sw0.pfc_xoff_sent"), c(&abs, "sw0.pfc_xoff_sent")), (0, 119));
    assert_eq!(
        (c(&seed, "sw0.p0_peak_bytes"), c(&abs, "sw0.p0_peak_bytes")),
        (7161432, 1726992)
    );
    assert_eq!(
        (seed["cycles"].as_u64(), abs["cycles"].as_u64()),
        (Some(89375), Some(88022))
    );
    for r in [&seed, &abs] {
        assert_eq!(c(r, "sw0.drops"), 0);
        assert_eq!(sum(r, "chip0.lg", ".rx_payload_bytes"), 29360128);
    }
}

#[test]
fn finding_16_data_tagged_as_seed_003s_pfc_table_says_needs_its_map_to_stay_lossless() {
    let tb = "tb/spec_findings/pfc_priorities_seed003.yaml";
    let seed = run(tb, &[]);
    let default_map = run(
        tb,
        &[
            "--set",
            "system.switch.tc_map=[0,1,2,3,3,3,3,3]",
            "--set",
            "system.switch.pfc_priorities=[2]",
            "--checks",
            "off",
        ],
    );
    let c = |r: &serde_json::Value, k: &str| r["counters"][k].as_u64().unwrap();
    // The seed's table: PCP 3 is REQ data (level 2) and lossless, PAUSE runs hop by hop.
    assert_eq!((c(&seed, "sw1.class2_frames"), c(&seed, "sw1.class3_frames")), (768, 0));
    assert_eq!((c(&seed, "sw1.pfc_xoff_sent"), c(&seed, "sw0.pfc_xoff_sent")), (8, 8));
    // The default map: PCP 3 is the ACK/CNP level and lossy: no PAUSE, the queue 5× as deep.
    assert_eq!(
        (
            c(&default_map, "sw1.class2_frames"),
            c(&default_map, "sw1.class3_frames")
        ),
        (0, 768)
    );
    assert_eq!(
        c(&default_map, "sw1.pfc_xoff_sent") + c(&default_map, "sw0.pfc_xoff_sent"),
        0
    );
    assert_eq!(
        (c(&seed, "sw1.p1_peak_bytes"), c(&default_map, "sw1.p1_peak_bytes")),
        (201912, 1009560)
    );
    for r in [&seed, &default_map] {
        assert_eq!(sum(r, "chip3.lg", ".rx_payload_bytes"), 3145728);
    }
}

#[test]
fn finding_17_a_collected_write_burst_waits_for_its_last_beat() {
    let tb = "tb/spec_findings/write_collect_seed002.yaml";
    let itlv = run(tb, &[]);
    let collect = run(tb, &["--set", "system.chip.paxi.write_collect=true", "--checks", "off"]);
    let c = |r: &serde_json::Value, k: &str| r["counters"][k].as_u64().unwrap();
    // One 4 KiB burst at 64 B/ns: at once (seed 000), or after its 64 ns (seed 002); four
    // bursts: the last at 3 · 64 ns, or at 4 · 64.
    assert_eq!(
        (
            c(&itlv, "chip0.paxi.flow0_lat_max"),
            c(&collect, "chip0.paxi.flow0_lat_max")
        ),
        (506, 570)
    );
    assert_eq!(
        (
            c(&itlv, "chip0.paxi.flow1_lat_max"),
            c(&collect, "chip0.paxi.flow1_lat_max")
        ),
        (720, 784)
    );
    for r in [&itlv, &collect] {
        assert_eq!(c(r, "chip0.paxi.writes_done"), 2);
    }
}

#[test]
fn finding_18_the_seeds_pacing_waits_at_the_rate_now() {
    let r = run("tb/spec_findings/dcqcn_pacing_seed000.yaml", &[]);
    // Both TXs in one run: hwsim's wait fixed at the send (f3 at 33, f5 at 145) and the seed's
    // at the rate of the arbitration (f3 at 61 after the cut, f4 at 106 on the timer's
    // increase, f5 at 144); every timing check is named in the testbench.
    let checks = r["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["passed"] == true), "{checks:?}");
    assert_eq!(checks.len(), 11);
    let c = |k: &str| r["counters"][k].as_u64().unwrap();
    assert_eq!((c("at_send.frames_sent"), c("seed.frames_sent")), (6, 6));
    // The same DCQCN state in both: the timer at 106, 206 and 306.
    assert_eq!((c("at_send.rate_increases"), c("seed.rate_increases")), (3, 3));
}

/// Finding 19: seed 002/003's per-QP window rate control at the fair share keeps acceptance 2's
/// incast queue under the ECN threshold, where DCQCN (seed 000) cuts only after the peak; a
/// threshold under the fair share slows the writes in proportion.
#[test]
fn finding_19_the_window_rate_control_at_the_fair_share_keeps_the_incast_queue_unmarked() {
    let tb = "tb/spec_findings/cc_window_incast.yaml";
    let window = run(tb, &[]);
    // Acceptance 2 is the same system with DCQCN (the window's testbench checks counters
    // only its node has).
    let a2 = "tb/acceptance/a2_incast_ecn.yaml";
    let dcqcn = run(a2, &[]);
    let none = run(a2, &["--set", "system.chip.tx.rate_control=off", "--checks", "off"]);
    let slower = run(
        tb,
        &["--set", "system.chip.tx.window.length_thr=40960", "--checks", "off"],
    );
    let c = |r: &serde_json::Value, k: &str| r["counters"][k].as_u64().unwrap();
    let peak = |r: &serde_json::Value| c(r, "sw0.p0_peak_bytes");
    assert_eq!((peak(&window), peak(&dcqcn), peak(&none)), (1340352, 3913656, 3913656));
    assert_eq!((c(&window, "sw0.ecn_marks"), c(&dcqcn, "sw0.ecn_marks")), (0, 16));
    assert_eq!(sum(&dcqcn, "chip", ".cnp_passed"), 11, "DCQCN cuts, after the peak");
    assert_eq!(sum(&window, "chip", ".cc_masks"), 324);
    let last = |r: &serde_json::Value| r["metrics"]["latency_max"].as_f64().unwrap() as u64;
    assert_eq!((last(&window), last(&dcqcn), last(&slower)), (50329, 50329, 59235));
    for r in [&window, &dcqcn, &none, &slower] {
        assert_eq!(c(r, "chip0.paxi.wdata_bytes_in"), 16777216);
        assert_eq!(c(r, "sw0.drops"), 0);
    }
}
