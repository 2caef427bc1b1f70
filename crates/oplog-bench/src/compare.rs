//! `oplog-bench compare OLD_DIR NEW_DIR [--out DIR]`: judges a change from two runs' output
//! directories.
//!
//! Each directory is the `--out` of an earlier run; its `all.jsonl` holds one [`Record`] per
//! line (annex lines, which carry an `annex` field, are skipped). Records are matched by
//! experiment, implementation id and point: the thread count, and for a swept experiment the
//! swept parameter's value too ([`XAxis`]). For every point present in both runs this prints
//! the ratio new/old of the experiment's [`Metric`], *oriented* like the
//! [verdict](crate::output::verdict)'s ratios (above 1.00x means the new run is better, also
//! for metrics where lower is better), and its noise band from the recorded extremes of the
//! repetitions: from the worst case (the new run's worst repetition against the old run's
//! best) to the best case (the new run's best against the old run's worst). A change is
//! `better` or `worse` only when the whole band lies above or below 1.00x; otherwise it is
//! `within noise`. Points measured by only one run are listed as added or removed. Where
//! both records carry the host's cache-line round trip (`round_trip_ns`, measured by the
//! run before the point: [`Watch`](crate::host::Watch)) and the two differ by more than
//! [`SWITCH_FACTOR`](crate::host::SWITCH_FACTOR), its judgement says `host differs`: the
//! host's state, not the change, may explain its ratio (the development host's `objects`
//! figures move up to 3x with it, its `counter` figures hardly at all); the table shows
//! both round trips, and the summary counts such points.
//!
//! The extremes of `ops_per_sec` are the records' `min_ops_per_sec` and `max_ops_per_sec`;
//! another metric's are the extra fields `min_<key>` and `max_<key>` where an experiment
//! records them, and otherwise the value itself (a band of width zero: the experiment records
//! no spread for it, as for `memory`'s byte counts). A run with `--reps 1` records no spread
//! either, so its bands have no width: measure with three or more repetitions to judge.
//!
//! With `--out DIR`, the same tables go to `DIR/compare.md`, each followed by the
//! experiment's chart of both runs (`DIR/compare-<experiment>.svg`: every id's curve from the
//! old run beside its curve from the new one, on the experiment's own axes). A directory without a readable
//! `all.jsonl` or a line that is not a record exits with status 2 naming the file and line.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use serde_json::Value;

use crate::experiments::{Experiment, Metric, REGISTRY, XAxis, by_name};
use crate::host;
use crate::output::verdict::oriented;
use crate::output::{JSONL_FILE, ROUND_TRIP_FIELD, Record, Series, format_eng, group_series, probe_dir, render_chart};

/// The subcommand's name, the first argument after the program name.
pub const COMMAND: &str = "compare";

/// The report `--out DIR` writes.
pub const REPORT_FILE: &str = "compare.md";

/// `oplog-bench compare`'s command line.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "oplog-bench compare",
    about = "Compares two runs' output directories: per experiment, id and point, the ratio new/old \
             (above 1.00x is better) with the noise band from the recorded min and max"
)]
pub struct Args {
    /// The earlier run's output directory (its `--out`, holding `all.jsonl`).
    #[arg(value_name = "OLD_DIR")]
    pub old: PathBuf,
    /// The later run's output directory.
    #[arg(value_name = "NEW_DIR")]
    pub new: PathBuf,
    /// Also write the comparison as `compare.md` into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The `compare` arguments of `args` (the whole command line, program name first), if its
/// first argument is `compare`; a usage error or `--help` is answered by clap (which exits).
pub fn request(args: &[String]) -> Option<Args> {
    (args.get(1).map(String::as_str) == Some(COMMAND))
        .then(|| Args::parse_from(std::iter::once(format!("oplog-bench {COMMAND}")).chain(args[2..].iter().cloned())))
}

/// Runs the comparison `args` asks for: prints it, writes `compare.md` with `--out`. Bad
/// input exits with status 2, an unwritable report with status 1.
pub fn main(args: &Args) -> ExitCode {
    let fail = |status: u8, e: String| {
        eprintln!("oplog-bench: error: {e}");
        ExitCode::from(status)
    };
    let (old, new) = match (load(&args.old), load(&args.new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => return fail(2, e),
    };
    let sections = compare(&old, &new);
    print!("{}", render_text(&sections));
    if let Some(dir) = &args.out {
        if let Err(e) = probe_dir(dir) {
            return fail(2, format!("invalid value '{}' for '--out <DIR>': {e}", dir.display()));
        }
        let charts = match write_charts(dir, &old, &new) {
            Ok(charts) => charts,
            Err(e) => return fail(1, e.to_string()),
        };
        let path = dir.join(REPORT_FILE);
        let report = render_markdown(&args.old, &args.new, &sections, &charts);
        if let Err(e) = fs::write(&path, report) {
            return fail(1, format!("cannot write {}: {e}", path.display()));
        }
        eprintln!("oplog-bench: wrote {}", path.display());
    }
    ExitCode::SUCCESS
}

/// Every record of `dir/all.jsonl`, annex lines skipped; the error names the file and the
/// line that could not be read.
pub fn load(dir: &Path) -> Result<Vec<Record>, String> {
    let path = dir.join(JSONL_FILE);
    let text = fs::read_to_string(&path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => {
            format!("{} has no {JSONL_FILE} (not an output directory of `oplog-bench --out`)", dir.display())
        }
        _ => format!("cannot read {}: {e}", path.display()),
    })?;
    parse(&text).map_err(|(line, e)| format!("{}:{line}: {e}", path.display()))
}

/// The records of the JSON lines `text`, skipping annex lines and blank lines; the error is
/// the 1-based line number and what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Record>, (usize, String)> {
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |e: String| (index + 1, e);
        let value: Value = serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let Value::Object(fields) = &value else {
            return Err(bad("not a JSON object".to_owned()));
        };
        if fields.contains_key("annex") {
            continue;
        }
        records.push(serde_json::from_value(value).map_err(|e| bad(format!("not a record: {e}")))?);
    }
    Ok(records)
}

/// A point's value and the extremes of its repetitions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The value the tables show (the median over repetitions).
    pub value: f64,
    /// The lowest repetition.
    pub min: f64,
    /// The highest repetition.
    pub max: f64,
}

impl Spread {
    /// `record`'s value of `metric` with its extremes (see the module docs), or `None` when
    /// the record has no numeric value for the metric.
    pub fn of(metric: Metric, record: &Record) -> Option<Spread> {
        let value = metric.value(record)?;
        if metric.key == Metric::OPS_PER_SEC.key {
            return Some(Spread { value, min: record.min_ops_per_sec, max: record.max_ops_per_sec });
        }
        let extra = |prefix: &str| record.extra.get(&format!("{prefix}_{}", metric.key)).and_then(Value::as_f64);
        Some(Spread { value, min: extra("min").unwrap_or(value), max: extra("max").unwrap_or(value) })
    }
}

/// New against old at one point, oriented: above 1 means the new run is better.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    /// The values' ratio.
    pub ratio: f64,
    /// The worst case: the new run's worst repetition against the old run's best.
    pub worst: f64,
    /// The best case: the new run's best repetition against the old run's worst.
    pub best: f64,
}

impl Ratio {
    /// `new` relative to `old` for a metric where `higher_is_better` (or not), with its band;
    /// `None` when a ratio is not finite (a zero value).
    pub fn of(higher_is_better: bool, old: Spread, new: Spread) -> Option<Ratio> {
        // The better end of a spread, and the worse one.
        let better = |s: Spread| if higher_is_better { s.max } else { s.min };
        let worse = |s: Spread| if higher_is_better { s.min } else { s.max };
        Some(Ratio {
            ratio: oriented(higher_is_better, new.value, old.value)?,
            worst: oriented(higher_is_better, worse(new), better(old))?,
            best: oriented(higher_is_better, better(new), worse(old))?,
        })
    }

    /// What the band says: better or worse only when all of it lies on one side of 1.
    pub fn change(&self) -> Change {
        if self.worst > 1.0 {
            Change::Better
        } else if self.best < 1.0 {
            Change::Worse
        } else {
            Change::WithinNoise
        }
    }
}

/// The judgement of one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The whole band is above 1.00x.
    Better,
    /// The whole band is below 1.00x.
    Worse,
    /// The band contains 1.00x.
    WithinNoise,
    /// A value is zero, so no ratio is finite.
    NotComparable,
}

impl Change {
    /// `better`, `worse`, `within noise`, `not comparable`.
    pub fn word(self) -> &'static str {
        match self {
            Change::Better => "better",
            Change::Worse => "worse",
            Change::WithinNoise => "within noise",
            Change::NotComparable => "not comparable",
        }
    }
}

/// Where a record sits: its id's place in the experiment's `ids()` (unknown ids after, by
/// name), its id, its thread count and its swept value (the thread count again for a
/// thread-count experiment).
#[derive(Clone, Debug)]
struct Point {
    rank: usize,
    id: String,
    threads: usize,
    x: f64,
}

impl Ord for Point {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.rank, &self.id, self.threads)
            .cmp(&(other.rank, &other.id, other.threads))
            .then(self.x.total_cmp(&other.x))
    }
}

impl PartialOrd for Point {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Point {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Point {}

/// One point measured by both runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The implementation id.
    pub id: String,
    /// The point: `2T`, or `2T update_pct=10`.
    pub point: String,
    /// The old run's value.
    pub old: Spread,
    /// The new run's value.
    pub new: Spread,
    /// New against old, `None` when not comparable.
    pub ratio: Option<Ratio>,
    /// The host's cache-line round trip when each run measured the point, in nanoseconds
    /// (the records' `round_trip_ns`), where both records have one.
    pub round_trips: Option<(f64, f64)>,
}

impl Row {
    /// The row's judgement.
    pub fn change(&self) -> Change {
        self.ratio.map_or(Change::NotComparable, |r| r.change())
    }

    /// Whether the two runs measured the point while the host's cache-line round trip
    /// differed by more than [`host::SWITCH_FACTOR`]: the host's state, not the change, may
    /// then explain a ratio judged better or worse.
    pub fn host_differs(&self) -> bool {
        self.round_trips.is_some_and(|(old, new)| host::switched(old, new))
    }
}

/// One experiment's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// The experiment's name.
    pub experiment: String,
    /// Its metric (ops/s for an experiment this build does not know).
    pub metric: Metric,
    /// The points in both runs, by id order, thread count and swept value.
    pub rows: Vec<Row>,
    /// `id at point` of the points only the new run measured.
    pub added: Vec<String>,
    /// `id at point` of the points only the old run measured.
    pub removed: Vec<String>,
}

/// Compares `new` with `old`, one section per experiment in either (registry order, then
/// experiments this build does not know, by name). A point recorded twice in one run counts
/// once, with its last record.
pub fn compare(old: &[Record], new: &[Record]) -> Vec<Section> {
    let mut names: Vec<&str> = old.iter().chain(new).map(|r| r.experiment.as_str()).collect();
    let rank = |name: &str| REGISTRY.iter().position(|e| e.name() == name).unwrap_or(REGISTRY.len());
    names.sort_by(|a, b| (rank(a), a).cmp(&(rank(b), b)));
    names.dedup();
    names.into_iter().map(|name| section(name, by_name(name), old, new)).collect()
}

/// The section of experiment `name` (`experiment`: its registry entry, if this build has it).
fn section(name: &str, experiment: Option<&dyn Experiment>, old: &[Record], new: &[Record]) -> Section {
    let axis = experiment.map_or(XAxis::Threads, |e| e.x_axis());
    let metric = experiment.map_or(Metric::OPS_PER_SEC, |e| e.metric());
    let ids = experiment.map(|e| e.ids()).unwrap_or_default();
    // A point's value, and the host's round trip when its run measured it.
    type Measured = (Spread, Option<f64>);
    let points = |records: &[Record]| -> BTreeMap<Point, Measured> {
        records
            .iter()
            .filter(|r| r.experiment == name)
            .filter_map(|r| {
                let rank = ids.iter().position(|id| *id == r.impl_id).unwrap_or(ids.len());
                let point = Point { rank, id: r.impl_id.clone(), threads: r.threads, x: axis.value(r)? };
                let round_trip = r.extra.get(ROUND_TRIP_FIELD).and_then(Value::as_f64);
                Some((point, (Spread::of(metric, r)?, round_trip)))
            })
            .collect()
    };
    let (old, new) = (points(old), points(new));
    let label = |p: &Point| match axis {
        XAxis::Threads => format!("{}T", p.threads),
        XAxis::Param { .. } => format!("{}T {}", p.threads, axis.heading(p.x)),
    };
    let only = |a: &BTreeMap<Point, Measured>, b: &BTreeMap<Point, Measured>| -> Vec<String> {
        a.keys().filter(|p| !b.contains_key(p)).map(|p| format!("{} at {}", p.id, label(p))).collect()
    };
    let rows = old
        .iter()
        .filter_map(|(p, &(o, old_trip))| {
            let &(n, new_trip) = new.get(p)?;
            let ratio = Ratio::of(metric.higher_is_better, o, n);
            let round_trips = old_trip.zip(new_trip).filter(|_| metric.timed);
            Some(Row { id: p.id.clone(), point: label(p), old: o, new: n, ratio, round_trips })
        })
        .collect();
    Section { experiment: name.to_owned(), metric, rows, added: only(&new, &old), removed: only(&old, &new) }
}

/// The chart of experiment `name` with each id's curve from both runs, `id (old)` beside
/// `id (new)`, or `None` if this build does not know the experiment or neither run has a
/// point of it.
pub fn chart(name: &str, old: &[Record], new: &[Record]) -> Option<io::Result<String>> {
    let experiment = by_name(name)?;
    let (axis, metric, ids) = (experiment.x_axis(), experiment.metric(), experiment.ids());
    // Sorted by (id rank, label, run): each id's old curve next to its new one, in the
    // experiment's id order, so their legend entries sit together.
    let mut series: Vec<(usize, String, usize, Series)> = Vec::new();
    for (run, records) in [old, new].into_iter().enumerate() {
        let records: Vec<Record> = records.iter().filter(|r| r.experiment == name).cloned().collect();
        for s in group_series(&records, axis, metric) {
            // A label is the id, or the id and ` (NT)` for a swept experiment.
            let id = s.label.split(" (").next().unwrap_or_default();
            let rank = ids.iter().position(|i| *i == id).unwrap_or(ids.len());
            series.push((rank, s.label.clone(), run, s));
        }
    }
    if series.is_empty() {
        return None;
    }
    series.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
    let series: Vec<Series> = series
        .into_iter()
        .map(|(_, label, run, s)| Series { label: format!("{label} ({})", ["old", "new"][run]), ..s })
        .collect();
    Some(render_chart(experiment, &format!("{name}: old and new"), &series))
}

/// Writes `compare-<experiment>.svg` into `dir` for every experiment [`chart`] draws; returns
/// the file names by experiment.
fn write_charts(dir: &Path, old: &[Record], new: &[Record]) -> io::Result<BTreeMap<String, String>> {
    let mut names: Vec<&str> = old.iter().chain(new).map(|r| r.experiment.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut charts = BTreeMap::new();
    for name in names {
        if let Some(svg) = chart(name, old, new) {
            let file = format!("compare-{name}.svg");
            let path = dir.join(&file);
            fs::write(&path, svg?)
                .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
            charts.insert(name.to_owned(), file);
        }
    }
    Ok(charts)
}

/// `1.23x`.
fn times(ratio: f64) -> String {
    format!("{ratio:.2}x")
}

/// A section's title line.
fn title(section: &Section) -> String {
    let better = if section.metric.higher_is_better { "higher is better" } else { "lower is better" };
    format!(
        "{} ({}, {better}; ratio new/old oriented: above 1.00x is better)",
        section.experiment, section.metric.label
    )
}

/// The cells of a section's table, header first.
fn cells(section: &Section) -> Vec<Vec<String>> {
    let header =
        ["impl", "point", "old", "new", "ratio", "band", "change", "round trip ns"].map(str::to_owned).to_vec();
    let rows = section.rows.iter().map(|row| {
        let (ratio, band) = row.ratio.map_or(("-".to_owned(), "-".to_owned()), |r| {
            (times(r.ratio), format!("{}..{}", times(r.worst), times(r.best)))
        });
        vec![
            row.id.clone(),
            row.point.clone(),
            format_eng(row.old.value),
            format_eng(row.new.value),
            ratio,
            band,
            if row.host_differs() {
                format!("{} (host differs)", row.change().word())
            } else {
                row.change().word().to_owned()
            },
            row.round_trips.map_or("-".to_owned(), |(old, new)| format!("{old:.0} / {new:.0}")),
        ]
    });
    std::iter::once(header).chain(rows).collect()
}

/// `N points in both runs: a better, b worse, c within noise (, d not comparable); e added, f
/// removed.`
fn summary(sections: &[Section]) -> String {
    let rows: Vec<&Row> = sections.iter().flat_map(|s| &s.rows).collect();
    let count = |c: Change| rows.iter().filter(|r| r.change() == c).count();
    let not_comparable = match count(Change::NotComparable) {
        0 => String::new(),
        n => format!(", {n} not comparable"),
    };
    let host_differs = match rows.iter().filter(|r| r.host_differs()).count() {
        0 => String::new(),
        n => format!(" ({n} of them measured while the host's round trip differed)"),
    };
    format!(
        "{} points in both runs{host_differs}: {} better, {} worse, {} within noise{not_comparable}; {} added, {} \
         removed.",
        rows.len(),
        count(Change::Better),
        count(Change::Worse),
        count(Change::WithinNoise),
        sections.iter().map(|s| s.added.len()).sum::<usize>(),
        sections.iter().map(|s| s.removed.len()).sum::<usize>(),
    )
}

/// The comparison as terminal text: a table per experiment, then the summary.
pub fn render_text(sections: &[Section]) -> String {
    let mut out = String::new();
    for section in sections {
        let _ = writeln!(out, "{}", title(section));
        if !section.rows.is_empty() {
            out.push_str(&oplog_table::align(&cells(section), 1));
        }
        for (what, points) in [("added", &section.added), ("removed", &section.removed)] {
            if !points.is_empty() {
                let _ = writeln!(out, "{what}: {}", points.join(", "));
            }
        }
        out.push('\n');
    }
    out.push_str(&summary(sections));
    out.push('\n');
    out
}

/// The comparison as `compare.md`: which runs, the summary, a table per experiment, and
/// under it the experiment's chart of both runs where `charts` names one (a file beside
/// the report).
pub fn render_markdown(old: &Path, new: &Path, sections: &[Section], charts: &BTreeMap<String, String>) -> String {
    let mut out = format!(
        "# oplog-bench compare\n\nOld: `{}`  \nNew: `{}`\n\nRatios are new/old, oriented: above 1.00x is better. \
         The band runs from the new run's worst repetition against the old run's best to its best against \
         the old run's worst; a change is better or worse only when the whole band is above or below 1.00x. \
         `host differs` marks a point the runs measured while the host's cache-line round trip (last column) \
         differed more than 2x: the host may explain its ratio.\n\n{}\n",
        old.display(),
        new.display(),
        summary(sections)
    );
    for section in sections {
        let _ = writeln!(out, "\n## {}\n", title(section));
        let mut rows = cells(section).into_iter();
        if section.rows.is_empty() {
            out.push_str("No point measured by both runs.\n");
        } else if let Some(header) = rows.next() {
            let _ = writeln!(out, "| {} |", header.join(" | "));
            let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
            for row in rows {
                let _ = writeln!(out, "| {} |", row.join(" | "));
            }
        }
        for (what, points) in [("Added", &section.added), ("Removed", &section.removed)] {
            if !points.is_empty() {
                let _ = writeln!(out, "\n{what}: {}.", points.join(", "));
            }
        }
        if let Some(file) = charts.get(&section.experiment) {
            let _ = writeln!(out, "\n![{}: old and new]({file})", section.experiment);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(value: f64, min: f64, max: f64) -> Spread {
        Spread { value, min, max }
    }

    /// A `counter` record (threads axis, ops/s) or, with `update_pct`, a `read-mix` one.
    fn record(experiment: &str, id: &str, threads: usize, update_pct: Option<u64>, s: Spread) -> Record {
        let line = serde_json::json!({
            "experiment": experiment, "impl": id, "threads": threads, "ops_per_sec": s.value,
            "min_ops_per_sec": s.min, "max_ops_per_sec": s.max, "reps": 3, "duration_ms": 5,
        });
        let mut record: Record = serde_json::from_value(line).unwrap();
        if let Some(pct) = update_pct {
            record = record.with("update_pct", pct);
        }
        record
    }

    #[test]
    fn throughput_ratios_are_new_over_old_with_the_worst_and_best_case_band() {
        let r = Ratio::of(true, spread(100.0, 90.0, 110.0), spread(150.0, 120.0, 165.0)).unwrap();
        assert_eq!((r.ratio, r.worst, r.best), (1.5, 120.0 / 110.0, 165.0 / 90.0));
        assert_eq!(r.change(), Change::Better);
        let r = Ratio::of(true, spread(100.0, 90.0, 110.0), spread(50.0, 40.0, 60.0)).unwrap();
        assert_eq!((r.ratio, r.worst, r.best), (0.5, 40.0 / 110.0, 60.0 / 90.0));
        assert_eq!(r.change(), Change::Worse);
        // A 5% gain whose band straddles 1 is noise.
        let r = Ratio::of(true, spread(100.0, 90.0, 110.0), spread(105.0, 95.0, 115.0)).unwrap();
        assert!(r.worst < 1.0 && r.best > 1.0, "{r:?}");
        assert_eq!(r.change(), Change::WithinNoise);
    }

    #[test]
    fn lower_is_better_ratios_are_oriented_old_over_new() {
        // Ticks per write fell from 100 to 50: twice as good.
        let r = Ratio::of(false, spread(100.0, 95.0, 105.0), spread(50.0, 45.0, 55.0)).unwrap();
        assert_eq!((r.ratio, r.worst, r.best), (2.0, 95.0 / 55.0, 105.0 / 45.0));
        assert_eq!(r.change(), Change::Better);
        let r = Ratio::of(false, spread(50.0, 45.0, 55.0), spread(100.0, 95.0, 105.0)).unwrap();
        assert_eq!((r.ratio, r.worst, r.best), (0.5, 45.0 / 105.0, 55.0 / 95.0));
        assert_eq!(r.change(), Change::Worse);
    }

    #[test]
    fn a_band_touching_one_is_noise_and_a_zero_value_is_not_comparable() {
        let r = Ratio::of(true, spread(100.0, 100.0, 100.0), spread(100.0, 100.0, 100.0)).unwrap();
        assert_eq!(r.change(), Change::WithinNoise);
        assert_eq!(Ratio::of(true, spread(0.0, 0.0, 0.0), spread(5.0, 4.0, 6.0)), None);
        assert_eq!(Ratio::of(false, spread(5.0, 4.0, 6.0), spread(0.0, 0.0, 0.0)), None);
    }

    #[test]
    fn spreads_come_from_the_recorded_extremes_or_the_metrics_own_fields() {
        let r = record("counter", "atomic", 1, None, spread(10.0, 8.0, 12.0));
        assert_eq!(Spread::of(Metric::OPS_PER_SEC, &r), Some(spread(10.0, 8.0, 12.0)));
        let bytes = Metric { key: "bytes_per_object", label: "bytes", higher_is_better: false, timed: false };
        assert_eq!(Spread::of(bytes, &r), None, "no value for the metric");
        let r = r.with("bytes_per_object", 64.0);
        assert_eq!(Spread::of(bytes, &r), Some(spread(64.0, 64.0, 64.0)), "no spread recorded");
        let r = r.with("min_bytes_per_object", 60.0).with("max_bytes_per_object", 70.0);
        assert_eq!(Spread::of(bytes, &r), Some(spread(64.0, 60.0, 70.0)));
    }

    #[test]
    fn parsing_skips_annexes_and_names_the_bad_line() {
        let good = crate::output::json::json_line(&record("counter", "atomic", 2, None, spread(3.0, 2.0, 4.0)));
        let text = format!("{good}\n{{\"annex\":\"calibration\",\"x\":1}}\n\n{good}\n");
        let records = parse(&text).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!((records[0].impl_id.as_str(), records[0].threads), ("atomic", 2));
        let (line, e) = parse(&format!("{good}\n{{\"experiment\":\"counter\"}}\n")).unwrap_err();
        assert_eq!(line, 2);
        assert!(e.starts_with("not a record: missing field"), "{e}");
        assert_eq!(parse("[1]").unwrap_err(), (1, "not a JSON object".to_owned()));
        assert!(parse(&format!("{good}\n{good}\nnope")).unwrap_err().1.starts_with("not JSON"));
    }

    #[test]
    fn points_match_by_id_threads_and_swept_value_and_the_rest_are_added_or_removed() {
        let s = spread(100.0, 95.0, 105.0);
        let fast = spread(200.0, 190.0, 210.0);
        let old = [
            record("counter", "mutex", 1, None, s),
            record("counter", "atomic", 1, None, s),
            record("counter", "atomic", 2, None, s),
            record("read-mix", "oplog", 1, Some(0), s),
            record("read-mix", "oplog", 1, Some(50), s),
        ];
        let new = [
            record("read-mix", "oplog", 1, Some(50), fast),
            record("read-mix", "oplog", 1, Some(100), s),
            record("counter", "atomic", 1, None, fast),
            record("counter", "mutex", 1, None, s),
            record("counter", "atomic", 4, None, s),
        ];
        let sections = compare(&old, &new);
        let names: Vec<&str> = sections.iter().map(|s| s.experiment.as_str()).collect();
        assert_eq!(names, ["counter", "read-mix"], "registry order");
        let counter = &sections[0];
        let rows: Vec<(&str, &str, Change)> =
            counter.rows.iter().map(|r| (r.id.as_str(), r.point.as_str(), r.change())).collect();
        // Rows follow the experiment's id order: atomic before mutex.
        assert_eq!(rows, [("atomic", "1T", Change::Better), ("mutex", "1T", Change::WithinNoise)]);
        assert_eq!(counter.added, ["atomic at 4T"]);
        assert_eq!(counter.removed, ["atomic at 2T"]);
        let read_mix = &sections[1];
        assert_eq!(read_mix.rows.len(), 1);
        assert_eq!((read_mix.rows[0].point.as_str(), read_mix.rows[0].ratio.unwrap().ratio), ("1T update_pct=50", 2.0));
        assert_eq!(read_mix.added, ["oplog at 1T update_pct=100"]);
        assert_eq!(read_mix.removed, ["oplog at 1T update_pct=0"]);

        let text = render_text(&sections);
        assert!(text.contains("2.00x  1.81x..2.21x  better"), "{text}");
        assert!(
            text.ends_with("3 points in both runs: 2 better, 0 worse, 1 within noise; 2 added, 2 removed.\n"),
            "{text}"
        );
        let charts = BTreeMap::from([("counter".to_owned(), "compare-counter.svg".to_owned())]);
        let md = render_markdown(Path::new("a"), Path::new("b"), &sections, &charts);
        assert!(md.contains("| atomic | 1T | 100 | 200 | 2.00x | 1.81x..2.21x | better |"), "{md}");
        assert!(md.contains("Removed: atomic at 2T."), "{md}");
        assert!(md.contains("![counter: old and new](compare-counter.svg)"), "{md}");
        assert!(!md.contains("compare-read-mix.svg"), "only the charts given are linked: {md}");

        // Each id's old curve sits next to its new one; an id one run lacks has one curve.
        let svg = chart("counter", &old, &new).unwrap().unwrap();
        let at = |label: &str| svg.find(label).unwrap_or_else(|| panic!("no {label} in the chart"));
        assert!(at("atomic (old)") < at("atomic (new)") && at("atomic (new)") < at("mutex (old)"));
        assert!(at("mutex (old)") < at("mutex (new)"));
        assert!(chart("no-such-experiment", &old, &new).is_none());
    }

    #[test]
    fn a_point_measured_while_the_host_differed_is_marked() {
        let (s, fast) = (spread(100.0, 95.0, 105.0), spread(200.0, 190.0, 210.0));
        let at = |r: Record, ns: f64| r.with(ROUND_TRIP_FIELD, ns);
        let old = [
            at(record("counter", "atomic", 1, None, s), 50.0),
            at(record("counter", "atomic", 2, None, s), 50.0),
            at(record("counter", "mutex", 1, None, s), 50.0),
            record("counter", "mutex", 2, None, s),
        ];
        let new = [
            at(record("counter", "atomic", 1, None, fast), 60.0),
            at(record("counter", "atomic", 2, None, fast), 400.0),
            at(record("counter", "mutex", 1, None, fast), 20.0),
            at(record("counter", "mutex", 2, None, fast), 400.0),
        ];
        let sections = compare(&old, &new);
        type Judged<'a> = (&'a str, &'a str, Change, bool, Option<(f64, f64)>);
        let rows: Vec<Judged<'_>> = sections[0]
            .rows
            .iter()
            .map(|r| (r.id.as_str(), r.point.as_str(), r.change(), r.host_differs(), r.round_trips))
            .collect();
        assert_eq!(
            rows,
            [
                ("atomic", "1T", Change::Better, false, Some((50.0, 60.0))),
                // Eight times slower transfers: judged, and marked.
                ("atomic", "2T", Change::Better, true, Some((50.0, 400.0))),
                // Faster ones too.
                ("mutex", "1T", Change::Better, true, Some((50.0, 20.0))),
                // A record without the figure (an older run) is judged as before.
                ("mutex", "2T", Change::Better, false, None),
            ]
        );
        let text = render_text(&sections);
        let line = text.lines().find(|l| l.starts_with("atomic     2T")).expect("the row");
        assert!(line.contains("better (host differs)") && line.ends_with("50 / 400"), "{text}");
        assert!(
            text.ends_with(
                "4 points in both runs (2 of them measured while the host's round trip differed): 4 better, 0 \
                 worse, 0 within noise; 0 added, 0 removed.\n"
            ),
            "{text}"
        );
        // A count of bytes does not move with the host: judged as always.
        let bytes = |n: f64, ns: f64| at(record("memory", "oplog", 1, None, s).with("bytes_per_object", n), ns);
        let memory = compare(&[bytes(24.0, 50.0)], &[bytes(32.0, 400.0)]);
        let row = &memory[0].rows[0];
        assert_eq!((row.change(), row.host_differs(), row.round_trips), (Change::Worse, false, None));
    }

    #[test]
    fn only_the_compare_subcommand_is_claimed() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let parsed = request(&args(&["oplog-bench", "compare", "a", "b", "--out", "c"])).unwrap();
        assert_eq!((parsed.old, parsed.new, parsed.out), ("a".into(), "b".into(), Some("c".into())));
        assert!(request(&args(&["oplog-bench", "counter", "compare"])).is_none());
        assert!(request(&args(&["oplog-bench"])).is_none());
    }
}
