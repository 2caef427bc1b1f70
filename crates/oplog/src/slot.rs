//! What each slot of a log cache holds (001 ch. 7, 000 §6).
//!
//! Each core (a CPU, or a thread in per-thread domains) has a direct-mapped table of slots
//! shared by every object of one domain: the domain's [`PerCore`](crate::percore::PerCore)
//! of [`SlotData`]. An object maps to one slot index; only the object currently *owning*
//! that slot on a core has a log on that core. A rarely updated object therefore costs
//! nothing beyond its own instance, while hot objects keep their logs (000 §4.2
//! "Allocating logs").

use crate::log::{CounterLog, LogKind};
use crate::percore::Fold;

/// The owner field of a slot nobody owns.
pub(crate) const NO_OWNER: *const () = std::ptr::null();

/// One slot of a core's log cache.
pub(crate) struct SlotData<L: LogKind> {
    /// The object whose log this is (the address of its shared part, with its provenance,
    /// so an evictor can reach it), or [`NO_OWNER`].
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

// SAFETY: `owner` is a pointer, `pushes` a `u32` and a counter's log an `i64` (wrapping adds,
// as `CounterLog::push`), plain fields only holders of the slot access. The sequence's
// update is the fast path's (`object`, "Update, logged"): the owner and the published word
// both name the object, one more push, the delta folded into the log.
unsafe impl Fold for SlotData<CounterLog> {
    const KEY: usize = std::mem::offset_of!(Self, owner);
    const COUNT: usize = std::mem::offset_of!(Self, pushes);
    const VALUE: usize = std::mem::offset_of!(Self, log);
}
