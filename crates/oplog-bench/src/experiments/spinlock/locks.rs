//! The locks of `spinlock`: a ticket lock (001 Figure A-1), an MCS queue lock
//! (Mellor-Crummey and Scott 1991, 001 ref. \[21\]) and `std::sync::Mutex`.
//!
//! These are benchmark baselines, not library code, so they use std atomics directly.
//!
//! **Ticket lock.** Two counters in one cache line, as in Linux: `next` (the next ticket to
//! hand out) and `current` (the ticket now served). Acquire takes a ticket with an atomic
//! increment of `next` and spins until `current` equals it; release increments `current`
//! (only the holder writes it). Every waiter spins on the same line, so each release
//! invalidates all of them and they re-read it one after another: the hand-off costs time
//! proportional to the number of waiters, the cause of collapse (001 §A.1).
//!
//! **MCS lock.** Each acquirer brings a queue node (on its stack, for the duration of
//! [`BenchLock::with`]) and swaps it into `tail`; if there was a predecessor, it links
//! itself behind it and spins on a flag *in its own node*. Release hands the lock to the
//! successor by clearing that successor's flag, or, with no successor, swings `tail` back
//! to null; if that fails a successor is between its swap and its link, so release waits
//! for the link. Each waiter spins on its own line: a hand-off costs one transfer whatever
//! the number of waiters.

use std::cell::UnsafeCell;
use std::hint::spin_loop;
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};

use crossbeam_utils::CachePadded;

/// A lock around a critical section.
pub trait BenchLock: Sync + Default {
    /// Stable id: the `impl` field of records.
    const ID: &'static str;

    /// Runs `f` while holding the lock.
    fn with<R>(&self, f: impl FnOnce() -> R) -> R;
}

/// The ticket lock of 001 Figure A-1.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct TicketLock {
    /// The ticket being served.
    current: AtomicU32,
    /// The next ticket to hand out.
    next: AtomicU32,
}

impl BenchLock for TicketLock {
    const ID: &'static str = "ticket";

    #[inline]
    fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        while self.current.load(Ordering::Acquire) != ticket {
            spin_loop();
        }
        let result = f();
        // Only the holder writes `current`, so load + store is the increment.
        self.current.store(ticket.wrapping_add(1), Ordering::Release);
        result
    }
}

/// One acquirer's place in an MCS queue.
#[derive(Debug)]
struct McsNode {
    /// Set while this acquirer must wait; cleared by its predecessor's release.
    waiting: AtomicBool,
    /// The successor, once it has linked itself.
    next: AtomicPtr<CachePadded<McsNode>>,
}

/// The MCS queue lock.
#[derive(Debug)]
pub struct McsLock {
    tail: CachePadded<AtomicPtr<CachePadded<McsNode>>>,
}

impl Default for McsLock {
    fn default() -> Self {
        Self { tail: CachePadded::new(AtomicPtr::new(ptr::null_mut())) }
    }
}

impl BenchLock for McsLock {
    const ID: &'static str = "mcs";

    #[inline]
    fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        let node = CachePadded::new(McsNode { waiting: AtomicBool::new(true), next: AtomicPtr::new(ptr::null_mut()) });
        let me = &node as *const CachePadded<McsNode> as *mut CachePadded<McsNode>;
        let predecessor = self.tail.swap(me, Ordering::AcqRel);
        if !predecessor.is_null() {
            // SAFETY: a node stays alive until its owner's release has handed the lock on.
            // The predecessor's release cannot finish before it sees our link: its CAS of
            // `tail` from its node fails (tail is now `me`), so it waits for `next`.
            unsafe { &*predecessor }.next.store(me, Ordering::Release);
            while node.waiting.load(Ordering::Acquire) {
                spin_loop();
            }
        }
        let result = f();
        let mut successor = node.next.load(Ordering::Acquire);
        if successor.is_null() {
            if self.tail.compare_exchange(me, ptr::null_mut(), Ordering::Release, Ordering::Relaxed).is_ok() {
                return result;
            }
            // A successor swapped itself in and is about to link.
            loop {
                successor = node.next.load(Ordering::Acquire);
                if !successor.is_null() {
                    break;
                }
                spin_loop();
            }
        }
        // SAFETY: the successor is spinning on its `waiting` flag inside its own `with`,
        // so its node is alive; after this store we never touch it again.
        unsafe { &*successor }.waiting.store(false, Ordering::Release);
        result
    }
}

/// `std::sync::Mutex<()>` (futex-based: spins briefly, then sleeps).
#[derive(Debug, Default)]
pub struct StdMutex(Mutex<()>);

impl BenchLock for StdMutex {
    const ID: &'static str = "mutex";

    #[inline]
    fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f()
    }
}

/// A counter that only the holder of `lock` touches: the serial section's shared data, and
/// the check that the lock excludes.
#[derive(Debug, Default)]
pub struct Guarded<L> {
    /// The lock.
    pub lock: L,
    count: UnsafeCell<u64>,
}

// SAFETY: `count` is only accessed inside `lock.with` (in `increment` and `count`), so no
// two threads access it at once when `L` is a lock.
unsafe impl<L: BenchLock> Sync for Guarded<L> {}

impl<L: BenchLock> Guarded<L> {
    /// Runs `serial` and adds one to the counter, both under the lock.
    #[inline]
    pub fn increment(&self, serial: impl FnOnce()) {
        self.lock.with(|| {
            serial();
            // SAFETY: inside `with`, this thread holds the lock, and the lock is the only
            // way to reach `count` while shared.
            unsafe { *self.count.get() += 1 };
        });
    }

    /// The counter, read under the lock.
    pub fn count(&self) -> u64 {
        // SAFETY: inside `with`, as in `increment`.
        self.lock.with(|| unsafe { *self.count.get() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excludes<L: BenchLock>() {
        // Under Miri 250 increments a thread: Miri preempts the running thread about every
        // hundred basic blocks (its default preemption rate), so the four threads still find
        // each lock held and queue, spin and hand over many times in 1,000 increments;
        // 20,000 per lock only repeated that, for most of a minute of Miri time.
        const PER_THREAD: u64 = if cfg!(miri) { 250 } else { 5_000 };
        let guarded = Guarded::<L>::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                let g = &guarded;
                s.spawn(move || {
                    for _ in 0..PER_THREAD {
                        g.increment(|| {});
                    }
                });
            }
        });
        assert_eq!(guarded.count(), 4 * PER_THREAD, "{} lost increments", L::ID);
    }

    #[test]
    fn every_lock_excludes() {
        excludes::<TicketLock>();
        excludes::<McsLock>();
        excludes::<StdMutex>();
    }

    #[test]
    fn ticket_lock_serves_in_ticket_order() {
        let lock = TicketLock::default();
        lock.with(|| assert_eq!(lock.next.load(Ordering::Relaxed), 1));
        assert_eq!((lock.current.load(Ordering::Relaxed), lock.next.load(Ordering::Relaxed)), (1, 1));
    }
}
