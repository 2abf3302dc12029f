//! Everyday use, end to end through the built binary: `--set` overrides, the short terminal
//! report (`--counters`, `-v`), `sweep` (CSV, JSON, plots, `--emit`, `--collect`), probes and
//! `plot`, `explain` and `--version`.
//!
//! Every run uses the built binary with the workspace root as working directory; generated files
//! go to a fresh folder under the system temp dir, one per test. Sweeps here are tiny (the module
//! FIFO testbench, or a short system run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const FIFO_TB: &str = "tb/modules/fifo_backpressure.yaml";
const LOSS_TB: &str = "tb/acceptance/loss_sweep_p1e-3.yaml";

/// Runs the binary in the workspace root (not on a terminal: no colour, no progress bar).
fn hwsim<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("hwsim runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_code(o: &Output, want: i32) {
    assert_eq!(
        o.status.code(),
        Some(want),
        "exit code\n--- stdout\n{}--- stderr\n{}",
        stdout(o),
        stderr(o)
    );
}

/// Bad input: exit 2 and one stderr line `hwsim: <prefix>…` containing every one of `parts`.
fn assert_bad(o: &Output, prefix: &str, parts: &[&str]) {
    assert_code(o, 2);
    let err = stderr(o);
    assert!(!err.contains("panicked"), "a panic instead of a message:\n{err}");
    assert_eq!(err.lines().count(), 1, "exactly one stderr line, got:\n{err}");
    assert!(err.starts_with(&format!("hwsim: {prefix}")), "stderr: {err}");
    for p in parts {
        assert!(err.contains(p), "stderr should contain `{p}`, got:\n{err}");
    }
}

/// A fresh, empty folder for one test's files.
fn temp_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hwsim-everyday-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

// ------------------------------------------------------------------------------------------------
// --set

#[test]
fn set_overrides_fields_of_the_file_and_of_its_includes() {
    // The producer sends 5 instead of 12: the file's `snk.received == 12` check now fails …
    let o = hwsim(&[FIFO_TB, "--set", "instances.src.params.count=5"]);
    assert_code(&o, 1);
    assert!(stdout(&o).contains("FAIL  snk.received == 12"), "{}", stdout(&o));
    // … and passes once the check is overridden too (list items by index); the sequence check
    // is replaced by a flow-style list.
    let o = hwsim(&[
        FIFO_TB,
        "--set",
        "instances.src.params.count=5",
        "--set",
        "expect.0.equals=5",
        "--set",
        "expect.3.sequence=[100, 101, 102, 103, 104]",
        "--set",
        "expect.5.value=104",
        "--set",
        "expect.1.min=0",
        "--set",
        "expect.2.equals=2",
    ]);
    assert_code(&o, 0);
    // A setting that only the include has (configs/sg2262.yaml: 8 link groups) is reachable:
    // with 4 LGs the chip-to-chip goodput halves.
    let d = temp_dir("set");
    let (j8, j4) = (d.join("8.json"), d.join("4.json"));
    assert_code(&hwsim(&[LOSS_TB, "-q", "--json", &s(&j8)]), 0);
    let o = hwsim(&[
        LOSS_TB,
        "-q",
        "--json",
        &s(&j4),
        "--set",
        "system.chip.num_link_groups=4",
    ]);
    assert_code(&o, 1);
    let g = |j: &Path| read_json(j)["metrics"]["goodput"].as_f64().unwrap();
    assert!(g(&j8) > 300.0 && g(&j4) < 0.6 * g(&j8), "{} vs {}", g(&j8), g(&j4));
    assert!(
        read_json(&j4)["counters"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| !k.contains(".lg4.")),
        "only 4 link groups"
    );
    // `check` takes --set as well.
    assert_code(
        &hwsim(&["check", LOSS_TB, "--set", "system.topology={kind: mesh, chips: 3}"]),
        0,
    );
    let o = hwsim(&["check", LOSS_TB, "--set", "system.topology.chips=3"]);
    assert_bad(&o, "--set system.topology.chips=3: ", &["exactly 2 chips"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_set_arguments_are_one_line_naming_the_argument() {
    let cases: &[(&str, &[&str])] = &[
        ("system.traffic.0.load=0.8", &["unknown field `load`"]),
        ("system.traffic.3.bytes=1", &["`system.traffic` is a list of 1 item(s)"]),
        ("system.traffic.0.bytes=-3", &["expected u64"]),
        ("system.faults.0.probability=2", &["probability 2 out of range 0..=1"]),
        ("system.chip.paxi.itlv=bogus", &["unknown variant `bogus`"]),
        ("system.chip.paxi.foo=1", &["unknown field `foo`"]),
        ("seed.x=1", &["`seed` is a number (1), which has no field `x`"]),
        ("seed", &["expected PATH=VALUE"]),
        ("until=[1", &["value is not YAML"]),
    ];
    for (arg, parts) in cases {
        let o = hwsim(&["run", LOSS_TB, "--set", arg]);
        assert_bad(&o, &format!("--set {arg}: "), parts);
    }
    let o = hwsim(&["check", FIFO_TB, "--set", "instances.fifo.params.depth=0"]);
    assert_bad(&o, "--set instances.fifo.params.depth=0: ", &["depth 0 out of range"]);
}

// ------------------------------------------------------------------------------------------------
// The terminal report

#[test]
fn default_report_fits_a_screen_and_loses_nothing_from_json() {
    let d = temp_dir("report");
    let j = d.join("a1.json");
    let tb = "tb/acceptance/a1_p2p_bandwidth.yaml";
    let o = hwsim(&[tb, "--json", &s(&j)]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.lines().count() <= 40, "one screen:\n{out}");
    assert!(!out.contains('\x1b'), "no colour off a terminal:\n{out}");
    let n = read_json(&j)["counters"].as_object().unwrap().len();
    assert!(n > 500, "{n} counters in the JSON");
    for want in [
        "flows:\n  flow ",
        "chip0->chip1 cdma0",
        "metrics: end_cycle 176418, goodput ",
        &format!("counters: {n} (`--counters GLOB`"),
        "verdict: PASS (12/12 checks) at cycle 176418",
    ] {
        assert!(out.contains(want), "`{want}` in:\n{out}");
    }
    // --counters GLOB: those only; -v: every one.
    let o = hwsim(&[tb, "--counters", "chip0.paxi.txns_*"]);
    let listed: Vec<String> = stdout(&o)
        .lines()
        .filter(|l| l.starts_with("  chip") && l.contains(" = "))
        .map(String::from)
        .collect();
    assert_eq!(
        listed,
        [
            "  chip0.paxi.txns_done = 1",
            "  chip0.paxi.txns_failed = 0",
            "  chip0.paxi.txns_issued = 1"
        ]
    );
    let o = hwsim(&[tb, "-v"]);
    assert_eq!(stdout(&o).lines().filter(|l| l.contains(" = ")).count(), n);
    let o = hwsim(&[tb, "--counters=nothing.like.this"]);
    assert!(stdout(&o).contains("counters: none matches `nothing.like.this`"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_failed_sequence_shows_its_first_difference() {
    let o = hwsim(&[
        FIFO_TB,
        "--set",
        "expect.3.sequence=[100, 101, 102, 999, 104, 105, 106, 107, 108, 109, 110, 111]",
    ]);
    assert_code(&o, 1);
    let out = stdout(&o);
    assert!(
        out.contains("first difference: item 3: expected 999, actual 103 @ 6"),
        "{out}"
    );
    let o = hwsim(&[FIFO_TB, "--set", "expect.3.sequence=[100, 101]"]);
    assert!(
        stdout(&o).contains("first difference: 10 more than expected from item 2: 102 @ 3"),
        "{}",
        stdout(&o)
    );
}
