//! Integration tests of the kernel contract (DESIGN.md §2 and §3): two-phase commit, signal and
//! stream semantics, wake-ups, event skip, determinism, counters, elaboration errors, DOT, the
//! harness and VCD tracing. Each test builds a tiny netlist from components defined here.

mod common;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use common::{add, add_popper, add_stage, comp, connect, counters, SharedBuf};
use hwsim_hw::{
    Binder, Ctx, ElabError, Harness, In, Netlist, Out, PortDecl, Rng, SignalNet, Sim, SimError, Stop, StreamIn,
    StreamNet, StreamOut, Trace, TraceField, TraceOptions, TraceValue, Wake,
};

// ------------------------------------------------------------------------------------------------
// Helpers

type Log<T> = Rc<RefCell<Vec<T>>>;

fn log<T>() -> Log<T> {
    Rc::new(RefCell::new(Vec::new()))
}

fn elab(nl: Netlist) -> Sim {
    nl.elaborate(1).unwrap()
}

/// Elaborates with event skip on or off and an optional shuffle of the evaluation order.
fn elab_with(nl: Netlist, skip: bool, shuffle: Option<u64>) -> Sim {
    let mut sim = elab(nl);
    sim.set_skip(skip);
    sim.set_shuffle(shuffle);
    sim
}

/// Asserts that the `ElabError` `e` is the variant `$variant` and reads `$msg`.
macro_rules! assert_elab_err {
    ($e:expr, $variant:ident, $msg:expr) => {{
        let e = $e;
        assert!(matches!(e, ElabError::$variant { .. }), "{e:?}");
        assert_eq!(e.to_string(), $msg);
    }};
}

fn elab_err(nl: Netlist) -> ElabError {
    match nl.elaborate(1) {
        Ok(_) => panic!("elaboration should fail"),
        Err(e) => e,
    }
}

fn signal_log(sim: &Sim, path: &str) -> Vec<(u64, u64)> {
    let net = sim.net(path).unwrap_or_else(|| panic!("no net {path}"));
    let s = net.as_any().downcast_ref::<SignalNet<u64>>().expect("a u64 signal");
    s.log().expect("logging enabled").clone()
}

fn stream_log(sim: &Sim, path: &str) -> Vec<(u64, u64)> {
    let net = sim.net(path).unwrap_or_else(|| panic!("no net {path}"));
    let s = net.as_any().downcast_ref::<StreamNet<u64>>().expect("a u64 stream");
    let l = s.log();
    l.as_ref().expect("logging enabled").clone()
}

/// An instance of `kind` with the one port `decl`, bound by `bind`, ticking `f`.
fn add_one<P: 'static>(
    nl: &mut Netlist,
    path: &str,
    kind: &str,
    decl: PortDecl,
    bind: impl FnOnce(&Binder<'_>) -> Result<P, String> + 'static,
    mut f: impl FnMut(&mut Ctx<'_>, &P) -> Wake + 'static,
) {
    add(nl, path, kind, vec![decl], move |b| {
        let port = bind(b)?;
        comp(move |ctx| f(ctx, &port))
    });
}

/// An instance of `kind` with one u64 signal output `out`, ticking `f`.
fn add_driver(nl: &mut Netlist, path: &str, kind: &str, f: impl FnMut(&mut Ctx<'_>, &Out<u64>) -> Wake + 'static) {
    add_one(
        nl,
        path,
        kind,
        PortDecl::output::<u64>("out"),
        |b| b.output::<u64>("out"),
        f,
    );
}

/// An instance of `kind` with one u64 signal input `in`, ticking `f`.
fn add_reader(nl: &mut Netlist, path: &str, kind: &str, f: impl FnMut(&mut Ctx<'_>, &In<u64>) -> Wake + 'static) {
    add_one(
        nl,
        path,
        kind,
        PortDecl::input::<u64>("in"),
        |b| b.input::<u64>("in"),
        f,
    );
}

/// An instance of `kind` with one u64 stream output `out`, ticking `f`.
fn add_pusher(
    nl: &mut Netlist,
    path: &str,
    kind: &str,
    f: impl FnMut(&mut Ctx<'_>, &StreamOut<u64>) -> Wake + 'static,
) {
    let decl = PortDecl::stream_out::<u64>("out");
    add_one(nl, path, kind, decl, |b| b.stream_out::<u64>("out"), f);
}

/// An instance of `kind` with one u64 stream input `in` of `capacity`, ticking `f`.
fn add_puller(
    nl: &mut Netlist,
    path: &str,
    kind: &str,
    capacity: u32,
    f: impl FnMut(&mut Ctx<'_>, &StreamIn<u64>) -> Wake + 'static,
) {
    let decl = PortDecl::stream_in::<u64>("in", capacity);
    add_one(nl, path, kind, decl, |b| b.stream_in::<u64>("in"), f);
}

/// An instance of `kind` without ports, ticking `f`.
fn add_bare(nl: &mut Netlist, path: &str, kind: &str, f: impl FnMut(&mut Ctx<'_>) -> Wake + 'static) {
    add(nl, path, kind, vec![], move |_| comp(f));
}

/// Runs `nl` to cycle 100, which must fail.
fn run_err(nl: Netlist) -> SimError {
    elab(nl).run(100).unwrap_err()
}

/// Asserts that `err` is a protocol violation at `cycle` in `path`.
fn assert_protocol(err: &SimError, cycle: u64, path: &str) {
    assert!(
        matches!(err, SimError::Protocol { cycle: c, path: p, .. } if *c == cycle && p == path),
        "{err:?}"
    );
}

/// `NextCycle` while `busy`, else `OnInput`.
fn next_cycle_if(busy: bool) -> Wake {
    if busy {
        Wake::NextCycle
    } else {
        Wake::OnInput
    }
}

// ------------------------------------------------------------------------------------------------
// Reusable test components

/// `out` = now + 1 at every cycle.
fn add_clock_writer(nl: &mut Netlist, path: &str) {
    add_driver(nl, path, "clock_writer", |ctx, out| {
        out.set(ctx.now() + 1);
        Wake::NextCycle
    });
}

/// Logs `(now, in)` at every cycle.
fn add_sampler(nl: &mut Netlist, path: &str, l: Log<(u64, u64)>) {
    add_reader(nl, path, "sampler", move |ctx, i| {
        l.borrow_mut().push((ctx.now(), i.get()));
        Wake::NextCycle
    });
}

/// A register: `out(n) = f(in(n-1))`, woken on input only; logs the cycles it ticks.
fn add_reg(nl: &mut Netlist, path: &str, f: impl Fn(u64) -> u64 + 'static, ticks: Option<Log<u64>>) {
    add(
        nl,
        path,
        "reg",
        vec![PortDecl::input::<u64>("in"), PortDecl::output::<u64>("out")],
        move |b| {
            let i = b.input::<u64>("in")?;
            let o = b.output::<u64>("out")?;
            comp(move |ctx| {
                if let Some(t) = &ticks {
                    t.borrow_mut().push(ctx.now());
                }
                o.set(f(i.get()));
                Wake::OnInput
            })
        },
    );
}

/// Drives `out` to `v` from cycle `at` on (a step), idle otherwise.
fn add_step(nl: &mut Netlist, path: &str, at: u64, v: u64) {
    add_driver(nl, path, "step", move |ctx, o| {
        if ctx.now() >= at {
            o.set(v);
            Wake::OnInput
        } else {
            Wake::At(at)
        }
    });
}

/// Ticks only on input; logs the cycles it ticks and what it read.
fn add_listener(nl: &mut Netlist, path: &str, l: Log<(u64, u64)>) {
    add_reader(nl, path, "listener", move |ctx, i| {
        l.borrow_mut().push((ctx.now(), i.get()));
        Wake::OnInput
    });
}

/// Pushes `values[k]` at cycle `cycles[k]` (computed from `now`, so extra ticks change nothing).
fn add_scheduled_pusher(nl: &mut Netlist, path: &str, sched: Vec<(u64, u64)>) {
    let mut k = 0;
    add_pusher(nl, path, "pusher", move |ctx, o| {
        let now = ctx.now();
        while k < sched.len() && sched[k].0 < now {
            k += 1;
        }
        if k < sched.len() && sched[k].0 == now {
            o.push(sched[k].1);
            k += 1;
        }
        match sched.get(k) {
            Some(&(t, _)) => Wake::At(t),
            None => Wake::OnInput,
        }
    });
}

/// A stream consumer that never pops and ticks only on input.
fn add_hoarder(nl: &mut Netlist, path: &str, capacity: u32) {
    add_puller(nl, path, "hoarder", capacity, |_, _| Wake::OnInput);
}

/// Reports `msg` as a violation at cycle `at`; otherwise returns `wake`.
fn add_violator(nl: &mut Netlist, path: &str, kind: &str, at: u64, msg: &'static str, wake: Wake) {
    add_bare(nl, path, kind, move |ctx| {
        if ctx.now() == at {
            ctx.violation(msg);
        }
        wake
    });
}

/// Runs `netlist()` with skip on and off and several shuffles: all runs must fail with one error.
fn assert_one_error(netlist: fn() -> Netlist) {
    let mut seen = BTreeSet::new();
    for skip in [true, false] {
        for sh in [None, Some(1), Some(2), Some(3), Some(4)] {
            let mut sim = elab_with(netlist(), skip, sh);
            seen.insert(sim.run(100).unwrap_err().to_string());
        }
    }
    assert_eq!(seen.len(), 1, "different errors for one run: {seen:#?}");
}

// ------------------------------------------------------------------------------------------------
// Two-phase commit

fn two_phase_netlist(readers: &[Log<(u64, u64)>; 3], swap_a: Log<(u64, u64)>, chain: Log<(u64, u64)>) -> Netlist {
    let mut nl = Netlist::new();
    // Readers before and after the writer in elaboration order.
    add_sampler(&mut nl, "r0", readers[0].clone());
    add_clock_writer(&mut nl, "w");
    add_sampler(&mut nl, "r1", readers[1].clone());
    add_sampler(&mut nl, "r2", readers[2].clone());
    connect(&mut nl, "w.out", "r0.in");
    connect(&mut nl, "w.out", "r1.in");
    connect(&mut nl, "w.out", "r2.in");
    // w → c1 (×2, on input) → c2 (sampler).
    add_reg(&mut nl, "c1", |x| 2 * x, None);
    add_sampler(&mut nl, "c2", chain);
    connect(&mut nl, "w.out", "c1.in");
    connect(&mut nl, "c1.out", "c2.in");
    // Two registers swapping their values every cycle: 1 and 2 at cycle 0, then each takes the
    // other's. A one-phase kernel would make them equal in one of the two orders.
    for (me, init) in [("sa", 1u64), ("sb", 2u64)] {
        let l = (me == "sa").then(|| swap_a.clone());
        add(
            &mut nl,
            me,
            "swap",
            vec![PortDecl::input::<u64>("in"), PortDecl::output::<u64>("out")],
            move |b| {
                let i = b.input::<u64>("in")?;
                let o = b.output::<u64>("out")?;
                comp(move |ctx| {
                    let v = if ctx.now() == 0 { init } else { i.get() };
                    o.set(v);
                    if let Some(l) = &l {
                        l.borrow_mut().push((ctx.now(), v));
                    }
                    Wake::NextCycle
                })
            },
        );
    }
    connect(&mut nl, "sa.out", "sb.in");
    connect(&mut nl, "sb.out", "sa.in");
    nl
}

#[test]
fn two_phase_value_written_at_n_is_read_at_n_plus_1_in_any_order() {
    let mut shuffles: Vec<Option<u64>> = vec![None];
    shuffles.extend((1..=12).map(Some));
    for skip in [true, false] {
        for &sh in &shuffles {
            let readers = [log(), log(), log()];
            let (swap_a, chain) = (log(), log());
            let mut sim = elab_with(two_phase_netlist(&readers, swap_a.clone(), chain.clone()), skip, sh);
            assert_eq!(sim.run(50).unwrap(), Stop::Limit);
            for r in &readers {
                let r = r.borrow();
                assert_eq!(r.len(), 50);
                for &(n, v) in r.iter() {
                    // w wrote n at cycle n-1 and is writing n+1 now: a reader sees n, never n+1.
                    assert_eq!(v, n, "shuffle {sh:?}, skip {skip}: reader at cycle {n}");
                }
            }
            for &(n, v) in chain.borrow().iter() {
                let want = if n == 0 { 0 } else { 2 * (n - 1) };
                assert_eq!(v, want, "shuffle {sh:?}: chain at cycle {n}");
            }
            for &(n, v) in swap_a.borrow().iter() {
                assert_eq!(v, if n % 2 == 0 { 1 } else { 2 }, "shuffle {sh:?}: swap at {n}");
            }
        }
    }
}

#[test]
fn a_signal_rewritten_with_the_same_value_wakes_no_reader() {
    let ticks = log();
    let mut nl = Netlist::new();
    // Drives 7 at every cycle until 49, then 8.
    add_driver(&mut nl, "w", "const", |ctx, o| {
        o.set(if ctx.now() < 50 { 7 } else { 8 });
        Wake::NextCycle
    });
    add_listener(&mut nl, "r", ticks.clone());
    connect(&mut nl, "w.out", "r.in");
    let mut sim = elab(nl);
    sim.net("w.out").unwrap().enable_log();
    assert_eq!(sim.run(100).unwrap(), Stop::Limit);
    // Cycle 0 (everyone), 1 (0 → 7), 51 (7 → 8); the 48 rewrites of 7 wake nothing.
    assert_eq!(*ticks.borrow(), vec![(0, 0), (1, 7), (51, 8)]);
    assert_eq!(sim.stats().activations, 100 + 3);
    // Only real changes are logged.
    assert_eq!(signal_log(&sim, "w.out"), vec![(0, 7), (50, 8)]);
}

#[test]
fn last_write_in_a_cycle_wins_and_a_write_back_to_the_old_value_is_no_change() {
    let ticks = log();
    let mut nl = Netlist::new();
    add_driver(&mut nl, "w", "glitch", |ctx, o| match ctx.now() {
        0 => {
            o.set(3);
            o.set(5);
            Wake::At(10)
        }
        10 => {
            // A glitch back to the committed value within one cycle: no change.
            o.set(9);
            o.set(5);
            Wake::OnInput
        }
        _ => Wake::OnInput,
    });
    add_listener(&mut nl, "r", ticks.clone());
    connect(&mut nl, "w.out", "r.in");
    let mut sim = elab(nl);
    assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
    assert_eq!(*ticks.borrow(), vec![(0, 0), (1, 5)]);
    assert_eq!(sim.now(), 11);
}

/// Drives `values[k]` at cycle k (then holds), read by a listener; returns the listener's
/// wake-ups `(cycle, value)` and, if `logged`, the signal's change log.
#[allow(clippy::type_complexity)]
fn drive_values<T: hwsim_hw::SignalValue>(values: &[T], logged: bool) -> (Vec<(u64, T)>, Option<Vec<(u64, T)>>) {
    let seen: Log<(u64, T)> = log();
    let vals = values.to_vec();
    let mut nl = Netlist::new();
    add(&mut nl, "w", "drv", vec![PortDecl::output::<T>("out")], move |b| {
        let o = b.output::<T>("out")?;
        comp(move |ctx| {
            let k = ctx.now() as usize;
            if let Some(&v) = vals.get(k) {
                o.set(v);
            }
            Wake::next_cycle_if(k + 1 < vals.len())
        })
    });
    let l = seen.clone();
    add(&mut nl, "r", "listen", vec![PortDecl::input::<T>("in")], move |b| {
        let i = b.input::<T>("in")?;
        comp(move |ctx| {
            l.borrow_mut().push((ctx.now(), i.get()));
            Wake::OnInput
        })
    });
    connect(&mut nl, "w.out", "r.in");
    let mut sim = elab(nl);
    if logged {
        sim.net("w.out").unwrap().enable_log();
    }
    sim.run(100).unwrap();
    let changes = sim
        .net("w.out")
        .unwrap()
        .as_any()
        .downcast_ref::<SignalNet<T>>()
        .unwrap()
        .log()
        .map(|l| l.clone());
    let seen = seen.borrow().clone();
    (seen, changes)
}

#[test]
fn signals_of_every_word_size_and_of_other_types_commit_alike() {
    // Integers and bool are committed by the kernel through the signal's word cells, other types
    // through the virtual commit; a logged signal always through the latter. All must agree.
    fn check<T: hwsim_hw::SignalValue>(values: &[T], expect_wakes: &[(u64, T)]) {
        let (plain, none) = drive_values(values, false);
        let (logged, log) = drive_values(values, true);
        assert_eq!(plain, expect_wakes, "{}", std::any::type_name::<T>());
        assert_eq!(logged, expect_wakes, "{}", std::any::type_name::<T>());
        assert!(none.is_none());
        // The log holds the changes (one cycle before the listener sees each).
        let changes: Vec<(u64, T)> = expect_wakes[1..].iter().map(|&(c, v)| (c - 1, v)).collect();
        assert_eq!(log.unwrap(), changes, "{}", std::any::type_name::<T>());
    }
    check::<u8>(&[0, 200, 200, 7], &[(0, 0), (2, 200), (4, 7)]);
    check::<u16>(&[9, 9, 0xffff], &[(0, 0), (1, 9), (3, 0xffff)]);
    check::<u32>(&[0, 0, 1 << 31, 5], &[(0, 0), (3, 1 << 31), (4, 5)]);
    check::<bool>(&[false, true, true, false], &[(0, false), (2, true), (4, false)]);
    check::<u64>(&[u64::MAX, 1, 1], &[(0, 0), (1, u64::MAX), (2, 1)]);
    // f64's equality is not bitwise: -0.0 == 0.0 (no change, no wake-up), and it takes the
    // virtual commit.
    check::<f64>(&[-0.0, 1.5, 1.5], &[(0, 0.0), (2, 1.5)]);
}

#[test]
fn a_signal_logged_from_the_middle_of_a_run_records_every_later_change() {
    // A u64 signal with one reader, untraced: the kernel's fast commit path until it logs.
    let ticks = log();
    let mut nl = Netlist::new();
    add_driver(&mut nl, "w", "count", |ctx, o| {
        o.set(ctx.now() * 2);
        Wake::NextCycle
    });
    add_listener(&mut nl, "r", ticks.clone());
    connect(&mut nl, "w.out", "r.in");
    let mut sim = elab(nl);
    sim.run(5).unwrap();
    sim.net("w.out").unwrap().enable_log();
    sim.run(8).unwrap();
    assert_eq!(signal_log(&sim, "w.out"), vec![(5, 10), (6, 12), (7, 14)]);
    // Wake-ups are the same on both paths: the listener saw every change.
    let seen: Vec<u64> = ticks.borrow().iter().map(|&(_, v)| v).collect();
    assert_eq!(seen, vec![0, 2, 4, 6, 8, 10, 12]);
}

// ------------------------------------------------------------------------------------------------
// Streams

#[test]
fn stream_push_at_n_is_visible_at_n_plus_1() {
    let seen: Log<(u64, usize, Option<u64>)> = log();
    let woken = log();
    let mut nl = Netlist::new();
    add_scheduled_pusher(&mut nl, "p", vec![(3, 42)]);
    let s = seen.clone();
    add_puller(&mut nl, "c", "watcher", 2, move |ctx, i| {
        s.borrow_mut().push((ctx.now(), i.len(), i.peek().map(|v| *v)));
        next_cycle_if(ctx.now() < 8)
    });
    connect(&mut nl, "p.out", "c.in");
    // A second pair whose consumer ticks on input only.
    add_scheduled_pusher(&mut nl, "p2", vec![(3, 43)]);
    let w = woken.clone();
    add_puller(&mut nl, "c2", "sleeper", 2, move |ctx, i| {
        w.borrow_mut().push((ctx.now(), i.len() as u64));
        Wake::OnInput
    });
    connect(&mut nl, "p2.out", "c2.in");
    let mut sim = elab(nl);
    assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 9);
    for &(n, len, head) in seen.iter() {
        if n <= 3 {
            assert_eq!((len, head), (0, None), "cycle {n}");
        } else {
            assert_eq!((len, head), (1, Some(42)), "cycle {n}");
        }
    }
    assert_eq!(*woken.borrow(), vec![(0, 0), (4, 1)]);
}

#[test]
fn stream_pop_at_n_frees_space_seen_by_the_producer_at_n_plus_1() {
    let seen: Log<(u64, u32, bool, u32)> = log();
    let woken = log();
    let mut nl = Netlist::new();
    // Producer: pushes at cycle 0, then watches the space every cycle.
    let s = seen.clone();
    add_pusher(&mut nl, "p", "watcher", move |ctx, o| {
        let now = ctx.now();
        s.borrow_mut().push((now, o.space(), o.can_push(), o.occupancy()));
        if now == 0 {
            o.push(1);
        }
        next_cycle_if(now < 10)
    });
    // Consumer: pops at cycle 5 only.
    fn popper(ctx: &mut Ctx<'_>, i: &StreamIn<u64>) -> Wake {
        if ctx.now() == 5 {
            assert_eq!(i.pop(), Some(1));
            assert!(i.is_empty());
        }
        if ctx.now() < 5 {
            Wake::At(5)
        } else {
            Wake::OnInput
        }
    }
    add_puller(&mut nl, "c", "popper", 1, popper);
    connect(&mut nl, "p.out", "c.in");
    // Same with a producer that sleeps after its push: the pop at 5 wakes it at 6.
    let w = woken.clone();
    add_pusher(&mut nl, "p2", "sleeper", move |ctx, o| {
        w.borrow_mut().push((ctx.now(), o.space() as u64));
        if ctx.now() == 0 {
            o.push(1);
        }
        Wake::OnInput
    });
    add_puller(&mut nl, "c2", "popper", 1, popper);
    connect(&mut nl, "p2.out", "c2.in");
    let mut sim = elab(nl);
    assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 11);
    for &(n, space, can, occ) in seen.iter() {
        let want = match n {
            0 => (1, true, 0),
            1..=5 => (0, false, 1),
            _ => (1, true, 0),
        };
        assert_eq!((space, can, occ), want, "cycle {n}");
    }
    assert_eq!(*woken.borrow(), vec![(0, 1), (6, 1)]);
}

#[test]
fn a_producer_sees_each_freed_slot_one_cycle_after_the_pop() {
    // Capacity 1, producer pushes every cycle it can, consumer pops every cycle: the producer
    // sees the freed slot one cycle after each pop, so it pushes every other cycle.
    let mut nl = Netlist::new();
    add_pusher(&mut nl, "p", "greedy", |ctx, o| {
        if ctx.now() < 20 && o.can_push() {
            o.push(ctx.now());
        }
        next_cycle_if(ctx.now() < 20)
    });
    add_puller(&mut nl, "c", "eager", 1, |_, i| {
        i.pop();
        Wake::OnInput
    });
    connect(&mut nl, "p.out", "c.in");
    let mut sim = elab(nl);
    sim.net("p.out").unwrap().enable_log();
    assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
    let pushes: Vec<u64> = stream_log(&sim, "p.out").iter().map(|e| e.0).collect();
    assert_eq!(pushes, (0..20).step_by(2).collect::<Vec<_>>());
}

#[test]
fn second_push_in_one_cycle_is_a_protocol_error_naming_cycle_and_stream() {
    let mut nl = Netlist::new();
    add_pusher(&mut nl, "top.p", "double", |ctx, o| {
        if ctx.now() == 2 {
            o.push(10);
            assert!(!o.can_push());
            o.push(11);
        }
        Wake::NextCycle
    });
    add_hoarder(&mut nl, "top.c", 4);
    connect(&mut nl, "top.p.out", "top.c.in");
    let err = run_err(nl);
    assert_protocol(&err, 2, "top.p.out");
    assert_eq!(
        err.to_string(),
        "protocol violation at cycle 2 in `top.p.out`: second push in one cycle: 11"
    );
}

#[test]
fn push_into_a_full_stream_is_a_protocol_error_naming_cycle_and_stream() {
    let mut nl = Netlist::new();
    add_scheduled_pusher(&mut nl, "chip0.p", vec![(0, 1), (1, 2)]);
    add_hoarder(&mut nl, "chip0.c", 1);
    connect(&mut nl, "chip0.p.out", "chip0.c.in");
    let err = run_err(nl);
    assert_protocol(&err, 1, "chip0.p.out");
    assert_eq!(
        err.to_string(),
        "protocol violation at cycle 1 in `chip0.p.out`: push into a full stream (capacity 1): 2"
    );
}

#[test]
fn connect_capacity_overrides_the_consumer_buffer() {
    let mut nl = Netlist::new();
    add_scheduled_pusher(&mut nl, "p", vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
    add_hoarder(&mut nl, "c", 1);
    nl.connect("p.out", "c.in", Some(3)).unwrap();
    assert_eq!(
        run_err(nl).to_string(),
        "protocol violation at cycle 3 in `p.out`: push into a full stream (capacity 3): 4"
    );
}

#[test]
fn try_push_into_a_full_stream_is_refused_without_an_error() {
    let refused = log();
    let mut nl = Netlist::new();
    let r = refused.clone();
    add_pusher(&mut nl, "p", "polite", move |ctx, o| {
        if ctx.now() < 3 {
            if let Err(v) = o.try_push(ctx.now()) {
                r.borrow_mut().push((ctx.now(), v));
            }
        }
        next_cycle_if(ctx.now() < 3)
    });
    add_hoarder(&mut nl, "c", 1);
    connect(&mut nl, "p.out", "c.in");
    let mut sim = elab(nl);
    assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
    assert_eq!(*refused.borrow(), vec![(1, 1), (2, 2)]);
}

#[test]
fn a_component_violation_stops_the_run_with_its_path() {
    let mut nl = Netlist::new();
    add_violator(&mut nl, "chip0.lg1.cbfc", "cbfc", 7, "credit underflow", Wake::At(7));
    assert_eq!(
        run_err(nl).to_string(),
        "protocol violation at cycle 7 in `chip0.lg1.cbfc`: credit underflow"
    );
}

// ------------------------------------------------------------------------------------------------
// Wake-ups

#[test]
fn wake_at_t_runs_exactly_at_t() {
    for skip in [true, false] {
        let ticks = log();
        let mut nl = Netlist::new();
        let t = ticks.clone();
        add_bare(&mut nl, "t", "alarm", move |ctx| {
            let now = ctx.now();
            t.borrow_mut().push(now);
            // The same hint for every cycle of an interval, so that extra ticks (skip off)
            // do not move the alarm.
            match now {
                0..=36 => Wake::At(37),
                37 => Wake::At(38),
                // Not after now: next cycle.
                38 => Wake::At(38),
                39 => Wake::At(5),
                40..=999 => Wake::At(1000),
                _ => Wake::OnInput,
            }
        });
        let mut sim = elab_with(nl, skip, None);
        assert_eq!(sim.run(5000).unwrap(), Stop::Quiescent);
        assert_eq!(sim.now(), 1001);
        let ticks = ticks.borrow();
        if skip {
            assert_eq!(*ticks, vec![0, 37, 38, 39, 40, 1000]);
            assert_eq!(sim.stats().cycles_executed, 6);
            assert_eq!(sim.stats().cycles_skipped, 1001 - 6);
        } else {
            assert_eq!(*ticks, (0..=1000).collect::<Vec<_>>());
        }
    }
}

#[test]
fn an_input_change_at_n_wakes_the_reader_at_n_plus_1_and_only_then() {
    let seen = log();
    let mut nl = Netlist::new();
    add_step(&mut nl, "w", 10, 5);
    add_listener(&mut nl, "r", seen.clone());
    connect(&mut nl, "w.out", "r.in");
    let mut sim = elab(nl);
    assert_eq!(sim.run(1000).unwrap(), Stop::Quiescent);
    assert_eq!(*seen.borrow(), vec![(0, 0), (11, 5)]);
    // w: 0 and 10; r: 0 and 11. OnInput components are not ticked otherwise.
    assert_eq!(sim.stats().activations, 4);
    assert_eq!(sim.stats().cycles_executed, 3);
    assert_eq!(sim.now(), 12);
}

#[test]
fn on_input_components_are_not_ticked_without_input() {
    let mut nl = Netlist::new();
    // A chain of 10 registers fed by a signal that changes at 100 and 200.
    add_driver(&mut nl, "src", "two_steps", |ctx, o| {
        let now = ctx.now();
        o.set(if now >= 200 {
            2
        } else if now >= 100 {
            1
        } else {
            0
        });
        if now < 100 {
            Wake::At(100)
        } else if now < 200 {
            Wake::At(200)
        } else {
            Wake::OnInput
        }
    });
    let ticks = log();
    let mut prev = "src.out".to_string();
    for k in 0..10 {
        let p = format!("r{k}");
        add_reg(&mut nl, &p, |x| x * 10, Some(ticks.clone()));
        connect(&mut nl, &prev, &format!("{p}.in"));
        prev = format!("{p}.out");
    }
    let mut sim = elab(nl);
    assert_eq!(sim.run(10_000).unwrap(), Stop::Quiescent);
    // src: 0, 100, 200. Register k: 0 (everyone); then each change ripples one stage per cycle.
    // At cycle 0 all outputs are 0 = reset, so nothing changes: no wake at 1.
    let mut want: Vec<u64> = vec![0; 10];
    for base in [100, 200] {
        want.extend((1..=10).map(|k| base + k));
    }
    let mut got = ticks.borrow().clone();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(sim.stats().activations, 3 + 30);
    assert_eq!(sim.now(), 211);
}

// ------------------------------------------------------------------------------------------------
// Event skip

/// A timer whose `level` toggles every `period` cycles; counter `fires` = toggles so far.
fn add_timer(nl: &mut Netlist, path: &str, period: u64) {
    add(nl, path, "timer", vec![PortDecl::output::<bool>("level")], move |b| {
        let o = b.output::<bool>("level")?;
        let fires = b.counter("fires");
        comp(move |ctx| {
            let k = ctx.now() / period;
            o.set(k % 2 == 1);
            ctx.set_counter(fires, k);
            Wake::At((k + 1) * period)
        })
    });
}

#[test]
fn event_skip_idle_timer_runs_1e9_cycles_in_1000_steps() {
    let mut nl = Netlist::new();
    add_timer(&mut nl, "t", 1_000_000);
    let mut sim = elab(nl);
    let t0 = std::time::Instant::now();
    assert_eq!(sim.run(1_000_000_000).unwrap(), Stop::Limit);
    let wall = t0.elapsed();
    assert_eq!(sim.now(), 1_000_000_000);
    let st = sim.stats();
    assert_eq!(st.cycles_executed, 1000);
    assert_eq!(st.activations, 1000);
    assert_eq!(st.cycles_skipped, 1_000_000_000 - 1000);
    assert_eq!(sim.counter("t.fires"), Some(999));
    assert!(wall.as_secs_f64() < 1.0, "idle run took {wall:?}");
    // Running on resumes from the limit.
    assert_eq!(sim.run(1_000_000_000 + 10).unwrap(), Stop::Limit);
    assert_eq!(sim.stats().cycles_executed, 1001);
    assert_eq!(sim.counter("t.fires"), Some(1000));
}

#[test]
fn quiescence_stops_at_the_cycle_after_the_last_activity_in_both_modes() {
    for skip in [true, false] {
        let seen = log();
        let mut nl = Netlist::new();
        add_step(&mut nl, "a", 50, 1);
        add_listener(&mut nl, "b", seen.clone());
        connect(&mut nl, "a.out", "b.in");
        let mut sim = elab_with(nl, skip, None);
        assert_eq!(sim.run(1_000_000).unwrap(), Stop::Quiescent, "skip {skip}");
        assert_eq!(sim.now(), 52, "skip {skip}");
        assert!(sim.is_quiescent());
        if skip {
            assert_eq!(*seen.borrow(), vec![(0, 0), (51, 1)]);
        } else {
            // Ticked every cycle; the change is seen from 51 on.
            let want: Vec<(u64, u64)> = (0..52).map(|n| (n, (n >= 51) as u64)).collect();
            assert_eq!(*seen.borrow(), want);
        }
        let st = sim.stats();
        if skip {
            assert_eq!((st.cycles_executed, st.cycles_skipped, st.activations), (3, 49, 4));
        } else {
            assert_eq!((st.cycles_executed, st.cycles_skipped, st.activations), (52, 0, 104));
        }
        // Running again changes nothing.
        assert_eq!(sim.run(2_000_000).unwrap(), Stop::Quiescent);
        assert_eq!(sim.now(), 52);
    }
}

#[test]
fn a_limit_before_quiescence_returns_limit_with_now_at_the_limit() {
    for skip in [true, false] {
        let mut nl = Netlist::new();
        add_step(&mut nl, "a", 50, 1);
        add_listener(&mut nl, "b", log());
        connect(&mut nl, "a.out", "b.in");
        let mut sim = elab_with(nl, skip, None);
        assert_eq!(sim.run(30).unwrap(), Stop::Limit);
        assert_eq!(sim.now(), 30);
        assert_eq!(sim.run(51).unwrap(), Stop::Limit);
        assert_eq!(sim.now(), 51);
        assert_eq!(sim.run(1000).unwrap(), Stop::Quiescent);
        assert_eq!(sim.now(), 52);
    }
}

// Producer → FIFO → consumer, written for this file (hwsim-modules is not a dependency of hw).

/// Sends `count` values, message i due at `start + i·interval` (later if the stream is full).
/// Counters: `sent`, `stall_cycles`.
fn add_producer(nl: &mut Netlist, path: &str, count: u64, interval: u64, start: u64) {
    add(
        nl,
        path,
        "producer",
        vec![PortDecl::stream_out::<u64>("out")],
        move |b| {
            let o = b.stream_out::<u64>("out")?;
            let c_sent = b.counter("sent");
            let c_stall = b.counter("stall_cycles");
            let (mut sent, mut due) = (0u64, start);
            comp(move |ctx| {
                let now = ctx.now();
                if sent >= count {
                    return Wake::OnInput;
                }
                if now < due {
                    return Wake::At(due);
                }
                if !o.can_push() {
                    return Wake::OnInput;
                }
                o.push(1000 + sent);
                ctx.count(c_sent, 1);
                ctx.count(c_stall, now - due);
                sent += 1;
                due = (start + sent * interval).max(now + 1);
                if sent >= count {
                    Wake::OnInput
                } else {
                    Wake::At(due)
                }
            })
        },
    );
}

/// Moves the head of `in` (its buffer is the storage) to `out` when `out` has space.
/// Counters: `passed`, `peak_occupancy`.
fn add_fifo(nl: &mut Netlist, path: &str, depth: u32) {
    add_stage(nl, path, "fifo", depth, |b, i, o| {
        let c_passed = b.counter("passed");
        let c_peak = b.counter("peak_occupancy");
        comp(move |ctx| {
            let occ = i.len() as u64;
            if occ > ctx.counter(c_peak) {
                ctx.set_counter(c_peak, occ);
            }
            if !i.is_empty() && o.can_push() {
                o.push(i.pop().unwrap());
                ctx.count(c_passed, 1);
            }
            if !i.is_empty() && o.space() > 1 {
                Wake::NextCycle
            } else {
                Wake::OnInput
            }
        })
    });
}

/// Pops one message every `interval` cycles; `last` = last value. Counters: `received`, `sum`.
fn add_consumer(nl: &mut Netlist, path: &str, interval: u64, capacity: u32) {
    add_popper(nl, path, "consumer", capacity, move |_| interval);
}

fn pipeline() -> Netlist {
    let mut nl = Netlist::new();
    add_producer(&mut nl, "tb.src", 12, 1, 3);
    add_fifo(&mut nl, "tb.fifo", 4);
    add_consumer(&mut nl, "tb.snk", 3, 2);
    connect(&mut nl, "tb.src.out", "tb.fifo.in");
    connect(&mut nl, "tb.fifo.out", "tb.snk.in");
    nl
}

type Outcome = (
    Stop,
    u64,
    Vec<(String, u64)>,
    Vec<(u64, u64)>,
    Vec<(u64, u64)>,
    Vec<(u64, u64)>,
);

#[test]
fn a_net_is_found_by_its_driver_and_by_each_reader_endpoint() {
    let sim = elab(pipeline());
    let by_driver = sim.net("tb.src.out").unwrap();
    let by_reader = sim.net("tb.fifo.in").unwrap();
    assert!(Rc::ptr_eq(by_driver, by_reader));
    assert!(by_driver.is_stream());
    assert!(!sim.net("tb.snk.last").unwrap().is_stream());
    assert!(sim.net("tb.snk.nope").is_none());
    assert_eq!(sim.component_count(), 3);
    assert_eq!(sim.net_count(), 3);
    let comps: Vec<(&str, &str)> = sim.components().collect();
    assert_eq!(
        comps,
        vec![("tb.src", "producer"), ("tb.fifo", "fifo"), ("tb.snk", "consumer")]
    );
}

fn run_pipeline(skip: bool, shuffle: Option<u64>) -> (Outcome, hwsim_hw::Stats) {
    let mut sim = elab_with(pipeline(), skip, shuffle);
    for p in ["tb.src.out", "tb.fifo.out", "tb.snk.last"] {
        sim.net(p).unwrap().enable_log();
    }
    let stop = sim.run(10_000).unwrap();
    (
        (
            stop,
            sim.now(),
            counters(&sim),
            stream_log(&sim, "tb.src.out"),
            stream_log(&sim, "tb.fifo.out"),
            signal_log(&sim, "tb.snk.last"),
        ),
        sim.stats(),
    )
}

#[test]
fn skip_on_and_off_give_identical_counters_and_logs() {
    let (on, st_on) = run_pipeline(true, None);
    let (off, st_off) = run_pipeline(false, None);
    assert_eq!(on, off);
    // And the run is the expected one: all 12 values, in order, with back-pressure.
    let (stop, _, counters, src, fifo, last) = &on;
    assert_eq!(*stop, Stop::Quiescent);
    let c: BTreeMap<&str, u64> = counters.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    assert_eq!(c["tb.src.sent"], 12);
    assert_eq!(c["tb.fifo.passed"], 12);
    assert_eq!(c["tb.snk.received"], 12);
    assert_eq!(c["tb.snk.sum"], (1000..1012).sum::<u64>());
    assert_eq!(c["tb.fifo.peak_occupancy"], 4);
    assert!(c["tb.src.stall_cycles"] > 0);
    let vals = |l: &Vec<(u64, u64)>| l.iter().map(|e| e.1).collect::<Vec<_>>();
    assert_eq!(vals(src), (1000..1012).collect::<Vec<_>>());
    assert_eq!(vals(fifo), (1000..1012).collect::<Vec<_>>());
    assert_eq!(vals(last), (1000..1012).collect::<Vec<_>>());
    // The first message: pushed at 3, forwarded by the FIFO at 4, popped (and `last` set) at 5.
    assert_eq!((src[0].0, fifo[0].0, last[0].0), (3, 4, 5));
    assert!(st_on.activations < st_off.activations);
    assert!(st_on.cycles_skipped > 0);
    assert_eq!(st_off.cycles_skipped, 0);
    // Shuffled evaluation order changes nothing either.
    for sh in 1..=6 {
        assert_eq!(run_pipeline(true, Some(sh)).0, on, "shuffle {sh}");
        assert_eq!(run_pipeline(false, Some(sh)).0, on, "shuffle {sh}, no skip");
    }
}

// ------------------------------------------------------------------------------------------------
// Determinism: per-component RNG

fn rng_netlist(paths: &[&str], draws: Log<(String, u64, u64)>) -> Netlist {
    let mut nl = Netlist::new();
    for &p in paths {
        let d = draws.clone();
        let path = p.to_string();
        add(&mut nl, p, "dice", vec![], move |b| {
            assert_eq!(b.path(), path);
            comp(move |ctx| {
                let now = ctx.now();
                // Draw at cycles 0, 5, 10, … 45 (computed from now).
                if now % 5 == 0 && now < 50 {
                    let v = ctx.rng().next_u64();
                    d.borrow_mut().push((path.clone(), now, v));
                }
                if now < 45 {
                    Wake::At((now / 5 + 1) * 5)
                } else {
                    Wake::OnInput
                }
            })
        });
    }
    nl
}

fn rng_run(seed: u64, paths: &[&str], skip: bool) -> BTreeMap<String, Vec<u64>> {
    let draws = log();
    let mut sim = rng_netlist(paths, draws.clone()).elaborate(seed).unwrap();
    sim.set_skip(skip);
    sim.run(1000).unwrap();
    let mut by_path: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (p, _, v) in draws.borrow().iter() {
        by_path.entry(p.clone()).or_default().push(*v);
    }
    by_path
}

#[test]
fn per_component_rng_is_derived_from_seed_and_path() {
    let paths = ["chip0.lg0.gen", "chip0.lg1.gen", "chip1.lg0.gen"];
    let a = rng_run(7, &paths, true);
    assert_eq!(a.len(), 3);
    for p in paths {
        assert_eq!(a[p].len(), 10);
        // The stream is exactly Rng::for_path(seed, path).
        let mut r = Rng::for_path(7, p);
        let want: Vec<u64> = (0..10).map(|_| r.next_u64()).collect();
        assert_eq!(a[p], want, "{p}");
    }
    // Different paths, different streams.
    assert_ne!(a["chip0.lg0.gen"], a["chip0.lg1.gen"]);
    assert_ne!(a["chip0.lg0.gen"], a["chip1.lg0.gen"]);
    // Same seed twice (and with skip off) → identical; another seed → different.
    assert_eq!(rng_run(7, &paths, true), a);
    assert_eq!(rng_run(7, &paths, false), a);
    let b = rng_run(8, &paths, true);
    for p in paths {
        assert_ne!(a[p], b[p]);
    }
    // Adding a component does not perturb another's stream.
    let c = rng_run(7, &["chip0.lg0.gen", "extra.gen"], true);
    assert_eq!(c["chip0.lg0.gen"], a["chip0.lg0.gen"]);
}

// ------------------------------------------------------------------------------------------------
// Counters

#[test]
fn counters_appear_under_path_dot_name() {
    let mut nl = Netlist::new();
    add(&mut nl, "chip0.lg3.arb", "arb", vec![], |b| {
        let grants = b.counter("grants");
        let peak = b.counter("peak");
        comp(move |ctx| {
            ctx.count(grants, 2);
            ctx.set_counter(peak, ctx.now() * 10);
            next_cycle_if(ctx.now() < 4)
        })
    });
    add(&mut nl, "chip0.lg3.tx", "tx", vec![], |b| {
        let frames = b.counter("frames");
        comp(move |ctx| {
            ctx.count(frames, 1);
            assert_eq!(ctx.counter(frames), 1);
            Wake::OnInput
        })
    });
    let mut sim = elab(nl);
    assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
    let all: Vec<(&str, u64)> = sim.counters().collect();
    assert_eq!(
        all,
        vec![
            ("chip0.lg3.arb.grants", 10),
            ("chip0.lg3.arb.peak", 40),
            ("chip0.lg3.tx.frames", 1),
        ]
    );
    assert_eq!(sim.counter("chip0.lg3.arb.grants"), Some(10));
    assert_eq!(sim.counter("chip0.lg3.tx.frames"), Some(1));
    assert_eq!(sim.counter("grants"), None);
    assert_eq!(sim.counters_of("chip0.lg3.arb"), vec![("grants", 10), ("peak", 40)]);
    assert_eq!(sim.counters_of("chip0.lg3.tx"), vec![("frames", 1)]);
}

// ------------------------------------------------------------------------------------------------
// Elaboration errors

fn src_u64(nl: &mut Netlist, path: &str) {
    add_driver(nl, path, "src", |_, _| Wake::OnInput);
}

fn sink<T: hwsim_hw::SignalValue>(nl: &mut Netlist, path: &str) {
    add(nl, path, "sink", vec![PortDecl::input::<T>("in")], |b| {
        let _i = b.input::<T>("in")?;
        comp(|_| Wake::OnInput)
    });
}

fn prod(nl: &mut Netlist, path: &str) {
    add_pusher(nl, path, "prod", |_, _| Wake::OnInput);
}

#[test]
fn elab_unbound_input() {
    let mut nl = Netlist::new();
    sink::<u64>(&mut nl, "top.r");
    let e = elab_err(nl);
    assert_elab_err!(e, UnboundInput, "input `top.r.in` (sink, signal<u64>) is not bound");
}

#[test]
fn elab_optional_input_may_stay_unbound_and_holds_its_reset_value() {
    let seen = log();
    let mut nl = Netlist::new();
    let s = seen.clone();
    add(
        &mut nl,
        "r",
        "opt",
        vec![PortDecl::input::<u64>("in").optional()],
        move |b| {
            let i = b.input::<u64>("in")?;
            comp(move |_| {
                s.borrow_mut().push(i.get());
                Wake::OnInput
            })
        },
    );
    let mut sim = elab(nl);
    assert_eq!(sim.run(10).unwrap(), Stop::Quiescent);
    assert_eq!(*seen.borrow(), vec![0]);
}

#[test]
fn elab_double_driver() {
    let mut nl = Netlist::new();
    src_u64(&mut nl, "a");
    src_u64(&mut nl, "b");
    sink::<u64>(&mut nl, "c");
    connect(&mut nl, "a.out", "c.in");
    connect(&mut nl, "b.out", "c.in");
    let e = elab_err(nl);
    assert_elab_err!(e, DoubleDriver, "input `c.in` has two drivers: `a.out` and `b.out`");
}

#[test]
fn elab_signal_fanout_is_fine_but_stream_fanout_is_refused() {
    let mut nl = Netlist::new();
    src_u64(&mut nl, "a");
    sink::<u64>(&mut nl, "r1");
    sink::<u64>(&mut nl, "r2");
    connect(&mut nl, "a.out", "r1.in");
    connect(&mut nl, "a.out", "r2.in");
    assert!(nl.elaborate(1).is_ok());

    let mut nl = Netlist::new();
    prod(&mut nl, "p");
    add_hoarder(&mut nl, "c1", 2);
    add_hoarder(&mut nl, "c2", 2);
    connect(&mut nl, "p.out", "c1.in");
    connect(&mut nl, "p.out", "c2.in");
    let e = elab_err(nl);
    assert_elab_err!(
        e,
        StreamFanout,
        "stream `p.out` has two consumers: `c1.in` and `c2.in` (a stream is point to point)"
    );
}

#[test]
fn elab_type_mismatch() {
    let mut nl = Netlist::new();
    src_u64(&mut nl, "a");
    sink::<u32>(&mut nl, "b");
    let e = nl.connect("a.out", "b.in", None).unwrap_err();
    assert_elab_err!(
        e,
        TypeMismatch,
        "type mismatch: `a.out` is signal<u64> but `b.in` is signal<u32>"
    );
    // Same value type, other shape.
    let mut nl = Netlist::new();
    prod(&mut nl, "p");
    sink::<u64>(&mut nl, "b");
    let e = nl.connect("p.out", "b.in", None).unwrap_err();
    assert_elab_err!(
        e,
        TypeMismatch,
        "type mismatch: `p.out` is stream<u64> but `b.in` is signal<u64>"
    );
}

#[test]
fn elab_wrong_direction() {
    let mut nl = Netlist::new();
    src_u64(&mut nl, "a");
    src_u64(&mut nl, "a2");
    sink::<u64>(&mut nl, "b");
    sink::<u64>(&mut nl, "c");
    let e = nl.connect("b.in", "c.in", None).unwrap_err();
    assert_elab_err!(e, WrongDirection, "`b.in` must be an output (driver)");
    let e = nl.connect("a.out", "a2.out", None).unwrap_err();
    assert_elab_err!(e, WrongDirection, "`a2.out` must be an input (reader)");
}

#[test]
fn elab_unknown_instance_port_and_bad_endpoint() {
    let mut nl = Netlist::new();
    src_u64(&mut nl, "chip0.a");
    sink::<u64>(&mut nl, "b");
    let e = nl.connect("chip0.nope.out", "b.in", None).unwrap_err();
    assert_elab_err!(
        e,
        UnknownInstance,
        "unknown instance `chip0.nope` (in endpoint `chip0.nope.out`)"
    );
    let e = nl.connect("chip0.a.outt", "b.in", None).unwrap_err();
    assert_elab_err!(
        e,
        UnknownPort,
        "instance `chip0.a` (src) has no port `outt` (ports: out)"
    );
    let e = nl.connect("chip0.a.out", "b.inn", None).unwrap_err();
    assert_eq!(e.to_string(), "instance `b` (sink) has no port `inn` (ports: in)");
    let e = nl.connect("nodot", "b.in", None).unwrap_err();
    assert_elab_err!(e, BadEndpoint, "bad endpoint `nodot`: expected `instance.port`");
}

#[test]
fn elab_duplicate_instance_and_bad_names() {
    let mut nl = Netlist::new();
    src_u64(&mut nl, "chip0.a");
    let e = nl
        .add("chip0.a", "src", vec![], Box::new(|_| comp(|_| Wake::OnInput)))
        .unwrap_err();
    assert_elab_err!(e, DuplicateInstance, "instance `chip0.a` is defined twice");
    for bad in ["", "a..b", ".a", "a.", "a b", "/x", "a/b", "..", "a.\\b", "x\ny"] {
        let e = nl
            .add(bad, "src", vec![], Box::new(|_| comp(|_| Wake::OnInput)))
            .unwrap_err();
        assert!(matches!(e, ElabError::BadName { .. }), "{bad:?}: {e:?}");
        assert_eq!(
            e.to_string(),
            format!("bad instance name `{bad}`: use dot-separated names of letters, digits, `_` and `-`")
        );
    }
    assert_eq!(nl.instance_count(), 1);
}

#[test]
fn elab_unbound_stream_output() {
    let mut nl = Netlist::new();
    prod(&mut nl, "chip0.p");
    let e = elab_err(nl);
    assert_elab_err!(
        e,
        UnboundStreamOutput,
        "stream output `chip0.p.out` (prod) is not connected to a consumer"
    );
}

#[test]
fn elab_build_errors_name_the_instance() {
    // The block refuses its parameters.
    let mut nl = Netlist::new();
    add(&mut nl, "t", "timer", vec![], |_| Err("period must be ≥ 1".to_string()));
    assert_eq!(elab_err(nl).to_string(), "instance `t`: period must be ≥ 1");
    // A stream capacity of 0.
    let mut nl = Netlist::new();
    prod(&mut nl, "p");
    add_hoarder(&mut nl, "c", 2);
    nl.connect("p.out", "c.in", Some(0)).unwrap();
    let e = elab_err(nl);
    assert_elab_err!(e, Build, "instance `c`: stream `c.in` capacity must be ≥ 1");
    // A port declared twice.
    let mut nl = Netlist::new();
    let e = nl
        .add(
            "x",
            "k",
            vec![PortDecl::output::<u64>("o"), PortDecl::output::<u32>("o")],
            Box::new(|_| comp(|_| Wake::OnInput)),
        )
        .unwrap_err();
    assert_eq!(e.to_string(), "instance `x`: kind k declares port `o` twice");
    // The block asks for a port it did not declare, or with another type.
    let mut nl = Netlist::new();
    add(&mut nl, "x", "k", vec![], |b| {
        let _ = b.output::<u64>("zz")?;
        comp(|_| Wake::OnInput)
    });
    assert_eq!(
        elab_err(nl).to_string(),
        "instance `x`: block asks for undeclared port `zz`"
    );
    let mut nl = Netlist::new();
    add(&mut nl, "x", "k", vec![PortDecl::output::<u64>("o")], |b| {
        let _ = b.output::<u32>("o")?;
        comp(|_| Wake::OnInput)
    });
    assert_eq!(
        elab_err(nl).to_string(),
        "instance `x`: port `o` is declared as signal<u64> but asked with another type"
    );
}

// ------------------------------------------------------------------------------------------------
// DOT

#[test]
fn dot_has_one_node_per_instance_and_labelled_edges() {
    let mut nl = Netlist::new();
    src_u64(&mut nl, "chip0.a");
    add_reg(&mut nl, "chip0.r", |x| x, None);
    sink::<u64>(&mut nl, "chip0.b");
    sink::<u64>(&mut nl, "chip0.c");
    prod(&mut nl, "p");
    add_hoarder(&mut nl, "h", 3);
    connect(&mut nl, "chip0.a.out", "chip0.r.in");
    connect(&mut nl, "chip0.r.out", "chip0.b.in");
    connect(&mut nl, "chip0.r.out", "chip0.c.in");
    connect(&mut nl, "p.out", "h.in");
    assert_eq!(nl.graph().node_count(), 6);
    assert_eq!(nl.graph().edge_count(), 4);
    let dot = nl.to_dot();
    assert!(dot.starts_with("digraph netlist {\n"), "{dot}");
    assert!(dot.ends_with("}\n"), "{dot}");
    let nodes: Vec<&str> = dot
        .lines()
        .filter(|l| l.contains("[label=") && !l.contains("->"))
        .collect();
    assert_eq!(nodes.len(), 6, "{dot}");
    for (path, kind) in [
        ("chip0.a", "src"),
        ("chip0.r", "reg"),
        ("chip0.b", "sink"),
        ("chip0.c", "sink"),
        ("p", "prod"),
        ("h", "hoarder"),
    ] {
        let label = format!("[label=\"{path}\\n({kind})\"];");
        assert_eq!(
            nodes.iter().filter(|l| l.ends_with(&label)).count(),
            1,
            "{label} in\n{dot}"
        );
    }
    let edges: Vec<&str> = dot.lines().filter(|l| l.contains("->")).collect();
    assert_eq!(edges.len(), 4, "{dot}");
    // Node ids follow the paths' order (chip0.a, chip0.b, chip0.c, chip0.r, h, p).
    for e in [
        "  n0 -> n3 [label=\"out → in : u64\"];",
        "  n3 -> n1 [label=\"out → in : u64\"];",
        "  n3 -> n2 [label=\"out → in : u64\"];",
        "  n5 -> n4 [label=\"out → in : u64\"];",
    ] {
        assert!(edges.contains(&e), "{e} in\n{dot}");
    }
}

// ------------------------------------------------------------------------------------------------
// Harness

fn add1_ports() -> Vec<PortDecl> {
    vec![PortDecl::input::<u64>("in"), PortDecl::output::<u64>("out")]
}

#[test]
fn harness_poke_step_peek() {
    let mut h = Harness::new(
        "add1",
        add1_ports(),
        Box::new(|b| {
            let i = b.input::<u64>("in")?;
            let o = b.output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get() + 1);
                Wake::OnInput
            })
        }),
        1,
        4,
    )
    .unwrap();
    assert_eq!(h.now(), 0);
    // Poked before cycle 0: written during cycle 0, seen by the DUT at 1.
    h.poke("in", 41u64);
    h.step().unwrap();
    assert_eq!(h.now(), 1);
    assert_eq!(h.peek::<u64>("in"), 41);
    // At cycle 0 the DUT read the reset input.
    assert_eq!(h.peek::<u64>("out"), 1);
    h.step().unwrap();
    assert_eq!(h.peek::<u64>("out"), 42);
    // Nothing changes without input; a new poke shows one cycle later.
    h.steps(5).unwrap();
    assert_eq!(h.peek::<u64>("out"), 42);
    h.poke("in", 99u64);
    h.step().unwrap();
    assert_eq!(h.peek::<u64>("out"), 42);
    h.step().unwrap();
    assert_eq!(h.peek::<u64>("out"), 100);
    assert_eq!(h.now(), 9);
    // The DUT ticked at 0, 1 and 8; the bench's two mirrors (driver and watcher) at 0, and the
    // watcher when the DUT's output changed.
    assert!(h.sim().stats().activations <= 7);
    assert!(h.sim().net("dut.out").is_some());
}

#[test]
fn harness_push_pop_through_a_stream_dut() {
    let mut h = Harness::new(
        "relay",
        vec![PortDecl::stream_in::<u64>("in", 2), PortDecl::stream_out::<u64>("out")],
        Box::new(|b| {
            let i = b.stream_in::<u64>("in")?;
            let o = b.stream_out::<u64>("out")?;
            comp(move |_| {
                if !i.is_empty() && o.can_push() {
                    o.push(i.pop().unwrap() * 2);
                }
                next_cycle_if(!i.is_empty())
            })
        }),
        1,
        1,
    )
    .unwrap();
    assert!(h.push("in", 5u64));
    assert!(!h.push("in", 6u64), "one push per cycle");
    h.step().unwrap(); // cycle 0: the push commits
    assert_eq!(h.pop::<u64>("out"), None);
    assert!(h.push("in", 6u64));
    h.step().unwrap(); // cycle 1: DUT relays 5
    assert_eq!(h.pop::<u64>("out"), Some(10));
    h.step().unwrap(); // cycle 2: DUT relays 6 (the sink had room only after our pop)
    assert_eq!(h.pop::<u64>("out"), None);
    h.step().unwrap();
    assert_eq!(h.pop::<u64>("out"), Some(12));
}

// ------------------------------------------------------------------------------------------------
// VCD

/// A 12-bit PSN, traced as one field `psn`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Psn12(u16);

impl Trace for Psn12 {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("psn", 12)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.0 as u64 & 0xfff);
    }
}

/// chip0.lg0.src drives `cur` (Psn12 signal) and pushes into `out` at cycles 10, 20, 21;
/// chip0.lg0.snk pops at 30 and 31 and drives `got`; flag.q (bool) rises at 40.
fn vcd_netlist() -> Netlist {
    let mut nl = Netlist::new();
    let sched: Vec<(u64, u16)> = vec![(10, 0xabc), (20, 5), (21, 7)];
    add(
        &mut nl,
        "chip0.lg0.src",
        "src",
        vec![PortDecl::output::<Psn12>("cur"), PortDecl::stream_out::<Psn12>("out")],
        move |b| {
            let cur = b.output::<Psn12>("cur")?;
            let out = b.stream_out::<Psn12>("out")?;
            let mut k = 0;
            comp(move |ctx| {
                let now = ctx.now();
                while k < sched.len() && sched[k].0 < now {
                    k += 1;
                }
                if k < sched.len() && sched[k].0 == now {
                    cur.set(Psn12(sched[k].1));
                    out.push(Psn12(sched[k].1));
                    k += 1;
                }
                match sched.get(k) {
                    Some(&(t, _)) => Wake::At(t),
                    None => Wake::OnInput,
                }
            })
        },
    );
    add(
        &mut nl,
        "chip0.lg0.snk",
        "snk",
        vec![PortDecl::stream_in::<Psn12>("in", 4), PortDecl::output::<u64>("got")],
        |b| {
            let i = b.stream_in::<Psn12>("in")?;
            let got = b.output::<u64>("got")?;
            comp(move |ctx| {
                let now = ctx.now();
                if now == 30 || now == 31 {
                    if let Some(v) = i.pop() {
                        got.set(v.0 as u64);
                    }
                }
                if now < 30 {
                    Wake::At(30)
                } else if now < 31 {
                    Wake::At(31)
                } else {
                    Wake::OnInput
                }
            })
        },
    );
    connect(&mut nl, "chip0.lg0.src.out", "chip0.lg0.snk.in");
    add(&mut nl, "flag", "flag", vec![PortDecl::output::<bool>("q")], |b| {
        let q = b.output::<bool>("q")?;
        comp(move |ctx| {
            q.set(ctx.now() >= 40);
            if ctx.now() < 40 {
                Wake::At(40)
            } else {
                Wake::OnInput
            }
        })
    });
    nl
}

/// Elaborates `nl` and traces it into a new buffer with `opts`; returns the number of traced vars.
fn traced(nl: Netlist, skip: bool, opts: TraceOptions) -> (Sim, SharedBuf, usize) {
    let buf = SharedBuf::default();
    let mut sim = elab_with(nl, skip, None);
    let n = sim.trace_vcd(Box::new(buf.clone()), opts).unwrap();
    (sim, buf, n)
}

/// Trace options selecting `globs`.
fn globs(globs: &[&str]) -> TraceOptions {
    TraceOptions {
        globs: globs.iter().map(|g| g.to_string()).collect(),
        ..TraceOptions::default()
    }
}

fn trace_run(skip: bool, opts: TraceOptions, limit: u64) -> (String, Sim) {
    let (mut sim, buf, _) = traced(vcd_netlist(), skip, opts);
    sim.run(limit).unwrap();
    let end = sim.now();
    sim.finish_trace(end).unwrap();
    (buf.text(), sim)
}

/// A parsed VCD: vars by full dotted name → (code, width); then per timestamp the changes in
/// order, with the `$dumpvars` block marked.
struct Vcd {
    header: String,
    vars: BTreeMap<String, (String, u32)>,
    /// (time, in $dumpvars, code, value as text without the code).
    changes: Vec<(u64, bool, String, String)>,
    times: Vec<u64>,
}

fn parse_vcd(text: &str) -> Vcd {
    let (header, body) = text.split_once("$enddefinitions $end\n").expect("header ends");
    let mut scopes: Vec<String> = Vec::new();
    let mut vars = BTreeMap::new();
    for line in header.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.first().copied() {
            Some("$scope") => {
                assert_eq!(w[1], "module", "{line}");
                assert_eq!(w.last(), Some(&"$end"));
                scopes.push(w[2].to_string());
            }
            Some("$upscope") => {
                scopes.pop().expect("balanced scopes");
            }
            Some("$var") => {
                assert_eq!(w.last(), Some(&"$end"));
                let width: u32 = w[2].parse().unwrap();
                let mut name = scopes.join(".");
                name.push('.');
                name.push_str(w[4]);
                assert!(
                    vars.insert(name.clone(), (w[3].to_string(), width)).is_none(),
                    "{name} twice"
                );
            }
            _ => {}
        }
    }
    assert!(scopes.is_empty(), "unbalanced scopes");
    let mut changes = Vec::new();
    let mut times = Vec::new();
    let mut t: Option<u64> = None;
    let mut in_dump = false;
    for line in body.lines() {
        if let Some(ts) = line.strip_prefix('#') {
            let ts: u64 = ts.parse().unwrap();
            if let Some(prev) = t {
                assert!(ts > prev, "timestamps must increase: {prev} then {ts}");
            }
            t = Some(ts);
            times.push(ts);
        } else if line == "$dumpvars" {
            in_dump = true;
        } else if line == "$end" {
            in_dump = false;
        } else if let Some(rest) = line.strip_prefix(['b', 'r']) {
            let (v, code) = rest.split_once(' ').expect("vector change");
            changes.push((
                t.expect("change after a timestamp"),
                in_dump,
                code.to_string(),
                format!("{}{v}", &line[..1]),
            ));
        } else {
            let (v, code) = line.split_at(1);
            assert!(matches!(v, "0" | "1" | "x" | "z"), "bad line {line:?}");
            changes.push((t.expect("timestamp"), in_dump, code.to_string(), v.to_string()));
        }
    }
    Vcd {
        header: header.to_string(),
        vars,
        changes,
        times,
    }
}

impl Vcd {
    /// The history of one var: (time, value), the dump included.
    fn history(&self, name: &str) -> Vec<(u64, String)> {
        let code = &self
            .vars
            .get(name)
            .unwrap_or_else(|| panic!("no var {name}: {:?}", self.vars.keys()))
            .0;
        self.changes
            .iter()
            .filter(|c| &c.2 == code)
            .map(|c| (c.0, c.3.clone()))
            .collect()
    }
    fn check_dump_complete(&self, at: u64) {
        assert_eq!(self.times.first(), Some(&at));
        let dumped: Vec<&String> = self.changes.iter().filter(|c| c.1).map(|c| &c.2).collect();
        assert!(self.changes.iter().filter(|c| c.1).all(|c| c.0 == at));
        assert_eq!(dumped.len(), self.vars.len());
        for (name, (code, _)) in &self.vars {
            assert_eq!(dumped.iter().filter(|c| **c == code).count(), 1, "{name} in $dumpvars");
        }
    }
}

fn s(pairs: &[(u64, &str)]) -> Vec<(u64, String)> {
    pairs.iter().map(|&(t, v)| (t, v.to_string())).collect()
}

#[test]
fn vcd_header_scopes_widths_and_values() {
    let (mut sim, buf, n) = traced(vcd_netlist(), true, TraceOptions::default());
    // cur.psn; out.{valid, psn, occupancy}; got; flag.q
    assert_eq!(n, 6);
    assert_eq!(sim.run(1000).unwrap(), Stop::Quiescent);
    assert_eq!(sim.now(), 41);
    sim.finish_trace(100).unwrap();
    let v = parse_vcd(&buf.text());

    assert!(v.header.contains("$timescale 1 ns $end\n"), "{}", v.header);
    // One $scope module per path level, nested.
    assert!(
        v.header
            .contains("$scope module chip0 $end\n$scope module lg0 $end\n$scope module snk $end\n"),
        "{}",
        v.header
    );
    let names: Vec<&str> = v.vars.keys().map(|s| s.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "chip0.lg0.snk.got",
            "chip0.lg0.src.cur.psn",
            "chip0.lg0.src.out.occupancy",
            "chip0.lg0.src.out.psn",
            "chip0.lg0.src.out.valid",
            "flag.q",
        ]
    );
    let widths: Vec<u32> = v.vars.values().map(|x| x.1).collect();
    assert_eq!(widths, vec![64, 12, 3, 12, 1, 1]);
    // True widths with a range for vectors, a plain scalar for 1 bit.
    let psn_code = &v.vars["chip0.lg0.src.cur.psn"].0;
    assert!(
        v.header.contains(&format!("$var wire 12 {psn_code} psn [11:0] $end\n")),
        "{}",
        v.header
    );
    let occ_code = &v.vars["chip0.lg0.src.out.occupancy"].0;
    assert!(v
        .header
        .contains(&format!("$var wire 3 {occ_code} occupancy [2:0] $end\n")));
    let valid_code = &v.vars["chip0.lg0.src.out.valid"].0;
    assert!(v.header.contains(&format!("$var wire 1 {valid_code} valid $end\n")));

    v.check_dump_complete(0);
    assert_eq!(
        v.history("chip0.lg0.src.out.valid"),
        s(&[(0, "0"), (10, "1"), (11, "0"), (20, "1"), (22, "0")])
    );
    assert_eq!(
        v.history("chip0.lg0.src.out.psn"),
        s(&[(0, "b0"), (10, "b101010111100"), (20, "b101"), (21, "b111")])
    );
    assert_eq!(
        v.history("chip0.lg0.src.out.occupancy"),
        s(&[(0, "b0"), (10, "b1"), (20, "b10"), (21, "b11"), (30, "b10"), (31, "b1")])
    );
    assert_eq!(
        v.history("chip0.lg0.src.cur.psn"),
        s(&[(0, "b0"), (10, "b101010111100"), (20, "b101"), (21, "b111")])
    );
    assert_eq!(
        v.history("chip0.lg0.snk.got"),
        s(&[(0, "b0"), (30, "b101010111100"), (31, "b101")])
    );
    assert_eq!(v.history("flag.q"), s(&[(0, "0"), (40, "1")]));
    // Only changes are written, and the final timestamp closes the trace.
    assert_eq!(v.times, vec![0, 10, 11, 20, 21, 22, 30, 31, 40, 100]);
}

#[test]
fn vcd_valid_falls_at_the_next_cycle_even_when_that_cycle_is_skipped() {
    // The run stops at 21 (limit): cycle 21 is never executed, in either mode, but the push at
    // 20 must still show valid falling at #21.
    let (on, sim_on) = trace_run(true, TraceOptions::default(), 21);
    let (off, _) = trace_run(false, TraceOptions::default(), 21);
    assert_eq!(sim_on.now(), 21);
    assert_eq!(on, off);
    let v = parse_vcd(&on);
    assert_eq!(
        v.history("chip0.lg0.src.out.valid"),
        s(&[(0, "0"), (10, "1"), (11, "0"), (20, "1"), (21, "0")])
    );
    assert_eq!(v.times.last(), Some(&21));
    // Under skip, cycles 12..=19 are not executed, yet nothing about them is missing.
    assert!(sim_on.stats().cycles_skipped >= 8);
}

#[test]
fn vcd_is_byte_identical_with_skip_on_and_off() {
    let (on, sim_on) = trace_run(true, TraceOptions::default(), 1000);
    let (off, sim_off) = trace_run(false, TraceOptions::default(), 1000);
    assert_eq!(on, off);
    assert_eq!(sim_on.now(), sim_off.now());
    assert!(sim_on.stats().cycles_executed < sim_off.stats().cycles_executed);
    // And through a limit in the middle of idle time.
    let (on, _) = trace_run(true, TraceOptions::default(), 35);
    let (off, _) = trace_run(false, TraceOptions::default(), 35);
    assert_eq!(on, off);
    assert!(on.ends_with("#35\n"), "{on}");
}

#[test]
fn vcd_window_writes_nothing_before_from_and_dumps_everything_at_from() {
    for (from, to) in [(15, 25), (20, 31), (12, 1000), (10, 11)] {
        let opts = TraceOptions {
            from: Some(from),
            to: Some(to),
            ..TraceOptions::default()
        };
        let (on, _) = trace_run(true, opts.clone(), 1000);
        let (off, _) = trace_run(false, opts, 1000);
        assert_eq!(on, off, "window [{from}, {to})");
        let v = parse_vcd(&on);
        v.check_dump_complete(from);
        assert!(v.times.iter().all(|&t| t >= from && t <= to), "{:?}", v.times);
        // Full history of the unwindowed run, restricted to the window.
        let (full, _) = trace_run(true, TraceOptions::default(), 1000);
        let full = parse_vcd(&full);
        for name in full.vars.keys() {
            let h = full.history(name);
            // The value standing at `from`: the last change at or before it.
            let at_from = h
                .iter()
                .rev()
                .find(|(t, _)| *t <= from)
                .map(|(_, v)| v.clone())
                .unwrap();
            let mut want = vec![(from, at_from)];
            want.extend(h.iter().filter(|(t, _)| *t > from && *t < to).cloned());
            assert_eq!(v.history(name), want, "{name} in [{from}, {to})");
        }
    }
}

#[test]
fn vcd_glob_selects_nets_and_scopes() {
    let (mut sim, buf, n) = traced(vcd_netlist(), true, globs(&["chip0.lg0.src", "*.q"]));
    assert_eq!(n, 5);
    sim.run(1000).unwrap();
    sim.finish_trace(sim.now()).unwrap();
    let v = parse_vcd(&buf.text());
    let names: Vec<&str> = v.vars.keys().map(|s| s.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "chip0.lg0.src.cur.psn",
            "chip0.lg0.src.out.occupancy",
            "chip0.lg0.src.out.psn",
            "chip0.lg0.src.out.valid",
            "flag.q",
        ]
    );
    v.check_dump_complete(0);
}

#[test]
fn vcd_empty_selection_is_still_a_valid_file() {
    let (mut sim, buf, n) = traced(vcd_netlist(), true, globs(&["nothing.here"]));
    assert_eq!(n, 0);
    sim.run(1000).unwrap();
    sim.finish_trace(sim.now()).unwrap();
    let text = buf.text();
    assert!(
        text.contains("$scope module top $end\n$upscope $end\n$enddefinitions $end\n"),
        "{text}"
    );
    let v = parse_vcd(&text);
    assert!(v.vars.is_empty());
}

#[test]
fn vcd_real_values() {
    let mut nl = Netlist::new();
    add(
        &mut nl,
        "gate.rate",
        "rate",
        vec![PortDecl::output::<f64>("gbps")],
        |b| {
            let o = b.output::<f64>("gbps")?;
            comp(move |ctx| {
                let now = ctx.now();
                o.set(if now >= 6 {
                    12.5
                } else if now >= 3 {
                    0.25
                } else {
                    0.0
                });
                match now {
                    0..=2 => Wake::At(3),
                    3..=5 => Wake::At(6),
                    _ => Wake::OnInput,
                }
            })
        },
    );
    let (mut sim, buf, _) = traced(nl, true, TraceOptions::default());
    sim.run(100).unwrap();
    sim.finish_trace(10).unwrap();
    let text = buf.text();
    let v = parse_vcd(&text);
    let code = &v.vars["gate.rate.gbps"].0;
    assert!(text.contains(&format!("$var real 64 {code} gbps $end\n")), "{text}");
    v.check_dump_complete(0);
    assert_eq!(v.history("gate.rate.gbps"), s(&[(0, "r0"), (3, "r0.25"), (6, "r12.5")]));
    assert_eq!(v.times, vec![0, 3, 6, 10]);
}

/// Two violations in one cycle: the error must not depend on the evaluation order (shuffle) nor
/// on event skip, since both change only the order in which the cycle's components tick.
#[test]
fn the_reported_violation_does_not_depend_on_evaluation_order_or_skip() {
    fn netlist() -> Netlist {
        let mut nl = Netlist::new();
        // `a` reaches cycle 5 by a timer, `b` by ticking every cycle: under event skip `b` is
        // queued first, with skip off `a` (elaborated first) ticks first.
        add_violator(&mut nl, "a", "v", 5, "a broke", Wake::At(5));
        add_violator(&mut nl, "b", "v", 5, "b broke", Wake::NextCycle);
        nl
    }
    assert_one_error(netlist);
}

/// The same for two streams pushed twice in one cycle.
#[test]
fn the_reported_stream_violation_does_not_depend_on_evaluation_order_or_skip() {
    fn netlist() -> Netlist {
        let mut nl = Netlist::new();
        for (p, wake_next) in [("p0", false), ("p1", true)] {
            add_pusher(&mut nl, p, "double", move |ctx, o| {
                if ctx.now() == 5 {
                    o.push(1);
                    o.push(2);
                }
                if wake_next {
                    Wake::NextCycle
                } else {
                    Wake::At(5)
                }
            });
            add_hoarder(&mut nl, &format!("{p}c"), 4);
            connect(&mut nl, &format!("{p}.out"), &format!("{p}c.in"));
        }
        nl
    }
    assert_one_error(netlist);
}

/// A block shows the state of a sub-block as ports with dotted names: they resolve as endpoints
/// (the longest instance path wins), connect like any port, and trace as nested scopes.
#[test]
fn dotted_port_names_are_sub_block_scopes() {
    let mut nl = Netlist::new();
    let ports = vec![PortDecl::output::<u64>("arb.ptr"), PortDecl::output::<u64>("out")];
    add(&mut nl, "chip0.tx", "composite", ports, |b| {
        let ptr = b.output::<u64>("arb.ptr")?;
        let out = b.output::<u64>("out")?;
        comp(move |ctx| {
            ptr.set(ctx.now() % 3);
            out.set(ctx.now());
            if ctx.now() < 5 {
                Wake::NextCycle
            } else {
                Wake::OnInput
            }
        })
    });
    add_reader(&mut nl, "mon", "reader", |_, _| Wake::OnInput);
    // `chip0.tx.arb` is no instance: the endpoint is instance `chip0.tx`, port `arb.ptr`.
    let (path, decl) = nl.port_at(nl.resolve("chip0.tx.arb.ptr").unwrap());
    assert_eq!((path, decl.name.as_str()), ("chip0.tx", "arb.ptr"));
    connect(&mut nl, "chip0.tx.arb.ptr", "mon.in");
    assert!(matches!(
        nl.resolve("chip0.tx.arb.nope"),
        Err(ElabError::UnknownInstance { .. }) | Err(ElabError::UnknownPort { .. })
    ));
    let (mut sim, buf, _) = traced(nl, true, TraceOptions::default());
    sim.run(20).unwrap();
    let end = sim.now();
    sim.finish_trace(end).unwrap();
    let text = buf.text();
    let scopes: Vec<&str> = text.lines().filter(|l| l.starts_with("$scope")).collect();
    assert_eq!(
        scopes,
        // The reader's input is the same net, traced once under its driver.
        vec![
            "$scope module chip0 $end",
            "$scope module tx $end",
            "$scope module arb $end"
        ],
        "{text}"
    );
    assert!(sim.net("chip0.tx.arb.ptr").is_some());
    assert!(sim.net("mon.in").is_some());
}

/// A 130-bit vector (three words): a state bitmap wider than 64 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Map130([u64; 3]);

impl Trace for Map130 {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [TraceField::wide("map", 130), TraceField::bits("n", 8)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        for (o, w) in out.iter_mut().zip(self.0) {
            *o = TraceValue::Bits(w);
        }
        out[3] = TraceValue::Bits(self.0.iter().map(|w| w.count_ones() as u64).sum());
    }
}

/// A field wider than 64 bits is one VCD variable of its true width, written most significant
/// bit first, only when one of its words changes, and given a value at #0.
#[test]
fn wide_fields_are_one_variable_of_their_true_width() {
    let mut nl = Netlist::new();
    add(&mut nl, "blk", "wide", vec![PortDecl::output::<Map130>("slots")], |b| {
        let o = b.output::<Map130>("slots")?;
        comp(move |ctx| {
            match ctx.now() {
                3 => o.set(Map130([1, 0, 0])),
                5 => o.set(Map130([1, 1, 2])), // bit 0, bit 64, bit 129
                7 => o.set(Map130([1, 1, 2])), // no change: nothing written
                9 => o.set(Map130([0, 0, 0])),
                _ => {}
            }
            if ctx.now() < 10 {
                Wake::NextCycle
            } else {
                Wake::OnInput
            }
        })
    });
    let (mut sim, buf, vars) = traced(nl, true, TraceOptions::default());
    assert_eq!(vars, 2);
    sim.run(20).unwrap();
    let end = sim.now();
    sim.finish_trace(end).unwrap();
    let text = buf.text();
    assert!(text.contains("$var wire 130 ! map [129:0] $end"), "{text}");
    let map_changes: Vec<&str> = text.lines().filter(|l| l.ends_with(" !")).collect();
    let bit129_64_0 = format!("b10{}1{}1 !", "0".repeat(64 - 1), "0".repeat(63));
    assert_eq!(
        map_changes,
        vec!["b0 !", "b1 !", bit129_64_0.as_str(), "b0 !"],
        "{text}"
    );
}

/// A log budget charges each growth of a history before it allocates (the room doubles, 16
/// bytes an entry of a u64 signal) and refuses the first one past its limit, keeping the cycle
/// and the net; the history stops there, the run does not.
#[test]
fn a_log_budget_refuses_the_growth_past_its_limit() {
    // A u64 signal that changes every cycle (1, 2, 3 …), read by a listener.
    let counting = || {
        let mut nl = Netlist::new();
        add_driver(&mut nl, "w", "count", |ctx, o| {
            o.set(ctx.now() + 1);
            Wake::NextCycle
        });
        add_listener(&mut nl, "r", log());
        connect(&mut nl, "w.out", "r.in");
        elab(nl)
    };
    let mut sim = counting();
    // Room for 4, then 8, then 16 entries: 64 + 64 + 128 bytes; 200 stops before the third.
    let budget = hwsim_hw::LogBudget::new(200);
    let net = sim.net("w.out").unwrap().clone();
    net.enable_log();
    net.set_log_budget(&budget);
    sim.run(20).unwrap();
    assert_eq!(budget.used(), 128);
    let kept = signal_log(&sim, "w.out");
    assert_eq!(kept.len(), 8, "the first 8 changes, then none");
    assert_eq!(kept.last(), Some(&(7, 8)));
    assert_eq!(
        budget.refused(),
        Some((8, sim.net_paths().iter().position(|p| p == "w.out").unwrap() as u32))
    );
    assert_eq!(sim.now(), 20, "the run itself goes on (the runner ends it)");
    // Without a budget the same history grows freely.
    let mut sim = counting();
    sim.net("w.out").unwrap().enable_log();
    sim.run(20).unwrap();
    assert_eq!(signal_log(&sim, "w.out").len(), 20);
}

// ------------------------------------------------------------------------------------------------
// Event pulses on the waves

/// A block reporting `nak` at 10, 11 and 20 (and `drop` at 20), then nothing; and a second
/// block of the same events that is not offered a pulse.
fn pulse_netlist() -> Netlist {
    let mut nl = Netlist::new();
    for name in ["core.rx", "core.other"] {
        add(&mut nl, name, "ev", vec![PortDecl::output::<bool>("q")], |b| {
            let q = b.output::<bool>("q")?;
            comp(move |ctx| {
                let now = ctx.now();
                q.set(now >= 5);
                if matches!(now, 10 | 11 | 20) && ctx.logs() {
                    ctx.log("nak", format_args!("psn={now}"));
                    ctx.log("nak", format_args!("again"));
                }
                if now == 20 && ctx.logs() {
                    ctx.log("drop", format_args!("x"));
                }
                match now {
                    0..=4 => Wake::At(5),
                    5..=9 => Wake::At(10),
                    10 => Wake::NextCycle,
                    11..=19 => Wake::At(20),
                    _ => Wake::OnInput,
                }
            })
        });
    }
    nl
}

/// Runs `pulse_netlist` traced with `opts` (pulses offered for `core.rx`'s `nak` and `drop`,
/// and a `timeout` it never reports); with `log`, an event log of every block is set after the
/// trace is opened (the pulses must survive it). Returns the VCD text and the log's text.
fn pulse_run(skip: bool, mut opts: TraceOptions, log: bool) -> (String, String) {
    let mut sim = elab_with(pulse_netlist(), skip, None);
    let rx = sim.components().position(|(p, _)| p == "core.rx").unwrap() as u32;
    opts.events = vec![(rx, "nak"), (rx, "drop"), (rx, "timeout")];
    let buf = SharedBuf::default();
    sim.trace_vcd(Box::new(buf.clone()), opts).unwrap();
    let lines = SharedBuf::default();
    if log {
        let n = sim.component_count();
        let paths = sim.components().map(|(p, _)| p.to_string()).collect();
        let l = hwsim_hw::EventLog::new(vec![true; n], paths, None, Box::new(lines.clone()), 100);
        sim.set_event_log(l);
    }
    sim.run(100).unwrap();
    let end = sim.now();
    sim.finish_trace(end).unwrap();
    sim.finish_events().unwrap();
    (buf.text(), lines.text())
}

#[test]
fn event_pulses_are_one_cycle_high_where_the_block_reports_them() {
    let (text, _) = pulse_run(true, TraceOptions::default(), false);
    let v = parse_vcd(&text);
    // Declared where offered, in the block's scope; never for the block not offered one.
    assert!(v.vars.contains_key("core.rx.ev_nak") && v.vars.contains_key("core.rx.ev_drop"));
    assert!(v.vars.contains_key("core.rx.ev_timeout"), "{:?}", v.vars.keys());
    assert!(!v.vars.keys().any(|k| k.starts_with("core.other.ev_")));
    let (nak, _) = &v.vars["core.rx.ev_nak"];
    let (drop, _) = &v.vars["core.rx.ev_drop"];
    let (timeout, _) = &v.vars["core.rx.ev_timeout"];
    let of = |code: &str| -> Vec<(u64, String)> {
        v.changes
            .iter()
            .filter(|c| c.2 == code)
            .map(|c| (c.0, c.3.clone()))
            .collect()
    };
    // Two reports in one cycle are one pulse; two cycles in a row one pulse of two cycles (no
    // fall and rise at 11); the fall at 12 and 21 is written though nothing runs then.
    let s = |t: u64, x: &str| (t, x.to_string());
    assert_eq!(of(nak), vec![s(0, "0"), s(10, "1"), s(12, "0"), s(20, "1"), s(21, "0")]);
    assert_eq!(of(drop), vec![s(0, "0"), s(20, "1"), s(21, "0")]);
    assert_eq!(of(timeout), vec![s(0, "0")]);
}

#[test]
fn event_pulses_are_the_same_with_skip_off_with_a_log_and_in_a_window() {
    let (on, _) = pulse_run(true, TraceOptions::default(), false);
    let (off, _) = pulse_run(false, TraceOptions::default(), false);
    assert_eq!(on, off, "skip off");
    // An event log set after the trace keeps the pulses, and logs both blocks.
    let (with_log, lines) = pulse_run(true, TraceOptions::default(), true);
    assert_eq!(on, with_log, "with a log");
    assert_eq!(lines.lines().filter(|l| l.contains(" nak ")).count(), 12, "{lines}");
    // Only the pulses a glob selects; a window opening mid-pulse shows it high.
    let (text, _) = pulse_run(true, globs(&["core.rx.ev_nak"]), false);
    let v = parse_vcd(&text);
    assert_eq!(v.vars.keys().collect::<Vec<_>>(), ["core.rx.ev_nak"]);
    let opts = TraceOptions {
        from: Some(11),
        to: Some(21),
        ..TraceOptions::default()
    };
    let (text, _) = pulse_run(true, opts.clone(), false);
    let (text_off, _) = pulse_run(false, opts, false);
    assert_eq!(text, text_off, "window, skip off");
    let v = parse_vcd(&text);
    let code = &v.vars["core.rx.ev_nak"].0;
    let nak: Vec<(u64, bool, String)> = v
        .changes
        .iter()
        .filter(|c| &c.2 == code)
        .map(|c| (c.0, c.1, c.3.clone()))
        .collect();
    assert_eq!(
        nak,
        [
            (11, true, "1".to_string()),
            (12, false, "0".to_string()),
            (20, false, "1".to_string())
        ]
    );
}
