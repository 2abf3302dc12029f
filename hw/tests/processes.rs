//! Blocks with several processes: a block asks a neighbour in one process and takes the answer
//! in the next, within the cycle. A queue whose process 0 shows its head and whose process 1
//! takes the grant an arbiter gives in between grants in the cycle it asks; a process runs on
//! its own inputs, its own hint, or a request of another process of its block
//! (`Ctx::run_process`), never merely because another ran; event skip,
//! `--no-skip` and shuffled evaluation agree; a ring through a block's process order is refused
//! naming it; a process the block does not implement is a protocol violation.

#[allow(dead_code, unused_imports)] // the helpers other test files use
mod common;

use std::collections::VecDeque;

use common::{add, comp, connect};
use hwsim_hw::{
    Component, Ctx, ElabError, In, Netlist, PortDecl, SignalNet, Sim, Stop, StreamNet, Wake, MAX_PROCESSES,
};

// ------------------------------------------------------------------------------------------------
// A queue with two processes and an arbiter between them.

/// Process 0 shows the head (0 = empty) on a combinational output; process 1 takes the grant
/// of the same cycle and pops.
struct Queue {
    input: hwsim_hw::StreamIn<u64>,
    head: hwsim_hw::CombOut<u64>,
    grant: hwsim_hw::StreamIn<u64>,
    taken: hwsim_hw::Out<u64>,
    taken_count: hwsim_hw::CounterId,
    /// Cycles in which process 1 ran, for the tests of the order rules.
    runs_1: std::rc::Rc<std::cell::RefCell<Vec<u64>>>,
}

impl Component for Queue {
    fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
        let h = self.input.peek().map_or(0, |v| *v);
        self.head.set(h);
        Wake::OnInput
    }
    fn process(&mut self, p: u32, ctx: &mut Ctx<'_>) -> Wake {
        assert_eq!(p, 1);
        self.runs_1.borrow_mut().push(ctx.now());
        if let Some(g) = self.grant.pop() {
            let v = self.input.pop();
            assert_eq!(v, Some(g), "the grant names the head");
            self.taken.set(g);
            ctx.count(self.taken_count, 1);
            // The next head (or none) shows next cycle: process 0 is asked for it.
            ctx.run_process(0);
        }
        Wake::OnInput
    }
}

/// Grants the head it sees, in the same cycle, on cycles that are multiples of `every`.
struct Arbiter {
    head: In<u64>,
    grant: hwsim_hw::StreamOut<u64>,
    every: u64,
}

impl Component for Arbiter {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let h = self.head.get();
        if h == 0 {
            return Wake::OnInput;
        }
        if ctx.now() % self.every == 0 && self.grant.can_push() {
            self.grant.push(h);
            return Wake::OnInput;
        }
        Wake::At(ctx.now().next_multiple_of(self.every))
    }
}

/// A source pushing `values` at the given cycles (registered stream).
fn add_source(nl: &mut Netlist, path: &str, values: Vec<(u64, u64)>) {
    add(nl, path, "source", vec![PortDecl::stream_out::<u64>("out")], move |b| {
        let o = b.stream_out::<u64>("out")?;
        let mut rows = VecDeque::from(values);
        comp(move |ctx| {
            if let Some(&(at, v)) = rows.front() {
                if at <= ctx.now() && o.can_push() {
                    o.push(v);
                    rows.pop_front();
                }
            }
            match rows.front() {
                Some(&(at, _)) => Wake::At(at.max(ctx.now() + 1)),
                None => Wake::OnInput,
            }
        })
    });
}

type Runs = std::rc::Rc<std::cell::RefCell<Vec<u64>>>;

fn queue_pair(values: Vec<(u64, u64)>, every: u64, capacity: u32) -> (Netlist, Runs) {
    let runs: Runs = Default::default();
    let mut nl = Netlist::new();
    add_source(&mut nl, "src", values);
    add(
        &mut nl,
        "arb",
        "arbiter",
        vec![
            PortDecl::comb_input::<u64>("head"),
            PortDecl::comb_stream_out::<u64>("grant"),
        ],
        move |b| {
            Ok(Box::new(Arbiter {
                head: b.input("head")?,
                grant: b.stream_out("grant")?,
                every,
            }))
        },
    );
    let r = runs.clone();
    add(
        &mut nl,
        "q",
        "queue2",
        vec![
            PortDecl::stream_in::<u64>("in", capacity),
            PortDecl::comb_output::<u64>("head"),
            PortDecl::comb_stream_in::<u64>("grant", 1).process(1),
            PortDecl::output::<u64>("taken").process(1),
        ],
        move |b| {
            Ok(Box::new(Queue {
                input: b.stream_in("in")?,
                head: b.comb_output("head")?,
                grant: b.stream_in("grant")?,
                taken: b.output("taken")?,
                taken_count: b.counter("taken"),
                runs_1: r,
            }))
        },
    );
    connect(&mut nl, "src.out", "q.in");
    connect(&mut nl, "q.head", "arb.head");
    connect(&mut nl, "arb.grant", "q.grant");
    (nl, runs)
}

fn logged(sim: &Sim) {
    for p in sim.net_paths().to_vec() {
        sim.net(&p).unwrap().enable_log();
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
    s.log().as_ref().expect("logging enabled").clone()
}

#[test]
fn a_grant_between_two_processes_is_taken_in_the_cycle_it_is_asked() {
    for skip in [true, false] {
        for shuffle in [None, Some(3), Some(11)] {
            // Pushed at 5, 6, 7, seen at 6, 7, 8, granted and taken in those cycles.
            let (nl, _) = queue_pair(vec![(5, 10), (6, 11), (7, 12)], 1, 4);
            let mut sim = nl.elaborate(1).unwrap();
            sim.set_skip(skip);
            sim.set_shuffle(shuffle);
            logged(&sim);
            assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
            let at = format!("skip = {skip}, shuffle = {shuffle:?}");
            assert_eq!(stream_log(&sim, "arb.grant"), [(6, 10), (7, 11), (8, 12)], "{at}");
            assert_eq!(signal_log(&sim, "q.taken"), [(6, 10), (7, 11), (8, 12)], "{at}");
            assert_eq!(sim.counter("q.taken"), Some(3));
        }
    }
}

#[test]
fn a_head_waiting_for_its_grant_holds_until_granted() {
    for skip in [true, false] {
        // Grants only on even cycles: 10 seen at 6 (granted at 6), 11 at 7 (granted at 8), 12
        // behind it (granted at 10).
        let (nl, _) = queue_pair(vec![(5, 10), (6, 11), (7, 12)], 2, 4);
        let mut sim = nl.elaborate(1).unwrap();
        sim.set_skip(skip);
        logged(&sim);
        sim.run(100).unwrap();
        assert_eq!(
            stream_log(&sim, "arb.grant"),
            [(6, 10), (8, 11), (10, 12)],
            "skip = {skip}"
        );
        assert_eq!(signal_log(&sim, "q.head"), [(6, 10), (7, 11), (9, 12), (11, 0)]);
    }
}

#[test]
fn a_later_process_runs_on_its_own_input_not_because_an_earlier_one_ran() {
    // A queue of equal values: the head does not change while three are granted; process 1 runs
    // for each grant (its input), and not at 9, when process 0 shows the queue empty.
    let (nl, runs) = queue_pair(vec![(5, 7), (5, 7), (5, 7)], 1, 4);
    let mut sim = nl.elaborate(1).unwrap();
    logged(&sim);
    sim.run(100).unwrap();
    // The source pushes one per cycle (a stream takes one push per cycle): 7 at 5, 6, 7.
    assert_eq!(signal_log(&sim, "q.head"), [(6, 7), (9, 0)]);
    assert_eq!(stream_log(&sim, "arb.grant"), [(6, 7), (7, 7), (8, 7)]);
    assert_eq!(sim.counter("q.taken"), Some(3));
    // Process 1 ran at 0 (everything runs at cycle 0) and with each grant; process 0 ran at 9
    // alone.
    assert_eq!(*runs.borrow(), [0, 6, 7, 8]);
}

#[test]
fn every_entry_of_a_block_runs_every_cycle_without_skip() {
    let (nl, runs) = queue_pair(vec![(5, 10)], 1, 4);
    let mut sim = nl.elaborate(1).unwrap();
    sim.set_skip(false);
    for _ in 0..20 {
        sim.step().unwrap();
    }
    assert_eq!(*runs.borrow(), (0..20).collect::<Vec<u64>>());
    // Four processes (src, arb, q's two), each once per cycle, in two scheduling entries: src,
    // and the cluster arb and q's processes form (same-cycle bindings and q's process order).
    assert_eq!(sim.stats().process_runs, 4 * 20);
    assert_eq!(sim.stats().activations, 2 * 20);
    assert_eq!(sim.component_count(), 3);
    // Per process of each block, in elaboration order: the profile `--stats` prints.
    let per: Vec<(String, u32, u64)> = sim
        .activations()
        .into_iter()
        .map(|(p, _, proc, n)| (p.to_string(), proc, n))
        .collect();
    assert_eq!(
        per,
        [
            ("src".to_string(), 0, 20),
            ("arb".to_string(), 0, 20),
            ("q".to_string(), 0, 20),
            ("q".to_string(), 1, 20)
        ]
    );
}

// ------------------------------------------------------------------------------------------------
// Elaboration rules

fn elab_err(nl: Netlist) -> ElabError {
    match nl.elaborate(1) {
        Ok(_) => panic!("elaboration should fail"),
        Err(e) => e,
    }
}

#[test]
fn a_ring_through_a_blocks_process_order_is_refused_naming_it() {
    // q's process 1 drives `back` combinationally into a reader that drives q's process 0:
    // process 0 → process 1 → r → process 0 has no order.
    let mut nl = Netlist::new();
    add(
        &mut nl,
        "q",
        "two",
        vec![
            PortDecl::comb_input::<u64>("fwd"),
            PortDecl::comb_output::<u64>("back").process(1),
        ],
        |b| {
            let _i = b.input::<u64>("fwd")?;
            let _o = b.comb_output::<u64>("back")?;
            comp(|_| Wake::OnInput)
        },
    );
    add(
        &mut nl,
        "r",
        "pass",
        vec![PortDecl::comb_input::<u64>("in"), PortDecl::comb_output::<u64>("out")],
        |b| {
            let _i = b.input::<u64>("in")?;
            let _o = b.comb_output::<u64>("out")?;
            comp(|_| Wake::OnInput)
        },
    );
    connect(&mut nl, "q.back", "r.in");
    connect(&mut nl, "r.out", "q.fwd");
    let e = elab_err(nl).to_string();
    assert!(
        e.contains("q (process 0) → q (process 1), q.back → r.in, r.out → q.fwd"),
        "{e}"
    );
}

#[test]
fn the_same_wiring_into_a_later_process_is_no_loop() {
    // As above with `fwd` read by process 1 and `back` written by process 0: an order exists.
    let mut nl = Netlist::new();
    add(
        &mut nl,
        "q",
        "two",
        vec![
            PortDecl::comb_input::<u64>("fwd").process(1),
            PortDecl::comb_output::<u64>("back"),
        ],
        |b| {
            let _i = b.input::<u64>("fwd")?;
            let _o = b.comb_output::<u64>("back")?;
            comp(|_| Wake::OnInput)
        },
    );
    add(
        &mut nl,
        "r",
        "pass",
        vec![PortDecl::comb_input::<u64>("in"), PortDecl::comb_output::<u64>("out")],
        |b| {
            let _i = b.input::<u64>("in")?;
            let _o = b.comb_output::<u64>("out")?;
            comp(|_| Wake::OnInput)
        },
    );
    connect(&mut nl, "q.back", "r.in");
    connect(&mut nl, "r.out", "q.fwd");
    // The block does not implement process 1: the run reports it, at cycle 0, on the block.
    let mut sim = nl.elaborate(1).unwrap();
    let e = sim.run(10).unwrap_err().to_string();
    assert!(e.contains("process 1 is not implemented by this block"), "{e}");
    assert!(e.contains("`q`") || e.contains(" q"), "{e}");
}

#[test]
fn processes_are_bounded() {
    let mut nl = Netlist::new();
    let e = nl
        .add(
            "p",
            "many",
            vec![PortDecl::input::<u64>("x").process(MAX_PROCESSES)],
            Box::new(|_| comp(|_| Wake::OnInput)),
        )
        .expect_err("refused");
    assert!(e.to_string().contains("at most 8 processes"), "{e}");
}

/// A block of two processes with an output each, logging when each runs; `script` says what
/// process `p` does at cycle `now`: its hint, and the requests it makes.
type Script = fn(u32, u64, &mut Ctx<'_>) -> Wake;

struct Scripted {
    log: std::rc::Rc<std::cell::RefCell<Vec<(u32, u64)>>>,
    script: Script,
}

impl Component for Scripted {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        self.log.borrow_mut().push((0, ctx.now()));
        (self.script)(0, ctx.now(), ctx)
    }
    fn process(&mut self, p: u32, ctx: &mut Ctx<'_>) -> Wake {
        self.log.borrow_mut().push((p, ctx.now()));
        (self.script)(p, ctx.now(), ctx)
    }
}

fn scripted(script: Script, skip: bool) -> (Result<Stop, String>, Vec<(u32, u64)>, u64) {
    let log: std::rc::Rc<std::cell::RefCell<Vec<(u32, u64)>>> = Default::default();
    let l = log.clone();
    let mut nl = Netlist::new();
    add(
        &mut nl,
        "t",
        "scripted",
        vec![PortDecl::output::<u64>("x0"), PortDecl::output::<u64>("x1").process(1)],
        move |b| {
            let _ = b.output::<u64>("x0")?;
            let _ = b.output::<u64>("x1")?;
            Ok(Box::new(Scripted { log: l, script }))
        },
    );
    let mut sim = nl.elaborate(1).unwrap();
    sim.set_skip(skip);
    let r = sim.run(100).map_err(|e| e.to_string());
    let out = log.borrow().clone();
    (r, out, sim.now())
}

#[test]
fn a_timer_of_a_later_process_runs_that_process_alone() {
    // Process 1 asks for cycle 30: it runs then, process 0 does not.
    let (r, log, now) = scripted(
        |p, now, _| {
            if p == 1 && now < 30 {
                Wake::At(30)
            } else {
                Wake::OnInput
            }
        },
        true,
    );
    assert_eq!(r, Ok(Stop::Quiescent));
    assert_eq!(log, [(0, 0), (1, 0), (1, 30)]);
    assert_eq!(now, 31);
}

#[test]
fn a_request_runs_a_later_process_in_the_cycle_and_an_earlier_one_at_its_time() {
    // At 0 process 0 hands process 1 work (it runs at 0 anyway, as everything does); at 10
    // (process 0's own timer) it hands it work again: process 1 runs at 10 too. Process 1 asks
    // for process 0 next cycle at 10 and at cycle 40 at 11.
    // (A process keeps the contract: with skip off it runs every cycle and returns the same
    // hint when it has nothing to do.)
    let script: Script = |p, now, ctx| match (p, now) {
        (0, 0) => {
            ctx.run_process(1);
            Wake::At(10)
        }
        (0, 1..10) => Wake::At(10),
        (0, 10) => {
            ctx.run_process(1);
            Wake::OnInput
        }
        (1, 10) => {
            ctx.run_process(0);
            Wake::OnInput
        }
        (0, 11) => {
            ctx.run_process(1);
            Wake::OnInput
        }
        // Like a hint, the request stands until process 1 runs again, which renews it.
        (1, 11..40) => {
            ctx.run_process_on(0, Wake::At(40));
            Wake::OnInput
        }
        _ => Wake::OnInput,
    };
    for skip in [true, false] {
        let (r, log, now) = scripted(script, skip);
        assert_eq!(r, Ok(Stop::Quiescent));
        if skip {
            assert_eq!(log, [(0, 0), (1, 0), (0, 10), (1, 10), (0, 11), (1, 11), (0, 40)]);
            assert_eq!(now, 41);
        } else {
            // Every process every cycle; the run ends where it ends with skip.
            assert_eq!(log.len(), 2 * 41);
            assert_eq!(now, 41);
        }
    }
}

#[test]
fn a_request_for_a_process_the_block_lacks_is_a_protocol_violation() {
    let (r, _, _) = scripted(
        |p, now, ctx| {
            if p == 0 && now == 3 {
                ctx.run_process(2);
            }
            if now < 3 {
                Wake::NextCycle
            } else {
                Wake::OnInput
            }
        },
        true,
    );
    assert_eq!(
        r,
        Err("protocol violation at cycle 3 in `t`: run_process(2): the block has 2 process(es), 0..=1".to_string())
    );
}

#[test]
fn a_combinational_output_written_from_another_process_is_a_protocol_violation() {
    // `bad` declares `out` on process 0 but writes it from process 1, after its reader ticked
    // (the reader comes after process 0 in the order, before process 1).
    struct Bad {
        out: hwsim_hw::CombOut<u64>,
    }
    impl Component for Bad {
        fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
            Wake::OnInput
        }
        fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
            if ctx.now() == 2 {
                self.out.set(7);
            }
            Wake::NextCycle
        }
    }
    let mut nl = Netlist::new();
    add(
        &mut nl,
        "bad",
        "bad",
        vec![
            PortDecl::comb_output::<u64>("out"),
            PortDecl::comb_input::<u64>("back").process(1),
        ],
        |b| {
            Ok(Box::new(Bad {
                out: b.comb_output("out")?,
            }))
        },
    );
    add(
        &mut nl,
        "r",
        "reader",
        vec![PortDecl::comb_input::<u64>("in"), PortDecl::comb_output::<u64>("out")],
        |b| {
            let i = b.input::<u64>("in")?;
            let o = b.comb_output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get());
                Wake::OnInput
            })
        },
    );
    connect(&mut nl, "bad.out", "r.in");
    connect(&mut nl, "r.out", "bad.back");
    let mut sim = nl.elaborate(1).unwrap();
    let e = sim.run(100).unwrap_err().to_string();
    assert_eq!(
        e,
        "protocol violation at cycle 2 in `bad.out`: combinational output written after its reader \
         ticked (a block writes a port only from the process the port names)"
    );
}

#[test]
fn a_request_stands_until_its_process_runs_again() {
    // Process 1 asks for process 0 at 30, then runs at 10 (its own timer) asking nothing: the
    // request is withdrawn, as a hint is replaced; process 0 does not run at 30.
    let (r, log, now) = scripted(
        |p, now, ctx| match (p, now) {
            (1, 0) => {
                ctx.run_process_at(0, 30);
                Wake::At(10)
            }
            _ => Wake::OnInput,
        },
        true,
    );
    assert_eq!(r, Ok(Stop::Quiescent));
    assert_eq!(log, [(0, 0), (1, 0), (1, 10)]);
    assert_eq!(now, 11);
    // Renewed at 10, it stands: process 0 runs at 30.
    let (_, log, now) = scripted(
        |p, now, ctx| match (p, now) {
            (1, 0) => {
                ctx.run_process_at(0, 30);
                Wake::At(10)
            }
            (1, 10) => {
                ctx.run_process_at(0, 30);
                Wake::OnInput
            }
            _ => Wake::OnInput,
        },
        true,
    );
    assert_eq!(log, [(0, 0), (1, 0), (1, 10), (0, 30)]);
    assert_eq!(now, 31);
}
