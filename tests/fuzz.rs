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
//! `HWSIM_FUZZ_CASES=1000000 cargo test --release --test fuzz` runs a longer campaign (default
//! 10 000 cases for the testbenches and 10 000 for the other readers).

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

/// `f` must end within 10 s.
fn in_time<T>(what: &str, text: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let t0 = std::time::Instant::now();
    let r = f();
    let dt = t0.elapsed();
    prop_assert!(
        dt.as_secs() < 10,
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
