//! The Refcache fields of one object, in one word, and their transitions.
//!
//! 002 Figure 8-3 gives each object a global reference count, a `dirty` flag, membership of a
//! review queue, and a weak reference `⟨pointer, dying⟩`, protected by a fine-grained lock
//! (§8.1.3). Here they share one 64-bit word and every locked region of the figure becomes one
//! compare-and-swap of that word, so no lock is needed and no transition can be half done:
//!
//! | bits | field | figure |
//! |---|---|---|
//! | 0–47 | global count, signed (it goes negative when a decrement is flushed before its increment) | `obj.refcnt` |
//! | 48 | on a review queue | "obj is on a review queue" |
//! | 49 | dirty | `obj.dirty` |
//! | 50 | dying | `obj.weakref.dying` |
//! | 51 | freed: the weak reference's pointer is null | `obj.weakref = ⟨null, …⟩` |
//!
//! Every weak handle of an object shares this one weak reference (they all point at the same
//! header), so the two-phase protocol that 002 §8.1.2 sketches for several weak references to
//! one object is not needed.
//!
//! * [`Header::evict`] is `evict(obj, delta)`: add a flushed delta; a count that lands on zero
//!   queues the object (and marks it dying) or, if it is already queued, marks it dirty.
//! * [`Header::examine`] is the body of `review`'s loop for a queued object whose epoch is two
//!   behind: still counted (leave the queue, no longer dying), dirty or revived (queue again),
//!   or a true zero (free: the weak reference becomes null in the same step).
//! * [`Header::revive`] is `tryget`'s compare-and-swap: clear `dying` unless freed.

use oplog_percore::primitive::{AtomicU64, Ordering};
use std::ptr::NonNull;

const COUNT_BITS: u32 = 48;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
/// Largest magnitude the global count may reach; beyond it the process aborts, as `Arc` does.
const COUNT_LIMIT: i64 = (1 << (COUNT_BITS - 1)) - 1;
const QUEUED: u64 = 1 << 48;
const DIRTY: u64 = 1 << 49;
const DYING: u64 = 1 << 50;
const FREED: u64 = 1 << 51;

/// Frees an object whose true count Refcache proved zero: drops its value and releases the
/// strong handles' share of the allocation.
pub(crate) type FreeFn = unsafe fn(NonNull<Header>);

/// The Refcache part of a reference-counted object: the state word and how to free it. The
/// handle layer puts it first in a `repr(C)` allocation, so a pointer to the allocation is a
/// pointer to its header.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Header {
    state: AtomicU64,
    free: FreeFn,
}

/// What [`Header::examine`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The global count is not zero: the object left the queue and is no longer dying.
    Live,
    /// A zero, but dirty or revived through its weak reference: examine it again two epochs
    /// from now.
    Requeue,
    /// A true zero: the object is marked freed and must be freed now.
    Free,
}

/// A snapshot of an object's Refcache fields (for tests and diagnostics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectState {
    /// The global count: the true count minus the deltas still in per-core caches.
    pub global: i64,
    /// On some core's review queue.
    pub queued: bool,
    /// A flush touched the object since it was (re)queued (a "dirty zero", 002 §8.1.1).
    pub dirty: bool,
    /// The weak reference's dying bit (002 §8.1.2).
    pub dying: bool,
    /// Freed: the weak reference is null and the value has been (or is being) dropped.
    pub freed: bool,
}

#[inline(always)]
fn count(word: u64) -> i64 {
    ((word << (64 - COUNT_BITS)) as i64) >> (64 - COUNT_BITS)
}

#[inline(always)]
fn with_count(word: u64, count: i64) -> u64 {
    (word & !COUNT_MASK) | (count as u64 & COUNT_MASK)
}

#[cold]
fn count_overflow(count: i64, delta: i64) -> ! {
    eprintln!("oplog-refcount: reference count overflow ({count} + {delta}); aborting");
    std::process::abort()
}

impl Header {
    /// A live object with global count `count` (its creating handles) that `free` frees.
    pub(crate) fn new(count: i64, free: FreeFn) -> Self {
        Header { state: AtomicU64::new(with_count(0, count), "Header.state"), free }
    }

    /// The function that frees this object.
    pub(crate) fn free_fn(&self) -> FreeFn {
        self.free
    }

    /// Changes the word atomically (a compare-and-swap loop): `f(word)` returns the new word
    /// and the result, or `Err(result)` to leave the word as it is. Each call is one of the
    /// locked regions of Figure 8-3.
    ///
    /// `AcqRel`: every handle's use of the object happens before the decrement that releases
    /// it, which is flushed here (`Release`), so the review that later frees the object after
    /// reading this word (`Acquire`) runs the destructor after all of them.
    #[inline]
    fn transition<R>(&self, mut f: impl FnMut(u64) -> Result<(u64, R), R>) -> R {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            match f(s) {
                Err(r) => return r,
                Ok((next, r)) => match self.state.compare_exchange(s, next, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return r,
                    Err(now) => s = now,
                },
            }
        }
    }

    /// 002 Figure 8-3 `evict(obj, delta)`, without the queue push: applies a flushed `delta`
    /// and returns true if the object must now be added to the evicting core's review queue
    /// (its count reached zero and it was on no queue; it is now marked queued and dying).
    #[inline]
    pub(crate) fn evict(&self, delta: i64) -> bool {
        self.transition(|s| {
            // "If delta = 0 and obj.refcnt ≠ 0: return": a zero delta only matters to a zero
            // count, which it must mark dirty.
            if delta == 0 && count(s) != 0 {
                return Err(false);
            }
            debug_assert!(s & FREED == 0, "a delta was flushed to a freed object");
            let c = count(s) + delta;
            if !(-COUNT_LIMIT..=COUNT_LIMIT).contains(&c) {
                count_overflow(count(s), delta);
            }
            let next = with_count(s, c);
            Ok(match (c, s & QUEUED != 0) {
                (0, false) => ((next | QUEUED | DYING) & !DIRTY, true),
                (0, true) => (next | DIRTY, false),
                _ => (next, false),
            })
        })
    }

    /// The body of 002 Figure 8-3 `review`'s loop for this queued object (see [`Verdict`]).
    pub(crate) fn examine(&self) -> Verdict {
        self.transition(|s| {
            debug_assert!(s & QUEUED != 0 && s & FREED == 0, "examined an object that is not queued");
            Ok(if count(s) != 0 {
                (s & !(QUEUED | DYING), Verdict::Live)
            } else if s & DIRTY != 0 || s & DYING == 0 {
                // Dirty, or a `tryget` cleared `dying`: the figure's failed compare-and-swap.
                ((s | DYING) & !DIRTY, Verdict::Requeue)
            } else {
                ((s & !(QUEUED | DYING)) | FREED, Verdict::Free)
            })
        })
    }

    /// `tryget`'s compare-and-swap (002 Figure 8-3): false if the object is freed; otherwise
    /// clears `dying` and returns true, and the caller must count the new reference in the
    /// same core critical section.
    ///
    /// When `dying` is already clear there is nothing to swap: the word is only read. That is
    /// safe because the caller holds its core's lock: a review that marks the object dying
    /// after this read frees it only after every core, this one included, has flushed since,
    /// and this core's flush waits for the caller's increment.
    pub(crate) fn revive(&self) -> bool {
        self.transition(|s| match (s & FREED != 0, s & DYING != 0) {
            (true, _) => Err(false),
            (false, false) => Err(true),
            (false, true) => Ok((s & !DYING, true)),
        })
    }

    /// Whether the object has been freed (its weak reference is null).
    pub(crate) fn is_freed(&self) -> bool {
        self.state.load(Ordering::Acquire) & FREED != 0
    }

    /// The fields, read at one instant.
    pub(crate) fn snapshot(&self) -> ObjectState {
        let s = self.state.load(Ordering::Acquire);
        ObjectState {
            global: count(s),
            queued: s & QUEUED != 0,
            dirty: s & DIRTY != 0,
            dying: s & DYING != 0,
            freed: s & FREED != 0,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    unsafe fn never(_: NonNull<Header>) {
        unreachable!("these tests free nothing")
    }

    fn state(h: &Header) -> (i64, bool, bool, bool, bool) {
        let s = h.snapshot();
        (s.global, s.queued, s.dirty, s.dying, s.freed)
    }

    #[test]
    fn counts_are_signed_48_bit() {
        for c in [0, 1, -1, COUNT_LIMIT, -COUNT_LIMIT, 12345, -98765] {
            assert_eq!(count(with_count(QUEUED | DYING, c)), c);
            assert_eq!(with_count(QUEUED | DYING, c) & !COUNT_MASK, QUEUED | DYING);
        }
    }

    #[test]
    fn a_zero_queues_once_then_marks_dirty() {
        let h = Header::new(1, never);
        assert!(h.evict(-1), "the first zero queues the object");
        assert_eq!(state(&h), (0, true, false, true, false));
        assert!(!h.evict(1));
        assert_eq!(state(&h), (1, true, false, true, false), "a non-zero count does not dirty");
        assert!(!h.evict(-1), "already queued: no second queue entry");
        assert_eq!(state(&h), (0, true, true, true, false));
        assert!(!h.evict(0), "a zero delta on a zero count is still a flush");
        assert!(state(&h).2);
    }

    #[test]
    fn a_zero_delta_on_a_counted_object_changes_nothing() {
        let h = Header::new(2, never);
        assert!(!h.evict(0));
        assert_eq!(state(&h), (2, false, false, false, false));
    }

    #[test]
    fn examine_follows_figure_8_3() {
        // Still counted: leaves the queue, no longer dying.
        let h = Header::new(1, never);
        h.evict(-1);
        h.evict(1);
        assert_eq!(h.examine(), Verdict::Live);
        assert_eq!(state(&h), (1, false, false, false, false));
        // Dirty zero: queued again, clean, dying.
        h.evict(-1);
        h.evict(1);
        h.evict(-1);
        assert_eq!(h.examine(), Verdict::Requeue);
        assert_eq!(state(&h), (0, true, false, true, false));
        // Revived through the weak reference: queued again.
        assert!(h.revive());
        assert_eq!(state(&h), (0, true, false, false, false));
        assert_eq!(h.examine(), Verdict::Requeue);
        assert_eq!(state(&h), (0, true, false, true, false));
        // A clean, dying zero: freed, and tryget then fails.
        assert_eq!(h.examine(), Verdict::Free);
        assert_eq!(state(&h), (0, false, false, false, true));
        assert!(!h.revive());
        assert!(h.is_freed());
    }

    #[test]
    fn a_negative_global_count_is_not_a_zero() {
        let h = Header::new(1, never);
        assert!(!h.evict(-2), "a decrement flushed before its increment");
        assert_eq!(state(&h), (-1, false, false, false, false));
        assert!(h.evict(1));
    }
}
