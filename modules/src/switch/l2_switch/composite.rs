//! The composite `l2_switch` (seed 003): its ports, and its children — the ingress
//! ([`ingress`](super::ingress), `switch_ingress`: lookup and classification) feeding the core
//! (`l2_switch_core`, the block of this folder) combinationally and, with `fabric: voq`, the
//! crossbar allocator ([`alloc`](super::alloc), `switch_alloc`) wired combinationally both ways
//! around the core's second process, and the PFC controller ([`pfc`](super::pfc),
//! `switch_pfc`: its pause into the core's first process, the core's ingress bytes into its
//! second). The composite owns no logic; see the parent module's
//! header.

use hwsim_hw::{ElabError, Netlist, PortDecl};

use super::{alloc, build, check, core_port, core_ports, core_shared, ingress, pfc, Fabric, Params};
use crate::split;

/// The allocator node's parameters, from the switch's.
fn alloc_params(p: &Params) -> alloc::Params {
    alloc::Params {
        ports: p.ports,
        allocator: p.allocator,
        iterations: p.iterations,
    }
}

/// Whether a core port is wired to a sibling node inside the composite (not exported): the
/// allocator's requests and grants, the ingress's decisions, the PFC node's pause and the
/// ingress bytes it reads.
fn inner(name: &str) -> bool {
    ["alloc_", "fwd", "paused", "ingress_bytes"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Port list of `l2_switch` (the composite): per port the ingress's inputs, the core's outer
/// ports and with `pfc` the PFC node's; then the core's shared ones and with `voq` the
/// allocator's pointer waves (`gptr{k}`, `aptr{k}`), each the port of the node it stands for.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let outer = |v: Vec<PortDecl>| v.into_iter().filter(|d| !inner(&d.name)).map(|d| d.process(0));
    let mut v: Vec<PortDecl> = Vec::new();
    for k in 0..p.ports.min(64) {
        v.extend(ingress::input_ports(k));
        v.extend(outer(core_port(p, k)));
        if p.pfc {
            v.extend(outer(pfc::outer_ports(k)));
        }
    }
    v.extend(outer(core_shared(p)));
    if p.fabric == Fabric::Voq {
        v.extend(
            alloc::ports(&alloc_params(p))
                .into_iter()
                .filter(|d| d.name.starts_with("gptr") || d.name.starts_with("aptr")),
        );
    }
    v
}

/// Creates the composite's children at `path`: the ingress (`path.ingress`, counting in the
/// composite's scope), the core (`path.core`, kind `l2_switch_core`, counting in the
/// composite's scope and drawing its random stream, so reports and ECN marks are the fused
/// switch's) and with `voq` the allocator (`path.alloc`), wired combinationally both ways
/// around the core's second process; exports the composite's ports.
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
    split::add_core(nl, path, core, inner)?;
    let ip = ingress::Params::of(p);
    let ports = ingress::ports(&ip);
    split::add_counting_in_scope(nl, path, "ingress", "switch_ingress", ports, ip, ingress::build)?;
    let pp = pfc::Params::of(p);
    let ports = pfc::ports(&pp);
    split::add_counting_in_scope(nl, path, "pfc", "switch_pfc", ports, pp, pfc::build)?;
    for k in 0..p.ports.min(64) {
        if p.pfc {
            for d in pfc::outer_ports(k) {
                nl.export(&node(&d.name), &node(&format!("pfc.{}", d.name)))?;
            }
            nl.connect(
                &node(&format!("pfc.paused{k}")),
                &node(&format!("core.paused{k}")),
                None,
            )?;
            for &q in &p.pfc_priorities {
                let held = pfc::held_name(k, q);
                nl.connect(&node(&format!("core.{held}")), &node(&format!("pfc.{held}")), None)?;
            }
        }
        for d in ingress::input_ports(k) {
            nl.export(&node(&d.name), &node(&format!("ingress.{}", d.name)))?;
        }
        for d in ingress::fwd_inputs(k) {
            nl.connect(
                &node(&format!("ingress.{}", d.name)),
                &node(&format!("core.{}", d.name)),
                None,
            )?;
        }
    }
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
