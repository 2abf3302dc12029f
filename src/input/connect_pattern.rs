//! A testbench's `connect:` by pattern (`{from: src.out*, to: sw.in*}`): the bindings it stands
//! for, read off the instances' declared ports.

use std::collections::BTreeSet;

use hwsim_hw::Netlist;

use crate::input::yaml::InputError;

/// A `connect:` by pattern, `{from: src.out*, to: sw.in*}`: one `*` in each side's port name
/// stands for a port index (decimal digits), and every port of the driver that matches is bound
/// to the reader's port of the same index, so the connection follows the instances' port counts
/// (`--set instances.sw.params.ports=8`). Both sides must have the same indices (the counts named
/// otherwise).
/// `at(needle, message)` makes the error at the place of `needle` in the testbench.
pub fn expand(
    at: &dyn Fn(&str, String) -> InputError,
    nl: &Netlist,
    from: &str,
    to: &str,
) -> Result<Vec<(String, String)>, InputError> {
    let split = |ep: &str| -> Result<(String, String, String), InputError> {
        let bad = || {
            at(
                ep,
                format!("connect `{ep}`: a pattern is `instance.port*` with one `*` in the port name, on both sides (`{{from: src.out*, to: sw.in*}}`)"),
            )
        };
        let (inst, port) = ep.rsplit_once('.').ok_or_else(bad)?;
        let (pre, post) = port.split_once('*').ok_or_else(bad)?;
        if post.contains('*') || inst.contains('*') {
            return Err(bad());
        }
        Ok((inst.to_string(), pre.to_string(), post.to_string()))
    };
    let indices = |(inst, pre, post): &(String, String, String), ep: &str| -> Result<BTreeSet<u32>, InputError> {
        let ports = nl
            .ports_of(inst)
            .ok_or_else(|| at(ep, format!("connect `{ep}`: no instance `{inst}`")))?;
        let set: BTreeSet<u32> = ports
            .iter()
            .filter_map(|d| d.name.strip_prefix(pre.as_str())?.strip_suffix(post.as_str()))
            .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) && (k.len() == 1 || !k.starts_with('0')))
            .filter_map(|k| k.parse().ok())
            .collect();
        if set.is_empty() {
            return Err(at(ep, format!("connect `{ep}`: no port of `{inst}` matches")));
        }
        Ok(set)
    };
    let (a, b) = (split(from)?, split(to)?);
    let (ia, ib) = (indices(&a, from)?, indices(&b, to)?);
    if ia != ib {
        let range = |s: &BTreeSet<u32>| match (s.first(), s.last()) {
            (Some(x), Some(y)) => format!("{} ports, {x}..={y}", s.len()),
            _ => "none".to_string(),
        };
        return Err(at(
            from,
            format!(
                "connect `{from}` → `{to}`: the two sides' ports differ ({} on `{}`, {} on `{}`): give both instances the same port count",
                range(&ia),
                a.0,
                range(&ib),
                b.0
            ),
        ));
    }
    Ok(ia
        .iter()
        .map(|k| {
            (
                format!("{}.{}{k}{}", a.0, a.1, a.2),
                format!("{}.{}{k}{}", b.0, b.1, b.2),
            )
        })
        .collect())
}
