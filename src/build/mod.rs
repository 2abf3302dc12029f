//! The build layer: from a read testbench to a netlist. The registry of block kinds and the
//! value types their ports carry, the module form (`testbench`) and the system form (`system`:
//! topology, routes, traffic, chips, switches, links, faults), the memory budget, the checks'
//! policy, the system monitors and the verdict types. It uses `input/`, never `run/` or
//! `report/`.

pub mod budget;
pub mod check_policy;
pub mod monitors;
pub mod registry;
pub mod system;
pub mod testbench;
pub mod values;
pub mod verdict;

use crate::build::testbench::Loaded;
use crate::input::yaml::InputError;
use hwsim_hw::Netlist;

/// The two forms of a testbench (docs/testbenches.md): blocks wired by hand (`instances:`),
/// or chips, switches and traffic (`system:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `instances:`, `connect:`, `stimulus:`.
    Module,
    /// `system:`.
    System,
}

/// The form of a loaded testbench, decided here once for every command that builds one: a
/// testbench with both forms, or neither, is refused, and so is a system-only key in module
/// form.
pub fn form(l: &Loaded) -> Result<Form, InputError> {
    if l.tb.system.is_some() {
        if !l.tb.instances.is_empty() || !l.tb.stimulus.is_empty() || !l.tb.connect.is_empty() {
            return Err(l.error_at(
                "system",
                "a testbench is either module form (instances) or system form (system), not both",
            ));
        }
        return Ok(Form::System);
    }
    if l.tb.instances.is_empty() {
        return Err(InputError::new(
            &l.path,
            "no `instances:` (module form) and no `system:` (system form)",
        ));
    }
    if l.tb.metrics_from.is_some() {
        return Err(l.error_at(
            "metrics_from",
            "metrics_from is for system form (its flows); in module form set a paxi's own `metrics_from` parameter, or a voq_switch's `warmup`",
        ));
    }
    Ok(Form::Module)
}

/// The netlist either form declares, not yet handed to the kernel (`hwsim netlist` draws it,
/// `hwsim vectors` names its nodes' ports).
pub fn netlist(l: &Loaded, seed: u64) -> Result<Netlist, InputError> {
    Ok(match form(l)? {
        Form::System => system::elaborate(l, seed)?.0,
        Form::Module => testbench::elaborate(l)?.netlist,
    })
}
