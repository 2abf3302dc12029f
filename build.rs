//! Build script: the git commit that `hwsim --version` names (`unknown` where git or the
//! repository is absent, as in a source tarball), and the table `hwsim explain` prints from: each
//! block file's `//!` header (modules/src/**/*.rs). (Counters come from each kind's counter
//! table, `COUNTERS` in its file, at run time.)

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    let s = String::from_utf8(o.stdout).ok()?.trim().to_string();
    (o.status.success() && !s.is_empty()).then_some(s)
}

fn scan(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scan(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            println!("cargo:rerun-if-changed={}", p.display());
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let header: Vec<&str> = text
                .lines()
                .take_while(|l| l.starts_with("//!"))
                .map(|l| {
                    l.trim_start_matches("//!")
                        .strip_prefix(' ')
                        .unwrap_or(l.trim_start_matches("//!"))
                })
                .collect();
            // A block in a folder keeps its header in the folder's mod.rs: named by the folder.
            let named = if p.file_stem().is_some_and(|s| s == "mod") {
                p.parent().unwrap_or(&p)
            } else {
                p.as_path()
            };
            let stem = named
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push((stem, header.join("\n")));
        }
    }
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=HWSIM_COMMIT={commit}");
    if let Some(log) = git(&["rev-parse", "--git-path", "logs/HEAD"]) {
        if Path::new(&log).exists() {
            println!("cargo:rerun-if-changed={log}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    scan(Path::new("modules/src"), &mut files);
    let mut code = String::from(
        "/// (file stem, `//!` header) of each block source file.\npub const BLOCK_FILES: &[(&str, &str)] = &[\n",
    );
    for (stem, header) in files {
        code.push_str(&format!("    ({stem:?}, {header:?}),\n"));
    }
    code.push_str("];\n");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("block_files.rs");
    std::fs::write(out, code).expect("write block_files.rs");
}
