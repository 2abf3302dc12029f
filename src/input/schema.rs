//! Testbench and config file schemas. Unknown fields are refused everywhere.
//!
//! A testbench has one of two forms (DESIGN.md §5):
//! - **module form**: `instances:` (blocks with parameters), `connect:`, a `stimulus:` table that
//!   drives input ports cycle by cycle, and `expect:` checks on outputs and counters;
//! - **system form**: `system:` (topology, traffic, faults) and `expect:`; its blocks are the
//!   interconnect model.
//!
//! `include:` lists config files (configs/*.yaml) whose `defaults:` (per block kind) and `system:`
//! settings are merged under the testbench's own (the testbench wins).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::input::yaml::Value;

/// A testbench file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Testbench {
    /// Name (default: the file stem).
    pub name: Option<String>,
    /// What it checks, in a sentence or two.
    pub description: Option<String>,
    /// The run's one seed (default 1).
    #[serde(default = "one")]
    pub seed: u64,
    /// Longest run in cycles; the run also ends when nothing is scheduled. Default 100 000 000.
    pub until: Option<u64>,
    /// System form: the warm-up, in cycles. The flows' statistics (the flows table, goodput,
    /// latency metrics and their percentiles) count only the transactions issued at or after
    /// it; counters of the blocks still count the whole run. Sets every chip's
    /// `paxi.metrics_from`.
    pub metrics_from: Option<u64>,
    /// Config files merged under this one (paths relative to this file, then to the working
    /// directory).
    #[serde(default)]
    pub include: Vec<String>,
    /// Parameter defaults per block kind.
    #[serde(default)]
    pub defaults: BTreeMap<String, Value>,
    /// Signals to trace when `--vcd` is given without `--trace` (globs; default all).
    #[serde(default)]
    pub trace: Vec<String>,
    /// What GTKWave shows first (the `.gtkw` save file written beside the wave): titled groups
    /// of signals in order, and the time window (default: one group per `trace:` glob).
    pub view: Option<View>,
    /// Module form: the instances, by hierarchical name.
    #[serde(default)]
    pub instances: BTreeMap<String, InstanceSpec>,
    /// Module form: bindings.
    #[serde(default)]
    pub connect: Vec<Connect>,
    /// Module form: values driven into input ports.
    #[serde(default)]
    pub stimulus: Vec<Stimulus>,
    /// System form.
    pub system: Option<System>,
    /// Checks.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// Sampling of signals and counters over time into a CSV (crate::run::probe).
    pub probe: Option<Probe>,
    /// RTL run beside the model (crate::run::rtl), by name: `rtl: {arb: {instance: chip0.lg7.tx.arbiter,
    /// mode: shadow, sources: [...], top: vc_arbiter, map: {...}}}`.
    #[serde(default)]
    pub rtl: BTreeMap<String, Rtl>,
}

/// One RTL module run beside the model (crate::run::rtl): Verilated from `sources`, fed the inputs of
/// `instance` every cycle, its outputs compared with the model's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rtl {
    /// The model's node (or composite) the RTL stands beside: a path of the netlist.
    pub instance: String,
    /// `shadow` (the model drives; the RTL's outputs are compared every cycle) or `replace`
    /// (the RTL drives the node's outputs in its place).
    #[serde(default = "shadow")]
    pub mode: String,
    /// Verilog / SystemVerilog files, relative to this testbench's folder.
    pub sources: Vec<String>,
    /// The top module.
    pub top: String,
    /// Verilog parameters (`-G`), integers.
    #[serde(default)]
    pub parameters: BTreeMap<String, i64>,
    /// The clock input (default `clk`).
    #[serde(default = "clk")]
    pub clock: String,
    /// The reset input, active high (`!rst_n`: active low); held for one clock before cycle 0.
    pub reset: Option<String>,
    /// The instance's port fields (`req.eligible`, `ptr`) → the RTL's signals.
    pub map: BTreeMap<String, RtlSignal>,
    /// `replace`: whether the RTL may sleep once its outputs held still for a cycle with no
    /// message (default true); `false` runs it every cycle (an RTL with a timer inside).
    pub sleep: Option<bool>,
    /// Seconds to wait for one answer of the RTL simulator before stopping it (default 10).
    pub timeout_s: Option<f64>,
}

/// An RTL signal in a map: `req_valid`, or `{signal: ptr, offset: 1, when: grant.valid}`.
#[derive(Debug, Clone)]
pub enum RtlSignal {
    /// Just the name: compared (or driven) in the same cycle.
    Name(String),
    /// With an offset and a condition.
    Full {
        /// The RTL's top-level port.
        signal: String,
        /// An output: the RTL's cycle c + offset is compared with the model's cycle c (a
        /// register showing one cycle after the model: 1).
        offset: u32,
        /// An output: compared only in the cycles where this field of the instance (a stream's
        /// `valid`) is non-zero.
        when: Option<String>,
    },
}

/// The long form of [`RtlSignal`], its keys refused when unknown.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RtlSignalFull {
    signal: String,
    #[serde(default)]
    offset: u32,
    when: Option<String>,
}

/// Read by hand, not as an untagged enum: an untagged enum buffers the value first, so its
/// error lost the place (it was reported at the map's first entry) and an unknown key of the
/// long form was dropped without a word (`ofset: 1` ran as offset 0).
impl<'de> Deserialize<'de> for RtlSignal {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RtlSignal;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an RTL port name (`req_valid`) or `{signal: NAME, offset: N, when: FIELD}`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RtlSignal, E> {
                if s.is_empty() {
                    return Err(E::custom("an empty RTL port name: give the RTL's port (`req_valid`)"));
                }
                Ok(RtlSignal::Name(s.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<RtlSignal, A::Error> {
                let f = RtlSignalFull::deserialize(de::value::MapAccessDeserializer::new(m))?;
                if f.signal.is_empty() {
                    return Err(de::Error::custom(
                        "signal: an empty RTL port name: give the RTL's port (`req_valid`)",
                    ));
                }
                Ok(RtlSignal::Full {
                    signal: f.signal,
                    offset: f.offset,
                    when: f.when,
                })
            }
        }
        d.deserialize_any(V)
    }
}

fn shadow() -> String {
    "shadow".into()
}

fn clk() -> String {
    "clk".into()
}

/// `probe: {every: 1000, signals: [GLOB…], counters: [GLOB…], out: PATH}`: every `every` cycles,
/// the signals (net paths, or `path.field` of a traced field) and counters matching the globs,
/// one CSV row (`cycle,…`). Written to `--probe PATH`, else `out`, else beside `--json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Cycles between two samples (the first at cycle 0).
    pub every: u64,
    /// Signal globs.
    #[serde(default)]
    pub signals: Vec<String>,
    /// Counter globs.
    #[serde(default)]
    pub counters: Vec<String>,
    /// Default output file (relative to the working directory).
    pub out: Option<String>,
}

/// The `view:` of a testbench: what `gtkwave waves/x.gtkw` opens on.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct View {
    /// Cycles `[from, to]` the zoom fits in the window (default: the whole run).
    pub window: Option<[u64; 2]>,
    /// Times of GTKWave's named markers A, B, … (at most 26).
    #[serde(default)]
    pub markers: Vec<u64>,
    /// Groups, top to bottom.
    pub groups: Vec<ViewGroup>,
}

/// One titled group of signals in the view.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewGroup {
    /// Title shown on the group.
    pub title: String,
    /// Globs over the wave's signals (`chip0.lg7.tx.frame.psn`, `chip0.lg7.tx.arbiter.*`); a
    /// scope selects everything below it.
    pub signals: Vec<String>,
}

fn one() -> u64 {
    1
}

/// A config file (configs/*.yaml).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// What the preset is.
    pub description: Option<String>,
    /// Parameter defaults per block kind.
    #[serde(default)]
    pub defaults: BTreeMap<String, Value>,
    /// System settings merged under a system-form testbench's `system:`.
    pub system: Option<Value>,
}

/// One instance (or an array of `count` instances named `<name>0 … <name>{count-1}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceSpec {
    /// Block kind (see `hwsim list`).
    pub kind: String,
    /// Parameters (merged over the kind's defaults).
    #[serde(default)]
    pub params: Value,
    /// Replicate this many times.
    pub count: Option<u32>,
}

/// A binding: `from: a.out, to: b.in` (optionally `capacity:` of a stream), or `chain: stage`
/// with `from: out, to: in` (port names) linking `stage{i}.out → stage{i+1}.in`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Connect {
    /// Driver endpoint (`inst.port`), or with `chain` the output port name.
    pub from: String,
    /// Reader endpoint, or with `chain` the input port name.
    pub to: String,
    /// Stream buffer depth override.
    pub capacity: Option<u32>,
    /// An instance array to chain.
    pub chain: Option<String>,
}

/// One stimulus row: drive `port` at cycle `at` (the value is on the wave at `at` and read by
/// the block at `at + 1`). On a stream input the value is pushed as a message at `at` (or at the
/// first cycle with space).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stimulus {
    /// Cycle.
    pub at: u64,
    /// Input endpoint `inst.port`.
    pub port: String,
    /// The value, in the port type's YAML form (`{opcode: ack, qp: 13, psn: 4094}`).
    pub value: Value,
}

/// One check.
///
/// - `{port, at, value}`: the signal's value on the wave at `at`, or a message pushed at `at`;
/// - `{port, within: [a, b], value}`: … at some cycle in [a, b];
/// - `{port, count, within?}`: number of pushes (stream) or changes (signal);
/// - `{port, sequence: [..]}`: every message pushed (or every value taken), in order;
/// - `{counter, equals | min | max}`: a counter, or the sum over a glob (`*.received`);
///   `reduce: max` / `min` combine a glob's counters by their largest / smallest instead;
/// - `{metric: end_cycle, equals | min | max}` (the cycle the run ended).
///
/// Any of them may say `pinned: PATH` (or a list): the parameters its bounds fit. A bound may
/// be `{param: PATH, times: F}` ([`Bound`]): a field's value in the run.
///
/// Values match on the fields they name (`{psn: 7}` matches any RH with PSN 7).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Label (default: derived from the check).
    pub name: Option<String>,
    /// Endpoint to watch.
    pub port: Option<String>,
    /// Cycle.
    pub at: Option<u64>,
    /// Cycle window, inclusive.
    pub within: Option<[u64; 2]>,
    /// Expected value.
    pub value: Option<Value>,
    /// Expected number of pushes / changes.
    pub count: Option<u64>,
    /// Expected sequence of values.
    pub sequence: Option<Vec<Value>>,
    /// Counter name or glob.
    pub counter: Option<String>,
    /// How a glob's counters combine: `sum` (default), `max`, `min`.
    pub reduce: Option<String>,
    /// Run metric.
    pub metric: Option<String>,
    /// Equality bound.
    #[serde(default, deserialize_with = "bound")]
    pub equals: Option<Bound>,
    /// Lower bound (inclusive).
    #[serde(default, deserialize_with = "bound")]
    pub min: Option<Bound>,
    /// Upper bound (inclusive).
    #[serde(default, deserialize_with = "bound")]
    pub max: Option<Bound>,
    /// The parameters the check was written for (`pinned: system.faults.0.probability`, or a
    /// list; `seed` for the seed): a run with a `--set` of one of them (a sweep over it), or
    /// another seed for `seed`, drops the check with a note instead of evaluating it
    /// (crate::build::check_policy).
    #[serde(default, deserialize_with = "one_or_many")]
    pub pinned: Vec<String>,
}

/// A check's bound: a number, or `{param: PATH, times: F}`, the run's value of a testbench
/// field (after `--set`; times F, default 1), resolved before the check is evaluated
/// (crate::build::check_policy::resolve).
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    /// A number.
    Num(f64),
    /// `times` × the value of the field at `path`.
    Param {
        /// Dotted path, as `--set` takes it.
        path: String,
        /// Factor.
        times: f64,
    },
}

impl Bound {
    /// The number, once resolved.
    pub fn num(&self) -> Option<f64> {
        match self {
            Bound::Num(x) => Some(*x),
            Bound::Param { .. } => None,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Num(x) => write!(f, "{}", exact(*x)),
            Bound::Param { path, times } if *times == 1.0 => write!(f, "{path}"),
            Bound::Param { path, times } => write!(f, "{} × {path}", exact(*times)),
        }
    }
}

/// A number as written, exactly (the shortest text that reads back the same), in scientific
/// notation beyond 10^16 or below 10^-4: fixed notation spells 1e-300 with 300 digits.
pub fn exact(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e16).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn bound<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Bound>, D::Error> {
    use serde::de::Error;
    let want = "a number or `{param: PATH, times: F}` (a testbench field's value in the run)";
    let v = Value::deserialize(d)?;
    match &v {
        Value::Number(n) => n
            .as_f64()
            .map(|x| Some(Bound::Num(x)))
            .ok_or_else(|| D::Error::custom(want)),
        Value::Mapping(m) => {
            let mut path = None;
            let mut times = 1.0;
            for (k, x) in m {
                match (k.as_str(), x) {
                    (Some("param"), Value::String(p)) if !p.is_empty() => path = Some(p.clone()),
                    (Some("times"), Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {
                        times = n.as_f64().unwrap_or(1.0)
                    }
                    _ => return Err(D::Error::custom(format!("expected {want}"))),
                }
            }
            path.map(|path| Some(Bound::Param { path, times }))
                .ok_or_else(|| D::Error::custom(format!("expected {want}: `param` is missing")))
        }
        _ => Err(D::Error::custom(format!("expected {want}"))),
    }
}

/// A string or a list of strings, as a list.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a parameter path (`instances.snk.params.interval`) or a list of them")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(vec![v.to_string()])
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(x) = seq.next_element::<String>()? {
                out.push(x);
            }
            Ok(out)
        }
    }
    d.deserialize_any(V)
}

/// System form: chips, switches and links; traffic; faults.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct System {
    /// Chip parameters (from configs/sg2262.yaml and overrides).
    #[serde(default)]
    pub chip: Value,
    /// Switch parameters.
    #[serde(default)]
    pub switch: Value,
    /// Edge (PhyLink) parameters.
    #[serde(default)]
    pub link: Value,
    /// The topology.
    pub topology: Topology,
    /// Traffic.
    #[serde(default)]
    pub traffic: Vec<Flow>,
    /// Fault injections.
    #[serde(default)]
    pub faults: Vec<Fault>,
}

/// Topology: a preset or an explicit link list.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// `p2p`, `mesh`, `ring`, `torus`, `star` (chips around one switch), `leaf_spine`, or `custom`.
    pub kind: String,
    /// Number of chips.
    pub chips: u32,
    /// Number of switches.
    #[serde(default)]
    pub switches: u32,
    /// Explicit links `[a, b]` by node name (`chip0`, `sw0`), for `custom`.
    #[serde(default)]
    pub links: Vec<[String; 2]>,
    /// Torus / ring dimensions.
    #[serde(default)]
    pub dims: Vec<u32>,
    /// `leaf_spine`: leaf switches (the chips spread evenly over them, in order).
    #[serde(default)]
    pub leaves: u32,
    /// `leaf_spine`: spine switches (every leaf linked to every spine).
    #[serde(default)]
    pub spines: u32,
}

/// A traffic source: one flow or a pattern.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// `flow` (src → dst), `all_to_all`, `incast` (srcs → dst), `permutation`, `multicast`
    /// (each src → its `group`).
    #[serde(default = "flow_kind")]
    pub pattern: String,
    /// Source chip(s).
    #[serde(default)]
    pub src: Vec<u32>,
    /// Destination chip.
    pub dst: Option<u32>,
    /// Bytes per transaction (left out with `op: zero_byte`).
    #[serde(default)]
    pub bytes: u64,
    /// Transactions per source.
    #[serde(default = "one")]
    pub transactions: u64,
    /// Start cycle.
    #[serde(default)]
    pub start: u64,
    /// CDMA engine id (→ QP id).
    #[serde(default)]
    pub cdma: u16,
    /// Engines per source: `engines: N` makes N flows, CDMA ids `cdma .. cdma + N`, all alike.
    #[serde(default = "one_u16")]
    pub engines: u16,
    /// Injection bandwidth, bytes/ns (default: unlimited).
    pub bandwidth: Option<f64>,
    /// AXI operation: `write` (default), `read`, `mixed` (reads and writes in the ratio
    /// `read_ratio`, interleaved deterministically), or `zero_byte` (seed 000's zero-byte
    /// packet, tcredit: a write of no payload on the flow's QP, one packet per transaction).
    #[serde(default = "write_op")]
    pub op: String,
    /// With `op: mixed`: the share of transactions that are reads, 0..=1 (default 0.5).
    pub read_ratio: Option<f64>,
    /// With `pattern: multicast`: the member chips of the group each source writes to (TYPE2:
    /// one copy to every member, replicated by the switches or the chips' MACs on the way).
    #[serde(default)]
    pub group: Vec<u32>,
}

fn write_op() -> String {
    "write".into()
}

impl Flow {
    /// Whether transaction `i` of this flow (per source and engine) is a read: every one for
    /// `read`, none for `write`; for `mixed` the i-th of a Bresenham-like sequence, so that any
    /// prefix holds ⌊(i + 1)·ratio⌋ reads (the ratio exact, no random draw).
    pub fn is_read(&self, i: u64) -> bool {
        match self.op.as_str() {
            "read" => true,
            "mixed" => {
                let r = self.read_ratio.unwrap_or(0.5);
                ((i + 1) as f64 * r).floor() > (i as f64 * r).floor()
            }
            _ => false,
        }
    }
}

fn one_u16() -> u16 {
    1
}

fn flow_kind() -> String {
    "flow".into()
}

/// One fault injection.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// `drop`, `corrupt`, `flap`.
    pub kind: String,
    /// Link `[a, b]` (direction a → b).
    pub link: [String; 2],
    /// `req` or `rsp`.
    #[serde(default = "req")]
    pub path: String,
    /// Link group.
    pub lg: Option<u32>,
    /// PSN to hit (12-bit, checked when read).
    pub psn: Option<hwsim_ports::Psn>,
    /// QP to hit (10-bit, checked when read).
    pub qp: Option<hwsim_ports::QpId>,
    /// Times to hit the PSN.
    #[serde(default = "one")]
    pub times: u64,
    /// Probability per packet.
    pub probability: Option<f64>,
    /// What to hit: `data`, `ack`, `nak`, `cnp`, `credit`.
    #[serde(default = "data")]
    pub what: String,
    /// Window start (flap).
    pub from: Option<u64>,
    /// Window end (flap, exclusive).
    pub to: Option<u64>,
}

fn req() -> String {
    "req".into()
}
fn data() -> String {
    "data".into()
}
