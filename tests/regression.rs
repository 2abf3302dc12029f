//! The testbench regression: every tb/**/*.yaml runs with event skip on and off, and must pass
//! with identical verdicts, counters, end cycle and VCD bytes both ways. Each VCD is read back
//! with an independent reader (wellen) to check that it parses, its timescale is 1 ns, and every
//! variable has a value at the first timestamp. The testbenches are independent and run on one
//! worker per core (`HWSIM_TEST_THREADS` overrides); each prints its time with `--nocapture`.
//!
//! What the skip / no-skip comparison covers. `--no-skip` ticks every process of every block
//! every cycle, which a 64-chip fabric or an incast of 400 000 cycles turns into minutes per
//! testbench. So the comparison has a budget, [`NO_SKIP_BUDGET`] process-cycles: a testbench
//! whose processes × cycles stay under it is compared over its whole length; one above it runs
//! whole with event skip (it must pass and give its golden, and its VCD is read back) and is
//! compared over the first `NO_SKIP_BUDGET / processes` cycles, both runs cut there by the same
//! `until` override. The performance workloads (tb/perf/, issue 13) are long by design (W2 is
//! 10^7 cycles, W5 a 64-chip fabric for 1 ms): they run once at full length with event skip and
//! no trace, and must pass (their speed is measured in `cargo bench --bench testbenches` and on
//! the command line with `--stats`), and the pair is compared over the first [`PERF_PREFIX`]
//! cycles; the few testbenches in [`LONG`] (a long idle stretch is their point) take the same
//! rule. A prefix need not meet the testbench's expectations, so its verdict is compared, not
//! required. `HWSIM_NO_SKIP_FULL=1` lifts the budget (each testbench outside tb/perf/ and
//! [`LONG`] compared over its whole length, as before the budget: about half an hour on CI's
//! two cores).
//!
//! Every testbench's report (verdict, end cycle, checks, metrics, flows, counters; the full-length
//! run's for the long ones) must equal its golden under tests/golden/, recorded before the
//! blocks were moved into netlist nodes (issue 25): code that carries timing may move, figures
//! may not, unless the commit that changes one says why and updates the golden
//! (`HWSIM_BLESS=1 cargo test --release --test regression` rewrites them all).

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use common::root;
use hwsim::regress::find_testbenches;
use hwsim::runner::{run_file, Options, Report};
use hwsim_hw::SharedBuffer as SharedBuf;

/// Where the skip / no-skip comparison of a tb/perf/ workload stops (see the header).
const PERF_PREFIX: u64 = 20_000;

/// Testbenches outside tb/perf/ that take the same rule: their point is a long idle stretch that
/// event skip crosses at once and --no-skip would tick through for many minutes (the multicast
/// timeout finding waits out the seed's 64 M cycles).
const LONG: [&str; 1] = ["tb/spec_findings/multicast_lost_copies_stall.yaml"];

/// The testbenches that take longest here (W5's full millisecond of 64 chips, the 64-chip
/// incast with its trace): started first.
const FIRST: [&str; 2] = ["tb/perf/w5_scale_incast64.yaml", "tb/cc/incast64.yaml"];

fn run(tb: &Path, no_skip: bool) -> (Report, Vec<u8>) {
    run_until(tb, no_skip, None).unwrap_or_else(|e| panic!("{e}"))
}

fn run_until(tb: &Path, no_skip: bool, until: Option<u64>) -> Result<(Report, Vec<u8>), String> {
    let buf = SharedBuf::default();
    let opts = Options {
        no_skip,
        until,
        vcd_writer: Some(Box::new(buf.clone())),
        ..Options::default()
    };
    let report = run_file(tb, opts).map_err(|e| e.to_string())?;
    let bytes = buf.bytes();
    Ok((report, bytes))
}

/// Parses a VCD with wellen and checks the basics; returns (var count, max width seen).
fn check_vcd(name: &str, bytes: Vec<u8>) -> usize {
    let mut w = wellen::simple::read_from_reader(std::io::Cursor::new(bytes))
        .unwrap_or_else(|e| panic!("{name}: wellen cannot read the VCD: {e:?}"));
    let h = w.hierarchy();
    let ts = h.timescale().expect("timescale");
    assert_eq!(
        (ts.factor, format!("{:?}", ts.unit)),
        (1, "NanoSeconds".to_string()),
        "{name}: timescale"
    );
    let vars: Vec<_> = h.all_vars().map(|r| (h[r].full_name(h), h[r].signal_ref())).collect();
    assert!(!vars.is_empty(), "{name}: no variables");
    let first = *w.time_table().first().expect("a timestamp");
    let refs: Vec<_> = vars.iter().map(|(_, r)| *r).collect();
    w.load_signals(&refs);
    for (full, r) in &vars {
        let s = w.get_signal(*r).expect("loaded");
        let t0 = s.get_first_time_idx().map(|i| w.time_table()[i as usize]);
        assert_eq!(
            t0,
            Some(first),
            "{name}: `{full}` has no value at the first timestamp #{first}"
        );
    }
    vars.len()
}

/// The golden report of a testbench: everything a run reports that must not move when code is
/// moved (verdict, end cycle, checks, metrics, flows, every counter), one item per line so a
/// change shows as a diff, and no timing statistics.
fn golden_text(name: &str, r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# The report of {name}, compared by tests/regression.rs.");
    let _ = writeln!(
        s,
        "# Regenerate after a change that is meant to move it: HWSIM_BLESS=1 cargo test --release --test regression"
    );
    let _ = writeln!(s, "testbench {}", r.testbench);
    let _ = writeln!(s, "seed {}", r.seed);
    let _ = writeln!(s, "passed {}", r.passed);
    let _ = writeln!(s, "cycles {}", r.cycles);
    let _ = writeln!(s, "error {}", r.error.as_deref().unwrap_or("-"));
    for c in &r.checks {
        let _ = writeln!(
            s,
            "check {} | {} | expected {} | actual {}",
            c.name,
            if c.passed { "PASS" } else { "FAIL" },
            c.expected,
            c.actual
        );
    }
    for (k, v) in &r.metrics {
        let _ = writeln!(s, "metric {k} {v:?}");
    }
    for f in &r.flows {
        let _ = writeln!(
            s,
            "flow {} bytes {} first {} last {} goodput {:?} latency_mean {:?} latency_max {}",
            f.name, f.bytes, f.first_byte, f.last_byte, f.goodput, f.latency_mean, f.latency_max
        );
    }
    for (k, v) in &r.counters {
        let _ = writeln!(s, "counter {k} {v}");
    }
    s
}

/// tests/golden/<path under tb/ with `/` as `__`>.txt
fn golden_path(tb: &Path) -> PathBuf {
    let rel = tb.strip_prefix(root().join("tb")).unwrap_or(tb);
    let flat = rel.with_extension("").to_string_lossy().replace(['/', '\\'], "__");
    root().join("tests/golden").join(format!("{flat}.txt"))
}

/// Compares a run's report with its golden (or writes it with `HWSIM_BLESS=1`); returns the
/// first lines that differ, if any.
fn check_golden(tb: &Path, name: &str, r: &Report) -> Option<String> {
    let text = golden_text(name, r);
    let path = golden_path(tb);
    if std::env::var_os("HWSIM_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("create tests/golden");
        std::fs::write(&path, &text).expect("write a golden");
        return None;
    }
    let Ok(want) = std::fs::read_to_string(&path) else {
        return Some(format!(
            "{name}: no golden at {} (HWSIM_BLESS=1 writes it)",
            path.display()
        ));
    };
    if want == text {
        return None;
    }
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), text.lines().collect());
    let only_w: Vec<&str> = w.iter().filter(|l| !g.contains(l)).take(8).copied().collect();
    let only_g: Vec<&str> = g.iter().filter(|l| !w.contains(l)).take(8).copied().collect();
    Some(format!(
        "{name}: report differs from {}\n  golden only: {only_w:#?}\n  now only:    {only_g:#?}",
        path.display()
    ))
}

/// What a `--no-skip` comparison may cost, in process-cycles (the processes of the netlist times
/// the cycles compared; about 70 ns each on a machine of CI's kind). A testbench under it is
/// compared over its whole length; one over it (a 64-chip fabric, an incast of a few hundred
/// thousand cycles) over the first `NO_SKIP_BUDGET / processes` cycles, both runs cut there by
/// the same `until`, and must agree on verdicts, checks, counters, end cycle and VCD bytes (see
/// the header). The full-length run with event skip still runs, passes and gives its golden.
const NO_SKIP_BUDGET: u64 = 100_000_000;

/// [`NO_SKIP_BUDGET`], or no limit with `HWSIM_NO_SKIP_FULL=1` (every testbench compared over
/// its whole length: the same check for a run that can take its time).
fn no_skip_budget() -> u64 {
    if std::env::var_os("HWSIM_NO_SKIP_FULL").is_some() {
        u64::MAX
    } else {
        NO_SKIP_BUDGET
    }
}

/// The processes a run's netlist ticks per cycle with `--no-skip`: every process of every block.
fn processes(r: &Report) -> u64 {
    r.stats.by_kind.iter().map(|k| k.instances).sum::<u64>().max(1)
}

/// The earliest cycle a prefix may end at: after every flow's start and the warm-up's opening
/// (the runner refuses a run that ends before them, `runner::validate_run`).
fn earliest_cut(f: &Path) -> u64 {
    let Ok(l) = hwsim::testbench::load(f) else {
        return 1;
    };
    let starts = l.tb.system.iter().flat_map(|s| &s.traffic).map(|t| t.start + 1);
    starts.chain(l.tb.metrics_from.map(|m| m + 1)).max().unwrap_or(1)
}

/// Compares a run with event skip against one without, both over the same cycles.
fn compare_skip(name: &str, a: &Report, vcd_a: &[u8], b: &Report, vcd_b: &[u8]) -> Result<(), String> {
    let differs = |what: &str| Err(format!("{name}: {what} differs with --no-skip"));
    if a.passed != b.passed {
        return differs("verdict");
    }
    if a.checks != b.checks {
        return differs("checks");
    }
    if a.counters != b.counters {
        return differs(&format!("counters ({:?} against {:?})", a.counters, b.counters));
    }
    if a.cycles != b.cycles {
        return differs(&format!("end cycle ({} against {})", a.cycles, b.cycles));
    }
    if vcd_a != vcd_b {
        let at = vcd_a
            .iter()
            .zip(vcd_b)
            .position(|(x, y)| x != y)
            .unwrap_or(vcd_a.len().min(vcd_b.len()));
        return differs(&format!("VCD (first difference at byte {at})"));
    }
    if a.stats.executed_cycles > b.stats.executed_cycles {
        return Err(format!("{name}: skip executed more cycles"));
    }
    Ok(())
}

/// One testbench's whole check: its run with event skip passes and equals its golden, and a run
/// with `--no-skip` over the same cycles (all of them, or a prefix: see [`NO_SKIP_BUDGET`] and
/// the header) gives the same verdict, checks, counters, end cycle and VCD bytes.
fn check_testbench(f: &Path, name: &str, long: bool) -> Result<(), String> {
    let mut vcd_checked = false;
    let prefix = if long {
        // The full length, once, with event skip and no trace: it must pass, and give its
        // golden report.
        let full = run_file(f, Options::default()).map_err(|e| e.to_string())?;
        if !full.passed {
            return Err(format!("{name} (full length):\n{}", full.render(false, false)));
        }
        check_golden(f, name, &full).map_or(Ok(()), Err)?;
        PERF_PREFIX
    } else {
        let (a, vcd_a) = run_until(f, false, None)?;
        if !a.passed {
            return Err(format!("{name}:\n{}", a.render(false, false)));
        }
        check_golden(f, name, &a).map_or(Ok(()), Err)?;
        let cut = (no_skip_budget() / processes(&a)).max(earliest_cut(f));
        if a.cycles <= cut {
            let (b, vcd_b) = run_until(f, true, None)?;
            compare_skip(name, &a, &vcd_a, &b, &vcd_b)?;
            check_vcd(name, vcd_a);
            return Ok(());
        }
        check_vcd(name, vcd_a);
        vcd_checked = true;
        cut
    };
    // Both runs cut at the prefix: a prefix need not meet the testbench's expectations, so its
    // verdict is compared, not required.
    let (a, vcd_a) = run_until(f, false, Some(prefix))?;
    let (b, vcd_b) = run_until(f, true, Some(prefix))?;
    if let Some(e) = &a.error {
        return Err(format!("{name} (first {prefix} cycles): {e}"));
    }
    compare_skip(&format!("{name} (first {prefix} cycles)"), &a, &vcd_a, &b, &vcd_b)?;
    if !vcd_checked {
        check_vcd(name, vcd_a);
    }
    Ok(())
}

#[test]
fn every_testbench_passes_identically_with_and_without_skip() {
    let mut files = find_testbenches(&root().join("tb"));
    assert!(files.len() >= 3, "testbenches found: {files:?}");
    // The longest runs first (a minute or more each), then the other system testbenches, so
    // the workers share the rest while they run and none is left alone with a long one at the
    // end.
    let rank = |f: &PathBuf| {
        if FIRST.iter().any(|l| f.ends_with(l)) {
            0
        } else if ["tb/perf", "tb/cc", "tb/acceptance", "tb/switch"]
            .iter()
            .any(|d| f.starts_with(root().join(d)))
        {
            1
        } else {
            2
        }
    };
    files.sort_by_key(rank);
    let perf = root().join("tb/perf");
    // tb/rtl/ runs RTL beside the model (crate::rtl): it needs Verilator, which CI installs
    // first; without it those testbenches are skipped here, with a line saying so.
    let rtl = root().join("tb/rtl");
    let verilator = std::process::Command::new("verilator")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    // The testbenches are independent: one worker per core (HWSIM_TEST_THREADS overrides), each
    // taking the next testbench in the list.
    let threads = std::env::var("HWSIM_TEST_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(f) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let name = f.strip_prefix(root()).unwrap_or(f).display().to_string();
                    if f.starts_with(&rtl) && !verilator {
                        eprintln!("{name}: skipped: verilator is not installed (Debian: apt-get install verilator)");
                        continue;
                    }
                    let long = f.starts_with(&perf) || LONG.iter().any(|l| f.ends_with(l));
                    let t0 = Instant::now();
                    let outcome = std::panic::catch_unwind(|| check_testbench(f, &name, long))
                        .unwrap_or_else(|p| Err(format!("{name}: panicked: {}", panic_text(&p))));
                    eprintln!("{name}: {:.1} s", t0.elapsed().as_secs_f64());
                    if let Err(e) = outcome {
                        failures.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    assert!(failures.is_empty(), "failing testbenches:\n{}", failures.join("\n"));
}

/// A panic's message.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn same_seed_same_bytes() {
    let f = root().join("tb/modules/fifo_backpressure.yaml");
    let (a, va) = run(&f, false);
    let (b, vb) = run(&f, false);
    assert_eq!(a.counters, b.counters);
    assert_eq!(va, vb);
}

#[test]
fn shuffled_evaluation_order_changes_nothing() {
    for f in [
        "tb/modules/fifo_backpressure.yaml",
        "tb/modules/add1_chain.yaml",
        // The static order of a combinational path holds; only the free order is shuffled.
        "tb/modules/comb_chain.yaml",
    ] {
        let f = root().join(f);
        let (base, vbase) = run(&f, false);
        for seed in 1..=4 {
            let buf = SharedBuf::default();
            let opts = Options {
                shuffle: Some(seed),
                vcd_writer: Some(Box::new(buf.clone())),
                ..Options::default()
            };
            let r = run_file(&f, opts).expect("runs");
            assert_eq!(r.checks, base.checks);
            assert_eq!(r.counters, base.counters);
            assert!(buf.bytes() == vbase, "VCD differs under shuffle seed {seed}");
        }
    }
}

#[test]
fn fifo_vcd_has_the_streams_fields_at_true_widths() {
    let (_, bytes) = run(&root().join("tb/modules/fifo_backpressure.yaml"), false);
    let text = String::from_utf8(bytes.clone()).expect("ascii");
    let mut w = wellen::simple::read_from_reader(std::io::Cursor::new(bytes)).expect("parses");
    let h = w.hierarchy();
    let width = |path: &[&str], name: &str| {
        let v = h
            .lookup_var(path, name)
            .unwrap_or_else(|| panic!("no var {path:?}.{name}\n{text}"));
        h[v].length(h)
    };
    assert_eq!(width(&["fifo", "out"], "valid"), Some(1));
    assert_eq!(width(&["fifo", "out"], "data"), Some(64));
    // A fifo of depth 4 feeds from src.out: occupancy 0..=4 needs 3 bits.
    assert_eq!(width(&["src", "out"], "occupancy"), Some(3));
    assert_eq!(width(&["snk"], "last"), Some(64));
    // src pushes at cycles 0..: valid is 1 at #0 and the last push is followed by a fall.
    let v = h.lookup_var(&["src", "out"], "valid").expect("var");
    let sref = h[v].signal_ref();
    w.load_signals(&[sref]);
    let s = w.get_signal(sref).expect("loaded");
    let changes: Vec<(u64, String)> = s
        .iter_changes()
        .map(|(i, val)| (w.time_table()[i as usize], val.to_bit_string().unwrap_or_default()))
        .collect();
    assert_eq!(changes.first(), Some(&(0, "1".to_string())), "{changes:?}");
    assert_eq!(changes.last().map(|(_, v)| v.as_str()), Some("0"), "{changes:?}");
    // Pulses: every rise is followed by a fall one or more cycles later, never two rises in a row.
    for pair in changes.windows(2) {
        assert_ne!(pair[0].1, pair[1].1, "repeated value in {changes:?}");
    }
}

#[test]
fn rh_fields_are_separate_signals_at_true_widths() {
    let (r, bytes) = run(&root().join("tb/modules/pipe_rh.yaml"), false);
    assert!(r.passed);
    let mut w = wellen::simple::read_from_reader(std::io::Cursor::new(bytes)).expect("parses");
    let h = w.hierarchy();
    for (name, width) in [
        ("opcode", 2),
        ("nak", 1),
        ("fack", 1),
        ("qp", 10),
        ("psn", 12),
        ("timestamp", 32),
        ("raw", 64),
    ] {
        let v = h
            .lookup_var(&["rhp", "out"], name)
            .unwrap_or_else(|| panic!("rhp.out.{name} missing"));
        assert_eq!(h[v].length(h), Some(width), "rhp.out.{name}");
    }
    // The first RH leaves the pipe at cycle 3 with PSN 4094 = 0b1111_1111_1110.
    let v = h.lookup_var(&["rhp", "out"], "psn").expect("psn");
    let sref = h[v].signal_ref();
    w.load_signals(&[sref]);
    let s = w.get_signal(sref).expect("loaded");
    let at3 = s
        .iter_changes()
        .find(|(i, _)| w.time_table()[*i as usize] == 3)
        .map(|(_, v)| v.to_bit_string().unwrap_or_default());
    assert_eq!(at3.as_deref(), Some("111111111110"));
}

/// The RC Link RX shows its modules' state as nested scopes (rx.psn_check.*, rx.ack_merge.*) at
/// the widths of the hardware fields.
#[test]
fn rx_module_state_is_nested_at_true_widths() {
    let (r, bytes) = run(&root().join("tb/modules/rclink_rx_ack_merge.yaml"), false);
    assert!(r.passed);
    let w = wellen::simple::read_from_reader(std::io::Cursor::new(bytes)).expect("parses");
    let h = w.hierarchy();
    for (scope, name, width) in [
        ("psn_check", "src", 16),
        ("psn_check", "qp", 10),
        ("psn_check", "epsn", 12),
        ("psn_check", "nak_pending", 1),
        ("credit_return", "credits_due", 16),
        ("ack_merge", "src", 16),
        ("ack_merge", "qp", 10),
        ("ack_merge", "pending", 13),
        ("ack_merge", "next_poll", 64),
        ("ack_merge", "last_ack", 12),
    ] {
        let v = h
            .lookup_var(&["rx", scope], name)
            .unwrap_or_else(|| panic!("rx.{scope}.{name} missing"));
        assert_eq!(h[v].length(h), Some(width), "rx.{scope}.{name}");
    }
}
