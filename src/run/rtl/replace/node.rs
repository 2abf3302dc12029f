//! The component behind a replaced node: the pipe exchange with the RTL simulator, and the
//! node's processes mapped onto evaluations of the RTL within a cycle.
//!
//! **Several processes.** A node whose ports belong to several processes (mac_credit: process
//! 0 takes the MAC's returns and shows the counts, process 1 takes the arbiter's grant later in
//! the same cycle) keeps them: the kernel calls the RTL where each process sat. The first
//! process to run in a cycle clocks the RTL into it (the edge that ends the previous cycle)
//! and evaluates it; each later process of the cycle evaluates it again without an edge (a
//! line starting `+`, the shim's re-evaluation), its own ports read afresh. A process drives
//! its own outputs and pops its own stream inputs; a stream input of a process that has not
//! run this cycle shows `valid` 0 to the RTL (it runs when its message comes). After a
//! process's evaluation the outputs of the others are checked: one of a later process that
//! changed hands that process work in this cycle (`run_process`); one of a process that ran
//! already, or of an earlier one that did not run, cannot be driven any more: the RTL has a
//! combinational path the node's process order does not have, a protocol violation naming the
//! output, both processes and the cycle.

use std::cell::Cell;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{ChildStdin, ChildStdout};
use std::rc::Rc;

use hwsim_hw::{AnyPort, Component, Ctx, Cycle, Dir, Shape, TraceValue, Wake};

use super::super::watchdog::Watchdog;
use super::{OutPort, Src};

/// What an RTL output drives, for the checks between processes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Not mapped: nothing.
    None,
    /// A field of a signal output of process `0`.
    Signal(u8),
    /// The `valid` of a stream output of process `0`.
    Valid(u8),
    /// A field of a stream output of process `0`, whose valid is RTL output `1`.
    Field(u8, usize),
    /// The `ready` of a stream input of process `0`.
    Ready(u8),
}

/// The component behind a replaced node.
pub(super) struct Node {
    pub name: String,
    pub ports: Vec<AnyPort>,
    /// Per port: its value's field slots (inputs read, outputs built).
    pub bufs: Vec<Vec<TraceValue>>,
    /// Per port: direction, shape and process.
    pub decl: Vec<(Dir, Shape, u8)>,
    /// Per stream input: whether it holds a message this cycle.
    pub held: Vec<bool>,
    pub ins: Vec<Src>,
    pub outs: Vec<OutPort>,
    pub ready: Vec<(usize, usize)>,
    /// Per RTL output: what it drives.
    pub roles: Vec<Role>,
    /// The node's processes.
    pub procs: u32,
    pub watch: Watchdog,
    pub to: BufWriter<ChildStdin>,
    pub from: BufReader<ChildStdout>,
    /// The RTL's outputs by name, in its order.
    pub out_names: Vec<String>,
    /// The last cycle sent to the RTL.
    pub last: Option<Cycle>,
    /// The processes run in cycle `last` (bit p: process p).
    pub ran: u64,
    /// The RTL's outputs in the last cycle, and in the one before.
    pub answer: Vec<u64>,
    pub prev: Vec<u64>,
    /// Per RTL output: its value when its process last ran.
    pub driven: Vec<u64>,
    pub line: String,
    pub reply: String,
    pub sleep: bool,
    pub active: Rc<Cell<(u64, Cycle)>>,
}

fn bits(v: &TraceValue) -> u64 {
    match v {
        TraceValue::Bits(b) => *b,
        TraceValue::Real(_) => 0,
    }
}

/// The error of a pipe to the RTL simulator that failed at cycle `now`.
fn gone(name: &str, now: Cycle, e: std::io::Error) -> String {
    format!("rtl `{name}`: the RTL simulator stopped at cycle {now}: {e}")
}

/// Reads the RTL's answer to cycle `c` into `into`.
fn read_answer(
    from: &mut BufReader<ChildStdout>,
    reply: &mut String,
    into: &mut [u64],
    name: &str,
    c: Cycle,
) -> Result<(), String> {
    let gone = |e: String| format!("rtl `{name}`: the RTL simulator stopped at cycle {c}: {e}");
    reply.clear();
    match from.read_line(reply) {
        Ok(0) => return Err(gone("no answer".into())),
        Ok(_) => {}
        Err(e) => return Err(gone(e.to_string())),
    }
    let mut n = 0;
    for t in reply.split_whitespace() {
        let Some(slot) = into.get_mut(n) else {
            n += 1;
            continue;
        };
        *slot = t.parse().map_err(|_| gone(format!("`{t}` is not a number")))?;
        n += 1;
    }
    if n != into.len() {
        return Err(gone(format!("{n} values, {} expected", into.len())));
    }
    Ok(())
}

impl Node {
    /// The inputs process `p` evaluates with, as a line for the shim: every signal input as it
    /// is now, the stream inputs of `p` read afresh, those of the processes that ran earlier
    /// in the cycle as they read them, the others empty (`None`: no process's).
    fn inputs(&mut self, p: Option<u8>) {
        for (i, port) in self.ports.iter().enumerate() {
            let (dir, shape, q) = self.decl[i];
            if dir == Dir::Out || (shape == Shape::Stream && Some(q) != p) {
                continue;
            }
            self.held[i] = port.read(&mut self.bufs[i]);
        }
        self.line.clear();
        for (k, s) in self.ins.iter().enumerate() {
            let v = match *s {
                Src::Field { port, slot } => bits(&self.bufs[port][slot]),
                Src::Valid(port) => self.held[port] as u64,
                Src::Room(port) => self.ports[port].room() as u64,
            };
            if k > 0 {
                self.line.push(' ');
            }
            let _ = write!(self.line, "{v}");
        }
        self.line.push('\n');
    }

    /// Process `p`'s evaluation at `now`. The first of the cycle runs the RTL through cycles
    /// `from..now` it slept, with the inputs of its last cycle, checking its outputs stay as it
    /// left them, then clocks it into `now`; a later one re-evaluates `now` (no edge). Afterwards
    /// `answer` holds the outputs of `now` and `prev` those of the cycle before. Returns the
    /// first output that moved while it slept (the run stops after this cycle, whose outputs
    /// are still driven so the node's readers see an answer and the report names the RTL, not
    /// a missing grant).
    fn exchange(&mut self, now: Cycle, p: Option<u8>) -> Result<Option<String>, String> {
        // (Each call borrows only the name, beside the pipe: no copy per exchange.)
        if self.last == Some(now) {
            self.inputs(p);
            self.to.write_all(b"+").map_err(|e| gone(&self.name, now, e))?;
            self.to
                .write_all(self.line.as_bytes())
                .map_err(|e| gone(&self.name, now, e))?;
            self.to.flush().map_err(|e| gone(&self.name, now, e))?;
            read_answer(&mut self.from, &mut self.reply, &mut self.answer, &self.name, now)?;
            return Ok(None);
        }
        let from = self.last.map_or(now, |l| l + 1);
        for _ in from..now {
            self.to
                .write_all(self.line.as_bytes())
                .map_err(|e| gone(&self.name, now, e))?;
        }
        self.held.fill(false);
        self.ran = 0;
        self.inputs(p);
        self.to
            .write_all(self.line.as_bytes())
            .map_err(|e| gone(&self.name, now, e))?;
        self.to.flush().map_err(|e| gone(&self.name, now, e))?;
        let mut moved = None;
        for c in from..now {
            read_answer(&mut self.from, &mut self.reply, &mut self.prev, &self.name, c)?;
            if moved.is_some() {
                continue;
            }
            if let Some(k) = (0..self.prev.len()).find(|&k| self.prev[k] != self.answer[k]) {
                moved = Some(format!(
                    "rtl `{}`: the RTL's output `{}` moved from {} to {} at cycle {c} with its inputs held since cycle {}: hwsim let it sleep there (its outputs had held still for a cycle); an RTL whose outputs move on their own needs `sleep: false`",
                    self.name,
                    self.out_names[k],
                    self.answer[k],
                    self.prev[k],
                    from - 1
                ));
            }
        }
        std::mem::swap(&mut self.prev, &mut self.answer);
        read_answer(&mut self.from, &mut self.reply, &mut self.answer, &self.name, now)?;
        self.last = Some(now);
        Ok(moved)
    }

    /// Drives process `p`'s outputs from the RTL's answer and pops what the RTL took of its
    /// stream inputs; whether a message went in or out.
    fn drive(&mut self, p: u8) -> Result<bool, String> {
        let mut pushed = false;
        for o in &self.outs {
            if self.decl[o.port].2 != p || (o.stream && o.valid.is_some_and(|v| self.answer[v] == 0)) {
                continue;
            }
            let buf = &mut self.bufs[o.port];
            for (slot, &r) in o.fields.iter().enumerate() {
                buf[slot] = TraceValue::Bits(self.answer[r]);
            }
            self.ports[o.port]
                .write(buf)
                .map_err(|m| format!("rtl `{}`: {}: {m}", self.name, o.name))?;
            pushed |= o.stream;
        }
        let mut took = false;
        for (i, port) in self.ports.iter().enumerate() {
            let (dir, shape, q) = self.decl[i];
            if (dir, shape) != (Dir::In, Shape::Stream) || q != p || !self.held[i] {
                continue;
            }
            let ready = self
                .ready
                .iter()
                .find(|r| r.0 == i)
                .is_none_or(|r| self.answer[r.1] != 0);
            if ready {
                port.pop();
            }
            took = true;
        }
        for (r, role) in self.roles.iter().enumerate() {
            if owner(*role) == Some(p) {
                self.driven[r] = self.answer[r];
            }
        }
        Ok(pushed || took)
    }

    /// After process `p`'s evaluation: the other processes whose outputs the RTL changed. A
    /// later one not yet run this cycle is asked to run (it drives them); any other is a path
    /// the node's process order does not have.
    fn others(&self, p: u8, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        for (r, role) in self.roles.iter().enumerate() {
            let Some(q) = owner(*role).filter(|&q| q != p) else {
                continue;
            };
            let ran = self.ran & (1 << q) != 0;
            let a = self.answer[r];
            let moved = match *role {
                Role::Valid(_) if !ran => a != 0,
                Role::Field(_, v) => ran && a != self.driven[r] && self.answer[v] != 0 && self.driven[v] != 0,
                Role::Ready(_) => ran && a != self.driven[r],
                _ => a != self.driven[r],
            };
            if !moved {
                continue;
            }
            if !ran && q > p {
                ctx.run_process(q as u32);
                continue;
            }
            ctx.violation(format!(
                "rtl `{}`: at cycle {now} the RTL's output `{}` (process {q}'s) is {a} after the inputs of process {p}, which the node computes after process {q}: the RTL has a combinational path from process {p}'s inputs to process {q}'s outputs that the node does not",
                self.name, self.out_names[r]
            ));
            return;
        }
    }

    /// The first evaluation of a cycle by a later process `p`: the outputs of the earlier
    /// processes, which did not run (nothing woke them), must be as they left them; else the
    /// RTL moved on its own while they slept.
    fn slept(&self, p: u8, ctx: &mut Ctx<'_>) {
        for (r, role) in self.roles.iter().enumerate() {
            let (q, moved) = match *role {
                Role::Signal(q) => (q, self.answer[r] != self.driven[r]),
                Role::Valid(q) => (q, self.answer[r] != 0),
                _ => continue,
            };
            if q < p && moved {
                ctx.violation(format!(
                    "rtl `{}`: at cycle {} the RTL's output `{}` (process {q}'s) is {}, but process {q} did not run in this cycle (its inputs held, its outputs had held still for a cycle): an RTL whose outputs move on their own needs `sleep: false`",
                    self.name,
                    ctx.now(),
                    self.out_names[r],
                    self.answer[r]
                ));
                return;
            }
        }
    }

    /// Process `p` of the node at `ctx.now()`.
    fn run(&mut self, p: u8, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        if self.last == Some(now) && self.ran & (1 << p) != 0 {
            return Wake::NextCycle;
        }
        let wait = self.watch.guard();
        // A later process first in its cycle: the cycle as the earlier processes saw it (no
        // message of theirs: one would have woken them), then with its own inputs.
        let first = if p > 0 && self.last != Some(now) {
            self.exchange(now, None).inspect(|_| self.slept(p, ctx))
        } else {
            Ok(None)
        };
        let r = first.and_then(|m| Ok(m.or(self.exchange(now, Some(p))?)));
        drop(wait);
        let r = r.map_err(|m| format!("{m}{}", self.watch.why()));
        self.ran |= 1 << p;
        let busy = match r.and_then(|moved| Ok((moved, self.drive(p)?))) {
            Ok((moved, busy)) => {
                if let Some(m) = moved {
                    ctx.violation(m);
                }
                busy
            }
            Err(m) => {
                ctx.violation(m);
                return Wake::OnInput;
            }
        };
        self.others(p, ctx);
        if busy {
            let a = self.active.get();
            if a.1 != now || a.0 == 0 {
                self.active.set((a.0 + 1, now));
            }
        }
        if !self.sleep {
            return Wake::NextCycle;
        }
        if busy || self.answer != self.prev {
            // The next cycle's edge may move any process's outputs: each runs to drive them.
            for q in (0..self.procs).filter(|&q| q != p as u32) {
                ctx.run_process_at(q, now + 1);
            }
            return Wake::NextCycle;
        }
        Wake::OnInput
    }
}

/// The process an RTL output belongs to.
fn owner(r: Role) -> Option<u8> {
    match r {
        Role::None => None,
        Role::Signal(q) | Role::Valid(q) | Role::Field(q, _) | Role::Ready(q) => Some(q),
    }
}

impl Component for Node {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        self.run(0, ctx)
    }

    fn process(&mut self, p: u32, ctx: &mut Ctx<'_>) -> Wake {
        self.run(p as u8, ctx)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.to.flush();
        // The watchdog, dropped after this, stops the process.
    }
}
