//! The log cache (001 ch. 7, 000 §6): where an object's per-core logs live.
//!
//! Each core (a CPU, or a thread in per-thread domains) has a direct-mapped table of
//! `cache_slots` slots shared by every object of one domain: the domain's
//! [`PerCore`](crate::percore::PerCore) of [`SlotData`]. An object maps to one slot index
//! ([`Obj::slot_index`]: its entry's number in the domain's slab, so consecutive entries
//! take consecutive slots, no hashing, whichever chunks hold them); only
//! the object currently *owning* that slot on a core has a log on that core. A rarely
//! updated object therefore costs nothing beyond its own instance, while hot objects keep
//! their logs (000 §4.2 "Allocating logs"). 128 bytes per slot, 32 KiB per core at the
//! default 256 slots ([`crate::DEFAULT_CACHE_SLOTS`]), 128 KiB at a counter's 1,024
//! ([`LogKind::CACHE_SLOTS`]). (001 §8.3 limits its log cache to 4,096 entries per core.)
//!
//! An update whose object does not own its slot on the calling core (a *miss*) takes the
//! slot ([`Obj::install`]): it evicts the owner's log first ([`super::eviction`]), names
//! itself the owner and sets its core's bit in its word's mask, so that its next
//! synchronize visits the slot. A synchronize takes every slot of the mask that publishes
//! the object at one instant ([`HeldSlots`]). What the caches did (hits, misses, evictions,
//! hand-offs) is counted per core ([`crate::cache_stats`]).
//!
//! The trade, measured (crate docs, "Many hot objects"): pinned to the logged
//! representation, one thread updating N counters uniformly hits in about
//! `cache_slots / N` of its updates; in the default adaptive representation an object whose
//! logs keep being evicted goes direct, so misses stop.

use super::eviction::{Eviction, Kept, evict_owner};
use super::*;
use crate::log::{CounterLog, LogKind};
use crate::percore::Fold;

/// The owner field of a slot nobody owns.
pub(crate) const NO_OWNER: *const () = std::ptr::null();

/// The bit a slot's published word adds to its owner's id once local absorption emptied
/// the owner's log ([`emptied`]). Ids are addresses of slab entries, aligned to at least 8
/// bytes, so the bit is free.
const EMPTIED: usize = 1;

/// What the owner `id` publishes in its slot once local absorption emptied its log (a
/// remove that took back its add): not `id`, so a synchronize does not take the slot
/// (nothing is logged there: [`HeldSlots::lock`]) and a read finds the object quiescent,
/// but not 0 either, so a synchronize that visits the mask learns that logging did a
/// direct update's work there ([`HeldSlots::emptied`], the adaptive policy's `absorbed`).
/// The owner publishes `id` again before its next push. Published lazily (a release
/// store): a reader that still sees `id` takes the slot and finds the log empty.
#[inline(always)]
pub(super) fn emptied(id: u64) -> usize {
    id as usize | EMPTIED
}

/// Whether a slot whose published word is `published` holds the log of another object
/// than `id` (an update of `id` there would evict it): neither 0 nor an emptied log
/// ([`emptied`]), whose owner has nothing to evict.
#[inline]
pub(super) fn holds_a_log(published: usize, id: u64) -> bool {
    published != 0 && published & EMPTIED == 0 && published != id as usize
}

/// Tells remote readers that the entered slot's log left it (its owner handed it off, or
/// took it out to apply it), once the log is in its new place: the slot publishes 0 and,
/// for kinds that cut ([`LogKind::CUTS`]), has no low mark (`object` module docs, "The
/// cut").
pub(super) fn log_left<L: LogKind>(slot: &Entered<'_, SlotData<L>>) {
    slot.publish(0);
    if L::CUTS {
        slot.clear_low_mark();
    }
}

/// One slot of a core's log cache.
pub(crate) struct SlotData<L: LogKind> {
    /// The object whose log this is (the address of its shared part, with its provenance,
    /// so an evictor can reach it), or [`NO_OWNER`].
    ///
    /// Whenever no thread holds the slot, the slot's published word is 0, this object's
    /// id, or its id marked [`emptied`]: a holder that names a new owner ([`Obj::install`])
    /// publishes it before it releases the slot, every holder that stops publishing an
    /// object (a hand-off, an eviction of the owner's own full log, a gather) publishes 0,
    /// and an owner whose log local absorption emptied publishes [`emptied`]. So a published
    /// word that equals an object's id says that the object owns the slot, which the
    /// update's fast path and the counter's restartable sequence check alone.
    pub(crate) owner: *const (),
    /// Largest stamp pushed to this slot by any owner; new stamps are raised to it so
    /// that one slot's stamps never decrease (a thread may read its clock on one CPU and
    /// push on another).
    pub(crate) last_stamp: u64,
    /// Updates pushed by the owner since its log here was last gathered (the adaptive
    /// policy's measure of how much a synchronize merges; `object`, "Representations").
    pub(crate) pushes: u32,
    /// The owner's log on this core.
    pub(crate) log: L::Log,
}

// SAFETY: `owner` is an identity that only an evictor dereferences, under the slot's lock and
// the protocol of `object` (the owner is alive while a slot names it); the log is Send.
unsafe impl<L: LogKind> Send for SlotData<L> {}

impl<L: LogKind> Default for SlotData<L> {
    fn default() -> Self {
        Self { owner: NO_OWNER, last_stamp: 0, pushes: 0, log: L::Log::default() }
    }
}

// SAFETY: `pushes` is a `u32` and a counter's log an `i64` (wrapping adds, as
// `CounterLog::push`), plain fields only holders of the slot access. The sequence's update,
// and `fold`'s, is the fast path's (`object`, "Update, logged"): the published word names
// the object, one more push, the delta folded into the log. A published word names the
// slot's owner whenever no thread holds the slot ([`SlotData::owner`]), as `Fold` requires.
unsafe impl Fold for SlotData<CounterLog> {
    const COUNT: usize = std::mem::offset_of!(Self, pushes);
    const VALUE: usize = std::mem::offset_of!(Self, log);

    #[inline(always)]
    fn fold(&mut self, delta: i64) -> u32 {
        self.pushes = self.pushes.wrapping_add(1);
        CounterLog::push(&mut self.log, delta, 0);
        self.pushes
    }
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// This object's slot index in a cache of `mask + 1` slots: its entry's number in the
    /// domain's slab ([`crate::slab::Slab::index_of`]), modulo the slots. Consecutive
    /// entries land in consecutive slots (a direct-mapped cache's best case), whichever
    /// chunks hold them: a domain with no more objects than slots has nearly every object
    /// in a slot of its own (all but some of the last chunk's, `slab`'s `index_of`).
    #[inline(always)]
    pub(super) fn slot_index(self) -> usize {
        let d = self.domain();
        // SAFETY: `Domain::new` makes the mask the slots per core less one.
        unsafe { std::hint::assert_unchecked(d.slot_mask < d.slots.slots_per_core()) };
        // SAFETY: the object's entry came from its domain's slab and lives while `self` does.
        unsafe { ObjectSlab::<L>::index_of(self.ptr.as_ptr()) & d.slot_mask }
    }

    /// Makes this object the owner of the locked slot of `core` (see the module docs, steps
    /// 3 and 5): returns the eviction to finish once the slot is released, if any.
    ///
    /// If this object has too many logs waiting in its own backlog (and `check_backlog`),
    /// returns [`Refused::Backlog`] with the backlog's length without touching the slot:
    /// the caller releases the slot and applies the backlog ([`Obj::apply_backlog`]), then
    /// retries. This bounds the backlog when evictions cannot apply it at once. If the
    /// owner keeps the slot ([`Kept`]), returns [`Refused::Kept`]: the caller releases the
    /// slot and applies its update in place.
    #[cold]
    #[inline(never)]
    pub(super) fn install(
        &self,
        slot: &mut Entered<'_, SlotData<L>>,
        core: usize,
        check_backlog: bool,
    ) -> Result<Option<Eviction<L>>, Refused> {
        let d = self.domain();
        let waiting =
            if check_backlog { d.backlogs.evicted_count(self.id(), self.get().word.logs(Ordering::SeqCst)) } else { 0 };
        if waiting >= d.backlog_limit {
            return Err(Refused::Backlog(waiting));
        }
        let eviction = evict_owner(d, slot, core).map_err(|_: Kept| Refused::Kept)?;
        d.stats.count(core, Event::Install);
        d.stats.retire(core, std::mem::take(&mut slot.pushes));
        slot.owner = self.as_owner();
        // Set under the slot lock, before the first push: a synchronize that does not see
        // the bit cannot have missed a completed update (module docs, synchronize step 2).
        // Already set (this core held the object before, or shares the bit), it stays set
        // until this slot is released: only a gather holding every slot of the mask clears
        // bits, and this one is held. So a load that sees it spares the read-modify-write,
        // a write of a line the object's other updaters share.
        let word = &self.get().word;
        if word.logs(Ordering::SeqCst) & core_bit(core) == 0 {
            word.set_logs(core_bit(core));
        }
        Ok(eviction)
    }
}

/// Why [`Obj::install`] did not take the slot.
#[derive(Clone, Copy, Debug)]
pub(super) enum Refused {
    /// The object's own backlog holds this many logs, its limit or more.
    Backlog(usize),
    /// The slot's owner keeps it (`eviction`'s [`Kept`]).
    Kept,
}

/// The slots of one object that hold its logs (or, for drop, every slot of its mask),
/// locked at one instant, and the lease on its instance ([`DirectLog::lease`]), taken at
/// that instant.
pub(super) struct HeldSlots<'a, L: LogKind> {
    /// Mask bits read when the slots were chosen.
    pub(super) bits: u64,
    /// `None` when no slot had to be taken (nothing logged: no barrier, no remote line).
    pub(super) slots: Option<Remote<'a, SlotData<L>>>,
    /// The instance where the direct log holds it (zero-sized for kinds without one).
    pub(super) lease: Lease<L>,
    /// Whether a core of the mask showed the object's log [`emptied`] by local absorption
    /// (such a slot is not taken: nothing is logged there).
    pub(super) emptied: bool,
}

impl<'a, L: LogKind> HeldSlots<'a, L> {
    /// Locks the slots of the cores in the object's mask that publish the object (every
    /// core of the mask with `all`), takes the lease on the instance, then checks that no
    /// other core of the mask started publishing it meanwhile; if one did, releases
    /// everything and starts over (ascending lock order cannot be kept by adding it). The
    /// lease is taken between the two: an update logged in a slot that completed before a
    /// direct update the lease includes has its core in the mask by then, and a direct
    /// update that completed before an update in a held slot started is in the lease.
    /// Without `barriers`, takes them only where that needs no barrier
    /// (`PerCore::try_lock_remote_without_barrier`), and otherwise `None`, holding nothing.
    pub(super) fn lock(obj: Obj<'a, L>, all: bool, barriers: bool) -> Option<Self> {
        let d = obj.domain();
        let index = obj.slot_index();
        let id = obj.id() as usize;
        let mark = emptied(obj.id());
        // From the word a core's slot published: whether to take that slot.
        let logs_here = |published: usize| all || published == id;
        loop {
            // The cores in use after the mask: a core that set its bit was allocated before.
            let bits = obj.get().word.logs(Ordering::SeqCst) & CORE_BITS;
            let n = d.slots.cores_in_use();
            let mut emptied_here = false;
            let cores: SmallVec<[usize; INLINE_SLOTS]> = cores_of(bits, n)
                .filter(|&c| {
                    let published = d.slots.published(c, index);
                    emptied_here |= published == mark;
                    logs_here(published)
                })
                .collect();
            let targets = cores.iter().map(|&c| (c, index));
            let slots = match (cores.is_empty(), barriers) {
                (true, _) => None,
                (false, true) => Some(d.slots.lock_remote(targets)),
                (false, false) => Some(d.slots.try_lock_remote_without_barrier(targets)?),
            };
            let lease = obj.direct().lease();
            let now = obj.get().word.logs(Ordering::SeqCst) & CORE_BITS;
            // A core allocated meanwhile may share a bit with one already visited.
            let stable = d.slots.cores_in_use() == n
                && if all {
                    now & !bits == 0
                } else {
                    cores_of(now, n).all(|c| cores.contains(&c) || !logs_here(d.slots.published(c, index)))
                };
            if stable {
                return Some(HeldSlots { bits, slots, lease, emptied: emptied_here });
            }
            drop(slots);
        }
    }
}
