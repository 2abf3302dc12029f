//! Values that travel on nets, and how they show up in a waveform.
//!
//! A value type describes itself as a fixed list of fields ([`Trace::fields`]), each a bit vector
//! of a true hardware width (up to 64 bits, or a wide vector up to 4096 bits such as a 512-slot
//! state bitmap) or a real. The tracer makes one VCD `$var` per
//! field; a type whose single field is named `""` is traced as the port itself (a plain `psn[11:0]`
//! rather than a scope holding one variable).

/// How one traced field appears in a VCD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A bit vector of the given width, 1..=64 bits. Width 1 is written as a scalar wire.
    Bits(u32),
    /// A real number (`$var real 64`), for rates and ratios.
    Real,
    /// A bit vector wider than 64 bits, 65..=4096 (a state bitmap): sampled as `ceil(width / 64)`
    /// consecutive [`TraceValue::Bits`] words, least significant word first (bit i of the vector
    /// is bit `i % 64` of word `i / 64`).
    Wide(u32),
}

impl TraceKind {
    /// How many [`TraceValue`]s a field of this kind takes in a sample: 1, or a wide vector's words.
    pub const fn slots(self) -> usize {
        match self {
            TraceKind::Wide(w) => w.div_ceil(64) as usize,
            _ => 1,
        }
    }
}

/// The number of [`TraceValue`] slots a value with these fields samples into.
pub fn slot_count(fields: &[TraceField]) -> usize {
    fields.iter().map(|f| f.kind.slots()).sum()
}

/// One traced field of a value type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceField {
    /// Field name as it appears in GTKWave (`psn`, `qp`, `opcode`); `""` for a single-field type.
    pub name: &'static str,
    /// Width or real.
    pub kind: TraceKind,
}

impl TraceField {
    /// A bit-vector field of `width` bits.
    pub const fn bits(name: &'static str, width: u32) -> Self {
        TraceField {
            name,
            kind: TraceKind::Bits(width),
        }
    }
    /// A bit-vector field wider than 64 bits (65..=4096), sampled as 64-bit words, LSW first.
    pub const fn wide(name: &'static str, width: u32) -> Self {
        TraceField {
            name,
            kind: TraceKind::Wide(width),
        }
    }
    /// A real-valued field.
    pub const fn real(name: &'static str) -> Self {
        TraceField {
            name,
            kind: TraceKind::Real,
        }
    }
}

/// One sampled field value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TraceValue {
    /// Bits, right-aligned; bits above the field width must be zero.
    Bits(u64),
    /// A real.
    Real(f64),
}

impl Default for TraceValue {
    fn default() -> Self {
        TraceValue::Bits(0)
    }
}

/// A value that can be traced field by field.
///
/// `sample` must write exactly `slot_count(Self::fields())` values, in field order: one per
/// field, `ceil(width / 64)` for a [`TraceKind::Wide`] one.
pub trait Trace {
    /// The traced fields, in order. Must return the same slice on every call.
    fn fields() -> &'static [TraceField];
    /// Writes the current field values into `out` (`out.len() == slot_count(fields())`).
    fn sample(&self, out: &mut [TraceValue]);
    /// Whether [`Trace::load`] is implemented (a value a foreign model, an RTL simulator, may
    /// drive onto a net by its fields).
    const LOAD: bool = false;
    /// The value whose [`sample`](Trace::sample) is `v` (the inverse of `sample`), or `None`
    /// for fields that are no value of the type (a bit set above a field's width, a code no
    /// variant has). Only types with [`Trace::LOAD`] set implement it.
    fn load(_v: &[TraceValue]) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// The bits of a sampled field, if they fit in `width` bits (`None` for a real, or wider bits).
pub fn bits_of(v: &TraceValue, width: u32) -> Option<u64> {
    match *v {
        TraceValue::Bits(b) if width >= 64 || b >> width == 0 => Some(b),
        _ => None,
    }
}

macro_rules! trace_uint {
    ($($t:ty => $w:expr),*) => {$(
        impl Trace for $t {
            fn fields() -> &'static [TraceField] {
                const F: [TraceField; 1] = [TraceField::bits("", $w)];
                &F
            }
            fn sample(&self, out: &mut [TraceValue]) {
                out[0] = TraceValue::Bits(*self as u64);
            }
            const LOAD: bool = true;
            fn load(v: &[TraceValue]) -> Option<Self> {
                bits_of(v.first()?, $w).map(|b| b as $t)
            }
        }
    )*};
}
trace_uint!(u8 => 8, u16 => 16, u32 => 32, u64 => 64);

impl Trace for bool {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::bits("", 1)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(*self as u64);
    }
    const LOAD: bool = true;
    fn load(v: &[TraceValue]) -> Option<Self> {
        bits_of(v.first()?, 1).map(|b| b != 0)
    }
}

impl Trace for f64 {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 1] = [TraceField::real("")];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Real(*self);
    }
    const LOAD: bool = true;
    fn load(v: &[TraceValue]) -> Option<Self> {
        match *v.first()? {
            TraceValue::Real(x) => Some(x),
            TraceValue::Bits(_) => None,
        }
    }
}

/// The unit value carries no data (a pure event on a stream shows only its `valid`).
impl Trace for () {
    fn fields() -> &'static [TraceField] {
        &[]
    }
    fn sample(&self, _out: &mut [TraceValue]) {}
    const LOAD: bool = true;
    fn load(_v: &[TraceValue]) -> Option<Self> {
        Some(())
    }
}

/// Marker for everything that may travel on a net: traced, cloneable, debuggable, owned.
pub trait Value: Trace + Clone + std::fmt::Debug + 'static {}
impl<T: Trace + Clone + std::fmt::Debug + 'static> Value for T {}

/// Values a signal can hold: also `Copy`, comparable (a change wakes readers) and with a reset
/// value (`Default`) that the signal has at cycle 0.
pub trait SignalValue: Value + Copy + PartialEq + Default {}
impl<T: Value + Copy + PartialEq + Default> SignalValue for T {}
