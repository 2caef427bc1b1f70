//! `stat`: path lookups per second on one name-cache entry (000 §3, Figure 3).
//!
//! Every thread `stat`s the same file in a loop. One stat is what the lookup does to the
//! file's cache entry ([`NameEntry`]): read the entry's generation, take a reference if the
//! generation is still the one read (`lookup`), and drop the reference when done
//! (`release`). Nothing invalidates the entry during the run, as in the text.
//!
//! Implementations (ids stable): `spinlock` (Linux's ticket spinlock around the check and
//! the increment, "stock"), `cas` (generation and count in one word, one
//! compare-and-exchange, "lock-free"), `oplog` (the OpLog distributed reference counter:
//! increment the local count, then check the generation, "with OpLog").
//!
//! Verified after each repetition: every thread also takes one reference at its start and
//! keeps it, so the count must then be exactly the number of threads (a lost or invented
//! increment or decrement fails the run), and the generation must be unchanged.

use oplog::CounterLog;
use oplog_structures::namecache::{CasEntry, NameEntry, OpLogEntry, SpinlockEntry};

use super::impls::{Impl, ThreadSweep, per_cpu_domain};
use crate::harness::{Run, Throughput};
use crate::output::verdict::Roles;

/// Stats between two checks of the stop flag.
const BATCH: u64 = 64;

/// The generation the entry is created with.
const GENERATION: u32 = 7;

/// The implementations, in table order.
pub const IMPLS: &[Impl] = &[
    Impl::new("spinlock", |run, ()| measure(run, || SpinlockEntry::new(GENERATION))),
    Impl::new("cas", |run, ()| measure(run, || CasEntry::new(GENERATION))),
    Impl::new("oplog", |run, ()| measure(run, || OpLogEntry::new(&per_cpu_domain::<CounterLog>(), GENERATION))),
];

/// One stat: look the entry up with the generation just read, then release it.
#[inline]
fn stat(entry: &impl NameEntry) {
    let generation = entry.generation();
    if let Err(e) = entry.lookup(generation) {
        panic!("no one invalidates the entry during the run, yet a lookup failed: {e}");
    }
    entry.release();
}

fn measure<E: NameEntry>(run: &Run, make: impl Fn() -> E) -> Throughput {
    let threads = run.threads as u64;
    let mut ended_in = None;
    run.throughput_checked(
        make,
        |entry: &E, _, stop| {
            // The reference this thread keeps for the whole run.
            entry.lookup(GENERATION).expect("the entry starts at GENERATION");
            stop.run_batched(BATCH, || stat(entry))
        },
        |entry, _| {
            ended_in = entry.representation();
            verify(entry.refcount(), entry.generation(), threads);
        },
    )
    .ended_in(ended_in)
}

/// Panics unless the entry holds exactly one reference per thread at its first generation.
fn verify(refcount: u64, generation: u32, threads: u64) {
    assert_eq!(
        (refcount, generation),
        (threads, GENERATION),
        "name-cache entry is wrong after the run: refcount {refcount} (expected one per thread: {threads}), \
         generation {generation} (expected {GENERATION})"
    );
}

/// The `stat` experiment.
pub static STAT: ThreadSweep = ThreadSweep {
    name: "stat",
    description: "lookups per second on one name-cache entry: generation check plus reference count (000 Figure 3)",
    versus: "spinlock",
    impls: IMPLS,
    param: (),
    extra: &[],
    per_thread: None,
    annexes: None,
    roles: Roles { default: Some("oplog"), baselines: &["spinlock", "cas"], floor: None, targets: &[] },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::impls::{notes_representations, smoke_test};

    #[test]
    fn every_impl_runs_and_verifies() {
        smoke_test(IMPLS, ());
        notes_representations(IMPLS, ());
    }

    #[test]
    #[should_panic(expected = "refcount 1 (expected one per thread: 2)")]
    fn a_lost_reference_fails_the_run() {
        verify(1, GENERATION, 2);
    }
}
