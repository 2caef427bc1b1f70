//! Silo-style optimistic concurrency control (003 §4.2, "OCC"), on any clock.
//!
//! # Records
//!
//! Each record is two words: the value and a *TID word*, `version << 1 | lock`, where the
//! version is the commit timestamp of the transaction that wrote the value (0 for the
//! initial value) and the lock bit is held only by a committing writer.
//!
//! # Read phase
//!
//! A read returns the attempt's own buffered write if there is one, or the value it read
//! before (reads are repeatable); otherwise it reads the record with Silo's protocol: load
//! the TID word (waiting while it is locked), load the value, load the TID word again, and
//! retry unless both loads agree. It then checks that the version is certainly older than
//! the attempt's start timestamp (`cmp_time(version, start) == Before`). When it is not (a
//! newer version, or one within the clock's boundary of the start), the attempt *extends*
//! its start, as TL2 and LSA do: it takes `start' = new_time(version)` and checks that
//! every record read so far, this one included, still carries the TID word it read. If so
//! every read is the committed value as of `start'`; if not the attempt conflicts. So an
//! attempt always sees one consistent snapshot, and the session's next start, certainly
//! after its own last commit, sees its own writes at once. Writes are buffered in the
//! write set.
//!
//! # Commit (read / validate / write)
//!
//! An attempt that wrote nothing is serialized at its start timestamp and commits without
//! further work: its reads are the committed state as of then (a writer whose commit
//! timestamp is certainly before the start had locked its records before taking it, so a
//! later read finds them locked or written). Otherwise:
//!
//! 1. lock the write set in key order (a global order: no deadlock), spinning on a lock
//!    held by another committer (held only for the few steps below, never across user code);
//! 2. take the commit timestamp `c = get_time()` (003 §4.2: "get_time() provides the
//!    commit timestamp"), followed by a `SeqCst` fence so the validation loads come after it;
//! 3. validate: every record read still carries the TID word read (unlocked, or locked by
//!    this attempt because it is also written), and `c` is certainly after the version of
//!    every record read and every record about to be overwritten; a version within the
//!    boundary of `c` aborts the attempt, the conservative rule of 003 §4.2;
//! 4. install: store each value, then the TID word `c << 1`, which also unlocks.
//!
//! # Why this is serializable, and why the stamps order it
//!
//! This is Silo's protocol, whose serialization point is between step 1 and step 3; the
//! clock only supplies versions. Each attempt reads its stamp inside that window, so for
//! every dependency between two committed transactions (one read or overwrote what the
//! other wrote, or overwrote what the other read) the first one's stamp was read earlier in
//! real time. With the logical clock that makes its stamp smaller; with Ordo, where clocks
//! of different cores differ by up to the boundary, it makes it never *certainly* larger.
//! Writes and reads of a version are moreover checked to be certainly ordered (step 3 and
//! the read phase). So replaying the committed transactions in stamp order, stamps within
//! the boundary of each other in some order, reproduces every read: the serial-order check
//! of `tests/serial.rs`.
//!
//! Timestamps per transaction: one start (`new_time`), one commit (`get_time`) if it
//! wrote, one more per start extension.

use ordo::{Clock, TimeOrder};

use crate::engine::{Engine, Kind, Sealed};
use crate::entries::Entries;
use crate::stamps::Stamps;
use crate::sync::{AtomicU64, fence, spin_wait};
use crate::{Conflict, SessionError, Stats};

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};

/// The OCC scheme: `Db<Occ, C>` (see the [module docs](self)).
#[derive(Clone, Copy, Debug)]
pub struct Occ;

impl Sealed for Occ {
    type Engine<C: Clock> = imp::Table<C>;
    const NAME: &'static str = "occ";
}

/// The lock bit of a TID word.
const LOCK: u64 = 1;

/// Spins on a locked record before a read gives up with a conflict.
const READ_SPINS: u32 = 1 << 10;

mod imp {
    use super::*;

    /// One record.
    #[derive(Debug)]
    pub(crate) struct Record {
        /// `version << 1 | lock`.
        pub(crate) tid: AtomicU64,
        pub(crate) value: AtomicU64,
    }

    /// A read: the TID word seen and the value read under it.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Read {
        word: u64,
        value: u64,
    }

    /// A buffered write, and at commit the TID word the lock replaced.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Write {
        value: u64,
        old: u64,
    }

    /// A session's attempt.
    #[derive(Debug, Default)]
    pub struct Attempt {
        open: bool,
        start: u64,
        reads: Entries<Read>,
        writes: Entries<Write>,
        /// Write-set entries (in key order) locked by a commit in progress.
        locked: usize,
    }

    /// The OCC engine: the table of records.
    #[derive(Debug)]
    pub struct Table<C> {
        records: Box<[Record]>,
        stamps: Stamps<C>,
    }

    impl<C: Clock> Table<C> {
        fn record(&self, key: u64) -> &Record {
            &self.records[key as usize]
        }

        /// Silo's read: a TID word and the value under it, consistent; `None` if the record
        /// stayed locked for [`READ_SPINS`] spins.
        fn read_record(&self, key: u64) -> Option<(u64, u64)> {
            let record = self.record(key);
            let mut spins = 0;
            loop {
                let before = record.tid.load(Acquire);
                if before & LOCK == 0 {
                    // Acquire: the second TID load cannot move before this one, and a value
                    // stored by a committer (Release, after its lock) makes that lock visible
                    // to the second load.
                    let value = record.value.load(Acquire);
                    if record.tid.load(Relaxed) == before {
                        return Some((before, value));
                    }
                }
                if spins >= READ_SPINS {
                    return None;
                }
                spin_wait(&mut spins);
            }
        }

        /// Whether every read of `attempt` still carries the TID word it saw (a record this
        /// attempt has locked counts as unchanged).
        fn reads_unchanged(&self, attempt: &Attempt, locked_by_me: bool) -> bool {
            attempt.reads.iter().all(|(key, read)| {
                let now = self.record(*key).tid.load(Acquire);
                now == read.word || (locked_by_me && now == read.word | LOCK && attempt.writes.get(*key).is_some())
            })
        }

        /// Unlocks the first `attempt.locked` write-set entries, restoring their TID words.
        fn unlock(&self, attempt: &mut Attempt) {
            for (key, write) in attempt.writes.iter().take(attempt.locked) {
                self.record(*key).tid.store(write.old, Release);
            }
            attempt.locked = 0;
        }

        /// Ends the attempt with a conflict after unlocking what it locked.
        fn fail(&self, attempt: &mut Attempt, after: u64) -> Conflict {
            self.unlock(attempt);
            attempt.open = false;
            Conflict::after(after)
        }
    }

    impl<C: Clock> Engine<C> for Table<C> {
        type Session = Attempt;

        fn new(stamps: Stamps<C>, keys: u64, initial: u64, _max_sessions: usize) -> Self {
            let records =
                (0..keys).map(|_| Record { tid: AtomicU64::new(0), value: AtomicU64::new(initial) }).collect();
            Self { records, stamps }
        }

        fn stamps(&self) -> &Stamps<C> {
            &self.stamps
        }

        fn keys(&self) -> u64 {
            self.records.len() as u64
        }

        fn open(&self) -> Result<Attempt, SessionError> {
            Ok(Attempt::default())
        }

        fn close(&self, attempt: &mut Attempt) {
            self.abort(attempt);
        }

        fn begin(&self, attempt: &mut Attempt, _kind: Kind, floor: u64, stats: &mut Stats) {
            attempt.reads.clear();
            attempt.writes.clear();
            attempt.locked = 0;
            attempt.start = self.stamps.start(floor, stats);
            attempt.open = true;
        }

        fn get(&self, attempt: &mut Attempt, key: u64, stats: &mut Stats) -> Result<u64, Conflict> {
            if let Some(w) = attempt.writes.get(key) {
                return Ok(w.value);
            }
            if let Some(r) = attempt.reads.get(key) {
                return Ok(r.value);
            }
            let Some((word, value)) = self.read_record(key) else {
                return Err(Conflict::NONE);
            };
            let version = word >> 1;
            attempt.reads.push(key, Read { word, value });
            if !self.stamps.before(version, attempt.start) {
                // Extension: a start certainly after this version, then every read (this one
                // included) must still be current.
                let start = self.stamps.after(version, stats);
                if !self.reads_unchanged(attempt, false) {
                    return Err(Conflict::after(version));
                }
                attempt.start = start;
            }
            Ok(value)
        }

        fn put(&self, attempt: &mut Attempt, key: u64, value: u64, _stats: &mut Stats) -> Result<(), Conflict> {
            match attempt.writes.get_mut(key) {
                Some(w) => w.value = value,
                None => attempt.writes.push(key, Write { value, old: 0 }),
            }
            Ok(())
        }

        fn commit(&self, attempt: &mut Attempt, stats: &mut Stats) -> Result<u64, Conflict> {
            if attempt.writes.is_empty() {
                attempt.open = false;
                return Ok(attempt.start);
            }
            // 1. Lock the write set in key order.
            attempt.writes.sort_by_key();
            let n = attempt.writes.len();
            for i in 0..n {
                let key = attempt.writes.at(i).0;
                let tid = &self.record(key).tid;
                let mut spins = 0;
                let old = loop {
                    let word = tid.load(Relaxed);
                    if word & LOCK == 0 && tid.compare_exchange_weak(word, word | LOCK, Acquire, Relaxed).is_ok() {
                        break word;
                    }
                    spin_wait(&mut spins);
                };
                attempt.writes.at_mut(i).1.old = old;
                attempt.locked = i + 1;
            }
            // 2. The commit timestamp, read before any validation load.
            let c = self.stamps.occ_commit(stats);
            fence(SeqCst);
            // 3. Validate the read set and order the commit after every version involved.
            if !self.reads_unchanged(attempt, true) {
                return Err(self.fail(attempt, 0));
            }
            let versions =
                attempt.reads.iter().map(|(_, r)| r.word >> 1).chain(attempt.writes.iter().map(|(_, w)| w.old >> 1));
            let mut newest = 0;
            let mut ordered = true;
            for version in versions {
                newest = newest.max(version);
                ordered &= self.stamps.order(c, version) == TimeOrder::After;
            }
            if !ordered {
                return Err(self.fail(attempt, newest));
            }
            // 4. Install: the value, then the TID word, which unlocks.
            for (key, write) in attempt.writes.iter() {
                let record = self.record(*key);
                record.value.store(write.value, Release);
                record.tid.store(c << 1, Release);
            }
            attempt.locked = 0;
            attempt.open = false;
            Ok(c)
        }

        fn abort(&self, attempt: &mut Attempt) {
            if attempt.open {
                self.unlock(attempt);
                attempt.open = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Abort, Db, Occ};
    use ordo::LogicalClock;

    #[test]
    fn a_failed_validation_unlocks_what_it_locked() {
        let db = Db::<Occ, _>::new(LogicalClock::new(), 4).unwrap();
        let mut a = db.session();
        let mut b = db.session();
        let mut first = true;
        // `a` reads 0, `b` overwrites it before `a` commits: `a` conflicts once, then commits.
        a.transaction(|tx| {
            let v = tx.get(0)?;
            if first {
                first = false;
                b.transaction(|tx| tx.put(0, 7));
            }
            tx.put(1, v + 1)?;
            tx.put(2, v + 2)
        });
        assert_eq!(a.stats().conflicts, 1);
        assert_eq!(db.read(|tx| Ok((tx.get(0)?, tx.get(1)?, tx.get(2)?))), (7, 8, 9));
        // Nothing is left locked: a third session writes every key at once.
        db.transaction(|tx| (0..4).try_for_each(|k| tx.put(k, 1)));
        assert_eq!(db.read(|tx| (0..4).map(|k| tx.get(k)).sum::<Result<u64, _>>()), 4);
        let r: Result<(), &str> = db.try_transaction(|tx| {
            tx.put(3, 100)?;
            Err(Abort::User("no"))
        });
        assert_eq!(r, Err("no"));
        assert_eq!(db.read(|tx| tx.get(3)), 1);
    }
}
