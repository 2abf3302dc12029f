//! Faults: the testbench's `faults:` rules as PhyLink fault parameters, per edge direction.

use crate::build::testbench::Loaded;
use crate::input::schema::System;
use crate::input::yaml::{self, InputError, Value};

/// The PhyLink fault rules for direction x → y (node names: `chip3`, `sw0`).
pub(super) fn fault_rules(l: &Loaded, s: &System, x: &str, y: &str) -> Result<Vec<Value>, InputError> {
    let mut v = Vec::new();
    for (i, f) in s.faults.iter().enumerate() {
        if f.link[0] != x || f.link[1] != y {
            continue;
        }
        let kinds = ["drop", "corrupt", "flap"];
        let whats = ["data", "ack", "nak", "cnp", "credit"];
        if !kinds.contains(&f.kind.as_str()) {
            return Err(l.item_error(
                "faults",
                i,
                "kind",
                format!("fault kind `{}` (drop, corrupt, flap)", f.kind),
            ));
        }
        if !whats.contains(&f.what.as_str()) {
            return Err(l.item_error(
                "faults",
                i,
                "what",
                format!("fault target `{}` (data, ack, nak, cnp, credit)", f.what),
            ));
        }
        let path_ok = match f.path.as_str() {
            "req" => f.what == "data" || f.kind == "flap",
            "rsp" => matches!(f.what.as_str(), "ack" | "nak" | "cnp" | "credit") || f.kind == "flap",
            _ => false,
        };
        if !path_ok {
            return Err(l.item_error(
                "faults",
                i,
                "path",
                format!(
                    "fault path `{}` does not carry `{}` (req: data; rsp: ack, nak, cnp, credit)",
                    f.path, f.what
                ),
            ));
        }
        let mut m = yaml::Mapping::new();
        m.insert("kind".into(), f.kind.clone().into());
        m.insert("what".into(), f.what.clone().into());
        if let Some(x) = f.lg {
            m.insert("lg".into(), (x as u64).into());
        }
        if let Some(x) = f.qp {
            m.insert("qp".into(), (x.value() as u64).into());
        }
        if let Some(x) = f.psn {
            m.insert("psn".into(), (x.value() as u64).into());
        }
        m.insert("times".into(), f.times.into());
        if let Some(p) = f.probability {
            m.insert("probability".into(), p.into());
        }
        if let Some(t) = f.from {
            m.insert("from".into(), t.into());
        }
        if let Some(t) = f.to {
            m.insert("to".into(), t.into());
        }
        v.push(Value::Mapping(m));
    }
    Ok(v)
}
