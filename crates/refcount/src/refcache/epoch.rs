//! Epochs: the barrier that tells a review when every core has flushed (002 §8.1.1, §8.1.3).
//!
//! "Refcache divides time into periodic epochs during which each core calls review once to
//! flush all of the reference count deltas in its cache ... The last core in an epoch to
//! finish flushing its cache ends the epoch." The implementation is the barrier scheme of
//! §8.1.3: a global epoch, per-core epochs (each core's `flushed`, kept in its state), and a
//! count of cores that have not yet flushed in the current epoch.
//!
//! A flush counts for the epoch that was current when it *started* ([`Epochs::flush_start`]),
//! so every flush counted for epoch `e + 1` began after epoch `e` ended. An object queued in
//! epoch `e` is examined once the global epoch is `e + 2`: then every core has flushed,
//! completely, after the object was queued (one whole epoch has elapsed).
//!
//! The orderings that make "after" hold across threads, in the C++ model:
//!
//! * the advance is a `fetch_add(1, AcqRel)` of the global epoch (under the barrier's mutex);
//! * a queue entry's epoch is read with `fetch_add(0, AcqRel)` ([`Epochs::for_queue`]), right
//!   after the compare-and-swap that saw the zero. Being a read-modify-write it reads the
//!   latest epoch; if that is `e`, the advance to `e + 1` reads its write (or a later one in its
//!   release sequence) and so happens after the zero was seen;
//! * a flush reads the epoch with `Acquire` at its start: reading `e + 1` means it starts after
//!   that advance. A stale (older) value only makes the flush count for an epoch the core has
//!   already flushed in, which counts nothing: safe, merely late.
//!
//! A core created in the middle of an epoch must flush in that epoch before it ends (it joins
//! the count), which needs no argument about what it might hold.

use oplog_percore::primitive::{AtomicU64, Mutex, Ordering};

/// The epoch every domain starts in (the first epoch of 002 Figure 8-2).
pub(crate) const FIRST_EPOCH: u64 = 1;

/// The global epoch and the barrier that advances it (see the module docs).
#[derive(Debug)]
pub(crate) struct Epochs {
    current: AtomicU64,
    barrier: Mutex<Barrier>,
}

#[derive(Debug)]
struct Barrier {
    /// Equal to `current` (changed only under this mutex).
    epoch: u64,
    /// Cores that exist.
    cores: usize,
    /// Cores that have not flushed in `epoch`.
    pending: usize,
}

impl Epochs {
    pub(crate) fn new() -> Self {
        Epochs {
            current: AtomicU64::new(FIRST_EPOCH, "Epochs.current"),
            barrier: Mutex::new(Barrier { epoch: FIRST_EPOCH, cores: 0, pending: 0 }, "Epochs.barrier"),
        }
    }

    /// Registers a new core; returns its initial per-core epoch (one before the current one,
    /// so that it must flush in this epoch).
    pub(crate) fn core_created(&self) -> u64 {
        let mut b = self.barrier.lock();
        b.cores += 1;
        b.pending += 1;
        b.epoch - 1
    }

    /// The global epoch, for a flush about to start (see the module docs).
    pub(crate) fn flush_start(&self) -> u64 {
        self.current.load(Ordering::Acquire)
    }

    /// The global epoch, for deciding whether a queued object is due. A stale value only
    /// delays the decision.
    pub(crate) fn current(&self) -> u64 {
        self.current.load(Ordering::Acquire)
    }

    /// The global epoch for a review queue entry, read after the zero was seen (see the
    /// module docs).
    pub(crate) fn for_queue(&self) -> u64 {
        self.current.fetch_add(0, Ordering::AcqRel)
    }

    /// A core finished its first flush of epoch `started` (its per-core epoch was older): the
    /// last such core of the epoch advances the global epoch. Returns whether it advanced.
    pub(crate) fn flushed(&self, started: u64) -> bool {
        let mut b = self.barrier.lock();
        // A core that had not flushed in `started` was counted for it, so `started` cannot have
        // ended without this flush.
        debug_assert_eq!(started, b.epoch, "a flush counted for an epoch that already ended");
        if started != b.epoch {
            return false;
        }
        b.pending -= 1;
        if b.pending > 0 {
            return false;
        }
        b.epoch += 1;
        b.pending = b.cores;
        self.current.fetch_add(1, Ordering::AcqRel);
        true
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_last_of_the_cores_to_flush_advances_the_epoch() {
        let e = Epochs::new();
        let flushed: Vec<u64> = (0..3).map(|_| e.core_created()).collect();
        assert_eq!(flushed, vec![FIRST_EPOCH - 1; 3]);
        assert!(!e.flushed(FIRST_EPOCH));
        assert!(!e.flushed(FIRST_EPOCH));
        assert!(e.flushed(FIRST_EPOCH), "the third core ends epoch 1");
        assert_eq!((e.current(), e.for_queue(), e.flush_start()), (2, 2, 2));
        // A core created in epoch 2 must flush in it too.
        assert_eq!(e.core_created(), 1);
        for _ in 0..3 {
            assert!(!e.flushed(2));
        }
        assert!(e.flushed(2));
        assert_eq!(e.current(), 3);
    }
}
