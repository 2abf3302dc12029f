//! `hwsim regress DIR`: every testbench under a folder, in parallel, with JUnit / JSON for CI.

use std::process::ExitCode;

use hwsim::commands;

use super::io::{done, on_interrupt};

/// `hwsim regress`: the first SIGINT / SIGTERM stops it cleanly, a second at once (130).
pub(crate) fn main(a: commands::RegressArgs) -> ExitCode {
    match on_interrupt() {
        Ok(f) => done(commands::regress(a, &f)),
        Err(e) => e,
    }
}
