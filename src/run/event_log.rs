//! `--log SPEC`: which blocks' events go to the event log, and where (hw::EventLog).
//!
//! SPEC is a comma-separated list of selectors, given once or several times: an event class
//! (`nak`, `drop`, …: `hwsim --log help`), a block kind (`psn_check`, `l2_switch_core`), or a
//! path glob (`chip1.*`; a scope selects every block below it, as `--trace` does). Events are
//! logged of the classes named (all, if none is) from the blocks named by kind or path (all,
//! if none is). A selector that is none of the three is refused, naming the classes.

use std::io::Write;
use std::path::{Path, PathBuf};

use hwsim_hw::{EventLog, Sim};
use hwsim_modules::events::{is_class, EVENT_CLASSES};

use crate::input::yaml::InputError;

/// Lines written before the log stops (`--log-max`'s default).
pub const DEFAULT_MAX_LINES: u64 = 1_000_000;

/// The text of `hwsim --log help`.
pub fn help() -> String {
    let mut s = String::from(
        "--log SPEC: one line per event, `cycle path class key=value …`, to stderr or --log-file.\n\
         SPEC: comma-separated event classes, block kinds (hwsim list) and path globs (chip1.*);\n\
         events of the classes named (all if none) from the blocks named (all if none).\n\nclasses:\n",
    );
    for (c, what) in EVENT_CLASSES {
        s.push_str(&format!("  {c:<8} {what}\n"));
    }
    s.push_str(
        "\nOn the waves (--vcd), one-cycle pulses `ev_<class>` beside the ports of the block that decides them:\n",
    );
    for (kind, classes) in hwsim_modules::events::KIND_EVENTS {
        s.push_str(&format!("  {kind:<15} {}\n", classes.join(", ")));
    }
    s
}

/// The log `spec` asks for over `sim`'s blocks, writing to `out`, at most `max_lines` lines.
pub fn build(spec: &[String], sim: &Sim, out: Box<dyn Write>, max_lines: u64) -> Result<EventLog, InputError> {
    let tokens: Vec<&str> = spec
        .iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let blocks: Vec<(&str, &str)> = sim.components().collect();
    let mut classes = Vec::new();
    let mut kinds = Vec::new();
    let mut globs = Vec::new();
    for t in tokens {
        if is_class(t) {
            classes.push(t.to_string());
        } else if blocks.iter().any(|(_, k)| *k == t) {
            kinds.push(t);
        } else if blocks
            .iter()
            .any(|(p, _)| hwsim_hw::trace_selected(&[t.to_string()], p))
        {
            globs.push(t.to_string());
        } else {
            let names: Vec<&str> = EVENT_CLASSES.iter().map(|(c, _)| *c).collect();
            return Err(InputError::new(
                Path::new("--log"),
                format!(
                    "`{}` is no event class ({}), no kind of block in this run, and no block's path (paths look like `{}`; `hwsim --log help`)",
                    t.escape_debug(),
                    names.join(", "),
                    blocks.first().map_or("", |b| b.0)
                ),
            ));
        }
    }
    let all = kinds.is_empty() && globs.is_empty();
    let on: Vec<bool> = blocks
        .iter()
        .map(|(p, k)| all || kinds.contains(k) || (!globs.is_empty() && hwsim_hw::trace_selected(&globs, p)))
        .collect();
    let paths = blocks.iter().map(|(p, _)| p.to_string()).collect();
    let classes = (!classes.is_empty()).then_some(classes);
    Ok(EventLog::new(on, paths, classes, out, max_lines))
}

/// An event log being written: where, for [`OpenLog::close`].
pub struct OpenLog {
    staged: Option<crate::report::output::Staged>,
    name: PathBuf,
}

/// Turns `sim`'s event log on as `spec` asks (nothing if `spec` is empty): into `file` through
/// a temporary name (crate::report::output), or to stderr; at most `max_lines` lines (0: the default).
pub fn open(spec: &[String], file: Option<&Path>, max_lines: u64, sim: &mut Sim) -> Result<OpenLog, InputError> {
    let name = file.map_or_else(|| PathBuf::from("the event log (stderr)"), Path::to_path_buf);
    let mut staged = None;
    if !spec.is_empty() {
        let out: Box<dyn Write> = match file {
            Some(p) => {
                let (f, s) = crate::report::output::stage(p)?;
                staged = Some(s);
                Box::new(std::io::BufWriter::new(f))
            }
            None => Box::new(std::io::BufWriter::new(std::io::stderr())),
        };
        let max = if max_lines == 0 { DEFAULT_MAX_LINES } else { max_lines };
        let log = build(spec, sim, out, max)?;
        sim.set_event_log(log);
    }
    Ok(OpenLog { staged, name })
}

impl OpenLog {
    /// Writes what is pending, flushes, and moves a log file into place.
    pub fn close(self, sim: &mut Sim) -> Result<(), InputError> {
        sim.finish_events()
            .map_err(|e| InputError::new(&self.name, format!("cannot write: {e}")))?;
        match self.staged {
            Some(s) => s.commit(),
            None => Ok(()),
        }
    }
}
