//! `hwsim sweep TB --param P=V,…`: a grid of runs, its table and chart.

use std::process::ExitCode;

use hwsim::commands;

use super::io::{done, on_interrupt};

/// `hwsim sweep`: the first SIGINT / SIGTERM stops it cleanly, a second at once (130).
pub(crate) fn main(a: commands::SweepArgs) -> ExitCode {
    match on_interrupt() {
        Ok(f) => done(commands::sweep(a, Some(&f))),
        Err(e) => e,
    }
}
