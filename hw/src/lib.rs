//! hwsim-hw: the kernel of hwsim.
//!
//! It knows nothing of packets or YAML. It provides:
//! - [`Cycle`] and the 1 GHz clock (cycle n = time n ns);
//! - [`Component`]: a block's `tick` and its [`Wake`] hint, ticking with a [`Ctx`] (time, RNG,
//!   counters);
//! - nets with two-phase commit: signals ([`In`]/[`Out`]) and bounded streams
//!   ([`StreamIn`]/[`StreamOut`]), registered or combinational ([`Timing`], [`CombOut`]);
//! - the [`Netlist`] (petgraph), its elaboration checks and DOT export;
//! - the scheduler [`Sim`] with event skip, a `--no-skip` mode, and the static order of
//!   combinational paths;
//! - VCD tracing ([`TraceOptions`]);
//! - [`Harness`], a poke/peek bench for unit-testing one component.
#![warn(missing_docs)]

pub mod anyport;
pub mod component;
pub mod error;
pub mod events;
pub mod fastmap;
pub mod harness;
pub mod net;
pub mod netlist;
pub mod port;
pub mod rng;
pub mod sim;
pub mod trace;
pub mod value;

/// Simulated time in cycles of the single 1 GHz clock: cycle n is time n ns.
pub type Cycle = u64;

/// Clock frequency: 1 GHz.
pub const CLOCK_HZ: u64 = 1_000_000_000;

pub use anyport::AnyPort;
pub use component::{Component, CounterDecl, CounterId, Ctx, Wake};
pub use error::{ElabError, SimError};
pub use events::EventLog;
pub use fastmap::{fast_map, FastMap, FastSet};
pub use harness::Harness;
pub use net::{CombOut, In, LogBudget, NetDyn, Out, SignalNet, StreamIn, StreamNet, StreamOut};
pub use netlist::{
    dotted, joined, Binder, BuildFn, BuildResult, Dir, DotOptions, InstId, Netlist, PortDecl, Shape, Timing,
};
pub use port::MAX_PROCESSES;
pub use rng::Rng;
pub use sim::{Sim, Stats, Stop};
pub use trace::{glob_match, selected as trace_selected, GlobSet, SharedBuffer, TraceOptions};
pub use value::{bits_of, SignalValue, Trace, TraceField, TraceKind, TraceValue, Value};
