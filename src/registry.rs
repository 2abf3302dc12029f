//! The registry of block kinds: name, one-line doc, parameter defaults, ports, and how to build
//! an instance from YAML parameters. `hwsim list` prints it.

use std::any::TypeId;
use std::collections::HashMap;

use hwsim_hw::{Binder, BuildFn, BuildResult, PortDecl};
use hwsim_modules::kernel_examples as kx;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::values::ValueOps;
use crate::yaml::{self, Value};

type Make = Box<dyn Fn(&Value) -> Result<(Vec<PortDecl>, BuildFn), String>>;

/// One block kind.
pub struct BlockKind {
    /// Name used in `kind:`.
    pub name: &'static str,
    /// What it models.
    pub doc: &'static str,
    /// Parameter defaults.
    pub defaults: Value,
    /// Ports with the default parameters.
    pub default_ports: Vec<PortDecl>,
    make: Make,
}

impl BlockKind {
    /// Ports and builder for parameters `params` (merged over the defaults by the caller).
    pub fn make(&self, params: &Value) -> Result<(Vec<PortDecl>, BuildFn), String> {
        (self.make)(params)
    }
}

fn kind<P>(
    name: &'static str,
    doc: &'static str,
    ports: fn(&P) -> Vec<PortDecl>,
    build: fn(&P, &mut Binder) -> BuildResult,
) -> BlockKind
where
    P: Serialize + DeserializeOwned + Default + Clone + 'static,
{
    let defaults = yaml::to_value(&P::default());
    let default_ports = ports(&P::default());
    BlockKind {
        name,
        doc,
        defaults,
        default_ports,
        make: Box::new(move |v: &Value| {
            let p: P = if v.is_null() {
                P::default()
            } else {
                yaml::from_value(v.clone())?
            };
            let decls = ports(&p);
            let b: BuildFn = Box::new(move |binder: &mut Binder| build(&p, binder));
            Ok((decls, b))
        }),
    }
}

/// All block kinds, by name.
pub fn blocks() -> Vec<BlockKind> {
    vec![
        kind(
            "counter",
            "free-running counter (kernel example; W3 source)",
            kx::counter::ports,
            kx::counter::build,
        ),
        kind(
            "add1",
            "register out = in + 1, latency 1 (kernel example; W3 stage)",
            kx::add1::ports,
            kx::add1::build,
        ),
        kind(
            "producer",
            "stream source with back-pressure (kernel example)",
            kx::producer::ports,
            kx::producer::build,
        ),
        kind(
            "fifo",
            "synchronous FIFO between two streams (kernel example)",
            kx::fifo::ports,
            kx::fifo::build,
        ),
        kind(
            "consumer",
            "stream sink with a service interval (kernel example)",
            kx::consumer::ports,
            kx::consumer::build,
        ),
        kind(
            "timer",
            "periodic toggle (kernel example; idle benchmark)",
            kx::timer::ports,
            kx::timer::build,
        ),
    ]
}

/// Looks up a kind.
pub fn find<'a>(blocks: &'a [BlockKind], name: &str) -> Option<&'a BlockKind> {
    blocks.iter().find(|b| b.name == name)
}

/// Value types from hwsim-ports that testbenches can drive and check.
pub fn register_port_values(_m: &mut HashMap<TypeId, ValueOps>) {}
