//! `hwsim run`: a testbench run with its waves, JSON, probe, counters and event log.

use std::path::Path;
use std::process::ExitCode;

use hwsim::{commands, output, render, runner, wave_outputs};

use super::args::RunArgs;
use super::io::{bad, emit_then, load, on_interrupt};

/// `hwsim run` (and `hwsim TB.yaml`): the run, its outputs and its report; the exit code is the
/// verdict (0 pass, 1 fail, 130 interrupted).
pub(crate) fn main(a: RunArgs) -> ExitCode {
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
