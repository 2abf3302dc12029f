//! The notes a sweep's table carries about its runs' dropped checks: a check `pinned:` to a
//! parameter the sweep changes is not evaluated (crate::build::check_policy), and the table says which,
//! why, and in how many runs, instead of a FAIL row for a bound written for another value.

use serde_json::Value as Json;

/// The dropped checks of one run's report (`dropped` in `point_K.json`), one note each:
/// `` `goodput >= 340` (pinned to system.faults.0.probability) ``.
pub fn dropped(j: &Json) -> Vec<String> {
    j.as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            format!(
                "`{}` (pinned to {})",
                d["check"].as_str().unwrap_or("?"),
                d["pinned"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// The lines under the sweep's table: each dropped check once, in the order first seen, with
/// the number of runs (of `total`) that dropped it; nothing when no run dropped one.
pub fn summary<'a>(rows: impl Iterator<Item = &'a [String]>, total: usize) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for notes in rows {
        for n in notes {
            match seen.iter_mut().find(|(x, _)| *x == n.as_str()) {
                Some((_, k)) => *k += 1,
                None => seen.push((n.as_str(), 1)),
            }
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let mut s = String::from("dropped checks (pinned to a parameter this sweep changes, so not evaluated):\n");
    for (note, k) in seen {
        s.push_str(&format!("  {note}: {k} of {total} runs\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dropped_check_is_named_once_with_its_runs() {
        let j = serde_json::json!([
            {"index": 2, "check": "goodput >= 340", "pinned": "p", "by": "--set p=1"},
            {"index": 3, "check": "c", "pinned": "seed", "by": "--seed 7"}
        ]);
        let a = dropped(&j);
        assert_eq!(a, ["`goodput >= 340` (pinned to p)", "`c` (pinned to seed)"]);
        let b = vec![a[0].clone()];
        let rows = [a.as_slice(), b.as_slice(), &[]];
        assert_eq!(
            summary(rows.into_iter(), 3),
            "dropped checks (pinned to a parameter this sweep changes, so not evaluated):\n  `goodput >= 340` (pinned to p): 2 of 3 runs\n  `c` (pinned to seed): 1 of 3 runs\n"
        );
        assert_eq!(summary([&[][..]].into_iter(), 1), "");
        assert!(dropped(&Json::Null).is_empty());
    }
}
