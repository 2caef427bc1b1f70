//! The terminal table: one per experiment, rows = implementations, columns = x values.
//!
//! Cells are the experiment's [`Metric`](crate::experiments::Metric) (median ops/s unless
//! it says otherwise) in engineering notation ([`format_eng`]). An experiment can ask for
//! ratio columns ([`Ratios`]): scaling (`2T/1T`: each x against the first) and a baseline
//! comparison (`vs atomic (2T)`: each row against one implementation at the last x). Ratios of
//! numbers measured side by side in one run are what carries over between machines.

use crate::experiments::{Experiment, Ratios, XAxis};

use super::{Record, Series, format_eng, group_series, x_values};

/// The table for `experiment`'s `records`, with a title line, ending in a newline.
pub fn render(experiment: &dyn Experiment, records: &[Record]) -> String {
    let axis = experiment.x_axis();
    let metric = experiment.metric();
    let series = group_series(records, axis, metric);
    let mut out = format!("{}: {}\n", experiment.name(), experiment.description());
    if let Some(first) = records.first() {
        out.push_str(&format!("{}, median of {} rep(s) x {} ms\n", metric.label, first.reps, first.duration_ms));
    }
    out.push_str(&grid(axis, experiment.ratios(), &series));
    out
}

/// The rows and columns of the table, aligned, without a title.
pub fn grid(axis: XAxis, ratios: Ratios, series: &[Series]) -> String {
    let xs = x_values(series);
    let mut header = vec!["impl".to_owned()];
    header.extend(xs.iter().map(|&x| axis.heading(x)));
    let scaling_xs: &[f64] = if ratios.scaling && xs.len() > 1 { &xs[1..] } else { &[] };
    for &x in scaling_xs {
        header.push(match axis {
            XAxis::Threads => format!("{}/{}", axis.heading(x), axis.heading(xs[0])),
            XAxis::Param { .. } => format!("{x}/{}", xs[0]),
        });
    }
    let last_x = xs.last().copied();
    let baseline = ratios
        .versus
        .and_then(|id| series.iter().find(|s| s.label == id))
        .zip(last_x)
        .and_then(|(s, x)| Some((s.label.as_str(), s.at(x)?, x)));
    if let Some((id, _, x)) = baseline {
        header.push(format!("vs {id} ({})", axis.heading(x)));
    }

    let mut rows = vec![header];
    for s in series {
        let mut row = vec![s.label.clone()];
        row.extend(xs.iter().map(|&x| s.at(x).map_or("-".to_owned(), format_eng)));
        for &x in scaling_xs {
            row.push(ratio(s.at(x), s.at(xs[0])));
        }
        if let Some((_, base, x)) = baseline {
            row.push(ratio(s.at(x), Some(base)));
        }
        rows.push(row);
    }
    align(&rows)
}

/// `a / b` as `1.23x`, or `-` when either is missing or `b` is zero.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => format!("{:.2}x", a / b),
        _ => "-".to_owned(),
    }
}

/// Left-aligns the first column and right-aligns the rest, two spaces apart.
pub fn align(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|cell| cell.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(
                |(c, cell)| {
                    if c == 0 { format!("{cell:<w$}", w = widths[c]) } else { format!("{cell:>w$}", w = widths[c]) }
                },
            )
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series { label: label.to_owned(), points: points.to_vec() }
    }

    #[test]
    fn threads_table_with_ratios() {
        let s =
            [series("atomic", &[(1.0, 100e6), (2.0, 40e6)]), series("percore-atomic", &[(1.0, 90e6), (2.0, 180e6)])];
        let text = grid(XAxis::Threads, Ratios { scaling: true, versus: Some("atomic") }, &s);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "impl               1T     2T  2T/1T  vs atomic (2T)",
                "atomic           100M  40.0M  0.40x           1.00x",
                "percore-atomic  90.0M   180M  2.00x           4.50x",
            ]
        );
        assert!(lines[0].starts_with("impl"));
        assert!(lines[0].contains("2T/1T") && lines[0].ends_with("vs atomic (2T)"));
        assert!(lines[1].starts_with("atomic ") && lines[1].ends_with("1.00x"));
        assert!(lines[2].contains("2.00x") && lines[2].ends_with("4.50x"));
    }

    #[test]
    fn missing_cells_and_no_baseline() {
        let s = [series("a", &[(1.0, 5.0)]), series("b", &[(2.0, 7.0)])];
        let text = grid(XAxis::Threads, Ratios { scaling: true, versus: Some("absent") }, &s);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "impl  1T  2T  2T/1T");
        assert_eq!(lines[1], "a      5   -      -");
        assert_eq!(lines[2], "b      -   7      -");
    }
}
