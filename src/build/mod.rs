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
