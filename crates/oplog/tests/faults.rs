//! Faults: one test per fault case, each asserting the outcome the crate docs promise
//! (`oplog` crate docs: "Panics in user code", "Drop", "Memory bound"; `OpLog::synchronize`:
//! "Updates from other threads continue meanwhile"; the `registry` module: logs are owned
//! by objects, not threads). Each runs under a watchdog, so a deadlock fails the test with
//! a message instead of hanging CI.
//!
//! | fault | test |
//! |---|---|
//! | an operation panics during synchronize | `fault_an_operation_panics_during_synchronize` |
//! | a thread exits with a non-empty log | `fault_a_thread_exits_with_a_non_empty_log` |
//! | an object is dropped with pending operations | `fault_an_object_is_dropped_with_pending_operations` |
//! | a log cache full of hot objects evicting each other | `fault_hot_objects_evict_each_other_from_a_full_log_cache` |
//! | a reader synchronizes continuously while writers run | `fault_a_reader_synchronizes_continuously_while_writers_run` |
//!
//! Eviction racing reads is stress-tested further in `eviction.rs`; preempted and migrating
//! writers under a continuous reader in `counter.rs`.

mod common;

use common::{CountedOp, Rng, SetOp, pin_round_robin, quiet_expected_panics, with_watchdog};
use oplog::log::LogKind;
use oplog::{Config, Counter, CounterLog, Domain, OpLog, Ordered, Representation, Unordered, Update};
use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Watchdog limit of each fault test.
const LIMIT: Duration = Duration::from_secs(120);

fn sorted(set: &BTreeSet<u64>) -> Vec<u64> {
    set.iter().copied().collect()
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    match p.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast_ref::<&str>().map_or("(not a string)".into(), |s| (*s).to_owned()),
    }
}

/// Documented outcome: the lock is released as the panic unwinds (no deadlock), the
/// panicking operation is dropped, every operation gathered after it is kept, in order,
/// ahead of anything newer; the panic reaches the caller of `synchronize`, or of the
/// `update` whose full log triggered the flush (that update itself is kept).
#[test]
fn fault_an_operation_panics_during_synchronize() {
    quiet_expected_panics();
    with_watchdog("panic during synchronize", LIMIT, || {
        for config in [Config::per_cpu(), Config::per_thread()] {
            // A read's synchronize.
            let d = Domain::<Ordered<CountedOp>>::new(config.clone()).unwrap();
            let execs = Arc::new(AtomicUsize::new(0));
            let set = OpLog::with_domain(&d, BTreeSet::new());
            set.update(CountedOp::new(SetOp::Add(1), &execs));
            set.update(CountedOp::panicking(&execs));
            set.update(CountedOp::new(SetOp::Add(2), &execs));
            set.update(CountedOp::new(SetOp::Remove(1), &execs));
            let r = catch_unwind(AssertUnwindSafe(|| set.read(|s| s.clone())));
            assert!(panic_text(r.unwrap_err()).contains("panics on purpose"));
            set.update(CountedOp::new(SetOp::Add(1), &execs));
            assert_eq!(set.read(sorted), vec![1, 2], "the rest ran, in order, before the newer add");
            assert_eq!(execs.load(Ordering::SeqCst), 5);

            // A full log is handed to the object's backlog; the update whose hand-off fills
            // the backlog applies it. On one pinned thread so every update shares one log.
            let d = Domain::<Ordered<CountedOp>>::new(config.clone().max_log_len(1)).unwrap();
            let execs = Arc::new(AtomicUsize::new(0));
            let set = OpLog::with_domain(&d, BTreeSet::new());
            let added = std::thread::scope(|s| {
                s.spawn(|| {
                    pin_round_robin(0);
                    set.update(CountedOp::new(SetOp::Add(1), &execs));
                    set.update(CountedOp::panicking(&execs));
                    for k in 2..2 + 2 * d.backlog_limit() as u64 {
                        let r = catch_unwind(AssertUnwindSafe(|| set.update(CountedOp::new(SetOp::Add(k), &execs))));
                        if let Err(p) = r {
                            assert!(
                                panic_text(p).contains("panics on purpose"),
                                "the backlog's apply panics in update"
                            );
                            return k;
                        }
                    }
                    panic!("no update applied the full backlog");
                })
                .join()
                .unwrap()
            });
            assert_eq!(
                set.read(sorted),
                (1..=added).collect::<Vec<_>>(),
                "the update that applied the backlog was kept"
            );

            // Writers keep going on other threads while reads hit panics.
            let d = Domain::<Ordered<CountedOp>>::new(config.max_log_len(8)).unwrap();
            let execs = Arc::new(AtomicUsize::new(0));
            let set = OpLog::with_domain(&d, BTreeSet::new());
            const PER_WRITER: u64 = if cfg!(miri) { 20 } else { 5_000 };
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                for w in 0..2u64 {
                    let (set, execs) = (&set, &execs);
                    s.spawn(move || {
                        for k in 0..PER_WRITER {
                            // A writer whose full log flushes gets the panic; its update is
                            // kept all the same.
                            let _ = catch_unwind(AssertUnwindSafe(|| {
                                set.update(CountedOp::new(SetOp::Add(w * 100_000 + k), execs))
                            }));
                        }
                    });
                }
                s.spawn(|| {
                    let mut panics = 0;
                    while !stop.load(Ordering::SeqCst) || panics == 0 {
                        // This update may fill the log and flush, or the object may be direct
                        // (one core's updates, when the writers share a CPU): then it panics
                        // already.
                        if catch_unwind(AssertUnwindSafe(|| set.update(CountedOp::panicking(&execs)))).is_err() {
                            panics += 1;
                        }
                        if catch_unwind(AssertUnwindSafe(|| set.read(|_| ()))).is_err() {
                            panics += 1;
                        }
                    }
                });
                std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 50 }));
                stop.store(true, Ordering::SeqCst);
            });
            // Each read drops one panicking operation and keeps the rest: read until none
            // is left, then every writer's update is there.
            let len = loop {
                if let Ok(n) = catch_unwind(AssertUnwindSafe(|| set.read(|s| s.len() as u64))) {
                    break n;
                }
            };
            assert_eq!(len, 2 * PER_WRITER, "no writer's update was lost to the panics");
        }
    });
}

/// Documented outcome: logs belong to objects, not threads, so a thread that exits with
/// logged updates loses none of them; they are applied by the next synchronize, in order
/// with what later threads log.
#[test]
fn fault_a_thread_exits_with_a_non_empty_log() {
    with_watchdog("thread exit", LIMIT, || {
        const ROUNDS: u64 = if cfg!(miri) { 3 } else { 8 };
        const PER_ROUND: u64 = if cfg!(miri) { 10 } else { 100 };
        for config in [Config::per_cpu(), Config::per_thread(), Config::per_thread().max_threads(1)] {
            let d = Domain::<Ordered<SetOp>>::new(config.max_log_len(1000)).unwrap();
            let set = OpLog::with_domain(&d, BTreeSet::new());
            let mut model = BTreeSet::new();
            for round in 0..ROUNDS {
                // Each thread adds its own keys and removes half of the previous thread's,
                // then exits with all of it still logged; a per-thread domain hands its
                // index (and the cache holding the log) to the next thread.
                let ops: Vec<SetOp> = (0..PER_ROUND)
                    .map(|k| SetOp::Add(round * 1000 + k))
                    .chain((0..PER_ROUND / 2).filter(|_| round > 0).map(|k| SetOp::Remove((round - 1) * 1000 + k)))
                    .collect();
                ops.iter().for_each(|o| o.apply_to(&mut model));
                std::thread::scope(|s| {
                    s.spawn(|| ops.into_iter().for_each(|o| set.update(o)));
                });
            }
            assert_eq!(set.read(|s| s.clone()), model);
        }
    });
}

/// Documented outcome: dropping an object applies every pending operation (in every
/// core's log, in its backlog of evicted logs, and left over after a panic), continuing
/// past operations that panic, releases its log-cache slots, and only then drops the
/// instance; the first panic reaches the dropping thread.
#[test]
fn fault_an_object_is_dropped_with_pending_operations() {
    struct Record(Arc<Mutex<Vec<u32>>>);
    impl Drop for Record {
        fn drop(&mut self) {
            self.0.lock().unwrap().push(u32::MAX);
        }
    }
    #[derive(Debug)]
    enum Push {
        Value(u32),
        Panic,
    }
    impl oplog::Update for Push {
        type Target = Record;
        fn exec(self, r: &mut Record) {
            match self {
                Push::Value(v) => r.0.lock().unwrap().push(v),
                Push::Panic => panic!("this push panics on purpose"),
            }
        }
    }
    quiet_expected_panics();
    with_watchdog("drop with pending operations", LIMIT, || {
        for config in [Config::per_cpu(), Config::per_thread()] {
            let seen = Arc::new(Mutex::new(Vec::new()));
            // One slot per core, so the other object below evicts this one's logs.
            let d = Domain::<Ordered<Push>>::new(config.cache_slots(1)).unwrap();
            let obj = OpLog::with_domain(&d, Record(seen.clone()));
            let other = OpLog::with_domain(&d, Record(Arc::new(Mutex::new(Vec::new()))));
            // A panic leaves 1 and 2 waiting ahead of everything newer.
            obj.update(Push::Panic);
            obj.update(Push::Value(1));
            obj.update(Push::Value(2));
            assert!(catch_unwind(AssertUnwindSafe(|| obj.read(|_| ()))).is_err());
            assert!(d.backlogged_objects() > 0, "the panic's leftovers wait in the backlog");
            // Logs of threads that exited, some evicted by `other` while a synchronize holds
            // `obj` (evictors then cannot apply them), so they wait in the backlog too.
            let guard = obj.synchronize();
            for t in 0..3u32 {
                std::thread::scope(|s| {
                    s.spawn(|| {
                        obj.update(Push::Value(10 + 2 * t));
                        other.update(Push::Value(0));
                        obj.update(Push::Value(11 + 2 * t));
                    });
                });
            }
            drop(guard);
            obj.update(Push::Value(99));
            assert!(d.backlogged_logs() > 0, "logs evicted while `obj` was held wait in its backlog");
            drop(obj);
            assert_eq!(*seen.lock().unwrap(), vec![1, 2, 10, 11, 12, 13, 14, 15, 99, u32::MAX]);
            drop(other);
            assert_eq!(d.backlogged_objects(), 0, "nothing is left behind");
            // The slots were released: a new object sees none of the old operations.
            let fresh_seen = Arc::new(Mutex::new(Vec::new()));
            let fresh = OpLog::with_domain(&d, Record(fresh_seen.clone()));
            fresh.update(Push::Value(7));
            drop(fresh);
            assert_eq!(*fresh_seen.lock().unwrap(), vec![7, u32::MAX]);

            // Panicking operations still pending at drop: the others run, the first panic
            // reaches the dropping thread after the instance is dropped.
            let seen = Arc::new(Mutex::new(Vec::new()));
            let obj = OpLog::with_domain(&d, Record(seen.clone()));
            obj.update(Push::Panic);
            obj.update(Push::Value(1));
            obj.update(Push::Panic);
            obj.update(Push::Value(2));
            let r = catch_unwind(AssertUnwindSafe(move || drop(obj)));
            assert!(panic_text(r.unwrap_err()).contains("panics on purpose"));
            assert_eq!(*seen.lock().unwrap(), vec![1, 2, u32::MAX]);
        }
    });
}

/// Documented outcome (crate docs, "Memory bound"): an evicted log is applied by its evictor,
/// or waits in its object's backlog while someone else holds the object, and an object whose
/// backlog reaches the domain's limit is synchronized before it takes a slot again, so hot
/// objects evicting each other neither lose updates nor grow memory without bound, and never
/// deadlock.
#[test]
fn fault_hot_objects_evict_each_other_from_a_full_log_cache() {
    with_watchdog("hot objects evicting each other", LIMIT, || {
        const OBJECTS: usize = 16;
        const UPDATES: u64 = if cfg!(miri) { 40 } else { 100_000 };
        for config in [Config::per_cpu(), Config::per_thread()] {
            // Two slots per core for sixteen objects, updated only, never read.
            let d = Domain::<CounterLog>::new(config.cache_slots(2).max_log_len(64)).unwrap();
            let counters: Vec<Counter> = (0..OBJECTS).map(|_| Counter::with_domain(&d, 0)).collect();
            let threads = 3;
            // An object installs itself only while its backlog is below the limit, or below
            // four times the limit while a synchronize of it runs (crate docs), so its
            // backlog stays below that plus one log per thread that may have installed it
            // past the check.
            let bound = OBJECTS * (4 * d.backlog_limit() + threads);
            let done = AtomicBool::new(false);
            let (totals, peak) = std::thread::scope(|s| {
                let writers: Vec<_> = (0..threads)
                    .map(|t| {
                        let counters = &counters;
                        s.spawn(move || {
                            let mut rng = Rng::with_seed(t as u64 + 1);
                            let mut mine = vec![0i64; OBJECTS];
                            for _ in 0..UPDATES {
                                let i = rng.usize(..OBJECTS);
                                counters[i].inc();
                                mine[i] += 1;
                            }
                            mine
                        })
                    })
                    .collect();
                let monitor = s.spawn(|| {
                    let mut peak = 0;
                    while !done.load(Ordering::SeqCst) {
                        peak = peak.max(d.backlogged_logs());
                        if cfg!(miri) {
                            std::thread::sleep(Duration::from_micros(100));
                        } else {
                            std::thread::yield_now();
                        }
                    }
                    peak
                });
                let totals: Vec<Vec<i64>> = writers.into_iter().map(|w| w.join().unwrap()).collect();
                done.store(true, Ordering::SeqCst);
                (totals, monitor.join().unwrap())
            });
            assert!(peak <= bound, "{peak} evicted logs waiting at once; the documented bound is {bound}");
            for (i, c) in counters.iter().enumerate() {
                assert_eq!(c.read(), totals.iter().map(|t| t[i]).sum::<i64>(), "counter {i}");
            }
            drop(counters);
            assert_eq!(d.backlogged_objects(), 0);
        }

        // The worst case for one thread: alternating between two colliding objects evicts
        // the other every time; without the limit each backlog would grow by one log per
        // update.
        let d = Domain::<CounterLog>::new(Config::per_thread().cache_slots(1)).unwrap();
        let a = Counter::with_domain(&d, 0);
        let b = Counter::with_domain(&d, 0);
        let limit = d.backlog_limit();
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..UPDATES {
                    a.inc();
                    b.dec();
                    let logs = d.backlogged_logs();
                    assert!(
                        logs <= 2 * limit,
                        "{logs} evicted logs waiting after {i} rounds (limit {limit} per object)"
                    );
                }
            });
        });
        assert_eq!((a.read(), b.read()), (UPDATES as i64, -(UPDATES as i64)));

        // The same while a synchronize of `a` stays off the CPU (here: a reader holding
        // its guard). Regression: installs then skipped the backlog check, so `a`'s backlog
        // grew by one log per round for as long as the synchronize lasted. Now the writer
        // waits once the backlog is four times over the limit.
        let guard = a.as_oplog().synchronize();
        let rounds = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let writer = s.spawn(|| {
                for _ in 0..UPDATES {
                    a.inc();
                    b.dec();
                    rounds.fetch_add(1, Ordering::SeqCst);
                }
            });
            // Wait until the writer finishes or stops making progress.
            let mut last = usize::MAX;
            while !writer.is_finished() && rounds.load(Ordering::SeqCst) != last {
                last = rounds.load(Ordering::SeqCst);
                std::thread::sleep(if cfg!(miri) { Duration::from_micros(200) } else { Duration::from_millis(50) });
            }
            let logs = d.backlogged_logs();
            // `a` at most four times the limit, `b` (synchronized at its limit) below it.
            assert!(logs <= 5 * limit, "{logs} evicted logs waiting behind a held synchronize (limit {limit})");
            drop(guard);
        });
        assert_eq!((a.read(), b.read()), (2 * UPDATES as i64, -2 * UPDATES as i64));
    });
}

/// Documented outcome (`OpLog::synchronize`): updates from other threads continue while a
/// reader synchronizes; a log may grow to four times its limit while a synchronize holds
/// the object, and only then does its writer wait. Every read sees a consistent cut: for
/// each writer, a prefix of what it logged.
#[test]
fn fault_a_reader_synchronizes_continuously_while_writers_run() {
    with_watchdog("continuous reader", LIMIT, || {
        const PER_WRITER: u64 = if cfg!(miri) { 30 } else { 3_000 };
        const WRITERS: u64 = 2;
        for config in [Config::per_cpu(), Config::per_thread()] {
            let d = Domain::<Ordered<SetOp>>::new(config.max_log_len(4)).unwrap();
            let set = OpLog::with_domain(&d, BTreeSet::new());
            let finished = AtomicUsize::new(0);
            // Writers start once the reader has read once, so that its reads overlap theirs
            // however fast the updates are (in release, 3,000 of them can end before the
            // reader's first read begins).
            let first_read = AtomicBool::new(false);
            let reads = std::thread::scope(|s| {
                for w in 0..WRITERS {
                    let (set, finished, first_read) = (&set, &finished, &first_read);
                    s.spawn(move || {
                        while !first_read.load(Ordering::SeqCst) {
                            std::hint::spin_loop();
                        }
                        (0..PER_WRITER).for_each(|k| set.update(SetOp::Add(w * 1_000_000 + k)));
                        finished.fetch_add(1, Ordering::SeqCst);
                    });
                }
                // The reader never pauses until every writer is done.
                let mut reads = 0u64;
                while finished.load(Ordering::SeqCst) < WRITERS as usize {
                    set.read(|s| {
                        // Writer w's keys are w * 1e6 + 0, 1, 2, ...: it holds at most
                        // max + 1 of them, exactly that many when they form a prefix.
                        let prefixes: u64 = (0..WRITERS)
                            .map(|w| {
                                s.range(w * 1_000_000..(w + 1) * 1_000_000)
                                    .next_back()
                                    .map_or(0, |m| m + 1 - w * 1_000_000)
                            })
                            .sum();
                        assert_eq!(prefixes, s.len() as u64, "a read saw a writer's adds but not as a prefix");
                    });
                    reads += 1;
                    first_read.store(true, Ordering::SeqCst);
                }
                reads
            });
            assert!(reads > 0);
            assert_eq!(set.read(|s| s.len() as u64), WRITERS * PER_WRITER);

            // A reader holding the object: writers still log up to four times the limit
            // without waiting.
            let guard = set.synchronize();
            std::thread::scope(|s| {
                s.spawn(|| (0..3 * d.max_log_len() as u64).for_each(|k| set.update(SetOp::Add(5_000_000 + k))));
            });
            drop(guard);
            assert_eq!(set.read(|s| s.len() as u64), WRITERS * PER_WRITER + 3 * d.max_log_len() as u64);
        }
    });
}

/// Updates from other threads continue while a reader holds the object's `Synced` guard,
/// in every representation: a direct update that finds the lock taken spins briefly, then
/// logs itself instead of waiting longer (before it logged, it waited, and a thread that
/// joined the updater while holding the guard hung).
#[test]
fn fault_updates_continue_while_a_guard_is_held_in_every_representation() {
    use oplog::Representation::{Adaptive, Direct, Logged};
    with_watchdog("updates under a held guard", LIMIT, || {
        // Under Miri 20 updates: each is logged behind the held guard as with 100 (a direct
        // one because it finds the lock taken), and both counts stay under the default log
        // length of 128, so neither flushes; the other 80 only repeat that path.
        const UPDATES: u64 = if cfg!(miri) { 20 } else { 100 };
        for representation in [Adaptive, Logged, Direct] {
            for config in [Config::per_cpu(), Config::per_thread()] {
                let d = Domain::<Ordered<SetOp>>::new(config.representation(representation)).unwrap();
                let set = OpLog::with_domain(&d, BTreeSet::new());
                let guard = set.synchronize();
                std::thread::scope(|s| {
                    s.spawn(|| (0..UPDATES).for_each(|k| set.update(SetOp::Add(k))));
                });
                assert!(guard.is_empty(), "the guard's instance does not change under it");
                drop(guard);
                assert_eq!(set.read(BTreeSet::len), UPDATES as usize, "{representation:?}");
            }
        }
    });
}

/// Issue 16, item 1: an update that must first apply the object's backlog, in which an
/// operation panics, is kept (the panic reaches it, as documented, but the update is
/// logged before the panic resumes). Deterministic: one thread, one slot per core, so each
/// update of `b` evicts `a`'s log into `a`'s backlog until the backlog is full. (64 per-CPU
/// caches, 1,024 per-thread ones: more than the core mask's 31 bits, so an eviction cannot
/// tell that the log it takes is all `a` has logged, which it would apply at once: see
/// [`fault_an_evictor_that_applies_a_panicking_log_keeps_its_update`].) Pinned to
/// the logged representation: adaptive objects evicted this often switch to direct, and the
/// evictor that switches `a` would apply its backlog instead (see the next test).
#[test]
fn fault_an_update_that_applies_a_panicking_backlog_is_kept() {
    quiet_expected_panics();
    with_watchdog("update applying a panicking backlog", LIMIT, || {
        two_objects_on_one_slot(
            [logged(Config::per_cpu().cpus(64)), logged(Config::per_thread())],
            |d, a, b, execs| {
                a.update(CountedOp::panicking(execs));
                b.update(CountedOp::new(SetOp::Add(0), execs));
                let mut panicked_at = None;
                for k in 1..=2 * d.backlog_limit() as u64 + 2 {
                    let r = catch_unwind(AssertUnwindSafe(|| a.update(CountedOp::new(SetOp::Add(k), execs))));
                    if let Err(p) = r {
                        assert!(panic_text(p).contains("panics on purpose"));
                        panicked_at = Some(k);
                        break;
                    }
                    b.update(CountedOp::new(SetOp::Add(k), execs));
                }
                let k = panicked_at.expect("a full backlog was applied by an update");
                assert_eq!(a.read(sorted), (1..=k).collect::<Vec<_>>(), "the update that applied it was kept");
            },
        );
    });
}

/// Runs `body` for each of `configs` (given one slot per core) on one thread pinned to a
/// CPU, with the domain, two fresh objects `a`
/// and `b` (whose updates evict each other's logs) and the count of operations run.
fn two_objects_on_one_slot(
    configs: [Config; 2],
    body: impl Fn(&Domain<Ordered<CountedOp>>, &Set, &Set, &Arc<AtomicUsize>) + Sync,
) {
    for config in configs {
        let d = Domain::<Ordered<CountedOp>>::new(config.cache_slots(1)).unwrap();
        let execs = Arc::new(AtomicUsize::new(0));
        let a = OpLog::with_domain(&d, BTreeSet::new());
        let b = OpLog::with_domain(&d, BTreeSet::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                pin_round_robin(0);
                body(&d, &a, &b, &execs);
            });
        });
    }
}

/// `config` pinned to the logged representation.
fn logged(config: Config) -> Config {
    config.representation(oplog::Representation::Logged)
}

/// The objects of [`two_objects_on_one_slot`].
type Set = OpLog<Ordered<CountedOp>>;

/// An eviction that takes a log which is all its object has logged (one core's, no
/// backlog) applies it at once, running its operations in the evicting update: one that
/// panics reaches that update (of another object), which is kept, as is every update that
/// did not panic. Few enough caches that each core has a bit of its own in the core mask.
#[test]
fn fault_an_evictor_that_applies_a_panicking_log_keeps_its_update() {
    quiet_expected_panics();
    with_watchdog("evictor applying a panicking log", LIMIT, || {
        let configs = [logged(Config::per_cpu().cpus(2)), logged(Config::per_thread().max_threads(4))];
        two_objects_on_one_slot(configs, |d, a, b, execs| {
            a.update(CountedOp::new(SetOp::Add(1), execs));
            a.update(CountedOp::panicking(execs));
            a.update(CountedOp::new(SetOp::Add(2), execs));
            let r = catch_unwind(AssertUnwindSafe(|| b.update(CountedOp::new(SetOp::Add(7), execs))));
            let p = r.expect_err("the evicting update ran the panicking operation");
            assert!(panic_text(p).contains("panics on purpose"));
            assert_eq!(d.backlogged_logs(), 0, "the evicted log was applied, not parked");
            assert_eq!(b.read(sorted), vec![7], "the evicting update was kept");
            assert_eq!(a.read(sorted), vec![1, 2], "every update of `a` that did not panic was kept");
        });
    });
}

/// The adaptive version of the test above: `a`'s logs are evicted after one update each, so
/// an evictor (an update of `b`) switches `a` to direct and applies its backlog, whose
/// first operation panics. The panic reaches that update of `b` (or a later update of `a`),
/// as the crate docs list, and every update that did not panic is kept, the evictor's own
/// included.
#[test]
fn fault_an_evictor_that_switches_its_victim_keeps_its_update() {
    quiet_expected_panics();
    with_watchdog("evictor switching a victim with a panicking backlog", LIMIT, || {
        two_objects_on_one_slot([Config::per_cpu(), Config::per_thread()], |d, a, b, execs| {
            a.update(CountedOp::panicking(execs));
            let (mut to_a, mut to_b) = (Vec::new(), Vec::new());
            let mut panicked = false;
            for k in 0..=4 * d.backlog_limit() as u64 {
                for (o, keys) in [(b, &mut to_b), (a, &mut to_a)] {
                    let r = catch_unwind(AssertUnwindSafe(|| o.update(CountedOp::new(SetOp::Add(k), execs))));
                    keys.push(k);
                    if let Err(p) = r {
                        assert!(panic_text(p).contains("panics on purpose"));
                        panicked = true;
                    }
                }
                if panicked {
                    break;
                }
            }
            assert!(panicked, "the panicking operation ran");
            assert_eq!(a.read(sorted), to_a, "no update of `a` was lost");
            assert_eq!(b.read(sorted), to_b, "no update of `b` was lost, the evictor's included");
        });
    });
}

/// Issue 16, item 1 at random: 4 threads on few cores, 1 % panicking operations, tiny log
/// caches and logs, so updates hand off logs, evict each other, apply backlogs that panic
/// and (adaptive and direct) apply in place after logs that panic, in every
/// representation. Every operation that does not panic is applied exactly once.
#[test]
fn fault_random_panics_lose_no_update() {
    random_panics_lose_no_update::<Ordered<CountedOp>>(|op| op);
}

/// The same with logs that may be applied alone: owners apply their own full logs, and
/// full backlogs are applied without the other cores' slots.
#[test]
fn fault_random_panics_lose_no_update_when_logs_apply_alone() {
    random_panics_lose_no_update::<Unordered<Alone>>(Alone);
}

/// [`CountedOp`] declared to apply alone: adds of distinct keys commute.
struct Alone(CountedOp);

impl Update for Alone {
    type Target = BTreeSet<u64>;
    const APPLY_ALONE: bool = true;
    fn exec(self, set: &mut BTreeSet<u64>) {
        self.0.exec(set);
    }
}

fn random_panics_lose_no_update<K: LogKind<State = BTreeSet<u64>>>(wrap: fn(CountedOp) -> K::Op) {
    quiet_expected_panics();
    with_watchdog("random panics", LIMIT, || {
        const PER_THREAD: u64 = if cfg!(miri) { 50 } else { 20_000 };
        let configs = [Representation::Adaptive, Representation::Logged, Representation::Direct]
            .into_iter()
            .flat_map(|r| [Config::per_cpu().representation(r), Config::per_thread().representation(r)]);
        for config in configs {
            let d = Domain::<K>::new(config.clone().cache_slots(2).max_log_len(4)).unwrap();
            let execs = Arc::new(AtomicUsize::new(0));
            let objects: Vec<_> = (0..3).map(|_| OpLog::with_domain(&d, BTreeSet::new())).collect();
            let issued = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for t in 0..4u64 {
                    let (objects, execs, issued) = (&objects, &execs, &issued);
                    s.spawn(move || {
                        let mut rng = Rng::with_seed(t + 1);
                        for k in 0..PER_THREAD {
                            let o = &objects[rng.usize(..objects.len())];
                            let op = if rng.u32(..100) == 0 {
                                CountedOp::panicking(execs)
                            } else {
                                issued.fetch_add(1, Ordering::SeqCst);
                                CountedOp::new(SetOp::Add(t << 32 | k), execs)
                            };
                            let _ = catch_unwind(AssertUnwindSafe(|| o.update(wrap(op))));
                            if rng.u32(..64) == 0 {
                                let _ = catch_unwind(AssertUnwindSafe(|| o.read(|_| ())));
                            }
                        }
                    });
                }
            });
            let total: usize = objects
                .iter()
                .map(|o| {
                    loop {
                        if let Ok(n) = catch_unwind(AssertUnwindSafe(|| o.read(BTreeSet::len))) {
                            break n;
                        }
                    }
                })
                .sum();
            assert_eq!(total, issued.load(Ordering::SeqCst), "every non-panicking update applied once ({config:?})");
        }
    });
}
