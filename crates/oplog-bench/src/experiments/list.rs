//! `list`: the singly linked list microbenchmark of 000 §7.3 (Figure 12).
//!
//! Every thread loops: add its own element to one shared list, spin about 1000 cycles,
//! remove the element, spin about 1000 cycles ("to simulate a list that is manipulated
//! once every system call"). One iteration is one operation. Elements are unique per
//! thread and per iteration, so the identity rule of the absorbing variants holds; their
//! ids are iteration-major, so the threads' elements are neighbours in the lock-free
//! list's key order, as in one global list (per-thread key ranges would give each thread a
//! region of its own, a per-thread list in disguise).
//!
//! The spin waits [`SPIN_TICKS`] ticks of the process-wide Ordo clock (`ordo::global()`):
//! on x86-64 that is the invariant TSC, whose ticks are cycles at the processor's nominal
//! frequency; on the OS-clock fallback ticks are nanoseconds. Each wait costs the same for
//! every implementation.
//!
//! Implementations (ids stable): `oplog-basic` (ordered log, no absorption),
//! `oplog-global-absorb` (pairs cancelled during synchronize), `oplog-local-absorb`
//! (unordered log, a remove cancels its add in the core's log), `lockfree` (the Harris list
//! with epoch reclamation), `mutex` (the sequential list under one lock, `MutexList`: the
//! "stock" design the other structures' experiments compare with; 000 §7.3 itself measures
//! only the lock-free list).
//!
//! Verified after each repetition: every thread also adds one element before its loop and
//! never removes it; the list must then hold exactly those.

use oplog_structures::list::{
    BasicList, ConcurrentList, GlobalAbsorbList, HarrisList, LocalAbsorbList, MutexList, SeqList,
};
use ordo::{Clock, Ordo};

use super::impls::{Impl, ThreadSweep, per_cpu_domain};
use crate::harness::{Run, Throughput};
use crate::output::verdict::{Against, Roles, Target};

/// Clock ticks of each of the two waits per iteration (000 §7.3: 1000 cycles).
pub const SPIN_TICKS: u64 = 1000;

/// Iterations between two checks of the stop flag.
const BATCH: u64 = 4;

/// The implementations, in table order.
pub const IMPLS: &[Impl] = &[
    Impl::new("oplog-basic", |run, ()| measure(run, || BasicList::with_domain(&per_cpu_domain(), SeqList::new()))),
    Impl::new("oplog-global-absorb", |run, ()| {
        measure(run, || GlobalAbsorbList::with_domain(&per_cpu_domain(), SeqList::new()))
    }),
    Impl::new("oplog-local-absorb", |run, ()| {
        measure(run, || LocalAbsorbList::with_domain(&per_cpu_domain(), SeqList::new()))
    }),
    Impl::new("lockfree", |run, ()| measure(run, HarrisList::new)),
    Impl::new("mutex", |run, ()| measure(run, MutexList::new)),
];

/// Busy-waits `ticks` ticks of `clock`.
#[inline]
pub fn spin(clock: &Ordo, ticks: u64) {
    let start = clock.get_time();
    while clock.get_time().wrapping_sub(start) < ticks {
        std::hint::spin_loop();
    }
}

/// Thread `thread`'s element for iteration `i`: iteration-major, so that the threads'
/// current elements sit next to each other in the sorted lock-free list (as objects made
/// at about the same time would), not in a region of the list per thread. Below 2⁶³.
fn element(thread: usize, i: u64) -> u64 {
    ((i % (1 << 47)) << 16) | thread as u64
}

/// Thread `thread`'s element that stays in the list: at the end of the sorted list,
/// 2⁶³ or above.
fn kept(thread: usize) -> u64 {
    u64::MAX - thread as u64
}

fn measure<L: ConcurrentList<u64>>(run: &Run, make: impl Fn() -> L) -> Throughput {
    let clock: &Ordo = ordo::global();
    let threads = run.threads;
    let mut ended_in = None;
    run.throughput_checked(
        || {
            let list = make();
            (0..threads).for_each(|t| list.add(kept(t)));
            list
        },
        |list: &L, thread, stop| {
            let mut i = 0;
            stop.run_batched(BATCH, || {
                let x = element(thread, i);
                i += 1;
                list.add(x);
                spin(clock, SPIN_TICKS);
                list.remove(x);
                spin(clock, SPIN_TICKS);
            })
        },
        |list, _| {
            ended_in = list.representation();
            verify(&list.snapshot(), threads);
        },
    )
    .ended_in(ended_in)
}

/// Panics unless `elements` is exactly the threads' kept elements.
fn verify(elements: &[u64], threads: usize) {
    let mut expected: Vec<u64> = (0..threads).map(kept).collect();
    expected.sort_unstable();
    assert!(
        elements == expected,
        "the list is wrong after the run: it holds {} elements, expected only the {threads} kept ones \
         (first few: {:x?})",
        elements.len(),
        &elements[..elements.len().min(4)]
    );
}

/// The `list` experiment.
pub static LIST: ThreadSweep = ThreadSweep {
    name: "list",
    description: "list iterations per second: add, spin 1000 ticks, remove, spin 1000 ticks (000 Figure 12)",
    versus: "lockfree",
    impls: IMPLS,
    param: (),
    extra: &[],
    per_thread: None,
    annexes: None,
    roles: Roles {
        default: None,
        baselines: &["lockfree", "mutex"],
        floor: None,
        // Issue 9: local absorption keeps scaling.
        targets: &[Target { id: "oplog-local-absorb", threads: 2, x: None, against: Against::OneThread, min: 1.8 }],
    },
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
    #[should_panic(expected = "it holds 3 elements, expected only the 2 kept ones")]
    fn a_leftover_element_fails_the_run() {
        verify(&[kept(0), kept(1), element(0, 5)], 2);
    }

    #[test]
    fn elements_are_unique_and_never_kept_ones() {
        let mut seen = std::collections::HashSet::new();
        for thread in [0, 1, 4095] {
            for i in (0..1000).chain([(1 << 47) - 1]) {
                let x = element(thread, i);
                assert!(seen.insert(x) && x < 1 << 63, "{x:#x}");
            }
            assert!(kept(thread) >= 1 << 63);
        }
    }
}
