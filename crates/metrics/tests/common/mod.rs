//! Shared by the integration tests: running code under a recorder on many threads, and
//! parsing `render()` back with a Prometheus text-format parser.

#![allow(dead_code)]

use std::collections::BTreeMap;

use openmetrics_parser::prometheus::parse_prometheus;
use openmetrics_parser::{PrometheusType, PrometheusValue};
use oplog_metrics::PerCoreRecorder;

/// Test sizes: smaller under Miri.
pub fn size(full: u64, miri: u64) -> u64 {
    if cfg!(miri) { miri } else { full }
}

/// Runs `f(thread)` on `threads` threads at once, each with `recorder` as its local recorder.
pub fn on_threads(recorder: &PerCoreRecorder, threads: usize, f: impl Fn(usize) + Sync) {
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || metrics::with_local_recorder(recorder, || f(t)));
        }
    });
}

/// One family of a parsed exposition.
#[derive(Debug)]
pub struct Family {
    /// `# TYPE`.
    pub kind: PrometheusType,
    /// `# HELP`, unescaped.
    pub help: String,
    /// Each sample by its labels (unescaped).
    pub samples: BTreeMap<BTreeMap<String, String>, PrometheusValue>,
}

/// `text` parsed as the Prometheus text format: families by name. Panics with the parser's
/// error and the text if it does not parse.
pub fn parse(text: &str) -> BTreeMap<String, Family> {
    let exposition = parse_prometheus(text).unwrap_or_else(|e| panic!("render() does not parse: {e}\n{text}"));
    exposition
        .families
        .into_iter()
        .map(|(name, family)| {
            let samples = family
                .iter_samples()
                .map(|s| {
                    let labels = s.get_labelset().expect("a sample's label set");
                    let labels = labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    (labels, s.value.clone())
                })
                .collect();
            (name, Family { kind: family.family_type.clone(), help: family.help.clone(), samples })
        })
        .collect()
}

/// Labels from pairs.
pub fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The number a counter, gauge or untyped sample holds.
pub fn number(value: &PrometheusValue) -> f64 {
    match value {
        PrometheusValue::Counter(c) => c.value.as_f64(),
        PrometheusValue::Gauge(n) | PrometheusValue::Unknown(n) => n.as_f64(),
        other => panic!("not a single number: {other:?}"),
    }
}
