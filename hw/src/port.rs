//! Port declarations: what a block kind says of each of its ports (direction, signal or stream,
//! registered or combinational, value type) and how the kernel makes the net behind it.

use std::any::{Any, TypeId};
use std::rc::Rc;

use crate::anyport::{erase_signal_in, erase_signal_out, erase_stream_in, erase_stream_out, EraseFn};
use crate::net::{NetDyn, NetShared, SignalNet, StreamNet};
use crate::value::{SignalValue, TraceField, Value};

/// Port direction, seen from the component that declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// The component reads it.
    In,
    /// The component drives it.
    Out,
}

/// Signal or stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A held value.
    Signal,
    /// A bounded message FIFO.
    Stream,
}

/// When a reader sees what its driver writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Written at cycle n, seen at n + 1 (a register between the two blocks).
    Registered,
    /// Written at cycle n, seen at n: the driver ticks before its readers (a combinational path).
    /// A stream's freed space is still seen by its producer at n + 1.
    Comb,
}

/// Makes a net: (id, shared, capacity, combinational, width).
pub(crate) type MakeNet = fn(u32, Rc<NetShared>, u32, bool, u32) -> (Rc<dyn NetDyn>, Rc<dyn Any>);

fn make_signal<T: SignalValue>(
    id: u32,
    _sh: Rc<NetShared>,
    _cap: u32,
    comb: bool,
    _width: u32,
) -> (Rc<dyn NetDyn>, Rc<dyn Any>) {
    let n = SignalNet::<T>::create(id, comb);
    (n.clone(), n)
}
fn make_stream<T: Value>(
    id: u32,
    sh: Rc<NetShared>,
    cap: u32,
    comb: bool,
    width: u32,
) -> (Rc<dyn NetDyn>, Rc<dyn Any>) {
    let n = StreamNet::<T>::create(id, sh, cap, comb, width);
    (n.clone(), n)
}

/// The most processes a block may have (ports name processes 0..MAX_PROCESSES).
pub const MAX_PROCESSES: u8 = 8;

/// One declared port of a block kind.
#[derive(Clone, Debug)]
pub struct PortDecl {
    /// Port name, unique within the instance.
    pub name: String,
    /// Direction.
    pub dir: Dir,
    /// Signal or stream.
    pub shape: Shape,
    /// Registered (seen next cycle) or combinational (seen in the same cycle).
    pub timing: Timing,
    /// For a stream input: its capacity in messages (the receiver's buffer).
    pub capacity: u32,
    /// For a stream output: pushes allowed per cycle (1; more for a bundle of lanes, see
    /// [`PortDecl::width`]).
    pub width: u32,
    /// Value type name (short form, for messages and `hwsim list`).
    pub type_name: &'static str,
    /// Value type identity, for the type check.
    pub type_id: TypeId,
    /// An input that may stay unbound: it then holds its reset value.
    pub optional: bool,
    /// One line of documentation (unit and role).
    pub doc: &'static str,
    /// A level (a queue's bytes, an occupancy, a rate, a credit count): waves show it as an
    /// analog step trace, where a number of changing digits says nothing at a glance.
    pub level: bool,
    /// Which of the block's processes reads or writes this port (0, the block's `tick`, unless
    /// set; see [`Component::process`](crate::Component::process)). The kernel orders the
    /// processes of a block like separate nodes, each after the one before it.
    pub process: u8,
    pub(crate) make: MakeNet,
    /// The type-erased handle of the port seen as an input and as an output (a flipped port
    /// swaps its direction): see [`crate::anyport`].
    pub(crate) erase: [EraseFn; 2],
    /// The value type's traced fields.
    fields: fn() -> &'static [TraceField],
    /// Whether values can be built from fields ([`Trace::LOAD`](crate::Trace::LOAD)).
    loadable: bool,
}

fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    // `hwsim_ports::psn::Psn` → `Psn`, and inside generics too: `hwsim_ports::tx_msg::UInt<4>`
    // → `UInt<4>` (a module path says nothing of the port's width; the type's name does).
    if !full.contains("::") {
        return full;
    }
    // One leaked copy per distinct type, not per declaration (sweeps elaborate many times).
    static NAMES: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<&'static str, &'static str>>> =
        std::sync::OnceLock::new();
    let names = NAMES.get_or_init(Default::default);
    let mut names = names.lock().unwrap_or_else(|e| e.into_inner());
    names.entry(full).or_insert_with(|| shorten(full))
}

/// `full` without the module paths of its types.
fn shorten(full: &'static str) -> &'static str {
    let mut out = String::with_capacity(full.len());
    let mut word = String::new();
    let mut chars = full.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            word.clear();
        } else if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            out.push_str(&word);
            word.clear();
            out.push(c);
        }
    }
    out.push_str(&word);
    Box::leak(out.into_boxed_str())
}

impl PortDecl {
    fn new<T: Value>(name: &str, dir: Dir, shape: Shape, capacity: u32, make: MakeNet, erase: [EraseFn; 2]) -> Self {
        PortDecl {
            name: name.to_string(),
            dir,
            shape,
            timing: Timing::Registered,
            capacity,
            width: 1,
            type_name: short_type_name::<T>(),
            type_id: TypeId::of::<T>(),
            optional: false,
            doc: "",
            level: false,
            process: 0,
            make,
            erase,
            fields: T::fields,
            loadable: T::LOAD,
        }
    }
    /// Whether the value type can be built from its fields ([`Trace::load`](crate::Trace::load)):
    /// a port a foreign model (an RTL) may drive.
    pub fn loadable(&self) -> bool {
        self.loadable
    }
    /// The value type's traced fields ([`Trace::fields`](crate::Trace::fields); a stream's
    /// `valid` and `occupancy` are the net's, not among them).
    pub fn fields(&self) -> &'static [TraceField] {
        (self.fields)()
    }
    fn sig<T: SignalValue>() -> [EraseFn; 2] {
        [erase_signal_in::<T>, erase_signal_out::<T>]
    }
    fn strm<T: Value>() -> [EraseFn; 2] {
        [erase_stream_in::<T>, erase_stream_out::<T>]
    }
    /// A signal input.
    pub fn input<T: SignalValue>(name: &str) -> Self {
        Self::new::<T>(name, Dir::In, Shape::Signal, 0, make_signal::<T>, Self::sig::<T>())
    }
    /// A signal output.
    pub fn output<T: SignalValue>(name: &str) -> Self {
        Self::new::<T>(name, Dir::Out, Shape::Signal, 0, make_signal::<T>, Self::sig::<T>())
    }
    /// A stream input with a buffer of `capacity` messages (≥ 1).
    pub fn stream_in<T: Value>(name: &str, capacity: u32) -> Self {
        Self::new::<T>(
            name,
            Dir::In,
            Shape::Stream,
            capacity.max(1),
            make_stream::<T>,
            Self::strm::<T>(),
        )
    }
    /// A stream output; the capacity is the consumer's.
    pub fn stream_out<T: Value>(name: &str) -> Self {
        Self::new::<T>(name, Dir::Out, Shape::Stream, 0, make_stream::<T>, Self::strm::<T>())
    }
    /// A combinational signal input: read in the cycle its driver writes it.
    pub fn comb_input<T: SignalValue>(name: &str) -> Self {
        Self::input::<T>(name).comb()
    }
    /// A combinational signal output: its readers see a write in the same cycle.
    pub fn comb_output<T: SignalValue>(name: &str) -> Self {
        Self::output::<T>(name).comb()
    }
    /// A combinational stream input with a buffer of `capacity` messages (≥ 1): a push is
    /// visible in the cycle it is made.
    pub fn comb_stream_in<T: Value>(name: &str, capacity: u32) -> Self {
        Self::stream_in::<T>(name, capacity).comb()
    }
    /// A combinational stream output.
    pub fn comb_stream_out<T: Value>(name: &str) -> Self {
        Self::stream_out::<T>(name).comb()
    }
    /// Makes the port combinational (see [`Timing::Comb`]).
    pub fn comb(mut self) -> Self {
        self.timing = Timing::Comb;
        self
    }
    /// A stream output that takes up to `n` pushes per cycle: `n` lanes handed over together
    /// (a block that checks several frames in a cycle reports on each). Each push still counts
    /// against the consumer's capacity.
    pub fn width(mut self, n: u32) -> Self {
        self.width = n.max(1);
        self
    }
    /// Marks an input optional (unbound → reset value forever).
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
    /// Marks the port as a level, drawn as an analog step trace in the GTKWave save file.
    pub fn level(mut self) -> Self {
        self.level = true;
        self
    }
    /// Assigns the port to process `p` of its block (0 = `tick`, the default; 1, 2, … =
    /// [`Component::process`](crate::Component::process)), at most [`MAX_PROCESSES`] − 1.
    pub fn process(mut self, p: u8) -> Self {
        self.process = p;
        self
    }
    /// Attaches a one-line description.
    pub fn doc(mut self, doc: &'static str) -> Self {
        self.doc = doc;
        self
    }
    /// The same port seen from the other side (a testbench driving or watching it). A flipped
    /// stream output gets `capacity` as its buffer.
    pub fn flipped(&self, capacity: u32) -> Self {
        let mut p = self.clone();
        p.dir = match self.dir {
            Dir::In => Dir::Out,
            Dir::Out => Dir::In,
        };
        p.optional = false;
        // The mirror is a block of one process, whichever process of the DUT the port is.
        p.process = 0;
        if p.dir == Dir::In && p.shape == Shape::Stream {
            p.capacity = capacity.max(1);
        }
        p
    }
    /// The port's kind as `hwsim list` shows it: `signal<Psn>`, `comb stream<Frame>`.
    pub fn describe(&self) -> String {
        let shape = match self.shape {
            Shape::Signal => "signal",
            Shape::Stream => "stream",
        };
        let timing = match self.timing {
            Timing::Registered => "",
            Timing::Comb => "comb ",
        };
        let width = if self.width > 1 {
            format!(" ×{}", self.width)
        } else {
            String::new()
        };
        let process = if self.process > 0 {
            format!(" (process {})", self.process)
        } else {
            String::new()
        };
        format!("{timing}{shape}<{}>{width}{process}", self.type_name)
    }
}

pub(crate) fn timing_word(t: Timing) -> &'static str {
    match t {
        Timing::Registered => "registered",
        Timing::Comb => "combinational",
    }
}
