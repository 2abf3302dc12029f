//! The one module that reads YAML. Everything else sees typed structs and `serde_yaml::Value`
//! only through the helpers here.
//!
//! Errors carry the file, line and column (serde_yaml's location for syntax, type and
//! unknown-field errors; a text search for the key for errors found after parsing).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A YAML value (re-exported so no other module names serde_yaml).
pub type Value = serde_yaml::Value;
/// A YAML mapping.
pub type Mapping = serde_yaml::Mapping;

/// Bad input: a file that cannot be read or does not fit its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// 1-based column, if known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// An error without a position.
    pub fn new(file: &Path, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_path_buf(),
            line: None,
            column: None,
            message: message.into(),
        }
    }
    /// An error at `field` of item `index` of the list `list` in `text`, if found.
    pub fn at_item(file: &Path, text: &str, list: &str, index: usize, field: &str, message: impl Into<String>) -> Self {
        let place = locate_in_item(text, list, index, field);
        InputError {
            file: file.to_path_buf(),
            line: place.map(|p| p.0),
            column: place.map(|p| p.1),
            message: message.into(),
        }
    }
    /// An error at the first occurrence of `needle` (a key) in `text`, if found.
    pub fn at_key(file: &Path, text: &str, needle: &str, message: impl Into<String>) -> Self {
        let (line, column) = match locate(text, needle) {
            Some((l, c)) => (Some(l), Some(c)),
            None => (None, None),
        };
        InputError {
            file: file.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// Largest testbench or include read, bytes: far above any written by hand or generated (the
/// biggest under tb/ is a few kB), far below what would strain the parser.
pub const MAX_YAML_BYTES: u64 = 64 << 20;

/// Reads a file (a UTF-8 byte-order mark, as some editors write, is dropped). A folder, a device
/// or a FIFO is refused at once (`/dev/zero` never ends, a FIFO may never be written), and so is
/// a file above [`MAX_YAML_BYTES`].
pub fn read(file: &Path) -> Result<String, InputError> {
    let meta = std::fs::metadata(file).map_err(|e| InputError::new(file, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        return Err(InputError::new(
            file,
            format!("cannot read: {what} (a YAML file is expected)"),
        ));
    }
    if meta.len() > MAX_YAML_BYTES {
        return Err(InputError::new(
            file,
            format!("cannot read: {} bytes; at most {MAX_YAML_BYTES} are read", meta.len()),
        ));
    }
    let text = std::fs::read_to_string(file).map_err(|e| InputError::new(file, format!("cannot read: {e}")))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Deepest `[` / `{` nesting accepted. The YAML parser's time grows with the square of the depth
/// (100 000 levels took a minute) before its own recursion limit (128) answers, so deeper text is
/// refused here first, in one linear pass.
pub const MAX_FLOW_DEPTH: usize = 100;

/// 1-based (line, column) of the first `[` / `{` nested deeper than [`MAX_FLOW_DEPTH`].
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    for (i, line) in text.lines().enumerate() {
        let mut quote: Option<char> = None;
        for (col, ch) in strip_comment(line).char_indices() {
            match quote {
                Some(q) if ch == q => quote = None,
                Some(_) => {}
                None => match ch {
                    '"' | '\'' => quote = Some(ch),
                    '[' | '{' => {
                        depth += 1;
                        if depth > MAX_FLOW_DEPTH {
                            return Some((i + 1, col + 1));
                        }
                    }
                    ']' | '}' => depth = depth.saturating_sub(1),
                    _ => {}
                },
            }
        }
    }
    None
}

/// Where the second `key` of a mapping is: serde_yaml reports a duplicate key at the mapping's
/// start (`line`), which for the top level is 1:1; the place to fix is the repeated key.
fn duplicate_at(text: &str, line: usize, key: &str) -> Option<(usize, usize)> {
    let pats = [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")];
    let mut hits = 0;
    for (i, l) in text.lines().enumerate().skip(line.saturating_sub(1)) {
        let code = strip_comment(l);
        for (col, _) in code.char_indices() {
            let rest = &code[col..];
            let before = code[..col].chars().last();
            let clean = before.is_none_or(|ch| !ch.is_alphanumeric() && ch != '_' && ch != '.');
            if clean && pats.iter().any(|p| rest.starts_with(p.as_str())) {
                hits += 1;
                if hits == 2 {
                    return Some((i + 1, col + 1));
                }
            }
        }
    }
    None
}

/// The line where a second YAML document starts (serde_yaml names no place): the shortest
/// prefix of lines that already holds two documents ends there; found by bisection.
fn second_document(text: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let two_docs = |k: usize| {
        serde_yaml::from_str::<Value>(&lines[..k].join("\n"))
            .is_err_and(|e| e.to_string().contains("more than one document"))
    };
    let (mut lo, mut hi) = (1, lines.len());
    if !two_docs(hi) {
        return None;
    }
    while lo < hi {
        let mid = (lo + hi) / 2;
        if two_docs(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(hi)
}

/// A serde_yaml error as an input error at its position.
fn yaml_error(file: &Path, text: &str, e: serde_yaml::Error) -> InputError {
    let loc = e.location();
    // serde_yaml appends " at line L column C" to the message; the position is ours to print.
    let mut msg = e.to_string();
    if let Some(i) = msg.find(" at line ") {
        msg.truncate(i);
    }
    let mut pos = loc.as_ref().map(|l| (l.line(), l.column()));
    if pos.is_none() && msg.contains("more than one document") {
        pos = second_document(text).map(|line| (line, 1));
    }
    if let (Some((line, _)), Some(k)) = (pos, msg.split("duplicate entry with key ").nth(1)) {
        let key = k.trim_matches('"');
        if let Some(p) = duplicate_at(text, line, key) {
            pos = Some(p);
        }
    }
    InputError {
        file: file.to_path_buf(),
        line: pos.map(|p| p.0),
        column: pos.map(|p| p.1),
        message: msg,
    }
}

/// Parses `text` (the contents of `file`) into `T`.
pub fn parse<T: DeserializeOwned>(file: &Path, text: &str) -> Result<T, InputError> {
    if let Some((line, col)) = too_deep(text) {
        return Err(InputError {
            file: file.to_path_buf(),
            line: Some(line),
            column: Some(col),
            message: format!("nested deeper than {MAX_FLOW_DEPTH} levels of `[` / `{{`"),
        });
    }
    // Through a generic value first: a typed map (the `instances:` of a testbench) would let a
    // repeated key silently replace the first; the generic value refuses it.
    serde_yaml::from_str::<Value>(text).map_err(|e| yaml_error(file, text, e))?;
    serde_yaml::from_str(text).map_err(|e| yaml_error(file, text, e))
}

/// Converts a YAML value to `T` (parameters, stimulus values); the error is the bare message.
pub fn from_value<T: DeserializeOwned>(v: Value) -> Result<T, String> {
    serde_yaml::from_value(v).map_err(|e| e.to_string())
}

/// Converts `T` to a YAML value (for comparing and printing).
pub fn to_value<T: Serialize>(v: &T) -> Value {
    serde_yaml::to_value(v).unwrap_or(Value::Null)
}

/// One-line YAML rendering (flow style) of a value, for messages.
pub fn show(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Sequence(s) => format!("[{}]", s.iter().map(show).collect::<Vec<_>>().join(", ")),
        Value::Mapping(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", show(k), show(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Tagged(t) => format!("{} {}", t.tag, show(&t.value)),
    }
}

/// Renders a value as block YAML (for `hwsim list`).
pub fn dump(v: &Value) -> String {
    serde_yaml::to_string(v).unwrap_or_default()
}

/// Deep merge: `over` wins; mappings merge key by key.
pub fn merge(base: &Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Mapping(b), Value::Mapping(o)) => {
            let mut m = b.clone();
            for (k, v) in o {
                let merged = match m.get(k) {
                    Some(bv) => merge(bv, v),
                    None => v.clone(),
                };
                m.insert(k.clone(), merged);
            }
            Value::Mapping(m)
        }
        (_, Value::Null) => base.clone(),
        _ => over.clone(),
    }
}

/// Whether `actual` matches `expected`: mappings match on the keys `expected` names, numbers by
/// value (1 == 1.0), everything else by equality.
pub fn matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Mapping(e), Value::Mapping(a)) => e.iter().all(|(k, ev)| a.get(k).is_some_and(|av| matches(ev, av))),
        (Value::Sequence(e), Value::Sequence(a)) => e.len() == a.len() && e.iter().zip(a).all(|(x, y)| matches(x, y)),
        (Value::Number(e), Value::Number(a)) => match (e.as_u64(), a.as_u64()) {
            (Some(x), Some(y)) => x == y,
            _ => e.as_f64() == a.as_f64(),
        },
        (Value::Bool(e), Value::Number(a)) => a.as_u64() == Some(*e as u64),
        (Value::Number(e), Value::Bool(a)) => e.as_u64() == Some(*a as u64),
        _ => expected == actual,
    }
}

/// The part of a YAML line before a comment (`#` at the start or after whitespace, outside
/// quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, ch) in line.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None if ch == '"' || ch == '\'' => quote = Some(ch),
            None if ch == '#' && prev_space => return &line[..i],
            None => {}
        }
        prev_space = ch.is_whitespace();
    }
    line
}

/// 1-based (line, column) of the first occurrence of `needle` as a key (`needle:`), else of the
/// bare text; comments are never matched.
pub fn locate(text: &str, needle: &str) -> Option<(usize, usize)> {
    if needle.is_empty() {
        return None;
    }
    let key = format!("{needle}:");
    for pat in [key.as_str(), needle] {
        for (i, line) in text.lines().enumerate() {
            let code = strip_comment(line);
            let mut from = 0;
            while let Some(c) = code[from..].find(pat) {
                let at = from + c;
                let before = code[..at].chars().last();
                let after = code[at + pat.len()..].chars().next();
                let clean_before = before.is_none_or(|ch| !ch.is_alphanumeric() && ch != '_' && ch != '.');
                let clean_after = pat.ends_with(':') || after.is_none_or(|ch| !ch.is_alphanumeric() && ch != '_');
                if clean_before && clean_after {
                    return Some((i + 1, at + 1));
                }
                from = at + pat.len();
            }
        }
    }
    None
}

/// Byte offset of the first `key:` written as a key (not in a comment, not the tail of a longer
/// word, followed by a space or the end of the line).
fn key_offset(text: &str, key: &str) -> Option<usize> {
    let pat = format!("{key}:");
    let mut off = 0;
    for line in text.split_inclusive('\n') {
        let code = strip_comment(line.trim_end_matches(['\n', '\r']));
        let mut from = 0;
        while let Some(c) = code[from..].find(&pat) {
            let at = from + c;
            let before = code[..at].chars().last();
            let after = code[at + pat.len()..].chars().next();
            let clean = before.is_none_or(|ch| !ch.is_alphanumeric() && ch != '_' && ch != '.');
            if clean && after.is_none_or(char::is_whitespace) {
                return Some(off + at);
            }
            from = at + pat.len();
        }
        off += line.len();
    }
    None
}

/// Byte ranges of the items of the flow sequence whose `[` is at `open` (items may span lines;
/// commas inside nested `[]`/`{}`, quotes and comments do not split).
fn flow_items(text: &str, open: usize) -> Vec<(usize, usize)> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut comment, mut prev_space) = (0usize, None, false, true);
    let (mut start, mut end): (Option<usize>, usize) = (None, open);
    for (i, ch) in text[open..].char_indices() {
        let i = open + i;
        if comment {
            comment = ch != '\n';
            prev_space = true;
            continue;
        }
        match (quote, ch) {
            (Some(q), _) => quote = (ch != q).then_some(q),
            (None, '#') if prev_space => {
                comment = true;
                continue;
            }
            (None, '"' | '\'') => quote = Some(ch),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    items.extend(start.map(|s| (s, end)));
                    return items;
                }
            }
            (None, ',') if depth == 1 => {
                items.extend(start.take().map(|s| (s, end)));
                prev_space = false;
                continue;
            }
            _ => {}
        }
        prev_space = ch.is_whitespace();
        if ch.is_whitespace() || (depth == 1 && ch == '[' && i == open) {
            continue;
        }
        start.get_or_insert(i);
        end = i + ch.len_utf8();
    }
    items
}

/// Byte ranges of the items of the sequence under the first `key:`: a block sequence (`- …`
/// lines, each item up to the next `-` at its indent) or a flow sequence (`[…, …]`, on one line
/// or several).
pub fn sequence_items(text: &str, key: &str) -> Option<Vec<(usize, usize)>> {
    let k = key_offset(text, key)?;
    let after = k + key.len() + 1;
    // The first character of the value, past spaces, line ends and comments.
    let mut value = None;
    let mut comment = false;
    for (i, ch) in text[after..].char_indices() {
        match ch {
            '\n' => comment = false,
            _ if comment || ch.is_whitespace() => {}
            '#' => comment = true,
            _ => {
                value = Some((after + i, ch));
                break;
            }
        }
    }
    let (v, first) = value?;
    if first == '[' {
        return Some(flow_items(text, v));
    }
    // A block sequence: lines starting with `-` at the first item's indent, until a line
    // indented less than the key's line (or as much, not being an item).
    let indent = |l: &str| l.len() - l.trim_start().len();
    let line_start = text[..k].rfind('\n').map_or(0, |i| i + 1);
    let base = indent(&text[line_start..k]);
    let mut items: Vec<(usize, usize)> = Vec::new();
    let mut item_indent = None;
    let mut off = line_start;
    for (n, line) in text[line_start..].split_inclusive('\n').enumerate() {
        let here = off;
        off += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let code = body.trim_start();
        if n == 0 || code.is_empty() || code.starts_with('#') {
            continue;
        }
        let ind = indent(body);
        let dash = code.starts_with('-');
        if ind < base || (ind == base && !dash) {
            break;
        }
        if dash && item_indent.is_none_or(|i| i == ind) {
            item_indent = Some(ind);
            items.push((here + ind, here + body.len()));
        } else if let Some(it) = items.last_mut() {
            it.1 = here + body.len();
        }
    }
    Some(items)
}

/// 1-based (line, column) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, offset - line_start + 1)
}

/// 1-based (line, column) of `field:` in the `index`-th item of the sequence under the first
/// `key:` (see [`sequence_items`]), else of that item's start; `None` without such an item.
pub fn locate_in_item(text: &str, key: &str, index: usize, field: &str) -> Option<(usize, usize)> {
    let &(s, e) = sequence_items(text, key)?.get(index)?;
    let at = key_offset(&text[s..e], field).map_or(s, |o| s + o);
    Some(line_col(text, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_skips_comments_and_partial_words() {
        let text = "# kind fifoo here\nx:\n  buf: {kind: fifoo}  # fifoo again\n  fifooo: 1\n";
        assert_eq!(locate(text, "fifoo"), Some((3, 15)));
        assert_eq!(locate(text, "buf"), Some((3, 3)));
        assert_eq!(locate("a: \"# not a comment fifoo\"\n", "fifoo"), Some((1, 21)));
        assert_eq!(locate("stage10: 1\nstage1: 2\n", "stage1"), Some((2, 1)));
    }

    #[test]
    fn duplicate_keys_and_deep_nesting_are_refused_at_their_place() {
        let f = Path::new("t.yaml");
        let e = parse::<Value>(f, "a: 1\nm:\n  x: 1\n  y: 2\n  x: 3\n").unwrap_err();
        assert_eq!((e.line, e.column), (Some(5), Some(3)), "{e}");
        let e = parse::<Value>(f, "seed: 1\nb: 2\nseed: 3\n").unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(1)), "{e}");
        let deep = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        let t = std::time::Instant::now();
        let e = parse::<Value>(f, &deep).unwrap_err();
        assert!(t.elapsed().as_secs() < 2);
        assert_eq!((e.line, e.column), (Some(1), Some(4 + MAX_FLOW_DEPTH)), "{e}");
        assert!(parse::<Value>(f, "a: '[[[[' # [[[[\nb: [[1]]\n").is_ok());
    }

    #[test]
    fn items_of_flow_and_block_sequences_are_located() {
        let flow = "a:\n  traffic: [{x: 1, dst: 1}, {x: \"a, b]\", dst: 9}]  # dst: 7\n";
        assert_eq!(locate_in_item(flow, "traffic", 0, "dst"), Some((2, 20)));
        assert_eq!(locate_in_item(flow, "traffic", 1, "dst"), Some((2, 42)));
        assert_eq!(locate_in_item(flow, "traffic", 1, "nope"), Some((2, 29)));
        assert_eq!(locate_in_item(flow, "traffic", 2, "dst"), None);
        let lines = "traffic: [\n  {dst: 1},   # {dst: 2},\n\n  {y: 2,\n   dst: 3}\n]\nnext: 1\n";
        assert_eq!(locate_in_item(lines, "traffic", 1, "dst"), Some((5, 4)));
        assert_eq!(sequence_items(lines, "traffic").map(|v| v.len()), Some(2));
        let block = "s:\n  traffic:\n  - {dst: 1}\n  - y: 2\n    dst: 3\n  faults:\n    - dst: 4\n";
        assert_eq!(locate_in_item(block, "traffic", 1, "dst"), Some((5, 5)));
        assert_eq!(locate_in_item(block, "traffic", 2, "dst"), None);
        assert_eq!(locate_in_item(block, "faults", 0, "dst"), Some((7, 7)));
        // `traffic:` inside a comment or a longer key is not the list.
        let other = "# traffic: [{dst: 0}]\nmy_traffic: [1]\ntraffic: [{dst: 5}]\n";
        assert_eq!(locate_in_item(other, "traffic", 0, "dst"), Some((3, 12)));
    }

    #[test]
    fn matches_partial_mappings_and_numbers() {
        let a: Value = serde_yaml::from_str("{psn: 7, qp: 3}").unwrap();
        assert!(matches(&serde_yaml::from_str("{psn: 7}").unwrap(), &a));
        assert!(!matches(&serde_yaml::from_str("{psn: 8}").unwrap(), &a));
        assert!(matches(
            &serde_yaml::from_str("1.0").unwrap(),
            &serde_yaml::from_str("1").unwrap()
        ));
    }

    #[test]
    fn merge_prefers_override() {
        let b: Value = serde_yaml::from_str("{a: 1, m: {x: 1, y: 2}}").unwrap();
        let o: Value = serde_yaml::from_str("{m: {y: 3}}").unwrap();
        assert_eq!(
            merge(&b, &o),
            serde_yaml::from_str::<Value>("{a: 1, m: {x: 1, y: 3}}").unwrap()
        );
    }
}
