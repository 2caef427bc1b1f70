//! The written semantics: flushing at the log limit, absorption, `into_inner`, the guard.
//! Panics, drop and thread exit are fault cases: see `faults.rs`.

mod common;

use common::{ABSORB_GLOBAL, ABSORB_LOCAL, CountedOp, SetOp};
use oplog::{Config, Domain, OpLog, Ordered, Unordered};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Tests that flip the absorption switches run one at a time.
static SWITCHES: Mutex<()> = Mutex::new(());

fn domain(config: Config) -> Arc<Domain<Ordered<CountedOp>>> {
    Domain::new(config).unwrap()
}

#[test]
fn a_full_log_goes_to_the_backlog_and_a_full_backlog_applies_without_a_read() {
    let _g = SWITCHES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for config in [Config::per_cpu(), Config::per_thread()] {
        let d = domain(config.max_log_len(4));
        let execs = Arc::new(AtomicUsize::new(0));
        let set = OpLog::with_domain(&d, BTreeSet::new());
        let limit = d.backlog_limit() as u64;
        std::thread::scope(|s| {
            s.spawn(|| {
                ordo::cpu::pin_current_thread(ordo::cpu::allowed()[0]).unwrap();
                for k in 0..3 {
                    set.update(CountedOp::new(SetOp::Add(k), &execs));
                }
                assert_eq!(execs.load(Ordering::SeqCst), 0, "three entries stay logged");
                set.update(CountedOp::new(SetOp::Add(3), &execs));
                assert_eq!(execs.load(Ordering::SeqCst), 0, "the fourth fills the log, which is handed off");
                assert_eq!(d.backlogged_logs(), 1);
                for k in 4..4 * limit - 1 {
                    set.update(CountedOp::new(SetOp::Add(k), &execs));
                }
                assert_eq!(execs.load(Ordering::SeqCst), 0, "{} logs wait", limit - 1);
                set.update(CountedOp::new(SetOp::Add(4 * limit - 1), &execs));
                assert_eq!(execs.load(Ordering::SeqCst), 4 * limit as usize, "the full backlog was applied");
                assert_eq!(d.backlogged_logs(), 0);
            });
        });
        assert_eq!(set.read(|s| s.len()), 4 * limit as usize);
    }
}

#[test]
fn local_absorption_cancels_on_the_same_core() {
    let _g = SWITCHES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    ABSORB_LOCAL.store(true, Ordering::SeqCst);
    let d = domain(Config::per_thread());
    let execs = Arc::new(AtomicUsize::new(0));
    let set = OpLog::with_domain(&d, BTreeSet::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            for k in 0..1000 {
                set.update(CountedOp::new(SetOp::Add(k), &execs));
                set.update(CountedOp::new(SetOp::Remove(k), &execs));
            }
            set.update(CountedOp::new(SetOp::Add(5), &execs));
        });
    });
    assert_eq!(set.read(|s| s.iter().copied().collect::<Vec<_>>()), vec![5]);
    assert_eq!(execs.load(Ordering::SeqCst), 1, "every add/remove pair was absorbed before reaching the instance");
    ABSORB_LOCAL.store(false, Ordering::SeqCst);
}

#[test]
fn global_absorption_cancels_across_cores_during_synchronize() {
    let _g = SWITCHES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    ABSORB_GLOBAL.store(true, Ordering::SeqCst);
    let d = domain(Config::per_thread());
    let execs = Arc::new(AtomicUsize::new(0));
    let set = OpLog::with_domain(&d, BTreeSet::new());
    // One thread adds, another (a different per-thread log) removes afterwards.
    std::thread::scope(|s| {
        s.spawn(|| (0..50).for_each(|k| set.update(CountedOp::new(SetOp::Add(k), &execs))));
    });
    std::thread::scope(|s| {
        s.spawn(|| (0..40).for_each(|k| set.update(CountedOp::new(SetOp::Remove(k), &execs))));
    });
    assert_eq!(set.read(|s| s.len()), 10);
    assert_eq!(execs.load(Ordering::SeqCst), 10, "40 add/remove pairs absorbed during synchronize");
    ABSORB_GLOBAL.store(false, Ordering::SeqCst);
}

#[test]
fn into_inner_returns_the_synchronized_instance() {
    let d = Domain::<Unordered<SetOp>>::new(Config::per_cpu()).unwrap();
    let set = OpLog::with_domain(&d, BTreeSet::new());
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let set = &set;
            s.spawn(move || (0..100).for_each(|k| set.update(SetOp::Add(t * 1000 + k))));
        }
    });
    assert_eq!(set.into_inner().len(), 300);
}

#[test]
fn a_synced_guard_gives_mutable_access_and_blocks_other_readers_only() {
    let d = Domain::<Ordered<SetOp>>::new(Config::per_cpu()).unwrap();
    let set = OpLog::with_domain(&d, BTreeSet::new());
    set.update(SetOp::Add(1));
    let mut g = set.synchronize();
    g.insert(7);
    // Updates go on while the guard is held.
    std::thread::scope(|s| {
        s.spawn(|| set.update(SetOp::Add(2)));
    });
    assert_eq!(g.iter().copied().collect::<Vec<_>>(), vec![1, 7]);
    drop(g);
    assert_eq!(set.read(|s| s.iter().copied().collect::<Vec<_>>()), vec![1, 2, 7]);
}

/// One thread's updates and no read: the full logs its owner hands off weigh, when their
/// backlog is applied, as flushes from one core, and the object goes direct (logging saves
/// one core nothing but its lock). Where local absorption shrank those logs (here each
/// remove cancels the add before it), logging pays, and the object stays logged.
#[test]
fn an_object_updated_by_one_thread_alone_goes_direct_unless_absorption_pays() {
    use oplog::Representation::{Direct, Logged};
    let _g = SWITCHES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for absorb in [false, true] {
        ABSORB_LOCAL.store(absorb, Ordering::SeqCst);
        // Logs longer than the policy's count of pushes below which an evicted log did not
        // pay for its slot (8).
        let d = domain(Config::per_thread().max_log_len(16));
        let execs = Arc::new(AtomicUsize::new(0));
        let set = OpLog::with_domain(&d, BTreeSet::new());
        // Enough full backlogs for the switch (4 in a row), several times over.
        let rounds = 16 * d.backlog_limit() as u64 * 4;
        for k in 0..rounds {
            set.update(CountedOp::new(SetOp::Add(2 * k), &execs));
            if absorb {
                set.update(CountedOp::new(SetOp::Add(2 * k + 1), &execs));
                set.update(CountedOp::new(SetOp::Remove(2 * k + 1), &execs));
            }
        }
        let expected = if absorb { Logged } else { Direct };
        assert_eq!(set.representation(), expected, "local absorption: {absorb}");
        assert_eq!(set.read(BTreeSet::len), rounds as usize);
    }
    ABSORB_LOCAL.store(false, Ordering::SeqCst);
}

/// Two threads taking turns on `set` (a barrier between any two updates), no read:
/// `turns` updates `Add(1000 + k)`, the even ones from the first thread.
fn take_turns(set: &OpLog<Unordered<SetOp>>, turns: u64) {
    let turn = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let turn = &turn;
            s.spawn(move || {
                for k in 0..turns {
                    if k % 2 == t {
                        set.update(SetOp::Add(1000 + k));
                    }
                    turn.wait();
                }
            });
        }
    });
}

#[test]
fn an_adaptive_object_follows_its_mix_and_pinned_ones_stay() {
    use oplog::Representation::{Adaptive, Direct, Logged};
    let d = Domain::<Unordered<SetOp>>::new(Config::per_cpu()).unwrap();
    assert_eq!(d.representation(), Adaptive, "adaptive is the default");
    let set = OpLog::with_domain(&d, BTreeSet::new());
    assert_eq!(set.representation(), Logged, "objects start logged");
    // Read-heavy: reads that find little logged move it to direct.
    for k in 0..8 {
        set.update(SetOp::Add(k));
        set.read(|_| ());
    }
    assert_eq!(set.representation(), Direct);
    // Update-heavy from this one thread: it stays direct (logging would save it nothing but
    // its lock).
    for k in 100..200 {
        set.update(SetOp::Add(k));
    }
    assert_eq!(set.read(BTreeSet::len), 108, "direct updates are applied in place, in order with the logged ones");
    for k in 200..300 {
        set.update(SetOp::Add(k));
    }
    assert_eq!(set.read(BTreeSet::len), 208);
    assert_eq!(set.representation(), Direct, "one thread's updates, however many");
    // Two threads taking turns and no read: the update that brings the count of changes of
    // updater to its maximum moves it back, before any read.
    take_turns(&set, 40);
    assert_eq!(set.representation(), Logged, "two threads taking turns, no read");
    assert_eq!(set.read(BTreeSet::len), 248);
    for pinned in [Logged, Direct] {
        let d = Domain::<Unordered<SetOp>>::new(Config::per_cpu().representation(pinned)).unwrap();
        let set = OpLog::with_domain(&d, BTreeSet::new());
        for k in 0..300 {
            set.update(SetOp::Add(k));
            if k % 150 < 20 {
                set.read(|_| ());
            }
            assert_eq!(set.representation(), pinned);
        }
        assert_eq!(set.read(BTreeSet::len), 300);
        // Two threads taking turns, no read: the count of changes of updater reaches its
        // top (31) and stays there; a pinned object does not move.
        take_turns(&set, 100);
        assert_eq!(set.representation(), pinned, "two threads taking turns");
        assert_eq!(set.read(BTreeSet::len), 400);
    }
}

/// A consumer reading what a producer logged (another thread's core): logging pays, since the
/// updates stay on the producer's core and the reads take them in batches (20 operations,
/// above the 16 that pay for a barrier), so the object stays logged; the same mix from one
/// thread goes direct (`tests/policy.rs`).
#[test]
fn a_consumer_reading_a_producers_updates_keeps_it_logged() {
    use oplog::Representation::Logged;
    use std::sync::Barrier;
    let d = Domain::<Unordered<SetOp>>::new(Config::per_thread()).unwrap();
    let set = OpLog::with_domain(&d, BTreeSet::new());
    let turn = Barrier::new(2);
    let seen = std::thread::scope(|s| {
        s.spawn(|| {
            for r in 0..12u64 {
                (0..20).for_each(|k| set.update(SetOp::Add(r * 20 + k)));
                turn.wait();
                turn.wait();
            }
        });
        let mut seen = Vec::new();
        for _ in 0..12 {
            turn.wait();
            set.read(|_| ());
            seen.push(set.representation());
            turn.wait();
        }
        seen
    });
    assert!(seen.iter().all(|&r| r == Logged), "a consumer's reads of a producer's logs: {seen:?}");
    assert_eq!(set.read(BTreeSet::len), 240);
}

#[test]
fn a_switch_keeps_the_order_of_ordered_updates() {
    // Updates logged before the switch to direct are applied before the first direct one.
    let d = Domain::<Ordered<SetOp>>::new(Config::per_cpu()).unwrap();
    let set = OpLog::with_domain(&d, BTreeSet::new());
    for k in 0..4 {
        set.update(SetOp::Add(k));
        set.read(|_| ());
    }
    assert_eq!(set.representation(), oplog::Representation::Direct);
    std::thread::scope(|s| {
        s.spawn(|| set.update(SetOp::Remove(1)));
    });
    set.update(SetOp::Add(1));
    set.update(SetOp::Remove(2));
    assert_eq!(set.read(|s| s.iter().copied().collect::<Vec<_>>()), vec![0, 1, 3]);
}
