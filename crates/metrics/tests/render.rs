//! `render()` parsed back with a Prometheus text-format parser: every metric, its labels,
//! help and unit, escaping, sanitized names, and the collisions reported as errors.

mod common;

use common::{Family, labels, number, on_threads, parse};
use metrics::{Key, Unit};
use openmetrics_parser::{PrometheusType, PrometheusValue};
use oplog_metrics::PerCoreRecorder;
use oplog_metrics::histogram::RELATIVE_ERROR;
use oplog_metrics::render::QUANTILES;

fn family<'a>(families: &'a std::collections::BTreeMap<String, Family>, name: &str) -> &'a Family {
    families.get(name).unwrap_or_else(|| panic!("no family {name:?} in {:?}", families.keys().collect::<Vec<_>>()))
}

#[test]
fn everything_registered_renders_and_parses_back() {
    let recorder = PerCoreRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        metrics::describe_counter!("requests_total", Unit::Count, "Requests served, by route.");
        metrics::describe_gauge!("temperature", "Degrees.\nMeasured \\ estimated.");
        metrics::describe_histogram!("latency_seconds", Unit::Seconds, "Time to answer.");
    });
    on_threads(&recorder, 4, |t| {
        for i in 0..250 {
            metrics::counter!("requests_total", "route" => "/", "method" => "GET").increment(1);
            metrics::histogram!("latency_seconds", "route" => "/").record(f64::from(i + 1) * 1e-3);
        }
        metrics::counter!("requests_total", "route" => "/admin", "method" => "POST").increment(t as u64);
    });
    metrics::with_local_recorder(&recorder, || {
        metrics::gauge!("temperature").set(21.5);
        metrics::gauge!("temperature").decrement(0.25);
        let _ = metrics::histogram!("empty_seconds");
    });

    let text = recorder.try_render().expect("nothing collides");
    let families = parse(&text);
    assert_eq!(families.len(), 4, "{text}");

    let requests = family(&families, "requests_total");
    assert_eq!(requests.kind, PrometheusType::Counter);
    assert_eq!(requests.help, "Requests served, by route. (unit: count)");
    assert_eq!(number(&requests.samples[&labels(&[("route", "/"), ("method", "GET")])]), 1000.0);
    assert_eq!(number(&requests.samples[&labels(&[("route", "/admin"), ("method", "POST")])]), 6.0);

    let temperature = family(&families, "temperature");
    assert_eq!(temperature.kind, PrometheusType::Gauge);
    assert_eq!(temperature.help, "Degrees.\nMeasured \\ estimated.", "help text is escaped and parses back");
    assert_eq!(number(&temperature.samples[&labels(&[])]), 21.25);

    let latency = family(&families, "latency_seconds");
    assert_eq!(latency.kind, PrometheusType::Summary);
    assert_eq!(latency.help, "Time to answer. (unit: seconds)");
    let PrometheusValue::Summary(summary) = &latency.samples[&labels(&[("route", "/")])] else {
        panic!("latency is not a summary: {:?}", latency.samples);
    };
    assert_eq!(summary.count, Some(1000));
    let sum = summary.sum.unwrap().as_f64();
    assert!((sum - 4.0 * 125.5 * 0.25).abs() < 1e-9, "sum {sum}");
    assert_eq!(summary.quantiles.len(), QUANTILES.len());
    for q in &summary.quantiles {
        // The samples are 1..=250 ms, each 4 times: the exact nearest-rank quantile.
        let exact = ((q.quantile * 250.0).ceil().max(1.0)) * 1e-3;
        let got = q.value.as_f64();
        assert!((got - exact).abs() <= exact * RELATIVE_ERROR, "quantile {}: {got} against {exact}", q.quantile);
    }
    let empty = family(&families, "empty_seconds");
    let PrometheusValue::Summary(empty) = &empty.samples[&labels(&[])] else { panic!("not a summary") };
    assert_eq!(empty.count, Some(0));
    assert!(empty.quantiles.iter().all(|q| q.value.as_f64().is_nan()), "no samples: NaN quantiles");
}

#[test]
fn label_values_are_escaped_and_names_sanitized() {
    let recorder = PerCoreRecorder::new();
    let nasty = "quote \" backslash \\ newline \n comma , brace } equals =";
    metrics::with_local_recorder(&recorder, || {
        metrics::counter!("http.requests-total", "path" => nasty, "user.agent" => "curl/8").increment(2);
        metrics::gauge!("9lives").set(f64::INFINITY);
        metrics::gauge!("ns:ratio").set(f64::NAN);
        metrics::gauge!("cold").set(f64::NEG_INFINITY);
        metrics::counter!("größe").increment(1);
    });
    let text = recorder.try_render().expect("sanitized names do not collide here");
    let families = parse(&text);
    let requests = family(&families, "http_requests_total");
    assert_eq!(
        number(&requests.samples[&labels(&[("path", nasty), ("user_agent", "curl/8")])]),
        2.0,
        "the value parses back unescaped:\n{text}"
    );
    assert_eq!(number(&family(&families, "_9lives").samples[&labels(&[])]), f64::INFINITY);
    assert!(number(&family(&families, "ns:ratio").samples[&labels(&[])]).is_nan());
    assert_eq!(number(&family(&families, "cold").samples[&labels(&[])]), f64::NEG_INFINITY);
    assert_eq!(number(&family(&families, "gr__e").samples[&labels(&[])]), 1.0);
}

#[test]
fn collisions_are_reported_and_left_out() {
    let recorder = PerCoreRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        metrics::counter!("a.b").increment(1);
        metrics::counter!("a_b").increment(2);
        metrics::gauge!("a_b").set(3.0);
        metrics::histogram!("lat", "quantile" => "x").record(1.0);
        metrics::histogram!("size").record(1.0);
        metrics::counter!("size_count").increment(1);
        metrics::counter!("twice", "a.x" => "1", "a_x" => "2").increment(1);
    });
    let error = recorder.try_render().expect_err("four keys collide");
    assert_eq!(error.problems.len(), 5, "{error}");
    let message = error.to_string();
    for expected in [
        r#""a.b"{} and "a_b"{} both render as the series "a_b""#,
        r#""a.b"{} (counter) and "a_b"{} (gauge) both render as "a_b""#,
        r#""lat"{"quantile"="x"}: a histogram renders as a summary"#,
        r#""size_count"{} renders as "size_count", which the summary of "size"{} uses"#,
        r#""twice"{"a.x"="1","a_x"="2"} has label "a_x" twice"#,
    ] {
        assert!(message.contains(expected), "missing {expected:?} in {message}");
    }
    // The lenient rendering keeps the first of each and says what it left out.
    let text = recorder.render();
    let families = parse(&text);
    assert_eq!(number(&family(&families, "a_b").samples[&labels(&[])]), 1.0, "the first registered keeps the name");
    assert!(families.contains_key("size") && !families.contains_key("size_count") && !families.contains_key("lat"));
    assert_eq!(text.lines().filter(|l| l.starts_with("# oplog-metrics: left out: ")).count(), 5, "{text}");
    // The values themselves are still readable.
    assert_eq!(recorder.counter(&Key::from_static_name("a_b")), Some(2));
}

#[test]
fn an_empty_recorder_renders_nothing() {
    let recorder = PerCoreRecorder::new();
    assert_eq!(recorder.try_render(), Ok(String::new()));
}
