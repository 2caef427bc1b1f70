//! Sloppy counters: the invariant of 004 §4.3, "the sum of per-core counters and the number of
//! resources in use equals the value in the shared counter", checked at every quiescent point:
//! after every step of random single-threaded histories on chosen cores, and after real
//! threads stop; plus reads during a storm, which must see a consistent cut.

#![cfg(not(loom))]

mod common;

use common::{Rng, size};
use oplog_refcount::{CoreMode, SloppyConfig, SloppyCounter, SloppyDomain};
use std::sync::atomic::{AtomicBool, Ordering};

fn check_invariant(c: &SloppyCounter, in_use: i64, threshold: i64, what: &str) {
    let spares = c.spares();
    let sum: i64 = spares.iter().sum();
    assert_eq!(c.central(), sum + in_use, "{what}: central = Σ spares + in use (spares {spares:?})");
    assert!(spares.iter().all(|&s| (0..=threshold).contains(&s)), "{what}: spares within [0, threshold]: {spares:?}");
    assert_eq!(c.value(), in_use, "{what}");
}

#[test]
fn the_invariant_holds_after_every_step() {
    for (mode, threshold) in [(CoreMode::PerCpu, 4), (CoreMode::PerCpu, 64), (CoreMode::PerThread, 7)] {
        let d = SloppyDomain::new(SloppyConfig::new().mode(mode).cpus(3).threshold(threshold)).unwrap();
        let cores = if mode == CoreMode::PerCpu { 3 } else { 1 }; // per-thread: only the shared core 0 exists
        for seed in 0..size(20, 2) as u64 {
            let mut rng = Rng::with_seed(seed);
            let c = SloppyCounter::with_domain(&d, 2);
            let mut in_use = 2i64;
            for step in 0..size(300, 40) {
                let core = rng.usize(..cores);
                let v = 1 + rng.u64(..5);
                if rng.bool() {
                    assert!(c.add_on(core, v));
                    in_use += v as i64;
                } else if in_use >= v as i64 {
                    assert!(c.sub_on(core, v));
                    in_use -= v as i64;
                }
                check_invariant(&c, in_use, threshold as i64, &format!("{mode:?} seed {seed} step {step}"));
            }
            assert_eq!(c.reconcile(), in_use);
            assert_eq!(c.central(), in_use, "after reconciling, the central count is exact");
        }
    }
}

#[test]
fn the_invariant_holds_when_threads_stop() {
    for mode in [CoreMode::PerThread, CoreMode::PerCpu] {
        let d = SloppyDomain::new(SloppyConfig::new().mode(mode).threshold(16)).unwrap();
        let c = SloppyCounter::with_domain(&d, 1);
        let held: Vec<i64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3u64)
                .map(|seed| {
                    let c = &c;
                    s.spawn(move || {
                        let mut rng = Rng::with_seed(seed + 11);
                        let mut mine = 0i64;
                        for _ in 0..size(50_000, 100) {
                            if mine > 0 && rng.bool() {
                                c.dec();
                                mine -= 1;
                            } else {
                                c.inc();
                                mine += 1;
                            }
                        }
                        mine
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let in_use = 1 + held.iter().sum::<i64>();
        check_invariant(&c, in_use, 16, &format!("{mode:?}"));
    }
}

/// `value` locks every core at once, so it sees a consistent cut: with every thread holding
/// between 0 and 3 references at any time, it can only read 1 to 1 + 3 × threads.
#[test]
fn reads_during_a_storm_see_a_consistent_cut() {
    let d = SloppyDomain::new(SloppyConfig::new().threshold(2)).unwrap();
    let c = SloppyCounter::with_domain(&d, 1);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    c.inc();
                    c.add(2);
                    c.sub(2);
                    c.dec();
                }
            });
        }
        for _ in 0..size(300, 10) {
            let v = c.value();
            assert!((1..=7).contains(&v), "value() = {v} is no state the counter passed through");
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert_eq!(c.value(), 1);
}
