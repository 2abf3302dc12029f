//! The binder: hands a component builder its typed port handles and counters.

use crate::fastmap::FastMap;
use std::any::Any;
use std::rc::Rc;

use super::find_port;
use crate::anyport::AnyPort;
use crate::component::CounterId;
use crate::net::{CombOut, In, NetShared, Out, SignalNet, StreamIn, StreamNet, StreamOut};
use crate::port::{timing_word, Dir, PortDecl, Shape, Timing};
use crate::value::{SignalValue, Value};

/// Hands a component builder its typed port handles and counters.
pub struct Binder<'a> {
    pub(super) instance: String,
    pub(super) ports: &'a [PortDecl],
    pub(super) port_index: Option<&'a FastMap<String, usize>>,
    pub(super) nets: Vec<Option<Rc<dyn Any>>>,
    /// Full names of the counters declared so far.
    pub(super) counters: Vec<String>,
    /// The scope counters are named in (`<scope>.<name>`): the instance's path, unless the block
    /// was built to report in its composite's scope ([`Binder::counters_in`]).
    pub(super) counter_scope: Option<String>,
    /// The path whose random stream the block draws from (see [`Binder::rng_of`]).
    pub(super) rng_scope: Option<String>,
    pub(super) shared: Rc<NetShared>,
}

impl Binder<'_> {
    /// The instance's hierarchical path.
    pub fn path(&self) -> &str {
        &self.instance
    }
    fn net<N: 'static>(&self, name: &str, dir: Dir, shape: Shape) -> Result<Rc<N>, String> {
        let p = find_port(self.ports, self.port_index, name)
            .ok_or_else(|| format!("block asks for undeclared port `{name}`"))?;
        let d = &self.ports[p];
        if d.dir != dir || d.shape != shape {
            return Err(format!(
                "port `{name}` is declared {:?} {:?}, asked as {dir:?} {shape:?}",
                d.dir, d.shape
            ));
        }
        let any = self.nets[p]
            .clone()
            .ok_or_else(|| format!("port `{name}` has no net"))?;
        any.downcast::<N>().map_err(|_| {
            format!(
                "port `{name}` is declared as {} but asked with another type",
                d.describe()
            )
        })
    }
    /// The signal input `name`.
    pub fn input<T: SignalValue>(&self, name: &str) -> Result<In<T>, String> {
        self.net::<SignalNet<T>>(name, Dir::In, Shape::Signal).map(In)
    }
    /// The signal output `name` (a registered one).
    pub fn output<T: SignalValue>(&self, name: &str) -> Result<Out<T>, String> {
        self.timing(name, Timing::Registered)?;
        self.net::<SignalNet<T>>(name, Dir::Out, Shape::Signal)
            .map(|n| Out::new(n, self.shared.clone()))
    }
    /// The combinational signal output `name`.
    pub fn comb_output<T: SignalValue>(&self, name: &str) -> Result<CombOut<T>, String> {
        self.timing(name, Timing::Comb)?;
        self.net::<SignalNet<T>>(name, Dir::Out, Shape::Signal)
            .map(|n| CombOut::new(n, self.shared.clone()))
    }
    /// The declared timing of port `name`, if it is declared.
    pub fn port_timing(&self, name: &str) -> Option<Timing> {
        find_port(self.ports, self.port_index, name).map(|p| self.ports[p].timing)
    }
    fn timing(&self, name: &str, want: Timing) -> Result<(), String> {
        match self.port_timing(name) {
            Some(t) if t != want => Err(format!(
                "port `{name}` is declared {}, asked as {}",
                timing_word(t),
                timing_word(want)
            )),
            _ => Ok(()),
        }
    }
    /// The stream input `name`.
    pub fn stream_in<T: Value>(&self, name: &str) -> Result<StreamIn<T>, String> {
        self.net::<StreamNet<T>>(name, Dir::In, Shape::Stream).map(StreamIn)
    }
    /// The stream output `name`.
    pub fn stream_out<T: Value>(&self, name: &str) -> Result<StreamOut<T>, String> {
        self.net::<StreamNet<T>>(name, Dir::Out, Shape::Stream).map(StreamOut)
    }
    /// Port `name` as a handle of hidden value type, read and driven by its traced fields (see
    /// [`crate::anyport`]); the same rules hold as for the typed handle.
    pub fn any_port(&self, name: &str) -> Result<AnyPort, String> {
        let p = find_port(self.ports, self.port_index, name)
            .ok_or_else(|| format!("block asks for undeclared port `{name}`"))?;
        let d = &self.ports[p];
        let f = d.erase[(d.dir == Dir::Out) as usize];
        f(self, name)
    }
    /// The untyped net behind port `name` (for generic testbench drivers and monitors).
    pub fn net_any(&self, name: &str) -> Option<Rc<dyn Any>> {
        let p = find_port(self.ports, self.port_index, name)?;
        self.nets[p].clone()
    }
    /// Counters declared from now on are named `<scope>.<name>` rather than `<path>.<name>`: a
    /// composite's children report their counters where the composite's users look for them
    /// (an LG's TX counters are `chip0.lg3.tx.*` whichever of its modules counts), and the same
    /// block alone in a module testbench reports under its own path.
    pub fn counters_in(&mut self, scope: &str) {
        self.counter_scope = Some(scope.to_string());
    }
    /// Draws the block's random stream as the block at `scope` would: a composite's child that
    /// stands for what was one block (the part that draws) keeps that block's stream, so the
    /// same testbench and seed give the same draws after the split. At most one block of a
    /// netlist should draw a given scope's stream (two would draw the same numbers).
    pub fn rng_of(&mut self, scope: &str) {
        self.rng_scope = Some(scope.to_string());
    }
    /// Declares a counter; it appears as `<path>.<name>` in reports (see
    /// [`Binder::counters_in`]). Its name must be in its kind's counter table
    /// ([`CounterDecl`](crate::CounterDecl)): the application checks after elaboration.
    pub fn counter(&mut self, name: &str) -> CounterId {
        let scope = self.counter_scope.as_deref().unwrap_or(&self.instance);
        self.counters.push(super::dotted(scope, name));
        CounterId(self.counters.len() as u32 - 1)
    }
}
