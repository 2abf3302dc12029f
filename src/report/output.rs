//! Output files (VCD, JSON, DOT): never over an input or over each other, and never half written
//! under their final name.
//!
//! A regular file is written to a temporary name in the same folder and renamed over the final
//! name only when complete, so a failed or interrupted run leaves either the old file or the whole
//! new one. A target that exists and is not a regular file (`/dev/null`, a FIFO, a terminal) is
//! written in place: it cannot be renamed over, and there is no half file to protect.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::input::yaml::InputError;

/// The temporary files being written now, for [`remove_temporaries`].
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding it leaves the list as it was: still usable.
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

fn forget(tmp: &Path) {
    let mut l = live();
    if let Some(i) = l.iter().position(|p| p == tmp) {
        l.swap_remove(i);
    }
}

/// Removes every temporary file still being written and ends the process with `code`: a second
/// Ctrl-C ends it at once, without the unwinding that would have removed them (main.rs). The
/// list stays locked until the end, so no file is staged after the removal; and a file is
/// created and listed under the lock (`stage`), so none is created unlisted.
pub fn remove_temporaries_and_exit(code: i32) -> ! {
    let mut l = live();
    for p in l.drain(..) {
        let _ = std::fs::remove_file(p);
    }
    std::process::exit(code)
}

/// A file being written under a temporary name; [`Staged::commit`] renames it into place. Dropped
/// without a commit, it removes the temporary file.
pub struct Staged {
    target: PathBuf,
    tmp: Option<PathBuf>,
}

/// Opens `target` for writing (through a temporary name when it is, or will be, a regular file).
pub fn stage(target: &Path) -> Result<(File, Staged), InputError> {
    let cannot = |e: std::io::Error| InputError::new(target, format!("cannot write: {e}"));
    let special = std::fs::metadata(target).is_ok_and(|m| !m.is_file());
    if special {
        let f = std::fs::OpenOptions::new().write(true).open(target).map_err(cannot)?;
        return Ok((
            f,
            Staged {
                target: target.to_path_buf(),
                tmp: None,
            },
        ));
    }
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| InputError::new(target, format!("cannot create folder: {e}")))?;
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The temporary name carries the final one when the file system allows it (255 bytes a
    // name); a longer final name gets a short temporary one, unique in this process.
    let pid = std::process::id();
    let long = format!(".{name}.hwsim-{pid}.tmp");
    let tmp = if long.len() <= 255 {
        target.with_file_name(long)
    } else {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let k = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        target.with_file_name(format!(".hwsim-{pid}-{k}.tmp"))
    };
    let f = {
        let mut l = live();
        let f = File::create(&tmp).map_err(cannot)?;
        l.push(tmp.clone());
        f
    };
    Ok((
        f,
        Staged {
            target: target.to_path_buf(),
            tmp: Some(tmp),
        },
    ))
}

impl Staged {
    /// The final name.
    pub fn target(&self) -> &Path {
        &self.target
    }
    /// Where the file is being written (the final name for a device or FIFO).
    pub fn temporary(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.target)
    }
    /// Moves the complete file to its final name.
    pub fn commit(mut self) -> Result<(), InputError> {
        if let Some(tmp) = self.tmp.take() {
            forget(&tmp);
            if let Err(e) = std::fs::rename(&tmp, &self.target) {
                let _ = std::fs::remove_file(&tmp);
                return Err(InputError::new(&self.target, format!("cannot write: {e}")));
            }
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            forget(&tmp);
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `bytes` to `target` through a temporary name.
pub fn write_file(target: &Path, bytes: &[u8]) -> Result<(), InputError> {
    use std::io::Write;
    let (mut f, staged) = stage(target)?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all().or(Ok(())))
        .map_err(|e| InputError::new(target, format!("cannot write: {e}")))?;
    drop(f);
    staged.commit()
}

/// The identity of a path for comparison: the file's device and inode when it exists (so a
/// symlink or hard link to an input is caught), else its absolute path with the folder resolved.
fn identity(p: &Path) -> Identity {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = std::fs::metadata(p) {
        return Identity::Inode(m.dev(), m.ino());
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = abs.parent().and_then(|d| d.canonicalize().ok());
    match (dir, abs.file_name()) {
        (Some(d), Some(n)) => Identity::Path(d.join(n)),
        _ => Identity::Path(abs),
    }
}

#[derive(PartialEq, Eq, Hash)]
enum Identity {
    Inode(u64, u64),
    Path(PathBuf),
}

/// Refuses an output that is one of the inputs, or the same file as another output. `outputs`
/// are (option name, path).
pub fn check_outputs(inputs: &[PathBuf], outputs: &[(&str, &Path)]) -> Result<(), String> {
    // Each path's identity once (it costs system calls), then a table: `hwsim vectors` of 4 000
    // instances compared every output with every earlier one (1.5 million failed `readlink`s
    // for 1 000, 43 s for 4 000).
    let inputs: std::collections::HashMap<Identity, &PathBuf> = inputs.iter().rev().map(|p| (identity(p), p)).collect();
    let mut seen: std::collections::HashMap<Identity, usize> = std::collections::HashMap::new();
    for (i, (opt, out)) in outputs.iter().enumerate() {
        // Character devices and FIFOs are sinks, not files to protect (`--vcd /dev/null`).
        if std::fs::metadata(out).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            continue;
        }
        let id = identity(out);
        if let Some(inp) = inputs.get(&id) {
            return Err(format!(
                "{opt} {}: is the input {}; refusing to overwrite it",
                out.display(),
                inp.display()
            ));
        }
        if let Some(&k) = seen.get(&id) {
            let (opt2, out2) = outputs[k];
            return Err(format!(
                "{opt} {} and {opt2} {} are the same file; give each output its own path",
                out.display(),
                out2.display()
            ));
        }
        seen.insert(id, i);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_file_appears_only_on_commit() {
        let d = std::env::temp_dir().join(format!("hwsim-output-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let target = d.join("out.txt");
        let (f, s) = stage(&target).unwrap();
        drop(f);
        assert!(!target.exists(), "nothing under the final name before the commit");
        drop(s);
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            0,
            "the temporary file is removed"
        );
        write_file(&target, b"whole").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        assert!(check_outputs(std::slice::from_ref(&target), &[("--json", &target)]).is_err());
        let other = d.join(".").join("out.txt");
        assert!(check_outputs(&[], &[("--vcd", &d.join("new.vcd")), ("--json", &d.join("./new.vcd"))]).is_err());
        assert!(check_outputs(std::slice::from_ref(&target), &[("--vcd", &other)]).is_err());
        assert!(check_outputs(std::slice::from_ref(&target), &[("--vcd", &d.join("a.vcd"))]).is_ok());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_name_of_255_bytes_is_written() {
        let d = std::env::temp_dir().join(format!("hwsim-output-long-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let target = d.join(format!("{}.json", "x".repeat(250)));
        write_file(&target, b"whole").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "no temporary file left");
        let _ = std::fs::remove_dir_all(&d);
    }
}
