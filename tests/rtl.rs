//! RTL in the loop (crate::rtl), end to end through the built binary: examples/rtl/vc_arbiter.sv
//! shadowing `chip0.lg7.tx.arbiter` through the Go-Back-N story passes; the planted bug stops
//! the run at its first cycle with the reproduction CSV; every refusal is exit 2, one line,
//! located. In replace mode the RTL drives the arbiter: the Go-Back-N system runs to the
//! model's every counter, the planted bug breaks the module testbench's grant order, an RTL
//! breaking the protocol or moving on its own while asleep stops the run. A node of two
//! processes (mac_credit, examples/rtl/mac_credit.sv) is replaced and shadowed the same way, and
//! examples/rtl/cbfc.sv shadows `chip0.lg7.tx.cbfc` (returns and charges, the ledgers). The
//! tests that need Verilator say so and pass without it (CI installs it first).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{command, parts, root, temp_dir};

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

/// Runs `hwsim args…` from the workspace root with the test cache and `env`: (exit code,
/// stdout, stderr).
fn hwsim_rtl(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = command();
    c.args(args).env("HWSIM_RTL_DIR", cache());
    for (k, v) in env {
        c.env(k, v);
    }
    parts(&c.output().expect("runs"))
}

const TB: &str = "tb/rtl/gbn_arbiter_shadow.yaml";

/// The shipped testbench with its relative paths made absolute, edited by `f`, in `dir`.
fn variant(dir: &Path, f: impl Fn(String) -> String) -> PathBuf {
    variant_of(TB, dir, f)
}

/// The shipped testbench `tb` with its relative paths made absolute, edited by `f`, in `dir`.
fn variant_of(tb: &str, dir: &Path, f: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(root().join(tb)).unwrap();
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
    let (code, out, err) = hwsim_rtl(&[TB], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("PASS  rtl arb: chip0.lg7.tx.arbiter shadowed by vc_arbiter")
            && out.contains("equal over 50835 cycles"),
        "{out}"
    );
    // The same run with the RTL's off-by-one planted: exit 1 at the first request, with the
    // node's inputs up to it written to replay the RTL alone.
    let d = temp_dir("bug");
    let (code, out, err) = hwsim_rtl(
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

const CBFC: &str = "tb/rtl/gbn_cbfc_shadow.yaml";

#[test]
fn the_rtl_shadows_the_cbfc_controller_through_go_back_n_and_a_planted_bug_stops_the_run() {
    if !verilator() {
        return;
    }
    let (code, out, err) = hwsim_rtl(&[CBFC], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("PASS  rtl cbfc: chip0.lg7.tx.cbfc shadowed by cbfc") && out.contains("equal over 50835 cycles"),
        "{out}"
    );
    // The RTL's count without the return's bypass: exit 1 at the first return (the MAC's push
    // of cycle 388, the node's at 389), the ledger's register where the model has the sum.
    let d = temp_dir("cbfc-bug");
    let (code, out, err) = hwsim_rtl(
        &[CBFC, "--set", "rtl.cbfc.parameters.PLANT_BUG=1", "-v"],
        &[("HWSIM_RTL_DIR", d.to_str().unwrap())],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "expected chip0.lg7.tx.cbfc.counts.credits = 935 (model) at cycle 389, actual cbfc.counts_credits = 929"
        ),
        "{out}"
    );
    let csv = std::fs::read_to_string(d.join("cbfc.diverged.csv")).unwrap();
    // The return as the RTL got it, in the node's cycle: valid, VC 0, from chip 1, 6 credits;
    // the grant's charge of 19 credits on the wave since cycle 364.
    assert_eq!(csv.lines().last().unwrap(), "389,1,0,0,0,1,6,1,19", "{csv}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Exit 2, one line on stderr, containing `want`.
fn refused(tb: &Path, env: &[(&str, &str)], want: &str) {
    let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], env);
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
    let d = temp_dir("early");
    let tb = variant(&d, |t| t.replace("mode: shadow", "mode: replica"));
    refused(
        &tb,
        &[],
        "tb.yaml:22:11: rtl `arb`: mode `replica`: `shadow` (the RTL compared beside the model) or `replace`",
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
    // A folder or a device named as a source says so (it said "no such file"), and a map value
    // that is neither a name nor `{signal: …}` says what it may be (issue 53).
    let sv = root().join("examples/rtl/vc_arbiter.sv");
    let sv = sv.to_str().unwrap();
    let folder = root().join("examples/rtl");
    let tb = variant(&d, |t| t.replace(sv, folder.to_str().unwrap()));
    refused(&tb, &[], "/examples/rtl`: a folder, not a Verilog file");
    let tb = variant(&d, |t| t.replace(sv, "/dev/null"));
    refused(
        &tb,
        &[],
        "rtl `arb`: source `/dev/null`: not a regular file (a device or a pipe), not a Verilog file",
    );
    let tb = variant(&d, |t| t.replace("req.valid: req_valid", "req.valid: [req_valid]"));
    refused(
        &tb,
        &[],
        "an RTL port name (`req_valid`) or `{signal: NAME, offset: N, when: FIELD}`",
    );
    // A bad entry further down is refused at its own line (an untagged enum put every such
    // error at the map's first entry, 29:7), an unknown key of the long form is refused (it was
    // dropped: `ofset: 1` ran as offset 0), and an empty name is refused at its place.
    for (from, to, want) in [
        ("ptr: {signal: ptr, offset: 1}", "ptr: 5", "tb.yaml:38:"),
        (
            "ptr: {signal: ptr, offset: 1}",
            "ptr: {signal: ptr, ofset: 1}",
            "tb.yaml:38:",
        ),
        ("ptr: {signal: ptr, offset: 1}", "ptr: \"\"", "tb.yaml:38:"),
    ] {
        let tb = variant(&d, |t| t.replace(from, to));
        refused(&tb, &[], want);
    }
    let tb = variant(&d, |t| {
        t.replace("ptr: {signal: ptr, offset: 1}", "ptr: {signal: ptr, ofset: 1}")
    });
    refused(
        &tb,
        &[],
        "unknown field `ofset`, expected one of `signal`, `offset`, `when`",
    );
    let tb = variant(&d, |t| t.replace("ptr: {signal: ptr, offset: 1}", "ptr: \"\""));
    refused(&tb, &[], "an empty RTL port name");
    // Names that would reach outside the cache or into the generated program (issue 53): an
    // entry named by a path, a top climbing out of the cache, a clock with C++ in it; nothing
    // is written for any of them.
    for (from, to, want) in [
        (
            "\n  arb:\n",
            "\n  ../../x:\n",
            "rtl `../../x`: the entry's name names the divergence file in the cache: letters, digits, `_` and `-` only",
        ),
        (
            "top: vc_arbiter",
            "top: /../NAME",
            "rtl `arb`: top: `/../NAME` is not a Verilog identifier",
        ),
        (
            "clock: clk",
            "clock: \"clk; system(0)\"",
            "rtl `arb`: clock: `clk; system(0)` is not a Verilog identifier",
        ),
        (
            "reset: rst",
            "reset: \"!a/b\"",
            "rtl `arb`: reset: `a/b` is not a Verilog identifier",
        ),
    ] {
        let tb = variant(&d, |t| {
            assert!(t.contains(from), "{from}");
            t.replace(from, to)
        });
        let cache = d.join("cache");
        refused(&tb, &[("HWSIM_RTL_DIR", cache.to_str().unwrap())], want);
        assert!(!cache.exists(), "nothing written for {to}");
        assert!(!d.join("x.diverged.csv").exists() && !d.join("NAME").exists());
    }
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
    let d = temp_dir("map");
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

const REPLACE: &str = "tb/rtl/gbn_arbiter_replace.yaml";
const RR: &str = "tb/rtl/rr_pointer_replace.yaml";

fn report(args: &[&str], dir: &Path, name: &str) -> serde_json::Value {
    let json = dir.join(name);
    let mut a = args.to_vec();
    a.extend(["--json", json.to_str().unwrap()]);
    let (code, out, err) = hwsim_rtl(&a, &[]);
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn the_rtl_in_place_of_the_arbiter_runs_go_back_n_to_the_models_every_counter() {
    if !verilator() {
        return;
    }
    let d = temp_dir("replace");
    // The shadow run is the model's own arbiter driving (the RTL only watches).
    let model = report(&[TB], &d, "model.json");
    let rtl = report(&[REPLACE], &d, "rtl.json");
    let no_skip = report(&[REPLACE, "--no-skip"], &d, "rtl_ns.json");
    for k in ["counters", "flows", "metrics", "cycles"] {
        assert_eq!(model[k], rtl[k], "{k} differ with the RTL in place of the arbiter");
        assert_eq!(rtl[k], no_skip[k], "{k} differ with --no-skip");
    }
    assert_eq!(rtl["checks"], no_skip["checks"]);
    let checks = rtl["checks"].as_array().unwrap();
    let c = checks
        .iter()
        .find(|c| c["name"] == "rtl arb: chip0.lg7.tx.arbiter replaced by vc_arbiter")
        .expect("the replace check");
    assert_eq!(c["passed"], true);
    assert_eq!(
        c["actual"],
        "21 cycles with a message in or out, the last at cycle 1711"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_replaced_arbiter_with_the_planted_bug_breaks_the_grant_order() {
    if !verilator() {
        return;
    }
    let (code, out, err) = hwsim_rtl(&[RR], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verdict: PASS (14/14 checks)"), "{out}");
    let (code, out, err) = hwsim_rtl(&[RR, "--set", "rtl.arb.parameters.PLANT_BUG=1"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("first difference: item 3: expected {tag: 2}, actual {tag: 11"),
        "{out}"
    );
}

const CREDIT: &str = "tb/rtl/gbn_mac_credit_replace.yaml";

/// The reports' counters without the replaced node's own (the RTL has none).
fn counters_but(r: &serde_json::Value, node: &str) -> serde_json::Value {
    let mut c = r["counters"].clone();
    c.as_object_mut().unwrap().retain(|k, _| !k.starts_with(node));
    c
}

#[test]
fn the_rtl_in_place_of_a_two_process_node_runs_go_back_n_to_the_models_counters_and_waves() {
    if !verilator() {
        return;
    }
    let d = temp_dir("credit");
    let node = "chip0.lg7.tx.mac_credit.";
    let (mv, rv) = (d.join("m.vcd"), d.join("r.vcd"));
    let model = report(&["tb/go_back_n.yaml", "--vcd", mv.to_str().unwrap()], &d, "model.json");
    let rtl = report(&[CREDIT, "--vcd", rv.to_str().unwrap()], &d, "rtl.json");
    let no_skip = report(&[CREDIT, "--no-skip"], &d, "rtl_ns.json");
    assert_eq!(counters_but(&model, node), counters_but(&rtl, node));
    assert!(model["counters"][format!("{node}credits_taken")].as_u64() == Some(21));
    for k in ["counters", "flows", "metrics", "cycles", "checks"] {
        assert_eq!(rtl[k], no_skip[k], "{k} differ with --no-skip");
    }
    for k in ["flows", "metrics", "cycles"] {
        assert_eq!(model[k], rtl[k], "{k} differ with the RTL in place of mac_credit");
    }
    let checks = rtl["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["passed"] == true), "{checks:?}");
    let c = checks
        .iter()
        .find(|c| c["name"] == "rtl credit: chip0.lg7.tx.mac_credit replaced by mac_credit")
        .expect("the replace check");
    // A return and the take that spends it mostly share a cycle (the MAC's credit lead).
    assert_eq!(
        c["actual"],
        "22 cycles with a message in or out, the last at cycle 1797"
    );
    // Every traced signal the same at every cycle, the RTL's `available` included.
    let (code, out, err) = hwsim_rtl(&["diff", mv.to_str().unwrap(), rv.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verdict: SAME ("), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_planted_credit_bug_fails_the_replaced_and_the_shadowed_run() {
    if !verilator() {
        return;
    }
    let bug = ["--set", "rtl.credit.parameters.PLANT_BUG=1"];
    let (code, out, err) = hwsim_rtl(&[CREDIT, bug[0], bug[1]], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("FAIL  chip0.lg7.mac.frames == 21") && out.contains("actual 22"),
        "{out}"
    );
    // Beside the model's node (its registered input, the MAC's return, one cycle after the
    // wave shows it, as the node reads it), the correct RTL agrees and the bug is caught.
    let shadow = ["--set", "rtl.credit.mode=shadow"];
    let (code, out, err) = hwsim_rtl(&[CREDIT, shadow[0], shadow[1]], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("PASS  rtl credit: chip0.lg7.tx.mac_credit shadowed by mac_credit")
            && out.contains("equal over 50835 cycles (101670 comparisons)"),
        "{out}"
    );
    let (code, out, err) = hwsim_rtl(&[CREDIT, shadow[0], shadow[1], bug[0], bug[1]], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "expected chip0.lg7.tx.mac_credit.available = 0 (model) at cycle 107, actual mac_credit.available = 1"
        ),
        "{out}"
    );
}

#[test]
fn an_earlier_process_output_that_follows_a_later_process_input_stops_the_run() {
    if !verilator() {
        return;
    }
    let d = temp_dir("combpath");
    let sv = std::fs::read_to_string(root().join("examples/rtl/mac_credit.sv")).unwrap();
    // The take subtracted combinationally: `available` (process 0's, read by the arbiter before
    // the grant) would change after the grant of its own cycle.
    let edited = sv.replace(
        "assign available = count + {3'b0, credit_valid};",
        "assign available = count + {3'b0, credit_valid} - {3'b0, take_valid};",
    );
    assert_ne!(edited, sv);
    let p = d.join("comb.sv");
    std::fs::write(&p, edited).unwrap();
    let text = std::fs::read_to_string(root().join(CREDIT)).unwrap();
    let tb = d.join("tb.yaml");
    std::fs::write(
        &tb,
        text.replace("../../examples/rtl/mac_credit.sv", p.to_str().unwrap())
            .replace(
                "../../configs/sg2262.yaml",
                root().join("configs/sg2262.yaml").to_str().unwrap(),
            ),
    )
    .unwrap();
    let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("in `chip0.lg7.tx.mac_credit`: rtl `credit`: at cycle ")
            && out.contains("the RTL's output `available` (process 0's) is 0 after the inputs of process 1, which the node computes after process 0: the RTL has a combinational path from process 1's inputs to process 0's outputs that the node does not"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The vc_arbiter example with `edit` applied, written to `dir/name.sv`, and the round-robin
/// testbench pointed at it.
fn edited_rtl(dir: &Path, name: &str, edit: impl Fn(String) -> String, tb_edit: impl Fn(String) -> String) -> PathBuf {
    let sv = std::fs::read_to_string(root().join("examples/rtl/vc_arbiter.sv")).unwrap();
    let edited = edit(sv.clone());
    assert_ne!(edited, sv, "the edit applies");
    let p = dir.join(format!("{name}.sv"));
    std::fs::write(&p, edited).unwrap();
    let tb = variant_of(RR, dir, |t| {
        tb_edit(t.replace(
            root().join("examples/rtl/vc_arbiter.sv").to_str().unwrap(),
            p.to_str().unwrap(),
        ))
    });
    tb
}

#[test]
fn an_rtl_breaking_the_protocol_stops_the_run_with_the_cycle_and_the_path() {
    if !verilator() {
        return;
    }
    let d = temp_dir("badvc");
    let tb = edited_rtl(&d, "bad", |s| s.replace("grant_vc = vc;", "grant_vc = 3'd7;"), |t| t);
    let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("protocol violation at cycle 1 in `arb.vc_queues`: vc_queues: the arbiter granted VC 7, which the request did not name eligible"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// An RTL input wider than 64 bits, which hwsim cannot drive, is refused (issue 53: left at 0,
/// the run passed), from a fresh build and from the cache alike.
#[test]
fn an_rtl_input_wider_than_64_bits_is_refused() {
    if !verilator() {
        return;
    }
    let d = temp_dir("wide");
    let tb = edited_rtl(
        &d,
        "wide",
        |s| {
            s.replace(
                "    input  logic       rst,\n",
                "    input  logic       rst,\n    input  logic [79:0] wide_in,\n",
            )
        },
        |t| t,
    );
    for _ in 0..2 {
        let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &[]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains(
                "rtl `arb`: the top `vc_arbiter` has a 80-bit input `wide_in`: hwsim drives inputs of at most 64 bits"
            ),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// What an RTL prints goes to the standard error, not among its answers (issue 53: a
/// `$display` was read as port values, a false divergence or a protocol error).
#[test]
fn what_an_rtl_displays_is_shown_not_read_as_its_outputs() {
    if !verilator() {
        return;
    }
    let d = temp_dir("display");
    let tb = edited_rtl(
        &d,
        "chatty",
        |s| {
            s.replace("    always_ff @(posedge clk) begin", "    always_ff @(posedge clk) if (req_valid) $display(\"rtl says: request %0d\", req_eligible);\n    always_ff @(posedge clk) begin")
        },
        |t| t,
    );
    let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verdict: PASS (14/14 checks)"), "{out}");
    assert!(err.contains("rtl says: request "), "{err}");
    assert!(!out.contains("rtl says"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_rtl_whose_outputs_move_on_their_own_must_not_sleep() {
    if !verilator() {
        return;
    }
    let d = temp_dir("ticker");
    // A timer inside: at its 40th clock the counter register jumps, whatever the inputs (the
    // RTL has been asleep since its last grant at 25, its outputs holding still).
    let tick = |s: String| {
        s.replace(
            "    always_ff @(posedge clk) begin\n        if (rst) begin",
            "    logic [7:0] t;\n    always_ff @(posedge clk) t <= rst ? 8'd0 : t + 8'd1;\n    always_ff @(posedge clk) begin\n        if (rst) begin",
        )
        .replace("counter <= counter_d;", "counter <= (t == 8'd40) ? 9'd77 : counter_d;")
    };
    // A request at 60 wakes it: the cycles it slept are clocked, and the jump is seen there.
    let tb = edited_rtl(&d, "ticker", tick, |t| {
        t.replace(
            "stimulus:\n",
            "stimulus:\n  - {at: 60, port: arb.req, value: {tag: 4, dst: 1, qp: 2, cost: 1}}\n",
        )
    });
    let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "rtl `arb`: the RTL's output `counter` moved from 0 to 77 at cycle 41 with its inputs held since cycle "
        ) && out.contains("an RTL whose outputs move on their own needs `sleep: false`"),
        "{out}"
    );
    // Awake every cycle, it runs to `until` without an error, the jump on the waves.
    let tb = edited_rtl(&d, "ticker", tick, |t| {
        t.replace("mode: replace", "mode: replace\n    sleep: false")
            .replace("expect:\n", "expect:\n  - {port: arb.counter, at: 41, value: 77}\n")
    });
    let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verdict: PASS (15/15 checks) at cycle 100"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn replace_refusals_name_the_node_and_the_rtl() {
    if !verilator() {
        return;
    }
    let d = temp_dir("rmap");
    for (from, to, want) in [
        (
            "instance: chip0.lg7.tx.arbiter",
            "instance: chip0.lg7.tx",
            "rtl `arb`: instance `chip0.lg7.tx` is a composite: only a leaf node can be replaced",
        ),
        (
            "instance: chip0.lg7.tx.arbiter",
            "instance: chip0.lg7.tx.slot_fifo",
            "rtl `arb`: instance `chip0.lg7.tx.slot_fifo`: port `",
        ),
        (
            "instance: chip0.lg7.tx.arbiter",
            "instance: chip0.lg7.tx.ack_return",
            "rtl `arb`: instance `chip0.lg7.tx.ack_return`: output `ack_cr` carries CreditMsg, which cannot be built from RTL values yet",
        ),
        (
            "ptr: ptr",
            "ptr: {signal: ptr, offset: 1}",
            "map: `ptr`: `offset` and `when` belong to a shadow's comparison",
        ),
        (
            "      grant.vc: grant_vc\n",
            "",
            "map: `chip0.lg7.tx.arbiter.grant.vc` is driven by no RTL output (in replace mode the RTL drives every output field)",
        ),
        (
            "grant.valid: grant_valid",
            "grant.valid: req_valid",
            "map: `grant.valid` → `req_valid`: the RTL's `req_valid` must be an output of `vc_arbiter`",
        ),
        (
            "req.valid: req_valid",
            "req.ready: req_valid",
            "map: `req.ready` → `req_valid`: the RTL's `req_valid` must be an output of `vc_arbiter`",
        ),
        (
            "req.eligible: req_eligible",
            "req.elig: req_eligible",
            "map: `chip0.lg7.tx.arbiter.req.elig` is not a field of the node's ports (req.valid, req.ready, req.eligible,",
        ),
        (
            "grant.vc: grant_vc",
            "grant.vc: grant_visited",
            "map: `chip0.lg7.tx.arbiter.grant.vc` is 3 bits, the RTL's `grant_visited` 5 bits",
        ),
        (
            "ptr: ptr",
            "ptr: ptrr",
            "map: `ptr` → `ptrr`: the top `vc_arbiter` has no such port",
        ),
        (
            "req.valid: req_valid",
            "req.valid: clk",
            "map: `req.valid` → `clk`: `clk` is the clock or the reset of `vc_arbiter`, which hwsim drives",
        ),
        (
            "      req.valid: req_valid\n",
            "",
            "map: the RTL's input `req_valid` is driven by no field of `chip0.lg7.tx.arbiter`",
        ),
    ] {
        let tb = variant_of(REPLACE, &d, |t| {
            assert!(t.contains(from), "{from}");
            t.replace(from, to)
        });
        refused(&tb, &[], want);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_rtl_that_stops_answering_is_stopped_after_its_timeout() {
    if !verilator() {
        return;
    }
    let d = temp_dir("hang");
    let cache = d.join("cache");
    let tb = variant_of(REPLACE, &d, |t| {
        t.replace("mode: replace", "mode: replace\n    timeout_s: 1")
    });
    let env = [("HWSIM_RTL_DIR", cache.to_str().unwrap())];
    let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &env);
    assert_eq!(code, 0, "{out}{err}");
    // The cached simulator swapped for one that tells its ports and then never answers.
    let dir = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("sim").is_file())
        .expect("the build");
    let sim = dir.join("sim");
    let ports = String::from_utf8(Command::new(&sim).arg("--ports").output().unwrap().stdout).unwrap();
    // Sleeping itself, and (as an RTL calling `$system("sleep 60")` does) through a child that
    // inherits the pipes and outlives a kill of the simulator alone.
    for sleep in ["exec sleep 60", "sleep 60"] {
        let script =
            format!("#!/bin/sh\nif [ \"$1\" = --ports ]; then\ncat <<'EOF'\n{ports}EOF\nexit 0\nfi\n{sleep}\n");
        std::fs::write(&sim, script).unwrap();
        let t0 = std::time::Instant::now();
        let (code, out, err) = hwsim_rtl(&[tb.to_str().unwrap()], &env);
        assert!(
            t0.elapsed().as_secs() < 30,
            "`{sleep}`: stopped after its timeout, not after the sleep"
        );
        assert_eq!(code, 1, "{out}{err}");
        assert!(
            out.contains(
                "rtl `arb`: the RTL simulator stopped at cycle 0: no answer (no answer within 1 s, so hwsim stopped it"
            ),
            "{out}"
        );
    }
    let tb = variant_of(REPLACE, &d, |t| {
        t.replace("mode: replace", "mode: replace\n    timeout_s: 0")
    });
    refused(
        &tb,
        &env,
        "rtl `arb`: timeout_s: 0: seconds to wait for one answer of the RTL",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn regress_skips_rtl_testbenches_where_verilator_is_missing() {
    let d = temp_dir("regress");
    let tbs = d.join("tbs");
    std::fs::create_dir_all(&tbs).unwrap();
    let tb = variant_of(RR, &d, |t| t);
    std::fs::copy(&tb, tbs.join("rr.yaml")).unwrap();
    std::fs::copy(
        root().join("tb/modules/bank_arbiter_rr_pointer.yaml"),
        tbs.join("model.yaml"),
    )
    .unwrap();
    let empty = d.join("bin");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out, err) = hwsim_rtl(
        &["regress", tbs.to_str().unwrap(), "-j", "1"],
        &[("PATH", empty.to_str().unwrap())],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("SKIP") && out.contains("verilator is not installed"),
        "{out}"
    );
    assert!(
        out.contains("1 passed, 0 failed, 1 skipped (they need Verilator)"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
