//! The Prometheus text exposition format (version 0.0.4) of everything a recorder holds
//! ([`PerCoreRecorder::render`](crate::PerCoreRecorder::render)).
//!
//! Families are sorted by name; each has `# HELP` (the description, with its unit) when
//! described and `# TYPE`. Counters and gauges are one sample per key; histograms are
//! summaries: one sample per quantile of [`QUANTILES`] (NaN while empty, as Prometheus'
//! clients do), then `_sum` and `_count`.
//!
//! What the format cannot hold gets its escaping or a clear error:
//!
//! - label values and help text are escaped (`\\`, `\"` in label values, `\n`);
//! - a metric name with characters outside `[a-zA-Z0-9_:]`, or starting with a digit, has
//!   each such character replaced by `_` (and a leading `_` before a digit), as Prometheus'
//!   own client libraries do; label names likewise within `[a-zA-Z0-9_]`;
//! - keys that would then collide (the same name and labels, a name registered as two kinds,
//!   a label name twice, a summary's `quantile` label, another metric named like a summary's
//!   `_sum` or `_count`) cannot be told apart by a scraper: the first registered keeps the
//!   name, and each later one is left out with a [`RenderError`] naming both keys (in
//!   `render()`'s output, as a `#` comment line, which parsers ignore).

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write};

use metrics::Key;

use crate::storage::{Description, Kind, Snapshot};

/// The quantiles a histogram's summary reports.
pub const QUANTILES: [f64; 7] = [0.0, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0];

/// Metrics that [`PerCoreRecorder::try_render`](crate::PerCoreRecorder::try_render) had to
/// leave out, each with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderError {
    /// One line per metric left out.
    pub problems: Vec<String>,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} metric(s) cannot be rendered in the Prometheus text format: ", self.problems.len())?;
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for RenderError {}

/// `name` as a Prometheus metric name (`label`: as a label name, without `:`).
fn sanitize(name: &str, label: bool) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        out.push('_');
    }
    out.extend(
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || (c == ':' && !label) { c } else { '_' }),
    );
    out
}

/// `value` escaped for a quoted label value (`help`: for help text, where `"` stays).
fn escape(value: &str, help: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if !help => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

/// A sample value in the format's spelling (`NaN`, `+Inf`, `-Inf`).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{v:?}")
    }
}

/// What a series shows.
enum Value<'a> {
    Counter(u64),
    Gauge(f64),
    Summary(&'a crate::HistogramSnapshot),
}

/// One series: its rendered labels and its value.
struct Series<'a> {
    labels: Vec<(String, String)>,
    value: Value<'a>,
}

/// One metric family: its kind, the key that named it first, its series.
struct Family<'a> {
    kind: Kind,
    first: &'a Key,
    series: Vec<Series<'a>>,
    /// Each series' label set, sorted (the same labels in another order are the same
    /// series), and the key that has it.
    seen: HashMap<Vec<(String, String)>, &'a Key>,
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Counter => "counter",
        Kind::Gauge => "gauge",
        Kind::Histogram => "summary",
    }
}

/// `key` for an error message: its name and labels, quoted and escaped by `Debug`.
fn describe_key(key: &Key) -> String {
    let labels: Vec<String> = key.labels().map(|l| format!("{:?}={:?}", l.key(), l.value())).collect();
    format!("{:?}{{{}}}", key.name(), labels.join(","))
}

/// Renders `snapshot`; the error lists what had to be left out (the text is complete
/// otherwise, with a comment line per problem).
pub(crate) fn render(snapshot: &Snapshot) -> (String, Option<RenderError>) {
    let mut problems = Vec::new();
    let mut families: BTreeMap<String, Family<'_>> = BTreeMap::new();
    let metrics = snapshot
        .counters
        .iter()
        .map(|(k, v)| (Kind::Counter, k, Value::Counter(*v)))
        .chain(snapshot.gauges.iter().map(|(k, v)| (Kind::Gauge, k, Value::Gauge(*v))))
        .chain(snapshot.histograms.iter().map(|(k, h)| (Kind::Histogram, k, Value::Summary(h))));
    'metrics: for (kind, key, value) in metrics {
        let name = sanitize(key.name(), false);
        let mut labels: Vec<(String, String)> = Vec::new();
        for label in key.labels() {
            let label_name = sanitize(label.key(), true);
            if labels.iter().any(|(n, _)| *n == label_name) {
                problems.push(format!("{} has label {label_name:?} twice (after sanitizing)", describe_key(key)));
                continue 'metrics;
            }
            if kind == Kind::Histogram && label_name == "quantile" {
                problems.push(format!(
                    "{}: a histogram renders as a summary, whose `quantile` label is the format's own",
                    describe_key(key)
                ));
                continue 'metrics;
            }
            labels.push((label_name, escape(label.value(), false)));
        }
        let family = families.entry(name.clone()).or_insert_with(|| Family {
            kind,
            first: key,
            series: Vec::new(),
            seen: HashMap::new(),
        });
        if family.kind != kind {
            problems.push(format!(
                "{} ({}) and {} ({}) both render as {name:?}",
                describe_key(family.first),
                kind_name(family.kind),
                describe_key(key),
                kind_name(kind)
            ));
            continue;
        }
        let mut sorted = labels.clone();
        sorted.sort();
        if let Some(other) = family.seen.get(&sorted) {
            problems.push(format!(
                "{} and {} both render as the series {name:?} with the same labels",
                describe_key(other),
                describe_key(key)
            ));
            continue;
        }
        family.seen.insert(sorted, key);
        family.series.push(Series { labels, value });
    }
    // A summary's `_sum` and `_count` lines must not meet another family's.
    let summaries: Vec<String> =
        families.iter().filter(|(_, f)| f.kind == Kind::Histogram).map(|(n, _)| n.clone()).collect();
    for name in summaries {
        for suffix in ["_sum", "_count"] {
            let taken = format!("{name}{suffix}");
            if let Some(other) = families.remove(&taken) {
                problems.push(format!(
                    "{} renders as {taken:?}, which the summary of {} uses",
                    describe_key(other.first),
                    describe_key(families[&name].first)
                ));
            }
        }
    }

    let mut out = String::new();
    for (name, family) in &families {
        if family.series.is_empty() {
            continue;
        }
        let description = snapshot.descriptions.get(&(family.kind, family.first.name().to_owned()));
        if let Some(Description { unit, help }) = description {
            let mut text = escape(help, true);
            if let Some(unit) = unit {
                if !text.is_empty() {
                    text.push(' ');
                }
                let _ = write!(text, "(unit: {})", unit.as_str());
            }
            if !text.is_empty() {
                let _ = writeln!(out, "# HELP {name} {text}");
            }
        }
        let _ = writeln!(out, "# TYPE {name} {}", kind_name(family.kind));
        for series in &family.series {
            let line = |out: &mut String, suffix: &str, extra: Option<(&str, String)>, value: String| {
                let labels: Vec<String> = series
                    .labels
                    .iter()
                    .map(|(n, v)| format!("{n}=\"{v}\""))
                    .chain(extra.map(|(n, v)| format!("{n}=\"{v}\"")))
                    .collect();
                if labels.is_empty() {
                    let _ = writeln!(out, "{name}{suffix} {value}");
                } else {
                    let _ = writeln!(out, "{name}{suffix}{{{}}} {value}", labels.join(","));
                }
            };
            match &series.value {
                Value::Counter(v) => line(&mut out, "", None, v.to_string()),
                Value::Gauge(v) => line(&mut out, "", None, number(*v)),
                Value::Summary(h) => {
                    for q in QUANTILES {
                        line(&mut out, "", Some(("quantile", number(q))), number(h.quantile(q).unwrap_or(f64::NAN)));
                    }
                    line(&mut out, "_sum", None, number(h.sum()));
                    line(&mut out, "_count", None, h.count().to_string());
                }
            }
        }
    }
    for problem in &problems {
        let _ = writeln!(out, "# oplog-metrics: left out: {}", problem.replace('\n', "\\n"));
    }
    (out, (!problems.is_empty()).then_some(RenderError { problems }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_like_the_client_libraries_do() {
        assert_eq!(sanitize("http.requests-total", false), "http_requests_total");
        assert_eq!(sanitize("ns:name", false), "ns:name");
        assert_eq!(sanitize("ns:name", true), "ns_name");
        assert_eq!(sanitize("9lives", false), "_9lives");
        assert_eq!(sanitize("", false), "_");
        assert_eq!(sanitize("größe", false), "gr__e");
    }

    #[test]
    fn values_are_escaped() {
        assert_eq!(escape("a\\b\"c\nd", false), "a\\\\b\\\"c\\nd");
        assert_eq!(escape("a\\b\"c\nd", true), "a\\\\b\"c\\nd");
    }

    #[test]
    fn numbers_use_the_formats_spelling() {
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(1e300), "1e300");
        assert_eq!(number(-2.0), "-2.0");
    }
}
