//! The reader table: where concurrent reads announce themselves (the `object` module docs,
//! "Concurrent reads").
//!
//! A read of an object with nothing logged needs no synchronize, only exclusion from the
//! lock holders that change the instance. A lock word written by every reader would put
//! every read on one shared cache line (002 ch. 3: read/read sharing of a line that one of
//! them writes does not scale). Instead, as in BRAVO (Dice and Kogan, USENIX ATC 2019), a
//! reader writes the object's id into a cell of a small per-CPU table of its domain, on a
//! line only that CPU's readers write, and a lock holder scans the cells of the object's
//! column, one per CPU, waiting for readers to leave. Readers use the table only while the
//! object is *biased* (a bit of its word, set by a read that found nothing changed since
//! the previous one and cleared by the next lock holder), so objects that are written more
//! than read never pay the scan.
//!
//! Cells are claimed with a compare-and-swap: two readers on one CPU whose objects share a
//! column, or a reader that migrated, find the cell taken and read through the lock.

use crate::primitive::{AtomicUsize, current_cpu, fold_cpu};
use crossbeam_utils::CachePadded;

/// Cells per CPU: one 64-byte line of them.
const WAYS: usize = 8;

/// A domain's reader table: `WAYS` cells per CPU.
pub(crate) struct Readers {
    cpus: Box<[CachePadded<[AtomicUsize; WAYS]>]>,
}

impl Readers {
    /// A table for `cpus` CPUs (CPU `c` uses row `c % cpus`).
    pub(crate) fn new(cpus: usize) -> Self {
        Readers {
            cpus: (0..cpus.max(1))
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicUsize::new(0, "Readers.cell"))))
                .collect(),
        }
    }

    /// The cell of column `key` in the calling CPU's row.
    #[inline]
    pub(crate) fn cell(&self, key: usize) -> &AtomicUsize {
        &self.cpus[fold_cpu(current_cpu(), self.cpus.len())][key % WAYS]
    }

    /// The cells of column `key`, one per row (CPU): where a lock holder looks for the
    /// readers of an object.
    pub(crate) fn column(&self, key: usize) -> impl Iterator<Item = &AtomicUsize> {
        self.cpus.iter().map(move |row| &row[key % WAYS])
    }

    /// Bytes the table holds.
    pub(crate) fn footprint(&self) -> usize {
        std::mem::size_of_val(&*self.cpus)
    }
}
