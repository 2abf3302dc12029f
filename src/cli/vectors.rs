//! `hwsim vectors TB --out DIR [--instance PATH]`: a node's ports cycle by cycle, as CSV.

use std::path::Path;
use std::process::ExitCode;

use hwsim::vectors;

use super::io::{bad, emit_then, on_interrupt};

/// `hwsim vectors`: an interrupt ends it with what it wrote so far, and 130.
pub(crate) fn main(testbench: &Path, out: &Path, instance: &[String]) -> ExitCode {
    let interrupt = match on_interrupt() {
        Ok(f) => f,
        Err(e) => return e,
    };
    match vectors::run(testbench, out, instance, Some(&interrupt)) {
        Ok(text) if interrupt.load(std::sync::atomic::Ordering::Relaxed) => emit_then(&text, ExitCode::from(130)),
        Ok(text) => emit_then(&text, ExitCode::SUCCESS),
        Err(e) => bad(e),
    }
}
