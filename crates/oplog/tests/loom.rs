//! loom models of the OpLog mechanics: every interleaving (up to a preemption bound) of
//! a few threads updating, evicting and synchronizing, through the public API, with
//! `oplog_percore::primitive` swapped for loom's atomics, cells, mutexes and fences.
//!
//! Run with (a separate target directory keeps the normal build cache):
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p oplog --release --test loom -- --nocapture --test-threads=1
//! ```
//!
//! Each model prints how many interleavings it explored. The preemption bound defaults to
//! 3 per model so CI finishes in seconds; `LOOM_MAX_PREEMPTIONS` overrides it for every
//! model (`.ci/run --full` uses 4).
//!
//! One limit of loom shapes the models: when two threads spin on a lock held by a third
//! that was preempted, loom explores schedules in which the two yield to each other
//! forever and gives up ("maximum number of branches"). So no model has two threads
//! waiting for the same lock at once. (Spin loops retry with a compare-and-swap, never a
//! swap: a waiter's own stores defeat loom's rule that a load after a yield sees newer
//! stores, which made every spin in these models explode; see `lock::SpinLock`.)
//!
//! Under loom, [`oplog_percore::primitive::current_cpu`] is a per-thread value a model sets with
//! `set_current_cpu` (a "migration"), restartable sequences are off, and the per-thread
//! slots' asymmetric barrier is a pair of `SeqCst` fences. Models use per-CPU domains with
//! one or two CPUs and one slot per cache, except the owner-protocol model, whose per-thread
//! caches are allocated by the threads themselves (std `OnceLock`, outside the model).
//!
//! | model | what it covers |
//! |---|---|
//! | `slot_lock_owner_and_remote` | per-slot lock, owner fast path against a synchronizer's remote acquisition (per-thread slots) |
//! | `slot_lock_shared_on_one_cpu` | per-slot spin lock: two threads on one CPU and a synchronizer |
//! | `eviction_races_synchronize` | a log-cache miss moving a victim's log to its backlog while the victim synchronizes |
//! | `eviction_races_a_concurrent_read` | a log-cache miss applying (counter) or backlogging (unordered) a victim's log and clearing its core bit, against a read of the victim on the concurrent path |
//! | `a_folded_eviction_races_reads_updates_and_a_drop` | a counter's eviction by one fold (no lock of the victim), against a read of the victim on the concurrent path, a read through its lock, an update of it on another core, an update on the same core that takes the slot back, and its drop |
//! | `eviction_races_an_update_and_a_synchronize` | a log-cache miss evicting a victim's log (applied or backlogged, its core bit cleared) while another core updates the victim and a third thread synchronizes it |
//! | `gather_retries_when_a_core_joins` | the synchronize gather loop: a core installing the object mid-gather, and a thread migrating between two ordered updates |
//! | `counter_read_sees_completed_updates` | the counter-log read: exact, monotone, includes every completed update |
//! | `concurrent_read_against_a_writer` | a read on the concurrent path against a synchronize that applies (logged) and a direct update |
//! | `a_guard_against_a_concurrent_read` | a synchronize's guard on its fast path (one compare-and-swap revoking the bias, no gather) writing the instance, against a read on the concurrent path or through the lock (logged and direct) |
//! | `a_read_waiting_for_the_lock_takes_the_concurrent_path` | a read waiting for the lock that another read holds, which re-biases the object as it unlocks, then an update that revokes the bias |
//! | `a_miss_goes_direct_racing_an_update_and_a_read` | where the hot objects outgrew the log cache, a miss that switches its object to direct instead of evicting (or takes the slot, the object logged on another core first), racing that core's update and a read |
//! | `a_switch_races_updates` | a switch of representation racing logged updates |
//! | `a_direct_update_applies_logs_first` | a direct update of an ordered kind, finding another core's log (set in the word's log half without the lock), applies it first, racing a read |
//! | `a_direct_update_leaves_logs_to_the_read` | a direct counter update that leaves another core's log in place (its deltas commute), racing a read that must still see that log |
//! | `a_read_loads_the_value_with_the_slots` | lock-free direct counter updates (adds to its value, the direct log) and updates that log themselves in their slot, before and after, racing a read that must load the value and take the slot at one instant, or load it before it checks for logs |
//! | `giving_up_slots_races_a_concurrent_read` | a switch to direct, which gives up the object's slots, racing an update and a read on the concurrent path |
//! | `a_log_emptied_by_absorption_races_a_read` | an owner whose log local absorption emptied marks its slot emptied (a lazy store) and then publishes its object again, racing a read that may take the concurrent path |
//! | `a_slot_in_spin_mode` | a slot left in spin mode: owner entries through the spin lock, a synchronize without a barrier |
//! | `a_full_backlog_applies_up_to_the_cut` | an ordered object's full backlog applied up to the cut read from the slots' low marks (no slot taken), or synchronized where the cut leaves most of it, racing another core's update that sits in its slot |
//! | `a_backlog_applied_up_to_the_cut_races_a_concurrent_read` | an ordered object's full backlog, taken and applied up to the cut by the update that filled it, racing a read on the concurrent path, which must not find the object quiescent before the backlog's operations are applied |
//! | `an_owner_applies_its_own_full_log` | the owner of a full log that may be applied alone applies it (try-lock, readers excluded) against reads on the concurrent path and through the lock |
//!
//! Two more models live in the crate, because they reach the object's internals (a stamp, or
//! the policy's switch, takes more operations through the public API than a prelude
//! allows): `object::eviction::loom_models`, a cache miss applied in place (a hot object's
//! miss against another hot object's log) racing a read on the concurrent path and another
//! core's logged update; and `object::loom_models`, a switch to direct of a kind that
//! learned its logs may be applied alone, which gives up the object's slots only where
//! that needs no barrier, racing another thread's logged update and read. Run them with
//! `--lib loom_models` in place of `--test loom`.
//!
//! Refcache's epoch advance and weak revival have their models in `crates/refcount/tests/loom.rs`;
//! every model runs through `oplog_lincheck::testkit::loom_model`.
#![cfg(loom)]

mod common;

use common::{ABSORB_LOCAL, CountedOp, SetOp};
use loom::sync::atomic::{AtomicBool, AtomicU64};
use loom::thread;
use oplog::{Config, Counter, CounterLog, Domain, OpLog, Ordered, Representation, Unordered, Update};
use oplog_lincheck::testkit::loom_model;
use oplog_percore::primitive::set_current_cpu;
use ordo::Clock;
use std::collections::BTreeSet;
use std::fmt::{Debug, Display};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Spawns a thread on CPU 1 that runs `update`, raises the returned flag (release), then
/// runs `after`: a thread that sees the flag raised knows `update` completed.
fn update_on_cpu_1(
    update: impl FnOnce() + Send + 'static,
    after: impl FnOnce() + Send + 'static,
) -> (thread::JoinHandle<()>, Arc<AtomicBool>) {
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    let writer = thread::spawn(move || {
        set_current_cpu(1);
        update();
        flag.store(true, Ordering::Release);
        after();
    });
    (writer, done)
}

/// The main thread's side of a race with the writer `update_on_cpu_1` returned: one `read`,
/// which sees `after` if the writer's `update` completed before it began, else `before` or
/// `after`; then, the writer joined, `read` sees `after`.
fn read_racing_the_writer<T: Copy + PartialEq + Debug + Display>(
    (writer, done): (thread::JoinHandle<()>, Arc<AtomicBool>),
    read: impl Fn() -> T,
    (before, after): (T, T),
    update: &str,
) {
    let completed = done.load(Ordering::Acquire);
    let seen = read();
    let want: &[T] = if completed { &[after] } else { &[before, after] };
    assert!(want.contains(&seen), "read {seen} ({update} completed: {completed})");
    writer.join().unwrap();
    assert_eq!(read(), after);
}

/// Runs `update` to the end on CPU 1 while this thread holds the object lock (`_held`, a
/// synchronize's guard): finding the lock taken, the update logs itself in CPU 1's slot.
fn log_on_cpu_1<G>(_held: G, update: impl FnOnce() + Send + 'static) {
    thread::spawn(move || {
        set_current_cpu(1);
        update();
    })
    .join()
    .unwrap();
}

/// A per-CPU counter domain with `cpus` CPUs and one slot per cache.
fn counter_domain(cpus: usize) -> Arc<Domain<CounterLog>> {
    Domain::new(Config::per_cpu().cpus(cpus).cache_slots(1)).unwrap()
}

/// Core 0's slot of `d` (one CPU, one slot per cache) holds `a`'s log and `b`'s update
/// evicts it, while `a`, biased by a read through the lock, is read on the concurrent path:
/// the read sees the completed increment.
fn counter_evicted_under_a_concurrent_read(d: Arc<Domain<CounterLog>>) {
    let a = Arc::new(Counter::with_domain(&d, 0));
    let b = Counter::with_domain(&d, 0);
    assert_eq!(a.read(), 0, "a read through the lock biases the object");
    a.inc();
    let reader = {
        let a = a.clone();
        thread::spawn(move || assert_eq!(a.read(), 1, "the completed increment is seen"))
    };
    b.inc();
    reader.join().unwrap();
    assert_eq!((a.read(), b.read()), (1, 1));
}

/// Core 0's slot of `d` (two CPUs, one slot per cache) holds `a`'s log and `b`'s update
/// evicts it, while core 1 updates `a` and the main thread reads it: no update is lost or
/// counted twice, and the read sees every update that completed before it began.
fn counter_evicted_under_an_update_and_a_read(d: Arc<Domain<CounterLog>>) {
    let a = Arc::new(Counter::with_domain(&d, 0));
    let b = Arc::new(Counter::with_domain(&d, 0));
    a.inc();
    let evictor = {
        let b = b.clone();
        thread::spawn(move || b.inc())
    };
    let updater = {
        let a = a.clone();
        thread::spawn(move || {
            set_current_cpu(1);
            a.inc();
        })
    };
    let seen = a.read();
    assert!((1..=2).contains(&seen), "read {seen}: the completed increment is seen, none twice");
    evictor.join().unwrap();
    updater.join().unwrap();
    assert_eq!((a.read(), b.read()), (2, 1));
}

/// A per-CPU counter domain with `cpus` CPUs and one slot per cache, pinned to logged (so
/// that an eviction tells no policy anything).
fn logged_counter_domain(cpus: usize) -> Arc<Domain<CounterLog>> {
    Domain::new(Config::per_cpu().cpus(cpus).cache_slots(1).representation(Representation::Logged)).unwrap()
}

/// A per-CPU counter domain with two CPUs and one slot per cache, pinned to `representation`.
fn pinned_counter_domain(representation: Representation) -> Arc<Domain<CounterLog>> {
    Domain::new(Config::per_cpu().cpus(2).cache_slots(1).representation(representation)).unwrap()
}

#[test]
fn slot_lock_owner_and_remote() {
    loom_model("slot_lock_owner_and_remote", 3, || {
        let d = Domain::<CounterLog>::new(Config::per_thread().max_threads(1).cache_slots(1)).unwrap();
        assert!(d.owner_fast_path(), "per-thread slots use the owner protocol under loom");
        let c = Arc::new(Counter::with_domain(&d, 0));
        let writer = {
            let c = c.clone();
            thread::spawn(move || {
                c.inc();
                c.inc();
            })
        };
        // A synchronize taking the writer's slot remotely, maybe while it is inside.
        let seen = c.read();
        assert!((0..=2).contains(&seen), "read {seen}");
        writer.join().unwrap();
        assert_eq!(c.read(), 2);
    });
}

#[test]
fn slot_lock_shared_on_one_cpu() {
    // Two threads on one CPU share its slot through the spin lock. (No third thread
    // spinning at the same time: loom cannot bound two threads that yield to each other
    // while the holder waits, see the module docs; the reader's contention with writers is
    // in the other models.)
    loom_model("slot_lock_shared_on_one_cpu", 3, || {
        let d = counter_domain(1);
        let c = Arc::new(Counter::with_domain(&d, 0));
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let c = c.clone();
                thread::spawn(move || {
                    c.inc();
                    c.add(2);
                })
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        assert_eq!(c.read(), 6);
    });
}

#[test]
fn eviction_races_synchronize() {
    loom_model("eviction_races_synchronize", 3, || {
        let d = counter_domain(1);
        let a = Arc::new(Counter::with_domain(&d, 0));
        let b = Arc::new(Counter::with_domain(&d, 0));
        let done = Arc::new(AtomicBool::new(false));
        let evictor = {
            let (a, b, done) = (a.clone(), b.clone(), done.clone());
            thread::spawn(move || {
                a.inc();
                done.store(true, Ordering::Release);
                // One slot: installing `b` moves `a`'s log to `a`'s backlog, maybe while
                // the reader is synchronizing `a`.
                b.inc();
            })
        };
        let completed = done.load(Ordering::Acquire);
        let seen = a.read();
        assert!(seen <= 1 && (!completed || seen == 1), "read {seen} (increment completed: {completed})");
        evictor.join().unwrap();
        assert_eq!((a.read(), b.read()), (1, 1));
        drop((a, b));
        assert_eq!(d.backlogged_objects(), 0, "nothing left behind");
    });
}

/// An eviction takes the victim's log out of its slot and clears the victim's bit for that
/// core; a read of the victim on the concurrent path, racing it, still sees the update the
/// log held (before the bit was cleared only once the log was in the backlog or readers
/// were excluded, such a read skipped the slot and missed the log).
#[test]
fn eviction_races_a_concurrent_read() {
    loom_model("eviction_races_a_concurrent_read/counter", 3, || {
        counter_evicted_under_a_concurrent_read(counter_domain(1))
    });
    loom_model("eviction_races_a_concurrent_read/unordered", 3, || {
        let d = Domain::<Unordered<Add>>::new(Config::per_cpu().cpus(1).cache_slots(1)).unwrap();
        let a = Arc::new(OpLog::with_domain(&d, 0));
        let b = OpLog::with_domain(&d, 0);
        assert_eq!(a.read(|v| *v), 0, "a read through the lock biases the object");
        a.update(Add(1));
        let reader = {
            let a = a.clone();
            thread::spawn(move || assert_eq!(a.read(|v| *v), 1, "the completed update is seen"))
        };
        b.update(Add(1));
        reader.join().unwrap();
        assert_eq!((a.read(|v| *v), b.read(|v| *v)), (1, 1));
    });
}

/// The counter's eviction by one fold (`object`'s `eviction`, "Eviction by one fold":
/// a domain pinned to logged, where an eviction tells no policy anything): core 0's slot
/// holds `a`'s log and `b`'s update evicts it, adding it to `a`'s value without `a`'s
/// lock, while `a` is read on the concurrent path, read through its lock, updated on
/// another core, updated again on core 0 (taking the slot back from `b` the same way), and
/// dropped. Every read sees every update that completed before it began, none twice.
#[test]
fn a_folded_eviction_races_reads_updates_and_a_drop() {
    loom_model("a_folded_eviction_races_reads_updates_and_a_drop/concurrent read", 3, || {
        counter_evicted_under_a_concurrent_read(logged_counter_domain(1))
    });
    loom_model("a_folded_eviction_races_reads_updates_and_a_drop/read through the lock", 3, || {
        let d = logged_counter_domain(1);
        let a = Arc::new(Counter::with_domain(&d, 0));
        let b = Counter::with_domain(&d, 0);
        a.inc();
        let reader = {
            let a = a.clone();
            thread::spawn(move || assert_eq!(*a.as_oplog().synchronize(), 1, "the completed increment is seen"))
        };
        b.inc();
        reader.join().unwrap();
        assert_eq!((a.read(), b.read()), (1, 1));
    });
    loom_model("a_folded_eviction_races_reads_updates_and_a_drop/update and read", 3, || {
        counter_evicted_under_an_update_and_a_read(logged_counter_domain(2))
    });
    loom_model("a_folded_eviction_races_reads_updates_and_a_drop/the slot taken back", 3, || {
        let d = logged_counter_domain(1);
        let a = Arc::new(Counter::with_domain(&d, 0));
        let b = Arc::new(Counter::with_domain(&d, 0));
        a.inc();
        // Folded: the slot is `b`'s now.
        b.inc();
        let updater = {
            let a = a.clone();
            thread::spawn(move || a.inc())
        };
        // The update takes the slot back, folding `b`'s log, racing reads of both.
        let seen = a.read();
        assert!((1..=2).contains(&seen), "read {seen}: the completed increment is seen, none twice");
        assert_eq!(b.read(), 1, "the folded increment is seen once");
        updater.join().unwrap();
        assert_eq!((a.read(), b.read()), (2, 1));
    });
    loom_model("a_folded_eviction_races_reads_updates_and_a_drop/drop", 3, || {
        let d = logged_counter_domain(1);
        let a = OpLog::<CounterLog>::with_domain(&d, 0);
        let b = Arc::new(OpLog::<CounterLog>::with_domain(&d, 0));
        a.update(1);
        let evictor = {
            let b = b.clone();
            thread::spawn(move || b.update(1))
        };
        assert_eq!(a.into_inner(), 1, "the increment is in the dropped counter once");
        evictor.join().unwrap();
        assert_eq!(b.read(|v| *v), 1);
    });
}

/// The eviction path against an update of the victim on another core and a synchronize of
/// the victim: core 0's slot holds `a`'s log and `b`'s install evicts it (applied under a
/// try-lock for the counter, and for the unordered log when it is all `a` has logged,
/// else moved to the backlog; the victim's bit for core 0 cleared either way) while core 1 updates `a` (setting its own bit) and the
/// main thread reads `a`. No update is lost or counted twice, and a read sees every update
/// that completed before it began.
#[test]
fn eviction_races_an_update_and_a_synchronize() {
    loom_model("eviction_races_an_update_and_a_synchronize/counter", 3, || {
        counter_evicted_under_an_update_and_a_read(counter_domain(2))
    });
    loom_model("eviction_races_an_update_and_a_synchronize/unordered", 3, || {
        let d = Domain::<Unordered<Add>>::new(Config::per_cpu().cpus(2).cache_slots(1)).unwrap();
        let a = Arc::new(OpLog::with_domain(&d, 0));
        let b = Arc::new(OpLog::with_domain(&d, 0));
        a.update(Add(1));
        let evictor = {
            let b = b.clone();
            thread::spawn(move || b.update(Add(1)))
        };
        let updater = {
            let a = a.clone();
            thread::spawn(move || {
                set_current_cpu(1);
                a.update(Add(1));
            })
        };
        let seen = a.read(|v| *v);
        assert!((1..=2).contains(&seen), "read {seen}: the completed update is seen, none twice");
        evictor.join().unwrap();
        updater.join().unwrap();
        assert_eq!((a.read(|v| *v), b.read(|v| *v)), (2, 1));
        drop((a, b));
        assert_eq!(d.backlogged_objects(), 0, "nothing left behind");
    });
}

/// A clock for loom: one loom atomic counter, so its ordering is modelled too.
struct LoomClock(AtomicU64);

impl Clock for LoomClock {
    fn get_time(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
    fn boundary(&self) -> u64 {
        0
    }
    fn raw_order_is_causal(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "loom"
    }
}

#[test]
fn gather_retries_when_a_core_joins() {
    loom_model("gather_retries_when_a_core_joins", 3, || {
        let clock: Arc<dyn Clock> = Arc::new(LoomClock(AtomicU64::new(0)));
        let d = Domain::<Ordered<SetOp>>::new(Config::per_cpu().cpus(2).cache_slots(1).clock(clock)).unwrap();
        let set = Arc::new(OpLog::with_domain(&d, BTreeSet::new()));
        // The object already has a log on CPU 1.
        set_current_cpu(1);
        set.update(SetOp::Add(9));
        set_current_cpu(0);
        let done = Arc::new(AtomicBool::new(false));
        let writer = {
            let (set, done) = (set.clone(), done.clone());
            thread::spawn(move || {
                // CPU 0 joins the object's mask, maybe after the reader read it...
                set_current_cpu(0);
                set.update(SetOp::Add(1));
                // ...then, after a migration, the remove lands in CPU 1's log, which the
                // reader holds. A gather that kept CPU 1's log but not CPU 0's would run
                // the remove without the add before it, and the add after.
                set_current_cpu(1);
                set.update(SetOp::Remove(1));
                done.store(true, Ordering::Release);
            })
        };
        let finished = done.load(Ordering::Acquire);
        let seen = set.read(|s| s.contains(&1));
        if finished {
            assert!(!seen, "both updates completed before the read began, so it must see the remove");
        }
        writer.join().unwrap();
        assert_eq!(set.read(|s| s.iter().copied().collect::<Vec<_>>()), vec![9], "the remove ran after the add");
    });
}

#[test]
fn counter_read_sees_completed_updates() {
    loom_model("counter_read_sees_completed_updates", 3, || {
        let d = counter_domain(2);
        let c = Arc::new(Counter::with_domain(&d, 0));
        let done: Arc<[AtomicBool; 2]> = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let writers: Vec<_> = (0..2)
            .map(|cpu| {
                let (c, done) = (c.clone(), done.clone());
                thread::spawn(move || {
                    set_current_cpu(cpu);
                    c.inc();
                    done[cpu].store(true, Ordering::Release);
                })
            })
            .collect();
        let completed = done.iter().filter(|f| f.load(Ordering::Acquire)).count() as i64;
        let first = c.read();
        let second = c.read();
        assert!(
            completed <= first && first <= second && second <= 2,
            "{completed} completed, read {first} then {second}"
        );
        writers.into_iter().for_each(|w| w.join().unwrap());
        assert_eq!(c.read(), 2);
    });
}

/// A read on the concurrent path (the object biased by an earlier read) against a writer
/// that changes the instance: in the logged representation a synchronize applying the
/// writer's log, in the direct one the update itself. loom reports any overlap of the
/// writer's access with the reader's.
#[test]
fn concurrent_read_against_a_writer() {
    for representation in [Representation::Logged, Representation::Direct] {
        loom_model("concurrent_read_against_a_writer", 3, move || {
            let d = pinned_counter_domain(representation);
            let c = Arc::new(Counter::with_domain(&d, 0));
            assert_eq!(c.read(), 0, "a read through the lock biases the object");
            let (writer, done) = {
                let (c1, c2) = (c.clone(), c.clone());
                update_on_cpu_1(move || c1.inc(), move || assert_eq!(c2.read(), 1))
            };
            let completed = done.load(Ordering::Acquire);
            let seen = c.read();
            assert!(seen <= 1 && (!completed || seen == 1), "read {seen} (increment completed: {completed})");
            writer.join().unwrap();
            assert_eq!(c.read(), 1);
        });
    }
}

/// A synchronize's guard taken on its fast path (nothing logged, the lock free: the lock's
/// compare-and-swap revokes the read bias, then the guard waits for the readers), writing
/// the instance, against a read on the concurrent path (the object biased by an earlier
/// read) or through the lock. loom reports any overlap of the guard's access with the
/// read's; the read sees the write exactly when the guard was gone before it began.
#[test]
fn a_guard_against_a_concurrent_read() {
    for representation in [Representation::Logged, Representation::Direct] {
        loom_model("a_guard_against_a_concurrent_read", 3, move || {
            let d = pinned_counter_domain(representation);
            let c = Arc::new(Counter::with_domain(&d, 0));
            assert_eq!(c.read(), 0, "a read through the lock biases the object");
            let writer = {
                let c = c.clone();
                update_on_cpu_1(move || *c.as_oplog().synchronize() += 1, || {})
            };
            read_racing_the_writer(writer, || c.read(), (0, 1), "guard");
        });
    }
}

/// A read that finds the lock taken by another read, which re-biases the object as it
/// unlocks (the second read in a row of a direct object), and then an update that revokes
/// the bias: the waiting read takes the lock or, once the bias is back, the concurrent path,
/// and the update waits for it there. loom reports any overlap of the update's access with
/// the read's; the read sees the update exactly when it completed before the read began.
#[test]
fn a_read_waiting_for_the_lock_takes_the_concurrent_path() {
    loom_model("a_read_waiting_for_the_lock_takes_the_concurrent_path", 3, || {
        let d = pinned_counter_domain(Representation::Direct);
        let c = Arc::new(Counter::with_domain(&d, 0));
        // The update leaves the word tagged: the next read clears the tag, the one after
        // it sets the bias as it unlocks.
        c.inc();
        let writer = {
            let c = c.clone();
            update_on_cpu_1(
                move || {
                    assert_eq!(c.read(), 1);
                    assert_eq!(c.read(), 1);
                    c.inc();
                },
                || {},
            )
        };
        read_racing_the_writer(writer, || c.read(), (1, 2), "increment");
    });
}

/// Direct updates from two threads racing each other and a read: the update that finds the
/// lock taken logs itself (setting its core's bit), and the next lock holder, an update or
/// a read, on its fast path (taken from the word it loaded, which must then show no log) or
/// its general one, applies it first. Nothing is lost, and a read sees every update that
/// completed before it began.
#[test]
fn direct_updates_race_each_other_and_a_read() {
    loom_model("direct_updates_race_each_other_and_a_read", 3, || {
        let d = pinned_counter_domain(Representation::Direct);
        let c = Arc::new(Counter::with_domain(&d, 0));
        let writer = {
            let c = c.clone();
            update_on_cpu_1(move || c.inc(), || {})
        };
        c.add(2);
        read_racing_the_writer(writer, || c.read(), (2, 3), "increment");
    });
}

/// A direct update of a counter does not apply what is logged first (its deltas commute,
/// `LogKind::APPLY_ALONE`): a log left in CPU 1's slot by an update that found the lock
/// taken stays there while another direct update races a read, which must still see it,
/// and sees every update that completed before it began.
#[test]
fn a_direct_update_leaves_logs_to_the_read() {
    loom_model("a_direct_update_leaves_logs_to_the_read", 3, || {
        let d = pinned_counter_domain(Representation::Direct);
        let c = Arc::new(Counter::with_domain(&d, 0));
        // The object lock is taken: an update from CPU 1 logs itself.
        let logged = c.clone();
        log_on_cpu_1(c.as_oplog().synchronize(), move || logged.inc());
        let writer = {
            let c = c.clone();
            update_on_cpu_1(move || c.add(2), || {})
        };
        read_racing_the_writer(writer, || c.read(), (1, 3), "direct add");
    });
}

/// A read of a direct counter loads its value (which lock-free direct updates add to) at
/// the instant it holds the slots that publish the counter, or, with nothing logged,
/// before it checks that once more: one thread adds 1 (its sampled update, through the
/// lock, or, finding the lock taken by the read, logged in CPU 1's slot), 10 (into the
/// value) and 100 (sampled again, through the lock or logged), in that order, racing a
/// read, which must see a prefix of them (never the 100 without the 10, nor the 10
/// without the 1), at least those that completed before it began. (Under loom every
/// other update is sampled, and an update that finds the lock taken logs itself at once.)
/// Loading the value after the check, on the lock's fast path, fails here.
#[test]
fn a_read_loads_the_value_with_the_slots() {
    loom_model("a_read_loads_the_value_with_the_slots", 3, || {
        let d = pinned_counter_domain(Representation::Direct);
        let c = Arc::new(Counter::with_domain(&d, 0));
        let progress = Arc::new(AtomicU64::new(0));
        let writer = {
            let (c, progress) = (c.clone(), progress.clone());
            thread::spawn(move || {
                set_current_cpu(1);
                for (k, delta) in [1, 10, 100].into_iter().enumerate() {
                    c.add(delta);
                    progress.store(k as u64 + 1, Ordering::Release);
                }
            })
        };
        let completed = progress.load(Ordering::Acquire) as usize;
        let seen = c.read();
        let prefixes = [0, 1, 11, 111];
        assert!(prefixes[completed..].contains(&seen), "read {seen} ({completed} updates completed)");
        writer.join().unwrap();
        assert_eq!(c.read(), 111);
    });
}

/// In a domain whose hot objects outgrew its log cache, an update that misses the cache
/// switches its object to direct instead of evicting the slot's log (or, if another core
/// logged the object first, takes the slot): racing an update of the object on another
/// core and a read, nothing is lost or applied twice, and the read sees every update that
/// completed before it began.
#[test]
fn a_miss_goes_direct_racing_an_update_and_a_read() {
    // Whether some interleaving took the path (a std atomic: outside the model).
    static WENT_DIRECT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    loom_model("a_miss_goes_direct_racing_an_update_and_a_read", 3, || {
        let d = Domain::<Unordered<Add>>::new(Config::per_cpu().cpus(2).cache_slots(1)).unwrap();
        // Two objects evict each other's logs on CPU 0 until `x` goes direct: the domain's
        // hot objects outgrew its cache (a quarter of a cache's worth switched: one). `y`'s
        // log is left in CPU 0's slot.
        let (x, y) = (OpLog::with_domain(&d, 0), OpLog::with_domain(&d, 0));
        for _ in 0..2 {
            x.update(Add(1));
            y.update(Add(1));
        }
        assert_eq!((x.representation(), y.representation()), (Representation::Direct, Representation::Logged));
        let c = Arc::new(OpLog::with_domain(&d, 0));
        let writer = {
            let c = c.clone();
            update_on_cpu_1(move || c.update(Add(1)), || {})
        };
        c.update(Add(1));
        if d.cache_stats().misses_to_direct == 1 {
            WENT_DIRECT.store(true, Ordering::Relaxed);
        }
        read_racing_the_writer(writer, || c.read(|v| *v), (1, 2), "CPU 1's update");
        assert_eq!((x.read(|v| *v), y.read(|v| *v)), (2, 2));
        drop((x, y, c));
        assert_eq!(d.backlogged_objects(), 0, "nothing left behind");
    });
    assert!(WENT_DIRECT.load(Ordering::Relaxed), "no interleaving took the miss to direct");
}

/// A switch to the direct representation racing logged updates: nothing is lost, and the
/// logged updates are applied before the direct ones.
#[test]
fn a_switch_races_updates() {
    loom_model("a_switch_races_updates", 3, || {
        let d = counter_domain(2);
        let c = Arc::new(Counter::with_domain(&d, 0));
        let writer = {
            let c = c.clone();
            thread::spawn(move || {
                set_current_cpu(1);
                c.inc();
                c.add(2);
            })
        };
        c.as_oplog().switch_representation(Representation::Direct);
        c.inc();
        writer.join().unwrap();
        assert_eq!(c.read(), 4);
        c.as_oplog().switch_representation(Representation::Logged);
        c.inc();
        assert_eq!(c.read(), 5);
    });
}

/// A switch to direct gives up the object's slots: a read on the concurrent path that races
/// it never finds the logs gone before their operations are applied.
#[test]
fn giving_up_slots_races_a_concurrent_read() {
    loom_model("giving_up_slots_races_a_concurrent_read", 3, || {
        let d = counter_domain(2);
        let c = Arc::new(Counter::with_domain(&d, 0));
        assert_eq!(c.read(), 0, "a read through the lock biases the object");
        let writer = {
            let c = c.clone();
            thread::spawn(move || {
                set_current_cpu(1);
                c.inc();
                assert_eq!(c.read(), 1, "a read after an increment sees it");
            })
        };
        c.as_oplog().switch_representation(Representation::Direct);
        writer.join().unwrap();
        assert_eq!(c.read(), 1);
    });
}

/// An owner whose remove empties its log by local absorption (it takes back the add) marks
/// its slot emptied with a lazy store, then adds again, publishing its object before the
/// push, racing a read of the object (biased first, so the read may take the concurrent
/// path): a read that finds the mark, or the object still published over an empty log, is
/// right either way, and a read sees the second add once it completed.
#[test]
fn a_log_emptied_by_absorption_races_a_read() {
    loom_model("a_log_emptied_by_absorption_races_a_read", 3, || {
        ABSORB_LOCAL.store(true, Ordering::SeqCst);
        let execs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let d = Domain::new(Config::per_cpu().cpus(2).cache_slots(1)).unwrap();
        let o = Arc::new(OpLog::<Unordered<CountedOp>>::with_domain(&d, BTreeSet::new()));
        assert_eq!(o.read(BTreeSet::len), 0, "a read through the lock biases the object");
        let writer = {
            let o = o.clone();
            update_on_cpu_1(
                move || {
                    o.update(CountedOp::new(SetOp::Add(1), &execs));
                    o.update(CountedOp::new(SetOp::Remove(1), &execs));
                    o.update(CountedOp::new(SetOp::Add(2), &execs));
                },
                || {},
            )
        };
        read_racing_the_writer(writer, || o.read(BTreeSet::len), (0, 1), "add, remove, add");
    });
}

/// A slot left in spin mode by a synchronize: the owner enters it through the spin lock
/// and the next synchronize takes it without a barrier, while the owner may be inside.
#[test]
fn a_slot_in_spin_mode() {
    loom_model("a_slot_in_spin_mode", 3, || {
        let d = Domain::<CounterLog>::new(
            Config::per_thread().max_threads(2).cache_slots(1).representation(Representation::Logged),
        )
        .unwrap();
        let c = Arc::new(Counter::with_domain(&d, 0));
        let writer = {
            let c = c.clone();
            thread::spawn(move || {
                c.inc();
                c.inc();
            })
        };
        // The first synchronize that takes the writer's slot leaves it in spin mode; the
        // second takes it without a barrier.
        let first = c.read();
        let second = c.read();
        assert!(first <= second && second <= 2, "read {first} then {second}");
        writer.join().unwrap();
        assert_eq!(c.read(), 2);
    });
}

/// Appends a decimal digit: order-sensitive, so a test sees which update applied first.
struct Digit(u64);

impl Update for Digit {
    type Target = u64;
    fn exec(self, number: &mut u64) {
        *number = *number * 10 + self.0;
    }
}

/// A direct update of a kind whose operations must apply in order (an ordered one)
/// applies what is logged first: an update from CPU 1 that found the lock taken logged
/// itself (its core's bit is set in the word's log half, which changes without the lock),
/// then a direct update from CPU 1 races a read. The logged update comes first in every
/// interleaving, and the read sees a prefix.
#[test]
fn a_direct_update_applies_logs_first() {
    loom_model("a_direct_update_applies_logs_first", 3, || {
        let clock: Arc<dyn Clock> = Arc::new(LoomClock(AtomicU64::new(0)));
        let d = Domain::<Ordered<Digit>>::new(
            Config::per_cpu().cpus(2).cache_slots(1).clock(clock).representation(Representation::Direct),
        )
        .unwrap();
        let o = Arc::new(OpLog::with_domain(&d, 0u64));
        // The object lock is taken: the update logs itself.
        let logged = o.clone();
        log_on_cpu_1(o.synchronize(), move || logged.update(Digit(1)));
        let writer = {
            let o = o.clone();
            update_on_cpu_1(move || o.update(Digit(2)), || {})
        };
        read_racing_the_writer(writer, || o.read(|n| *n), (1, 12), "direct update");
    });
}

/// An ordered object's updates enter their slot locked (`percore`'s
/// `PerCore::enter_locked`: an update of a kind whose logs are not applied alone may have
/// to gather every core's log, and must send no barrier): the writer's entry through its
/// owner flag puts its slot in spin mode before it publishes the object, so a read racing
/// its two updates takes the slot without a barrier in every interleaving, and sees a
/// prefix of them, in order.
#[test]
fn an_ordered_update_leaves_its_slot_in_spin_mode() {
    loom_model("an_ordered_update_leaves_its_slot_in_spin_mode", 3, || {
        let clock: Arc<dyn Clock> = Arc::new(LoomClock(AtomicU64::new(0)));
        let d = Domain::<Ordered<Digit>>::new(
            Config::per_thread().max_threads(2).cache_slots(1).clock(clock).representation(Representation::Logged),
        )
        .unwrap();
        assert!(d.owner_fast_path(), "per-thread slots use the owner protocol under loom");
        let o = Arc::new(OpLog::with_domain(&d, 0u64));
        let writer = {
            let o = o.clone();
            thread::spawn(move || {
                o.update(Digit(1));
                o.update(Digit(2));
            })
        };
        let seen = o.read(|n| *n);
        assert!([0, 1, 12].contains(&seen), "read {seen}");
        writer.join().unwrap();
        assert_eq!(o.read(|n| *n), 12);
        assert_eq!(d.cache_stats().barriers, 0, "a slot holding an ordered log is taken without a barrier");
    });
}

/// `PerCore::enter_locked` through the owner flag against a remote acquisition of the
/// same slot (`lock_remote`, as a gather of every core of an object's mask takes one): the
/// owner's entry takes the spin lock with one try to put the slot in spin mode, or, where
/// the taker holds it, leaves and enters again. Both of the owner's additions and the
/// taker's land, each once, in every interleaving.
#[test]
fn a_locked_entry_races_a_remote_taker() {
    use oplog_percore::{Layout, PerCore};
    loom_model("a_locked_entry_races_a_remote_taker", 3, || {
        let pc = Arc::new(PerCore::new(Layout::per_thread().max_threads(1), 1, true, |_, _| 0u64));
        assert!(pc.owner_fast_path(), "per-thread slots use the owner protocol under loom");
        let allocated = Arc::new(AtomicBool::new(false));
        let writer = {
            let (pc, allocated) = (pc.clone(), allocated.clone());
            thread::spawn(move || {
                // A plain entry claims the writer's index (1) and leaves the slot with its
                // owner, out of spin mode.
                drop(pc.enter(0));
                allocated.store(true, Ordering::Release);
                for _ in 0..2 {
                    *pc.enter_locked(0) += 1;
                }
            })
        };
        while !allocated.load(Ordering::Acquire) {
            thread::yield_now();
        }
        let mut taken = pc.lock_remote([(1, 0)]);
        assert_eq!(taken.len(), 1, "the writer's slot");
        taken.iter_mut().for_each(|(_, _, sum)| *sum += 10);
        drop(taken);
        writer.join().unwrap();
        let total: u64 = pc.lock_remote([(1, 0)]).iter_mut().map(|(_, _, sum)| *sum).sum();
        assert_eq!(total, 12);
    });
}

/// An addition, as a user writes it (its logs wait in the backlog when evicted).
struct Add(u64);

impl Update for Add {
    type Target = u64;
    fn exec(self, sum: &mut u64) {
        *sum += self.0;
    }
}

/// An ordered object's full backlog applied up to the stamp cut, taking no slot: an add on
/// CPU 1 sits in its slot (a log of two not yet full, its stamp in the slot's low mark)
/// while CPU 0's four updates fill two logs, whose second hand-off fills the backlog (two
/// logs under loom) and applies it up to the cut, or, where the cut leaves most of it
/// (the add came first), synchronizes. If the add completed before CPU 0's remove began,
/// the remove comes after it; either way nothing is lost.
#[test]
fn a_full_backlog_applies_up_to_the_cut() {
    loom_model("a_full_backlog_applies_up_to_the_cut", 3, || {
        let clock: Arc<dyn Clock> = Arc::new(LoomClock(AtomicU64::new(0)));
        let config = Config::per_cpu().cpus(2).cache_slots(1).max_log_len(2).clock(clock);
        let d = Domain::<Ordered<SetOp>>::new(config.representation(Representation::Logged)).unwrap();
        let set = Arc::new(OpLog::with_domain(&d, BTreeSet::new()));
        let (writer, done) = {
            let set = set.clone();
            update_on_cpu_1(move || set.update(SetOp::Add(1)), || {})
        };
        set_current_cpu(0);
        let completed = done.load(Ordering::Acquire);
        for op in [SetOp::Remove(1), SetOp::Add(2), SetOp::Add(3), SetOp::Add(4)] {
            set.update(op);
        }
        writer.join().unwrap();
        // Applied by the second hand-off, or by CPU 1's update, which found the backlog
        // full as it took its slot while that hand-off held the lock.
        assert_eq!(d.backlogged_logs(), 0, "the full backlog was applied");
        let seen = set.read(|s| s.iter().copied().collect::<Vec<_>>());
        if completed {
            assert_eq!(seen, vec![2, 3, 4], "the add completed before the remove began");
        } else {
            assert!(seen == vec![2, 3, 4] || seen == vec![1, 2, 3, 4], "read {seen:?}");
        }
    });
}

/// An ordered object's full backlog applied up to the cut by the update that filled it,
/// racing a read on the concurrent path (the object biased by an earlier read): CPU 1's
/// two updates each fill a one-entry log and hand it off, and the second, finding the
/// backlog full, takes it and applies it. A read that no longer sees the backlog must not
/// take the object for quiescent before its operations are applied: it sees the first
/// update if that completed before it began (the backlog's operations left the object,
/// unapplied, while concurrent readers could still enter: a stale read).
#[test]
fn a_backlog_applied_up_to_the_cut_races_a_concurrent_read() {
    loom_model("a_backlog_applied_up_to_the_cut_races_a_concurrent_read", 3, || {
        let clock: Arc<dyn Clock> = Arc::new(LoomClock(AtomicU64::new(0)));
        let config = Config::per_cpu().cpus(2).cache_slots(1).max_log_len(1).clock(clock);
        let d = Domain::<Ordered<SetOp>>::new(config.representation(Representation::Logged)).unwrap();
        let set = Arc::new(OpLog::with_domain(&d, BTreeSet::new()));
        let elements = |set: &OpLog<Ordered<SetOp>>| set.read(|s| s.iter().copied().collect::<Vec<_>>());
        assert_eq!(elements(&set), vec![], "a read through the lock biases the object");
        let (writer, done) = {
            let (first, second) = (set.clone(), set.clone());
            update_on_cpu_1(move || first.update(SetOp::Add(1)), move || second.update(SetOp::Add(2)))
        };
        let completed = done.load(Ordering::Acquire);
        let seen = elements(&set);
        let want: &[&[u64]] = if completed { &[&[1], &[1, 2]] } else { &[&[], &[1], &[1, 2]] };
        assert!(want.contains(&seen.as_slice()), "read {seen:?} (first update completed: {completed})");
        writer.join().unwrap();
        assert_eq!(elements(&set), vec![1, 2]);
    });
}

/// An addition whose logs may be applied alone.
struct AddAlone(u64);

impl Update for AddAlone {
    type Target = u64;
    const APPLY_ALONE: bool = true;
    fn exec(self, sum: &mut u64) {
        *sum += self.0;
    }
}

/// Every update fills its one-entry log, so its owner applies the log itself (the object
/// lock try-locked while it holds the slot, concurrent readers excluded, the apply after
/// the slot is released) while the main thread reads: every read sees a prefix of the
/// writer's updates, and the updates that completed before it.
#[test]
fn an_owner_applies_its_own_full_log() {
    loom_model("an_owner_applies_its_own_full_log", 3, || {
        let d = Domain::<Unordered<AddAlone>>::new(
            Config::per_cpu().cpus(2).cache_slots(1).max_log_len(1).representation(Representation::Logged),
        )
        .unwrap();
        let o = Arc::new(OpLog::with_domain(&d, 0u64));
        assert_eq!(o.read(|s| *s), 0, "a read through the lock biases the object");
        let (writer, done) = {
            let (o1, o2) = (o.clone(), o.clone());
            update_on_cpu_1(move || o1.update(AddAlone(1)), move || o2.update(AddAlone(2)))
        };
        let completed = done.load(Ordering::Acquire);
        let first = o.read(|s| *s);
        let second = o.read(|s| *s);
        assert!([0, 1, 3].contains(&first) && first <= second && second <= 3, "read {first} then {second}");
        assert!(!completed || first >= 1, "the first update completed before the read, which saw {first}");
        writer.join().unwrap();
        assert_eq!(o.read(|s| *s), 3);
    });
}
