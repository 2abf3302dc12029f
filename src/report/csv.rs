//! CSV read back (`hwsim plot` of a probe CSV, which may have gone through a spreadsheet):
//! RFC 4180 records — fields separated by commas, a field in double quotes may hold commas, line
//! breaks and doubled quotes (`""`) — with a UTF-8 byte-order mark at the start dropped and
//! `\r\n` line ends taken as `\n`. Every field keeps its line and column for messages; what is
//! not CSV (a quote that never closes, text after a closing quote, a line over 1 MiB, bytes that
//! are not UTF-8) is refused at `file:line:column`, and a folder, device or FIFO at once.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::input::yaml::InputError;

/// Longest line read (a longer one is refused, so a file of one endless line cannot fill memory).
pub const MAX_LINE: u64 = 1 << 20;

/// One field: its text (unquoted) and where it starts (1-based line and column, in characters).
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The value, quotes removed.
    pub text: String,
    /// Line of its first character.
    pub line: usize,
    /// Column of its first character.
    pub column: usize,
}

/// Records read one at a time.
pub struct Reader<R> {
    input: R,
    path: PathBuf,
    /// Lines read so far.
    line: usize,
}

impl Reader<std::io::BufReader<std::fs::File>> {
    /// Opens `path`: a regular file only.
    pub fn open(path: &Path) -> Result<Self, InputError> {
        let meta = std::fs::metadata(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        if !meta.is_file() {
            return Err(InputError::new(
                path,
                "cannot read: not a regular file (a CSV file is expected)",
            ));
        }
        let f = std::fs::File::open(path).map_err(|e| InputError::new(path, format!("cannot read: {e}")))?;
        Ok(Reader::new(path, std::io::BufReader::new(f)))
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads from `input`; `path` names it in messages.
    pub fn new(path: &Path, input: R) -> Self {
        Reader {
            input,
            path: path.to_path_buf(),
            line: 0,
        }
    }

    fn err(&self, line: usize, column: usize, message: impl Into<String>) -> InputError {
        InputError {
            file: self.path.clone(),
            line: Some(line),
            column: Some(column),
            message: message.into(),
        }
    }

    /// The next line without its line end; `None` at the end of the file.
    fn next_line(&mut self) -> Result<Option<String>, InputError> {
        let mut buf = Vec::new();
        let n = std::io::Read::take(&mut self.input, MAX_LINE + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| InputError::new(&self.path, format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if buf.len() as u64 > MAX_LINE {
            return Err(self.err(self.line, 1, format!("a line longer than {MAX_LINE} bytes")));
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        let mut text = match String::from_utf8(buf) {
            Ok(t) => t,
            Err(e) => {
                let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let col = String::from_utf8_lossy(good).chars().count() + 1;
                return Err(self.err(self.line, col, "not UTF-8 text"));
            }
        };
        if self.line == 1 {
            if let Some(t) = text.strip_prefix('\u{feff}') {
                text = t.to_string();
            }
        }
        Ok(Some(text))
    }

    /// The next record (empty lines are skipped); `None` at the end of the file.
    pub fn record(&mut self) -> Result<Option<Vec<Field>>, InputError> {
        let mut line = loop {
            match self.next_line()? {
                None => return Ok(None),
                Some(l) if l.is_empty() => continue,
                Some(l) => break l,
            }
        };
        let mut fields = Vec::new();
        let mut chars: Vec<char> = line.chars().collect();
        let (mut i, mut ln) = (0usize, self.line);
        loop {
            let start = (ln, i + 1);
            let mut text = String::new();
            if chars.get(i) == Some(&'"') {
                // A quoted field: up to the lone closing quote, across line breaks.
                i += 1;
                loop {
                    match chars.get(i) {
                        Some('"') if chars.get(i + 1) == Some(&'"') => {
                            text.push('"');
                            i += 2;
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            text.push(c);
                            i += 1;
                        }
                        None => match self.next_line()? {
                            Some(next) => {
                                text.push('\n');
                                line = next;
                                chars = line.chars().collect();
                                i = 0;
                                ln = self.line;
                            }
                            None => {
                                return Err(self.err(
                                    start.0,
                                    start.1,
                                    "a quoted field that never closes (a truncated file?)",
                                ))
                            }
                        },
                    }
                }
                match chars.get(i) {
                    None | Some(',') => {}
                    Some(_) => {
                        return Err(self.err(
                            ln,
                            i + 1,
                            "after a closing quote, a comma or the end of the line is expected (a quote inside a field is written `\"\"`)",
                        ))
                    }
                }
            } else {
                while let Some(&c) = chars.get(i) {
                    if c == ',' {
                        break;
                    }
                    text.push(c);
                    i += 1;
                }
            }
            fields.push(Field {
                text,
                line: start.0,
                column: start.1,
            });
            if chars.get(i) == Some(&',') {
                i += 1;
            } else {
                return Ok(Some(fields));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Rows = Vec<Vec<(String, usize, usize)>>;

    fn all(text: &str) -> Result<Rows, String> {
        let mut r = Reader::new(Path::new("t.csv"), text.as_bytes());
        let mut out = Vec::new();
        while let Some(rec) = r.record().map_err(|e| e.to_string())? {
            out.push(rec.into_iter().map(|f| (f.text, f.line, f.column)).collect());
        }
        Ok(out)
    }

    #[test]
    fn reads_rfc_4180_with_a_bom_and_crlf() {
        let got = all("\u{feff}cycle,\"a,b\"\r\n0,\"1\"\r\n\"2\",\"say \"\"hi\"\"\"\n").unwrap();
        assert_eq!(
            got,
            vec![
                vec![("cycle".into(), 1, 1), ("a,b".into(), 1, 7)],
                vec![("0".into(), 2, 1), ("1".into(), 2, 3)],
                vec![("2".into(), 3, 1), ("say \"hi\"".into(), 3, 5)],
            ]
        );
        // A line break inside quotes belongs to the field; the next field's line follows it.
        let got = all("a,\"x\ny\",b\n").unwrap();
        assert_eq!(
            got,
            vec![vec![("a".into(), 1, 1), ("x\ny".into(), 1, 3), ("b".into(), 2, 4)]]
        );
        assert_eq!(all("a,,\n").unwrap()[0].len(), 3);
    }

    #[test]
    fn refuses_what_is_not_csv_at_its_place() {
        assert_eq!(
            all("a,b\n1,\"2\n").unwrap_err(),
            "t.csv:2:3: a quoted field that never closes (a truncated file?)"
        );
        assert!(all("a,\"b\"c\n")
            .unwrap_err()
            .starts_with("t.csv:1:6: after a closing quote"));
        let mut r = Reader::new(Path::new("t.csv"), &b"ab\xffc\n"[..]);
        assert_eq!(r.record().unwrap_err().to_string(), "t.csv:1:3: not UTF-8 text");
    }
}
