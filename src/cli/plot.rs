//! `hwsim plot CSV`: a probe or sweep table as SVG / PNG.

use std::process::ExitCode;

use hwsim::commands;

use super::io::{done, on_interrupt};

/// `hwsim plot`: the first SIGINT / SIGTERM stops it cleanly, a second at once (130).
pub(crate) fn main(a: commands::PlotArgs) -> ExitCode {
    match on_interrupt() {
        Ok(f) => done(commands::plot(a, Some(&f))),
        Err(e) => e,
    }
}
