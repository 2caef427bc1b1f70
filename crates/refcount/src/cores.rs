//! Per-core state: one `S` per CPU or per thread, entered by the calling thread for the
//! length of one operation, and taken over by remote threads (reviewers, reconcilers).
//!
//! The texts run their per-core code with preemption disabled (002 §8.1.3: "All of the
//! functions in Figure 8-3 execute with preemption disabled, meaning they are atomic with
//! respect to each other on a given core"; Linux's sloppy counters likewise). User space
//! cannot disable preemption, so each core's state has a lock ([`crate::lock`]) that makes an
//! operation atomic with respect to every other operation on that state, whichever CPU the
//! thread ends on:
//!
//! * [`CoreMode::PerCpu`]: the state of the CPU the thread runs on ([`current_cpu`]), under a
//!   spin lock that is normally uncontended;
//! * [`CoreMode::PerThread`]: the thread's own state, entered through the owner protocol
//!   (no atomic read-modify-write) where `membarrier` exists.
//!
//! Per-thread states are handed out by index: a thread claims one on its first operation in a
//! domain and gives it back when it exits; the state (and anything left in it) stays with the
//! index for the next thread, and remote threads keep visiting it. Index 0 is never owned:
//! threads beyond `max_threads`, and threads whose thread-locals are being torn down, share it
//! under its spin lock. The hot path is one thread-local load and a compare (a one-entry cache
//! of the last domain used), as in `oplog`'s per-thread registry.

use crate::config::{CoreMode, Layout};
use crate::lock::{CoreLock, Held};
use crossbeam_utils::CachePadded;
use oplog::primitive::{MutPtr, Mutex, MutexGuard, UnsafeCell, barrier, current_cpu};
use std::cell::{Cell, RefCell};
use std::sync::{Arc, OnceLock, Weak};

/// One core's state and its lock.
struct Core<S> {
    lock: CoreLock,
    state: UnsafeCell<S>,
}

impl<S> Core<S> {
    fn new(state: S) -> BoxedCore<S> {
        Box::new(CachePadded::new(Core { lock: CoreLock::new(), state: UnsafeCell::new(state, "Core.state") }))
    }
}

/// A core on its own cache line, boxed so that its address is stable.
type BoxedCore<S> = Box<CachePadded<Core<S>>>;

/// Builds the state of core `index` when the core is created.
pub(crate) type MakeState<S> = Box<dyn Fn(usize) -> S + Send + Sync>;

/// Source of unique ids for the thread-local registry. Process-wide and never part of a
/// modelled interleaving, so a plain std atomic (see [`oplog::primitive`]).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The per-core states of one domain (see the module docs).
pub(crate) struct Cores<S> {
    id: u64,
    mode: CoreMode,
    /// Per-thread states are entered through the owner protocol (else through the spin lock).
    owner_fast: bool,
    /// Per-CPU domains: one state per CPU, built up front (empty otherwise).
    cpus: Box<[BoxedCore<S>]>,
    /// Per-thread domains: index 0 shared, indices from 1 handed to threads, each built on
    /// first use (empty otherwise).
    threads: Box<[OnceLock<BoxedCore<S>>]>,
    pool: Arc<IndexPool>,
    make: MakeState<S>,
}

// SAFETY: a core's state is only accessed with its lock held (`with_local`, `with_core`,
// `lock_all`), so sharing `Cores` shares no unsynchronized access; states move between
// threads (an index changes owner), which `S: Send` allows.
unsafe impl<S: Send> Sync for Cores<S> {}
// SAFETY: as above; the raw pointers inside are only the boxed cores this value owns.
unsafe impl<S: Send> Send for Cores<S> {}

impl<S> Cores<S> {
    /// The states of a domain laid out as `layout` (already validated); `make(index)` builds
    /// each core's state when the core is created (per-CPU: all now; per-thread: index 0 now,
    /// the others on first use).
    pub(crate) fn new(layout: Layout, make: MakeState<S>) -> Self {
        let (cpus, threads): (Box<[_]>, Box<[_]>) = match layout.mode {
            CoreMode::PerCpu => {
                let n = layout.cpus.unwrap_or_else(ordo::cpu::possible);
                ((0..n).map(|i| Core::new(make(i))).collect(), Box::default())
            }
            CoreMode::PerThread => {
                let threads: Box<[OnceLock<_>]> = (0..=layout.max_threads).map(|_| OnceLock::new()).collect();
                let _ = threads[0].set(Core::new(make(0)));
                (Box::default(), threads)
            }
        };
        Cores {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            mode: layout.mode,
            owner_fast: layout.mode == CoreMode::PerThread && barrier::init(),
            cpus,
            threads,
            pool: Arc::new(IndexPool {
                state: Mutex::new(Indices { free: Vec::new(), next: 1 }, "Cores.pool"),
                limit: layout.max_threads + 1,
            }),
            make,
        }
    }

    /// This set's unique id (ids are never reused in a process).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Per-CPU or per-thread.
    pub(crate) fn mode(&self) -> CoreMode {
        self.mode
    }

    /// Whether per-thread states are entered without an atomic read-modify-write.
    pub(crate) fn owner_fast_path(&self) -> bool {
        self.owner_fast
    }

    /// Bytes of the per-core table and of the cores created so far, not counting what their
    /// states own on the heap.
    pub(crate) fn footprint(&self) -> usize {
        let table = self.cpus.len() * std::mem::size_of::<BoxedCore<S>>()
            + self.threads.len() * std::mem::size_of::<OnceLock<BoxedCore<S>>>();
        table + self.created().len() * std::mem::size_of::<CachePadded<Core<S>>>()
    }

    /// The core at `index`, if created.
    fn core(&self, index: usize) -> Option<&Core<S>> {
        match self.mode {
            CoreMode::PerCpu => self.cpus.get(index).map(|c| &***c),
            CoreMode::PerThread => self.threads.get(index).and_then(OnceLock::get).map(|c| &***c),
        }
    }

    /// Indices of the cores created so far, ascending: every per-CPU core, or per-thread
    /// indices below the pool's high-water mark (each created, under the pool lock, before the
    /// mark passed it).
    pub(crate) fn created(&self) -> Vec<usize> {
        match self.mode {
            CoreMode::PerCpu => (0..self.cpus.len()).collect(),
            CoreMode::PerThread => (0..self.pool.state.lock().next).collect(),
        }
    }

    /// Runs `f` on the calling thread's core state (its CPU's or its own), holding the core's
    /// lock. `f` must not run user code or enter any core.
    #[inline(always)]
    pub(crate) fn with_local<R>(&self, f: impl FnOnce(usize, &mut S) -> R) -> R {
        let (index, core, held) = self.enter();
        let _unlock = Unlock { core, held };
        let access = core.state.get_mut();
        // SAFETY: the core's lock is held until `_unlock` drops, after `access` ends.
        let r = f(index, unsafe { access.deref() });
        #[allow(clippy::drop_non_drop)]
        drop(access);
        r
    }

    #[inline(always)]
    fn enter(&self) -> (usize, &Core<S>, Held) {
        match self.mode {
            CoreMode::PerCpu => {
                let n = self.cpus.len();
                let cpu = current_cpu();
                let index = if cpu < n { cpu } else { cpu % n };
                // SAFETY: index < n = cpus.len().
                let core = unsafe { self.cpus.get_unchecked(index) };
                (index, core, core.lock.lock_spin())
            }
            CoreMode::PerThread => match self.thread_core() {
                Some((index, core)) => {
                    let held = if self.owner_fast { core.lock.lock_owner() } else { core.lock.lock_spin() };
                    (index, core, held)
                }
                None => {
                    let core = self.core(0).expect("the shared state is built with the domain");
                    (0, core, core.lock.lock_spin())
                }
            },
        }
    }

    /// Takes core `index`'s lock as a remote thread and runs `f` on its state; `None` if the
    /// core does not exist (yet).
    pub(crate) fn with_core<R>(&self, index: usize, f: impl FnOnce(&mut S) -> R) -> Option<R> {
        let core = self.core(index)?;
        let held = if self.owner_fast {
            core.lock.remote_begin();
            barrier::heavy();
            core.lock.remote_wait();
            Held::Remote
        } else {
            core.lock.lock_spin()
        };
        let _unlock = Unlock { core, held };
        let access = core.state.get_mut();
        // SAFETY: the core's lock is held until `_unlock` drops, after `access` ends.
        let r = f(unsafe { access.deref() });
        #[allow(clippy::drop_non_drop)]
        drop(access);
        Some(r)
    }

    /// Takes every core's lock at once (one process-wide barrier for all per-thread cores) and
    /// returns them held, in ascending index order: a consistent cut, since every operation
    /// runs entirely under one core's lock. Per-thread domains also hold the index pool, so no
    /// thread can create a core and operate outside the cut meanwhile.
    pub(crate) fn lock_all(&self) -> AllCores<'_, S> {
        let pool = (self.mode == CoreMode::PerThread).then(|| self.pool.state.lock());
        let count = pool.as_ref().map_or(self.cpus.len(), |p| p.next);
        let cores: Vec<(usize, &Core<S>)> = (0..count).filter_map(|i| Some((i, self.core(i)?))).collect();
        let held = if self.owner_fast {
            for (_, c) in &cores {
                c.lock.remote_begin();
            }
            barrier::heavy();
            for (_, c) in &cores {
                c.lock.remote_wait();
            }
            Held::Remote
        } else {
            for (_, c) in &cores {
                c.lock.lock_spin();
            }
            Held::Spin
        };
        AllCores { held, cores: cores.into_iter().map(|(i, c)| (i, c, c.state.get_mut())).collect(), _pool: pool }
    }

    /// The calling thread's index and core in a per-thread domain, claiming one on first use;
    /// `None` when it has none (see the module docs).
    #[inline(always)]
    fn thread_core(&self) -> Option<(usize, &Core<S>)> {
        let f = FAST.with(Cell::get);
        if f.cores == self.id {
            // SAFETY: FAST holds this domain's id only if `thread_core_slow` stored it with a
            // pointer to this domain's core at `f.index` (ids are never reused); cores live as
            // long as their `Cores`, which `&self` keeps alive.
            return Some((f.index, unsafe { &*f.core.cast::<Core<S>>() }));
        }
        self.thread_core_slow()
    }

    #[cold]
    fn thread_core_slow(&self) -> Option<(usize, &Core<S>)> {
        let (index, core) = REGISTRATIONS
            .try_with(|regs| {
                let mut regs = regs.borrow_mut();
                if let Some(r) = regs.iter().find(|r| r.cores == self.id) {
                    return Some((r.index, r.core));
                }
                // Forget claims on domains that no longer exist.
                regs.retain(|r| r.pool.strong_count() > 0);
                // Claim and create under the pool lock, so `lock_all` sees every core that can run.
                let mut pool = self.pool.state.lock();
                let index = pool.acquire(self.pool.limit)?;
                let core: &Core<S> = self.threads[index].get_or_init(|| Core::new((self.make)(index)));
                drop(pool);
                let core = std::ptr::from_ref(core).cast::<()>();
                regs.push(Registration { cores: self.id, core, index, pool: Arc::downgrade(&self.pool) });
                Some((index, core))
            })
            .ok()??;
        FAST.with(|f| f.set(Fast { cores: self.id, core, index }));
        // SAFETY: `core` points to this domain's core at `index` (just found or created),
        // which lives as long as `self`.
        Some((index, unsafe { &*core.cast::<Core<S>>() }))
    }
}

/// Releases a core lock when dropped.
struct Unlock<'a, S> {
    core: &'a Core<S>,
    held: Held,
}

impl<S> Drop for Unlock<'_, S> {
    #[inline(always)]
    fn drop(&mut self) {
        self.core.lock.unlock(self.held);
    }
}

/// Every created core, locked (see [`Cores::lock_all`]); unlocks on drop.
pub(crate) struct AllCores<'a, S> {
    held: Held,
    cores: Vec<(usize, &'a Core<S>, MutPtr<S>)>,
    /// Per-thread domains: the index pool, released after the cores (field order).
    _pool: Option<MutexGuard<'a, Indices>>,
}

impl<S> AllCores<'_, S> {
    /// Each core's index and state, ascending.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut S)> {
        // SAFETY: every core's lock is held until `self` drops; `&mut self` makes these the
        // only references to the states.
        self.cores.iter_mut().map(|(i, _, access)| (*i, unsafe { access.deref() }))
    }
}

impl<S> Drop for AllCores<'_, S> {
    fn drop(&mut self) {
        for (_, core, access) in self.cores.drain(..) {
            // End the access before unlocking (MutPtr has a Drop under loom).
            #[allow(clippy::drop_non_drop)]
            drop(access);
            core.lock.unlock(self.held);
        }
    }
}

/// Free per-thread indices of one domain.
struct IndexPool {
    state: Mutex<Indices>,
    /// One past the largest index (`max_threads + 1`).
    limit: usize,
}

struct Indices {
    free: Vec<usize>,
    next: usize,
}

impl Indices {
    /// A free index below `limit`, if any.
    fn acquire(&mut self, limit: usize) -> Option<usize> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        (self.next < limit).then(|| {
            self.next += 1;
            self.next - 1
        })
    }
}

impl IndexPool {
    fn release(&self, index: usize) {
        self.state.lock().free.push(index);
    }
}

/// The last per-thread domain this thread used: its id, its core (type-erased), its index.
#[derive(Clone, Copy)]
struct Fast {
    cores: u64,
    core: *const (),
    index: usize,
}

impl Fast {
    const EMPTY: Fast = Fast { cores: 0, core: std::ptr::null(), index: 0 };
}

/// A thread's claim on one domain's index; gives it back on drop (thread exit).
struct Registration {
    cores: u64,
    core: *const (),
    index: usize,
    pool: Weak<IndexPool>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Forget the fast path first, so nothing on this thread enters the core after the
        // index has been handed to another thread.
        let _ = FAST.try_with(|f| {
            if f.get().cores == self.cores {
                f.set(Fast::EMPTY);
            }
        });
        if let Some(pool) = self.pool.upgrade() {
            pool.release(self.index);
        }
    }
}

#[cfg(not(loom))]
std::thread_local! {
    static FAST: Cell<Fast> = const { Cell::new(Fast::EMPTY) };
    static REGISTRATIONS: RefCell<Vec<Registration>> = const { RefCell::new(Vec::new()) };
}

#[cfg(loom)]
loom::thread_local! {
    static FAST: Cell<Fast> = Cell::new(Fast::EMPTY);
    static REGISTRATIONS: RefCell<Vec<Registration>> = RefCell::new(Vec::new());
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn per_thread(max_threads: usize) -> Cores<u64> {
        let layout = Layout { mode: CoreMode::PerThread, cpus: None, max_threads };
        Cores::new(layout, Box::new(|_| 0))
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
            let layout = Layout { mode, cpus: Some(2), max_threads: 4 };
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
