//! The baseline counters the papers measure OpLog against.
//!
//! - [`AtomicCounter`] (`atomic`): one shared `AtomicU64`; every increment takes the line.
//! - [`MutexCounter`] (`mutex`): a `std::sync::Mutex<u64>`; the lock word is the shared line.
//! - [`PerCoreAtomicCounter`] (`percore-atomic`): one padded atomic per CPU, chosen by
//!   `sched_getcpu`; increments stay on the current core's line (an atomic RMW still, since a
//!   thread may migrate between reading its CPU id and incrementing), reads sum every slot.
//! - [`FastCounter`] (`fast-counter`): the `fast-counter` crate's `ConcurrentCounter`, one
//!   padded `AtomicIsize` per CPU chosen by a thread-local index (`fetch_add`): the published
//!   crate closest to Java's `LongAdder`, and the peer a user would reach for.
//! - [`PerCoreStoreCounter`] (`percore-store`): one padded word per thread, incremented with
//!   a plain load and store (no atomic instruction, no CPU id): the physical floor of a
//!   counter increment, so every run shows how far from it the others are. Correct only
//!   because each thread owns its word; not a counter anyone could share.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

use super::CounterImpl;
use crate::pin;

/// One shared `AtomicU64`, incremented with `fetch_add(1, Relaxed)`.
#[derive(Debug, Default)]
pub struct AtomicCounter {
    value: AtomicU64,
}

impl CounterImpl for AtomicCounter {
    const ID: &'static str = "atomic";

    fn new(_threads: usize) -> Self {
        Self::default()
    }

    #[inline]
    fn inc(&self, _thread: usize) {
        self.value.fetch_add(1, Ordering::Relaxed);
    }

    fn read(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }
}

/// A `u64` behind a `std::sync::Mutex`: the "lock around the sequential type" baseline.
#[derive(Debug, Default)]
pub struct MutexCounter {
    value: Mutex<u64>,
}

impl CounterImpl for MutexCounter {
    const ID: &'static str = "mutex";

    fn new(_threads: usize) -> Self {
        Self::default()
    }

    #[inline]
    fn inc(&self, _thread: usize) {
        *self.value.lock().expect("counter mutex poisoned") += 1;
    }

    fn read(&self) -> u64 {
        *self.value.lock().expect("counter mutex poisoned")
    }
}

/// One cache-padded `AtomicU64` per CPU id, indexed by the CPU the caller runs on.
#[derive(Debug)]
pub struct PerCoreAtomicCounter {
    slots: Box<[CachePadded<AtomicU64>]>,
}

impl CounterImpl for PerCoreAtomicCounter {
    const ID: &'static str = "percore-atomic";

    fn new(_threads: usize) -> Self {
        let slots = (0..pin::cpu_id_bound()).map(|_| CachePadded::new(AtomicU64::new(0))).collect();
        Self { slots }
    }

    #[inline]
    fn inc(&self, _thread: usize) {
        let slot = ordo::cpu::current() % self.slots.len();
        self.slots[slot].fetch_add(1, Ordering::Relaxed);
    }

    fn read(&self) -> u64 {
        self.slots.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

/// `fast_counter::ConcurrentCounter` with one cell per CPU id (as [`PerCoreAtomicCounter`]),
/// so threads on distinct CPUs rarely share a cell.
#[derive(Debug)]
pub struct FastCounter {
    counter: fast_counter::ConcurrentCounter,
}

impl CounterImpl for FastCounter {
    const ID: &'static str = "fast-counter";

    fn new(_threads: usize) -> Self {
        Self { counter: fast_counter::ConcurrentCounter::new(pin::cpu_id_bound()) }
    }

    #[inline]
    fn inc(&self, _thread: usize) {
        self.counter.add(1);
    }

    fn read(&self) -> u64 {
        u64::try_from(self.counter.sum()).expect("an increment-only counter is never negative")
    }
}

/// One cache-padded word per thread, incremented by its thread alone with a relaxed load
/// and store (plain `mov`s on x86-64).
#[derive(Debug)]
pub struct PerCoreStoreCounter {
    slots: Box<[CachePadded<AtomicU64>]>,
}

impl CounterImpl for PerCoreStoreCounter {
    const ID: &'static str = "percore-store";

    fn new(threads: usize) -> Self {
        Self { slots: (0..threads.max(1)).map(|_| CachePadded::new(AtomicU64::new(0))).collect() }
    }

    #[inline]
    fn inc(&self, thread: usize) {
        // Opaque to the optimizer: without it, a batch of increments folds into one add
        // (measured: 0.25 ns per "increment"), which is no floor of anything.
        let slot = std::hint::black_box(&self.slots[thread]);
        slot.store(slot.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    fn read(&self) -> u64 {
        self.slots.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts<C: CounterImpl>() {
        let c = C::new(2);
        assert_eq!(c.read(), 0);
        std::thread::scope(|s| {
            for t in 0..2 {
                let c = &c;
                s.spawn(move || (0..1000).for_each(|_| c.inc(t)));
            }
        });
        assert_eq!(c.read(), 2000, "{}", C::ID);
    }

    #[test]
    fn baselines_count_exactly() {
        counts::<AtomicCounter>();
        counts::<MutexCounter>();
        counts::<PerCoreAtomicCounter>();
        counts::<FastCounter>();
        counts::<PerCoreStoreCounter>();
    }
}
