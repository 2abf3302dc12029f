//! `hwsim explain BLOCK`: one block kind's documentation — its source file's `//!` header
//! (embedded at build time by build.rs), its ports, its parameters with their defaults and the
//! meaning and unit their fields' `///` documentation gives (also embedded by build.rs), and its
//! counter table (name, unit, meaning).

use std::fmt::Write as _;

use crate::build::registry;

include!(concat!(env!("OUT_DIR"), "/block_files.rs"));

/// The source file of a kind (its key in [`BLOCK_FILES`]: the path under modules/src, a
/// folder named for its mod.rs) and the struct of its parameters.
fn source_of(kind: &str) -> (String, &'static str) {
    let key = match kind {
        "mac_tx" => "rclink/mac",
        "rclink_tx" => "rclink/tx",
        "rclink_rx" => "rclink/rx",
        "rate_monitor" => "rclink/monitor",
        "cell_source" => "switch/source",
        "switch_egress" => "switch/egress",
        "fifo" => "kernel_examples/fifo",
        "bank_arbiter" => "rclink/bank_arbiter_block",
        "ack_return" => "rclink/ack_cbfc",
        "dcqcn" => "rclink/dcqcn",
        // Not the TX's unit tests of the same name (rclink/tx/tests/type2.rs).
        "type2" => "rclink/type2",
        "l2_switch" | "l2_switch_core" => "switch/l2_switch",
        "switch_ingress" => "switch/l2_switch/ingress",
        "switch_pfc" => "switch/l2_switch/pfc",
        "switch_alloc" => "switch/l2_switch/alloc",
        "paxi" | "paxi_core" => "rclink/paxi",
        "paxi_rx_vc" => "rclink/paxi/rx_vc",
        "paxi_completer" => "rclink/paxi/completer",
        other => {
            // Otherwise the one file named for the kind.
            return (
                BLOCK_FILES
                    .iter()
                    .map(|(k, _)| *k)
                    .find(|k| k.rsplit('/').next() == Some(other))
                    .unwrap_or(other)
                    .to_string(),
                "Params",
            );
        }
    };
    (
        key.to_string(),
        match kind {
            "ack_return" => "ReturnParams",
            "dcqcn" => "GateParams",
            _ => "Params",
        },
    )
}

/// The `///` documentation of parameter `field` of a kind whose source is `key`: on its
/// parameter struct in that file, or in the folder's `params.rs` or `block.rs` (a standalone
/// block's own).
fn param_doc(key: &str, kind: &str, st: &str, field: &str) -> Option<&'static str> {
    if (kind, field) == ("pipe", "type") {
        // Not a field: the registry picks the pipe's message type by it.
        return Some("The message type the pipe carries: u64, psn, qp, rh, tos, vlan, tc or mac.");
    }
    let files = [
        key.to_string(),
        format!("{key}/params"),
        format!("{key}/block"),
        // The TX's slot FIFO and VC queues nodes take the TX's parameters.
        match kind {
            "slot_fifo" | "vc_queues" => "rclink/tx".into(),
            _ => String::new(),
        },
    ];
    files.iter().find_map(|f| {
        PARAM_DOCS
            .iter()
            .find(|(k, s, n, _)| k == f && *s == st && *n == field)
            .map(|d| d.3)
            .filter(|d| !d.is_empty())
    })
}

/// The documentation as a reader of the terminal wants it: rustdoc's links (`` [`x`](path) ``,
/// `` [`x`] ``) become the plain `` `x` `` they show.
fn plain(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(i) = rest.find("[`") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        // `[` then a code span then `]`: the link's text.
        let close = after[1..].find('`').map(|k| k + 2);
        match close.filter(|&k| after[k..].starts_with(']')) {
            Some(k) => {
                out.push_str(&after[..k]);
                rest = &after[k + 1..];
                // An explicit target `(path)` goes with it.
                if rest.starts_with('(') {
                    if let Some(e) = rest.find(')') {
                        rest = &rest[e + 1..];
                    }
                }
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A port's kind in a hardware engineer's words: `comb stream CreditMsg (53 bits) ×8`, a plain
/// value by its width (`signal 16 bits`, `signal real`), never the Rust type (`UInt<16>`, `f64`).
/// A stream input shows its capacity, `stream[4] 64 bits` (what `hwsim list` and `explain`
/// print).
pub fn hw_describe(p: &hwsim_hw::PortDecl) -> String {
    use hwsim_hw::TraceKind;
    let fields = p.fields();
    let bits: u32 = fields
        .iter()
        .map(|f| match f.kind {
            TraceKind::Bits(w) | TraceKind::Wide(w) => w,
            TraceKind::Real => 0,
        })
        .sum();
    let reals = fields.iter().filter(|f| f.kind == TraceKind::Real).count();
    let size = match (bits, reals) {
        (1, 0) => "1 bit".to_string(),
        (b, 0) => format!("{b} bits"),
        (0, 1) => "real".to_string(),
        (0, r) => format!("{r} reals"),
        (b, r) => format!("{b} bits + {r} real{}", if r > 1 { "s" } else { "" }),
    };
    let t = p.type_name;
    let plain_value = t.starts_with("UInt<") || ["u8", "u16", "u32", "u64", "i64", "bool", "f64"].contains(&t);
    let value = if plain_value { size } else { format!("{t} ({size})") };
    let shape = match p.shape {
        hwsim_hw::Shape::Signal => "signal".to_string(),
        hwsim_hw::Shape::Stream if p.dir == hwsim_hw::Dir::In => format!("stream[{}]", p.capacity),
        hwsim_hw::Shape::Stream => "stream".to_string(),
    };
    let timing = if p.timing == hwsim_hw::Timing::Comb {
        "comb "
    } else {
        ""
    };
    let width = if p.width > 1 {
        format!(" ×{}", p.width)
    } else {
        String::new()
    };
    let process = if p.process > 0 {
        format!(" (process {})", p.process)
    } else {
        String::new()
    };
    format!("{timing}{shape} {value}{width}{process}")
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
    let (key, st) = source_of(b.name);
    let file = BLOCK_FILES.iter().find(|(k, _)| *k == key);
    if let Some((_, header)) = file {
        let _ = writeln!(s, "{}\n", plain(header));
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
        let _ = writeln!(s, "  {dir} {:<14} {}  {level}{}", p.name, hw_describe(p), plain(p.doc));
    }
    match &b.defaults {
        crate::input::yaml::Value::Mapping(m) if !m.is_empty() => {
            // Each parameter: its default, then its meaning and unit as its field's `///` says.
            let _ = writeln!(s, "params (name: default — meaning):");
            for (k, v) in m {
                let name = k.as_str().unwrap_or_default();
                let shown = crate::input::yaml::show(v);
                let doc = plain(param_doc(&key, b.name, st, name).unwrap_or(""));
                let _ = writeln!(
                    s,
                    "  {name}: {shown}{}",
                    if doc.is_empty() {
                        String::new()
                    } else {
                        format!(" — {doc}")
                    }
                );
            }
        }
        _ => {
            let _ = writeln!(s, "params: none");
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every parameter of every kind says what it is: `hwsim explain` prints each one's meaning
    /// (and unit) from its field's `///`, so a parameter added without one fails here.
    #[test]
    fn every_parameter_of_every_kind_is_documented() {
        let mut missing = Vec::new();
        for b in registry::blocks().iter() {
            let (key, st) = source_of(b.name);
            if let crate::input::yaml::Value::Mapping(m) = &b.defaults {
                for k in m.keys() {
                    let name = k.as_str().unwrap_or_default();
                    if param_doc(&key, b.name, st, name).is_none() {
                        missing.push(format!("{}.{name}", b.name));
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "parameters without a `///` on their field: {missing:?}"
        );
    }

    #[test]
    fn explain_shows_the_header_the_parameters_and_their_meanings() {
        let t = explain("switch_ingress").unwrap();
        assert!(t.contains("The L2 switch's ingress as a node"), "{t}");
        assert!(
            t.contains("  default_priority: 2 — The priority of a frame without that field, 0..=7."),
            "{t}"
        );
        let t = explain("rclink_tx").unwrap();
        assert!(t.contains("  retry_timeout: 50000 — RETRY_TIMEOUT_NS"), "{t}");
        // The TX's nodes show their own header and the TX's parameters, which they take.
        let t = explain("vc_queues").unwrap();
        assert!(t.contains("The VC queues of one RC Link TX"), "{t}");
        assert!(t.contains("  vc_weights: [1, 1, 1, 1, 256] — "), "{t}");
        let t = explain("slot_fifo").unwrap();
        assert!(t.contains("Slot FIFO of one RC Link TX"), "{t}");
        assert!(t.contains("  retry_timeout: 50000 — RETRY_TIMEOUT_NS"), "{t}");
    }

    /// What `explain` prints reads as documentation, not as Rust (issue 52): no rustdoc link
    /// (`` [`slot_fifo`](super::slot_fifo) `` showed as written), no Rust type for a port
    /// (`signal<UInt<16>>`, `f64`): widths in bits, a message type by its name and size.
    #[test]
    fn explain_shows_no_rustdoc_links_and_ports_by_their_width() {
        for b in registry::blocks().iter() {
            let t = explain(b.name).unwrap();
            for bad in ["](", "[`"] {
                assert!(!t.contains(bad), "{}: `{bad}` in\n{t}", b.name);
            }
            let ports = t
                .lines()
                .skip_while(|l| *l != "ports:")
                .take_while(|l| !l.starts_with("params"));
            for l in ports {
                for bad in [
                    "UInt<", "<u64>", "<f64>", "<bool>", "<u8>", "<u16>", "<u32>", "signal<", "stream<",
                ] {
                    assert!(!l.contains(bad), "{}: `{bad}` in the port line `{l}`", b.name);
                }
            }
        }
        let t = explain("voq_switch").unwrap();
        assert!(
            t.contains("  out voq_total      signal 16 bits  level: cells queued in all VOQs"),
            "{t}"
        );
        let t = explain("rclink_tx").unwrap();
        assert!(t.contains("slot FIFO (`slot_fifo`: slots, PSN"), "{t}");
        assert!(t.contains("  in  credit         stream[8] CreditMsg (53 bits)"), "{t}");
        assert_eq!(plain("a [`b`](c::d) e [`f`] [0, 1] [`g h"), "a `b` e `f` [0, 1] [`g h");
    }
}
