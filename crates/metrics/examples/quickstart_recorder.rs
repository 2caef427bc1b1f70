//! `cargo run -p oplog-metrics --example quickstart_recorder`: the per-core recorder behind `metrics::counter!`.
use oplog_metrics::PerCoreRecorder;

fn main() {
    let recorder = PerCoreRecorder::new();
    // Clones share the metrics: install one, keep one to read and render.
    metrics::set_global_recorder(recorder.clone()).expect("no other recorder is installed");
    std::thread::scope(|s| {
        for _ in 0..4 {
            // Every `counter!` use registers the key and increments: neither writes a shared line.
            s.spawn(|| (0..10_000).for_each(|_| metrics::counter!("requests_total", "route" => "/").increment(1)));
        }
    });
    let key = metrics::Key::from_parts("requests_total", vec![metrics::Label::new("route", "/")]);
    assert_eq!(recorder.counter(&key), Some(40_000));
    print!("{}", recorder.render()); // Prometheus text format: requests_total{route="/"} 40000
}
