//! Kernel micro-benchmarks (criterion), built from `hwsim_modules::kernel_examples`:
//!
//! - `idle/timer_1e9`: one timer with a period of 10^6 run for 10^9 cycles under event skip
//!   (1000 executed cycles): the cost of simulated time must be milliseconds, not seconds;
//! - `w3_chain/{100,1000}`: the W3 workload, a counter feeding N clocked +1 registers, for 10 000
//!   cycles; throughput is in component activations, so criterion reports activations/s;
//! - `pipeline/*`: producer → FIFO → consumer; a dense stream (every cycle) and a sparse one (one
//!   message every 100 cycles) with event skip on and off, to show the skip ratio;
//! - `comb_chain/1000`: the counter feeding 1000 combinational +1 stages and a register, for
//!   10 000 cycles: every stage ticks every cycle in its level of the static order, so the
//!   activations/s sit beside `w3_chain/1000` (the same work with registered stages);
//! - `boundary/{fused,split4}`: the price of a module boundary (issue 45): four stages of
//!   datapath logic (`stage`, 12 mixing rounds + 1 each) between two registers as one block, and
//!   as four blocks joined by three combinational connections (one same-cycle cluster), for
//!   10 000 cycles; the same values every cycle, so the time ratio is what three boundaries cost
//!   (the callgrind figure: docs/performance.md).
//!
//! Elaboration happens in the untimed setup of each iteration; only `Sim::run` is measured.
//! CI only builds these (`cargo bench --no-run`); run them with `cargo bench --bench kernel`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use hwsim_hw::{Netlist, Sim, Stop};
use hwsim_modules::kernel_examples::{add1, consumer, counter, fifo, producer, stage, timer};

/// Adds an instance of a kernel example block with its parameters.
macro_rules! add_block {
    ($nl:expr, $path:expr, $block:ident, $params:expr) => {{
        let p: $block::Params = $params;
        $nl.add(
            $path,
            stringify!($block),
            $block::ports(&p),
            Box::new(move |b| $block::build(&p, b)),
        )
        .expect("add instance");
    }};
}

fn idle_timer(period: u64) -> Sim {
    let mut nl = Netlist::new();
    add_block!(nl, "tb.timer", timer, timer::Params { period });
    nl.elaborate(1).expect("elaborates")
}

/// W3: `src` (free-running counter) → stage0 → … → stage{n-1}, each `out = in + 1`.
fn w3_chain(n: usize) -> Sim {
    let mut nl = Netlist::new();
    add_block!(nl, "src", counter, counter::Params::default());
    for i in 0..n {
        add_block!(nl, &format!("stage{i}"), add1, add1::Params::default());
    }
    nl.connect("src.count", "stage0.in", None).expect("connect");
    for i in 1..n {
        nl.connect(&format!("stage{}.out", i - 1), &format!("stage{i}.in"), None)
            .expect("connect");
    }
    nl.elaborate(1).expect("elaborates")
}

/// `src` → stage0 (registered in, comb out) → … → stage{n-1} (comb) → `dst` (comb in,
/// registered out): a combinational path of n stages between two registers.
fn comb_chain(n: usize) -> Sim {
    use add1::Side::{Comb, Registered};
    let mut nl = Netlist::new();
    add_block!(nl, "src", counter, counter::Params::default());
    for i in 0..n {
        let input = if i == 0 { Registered } else { Comb };
        add_block!(nl, &format!("stage{i}"), add1, add1::Params { input, output: Comb });
    }
    add_block!(
        nl,
        "dst",
        add1,
        add1::Params {
            input: Comb,
            output: Registered
        }
    );
    nl.connect("src.count", "stage0.in", None).expect("connect");
    for i in 1..n {
        nl.connect(&format!("stage{}.out", i - 1), &format!("stage{i}.in"), None)
            .expect("connect");
    }
    nl.connect(&format!("stage{}.out", n - 1), "dst.in", None)
        .expect("connect");
    nl.elaborate(1).expect("elaborates")
}

/// `src` → four stages of `stage` logic → a register: one block (`split` false) or four blocks
/// joined combinationally.
fn boundary(split: bool) -> Sim {
    use stage::Side::{Comb, Registered};
    let mut nl = Netlist::new();
    add_block!(
        nl,
        "src",
        counter,
        counter::Params {
            start: 1,
            ..counter::Params::default()
        }
    );
    if split {
        let sides = [(Registered, Comb), (Comb, Comb), (Comb, Comb), (Comb, Registered)];
        for (i, (input, output)) in sides.into_iter().enumerate() {
            add_block!(
                nl,
                &format!("s{i}"),
                stage,
                stage::Params {
                    input,
                    output,
                    stages: 1,
                    work: 12
                }
            );
        }
        for i in 1..4 {
            nl.connect(&format!("s{}.out", i - 1), &format!("s{i}.in"), None)
                .expect("connect");
        }
    } else {
        add_block!(
            nl,
            "s3",
            stage,
            stage::Params {
                stages: 4,
                ..stage::Params::default()
            }
        );
    }
    let first = if split { "s0.in" } else { "s3.in" };
    nl.connect("src.count", first, None).expect("connect");
    nl.elaborate(1).expect("elaborates")
}

/// Producer → 4-deep FIFO → consumer.
fn pipeline(count: u64, interval: u64, skip: bool) -> Sim {
    let mut nl = Netlist::new();
    add_block!(
        nl,
        "src",
        producer,
        producer::Params {
            count,
            interval,
            ..producer::Params::default()
        }
    );
    add_block!(nl, "fifo", fifo, fifo::Params { depth: 4 });
    add_block!(nl, "snk", consumer, consumer::Params::default());
    nl.connect("src.out", "fifo.in", None).expect("connect");
    nl.connect("fifo.out", "snk.in", None).expect("connect");
    let mut sim = nl.elaborate(1).expect("elaborates");
    sim.set_skip(skip);
    sim
}

/// Runs once to learn the activation count (for the throughput) and check the run.
fn activations(mut sim: Sim, limit: u64) -> u64 {
    sim.run(limit).expect("runs");
    sim.stats().activations
}

fn bench_idle(c: &mut Criterion) {
    const PERIOD: u64 = 1_000_000;
    const LIMIT: u64 = 1_000_000_000;
    // Sanity: 10^9 cycles in 1000 executed ones.
    let mut sim = idle_timer(PERIOD);
    assert_eq!(sim.run(LIMIT).expect("runs"), Stop::Limit);
    assert_eq!(sim.now(), LIMIT);
    assert_eq!(sim.stats().cycles_executed, LIMIT / PERIOD);

    let mut g = c.benchmark_group("idle");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    // One element = one simulated cycle: criterion reports simulated cycles/s.
    g.throughput(Throughput::Elements(LIMIT));
    g.bench_function("timer_1e9", |b| {
        b.iter_batched(
            || idle_timer(PERIOD),
            |mut sim| black_box(sim.run(LIMIT).expect("runs")),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn bench_w3(c: &mut Criterion) {
    const CYCLES: u64 = 10_000;
    let mut g = c.benchmark_group("w3_chain");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for n in [100usize, 1000] {
        let acts = activations(w3_chain(n), CYCLES);
        // Every register ticks every cycle but once (see tb/perf/w3_pipeline_100.yaml).
        assert!(acts >= n as u64 * (CYCLES - 1), "{acts} activations");
        g.throughput(Throughput::Elements(acts));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_batched(
                || w3_chain(n),
                |mut sim| black_box(sim.run(CYCLES).expect("runs")),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn bench_comb(c: &mut Criterion) {
    const CYCLES: u64 = 10_000;
    let mut g = c.benchmark_group("comb_chain");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    let n = 1000usize;
    let acts = activations(comb_chain(n), CYCLES);
    // Every stage ticks in every cycle in which the counter's value changes: all but cycle 1.
    assert!(acts >= n as u64 * (CYCLES - 1), "{acts} activations");
    g.throughput(Throughput::Elements(acts));
    g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
        b.iter_batched(
            || comb_chain(n),
            |mut sim| black_box(sim.run(CYCLES).expect("runs")),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn bench_pipeline(c: &mut Criterion) {
    let mut g = c.benchmark_group("pipeline");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    // (name, messages, interval, skip, limit)
    let cases = [
        ("dense_10k", 10_000u64, 1u64, true, 1_000_000u64),
        ("sparse_1k_skip", 1_000, 100, true, 1_000_000),
        ("sparse_1k_noskip", 1_000, 100, false, 1_000_000),
    ];
    for (name, count, interval, skip, limit) in cases {
        let mut sim = pipeline(count, interval, skip);
        assert_eq!(sim.run(limit).expect("runs"), Stop::Quiescent);
        assert_eq!(sim.counter("snk.received"), Some(count));
        g.throughput(Throughput::Elements(sim.stats().activations));
        g.bench_function(name, |b| {
            b.iter_batched(
                || pipeline(count, interval, skip),
                |mut sim| black_box(sim.run(limit).expect("runs")),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn bench_boundary(c: &mut Criterion) {
    const CYCLES: u64 = 10_000;
    let mut g = c.benchmark_group("boundary");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    // The two forms give the same value at the end (the same logic).
    let end = |split: bool| {
        let mut sim = boundary(split);
        sim.run(CYCLES).expect("runs");
        let net = sim.net("s3.out").expect("the last stage's output");
        let s = net
            .as_any()
            .downcast_ref::<hwsim_hw::SignalNet<u64>>()
            .expect("a u64 signal");
        s.get()
    };
    assert_eq!(end(false), end(true));
    // One element = one simulated cycle.
    g.throughput(Throughput::Elements(CYCLES));
    for (name, split) in [("fused", false), ("split4", true)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || boundary(split),
                |mut sim| black_box(sim.run(CYCLES).expect("runs")),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_idle,
    bench_w3,
    bench_comb,
    bench_pipeline,
    bench_boundary
);
criterion_main!(benches);
