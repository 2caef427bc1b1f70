//! Log-cache eviction under collisions racing synchronize.
//!
//! With one slot per core every object collides with every other, so nearly every update
//! evicts another object's log into its backlog while other threads synchronize those
//! objects. Run long enough to hit the races; a deadlock trips the watchdog, a lost or
//! duplicated update fails the final comparison.

mod common;

use common::{Rng, SetOp, pin_round_robin, with_watchdog};
use oplog::{Config, Counter, CounterLog, Domain, OpLog, Ordered, Representation, Unordered, Update};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long each race runs (a moment under Miri, which runs code ~100 times slower).
const RUN: Duration = Duration::from_millis(if cfg!(miri) { 5 } else { 1500 });

fn counters_racing(config: Config) {
    let domain = Domain::<CounterLog>::new(config.cache_slots(1).max_log_len(8)).unwrap();
    let counters: Vec<Counter> = (0..8).map(|_| Counter::with_domain(&domain, 0)).collect();
    let stop = AtomicBool::new(false);
    let totals: Vec<Vec<i64>> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..3)
            .map(|t| {
                let (counters, stop) = (&counters, &stop);
                s.spawn(move || {
                    pin_round_robin(t);
                    let mut rng = Rng::with_seed(t as u64 + 1);
                    let mut mine = vec![0i64; counters.len()];
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..64 {
                            let i = rng.usize(..counters.len());
                            let d = rng.i64(-1..4);
                            counters[i].add(d);
                            mine[i] += d;
                        }
                    }
                    mine
                })
            })
            .collect();
        let reader = {
            let (counters, stop) = (&counters, &stop);
            s.spawn(move || {
                pin_round_robin(3);
                let mut reads = 0u64;
                // At least one round, however short the run.
                loop {
                    for c in counters {
                        c.read();
                        reads += 1;
                    }
                    if stop.load(Ordering::Relaxed) {
                        break reads;
                    }
                }
            })
        };
        let start = Instant::now();
        while start.elapsed() < RUN {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        writers.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, c) in counters.iter().enumerate() {
        let expected: i64 = totals.iter().map(|t| t[i]).sum();
        assert_eq!(c.read(), expected, "counter {i}");
    }
    drop(counters);
    assert_eq!(domain.backlogged_objects(), 0, "dropped objects leave no backlog behind");
}

#[test]
fn colliding_counters_per_cpu() {
    with_watchdog("colliding counters per-cpu", Duration::from_secs(120), || counters_racing(Config::per_cpu()));
}

#[test]
fn colliding_counters_per_thread() {
    with_watchdog("colliding counters per-thread", Duration::from_secs(120), || counters_racing(Config::per_thread()));
}

#[test]
fn colliding_ordered_sets_keep_each_threads_order() {
    with_watchdog("colliding sets", Duration::from_secs(120), || {
        for config in [Config::per_cpu(), Config::per_thread()] {
            let domain = Domain::<Ordered<SetOp>>::new(config.cache_slots(1).max_log_len(4)).unwrap();
            let sets: Vec<OpLog<Ordered<SetOp>>> =
                (0..4).map(|_| OpLog::with_domain(&domain, BTreeSet::new())).collect();
            let stop = AtomicBool::new(false);
            let models: Vec<Vec<BTreeSet<u64>>> = std::thread::scope(|s| {
                let writers: Vec<_> = (0..3u64)
                    .map(|t| {
                        let (sets, stop) = (&sets, &stop);
                        s.spawn(move || {
                            pin_round_robin(t as usize);
                            let mut rng = Rng::with_seed(t + 7);
                            let mut models = vec![BTreeSet::new(); sets.len()];
                            while !stop.load(Ordering::Relaxed) {
                                let i = rng.usize(..sets.len());
                                let k = t * 100 + rng.u64(..8);
                                let op = if rng.bool() { SetOp::Add(k) } else { SetOp::Remove(k) };
                                op.apply_to(&mut models[i]);
                                sets[i].update(op);
                            }
                            models
                        })
                    })
                    .collect();
                let (sets2, stop2) = (&sets, &stop);
                s.spawn(move || {
                    while !stop2.load(Ordering::Relaxed) {
                        for set in sets2 {
                            set.read(|_| ());
                        }
                    }
                });
                std::thread::sleep(RUN);
                stop.store(true, Ordering::Relaxed);
                writers.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (i, set) in sets.iter().enumerate() {
                let expected: BTreeSet<u64> = models.iter().flat_map(|m| m[i].iter().copied()).collect();
                assert_eq!(set.read(|s| s.clone()), expected, "set {i}");
            }
        }
    });
}

#[test]
fn evicted_logs_are_applied_at_once_or_parked_within_the_bound() {
    // More objects than slots: each update evicts another object's log. A counter's log
    // may be applied alone, and the evictor applies it at once; an ordered log must merge
    // with the owner's other logs, so it waits in the owner's backlog (no lock, no barrier,
    // no other core's slot), at most `backlog_limit` logs per object, until a read.
    // Under Miri 20 objects: still five per slot, so every update still evicts a log (the
    // path under test) and the bound is checked over as many rounds; 100 only repeat it.
    const OBJECTS: usize = if cfg!(miri) { 20 } else { 100 };
    let counters_domain = Domain::<CounterLog>::new(Config::per_cpu().cache_slots(4)).unwrap();
    let counters: Vec<Counter> = (0..OBJECTS).map(|_| Counter::with_domain(&counters_domain, 0)).collect();
    let sets_domain = Domain::<Ordered<SetOp>>::new(Config::per_cpu().cache_slots(4)).unwrap();
    let sets: Vec<OpLog<Ordered<SetOp>>> =
        (0..OBJECTS).map(|_| OpLog::with_domain(&sets_domain, BTreeSet::new())).collect();
    std::thread::scope(|s| {
        s.spawn(|| {
            for round in 0..3 {
                counters.iter().for_each(Counter::inc);
                sets.iter().for_each(|set| set.update(SetOp::Add(round)));
            }
        });
    });
    assert_eq!(counters_domain.backlogged_logs(), 0);
    assert!(sets_domain.backlogged_logs() <= sets.len() * sets_domain.backlog_limit());
    assert!(counters.iter().all(|c| c.read() == 3));
    assert!(sets.iter().all(|s| s.read(|s| s.len()) == 3));
    assert_eq!(sets_domain.backlogged_logs(), 0, "reads took every parked log");
}

/// The domain's cache statistics count every miss, eviction and logged update: one thread
/// cycling over more objects than slots misses on every update; one object never misses
/// after its first. (Pinned to the logged representation: adaptive objects that keep losing
/// their slots switch to direct, see below.)
#[test]
fn cache_stats_count_misses_evictions_and_updates() {
    let config = Config::per_thread().cache_slots(2).max_threads(2).representation(Representation::Logged);
    let domain = Domain::<CounterLog>::new(config).unwrap();
    let counters: Vec<Counter> = (0..4).map(|_| Counter::with_domain(&domain, 0)).collect();
    let before = domain.cache_stats();
    // Objects 0 and 2 share a slot, 1 and 3 the other (counters made one after the other
    // alternate slots, `slab`): each update evicts the log of the object before it in its
    // slot.
    for round in 0..10 {
        for c in &counters {
            c.inc();
        }
        assert_eq!(domain.cache_stats().since(&before).installs, 4 * (round + 1));
    }
    let total: i64 = counters.iter().map(Counter::read).sum();
    assert_eq!(total, 40);
    let s = domain.cache_stats().since(&before);
    assert_eq!((s.installs, s.evictions, s.updates), (40, 38, 40), "{s:?}");
    assert_eq!(s.hit_rate(), Some(0.0));

    let hot = Counter::with_domain(&domain, 0);
    let before = domain.cache_stats();
    (0..100).for_each(|_| hot.inc());
    assert_eq!(hot.read(), 100);
    let s = domain.cache_stats().since(&before);
    assert_eq!((s.installs, s.updates), (1, 100), "{s:?}");
    assert_eq!(s.hit_rate(), Some(0.99));
}

/// A counter's eviction where it tells no policy anything (a domain pinned to logged) folds
/// the log into the victim's value, with nothing parked in a backlog; while the victim's
/// lock is held (a synchronize's guard: updates go on), the victim keeps its slot and the
/// evicting update applies in place; the next miss, the lock free, takes the slot. Every
/// update counts once, and no barrier is sent.
#[test]
fn a_counter_eviction_folds_the_log_or_leaves_the_slot_to_a_locked_victim() {
    for config in [Config::per_cpu().cpus(1), Config::per_thread().max_threads(1)] {
        let domain = Domain::<CounterLog>::new(config.cache_slots(1).representation(Representation::Logged)).unwrap();
        let (a, b) = (Counter::with_domain(&domain, 0), Counter::with_domain(&domain, 0));
        let before = domain.cache_stats();
        a.inc();
        b.inc();
        let s = domain.cache_stats().since(&before);
        assert_eq!((s.installs, s.evictions, s.evictions_to_backlog, s.misses_in_place), (2, 1, 0, 0), "{s:?}");
        assert_eq!(domain.backlogged_objects(), 0);
        assert_eq!((a.read(), b.read()), (1, 1));

        a.inc();
        let guard = a.as_oplog().synchronize();
        a.inc();
        // `a`'s log is folded, but its lock is taken: `a` keeps the slot.
        b.inc();
        let s = domain.cache_stats().since(&before);
        assert_eq!((s.installs, s.evictions, s.misses_in_place), (3, 2, 1), "{s:?}");
        assert_eq!(*guard, 2, "the guard shows what was synchronized");
        drop(guard);
        assert_eq!((a.read(), b.read()), (3, 2));
        // The slot still publishes `a`, its log empty; its lock is free now.
        b.inc();
        let s = domain.cache_stats().since(&before);
        assert_eq!((s.installs, s.evictions, s.misses_in_place, s.barriers), (4, 2, 1, 0), "{s:?}");
        assert_eq!((a.read(), b.read()), (3, 3));
    }
}

/// Adds to a `u64`: an unordered update that keeps the default global absorption.
#[derive(Debug)]
struct Add(u64);

impl Update for Add {
    type Target = u64;
    fn exec(self, t: &mut u64) {
        *t += self.0;
    }
}

/// Adaptive objects that keep losing their slots (more hot objects than slots, so each log
/// is evicted after one update) switch to direct, counters and a user's unordered type
/// alike, in per-CPU and per-thread domains; no update is lost on the way.
#[test]
fn objects_that_keep_losing_their_slots_go_direct_and_lose_nothing() {
    // Each object loses its slot about once per round (a moment under Miri).
    const ROUNDS: u64 = if cfg!(miri) { 8 } else { 200 };
    // Under Miri 16 hot objects: still four per slot, so each log is still evicted after one
    // update and each object sees as many evictions (ROUNDS) as with 64; the switch to
    // direct and the final counts are checked the same way, over fewer objects.
    const OBJECTS: usize = if cfg!(miri) { 16 } else { 64 };
    for config in [Config::per_cpu(), Config::per_thread().max_threads(4)] {
        let config = config.cache_slots(4);
        let counters_domain = Domain::<CounterLog>::new(config.clone()).unwrap();
        let adds_domain = Domain::<Unordered<Add>>::new(config).unwrap();
        let counters: Vec<Counter> = (0..OBJECTS).map(|_| Counter::with_domain(&counters_domain, 0)).collect();
        let adds: Vec<OpLog<Unordered<Add>>> = (0..OBJECTS).map(|_| OpLog::with_domain(&adds_domain, 0)).collect();
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let (counters, adds) = (&counters, &adds);
                s.spawn(move || {
                    for round in 0..ROUNDS {
                        for i in 0..counters.len() {
                            let j = (i + 7 * t as usize + round as usize) % counters.len();
                            counters[j].inc();
                            adds[j].update(Add(t + 1));
                        }
                    }
                });
            }
        });
        let direct = counters.iter().filter(|c| c.as_oplog().representation() == Representation::Direct).count();
        assert!(direct > counters.len() / 2, "only {direct} of {} thrashing counters went direct", counters.len());
        let direct = adds.iter().filter(|o| o.representation() == Representation::Direct).count();
        assert!(direct > adds.len() / 2, "only {direct} of {} thrashing objects went direct", adds.len());
        assert!(counters.iter().all(|c| c.read() == 3 * ROUNDS as i64));
        assert!(adds.iter().all(|o| o.read(|v| *v) == 6 * ROUNDS));
    }
}

/// An [`Unordered`] kind that keeps the default global absorption has its full logs applied
/// alone by their owner, as a kind declaring `APPLY_ALONE` does, from its first update on
/// (making the domain's first object showed that the kind absorbs nothing globally); for a
/// kind with global absorption of its own (which may pair operations across cores' logs),
/// a full log is always handed off to the object's backlog.
#[test]
fn full_logs_are_applied_alone_where_the_kind_has_no_global_absorption() {
    use std::collections::VecDeque;
    #[derive(Debug)]
    struct Pairing(u64);
    impl Update for Pairing {
        type Target = u64;
        fn exec(self, t: &mut u64) {
            *t += self.0;
        }
        fn absorb_global(_: &u64, ops: &mut VecDeque<Self>) {
            // An override, however small: OpLog cannot see what it pairs.
            ops.retain(|op| op.0 != 0);
        }
    }
    /// Hand-offs in a pinned-logged domain with logs of 4: `updates` updates, a read, as
    /// many updates again; the last read's total.
    fn hand_offs<U: Update<Target = u64>>(op: impl Fn() -> U) -> (u64, u64, u64) {
        let d = Domain::<Unordered<U>>::new(
            Config::per_thread().max_threads(2).max_log_len(4).representation(Representation::Logged),
        )
        .unwrap();
        let o = OpLog::with_domain(&d, 0);
        (0..8).for_each(|_| o.update(op()));
        let first = d.cache_stats().hand_offs;
        assert_eq!(o.read(|v| *v), 8);
        let before = d.cache_stats();
        (0..40).for_each(|_| o.update(op()));
        let after = d.cache_stats().since(&before).hand_offs;
        (first, after, o.read(|v| *v))
    }
    assert_eq!(hand_offs(|| Add(1)), (0, 0, 48), "default global absorption: applied alone from the start");
    assert_eq!(hand_offs(|| Pairing(1)), (2, 10, 48), "global absorption of its own: always handed off");
}
