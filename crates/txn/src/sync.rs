//! The shared-memory primitives the engines use: std's, or loom's under `--cfg loom`, so the
//! loom models (`tests/loom.rs`) explore every interleaving of a commit against a reader.
//! Spin-wait hints become yields under loom, so a model can make progress.

#[cfg(not(loom))]
pub(crate) use std::sync::Mutex;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, fence};

#[cfg(loom)]
pub(crate) use loom::sync::Mutex;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, fence};

/// One iteration of a short spin-wait: a CPU hint, and a yield every 64 iterations so that a
/// waiter does not burn its time slice while the thread it waits for is preempted (tests run
/// more threads than cores). `spins` counts the iterations so far.
#[inline]
pub(crate) fn spin_wait(spins: &mut u32) {
    *spins = spins.wrapping_add(1);
    #[cfg(not(loom))]
    {
        if spins.is_multiple_of(64) {
            std::thread::yield_now();
        } else {
            core::hint::spin_loop();
        }
    }
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Yields the processor (a retry's back-off once spinning has gone on long enough).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// A CPU hint in a back-off loop (a yield under loom).
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}
