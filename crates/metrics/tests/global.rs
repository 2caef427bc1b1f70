//! Installed with `metrics::set_global_recorder` (its own test binary: a process can set the
//! global recorder only once).

use metrics::Key;
use oplog_metrics::PerCoreRecorder;

#[test]
fn the_global_recorder_counts_every_threads_macros() {
    let recorder = PerCoreRecorder::new();
    metrics::set_global_recorder(recorder.clone()).expect("the first global recorder");
    let again = metrics::set_global_recorder(PerCoreRecorder::new());
    assert!(again.is_err(), "a second global recorder is refused");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    metrics::counter!("global_requests").increment(1);
                }
            });
        }
    });
    assert_eq!(recorder.counter(&Key::from_static_name("global_requests")), Some(4000));
    assert!(recorder.render().contains("global_requests 4000"));
}
