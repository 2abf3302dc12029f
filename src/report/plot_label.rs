//! Legend labels for a probe plot's columns: the last part of each dotted path
//! (`chip0.lg3.rxcap.backlog` → `backlog`); where two columns end alike, the parts that tell
//! them apart follow in parentheses (`backlog (lg3)`, `rate (chip1 lg0)`): the parts every one
//! of them shares at the start or just before the last part are left out. `--label COLUMN=TEXT`
//! names a column as the user wants.

use std::path::Path;

use crate::input::yaml::InputError;

/// Short, distinct labels for `names` (in order).
pub fn short_labels(names: &[String]) -> Vec<String> {
    let segs: Vec<Vec<&str>> = names.iter().map(|n| n.split('.').collect()).collect();
    let leaf = |i: usize| *segs[i].last().unwrap_or(&"");
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for i in 0..names.len() {
        let group: Vec<usize> = (0..names.len()).filter(|&j| leaf(j) == leaf(i)).collect();
        if group.len() == 1 {
            out.push(leaf(i).to_string());
            continue;
        }
        // The parts before the leaf, less those every member shares at the start and at the end.
        let heads: Vec<&[&str]> = group
            .iter()
            .map(|&j| &segs[j][..segs[j].len().saturating_sub(1)])
            .collect();
        let shortest = heads.iter().map(|h| h.len()).min().unwrap_or(0);
        let pre = (0..shortest)
            .take_while(|&k| heads.iter().all(|h| h[k] == heads[0][k]))
            .count();
        let suf = (0..shortest - pre)
            .take_while(|&k| {
                heads
                    .iter()
                    .all(|h| h[h.len() - 1 - k] == heads[0][heads[0].len() - 1 - k])
            })
            .count();
        let mine = &segs[i][..segs[i].len().saturating_sub(1)];
        let middle = &mine[pre..mine.len() - suf];
        out.push(if middle.is_empty() {
            leaf(i).to_string()
        } else {
            format!("{} ({})", leaf(i), middle.join(" "))
        });
    }
    // Names that are still alike (the same column twice): numbered.
    for i in 0..out.len() {
        let same: Vec<usize> = (0..out.len()).filter(|&j| out[j] == out[i]).collect();
        if same.len() > 1 {
            for (k, j) in same.into_iter().enumerate() {
                out[j] = format!("{} #{}", out[j], k + 1);
            }
        }
    }
    out
}

/// The labels of `columns`: [`short_labels`], then each `--label COLUMN=TEXT` (a column named
/// exactly; an unknown one, or an argument without `=`, is refused naming the argument).
pub fn labels(columns: &[String], args: &[String]) -> Result<Vec<String>, InputError> {
    apply_labels(columns, short_labels(columns), args)
}

/// `out` (a label per column) with each `--label COLUMN=TEXT` applied, as [`labels`] does.
pub fn apply_labels(columns: &[String], mut out: Vec<String>, args: &[String]) -> Result<Vec<String>, InputError> {
    for a in args {
        let bad = |m: String| InputError::new(Path::new(&format!("--label {a}")), m);
        let Some((col, text)) = a.split_once('=') else {
            return Err(bad(
                "expected COLUMN=TEXT (`--label chip0.lg0.rxcap.backlog=LG 0`)".into()
            ));
        };
        let Some(i) = columns.iter().position(|c| c == col) else {
            return Err(bad(format!(
                "no column `{col}` among the {} drawn (nearest: {})",
                columns.len(),
                closest(col, columns, 3).join(", ")
            )));
        };
        out[i] = text.to_string();
    }
    Ok(out)
}

/// Edit distance (Levenshtein, by characters).
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// The (at most) `n` names closest to `glob`: those holding its text (without `*`, `?`) first,
/// then by edit distance to the name or to its last part, then by name.
pub fn closest<'a>(glob: &str, names: &'a [String], n: usize) -> Vec<&'a str> {
    let core: String = glob.chars().filter(|c| !matches!(c, '*' | '?')).collect();
    let mut scored: Vec<(bool, usize, &str)> = names
        .iter()
        .map(|name| {
            let leaf = name.rsplit('.').next().unwrap_or(name);
            let contains = !core.is_empty() && name.contains(core.as_str());
            (
                !contains,
                distance(&core, name).min(distance(&core, leaf)),
                name.as_str(),
            )
        })
        .collect();
    scored.sort();
    scored.into_iter().take(n).map(|(_, _, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_last_part_and_what_tells_alike_ones_apart() {
        assert_eq!(
            short_labels(&v(&[
                "chip0.lg0.rxcap.backlog",
                "chip0.lg1.rxcap.backlog",
                "chip0.rx_monitor.total_bytes"
            ])),
            ["backlog (lg0)", "backlog (lg1)", "total_bytes"]
        );
        assert_eq!(
            short_labels(&v(&["chip1.lg0.tx.rate", "chip2.lg0.tx.rate", "chip1.lg1.tx.rate"])),
            ["rate (chip1 lg0)", "rate (chip2 lg0)", "rate (chip1 lg1)"]
        );
        // Different depths: what is not shared stays.
        assert_eq!(short_labels(&v(&["a.b.x", "a.c.d.x"])), ["x (b)", "x (c d)"]);
        assert_eq!(short_labels(&v(&["x", "a.x"])), ["x", "x (a)"]);
        assert_eq!(short_labels(&v(&["a.x", "a.x"])), ["x #1", "x #2"]);
        assert_eq!(short_labels(&v(&["cycles"])), ["cycles"]);
    }

    #[test]
    fn a_label_argument_names_one_column() {
        let cols = v(&["chip0.lg0.rxcap.backlog", "chip0.lg1.rxcap.backlog"]);
        assert_eq!(
            labels(&cols, &["chip0.lg1.rxcap.backlog=LG 1 = busy".into()]).unwrap(),
            ["backlog (lg0)", "LG 1 = busy"]
        );
        let e = labels(&cols, &["backlog=x".into()]).unwrap_err();
        assert!(
            e.to_string().starts_with("--label backlog=x: no column `backlog`"),
            "{e}"
        );
        assert!(labels(&cols, &["nothing".into()]).is_err());
    }
}
