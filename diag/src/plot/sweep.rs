//! The transfer-size sweep figure: throughput and service demand against
//! transfer size, in two stacked panels, like the throughput-versus-size figure
//! of a netperf report.

use std::ops::Range;

use plotters::prelude::*;

use super::{
    colour_of, decade_text, distinct_labels, draw_legend, draw_mesh, draw_no_data, draw_series,
    log_range, panel_chart, power_label, rate_label, size_label, two_panels, Area, Series,
};
use crate::error::Result;

/// Renders the sweep figure as a complete SVG document.
///
/// The upper panel plots `throughput` (bytes per second), the lower one
/// `service_demand` (CPU microseconds per KiB moved); both share a log2 x axis
/// of transfer size in bytes and use log10 y axes. Each series is drawn as a
/// line with a circle at every point, one colour per distinct label, and the
/// upper panel's legend lists every label once. Points whose x or y is not
/// within `1e-24..=1e24` (not finite, not positive, or beyond 48 decades) are
/// skipped; a panel with no point left says "no
/// data". Characters XML does not allow become U+FFFD.
pub fn sweep_svg(title: &str, throughput: &[Series], service_demand: &[Series]) -> Result<String> {
    let labels = distinct_labels(throughput.iter().chain(service_demand));
    let x = log_range(
        throughput
            .iter()
            .chain(service_demand)
            .flat_map(|s| s.points.iter().filter(|p| is_plottable(p)).map(|p| p.0)),
        1.0..1048576.0,
    );
    two_panels(title, |upper, lower| {
        let panels = [
            (
                upper,
                Panel {
                    y_desc: "throughput (bytes/s)",
                    series: throughput,
                    y_label: rate_label,
                    x_labels: false,
                    legend: true,
                },
            ),
            (
                lower,
                Panel {
                    y_desc: "service demand (\u{b5}s/KiB)",
                    series: service_demand,
                    y_label: decade_text,
                    x_labels: true,
                    legend: false,
                },
            ),
        ];
        for (area, panel) in &panels {
            draw_panel(area, panel, x.clone(), &labels)?;
        }
        Ok(())
    })
}

/// One of the two stacked panels.
struct Panel<'a> {
    y_desc: &'a str,
    series: &'a [Series],
    /// Label of the y tick at `10^k`.
    y_label: fn(i32) -> String,
    /// Whether this panel labels the shared x axis.
    x_labels: bool,
    /// Whether this panel has the legend.
    legend: bool,
}

/// The values a logarithmic axis takes: beyond 48 decades the axis would be
/// unreadable (and its ticks take long to place).
const LOG_SPAN: std::ops::RangeInclusive<f64> = 1e-24..=1e24;

/// Whether a point can go on log-log axes.
fn is_plottable(p: &(f64, f64)) -> bool {
    LOG_SPAN.contains(&p.0) && LOG_SPAN.contains(&p.1)
}

fn draw_panel(area: &Area<'_>, panel: &Panel<'_>, x: Range<f64>, labels: &[&str]) -> Result<()> {
    let y = log_range(
        panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().filter(|p| is_plottable(p)).map(|p| p.1)),
        1.0..10.0,
    );
    let mut chart = panel_chart(area, panel.x_labels, x.log_scale().base(2.0), y.log_scale())?;
    let x_label = |v: &f64| {
        if panel.x_labels {
            power_label(*v, 2.0, size_label)
        } else {
            String::new()
        }
    };
    let y_label = |v: &f64| power_label(*v, 10.0, panel.y_label);
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(12)
        .y_labels(10)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label);
    draw_mesh(
        &mut mesh,
        panel.y_desc,
        panel
            .x_labels
            .then_some("transfer size (bytes, log2 scale)"),
    )?;

    let mut any = false;
    for series in panel.series {
        let colour = colour_of(labels, &series.label);
        any |= draw_series(&mut chart, series, is_plottable, colour)?;
    }
    if !any {
        draw_no_data(area)?;
    }
    if panel.legend {
        draw_legend(&mut chart, labels, labels)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data_lines, elements, parse, series, texts};
    use super::*;

    #[test]
    fn complete_document_with_escaped_labels() {
        let tp = [
            series("a<b&c", &[(1.0, 1e4), (1024.0, 5e5), (1048576.0, 8e6)]),
            series("\"quoted\" 'label'", &[(64.0, 2e5), (4096.0, 1e6)]),
        ];
        let sd = [series(
            "a<b&c",
            &[(1.0, 900.0), (1024.0, 3.0), (4096.0, 1.0)],
        )];
        let svg = sweep_svg("sweep <GPIB> & more", &tp, &sd).unwrap();
        let doc = parse(&svg);
        let texts = texts(&doc);
        assert!(
            texts.contains(&"sweep <GPIB> & more".to_string()),
            "{texts:?}"
        );
        // Size ticks and rate ticks.
        for label in ["1 B", "1 KiB", "1 MiB", "10 kB/s", "1 MB/s"] {
            assert!(
                texts.iter().any(|t| t == label),
                "missing {label}: {texts:?}"
            );
        }
        for label in [
            "throughput (bytes/s)",
            "service demand (\u{b5}s/KiB)",
            "transfer size (bytes, log2 scale)",
        ] {
            assert!(texts.iter().any(|t| t == label), "missing {label}");
        }
        // One legend entry per distinct label.
        assert_eq!(texts.iter().filter(|t| *t == "a<b&c").count(), 1);
        assert_eq!(
            texts.iter().filter(|t| *t == "\"quoted\" 'label'").count(),
            1
        );
        // The same colour in both panels for the same label: the first label's
        // line in each panel, the second's only in the upper one.
        assert_eq!(data_lines(&doc, "#1F77B4"), 2);
        assert_eq!(data_lines(&doc, "#FF7F0E"), 0); // two points: a line of 2
        assert_eq!(elements(&doc, "circle").count(), 8);
        assert!(!texts.iter().any(|t| t == "no data"));
    }

    #[test]
    fn empty_input_is_a_valid_document() {
        let svg = sweep_svg("", &[], &[]).unwrap();
        let doc = parse(&svg);
        assert_eq!(elements(&doc, "circle").count(), 0);
        assert_eq!(texts(&doc).iter().filter(|t| *t == "no data").count(), 2);
        // Series whose points are all unplottable count as empty too.
        let svg = sweep_svg("t", &[series("x", &[(0.0, 1.0), (1.0, -1.0)])], &[]).unwrap();
        let doc = parse(&svg);
        assert_eq!(elements(&doc, "circle").count(), 0);
        assert_eq!(texts(&doc).iter().filter(|t| *t == "no data").count(), 2);
    }

    #[test]
    fn one_circle_per_finite_positive_point() {
        let tp = [
            series(
                "one",
                &[
                    (1.0, 10.0),
                    (2.0, -1.0),
                    (4.0, f64::NAN),
                    (0.0, 5.0),
                    (f64::INFINITY, 5.0),
                    (8.0, 20.0),
                    (16.0, 0.0),
                    (32.0, 40.0),
                ],
            ),
            series("two", &[(32.0, 1e9)]),
        ];
        let sd = [series(
            "one",
            &[(1.0, 0.5), (2.0, 0.7), (4.0, 0.9), (-4.0, 1.0)],
        )];
        let svg = sweep_svg("count", &tp, &sd).unwrap();
        let doc = parse(&svg);
        assert_eq!(elements(&doc, "circle").count(), 7);
        // A single point draws a marker but no line.
        assert_eq!(data_lines(&doc, "#1F77B4"), 2);
        assert_eq!(data_lines(&doc, "#FF7F0E"), 0);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn single_value_ranges_and_huge_ranges() {
        let svg = sweep_svg("one point", &[series("p", &[(100.0, 100.0)])], &[]).unwrap();
        let doc = parse(&svg);
        assert_eq!(elements(&doc, "circle").count(), 1);
        let svg = sweep_svg(
            "wide",
            &[series(
                "w",
                &[(1e-3, 1e-20), (1e20, 1e20), (1e-3, 1e-200), (1e30, 1e200)],
            )],
            &[series("w", &[(1e-3, 1e-9), (1e20, 1e9)])],
        )
        .unwrap();
        let doc = parse(&svg);
        // The points beyond 1e-24..1e24 are left out.
        assert_eq!(elements(&doc, "circle").count(), 4);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn control_characters_are_replaced() {
        let svg = sweep_svg("bell\u{7}", &[series("nul\u{0}", &[(1.0, 1.0)])], &[]).unwrap();
        let doc = parse(&svg);
        assert!(!svg.contains('\u{0}') && !svg.contains('\u{7}'));
        assert!(texts(&doc).iter().any(|t| t == "nul\u{fffd}"));
    }

    #[test]
    fn size_ticks_stay_readable() {
        // 1 B .. 1 MiB: 21 powers of two, labelled every other one at least.
        let points: Vec<(f64, f64)> = (0..=20).map(|k| (2f64.powi(k), 1e3)).collect();
        let svg = sweep_svg("ticks", &[series("r", &points)], &[series("r", &points)]).unwrap();
        let doc = parse(&svg);
        let sizes: Vec<String> = texts(&doc)
            .into_iter()
            .filter(|t| t.ends_with(" B") || t.ends_with("iB"))
            .collect();
        assert!((6..=12).contains(&sizes.len()), "{sizes:?}");
        assert!(sizes.contains(&"1 B".to_string()) && sizes.contains(&"1 MiB".to_string()));
    }
}
