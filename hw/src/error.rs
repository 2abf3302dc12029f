//! Kernel errors: what failed and where (instance and port at elaboration; cycle and path at run
//! time). Never a panic for a user's mistake.

use crate::Cycle;

/// An elaboration error: the netlist cannot be built as described.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ElabError {
    /// Two instances with one path.
    #[error("instance `{path}` is defined twice")]
    DuplicateInstance {
        /// The path.
        path: String,
    },
    /// A path with an empty segment or whitespace.
    #[error("bad instance name `{name}`: use dot-separated names of letters, digits, `_` and `-`")]
    BadName {
        /// The name.
        name: String,
    },
    /// `inst.port` expected.
    #[error("bad endpoint `{endpoint}`: expected `instance.port`")]
    BadEndpoint {
        /// What was given.
        endpoint: String,
    },
    /// No such instance.
    #[error("unknown instance `{instance}` (in endpoint `{instance}.{port}`)")]
    UnknownInstance {
        /// Instance path.
        instance: String,
        /// Port named with it.
        port: String,
    },
    /// No such block kind.
    #[error("instance `{instance}`: unknown block kind `{kind}` (known: {known})")]
    UnknownKind {
        /// Instance path.
        instance: String,
        /// The kind asked for.
        kind: String,
        /// Known kinds.
        known: String,
    },
    /// No such port on the instance's kind.
    #[error("instance `{instance}` ({kind}) has no port `{port}` (ports: {available})")]
    UnknownPort {
        /// Instance path.
        instance: String,
        /// Its kind.
        kind: String,
        /// The port asked for.
        port: String,
        /// Its ports.
        available: String,
    },
    /// A binding from an input or into an output.
    #[error("`{endpoint}` must be {expected}")]
    WrongDirection {
        /// The endpoint.
        endpoint: String,
        /// What it must be.
        expected: &'static str,
    },
    /// Driver and reader disagree on the value type or shape.
    #[error("type mismatch: `{from}` is {from_type} but `{to}` is {to_type}")]
    TypeMismatch {
        /// Driver endpoint.
        from: String,
        /// Its type.
        from_type: String,
        /// Reader endpoint.
        to: String,
        /// Its type.
        to_type: String,
    },
    /// Two drivers on one input.
    #[error("input `{input}` has two drivers: `{first}` and `{second}`")]
    DoubleDriver {
        /// The input.
        input: String,
        /// First driver.
        first: String,
        /// Second driver.
        second: String,
    },
    /// A combinational port bound to a registered one.
    #[error("timing mismatch: `{from}` is {from_type} but `{to}` is {to_type} (a combinational output drives only combinational inputs, a registered one only registered inputs)")]
    TimingMismatch {
        /// Driver endpoint.
        from: String,
        /// Its kind.
        from_type: String,
        /// Reader endpoint.
        to: String,
        /// Its kind.
        to_type: String,
    },
    /// A ring of combinational bindings: no order of the instances lets every driver tick before
    /// its readers.
    #[error("combinational loop through {n} instance(s): {ring} (each output is read in the cycle it is written by the next instance, around a ring; make one of these bindings registered)", n = hops.len(), ring = hops.iter().map(|(o, i)| format!("{o} → {i}")).collect::<Vec<_>>().join(", "))]
    CombLoop {
        /// The bindings on the loop in order: (driver endpoint, reader endpoint); each reader's
        /// instance drives the next binding, and the last reader is the first driver's instance.
        hops: Vec<(String, String)>,
    },
    /// A stream with two consumers.
    #[error("stream `{output}` has two consumers: `{first}` and `{second}` (a stream is point to point)")]
    StreamFanout {
        /// The stream output.
        output: String,
        /// First consumer.
        first: String,
        /// Second consumer.
        second: String,
    },
    /// An input that nothing drives.
    #[error("input `{instance}.{port}` ({kind}, {type_name}) is not bound")]
    UnboundInput {
        /// Instance path.
        instance: String,
        /// Its kind.
        kind: String,
        /// The port.
        port: String,
        /// Its type.
        type_name: String,
    },
    /// A stream output with no consumer would stall its producer forever.
    #[error("stream output `{instance}.{port}` ({kind}) is not connected to a consumer")]
    UnboundStreamOutput {
        /// Instance path.
        instance: String,
        /// Its kind.
        kind: String,
        /// The port.
        port: String,
    },
    /// The block refused its parameters or ports.
    #[error("instance `{instance}`: {message}")]
    Build {
        /// Instance path.
        instance: String,
        /// What the block said.
        message: String,
    },
}

/// A run-time error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A protocol violation (full stream pushed, credit underflow, …).
    #[error("protocol violation at cycle {cycle} in `{path}`: {what}")]
    Protocol {
        /// The cycle.
        cycle: Cycle,
        /// Component or net path.
        path: String,
        /// What happened.
        what: String,
    },
    /// Writing the trace failed.
    #[error("trace output: {0}")]
    Io(#[from] std::io::Error),
}
