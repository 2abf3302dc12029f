//! Same-cycle (combinational) connections: a value driven at cycle n is read at n by readers
//! ticked after their drivers in the static order; a combinational loop is refused at
//! elaboration (feedback within a cycle is two processes of one block: processes.rs); event
//! skip, `--no-skip` and shuffled evaluation give the same results; and a random mix of registered and
//! combinational bindings evaluates as a plain reference evaluator says.

#[allow(dead_code)] // the helpers other test files use
mod common;

use std::fmt::Write as _;

use common::{add, comp, connect, counters, SharedBuf};
use hwsim_hw::{ElabError, Harness, In, Netlist, PortDecl, SignalNet, Sim, Stop, StreamNet, TraceOptions, Wake};
use proptest::prelude::*;
use proptest::test_runner::Config;

// ------------------------------------------------------------------------------------------------
// Blocks

/// A registered counter: drives `now` on `count` every cycle below `stop`.
fn add_counter(nl: &mut Netlist, path: &str, stop: u64) {
    add(nl, path, "counter", vec![PortDecl::output::<u64>("count")], move |b| {
        let o = b.output::<u64>("count")?;
        comp(move |ctx| {
            let now = ctx.now().min(stop);
            o.set(now);
            Wake::next_cycle_if(now < stop)
        })
    });
}

/// A combinational add-one stage: `out = in + 1` in the same cycle.
fn add_comb_add1(nl: &mut Netlist, path: &str) {
    let ports = vec![PortDecl::comb_input::<u64>("in"), PortDecl::comb_output::<u64>("out")];
    add(nl, path, "comb_add1", ports, |b| {
        let i = b.input::<u64>("in")?;
        let o = b.comb_output::<u64>("out")?;
        comp(move |_| {
            o.set(i.get().wrapping_add(1));
            Wake::OnInput
        })
    });
}

/// A register behind a combinational path: `out(n) = in(n) + 1`, seen at n + 1.
fn add_reg_add1(nl: &mut Netlist, path: &str) {
    let ports = vec![PortDecl::comb_input::<u64>("in"), PortDecl::output::<u64>("out")];
    add(nl, path, "reg_add1", ports, |b| {
        let i = b.input::<u64>("in")?;
        let o = b.output::<u64>("out")?;
        comp(move |_| {
            o.set(i.get().wrapping_add(1));
            Wake::OnInput
        })
    });
}

/// A registered add-one stage reading a registered input (the W3 stage).
fn add_add1(nl: &mut Netlist, path: &str) {
    let ports = vec![PortDecl::input::<u64>("in"), PortDecl::comb_output::<u64>("out")];
    add(nl, path, "add1_to_comb", ports, |b| {
        let i = b.input::<u64>("in")?;
        let o = b.comb_output::<u64>("out")?;
        comp(move |_| {
            o.set(i.get().wrapping_add(1));
            Wake::OnInput
        })
    });
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

fn elab_err(nl: Netlist) -> ElabError {
    match nl.elaborate(1) {
        Ok(_) => panic!("elaboration should fail"),
        Err(e) => e,
    }
}

// ------------------------------------------------------------------------------------------------
// Chains

/// counter → N combinational add-one stages → a register: the register holds count + N one
/// cycle after the counter's value is seen, whatever N (a registered chain would take N cycles).
fn comb_chain(n: usize, reverse: bool) -> Netlist {
    let mut nl = Netlist::new();
    add_counter(&mut nl, "src", 20);
    // Instances in reverse order too, so the static order is not the order of creation.
    let order: Vec<usize> = if reverse {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    for k in order {
        add_comb_add1(&mut nl, &format!("c{k}"));
    }
    // The first stage reads a registered signal, so it is a registered-input, comb-output block.
    add_reg_add1(&mut nl, "dst");
    nl.add(
        "head",
        "add1_to_comb",
        vec![PortDecl::input::<u64>("in"), PortDecl::comb_output::<u64>("out")],
        Box::new(|b| {
            let i = b.input::<u64>("in")?;
            let o = b.comb_output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get());
                Wake::OnInput
            })
        }),
    )
    .unwrap();
    connect(&mut nl, "src.count", "head.in");
    connect(&mut nl, "head.out", "c0.in");
    for k in 1..n {
        connect(&mut nl, &format!("c{}.out", k - 1), &format!("c{k}.in"));
    }
    connect(&mut nl, &format!("c{}.out", n - 1), "dst.in");
    nl
}

#[test]
fn a_chain_of_combinational_stages_passes_a_value_in_one_cycle() {
    for n in [1usize, 2, 7, 100] {
        for reverse in [false, true] {
            for skip in [true, false] {
                let mut sim = comb_chain(n, reverse).elaborate(1).unwrap();
                sim.set_skip(skip);
                logged(&sim);
                assert_eq!(sim.run(1000).unwrap(), Stop::Quiescent);
                // count(t) = t is seen at t + 1 by `head`, which passes it on in that cycle;
                // each stage adds one in the same cycle; `dst` adds one more and registers it.
                // dst(t) = count(t − 1) + n + 1, count(−1) = 0 (the reset value): count(0) = 0
                // changes nothing, count(t) = t for 1 ≤ t ≤ 20.
                let dst = signal_log(&sim, "dst.out");
                let n64 = n as u64;
                let want: Vec<(u64, u64)> = std::iter::once((0, n64 + 1))
                    .chain((2..=21).map(|t| (t, t - 1 + n64 + 1)))
                    .collect();
                assert_eq!(dst, want, "n = {n}, reverse = {reverse}, skip = {skip}");
                // A combinational net's log has the value in the cycle it was driven: the last
                // stage shows count(4) + n = 4 + n at cycle 5.
                let last = signal_log(&sim, &format!("c{}.out", n - 1));
                assert!(last.contains(&(5, 4 + n64)), "n = {n}: {last:?}");
                // Quiet once the last change is through: the counter's last value is seen at 21.
                assert_eq!(sim.now(), 22);
            }
        }
    }
}

/// counter → a0 (registered in, comb out, +1) → a1 (comb, +1) → r1 (register, +1) → b0
/// (registered in, comb out, +1) → b1, b2 (comb, +1 each) → r2 (register, +1).
fn mixed_chain(skip: bool) -> Sim {
    let mut nl = Netlist::new();
    add_counter(&mut nl, "src", 30);
    add_add1(&mut nl, "a0");
    add_comb_add1(&mut nl, "a1");
    add_reg_add1(&mut nl, "r1");
    add_add1(&mut nl, "b0");
    add_comb_add1(&mut nl, "b1");
    add_comb_add1(&mut nl, "b2");
    add_reg_add1(&mut nl, "r2");
    for (f, t) in [
        ("src.count", "a0.in"),
        ("a0.out", "a1.in"),
        ("a1.out", "r1.in"),
        ("r1.out", "b0.in"),
        ("b0.out", "b1.in"),
        ("b1.out", "b2.in"),
        ("b2.out", "r2.in"),
    ] {
        connect(&mut nl, f, t);
    }
    let mut sim = nl.elaborate(1).unwrap();
    sim.set_skip(skip);
    logged(&sim);
    assert_eq!(sim.run(200).unwrap(), Stop::Quiescent);
    sim
}

#[test]
fn mixed_chains_take_one_cycle_per_register() {
    for skip in [true, false] {
        let sim = mixed_chain(skip);
        // count(t) = t is written at t and seen at t + 1 (count(−1) = 0, the reset value): at t,
        // a0 and a1 add 2 to count(t − 1) in that cycle and r1 writes count(t − 1) + 3.
        let r1 = signal_log(&sim, "r1.out");
        assert_eq!(r1[..3], [(0, 3), (2, 4), (3, 5)], "skip = {skip}");
        assert_eq!(*r1.last().unwrap(), (31, 33));
        // At t, b0..b2 add 3 to r1(t − 1) (0 at t = 0) and r2 adds 1: r2(t) = r1(t − 1) + 4.
        let r2 = signal_log(&sim, "r2.out");
        assert_eq!(r2[..3], [(0, 4), (1, 7), (3, 8)], "skip = {skip}");
        assert_eq!(*r2.last().unwrap(), (32, 37));
        // Two registers: the last change (count stops at 30, seen at 31) reaches r2 at 32.
        assert_eq!(sim.now(), 33);
    }
}

#[test]
fn a_combinational_net_is_traced_in_the_cycle_it_is_driven() {
    let mut sim = comb_chain(3, false).elaborate(1).unwrap();
    let buf = SharedBuf::default();
    sim.trace_vcd(Box::new(buf.clone()), TraceOptions::default()).unwrap();
    sim.run(1000).unwrap();
    let now = sim.now();
    sim.finish_trace(now).unwrap();
    let vcd = buf.text();
    // The code of c2.out, then the value it has at #5: count(4) + 3 = 7, driven at 5.
    let code = vcd
        .lines()
        .find(|l| l.starts_with("$var") && l.contains(" out ") && vcd_scope_of(&vcd, l) == "c2")
        .and_then(|l| l.split_whitespace().nth(3))
        .expect("c2.out declared")
        .to_string();
    let at5 = section(&vcd, 5);
    assert!(at5.iter().any(|l| *l == format!("b111 {code}")), "{at5:?}");
}

/// The scope a `$var` line is declared in.
fn vcd_scope_of<'a>(vcd: &'a str, var_line: &str) -> &'a str {
    let mut scope = "";
    for l in vcd.lines() {
        if let Some(rest) = l.strip_prefix("$scope module ") {
            scope = rest.split_whitespace().next().unwrap_or("");
        }
        if l == var_line {
            return scope;
        }
    }
    ""
}

/// The value-change lines under timestamp `#t`.
fn section(vcd: &str, t: u64) -> Vec<&str> {
    let mark = format!("#{t}");
    vcd.lines()
        .skip_while(|l| *l != mark)
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .collect()
}

// ------------------------------------------------------------------------------------------------
// Elaboration errors

#[test]
fn a_combinational_loop_is_refused_naming_every_binding_on_it() {
    let mut nl = Netlist::new();
    add_counter(&mut nl, "src", 5);
    add_reg_add1(&mut nl, "r");
    for k in 0..3 {
        // A stage with a second, registered input so the ring has a way in.
        add(
            &mut nl,
            &format!("ring.s{k}"),
            "stage",
            vec![
                PortDecl::comb_input::<u64>("in"),
                PortDecl::input::<u64>("x").optional(),
                PortDecl::comb_output::<u64>("out"),
            ],
            |b| {
                let i = b.input::<u64>("in")?;
                let o = b.comb_output::<u64>("out")?;
                comp(move |_| {
                    o.set(i.get() + 1);
                    Wake::OnInput
                })
            },
        );
    }
    connect(&mut nl, "src.count", "ring.s0.x");
    connect(&mut nl, "ring.s0.out", "ring.s1.in");
    connect(&mut nl, "ring.s1.out", "ring.s2.in");
    connect(&mut nl, "ring.s2.out", "ring.s0.in");
    // A branch off the ring is not part of the message.
    connect(&mut nl, "ring.s1.out", "r.in");
    let e = elab_err(nl);
    assert!(matches!(e, ElabError::CombLoop { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "combinational loop through 3 instance(s): ring.s0.out → ring.s1.in, ring.s1.out → ring.s2.in, \
         ring.s2.out → ring.s0.in (each output is read in the cycle it is written by the next instance, \
         around a ring; make one of these bindings registered)"
    );
}

#[test]
fn a_block_reading_its_own_combinational_output_is_a_loop() {
    let mut nl = Netlist::new();
    add_comb_add1(&mut nl, "x");
    connect(&mut nl, "x.out", "x.in");
    let e = elab_err(nl);
    assert_eq!(
        e.to_string(),
        "combinational loop through 1 instance(s): x.out → x.in (each output is read in the cycle it is \
         written by the next instance, around a ring; make one of these bindings registered)"
    );
}

#[test]
fn a_combinational_output_bound_to_a_registered_input_is_refused() {
    let mut nl = Netlist::new();
    add_comb_add1(&mut nl, "c");
    add(&mut nl, "r", "reg", vec![PortDecl::input::<u64>("in")], |_| {
        comp(|_| Wake::OnInput)
    });
    let e = nl.connect("c.out", "r.in", None).unwrap_err();
    assert!(matches!(e, ElabError::TimingMismatch { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "timing mismatch: `c.out` is comb signal<u64> but `r.in` is signal<u64> (a combinational output \
         drives only combinational inputs, a registered one only registered inputs)"
    );
    // And the other way round.
    let mut nl = Netlist::new();
    add_counter(&mut nl, "src", 5);
    add_comb_add1(&mut nl, "c");
    let e = nl.connect("src.count", "c.in", None).unwrap_err();
    assert!(matches!(e, ElabError::TimingMismatch { .. }), "{e:?}");
}

#[test]
fn a_combinational_input_with_two_drivers_is_refused() {
    let mut nl = Netlist::new();
    add_comb_add1(&mut nl, "a");
    add_comb_add1(&mut nl, "b");
    add_comb_add1(&mut nl, "c");
    connect(&mut nl, "a.out", "c.in");
    connect(&mut nl, "b.out", "c.in");
    let e = elab_err(nl);
    assert_eq!(e.to_string(), "input `c.in` has two drivers: `a.out` and `b.out`");
}

#[test]
fn a_block_asking_for_the_wrong_timing_is_refused() {
    let mut nl = Netlist::new();
    nl.add(
        "x",
        "wrong",
        vec![PortDecl::comb_output::<u64>("out")],
        Box::new(|b| {
            let _o = b.output::<u64>("out")?;
            comp(|_| Wake::OnInput)
        }),
    )
    .unwrap();
    let e = elab_err(nl);
    assert_eq!(
        e.to_string(),
        "instance `x`: port `out` is declared combinational, asked as registered"
    );
}

// ------------------------------------------------------------------------------------------------
// The harness

#[test]
fn a_harness_poke_on_a_combinational_input_is_seen_in_the_same_step() {
    let mut h = Harness::new(
        "comb_add1",
        vec![PortDecl::comb_input::<u64>("in"), PortDecl::comb_output::<u64>("out")],
        Box::new(|b| {
            let i = b.input::<u64>("in")?;
            let o = b.comb_output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get() + 1);
                Wake::OnInput
            })
        }),
        1,
        4,
    )
    .unwrap();
    h.poke("in", 41u64);
    h.step().unwrap();
    assert_eq!(h.peek::<u64>("out"), 42);
    h.steps(3).unwrap();
    assert_eq!(h.peek::<u64>("out"), 42);
    h.poke("in", 7u64);
    h.step().unwrap();
    assert_eq!(h.peek::<u64>("out"), 8);
}

// ------------------------------------------------------------------------------------------------
// Random mixes of registered and combinational bindings against a reference evaluator

#[derive(Clone, Debug)]
struct NodeSpec {
    /// Output combinational (else registered).
    comb: bool,
    /// Up to two inputs, indices (modulo) of earlier nodes.
    inputs: Vec<usize>,
    k: u64,
}

#[derive(Clone, Debug)]
struct DagSpec {
    /// Sources: `out(t) = (t + phase) / period`, registered.
    sources: Vec<(u64, u64)>,
    nodes: Vec<NodeSpec>,
    /// A permutation key for the order the instances are created in.
    order_seed: u64,
}

fn dag_spec() -> impl Strategy<Value = DagSpec> {
    let node = (any::<bool>(), prop::collection::vec(0usize..1000, 1..3), 0u64..5)
        .prop_map(|(comb, inputs, k)| NodeSpec { comb, inputs, k });
    (
        prop::collection::vec((1u64..20, 0u64..20), 1..3),
        prop::collection::vec(node, 1..14),
        any::<u64>(),
    )
        .prop_map(|(sources, nodes, order_seed)| DagSpec {
            sources,
            nodes,
            order_seed,
        })
}

/// The inputs of node `i` (an index over sources then nodes), each earlier than it.
fn inputs_of(spec: &DagSpec, i: usize) -> Vec<usize> {
    let s = spec.sources.len();
    spec.nodes[i].inputs.iter().map(|&x| x % (s + i)).collect()
}

fn comb_of(spec: &DagSpec, j: usize) -> bool {
    let s = spec.sources.len();
    j >= s && spec.nodes[j - s].comb
}

fn build_dag(spec: &DagSpec) -> Netlist {
    let s = spec.sources.len();
    let name = |j: usize| {
        if j < s {
            format!("src{j}")
        } else {
            format!("n{}", j - s)
        }
    };
    let mut nl = Netlist::new();
    // Create the instances in a shuffled order: the schedule must not rely on it.
    let mut order: Vec<usize> = (0..s + spec.nodes.len()).collect();
    let mut rng = hwsim_hw::Rng::from_seed(spec.order_seed);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    for &j in &order {
        if j < s {
            let (period, phase) = spec.sources[j];
            add(
                &mut nl,
                &name(j),
                "src",
                vec![PortDecl::output::<u64>("out")],
                move |b| {
                    let o = b.output::<u64>("out")?;
                    comp(move |ctx| {
                        let k = (ctx.now() + phase) / period;
                        o.set(k);
                        Wake::At((k + 1) * period - phase)
                    })
                },
            );
            continue;
        }
        let i = j - s;
        let node = spec.nodes[i].clone();
        let ins = inputs_of(spec, i);
        let mut ports: Vec<PortDecl> = ins
            .iter()
            .enumerate()
            .map(|(p, &x)| {
                let d = PortDecl::input::<u64>(&format!("i{p}"));
                if comb_of(spec, x) {
                    d.comb()
                } else {
                    d
                }
            })
            .collect();
        ports.push(if node.comb {
            PortDecl::comb_output::<u64>("out")
        } else {
            PortDecl::output::<u64>("out")
        });
        let n_in = ins.len();
        add(&mut nl, &name(j), "node", ports, move |b| {
            let ins: Vec<In<u64>> = (0..n_in).map(|p| b.input(&format!("i{p}"))).collect::<Result<_, _>>()?;
            enum O {
                Reg(hwsim_hw::Out<u64>),
                Comb(hwsim_hw::CombOut<u64>),
            }
            let o = if node.comb {
                O::Comb(b.comb_output("out")?)
            } else {
                O::Reg(b.output("out")?)
            };
            comp(move |_| {
                let v = ins.iter().fold(node.k, |a, i| a.wrapping_mul(3).wrapping_add(i.get()));
                match &o {
                    O::Reg(o) => o.set(v),
                    O::Comb(o) => o.set(v),
                }
                Wake::OnInput
            })
        });
    }
    for i in 0..spec.nodes.len() {
        for (p, &x) in inputs_of(spec, i).iter().enumerate() {
            connect(&mut nl, &format!("{}.out", name(x)), &format!("n{i}.i{p}"));
        }
    }
    nl
}

/// The reference: out_j(t) for every node, cycle by cycle, in index order (a topological order),
/// reading a combinational input's value of the same cycle and a registered one's of the cycle
/// before (0 before cycle 0). Returns each output's changes, as the kernel's logs record them.
fn reference(spec: &DagSpec, limit: u64) -> Vec<Vec<(u64, u64)>> {
    let s = spec.sources.len();
    let total = s + spec.nodes.len();
    let mut prev = vec![0u64; total];
    let mut logs = vec![Vec::new(); total];
    for t in 0..limit {
        let mut cur = vec![0u64; total];
        for j in 0..total {
            cur[j] = if j < s {
                let (period, phase) = spec.sources[j];
                (t + phase) / period
            } else {
                let node = &spec.nodes[j - s];
                inputs_of(spec, j - s).iter().fold(node.k, |a, &x| {
                    let seen = if comb_of(spec, x) { cur[x] } else { prev[x] };
                    a.wrapping_mul(3).wrapping_add(seen)
                })
            };
            // A change from the value held before is logged at the cycle of the write.
            if cur[j] != prev[j] {
                logs[j].push((t, cur[j]));
            }
        }
        prev = cur;
    }
    logs
}

fn run_dag(spec: &DagSpec, limit: u64, skip: bool, shuffle: Option<u64>) -> (Vec<Vec<(u64, u64)>>, String, String) {
    let s = spec.sources.len();
    let mut sim = build_dag(spec).elaborate(7).unwrap();
    sim.set_skip(skip);
    sim.set_shuffle(shuffle);
    logged(&sim);
    let buf = SharedBuf::default();
    sim.trace_vcd(Box::new(buf.clone()), TraceOptions::default()).unwrap();
    sim.run(limit).unwrap();
    sim.finish_trace(limit).unwrap();
    let logs = (0..s + spec.nodes.len())
        .map(|j| {
            let name = if j < s {
                format!("src{j}")
            } else {
                format!("n{}", j - s)
            };
            signal_log(&sim, &format!("{name}.out"))
        })
        .collect();
    let mut c = String::new();
    for (n, v) in counters(&sim) {
        let _ = writeln!(c, "{n}={v}");
    }
    (logs, buf.text(), c)
}

proptest! {
    #![proptest_config(Config { cases: 256, failure_persistence: None, ..Config::default() })]

    /// The kernel's values equal the reference's, with skip on and off and any shuffle, and the
    /// VCD bytes are the same in every mode.
    #[test]
    fn random_mixes_match_the_reference_evaluator(spec in dag_spec(), limit in 1u64..300, sh in any::<u64>()) {
        let want = reference(&spec, limit);
        let (on, vcd_on, _) = run_dag(&spec, limit, true, None);
        prop_assert_eq!(&on, &want, "skip on");
        let (off, vcd_off, _) = run_dag(&spec, limit, false, None);
        prop_assert_eq!(&off, &want, "skip off");
        prop_assert!(vcd_on == vcd_off, "VCD differs with skip off");
        let (shuf, vcd_sh, _) = run_dag(&spec, limit, true, Some(sh));
        prop_assert_eq!(&shuf, &want, "shuffled");
        prop_assert!(vcd_on == vcd_sh, "VCD differs when shuffled");
    }
}

// ------------------------------------------------------------------------------------------------
// Wide streams: several messages handed over in one cycle

/// A source pushing `per_cycle` values at cycle 2 on a stream of width `width`; a sink popping
/// everything it sees, logging (cycle, value).
fn wide(comb: bool, per_cycle: u64, width: u32) -> Sim {
    let mut nl = Netlist::new();
    let out = PortDecl::stream_out::<u64>("out").width(width);
    let out = if comb { out.comb() } else { out };
    add(&mut nl, "src", "src", vec![out], move |b| {
        let o = b.stream_out::<u64>("out")?;
        comp(move |ctx| {
            if ctx.now() == 2 {
                for v in 0..per_cycle {
                    o.push(v + 1);
                }
            }
            Wake::At(2)
        })
    });
    let i = PortDecl::stream_in::<u64>("in", 16);
    let i = if comb { i.comb() } else { i };
    add(&mut nl, "snk", "snk", vec![i, PortDecl::output::<u64>("got")], |b| {
        let i = b.stream_in::<u64>("in")?;
        let got = b.output::<u64>("got")?;
        let mut sum = 0;
        comp(move |ctx| {
            while let Some(v) = i.pop() {
                sum += v * 100 + ctx.now();
            }
            got.set(sum);
            Wake::OnInput
        })
    });
    connect(&mut nl, "src.out", "snk.in");
    let mut sim = nl.elaborate(1).unwrap();
    logged(&sim);
    let _ = sim.run(20);
    sim
}

#[test]
fn a_wide_stream_takes_several_pushes_in_a_cycle() {
    // Combinational: all three seen at 2; registered: at 3. The log has every push.
    let sim = wide(true, 3, 4);
    assert_eq!(stream_log(&sim, "src.out"), [(2, 1), (2, 2), (2, 3)]);
    assert_eq!(signal_log(&sim, "snk.got"), [(2, 600 + 3 * 2)]);
    let sim = wide(false, 3, 4);
    assert_eq!(stream_log(&sim, "src.out"), [(2, 1), (2, 2), (2, 3)]);
    assert_eq!(signal_log(&sim, "snk.got"), [(3, 600 + 3 * 3)]);
    // One more than the width is a protocol violation naming the stream.
    let mut nl = Netlist::new();
    add(
        &mut nl,
        "src",
        "src",
        vec![PortDecl::comb_stream_out::<u64>("out").width(2)],
        |b| {
            let o = b.stream_out::<u64>("out")?;
            comp(move |_| {
                for v in 0..3 {
                    o.push(v);
                }
                Wake::OnInput
            })
        },
    );
    add(
        &mut nl,
        "snk",
        "snk",
        vec![PortDecl::comb_stream_in::<u64>("in", 16)],
        |b| {
            let i = b.stream_in::<u64>("in")?;
            comp(move |_| {
                while i.pop().is_some() {}
                Wake::OnInput
            })
        },
    );
    connect(&mut nl, "src.out", "snk.in");
    let e = nl.elaborate(1).unwrap().run(5).unwrap_err().to_string();
    assert!(
        e.starts_with("protocol violation at cycle 0 in `src.out`: push beyond the stream's width (2 per cycle)"),
        "{e}"
    );
}

/// A producer pushing on a schedule and a consumer popping a scheduled number each cycle, over
/// a registered or a combinational stream of capacity 4: what the consumer's `len()` says (read
/// from the stream's counters, without the queue) is what a model of the timing says, and a pop
/// succeeds exactly when `len()` is above zero.
fn stream_len_run(comb: bool, pushes: Vec<bool>, pops: Vec<u8>) -> Result<(), String> {
    use std::cell::RefCell;
    use std::rc::Rc;
    let cycles = pushes.len().min(pops.len());
    let seen: Rc<RefCell<Vec<(usize, usize, bool)>>> = Rc::default();
    let mut nl = Netlist::new();
    let out = if comb {
        PortDecl::comb_stream_out::<u64>("out")
    } else {
        PortDecl::stream_out::<u64>("out")
    };
    let pushes_src = pushes.clone();
    add(&mut nl, "src", "src", vec![out], move |b| {
        let o = b.stream_out::<u64>("out")?;
        let pushes = pushes_src.clone();
        comp(move |ctx| {
            let n = ctx.now() as usize;
            if pushes.get(n).copied().unwrap_or(false) && o.can_push() {
                o.push(n as u64);
            }
            Wake::NextCycle
        })
    });
    let inp = if comb {
        PortDecl::comb_stream_in::<u64>("in", 4)
    } else {
        PortDecl::stream_in::<u64>("in", 4)
    };
    let s = seen.clone();
    let pops_snk = pops.clone();
    add(&mut nl, "snk", "snk", vec![inp], move |b| {
        let i = b.stream_in::<u64>("in")?;
        let pops = pops_snk.clone();
        let s = s.clone();
        comp(move |ctx| {
            let n = ctx.now() as usize;
            for _ in 0..pops.get(n).copied().unwrap_or(0) {
                let len = i.len();
                let got = i.pop().is_some();
                s.borrow_mut().push((n, len, got));
            }
            s.borrow_mut().push((n, i.len(), false));
            Wake::NextCycle
        })
    });
    connect(&mut nl, "src.out", "snk.in");
    let mut sim = nl.elaborate(1).map_err(|e| e.to_string())?;
    sim.run(cycles as u64).map_err(|e| e.to_string())?;
    // The model: the producer sees the occupancy committed at the end of the last cycle.
    let (mut queued, mut committed, mut i) = (0usize, 0usize, 0usize);
    let seen = seen.borrow();
    for n in 0..cycles {
        let pushed = pushes[n] && committed < 4;
        let mut visible = queued + usize::from(pushed && comb);
        for _ in 0..pops[n] {
            let (c, len, got) = seen[i];
            i += 1;
            if (c, len, got) != (n, visible, visible > 0) {
                return Err(format!("cycle {n}: len {len}, pop {got}; the model says {visible}"));
            }
            visible = visible.saturating_sub(1);
        }
        let (c, len, _) = seen[i];
        i += 1;
        if (c, len) != (n, visible) {
            return Err(format!("cycle {n}: len {len} after the pops; the model says {visible}"));
        }
        queued = visible + usize::from(pushed && !comb);
        committed = queued;
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 200, failure_persistence: None, ..Config::default() })]
    #[test]
    fn a_consumer_counts_the_messages_it_may_pop_registered_or_combinational(
        comb in any::<bool>(),
        pushes in proptest::collection::vec(any::<bool>(), 1..60),
        pops in proptest::collection::vec(0u8..3, 60),
    ) {
        prop_assert_eq!(stream_len_run(comb, pushes, pops), Ok(()));
    }
}
