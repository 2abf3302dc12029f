//! What every subcommand shares: an error as one line and exit 2, stdout that survives a closed
//! pipe, the interrupt flag, a testbench loaded with `--set` and a memory budget.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use hwsim::{output, overrides, runner, testbench, yaml};

/// Bad input: one line on stderr, exit 2.
pub(crate) fn bad(msg: impl std::fmt::Display) -> ExitCode {
    // Not eprintln!: it panics when stderr itself cannot be written (`2>/dev/full`).
    let _ = writeln!(std::io::stderr(), "hwsim: {msg}");
    ExitCode::from(2)
}

/// Writes `text` to stdout. A closed pipe (`hwsim list | head -1`) ends the output quietly, as
/// Unix tools do: the reader has what it wanted, and the command keeps its own exit status. Any
/// other write error (`> /dev/full`) is bad output, exit 2.
pub(crate) fn emit(text: &str) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(bad(format!("stdout: cannot write: {e}"))),
    }
}

/// `emit`, then `code` (or exit 2 if stdout failed).
pub(crate) fn emit_then(text: &str, code: ExitCode) -> ExitCode {
    emit(text).err().unwrap_or(code)
}

/// SIGINT / SIGTERM: the first sets the returned flag (a run stops at the end of the current
/// slice, with a valid VCD and report; a regression stops its running testbenches so and starts
/// no other); a second one, with the flag already set, exits 130 at once.
pub(crate) fn on_interrupt() -> Result<Arc<AtomicBool>, ExitCode> {
    let interrupt = Arc::new(AtomicBool::new(false));
    let signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]);
    let mut signals = match signals {
        Ok(s) => s,
        Err(e) => return Err(bad(format!("cannot install the signal handler: {e}"))),
    };
    let flag = Arc::clone(&interrupt);
    // The first signal asks the run to stop (it ends the cycle, writes what it has and says
    // `interrupted`); a second ends the process at once with 130, its temporary files removed
    // first (the unwinding that would have removed them does not happen).
    std::thread::spawn(move || {
        for _ in signals.forever() {
            if flag.swap(true, std::sync::atomic::Ordering::SeqCst) {
                output::remove_temporaries_and_exit(130);
            }
        }
    });
    Ok(interrupt)
}

/// SIGINT / SIGTERM end the process at once with 130 (for a command that writes no file).
pub(crate) fn exit_on_interrupt() -> Result<(), ExitCode> {
    let armed = Arc::new(AtomicBool::new(true));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&armed)) {
            return Err(bad(format!("cannot install the signal handler: {e}")));
        }
    }
    Ok(())
}

/// The outcome of a subcommand in commands.rs: its text and status, or bad input.
pub(crate) fn done(r: Result<(String, u8), yaml::InputError>) -> ExitCode {
    match r {
        Ok((text, code)) => emit_then(&text, ExitCode::from(code)),
        Err(e) => bad(e),
    }
}

/// Loads a testbench with `--set` overrides and a memory budget of `max_memory_gib`.
pub(crate) fn load(tb: &Path, max_memory_gib: u64, set: &[String]) -> Result<testbench::Loaded, ExitCode> {
    let sets = set
        .iter()
        .map(|a| overrides::parse(a))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    let mut l = testbench::load_with(tb, &sets).map_err(bad)?;
    l.max_memory = max_memory_gib.saturating_mul(1 << 30);
    Ok(l)
}

/// `load`, then what `run` refuses before building (an `until` past 2^62, a flow or a warm-up
/// window after the end): `check` and `config` refuse it too, so neither accepts a testbench no
/// run accepts.
pub(crate) fn load_runnable(tb: &Path, max_memory_gib: u64, set: &[String]) -> Result<testbench::Loaded, ExitCode> {
    let l = load(tb, max_memory_gib, set)?;
    runner::validate_run(&l, None).map_err(bad)?;
    Ok(l)
}
