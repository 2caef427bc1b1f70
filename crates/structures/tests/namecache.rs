//! The name-cache entry: every variant against the model, concurrent lookups and releases
//! with invalidations.

mod common;

use common::{LIMIT, Rng, THREADS, configs, domain, pin_round_robin, run_turns, schedule, with_watchdog};
use oplog::Config;
use oplog_model::namecache::{Entry, EntryModel, EntryOp, EntryRet};
use oplog_model::{Concurrent, Model};
use oplog_structures::namecache::{CasEntry, NameEntry, OpLogEntry, SpinlockEntry, Stale};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Lookups with the current or a stale generation, releases of held references,
/// invalidations, reads.
fn next_op(rng: &mut Rng, entry: &Entry) -> EntryOp {
    match rng.u8(..10) {
        0 => EntryOp::Invalidate,
        1 => EntryOp::Refcount,
        2 => EntryOp::Generation,
        3 => EntryOp::Lookup(entry.generation.wrapping_sub(rng.u32(1..3))),
        4..7 if entry.refs > 0 => EntryOp::Release,
        _ => EntryOp::Lookup(entry.generation),
    }
}

#[test]
fn every_variant_matches_the_model_with_threads_taking_turns() {
    with_watchdog("namecache turns", LIMIT, || {
        for threads in THREADS {
            let s = schedule(&EntryModel::default(), threads, 1_500, 13 + threads as u64, next_op);
            run_turns("spinlock", &[&SpinlockEntry::new(0) as &dyn NameEntry], threads, &s);
            run_turns("cas", &[&CasEntry::new(0) as &dyn NameEntry], threads, &s);
            for (name, config) in configs() {
                let d = domain(&config);
                let (a, b) = (OpLogEntry::new(&d, 0), OpLogEntry::new(&d, 0));
                run_turns(&format!("oplog {name}"), &[&a as &dyn NameEntry, &b], threads, &s);
            }
        }
    });
}

/// Stat-like threads look up, hold and release while one thread invalidates. Every
/// successful lookup is released, except one per thread kept to the end: the count must be
/// exactly the threads. No lookup may succeed with a generation that was retired before it
/// began.
fn lookups_with_invalidations(name: &str, entry: &dyn NameEntry) {
    const THREADS: u64 = 3;
    let stop = AtomicBool::new(false);
    let successes = AtomicU64::new(0);
    std::thread::scope(|s| {
        let lookups: Vec<_> = (0..THREADS)
            .map(|me| {
                let successes = &successes;
                s.spawn(move || {
                    pin_round_robin(me as usize);
                    let mut ok = 0;
                    for i in 0..20_000 {
                        let g = entry.generation();
                        match entry.lookup(g) {
                            Ok(()) => {
                                ok += 1;
                                entry.release();
                            }
                            Err(Stale { current }) => {
                                // Generations only grow here (no wrap in this test).
                                assert!(current > g, "{name}: stale lookup reports {current} after {g}");
                                let now = entry.generation();
                                assert!(now >= current);
                            }
                        }
                        if i == 0 {
                            // Hold one reference for the whole run.
                            while entry.lookup(entry.generation()).is_err() {}
                        }
                    }
                    successes.fetch_add(ok, Ordering::Relaxed);
                })
            })
            .collect();
        let invalidator = s.spawn(|| {
            pin_round_robin(THREADS as usize);
            let mut last = entry.generation();
            while !stop.load(Ordering::Relaxed) {
                let g = entry.invalidate();
                assert_eq!(g, last + 1, "{name}: invalidate is the only writer of the generation");
                last = g;
                // A lookup with a retired generation fails, whatever happens concurrently.
                assert_eq!(entry.lookup(g - 1), Err(Stale { current: g }), "{name}");
                std::thread::yield_now();
            }
        });
        for h in lookups {
            h.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        invalidator.join().unwrap();
    });
    assert!(successes.load(Ordering::Relaxed) > 0, "{name}: no lookup ever succeeded");
    assert_eq!(entry.refcount(), THREADS, "{name}");
}

#[test]
fn concurrent_lookups_and_releases_with_invalidations() {
    with_watchdog("namecache concurrent", LIMIT, || {
        lookups_with_invalidations("spinlock", &SpinlockEntry::new(1));
        lookups_with_invalidations("cas", &CasEntry::new(1));
        lookups_with_invalidations("oplog per-cpu", &OpLogEntry::new(&domain(&Config::per_cpu()), 1));
        lookups_with_invalidations("oplog per-thread", &OpLogEntry::new(&domain(&Config::per_thread()), 1));
    });
}

#[test]
fn a_release_without_a_reference_is_reported() {
    let variants: Vec<(&str, Box<dyn NameEntry>)> = vec![
        ("spinlock", Box::new(SpinlockEntry::new(0))),
        ("cas", Box::new(CasEntry::new(0))),
        ("oplog", Box::new(OpLogEntry::new(&domain(&Config::per_cpu()), 0))),
    ];
    for (name, entry) in variants {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            entry.release();
            // The OpLog counter finds out when it is read.
            entry.refcount()
        }));
        let panic = r.expect_err(name);
        let msg = panic.downcast_ref::<String>().map(String::as_str).or(panic.downcast_ref::<&str>().copied());
        assert!(msg.unwrap().contains("released more often than looked up"), "{name}: {msg:?}");
    }
}

#[test]
fn every_variant_answers_the_models_operations_on_a_fixed_script() {
    let model = EntryModel { initial: 4 };
    let script = [EntryOp::Lookup(4), EntryOp::Invalidate, EntryOp::Lookup(4), EntryOp::Refcount, EntryOp::Release];
    let mut state = model.init();
    let want: Vec<EntryRet> = script.iter().map(|op| model.step(&mut state, op)).collect();
    assert_eq!(
        want,
        [EntryRet::Taken, EntryRet::Generation(5), EntryRet::Stale(5), EntryRet::Refcount(1), EntryRet::Done]
    );
    let variants: Vec<Box<dyn NameEntry>> = vec![
        Box::new(SpinlockEntry::new(4)),
        Box::new(CasEntry::new(4)),
        Box::new(OpLogEntry::new(&domain(&Config::per_cpu()), 4)),
    ];
    for entry in variants {
        assert_eq!(script.iter().map(|op| entry.call(op)).collect::<Vec<_>>(), want);
    }
}
