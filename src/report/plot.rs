//! Line plots for sweeps (a metric against a parameter, mean over seeds with a min/max band and
//! error bars) and probes (columns over time), as SVG or PNG by the file's extension, drawn with
//! `plotters`.
//!
//! The legend is beside the plot, never over the curves, and names at most [`LEGEND_MAX`]
//! series: with more, those with the highest last value (ties by label), in that order, and a
//! note under it names as many of the others as fit ([`legend`] tells a command which, to print
//! them all). Log axes (`log_x`, `log_y`) refuse a value that is not positive, naming the series
//! and the point ([`check_log`]).
//!
//! The PNG goes through plotters' bitmap backend with ab_glyph and an embedded font (Hack, from
//! the `epaint_default_fonts` crate), so no system font is looked up: a machine without fonts
//! draws the same picture. Files are written through crate::report::output (staged, never half written).

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::input::yaml::InputError;

pub mod options;
mod probe;

pub use probe::{probe_chart, probe_chart_with, Pick, MAX_POINTS};

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
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Lines.
    pub series: Vec<Series>,
}

const SIZE: (u32, u32) = (960, 600);
/// Width of the legend beside the plot, pixels.
const LEGEND_W: u32 = 250;
/// Most series the legend names.
pub const LEGEND_MAX: usize = 12;
/// Longest legend label, characters (the embedded font is monospaced: 13 px ≈ 7.8 px a
/// character).
const LEGEND_CHARS: usize = 25;
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

/// The series the legend names (indices, in legend order), and those it leaves to its note:
/// every labelled series when there are at most [`LEGEND_MAX`], in chart order; else the
/// [`LEGEND_MAX`] whose last point is highest (ties by label), highest first.
pub fn legend(chart: &Chart) -> (Vec<usize>, Vec<usize>) {
    let mut named: Vec<usize> = (0..chart.series.len())
        .filter(|&i| !chart.series[i].label.is_empty())
        .collect();
    if named.len() <= LEGEND_MAX {
        return (named, Vec::new());
    }
    let last = |i: usize| chart.series[i].points.last().map_or(f64::NEG_INFINITY, |p| p.1);
    named.sort_by(|&a, &b| {
        last(b)
            .total_cmp(&last(a))
            .then_with(|| chart.series[a].label.cmp(&chart.series[b].label))
    });
    let rest = named.split_off(LEGEND_MAX);
    (named, rest)
}

/// Refuses a log axis with a value that is not positive: the message names the axis option,
/// the series and the point.
pub fn check_log(chart: &Chart) -> Result<(), InputError> {
    for s in &chart.series {
        let name = if s.label.is_empty() {
            "the line".to_string()
        } else {
            format!("series `{}`", s.label)
        };
        for p in &s.points {
            let bad = |opt: &str, what: String| {
                InputError::new(
                    Path::new(opt),
                    format!("{name} has {what}: a log axis needs values above 0"),
                )
            };
            if chart.log_x && p.0 <= 0.0 {
                return Err(bad("--logx", format!("x = {}", p.0)));
            }
            if chart.log_y {
                if let Some(y) = [p.1, p.2, p.3].into_iter().find(|y| *y <= 0.0) {
                    return Err(bad("--logy", format!("y = {y} at x = {}", p.0)));
                }
            }
        }
    }
    // A log axis over more decades than a float's range holds (its end over its start
    // overflows) never finishes placing its ticks: refused, with the span.
    let span = |v: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = v.fold((f64::MAX, 0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        (lo <= hi).then_some((lo, hi))
    };
    let pts = || chart.series.iter().flat_map(|s| s.points.iter());
    for (on, opt, range) in [
        (chart.log_x, "--logx", span(&mut pts().map(|p| p.0))),
        (chart.log_y, "--logy", span(&mut pts().flat_map(|p| [p.1, p.2, p.3]))),
    ] {
        if let (true, Some((lo, hi))) = (on, range) {
            let (a, b) = log_range(lo, hi);
            // (A NaN ratio is refused too.)
            let drawable = b / a <= MAX_LOG_RATIO;
            if !drawable {
                return Err(InputError::new(
                    Path::new(opt),
                    format!(
                        "the values span {lo:e} to {hi:e}: a log axis draws at most {} decades, its margins included",
                        MAX_LOG_RATIO.log10()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The largest end-to-start ratio of a log axis (its range, padded): 300 decades (plotters
/// placed the ticks of 1e-150..1e150 and never finished those of 1e-155..1e155).
const MAX_LOG_RATIO: f64 = 1e300;

/// Writes `chart` to `out` (`.svg` or `.png`) at the default size.
pub fn write(out: &Path, chart: &Chart) -> Result<(), InputError> {
    write_sized(out, chart, SIZE)
}

/// Writes `chart` to `out` (`.svg` or `.png`), `size` pixels (width, height).
pub fn write_sized(out: &Path, chart: &Chart, size: (u32, u32)) -> Result<(), InputError> {
    let size = (
        size.0.clamp(options::SIZE_MIN, options::SIZE_MAX),
        size.1.clamp(options::SIZE_MIN, options::SIZE_MAX),
    );
    check_log(chart)?;
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
                let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
                draw(&root, chart, size).map_err(fail)?;
                root.present().map_err(|e| fail(e.to_string()))?;
            }
            text.into_bytes()
        }
        "png" => {
            let mut buf = vec![0u8; size.0 as usize * size.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut buf, size).into_drawing_area();
                draw(&root, chart, size).map_err(fail)?;
                root.present().map_err(|e| fail(e.to_string()))?;
            }
            let img = image::RgbImage::from_raw(size.0, size.1, buf).ok_or_else(|| fail("buffer size".into()))?;
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
    crate::report::output::write_file(out, &bytes)
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

/// The range of a log axis: positive, finite, at most [`AXIS_LIMIT`].
fn log_range(x0: f64, x1: f64) -> (f64, f64) {
    let lo = x0.clamp(1e-300, AXIS_LIMIT);
    let hi = x1.clamp(lo, AXIS_LIMIT);
    if hi / lo < 1.0 + 1e-9 {
        return (lo / 2.0, hi * 2.0);
    }
    (lo / 1.5, hi * 1.5)
}

/// The width of the legend beside a plot of `size`: [`LEGEND_W`] at the default size, a
/// quarter of a wider figure, two fifths of a narrow one.
fn legend_w(size: (u32, u32)) -> u32 {
    LEGEND_W.min(size.0 * 2 / 5).max(size.0 / 4)
}

/// The labels of `which` series fitted to `max` characters (options::fit_labels: the parts
/// they share go first).
fn fitted(chart: &Chart, which: &[usize], max: usize) -> Vec<String> {
    let labels: Vec<String> = which.iter().map(|&i| chart.series[i].label.clone()).collect();
    options::fit_labels(&labels, max)
}

/// The legend beside the plot: a line sample and the label of each named series, then a note
/// naming the others, as many as fit.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, chart: &Chart, size: (u32, u32)) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (shown, rest) = legend(chart);
    let font = (FONT, 13).into_font();
    // The monospaced font: 13 px ≈ 7.8 px a character, from x = 40.
    let chars = LEGEND_CHARS * legend_w(size) as usize / LEGEND_W as usize;
    let mut y = 40;
    for (&i, label) in shown.iter().zip(fitted(chart, &shown, chars)) {
        let color = palette(i);
        area.draw(&PathElement::new(vec![(8, y), (32, y)], color.stroke_width(2)))
            .map_err(e)?;
        area.draw(&Text::new(label, (40, y - 7), font.clone())).map_err(e)?;
        y += 20;
    }
    if rest.is_empty() {
        return Ok(());
    }
    let small = (FONT, 12).into_font();
    area.draw(&Text::new(
        format!("+ {} more, not in the legend:", rest.len()),
        (8, y),
        small.clone(),
    ))
    .map_err(e)?;
    y += 16;
    let room = ((size.1 as i32 - 20 - y) / 15).max(0) as usize;
    for (k, label) in fitted(chart, &rest, chars + 4).into_iter().enumerate() {
        if k + 1 == room && rest.len() > room {
            area.draw(&Text::new(format!("… {} more", rest.len() - k), (8, y), small.clone()))
                .map_err(e)?;
            break;
        }
        area.draw(&Text::new(label, (8, y), small.clone())).map_err(e)?;
        y += 15;
    }
    Ok(())
}

/// Twelve colours that stay apart (Tableau's, and black), then plotters' palette.
const COLOURS: [(u8, u8, u8); 12] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (0, 0, 0),
    (174, 199, 232),
];

fn palette(i: usize) -> RGBAColor {
    match COLOURS.get(i) {
        Some(&(r, g, b)) => RGBColor(r, g, b).to_rgba(),
        None => Palette99::pick(i).to_rgba(),
    }
}

/// A tick label: integers without `.0`, large or tiny magnitudes in exponent form (`1.8e7`).
pub fn tick(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        let t = format!("{v:.2e}");
        // 1.80e7 → 1.8e7, 2.00e-4 → 2e-4
        let (m, x) = t.split_once('e').unwrap_or((&t, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}e{x}");
    }
    let t = format!("{v:.6}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".into()
    } else {
        t.to_string()
    }
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart, size: (u32, u32)) -> Result<(), String>
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
    let root = root.titled(&chart.title, (FONT, 18)).map_err(e)?;
    let plot_area = if series.iter().any(|s| !s.label.is_empty()) {
        let (plot_area, legend_area) = root.split_horizontally(size.0 - legend_w(size));
        draw_legend(&legend_area, chart, size)?;
        plot_area
    } else {
        root
    };
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = range(pts().map(|p| p.0));
    let (y0, y1) = range(pts().flat_map(|p| [p.2, p.3, p.1]));
    let ypad = (y1 - y0) * 0.08;
    let mut builder = ChartBuilder::on(&plot_area);
    builder.margin(16).x_label_area_size(48).y_label_area_size(80);
    macro_rules! body {
        ($ctx:expr) => {{
            let mut ctx = $ctx;
            ctx.configure_mesh()
                .x_desc(&chart.x_label)
                .y_desc(&chart.y_label)
                .label_style((FONT, 14))
                .axis_desc_style((FONT, 16))
                .x_label_formatter(&|v| tick(*v))
                .y_label_formatter(&|v| tick(*v))
                .draw()
                .map_err(e)?;
            for (i, s) in series.iter().enumerate() {
                let color = palette(i);
                // The min/max band over the seeds, under the line.
                if s.points.len() > 1 && s.points.iter().any(|p| p.2 < p.3) {
                    let band: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .map(|p| (p.0, p.3))
                        .chain(s.points.iter().rev().map(|p| (p.0, p.2)))
                        .collect();
                    ctx.draw_series(std::iter::once(Polygon::new(band, color.mix(0.15).filled())))
                        .map_err(e)?;
                }
                ctx.draw_series(LineSeries::new(
                    s.points.iter().map(|p| (p.0, p.1)),
                    color.stroke_width(2),
                ))
                .map_err(e)?;
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
        }};
    }
    let xpad = (x1 - x0) * 0.03;
    let (lx0, lx1) = log_range(x0, x1);
    let (ly0, ly1) = log_range(y0, y1);
    let (xr, yr) = ((x0 - xpad)..(x1 + xpad), (y0 - ypad)..(y1 + ypad));
    match (chart.log_x, chart.log_y) {
        (false, false) => body!(builder.build_cartesian_2d(xr, yr).map_err(e)?),
        (true, false) => body!(builder.build_cartesian_2d((lx0..lx1).log_scale(), yr).map_err(e)?),
        (false, true) => body!(builder.build_cartesian_2d(xr, (ly0..ly1).log_scale()).map_err(e)?),
        (true, true) => body!(builder
            .build_cartesian_2d((lx0..lx1).log_scale(), (ly0..ly1).log_scale())
            .map_err(e)?),
    }
    Ok(())
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
            log_y: false,
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

    fn lines(n: usize) -> Chart {
        Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: false,
            log_y: false,
            series: (0..n)
                .map(|i| Series {
                    label: format!("s{i}"),
                    points: vec![(1.0, 1.0, 1.0, 1.0), (2.0, i as f64, i as f64, i as f64)],
                })
                .collect(),
        }
    }

    /// The x of the SVG `<text>` element whose content is `label`.
    fn text_x(svg: &str, label: &str) -> f64 {
        let end = svg
            .find(&format!(">\n{label}\n</text>"))
            .unwrap_or_else(|| panic!("`{label}` in the SVG"));
        let start = svg[..end].rfind("<text").unwrap();
        let x = svg[start..end].split("x=\"").nth(1).unwrap();
        x[..x.find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn the_legend_sits_beside_the_plot_and_names_the_top_twelve_by_last_value() {
        let (shown, rest) = legend(&lines(5));
        assert_eq!((shown, rest), (vec![0, 1, 2, 3, 4], vec![]), "few: all, in order");
        let chart = lines(15);
        let (shown, rest) = legend(&chart);
        assert_eq!(shown, (3..15).rev().collect::<Vec<_>>());
        assert_eq!(rest, [2, 1, 0]);
        let d = std::env::temp_dir().join(format!("hwsim-plot-legend-{}", std::process::id()));
        write(&d.join("l.svg"), &chart).unwrap();
        let svg = std::fs::read_to_string(d.join("l.svg")).unwrap();
        let right = (SIZE.0 - LEGEND_W) as f64;
        for l in ["s14", "s3", "s0", "+ 3 more, not in the legend:"] {
            assert!(text_x(&svg, l) >= right, "`{l}` beside the plot, not over it");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A log axis over more decades than its end-to-start ratio holds is refused at once (it
    /// hung: plotters never finished placing the ticks of 1e-160..1e160), one within is drawn.
    #[test]
    fn a_log_axis_over_too_many_decades_is_refused_not_hung() {
        let ten = |e: i32| format!("1e{e}").parse::<f64>().unwrap();
        let chart = |e: i32| Chart {
            title: String::new(),
            x_label: "cycle".into(),
            y_label: "v".into(),
            log_x: false,
            log_y: true,
            series: vec![Series {
                label: "a".into(),
                points: vec![(1.0, ten(-e), ten(-e), ten(-e)), (2.0, ten(e), ten(e), ten(e))],
            }],
        };
        assert_eq!(
            check_log(&chart(160)).unwrap_err().to_string(),
            "--logy: the values span 1e-160 to 1e160: a log axis draws at most 300 decades, its margins included"
        );
        let d = std::env::temp_dir().join(format!("hwsim-plot-decades-{}", std::process::id()));
        write(&d.join("ok.svg"), &chart(140)).unwrap();
        assert!(d.join("ok.svg").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn log_axes_refuse_values_not_above_zero_naming_the_series() {
        let mut c = lines(3);
        c.log_y = true;
        let e = check_log(&c).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--logy: series `s0` has y = 0 at x = 2: a log axis needs values above 0"
        );
        c.series.remove(0);
        assert!(check_log(&c).is_ok());
        c.log_x = true;
        c.series[0].points[0].0 = -1.0;
        assert!(check_log(&c)
            .unwrap_err()
            .to_string()
            .starts_with("--logx: series `s1` has x = -1"));
        let d = std::env::temp_dir().join(format!("hwsim-plot-log-{}", std::process::id()));
        assert!(write(&d.join("x.svg"), &c).is_err());
        assert!(!d.join("x.svg").exists(), "nothing written");
    }

    #[test]
    fn tick_labels_read_as_numbers() {
        assert_eq!(tick(18_000_000.0), "1.8e7");
        assert_eq!(tick(2500.0), "2500");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(0.0001), "1e-4");
        assert_eq!(tick(-0.0), "0");
        assert_eq!(tick(350.0), "350");
    }
}
