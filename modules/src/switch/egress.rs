//! A switch egress port (seed 003 «出口调度», «ECN»; seed 000 «ECN RED 概率标记»): per-class
//! queues in the port's buffer, strict priority for the ACK/CNP class, weighted round robin
//! between REQ data and RSP, the best-effort class last, one cell per `slot` cycles onto the
//! link, and ECN RED marking at enqueue.
//!
//! ```text
//!                     +------------------------------------------------+
//!  in  ==(cap 4)==>   | class queues by prio: 3 ACK/CNP │ 2 REQ │ 1 RSP │ 0 | ==> out : stream<Cell>
//!  stream<Cell>       | mark CE at enqueue: p(util), Kmin 0.3, Kmax 0.8   | --> depth_p0..3, buffer_used
//!                     | SP(3) > WRR(2 : 1, weights) > 0, 1 cell / slot    |
//!                     +------------------------------------------------+
//! ```
//!
//! **Classes** (seed 003's suggested mapping): 3 = ACK + CNP, 2 = REQ data, 1 = RSP, 0 = other.
//! Class 3 is served first whenever it holds a cell; then REQ and RSP share the port by the WRR
//! rule the frame switch's outputs run ([`switch::wrr`](super::wrr), weighed in cells, all of
//! one size: while both hold cells REQ gets `w_req / (w_req + w_rsp)` of the port, REQ first,
//! a class left alone keeping the port without credit) — and class 0 goes only when all three
//! are empty.
//!
//! **Buffer and ECN.** The classes share `buffer` cells; a cell arriving to a full buffer is
//! dropped (`drops`). An ECN-capable cell (`ect`) is marked CE at enqueue with the RED
//! probability of the utilization it finds, `util = cells held / buffer` (`ecn_marks`); the
//! draw is Xorshift64, seeded from the block's stream. `ecn: false` turns marking off (an AFH
//! format without an ECN field).
//!
//! **Latency.** A cell visible at n is queued at n; the port sends one cell per `slot` cycles, at
//! the first slot boundary (a multiple of `slot`) at or after it, pushed on `out` then (seen
//! downstream at n+1 when the port was idle and `slot` = 1).
//!
//! Counters: `enqueued`, `sent_p0..3`, `drops`, `ecn_marks`, `buffer_peak`.
//!
//! Deviations: seed 003 asks for WRR between REQ and RSP and names no order within a turn; the
//! shared rule interleaves them (2 : 1 sends REQ RSP REQ REQ RSP …, REQ first) rather than
//! sending a turn of `w` cells back to back; the shares are the same.

use std::collections::VecDeque;

use hwsim_hw::{
    Binder, BuildResult, Component, CounterDecl, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{Cell, UInt};
use serde::{Deserialize, Serialize};

use super::ecn::RedMarker;
use super::wrr::Wrr;

/// How far REQ or RSP may get ahead of its share, in cells per unit of the larger weight.
const WRR_CATCH_UP_CELLS: i64 = 4;

/// The counters this block registers (name, unit, meaning): `hwsim explain`, the report's units
/// and the system monitors read this table; the registry refuses a counter missing from it.
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "enqueued",
        "cells",
        "cells taken into the port's class queues (drops excluded)",
    ),
    CounterDecl::new(
        "sent_p*",
        "cells",
        "cells of class * (0 other, 1 RSP, 2 REQ, 3 ACK/CNP) sent onto the link",
    ),
    CounterDecl::new("drops", "cells", "cells dropped on arrival to a full buffer"),
    CounterDecl::new("ecn_marks", "cells", "ECN-capable cells marked CE at enqueue by RED"),
    CounterDecl::new(
        "buffer_peak",
        "cells",
        "gauge: most cells held in the port's buffer at once",
    ),
];

/// The tables that make up this kind's counters (its own and those of the modules it runs).
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Buffer of the port, cells, 1..=1048576.
    pub buffer: u32,
    /// Cycles per cell on the link (the port rate), 1..=65536.
    pub slot: u64,
    /// WRR weights [REQ (class 2), RSP (class 1)], each 1..=255: while both hold cells, REQ
    /// gets w_req / (w_req + w_rsp) of the port's cells (`switch::wrr`).
    pub wrr_weights: [u32; 2],
    /// ECN marking on (the Standard format carries ECN).
    pub ecn: bool,
    /// ECN RED Kmin, fraction of the buffer (appendix C: 0.3).
    pub ecn_kmin: f64,
    /// ECN RED Kmax, fraction of the buffer (appendix C: 0.8).
    pub ecn_kmax: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            buffer: 1024,
            slot: 1,
            wrr_weights: [1, 1],
            ecn: true,
            ecn_kmin: 0.3,
            ecn_kmax: 0.8,
        }
    }
}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    let mut v = vec![
        PortDecl::stream_in::<Cell>("in", 4).doc("cells for this port, from the crossbar"),
        PortDecl::stream_out::<Cell>("out").doc("cells on the link"),
        PortDecl::output::<UInt<21>>("buffer_used")
            .level()
            .doc("cells held in the port's buffer"),
    ];
    for c in 0..4 {
        v.push(
            PortDecl::output::<UInt<21>>(&format!("depth_p{c}"))
                .level()
                .doc("cells queued in class c"),
        );
    }
    v
}

/// The block.
pub struct Egress {
    slot: u64,
    buffer: usize,
    wrr: Wrr,
    ecn: bool,
    red: Option<RedMarker>,
    kmin_kmax: (f64, f64),
    input: StreamIn<Cell>,
    out: StreamOut<Cell>,
    queues: [VecDeque<Cell>; 4],
    held: usize,
    /// The WRR balance (`switch::wrr`): > 0, RSP goes first.
    wrr_balance: i64,
    /// First cycle the link is free for the next cell.
    link_free: Cycle,
    buffer_used: Out<UInt<21>>,
    depth: [Out<UInt<21>>; 4],
    c_enq: CounterId,
    c_sent: [CounterId; 4],
    c_drops: CounterId,
    c_marks: CounterId,
    c_peak: CounterId,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    if p.buffer == 0 || p.buffer > 1 << 20 {
        return Err(format!("buffer = {}: must be in 1..=1048576 cells", p.buffer));
    }
    if p.slot == 0 || p.slot > 65536 {
        return Err(format!("slot = {}: must be in 1..=65536 cycles", p.slot));
    }
    if let Some(w) = p.wrr_weights.iter().find(|w| !(1..=255).contains(*w)) {
        return Err(format!("wrr_weights: {w} must be in 1..=255"));
    }
    // Validates the thresholds now; the generator is seeded on the first tick (from ctx.rng).
    RedMarker::new(p.ecn_kmin, p.ecn_kmax, 1)?;
    let d = |c: usize| b.output::<UInt<21>>(&format!("depth_p{c}"));
    Ok(Box::new(Egress {
        slot: p.slot,
        buffer: p.buffer as usize,
        wrr: Wrr::new(p.wrr_weights[0], p.wrr_weights[1], WRR_CATCH_UP_CELLS),
        ecn: p.ecn,
        red: None,
        kmin_kmax: (p.ecn_kmin, p.ecn_kmax),
        input: b.stream_in("in")?,
        out: b.stream_out("out")?,
        queues: Default::default(),
        held: 0,
        wrr_balance: 0,
        link_free: 0,
        buffer_used: b.output("buffer_used")?,
        depth: [d(0)?, d(1)?, d(2)?, d(3)?],
        c_enq: b.counter("enqueued"),
        c_sent: [
            b.counter("sent_p0"),
            b.counter("sent_p1"),
            b.counter("sent_p2"),
            b.counter("sent_p3"),
        ],
        c_drops: b.counter("drops"),
        c_marks: b.counter("ecn_marks"),
        c_peak: b.counter("buffer_peak"),
    }))
}

impl Egress {
    /// The class to serve next (a cell of it is sent): SP 3, then WRR between 2 and 1, then 0.
    fn pick(&mut self) -> Option<usize> {
        if !self.queues[3].is_empty() {
            return Some(3);
        }
        let (req, rsp) = (!self.queues[2].is_empty(), !self.queues[1].is_empty());
        if req || rsp {
            // The class that sends is charged one cell (the caller sends what this picks).
            let c = if !req || (rsp && Wrr::rsp_first(self.wrr_balance)) {
                1
            } else {
                2
            };
            self.wrr.charge(&mut self.wrr_balance, c == 2, 1, req && rsp);
            return Some(c);
        }
        (!self.queues[0].is_empty()).then_some(0)
    }
}

impl Component for Egress {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if self.red.is_none() {
            let seed = ctx.rng().next_u64();
            self.red = Some(RedMarker::new(self.kmin_kmax.0, self.kmin_kmax.1, seed).expect("checked"));
        }
        while let Some(mut cell) = self.input.pop() {
            if self.held >= self.buffer {
                ctx.count(self.c_drops, 1);
                continue;
            }
            if self.ecn && cell.ect && !cell.ce {
                let util = self.held as f64 / self.buffer as f64;
                if self.red.as_mut().expect("seeded").mark(util) {
                    cell.ce = true;
                    ctx.count(self.c_marks, 1);
                }
            }
            self.queues[(cell.prio & 3) as usize].push_back(cell);
            self.held += 1;
            ctx.count(self.c_enq, 1);
            if self.held as u64 > ctx.counter(self.c_peak) {
                ctx.set_counter(self.c_peak, self.held as u64);
            }
        }
        // One cell per slot, at a slot boundary, when the link is free and downstream has room.
        let boundary = now % self.slot == 0;
        if boundary && now >= self.link_free && self.held > 0 && self.out.can_push() {
            if let Some(c) = self.pick() {
                let cell = self.queues[c].pop_front().expect("picked a non-empty class");
                self.held -= 1;
                self.out.push(cell);
                ctx.count(self.c_sent[c], 1);
                self.link_free = now + self.slot;
            }
        }
        self.buffer_used.update(UInt::wrap(self.held as u64));
        for (o, q) in self.depth.iter().zip(&self.queues) {
            o.update(UInt::wrap(q.len() as u64));
        }
        if self.held == 0 {
            return Wake::OnInput;
        }
        // Next slot boundary at or after the link frees (a full `out` wakes us on its pop).
        let next = self.link_free.max(now + 1);
        Wake::At(next.div_ceil(self.slot) * self.slot)
    }
}
