//! Exact totals under many threads and thread churn, reads while writers run, and the
//! documented concurrent semantics of `absolute` and of gauges.

mod common;

use std::num::NonZeroUsize;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{on_threads, size};
use metrics::{Key, Label};
use oplog_metrics::PerCoreRecorder;

fn key(name: &'static str) -> Key {
    Key::from_static_name(name)
}

#[test]
fn totals_are_exact_under_many_threads() {
    let recorder = PerCoreRecorder::new();
    let (threads, n) = (8, size(20_000, 20));
    on_threads(&recorder, threads, |t| {
        let held = metrics::counter!("held");
        let route = if t % 2 == 0 { "even" } else { "odd" };
        for i in 0..n {
            metrics::counter!("requests", "route" => route).increment(1);
            held.increment(2);
            metrics::gauge!("in_flight").increment(1.0);
            metrics::histogram!("latency").record((i % 100) as f64);
            metrics::gauge!("in_flight").decrement(1.0);
        }
        metrics::gauge!("per_thread").increment(t as f64);
    });
    let per_route = (threads as u64 / 2) * n;
    for route in ["even", "odd"] {
        let k = Key::from_parts("requests", vec![Label::new("route", route)]);
        assert_eq!(recorder.counter(&k), Some(per_route), "{route}");
    }
    assert_eq!(recorder.counter(&key("held")), Some(2 * threads as u64 * n));
    assert_eq!(recorder.gauge(&key("in_flight")), Some(0.0));
    assert_eq!(recorder.gauge(&key("per_thread")), Some((0..threads).sum::<usize>() as f64));
    let h = recorder.histogram(&key("latency")).unwrap();
    assert_eq!(h.count(), threads as u64 * n);
    assert_eq!((h.min(), h.max()), (Some(0.0), Some(99.0_f64.min((n - 1) as f64))));
    assert_eq!(recorder.counter(&key("never")), None);
}

#[test]
fn totals_survive_thread_churn_beyond_the_thread_indices() {
    // Two indices: waves of four threads reuse them, and the overflow threads share index 0.
    let recorder = PerCoreRecorder::with_max_threads(NonZeroUsize::new(2).unwrap());
    let (waves, threads, n) = (size(20, 3), 4, size(500, 5));
    for wave in 0..waves {
        on_threads(&recorder, threads, |_| {
            for _ in 0..n {
                metrics::counter!("churn").increment(1);
                metrics::gauge!("level").increment(1.0);
                metrics::histogram!("sizes").record(wave as f64);
            }
        });
    }
    let total = waves * threads as u64 * n;
    assert_eq!(recorder.counter(&key("churn")), Some(total));
    assert_eq!(recorder.gauge(&key("level")), Some(total as f64));
    assert_eq!(recorder.histogram(&key("sizes")).unwrap().count(), total);
}

#[test]
fn reads_while_writers_run_see_monotone_consistent_values() {
    let recorder = PerCoreRecorder::new();
    let (writers, n) = (3, size(50_000, 30));
    let done = AtomicBool::new(false);
    let start = Barrier::new(writers + 1);
    std::thread::scope(|s| {
        for _ in 0..writers {
            s.spawn(|| {
                metrics::with_local_recorder(&recorder, || {
                    start.wait();
                    for _ in 0..n {
                        metrics::counter!("ops").increment(1);
                        metrics::histogram!("h").record(1.0);
                        // Each core's delta is 0 or 1 at every instant; reads are cuts.
                        metrics::gauge!("busy").increment(1.0);
                        metrics::gauge!("busy").decrement(1.0);
                    }
                })
            });
        }
        s.spawn(|| {
            start.wait();
            let (mut last_ops, mut last_count, mut reads) = (0, 0, 0u64);
            while !done.load(Ordering::Relaxed) || reads < 3 {
                let ops = recorder.counter(&key("ops")).unwrap_or(0);
                assert!(ops >= last_ops && ops <= writers as u64 * n, "counter went {last_ops} -> {ops}");
                let count = recorder.histogram(&key("h")).map_or(0, |h| h.count());
                assert!(count >= last_count, "histogram count went {last_count} -> {count}");
                let busy = recorder.gauge(&key("busy")).unwrap_or(0.0);
                assert!((0.0..=writers as f64).contains(&busy), "gauge read {busy} outside 0..={writers}");
                let text = recorder.render();
                assert!(text.contains("# TYPE ops counter") || ops == 0, "{text}");
                (last_ops, last_count) = (ops, count);
                reads += 1;
            }
        });
        // The reader stops once the writers are done.
        s.spawn(|| {
            while recorder.counter(&key("ops")).unwrap_or(0) < writers as u64 * n {
                std::thread::yield_now();
            }
            done.store(true, Ordering::Relaxed);
        });
    });
    assert_eq!(recorder.counter(&key("ops")), Some(writers as u64 * n));
    assert_eq!(recorder.histogram(&key("h")).unwrap().count(), writers as u64 * n);
    assert_eq!(recorder.gauge(&key("busy")), Some(0.0));
}

#[test]
fn absolute_sets_at_least_and_loses_no_increment() {
    let recorder = PerCoreRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let c = metrics::counter!("synced");
        c.increment(3);
        c.absolute(10);
        assert_eq!(recorder.counter(&key("synced")), Some(10), "raised to 10");
        c.absolute(5);
        assert_eq!(recorder.counter(&key("synced")), Some(10), "never lowered");
        c.increment(1);
        assert_eq!(recorder.counter(&key("synced")), Some(11), "increments add on top");
    });

    // Concurrently: increments are all kept, and the last absolute is reached.
    let recorder = PerCoreRecorder::new();
    let (incrementers, n, step, rounds) = (2, size(30_000, 30), 1000u64, size(50, 3));
    on_threads(&recorder, incrementers + 1, |t| {
        let c = metrics::counter!("mixed");
        if t == incrementers {
            for r in 1..=rounds {
                c.absolute(r * step);
            }
        } else {
            for _ in 0..n {
                c.increment(1);
            }
        }
    });
    let total = recorder.counter(&key("mixed")).unwrap();
    let (increments, highest) = (incrementers as u64 * n, rounds * step);
    assert!(total >= highest, "{total} is below the last absolute {highest}");
    // Raises add at most up to the highest value requested; increments are never absorbed.
    assert!(
        (increments..=increments + highest).contains(&total),
        "{total}: not within {increments}..={}",
        increments + highest
    );
}

#[test]
fn a_set_orders_concurrent_increments_before_or_after_it() {
    let recorder = PerCoreRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let g = metrics::gauge!("g");
        g.increment(2.0);
        g.set(5.0);
        g.increment(2.0);
        g.decrement(1.0);
        assert_eq!(recorder.gauge(&key("g")), Some(6.0), "set replaces earlier increments, later ones add");
        g.set(-1.5);
        assert_eq!(recorder.gauge(&key("g")), Some(-1.5));
    });

    // One thread increments by 1 while another sets 1000: the result is 1000 plus the
    // increments ordered after the set, an integer in 1000..=1000 + n.
    let recorder = PerCoreRecorder::new();
    let n = size(50_000, 30);
    let start = Barrier::new(2);
    on_threads(&recorder, 2, |t| {
        let g = metrics::gauge!("level");
        start.wait();
        if t == 0 {
            (0..n).for_each(|_| g.increment(1.0));
        } else {
            g.set(1000.0);
        }
    });
    let v = recorder.gauge(&key("level")).unwrap();
    assert!(v.fract() == 0.0 && (1000.0..=1000.0 + n as f64).contains(&v), "{v}");
}

#[test]
fn handles_outlive_the_recorder_and_threads_move_them() {
    let recorder = PerCoreRecorder::new();
    let counter = metrics::with_local_recorder(&recorder, || metrics::counter!("moved"));
    std::thread::scope(|s| {
        for _ in 0..3 {
            let c = counter.clone();
            s.spawn(move || (0..100).for_each(|_| c.increment(1)));
        }
    });
    assert_eq!(recorder.counter(&key("moved")), Some(300));
    drop(recorder);
    // Still safe to use; nobody can read it any more.
    counter.increment(1);
}
