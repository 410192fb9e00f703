//! The contention figure: throughput (aggregate and per device) and utilisation
//! (host CPU, buses) against the number of devices active at once, in two
//! stacked panels, with the knee marked in both.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    clean, colour_of, distinct_labels, draw_legend, draw_mesh, draw_no_data, draw_series,
    drawing_error, panel_chart, rate_human, two_panels, Area, Series, FONT,
};
use crate::error::Result;

/// Colour of the knee's mark.
const KNEE_COLOUR: RGBColor = RGBColor(0, 0, 0);

/// Where the knee is drawn, and what is written beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct KneeMark {
    /// Devices active at the knee (the x of the mark).
    pub devices: f64,
    /// The text beside the mark ("knee: 7 devices, the host CPU saturates").
    pub text: String,
}

/// Renders the contention figure as a complete SVG document.
///
/// The upper panel plots `rates` (bytes per second, linear from 0), the lower
/// one `utilisation` (percent, 0 to 100); both share a linear x axis of devices
/// active, labelled with whole numbers. Each series is a line with a circle at
/// every point, one colour per distinct label across both panels, and each
/// panel has a legend of its series. `knee`, when given, is a dashed vertical
/// line in both panels with its text in the upper one. Points that are not
/// finite are skipped; a panel with no point left says "no data". Characters
/// XML does not allow become U+FFFD.
pub fn contention_svg(
    title: &str,
    rates: &[Series],
    utilisation: &[Series],
    knee: Option<&KneeMark>,
) -> Result<String> {
    let labels = distinct_labels(rates.iter().chain(utilisation));
    let n = rates
        .iter()
        .chain(utilisation)
        .flat_map(|s| s.points.iter().filter(|p| finite(p)).map(|p| p.0))
        .chain(knee.map(|k| k.devices).filter(|d| d.is_finite()))
        .fold(1.0, f64::max);
    let x = 0.5..n + 0.5;
    let top_rate = rates
        .iter()
        .flat_map(|s| s.points.iter().filter(|p| finite(p)).map(|p| p.1))
        .fold(0.0, f64::max);
    let top_rate = if top_rate > 0.0 { top_rate * 1.1 } else { 1.0 };
    two_panels(title, |upper, lower| {
        let panels = [
            (
                upper,
                Panel {
                    y: 0.0..top_rate,
                    y_desc: "throughput (bytes/s)",
                    y_label: rate_human,
                    series: rates,
                    x_labels: false,
                    knee_text: true,
                },
            ),
            (
                lower,
                Panel {
                    y: 0.0..105.0,
                    y_desc: "utilisation (%)",
                    y_label: |v| format!("{v:.0}"),
                    series: utilisation,
                    x_labels: true,
                    knee_text: false,
                },
            ),
        ];
        for (area, panel) in &panels {
            draw_panel(area, panel, x.clone(), &labels, knee)?;
        }
        Ok(())
    })
}

/// One of the two stacked panels.
struct Panel<'a> {
    y: std::ops::Range<f64>,
    y_desc: &'a str,
    y_label: fn(f64) -> String,
    series: &'a [Series],
    /// Whether this panel labels the shared x axis.
    x_labels: bool,
    /// Whether the knee's text goes in this panel.
    knee_text: bool,
}

fn finite(p: &(f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite()
}

/// A whole number of devices, or nothing for a tick between two.
fn devices_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 && v >= 0.0 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

fn draw_panel(
    area: &Area<'_>,
    panel: &Panel<'_>,
    x: std::ops::Range<f64>,
    labels: &[&str],
    knee: Option<&KneeMark>,
) -> Result<()> {
    let mut chart = panel_chart(area, panel.x_labels, x.clone(), panel.y.clone())?;
    let x_label = |v: &f64| {
        if panel.x_labels {
            devices_label(*v)
        } else {
            String::new()
        }
    };
    let y_label = |v: &f64| (panel.y_label)(*v);
    let ticks = ((x.end - x.start).round() as usize).clamp(1, 16);
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(ticks)
        .y_labels(8)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label);
    draw_mesh(
        &mut mesh,
        panel.y_desc,
        panel.x_labels.then_some("devices active at once"),
    )?;

    let mut drawn: Vec<&str> = Vec::new();
    for series in panel.series {
        let colour = colour_of(labels, &series.label);
        if draw_series(&mut chart, series, finite, colour)?
            && !drawn.contains(&series.label.as_str())
        {
            drawn.push(&series.label);
        }
    }
    if drawn.is_empty() {
        draw_no_data(area)?;
    }
    if let Some(k) = knee.filter(|k| k.devices.is_finite()) {
        draw_knee(&mut chart, panel, k, &x)?;
    }
    draw_legend(&mut chart, &drawn, labels)
}

/// The knee: a dashed vertical line across the panel and, in the panel that
/// says so, its text beside the line's top (on the side with more room).
fn draw_knee(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    panel: &Panel<'_>,
    knee: &KneeMark,
    x: &std::ops::Range<f64>,
) -> Result<()> {
    let style = KNEE_COLOUR.stroke_width(2);
    chart
        .draw_series(DashedLineSeries::new(
            [(knee.devices, panel.y.start), (knee.devices, panel.y.end)],
            8,
            5,
            style,
        ))
        .map_err(drawing_error)?;
    if panel.knee_text {
        let right_half = knee.devices > (x.start + x.end) / 2.0;
        let (dx, h) = if right_half {
            (-0.08, HPos::Right)
        } else {
            (0.08, HPos::Left)
        };
        let at = (
            knee.devices + dx * (x.end - x.start) / 10.0,
            panel.y.end * 0.97,
        );
        let text_style = TextStyle::from((FONT, 14).into_font())
            .color(&KNEE_COLOUR)
            .pos(Pos::new(h, VPos::Top));
        chart
            .draw_series(std::iter::once(Text::new(
                clean(&knee.text),
                at,
                text_style,
            )))
            .map_err(drawing_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data_lines, elements, parse, series, texts};
    use super::*;

    fn curve() -> (Vec<Series>, Vec<Series>) {
        let aggregate: Vec<(f64, f64)> = (1..=10)
            .map(|n| (f64::from(n), 40_000.0 * f64::from(n.min(7))))
            .collect();
        let per: Vec<(f64, f64)> = aggregate.iter().map(|&(n, a)| (n, a / n)).collect();
        let cpu: Vec<(f64, f64)> = (1..=10)
            .map(|n| (f64::from(n), (14.0 * f64::from(n)).min(100.0)))
            .collect();
        let bus: Vec<(f64, f64)> = (1..=10)
            .map(|n| (f64::from(n), 3.0 * f64::from(n)))
            .collect();
        (
            vec![series("aggregate", &aggregate), series("per device", &per)],
            vec![series("host CPU", &cpu), series("bus of dz0", &bus)],
        )
    }

    #[test]
    fn rates_utilisation_and_the_knee() {
        let (rates, util) = curve();
        let knee = KneeMark {
            devices: 8.0,
            text: "knee: 8 devices, the host CPU saturates".into(),
        };
        let svg = contention_svg("contention <vax>", &rates, &util, Some(&knee)).unwrap();
        let doc = parse(&svg);
        let texts = texts(&doc);
        for label in [
            "contention <vax>",
            "throughput (bytes/s)",
            "utilisation (%)",
            "devices active at once",
            "aggregate",
            "per device",
            "host CPU",
            "bus of dz0",
            "knee: 8 devices, the host CPU saturates",
            "1",
            "10",
            "0 B/s",
            "100",
        ] {
            assert!(
                texts.iter().any(|t| t == label),
                "missing {label}: {texts:?}"
            );
        }
        // A rate tick in kB/s, whole device counts only on the x axis.
        assert!(texts.iter().any(|t| t.ends_with(" kB/s")), "{texts:?}");
        assert!(!texts.iter().any(|t| t.contains('.') && !t.contains("B/s")));
        // Four lines of ten points, in four colours; a circle per point.
        for colour in ["#1F77B4", "#FF7F0E", "#2CA02C", "#D62728"] {
            assert_eq!(data_lines(&doc, colour), 1, "{colour}");
        }
        assert_eq!(elements(&doc, "circle").count(), 40);
        // The knee: dashes in both panels, in its colour (black).
        let dashes = elements(&doc, "polyline")
            .filter(|n| n.attribute("stroke") == Some("#000000"))
            .count();
        assert!(dashes > 4, "{dashes}");
        assert!(!texts.iter().any(|t| t == "no data"));
    }

    #[test]
    fn no_knee_no_mark_and_empty_panels() {
        let (rates, _) = curve();
        let svg = contention_svg("t", &rates, &[], None).unwrap();
        let doc = parse(&svg);
        let texts = texts(&doc);
        assert!(!texts.iter().any(|t| t.starts_with("knee")));
        assert_eq!(texts.iter().filter(|t| *t == "no data").count(), 1);
        let svg = contention_svg("", &[], &[], None).unwrap();
        let doc = parse(&svg);
        assert_eq!(
            super::super::tests::texts(&doc)
                .iter()
                .filter(|t| *t == "no data")
                .count(),
            2
        );
        assert_eq!(elements(&doc, "circle").count(), 0);
    }

    #[test]
    fn non_finite_points_are_skipped() {
        let rates = [series(
            "aggregate",
            &[
                (1.0, 10.0),
                (2.0, f64::NAN),
                (f64::INFINITY, 3.0),
                (3.0, 30.0),
            ],
        )];
        let svg = contention_svg("nan", &rates, &[], None).unwrap();
        let doc = parse(&svg);
        assert_eq!(elements(&doc, "circle").count(), 2);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn device_ticks() {
        assert_eq!(devices_label(3.0), "3");
        assert_eq!(devices_label(2.5), "");
        assert_eq!(devices_label(-1.0), "");
    }
}
