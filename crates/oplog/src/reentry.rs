//! Misuse that would wait for itself: calls back into OpLog from user code that runs while
//! the calling thread holds what the call needs.
//!
//! Two kinds of user code run with something held:
//!
//! * [`Update::exec`](crate::Update::exec), [`Update::absorb_global`](crate::Update::absorb_global)
//!   and a read closure run with the *object lock* held. A read, synchronize, `into_inner` or
//!   drop of the same object from inside them would wait for that lock forever. Each thread
//!   keeps the objects whose lock it holds; a lock acquisition that finds the lock taken
//!   checks them before it waits and panics with a message naming the mistake. The fast
//!   paths (a direct update, a read through the lock or on the concurrent path, each of
//!   which holds the object for the span of one call, and a synchronize of an object with
//!   nothing logged, whose guard the caller keeps) record it in one thread-local cell
//!   ([`Holding::scoped`]: a load and two stores, where the list searches four cells; with
//!   the list, a direct update ran at 159M ops/s against 180M with no record at all,
//!   `read-mix`'s table at one thread);
//!   the other holders, and a fast path nested inside another one, in a list of a few
//!   entries ([`Holding::new`]). Updates of the same
//!   object from inside are allowed: they are logged, and a full log or backlog never waits
//!   for a lock this thread holds (see `object`).
//! * [`Update::absorb_local`](crate::Update::absorb_local) runs with the calling core's *log
//!   slot* held. Any OpLog call from inside it that needs that slot would spin forever. The
//!   push runs the hook inside [`absorbing`], which marks the thread
//!   ([`must_not_wait`](oplog_percore::primitive::must_not_wait)): every spin-wait of the
//!   per-core crate checks the mark once it has spun long enough to start yielding, so the
//!   mistake panics instead of hanging. Nothing is checked on the update path itself.

use crate::primitive::thread_local_const;
use std::cell::Cell;

/// Object locks one thread tracks at once; deeper nesting is not tracked (and would only
/// lose the diagnostic, never correctness).
const TRACKED: usize = 4;

thread_local_const! {
    static HELD: [Cell<usize>; TRACKED] = [const { Cell::new(0) }; TRACKED];
}

thread_local_const! {
    /// The object (its id, bit 0 set for a concurrent read) that the calling thread's
    /// outermost scoped holder ([`Holding::scoped`]) holds; 0 if none.
    static SCOPED: Cell<usize> = Cell::new(0);
}

/// Marks the calling thread as holding the lock of object `id` until dropped.
pub(crate) struct Holding {
    /// Where the record is: an index of `HELD`, [`Holding::IN_SCOPED`], or
    /// [`Holding::UNTRACKED`] (one plain word: the fast paths move it by value).
    slot: usize,
}

impl Holding {
    /// The record is in `SCOPED`.
    const IN_SCOPED: usize = TRACKED;
    /// No record (nesting deeper than `TRACKED`, or the thread is exiting).
    const UNTRACKED: usize = TRACKED + 1;

    /// Records that the calling thread now holds the lock of object `id` (non-zero, even).
    #[inline]
    pub(crate) fn new(id: usize) -> Self {
        let slot = HELD
            .try_with(|h| {
                let i = h.iter().position(|x| x.get() == 0)?;
                h[i].set(id);
                Some(i)
            })
            .ok()
            .flatten();
        Holding { slot: slot.unwrap_or(Self::UNTRACKED) }
    }

    /// [`Holding::new`] for a short holder (a direct update, a read, a [`Synced`] guard of
    /// an object with nothing logged): the first one records its object in one
    /// thread-local cell, and those that start while it lives (a direct update of another
    /// object from inside an `exec`, say) in the list. Only the holder that took the cell
    /// clears it, so holders may end in any order (guards do).
    ///
    /// [`Synced`]: crate::Synced
    #[inline(always)]
    pub(crate) fn scoped(id: usize) -> Self {
        let outermost = SCOPED
            .try_with(|c| {
                let free = c.get() == 0;
                if free {
                    c.set(id);
                }
                free
            })
            .unwrap_or(false);
        if outermost { Holding { slot: Self::IN_SCOPED } } else { Self::nested(id) }
    }

    /// The record as a small integer (below 8), for a guard that keeps it packed with
    /// other bits; [`Holding::from_raw`] gives it back, to be dropped.
    #[inline(always)]
    pub(crate) fn into_raw(self) -> usize {
        let slot = self.slot;
        std::mem::forget(self);
        slot
    }

    /// The record that [`Holding::into_raw`] gave as `raw`.
    #[inline(always)]
    pub(crate) fn from_raw(raw: usize) -> Self {
        debug_assert!(raw <= Self::UNTRACKED, "not a re-entry record");
        Holding { slot: raw }
    }

    /// [`Holding::scoped`] for a read of object `id` (non-zero, even) on the concurrent
    /// path, without its lock.
    #[inline(always)]
    pub(crate) fn scoped_reading(id: usize) -> Self {
        Self::scoped(id | 1)
    }

    /// [`Holding::scoped`] inside another scoped holder: the list.
    #[cold]
    #[inline(never)]
    fn nested(id: usize) -> Self {
        Self::new(id)
    }
}

impl Drop for Holding {
    #[inline(always)]
    fn drop(&mut self) {
        if self.slot == Self::IN_SCOPED {
            // The outermost scoped holder: those nested in it have ended.
            let _ = SCOPED.try_with(|c| c.set(0));
        } else if self.slot < TRACKED {
            let _ = HELD.try_with(|h| h[self.slot].set(0));
        }
    }
}

/// Whether the calling thread holds the lock of object `id`.
pub(crate) fn holds(id: usize) -> bool {
    SCOPED.try_with(Cell::get).is_ok_and(|x| x == id)
        || HELD.try_with(|h| h.iter().any(|x| x.get() == id)).unwrap_or(false)
}

/// Whether the calling thread holds the lock of object `id` or reads it concurrently.
pub(crate) fn involved(id: usize) -> bool {
    // Ids are addresses of aligned objects: bit 0 is free, and marks a reader.
    SCOPED.try_with(Cell::get).is_ok_and(|x| x | 1 == id | 1)
        || HELD.try_with(|h| h.iter().any(|x| x.get() | 1 == id | 1)).unwrap_or(false)
}

/// Panics if the calling thread reads object `id` on the concurrent path: a writer is about
/// to wait for it to leave.
#[cold]
pub(crate) fn check_reading(id: usize) {
    if holds(id | 1) {
        panic!(
            "oplog: synchronize, update or drop of an object from inside its own read closure: \
             the closure reads without the lock, and the change would wait for it forever"
        );
    }
}

/// Panics if the calling thread holds the lock of object `id`: it is about to wait for it.
/// `what` names the call ("read", "synchronize", "into_inner or drop").
#[cold]
pub(crate) fn check_lock(id: usize, what: &str) {
    if holds(id) {
        panic!(
            "oplog: {what} of an object from inside its own Update::exec, absorption hook or read \
             closure: this thread holds the object's lock and would wait for itself forever"
        );
    }
}

/// Runs `f` (a call of [`Update::absorb_local`](crate::Update::absorb_local)) with the
/// calling thread marked as holding its log slot: a wait that may be for that slot panics.
#[inline]
pub(crate) fn absorbing<R>(f: impl FnOnce() -> R) -> R {
    oplog_percore::primitive::must_not_wait(
        "oplog: an OpLog call from inside Update::absorb_local had to wait: the hook runs \
         while this thread holds its core's log slot, so it must not update, read or drop \
         OpLog objects",
        f,
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn holding_is_tracked_and_released() {
        assert!(!holds(7));
        {
            let _a = Holding::new(7);
            let _b = Holding::new(9);
            assert!(holds(7) && holds(9));
        }
        assert!(!holds(7) && !holds(9));
    }

    #[test]
    fn scoped_holders_nest() {
        {
            let _a = Holding::scoped(8);
            {
                let _b = Holding::scoped_reading(16);
                let _c = Holding::new(24);
                assert!(holds(8) && holds(17) && holds(24) && involved(16) && !holds(16));
            }
            assert!(holds(8) && !involved(16) && !holds(24));
        }
        assert!(!involved(8));
        let _d = Holding::scoped(32);
        assert!(holds(32));
    }

    /// Waits as a spin-wait that finds its lock taken does, long enough to start yielding.
    fn wait_long() {
        let mut backoff = oplog_percore::primitive::Backoff::default();
        (0..=oplog_percore::primitive::Backoff::SPIN_STEPS + 1).for_each(|_| backoff.snooze());
    }

    #[test]
    fn waiting_inside_absorb_local_panics() {
        wait_long();
        let r = std::panic::catch_unwind(|| absorbing(wait_long));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("absorb_local"), "{msg}");
        wait_long();
    }
}
