//! src/'s layers (docs/layout.md): input/ uses nothing else of the crate, build/ only input/,
//! report/ only input/ and build/ (never run/), run/ any of them. Read from the `crate::`
//! paths outside comments and test modules, as the layout promises them.

use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The layers the code of `layer` names through `crate::LAYER`.
fn uses(layer: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut fs = Vec::new();
    files(&root.join(layer), &mut fs);
    let mut found = Vec::new();
    for f in fs {
        let text = std::fs::read_to_string(&f).unwrap();
        let text = text.split("#[cfg(test)]").next().unwrap();
        for line in text.lines() {
            let code = line.split("//").next().unwrap();
            for other in ["input", "build", "run", "report"] {
                if other != layer && code.contains(&format!("crate::{other}::")) {
                    found.push((other.to_string(), format!("{}: {}", f.display(), line.trim())));
                }
            }
        }
    }
    found
}

#[test]
fn each_layer_uses_only_the_layers_below_it() {
    for (layer, allowed) in [
        ("input", &[][..]),
        ("build", &["input"][..]),
        ("report", &["input", "build"][..]),
        ("run", &["input", "build", "report"][..]),
    ] {
        let bad: Vec<String> = uses(layer)
            .into_iter()
            .filter(|(other, _)| !allowed.contains(&other.as_str()))
            .map(|(_, at)| at)
            .collect();
        assert!(bad.is_empty(), "{layer}/ may use {allowed:?} only:\n{}", bad.join("\n"));
    }
}
