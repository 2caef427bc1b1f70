//! The shared-memory primitives the STM uses, in one place so that `--cfg loom` can swap
//! them: the orec and value atomics, the spin and yield hints of the backoff, and the
//! reclamation of replaced values.
//!
//! * default: `std` atomics and crossbeam-epoch. A transaction pins the epoch for each
//!   attempt; a commit that replaces a value hands the old box to the epoch collector,
//!   which frees it once every thread pinned at that time has unpinned, so a concurrent
//!   reader that loaded the old pointer can still clone from it.
//! * `--cfg loom`: loom's atomics, so loom explores the interleavings of a commit with a
//!   concurrent reader (tests/loom.rs); spin hints yield to loom's scheduler. Loom cannot
//!   model crossbeam-epoch (its thread-locals and global lists are outside the model), so
//!   under loom a replaced value is leaked instead of reclaimed: the models check the
//!   commit protocol, the reclamation is crossbeam's.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU64};
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU64};

/// A busy-wait hint for one iteration of a spin.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Gives the CPU to another thread (a long backoff, or a [`Tx::retry`](crate::Tx::retry)
/// wait).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// The reclamation epoch an attempt holds while it may dereference values.
#[cfg(not(loom))]
pub(crate) struct Guard(crossbeam_epoch::Guard);

/// Under loom: nothing to pin (replaced values are leaked, see the module docs).
#[cfg(loom)]
pub(crate) struct Guard;

impl Guard {
    /// Pins the calling thread.
    #[inline]
    pub(crate) fn pin() -> Self {
        #[cfg(not(loom))]
        return Guard(crossbeam_epoch::pin());
        #[cfg(loom)]
        return Guard;
    }

    /// Frees `ptr` once no thread that may have loaded it is still pinned.
    ///
    /// # Safety
    /// `ptr` came from `Box::into_raw`, is no longer reachable from shared memory (it was
    /// swapped out of its variable), and is retired once.
    #[inline]
    pub(crate) unsafe fn retire<T: Send + 'static>(&self, ptr: *mut T) {
        #[cfg(not(loom))]
        {
            let ptr = SendPtr(ptr);
            // SAFETY: the closure frees a box nobody can reach any more once the threads
            // pinned now have unpinned (the caller's contract); `T: Send + 'static`, so it
            // may be dropped on whichever thread collects it, whenever that is.
            unsafe { self.0.defer_unchecked(move || drop(Box::from_raw(ptr.into_inner()))) };
        }
        #[cfg(loom)]
        let _ = ptr;
    }
}

/// A raw pointer moved into a deferred destructor (which may run on another thread).
#[cfg(not(loom))]
struct SendPtr<T>(*mut T);

// SAFETY: the pointee is `Send` and the pointer is the only way left to reach it.
#[cfg(not(loom))]
unsafe impl<T: Send> Send for SendPtr<T> {}

#[cfg(not(loom))]
impl<T> SendPtr<T> {
    /// The pointer (a method, so that a closure captures the whole `SendPtr`).
    fn into_inner(self) -> *mut T {
        self.0
    }
}
