//! Port handles whose value type is hidden: a node's ports read and driven by their traced
//! fields, for a model the kernel does not know the types of (an RTL simulator standing in for a
//! block: the application's `rtl` replace mode).
//!
//! Every [`PortDecl`](crate::PortDecl) carries, beside the typed constructor of its net, the
//! function that wraps the typed handle of its kind ([`In`], [`Out`], [`CombOut`], [`StreamIn`],
//! [`StreamOut`]) as an [`AnyPort`]. A builder asks [`Binder::any_port`](crate::Binder::any_port)
//! for it, so the erased handle keeps every rule of the typed one (one push per cycle, the
//! stream's capacity, a combinational write seen at once, the dirty list). Reading is the
//! traced sample of the value ([`Trace::sample`]); writing builds a value from fields with
//! [`Trace::load`], so only value types that implement it can be driven.

use crate::net::{CombOut, In, Out, StreamIn, StreamOut};
use crate::netlist::Binder;
use crate::port::Timing;
use crate::value::{slot_count, SignalValue, TraceField, TraceValue, Value};

/// What an erased handle does; implemented for each typed handle.
/// What a handle cannot do, it refuses by these defaults.
trait Erased {
    fn fields(&self) -> &'static [TraceField];
    fn read(&self, _out: &mut [TraceValue]) -> bool {
        false
    }
    fn pop(&self) -> bool {
        false
    }
    fn room(&self) -> bool {
        false
    }
    fn write(&self, _v: &[TraceValue]) -> Result<(), String> {
        Err("an input cannot be driven".into())
    }
}

/// A port of any value type, read and driven by its traced fields (see the module docs).
pub struct AnyPort(Box<dyn Erased>);

/// Wraps the typed handle of port `name` (the function a [`PortDecl`](crate::PortDecl) keeps).
pub(crate) type EraseFn = fn(&Binder<'_>, &str) -> Result<AnyPort, String>;

impl AnyPort {
    /// The value type's traced fields ([`Trace::fields`]); a stream's `valid` is not among them.
    pub fn fields(&self) -> &'static [TraceField] {
        self.0.fields()
    }
    /// The number of sample slots of one value ([`slot_count`] of the fields).
    pub fn slots(&self) -> usize {
        slot_count(self.fields())
    }
    /// An input's current value into `out` (`out.len() == slots()`): a signal's value (`true`),
    /// or a stream's head message (`true`; `false`, `out` untouched, when it holds none). An
    /// output reads as `false`.
    pub fn read(&self, out: &mut [TraceValue]) -> bool {
        self.0.read(out)
    }
    /// A stream input: removes the head message; `false` if there was none (or not a stream
    /// input).
    pub fn pop(&self) -> bool {
        self.0.pop()
    }
    /// A stream output: whether a push now would be accepted. A signal output: always.
    pub fn room(&self) -> bool {
        self.0.room()
    }
    /// An output: drives the value built from `v` (a signal's write, a stream's push). Refused
    /// with a message for an input, a value type without [`Trace::load`], fields it does not
    /// accept, or a push the stream has no room for.
    pub fn write(&self, v: &[TraceValue]) -> Result<(), String> {
        self.0.write(v)
    }
}

fn load<T: Value>(v: &[TraceValue]) -> Result<T, String> {
    if !T::LOAD {
        return Err(format!(
            "values of type {} cannot be built from fields (no Trace::load)",
            std::any::type_name::<T>()
        ));
    }
    T::load(v).ok_or_else(|| format!("{v:?} is not a value of type {}", std::any::type_name::<T>()))
}

struct SigIn<T: SignalValue>(In<T>);
impl<T: SignalValue> Erased for SigIn<T> {
    fn fields(&self) -> &'static [TraceField] {
        T::fields()
    }
    fn read(&self, out: &mut [TraceValue]) -> bool {
        self.0.get().sample(out);
        true
    }
}

enum SigOut<T: SignalValue> {
    Reg(Out<T>),
    Comb(CombOut<T>),
}
impl<T: SignalValue> Erased for SigOut<T> {
    fn fields(&self) -> &'static [TraceField] {
        T::fields()
    }
    fn room(&self) -> bool {
        true
    }
    fn write(&self, v: &[TraceValue]) -> Result<(), String> {
        let x = load::<T>(v)?;
        match self {
            SigOut::Reg(o) => o.update(x),
            SigOut::Comb(o) => o.set(x),
        }
        Ok(())
    }
}

struct StrIn<T: Value>(StreamIn<T>);
impl<T: Value> Erased for StrIn<T> {
    fn fields(&self) -> &'static [TraceField] {
        T::fields()
    }
    fn read(&self, out: &mut [TraceValue]) -> bool {
        match self.0.peek() {
            Some(m) => {
                m.sample(out);
                true
            }
            None => false,
        }
    }
    fn pop(&self) -> bool {
        self.0.pop().is_some()
    }
}

struct StrOut<T: Value>(StreamOut<T>);
impl<T: Value> Erased for StrOut<T> {
    fn fields(&self) -> &'static [TraceField] {
        T::fields()
    }
    fn room(&self) -> bool {
        self.0.can_push()
    }
    fn write(&self, v: &[TraceValue]) -> Result<(), String> {
        let x = load::<T>(v)?;
        self.0
            .try_push(x)
            .map_err(|m| format!("no room for a push (the stream is full, or took its push this cycle): {m:?}"))
    }
}

pub(crate) fn erase_signal_in<T: SignalValue>(b: &Binder<'_>, name: &str) -> Result<AnyPort, String> {
    Ok(AnyPort(Box::new(SigIn(b.input::<T>(name)?))))
}

pub(crate) fn erase_signal_out<T: SignalValue>(b: &Binder<'_>, name: &str) -> Result<AnyPort, String> {
    let h = match b.port_timing(name) {
        Some(Timing::Comb) => SigOut::Comb(b.comb_output::<T>(name)?),
        _ => SigOut::Reg(b.output::<T>(name)?),
    };
    Ok(AnyPort(Box::new(h)))
}

pub(crate) fn erase_stream_in<T: Value>(b: &Binder<'_>, name: &str) -> Result<AnyPort, String> {
    Ok(AnyPort(Box::new(StrIn(b.stream_in::<T>(name)?))))
}

pub(crate) fn erase_stream_out<T: Value>(b: &Binder<'_>, name: &str) -> Result<AnyPort, String> {
    Ok(AnyPort(Box::new(StrOut(b.stream_out::<T>(name)?))))
}
