//! Results: the [`Record`] of one measured point, and the [`Sink`] that shows and saves them.
//!
//! The sink receives records as experiments produce them. With `--json` it prints each one
//! at once as a JSON line ([`json`]); otherwise it prints a table per experiment when the
//! experiment ends ([`table`]). With `--out DIR` it also writes `DIR/<experiment>.csv`
//! ([`csv`]) and `DIR/<experiment>.svg` ([`plot`]). It drives the progress bar on stderr.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::experiments::{Experiment, XAxis};
use crate::harness::{Run, Throughput};

pub use annex::Annex;

pub mod annex;
pub mod csv;
pub mod json;
pub mod plot;
pub mod table;

/// One measured point.
///
/// Serialised (JSON and CSV) with the field names `experiment`, `impl`, `threads`,
/// `ops_per_sec`, `min_ops_per_sec`, `max_ops_per_sec`, `reps`, `duration_ms`, followed by
/// the experiment-specific fields of [`Record::extra`] at the top level.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    /// The experiment's [`name`](Experiment::name).
    pub experiment: String,
    /// The implementation's stable id.
    #[serde(rename = "impl")]
    pub impl_id: String,
    /// Number of worker threads.
    pub threads: usize,
    /// Median over repetitions of operations per second (all threads together).
    pub ops_per_sec: f64,
    /// Slowest repetition, ops/s.
    pub min_ops_per_sec: f64,
    /// Fastest repetition, ops/s.
    pub max_ops_per_sec: f64,
    /// Number of repetitions.
    pub reps: u32,
    /// Duration of each repetition in milliseconds.
    pub duration_ms: u64,
    /// Experiment-specific fields (`update_pct`, `bytes_per_object`, ...). Keys must not
    /// repeat the fixed field names above.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The fixed field names of a [`Record`], in output order.
pub const FIXED_FIELDS: [&str; 8] =
    ["experiment", "impl", "threads", "ops_per_sec", "min_ops_per_sec", "max_ops_per_sec", "reps", "duration_ms"];

impl Record {
    /// The record of `impl_id` measured by `run` with result `throughput`.
    pub fn new(experiment: &str, impl_id: &str, run: &Run, throughput: &Throughput) -> Self {
        Self {
            experiment: experiment.to_owned(),
            impl_id: impl_id.to_owned(),
            threads: run.threads,
            ops_per_sec: throughput.median,
            min_ops_per_sec: throughput.min,
            max_ops_per_sec: throughput.max,
            reps: run.reps,
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            extra: Map::new(),
        }
    }

    /// Adds the experiment-specific field `key`. Panics if `key` is a fixed field name.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        assert!(!FIXED_FIELDS.contains(&key), "extra field `{key}` would shadow a fixed record field");
        self.extra.insert(key.to_owned(), value.into());
        self
    }

    /// The record as a JSON object (fixed fields and extra fields at one level).
    pub fn to_json(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => unreachable!("a Record always serialises to a JSON object"),
        }
    }
}

/// One line of a plot or one row of a table: an implementation's values along the x axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend / row name: the impl id, plus ` (NT)` when a swept-parameter experiment ran at
    /// several thread counts.
    pub label: String,
    /// `(x, ops_per_sec)`, sorted by x.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// The value at `x`, if measured.
    pub fn at(&self, x: f64) -> Option<f64> {
        self.points.iter().find(|p| p.0 == x).map(|p| p.1)
    }
}

/// Groups records into series along `axis`, in order of first appearance. Records without a
/// value on the axis are skipped.
pub fn group_series(records: &[Record], axis: XAxis) -> Vec<Series> {
    let by_threads_too = matches!(axis, XAxis::Param { .. }) && records.iter().any(|r| r.threads != records[0].threads);
    let mut series: Vec<Series> = Vec::new();
    for record in records {
        let Some(x) = axis.value(record) else {
            continue;
        };
        let label =
            if by_threads_too { format!("{} ({}T)", record.impl_id, record.threads) } else { record.impl_id.clone() };
        let index = match series.iter().position(|s| s.label == label) {
            Some(i) => i,
            None => {
                series.push(Series { label, points: Vec::new() });
                series.len() - 1
            }
        };
        let points = &mut series[index].points;
        points.retain(|p| p.0 != x);
        points.push((x, record.ops_per_sec));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

/// The distinct x values of `series`, ascending.
pub fn x_values(series: &[Series]) -> Vec<f64> {
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// `value` in engineering notation with three significant digits: `950`, `12.3k`, `4.56M`,
/// `1.20G`.
pub fn format_eng(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    const PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    let magnitude = value.abs();
    let mut exp = ((magnitude.log10() / 3.0).floor() as i32).clamp(0, PREFIXES.len() as i32 - 1);
    let mut scaled = value / 1000f64.powi(exp);
    // Rounding to 3 significant digits can carry into the next prefix (999.7k → 1.00M).
    if scaled.abs() >= 999.5 && (exp as usize) < PREFIXES.len() - 1 {
        exp += 1;
        scaled /= 1000.0;
    }
    let digits = if scaled.abs() >= 99.95 {
        0
    } else if scaled.abs() >= 9.995 {
        1
    } else {
        2
    };
    let digits = if exp == 0 && scaled.fract() == 0.0 { 0 } else { digits };
    format!("{scaled:.digits$}{}", PREFIXES[exp as usize])
}

/// What the sink produces besides the progress bar.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinkOptions {
    /// JSON lines on stdout instead of tables.
    pub json: bool,
    /// Directory for `<experiment>.csv` and `<experiment>.svg`; created if missing.
    pub out_dir: Option<PathBuf>,
}

/// Collects records, prints them (table or JSON lines), writes CSV and SVG files, and shows
/// progress.
pub struct Sink {
    options: SinkOptions,
    stdout: Box<dyn Write>,
    progress: ProgressBar,
    current: Option<Current>,
}

/// The experiment in progress and its records so far.
struct Current {
    experiment: &'static dyn Experiment,
    records: Vec<Record>,
    annexes: Vec<Annex>,
}

impl Sink {
    /// A sink printing to stdout, with a progress bar over `total_points` points on stderr
    /// (hidden when stderr is not a terminal).
    pub fn new(options: SinkOptions, total_points: u64) -> Self {
        let progress = ProgressBar::with_draw_target(Some(total_points), ProgressDrawTarget::stderr());
        progress.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} {wide_msg}")
                .expect("valid progress template"),
        );
        Self::with_writer(options, Box::new(io::stdout()), progress)
    }

    /// A sink printing to `stdout` and reporting progress on `progress` (tests pass a buffer
    /// and [`ProgressBar::hidden`]).
    pub fn with_writer(options: SinkOptions, stdout: Box<dyn Write>, progress: ProgressBar) -> Self {
        Self { options, stdout, progress, current: None }
    }

    /// The directory `--out` names, if any (experiments that write files of their own put
    /// them there).
    pub fn out_dir(&self) -> Option<&Path> {
        self.options.out_dir.as_deref()
    }

    /// Starts collecting the records of `experiment`.
    pub fn begin(&mut self, experiment: &'static dyn Experiment) {
        self.current = Some(Current { experiment, records: Vec::new(), annexes: Vec::new() });
    }

    /// Shows which point is being measured now.
    pub fn point(&mut self, impl_id: &str, threads: usize) {
        let name = self.current.as_ref().map_or("", |c| c.experiment.name());
        let unit = if threads == 1 { "thread" } else { "threads" };
        self.progress.set_message(format!("{name}: {impl_id}, {threads} {unit}"));
    }

    /// Accepts one measured point: prints it at once with `--json`, keeps it for the table
    /// and files, and advances the progress bar. Panics outside `begin`..`end`.
    pub fn push(&mut self, record: Record) -> io::Result<()> {
        if self.options.json {
            let line = json::json_line(&record);
            let stdout = &mut self.stdout;
            self.progress.suspend(|| writeln!(stdout, "{line}").and_then(|()| stdout.flush()))?;
        }
        self.current.as_mut().expect("Sink::push outside begin/end").records.push(record);
        self.progress.inc(1);
        Ok(())
    }

    /// Accepts an annex of the current experiment: prints its rows at once with `--json`,
    /// keeps it for the text output and files. Panics outside `begin`..`end`.
    pub fn annex(&mut self, annex: Annex) -> io::Result<()> {
        let current = self.current.as_mut().expect("Sink::annex outside begin/end");
        if self.options.json {
            let lines = annex.json_lines(current.experiment.name());
            let stdout = &mut self.stdout;
            self.progress
                .suspend(|| lines.iter().try_for_each(|l| writeln!(stdout, "{l}")).and_then(|()| stdout.flush()))?;
        }
        current.annexes.push(annex);
        Ok(())
    }

    /// Finishes the current experiment: prints its table (without `--json`) and writes its
    /// CSV and SVG into the output directory, if any (not for an experiment that pushed only
    /// annexes).
    pub fn end(&mut self) -> io::Result<()> {
        let Some(current) = self.current.take() else {
            return Ok(());
        };
        let experiment = current.experiment;
        let mut written = Vec::new();
        if let Some(dir) = &self.options.out_dir {
            if !current.records.is_empty() {
                written = write_files(dir, experiment, &current.records)?;
            }
            for annex in &current.annexes {
                let path = dir.join(format!("{}-{}.csv", experiment.name(), annex.name));
                let mut text = Vec::new();
                annex.write_csv(&mut text)?;
                fs::write(&path, text)?;
                written.push(path);
            }
        }
        if !self.options.json {
            let mut text =
                if current.records.is_empty() { String::new() } else { table::render(experiment, &current.records) };
            for annex in &current.annexes {
                text.push('\n');
                text.push_str(&annex.render());
            }
            for path in &written {
                text.push_str(&format!("wrote {}\n", path.display()));
            }
            text.push('\n');
            let stdout = &mut self.stdout;
            self.progress.suspend(|| stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()))?;
        }
        Ok(())
    }

    /// Removes the progress bar.
    pub fn finish(self) {
        self.progress.finish_and_clear();
    }
}

/// Writes `<name>.csv` and `<name>.svg` for `experiment` into `dir` (creating it); returns the
/// paths written.
pub fn write_files(dir: &Path, experiment: &dyn Experiment, records: &[Record]) -> io::Result<Vec<PathBuf>> {
    fs::create_dir_all(dir)?;
    let csv_path = dir.join(format!("{}.csv", experiment.name()));
    let mut csv_text = Vec::new();
    csv::write(records, &mut csv_text)?;
    fs::write(&csv_path, csv_text)?;

    let svg_path = dir.join(format!("{}.svg", experiment.name()));
    let axis = experiment.x_axis();
    let title = format!("{}: {}", experiment.name(), experiment.description());
    let svg = plot::render_svg(&title, axis.label(), &group_series(records, axis)).map_err(io::Error::other)?;
    fs::write(&svg_path, svg)?;
    Ok(vec![csv_path, svg_path])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    pub(crate) fn record(impl_id: &str, threads: usize, ops: f64) -> Record {
        let placement = Placement::unpinned();
        let run = Run { threads, duration: Duration::from_millis(20), reps: 1, placement: &placement };
        Record::new("test", impl_id, &run, &Throughput::from_samples(vec![ops]))
    }

    #[test]
    fn engineering_notation() {
        assert_eq!(format_eng(0.0), "0");
        assert_eq!(format_eng(950.0), "950");
        assert_eq!(format_eng(1.5), "1.50");
        assert_eq!(format_eng(12_345.0), "12.3k");
        assert_eq!(format_eng(4_560_000.0), "4.56M");
        assert_eq!(format_eng(123_456_789.0), "123M");
        assert_eq!(format_eng(999_700.0), "1.00M");
        assert_eq!(format_eng(1.2e9), "1.20G");
    }

    #[test]
    fn series_group_by_impl_in_first_seen_order() {
        let records = vec![record("b", 2, 20.0), record("a", 1, 1.0), record("b", 1, 10.0), record("a", 2, 2.0)];
        let series = group_series(&records, XAxis::Threads);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].label, "b");
        assert_eq!(series[0].points, vec![(1.0, 10.0), (2.0, 20.0)]);
        assert_eq!(series[1].at(2.0), Some(2.0));
        assert_eq!(x_values(&series), vec![1.0, 2.0]);
    }

    #[test]
    fn param_axis_splits_by_threads_when_needed() {
        let axis = XAxis::Param { key: "update_pct", label: "updates (%)" };
        let records = vec![
            record("a", 1, 1.0).with("update_pct", 10),
            record("a", 2, 2.0).with("update_pct", 10),
            record("a", 2, 3.0).with("update_pct", 50),
            record("a", 2, 9.0), // no x value: skipped
        ];
        let series = group_series(&records, axis);
        let labels: Vec<_> = series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["a (1T)", "a (2T)"]);
        assert_eq!(series[1].points, vec![(10.0, 2.0), (50.0, 3.0)]);
    }

    /// A `Write` whose bytes stay readable after the sink took ownership of it.
    #[derive(Clone, Default)]
    struct SharedBuf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl Write for SharedBuf {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl SharedBuf {
        fn text(&self) -> String {
            String::from_utf8(self.0.borrow().clone()).unwrap()
        }
    }

    static COUNTER: crate::experiments::counter::Counter = crate::experiments::counter::Counter;

    #[test]
    fn json_sink_streams_each_record_and_writes_files() {
        let dir = std::env::temp_dir().join(format!("oplog-bench-sink-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let buf = SharedBuf::default();
        let options = SinkOptions { json: true, out_dir: Some(dir.clone()) };
        let mut sink = Sink::with_writer(options, Box::new(buf.clone()), ProgressBar::hidden());
        sink.begin(&COUNTER);
        sink.point("atomic", 1);
        sink.push(record("atomic", 1, 5.0)).unwrap();
        assert_eq!(buf.text().lines().count(), 1, "printed at push, not at end");
        sink.push(record("atomic", 2, 7.0)).unwrap();
        sink.end().unwrap();
        sink.finish();
        let text = buf.text();
        assert_eq!(text.lines().count(), 2, "JSON mode prints nothing but records");
        assert!(fs::read_to_string(dir.join("counter.csv")).unwrap().lines().count() == 3);
        assert!(fs::read_to_string(dir.join("counter.svg")).unwrap().starts_with("<svg"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn table_sink_prints_at_end() {
        let buf = SharedBuf::default();
        let mut sink = Sink::with_writer(SinkOptions::default(), Box::new(buf.clone()), ProgressBar::hidden());
        sink.begin(&COUNTER);
        sink.push(record("atomic", 1, 5.0e6)).unwrap();
        assert_eq!(buf.text(), "");
        sink.end().unwrap();
        let text = buf.text();
        assert!(text.starts_with("counter: "), "{text}");
        assert!(text.contains("atomic  5.00M"), "{text}");
    }

    #[test]
    #[should_panic(expected = "would shadow a fixed record field")]
    fn extra_cannot_shadow_fixed_fields() {
        let _ = record("a", 1, 1.0).with("threads", 3);
    }
}
