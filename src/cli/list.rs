//! `hwsim list [PATTERN]`: the block kinds with their ports and defaults.

use std::process::ExitCode;

use hwsim::{registry, values, yaml};

use super::io::{bad, emit_then};

/// Whether a kind is listed for `pattern`: a glob over its name, or a plain word found in its
/// name or description.
fn listed(b: &registry::BlockKind, pattern: Option<&str>) -> bool {
    match pattern {
        None => true,
        Some(p) if p.contains(['*', '?']) => hwsim_hw::glob_match(p, b.name),
        Some(p) => b.name.contains(p) || b.doc.to_lowercase().contains(&p.to_lowercase()),
    }
}

/// The `list` text: every kind, or those `pattern` selects (none selected is an error naming
/// the kinds).
fn text(pattern: Option<&str>) -> Result<String, String> {
    use std::fmt::Write as _;
    let mut s = String::new();
    let vals = values::registry();
    let blocks = registry::blocks();
    if !blocks.iter().any(|b| listed(b, pattern)) {
        let names: Vec<&str> = blocks.iter().map(|b| b.name).collect();
        return Err(format!(
            "list: no block kind matches `{}` (kinds: {})",
            pattern.unwrap_or(""),
            names.join(", ")
        ));
    }
    for b in blocks.iter().filter(|b| listed(b, pattern)) {
        let _ = writeln!(s, "{} — {}", b.name, b.doc);
        let _ = writeln!(s, "  ports:");
        for p in &b.default_ports {
            let dir = match p.dir {
                hwsim_hw::Dir::In => "in ",
                hwsim_hw::Dir::Out => "out",
            };
            let drivable = if vals.contains_key(&p.type_id) {
                ""
            } else {
                " (not drivable from YAML)"
            };
            let _ = writeln!(
                s,
                "    {dir} {:<12} {}  {}{drivable}",
                p.name,
                hwsim::explain::hw_describe(p),
                p.doc
            );
        }
        let d = yaml::dump(&b.defaults);
        if d.trim() == "{}" {
            let _ = writeln!(s, "  params: none");
        } else {
            let _ = writeln!(s, "  params (defaults):");
            for line in d.lines() {
                let _ = writeln!(s, "    {line}");
            }
        }
        let _ = writeln!(s);
    }
    Ok(s)
}

/// `hwsim list`.
pub(crate) fn main(pattern: Option<&str>) -> ExitCode {
    match text(pattern) {
        Ok(t) => emit_then(&t, ExitCode::SUCCESS),
        Err(e) => bad(e),
    }
}
