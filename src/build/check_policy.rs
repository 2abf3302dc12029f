//! Which of a testbench's `expect:` checks a run evaluates.
//!
//! - `--checks off` (`run`, `sweep`): none, and no monitor either; the run reports its counters
//!   and metrics without a verdict (`-`). A protocol violation still stops the run and fails it:
//!   that is the model refusing to go on, not a check.
//! - A check marked `pinned: PATH` (or a list of paths) was written for the values those
//!   parameters have in the file: a run with a `--set` that changes one of them (a sweep over
//!   it) drops the check, and the report lists it with the argument that dropped it, instead of
//!   failing a bound that was never meant for that value. `pinned: seed` ties a check to the
//!   testbench's seed: another seed (`--seed`, a sweep's derived seeds, `--set seed=…`) drops
//!   it. A `--set` touches a pinned path when one is the other or lies under it
//!   (`--set system.faults.0={…}` touches `system.faults.0.probability`, and so does
//!   `--set system.faults.0.probability=1e-2`).
//!
//! A pinned path must name a field the testbench or its includes write (or `seed`): a typo would
//! otherwise never drop anything. It is refused at the check's `pinned:`.

use serde::Serialize;

use crate::build::testbench::Loaded;
use crate::input::schema::{Bound, Expect};
use crate::input::yaml::{InputError, Value};

/// A check a run did not evaluate because an override changed a parameter it is pinned to.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Dropped {
    /// Its index in `expect:` (from 0).
    pub index: usize,
    /// The check (its `name`, else what it bounds).
    pub check: String,
    /// The pinned parameter that was changed.
    pub pinned: String,
    /// What changed it: `--set PATH=VALUE` or `--seed S`.
    pub by: String,
}

impl Dropped {
    /// One line for a report: `` `goodput >= 340`: pinned to p, changed by --set p=1 ``.
    pub fn note(&self) -> String {
        format!("`{}`: pinned to {}, changed by {}", self.check, self.pinned, self.by)
    }
}

/// The bounds of a counter or metric check, as text (`>= 340 and <= 358`).
pub fn bounds_text(e: &Expect) -> String {
    let mut parts = Vec::new();
    if let Some(x) = &e.equals {
        parts.push(format!("== {x}"));
    }
    if let Some(x) = &e.min {
        parts.push(format!(">= {x}"));
    }
    if let Some(x) = &e.max {
        parts.push(format!("<= {x}"));
    }
    parts.join(" and ")
}

/// Whether `x` is within a check's bounds (resolved: see [`resolve`]; an unresolved one never
/// holds).
pub fn within_bounds(e: &Expect, x: f64) -> bool {
    let n = |b: &Bound| b.num().unwrap_or(f64::NAN);
    e.equals.as_ref().is_none_or(|v| x == n(v))
        && e.min.as_ref().is_none_or(|v| x >= n(v))
        && e.max.as_ref().is_none_or(|v| x <= n(v))
}

/// A check's label: its `name`, else what it bounds (as the report names a counter or metric
/// check; a port check by its port, window and form).
pub fn label(e: &Expect) -> String {
    if let Some(n) = &e.name {
        return n.clone();
    }
    if let Some(c) = &e.counter {
        let how = match e.reduce.as_deref() {
            Some("max") => "max of ",
            Some("min") => "min of ",
            _ => "",
        };
        return format!("{how}{c} {}", bounds_text(e));
    }
    if let Some(m) = &e.metric {
        return format!("{m} {}", bounds_text(e));
    }
    let port = e.port.clone().unwrap_or_default();
    let window = match (e.at, e.within) {
        (Some(a), _) => format!(" @ {a}"),
        (None, Some([a, b])) => format!(" in [{a}, {b}]"),
        (None, None) => String::new(),
    };
    match (&e.value, e.count, &e.sequence) {
        (Some(v), _, _) => format!("{port}{window} == {}", crate::input::yaml::show(v)),
        (_, Some(n), _) => format!("{port} count{window} == {n}"),
        _ => format!("{port} sequence{window}"),
    }
}

/// Whether a `--set` of `set` changes the parameter at `pinned` (one path is the other, or
/// lies under it).
pub fn touches(pinned: &[&str], set: &[String]) -> bool {
    pinned.iter().zip(set).all(|(a, b)| *a == b.as_str())
}

fn child<'a>(v: &'a Value, seg: &str) -> Option<&'a Value> {
    match v {
        Value::Mapping(m) => m.get(Value::String(seg.to_string())),
        Value::Sequence(s) => seg.parse::<usize>().ok().and_then(|i| s.get(i)),
        _ => None,
    }
}

fn resolve<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, seg| child(v, seg))
}

/// The testbench as run: the file with the `--set` overrides applied, and the included
/// settings (`system`, `defaults`) it falls back on.
fn documents(l: &Loaded) -> Result<(Value, Value), InputError> {
    let mut doc: Value = crate::input::yaml::parse(&l.path, &l.text)?;
    let mut base = crate::input::yaml::Mapping::new();
    base.insert("system".into(), l.system_defaults.clone());
    base.insert("defaults".into(), crate::input::yaml::to_value(&l.defaults));
    let base = Value::Mapping(base);
    for o in &l.overrides {
        crate::input::overrides::apply(&mut doc, &base, o)?;
    }
    Ok((doc, base))
}

/// The number at `path` in the run's testbench (else in its included settings).
fn param_value(doc: &Value, base: &Value, path: &str) -> Option<f64> {
    let segs: Vec<&str> = path.split('.').collect();
    resolve(doc, &segs)
        .or_else(|| resolve(base, &segs))
        .and_then(Value::as_f64)
}

fn bounds(e: &Expect) -> [(&'static str, &Option<Bound>); 3] {
    [("equals", &e.equals), ("min", &e.min), ("max", &e.max)]
}

/// The checks with every `{param: PATH, times: F}` bound replaced by its number in this run
/// (`times` × the field's value after `--set`); a check without a name is named by its bounds
/// as written (`snk.received == instances.src.params.count`), its `expected` the numbers.
pub fn resolve_bounds(l: &Loaded, kept: Vec<&Expect>) -> Result<Vec<Expect>, InputError> {
    if kept.iter().all(|e| {
        bounds(e)
            .iter()
            .all(|(_, b)| b.as_ref().is_none_or(|b| b.num().is_some()))
    }) {
        return Ok(kept.into_iter().cloned().collect());
    }
    let (doc, base) = documents(l)?;
    let mut out = Vec::new();
    for e in kept {
        let mut r = e.clone();
        let relative = bounds(e)
            .iter()
            .any(|(_, b)| b.as_ref().is_some_and(|b| b.num().is_none()));
        for b in [&mut r.equals, &mut r.min, &mut r.max].into_iter().flatten() {
            if let Bound::Param { path, times } = b {
                let x = param_value(&doc, &base, path)
                    .ok_or_else(|| InputError::new(&l.path, format!("bound `{path}` is not a number in this run")))?;
                *b = Bound::Num(*times * x);
            }
        }
        if relative && r.name.is_none() {
            r.name = Some(label(e));
        }
        out.push(r);
    }
    Ok(out)
}

/// Refuses a `pinned:` path that names no field of the testbench or its includes (or `seed`),
/// at that check's `pinned:`; and a `{param: PATH}` bound whose field is not a number in the run
/// (after `--set`), at that bound.
pub fn validate(l: &Loaded) -> Result<(), InputError> {
    let params = l.tb.expect.iter().any(|e| {
        bounds(e)
            .iter()
            .any(|(_, b)| b.as_ref().is_some_and(|b| b.num().is_none()))
    });
    let docs = if params { Some(documents(l)?) } else { None };
    // A bound's number in this run (a `{param: PATH, times: F}` resolved after `--set`).
    let value = |b: &Bound| match (b, &docs) {
        (Bound::Param { path, times }, Some((doc, base))) => param_value(doc, base, path).map(|x| times * x),
        _ => b.num(),
    };
    for (i, e) in l.tb.expect.iter().enumerate() {
        for (field, b) in bounds(e) {
            if let Some(Bound::Param { path, .. }) = b {
                if value(b.as_ref().expect("some")).is_none() {
                    return Err(l.item_error(
                        "expect",
                        i,
                        field,
                        format!("{field}: {{param: {path}}} names no number of the testbench or its includes (write the value in the testbench to bound a check by it)"),
                    ));
                }
            }
        }
        // No value passes a check whose minimum is above its maximum: refused, not run to fail
        // (two numbers as written are refused when the file is read; here a `{param: …}` bound
        // decides, after `--set`).
        let relative = [&e.min, &e.max]
            .iter()
            .any(|b| b.as_ref().is_some_and(|b| b.num().is_none()));
        if let (true, Some(lo), Some(hi)) = (relative, e.min.as_ref().and_then(value), e.max.as_ref().and_then(value)) {
            if lo > hi {
                return Err(l.item_error(
                    "expect",
                    i,
                    "min",
                    format!("min {lo} is above max {hi} in this run: no value can pass (swap them, or check one side)"),
                ));
            }
        }
    }
    if l.tb.expect.iter().all(|e| e.pinned.is_empty()) {
        return Ok(());
    }
    let doc: Value = crate::input::yaml::parse(&l.path, &l.text)?;
    let defaults = crate::input::yaml::to_value(&l.defaults);
    for (i, e) in l.tb.expect.iter().enumerate() {
        for p in &e.pinned {
            let segs: Vec<&str> = p.split('.').collect();
            let known = p == "seed"
                || (!segs.iter().any(|s| s.is_empty())
                    && (resolve(&doc, &segs).is_some()
                        || (segs[0] == "system" && resolve(&l.system_defaults, &segs[1..]).is_some())
                        || (segs[0] == "defaults" && resolve(&defaults, &segs[1..]).is_some())));
            if !known {
                return Err(l.item_error(
                    "expect",
                    i,
                    "pinned",
                    format!(
                        "pinned: `{p}` names no field of the testbench or its includes (a dotted path as `--set` takes, or `seed`; write the value in the testbench to pin a check to it)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The checks a run evaluates, and those it drops: none with `checks_off`; else every check but
/// those pinned to a parameter that an override changes (or to `seed`, when `seed` is not the
/// testbench's).
pub fn select(l: &Loaded, checks_off: bool, seed: u64) -> (Vec<&Expect>, Vec<Dropped>) {
    if checks_off {
        return (Vec::new(), Vec::new());
    }
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for (index, e) in l.tb.expect.iter().enumerate() {
        let hit = e.pinned.iter().find_map(|p| {
            let segs: Vec<&str> = p.split('.').collect();
            if let Some(o) = l.overrides.iter().find(|o| touches(&segs, &o.path)) {
                return Some((p.clone(), format!("--set {}", o.arg)));
            }
            (p == "seed" && seed != l.tb.seed).then(|| (p.clone(), format!("--seed {seed}")))
        });
        match hit {
            Some((pinned, by)) => dropped.push(Dropped {
                index,
                check: label(e),
                pinned,
                by,
            }),
            None => kept.push(e),
        }
    }
    (kept, dropped)
}

/// A run's verdict word: `INTR` interrupted, `FAIL` a check failed or a protocol violation
/// stopped it, `-` nothing was checked (`--checks off`, or every check dropped), else `PASS`.
pub fn verdict(passed: bool, interrupted: bool, checks_off: bool, checks: usize) -> &'static str {
    if interrupted {
        "INTR"
    } else if !passed {
        "FAIL"
    } else if checks_off || checks == 0 {
        "-"
    } else {
        "PASS"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(p: &str) -> Vec<String> {
        p.split('.').map(String::from).collect()
    }

    #[test]
    fn a_set_touches_a_pinned_path_at_it_above_it_or_below_it() {
        let pinned = ["system", "faults", "0", "probability"];
        assert!(touches(&pinned, &segs("system.faults.0.probability")));
        assert!(touches(&pinned, &segs("system.faults.0")));
        assert!(touches(&pinned, &segs("system")));
        assert!(touches(&["system", "faults"], &segs("system.faults.0.probability")));
        assert!(!touches(&pinned, &segs("system.faults.1.probability")));
        assert!(!touches(&pinned, &segs("system.traffic.0.bytes")));
        assert!(!touches(&["seed"], &segs("until")));
    }

    #[test]
    fn verdicts_say_unchecked_as_a_dash() {
        assert_eq!(verdict(true, false, false, 3), "PASS");
        assert_eq!(verdict(false, false, false, 3), "FAIL");
        assert_eq!(verdict(true, false, true, 0), "-");
        assert_eq!(verdict(true, false, false, 0), "-");
        assert_eq!(
            verdict(false, false, true, 1),
            "FAIL",
            "a protocol violation still fails"
        );
        assert_eq!(verdict(true, true, true, 0), "INTR");
    }
}
