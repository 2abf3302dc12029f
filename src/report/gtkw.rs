//! The GTKWave save file (`.gtkw`) written beside a VCD or FST, so `gtkwave waves/gbn.gtkw` opens
//! on the testbench's story instead of an empty signal pane.
//!
//! What it shows: the testbench's `view:` groups (a title each, the signals its globs select, in
//! the order given); without `view:`, a system testbench's headline signals that move (frames,
//! slots, rates, the RX's PSN and control, PAXI OST, switch queues, injected drops:
//! `SYSTEM_VIEW`), else one group per `trace:` glob, else everything grouped by top scope (a
//! module testbench's instance with its ports, the driven inputs among them, in the order of
//! its kind's port table). The zoom fits `view.window` (default the whole run)
//! into the window. Fields that encode an enum (an RH `opcode`, an `ecn`, a DCQCN `state`, a frame
//! `format`, a PAXI flit's `kind`, an RX control write's `kind`) are shown by name through GTKWave translate filter files written beside the save
//! file (`<stem>.<enum>.txt`: one `value name` line per encoding).
//! Signals their block declares levels (`PortDecl::level`: queue bytes, slots in use, credits,
//! rates) are analog step traces with blank stretch rows below them, so a queue reads as a curve.
//!
//! The save file is derived from the wave file itself (read back with `wellen`), so every name in
//! it is a name GTKWave finds. Paths in it are relative to the save file's folder; GTKWave is
//! opened from that folder or given the save file's path.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hwsim_ports::{CtrlKind, Ecn, FlitKind, FrameFormat, Opcode};

use crate::build::testbench::Loaded;
use crate::input::yaml::InputError;
use crate::report::waves::Wave;

/// GTKWave trace flags (its `TR_*` bits): right-justified decimal, binary, translated by a file,
/// group begin / end.
const F_DEC: u32 = 0x24;
const F_BIN: u32 = 0x28;
const F_HEX: u32 = 0x22;
const F_TRANSLATED: u32 = 0x2000;
const F_GROUP_BEGIN: u32 = 0x80_0200;
/// Analog, drawn as steps (`TR_ANALOG_STEP`), and the blank rows that give it height
/// (`TR_ANALOG_BLANK_STRETCH`).
const F_ANALOG_STEP: u32 = 0x8000;
const F_ANALOG_STRETCH: u32 = 0x2_0000;
/// Rows an analog trace spans (itself and the stretch rows below it).
const ANALOG_ROWS: usize = 4;
const F_GROUP_END: u32 = 0x100_0200;
/// A blank row showing its text (`TR_BLANK`): a comment.
const F_COMMENT: u32 = 0x200;

/// Window size the save file asks for, pixels; the wave pane is about this minus the panes.
const WIDTH: u32 = 1600;
const HEIGHT: u32 = 1000;
/// GTKWave's zoom z draws 2^z × this many pixels per time unit (1 ns), and its panes beside
/// the waves take `PANES_PX` plus the name pane, about `NAME_PX_PER_CHAR` per character of the
/// widest row and `NAME_PX_BASE` (all measured with GTKWave 3.3 under Xvfb at this window size:
/// go_back_n with a 120-character widest row had a 985-pixel name pane and a 348-pixel wave
/// pane, with 37 characters 338 and 997; 2310 ns at zoom −9.45 filled 665 pixels).
const PX_PER_NS_AT_0: f64 = 201.6;
const PANES_PX: f64 = 265.0;
const NAME_PX_PER_CHAR: f64 = 7.8;
const NAME_PX_BASE: f64 = 49.0;

/// An enum field's labels by encoding.
struct EnumKind {
    key: &'static str,
    labels: Vec<String>,
}

/// The enum a variable encodes, known by its field name and width (and, for a `kind`, by the
/// fields beside it: `has(path)` says whether the wave holds that variable).
fn enum_of(name: &str, width: Option<u32>, has: impl Fn(&str) -> bool) -> Option<EnumKind> {
    let (parent, leaf) = name.rsplit_once('.').unwrap_or(("", name));
    if leaf == "kind" && width == Some(3) {
        let show = |v: crate::input::yaml::Value| crate::input::yaml::show(&v);
        // A PAXI flit's kind sits beside its `ost` (a segment, a frame's PAXI header); an RX
        // control write's beside its message's `opcode`.
        if has(&format!("{parent}.ost")) {
            let labels = [FlitKind::WData, FlitKind::Ar, FlitKind::R, FlitKind::B, FlitKind::Mul]
                .iter()
                .map(|k| show(crate::input::yaml::to_value(k)))
                .collect();
            return Some(EnumKind {
                key: "flit_kind",
                labels,
            });
        }
        if has(&format!("{parent}.opcode")) {
            let labels = CtrlKind::ALL
                .iter()
                .map(|k| show(crate::input::yaml::to_value(k)))
                .collect();
            return Some(EnumKind {
                key: "ctrl_kind",
                labels,
            });
        }
        return None;
    }
    if width != Some(2) {
        return None;
    }
    if leaf == "opcode" {
        let labels = [Opcode::Data, Opcode::Ack, Opcode::Cnp]
            .iter()
            .map(|o| o.to_string())
            .collect();
        return Some(EnumKind { key: "opcode", labels });
    }
    if leaf == "ecn" {
        let labels = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce]
            .iter()
            .map(|e| crate::input::yaml::show(&crate::input::yaml::to_value(e)))
            .collect();
        return Some(EnumKind { key: "ecn", labels });
    }
    if leaf == "state" && parent.ends_with("dcqcn") {
        // modules/src/rclink/dcqcn.rs: 0 NORMAL, 1 CONGESTED, 2 RECOVERED.
        let labels = ["NORMAL", "CONGESTED", "RECOVERED"].map(String::from).to_vec();
        return Some(EnumKind {
            key: "dcqcn_state",
            labels,
        });
    }
    if leaf == "format" || leaf.ends_with("_format") {
        let labels = FrameFormat::ALL.iter().map(|f| f.to_string()).collect();
        return Some(EnumKind { key: "format", labels });
    }
    None
}

/// One group of the view: a title and the wave's variable indices.
struct Group {
    title: String,
    vars: Vec<usize>,
}

/// The groups of the view: the testbench's `view:`, else its `trace:`, else (a system testbench)
/// the headline signals that move ([`system_headlines`]), else by top scope; and
/// with `--trace` globs on the command line (`cmd_trace`), a group per glob of what it chose
/// that no `view:` group shows (the wave holds what they chose: a save file showing only the
/// view's groups left 148 of 150 variables out). A `view:` glob that selects nothing is an
/// error unless `--trace` narrowed the wave.
fn groups(l: &Loaded, wave: &mut Wave, cmd_trace: &[String]) -> Result<Vec<Group>, InputError> {
    let strict = cmd_trace.is_empty();
    let select = |wave: &Wave, g: &str| -> Vec<usize> {
        let one = [g.to_string()];
        (0..wave.vars.len())
            .filter(|&i| hwsim_hw::trace_selected(&one, &wave.vars[i].name))
            .collect()
    };
    let mut out = Vec::new();
    if let Some(view) = &l.tb.view {
        for g in &view.groups {
            let mut vars: Vec<usize> = Vec::new();
            for glob in &g.signals {
                let mut sel = select(wave, glob);
                if sel.is_empty() && strict {
                    return Err(l.error_at(
                        glob,
                        format!("view: `{glob}` selects no signal of the wave (is it in `trace:`?)"),
                    ));
                }
                if glob.contains(['*', '?']) {
                    sel = without_silent_pulses(wave, sel);
                }
                for i in sel {
                    if !vars.contains(&i) {
                        vars.push(i);
                    }
                }
            }
            if !vars.is_empty() {
                out.push(Group {
                    title: g.title.clone(),
                    vars,
                });
            }
        }
    }
    if out.is_empty() && cmd_trace.is_empty() {
        // A system testbench without `view:` opens on its headline signals, within what its
        // `trace:` recorded.
        out = system_headlines(l, wave);
    }
    let globs: &[String] = match (cmd_trace.is_empty(), out.is_empty()) {
        (false, _) => cmd_trace,
        (true, true) => &l.tb.trace,
        (true, false) => &[],
    };
    let shown: std::collections::HashSet<usize> = out.iter().flat_map(|g| g.vars.iter().copied()).collect();
    for glob in globs {
        let vars: Vec<usize> = select(wave, glob).into_iter().filter(|i| !shown.contains(i)).collect();
        if !vars.is_empty() {
            out.push(Group {
                title: glob.clone(),
                vars,
            });
        }
    }
    if out.is_empty() {
        let mut tops: Vec<String> = Vec::new();
        for v in &wave.vars {
            let top = v.name.split('.').next().unwrap_or("").to_string();
            if !tops.contains(&top) {
                tops.push(top);
            }
        }
        // A module testbench's instance shows its ports in the order of its kind's port table
        // (`hwsim list KIND`), its driven inputs among them (their nets are named after the
        // testbench's drivers, `tb.drive_<instance>_<port>`), not as the wave lists its nets.
        let netlist = match crate::build::form(l) {
            Ok(crate::build::Form::Module) => crate::build::netlist(l, l.tb.seed).ok(),
            _ => None,
        };
        let mut claimed = vec![false; wave.vars.len()];
        let mut groups: Vec<Group> = Vec::new();
        for top in tops.iter().filter(|t| *t != "tb") {
            let ports = netlist.as_ref().and_then(|n| n.ports_of(top)).unwrap_or(&[]);
            let rank = |i: usize| port_rank(&wave.vars[i].name, top, ports);
            let mut vars: Vec<usize> = (0..wave.vars.len())
                .filter(|&i| wave.vars[i].name.split('.').next() == Some(top.as_str()) || rank(i) < ports.len())
                .collect();
            vars.sort_by_key(|&i| rank(i));
            for &i in &vars {
                claimed[i] = true;
            }
            groups.push(Group {
                title: top.clone(),
                vars,
            });
        }
        if tops.iter().any(|t| t == "tb") {
            let vars: Vec<usize> = (0..wave.vars.len())
                .filter(|&i| !claimed[i] && wave.vars[i].name.split('.').next() == Some("tb"))
                .collect();
            if !vars.is_empty() {
                groups.push(Group {
                    title: "tb".into(),
                    vars,
                });
            }
        }
        out.extend(groups);
    }
    Ok(out)
}

/// `sel` without the event pulses (`….ev_<class>`) that never fire: a glob over many blocks'
/// pulses (`chip*.lg*.tx.dcqcn.ev_cnp`) shows the blocks where something happened, not forty
/// flat lines. A pulse named in full stays (its author asked for it).
fn without_silent_pulses(wave: &mut Wave, sel: Vec<usize>) -> Vec<usize> {
    let is_pulse = |w: &Wave, i: usize| w.vars[i].name.rsplit('.').next().is_some_and(|l| l.starts_with("ev_"));
    let pulses: Vec<usize> = sel.iter().copied().filter(|&i| is_pulse(wave, i)).collect();
    if pulses.is_empty() {
        return sel;
    }
    let fired: Vec<usize> = pulses
        .iter()
        .zip(wave.changes(&pulses))
        .filter(|(_, ch)| ch.len() > 1)
        .map(|(&i, _)| i)
        .collect();
    sel.into_iter()
        .filter(|i| !is_pulse(wave, *i) || fired.contains(i))
        .collect()
}

/// What a system testbench without `view:` opens on, among the signals its `trace:` recorded:
/// the story every RC Link system tells, one group per line here (title, the signals' globs).
const SYSTEM_VIEW: &[(&str, &[&str])] = &[
    (
        "TX frames to the MAC, per LG (valid, PSN)",
        &["*.tx.frame.valid", "*.tx.frame.psn"],
    ),
    ("TX slots in use, per LG", &["*.tx.slots_used"]),
    ("TX rate gate: DCQCN rate, per LG", &["*.tx.dcqcn.rate"]),
    (
        "RX PSN check and control: expected PSN; the ACK / NAK / CNP sent back",
        &[
            "*.rx.psn_check.epsn",
            "*.rx.ctrl.valid",
            "*.rx.ctrl.opcode",
            "*.rx.ctrl.nak",
        ],
    ),
    (
        "PAXI: OST entries in use, AR and B entries held in the packing buffers, RX VC pause",
        &["chip*.paxi.*_ost", "chip*.paxi.*_fill", "chip*.paxi.rx_pause"],
    ),
    (
        "Events (one-cycle pulses): NAK, retry timeout, CNP, ECN mark, drop, PFC",
        &["*.ev_*"],
    ),
    ("switches: queue bytes per port", &["*.q_bytes*"]),
    ("links: frames the injected faults dropped", &["*.injected"]),
];

/// Most signals of one default group (the first in the wave's order; the title says how many
/// there were).
const MAX_DEFAULT_SIGNALS: usize = 16;

/// The default view of a system testbench ([`SYSTEM_VIEW`]): of each group's signals only those
/// that move during the run (a signal holding its #0 value throughout is left out: an idle
/// LG, a switch port nothing crossed), each signal once (under its first name in the wave: a
/// composite's port before its node's, `chip0.paxi.r_ost` rather than `chip0.paxi.core.r_ost`),
/// at most [`MAX_DEFAULT_SIGNALS`] each. Empty for a module testbench, or when nothing moves.
fn system_headlines(l: &Loaded, wave: &mut Wave) -> Vec<Group> {
    if !matches!(crate::build::form(l), Ok(crate::build::Form::System)) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (title, globs) in SYSTEM_VIEW {
        let mut seen = std::collections::HashSet::new();
        let picked: Vec<usize> = (0..wave.vars.len())
            .filter(|&i| globs.iter().any(|g| hwsim_hw::glob_match(g, &wave.vars[i].name)))
            .filter(|&i| seen.insert(wave.signal_index(i)))
            .collect();
        let moving: Vec<usize> = picked
            .iter()
            .zip(wave.changes(&picked))
            .filter(|(_, ch)| ch.len() > 1 || ch.first().is_some_and(|c| c.0 > 0))
            .map(|(&i, _)| i)
            .collect();
        if moving.is_empty() {
            continue;
        }
        let title = if moving.len() > MAX_DEFAULT_SIGNALS {
            format!("{title} (the first {MAX_DEFAULT_SIGNALS} of {})", moving.len())
        } else {
            title.to_string()
        };
        out.push(Group {
            title,
            vars: moving.into_iter().take(MAX_DEFAULT_SIGNALS).collect(),
        });
    }
    out
}

/// The place in `ports` (instance `top`'s port table) of the port a wave variable belongs to:
/// the port's net or one of its fields, or the net of the testbench's driver of that input;
/// `ports.len()` if none.
fn port_rank(name: &str, top: &str, ports: &[hwsim_hw::PortDecl]) -> usize {
    let under = |prefix: &str| name == prefix || name.strip_prefix(prefix).is_some_and(|r| r.starts_with('.'));
    ports
        .iter()
        .position(|p| {
            under(&format!("{top}.{}", p.name))
                || under(&format!(
                    "tb.drive_{}.out",
                    format!("{top}.{}", p.name).replace('.', "_")
                ))
        })
        .unwrap_or(ports.len())
}

/// Whether a wave variable belongs to a net declared a level: the net's path, or one of its
/// fields (`chip0.lg3.tx.cbfc.credits_d1.vc0`) — the trace selection's own rule, a path
/// selecting what lies below it (net paths hold no glob characters). `levels` is the set of
/// those paths (a table: each variable against every level net was quadratic, 73 s of CPU for
/// a 16-chip system's save file).
fn is_level(name: &str, levels: Option<&hwsim_hw::GlobSet>) -> bool {
    levels.is_some_and(|l| l.selects(name))
}

/// GTKWave's name of a variable: the dotted name, with `[msb:0]` for a vector.
fn gtkwave_name(name: &str, width: Option<u32>) -> String {
    match width {
        Some(w) if w > 1 => format!("{name}[{}:0]", w - 1),
        _ => name.to_string(),
    }
}

/// The name a trace of `name` shows in a group whose signals all lie in `scope` (before its
/// dots become slashes): its path below the scope, and at least its last two components (a field with its port, a port with its
/// block: `frame.valid`, `link0_1.injected`, never a bare `valid`).
fn alias<'a>(name: &'a str, scope: &str) -> &'a str {
    let below = name
        .strip_prefix(scope)
        .and_then(|r| r.strip_prefix('.'))
        .unwrap_or(name);
    if below.contains('.') {
        return below;
    }
    // The start of the second-to-last component, if there is one.
    match name
        .rsplit_once('.')
        .and_then(|(head, _)| head.rfind('.').map(|i| i + 1).or(Some(0)))
    {
        Some(at) => &name[at..],
        None => name,
    }
}

/// The scope all of `names` lie in (their longest common prefix of whole dotted components,
/// short of each one's leaf), empty when they share none.
fn common_scope<'a>(names: impl Iterator<Item = &'a str>) -> &'a str {
    let mut common: Option<&str> = None;
    for n in names {
        let scope = n.rsplit_once('.').map_or("", |(s, _)| s);
        common = Some(match common {
            None => scope,
            // The longest prefix of whole components the two share (each with its dot).
            Some(c) => {
                let len: usize = c
                    .split('.')
                    .zip(scope.split('.'))
                    .take_while(|(a, b)| a == b)
                    .map(|(a, _)| a.len() + 1)
                    .sum();
                &c[..len.saturating_sub(1)]
            }
        });
    }
    common.unwrap_or("")
}

/// A path of `target` relative to the folder `dir` when `target` is inside it (GTKWave resolves
/// it against the save file's folder), else absolute.
fn relative(target: &Path, dir: &Path) -> String {
    let t = std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf());
    let d = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    match t.strip_prefix(&d) {
        Ok(r) => r.display().to_string(),
        Err(_) => t.display().to_string(),
    }
}

/// The files to write: the save file at `gtkw` first, then its translate filter files.
///
/// `dump` is the wave file the save file opens; `cmd_trace` the command line's `--trace` globs
/// (see [`groups`]).
pub fn files(
    l: &Loaded,
    wave: &mut Wave,
    dump: &Path,
    gtkw: &Path,
    cmd_trace: &[String],
    levels: &[String],
) -> Result<Vec<(PathBuf, Vec<u8>)>, InputError> {
    let groups = groups(l, wave, cmd_trace)?;
    let dir = gtkw
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = gtkw
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "waves".into());
    let end = wave.end_time();
    let (from, to) = match l.tb.view.as_ref().and_then(|v| v.window) {
        Some([a, b]) if b > a => (a, b.min(end.max(a.saturating_add(1)))),
        Some([a, b]) => {
            return Err(l.error_at(
                "window",
                format!("view.window [{a}, {b}] is empty or reversed: give [from, to] with from < to"),
            ))
        }
        None => (0, end.max(1)),
    };
    let zoom = zoom_to_fit(to - from, story_width(&groups, wave));

    let mut s = String::new();
    let _ = writeln!(s, "[*] hwsim: {} ({})", l.name(), l.path.display());
    let _ = writeln!(s, "[dumpfile] \"{}\"", relative(dump, dir));
    let _ = writeln!(s, "[savefile] \"{}\"", relative(gtkw, dir));
    let _ = writeln!(s, "[timestart] {from}");
    let _ = writeln!(s, "[size] {WIDTH} {HEIGHT}");
    let _ = writeln!(s, "[pos] -1 -1");
    // Zoom, primary marker (none), then the 26 named markers A..Z (-1: unset).
    let markers = l.tb.view.as_ref().map_or(&[][..], |v| &v.markers[..]);
    if markers.len() > 26 {
        return Err(l.error_at(
            "markers",
            format!("view: {} markers; GTKWave has 26 (A..Z)", markers.len()),
        ));
    }
    let named: Vec<String> = (0..26)
        .map(|i| markers.get(i).map_or("-1".to_string(), |m| m.to_string()))
        .collect();
    let _ = writeln!(s, "*{zoom:.6} -1 {}", named.join(" "));
    let _ = writeln!(s, "[sst_width] 240");
    let _ = writeln!(s, "[signals_width] 330");
    let _ = writeln!(s, "[sst_expanded] 0");
    let _ = writeln!(s, "[sst_vpaned_height] 300");
    let mut filters: Vec<(String, PathBuf, Vec<u8>)> = Vec::new();
    let level_set = (!levels.is_empty()).then(|| hwsim_hw::GlobSet::new(levels));
    let names: std::collections::HashSet<&str> = wave.vars.iter().map(|v| v.name.as_str()).collect();
    let width = story_width(&groups, wave);
    for g in &groups {
        let _ = writeln!(s, "@{F_GROUP_BEGIN:x}");
        // A short title (it sizes GTKWave's name pane), the story after its first `: ` on
        // comment rows below it, wrapped to the names' width.
        let (title, story) = g.title.split_once(": ").unwrap_or((g.title.as_str(), ""));
        let _ = writeln!(s, "-{title}");
        for line in wrap(story, width) {
            let _ = writeln!(s, "@{F_COMMENT:x}");
            let _ = writeln!(s, "-{line}");
        }
        let scope = common_scope(g.vars.iter().map(|&i| wave.vars[i].name.as_str()));
        for &i in &g.vars {
            let v = &wave.vars[i];
            let flags = if let Some(e) = enum_of(&v.name, v.width, |n| names.contains(n)) {
                let n = match filters.iter().position(|(k, _, _)| k == e.key) {
                    Some(n) => n,
                    None => {
                        let path = dir.join(format!("{stem}.{}.txt", e.key));
                        let mut text = format!("# {}: encoding and name (written by hwsim)\n", e.key);
                        for (code, label) in e.labels.iter().enumerate() {
                            let _ = writeln!(text, "{code} {label}");
                        }
                        filters.push((e.key.to_string(), path, text.into_bytes()));
                        filters.len() - 1
                    }
                };
                let _ = writeln!(s, "^{} {}", n + 1, relative(&filters[n].1, dir));
                F_DEC | F_TRANSLATED
            } else {
                match v.width {
                    Some(1) => F_BIN,
                    Some(w) if w > 64 => F_HEX,
                    _ => F_DEC,
                }
            };
            let level = is_level(&v.name, level_set.as_ref()) && flags & F_TRANSLATED == 0 && v.width != Some(1);
            let flags = if level { F_ANALOG_STEP | F_DEC } else { flags };
            let _ = writeln!(s, "@{flags:x}");
            // Named by its path below the group's scope, its components joined by `/`: GTKWave
            // cuts a name, an alias too, to its last `.`-component (`rate` four times in a view
            // of four chips' rates).
            let alias = alias(&v.name, scope).replace('.', "/");
            let _ = writeln!(s, "+{{{alias}}} {}", gtkwave_name(&v.name, v.width));
            if level {
                let _ = writeln!(s, "@{F_ANALOG_STRETCH:x}");
                for _ in 1..ANALOG_ROWS {
                    let _ = writeln!(s, "-");
                }
            }
        }
        let _ = writeln!(s, "@{F_GROUP_END:x}");
        let _ = writeln!(s, "-{title}");
    }
    let _ = writeln!(s, "[pattern_trace] 1");
    let _ = writeln!(s, "[pattern_trace] 0");
    let mut out = vec![(gtkw.to_path_buf(), s.into_bytes())];
    out.extend(filters.into_iter().map(|(_, p, b)| (p, b)));
    Ok(out)
}

/// GTKWave's zoom that fits `span` cycles, a little margin on the right, into the wave pane: the
/// window's width less the panes, the name pane as wide as the view's widest row of `chars`
/// characters (its names, titles and the stories wrapped to them).
fn zoom_to_fit(span: u64, chars: usize) -> f64 {
    let span = span.max(1) as f64 * 1.05;
    let names_px = NAME_PX_BASE + NAME_PX_PER_CHAR * chars as f64;
    let wave_px = (WIDTH as f64 - PANES_PX - names_px).max(200.0);
    -(span * PX_PER_NS_AT_0 / wave_px).log2()
}

/// The width, in characters, stories are wrapped to: the widest short title or trace name of
/// the view, at least [`MIN_STORY_WIDTH`]. GTKWave sizes its name pane to its widest row,
/// comment rows included (found under Xvfb: go_back_n's one-row stories took 860 of 1 600
/// pixels and left 1.3 of its 2.2 µs in view; wrapped, the names set the pane).
fn story_width(groups: &[Group], wave: &Wave) -> usize {
    let mut w = MIN_STORY_WIDTH;
    for g in groups {
        let title = g.title.split_once(": ").map_or(g.title.as_str(), |(t, _)| t);
        w = w.max(title.chars().count());
        let scope = common_scope(g.vars.iter().map(|&i| wave.vars[i].name.as_str()));
        for &i in &g.vars {
            w = w.max(alias(&wave.vars[i].name, scope).chars().count());
        }
    }
    w
}

/// Stories wrap to at least this many characters.
const MIN_STORY_WIDTH: usize = 24;

/// `text` in lines of at most `width` characters, broken between words (a longer word stands
/// alone on its line); none for an empty text.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The save file's default path: the wave's, with `.gtkw`.
pub fn default_path(wave: &Path) -> PathBuf {
    wave.with_extension("gtkw")
}

#[cfg(test)]
mod tests {
    use super::{common_scope, wrap};

    #[test]
    fn stories_wrap_between_words_to_the_width() {
        assert_eq!(
            wrap("0 4 8 ... 24, then the resend from PSN 9", 24),
            ["0 4 8 ... 24, then the", "resend from PSN 9"]
        );
        assert_eq!(
            wrap("a-very-long-word-alone here", 8),
            ["a-very-long-word-alone", "here"]
        );
        assert!(wrap("", 24).is_empty());
        assert!(wrap("one two three four five six", 9).iter().all(|l| l.len() <= 9));
    }

    #[test]
    fn a_groups_scope_is_made_of_whole_components() {
        let scope = |v: &[&'static str]| common_scope(v.iter().copied());
        assert_eq!(
            scope(&["chip0.lg7.tx.cbfc.a", "chip0.lg7.tx.cbfc.b.c"]),
            "chip0.lg7.tx.cbfc"
        );
        // lg7 and lg70 are different scopes, not a shared `lg7` prefix.
        assert_eq!(scope(&["chip0.lg7.x", "chip0.lg70.x"]), "chip0");
        assert_eq!(scope(&["chip0.lg0.rate", "chip1.lg0.rate"]), "");
        // One signal: its own scope (the leaf is what is left).
        assert_eq!(scope(&["sw0.q_bytes0"]), "sw0");
        assert_eq!(scope(&["top", "sw0.q"]), "");
        assert_eq!(scope(&[]), "");
    }

    #[test]
    fn a_trace_is_named_below_its_scope_and_never_by_a_bare_leaf() {
        use super::alias;
        assert_eq!(
            alias("chip0.lg7.tx.cbfc.credits_d1.vc0", "chip0.lg7.tx"),
            "cbfc.credits_d1.vc0"
        );
        assert_eq!(alias("chip0.lg7.tx.frame.valid", "chip0.lg7.tx.frame"), "frame.valid");
        assert_eq!(alias("link0_1.injected", "link0_1"), "link0_1.injected");
        assert_eq!(alias("chip0.lg0.rate", ""), "chip0.lg0.rate");
        assert_eq!(alias("top", ""), "top");
    }
}
