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
    /// Work this process hands to processes of its block: `(process, at)`, taken by the kernel
    /// after the process returns.
    /// Each: (the block asking, the process asked for, when).
    pub(crate) requests: &'a mut Vec<(u32, u32, Cycle)>,
    /// Whether `requests` holds any: one test after each process of a cluster (once per cycle
    /// in the plain loop, whose blocks have one process) tells the kernel.
    pub(crate) asked: bool,
    pub(crate) me: u32,
    /// The event log (`hwsim --log`; off unless the runner turns it on).
    pub(crate) events: &'a mut crate::events::EventLog,
    /// The run-wide sample sets ([`Ctx::add_samples`]).
    pub(crate) samples: &'a mut Vec<(&'static str, Vec<u64>)>,
}

impl<'a> Ctx<'a> {
    /// The current cycle (= time in ns).
    #[inline]
    pub fn now(&self) -> Cycle {
        self.now
    }
    /// Whether this block's events go to the event log (`hwsim --log`): ask it where something
    /// happens (a NAK, a drop, a timeout) before building an event's fields; off, it costs a
    /// bound test.
    #[inline]
    pub fn logs(&self) -> bool {
        self.events.on(self.me)
    }
    /// Reports an event of `class` (`nak`, `drop`, …: hwsim's table of event classes, `hwsim
    /// --log help`) with its fields, written `key=value` separated by spaces; the log writes
    /// `cycle path class fields` if it takes this block and class. Call it where
    /// [`logs`](Self::logs) said yes. (Out of line and cold: the branch that calls it stays
    /// out of the way of a block's hot path.)
    #[cold]
    #[inline(never)]
    pub fn log(&mut self, class: &str, fields: std::fmt::Arguments<'_>) {
        if self.events.on(self.me) {
            self.events.write(self.now, self.me, class, fields);
        }
    }
    /// Adds `values` to the run-wide sample set `name`, which every block adding to that name
    /// shares (a latency histogram over every chip's transactions: `Sim::samples`). Call it
    /// from [`Component::finish`]: the kernel empties the sets before it calls the blocks'
    /// `finish`, so a second `finish` adds nothing twice. The order of the values is the blocks'
    /// (index order); a reader sorts.
    pub fn add_samples(&mut self, name: &'static str, values: &[u64]) {
        match self.samples.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.extend_from_slice(values),
            None => self.samples.push((name, values.to_vec())),
        }
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
    /// Hands work to process `p` of this block (0 is `tick`): it runs later in this cycle when
    /// `p` comes after the running process (its order puts it later), else in the next cycle,
    /// whatever its inputs and its own hint. The explicit flag of per-process sensitivity: a
    /// process runs on its inputs, its own hint and this, never merely because another ran
    /// (docs/kernel.md). A process this block does not have is a protocol violation.
    #[inline]
    pub fn run_process(&mut self, p: u32) {
        self.requests.push((self.me, p, self.now));
        self.asked = true;
    }
    /// Process `p` of this block runs at cycle `at` (as [`Ctx::run_process`] when `at` is not
    /// after the next cycle), beside its own hint. Like a hint, the request stands until the
    /// process that made it runs again, which renews it or, asking nothing, withdraws it (of
    /// several timed requests in one run, the earliest stands). A process that keeps a deadline
    /// another process acts on (a grant sets the retry timer process 0 takes) asks with this.
    #[inline]
    pub fn run_process_at(&mut self, p: u32, at: Cycle) {
        self.requests.push((self.me, p, at.max(self.now)));
        self.asked = true;
    }
    /// Process `p` of this block runs when `hint` says, as if it were `p`'s own hint: next
    /// cycle for `NextCycle`, at `t` for `At(t)`, not at all for `OnInput`. A later process
    /// whose follow-up an earlier process takes (a round's grant planned for the next cycle,
    /// a deadline process 0 expires) returns `OnInput` and hands its hint on with this.
    #[inline]
    pub fn run_process_on(&mut self, p: u32, hint: Wake) {
        match hint {
            Wake::OnInput => {}
            Wake::NextCycle => self.run_process_at(p, self.now + 1),
            Wake::At(t) => self.run_process_at(p, t.max(self.now + 1)),
        }
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

    /// Process `p` (1, 2, …) of a block with several processes: one evaluation at
    /// `ctx.now()`, like `tick` (which is process 0), with its own wake hint. A port says which
    /// process reads or writes it ([`PortDecl::process`](crate::PortDecl::process)); the
    /// kernel orders each process like a node of its own, after the block's previous process
    /// and after the drivers of its combinational inputs. So a block can ask a neighbour in one
    /// process and take the answer in the next, in the same cycle (an arbiter offers candidates
    /// to the gates, the gates answer, the arbiter grants), as an RTL module with several
    /// `always` blocks does. The processes share the block's state, RNG stream and counters.
    ///
    /// A process runs on its own sensitivity: an input it reads changed, its own hint came due,
    /// or another process of the block asked for it ([`Ctx::run_process`],
    /// [`Ctx::run_process_at`]); never merely because another process ran (docs/kernel.md).
    /// Default: a violation (a block whose ports name a process it does not implement).
    fn process(&mut self, p: u32, ctx: &mut Ctx<'_>) -> Wake {
        ctx.violation(format!("process {p} is not implemented by this block"));
        Wake::OnInput
    }

    /// Called once when the run ends ([`Sim::finish`](crate::Sim::finish)), at the last cycle:
    /// the place to publish summary counters that would cost too much to keep current on every
    /// event (a delay percentile from a histogram). It must not write nets. Default: nothing.
    fn finish(&mut self, _ctx: &mut Ctx<'_>) {}

    /// Called before counters are read while the run stands at `ctx.now()` (a probe, and the
    /// end, before [`finish`](Component::finish)): a block that accounts for the cycles between
    /// its events lazily (a rate monitor integrating its ramps) brings its counters to what
    /// they would be had it run every cycle up to now. It must not write nets, and calling it
    /// again at the same cycle must change nothing. Default: nothing.
    fn settle(&mut self, _ctx: &mut Ctx<'_>) {}
}
