//! The `hwsim` command line.
//!
//! Exit status: 0 every check passed; 1 a check failed (or a protocol violation stopped the
//! run); 2 bad input (a testbench, config or argument error, or an output that cannot be
//! written), with a one-line message; 130 interrupted by SIGINT / SIGTERM.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use hwsim::{commands, diff, explain};

/// The command line's parts.
mod cli;

use cli::args::{Cli, Cmd};
use cli::inspect::{check, config, list, netlist_cmd, vectors_cmd};
use cli::io::{bad, done, emit_then, exit_on_interrupt, on_interrupt};
use cli::run::run;

const SUBCOMMANDS: &[&str] = &[
    "run", "check", "config", "regress", "sweep", "plot", "explain", "list", "netlist", "diff", "vectors", "help",
];

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
