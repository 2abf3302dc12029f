//! The `hwsim` binary's parts: the grammar (args.rs), what every subcommand shares (io.rs),
//! and one file per subcommand, each with a `main` that returns the exit status. main.rs
//! parses and dispatches; the work is in the library.

pub(crate) mod args;
pub(crate) mod check;
pub(crate) mod config;
pub(crate) mod diff;
pub(crate) mod explain;
pub(crate) mod io;
pub(crate) mod list;
pub(crate) mod netlist;
pub(crate) mod plot;
pub(crate) mod regress;
pub(crate) mod run;
pub(crate) mod sweep;
pub(crate) mod vectors;
