//! Which calls send barriers (crate docs, "Barriers"; issue 9 item 1), counted by
//! [`CacheStats::barriers`](oplog::CacheStats::barriers): update-only workloads of counters
//! and of kinds whose logs may be applied alone (declared, or learned by the domain) send
//! none, with full logs, evictions and representation switches on the way; neither do
//! those of kinds whose updates must meet every logged one (ordered, or with a global
//! absorption of their own), nor their reads, even where a core's old log holds back a
//! full backlog; a read that takes a log of a kind applied alone out of another core's
//! lock-free slot sends one, and the next reads, finding the slot in spin mode, none.

mod common;

use common::with_watchdog;
use oplog::{Config, Counter, CounterLog, Domain, LogKind, OpLog, Ordered, Representation, Unordered, Update};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// Adds to one of eight totals: an unordered update that declares its logs may be applied
/// alone.
struct Bump(usize);

impl Update for Bump {
    type Target = [u64; 8];
    const APPLY_ALONE: bool = true;
    fn exec(self, t: &mut [u64; 8]) {
        t[self.0 % 8] += 1;
    }
}

/// [`Bump`] as a user writes it, with only `exec`: its domain learns from its first object
/// that the logs may be applied alone (the default global absorption).
struct Learned(usize);

impl Update for Learned {
    type Target = [u64; 8];
    fn exec(self, t: &mut [u64; 8]) {
        t[self.0 % 8] += 1;
    }
}

/// [`Bump`] with a global absorption of its own (which absorbs nothing): its domain never
/// learns that its logs may be applied alone, so its updates must meet every logged one.
struct Paired(usize);

impl Update for Paired {
    type Target = [u64; 8];
    fn exec(self, t: &mut [u64; 8]) {
        t[self.0 % 8] += 1;
    }
    fn absorb_global(_: &[u64; 8], _: &mut VecDeque<Self>) {}
}

/// The domains the workloads run in: per CPU (restartable sequences where they exist) and
/// per thread (the owner flag where `membarrier` exists), adaptive and pinned to logged,
/// with a small log cache (so that hot objects evict each other) and short logs (so that
/// they fill).
/// (Under Miri, which has neither, two of them: it checks the paths' memory accesses.)
fn configs() -> Vec<Config> {
    let representations: &[Representation] =
        if cfg!(miri) { &[Representation::Adaptive] } else { &[Representation::Adaptive, Representation::Logged] };
    let mut configs = Vec::new();
    for base in [Config::per_cpu(), Config::per_thread()] {
        for &representation in representations {
            configs.push(base.clone().cache_slots(16).max_log_len(8).representation(representation));
        }
    }
    configs
}

/// Hot objects: a few, and more than a log cache of 16 slots holds.
const OBJECT_COUNTS: [usize; 2] = if cfg!(miri) { [2, 24] } else { [4, 200] };

/// Three threads (more than this 2-core machine has: unpinned, they migrate), each making
/// `per_thread` updates spread over the objects by `update(thread, k)`.
fn three_threads(per_thread: u64, update: impl Fn(usize, u64) + Sync) {
    std::thread::scope(|s| {
        for t in 0..3 {
            let update = &update;
            s.spawn(move || (0..per_thread).for_each(|k| update(t, k)));
        }
    });
}

#[test]
fn update_only_workloads_of_counters_send_no_barrier() {
    let per_thread = if cfg!(miri) { 40 } else { 200_000 };
    with_watchdog("counters", LIMIT, || {
        for config in configs() {
            // 4 hot counters fit the cache; 200 do not (evictions, switches to direct).
            for n in OBJECT_COUNTS {
                let d = Arc::new(Domain::<CounterLog>::new(config.clone()).unwrap());
                let counters: Vec<Counter> = (0..n).map(|_| Counter::with_domain(&d, 0)).collect();
                three_threads(per_thread, |t, k| counters[(k as usize * 7 + t) % n].inc());
                let stats = d.cache_stats();
                assert_eq!(stats.barriers, 0, "{config:?}, {n} counters: {stats:?}");
                let total: i64 = counters.iter().map(Counter::read).sum();
                assert_eq!(total, 3 * per_thread as i64, "{config:?}, {n} counters");
            }
        }
    });
}

/// Update-only workloads of `L`'s objects ([`OBJECT_COUNTS`]), in each of [`configs`]: after
/// one update and read of a first object (a read may take a log of a kind applied alone
/// from another CPU's lock-free slot, if the thread migrated), no barrier. With
/// `reads_too`, the reads that check the totals send none either.
fn update_only_workload_sends_no_barrier<L: LogKind<State = [u64; 8]>>(make: fn(usize) -> L::Op, reads_too: bool) {
    let per_thread = if cfg!(miri) { 40 } else { 100_000 };
    for config in configs() {
        for n in OBJECT_COUNTS {
            let d = Arc::new(Domain::<L>::new(config.clone()).unwrap());
            let objects: Vec<OpLog<L>> = (0..n).map(|_| OpLog::with_domain(&d, [0; 8])).collect();
            objects[0].update(make(0));
            assert_eq!(objects[0].read(|t| t[0]), 1);
            let before = d.cache_stats();
            three_threads(per_thread, |t, k| objects[(k as usize * 5 + t) % n].update(make(k as usize)));
            let stats = d.cache_stats().since(&before);
            assert_eq!(stats.barriers, 0, "{config:?}, {n} objects: {stats:?}");
            let total: u64 = objects.iter().map(|o| o.read(|t| t.iter().sum::<u64>())).sum();
            assert_eq!(total, 1 + 3 * per_thread, "{config:?}, {n} objects");
            if reads_too {
                assert_eq!(d.cache_stats().barriers, 0, "{config:?}, {n} objects: the reads");
            }
        }
    }
}

#[test]
fn update_only_workloads_of_a_kind_applied_alone_send_no_barrier() {
    with_watchdog("applied alone", LIMIT, || update_only_workload_sends_no_barrier::<Unordered<Bump>>(Bump, false));
}

#[test]
fn update_only_workloads_of_a_kind_that_learned_it_send_no_barrier() {
    with_watchdog("learned", LIMIT, || update_only_workload_sends_no_barrier::<Unordered<Learned>>(Learned, false));
}

#[test]
fn workloads_of_kinds_whose_updates_meet_every_log_send_no_barrier() {
    with_watchdog("ordered", LIMIT, || update_only_workload_sends_no_barrier::<Ordered<Learned>>(Learned, true));
    with_watchdog("own absorption", LIMIT, || update_only_workload_sends_no_barrier::<Unordered<Paired>>(Paired, true));
}

/// Appends its number: the order of an ordered object's operations, seen.
struct Append(u64);

impl Update for Append {
    type Target = Vec<u64>;
    fn exec(self, v: &mut Vec<u64>) {
        v.push(self.0);
    }
}

/// A core logs an ordered object once and goes idle, so that its old log holds back every
/// full backlog of another core's updates (crate docs, "Barriers": the cut applies nothing
/// past a slot's first stamp, and the update that fills the backlog takes that slot): the
/// updates and the read take the idle core's slot without a barrier, in order.
#[test]
fn an_idle_cores_old_log_is_taken_without_a_barrier() {
    // Before any thread here is pinned: a pinned thread's children inherit its one CPU.
    let cpus = ordo::cpu::allowed();
    let updates: u64 = if cfg!(miri) { 100 } else { 20_000 };
    with_watchdog("an idle core's log", LIMIT, || {
        for config in [Config::per_cpu(), Config::per_thread()] {
            let d = Arc::new(
                Domain::<Ordered<Append>>::new(
                    config.clone().max_log_len(8).cache_slots(16).representation(Representation::Logged),
                )
                .unwrap(),
            );
            if d.mode() == oplog::CoreMode::PerCpu && cpus.len() < 2 {
                continue;
            }
            let o = OpLog::with_domain(&d, Vec::new());
            let (logged, wait_logged) = std::sync::mpsc::channel::<()>();
            let (done, wait_done) = std::sync::mpsc::channel::<()>();
            let (o, d, config, cpus) = (&o, &d, &config, &cpus);
            std::thread::scope(|s| {
                s.spawn(move || {
                    ordo::cpu::pin_current_thread(cpus[1 % cpus.len()]).expect("pin to an allowed CPU");
                    o.update(Append(0));
                    logged.send(()).unwrap();
                    // Idle, with its log in its slot, until the other thread is done.
                    wait_done.recv().unwrap();
                });
                s.spawn(move || {
                    ordo::cpu::pin_current_thread(cpus[0]).expect("pin to an allowed CPU");
                    wait_logged.recv().unwrap();
                    (1..=updates).for_each(|k| o.update(Append(k)));
                    let seen = o.read(Vec::clone);
                    assert_eq!(seen, (0..=updates).collect::<Vec<_>>(), "{config:?}");
                    assert_eq!(d.cache_stats().barriers, 0, "{config:?}");
                    done.send(()).unwrap();
                });
            });
        }
    });
}

#[test]
fn a_read_that_takes_another_cores_log_sends_one_barrier_and_leaves_the_slot_in_spin_mode() {
    // Before any thread here is pinned: a pinned thread's children inherit its one CPU.
    let cpus = ordo::cpu::allowed();
    with_watchdog("a read's barrier", LIMIT, || {
        for config in [Config::per_cpu(), Config::per_thread(), Config::per_cpu().rseq(false)] {
            let d = Arc::new(
                Domain::<Unordered<Bump>>::new(config.clone().representation(Representation::Logged)).unwrap(),
            );
            if d.mode() == oplog::CoreMode::PerCpu && cpus.len() < 2 {
                continue;
            }
            // Without a lock-free owner path (no restartable sequences, no `membarrier`,
            // or the spin lock chosen) no barrier is ever needed.
            let expected = u64::from(d.owner_fast_path());
            let o = OpLog::with_domain(&d, [0; 8]);
            // The reader on the first CPU, the updates on the second, from one thread that
            // lives through both (a second thread could get a fresh per-thread slot, if the
            // first one's index were not given back yet): the read takes another CPU's
            // slot (or another thread's).
            let (update, updates) = std::sync::mpsc::channel::<()>();
            let (updated, wait_updated) = std::sync::mpsc::channel::<()>();
            let (o, d, config, cpus) = (&o, &d, &config, &cpus);
            std::thread::scope(|s| {
                s.spawn(move || {
                    ordo::cpu::pin_current_thread(cpus[1 % cpus.len()]).expect("pin to an allowed CPU");
                    for () in updates {
                        o.update(Bump(1));
                        updated.send(()).unwrap();
                    }
                });
                s.spawn(move || {
                    ordo::cpu::pin_current_thread(cpus[0]).expect("pin to an allowed CPU");
                    let log_one = || {
                        update.send(()).unwrap();
                        wait_updated.recv().unwrap();
                    };
                    log_one();
                    assert_eq!(o.read(|t| t[1]), 1);
                    assert_eq!(d.cache_stats().barriers, expected, "{config:?}: the first read");
                    assert_eq!(o.read(|t| t[1]), 1);
                    log_one();
                    assert_eq!(o.read(|t| t[1]), 2);
                    assert_eq!(d.cache_stats().barriers, expected, "{config:?}: the slot stayed in spin mode");
                    drop(update);
                });
            });
        }
    });
}
