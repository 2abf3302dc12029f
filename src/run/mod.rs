//! The run layer: a built netlist simulated and its results gathered. The runner (the pipeline
//! of a run, its checks and probes), the event log, progress, RTL replace and shadow, the
//! regression runner and its JUnit, sweeps, vectors and the wave outputs, and the subcommands
//! built from them (`commands`). It uses `input/`, `build/` and `report/`.

pub mod commands;
pub mod event_log;
pub mod junit;
pub mod probe;
pub mod progress;
pub mod regress;
pub mod rtl;
pub mod runner;
pub mod sweep;
pub mod sweep_jobs;
pub mod sweep_notes;
pub mod vectors;
pub mod wave_outputs;
