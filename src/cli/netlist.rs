//! `hwsim netlist TB --dot FILE`: the netlist of either form as a Graphviz file.

use std::path::Path;
use std::process::ExitCode;

use hwsim::{output, yaml};

use super::io::{bad, emit_then, load};

/// `hwsim netlist`: the netlist as a Graphviz file, whole or one scope, to a depth.
pub(crate) fn main(
    testbench: &Path,
    dot: &Path,
    depth: Option<usize>,
    scope: Option<String>,
    max_memory: u64,
) -> ExitCode {
    let l = match load(testbench, max_memory, &[]) {
        Ok(l) => l,
        Err(e) => return e,
    };
    if let Err(e) = output::check_outputs(&l.files, &[("--dot", dot)]) {
        return bad(e);
    }
    // Either form, decided where every command decides it: a system testbench draws its
    // whole topology.
    let netlist = match hwsim::build::netlist(&l, l.tb.seed) {
        Ok(nl) => nl,
        Err(e) => return bad(e),
    };
    if let Some(sc) = &scope {
        let known = netlist.has_instance(sc)
            || netlist.is_composite(sc)
            || netlist.instance_paths().any(|p| p.starts_with(&format!("{sc}.")));
        if !known {
            return bad(yaml::InputError::new(
                testbench,
                format!("--scope {sc}: no instance or composite at or under that path"),
            ));
        }
    }
    let opts = hwsim_hw::DotOptions { depth, scope };
    if let Err(e) = output::write_file(dot, netlist.to_dot_with(&opts).as_bytes()) {
        return bad(e);
    }
    emit_then(
        &format!("wrote {} ({} instances)\n", dot.display(), netlist.instance_count()),
        ExitCode::SUCCESS,
    )
}
