//! Loading a testbench (with its includes) and elaborating its module form into a netlist:
//! instances, bindings, stimulus drivers, sinks for unconnected stream outputs, and the watch
//! list the checks read after the run.

use std::any::TypeId;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use hwsim_hw::{Dir, ElabError, Netlist, Shape, Timing};

use crate::overrides::Override;
use crate::registry::{self, BlockKind};
use crate::schema::{ConfigFile, Testbench};
use crate::values::{self, Rows, ValueOps};
use crate::yaml::{self, InputError, Value};

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
/// error names it; see crate::overrides).
pub fn load_text_with(path: &Path, text: String, overrides: &[Override]) -> Result<Loaded, InputError> {
    let mut tb: Testbench = yaml::parse(path, &text)?;
    let (mut defaults, mut system_defaults, mut files) = read_includes(path, &text, &tb)?;
    if !overrides.is_empty() {
        let mut doc: Value = yaml::parse(path, &text)?;
        let mut base = crate::yaml::Mapping::new();
        base.insert("system".into(), system_defaults.clone());
        base.insert("defaults".into(), yaml::to_value(&defaults));
        let base = Value::Mapping(base);
        for o in overrides {
            crate::overrides::apply(&mut doc, &base, o)?;
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
            if let Some(o) = crate::overrides::last_at(overrides, &["view", "window"]) {
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
        let at =
            |field: &str, msg: String| match crate::overrides::last_at(overrides, &["view", "groups", &item, field]) {
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

/// A port the checks will read.
#[derive(Clone, Debug)]
pub struct Watch {
    /// Endpoint `inst.port`.
    pub endpoint: String,
    /// Value type.
    pub type_id: TypeId,
    /// Signal or stream.
    pub shape: Shape,
    /// Whether a check needs the port's history. A stream whose checks only count every push
    /// of the run reads the stream's own push count: 10^8 pushes cost a counter, not a log.
    pub log: bool,
}

/// One traffic flow: a (source chip, destination chip, CDMA) stream of transactions.
#[derive(Debug, Clone)]
pub struct FlowInfo {
    /// Label.
    pub name: String,
    /// Source chip.
    pub src: u16,
    /// Flow index within the source chip's PAXI.
    pub local: u16,
}

/// What the runner needs besides the netlist.
#[derive(Debug, Clone, Default)]
pub struct SystemInfo {
    /// Chips.
    pub chips: u16,
    /// Link groups per chip.
    pub num_lg: u8,
    /// Flows, in definition order.
    pub flows: Vec<FlowInfo>,
    /// Whether faults are injected (then NAKs and duplicates are expected).
    pub lossy: bool,
}

/// The elaborated testbench.
pub struct Elaborated {
    /// The netlist.
    pub netlist: Netlist,
    /// Ports referenced by checks.
    pub watches: BTreeMap<String, Watch>,
    /// Value operations by type.
    pub values: HashMap<TypeId, ValueOps>,
    /// System form: flows and topology facts.
    pub system: Option<SystemInfo>,
    /// Instances per kind (count, whether the kind is a composite), filled when the netlist is
    /// elaborated (`hwsim check` prints them).
    pub kinds: BTreeMap<String, (usize, bool)>,
    /// System form: the counters the always-on monitors read, bound at elaboration.
    pub monitor_counters: Option<crate::monitors::MonitorCounters>,
    /// Paths of the nets whose ports are declared levels (`PortDecl::level`): the GTKWave save
    /// file draws them as analog step traces. Filled when the netlist is elaborated.
    pub levels: Vec<String>,
    /// The ports of the nodes a `rtl:` entry stands beside (crate::rtl), kept from the netlist
    /// before it is handed to the kernel.
    pub rtl_ports: BTreeMap<String, Vec<hwsim_hw::PortDecl>>,
    /// The checks of the nodes an RTL drives in place of the model (`rtl:` entries in
    /// `replace` mode), read when the run ends.
    pub rtl_replaced: Vec<Box<dyn Fn() -> crate::verdict::CheckResult>>,
}

/// Resolves the ports the checks read.
pub fn watches(
    l: &Loaded,
    nl: &Netlist,
    values: &HashMap<TypeId, ValueOps>,
) -> Result<BTreeMap<String, Watch>, InputError> {
    let mut watches = BTreeMap::new();
    for e in &l.tb.expect {
        if let Some(ep) = &e.port {
            let d = nl.decl_of(ep).map_err(|e| elab_error(l, e))?;
            if !values.contains_key(&d.type_id) {
                return Err(l.error_at(
                    ep,
                    format!("port `{ep}` carries {}, which checks cannot read", d.type_name),
                ));
            }
            // A value matches on the fields it names, so it may leave some out; but a field the
            // type does not have would make the check fail forever, as a wrong stimulus field
            // is bad input too. Building a driver from it tells (serde names the field).
            let ops = &values[&d.type_id];
            for v in e.value.iter().chain(e.sequence.iter().flatten()) {
                if let Err(m) = ops.driver(Shape::Stream, Timing::Registered, vec![(0, v.clone())]) {
                    if m.contains("unknown field") || m.contains("unknown variant") {
                        let m = m.replace(" at cycle 0:", ":");
                        return Err(l.error_at_param(ep, format!("expect on `{ep}`: {m}")));
                    }
                }
            }
            let counts_only = d.shape == Shape::Stream && e.count.is_some() && e.at.is_none() && e.within.is_none();
            let w = watches.entry(ep.clone()).or_insert(Watch {
                endpoint: ep.clone(),
                type_id: d.type_id,
                shape: d.shape,
                log: false,
            });
            w.log |= !counts_only;
        }
    }
    Ok(watches)
}

/// Where in the file an elaboration error points.
fn needle(e: &ElabError) -> String {
    match e {
        ElabError::DuplicateInstance { path } => path.clone(),
        ElabError::BadName { name } => name.clone(),
        ElabError::BadEndpoint { endpoint } => endpoint.clone(),
        ElabError::UnknownInstance { instance, port } => format!("{instance}.{port}"),
        ElabError::UnknownKind { kind, .. } => kind.clone(),
        ElabError::UnknownPort { instance, port, .. } => format!("{instance}.{port}"),
        ElabError::WrongDirection { endpoint, .. } => endpoint.clone(),
        ElabError::TypeMismatch { to, .. } => to.clone(),
        ElabError::TimingMismatch { to, .. } => to.clone(),
        // The binding that closes the ring (its reader is the first driver's instance).
        ElabError::CombLoop { hops } => hops.last().map(|h| h.1.clone()).unwrap_or_default(),
        ElabError::DoubleDriver { second, .. } => second.clone(),
        ElabError::StreamFanout { second, .. } => second.clone(),
        ElabError::UnboundInput { instance, .. } => instance.clone(),
        ElabError::UnboundStreamOutput { instance, .. } => instance.clone(),
        ElabError::Build { instance, .. } => instance.clone(),
        _ => String::new(),
    }
}

/// Converts an elaboration error into bad input located in the testbench.
pub fn elab_error(l: &Loaded, e: ElabError) -> InputError {
    let n = needle(&e);
    // Instance arrays: `stage3` is written as `stage` in the file.
    let trimmed = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').to_string();
    let mut err = l.error_at(&n, e.to_string());
    if err.line.is_none() {
        err = l.error_at(&trimmed, e.to_string());
    }
    if err.line.is_none() {
        // A block built by the system form (`link0_1`) is not in the file; its parameter is.
        err = l.error_at_param(&trimmed, e.to_string());
    }
    if err.line.is_none() {
        // `stage3.inn` from a chain: point at the port name or the array's name.
        if let Some((inst, port)) = n.rsplit_once('.') {
            let base = inst.trim_end_matches(|c: char| c.is_ascii_digit());
            for cand in [port, base] {
                let e2 = l.error_at(cand, e.to_string());
                if e2.line.is_some() {
                    return e2;
                }
            }
        }
    }
    err
}

fn sanitize(endpoint: &str) -> String {
    endpoint.replace('.', "_")
}

/// Builds the netlist of a module-form testbench: the instances, the connections, a driver per
/// driven input, sinks for the streams nothing consumes; then the budget and the watches.
pub fn elaborate(l: &Loaded) -> Result<Elaborated, InputError> {
    let blocks = registry::blocks();
    let values = values::registry();
    let mut nl = Netlist::new();
    let counts = add_instances(l, &blocks, &mut nl)?;
    let bound_outputs = add_connections(l, &mut nl, &counts)?;
    add_stimulus(l, &mut nl, &values)?;
    add_sinks(l, &mut nl, &values, &bound_outputs)?;
    check_txn_budget(l, &blocks, &nl)?;
    let watches = watches(l, &nl, &values)?;
    Ok(Elaborated {
        netlist: nl,
        watches,
        values,
        system: None,
        kinds: BTreeMap::new(),
        monitor_counters: None,
        levels: Vec::new(),
        rtl_ports: BTreeMap::new(),
        rtl_replaced: Vec::new(),
    })
}

/// The testbench's instances (an array of `count` as `name0`, `name1`, …); returns the arrays'
/// sizes by name.
fn add_instances(l: &Loaded, blocks: &[BlockKind], nl: &mut Netlist) -> Result<HashMap<String, u32>, InputError> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for (name, spec) in &l.tb.instances {
        let Some(kind) = registry::find(blocks, &spec.kind) else {
            let known = blocks.iter().map(|b| b.name).collect::<Vec<_>>().join(", ");
            return Err(elab_error(
                l,
                ElabError::UnknownKind {
                    instance: name.clone(),
                    kind: spec.kind.clone(),
                    known,
                },
            ));
        };
        let base = yaml::merge(&kind.defaults, l.defaults.get(&spec.kind).unwrap_or(&Value::Null));
        let params = yaml::merge(&base, &spec.params);
        if let Some(n) = spec.count.filter(|&n| n > MAX_COUNT) {
            return Err(l.error_at(
                name,
                format!("instance `{name}`: count {n} out of range 1..={MAX_COUNT}"),
            ));
        }
        let names: Vec<String> = match spec.count {
            None => vec![name.clone()],
            Some(0) => return Err(l.error_at(name, format!("instance `{name}`: count must be ≥ 1"))),
            Some(n) => (0..n).map(|i| format!("{name}{i}")).collect(),
        };
        if let Some(n) = spec.count {
            counts.insert(name.clone(), n);
        }
        for path in names {
            let (ports, build) = kind
                .make(&params)
                .map_err(|m| l.error_at(name, format!("instance `{name}` ({}): params: {m}", spec.kind)))?;
            l.record_params(&path, kind, &params)
                .map_err(|m| l.error_at(name, format!("instance `{name}` ({}): params: {m}", spec.kind)))?;
            registry::add_instance(nl, &path, kind.name, ports, build).map_err(|e| elab_error(l, e))?;
        }
    }

    Ok(counts)
}

/// The `connect:` entries (one, a pattern, or a chain along an array); returns the outputs
/// bound.
fn add_connections(
    l: &Loaded,
    nl: &mut Netlist,
    counts: &HashMap<String, u32>,
) -> Result<BTreeSet<String>, InputError> {
    let mut bound_outputs: BTreeSet<String> = BTreeSet::new();
    for c in &l.tb.connect {
        // A stream preallocates its capacity: `capacity: 4294967295` would ask for tens of GiB.
        if let Some(cap) = c.capacity.filter(|&x| x == 0 || x > MAX_CAPACITY) {
            return Err(l.error_at(
                "capacity",
                format!(
                    "connect {} → {}: capacity {cap} out of range 1..={MAX_CAPACITY}",
                    c.from, c.to
                ),
            ));
        }
        match &c.chain {
            None if c.from.contains('*') || c.to.contains('*') => {
                for (from, to) in crate::connect_pattern::expand(&|n, m| l.error_at(n, m), nl, &c.from, &c.to)? {
                    nl.connect(&from, &to, c.capacity).map_err(|e| elab_error(l, e))?;
                    bound_outputs.insert(from);
                }
            }
            None => {
                nl.connect(&c.from, &c.to, c.capacity).map_err(|e| elab_error(l, e))?;
                bound_outputs.insert(c.from.clone());
            }
            Some(arr) => {
                let Some(&n) = counts.get(arr) else {
                    return Err(l.error_at(
                        arr,
                        format!("chain `{arr}`: no instance array of that name (give it a `count:`)"),
                    ));
                };
                for i in 0..n.saturating_sub(1) {
                    let from = format!("{arr}{i}.{}", c.from);
                    let to = format!("{arr}{}.{}", i + 1, c.to);
                    nl.connect(&from, &to, c.capacity).map_err(|e| elab_error(l, e))?;
                    bound_outputs.insert(from);
                }
            }
        }
    }

    Ok(bound_outputs)
}

/// Stimulus drivers, one per driven input.
fn add_stimulus(l: &Loaded, nl: &mut Netlist, values: &HashMap<TypeId, ValueOps>) -> Result<(), InputError> {
    let mut rows: BTreeMap<String, Rows> = BTreeMap::new();
    for s in &l.tb.stimulus {
        rows.entry(s.port.clone()).or_default().push((s.at, s.value.clone()));
    }
    for (endpoint, mut r) in rows {
        r.sort_by_key(|(c, _)| *c);
        let decl = nl.decl_of(&endpoint).map_err(|e| elab_error(l, e))?.clone();
        if decl.dir != Dir::In {
            return Err(l.error_at(
                &endpoint,
                format!("stimulus drives `{endpoint}`, which is an output (drive inputs only)"),
            ));
        }
        let ops = values.get(&decl.type_id).ok_or_else(|| {
            l.error_at(
                &endpoint,
                format!(
                    "port `{endpoint}` carries {}, which a testbench cannot drive",
                    decl.type_name
                ),
            )
        })?;
        let (ports, build) = ops
            .driver(decl.shape, decl.timing, r)
            .map_err(|m| l.error_at(&endpoint, format!("stimulus for `{endpoint}`: {m}")))?;
        let drv = format!("tb.drive_{}", sanitize(&endpoint));
        nl.add(&drv, "stimulus", ports, build).map_err(|e| elab_error(l, e))?;
        nl.connect(&format!("{drv}.out"), &endpoint, None)
            .map_err(|e| elab_error(l, e))?;
    }

    Ok(())
}

/// Sinks for stream outputs nothing consumes (a module under test needs someone to take its
/// messages; the checks read them from the stream's log).
fn add_sinks(
    l: &Loaded,
    nl: &mut Netlist,
    values: &HashMap<TypeId, ValueOps>,
    bound_outputs: &BTreeSet<String>,
) -> Result<(), InputError> {
    let mut sinks = Vec::new();
    for (name, spec) in &l.tb.instances {
        let names: Vec<String> = match spec.count {
            None => vec![name.clone()],
            Some(n) => (0..n).map(|i| format!("{name}{i}")).collect(),
        };
        for inst in names {
            for d in nl.ports_of(&inst).unwrap_or(&[]) {
                let ep = format!("{inst}.{}", d.name);
                if d.dir == Dir::Out && d.shape == Shape::Stream && !bound_outputs.contains(&ep) {
                    sinks.push((ep, d.type_id, d.type_name, d.timing, d.width));
                }
            }
        }
    }
    // One sink per value type takes all of that type's streams (one activation per cycle for a
    // block's busy outputs rather than one per output), in the order the outputs were found.
    // (Combinational streams have a sink of their own: its inputs must be combinational too.)
    let mut groups: Vec<((TypeId, Timing), Vec<String>, u32)> = Vec::new();
    for (ep, tid, tname, timing, width) in sinks {
        if !values.contains_key(&tid) {
            return Err(l.error_at(
                &ep,
                format!("stream `{ep}` ({tname}) is unconnected and has no testbench sink"),
            ));
        }
        match groups.iter_mut().find(|(t, ..)| *t == (tid, timing)) {
            Some((_, eps, w)) => {
                eps.push(ep);
                *w = (*w).max(width);
            }
            None => groups.push(((tid, timing), vec![ep], width)),
        }
    }
    for ((tid, timing), eps, width) in groups {
        let ops = &values[&tid];
        // Room for one cycle of a wide stream's pushes (the sink takes them all that cycle).
        let (ports, build) = ops.sink(width.max(2), eps.len(), timing);
        let name: String = ops
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let comb = if timing == Timing::Comb { "comb_" } else { "" };
        let sink = format!("tb.sink_{comb}{name}");
        nl.add(&sink, "sink", ports, build).map_err(|e| elab_error(l, e))?;
        for (k, ep) in eps.iter().enumerate() {
            nl.connect(ep, &format!("{sink}.in{k}"), None)
                .map_err(|e| elab_error(l, e))?;
        }
    }

    Ok(())
}

/// Refuses module-form transactions (a stimulus on a `Txn` port, a `cdma`'s `txns`) whose
/// frames would need more memory than the budget once a `paxi` segments them: every frame of a
/// transaction is queued the cycle it issues, so `bytes: 18446744073709551615` asked for 2^52
/// frames and aborted the run. Charged as in the system form's traffic estimate, at the
/// smallest MPS of the testbench's PAXIs (nothing is segmented without one).
fn check_txn_budget<'a>(l: &'a Loaded, blocks: &[BlockKind], nl: &Netlist) -> Result<(), InputError> {
    let params = |spec: &crate::schema::InstanceSpec| {
        let kind = registry::find(blocks, &spec.kind)?;
        let base = yaml::merge(&kind.defaults, l.defaults.get(&spec.kind).unwrap_or(&Value::Null));
        Some(yaml::merge(&base, &spec.params))
    };
    let Some(mps) =
        l.tb.instances
            .values()
            .filter(|s| s.kind == "paxi")
            .filter_map(|s| params(s)?.get("mps")?.as_u64())
            .filter(|&m| m > 0)
            .min()
    else {
        return Ok(());
    };
    let bytes_of = |v: &Value| v.get("bytes").and_then(Value::as_u64).unwrap_or(0);
    // The largest contributor is the place to point at: a stimulus row (its index) or a cdma.
    let mut total: u64 = 0;
    let mut worst: Option<(u64, Result<usize, &str>)> = None;
    let mut charge = |need: u64, place: Result<usize, &'a str>| {
        total = total.saturating_add(need);
        if worst.as_ref().is_none_or(|(w, _)| need > *w) {
            worst = Some((need, place));
        }
    };
    let txn = TypeId::of::<hwsim_ports::Txn>();
    for (i, s) in l.tb.stimulus.iter().enumerate() {
        if nl.decl_of(&s.port).is_ok_and(|d| d.type_id == txn) {
            charge(crate::budget::txn_memory(bytes_of(&s.value), mps, 1), Ok(i));
        }
    }
    for (name, spec) in l.tb.instances.iter().filter(|(_, s)| s.kind == "cdma") {
        let copies = spec.count.unwrap_or(1) as u64;
        let txns = params(spec).and_then(|p| p.get("txns").cloned());
        let need = txns
            .iter()
            .filter_map(Value::as_sequence)
            .flatten()
            .map(|t| crate::budget::txn_memory(bytes_of(t), mps, copies))
            .fold(0u64, u64::saturating_add);
        charge(need, Err(name.as_str()));
    }
    let what = format!("the transactions a PAXI (MPS {mps}) segments into frames");
    match (crate::budget::over_budget(l.max_memory, total, &what), worst) {
        (Some(msg), Some((_, Ok(i)))) => Err(l.item_error("stimulus", i, "bytes", msg)),
        (Some(msg), Some((_, Err(name)))) => Err(l.error_at(name, msg)),
        _ => Ok(()),
    }
}
