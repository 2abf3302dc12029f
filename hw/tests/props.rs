//! Property tests of the kernel contract on random small netlists: neither the evaluation order
//! inside a cycle (shuffled with several seeds) nor event skip (on/off) may change a result —
//! final counters, every net's log, the end of the run and the VCD bytes must be identical.
//!
//! The netlists are built from components defined here that honour the contract (they compute
//! from `now`, and a tick at a cycle where they have nothing to do changes nothing):
//! - `timer`: a signal `(now + phase) / period`, optionally frozen from a stop cycle;
//! - `adder`: a register `out = a + 3·b + k` over two earlier signals (chains and trees);
//! - `sampler`: pushes each new value of a signal into a stream (waits while it is full);
//! - `relay`: a stream stage with a latency and a small internal queue, adds 1;
//! - `sink`: pops with a random gap (from its own RNG stream) and drives `last`.

mod common;

use std::collections::VecDeque;
use std::fmt::Write as _;

use common::{add, add_popper, add_stage, comp, connect, counters, SharedBuf};
use hwsim_hw::{Netlist, PortDecl, SignalNet, Sim, Stop, StreamNet, TraceOptions, Wake};
use proptest::prelude::*;
use proptest::test_runner::Config;

// ------------------------------------------------------------------------------------------------
// Components

fn add_timer(nl: &mut Netlist, path: &str, t: TimerSpec) {
    let TimerSpec { period, phase, stop } = t;
    add(nl, path, "timer", vec![PortDecl::output::<u64>("out")], move |b| {
        let o = b.output::<u64>("out")?;
        let c = b.counter("epoch");
        comp(move |ctx| {
            let now = ctx.now();
            let at = stop.map_or(now, |s| now.min(s));
            let k = (at + phase) / period;
            o.set(k);
            ctx.set_counter(c, k);
            // The next boundary, or the stop cycle if sooner: the hint is the same at every
            // cycle of an interval, so extra ticks (skip off) change nothing.
            let next = (k + 1) * period - phase;
            match stop {
                Some(s) if now >= s => Wake::OnInput,
                Some(s) => Wake::At(next.min(s)),
                None => Wake::At(next),
            }
        })
    });
}

fn add_adder(nl: &mut Netlist, path: &str, k: u64) {
    add(
        nl,
        path,
        "adder",
        vec![
            PortDecl::input::<u64>("a"),
            PortDecl::input::<u64>("b"),
            PortDecl::output::<u64>("out"),
        ],
        move |b| {
            let a = b.input::<u64>("a")?;
            let bb = b.input::<u64>("b")?;
            let o = b.output::<u64>("out")?;
            let c = b.counter("updates");
            comp(move |ctx| {
                let v = a.get().wrapping_add(bb.get().wrapping_mul(3)).wrapping_add(k);
                if v != o.get() {
                    ctx.count(c, 1);
                }
                o.set(v);
                Wake::OnInput
            })
        },
    );
}

fn add_sampler(nl: &mut Netlist, path: &str) {
    add(
        nl,
        path,
        "sampler",
        vec![PortDecl::input::<u64>("in"), PortDecl::stream_out::<u64>("out")],
        |b| {
            let i = b.input::<u64>("in")?;
            let o = b.stream_out::<u64>("out")?;
            let c = b.counter("sampled");
            let mut last = 0u64;
            comp(move |ctx| {
                let v = i.get();
                if v != last && o.can_push() {
                    o.push(v);
                    last = v;
                    ctx.count(c, 1);
                }
                // Still behind while full: a pop downstream (or a new value) wakes us.
                Wake::OnInput
            })
        },
    );
}

fn add_relay(nl: &mut Netlist, path: &str, r: RelaySpec) {
    let RelaySpec {
        latency,
        queue,
        in_capacity,
    } = r;
    add_stage(nl, path, "relay", in_capacity, move |b, i, o| {
        let c = b.counter("relayed");
        let mut q: VecDeque<(u64, u64)> = VecDeque::new();
        comp(move |ctx| {
            let now = ctx.now();
            let mut pushed = false;
            if let Some(&(due, v)) = q.front() {
                if due <= now && o.can_push() {
                    o.push(v.wrapping_add(1));
                    q.pop_front();
                    ctx.count(c, 1);
                    pushed = true;
                }
            }
            if q.len() < queue {
                if let Some(v) = i.pop() {
                    q.push_back((now + latency, v));
                }
            }
            if !i.is_empty() && q.len() < queue {
                Wake::NextCycle
            } else if let Some(&(due, _)) = q.front() {
                if due > now {
                    Wake::At(due)
                } else if pushed {
                    Wake::NextCycle
                } else {
                    // Blocked on a full output: the consumer's pop wakes us.
                    Wake::OnInput
                }
            } else {
                Wake::OnInput
            }
        })
    });
}

/// Pops with a random gap (from its own RNG stream) and drives `last`.
fn add_sink(nl: &mut Netlist, path: &str, max_gap: u64, capacity: u32) {
    add_popper(nl, path, "sink", capacity, move |ctx| 1 + ctx.rng().below(max_gap));
}

// ------------------------------------------------------------------------------------------------
// Random netlists

#[derive(Clone, Copy, Debug)]
struct TimerSpec {
    period: u64,
    phase: u64,
    stop: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct RelaySpec {
    latency: u64,
    queue: usize,
    in_capacity: u32,
}

#[derive(Clone, Debug)]
struct PipeSpec {
    /// Index (modulo) into the signals.
    src: usize,
    relays: Vec<RelaySpec>,
    sink_gap: u64,
    sink_capacity: u32,
}

#[derive(Clone, Debug)]
struct Spec {
    timers: Vec<TimerSpec>,
    /// (a, b, k): a and b index (modulo) the signals defined before.
    adders: Vec<(usize, usize, u64)>,
    pipes: Vec<PipeSpec>,
}

fn timer_spec() -> impl Strategy<Value = TimerSpec> {
    (1u64..40, 0u64..40, prop::option::of(0u64..400)).prop_map(|(period, phase, stop)| TimerSpec {
        period,
        phase: phase % period,
        stop,
    })
}

fn relay_spec() -> impl Strategy<Value = RelaySpec> {
    (1u64..6, 1usize..4, 1u32..4).prop_map(|(latency, queue, in_capacity)| RelaySpec {
        latency,
        queue,
        in_capacity,
    })
}

fn pipe_spec() -> impl Strategy<Value = PipeSpec> {
    (0usize..64, prop::collection::vec(relay_spec(), 0..4), 1u64..5, 1u32..4).prop_map(
        |(src, relays, sink_gap, sink_capacity)| PipeSpec {
            src,
            relays,
            sink_gap,
            sink_capacity,
        },
    )
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::collection::vec(timer_spec(), 1..4),
        prop::collection::vec((0usize..64, 0usize..64, 0u64..5), 0..10),
        prop::collection::vec(pipe_spec(), 0..4),
    )
        .prop_map(|(timers, adders, pipes)| Spec { timers, adders, pipes })
}

fn build(spec: &Spec) -> Netlist {
    let mut nl = Netlist::new();
    let mut signals: Vec<String> = Vec::new();
    for (i, t) in spec.timers.iter().enumerate() {
        let p = format!("clk.t{i}");
        add_timer(&mut nl, &p, *t);
        signals.push(format!("{p}.out"));
    }
    for (j, &(a, b, k)) in spec.adders.iter().enumerate() {
        let p = format!("core.add{j}");
        add_adder(&mut nl, &p, k);
        let (sa, sb) = (&signals[a % signals.len()], &signals[b % signals.len()]);
        connect(&mut nl, sa, &format!("{p}.a"));
        connect(&mut nl, sb, &format!("{p}.b"));
        signals.push(format!("{p}.out"));
    }
    for (n, pipe) in spec.pipes.iter().enumerate() {
        let base = format!("io.pipe{n}");
        let src = format!("{base}.src");
        add_sampler(&mut nl, &src);
        connect(&mut nl, &signals[pipe.src % signals.len()], &format!("{src}.in"));
        let mut up = format!("{src}.out");
        for (r, rs) in pipe.relays.iter().enumerate() {
            let p = format!("{base}.r{r}");
            add_relay(&mut nl, &p, *rs);
            connect(&mut nl, &up, &format!("{p}.in"));
            up = format!("{p}.out");
        }
        let snk = format!("{base}.snk");
        add_sink(&mut nl, &snk, pipe.sink_gap, pipe.sink_capacity);
        connect(&mut nl, &up, &format!("{snk}.in"));
    }
    nl
}

// ------------------------------------------------------------------------------------------------
// Running and comparing

/// Everything a run produces that must not depend on skip or evaluation order.
#[derive(Debug, PartialEq)]
struct Outcome {
    result: Result<Stop, String>,
    now: u64,
    counters: Vec<(String, u64)>,
    /// One line per net: its path and its log of changes (signals) or pushes (streams).
    logs: String,
    vcd: String,
}

fn net_logs(sim: &Sim) -> String {
    let mut s = String::new();
    for p in sim.net_paths() {
        let any = sim.net(p).expect("net by path").as_any();
        if let Some(n) = any.downcast_ref::<SignalNet<u64>>() {
            let _ = writeln!(s, "{p} = {:?}", n.log().as_ref().expect("logged"));
        } else if let Some(n) = any.downcast_ref::<StreamNet<u64>>() {
            let _ = writeln!(
                s,
                "{p} <= {:?} (occupancy {})",
                n.log().as_ref().expect("logged"),
                n.occupancy()
            );
        } else {
            panic!("unexpected net type at {p}");
        }
    }
    s
}

fn run(
    spec: &Spec,
    seed: u64,
    limit: u64,
    skip: bool,
    shuffle: Option<u64>,
    opts: &TraceOptions,
) -> (Outcome, hwsim_hw::Stats) {
    run_chunked(spec, seed, &[], limit, skip, shuffle, opts)
}

/// Runs to each of `stops` in turn (stopping early if quiescent), then to `limit`.
fn run_chunked(
    spec: &Spec,
    seed: u64,
    stops: &[u64],
    limit: u64,
    skip: bool,
    shuffle: Option<u64>,
    opts: &TraceOptions,
) -> (Outcome, hwsim_hw::Stats) {
    let mut sim = build(spec).elaborate(seed).expect("elaborates");
    sim.set_skip(skip);
    sim.set_shuffle(shuffle);
    for p in sim.net_paths().to_vec() {
        sim.net(&p).unwrap().enable_log();
    }
    let buf = SharedBuf::default();
    sim.trace_vcd(Box::new(buf.clone()), opts.clone()).unwrap();
    let mut result = Ok(Stop::Limit);
    for &l in stops.iter().chain([&limit]) {
        result = sim.run(l).map_err(|e| e.to_string());
        if result != Ok(Stop::Limit) {
            break;
        }
    }
    let now = sim.now();
    sim.finish_trace(now).unwrap();
    let outcome = Outcome {
        result,
        now,
        counters: counters(&sim),
        logs: net_logs(&sim),
        vcd: buf.text(),
    };
    (outcome, sim.stats())
}

/// Compares outcomes field by field so a failure names what differed.
fn same(base: &Outcome, other: &Outcome, what: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(&base.result, &other.result, "result, {}", what);
    prop_assert_eq!(base.now, other.now, "end cycle, {}", what);
    prop_assert_eq!(&base.counters, &other.counters, "counters, {}", what);
    prop_assert_eq!(&base.logs, &other.logs, "net logs, {}", what);
    prop_assert!(base.vcd == other.vcd, "VCD bytes differ, {}", what);
    Ok(())
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Shuffled evaluation order and event skip on/off leave every result unchanged.
    #[test]
    fn order_and_skip_never_change_results(
        spec in spec(),
        seed in any::<u64>(),
        limit in 50u64..1500,
        shuffles in prop::collection::vec(any::<u64>(), 3),
    ) {
        let opts = TraceOptions::default();
        let (base, st_on) = run(&spec, seed, limit, true, None, &opts);
        prop_assert!(base.result.is_ok(), "run failed: {:?}", base.result);
        let (off, st_off) = run(&spec, seed, limit, false, None, &opts);
        same(&base, &off, "skip off")?;
        prop_assert!(st_on.activations <= st_off.activations);
        prop_assert!(st_on.cycles_executed <= st_off.cycles_executed);
        for &sh in &shuffles {
            let (o, _) = run(&spec, seed, limit, true, Some(sh), &opts);
            same(&base, &o, &format!("shuffle {sh}"))?;
            let (o, _) = run(&spec, seed, limit, false, Some(sh), &opts);
            same(&base, &o, &format!("shuffle {sh}, skip off"))?;
        }
        // Same seed again: the same bytes.
        let (again, _) = run(&spec, seed, limit, true, None, &opts);
        same(&base, &again, "rerun")?;
    }

    /// A trace window gives the same bytes with skip on and off, whatever the window.
    #[test]
    fn trace_windows_are_identical_with_skip_on_and_off(
        spec in spec(),
        seed in any::<u64>(),
        from in 0u64..300,
        len in 1u64..300,
        glob in prop::sample::select(vec!["", "clk", "core.*", "io.pipe0", "*.out", "*snk*"]),
    ) {
        let opts = TraceOptions {
            globs: if glob.is_empty() { vec![] } else { vec![glob.to_string()] },
            from: Some(from),
            to: Some(from + len),
            ..TraceOptions::default()
        };
        let (on, _) = run(&spec, seed, 400, true, None, &opts);
        let (off, _) = run(&spec, seed, 400, false, None, &opts);
        same(&on, &off, "windowed trace, skip off")?;
        // Nothing before the window: the first timestamp, if any, is `from`.
        let first = on.vcd.lines().find(|l| l.starts_with('#'));
        if let Some(first) = first {
            prop_assert_eq!(first, format!("#{from}"));
        }
    }

    /// Running in chunks (several `run` calls to growing limits) is the same as one run.
    #[test]
    fn chunked_runs_equal_one_run(
        spec in spec(),
        seed in any::<u64>(),
        mut stops in prop::collection::vec(0u64..800, 1..6),
        skip in any::<bool>(),
    ) {
        stops.sort_unstable();
        let opts = TraceOptions::default();
        let (one, _) = run(&spec, seed, 800, skip, None, &opts);
        let (chunked, _) = run_chunked(&spec, seed, &stops, 800, skip, None, &opts);
        same(&one, &chunked, &format!("chunked at {stops:?}"))?;
    }
}
