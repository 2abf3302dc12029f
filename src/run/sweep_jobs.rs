//! A sweep's job scripts (`hwsim sweep --emit slurm|parallel DIR`): one `hwsim run` per planned
//! run, its values, seed and report path in the command, for a cluster or GNU parallel; then
//! `hwsim sweep --collect DIR` builds the table and plots from the reports (crate::run::sweep).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::input::yaml::InputError;
use crate::run::sweep::{point_file, write_plan, Plan};

/// Single-quotes `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-=+:,@".contains(c)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The command of run `k`: `hwsim run TB --set … --seed S --json DIR/point_K.json -q`, which
/// exits 0 or 1 (checks) as a completed run; `|| test $? -eq 1` makes a failed check a completed
/// job (the verdict is in the table).
pub fn command(plan: &Plan, k: usize, exe: &Path, dir: &Path) -> String {
    let r = &plan.runs[k];
    let mut args = vec![
        exe.display().to_string(),
        "run".into(),
        plan.testbench.display().to_string(),
    ];
    for s in r.sets(&plan.params) {
        args.push("--set".into());
        args.push(s);
    }
    if plan.checks_off {
        args.extend(["--checks".into(), "off".into()]);
    }
    args.extend([
        "--seed".into(),
        r.seed.to_string(),
        "--json".into(),
        point_file(dir, k).display().to_string(),
        "-q".into(),
    ]);
    let cmd = args.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
    format!("{cmd} || test $? -eq 1")
}

/// Writes `plan.json` and the job script for `kind` (`slurm`: `sweep.slurm`, a job array;
/// `parallel`: `jobs.txt`, one command a line for GNU parallel) into `dir`. Paths in the commands
/// are absolute, so the jobs run from any folder. Returns the script's path.
pub fn emit(plan: &Plan, kind: &str, dir: &Path, exe: &Path) -> Result<PathBuf, InputError> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let dir_abs = abs(dir);
    let mut plan = plan.clone();
    plan.testbench = abs(&plan.testbench);
    // One command per line, and the slurm script's comments and `#SBATCH` lines hold paths: a
    // line break in any of them (quoted or not) would start a line the scheduler or the shell
    // reads as a command of its own.
    for (what, p) in [
        ("the testbench's path", plan.testbench.as_path()),
        ("the folder", dir_abs.as_path()),
        ("hwsim's own path", exe),
    ] {
        if p.to_string_lossy().chars().any(char::is_control) {
            // Named with its line break escaped, so that the message stays one line.
            let shown = p.display().to_string().escape_debug().to_string();
            return Err(InputError::new(
                Path::new(&shown),
                format!("{what} holds a control character (a line break): a job script holds one command per line (rename it)"),
            ));
        }
    }
    let n = plan.runs.len();
    let (file, text) = match kind {
        "slurm" => {
            let mut s = String::new();
            let _ = writeln!(s, "#!/bin/bash");
            let _ = writeln!(
                s,
                "# hwsim sweep of {}: {n} runs, one per array task.",
                plan.testbench.display()
            );
            let _ = writeln!(s, "# Submit: sbatch {}", dir_abs.join("sweep.slurm").display());
            let _ = writeln!(s, "# Then:   hwsim sweep --collect {}", dir_abs.display());
            let _ = writeln!(s, "#SBATCH --job-name=hwsim-sweep");
            let _ = writeln!(s, "#SBATCH --array=0-{}", n - 1);
            let _ = writeln!(s, "#SBATCH --ntasks=1");
            let _ = writeln!(s, "#SBATCH --output={}/slurm_%A_%a.log", dir_abs.display());
            let _ = writeln!(s, "set -u");
            let _ = writeln!(s, "case \"$SLURM_ARRAY_TASK_ID\" in");
            for k in 0..n {
                let _ = writeln!(s, "  {k}) {} ;;", command(&plan, k, exe, &dir_abs));
            }
            let _ = writeln!(s, "  *) echo \"no run $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;");
            let _ = writeln!(s, "esac");
            (dir.join("sweep.slurm"), s)
        }
        "parallel" => {
            let mut s = String::new();
            for k in 0..n {
                let _ = writeln!(s, "{}", command(&plan, k, exe, &dir_abs));
            }
            (dir.join("jobs.txt"), s)
        }
        other => {
            return Err(InputError::new(
                Path::new(&format!("--emit {other}")),
                "unknown job format (slurm, parallel)",
            ))
        }
    };
    write_plan(&plan, dir)?;
    crate::report::output::write_file(&file, text.as_bytes())?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("a/b.yaml"), "a/b.yaml");
        assert_eq!(shell_quote("x={a: 1}"), "'x={a: 1}'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
