//! Hekaton-style optimistic multi-version concurrency control (003 §4.2, "MVCC"), on any
//! clock, serializable.
//!
//! # Versions
//!
//! Each record is a chain of versions, newest first. A version holds a value and two
//! fields, *begin* and *end*: each a timestamp (the version is the record's value from
//! `begin` until `end`, `end` = ∞ for the newest), or a transaction id while the transaction
//! that created (begin) or replaced (end) the version has not finished. An id names a
//! session's descriptor and the transaction's sequence number there; the descriptor holds
//! the transaction's state: active, preparing (with its commit timestamp), committed (with
//! it) or aborted.
//!
//! # Reads
//!
//! An attempt with start timestamp `s` sees the version whose begin is certainly before `s`
//! and whose end is certainly after it, walking the chain from the newest. An id in a field
//! is looked up: the reader's own id means its own write; an active or aborted owner's new
//! version is invisible (and the old version it replaced still current); a preparing
//! owner's commit timestamp is compared like a timestamp, and when it is certainly before
//! `s` the reader waits (a few steps) for the owner to finish. A comparison within the
//! clock's boundary aborts the attempt (003 §4.2: "we either restart that transaction or
//! force it to abort"). A preparing owner publishes its state *before* it reads the clock
//! for its commit timestamp (a fence between), so a reader that found it active knows that
//! timestamp is not certainly before its own start: the reader's verdict (invisible) stays
//! right whatever the owner then gets.
//!
//! # Writes
//!
//! A write installs a new version at once (first writer wins): the newest version must be
//! committed and visible to the writer, and the writer claims it by swapping its end from
//! ∞ to its id; then it pushes the new version, begin = its id. A second write of the
//! same key changes that version in place.
//!
//! # Commit
//!
//! An attempt that wrote nothing is serialized at its start timestamp: no commit timestamp,
//! no validation. Otherwise it publishes `preparing`, takes `c = new_time(start)` (003
//! §4.2: `new_time` "during the commit phase"), validates that every version it read is
//! still current at `c` (its end certainly after `c`, or claimed by a transaction that is
//! active, aborted or certainly later), publishes `committed(c)`, then replaces its id by
//! `c` in every begin and end field it wrote and bumps its sequence number (a reader that
//! meets a stale id reloads the field). An abort — a failed validation, a conflict, a
//! panic in the closure — publishes `aborted`, unlinks its new versions, restores the old
//! versions' end to ∞ and marks the unlinked versions as beginning at ∞ (never visible).
//!
//! Serializability: a committed read-write transaction's reads were current from its start
//! to its commit timestamp, and its writes begin at that timestamp; a read-only one's
//! reads are the state at its start. As in [`crate::occ`], a transaction's stamp is read
//! after everything it depends on was stamped, so stamps order the transactions up to the
//! boundary (`tests/serial.rs` checks it).
//!
//! # Garbage collection
//!
//! Each session announces its running transaction's start timestamp in its descriptor
//! (first a placeholder and a fence, then the start). Every [`GC_EVERY`] commits with
//! writes, a session (whichever gets the collector's lock first) walks the chains written
//! since the last pass and unlinks every version whose end is certainly before the
//! *horizon*: the oldest announced start, and `now − boundary` for transactions not yet
//! begun. No running or future transaction can see such a version. Unlinked versions
//! (and the versions of aborted attempts) are freed later, once every session that was
//! inside a transaction when they were unlinked has finished it (each descriptor counts its
//! transactions), since a reader may still be walking them. Dropping the store frees the
//! rest.

use std::cell::Cell;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use ordo::{Clock, TimeOrder};

use crate::engine::{Engine, Kind, Sealed};
use crate::entries::Entries;
use crate::stamps::{MAX_STAMP, Stamps};
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Mutex, fence, spin_wait};
use crate::{Conflict, SessionError, Stats};

/// The MVCC scheme: `Db<Mvcc, C>` (see the [module docs](self)).
#[derive(Clone, Copy, Debug)]
pub struct Mvcc;

impl Sealed for Mvcc {
    type Engine<C: Clock> = imp::Store<C>;
    const NAME: &'static str = "mvcc";
}

/// Commits with writes between two garbage-collection passes of a session.
#[cfg(not(loom))]
pub const GC_EVERY: u32 = 64;

/// Commits with writes between two garbage-collection passes of a session (2 under loom,
/// so that a model's few commits run a pass).
#[cfg(loom)]
pub const GC_EVERY: u32 = 2;

/// A begin or end field: ∞ (an open end; as a begin, a version that never becomes visible).
const INF: u64 = MAX_STAMP + 1;
/// A field holding a transaction id has this bit set.
const ID: u64 = 1 << 63;
/// Bits of an id's sequence number.
const SEQ_BITS: u32 = 40;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// Descriptor states (the low two bits of the state word; the commit timestamp above them).
const ACTIVE: u64 = 0;
const PREPARING: u64 = 1;
const COMMITTED: u64 = 2;
const ABORTED: u64 = 3;
/// The commit timestamp of a preparing transaction that has not read it yet.
const PENDING: u64 = MAX_STAMP;

/// A descriptor's announced start: between transactions.
const IDLE: u64 = u64::MAX;
/// A descriptor's announced start: a transaction is beginning, its start not yet read.
const ANNOUNCING: u64 = 0;

/// Retired versions a session keeps before it insists on a collection pass.
const RETIRED_LIMIT: usize = 4096;

mod imp {
    use super::*;

    /// One version of a record.
    #[derive(Debug)]
    pub(crate) struct Version {
        begin: AtomicU64,
        end: AtomicU64,
        value: AtomicU64,
        older: AtomicPtr<Version>,
    }

    impl Version {
        fn new(begin: u64, value: u64, older: *mut Version) -> *mut Version {
            Box::into_raw(Box::new(Version {
                begin: AtomicU64::new(begin),
                end: AtomicU64::new(INF),
                value: AtomicU64::new(value),
                older: AtomicPtr::new(older),
            }))
        }
    }

    /// A version pointer that may travel between threads: versions belong to the store, and
    /// every access to one goes through its atomics.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Ptr(*mut Version);

    // SAFETY: a `Ptr` is only dereferenced while the version is reachable or protected by
    // the collector's rules (see the module docs), from whichever thread holds it; the
    // version's fields are atomics, so shared access from several threads is sound.
    unsafe impl Send for Ptr {}

    impl Ptr {
        /// The version.
        ///
        /// # Safety
        /// The version must not have been freed: the caller is inside a transaction that
        /// reached it through a chain (or created it), or holds the collector's lock and
        /// reached it from a head.
        unsafe fn get<'a>(self) -> &'a Version {
            // SAFETY: the caller guarantees the version is live; it was made by `Box`.
            unsafe { &*self.0 }
        }
    }

    /// A session's transaction descriptor (one cache line, written by its owner only).
    #[derive(Debug)]
    pub(crate) struct Slot {
        /// Held by an open session.
        owned: AtomicBool,
        /// The sequence number of the transaction whose id may be in version fields.
        seq: AtomicU64,
        /// State and commit timestamp of that transaction.
        state: AtomicU64,
        /// The running transaction's start ([`IDLE`], [`ANNOUNCING`] or a timestamp).
        start: AtomicU64,
        /// Transactions begun, for the collector's grace periods.
        txns: AtomicU64,
    }

    /// What a begin or end field says, the owner looked up.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Field {
        /// A timestamp (or ∞).
        Stamp(u64),
        /// The reading transaction's own id.
        Mine,
        /// An active transaction's id.
        Active,
        /// A preparing transaction's id, with its commit timestamp.
        Preparing(u64),
        /// An aborted transaction's id.
        Aborted,
    }

    /// A batch of unlinked versions waiting until the sessions that might still walk them
    /// have finished their transactions: (slot, `txns` count) of each.
    #[derive(Debug)]
    struct Batch {
        versions: Vec<Ptr>,
        waiting: Vec<(usize, u64)>,
    }

    /// The collector's state (behind its lock).
    #[derive(Debug, Default)]
    struct Collector {
        /// Keys whose chains may hold collectable versions.
        dirty: Vec<u64>,
        /// Versions unlinked by aborts, handed over by closed sessions, not yet in a batch.
        retired: Vec<Ptr>,
        batches: Vec<Batch>,
    }

    /// What a session asks of the collector.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Collect {
        /// A pass, unless another session is collecting (every [`GC_EVERY`] commits).
        Pass,
        /// A pass, waiting for the lock (too many retired versions kept).
        MustPass,
        /// Hand the session's keys and versions over (it closes); a pass only if enough
        /// has piled up, so that sessions opened for one transaction each still get
        /// their garbage collected.
        HandOver,
    }

    /// A write: the new version and the one it replaced.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Write {
        new: Ptr,
        old: Ptr,
    }

    /// A session: its descriptor and its attempt.
    #[derive(Debug)]
    pub struct Handle {
        slot: usize,
        /// This transaction's id (with [`ID`] set).
        id: u64,
        open: bool,
        kind: Kind,
        start: u64,
        /// Versions read (read-write attempts only).
        reads: Vec<Ptr>,
        writes: Entries<Write>,
        /// Keys written by committed transactions since the last collection.
        dirty: Vec<u64>,
        /// Versions this session unlinked (aborted writes), not yet handed to the collector.
        retired: Vec<Ptr>,
        commits: u32,
    }

    /// The MVCC engine.
    #[derive(Debug)]
    pub struct Store<C> {
        heads: Box<[AtomicPtr<Version>]>,
        slots: Box<[CachePadded<Slot>]>,
        stamps: Stamps<C>,
        collector: Mutex<Collector>,
    }

    std::thread_local! {
        /// The descriptor this thread last held: where its next search starts, so that a
        /// thread opening sessions again and again finds its own free slot at once and
        /// threads do not all contend for the first ones.
        static SLOT_HINT: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// Spreads the first searches of new threads over the descriptors.
    static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

    fn id_of(slot: usize, seq: u64) -> u64 {
        ID | (slot as u64) << SEQ_BITS | (seq & SEQ_MASK)
    }

    impl<C: Clock> Store<C> {
        fn head(&self, key: u64) -> &AtomicPtr<Version> {
            &self.heads[key as usize]
        }

        /// Reads a begin or end field, looking up the owner of an id in it.
        fn resolve(&self, field: &AtomicU64, me: u64) -> Field {
            let mut spins = 0;
            loop {
                let word = field.load(Acquire);
                if word & ID == 0 {
                    return Field::Stamp(word);
                }
                if word == me {
                    return Field::Mine;
                }
                let slot = &self.slots[((word & !ID) >> SEQ_BITS) as usize];
                let seq = word & SEQ_MASK;
                if slot.seq.load(Acquire) & SEQ_MASK == seq {
                    let state = slot.state.load(Acquire);
                    // The state belongs to that transaction only if its sequence number has
                    // not moved on meanwhile; if it has, the field was replaced: reload it.
                    if slot.seq.load(Acquire) & SEQ_MASK == seq {
                        let stamp = state >> 2;
                        match state & 3 {
                            ACTIVE => return Field::Active,
                            ABORTED => return Field::Aborted,
                            COMMITTED => return Field::Stamp(stamp),
                            _ if stamp != PENDING => return Field::Preparing(stamp),
                            _ => {} // preparing, its timestamp being read: wait a step
                        }
                    }
                }
                spin_wait(&mut spins);
            }
        }

        /// Whether a version with this begin field is visible at `s` (waiting for a
        /// preparing owner that is certainly earlier).
        fn begins_before(&self, version: &Version, me: u64, s: u64) -> Result<bool, Conflict> {
            let mut spins = 0;
            loop {
                let t = match self.resolve(&version.begin, me) {
                    Field::Mine => return Ok(true),
                    Field::Active | Field::Aborted => return Ok(false),
                    Field::Stamp(t) => t,
                    Field::Preparing(t) => {
                        if self.stamps.before(t, s) {
                            spin_wait(&mut spins);
                            continue;
                        }
                        t
                    }
                };
                return match self.stamps.order(t, s) {
                    TimeOrder::Before => Ok(true),
                    TimeOrder::After => Ok(false),
                    TimeOrder::Uncertain => Err(Conflict::after(t)),
                };
            }
        }

        /// Whether a version with this end field is still current at `t` (waiting for a
        /// preparing replacer that is certainly earlier); `Err` when uncertain.
        fn ends_after(&self, version: &Version, me: u64, t: u64) -> Result<bool, Conflict> {
            let mut spins = 0;
            loop {
                let e = match self.resolve(&version.end, me) {
                    Field::Mine => return Ok(false),
                    Field::Active | Field::Aborted => return Ok(true),
                    Field::Stamp(e) => e,
                    Field::Preparing(e) => {
                        if self.stamps.before(e, t) {
                            spin_wait(&mut spins);
                            continue;
                        }
                        e
                    }
                };
                return match self.stamps.order(e, t) {
                    TimeOrder::After => Ok(true),
                    TimeOrder::Before => Ok(false),
                    TimeOrder::Uncertain => Err(Conflict::after(e)),
                };
            }
        }

        /// Ends the running transaction's presence: a new sequence number if its id was
        /// published, the descriptor back to active, the announced start back to idle.
        fn finish(&self, h: &mut Handle, published: bool) {
            let slot = &self.slots[h.slot];
            if published {
                let seq = slot.seq.load(Relaxed) + 1;
                slot.seq.store(seq, Release);
                slot.state.store(ACTIVE, Release);
                h.id = id_of(h.slot, seq);
            }
            slot.start.store(IDLE, Release);
            h.open = false;
        }

        /// Rolls back a transaction that published its id (at least one write).
        fn roll_back_writes(&self, h: &mut Handle) {
            let slot = &self.slots[h.slot];
            slot.state.store(ABORTED, Release);
            for (key, w) in h.writes.iter() {
                // SAFETY: our own versions (new) and the versions we claimed (old) are live:
                // we are inside our transaction, and neither can be collected while we are.
                let (new, old) = unsafe { (w.new.get(), w.old.get()) };
                let unlinked = self.head(*key).compare_exchange(w.new.0, w.old.0, AcqRel, Acquire);
                debug_assert!(unlinked.is_ok(), "our uncommitted version is the head of its chain");
                old.end.store(INF, Release);
                new.begin.store(INF, Release);
                h.retired.push(w.new);
            }
            self.finish(h, true);
        }

        /// Takes the session's dirty keys and retired versions, then (as `how` says) runs a
        /// pass: unlinks the versions no transaction can see any more, and frees the
        /// batches whose grace period is over.
        fn collect(&self, h: &mut Handle, how: Collect) {
            let mut guard = match how {
                Collect::Pass => match self.collector.try_lock() {
                    Ok(g) => g,
                    Err(_) => return,
                },
                Collect::MustPass | Collect::HandOver => self.collector.lock().unwrap_or_else(|e| e.into_inner()),
            };
            let collector = &mut *guard;
            collector.dirty.append(&mut h.dirty);
            collector.retired.append(&mut h.retired);
            let enough = collector.dirty.len() >= GC_EVERY as usize || collector.retired.len() >= GC_EVERY as usize;
            if how == Collect::HandOver && !enough {
                return;
            }
            let mut versions = std::mem::take(&mut collector.retired);

            // The horizon: no running or future transaction starts before it.
            fence(SeqCst);
            let mut horizon = self.stamps.now().saturating_sub(self.stamps.boundary());
            for slot in self.slots.iter() {
                match slot.start.load(SeqCst) {
                    IDLE => {}
                    ANNOUNCING => horizon = 0,
                    s => horizon = horizon.min(s),
                }
            }
            collector.dirty.sort_unstable();
            collector.dirty.dedup();
            let mut still_dirty = Vec::new();
            for &key in &collector.dirty {
                // SAFETY: we hold the collector's lock, and only its holder frees versions, each
                // after it was unlinked: a version reachable from a head stays live meanwhile.
                let mut newer = unsafe { Ptr(self.head(key).load(Acquire)).get() };
                loop {
                    let older = newer.older.load(Acquire);
                    if older.is_null() {
                        break;
                    }
                    // SAFETY: reachable from a head, under the lock (as above).
                    let candidate = unsafe { Ptr(older).get() };
                    let end = candidate.end.load(Acquire);
                    if end & ID == 0 && end != INF && self.stamps.before(end, horizon) {
                        // Every version from `candidate` on ended even earlier.
                        newer.older.store(std::ptr::null_mut(), Release);
                        let mut next = older;
                        while !next.is_null() {
                            versions.push(Ptr(next));
                            // SAFETY: just unlinked by us, freed only by a later pass.
                            next = unsafe { Ptr(next).get() }.older.load(Acquire);
                        }
                        break;
                    }
                    newer = candidate;
                }
                // SAFETY: reachable from a head, under the lock (as above).
                let head = unsafe { Ptr(self.head(key).load(Acquire)).get() };
                if !head.older.load(Acquire).is_null() {
                    // Old versions remain: a later pass may collect them.
                    still_dirty.push(key);
                }
            }
            collector.dirty = still_dirty;

            // The batch waits for every session inside a transaction now.
            fence(SeqCst);
            if !versions.is_empty() {
                let waiting = self
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.start.load(SeqCst) != IDLE)
                    .map(|(i, s)| (i, s.txns.load(Acquire)))
                    .collect();
                collector.batches.push(Batch { versions, waiting });
            }
            collector.batches.retain_mut(|batch| {
                batch.waiting.retain(|&(i, n)| {
                    let slot = &self.slots[i];
                    slot.start.load(Acquire) != IDLE && slot.txns.load(Acquire) == n
                });
                if batch.waiting.is_empty() {
                    for v in batch.versions.drain(..) {
                        // SAFETY: unlinked before the batch was made, and every session that
                        // could have reached it has finished the transaction it was in.
                        drop(unsafe { Box::from_raw(v.0) });
                    }
                    false
                } else {
                    true
                }
            });
        }

        /// Versions alive in the store (chains, and batches waiting to be freed).
        #[cfg(test)]
        pub(crate) fn versions(&self) -> usize {
            let collector = self.collector.lock().unwrap();
            let mut n: usize = collector.batches.iter().map(|b| b.versions.len()).sum();
            n += collector.retired.len();
            for head in self.heads.iter() {
                let mut v = head.load(Acquire);
                while !v.is_null() {
                    n += 1;
                    // SAFETY: the lock is held: nothing reachable is freed.
                    v = unsafe { Ptr(v).get() }.older.load(Acquire);
                }
            }
            n
        }
    }

    impl<C: Clock> Engine<C> for Store<C> {
        type Session = Handle;

        fn new(stamps: Stamps<C>, keys: u64, initial: u64, max_sessions: usize) -> Self {
            let heads = (0..keys).map(|_| AtomicPtr::new(Version::new(0, initial, std::ptr::null_mut()))).collect();
            let slots = (0..max_sessions)
                .map(|_| {
                    CachePadded::new(Slot {
                        owned: AtomicBool::new(false),
                        seq: AtomicU64::new(0),
                        state: AtomicU64::new(ACTIVE),
                        start: AtomicU64::new(IDLE),
                        txns: AtomicU64::new(0),
                    })
                })
                .collect();
            Self { heads, slots, stamps, collector: Mutex::new(Collector::default()) }
        }

        fn stamps(&self) -> &Stamps<C> {
            &self.stamps
        }

        fn keys(&self) -> u64 {
            self.heads.len() as u64
        }

        fn open(&self) -> Result<Handle, SessionError> {
            let n = self.slots.len();
            // Under loom the search starts at 0: models must be deterministic.
            let first = if cfg!(loom) {
                0
            } else {
                SLOT_HINT.with(|h| h.get()).unwrap_or_else(|| NEXT_SLOT.fetch_add(1, Ordering::Relaxed)) % n
            };
            for i in (first..n).chain(0..first) {
                let slot = &self.slots[i];
                if !slot.owned.load(Relaxed) && slot.owned.compare_exchange(false, true, Acquire, Relaxed).is_ok() {
                    if !cfg!(loom) {
                        SLOT_HINT.with(|h| h.set(Some(i)));
                    }
                    return Ok(Handle {
                        slot: i,
                        id: id_of(i, slot.seq.load(Relaxed)),
                        open: false,
                        kind: Kind::ReadOnly,
                        start: 0,
                        reads: Vec::new(),
                        writes: Entries::default(),
                        dirty: Vec::new(),
                        retired: Vec::new(),
                        commits: 0,
                    });
                }
            }
            Err(SessionError::Exhausted { max: n })
        }

        fn close(&self, h: &mut Handle) {
            self.abort(h);
            if !h.dirty.is_empty() || !h.retired.is_empty() {
                self.collect(h, Collect::HandOver);
            }
            self.slots[h.slot].owned.store(false, Release);
        }

        fn begin(&self, h: &mut Handle, kind: Kind, floor: u64, stats: &mut Stats) {
            h.reads.clear();
            h.writes.clear();
            h.kind = kind;
            let slot = &self.slots[h.slot];
            slot.txns.store(slot.txns.load(Relaxed) + 1, Release);
            // Announce before the start is read and before any chain is walked.
            slot.start.store(ANNOUNCING, Relaxed);
            fence(SeqCst);
            h.start = self.stamps.start(floor, stats);
            slot.start.store(h.start, Release);
            h.open = true;
        }

        fn get(&self, h: &mut Handle, key: u64, _stats: &mut Stats) -> Result<u64, Conflict> {
            if let Some(w) = h.writes.get(key) {
                // SAFETY: our own uncommitted version is live while we run.
                return Ok(unsafe { w.new.get() }.value.load(Relaxed));
            }
            let mut ptr = self.head(key).load(Acquire);
            while !ptr.is_null() {
                // SAFETY: reached from a head inside our transaction (start announced): the
                // collector frees nothing we could have reached until we finish.
                let version = unsafe { Ptr(ptr).get() };
                if self.begins_before(version, h.id, h.start)? {
                    if !self.ends_after(version, h.id, h.start)? {
                        // A newer version should have been visible: only a replacer that
                        // committed since we passed its version; retry from scratch.
                        return Err(Conflict::NONE);
                    }
                    if h.kind == Kind::ReadWrite {
                        h.reads.push(Ptr(ptr));
                    }
                    return Ok(version.value.load(Relaxed));
                }
                ptr = version.older.load(Acquire);
            }
            Err(Conflict::NONE)
        }

        fn put(&self, h: &mut Handle, key: u64, value: u64, _stats: &mut Stats) -> Result<(), Conflict> {
            if let Some(w) = h.writes.get(key) {
                // SAFETY: our own uncommitted version is live while we run; only we write it.
                unsafe { w.new.get() }.value.store(value, Relaxed);
                return Ok(());
            }
            let head = self.head(key).load(Acquire);
            // SAFETY: reached from a head inside our transaction.
            let version = unsafe { Ptr(head).get() };
            match self.resolve(&version.begin, h.id) {
                Field::Stamp(t) => match self.stamps.order(t, h.start) {
                    TimeOrder::Before => {}
                    // Committed after our snapshot (or within the boundary of it).
                    _ => return Err(Conflict::after(t)),
                },
                // Another writer's version (or a rolled-back one not yet unlinked).
                _ => return Err(Conflict::NONE),
            }
            let new = Version::new(h.id, value, head);
            if version.end.compare_exchange(INF, h.id, AcqRel, Acquire).is_err() {
                // SAFETY: `new` was never published.
                drop(unsafe { Box::from_raw(new) });
                return Err(Conflict::NONE);
            }
            // We own the old version's end: nobody else can push onto it.
            self.head(key).store(new, Release);
            h.writes.push(key, Write { new: Ptr(new), old: Ptr(head) });
            Ok(())
        }

        fn commit(&self, h: &mut Handle, stats: &mut Stats) -> Result<u64, Conflict> {
            if h.writes.is_empty() {
                self.finish(h, false);
                return Ok(h.start);
            }
            let slot = &self.slots[h.slot];
            // Preparing before the commit timestamp is read (see the module docs).
            slot.state.store(PREPARING | PENDING << 2, SeqCst);
            fence(SeqCst);
            let c = self.stamps.after(h.start, stats);
            slot.state.store(PREPARING | c << 2, Release);
            for &read in &h.reads {
                // SAFETY: versions we read stay live until we finish.
                let version = unsafe { read.get() };
                if version.end.load(Acquire) == h.id {
                    // We replaced it ourselves: it was current until our own commit.
                    continue;
                }
                match self.ends_after(version, h.id, c) {
                    Ok(true) => {}
                    Ok(false) => {
                        self.roll_back_writes(h);
                        return Err(Conflict::NONE);
                    }
                    Err(conflict) => {
                        self.roll_back_writes(h);
                        return Err(conflict);
                    }
                }
            }
            slot.state.store(COMMITTED | c << 2, Release);
            for (key, w) in h.writes.iter() {
                // SAFETY: as in `roll_back_writes`.
                let (new, old) = unsafe { (w.new.get(), w.old.get()) };
                new.begin.store(c, Release);
                old.end.store(c, Release);
                h.dirty.push(*key);
            }
            self.finish(h, true);
            h.commits = h.commits.wrapping_add(1);
            if h.commits.is_multiple_of(GC_EVERY) || h.retired.len() >= RETIRED_LIMIT {
                self.collect(h, if h.retired.len() >= RETIRED_LIMIT { Collect::MustPass } else { Collect::Pass });
            }
            Ok(c)
        }

        fn abort(&self, h: &mut Handle) {
            if !h.open {
                return;
            }
            if h.writes.is_empty() {
                self.finish(h, false);
            } else {
                self.roll_back_writes(h);
            }
            if h.retired.len() >= RETIRED_LIMIT {
                self.collect(h, Collect::MustPass);
            }
        }
    }

    impl<C> Drop for Store<C> {
        fn drop(&mut self) {
            let collector = self.collector.get_mut().unwrap_or_else(|e| e.into_inner());
            let retired = std::mem::take(&mut collector.retired);
            for batch in
                collector.batches.drain(..).chain(std::iter::once(Batch { versions: retired, waiting: Vec::new() }))
            {
                for v in batch.versions {
                    // SAFETY: no session is left (they borrow the store): unlinked versions
                    // are ours alone.
                    drop(unsafe { Box::from_raw(v.0) });
                }
            }
            for head in self.heads.iter() {
                let mut v = head.load(Relaxed);
                while !v.is_null() {
                    // SAFETY: as above, every chain is ours alone; each version is freed once.
                    let version = unsafe { Box::from_raw(v) };
                    v = version.older.load(Relaxed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Abort, Db, Mvcc};
    use ordo::LogicalClock;

    #[test]
    fn garbage_collection_keeps_chains_short() {
        let db = Db::<Mvcc, _>::new(LogicalClock::new(), 4).unwrap();
        let mut s = db.session();
        let rounds = if cfg!(miri) { 200 } else { 2000 };
        for i in 0..rounds {
            s.transaction(|tx| {
                tx.put(i % 4, i)?;
                tx.put(0, i)
            });
        }
        // Without collection there would be 1 + 2 * rounds versions; passes run every
        // `GC_EVERY` commits, so at most a few passes' worth remain.
        let live = db.engine.versions();
        assert!(live < 4 + 4 * super::GC_EVERY as usize, "{live} versions alive after {rounds} commits");
        assert_eq!(db.read(|tx| tx.get(0)), rounds - 1);
    }

    /// Collection passes unlink and free versions while other threads walk the chains
    /// (under Miri: use-after-free or a data race would be reported).
    #[test]
    fn collection_runs_beside_readers_and_writers() {
        let db = Db::<Mvcc, _>::with_config(LogicalClock::new(), &crate::Config::new(2).initial(50)).unwrap();
        let commits = if cfg!(miri) { 2 * u64::from(super::GC_EVERY) + 8 } else { 20_000 };
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    let mut s = db.session();
                    for i in 0..commits {
                        let (from, to) = (i % 2, 1 - i % 2);
                        s.transaction(|tx| {
                            let a = tx.get(from)?;
                            tx.put(from, a - 1)?;
                            let b = tx.get(to)?;
                            tx.put(to, b + 1)
                        });
                    }
                });
            }
            scope.spawn(|| {
                let mut s = db.session();
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    assert_eq!(s.read(|tx| Ok(tx.get(0)? + tx.get(1)?)), 100);
                }
            });
            scope.spawn(|| {
                // Stop the reader once the writers are well under way.
                let mut s = db.session();
                for _ in 0..(commits / 4) {
                    assert_eq!(s.read(|tx| Ok(tx.get(0)? + tx.get(1)?)), 100);
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
        });
        assert_eq!(db.read(|tx| Ok(tx.get(0)? + tx.get(1)?)), 100);
        let live = db.engine.versions();
        assert!(live < 2 + 8 * super::GC_EVERY as usize, "{live} versions alive");
    }

    #[test]
    fn an_old_snapshot_keeps_its_versions() {
        let db = Db::<Mvcc, _>::new(LogicalClock::new(), 2).unwrap();
        let mut reader = db.session();
        let mut writer = db.session();
        let mut seen = Vec::new();
        reader.read(|tx| {
            seen.clear();
            seen.push(tx.get(0)?);
            // While this snapshot is open, many commits and collections happen.
            for i in 1..=300 {
                writer.transaction(|w| w.put(0, i));
            }
            seen.push(tx.get(0)?);
            Ok(())
        });
        assert_eq!(seen, [0, 0]);
        assert_eq!(db.read(|tx| tx.get(0)), 300);
    }

    #[test]
    fn a_user_abort_removes_the_installed_versions() {
        let db = Db::<Mvcc, _>::new(LogicalClock::new(), 3).unwrap();
        let before = db.engine.versions();
        let r: Result<(), u8> = db.try_transaction(|tx| {
            tx.put(0, 5)?;
            tx.put(1, 6)?;
            Err(Abort::User(9))
        });
        assert_eq!(r, Err(9));
        assert_eq!(db.engine.versions(), before + 2, "handed to the collector, not yet freed");
        // Enough commits for a collection pass: the aborted versions are freed, and so is
        // every old version of key 2 but the one the last commit replaced (its end is the
        // newest stamp, not yet certainly before the horizon).
        let mut s = db.session();
        for i in 0..u64::from(super::GC_EVERY) {
            s.transaction(|tx| tx.put(2, i));
        }
        assert_eq!(db.read(|tx| Ok((tx.get(0)?, tx.get(1)?, tx.get(2)?))), (0, 0, u64::from(super::GC_EVERY) - 1));
        assert_eq!(db.engine.versions(), before + 1, "the aborted versions and old ones of key 2 are freed");
    }
}
