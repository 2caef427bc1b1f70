//! Results: the [`Record`] of one measured point, and the [`Sink`] that shows and saves them.
//!
//! The sink receives records as experiments produce them. With `--json` it prints each one
//! at once as a JSON line ([`json`]); otherwise it prints a table per experiment when the
//! experiment ends ([`table`]). With an output directory (`--out DIR`, or `all`'s default)
//! it also writes `DIR/<experiment>.csv` ([`csv`]), `DIR/<experiment>.svg` ([`plot`]), a
//! CSV per annex ([`annex`]), `DIR/all.jsonl` (every JSON line) and, at the end,
//! `DIR/report.md` ([`report`]). It drives the progress bar on stderr.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::experiments::{Experiment, Metric, XAxis};
use crate::harness::{Run, Throughput};

pub use annex::Annex;

pub mod annex;
pub mod csv;
pub mod json;
pub mod plot;
pub mod report;
pub mod table;
pub mod verdict;

/// One measured point.
///
/// Serialised (JSON and CSV) with the field names `experiment`, `impl`, `threads`,
/// `ops_per_sec`, `min_ops_per_sec`, `max_ops_per_sec`, `reps`, `duration_ms`, followed by
/// the experiment-specific fields of [`Record::extra`] at the top level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The record of `impl_id` measured by `run` with result `throughput` (what the
    /// throughput noted, [`Throughput::notes`], as extra fields).
    pub fn new(experiment: &str, impl_id: &str, run: &Run, throughput: &Throughput) -> Self {
        let record = Self {
            experiment: experiment.to_owned(),
            impl_id: impl_id.to_owned(),
            threads: run.threads,
            ops_per_sec: throughput.median,
            min_ops_per_sec: throughput.min,
            max_ops_per_sec: throughput.max,
            reps: run.reps,
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            extra: Map::new(),
        };
        throughput.notes.iter().fold(record, |r, (key, value)| r.with(key, value.clone()))
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

/// Groups records into series of `metric` along `axis`, in order of first appearance.
/// Records without a value on the axis or for the metric are skipped.
pub fn group_series(records: &[Record], axis: XAxis, metric: Metric) -> Vec<Series> {
    let by_threads_too = matches!(axis, XAxis::Param { .. }) && records.iter().any(|r| r.threads != records[0].threads);
    let mut series: Vec<Series> = Vec::new();
    for record in records {
        let (Some(x), Some(y)) = (axis.value(record), metric.value(record)) else {
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
        points.push((x, y));
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

/// `x` rounded to `decimals` decimal places, for the fields of records and annexes.
pub fn round(decimals: i32, x: f64) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// What the sink produces besides the progress bar.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinkOptions {
    /// JSON lines on stdout instead of tables.
    pub json: bool,
    /// Directory for `<experiment>.csv`, `<experiment>.svg`, annex CSVs, extra figures,
    /// `all.jsonl` and `report.md`; created if missing.
    pub out_dir: Option<PathBuf>,
    /// The run is `--quick`: tables and the report say its figures are indicative.
    pub quick: bool,
}

/// Collects records, prints them (table or JSON lines), writes the files of the output
/// directory, and shows progress.
pub struct Sink {
    options: SinkOptions,
    stdout: Box<dyn Write>,
    progress: ProgressBar,
    current: Option<Current>,
    /// `all.jsonl` in the output directory: every record and annex row, as printed.
    jsonl: Option<io::BufWriter<fs::File>>,
    /// The report's sections so far (with an output directory).
    sections: Vec<report::Section>,
    /// The report's description of the cores, taken before any experiment ran.
    cores: String,
    started: Instant,
    /// Measures the host's round trip around and between the points ([`Sink::watch_host`]).
    watch: Option<crate::host::Watch>,
}

/// The experiment in progress and its records so far.
struct Current {
    experiment: &'static dyn Experiment,
    records: Vec<Record>,
    annexes: Vec<Annex>,
    /// Extra figures written so far (file names in the output directory).
    figures: Vec<String>,
    started: Instant,
}

impl Sink {
    /// A sink printing to stdout, with a progress bar over `total_points` points on stderr
    /// (hidden when stderr is not a terminal). Creates the output directory, if any, and
    /// its `all.jsonl`.
    pub fn new(options: SinkOptions, total_points: u64) -> io::Result<Self> {
        let progress = ProgressBar::with_draw_target(Some(total_points), ProgressDrawTarget::stderr());
        progress.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} {wide_msg}")
                .expect("valid progress template"),
        );
        Self::with_writer(options, Box::new(io::stdout()), progress)
    }

    /// A sink printing to `stdout` and reporting progress on `progress` (tests pass a buffer
    /// and [`ProgressBar::hidden`]).
    pub fn with_writer(options: SinkOptions, stdout: Box<dyn Write>, progress: ProgressBar) -> io::Result<Self> {
        let jsonl = match &options.out_dir {
            Some(dir) => {
                create_dir(dir)?;
                let path = dir.join(JSONL_FILE);
                Some(io::BufWriter::new(fs::File::create(&path).map_err(|e| naming(&path, "create", e))?))
            }
            None => None,
        };
        Ok(Self {
            options,
            stdout,
            progress,
            current: None,
            jsonl,
            sections: Vec::new(),
            cores: report::cores_line(),
            started: Instant::now(),
            watch: None,
        })
    }

    /// Measures the host's cache-line round trip with `watch` before each experiment,
    /// between its points, and after it: each record gets the last figure as
    /// `round_trip_ns`, and each experiment the `host` annex (module `host`).
    pub fn watch_host(&mut self, watch: crate::host::Watch) {
        self.watch = Some(watch);
    }

    /// The directory `--out` names, if any (experiments that write files of their own put
    /// them there).
    pub fn out_dir(&self) -> Option<&Path> {
        self.options.out_dir.as_deref()
    }

    /// Starts collecting the records of `experiment`.
    pub fn begin(&mut self, experiment: &'static dyn Experiment) {
        self.current = Some(Current {
            experiment,
            records: Vec::new(),
            annexes: Vec::new(),
            figures: Vec::new(),
            started: Instant::now(),
        });
        if let Some(watch) = &mut self.watch {
            watch.begin();
        }
    }

    /// Shows which point is being measured now (and lets the host's watch measure first).
    pub fn point(&mut self, impl_id: &str, threads: usize) {
        if let Some(watch) = &mut self.watch {
            watch.between(impl_id, threads);
        }
        let name = self.current.as_ref().map_or("", |c| c.experiment.name());
        let unit = if threads == 1 { "thread" } else { "threads" };
        self.progress.set_message(format!("{name}: {impl_id}, {threads} {unit}"));
    }

    /// Prints `lines` at once with `--json`, and appends them to `all.jsonl`.
    fn emit_json(&mut self, lines: &[String]) -> io::Result<()> {
        if let Some(jsonl) = &mut self.jsonl {
            lines.iter().try_for_each(|l| writeln!(jsonl, "{l}"))?;
            jsonl.flush()?;
        }
        if self.options.json {
            let stdout = &mut self.stdout;
            self.progress
                .suspend(|| lines.iter().try_for_each(|l| writeln!(stdout, "{l}")).and_then(|()| stdout.flush()))?;
        }
        Ok(())
    }

    /// Accepts one measured point: prints it at once with `--json`, keeps it for the table
    /// and files, and advances the progress bar. Panics outside `begin`..`end`.
    pub fn push(&mut self, mut record: Record) -> io::Result<()> {
        if let Some(ns) = self.watch.as_ref().and_then(crate::host::Watch::latest) {
            record.extra.insert(ROUND_TRIP_FIELD.to_owned(), round(1, ns).into());
        }
        let current = self.current.as_ref().expect("Sink::push outside begin/end");
        assert!(
            current.experiment.ids().contains(&record.impl_id.as_str()),
            "{} pushed a record of `{}`, which its `ids` do not list",
            current.experiment.name(),
            record.impl_id
        );
        self.emit_json(&[json::json_line(&record)])?;
        self.current.as_mut().expect("checked above").records.push(record);
        self.progress.inc(1);
        Ok(())
    }

    /// Accepts an annex of the current experiment: prints its rows at once with `--json`,
    /// keeps it for the text output and files. Panics outside `begin`..`end`.
    pub fn annex(&mut self, annex: Annex) -> io::Result<()> {
        let current = self.current.as_ref().expect("Sink::annex outside begin/end");
        self.emit_json(&annex.json_lines(current.experiment.name()))?;
        self.current.as_mut().expect("checked above").annexes.push(annex);
        Ok(())
    }

    /// Accepts an extra plot of the current experiment (besides the one drawn from its
    /// records), written as `<experiment>-<name>.svg` when there is an output directory
    /// and linked from the report. Panics outside `begin`..`end`.
    pub fn figure(&mut self, name: &str, chart: &plot::Chart, series: &[Series]) -> io::Result<()> {
        let current = self.current.as_mut().expect("Sink::figure outside begin/end");
        if let Some(dir) = &self.options.out_dir {
            let file = format!("{}-{name}.svg", current.experiment.name());
            let svg = plot::render_svg(chart, series).map_err(io::Error::other)?;
            write_file(&dir.join(&file), svg)?;
            current.figures.push(file);
        }
        Ok(())
    }

    /// Records a figure the current experiment wrote into the output directory itself
    /// (`file`, a name in that directory, such as the commuter's heatmaps), so that it is
    /// listed and linked from the report like the ones [`Sink::figure`] writes. Panics
    /// outside `begin`..`end`, or without an output directory.
    pub fn wrote(&mut self, file: &str) {
        assert!(self.options.out_dir.is_some(), "Sink::wrote without an output directory");
        self.current.as_mut().expect("Sink::wrote outside begin/end").figures.push(file.to_owned());
    }

    /// Finishes the current experiment: prints its table (without `--json`), writes its
    /// CSV and SVG into the output directory, if any (not for an experiment that pushed
    /// only annexes), and keeps its report section.
    pub fn end(&mut self) -> io::Result<()> {
        if self.current.is_some()
            && let Some(annex) = self.watch.as_mut().and_then(crate::host::Watch::end)
        {
            self.annex(annex)?;
        }
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
                write_file(&path, text)?;
                written.push(path);
            }
            written.extend(current.figures.iter().map(|f| dir.join(f)));
        }
        let verdict = verdict::judge(experiment, &current.records);
        let table = if current.records.is_empty() {
            String::new()
        } else {
            table::render(experiment, &current.records, self.options.quick)
        };
        let annexes: Vec<String> = current.annexes.iter().map(Annex::render).collect();
        if !self.options.json {
            let mut text = table.clone();
            text.push_str(&verdict::render(&verdict));
            for annex in &annexes {
                text.push('\n');
                text.push_str(annex);
            }
            for path in &written {
                text.push_str(&format!("wrote {}\n", path.display()));
            }
            text.push('\n');
            let stdout = &mut self.stdout;
            self.progress.suspend(|| stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()))?;
        }
        if self.options.out_dir.is_some() {
            let file_name = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned());
            self.sections.push(report::Section {
                name: experiment.name().to_owned(),
                description: experiment.description().to_owned(),
                table,
                annexes,
                files: written.iter().filter_map(file_name).collect(),
                verdict,
                elapsed: current.started.elapsed(),
            });
        }
        Ok(())
    }

    /// Removes the progress bar and, with an output directory, writes `report.md` there
    /// (header from [`report::Header::collect`]) and says where on stderr.
    pub fn finish(mut self) -> io::Result<()> {
        self.progress.finish_and_clear();
        if let Some(jsonl) = &mut self.jsonl {
            jsonl.flush()?;
        }
        let Some(dir) = &self.options.out_dir else {
            return Ok(());
        };
        let report = report::Report {
            header: report::Header::collect(
                self.started.elapsed(),
                std::mem::take(&mut self.cores),
                self.options.quick,
            ),
            sections: std::mem::take(&mut self.sections),
        };
        let path = dir.join(REPORT_FILE);
        write_file(&path, report.render())?;
        eprintln!("oplog-bench: report written to {}", path.display());
        Ok(())
    }
}

/// Checks up front that files can be written into `dir` (creating it if missing): creates
/// and removes a probe file, so that an unusable `--out` is reported before any run, naming
/// the path.
///
/// # Errors
/// When the directory cannot be created or a file in it cannot be written; the error names
/// the path.
pub fn probe_dir(dir: &Path) -> io::Result<()> {
    create_dir(dir)?;
    let probe = dir.join(format!(".oplog-bench-probe-{}", std::process::id()));
    write_file(&probe, [])?;
    fs::remove_file(&probe).map_err(|e| naming(&probe, "remove", e))
}

/// `fs::create_dir_all`, with an error that names the directory.
fn create_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir).map_err(|e| naming(dir, "create the directory", e))
}

/// `fs::write`, with an error that names the file.
fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> io::Result<()> {
    fs::write(path, contents).map_err(|e| naming(path, "write", e))
}

/// `e`, with what was being done to which path.
fn naming(path: &Path, what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
}

/// Every JSON line of a run, in the output directory.
pub const JSONL_FILE: &str = "all.jsonl";

/// The field of every record that holds the host's cache-line round trip measured last
/// before the record was made, in nanoseconds (module `host`; absent where it could not be
/// measured).
pub const ROUND_TRIP_FIELD: &str = "round_trip_ns";

/// The Markdown report, in the output directory.
pub const REPORT_FILE: &str = "report.md";

/// Writes `<name>.csv` and `<name>.svg` for `experiment` into `dir` (creating it); returns the
/// paths written.
pub fn write_files(dir: &Path, experiment: &dyn Experiment, records: &[Record]) -> io::Result<Vec<PathBuf>> {
    create_dir(dir)?;
    let csv_path = dir.join(format!("{}.csv", experiment.name()));
    let mut csv_text = Vec::new();
    csv::write(records, &mut csv_text)?;
    write_file(&csv_path, csv_text)?;

    let svg_path = dir.join(format!("{}.svg", experiment.name()));
    let title = format!("{}: {}", experiment.name(), experiment.description());
    let series = group_series(records, experiment.x_axis(), experiment.metric());
    write_file(&svg_path, render_chart(experiment, &title, &series)?)?;
    Ok(vec![csv_path, svg_path])
}

/// `series` as an SVG chart with `experiment`'s axes, scales and metric.
pub fn render_chart(experiment: &dyn Experiment, title: &str, series: &[Series]) -> io::Result<String> {
    let chart = plot::Chart {
        title,
        x_label: experiment.x_axis().label(),
        y_label: experiment.metric().label,
        x_scale: experiment.x_scale(),
        log_y: experiment.log_y(),
    };
    plot::render_svg(&chart, series).map_err(io::Error::other)
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
    fn a_record_carries_what_its_throughput_noted() {
        let placement = Placement::unpinned();
        let run = Run { threads: 2, duration: Duration::from_millis(20), reps: 1, placement: &placement };
        let noted = Throughput::from_samples(vec![5.0]).ended_in(Some(oplog::Representation::Direct));
        let json = Record::new("test", "oplog", &run, &noted).to_json();
        assert_eq!(json.get("ended_in"), Some(&Value::from("direct")));
        assert_eq!(record("mutex", 2, 5.0).to_json().get("ended_in"), None, "no field where nothing was noted");
        let json = Record::new("test", "oplog", &run, &noted.note("consumed_in_run", 0.5)).to_json();
        assert_eq!((json.get("ended_in"), json.get("consumed_in_run")), (Some(&"direct".into()), Some(&0.5.into())));
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
        let series = group_series(&records, XAxis::Threads, Metric::OPS_PER_SEC);
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
        let series = group_series(&records, axis, Metric::OPS_PER_SEC);
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

    use crate::experiments::counter::COUNTER;

    #[test]
    fn json_sink_streams_each_record_and_writes_files() {
        let dir = std::env::temp_dir().join(format!("oplog-bench-sink-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let buf = SharedBuf::default();
        let options = SinkOptions { json: true, out_dir: Some(dir.clone()), quick: false };
        let mut sink = Sink::with_writer(options, Box::new(buf.clone()), ProgressBar::hidden()).unwrap();
        sink.begin(&COUNTER);
        sink.point("atomic", 1);
        sink.push(record("atomic", 1, 5.0)).unwrap();
        assert_eq!(buf.text().lines().count(), 1, "printed at push, not at end");
        sink.push(record("atomic", 2, 7.0)).unwrap();
        let mut annex = Annex::new("extra", "an annex", &["k"]);
        annex.row(vec![serde_json::json!(1)]);
        sink.annex(annex).unwrap();
        let chart = plot::Chart { title: "t", x_label: "x", y_label: "y", x_scale: plot::Scale::Linear, log_y: false };
        sink.figure("model", &chart, &[Series { label: "m".into(), points: vec![(1.0, 1.0)] }]).unwrap();
        fs::write(dir.join("counter-own.svg"), "<svg/>").unwrap();
        sink.wrote("counter-own.svg");
        sink.end().unwrap();
        sink.finish().unwrap();
        let text = buf.text();
        assert_eq!(text.lines().count(), 3, "JSON mode prints nothing but records and annex rows");
        assert!(fs::read_to_string(dir.join("counter.csv")).unwrap().lines().count() == 3);
        assert!(fs::read_to_string(dir.join("counter.svg")).unwrap().starts_with("<svg"));
        assert!(fs::read_to_string(dir.join("counter-model.svg")).unwrap().starts_with("<svg"));
        assert_eq!(fs::read_to_string(dir.join(JSONL_FILE)).unwrap(), text, "all.jsonl holds every line");
        let report = fs::read_to_string(dir.join(REPORT_FILE)).unwrap();
        for link in
            ["(counter.svg)", "(counter.csv)", "(counter-extra.csv)", "(counter-model.svg)", "(counter-own.svg)"]
        {
            assert!(report.contains(link), "report lacks {link}:\n{report}");
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn table_sink_prints_at_end() {
        let buf = SharedBuf::default();
        let mut sink = Sink::with_writer(SinkOptions::default(), Box::new(buf.clone()), ProgressBar::hidden()).unwrap();
        sink.begin(&COUNTER);
        sink.push(record("atomic", 1, 5.0e6)).unwrap();
        assert_eq!(buf.text(), "");
        sink.end().unwrap();
        let text = buf.text();
        assert!(text.starts_with("counter: "), "{text}");
        assert!(text.contains("atomic  5.00M"), "{text}");
    }

    #[test]
    fn rounding() {
        assert_eq!(round(2, 149.65888), 149.66);
        assert_eq!(round(1, 70.46), 70.5);
        assert_eq!(round(0, 2.5), 3.0);
    }

    #[test]
    fn series_follow_the_metric() {
        let metric = Metric { key: "bytes_per_object", label: "bytes/object", higher_is_better: false, timed: false };
        let records = vec![
            record("plain", 1, 5.0).with("bytes_per_object", 8.0),
            record("plain", 2, 9.0).with("bytes_per_object", 8.0),
            record("other", 1, 5.0), // no value for the metric: skipped
        ];
        let series = group_series(&records, XAxis::Threads, metric);
        assert_eq!(series, vec![Series { label: "plain".into(), points: vec![(1.0, 8.0), (2.0, 8.0)] }]);
    }

    #[test]
    #[should_panic(expected = "would shadow a fixed record field")]
    fn extra_cannot_shadow_fixed_fields() {
        let _ = record("a", 1, 1.0).with("threads", 3);
    }
}
