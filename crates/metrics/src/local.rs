//! What each thread keeps per recorder: one `u64` cell per counter, written by the thread
//! alone with a plain load and store, and a cache of the handles it has been handed.
//!
//! **Counters.** This is the per-core value of 000 Figure 8 with threads as the cores, cut to
//! what a counter needs. An increment loads the thread's state for this recorder from a
//! one-entry thread-local cache (recorder id and pointers), finds the counter's cell and
//! adds to it: no lock, no atomic read-modify-write, no line another thread writes. It is
//! the fastest path measured here: the general per-thread slot of
//! [`oplog_percore::PerCore`] costs about 4 ns per entry on the development machine (an
//! owner flag set and cleared, a request flag checked), where this costs about 1.5 ns; so
//! counters, and the handle cache every `counter!` consults, keep their own per-thread
//! state, and gauges and histograms use `PerCore`.
//!
//! A thread's cells are a list of chunks (chunk `k` holds `64 << k` cells, on cache lines of
//! their own), allocated by the owner on first use of a counter index beyond them and
//! published with a release store, so readers walk them without a lock. The recorder keeps
//! every live thread's cells and, per counter, a `base`: what exited threads counted and
//! what `absolute` added. A thread that exits folds its cells into `base` and leaves the
//! list (unless a handle still holds its cells, below), under the recorder's lock, which
//! readers take too: a read sees each thread's counts either in its cells or in `base`,
//! never both, never neither.
//!
//! **Handles.** The handle a thread is handed for a counter keeps that thread's cell and
//! the thread's *identity*: its thread pointer (`fs:0` on x86-64, `tpidr_el0` on aarch64:
//! one instruction, where a Rust thread-local costs a call-like sequence and a stack frame
//! in every caller, since library code is compiled for the general-dynamic TLS model), or
//! the address of a thread-local elsewhere. No two live threads share it. An increment
//! through the handle compares it with the caller's and adds to the cell (a plain load and
//! store); on another thread it goes through that thread's own cell, as `counter!` does.
//! A thread's identity may be reused once it has exited, by one new thread at a time: such
//! a thread then adds to the exited thread's cell through the old handle, still the only
//! writer. So a table leaves the recorder's list (its counts folded into `base`) only when
//! neither its thread nor any handle holds it: at the thread's exit, or at the drop of the
//! last handle that outlived it. (Two threads, each incrementing its own held handle in a
//! loop, 2-core host, 2026-11-27: 2.3–2.8 ns per increment with a thread-local check,
//! 1.8–2.3 ns with the thread pointer, against 1.8–2.1 ns for a handle that adds to a
//! cell with no check; `oplog-bench metrics`' `oplog-metrics-handle` at two threads went
//! from 0.55–0.7x `fast-counter` to 0.8–1.2x.)
//!
//! Reads sum cells that may be changing: a read returns at least every increment that
//! completed before it began and at most those that began before it ended (each cell only
//! grows, modulo wrapping); once writers are done (joined) it is exact.
//!
//! **Handle caches.** `counter!("name")` calls `register_counter` on every use, and a
//! `metrics::Counter` is an `Arc`: handing one out clones it, dropping it decrements its
//! count. The thread's cache maps each key to an `Arc` handle of its own, so the count it
//! writes is on a line only this thread touches (unless the thread gives the handle away).
//! A lookup goes by the hash the key carries, then compares the name's and labels' addresses
//! (the macro's key is the same static on every call) before their text. The cache holds the
//! recorder's storage: a recorder whose last clone is dropped is marked closed, and each
//! thread lets go of its cache for it when it next registers a key with another recorder,
//! or exits.

use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::storage::HandleCache;

/// Cells in chunk 0; chunk `k` has `FIRST << k`.
const FIRST: usize = 64;

/// Chunks per table: `FIRST * (2^CHUNKS - 1)` counters, more than any index can reach.
const CHUNKS: usize = 48;

/// Cells per cache line of a chunk.
const LINE_CELLS: usize = 16;

/// A chunk's cache line (two 64-byte lines: adjacent-line prefetch pairs them).
#[repr(align(128))]
#[derive(Default)]
struct Line([AtomicU64; LINE_CELLS]);

/// Chunk and offset of counter `index`.
#[inline(always)]
fn locate(index: usize) -> (usize, usize) {
    let j = index / FIRST + 1;
    let k = (usize::BITS - 1 - j.leading_zeros()) as usize;
    (k, index - FIRST * ((1 << k) - 1))
}

/// One thread's cells of one recorder.
struct Table {
    chunks: [AtomicPtr<Line>; CHUNKS],
}

impl Table {
    fn new() -> Self {
        Self { chunks: std::array::from_fn(|_| AtomicPtr::default()) }
    }

    /// The cell of `index` if its chunk exists.
    #[inline(always)]
    fn get(&self, index: usize) -> Option<&AtomicU64> {
        let (k, offset) = locate(index);
        let chunk = self.chunks.get(k)?.load(Ordering::Acquire);
        if chunk.is_null() {
            return None;
        }
        // SAFETY: a non-null chunk pointer was published (release store, acquire load) by
        // `cell` after the chunk of `(FIRST << k) / LINE_CELLS` lines was initialized; it is
        // freed only when the table drops, and `offset < FIRST << k`.
        Some(unsafe { &(*chunk.add(offset / LINE_CELLS)).0[offset % LINE_CELLS] })
    }

    /// The cell of `index`, allocating its chunk. Only the table's owner thread calls this.
    #[inline(always)]
    fn cell(&self, index: usize) -> &AtomicU64 {
        match self.get(index) {
            Some(c) => c,
            None => self.allocate(index),
        }
    }

    #[cold]
    #[inline(never)]
    fn allocate(&self, index: usize) -> &AtomicU64 {
        let (k, _) = locate(index);
        let lines: Box<[Line]> = (0..(FIRST << k) / LINE_CELLS).map(|_| Line::default()).collect();
        self.chunks[k].store(Box::into_raw(lines).cast::<Line>(), Ordering::Release);
        self.get(index).expect("the chunk was just published")
    }

    /// (index, value) of every cell, by reading each once.
    fn values(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..CHUNKS).flat_map(move |k| {
            let chunk = self.chunks[k].load(Ordering::Acquire);
            let base = FIRST * ((1 << k) - 1);
            let len = if chunk.is_null() { 0 } else { FIRST << k };
            (0..len).map(move |o| {
                // SAFETY: as in `get`: a published chunk of `len` cells.
                let v = unsafe { (*chunk.add(o / LINE_CELLS)).0[o % LINE_CELLS].load(Ordering::Relaxed) };
                (base + o, v)
            })
        })
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        for (k, chunk) in self.chunks.iter_mut().enumerate() {
            let p = *chunk.get_mut();
            if !p.is_null() {
                let len = (FIRST << k) / LINE_CELLS;
                // SAFETY: `p` came from `Box::into_raw` of a boxed slice of `len` lines in
                // `allocate`, and is freed only here.
                drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, len)) });
            }
        }
    }
}

/// What the recorder keeps under its lock.
#[derive(Default)]
struct Shared {
    /// Every table a live thread or a handle holds (module docs, "Handles").
    live: Vec<Arc<Table>>,
    /// Per counter: what exited threads counted, plus what `absolute` added.
    base: Vec<u64>,
}

impl Shared {
    /// Drops one holder's reference to `table` (its thread's registration, or a handle):
    /// the last holder (nothing else holds it but the list) folds its counts into the base
    /// and drops it from the list. Nobody can write its cells then: its thread has exited
    /// or let go of this recorder, and no handle keeps them. Under the lock, so that the
    /// count of holders it reads is the count.
    fn let_go(&mut self, table: Arc<Table>) {
        if Arc::strong_count(&table) != 2 {
            return;
        }
        for (i, v) in table.values() {
            if v != 0 {
                let base = at(&mut self.base, i);
                *base = base.wrapping_add(v);
            }
        }
        self.live.retain(|t| !Arc::ptr_eq(t, &table));
    }
}

/// [`Shared::let_go`] of `table` in `recorded`, if the recorder still exists.
fn let_go(recorded: &Weak<Recorded>, table: Arc<Table>) {
    if let Some(recorded) = recorded.upgrade() {
        lock(&recorded.shared).let_go(table);
    }
}

/// The recorder's side of its threads' state.
#[derive(Default)]
struct Recorded {
    shared: Mutex<Shared>,
    /// Set when the recorder's last clone is dropped: threads drop their caches for it.
    closed: AtomicBool,
}

/// A word no two live threads share: the thread pointer where one instruction reads it,
/// else the address of a thread-local (module docs, "Handles"). Never 0.
#[inline(always)]
fn this_thread() -> usize {
    #[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
    {
        let tp: usize;
        // SAFETY: on x86-64 Linux (glibc and musl alike, as the TLS ABI requires) the word
        // at `fs:0` is the thread pointer itself, which the thread's control block stores
        // there for its whole life; reading it has no other effect.
        unsafe {
            std::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags, pure));
        }
        tp
    }
    #[cfg(all(target_arch = "aarch64", target_os = "linux", not(miri)))]
    {
        let tp: usize;
        // SAFETY: `tpidr_el0` holds the thread pointer, which the C library sets when the
        // thread starts and never changes; reading it has no other effect.
        unsafe {
            std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nomem, nostack, preserves_flags, pure));
        }
        tp
    }
    #[cfg(not(all(any(target_arch = "x86_64", target_arch = "aarch64"), target_os = "linux", not(miri))))]
    {
        thread_local! {
            static ME: u8 = const { 0 };
        }
        ME.with(|me| std::ptr::from_ref(me).addr())
    }
}

/// A thread's cell of one counter, kept by the handle that thread was handed: while the
/// handle is used on that thread, an increment compares the thread's identity and adds,
/// with no lookup and no thread-local (module docs, "Handles").
pub(crate) struct Owned {
    /// The identity ([`this_thread`]) of the thread whose cell this is; 0, which no thread
    /// has, if there is none (a handle made while the thread's locals were torn down).
    owner: usize,
    /// The owner's cell of the counter; dangling, never used, if there is no owner.
    cell: NonNull<AtomicU64>,
    /// The owner's table, which holds the cell, and its recorder; taken by `drop`.
    table: Option<(Arc<Table>, Weak<Recorded>)>,
}

// SAFETY: `cell` points into the table held here, whose chunks live as long as it. It is
// written only by `try_add` on the thread whose identity is `owner`: while the table's
// thread lives, that thread, which also writes the cell through its CURRENT table; after
// it exits, at most one thread at a time that reuses its identity (module docs, "Handles").
// Everyone else reads it atomically. So sharing or sending an `Owned` allows no data race.
unsafe impl Send for Owned {}
// SAFETY: as for `Send`.
unsafe impl Sync for Owned {}

impl Owned {
    /// Adds `value` if the calling thread is the cell's owner (or the one thread that now
    /// has its identity); `false` otherwise.
    #[inline(always)]
    pub(crate) fn try_add(&self, value: u64) -> bool {
        if this_thread() != self.owner {
            return false;
        }
        // SAFETY: see the `Send` impl: this thread is the cell's only writer, and the table
        // is alive (`owner` is 0, which no thread has, when there is none).
        let cell = unsafe { self.cell.as_ref() };
        cell.store(cell.load(Ordering::Relaxed).wrapping_add(value), Ordering::Relaxed);
        true
    }
}

impl Drop for Owned {
    /// The last holder of an exited thread's table folds it into the base.
    fn drop(&mut self) {
        if let Some((table, recorded)) = self.table.take() {
            let_go(&recorded, table);
        }
    }
}

/// The per-thread state of one recorder (see the module docs).
pub(crate) struct Local {
    /// Unique per `Local`, never reused: the thread-local cache's key.
    id: u64,
    recorded: Arc<Recorded>,
}

/// Source of [`Local::id`]s (0 means none).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A thread's state for one recorder, and the recorder's side to fold it into.
struct Registration {
    id: u64,
    /// Dropped by `drop`, under the recorder's lock.
    table: ManuallyDrop<Arc<Table>>,
    /// Only this thread touches it, through [`Current::cache`] or here.
    cache: Box<HandleCache>,
    recorded: Weak<Recorded>,
}

impl Registration {
    fn closed(&self) -> bool {
        self.recorded.upgrade().is_none_or(|r| r.closed.load(Ordering::Relaxed))
    }
}

/// The last recorder this thread used: its id, this thread's cells and cache for it.
#[derive(Clone, Copy)]
struct Current {
    id: u64,
    table: *const Table,
    cache: *mut HandleCache,
}

impl Current {
    const NONE: Current = Current { id: 0, table: std::ptr::null(), cache: std::ptr::null_mut() };
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Forget the fast path first: nothing on this thread may write the table after its
        // counts moved to `base`.
        let _ = CURRENT.try_with(|c| {
            if c.get().id == self.id {
                c.set(Current::NONE);
            }
        });
        // The cache's handles first: those no one else holds let go of the table.
        drop(std::mem::take(&mut self.cache));
        // SAFETY: taken once, here, and never used after: the registration is being dropped.
        // If a handle still holds the table, its last drop folds it.
        let_go(&self.recorded, unsafe { ManuallyDrop::take(&mut self.table) });
    }
}

thread_local! {
    /// The last recorder this thread used.
    static CURRENT: Cell<Current> = const { Cell::new(Current::NONE) };
    /// This thread's state, one per recorder it has used.
    static TABLES: RefCell<Vec<Registration>> = const { RefCell::new(Vec::new()) };
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `v[i]`, growing `v` with zeros to reach it.
fn at(v: &mut Vec<u64>, i: usize) -> &mut u64 {
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

impl Local {
    pub(crate) fn new() -> Self {
        Self { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), recorded: Arc::default() }
    }

    /// This thread's state for this recorder, registering it on first use; `None` while the
    /// thread's locals are being torn down.
    #[inline(always)]
    fn current(&self) -> Option<Current> {
        let current = CURRENT.with(Cell::get);
        if current.id == self.id { Some(current) } else { self.current_slow() }
    }

    #[cold]
    #[inline(never)]
    fn current_slow(&self) -> Option<Current> {
        let mut dropped = Vec::new();
        let current = TABLES
            .try_with(|tables| {
                let mut tables = tables.borrow_mut();
                let position = match tables.iter().position(|r| r.id == self.id) {
                    Some(i) => i,
                    None => {
                        // Let go of the state of recorders that are gone or closed (dropped
                        // after this borrow ends: their caches hold handles).
                        let (keep, gone): (Vec<_>, Vec<_>) = tables.drain(..).partition(|r| !r.closed());
                        *tables = keep;
                        dropped = gone;
                        let table = Arc::new(Table::new());
                        lock(&self.recorded.shared).live.push(table.clone());
                        tables.push(Registration {
                            id: self.id,
                            table: ManuallyDrop::new(table),
                            cache: Box::default(),
                            recorded: Arc::downgrade(&self.recorded),
                        });
                        tables.len() - 1
                    }
                };
                let r = &mut tables[position];
                let current = Current { id: self.id, table: Arc::as_ptr(&r.table), cache: &mut *r.cache };
                CURRENT.with(|c| c.set(current));
                current
            })
            .ok();
        drop(dropped);
        current
    }

    /// Adds `value` (wrapping) to counter `index` on behalf of the calling thread.
    #[inline(always)]
    pub(crate) fn add(&self, index: usize, value: u64) {
        match self.current() {
            Some(current) => {
                // SAFETY: `current` is this thread's state for this recorder (ids are never
                // reused), kept alive by its registration in TABLES, which clears CURRENT
                // before it lets the table go.
                let cell = unsafe { &*current.table }.cell(index);
                // Only this thread writes the cell: a plain load and store.
                cell.store(cell.load(Ordering::Relaxed).wrapping_add(value), Ordering::Relaxed);
            }
            None => self.add_to_base(index, value),
        }
    }

    /// The calling thread's cell of counter `index`, for a handle this thread is handed
    /// ([`Owned`]); one with no owner while the thread's locals are being torn down.
    pub(crate) fn owned(&self, index: usize) -> Owned {
        let Some(current) = self.current() else {
            return Owned { owner: 0, cell: NonNull::dangling(), table: None };
        };
        // SAFETY: `current.table` came from `Arc::as_ptr` of the table its registration in
        // TABLES holds, so the count is at least 1 here; this adds the reference returned.
        let table = unsafe {
            Arc::increment_strong_count(current.table);
            Arc::from_raw(current.table)
        };
        let cell = NonNull::from(table.cell(index));
        Owned { owner: this_thread(), cell, table: Some((table, Arc::downgrade(&self.recorded))) }
    }

    /// Counts in the base, under the lock (a thread whose locals are being torn down).
    #[cold]
    fn add_to_base(&self, index: usize, value: u64) {
        let mut shared = lock(&self.recorded.shared);
        let base = at(&mut shared.base, index);
        *base = base.wrapping_add(value);
    }

    /// Runs `f` on this thread's handle cache for this recorder, or returns `None` while the
    /// thread's locals are being torn down. `f` must not call back into this module (it
    /// only looks up and clones; anything it would drop is returned and dropped after).
    #[inline(always)]
    pub(crate) fn with_cache<R>(&self, f: impl FnOnce(&mut HandleCache) -> R) -> Option<R> {
        let current = self.current()?;
        // SAFETY: as in `add`; the cache is only ever reached from its own thread, through
        // CURRENT or its registration, and `f` does not re-enter (the caller's contract), so
        // this is the only reference to it.
        Some(f(unsafe { &mut *current.cache }))
    }

    /// Marks the recorder closed: threads let go of their caches for it (see the module
    /// docs); this thread does at once.
    pub(crate) fn close(&self) {
        self.recorded.closed.store(true, Ordering::Relaxed);
        let mine = TABLES.try_with(|tables| {
            let mut tables = tables.borrow_mut();
            let i = tables.iter().position(|r| r.id == self.id)?;
            Some(tables.swap_remove(i))
        });
        // Dropped after the borrow: its cache holds handles.
        drop(mine);
    }

    /// The sum of counter `index` over `shared`.
    fn total(shared: &Shared, index: usize) -> u64 {
        let cells = shared.live.iter().filter_map(|t| t.get(index)).map(|c| c.load(Ordering::Relaxed));
        cells.fold(shared.base.get(index).copied().unwrap_or(0), u64::wrapping_add)
    }

    /// The value of counter `index`.
    pub(crate) fn read(&self, index: usize) -> u64 {
        Self::total(&lock(&self.recorded.shared), index)
    }

    /// The values of counters `0..n`.
    pub(crate) fn read_all(&self, n: usize) -> Vec<u64> {
        let shared = lock(&self.recorded.shared);
        let mut totals: Vec<u64> = (0..n).map(|i| shared.base.get(i).copied().unwrap_or(0)).collect();
        for table in &shared.live {
            for (i, v) in table.values().take_while(|(i, _)| *i < n) {
                totals[i] = totals[i].wrapping_add(v);
            }
        }
        totals
    }

    /// Raises counter `index` to at least `value`: under the lock (so `absolute` calls and
    /// thread exits are serialized), if the total is below `value`, adds the difference to
    /// the base. Increments running meanwhile are kept: each is counted in the total read
    /// or added on top, so afterwards the counter is at least `value` and nothing is lost.
    pub(crate) fn absolute(&self, index: usize, value: u64) {
        let mut shared = lock(&self.recorded.shared);
        let total = Self::total(&shared, index);
        if value > total {
            let base = at(&mut shared.base, index);
            *base = base.wrapping_add(value - total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_map_to_chunks_without_gaps() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(63), (0, 63));
        assert_eq!(locate(64), (1, 0));
        assert_eq!(locate(191), (1, 127));
        assert_eq!(locate(192), (2, 0));
        let mut next = (0, 0);
        for i in 0..5000 {
            let (k, o) = locate(i);
            assert_eq!((k, o), next, "index {i}");
            next = if o + 1 == FIRST << k { (k + 1, 0) } else { (k, o + 1) };
        }
    }

    #[test]
    fn threads_fold_their_counts_when_they_exit() {
        let cells = Local::new();
        let n = if cfg!(miri) { 50 } else { 10_000 };
        std::thread::scope(|s| {
            let threads: Vec<_> = (0..4)
                .map(|t| {
                    let cells = &cells;
                    s.spawn(move || (0..n).for_each(|i| cells.add((i + t) % 200, 1)))
                })
                .collect();
            // A join waits for the thread's locals to be torn down (a scope's end may not).
            threads.into_iter().for_each(|t| t.join().unwrap());
        });
        assert!(lock(&cells.recorded.shared).live.is_empty(), "exited threads left the list");
        assert_eq!((0..200).map(|i| cells.read(i)).sum::<u64>(), 4 * n as u64);
        assert_eq!(cells.read_all(200).iter().sum::<u64>(), 4 * n as u64);
        cells.add(5, 7);
        assert_eq!(cells.read_all(6)[5], cells.read(5));
    }

    #[test]
    fn a_handle_that_outlives_its_thread_keeps_its_cells_until_dropped() {
        let cells = Local::new();
        let n = if cfg!(miri) { 20 } else { 10_000 };
        // A thread counts, takes its cell of counter 3, and exits.
        let owned = std::thread::scope(|s| {
            s.spawn(|| {
                cells.add(3, 5);
                let owned = cells.owned(3);
                assert!(owned.try_add(2), "the owner adds through its own cell");
                owned
            })
            .join()
            .unwrap()
        });
        let live = || lock(&cells.recorded.shared).live.len();
        assert_eq!(live(), 1, "the handle keeps the exited thread's cells in the list");
        assert_eq!(cells.read(3), 7);
        // Threads that start after it add through the handle or, when `try_add` declines,
        // through their own cells. One that reuses the exited thread's identity adds through
        // its cell (with glibc, each of them does: a thread's stack and control block, where
        // its thread pointer points, are reused by the next thread).
        let spawned = (0..8)
            .map(|_| {
                std::thread::scope(|s| {
                    s.spawn(|| (0..n).filter(|_| !owned.try_add(1)).for_each(|_| cells.add(3, 1))).join().unwrap()
                });
            })
            .count();
        assert!(!owned.try_add(1), "the test's thread is not the owner");
        assert_eq!(cells.read(3), 7 + spawned as u64 * n as u64);
        drop(owned);
        // Every thread has exited: their counts, the first one's too, are in the base.
        assert_eq!(live(), 0, "the last holder retired the exited thread's table");
        assert_eq!(cells.read(3), 7 + spawned as u64 * n as u64);
        assert_eq!(cells.read_all(4)[3], cells.read(3));
    }

    #[test]
    fn a_handle_made_while_locals_are_torn_down_has_no_owner() {
        let none = Owned { owner: 0, cell: NonNull::dangling(), table: None };
        assert!(!none.try_add(1), "no thread has identity 0");
        assert_ne!(this_thread(), 0);
        let other = std::thread::scope(|s| s.spawn(this_thread).join().unwrap());
        assert_ne!(this_thread(), other, "two live threads never share an identity");
    }
}
