//! Loading a testbench (with its includes) and elaborating its module form into a netlist:
//! instances, bindings, stimulus drivers, sinks for unconnected stream outputs, and the watch
//! list the checks read after the run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::build::registry::{self, BlockKind};
use crate::input::overrides::Override;
use crate::input::schema::{ConfigFile, Testbench};
use crate::input::yaml::{self, InputError, Value};

/// Module-form elaboration.
mod elab;
pub use elab::*;

/// A testbench read from disk with its includes merged.
pub struct Loaded {
    /// The file.
    pub path: PathBuf,
    /// Its text (for error positions).
    pub text: String,
    /// The parsed testbench.
    pub tb: Testbench,
    /// Parameter defaults per kind (includes, then the testbench's own).
    pub defaults: BTreeMap<String, Value>,
    /// System settings from includes (merged under the testbench's `system:`).
    pub system_defaults: Value,
    /// Every file read: the testbench, then its includes (outputs must not overwrite them).
    pub files: Vec<PathBuf>,
    /// Memory budget, bytes: elaboration refuses traffic or buffers that would need more
    /// (`--max-memory`; default [`DEFAULT_MAX_MEMORY`]).
    pub max_memory: u64,
    /// `--set` overrides applied to the file (errors about their fields name them).
    pub overrides: Vec<Override>,
    /// When `Some` (`hwsim config`), elaboration records each instance it makes of a
    /// registered kind: (path, kind, the parameters it runs with, every default filled in).
    pub resolved: std::cell::RefCell<Option<Vec<(String, String, Value)>>>,
}

/// Default memory budget: 8 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;

/// Largest instance array (`count:`).
pub const MAX_COUNT: u32 = 1 << 20;

/// Largest stream `capacity:` in a `connect:` (messages).
pub const MAX_CAPACITY: u32 = 1 << 20;

impl Loaded {
    /// Records the parameters instance `path` of `kind` runs with, when collecting them
    /// ([`Loaded::resolved`]).
    pub fn record_params(&self, path: &str, kind: &BlockKind, params: &Value) -> Result<(), String> {
        let mut r = self.resolved.borrow_mut();
        if let Some(v) = r.as_mut() {
            v.push((path.to_string(), kind.name.to_string(), kind.resolved(params)?));
        }
        Ok(())
    }

    /// The testbench's name.
    pub fn name(&self) -> String {
        self.tb.name.clone().unwrap_or_else(|| {
            self.path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
    }
    /// An input error located at the first occurrence of `needle`.
    pub fn error_at(&self, needle: &str, msg: impl Into<String>) -> InputError {
        if let Some(o) = self.override_for(needle) {
            return o.error(msg);
        }
        InputError::at_key(&self.path, &self.text, needle, msg)
    }
    /// An error about `field` of the `index`-th item of the list under `list:` (a flow of
    /// `traffic:`, a rule of `faults:`): at that item's `field:` when the testbench writes it (a
    /// block sequence of `- …` items, or a flow sequence `[{…}, {…}]` on one line or several),
    /// else at the item's start; an error about a `--set` field is the argument's; else where
    /// [`Loaded::error_at`] finds `field`, else at `list`.
    pub fn item_error(&self, list: &str, index: usize, field: &str, msg: impl Into<String>) -> InputError {
        let msg = msg.into();
        let set = self
            .overrides
            .iter()
            .rev()
            .find(|o| o.path.iter().any(|p| p == list) && (o.leaf() == field || mentions(&o.value, field)));
        if let Some(o) = set {
            return o.error(msg);
        }
        match yaml::locate_in_item(&self.text, list, index, field) {
            Some((line, col)) => InputError {
                file: self.path.clone(),
                line: Some(line),
                column: Some(col),
                message: msg,
            },
            None => {
                let e = InputError::at_key(&self.path, &self.text, field, msg);
                match e.line {
                    Some(_) => e,
                    None => InputError::at_key(&self.path, &self.text, list, e.message),
                }
            }
        }
    }
    /// `e` attributed to the last `--set` whose field or value its message names (an error
    /// found after loading, about an overridden field, is the argument's, not the file's).
    ///
    /// An error located in an include is attributed too: the include was searched for the field
    /// by name, but a `--set` of it replaces the include's value, so the line found there is not
    /// where the value came from. The argument's field is its leaf, or a key or value anywhere in
    /// a mapping it sets (`--set defaults.consumer={capacity: 0}` sets `capacity`); a list or a
    /// mapping given where a number is expected (`invalid type: sequence`) is the argument's
    /// that gave one.
    pub fn attribute(&self, e: InputError) -> InputError {
        if !self.files.contains(&e.file) && e.file != self.path {
            return e;
        }
        let words: Vec<&str> = e
            .message
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .map(|w| w.trim_end_matches('.'))
            .collect();
        let hit = self.overrides.iter().rev().find(|o| {
            let v = yaml::show(&o.value);
            let shape = match &o.value {
                Value::Sequence(_) => Some("invalid type: sequence"),
                Value::Mapping(_) => Some("invalid type: map"),
                _ => None,
            };
            words.iter().any(|w| *w == o.leaf() || *w == v || mentions(&o.value, w))
                || shape.is_some_and(|t| e.message.contains(t))
        });
        match hit {
            Some(o) => o.error(e.message),
            None => e,
        }
    }
    /// The last `--set` whose field (or value) is `needle`: an error found after loading about
    /// that field is the argument's, not the file's.
    fn override_for(&self, needle: &str) -> Option<&Override> {
        if needle.is_empty() {
            return None;
        }
        self.overrides
            .iter()
            .rev()
            .find(|o| o.leaf() == needle || mentions(&o.value, needle))
    }
    /// An input error at the parameter a block's message names (`base_latency = …: must be …`,
    /// ``unknown field `x` ``): in the testbench if it sets it, else in the last include that does
    /// (whose value is in force; a preset's typo is fixed in the preset); else at `fallback` in
    /// the testbench.
    pub fn error_at_param(&self, fallback: &str, msg: impl Into<String>) -> InputError {
        let msg = msg.into();
        if let Some(o) = field_named(&msg).and_then(|f| self.override_for(f)) {
            return o.error(msg);
        }
        if let Some(field) = field_named(&msg) {
            // The testbench overrides its includes, and a later include an earlier one: the
            // value in force is the first found in this order.
            let order = self.files.first().into_iter().chain(self.files.iter().skip(1).rev());
            for f in order {
                let text = if f == &self.path {
                    Some(self.text.clone())
                } else {
                    yaml::read(f).ok()
                };
                let e = InputError::at_key(f, &text.unwrap_or_default(), field, msg.clone());
                if e.line.is_some() {
                    return e;
                }
            }
        }
        self.error_at(fallback, msg)
    }
}

/// Whether `v` is `needle`, or holds it as a key or a value at any depth.
fn mentions(v: &Value, needle: &str) -> bool {
    match v {
        Value::Mapping(m) => m.iter().any(|(k, x)| mentions(k, needle) || mentions(x, needle)),
        Value::Sequence(s) => s.iter().any(|x| mentions(x, needle)),
        other => yaml::show(other) == needle,
    }
}

/// The parameter named by a block's message: ``unknown field `x` `` or `x = 7: must be …`.
fn field_named(msg: &str) -> Option<&str> {
    if let Some(rest) = msg.split("unknown field `").nth(1) {
        return rest.split('`').next();
    }
    let Some(eq) = msg.find(" = ") else {
        // `instance `x`: bandwidth -1 must be ≥ 0`: the word after the place.
        let rest = msg.rsplit("`: ").next()?;
        let word = rest.split(' ').next()?;
        return Some(word).filter(|w| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_'));
    };
    let head = &msg[..eq];
    let start = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    Some(&head[start..]).filter(|f| !f.is_empty())
}

/// Reads and parses a testbench and its includes.
pub fn load(path: &Path) -> Result<Loaded, InputError> {
    load_text(path, yaml::read(path)?)
}

/// Reads and parses a testbench and its includes, then applies `--set` overrides.
pub fn load_with(path: &Path, overrides: &[Override]) -> Result<Loaded, InputError> {
    load_text_with(path, yaml::read(path)?, overrides)
}

/// Parses `text` as the testbench at `path` (includes are read relative to it).
pub fn load_text(path: &Path, text: String) -> Result<Loaded, InputError> {
    load_text_with(path, text, &[])
}

/// Included settings: per-kind defaults, system settings, and the files read.
type Includes = (BTreeMap<String, Value>, Value, Vec<PathBuf>);

fn read_includes(path: &Path, text: &str, tb: &Testbench) -> Result<Includes, InputError> {
    let mut defaults: BTreeMap<String, Value> = BTreeMap::new();
    let mut system_defaults = Value::Null;
    let mut files = vec![path.to_path_buf()];
    for inc in &tb.include {
        let candidates = [path.parent().unwrap_or(Path::new(".")).join(inc), PathBuf::from(inc)];
        let Some(file) = candidates.iter().find(|p| p.is_file()) else {
            // Say what is there when something is: a folder or a device is no include.
            let what = candidates.iter().find_map(|p| std::fs::metadata(p).ok()).map(|m| {
                if m.is_dir() {
                    "is a folder, not a file"
                } else {
                    "is not a regular file"
                }
            });
            return Err(InputError::at_key(
                path,
                text,
                inc,
                match what {
                    Some(w) => format!("include `{inc}` {w}"),
                    None => format!("include `{inc}` not found"),
                },
            ));
        };
        files.push(file.clone());
        let ctext = yaml::read(file)?;
        let cfg: ConfigFile = yaml::parse(file, &ctext)?;
        for (k, v) in cfg.defaults {
            let merged = yaml::merge(defaults.get(&k).unwrap_or(&Value::Null), &v);
            defaults.insert(k, merged);
        }
        if let Some(s) = cfg.system {
            include_system_keys(file, &ctext, &s)?;
            system_defaults = yaml::merge(&system_defaults, &s);
        }
    }
    Ok((defaults, system_defaults, files))
}

/// What an include's `system:` may set: the settings merged under the testbench's. A topology,
/// traffic or faults there would be silently ignored (the testbench's own are the run), so they
/// are refused at their line in the include.
fn include_system_keys(file: &Path, text: &str, s: &Value) -> Result<(), InputError> {
    const KEYS: [&str; 3] = ["chip", "switch", "link"];
    let Value::Mapping(m) = s else {
        return Err(InputError::at_key(
            file,
            text,
            "system",
            "an include's `system:` is a mapping of chip, switch, link settings",
        ));
    };
    for k in m.keys() {
        let name = yaml::show(k);
        if !KEYS.contains(&name.as_str()) {
            return Err(InputError::at_key(
                file,
                text,
                &name,
                format!(
                    "`system.{name}` in an include is not used: an include's `system:` sets {} (the testbench gives the topology, traffic and faults)",
                    KEYS.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// [`load_text`] with `--set` overrides, applied in order after the file parsed (an override's
/// error names it; see crate::input::overrides).
pub fn load_text_with(path: &Path, text: String, overrides: &[Override]) -> Result<Loaded, InputError> {
    let mut tb: Testbench = yaml::parse(path, &text)?;
    let (mut defaults, mut system_defaults, mut files) = read_includes(path, &text, &tb)?;
    if !overrides.is_empty() {
        let mut doc: Value = yaml::parse(path, &text)?;
        let mut base = crate::input::yaml::Mapping::new();
        base.insert("system".into(), system_defaults.clone());
        base.insert("defaults".into(), yaml::to_value(&defaults));
        let base = Value::Mapping(base);
        for o in overrides {
            crate::input::overrides::apply(&mut doc, &base, o)?;
            tb = yaml::from_value(doc.clone()).map_err(|m| o.error(m))?;
        }
        if overrides.iter().any(|o| o.path[0] == "include") {
            (defaults, system_defaults, files) = read_includes(path, &text, &tb)?;
        }
    }
    let blocks = registry::blocks();
    for (k, v) in &tb.defaults {
        if registry::find(&blocks, k).is_none() {
            let msg = format!("defaults for unknown block kind `{k}` (see `hwsim list`)");
            if let Some(o) = overrides
                .iter()
                .find(|o| o.path.len() > 1 && o.path[0] == "defaults" && &o.path[1] == k)
            {
                return Err(o.error(msg));
            }
            return Err(InputError::at_key(path, &text, k, msg));
        }
        let merged = yaml::merge(defaults.get(k).unwrap_or(&Value::Null), v);
        defaults.insert(k.clone(), merged);
    }
    // A window the zoom cannot fit is refused where it is written (`check` as well as `run`).
    if let Some([a, b]) = tb.view.as_ref().and_then(|v| v.window) {
        if b <= a {
            let msg = format!("view.window [{a}, {b}] is empty or reversed: give [from, to] with from < to");
            if let Some(o) = crate::input::overrides::last_at(overrides, &["view", "window"]) {
                return Err(o.error(msg));
            }
            return Err(InputError::at_key(path, &text, "window", msg));
        }
    }
    // A group title is a line of the .gtkw save file: a control character (a line break) would
    // write a line GTKWave reads as a command.
    for (i, g) in tb.view.iter().flat_map(|v| v.groups.iter()).enumerate() {
        // A group of no signals would be left out of the view without a word.
        // A value a `--set` made is reported at that `--set`, not at a line of the file.
        let item = i.to_string();
        let at = |field: &str, msg: String| match crate::input::overrides::last_at(
            overrides,
            &["view", "groups", &item, field],
        ) {
            Some(o) => o.error(msg),
            None => InputError::at_item(path, &text, "groups", i, field, msg),
        };
        if g.signals.is_empty() {
            return Err(at(
                "signals",
                format!(
                    "view.groups[{i}] (`{}`) lists no signals: give it at least one (a name or a glob)",
                    g.title.escape_debug()
                ),
            ));
        }
        // Besides the control characters: the line and paragraph separators (a line break to a
        // reader that honours them) and the bidirectional overrides and isolates, which would
        // show the title's text in an order other than the bytes' (U+202E).
        let unprintable = |c: &char| {
            c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        };
        if let Some(c) = g.title.chars().find(unprintable) {
            return Err(at(
                "title",
                format!(
                    "view.groups[{i}].title holds a control character (U+{:04X}): a title is one line of printable text",
                    c as u32
                ),
            ));
        }
    }
    Ok(Loaded {
        path: path.to_path_buf(),
        text,
        tb,
        defaults,
        system_defaults,
        files,
        max_memory: DEFAULT_MAX_MEMORY,
        overrides: overrides.to_vec(),
        resolved: std::cell::RefCell::new(None),
    })
}
