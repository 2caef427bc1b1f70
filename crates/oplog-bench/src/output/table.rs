//! The terminal table: one per experiment, rows = implementations, columns = x values.
//!
//! Cells are the experiment's [`Metric`] (median ops/s unless
//! it says otherwise) in engineering notation ([`format_eng`]). An experiment can ask for
//! ratio columns ([`Ratios`]): scaling (`2T/1T`: each x against the first) and a baseline
//! comparison (`vs atomic (2T)`: each row against one implementation at the last x). Ratios of
//! numbers measured side by side in one run are what carries over between machines.
//!
//! Throughput cells carry their spread when a point had more than one repetition: `45.3M ±3%`
//! is the median and half the range between the slowest and the fastest repetition, in % of
//! the median. A quick run says in its title line that its figures are indicative.

use crate::experiments::{Experiment, Metric, Ratios, XAxis};

use super::{Record, Series, format_eng, group_series, verdict, x_values};

/// The table for `experiment`'s `records`, with a title line, ending in a newline; `quick`
/// when the run was `--quick`.
pub fn render(experiment: &dyn Experiment, records: &[Record], quick: bool) -> String {
    let axis = experiment.x_axis();
    let metric = experiment.metric();
    let series = group_series(records, axis, metric);
    let mut out = format!("{}: {}\n", experiment.name(), experiment.description());
    if let Some(first) = records.first() {
        out.push_str(&format!("{}, median of {} rep(s) x {} ms", metric.label, first.reps, first.duration_ms));
        if metric == Metric::OPS_PER_SEC && first.reps > 1 {
            out.push_str(", ± half the min-max range over reps");
        }
        if !metric.higher_is_better && experiment.ratios().versus.is_some() {
            out.push_str("; lower is better, so `vs` is the baseline's value over this row's (above 1.00x: fewer)");
        }
        if quick {
            out.push_str(" (quick run: indicative figures only)");
        }
        out.push('\n');
    }
    let spreads = spreads(axis, metric, records);
    out.push_str(&grid(axis, experiment.ratios(), metric.higher_is_better, &series, &spreads));
    out
}

/// Each throughput point's spread over its repetitions, as series like the values' own:
/// half of max − min, in % of the median. Empty for other metrics (their repetitions are not
/// recorded) and for points measured once.
fn spreads(axis: XAxis, metric: Metric, records: &[Record]) -> Vec<Series> {
    if metric != Metric::OPS_PER_SEC {
        return Vec::new();
    }
    let spread: Vec<Record> = records
        .iter()
        .filter(|r| r.reps > 1 && r.ops_per_sec > 0.0)
        .map(|r| Record { ops_per_sec: 50.0 * (r.max_ops_per_sec - r.min_ops_per_sec) / r.ops_per_sec, ..r.clone() })
        .collect();
    group_series(&spread, axis, metric)
}

/// The rows and columns of the table, aligned, without a title; a cell whose label and x
/// have a value in `spreads` shows it as `±N%`. The `vs` column is oriented like the
/// verdict's ratios: above 1.00x means this row is better than the baseline, so for a metric
/// where lower is better (`higher_is_better` false) it is the baseline's value over the row's.
pub fn grid(axis: XAxis, ratios: Ratios, higher_is_better: bool, series: &[Series], spreads: &[Series]) -> String {
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
        let spread = spreads.iter().find(|p| p.label == s.label);
        row.extend(xs.iter().map(|&x| match (s.at(x), spread.and_then(|p| p.at(x))) {
            (Some(v), Some(pct)) => format!("{} ±{pct:.0}%", format_eng(v)),
            (Some(v), None) => format_eng(v),
            (None, _) => "-".to_owned(),
        }));
        for &x in scaling_xs {
            row.push(ratio(s.at(x), s.at(xs[0])));
        }
        if let Some((_, base, x)) = baseline {
            let oriented = s.at(x).and_then(|v| verdict::oriented(higher_is_better, v, base));
            row.push(oriented.map_or("-".to_owned(), |r| format!("{r:.2}x")));
        }
        rows.push(row);
    }
    oplog_table::align(&rows, 1)
}

/// `a / b` as `1.23x`, or `-` when either is missing or `b` is zero.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => format!("{:.2}x", a / b),
        _ => "-".to_owned(),
    }
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
        let text = grid(XAxis::Threads, Ratios { scaling: true, versus: Some("atomic") }, true, &s, &[]);
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
    fn the_versus_column_reads_above_one_as_better_when_lower_is_better() {
        let s = [series("shared-line", &[(2.0, 400.0)]), series("own-line", &[(2.0, 4.0)])];
        let text = grid(XAxis::Threads, Ratios { scaling: false, versus: Some("shared-line") }, false, &s, &[]);
        let own = text.lines().find(|l| l.starts_with("own-line")).unwrap();
        assert!(own.ends_with("100.00x"), "{text}");
    }

    #[test]
    fn missing_cells_and_no_baseline() {
        let s = [series("a", &[(1.0, 5.0)]), series("b", &[(2.0, 7.0)])];
        let text = grid(XAxis::Threads, Ratios { scaling: true, versus: Some("absent") }, true, &s, &[]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "impl  1T  2T  2T/1T");
        assert_eq!(lines[1], "a      5   -      -");
        assert_eq!(lines[2], "b      -   7      -");
    }

    #[test]
    fn throughput_cells_show_their_spread_and_quick_runs_say_so() {
        let record = |id: &str, threads, median, min, max| Record {
            experiment: "counter".into(),
            impl_id: id.into(),
            threads,
            ops_per_sec: median,
            min_ops_per_sec: min,
            max_ops_per_sec: max,
            reps: 3,
            duration_ms: 200,
            extra: Default::default(),
        };
        let records = [record("atomic", 1, 100e6, 95e6, 105e6), record("atomic", 2, 40e6, 30e6, 50e6)];
        let experiment = crate::experiments::by_name("counter").unwrap();
        let text = render(experiment, &records, false);
        assert!(text.contains("± half the min-max range over reps"), "{text}");
        assert!(!text.contains("quick"), "{text}");
        let row = text.lines().find(|l| l.starts_with("atomic")).unwrap();
        assert!(row.contains("100M ±5%") && row.contains("40.0M ±25%"), "{row}");
        assert!(render(experiment, &records, true).contains("(quick run: indicative figures only)"));
    }
}
