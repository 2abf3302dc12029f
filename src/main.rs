//! The `hwsim` command line.
//!
//! Exit status: 0 every check passed; 1 a check failed (or a protocol violation stopped the
//! run); 2 bad input (a testbench, config or argument error, or an output that cannot be
//! written), with a one-line message; 130 interrupted by SIGINT / SIGTERM.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use hwsim::{
    commands, diff, explain, output, overrides, registry, render, runner, testbench, values, vectors, wave_outputs,
    yaml,
};

#[derive(Parser)]
#[command(name = "hwsim", version = explain::VERSION, about = "Cycle-stepped model of the PAXI / RC Link interconnect", long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
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
struct RunArgs {
    /// Testbench file.
    testbench: PathBuf,
    /// Write a VCD waveform (a path ending in `.fst` writes FST, as --fst).
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// Write the waveform as FST.
    #[arg(long)]
    fst: Option<PathBuf>,
    /// GTKWave save file (default: the VCD's, else the FST's, path with `.gtkw`).
    #[arg(long)]
    gtkw: Option<PathBuf>,
    /// Seed (overrides the testbench's).
    #[arg(long)]
    seed: Option<u64>,
    /// Longest run, cycles (overrides the testbench's `until`).
    #[arg(long)]
    until: Option<u64>,
    /// Tick every component every cycle (results must be identical).
    #[arg(long)]
    no_skip: bool,
    /// Write the report as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write every counter as CSV: counter,value,unit.
    #[arg(long, value_name = "FILE")]
    counters_csv: Option<PathBuf>,
    /// Trace only nets matching GLOB (repeatable; `*`, `?`).
    #[arg(long, value_name = "GLOB")]
    trace: Vec<String>,
    /// First cycle written to the VCD.
    #[arg(long)]
    trace_from: Option<u64>,
    /// End of the VCD window (exclusive).
    #[arg(long)]
    trace_to: Option<u64>,
    /// Print only the verdict line.
    #[arg(short, long)]
    quiet: bool,
    /// Print run statistics (cycles/s, activations/s, skip, memory).
    #[arg(long)]
    stats: bool,
    /// Print the counters matching GLOB (all without GLOB); `--counters=GLOB` before the file.
    #[arg(long, value_name = "GLOB", num_args = 0..=1, default_missing_value = "*")]
    counters: Option<String>,
    /// The full report: every counter, every flow, values in full.
    #[arg(short, long)]
    verbose: bool,
    /// Write the testbench's `probe:` samples here (default: its `probe.out`, else beside --json).
    #[arg(long)]
    probe: Option<PathBuf>,
    /// Statistics per window: every CYCLES, a row of the counters (those of `--counters GLOB`,
    /// else all) at the window's end, cumulative, to --stats-csv (`hwsim plot --rate` draws them
    /// per window).
    #[arg(long, value_name = "CYCLES", requires = "stats_csv")]
    stats_every: Option<u64>,
    /// The CSV of --stats-every (`cycle,<counter>…`).
    #[arg(long, value_name = "FILE", requires = "stats_every")]
    stats_csv: Option<PathBuf>,
    /// Memory budget in GiB: traffic that would need more is refused before the run, and the
    /// checks' recorded history may take what it leaves after the model.
    #[arg(long, value_name = "GIB", default_value_t = 8)]
    max_memory: u64,
    /// Override a testbench field: dotted path as in the file, YAML value
    /// (`--set system.traffic.0.bytes=4096`; repeatable). A check `pinned:` to the field is
    /// dropped (the report lists it).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// `off`: evaluate none of the testbench's `expect:` checks and no monitor; the report has
    /// the counters and metrics and the verdict `-` (exit 0 unless a protocol violation stopped
    /// the run).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    checks: String,
    /// Event log: a line per event (`cycle path class key=value …`) of the event classes, block
    /// kinds and path globs named (comma-separated, repeatable); `--log help` lists the classes.
    #[arg(long, value_name = "SPEC")]
    log: Vec<String>,
    /// Write the event log to FILE instead of stderr.
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
    /// Stop the event log after N lines (it says so in a last line).
    #[arg(long, value_name = "N", default_value_t = hwsim::event_log::DEFAULT_MAX_LINES, value_parser = clap::value_parser!(u64).range(1..))]
    log_max: u64,
}

const SUBCOMMANDS: &[&str] = &[
    "run", "check", "config", "regress", "sweep", "plot", "explain", "list", "netlist", "diff", "vectors", "help",
];

fn bad(msg: impl std::fmt::Display) -> ExitCode {
    // Not eprintln!: it panics when stderr itself cannot be written (`2>/dev/full`).
    let _ = writeln!(std::io::stderr(), "hwsim: {msg}");
    ExitCode::from(2)
}

/// Writes `text` to stdout. A closed pipe (`hwsim list | head -1`) ends the output quietly, as
/// Unix tools do: the reader has what it wanted, and the command keeps its own exit status. Any
/// other write error (`> /dev/full`) is bad output, exit 2.
fn emit(text: &str) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(bad(format!("stdout: cannot write: {e}"))),
    }
}

/// `emit`, then `code` (or exit 2 if stdout failed).
fn emit_then(text: &str, code: ExitCode) -> ExitCode {
    emit(text).err().unwrap_or(code)
}

/// The command line, with `hwsim TB.yaml ...` read as `hwsim run TB.yaml ...`; an error is one
/// line (exit 2), `--help` and `--version` print and exit 0.
fn parse_cli() -> Result<Cli, ExitCode> {
    let mut argv: Vec<String> = std::env::args().collect();
    if let Some(first) = argv.get(1) {
        if !first.starts_with('-') && !SUBCOMMANDS.contains(&first.as_str()) {
            argv.insert(1, "run".into());
        }
    }
    match Cli::try_parse_from(&argv) {
        Ok(c) => Ok(c),
        Err(e) if e.use_stderr() => {
            // One line, like every other input error; `--help` has the details.
            // clap puts what is missing on the lines after the first (`--dot <DOT>`).
            let text = e.to_string();
            let first = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let first = first.trim_start_matches("error: ");
            Err(bad(format!("{first} (see `hwsim --help`)")))
        }
        Err(e) => {
            let _ = e.print();
            Err(ExitCode::SUCCESS)
        }
    }
}

fn main() -> ExitCode {
    let cli = match parse_cli() {
        Ok(c) => c,
        Err(code) => return code,
    };
    match cli.cmd {
        Cmd::Run(a) => run(a),
        Cmd::Check {
            testbench,
            max_memory,
            set,
        } => check(&testbench, max_memory, &set),
        Cmd::Config {
            testbench,
            max_memory,
            set,
        } => config(&testbench, max_memory, &set),
        Cmd::Regress(a) => match on_interrupt() {
            Ok(f) => done(commands::regress(a, &f)),
            Err(e) => e,
        },
        Cmd::Sweep(a) => match on_interrupt() {
            Ok(f) => done(commands::sweep(a, Some(&f))),
            Err(e) => e,
        },
        Cmd::Plot(a) => match on_interrupt() {
            Ok(f) => done(commands::plot(a, Some(&f))),
            Err(e) => e,
        },
        Cmd::Explain { block } => match explain::explain(&block) {
            Ok(t) => emit_then(&t, ExitCode::SUCCESS),
            Err(e) => bad(e),
        },
        Cmd::List { pattern } => match list(pattern.as_deref()) {
            Ok(text) => emit_then(&text, ExitCode::SUCCESS),
            Err(e) => bad(e),
        },
        // diff writes no file: an interrupt ends it at once, with 130.
        Cmd::Diff(a) => match exit_on_interrupt().and_then(|_| diff::run(&a).map_err(bad)) {
            Ok((text, same, warnings)) => {
                for w in warnings {
                    let _ = writeln!(std::io::stderr(), "hwsim: {w}");
                }
                emit_then(&text, if same { ExitCode::SUCCESS } else { ExitCode::from(1) })
            }
            Err(code) => code,
        },
        Cmd::Vectors {
            testbench,
            out,
            instance,
        } => vectors_cmd(&testbench, &out, &instance),
        Cmd::Netlist {
            testbench,
            dot,
            depth,
            scope,
            max_memory,
        } => netlist_cmd(&testbench, &dot, depth, scope, max_memory),
    }
}

/// `hwsim vectors`: an interrupt ends it with what it wrote so far, and 130.
fn vectors_cmd(testbench: &Path, out: &Path, instance: &[String]) -> ExitCode {
    let interrupt = match on_interrupt() {
        Ok(f) => f,
        Err(e) => return e,
    };
    match vectors::run(testbench, out, instance, Some(&interrupt)) {
        Ok(text) if interrupt.load(std::sync::atomic::Ordering::Relaxed) => emit_then(&text, ExitCode::from(130)),
        Ok(text) => emit_then(&text, ExitCode::SUCCESS),
        Err(e) => bad(e),
    }
}

/// `hwsim netlist`: the netlist as a Graphviz file, whole or one scope, to a depth.
fn netlist_cmd(testbench: &Path, dot: &Path, depth: Option<usize>, scope: Option<String>, max_memory: u64) -> ExitCode {
    let l = match load(testbench, max_memory, &[]) {
        Ok(l) => l,
        Err(e) => return e,
    };
    if let Err(e) = output::check_outputs(&l.files, &[("--dot", dot)]) {
        return bad(e);
    }
    // Both forms: a system testbench draws its whole topology.
    let netlist = if l.tb.system.is_some() {
        match hwsim::system::elaborate(&l, l.tb.seed) {
            Ok((nl, _)) => nl,
            Err(e) => return bad(e),
        }
    } else {
        match testbench::elaborate(&l) {
            Ok(el) => el.netlist,
            Err(e) => return bad(e),
        }
    };
    if let Some(sc) = &scope {
        let known = netlist.has_instance(sc)
            || netlist.is_composite(sc)
            || netlist.instance_paths().any(|p| p.starts_with(&format!("{sc}.")));
        if !known {
            return bad(yaml::InputError::new(
                testbench,
                format!("--scope {sc}: no instance or composite at or under that path"),
            ));
        }
    }
    let opts = hwsim_hw::DotOptions { depth, scope };
    if let Err(e) = output::write_file(dot, netlist.to_dot_with(&opts).as_bytes()) {
        return bad(e);
    }
    emit_then(
        &format!("wrote {} ({} instances)\n", dot.display(), netlist.instance_count()),
        ExitCode::SUCCESS,
    )
}

fn run(a: RunArgs) -> ExitCode {
    if a.log.iter().flat_map(|s| s.split(',')).any(|t| t.trim() == "help") {
        return emit_then(&hwsim::event_log::help(), ExitCode::SUCCESS);
    }
    if a.log_file.is_some() && a.log.is_empty() {
        return bad("--log-file is where the event log goes: give --log SPEC too (`--log help`)");
    }
    let l = match load(&a.testbench, a.max_memory, &a.set) {
        Ok(l) => l,
        Err(e) => return e,
    };
    let mut waves = wave_outputs::WaveOutputs::new(a.vcd.clone(), a.fst.clone(), a.gtkw.clone());
    let wave_paths = waves.paths();
    let probe = commands::probe_path(&l, a.probe.as_deref(), a.json.as_deref());
    let vcd = waves.vcd().map(Path::to_path_buf);
    let outputs: Vec<(&str, &Path)> = [
        ("--vcd", &vcd),
        ("--json", &a.json),
        ("--probe", &probe),
        ("--counters-csv", &a.counters_csv),
        ("--log-file", &a.log_file),
        ("--stats-csv", &a.stats_csv),
    ]
    .into_iter()
    .filter_map(|(opt, p)| p.as_deref().map(|p| (opt, p)))
    .chain(wave_paths.iter().map(|(o, p)| (*o, p.as_path())))
    .collect();
    if let Err(e) = output::check_outputs(&l.files, &outputs) {
        return bad(e);
    }
    if let Err(e) = waves.validate() {
        return bad(e);
    }
    if !waves.any() && (!a.trace.is_empty() || a.trace_from.is_some() || a.trace_to.is_some() || a.gtkw.is_some()) {
        return bad("--trace, --trace-from, --trace-to and --gtkw are about the waves: give --vcd PATH or --fst PATH");
    }
    if let (Some(f), Some(t)) = (a.trace_from, a.trace_to) {
        if f > t {
            return bad(format!("--trace-from {f} is after --trace-to {t}: the window is empty"));
        }
    }
    let interrupt = match on_interrupt() {
        Ok(f) => f,
        Err(e) => return e,
    };
    let mut opts = runner::Options {
        seed: a.seed,
        until: a.until,
        no_skip: a.no_skip,
        trace: a.trace.clone(),
        trace_from: a.trace_from,
        trace_to: a.trace_to,
        progress: !a.quiet,
        interrupt: Some(interrupt),
        probe,
        stats_every: a.stats_every.zip(a.stats_csv.clone()),
        stats_counters: a.counters.clone().filter(|_| a.stats_every.is_some()),
        checks_off: a.checks == "off",
        log: a.log.clone(),
        log_file: a.log_file.clone(),
        log_max: a.log_max,
        ..Default::default()
    };
    if let Err(e) = waves.setup(&mut opts) {
        return bad(e);
    }
    let report = match runner::run_loaded(&l, opts) {
        Ok(r) => r,
        Err(e) => return bad(e),
    };
    if let Err(e) = waves.finish(&l, &a.trace, &report.levels) {
        return bad(e);
    }
    if let Some(j) = &a.json {
        let text = serde_json::to_string_pretty(&report).expect("report serializes");
        if let Err(e) = output::write_file(j, (text + "\n").as_bytes()) {
            return bad(e);
        }
    }
    if let Some(c) = &a.counters_csv {
        if let Err(e) = output::write_file(c, report.counters_csv().as_bytes()) {
            return bad(e);
        }
    }
    let mut text = String::new();
    if a.quiet {
        for l in report.render(false, a.stats).lines() {
            if l.starts_with("verdict") || l.starts_with("stats") || l.starts_with("interrupted") {
                text.push_str(l);
                text.push('\n');
            }
        }
    } else {
        text = report.render_view(&render::View {
            verbose: a.verbose,
            counters: a.counters.clone(),
            stats: a.stats,
            color: render::color_on_stdout(),
        });
        let written: Vec<String> = waves.written().iter().map(|p| p.display().to_string()).collect();
        if !written.is_empty() {
            text.push_str(&format!("waves: {}\n", written.join(", ")));
        }
        if let Some((p, rows)) = &report.probe {
            text.push_str(&format!("probe: {} ({rows} rows)\n", p.display()));
        }
        if let Some((p, rows)) = &report.stats_csv {
            text.push_str(&format!("stats: {} ({rows} rows)\n", p.display()));
        }
    }
    let code = if report.interrupted {
        ExitCode::from(130)
    } else if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    emit_then(&text, code)
}

/// SIGINT / SIGTERM: the first sets the returned flag (a run stops at the end of the current
/// slice, with a valid VCD and report; a regression stops its running testbenches so and starts
/// no other); a second one, with the flag already set, exits 130 at once.
fn on_interrupt() -> Result<Arc<AtomicBool>, ExitCode> {
    let interrupt = Arc::new(AtomicBool::new(false));
    let signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]);
    let mut signals = match signals {
        Ok(s) => s,
        Err(e) => return Err(bad(format!("cannot install the signal handler: {e}"))),
    };
    let flag = Arc::clone(&interrupt);
    // The first signal asks the run to stop (it ends the cycle, writes what it has and says
    // `interrupted`); a second ends the process at once with 130, its temporary files removed
    // first (the unwinding that would have removed them does not happen).
    std::thread::spawn(move || {
        for _ in signals.forever() {
            if flag.swap(true, std::sync::atomic::Ordering::SeqCst) {
                output::remove_temporaries_and_exit(130);
            }
        }
    });
    Ok(interrupt)
}

/// SIGINT / SIGTERM end the process at once with 130 (for a command that writes no file).
fn exit_on_interrupt() -> Result<(), ExitCode> {
    let armed = Arc::new(AtomicBool::new(true));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&armed)) {
            return Err(bad(format!("cannot install the signal handler: {e}")));
        }
    }
    Ok(())
}

/// The outcome of a subcommand in commands.rs: its text and status, or bad input.
fn done(r: Result<(String, u8), yaml::InputError>) -> ExitCode {
    match r {
        Ok((text, code)) => emit_then(&text, ExitCode::from(code)),
        Err(e) => bad(e),
    }
}

/// Loads a testbench with `--set` overrides and a memory budget of `max_memory_gib`.
fn load(tb: &Path, max_memory_gib: u64, set: &[String]) -> Result<testbench::Loaded, ExitCode> {
    let sets = set
        .iter()
        .map(|a| overrides::parse(a))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    let mut l = testbench::load_with(tb, &sets).map_err(bad)?;
    l.max_memory = max_memory_gib.saturating_mul(1 << 30);
    Ok(l)
}

fn check(tb: &Path, max_memory: u64, set: &[String]) -> ExitCode {
    let l = match load(tb, max_memory, set) {
        Ok(l) => l,
        Err(e) => return e,
    };
    // What `run` would refuse before building, `check` refuses too.
    if let Err(e) = runner::validate_run(&l, None) {
        return bad(e);
    }
    match runner::build(&l, l.tb.seed).and_then(|(sim, el)| {
        runner::validate_checks(&l, &sim)?;
        runner::require_checks(&l)?;
        Ok((sim, el))
    }) {
        Ok((sim, el)) => {
            use std::fmt::Write as _;
            let mut s = format!(
                "{}: ok — {} instances, {} nets, {} counters\n",
                tb.display(),
                sim.component_count(),
                sim.net_count(),
                sim.counters().count()
            );
            // Per kind: the blocks the kernel ticks, then the composites that group them.
            let _ = writeln!(s, "  blocks per kind:");
            for (kind, (n, composite)) in &el.kinds {
                if !composite {
                    let _ = writeln!(s, "    {n:>7}  {kind}");
                }
            }
            if el.kinds.values().any(|(_, c)| *c) {
                let _ = writeln!(s, "  composites per kind (no logic of their own):");
                for (kind, (n, composite)) in &el.kinds {
                    if *composite {
                        let _ = writeln!(s, "    {n:>7}  {kind}");
                    }
                }
            }
            // The process ends here: freeing a large netlist's millions of small names and
            // nets one by one took 1.4 s of a 32×32 torus's check.
            std::mem::forget((sim, el));
            emit_then(&s, ExitCode::SUCCESS)
        }
        Err(e) => bad(e),
    }
}

/// `hwsim config`: the testbench elaborated with its instances' parameters recorded, printed as
/// YAML (a header of what made it, then the instances in creation order).
fn config(tb: &Path, max_memory: u64, set: &[String]) -> ExitCode {
    let l = match load(tb, max_memory, set) {
        Ok(l) => l,
        Err(e) => return e,
    };
    // What `run` and `check` refuse before building (an `until` past 2^62, a flow or a warm-up
    // window after the end), `config` refuses too: it printed a configuration no run accepts.
    if let Err(e) = runner::validate_run(&l, None) {
        return bad(e);
    }
    *l.resolved.borrow_mut() = Some(Vec::new());
    if let Err(e) = runner::build(&l, l.tb.seed) {
        return bad(e);
    }
    use yaml::{Mapping, Value};
    let mut doc = Mapping::new();
    doc.insert("hwsim".into(), explain::VERSION.into());
    doc.insert("testbench".into(), l.name().into());
    doc.insert("file".into(), tb.display().to_string().into());
    doc.insert("seed".into(), l.tb.seed.into());
    doc.insert("until".into(), yaml::to_value(&l.tb.until));
    let sets: Vec<Value> = set.iter().map(|s| Value::from(s.as_str())).collect();
    doc.insert("overrides".into(), Value::Sequence(sets));
    let mut insts = Mapping::new();
    for (path, kind, params) in l.resolved.borrow_mut().take().unwrap_or_default() {
        let mut m = Mapping::new();
        m.insert("kind".into(), kind.into());
        m.insert("params".into(), params);
        insts.insert(path.into(), Value::Mapping(m));
    }
    doc.insert("instances".into(), Value::Mapping(insts));
    let y = yaml::dump(&Value::Mapping(doc));
    emit_then(
        &format!("# the configuration {} resolves to (`hwsim config`)\n{y}", tb.display()),
        ExitCode::SUCCESS,
    )
}

/// Whether a kind is listed for `pattern`: a glob over its name, or a plain word found in its
/// name or description.
fn listed(b: &registry::BlockKind, pattern: Option<&str>) -> bool {
    match pattern {
        None => true,
        Some(p) if p.contains(['*', '?']) => hwsim_hw::glob_match(p, b.name),
        Some(p) => b.name.contains(p) || b.doc.to_lowercase().contains(&p.to_lowercase()),
    }
}

/// The `list` text: every kind, or those `pattern` selects (none selected is an error naming
/// the kinds).
fn list(pattern: Option<&str>) -> Result<String, String> {
    use std::fmt::Write as _;
    let mut s = String::new();
    let vals = values::registry();
    let blocks = registry::blocks();
    if !blocks.iter().any(|b| listed(b, pattern)) {
        let names: Vec<&str> = blocks.iter().map(|b| b.name).collect();
        return Err(format!(
            "list: no block kind matches `{}` (kinds: {})",
            pattern.unwrap_or(""),
            names.join(", ")
        ));
    }
    for b in blocks.iter().filter(|b| listed(b, pattern)) {
        let _ = writeln!(s, "{} — {}", b.name, b.doc);
        let _ = writeln!(s, "  ports:");
        for p in &b.default_ports {
            let dir = match p.dir {
                hwsim_hw::Dir::In => "in ",
                hwsim_hw::Dir::Out => "out",
            };
            let drivable = if vals.contains_key(&p.type_id) {
                ""
            } else {
                " (not drivable from YAML)"
            };
            let _ = writeln!(
                s,
                "    {dir} {:<12} {}  {}{drivable}",
                p.name,
                hwsim::explain::hw_describe(p),
                p.doc
            );
        }
        let d = yaml::dump(&b.defaults);
        if d.trim() == "{}" {
            let _ = writeln!(s, "  params: none");
        } else {
            let _ = writeln!(s, "  params (defaults):");
            for line in d.lines() {
                let _ = writeln!(s, "    {line}");
            }
        }
        let _ = writeln!(s);
    }
    Ok(s)
}
