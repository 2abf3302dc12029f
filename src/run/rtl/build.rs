//! Building an RTL module with Verilator into a small simulator process, once per source text
//! and parameters (cached).
//!
//! The build is a C++ shim around the Verilated model, generated from the model's own header
//! (`V<top>.h`, whose `VL_IN*` / `VL_OUT*` lines give every top-level port with its width), so
//! one program serves any map: it reads one line per cycle with the values of the inputs (in the
//! order of the header, clock and reset left out) and answers one line with the values of every
//! output (a line starting `+` evaluates the same cycle again: a replaced node's later process).
//! What the RTL prints (`$display`) goes to the standard error, which hwsim's is, never among
//! the answers (it was read as port values: a false divergence).
//! `sim --ports` prints the port list the answer follows.
//!
//! Why a process and not a library loaded into hwsim (what the `marlin-verilator` crate does: it
//! builds the Verilated model as a shared library and opens it with `libloading`): the shim
//! needs nothing but Verilator and g++ (no C++ ABI, no `unsafe` FFI in hwsim, no further crates),
//! an RTL that crashes or hangs takes down only its process (the run reports it, and a hang is
//! bounded: [`super::watchdog`]), and the cost is where it can be afforded. Measured on the
//! 2-core machine, go_back_n (50 835 cycles): a shadow batches 256 cycles per pipe exchange,
//! 0.06 s against 0.001 s without it; in replace mode each cycle the RTL is awake is one round
//! trip (its combinational answer is needed in the cycle), about 47 µs (`sleep: false`, 200 000
//! cycles: 9.3–9.7 s), so a replaced node sleeps when idle (21 busy cycles there: 0.004–0.007 s).
//! A replaced node that is busy most cycles of a long run is where an in-process model would
//! pay: the shim's `step` would then be called through the C ABI instead of the pipe.
//!
//! Cache: `DIR/<top>-<key>/` where the key is a hash of the Verilator version, the shim's
//! version, the top, clock, reset, parameters and the sources' text. A build happens in
//! `DIR/.<top>-<key>.tmp<pid>/` and is renamed into place when it succeeded, so a failed or
//! interrupted build leaves no cache entry (only its temporary folder, removed on failure).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The start of the error when Verilator cannot be run (`hwsim regress` skips such testbenches).
pub const NO_VERILATOR: &str = "verilator is not installed or does not run";

/// Version of the generated shim: a change to [`shim`] must bump it (it is part of the key).
const SHIM_VERSION: u32 = 4;

/// Largest source file read for the key (and handed to Verilator).
const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// A top-level port of the RTL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtlPort {
    pub name: String,
    pub input: bool,
    pub width: u32,
}

/// What a build gives: the simulator program and the RTL's ports.
pub struct Built {
    pub exe: PathBuf,
    pub ports: Vec<RtlPort>,
    /// Whether this run built it (false: from the cache).
    pub fresh: bool,
}

/// What to build.
pub struct Request<'a> {
    pub sources: &'a [PathBuf],
    pub top: &'a str,
    pub parameters: &'a BTreeMap<String, i64>,
    pub clock: &'a str,
    /// The reset port and whether it is active low.
    pub reset: Option<(&'a str, bool)>,
}

/// 64-bit FNV-1a: a key that stays the same across Rust versions (std's hasher may not).
fn fnv(h: &mut u64, bytes: &[u8]) {
    *h = hwsim_hw::rng::fnv1a_extend(*h, bytes);
}

/// `verilator --version`, or why it cannot run.
fn verilator_version() -> Result<String, String> {
    match Command::new("verilator").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => Err(format!("{NO_VERILATOR} (Debian: apt-get install verilator g++ make)")),
    }
}

/// Builds (or finds in the cache under `root`) the simulator of `req`.
pub fn build(req: &Request<'_>, root: &Path) -> Result<Built, String> {
    let version = verilator_version()?;
    let mut key = hwsim_hw::rng::FNV_OFFSET;
    fnv(
        &mut key,
        format!(
            "{version}\0{SHIM_VERSION}\0{}\0{}\0{:?}\0",
            req.top, req.clock, req.reset
        )
        .as_bytes(),
    );
    for (k, v) in req.parameters {
        fnv(&mut key, format!("{k}={v}\0").as_bytes());
    }
    for src in req.sources {
        let len = std::fs::metadata(src)
            .map_err(|e| format!("source {}: {e}", src.display()))?
            .len();
        if len > MAX_SOURCE_BYTES {
            return Err(format!(
                "source {}: {len} bytes, more than the {MAX_SOURCE_BYTES} read",
                src.display()
            ));
        }
        let text = std::fs::read(src).map_err(|e| format!("source {}: {e}", src.display()))?;
        fnv(&mut key, src.to_string_lossy().as_bytes());
        fnv(&mut key, &text);
    }
    let dir = root.join(format!("{}-{key:016x}", req.top));
    let exe = dir.join("sim");
    if exe.is_file() {
        let ports = read_ports(&exe)?;
        return Ok(Built {
            exe,
            ports,
            fresh: false,
        });
    }
    std::fs::create_dir_all(root).map_err(|e| format!("{}: cannot create: {e}", root.display()))?;
    // Absolute paths: Verilator's make runs in the object folder.
    let root = &root.canonicalize().map_err(|e| format!("{}: {e}", root.display()))?;
    let dir = root.join(format!("{}-{key:016x}", req.top));
    let exe = dir.join("sim");
    // Unique per process and per build in it (two test threads may build the same key).
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = root.join(format!(".{}-{key:016x}.tmp{}-{seq}", req.top, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: cannot create: {e}", tmp.display()))?;
    let r = build_in(req, &tmp);
    match r {
        Ok(()) => {
            // Another run may have built the same key meanwhile: theirs is as good.
            if std::fs::rename(&tmp, &dir).is_err() && !exe.is_file() {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(format!("{}: cannot move the build into place", dir.display()));
            }
            let _ = std::fs::remove_dir_all(&tmp);
            let ports = read_ports(&exe)?;
            Ok(Built {
                exe,
                ports,
                fresh: true,
            })
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Verilates, reads the header, writes the shim and builds it, all inside `tmp`.
fn build_in(req: &Request<'_>, tmp: &Path) -> Result<(), String> {
    let obj = tmp.join("obj");
    let mut base: Vec<String> = vec![
        "--cc".into(),
        "-Wno-fatal".into(),
        "--top-module".into(),
        req.top.into(),
        "-Mdir".into(),
        obj.to_string_lossy().into_owned(),
    ];
    for (k, v) in req.parameters {
        base.push(format!("-G{k}={v}"));
    }
    for s in req.sources {
        let abs = s.canonicalize().map_err(|e| format!("source {}: {e}", s.display()))?;
        base.push(abs.to_string_lossy().into_owned());
    }
    run(
        Command::new("verilator").args(&base),
        &tmp.join("verilate.log"),
        "verilator",
    )?;
    let header = obj.join(format!("V{}.h", req.top));
    let text = std::fs::read_to_string(&header).map_err(|e| format!("{}: {e}", header.display()))?;
    let ports = parse_header(&text);
    for (what, name) in [("clock", Some(req.clock)), ("reset", req.reset.map(|r| r.0))] {
        if let Some(n) = name {
            if !ports.iter().any(|p| p.input && p.name == n && p.width == 1) {
                return Err(format!("the top `{}` has no 1-bit input `{n}` (its {what})", req.top));
            }
        }
    }
    let main = tmp.join("main.cpp");
    std::fs::write(&main, shim(req, &ports)).map_err(|e| format!("{}: {e}", main.display()))?;
    let mut all = base.clone();
    all.extend([
        "--exe".into(),
        "--build".into(),
        "-j".into(),
        "2".into(),
        "-o".into(),
        tmp.join("sim").to_string_lossy().into_owned(),
        main.to_string_lossy().into_owned(),
    ]);
    run(
        Command::new("verilator").args(&all),
        &tmp.join("build.log"),
        "verilator --build",
    )?;
    Ok(())
}

/// Runs a build step with its output in `log`; on failure the error quotes the log's end.
fn run(cmd: &mut Command, log: &Path, what: &str) -> Result<(), String> {
    let o = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    let mut text = o.stdout;
    text.extend_from_slice(&o.stderr);
    let _ = std::fs::write(log, &text);
    if o.status.success() {
        return Ok(());
    }
    // The first error line says what is wrong; the log keeps the rest (the build folder is
    // removed on failure, so the log is copied beside it).
    let t = String::from_utf8_lossy(&text);
    let first = t
        .lines()
        .find(|l| l.contains("%Error") || l.contains("error:"))
        .or_else(|| t.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim()
        .to_string();
    let kept = log
        .parent()
        .and_then(Path::parent)
        .map(|r| r.join("last-failed-build.log"));
    if let Some(k) = &kept {
        let _ = std::fs::write(k, &text);
    }
    let log_note = kept.map_or(String::new(), |k| format!(" (the whole log: {})", k.display()));
    Err(format!("{what} failed: {first}{log_note}"))
}

/// The top-level ports of a Verilated model's header: `VL_IN8(&clk,0,0);`, `VL_OUT16(&x,15,0);`,
/// `VL_INW(&w,95,0,3);` (a wide port, more than 64 bits).
pub fn parse_header(text: &str) -> Vec<RtlPort> {
    let mut v = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let input = if l.starts_with("VL_IN") {
            true
        } else if l.starts_with("VL_OUT") {
            false
        } else {
            continue;
        };
        let Some(open) = l.find("(&") else { continue };
        let inner = &l[open + 2..];
        let Some(close) = inner.find(')') else { continue };
        let parts: Vec<&str> = inner[..close].split(',').map(str::trim).collect();
        if parts.len() < 3 {
            continue;
        }
        let (Ok(msb), Ok(lsb)) = (parts[1].parse::<u32>(), parts[2].parse::<u32>()) else {
            continue;
        };
        v.push(RtlPort {
            name: parts[0].to_string(),
            input,
            width: msb.saturating_sub(lsb) + 1,
        });
    }
    v
}

/// The ports as the shim prints them: `in NAME WIDTH` / `out NAME WIDTH`, one per line.
fn read_ports(exe: &Path) -> Result<Vec<RtlPort>, String> {
    let o = Command::new(exe)
        .arg("--ports")
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&o.stdout);
    let mut v = Vec::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if let [dir, name, width] = w[..] {
            v.push(RtlPort {
                name: name.to_string(),
                input: dir == "in",
                width: width
                    .parse()
                    .map_err(|_| format!("{}: bad port line `{l}`", exe.display()))?,
            });
        }
    }
    Ok(v)
}

/// The generated main: reset before cycle 0, then per input line the edge that ends the last
/// cycle, this cycle's inputs, `eval`, the outputs, the clock low (the timing of
/// examples/rtl/tb_vc.cpp); a line starting `+` is the same cycle evaluated again with new
/// inputs, no edge. Wide ports (> 64 bits) are listed but not driven or read (an input that
/// wide is refused before the run: [`super::launch`]).
fn shim(req: &Request<'_>, ports: &[RtlPort]) -> String {
    let top = req.top;
    let reset = req.reset.map(|r| r.0);
    let ins: Vec<&RtlPort> = ports
        .iter()
        .filter(|p| p.input && p.name != req.clock && Some(p.name.as_str()) != reset && p.width <= 64)
        .collect();
    let outs: Vec<&RtlPort> = ports.iter().filter(|p| !p.input && p.width <= 64).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// Generated by hwsim (src/run/rtl/build.rs, shim version {SHIM_VERSION})."
    );
    let _ = writeln!(
        s,
        "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <unistd.h>\n#include \"V{top}.h\"\n#include \"verilated.h\""
    );
    let _ = writeln!(s, "int main(int argc, char** argv) {{");
    let _ = writeln!(s, "    if (argc > 1 && std::strcmp(argv[1], \"--ports\") == 0) {{");
    // Every port, as the model's header gives them (clock, reset and wide ones too): a cached
    // build then knows what a fresh one knows (an unmapped 80-bit input is refused either way).
    for p in ports {
        let dir = if p.input { "in" } else { "out" };
        let _ = writeln!(s, "        std::printf(\"{dir} {} {}\\n\");", p.name, p.width);
    }
    let _ = writeln!(s, "        return 0;\n    }}");
    // The answers go down the pipe hwsim reads; what the RTL prints (`$display`, through the
    // C stdout) goes to the standard error, line by line, never among the answers.
    let _ = writeln!(
        s,
        "    std::FILE* ans = fdopen(dup(1), \"w\");\n    if (!ans || dup2(2, 1) < 0) return 3;\n    std::setvbuf(stdout, nullptr, _IOLBF, 0);"
    );
    let _ = writeln!(s, "    VerilatedContext ctx;\n    V{top} top(&ctx);");
    let _ = writeln!(s, "    top.{} = 0;", req.clock);
    if let Some((r, low)) = req.reset {
        let (on, off) = if low { (0, 1) } else { (1, 0) };
        let _ = writeln!(s, "    top.{r} = {on};\n    top.eval();\n    top.{0} = 1;\n    top.eval();\n    top.{0} = 0;\n    top.{r} = {off};", req.clock);
    }
    let _ = writeln!(s, "    top.eval();");
    let _ = writeln!(
        s,
        "    static char line[1 << 16];\n    unsigned long long v[{}];",
        ins.len().max(1)
    );
    let _ = writeln!(
        s,
        "    for (unsigned long long c = 0; std::fgets(line, sizeof line, stdin); c++) {{"
    );
    // A line starting `+` evaluates the same cycle again with new inputs (a later process of
    // a replaced node), without the clock edge.
    let _ = writeln!(s, "        bool again = line[0] == '+';");
    let _ = writeln!(s, "        char* p = again ? line + 1 : line;");
    let _ = writeln!(
        s,
        "        for (int i = 0; i < {}; i++) v[i] = std::strtoull(p, &p, 10);",
        ins.len()
    );
    let _ = writeln!(
        s,
        "        if (c > 0 && !again) {{ top.{} = 1; top.eval(); }}",
        req.clock
    );
    for (i, p) in ins.iter().enumerate() {
        let _ = writeln!(s, "        top.{} = v[{i}];", p.name);
    }
    let _ = writeln!(s, "        top.eval();");
    let fmt: Vec<&str> = outs.iter().map(|_| "%llu").collect();
    let args: String = outs
        .iter()
        .map(|p| format!(", (unsigned long long)top.{}", p.name))
        .collect();
    let _ = writeln!(s, "        std::fprintf(ans, \"{}\\n\"{args});", fmt.join(" "));
    let _ = writeln!(s, "        std::fflush(ans);");
    let _ = writeln!(s, "        top.{} = 0;\n        top.eval();", req.clock);
    let _ = writeln!(s, "    }}\n    top.final();\n    return 0;\n}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_ports_with_their_widths() {
        let h = "  VL_IN8(&clk,0,0);\n    VL_OUT16(&grant_vc,2,0);\n VL_IN64(&w,63,0);\n VL_INW(&big,95,0,3);\n// VL_IN8 comment\n";
        let p = parse_header(h);
        assert_eq!(
            p,
            vec![
                RtlPort {
                    name: "clk".into(),
                    input: true,
                    width: 1
                },
                RtlPort {
                    name: "grant_vc".into(),
                    input: false,
                    width: 3
                },
                RtlPort {
                    name: "w".into(),
                    input: true,
                    width: 64
                },
                RtlPort {
                    name: "big".into(),
                    input: true,
                    width: 96
                },
            ]
        );
    }
}
