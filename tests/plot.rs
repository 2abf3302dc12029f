//! The figures of `hwsim plot` and `hwsim sweep`, end to end through the built binary: axis
//! labels from a parameter's short name, `--title`, `--xlabel`, `--ylabel`, `--size`, legends
//! that keep what differs, `--rate`, and `--columns` globs with the nearest names when one
//! selects nothing. Generated files go to a fresh folder under the system temp dir per test.

mod common;

use std::path::Path;
use std::process::Output;

use common::{assert_bad_output, assert_code, hwsim, s, stdout, temp_dir, FIFO_TB};

/// The texts an SVG draws, one per `<text>` element.
fn texts(svg: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(svg).unwrap();
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            body.trim().to_string()
        })
        .collect()
}

/// A PNG's width and height (its IHDR chunk).
fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap();
    let n = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (n(16), n(20))
}

fn sweep(out: &Path, extra: &[&str]) -> Output {
    let mut a: Vec<String> = [
        "sweep",
        FIFO_TB,
        "--set",
        "instances.src.params.count=4,8",
        "--metric",
        "end_cycle",
        "-q",
        "--out",
    ]
    .map(String::from)
    .to_vec();
    a.push(s(out));
    a.extend(extra.iter().map(|x| x.to_string()));
    hwsim(&a)
}

#[test]
fn a_sweep_figure_names_the_parameter_short_and_takes_title_labels_and_size() {
    let d = temp_dir("sweep_look");
    let o = sweep(&d.join("a"), &[]);
    assert_code(&o, 0);
    let t = texts(&d.join("a/end_cycle_vs_count.svg"));
    assert!(t.iter().any(|x| x == "count"), "the x label is the short name: {t:?}");
    assert!(t.iter().all(|x| !x.contains("instances.src")), "{t:?}");
    let o = sweep(
        &d.join("b"),
        &[
            "--title",
            "FIFO drain",
            "--xlabel",
            "items",
            "--ylabel",
            "end (ns)",
            "--size",
            "1280x800",
        ],
    );
    assert_code(&o, 0);
    let t = texts(&d.join("b/end_cycle_vs_count.svg"));
    for want in ["FIFO drain", "items", "end (ns)"] {
        assert!(t.iter().any(|x| x == want), "`{want}` in {t:?}");
    }
    let svg = std::fs::read_to_string(d.join("b/end_cycle_vs_count.svg")).unwrap();
    assert!(svg.starts_with("<svg width=\"1280\" height=\"800\""), "{}", &svg[..80]);
    assert_eq!(png_size(&d.join("b/end_cycle_vs_count.png")), (1280, 800));
    // --collect takes them too.
    let o = hwsim(&[
        "sweep",
        "--collect",
        &s(&d.join("a")),
        "--size",
        "640x480",
        "--title",
        "again",
    ]);
    assert_code(&o, 0);
    assert_eq!(png_size(&d.join("a/end_cycle_vs_count.png")), (640, 480));
    assert!(texts(&d.join("a/end_cycle_vs_count.svg")).contains(&"again".to_string()));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sweep_x_label_has_the_unit_its_parameter_documents() {
    let d = temp_dir("sweep_unit");
    let o = hwsim(&[
        "sweep",
        FIFO_TB,
        "--set",
        "instances.snk.params.interval=1,3",
        "--metric",
        "end_cycle",
        "-q",
        "--out",
        &s(&d),
    ]);
    assert_code(&o, 0);
    // The consumer's `interval` is `Cycles between pops`: a cycle is a ns.
    let t = texts(&d.join("end_cycle_vs_interval.svg"));
    assert!(t.iter().any(|x| x == "interval (ns)"), "{t:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_figure_options_exit_2_with_one_line_naming_the_option() {
    let d = temp_dir("bad_look");
    let csv = d.join("p.csv");
    std::fs::write(&csv, "cycle,a\n0,1\n500,2\n").unwrap();
    let svg = s(&d.join("p.svg"));
    for size in ["100x600", "800x9000", "800", "wide", "0x0"] {
        let e = assert_bad_output(
            &hwsim(&["plot", &s(&csv), "--out", &svg, "--size", size]),
            "--size",
            &[],
        );
        assert!(e.contains("200..=8000"), "{e}");
        // A sweep refuses it before any run.
        let out = d.join(format!("sw{size}"));
        assert_bad_output(&sweep(&out, &["--size", size]), "--size", &[]);
        assert!(!out.exists(), "nothing written");
    }
    for opt in ["--title", "--xlabel", "--ylabel"] {
        let e = assert_bad_output(&hwsim(&["plot", &s(&csv), "--out", &svg, opt, "a\nb"]), opt, &[]);
        assert!(e.contains("control character"), "{e}");
    }
    assert!(!d.join("p.svg").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_legend_keeps_the_part_that_differs() {
    let d = temp_dir("legend");
    let csv = d.join("p.csv");
    std::fs::write(
        &csv,
        "cycle,chip0.lg0.mac.payload_bytes_sent,chip1.lg0.mac.payload_bytes_sent\n0,0,0\n500,1000,800\n",
    )
    .unwrap();
    let svg = d.join("p.svg");
    assert_code(&hwsim(&["plot", &s(&csv), "--out", &s(&svg)]), 0);
    let t = texts(&svg);
    // `payload_bytes_sent (chip0)` is one character too long: the shared start goes.
    for want in ["…(chip0)", "…(chip1)", "payload_bytes_sent"] {
        assert!(t.iter().any(|x| x == want), "`{want}` in {t:?}");
    }
    assert!(!t.iter().any(|x| x.contains("(chip…")), "{t:?}");
    // A wider figure has room for the whole labels.
    assert_code(&hwsim(&["plot", &s(&csv), "--out", &s(&svg), "--size", "1600x600"]), 0);
    assert!(texts(&svg).contains(&"payload_bytes_sent (chip0)".to_string()));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn rate_draws_a_cumulative_column_per_ns() {
    let d = temp_dir("rate");
    let csv = d.join("p.csv");
    std::fs::write(&csv, "cycle,rx.bytes,rx.level\n0,0,5\n500,1000,6\n1000,1500,7\n").unwrap();
    let svg = d.join("p.svg");
    assert_code(
        &hwsim(&["plot", &s(&csv), "--out", &s(&svg), "--columns", "rx.bytes"]),
        0,
    );
    assert!(texts(&svg).contains(&"1500".to_string()), "the counts drawn");
    // `--rate` before the CSV: a flag, not a glob swallowing it.
    assert_code(
        &hwsim(&["plot", "--rate", &s(&csv), "--out", &s(&svg), "--columns", "rx.bytes"]),
        0,
    );
    let t = texts(&svg);
    // 1000 bytes over the first 500 ns, 500 over the next: 2 and 1 a ns.
    assert!(
        t.contains(&"bytes per ns".to_string()) && !t.contains(&"1500".to_string()),
        "{t:?}"
    );
    assert!(t.contains(&"2".to_string()) && t.contains(&"1".to_string()), "{t:?}");
    assert_code(&hwsim(&["plot", &s(&csv), "--out", &s(&svg), "--rate=*bytes"]), 0);
    let t = texts(&svg);
    assert!(
        t.contains(&"bytes per ns".to_string()) && t.contains(&"level".to_string()),
        "{t:?}"
    );
    let e = assert_bad_output(
        &hwsim(&["plot", &s(&csv), "--out", &s(&svg), "--rate=*byts"]),
        "--rate: `*byts` selects no column",
        &[],
    );
    assert!(e.contains("nearest: rx.bytes"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn columns_take_trace_globs_and_an_unknown_one_names_the_nearest_few() {
    let d = temp_dir("columns");
    let csv = d.join("p.csv");
    let names: Vec<String> = (0..10)
        .flat_map(|c| (0..8).map(move |l| format!("chip{c}.lg{l}.tx.rate")))
        .collect();
    let row = |v: u32| {
        std::iter::once(v.to_string())
            .chain(names.iter().map(|_| v.to_string()))
            .collect::<Vec<_>>()
            .join(",")
    };
    std::fs::write(&csv, format!("cycle,{}\n{}\n{}\n", names.join(","), row(0), row(500))).unwrap();
    let svg = s(&d.join("p.svg"));
    // A scope selects the columns below it, as --trace does.
    let o = hwsim(&["plot", &s(&csv), "--out", &svg, "--columns", "chip3"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("(8 column(s))"), "{}", stdout(&o));
    let o = hwsim(&[
        "plot",
        &s(&csv),
        "--out",
        &svg,
        "--columns",
        "chip3.lg*.tx,chip4.lg?.tx.rate",
    ]);
    assert!(stdout(&o).contains("(16 column(s))"), "{}", stdout(&o));
    let e = assert_bad_output(
        &hwsim(&["plot", &s(&csv), "--out", &svg, "--columns", "chip3.lg7.tx.rat"]),
        "--columns: `chip3.lg7.tx.rat` matches no column",
        &[],
    );
    assert!(e.contains("80 columns; nearest: chip3.lg7.tx.rate,"), "{e}");
    assert_eq!(e.matches(".tx.rate").count(), 3, "three names, not 80: {e}");
    let e = assert_bad_output(
        &hwsim(&["plot", &s(&csv), "--out", &svg, "--label", "chip3.lg7.rate=x"]),
        "--label",
        &[],
    );
    assert!(
        e.contains("nearest: chip3.lg7.tx.rate") && e.matches(".tx.rate").count() == 3,
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_figure_options_are_in_the_help() {
    for (cmd, opts) in [
        (
            "plot",
            &["--title", "--xlabel", "--ylabel", "--size", "--rate", "--columns"][..],
        ),
        ("sweep", &["--title", "--xlabel", "--ylabel", "--size"][..]),
    ] {
        let o = hwsim(&[cmd, "--help"]);
        assert_code(&o, 0);
        for opt in opts {
            assert!(
                stdout(&o).contains(&format!("  {opt} ")) || stdout(&o).contains(&format!("  {opt}[")),
                "{cmd} --help: {opt}"
            );
        }
        assert!(stdout(&o).contains("200..=8000"), "{cmd} --help gives the size range");
    }
}
