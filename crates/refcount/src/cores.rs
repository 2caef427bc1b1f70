//! Per-core state: one `S` per CPU or per thread, entered by the calling thread for the
//! length of one operation, and taken over by remote threads (reviewers, reconcilers).
//!
//! The texts run their per-core code with preemption disabled (002 §8.1.3: "All of the
//! functions in Figure 8-3 execute with preemption disabled, meaning they are atomic with
//! respect to each other on a given core"; Linux's sloppy counters likewise). User space
//! cannot disable preemption, so each core's state sits in one slot of an
//! [`oplog_percore::PerCore`], whose lock makes an operation atomic with respect to every
//! other operation on that state, whichever CPU the thread ends on:
//!
//! * [`CoreMode::PerCpu`]: the state of the CPU the thread runs on, entered with a
//!   restartable sequence where Linux offers one (no atomic instruction), else a spin lock
//!   that is normally uncontended;
//! * [`CoreMode::PerThread`]: the thread's own state, entered through the owner protocol
//!   (no atomic read-modify-write) where `membarrier` exists.
//!
//! `PerCore` holds the mechanics (locks, per-thread index claims, the restartable
//! sequence), shared with OpLog's log caches; this module adapts it to one state per core.

use crate::config::{CoreMode, Layout};
use oplog_percore::{PerCore, Remote};

/// Builds the state of core `index` when the core is created.
pub(crate) type MakeState<S> = Box<dyn Fn(usize) -> S + Send + Sync>;

/// Source of unique ids for this crate's per-core sets. Process-wide and never part of a
/// modelled interleaving, so a plain std atomic (see [`oplog_percore::primitive`]).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The per-core states of one domain (see the module docs).
pub(crate) struct Cores<S> {
    id: u64,
    inner: PerCore<S>,
}

impl<S: Send + 'static> Cores<S> {
    /// The states of a domain laid out as `layout` (already validated); `make(index)` builds
    /// each core's state when the core is created (per-CPU: all now; per-thread: index 0 now,
    /// the others on first use).
    pub(crate) fn new(layout: Layout, make: MakeState<S>) -> Self {
        Cores {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            inner: PerCore::new(layout, 1, true, move |core, _| make(core)),
        }
    }

    /// This set's unique id (ids are never reused in a process).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Per-CPU or per-thread.
    pub(crate) fn mode(&self) -> CoreMode {
        self.inner.mode()
    }

    /// Whether states are entered without an atomic read-modify-write (per-thread states
    /// where `membarrier` exists, per-CPU states on the restartable-sequence path).
    pub(crate) fn owner_fast_path(&self) -> bool {
        self.inner.owner_fast_path()
    }

    /// Bytes of the per-core slots created so far, not counting what their states own on the
    /// heap.
    pub(crate) fn footprint(&self) -> usize {
        self.inner.footprint()
    }

    /// Indices of the cores created so far, ascending.
    pub(crate) fn created(&self) -> Vec<usize> {
        self.inner.allocated_cores()
    }

    /// Runs `f` on the calling thread's core state (its CPU's or its own), holding the core's
    /// lock. `f` must not run user code or enter any core.
    #[inline(always)]
    pub(crate) fn with_local<R>(&self, f: impl FnOnce(usize, &mut S) -> R) -> R {
        let mut entered = self.inner.enter(0);
        let core = entered.core();
        f(core, &mut entered)
    }

    /// Takes core `index`'s lock as a remote thread and runs `f` on its state; `None` if the
    /// core does not exist (yet).
    pub(crate) fn with_core<R>(&self, index: usize, f: impl FnOnce(&mut S) -> R) -> Option<R> {
        let mut held = self.inner.lock_remote([(index, 0)]);
        held.iter_mut().next().map(|(_, _, state)| f(state))
    }

    /// Takes every core's lock at once (one process-wide barrier where owners use the fast
    /// path) and returns them held, in ascending index order: a consistent cut, since every
    /// operation runs entirely under one core's lock; per-thread domains also keep threads
    /// from creating a core meanwhile ([`PerCore::lock_all`]).
    pub(crate) fn lock_all(&self) -> AllCores<'_, S> {
        AllCores(self.inner.lock_all())
    }
}

/// Every created core, locked (see [`Cores::lock_all`]); unlocks on drop.
pub(crate) struct AllCores<'a, S>(Remote<'a, S>);

impl<S> AllCores<'_, S> {
    /// Each core's index and state, ascending.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut S)> {
        self.0.iter_mut().map(|(core, _, state)| (core, state))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn per_thread(max_threads: usize) -> Cores<u64> {
        Cores::new(Layout::per_thread().max_threads(max_threads), Box::new(|_| 0))
    }

    #[test]
    fn a_thread_keeps_its_index_and_returns_it_at_exit() {
        let cores = per_thread(2);
        let first = std::thread::scope(|s| {
            s.spawn(|| {
                let a = cores.with_local(|i, _| i);
                assert_eq!(cores.with_local(|i, _| i), a);
                a
            })
            .join()
            .unwrap()
        });
        let second = std::thread::scope(|s| s.spawn(|| cores.with_local(|i, _| i)).join().unwrap());
        assert_eq!((first, second), (1, 1), "the second thread reuses the first one's index");
        assert_eq!(cores.created(), vec![0, 1]);
    }

    #[test]
    fn threads_beyond_the_limit_share_index_zero() {
        let cores = per_thread(1);
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            let first = s.spawn(|| {
                let i = cores.with_local(|i, _| i);
                barrier.wait();
                barrier.wait();
                i
            });
            barrier.wait();
            let second = s.spawn(|| cores.with_local(|i, _| i)).join().unwrap();
            barrier.wait();
            assert_eq!((first.join().unwrap(), second), (1, 0));
        });
    }

    #[test]
    fn local_updates_and_remote_takeovers_exclude_each_other() {
        for mode in [CoreMode::PerThread, CoreMode::PerCpu] {
            let layout = Layout::per_cpu().cpus(2).max_threads(4).with_mode(mode);
            let cores: Cores<u64> = Cores::new(layout, Box::new(|_| 0));
            let n: u64 = if cfg!(miri) { 200 } else { 100_000 };
            let moved = std::sync::atomic::AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| (0..n).for_each(|_| cores.with_local(|_, v| *v += 1)));
                }
                s.spawn(|| {
                    for _ in 0..n / 100 {
                        // Move every core's count to `moved`, at one instant.
                        let mut all = cores.lock_all();
                        for (_, v) in all.iter_mut() {
                            moved.fetch_add(std::mem::take(v), std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                });
            });
            let left: u64 = cores.lock_all().iter_mut().map(|(_, v)| *v).sum();
            assert_eq!(left + moved.into_inner(), 2 * n, "{mode:?}");
        }
    }

    #[test]
    fn with_core_reaches_one_core_and_reports_missing_ones() {
        let cores = per_thread(4);
        assert_eq!(cores.with_core(0, |v| std::mem::replace(v, 7)), Some(0));
        assert_eq!(cores.with_core(0, |v| *v), Some(7));
        assert_eq!(cores.with_core(3, |v| *v), None, "index 3 was never claimed");
        assert_eq!(cores.with_core(99, |v| *v), None);
    }
}
