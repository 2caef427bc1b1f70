//! Refcache: scalable, lazy reference counting with per-core delta caches (002 §8.1).
//!
//! This module is the engine; [`Rc`](crate::Rc), [`Weak`](crate::Weak) and
//! [`Domain`](crate::Domain) are the handles on top of it.
//!
//! # The interface (002 §8.1, §4.5)
//!
//! `inc` and `dec` return nothing, so they always commute, even when the count reaches zero,
//! and can be conflict-free: they touch only the calling core's cache. A separate `review`
//! finds the objects whose counts reached zero and frees them; it runs periodically (every
//! 10 ms in sv6, and by default here) or when asked, so the latency between the last `dec` and
//! the destructor is bounded by the review period, not zero.
//!
//! # Delta caches (§8.1.1; `cache`)
//!
//! Each object has a global count (`object`); each core has a fixed-size, direct-mapped
//! cache of `⟨object, delta⟩`. `inc(o)`/`dec(o)` add ±1 to `o`'s entry on the calling core;
//! if the entry holds another object, that object is *evicted* first: its delta is added to
//! its global count (Figure 8-3 `inc`; `dec` is the same with −1). The true count of an object
//! is its global count plus every core's cached delta for it. Space is one word per object
//! plus a fixed cache per core, instead of a counter per object per core (sloppy counters).
//!
//! # Epochs and review queues (§8.1.1, §8.1.3; `epoch`)
//!
//! Flushes happen in no particular order, so deltas reach the global count reordered and a
//! global zero is not a true zero (Figure 8-2, epoch 2: a `dec` flushed before the `inc` that
//! preceded it). But a true zero stays zero (without weak references): nothing can take a new
//! reference. So Refcache waits: time is divided into *epochs*, in each of which every core
//! flushes its whole cache once; the last core to flush ends the epoch. The first flush that
//! sets an object's global count to zero puts `⟨object, epoch⟩` on that core's *review queue*
//! (Figure 8-3 `evict`). That core's review re-examines it once the global epoch is two ahead
//! (the *two-epoch rule*), which guarantees that every core has flushed completely since the
//! zero was seen, one full epoch.
//!
//! # Dirty zeros (§8.1.1)
//!
//! A zero global count at re-examination is necessary but not sufficient: "there must also
//! have been no deltas flushed to the object's global count in the interim, even if those
//! changes canceled out or the deltas themselves were zero". Any flush that leaves a queued
//! object's count at zero marks it *dirty* (that includes a zero delta, which `evict` only skips
//! when the count is not zero). A dirty zero is queued again, clean, for two more epochs;
//! Figure 8-2 shows one in epochs 4–6, re-examined in epoch 8.
//!
//! # Weak references and the `tryget` race (§8.1.2)
//!
//! A weak reference is a pointer with a *dying* bit. When a flush first sets an object's count
//! to zero it sets `dying`; `tryget` clears `dying` and, unless the pointer is null, increments
//! the count in its core's cache: the object is revived even from a true zero. A review that
//! decides to free an object atomically swaps `⟨object, dying⟩` for `⟨null, false⟩`; if
//! `dying` is clear, a `tryget` got there first and the object is queued again (with `dying`
//! set) instead. Whichever clears the bit first wins the race. Here the weak reference and the
//! other per-object fields share one word, so that swap and the dirty and count checks are one
//! compare-and-swap (`object`).
//!
//! sv6 runs these functions with preemption disabled, which makes `tryget`'s swap and its
//! increment atomic with respect to its core's flush. Here `tryget` holds its core's lock
//! across both: otherwise a thread preempted between them could let the object be found clean
//! and freed, then increment a freed object. With the lock, the core's next flush (which every
//! re-examination waits for) includes the increment.
//!
//! # Per core in user space (`cores`)
//!
//! Every function above runs under its core's lock: the calling thread's CPU's (per-CPU
//! domains, a spin lock) or its own (per-thread domains, an owner flag with no atomic
//! read-modify-write; the reviewer takes it over with `membarrier`). A thread that migrates in
//! mid-operation stays correct. Reviews are run for every core by one thread (the domain's
//! background reviewer, or a caller of [`Domain::review`](crate::Domain::review)), which locks
//! each core in turn: a core need not be running for its cache to be flushed.
//!
//! # What a review does (`Refcache::review_all`, `Refcache::review`)
//!
//! 1. Flush: under each core's lock, evict every entry (queueing zeros on that core's queue)
//!    and, on the core's first flush of the epoch, count it; the last one advances the epoch.
//! 2. Examine: take each queue's entries that are two epochs old and decide (`object`):
//!    still counted (drop from the queue, clear `dying`), dirty or revived (queue again), or
//!    free. Freeing runs the destructor outside every lock.
//!
//! Reviews of one domain take turns (a review lock; a destructor may review its own domain
//! again), so that a collection sees every queued object. A review of every core locks all
//! the cores at once, so its flush happens to be a consistent cut; the two-epoch rule is kept
//! all the same, because reviews of single cores (Figure 8-3, and [`crate::testing`]) are not.

pub(crate) mod cache;
pub(crate) mod epoch;
pub(crate) mod object;

use crate::config::Layout;
use crate::cores::Cores;
use cache::{DeltaCache, Entry};
use epoch::Epochs;
use object::{Header, Verdict};
use oplog_percore::primitive::{AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::sync::Arc;

/// A destructor's panic, caught so that the rest of a review could finish.
pub(crate) type Panic = Box<dyn Any + Send>;

/// An object waiting on a review queue, with the epoch in which its count was seen at zero.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    pub(crate) obj: NonNull<Header>,
    pub(crate) epoch: u64,
}

/// One core's Refcache state.
#[derive(Debug)]
pub(crate) struct CoreState {
    cache: DeltaCache,
    queue: Vec<Queued>,
    /// The last epoch in which this core flushed (its per-core epoch, §8.1.3).
    flushed: u64,
}

// SAFETY: the pointers name live objects (an object is freed only when no cache entry or
// queue entry names it, see the module docs) and are only used under the core's lock.
unsafe impl Send for CoreState {}

impl CoreState {
    /// Adds `delta` to `obj`'s entry, evicting the entry's previous object (Figure 8-3 `inc`).
    #[inline(always)]
    fn update(&mut self, epochs: &Epochs, obj: NonNull<Header>, delta: i64) {
        let e = self.cache.entry(obj);
        if e.obj != Some(obj) {
            Self::replace(e, obj, &mut self.queue, epochs);
        }
        e.delta += delta;
    }

    /// A collision: evicts the entry's object and gives the entry to `obj` with delta 0.
    #[cold]
    #[inline(never)]
    fn replace(e: &mut Entry, obj: NonNull<Header>, queue: &mut Vec<Queued>, epochs: &Epochs) {
        if let Some(old) = e.obj {
            evict(old, e.delta, queue, epochs);
        }
        *e = Entry { obj: Some(obj), delta: 0 };
    }

    /// Evicts every entry (Figure 8-3 `flush`, first line); returns whether this is the core's
    /// first flush of epoch `started`, which the caller reports to the barrier.
    fn flush(&mut self, epochs: &Epochs, started: u64) -> bool {
        let queue = &mut self.queue;
        self.cache.drain(|obj, delta| evict(obj, delta, queue, epochs));
        if self.flushed < started {
            self.flushed = started;
            true
        } else {
            false
        }
    }

    /// Takes the entries of this core's review queue that are due in epoch `now`.
    fn take_due(&mut self, now: u64) -> Vec<Queued> {
        if !self.queue.iter().any(|q| now >= q.epoch + 2) {
            return Vec::new();
        }
        let (due, rest) = std::mem::take(&mut self.queue).into_iter().partition(|q| now >= q.epoch + 2);
        self.queue = rest;
        due
    }
}

/// Figure 8-3 `evict(obj, delta)`: applies the delta and queues a new zero on `queue`.
fn evict(obj: NonNull<Header>, delta: i64, queue: &mut Vec<Queued>, epochs: &Epochs) {
    // SAFETY: an object named by a cache entry is alive (see `CoreState`).
    let header = unsafe { obj.as_ref() };
    if header.evict(delta) {
        queue.push(Queued { obj, epoch: epochs.for_queue() });
    }
}

/// The Refcache engine of one domain: per-core caches and queues, and the epochs.
pub(crate) struct Refcache {
    cores: Cores<CoreState>,
    epochs: Arc<Epochs>,
    cache_entries: usize,
    /// Queue entries a review has taken and not yet put back or freed (review statistics,
    /// touched only by reviews).
    in_review: AtomicUsize,
    /// Objects freed so far (review statistics).
    freed: AtomicU64,
    /// Held while examining review queues (see [`Refcache::reviewing`]).
    review_lock: Mutex<()>,
}

/// A thread's hold on a domain's review lock; `lock` is `None` when nested in its own review.
struct Reviewing<'a> {
    lock: Option<MutexGuard<'a, ()>>,
    id: u64,
}

impl Drop for Reviewing<'_> {
    fn drop(&mut self) {
        if self.lock.take().is_some() {
            REVIEWING.with(|r| r.borrow_mut().retain(|&id| id != self.id));
        }
    }
}

#[cfg(not(loom))]
std::thread_local! {
    /// The domains (their core sets' ids) whose review lock this thread holds.
    static REVIEWING: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(loom)]
loom::thread_local! {
    static REVIEWING: std::cell::RefCell<Vec<u64>> = std::cell::RefCell::new(Vec::new());
}

impl std::fmt::Debug for Refcache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refcache")
            .field("mode", &self.cores.mode())
            .field("cache_entries", &self.cache_entries)
            .field("epoch", &self.epochs.current())
            .finish_non_exhaustive()
    }
}

/// Passes without a free after which [`Refcache::collect`] gives up on objects that stay
/// queued: a clean zero is freed two passes after it is queued, so four idle passes mean the
/// queued objects are being kept alive.
pub(crate) const IDLE_PASSES: usize = 4;

/// What one pass of [`Refcache::review_all`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pass {
    /// Objects freed.
    pub(crate) freed: usize,
}

impl Refcache {
    /// An engine with `cache_entries` entries per core (a power of two), laid out as `layout`
    /// (both already validated).
    pub(crate) fn new(layout: Layout, cache_entries: usize) -> Self {
        let epochs = Arc::new(Epochs::new());
        let for_cores = epochs.clone();
        let make = Box::new(move |_| CoreState {
            cache: DeltaCache::new(cache_entries),
            queue: Vec::new(),
            flushed: for_cores.core_created(),
        });
        Refcache {
            cores: Cores::new(layout, make),
            epochs,
            cache_entries,
            in_review: AtomicUsize::new(0, "Refcache.in_review"),
            freed: AtomicU64::new(0, "Refcache.freed"),
            review_lock: Mutex::new((), "Refcache.review_lock"),
        }
    }

    /// The per-core states.
    pub(crate) fn cores(&self) -> &Cores<CoreState> {
        &self.cores
    }

    /// Entries per core cache.
    pub(crate) fn cache_entries(&self) -> usize {
        self.cache_entries
    }

    /// The global epoch.
    pub(crate) fn epoch(&self) -> u64 {
        self.epochs.current()
    }

    /// Adds `delta` (±1) to `obj`'s count in the calling thread's core cache.
    #[inline(always)]
    pub(crate) fn update(&self, obj: NonNull<Header>, delta: i64) {
        self.cores.with_local(|_, core| core.update(&self.epochs, obj, delta));
    }

    /// Figure 8-3 `tryget`: if `obj` is not freed, revives it and counts a new reference in
    /// the calling thread's core cache, in one critical section (see the module docs).
    pub(crate) fn tryget(&self, obj: NonNull<Header>) -> bool {
        self.cores.with_local(|_, core| tryget_in(core, &self.epochs, obj))
    }

    /// [`Refcache::update`] as if run on core `index`; `None` if that core does not exist.
    pub(crate) fn update_on(&self, index: usize, obj: NonNull<Header>, delta: i64) -> Option<()> {
        self.cores.with_core(index, |core| core.update(&self.epochs, obj, delta))
    }

    /// [`Refcache::tryget`] as if run on core `index`; `None` if that core does not exist.
    pub(crate) fn tryget_on(&self, index: usize, obj: NonNull<Header>) -> Option<bool> {
        self.cores.with_core(index, |core| tryget_in(core, &self.epochs, obj))
    }

    /// Figure 8-3 `flush()` of core `index`: evicts its whole cache and updates the epoch.
    /// Returns false if the core does not exist.
    pub(crate) fn flush(&self, index: usize) -> bool {
        let started = self.epochs.flush_start();
        match self.cores.with_core(index, |core| core.flush(&self.epochs, started)) {
            Some(first) => {
                if first {
                    self.epochs.flushed(started);
                }
                true
            }
            None => false,
        }
    }

    /// Figure 8-3 `review()` of core `index`: flush, then examine its due queue entries and free
    /// the objects found at a true zero. Returns how many were freed, or the first destructor
    /// panic (after freeing the others). Returns `Ok(0)` if the core does not exist.
    pub(crate) fn review(&self, index: usize) -> Result<usize, Panic> {
        let _reviewing = self.reviewing();
        if !self.flush(index) {
            return Ok(0);
        }
        self.examine(index)
    }

    /// One review of every core: flush them all (with one process-wide barrier), then examine
    /// every queue. Returns what it did, or the first destructor panic (after freeing the
    /// others).
    pub(crate) fn review_all(&self) -> Result<Pass, Panic> {
        let _reviewing = self.reviewing();
        self.review_all_reviewing()
    }

    /// [`Refcache::review_all`] by a thread that holds the review lock.
    fn review_all_reviewing(&self) -> Result<Pass, Panic> {
        let started = self.epochs.flush_start();
        let counted: Vec<bool> = {
            let mut all = self.cores.lock_all();
            all.iter_mut().map(|(_, core)| core.flush(&self.epochs, started)).collect()
        };
        for first in counted {
            if first {
                self.epochs.flushed(started);
            }
        }
        let mut freed = 0;
        let mut panic = None;
        for index in self.cores.created() {
            match self.examine(index) {
                Ok(n) => freed += n,
                Err(p) => {
                    panic.get_or_insert(p);
                }
            }
        }
        match panic {
            Some(p) => Err(p),
            None => Ok(Pass { freed }),
        }
    }

    /// Reviews until nothing is left to free: every object whose references were all gone
    /// when it was called is freed, including those whose last references are dropped by the
    /// destructors run meanwhile. Holds the review lock throughout, so no other review takes
    /// entries away meanwhile. Stops after a pass that frees nothing and leaves every queue
    /// empty, or after [`IDLE_PASSES`] passes without a free while objects stay queued (other
    /// threads keep reviving or touching them: they are not garbage). Returns how many it freed,
    /// or the first destructor panic (after the others).
    pub(crate) fn collect(&self) -> Result<usize, Panic> {
        let _reviewing = self.reviewing();
        let mut total = 0;
        let mut idle = 0;
        let mut panic = None;
        loop {
            let freed = match self.review_all_reviewing() {
                Ok(pass) => pass.freed,
                Err(p) => {
                    panic.get_or_insert(p);
                    1
                }
            };
            total += freed;
            if freed == 0 && self.queue_lengths() == 0 {
                break;
            }
            idle = if freed == 0 { idle + 1 } else { 0 };
            if idle >= IDLE_PASSES {
                break;
            }
        }
        match panic {
            Some(p) => Err(p),
            None => Ok(total),
        }
    }

    /// Takes the domain's review lock, unless this thread already holds it (a destructor run
    /// by a review reviewing again, or dropping its domain's last handle): examinations are
    /// serialized, so that [`Refcache::collect`] sees every queued object.
    fn reviewing(&self) -> Reviewing<'_> {
        let id = self.cores.id();
        if REVIEWING.with(|r| r.borrow().contains(&id)) {
            return Reviewing { lock: None, id };
        }
        let lock = self.review_lock.lock();
        REVIEWING.with(|r| r.borrow_mut().push(id));
        Reviewing { lock: Some(lock), id }
    }

    /// Examines core `index`'s due queue entries (the loop of Figure 8-3 `review`).
    fn examine(&self, index: usize) -> Result<usize, Panic> {
        let now = self.epochs.current();
        let due = self
            .cores
            .with_core(index, |core| {
                let due = core.take_due(now);
                // Counted before the core is unlocked: never out of the queue and uncounted.
                self.in_review.fetch_add(due.len(), Ordering::SeqCst);
                due
            })
            .unwrap_or_default();
        let mut again = Vec::new();
        let mut free = Vec::new();
        for q in due {
            // SAFETY: a queued object is alive until it is found at a true zero, here.
            match unsafe { q.obj.as_ref() }.examine() {
                Verdict::Live => {
                    self.in_review.fetch_sub(1, Ordering::SeqCst);
                }
                Verdict::Requeue => again.push(Queued { obj: q.obj, epoch: self.epochs.for_queue() }),
                Verdict::Free => free.push(q.obj),
            }
        }
        if !again.is_empty() {
            self.cores.with_core(index, |core| {
                self.in_review.fetch_sub(again.len(), Ordering::SeqCst);
                core.queue.extend(again);
            });
        }
        let mut panic = None;
        let freed = free.len();
        for obj in free {
            // SAFETY: `examine` marked the object freed, so this review is its one owner now:
            // no handle, cache entry or queue entry names it any more.
            let result = catch_unwind(AssertUnwindSafe(|| unsafe {
                let free = obj.as_ref().free_fn();
                free(obj)
            }));
            self.freed.fetch_add(1, Ordering::SeqCst);
            self.in_review.fetch_sub(1, Ordering::SeqCst);
            if let Err(p) = result {
                panic.get_or_insert(p);
            }
        }
        match panic {
            Some(p) => Err(p),
            None => Ok(freed),
        }
    }

    /// Objects on every review queue, or taken off one by a review that has not yet decided
    /// (or finished freeing) them.
    pub(crate) fn queued(&self) -> usize {
        self.queue_lengths() + self.in_review.load(Ordering::SeqCst)
    }

    /// Entries on every review queue.
    fn queue_lengths(&self) -> usize {
        let mut all = self.cores.lock_all();
        all.iter_mut().map(|(_, c)| c.queue.len()).sum()
    }

    /// Objects freed so far, by every review of this domain.
    pub(crate) fn freed(&self) -> u64 {
        self.freed.load(Ordering::SeqCst)
    }

    /// Core `index`'s review queue: each object and the epoch it was queued in.
    pub(crate) fn queue_of(&self, index: usize) -> Option<Vec<Queued>> {
        self.cores.with_core(index, |c| c.queue.clone())
    }

    /// The delta core `index` caches for `obj`, if it holds an entry for it.
    pub(crate) fn cached(&self, index: usize, obj: NonNull<Header>) -> Option<i64> {
        self.cores.with_core(index, |c| c.cache.get(obj)).flatten()
    }

    /// Core `index`'s per-core epoch (the last epoch in which it flushed).
    pub(crate) fn flushed_epoch(&self, index: usize) -> Option<u64> {
        self.cores.with_core(index, |c| c.flushed)
    }

    /// Bytes held by the per-core states created so far (caches, queues, locks): the domain's
    /// fixed cost, which does not grow with the number of objects.
    pub(crate) fn footprint(&self) -> usize {
        let dynamic: usize = self
            .cores
            .created()
            .into_iter()
            .filter_map(|i| {
                self.cores.with_core(i, |c| {
                    c.cache.len() * std::mem::size_of::<Entry>() + c.queue.capacity() * std::mem::size_of::<Queued>()
                })
            })
            .sum();
        self.cores.footprint() + dynamic
    }
}

fn tryget_in(core: &mut CoreState, epochs: &Epochs, obj: NonNull<Header>) -> bool {
    // SAFETY: the caller holds a weak handle, which keeps the header allocated.
    if !unsafe { obj.as_ref() }.revive() {
        return false;
    }
    core.update(epochs, obj, 1);
    true
}

impl Drop for Refcache {
    fn drop(&mut self) {
        // The domain is dropped after its last object (every object holds it), so nothing can
        // be cached or queued any more.
        if cfg!(debug_assertions) {
            let mut all = self.cores.lock_all();
            for (i, core) in all.iter_mut() {
                debug_assert!(core.cache.is_empty() && core.queue.is_empty(), "core {i} outlived its objects");
            }
        }
    }
}
