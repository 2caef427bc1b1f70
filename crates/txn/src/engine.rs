//! What a concurrency-control scheme provides to the transaction API ([`crate::Db`],
//! [`crate::Session`], [`crate::Tx`]): sessions, and one attempt at a transaction at a time
//! per session (begin, get, put, commit or abort). The trait lives in a private module, so
//! the schemes are sealed: [`crate::Occ`] and [`crate::Mvcc`] are the only ones.

use ordo::Clock;

use crate::stamps::Stamps;
use crate::{Conflict, SessionError, Stats};

/// Whether an attempt was declared read-only (it may then skip what only a commit with
/// writes needs, such as MVCC's read set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// [`crate::Session::read`]: `get` only.
    ReadOnly,
    /// [`crate::Session::transaction`] and [`crate::Session::try_transaction`].
    ReadWrite,
}

/// The scheme markers' link to their engine.
pub trait Sealed {
    /// The engine, for a clock `C`.
    type Engine<C: Clock>: Engine<C>;
    /// The scheme's name in `Debug` output.
    const NAME: &'static str;
}

/// A concurrency-control engine over a table of `keys` records (`0..keys`), each a `u64`.
///
/// Contract with the API: `begin` opens an attempt on a session; `get` and `put` run inside
/// it; `commit` ends it (on `Err` having rolled everything back itself) and `abort` ends it
/// without effect. `abort` is also called when an attempt is dropped open (a panic in the
/// user's closure), so it must be idempotent, must not panic, and must leave the store as if
/// the attempt never ran.
pub trait Engine<C: Clock>: Send + Sync + Sized {
    /// Per-session state: read and write sets kept between attempts for their capacity.
    type Session: Send;

    /// A store of `keys` records, every one holding `initial`, with room for
    /// `max_sessions` sessions at once.
    fn new(stamps: Stamps<C>, keys: u64, initial: u64, max_sessions: usize) -> Self;

    /// The store's clock steps.
    fn stamps(&self) -> &Stamps<C>;

    /// The number of keys.
    fn keys(&self) -> u64;

    /// A new session.
    fn open(&self) -> Result<Self::Session, SessionError>;

    /// Gives back what `open` took (the session is dropped next).
    fn close(&self, session: &mut Self::Session);

    /// Starts an attempt whose start timestamp is certainly after `floor`.
    fn begin(&self, session: &mut Self::Session, kind: Kind, floor: u64, stats: &mut Stats);

    /// The value of `key` (in `0..keys`) for the running attempt.
    fn get(&self, session: &mut Self::Session, key: u64, stats: &mut Stats) -> Result<u64, Conflict>;

    /// Writes `value` to `key` (in `0..keys`) in the running attempt.
    fn put(&self, session: &mut Self::Session, key: u64, value: u64, stats: &mut Stats) -> Result<(), Conflict>;

    /// Commits the running attempt; returns its serialization stamp.
    fn commit(&self, session: &mut Self::Session, stats: &mut Stats) -> Result<u64, Conflict>;

    /// Rolls the running attempt back, if one is open.
    fn abort(&self, session: &mut Self::Session);
}
