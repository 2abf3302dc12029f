//! Line plots for sweeps (a metric against a parameter, mean over seeds with min/max error bars)
//! and probes (columns over time), as SVG or PNG by the file's extension, drawn with `plotters`.
//!
//! The PNG goes through plotters' bitmap backend with ab_glyph and an embedded font (Hack, from
//! the `epaint_default_fonts` crate), so no system font is looked up: a machine without fonts
//! draws the same picture. Files are written through crate::output (staged, never half written).

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::yaml::InputError;

/// One line: points `(x, mean, min, max)`, sorted by x.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text (empty: no legend entry).
    pub label: String,
    /// `(x, y, y_min, y_max)`; error bars where min < max.
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Lines.
    pub series: Vec<Series>,
}

const SIZE: (u32, u32) = (960, 600);
const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped in the crate; a failure would leave text
        // undrawn, not crash.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::HACK_REGULAR);
    });
}

/// Whether a plot should use a log x axis: every x positive and spanning two decades or more.
pub fn wants_log(xs: &[f64]) -> bool {
    let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    lo > 0.0 && hi / lo >= 100.0
}

/// Writes `chart` to `out` (`.svg` or `.png`).
pub fn write(out: &Path, chart: &Chart) -> Result<(), InputError> {
    register_font();
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let fail = |e: String| InputError::new(out, format!("cannot draw: {e}"));
    let bytes = match ext.as_str() {
        "svg" => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
                draw(&root, chart).map_err(fail)?;
                root.present().map_err(|e| fail(e.to_string()))?;
            }
            text.into_bytes()
        }
        "png" => {
            let mut buf = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
                draw(&root, chart).map_err(fail)?;
                root.present().map_err(|e| fail(e.to_string()))?;
            }
            let img = image::RgbImage::from_raw(SIZE.0, SIZE.1, buf).ok_or_else(|| fail("buffer size".into()))?;
            let mut png = std::io::Cursor::new(Vec::new());
            img.write_to(&mut png, image::ImageFormat::Png)
                .map_err(|e| fail(e.to_string()))?;
            png.into_inner()
        }
        _ => {
            return Err(InputError::new(
                out,
                "plot format from the extension: .svg or .png".to_string(),
            ))
        }
    };
    crate::output::write_file(out, &bytes)
}

/// Largest magnitude an axis reaches: values beyond it are drawn at the edge. The axis code
/// (ticks, padding) computes the span `hi - lo` and steps through it; values near ±f64::MAX made
/// that span infinite and the tick loop never ended.
const AXIS_LIMIT: f64 = 1e300;

fn range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let (lo, hi) = (lo.clamp(-AXIS_LIMIT, AXIS_LIMIT), hi.clamp(-AXIS_LIMIT, AXIS_LIMIT));
    if hi - lo < 1e-12 * hi.abs().max(1.0) {
        let pad = hi.abs().max(1.0) * 0.05;
        return (lo - pad, hi + pad);
    }
    (lo, hi)
}

/// The x range of a log axis: positive, finite, at most [`AXIS_LIMIT`].
fn log_range(x0: f64, x1: f64) -> (f64, f64) {
    let lo = x0.clamp(1e-300, AXIS_LIMIT);
    let hi = x1.clamp(lo, AXIS_LIMIT);
    if hi / lo < 1.0 + 1e-9 {
        return (lo / 2.0, hi * 2.0);
    }
    (lo / 1.5, hi * 1.5)
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    // Points with a value that is not a number are left out; the others are held within the
    // axis limit (a point beyond it is drawn at the edge, not a line billions of pixels long).
    let lim = |v: f64| v.clamp(-AXIS_LIMIT, AXIS_LIMIT);
    let series: Vec<Series> = chart
        .series
        .iter()
        .map(|s| Series {
            label: s.label.clone(),
            points: s
                .points
                .iter()
                .filter(|p| [p.0, p.1, p.2, p.3].iter().all(|v| v.is_finite()))
                .map(|p| (lim(p.0), lim(p.1), lim(p.2), lim(p.3)))
                .collect(),
        })
        .collect();
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = range(pts().map(|p| p.0));
    let (y0, y1) = range(pts().flat_map(|p| [p.2, p.3, p.1]));
    let ypad = (y1 - y0) * 0.08;
    let (y0, y1) = (y0 - ypad, y1 + ypad);
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(&chart.title, (FONT, 18))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80);
    let palette = |i: usize| Palette99::pick(i).to_rgba();
    macro_rules! body {
        ($ctx:expr) => {{
            let mut ctx = $ctx;
            ctx.configure_mesh()
                .x_desc(&chart.x_label)
                .y_desc(&chart.y_label)
                .label_style((FONT, 14))
                .axis_desc_style((FONT, 16))
                .draw()
                .map_err(e)?;
            for (i, s) in series.iter().enumerate() {
                let color = palette(i);
                let line = ctx
                    .draw_series(LineSeries::new(
                        s.points.iter().map(|p| (p.0, p.1)),
                        color.stroke_width(2),
                    ))
                    .map_err(e)?;
                if !s.label.is_empty() {
                    line.label(s.label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                }
                // Markers only where they stay apart (a sweep's few points, not a long probe).
                let marks = if s.points.len() <= 60 { s.points.as_slice() } else { &[] };
                ctx.draw_series(marks.iter().map(|p| Circle::new((p.0, p.1), 3, color.filled())))
                    .map_err(e)?;
                ctx.draw_series(
                    s.points
                        .iter()
                        .filter(|p| p.2 < p.3)
                        .map(|p| ErrorBar::new_vertical(p.0, p.2, p.1, p.3, color.stroke_width(1), 8)),
                )
                .map_err(e)?;
            }
            if series.iter().any(|s| !s.label.is_empty()) {
                ctx.configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font((FONT, 14))
                    .position(SeriesLabelPosition::UpperRight)
                    .draw()
                    .map_err(e)?;
            }
        }};
    }
    if chart.log_x {
        let (l0, l1) = log_range(x0, x1);
        body!(builder.build_cartesian_2d((l0..l1).log_scale(), y0..y1).map_err(e)?);
    } else {
        let xpad = (x1 - x0) * 0.03;
        body!(builder
            .build_cartesian_2d((x0 - xpad)..(x1 + xpad), y0..y1)
            .map_err(e)?);
    }
    Ok(())
}

/// Most points a probe plot draws (rows × columns): what plotters is handed stays a few hundred
/// MB at most, and a picture of more points than pixels says nothing more.
pub const MAX_POINTS: u64 = 10_000_000;

/// The chart of a probe CSV's columns (those matching `globs`, default all) over cycles. The CSV
/// is read as RFC 4180 (see crate::csv: a byte-order mark, quoted fields); a value that is not a
/// finite number is refused at its line and column.
pub fn probe_chart(csv: &Path, globs: &[String]) -> Result<Chart, InputError> {
    let mut r = crate::csv::Reader::open(csv)?;
    let header: Vec<String> = r.record()?.unwrap_or_default().into_iter().map(|f| f.text).collect();
    if header.first().map(String::as_str) != Some("cycle") || header.len() < 2 {
        return Err(InputError {
            file: csv.to_path_buf(),
            line: Some(1),
            column: Some(1),
            message: "not a probe CSV (the header is `cycle,<column>…`)".into(),
        });
    }
    let picked: Vec<usize> = (1..header.len())
        .filter(|&i| globs.is_empty() || globs.iter().any(|g| hwsim_hw::glob_match(g, &header[i])))
        .collect();
    if picked.is_empty() {
        return Err(InputError::new(
            Path::new("--columns"),
            format!(
                "{} matches no column of {} ({})",
                globs.join(","),
                csv.display(),
                header[1..].join(", ")
            ),
        ));
    }
    let mut series: Vec<Series> = picked
        .iter()
        .map(|&i| Series {
            label: header[i].clone(),
            points: Vec::new(),
        })
        .collect();
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
        for (s, &i) in series.iter_mut().zip(&picked) {
            let y = num(i)?;
            s.points.push((x, y, y, y));
        }
    }
    Ok(Chart {
        title: format!(
            "{} over time",
            csv.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
        x_label: "cycle (ns)".into(),
        y_label: if picked.len() == 1 {
            header[picked[0]].clone()
        } else {
            "value".into()
        },
        log_x: false,
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_svg_and_png_with_the_embedded_font() {
        let d = std::env::temp_dir().join(format!("hwsim-plot-{}", std::process::id()));
        let chart = Chart {
            title: "goodput vs loss".into(),
            x_label: "loss".into(),
            y_label: "goodput".into(),
            log_x: true,
            series: vec![Series {
                label: "a=1".into(),
                points: vec![(1e-4, 350.0, 349.0, 351.0), (1e-2, 200.0, 190.0, 210.0)],
            }],
        };
        write(&d.join("p.svg"), &chart).unwrap();
        let svg = std::fs::read_to_string(d.join("p.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("goodput vs loss"), "{svg}");
        write(&d.join("p.png"), &chart).unwrap();
        let png = std::fs::read(d.join("p.png")).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // Text was drawn: the caption region holds dark pixels.
        let img = image::load_from_memory(&png).unwrap().to_rgb8();
        let dark = (300..660)
            .flat_map(|x| (10..40).map(move |y| (x, y)))
            .filter(|&(x, y)| img.get_pixel(x, y).0.iter().all(|&c| c < 100))
            .count();
        assert!(dark > 50, "caption text drawn ({dark} dark pixels)");
        assert!(write(&d.join("p.gif"), &chart).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
