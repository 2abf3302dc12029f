//! Scaffolding shared by the kernel's integration tests (`kernel.rs`, `props.rs`): closure
//! components, netlist helpers, a shared `Write` buffer for the tracer, and test components
//! both files use.

use hwsim_hw::{Binder, BuildResult, Component, Ctx, Netlist, PortDecl, Sim, StreamIn, StreamOut, Wake};

/// A component made of a closure.
struct FnComp<F>(F);

impl<F: FnMut(&mut Ctx<'_>) -> Wake> Component for FnComp<F> {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        (self.0)(ctx)
    }
}

/// A boxed component ticking `f`.
pub fn comp<F: FnMut(&mut Ctx<'_>) -> Wake + 'static>(f: F) -> BuildResult {
    Ok(Box::new(FnComp(f)))
}

/// Adds an instance, panicking on error (the error tests call `Netlist::add` directly).
pub fn add<B>(nl: &mut Netlist, path: &str, kind: &str, ports: Vec<PortDecl>, build: B)
where
    B: FnOnce(&mut Binder<'_>) -> BuildResult + 'static,
{
    nl.add(path, kind, ports, Box::new(build)).unwrap();
}

/// Connects `from` to `to` with the consumer's own capacity, panicking on error.
pub fn connect(nl: &mut Netlist, from: &str, to: &str) {
    nl.connect(from, to, None).unwrap();
}

/// All counters of a simulation, by full name.
pub fn counters(sim: &Sim) -> Vec<(String, u64)> {
    sim.counters().map(|(n, v)| (n.to_string(), v)).collect()
}

/// The kernel's in-memory VCD writer, under the name the tests use.
pub use hwsim_hw::SharedBuffer as SharedBuf;

/// An instance of `kind` with a u64 stream input `in` of `capacity` and a u64 stream output `out`;
/// `build` makes the component from the two ends (it may ask the binder for counters).
pub fn add_stage<B>(nl: &mut Netlist, path: &str, kind: &str, capacity: u32, build: B)
where
    B: FnOnce(&mut Binder<'_>, StreamIn<u64>, StreamOut<u64>) -> BuildResult + 'static,
{
    let ports = vec![
        PortDecl::stream_in::<u64>("in", capacity),
        PortDecl::stream_out::<u64>("out"),
    ];
    add(nl, path, kind, ports, move |b| {
        let i = b.stream_in::<u64>("in")?;
        let o = b.stream_out::<u64>("out")?;
        build(b, i, o)
    });
}

/// A stream consumer of kind `kind` that pops one message when `now` has reached its next pop
/// time, drives `last` with it and sets the next pop time `gap(ctx)` cycles later.
/// Counters: `received`, `sum`.
pub fn add_popper<G>(nl: &mut Netlist, path: &str, kind: &str, capacity: u32, mut gap: G)
where
    G: FnMut(&mut Ctx<'_>) -> u64 + 'static,
{
    let ports = vec![
        PortDecl::stream_in::<u64>("in", capacity),
        PortDecl::output::<u64>("last"),
    ];
    add(nl, path, kind, ports, move |b| {
        let i = b.stream_in::<u64>("in")?;
        let last = b.output::<u64>("last")?;
        let c_recv = b.counter("received");
        let c_sum = b.counter("sum");
        let mut next_pop = 0u64;
        comp(move |ctx| {
            let now = ctx.now();
            if now >= next_pop {
                if let Some(v) = i.pop() {
                    last.set(v);
                    ctx.count(c_recv, 1);
                    ctx.count(c_sum, v);
                    next_pop = now + gap(ctx);
                }
            }
            if i.is_empty() {
                Wake::OnInput
            } else {
                Wake::At(next_pop.max(now + 1))
            }
        })
    });
}
