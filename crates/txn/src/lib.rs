//! A transactional in-memory key-value store with two optimistic concurrency-control schemes,
//! each generic over the clock that orders its transactions: the logical clock of the
//! originals (one shared counter) or Ordo's per-core hardware clocks (003 §4.2).
//!
//! ```
//! use ordo::LogicalClock;
//! use ordo_txn::{Db, Mvcc};
//!
//! let db = Db::<Mvcc, _>::new(LogicalClock::new(), 16).unwrap();
//! db.transaction(|tx| {
//!     let v = tx.get(1)?;
//!     tx.put(2, v + 1)?;
//!     Ok(())
//! });
//! assert_eq!(db.read(|tx| tx.get(2)), 1);
//! ```
//!
//! # The store
//!
//! A fixed-size table of `keys` records, keys `0..keys`, each holding a `u64` (every record
//! starts with the configured initial value, 0 by default). Values are one word so that OCC
//! reads a record with plain atomic loads between two loads of its version word (Silo's read
//! protocol) and never copies user memory that a writer may be changing; store a larger value
//! under several keys, or an index into your own table. A key outside `0..keys` is a bug in
//! the caller: `get` and `put` panic naming the key and the table size (the panic aborts the
//! transaction like any other, below).
//!
//! # Transactions
//!
//! A [`Session`] is one thread's handle (it keeps its read and write sets between
//! transactions; MVCC gives each session a transaction descriptor). Its transactions are
//! closures run until they commit:
//!
//! * [`Session::transaction`]: read-write; the closure returns `Result<R, Conflict>` and
//!   propagates conflicts with `?`;
//! * [`Session::try_transaction`]: the same, and the closure may give up with
//!   [`Abort::User`]: nothing it wrote is kept, and the error is returned;
//! * [`Session::read`]: read-only (`get` only), serialized at its start timestamp, with no
//!   commit timestamp and no validation.
//!
//! [`Db::transaction`], [`Db::try_transaction`] and [`Db::read`] open a session for one
//! transaction (MVCC claims a descriptor for it, and hands the session's garbage to the
//! collector when it closes): in a loop, keep a session. A conflict rolls the attempt back and runs the closure again, after a
//! randomized exponential back-off; the closure may therefore run several times and should
//! have no other side effects. [`Session::stats`] counts commits, conflicts, user aborts and
//! timestamps taken.
//!
//! **Isolation: serializable.** Every committed transaction, read-only or not, behaves as if
//! run alone at one point of a single serial order, and that order agrees with the
//! serialization stamps ([`Session::last_stamp`]): when `cmp_time(a, b)` is `Before`, the
//! transaction stamped `a` comes first (stamps within the clock's boundary of each other are
//! in either order; with the logical clock stamps are distinct and exact). A running
//! attempt only ever sees a consistent snapshot, so a closure never observes a state no
//! serial execution could produce, even in an attempt that later aborts.
//!
//! **Panics.** A panic in a closure aborts its attempt: OCC has taken no lock yet (it locks
//! only inside commit), MVCC removes the versions the attempt installed and releases the
//! records it claimed; then the panic continues to the caller. Nothing else is lost, and
//! the session stays usable.
//!
//! # The schemes (003 §4.2)
//!
//! * [`Occ`]: Silo-style optimistic concurrency control. Each record has a TID word (its
//!   version stamp and a lock bit). Reads record the version they saw; writes are buffered.
//!   Commit locks the write set in key order, takes the commit timestamp (`get_time`),
//!   validates the read set (unchanged, unlocked by others, and certainly older than the
//!   commit timestamp) and installs the writes with the commit timestamp as their version.
//!   Reads also check that a version is certainly older than the start timestamp, moving the
//!   start forward (and revalidating) when it is not, which keeps every attempt's view
//!   consistent and lets read-only transactions commit without validation. See [`occ`].
//! * [`Mvcc`]: Hekaton-style optimistic multi-versioning. Each record is a chain of versions
//!   with begin and end timestamps; a writer installs its version at once with its
//!   transaction id in the begin field (and in the old version's end field); readers see the
//!   version whose interval holds their start timestamp, looking the owner up when they
//!   meet an id. Commit takes the commit timestamp (`new_time(start)`), validates that every
//!   version read is still current then, and replaces the ids by the commit timestamp. Old
//!   versions are collected once no running transaction can see them. See [`mvcc`].
//!
//! Both take the start timestamp with `new_time` and abort whenever two stamps they must
//! order fall within the clock's boundary ([`ordo::TimeOrder::Uncertain`]): with
//! [`ordo::LogicalClock`] that is the original algorithm, with [`ordo::Ordo`] the 003
//! version, and no code differs between the two. The `stamps` module lists every
//! timestamp step.

#![warn(missing_docs)]

mod engine;
mod entries;
pub mod mvcc;
pub mod occ;
mod stamps;
mod sync;

use std::fmt;
use std::marker::PhantomData;

use ordo::Clock;

use engine::{Engine, Kind, Sealed};
use stamps::Stamps;

pub use mvcc::Mvcc;
pub use occ::Occ;

/// A concurrency-control scheme: [`Occ`] or [`Mvcc`] (sealed).
pub trait Scheme: Sealed {}

impl Scheme for Occ {}
impl Scheme for Mvcc {}

/// The largest table a store accepts (keys).
pub const MAX_KEYS: u64 = 1 << 32;

/// The most sessions a store accepts at once.
pub const MAX_SESSIONS: usize = 1 << 20;

/// How a store is built: its size, the records' initial value, and how many sessions may be
/// open at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    keys: u64,
    initial: u64,
    max_sessions: usize,
}

impl Config {
    /// A table of `keys` records holding 0, with room for 1024 sessions at once.
    pub fn new(keys: u64) -> Self {
        Self { keys, initial: 0, max_sessions: 1024 }
    }

    /// Every record starts with `value`.
    pub fn initial(mut self, value: u64) -> Self {
        self.initial = value;
        self
    }

    /// At most `n` sessions open at once (MVCC keeps a transaction descriptor per session;
    /// OCC keeps none and ignores this).
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.keys == 0 {
            return Err(ConfigError::NoKeys);
        }
        if self.keys > MAX_KEYS {
            return Err(ConfigError::TooManyKeys { keys: self.keys });
        }
        if self.max_sessions == 0 || self.max_sessions > MAX_SESSIONS {
            return Err(ConfigError::Sessions { max_sessions: self.max_sessions });
        }
        Ok(())
    }
}

/// Why a store could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A table needs at least one key.
    NoKeys,
    /// More keys than [`MAX_KEYS`].
    TooManyKeys {
        /// The number asked for.
        keys: u64,
    },
    /// `max_sessions` is 0 or above [`MAX_SESSIONS`].
    Sessions {
        /// The number asked for.
        max_sessions: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NoKeys => write!(f, "a transactional store needs at least one key (keys = 0)"),
            ConfigError::TooManyKeys { keys } => {
                write!(f, "a transactional store holds at most {MAX_KEYS} keys; {keys} were asked for")
            }
            ConfigError::Sessions { max_sessions } => {
                write!(f, "max_sessions must be between 1 and {MAX_SESSIONS}; {max_sessions} was asked for")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Why a session could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// Every one of the store's `max` session slots is held by an open session.
    Exhausted {
        /// The store's `max_sessions`.
        max: usize,
    },
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Exhausted { max } => write!(
                f,
                "all {max} sessions of this store are open: drop one, or build the store with a larger Config::max_sessions"
            ),
        }
    }
}

impl std::error::Error for SessionError {}

/// A transaction attempt lost a conflict: it is rolled back and run again. Returned by
/// [`Tx::get`] and [`Tx::put`]; propagate it with `?`. Only the store makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// A timestamp the next attempt's start must be certainly after (0: none), so that it
    /// does not meet the same uncertain or too-new version again.
    after: u64,
}

impl Conflict {
    pub(crate) const NONE: Conflict = Conflict { after: 0 };

    /// A conflict with a version stamped `t` (∞, the stamp of a version that never becomes
    /// visible, gives no hint).
    pub(crate) fn after(t: u64) -> Self {
        Conflict { after: if t <= stamps::MAX_STAMP { t } else { 0 } }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("transaction conflict (the attempt is retried)")
    }
}

impl std::error::Error for Conflict {}

/// How a [`Session::try_transaction`] closure ends an attempt early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Abort<E> {
    /// A conflict: the attempt is retried.
    Conflict(Conflict),
    /// The closure gives up: the transaction is rolled back and `try_transaction` returns
    /// `Err(e)`.
    User(E),
}

impl<E> From<Conflict> for Abort<E> {
    fn from(c: Conflict) -> Self {
        Abort::Conflict(c)
    }
}

/// What a session's transactions did, counted by the session itself (no shared counter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Transactions committed (read-only ones included).
    pub commits: u64,
    /// Attempts rolled back by a conflict and retried.
    pub conflicts: u64,
    /// Transactions given up by their closure ([`Abort::User`]).
    pub user_aborts: u64,
    /// Timestamps taken from the clock (starts, OCC start extensions, commits), aborted
    /// attempts included.
    pub timestamps: u64,
}

impl Stats {
    /// Conflicts over attempts that ended in a commit or a conflict (0 when none ran).
    pub fn abort_rate(&self) -> f64 {
        let attempts = self.commits + self.conflicts;
        if attempts == 0 { 0.0 } else { self.conflicts as f64 / attempts as f64 }
    }

    /// The sum of two sessions' counts.
    pub fn merged(&self, other: &Stats) -> Stats {
        Stats {
            commits: self.commits + other.commits,
            conflicts: self.conflicts + other.conflicts,
            user_aborts: self.user_aborts + other.user_aborts,
            timestamps: self.timestamps + other.timestamps,
        }
    }
}

/// A transactional store: a table of `u64` records under scheme `S` ([`Occ`] or [`Mvcc`]),
/// ordered by clock `C` (see the [crate docs](crate)).
pub struct Db<S: Scheme, C: Clock> {
    engine: <S as Sealed>::Engine<C>,
    _scheme: PhantomData<fn() -> S>,
}

impl<S: Scheme, C: Clock> fmt::Debug for Db<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("scheme", &S::NAME)
            .field("clock", &self.engine.stamps().clock().name())
            .field("keys", &self.engine.keys())
            .finish_non_exhaustive()
    }
}

impl<S: Scheme, C: Clock> Db<S, C> {
    /// A store of `keys` records holding 0 (see [`Config::new`]).
    ///
    /// # Errors
    /// When `keys` is 0 or above [`MAX_KEYS`].
    pub fn new(clock: C, keys: u64) -> Result<Self, ConfigError> {
        Self::with_config(clock, &Config::new(keys))
    }

    /// A store built as `config` says.
    ///
    /// # Errors
    /// When `config` asks for no keys, more than [`MAX_KEYS`], or a `max_sessions` of 0 or
    /// above [`MAX_SESSIONS`].
    pub fn with_config(clock: C, config: &Config) -> Result<Self, ConfigError> {
        config.validate()?;
        let engine =
            <S::Engine<C> as Engine<C>>::new(Stamps::new(clock), config.keys, config.initial, config.max_sessions);
        Ok(Self { engine, _scheme: PhantomData })
    }

    /// The number of keys (valid keys are `0..keys()`).
    pub fn keys(&self) -> u64 {
        self.engine.keys()
    }

    /// The clock that orders the transactions.
    pub fn clock(&self) -> &C {
        self.engine.stamps().clock()
    }

    /// A session: one thread's handle for running transactions.
    ///
    /// # Panics
    /// When `max_sessions` sessions are open already (see [`Db::try_session`]).
    pub fn session(&self) -> Session<'_, S, C> {
        match self.try_session() {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    /// A session, or why none can be opened.
    ///
    /// # Errors
    /// [`SessionError::Exhausted`] when `max_sessions` sessions are open already.
    pub fn try_session(&self) -> Result<Session<'_, S, C>, SessionError> {
        let inner = self.engine.open()?;
        Ok(Session { db: self, inner, stats: Stats::default(), floor: 0, last_stamp: 0, rng: seed() })
    }

    /// Runs `f` as a read-write transaction on a session of its own (see
    /// [`Session::transaction`]).
    pub fn transaction<R>(&self, f: impl FnMut(&mut Tx<'_, S, C>) -> Result<R, Conflict>) -> R {
        self.session().transaction(f)
    }

    /// Runs `f` as a read-write transaction that may give up (see
    /// [`Session::try_transaction`]).
    ///
    /// # Errors
    /// The closure's [`Abort::User`] error.
    pub fn try_transaction<R, E>(&self, f: impl FnMut(&mut Tx<'_, S, C>) -> Result<R, Abort<E>>) -> Result<R, E> {
        self.session().try_transaction(f)
    }

    /// Runs `f` as a read-only transaction (see [`Session::read`]).
    pub fn read<R>(&self, f: impl FnMut(&mut ReadTx<'_, '_, S, C>) -> Result<R, Conflict>) -> R {
        self.session().read(f)
    }
}

/// A seed for a session's back-off generator: distinct per session (fixed under loom, whose
/// models must be deterministic).
#[cfg(loom)]
fn seed() -> u64 {
    0x9e37_79b9_7f4a_7c15
}

/// A seed for a session's back-off generator: distinct per session.
#[cfg(not(loom))]
fn seed() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);
    NEXT.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed) | 1
}

/// One thread's handle on a [`Db`]: runs transactions one at a time, keeps its read and
/// write sets' memory between them, and counts what they did ([`Session::stats`]).
pub struct Session<'db, S: Scheme, C: Clock> {
    db: &'db Db<S, C>,
    inner: <S::Engine<C> as Engine<C>>::Session,
    stats: Stats,
    /// The next start must be certainly after this (the last commit, or a conflict's hint).
    floor: u64,
    last_stamp: u64,
    rng: u64,
}

impl<S: Scheme, C: Clock> fmt::Debug for Session<'_, S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("db", self.db).field("stats", &self.stats).finish_non_exhaustive()
    }
}

impl<S: Scheme, C: Clock> Drop for Session<'_, S, C> {
    fn drop(&mut self) {
        self.db.engine.close(&mut self.inner);
    }
}

impl<'db, S: Scheme, C: Clock> Session<'db, S, C> {
    /// The store.
    pub fn db(&self) -> &'db Db<S, C> {
        self.db
    }

    /// What this session's transactions did so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The serialization stamp of the last transaction this session committed: its commit
    /// timestamp, or for one that wrote nothing its start timestamp (0 before the first).
    /// Stamps order transactions as the [crate docs](crate#transactions) say.
    pub fn last_stamp(&self) -> u64 {
        self.last_stamp
    }

    /// Runs `f` as a read-write transaction until it commits, and returns its result.
    /// `f` may run several times (each conflict rolls its attempt back and retries it).
    ///
    /// # Panics
    /// Whatever `f` panics with, after rolling its attempt back.
    pub fn transaction<R>(&mut self, mut f: impl FnMut(&mut Tx<'_, S, C>) -> Result<R, Conflict>) -> R {
        match self.run(Kind::ReadWrite, |tx| f(tx).map_err(Abort::<std::convert::Infallible>::Conflict)) {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// Runs `f` as a read-write transaction until it commits or gives up with
    /// [`Abort::User`].
    ///
    /// # Errors
    /// The closure's [`Abort::User`] error; nothing the transaction wrote is kept.
    ///
    /// # Panics
    /// Whatever `f` panics with, after rolling its attempt back.
    pub fn try_transaction<R, E>(&mut self, f: impl FnMut(&mut Tx<'_, S, C>) -> Result<R, Abort<E>>) -> Result<R, E> {
        self.run(Kind::ReadWrite, f)
    }

    /// Runs `f` as a read-only transaction until it commits (it sees one consistent
    /// snapshot, and commits with neither a commit timestamp nor validation).
    ///
    /// # Panics
    /// Whatever `f` panics with, after rolling its attempt back.
    pub fn read<R>(&mut self, mut f: impl FnMut(&mut ReadTx<'_, '_, S, C>) -> Result<R, Conflict>) -> R {
        let result =
            self.run(Kind::ReadOnly, |tx| f(&mut ReadTx(tx)).map_err(Abort::<std::convert::Infallible>::Conflict));
        match result {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// The retry loop every kind of transaction runs.
    fn run<R, E>(&mut self, kind: Kind, mut f: impl FnMut(&mut Tx<'_, S, C>) -> Result<R, Abort<E>>) -> Result<R, E> {
        let engine = &self.db.engine;
        let mut attempt = 0u32;
        loop {
            engine.begin(&mut self.inner, kind, self.floor, &mut self.stats);
            let outcome = {
                let mut tx = Tx { engine, session: &mut self.inner, stats: &mut self.stats, open: true };
                match f(&mut tx) {
                    Ok(r) => tx.commit().map(|stamp| (r, stamp)),
                    Err(abort) => {
                        tx.rollback();
                        Err(abort)
                    }
                }
            };
            match outcome {
                Ok((r, stamp)) => {
                    self.stats.commits += 1;
                    self.last_stamp = stamp;
                    self.floor = self.floor.max(stamp);
                    return Ok(r);
                }
                Err(Abort::Conflict(c)) => {
                    self.stats.conflicts += 1;
                    self.floor = self.floor.max(c.after);
                    attempt = attempt.saturating_add(1);
                    self.back_off(attempt);
                }
                Err(Abort::User(e)) => {
                    self.stats.user_aborts += 1;
                    return Err(e);
                }
            }
        }
    }

    /// Randomized exponential back-off before retry `attempt` (1, 2, ...): up to 2^attempt
    /// spin hints (at most 2^12), and a yield once attempts pass 8.
    fn back_off(&mut self, attempt: u32) {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let limit = 1u64 << attempt.min(12);
        for _ in 0..(self.rng % limit) {
            sync::spin_hint();
        }
        if attempt > 8 {
            sync::yield_now();
        }
    }
}

/// One attempt of a read-write transaction: [`Tx::get`] and [`Tx::put`]. Dropped without
/// committing (a panic in the closure), it rolls the attempt back.
pub struct Tx<'s, S: Scheme, C: Clock> {
    engine: &'s S::Engine<C>,
    session: &'s mut <S::Engine<C> as Engine<C>>::Session,
    stats: &'s mut Stats,
    open: bool,
}

impl<S: Scheme, C: Clock> fmt::Debug for Tx<'_, S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tx").field("scheme", &S::NAME).finish_non_exhaustive()
    }
}

impl<S: Scheme, C: Clock> Tx<'_, S, C> {
    /// The value of `key`: the attempt's own write if it wrote it, else the committed value
    /// in its snapshot.
    ///
    /// # Errors
    /// [`Conflict`]: propagate it; the attempt is retried.
    ///
    /// # Panics
    /// When `key` is not below the store's [`Db::keys`].
    #[inline]
    pub fn get(&mut self, key: u64) -> Result<u64, Conflict> {
        check_key(key, self.engine.keys());
        self.engine.get(self.session, key, self.stats)
    }

    /// Writes `value` to `key` (visible to this attempt at once, to others when it commits).
    ///
    /// # Errors
    /// [`Conflict`]: propagate it; the attempt is retried.
    ///
    /// # Panics
    /// When `key` is not below the store's [`Db::keys`].
    #[inline]
    pub fn put(&mut self, key: u64, value: u64) -> Result<(), Conflict> {
        check_key(key, self.engine.keys());
        self.engine.put(self.session, key, value, self.stats)
    }

    /// Commits the attempt. The attempt stays open while the engine commits, so that a
    /// panic in the middle (a clock that returns an unusable stamp) still rolls it back.
    fn commit<E>(&mut self) -> Result<u64, Abort<E>> {
        let result = self.engine.commit(self.session, self.stats);
        self.open = false;
        result.map_err(Abort::Conflict)
    }

    fn rollback(&mut self) {
        if self.open {
            self.open = false;
            self.engine.abort(self.session);
        }
    }
}

impl<S: Scheme, C: Clock> Drop for Tx<'_, S, C> {
    fn drop(&mut self) {
        self.rollback();
    }
}

/// One attempt of a read-only transaction: [`ReadTx::get`] only.
pub struct ReadTx<'a, 's, S: Scheme, C: Clock>(&'a mut Tx<'s, S, C>);

impl<S: Scheme, C: Clock> fmt::Debug for ReadTx<'_, '_, S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadTx").field("scheme", &S::NAME).finish_non_exhaustive()
    }
}

impl<S: Scheme, C: Clock> ReadTx<'_, '_, S, C> {
    /// The committed value of `key` in the transaction's snapshot.
    ///
    /// # Errors
    /// [`Conflict`]: propagate it; the attempt is retried.
    ///
    /// # Panics
    /// When `key` is not below the store's [`Db::keys`].
    #[inline]
    pub fn get(&mut self, key: u64) -> Result<u64, Conflict> {
        self.0.get(key)
    }
}

/// Panics unless `key < keys`.
#[inline]
fn check_key(key: u64, keys: u64) {
    if key >= keys {
        key_out_of_range(key, keys);
    }
}

#[cold]
#[inline(never)]
fn key_out_of_range(key: u64, keys: u64) -> ! {
    panic!("key {key} is out of range: this store has {keys} keys (0..{keys})")
}

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
