//! The subcommands that look at a testbench without running it to a verdict (`check`,
//! `config`, `netlist`, `list`) and `vectors`.

use std::path::Path;
use std::process::ExitCode;

use hwsim::{explain, output, registry, runner, values, vectors, yaml};

use super::io::{bad, emit_then, load, on_interrupt};

/// `hwsim vectors`: an interrupt ends it with what it wrote so far, and 130.
pub(crate) fn vectors_cmd(testbench: &Path, out: &Path, instance: &[String]) -> ExitCode {
    let interrupt = match on_interrupt() {
        Ok(f) => f,
        Err(e) => return e,
    };
    match vectors::run(testbench, out, instance, Some(&interrupt)) {
        Ok(text) if interrupt.load(std::sync::atomic::Ordering::Relaxed) => emit_then(&text, ExitCode::from(130)),
        Ok(text) => emit_then(&text, ExitCode::SUCCESS),
        Err(e) => bad(e),
    }
}

/// `hwsim netlist`: the netlist as a Graphviz file, whole or one scope, to a depth.
pub(crate) fn netlist_cmd(
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

pub(crate) fn check(tb: &Path, max_memory: u64, set: &[String]) -> ExitCode {
    let l = match load(tb, max_memory, set) {
        Ok(l) => l,
        Err(e) => return e,
    };
    // What `run` would refuse before building, `check` refuses too.
    if let Err(e) = runner::validate_run(&l, None) {
        return bad(e);
    }
    match runner::build(&l, l.tb.seed).and_then(|(sim, el)| {
        runner::validate_checks(&l, &sim)?;
        runner::require_checks(&l)?;
        Ok((sim, el))
    }) {
        Ok((sim, el)) => {
            use std::fmt::Write as _;
            let mut s = format!(
                "{}: ok — {} instances, {} nets, {} counters\n",
                tb.display(),
                sim.component_count(),
                sim.net_count(),
                sim.counters().count()
            );
            // Per kind: the blocks the kernel ticks, then the composites that group them.
            let _ = writeln!(s, "  blocks per kind:");
            for (kind, (n, composite)) in &el.kinds {
                if !composite {
                    let _ = writeln!(s, "    {n:>7}  {kind}");
                }
            }
            if el.kinds.values().any(|(_, c)| *c) {
                let _ = writeln!(s, "  composites per kind (no logic of their own):");
                for (kind, (n, composite)) in &el.kinds {
                    if *composite {
                        let _ = writeln!(s, "    {n:>7}  {kind}");
                    }
                }
            }
            // The process ends here: freeing a large netlist's millions of small names and
            // nets one by one took 1.4 s of a 32×32 torus's check.
            std::mem::forget((sim, el));
            emit_then(&s, ExitCode::SUCCESS)
        }
        Err(e) => bad(e),
    }
}

/// `hwsim config`: the testbench elaborated with its instances' parameters recorded, printed as
/// YAML (a header of what made it, then the instances in creation order).
pub(crate) fn config(tb: &Path, max_memory: u64, set: &[String]) -> ExitCode {
    let l = match load(tb, max_memory, set) {
        Ok(l) => l,
        Err(e) => return e,
    };
    // What `run` and `check` refuse before building (an `until` past 2^62, a flow or a warm-up
    // window after the end), `config` refuses too: it printed a configuration no run accepts.
    if let Err(e) = runner::validate_run(&l, None) {
        return bad(e);
    }
    *l.resolved.borrow_mut() = Some(Vec::new());
    if let Err(e) = runner::build(&l, l.tb.seed) {
        return bad(e);
    }
    use yaml::{Mapping, Value};
    let mut doc = Mapping::new();
    doc.insert("hwsim".into(), explain::VERSION.into());
    doc.insert("testbench".into(), l.name().into());
    doc.insert("file".into(), tb.display().to_string().into());
    doc.insert("seed".into(), l.tb.seed.into());
    doc.insert("until".into(), yaml::to_value(&l.tb.until));
    let sets: Vec<Value> = set.iter().map(|s| Value::from(s.as_str())).collect();
    doc.insert("overrides".into(), Value::Sequence(sets));
    let mut insts = Mapping::new();
    for (path, kind, params) in l.resolved.borrow_mut().take().unwrap_or_default() {
        let mut m = Mapping::new();
        m.insert("kind".into(), kind.into());
        m.insert("params".into(), params);
        insts.insert(path.into(), Value::Mapping(m));
    }
    doc.insert("instances".into(), Value::Mapping(insts));
    let y = yaml::dump(&Value::Mapping(doc));
    emit_then(
        &format!("# the configuration {} resolves to (`hwsim config`)\n{y}", tb.display()),
        ExitCode::SUCCESS,
    )
}

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
pub(crate) fn list(pattern: Option<&str>) -> Result<String, String> {
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
