//! What every composite made by splitting a fused block does the same way: it refuses bad
//! parameters under its own name (as the one block did), adds the part that stays fused as its
//! `core` child counting in the composite's scope (so every counter keeps its name) and, when
//! the old block drew random numbers, drawing the old block's stream (so every draw stays the
//! same), and exports the core's ports that are not wired to the new sibling nodes under the
//! same names.

use hwsim_hw::{Binder, BuildResult, ElabError, Netlist, PortDecl};

/// The part of a split block that stays fused, added as `path.core`.
pub struct Core<P: Clone + 'static> {
    /// Its block kind (`l2_switch_core`).
    pub kind: &'static str,
    /// Its ports.
    pub ports: Vec<PortDecl>,
    /// Its build function.
    pub build: fn(&P, &mut Binder) -> BuildResult,
    /// Its parameters.
    pub params: P,
    /// Whether it draws the old block's random stream.
    pub draws: bool,
}

/// `check`'s refusal, as an elaboration error naming the composite at `path`.
pub fn refuse_at(path: &str, check: Result<(), String>) -> Result<(), ElabError> {
    check.map_err(|message| ElabError::Build {
        instance: path.to_string(),
        message,
    })
}

/// Adds `core` at `path.core` and exports each of its ports for which `inner` is false as the
/// composite's port of the same name.
pub fn add_core<P: Clone + 'static>(
    nl: &mut Netlist,
    path: &str,
    core: Core<P>,
    inner: impl Fn(&str) -> bool,
) -> Result<(), ElabError> {
    let names: Vec<String> = core
        .ports
        .iter()
        .filter(|d| !inner(&d.name))
        .map(|d| d.name.clone())
        .collect();
    let (scope, p, build, draws) = (path.to_string(), core.params, core.build, core.draws);
    nl.add(
        &hwsim_hw::dotted(path, "core"),
        core.kind,
        core.ports,
        Box::new(move |b| {
            b.counters_in(&scope);
            if draws {
                b.rng_of(&scope);
            }
            build(&p, b)
        }),
    )?;
    for n in names {
        nl.export(&hwsim_hw::dotted(path, &n), &hwsim_hw::joined(&[path, ".core.", &n]))?;
    }
    Ok(())
}

/// Adds a new sibling node at `path.name` of `kind`, counting in the composite's scope (so its
/// counters keep the names they had when its part was inside the fused block).
pub fn add_counting_in_scope<P: 'static>(
    nl: &mut Netlist,
    path: &str,
    name: &str,
    kind: &'static str,
    ports: Vec<PortDecl>,
    params: P,
    build: fn(&P, &mut Binder) -> BuildResult,
) -> Result<(), ElabError> {
    let scope = path.to_string();
    nl.add(
        &hwsim_hw::dotted(path, name),
        kind,
        ports,
        Box::new(move |b| {
            b.counters_in(&scope);
            build(&params, b)
        }),
    )
    .map(|_| ())
}
