//! One check's outcome: what a testbench's `expect:` entries and the system's monitors report
//! (a module of its own so that the monitors need nothing of the runner's).

use serde::Serialize;

/// One check's outcome.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CheckResult {
    /// Label.
    pub name: String,
    /// Verdict.
    pub passed: bool,
    /// What was expected.
    pub expected: String,
    /// What happened.
    pub actual: String,
    /// For a failed sequence check: the first item that differs (index, expected, actual).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<String>,
}
