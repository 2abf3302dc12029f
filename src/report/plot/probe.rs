//! The chart of a probe CSV: its columns over cycles, picked with `--columns` globs (matched as
//! `--trace` globs are, by hwsim_hw::GlobSet: a pattern or a scope above the column), each
//! labelled by crate::report::plot_label, cumulative ones drawn as their rate with `--rate`.

use std::path::Path;

use super::{Chart, Series};
use crate::input::yaml::InputError;

/// Most points a probe plot draws (rows × columns): what plotters is handed stays a few hundred
/// MB at most, and a picture of more points than pixels says nothing more.
pub const MAX_POINTS: u64 = 10_000_000;

/// What to draw of a probe CSV.
#[derive(Clone, Debug, Default)]
pub struct Pick {
    /// `--columns` globs (none: every column).
    pub columns: Vec<String>,
    /// `--label COLUMN=TEXT` arguments.
    pub labels: Vec<String>,
    /// `--rate` globs: the drawn columns they select are drawn as their rate per ns.
    pub rate: Vec<String>,
}

/// How many near names an unknown column's message gives.
const NEAR: usize = 3;

/// The columns `globs` select (indices into `header`, the cycle column left out); a glob that
/// selects none is refused, naming the nearest columns.
fn pick(csv: &Path, header: &[String], globs: &[String]) -> Result<Vec<usize>, InputError> {
    let names = &header[1..];
    for g in globs {
        let set = hwsim_hw::GlobSet::new(std::slice::from_ref(g));
        if !names.iter().any(|n| set.selects(n)) {
            return Err(InputError::new(
                Path::new("--columns"),
                format!(
                    "`{}` matches no column of {} ({} columns; nearest: {})",
                    g.escape_debug(),
                    csv.display(),
                    names.len(),
                    super::options::closest(g, names, NEAR).join(", ")
                ),
            ));
        }
    }
    let set = hwsim_hw::GlobSet::new(globs);
    Ok((1..header.len()).filter(|&i| set.selects(&header[i])).collect())
}

/// The rate of a cumulative series: the difference over each interval between samples, per
/// ns, at the interval's end (the first sample has none before it).
fn to_rate(label: &str, points: &[(f64, f64, f64, f64)]) -> Result<Vec<(f64, f64, f64, f64)>, InputError> {
    let bad = |m: String| InputError::new(Path::new("--rate"), m);
    if points.len() < 2 {
        return Err(bad(format!(
            "`{label}` has {} sample(s): a rate needs two",
            points.len()
        )));
    }
    points
        .windows(2)
        .map(|w| {
            let (dx, dy) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
            if dx <= 0.0 {
                return Err(bad(format!(
                    "cycle {} follows cycle {}: a rate needs rising cycles",
                    w[1].0, w[0].0
                )));
            }
            let r = dy / dx;
            Ok((w[1].0, r, r, r))
        })
        .collect()
}

/// [`probe_chart_with`] without `--rate`.
pub fn probe_chart(csv: &Path, globs: &[String], labels: &[String]) -> Result<Chart, InputError> {
    probe_chart_with(
        csv,
        &Pick {
            columns: globs.to_vec(),
            labels: labels.to_vec(),
            rate: Vec::new(),
        },
    )
}

/// The chart of a probe CSV's columns (those `p.columns` select, default all) over cycles, each
/// labelled by crate::report::plot_label (a rate's default label says `per ns`). The CSV is read as RFC
/// 4180 (see crate::report::csv: a byte-order mark, quoted fields); a value that is not a finite number
/// is refused at its line and column.
///
/// The row at cycle 0 is not drawn when later rows follow: a probe samples the values committed
/// by the end of the cycle before each sample time (crate::run::probe), so its cycle-0 row is the
/// reset state before any block ran, not a value the model committed, and a line from it to
/// the first committed value drew a ramp that never happened. A rate uses it: the first
/// interval's count is from the reset state.
pub fn probe_chart_with(csv: &Path, p: &Pick) -> Result<Chart, InputError> {
    let mut r = crate::report::csv::Reader::open(csv)?;
    let header: Vec<String> = r.record()?.unwrap_or_default().into_iter().map(|f| f.text).collect();
    if header.first().map(String::as_str) != Some("cycle") || header.len() < 2 {
        return Err(InputError {
            file: csv.to_path_buf(),
            line: Some(1),
            column: Some(1),
            message: "not a probe CSV (the header is `cycle,<column>…`)".into(),
        });
    }
    let picked = pick(csv, &header, &p.columns)?;
    let columns: Vec<String> = picked.iter().map(|&i| header[i].clone()).collect();
    let rate_set = hwsim_hw::GlobSet::new(&p.rate);
    let is_rate: Vec<bool> = columns
        .iter()
        .map(|c| !p.rate.is_empty() && rate_set.selects(c))
        .collect();
    if let Some(g) = p.rate.iter().find(|g| {
        let one = hwsim_hw::GlobSet::new(std::slice::from_ref(*g));
        !columns.iter().any(|c| one.selects(c))
    }) {
        return Err(InputError::new(
            Path::new("--rate"),
            format!(
                "`{}` selects no column drawn (nearest: {})",
                g.escape_debug(),
                super::options::closest(g, &columns, NEAR).join(", ")
            ),
        ));
    }
    let mut short = crate::report::plot_label::short_labels(&columns);
    for (l, _) in short.iter_mut().zip(&is_rate).filter(|(_, r)| **r) {
        l.push_str(" per ns");
    }
    let mut series: Vec<Series> = crate::report::plot_label::apply_labels(&columns, short, &p.labels)?
        .into_iter()
        .map(|label| Series {
            label,
            points: Vec::new(),
        })
        .collect();
    read_rows(csv, &mut r, &header, &picked, &mut series)?;
    let reset = series.iter().all(|s| s.points.len() > 1 && s.points[0].0 == 0.0);
    for ((s, &rate), column) in series.iter_mut().zip(&is_rate).zip(&columns) {
        if rate {
            s.points = to_rate(column, &s.points)?;
        } else if reset {
            s.points.remove(0);
        }
    }
    let rates = is_rate.iter().filter(|r| **r).count();
    Ok(Chart {
        title: format!(
            "{} over time{}",
            csv.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            if rates > 0 { " (rates per ns)" } else { "" }
        ),
        x_label: "cycle (ns)".into(),
        y_label: y_label(&columns, &series, rates),
        log_x: false,
        log_y: false,
        series,
    })
}

/// The y label: a lone column's label; the last part every column shares (`backlog`), else
/// `value`; `per ns` when every column is a rate.
fn y_label(columns: &[String], series: &[Series], rates: usize) -> String {
    if columns.len() == 1 {
        return series[0].label.clone();
    }
    let leaf = |c: &str| c.rsplit('.').next().unwrap_or(c).to_string();
    let base = if columns.iter().all(|c| leaf(c) == leaf(&columns[0])) {
        leaf(&columns[0])
    } else if rates == columns.len() {
        "rate".into()
    } else {
        "value".into()
    };
    if rates == columns.len() {
        format!("{base} per ns")
    } else {
        base
    }
}

/// Reads the rows into the series (one per picked column).
fn read_rows(
    csv: &Path,
    r: &mut crate::report::csv::Reader<impl std::io::BufRead>,
    header: &[String],
    picked: &[usize],
    series: &mut [Series],
) -> Result<(), InputError> {
    let mut points = 0u64;
    while let Some(f) = r.record()? {
        let at = |i: usize, message: String| {
            let (line, column) = match f.get(i).or(f.last()) {
                Some(x) if i < f.len() => (x.line, x.column),
                // A missing field: at the end of the row.
                Some(x) => (x.line, x.column + x.text.chars().count()),
                None => (0, 1),
            };
            InputError {
                file: csv.to_path_buf(),
                line: Some(line),
                column: Some(column),
                message,
            }
        };
        let num = |i: usize| -> Result<f64, InputError> {
            let name = &header[i];
            let Some(text) = f.get(i).map(|x| x.text.trim()) else {
                return Err(at(
                    i,
                    format!("the row has no `{name}` (the header has {} columns)", header.len()),
                ));
            };
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                Ok(_) => Err(at(
                    i,
                    format!("`{text}` is not a finite number ({name}): it cannot be drawn"),
                )),
                Err(_) => Err(at(i, format!("`{}` is not a number ({name})", text.escape_debug()))),
            }
        };
        let x = num(0)?;
        points += picked.len() as u64;
        if points > MAX_POINTS {
            return Err(at(
                0,
                format!(
                    "more than {MAX_POINTS} points to draw ({} columns): pick fewer with --columns or probe less often",
                    picked.len()
                ),
            ));
        }
        for (s, &i) in series.iter_mut().zip(picked) {
            let y = num(i)?;
            s.points.push((x, y, y, y));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_plot_starts_at_the_first_committed_value_with_short_labels() {
        let d = std::env::temp_dir().join(format!("hwsim-plot-probe-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("p.csv");
        std::fs::write(
            &f,
            "cycle,chip0.lg0.tx.rate,chip0.lg1.tx.rate\n0,0,0\n500,50,40\n1000,50,45\n",
        )
        .unwrap();
        let c = probe_chart(&f, &[], &[]).unwrap();
        assert_eq!(c.series[0].label, "rate (lg0)");
        assert_eq!(
            c.series[1].points,
            [(500.0, 40.0, 40.0, 40.0), (1000.0, 45.0, 45.0, 45.0)]
        );
        let c = probe_chart(&f, &["*lg1*".into()], &["chip0.lg1.tx.rate=LG 1".into()]).unwrap();
        assert_eq!((c.series[0].label.as_str(), c.y_label.as_str()), ("LG 1", "LG 1"));
        // A lone reset row is all there is: drawn.
        std::fs::write(&f, "cycle,a\n0,3\n").unwrap();
        assert_eq!(probe_chart(&f, &[], &[]).unwrap().series[0].points.len(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    fn csv(test: &str, text: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("hwsim-plot-probe-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("p.csv");
        std::fs::write(&f, text).unwrap();
        f
    }

    #[test]
    fn columns_take_trace_globs_and_an_unknown_one_names_the_nearest() {
        let f = csv(
            "globs",
            "cycle,chip0.lg0.tx.rate,chip0.lg1.tx.rate,chip0.rx.backlog\n0,0,0,0\n500,1,2,3\n",
        );
        // A scope selects the columns below it, as --trace does.
        let c = probe_chart(&f, &["chip0.lg1".into()], &[]).unwrap();
        assert_eq!(c.series.len(), 1);
        let e = probe_chart(&f, &["chip0.rx.backlg".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--columns: `chip0.rx.backlg` matches no column of")
                && e.ends_with("(3 columns; nearest: chip0.rx.backlog, chip0.lg0.tx.rate, chip0.lg1.tx.rate)"),
            "{e}"
        );
    }

    #[test]
    fn a_rate_is_the_difference_per_ns_from_the_reset_row() {
        let f = csv("rate", "cycle,a.bytes,a.level\n0,0,5\n500,1000,6\n1000,1500,7\n");
        let p = Pick {
            rate: vec!["*bytes".into()],
            ..Default::default()
        };
        let c = probe_chart_with(&f, &p).unwrap();
        assert_eq!(c.series[0].label, "bytes per ns");
        assert_eq!(c.series[0].points, [(500.0, 2.0, 2.0, 2.0), (1000.0, 1.0, 1.0, 1.0)]);
        // The other column is drawn as it is, without its reset row.
        assert_eq!(c.series[1].points[0], (500.0, 6.0, 6.0, 6.0));
        assert!(c.title.ends_with("(rates per ns)"));
        let p = Pick {
            rate: vec!["*nothing*".into()],
            ..Default::default()
        };
        let e = probe_chart_with(&f, &p).unwrap_err().to_string();
        assert!(e.starts_with("--rate: `*nothing*` selects no column drawn"), "{e}");
        let f = csv("rate1", "cycle,a\n0,3\n");
        let p = Pick {
            rate: vec!["*".into()],
            ..Default::default()
        };
        let e = probe_chart_with(&f, &p).unwrap_err().to_string();
        assert_eq!(e, "--rate: `a` has 1 sample(s): a rate needs two");
    }
}
