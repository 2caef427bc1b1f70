//! The ticket spinlock of the texts' "stock" baselines.
//!
//! Linux 3.8, the kernel 000 §3 measures, protects the dentry's generation check and
//! reference count (and the rmap interval tree, the inotify queue) with ticket spinlocks:
//! a waiter takes a ticket with one atomic increment and spins until the "now serving"
//! number reaches it. Every acquisition writes the lock's cache line, and every release is
//! seen by every waiter, which is why throughput collapses under contention (000 §3; the
//! Markov model of 001 Appendix A).
//!
//! [`TicketLock`] is that lock, built on [`oplog_percore::primitive`] atomics and cells so that loom
//! and the commutativity checker's tracer see its accesses. Unlike a kernel spinlock, a
//! user-space waiter may be waiting for a holder that the scheduler preempted, so after
//! spinning a while it yields the CPU ([`Backoff`]).

use oplog_percore::primitive::{AtomicU64, Backoff, GuardAccess, Ordering, UnsafeCell};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A FIFO ticket spinlock around a `T`, with the data on the lock's cache line.
pub struct TicketLock<T> {
    /// The next ticket to hand out.
    next: AtomicU64,
    /// The ticket that holds the lock.
    serving: AtomicU64,
    data: UnsafeCell<T>,
}

// SAFETY: the data is only accessed through a guard, and a guard exists only for the one
// thread whose ticket is being served, so sharing the lock shares no unsynchronized access.
unsafe impl<T: Send> Sync for TicketLock<T> {}

impl<T> TicketLock<T> {
    /// An unlocked lock around `value`; `label` names the field for tracing builds.
    pub fn new(value: T, label: &'static str) -> Self {
        Self { next: AtomicU64::new(0, label), serving: AtomicU64::new(0, label), data: UnsafeCell::new(value, label) }
    }

    /// Takes a ticket and waits until it is served.
    #[inline]
    pub fn lock(&self) -> TicketGuard<'_, T> {
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        if self.serving.load(Ordering::Acquire) != ticket {
            let mut backoff = Backoff::default();
            while self.serving.load(Ordering::Acquire) != ticket {
                backoff.snooze();
            }
        }
        TicketGuard { lock: self, data: GuardAccess::start(&self.data) }
    }

    /// The value, for the sole owner.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: Default> Default for TicketLock<T> {
    fn default() -> Self {
        Self::new(T::default(), "TicketLock")
    }
}

impl<T> fmt::Debug for TicketLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TicketLock")
            .field("next", &self.next.load(Ordering::Relaxed))
            .field("serving", &self.serving.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Access to a [`TicketLock`]'s data; releases the lock when dropped.
pub struct TicketGuard<'a, T> {
    lock: &'a TicketLock<T>,
    /// Ended before the lock is released.
    data: GuardAccess<T>,
}

impl<T> Deref for TicketGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the access started on the lock's data when this guard's ticket was
        // served, and it ends in drop, before the lock is handed on.
        unsafe { self.data.shared(&self.lock.data) }
    }
}

impl<T> DerefMut for TicketGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`.
        unsafe { self.data.exclusive(&self.lock.data) }
    }
}

impl<T> Drop for TicketGuard<'_, T> {
    fn drop(&mut self) {
        self.data.end();
        // Only the holder writes `serving`: a load and a store hand the lock on.
        let now = self.lock.serving.load(Ordering::Relaxed);
        self.lock.serving.store(now.wrapping_add(1), Ordering::Release);
    }
}

impl<T: fmt::Debug> fmt::Debug for TicketGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TicketGuard").field(&**self).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excludes_and_hands_on_in_order() {
        let lock = TicketLock::new(0u64, "test");
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..2_000 {
                        let mut g = lock.lock();
                        // A non-atomic read-modify-write: lost updates would show.
                        let v = *g;
                        std::hint::black_box(&v);
                        *g = v + 1;
                    }
                });
            }
        });
        assert_eq!(lock.into_inner(), 8_000);
    }

    /// Two shared borrows of one guard may live at once (under Miri, a borrow that ends the
    /// other is undefined behaviour).
    #[test]
    fn shared_borrows_of_a_guard_coexist() {
        let lock = TicketLock::new(7u64, "test");
        let mut g = lock.lock();
        *g += 1;
        let (a, b) = (&*g, &*g);
        assert_eq!((*a, *b), (8, 8));
    }
}
