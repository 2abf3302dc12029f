//! Helpers shared by the integration tests (issue 48: each file had its own copy): the workspace
//! root, the built binary run from it (as an `Output`, or as exit code, stdout and stderr), its
//! output as text, the exit-code and bad-input assertions, a fresh folder per test, a JSON file
//! read back, and the example testbench (a module FIFO) several of them run.
//!
//! Each test file takes them with `mod common;` and compiles its own copy of this module; none
//! uses all of it, hence the `allow(dead_code)`.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The example testbench the checks read (a module FIFO under backpressure, quick to run).
pub const FIFO_TB: &str = "tb/modules/fifo_backpressure.yaml";

/// The workspace root: every run's working directory, where the testbenches' paths start.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The built binary, to run from the workspace root, without `RUST_BACKTRACE` (a panic is then
/// the same message whatever the environment `cargo test` runs in; tests/rtl.rs and
/// tests/xcheck.rs kept it, which made no difference as their runs do not panic).
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hwsim"));
    c.current_dir(root()).env_remove("RUST_BACKTRACE");
    c
}

/// Runs the binary in the workspace root (not on a terminal: no colour, no progress bar).
pub fn hwsim<S: AsRef<OsStr>>(args: &[S]) -> Output {
    command().args(args).output().expect("hwsim runs")
}

/// Runs the binary in the workspace root: (exit code, -1 if a signal ended it; stdout; stderr).
pub fn hwsim_parts(args: &[&str]) -> (i32, String, String) {
    parts(&hwsim(args))
}

/// An output as (exit code, -1 if a signal ended it; stdout; stderr).
pub fn parts(o: &Output) -> (i32, String, String) {
    (o.status.code().unwrap_or(-1), stdout(o), stderr(o))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The exit code, with the output in the panic message when it is not `want`.
pub fn assert_code(o: &Output, want: i32) {
    assert_eq!(
        o.status.code(),
        Some(want),
        "exit code\n--- stdout\n{}--- stderr\n{}",
        stdout(o),
        stderr(o)
    );
}

/// Asserts bad input: exit 2, exactly one stderr line, no panic, and that line is
/// `hwsim: <prefix>…` and contains every one of `parts`. Returns stderr for further checks.
/// (The strictest of the three copies, tests/cli.rs's: the others asked a subset of it.)
pub fn assert_bad_output(o: &Output, prefix: &str, parts: &[&str]) -> String {
    assert_code(o, 2);
    let err = stderr(o);
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "a panic instead of a message:\n{err}"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one stderr line, got:\n{err}");
    let line = lines[0];
    let want = format!("hwsim: {prefix}");
    assert!(
        line.starts_with(&want),
        "stderr should start with `{want}`, got:\n{line}"
    );
    for p in parts {
        assert!(line.contains(p), "stderr should contain `{p}`, got:\n{line}");
    }
    err
}

/// A fresh, empty folder for one test's files: `hwsim-<test file>-<pid>-<test>` under the system
/// temp dir (the test file's name, from its crate name, keeps the test binaries apart).
pub fn temp_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "hwsim-{}-{}-{test}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

/// A JSON file read back; a failure names the file.
pub fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not valid JSON: {e}", p.display()))
}

/// A path as an argument.
pub fn s(p: &Path) -> String {
    p.display().to_string()
}
