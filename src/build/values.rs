//! Value types a testbench can drive and check, by the `TypeId` a port declares: for each, how to
//! build a stimulus driver from YAML rows, a sink for the unconnected stream outputs of that type
//! (one sink takes them all), and how to read a net's log back as YAML values for the checks.

use std::any::TypeId;
use std::collections::HashMap;

use hwsim_hw::{
    Binder, BuildFn, CombOut, Component, Ctx, Cycle, NetDyn, Out, PortDecl, Shape, SignalNet, SignalValue, StreamIn,
    StreamNet, StreamOut, Timing, Value as HwValue, Wake,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::input::yaml::{self, Value};

/// A driver's schedule: (cycle, YAML value) rows, sorted by cycle.
pub type Rows = Vec<(Cycle, Value)>;
/// A net's recorded history as YAML values: (cycle, value).
pub type History = Vec<(Cycle, Value)>;

/// What a check asks of a net's recorded history: the window `[lo, hi]` (for a signal with
/// `at_lo`, its value at `lo` and the changes in `(lo, hi]`, as a value check reads it), the
/// first `take` values of it, and the first one `want` accepts. Only those values are turned
/// into YAML: a run of 10^8 pushes is counted, not converted (a YAML value is ~5 times the
/// message, so converting the whole log aborted runs that had room for the log itself).
pub struct Query<'a> {
    /// Window start.
    pub lo: Cycle,
    /// Window end (inclusive).
    pub hi: Cycle,
    /// A signal's value at `lo` first (then the changes after `lo`).
    pub at_lo: bool,
    /// How many values of the window to hand back.
    pub take: usize,
    /// The first value of the window this accepts is handed back too.
    pub want: Option<&'a dyn Fn(&Value) -> bool>,
}

/// What a [`Query`] found.
#[derive(Default)]
pub struct Seen {
    /// The window's first `take` values, in order.
    pub items: History,
    /// How many values the window holds.
    pub count: usize,
    /// The first value of the window `want` accepted.
    pub hit: Option<(Cycle, Value)>,
    /// The recorded value nearest `lo` (the earliest of equals), when the window is empty.
    pub nearest: Option<(Cycle, Value)>,
}

/// Answers `q` over a typed history (cycles non-decreasing, as recorded) and, for a signal,
/// its reset value.
fn query<T: Serialize>(log: &[(Cycle, T)], reset: Option<&T>, q: &Query<'_>) -> Seen {
    let start = if q.at_lo {
        log.partition_point(|(c, _)| *c <= q.lo)
    } else {
        log.partition_point(|(c, _)| *c < q.lo)
    };
    let end = log.partition_point(|(c, _)| *c <= q.hi).max(start);
    let first = q.at_lo.then(|| {
        let v = if start > 0 { Some(&log[start - 1].1) } else { reset };
        (q.lo, v.map_or(Value::Null, yaml::to_value))
    });
    let values = || {
        first
            .iter()
            .cloned()
            .chain(log[start..end].iter().map(|(c, v)| (*c, yaml::to_value(v))))
    };
    let count = usize::from(first.is_some()) + (end - start);
    let nearest = (count == 0)
        .then(|| log.iter().min_by_key(|(c, _)| c.abs_diff(q.lo)))
        .flatten()
        .map(|(c, v)| (*c, yaml::to_value(v)));
    Seen {
        items: values().take(q.take).collect(),
        count,
        hit: q.want.and_then(|w| values().find(|(_, v)| w(v))),
        nearest,
    }
}
/// An instance ready to add to a netlist: its ports and builder.
pub type Instance = (Vec<PortDecl>, BuildFn);
type MakeDriver = fn(Rows, Timing) -> Result<Instance, String>;
type LogQuery = fn(&dyn NetDyn, &Query<'_>) -> Option<Seen>;

/// Operations on one value type.
pub struct ValueOps {
    /// Type name.
    pub name: &'static str,
    signal_driver: Option<MakeDriver>,
    stream_driver: MakeDriver,
    sink: fn(u32, usize, Timing) -> (Vec<PortDecl>, BuildFn),
    signal_log: Option<LogQuery>,
    stream_log: LogQuery,
}

impl ValueOps {
    /// A driver instance for an input port of this type, shape and timing. A row at cycle `c`
    /// is written at `c`: a registered input sees it at `c + 1`, a combinational one at `c`.
    pub fn driver(&self, shape: Shape, timing: Timing, rows: Rows) -> Result<(Vec<PortDecl>, BuildFn), String> {
        match shape {
            Shape::Signal => match self.signal_driver {
                Some(f) => f(rows, timing),
                None => Err(format!("{} cannot be a signal", self.name)),
            },
            Shape::Stream => (self.stream_driver)(rows, timing),
        }
    }
    /// A sink instance for `count` stream outputs of this type and timing: inputs `in0` …
    /// `in{count−1}`.
    pub fn sink(&self, capacity: u32, count: usize, timing: Timing) -> (Vec<PortDecl>, BuildFn) {
        (self.sink)(capacity, count, timing)
    }
    /// What a check reads of a net's recorded history (see [`Query`]): a signal's changes (its
    /// reset value before the first), a stream's pushes; `None` if nothing was recorded.
    pub fn history(&self, net: &dyn NetDyn, shape: Shape, q: &Query<'_>) -> Option<Seen> {
        match shape {
            Shape::Signal => self.signal_log.and_then(|f| f(net, q)),
            Shape::Stream => (self.stream_log)(net, q),
        }
    }
}

fn parse_rows<T: DeserializeOwned>(rows: Rows) -> Result<Vec<(Cycle, T)>, String> {
    rows.into_iter()
        .map(|(c, v)| {
            let shown = yaml::show(&v);
            yaml::from_value::<T>(v)
                .map(|t| (c, t))
                .map_err(|e| format!("value `{shown}` at cycle {c}: {e}"))
        })
        .collect()
}

/// The write side of a signal, registered or combinational: what a stimulus driver needs.
trait Drive<T> {
    fn set(&self, v: T);
}
impl<T: SignalValue> Drive<T> for Out<T> {
    fn set(&self, v: T) {
        Out::set(self, v)
    }
}
impl<T: SignalValue> Drive<T> for CombOut<T> {
    fn set(&self, v: T) {
        CombOut::set(self, v)
    }
}

struct SignalDriver<T: SignalValue, O: Drive<T>> {
    out: O,
    rows: Vec<(Cycle, T)>,
    next: usize,
}

impl<T: SignalValue, O: Drive<T>> Component for SignalDriver<T, O> {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Rows are applied by time, so extra ticks change nothing.
        while self.next < self.rows.len() && self.rows[self.next].0 <= now {
            self.out.set(self.rows[self.next].1);
            self.next += 1;
        }
        match self.rows.get(self.next) {
            Some(&(c, _)) => Wake::At(c),
            None => Wake::OnInput,
        }
    }
}

struct StreamDriver<T: HwValue> {
    out: StreamOut<T>,
    rows: std::collections::VecDeque<(Cycle, T)>,
}

impl<T: HwValue> Component for StreamDriver<T> {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        let mut pushed = false;
        if self.rows.front().is_some_and(|(c, _)| *c <= now) && self.out.can_push() {
            let (_, v) = self.rows.pop_front().expect("front");
            self.out.push(v);
            pushed = true;
        }
        match self.rows.front() {
            None => Wake::OnInput,
            Some(&(c, _)) if c > now => Wake::At(c),
            // Overdue: after a push try again next cycle; when full, the consumer's pop wakes us.
            Some(_) if pushed => Wake::NextCycle,
            Some(_) => Wake::OnInput,
        }
    }
}

/// Takes one message per cycle from each of its streams that holds one. One sink serves every
/// unconnected output of a type: a block with 16 busy outputs then costs the kernel one
/// activation per cycle, not 16 (W1). Each stream is popped at the same cycles as by a sink of
/// its own (a stream's push wakes the sink; after a pop it looks again the next cycle).
struct Sink<T: HwValue> {
    inputs: Vec<StreamIn<T>>,
    /// Take everything visible (combinational streams, which may carry several messages a
    /// cycle), not one per cycle.
    drain: bool,
}

impl<T: HwValue> Component for Sink<T> {
    fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
        if self.drain {
            // A combinational push wakes us in its cycle: take it all then.
            for input in &self.inputs {
                while input.pop().is_some() {}
            }
            return Wake::OnInput;
        }
        // After a pop, look again next cycle (a tick that finds every stream empty pops
        // nothing and sleeps): cheaper than asking each stream whether it still holds one.
        let mut popped = false;
        for input in &self.inputs {
            popped |= input.pop().is_some();
        }
        Wake::next_cycle_if(popped)
    }
}

/// `decl` with the timing of the port it drives or reads.
fn timed(decl: PortDecl, timing: Timing) -> PortDecl {
    match timing {
        Timing::Registered => decl,
        Timing::Comb => decl.comb(),
    }
}

fn signal_driver<T: SignalValue + DeserializeOwned>(
    rows: Rows,
    timing: Timing,
) -> Result<(Vec<PortDecl>, BuildFn), String> {
    let rows = parse_rows::<T>(rows)?;
    let build: BuildFn = Box::new(move |b: &mut Binder| {
        Ok(match timing {
            Timing::Registered => Box::new(SignalDriver {
                out: b.output::<T>("out")?,
                rows,
                next: 0,
            }) as Box<dyn Component>,
            Timing::Comb => Box::new(SignalDriver {
                out: b.comb_output::<T>("out")?,
                rows,
                next: 0,
            }),
        })
    });
    Ok((vec![timed(PortDecl::output::<T>("out"), timing)], build))
}

fn stream_driver<T: HwValue + DeserializeOwned>(
    rows: Rows,
    timing: Timing,
) -> Result<(Vec<PortDecl>, BuildFn), String> {
    let rows = parse_rows::<T>(rows)?.into_iter().collect();
    let build: BuildFn = Box::new(move |b: &mut Binder| {
        Ok(Box::new(StreamDriver {
            out: b.stream_out::<T>("out")?,
            rows,
        }) as Box<dyn Component>)
    });
    Ok((vec![timed(PortDecl::stream_out::<T>("out"), timing)], build))
}

fn sink<T: HwValue>(capacity: u32, count: usize, timing: Timing) -> (Vec<PortDecl>, BuildFn) {
    let build: BuildFn = Box::new(move |b: &mut Binder| {
        Ok(Box::new(Sink {
            inputs: (0..count)
                .map(|k| b.stream_in::<T>(&format!("in{k}")))
                .collect::<Result<_, _>>()?,
            drain: timing == Timing::Comb,
        }) as Box<dyn Component>)
    });
    let ports = (0..count)
        .map(|k| timed(PortDecl::stream_in::<T>(&format!("in{k}"), capacity), timing))
        .collect();
    (ports, build)
}

fn signal_log<T: SignalValue + Serialize>(net: &dyn NetDyn, q: &Query<'_>) -> Option<Seen> {
    let n = net.as_any().downcast_ref::<SignalNet<T>>()?;
    let log = n.log();
    let l = log.as_ref()?;
    Some(query(l, Some(&T::default()), q))
}

fn stream_log<T: HwValue + Serialize>(net: &dyn NetDyn, q: &Query<'_>) -> Option<Seen> {
    let n = net.as_any().downcast_ref::<StreamNet<T>>()?;
    let log = n.log();
    let l = log.as_ref()?;
    Some(query(l, None, q))
}

/// Operations for a type that may be a signal or a stream message.
pub fn signal_type<T: SignalValue + Serialize + DeserializeOwned>(name: &'static str) -> ValueOps {
    ValueOps {
        name,
        signal_driver: Some(signal_driver::<T>),
        stream_driver: stream_driver::<T>,
        sink: sink::<T>,
        signal_log: Some(signal_log::<T>),
        stream_log: stream_log::<T>,
    }
}

/// Operations for a message-only type (not `Copy`).
pub fn message_type<T: HwValue + Serialize + DeserializeOwned>(name: &'static str) -> ValueOps {
    ValueOps {
        name,
        signal_driver: None,
        stream_driver: stream_driver::<T>,
        sink: sink::<T>,
        signal_log: None,
        stream_log: stream_log::<T>,
    }
}

/// Every value type the testbench layer knows, by `TypeId`.
pub fn registry() -> HashMap<TypeId, ValueOps> {
    let mut m = HashMap::new();
    m.insert(TypeId::of::<bool>(), signal_type::<bool>("bool"));
    m.insert(TypeId::of::<u8>(), signal_type::<u8>("u8"));
    m.insert(TypeId::of::<u16>(), signal_type::<u16>("u16"));
    m.insert(TypeId::of::<u32>(), signal_type::<u32>("u32"));
    m.insert(TypeId::of::<u64>(), signal_type::<u64>("u64"));
    m.insert(TypeId::of::<f64>(), signal_type::<f64>("f64"));
    register_port_values(&mut m);
    m
}

/// Value types from hwsim-ports that testbenches can drive and check.
fn register_port_values(m: &mut HashMap<TypeId, ValueOps>) {
    use hwsim_ports as hp;
    m.insert(TypeId::of::<hp::Psn>(), signal_type::<hp::Psn>("Psn"));
    m.insert(TypeId::of::<hp::QpId>(), signal_type::<hp::QpId>("QpId"));
    m.insert(TypeId::of::<hp::VcBank>(), signal_type::<hp::VcBank>("VcBank"));
    m.insert(TypeId::of::<hp::Rh>(), signal_type::<hp::Rh>("Rh"));
    m.insert(TypeId::of::<hp::Opcode>(), signal_type::<hp::Opcode>("Opcode"));
    m.insert(TypeId::of::<hp::Ecn>(), signal_type::<hp::Ecn>("Ecn"));
    m.insert(TypeId::of::<hp::Tos>(), signal_type::<hp::Tos>("Tos"));
    m.insert(TypeId::of::<hp::VlanTag>(), signal_type::<hp::VlanTag>("VlanTag"));
    m.insert(
        TypeId::of::<hp::TrafficClass>(),
        signal_type::<hp::TrafficClass>("TrafficClass"),
    );
    m.insert(TypeId::of::<hp::MacAddr>(), signal_type::<hp::MacAddr>("MacAddr"));
    m.insert(TypeId::of::<hp::Txn>(), signal_type::<hp::Txn>("Txn"));
    m.insert(TypeId::of::<hp::Segment>(), signal_type::<hp::Segment>("Segment"));
    m.insert(TypeId::of::<hp::DataFrame>(), signal_type::<hp::DataFrame>("DataFrame"));
    m.insert(TypeId::of::<hp::Ctrl>(), signal_type::<hp::Ctrl>("Ctrl"));
    m.insert(TypeId::of::<hp::CreditMsg>(), signal_type::<hp::CreditMsg>("CreditMsg"));
    m.insert(TypeId::of::<hp::FrameDone>(), signal_type::<hp::FrameDone>("FrameDone"));
    m.insert(TypeId::of::<hp::ArbReq>(), signal_type::<hp::ArbReq>("ArbReq"));
    m.insert(
        TypeId::of::<hp::XbarRequest>(),
        signal_type::<hp::XbarRequest>("XbarRequest"),
    );
    m.insert(
        TypeId::of::<hp::XbarOutputs>(),
        signal_type::<hp::XbarOutputs>("XbarOutputs"),
    );
    m.insert(TypeId::of::<hp::XbarGrant>(), signal_type::<hp::XbarGrant>("XbarGrant"));
    m.insert(
        TypeId::of::<hp::RoutedFrame>(),
        signal_type::<hp::RoutedFrame>("RoutedFrame"),
    );
    m.insert(
        TypeId::of::<hp::RoutedCtrl>(),
        signal_type::<hp::RoutedCtrl>("RoutedCtrl"),
    );
    m.insert(
        TypeId::of::<hp::RoutedCredit>(),
        signal_type::<hp::RoutedCredit>("RoutedCredit"),
    );
    m.insert(
        TypeId::of::<hp::MacCreditRet>(),
        signal_type::<hp::MacCreditRet>("MacCreditRet"),
    );
    m.insert(
        TypeId::of::<hp::MacCreditTake>(),
        signal_type::<hp::MacCreditTake>("MacCreditTake"),
    );
    m.insert(TypeId::of::<hp::WireRamp>(), signal_type::<hp::WireRamp>("WireRamp"));
    m.insert(TypeId::of::<hp::VcReq>(), signal_type::<hp::VcReq>("VcReq"));
    m.insert(TypeId::of::<hp::VcGrant>(), signal_type::<hp::VcGrant>("VcGrant"));
    m.insert(TypeId::of::<hp::VcCredits>(), signal_type::<hp::VcCredits>("VcCredits"));
    m.insert(TypeId::of::<hp::SlotMap>(), signal_type::<hp::SlotMap>("SlotMap"));
    m.insert(TypeId::of::<hp::UInt<3>>(), signal_type::<hp::UInt<3>>("UInt<3>"));
    m.insert(TypeId::of::<hp::UInt<4>>(), signal_type::<hp::UInt<4>>("UInt<4>"));
    m.insert(TypeId::of::<hp::UInt<8>>(), signal_type::<hp::UInt<8>>("UInt<8>"));
    m.insert(TypeId::of::<hp::UInt<9>>(), signal_type::<hp::UInt<9>>("UInt<9>"));
    m.insert(TypeId::of::<hp::UInt<11>>(), signal_type::<hp::UInt<11>>("UInt<11>"));
    m.insert(TypeId::of::<hp::UInt<2>>(), signal_type::<hp::UInt<2>>("UInt<2>"));
    m.insert(TypeId::of::<hp::UInt<6>>(), signal_type::<hp::UInt<6>>("UInt<6>"));
    m.insert(TypeId::of::<hp::UInt<7>>(), signal_type::<hp::UInt<7>>("UInt<7>"));
    m.insert(TypeId::of::<hp::UInt<16>>(), signal_type::<hp::UInt<16>>("UInt<16>"));
    m.insert(TypeId::of::<hp::UInt<21>>(), signal_type::<hp::UInt<21>>("UInt<21>"));
    m.insert(TypeId::of::<hp::UInt<32>>(), signal_type::<hp::UInt<32>>("UInt<32>"));
    m.insert(TypeId::of::<hp::UInt<48>>(), signal_type::<hp::UInt<48>>("UInt<48>"));
    m.insert(TypeId::of::<hp::Cell>(), signal_type::<hp::Cell>("Cell"));
    m.insert(TypeId::of::<hp::PfcFrame>(), signal_type::<hp::PfcFrame>("PfcFrame"));
    m.insert(TypeId::of::<hp::UInt<1>>(), signal_type::<hp::UInt<1>>("UInt<1>"));
    m.insert(
        TypeId::of::<hp::RxAccepted>(),
        signal_type::<hp::RxAccepted>("RxAccepted"),
    );
    // The counts the RX modules show at their widths (credit_return.credits_due, ack_merge.pending).
    m.insert(TypeId::of::<hp::RxCtrl>(), signal_type::<hp::RxCtrl>("RxCtrl"));
    m.insert(TypeId::of::<hp::CeMark>(), signal_type::<hp::CeMark>("CeMark"));
    m.insert(TypeId::of::<hp::TxCtrl>(), signal_type::<hp::TxCtrl>("TxCtrl"));
    // The TX core ⇄ DCQCN rate gate messages (the `dcqcn` node's module testbench drives them).
    m.insert(TypeId::of::<hp::RateCnp>(), signal_type::<hp::RateCnp>("RateCnp"));
    // The TX core ⇄ TYPE2 queue messages (the `type2` node's module testbench).
    m.insert(
        TypeId::of::<hp::Type2Offer>(),
        signal_type::<hp::Type2Offer>("Type2Offer"),
    );
    m.insert(TypeId::of::<hp::Type2Take>(), signal_type::<hp::Type2Take>("Type2Take"));
    // The slot FIFO ⇄ VC queues messages.
    m.insert(TypeId::of::<hp::QueueOp>(), signal_type::<hp::QueueOp>("QueueOp"));
    m.insert(TypeId::of::<hp::SlotGrant>(), signal_type::<hp::SlotGrant>("SlotGrant"));
    m.insert(TypeId::of::<hp::RateSent>(), signal_type::<hp::RateSent>("RateSent"));
    m.insert(TypeId::of::<hp::RatePace>(), signal_type::<hp::RatePace>("RatePace"));
    m.insert(TypeId::of::<hp::CtrlKind>(), signal_type::<hp::CtrlKind>("CtrlKind"));
    m.insert(TypeId::of::<hp::PktCount>(), signal_type::<hp::PktCount>("PktCount"));
    m.insert(
        TypeId::of::<hp::CreditCount>(),
        signal_type::<hp::CreditCount>("CreditCount"),
    );
}
