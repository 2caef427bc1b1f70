//! Every shared-memory primitive RLU uses, in one place: `std` by default, loom's under
//! `--cfg loom` (so that `tests/loom.rs` explores the interleavings of the slot and object
//! atomics and checks every access to a value cell), plus the barrier that keeps memory
//! accesses after a clock reading.
//!
//! Process-wide counters that no modelled interleaving depends on (domain ids) use `std`
//! atomics directly where they are defined.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, fence};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, fence};

pub(crate) use std::sync::atomic::Ordering;

/// Keeps every later memory access of this thread after the clock reading that precedes
/// it in program order.
///
/// RLU decides who saw what by comparing timestamps, so a timestamp must be taken where
/// the program takes it. A shared counter's load is ordered like any `SeqCst` access, but a
/// hardware clock read is not a memory access: `rdtscp` waits for earlier instructions, yet
/// "subsequent instructions may begin execution before the read operation is performed"
/// (Intel SDM, RDTSCP), so a later load could be satisfied before the reading it must
/// follow; the SDM's remedy is an `lfence` after it. On aarch64 an `isb` does the same for
/// `cntvct_el0`. Cheap (a few cycles once the reading is done); under loom and Miri, where
/// the clock is an ordinary memory access or a system call, nothing.
#[inline(always)]
pub(crate) fn after_clock_read() {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    // SAFETY: `lfence` exists on every x86-64 CPU (SSE2 is part of the base ISA) and touches
    // no memory; without `nomem` it is also a compiler barrier.
    unsafe {
        core::arch::asm!("lfence", options(nostack, preserves_flags));
    }
    #[cfg(all(target_arch = "aarch64", not(loom), not(miri)))]
    // SAFETY: `isb` is available at EL0 and touches no memory; without `nomem` it is also a
    // compiler barrier.
    unsafe {
        core::arch::asm!("isb", options(nostack, preserves_flags));
    }
    #[cfg(any(loom, miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

/// Waiting that first spins, then yields the CPU (a preempted lock holder or reader can
/// then run on a machine with more threads than cores). Under loom every step yields.
#[derive(Debug, Default)]
pub(crate) struct Backoff(u32);

impl Backoff {
    /// One waiting step.
    #[inline]
    pub(crate) fn snooze(&mut self) {
        #[cfg(loom)]
        {
            self.0 = self.0.saturating_add(1);
            loom::thread::yield_now();
        }
        #[cfg(not(loom))]
        {
            if self.0 < 6 {
                for _ in 0..(1u32 << self.0) {
                    std::hint::spin_loop();
                }
                self.0 += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// An identifier of the calling thread, unique among live threads: the address of a
/// thread-local. Used to refuse a commit that would wait for a section this same thread
/// holds open (it would wait forever).
pub(crate) fn thread_tag() -> usize {
    #[cfg(not(loom))]
    std::thread_local!(static TAG: u8 = const { 0 });
    #[cfg(loom)]
    loom::thread_local!(static TAG: u8 = 0);
    TAG.with(|t| std::ptr::from_ref(t) as usize)
}

#[cfg(not(loom))]
mod cell {
    /// The value cell of an object or a copy (`std::cell::UnsafeCell`, or loom's checked
    /// one under `--cfg loom`).
    #[derive(Debug)]
    pub(crate) struct Cell<T>(std::cell::UnsafeCell<T>);

    /// What keeps a read of a [`Cell`] registered for as long as a section may use the
    /// reference it returned: nothing outside loom.
    pub(crate) type ReadGuard = ();

    impl<T> Cell<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(std::cell::UnsafeCell::new(value))
        }

        /// Runs `f` with a pointer for reading.
        #[inline(always)]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        /// Runs `f` with a pointer for writing.
        #[inline(always)]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }

        /// A pointer for reading that stays valid (and, under loom, registered as a read)
        /// while the guard lives.
        #[inline(always)]
        pub(crate) fn read(&self) -> (*const T, ReadGuard) {
            (self.0.get(), ())
        }

        pub(crate) fn get_mut(&mut self) -> &mut T {
            self.0.get_mut()
        }

        pub(crate) fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }
}

#[cfg(loom)]
mod cell {
    /// The value cell of an object or a copy: loom's checked `UnsafeCell`.
    #[derive(Debug)]
    pub(crate) struct Cell<T>(loom::cell::UnsafeCell<T>);

    /// Loom's record of a read in progress, type-erased so that a section can keep the
    /// reads of values of any type until it ends.
    pub(crate) type ReadGuard = Box<dyn std::any::Any>;

    impl<T: 'static> Cell<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(loom::cell::UnsafeCell::new(value))
        }

        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            self.0.with(f)
        }

        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            self.0.with_mut(f)
        }

        pub(crate) fn read(&self) -> (*const T, ReadGuard) {
            let guard = self.0.get();
            // SAFETY: the pointer comes from a live cell; loom checks the access for as long
            // as the guard is kept.
            let ptr: *const T = unsafe { guard.deref() };
            (ptr, Box::new(guard))
        }

        pub(crate) fn get_mut(&mut self) -> &mut T {
            // SAFETY: `&mut self` excludes every other access.
            self.0.with_mut(|p| unsafe { &mut *p })
        }

        pub(crate) fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }
}

pub(crate) use cell::{Cell, ReadGuard};
