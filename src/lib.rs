//! hwsim: the application layer. Config and testbench schemas, the registry of block kinds,
//! elaboration of testbenches into netlists, the runner with its checks and reports, and the
//! regression runner. The `hwsim` binary (src/main.rs) is a thin clap front end over this.

pub mod budget;
pub mod check_policy;
pub mod commands;
pub mod connect_pattern;
pub mod csv;
pub mod diff;
pub mod event_log;
pub mod explain;
pub mod gtkw;
pub mod junit;
pub mod monitors;
pub mod output;
pub mod overrides;
pub mod plot;
pub mod plot_label;
pub mod probe;
pub mod progress;
pub mod registry;
pub mod regress;
pub mod render;
pub mod report;
pub mod rtl;
pub mod runner;
pub mod schema;
pub mod sweep;
pub mod sweep_jobs;
pub mod sweep_notes;
pub mod system;
pub mod testbench;
pub mod values;
pub mod vectors;
pub mod verdict;
pub mod wave_check;
pub mod wave_outputs;
pub mod waves;
pub mod yaml;
