//! The `hwsim` command line, end to end: exit codes (0 pass, 1 a check failed, 2 bad input),
//! one-line `hwsim: file:line:col: …` messages for the broken testbenches under tests/bad/, and
//! the `check`, `list`, `netlist`, `run` (`--json`, `--seed`, `--no-skip`, `-q`, `--stats`) and
//! `regress` subcommands.
//!
//! Every run uses the built binary with the workspace root as working directory; generated files
//! go to a fresh folder under the system temp dir, one per test.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_bad_output, assert_code, hwsim, read_json, stderr, stdout, temp_dir, FIFO_TB};
use serde_json::Value;

/// A self-contained copy of the example testbench (no `include:`, so it can live in a temp dir).
/// `{NAME}` and `{RECEIVED}` are filled in by [`fifo_tb`].
const FIFO_TB_TEMPLATE: &str = "\
name: {NAME}
seed: 1
until: 200
instances:
  src:  {kind: producer, params: {count: 12, interval: 1, first_value: 100}}
  fifo: {kind: fifo, params: {depth: 4}}
  snk:  {kind: consumer, params: {interval: 3}}
connect:
  - {from: src.out, to: fifo.in}
  - {from: fifo.out, to: snk.in}
expect:
  - {counter: snk.received, equals: {RECEIVED}}
  - {counter: src.stall_cycles, min: 1}
  - {counter: fifo.peak_occupancy, equals: 4}
  - {port: fifo.out, sequence: [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111]}
  - {port: src.out, at: 0, value: 100}
  - {port: snk.last, within: [30, 60], value: 111}
";

/// The fifo testbench named `name`, expecting `received` messages at the sink (12 passes).
fn fifo_tb(name: &str, received: u64) -> String {
    FIFO_TB_TEMPLATE
        .replace("{NAME}", name)
        .replace("{RECEIVED}", &received.to_string())
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write temp file");
    p
}

/// `hwsim run tests/bad/<file>` is refused at `line:col` with a message containing `parts`.
fn assert_bad(file: &str, pos: &str, parts: &[&str]) {
    let path = format!("tests/bad/{file}");
    let o = hwsim(&["run", &path]);
    assert_bad_output(&o, &format!("{path}:{pos}: "), parts);
}

// ---------------------------------------------------------------------------------------------
// 1. Broken testbenches.

#[test]
fn bad_traffic_cdma_out_of_range() {
    // Found at run time as a protocol violation in the PAXI (exit 1) before; now at the flow's
    // `cdma:` (the second flow's, not the first one's).
    assert_bad(
        "traffic_cdma_range.yaml",
        "11:54",
        &["cdma 1023 out of range 0..=255", "XPU_ID"],
    );
}

#[test]
fn bad_multicast_traffic_names_the_field() {
    assert_bad(
        "traffic_multicast_member_src.yaml",
        "8:28",
        &["chip 2 multicasts to a group it is in"],
    );
    assert_bad("traffic_multicast_read.yaml", "11:7", &["a multicast is a write"]);
}

#[test]
fn bad_traffic_dst_out_of_range() {
    assert_bad("traffic_dst_range.yaml", "13:7", &["dst chip 7 out of range 0..2"]);
}

#[test]
fn bad_unknown_top_level_field() {
    assert_bad("unknown_top_field.yaml", "3:1", &["unknown field `seeed`", "`seed`"]);
}

#[test]
fn bad_unknown_instance_field() {
    assert_bad(
        "unknown_instance_field.yaml",
        "6:5",
        &["instances.c", "unknown field `param`", "`params`"],
    );
}

#[test]
fn bad_wrong_type() {
    assert_bad(
        "wrong_type.yaml",
        "3:8",
        &["until", "invalid type: string \"soon\"", "expected u64"],
    );
}

#[test]
fn bad_unbound_input() {
    assert_bad("unbound_input.yaml", "5:3", &["input `inc.in`", "add1", "is not bound"]);
}

#[test]
fn bad_double_driver() {
    assert_bad(
        "double_driver.yaml",
        "9:12",
        &["input `inc.in` has two drivers: `ca.count` and `cb.count`"],
    );
}

#[test]
fn bad_comb_loop() {
    // Pointed at the binding that closes the ring; every binding on it is named, in order.
    assert_bad(
        "comb_loop.yaml",
        "11:23",
        &["combinational loop through 3 instance(s): a.out → b.in, b.out → c.in, c.out → a.in (each output is read in the cycle it is written by the next instance, around a ring; make one of these bindings registered)"],
    );
}

#[test]
fn bad_comb_output_into_a_registered_input() {
    let dir = temp_dir("comb_timing");
    let tb = dir.join("t.yaml");
    std::fs::write(
        &tb,
        "name: t\ninstances:\n  a: {kind: add1, params: {output: comb}}\n  b: {kind: add1}\n  c: {kind: counter}\nconnect:\n  - {from: c.count, to: a.in}\n  - {from: a.out, to: b.in}\n",
    )
    .unwrap();
    let o = hwsim(&["run", tb.to_str().unwrap()]);
    assert_bad_output(
        &o,
        &format!("{}:8:23: ", tb.display()),
        &["timing mismatch: `a.out` is comb signal<u64> but `b.in` is signal<u64>"],
    );
}

#[test]
fn bad_unknown_kind() {
    // Points at `kind: fifoo` on line 5, not at the comment on line 1 that mentions it.
    assert_bad(
        "unknown_kind.yaml",
        "5:15",
        &["instance `buf`", "unknown block kind `fifoo`", "fifo"],
    );
}

#[test]
fn bad_unknown_port() {
    assert_bad(
        "unknown_port.yaml",
        "8:25",
        &["instance `fifo` (fifo) has no port `inn`", "ports: in, out"],
    );
}

#[test]
fn bad_type_mismatch() {
    assert_bad(
        "type_mismatch.yaml",
        "8:25",
        &["type mismatch: `c.count` is signal<u64> but `fifo.in` is stream<u64>"],
    );
}

#[test]
fn bad_missing_include() {
    assert_bad(
        "missing_include.yaml",
        "3:11",
        &["include `no_such_config.yaml` not found"],
    );
}

#[test]
fn bad_yaml_syntax() {
    assert_bad("syntax_error.yaml", "5:6", &["did not find expected ',' or '}'"]);
}

#[test]
fn bad_parameter_value() {
    assert_bad("bad_param.yaml", "5:3", &["instance `fifo`", "depth 0 out of range"]);
}

#[test]
fn bad_expect_on_unknown_counter() {
    assert_bad(
        "unknown_counter.yaml",
        "9:6",
        &["no counter matches `snk.receivd`", "snk.received"],
    );
}

#[test]
fn bad_stimulus_on_output() {
    assert_bad(
        "stimulus_output.yaml",
        "9:19",
        &["stimulus drives `inc.out`, which is an output"],
    );
}

#[test]
fn bad_stream_with_two_consumers() {
    assert_bad(
        "stream_fanout.yaml",
        "9:25",
        &["stream `src.out` has two consumers: `a.in` and `b.in`"],
    );
}

/// `hwsim check` validates a testbench: every broken one is refused with the same message as
/// `hwsim run`.
#[test]
fn check_refuses_every_bad_testbench() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/bad exists")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 14, "tests/bad has {} files", files.len());
    let mut wrong = Vec::new();
    for f in &files {
        let path = format!("tests/bad/{f}");
        let run = hwsim(&["run", &path]);
        let check = hwsim(&["check", &path]);
        if check.status.code() != Some(2) || stderr(&check) != stderr(&run) {
            wrong.push(format!(
                "{path}: check exit {:?}, stdout {:?}, stderr {:?}; run stderr {:?}",
                check.status.code(),
                stdout(&check),
                stderr(&check),
                stderr(&run)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// 2. A missing testbench file.

#[test]
fn missing_testbench_file() {
    let path = "tests/bad/no_such_testbench.yaml";
    for args in [vec![path], vec!["run", path], vec!["check", path]] {
        let o = hwsim(&args);
        assert_bad_output(&o, &format!("{path}: "), &["cannot read"]);
    }
    let dot = temp_dir("missing_file").join("x.dot");
    let o = hwsim(&["netlist", path, "--dot", dot.to_str().expect("utf-8 temp path")]);
    assert_bad_output(&o, &format!("{path}: "), &["cannot read"]);
    assert!(!dot.exists(), "no DOT file for a missing testbench");
}

// ---------------------------------------------------------------------------------------------
// 3. check.

#[test]
fn check_prints_counts() {
    let o = hwsim(&["check", FIFO_TB]);
    assert_code(&o, 0);
    // src, fifo, snk (no stimulus driver, no sink: both streams are consumed); one net per
    // output port (src.out, fifo.out, snk.last); producer sent + stall_cycles, fifo passed +
    // peak_occupancy, consumer received + sum.
    assert_eq!(
        stdout(&o),
        format!(
            "{FIFO_TB}: ok — 3 instances, 3 nets, 6 counters\n  blocks per kind:\n          1  consumer\n          1  fifo\n          1  producer\n"
        )
    );
    assert!(stderr(&o).is_empty(), "stderr: {}", stderr(&o));
}

#[test]
fn check_counts_testbench_helpers() {
    // A stimulus driver into fifo.in and a sink on the unconsumed fifo.out: 1 block + 2 helpers.
    // Nets: the driver's out and fifo.out (the sink drives nothing); counters: the fifo's two.
    let dir = temp_dir("check_helpers");
    let tb = write(
        &dir,
        "helpers.yaml",
        "instances:\n  f: {kind: fifo}\nstimulus:\n  - {at: 0, port: f.in, value: 7}\nexpect:\n  - {metric: end_cycle, min: 0}\n",
    );
    let o = hwsim(&[Path::new("check"), tb.as_path()]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains(": ok — 3 instances, 2 nets, 2 counters\n  blocks per kind:\n          1  fifo\n          1  sink\n          1  stimulus\n"),
        "{}",
        stdout(&o)
    );
}

// ---------------------------------------------------------------------------------------------
// 4. list.

/// What `hwsim list` must show for a kind: its name, its ports as (direction, name, shape), and
/// its parameter default lines (none: `params: none`).
type KindListing = (
    &'static str,
    &'static [(&'static str, &'static str, &'static str)],
    &'static [&'static str],
);

/// The `hwsim list` section of `kind` (its header line to the next blank line).
fn list_section<'a>(out: &'a str, kind: &str) -> &'a str {
    let head = format!("{kind} — ");
    let start = out
        .find(&format!("\n{head}"))
        .map(|i| i + 1)
        .or_else(|| out.starts_with(&head).then_some(0))
        .unwrap_or_else(|| panic!("no `{head}` section in:\n{out}"));
    let rest = &out[start..];
    &rest[..rest.find("\n\n").unwrap_or(rest.len())]
}

#[test]
fn list_takes_a_pattern_over_kind_names_and_descriptions() {
    let kinds = |args: &[&str]| -> Vec<String> {
        let o = hwsim(args);
        assert_code(&o, 0);
        stdout(&o)
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.is_empty())
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds(&["list", "rclink_*"]), ["rclink_tx", "rclink_rx"]);
    let sw = kinds(&["list", "switch"]);
    assert!(
        sw.contains(&"l2_switch".to_string()) && sw.contains(&"cell_source".to_string()),
        "{sw:?}"
    );
    assert!(!sw.contains(&"rclink_tx".to_string()), "{sw:?}");
    assert!(kinds(&["list"]).len() > sw.len());
    let o = hwsim(&["list", "nope*"]);
    assert_code(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no block kind matches `nope*`") && err.contains("l2_switch"),
        "{err}"
    );
}

#[test]
fn list_shows_kinds_ports_and_defaults() {
    let o = hwsim(&["list"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let kinds: &[KindListing] = &[
        (
            "counter",
            &[("out", "count", "signal 64 bits")],
            &["start: 0", "step: 1", "first: 0", "stop: null"],
        ),
        (
            "add1",
            &[("in", "in", "signal 64 bits"), ("out", "out", "signal 64 bits")],
            &["input: registered", "output: registered"],
        ),
        (
            "producer",
            &[("out", "out", "stream 64 bits")],
            &["count: 16", "interval: 1", "start: 0", "first_value: 0"],
        ),
        (
            "fifo",
            &[("in", "in", "stream[4] 64 bits"), ("out", "out", "stream 64 bits")],
            &["depth: 4"],
        ),
        (
            "consumer",
            &[("in", "in", "stream[2] 64 bits"), ("out", "last", "signal 64 bits")],
            &["interval: 1", "ready_from: 0", "capacity: 2"],
        ),
        ("timer", &[("out", "tick", "signal 1 bit")], &["period: 1000"]),
    ];
    for (kind, ports, params) in kinds {
        let sec = list_section(&out, kind);
        assert!(sec.contains("  ports:"), "{kind}: no ports in\n{sec}");
        for (dir, name, shape) in *ports {
            let found = sec.lines().any(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                t.len() >= 3 && t[0] == *dir && t[1] == *name && t[2..].join(" ").starts_with(shape)
            });
            assert!(found, "{kind}: no port `{dir} {name} {shape}` in\n{sec}");
        }
        if params.is_empty() {
            assert!(sec.contains("params: none"), "{kind}: params in\n{sec}");
        } else {
            assert!(sec.contains("params (defaults):"), "{kind}:\n{sec}");
            for p in *params {
                assert!(
                    sec.lines().any(|l| l.trim() == *p),
                    "{kind}: no default `{p}` in\n{sec}"
                );
            }
        }
    }
    // Every kind the elaborator knows (its `unknown block kind` message lists them) has a
    // section with at least one port and a params line.
    let err = stderr(&hwsim(&["run", "tests/bad/unknown_kind.yaml"]));
    let known = err
        .split("(known: ")
        .nth(1)
        .and_then(|k| k.split(')').next())
        .unwrap_or_else(|| panic!("no known-kinds list in: {err}"));
    let known: Vec<&str> = known.split(", ").collect();
    for (kind, _, _) in kinds {
        assert!(known.contains(kind), "{kind} missing from {known:?}");
    }
    for kind in known {
        let sec = list_section(&out, kind);
        assert!(
            sec.lines()
                .skip_while(|l| l.trim() != "ports:")
                .skip(1)
                .any(|l| l.starts_with("    in ") || l.starts_with("    out ")),
            "{kind}: no ports listed in\n{sec}"
        );
        assert!(
            sec.contains("params: none") || sec.contains("params (defaults):"),
            "{kind}: no params line in\n{sec}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 5. netlist.

/// One place decides a testbench's form: `netlist`, `vectors` and `run` refuse a testbench
/// with both forms alike (`netlist` drew the system and ignored the instances before).
#[test]
fn every_command_refuses_a_testbench_of_both_forms_alike() {
    let dir = temp_dir("both_forms");
    let tb = dir.join("both.yaml");
    std::fs::write(
        &tb,
        "name: both\nuntil: 10\ninstances:\n  a: {kind: counter}\nsystem:\n  topology: {kind: star, chips: 2}\n",
    )
    .unwrap();
    let dot = dir.join("x.dot");
    let out = dir.join("v");
    let t = tb.to_str().unwrap();
    for args in [
        vec!["netlist", t, "--dot", dot.to_str().unwrap()],
        vec!["vectors", t, "--out", out.to_str().unwrap()],
        vec!["run", t],
    ] {
        let o = hwsim(&args);
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("either module form (instances) or system form (system), not both"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert!(!dot.exists(), "no DOT for a testbench refused");
}

#[test]
fn netlist_writes_dot() {
    let dir = temp_dir("netlist");
    let dot = dir.join("x.dot");
    let o = hwsim(&[
        Path::new("netlist"),
        Path::new(FIFO_TB),
        Path::new("--dot"),
        dot.as_path(),
    ]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("(3 instances)"), "{}", stdout(&o));
    let text = std::fs::read_to_string(&dot).expect("DOT written");
    assert!(text.trim_start().starts_with("digraph"), "{text}");
    assert!(text.trim_end().ends_with('}'), "{text}");
    // Nodes: `nK [label="inst\n(kind)"];`, edges: `nA -> nB [label="out → in : u64"];`.
    let mut nodes: Vec<(String, String)> = Vec::new();
    let mut edges: Vec<(String, String, String)> = Vec::new();
    for l in text.lines().map(str::trim) {
        let Some((id, rest)) = l.split_once(" [label=\"") else {
            continue;
        };
        let label = rest.trim_end_matches("\"];").to_string();
        match id.split_once(" -> ") {
            Some((a, b)) => edges.push((a.to_string(), b.to_string(), label)),
            None => nodes.push((id.to_string(), label)),
        }
    }
    let name_of = |id: &str| -> String {
        let (_, label) = nodes
            .iter()
            .find(|(n, _)| n == id)
            .unwrap_or_else(|| panic!("edge to unknown node {id} in\n{text}"));
        label.split("\\n").next().unwrap_or("").to_string()
    };
    let mut names: Vec<String> = nodes.iter().map(|(id, _)| name_of(id)).collect();
    names.sort();
    assert_eq!(names, ["fifo", "snk", "src"], "one node per instance:\n{text}");
    for inst in ["src\\n(producer)", "fifo\\n(fifo)", "snk\\n(consumer)"] {
        assert!(nodes.iter().any(|(_, l)| l == inst), "no node `{inst}`:\n{text}");
    }
    let mut named: Vec<(String, String, String)> = edges
        .iter()
        .map(|(a, b, l)| (name_of(a), name_of(b), l.clone()))
        .collect();
    named.sort();
    assert_eq!(
        named,
        [
            ("fifo".into(), "snk".into(), "out → in : u64".into()),
            ("src".into(), "fifo".into(), "out → in : u64".into()),
        ],
        "edges labelled with the port names:\n{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// 6. --json.

/// Runs the fifo testbench with `extra` options and `--json`; returns (output, report).
fn run_json(test: &str, tb: &Path, extra: &[&str]) -> (Output, Value) {
    let dir = temp_dir(test);
    let json = dir.join("r.json");
    let mut args: Vec<&std::ffi::OsStr> = vec!["run".as_ref(), tb.as_os_str()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    args.push("--json".as_ref());
    args.push(json.as_os_str());
    let o = hwsim(&args);
    let v = read_json(&json);
    (o, v)
}

fn as_u64(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what} is not an unsigned integer: {v}"))
}

fn as_f64(v: &Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

#[test]
fn json_report() {
    let (o, r) = run_json("json", Path::new(FIFO_TB), &[]);
    assert_code(&o, 0);
    assert_eq!(r["testbench"], "fifo_backpressure", "{r:#}");
    assert_eq!(as_u64(&r["seed"], "seed"), 1);
    assert_eq!(r["passed"], true);
    let cycles = as_u64(&r["cycles"], "cycles");
    // snk.last takes 111 in [30, 60]; the run ends long before `until: 200`.
    assert!((30..200).contains(&cycles), "cycles {cycles}");
    assert!(
        stdout(&o).contains(&format!("verdict: PASS (6/6 checks) at cycle {cycles}\n")),
        "{}",
        stdout(&o)
    );

    let checks = r["checks"].as_array().expect("checks is an array");
    assert_eq!(checks.len(), 6, "{r:#}");
    for c in checks {
        assert!(c["name"].is_string(), "{c}");
        assert_eq!(c["passed"], true, "{c}");
        assert!(c["expected"].is_string(), "{c}");
        assert!(c["actual"].is_string(), "{c}");
    }
    assert_eq!(checks[0]["name"], "snk.received == 12");
    assert_eq!(checks[0]["expected"], "== 12");
    assert_eq!(checks[0]["actual"], "12");

    let counters = r["counters"].as_object().expect("counters is an object");
    assert_eq!(as_u64(&counters["snk.received"], "snk.received"), 12);
    assert_eq!(as_u64(&counters["src.sent"], "src.sent"), 12);
    assert_eq!(as_u64(&counters["fifo.passed"], "fifo.passed"), 12);
    assert_eq!(as_u64(&counters["fifo.peak_occupancy"], "peak"), 4);
    // 100 + 101 + … + 111.
    assert_eq!(as_u64(&counters["snk.sum"], "snk.sum"), 1266);
    assert!(as_u64(&counters["src.stall_cycles"], "stalls") >= 1);

    assert!(r["flows"].is_array(), "flows: {}", r["flows"]);

    let st = &r["stats"];
    for k in [
        "wall_s",
        "cycles",
        "cycles_per_s",
        "activations",
        "activations_per_s",
        "skipped_cycles",
        "peak_rss_bytes",
    ] {
        assert!(st[k].is_number(), "stats.{k} missing or not a number: {st}");
    }
    assert_eq!(as_u64(&st["cycles"], "stats.cycles"), cycles);
    assert!(as_f64(&st["wall_s"], "wall_s") >= 0.0);
    assert!(as_f64(&st["cycles_per_s"], "cycles_per_s") >= 0.0);
    assert!(as_f64(&st["activations_per_s"], "activations_per_s") >= 0.0);
    assert!(as_u64(&st["activations"], "activations") > 0);
    assert!(as_u64(&st["peak_rss_bytes"], "peak_rss_bytes") > 0);
    let skipped = as_u64(&st["skipped_cycles"], "skipped_cycles");
    assert!(skipped <= cycles);
    if let Some(exec) = st["executed_cycles"].as_u64() {
        assert_eq!(exec + skipped, cycles, "executed + skipped = cycles: {st}");
    }
}

// ---------------------------------------------------------------------------------------------
// 7. A failing check.

#[test]
fn failing_check_exits_1() {
    let dir = temp_dir("failing");
    let tb = write(&dir, "fails.yaml", &fifo_tb("fails", 13));
    let json = dir.join("r.json");
    let o = hwsim(&[Path::new("run"), &tb, Path::new("--json"), json.as_path()]);
    assert_code(&o, 1);
    let out = stdout(&o);
    let fail: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with("FAIL")).collect();
    assert_eq!(fail.len(), 1, "one FAIL line:\n{out}");
    assert!(
        fail[0].contains("snk.received == 13") && fail[0].contains("expected == 13, actual 12"),
        "{}",
        fail[0]
    );
    assert!(
        out.lines().any(|l| l.starts_with("verdict: FAIL (5/6 checks)")),
        "{out}"
    );
    assert!(stderr(&o).is_empty(), "stderr: {}", stderr(&o));

    let r = read_json(&json);
    assert_eq!(r["passed"], false);
    let c = &r["checks"][0];
    assert_eq!(c["passed"], false, "{c}");
    assert_eq!(c["expected"], "== 13", "{c}");
    assert_eq!(c["actual"], "12", "{c}");
    assert_eq!(r["checks"].as_array().map(|a| a.len()), Some(6));
}

// ---------------------------------------------------------------------------------------------
// 8. --seed, `hwsim TB` = `hwsim run TB`, --no-skip.

#[test]
fn seed_option_is_reported() {
    let (o, r) = run_json("seed", Path::new(FIFO_TB), &["--seed", "7"]);
    assert_code(&o, 0);
    assert_eq!(as_u64(&r["seed"], "seed"), 7, "{r:#}");
    assert!(stdout(&o).contains("seed 7)"), "{}", stdout(&o));
}

#[test]
fn bare_testbench_means_run() {
    let dir = temp_dir("bare");
    let failing = write(&dir, "fails.yaml", &fifo_tb("fails", 13));
    let failing = failing.to_str().expect("utf-8 temp path");
    for (tb, code) in [(FIFO_TB, 0), (failing, 1), ("tests/bad/double_driver.yaml", 2)] {
        let run = hwsim(&["run", tb]);
        let bare = hwsim(&[tb]);
        assert_code(&run, code);
        assert_code(&bare, code);
        assert_eq!(stdout(&bare), stdout(&run), "{tb}: stdout");
        assert_eq!(stderr(&bare), stderr(&run), "{tb}: stderr");
    }
    // Options after the bare testbench are `run` options.
    let run = hwsim(&["run", FIFO_TB, "-q", "--seed", "3"]);
    let bare = hwsim(&[FIFO_TB, "-q", "--seed", "3"]);
    assert_code(&bare, 0);
    assert_eq!(stdout(&bare), stdout(&run));
}

#[test]
fn no_skip_gives_identical_results() {
    let (o1, skip) = run_json("skip_on", Path::new(FIFO_TB), &[]);
    let (o2, noskip) = run_json("skip_off", Path::new(FIFO_TB), &["--no-skip"]);
    assert_code(&o1, 0);
    assert_code(&o2, 0);
    assert_eq!(noskip["checks"], skip["checks"]);
    assert_eq!(noskip["counters"], skip["counters"]);
    assert_eq!(noskip["cycles"], skip["cycles"]);
    assert_eq!(noskip["passed"], skip["passed"]);
    assert_eq!(as_u64(&noskip["stats"]["skipped_cycles"], "skipped"), 0);
}

// ---------------------------------------------------------------------------------------------
// 9. regress.

#[test]
fn regress_with_a_failure() {
    let dir = temp_dir("regress_fail");
    write(&dir, "pass.yaml", &fifo_tb("passes", 12));
    write(&dir, "fail.yaml", &fifo_tb("fails", 13));
    let o = hwsim(&[Path::new("regress"), dir.as_path()]);
    assert_code(&o, 1);
    let out = stdout(&o);
    let row = |file: &str| -> Vec<String> {
        let l = out
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("no row for {file}:\n{out}"));
        l.split_whitespace().map(str::to_string).collect()
    };
    let p = row("pass.yaml");
    let f = row("fail.yaml");
    assert_eq!(p[1], "PASS", "{out}");
    assert_eq!(f[1], "FAIL", "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("fail.yaml") && l.contains("snk.received == 13")),
        "the failing row names its first failed check:\n{out}"
    );
    assert_eq!(out.lines().last(), Some("1 passed, 1 failed"), "{out}");
}

#[test]
fn regress_all_passing() {
    let dir = temp_dir("regress_pass");
    write(&dir, "a.yaml", &fifo_tb("a", 12));
    std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
    write(&dir.join("sub"), "b.yaml", &fifo_tb("b", 12));
    let o = hwsim(&[Path::new("regress"), dir.as_path()]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert_eq!(out.lines().filter(|l| l.contains(" PASS ")).count(), 2, "{out}");
    assert_eq!(out.lines().last(), Some("2 passed, 0 failed"), "{out}");
}

/// A regression folder: a passing, a failing and a broken testbench.
fn regress_dir(test: &str) -> PathBuf {
    let dir = temp_dir(test);
    write(&dir, "a_pass.yaml", &fifo_tb("passes", 12));
    write(&dir, "b_fail.yaml", &fifo_tb("fails", 13));
    write(&dir, "c_error.yaml", "name: broken\n");
    dir
}

/// `text` with every `time="…"` attribute's value (wall seconds) replaced by `T`.
fn without_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("time=\"") {
        out.push_str(&rest[..i + 6]);
        let tail = &rest[i + 6..];
        let end = tail.find('"').expect("closing quote");
        let t: f64 = tail[..end].parse().expect("a time in seconds");
        assert!(t >= 0.0);
        out.push('T');
        rest = &tail[end..];
    }
    out + rest
}

#[test]
fn regress_writes_junit_and_json_for_ci() {
    let dir = regress_dir("regress_junit");
    let out = temp_dir("regress_junit_out");
    let (x, j) = (out.join("r.xml"), out.join("r.json"));
    let run = || {
        hwsim(&[
            Path::new("regress"),
            &dir,
            Path::new("--junit"),
            &x,
            Path::new("--json"),
            &j,
        ])
    };
    let o = run();
    assert_code(&o, 1);
    // Piped (as here): the table on stdout and nothing on stderr, no progress.
    assert_eq!(stderr(&o), "", "nothing extra when stderr is not a terminal");
    assert_eq!(stdout(&o).lines().last(), Some("1 passed, 2 failed"));
    let xml = std::fs::read_to_string(&x).unwrap();
    let d = dir.display().to_string();
    let class = d.trim_start_matches('/').replace('/', ".");
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hwsim regress\" tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\" time=\""), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
    for want in [
        format!("<testcase classname=\"{class}\" name=\"a_pass\" file=\"{d}/a_pass.yaml\" time=\""),
        "<failure type=\"check\" message=\"5/6 checks; first failure: snk.received == 13\">snk.received == 13: expected == 13, actual 12\n</failure>".into(),
        format!("<error type=\"input\" message=\"{d}/c_error.yaml: no `instances:`"),
    ] {
        assert!(xml.contains(&want), "`{want}` in\n{xml}");
    }
    let r = read_json(&j);
    assert_eq!(
        (
            r["total"].as_u64(),
            r["passed"].as_u64(),
            r["failed"].as_u64(),
            r["errors"].as_u64()
        ),
        (Some(3), Some(1), Some(1), Some(1))
    );
    assert_eq!(r["testbenches"][1]["failures"][0]["name"], "snk.received == 13");
    assert_eq!(r["testbenches"][1]["failures"][0]["actual"], "12");
    assert_eq!(r["testbenches"][0]["checks_passed"], 6);
    assert!(r["version"].as_str().unwrap().starts_with(env!("CARGO_PKG_VERSION")));
    // The same files again: the same bytes but for the wall times.
    let (x1, j1) = (xml.clone(), r.clone());
    assert_code(&run(), 1);
    assert_eq!(without_times(&std::fs::read_to_string(&x).unwrap()), without_times(&x1));
    let strip = |mut v: Value| {
        for t in v["testbenches"].as_array_mut().unwrap() {
            t["wall_s"] = Value::Null;
            t["elapsed_s"] = Value::Null;
        }
        v
    };
    assert_eq!(strip(read_json(&j)), strip(j1));
    // The output policy: never over a testbench, never two outputs on one file; nothing written.
    let o = hwsim(&[
        Path::new("regress"),
        &dir,
        Path::new("--junit"),
        &dir.join("a_pass.yaml"),
    ]);
    assert_bad_output(&o, "regress: --junit ", &["is the input", "refusing to overwrite it"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("a_pass.yaml")).unwrap(),
        fifo_tb("passes", 12)
    );
    let same = out.join("same.xml");
    let o = hwsim(&[
        Path::new("regress"),
        &dir,
        Path::new("--junit"),
        &same,
        Path::new("--json"),
        &same,
    ]);
    assert_bad_output(&o, "regress: --json ", &["are the same file"]);
    assert!(!same.exists());
    // An output that cannot be written is bad output (exit 2), named with the OS error.
    let blocker = write(&out, "blocker", "a file, not a folder");
    let o = hwsim(&[Path::new("regress"), &dir, Path::new("--junit"), &blocker.join("r.xml")]);
    assert_bad_output(&o, &format!("{}/r.xml: cannot ", blocker.display()), &["File exists"]);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn regress_shows_live_progress_on_a_terminal() {
    // `script` runs the command on a pseudo-terminal (util-linux; also on macOS with other
    // arguments): stderr is then a terminal, and the count is drawn as the testbenches finish.
    let have_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_script {
        eprintln!("SKIPPED: `script` (util-linux) is not installed");
        return;
    }
    let dir = regress_dir("regress_tty");
    let cmd = format!("{} regress {} -j 1", env!("CARGO_BIN_EXE_hwsim"), dir.display());
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("CI")
        .output()
        .unwrap();
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("regress [") && text.contains("/3 done, "),
        "a progress line:\n{text}"
    );
    assert!(
        text.contains("3/3 done, 2 failed") || text.contains("2/3 done, 1 failed"),
        "failures so far:\n{text}"
    );
    assert!(text.contains("1 passed, 2 failed"), "then the table:\n{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// 10. -q.

#[test]
fn quiet_prints_only_the_verdict() {
    let o = hwsim(&["run", FIFO_TB, "-q"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(lines[0].starts_with("verdict: PASS (6/6 checks) at cycle "), "{out}");

    let o = hwsim(&["run", FIFO_TB, "--quiet", "--stats"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("stats: "), "{out}");
    assert!(lines[0].contains("cycles/s") && lines[0].contains("activations"));
    assert!(lines[1].starts_with("verdict: PASS"), "{out}");

    let dir = temp_dir("quiet");
    let tb = write(&dir, "fails.yaml", &fifo_tb("fails", 13));
    let o = hwsim(&[tb.as_os_str(), "-q".as_ref()]);
    assert_code(&o, 1);
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("verdict: FAIL (5/6 checks) at cycle "), "{out}");
}

#[test]
fn stats_without_quiet() {
    let o = hwsim(&["run", FIFO_TB, "--stats"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("stats: ")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("counters:")), "{out}");
    assert!(out.lines().last().is_some_and(|l| l.starts_with("verdict: PASS")));
}

/// The number before `word` in a `--stats` line.
fn number_before(line: &str, word: &str) -> u64 {
    let before = line.split(word).next().unwrap_or("");
    before
        .rsplit([' ', ','])
        .next()
        .unwrap_or("")
        .parse()
        .unwrap_or_else(|_| panic!("{line}"))
}

/// The chip's receive-rate monitor integrates the RX caps' ramps only when it runs; a probe of
/// its counter mid-burst reads what a monitor running every cycle would have (`settle`), with
/// and without event skip: 88 500 B by cycle 500 of the 8-to-1 incast, 400 000 B at most in a
/// window of 1 µs (8 × 50 B/ns).
#[test]
fn a_probed_rate_monitor_counts_every_cycle_before_the_probe() {
    let dir = temp_dir("probe_monitor");
    let tb = "tb/acceptance/a7_rx_cap_incast.yaml";
    let mut rows = Vec::new();
    for (name, extra) in [("skip.csv", None), ("no_skip.csv", Some("--no-skip"))] {
        let csv = dir.join(name);
        let mut args = vec![tb, "-q", "--probe", csv.to_str().unwrap()];
        args.extend(extra);
        let o = hwsim(&args);
        assert_code(&o, 0);
        rows.push(std::fs::read_to_string(&csv).unwrap());
    }
    assert_eq!(rows[0], rows[1], "the probe differs with --no-skip");
    let row = rows[0].lines().find(|l| l.starts_with("500,")).expect("a row at 500");
    assert!(row.ends_with(",88500"), "{row}");
    // The cumulative count never goes back from one probe to the next.
    let totals: Vec<u64> = rows[0]
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(totals.windows(2).all(|w| w[0] <= w[1]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stats_break_activations_down_per_kind_and_process() {
    let o = hwsim(&["run", "tb/go_back_n.yaml", "--stats", "--no-skip", "--until", "200"]);
    let out = stdout(&o);
    let stats = out.lines().find(|l| l.starts_with("stats: ")).expect("a stats line");
    let runs = number_before(stats, " process runs");
    let activations = number_before(stats, " activations");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains(" runs ("))
        .collect();
    // Every kind's rows add up to the run's process runs.
    assert_eq!(
        rows.iter().map(|l| number_before(l, " runs (")).sum::<u64>(),
        runs,
        "{out}"
    );
    // Without skip, each process of each instance once per cycle: 16 LGs' MAC credit counters,
    // their second process on its own row.
    assert!(
        rows.iter().any(
            |l| l.starts_with("  mac_credit (process 1): 3200 runs (16.00 per executed cycle) over 16 instance(s)")
        ),
        "{out}"
    );
    // Scheduling entries: same-cycle clusters (each LG's TX core, arbiter and MAC credit
    // counter; ...) run as one, so fewer entries than the 156 blocks run per cycle, and fewer
    // than the processes.
    assert!(
        activations <= 156 * 200,
        "{activations} activations in 200 cycles: {out}"
    );
    assert!(runs > activations, "{out}");
}

#[test]
fn bad_fault_psn_out_of_range() {
    assert_bad(
        "fault_psn_range.yaml",
        "8:7",
        &["system.faults[0]", "PSN 5000 out of range 0..=4095"],
    );
}

#[test]
fn bad_fault_on_a_missing_edge() {
    assert_bad(
        "fault_no_edge.yaml",
        "8:20",
        &["fault on link [chip0, chip2]", "no such edge"],
    );
}

#[test]
fn bad_leaf_spine_too_many_ports() {
    assert_bad(
        "leaf_spine_ports.yaml",
        "4:43",
        &["leaf_spine: a leaf would have 64 chips + 2 spines > 64 ports"],
    );
}

#[test]
fn bad_spines_outside_leaf_spine() {
    assert_bad(
        "spines_without_leaf_spine.yaml",
        "4:36",
        &["leaves and spines go with the `leaf_spine` topology"],
    );
}

#[test]
fn bad_leaf_spine_without_spines_points_at_the_topology() {
    // Found by tests/fuzz.rs: a field left out had no place to point at.
    assert_bad(
        "leaf_spine_no_spines.yaml",
        "4:3",
        &["leaf_spine: spines 0 out of range 1..=64", "`spines` is required"],
    );
}

// ---------------------------------------------------------------------------------------------
// Hostile input (issue 15): outputs never destroy inputs, no panic on stdout, Ctrl-C.

/// A temp dir holding the fifo testbench plus an include, so outputs can be aimed at both.
fn tb_with_include(test: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = temp_dir(test);
    let inc = write(&dir, "presets.yaml", "defaults:\n  fifo: {depth: 4}\n");
    let tb = write(
        &dir,
        "tb.yaml",
        &fifo_tb("outputs", 12).replace("until: 200\n", "until: 200\ninclude: [presets.yaml]\n"),
    );
    (dir, tb, inc)
}

#[test]
fn outputs_never_overwrite_an_input() {
    let (dir, tb, inc) = tb_with_include("overwrite");
    let before = std::fs::read(&tb).unwrap();
    let inc_before = std::fs::read(&inc).unwrap();
    let (tbs, incs) = (tb.to_str().unwrap(), inc.to_str().unwrap());
    for args in [
        vec!["run", tbs, "--vcd", tbs],
        vec!["run", tbs, "--json", tbs],
        vec!["run", tbs, "--json", incs],
        vec!["netlist", tbs, "--dot", tbs],
    ] {
        let o = hwsim(&args);
        assert_bad_output(&o, "", &["refusing to overwrite", args[3], "is the input"]);
    }
    // The same file reached through another spelling is still the same file.
    let other = dir.join(".").join("tb.yaml");
    let o = hwsim(&[Path::new("run"), &tb, Path::new("--vcd"), &other]);
    assert_bad_output(&o, "", &["refusing to overwrite"]);
    assert_eq!(std::fs::read(&tb).unwrap(), before, "testbench untouched");
    assert_eq!(std::fs::read(&inc).unwrap(), inc_before, "include untouched");
}

#[test]
fn two_outputs_on_one_path_refused() {
    let (dir, tb, _) = tb_with_include("same_output");
    let x = dir.join("x");
    let x2 = dir.join("./x");
    let o = hwsim(&[Path::new("run"), &tb, Path::new("--vcd"), &x, Path::new("--json"), &x2]);
    assert_bad_output(&o, "", &["--vcd", "--json", "same file"]);
    assert!(!x.exists(), "nothing written");
}

#[test]
fn outputs_appear_whole_under_their_final_name() {
    let (dir, tb, _) = tb_with_include("staged");
    let (vcd, json) = (dir.join("w.vcd"), dir.join("r.json"));
    let o = hwsim(&[
        Path::new("run"),
        &tb,
        Path::new("--vcd"),
        &vcd,
        Path::new("--json"),
        &json,
    ]);
    assert_code(&o, 0);
    assert!(std::fs::read_to_string(&vcd).unwrap().contains("$enddefinitions"));
    assert_eq!(read_json(&json)["interrupted"], Value::Bool(false));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["presets.yaml", "r.json", "tb.yaml", "w.gtkw", "w.vcd"],
        "no temporary file left (the GTKWave save file is written beside the VCD)"
    );
}

#[test]
fn vcd_write_error_is_bad_output_not_a_failed_check() {
    let o = hwsim(&["run", FIFO_TB, "--vcd", "/dev/full"]);
    assert_bad_output(&o, "/dev/full: cannot write: ", &["No space left on device"]);
}

/// Runs `args` with stdout on `out`.
fn hwsim_to(args: &[&str], out: std::process::Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(out)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("hwsim runs")
}

#[test]
fn broken_pipe_ends_quietly() {
    // A pipe whose reader is already gone: every write gets EPIPE, as after `| head -1`.
    for args in [vec!["list"], vec!["regress", "tb/modules"], vec!["run", FIFO_TB]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = hwsim_to(&args, writer.into());
        assert_code(&o, 0);
        assert_eq!(stderr(&o), "", "{args:?}: quiet");
    }
}

#[test]
fn stdout_write_error_is_exit_2() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = hwsim_to(&["list"], full.into());
    assert_bad_output(&o, "stdout: cannot write: ", &["No space left on device"]);
}

#[test]
fn trace_options_that_would_be_ignored_are_refused() {
    let o = hwsim(&["run", FIFO_TB, "--trace", "fifo.*"]);
    assert_bad_output(&o, "", &["--vcd"]);
    let dir = temp_dir("trace_opts");
    let vcd = dir.join("w.vcd");
    let v = vcd.to_str().unwrap();
    let o = hwsim(&["run", FIFO_TB, "--vcd", v, "--trace", "nothing.here*"]);
    assert_bad_output(&o, "--trace: ", &["`nothing.here*` matches no net"]);
    let o = hwsim(&["run", FIFO_TB, "--vcd", v, "--trace-from", "20", "--trace-to", "10"]);
    assert_bad_output(&o, "", &["--trace-from 20", "--trace-to 10"]);
    assert!(!vcd.exists());
}

#[test]
fn a_trace_glob_naming_a_field_as_gtkwave_shows_it_traces_its_net() {
    // GTKWave shows a stream's fields under the net (`chip0.lg7.tx.frame.psn`); that name
    // selects the net, and only it.
    let dir = temp_dir("trace_field");
    let vcd = dir.join("w.vcd");
    let v = vcd.to_str().unwrap();
    let o = hwsim(&[
        "tb/go_back_n.yaml",
        "--vcd",
        v,
        "--trace",
        "chip0.lg7.tx.frame.psn",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.contains("$scope module frame $end"), "the frame net's scope");
    assert!(text.contains(" psn [11:0] $end"), "its psn field at 12 bits");
    assert!(!text.contains("module rx $end"), "nothing else traced");
}

#[test]
fn a_field_glob_selects_the_nets_with_that_field_and_a_typo_selects_nothing() {
    // `*.psn` once selected every net (the glob `*` left after dropping the field), and a typo
    // below a scope (`chip0.nosuch.nosuch2`) all of `chip0` (issue 53).
    let dir = temp_dir("trace_field_glob");
    let vcd = dir.join("w.vcd");
    let v = vcd.to_str().unwrap();
    let o = hwsim(&["tb/go_back_n.yaml", "--vcd", v, "--trace", "*.psn", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.contains(" psn [11:0] $end"), "the frames' PSNs");
    // Only nets with a `psn` field: no plain signals such as the MACs' `busy`.
    assert!(!text.contains(" busy $end"), "a net without a psn field was traced");
    let o = hwsim(&["tb/go_back_n.yaml", "--vcd", v, "--trace", "chip0.nosuch.nosuch2", "-q"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("trace glob `chip0.nosuch.nosuch2` matches no net"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sigint_stops_the_run_with_a_valid_vcd_and_report() {
    let dir = temp_dir("sigint");
    let (vcd, json) = (dir.join("i.vcd"), dir.join("i.json"));
    // Ticking every cycle for 10^11 cycles: only an interrupt ends it.
    let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args([
            "run",
            "tb/modules/timer_idle.yaml",
            "--no-skip",
            "--until",
            "100000000000",
            "--vcd",
        ])
        .arg(&vcd)
        .arg("--json")
        .arg(&json)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let start = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(start.elapsed().as_secs() < 10, "stops promptly");
    assert_code(&o, 130);
    let out = stdout(&o);
    let at: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("interrupted at cycle "))
        .unwrap_or_else(|| panic!("no `interrupted at cycle` line:\n{out}"))
        .parse()
        .unwrap();
    assert!(at > 0 && at < 100_000_000_000);
    let report = read_json(&json);
    assert_eq!(report["interrupted"], Value::Bool(true));
    assert_eq!(as_u64(&report["cycles"], "cycles"), at);
    assert_eq!(as_u64(&report["counters"]["t.fires"], "t.fires"), at / 10_000_000);
    // The VCD is whole: its last timestamp is the cycle the run stopped at.
    let text = std::fs::read_to_string(&vcd).unwrap();
    let last = text.lines().rev().find(|l| l.starts_with('#')).unwrap();
    assert_eq!(last, format!("#{at}"));
}

/// A testbench that only an interrupt ends under `--no-skip`: one timer, 10^11 cycles.
const SLOW_TB: &str = "\
name: slow
seed: 1
until: 100000000000
instances:
  t: {kind: timer, params: {period: 10000000}}
expect:
  - {counter: t.fires, min: 1}
";

/// The child's output if it exits within `secs` seconds; else it is killed and `None`.
fn wait_at_most(mut child: std::process::Child, secs: u64) -> Option<Output> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(child.wait_with_output().unwrap())
}

#[test]
fn sigint_stops_a_regression_with_the_verdicts_so_far() {
    for sig in ["-INT", "-TERM"] {
        let dir = temp_dir(&format!("regress_sigint{sig}"));
        write(&dir, "a_fast.yaml", &fifo_tb("a_fast", 12));
        write(&dir, "b_slow.yaml", SLOW_TB);
        write(&dir, "c_slow.yaml", SLOW_TB);
        let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
            .args(["regress", "--no-skip", "--jobs", "1"])
            .arg(&dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let kill = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let o = wait_at_most(child, 10).unwrap_or_else(|| panic!("{sig}: still running 10 s after the signal"));
        assert_code(&o, 130);
        let out = stdout(&o);
        let row = |name: &str| out.lines().find(|l| l.contains(name)).map(str::to_string);
        let fast = row("a_fast.yaml").unwrap_or_else(|| panic!("{sig}: the finished testbench is listed:\n{out}"));
        assert!(fast.contains("PASS"), "{sig}: {fast}");
        let slow = row("b_slow.yaml").unwrap_or_else(|| panic!("{sig}: the running testbench is listed:\n{out}"));
        assert!(
            slow.contains("INTR") && slow.contains("interrupted at cycle "),
            "{sig}: {slow}"
        );
        assert!(row("c_slow.yaml").is_none(), "{sig}: the third never started:\n{out}");
        assert_eq!(
            out.lines().last(),
            Some("interrupted: 1 of 3 testbenches finished, 1 cut short, 1 not run"),
            "{sig}:\n{out}"
        );
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

#[test]
fn regress_does_not_follow_symlinks_out_of_the_tree_or_twice() {
    let dir = temp_dir("regress_links");
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    write(&sub, "a.yaml", &fifo_tb("a", 12));
    std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
    std::os::unix::fs::symlink(".", sub.join("self")).unwrap();
    let start = std::time::Instant::now();
    let o = hwsim(&[Path::new("regress"), sub.as_path()]);
    assert!(start.elapsed().as_secs() < 20, "no endless walk");
    assert_code(&o, 0);
    assert!(stdout(&o).contains("1 passed, 0 failed"), "{}", stdout(&o));
}

/// A system testbench in `dir` (absolute include) with `system_lines` under `system:`.
fn system_tb(dir: &Path, name: &str, system_lines: &[&str]) -> PathBuf {
    let inc = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/sg2262.yaml");
    let mut text = format!("name: {name}\ninclude: [{}]\nuntil: 1000000\nsystem:\n", inc.display());
    for l in system_lines {
        text.push_str("  ");
        text.push_str(l);
        text.push('\n');
    }
    write(dir, &format!("{name}.yaml"), &text)
}

const P2P: &str = "topology: {kind: p2p, chips: 2}";
const ONE_FLOW: &str = "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64}]";

/// Each silently accepted (or aborting, or hanging) system input of issue 15 is now refused with
/// exit 2 at its line and column.
#[test]
fn hostile_system_inputs_are_refused_at_their_place() {
    let dir = temp_dir("hostile_system");
    let cases: &[(&[&str], &str, &[&str])] = &[
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, start: 18446744073709551615}]",
            ],
            "6:58",
            &["at or after the end of the run"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, transactions: 0}]",
            ],
            "6:58",
            &["must each be ≥ 1"],
        ),
        (
            &[P2P, "traffic: [{pattern: flow, src: [0], dst: 1}]"],
            "6:13",
            &["must each be ≥ 1", "`op: zero_byte` for zero-byte packets"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, op: zero_byte, bytes: 64}]",
            ],
            "6:62",
            &["`op: zero_byte` sends seed 000's zero-byte packet (no payload): leave `bytes` out"],
        ),
        (
            // A misspelt op is named as such (it was reported as a missing `bytes`).
            &[P2P, "traffic: [{pattern: flow, src: [0], dst: 1, op: zero-byte}]"],
            "6:47",
            &["unknown op `zero-byte` (write, read, mixed, zero_byte)"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, op: zero_byte, read_ratio: 0.5}]",
            ],
            "6:62",
            &["read_ratio applies to `op: mixed` only"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, transactions: 100000000}]",
            ],
            "6:3",
            &["GiB budget (--max-memory)"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 9223372036854775808}]",
            ],
            "6:3",
            &["GiB budget"],
        ),
        (
            &["link: {base_latency: 18446744073709551615}", P2P, ONE_FLOW],
            "5:10",
            &["base_latency", "must be in 0..=1000000000"],
        ),
        (
            &["topology: {kind: torus, chips: 4}", ONE_FLOW],
            "5:20",
            &["torus: dims []"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, engines: 65535}]",
            ],
            "6:58",
            &["cdma 0 + engines 65535 goes past the last CDMA id 255"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, cdma: 255, engines: 2}]",
            ],
            "6:69",
            &["cdma 255 + engines 2 goes past the last CDMA id 255"],
        ),
        (
            &[P2P, "traffic: [{pattern: incast, src: [0, 5], dst: 1, bytes: 64}]"],
            "6:31",
            &["src chip 5 out of range 0..2"],
        ),
        (
            &[
                P2P,
                "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, bandwidth: 1e-300}]",
            ],
            "6:58",
            &["bandwidth 1e-300 B/ns out of range"],
        ),
        (
            &["topology: {kind: custom, chips: 4}", ONE_FLOW],
            "5:20",
            &["custom", "links"],
        ),
        (
            &[
                P2P,
                ONE_FLOW,
                "faults: [{kind: flap, link: [chip0, chip1], from: 100, to: 10}]",
            ],
            "7:47",
            &["window from 100 to 10 is empty"],
        ),
        (
            &[
                P2P,
                ONE_FLOW,
                "faults: [{kind: drop, link: [chip0, chip1], lg: 8, psn: 1}]",
            ],
            "7:47",
            &["lg 8 out of range 0..8"],
        ),
        (
            &[
                P2P,
                ONE_FLOW,
                "faults: [{kind: drop, link: [chip0, chip1], psn: 1, times: 0}]",
            ],
            "7:55",
            &["times 0"],
        ),
    ];
    for (i, (lines, pos, parts)) in cases.iter().enumerate() {
        let tb = system_tb(&dir, &format!("case{i}"), lines);
        let start = std::time::Instant::now();
        let o = hwsim(&[Path::new("run"), &tb, Path::new("--until"), Path::new("100000")]);
        assert!(start.elapsed().as_secs() < 10, "case {i}: no hang");
        assert_bad_output(&o, &format!("{}:{pos}: ", tb.display()), parts);
    }
    // A smaller budget refuses what the default accepts.
    let tb = system_tb(
        &dir,
        "budget",
        &[
            P2P,
            "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, transactions: 1000}]",
        ],
    );
    assert_code(&hwsim(&[Path::new("check"), &tb]), 0);
    for cmd in [&["run", "-q"][..], &["check"], &["netlist", "--dot", "/dev/null"]] {
        let mut args: Vec<&std::ffi::OsStr> = vec![cmd[0].as_ref(), tb.as_os_str()];
        args.extend(cmd[1..].iter().map(std::ffi::OsStr::new));
        args.extend(["--max-memory", "0"].map(std::ffi::OsStr::new));
        let o = hwsim(&args);
        assert_bad_output(&o, "", &["over the 0.00 GiB budget"]);
    }
}

#[test]
fn unknown_field_in_an_included_config_is_reported_in_that_file() {
    let dir = temp_dir("include_field");
    let preset = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/sg2262.yaml")).unwrap();
    let bad = preset.replacen(
        "      initial_credits:",
        "      bogus_field: 1\n      initial_credits:",
        1,
    );
    let line = bad.lines().position(|l| l.contains("bogus_field")).unwrap() + 1;
    let cfg = write(&dir, "preset.yaml", &bad);
    let tb = write(
        &dir,
        "tb.yaml",
        &format!("include: [preset.yaml]\nsystem:\n  {P2P}\n  {ONE_FLOW}\n"),
    );
    let o = hwsim(&[Path::new("run"), &tb]);
    assert_bad_output(
        &o,
        &format!("{}:{line}:7: ", cfg.display()),
        &["unknown field `bogus_field`"],
    );
}

#[test]
fn hostile_module_inputs_are_refused_at_their_place() {
    let dir = temp_dir("hostile_module");
    let base = fifo_tb("m", 12);
    let cases: Vec<(String, &str, &[&str])> = vec![
        (
            base.replace(
                "  snk:  {kind: consumer, params: {interval: 3}}\n",
                "  snk:  {kind: consumer, params: {interval: 3}}\n  snk:  {kind: consumer}\n",
            ),
            "8:3",
            &["duplicate entry with key \"snk\""],
        ),
        (base.replace("seed: 1\n", "seed: 1\nseed: 2\n"), "3:1", &["duplicate"]),
        (
            base.replace(
                "{from: src.out, to: fifo.in}",
                "{from: src.out, to: fifo.in, capacity: 4294967295}",
            ),
            "9:34",
            &["capacity 4294967295 out of range"],
        ),
        (
            base.replace(
                "  src:  {kind: producer",
                "  mon: {kind: rate_monitor, params: {inputs: 100000000}}\n  src:  {kind: producer",
            ),
            "5:3",
            &["inputs = 100000000: must be in 0..=4096"],
        ),
        (
            base.replace(
                "  fifo: {kind: fifo, params: {depth: 4}}\n",
                "  fifo: {kind: fifo, params: {depth: 4}}\n  stage: {kind: add1, count: 4294967295}\n",
            ),
            "7:3",
            &["count 4294967295 out of range"],
        ),
        (
            base.replace("until: 200\n", "until: 200\ndefaults:\n  fifoo: {depth: 2}\n"),
            "5:3",
            &["unknown block kind `fifoo`"],
        ),
        (
            base.replace(
                "{counter: snk.received, equals: 12}",
                "{counter: snk.received, min: 13, max: 12}",
            ),
            "12:29",
            &["min 13 > max 12"],
        ),
        (
            format!("{}x: {}{}\n", base, "[".repeat(100_000), "]".repeat(100_000)),
            "18:104",
            &["nested deeper than 100"],
        ),
    ];
    for (i, (text, pos, parts)) in cases.iter().enumerate() {
        let tb = write(&dir, &format!("case{i}.yaml"), text);
        let start = std::time::Instant::now();
        let o = hwsim(&[Path::new("run"), &tb]);
        assert!(start.elapsed().as_secs() < 10, "case {i}: no hang");
        assert_bad_output(&o, &format!("{}:{pos}: ", tb.display()), parts);
    }
    // A field the value's type does not have: bad input (as in a stimulus), not a failed check.
    let rh = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tb/modules/pipe_rh.yaml")).unwrap();
    let tb = write(
        &dir,
        "expect_field.yaml",
        &rh.replace("value: {psn: 4095}", "value: {psnn: 4095}"),
    );
    let o = hwsim(&[Path::new("run"), &tb]);
    assert_bad_output(
        &o,
        &format!("{}:18:36: ", tb.display()),
        &["expect on `rhp.out`", "unknown field `psnn`"],
    );
    // A byte-order mark is not a second document.
    let tb = write(&dir, "bom.yaml", &format!("\u{feff}{base}"));
    assert_code(&hwsim(&[Path::new("run"), &tb, Path::new("-q")]), 0);
}

#[test]
fn netlist_without_dot_names_the_missing_argument() {
    let o = hwsim(&["netlist", FIFO_TB]);
    assert_bad_output(&o, "", &["--dot"]);
}

/// An error in one flow (or fault) of a list points at that item's own field, whatever the
/// list's style: flow style on one line, flow style over several lines, block style; not at the
/// first item's field of the same name, the list's start or the `system:` line.
#[test]
fn an_error_in_one_item_of_a_list_points_at_that_item() {
    let dir = temp_dir("item_place");
    let two = |second: &str| format!("traffic: [{{pattern: flow, src: [0], dst: 1, bytes: 64}}, {second}]");
    let cases: Vec<(Vec<String>, &str, &str)> = vec![
        // The reproducer of the brief: the second flow's dst.
        (
            vec![P2P.into(), two("{pattern: flow, src: [1], dst: 99, bytes: 64}")],
            "6:85",
            "dst chip 99 out of range",
        ),
        (
            vec![P2P.into(), two("{pattern: flow, src: [1], dst: 0, bytes: 0}")],
            "6:93",
            "must each be ≥ 1",
        ),
        // A flow-style list over several lines, a comma and a `#` inside a quoted string.
        (
            vec![
                P2P.into(),
                "traffic: [".into(),
                "    {pattern: flow, src: [0], dst: 1, bytes: 64},  # first, dst: 1".into(),
                "    {pattern: \"flow\", src: [1], dst: 0, bytes: 64, start: 5000000}".into(),
                "  ]".into(),
            ],
            "8:54",
            "at or after the end of the run",
        ),
        // Block style, the bad flow written as a mapping over lines.
        (
            vec![
                P2P.into(),
                "traffic:".into(),
                "    - {pattern: flow, src: [0], dst: 1, bytes: 64}".into(),
                "    - pattern: wavy".into(),
                "      src: [1]".into(),
                "      dst: 0".into(),
                "      bytes: 64".into(),
            ],
            "8:9",
            "unknown traffic pattern `wavy`",
        ),
        // The second fault of a flow-style list.
        (
            vec![
                P2P.into(),
                ONE_FLOW.into(),
                "faults: [{kind: drop, link: [chip0, chip1], psn: 1, times: 2}, {kind: drop, link: [chip0, chip1], psn: 2, times: 0}]"
                    .into(),
            ],
            "7:109",
            "times 0",
        ),
    ];
    for (i, (lines, pos, part)) in cases.iter().enumerate() {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let tb = system_tb(&dir, &format!("case{i}"), &lines);
        let o = hwsim(&[Path::new("run"), &tb]);
        assert_bad_output(&o, &format!("{}:{pos}: ", tb.display()), &[part]);
    }
    // Two expects on one counter: the second's bad bound, or its bad reduce.
    let expects = [
        ("min: 1}", "min: 5, max: 1}", "min 5 > max 1"),
        ("reduce: sum, min: 1}", "reduce: avg, min: 1}", "reduce: `avg`"),
    ];
    for (i, (first, second, part)) in expects.iter().enumerate() {
        let extra = format!("expect:\n  - {{counter: snk.received, {first}\n  - {{counter: snk.received, {second}\n");
        let tb = write(
            &dir,
            &format!("expects{i}.yaml"),
            &fifo_tb("expects", 12).replace("expect:\n", &extra),
        );
        let o = hwsim(&[Path::new("check"), &tb]);
        assert_bad_output(&o, &format!("{}:13:29: ", tb.display()), &[part]);
    }
}

/// An error in a value an include sets is reported in that include, at its line: the last
/// include that sets a parameter is the one in force; a topology, traffic or faults in an
/// include's `system:` (which the run would ignore) are refused there.
#[test]
fn an_error_from_an_include_points_at_the_include() {
    let dir = temp_dir("include_place");
    let sg = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/sg2262.yaml");
    let cases: &[(&str, &str, &str)] = &[
        (
            "system:\n  link:\n    base_latency: 18446744073709551615\n",
            "3:5",
            "base_latency",
        ),
        (
            "system:\n  chip:\n    num_link_groups: 9\n",
            "3:5",
            "num_link_groups 9 out of range 1..=8",
        ),
        (
            "system:\n  chip:\n    paxi: {bogus: 1}\n",
            "3:12",
            "unknown field `bogus`",
        ),
        (
            "description: x\nsystem:\n  traffic:\n    - {pattern: flow, src: [1], dst: 99, bytes: 64}\n",
            "3:3",
            "`system.traffic` in an include is not used",
        ),
    ];
    for (i, (inc, pos, part)) in cases.iter().enumerate() {
        let inc_path = write(&dir, &format!("inc{i}.yaml"), inc);
        let tb = write(
            &dir,
            &format!("tb{i}.yaml"),
            &format!(
                "name: tb{i}\ninclude: [{}, {}]\nsystem:\n  {P2P}\n  {ONE_FLOW}\n",
                sg.display(),
                inc_path.display()
            ),
        );
        let o = hwsim(&[Path::new("check"), &tb]);
        assert_bad_output(&o, &format!("{}:{pos}: ", inc_path.display()), &[part]);
    }
}

/// A second Ctrl-C exits at once, even where the first is not noticed yet: during the
/// elaboration of a 32×32 torus (seconds), before the run loop that checks the flag. Without
/// the second signal the run would go on to elaborate, then stop at cycle 0 with a report.
#[test]
fn a_second_sigint_exits_at_once() {
    let dir = temp_dir("sigint_twice");
    let tb = system_tb(
        &dir,
        "big",
        &[
            "topology: {kind: torus, chips: 1024, dims: [32, 32]}",
            "traffic: [{pattern: flow, src: [0], dst: 1023, bytes: 64}]",
        ],
    );
    let json = dir.join("big.json");
    let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args([Path::new("run"), &tb, Path::new("--json"), &json])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id().to_string();
    // Loading takes milliseconds; the handler is in place before elaboration starts.
    std::thread::sleep(std::time::Duration::from_millis(600));
    for _ in 0..2 {
        assert!(Command::new("kill").args(["-INT", &id]).status().unwrap().success());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let start = std::time::Instant::now();
    let o = wait_at_most(child, 3).expect("still running 3 s after the second SIGINT");
    assert!(start.elapsed().as_millis() < 1500, "exits at once");
    assert_code(&o, 130);
    assert!(!stdout(&o).contains("interrupted at cycle"), "{}", stdout(&o));
    assert!(!json.exists(), "no report: it did not go on to run");
}

/// A second Ctrl-C 50 ms after the first, while the waves are being written: the process ends
/// at once with 130 and leaves no temporary file (issue 53: a 25 MB `.….hwsim-PID.tmp` VCD
/// stayed behind) and no half output under its final name.
#[test]
fn a_second_sigint_while_writing_leaves_no_temporary_file() {
    let dir = temp_dir("sigint_twice_writing");
    let vcd = dir.join("w4.vcd");
    let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args([Path::new("tb/perf/w4_system_a2a.yaml"), Path::new("--vcd"), &vcd])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id().to_string();
    // Until the temporary VCD exists and grows (the run is under way).
    let started = std::time::Instant::now();
    let temporaries = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".tmp"))
            .collect()
    };
    while !temporaries()
        .iter()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 1 << 20))
    {
        assert!(
            started.elapsed().as_secs() < 60,
            "no temporary VCD of 1 MiB within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for _ in 0..2 {
        // The second may find the process gone (the first ended the run within 50 ms).
        let _ = Command::new("kill").args(["-INT", &id]).status();
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = wait_at_most(child, 5).expect("still running 5 s after the second SIGINT");
    let code = o.status.code();
    // The first signal may have ended the run (a complete VCD, then the save file) before the
    // second came: whatever stands under a final name is whole; nothing else is left.
    if vcd.exists() {
        let d = hwsim(&["diff", vcd.to_str().unwrap(), vcd.to_str().unwrap()]);
        assert_code(&d, 0);
    }
    assert_eq!(
        temporaries(),
        Vec::<std::path::PathBuf>::new(),
        "exit {code:?}: no temporary file left"
    );
}

// ---------------------------------------------------------------------------------------------
// Extreme values where a user value meets time, bytes or memory (issue 15; every block's
// parameters at extremes: tests/extremes.rs).

/// `hwsim run tb extra…` under a 4 GiB address-space limit, if it ends within `secs` seconds: a
/// regression that sizes an allocation by a parameter then aborts at once instead of filling the
/// machine's memory, and one that hangs is killed.
fn run_limited(tb: &Path, extra: &[&str], secs: u64) -> Option<Output> {
    let child = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 4194304; exec "$0" run "$@""#)
        .arg(env!("CARGO_BIN_EXE_hwsim"))
        .arg(tb)
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_BACKTRACE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("hwsim runs");
    wait_at_most(child, secs)
}

/// A p2p system testbench with one flow of `flow_extra` fields and `until`.
fn p2p_tb(dir: &Path, name: &str, until: &str, flow_extra: &str) -> PathBuf {
    let inc = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/sg2262.yaml");
    write(
        dir,
        &format!("{name}.yaml"),
        &format!(
            "name: {name}\ninclude: [{}]\nuntil: {until}\nsystem:\n  topology: {{kind: p2p, chips: 2}}\n  traffic: [{{pattern: flow, src: [0], dst: 1, bytes: 64{flow_extra}}}]\n",
            inc.display()
        ),
    )
}

/// The time axis ends at 2^62 cycles: `until` past it is refused (a start or cycle plus a
/// latency could wrap past 2^64 - 1 and finish "sooner"), in the file at its line and on the
/// command line naming `--until`.
#[test]
fn until_past_2_62_is_refused() {
    let dir = temp_dir("extreme_until");
    for until in ["18446744073709551615", "9223372036854775808", "4611686018427387905"] {
        let tb = p2p_tb(&dir, "u", until, "");
        // `config` refuses it as `run` and `check` do (it printed a configuration no run takes).
        for cmd in ["run", "check", "config"] {
            let o = hwsim(&[Path::new(cmd), &tb]);
            assert_bad_output(
                &o,
                &format!("{}:3:1: ", tb.display()),
                &[&format!("until {until} out of range 0..=4611686018427387904")],
            );
        }
        let tb = p2p_tb(&dir, "v", "1000000", "");
        let o = hwsim(&[Path::new("run"), &tb, Path::new("--until"), Path::new(until)]);
        assert_bad_output(&o, "--until: ", &["out of range"]);
    }
    // The last cycle allowed runs.
    let tb = p2p_tb(&dir, "w", "4611686018427387904", "");
    let o = run_limited(&tb, &["-q"], 60).expect("ends");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
}

/// A flow that starts near the end of time is simulated there, at once: the run crosses the
/// idle stretch in one step instead of 2^48 slices of 16 384 cycles (which took days), and its
/// times do not wrap (first byte after the start, latency as at cycle 0).
#[test]
fn a_flow_starting_near_the_end_of_time_runs_at_once() {
    let dir = temp_dir("extreme_late_start");
    let start: u64 = (1 << 62) - 100_000;
    let json = dir.join("late.json");
    let tb = p2p_tb(&dir, "late", "4611686018427387904", &format!(", start: {start}"));
    let o = run_limited(&tb, &["-q", "--json", json.to_str().unwrap()], 60).expect("a late start ends in seconds");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let r = read_json(&json);
    let flow = &r["flows"][0];
    assert_eq!(flow["bytes"], 64);
    let first = flow["first_byte"].as_u64().unwrap();
    let last = flow["last_byte"].as_u64().unwrap();
    assert!(first > start && last >= first && last < start + 10_000, "{flow}");
    // The same flow at cycle 0 has the same latency.
    let json0 = dir.join("early.json");
    let tb0 = p2p_tb(&dir, "early", "1000000", "");
    let o = run_limited(&tb0, &["-q", "--json", json0.to_str().unwrap()], 60).expect("ends");
    assert_eq!(o.status.code(), Some(0));
    let r0 = read_json(&json0);
    assert_eq!(flow["latency_max"], r0["flows"][0]["latency_max"]);
}

/// Module-form parameters where a user value meets bytes, rates or memory: each refused with
/// exit 2 naming the field at the instance's (or the stimulus's) line.
#[test]
fn module_extremes_are_refused_at_their_place() {
    let dir = temp_dir("extreme_module");
    let max = u64::MAX;
    let cases: Vec<(String, &str, Vec<String>)> = vec![
        // Two transactions of 2^64 - 1 bytes: the `bytes` counter (and the scoreboard that sums
        // it) would wrap to a small number.
        (
            format!(
                "instances:\n  cdma: {{kind: cdma, params: {{txns: [{{at: 1, dst: 1, bytes: {max}}}, {{at: 2, dst: 1, bytes: {max}}}]}}}}\n"
            ),
            "4:3",
            vec![format!("bytes = {max}: the transactions' bytes add up past 2^64 - 1")],
        ),
        // A rate below the pacing unit rounds to 0, which means unpaced.
        (
            "instances:\n  cdma: {kind: cdma, params: {txns: [{at: 1, dst: 1, bytes: 64, bandwidth: 0.0001}]}}\n".into(),
            "4:3",
            vec!["bandwidth = 0.0001: must be 0 (unpaced) or in 0.001..=1000000".into()],
        ),
        // A PAXI queues every frame of a transaction when it issues it: 2^52 frames.
        (
            format!(
                "instances:\n  paxi: {{kind: paxi, params: {{chip: 0, num_lg: 1, mps: 4096, flows: 1}}}}\nstimulus:\n  - {{at: 0, port: paxi.done0, value: {{txn: 9, frame_seq: 0, bytes: 1}}}}\n  - {{at: 0, port: paxi.txn, value: {{id: 0, dst: 1, bytes: {max}, cdma: 0}}}}\n"
            ),
            "7:52",
            vec!["PAXI (MPS 4096) segments into frames".into(), "GiB budget (--max-memory)".into()],
        ),
        // 30 billion ports declared before the parameter was looked at.
        (
            "instances:\n  r: {kind: router, params: {chip: 0, num_lg: 1, edges: 4294967295, routes: []}}\n".into(),
            "4:3",
            vec!["edges = 4294967295: must be in 0..=65536".into()],
        ),
        // An input buffer allocated for `depth` frames: 900 GB.
        (
            "instances:\n  cap: {kind: rx_cap, params: {depth: 4294967295}}\nstimulus:\n  - {at: 0, port: cap.in, value: {txn: 1}}\n".into(),
            "4:3",
            vec!["depth = 4294967295: must be in 1..=65536".into()],
        ),
        // Values first_value, first_value + 1: the second wraps to 0.
        (
            format!("instances:\n  p: {{kind: producer, params: {{count: 2, first_value: {max}}}}}\n"),
            "4:3",
            vec![format!("first_value = {max}: with count 2 the values go past 2^64 - 1")],
        ),
    ];
    for (i, (body, pos, parts)) in cases.iter().enumerate() {
        let tb = write(&dir, &format!("m{i}.yaml"), &format!("name: m{i}\nuntil: 100\n{body}"));
        let o = run_limited(&tb, &[], 60).unwrap_or_else(|| panic!("case {i}: no hang"));
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        assert_bad_output(&o, &format!("{}:{pos}: ", tb.display()), &parts);
    }
}

/// A chip's flows are numbered in 16 bits (the PAXI's flow index): the 65 536th flow from one
/// chip wrapped to flow 0 and ran, its counters mixed with flow 0's. It is refused at the engines
/// of the flow that goes past.
#[test]
fn more_than_65535_flows_from_one_chip_are_refused_at_that_flow() {
    let dir = temp_dir("extreme_flows");
    let one = "{pattern: flow, src: [0], dst: 1, bytes: 64, engines: 256}";
    let list = format!("traffic: [{}]", vec![one; 256].join(", "));
    let tb = system_tb(&dir, "flows", &[P2P, &list]);
    // The last item's `engines:` (the line is indented by two).
    let col = 2 + list.rfind("engines").unwrap() + 1;
    let o = hwsim(&[Path::new("check"), &tb]);
    assert_bad_output(
        &o,
        &format!("{}:6:{col}: ", tb.display()),
        &["chip 0 sends more than 65535 flows"],
    );
    // One entry fewer (65 280 flows) is accepted.
    let list = format!("traffic: [{}]", vec![one; 255].join(", "));
    let tb = system_tb(&dir, "fewer", &[P2P, &list]);
    assert_code(&hwsim(&[Path::new("check"), &tb]), 0);
}

/// Counter sums saturate instead of wrapping: two sources of 2^63 bytes each sum to 2^64 - 1
/// in a check (a wrapped sum was 0, and `min: 1` failed).
#[test]
fn counter_sums_saturate() {
    let dir = temp_dir("extreme_sums");
    let half = 1u64 << 63;
    let tb = write(
        &dir,
        "sums.yaml",
        &format!(
            "name: sums\nuntil: 100\ninstances:\n  c: {{kind: cdma, count: 2, params: {{txns: [{{at: 1, dst: 1, bytes: {half}}}]}}}}\nexpect:\n  - {{counter: \"c*.bytes\", min: 1}}\n  - {{counter: \"c*.bytes\", equals: 18446744073709551615}}\n"
        ),
    );
    let o = run_limited(&tb, &["-v"], 60).expect("ends");
    assert_code(&o, 0);
}

// ---------------------------------------------------------------------------------------------
// Hostile sweep inputs (issue 29): a sweep writes, and deletes, only what is its own.

/// A module testbench with no include, so it can live anywhere.
const COUNTER_TB: &str = "name: c\nuntil: 20\ninstances:\n  c: {kind: counter, params: {stop: 5}}\nexpect:\n  - {metric: end_cycle, min: 1}\n";

#[test]
fn sweep_never_overwrites_or_deletes_its_testbench() {
    let dir = temp_dir("sweep_input_named_point");
    // The testbench is called point_0.json, in the folder the sweep writes to.
    let tb = write(&dir, "point_0.json", COUNTER_TB);
    let o = hwsim(&[
        "sweep",
        tb.to_str().unwrap(),
        "--set",
        "instances.c.params.start=1,2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is the input"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&tb).unwrap(),
        COUNTER_TB,
        "the testbench is untouched"
    );
    assert!(!dir.join("plan.json").exists(), "nothing written");
}

#[test]
fn sweep_refuses_a_report_no_earlier_plan_lists_and_removes_only_its_own() {
    let dir = temp_dir("sweep_foreign_point");
    let tb = write(&dir, "c.yaml", COUNTER_TB);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let foreign = write(&out, "point_7.json", "someone else's\n");
    let args = |vals: &str| {
        vec![
            "sweep".to_string(),
            tb.display().to_string(),
            "--set".into(),
            format!("instances.c.params.start={vals}"),
            "--out".into(),
            out.display().to_string(),
            "-q".into(),
        ]
    };
    let o = hwsim(&args("1,2"));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("point_7.json: exists, and no plan.json of an earlier sweep in"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "someone else's\n");
    std::fs::remove_file(&foreign).unwrap();
    // Three points, then a rerun with one: the earlier plan's reports go, nothing else.
    assert_code(&hwsim(&args("1,2,3")), 0);
    let keep = write(&out, "notes.txt", "mine\n");
    assert_code(&hwsim(&args("4")), 0);
    assert!(out.join("point_0.json").exists());
    assert!(!out.join("point_1.json").exists() && !out.join("point_2.json").exists());
    assert!(keep.exists());
}

#[test]
fn sweep_bounds_its_threads() {
    let dir = temp_dir("sweep_jobs");
    let tb = write(&dir, "c.yaml", COUNTER_TB);
    let o = hwsim(&[
        "sweep",
        tb.to_str().unwrap(),
        "--set",
        "instances.c.params.start=1",
        "--out",
        dir.join("o").to_str().unwrap(),
        "-j",
        "4000",
    ]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("-j 4000: out of range 1..=1024"), "{}", stderr(&o));
}

#[test]
fn sweep_collect_refuses_a_plan_whose_runs_do_not_fit_its_parameters() {
    let dir = temp_dir("sweep_bad_plan");
    write(
        &dir,
        "plan.json",
        r#"{"testbench": "x.yaml", "params": ["a", "b"], "runs": [{"point": 0, "values": ["1"], "seed": 1}], "metric": null, "x": "a", "counters": []}"#,
    );
    let o = hwsim(&["sweep", "--collect", dir.to_str().unwrap()]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("not a sweep plan: run 0 has 1 value(s) for 2 parameter(s)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sweep_emit_keeps_each_job_on_one_line() {
    let dir = temp_dir("sweep_emit_newline");
    let tb = write(&dir, "c.yaml", COUNTER_TB);
    let o = hwsim(&[
        "sweep",
        tb.to_str().unwrap(),
        "--set",
        "name='a\nb'",
        "--emit",
        "parallel",
        dir.join("jobs").to_str().unwrap(),
    ]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("a value with a control character (a line break) cannot go into a job list"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("jobs").join("jobs.txt").exists());
}

#[test]
fn an_instance_name_that_is_not_a_plain_name_is_refused_at_its_line() {
    let dir = temp_dir("bad_instance_name");
    let tb = write(&dir, "t.yaml", "name: t\ninstances:\n  \"../x\": {kind: counter}\n");
    let o = hwsim(&[
        "vectors",
        tb.to_str().unwrap(),
        "--out",
        dir.join("v").to_str().unwrap(),
    ]);
    assert_code(&o, 2);
    assert!(
        stderr(&o)
            .contains("t.yaml:3:4: bad instance name `../x`: use dot-separated names of letters, digits, `_` and `-`"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("x.csv").exists());
}

// ---------------------------------------------------------------------------------------------
// Hostile outside files (issue 29): a reader refuses what is not a file, and bounds what a
// file declares before allocating it.

#[test]
fn a_wave_that_is_not_a_file_or_declares_a_huge_variable_is_refused() {
    let dir = temp_dir("hostile_waves");
    let good = dir.join("a.vcd");
    assert_code(
        &hwsim(&["tb/modules/comb_chain.yaml", "-q", "--vcd", good.to_str().unwrap()]),
        0,
    );
    let big = write(
        &dir,
        "big.vcd",
        "$timescale 1ns $end\n$scope module top $end\n$var wire 4294967295 ! big $end\n$upscope $end\n$enddefinitions $end\n#0\n",
    );
    let trunc = write(&dir, "trunc.vcd", &std::fs::read_to_string(&good).unwrap()[..120]);
    let cases = [
        (
            big.display().to_string(),
            "big.vcd:3:1: cannot read the wave: variable `big` is 4294967295 bits wide; at most 65536 are read",
        ),
        (
            "/dev/zero".to_string(),
            "/dev/zero: cannot read the wave: not a regular file (a VCD or FST file is expected)",
        ),
        (trunc.display().to_string(), "(no final line break): a truncated file?"),
    ];
    for (b, msg) in cases {
        let o = hwsim(&["diff", good.to_str().unwrap(), &b]);
        assert_code(&o, 2);
        assert!(stderr(&o).contains(msg), "{b}: {}", stderr(&o));
    }
}

/// A small VCD: a real `r`, and two bits declared under one full name `top.a`.
const TWO_NAMES_VCD: &str = "$timescale 1ns $end\n$scope module top $end\n$var real 64 ! r $end\n$var wire 1 \" a $end\n$var wire 1 # a $end\n$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\nrNaN !\n0\"\n1#\n$end\n#5\nr1.5 !\n1\"\n0#\n#9\nrnan !\n";

#[test]
fn a_truncated_or_malformed_vcd_is_refused_at_its_place() {
    // Cut mid-line (mid-command, mid-change, mid-timestamp, in the header's last line), a time
    // going back (the reader printed a WARN into the report and dropped the data), a change
    // without an id or with an undeclared one: one line, file:line:col, exit 2, nothing on stdout.
    let dir = temp_dir("vcd_truncated");
    let good = write(&dir, "good.vcd", TWO_NAMES_VCD);
    let cut = |name: &str, n: usize| write(&dir, name, &TWO_NAMES_VCD[..n]);
    let at = |needle: &str| TWO_NAMES_VCD.find(needle).unwrap();
    let cases = [
        (
            cut("cmd.vcd", at("$dumpvars") + 5),
            "cmd.vcd:9:6: cannot read the wave: the file ends mid-line at byte",
        ),
        (
            cut("change.vcd", at("r1.5") + 3),
            "change.vcd:15:4: cannot read the wave: the file ends mid-line at byte",
        ),
        (
            cut("time.vcd", at("#9") + 1),
            "time.vcd:18:2: cannot read the wave: the file ends mid-line",
        ),
        (
            cut("header.vcd", at("$enddefinitions") + 18),
            "header.vcd:7:19: cannot read the wave: the file ends mid-line",
        ),
        (
            write(&dir, "back.vcd", &TWO_NAMES_VCD.replace("#9", "#3")),
            "back.vcd:18:1: cannot read the wave: time #3 goes back (line 14 is at #5): times must not decrease",
        ),
        (
            write(&dir, "noid.vcd", &TWO_NAMES_VCD.replace("1\"\n0#", "1\n0#")),
            "noid.vcd:16:1: cannot read the wave: the value change `1` has no variable id",
        ),
        (
            write(&dir, "unknown.vcd", &TWO_NAMES_VCD.replace("r1.5 !", "r1.5 %")),
            "unknown.vcd:15:6: cannot read the wave: `%` is not the id of a declared variable",
        ),
        (
            write(&dir, "vec.vcd", &TWO_NAMES_VCD.replace("rnan !\n", "rnan\n")),
            "vec.vcd:19:1: cannot read the wave: the file ends in a value change without its variable id at byte",
        ),
        (
            write(&dir, "junk.vcd", &TWO_NAMES_VCD.replace("#5\n", "#5\n?what\n")),
            "junk.vcd:15:1: cannot read the wave: unexpected `?what` in the value changes",
        ),
    ];
    for (b, msg) in cases {
        let o = hwsim(&["diff", good.to_str().unwrap(), b.to_str().unwrap()]);
        assert_code(&o, 2);
        assert!(stdout(&o).is_empty(), "nothing in the report: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.lines().count() == 1 && err.contains(msg),
            "{}: want `{msg}`, got {err}",
            b.display()
        );
    }
    assert_code(&hwsim(&["diff", good.to_str().unwrap(), good.to_str().unwrap()]), 0);
}

#[test]
fn diff_finds_a_wave_with_a_nan_or_one_name_twice_equal_to_itself() {
    let dir = temp_dir("diff_self");
    let w = write(&dir, "w.vcd", TWO_NAMES_VCD);
    let o = hwsim(&["diff", w.to_str().unwrap(), w.to_str().unwrap()]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("same    top.r "), "{out}");
    assert!(
        out.contains("same    top.a (declaration 2) = top.a (declaration 2)"),
        "{out}"
    );
    assert!(out.contains("verdict: SAME (3 signals over 10 cycles)"), "{out}");
    // The declarations pair in order: swapping the second one's values is seen there.
    let other = write(&dir, "o.vcd", &TWO_NAMES_VCD.replace("1#\n", "0#\n"));
    let o = hwsim(&["diff", w.to_str().unwrap(), other.to_str().unwrap()]);
    assert_code(&o, 1);
    assert!(
        stdout(&o).contains("DIFFER  top.a (declaration 2) = top.a (declaration 2): first at cycle 0: A 1, B 0"),
        "{}",
        stdout(&o)
    );
    // A map cannot say which of the two it means.
    let map = write(&dir, "m.yaml", "signals:\n  - {a: top.r, b: top.a}\n");
    let o = hwsim(&[
        "diff",
        w.to_str().unwrap(),
        w.to_str().unwrap(),
        "--map",
        map.to_str().unwrap(),
    ]);
    assert_bad_output(
        &o,
        &format!("{}:2:19: ", map.display()),
        &["`top.a` names 2 variables of", "a map cannot tell them apart"],
    );
}

#[test]
fn plot_of_values_near_the_float_limits_draws_and_a_nan_is_refused() {
    // ±1e308 made the axis span infinite and the tick loop never ended.
    let dir = temp_dir("plot_huge");
    let csv = write(&dir, "big.csv", "cycle,a,b\n0,1e308,-1e308\n1,-1e308,1.7e308\n2,5,0\n");
    for out in ["big.svg", "big.png"] {
        let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
            .args(["plot", csv.to_str().unwrap(), "--out"])
            .arg(dir.join(out))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_at_most(child, 20).expect("plot ends");
        assert_code(&o, 0);
        assert!(dir.join(out).exists());
    }
    // A log x axis up to 1e308 too (the axis went to 1.5e308 × 1.5 = inf).
    let csv = write(&dir, "wide.csv", "cycle,a\n1,1\n1e308,2\n");
    let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args(["plot", csv.to_str().unwrap(), "--out"])
        .arg(dir.join("wide.svg"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert_code(&wait_at_most(child, 20).expect("plot ends"), 0);
    for (name, text, msg) in [
        (
            "nan.csv",
            "cycle,a\n0,1\n1,NaN\n",
            "nan.csv:3:3: `NaN` is not a finite number (a): it cannot be drawn",
        ),
        (
            "inf.csv",
            "cycle,a\n0,1\ninf,2\n",
            "inf.csv:3:1: `inf` is not a finite number (cycle)",
        ),
        (
            "short.csv",
            "cycle,a,b\n0,1\n",
            "short.csv:2:4: the row has no `b` (the header has 3 columns)",
        ),
    ] {
        let csv = write(&dir, name, text);
        let o = hwsim(&[
            "plot",
            csv.to_str().unwrap(),
            "--out",
            dir.join("x.svg").to_str().unwrap(),
        ]);
        assert_bad_output(&o, &dir.display().to_string(), &[msg]);
    }
    assert!(!dir.join("x.svg").exists());
}

#[test]
fn plot_reads_a_csv_with_a_bom_crlf_and_quoted_commas() {
    let dir = temp_dir("plot_csv");
    let csv = write(
        &dir,
        "s.csv",
        "\u{feff}cycle,\"q,depth\",\"say \"\"hi\"\"\"\r\n0,\"1\",2\r\n1,3,\"4\"\r\n",
    );
    let svg = dir.join("s.svg");
    let o = hwsim(&["plot", csv.to_str().unwrap(), "--out", svg.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("(2 column(s))"), "{}", stdout(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("q,depth") && text.contains("say &quot;hi&quot;"),
        "legend names the columns"
    );
    // What is not CSV is refused at its place.
    let bad = write(&dir, "open.csv", "cycle,a\n0,\"1\n");
    let o = hwsim(&["plot", bad.to_str().unwrap(), "--out", svg.to_str().unwrap()]);
    assert_bad_output(
        &o,
        &format!("{}:2:3: ", bad.display()),
        &["a quoted field that never closes (a truncated file?)"],
    );
}

#[test]
fn a_testbench_or_include_that_is_not_a_file_is_refused_and_regress_skips_one() {
    let dir = temp_dir("hostile_yaml");
    for (p, msg) in [
        (
            "/dev/zero",
            "/dev/zero: cannot read: not a regular file (a YAML file is expected)",
        ),
        (dir.to_str().unwrap(), "cannot read: a folder (a YAML file is expected)"),
    ] {
        let o = hwsim(&["run", p]);
        assert_code(&o, 2);
        assert!(stderr(&o).contains(msg), "{p}: {}", stderr(&o));
    }
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let tb = write(
        &dir,
        "inc.yaml",
        "name: t\ninclude: [sub]\ninstances:\n  c: {kind: counter}\n",
    );
    let o = hwsim(&["run", tb.to_str().unwrap()]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("inc.yaml:2:11: include `sub` is a folder, not a file"),
        "{}",
        stderr(&o)
    );
    // A FIFO named like a testbench in a regression folder is skipped, not waited on.
    let rdir = dir.join("r");
    std::fs::create_dir_all(&rdir).unwrap();
    write(&rdir, "ok.yaml", COUNTER_TB);
    let fifo = rdir.join("stray.yaml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = hwsim(&["regress", rdir.to_str().unwrap(), "-j", "1"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("1 passed, 0 failed"), "{}", stdout(&o));
    // `-j` out of range is refused before anything runs, as `sweep -j` is (it once started ten
    // million threads for this one testbench).
    for j in ["10000000", "0"] {
        let o = hwsim(&["regress", rdir.to_str().unwrap(), "-j", j]);
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains(&format!("-j {j}: out of range 1..=1024")),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn check_refuses_what_run_refuses_before_building() {
    let dir = temp_dir("check_like_run");
    let tb = system_tb(
        &dir,
        "late",
        &[
            P2P,
            "traffic: [{pattern: flow, src: [0], dst: 1, bytes: 64, start: 18446744073709551615}]",
        ],
    );
    for cmd in ["run", "check"] {
        let o = hwsim(&[cmd, tb.to_str().unwrap()]);
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains(
                "late.yaml:6:58: traffic: a flow starts at cycle 18446744073709551615, at or after the end of the run"
            ),
            "{cmd}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn a_trace_window_after_the_end_keeps_the_run_and_its_report() {
    let dir = temp_dir("trace_from_past_end");
    let (vcd, json) = (dir.join("x.vcd"), dir.join("x.json"));
    let o = hwsim(&[
        "tb/modules/comb_chain.yaml",
        "-q",
        "--vcd",
        vcd.to_str().unwrap(),
        "--trace-from",
        "5000",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    assert!(read_json(&json)["passed"].as_bool().unwrap());
    // One timestamp, the window's first, with every value as it held since the end.
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.contains("#5000\n$dumpvars"), "{text}");
}

#[test]
fn a_reversed_view_window_is_refused_at_its_line() {
    let dir = temp_dir("reversed_window");
    let text = std::fs::read_to_string("tb/modules/comb_chain.yaml").unwrap()
        + "view:\n  window: [200, 100]\n  groups: [{title: all, signals: ['*']}]\n";
    let tb = write(&dir, "w.yaml", &text);
    for cmd in ["run", "check"] {
        let o = hwsim(&[cmd, tb.to_str().unwrap()]);
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("view.window [200, 100] is empty or reversed: give [from, to] with from < to"),
            "{cmd}: {}",
            stderr(&o)
        );
    }
}

/// A group title with a control character (a line break would start a line of the .gtkw that
/// GTKWave reads as a command) is refused at its place, nothing written (issue 53).
#[test]
fn a_view_title_with_a_control_character_is_refused_at_its_place() {
    let dir = temp_dir("title_control");
    let base = std::fs::read_to_string("tb/modules/comb_chain.yaml").unwrap();
    let lines = base.lines().count();
    let text = base.clone()
        + "view:\n  groups:\n    - {title: fine, signals: ['*']}\n    - {title: \"two\\nlines\", signals: ['*']}\n";
    let tb = write(&dir, "t.yaml", &text);
    let vcd = dir.join("t.vcd");
    let o = hwsim(&["run", tb.to_str().unwrap(), "--vcd", vcd.to_str().unwrap()]);
    assert_code(&o, 2);
    let want = format!(
        "t.yaml:{}:8: view.groups[1].title holds a control character (U+000A): a title is one line of printable text",
        lines + 4
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    assert!(!vcd.exists() && !dir.join("t.gtkw").exists(), "nothing written");
    // A line separator and a right-to-left override are refused as well (they were written as
    // they are: the second shows the title's text reversed).
    for (c, code) in [('\u{2028}', "2028"), ('\u{202E}', "202E")] {
        let text = base.clone() + &format!("view:\n  groups:\n    - {{title: \"a{c}b\", signals: ['*']}}\n");
        let tb = write(&dir, "u.yaml", &text);
        let o = hwsim(&["run", tb.to_str().unwrap(), "--vcd", vcd.to_str().unwrap()]);
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains(&format!("holds a control character (U+{code})")),
            "{}",
            stderr(&o)
        );
    }
}

/// View mistakes that used to pass silently (issue 53): a group of no signals, a window that
/// opens after the run's end, a marker after it; each refused at its place, nothing written. A
/// shorter `--until` on the command line is a quick look, not a mistake: it runs.
#[test]
fn view_mistakes_are_refused_at_their_place() {
    let dir = temp_dir("view_mistakes");
    let base = "name: v\nuntil: 50\ninstances:\n  c: {kind: counter, params: {stop: 10}}\nexpect:\n  - {port: c.count, at: 5, value: 5}\n";
    let cases = [
        (
            "view:\n  groups:\n    - {title: none, signals: []}\n",
            "t.yaml:9:21: view.groups[0] (`none`) lists no signals: give it at least one (a name or a glob)",
        ),
        (
            "view:\n  window: [50, 80]\n  groups:\n    - {title: c, signals: [c.count]}\n",
            "t.yaml:8:3: view.window starts at 50, at or after the end of the run (50): the view would open on nothing",
        ),
        (
            "view:\n  markers: [10, 51]\n  groups:\n    - {title: c, signals: [c.count]}\n",
            "t.yaml:8:3: view.markers[1] = 51 is after the end of the run (50): the marker would mark nothing",
        ),
    ];
    for (view, want) in cases {
        let tb = write(&dir, "t.yaml", &format!("{base}{view}"));
        let vcd = dir.join("t.vcd");
        for cmd in ["run", "check"] {
            let mut args = vec![cmd, tb.to_str().unwrap()];
            if cmd == "run" {
                args.extend(["--vcd", vcd.to_str().unwrap()]);
            }
            let o = hwsim(&args);
            assert_code(&o, 2);
            assert!(stderr(&o).contains(want), "{cmd}: want {want}\n{}", stderr(&o));
            assert!(!vcd.exists() && !dir.join("t.gtkw").exists(), "nothing written");
        }
    }
    // The marker case with `--until 20`: the file's view is left as it is, and the run passes.
    let tb = write(&dir, "t.yaml", &format!("{base}{}", cases[2].0));
    assert_code(&hwsim(&["run", tb.to_str().unwrap(), "--until", "20", "-q"]), 0);
}

/// A testbench whose file name holds a line break: its quoted path would still split a job
/// of the emitted list in two, the second line a command of the name's choosing (issue 53).
#[test]
fn sweep_emit_refuses_a_testbench_path_with_a_line_break() {
    let dir = temp_dir("sweep_emit_path_newline");
    let tb = write(&dir, "a\ntouch injected.yaml", COUNTER_TB);
    for kind in ["parallel", "slurm"] {
        let jobs = dir.join(format!("jobs_{kind}"));
        let o = hwsim(&[
            "sweep",
            tb.to_str().unwrap(),
            "--set",
            "until=20,30",
            "--emit",
            kind,
            jobs.to_str().unwrap(),
        ]);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("a\\ntouch injected.yaml: the testbench's path holds a control character (a line break)"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!jobs.exists(), "nothing written");
    }
}

/// Bounds far from 1 print in scientific notation, as written, not as 300-digit decimals
/// (issue 53).
#[test]
fn tiny_and_huge_bounds_print_as_written() {
    let dir = temp_dir("tiny_bounds");
    let tb = write(
        &dir,
        "t.yaml",
        "name: t\nuntil: 50\ninstances:\n  c: {kind: counter, params: {stop: 10}}\nexpect:\n  - {metric: end_cycle, min: 1e-300, max: 1.5e300}\n  - {metric: end_cycle, min: {param: until, times: 1e-200}}\n",
    );
    let o = hwsim(&["run", tb.to_str().unwrap()]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("end_cycle >= 1e-300 and <= 1.5e300"), "{out}");
    assert!(out.contains(">= 1e-200 × until"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() < 120), "{out}");
}

/// A port with millions of recorded changes: the checks count them and turn into YAML only
/// what they show or compare (issue 53: a whole log converted took ~5 times the log, and a
/// 10^8-push `sequence` check aborted). 3 000 000 changes of a u64: 48 MB of log; the
/// conversion alone was 700 MB more.
#[test]
fn checks_over_a_long_history_convert_only_what_they_read() {
    let dir = temp_dir("long_history");
    let tb = write(
        &dir,
        "t.yaml",
        "name: t\nuntil: 3000000\ninstances:\n  c: {kind: counter, params: {start: 1, step: 1, stop: 100000000}}\nexpect:\n  - {port: c.count, count: 3000000}\n  - {port: c.count, within: [5, 7], sequence: [6, 7, 8]}\n  - {port: c.count, at: 2999990, value: 2999991}\n  - {port: c.count, within: [10, 2999999], value: 2999000}\n  - {name: off by one, port: c.count, within: [5, 7], sequence: [6, 7]}\n  - {name: nothing there, port: c.count, within: [5, 7], value: 3}\n",
    );
    let json = dir.join("r.json");
    let o = hwsim(&["run", tb.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert_code(&o, 1);
    let out = stdout(&o);
    assert!(out.contains("verdict: FAIL (4/6 checks) at cycle 3000000"), "{out}");
    assert!(out.contains("[6@5, 7@6, 8@7]"), "{out}");
    let r = read_json(&json);
    let checks = r["checks"].as_array().unwrap();
    let by = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"].as_str() == Some(name))
            .unwrap()
            .clone()
    };
    assert_eq!(
        by("off by one")["first_difference"].as_str(),
        Some("1 more than expected from item 2: 8 @ 7")
    );
    assert_eq!(by("nothing there")["actual"].as_str(), Some("6 @ 5, 7 @ 6, 8 @ 7"));
    let peak = r["stats"]["peak_rss_bytes"].as_u64().unwrap();
    assert!(peak < 300 << 20, "peak {} MiB", peak >> 20);
}

/// `vectors` of 4 000 instances (issue 53: 43 s, quadratic in the instances: every output
/// checked against every other through the file system, every port's net looked up by a scan
/// of all nets, every port's glob matched against every net). Now a table each: a few seconds
/// at most even on a loaded machine; 60 s is a hang guard, not a speed figure.
#[test]
fn vectors_of_thousands_of_instances_is_not_quadratic() {
    let dir = temp_dir("vectors_many");
    let tb = write(
        &dir,
        "t.yaml",
        "name: t\nuntil: 20\ninstances:\n  c: {kind: counter, count: 4000, params: {stop: 10}}\nexpect:\n  - {metric: end_cycle, min: 1}\n",
    );
    let out = dir.join("v");
    let t0 = std::time::Instant::now();
    let o = hwsim(&["vectors", tb.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 4000);
    let c17 = std::fs::read_to_string(out.join("c17.csv")).unwrap();
    assert_eq!(c17.lines().count(), 12, "a header and cycles 0..=10: {c17}");
}

/// The save file of a 16-chip system (issue 53: 110 s of which 73 s of CPU for `--until 10`,
/// every variable tested against every net declared a level; 0.2 s now). 60 s is a hang guard.
/// Every level net's variables are still drawn as levels.
#[test]
fn the_save_file_of_a_large_system_is_not_quadratic() {
    let dir = temp_dir("gtkw_large");
    let tb = system_tb(
        &dir,
        "s16",
        &[
            "topology: {kind: star, chips: 16}",
            "traffic: [{pattern: all_to_all, bytes: 4096}]",
        ],
    );
    let vcd = dir.join("s16.vcd");
    let t0 = std::time::Instant::now();
    let o = hwsim(&[
        "run",
        tb.to_str().unwrap(),
        "--until",
        "10",
        "--vcd",
        vcd.to_str().unwrap(),
        "-q",
    ]);
    assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{}",
        stderr(&o)
    );
    let gtkw = std::fs::read_to_string(dir.join("s16.gtkw")).unwrap();
    // A switch queue's bytes are a level: an analog step trace, decimal (`@8024` before it).
    let lines: Vec<&str> = gtkw.lines().collect();
    let q = lines
        .iter()
        .position(|l| l.contains(" sw0.q_bytes0["))
        .expect("sw0.q_bytes0 in the view");
    assert_eq!(lines[q - 1], "@8024", "drawn as a level");
}

/// A stimulus value wider than its field's true width is refused at its place, not masked
/// (issue 53: `pcp: 9` in a 3-bit field ran as PCP 1).
#[test]
fn a_stimulus_value_wider_than_its_field_is_refused() {
    let dir = temp_dir("wide_field");
    let text = std::fs::read_to_string("tb/switch/ingress_classify.yaml")
        .unwrap()
        .replacen("hdr: {pcp: 3}}}", "hdr: {pcp: 9}}}", 1)
        .replace(
            "include: [../",
            &format!("include: [{}/tb/", env!("CARGO_MANIFEST_DIR")),
        );
    let line = text.lines().position(|l| l.contains("pcp: 9")).unwrap() + 1;
    let tb = write(&dir, "t.yaml", &text);
    let o = hwsim(&["run", tb.to_str().unwrap(), "-q"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains(&format!("t.yaml:{line}:19: stimulus for `sw.e1_req_in`: value `")),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("9 is wider than its 3 bits (0..=7)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_output_name_of_255_bytes_is_written() {
    let dir = temp_dir("long_output_name");
    let json = dir.join(format!("{}.json", "r".repeat(250)));
    let o = hwsim(&["tb/modules/comb_chain.yaml", "-q", "--json", json.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(read_json(&json)["passed"].as_bool().unwrap());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
}

/// System fields the builder owns or ignores, and traffic the topology cannot carry, are refused
/// at elaboration with the field they concern (issue 29).
#[test]
fn builder_owned_ignored_and_unreachable_system_inputs_are_refused() {
    let dir = temp_dir("hostile_system_2");
    let star = "topology: {kind: star, chips: 3}";
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "owned",
            &[star, ONE_FLOW, "switch: {ports: 8}"],
            "system.switch.ports is set by the system builder (from the topology and the traffic); remove it",
        ),
        (
            "owned_salt",
            &[star, ONE_FLOW, "switch: {ecmp_salt: 3}"],
            "system.switch.ecmp_salt is set by the system builder",
        ),
        (
            "not_a_map",
            &[star, ONE_FLOW, "switch: 7"],
            "system.switch: expected a mapping of switch parameters, got 7",
        ),
        (
            "a2a_src",
            &[star, "traffic: [{pattern: all_to_all, src: [0], bytes: 64}]"],
            "traffic: `all_to_all` involves every chip; `src` applies to flow, incast and multicast",
        ),
        (
            "perm_dst",
            &[star, "traffic: [{pattern: permutation, dst: 1, bytes: 64}]"],
            "traffic: `permutation` involves every chip; `dst` applies to flow and incast",
        ),
        (
            "report_flows",
            &[star, ONE_FLOW, "chip: {tx: {report_flows: [{dst: 9, qp: 0}]}}"],
            "system.chip.tx.report_flows: dst chip 9 out of range 0..3",
        ),
        (
            "unreachable",
            &[
                "topology: {kind: custom, chips: 4, links: [[chip0, chip1], [chip2, chip3]]}",
                "traffic: [{pattern: flow, src: [0], dst: 3, bytes: 64}]",
            ],
            "traffic: chip 3 cannot be reached from chip 0 (no path between them in the topology)",
        ),
        (
            // A multicast is checked per member of its group (its pair names the group).
            "unreachable_member",
            &[
                "topology: {kind: custom, chips: 4, links: [[chip0, chip1], [chip2, chip3]]}",
                "traffic: [{pattern: multicast, src: [0], group: [1, 2], bytes: 64}]",
            ],
            "traffic: chip 2 cannot be reached from chip 0 (no path between them in the topology)",
        ),
    ];
    for (name, lines, msg) in cases {
        let tb = system_tb(&dir, name, lines);
        for cmd in ["check", "run"] {
            let o = hwsim(&[cmd, tb.to_str().unwrap()]);
            assert_code(&o, 2);
            let err = stderr(&o);
            assert!(err.contains(msg), "{name} ({cmd}): {err}");
            assert!(
                err.lines().count() == 1 && err.len() < 300,
                "{name}: one short line: {err}"
            );
        }
    }
}

#[test]
fn diff_costs_changes_not_cycles() {
    // Two waves of one bit ending at #4294000000, different only at cycle 5: answered at once
    // (the walk visits change times; it once stepped every cycle, about 36 minutes).
    let dir = temp_dir("diff_long");
    let vcd = |t: u32| {
        format!(
            "$timescale 1ns $end\n$scope module top $end\n$var wire 1 ! a $end\n$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\n0!\n$end\n#{t}\n1!\n#4294000000\n0!\n"
        )
    };
    let (a, b) = (write(&dir, "a.vcd", &vcd(5)), write(&dir, "b.vcd", &vcd(6)));
    let start = std::time::Instant::now();
    let o = hwsim(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(start.elapsed().as_secs() < 20);
    assert_code(&o, 1);
    assert!(
        stdout(&o).contains("DIFFER  top.a = top.a: first at cycle 5: A 1, B 0; 1 of 4294000001 cycles differ"),
        "{}",
        stdout(&o)
    );
    // The same wave against itself: the same everywhere.
    let o = hwsim(&["diff", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert_code(&o, 0);
}

#[test]
fn a_stream_count_over_the_run_is_counted_not_logged() {
    // 2 × 10^6 pushes: the check reads the stream's push count (it used to keep every message,
    // 1.7 GB for 10^7), and a count in a window still reads the history.
    let dir = temp_dir("stream_count");
    let tb = write(
        &dir,
        "many.yaml",
        "name: many\nuntil: 3000000\ninstances:\n  src: {kind: producer, params: {count: 2000000, interval: 1}}\n  snk: {kind: consumer, params: {interval: 1}}\nconnect:\n  - {from: src.out, to: snk.in}\nexpect:\n  - {port: src.out, count: 2000000}\n  - {port: src.out, within: [0, 9], count: 10}\n",
    );
    let o = hwsim(&["run", tb.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("src.out pushes == 2000000"), "{}", stdout(&o));
}

#[test]
fn vectors_of_a_run_too_long_for_one_row_per_cycle_is_refused() {
    let dir = temp_dir("vectors_rows");
    let tb = write(
        &dir,
        "long.yaml",
        "name: long\nuntil: 10000001\ninstances:\n  c: {kind: counter}\nexpect:\n  - {metric: end_cycle, min: 1}\n",
    );
    let o = hwsim(&[
        "vectors",
        tb.to_str().unwrap(),
        "--out",
        dir.join("v").to_str().unwrap(),
    ]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("the run ended at cycle 10000001: one row per cycle would be 10000002 rows, more than the 10000000 vectors writes"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("v").join("c.csv").exists());
}

#[test]
fn a_probe_with_too_many_rows_is_refused_before_the_run() {
    let dir = temp_dir("probe_rows");
    let tb = write(
        &dir,
        "p.yaml",
        "name: p\nuntil: 1000000000\ninstances:\n  c: {kind: counter}\nprobe: {every: 1, signals: [c.count]}\n",
    );
    let start = std::time::Instant::now();
    let o = hwsim(&[
        "run",
        tb.to_str().unwrap(),
        "--probe",
        dir.join("p.csv").to_str().unwrap(),
    ]);
    assert!(start.elapsed().as_secs() < 20, "refused before running");
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("probe: every 1 cycles over a run of 1000000000 is 1000000001 rows, more than 10000000"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_set_error_names_the_set_not_a_line_its_value_did_not_come_from() {
    // The consumer's parameters come from an include; a `--set` of them (a mapping of fields,
    // a list where a number goes) was reported at the include's line, or at a line of the
    // testbench, that the bad value did not come from.
    let dir = temp_dir("set_place");
    write(&dir, "base.yaml", "defaults:\n  consumer: {interval: 1, capacity: 2}\n");
    let tb = write(
        &dir,
        "t.yaml",
        "name: t\nuntil: 50\ninclude: [base.yaml]\ninstances:\n  src: {kind: producer, params: {count: 3}}\n  snk: {kind: consumer}\nconnect:\n  - {from: src.out, to: snk.in}\nexpect:\n  - {counter: snk.received, equals: 3}\n",
    );
    let tb = tb.to_str().unwrap();
    let a1 = "tb/acceptance/a1_p2p_bandwidth.yaml";
    for (file, set, msg) in [
        (
            tb,
            "defaults.consumer={capacity: 0}",
            "instance `snk`: interval and capacity must be ≥ 1",
        ),
        (
            tb,
            "defaults.consumer.capacity=[1]",
            "params: invalid type: sequence, expected u32",
        ),
        (
            tb,
            "defaults={consumer: {capacity: {a: 1}}}",
            "params: invalid type: map, expected u32",
        ),
        (
            a1,
            "system.chip.paxi={mps: 0}",
            "instance `chip0.paxi`: mps 0 out of range 1..=4096",
        ),
        (a1, "system.chip.paxi.itlv=[1]", "invalid type: sequence"),
        (
            a1,
            "system.link={bandwidth: x}",
            "`link0_1` (phylink): invalid type: string \"x\"",
        ),
    ] {
        for cmd in ["check", "run"] {
            let o = hwsim(&[cmd, file, "--set", set]);
            assert_bad_output(&o, &format!("--set {set}: "), &[msg]);
        }
    }
}

#[test]
fn a_module_testbench_without_checks_is_not_a_pass() {
    // `PASS (0/0)` was the verdict of a run that checked nothing: run, check, regress and sweep
    // refuse it at the file's `expect:` (or its top); vectors and plot, which want the waves or
    // the samples, run it and say it has no checks.
    let dir = temp_dir("no_checks");
    let top = write(
        &dir,
        "none.yaml",
        "name: n\nuntil: 20\ninstances:\n  c: {kind: counter}\n",
    );
    let empty = write(
        &dir,
        "empty.yaml",
        "name: e\nuntil: 20\ninstances:\n  c: {kind: counter}\nprobe: {every: 5, signals: [c.count]}\nexpect: []\n",
    );
    let msg = "testbench has no `expect:` checks: its run would pass without checking anything";
    for (tb, pos) in [(&top, "1:1"), (&empty, "6:1")] {
        let t = tb.to_str().unwrap();
        for args in [
            vec!["run", t],
            vec!["check", t],
            vec!["sweep", t, "--set", "until=10,20", "--out"],
        ] {
            let mut args: Vec<String> = args.into_iter().map(String::from).collect();
            if args[0] == "sweep" {
                args.push(dir.join("sw").display().to_string());
            }
            let o = hwsim(&args);
            assert_bad_output(&o, &format!("{t}:{pos}: "), &[msg]);
        }
    }
    assert!(!dir.join("sw").exists(), "the sweep wrote nothing");
    let o = hwsim(&["regress", dir.to_str().unwrap()]);
    assert_code(&o, 1);
    assert!(!stdout(&o).contains("PASS"), "{}", stdout(&o));
    // A testbench that only says `expect: [{metric: end_cycle, min: 1}]` passes.
    let one = write(
        &dir,
        "one.yaml",
        "name: o\nuntil: 20\ninstances:\n  c: {kind: counter}\nexpect: [{metric: end_cycle, min: 1}]\n",
    );
    assert_code(&hwsim(&["run", one.to_str().unwrap()]), 0);
    let o = hwsim(&[
        "vectors",
        top.to_str().unwrap(),
        "--out",
        dir.join("v").to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("run: no checks, ended at cycle 20"),
        "{}",
        stdout(&o)
    );
    let o = hwsim(&[
        "plot",
        empty.to_str().unwrap(),
        "--out",
        dir.join("p.svg").to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains(": no checks at cycle 20"), "{}", stdout(&o));
}

/// A testbench busy every cycle (a push and a pop per cycle) for 10^11 cycles, with a probe:
/// only an interrupt ends it, with event skip on.
const BUSY_TB: &str = "\
name: busy
until: 100000000000
instances:
  src: {kind: producer, params: {count: 100000000000, interval: 1}}
  snk: {kind: consumer, params: {interval: 1}}
connect:
  - {from: src.out, to: snk.in}
probe: {every: 100000, signals: [snk.last]}
expect:
  - {counter: snk.received, min: 1}
";

/// Runs hwsim with `args`, sends SIGINT after `ms` milliseconds, and returns its output (it must
/// end within 20 s of the signal).
fn interrupted_after(args: &[String], ms: u64) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(ms));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    wait_at_most(child, 20).expect("stops after the interrupt")
}

/// The temporary files (`.NAME.hwsim-PID.tmp`) left under `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".tmp") || n.contains("hwsim-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn sweep_plot_vectors_and_diff_stop_cleanly_on_sigint() {
    let dir = temp_dir("interrupts");
    let tb = write(&dir, "busy.yaml", BUSY_TB).display().to_string();
    let s = |p: PathBuf| p.display().to_string();

    // sweep: the running point stops and reports, the others never start; a partial table with
    // INTR rows, exit 130.
    let out = dir.join("sw");
    let o = interrupted_after(
        &[
            "sweep".into(),
            tb.clone(),
            "--set".into(),
            "until=100000000000,200000000000,300000000000".into(),
            "-j".into(),
            "1".into(),
            "-q".into(),
            "--out".into(),
            s(out.clone()),
        ],
        1500,
    );
    assert_code(&o, 130);
    assert!(
        stdout(&o).contains("3 runs: 0 passed, 0 failed, 3 interrupted"),
        "{}",
        stdout(&o)
    );
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert!(rows.iter().all(|r| r.contains(",INTR,")), "{table}");
    assert!(
        rows[2].ends_with("INTR,,,,"),
        "a run not started has no counts: {table}"
    );
    assert!(temporaries(&out).is_empty(), "{:?}", temporaries(&out));

    // plot of a testbench: the run stops, its probe CSV is whole up to there, no plot.
    let pl = dir.join("pl");
    std::fs::create_dir_all(&pl).unwrap();
    let o = interrupted_after(&["plot".into(), tb.clone(), "--out".into(), s(pl.join("p.svg"))], 1500);
    assert_code(&o, 130);
    assert!(stdout(&o).contains("no plot written"), "{}", stdout(&o));
    assert!(!pl.join("p.svg").exists());
    assert!(std::fs::read_to_string(pl.join("p.csv"))
        .unwrap()
        .starts_with("cycle,snk.last"));
    assert!(temporaries(&pl).is_empty(), "{:?}", temporaries(&pl));

    // vectors: the run stops, nothing is written.
    let vv = dir.join("vv");
    let o = interrupted_after(&["vectors".into(), tb.clone(), "--out".into(), s(vv.clone())], 1500);
    assert_code(&o, 130);
    assert!(stdout(&o).contains("no vectors written"), "{}", stdout(&o));
    assert!(temporaries(&vv).is_empty() && !vv.join("src.csv").exists());

    // diff of two long waves: exit 130 at once (it writes no file).
    let mut text = String::from(
        "$timescale 1ns $end\n$scope module top $end\n$var wire 8 ! a $end\n$upscope $end\n$enddefinitions $end\n",
    );
    for t in 0..2_000_000u32 {
        text.push_str(&format!("#{t}\nb{:b} !\n", t % 256));
    }
    let w = write(&dir, "long.vcd", &text);
    drop(text);
    let o = interrupted_after(&["diff".into(), s(w.clone()), s(w.clone())], 400);
    assert_code(&o, 130);
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fst_alone_goes_through_a_temporary_vcd_that_no_run_leaves_behind() {
    // `--fst` alone: the VCD goes to a temporary file beside the FST (it was held in memory and
    // cloned: 4.9 GB for a 12 ms system run), converted from there and removed; the FST is the
    // same as beside a `--vcd`. Interrupted, the run still writes a whole FST and leaves no
    // temporary file.
    let dir = temp_dir("fst_alone");
    let s = |p: PathBuf| p.display().to_string();
    let o = hwsim(&["run", FIFO_TB, "-q", "--fst", &s(dir.join("a.fst"))]);
    assert_code(&o, 0);
    let o = hwsim(&[
        "run",
        FIFO_TB,
        "-q",
        "--vcd",
        &s(dir.join("b.vcd")),
        "--fst",
        &s(dir.join("b.fst")),
    ]);
    assert_code(&o, 0);
    assert_eq!(
        std::fs::read(dir.join("a.fst")).unwrap(),
        std::fs::read(dir.join("b.fst")).unwrap()
    );
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    let o = hwsim(&["diff", &s(dir.join("a.fst")), &s(dir.join("b.vcd"))]);
    assert_code(&o, 0);

    let tb = write(&dir, "busy.yaml", BUSY_TB);
    let o = interrupted_after(
        &["run".into(), s(tb), "-q".into(), "--fst".into(), s(dir.join("i.fst"))],
        1000,
    );
    assert_code(&o, 130);
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    let o = hwsim(&["diff", &s(dir.join("i.fst")), &s(dir.join("i.fst"))]);
    assert_code(&o, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn diff_of_a_wave_at_the_time_limit_or_of_a_zero_timescale_ends() {
    // Found by the fuzz harness: a change at #2^64-1 (the search for its cycle overflowed and
    // looped) and `$timescale 0ns` (a cycle of no time units) hung diff.
    let dir = temp_dir("diff_limits");
    let head =
        "$timescale 1ns $end\n$scope module top $end\n$var wire 1 ! a $end\n$upscope $end\n$enddefinitions $end\n";
    let huge = write(
        &dir,
        "huge.vcd",
        &format!("{head}#0\n0!\n#5\n1!\n#18446744073709551615\n0!\n"),
    );
    let zero = write(
        &dir,
        "zero.vcd",
        &format!("{}#0\n0!\n#5\n1!\n", head.replace("1ns", "0ns")),
    );
    let run = |args: &[&str]| {
        let child = Command::new(env!("CARGO_BIN_EXE_hwsim"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_at_most(child, 20).expect("diff ends")
    };
    let (h, z) = (huge.to_str().unwrap(), zero.to_str().unwrap());
    let o = run(&["diff", h, h, "--to", "100"]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("verdict: SAME (1 signals over 100 cycles)"),
        "{}",
        stdout(&o)
    );
    let o = run(&["diff", z, z]);
    assert_bad_output(
        &o,
        z,
        &["cannot read the wave: a timescale of 0 ns (it must be more than 0)"],
    );
    // A cycle of 10^-8 time units (hwsim's wave, a timescale of 10^8 ns): each change's cycle
    // was found by a walk of 5 × 10^7 steps.
    let fine = write(
        &dir,
        "fine.vcd",
        &format!(
            "$version hwsim $end\n{}{}",
            head.replace("1ns", "100000000 ns"),
            (0..40).map(|t| format!("#{t}\n{}!\n", t % 2)).collect::<String>()
        ),
    );
    let f = fine.to_str().unwrap();
    let o = run(&["diff", f, f]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("verdict: SAME (1 signals over 3900000001 cycles)"),
        "{}",
        stdout(&o)
    );
}

/// `connect: {from: src.out*, to: sw.in*}` follows the instances' port counts: the command of
/// docs/switch-validation.md gives Karol's FIFO saturation throughput for N = 8 (0.6184), and
/// counts that differ, or a pattern on one side only, are refused at their place.
#[test]
fn connect_by_pattern_follows_the_port_counts() {
    let dir = temp_dir("pattern");
    let json = dir.join("n8.json");
    let o = hwsim(&[
        "tb/switch/hol_saturation.yaml",
        "--set",
        "instances.sw.params.ports=8",
        "--set",
        "instances.src.params.ports=8",
        "--checks",
        "off",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = r["counters"]["sw.throughput_ppm"].as_u64().unwrap();
    assert!((617_000..=619_500).contains(&t), "N = 8 throughput {t} ppm");
    let o = hwsim(&["tb/switch/hol_saturation.yaml", "--set", "instances.sw.params.ports=8"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("connect `src.out*` → `sw.in*`: the two sides' ports differ (16 ports, 0..=15 on `src`, 8 ports, 0..=7 on `sw`)"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string("tb/switch/hol_saturation.yaml").unwrap();
    for (to, want) in [
        (
            "sw.in}",
            "connect `sw.in`: a pattern is `instance.port*` with one `*` in the port name, on both sides",
        ),
        ("sw.x*}", "connect `sw.x*`: no port of `sw` matches"),
        ("sx.in*}", "connect `sx.in*`: no instance `sx`"),
    ] {
        let bad = text.replace("sw.in*}", to);
        assert_ne!(bad, text);
        let p = dir.join("bad.yaml");
        std::fs::write(&p, bad).unwrap();
        let o = hwsim(&[p.to_str().unwrap()]);
        assert_code(&o, 2);
        assert!(stderr(&o).contains(want), "{want}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with(&format!("hwsim: {}:", p.display())),
            "{}",
            stderr(&o)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Per-flow latency percentiles: a flow of one transaction has p50 = p99 = max; a flow of many
/// has its median below its worst, and the text table shows both.
#[test]
fn flows_report_latency_percentiles() {
    let dir = temp_dir("percentiles");
    let json = dir.join("gbn.json");
    let o = hwsim(&["tb/go_back_n.yaml", "--json", json.to_str().unwrap()]);
    assert_code(&o, 0);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for f in r["flows"].as_array().unwrap() {
        assert_eq!(f["latency_p50"], f["latency_max"], "{f}");
        assert_eq!(f["latency_p999"], f["latency_max"], "{f}");
    }
    let json = dir.join("mixed.json");
    let o = hwsim(&["tb/paxi/read_write_mixed.yaml", "--json", json.to_str().unwrap()]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("lat p50   lat p99   lat max"), "{}", stdout(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let f = &r["flows"][0];
    let (p50, p99, max) = (
        f["latency_p50"].as_u64().unwrap(),
        f["latency_p99"].as_u64().unwrap(),
        f["latency_max"].as_u64().unwrap(),
    );
    assert!(p50 > 0 && p50 < p99 && p99 <= max, "{f}");
    assert_eq!(r["counters"]["chip0.paxi.flow0_lat_p99"].as_u64(), Some(p99));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hwsim config`: every instance's kind and the parameters it runs with, defaults filled in,
/// `--set` applied and named.
#[test]
fn config_prints_the_resolved_parameters() {
    let o = hwsim(&["config", "tb/modules/bank_arbiter_rr_pointer.yaml"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    // Set by the testbench, and a default it leaves out.
    assert!(
        out.contains("  arb:\n    kind: bank_arbiter\n    params:\n      vc_weights:\n      - 2\n"),
        "{out}"
    );
    assert!(out.contains("      initial_credits: 12\n      uf_limit: 1\n"), "{out}");
    let o = hwsim(&[
        "config",
        "tb/go_back_n.yaml",
        "--set",
        "system.chip.tx.retry_timeout=100000",
    ]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        out.contains("overrides:\n- system.chip.tx.retry_timeout=100000\n"),
        "{out}"
    );
    assert!(out.contains("  chip0.lg7.tx:\n    kind: rclink_tx\n"), "{out}");
    assert_eq!(
        out.matches("      retry_timeout: 100000\n").count(),
        16,
        "both chips' 8 TXs"
    );
    // What it prints reads back as YAML.
    let body: String = out.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let v: serde_yaml::Value = serde_yaml::from_str(&body).expect("YAML");
    assert_eq!(v["seed"], serde_yaml::Value::from(1));
    let o = hwsim(&["config", "tb/go_back_n.yaml", "--set", "system.chip.tx.retry_timeout=x"]);
    assert_code(&o, 2);
}

/// Port kinds read as hardware: the width, a message type by its name and size, no Rust type
/// and no module path.
#[test]
fn explain_and_list_show_port_types_without_module_paths() {
    let o = hwsim(&["explain", "mac_credit"]);
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("out available      comb signal 4 bits"),
        "{}",
        stdout(&o)
    );
    let o = hwsim(&["list"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(!out.contains("hwsim_ports::") && !out.contains("hwsim_hw::"), "{out}");
    assert!(!out.contains("UInt<") && !out.contains("<u64>"), "{out}");
}

/// A warm-up window (`metrics_from`): the flows and their metrics count only the transactions
/// issued from then on (tb/stats/warmup.yaml: the first burst is left out, so the goodput is the
/// second burst's); at 0 everything counts; the block counters count the whole run either way;
/// module form refuses it at its line.
#[test]
fn metrics_from_leaves_the_warm_up_out_of_the_flows() {
    let dir = temp_dir("warmup");
    let run = |extra: &[&str], name: &str| -> Value {
        let json = dir.join(name);
        let mut args = vec![
            "tb/stats/warmup.yaml",
            "--checks",
            "off",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = hwsim(&args);
        assert_code(&o, 0);
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let warm = run(&[], "warm.json");
    let all = run(&["--set", "metrics_from=0"], "all.json");
    assert_eq!(warm["metrics_from"].as_u64(), Some(8192));
    assert_eq!(warm["flows"][0]["bytes"].as_u64(), Some(0), "the warm-up burst");
    assert_eq!(all["flows"][0]["bytes"].as_u64(), Some(131072));
    assert_eq!(
        warm["flows"][1], all["flows"][1],
        "the burst after it, the same either way"
    );
    let (gw, ga) = (
        warm["metrics"]["goodput"].as_f64().unwrap(),
        all["metrics"]["goodput"].as_f64().unwrap(),
    );
    assert!(gw > 100.0 && ga < 30.0, "{gw} {ga}");
    for r in [&warm, &all] {
        assert_eq!(r["counters"]["chip0.paxi.txns_done"].as_u64(), Some(64));
    }
    let o = hwsim(&["tb/stats/warmup.yaml"]);
    assert!(
        stdout(&o).contains("flows and their metrics: transactions issued from cycle 8192 on"),
        "{}",
        stdout(&o)
    );
    // Given at the top and in system.chip.paxi: refused at the top-level key.
    let twice = dir.join("twice.yaml");
    let text = std::fs::read_to_string("tb/stats/warmup.yaml")
        .unwrap()
        .replace("include: [../../configs/sg2262.yaml]", "include: [configs/sg2262.yaml]")
        .replace("system:\n", "system:\n  chip: {paxi: {metrics_from: 100}}\n");
    std::fs::write(&twice, &text).unwrap();
    let o = hwsim(&[twice.to_str().unwrap()]);
    assert_code(&o, 2);
    let line = text.lines().position(|l| l.starts_with("metrics_from:")).unwrap() + 1;
    assert!(
        stderr(&o).contains(&format!("{}:{line}:1: metrics_from is given twice", twice.display())),
        "{}",
        stderr(&o)
    );
    // A window opening at or after the end of the run is refused (it was accepted and measured
    // nothing), at its line, for run and check alike.
    for cmd in ["run", "check"] {
        let o = hwsim(&[cmd, "tb/stats/warmup.yaml", "--set", "metrics_from=4611686018427387905"]);
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("--set metrics_from=4611686018427387905: metrics_from 4611686018427387905 is at or after the end of the run"),
            "{}",
            stderr(&o)
        );
    }
    // The chip's PAXI's own window, too (it ran and reported an empty flows table).
    let o = hwsim(&[
        "tb/go_back_n.yaml",
        "-q",
        "--set",
        "system.chip.paxi.metrics_from=4611686018427387905",
    ]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("--set system.chip.paxi.metrics_from=4611686018427387905: metrics_from 4611686018427387905 is at or after the end of the run"),
        "{}",
        stderr(&o)
    );
    let module = dir.join("module.yaml");
    std::fs::write(
        &module,
        "name: m\nmetrics_from: 100\ninstances:\n  p: {kind: producer}\n  c: {kind: consumer}\nconnect:\n  - {from: p.out, to: c.in}\n",
    )
    .unwrap();
    let o = hwsim(&[module.to_str().unwrap()]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains(&format!("{}:2:1: metrics_from is for system form", module.display())),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--max-memory` bounds what the checks' histories take during the run (issue 53): 30 million
/// pushes recorded for a check's stream need about 1.4 GB; with a 1 GiB budget the run ends
/// with one line naming the budget, the net and the cycle, exit 2 (before, it ran past the
/// budget; with a larger count it was OOM-killed). The same run with 4 GiB passes.
#[test]
fn max_memory_bounds_the_recorded_history() {
    let args = |gib: &str| {
        vec![
            "tb/modules/fifo_backpressure.yaml".to_string(),
            "-q".into(),
            "--set".into(),
            "instances.src.params.count=30000000".into(),
            "--set".into(),
            "instances.snk.params.interval=1".into(),
            "--set".into(),
            "until=40000000".into(),
            "--max-memory".into(),
            gib.into(),
        ]
    };
    let o = hwsim(&args("1"));
    assert_bad_output(
        &o,
        "--max-memory: ",
        &["history the checks record", "`src.out`", "at cycle "],
    );
    let o = hwsim(&args("4"));
    assert_code(&o, 0);
}

/// A pattern connect to a switch given more ports than it may have names the parameter (issue
/// 53): before, the ports were declared from the clamped count and the error was the connect's,
/// "64 ports, 0..=63 on `sw`", for a `ports = 65` the user never saw refused.
#[test]
fn a_port_count_out_of_range_is_refused_before_a_pattern_connect_reads_it() {
    for (set, want) in [
        ("instances.sw.params.ports=65", "ports = 65: must be in 1..=64"),
        ("instances.src.params.ports=65", "ports = 65: must be in 1..=64"),
    ] {
        let o = hwsim(&["tb/switch/islip_uniform.yaml", "-q", "--set", set]);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains(&format!("--set {set}:")) && err.contains(want), "{err}");
        assert!(!err.contains("64 ports"), "{err}");
    }
}

/// A view mistake a `--set` made is reported at that `--set` (issue 53): it was placed at the
/// file's line of the group (or at the file alone when the file has no `view:`), where the value
/// did not come from; a good `--set` of another group does not take the blame.
#[test]
fn a_view_mistake_made_by_a_set_names_that_set() {
    let dir = temp_dir("view_set");
    let base = std::fs::read_to_string("tb/modules/comb_chain.yaml").unwrap();
    let with_view = write(
        &dir,
        "v.yaml",
        &(base.clone()
            + "view:\n  groups:\n    - {title: fine, signals: ['*']}\n    - {title: also, signals: ['*']}\n"),
    );
    let bare = write(&dir, "b.yaml", &base);
    let vcd = dir.join("t.vcd");
    let cases: [(&std::path::Path, &[&str], &str); 4] = [
        (
            &with_view,
            &["view.groups.0.title=ok", "view.groups.1.title=\"two\\nlines\""],
            "--set view.groups.1.title=\"two\\nlines\": view.groups[1].title holds a control character (U+000A)",
        ),
        (
            &with_view,
            &["view.groups.1.signals=[]", "view.groups.0.title=ok"],
            "--set view.groups.1.signals=[]: view.groups[1] (`also`) lists no signals",
        ),
        (
            &bare,
            &["view={groups: [{title: \"a\\tb\", signals: ['*']}]}"],
            "--set view={groups: [{title: \"a\\tb\", signals: ['*']}]}: view.groups[0].title holds a control character (U+0009)",
        ),
        (
            &with_view,
            &["view.window=[9, 3]"],
            "--set view.window=[9, 3]: view.window [9, 3] is empty or reversed",
        ),
    ];
    for (tb, sets, want) in cases {
        let mut args = vec!["run", tb.to_str().unwrap(), "--vcd", vcd.to_str().unwrap()];
        for s in sets {
            args.extend(["--set", s]);
        }
        let o = hwsim(&args);
        assert_code(&o, 2);
        assert!(stderr(&o).contains(want), "{sets:?}: {}", stderr(&o));
        assert!(!vcd.exists(), "nothing written");
    }
}

/// `--max-memory` bounds what a topology elaborates to (issue 53): the estimate charged a fixed
/// cost per counted block and counted 37 blocks a chip where the nodes now make 105, so a 32×32
/// torus passed a 1 GiB budget and peaked at 2.4 GiB. Now it is refused before elaboration, and
/// a 16×16 torus that passes the same budget peaks below it (measured: about 620 MiB).
#[test]
fn max_memory_bounds_what_a_topology_elaborates_to() {
    let torus = |k: u32| {
        [
            "tb/acceptance/relay_torus.yaml".to_string(),
            "--set".into(),
            format!("system.topology.chips={}", k * k),
            "--set".into(),
            format!("system.topology.dims=[{k},{k}]"),
            "--max-memory".into(),
            "1".into(),
        ]
    };
    let mut args = torus(32).to_vec();
    args.extend(["-q", "--until", "1", "--checks", "off"].map(String::from));
    let o = hwsim(&args);
    assert_bad_output(
        &o,
        "--set system.topology.chips=1024: topology: 1024 chips of 8 LGs and 2048 edges: about ",
        &["over the 1.00 GiB budget (--max-memory)"],
    );
    let dir = temp_dir("torus_budget");
    let json = dir.join("r.json");
    let mut args = torus(16).to_vec();
    args.extend(
        [
            "-q",
            "--until",
            "1",
            "--checks",
            "off",
            "--json",
            json.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let o = hwsim(&args);
    assert_code(&o, 0);
    let peak = read_json(&json)["stats"]["peak_rss_bytes"]
        .as_u64()
        .expect("peak in the report");
    assert!(peak > 0 && peak < 1 << 30, "peak {peak} B under a 1 GiB budget");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--trace` globs on the command line become save-file groups (issue 52): the wave holds what
/// they chose, and the save file showed only the `view:` groups' share of it (go_back_n with two
/// globs: 178 variables in the VCD, 10 in the .gtkw). Now every variable of the wave is on a
/// row, the view's groups first, then one group per glob titled by it.
#[test]
fn command_line_trace_globs_become_save_file_groups() {
    let dir = temp_dir("trace_groups");
    let vcd = dir.join("t.vcd");
    let o = hwsim(&[
        "tb/go_back_n.yaml",
        "-q",
        "--vcd",
        vcd.to_str().unwrap(),
        "--trace",
        "chip0.lg7.tx.arbiter.*",
        "--trace",
        "chip1.lg7.rx.*",
    ]);
    assert_code(&o, 0);
    let vars = std::fs::read_to_string(&vcd).unwrap().matches("$var").count();
    let gtkw = std::fs::read_to_string(dir.join("t.gtkw")).unwrap();
    let rows = gtkw
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(['[', '@', '-', '*', '^']))
        .count();
    assert!(vars > 100, "{vars} variables");
    assert_eq!(rows, vars, "every variable of the wave on a row\n{gtkw}");
    for title in ["-chip0.lg7.tx.arbiter.*", "-chip1.lg7.rx.*"] {
        assert!(gtkw.lines().any(|l| l == title), "group `{title}`\n{gtkw}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Statistics per window (issue 52): `--stats-every CYCLES --stats-csv FILE` writes the
/// counters (those of `--counters GLOB`, else all) at every window's end and at the end of the
/// run, the same bytes with and without event skip; bad values are refused naming the option.
#[test]
fn stats_every_writes_the_counters_per_window() {
    let dir = temp_dir("stats_every");
    let csv = |name: &str, extra: &[&str]| -> String {
        let f = dir.join(name);
        let mut args = vec![
            "tb/go_back_n.yaml",
            "-q",
            "--stats-every",
            "5000",
            "--stats-csv",
            f.to_str().unwrap(),
            "--counters",
            "chip0.lg7.tx.frames_sent",
        ];
        args.extend_from_slice(extra);
        let o = hwsim(&args);
        assert_code(&o, 0);
        std::fs::read_to_string(&f).unwrap()
    };
    let text = csv("a.csv", &[]);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], "cycle,chip0.lg7.tx.frames_sent");
    // 0, 5000, …, 50000, and the run's end (50835) with the final count (the report's 21).
    assert_eq!(rows.len(), 1 + 11 + 1, "{text}");
    assert_eq!(rows[1], "0,0");
    assert_eq!(*rows.last().unwrap(), "50835,21");
    let counts: Vec<u64> = rows[1..]
        .iter()
        .map(|r| r.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{text}");
    assert_eq!(
        csv("b.csv", &["--no-skip"]),
        text,
        "skip and no-skip give the same rows"
    );
    for (args, want) in [
        (&["--stats-every", "0", "--stats-csv", "x.csv"][..], "--stats-every: 0"),
        (&["--stats-every", "100"][..], "--stats-csv"),
        (
            &["--stats-every", "100", "--stats-csv", "tb/go_back_n.yaml"][..],
            "is the input",
        ),
        (
            &["--stats-every", "100", "--stats-csv", "x.csv", "--counters", "nosuch"][..],
            "--counters: `nosuch` matches no counter",
        ),
    ] {
        let mut a = vec!["tb/go_back_n.yaml", "-q"];
        a.extend_from_slice(args);
        let o = hwsim(&a);
        assert_code(&o, 2);
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    assert!(!Path::new("x.csv").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A PAXI flit's `kind` and an RX control write's `kind` are shown by name in the save file
/// (issue 52: they were raw numbers), each through a translate filter of its own: the flit kind
/// is known by the `ost` beside it, the control kind by the `opcode`.
#[test]
fn kind_fields_are_shown_by_name() {
    let dir = temp_dir("kind_names");
    let vcd = dir.join("k.vcd");
    let o = hwsim(&[
        "tb/go_back_n.yaml",
        "-q",
        "--vcd",
        vcd.to_str().unwrap(),
        "--trace",
        "chip0.lg7.tx.frame",
        "--trace",
        "chip1.lg7.rx.cnp_gen.cnp",
    ]);
    assert_code(&o, 0);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    assert!(read("k.flit_kind.txt").contains("0 w_data\n1 ar\n2 r\n3 b\n4 mul\n"));
    assert!(read("k.ctrl_kind.txt").contains("0 ack\n1 fack\n2 dup_ack\n3 nak\n4 cnp\n"));
    let gtkw = read("k.gtkw");
    for (filter, var) in [
        ("k.flit_kind.txt", "chip0.lg7.tx.frame.kind[2:0]"),
        ("k.ctrl_kind.txt", "chip1.lg7.rx.cnp_gen.cnp.kind[2:0]"),
    ] {
        let lines: Vec<&str> = gtkw.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.ends_with(&format!(" {var}")))
            .unwrap_or_else(|| panic!("{var}\n{gtkw}"));
        assert!(
            lines[at - 2].starts_with('^') && lines[at - 2].ends_with(filter),
            "{var}\n{gtkw}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
