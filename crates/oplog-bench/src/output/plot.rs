//! SVG line charts: one line per implementation, ops/s against the experiment's x axis.
//!
//! Drawn with plotters' SVG backend, which writes text as `<text>` elements and needs no font
//! files. The x ticks are exactly the measured x values (thread counts), the y axis starts at 0
//! with engineering-notation labels, and the legend names every line. Each series is one
//! `<polyline>` plus a circle per point; legend swatches are rectangles, so the number of
//! polylines equals the number of series.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{Series, format_eng, x_values};

/// Width of the chart in pixels.
pub const WIDTH: u32 = 900;
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

/// Stroke width of data lines; axis and tick lines are 1 wide.
const LINE_WIDTH: u32 = 2;

/// Renders `series` as an SVG document with `title` and an x axis labelled `x_label`.
pub fn render_svg(title: &str, x_label: &str, series: &[Series]) -> Result<String, String> {
    let mut svg = String::new();
    draw(&mut svg, title, x_label, series).map_err(|e| format!("cannot draw the plot: {e}"))?;
    Ok(svg)
}

fn draw(svg: &mut String, title: &str, x_label: &str, series: &[Series]) -> Result<(), Box<dyn std::error::Error>> {
    let xs = x_values(series);
    let (x_min, x_max) = match (xs.first(), xs.last()) {
        (Some(&lo), Some(&hi)) if hi > lo => (lo, hi),
        (Some(&x), _) => (x - 1.0, x + 1.0),
        _ => (0.0, 1.0),
    };
    let pad = (x_max - x_min) * 0.04;
    let y_top =
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|y| y.is_finite()).fold(0.0f64, f64::max);
    let y_top = if y_top > 0.0 { y_top * 1.1 } else { 1.0 };

    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let x_range = TickedAxis { inner: ((x_min - pad)..(x_max + pad)).into(), ticks: xs };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range, 0f64..y_top)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("ops/s")
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .x_label_formatter(&|x| format!("{x}"))
        .y_label_formatter(&|y| format_eng(*y))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;

    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), color.stroke_width(LINE_WIDTH)))?
            .label(s.label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], color.filled()));
        chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    if !series.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// A linear f64 axis whose ticks are given values (the measured x values), thinned evenly when
/// there are more than fit.
struct TickedAxis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let fit = hint.max_num_points().max(1);
        let step = self.ticks.len().div_ceil(fit).max(1);
        self.ticks.iter().step_by(step).copied().collect()
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polylines drawn at the data-line width (axes and ticks are 1 wide).
    fn data_lines(svg: &str) -> usize {
        svg.split("<polyline").skip(1).filter(|tag| tag.contains(&format!("stroke-width=\"{LINE_WIDTH}\""))).count()
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
        let svg = render_svg("counter: a & b <test>", "threads", &s).unwrap();
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
    fn single_point_and_empty_inputs_render() {
        let svg = render_svg("t", "threads", &[series("a", &[(4.0, 10.0)])]).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(texts(&svg).contains(&"a".to_owned()));
        assert_eq!(data_lines(&svg), 1);
        let svg = render_svg("t", "threads", &[]).unwrap();
        assert!(svg.starts_with("<svg"));
        assert_eq!(data_lines(&svg), 0);
    }
}
