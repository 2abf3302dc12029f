//! `hwsim regress --junit FILE` and `--json FILE`: the regression's outcomes for CI systems.
//!
//! JUnit XML (as Jenkins, GitLab and GitHub's test reporters read it): one `<testsuite>` for the
//! folder, one `<testcase>` per testbench (`classname` its folder with dots, `name` its file
//! stem, `file` its path, `time` its wall seconds: loading, elaboration, run and checks); a failed testbench has a `<failure>` whose
//! text lists every failing check with what was expected and what happened (or the protocol
//! violation), a testbench that could not be loaded or built an `<error>`, one cut short or
//! never started by an interrupt a `<skipped>`. The JSON has the same, and the hwsim version.
//!
//! Both are in file order; the wall times are the only figures that differ between two
//! regressions of the same files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::run::regress::Outcome;

/// Text for XML: `&`, `<`, `>`, `"` and `'` escaped, characters XML 1.0 cannot hold dropped.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// The failing checks of an outcome, one line each: `name: expected E, actual A`.
fn failure_text(o: &Outcome) -> String {
    let mut s = String::new();
    for c in &o.failed_checks {
        let _ = writeln!(s, "{}: expected {}, actual {}", c.name, c.expected, c.actual);
        if let Some(d) = &c.first_difference {
            let _ = writeln!(s, "  first difference: {d}");
        }
    }
    if s.is_empty() {
        s = o.detail.clone() + "\n";
    }
    s
}

fn class_and_name(file: &Path) -> (String, String) {
    let class = file
        .parent()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(x) => Some(x.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(".")
        })
        .unwrap_or_default();
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    (class, name)
}

/// The files of `all` that have no outcome (not started: an interrupt stopped the regression).
fn not_run<'a>(all: &'a [PathBuf], outcomes: &[Outcome]) -> Vec<&'a PathBuf> {
    all.iter().filter(|f| !outcomes.iter().any(|o| &o.file == *f)).collect()
}

/// The JUnit XML of a regression of `all` under `dir` (its `outcomes`, in file order).
pub fn junit(dir: &Path, all: &[PathBuf], outcomes: &[Outcome]) -> String {
    let count = |v: &str| outcomes.iter().filter(|o| o.verdict == v).count();
    let missing = not_run(all, outcomes);
    let (failures, errors) = (count("FAIL"), count("ERROR"));
    let skipped = count("INTR") + count("SKIP") + missing.len();
    let time: f64 = outcomes.iter().map(|o| o.elapsed_s).sum();
    let suite = xml_escape(&dir.display().to_string());
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"hwsim regress\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{time:.3}\">",
        all.len()
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{time:.3}\">",
        all.len()
    );
    let case = |s: &mut String, file: &Path, time: f64| {
        let (class, name) = class_and_name(file);
        let _ = write!(
            s,
            "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{time:.3}\"",
            xml_escape(&class),
            xml_escape(&name),
            xml_escape(&file.display().to_string())
        );
    };
    for o in outcomes {
        case(&mut s, &o.file, o.elapsed_s);
        let msg = xml_escape(&o.detail);
        match o.verdict {
            "PASS" => s.push_str("/>\n"),
            "FAIL" => {
                let _ = writeln!(
                    s,
                    ">\n      <failure type=\"check\" message=\"{msg}\">{}</failure>\n    </testcase>",
                    xml_escape(&failure_text(o))
                );
            }
            "ERROR" => {
                let _ = writeln!(s, ">\n      <error type=\"input\" message=\"{msg}\"/>\n    </testcase>");
            }
            _ => {
                let _ = writeln!(s, ">\n      <skipped message=\"{msg}\"/>\n    </testcase>");
            }
        }
    }
    for f in missing {
        case(&mut s, f, 0.0);
        s.push_str(">\n      <skipped message=\"not run: the regression was interrupted\"/>\n    </testcase>\n");
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// The JSON of a regression of `all` under `dir`: totals, then one entry per testbench run
/// (verdict, checks, cycles, wall seconds, the failing checks), then the files not run.
pub fn json(dir: &Path, all: &[PathBuf], outcomes: &[Outcome], interrupted: bool) -> String {
    let count = |v: &str| outcomes.iter().filter(|o| o.verdict == v).count();
    let rows: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            json!({
                "file": o.file.display().to_string(),
                "verdict": o.verdict,
                "checks": o.checks,
                "checks_passed": o.checks_passed,
                "cycles": o.cycles,
                "wall_s": o.wall_s,
                "elapsed_s": o.elapsed_s,
                "detail": o.detail,
                "failures": o.failed_checks,
            })
        })
        .collect();
    let doc = json!({
        "version": crate::report::explain::VERSION,
        "dir": dir.display().to_string(),
        "total": all.len(),
        "passed": count("PASS"),
        "failed": count("FAIL"),
        "errors": count("ERROR"),
        "skipped": count("SKIP"),
        "interrupted": interrupted,
        "testbenches": rows,
        "not_run": not_run(all, outcomes).iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&doc).expect("regression serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::verdict::CheckResult;

    fn outcome(file: &str, verdict: &'static str, detail: &str) -> Outcome {
        Outcome {
            file: file.into(),
            verdict,
            detail: detail.into(),
            cycles: 37,
            wall_s: 0.2,
            elapsed_s: 0.25,
            checks: 2,
            checks_passed: if verdict == "PASS" { 2 } else { 1 },
            failed_checks: Vec::new(),
        }
    }

    #[test]
    fn junit_has_one_testcase_per_testbench_with_its_failures() {
        let mut fail = outcome("tb/m/b.yaml", "FAIL", "1/2 checks; first failure: x < 3");
        fail.failed_checks.push(CheckResult {
            name: "x < 3".into(),
            passed: false,
            expected: "<= 3".into(),
            actual: "7 & \"more\"".into(),
            first_difference: None,
        });
        let all: Vec<PathBuf> = ["tb/m/a.yaml", "tb/m/b.yaml", "tb/c.yaml", "tb/d.yaml"]
            .map(PathBuf::from)
            .to_vec();
        let outs = vec![
            outcome("tb/m/a.yaml", "PASS", "2/2 checks"),
            fail,
            outcome("tb/c.yaml", "ERROR", "tb/c.yaml:3:1: bad <input>"),
        ];
        let x = junit(Path::new("tb"), &all, &outs);
        assert_eq!(
            x,
            concat!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                "<testsuites name=\"hwsim regress\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"0.750\">\n",
                "  <testsuite name=\"tb\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"0.750\">\n",
                "    <testcase classname=\"tb.m\" name=\"a\" file=\"tb/m/a.yaml\" time=\"0.250\"/>\n",
                "    <testcase classname=\"tb.m\" name=\"b\" file=\"tb/m/b.yaml\" time=\"0.250\">\n",
                "      <failure type=\"check\" message=\"1/2 checks; first failure: x &lt; 3\">x &lt; 3: expected &lt;= 3, actual 7 &amp; &quot;more&quot;\n</failure>\n",
                "    </testcase>\n",
                "    <testcase classname=\"tb\" name=\"c\" file=\"tb/c.yaml\" time=\"0.250\">\n",
                "      <error type=\"input\" message=\"tb/c.yaml:3:1: bad &lt;input&gt;\"/>\n",
                "    </testcase>\n",
                "    <testcase classname=\"tb\" name=\"d\" file=\"tb/d.yaml\" time=\"0.000\">\n",
                "      <skipped message=\"not run: the regression was interrupted\"/>\n",
                "    </testcase>\n",
                "  </testsuite>\n",
                "</testsuites>\n",
            )
        );
        let j: serde_json::Value = serde_json::from_str(&json(Path::new("tb"), &all, &outs, true)).unwrap();
        assert_eq!(j["total"], 4);
        assert_eq!(j["failed"], 1);
        assert_eq!(j["testbenches"][1]["failures"][0]["name"], "x < 3");
        assert_eq!(j["not_run"], serde_json::json!(["tb/d.yaml"]));
        assert_eq!(xml_escape("a\u{1}b\tc"), "ab\tc");
    }
}
