//! Draws a transfer-size sweep as a standalone SVG document, without
//! dependencies: throughput and service demand against transfer size, in two
//! stacked panels, like the throughput-versus-size figure of a netperf report.

/// One named line of the plot: `(x, y)` points, x being the transfer size in
/// bytes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Name shown in the legend; series with the same label share a colour
    /// in both panels.
    pub label: String,
    /// The points; their order does not matter, the line joins them by
    /// increasing x.
    pub points: Vec<(f64, f64)>,
}

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 760.0;
const PLOT_LEFT: f64 = 100.0;
const PLOT_RIGHT: f64 = 660.0;
const LEGEND_X: f64 = 690.0;
const UPPER_TOP: f64 = 60.0;
const UPPER_BOTTOM: f64 = 360.0;
const LOWER_TOP: f64 = 390.0;
const LOWER_BOTTOM: f64 = 690.0;

/// Line colours, one per distinct label, reused cyclically.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Renders the sweep figure as a complete SVG document.
///
/// The upper panel plots `throughput` (bytes per second), the lower one
/// `service_demand` (CPU microseconds per KiB moved); both share a log2 x
/// axis of transfer size in bytes and use log10 y axes. Each series is drawn
/// as a line with a circle at every point, with one colour per distinct
/// label, and a legend lists the labels. Points whose x or y is not finite
/// or not positive are skipped; a panel with no point left says "no data".
/// All text is escaped for XML. The result starts with `<svg` and ends with
/// `</svg>`.
pub fn sweep_svg(title: &str, throughput: &[Series], service_demand: &[Series]) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for s in throughput.iter().chain(service_demand) {
        if !labels.contains(&s.label.as_str()) {
            labels.push(&s.label);
        }
    }
    let colour_of = |label: &str| -> &'static str {
        let index = labels.iter().position(|l| *l == label).unwrap_or(0);
        PALETTE[index % PALETTE.len()]
    };

    let x_axis = LogAxis::fit(
        throughput
            .iter()
            .chain(service_demand)
            .flat_map(|s| s.points.iter().filter(|p| is_plottable(p)).map(|p| p.0)),
        f64::log2,
        (0.0, 20.0),
        &[1, 2, 5, 10, 20, 50, 100],
    );

    let mut out = String::new();
    out.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{w}\" \
         height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n",
        w = WIDTH,
        h = HEIGHT
    ));
    out.push_str(&format!("<title>{}</title>\n", escape_xml(title)));
    out.push_str("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    out.push_str(&format!(
        "<text x=\"{:.1}\" y=\"32\" text-anchor=\"middle\" font-size=\"16\" \
         font-weight=\"bold\">{}</text>\n",
        (PLOT_LEFT + PLOT_RIGHT) / 2.0,
        escape_xml(title)
    ));

    let panels = [
        Panel {
            top: UPPER_TOP,
            bottom: UPPER_BOTTOM,
            y_title: "throughput (bytes/s)",
            series: throughput,
            y_tick_label: rate_label,
            y_value: rate_human,
            x_tick_labels: false,
        },
        Panel {
            top: LOWER_TOP,
            bottom: LOWER_BOTTOM,
            y_title: "service demand (\u{b5}s/KiB)",
            series: service_demand,
            y_tick_label: decade_text,
            y_value: demand_human,
            x_tick_labels: true,
        },
    ];
    for panel in &panels {
        draw_panel(&mut out, panel, &x_axis, &colour_of);
    }

    out.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">transfer size (bytes, log2 scale)</text>\n",
        (PLOT_LEFT + PLOT_RIGHT) / 2.0,
        LOWER_BOTTOM + 50.0
    ));

    for (i, label) in labels.iter().enumerate() {
        let y = UPPER_TOP + 10.0 + 20.0 * i as f64;
        let colour = colour_of(label);
        out.push_str(&format!(
            "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\" \
             stroke-width=\"2\"/>\n<rect x=\"{rx:.1}\" y=\"{ry:.1}\" width=\"6\" height=\"6\" \
             fill=\"{colour}\"/>\n<text x=\"{tx:.1}\" y=\"{ty:.1}\">{text}</text>\n",
            x0 = LEGEND_X,
            x1 = LEGEND_X + 24.0,
            rx = LEGEND_X + 9.0,
            ry = y - 3.0,
            tx = LEGEND_X + 32.0,
            ty = y + 4.0,
            text = escape_xml(label),
        ));
    }

    out.push_str("</svg>");
    out
}

/// One of the two stacked panels.
struct Panel<'a> {
    top: f64,
    bottom: f64,
    y_title: &'a str,
    series: &'a [Series],
    /// Label of the y tick at `10^k`.
    y_tick_label: fn(i32) -> String,
    /// A y value for a point's tooltip.
    y_value: fn(f64) -> String,
    x_tick_labels: bool,
}

/// A logarithmic axis over whole powers `first..=last` of its base, padded a
/// little on both sides so that points on the extremes are not cut.
struct LogAxis {
    /// Exponent at the low end of the drawn range.
    lo: f64,
    /// Exponent at the high end of the drawn range.
    hi: f64,
    first: i32,
    last: i32,
    log: fn(f64) -> f64,
    /// Distance between labelled ticks, in whole exponents.
    step: i32,
}

impl LogAxis {
    /// Fits the axis to positive finite `values`, or to the exponent range
    /// `default` when there are none; the labelled tick step is the first of
    /// `steps` that gives at most 12 labels.
    fn fit(
        values: impl Iterator<Item = f64>,
        log: fn(f64) -> f64,
        default: (f64, f64),
        steps: &[i32],
    ) -> Self {
        let (min, max) = values
            .map(log)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), e| {
                (lo.min(e), hi.max(e))
            });
        let (lo, mut hi) = if min.is_finite() && max.is_finite() {
            (min.floor(), max.ceil())
        } else {
            default
        };
        if hi - lo < 1.0 {
            hi = lo + 1.0;
        }
        let (first, last) = (lo as i32, hi as i32);
        let span = last - first;
        let step = steps
            .iter()
            .copied()
            .find(|s| span <= 12 * s)
            .unwrap_or_else(|| (span + 11) / 12)
            .max(1);
        let pad = 0.03 * (hi - lo);
        Self {
            lo: lo - pad,
            hi: hi + pad,
            first,
            last,
            log,
            step,
        }
    }

    /// Position of `value` along the axis, 0 at the low end and 1 at the
    /// high end.
    fn frac(&self, value: f64) -> f64 {
        self.frac_of_exponent((self.log)(value))
    }

    fn frac_of_exponent(&self, exponent: f64) -> f64 {
        (exponent - self.lo) / (self.hi - self.lo)
    }

    /// Exponents of the labelled ticks.
    fn major(&self) -> impl Iterator<Item = i32> + '_ {
        (self.first..=self.last).filter(move |k| k.rem_euclid(self.step) == 0)
    }

    /// Exponents (possibly fractional) of the unlabelled minor ticks: the
    /// whole exponents between labelled ticks or, for a decimal axis with
    /// one decade per label, the multiples 2..9 of each decade.
    fn minor(&self, decimal: bool) -> Vec<f64> {
        if self.step > 1 {
            (self.first..=self.last)
                .filter(|k| k.rem_euclid(self.step) != 0)
                .map(f64::from)
                .collect()
        } else if decimal && self.last - self.first <= 6 {
            (self.first..self.last)
                .flat_map(|k| (2..10).map(move |m| f64::from(k) + f64::from(m).log10()))
                .collect()
        } else {
            Vec::new()
        }
    }
}

/// Whether a point can go on log-log axes.
fn is_plottable(p: &(f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite() && p.0 > 0.0 && p.1 > 0.0
}

fn draw_panel(
    out: &mut String,
    panel: &Panel<'_>,
    x_axis: &LogAxis,
    colour_of: &dyn Fn(&str) -> &'static str,
) {
    let y_axis = LogAxis::fit(
        panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().filter(|p| is_plottable(p)).map(|p| p.1)),
        f64::log10,
        (0.0, 1.0),
        &[1, 2, 3, 6, 9, 12, 30, 60, 150, 300],
    );
    let px = |frac: f64| PLOT_LEFT + frac * (PLOT_RIGHT - PLOT_LEFT);
    let py = |frac: f64| panel.bottom - frac * (panel.bottom - panel.top);

    out.push_str("<g>\n");
    // Grid lines and ticks.
    for k in x_axis.major() {
        let x = px(x_axis.frac_of_exponent(f64::from(k)));
        out.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#dddddd\"/>\n",
            panel.top, panel.bottom
        ));
        out.push_str(&tick_line(x, panel.bottom, x, panel.bottom + 5.0));
        if panel.x_tick_labels {
            out.push_str(&format!(
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
                panel.bottom + 20.0,
                escape_xml(&size_label(k))
            ));
        }
    }
    for e in x_axis.minor(false) {
        let x = px(x_axis.frac_of_exponent(e));
        out.push_str(&tick_line(x, panel.bottom, x, panel.bottom + 3.0));
    }
    for k in y_axis.major() {
        let y = py(y_axis.frac_of_exponent(f64::from(k)));
        out.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\n",
            PLOT_LEFT, PLOT_RIGHT
        ));
        out.push_str(&tick_line(PLOT_LEFT - 5.0, y, PLOT_LEFT, y));
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            PLOT_LEFT - 8.0,
            y + 4.0,
            escape_xml(&(panel.y_tick_label)(k))
        ));
    }
    for e in y_axis.minor(true) {
        let y = py(y_axis.frac_of_exponent(e));
        out.push_str(&tick_line(PLOT_LEFT - 3.0, y, PLOT_LEFT, y));
    }
    out.push_str(&format!(
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" \
         stroke=\"black\"/>\n",
        PLOT_LEFT,
        panel.top,
        PLOT_RIGHT - PLOT_LEFT,
        panel.bottom - panel.top
    ));
    let mid_y = (panel.top + panel.bottom) / 2.0;
    out.push_str(&format!(
        "<text transform=\"translate(28,{mid_y:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
        escape_xml(panel.y_title)
    ));

    // Data.
    let mut any = false;
    for series in panel.series {
        let mut points: Vec<(f64, f64)> =
            series.points.iter().copied().filter(is_plottable).collect();
        if points.is_empty() {
            continue;
        }
        any = true;
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let colour = colour_of(&series.label);
        let coords: Vec<(f64, f64)> = points
            .iter()
            .map(|&(x, y)| (px(x_axis.frac(x)), py(y_axis.frac(y))))
            .collect();
        if coords.len() > 1 {
            let list: Vec<String> = coords
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect();
            out.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
                list.join(" ")
            ));
        }
        for (&(x, y), &(cx, cy)) in points.iter().zip(&coords) {
            let tip = format!(
                "{}: {}, {}",
                series.label,
                bytes_human(x),
                (panel.y_value)(y)
            );
            out.push_str(&format!(
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3\" fill=\"{colour}\"><title>{}</title></circle>\n",
                escape_xml(&tip)
            ));
        }
    }
    if !any {
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{mid_y:.1}\" text-anchor=\"middle\" fill=\"#888888\">no data</text>\n",
            (PLOT_LEFT + PLOT_RIGHT) / 2.0
        ));
    }
    out.push_str("</g>\n");
}

fn tick_line(x1: f64, y1: f64, x2: f64, y2: f64) -> String {
    format!(
        "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"black\"/>\n"
    )
}

/// Escapes text for use in XML content and attribute values; characters that
/// XML 1.0 does not allow become U+FFFD.
fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
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

/// A byte count in binary units: "1.5 KiB".
fn bytes_human(v: f64) -> String {
    let index = ((v.log2() / 10.0).floor().max(0.0) as usize).min(BINARY_UNITS.len() - 1);
    let scaled = v / 1024f64.powi(index as i32);
    format!("{} {}", sig3(scaled), BINARY_UNITS[index])
}

/// A rate in decimal units: "12.3 MB/s".
fn rate_human(v: f64) -> String {
    let index = ((v.log10() / 3.0).floor().max(0.0) as usize).min(SI_PREFIXES.len() - 1);
    let scaled = v / 1000f64.powi(index as i32);
    format!("{} {}B/s", sig3(scaled), SI_PREFIXES[index])
}

/// A service demand: "0.98 µs/KiB".
fn demand_human(v: f64) -> String {
    format!("{} \u{b5}s/KiB", sig3(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that `doc` is a single well-formed element tree: tags nest and
    /// match, every `&` starts a predefined entity, no stray `>`.
    fn check_well_formed(doc: &str) -> Result<(), String> {
        fn check_text(text: &str) -> Result<(), String> {
            if text.contains('>') {
                return Err(format!("stray > in {text:?}"));
            }
            for (i, _) in text.match_indices('&') {
                let rest = &text[i..];
                if !["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| rest.starts_with(e))
                {
                    return Err(format!("bad entity at {rest:?}"));
                }
            }
            Ok(())
        }
        let mut stack: Vec<&str> = Vec::new();
        let mut closed_root = false;
        let mut rest = doc;
        while let Some(start) = rest.find('<') {
            check_text(&rest[..start])?;
            if closed_root {
                return Err("content after the root element".into());
            }
            let end = start + rest[start..].find('>').ok_or("unterminated tag")?;
            let tag = &rest[start + 1..end];
            if tag.matches('"').count() % 2 != 0 {
                return Err(format!("unbalanced quotes in <{tag}>"));
            }
            for (i, _) in tag.match_indices('&') {
                check_text(&tag[i..])?;
            }
            if let Some(name) = tag.strip_prefix('/') {
                match stack.pop() {
                    Some(open) if open == name.trim() => {}
                    other => return Err(format!("</{name}> closes {other:?}")),
                }
                closed_root = stack.is_empty();
            } else {
                let name = tag.split_whitespace().next().unwrap_or("");
                let name = name.trim_end_matches('/');
                if name.is_empty() {
                    return Err("empty tag name".into());
                }
                if stack.is_empty() && name != "svg" {
                    return Err(format!("root element is {name}"));
                }
                if !tag.ends_with('/') {
                    stack.push(name);
                } else {
                    closed_root = stack.is_empty();
                }
            }
            rest = &rest[end + 1..];
        }
        check_text(rest)?;
        if !stack.is_empty() {
            return Err(format!("unclosed {stack:?}"));
        }
        if !closed_root {
            return Err("no root element".into());
        }
        Ok(())
    }

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.to_string(),
            points: points.to_vec(),
        }
    }

    #[test]
    fn complete_document_with_escaped_labels() {
        let tp = [
            series("a<b&c", &[(1.0, 1e4), (1024.0, 5e5), (1048576.0, 8e6)]),
            series("\"quoted\" 'label'", &[(64.0, 2e5), (4096.0, 1e6)]),
        ];
        let sd = [series("a<b&c", &[(1.0, 900.0), (1024.0, 3.0)])];
        let svg = sweep_svg("sweep <GPIB> & more", &tp, &sd);
        assert!(svg.starts_with("<svg"));
        assert!(svg.ends_with("</svg>"));
        check_well_formed(&svg).unwrap();
        assert!(svg.contains("a&lt;b&amp;c"));
        assert!(!svg.contains("a<b&c"));
        assert!(svg.contains("&quot;quoted&quot; &apos;label&apos;"));
        assert!(svg.contains("sweep &lt;GPIB&gt; &amp; more"));
        // Size ticks and rate ticks.
        for label in [">1 B<", ">1 KiB<", ">1 MiB<", ">10 kB/s<", ">1 MB/s<"] {
            assert!(svg.contains(label), "missing {label}");
        }
        assert!(svg.contains("throughput (bytes/s)"));
        assert!(svg.contains("service demand (\u{b5}s/KiB)"));
        assert!(svg.contains("transfer size"));
        // One legend entry per distinct label, and the same colour in both
        // panels for the same label.
        assert_eq!(svg.matches(">a&lt;b&amp;c</text>").count(), 1);
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert_eq!(
            svg.matches("stroke=\"#1f77b4\" stroke-width=\"1.5\"")
                .count(),
            2
        );
        assert!(!svg.contains("no data"));
    }

    #[test]
    fn empty_input_is_a_valid_document() {
        let svg = sweep_svg("", &[], &[]);
        assert!(svg.starts_with("<svg"));
        assert!(svg.ends_with("</svg>"));
        check_well_formed(&svg).unwrap();
        assert_eq!(svg.matches("<circle").count(), 0);
        assert_eq!(svg.matches("no data").count(), 2);
        // Series whose points are all unplottable count as empty too.
        let svg = sweep_svg("t", &[series("x", &[(0.0, 1.0), (1.0, -1.0)])], &[]);
        check_well_formed(&svg).unwrap();
        assert_eq!(svg.matches("<circle").count(), 0);
        assert_eq!(svg.matches("no data").count(), 2);
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
                ],
            ),
            series("two", &[(32.0, 1e9)]),
        ];
        let sd = [series("one", &[(1.0, 0.5), (2.0, 0.7), (-4.0, 1.0)])];
        let svg = sweep_svg("count", &tp, &sd);
        check_well_formed(&svg).unwrap();
        assert_eq!(svg.matches("<circle").count(), 5);
        // A single point draws a marker but no line.
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn single_value_ranges_and_huge_ranges() {
        let svg = sweep_svg("one point", &[series("p", &[(100.0, 100.0)])], &[]);
        check_well_formed(&svg).unwrap();
        assert_eq!(svg.matches("<circle").count(), 1);
        let svg = sweep_svg(
            "wide",
            &[series("w", &[(1e-3, 1e-200), (1e30, 1e200)])],
            &[series("w", &[(1e-3, 1e-9), (1e30, 1e9)])],
        );
        check_well_formed(&svg).unwrap();
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn control_characters_are_replaced() {
        let svg = sweep_svg("bell\u{7}", &[series("nul\u{0}", &[(1.0, 1.0)])], &[]);
        check_well_formed(&svg).unwrap();
        assert!(!svg.contains('\u{0}') && !svg.contains('\u{7}'));
        assert!(svg.contains("nul\u{fffd}"));
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
    }

    #[test]
    fn human_values() {
        assert_eq!(bytes_human(4096.0), "4 KiB");
        assert_eq!(bytes_human(1536.0), "1.5 KiB");
        assert_eq!(bytes_human(1.0), "1 B");
        assert_eq!(bytes_human(0.5), "0.5 B");
        assert_eq!(rate_human(12_345_678.0), "12.3 MB/s");
        assert_eq!(rate_human(999.0), "999 B/s");
        assert_eq!(demand_human(0.9765625), "0.977 \u{b5}s/KiB");
        assert_eq!(sig3(123456.0), "123456");
    }

    #[test]
    fn tick_steps_stay_readable() {
        let axis = LogAxis::fit(
            [1.0, 1048576.0].into_iter(),
            f64::log2,
            (0.0, 1.0),
            &[1, 2, 5, 10],
        );
        assert_eq!(axis.step, 2);
        assert_eq!(axis.major().count(), 11);
        let axis = LogAxis::fit(
            [1.0, 2f64.powi(40)].into_iter(),
            f64::log2,
            (0.0, 1.0),
            &[1, 2, 5, 10],
        );
        assert_eq!(axis.step, 5);
        let axis = LogAxis::fit(std::iter::empty(), f64::log10, (0.0, 1.0), &[1]);
        assert_eq!((axis.first, axis.last), (0, 1));
        assert!(axis.frac(1.0) > 0.0 && axis.frac(10.0) < 1.0);
    }
}
