//! `hwsim diff A B`: two waves compared through a map (exit 1 when they differ).

use std::io::Write;
use std::process::ExitCode;

use hwsim::diff;

use super::io::{bad, emit_then, exit_on_interrupt};

/// `hwsim diff`: it writes no file, so an interrupt ends it at once, with 130.
pub(crate) fn main(a: &diff::DiffArgs) -> ExitCode {
    match exit_on_interrupt().and_then(|_| diff::run(a).map_err(bad)) {
        Ok((text, same, warnings)) => {
            for w in warnings {
                let _ = writeln!(std::io::stderr(), "hwsim: {w}");
            }
            emit_then(&text, if same { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Err(code) => code,
    }
}
