//! The written semantics: flushing at the log limit, absorption, panics, drop.

mod common;

use common::{ABSORB_GLOBAL, ABSORB_LOCAL, CountedOp, SetOp, with_watchdog};
use oplog::{Config, Domain, OpLog, Ordered, Unordered};
use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Tests that flip the absorption switches run one at a time.
static SWITCHES: Mutex<()> = Mutex::new(());

fn op(op: SetOp, execs: &Arc<AtomicUsize>) -> CountedOp {
    CountedOp { op, execs: execs.clone(), panic_on_exec: false }
}

fn boom(execs: &Arc<AtomicUsize>) -> CountedOp {
    CountedOp { op: SetOp::Add(999), execs: execs.clone(), panic_on_exec: true }
}

fn domain(config: Config) -> Arc<Domain<Ordered<CountedOp>>> {
    Domain::new(config).unwrap()
}

#[test]
fn a_full_log_flushes_without_a_read() {
    let _g = SWITCHES.lock().unwrap();
    for config in [Config::per_cpu(), Config::per_thread()] {
        let d = domain(config.max_log_len(4));
        let execs = Arc::new(AtomicUsize::new(0));
        let set = OpLog::with_domain(&d, BTreeSet::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                ordo::cpu::pin_current_thread(ordo::cpu::allowed()[0]).unwrap();
                for k in 0..3 {
                    set.update(op(SetOp::Add(k), &execs));
                }
                assert_eq!(execs.load(Ordering::SeqCst), 0, "three entries stay logged");
                set.update(op(SetOp::Add(3), &execs));
                assert_eq!(execs.load(Ordering::SeqCst), 4, "the fourth fills the log and flushes");
            });
        });
        assert_eq!(set.read(|s| s.len()), 4);
    }
}

#[test]
fn local_absorption_cancels_on_the_same_core() {
    let _g = SWITCHES.lock().unwrap();
    ABSORB_LOCAL.store(true, Ordering::SeqCst);
    let d = domain(Config::per_thread());
    let execs = Arc::new(AtomicUsize::new(0));
    let set = OpLog::with_domain(&d, BTreeSet::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            for k in 0..1000 {
                set.update(op(SetOp::Add(k), &execs));
                set.update(op(SetOp::Remove(k), &execs));
            }
            set.update(op(SetOp::Add(5), &execs));
        });
    });
    assert_eq!(set.read(|s| s.iter().copied().collect::<Vec<_>>()), vec![5]);
    assert_eq!(execs.load(Ordering::SeqCst), 1, "every add/remove pair was absorbed before reaching the instance");
    ABSORB_LOCAL.store(false, Ordering::SeqCst);
}

#[test]
fn global_absorption_cancels_across_cores_during_synchronize() {
    let _g = SWITCHES.lock().unwrap();
    ABSORB_GLOBAL.store(true, Ordering::SeqCst);
    let d = domain(Config::per_thread());
    let execs = Arc::new(AtomicUsize::new(0));
    let set = OpLog::with_domain(&d, BTreeSet::new());
    // One thread adds, another (a different per-thread log) removes afterwards.
    std::thread::scope(|s| {
        s.spawn(|| (0..50).for_each(|k| set.update(op(SetOp::Add(k), &execs))));
    });
    std::thread::scope(|s| {
        s.spawn(|| (0..40).for_each(|k| set.update(op(SetOp::Remove(k), &execs))));
    });
    assert_eq!(set.read(|s| s.len()), 10);
    assert_eq!(execs.load(Ordering::SeqCst), 10, "40 add/remove pairs absorbed during synchronize");
    ABSORB_GLOBAL.store(false, Ordering::SeqCst);
}

#[test]
fn a_panicking_operation_keeps_the_rest_for_the_next_synchronize() {
    let _g = SWITCHES.lock().unwrap();
    with_watchdog("panic during synchronize", Duration::from_secs(60), || {
        for config in [Config::per_cpu(), Config::per_thread()] {
            let d = domain(config);
            let execs = Arc::new(AtomicUsize::new(0));
            let set = OpLog::with_domain(&d, BTreeSet::new());
            set.update(op(SetOp::Add(1), &execs));
            set.update(boom(&execs));
            set.update(op(SetOp::Add(2), &execs));
            set.update(op(SetOp::Remove(1), &execs));
            let r = catch_unwind(AssertUnwindSafe(|| set.read(|s| s.clone())));
            let msg = *r.unwrap_err().downcast::<String>().unwrap();
            assert!(msg.contains("panics on purpose"), "{msg}");
            // No deadlock: updates and reads go on, and the operations after the panic
            // run, in order, before newer ones.
            set.update(op(SetOp::Add(1), &execs));
            assert_eq!(set.read(|s| s.iter().copied().collect::<Vec<_>>()), vec![1, 2]);
            assert_eq!(execs.load(Ordering::SeqCst), 5);
        }
    });
}

#[test]
fn drop_applies_every_pending_operation() {
    let _g = SWITCHES.lock().unwrap();
    struct Record(Arc<Mutex<Vec<u32>>>);
    impl Drop for Record {
        fn drop(&mut self) {
            self.0.lock().unwrap().push(u32::MAX);
        }
    }
    #[derive(Debug)]
    struct Push(u32);
    impl oplog::Update for Push {
        type Target = Record;
        fn exec(self, r: &mut Record) {
            r.0.lock().unwrap().push(self.0);
        }
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    for config in [Config::per_cpu(), Config::per_thread()] {
        seen.lock().unwrap().clear();
        let d = Domain::<Ordered<Push>>::new(config).unwrap();
        let obj = OpLog::with_domain(&d, Record(seen.clone()));
        std::thread::scope(|s| {
            s.spawn(|| (0..3).for_each(|i| obj.update(Push(i))));
        });
        obj.update(Push(3));
        drop(obj);
        // Every operation ran, in order, and then the instance was dropped.
        assert_eq!(*seen.lock().unwrap(), vec![0, 1, 2, 3, u32::MAX]);
        assert_eq!(d.pending_objects(), 0);
    }
}

#[test]
fn drop_runs_the_others_past_a_panic_then_resumes_it() {
    let _g = SWITCHES.lock().unwrap();
    let d = domain(Config::per_cpu());
    let execs = Arc::new(AtomicUsize::new(0));
    let set = OpLog::with_domain(&d, BTreeSet::new());
    set.update(boom(&execs));
    set.update(op(SetOp::Add(1), &execs));
    set.update(boom(&execs));
    set.update(op(SetOp::Add(2), &execs));
    let r = catch_unwind(AssertUnwindSafe(move || drop(set)));
    assert!(r.is_err(), "the first panic reaches the dropping thread");
    assert_eq!(execs.load(Ordering::SeqCst), 4, "all four operations ran");
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
fn a_thread_that_exits_with_a_full_log_loses_nothing() {
    for config in [Config::per_cpu(), Config::per_thread()] {
        let d = Domain::<Ordered<SetOp>>::new(config.max_log_len(1000)).unwrap();
        let set = OpLog::with_domain(&d, BTreeSet::new());
        for round in 0..5u64 {
            std::thread::scope(|s| {
                s.spawn(|| (0..100).for_each(|k| set.update(SetOp::Add(round * 100 + k))));
            });
        }
        assert_eq!(set.read(|s| s.len()), 500);
    }
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
