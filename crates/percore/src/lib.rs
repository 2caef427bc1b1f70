//! Per-core state with an owner fast path, and the shared-memory primitives it is built
//! from: the machinery under OpLog's log caches (`oplog`), the sloppy counters and Refcache
//! (`oplog-refcount`) and the `metrics` recorder (`oplog-metrics`), in one crate so that each
//! of them stands on the same slots, barrier and primitives, the way `crossbeam-epoch`
//! stands on `crossbeam-utils`.
//!
//! | item (module) | what it is |
//! |---|---|
//! | [`PerCore`] (the crate root) | `cores × slots_per_core` slots entered by their core's owner cheaply and taken by remote threads all at once |
//! | [`Layout`], [`CoreMode`] (`layout`) | per CPU or per thread, and how many cores: the one layout every configuration builds on, validated once |
//! | [`OwnerLock`], [`SpinLock`] (`lock`) | the slots' locks |
//! | `rseq` | entering a per-CPU slot with a restartable sequence (x86-64 Linux), and its traced stand-in |
//! | `threads` | per-thread index claims, handed to the next thread at exit |
//! | [`primitive`] | every shared-memory primitive (atomics, cells, mutexes, fences, the asymmetric barrier, "which CPU am I on"), swappable for loom (`--cfg loom`) or for the commutativity checker's tracer (the `trace` feature) |
//!
//! A [`PerCore<S>`] is `cores × slots_per_core` slots, each an `S` behind an [`OwnerLock`] on
//! its own cache line (so a remote thread locking one slot never steals another's line).
//! "Core" is either a CPU or a thread ([`CoreMode`]):
//!
//! * **Per CPU** (the texts' design, 000 §4.1): [`PerCore::enter`] picks the slot of the CPU
//!   the thread runs on. Where Linux restartable sequences are available (x86-64, glibc
//!   2.35+, not under loom or Miri), the slot is entered with one (the `rseq` module: plain
//!   loads and one plain store, no atomic instruction); elsewhere with the slot's spin lock.
//!   Under the `trace` feature a stand-in with the sequence's memory accesses takes its
//!   place (recorded for the commutativity checker; see the `rseq` module), so the checker
//!   traces this default path.
//!   Either way a thread that migrates in the middle of an operation stays correct: the slot
//!   stays locked whichever CPU the thread finishes on.
//! * **Per thread**: each thread claims a core index on first use (`threads`) and enters its
//!   own slots through the owner flag, without any atomic read-modify-write or fence, where
//!   `membarrier` exists ([`barrier::init`]); index 0 is shared, under its lock, by threads
//!   beyond `max_threads` and by threads whose thread-locals are torn down.
//!
//! Beside its state, each slot has two words its holder publishes for threads that do not
//! hold it: the *published word* ([`Entered::publish`], [`PerCore::published`]: OpLog
//! names the object whose log the slot holds) and the *low mark* ([`Entered::set_low_mark`],
//! [`PerCore::low_mark`]: a lower bound on what the state holds; OpLog's ordered logs put
//! their oldest stamp there, so that a thread applying an object's backlog can tell which
//! of its operations no slot's log precedes without taking any slot).
//!
//! A per-core sum ([`Fold`], OpLog's counter) can take a shorter way in: [`PerCore::fold`]
//! adds to the calling core's slot when the slot publishes the sum's owner, as an entry
//! would, but with nothing else of one: one restartable sequence on per-CPU slots (no store
//! to the slot's flags), and on per-thread slots the owner flag's two stores around the
//! add with no entry guard: about 30 instructions of a per-thread counter's increment
//! where an entry took about 45 (two threads each incrementing one counter of a
//! per-thread domain, 2-core host, 2026-11-27: 3.5–4.2 ns per increment through
//! [`PerCore::enter`], 3.0–3.3 ns through [`PerCore::fold`]; `oplog-bench counter`'s
//! `oplog-perthread` at two threads went from 546–617M to 728–773M increments per
//! second).
//!
//! Remote threads (synchronizers, reviewers, reconcilers) take any set of slots at once
//! with [`PerCore::lock_remote`]: in ascending order (so two remote threads never deadlock),
//! with one barrier for all of them where owners use the fast path ([`OwnerLock`]'s docs
//! explain the protocol): none for slots left in spin mode or for the calling thread's own
//! per-thread slots (their owner is the caller, outside them), one aimed at the slot's CPU when
//! the slots that need it are one CPU's (entered by rseq), otherwise one process-wide
//! barrier, shared with other remote threads that need one at the same time
//! ([`barrier::heavy`]). Holding every slot at one instant is what makes a synchronize's
//! gathered operations a consistent cut.

#![warn(missing_docs)]

mod layout;
mod lock;
pub mod primitive;
#[cfg(any(percore_rseq, percore_trace))]
mod rseq;
mod threads;

pub use layout::{CoreMode, DEFAULT_MAX_THREADS, Layout, LayoutError, MAX_CPUS, MAX_THREADS};
pub use lock::{OwnerLock, SPIN_MODE_ENTRIES, SpinLock, Taken};

use crate::primitive::{
    AtomicU64, AtomicUsize, GuardAccess, MutPtr, Ordering, UnsafeCell, barrier, current_cpu, fold_cpu,
};
use crossbeam_utils::CachePadded;
use smallvec::SmallVec;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

/// Whether per-CPU cores can be entered with a restartable sequence on this machine (the
/// fast path of [`PerCore::enter`]; see the module docs).
pub fn per_cpu_fast_path() -> bool {
    #[cfg(any(percore_rseq, percore_trace))]
    return rseq::offset().is_some();
    #[cfg(not(any(percore_rseq, percore_trace)))]
    return false;
}

/// A slot state that a folded update can be applied to ([`PerCore::fold`]): a per-core
/// sum, such as OpLog's counter log.
///
/// # Safety
/// [`Fold::COUNT`] is the byte offset in `Self` of a `u32`, [`Fold::VALUE`] of an `i64`
/// (wrapping), plain fields that are only accessed by holders of the slot: the restartable
/// sequence writes them as a holder would, and [`Fold::fold`] must make the same update
/// (one more count, the delta added). The fold finds whose sum the state holds by the
/// slot's published word alone ([`Entered::publish`]): whenever no thread holds the slot,
/// a non-zero published word must name the owner of the state's sum.
pub unsafe trait Fold {
    /// The count of updates, incremented.
    // Only the rseq path (or its traced stand-in) reads the offsets.
    #[cfg_attr(not(any(percore_rseq, percore_trace)), allow(dead_code))]
    const COUNT: usize;
    /// The sum the delta is added to.
    #[cfg_attr(not(any(percore_rseq, percore_trace)), allow(dead_code))]
    const VALUE: usize;

    /// The folded update, made by a holder of the slot (per-thread cores): increments the
    /// count, adds `delta` to the sum (wrapping), and returns the count.
    fn fold(&mut self, delta: i64) -> u32;
}

/// One slot: its lock, a word its holder publishes for remote readers, the state it
/// guards, and its low mark. `repr(C)` with the lock first: the `rseq` module finds its
/// flags at fixed offsets from the slot's address. The low mark comes last, so that the
/// lock, the published word and the state's first bytes keep the line they share (an
/// ordered log's push reads the mark once per push, a cheap load of a line it writes).
#[repr(C)]
pub struct Slot<S> {
    lock: OwnerLock,
    /// Written only by a holder of the lock ([`Entered::publish`], [`Remote::publish`]),
    /// read by anyone without it ([`PerCore::published`]): what the slot's state holds, in
    /// a form a remote thread can check without taking the lock (OpLog: which object's
    /// log is non-empty here).
    published: AtomicUsize,
    state: UnsafeCell<S>,
    /// The slot's low mark: a lower bound on what the state holds, written only by a holder
    /// of the lock ([`Entered::set_low_mark`], [`Entered::clear_low_mark`],
    /// [`Remote::clear_low_mark`]) and read by anyone without it ([`PerCore::low_mark`]), for
    /// a remote thread that must not look inside the state (OpLog: the stamp of an ordered
    /// log's oldest operation). [`NO_LOW_MARK`] until set, and once cleared.
    low_mark: AtomicU64,
}

/// The low mark of a slot that has none ([`PerCore::low_mark`]): its state holds nothing
/// the mark bounds.
pub const NO_LOW_MARK: u64 = u64::MAX;

// SAFETY: the state is only accessed with the slot's lock held (the guards below require
// it), so sharing a slot shares no unsynchronized access; states move between threads (an
// index changes owner, a remote thread takes a slot), which `S: Send` allows.
unsafe impl<S: Send> Sync for Slot<S> {}

impl<S> Slot<S> {
    /// Byte offset of the state in the slot (the `rseq` module's folded updates).
    #[cfg(any(percore_rseq, percore_trace))]
    const STATE: usize = std::mem::offset_of!(Slot<S>, state) + UnsafeCell::<S>::VALUE_OFFSET;

    fn new(state: S) -> Self {
        Self {
            lock: OwnerLock::new(),
            published: AtomicUsize::new(0, "Slot.published"),
            low_mark: AtomicU64::new(NO_LOW_MARK, "Slot.low_mark"),
            state: UnsafeCell::new(state, "Slot.data"),
        }
    }
}

/// One core's slots, each on its own cache line.
type Slots<S> = Box<[CachePadded<Slot<S>>]>;

/// Builds the state of slot `(core, index)` when its core is allocated.
type Make<S> = Box<dyn Fn(usize, usize) -> S + Send + Sync>;

/// Per-core state (see the module docs).
pub struct PerCore<S> {
    mode: CoreMode,
    slots_per_core: usize,
    /// Whether slots are entered through the owner protocol (per-thread with `membarrier`,
    /// per-CPU with rseq), and so taken remotely with the asymmetric barrier.
    owner_fast: bool,
    /// Per CPU: every CPU's slots, allocated up front (empty otherwise).
    cpus: Box<[Slots<S>]>,
    /// Per thread: index 0 shared, indices from 1 claimed by threads, allocated on first use
    /// (empty otherwise).
    threads: Box<[OnceLock<Slots<S>>]>,
    /// Per thread: one more than the highest index whose slots are allocated.
    threads_in_use: AtomicUsize,
    pool: Option<Arc<threads::Pool>>,
    /// The pool's id (0 without one), kept here for the hot path.
    pool_id: u64,
    #[cfg(any(percore_rseq, percore_trace))]
    rseq: Option<rseq::Table>,
    /// Per-thread cores on the owner protocol: [`PerCore::fold`] applies folded updates.
    thread_folds: bool,
    make: Make<S>,
    /// Barriers remote acquisitions asked for ([`PerCore::barriers`]): a std atomic, since
    /// it is instrumentation, not part of the protocol loom models.
    barriers: std::sync::atomic::AtomicU64,
}

impl<S> fmt::Debug for PerCore<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PerCore")
            .field("mode", &self.mode)
            .field("cores", &self.cores())
            .field("slots_per_core", &self.slots_per_core)
            .field("owner_fast", &self.owner_fast)
            .finish_non_exhaustive()
    }
}

impl<S: Send> PerCore<S> {
    /// The [`Layout::cores`] cores of `layout` (per CPU: CPU `c` uses core `c % cores`; per
    /// thread: the thread indices plus the shared index 0), each with `slots_per_core`
    /// slots, whose states `make(core, index)` builds when the core is allocated (per CPU:
    /// all now; per thread: on the first use of an index). `rseq` allows the
    /// restartable-sequence fast path for per-CPU cores where the platform has it.
    ///
    /// # Panics
    /// If `layout` is out of range ([`Layout::validate`]'s error; configurations check it
    /// first and return it), or `slots_per_core` is 0.
    pub fn new(
        layout: Layout,
        slots_per_core: usize,
        rseq: bool,
        make: impl Fn(usize, usize) -> S + Send + Sync + 'static,
    ) -> Self {
        if let Err(e) = layout.validate() {
            panic!("a PerCore of an invalid layout: {e}");
        }
        assert!(slots_per_core > 0, "a PerCore needs at least one slot per core");
        let (mode, cores) = (layout.mode(), layout.cores());
        let make: Make<S> = Box::new(make);
        let alloc = |core: usize| -> Slots<S> {
            (0..slots_per_core).map(|i| CachePadded::new(Slot::new(make(core, i)))).collect()
        };
        let (cpus, threads, pool): (Box<[_]>, Box<[_]>, _) = match mode {
            CoreMode::PerCpu => ((0..cores).map(alloc).collect(), Box::default(), None),
            CoreMode::PerThread => {
                let threads: Box<[OnceLock<Slots<S>>]> = (0..cores).map(|_| OnceLock::new()).collect();
                let shared = alloc(0);
                // Index 0 has no owner: threads beyond the limit take its slots remotely,
                // in spin mode, so that none of them sends a barrier.
                shared.iter().for_each(|slot| slot.lock.set_spin_mode());
                let _ = threads[0].set(shared);
                (Box::default(), threads, Some(threads::Pool::new(cores - 1)))
            }
        };
        // The sequence finds the calling CPU's slots by its number: a layout with fewer
        // cores than CPUs would leave some CPUs without (their threads would take a slot
        // remotely, with a barrier, at every entry), so it takes the spin locks.
        #[cfg(percore_rseq)]
        let rseq = rseq && cores >= ordo::cpu::possible();
        #[cfg(any(percore_rseq, percore_trace))]
        let rseq = (mode == CoreMode::PerCpu && rseq)
            .then(|| rseq::Table::new(cpus.iter().map(|s| s.as_ptr().cast::<u8>()).collect()))
            .flatten();
        #[cfg(any(percore_rseq, percore_trace))]
        let owner_fast = rseq.is_some();
        #[cfg(not(any(percore_rseq, percore_trace)))]
        let owner_fast = {
            let _ = rseq;
            false
        };
        let owner_fast = owner_fast || (mode == CoreMode::PerThread && barrier::init());
        PerCore {
            mode,
            slots_per_core,
            owner_fast,
            cpus,
            threads,
            threads_in_use: AtomicUsize::new(1, "PerCore.threads_in_use"),
            barriers: std::sync::atomic::AtomicU64::new(0),
            pool_id: pool.as_ref().map_or(0, |p| p.id()),
            pool,
            #[cfg(any(percore_rseq, percore_trace))]
            rseq,
            thread_folds: mode == CoreMode::PerThread && owner_fast,
            make,
        }
    }
}

impl<S> PerCore<S> {
    /// Bytes one slot takes (state, lock and padding).
    pub const SLOT_BYTES: usize = std::mem::size_of::<CachePadded<Slot<S>>>();

    /// Per CPU or per thread.
    pub fn mode(&self) -> CoreMode {
        self.mode
    }

    /// Number of core indices (CPUs, or thread indices plus the shared one).
    pub fn cores(&self) -> usize {
        match self.mode {
            CoreMode::PerCpu => self.cpus.len(),
            CoreMode::PerThread => self.threads.len(),
        }
    }

    /// Core indices that may hold slots: every CPU; per thread, the indices up to the
    /// highest one whose slots are allocated (the others hold nothing). Sequentially
    /// consistent with the allocation: a core allocated before this call began is counted.
    #[inline]
    pub fn cores_in_use(&self) -> usize {
        match self.mode {
            CoreMode::PerCpu => self.cpus.len(),
            CoreMode::PerThread => self.threads_in_use.load(Ordering::SeqCst),
        }
    }

    /// Slots per core.
    pub fn slots_per_core(&self) -> usize {
        self.slots_per_core
    }

    /// Whether [`PerCore::enter`] takes slots without any atomic read-modify-write
    /// (per-thread cores where `membarrier` exists, per-CPU cores on the rseq path); remote
    /// acquisitions then cost a process-wide barrier.
    pub fn owner_fast_path(&self) -> bool {
        self.owner_fast
    }

    /// The barriers remote acquisitions ([`PerCore::lock_remote`], [`PerCore::lock_all`])
    /// asked for so far: one per CPU interrupted alone ([`barrier::heavy_on`]), one per
    /// barrier to every CPU ([`barrier::heavy`]). An acquisition of slots that are all in
    /// spin mode, or are the calling thread's own, asks for none. (A barrier that another
    /// caller's served, [`barrier::heavy`]'s sharing, counts for each caller.)
    pub fn barriers(&self) -> u64 {
        self.barriers.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether core `core` is allocated (per-thread cores are allocated on first use).
    pub fn allocated(&self, core: usize) -> bool {
        self.core(core).is_some()
    }

    /// The core index the calling thread enters (its CPU, or its own index), if it has one
    /// now: per thread, only once it has claimed an index (nothing is claimed here). A hint:
    /// a thread may migrate at once.
    pub fn caller_core(&self) -> Option<usize> {
        match self.mode {
            CoreMode::PerCpu => Some(fold_cpu(current_cpu(), self.cpus.len())),
            CoreMode::PerThread => threads::claimed(self.pool_id),
        }
    }

    /// Bytes held by the slots allocated so far.
    pub fn footprint(&self) -> usize {
        let per_core = self.slots_per_core * std::mem::size_of::<CachePadded<Slot<S>>>();
        let cpus = self.cpus.len() * (per_core + std::mem::size_of::<Slots<S>>());
        let threads = self.threads.iter().map(|t| std::mem::size_of_val(t) + t.get().map_or(0, |_| per_core));
        cpus + threads.sum::<usize>()
    }

    /// The word last published in slot `index` of core `core` (0 if the core is not
    /// allocated), read without the slot's lock. Sequentially consistent with the
    /// publishing store: a value published by an operation that completed before this call
    /// began is seen, or a later one.
    ///
    /// # Panics
    /// If `index` is not below [`PerCore::slots_per_core`].
    #[inline]
    pub fn published(&self, core: usize, index: usize) -> usize {
        assert!(index < self.slots_per_core, "slot {index} of {}", self.slots_per_core);
        self.core(core).map_or(0, |s| s[index].published.load(Ordering::SeqCst))
    }

    /// The low mark of slot `index` of core `core` ([`NO_LOW_MARK`] if the core is not
    /// allocated), read without the slot's lock. Sequentially consistent with the holders'
    /// stores ([`Entered::set_low_mark`]): a mark set by an operation that completed before
    /// this call began is seen, or a later one.
    ///
    /// # Panics
    /// If `index` is not below [`PerCore::slots_per_core`].
    #[inline]
    pub fn low_mark(&self, core: usize, index: usize) -> u64 {
        assert!(index < self.slots_per_core, "slot {index} of {}", self.slots_per_core);
        self.core(core).map_or(NO_LOW_MARK, |s| s[index].low_mark.load(Ordering::SeqCst))
    }

    fn core(&self, core: usize) -> Option<&Slots<S>> {
        match self.mode {
            CoreMode::PerCpu => self.cpus.get(core).inspect(|s| trace_table(s, "PerCore.cpus")),
            CoreMode::PerThread => {
                self.threads.get(core).inspect(|t| trace_table(t, "PerCore.threads")).and_then(OnceLock::get)
            }
        }
    }
}

impl<S: Send> PerCore<S> {
    /// The slots of per-thread index `core`, allocating them.
    fn thread_slots(&self, core: usize) -> &Slots<S> {
        trace_table(&self.threads[core], "PerCore.threads");
        self.threads[core].get_or_init(|| {
            // Before the slots can be entered (see `cores_in_use`).
            self.threads_in_use.fetch_max(core + 1, Ordering::SeqCst);
            (0..self.slots_per_core).map(|i| CachePadded::new(Slot::new((self.make)(core, i)))).collect()
        })
    }

    /// Enters slot `index` of the calling thread's core (its CPU, or its own index) and
    /// returns it locked.
    ///
    /// # Panics
    /// If `index` is not below [`PerCore::slots_per_core`].
    #[inline(always)]
    pub fn enter(&self, index: usize) -> Entered<'_, S> {
        assert!(index < self.slots_per_core, "slot {index} of {}", self.slots_per_core);
        let (core, slot, taken) = match self.mode {
            CoreMode::PerCpu => self.enter_cpu(index),
            CoreMode::PerThread => self.enter_thread(index),
        };
        Entered::new(slot, taken, core)
    }

    /// [`PerCore::enter`] for a caller that may leave in the slot what a remote taker must
    /// then take without a barrier (`oplog`'s logs of kinds whose updates may have to
    /// gather every core's log: an interrupt is never sent on its update path). On the
    /// owner protocol the slot is in spin mode when released, and stays so: an entry
    /// through the owner flag puts it there without a barrier
    /// ([`OwnerLock::hold_in_spin_mode`]), later owners take its spin lock, and the entries
    /// that would end spin mode keep it. Elsewhere every slot is on its spin lock: the same
    /// as [`PerCore::enter`].
    ///
    /// # Panics
    /// If `index` is not below [`PerCore::slots_per_core`].
    #[inline]
    pub fn enter_locked(&self, index: usize) -> Entered<'_, S> {
        let mut backoff = crate::primitive::Backoff::default();
        loop {
            let mut entered = self.enter(index);
            if !self.owner_fast {
                return entered;
            }
            if let Some(taken) = entered.slot.lock.hold_in_spin_mode(entered.taken) {
                entered.taken = taken;
                return entered;
            }
            // A remote taker holds the spin lock and waits for this entry to end.
            drop(entered);
            backoff.snooze();
        }
    }

    /// [`PerCore::enter_locked`]'s common case, with no call: the spin lock of the calling
    /// core's slot `index`, taken with one try, where the slot is in spin mode (per-CPU
    /// cores on the restartable-sequence path, per-thread cores on the owner protocol of a
    /// thread whose index is cached: as `enter_locked` leaves it), or the CPU's spin lock
    /// (per-CPU cores on the spin lock; a held lock is waited for, out of line). `None`
    /// otherwise (the slot held, not in spin mode yet, the thread without a cached index,
    /// the index out of range): the caller then takes `enter_locked`, out of line.
    #[inline(always)]
    pub fn try_enter_locked(&self, index: usize) -> Option<Entered<'_, S>> {
        if index >= self.slots_per_core {
            return None;
        }
        let (core, slot) = if self.thread_folds {
            let (core, base) = threads::cached(self.pool_id)?;
            // SAFETY: `cached` hands back the calling thread's claim in this PerCore's pool;
            // `index` was checked above.
            (core, unsafe { self.thread_slot(base, index) })
        } else if self.mode == CoreMode::PerCpu {
            let (core, slot) = self.cpu_slot(current_cpu(), index);
            if !self.owner_fast {
                return Some(Entered::new(slot, slot.lock.lock_spin(), core));
            }
            (core, slot)
        } else {
            return None;
        };
        // A thread that migrated since it read its CPU takes another CPU's slot: in spin
        // mode, its spin lock excludes every other thread all the same.
        slot.lock.try_lock_in_spin_mode().then(|| Entered::new(slot, Taken::Spin, core))
    }

    /// [`PerCore::enter`]'s common case, with no call: the calling core's slot `index`
    /// entered in one restartable sequence that finds it free (per-CPU cores on the
    /// restartable-sequence path), through the owner flag of the calling thread's own slot
    /// whose index it cached (per-thread cores on the owner protocol), or through the CPU's
    /// spin lock (per-CPU cores on the spin lock; a held lock is waited for, out of line).
    /// `None` where the slot is held, requested or in spin mode, the thread has no cached
    /// index, the index is out of range, or the cores are per-thread without the owner
    /// protocol: the caller then enters the slot with [`PerCore::enter`], out of line, so
    /// that this path carries none of the other cases' code.
    #[inline(always)]
    pub fn try_enter(&self, index: usize) -> Option<Entered<'_, S>> {
        if index >= self.slots_per_core {
            return None;
        }
        #[cfg(any(percore_rseq, percore_trace))]
        if let Some(table) = &self.rseq {
            let offset = index * std::mem::size_of::<CachePadded<Slot<S>>>();
            return match table.try_enter_once(offset) {
                rseq::Enter::Entered(cpu, slot) => {
                    // SAFETY: as in `enter_cpu`: slot `index` of CPU `cpu`'s array, which
                    // lives as long as `self`.
                    let slot = unsafe { &*slot.cast::<Slot<S>>() };
                    Some(Entered::new(slot, Taken::Owner, cpu))
                }
                _ => None,
            };
        }
        let (core, slot, taken) = if self.thread_folds {
            let (core, base) = threads::cached(self.pool_id)?;
            // SAFETY: `cached` hands back the calling thread's claim in this PerCore's pool;
            // `index` was checked above.
            let slot = unsafe { self.thread_slot(base, index) };
            (core, slot, slot.lock.try_lock_owner().then_some(Taken::Owner)?)
        } else if self.mode == CoreMode::PerCpu {
            let (core, slot) = self.cpu_slot(current_cpu(), index);
            (core, slot, slot.lock.lock_spin())
        } else {
            return None;
        };
        Some(Entered::new(slot, taken, core))
    }

    #[inline(always)]
    fn enter_cpu(&self, index: usize) -> (usize, &Slot<S>, Taken) {
        #[cfg(any(percore_rseq, percore_trace))]
        if let Some(table) = &self.rseq {
            let offset = index * std::mem::size_of::<CachePadded<Slot<S>>>();
            // Inline: the sequence entered (the common case), or the slot is in spin mode
            // (a remote taker, such as a synchronize of an object that another core's
            // thread updates too, comes back to it often), which an owner enters through
            // its spin lock without a second sequence or a call: two threads each updating
            // a random one of 256 objects that both log, `oplog-bench objects`' user type
            // pinned logged, went from 37–44M to 42–48M updates/s, and one object from 51–52M
            // to 69–75M in `objects`' `logged-oplog` (2-core Intel Xeon host, 2026-11-28,
            // runs alternated).
            match table.try_enter_once(offset) {
                // SAFETY: the table was built from this PerCore's per-CPU arrays (which live
                // as long as `self`), and `index` is below every array's length, so the
                // address is slot `index` of CPU `cpu`.
                rseq::Enter::Entered(cpu, slot) => return (cpu, unsafe { &*slot.cast::<Slot<S>>() }, Taken::Owner),
                rseq::Enter::Requested(cpu) => {
                    if let Some(entered) = self.enter_spin_mode(cpu, index) {
                        return entered;
                    }
                }
                _ => {}
            }
            return self.enter_cpu_slow(table, index);
        }
        let (core, slot) = self.cpu_slot(current_cpu(), index);
        (core, slot, slot.lock.lock_spin())
    }

    /// Enters slot `index` of CPU `cpu`, which the sequence found requested, through its
    /// spin lock if it is in spin mode ([`OwnerLock::enter_spin_mode`]); `None` if a
    /// remote acquisition held it instead.
    #[cfg(any(percore_rseq, percore_trace))]
    #[inline(always)]
    fn enter_spin_mode(&self, cpu: usize, index: usize) -> Option<(usize, &Slot<S>, Taken)> {
        let (core, slot) = self.cpu_slot(cpu, index);
        slot.lock.enter_spin_mode().map(|held| (core, slot, held))
    }

    /// [`PerCore::enter_cpu`] on the restartable-sequence path when the first sequence did
    /// not enter and the slot was not in spin mode: waits for the slot, enters spin mode,
    /// or takes the remote protocol.
    #[cfg(any(percore_rseq, percore_trace))]
    #[cold]
    #[inline(never)]
    fn enter_cpu_slow(&self, table: &rseq::Table, index: usize) -> (usize, &Slot<S>, Taken) {
        let offset = index * std::mem::size_of::<CachePadded<Slot<S>>>();
        let mut backoff = crate::primitive::Backoff::default();
        loop {
            return match table.enter(offset) {
                // SAFETY: the table was built from this PerCore's per-CPU arrays (which
                // live as long as `self`), and `index` is below every array's length, so
                // the address is slot `index` of CPU `cpu`.
                rseq::Enter::Entered(cpu, slot) => (cpu, unsafe { &*slot.cast::<Slot<S>>() }, Taken::Owner),
                // In spin mode, or being taken remotely (then wait and retry).
                rseq::Enter::Requested(cpu) => match self.enter_spin_mode(cpu, index) {
                    Some(entered) => entered,
                    None => {
                        backoff.snooze();
                        continue;
                    }
                },
                _ => {
                    let (core, slot) = self.cpu_slot(current_cpu(), index);
                    (core, slot, self.lock_remote_in_spin_mode(slot))
                }
            };
        }
    }

    /// Enters `slot` remotely, where the calling thread has no owner path into it (a thread
    /// that cannot run the restartable sequence: no rseq area of its own, or a CPU beyond
    /// the table; a thread beyond a per-thread layout's limit, on the shared index), and
    /// leaves it in spin mode when released: the barrier, counted, is paid by the first
    /// such entry after the slot's owners had it back, not by every entry (none on the
    /// shared index, in spin mode from the start).
    #[cold]
    fn lock_remote_in_spin_mode(&self, slot: &Slot<S>) -> Taken {
        if slot.lock.remote_begin() {
            barrier::heavy();
            self.barriers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        slot.lock.remote_wait();
        slot.lock.hold_in_spin_mode(Taken::Remote).unwrap_or(Taken::Remote)
    }

    /// A folded update of the calling core's slot `index`, if the slot's published word
    /// equals `key` (which then names the owner of the state's sum: [`Fold`]'s contract):
    /// increments the state's count and adds `delta` to its sum, as a holder of the slot
    /// would; returns the count after the increment. `None`, with nothing done, if the
    /// slot publishes another word, if `index` is out of range, and where noted below (the
    /// caller then enters the slot, which checks `index`, waits, and reports a thread that
    /// entered its own slot again).
    ///
    /// - Per-CPU cores on the restartable-sequence path: in one sequence, whose commit is
    ///   the add, with no store to the slot's flags; declined while a thread holds or is
    ///   taking the slot.
    /// - Per-thread cores on the owner protocol: takes the slot as its owner, makes the
    ///   update ([`Fold::fold`]) and releases it, as [`PerCore::enter`] would, but with
    ///   nothing else of an entry (no guard, no dispatch on how the slot was taken);
    ///   declined while a remote thread is taking the slot or holds it in spin mode, or
    ///   this thread holds it.
    /// - Otherwise (per-CPU cores on the spin lock, per-thread cores without `membarrier`):
    ///   through [`PerCore::enter`], in one call out of line.
    ///
    /// Only the restartable sequence and a per-thread fold of a thread whose index is
    /// cached are inline, and they need no register saved, so neither does a caller that
    /// is not inlined into a loop: one thread incrementing a counter through a call
    /// (`oplog`'s `hotpath` example, 2-core Intel host, 2026-11-28, six alternated runs)
    /// took 3.4–4.5 ns per increment, against 4.7–7.1 ns with all of this inline; on the
    /// spin lock 8.8–9.6 ns against 9.4–13.8 ns; per thread 3.4–6.8 ns against 4.7–7.5 ns.
    #[inline(always)]
    pub fn fold(&self, index: usize, key: usize, delta: i64) -> Option<u32>
    where
        S: Fold,
    {
        if index >= self.slots_per_core {
            return None;
        }
        #[cfg(any(percore_rseq, percore_trace))]
        if let Some(table) = &self.rseq {
            let offset = index * std::mem::size_of::<CachePadded<Slot<S>>>();
            // SAFETY: the table was built from this PerCore's per-CPU arrays of `Slot<S>`s,
            // and `index` is below every array's length.
            return unsafe { table.fold::<S>(offset, key, delta) };
        }
        if self.thread_folds {
            return self.fold_thread(index, key, delta);
        }
        self.fold_entered(index, key, delta)
    }

    /// [`PerCore::fold`] on per-thread cores on the owner protocol: inline where the
    /// thread's index is cached (it then needs no register saved), out of line where the
    /// thread must claim one.
    #[inline(always)]
    fn fold_thread(&self, index: usize, key: usize, delta: i64) -> Option<u32>
    where
        S: Fold,
    {
        match threads::cached(self.pool_id) {
            // SAFETY: `base` is what the claim returned, the calling thread's own slots.
            Some((_, base)) => unsafe { self.fold_own(base, index, key, delta) },
            None => self.fold_thread_claiming(index, key, delta),
        }
    }

    /// [`PerCore::fold_thread`] for a thread whose index is not cached: claims one if
    /// needed.
    #[cold]
    #[inline(never)]
    fn fold_thread_claiming(&self, index: usize, key: usize, delta: i64) -> Option<u32>
    where
        S: Fold,
    {
        let pool = self.pool.as_ref()?;
        let (_, base) = threads::current(self.pool_id, pool, |core| self.thread_slots(core).as_ptr().cast())?;
        // SAFETY: as in `fold_thread`.
        unsafe { self.fold_own(base, index, key, delta) }
    }

    /// The fold of [`PerCore::fold_thread`] on the calling thread's slots at `base`.
    ///
    /// # Safety
    /// `base` is the first slot of the calling thread's core, as `threads::current` returns
    /// it for this PerCore's pool.
    #[inline(always)]
    unsafe fn fold_own(&self, base: *const (), index: usize, key: usize, delta: i64) -> Option<u32>
    where
        S: Fold,
    {
        // SAFETY: `base` is the calling thread's first slot (this function's contract), and
        // `fold` checked `index`.
        let slot = unsafe { self.thread_slot(base, index) };
        if !slot.lock.try_lock_owner() {
            return None;
        }
        let count = if slot.published.load(Ordering::Relaxed) == key {
            let state = slot.state.get_mut();
            // SAFETY: this thread holds the slot's lock, so this is the only access.
            Some(unsafe { state.deref() }.fold(delta))
        } else {
            None
        };
        slot.lock.unlock(Taken::Owner);
        count
    }

    /// [`PerCore::fold`] where slots are entered through their spin lock: out of line
    /// ([`PerCore::fold`]).
    #[inline(never)]
    fn fold_entered(&self, index: usize, key: usize, delta: i64) -> Option<u32>
    where
        S: Fold,
    {
        let mut entered = self.enter(index);
        (entered.published() == key).then(|| entered.fold(delta))
    }

    /// Slot `index` of CPU `cpu`, folding CPU ids beyond the table (hot plug) onto it.
    #[inline(always)]
    fn cpu_slot(&self, cpu: usize, index: usize) -> (usize, &Slot<S>) {
        let core = fold_cpu(cpu, self.cpus.len());
        // SAFETY: core < cpus.len().
        let slots = unsafe { self.cpus.get_unchecked(core) };
        trace_table(slots, "PerCore.cpus");
        // SAFETY: `enter` checked index < slots_per_core, every array's length.
        (core, unsafe { slots.get_unchecked(index) })
    }

    /// Slot `index` of the per-thread core whose first slot is at `base`.
    ///
    /// # Safety
    /// `base` is the first slot of one of this PerCore's per-thread cores (what a claim in
    /// its pool returned: `thread_slots(core)`), and `index` is below `slots_per_core`, the
    /// core's length; the core lives as long as `self`.
    #[inline(always)]
    unsafe fn thread_slot(&self, base: *const (), index: usize) -> &Slot<S> {
        // SAFETY: the contract above: an element of a live array of padded slots.
        unsafe { &*base.cast::<CachePadded<Slot<S>>>().add(index) }
    }

    #[inline(always)]
    fn enter_thread(&self, index: usize) -> (usize, &Slot<S>, Taken) {
        let pool = self.pool.as_ref().expect("per-thread cores have a pool");
        match threads::current(self.pool_id, pool, |core| self.thread_slots(core).as_ptr().cast()) {
            Some((core, base)) => {
                // SAFETY: `current` hands back what the claim returned, `thread_slots(core)`'s
                // first slot; `enter` checked `index`.
                let slot = unsafe { self.thread_slot(base, index) };
                (core, slot, if self.owner_fast { slot.lock.lock_owner() } else { slot.lock.lock_spin() })
            }
            None => {
                let slot = &self.thread_slots(0)[index];
                (0, slot, if self.owner_fast { self.lock_remote_in_spin_mode(slot) } else { slot.lock.lock_spin() })
            }
        }
    }

    /// Takes the slots `targets` (pairs of core and slot index) at once, from any thread,
    /// skipping cores not allocated yet (they hold nothing). Slots are locked in ascending
    /// order, so two remote threads never deadlock; with the owner fast path, a barrier
    /// to each CPU whose owners must leave (per-CPU slots, a few CPUs) or one process-wide
    /// barrier covers them all.
    ///
    /// # Panics
    /// If a slot index is out of range.
    pub fn lock_remote(&self, targets: impl IntoIterator<Item = (usize, usize)>) -> Remote<'_, S> {
        self.take_remote(targets, true).expect("a remote acquisition that may send barriers takes its slots")
    }

    /// [`PerCore::lock_remote`] where that needs no barrier: every slot is on its spin
    /// lock, in spin mode, or the calling thread's own. Otherwise `None`, having taken
    /// nothing: the slots it asked owners to stay out of are handed back at once (their
    /// owners, which may have seen the request, take the spin lock meanwhile).
    ///
    /// # Panics
    /// If a slot index is out of range.
    pub fn try_lock_remote_without_barrier(
        &self,
        targets: impl IntoIterator<Item = (usize, usize)>,
    ) -> Option<Remote<'_, S>> {
        self.take_remote(targets, false)
    }

    /// [`PerCore::lock_remote`], or with `barriers` false
    /// [`PerCore::try_lock_remote_without_barrier`].
    fn take_remote(&self, targets: impl IntoIterator<Item = (usize, usize)>, barriers: bool) -> Option<Remote<'_, S>> {
        let mut targets: SmallVec<[(usize, usize); INLINE_SLOTS]> = targets.into_iter().collect();
        targets.sort_unstable();
        targets.dedup();
        let slots: SmallVec<[(usize, usize, &Slot<S>); INLINE_SLOTS]> = targets
            .into_iter()
            .filter_map(|(core, index)| {
                assert!(index < self.slots_per_core, "slot {index} of {}", self.slots_per_core);
                self.core(core).map(|s| (core, index, &*s[index]))
            })
            .collect();
        if self.owner_fast {
            // The cores whose owners must be interrupted: none (every slot in spin mode),
            // per-CPU slots entered by rseq (whose owners can only be running on the
            // slot's CPU: a barrier interrupts such a CPU alone, never the caller's own,
            // where there are at most `TARGETED_BARRIERS` of them), or else one barrier
            // for all.
            // The calling thread's own per-thread slots need none: their one owner is not
            // inside them, it is here (and sees its own earlier stores in program order).
            // Index 0 is shared, never owned.
            let mut own = match self.mode {
                CoreMode::PerThread => threads::claimed(self.pool_id).filter(|&c| c != 0),
                CoreMode::PerCpu => None,
            };
            let mut cpus: SmallVec<[usize; INLINE_SLOTS]> = SmallVec::new();
            let mut all = false;
            for &(core, _, s) in &slots {
                if s.lock.remote_begin() && Some(core) != own {
                    match self.mode {
                        // Sorted by core: a CPU's slots are adjacent.
                        CoreMode::PerCpu if cpus.last() != Some(&core) => cpus.push(core),
                        CoreMode::PerCpu => {}
                        CoreMode::PerThread => all = true,
                    }
                }
            }
            if !cpus.is_empty() {
                own = skip_own_cpu(&mut cpus);
            }
            if !barriers && (all || !cpus.is_empty()) {
                // Nothing was waited for and nothing touched: hand every slot back as it was.
                for (_, _, s) in &slots {
                    s.lock.remote_end(None);
                }
                return None;
            }
            let asked = if all || cpus.len() > TARGETED_BARRIERS {
                barrier::heavy();
                1
            } else {
                cpus.iter().for_each(|&cpu| barrier::heavy_on(cpu));
                cpus.len()
            };
            if asked != 0 {
                self.barriers.fetch_add(asked as u64, std::sync::atomic::Ordering::Relaxed);
            }
            for (_, _, s) in &slots {
                s.lock.remote_wait();
            }
            Some(Remote { remote: true, spin_mode: None, own, slots: held(slots), hold: None })
        } else {
            for (_, _, s) in &slots {
                s.lock.lock_spin();
            }
            Some(Remote { remote: false, spin_mode: None, own: None, slots: held(slots), hold: None })
        }
    }

    /// Takes every slot of every allocated core at once ([`PerCore::lock_remote`]), and for
    /// per-thread cores also keeps threads from claiming an index until the guard drops: a
    /// consistent cut over the whole `PerCore`, since every operation runs entirely under
    /// one slot's lock.
    pub fn lock_all(&self) -> Remote<'_, S> {
        let (hold, cores) = match &self.pool {
            Some(pool) => {
                let (next, hold) = pool.hold();
                (Some(hold), next)
            }
            None => (None, self.cpus.len()),
        };
        let mut remote = self.lock_remote((0..cores).flat_map(|c| (0..self.slots_per_core).map(move |i| (c, i))));
        remote.hold = hold;
        remote
    }

    /// Indices of the cores allocated so far, ascending.
    pub fn allocated_cores(&self) -> Vec<usize> {
        (0..self.cores()).filter(|&c| self.allocated(c)).collect()
    }

    /// Exclusive access to every allocated slot's state (for teardown and inspection).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, usize, &mut S)> {
        let cpus = self.cpus.iter_mut().enumerate();
        let threads = self.threads.iter_mut().enumerate().filter_map(|(c, t)| t.get_mut().map(|s| (c, s)));
        cpus.chain(threads).flat_map(|(c, slots)| {
            slots.iter_mut().enumerate().map(move |(i, s)| {
                let state = s.state.get_mut();
                // SAFETY: `&mut self` excludes every other access to every slot.
                (c, i, unsafe { &mut *std::ptr::from_mut(MutPtr::deref(&state)) })
            })
        })
    }
}

/// Under tracing, records a load of `entry`, an entry of a slot table (the heap arrays
/// that lead from a core index to its slots); nothing otherwise.
#[inline(always)]
fn trace_table<T>(entry: &T, label: &'static str) {
    #[cfg(percore_trace)]
    crate::primitive::trace::record(
        std::ptr::from_ref(entry).cast(),
        std::mem::size_of::<T>(),
        crate::primitive::trace::AccessKind::Load,
        label,
    );
    #[cfg(not(percore_trace))]
    let _ = (entry, label);
}

/// The most CPUs a remote acquisition of per-CPU slots interrupts one by one
/// ([`barrier::heavy_on`]); more take one barrier for every CPU running the process
/// ([`barrier::heavy`]). A targeted barrier is a system call and one interrupt, and the
/// other CPUs run on undisturbed (on 16 cores a barrier to all of them interrupts 15); the
/// kernel targets one CPU per call, so an acquisition that needs two pays one barrier to
/// all rather than two system calls in a row: never more than one per acquisition.
const TARGETED_BARRIERS: usize = 1;

/// Removes from `cpus`, the CPUs whose per-CPU slots a remote acquisition has asked their
/// owners to stay out of, the CPU the calling thread runs on once those requests are
/// visible: a restartable sequence runs on its slot's CPU from start to commit, so while
/// this thread runs there none is in progress; one that starts later on that CPU starts
/// after the context switch away from this thread, which orders this thread's requests
/// before it (it sees `req`); one that committed earlier made its `busy` visible to the
/// next thread on that CPU, this one (which then waits for it, `remote_wait`). Where CPU
/// numbers are simulated (loom, tracing), nothing is removed.
/// Returns the CPU removed, if any.
#[inline]
fn skip_own_cpu(cpus: &mut SmallVec<[usize; INLINE_SLOTS]>) -> Option<usize> {
    #[cfg(not(any(loom, percore_trace)))]
    {
        // The requests (`remote_begin`'s stores) before the CPU number is read.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        let me = current_cpu();
        let before = cpus.len();
        cpus.retain(|c| *c != me);
        (cpus.len() != before).then_some(me)
    }
    #[cfg(any(loom, percore_trace))]
    {
        let _ = cpus;
        None
    }
}

/// A slot entered by the calling thread; releases it on drop.
pub struct Entered<'a, S> {
    slot: &'a Slot<S>,
    taken: Taken,
    core: usize,
    /// Ended before unlocking.
    access: GuardAccess<S>,
}

impl<'a, S> Entered<'a, S> {
    /// The guard of `slot`, taken as `taken`, of core `core`.
    #[inline(always)]
    fn new(slot: &'a Slot<S>, taken: Taken, core: usize) -> Self {
        Entered { slot, taken, core, access: GuardAccess::start(&slot.state) }
    }

    /// The core entered (a CPU, or the thread's index; 0 for the shared per-thread index).
    #[inline(always)]
    pub fn core(&self) -> usize {
        self.core
    }

    /// The word this slot last published (see [`PerCore::published`]).
    #[inline(always)]
    pub fn published(&self) -> usize {
        self.slot.published.load(Ordering::Relaxed)
    }

    /// Publishes `value` for remote readers ([`PerCore::published`]); sequentially
    /// consistent, so publish only when the value changes.
    #[inline]
    pub fn publish(&self, value: usize) {
        self.slot.published.store(value, Ordering::SeqCst);
    }

    /// Publishes `value` for remote readers with a release store, which they may see only
    /// later than this call's return: for a value that tells them less to do than the one
    /// before (a reader that still sees the old one does more work, never less). Cheaper
    /// than [`Entered::publish`], whose store is a full barrier on x86-64.
    #[inline]
    pub fn publish_lazily(&self, value: usize) {
        self.slot.published.store(value, Ordering::Release);
    }

    /// This slot's low mark (see [`PerCore::low_mark`]).
    #[inline(always)]
    pub fn low_mark(&self) -> u64 {
        self.slot.low_mark.load(Ordering::Relaxed)
    }

    /// Sets this slot's low mark for remote readers ([`PerCore::low_mark`]); sequentially
    /// consistent (a full barrier on x86-64), so that a reader that still sees the old mark
    /// read it before anything this thread does after the call.
    #[inline]
    pub fn set_low_mark(&self, value: u64) {
        self.slot.low_mark.store(value, Ordering::SeqCst);
    }

    /// Clears this slot's low mark ([`NO_LOW_MARK`]) with a release store: a reader that
    /// still sees the old mark takes a lower bound than it needs, never a higher one, and
    /// one that sees none sees everything this thread did before.
    #[inline]
    pub fn clear_low_mark(&self) {
        self.slot.low_mark.store(NO_LOW_MARK, Ordering::Release);
    }
}

impl<S> Deref for Entered<'_, S> {
    type Target = S;
    #[inline(always)]
    fn deref(&self) -> &S {
        // SAFETY: the access started on the slot's state when the slot was entered, and the
        // guard holds the slot until drop, where the access ends.
        unsafe { self.access.shared(&self.slot.state) }
    }
}

impl<S> DerefMut for Entered<'_, S> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut S {
        // SAFETY: as in `deref`.
        unsafe { self.access.exclusive(&self.slot.state) }
    }
}

impl<S> Drop for Entered<'_, S> {
    #[inline]
    fn drop(&mut self) {
        self.access.end();
        self.slot.lock.unlock(self.taken);
    }
}

/// Slots a [`Remote`] holds without allocating: a synchronize takes one per core that
/// publishes the object, usually a few.
pub const INLINE_SLOTS: usize = 4;

/// A slot held by [`PerCore::lock_remote`]: its core, its index, the slot, the access.
type HeldSlot<'a, S> = (usize, usize, &'a Slot<S>, MutPtr<S>);

/// The slots a remote acquisition just locked, with their states opened for the guard.
fn held<'a, S>(
    slots: SmallVec<[(usize, usize, &'a Slot<S>); INLINE_SLOTS]>,
) -> SmallVec<[HeldSlot<'a, S>; INLINE_SLOTS]> {
    slots.into_iter().map(|(c, i, s)| (c, i, s, s.state.get_mut())).collect()
}

/// Slots taken by [`PerCore::lock_remote`], all held until dropped.
pub struct Remote<'a, S> {
    remote: bool,
    /// What to leave owner-protocol slots in ([`Remote::keep_spin_mode`]).
    spin_mode: Option<bool>,
    /// The core of the calling thread's own slots, taken without a barrier (its per-CPU
    /// slots, or its per-thread index), if any: spin mode would spare no later taker a
    /// barrier that this one paid, and would slow their owner (the spin lock on every
    /// entry), so [`Remote::keep_spin_mode`] does not put them in it.
    own: Option<usize>,
    slots: SmallVec<[HeldSlot<'a, S>; INLINE_SLOTS]>,
    /// [`PerCore::lock_all`] on per-thread cores: the index pool, released after the slots
    /// (fields drop after `drop` runs).
    hold: Option<threads::Hold<'a>>,
}

impl<S> Remote<'_, S> {
    /// Owner-protocol slots only: on release, leave every held slot in spin mode (`true`:
    /// the next remote acquisition needs no barrier, owners take the spin lock meanwhile)
    /// or return it to its owners (`false`); by default each stays as it was (see
    /// [`OwnerLock`]). A taker that expects to come back soon keeps spin mode. The
    /// calling thread's own slots (its CPU's, or its per-thread index), which it took
    /// without a barrier, are not put in spin mode: no later taker would be spared a
    /// barrier, and their owner would take the spin lock on every entry (one thread
    /// incrementing 16 counters and reading one every 100 µs: 60M increments/s with its
    /// slots in spin mode, 190M without).
    pub fn keep_spin_mode(&mut self, on: bool) {
        self.spin_mode = Some(on);
    }

    /// The held slots' states with their core and slot index, in ascending order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, usize, &mut S)> {
        self.slots.iter_mut().map(|(c, i, _, state)| {
            // SAFETY: every slot in `slots` is locked by this guard; `&mut self` makes each
            // state reachable only through the returned reference.
            (*c, *i, unsafe { &mut *std::ptr::from_mut(MutPtr::deref(state)) })
        })
    }

    /// Publishes `value` in the `i`-th held slot (ascending order, as [`Remote::iter_mut`]).
    ///
    /// # Panics
    /// If `i` is out of range.
    pub fn publish(&self, i: usize, value: usize) {
        self.slots[i].2.published.store(value, Ordering::SeqCst);
    }

    /// Clears the low mark of the `i`-th held slot (as [`Entered::clear_low_mark`]).
    ///
    /// # Panics
    /// If `i` is out of range.
    pub fn clear_low_mark(&self, i: usize) {
        self.slots[i].2.low_mark.store(NO_LOW_MARK, Ordering::Release);
    }

    /// Number of slots held.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no slot is held.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

impl<S> Drop for Remote<'_, S> {
    fn drop(&mut self) {
        for (core, _, slot, state) in self.slots.drain(..) {
            // End the access before unlocking (MutPtr has a Drop under loom).
            #[allow(clippy::drop_non_drop)]
            drop(state);
            if self.remote {
                let spin_mode = if Some(core) == self.own { self.spin_mode.filter(|on| !on) } else { self.spin_mode };
                slot.lock.remote_end(spin_mode);
            } else {
                slot.lock.unlock(Taken::Spin);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// `cores` cores of `mode` (per thread: `cores - 1` thread indices and the shared one).
    fn layout(mode: CoreMode, cores: usize) -> Layout {
        Layout::per_cpu().cpus(cores).max_threads((cores - 1).max(1)).with_mode(mode)
    }

    /// Two shared borrows of one entered slot may live at once (under Miri, a borrow that
    /// ends the other is undefined behaviour).
    #[test]
    fn shared_borrows_of_an_entered_slot_coexist() {
        for mode in [CoreMode::PerCpu, CoreMode::PerThread] {
            let pc = PerCore::new(layout(mode, 2), 1, true, |_, _| 7u64);
            let mut entered = pc.enter(0);
            *entered += 1;
            let (a, b) = (&*entered, &*entered);
            assert_eq!((*a, *b), (8, 8), "{mode:?}");
        }
    }

    #[test]
    fn local_entries_and_remote_takeovers_exclude_each_other() {
        for mode in [CoreMode::PerCpu, CoreMode::PerThread] {
            let pc = PerCore::new(layout(mode, 4), 2, true, |_, _| 0u64);
            const N: u64 = if cfg!(miri) { 100 } else { 100_000 };
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        for i in 0..N {
                            *pc.enter((i % 2) as usize) += 1;
                        }
                    });
                }
                s.spawn(|| {
                    for _ in 0..N / 100 {
                        let mut all = pc.lock_remote((0..4).flat_map(|c| [(c, 0), (c, 1)]));
                        for (_, _, v) in all.iter_mut() {
                            *v += 100;
                        }
                    }
                });
            });
            let mut pc = pc;
            let total: u64 = pc.iter_mut().map(|(_, _, v)| *v).sum();
            let allocated = (0..4).filter(|&c| c < 4).count() as u64;
            assert!(total >= 2 * N, "{mode:?}: {total}");
            // Every remote round added 100 to every allocated slot it held.
            assert_eq!((total - 2 * N) % 100, 0, "{mode:?}: {total} ({allocated} cores)");
        }
    }

    /// A thread pinned to `cpu` (where it can be) that enters `pc`'s slots 0 and 1 in turn,
    /// `n` times, adding 1 each time (the owner side of the remote-taker tests, whose
    /// remote sides add `1 << 32`).
    fn enter_pinned<'s>(s: &'s std::thread::Scope<'s, '_>, pc: &'s PerCore<u64>, cpu: usize, n: u64) {
        s.spawn(move || {
            let _ = ordo::cpu::pin_current_thread(cpu);
            for i in 0..n {
                *pc.enter((i % 2) as usize) += 1;
            }
        });
    }

    /// The owner entries counted in `pc`'s slots: the sum's low 32 bits (remote takers add
    /// above them).
    fn owner_entries(mut pc: PerCore<u64>) -> u64 {
        pc.iter_mut().map(|(_, _, v)| *v).sum::<u64>() & 0xffff_ffff
    }

    /// Remote takers of one CPU's slot at a time (the barrier aimed at that CPU) and of every
    /// slot (the process-wide barrier), two of each at once (sharing barriers), against
    /// owners entering their CPU's slots: no entry is lost or doubled.
    #[test]
    fn remote_takers_of_one_cpu_or_all_exclude_owners() {
        const N: u64 = if cfg!(miri) { 50 } else { 50_000 };
        const ROUNDS: u64 = N / 50;
        let cpus = ordo::cpu::allowed();
        let cores = ordo::cpu::possible();
        let pc = PerCore::new(layout(CoreMode::PerCpu, cores), 2, true, |_, _| 0u64);
        std::thread::scope(|s| {
            for t in 0..2 {
                enter_pinned(s, &pc, cpus[t % cpus.len()], N);
            }
            for r in 0..2 {
                let (pc, cpus) = (&pc, &cpus);
                s.spawn(move || {
                    for k in 0..ROUNDS {
                        let mut held = if (k + r) % 2 == 0 {
                            let cpu = cpus[(k as usize / 2) % cpus.len()];
                            pc.lock_remote([(cpu, 0), (cpu, 1)])
                        } else {
                            pc.lock_remote((0..cores).flat_map(|c| [(c, 0), (c, 1)]))
                        };
                        if k % 3 == 0 {
                            held.keep_spin_mode(k % 2 == 0);
                        }
                        for (_, _, v) in held.iter_mut() {
                            *v += 1 << 32;
                        }
                    }
                });
            }
        });
        assert_eq!(owner_entries(pc), 2 * N, "every owner entry counted once");
    }

    /// A remote taker that runs on the CPU whose slots it takes sends that CPU no barrier
    /// (`skip_own_cpu`): owners pinned to the same CPU, whose entries the scheduler
    /// interleaves with the taker's, and an owner on another CPU lose no entry.
    #[test]
    fn a_remote_taker_on_the_slots_cpu_excludes_owners_there() {
        const N: u64 = if cfg!(miri) { 50 } else { 100_000 };
        const ROUNDS: u64 = N / 20;
        let cpus = ordo::cpu::allowed();
        let cores = ordo::cpu::possible();
        let here = cpus[0];
        let there = cpus[cpus.len() - 1];
        let pc = PerCore::new(layout(CoreMode::PerCpu, cores), 2, true, |_, _| 0u64);
        std::thread::scope(|s| {
            for cpu in [here, here, there] {
                enter_pinned(s, &pc, cpu, N);
            }
            let pc = &pc;
            s.spawn(move || {
                let _ = ordo::cpu::pin_current_thread(here);
                for k in 0..ROUNDS {
                    let targets =
                        if k % 2 == 0 { vec![(here, 0), (here, 1)] } else { vec![(here, k as usize % 2), (there, 0)] };
                    let mut held = pc.lock_remote(targets);
                    for (_, _, v) in held.iter_mut() {
                        *v += 1 << 32;
                    }
                }
            });
        });
        assert_eq!(owner_entries(pc), 3 * N, "every owner entry counted once");
    }

    /// A remote taker of its own thread's slot sends that slot no barrier, so asking for
    /// spin mode leaves it with its owner (whose entries would otherwise take the spin
    /// lock, for no later taker's benefit); another thread taking the same slot, which
    /// pays the barrier, does leave it in spin mode.
    #[test]
    fn a_taker_leaves_its_own_slot_out_of_spin_mode() {
        let pc = PerCore::new(layout(CoreMode::PerThread, 4), 1, true, |_, _| 0u64);
        if !pc.owner_fast {
            eprintln!("skipped: no owner fast path here");
            return;
        }
        let core = pc.enter(0).core();
        let take = |pc: &PerCore<u64>| {
            let mut held = pc.lock_remote([(core, 0)]);
            held.keep_spin_mode(true);
            for (_, _, v) in held.iter_mut() {
                *v += 1;
            }
        };
        take(&pc);
        assert_eq!(pc.enter(0).taken, Taken::Owner, "its own taker left the slot to its owner");
        std::thread::scope(|s| {
            s.spawn(|| take(&pc));
        });
        assert_eq!(pc.enter(0).taken, Taken::Spin, "another thread's taker left it in spin mode");
        assert_eq!(*pc.enter(0), 2);
    }

    /// A taker that may not send a barrier gets nothing from owners on the owner protocol,
    /// and hands their slots back untouched (owners pinned to each CPU keep entering,
    /// and lose no entry), but takes slots that need none: its own CPU's, and, once a
    /// taker that sent a barrier left them in spin mode, the others'.
    #[test]
    fn a_taker_that_may_not_send_a_barrier_takes_only_what_needs_none() {
        const N: u64 = if cfg!(miri) { 50 } else { 100_000 };
        const ROUNDS: u64 = N / 20;
        let cpus = ordo::cpu::allowed();
        let cores = ordo::cpu::possible();
        let (here, there) = (cpus[0], cpus[cpus.len() - 1]);
        let pc = PerCore::new(layout(CoreMode::PerCpu, cores), 2, true, |_, _| 0u64);
        let (refused, taken) = std::thread::scope(|s| {
            for cpu in [here, there] {
                enter_pinned(s, &pc, cpu, N);
            }
            let pc = &pc;
            let taker = s.spawn(move || {
                let _ = ordo::cpu::pin_current_thread(here);
                let (mut refused, mut taken) = (0u64, 0u64);
                for k in 0..ROUNDS {
                    if k == ROUNDS / 2 {
                        pc.lock_remote([(there, 0)]).keep_spin_mode(true);
                    }
                    let mine = pc.try_lock_remote_without_barrier([(here, 0)]);
                    // (Under tracing, CPU numbers are simulated: no CPU counts as the caller's.)
                    assert!(mine.is_some() || cfg!(percore_trace), "the caller's own CPU needs no barrier");
                    drop(mine);
                    match pc.try_lock_remote_without_barrier([(here, 0), (there, 0)]) {
                        Some(mut held) => {
                            taken += 1;
                            for (_, _, v) in held.iter_mut() {
                                *v += 1 << 32;
                            }
                        }
                        None => refused += 1,
                    }
                }
                (refused, taken)
            });
            taker.join().unwrap()
        });
        let (owner_fast, barriers) = (pc.owner_fast, pc.barriers());
        assert_eq!(owner_entries(pc), 2 * N, "every owner entry counted once");
        if owner_fast && here != there && !cfg!(miri) && !cfg!(percore_trace) {
            assert!(refused > 0, "another CPU's owner-protocol slot needs a barrier");
            assert!(taken > 0, "a slot in spin mode needs none");
            assert_eq!(barriers, 1, "only the taker that put the slot in spin mode sent one");
        }
    }

    /// A per-core sum that folds: a count and a value at the offsets `Fold` names.
    #[derive(Default)]
    #[repr(C)]
    struct Sum {
        count: u32,
        value: i64,
    }

    // SAFETY: the offsets are those of the `u32` count and the `i64` value, which `fold`
    // updates as the sequence does; the tests publish a key only for slots holding a sum.
    unsafe impl Fold for Sum {
        const COUNT: usize = std::mem::offset_of!(Sum, count);
        const VALUE: usize = std::mem::offset_of!(Sum, value);

        fn fold(&mut self, delta: i64) -> u32 {
            self.count = self.count.wrapping_add(1);
            self.value = self.value.wrapping_add(delta);
            self.count
        }
    }

    /// The key the tests publish.
    const KEY: usize = 0x1000;

    /// Per-thread cores fold into the calling thread's own slot when it publishes the key,
    /// and decline, doing nothing, for another key or a slot beyond the core's (on the
    /// owner protocol, and through an entry where there is no `membarrier`); on the owner
    /// protocol a fold also declines for a slot the calling thread holds.
    #[test]
    fn per_thread_folds_apply_to_the_callers_slot_that_publishes_the_key() {
        let pc = PerCore::new(layout(CoreMode::PerThread, 4), 2, true, |_, _| Sum::default());
        let n = if cfg!(miri) { 20 } else { 10_000 };
        // Each claims its index before any exits, so that each has one of its own (an
        // exited thread's index goes to the next thread, with its slots as they were).
        let claimed = std::sync::Barrier::new(3);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    drop(pc.enter(0));
                    claimed.wait();
                    assert_eq!(pc.fold(1, KEY, 5), None, "nothing published yet");
                    pc.enter(1).publish(KEY);
                    for i in 1..=n {
                        assert_eq!(pc.fold(1, KEY, 2), Some(i));
                    }
                    assert_eq!(pc.fold(1, KEY + 1, 2), None, "another key");
                    assert_eq!(pc.fold(2, KEY, 2), None, "a slot beyond the core's");
                    if pc.owner_fast_path() {
                        let held = pc.enter(1);
                        assert_eq!(pc.fold(1, KEY, 2), None, "a slot this thread holds");
                        drop(held);
                    }
                });
            }
        });
        let mut all = pc.lock_all();
        let (count, value) = all.iter_mut().fold((0, 0), |(c, v), (_, _, s)| (c + s.count, v + s.value));
        assert_eq!((count, value), (3 * n, 3 * i64::from(n) * 2));
    }

    /// Per-CPU folds (the restartable sequence where the platform has it) from more threads
    /// than CPUs, unpinned, while another thread keeps taking every slot remotely: each
    /// update lands exactly once, through the fold or, where it declines (the slot held
    /// remotely or publishing nothing yet), through an entry. The count may count an
    /// update twice (a sequence aborted after the count's increment), never less.
    #[test]
    fn per_cpu_folds_from_migrating_threads_against_remote_takers_lose_nothing() {
        for rseq in [true, false] {
            let pc = PerCore::new(layout(CoreMode::PerCpu, 4), 2, rseq, |_, _| Sum::default());
            let n: u32 = if cfg!(miri) { 20 } else { 1_000_000 };
            let threads = 6;
            let (count, value) = against_a_remote_taker(&pc, threads, n, || {
                if pc.fold(1, KEY, 3).is_none() {
                    let mut e = pc.enter(1);
                    if e.published() != KEY {
                        e.publish(KEY);
                    }
                    e.fold(3);
                }
            });
            assert_eq!(value, i64::from(n) * threads as i64 * 3, "rseq {rseq}: an update was lost or doubled");
            assert!(count >= n * threads as u32, "rseq {rseq}: {count} counted for {} updates", n * threads as u32);
        }
    }

    /// Runs `update` `n` times on each of `threads` unpinned threads while another thread
    /// keeps taking every slot remotely; returns the slots' counts and values, summed.
    fn against_a_remote_taker(pc: &PerCore<Sum>, threads: usize, n: u32, update: impl Fn() + Sync) -> (u32, i64) {
        let done = AtomicUsize::new(0, "test.done");
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    (0..n).for_each(|_| update());
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            s.spawn(|| {
                while done.load(Ordering::SeqCst) < threads {
                    drop(pc.lock_all());
                    std::thread::yield_now();
                }
            });
        });
        let mut all = pc.lock_all();
        all.iter_mut().fold((0, 0), |(c, v), (_, _, s)| (c + s.count, v + s.value))
    }

    /// `try_enter` enters the calling core's slot where that takes no call (per-CPU slots
    /// on the restartable sequence or the spin lock, a per-thread slot of a thread with its
    /// index cached), and declines otherwise: a thread with no index yet, a slot this
    /// thread holds, an index out of range. From more threads than CPUs, unpinned, against
    /// a thread that keeps taking every slot remotely, every update made through it or,
    /// where it declines, through an entry lands exactly once.
    #[test]
    fn try_enter_takes_only_the_callers_slot_and_loses_nothing() {
        let pc = PerCore::new(layout(CoreMode::PerThread, 4), 2, true, |_, _| Sum::default());
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(pc.try_enter(1).is_none(), "no index claimed yet");
                let core = pc.enter(0).core();
                let Some(held) = pc.try_enter(1) else {
                    assert!(!pc.owner_fast_path(), "the owner protocol enters the thread's own slot");
                    return;
                };
                assert_eq!(held.core(), core, "the calling thread's own slot");
                assert!(pc.try_enter(1).is_none(), "a slot this thread holds");
                drop(held);
                assert!(pc.try_enter(2).is_none(), "a slot beyond the core's");
                assert!(pc.try_enter(1).is_some(), "released");
            });
        });
        for rseq in [true, false] {
            let pc = PerCore::new(layout(CoreMode::PerCpu, 4), 2, rseq, |_, _| Sum::default());
            let n: u32 = if cfg!(miri) { 20 } else { 300_000 };
            let threads = 6;
            assert!(pc.try_enter(2).is_none(), "a slot beyond the core's");
            let direct = AtomicUsize::new(0, "test.direct");
            let (count, value) = against_a_remote_taker(&pc, threads, n, || match pc.try_enter(1) {
                Some(mut e) => {
                    e.fold(3);
                    direct.fetch_add(1, Ordering::Relaxed);
                }
                None => {
                    pc.enter(1).fold(3);
                }
            });
            assert_eq!(value, i64::from(n) * threads as i64 * 3, "rseq {rseq}: an update was lost or doubled");
            assert_eq!(count, n * threads as u32, "rseq {rseq}: {count} counted");
            assert!(direct.load(Ordering::Relaxed) > 0, "rseq {rseq}: never entered without a call");
        }
    }

    /// `enter_locked` leaves the slots it enters in spin mode for good: from more threads
    /// than CPUs (and, per thread, than thread indices: some share index 0), unpinned,
    /// against a thread that keeps taking every slot remotely, every update lands exactly
    /// once, and afterwards (each thread having entered more than `SPIN_MODE_ENTRIES`
    /// times, which would end spin mode for plain entries) taking the slots they entered
    /// sends no barrier.
    #[test]
    fn enter_locked_leaves_the_slot_in_spin_mode_and_loses_nothing() {
        for (mode, rseq) in [(CoreMode::PerCpu, true), (CoreMode::PerCpu, false), (CoreMode::PerThread, true)] {
            let pc = PerCore::new(layout(mode, 4), 2, rseq, |_, _| Sum::default());
            let n: u32 = if cfg!(miri) { 20 } else { 3 * SPIN_MODE_ENTRIES as u32 };
            let threads = 6;
            let entered = AtomicUsize::new(0, "test.entered");
            let (count, value) = against_a_remote_taker(&pc, threads, n, || {
                let mut e = pc.enter_locked(1);
                e.fold(3);
                entered.fetch_or(1 << e.core(), Ordering::Relaxed);
            });
            assert_eq!(
                value,
                i64::from(n) * threads as i64 * 3,
                "{mode:?}, rseq {rseq}: an update was lost or doubled"
            );
            assert_eq!(count, n * threads as u32, "{mode:?}, rseq {rseq}: {count} counted");
            let cores = entered.load(Ordering::Relaxed);
            let before = pc.barriers();
            drop(pc.lock_remote((0..pc.cores()).filter(|c| cores & (1 << c) != 0).map(|c| (c, 1))));
            assert_eq!(pc.barriers(), before, "{mode:?}, rseq {rseq}: a slot entered locked needs no barrier");
        }
    }

    /// Under tracing, a thread on a CPU beyond the restartable-sequence table cannot run the
    /// sequence: it takes its slot remotely, paying one barrier, and leaves it in spin
    /// mode, so that its next entries pay none; the updates all land.
    #[cfg(percore_trace)]
    #[test]
    fn a_thread_outside_the_sequence_pays_one_barrier() {
        let pc = PerCore::new(layout(CoreMode::PerCpu, 2), 1, true, |_, _| Sum::default());
        assert!(pc.owner_fast_path(), "the stand-in table");
        std::thread::scope(|s| {
            s.spawn(|| {
                crate::primitive::set_current_cpu(5);
                for _ in 0..3 {
                    pc.enter(0).fold(2);
                }
            });
        });
        assert_eq!(pc.barriers(), 1, "one barrier, then spin mode");
        let mut all = pc.lock_all();
        assert_eq!(all.iter_mut().map(|(_, _, s)| s.value).sum::<i64>(), 6);
    }

    /// A per-thread layout's shared index has no owner, so its slots are taken with no
    /// barrier: by the threads beyond the limit that enter them, and by remote takers.
    #[test]
    fn the_shared_per_thread_index_takes_no_barrier() {
        let pc = PerCore::new(layout(CoreMode::PerThread, 2), 1, true, |_, _| Sum::default());
        let (claimed, wait_claimed) = std::sync::mpsc::channel::<()>();
        let (done, wait_done) = std::sync::mpsc::channel::<()>();
        let pc = &pc;
        std::thread::scope(|s| {
            // Holds the one thread index while the others run.
            s.spawn(move || {
                drop(pc.enter(0));
                claimed.send(()).unwrap();
                wait_done.recv().unwrap();
            });
            wait_claimed.recv().unwrap();
            s.spawn(move || {
                let mut e = pc.enter(0);
                assert_eq!(e.core(), 0, "beyond the limit: the shared index");
                e.fold(1);
            })
            .join()
            .unwrap();
            let mut taken = pc.lock_remote([(0, 0)]);
            let sum = taken.iter_mut().map(|(_, _, s)| s.value).sum::<i64>();
            drop(taken);
            // Before any assertion: the first thread waits for it.
            done.send(()).unwrap();
            assert_eq!(sum, 1);
        });
        assert_eq!(pc.barriers(), 0, "the shared index is in spin mode for good");
    }

    /// While a remote thread holds a per-thread slot, its owner's fold declines (the
    /// caller then enters the slot, and waits); once the slot is released, it folds again.
    #[test]
    fn a_per_thread_fold_declines_while_a_remote_thread_holds_the_slot() {
        let pc = PerCore::new(layout(CoreMode::PerThread, 4), 1, true, |_, _| Sum::default());
        if !pc.owner_fast_path() {
            eprintln!("skipped: no owner fast path here");
            return;
        }
        let (core_tx, core_rx) = std::sync::mpsc::channel();
        let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let pc = &pc;
        std::thread::scope(|s| {
            s.spawn(move || {
                let e = pc.enter(0);
                e.publish(KEY);
                core_tx.send(e.core()).unwrap();
                drop(e);
                held_rx.recv().unwrap();
                assert_eq!(pc.fold(0, KEY, 1), None, "the slot is held remotely");
                done_tx.send(()).unwrap();
                held_rx.recv().unwrap();
                assert_eq!(pc.fold(0, KEY, 1), Some(1), "released");
            });
            let core = core_rx.recv().unwrap();
            let mut remote = pc.lock_remote([(core, 0)]);
            held_tx.send(()).unwrap();
            done_rx.recv().unwrap();
            assert_eq!(remote.iter_mut().map(|(_, _, s)| s.value).sum::<i64>(), 0, "the declined fold did nothing");
            drop(remote);
            held_tx.send(()).unwrap();
        });
        assert_eq!(pc.lock_all().iter_mut().map(|(_, _, s)| s.value).sum::<i64>(), 1);
    }

    #[test]
    fn states_are_built_per_slot_and_threads_share_index_zero_beyond_capacity() {
        let pc = PerCore::new(layout(CoreMode::PerThread, 2), 1, true, |core, _| core);
        let seen = std::thread::scope(|s| {
            let a = s.spawn(|| {
                let e = pc.enter(0);
                (e.core(), *e)
            });
            a.join().unwrap()
        });
        assert_eq!(seen, (1, 1), "the first thread claims index 1, whose state says so");
        assert!(pc.allocated(0) && pc.allocated(1));
        assert_eq!(pc.cores(), 2);
        assert!(pc.footprint() > 0);
    }

    /// Under tracing, a per-CPU entry takes the restartable sequence's stand-in (where
    /// `membarrier` exists), which records the sequence's accesses in its order: the
    /// descriptor store and CPU-number load in the thread's own area, the slot table, the
    /// slot's flags and the commit; the release is the owner's store. A remote taker then
    /// uses the owner protocol (no spin lock of the entered slot is touched by the owner).
    #[cfg(percore_trace)]
    #[test]
    fn a_traced_per_cpu_entry_records_the_restartable_sequence() {
        use crate::primitive::set_current_cpu;
        use crate::primitive::trace::{AccessKind::*, Session};
        if !per_cpu_fast_path() {
            eprintln!("skipped: no membarrier, so per-CPU slots take their spin lock");
            return;
        }
        let pc = PerCore::new(layout(CoreMode::PerCpu, 3), 2, true, |_, _| 0u64);
        assert!(pc.owner_fast_path());
        std::thread::scope(|s| {
            s.spawn(|| {
                set_current_cpu(1);
                let session = Session::start().unwrap();
                {
                    let mut e = pc.enter(1);
                    *e += 1;
                    assert_eq!(e.core(), 1);
                }
                let log = session.finish();
                let seen: Vec<_> = log.iter().map(|a| (a.label, a.kind, a.size)).collect();
                assert_eq!(
                    seen,
                    [
                        ("rseq.rseq_cs", Store, 8),
                        ("rseq.cpu_id", Load, 4),
                        ("PerCore.rseq_table", Load, 8),
                        ("Slot.busy", Load, 1),
                        ("Slot.req", Load, 1),
                        ("Slot.busy", Store, 1),
                        ("Slot.data", CellWrite, 8),
                        ("Slot.busy", Store, 1),
                    ]
                );
                // The flags are those of slot 1 of CPU 1, and the table entry is CPU 1's.
                let slot = std::ptr::from_ref(&*pc.cpus[1][1]) as usize;
                assert!((slot..slot + PerCore::<u64>::SLOT_BYTES).contains(&log[3].addr));
                assert_eq!(log[3].addr, log[5].addr);
                let table = pc.rseq.as_ref().unwrap();
                assert_eq!(log[2].addr, std::ptr::from_ref(&table.bases[1]) as usize);
            });
        });
        let mut remote = pc.lock_remote([(1, 1)]);
        assert_eq!(remote.iter_mut().map(|(_, _, v)| *v).collect::<Vec<_>>(), [1]);
    }

    #[test]
    #[should_panic(expected = "slot 3 of 2")]
    fn an_out_of_range_slot_is_rejected() {
        let pc = PerCore::new(layout(CoreMode::PerCpu, 1), 2, false, |_, _| ());
        let _ = pc.enter(3);
    }
}

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
