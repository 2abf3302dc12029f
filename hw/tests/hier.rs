//! Composites: scopes with ports that own no logic. Bindings through them reach the children
//! they export; nets carry the outermost name; errors name the composite's port; the DOT draws
//! them as clusters, cut at a depth or a scope; and a composite adds no register.

#[allow(dead_code, unused_imports)] // the helpers other test files use
mod common;

use common::{add, comp, connect};
use hwsim_hw::{DotOptions, ElabError, Netlist, PortDecl, SignalNet, Stop, Wake};

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

/// A stage `out = in + k`, registered or combinational on both sides.
fn add_stage(nl: &mut Netlist, path: &str, k: u64, comb: bool) {
    let (i, o) = if comb {
        (PortDecl::comb_input::<u64>("in"), PortDecl::comb_output::<u64>("out"))
    } else {
        (PortDecl::input::<u64>("in"), PortDecl::output::<u64>("out"))
    };
    add(nl, path, "stage", vec![i, o], move |b| {
        let i = b.input::<u64>("in")?;
        if comb {
            let o = b.comb_output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get() + k);
                Wake::OnInput
            })
        } else {
            let o = b.output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get() + k);
                Wake::OnInput
            })
        }
    });
}

/// A composite `path` (kind `pair`): in → a (+1, registered in, comb out) → b (+10, comb in,
/// registered out) → out; `a.out` is also shown as the composite's `mid`.
fn add_pair(nl: &mut Netlist, path: &str) {
    nl.add_composite(
        path,
        "pair",
        vec![
            PortDecl::input::<u64>("in"),
            PortDecl::output::<u64>("out"),
            PortDecl::comb_output::<u64>("mid"),
        ],
    )
    .unwrap();
    add(
        nl,
        &format!("{path}.a"),
        "front",
        vec![PortDecl::input::<u64>("in"), PortDecl::comb_output::<u64>("out")],
        |b| {
            let i = b.input::<u64>("in")?;
            let o = b.comb_output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get() + 1);
                Wake::OnInput
            })
        },
    );
    add(
        nl,
        &format!("{path}.b"),
        "back",
        vec![PortDecl::comb_input::<u64>("in"), PortDecl::output::<u64>("out")],
        |b| {
            let i = b.input::<u64>("in")?;
            let o = b.output::<u64>("out")?;
            comp(move |_| {
                o.set(i.get() + 10);
                Wake::OnInput
            })
        },
    );
    connect(nl, &format!("{path}.a.out"), &format!("{path}.b.in"));
    nl.export(&format!("{path}.in"), &format!("{path}.a.in")).unwrap();
    nl.export(&format!("{path}.out"), &format!("{path}.b.out")).unwrap();
    nl.export(&format!("{path}.mid"), &format!("{path}.a.out")).unwrap();
}

fn log(sim: &hwsim_hw::Sim, path: &str) -> Vec<(u64, u64)> {
    let n = sim.net(path).unwrap_or_else(|| panic!("no net {path}"));
    n.as_any()
        .downcast_ref::<SignalNet<u64>>()
        .expect("u64")
        .log()
        .expect("logged")
        .clone()
}

#[test]
fn a_composite_is_bound_through_its_ports_and_adds_no_register() {
    let mut nl = Netlist::new();
    add_counter(&mut nl, "src", 5);
    add_pair(&mut nl, "top");
    add_stage(&mut nl, "sink", 0, false);
    connect(&mut nl, "src.count", "top.in");
    connect(&mut nl, "top.out", "sink.in");
    let mut sim = nl.elaborate(1).unwrap();
    for p in sim.net_paths().to_vec() {
        sim.net(&p).unwrap().enable_log();
    }
    assert_eq!(sim.run(100).unwrap(), Stop::Quiescent);
    // count(t) = t seen at t + 1; a and b add 11 in that cycle (one register, b's): the same as
    // the two blocks bound directly.
    assert_eq!(log(&sim, "top.out")[..3], [(0, 11), (2, 12), (3, 13)]);
    // The exported output's net carries the composite's name; the child's is an alias.
    assert!(sim.net_paths().iter().any(|p| p == "top.out"));
    assert!(!sim.net_paths().iter().any(|p| p == "top.b.out"));
    assert_eq!(log(&sim, "top.b.out"), log(&sim, "top.out"));
    // The input, and the output a child's port is also exported as.
    assert_eq!(log(&sim, "top.in"), log(&sim, "src.count"));
    assert_eq!(log(&sim, "top.mid"), log(&sim, "top.a.out"));
    assert!(sim.net_paths().iter().any(|p| p == "top.mid"));
}

#[test]
fn composites_nest_and_a_signal_input_may_feed_several_children() {
    let mut nl = Netlist::new();
    add_counter(&mut nl, "src", 3);
    nl.add_composite(
        "chip",
        "chip",
        vec![
            PortDecl::input::<u64>("in"),
            PortDecl::output::<u64>("o1"),
            PortDecl::output::<u64>("o2"),
        ],
    )
    .unwrap();
    add_pair(&mut nl, "chip.p1");
    add_pair(&mut nl, "chip.p2");
    nl.export("chip.in", "chip.p1.in").unwrap();
    nl.export("chip.in", "chip.p2.in").unwrap();
    nl.export("chip.o1", "chip.p1.out").unwrap();
    nl.export("chip.o2", "chip.p2.out").unwrap();
    add_stage(&mut nl, "s1", 0, false);
    add_stage(&mut nl, "s2", 0, false);
    connect(&mut nl, "src.count", "chip.in");
    connect(&mut nl, "chip.o1", "s1.in");
    connect(&mut nl, "chip.o2", "s2.in");
    let counts = nl.kind_counts();
    assert_eq!(counts["pair"], (2, true));
    assert_eq!(counts["front"], (2, false));
    let sim = nl.elaborate(1).unwrap();
    // Named by the outermost export.
    for p in ["chip.o1", "chip.o2"] {
        assert!(sim.net_paths().iter().any(|x| x == p), "{p}");
    }
    assert!(sim.net("chip.p1.out").is_some() && sim.net("chip.p2.b.out").is_some());
}

#[test]
fn an_unbound_composite_input_is_reported_as_the_composites() {
    let mut nl = Netlist::new();
    add_pair(&mut nl, "top");
    let e = nl.elaborate(1).err().expect("refused");
    assert!(matches!(e, ElabError::UnboundInput { .. }), "{e:?}");
    assert_eq!(e.to_string(), "input `top.in` (pair, signal<u64>) is not bound");
}

#[test]
fn exports_are_checked() {
    let mut nl = Netlist::new();
    nl.add_composite(
        "c",
        "k",
        vec![PortDecl::input::<u64>("in"), PortDecl::output::<u64>("out")],
    )
    .unwrap();
    add_stage(&mut nl, "c.x", 1, false);
    add_stage(&mut nl, "c.y", 1, false);
    // Wrong direction.
    let e = nl.export("c.in", "c.x.out").unwrap_err();
    assert!(matches!(e, ElabError::TypeMismatch { .. }), "{e}");
    // Two drivers for one output.
    nl.export("c.out", "c.x.out").unwrap();
    let e = nl.export("c.out", "c.y.out").unwrap_err();
    assert_eq!(
        e.to_string(),
        "instance `c`: port `c.out` is exported twice (an output or a stream input stands for one port)"
    );
    // An unknown composite port.
    assert!(nl.export("c.nope", "c.x.in").is_err());
    // A port the kind did not export cannot be bound.
    let mut nl = Netlist::new();
    nl.add_composite("c", "k", vec![PortDecl::output::<u64>("out")])
        .unwrap();
    add_stage(&mut nl, "s", 0, false);
    let e = nl.connect("c.out", "s.in", None).unwrap_err();
    assert_eq!(e.to_string(), "instance `c`: kind k does not export its port `out`");
    // One path, one thing.
    assert!(matches!(
        nl.add_composite("s", "k", vec![]),
        Err(ElabError::DuplicateInstance { .. })
    ));
}

#[test]
fn the_dot_draws_clusters_and_cuts_at_a_depth_or_a_scope() {
    let build = || {
        let mut nl = Netlist::new();
        add_counter(&mut nl, "src", 3);
        nl.add_composite("chip", "chip", vec![PortDecl::input::<u64>("in")])
            .unwrap();
        add_pair(&mut nl, "chip.p1");
        nl.export("chip.in", "chip.p1.in").unwrap();
        add_stage(&mut nl, "s1", 0, false);
        connect(&mut nl, "src.count", "chip.in");
        connect(&mut nl, "chip.p1.out", "s1.in");
        nl
    };
    let nl = build();
    let dot = nl.to_dot();
    assert!(dot.contains("subgraph cluster_chip {"), "{dot}");
    assert!(dot.contains("subgraph cluster_chip_p1 {"), "{dot}");
    assert!(dot.contains("label=\"chip.p1.a\\n(front)\""), "{dot}");
    assert!(dot.contains("out → in : comb u64\", style=bold"), "{dot}");
    // Depth 1: the chip is one box.
    let d1 = nl.to_dot_with(&DotOptions {
        depth: Some(1),
        ..DotOptions::default()
    });
    assert!(d1.contains("label=\"chip\\n(chip)\""), "{d1}");
    assert!(!d1.contains("chip.p1.a"), "{d1}");
    assert!(!d1.contains("cluster"), "{d1}");
    // Scope: only what is under chip.p1, with its neighbours dashed.
    let sc = nl.to_dot_with(&DotOptions {
        scope: Some("chip.p1".into()),
        depth: None,
    });
    assert!(sc.contains("chip.p1.b"), "{sc}");
    assert!(sc.contains("label=\"src\", style=dashed"), "{sc}");
    assert!(!sc.contains("cluster_chip {"), "{sc}");
}

#[test]
fn a_net_is_traced_under_every_scope_it_passes_through() {
    let mut nl = Netlist::new();
    add_counter(&mut nl, "src", 3);
    add_pair(&mut nl, "top");
    add_stage(&mut nl, "sink", 0, false);
    connect(&mut nl, "src.count", "top.in");
    connect(&mut nl, "top.out", "sink.in");
    let mut sim = nl.elaborate(1).unwrap();
    let buf = hwsim_hw::SharedBuffer::default();
    sim.trace_vcd(Box::new(buf.clone()), hwsim_hw::TraceOptions::default())
        .unwrap();
    sim.run(100).unwrap();
    let now = sim.now();
    sim.finish_trace(now).unwrap();
    let vcd = buf.text();
    // `$var wire 64 <code> <name> [63:0] $end` in each scope: top.out and top.b.out share a code,
    // as do src.count and top.in.
    let code = |scope: &str, name: &str| -> String {
        let mut cur = Vec::new();
        for l in vcd.lines() {
            if let Some(r) = l.strip_prefix("$scope module ") {
                cur.push(r.split_whitespace().next().unwrap().to_string());
            } else if l.starts_with("$upscope") {
                cur.pop();
            } else if l.starts_with("$var") && cur.join(".") == scope {
                let t: Vec<&str> = l.split_whitespace().collect();
                if t[4] == name {
                    return t[3].to_string();
                }
            }
        }
        panic!("no {scope}.{name} in\n{vcd}");
    };
    assert_eq!(code("top", "out"), code("top.b", "out"));
    assert_eq!(code("top", "in"), code("src", "count"));
    assert_eq!(code("top", "mid"), code("top.a", "out"));
    assert_ne!(code("top", "out"), code("top", "in"));
}

/// A block drawing three numbers from its random stream into a counter each.
fn add_drawer(nl: &mut Netlist, path: &str, scope: Option<&'static str>) {
    add(nl, path, "drawer", vec![PortDecl::output::<u64>("x")], move |b| {
        let _o = b.output::<u64>("x")?;
        if let Some(s) = scope {
            b.rng_of(s);
        }
        let c: Vec<_> = (0..3).map(|k| b.counter(&format!("draw{k}"))).collect();
        comp(move |ctx| {
            if ctx.now() == 0 {
                for &id in &c {
                    let v = ctx.rng().next_u64();
                    ctx.set_counter(id, v);
                }
            }
            Wake::OnInput
        })
    });
}

#[test]
fn a_child_standing_for_a_split_block_keeps_its_random_stream() {
    let draws = |nl: Netlist, path: &str| -> Vec<u64> {
        let mut sim = nl.elaborate(7).unwrap();
        sim.run(10).unwrap();
        (0..3)
            .map(|k| sim.counter(&format!("{path}.draw{k}")).unwrap())
            .collect()
    };
    let mut one = Netlist::new();
    add_drawer(&mut one, "sw0", None);
    let before = draws(one, "sw0");
    // The same block as the core of a composite `sw0`, drawing the composite's stream.
    let mut split = Netlist::new();
    split.add_composite("sw0", "switch", vec![]).unwrap();
    add_drawer(&mut split, "sw0.core", Some("sw0"));
    assert_eq!(draws(split, "sw0.core"), before);
    // Without it, its own path's stream: other numbers.
    let mut own = Netlist::new();
    own.add_composite("sw0", "switch", vec![]).unwrap();
    add_drawer(&mut own, "sw0.core", None);
    assert_ne!(draws(own, "sw0.core"), before);
}
