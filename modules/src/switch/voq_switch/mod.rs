//! An input-queued cell switch (seed 003 «VOQ», «iSLIP 调度»): N inputs with a virtual output
//! queue per (input, output) — or one FIFO per input for the head-of-line baseline — and a
//! crossbar that moves at most one cell per input and per output each slot, matched by an
//! allocator (iSLIP, PIM or FIFO). The core of the switch study (issue 9, W1/W2 workloads).
//!
//! ```text
//!                    +-------------------------------------------------+
//!  in0  ==(cap 2)==> | VOQ[0][0..N]  ─┐                               | ==> out0 : stream<Cell>
//!  in1  ==>          | VOQ[1][0..N]  ─┼─ allocator (islip|pim|fifo) ─ | ==> out1
//!   …                |   …           ─┘   one cell per input/output   |  …
//!  in{N−1} ==>       |                                                 | --> voq_total, depth_in{i},
//!  stream<Cell>      +-------------------------------------------------+     gptr{o}, aptr{i}, matches
//! ```
//!
//! **Admission.** Without a shared buffer each VOQ holds `voq_depth` cells. With `buffer` > 0
//! the VOQs share it under Dynamic Threshold (seed 003 «共享缓冲 DT»; Choudhury and Hahne,
//! IEEE/ACM ToN 6(2), 1998): a cell joins its queue only if the buffer has room and the queue is
//! shorter than `dt_alpha` × the free buffer, or shorter than its static `reserve`; otherwise it
//! is dropped (tail drop, counted in `drops`). The rule is [`dt::admits`](crate::switch::dt::admits),
//! the one the frame switch's shared buffer runs (in bytes there). S queues saturated together settle at
//! α·B / (1 + α·S) cells each, leaving B / (1 + α·S) free for a newly active queue.
//!
//! **Slot = cycle.** A cell takes one crossbar slot, one cycle (cell-based crossbar time, as
//! seed 003's cell mode and the iSLIP literature count it). Each cycle: the cells that arrived
//! (visible on `in{i}`, at most one per input) join their VOQ — dropped and counted when the VOQ
//! holds `voq_depth` cells — then the allocator matches the inputs' non-empty VOQs to the outputs
//! whose stream has room, and each matched cell moves to `out{o}` (seen downstream next cycle).
//! A cell pushed by its source at t is seen at t + 1 and, if matched at once, leaves at t + 1:
//! delay 1, the minimum. Delay is counted from birth to crossing the crossbar.
//!
//! **Measurement.** Cells born at or after `warmup` are measured: `delivered`, `delay_sum`,
//! `delay_max`, and at the end of the run `delay_p99` (from a histogram of 1-cycle bins up to
//! 4095, then one overflow bin). `throughput_ppm` counts every crossbar transfer from `warmup`
//! to the end, per output per slot × 10^6 (under saturation the cells leaving then were born
//! long before). The runner's metrics
//! `throughput`, `mean_delay`, `p99_delay` read these.
//!
//! **Priorities.** With `priorities` > 1 each (input, output) has a VOQ per level (a cell's
//! level is its `prio`) and the levels are served by strict priority: the top level's allocator
//! matches first, each lower level's among the inputs and outputs left (seed 003 «优先级感知调度»,
//! scheme A; each level keeps its own pointers).
//!
//! **Waves**: `voq_total` (cells queued), `depth_in{i}` (cells at input i), `gptr{o}` /
//! `aptr{i}` (grant and accept pointers of level 0's allocator, 6 bits), `matches` (crossbar
//! transfers this slot).
//!
//! Counters: `arrivals`, `drops`, `transfers`, `delivered`, `delay_sum`, `delay_max`,
//! `delay_p99`, `throughput_ppm`, `voq_peak`; per priority class `delivered_p{k}`,
//! `delay_max_p{k}`.
//!
//! This is the cell-level study switch (the switching literature's model: fixed cells, a buffer
//! counted in cells). Frames of bytes, ingress parsing, egress scheduling and serialization,
//! ECN, PFC and cut-through are `l2_switch`'s, the switch the system builder puts between chips.

use std::collections::VecDeque;

use hwsim_hw::{Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{Cell, UInt, MAX_SWITCH_PORTS};
use serde::{Deserialize, Serialize};

use super::allocator::{all_ports, Allocator, AllocatorKind, Matching, Requests};

/// The queues: a cell's arrival (admission, DT) and departure.
mod voqs;
use voqs::{Arrival, Voqs};

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "arrivals",
        "cells",
        "cells that arrived on the inputs, dropped ones included",
    ),
    CounterDecl::new(
        "drops",
        "cells",
        "arriving cells dropped: VOQ full (`voq_depth`) or refused by the shared buffer's DT",
    ),
    CounterDecl::new(
        "transfers",
        "cells",
        "cells moved across the crossbar (all, warmup included)",
    ),
    CounterDecl::new(
        "delivered",
        "cells",
        "measured cells (born at or after `warmup`) moved across the crossbar",
    ),
    CounterDecl::new("delay_sum", "ns", "Σ birth-to-crossbar delay of the measured cells"),
    CounterDecl::new(
        "delay_max",
        "ns",
        "gauge: largest birth-to-crossbar delay of a measured cell",
    ),
    CounterDecl::new(
        "delay_p99",
        "ns",
        "at the end of the run: 99th percentile delay of the measured cells (1-cycle bins)",
    ),
    CounterDecl::new(
        "throughput_ppm",
        "ppm",
        "at the end of the run: transfers from `warmup` per output per slot × 10^6",
    ),
    CounterDecl::new("voq_peak", "cells", "gauge: most cells queued in all VOQs at once"),
    CounterDecl::new(
        "delivered_p*",
        "cells",
        "measured cells of priority class * (a cell's prio & 3) moved across the crossbar",
    ),
    CounterDecl::new(
        "delay_max_p*",
        "ns",
        "gauge: largest delay of a measured cell of priority class * (prio & 3)",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Histogram bins of the delay (1 cycle each); the last one holds everything above.
const DELAY_BINS: usize = 4096;

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Ports (N), 1..=64.
    pub ports: u32,
    /// Crossbar allocator.
    pub allocator: AllocatorKind,
    /// Allocator iterations per slot, 1..=4 (iSLIP, PIM; FIFO ignores it).
    pub iterations: u32,
    /// Cells a VOQ (or, for `fifo`, an input FIFO) holds, 1..=1048576; arrivals beyond are dropped.
    pub voq_depth: u32,
    /// Cells born before this cycle are not measured.
    pub warmup: u64,
    /// Shared buffer, cells (0: none, each VOQ only bounded by `voq_depth`), ≤ 16 Mi. With a
    /// buffer, a cell is admitted only while the buffer has room and its queue is shorter than
    /// `dt_alpha` × the free buffer (Dynamic Threshold, Choudhury and Hahne 1998; seed 003
    /// «共享缓冲 DT»), or shorter than its `reserve`.
    pub buffer: u32,
    /// DT α (seed 003: 0.5, 1, 2; 4–8 for all-reduce bursts), 1/64..=64.
    pub dt_alpha: f64,
    /// Cells each queue may always hold (static reserve), inside the shared buffer.
    pub reserve: u32,
    /// Priority levels, 1..=4: a VOQ per (input, output, level), a cell's level its `prio`
    /// (capped at the top level). Levels are served by strict priority, each with its own
    /// allocator (seed 003 «优先级感知调度», scheme A: strict priority, iSLIP within a level).
    pub priorities: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            ports: 16,
            allocator: AllocatorKind::Islip,
            iterations: 1,
            voq_depth: 4096,
            warmup: 0,
            buffer: 0,
            dt_alpha: 1.0,
            reserve: 0,
            priorities: 1,
        }
    }
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let n = p.ports.min(MAX_SWITCH_PORTS as u32);
    let mut v = Vec::new();
    for i in 0..n {
        v.push(PortDecl::stream_in::<Cell>(&format!("in{i}"), 2).doc("cells arriving at input i"));
    }
    for o in 0..n {
        v.push(PortDecl::stream_out::<Cell>(&format!("out{o}")).doc("cells leaving output o"));
    }
    v.push(
        PortDecl::output::<UInt<16>>("voq_total")
            .level()
            .doc("cells queued in all VOQs"),
    );
    v.push(PortDecl::output::<UInt<7>>("matches").doc("crossbar transfers in this slot"));
    for i in 0..n {
        v.push(
            PortDecl::output::<UInt<16>>(&format!("depth_in{i}"))
                .level()
                .doc("cells queued at input i"),
        );
    }
    for o in 0..n {
        v.push(PortDecl::output::<UInt<6>>(&format!("gptr{o}")).doc("output o's grant pointer"));
    }
    for i in 0..n {
        v.push(PortDecl::output::<UInt<6>>(&format!("aptr{i}")).doc("input i's accept pointer"));
    }
    v
}

/// What a tick adds up per cell: counts (`Counts<u64>`, a tick's tally) and the counters they
/// go to (`Counts<CounterId>`).
#[derive(Default)]
struct Counts<T> {
    arrivals: T,
    transfers: T,
    delivered: T,
    delay_sum: T,
    delay_max: T,
    /// Per priority class 0..3: measured cells delivered and their worst delay.
    delivered_p: [T; 4],
    delay_max_p: [T; 4],
}

struct Counters {
    cells: Counts<CounterId>,
    drops: CounterId,
    delay_p99: CounterId,
    throughput_ppm: CounterId,
    voq_peak: CounterId,
}

/// The block.
pub struct VoqSwitch {
    warmup: u64,
    /// One allocator per priority level (index = level).
    alloc: Vec<Box<dyn Allocator>>,
    /// This level's matching.
    m_level: Matching,
    input: Vec<StreamIn<Cell>>,
    out: Vec<StreamOut<Cell>>,
    q: Voqs,
    peak: u32,
    req: Requests,
    hist: Box<[u64; DELAY_BINS]>,
    measured: u64,
    /// Crossbar transfers at or after `warmup`.
    window_transfers: u64,
    c: Counters,
    voq_total: Out<UInt<16>>,
    matches: Out<UInt<7>>,
    depth_in: Vec<Out<UInt<16>>>,
    gptr: Vec<Out<UInt<6>>>,
    aptr: Vec<Out<UInt<6>>>,
}

/// Refuses a port count out of range (before the ports are declared from it).
pub fn check(p: &Params) -> Result<(), String> {
    if p.ports == 0 || p.ports as usize > MAX_SWITCH_PORTS {
        return Err(format!("ports = {}: must be in 1..={MAX_SWITCH_PORTS}", p.ports));
    }
    Ok(())
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    if p.voq_depth == 0 || p.voq_depth > 1 << 20 {
        return Err(format!("voq_depth = {}: must be in 1..=1048576", p.voq_depth));
    }
    if p.buffer > 1 << 24 {
        return Err(format!("buffer = {}: must be in 0..=16777216 cells", p.buffer));
    }
    if !(1.0 / 64.0..=64.0).contains(&p.dt_alpha) {
        return Err(format!("dt_alpha = {}: must be in 1/64..=64", p.dt_alpha));
    }
    if !(1..=4).contains(&p.priorities) {
        return Err(format!("priorities = {}: must be in 1..=4", p.priorities));
    }
    if p.buffer > 0 && p.reserve as u64 * (p.ports as u64).pow(2) * p.priorities as u64 > p.buffer as u64 {
        return Err(format!(
            "reserve = {}: the {} queues' reserves exceed the buffer of {}",
            p.reserve,
            p.ports * p.ports,
            p.buffer
        ));
    }
    let n = p.ports as usize;
    let it = p.iterations as usize;
    let levels = p.priorities as usize;
    let alloc = p.allocator.build_levels(it, levels)?;
    let ptrs = |b: &Binder, prefix: &str| -> Result<Vec<Out<UInt<6>>>, String> {
        (0..n).map(|k| b.output(&format!("{prefix}{k}"))).collect()
    };
    let (gptr, aptr) = (ptrs(b, "gptr")?, ptrs(b, "aptr")?);
    Ok(Box::new(VoqSwitch {
        warmup: p.warmup,
        alloc,
        m_level: Matching::empty(),
        input: (0..n)
            .map(|i| b.stream_in(&format!("in{i}")))
            .collect::<Result<_, _>>()?,
        out: (0..n)
            .map(|o| b.stream_out(&format!("out{o}")))
            .collect::<Result<_, _>>()?,
        q: Voqs {
            n,
            fifo: p.allocator == AllocatorKind::Fifo,
            levels,
            plain: levels == 1 && p.allocator != AllocatorKind::Fifo && p.buffer == 0,
            depth: p.voq_depth as usize,
            buffer: p.buffer as usize,
            alpha: p.dt_alpha,
            reserve: p.reserve as usize,
            queues: (0..levels * n * n).map(|_| VecDeque::new()).collect(),
            nonempty: vec![0; levels * MAX_SWITCH_PORTS],
            nonempty_col: vec![0; levels * MAX_SWITCH_PORTS],
            per_input: [0; MAX_SWITCH_PORTS],
            total: 0,
        },
        peak: 0,
        req: Requests::new(n),
        hist: Box::new([0; DELAY_BINS]),
        measured: 0,
        window_transfers: 0,
        c: {
            // Registered in the order the counters have always been listed.
            let (arrivals, drops) = (b.counter("arrivals"), b.counter("drops"));
            let (transfers, delivered) = (b.counter("transfers"), b.counter("delivered"));
            let (delay_sum, delay_max) = (b.counter("delay_sum"), b.counter("delay_max"));
            let (delay_p99, throughput_ppm) = (b.counter("delay_p99"), b.counter("throughput_ppm"));
            let voq_peak = b.counter("voq_peak");
            let cells = Counts {
                arrivals,
                transfers,
                delivered,
                delay_sum,
                delay_max,
                delivered_p: [0, 1, 2, 3].map(|k| b.counter(&format!("delivered_p{k}"))),
                delay_max_p: [0, 1, 2, 3].map(|k| b.counter(&format!("delay_max_p{k}"))),
            };
            Counters {
                cells,
                drops,
                delay_p99,
                throughput_ppm,
                voq_peak,
            }
        },
        voq_total: b.output("voq_total")?,
        matches: b.output("matches")?,
        depth_in: (0..n)
            .map(|i| b.output(&format!("depth_in{i}")))
            .collect::<Result<_, _>>()?,
        gptr,
        aptr,
    }))
}

impl VoqSwitch {
    /// Adds a tick's tally to the counters (once per tick rather than once per cell).
    fn flush(&self, ctx: &mut Ctx<'_>, t: &Counts<u64>) {
        let c = &self.c.cells;
        ctx.count(c.arrivals, t.arrivals);
        if t.transfers == 0 {
            return;
        }
        ctx.count(c.transfers, t.transfers);
        if t.delivered == 0 {
            return;
        }
        ctx.count(c.delivered, t.delivered);
        ctx.count(c.delay_sum, t.delay_sum);
        if t.delay_max > ctx.counter(c.delay_max) {
            ctx.set_counter(c.delay_max, t.delay_max);
        }
        for k in 0..4 {
            if t.delivered_p[k] > 0 {
                ctx.count(c.delivered_p[k], t.delivered_p[k]);
                if t.delay_max_p[k] > ctx.counter(c.delay_max_p[k]) {
                    ctx.set_counter(c.delay_max_p[k], t.delay_max_p[k]);
                }
            }
        }
    }
}

impl VoqSwitch {
    /// The slot's arrivals (at most one cell per input) join their queues; returns the inputs
    /// where a cell joined. Kept apart from the matching so that each loop keeps its state in
    /// registers.
    #[inline(never)]
    fn arrivals<const PLAIN: bool>(&mut self, ctx: &mut Ctx<'_>, t: &mut Counts<u64>) -> u64 {
        let mut joined = 0u64;
        let (mut arrivals, mut drops) = (0, 0);
        for (i, input) in self.input.iter().enumerate() {
            // Copied from the stream's buffer, then popped: moving the popped `Option<Cell>`
            // instead went through stack temporaries whose reloads stalled (W1's profile).
            let Some(cell) = input.peek().map(|c| *c) else {
                continue;
            };
            input.pop();
            arrivals += 1;
            match self.q.arrive::<PLAIN>(i, &cell) {
                Arrival::Joined => joined |= 1 << i,
                Arrival::Dropped => drops += 1,
                Arrival::Refused => refused(ctx, &cell, i, self.q.n),
            }
        }
        t.arrivals = arrivals;
        if drops > 0 {
            ctx.count(self.c.drops, drops);
        }
        // Departures follow the arrivals, so the slot's peak is here.
        if self.q.total > self.peak {
            self.peak = self.q.total;
            ctx.set_counter(self.c.voq_peak, self.peak as u64);
        }
        joined
    }

    /// One slot: arrivals, then the matching and the departures, then the waves.
    #[inline(always)]
    fn slot<const PLAIN: bool>(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let n = self.q.n;
        let mut t = Counts::<u64>::default();
        // Inputs where a cell joined, and where one left: at most one each per slot, so the
        // inputs whose count changed (their `depth_in` is driven at the end) are those with one
        // and not the other.
        let joined = self.arrivals::<PLAIN>(ctx, &mut t);
        let mut left = 0u64;
        let mut matched = 0u32;
        if self.q.total > 0 {
            // Requests: non-empty VOQs towards outputs that can take a cell this slot.
            let mut room = 0u64;
            for (o, out) in self.out.iter().enumerate() {
                if out.can_push() {
                    room |= 1 << o;
                }
            }
            // Strict priority: the top level allocates first, each lower level among the inputs
            // and outputs still free.
            let mut free_out = room;
            let mut free_in = all_ports(n);
            let levels = if PLAIN { 1 } else { self.q.levels };
            for l in (0..levels).rev() {
                let mut any = 0;
                let rows = &self.q.nonempty[l * MAX_SWITCH_PORTS..][..n];
                for (i, (r, &ne)) in self.req.req[..n].iter_mut().zip(rows).enumerate() {
                    // One level: every input is free (`free_in` is all ports).
                    *r = if PLAIN {
                        ne & free_out
                    } else if free_in & 1 << i == 0 {
                        0
                    } else if self.q.fifo {
                        self.q.queues[self.q.queue_of::<PLAIN>(l, i, 0)]
                            .front()
                            .map_or(0, |c| (1u64 << c.dst) & free_out)
                    } else {
                        ne & free_out
                    };
                    any |= *r;
                }
                if any == 0 {
                    continue;
                }
                if !PLAIN && self.q.fifo {
                    self.req.fill_columns();
                } else {
                    let cols = &self.q.nonempty_col[l * MAX_SWITCH_PORTS..][..n];
                    for (o, (c, &ne)) in self.req.col[..n].iter_mut().zip(cols).enumerate() {
                        // ne & free_in where output o is free, else 0 (without a branch).
                        *c = ne & free_in & 0u64.wrapping_sub(free_out >> o & 1);
                    }
                }
                self.alloc[l].allocate(&self.req, ctx.rng(), &mut self.m_level);
                // Level 0's pointers are waves; an allocator's pointers move only for the ports
                // it matched.
                let alloc = &*self.alloc[l];
                let ptrs = if l == 0 { alloc.pointers() } else { None };
                for (i, o) in self.m_level.pairs() {
                    matched += 1;
                    free_out &= !(1 << o);
                    free_in &= !(1 << i);
                    left |= 1 << i;
                    if l == 0 {
                        let (g, a) = match ptrs {
                            Some((g, a)) => (g[o] as u64, a[i] as u64),
                            None => (alloc.grant_ptr(o) as u64, alloc.accept_ptr(i) as u64),
                        };
                        self.aptr[i].update(UInt::wrap(a));
                        self.gptr[o].update(UInt::wrap(g));
                    }
                    let cell = self.q.depart::<PLAIN>(l, i, o);
                    // The delay, for the cells born in the measured window.
                    let born = cell.born;
                    if born >= self.warmup {
                        let d = now - born;
                        self.hist[(d as usize).min(DELAY_BINS - 1)] += 1;
                        t.delivered += 1;
                        t.delay_sum += d;
                        t.delay_max = t.delay_max.max(d);
                        let k = (cell.prio & 3) as usize;
                        t.delivered_p[k] += 1;
                        t.delay_max_p[k] = t.delay_max_p[k].max(d);
                    }
                    // The output had room (`room`), so this push is accepted; `push` would
                    // report the violation otherwise.
                    if let Err(cell) = self.out[o].try_push(cell) {
                        self.out[o].push(cell);
                    }
                }
            }
        }
        t.transfers = matched as u64;
        self.measured += t.delivered;
        if now >= self.warmup {
            // Throughput counts departures in the window, whenever the cell was born: under
            // saturation the queues hold cells for thousands of slots.
            self.window_transfers += t.transfers;
        }
        self.flush(ctx, &t);
        self.matches.update(UInt::wrap(matched as u64));
        self.voq_total.update(UInt::wrap(self.q.total as u64));
        let mut changed = joined ^ left;
        while changed != 0 {
            let i = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            self.depth_in[i].update(UInt::wrap(self.q.per_input[i] as u64));
        }
        // One more slot after the last transfer, to show `matches` back at 0.
        Wake::next_cycle_if(self.q.total > 0 || matched > 0)
    }
}

/// A cell on the wrong input, or for an output the switch lacks: a violation.
#[cold]
fn refused(ctx: &mut Ctx<'_>, cell: &Cell, i: usize, n: usize) {
    ctx.violation(format!("cell {cell:?} on input {i} of a {n}-port switch"));
}

impl Component for VoqSwitch {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        if self.q.plain {
            self.slot::<true>(ctx)
        } else {
            self.slot::<false>(ctx)
        }
    }

    fn finish(&mut self, ctx: &mut Ctx<'_>) {
        // p99: the smallest delay with at least 99 % of the measured cells at or below it.
        if self.measured > 0 {
            let target = (self.measured * 99).div_ceil(100);
            let mut acc = 0;
            for (d, &k) in self.hist.iter().enumerate() {
                acc += k;
                if acc >= target {
                    ctx.set_counter(self.c.delay_p99, d as u64);
                    break;
                }
            }
        }
        let slots = ctx.now().saturating_sub(self.warmup).max(1);
        let ppm = self.window_transfers as u128 * 1_000_000 / (slots as u128 * self.q.n as u128);
        ctx.set_counter(self.c.throughput_ppm, ppm as u64);
    }
}
