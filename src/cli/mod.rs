//! The `hwsim` binary's parts: the grammar (args.rs), what every subcommand shares (io.rs),
//! `run` (run.rs) and the subcommands that inspect a testbench (inspect.rs). main.rs parses
//! and dispatches; the work is in the library.

pub(crate) mod args;
pub(crate) mod inspect;
pub(crate) mod io;
pub(crate) mod run;
