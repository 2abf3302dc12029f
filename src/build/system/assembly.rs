//! Chip and switch assembly: instances of the registered block kinds with their merged
//! parameters.

use hwsim_hw::Netlist;

use crate::build::registry::{self, BlockKind};
use crate::build::testbench::{elab_error, Loaded};
use crate::input::yaml::{self, InputError, Value};

pub(super) fn make(
    blocks: &[BlockKind],
    l: &Loaded,
    nl: &mut Netlist,
    path: &str,
    kind: &str,
    params: &Value,
) -> Result<(), InputError> {
    let k = registry::find(blocks, kind)
        .ok_or_else(|| InputError::new(&l.path, format!("internal: no block kind {kind}")))?;
    let merged = yaml::merge(&k.defaults, params);
    let (ports, body) = k
        .make(&merged)
        .map_err(|m| l.error_at_param("system", format!("`{path}` ({kind}): {m}")))?;
    l.record_params(path, k, &merged)
        .map_err(|m| l.error_at_param("system", format!("`{path}` ({kind}): {m}")))?;
    registry::add_instance(nl, path, kind, ports, body).map_err(|e| elab_error(l, e))?;
    Ok(())
}
