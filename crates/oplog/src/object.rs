//! [`OpLog`]: one shared object whose updates are logged per core and applied on read.
//!
//! # Update (000 §4.1, Figure 6 `Object::log`)
//!
//! 1. Enter the object's slot in the log cache of the core: the CPU the thread runs on
//!    (per-CPU domains, through a restartable sequence or the slot's spin lock) or the
//!    thread's own index (per-thread domains, through the owner flag).
//! 2. Ordered kinds: read the clock, raise the stamp to the migration floor
//!    ([`crate::migration`]) and to the slot's last stamp.
//! 3. If another object owns the slot, move that object's log into its pending backlog
//!    ([`crate::pending`]) and take the slot; set this core's bit in the object's mask.
//! 4. Push the operation (the log kind may absorb it), unlock.
//! 5. If the log reached the domain's limit, synchronize (flush) the object.
//!
//! Nothing on this path writes a cache line another core uses, except when the slot
//! changes owner (a log-cache miss).
//!
//! # Synchronize (000 §5.1 `Object::synchronize`)
//!
//! 1. Take the object lock (a bit in the same word as the core mask).
//! 2. Lock, at once, the object's slot on every core in the mask, in ascending core order
//!    (per-thread slots: request all, one `membarrier`, wait for each owner), then re-read
//!    the mask; if a core joined meanwhile, unlock and start over. Holding every slot at
//!    one instant makes the set of operations gathered a consistent cut: it contains
//!    every update that completed before the synchronize began, and if it contains an
//!    update it contains every update that finished before that one started.
//! 3. Take the object's backlog (operations left by a panic, then evicted logs), then
//!    each slot's log, into one batch; clear mask bits of cores that no longer hold the
//!    object; unlock the slots. Updates continue from here on (001 §10.2).
//! 4. Apply the batch to the internal instance ([`LogKind::apply`]: merge, global
//!    absorption, execute), then run the read on it while still holding the object lock.

use crate::domain::{Domain, SlotMode};
use crate::lock::Held;
use crate::log::LogKind;
use crate::primitive::{AtomicU64, Backoff, MutPtr, Ordering, UnsafeCell, barrier};
use crate::slot::{NO_OWNER, Slot, SlotData, SlotGuard, slot_index};
use crate::{migration, registry};
use std::any::Any;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

/// Bit 63 of an object's word: the object lock.
const LOCK: u64 = 1 << 63;
/// Bits 0..63 of an object's word: core `c` may hold a log of the object if bit `c % 63`
/// is set.
const CORE_BITS: u64 = LOCK - 1;
const CORE_BIT_COUNT: usize = 63;

/// A full log holding this many times the domain's limit makes the flush wait for a
/// synchronize already in progress instead of leaving the log to it; so does a backlog of
/// evicted logs this many times over its limit on the next install.
const HARD_LIMIT_FACTOR: usize = 4;

#[inline(always)]
fn core_bit(core: usize) -> u64 {
    1 << (core % CORE_BIT_COUNT)
}

/// Source of unique object ids (0 means "no owner"). Process-wide and never part of a
/// modelled interleaving, so a plain std atomic (see [`crate::primitive`]).
static NEXT_OBJECT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A shared object of sequential type `L::State` whose updates are logged per core and
/// applied when it is read (000 §4–6). See the [crate docs](crate) for what reads observe.
pub struct OpLog<L: LogKind> {
    domain: Arc<Domain<L>>,
    id: u64,
    /// [`LOCK`] | core mask.
    word: AtomicU64,
    state: UnsafeCell<L::State>,
}

// SAFETY: the internal instance is only accessed with the object lock held (or through
// `&mut self`), so sharing the object shares no unsynchronized access; operations move to
// whichever thread synchronizes, which `LogKind`'s `Op: Send` and `State: Send` allow.
unsafe impl<L: LogKind> Sync for OpLog<L> {}

impl<L: LogKind> fmt::Debug for OpLog<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpLog").field("id", &self.id).field("domain", &self.domain.id).finish_non_exhaustive()
    }
}

impl<L: LogKind> OpLog<L> {
    /// Wraps `state` as an object of the process-wide per-CPU domain of `L`
    /// ([`Domain::global`]).
    ///
    /// # Panics
    /// When `L` is ordered and the process-wide clock's configuration is malformed.
    pub fn new(state: L::State) -> Self {
        Self::with_domain(&Domain::global(), state)
    }

    /// Wraps `state` as an object of `domain`.
    pub fn with_domain(domain: &Arc<Domain<L>>, state: L::State) -> Self {
        OpLog {
            domain: domain.clone(),
            id: NEXT_OBJECT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            word: AtomicU64::new(0, "OpLog.word"),
            state: UnsafeCell::new(state, "OpLog.state"),
        }
    }

    /// The domain this object belongs to.
    pub fn domain(&self) -> &Arc<Domain<L>> {
        &self.domain
    }

    /// Logs a deferred update (000 Figure 6 `Object::log`). It takes effect, in timestamp
    /// order for ordered kinds, no later than the next synchronize.
    ///
    /// # Panics
    /// Only if this update fills the log and the flush it triggers applies an operation
    /// that panics; this update itself is kept (see the crate docs on panics). Calling
    /// `update` while this thread holds this object's [`Synced`] guard deadlocks once the
    /// log, or the object's backlog of evicted logs, is four times over its limit, as a
    /// re-entrant mutex would.
    #[inline]
    pub fn update(&self, op: L::Op) {
        let len = self.append(op);
        if len >= self.domain.max_log_len {
            self.flush(len);
        }
    }

    /// Applies every logged update and returns a guard giving access to the up-to-date
    /// internal instance, holding the object lock until dropped (000 Figure 6
    /// `Object::synchronize` and `unlock`). Updates from other threads continue meanwhile.
    ///
    /// # Panics
    /// If an operation panics while being applied. The panicking operation is dropped,
    /// the lock released, and the operations after it kept for the next synchronize.
    pub fn synchronize(&self) -> Synced<'_, L> {
        let lock = self.lock();
        self.sync_locked();
        Synced { state: Some(self.state.get_mut()), _lock: lock }
    }

    /// Synchronizes and runs `f` on the up-to-date instance.
    ///
    /// # Panics
    /// As [`OpLog::synchronize`], or if `f` panics.
    pub fn read<R>(&self, f: impl FnOnce(&L::State) -> R) -> R {
        f(&self.synchronize())
    }

    /// Applies every logged update and returns the instance.
    ///
    /// # Panics
    /// If an operation panics. All other operations are still applied first, then the
    /// first panic is resumed (the instance is dropped during unwinding).
    pub fn into_inner(self) -> L::State {
        let mut this = ManuallyDrop::new(self);
        let panic = this.retire();
        // SAFETY: `this` is never used or dropped again, and each field is read once.
        let (domain, word, state) =
            unsafe { (std::ptr::read(&this.domain), std::ptr::read(&this.word), std::ptr::read(&this.state)) };
        drop((domain, word));
        let state = state.into_inner();
        if let Some(p) = panic {
            resume_unwind(p);
        }
        state
    }

    /// Appends `op` to this thread's log; returns the log's length.
    #[inline(always)]
    fn append(&self, op: L::Op) -> usize {
        let d = &*self.domain;
        let index = slot_index(self.id, d.slot_mask);
        let mut check_backlog = true;
        loop {
            let (core, slot, held) = match d.mode {
                SlotMode::PerCpu => d.enter_cpu_slot(index),
                SlotMode::PerThread => match registry::thread_core(&self.domain) {
                    Some((core, cache)) => {
                        let slot = cache.slot(index);
                        (core, slot, if d.owner_fast { slot.lock.lock_owner() } else { slot.lock.lock_shared() })
                    }
                    None => {
                        let slot = d.thread_cache(0).slot(index);
                        (0, slot, if d.owner_fast { slot.lock.lock_remote() } else { slot.lock.lock_shared() })
                    }
                },
            };
            let raw = if L::ORDERED {
                let t = d.clock.get_time();
                if d.mode == SlotMode::PerCpu { t.max(migration::floor(&*d.clock, d.id, core)) } else { t }
            } else {
                0
            };
            // SAFETY: `held` is the lock of `slot`, just taken, and passes to the guard.
            let mut guard = unsafe { slot.locked(held) };
            if guard.owner != self.id {
                match self.install(guard, core, check_backlog) {
                    Ok(g) => guard = g,
                    Err(check) => {
                        check_backlog = check;
                        continue;
                    }
                }
            }
            let stamp = if L::ORDERED {
                let s = raw.max(guard.last_stamp);
                guard.last_stamp = s;
                s
            } else {
                0
            };
            let len = L::push(&mut guard.log, op, stamp);
            drop(guard);
            if L::ORDERED {
                if d.mode == SlotMode::PerCpu {
                    migration::record(d.id, core, stamp);
                }
                if d.commit_wait {
                    // The clock's raw order does not respect communication here: make every
                    // later reading on any core larger before returning (crate docs).
                    d.clock.new_time(stamp);
                }
            }
            return len;
        }
    }

    /// Makes this object the owner of the locked slot of `core`, moving the previous
    /// owner's log to its backlog (never synchronizing it: see [`crate::pending`]).
    ///
    /// If this object has too many logs waiting in its own backlog (and `check_backlog`),
    /// releases the slot and applies them first, which bounds the backlog; the caller
    /// then retries, checking again only if this synchronize could run (`Err(true)`).
    /// While another synchronize of this object runs, that one (or the next) takes the
    /// backlog, so the install goes ahead, until the backlog is [`HARD_LIMIT_FACTOR`]
    /// times over its limit: then it waits for the object lock. Without that wait, a
    /// synchronizer preempted while holding the lock let every other thread's evictions
    /// grow the backlog for as long as it stayed off the CPU.
    #[cold]
    #[inline(never)]
    fn install<'s>(
        &self,
        mut slot: SlotGuard<'s, L>,
        core: usize,
        check_backlog: bool,
    ) -> Result<SlotGuard<'s, L>, bool> {
        let limit = self.domain.backlog_limit;
        let waiting = if check_backlog { self.domain.pending.evicted_count(self.id) } else { 0 };
        if waiting >= limit {
            drop(slot);
            let lock = match self.try_lock() {
                Some(lock) => lock,
                None if waiting >= HARD_LIMIT_FACTOR * limit => self.lock(),
                // A synchronize is running: it or the next will take the backlog.
                None => return Err(false),
            };
            self.sync_locked();
            drop(lock);
            return Err(true);
        }
        let victim = slot.owner;
        if victim != NO_OWNER && !L::is_empty(&slot.log) {
            let log = std::mem::take(&mut slot.log);
            self.domain.pending.push_evicted(victim, core, log);
        }
        slot.owner = self.id;
        // Set under the slot lock, before the first push: a synchronize that does not see
        // the bit cannot have missed a completed update (object docs, step 2).
        self.word.fetch_or(core_bit(core), Ordering::SeqCst);
        Ok(slot)
    }

    /// Synchronizes because a log is full, unless a synchronize is already running and the
    /// log is not far over its limit (that synchronize, or the next, will take it).
    #[cold]
    fn flush(&self, len: usize) {
        let lock = match self.try_lock() {
            Some(lock) => lock,
            None if len >= HARD_LIMIT_FACTOR * self.domain.max_log_len => self.lock(),
            None => return,
        };
        self.sync_locked();
        drop(lock);
    }

    fn lock(&self) -> ObjectLock<'_, L> {
        if let Some(lock) = self.try_lock() {
            return lock;
        }
        let mut backoff = Backoff::default();
        loop {
            while self.word.load(Ordering::Relaxed) & LOCK != 0 {
                backoff.snooze();
            }
            if let Some(lock) = self.try_lock() {
                return lock;
            }
        }
    }

    /// Takes the object lock if it is free. A compare-and-swap that retries only while
    /// the lock stays free and core bits change under it, so a failed attempt writes
    /// nothing (see `lock::SpinLock::lock` for why that matters, loom included).
    fn try_lock(&self) -> Option<ObjectLock<'_, L>> {
        let mut word = self.word.load(Ordering::Relaxed);
        while word & LOCK == 0 {
            match self.word.compare_exchange(word, word | LOCK, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Some(ObjectLock { obj: self }),
                Err(now) => word = now,
            }
        }
        None
    }

    /// Gathers and applies every logged update. The object lock is held.
    fn sync_locked(&self) {
        let mut batch = self.gather(false);
        if L::batch_len(&batch) == 0 {
            return;
        }
        // If an operation panics, keep the ones not yet run for the next synchronize.
        struct Keep<'a, L: LogKind> {
            obj: &'a OpLog<L>,
            batch: &'a mut L::Batch,
        }
        impl<L: LogKind> Drop for Keep<'_, L> {
            fn drop(&mut self) {
                if L::batch_len(self.batch) > 0 {
                    self.obj.domain.pending.put_carry(self.obj.id, std::mem::take(self.batch));
                }
            }
        }
        let keep = Keep { obj: self, batch: &mut batch };
        let state = self.state.get_mut();
        // SAFETY: the object lock is held, so this is the only access to the state.
        L::apply(unsafe { state.deref() }, keep.batch);
    }

    /// Collects, at one instant, every operation logged for this object: its backlog,
    /// then each core's log. With `release`, also gives up its slots (for drop).
    fn gather(&self, release: bool) -> L::Batch {
        let d = &*self.domain;
        let held = HeldSlots::lock(self);
        let mut batch = L::Batch::default();
        if let Some(backlog) = d.pending.take(self.id) {
            batch = backlog.carry;
            for (core, mut log) in backlog.evicted {
                L::gather(&mut batch, core, &mut log);
            }
        }
        let mut still_owned = 0;
        for (core, _, data) in &held.slots {
            // SAFETY: `held` holds the lock of every slot in `slots`.
            let data = unsafe { data.deref() };
            if data.owner == self.id {
                L::gather(&mut batch, *core, &mut data.log);
                if release {
                    data.owner = NO_OWNER;
                } else {
                    still_owned |= core_bit(*core);
                }
            }
        }
        let gone = held.bits & !still_owned;
        if gone != 0 {
            self.word.fetch_and(!gone, Ordering::SeqCst);
        }
        drop(held);
        batch
    }

    /// Applies everything and gives up every slot, continuing past panicking operations
    /// (drop and `into_inner`); returns the first panic.
    fn retire(&mut self) -> Option<Box<dyn Any + Send>> {
        let mut batch = self.gather(true);
        let state = self.state.get_mut();
        let mut first = None;
        while L::batch_len(&batch) > 0 {
            let before = L::batch_len(&batch);
            // SAFETY: `&mut self`: nothing else accesses the state.
            let r = catch_unwind(AssertUnwindSafe(|| L::apply(unsafe { state.deref() }, &mut batch)));
            if let Err(p) = r {
                if L::batch_len(&batch) >= before {
                    // The kind's merge or absorption hook panicked before running anything:
                    // retrying would panic again. The panic is reported below.
                    batch = L::Batch::default();
                }
                first.get_or_insert(p);
            }
        }
        first
    }
}

impl<L: LogKind> Drop for OpLog<L> {
    /// Applies every pending operation to the instance, then drops it (nothing logged is
    /// lost). If operations panic, the others still run and the first panic is resumed
    /// after the instance is dropped, unless the thread is already panicking.
    fn drop(&mut self) {
        if let Some(p) = self.retire()
            && !std::thread::panicking()
        {
            resume_unwind(p);
        }
    }
}

/// Holds an object's lock bit; releases it on drop.
struct ObjectLock<'a, L: LogKind> {
    obj: &'a OpLog<L>,
}

impl<L: LogKind> Drop for ObjectLock<'_, L> {
    fn drop(&mut self) {
        self.obj.word.fetch_and(!LOCK, Ordering::Release);
    }
}

/// The up-to-date internal instance of an [`OpLog`], locked until dropped.
pub struct Synced<'a, L: LogKind> {
    /// `Some` until drop; dropped before the lock so loom sees the access end inside it.
    state: Option<MutPtr<L::State>>,
    _lock: ObjectLock<'a, L>,
}

impl<L: LogKind> Deref for Synced<'_, L> {
    type Target = L::State;
    fn deref(&self) -> &L::State {
        // SAFETY: the guard holds the object lock, so no other access to the state is live;
        // `state` is Some until drop.
        unsafe { self.state.as_ref().unwrap_unchecked().deref() }
    }
}

impl<L: LogKind> DerefMut for Synced<'_, L> {
    fn deref_mut(&mut self) -> &mut L::State {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference.
        unsafe { self.state.as_ref().unwrap_unchecked().deref() }
    }
}

impl<L: LogKind> Drop for Synced<'_, L> {
    fn drop(&mut self) {
        self.state = None;
    }
}

impl<L: LogKind> fmt::Debug for Synced<'_, L>
where
    L::State: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Synced").field(&**self).finish()
    }
}

/// A slot held by a synchronize: its core, the slot, and the access to its data.
type HeldSlot<'a, L> = (usize, &'a Slot<L>, MutPtr<SlotData<L>>);

/// The slots of one object on every core of its mask, locked at one instant.
struct HeldSlots<'a, L: LogKind> {
    /// Taken through the owners' asymmetric protocol rather than the spin locks.
    remote: bool,
    /// Mask bits this covers.
    bits: u64,
    slots: Vec<HeldSlot<'a, L>>,
}

impl<'a, L: LogKind> HeldSlots<'a, L> {
    fn lock(obj: &'a OpLog<L>) -> Self {
        let d = &*obj.domain;
        let index = slot_index(obj.id, d.slot_mask);
        loop {
            let bits = obj.word.load(Ordering::SeqCst) & CORE_BITS;
            let slots: Vec<(usize, &Slot<L>)> =
                cores_of(bits, d.cores()).filter_map(|c| d.core(c).map(|cache| (c, cache.slot(index)))).collect();
            let remote = d.owner_fast;
            if !remote {
                for (_, s) in &slots {
                    s.lock.lock_shared();
                }
            } else {
                {
                    for (_, s) in &slots {
                        s.lock.remote_begin();
                    }
                    if !slots.is_empty() {
                        barrier::heavy();
                    }
                    for (_, s) in &slots {
                        s.lock.remote_wait();
                    }
                }
            }
            let now = obj.word.load(Ordering::SeqCst) & CORE_BITS;
            let mut held = HeldSlots {
                remote,
                bits,
                // SAFETY: every slot's lock was just taken and is released only by drop.
                slots: slots.into_iter().map(|(c, s)| (c, s, unsafe { s.remote_data() })).collect(),
            };
            if now & !bits == 0 {
                return held;
            }
            // A core installed the object since the mask was read: its slot must be held
            // too. Release everything (ascending lock order cannot be kept) and retry.
            held.bits = 0;
            drop(held);
        }
    }
}

impl<L: LogKind> Drop for HeldSlots<'_, L> {
    fn drop(&mut self) {
        for (_, slot, data) in self.slots.drain(..) {
            // End the access before unlocking (MutPtr has a Drop under loom).
            #[allow(clippy::drop_non_drop)]
            drop(data);
            if self.remote {
                slot.lock.remote_end();
            } else {
                slot.lock.unlock(Held::Shared);
            }
        }
    }
}

/// Core indices below `cores` whose mask bit is set in `bits`, ascending.
fn cores_of(bits: u64, cores: usize) -> impl Iterator<Item = usize> {
    (0..cores).filter(move |&c| bits & core_bit(c) != 0)
}
