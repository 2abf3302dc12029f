//! `hwsim explain BLOCK`: one block kind's documentation — its source file's `//!` header
//! (embedded at build time by build.rs), its ports, its parameters with defaults, and its counter
//! table (name, unit, meaning).

use std::fmt::Write as _;

use crate::registry;

include!(concat!(env!("OUT_DIR"), "/block_files.rs"));

/// The source file stem of a kind whose file is named otherwise.
fn file_of(kind: &str) -> &str {
    match kind {
        "mac_tx" => "mac",
        "rclink_tx" => "tx",
        "rclink_rx" => "rx",
        "rate_monitor" => "monitor",
        "cell_source" => "source",
        "switch_egress" => "egress",
        other => other,
    }
}

/// The text of `hwsim explain kind`, or an error listing the kinds.
pub fn explain(kind: &str) -> Result<String, String> {
    let blocks = registry::blocks();
    let Some(b) = registry::find(&blocks, kind) else {
        let names: Vec<&str> = blocks.iter().map(|b| b.name).collect();
        return Err(format!("unknown block kind `{kind}` ({})", names.join(", ")));
    };
    let mut s = String::new();
    let _ = writeln!(s, "{} — {}\n", b.name, b.doc);
    let file = BLOCK_FILES.iter().find(|(stem, _)| *stem == file_of(b.name));
    if let Some((_, header)) = file {
        let _ = writeln!(s, "{header}\n");
    }
    let _ = writeln!(s, "ports:");
    for p in &b.default_ports {
        let dir = match p.dir {
            hwsim_hw::Dir::In => "in ",
            hwsim_hw::Dir::Out => "out",
        };
        // The kind says when a reader sees a write: `signal<u64>` registered (next cycle),
        // `comb signal<u64>` in the same cycle, `… from state` driven before any tick.
        // A level is drawn as an analog step trace in the GTKWave save file.
        let level = if p.level { "level: " } else { "" };
        let _ = writeln!(s, "  {dir} {:<14} {}  {level}{}", p.name, p.describe(), p.doc);
    }
    let d = crate::yaml::dump(&b.defaults);
    if d.trim() == "{}" {
        let _ = writeln!(s, "params: none");
    } else {
        let _ = writeln!(s, "params (defaults):");
        for line in d.lines() {
            let _ = writeln!(s, "  {line}");
        }
    }
    let decls: Vec<_> = b.counters.iter().flat_map(|t| t.iter()).collect();
    if decls.is_empty() {
        let _ = writeln!(s, "counters: none");
    } else {
        // `*` in a name stands for what a parameter picks (a port, a VC, a flow).
        let _ = writeln!(s, "counters (name, unit, meaning):");
        let w = decls.iter().map(|d| d.name.len()).max().unwrap_or(0);
        let u = decls.iter().map(|d| d.unit.len()).max().unwrap_or(0);
        for d in decls {
            let _ = writeln!(s, "  {:<w$}  {:<u$}  {}", d.name, d.unit, d.doc);
        }
    }
    Ok(s)
}

/// The build's name for `--version`: the package version and the git commit.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("HWSIM_COMMIT"), ")");
