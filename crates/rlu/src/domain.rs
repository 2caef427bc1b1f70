//! The RLU domain: the clock, one slot per registered thread, and the protocol of 003
//! Figure 7 (section entry and exit, commit, quiescence, write-back, abort).
//!
//! The crate docs explain the protocol and why each step is where it is; the comments here
//! name the step of Figure 7 each line implements.

use std::fmt;
use std::sync::atomic::AtomicU64 as StdAtomicU64;

use crossbeam_utils::CachePadded;
use ordo::{Clock, TimeOrder};

use crate::handle::{Handle, Local};
use crate::object::{RluObject, Value};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Backoff, Ordering, after_clock_read, fence, thread_tag};

/// `write_clock` while the thread is not committing: no reader steals its copies (Figure 7's
/// `INFINITY`).
pub(crate) const IDLE: u64 = u64::MAX;
/// `write_clock` between the start of a commit and its stamp: a reader that finds it takes
/// the stamp itself (see the crate docs, "The commit stamp").
pub(crate) const PENDING: u64 = u64::MAX - 1;

/// Ids of domains, so that a section refuses objects of another domain. Process-wide and
/// outside every modelled interleaving, hence a plain `std` atomic.
static NEXT_DOMAIN: StdAtomicU64 = StdAtomicU64::new(1);

/// What the domain knows of one registered thread (`ctx` in 003 Figure 7), on its own cache
/// line: the owner writes it at every section entry and exit, writers read it.
#[derive(Debug)]
pub(crate) struct Slot {
    /// Odd while the thread is inside a section (Figure 7 `run_count`).
    pub(crate) run_cnt: AtomicU64,
    /// The start time of the current section, or 0 until it is known (Figure 7
    /// `local_clock`).
    pub(crate) local_clock: AtomicU64,
    /// [`IDLE`], [`PENDING`], or the stamp of the commit in progress (Figure 7
    /// `write_clock`): readers whose section started certainly after it steal this
    /// thread's copies.
    pub(crate) write_clock: AtomicU64,
    /// [`thread_tag`] of the thread that entered the current section.
    thread_tag: AtomicUsize,
    /// A handle owns the slot.
    claimed: AtomicBool,
}

impl Slot {
    fn new() -> Self {
        Self {
            run_cnt: AtomicU64::new(0),
            local_clock: AtomicU64::new(0),
            write_clock: AtomicU64::new(IDLE),
            thread_tag: AtomicUsize::new(0),
            claimed: AtomicBool::new(false),
        }
    }
}

/// An RLU domain: objects that sections read and write consistently together, the clock
/// that orders the sections, and a slot per registered thread.
///
/// `C` is the clock: [`ordo::LogicalClock`] gives the original RLU (one shared counter that
/// every commit advances), [`ordo::Ordo`] the text's RLU-Ordo (each core's invariant clock,
/// no shared line for a timestamp). The code is the same for both.
pub struct Rlu<C: Clock> {
    pub(crate) clock: C,
    pub(crate) id: u64,
    pub(crate) slots: Box<[CachePadded<Slot>]>,
    /// One past the highest slot ever claimed: how far a quiescence scan looks.
    high_water: CachePadded<AtomicUsize>,
}

/// The domain's thread slots are all in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterError {
    /// The domain's capacity.
    pub capacity: usize,
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "all {} thread slots of this RLU domain are in use: drop a handle first, or build the domain with \
             Rlu::with_capacity",
            self.capacity
        )
    }
}

impl std::error::Error for RegisterError {}

/// A thread capacity outside `1..=`[`Rlu::MAX_CAPACITY`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityError {
    /// The capacity asked for.
    pub requested: usize,
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an RLU domain for {} threads: expected 1 to {}",
            self.requested,
            Rlu::<ordo::LogicalClock>::MAX_CAPACITY
        )
    }
}

impl std::error::Error for CapacityError {}

/// A write section that still holds copies of the previous commit and of aborted attempts
/// beyond this many waits for a quiescence period and frees them (they are otherwise freed
/// by the next commit).
const RETIRED_LIMIT: usize = 4096;

impl<C: Clock> Rlu<C> {
    /// Thread slots of a domain built with [`Rlu::new`].
    pub const DEFAULT_CAPACITY: usize = 256;
    /// The most thread slots a domain may have.
    pub const MAX_CAPACITY: usize = 1 << 16;

    /// A domain on `clock` for up to [`Rlu::DEFAULT_CAPACITY`] registered threads at once.
    pub fn new(clock: C) -> Self {
        match Self::with_capacity(clock, Self::DEFAULT_CAPACITY) {
            Ok(rlu) => rlu,
            Err(e) => unreachable!("the default capacity is valid: {e}"),
        }
    }

    /// A domain on `clock` for up to `threads` registered threads at once.
    ///
    /// # Errors
    /// [`CapacityError`] unless `threads` is within `1..=`[`Rlu::MAX_CAPACITY`].
    pub fn with_capacity(clock: C, threads: usize) -> Result<Self, CapacityError> {
        if !(1..=Self::MAX_CAPACITY).contains(&threads) {
            return Err(CapacityError { requested: threads });
        }
        Ok(Self {
            clock,
            id: NEXT_DOMAIN.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            slots: (0..threads).map(|_| CachePadded::new(Slot::new())).collect(),
            high_water: CachePadded::new(AtomicUsize::new(0)),
        })
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// How many threads may hold a handle at once.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// A handle for the calling thread (or any one thread at a time: handles are `Send`).
    ///
    /// # Errors
    /// [`RegisterError`] when every slot is taken.
    pub fn register(&self) -> Result<Handle<'_, C>, RegisterError> {
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.claimed.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                self.high_water.fetch_max(i + 1, Ordering::SeqCst);
                let run = slot.run_cnt.load(Ordering::Relaxed);
                debug_assert!(run % 2 == 0, "a free slot is not inside a section");
                return Ok(Handle::new(self, Local::new(i, run)));
            }
        }
        Err(RegisterError { capacity: self.slots.len() })
    }

    /// An object of this domain, to embed in a structure (a list's head). Objects that
    /// sections link and unlink are allocated with [`Section::alloc`](crate::Section::alloc).
    pub fn object<T: Value>(&self, value: T) -> RluObject<T> {
        RluObject::new(self.id, value)
    }

    /// Starts a section (Figure 7 `rlu_reader_lock`): set active, fence, record the clock.
    pub(crate) fn enter(&self, local: &mut Local) {
        let slot = &self.slots[local.slot];
        slot.thread_tag.store(thread_tag(), Ordering::Relaxed);
        // Until the start time is known, a writer that sees this section must wait for it.
        slot.local_clock.store(0, Ordering::Relaxed);
        local.run += 1;
        slot.run_cnt.store(local.run, Ordering::Release);
        fence(Ordering::SeqCst);
        let start = self.clock.now();
        after_clock_read();
        slot.local_clock.store(start, Ordering::Relaxed);
        local.local_clock = start;
        local.stats.sections += 1;
        local.stats.now_calls += 1;
    }

    /// Ends a section (Figure 7 `rlu_reader_unlock`: set inactive).
    pub(crate) fn exit(&self, local: &mut Local) {
        local.run += 1;
        self.slots[local.slot].run_cnt.store(local.run, Ordering::Release);
    }

    /// Gives up a write section's locks and copies (RLU's abort): unlocks every object, keeps
    /// the copies until a quiescence period (readers may have found them), frees what the
    /// section allocated (nothing can reach it).
    pub(crate) fn abort(&self, local: &mut Local) {
        for entry in local.log.drain(..) {
            // SAFETY: the object is locked by this copy; its original outlives the lock.
            unsafe { entry.logged().unlock() };
            local.retired.push(entry);
        }
        for object in local.allocated.drain(..) {
            // SAFETY: only this section's copies linked it, and they were never published
            // (their write clock stayed IDLE); its lock, if any, was released above.
            unsafe { object.free() };
        }
        local.stats.aborts += 1;
    }

    /// Frees the copies of earlier commits and aborts after a full quiescence period, when
    /// there are many of them.
    pub(crate) fn trim_retired(&self, local: &mut Local) {
        if local.retired.len() > RETIRED_LIMIT && !self.nested_section(local.slot) {
            self.synchronize(local, None);
            Self::destroy_retired(local);
        }
    }

    /// Frees the retired copies. The caller has waited for a quiescence period that began
    /// after they were unlocked.
    pub(crate) fn destroy_retired(local: &mut Local) {
        for entry in local.retired.drain(..) {
            // SAFETY: unlocked before the quiescence period that just ended (caller), so no
            // section can still read them.
            unsafe { entry.destroy() };
        }
    }

    /// Commits the write log of a section that has ended (Figure 7 `rlu_commit_write_log`).
    pub(crate) fn commit(&self, local: &mut Local) {
        if self.nested_section(local.slot) {
            self.abort(local);
            panic!(
                "an RLU write section committed while its thread holds another section of the same domain open: the \
                 commit would wait for that section forever (the write was aborted)"
            );
        }
        self.stage(local);
        let slot = &self.slots[local.slot];
        // The stamp: taken after the section's stores are visible, by this thread or by the
        // first reader that needs it (crate docs, "The commit stamp").
        slot.write_clock.store(PENDING, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let reading = self.clock.now();
        local.stats.now_calls += 1;
        let stamp = match slot.write_clock.compare_exchange(PENDING, reading, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => reading,
            Err(taken_by_a_reader) => taken_by_a_reader,
        };
        // Advance the clock (the original's `fetch_and_add`; Ordo waits out the window) so
        // that every section that starts from now on is certainly after the stamp.
        self.clock.new_time(stamp.saturating_add(self.clock.boundary()));
        local.stats.new_time_calls += 1;
        after_clock_read();
        fence(Ordering::SeqCst);
        // Drain the readers that may not steal (Figure 7 `rlu_synchronize`).
        self.synchronize(local, Some(stamp));
        // Write back, unlock, disable stealing (Figure 7 lines 31-33).
        for entry in local.log.iter().filter(|e| e.free.is_none()) {
            // SAFETY: every section that could read the original without stealing has ended,
            // and the lock is still held; the new value was staged above.
            unsafe { entry.logged().write_back() };
        }
        for entry in &local.log {
            // SAFETY: locked by this copy; the original is freed only below.
            unsafe { entry.logged().unlock() };
        }
        slot.write_clock.store(IDLE, Ordering::SeqCst);
        // Swap the write logs (Figure 7 `rlu_swap_write_logs`): the previous commit's copies
        // (and aborted ones) have been quiescent since the synchronize above; this commit's
        // wait for the next one. What remains runs user `Drop` code, with nothing locked.
        local.allocated.clear();
        std::mem::swap(&mut local.log, &mut local.retired);
        for entry in local.log.drain(..) {
            // SAFETY: unlocked before the synchronize above began.
            unsafe { entry.destroy() };
        }
        for entry in &local.retired {
            if let Some(object) = entry.free {
                // SAFETY: `Section::free`'s contract: this commit unlinked it, so sections
                // that start after the stamp cannot reach it, and every other section has
                // ended.
                unsafe { entry.logged().free_original(object) };
            }
        }
        local.stats.commits += 1;
    }

    /// Clones each new value into its copy's staging area, before anything is published:
    /// a `clone` that panics aborts the write cleanly.
    fn stage(&self, local: &mut Local) {
        /// Aborts the write unless disarmed (a `clone` panicked).
        struct AbortOnUnwind<'a, C: Clock> {
            rlu: &'a Rlu<C>,
            local: &'a mut Local,
            armed: bool,
        }
        impl<C: Clock> Drop for AbortOnUnwind<'_, C> {
            fn drop(&mut self) {
                if self.armed {
                    self.rlu.abort(self.local);
                }
            }
        }
        let mut guard = AbortOnUnwind { rlu: self, local, armed: true };
        for i in 0..guard.local.log.len() {
            let entry = &guard.local.log[i];
            if entry.free.is_none() && entry.value {
                // SAFETY: the value is initialized (`entry.value`).
                unsafe { entry.logged().stage() };
                guard.local.log[i].staged = true;
            }
        }
        guard.armed = false;
    }

    /// Waits until every section that was active when it began has ended, or, with a
    /// stamp, started certainly after it (Figure 7 `rlu_synchronize`; `Uncertain` waits).
    pub(crate) fn synchronize(&self, local: &mut Local, stamp: Option<u64>) {
        // Pairs with the fence of `enter`: a section that the scan below misses sees every
        // unlock this thread made before (no stale copy pointer), and, with a stamp, starts
        // after the advance past it.
        fence(Ordering::SeqCst);
        let high = self.high_water.load(Ordering::SeqCst);
        local.waiting.clear();
        for (i, slot) in self.slots[..high].iter().enumerate() {
            let run = slot.run_cnt.load(Ordering::SeqCst);
            if i != local.slot && run % 2 == 1 {
                local.waiting.push((i, run));
            }
        }
        for &(i, run) in &local.waiting {
            let slot = &self.slots[i];
            let mut backoff = Backoff::default();
            while slot.run_cnt.load(Ordering::SeqCst) == run {
                if let Some(stamp) = stamp
                    && self.clock.cmp_time(slot.local_clock.load(Ordering::SeqCst), stamp) == TimeOrder::After
                {
                    break;
                }
                backoff.snooze();
            }
        }
    }

    /// Whether the calling thread holds a section of this domain open in a slot other than
    /// `me` (a quiescence period would wait for it forever).
    pub(crate) fn nested_section(&self, me: usize) -> bool {
        let tag = thread_tag();
        let high = self.high_water.load(Ordering::SeqCst);
        self.slots[..high].iter().enumerate().any(|(i, slot)| {
            i != me && slot.run_cnt.load(Ordering::SeqCst) % 2 == 1 && slot.thread_tag.load(Ordering::Relaxed) == tag
        })
    }

    /// Gives a slot back (a handle was dropped).
    pub(crate) fn release(&self, slot: usize) {
        self.slots[slot].claimed.store(false, Ordering::Release);
    }
}

impl<C: Clock> fmt::Debug for Rlu<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rlu")
            .field("clock", &self.clock.name())
            .field("capacity", &self.slots.len())
            .field("registered_high_water", &self.high_water.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}
