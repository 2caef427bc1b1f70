//! The name-cache entry of 000 §3 (stat, Figure 3) and 004 §4.4: a generation number and
//! a reference count.
//!
//! A path lookup finds a cached entry (a `dentry`) without locks, reading the entry's
//! generation number before and after copying its fields; if the generation changed, the
//! entry was modified meanwhile and the lookup retries. To use the entry, the lookup must
//! take a reference, atomically with the generation check (000 §3). Every `stat` of the
//! same file does this on the same entry, so the reference count is the bottleneck.
//!
//! Variants, all implementing [`NameEntry`]:
//!
//! | type | id in `oplog-bench stat` | what a lookup does |
//! |---|---|---|
//! | [`SpinlockEntry`] | `spinlock` | "stock": takes the entry's ticket spinlock, compares the generation, increments the count |
//! | [`CasEntry`] | `cas` | 000 §3's "lock-free" line, 004 §4.4: generation and count packed in one word; one compare-and-swap increments the count if the generation is unchanged |
//! | [`OpLogEntry`] | `oplog` | 000 §3's "with OpLog" line: increments the calling core's count in the OpLog distributed counter (000 Figure 8), then checks the generation; if it changed, decrements again and fails |
//!
//! # Operations
//!
//! * `lookup(generation)`: takes a reference if the entry's generation is still
//!   `generation` (the value the caller read before copying the entry's fields); otherwise
//!   fails with [`Stale`], carrying the current generation, and the caller retries.
//! * `release()`: drops a reference taken by a successful lookup. Releasing more than was
//!   taken is a caller bug: [`SpinlockEntry`] and [`CasEntry`] panic at once,
//!   [`OpLogEntry`] when the count is next read.
//! * `invalidate()`: the entry was modified (a rename, 004 §4.4's `mv foo bar`): bumps the
//!   generation, so lookups that read the old one fail. Returns the new generation.
//!   Generations wrap around at 2³².
//! * `generation()`, `refcount()`: reads.
//!
//! Every operation is linearizable, with one caveat shared with the text's protocol: on
//! [`OpLogEntry`], a lookup that is about to fail has already added its reference, so a
//! concurrent `refcount()` may count it (an over-count for the duration of the failing
//! lookup, never an under-count). A successful lookup takes effect when it reads the
//! generation, so no lookup succeeds against a generation an earlier `invalidate` retired.
//!
//! The model is `oplog_model::namecache::EntryModel`.

use crate::ticket::TicketLock;
use oplog::{Counter, CounterLog, Domain};
use oplog_model::namecache::{EntryModel, EntryOp, EntryRet};
use oplog_percore::primitive::{AtomicU64, Ordering};
use std::fmt;
use std::sync::Arc;

/// A failed lookup: the entry's generation is no longer the one the caller read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stale {
    /// The entry's generation now: read the entry again and retry with it.
    pub current: u32,
}

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the name-cache entry changed (generation is now {}): retry the lookup", self.current)
    }
}

impl std::error::Error for Stale {}

/// A name-cache entry's generation and reference count (see the module docs).
pub trait NameEntry: Sync {
    /// Takes a reference if the generation is still `generation`.
    ///
    /// # Errors
    /// [`Stale`] with the current generation if it changed.
    fn lookup(&self, generation: u32) -> Result<(), Stale>;
    /// Drops a reference taken by a successful lookup.
    fn release(&self);
    /// Bumps the generation; returns the new one.
    fn invalidate(&self) -> u32;
    /// The current generation.
    fn generation(&self) -> u32;
    /// The number of references held.
    fn refcount(&self) -> u64;
    /// The representation the OpLog object behind this variant is in now (the adaptive
    /// policy's choice in a default domain); `None` for variants not built on OpLog.
    fn representation(&self) -> Option<oplog::Representation> {
        None
    }
}

/// Generation and count on one cache line; the count behind the entry's ticket spinlock
/// (`spinlock`). As in Linux, the generation is read without the lock (the sequence count a
/// lookup reads before copying the entry's fields) and written with it held.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct SpinlockEntry {
    generation: AtomicU64,
    refs: TicketLock<u64>,
}

impl SpinlockEntry {
    /// An entry at generation `generation` with no references.
    pub fn new(generation: u32) -> Self {
        Self {
            generation: AtomicU64::new(u64::from(generation), "SpinlockEntry.generation"),
            refs: TicketLock::new(0, "SpinlockEntry.refs"),
        }
    }
}

impl Default for SpinlockEntry {
    fn default() -> Self {
        Self::new(0)
    }
}

impl NameEntry for SpinlockEntry {
    #[inline]
    fn lookup(&self, generation: u32) -> Result<(), Stale> {
        let mut refs = self.refs.lock();
        let current = self.generation.load(Ordering::Relaxed) as u32;
        if current != generation {
            return Err(Stale { current });
        }
        *refs += 1;
        Ok(())
    }
    #[inline]
    fn release(&self) {
        let mut refs = self.refs.lock();
        *refs = refs.checked_sub(1).expect("name-cache entry released more often than looked up");
    }
    fn invalidate(&self) -> u32 {
        let _held = self.refs.lock();
        let next = (self.generation.load(Ordering::Relaxed) as u32).wrapping_add(1);
        self.generation.store(u64::from(next), Ordering::Release);
        next
    }
    fn generation(&self) -> u32 {
        self.generation.load(Ordering::Acquire) as u32
    }
    fn refcount(&self) -> u64 {
        *self.refs.lock()
    }
}

/// Generation (high 32 bits) and count (low 32 bits) in one word (`cas`).
#[derive(Debug)]
#[repr(align(64))]
pub struct CasEntry {
    word: AtomicU64,
}

const COUNT_BITS: u32 = 32;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

fn unpack(word: u64) -> (u32, u64) {
    ((word >> COUNT_BITS) as u32, word & COUNT_MASK)
}

impl CasEntry {
    /// An entry at generation `generation` with no references.
    pub fn new(generation: u32) -> Self {
        Self { word: AtomicU64::new(u64::from(generation) << COUNT_BITS, "CasEntry.word") }
    }
}

impl Default for CasEntry {
    fn default() -> Self {
        Self::new(0)
    }
}

impl NameEntry for CasEntry {
    /// # Panics
    /// If the count would pass 2³² − 1 references.
    #[inline]
    fn lookup(&self, generation: u32) -> Result<(), Stale> {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            let (current, refs) = unpack(word);
            if current != generation {
                return Err(Stale { current });
            }
            assert!(refs < COUNT_MASK, "name-cache entry reference count overflow (2^32 - 1 references)");
            match self.word.compare_exchange(word, word + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(now) => word = now,
            }
        }
    }
    #[inline]
    fn release(&self) {
        let before = self.word.fetch_sub(1, Ordering::Release);
        if before & COUNT_MASK == 0 {
            // Undo the borrow from the generation bits before reporting.
            self.word.fetch_add(1, Ordering::Relaxed);
            panic!("name-cache entry released more often than looked up");
        }
    }
    fn invalidate(&self) -> u32 {
        let before = self.word.fetch_add(1 << COUNT_BITS, Ordering::AcqRel);
        unpack(before).0.wrapping_add(1)
    }
    fn generation(&self) -> u32 {
        unpack(self.word.load(Ordering::Acquire)).0
    }
    fn refcount(&self) -> u64 {
        unpack(self.word.load(Ordering::Acquire)).1
    }
}

/// The "with OpLog" entry (`oplog`): an OpLog distributed reference counter beside the
/// generation, which lookups only read.
#[derive(Debug)]
#[repr(align(64))]
pub struct OpLogEntry {
    generation: AtomicU64,
    refs: Counter,
}

impl OpLogEntry {
    /// An entry at generation `generation` with no references, whose counter lives in
    /// `domain`.
    pub fn new(domain: &Arc<Domain<CounterLog>>, generation: u32) -> Self {
        Self {
            generation: AtomicU64::new(u64::from(generation), "OpLogEntry.generation"),
            refs: Counter::with_domain(domain, 0),
        }
    }

    /// The reference counter.
    pub fn counter(&self) -> &Counter {
        &self.refs
    }
}

impl Default for OpLogEntry {
    /// An entry at generation 0 in the process-wide per-CPU counter domain.
    fn default() -> Self {
        Self::new(&Domain::global(), 0)
    }
}

impl NameEntry for OpLogEntry {
    fn representation(&self) -> Option<oplog::Representation> {
        Some(self.refs.as_oplog().representation())
    }
    #[inline]
    fn lookup(&self, generation: u32) -> Result<(), Stale> {
        // 000 §3: "It increments a local reference count; if it then sees that the
        // generation count changed, it decrements the local count and retries." The
        // increment touches only this core's slot. It is in the slot before the generation
        // is read, and a synchronize (refcount) sees every update that completed before
        // it began, so a count taken after this lookup returns includes its reference.
        self.refs.inc();
        let current = self.generation.load(Ordering::SeqCst) as u32;
        if current != generation {
            self.refs.dec();
            return Err(Stale { current });
        }
        Ok(())
    }
    #[inline]
    fn release(&self) {
        self.refs.dec();
    }
    fn invalidate(&self) -> u32 {
        (self.generation.fetch_add(1, Ordering::SeqCst) as u32).wrapping_add(1)
    }
    fn generation(&self) -> u32 {
        self.generation.load(Ordering::SeqCst) as u32
    }
    /// # Panics
    /// If the count is negative (more releases than lookups).
    fn refcount(&self) -> u64 {
        let n = self.refs.read();
        u64::try_from(n).unwrap_or_else(|_| panic!("name-cache entry released more often than looked up (count {n})"))
    }
}

/// Runs a model operation on any name-cache entry (the
/// [`Concurrent`](oplog_model::Concurrent) implementations of every variant and of
/// `dyn NameEntry`).
fn call<N: NameEntry + ?Sized>(entry: &N, op: &EntryOp) -> EntryRet {
    match *op {
        EntryOp::Lookup(g) => match entry.lookup(g) {
            Ok(()) => EntryRet::Taken,
            Err(Stale { current }) => EntryRet::Stale(current),
        },
        EntryOp::Release => {
            entry.release();
            EntryRet::Done
        }
        EntryOp::Invalidate => EntryRet::Generation(entry.invalidate()),
        EntryOp::Generation => EntryRet::Generation(entry.generation()),
        EntryOp::Refcount => EntryRet::Refcount(entry.refcount()),
    }
}

crate::concurrent!(EntryModel, call, dyn NameEntry, [[] SpinlockEntry, [] CasEntry, [] OpLogEntry]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cas_word_packs_generation_and_count() {
        let e = CasEntry::new(u32::MAX);
        assert_eq!(e.lookup(u32::MAX), Ok(()));
        assert_eq!((e.generation(), e.refcount()), (u32::MAX, 1));
        // The generation wraps without touching the count.
        assert_eq!(e.invalidate(), 0);
        assert_eq!((e.generation(), e.refcount()), (0, 1));
        assert_eq!(e.lookup(u32::MAX), Err(Stale { current: 0 }));
        e.release();
        assert_eq!(e.refcount(), 0);
    }

    #[test]
    fn stale_says_what_to_do() {
        assert_eq!(
            Stale { current: 3 }.to_string(),
            "the name-cache entry changed (generation is now 3): retry the lookup"
        );
    }

    #[test]
    #[should_panic(expected = "released more often than looked up")]
    fn a_cas_release_without_a_reference_panics_and_keeps_the_generation() {
        let e = CasEntry::new(5);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.release()));
        assert_eq!((e.generation(), e.refcount()), (5, 0));
        std::panic::resume_unwind(r.unwrap_err());
    }
}
