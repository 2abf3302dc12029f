//! `hwsim config TB`: the configuration a testbench resolves to, as YAML.

use std::path::Path;
use std::process::ExitCode;

use hwsim::{explain, runner, yaml};

use super::io::{bad, emit_then, load_runnable};

/// `hwsim config`: the testbench elaborated with its instances' parameters recorded, printed as
/// YAML (a header of what made it, then the instances in creation order).
pub(crate) fn main(tb: &Path, max_memory: u64, set: &[String]) -> ExitCode {
    let l = match load_runnable(tb, max_memory, set) {
        Ok(l) => l,
        Err(e) => return e,
    };
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
