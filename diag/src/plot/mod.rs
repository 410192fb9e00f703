//! SVG figures drawn with `plotters` (its SVG backend): a transfer-size sweep
//! ([`sweep::sweep_svg`]) and a contention curve ([`contention::contention_svg`]).
//! This module holds what both share: the series type, the colours, the text
//! clean-up, the tick labels and the figure, panel, series and legend set-up.

pub mod contention;
pub mod sweep;

use std::ops::Range;

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{DiagError, Result};

/// One named line of a plot: `(x, y)` points.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Name shown in the legend; series with the same label share a colour
    /// in every panel of a figure.
    pub label: String,
    /// The points; their order does not matter, the line joins them by
    /// increasing x.
    pub points: Vec<(f64, f64)>,
}

/// Line colours (the "tab10" palette), one per distinct label, reused cyclically.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Font family of every text.
const FONT: &str = "sans-serif";

/// Width of a figure (pixels).
const WIDTH: u32 = 900;
/// Height of a figure (pixels).
const HEIGHT: u32 = 760;

/// A drawing area of an SVG figure.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A panel's chart with two axes of `f64` values.
type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A figure of two stacked panels under `title`, as a complete SVG document:
/// `draw` draws the upper and the lower panel.
fn two_panels(
    title: &str,
    draw: impl for<'a> FnOnce(&Area<'a>, &Area<'a>) -> Result<()>,
) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing_error)?;
        let body = root
            .titled(&clean(title), (FONT, 20))
            .map_err(drawing_error)?;
        let (upper, lower) = body.split_vertically(HEIGHT / 2 - 30);
        draw(&upper, &lower)?;
        root.present().map_err(drawing_error)?;
    }
    Ok(svg)
}

/// The chart of a panel on `area` over `x` and `y`, with room below for the x
/// axis' labels when `x_labels`.
fn panel_chart<'a, 'b, X: AsRangedCoord, Y: AsRangedCoord>(
    area: &'a Area<'b>,
    x_labels: bool,
    x: X,
    y: Y,
) -> Result<Chart<'a, 'b, X::CoordDescType, Y::CoordDescType>> {
    ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(30)
        .margin_top(10)
        .x_label_area_size(if x_labels { 50 } else { 10 })
        .y_label_area_size(100)
        .build_cartesian_2d(x, y)
        .map_err(drawing_error)
}

/// Draws the grid and axes `mesh` describes (ticks and their labels set), in the
/// figures' style, with `y_desc` beside the y axis and `x_desc` under the x axis.
fn draw_mesh<X, Y>(
    mesh: &mut MeshStyle<'_, '_, X, Y, SVGBackend<'_>>,
    y_desc: &str,
    x_desc: Option<&str>,
) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    mesh.y_desc(y_desc)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(RGBColor(0xf0, 0xf0, 0xf0));
    if let Some(x_desc) = x_desc {
        mesh.x_desc(x_desc);
    }
    mesh.draw().map_err(drawing_error)
}

/// Draws the points of `series` that `keep` accepts in `colour`: a line joining
/// them by increasing x (when there are two or more) and a circle at each.
/// Returns whether there was any.
fn draw_series<X, Y>(
    chart: &mut Chart<'_, '_, X, Y>,
    series: &Series,
    keep: fn(&(f64, f64)) -> bool,
    colour: RGBColor,
) -> Result<bool>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let mut points: Vec<(f64, f64)> = series.points.iter().copied().filter(keep).collect();
    if points.is_empty() {
        return Ok(false);
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    if points.len() > 1 {
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(drawing_error)?;
    }
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
        .map_err(drawing_error)?;
    Ok(true)
}

/// Writes "no data" in the middle of `area` (a panel with no point to draw).
fn draw_no_data(area: &Area<'_>) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let style = TextStyle::from((FONT, 16).into_font())
        .color(&RGBColor(0x88, 0x88, 0x88))
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style))
        .map_err(drawing_error)
}

/// Draws a legend of `shown` in the panel's upper left corner, each label in its
/// colour among `labels`; nothing when `shown` is empty.
fn draw_legend<'a, 'b: 'a, X, Y>(
    chart: &mut Chart<'a, 'b, X, Y>,
    shown: &[&str],
    labels: &[&str],
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    if shown.is_empty() {
        return Ok(());
    }
    for label in shown {
        let colour = colour_of(labels, label);
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(drawing_error)?
            .label(clean(label))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .draw()
        .map_err(drawing_error)
}

/// The distinct labels of `series`, in order of first appearance.
fn distinct_labels<'a>(series: impl Iterator<Item = &'a Series>) -> Vec<&'a str> {
    let mut labels: Vec<&str> = Vec::new();
    for s in series {
        if !labels.contains(&s.label.as_str()) {
            labels.push(&s.label);
        }
    }
    labels
}

/// The colour of `label` among `labels`.
fn colour_of(labels: &[&str], label: &str) -> RGBColor {
    let index = labels.iter().position(|l| *l == label).unwrap_or(0);
    PALETTE[index % PALETTE.len()]
}

/// `text` with the characters XML 1.0 does not allow replaced by U+FFFD (the SVG
/// backend escapes `<`, `>`, `&` and quotes itself).
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// A drawing error, as the tool reports it.
fn drawing_error(e: impl std::fmt::Display) -> DiagError {
    DiagError::Plot(e.to_string())
}

/// The range from the smallest to the largest of the positive finite `values`,
/// widened by a factor of `1.15` each way (and to a factor of 2 each way around
/// a single value) so that points on the extremes are not cut; `default` when
/// there are none.
fn log_range(values: impl Iterator<Item = f64>, default: Range<f64>) -> Range<f64> {
    let (min, max) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !min.is_finite() {
        return default;
    }
    if max <= min {
        return min / 2.0..max * 2.0;
    }
    let (lo, hi) = (min / 1.15, max * 1.15);
    if lo > 0.0 && hi.is_finite() {
        lo..hi
    } else {
        min..max
    }
}

/// The label of a logarithmic axis' tick at `v`: `label(k)` when `v` is
/// `base^k` for a whole `k`, nothing for the unlabelled ticks between.
fn power_label(v: f64, base: f64, label: fn(i32) -> String) -> String {
    let e = v.log(base);
    let k = e.round();
    if (e - k).abs() < 1e-6 && k.abs() < 1e6 {
        label(k as i32)
    } else {
        String::new()
    }
}

const BINARY_UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
const SI_PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];

/// Label of the size tick `2^k` bytes: "1 B", "32 B", "1 KiB", "1 MiB"...
fn size_label(k: i32) -> String {
    match usize::try_from(k) {
        Ok(k) if k / 10 < BINARY_UNITS.len() => {
            format!("{} {}", 1u64 << (k % 10), BINARY_UNITS[k / 10])
        }
        _ => format!("2^{k} B"),
    }
}

/// Label of the rate tick `10^k` bytes/s: "1 B/s", "10 kB/s", "100 MB/s"...
fn rate_label(k: i32) -> String {
    match usize::try_from(k) {
        Ok(k) if k / 3 < SI_PREFIXES.len() => {
            format!("{} {}B/s", 10u64.pow((k % 3) as u32), SI_PREFIXES[k / 3])
        }
        _ => format!("{} B/s", decade_text(k)),
    }
}

/// `10^k` written out: "0.01", "1", "1000"; "1e-9", "1e12" beyond.
fn decade_text(k: i32) -> String {
    match k {
        0..=6 => format!("1{}", "0".repeat(k as usize)),
        -6..=-1 => format!("0.{}1", "0".repeat((-k - 1) as usize)),
        _ => format!("1e{k}"),
    }
}

/// A positive number to three significant digits, trailing zeros removed.
fn sig3(v: f64) -> String {
    if !(1e-3..1e15).contains(&v) {
        return format!("{v:.2e}");
    }
    let decimals = (2 - v.log10().floor() as i32).clamp(0, 5) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A rate in decimal units: "12.3 MB/s"; "0 B/s" for zero (a linear axis' origin).
fn rate_human(v: f64) -> String {
    if v == 0.0 {
        return "0 B/s".into();
    }
    let index = ((v.abs().log10() / 3.0).floor().max(0.0) as usize).min(SI_PREFIXES.len() - 1);
    let scaled = v / 1000f64.powi(index as i32);
    let sign = if scaled < 0.0 { "-" } else { "" };
    format!("{sign}{} {}B/s", sig3(scaled.abs()), SI_PREFIXES[index])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Parses `svg` with a real XML parser and returns the document, failing the
    /// test if it is not well-formed or its root is not an `svg` element.
    pub(crate) fn parse(svg: &str) -> roxmltree::Document<'_> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        doc
    }

    /// The trimmed texts of every `<text>` element.
    pub(crate) fn texts(doc: &roxmltree::Document<'_>) -> Vec<String> {
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    /// A series named `label` of `points`.
    pub(crate) fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.to_string(),
            points: points.to_vec(),
        }
    }

    /// The elements named `name`.
    pub(crate) fn elements<'a>(
        doc: &'a roxmltree::Document<'a>,
        name: &'a str,
    ) -> impl Iterator<Item = roxmltree::Node<'a, 'a>> + 'a {
        doc.descendants().filter(move |n| n.has_tag_name(name))
    }

    /// Lines of data (polylines of more than two points; a legend's sample line
    /// has two) drawn in `colour` (`#rrggbb`, as the backend writes it).
    pub(crate) fn data_lines(doc: &roxmltree::Document<'_>, colour: &str) -> usize {
        elements(doc, "polyline")
            .filter(|n| n.attribute("stroke") == Some(colour))
            .filter(|n| {
                n.attribute("points")
                    .unwrap_or("")
                    .split_whitespace()
                    .count()
                    > 2
            })
            .count()
    }

    #[test]
    fn tick_labels() {
        assert_eq!(size_label(0), "1 B");
        assert_eq!(size_label(5), "32 B");
        assert_eq!(size_label(10), "1 KiB");
        assert_eq!(size_label(15), "32 KiB");
        assert_eq!(size_label(20), "1 MiB");
        assert_eq!(size_label(-1), "2^-1 B");
        assert_eq!(size_label(70), "2^70 B");
        assert_eq!(rate_label(0), "1 B/s");
        assert_eq!(rate_label(4), "10 kB/s");
        assert_eq!(rate_label(8), "100 MB/s");
        assert_eq!(rate_label(-2), "0.01 B/s");
        assert_eq!(decade_text(3), "1000");
        assert_eq!(decade_text(-1), "0.1");
        assert_eq!(decade_text(-3), "0.001");
        assert_eq!(decade_text(9), "1e9");
        assert_eq!(decade_text(-9), "1e-9");
        assert_eq!(power_label(1024.0, 2.0, size_label), "1 KiB");
        assert_eq!(power_label(1000.0, 2.0, size_label), "");
        assert_eq!(power_label(1e5, 10.0, rate_label), "100 kB/s");
        assert_eq!(power_label(2e5, 10.0, rate_label), "");
    }

    #[test]
    fn human_values() {
        assert_eq!(rate_human(12_345_678.0), "12.3 MB/s");
        assert_eq!(rate_human(999.0), "999 B/s");
        assert_eq!(rate_human(0.0), "0 B/s");
        assert_eq!(rate_human(250_000.0), "250 kB/s");
        assert_eq!(sig3(123456.0), "123456");
        assert_eq!(sig3(0.5), "0.5");
    }

    #[test]
    fn ranges() {
        let r = log_range([10.0, 1000.0, -1.0, f64::NAN].into_iter(), 1.0..2.0);
        assert!(r.start < 10.0 && r.start > 8.0 && r.end > 1000.0 && r.end < 1200.0);
        assert_eq!(log_range([5.0].into_iter(), 1.0..2.0), 2.5..10.0);
        assert_eq!(log_range(std::iter::empty(), 1.0..2.0), 1.0..2.0);
        assert_eq!(log_range([0.0, -3.0].into_iter(), 1.0..2.0), 1.0..2.0);
    }

    #[test]
    fn control_characters_become_replacement_characters() {
        assert_eq!(
            clean("bell\u{7} nul\u{0} tab\t"),
            "bell\u{fffd} nul\u{fffd} tab\t"
        );
        assert_eq!(clean("a<b&c"), "a<b&c");
    }
}
