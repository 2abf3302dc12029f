//! Fuzzing the loader and elaboration in process (issue 15): every testbench under tb/ mutated
//! (bytes cut, lines repeated or swapped, numbers replaced by extremes, brackets inserted), plus
//! random YAML documents. Each case must load and elaborate, or be refused with an error that
//! has a place (file:line:col, or a quoted instance, port or field); never a panic.
//!
//! The readers of the newer commands' outside files are fuzzed the same way (issue 29): waves
//! (VCD) through `diff`, diff maps, probe CSVs through `plot` (read and drawn), and sweep folders
//! (plan.json and the point reports) through `--collect`'s reader, each from seeds hwsim wrote,
//! mutated and cut short. Each case must be read, or refused with one line; never a panic,
//! never more than 10 s.
//!
//! The newer inputs (issue 53) are generated field by field on real testbenches: `view:`
//! blocks, pattern and chain `connect` entries, `rtl:` entries and `--trace` globs, each case
//! loaded, elaborated and run for 20 cycles with the trace asked (one in eight writing its VCD
//! and save file), or refused in one line with a place, within 10 s.
//!
//! `HWSIM_FUZZ_CASES=1000000 cargo test --release --test fuzz` runs a longer campaign (default
//! 10 000 cases for the testbenches, 10 000 for the other readers and 10 000 generated ones).

use std::path::{Path, PathBuf};

use hwsim::{runner, testbench};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Every testbench under tb/, with its text.
fn corpus() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tb");
    hwsim::regress::find_testbenches(&root)
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).expect("readable testbench");
            (p, t)
        })
        .collect()
}

/// Loads and elaborates `text` as the testbench at `path`; bad input must carry a place.
fn load_and_elaborate(path: &Path, text: String) -> Result<(), TestCaseError> {
    let shown = text.chars().take(2000).collect::<String>();
    let _watch = Watch::start(&text);
    let mut l = match testbench::load_text(path, text) {
        Ok(l) => l,
        Err(e) => return has_place(&e, &shown),
    };
    // A 1 GiB budget, not the CLI's 8: a mutation that makes huge but accepted traffic or
    // topology (say `chips: 4294967295` cut to `chips: 4294`) is then refused by the estimate
    // instead of elaborated. With 8 GiB per case and two test threads, the 10^6-case campaign
    // was OOM-killed at 24 GB RSS after 43 min.
    l.max_memory = 1 << 30;
    match runner::build(&l, l.tb.seed).and_then(|(sim, _)| runner::validate_checks(&l, &sim)) {
        Ok(()) => Ok(()),
        Err(e) => has_place(&e, &shown),
    }
}

/// With `HWSIM_FUZZ_WATCH=FILE`, each case's text is written to FILE before it runs (so a case
/// that aborts the process or is OOM-killed is left there), and a case that took more than a
/// second or grew the resident set by more than 64 MiB is printed on stderr with both figures.
struct Watch {
    t0: std::time::Instant,
    rss0: u64,
    text: String,
}

impl Watch {
    fn start(text: &str) -> Option<Watch> {
        let file = std::env::var_os("HWSIM_FUZZ_WATCH")?;
        std::fs::write(file, text).expect("HWSIM_FUZZ_WATCH is writable");
        Some(Watch {
            t0: std::time::Instant::now(),
            rss0: rss(),
            text: text.to_string(),
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let (dt, rss1) = (self.t0.elapsed(), rss());
        if dt.as_secs() >= 1 || rss1 > self.rss0 + (64 << 20) {
            eprintln!(
                "fuzz watch: {:.1} s, RSS {} -> {} MiB, {} bytes of text:\n{}\n---",
                dt.as_secs_f64(),
                self.rss0 >> 20,
                rss1 >> 20,
                self.text.len(),
                self.text.chars().take(4000).collect::<String>()
            );
        }
    }
}

/// Resident set of this process now (VmRSS), bytes.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            l.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb << 10)
}

/// An exit-2 message names where: a line (and column), or a quoted name (`chip0.lg3`, a field).
fn has_place(e: &hwsim::yaml::InputError, text: &str) -> Result<(), TestCaseError> {
    let placed = e.line.is_some() || e.message.contains('`');
    prop_assert!(placed, "no place in `{e}` for\n{text}");
    prop_assert!(!e.to_string().contains('\n'), "one line: `{e}`");
    Ok(())
}

/// Values that break naive arithmetic or allocation.
const NASTY: &[&str] = &[
    "0",
    "-1",
    "18446744073709551615",
    "9223372036854775808",
    "4294967295",
    "1e7",
    "100000000",
    ".nan",
    "~",
    "[]",
    "{}",
    "\"x\"",
];

/// One mutation of `text`, chosen by `op` and placed by `at` / `pick`.
fn mutate(text: &str, op: u8, at: usize, pick: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len().max(1);
    let i = at % n;
    let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    match op % 7 {
        // Cut a span of bytes (at a char boundary).
        0 => {
            let mut s = text.to_string();
            let a = (at * 7919) % s.len().max(1);
            let b = (a + 1 + pick % 40).min(s.len());
            if s.is_char_boundary(a) && s.is_char_boundary(b) {
                s.replace_range(a..b, "");
            }
            return s;
        }
        // Repeat a line (duplicate keys, double drivers).
        1 if !out.is_empty() => out.insert(i, out[i].clone()),
        // Swap two lines (indentation, order).
        2 if !out.is_empty() => out.swap(i, pick % n),
        // Replace a number on a line with an extreme.
        3 if !out.is_empty() => {
            let line = &out[i];
            let digits: Vec<(usize, char)> = line.char_indices().filter(|(_, c)| c.is_ascii_digit()).collect();
            if let Some(&(start, _)) = digits.get(pick % digits.len().max(1)) {
                let end = line[start..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(line.len(), |e| start + e);
                out[i] = format!("{}{}{}", &line[..start], NASTY[pick % NASTY.len()], &line[end..]);
            }
        }
        // Insert brackets or a colon.
        4 if !out.is_empty() => {
            let ins = ["[", "{", "]", ": ", "- ", "&a ", "*a", "!!binary "][pick % 8];
            let pos = out[i]
                .char_indices()
                .map(|(p, _)| p)
                .nth(pick % 13)
                .unwrap_or(out[i].len());
            out[i].insert_str(pos, ins);
        }
        // Drop a line.
        5 if !out.is_empty() => {
            out.remove(i);
        }
        // Replace a value after a colon with an extreme.
        _ if !out.is_empty() => {
            if let Some(c) = out[i].find(": ") {
                let rest = &out[i][c + 2..];
                let end = rest.find([',', '}', ']']).unwrap_or(rest.len());
                out[i] = format!("{}: {}{}", &out[i][..c], NASTY[pick % NASTY.len()], &rest[end..]);
            }
        }
        _ => {}
    }
    out.join("\n") + "\n"
}

/// Random YAML: scalars, sequences and mappings with testbench-like keys.
fn random_yaml() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "name",
        "seed",
        "until",
        "include",
        "defaults",
        "instances",
        "connect",
        "stimulus",
        "expect",
        "system",
        "kind",
        "params",
        "from",
        "to",
        "capacity",
        "topology",
        "chips",
        "traffic",
        "bytes",
        "faults",
        "count",
        "port",
        "at",
        "value",
    ]);
    let leaf = prop_oneof![
        prop::sample::select(NASTY.to_vec()).prop_map(str::to_string),
        "[a-z0-9_.*]{0,8}",
    ];
    leaf.prop_recursive(4, 32, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|v| {
                format!(
                    "{{{}}}",
                    v.into_iter()
                        .map(|(k, x)| format!("{k}: {x}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
        ]
    })
}

fn cases() -> u32 {
    std::env::var("HWSIM_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000)
}

#[test]
fn mutated_testbenches_load_or_are_refused_with_a_place() {
    let corpus = corpus();
    assert!(corpus.len() > 20, "tb/ corpus found");
    // Most of the budget on mutations of real testbenches: they reach elaboration.
    let mut runner = TestRunner::new(Config {
        cases: cases() * 9 / 10,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0..corpus.len(), 1..4usize, any::<[(u8, usize, usize); 3]>());
    runner
        .run(&strategy, |(f, k, muts)| {
            let (path, text) = &corpus[f];
            let mut t = text.clone();
            for &(op, at, pick) in muts.iter().take(k) {
                t = mutate(&t, op, at, pick);
            }
            load_and_elaborate(path, t)
        })
        .unwrap();
}

#[test]
fn random_yaml_loads_or_is_refused_with_a_place() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tb/fuzz_random.yaml");
    let mut runner = TestRunner::new(Config {
        cases: cases() / 10,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&random_yaml(), |doc| load_and_elaborate(&path, doc))
        .unwrap();
}

// ------------------------------------------------------------------------------------------------
// The other readers (issue 29): waves, maps, CSVs, sweep plans.

/// One mutation of a reader's input: [`mutate`], or the text cut short at a byte (a truncated
/// file), or one byte replaced by a control or non-ASCII character.
fn mutate_file(text: &str, op: u8, at: usize, pick: usize) -> String {
    match op % 10 {
        8 => {
            let mut cut = (at * 7919) % text.len().max(1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text[..cut].to_string()
        }
        9 => {
            let mut s = text.to_string();
            let mut a = (at * 104729) % s.len().max(1);
            while !s.is_char_boundary(a) {
                a -= 1;
            }
            let b = s[a..].chars().next().map_or(a, |c| a + c.len_utf8());
            let ins = ["\0", "\r", "\t", "\u{feff}", "\"", ",", "é", "#", "$end", "\n"][pick % 10];
            s.replace_range(a..b, ins);
            s
        }
        _ => mutate(text, op, at, pick),
    }
}

/// The seeds: a VCD and a probe CSV from a run, a VCD with a real and one name twice, a map of
/// the run's signals, a sweep folder (plan.json, point_0.json, point_1.json).
struct Seeds {
    dir: PathBuf,
    vcd: String,
    odd_vcd: String,
    map: String,
    csv: String,
    plan: String,
    point: String,
}

fn seeds() -> Seeds {
    let dir = std::env::temp_dir().join(format!("hwsim-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let tb = dir.join("tb.yaml");
    std::fs::write(
        &tb,
        "name: f\nseed: 1\nuntil: 60\ninstances:\n  src: {kind: producer, params: {count: 12, interval: 1, first_value: 100}}\n  fifo: {kind: fifo, params: {depth: 4}}\n  snk: {kind: consumer, params: {interval: 3}}\nconnect:\n  - {from: src.out, to: fifo.in}\n  - {from: fifo.out, to: snk.in}\nprobe: {every: 5, signals: [snk.last], counters: [\"*.received\"]}\nexpect:\n  - {counter: snk.received, min: 1}\n",
    )
    .unwrap();
    let l = testbench::load(&tb).unwrap();
    runner::run_loaded(
        &l,
        runner::Options {
            vcd: Some(dir.join("seed.vcd")),
            probe: Some(dir.join("seed.csv")),
            ..Default::default()
        },
    )
    .unwrap();
    let vcd = std::fs::read_to_string(dir.join("seed.vcd")).unwrap();
    let wave = hwsim::waves::Wave::open(&dir.join("seed.vcd")).unwrap();
    let names: Vec<String> = wave.vars.iter().map(|v| v.name.clone()).take(4).collect();
    let map = format!(
        "clock_ns: 1\nsignals:\n{}",
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("  - {{a: {n}, b: \"{n}[3:0]\", offset: {}}}\n", i % 2))
            .collect::<String>()
    );
    let sweep = dir.join("sweep");
    hwsim::commands::sweep(
        hwsim::commands::SweepArgs {
            testbench: Some(tb.clone()),
            set: vec!["instances.fifo.params.depth=2,4".into()],
            zip: false,
            seeds: 1,
            jobs: Some(1),
            out: Some(sweep.clone()),
            metric: None,
            x: None,
            counter: vec!["*.received".into()],
            emit: vec![],
            collect: None,
            checks: "on".into(),
            logx: false,
            logy: false,
            quiet: true,
            look: Default::default(),
        },
        None,
    )
    .unwrap();
    Seeds {
        vcd,
        odd_vcd: "$timescale 1ns $end\n$scope module top $end\n$var real 64 ! r $end\n$var wire 1 \" a $end\n$var wire 1 # a $end\n$var wire 4 $ v $end\n$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\nrNaN !\n0\"\n1#\nbx01z $\n$end\n#5\nr1.5 !\n1\"\n0#\nb1010 $\n#9\nrnan !\n".into(),
        map,
        csv: std::fs::read_to_string(dir.join("seed.csv")).unwrap(),
        plan: std::fs::read_to_string(sweep.join("plan.json")).unwrap(),
        point: std::fs::read_to_string(sweep.join("point_0.json")).unwrap(),
        dir,
    }
}

/// A refusal is one line.
fn one_line(e: &hwsim::yaml::InputError, text: &str) -> Result<(), TestCaseError> {
    let shown = text.chars().take(1500).collect::<String>();
    prop_assert!(!e.to_string().contains('\n'), "one line: `{e}` for\n{shown}");
    Ok(())
}

/// `f` must end within 10 s (a hang guard, not a speed test), or within 120 s for a case with an
/// `rtl:` entry: it may build its RTL with Verilator first (12 s on a loaded 2-core machine in
/// a fresh clone, where no build is cached).
fn in_time<T>(what: &str, text: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let bound = if text.contains("rtl:") { 120 } else { 10 };
    let t0 = std::time::Instant::now();
    let r = f();
    let dt = t0.elapsed();
    prop_assert!(
        dt.as_secs() < bound,
        "{what} took {:.1} s for\n{}",
        dt.as_secs_f64(),
        text.chars().take(1500).collect::<String>()
    );
    Ok(r)
}

fn diff_args(a: &Path, b: &Path, map: Option<&Path>) -> hwsim::diff::DiffArgs {
    hwsim::diff::DiffArgs {
        a: a.to_path_buf(),
        b: b.to_path_buf(),
        map: map.map(Path::to_path_buf),
        clock_ns: None,
        from: None,
        to: None,
    }
}

#[test]
fn mutated_waves_maps_csvs_and_sweep_plans_are_read_or_refused_in_one_line() {
    let seeds = seeds();
    let d = &seeds.dir;
    let (seed_vcd, case_vcd, case_map) = (d.join("seed.vcd"), d.join("case.vcd"), d.join("map.yaml"));
    let (case_csv, case_svg) = (d.join("case.csv"), d.join("case.svg"));
    let plan_dir = d.join("sweep");
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0..5u8, 1..4usize, any::<[(u8, usize, usize); 3]>());
    runner
        .run(&strategy, |(surface, k, muts)| {
            let seed = match surface {
                0 => &seeds.vcd,
                1 => &seeds.odd_vcd,
                2 => &seeds.map,
                3 => &seeds.csv,
                _ if muts[0].2 % 2 == 0 => &seeds.plan,
                _ => &seeds.point,
            };
            let mut t = seed.clone();
            for &(op, at, pick) in muts.iter().take(k) {
                t = mutate_file(&t, op, at, pick);
            }
            match surface {
                // A wave against the run's own (and against itself).
                0 | 1 => {
                    std::fs::write(&case_vcd, &t).unwrap();
                    let r = in_time("diff", &t, || hwsim::diff::run(&diff_args(&seed_vcd, &case_vcd, None)))?;
                    match r {
                        Err(e) => one_line(&e, &t)?,
                        Ok((_, _, warnings)) => prop_assert!(warnings.iter().all(|w| !w.contains('\n'))),
                    }
                    if let Err(e) = in_time("diff", &t, || hwsim::diff::run(&diff_args(&case_vcd, &case_vcd, None)))? {
                        one_line(&e, &t)?;
                    }
                }
                // A map between the run's wave and itself.
                2 => {
                    std::fs::write(&case_map, &t).unwrap();
                    let r = in_time("diff --map", &t, || {
                        hwsim::diff::run(&diff_args(&seed_vcd, &seed_vcd, Some(&case_map)))
                    })?;
                    if let Err(e) = r {
                        one_line(&e, &t)?;
                    }
                }
                // A probe CSV, read and drawn.
                3 => {
                    std::fs::write(&case_csv, &t).unwrap();
                    let r = in_time("plot", &t, || {
                        hwsim::plot::probe_chart(&case_csv, &[], &[]).and_then(|c| hwsim::plot::write(&case_svg, &c))
                    })?;
                    if let Err(e) = r {
                        one_line(&e, &t)?;
                    }
                }
                // A sweep folder: its plan or a report mutated, read back as --collect does.
                _ => {
                    let name = if std::ptr::eq(seed, &seeds.plan) {
                        "plan.json"
                    } else {
                        "point_0.json"
                    };
                    std::fs::write(plan_dir.join(name), &t).unwrap();
                    let r = in_time("collect", &t, || {
                        hwsim::sweep::read_plan(&plan_dir).and_then(|p| {
                            let rows = hwsim::sweep::rows(&p, &plan_dir)?;
                            let metric = hwsim::sweep::metric_of(&p, &rows)?;
                            Ok((hwsim::sweep::csv(&p, &rows), hwsim::sweep::summary(&p, &rows, &metric)))
                        })
                    })?;
                    std::fs::write(plan_dir.join("plan.json"), &seeds.plan).unwrap();
                    std::fs::write(plan_dir.join("point_0.json"), &seeds.point).unwrap();
                    if let Err(e) = r {
                        one_line(&e, &t)?;
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    let _ = std::fs::remove_dir_all(d);
}

// ------------------------------------------------------------------------------------------------
// The newer inputs (issue 53): `view:`, pattern `connect`, `rtl:` and `--trace`, generated
// field by field from values a careless or hostile user writes, on real testbenches; each case
// loads, elaborates and runs 20 cycles with the trace asked, or is refused in one line with a
// place, within 10 s.

/// Signal, port and glob spellings: real ones, near misses, patterns, hostile text.
const NAMES: &[&str] = &[
    "*",
    "**",
    "?",
    "chip0.*",
    "chip*.lg*.rx.psn_check.epsn",
    "chip0.lg7.tx.frame.valid",
    "chip0.lg7.tx.frame.psn",
    "chip0.lg7.tx.frame.nosuch",
    "chip0.nosuch.nosuch2",
    "*.psn",
    "*.valid",
    "link0_1.injected",
    "pc.accepted",
    "pc.*",
    "pc.ce",
    "cg.ce",
    "cg.cnp",
    "q.from_cnp",
    "q.ctrl.valid",
    "am.ctrl",
    "rx.data",
    "arb.arbiter",
    "arb.*",
    "arb.arbiter.req",
    "x",
    "a..b",
    ".",
    "..",
    "[",
    "]",
    "{a,b}",
    "é*",
    "\\u0007",
    "../../etc/passwd",
    "/tmp/x",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

/// Titles and other free text (YAML double-quoted, so escapes reach the value).
const TEXTS: &[&str] = &[
    "t",
    "",
    "a\\tb",
    "\\e[31mred",
    "a\\nb",
    "\\u0000",
    "«图»",
    "\\\"",
    "%s%n",
];

/// Values of the fields that take a number, a mode or a path.
const VALUES: &[&str] = &[
    "0",
    "1",
    "5",
    "20",
    "2200",
    "-1",
    "18446744073709551615",
    "1e300",
    "~",
    "[]",
    "{}",
    "x",
    "shadow",
    "replace",
    "both",
    "nosuch.sv",
    "/",
    "..",
    "/dev/null",
    "tb",
    "../../examples/rtl",
];

/// The text of `base` without its top-level `key:` block.
fn without_block(base: &str, key: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in base.lines() {
        let top = !line.starts_with([' ', '#', '-']) && !line.is_empty();
        if top {
            skipping = line.starts_with(&format!("{key}:"));
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A `view:` block from picks.
fn view_block(picks: &[usize]) -> String {
    let p = |i: usize| picks[i % picks.len()];
    let mut s = String::from("view:\n");
    if p(0) % 3 != 0 {
        s += &format!(
            "  window: [{}, {}]\n",
            VALUES[p(1) % VALUES.len()],
            VALUES[p(2) % VALUES.len()]
        );
    }
    if p(3) % 3 != 0 {
        s += &format!("  markers: [{}]\n", VALUES[p(4) % VALUES.len()]);
    }
    s += "  groups:\n";
    for g in 0..p(5) % 4 {
        s += &format!("    - title: \"{}\"\n", TEXTS[p(6 + g) % TEXTS.len()]);
        let sigs: Vec<String> = (0..p(7 + g) % 4)
            .map(|k| format!("\"{}\"", NAMES[p(8 + g + k) % NAMES.len()]))
            .collect();
        s += &format!("      signals: [{}]\n", sigs.join(", "));
    }
    s
}

/// `connect:` entries from picks (plain, pattern, chain).
fn connect_items(picks: &[usize]) -> String {
    let p = |i: usize| picks[i % picks.len()];
    let n = |i: usize| NAMES[p(i) % NAMES.len()];
    (0..1 + p(0) % 3)
        .map(|k| match p(1 + k) % 3 {
            0 => format!("  - {{from: \"{}\", to: \"{}\"}}\n", n(2 + k), n(3 + k)),
            1 => format!(
                "  - {{chain: \"{}\", from: \"{}\", to: \"{}\"}}\n",
                n(4 + k),
                n(5 + k),
                n(6 + k)
            ),
            _ => format!(
                "  - {{from: \"{}\", to: \"{}\", capacity: {}}}\n",
                n(7 + k),
                n(8 + k),
                VALUES[p(9) % VALUES.len()]
            ),
        })
        .collect()
}

/// An `rtl:` block from picks. Its sources are never a Verilog file (a build would take
/// seconds): the load must refuse them, or the entry's other fields first.
fn rtl_block(picks: &[usize]) -> String {
    let p = |i: usize| picks[i % picks.len()];
    let v = |i: usize| VALUES[p(i) % VALUES.len()];
    let mut s = String::from("rtl:\n");
    for e in 0..1 + p(0) % 2 {
        s += &format!("  \"{}\":\n", NAMES[p(1 + e) % NAMES.len()]);
        s += &format!("    instance: \"{}\"\n", NAMES[p(2 + e) % NAMES.len()]);
        if p(3) % 4 != 0 {
            s += &format!("    mode: {}\n", v(4 + e));
        }
        s += &format!("    sources: [\"{}\"]\n", v(5 + e));
        if p(6) % 2 == 0 {
            s += &format!("    top: \"{}\"\n", NAMES[p(7) % NAMES.len()]);
        }
        if p(8) % 2 == 0 {
            s += &format!("    timeout_s: {}\n", v(9));
        }
        if p(10) % 2 == 0 {
            s += &format!(
                "    map: {{\"{}\": \"{}\"}}\n",
                NAMES[p(11) % NAMES.len()],
                TEXTS[p(12) % TEXTS.len()]
            );
        }
    }
    s
}

#[test]
fn generated_views_connects_rtl_entries_and_traces_load_run_or_are_refused_with_a_place() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bases: Vec<(PathBuf, String)> = [
        "tb/go_back_n.yaml",
        "tb/modules/rx_modules_chain.yaml",
        "tb/rtl/rr_pointer_replace.yaml",
    ]
    .iter()
    .map(|f| {
        let p = root.join(f);
        let t = std::fs::read_to_string(&p).expect("readable testbench");
        (p, t)
    })
    .collect();
    let out = std::env::temp_dir().join(format!("hwsim-fuzz-structured-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0..bases.len(), 0..16u8, prop::collection::vec(0..1000usize, 24));
    // How the cases ended: ran, refused at load, refused at elaboration or run.
    let ends = [(); 3].map(|_| std::sync::atomic::AtomicUsize::new(0));
    let end = |k: usize| ends[k].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    runner
        .run(&strategy, |(b, what, picks)| {
            let (path, base) = &bases[b];
            let mut t = base.clone();
            if what & 1 != 0 {
                t = without_block(&t, "view") + &view_block(&picks);
            }
            if what & 2 != 0 && t.contains("\nconnect:\n") {
                t = t.replacen(
                    "\nconnect:\n",
                    &format!("\nconnect:\n{}", connect_items(&picks[3..])),
                    1,
                );
            }
            if what & 4 != 0 {
                t = without_block(&t, "rtl") + &rtl_block(&picks[5..]);
            }
            // --trace: up to three globs (none: the view's or everything).
            let trace: Vec<String> = if what & 8 != 0 {
                (0..1 + picks[20] % 3)
                    .map(|k| NAMES[picks[21 + k] % NAMES.len()].to_string())
                    .collect()
            } else {
                Vec::new()
            };
            let shown = format!("--trace {trace:?}\n{t}");
            in_time("load, elaborate and run", &shown, || -> Result<(), TestCaseError> {
                let mut l = match testbench::load_text(path, t.clone()) {
                    Ok(l) => l,
                    Err(e) => {
                        end(1);
                        return has_place(&e, &shown);
                    }
                };
                l.max_memory = 1 << 30;
                // One case in eight writes a VCD file and its save file (titles reach it); the
                // others the same VCD into a sink, which costs no file system time.
                let (vcd, vcd_writer): (_, Option<Box<dyn std::io::Write>>) = if picks[23] % 8 == 0 {
                    (Some(out.join("w.vcd")), None)
                } else {
                    (None, Some(Box::new(std::io::sink())))
                };
                let opts = runner::Options {
                    vcd,
                    vcd_writer,
                    until: Some(20),
                    trace,
                    ..runner::Options::default()
                };
                match runner::run_loaded(&l, opts) {
                    Ok(_) => {
                        end(0);
                        Ok(())
                    }
                    Err(e) => {
                        end(2);
                        // `--trace` errors are placed at `--trace` (no line: the quoted glob).
                        let placed = e.line.is_some() || e.message.contains('`') || e.file.ends_with("--trace");
                        prop_assert!(placed, "no place in `{e}` for\n{shown}");
                        prop_assert!(!e.to_string().contains('\n'), "one line: `{e}`");
                        Ok(())
                    }
                }
            })?
        })
        .unwrap();
    let _ = std::fs::remove_dir_all(&out);
    // The generator reaches every stage: a fuzzer whose cases were all refused at load would
    // test the YAML reader alone.
    let ends = ends.map(|a| a.into_inner());
    let n: usize = ends.iter().sum();
    eprintln!(
        "structured fuzz: {n} cases: {} ran, {} refused at load, {} refused at elaboration or run",
        ends[0], ends[1], ends[2]
    );
    assert!(
        ends.iter().all(|&k| k * 20 >= n),
        "each ending in ≥ 5 % of the cases: {ends:?}"
    );
}
