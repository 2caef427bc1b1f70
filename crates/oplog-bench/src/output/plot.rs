//! SVG line charts: one line per implementation, the experiment's metric (ops/s unless it
//! says otherwise) against its x axis, linear or logarithmic.
//!
//! Drawn with plotters' SVG backend, which writes text as `<text>` elements and needs no font
//! files. The x ticks are exactly the measured x values (thread counts), the y axis has
//! engineering-notation labels and starts at 0, or is logarithmic when the experiment asks or
//! when the values span [`LOG_SPAN`] or more (a linear axis would flatten the slower lines
//! onto zero). Lines that could hide one another stay apart: each series has its own colour,
//! marker (circle, square, triangle, cross) and line style (solid, dashed, dotted), and the
//! legend, which shows all three, sits in a column of its own right of the plot, never over
//! the data.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{Series, format_eng, x_values};

/// Width of the chart in pixels, legend column included.
pub const WIDTH: u32 = 1100;
/// Width of the legend column right of the plot.
const LEGEND_WIDTH: u32 = 230;
/// The ratio of the largest to the smallest positive value from which the y axis is
/// logarithmic whatever the experiment asks.
pub const LOG_SPAN: f64 = 30.0;
/// Height of the chart in pixels.
pub const HEIGHT: u32 = 540;

/// Line colours (Tableau 10: distinct, readable on white), reused cyclically.
const COLORS: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Radius of a data marker in pixels.
const MARKER: i32 = 4;
/// A square marker's corners relative to its point.
const SQUARE: [(i32, i32); 2] = [(-MARKER, -MARKER), (MARKER, MARKER)];

/// Stroke width of data lines; axis and tick lines are 1 wide.
const LINE_WIDTH: u32 = 2;

/// What a chart says besides its data: title, axis labels, and the x axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chart<'a> {
    /// Caption above the plot.
    pub title: &'a str,
    /// x axis label.
    pub x_label: &'a str,
    /// y axis label.
    pub y_label: &'a str,
    /// How x values are placed.
    pub x_scale: Scale,
    /// Logarithmic y axis (ignored, linear from 0, when some y is not positive).
    pub log_y: bool,
}

/// How an axis places its values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    /// Proportionally.
    #[default]
    Linear,
    /// By logarithm (linear when some value is not positive).
    Log,
    /// The measured values evenly spaced, in order, whatever their differences (a sweep
    /// such as 0, 50, 90, 99, 100 %, whose interesting points are close together).
    Even,
}

/// Renders `series` as an SVG document described by `chart`.
pub fn render_svg(chart: &Chart, series: &[Series]) -> Result<String, String> {
    let mut svg = String::new();
    draw(&mut svg, chart, series).map_err(|e| format!("cannot draw the plot: {e}"))?;
    Ok(svg)
}

fn draw(svg: &mut String, chart_spec: &Chart, series: &[Series]) -> Result<(), Box<dyn std::error::Error>> {
    let xs = x_values(series);
    let x_scale = match chart_spec.x_scale {
        Scale::Log if xs.first().is_some_and(|&x| x <= 0.0) => Scale::Linear,
        other => other,
    };
    let x_axis = TickedAxis { inner: (0.0..1.0).into(), ticks: Some(xs.clone()), scale: x_scale };
    let (x_min, x_max) = match (xs.first(), xs.last()) {
        (Some(&lo), Some(&hi)) if hi > lo => (x_axis.position_of(lo), x_axis.position_of(hi)),
        (Some(&x), _) => (x_axis.position_of(x) - 1.0, x_axis.position_of(x) + 1.0),
        _ => (0.0, 1.0),
    };
    let pad = (x_max - x_min) * 0.04;
    let x_range = TickedAxis { inner: ((x_min - pad)..(x_max + pad)).into(), ..x_axis };
    let ys: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|y| y.is_finite()).collect();
    let y_top = ys.iter().copied().fold(0.0f64, f64::max);
    let y_bottom = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let log_y = (chart_spec.log_y || y_top >= LOG_SPAN * y_bottom) && y_bottom > 0.0 && y_top > 0.0;
    let y_range = if log_y {
        let (lo, hi) = ((y_bottom / 1.5).log10(), (y_top * 1.5).log10());
        TickedAxis { inner: (lo..hi).into(), ticks: Some(decade_ticks(lo, hi)), scale: Scale::Log }
    } else {
        let top = if y_top > 0.0 { y_top * 1.1 } else { 1.0 };
        TickedAxis { inner: (0.0..top).into(), ticks: None, scale: Scale::Linear }
    };

    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot_area, legend_area) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
    // Long titles get a smaller font so that they fit the width (about 0.55 em per glyph).
    let title_size = (f64::from(WIDTH - 40) / (0.55 * chart_spec.title.chars().count() as f64)).clamp(11.0, 24.0);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(chart_spec.title, ("sans-serif", title_size))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range, y_range)?;
    chart
        .configure_mesh()
        .x_desc(chart_spec.x_label)
        .y_desc(chart_spec.y_label)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .x_label_formatter(&|x| format!("{x}"))
        .y_label_formatter(&|y| format_eng(*y))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;

    for (i, s) in series.iter().enumerate() {
        let look = Look::of(i);
        let points = s.points.iter().copied();
        match look.dash {
            None => {
                chart.draw_series(LineSeries::new(points, look.line()))?;
            }
            Some((dash, gap)) => {
                chart.draw_series(DashedLineSeries::new(points, dash, gap, look.line()))?;
            }
        }
        let (fill, at) = (look.color.filled(), s.points.iter().copied());
        match look.marker {
            0 => _ = chart.draw_series(at.map(|p| Circle::new(p, MARKER, fill)))?,
            1 => _ = chart.draw_series(at.map(|p| EmptyElement::at(p) + Rectangle::new(SQUARE, fill)))?,
            2 => _ = chart.draw_series(at.map(|p| TriangleMarker::new(p, MARKER + 1, fill)))?,
            _ => _ = chart.draw_series(at.map(|p| Cross::new(p, MARKER, look.color.stroke_width(2))))?,
        }
    }
    // The legend, in its own column: a sample of each line with its marker, then its label.
    for (i, s) in series.iter().enumerate() {
        let look = Look::of(i);
        let y = 60 + 26 * i as i32;
        let (x0, x1) = (8, 48);
        match look.dash {
            None => legend_area.draw(&PathElement::new([(x0, y), (x1, y)], look.line()))?,
            Some((dash, gap)) => {
                let mut x = x0;
                while x < x1 {
                    legend_area.draw(&PathElement::new([(x, y), ((x + dash as i32).min(x1), y)], look.line()))?;
                    x += (dash + gap) as i32;
                }
            }
        }
        let (fill, at) = (look.color.filled(), ((x0 + x1) / 2, y));
        match look.marker {
            0 => legend_area.draw(&Circle::new(at, MARKER, fill))?,
            1 => legend_area.draw(&(EmptyElement::at(at) + Rectangle::new(SQUARE, fill)))?,
            2 => legend_area.draw(&TriangleMarker::new(at, MARKER + 1, fill))?,
            _ => legend_area.draw(&Cross::new(at, MARKER, look.color.stroke_width(2)))?,
        }
        legend_area.draw(&Text::new(s.label.as_str(), (x1 + 8, y - 8), ("sans-serif", 15)))?;
    }
    root.present()?;
    Ok(())
}

/// How series `i` is drawn: colour, marker and dash pattern, chosen so that neighbouring
/// series differ in all three.
#[derive(Clone, Copy, Debug)]
struct Look {
    color: RGBColor,
    /// 0 circle, 1 square, 2 triangle, 3 cross.
    marker: usize,
    /// `(dash, gap)` in pixels; `None` for a solid line.
    dash: Option<(u32, u32)>,
}

impl Look {
    fn of(i: usize) -> Self {
        const DASHES: [Option<(u32, u32)>; 3] = [None, Some((10, 5)), Some((3, 4))];
        Look { color: COLORS[i % COLORS.len()], marker: i % 4, dash: DASHES[i % DASHES.len()] }
    }

    fn line(self) -> ShapeStyle {
        self.color.stroke_width(LINE_WIDTH)
    }
}

/// `1, 2, 5 × 10^k` between `10^lo` and `10^hi`: the ticks of a logarithmic axis.
fn decade_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    for k in lo.floor() as i32..=hi.ceil() as i32 {
        for m in [1.0, 2.0, 5.0] {
            let t = m * 10f64.powi(k);
            if (lo..=hi).contains(&t.log10()) {
                ticks.push(t);
            }
        }
    }
    ticks
}

/// An f64 axis of any [`Scale`] whose ticks are given values (the measured x values, or a
/// log axis's decades), thinned evenly when there are more than fit; without given ticks, a
/// linear axis with plotters' own.
struct TickedAxis {
    /// The axis in plotted units: x, log10(x), or x's position among the ticks.
    inner: RangedCoordf64,
    ticks: Option<Vec<f64>>,
    scale: Scale,
}

impl TickedAxis {
    /// Where `x` lies in plotted units. On an `Even` axis a value between two ticks lies
    /// proportionally between their positions.
    fn position_of(&self, x: f64) -> f64 {
        match (self.scale, &self.ticks) {
            (Scale::Log, _) => x.log10(),
            (Scale::Even, Some(ticks)) if !ticks.is_empty() => {
                let after = ticks.iter().position(|&t| t >= x).unwrap_or(ticks.len() - 1);
                if after == 0 || ticks[after] <= x {
                    return after as f64;
                }
                let (lo, hi) = (ticks[after - 1], ticks[after]);
                (after - 1) as f64 + (x - lo) / (hi - lo)
            }
            _ => x,
        }
    }

    /// The value at plotted position `p` (inverse of [`TickedAxis::position_of`]).
    fn value_at(&self, p: f64) -> f64 {
        match (self.scale, &self.ticks) {
            (Scale::Log, _) => 10f64.powf(p),
            (Scale::Even, Some(ticks)) if !ticks.is_empty() => {
                let i = (p.floor().max(0.0) as usize).min(ticks.len() - 1);
                let next = ticks.get(i + 1).copied().unwrap_or(ticks[i]);
                ticks[i] + (p - i as f64).clamp(0.0, 1.0) * (next - ticks[i])
            }
            _ => p,
        }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(&self.position_of(*value), limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let Some(ticks) = &self.ticks else {
            return self.inner.key_points(hint);
        };
        let fit = hint.max_num_points().max(1);
        let step = ticks.len().div_ceil(fit).max(1);
        ticks.iter().step_by(step).copied().collect()
    }

    fn range(&self) -> Range<f64> {
        let plotted = self.inner.range();
        self.value_at(plotted.start)..self.value_at(plotted.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data lines: the distinct colours of the lines drawn at the data-line width (axes and
    /// ticks are 1 wide; a dashed line is many segments of one colour).
    fn data_lines(svg: &str) -> usize {
        let width = format!("stroke-width=\"{LINE_WIDTH}\"");
        let colors: std::collections::HashSet<&str> = svg
            .split('<')
            .filter(|tag| (tag.starts_with("polyline") || tag.starts_with("line")) && tag.contains(&width))
            .filter_map(|tag| tag.split("stroke=\"").nth(1)?.split('"').next())
            .collect();
        colors.len()
    }

    /// The trimmed contents of every `<text>` element.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..t.find("</text>")?];
                Some(body.trim().to_owned())
            })
            .collect()
    }

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series { label: label.to_owned(), points: points.to_vec() }
    }

    #[test]
    fn one_polyline_and_legend_entry_per_series() {
        let s = [
            series("atomic", &[(1.0, 1.0e8), (2.0, 4.0e7)]),
            series("mutex", &[(1.0, 5.0e7), (2.0, 2.0e7)]),
            series("percore-atomic", &[(1.0, 9.0e7), (2.0, 1.8e8)]),
        ];
        let chart = Chart {
            title: "counter: a & b <test>",
            x_label: "threads",
            y_label: "ops/s",
            x_scale: Scale::Linear,
            log_y: false,
        };
        let svg = render_svg(&chart, &s).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(data_lines(&svg), 3);
        let texts = texts(&svg);
        for name in ["atomic", "mutex", "percore-atomic", "threads", "ops/s", "1", "2"] {
            assert!(texts.contains(&name.to_owned()), "no text {name} in {texts:?}");
        }
        assert!(texts.contains(&"counter: a &amp; b &lt;test&gt;".to_owned()));
        // y ticks use engineering notation
        assert!(texts.contains(&"100M".to_owned()), "{texts:?}");
    }

    #[test]
    fn log_axis_ticks_are_the_measured_values() {
        let s = [series("ticket (2T)", &[(400.0, 1.0e6), (12_500.0, 1.0e5), (200_000.0, 1.0e4)])];
        let chart = Chart { title: "t", x_label: "parallel work", y_label: "ops/s", x_scale: Scale::Log, log_y: true };
        let svg = render_svg(&chart, &s).unwrap();
        let texts = texts(&svg);
        for tick in ["400", "12500", "200000", "ops/s", "parallel work", "10.0k", "100k", "1.00M"] {
            assert!(texts.contains(&tick.to_owned()), "no text {tick} in {texts:?}");
        }
        assert_eq!(data_lines(&svg), 1);
        assert_eq!(decade_ticks(0.0, 1.5), [1.0, 2.0, 5.0, 10.0, 20.0]);
        // A non-positive x or y falls back to a linear axis instead of failing.
        let zero = [series("a", &[(0.0, 0.0), (10.0, 2.0)])];
        assert_eq!(data_lines(&render_svg(&chart, &zero).unwrap()), 1);
    }

    #[test]
    fn even_axis_spaces_the_measured_values_evenly() {
        let axis =
            TickedAxis { inner: (0.0..1.0).into(), ticks: Some(vec![0.0, 50.0, 99.0, 100.0]), scale: Scale::Even };
        assert_eq!([0.0, 50.0, 99.0, 100.0].map(|x| axis.position_of(x)), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(axis.position_of(25.0), 0.5);
        assert_eq!(axis.value_at(2.0), 99.0);
        assert_eq!(axis.value_at(0.5), 25.0);
        let s = [series("oplog (2T)", &[(50.0, 1.0e6), (99.0, 3.0e7), (100.0, 3.5e7)])];
        let chart = Chart { title: "t", x_label: "updates", y_label: "ops/s", x_scale: Scale::Even, log_y: false };
        let svg = render_svg(&chart, &s).unwrap();
        let texts = texts(&svg);
        for tick in ["50", "99", "100"] {
            assert!(texts.contains(&tick.to_owned()), "no text {tick} in {texts:?}");
        }
    }

    #[test]
    fn neighbouring_series_differ_in_colour_marker_and_dash_and_wide_spans_go_logarithmic() {
        for i in 0..12 {
            let (a, b) = (Look::of(i), Look::of(i + 1));
            assert!(a.color != b.color && a.marker != b.marker && a.dash != b.dash, "series {i} and {}", i + 1);
        }
        let s: Vec<Series> =
            (0..4).map(|i| series(&format!("s{i}"), &[(1.0, 1e6 * (i + 1) as f64), (2.0, 1e8)])).collect();
        let chart = Chart { title: "t", x_label: "threads", y_label: "ops/s", x_scale: Scale::Linear, log_y: false };
        let svg = render_svg(&chart, &s).unwrap();
        assert_eq!(data_lines(&svg), 4);
        // Dashed lines are drawn, markers of every kind too (a cross is two lines, a triangle a
        // polygon, a square a rect), and the legend names every series right of the plot.
        assert!(svg.contains("<polygon") && svg.contains("<rect") && svg.contains("<circle"), "{svg}");
        let legend_x = |label: &str| -> f64 {
            let tag =
                svg.split("<text").find(|t| t.contains(&format!(">{label}<")) || t.contains(&format!(">\n{label}")));
            let tag = tag.unwrap_or_else(|| panic!("no legend text {label}"));
            tag.split("x=\"").nth(1).and_then(|v| v.split('"').next()).and_then(|v| v.parse().ok()).unwrap()
        };
        for i in 0..4 {
            assert!(legend_x(&format!("s{i}")) > f64::from(WIDTH - LEGEND_WIDTH), "legend over the data");
        }
        // 1M..100M spans 100x: a logarithmic axis with decade ticks, though not asked for.
        let texts = texts(&svg);
        assert!(texts.contains(&"1.00M".to_owned()) && texts.contains(&"10.0M".to_owned()), "{texts:?}");
    }

    /// Renders `svg` to pixels (resvg, without text: the test machine may have no fonts).
    fn rasterize(svg: &str) -> resvg::tiny_skia::Pixmap {
        let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).expect("a valid SVG document");
        let size = tree.size().to_int_size();
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("a non-empty size");
        resvg::render(&tree, resvg::tiny_skia::Transform::default(), &mut pixmap.as_mut());
        pixmap
    }

    /// A plot rendered to PNG (also written to `target/plot-check.png` to be looked at) shows
    /// every series in the plot and, apart from the data, in the legend column.
    #[test]
    fn the_rendered_png_shows_every_series_in_the_plot_and_in_the_legend_column() {
        let ids = ["oplog", "mutex", "rwlock", "node-replication", "oplog-rseq", "oplog-spinlock", "oplog-direct"];
        let s: Vec<Series> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| series(id, &[(0.0, 4e8 / (i + 1) as f64), (50.0, 1e7), (99.0, 3e7 * (i + 1) as f64)]))
            .collect();
        let chart =
            Chart { title: "read-mix", x_label: "updates", y_label: "ops/s", x_scale: Scale::Even, log_y: false };
        let pixmap = rasterize(&render_svg(&chart, &s).unwrap());
        assert_eq!((pixmap.width(), pixmap.height()), (WIDTH, HEIGHT));
        let png = pixmap.encode_png().expect("PNG encoding");
        let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
        if target.is_dir() {
            let _ = std::fs::write(target.join("plot-check.png"), &png);
        }
        let legend_from = WIDTH - LEGEND_WIDTH;
        for (i, id) in ids.iter().enumerate() {
            let c = Look::of(i).color;
            let (mut in_plot, mut in_legend) = (0, 0);
            for (n, p) in pixmap.pixels().iter().enumerate() {
                let p = p.demultiply();
                if (p.red(), p.green(), p.blue(), p.alpha()) == (c.0, c.1, c.2, 255) {
                    if (n as u32 % WIDTH) < legend_from { in_plot += 1 } else { in_legend += 1 }
                }
            }
            assert!(in_plot > 50, "{id}: {in_plot} pixels of its colour in the plot");
            assert!(in_legend > 20, "{id}: {in_legend} pixels of its colour in the legend column");
        }
    }

    #[test]
    fn single_point_and_empty_inputs_render() {
        let chart = Chart { title: "t", x_label: "threads", y_label: "ops/s", x_scale: Scale::Linear, log_y: false };
        let svg = render_svg(&chart, &[series("a", &[(4.0, 10.0)])]).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(texts(&svg).contains(&"a".to_owned()));
        assert_eq!(data_lines(&svg), 1);
        let svg = render_svg(&chart, &[]).unwrap();
        assert!(svg.starts_with("<svg"));
        assert_eq!(data_lines(&svg), 0);
    }
}
