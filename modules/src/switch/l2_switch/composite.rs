//! The composite `l2_switch` (seed 003): its ports, and its children — the core
//! (`l2_switch_core`, the block of this folder) and, with `fabric: voq`, the crossbar
//! allocator ([`alloc`](super::alloc), `switch_alloc`) — wired combinationally both ways
//! around the core's second process. The composite owns no logic; see the parent module's
//! header.

use hwsim_hw::{ElabError, Netlist, PortDecl};

use super::{alloc, build, check, core_ports, Fabric, Params};
use crate::split;

/// The allocator node's parameters, from the switch's.
fn alloc_params(p: &Params) -> alloc::Params {
    alloc::Params {
        ports: p.ports,
        allocator: p.allocator,
        iterations: p.iterations,
    }
}

/// Whether a core port is wired to the allocator node inside the composite (not exported).
fn alloc_side(name: &str) -> bool {
    name.starts_with("alloc_")
}

/// Port list of `l2_switch` (the composite): the core's outer ports, and with `voq` the
/// allocator's pointer waves (`gptr{k}`, `aptr{k}`), each the port of the node it stands for.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v: Vec<PortDecl> = core_ports(p)
        .into_iter()
        .filter(|d| !alloc_side(&d.name))
        .map(|d| d.process(0))
        .collect();
    if p.fabric == Fabric::Voq {
        v.extend(
            alloc::ports(&alloc_params(p))
                .into_iter()
                .filter(|d| d.name.starts_with("gptr") || d.name.starts_with("aptr")),
        );
    }
    v
}

/// Creates the composite's children at `path`: the core (`path.core`, kind `l2_switch_core`,
/// counting in the composite's scope and drawing its random stream, so reports and ECN marks
/// are the fused switch's) and with `voq` the allocator (`path.alloc`), wired combinationally
/// both ways around the core's second process; exports the composite's ports.
pub fn expand(p: &Params, path: &str, nl: &mut Netlist) -> Result<(), ElabError> {
    split::refuse_at(path, check::check(p))?;
    let node = |n: &str| format!("{path}.{n}");
    let core = split::Core {
        kind: "l2_switch_core",
        ports: core_ports(p),
        build,
        params: p.clone(),
        // ECN RED's seed: the switch's stream.
        draws: true,
    };
    split::add_core(nl, path, core, alloc_side)?;
    if p.fabric == Fabric::Voq {
        let ap = alloc_params(p);
        nl.add(
            &node("alloc"),
            "switch_alloc",
            alloc::ports(&ap),
            Box::new(move |b| alloc::build(&ap, b)),
        )?;
        for k in 0..p.ports.min(64) {
            nl.connect(
                &node(&format!("core.alloc_req{k}")),
                &node(&format!("alloc.req{k}")),
                None,
            )?;
            nl.connect(
                &node(&format!("alloc.grant{k}")),
                &node(&format!("core.alloc_grant{k}")),
                None,
            )?;
            for w in ["gptr", "aptr"] {
                nl.export(&node(&format!("{w}{k}")), &node(&format!("alloc.{w}{k}")))?;
            }
        }
        nl.connect(&node("core.alloc_outputs"), &node("alloc.outputs"), None)?;
    }
    Ok(())
}
