//! `refcount`: clone+drop pairs per second on one shared object (002 §8.1, 004 §4.3).
//!
//! Every thread holds the same object and, in a tight loop, takes a reference and releases it
//! (`Arc::clone` + drop, or `inc` + `dec`). A shared count (`atomic`) bounces its cache line
//! between the cores; sloppy counters keep spare references per core, OpLog's counter logs per
//! core, Refcache caches deltas per core. Records carry `ops_per_sec` = pairs per second (all
//! threads) and `per_thread_pairs_per_sec`. After each repetition the count must be exactly the
//! owner's one reference (where the implementation can tell), and once the owner releases it the
//! payload's destructor must have run exactly once.
//!
//! Two annexes:
//!
//! - `memory`: bytes per object with 1,000,000 objects, each referenced once from every measured
//!   thread: the bytes allocated (counted by [`crate::alloc_count`] on the threads that did the work)
//!   plus what the owner holds inline (a handle, or the whole counter), 16-byte payload
//!   included; and the fixed cost of the domain (per-core caches and tables), measured the
//!   same way before any object exists.
//! - `free-delay`: time from the release of an object's last reference to its destructor, over
//!   200 objects released 100 µs apart, with the default review period for Refcache.
//!   Sloppy and OpLog counters detect no zero by themselves (their owners reconcile), so they
//!   have no row.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::alloc_count::Tally;
use crate::experiments::impls::{Impl, ThreadSweep};
use crate::harness::{Run, Settings, Throughput, median};
use crate::output::verdict::Roles;
use crate::output::{Annex, Sink};

pub mod impls;

use impls::{AtomicArc, DropLog, OplogCounter, Payload, Refcache, RefcountImpl, Sloppy};

/// Pairs between two checks of the stop flag.
const BATCH: u64 = 64;

/// Objects in the `memory` annex.
pub const MEMORY_OBJECTS: usize = 1_000_000;
/// Objects in the memory annex with `--quick`.
pub const QUICK_MEMORY_OBJECTS: usize = 100_000;

/// Objects timed in the `free-delay` annex.
pub const DELAY_OBJECTS: usize = 200;
/// Objects timed in the free-delay annex with `--quick`.
pub const QUICK_DELAY_OBJECTS: usize = 20;

/// Every implementation, in table order.
pub const IMPLS: &[Impl<(), Memory>] = &[
    of::<AtomicArc>(),
    of::<Sloppy<false>>(),
    of::<Sloppy<true>>(),
    of::<OplogCounter>(),
    of::<Refcache<false>>(),
    of::<Refcache<true>>(),
];

/// How the `memory` annex measures an implementation: its [`MemoryRow`] with `objects`
/// objects, each referenced from `threads` threads.
pub type Memory = fn(objects: usize, threads: usize) -> MemoryRow;

/// The row of [`IMPLS`] for `I`: [`RefcountImpl::ID`], its clone+drop pairs per second at one
/// point (verified after each repetition) and its memory figures, monomorphised.
pub const fn of<I: RefcountImpl>() -> Impl<(), Memory> {
    Impl::with_data(I::ID, throughput::<I>, memory::<I>)
}

/// The shared state of one repetition: a domain and one object with its owner's reference.
struct Point<I: RefcountImpl> {
    domain: I::Domain,
    object: Option<I::Object>,
    log: Arc<DropLog>,
}

impl<I: RefcountImpl> Point<I> {
    fn new() -> Self {
        let domain = I::domain();
        let log = DropLog::counting();
        let object = Some(I::object(&domain, Payload::new(&log, 0)));
        Point { domain, object, log }
    }

    fn object(&self) -> &I::Object {
        self.object.as_ref().expect("the object lives until the point is dropped")
    }
}

impl<I: RefcountImpl> Drop for Point<I> {
    /// Releases the owner's reference and checks that the destructor then ran exactly once.
    fn drop(&mut self) {
        assert_eq!(self.log.drops(), 0, "refcount `{}`: the destructor ran while references existed", I::ID);
        if let Some(o) = self.object.take() {
            I::release(&self.domain, o);
        }
        I::settle(&self.domain);
        let drops = self.log.drops();
        if !std::thread::panicking() {
            assert_eq!(drops, 1, "refcount `{}`: the destructor ran {drops} times after the last release", I::ID);
        }
    }
}

fn throughput<I: RefcountImpl>(run: &Run, (): ()) -> Throughput {
    run.throughput_checked(
        Point::<I>::new,
        |p: &Point<I>, _, stop| stop.run_batched(BATCH, || I::clone_drop(&p.domain, p.object())),
        |p, pairs| {
            if let Some(n) = I::count(&p.domain, p.object()) {
                assert_eq!(n, 1, "refcount `{}`: {n} references after {pairs} balanced pairs, expected 1", I::ID);
            }
        },
    )
}

/// The memory figures of one implementation (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryRow {
    /// Heap growth per object plus what its owner holds inline, payload included.
    pub bytes_per_object: f64,
    /// Bytes the domain costs before any object exists (per-core caches and tables).
    pub fixed_bytes: i64,
    /// Per-core states of the domain.
    pub cores: usize,
}

/// Runs `f` once on each of `threads` new threads, all alive together (so each claims its
/// own per-thread state), counting their allocations into `tally`.
fn on_threads(tally: &Tally, threads: usize, f: impl Fn() + Sync) {
    let all_done = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let _counting = tally.count_this_thread();
                    f();
                    all_done.wait();
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().expect("a memory-annex thread panicked"));
    })
}

fn memory<I: RefcountImpl>(objects: usize, threads: usize) -> MemoryRow {
    let log = DropLog::counting();
    let tally = Tally::new();
    let _counting = tally.count_this_thread();
    let start = tally.live_bytes();
    let d = I::domain();
    let probe = I::object(&d, Payload::new(&log, 0));
    // Every thread takes a reference once, claiming its per-thread state where there is one.
    on_threads(&tally, threads, || I::clone_drop(&d, &probe));
    I::release(&d, probe);
    I::settle(&d);
    let fixed = tally.live_bytes() - start;
    let mut all = Vec::with_capacity(objects);
    let start = tally.live_bytes();
    for i in 0..objects {
        all.push(I::object(&d, Payload::new(&log, i)));
    }
    on_threads(&tally, threads, || all.iter().for_each(|o| I::clone_drop(&d, o)));
    let grown = tally.live_bytes() - start;
    // What the owner holds inline (a handle, or the whole counter) counts too.
    let per_object = grown as f64 / objects as f64 + std::mem::size_of::<I::Object>() as f64;
    let cores = I::cores(&d);
    for o in all {
        I::release(&d, o);
    }
    I::settle(&d);
    assert_eq!(log.drops(), objects + 1, "refcount `{}`: every object's destructor runs once", I::ID);
    MemoryRow { bytes_per_object: per_object, fixed_bytes: fixed, cores }
}

/// Delays from last release to destructor, in milliseconds, for `n` objects of `I` released
/// `gap` apart by this thread. Panics if they are not all dropped within 10 s.
pub fn free_delays<I: RefcountImpl>(n: usize, gap: Duration) -> Vec<f64> {
    let log = DropLog::timing(n);
    let d = I::domain();
    let objects: Vec<I::Object> = (0..n).map(|i| I::object(&d, Payload::new(&log, i))).collect();
    let mut released = Vec::with_capacity(n);
    for o in objects {
        released.push(Instant::now());
        I::release(&d, o);
        std::thread::sleep(gap);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while log.drops() < n {
        assert!(Instant::now() < deadline, "refcount `{}`: objects not freed within 10 s", I::ID);
        std::thread::sleep(Duration::from_millis(1));
    }
    released
        .iter()
        .enumerate()
        .map(|(i, t)| log.dropped_at(i).expect("dropped").saturating_duration_since(*t).as_secs_f64() * 1e3)
        .collect()
}

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}

/// The `memory` annex: each implementation with `objects` objects referenced from `threads`
/// threads.
pub fn memory_annex(objects: usize, threads: usize) -> Annex {
    let mut annex = Annex::new(
        "memory",
        &format!(
            "memory: bytes per object with {objects} objects, each referenced once from {threads} thread(s) \
             (bytes allocated plus the owner's inline part, 16-byte payload included), and the domain's fixed cost"
        ),
        &["impl", "objects", "bytes_per_object", "fixed_bytes", "cores", "fixed_bytes_per_core"],
    );
    for entry in IMPLS {
        let m = (entry.data)(objects, threads);
        let per_core = if m.cores > 0 { json!(round(m.fixed_bytes as f64 / m.cores as f64, 0)) } else { Value::Null };
        annex.row(vec![
            json!(entry.id),
            json!(objects),
            json!(round(m.bytes_per_object, 1)),
            json!(m.fixed_bytes),
            json!(m.cores),
            per_core,
        ]);
    }
    annex
}

/// The `free-delay` annex (see the module docs).
pub fn free_delay_annex(objects: usize) -> Annex {
    let mut annex = Annex::new(
        "free-delay",
        &format!(
            "free delay: last release to destructor, {objects} objects released 100 us apart \
             (sloppy and oplog have no zero detection: their owners reconcile)"
        ),
        &["impl", "review_period_ms", "objects", "median_ms", "p90_ms", "max_ms"],
    );
    let gap = Duration::from_micros(100);
    // Both Refcache ids run with the default configuration's period.
    let period = json!(oplog_refcount::DEFAULT_REVIEW_PERIOD.as_secs_f64() * 1e3);
    let rows: [(&str, Value, Vec<f64>); 3] = [
        (AtomicArc::ID, Value::Null, free_delays::<AtomicArc>(objects, gap)),
        (Refcache::<false>::ID, period.clone(), free_delays::<Refcache<false>>(objects, gap)),
        (Refcache::<true>::ID, period, free_delays::<Refcache<true>>(objects, gap)),
    ];
    for (id, period, mut delays) in rows {
        delays.sort_by(f64::total_cmp);
        let p90 = delays[(delays.len() * 9 / 10).min(delays.len() - 1)];
        annex.row(vec![
            json!(id),
            period,
            json!(objects),
            json!(round(median(&delays), 3)),
            json!(round(p90, 3)),
            json!(round(*delays.last().expect("at least one object"), 3)),
        ]);
    }
    annex
}

/// The `refcount` experiment.
pub static REFCOUNT: ThreadSweep<(), Memory> = ThreadSweep {
    name: "refcount",
    description: "clone+drop pairs per second on one shared object: Arc, sloppy, OpLog, Refcache (002 §8.1, 004 §4.3)",
    versus: AtomicArc::ID,
    impls: IMPLS,
    param: (),
    extra: &[],
    per_thread: Some("per_thread_pairs_per_sec"),
    annexes: Some(annexes),
    roles: Roles { default: None, baselines: &[AtomicArc::ID], floor: None, targets: &[] },
};

/// The annexes, after the sweep: `memory` with the largest thread count, and `free-delay`.
fn annexes(settings: &Settings, sink: &mut Sink) -> io::Result<()> {
    let threads = settings.threads.iter().copied().max().unwrap_or(1);
    sink.annex(memory_annex(settings.size(MEMORY_OBJECTS, QUICK_MEMORY_OBJECTS), threads))?;
    sink.annex(free_delay_annex(settings.size(DELAY_OBJECTS, QUICK_DELAY_OBJECTS)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_include_the_required_ones() {
        let ids: HashSet<_> = IMPLS.iter().map(|e| e.id).collect();
        assert_eq!(ids.len(), IMPLS.len());
        for id in ["atomic", "sloppy", "oplog", "refcache"] {
            assert!(ids.contains(id), "{id}");
        }
    }

    #[test]
    fn every_impl_runs_and_verifies_under_contention() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 2, placement: &placement };
        for entry in IMPLS {
            assert!(entry.measure(&run, ()).median > 0.0, "{} measured nothing", entry.id);
        }
    }

    #[test]
    fn the_memory_annex_has_a_row_per_impl() {
        let annex = memory_annex(2000, 2);
        assert_eq!(annex.rows.len(), IMPLS.len());
        for row in &annex.rows {
            let per_object = row[2].as_f64().unwrap_or_else(|| panic!("{row:?}"));
            assert!(per_object >= 16.0 + 8.0, "at least the payload and a pointer: {row:?}");
        }
        let arc = &annex.rows[0];
        // An Arc<Payload>: two counts and the payload, plus the owner's pointer (and a little
        // noise from spawning the threads, spread over the objects).
        let arc_bytes = arc[2].as_f64().unwrap();
        assert!((40.0..41.0).contains(&arc_bytes), "{arc:?}");
    }

    #[test]
    fn refcache_frees_within_a_few_periods_and_arc_at_once() {
        let arc = free_delays::<AtomicArc>(5, Duration::ZERO);
        assert!(arc.iter().all(|&ms| ms < 100.0), "{arc:?}");
        let rc = free_delays::<Refcache<false>>(5, Duration::from_micros(100));
        assert_eq!(rc.len(), 5);
        let annex = free_delay_annex(3);
        assert_eq!(annex.rows.len(), 3);
        assert_eq!(annex.rows[1][1], json!(10.0), "the default review period");
    }
}
