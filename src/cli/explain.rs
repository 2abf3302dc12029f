//! `hwsim explain KIND`: a block kind's header, parameters and ports.

use std::process::ExitCode;

use hwsim::explain;

use super::io::{bad, emit_then};

/// `hwsim explain`.
pub(crate) fn main(block: &str) -> ExitCode {
    match explain::explain(block) {
        Ok(t) => emit_then(&t, ExitCode::SUCCESS),
        Err(e) => bad(e),
    }
}
