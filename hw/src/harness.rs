//! A poke/peek bench for unit-testing one component, cocotb style: the test drives the DUT's
//! inputs and watches its outputs cycle by cycle, through the real kernel (two-phase commit,
//! wake-ups).
//!
//! A value poked or pushed before [`Harness::step`] counts as written during that cycle: the DUT
//! sees it one cycle later, exactly as if another component had written it.

use std::any::Any;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::component::{Component, Ctx, Wake};
use crate::error::{ElabError, SimError};
use crate::net::{NetDyn, SignalNet, StreamIn, StreamNet, StreamOut};
use crate::netlist::{BuildFn, Dir, Netlist, PortDecl, Timing};
use crate::sim::Sim;
use crate::value::{SignalValue, Value};
use crate::Cycle;

struct Mirror;
impl Component for Mirror {
    fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
        Wake::OnInput
    }
}

/// A one-component test bench.
pub struct Harness {
    sim: Sim,
    nets: HashMap<String, Rc<dyn Any>>,
    /// The DUT's combinational inputs: a poke is seen in the cycle of the next step.
    comb: HashSet<String>,
}

impl Harness {
    /// Instantiates the DUT as `dut` and binds every port to the bench. Stream outputs of the DUT
    /// get a bench-side buffer of `sink_capacity` messages.
    pub fn new(
        kind: &str,
        ports: Vec<PortDecl>,
        build: BuildFn,
        seed: u64,
        sink_capacity: u32,
    ) -> Result<Harness, ElabError> {
        let k = kind.to_string();
        Self::new_with(
            ports,
            move |nl, ports| nl.add("dut", &k, ports, build).map(|_| ()),
            seed,
            sink_capacity,
        )
    }

    /// A bench around a composite of kind `kind` at `dut` with the ports `ports`, its children
    /// created by `expand(netlist, "dut")`: every port bound to the bench as in
    /// [`Harness::new`].
    pub fn new_composite(
        kind: &str,
        ports: Vec<PortDecl>,
        expand: impl FnOnce(&mut Netlist, &str) -> Result<(), ElabError>,
        seed: u64,
        sink_capacity: u32,
    ) -> Result<Harness, ElabError> {
        let k = kind.to_string();
        Self::new_with(
            ports,
            move |nl, ports| {
                nl.add_composite("dut", &k, ports)?;
                expand(nl, "dut")
            },
            seed,
            sink_capacity,
        )
    }

    /// A bench around whatever `add` puts at `dut` with the ports `ports` (a block, or a
    /// composite and its children): every port bound to the bench as in [`Harness::new`].
    pub fn new_with(
        ports: Vec<PortDecl>,
        add: impl FnOnce(&mut Netlist, Vec<PortDecl>) -> Result<(), ElabError>,
        seed: u64,
        sink_capacity: u32,
    ) -> Result<Harness, ElabError> {
        let mut nl = Netlist::new();
        let names: Vec<(String, Dir)> = ports.iter().map(|p| (p.name.clone(), p.dir)).collect();
        let comb: HashSet<String> = ports
            .iter()
            .filter(|p| p.timing == Timing::Comb && p.dir == Dir::In)
            .map(|p| p.name.clone())
            .collect();
        // Two bench instances, one driving the DUT's inputs and one reading its outputs, so a
        // DUT with combinational paths both ways does not close a loop through the bench.
        let (drive, watch): (Vec<PortDecl>, Vec<PortDecl>) = ports
            .iter()
            .map(|p| p.flipped(sink_capacity))
            .partition(|p| p.dir == Dir::Out);
        add(&mut nl, ports)?;
        let grabbed: Rc<RefCell<HashMap<String, Rc<dyn Any>>>> = Rc::default();
        for (inst, mirror_ports) in [("tb", drive), ("tbo", watch)] {
            let g = grabbed.clone();
            let names2: Vec<String> = mirror_ports.iter().map(|p| p.name.clone()).collect();
            nl.add(
                inst,
                "harness",
                mirror_ports,
                Box::new(move |b| {
                    for n in &names2 {
                        if let Some(net) = b.net_any(n) {
                            g.borrow_mut().insert(n.clone(), net);
                        }
                    }
                    Ok(Box::new(Mirror))
                }),
            )?;
        }
        for (n, d) in &names {
            match d {
                Dir::In => nl.connect(&format!("tb.{n}"), &format!("dut.{n}"), None)?,
                Dir::Out => nl.connect(&format!("dut.{n}"), &format!("tbo.{n}"), None)?,
            }
        }
        let mut sim = nl.elaborate(seed)?;
        for (n, d) in &names {
            if *d == Dir::In {
                sim.alias_net(&format!("dut.{n}"), &format!("tb.{n}"));
            }
        }
        let nets = grabbed.take();
        Ok(Harness { sim, nets, comb })
    }

    fn net<N: 'static>(&self, port: &str) -> Rc<N> {
        // A port of the DUT, or (a composite's) a net inside it: `psn_check.epsn`.
        let any = match self.nets.get(port) {
            Some(n) => n.clone(),
            None => {
                let n = self
                    .sim
                    .net(&format!("dut.{port}"))
                    .unwrap_or_else(|| panic!("harness: no port or net `{port}`"));
                let rc: Rc<dyn NetDyn> = n.clone();
                rc.into_any()
            }
        };
        any.downcast::<N>()
            .unwrap_or_else(|_| panic!("harness: port `{port}` has another type or shape"))
    }

    /// Drives a DUT signal input: seen by the DUT in the cycle after the next step's (a
    /// registered input), or in the next step's cycle (a combinational one).
    pub fn poke<T: SignalValue>(&self, port: &str, v: T) {
        let net = self.net::<SignalNet<T>>(port);
        if self.comb.contains(port) {
            crate::net::CombOut::new(net, self.sim.shared()).set(v)
        } else {
            crate::net::Out::new(net, self.sim.shared()).set(v)
        }
    }
    /// Reads a signal (input or output) as committed.
    pub fn peek<T: SignalValue>(&self, port: &str) -> T {
        self.net::<SignalNet<T>>(port).get()
    }
    /// Pushes a message into a DUT stream input; false if the stream had no space.
    pub fn push<T: Value>(&self, port: &str, v: T) -> bool {
        StreamOut(self.net::<StreamNet<T>>(port)).try_push(v).is_ok()
    }
    /// Pops a message from a DUT stream output.
    pub fn pop<T: Value>(&self, port: &str) -> Option<T> {
        StreamIn(self.net::<StreamNet<T>>(port)).pop()
    }
    /// Runs exactly one cycle.
    pub fn step(&mut self) -> Result<(), SimError> {
        self.sim.step()
    }
    /// Runs `n` cycles one by one.
    pub fn steps(&mut self, n: u64) -> Result<(), SimError> {
        for _ in 0..n {
            self.sim.step()?;
        }
        Ok(())
    }
    /// Runs with event skip until `limit` (or quiescence).
    pub fn run(&mut self, limit: Cycle) -> Result<crate::Stop, SimError> {
        self.sim.run(limit)
    }
    /// The next cycle to execute.
    pub fn now(&self) -> Cycle {
        self.sim.now()
    }
    /// The simulation (counters, stats).
    pub fn sim(&self) -> &Sim {
        &self.sim
    }
    /// Mutable access (skip mode, tracing).
    pub fn sim_mut(&mut self) -> &mut Sim {
        &mut self.sim
    }
}
