//! Backlogs: what an object has waiting outside the log cache for its next synchronize,
//! logs that left it (evicted, or handed off full by their owner) and operations left over
//! after a panic.
//!
//! The published design evicts a slot's owner by synchronizing it (001 ch. 7). Done while
//! holding the slot, that deadlocks against a concurrent synchronize: the evictor holds the
//! slot and wants the victim's object lock, while the victim's synchronizer holds the object
//! lock and wants the slot. Here an evictor holding the slot only *tries* the victim's lock
//! (see `object`); when that fails, it moves the victim's log into the victim's entry in
//! this table and leaves it to whoever holds the victim. Synchronize takes the entry *after*
//! locking every slot the object may own, so a log is either still in its slot or already
//! here when it looks (lock order: object, slots, shard; evictors take slot then shard).
//!
//! The table is sharded by object id. Whether an object has an entry is also a bit of the
//! object's own word ([`BACKLOG`]), set and cleared under the shard's lock together with
//! the entry, so a synchronize or a direct update finds "nothing pending" in the word it
//! loads anyway: no other line, no lock.

use crate::log::LogKind;
use crate::primitive::Mutex;
use crate::word::{BACKLOG, Word};
use crossbeam_utils::CachePadded;
use std::collections::HashMap;

/// What one object has waiting outside the log cache.
pub(crate) struct Backlog<L: LogKind> {
    /// Operations gathered by an earlier synchronize that did not run because one of
    /// them panicked; they come before everything else.
    pub(crate) carry: L::Batch,
    /// Evicted and handed-off logs, oldest first.
    pub(crate) evicted: Vec<Parked<L>>,
}

/// A log that left its slot (evicted, or handed off by its owner).
pub(crate) struct Parked<L: LogKind> {
    /// The core whose slot held it.
    pub(crate) core: usize,
    /// The operations pushed into it, absorbed or not (for the adaptive policy: how much
    /// local absorption shrank it).
    pub(crate) pushes: u32,
    pub(crate) log: L::Log,
}

impl<L: LogKind> Default for Backlog<L> {
    fn default() -> Self {
        Self { carry: L::Batch::default(), evicted: Vec::new() }
    }
}

struct Shard<L: LogKind> {
    map: Mutex<HashMap<u64, Backlog<L>>>,
}

/// The per-domain table of backlogs.
pub(crate) struct Backlogs<L: LogKind> {
    shards: Box<[CachePadded<Shard<L>>]>,
    /// `64 - log2(shards)`: an id's shard is the top bits of its Fibonacci hash (ids are
    /// addresses, whose low bits are all alike).
    shift: u32,
}

impl<L: LogKind> Backlogs<L> {
    pub(crate) fn new(shards: usize) -> Self {
        let shards = shards.next_power_of_two();
        Self {
            // One shard: a shift of 63, not 64 (which would overflow); the mask in `shard`
            // then gives index 0.
            shift: 64 - shards.trailing_zeros().max(1),
            shards: (0..shards)
                .map(|_| CachePadded::new(Shard { map: Mutex::new(HashMap::new(), "Backlogs.map") }))
                .collect(),
        }
    }

    #[inline(always)]
    fn shard(&self, id: u64) -> &Shard<L> {
        let hash = id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift;
        &self.shards[hash as usize & (self.shards.len() - 1)]
    }

    /// Adds a log of object `id`, whose word is `word`, that left its slot; returns how many
    /// such logs the object now has waiting.
    pub(crate) fn push_evicted(&self, id: u64, word: &Word, parked: Parked<L>) -> usize {
        let mut map = self.shard(id).map.lock();
        let evicted = &mut map.entry(id).or_default().evicted;
        evicted.push(parked);
        let waiting = evicted.len();
        mark(word, waiting == 1);
        waiting
    }

    /// Number of evicted logs object `id` has waiting; `word` is its word's log half,
    /// loaded by the caller (no lock when it shows no backlog).
    pub(crate) fn evicted_count(&self, id: u64, word: u64) -> usize {
        if word & BACKLOG == 0 {
            return 0;
        }
        self.shard(id).map.lock().get(&id).map_or(0, |b| b.evicted.len())
    }

    /// Removes and returns object `id`'s backlog, if it has one; `word` is its word, in
    /// which the caller saw [`BACKLOG`] set (without it there is nothing to take, and the
    /// shard's lock would be taken for nothing: `object`'s `take_backlog` checks first).
    pub(crate) fn take(&self, id: u64, word: &Word) -> Option<Backlog<L>> {
        let mut map = self.shard(id).map.lock();
        let b = map.remove(&id);
        if b.is_some() {
            word.clear_logs(BACKLOG);
        }
        b
    }

    /// Stores operations of object `id` (word `word`) that must run before anything
    /// gathered later. The object's backlog was taken by the synchronize that calls this, so
    /// any entry present now holds only logs evicted since, which are newer.
    pub(crate) fn put_carry(&self, id: u64, word: &Word, batch: L::Batch) {
        let mut map = self.shard(id).map.lock();
        let len = map.len();
        map.entry(id).or_default().carry = batch;
        mark(word, map.len() != len);
    }

    /// Total number of objects with a backlog (for tests and memory reports).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.map.lock().len()).sum()
    }

    /// Total number of evicted logs waiting, over all objects.
    pub(crate) fn evicted_logs(&self) -> usize {
        self.shards.iter().map(|s| s.map.lock().values().map(|b| b.evicted.len()).sum::<usize>()).sum()
    }
}

/// Sets [`BACKLOG`] in `word` if the caller, holding the shard's lock, just made the entry
/// (`new`). Sequentially consistent: a synchronize that does not see the bit cannot have
/// missed an entry made before the log left its slot (see `object`, "Synchronize").
fn mark(word: &Word, new: bool) {
    if new {
        word.set_logs(BACKLOG);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::log::CounterLog;
    use crate::primitive::Ordering;

    #[test]
    fn evicted_logs_and_carries_are_kept_per_object_and_marked_in_its_word() {
        let p = Backlogs::<CounterLog>::new(4);
        let (w7, w11) = (Word::new(0), Word::new(0));
        let word = |w: &Word| w.load(Ordering::SeqCst);
        assert_eq!(p.evicted_count(7, word(&w7)), 0);
        assert!(p.take(7, &w7).is_none());
        let parked = |core, log| Parked { core, pushes: 2, log };
        let logs = |b: Backlog<CounterLog>| b.evicted.iter().map(|p| (p.core, p.log)).collect::<Vec<_>>();
        p.push_evicted(7, &w7, parked(0, 3));
        assert_eq!(word(&w7), BACKLOG);
        p.push_evicted(7, &w7, parked(1, 4));
        p.push_evicted(11, &w11, parked(0, 1));
        assert_eq!(p.evicted_count(7, word(&w7)), 2);
        assert_eq!(p.len(), 2);
        let b = p.take(7, &w7).unwrap();
        assert_eq!(logs(b), vec![(0, 3), (1, 4)]);
        assert_eq!(word(&w7), 0, "taking the entry clears the bit");
        assert_eq!(p.evicted_count(7, word(&w7)), 0);
        p.put_carry(7, &w7, 9);
        assert_eq!(word(&w7), BACKLOG);
        assert_eq!(p.take(7, &w7).unwrap().carry, 9);
        assert_eq!(logs(p.take(11, &w11).unwrap()), vec![(0, 1)]);
        assert_eq!((p.len(), word(&w7), word(&w11)), (0, 0, 0));
    }
}
