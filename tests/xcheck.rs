//! Cross-checking RTL against the model (issue 11), end to end through the built binary: the
//! GTKWave save file and its translate filters, FST equal to the VCD signal by signal (read back
//! with wellen), `hwsim diff` (exit 0 / 1 / 2, the first divergence, map errors located at
//! file:line:col), and `hwsim vectors` (the CSV against the run's own wave).

mod common;

use std::path::Path;

use common::{hwsim_parts, root, temp_dir};

/// A path as an argument, borrowed (`common::s` gives a `String`; the `&[&str]` lists here want `&str`).
fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The signal a save-file trace line names, past its alias (`+{alias} name`), and the alias.
fn traced(line: &str) -> (&str, Option<&str>) {
    match line.strip_prefix("+{").and_then(|r| r.split_once("} ")) {
        Some((alias, name)) => (name, Some(alias)),
        None => (line, None),
    }
}

/// One variable of a wave: full name, width, and its changes as (time, value text).
type Signal = (String, Option<u32>, Vec<(u64, String)>);

/// Every variable of a wave.
fn signals(path: &Path) -> Vec<Signal> {
    let mut w = wellen::simple::read(path).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    let h = w.hierarchy();
    let vars: Vec<_> = h
        .all_vars()
        .map(|r| (h[r].full_name(h), h[r].length(h), h[r].signal_ref()))
        .collect();
    let refs: Vec<_> = vars.iter().map(|v| v.2).collect();
    w.load_signals(&refs);
    let times = w.time_table().to_vec();
    vars.into_iter()
        .map(|(name, len, r)| {
            let sig = w.get_signal(r).expect("loaded");
            let ch = sig
                .iter_changes()
                .map(|(t, v)| {
                    let text = match v {
                        wellen::SignalValueRef::Real(x) => format!("r{x}"),
                        other => other.to_bit_string().expect("bits"),
                    };
                    (times[t as usize], text)
                })
                .collect();
            (name, len, ch)
        })
        .collect()
}

#[test]
fn gtkw_opens_the_go_back_n_story() {
    let d = temp_dir("gtkw");
    let vcd = d.join("gbn.vcd");
    let (code, out, err) = hwsim_parts(&["tb/go_back_n.yaml", "--vcd", s(&vcd), "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    let g = std::fs::read_to_string(d.join("gbn.gtkw")).expect("gbn.gtkw beside the VCD");
    assert!(g.contains("[dumpfile] \"gbn.vcd\"\n"), "{g}");
    // The window [0, 2200] with 5 % margin fills the wave pane: 1 600 pixels less the panes
    // (265) and the name pane, 49 + 7.8 per character of the widest row (37: `chip1 -> chip0
    // control drops injected`), at 201.6 pixels per ns at zoom 0 (GTKWave 3.3 under Xvfb);
    // markers A (NAK), B.
    let wave_px = 1600.0 - 265.0 - (49.0 + 7.8 * 37.0);
    let zoom = -(2310f64 * 201.6 / wave_px).log2();
    assert!(g.contains(&format!("*{zoom:.6} -1 497 50280 -1")), "{g}");
    // The groups in the testbench's order, each opened and closed with its title.
    let titles: Vec<&str> = g
        .lines()
        .zip(g.lines().skip(1))
        .filter(|(a, _)| *a == "@800200")
        .map(|(_, t)| t.trim_start_matches('-'))
        .collect();
    assert_eq!(titles.len(), 10, "{titles:?}");
    assert!(titles[0].starts_with("LG 7 grants"));
    assert!(titles[1].starts_with("Events (one-cycle pulses)"));
    assert!(titles[7].starts_with("chip0 TX slot FIFO and VC queues"));
    assert!(titles[8].starts_with("chip0 TX CBFC controller (tx.cbfc)"));
    assert!(titles[9].starts_with("QP 5 on LG 2"));
    assert_eq!(g.matches("@1000200").count(), 10);
    // Signals in the order the view lists them, with GTKWave's vector names.
    let lines: Vec<&str> = g.lines().collect();
    let pos = |name: &str| {
        lines
            .iter()
            .position(|l| traced(l).0 == name)
            .unwrap_or_else(|| panic!("{name} not in the save file:\n{g}"))
    };
    let order = [
        "chip0.lg7.tx.frame.valid",
        "chip0.lg7.tx.frame.psn[11:0]",
        "link0_1.ev_drop",
        "chip1.lg7.rx.ctrl_out.ev_nak",
        "chip0.lg2.tx.slot_fifo.ev_timeout",
        "link0_1.injected[31:0]",
        "chip1.lg7.rx.psn_check.epsn[11:0]",
        "chip1.lg7.rx.ctrl.opcode[1:0]",
        "chip1.lg7.rx.ctrl.ack_psn[11:0]",
        "chip0.lg7.tx.slot_fifo.slots.wait_ack[511:0]",
        "chip0.lg7.tx.vc_queues.arb_req.eligible[4:0]",
        "chip0.lg7.tx.arbiter.grant.vc[2:0]",
        "chip0.lg7.tx.arbiter.ptr[2:0]",
        "chip0.lg7.tx.vc_queues.mac_take.valid",
        "chip0.lg7.tx.slot_fifo.q_ops.op[1:0]",
        "chip0.lg7.tx.vc_queues.grant.id[10:0]",
        "chip0.lg7.tx.cbfc.credits_d1.vc0[14:0]",
        "chip0.lg7.tx.dcqcn.rate",
        "chip0.lg2.tx.frame.psn[11:0]",
    ];
    for w in order.windows(2) {
        assert!(pos(w[0]) < pos(w[1]), "{} before {}", w[0], w[1]);
    }
    // Each trace is named by its path below its group's scope, so it reads alone (GTKWave
    // shows a leaf only), and never by a bare leaf: the CBFC group lies in chip0.lg7.tx.
    let alias = |name: &str| {
        traced(lines[pos(name)])
            .1
            .unwrap_or_else(|| panic!("{name}: no alias\n{g}"))
    };
    // (Slashes: GTKWave cuts an alias with dots to its last component, as it does a name.)
    assert_eq!(alias("chip0.lg7.tx.cbfc.credits_d1.vc0[14:0]"), "cbfc/credits_d1/vc0");
    assert_eq!(alias("chip0.lg7.tx.frame.valid"), "frame/valid");
    assert_eq!(alias("link0_1.injected[31:0]"), "link0_1/injected");
    // Short titles, the story on comment rows below each, wrapped to the widest name or title
    // (GTKWave sizes its name pane to its widest row, comments included).
    let widest = lines
        .iter()
        .filter_map(|l| traced(l).1)
        .chain(
            lines
                .iter()
                .zip(lines.iter().skip(1))
                .filter(|(a, _)| **a == "@800200")
                .map(|(_, t)| &t[1..]),
        )
        .map(|n| n.chars().count())
        .max()
        .unwrap();
    let story_of = |title: &str| -> Vec<&str> {
        let at = lines
            .iter()
            .position(|l| *l == format!("-{title}"))
            .unwrap_or_else(|| panic!("short title {title}"));
        lines[at + 1..]
            .chunks(2)
            .take_while(|p| p[0] == "@200")
            .map(|p| &p[1][1..])
            .collect()
    };
    assert_eq!(
        story_of("LG 7 grants (chip0 TX)").join(" "),
        "0 4 8 ... 24, then the resend from PSN 9"
    );
    let events = story_of("Events (one-cycle pulses)");
    assert!(events.len() >= 3, "{events:?}");
    assert!(
        events.join(" ").ends_with("at 50 279 ns, QP 5's retry timeout"),
        "{events:?}"
    );
    let comments: Vec<&str> = lines
        .iter()
        .zip(lines.iter().skip(1))
        .filter(|(a, _)| **a == "@200")
        .map(|(_, c)| &c[1..])
        .collect();
    assert!(
        comments.len() > 10 && comments.iter().all(|c| c.chars().count() <= widest),
        "{widest}: {comments:?}"
    );
    // The opcode is translated by the filter file written beside it: decimal + translate flags.
    let op = pos("chip1.lg7.rx.ctrl.opcode[1:0]");
    assert_eq!(lines[op - 1], "@2024");
    assert_eq!(lines[op - 2], "^1 gbn.opcode.txt");
    let f = std::fs::read_to_string(d.join("gbn.opcode.txt")).unwrap();
    assert!(f.ends_with("0 data\n1 ack\n2 cnp\n"), "{f}");
    // A level (declared so by its block: slots in use) is an analog step trace with stretch
    // rows below it; a PSN is a number.
    let used = pos("chip0.lg7.tx.slots_used[15:0]");
    assert_eq!(lines[used - 1], "@8024");
    assert_eq!(&lines[used + 1..used + 5], ["@20000", "-", "-", "-"]);
    assert_eq!(lines[pos("chip0.lg7.tx.frame.psn[11:0]") - 1], "@24");
    // Every signal the save file names is in the VCD (GTKWave would drop it silently).
    let names: Vec<String> = signals(&vcd)
        .into_iter()
        .map(|(n, w, _)| match w {
            Some(w) if w > 1 => format!("{n}[{}:0]", w - 1),
            _ => n,
        })
        .collect();
    let shown: Vec<&str> = lines
        .iter()
        .zip(lines.iter().skip(1))
        .filter(|(f, n)| {
            f.starts_with('@') && !f.starts_with("@800200") && !f.starts_with("@1000200") && !n.starts_with('-')
        })
        .map(|(_, n)| traced(n).0)
        .collect();
    assert_eq!(shown.len(), 46, "{shown:?}");
    for n in shown {
        assert!(names.iter().any(|x| x == n), "{n} is not a signal of the VCD");
    }
    // The events as one-cycle pulses, at the cycles the event log gives (README): the ACK and
    // the two data packets the links drop, chip1's discards behind the gap (the first at 496)
    // and its NAK, the Go-Back-N it makes at chip0, QP 5's retry timeout.
    let pulses = |name: &str| -> Vec<u64> {
        let sigs = signals(&vcd);
        let (_, _, ch) = sigs
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("{name} not in the VCD"));
        let rises: Vec<u64> = ch.iter().filter(|(_, v)| v == "1").map(|(t, _)| *t).collect();
        // Each falls the cycle after it rose (none of these fire two cycles in a row).
        let falls: Vec<u64> = ch.iter().skip(1).filter(|(_, v)| v == "0").map(|(t, _)| *t).collect();
        assert_eq!(falls, rises.iter().map(|t| t + 1).collect::<Vec<_>>(), "{name}");
        rises
    };
    assert_eq!(pulses("link1_0.ev_drop"), [274]);
    assert_eq!(pulses("link0_1.ev_drop"), [282, 369]);
    assert_eq!(pulses("chip1.lg7.rx.ctrl_out.ev_nak"), [496]);
    assert_eq!(pulses("chip0.lg7.tx.slot_fifo.ev_nak"), [617]);
    assert_eq!(pulses("chip0.lg2.tx.slot_fifo.ev_timeout"), [50279]);
    assert_eq!(pulses("chip1.lg7.rx.psn_check.ev_drop")[..3], [496, 498, 526]);
    // Same input, same bytes.
    let (code, _, _) = hwsim_parts(&["tb/go_back_n.yaml", "--vcd", s(&vcd), "-q"]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read_to_string(d.join("gbn.gtkw")).unwrap(), g);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn gtkw_defaults_and_refusals() {
    let d = temp_dir("gtkw-default");
    // No view: and no trace: one group per top scope; --gtkw chooses the path.
    let vcd = d.join("arb.vcd");
    let gtkw = d.join("other/arb_view.gtkw");
    let (code, out, err) = hwsim_parts(&[
        "tb/modules/bank_arbiter_flow_blocking.yaml",
        "--vcd",
        s(&vcd),
        "--gtkw",
        s(&gtkw),
        "-q",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let g = std::fs::read_to_string(&gtkw).unwrap();
    assert!(g.contains("-arb\n"), "{g}");
    assert!(g.contains(" arb.grant.tag[15:0]\n"), "{g}");
    // The instance's ports in its kind's port table order (req, credit, grant, ptr, …), the
    // testbench's drivers of its inputs among them: no group of drivers apart.
    assert!(!g.contains("-tb\n"), "{g}");
    let at = |n: &str| {
        g.lines()
            .position(|l| traced(l).0 == n)
            .unwrap_or_else(|| panic!("{n} not in:\n{g}"))
    };
    let order = [
        "arb.req.valid",
        "tb.drive_arb_req.out.valid",
        "arb.credit.valid",
        "arb.grant.valid",
        "arb.ptr[2:0]",
        "arb.depth_vc4[10:0]",
    ];
    for w in order.windows(2) {
        assert!(at(w[0]) < at(w[1]), "{} before {}:\n{g}", w[0], w[1]);
    }
    assert!(!d.join("arb.gtkw").exists(), "--gtkw replaces the default path");
    // The wave is outside the save file's folder: named by its absolute path.
    let abs = std::path::absolute(&vcd).unwrap();
    assert!(g.contains(&format!("[dumpfile] \"{}\"", abs.display())), "{g}");
    // A view glob that selects nothing is refused at its line and column.
    let tb = d.join("tb.yaml");
    let text = std::fs::read_to_string(root().join("tb/modules/bank_arbiter_flow_blocking.yaml")).unwrap();
    let text = format!("{text}view:\n  groups:\n    - {{title: x, signals: [arb.nothing]}}\n");
    let line = text.lines().count();
    std::fs::write(&tb, &text).unwrap();
    let (code, _, err) = hwsim_parts(&[s(&tb), "--vcd", s(&vcd), "-q"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("tb.yaml:{line}:")), "{err}");
    assert!(err.contains("arb.nothing"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // --gtkw without a wave, and a save file over the testbench, are refused.
    let (code, _, err) = hwsim_parts(&["tb/modules/bank_arbiter_flow_blocking.yaml", "--gtkw", s(&gtkw)]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = hwsim_parts(&[s(&tb), "--vcd", s(&vcd), "--gtkw", s(&tb)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refusing to overwrite"), "{err}");
    // A sink VCD gets no save file, and cannot be read back for one.
    let (code, out, err) = hwsim_parts(&["tb/modules/bank_arbiter_flow_blocking.yaml", "--vcd", "/dev/null", "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = hwsim_parts(&[
        "tb/modules/bank_arbiter_flow_blocking.yaml",
        "--vcd",
        "/dev/null",
        "--gtkw",
        s(&gtkw),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn fst_holds_the_same_signals_and_changes_as_the_vcd() {
    let d = temp_dir("fst");
    let (vcd, fst) = (d.join("gbn.vcd"), d.join("gbn.fst"));
    // Go-Back-N: 1- to 64-bit fields, 512-bit slot maps and reals (DCQCN rate).
    let (code, out, err) = hwsim_parts(&["tb/go_back_n.yaml", "--vcd", s(&vcd), "--fst", s(&fst), "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    let (a, b) = (signals(&vcd), signals(&fst));
    assert_eq!(a.len(), b.len());
    assert!(a.iter().any(|v| v.1 == Some(512)));
    assert!(
        a.iter().any(|v| v.2.iter().any(|(_, x)| x.starts_with('r'))),
        "a real is covered"
    );
    let mut changes = 0;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.0, x.1), (&y.0, y.1), "name and width");
        assert_eq!(x.2, y.2, "{}: value changes", x.0);
        changes += x.2.len();
    }
    assert!(changes > 1000, "{changes} changes compared");
    // Only --fst: the VCD goes to memory, the FST is the same file; and the same bytes again.
    let fst2 = d.join("only.fst");
    let (code, _, err) = hwsim_parts(&["tb/go_back_n.yaml", "--fst", s(&fst2), "-q"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&fst).unwrap(), std::fs::read(&fst2).unwrap());
    let g = std::fs::read_to_string(d.join("only.gtkw")).unwrap();
    assert!(g.contains("[dumpfile] \"only.fst\""), "{g}");
    // `--vcd x.fst` asks for FST by the extension: the same bytes, no VCD written.
    let by_ext = d.join("ext.FST");
    let (code, _, err) = hwsim_parts(&["tb/go_back_n.yaml", "--vcd", s(&by_ext), "-q"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&fst).unwrap(), std::fs::read(&by_ext).unwrap());
    assert!(std::fs::read(&by_ext).unwrap()[..4] != *b"$ver", "not a VCD");
    // Both an FST by extension and --fst: one of them.
    let (code, _, err) = hwsim_parts(&[
        "tb/go_back_n.yaml",
        "--vcd",
        s(&d.join("a.fst")),
        "--fst",
        s(&fst2),
        "-q",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("names an FST file"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A small model-style wave (one cycle per ns) with `ptr` and a 2-field stream.
const MODEL_VCD: &str = "$version hwsim $end
$timescale 1 ns $end
$scope module arb $end
$var wire 3 ! ptr [2:0] $end
$scope module grant $end
$var wire 1 \" valid $end
$var wire 16 # tag [15:0] $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
b0 !
0\"
b0 #
$end
#2
b1 !
1\"
b101 #
#3
0\"
#5
b10 !
#9
b11 !
#12
";

/// The same behaviour as an RTL simulator would dump it: 10 ns clock in ps, other names, the
/// pointer inside a wider state register (bits 4..2), the grant one cycle late; `state` differs
/// from the model from cycle 9 on (`ptr` 4 instead of 3).
const RTL_VCD: &str = "$version Generated by some simulator $end
$timescale 1ps $end
$scope module TOP $end
$scope module dut $end
$var wire 8 a state [7:0] $end
$var wire 1 b gv $end
$var wire 16 c gtag [15:0] $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
b0 a
0b
b0 c
#20000
b111 a
#30000
1b
b101 c
#40000
0b
#50000
b1011 a
#90000
b10000 a
#120000
";

const MAP: &str = "clock_ns: 10
signals:
  - {a: arb.ptr, b: \"TOP.dut.state[4:2]\"}
  - {a: arb.grant.valid, b: TOP.dut.gv, offset: 1}
  - {a: arb.grant.tag, b: TOP.dut.gtag, offset: 1}
";

#[test]
fn diff_exit_codes_first_divergence_and_map_errors() {
    let d = temp_dir("diff");
    let (a, b, map) = (d.join("model.vcd"), d.join("rtl.vcd"), d.join("map.yaml"));
    std::fs::write(&a, MODEL_VCD).unwrap();
    std::fs::write(&b, RTL_VCD).unwrap();
    std::fs::write(&map, MAP).unwrap();
    // Same wave: exit 0.
    let (code, out, err) = hwsim_parts(&["diff", s(&a), s(&a)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("verdict: SAME (3 signals over 13 cycles)"), "{out}");
    // Through the map: ptr differs from cycle 9 (3 vs 4) to the end; the grant agrees.
    let (code, out, err) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("(B, 10 ns/cycle), cycles 0..12"), "{out}");
    assert!(
        out.contains("DIFFER  arb.ptr         = TOP.dut.state[4:2]: first at cycle 9: A 3, B 4; 3 of 12 cycles differ"),
        "{out}"
    );
    assert!(out.contains("before, cycles 5..9: A 2 2 2 2  B 2 2 2 2"), "{out}");
    assert!(
        out.contains("same    arb.grant.valid = TOP.dut.gv (offset +1)"),
        "{out}"
    );
    assert!(
        out.contains("same    arb.grant.tag   = TOP.dut.gtag (offset +1)"),
        "{out}"
    );
    assert!(out.contains("first divergence at cycle 9 on arb.ptr"), "{out}");
    // Without the offset the grant is one cycle early in A: caught at cycle 2.
    std::fs::write(&map, MAP.replace(", offset: 1", "")).unwrap();
    let (code, out, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map)]);
    assert_eq!(code, 1);
    assert!(
        out.contains("arb.grant.valid = TOP.dut.gv: first at cycle 2: A 1, B 0"),
        "{out}"
    );
    // A window before the divergence agrees.
    std::fs::write(&map, MAP).unwrap();
    let (code, out, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map), "--to", "9"]);
    assert_eq!(code, 0, "{out}");
    let (code, _, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map), "--from", "9"]);
    assert_eq!(code, 1);

    // Bad input: exit 2, one line, located.
    let bad = |args: &[&str], want: &str| {
        let (code, out, err) = hwsim_parts(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: want `{want}` in {err}");
    };
    let m = s(&map);
    bad(&["diff", s(&a), s(&d.join("missing.vcd"))], "missing.vcd: cannot read");
    let junk = d.join("junk.vcd");
    std::fs::write(&junk, "this is not a wave\n\u{0}\u{1}").unwrap();
    bad(&["diff", s(&a), s(&junk)], "junk.vcd: cannot read the wave");
    bad(&["diff", s(&a), s(&b)], "no signal has the same full name");
    bad(&["diff", s(&a), s(&b), "--map", m, "--clock-ns", "0"], "--clock-ns");
    bad(
        &["diff", s(&a), s(&b), "--map", m, "--from", "5", "--to", "5"],
        "--from",
    );
    for (text, want) in [
        (
            MAP.replace("TOP.dut.gv,", "TOP.dut.gvv,"),
            "map.yaml:4:29: `TOP.dut.gvv` is not a signal of",
        ),
        (
            MAP.replace("state[4:2]", "state[9:2]"),
            "map.yaml:3:22: `TOP.dut.state[9:2]`: bit 9 is outside",
        ),
        (
            MAP.replace("{a: arb.ptr,", "{a: arb.ptrr,"),
            "map.yaml:3:9: `arb.ptrr` is not a signal of",
        ),
        (
            MAP.replace("offset: 1}\n  - {a: arb.grant.tag", "ofset: 1}\n  - {a: arb.grant.tag"),
            "map.yaml:4:",
        ),
        (
            "clock_ns: 10\nsignals: []\n".to_string(),
            "map.yaml:2:1: signals: the map names no signal",
        ),
        ("signals: [{a: x\n".to_string(), "map.yaml:"),
    ] {
        std::fs::write(&map, &text).unwrap();
        bad(&["diff", s(&a), s(&b), "--map", m], want);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `when:` compares a stream's field only while the stream is valid: the RTL's tag wire moves
/// (to 7 at cycle 5) while the grant is low, where the model's wave holds the last grant's.
#[test]
fn diff_compares_a_field_only_when_its_valid_is_high() {
    let d = temp_dir("diff-when");
    let (a, b, map) = (d.join("model.vcd"), d.join("rtl.vcd"), d.join("map.yaml"));
    std::fs::write(&a, MODEL_VCD).unwrap();
    std::fs::write(&b, RTL_VCD.replace("#50000\nb1011 a\n", "#50000\nb1011 a\nb111 c\n")).unwrap();
    let tag = "  - {a: arb.grant.tag, b: TOP.dut.gtag, offset: 1}\n";
    std::fs::write(&map, MAP).unwrap();
    let (code, out, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map), "--to", "9"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("arb.grant.tag   = TOP.dut.gtag (offset +1): first at cycle 4: A 5, B 7"),
        "{out}"
    );
    let when = "  - {a: arb.grant.tag, b: TOP.dut.gtag, offset: 1, when: arb.grant.valid}\n";
    std::fs::write(&map, MAP.replace(tag, when)).unwrap();
    let (code, out, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map), "--to", "9"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("same    arb.grant.tag   = TOP.dut.gtag (offset +1) (when arb.grant.valid)"),
        "{out}"
    );
    // A `when` that names no signal of A is refused where it is written.
    std::fs::write(
        &map,
        MAP.replace(tag, &when.replace("when: arb.grant.valid", "when: arb.grant.vld")),
    )
    .unwrap();
    let (code, _, err) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("map.yaml:5:") && err.contains("`arb.grant.vld` is not a signal of"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// After a divergence: what A has beside the map is listed and shown in a window of both waves,
/// a one-cycle lag on every signal is named as such, and a pair whose `when` never holds says
/// it was never compared.
#[test]
fn diff_lists_the_unmapped_shows_a_window_and_names_a_constant_lag() {
    let d = temp_dir("diff-lag");
    let (a, b, map) = (d.join("model.vcd"), d.join("rtl.vcd"), d.join("map.yaml"));
    std::fs::write(&a, MODEL_VCD).unwrap();
    std::fs::write(&b, RTL_VCD).unwrap();
    // The grant without its offset: B is one cycle late on both fields.
    let lag =
        "clock_ns: 10\nsignals:\n  - {a: arb.grant.valid, b: TOP.dut.gv}\n  - {a: arb.grant.tag, b: TOP.dut.gtag}\n";
    std::fs::write(&map, lag).unwrap();
    let (code, out, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("not compared (1 signals of A under the mapped scopes, not in the map): arb.ptr"),
        "{out}"
    );
    assert!(
        out.contains("window, cycles 2..10: the signals that differ (A over B)"),
        "{out}"
    );
    assert!(out.contains("  arb.grant.valid A     1     0     0"), "{out}");
    assert!(out.contains("                  B     0     1     0"), "{out}");
    assert!(
        out.contains("  arb.ptr         A only     1     1     1     2"),
        "{out}"
    );
    assert!(
        out.contains("hint: every compared signal agrees with B shifted by +1 cycle(s): B lags A by 1 cycle(s)"),
        "{out}"
    );
    // The full map differs on ptr too (from cycle 9): no constant lag explains it.
    std::fs::write(&map, MAP.replace(", offset: 1", "")).unwrap();
    let (_, out, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map)]);
    assert!(!out.contains("hint:"), "{out}");
    // A `when` that never holds in the compared cycles: said, not passed as `same`.
    let never = "clock_ns: 10\nsignals:\n  - {a: arb.grant.tag, b: TOP.dut.gtag, offset: 1, when: arb.grant.valid}\n";
    std::fs::write(&map, never).unwrap();
    let (code, out, _) = hwsim_parts(&["diff", s(&a), s(&b), "--map", s(&map), "--from", "4"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("unused  arb.grant.tag = TOP.dut.gtag (offset +1) (when arb.grant.valid): never compared"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn diff_model_against_its_own_fst_and_a_changed_run() {
    let d = temp_dir("diff-runs");
    let (vcd, fst) = (d.join("arb.vcd"), d.join("arb.fst"));
    let (code, _, err) = hwsim_parts(&[
        "tb/modules/bank_arbiter_rr_pointer.yaml",
        "--vcd",
        s(&vcd),
        "--fst",
        s(&fst),
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = hwsim_parts(&["diff", s(&vcd), s(&fst)]);
    assert_eq!(code, 0, "{out}");
    // The same testbench with the credit for VC 0 one cycle later: the grants move.
    let tb = d.join("late.yaml");
    let text = std::fs::read_to_string(root().join("tb/modules/bank_arbiter_rr_pointer.yaml")).unwrap();
    std::fs::write(
        &tb,
        text.replace("{at: 19, port: arb.credit", "{at: 20, port: arb.credit"),
    )
    .unwrap();
    let late = d.join("late.vcd");
    let (code, _, _) = hwsim_parts(&[s(&tb), "--vcd", s(&late), "-q"]);
    assert_eq!(code, 1, "its own checks fail");
    let (code, out, _) = hwsim_parts(&["diff", s(&vcd), s(&late)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("first divergence at cycle 19 on arb.credit.valid") || out.contains("cycle 19 on tb."),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// An FST cut short says so, with its size and what the reader said (issue 53: a bare `io
/// error`, or a missing file for a file that is there).
#[test]
fn a_cut_fst_is_named_as_such() {
    let d = temp_dir("fst-cut");
    let fst = d.join("arb.fst");
    let (code, _, err) = hwsim_parts(&["tb/modules/bank_arbiter_rr_pointer.yaml", "--fst", s(&fst), "-q"]);
    assert_eq!(code, 0, "{err}");
    let whole = std::fs::read(&fst).unwrap();
    for n in [100usize, 500, whole.len() / 2] {
        let cut = d.join(format!("cut{n}.fst"));
        std::fs::write(&cut, &whole[..n.min(whole.len() - 1)]).unwrap();
        let (code, _, err) = hwsim_parts(&["diff", s(&fst), s(&cut)]);
        assert_eq!(code, 2, "{err}");
        let want = format!(
            "{}: cannot read the wave: an FST cut short or damaged ({} bytes; the reader: ",
            cut.display(),
            n.min(whole.len() - 1)
        );
        assert!(err.contains(&want), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn vectors_csv_matches_the_run() {
    let d = temp_dir("vectors");
    let (code, out, err) = hwsim_parts(&["vectors", "tb/modules/bank_arbiter_flow_blocking.yaml", "--out", s(&d)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("arb.csv (27 cycles, 23 columns)"), "{out}");
    let csv = std::fs::read_to_string(d.join("arb.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(head[0], "cycle");
    for h in [
        "req.valid:1:in",
        "req.tag:16:in",
        "req.cost:15:in",
        "credit.credits:15:in",
        "grant.valid:1:out",
        "grant.tag:16:out",
        "ptr:3:out",
        "counter:9:out",
        "depth_vc0:11:out",
    ] {
        assert!(head.contains(&h), "{h} in {head:?}");
    }
    assert!(!head.iter().any(|h| h.contains("occupancy")), "{head:?}");
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 27);
    let col = |name: &str| head.iter().position(|h| h.starts_with(&format!("{name}:"))).unwrap();
    let at = |c: usize, name: &str| rows[c][col(name)];
    assert_eq!((at(0, "req.valid"), at(0, "req.tag"), at(0, "req.cost")), (1, 1, 6));
    assert_eq!(at(1, "req.valid"), 0);
    // The grants of the testbench's checks: a0 at 1, c0 (tag 4) at 7, b0 at 9, a1 at 21, a2 at 22.
    let grants: Vec<(usize, u64)> = (0..26)
        .filter(|&c| at(c, "grant.valid") == 1)
        .map(|c| (c, at(c, "grant.tag")))
        .collect();
    assert_eq!(grants, vec![(1, 1), (7, 4), (9, 5), (21, 2), (22, 3)]);
    assert_eq!(at(15, "depth_vc0"), 2);
    assert_eq!(at(20, "credit.valid"), 1);
    assert_eq!(at(20, "credit.credits"), 6);

    // Every column against the run's own VCD, sampled per cycle.
    let vcd = d.join("arb.vcd");
    let (code, _, _) = hwsim_parts(&["tb/modules/bank_arbiter_flow_blocking.yaml", "--vcd", s(&vcd), "-q"]);
    assert_eq!(code, 0);
    let sigs = signals(&vcd);
    for (k, h) in head.iter().enumerate().skip(1) {
        let port = h.split(':').next().unwrap();
        let full = if port.starts_with("req.") || port.starts_with("credit.") {
            let (p, f) = port.split_once('.').unwrap();
            format!("tb.drive_arb_{p}.out.{f}")
        } else {
            format!("arb.{port}")
        };
        let (_, _, ch) = sigs.iter().find(|v| v.0 == full).unwrap_or_else(|| panic!("{full}"));
        for (c, row) in rows.iter().enumerate() {
            let v = ch
                .iter()
                .rev()
                .find(|(t, _)| *t <= c as u64)
                .map(|(_, v)| u64::from_str_radix(v, 2).unwrap());
            assert_eq!(Some(row[k]), v, "{h} at cycle {c}");
        }
    }

    // Six stimulus rows on one port at cycle 2: the driver pushes them one per cycle, in order,
    // and the rows show each (2..=7).
    let (code, out, err) = hwsim_parts(&["vectors", "tb/modules/bank_arbiter_rr_pointer.yaml", "--out", s(&d)]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("arb.csv")).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let (v, tag) = (
        head.iter().position(|h| *h == "req.valid:1:in").unwrap(),
        head.iter().position(|h| *h == "req.tag:16:in").unwrap(),
    );
    let tags: Vec<&str> = csv
        .lines()
        .skip(3)
        .take(6)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            assert_eq!(c[v], "1", "{l}");
            c[tag]
        })
        .collect();
    assert_eq!(tags, ["1", "11", "2", "12", "3", "13"]);

    // Refused: a system testbench without `--instance`, an unknown instance, an output over an
    // input.
    let (code, _, err) = hwsim_parts(&["vectors", "tb/go_back_n.yaml", "--out", s(&d)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("go_back_n.yaml:") && err.contains("needs `--instance PATH`"),
        "{err}"
    );
    let (code, _, err) = hwsim_parts(&[
        "vectors",
        "tb/go_back_n.yaml",
        "--instance",
        "chip0.lg7.tx.nope",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--instance chip0.lg7.tx.nope: no such instance"), "{err}");
    // A port that carries up to 8 messages a cycle: a column group per slot, filled from the
    // kernel's log of its pushes (the wave shows the last of a cycle): every ACK and the NAK the
    // TX took in on LG 7, 48 in all, as its counters say.
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/go_back_n.yaml",
        "--instance",
        "chip0.lg7.tx.ack_return",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("chip0.lg7.tx.ack_return.csv")).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(
        &head[1..4],
        ["taken[0].valid:1:in", "taken[0].src:16:in", "taken[0].dst:16:in"]
    );
    assert!(head.contains(&"taken[7].ack_psn:12:in"), "{head:?}");
    let valids: Vec<usize> = (0..head.len()).filter(|&i| head[i].ends_with("].valid:1:in")).collect();
    assert_eq!(valids.len(), 8);
    let nak = head.iter().position(|h| *h == "taken[0].nak:1:in").unwrap();
    let (mut msgs, mut naks) = (0, 0);
    for l in csv.lines().skip(1) {
        let c: Vec<&str> = l.split(',').collect();
        msgs += valids.iter().filter(|&&i| c[i] == "1").count();
        naks += (c[nak] == "1") as usize;
        // A slot without a message is all zeros, not the last message.
        if c[valids[0]] == "0" {
            assert!(c[valids[0]..valids[1]].iter().all(|x| *x == "0"), "{l}");
        }
    }
    assert_eq!((msgs, naks), (48, 1));
    let tbdir = temp_dir("vectors-in");
    let tb = tbdir.join("arb.csv");
    std::fs::copy(root().join("tb/modules/bank_arbiter_flow_blocking.yaml"), &tb).unwrap();
    let (code, _, err) = hwsim_parts(&["vectors", s(&tb), "--out", s(&tbdir)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refusing to overwrite"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&tbdir);
}

/// The standalone bank arbiter's ledgers are the CBFC controller's (`arb.cbfc`, the node every
/// TX runs): its own vectors, the return in and the count out the cycle after.
#[test]
fn vectors_of_the_bank_arbiters_cbfc_node() {
    let dc = temp_dir("vectors-arb-cbfc");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/modules/bank_arbiter_flow_blocking.yaml",
        "--instance",
        "arb.cbfc",
        "--out",
        s(&dc),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let ccsv = std::fs::read_to_string(dc.join("arb.cbfc.csv")).unwrap();
    let (chead, crows) = vectors_table(&ccsv);
    let ccol = |name: &str| column(&chead, name);
    assert_eq!(crows[15][ccol("credits_d1.vc0")], 5);
    assert_eq!(crows[20][ccol("credit.valid")], 1);
    assert_eq!(
        (crows[21][ccol("counts[0].valid")], crows[21][ccol("counts[0].credits")]),
        (1, 11)
    );
    let _ = std::fs::remove_dir_all(&dc);
}

/// A vectors CSV as its header and its rows of numbers.
fn vectors_table(csv: &str) -> (Vec<&str>, Vec<Vec<u64>>) {
    let mut lines = csv.lines();
    let head = lines.next().unwrap().split(',').collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    (head, rows)
}

/// The index of the column of port field `name` (`credits_d1.vc0`, headed `name:width:dir`).
fn column(head: &[&str], name: &str) -> usize {
    head.iter().position(|h| h.starts_with(&format!("{name}:"))).unwrap()
}

/// The PAXI's RX side's vectors out of a system (tb/paxi/rx_watermark.yaml, chip 1's REQ MEM
/// of N = 32 frames, 1 RTT = 25): `rx_pause` rises in the cycle `rx_req` shows the high
/// watermark N + 1 RTT = 57 and falls when it shows the low one, 25, five times each; every
/// frame that came in on an `rx{k}` went on, these writes all to the completer on `slave`.
#[test]
fn vectors_of_the_paxi_rx_side_in_a_system() {
    let d = temp_dir("vectors-rx-vc");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/paxi/rx_watermark.yaml",
        "--instance",
        "chip1.paxi.rx_vc",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("chip1.paxi.rx_vc.csv")).unwrap();
    let (head, rows) = vectors_table(&csv);
    let (pause, level) = (column(&head, "rx_pause"), column(&head, "rx_req"));
    let mut edges = Vec::new();
    for w in rows.windows(2) {
        if w[0][pause] != w[1][pause] {
            edges.push((w[1][pause], w[1][level]));
        }
    }
    let want: Vec<(u64, u64)> = [(1, 57), (0, 25)].repeat(5);
    assert_eq!(edges, want, "pause edges (pause, rx_req)");
    let valids = |prefix: &str| -> u64 {
        let cols: Vec<usize> = (0..head.len())
            .filter(|&i| head[i].starts_with(prefix) && head[i].contains(".valid:"))
            .collect();
        rows.iter().map(|r| cols.iter().map(|&i| r[i]).sum::<u64>()).sum()
    };
    let (into, onward) = (valids("rx"), valids("bus[") + valids("slave["));
    assert!(into > 0, "no frame reached chip 1");
    assert_eq!(
        into, onward,
        "frames in on rx{{k}} against frames on to the core and the completer"
    );
    // Writes only: every frame to the completer (W), none to the requester (R, B).
    assert_eq!(valids("bus["), 0);
}

/// The PAXI completer's and its B packing buffer's vectors out of a system
/// (tb/paxi/read_write_mixed.yaml, chip 1 the slave of 8 writes and 48 read bursts): each AR
/// entry answered by one R frame on `send` (48, kind 2); the Bs of the writes handed to
/// `paxi.b_pack` on `b_entries` after the first W came in on `slave`, one entry each, and packed
/// there into B flits (kind 3) on its `out`, in the cycle of their last B or later, holding
/// every B; the core gives them their ids and link groups (0 here).
#[test]
fn vectors_of_the_paxi_completer_in_a_system() {
    let d = temp_dir("vectors-completer");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/paxi/read_write_mixed.yaml",
        "--instance",
        "chip1.paxi.completer",
        "--instance",
        "chip1.paxi.b_pack",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("chip1.paxi.completer.csv")).unwrap();
    let (head, rows) = vectors_table(&csv);
    let col = |name: &str| column(&head, name);
    let on = |lane: &str, kind: u64| -> Vec<u64> {
        rows.iter()
            .filter(|r| r[col(&format!("{lane}.valid"))] == 1 && r[col(&format!("{lane}.kind"))] == kind)
            .map(|r| r[0])
            .collect()
    };
    let (r_frames, b_entries) = (on("send[0]", 2), on("b_entries[0]", 3));
    // Every B handed on, whichever lane it took (two Bs due in one cycle take two).
    let lanes: Vec<usize> = (0..head.len())
        .filter(|&i| head[i].starts_with("b_entries[") && head[i].contains("].valid:"))
        .collect();
    let bs: u64 = rows.iter().map(|r| lanes.iter().map(|&i| r[i]).sum::<u64>()).sum();
    assert_eq!(r_frames.len(), 48, "one R frame per AR entry");
    assert!(
        on("send[0]", 3).is_empty(),
        "a B flit on `send`: the B buffer sends them"
    );
    let first_w = rows
        .iter()
        .find(|r| r[col("slave.valid")] == 1 && r[col("slave.kind")] == 0)
        .map(|r| r[0])
        .expect("a W at chip 1's slave");
    assert!(
        !b_entries.is_empty() && b_entries[0] >= first_w,
        "{b_entries:?}, first W at {first_w}"
    );
    assert!(
        rows.iter()
            .all(|r| r[col("send[0].valid")] == 0 || r[col("send[0].lg")] == 0),
        "the completer leaves the link group to the core"
    );
    let csv = std::fs::read_to_string(d.join("chip1.paxi.b_pack.csv")).unwrap();
    let (head, rows) = vectors_table(&csv);
    let col = |name: &str| column(&head, name);
    let taken: Vec<u64> = rows.iter().filter(|r| r[col("in.valid")] == 1).map(|r| r[0]).collect();
    assert_eq!(taken, b_entries, "the buffer takes the Bs in the cycle they are due");
    let flits: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r[col("out[0].valid")] == 1)
        .map(|r| (r[0], r[col("out[0].n")]))
        .collect();
    assert!(
        flits.iter().all(|r| rows[r.0 as usize][col("out[0].kind")] == 3),
        "{flits:?}"
    );
    assert!(!flits.is_empty() && flits[0].0 >= b_entries[0], "{flits:?}");
    // One flit a cycle at most here: every B packed, once.
    assert_eq!(flits.iter().map(|f| f.1).sum::<u64>(), bs, "{flits:?}");
}

/// The TYPE2 queue's vectors out of a multicast system (tb/paxi/multicast_group.yaml): each
/// multicast frame offered in the cycle its segment comes, both gates passing with the cost of
/// 4 KiB per member (6 + 6 + 6 + 1 credits), taken in that cycle, the queue empty after it; the
/// controller's TYPE2 counts arrive on the node's own ports.
#[test]
fn vectors_of_the_type2_queue_in_a_multicast_system() {
    let d = temp_dir("vectors-type2");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/paxi/multicast_group.yaml",
        "--instance",
        "chip0.lg7.tx.type2",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("chip0.lg7.tx.type2.csv")).unwrap();
    let (head, rows) = vectors_table(&csv);
    let col = |name: &str| column(&head, name);
    let segs: Vec<u64> = rows.iter().filter(|r| r[col("seg.valid")] == 1).map(|r| r[0]).collect();
    let takes: Vec<u64> = rows
        .iter()
        .filter(|r| r[col("take.valid")] == 1)
        .map(|r| r[0])
        .collect();
    assert!(!segs.is_empty(), "no TYPE2 segment on LG 7");
    assert_eq!(segs, takes, "each frame granted in the cycle it came");
    for &c in &segs {
        let r = &rows[c as usize];
        assert_eq!(r[col("offer.queued")], 1, "cycle {c}");
        assert_eq!(r[col("offer.block")], 0, "cycle {c}: both gates pass");
        assert_eq!(r[col("offer.cost")], 19, "cycle {c}");
        assert_eq!(r[col("offer.txn")], r[col("seg.txn")], "cycle {c}");
        assert_eq!(r[col("queue")], 0, "cycle {c}: out in the cycle of the take");
        assert_eq!(r[col("charged.valid")], 1, "cycle {c}: the members charged");
    }
    // Every member returns its credits: the TYPE2 counts come to this node.
    assert!(rows
        .iter()
        .any(|r| r[col("counts.valid")] == 1 && r[col("counts.vc")] == 4));
    let _ = std::fs::remove_dir_all(&d);
}

/// The slot FIFO's vectors out of go_back_n: `q_ops` keeps the lanes its busiest cycle used.
#[test]
fn vectors_of_the_slot_fifo_keep_the_lanes_its_busiest_cycle_used() {
    // `q_ops` is declared 1 026 lanes wide (2 x 512 slots + 2); the vectors keep the lanes the
    // run used: the NAK puts several frames back at the head of the queue in one cycle.
    let d = temp_dir("vectors-slot-fifo");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/go_back_n.yaml",
        "--instance",
        "chip0.lg7.tx.slot_fifo",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("chip0.lg7.tx.slot_fifo.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    // The slot bitmaps are 512-bit columns (not u64): only the queue ops' columns are read.
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap_or(0)).collect())
        .collect();
    let lanes = head
        .iter()
        .filter(|h| h.ends_with(".valid:1:out") && h.starts_with("q_ops["))
        .count();
    assert!((2..64).contains(&lanes), "{lanes} lanes: {head:?}");
    // In the NAK's cycle every lane carries a `front` op (1), largest PSN first.
    let (v0, op0, psn0, psn1) = (
        column(&head, "q_ops[0].valid"),
        column(&head, "q_ops[0].op"),
        column(&head, "q_ops[0].first_psn"),
        column(&head, "q_ops[1].first_psn"),
    );
    let nak = rows.iter().find(|r| r[v0] == 1 && r[op0] == 1).expect("a front op");
    assert!(
        nak[psn0] > nak[psn1],
        "largest PSN first: {} then {}",
        nak[psn0],
        nak[psn1]
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A node's vectors out of a system scenario: the TX's MAC credit counter through the Go-Back-N
/// story, the stimulus an RTL implementation of it would be driven with.
#[test]
fn vectors_of_a_node_inside_a_system() {
    let d = temp_dir("vectors-system");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/go_back_n.yaml",
        "--instance",
        "chip0.lg7.tx.mac_credit",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("chip0.lg7.tx.mac_credit.csv (50836 cycles, 6 columns)"),
        "{out}"
    );
    let csv = std::fs::read_to_string(d.join("chip0.lg7.tx.mac_credit.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "cycle,credit.valid:1:in,credit.mul:1:in,available:4:out,mul_available:8:out,take.valid:1:in,take.mul:1:in"
        )
    );
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    // One credit, back from the MAC before every grant after the first: as many takes as
    // returns, each take in a cycle that shows the credit, the count 0 in between.
    let takes: Vec<u64> = rows.iter().filter(|r| r[5] == 1).map(|r| r[0]).collect();
    let returns: Vec<u64> = rows.iter().filter(|r| r[1] == 1).map(|r| r[0]).collect();
    assert_eq!(takes.len(), returns.len());
    assert!(takes.len() >= 10, "{takes:?}");
    for r in &rows {
        if r[5] == 1 {
            assert_eq!(r[3], 1, "a take at {} without a credit shown", r[0]);
        }
    }
    // The grant comes in the cycle after the MAC pushed the credit back (the counter shows it
    // in the cycle it takes it in): the fused TX's timing.
    for (t, r) in takes.iter().skip(1).zip(&returns) {
        assert_eq!(*t, r + 1, "take at {t}, return pushed at {r}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The TX's DCQCN rate gate is a node (`tx.dcqcn`): its vectors out of the pacing story are what
/// an RTL rate limiter would be driven with and must answer — the CNP in and the cut flow's
/// pacing out in the same cycle, each grant in and the next send's cycle out.
#[test]
fn vectors_of_the_rate_gate_show_the_cut_and_the_pacing() {
    let d = temp_dir("vectors-dcqcn");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/modules/rclink_tx_dcqcn_pacing.yaml",
        "--instance",
        "tx.dcqcn",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("tx.dcqcn.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| h.starts_with(&format!("{name}:"))).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let at = |c: &str| -> Vec<u64> {
        let i = col(c);
        rows.iter()
            .filter(|r| r[i] == "1")
            .map(|r| r[0].parse().unwrap())
            .collect()
    };
    // One CNP passes CNP MERGE (the second is filtered in front of the core): seen at 6, and
    // the cut's pacing goes back in that cycle — the last send (5, at 50 B/ns) ends at 33.
    assert_eq!(at("cnp.valid"), vec![6]);
    assert_eq!(at("ready[0].valid"), vec![6]);
    let r6 = rows.iter().find(|r| r[0] == "6").unwrap();
    assert_eq!((r6[col("ready[0].paced")], r6[col("ready[0].at")]), ("1", "33"));
    assert_eq!(r6[col("rate")], "25");
    // Six grants; the three at line rate move no pacing, each paced one 1394 / 25 B/ns later.
    assert_eq!(at("sent.valid"), vec![1, 3, 5, 33, 89, 145]);
    assert_eq!(at("paced.valid"), vec![33, 89, 145]);
    let next: Vec<&str> = rows
        .iter()
        .filter(|r| r[col("paced.valid")] == "1")
        .map(|r| r[col("paced.at")])
        .collect();
    assert_eq!(next, vec!["89", "145", "201"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// The TX's CBFC controller is a node (`tx.cbfc`): its vectors out of the Go-Back-N story are
/// what an RTL CBFC controller would be driven with and must answer — the grants' charges and
/// the receiver's returns in, each changed ledger's count out.
#[test]
fn vectors_of_the_cbfc_controller_balance_charges_and_returns() {
    let d = temp_dir("vectors-cbfc");
    let (code, out, err) = hwsim_parts(&[
        "vectors",
        "tb/go_back_n.yaml",
        "--instance",
        "chip0.lg7.tx.cbfc",
        "--out",
        s(&d),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(d.join("chip0.lg7.tx.cbfc.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| h.starts_with(&format!("{name}:"))).unwrap();
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let on = |c: &str| -> Vec<&Vec<u64>> { rows.iter().filter(|r| r[col(c)] == 1).collect() };
    // One charge per frame the MAC sent (21, the resends among them), all to destination 1;
    // every credit charged came back.
    let charges = on("charge.valid");
    assert_eq!(charges.len(), 21);
    assert!(charges.iter().all(|r| r[col("charge.dst")] == 1));
    let charged: u64 = charges.iter().map(|r| r[col("charge.credits")]).sum();
    let returned: u64 = on("credit.valid").iter().map(|r| r[col("credit.credits")]).sum();
    assert_eq!(charged, returned);
    // The first frame (4 KiB: packets of 6 + 6 + 6 + 1 credits) charged at its grant, 21; its
    // count goes out on `charged` in that cycle, for the next round.
    assert_eq!((charges[0][0], charges[0][col("charge.credits")]), (21, 19));
    let first = on("charged.valid")[0];
    assert_eq!((first[0], first[col("charged.credits")]), (21, 1024 - 19));
    // Each return is taken the cycle after the MAC's push and its count goes out then, one
    // message per return (go_back_n's returns come one a cycle).
    let returns = on("credit.valid");
    let counts = on("counts[0].valid");
    assert_eq!(counts.len(), returns.len());
    assert!(on("counts[1].valid").is_empty());
    for (r, c) in returns.iter().zip(&counts) {
        assert_eq!(c[0], r[0] + 1, "return pushed at {}, counted at {}", r[0], c[0]);
    }
    // At the end every ledger of destination 1 is full again.
    let last = rows.last().unwrap();
    for v in 0..4 {
        assert_eq!(last[col(&format!("credits_d1.vc{v}"))], 1024);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_system_testbench_without_a_view_opens_on_its_headline_signals_that_move() {
    let d = temp_dir("headlines");
    let vcd = d.join("a1.vcd");
    // a1 has no `view:` and a `trace:` of whole LGs (1 582 variables).
    let (code, out, err) = hwsim_parts(&[
        "tb/acceptance/a1_p2p_bandwidth.yaml",
        "--vcd",
        s(&vcd),
        "-q",
        "--until",
        "20000",
    ]);
    assert_eq!(code, 1, "a1 fails its checks when cut at 20 000: {out}{err}");
    let g = std::fs::read_to_string(d.join("a1.gtkw")).unwrap();
    let titles: Vec<&str> = g
        .lines()
        .zip(g.lines().skip(1))
        .filter(|(a, _)| *a == "@800200")
        .map(|(_, t)| t.trim_start_matches('-'))
        .collect();
    assert_eq!(
        titles,
        [
            "TX frames to the MAC, per LG (valid, PSN)",
            "TX slots in use, per LG",
            "RX PSN check and control"
        ],
        "{g}"
    );
    let shown: Vec<&str> = g
        .lines()
        .map(|l| traced(l).0)
        .filter(|l| l.starts_with("chip") || l.starts_with("sw") || l.starts_with("link"))
        .collect();
    assert!(shown.len() <= 3 * 16 && shown.len() >= 6, "{shown:?}");
    // Only signals that move: the traced LGs' frames, slots and RX control; not their DCQCN
    // rate (traced, but no CNP ever cuts it: the rate gate's group is left out above), nor
    // the PAXI's OST (not traced).
    assert!(
        shown.iter().any(|l| l.starts_with("chip0.lg0.tx.frame.valid")),
        "{shown:?}"
    );
    assert!(!shown.iter().any(|l| l.contains("dcqcn")), "{shown:?}");
    // A testbench with a `view:` keeps its own groups (go_back_n: the test above).
    let _ = std::fs::remove_dir_all(&d);
}

/// The default view's PAXI group shows the packing buffers' fill (the `paxi.ar_pack` and
/// `paxi.b_pack` nodes' `fill`, exported as `ar_fill` / `b_fill`) where it moves: a5 (no `view:`,
/// no `trace:`) writes only, so chip 1's B buffer fills and no AR buffer does; and each signal
/// once.
#[test]
fn the_default_view_shows_the_paxi_packing_buffers_that_fill() {
    let d = temp_dir("paxi-fill-view");
    // The signals of the PAXI group of `tb`'s default save file (written as `d/name.gtkw`).
    let paxi_group = |tb: &str, name: &str| -> (Vec<String>, String) {
        let vcd = d.join(format!("{name}.vcd"));
        let (code, out, err) = hwsim_parts(&[tb, "--vcd", s(&vcd), "-q"]);
        assert_eq!(code, 0, "{out}{err}");
        let g = std::fs::read_to_string(d.join(format!("{name}.gtkw"))).unwrap();
        let paxi = g.split("-PAXI").nth(1).expect("a PAXI group");
        let shown = paxi
            .lines()
            .map(|l| traced(l).0.to_string())
            .filter(|l| l.starts_with("chip"))
            .collect();
        (shown, g)
    };
    let (shown, g) = paxi_group("tb/acceptance/a5_go_back_n_order.yaml", "a5");
    assert!(
        shown.iter().any(|l| l.starts_with("chip1.paxi.b_fill")),
        "{shown:?}\n{g}"
    );
    assert!(!shown.iter().any(|l| l.contains("ar_fill")), "{shown:?}");
    // Each signal once, under the PAXI's name: tb/paxi/min_latency.yaml's reads move chip 0's
    // `r_ost`, which the VCD declares twice with one identifier (the core's port and the
    // composite's export of it).
    let (shown, g) = paxi_group("tb/paxi/min_latency.yaml", "ml");
    assert_eq!(shown, ["chip0.paxi.r_ost[15:0]"], "{g}");
    let _ = std::fs::remove_dir_all(&d);
}

/// a2_incast_ecn's events on the waves: the switch's 16 ECN marks, chip 0's 14 CNPs, and the
/// senders' 11 rate cuts (3 CNPs merged away), each a one-cycle pulse at the block that decides
/// it; the view's globs over every LG's pulse show only the LGs where one fired.
#[test]
fn a2_shows_its_marks_cnps_and_rate_cuts_as_pulses() {
    let d = temp_dir("a2-pulses");
    let vcd = d.join("a2.vcd");
    let (code, out, err) = hwsim_parts(&["tb/acceptance/a2_incast_ecn.yaml", "--vcd", s(&vcd), "-q"]);
    assert_eq!(code, 0, "{out}{err}");
    let sigs = signals(&vcd);
    let rises = |glob: &str| -> (usize, u64) {
        let picked: Vec<_> = sigs.iter().filter(|(n, _, _)| hwsim_hw::glob_match(glob, n)).collect();
        let fired = picked
            .iter()
            .filter(|(_, _, ch)| ch.iter().any(|(_, v)| v == "1"))
            .count();
        let total = picked
            .iter()
            .map(|(_, _, ch)| ch.iter().filter(|(_, v)| v == "1").count() as u64)
            .sum();
        (fired, total)
    };
    assert_eq!(rises("sw0.core.ev_ecn"), (1, 16));
    assert_eq!(rises("chip0.lg*.rx.ctrl_out.ev_cnp").1, 14);
    let (lgs, cuts) = rises("chip*.lg*.tx.dcqcn.ev_cnp");
    assert_eq!((lgs, cuts), (11, 11));
    let g = std::fs::read_to_string(d.join("a2.gtkw")).unwrap();
    let shown = |glob: &str| g.lines().filter(|l| hwsim_hw::glob_match(glob, traced(l).0)).count();
    // Of the 40 LGs' rate-cut pulses, the 11 that fired; every CNP-sending LG of chip 0.
    assert_eq!(shown("chip*.lg*.tx.dcqcn.ev_cnp"), 11, "{g}");
    assert_eq!(
        shown("chip0.lg*.rx.ctrl_out.ev_cnp"),
        rises("chip0.lg*.rx.ctrl_out.ev_cnp").0
    );
    assert_eq!(shown("sw0.core.ev_ecn"), 1);
    let _ = std::fs::remove_dir_all(&d);
}
