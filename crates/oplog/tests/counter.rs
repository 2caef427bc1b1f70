//! The distributed counter (000 Figure 8) under concurrent inc/dec/add and reads.

mod common;

use common::{pin_round_robin, with_watchdog};
use oplog::{Config, Counter, CounterLog, Domain};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Iterations per thread (a few under Miri, which runs code ~100 times slower).
const N: i64 = if cfg!(miri) { 20 } else { 100_000 };

fn exact_under_concurrency(config: Config) {
    let domain = Domain::<CounterLog>::new(config).unwrap();
    let c = Counter::with_domain(&domain, 5);
    std::thread::scope(|s| {
        for t in 0..4 {
            let c = &c;
            s.spawn(move || {
                pin_round_robin(t);
                for i in 0..N {
                    c.inc();
                    c.add(3);
                    c.dec();
                    if i % (N / 10) == 0 {
                        c.read();
                    }
                }
            });
        }
    });
    assert_eq!(c.read(), 5 + 4 * N * 3);
}

#[test]
fn counts_exactly_per_cpu() {
    with_watchdog("counter per-cpu", Duration::from_secs(120), || exact_under_concurrency(Config::per_cpu()));
}

#[test]
fn counts_exactly_per_thread() {
    with_watchdog("counter per-thread", Duration::from_secs(120), || exact_under_concurrency(Config::per_thread()));
}

#[test]
fn reads_of_an_increment_only_counter_never_go_backwards_or_ahead() {
    // Linearizable reads of a counter that only grows are non-decreasing and never exceed
    // the increments started so far.
    for config in [Config::per_cpu(), Config::per_thread()] {
        let domain = Domain::<CounterLog>::new(config).unwrap();
        let c = Counter::with_domain(&domain, 0);
        let started = std::sync::atomic::AtomicI64::new(0);
        let done = AtomicBool::new(false);
        with_watchdog("monotone reads", Duration::from_secs(120), move || {
            std::thread::scope(|s| {
                for t in 0..2 {
                    let (c, started, done) = (&c, &started, &done);
                    s.spawn(move || {
                        pin_round_robin(t);
                        for _ in 0..2 * N {
                            started.fetch_add(1, Ordering::SeqCst);
                            c.inc();
                        }
                        if t == 0 {
                            done.store(true, Ordering::SeqCst);
                        }
                    });
                }
                let (c, started, done) = (&c, &started, &done);
                s.spawn(move || {
                    let mut last = 0;
                    while !done.load(Ordering::SeqCst) {
                        let v = c.read();
                        assert!(v >= last, "read {v} after {last}");
                        assert!(v <= started.load(Ordering::SeqCst), "read {v} counts increments not yet started");
                        last = v;
                    }
                });
            });
            assert_eq!(c.read(), 4 * N);
        });
    }
}

#[test]
fn the_default_counter_uses_the_global_domain() {
    let a = Counter::new(0);
    let b = Counter::default();
    a.inc();
    b.add(-4);
    assert_eq!((a.read(), b.read()), (1, -4));
    assert!(std::ptr::eq(a.as_oplog().domain(), b.as_oplog().domain()));
}

/// In ordinary builds; traced builds carry a label in every primitive.
#[test]
#[cfg(not(feature = "trace"))]
#[cfg_attr(miri, ignore = "100,000 counters: too slow under Miri; the slab's own tests run there")]
fn a_counter_costs_24_bytes_whatever_the_core_count() {
    // An 8-byte handle plus an 8-byte entry in the domain's slab (the word) and the
    // entry's 8-byte companion, the value (chunks round up a little).
    let domain = Domain::<CounterLog>::new(Config::per_cpu().cpus(64)).unwrap();
    let counters: Vec<Counter> = (0..100_000).map(|_| Counter::with_domain(&domain, 0)).collect();
    counters.iter().for_each(Counter::inc);
    assert_eq!(std::mem::size_of::<Counter>(), 8);
    let per_object = (8 * counters.len() + domain.object_footprint()) as f64 / counters.len() as f64;
    assert!(per_object <= 24.5, "{per_object} bytes per counter");
    assert_eq!(domain.objects(), 100_000);
    drop(counters);
    assert_eq!(domain.objects(), 0);
}

/// More threads than CPUs, unpinned, so threads are preempted and migrate inside updates,
/// while a reader synchronizes continuously (taking the slots remotely).
fn preempted_writers_racing_a_reader(config: Config) {
    let domain = Domain::<CounterLog>::new(config).unwrap();
    let c = Counter::with_domain(&domain, 0);
    let done = AtomicBool::new(false);
    // Writers start once the reader has read once, so that its reads overlap theirs however
    // fast the updates are.
    let first_read = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..6)
            .map(|_| {
                let (c, first_read) = (&c, &first_read);
                s.spawn(move || {
                    while !first_read.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    for _ in 0..3 * N {
                        c.inc();
                    }
                })
            })
            .collect();
        let (c2, done2, first_read) = (&c, &done, &first_read);
        let reader = s.spawn(move || {
            let mut last = 0;
            let mut reads = 0;
            while !done2.load(Ordering::SeqCst) {
                let v = c2.read();
                assert!(v >= last, "read {v} after {last}");
                last = v;
                reads += 1;
                first_read.store(true, Ordering::SeqCst);
            }
            reads
        });
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        assert!(reader.join().unwrap() > 0);
    });
    assert_eq!(c.read(), 6 * 3 * N);
}

#[test]
fn per_cpu_slots_survive_preemption_and_migration() {
    let d = Domain::<CounterLog>::new(Config::per_cpu()).unwrap();
    // Traced builds compile the rseq path out (build.rs), and so does Miri.
    if cfg!(all(target_arch = "x86_64", target_os = "linux", not(feature = "trace"), not(miri))) {
        assert!(d.owner_fast_path(), "the rseq fast path is expected on x86-64 Linux with glibc 2.35+");
    }
    with_watchdog("preempted per-cpu", Duration::from_secs(120), || {
        preempted_writers_racing_a_reader(Config::per_cpu());
        preempted_writers_racing_a_reader(Config::per_cpu().rseq(false));
    });
}

#[test]
fn per_thread_slots_survive_preemption_and_sharing() {
    with_watchdog("preempted per-thread", Duration::from_secs(120), || {
        preempted_writers_racing_a_reader(Config::per_thread());
        // Two threads with a cache of their own, four sharing the locked one.
        preempted_writers_racing_a_reader(Config::per_thread().max_threads(2));
    });
}
