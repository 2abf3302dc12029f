//! Build script: the git commit that `hwsim --version` names (`unknown` where git or the
//! repository is absent, as in a source tarball), and the tables `hwsim explain` prints from:
//! each block file's `//!` header (modules/src/**/*.rs) and the `///` documentation of each
//! field of its parameters (`pub struct …Params`), so a parameter's meaning and unit are
//! written once, on the field. (Counters come from each kind's counter table, `COUNTERS` in its
//! file, at run time.)

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    let s = String::from_utf8(o.stdout).ok()?.trim().to_string();
    (o.status.success() && !s.is_empty()).then_some(s)
}

/// The `///` documentation of each field of each `pub struct …Params` in `text`:
/// (struct, field, doc joined on one line).
fn param_docs(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut doc: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("pub struct ")
            .and_then(|r| r.strip_suffix(" {"))
            .filter(|n| n.ends_with("Params"))
        {
            current = Some(name.to_string());
            doc.clear();
            continue;
        }
        let Some(st) = &current else { continue };
        if line == "}" {
            current = None;
            continue;
        }
        let t = line.trim();
        if let Some(d) = t.strip_prefix("///") {
            doc.push(d.trim().to_string());
        } else if let Some(rest) = t.strip_prefix("pub ") {
            if let Some((field, _)) = rest.split_once(':') {
                out.push((st.clone(), field.trim().to_string(), doc.join(" ")));
            }
            doc.clear();
        } else if !t.starts_with("#[") {
            doc.clear();
        }
    }
    out
}

/// A source file's key: its path under modules/src without `.rs`, a folder's `mod.rs` named by
/// the folder (`rclink/tx`, `rclink/slot_fifo/node/ingress`, `switch/l2_switch/ingress`).
fn key_of(root: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(root).unwrap_or(p).with_extension("");
    let mut k = rel.to_string_lossy().replace('\\', "/");
    if let Some(folder) = k.strip_suffix("/mod") {
        k = folder.to_string();
    }
    k
}

/// Per block source file: its key, its `//!` header and its parameters' documentation.
type FileDocs = (String, String, Vec<(String, String, String)>);

fn scan(root: &Path, dir: &Path, out: &mut Vec<FileDocs>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scan(root, &p, out);
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
            out.push((key_of(root, &p), header.join("\n"), param_docs(&text)));
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
    let root = Path::new("modules/src");
    scan(root, root, &mut files);
    let mut code = String::from(
        "/// (file key, `//!` header) of each block source file (key: the path under modules/src,\n/// a folder's mod.rs named by the folder).\npub const BLOCK_FILES: &[(&str, &str)] = &[\n",
    );
    for (key, header, _) in &files {
        code.push_str(&format!("    ({key:?}, {header:?}),\n"));
    }
    code.push_str("];\n");
    code.push_str("/// (file key, struct, field, `///` doc) of each field of each `pub struct …Params`.\npub const PARAM_DOCS: &[(&str, &str, &str, &str)] = &[\n");
    for (key, _, params) in &files {
        for (st, field, doc) in params {
            code.push_str(&format!("    ({key:?}, {st:?}, {field:?}, {doc:?}),\n"));
        }
    }
    code.push_str("];\n");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("block_files.rs");
    std::fs::write(out, code).expect("write block_files.rs");
}
