//! RTL in the loop: a testbench's `rtl:` section runs a Verilog / SystemVerilog module beside a
//! node of the model, cycle by cycle, in the same run.
//!
//! ```yaml
//! rtl:
//!   arb:
//!     instance: chip0.lg7.tx.arbiter       # the node (any path of the netlist)
//!     mode: shadow                          # the model drives; the RTL is compared (or
//!                                           # `replace`: the RTL drives, see [`replace`])
//!     sources: [../../examples/rtl/vc_arbiter.sv]   # relative to the testbench's folder
//!     top: vc_arbiter
//!     parameters: {PLANT_BUG: 0}            # Verilog parameters (-G)
//!     clock: clk                            # default clk
//!     reset: rst                            # active high; "!rst_n" active low
//!     map:                                  # the node's port fields -> the RTL's ports
//!       req.valid: req_valid
//!       req.eligible: req_eligible
//!       grant.vc: {signal: grant_vc, when: grant.valid}
//!       ptr: {signal: ptr, offset: 1}       # a register: one cycle after the model
//! ```
//!
//! **Shadow.** Every cycle `c` the RTL gets the values the node's input ports have on the wave
//! at `c` (what `hwsim vectors --instance` writes in row `c`), then the clock edge that ends `c`;
//! each mapped output is compared with the model's at `c − offset`, under its `when` field if it
//! has one. The first divergence stops the run: a failed check names the cycle, the instance,
//! the field and the RTL's port with both values, and the last 64 cycles of the node's inputs
//! are written as a vectors CSV beside the build, to replay the RTL alone. A run that agrees
//! reports a passing check with the signals and cycles compared. The RTL runs every cycle, so a
//! run with a shadow steps the kernel one cycle at a time (results unchanged; idle cycles are
//! no longer free).
//!
//! **Build.** Verilator (Debian's package) through a generated shim, cached under
//! `$HWSIM_RTL_DIR` (default `.hwsim-rtl/` in the working directory): see [`build`]. Every RTL
//! input but the clock and reset must be mapped, widths must match the model's field widths
//! (both named in the error), ports wider than 64 bits are refused; all exit 2.
//!
//! **Replace.** `mode: replace` puts the RTL in the node's place: see [`replace`].
//!
//! **Hangs.** Each wait for the RTL simulator is bounded by the entry's `timeout_s` (default
//! [`DEFAULT_TIMEOUT_S`]): past it the process is stopped and the run ends with the cycle it
//! was stuck in ([`watchdog`]).

pub mod build;
pub mod replace;
mod shadow;
pub mod watchdog;

pub use shadow::{start, Divergence, Shadow};

use std::io::{BufReader, BufWriter};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};

use crate::build::testbench::Loaded;
use crate::input::schema::Rtl;
use crate::input::yaml::InputError;

/// Cycles of inputs kept for the reproduction CSV.
pub const KEEP: usize = 64;

/// Seconds hwsim waits for one answer of the RTL simulator before it stops it.
pub const DEFAULT_TIMEOUT_S: f64 = 10.0;

/// Cycles sent to the RTL before its answers are read.
pub const BATCH: usize = 256;

/// Where builds are cached.
fn cache_dir() -> PathBuf {
    std::env::var_os("HWSIM_RTL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".hwsim-rtl"))
}

fn no_node(spec: &Rtl, err: &dyn Fn(&str, String) -> InputError) -> InputError {
    err(
        &spec.instance,
        format!(
            "instance `{}`: no such node in the netlist (`hwsim netlist TB --dot F` draws them)",
            spec.instance
        ),
    )
}

/// A name hwsim may put into a file name or a generated program: ASCII letters, digits and `_`
/// (and `-`, not first, for an entry's name), not starting with a digit for an identifier, at
/// most 64 characters.
fn plain_name(s: &str, entry: bool) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    s.len() <= 64
        && (first.is_ascii_alphabetic() || first == '_' || (entry && first.is_ascii_digit()))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (entry && c == '-'))
}

/// A built RTL model, started and waiting for its first cycle.
pub(crate) struct Launched {
    pub built: build::Built,
    /// The reset input's name (without the `!` of an active-low one).
    pub reset: Option<String>,
    /// Where builds are cached (and a divergence's CSV goes).
    pub dir: PathBuf,
    /// The RTL simulator's process, under a bound on each wait for it.
    pub watch: watchdog::Watchdog,
    pub to: BufWriter<ChildStdin>,
    pub from: BufReader<ChildStdout>,
}

/// Checks an entry's sources, builds its RTL (or finds the cached build) and starts it.
pub(crate) fn launch(l: &Loaded, name: &str, spec: &Rtl) -> Result<Launched, InputError> {
    let err = |needle: &str, m: String| l.error_at(needle, format!("rtl `{name}`: {m}"));
    // The entry's name becomes a file name in the cache (`<name>.diverged.csv`), the top and
    // the clock and reset names go into a folder name and a generated C++ program: a `/`, a
    // `..` or a quote in them would write outside the cache or into the program's text.
    let reset = spec
        .reset
        .as_deref()
        .map(|r| r.strip_prefix('!').map_or((r, false), |n| (n, true)));
    if !plain_name(name, true) {
        return Err(err(
            name,
            "the entry's name names the divergence file in the cache: letters, digits, `_` and `-` only (at most 64)"
                .into(),
        ));
    }
    for (what, v) in [
        ("top", Some(spec.top.as_str())),
        ("clock", Some(spec.clock.as_str())),
        ("reset", reset.map(|r| r.0)),
    ] {
        if let Some(v) = v.filter(|v| !plain_name(v, false)) {
            return Err(err(
                v,
                format!("{what}: `{v}` is not a Verilog identifier (a letter or `_`, then letters, digits and `_`; at most 64)"),
            ));
        }
    }
    if spec.sources.is_empty() {
        return Err(err("sources", "sources: name at least one Verilog file".into()));
    }
    let limit = spec.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
    if !(limit.is_finite() && limit > 0.0 && limit <= 86_400.0) {
        return Err(err(
            "timeout_s",
            format!("timeout_s: {limit}: seconds to wait for one answer of the RTL, more than 0, at most 86400"),
        ));
    }
    let base = l.path.parent().unwrap_or(Path::new("."));
    let sources: Vec<PathBuf> = spec.sources.iter().map(|s| base.join(s)).collect();
    for (s, p) in spec.sources.iter().zip(&sources) {
        if !p.is_file() {
            let what = match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => "a folder, not a Verilog file",
                Ok(_) => "not a regular file (a device or a pipe), not a Verilog file",
                Err(_) => "no such file",
            };
            return Err(err(s, format!("source `{s}`: {what} ({})", p.display())));
        }
    }
    let req = build::Request {
        sources: &sources,
        top: &spec.top,
        parameters: &spec.parameters,
        clock: &spec.clock,
        reset,
    };
    let dir = cache_dir();
    let t0 = std::time::Instant::now();
    let built = build::build(&req, &dir).map_err(|m| err(&spec.top, m))?;
    if built.fresh {
        // A note, not part of the report (a cached build says nothing).
        eprintln!(
            "hwsim: rtl `{name}`: built {} with Verilator in {:.1} s ({})",
            spec.top,
            t0.elapsed().as_secs_f64(),
            built.exe.parent().unwrap_or(&dir).display()
        );
    }
    // An input hwsim cannot drive would sit at 0 while the run passes.
    let driven_by_hwsim = |n: &str| n == spec.clock || reset.is_some_and(|r| r.0 == n);
    if let Some(p) = built
        .ports
        .iter()
        .find(|p| p.input && p.width > 64 && !driven_by_hwsim(&p.name))
    {
        return Err(err(
            &spec.top,
            format!(
                "the top `{}` has a {}-bit input `{}`: hwsim drives inputs of at most 64 bits (give the top narrower ports)",
                spec.top, p.width, p.name
            ),
        ));
    }
    // In a process group of its own, which the watchdog kills whole: what the RTL starts (a
    // `$system("sleep 60")`) inherits the pipes, and killing the simulator alone would leave
    // them open and the wait for an answer running on.
    let mut child = Command::new(&built.exe)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| err(&spec.top, format!("{}: cannot start: {e}", built.exe.display())))?;
    let to = BufWriter::new(child.stdin.take().expect("piped"));
    let from = BufReader::new(child.stdout.take().expect("piped"));
    let watch = watchdog::Watchdog::new(child, std::time::Duration::from_secs_f64(limit));
    Ok(Launched {
        built,
        reset: reset.map(|r| r.0.to_string()),
        dir,
        watch,
        to,
        from,
    })
}

/// The RTL's inputs (but clock and reset), each with what feeds it: refused, naming the first
/// input nothing feeds and the node's fields (`names`), if one is unmapped.
pub(crate) fn every_input_mapped<T>(
    rtl_ins: &[&build::RtlPort],
    ins: Vec<Option<T>>,
    inst: &str,
    names: &str,
    err: &dyn Fn(&str, String) -> InputError,
) -> Result<Vec<T>, InputError> {
    rtl_ins
        .iter()
        .zip(ins)
        .map(|(p, f)| {
            f.ok_or_else(|| {
                err(
                    "map",
                    format!(
                        "map: the RTL's input `{}` is driven by no field of `{inst}` (map it: one of {names})",
                        p.name
                    ),
                )
            })
        })
        .collect()
}
