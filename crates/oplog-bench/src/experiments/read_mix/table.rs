//! The sequential structure of `read-mix`: a table of statistics counters, and its
//! operations in the forms each wrapper needs (an OpLog [`Update`], a node-replication
//! [`Dispatch`]).
//!
//! Why this structure: both operations are O(1) and touch one word (`add(slot, n)` and
//! `get(slot)`), so the experiment measures what the wrappers add (logging, locking,
//! replication), not the structure; and it is the kind of update-heavy data the texts
//! target (per-event statistics, 000 §1). Its updates commute, so OpLog wraps it with the
//! [`Unordered`](oplog::Unordered) log, which never reads the clock (the right kind for
//! commutative updates; an ordered log would add a clock read per update).
//!
//! No absorption hook is written: each update is logged as its own entry, so OpLog wins or
//! loses here without type-specific help (000 §4.2's local absorption would fold repeated
//! adds to one slot into one entry).

use node_replication::Dispatch;
use oplog::Update;

/// Number of counters in the table.
pub const SLOTS: usize = 64;

/// A fixed table of [`SLOTS`] counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsTable {
    counts: [u64; SLOTS],
}

impl Default for StatsTable {
    fn default() -> Self {
        Self { counts: [0; SLOTS] }
    }
}

impl StatsTable {
    /// Adds `n` to counter `slot` (wrapping). Panics if `slot >= SLOTS`.
    #[inline]
    pub fn add(&mut self, slot: usize, n: u64) {
        self.counts[slot] = self.counts[slot].wrapping_add(n);
    }

    /// Counter `slot`. Panics if `slot >= SLOTS`.
    #[inline]
    pub fn get(&self, slot: usize) -> u64 {
        self.counts[slot]
    }

    /// The sum of all counters (wrapping).
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.wrapping_add(c))
    }
}

/// The update: add `n` to counter `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Add {
    /// The counter.
    pub slot: usize,
    /// The amount.
    pub n: u64,
}

impl Update for Add {
    type Target = StatsTable;
    /// Additions commute, and any subset of them gives the table some order's state.
    const APPLY_ALONE: bool = true;

    #[inline]
    fn exec(self, table: &mut StatsTable) {
        table.add(self.slot, self.n);
    }
}

/// The reads node-replication dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// One counter.
    Get(usize),
    /// The sum of all counters (the check after a run).
    Total,
}

impl Dispatch for StatsTable {
    type ReadOperation = Read;
    type WriteOperation = Add;
    type Response = u64;

    fn dispatch(&self, op: Read) -> u64 {
        match op {
            Read::Get(slot) => self.get(slot),
            Read::Total => self.total(),
        }
    }

    fn dispatch_mut(&mut self, op: Add) -> u64 {
        self.add(op.slot, op.n);
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_counts_and_dispatches() {
        let mut t = StatsTable::default();
        Add { slot: 3, n: 2 }.exec(&mut t);
        t.dispatch_mut(Add { slot: 63, n: 5 });
        assert_eq!((t.get(3), t.dispatch(Read::Get(63)), t.dispatch(Read::Total)), (2, 5, 7));
    }
}
