//! hwsim: the application layer, in four layers that read top-down (each folder's mod.rs says
//! what lives there and what it may use):
//!
//! - `input/`: the YAML reader with places, the schema, `--set`, connect patterns;
//! - `build/`: block kinds and values, the module and system forms, budgets, monitors;
//! - `run/`: the runner, RTL, regressions, sweeps, vectors, the subcommands;
//! - `report/`: report types and rendering, waves, diff, plots, the output policy, explain.
//!
//! The `hwsim` binary (src/main.rs, its subcommands in src/cli/) is a thin clap front end over
//! this.

pub mod build;
pub mod input;
pub mod report;
pub mod run;

// The flat paths the binary, the tests and the benches name (`hwsim::runner`, …).
pub use build::{registry, system, testbench, values};
pub use input::{overrides, yaml};
pub use report::{diff, explain, output, plot, render, waves};
pub use run::{commands, event_log, regress, runner, sweep, vectors, wave_outputs};
