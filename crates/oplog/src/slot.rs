//! Log slots and the per-core log cache (001 ch. 7, 000 §6).
//!
//! Each core (a CPU, or a thread in per-thread domains) has a [`CoreCache`]: a
//! direct-mapped table of [`Slot`]s shared by every object of one domain. An object hashes
//! to one slot index; only the object currently *owning* that slot on a core has a log on
//! that core. A rarely updated object therefore costs nothing beyond its own instance,
//! while hot objects keep their logs (000 §4.2 "Allocating logs").
//!
//! Each slot sits on its own cache line, so a synchronizer locking one object's slot on a
//! remote core never steals the line of another object's slot.

use crate::lock::{Held, SlotLock};
use crate::log::LogKind;
use crate::primitive::{MutPtr, UnsafeCell};
use crossbeam_utils::CachePadded;
use std::ops::{Deref, DerefMut};

/// Object id meaning "no owner".
pub(crate) const NO_OWNER: u64 = 0;

/// What a slot's lock protects.
pub(crate) struct SlotData<L: LogKind> {
    /// Id of the object whose log this is, or [`NO_OWNER`].
    pub(crate) owner: u64,
    /// Largest stamp pushed to this slot by any owner; new stamps are raised to it so
    /// that one slot's stamps never decrease (a thread may read its clock on one CPU and
    /// push on another).
    pub(crate) last_stamp: u64,
    /// The owner's log on this core.
    pub(crate) log: L::Log,
}

/// One entry of a core's log cache. `repr(C)` with the lock first: `crate::rseq` finds its
/// flags at fixed offsets from the slot's address.
#[repr(C)]
pub(crate) struct Slot<L: LogKind> {
    pub(crate) lock: SlotLock,
    data: UnsafeCell<SlotData<L>>,
}

impl<L: LogKind> Slot<L> {
    fn new() -> Self {
        Self {
            lock: SlotLock::new(),
            data: UnsafeCell::new(SlotData { owner: NO_OWNER, last_stamp: 0, log: L::Log::default() }, "Slot.data"),
        }
    }

    /// Accesses the data of a slot whose lock the caller holds as `held`, releasing the
    /// lock when the guard drops.
    ///
    /// # Safety
    /// The caller holds `self.lock` (as `held`) and passes that ownership to the guard.
    #[inline]
    pub(crate) unsafe fn locked(&self, held: Held) -> SlotGuard<'_, L> {
        SlotGuard { slot: self, held, data: Some(self.data.get_mut()) }
    }

    /// Accesses the data of a slot the caller has locked remotely; does not unlock.
    ///
    /// # Safety
    /// The caller holds `self.lock` remotely for as long as the returned access lives.
    pub(crate) unsafe fn remote_data(&self) -> MutPtr<SlotData<L>> {
        self.data.get_mut()
    }
}

// SAFETY: the data is only accessed with the slot lock held (the guards below and
// `remote_data` require it), so sharing a slot shares no unsynchronized access; logs move
// between threads, which `LogKind::Log: Send` allows.
unsafe impl<L: LogKind> Sync for Slot<L> {}

/// Exclusive access to a slot's data; releases the slot lock on drop.
pub(crate) struct SlotGuard<'a, L: LogKind> {
    slot: &'a Slot<L>,
    held: Held,
    /// `Some` until drop; dropped before unlocking so that loom sees the access end
    /// inside the critical section.
    data: Option<MutPtr<SlotData<L>>>,
}

impl<L: LogKind> Deref for SlotGuard<'_, L> {
    type Target = SlotData<L>;
    #[inline(always)]
    fn deref(&self) -> &SlotData<L> {
        // SAFETY: the guard holds the slot lock (see `Slot::locked`), so no other access
        // to the data is live; `data` is Some until drop.
        unsafe { self.data.as_ref().unwrap_unchecked().deref() }
    }
}

impl<L: LogKind> DerefMut for SlotGuard<'_, L> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut SlotData<L> {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { self.data.as_ref().unwrap_unchecked().deref() }
    }
}

impl<L: LogKind> Drop for SlotGuard<'_, L> {
    #[inline]
    fn drop(&mut self) {
        self.data = None;
        self.slot.lock.unlock(self.held);
    }
}

/// One core's direct-mapped log cache.
pub(crate) struct CoreCache<L: LogKind> {
    slots: Box<[CachePadded<Slot<L>>]>,
}

impl<L: LogKind> CoreCache<L> {
    pub(crate) fn new(slots: usize) -> Self {
        Self { slots: (0..slots).map(|_| CachePadded::new(Slot::new())).collect() }
    }

    /// The slot at `index`, which the domain's mask keeps below the cache size.
    #[inline(always)]
    pub(crate) fn slot(&self, index: usize) -> &Slot<L> {
        debug_assert!(index < self.slots.len());
        // SAFETY: every cache of a domain has `slot_mask + 1` slots and every index is
        // masked with `slot_mask` (`Shared::slot_index`).
        unsafe { self.slots.get_unchecked(index) }
    }

    /// Address of the first slot (for `crate::rseq`).
    #[cfg(oplog_rseq)]
    pub(crate) fn slots_base(&self) -> *const u8 {
        self.slots.as_ptr().cast()
    }

    /// Bytes this cache occupies (for memory reports).
    pub(crate) fn footprint(&self) -> usize {
        std::mem::size_of::<Self>() + self.slots.len() * std::mem::size_of::<CachePadded<Slot<L>>>()
    }
}

/// Distance in bytes between consecutive slots of a cache (for `crate::rseq`).
#[cfg(oplog_rseq)]
pub(crate) const fn slot_stride<L: LogKind>() -> usize {
    std::mem::size_of::<CachePadded<Slot<L>>>()
}
