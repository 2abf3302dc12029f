//! Traffic expansion: the testbench's patterns (flow, incast, all_to_all, permutation,
//! multicast) into (source, destination, flow) pairs; a multicast source's destination is the
//! group address (`MCAST_BIT | g`) of its group, listed in `groups` as (source, members). Each
//! flow is checked field by field first ([`check_flow`]), then expanded by its pattern, one
//! function each.

use hwsim_ports::{QpId, MCAST_BIT};

use crate::build::testbench::Loaded;
use crate::input::schema::{Flow, System};
use crate::input::yaml::InputError;

/// Traffic: (source, destination, flow) pairs, and the multicast groups by id (source,
/// members).
pub(super) type Expanded<'a> = (Vec<(u16, u16, &'a Flow)>, Vec<(u16, Vec<u16>)>);

/// An error at a field of the flow being expanded.
type At<'e> = &'e dyn Fn(&str, String) -> InputError;

pub(super) fn expand_traffic<'a>(l: &Loaded, s: &'a System, n: u16, seed: u64) -> Result<Expanded<'a>, InputError> {
    let mut pairs = Vec::new();
    let mut groups: Vec<(u16, Vec<u16>)> = Vec::new();
    for (i, f) in s.traffic.iter().enumerate() {
        let at = |field: &str, msg: String| flow_error(l, i, field, msg);
        check_flow(&at, f)?;
        let check = |c: u32, what: &str| -> Result<u16, InputError> {
            if c < n as u32 {
                Ok(c as u16)
            } else {
                Err(at(what, format!("traffic: {what} chip {c} out of range 0..{n}")))
            }
        };
        match f.pattern.as_str() {
            "flow" | "incast" => to_one(&at, &check, f, &mut pairs)?,
            "all_to_all" => all_to_all(n, f, &mut pairs),
            "permutation" => permutation(n, seed, f, &mut pairs),
            "multicast" => multicast(&at, &check, f, &mut groups, &mut pairs)?,
            other => {
                return Err(at(
                    "pattern",
                    format!("unknown traffic pattern `{other}` (flow, incast, all_to_all, permutation, multicast)"),
                ));
            }
        }
    }
    if pairs.is_empty() {
        // `traffic` may appear only in a comment: then the place is the `system:` line.
        let e = l.error_at("traffic", "system testbench has no traffic");
        return Err(if e.line.is_some() {
            e
        } else {
            l.error_at("system", "system testbench has no traffic")
        });
    }
    Ok((pairs, groups))
}

/// A flow's fields, each in its range and meaningful together (the pattern's own fields are
/// checked where it is expanded).
fn check_flow(at: At<'_>, f: &Flow) -> Result<(), InputError> {
    check_op(at, f)?;
    // A CDMA id becomes the QP id's 8-bit XPU_ID (QP = {XPU_ID, bank}, 10 bits): a chip has
    // CDMA ids 0..=255, and a larger one would only fail in the PAXI at run time (and 65 535
    // engines made 65 535 flows per source, minutes of elaboration for nothing).
    let max = QpId::MAX_CDMA_ID;
    if f.cdma > max {
        return Err(at(
            "cdma",
            format!(
                "traffic: cdma {} out of range 0..={max} (the QP id's 8-bit XPU_ID)",
                f.cdma
            ),
        ));
    }
    if f.cdma as u32 + f.engines as u32 > max as u32 + 1 {
        return Err(at(
            "engines",
            format!(
                "traffic: cdma {} + engines {} goes past the last CDMA id {max} (the QP id's 8-bit XPU_ID)",
                f.cdma, f.engines
            ),
        ));
    }
    // The CDMA paces in milli-bytes per ns: a smaller rate would round to 0, which means
    // unlimited, the opposite of what was asked.
    if let Some(b) = f.bandwidth.filter(|b| !(*b >= 0.001 && *b <= 1e6)) {
        return Err(at(
            "bandwidth",
            format!("traffic: bandwidth {b:?} B/ns out of range 0.001..=1000000"),
        ));
    }
    if f.pattern != "multicast" && !f.group.is_empty() {
        return Err(at(
            "group",
            "traffic: `group` applies to `pattern: multicast` only".into(),
        ));
    }
    if f.pattern == "multicast" && f.op != "write" {
        return Err(at(
            "op",
            "traffic: a multicast is a write (TYPE2 carries no reads)".into(),
        ));
    }
    check_read_ratio(at, f)?;
    if matches!(f.pattern.as_str(), "all_to_all" | "permutation") {
        // Every chip sends: a `src` or `dst` would be ignored, so it is refused.
        let p = &f.pattern;
        if !f.src.is_empty() {
            return Err(at(
                "src",
                format!("traffic: `{p}` involves every chip; `src` applies to flow, incast and multicast"),
            ));
        }
        if f.dst.is_some() {
            return Err(at(
                "dst",
                format!("traffic: `{p}` involves every chip; `dst` applies to flow and incast"),
            ));
        }
    }
    Ok(())
}

/// The op, and a flow that sends something.
fn check_op(at: At<'_>, f: &Flow) -> Result<(), InputError> {
    // The op first: a misspelt `zero_byte` (`zero-byte`) was reported as a missing `bytes`.
    if !matches!(f.op.as_str(), "write" | "read" | "mixed" | "zero_byte") {
        return Err(at(
            "op",
            format!("traffic: unknown op `{}` (write, read, mixed, zero_byte)", f.op),
        ));
    }
    // A flow of nothing would pass every check without a byte on the wire.
    // `op: zero_byte` sends seed 000's zero-byte packet (tcredit): its `bytes` is 0 by
    // definition, so the field is left out.
    let zero_byte = f.op == "zero_byte";
    if zero_byte && f.bytes != 0 {
        return Err(at(
            "bytes",
            "traffic: `op: zero_byte` sends seed 000's zero-byte packet (no payload): leave `bytes` out".into(),
        ));
    }
    let zero = [
        ("transactions", f.transactions),
        ("bytes", if zero_byte { 1 } else { f.bytes }),
        ("engines", f.engines as u64),
    ];
    if let Some((field, _)) = zero.iter().find(|(_, v)| *v == 0) {
        return Err(at(
            field,
            "traffic: `transactions`, `bytes` and `engines` must each be ≥ 1 (a flow that sends nothing tests nothing; `op: zero_byte` for zero-byte packets)".into(),
        ));
    }
    Ok(())
}

/// `read_ratio`: for `op: mixed` only, in 0..=1.
fn check_read_ratio(at: At<'_>, f: &Flow) -> Result<(), InputError> {
    match (f.op.as_str(), f.read_ratio) {
        ("write" | "read" | "zero_byte", None) | ("mixed", None) => Ok(()),
        ("mixed", Some(r)) if (0.0..=1.0).contains(&r) => Ok(()),
        ("mixed", Some(r)) => Err(at("read_ratio", format!("traffic: read_ratio {r} out of range 0..=1"))),
        ("write" | "read" | "zero_byte", Some(_)) => Err(at(
            "read_ratio",
            "traffic: read_ratio applies to `op: mixed` only".into(),
        )),
        (other, _) => Err(at(
            "op",
            format!("traffic: unknown op `{other}` (write, read, mixed, zero_byte)"),
        )),
    }
}

/// `flow` and `incast`: every `src` to the one `dst`.
fn to_one<'a>(
    at: At<'_>,
    check: &dyn Fn(u32, &str) -> Result<u16, InputError>,
    f: &'a Flow,
    pairs: &mut Vec<(u16, u16, &'a Flow)>,
) -> Result<(), InputError> {
    let d = check(
        f.dst
            .ok_or_else(|| at("pattern", "traffic: `dst` is required".into()))?,
        "dst",
    )?;
    if f.src.is_empty() {
        return Err(at("pattern", "traffic: `src` is required".into()));
    }
    for &c in &f.src {
        let c = check(c, "src")?;
        if c == d {
            return Err(at("src", format!("traffic: chip {c} sends to itself")));
        }
        pairs.push((c, d, f));
    }
    Ok(())
}

/// `all_to_all`: every chip to every other.
fn all_to_all<'a>(n: u16, f: &'a Flow, pairs: &mut Vec<(u16, u16, &'a Flow)>) {
    for a in 0..n {
        for b in 0..n {
            if a != b {
                pairs.push((a, b, f));
            }
        }
    }
}

/// `permutation`: a seeded derangement, chip i sends to perm[i] ≠ i.
fn permutation<'a>(n: u16, seed: u64, f: &'a Flow, pairs: &mut Vec<(u16, u16, &'a Flow)>) {
    let mut perm: Vec<u16> = (0..n).collect();
    let mut rng = hwsim_hw::Rng::for_path(seed, "traffic.permutation");
    loop {
        for i in (1..perm.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        if perm.iter().enumerate().all(|(i, &p)| i as u16 != p) {
            break;
        }
    }
    for (a, &b) in perm.iter().enumerate() {
        pairs.push((a as u16, b, f));
    }
}

/// `multicast`: every `src` to its group (one group id per (source, members): its tree is
/// rooted at the source).
fn multicast<'a>(
    at: At<'_>,
    check: &dyn Fn(u32, &str) -> Result<u16, InputError>,
    f: &'a Flow,
    groups: &mut Vec<(u16, Vec<u16>)>,
    pairs: &mut Vec<(u16, u16, &'a Flow)>,
) -> Result<(), InputError> {
    if f.src.is_empty() {
        return Err(at("pattern", "traffic: `src` is required".into()));
    }
    if f.dst.is_some() {
        return Err(at("dst", "traffic: a multicast names its `group`, not a `dst`".into()));
    }
    if f.group.is_empty() {
        return Err(at(
            "group",
            "traffic: a multicast needs a `group` of member chips".into(),
        ));
    }
    let mut members = Vec::with_capacity(f.group.len());
    for &m in &f.group {
        let m = check(m, "group")?;
        if members.contains(&m) {
            return Err(at("group", format!("traffic: chip {m} is in the group twice")));
        }
        members.push(m);
    }
    for &c in &f.src {
        let c = check(c, "src")?;
        if members.contains(&c) {
            return Err(at("src", format!("traffic: chip {c} multicasts to a group it is in")));
        }
        let g = match groups.iter().position(|(s, m)| *s == c && *m == members) {
            Some(g) => g,
            None => {
                groups.push((c, members.clone()));
                groups.len() - 1
            }
        };
        if g >= MCAST_BIT as usize {
            return Err(at("group", "traffic: more than 32768 multicast groups".into()));
        }
        pairs.push((c, MCAST_BIT | g as u16, f));
    }
    Ok(())
}

/// An error about `field` of the `index`-th flow of `traffic:`, at that flow's own place.
fn flow_error(l: &Loaded, index: usize, field: &str, msg: String) -> InputError {
    l.item_error("traffic", index, field, msg)
}
