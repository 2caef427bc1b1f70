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

use std::io;

use oplog::CounterLog;
use oplog_structures::namecache::{CasEntry, NameEntry, OpLogEntry, SpinlockEntry};

use super::impls::{Impl, per_cpu_domain, run_over_threads};
use crate::experiments::{Experiment, Ratios};
use crate::harness::{Run, Settings, Throughput};
use crate::output::Sink;

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
    run.throughput_checked(
        make,
        |entry: &E, _, stop| {
            // The reference this thread keeps for the whole run.
            entry.lookup(GENERATION).expect("the entry starts at GENERATION");
            stop.run_batched(BATCH, || stat(entry))
        },
        |entry, _| verify(entry.refcount(), entry.generation(), threads),
    )
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
#[derive(Clone, Copy, Debug, Default)]
pub struct Stat;

impl Experiment for Stat {
    fn name(&self) -> &'static str {
        "stat"
    }

    fn description(&self) -> &'static str {
        "lookups per second on one name-cache entry: generation check plus reference count (000 Figure 3)"
    }

    fn ratios(&self) -> Ratios {
        Ratios { scaling: true, versus: Some("spinlock") }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * IMPLS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        run_over_threads(self.name(), IMPLS, (), &[], settings, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::impls::assert_unique_ids;
    use crate::pin::Placement;
    use std::time::Duration;

    #[test]
    fn every_impl_runs_and_verifies() {
        assert_unique_ids(IMPLS);
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        for entry in IMPLS {
            assert!(entry.measure(&run, ()).median > 0.0, "{}", entry.id);
        }
    }

    #[test]
    #[should_panic(expected = "refcount 1 (expected one per thread: 2)")]
    fn a_lost_reference_fails_the_run() {
        verify(1, GENERATION, 2);
    }
}
