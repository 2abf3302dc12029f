//! Every block kind's numeric parameters at extreme values (issue 15): 0, 2^20, 2^32 - 1, 2^40,
//! 2^63, 2^64 - 1. Each is refused by the block or builds and runs; never a panic or an abort.
//! (The command-line side of the extremes, with places and exit codes, is in tests/cli.rs.)
//!
//! The sweep runs in a child process under a 4 GiB address-space limit (`ulimit -v`), so an
//! allocation sized by a parameter aborts there instead of passing unseen under overcommit; the
//! child prints each case before it builds it. In a debug build (`cargo test --test extremes`)
//! an arithmetic overflow at build or in the first 1000 cycles is a panic, and is reported.

use std::process::Command;

use hwsim::registry;
use hwsim::yaml::Value;
use hwsim_hw::Harness;

/// Values that break naive arithmetic or allocation.
const EXTREMES: &[u64] = &[0, 1 << 20, u32::MAX as u64, 1 << 40, 1 << 63, u64::MAX];

/// Every numeric leaf of `v` (nested mappings included), as key paths.
fn numeric_paths(v: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Mapping(m) => {
            for (k, x) in m {
                prefix.push(hwsim::yaml::show(k));
                numeric_paths(x, prefix, out);
                prefix.pop();
            }
        }
        Value::Number(_) => out.push(prefix.clone()),
        _ => {}
    }
}

fn set_path(v: &mut Value, path: &[String], x: Value) {
    let mut cur = v;
    for k in path {
        cur = cur.get_mut(k.as_str()).expect("path from the defaults");
    }
    *cur = x;
}

const CHILD: &str = "HWSIM_EXTREMES_CHILD";

/// The child's work: every kind, every numeric parameter, every extreme: `make` (parameters
/// parsed, ports declared), then the block built with every port bound, then 1000 cycles run.
/// A refusal is fine; a panic is reported and counted; an abort kills the child.
fn build_every_kind_at_extremes() {
    let mut panics = Vec::new();
    for kind in registry::blocks().iter() {
        let mut paths = Vec::new();
        numeric_paths(&kind.defaults, &mut Vec::new(), &mut paths);
        for path in paths {
            for &x in EXTREMES {
                let mut params = kind.defaults.clone();
                set_path(&mut params, &path, Value::from(x));
                let case = format!("{} {}={x}", kind.name, path.join("."));
                println!("case {case}");
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let Ok((ports, body)) = kind.make(&params) else { return };
                    let add =
                        |nl: &mut hwsim_hw::Netlist, ports| registry::add_instance(nl, "dut", kind.name, ports, body);
                    if let Ok(mut h) = Harness::new_with(ports, add, 1, 2) {
                        let _ = h.run(1000);
                    }
                }));
                if r.is_err() {
                    panics.push(case);
                }
            }
        }
    }
    assert!(panics.is_empty(), "panicked: {panics:?}");
}

#[test]
fn every_block_parameter_at_an_extreme_is_built_or_refused() {
    if std::env::var_os(CHILD).is_some() {
        build_every_kind_at_extremes();
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 4194304; exec "$0" --exact every_block_parameter_at_an_extreme_is_built_or_refused --nocapture --test-threads=1"#)
        .arg(exe)
        .env(CHILD, "1")
        .output()
        .expect("child runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rfind(|l| l.starts_with("case ")).unwrap_or("none");
    assert!(
        out.status.success(),
        "child failed ({}) at {last}:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        stdout.lines().filter(|l| l.starts_with("case ")).count() > 500,
        "cases ran"
    );
}

/// A parameter that shapes a kind's ports (a port count, the destinations shown) is refused when
/// the kind is made, before its ports are declared, whenever the block would refuse it: otherwise
/// the ports are declared from a clamped value and what the user reads is a connection's error
/// about the clamped count ("64 ports" for `ports = 65`, issue 53), not the parameter's.
#[test]
fn a_parameter_that_shapes_the_ports_is_refused_before_they_are_declared() {
    let mut late = Vec::new();
    for kind in registry::blocks().iter() {
        let mut paths = Vec::new();
        numeric_paths(&kind.defaults, &mut Vec::new(), &mut paths);
        let Ok((default_ports, _)) = kind.make(&kind.defaults) else {
            panic!("{}: its defaults are refused", kind.name)
        };
        let names = |ports: &[hwsim_hw::PortDecl]| ports.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        for path in paths {
            for x in [0u64, 9, 65, 1025, 1 << 20, u32::MAX as u64] {
                let mut params = kind.defaults.clone();
                set_path(&mut params, &path, Value::from(x));
                let Ok((ports, body)) = kind.make(&params) else {
                    continue;
                };
                if names(&ports) == names(&default_ports) {
                    continue;
                }
                let add = |nl: &mut hwsim_hw::Netlist, ports| registry::add_instance(nl, "dut", kind.name, ports, body);
                if let Err(e) = Harness::new_with(ports, add, 1, 2) {
                    late.push(format!("{} {}={x}: {e}", kind.name, path.join(".")));
                }
            }
        }
    }
    assert!(
        late.is_empty(),
        "refused only after the ports were declared:\n{}",
        late.join("\n")
    );
}
