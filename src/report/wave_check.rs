//! The checks a wave file passes before the reader sees it (`hwsim diff`, `hwsim plot`, RTL
//! waves): a bounded, token-by-token pass over a VCD that refuses, with file and line:column,
//! what the reader would allocate without bound or read leniently.

use std::path::Path;

use crate::input::yaml::InputError;

/// Widest variable read from a wave, bits (hwsim writes at most 4096; RTL memories dumped whole
/// can be wider): a declared width is what the reader allocates for every value.
pub const MAX_WAVE_WIDTH: u64 = 1 << 16;

/// Longest header line read, bytes.
const MAX_HEADER_LINE: u64 = 1 << 20;

/// Longest body line read, bytes (a value of [`MAX_WAVE_WIDTH`] bits is 64 KiB).
const MAX_BODY_LINE: u64 = 16 << 20;

/// The whitespace-separated tokens of `line` with their 1-based columns.
fn tokens(line: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == line.len() {
            return None;
        }
        let start = i;
        while i < line.len() && !line[i].is_ascii_whitespace() {
            i += 1;
        }
        Some((start + 1, &line[start..i]))
    })
}

/// Before a wave reaches the reader, which allocates what the file declares and reads a body
/// leniently: the file must be a regular one (`/dev/zero` or a FIFO would never end); a VCD's
/// header must end and declare no variable wider than [`MAX_WAVE_WIDTH`]; and its body must be
/// whole and well formed — times that parse and never go back, value changes with a declared
/// id, a file that ends with a line break (a VCD cut mid-line, mid-change or mid-timestamp was
/// read as a shorter wave, and a time going back was a warning printed into the report). Every
/// refusal names the file and line:column.
pub fn precheck(path: &Path) -> Result<(), InputError> {
    use std::io::BufRead;
    let meta = std::fs::metadata(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(InputError::new(
            path,
            "cannot read the wave: not a regular file (a VCD or FST file is expected)",
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
    let mut r = std::io::BufReader::new(f);
    let first = r
        .fill_buf()
        .map(|b| b.iter().find(|c| !c.is_ascii_whitespace()).copied());
    if first.ok().flatten() != Some(b'$') {
        // Not a VCD (an FST is binary): the reader's own checks apply.
        return Ok(());
    }
    let at = |line: usize, column: usize, msg: String| InputError {
        file: path.to_path_buf(),
        line: Some(line),
        column: Some(column),
        message: format!("cannot read the wave: {msg}"),
    };
    // Tokens are read one at a time (a declaration may span lines); lines are bounded so a file
    // of one endless line cannot fill memory here either.
    let mut line: Vec<u8> = Vec::new();
    let mut n = 0usize;
    let mut byte = 0u64;
    let mut st = VcdCheck::default();
    loop {
        line.clear();
        let limit = if st.in_header { MAX_HEADER_LINE } else { MAX_BODY_LINE };
        let got = std::io::Read::take(&mut r, limit + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        if got == 0 {
            break;
        }
        n += 1;
        byte += got as u64;
        if got as u64 > limit {
            let part = if st.in_header { "header" } else { "body" };
            return Err(at(n, 1, format!("a line of the {part} longer than {limit} bytes")));
        }
        let line_end = line.last() == Some(&b'\n');
        if !line_end {
            // The last line, cut: its last token is a part of one (`#12` of `#1200`, `b10` of
            // `b1011 !`), whatever it parses as.
            let col = line.len() + 1;
            return Err(at(
                n,
                col,
                format!("the file ends mid-line at byte {byte} (no final line break): a truncated file?"),
            ));
        }
        for (col, tok) in tokens(&line) {
            let r = if st.in_header {
                st.header(n, col, tok)
            } else {
                st.body(n, col, tok)
            };
            r.map_err(|(l, c, msg)| at(l, c, msg))?;
        }
    }
    if st.in_header {
        return Err(at(
            n.max(1),
            1,
            format!("the header ends at line {n} without $enddefinitions (a truncated file?)"),
        ));
    }
    let cut = |what: &str| format!("the file ends {what} at byte {byte}: a truncated file?");
    if let Some((l, c)) = st.value_at {
        return Err(at(l, c, cut("in a value change without its variable id")));
    }
    if let Some((l, c)) = st.comment_at {
        return Err(at(l, c, cut("inside a $comment")));
    }
    Ok(())
}

/// A refusal at (line, column).
type At = (usize, usize, String);

/// A token, at most 40 bytes of it, as a message shows it.
fn show(t: &[u8]) -> String {
    String::from_utf8_lossy(&t[..t.len().min(40)])
        .escape_debug()
        .to_string()
}

/// What [`precheck`] knows of a VCD as it reads it token by token.
struct VcdCheck {
    in_header: bool,
    /// The header: the `$var … $end` declaration being read, where it started, the ids declared.
    pending: Vec<Vec<u8>>,
    pending_at: (usize, usize),
    ids: std::collections::HashSet<Vec<u8>>,
    /// The body: a vector or real value waits for its id (where it started); a comment for
    /// `$end`; the last time and its line.
    value_at: Option<(usize, usize)>,
    comment_at: Option<(usize, usize)>,
    last_time: Option<(u64, usize)>,
}

impl Default for VcdCheck {
    fn default() -> Self {
        VcdCheck {
            in_header: true,
            pending: Vec::new(),
            pending_at: (0, 0),
            ids: std::collections::HashSet::new(),
            value_at: None,
            comment_at: None,
            last_time: None,
        }
    }
}

impl VcdCheck {
    /// A header token: `$var <type> <width> <id> <name> … $end` declarations up to
    /// `$enddefinitions`, each no wider than [`MAX_WAVE_WIDTH`].
    fn header(&mut self, n: usize, col: usize, tok: &[u8]) -> Result<(), At> {
        if tok == b"$enddefinitions" {
            self.in_header = false;
            return Ok(());
        }
        if tok == b"$var" {
            self.pending.clear();
            self.pending_at = (n, col);
        }
        self.pending.push(tok.to_vec());
        if tok == b"$end" && self.pending.first().is_some_and(|t| t == b"$var") {
            let (l, c) = self.pending_at;
            let width = std::str::from_utf8(self.pending.get(2).map_or(&[][..], |w| w))
                .ok()
                .and_then(|w| w.parse::<u64>().ok());
            let name = self.pending.get(4).map_or("?".to_string(), |t| show(t));
            match width {
                Some(w) if w <= MAX_WAVE_WIDTH => {}
                Some(w) => {
                    return Err((
                        l,
                        c,
                        format!("variable `{name}` is {w} bits wide; at most {MAX_WAVE_WIDTH} are read"),
                    ))
                }
                None => return Err((l, c, "a $var without a width".into())),
            }
            if let Some(id) = self.pending.get(3) {
                self.ids.insert(id.clone());
            }
            self.pending.clear();
        }
        Ok(())
    }

    /// A body token: times that parse and never go back, value changes with a declared id,
    /// comments closed, nothing else.
    fn body(&mut self, n: usize, col: usize, tok: &[u8]) -> Result<(), At> {
        if self.comment_at.is_some() {
            if tok == b"$end" {
                self.comment_at = None;
            }
            return Ok(());
        }
        if self.value_at.take().is_some() {
            if !self.ids.contains(tok) {
                return Err((n, col, format!("`{}` is not the id of a declared variable", show(tok))));
            }
            return Ok(());
        }
        match tok[0] {
            b'#' => self.time(n, col, tok),
            b'0' | b'1' | b'z' | b'Z' | b'x' | b'X' | b'h' | b'H' | b'u' | b'U' | b'w' | b'W' | b'l' | b'L' | b'-' => {
                let id = &tok[1..];
                if id.is_empty() {
                    return Err((n, col, format!("the value change `{}` has no variable id", show(tok))));
                }
                if !self.ids.contains(id) {
                    return Err((
                        n,
                        col + 1,
                        format!("`{}` is not the id of a declared variable", show(id)),
                    ));
                }
                Ok(())
            }
            b'b' | b'B' | b'r' | b'R' | b's' | b'S' => {
                self.value_at = Some((n, col));
                Ok(())
            }
            _ => match tok {
                b"$comment" => {
                    self.comment_at = Some((n, col));
                    Ok(())
                }
                b"$dumpvars" | b"$end" | b"$dumpoff" | b"$dumpon" | b"$dumpall" => Ok(()),
                _ => Err((n, col, format!("unexpected `{}` in the value changes", show(tok)))),
            },
        }
    }

    /// A `#time`: a number (an integral real too) not below the last.
    fn time(&mut self, n: usize, col: usize, tok: &[u8]) -> Result<(), At> {
        let text = std::str::from_utf8(&tok[1..]).unwrap_or("");
        let t = text.parse::<u64>().ok().or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0 && v.fract() == 0.0 && *v < 1.8e19)
                .map(|v| v as u64)
        });
        let Some(t) = t else {
            return Err((n, col, format!("`{}` is not a time", show(tok))));
        };
        if let Some((prev, prev_line)) = self.last_time {
            if t < prev {
                return Err((
                    n,
                    col,
                    format!("time #{t} goes back (line {prev_line} is at #{prev}): times must not decrease"),
                ));
            }
        }
        self.last_time = Some((t, n));
        Ok(())
    }
}
