//! The `hwsim` command line.
//!
//! Exit status: 0 every check passed; 1 a check failed (or a protocol violation stopped the
//! run); 2 bad input (a testbench, config or argument error, or an output that cannot be
//! written), with a one-line message; 130 interrupted by SIGINT / SIGTERM.

use std::process::ExitCode;

use clap::Parser;

/// The command line's parts.
mod cli;

use cli::args::{Cli, Cmd};
use cli::io::bad;

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
        Cmd::Run(a) => cli::run::main(a),
        Cmd::Check {
            testbench,
            max_memory,
            set,
        } => cli::check::main(&testbench, max_memory, &set),
        Cmd::Config {
            testbench,
            max_memory,
            set,
        } => cli::config::main(&testbench, max_memory, &set),
        Cmd::Regress(a) => cli::regress::main(a),
        Cmd::Sweep(a) => cli::sweep::main(a),
        Cmd::Plot(a) => cli::plot::main(a),
        Cmd::Explain { block } => cli::explain::main(&block),
        Cmd::List { pattern } => cli::list::main(pattern.as_deref()),
        Cmd::Diff(a) => cli::diff::main(&a),
        Cmd::Vectors {
            testbench,
            out,
            instance,
        } => cli::vectors::main(&testbench, &out, &instance),
        Cmd::Netlist {
            testbench,
            dot,
            depth,
            scope,
            max_memory,
        } => cli::netlist::main(&testbench, &dot, depth, scope, max_memory),
    }
}
