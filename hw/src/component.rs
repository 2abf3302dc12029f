//! The component contract: what a block implements and the context it ticks with.

use crate::rng::Rng;
use crate::Cycle;

/// When a component next needs to run. Returned by every [`Component::tick`]; it replaces the
/// previous hint. Independently of the hint, a component is woken at n+1 when any of its inputs
/// changed at n (a signal took a new value, a message was pushed to a stream it consumes, or space
/// was freed in a stream it produces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// Run again next cycle (a block with work in flight every cycle).
    NextCycle,
    /// Run at the given absolute cycle (a timer). A cycle not after now means next cycle.
    At(Cycle),
    /// Run only when an input changes.
    OnInput,
}

impl Wake {
    /// `NextCycle` while a block has work for the next cycle, else `OnInput`: the ending of a
    /// block that only acts on inputs and on its own follow-up.
    pub fn next_cycle_if(busy: bool) -> Wake {
        if busy {
            Wake::NextCycle
        } else {
            Wake::OnInput
        }
    }
    /// The earliest of a block's pending deadlines, or `OnInput` when it has none: the usual
    /// way to end a `tick` that tracks several timers (a deadline not after now means next
    /// cycle, as for `At`).
    pub fn earliest(deadlines: impl IntoIterator<Item = Cycle>) -> Wake {
        match deadlines.into_iter().min() {
            Some(t) => Wake::At(t),
            None => Wake::OnInput,
        }
    }
}

/// One counter a block kind declares, in the table its file owns (`pub const COUNTERS`): its
/// name, unit and meaning. `explain`, the JSON report and plot axes read the table, and the
/// system's monitors bind to declared counters. A `*` in the name stands for what a parameter
/// picks (a port number, a VC name, a flow), matched as a glob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterDecl {
    /// Name as the block registers it (without the instance path).
    pub name: &'static str,
    /// Unit: `frames`, `packets`, `bytes`, `cycles`, `ns`, `cycle` (a time stamp), `events`…
    pub unit: &'static str,
    /// What it counts, in one line.
    pub doc: &'static str,
}

impl CounterDecl {
    /// A table entry.
    pub const fn new(name: &'static str, unit: &'static str, doc: &'static str) -> Self {
        CounterDecl { name, unit, doc }
    }

    /// Whether this entry declares the counter named `leaf`.
    pub fn matches(&self, leaf: &str) -> bool {
        if self.name.contains('*') {
            crate::trace::glob_match(self.name, leaf)
        } else {
            self.name == leaf
        }
    }
}

/// Index of one of a component's counters, handed out at build time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterId(pub(crate) u32);

/// What a component sees while it ticks: the time, its own RNG stream, its counters, and a way to
/// report a protocol violation.
pub struct Ctx<'a> {
    pub(crate) now: Cycle,
    /// Every component's RNG and counter base; `me` selects this component's. Built once per
    /// cycle, so a tick costs one store of `me` rather than a new context.
    pub(crate) rngs: &'a mut [Rng],
    pub(crate) counter_base: &'a [u32],
    pub(crate) counters: &'a mut [u64],
    /// The cycle's first violation: (component index, message).
    pub(crate) violation: &'a mut Option<(u32, String)>,
    pub(crate) me: u32,
}

impl<'a> Ctx<'a> {
    /// The current cycle (= time in ns).
    #[inline]
    pub fn now(&self) -> Cycle {
        self.now
    }
    /// This component's deterministic random stream (derived from the seed and its path).
    #[inline]
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rngs[self.me as usize]
    }
    #[inline]
    fn slot(&self, id: CounterId) -> usize {
        self.counter_base[self.me as usize] as usize + id.0 as usize
    }
    /// Adds `n` to a counter.
    #[inline]
    pub fn count(&mut self, id: CounterId, n: u64) {
        let i = self.slot(id);
        self.counters[i] += n;
    }
    /// Sets a counter (for gauges such as a peak occupancy).
    #[inline]
    pub fn set_counter(&mut self, id: CounterId, v: u64) {
        let i = self.slot(id);
        self.counters[i] = v;
    }
    /// Reads a counter.
    #[inline]
    pub fn counter(&self, id: CounterId) -> u64 {
        self.counters[self.slot(id)]
    }
    /// Reports a protocol violation (credit underflow, a broken invariant). The run stops after
    /// this cycle with an error carrying the cycle and this component's path.
    pub fn violation(&mut self, what: impl Into<String>) {
        // Of several violations in one cycle, the lowest component index is reported, so the
        // report does not depend on evaluation order (or on event skip).
        if self.violation.as_ref().is_none_or(|(c, _)| self.me < *c) {
            *self.violation = Some((self.me, what.into()));
        }
    }
}

/// A hardware block. `tick` runs in the evaluate phase of a cycle: it reads inputs as committed at
/// the end of the previous cycle, writes outputs, and says when it next needs to run.
///
/// Contract (DESIGN.md §2): results must not depend on how often `tick` is called. A tick at a
/// cycle where the component has nothing to do must change nothing and return the same hint, so
/// that `--no-skip` (every component every cycle) gives the same results as event skip. Compute
/// from [`Ctx::now`], never from a count of ticks.
pub trait Component {
    /// One evaluation at cycle `ctx.now()`. Every component is ticked at cycle 0.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake;

    /// The early phase of a block with outputs declared driven from state
    /// ([`PortDecl::from_state`](crate::PortDecl::from_state)): drive those outputs from the
    /// block's state and its registered inputs (peek, never pop), reading no combinational
    /// input. Within a cycle every `drive` runs before any `tick`, so a reader can answer within
    /// the cycle and the block take the answer in its `tick` (a queue shows its heads, an arbiter
    /// grants, the queue takes the grant) without a combinational loop.
    ///
    /// The kernel calls it in every cycle in which the block ticks and in the cycle after each
    /// tick (the state a tick leaves must show at once), and with `--no-skip` in every cycle. It
    /// must write nothing but those outputs, and give the same values whenever called in one
    /// state. Default: nothing.
    fn drive(&mut self, _ctx: &mut Ctx<'_>) {}

    /// Process `p` (1, 2, …) of a block with several processes: one evaluation at
    /// `ctx.now()`, like `tick` (which is process 0), with its own wake hint. A port says which
    /// process reads or writes it ([`PortDecl::process`](crate::PortDecl::process)); the
    /// kernel orders each process like a node of its own, after the block's previous process
    /// and after the drivers of its combinational inputs, and runs it in every cycle in which
    /// the previous process ran. So a block can ask a neighbour in one process and take the
    /// answer in the next, in the same cycle (an arbiter offers candidates to the gates, the
    /// gates answer, the arbiter grants), as an RTL module with several `always` blocks does.
    /// The processes share the block's state, RNG stream and counters.
    ///
    /// Every process's wake hint is the block's: the block runs again from its first process
    /// (so every process runs) at the earliest of its processes' hints, each process's latest
    /// hint standing; a changed input wakes the process that reads it and the ones after it.
    /// Default: a violation (a block whose ports name a process it does not implement).
    fn process(&mut self, p: u32, ctx: &mut Ctx<'_>) -> Wake {
        ctx.violation(format!("process {p} is not implemented by this block"));
        Wake::OnInput
    }

    /// Called once when the run ends ([`Sim::finish`](crate::Sim::finish)), at the last cycle:
    /// the place to publish summary counters that would cost too much to keep current on every
    /// event (a delay percentile from a histogram). It must not write nets. Default: nothing.
    fn finish(&mut self, _ctx: &mut Ctx<'_>) {}
}
