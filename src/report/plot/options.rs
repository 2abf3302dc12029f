//! What a figure's user may set (`--title`, `--xlabel`, `--ylabel`, `--size WxH`, the same on
//! `hwsim plot` and `hwsim sweep`), the sweep's x label made of a parameter's short name and unit,
//! legend labels shortened where they are alike (the common prefix or suffix, never the part that
//! tells them apart), and the nearest names an unknown `--columns` glob is told.

use std::path::Path;

use clap::Args;

use super::Chart;
use crate::input::yaml::InputError;

/// The figure options of `plot` and `sweep`.
#[derive(Args, Debug, Clone, Default)]
pub struct LookArgs {
    /// Title above the figure (default: what is drawn, and against what).
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// X axis label (default: the parameter's last path part and its unit, or `cycle (ns)`).
    #[arg(long, value_name = "TEXT")]
    pub xlabel: Option<String>,
    /// Y axis label (default: the metric or column, with its unit when known).
    #[arg(long, value_name = "TEXT")]
    pub ylabel: Option<String>,
    /// Figure size in pixels, width x height, each 200..=8000 (default 960x600).
    #[arg(long, value_name = "WxH")]
    pub size: Option<String>,
}

/// The figure options, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Look {
    /// `--title`.
    pub title: Option<String>,
    /// `--xlabel`.
    pub x_label: Option<String>,
    /// `--ylabel`.
    pub y_label: Option<String>,
    /// `--size`, pixels.
    pub size: (u32, u32),
}

impl Default for Look {
    fn default() -> Look {
        Look {
            title: None,
            x_label: None,
            y_label: None,
            size: super::SIZE,
        }
    }
}

/// Smallest and largest width or height of a figure, pixels.
pub const SIZE_MIN: u32 = 200;
/// See [`SIZE_MIN`].
pub const SIZE_MAX: u32 = 8000;

fn bad(opt: &str, value: &str, message: String) -> InputError {
    InputError::new(Path::new(&format!("{opt} {}", value.escape_debug())), message)
}

/// `--size WxH`: two whole numbers of pixels, each [`SIZE_MIN`]..=[`SIZE_MAX`].
pub fn parse_size(text: &str) -> Result<(u32, u32), InputError> {
    let dims = text
        .split_once(['x', 'X', '×'])
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)));
    match dims {
        Some((w, h)) if (SIZE_MIN..=SIZE_MAX).contains(&w) && (SIZE_MIN..=SIZE_MAX).contains(&h) => Ok((w, h)),
        _ => Err(bad(
            "--size",
            text,
            format!("expected WIDTHxHEIGHT in pixels, each {SIZE_MIN}..={SIZE_MAX} (`--size 1280x800`)"),
        )),
    }
}

impl LookArgs {
    /// The options checked: a size out of range or a text with a control character (a line
    /// break) is refused, naming the option.
    pub fn look(&self) -> Result<Look, InputError> {
        for (opt, text) in [
            ("--title", &self.title),
            ("--xlabel", &self.xlabel),
            ("--ylabel", &self.ylabel),
        ] {
            if let Some(t) = text.as_deref().filter(|t| t.chars().any(char::is_control)) {
                return Err(bad(opt, t, "a control character (a line break) cannot be drawn".into()));
            }
        }
        Ok(Look {
            title: self.title.clone(),
            x_label: self.xlabel.clone(),
            y_label: self.ylabel.clone(),
            size: match &self.size {
                Some(s) => parse_size(s)?,
                None => super::SIZE,
            },
        })
    }
}

impl Look {
    /// The chart with the texts given in place of its own.
    pub fn apply(&self, chart: &mut Chart) {
        for (mine, theirs) in [
            (&self.title, &mut chart.title),
            (&self.x_label, &mut chart.x_label),
            (&self.y_label, &mut chart.y_label),
        ] {
            if let Some(t) = mine {
                theirs.clone_from(t);
            }
        }
    }
}

/// The unit of a parameter, when its name says it: a count of cycles is in ns (one cycle is
/// one ns); a name that already ends in its unit gets none.
fn param_unit(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    if n.ends_with("_ns") || n.ends_with("bytes") {
        None
    } else if n.contains("cycle") || n == "until" {
        Some("ns")
    } else if n.ends_with("_bytes") || n.ends_with("_size") && n.contains("byte") {
        Some("bytes")
    } else {
        None
    }
}

/// A sweep's x label: the parameter's last path part (`instances.src.params.load` → `load`;
/// a list index is kept with its list, `traffic.0` → `traffic.0`), with its unit when known.
pub fn param_label(path: &str) -> String {
    let mut parts = path.rsplit('.');
    let last = parts.next().unwrap_or(path);
    let name = if last.parse::<u64>().is_ok() {
        format!("{}.{last}", parts.next().unwrap_or(""))
    } else {
        last.to_string()
    };
    match param_unit(&name) {
        Some(u) => format!("{name} ({u})"),
        None => name,
    }
}

/// A sweep's x label as [`param_label`], with the unit the parameter's documentation gives
/// (`hwsim explain KIND`) when the path is `instances.NAME.params.P` of the testbench's
/// instance NAME: `interval (ns)` for a consumer's `Cycles between pops`, `load (cells per
/// slot)` for a cell source's.
pub fn param_label_in(testbench: &Path, path: &str) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    if let ["instances", inst, "params", p] = parts.as_slice() {
        let unit = crate::build::testbench::load(testbench)
            .ok()
            .and_then(|l| l.tb.instances.get(*inst).map(|s| s.kind.clone()))
            .and_then(|k| crate::report::explain::explain(&k).ok())
            .and_then(|text| doc_unit(&text, p));
        if let Some(u) = unit {
            return format!("{p} ({u})");
        }
    }
    param_label(path)
}

/// Units a parameter's documentation names (after its first comma, `in ` dropped), and what
/// the label says for each: a cycle is a ns.
const DOC_UNITS: [(&str, &str); 10] = [
    ("cycles", "ns"),
    ("ns", "ns"),
    ("bytes", "bytes"),
    ("packets", "packets"),
    ("cells", "cells"),
    ("cells per slot", "cells per slot"),
    ("credits", "credits"),
    ("frames", "frames"),
    ("messages", "messages"),
    ("entries", "entries"),
];

/// The unit of `param` in `hwsim explain`'s text (`  param: default — doc`): a doc opening
/// with `Cycles` or `Cycle ` counts cycles (ns); else the first comma-separated part of its
/// first sentence that is a unit of [`DOC_UNITS`].
fn doc_unit(explain: &str, param: &str) -> Option<String> {
    let doc = explain.lines().find_map(|l| {
        let rest = l.strip_prefix("  ")?.strip_prefix(param)?.strip_prefix(": ")?;
        rest.split_once(" — ").map(|(_, d)| d)
    })?;
    if doc.starts_with("Cycles ") || doc.starts_with("Cycle ") {
        return Some("ns".into());
    }
    let sentence = doc.split(". ").next().unwrap_or(doc).trim_end_matches('.');
    sentence.split(", ").skip(1).find_map(|part| {
        let part = part.trim();
        let part = part.strip_prefix("in ").unwrap_or(part);
        DOC_UNITS
            .iter()
            .find(|(u, _)| *u == part)
            .map(|(_, show)| show.to_string())
    })
}

/// Where a label may be cut without splitting a word: before a separator or an opening
/// bracket, or after a separator.
fn boundary(chars: &[char], i: usize) -> bool {
    let sep = |c: char| matches!(c, ' ' | '.' | '_' | ',' | '=' | '/' | ':' | ';' | '-');
    i == 0 || i == chars.len() || sep(chars[i - 1]) || sep(chars[i]) || chars[i] == '('
}

/// The longest prefix (or, with `rev`, suffix) every label shares, in characters, ending at a
/// word boundary of each.
fn common(labels: &[Vec<char>], rev: bool) -> usize {
    let at = |l: &Vec<char>, k: usize| if rev { l[l.len() - 1 - k] } else { l[k] };
    let shortest = labels.iter().map(Vec::len).min().unwrap_or(0);
    let mut n = (0..shortest)
        .take_while(|&k| labels.iter().all(|l| at(l, k) == at(&labels[0], k)))
        .count();
    // A label wholly shared by another (one is the other's start) keeps its last word.
    n = n.min(shortest.saturating_sub(1));
    while n > 0 && !labels.iter().all(|l| boundary(l, if rev { l.len() - n } else { n })) {
        n -= 1;
    }
    n
}

/// `label` in at most `max` characters: the start and the end kept, cut at word boundaries
/// where one is near, an ellipsis in the middle.
fn cut_middle(label: &[char], max: usize) -> String {
    if label.len() <= max {
        return label.iter().collect();
    }
    let room = max.saturating_sub(1);
    let (mut head, tail_want) = (room / 2, room - room / 2);
    let mut tail = label.len() - tail_want;
    // Snap to a word boundary if one is within a third of the room.
    if let Some(h) = (head.saturating_sub(room / 3).max(1)..=head)
        .rev()
        .find(|&i| boundary(label, i))
    {
        head = h;
    }
    if let Some(t) = (tail..=(tail + room / 3).min(label.len() - 1)).find(|&i| boundary(label, i)) {
        tail = t;
    }
    let mut s: String = label[..head].iter().collect();
    s.push('…');
    s.extend(&label[tail..]);
    s
}

/// Legend labels that fit `max` characters. When one does not, the prefix and suffix every
/// label shares are replaced by an ellipsis (the part that tells the series apart stays); a
/// label still too long loses its middle. No word is cut without an ellipsis where it was.
pub fn fit_labels(labels: &[String], max: usize) -> Vec<String> {
    if labels.iter().all(|l| l.chars().count() <= max) {
        return labels.to_vec();
    }
    let chars: Vec<Vec<char>> = labels.iter().map(|l| l.chars().collect()).collect();
    // Worth it only when more than the ellipsis goes; the suffix only when the labels still do
    // not fit without the prefix.
    let worth = |n: usize| if n > 1 { n } else { 0 };
    let (pre, suf) = if labels.len() > 1 {
        let mut pre = common(&chars, false);
        // A value keeps its name: `count=4, …` is cut before `count=`, not after it.
        if pre > 0 && chars[0][pre - 1] == '=' {
            pre = (0..pre)
                .rev()
                .find(|&i| i == 0 || matches!(chars[0][i - 1], ' ' | ',' | '(' | '.'))
                .unwrap_or(0);
        }
        let pre = worth(pre);
        let rest: Vec<Vec<char>> = chars.iter().map(|c| c[pre..].to_vec()).collect();
        let fits = rest.iter().all(|r| r.len() + usize::from(pre > 0) <= max);
        (pre, if fits { 0 } else { worth(common(&rest, true)) })
    } else {
        (0, 0)
    };
    chars
        .iter()
        .map(|c| {
            let mut s: Vec<char> = Vec::new();
            if pre > 0 {
                s.push('…');
            }
            s.extend(c[pre..c.len() - suf].iter().skip_while(|&&ch| pre > 0 && ch == ' '));
            if suf > 0 {
                s.push('…');
            }
            cut_middle(&s, max)
        })
        .collect()
}

// The nearest names (for the errors naming them) live with the labels (crate::report::plot_label),
// which this module uses and which must not use it back.
pub use crate::report::plot_label::closest;
#[cfg(test)]
use crate::report::plot_label::distance;

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_size_is_two_pixel_counts_in_range() {
        assert_eq!(parse_size("1280x800").unwrap(), (1280, 800));
        assert_eq!(parse_size("200X8000").unwrap(), (200, 8000));
        for bad in ["199x600", "800x8001", "800", "ax600", "800x", "-5x600", "0x0"] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--size {bad}: expected WIDTHxHEIGHT")), "{e}");
        }
    }

    #[test]
    fn a_parameter_label_is_its_last_part_with_a_known_unit() {
        assert_eq!(param_label("instances.src.params.load"), "load");
        assert_eq!(param_label("instances.snk.params.stop_cycles"), "stop_cycles (ns)");
        assert_eq!(param_label("system.until"), "until (ns)");
        assert_eq!(param_label("system.traffic.0.bytes"), "bytes");
        assert_eq!(param_label("system.faults.0"), "faults.0");
    }

    #[test]
    fn a_parameter_unit_comes_from_its_documentation() {
        let text = "params (name: default — meaning):\n  load: 0.5 — Offered load per input, cells per slot, 0..=1.\n  slots: 512 — Slot pool size TYPE1_OST, in packets, 1..=2047.\n  interval: 1 — Cycles between pops (≥ 1).\n  max_payload: 1344 — Largest packet payload MAX_PAYLOAD, bytes, 1..=65535: frames are split.\n  ports: 16 — Inputs (N), 1..=64.\n";
        let unit = |p: &str| doc_unit(text, p);
        assert_eq!(unit("load").as_deref(), Some("cells per slot"));
        assert_eq!(unit("slots").as_deref(), Some("packets"));
        assert_eq!(unit("interval").as_deref(), Some("ns"));
        assert_eq!(unit("max_payload").as_deref(), Some("bytes"));
        assert_eq!(unit("ports"), None);
        assert_eq!(unit("nothing"), None);
        let tb = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tb/modules/fifo_backpressure.yaml"
        ));
        assert_eq!(param_label_in(tb, "instances.snk.params.interval"), "interval (ns)");
        assert_eq!(param_label_in(tb, "instances.src.params.count"), "count");
        assert_eq!(param_label_in(tb, "instances.nobody.params.count"), "count");
    }

    #[test]
    fn long_legend_labels_keep_what_differs() {
        let l = v(&["payload_bytes_sent (chip0 lg1)", "payload_bytes_sent (chip1 lg1)"]);
        assert_eq!(fit_labels(&l, 25), ["…(chip0 lg1)", "…(chip1 lg1)"]);
        // Short enough: untouched.
        assert_eq!(fit_labels(&l, 40), l);
        // A shared end goes too.
        let l = v(&[
            "count=4, interval=1, depth=1024 entries",
            "count=8, interval=1, depth=1024 entries",
        ]);
        assert_eq!(fit_labels(&l, 20), ["count=4…", "count=8…"]);
        // Alone and too long: the middle goes, at word boundaries.
        let one = fit_labels(&v(&["payload_bytes_sent (chip0.lg1.tx.mac)"]), 25);
        assert!(
            one[0].starts_with("payload_") && one[0].ends_with(".tx.mac)"),
            "{one:?}"
        );
        assert!(one[0].contains('…') && one[0].chars().count() <= 25, "{one:?}");
        for s in fit_labels(&v(&["a_very_long_counter_name_indeed_it_is", "short"]), 12) {
            assert!(s.chars().count() <= 12, "{s}");
        }
    }

    #[test]
    fn the_closest_names_hold_the_text_or_are_near_it() {
        let names = v(&[
            "chip0.lg0.tx.rate",
            "chip0.lg1.tx.rate",
            "chip0.rx.backlog",
            "chip0.rx.bytes",
        ]);
        assert_eq!(closest("*backlg*", &names, 1), ["chip0.rx.backlog"]);
        assert_eq!(closest("*backlg*", &names, 9).len(), 4);
        assert_eq!(closest("lg1", &names, 1), ["chip0.lg1.tx.rate"]);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
