//! Whole testbenches through the root crate's runner (YAML load, elaboration, run, checks):
//!
//! - `testbenches/w3_pipeline_100`: tb/perf/w3_pipeline_100.yaml cut to 20 000 cycles
//!   (throughput in component activations);
//! - `testbenches/fifo_backpressure`: tb/modules/fifo_backpressure.yaml as written;
//! - `testbenches/w1_switch16_l05`, `…_l09`: the W1 switch (tb/perf/w1_*.yaml) cut to 50 000
//!   cycles (throughput in simulated cycles);
//! - `testbenches/w2_sparse_1e4`: W2 at load 10^-4 as written, 10^7 cycles (event skip);
//! - `testbenches/w4_system_a2a`: W4 (8 chips all-to-all on one switch) cut to its first
//!   50 µs (50 000 cycles; the whole 1 ms takes seconds: `hwsim tb/perf/w4_system_a2a.yaml
//!   --stats`);
//! - the system testbenches go_back_n, a1, a7 as written.
//!
//! CI only builds these (`cargo bench --no-run`); run them with `cargo bench --bench testbenches`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hwsim::runner::{run_file, Options, Report};

fn tb(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The file name without `.yaml`: the bench's name.
fn label(name: &str) -> String {
    name.rsplit('/')
        .next()
        .unwrap_or(name)
        .trim_end_matches(".yaml")
        .to_string()
}

fn run(path: &Path, until: Option<u64>) -> Report {
    let opts = Options {
        until,
        ..Options::default()
    };
    run_file(path, opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn bench_testbenches(c: &mut Criterion) {
    let mut g = c.benchmark_group("testbenches");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));

    let w3 = tb("tb/perf/w3_pipeline_100.yaml");
    let first = run(&w3, Some(20_000));
    assert_eq!(first.cycles, 20_000, "{}", first.render(false, true));
    assert!(first.error.is_none(), "{}", first.render(false, true));
    g.throughput(Throughput::Elements(first.stats.activations));
    g.bench_function("w3_pipeline_100", |b| b.iter(|| black_box(run(&w3, Some(20_000)))));

    let fifo = tb("tb/modules/fifo_backpressure.yaml");
    let first = run(&fifo, None);
    assert!(first.passed, "{}", first.render(true, true));
    g.throughput(Throughput::Elements(first.stats.activations));
    g.bench_function("fifo_backpressure", |b| b.iter(|| black_box(run(&fifo, None))));

    // Issue 13's workloads, cut where a whole run would take seconds (throughput in simulated
    // cycles; a cut run is compared, not checked: its verdict may fail).
    for (name, until) in [
        ("tb/perf/w1_switch16_l05.yaml", Some(50_000)),
        ("tb/perf/w1_switch16_l09.yaml", Some(50_000)),
        ("tb/perf/w2_sparse_1e4.yaml", None),
        ("tb/perf/w4_system_a2a.yaml", Some(50_000)),
    ] {
        let path = tb(name);
        let first = run(&path, until);
        assert!(first.error.is_none(), "{}", first.render(false, true));
        assert!(until.is_some() || first.passed, "{}", first.render(true, true));
        g.throughput(Throughput::Elements(first.cycles));
        g.bench_function(label(name), |b| b.iter(|| black_box(run(&path, until))));
    }

    // System testbenches: the chip-to-chip model end to end (throughput in simulated cycles).
    for name in [
        "tb/go_back_n.yaml",
        "tb/acceptance/a1_p2p_bandwidth.yaml",
        "tb/acceptance/a7_rx_cap_incast.yaml",
    ] {
        let path = tb(name);
        let first = run(&path, None);
        assert!(first.passed, "{}", first.render(true, true));
        g.throughput(Throughput::Elements(first.cycles));
        g.bench_function(label(name), |b| b.iter(|| black_box(run(&path, None))));
    }
    g.finish();
}

criterion_group!(benches, bench_testbenches);
criterion_main!(benches);
