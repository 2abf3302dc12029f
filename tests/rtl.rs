//! RTL in the loop (crate::rtl), end to end through the built binary: examples/rtl/vc_arbiter.sv
//! shadowing `chip0.lg7.tx.arbiter` through the Go-Back-N story passes; the planted bug stops
//! the run at its first cycle with the reproduction CSV; every refusal is exit 2, one line,
//! located. The tests that need Verilator say so and pass without it (CI installs it first).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One build cache for all the tests (two builds: PLANT_BUG 0 and 1).
fn cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hwsim-rtl")
}

fn verilator() -> bool {
    let ok = Command::new("verilator")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: verilator is not installed (Debian: apt-get install verilator)");
    }
    ok
}

/// A fresh folder for one test's files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hwsim-rtl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `hwsim args…` from the workspace root with the test cache: (exit code, stdout, stderr).
fn hwsim(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hwsim"));
    c.args(args).current_dir(root()).env("HWSIM_RTL_DIR", cache());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const TB: &str = "tb/rtl/gbn_arbiter_shadow.yaml";

/// The shipped testbench with its relative paths made absolute, edited by `f`, in `dir`.
fn variant(dir: &Path, f: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(root().join(TB)).unwrap();
    let sv = root().join("examples/rtl/vc_arbiter.sv");
    let cfg = root().join("configs/sg2262.yaml");
    let text = text
        .replace("../../examples/rtl/vc_arbiter.sv", sv.to_str().unwrap())
        .replace("../../configs/sg2262.yaml", cfg.to_str().unwrap());
    let p = dir.join("tb.yaml");
    std::fs::write(&p, f(text)).unwrap();
    p
}

#[test]
fn the_rtl_shadows_the_arbiter_through_go_back_n_and_a_planted_bug_stops_the_run() {
    if !verilator() {
        return;
    }
    let (code, out, err) = hwsim(&[TB], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("PASS  rtl arb: chip0.lg7.tx.arbiter shadowed by vc_arbiter")
            && out.contains("equal over 50835 cycles"),
        "{out}"
    );
    // The same run with the RTL's off-by-one planted: exit 1 at the first request, with the
    // node's inputs up to it written to replay the RTL alone.
    let d = scratch("bug");
    let (code, out, err) = hwsim(
        &[TB, "--set", "rtl.arb.parameters.PLANT_BUG=1", "-v"],
        &[("HWSIM_RTL_DIR", d.to_str().unwrap())],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "expected chip0.lg7.tx.arbiter.grant.visited = 1 (model) at cycle 21, actual vc_arbiter.grant_visited = 31"
        ),
        "{out}"
    );
    assert!(
        out.contains("first divergence at cycle 21 on chip0.lg7.tx.arbiter.grant.visited"),
        "{out}"
    );
    // Only the divergence is judged: the checks of a run cut short would fail for that alone.
    assert!(out.contains("verdict: FAIL (0/1 checks)"), "{out}");
    let csv = std::fs::read_to_string(d.join("arb.diverged.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "cycle,req.valid:1:in,req.eligible:5:in");
    assert_eq!(lines.len(), 23, "{csv}");
    assert_eq!(*lines.last().unwrap(), "21,1,1");
    let _ = std::fs::remove_dir_all(&d);
}

/// Exit 2, one line on stderr, containing `want`.
fn refused(tb: &Path, env: &[(&str, &str)], want: &str) {
    let (code, out, err) = hwsim(&[tb.to_str().unwrap()], env);
    assert_eq!(code, 2, "{want}: {out}{err}");
    // The note of a fresh build (a test running first builds) is not part of the error.
    let err: String = err
        .lines()
        .filter(|l| !l.contains("built vc_arbiter with Verilator in"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(want), "want `{want}` in {err}");
}

#[test]
fn refusals_before_the_build() {
    let d = scratch("early");
    let tb = variant(&d, |t| t.replace("mode: shadow", "mode: replace"));
    refused(
        &tb,
        &[],
        "tb.yaml:22:11: rtl `arb`: mode `replace`: only `shadow` is built",
    );
    let tb = variant(&d, |t| {
        t.replace("instance: chip0.lg7.tx.arbiter", "instance: chip0.lg9.tx.arbiter")
    });
    refused(
        &tb,
        &[],
        "rtl `arb`: instance `chip0.lg9.tx.arbiter`: no such node in the netlist",
    );
    let tb = variant(&d, |t| t.replace("vc_arbiter.sv", "vc_arbitr.sv"));
    refused(&tb, &[], "rtl `arb`: source `");
    // Without Verilator on PATH: what to install.
    let empty = d.join("bin");
    std::fs::create_dir_all(&empty).unwrap();
    let tb = variant(&d, |t| t);
    refused(
        &tb,
        &[("PATH", empty.to_str().unwrap())],
        "rtl `arb`: verilator is not installed or does not run (Debian: apt-get install verilator",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn map_refusals_name_both_sides() {
    if !verilator() {
        return;
    }
    let d = scratch("map");
    for (from, to, want) in [
        (
            "req.eligible: req_eligible",
            "req.elig: req_eligible",
            "map: `chip0.lg7.tx.arbiter.req.elig` is not a field of the node's ports (",
        ),
        (
            "req.eligible: req_eligible",
            "req.eligible: req_valid",
            "map: `chip0.lg7.tx.arbiter.req.eligible` is 5 bits, the RTL's `req_valid` 1 bits",
        ),
        (
            "      req.valid: req_valid\n",
            "",
            "map: the RTL's input `req_valid` is driven by no field of `chip0.lg7.tx.arbiter`",
        ),
        (
            "ptr: {signal: ptr, offset: 1}",
            "ptr: {signal: ptrr, offset: 1}",
            "map: `ptr` → `ptrr`: the top `vc_arbiter` has no such output",
        ),
        (
            "req.valid: req_valid",
            "req.valid: {signal: req_valid, offset: 1}",
            "map: `req.valid` is an input: no `offset` or `when`",
        ),
        (
            "grant.vc: {signal: grant_vc, when: grant.valid}",
            "grant.vc: {signal: grant_vc, when: grant.vld}",
            "map: when `grant.vld` is not a field of the node's ports",
        ),
        ("top: vc_arbiter", "top: vc_arbiterr", "rtl `arb`: verilator failed:"),
    ] {
        let tb = variant(&d, |t| {
            assert!(t.contains(from), "{from}");
            t.replace(from, to)
        });
        refused(&tb, &[], want);
    }
    let _ = std::fs::remove_dir_all(&d);
}
