//! The command line's grammar (clap): the subcommands and the run's options.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use hwsim::{commands, diff, explain};

#[derive(Parser)]
#[command(name = "hwsim", version = explain::VERSION, about = "Cycle-stepped model of the PAXI / RC Link interconnect", long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Run a testbench (also `hwsim TB.yaml`).
    Run(RunArgs),
    /// Elaborate a testbench only; print instance and net counts.
    Check {
        /// Testbench file.
        testbench: PathBuf,
        /// Memory budget in GiB (as for `run`).
        #[arg(long, value_name = "GIB", default_value_t = 8)]
        max_memory: u64,
        /// Override a field (as for `run`; repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// Print the configuration a testbench resolves to, as YAML: every instance's kind and the
    /// parameters it runs with (includes, presets, the system builder's values, `--set` and
    /// every default filled in).
    Config {
        /// Testbench file.
        testbench: PathBuf,
        /// Memory budget in GiB (as for `run`).
        #[arg(long, value_name = "GIB", default_value_t = 8)]
        max_memory: u64,
        /// Override a field (as for `run`; repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// Run every *.yaml below DIR in parallel; a summary table (JUnit XML, JSON).
    Regress(commands::RegressArgs),
    /// Run a testbench over a grid of --set values; a table (CSV, JSON) and plots.
    Sweep(commands::SweepArgs),
    /// Draw a probe CSV (or a testbench's probes, run first) over time: SVG or PNG.
    Plot(commands::PlotArgs),
    /// One block kind: its documentation, ports, parameters and counters.
    Explain {
        /// Block kind (see `hwsim list`).
        block: String,
    },
    /// Block kinds: ports and parameters with defaults.
    List {
        /// Only the kinds whose name matches this glob (`rclink_*`), or, without `*`/`?`, whose
        /// name or one-line description contains it (`switch`).
        pattern: Option<String>,
    },
    /// Draw a testbench's netlist.
    Netlist {
        /// Testbench file.
        testbench: PathBuf,
        /// Write Graphviz DOT here.
        #[arg(long)]
        dot: PathBuf,
        /// Collapse everything more than N path levels below the scope (or the top) into one
        /// box per path at that depth (`--depth 2`: chips, switches and links, then each chip's
        /// parts).
        #[arg(long, value_name = "N")]
        depth: Option<usize>,
        /// Draw only what is under PATH (`chip0.lg7`), with what it is bound to dashed.
        #[arg(long, value_name = "PATH")]
        scope: Option<String>,
        /// Memory budget in GiB (as for `run`).
        #[arg(long, value_name = "GIB", default_value_t = 8)]
        max_memory: u64,
    },
    /// Compare two waves (VCD or FST) cycle by cycle; exit 0 equal, 1 different.
    Diff(diff::DiffArgs),
    /// Write the per-cycle port values of a testbench's instances as CSV (stimulus and expected
    /// outputs): a module testbench's instances, or the nodes `--instance` names in a system.
    Vectors {
        /// Testbench file (module or system form).
        testbench: PathBuf,
        /// Folder for `<instance>.csv`.
        #[arg(long)]
        out: PathBuf,
        /// An instance (or composite) to write, by path; repeat for several. Needed for a
        /// system-form testbench; in a module-form one it narrows the instances written.
        #[arg(long = "instance", value_name = "PATH")]
        instance: Vec<String>,
    },
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Testbench file.
    pub(crate) testbench: PathBuf,
    /// Write a VCD waveform (a path ending in `.fst` writes FST, as --fst).
    #[arg(long)]
    pub(crate) vcd: Option<PathBuf>,
    /// Write the waveform as FST.
    #[arg(long)]
    pub(crate) fst: Option<PathBuf>,
    /// GTKWave save file (default: the VCD's, else the FST's, path with `.gtkw`).
    #[arg(long)]
    pub(crate) gtkw: Option<PathBuf>,
    /// Seed (overrides the testbench's).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Longest run, cycles (overrides the testbench's `until`).
    #[arg(long)]
    pub(crate) until: Option<u64>,
    /// Tick every component every cycle (results must be identical).
    #[arg(long)]
    pub(crate) no_skip: bool,
    /// Write the report as JSON.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Write every counter as CSV: counter,value,unit.
    #[arg(long, value_name = "FILE")]
    pub(crate) counters_csv: Option<PathBuf>,
    /// Trace only nets matching GLOB (repeatable; `*`, `?`).
    #[arg(long, value_name = "GLOB")]
    pub(crate) trace: Vec<String>,
    /// First cycle written to the VCD.
    #[arg(long)]
    pub(crate) trace_from: Option<u64>,
    /// End of the VCD window (exclusive).
    #[arg(long)]
    pub(crate) trace_to: Option<u64>,
    /// Print only the verdict line.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Print run statistics (cycles/s, activations/s, skip, memory).
    #[arg(long)]
    pub(crate) stats: bool,
    /// Print the counters matching GLOB (all without GLOB); `--counters=GLOB` before the file.
    #[arg(long, value_name = "GLOB", num_args = 0..=1, default_missing_value = "*")]
    pub(crate) counters: Option<String>,
    /// The full report: every counter, every flow, values in full.
    #[arg(short, long)]
    pub(crate) verbose: bool,
    /// Write the testbench's `probe:` samples here (default: its `probe.out`, else beside --json).
    #[arg(long)]
    pub(crate) probe: Option<PathBuf>,
    /// Statistics per window: every CYCLES, a row of the counters (those of `--counters GLOB`,
    /// else all) at the window's end, cumulative, to --stats-csv (`hwsim plot --rate` draws them
    /// per window).
    #[arg(long, value_name = "CYCLES", requires = "stats_csv")]
    pub(crate) stats_every: Option<u64>,
    /// The CSV of --stats-every (`cycle,<counter>…`).
    #[arg(long, value_name = "FILE", requires = "stats_every")]
    pub(crate) stats_csv: Option<PathBuf>,
    /// Memory budget in GiB: traffic that would need more is refused before the run, and the
    /// checks' recorded history may take what it leaves after the model.
    #[arg(long, value_name = "GIB", default_value_t = 8)]
    pub(crate) max_memory: u64,
    /// Override a testbench field: dotted path as in the file, YAML value
    /// (`--set system.traffic.0.bytes=4096`; repeatable). A check `pinned:` to the field is
    /// dropped (the report lists it).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub(crate) set: Vec<String>,
    /// `off`: evaluate none of the testbench's `expect:` checks and no monitor; the report has
    /// the counters and metrics and the verdict `-` (exit 0 unless a protocol violation stopped
    /// the run).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    pub(crate) checks: String,
    /// Event log: a line per event (`cycle path class key=value …`) of the event classes, block
    /// kinds and path globs named (comma-separated, repeatable); `--log help` lists the classes.
    #[arg(long, value_name = "SPEC")]
    pub(crate) log: Vec<String>,
    /// Write the event log to FILE instead of stderr.
    #[arg(long, value_name = "FILE")]
    pub(crate) log_file: Option<PathBuf>,
    /// Stop the event log after N lines (it says so in a last line).
    #[arg(long, value_name = "N", default_value_t = hwsim::event_log::DEFAULT_MAX_LINES, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) log_max: u64,
}
