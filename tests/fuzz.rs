//! Fuzzing the loader and elaboration in process (issue 15): every testbench under tb/ mutated
//! (bytes cut, lines repeated or swapped, numbers replaced by extremes, brackets inserted), plus
//! random YAML documents. Each case must load and elaborate, or be refused with an error that
//! has a place (file:line:col, or a quoted instance, port or field); never a panic.
//!
//! `HWSIM_FUZZ_CASES=1000000 cargo test --release --test fuzz` runs a longer campaign (default
//! 10 000 cases in all).

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
