//! `--set PATH=VALUE`: command-line overrides of a testbench's fields.
//!
//! PATH is the field's dotted path in the file as written (`system.traffic.0.bytes`, list items
//! by index, `seed`, `defaults.fifo.depth`); VALUE is YAML (a scalar, or flow style
//! `{a: 1}` / `[1, 2]`). Overrides are applied to the parsed document in order, each followed by
//! the schema check, so an error names the `--set` argument that caused it. A key that is not in
//! the file may be added (validation runs after: a field the schema does not have is refused by
//! name); a list index may name an existing item or the next one (append). Settings that come
//! from included configs (`system.chip…`, `defaults.<kind>…`) are reachable too: the part of the
//! included settings on the path is copied into the testbench first, then changed, so the
//! testbench's own value wins as it would in the file.

use std::path::Path;

use crate::input::yaml::{InputError, Mapping, Value};

/// One `--set` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The argument as given (`system.traffic.0.bytes=4096`), for messages.
    pub arg: String,
    /// Path segments.
    pub path: Vec<String>,
    /// The new value.
    pub value: Value,
}

impl Override {
    /// An input error attributed to this argument.
    pub fn error(&self, msg: impl Into<String>) -> InputError {
        InputError::new(Path::new(&format!("--set {}", self.arg)), msg)
    }
    /// The last path segment (the field's own name).
    pub fn leaf(&self) -> &str {
        self.path.last().map_or("", |s| s.as_str())
    }
}

/// The last of `overrides` that made the value at `path` (one `--set` at it, above it or under
/// it): an error in that value names that `--set`, not a line of the file it did not come from.
pub fn last_at<'a>(overrides: &'a [Override], path: &[&str]) -> Option<&'a Override> {
    overrides
        .iter()
        .rev()
        .find(|o| o.path.iter().zip(path).all(|(a, b)| a == b))
}

/// Parses `PATH=VALUE`.
pub fn parse(arg: &str) -> Result<Override, InputError> {
    let bad = |msg: &str| InputError::new(Path::new(&format!("--set {arg}")), msg.to_string());
    let Some((path, value)) = arg.split_once('=') else {
        return Err(bad("expected PATH=VALUE (`--set system.traffic.0.bytes=4096`)"));
    };
    let path: Vec<String> = path.trim().split('.').map(|s| s.trim().to_string()).collect();
    if path.iter().any(|s| s.is_empty()) {
        return Err(bad("empty path segment (PATH is dotted: `system.topology.chips`)"));
    }
    if value.len() > 1 << 16 {
        return Err(bad("value longer than 65536 characters"));
    }
    let value: Value = crate::input::yaml::parse(Path::new(&format!("--set {arg}")), value).map_err(|e| {
        // The value is one line: its column is the place to fix.
        bad(&format!("value is not YAML: {}", e.message))
    })?;
    Ok(Override {
        arg: arg.to_string(),
        path,
        value,
    })
}

/// What a value is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// The child of `v` at `seg` (a mapping key, or a list index).
fn child<'a>(v: &'a Value, seg: &str) -> Option<&'a Value> {
    match v {
        Value::Mapping(m) => m.get(Value::String(seg.to_string())),
        Value::Sequence(s) => seg.parse::<usize>().ok().and_then(|i| s.get(i)),
        _ => None,
    }
}

/// Sets `o.value` at `o.path` in `doc`. `base` holds the settings the includes supply under the
/// same paths (`{system: …, defaults: …}`): a missing part of the path is copied from there.
pub fn apply(doc: &mut Value, base: &Value, o: &Override) -> Result<(), InputError> {
    let mut cur = doc;
    let mut base = Some(base);
    for (i, seg) in o.path.iter().enumerate() {
        let here = o.path[..i].join(".");
        let last = i + 1 == o.path.len();
        let from_base = base.and_then(|b| child(b, seg));
        if cur.is_null() {
            *cur = Value::Mapping(Mapping::new());
        }
        let next: &mut Value = match cur {
            Value::Mapping(m) => {
                let key = Value::String(seg.clone());
                if !m.contains_key(&key) {
                    let init = from_base.cloned().unwrap_or(Value::Null);
                    m.insert(key.clone(), init);
                }
                m.get_mut(&key).expect("just inserted")
            }
            Value::Sequence(s) => {
                let n = s.len();
                let idx = seg.parse::<usize>().ok().filter(|&k| k <= n).ok_or_else(|| {
                    o.error(format!(
                        "`{here}` is a list of {n} item(s): `{seg}` is not an index in 0..={n} ({n} appends)"
                    ))
                })?;
                if idx == n {
                    s.push(Value::Null);
                }
                &mut s[idx]
            }
            other => {
                return Err(o.error(format!(
                    "`{here}` is {} ({}), which has no field `{seg}`",
                    kind(other),
                    crate::input::yaml::show(other)
                )))
            }
        };
        if last {
            *next = o.value.clone();
            return Ok(());
        }
        cur = next;
        base = from_base;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(s: &str) -> Value {
        serde_yaml::from_str(s).unwrap()
    }

    #[test]
    fn sets_existing_new_and_indexed_fields() {
        let mut doc = y("seed: 1\nsystem: {traffic: [{bytes: 4}, {bytes: 8}]}\n");
        let base = y("system: {chip: {paxi: {itlv: hash, mtu: 4096}}}");
        for a in [
            "seed=7",
            "system.traffic.1.bytes=16",
            "system.traffic.2={bytes: 32}",
            "system.chip.paxi.itlv=round_robin",
        ] {
            apply(&mut doc, &base, &parse(a).unwrap()).unwrap();
        }
        assert_eq!(
            doc,
            y("seed: 7\nsystem: {traffic: [{bytes: 4}, {bytes: 16}, {bytes: 32}], chip: {paxi: {itlv: round_robin, mtu: 4096}}}")
        );
    }

    #[test]
    fn bad_paths_name_the_argument_and_the_place() {
        let mut doc = y("seed: 1\nsystem: {traffic: [{bytes: 4}]}\n");
        let e = apply(&mut doc, &Value::Null, &parse("system.traffic.5.bytes=1").unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set system.traffic.5.bytes=1: `system.traffic` is a list of 1 item(s): `5` is not an index in 0..=1 (1 appends)"
        );
        let e = apply(&mut doc, &Value::Null, &parse("seed.x=1").unwrap()).unwrap_err();
        assert!(
            e.to_string().contains("`seed` is a number (1), which has no field `x`"),
            "{e}"
        );
        assert!(parse("seed").is_err());
        assert!(parse("a..b=1").is_err());
        assert!(parse("a=[1")
            .unwrap_err()
            .to_string()
            .starts_with("--set a=[1: value is not YAML"));
    }
}
