//! The composite `l2_switch` (seed 003): its ports, and its children — the ingress
//! ([`ingress`](super::ingress), `switch_ingress`: lookup and classification) feeding the core
//! (`l2_switch_core`, the block of this folder) combinationally and, with `fabric: voq`, the
//! crossbar allocator ([`alloc`](super::alloc), `switch_alloc`) wired combinationally both ways
//! around the core's second process. The composite owns no logic; see the parent module's
//! header.

use hwsim_hw::{ElabError, Netlist, PortDecl};

use super::{alloc, build, check, core_ports, ingress, Fabric, Params};
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
/// allocator's requests and grants, the ingress's decisions.
fn inner(name: &str) -> bool {
    name.starts_with("alloc_") || name.starts_with("fwd")
}

/// Port list of `l2_switch` (the composite): per port the ingress's inputs, then the core's
/// outer ports, and with `voq` the allocator's pointer waves (`gptr{k}`, `aptr{k}`), each the
/// port of the node it stands for.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v: Vec<PortDecl> = Vec::new();
    for d in core_ports(p).into_iter().filter(|d| !inner(&d.name)) {
        // Each port's inputs ahead of its outputs, as the switch lists them.
        if let Some(k) = d.name.strip_prefix('e').and_then(|s| s.strip_suffix("_req_out")) {
            v.extend(ingress::input_ports(k.parse().expect("e{k}_req_out")));
        }
        v.push(d.process(0));
    }
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
    let scope = path.to_string();
    nl.add(
        &node("ingress"),
        "switch_ingress",
        ingress::ports(&ip),
        Box::new(move |b| {
            b.counters_in(&scope);
            ingress::build(&ip, b)
        }),
    )?;
    for k in 0..p.ports.min(64) {
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
