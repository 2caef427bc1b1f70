//! TL2 software transactional memory on a logical clock or on the Ordo clock (003 §4.3).
//!
//! TL2 (Dice, Shalev and Shavit, "Transactional Locking II", DISC 2006; 003 ref. 21)
//! orders transactions by a global version clock. A transaction reads the clock when it
//! starts; every variable carries a versioned write-lock (an *orec*) holding the commit
//! stamp of its last writer; a transactional load accepts a variable only if it is
//! unlocked and not newer than the start, so every value seen belongs to one snapshot;
//! stores are buffered; commit locks the variables written, takes a commit stamp,
//! validates the orecs read, installs the values and releases the locks with the commit
//! stamp as their version. The clock is the bottleneck: every commit increments one
//! shared counter and every start reads it, so its cache line moves between all the
//! cores that commit (003 §2, Figure 8b).
//!
//! 003 §4.3 replaces the counter with Ordo's invariant per-core hardware clock: the start
//! is a local clock reading, the commit stamp is `new_time(start)`, certainly later on
//! every core, and two timestamps within the uncertainty window (`cmp_time` answering
//! `Uncertain`) abort the transaction, at load and at commit-time validation. Taking a
//! timestamp then writes no shared memory.
//!
//! # The same code on both clocks
//!
//! [`Stm<C>`](Stm) is generic over the clock: `Stm<LogicalClock>` is TL2 and `Stm<Ordo>`
//! is TL2-Ordo, one implementation with a different `C`. The clock appears in three places
//! (the start, the read test, the commit stamp), written once in terms of [`ordo::Clock`]
//! (`now`, `cmp_time`, `new_time`) and of [`TxClock::NOW_IS_ISSUED`], which says whether
//! `now()` is the last timestamp the clock issued (a counter: a version equal to the start
//! is readable) or a reading of a running clock (only versions certainly before it are).
//!
//! | step | `Stm<LogicalClock>` | `Stm<Ordo>` |
//! |---|---|---|
//! | start | `now()`: load of the shared counter | `new_time(t)`, `t` this thread's last commit stamp or the version that aborted its last attempt; else `get_time()` |
//! | load accepts version `v` | `v <= start` | `cmp_time(v, start) == Before` |
//! | commit stamp | `new_time(max(start, overwritten))`: CAS to max + 1 | `new_time(max(start, overwritten))`: local wait |
//! | validation | orecs read unlocked (or ours), versions accepted as at load; skipped if the stamp is `start + 1` | the same, never skipped |
//!
//! # Using it
//!
//! ```
//! use ordo::LogicalClock;
//! use ordo_stm::{Stm, TVar};
//!
//! let stm = Stm::new(LogicalClock::new()); // or Stm::new(ordo::global().as_ref().clone())
//! let (a, b) = (TVar::new(&stm, 100_i64), TVar::new(&stm, 0_i64));
//! std::thread::scope(|s| {
//!     s.spawn(|| {
//!         stm.atomically(|tx| {
//!             let x = tx.read(&a)?;
//!             tx.write(&a, x - 30);
//!             let y = tx.read(&b)?;
//!             tx.write(&b, y + 30);
//!             Ok(())
//!         })
//!     });
//!     // Every transaction sees both accounts from one snapshot.
//!     let total = stm.atomically(|tx| Ok(tx.read(&a)? + tx.read(&b)?));
//!     assert_eq!(total, 100);
//! });
//! assert_eq!(stm.atomically(|tx| tx.read(&b)), 30);
//! ```
//!
//! * **Variables** are object-based: a [`TVar<T>`] holds any `T: Clone + Send + Sync +
//!   'static`, boxed; a read clones it, a commit installs a new box and hands the old one
//!   to crossbeam-epoch, which frees it once no reader can still be cloning from it. One
//!   orec per variable. Small `Copy` values (integers, a few words) are the cheap case;
//!   share bigger ones through an `Arc`.
//! * **Transactions** are closures given a [`Tx`]: [`Tx::read`] returns `Err(Retry)` on a
//!   conflict, which the closure passes on with `?`; [`Tx::write`] buffers. The closure
//!   runs again until an attempt commits, after a randomized exponential backoff.
//! * **Retry** ([`Tx::retry`]): `return Err(tx.retry())` abandons the attempt and runs the
//!   transaction again once another transaction has changed a variable it read (to wait
//!   for a condition, as in composable memory transactions).
//! * **Abort** ([`Stm::try_atomically`]): `Err(Abort::User(e))` abandons the transaction
//!   for good: nothing it wrote is applied and the call returns `Err(e)`.
//! * **Panics** in the closure abandon the attempt the same way (no lock is held while
//!   user code runs, staged values are freed) and continue in the caller; other threads'
//!   transactions are unaffected.
//! * **Statistics**: [`Stats::thread`] counts this thread's commits, aborts (and how many
//!   were on the uncertainty window) and timestamps taken.
//!
//! # Guarantees and limits
//!
//! Committed transactions are serializable, and every attempt (committed or not) reads a
//! consistent snapshot (opacity). The serial order is the real-time order of the moments
//! the commit stamps were taken (each while the transaction held its write locks), with a
//! read-only transaction placed at its start. On the logical clock the stamps themselves
//! are in that order. On Ordo two stamps within the uncertainty window may be in either
//! order: write-write and write-read conflicts still give increasing stamps (`new_time`
//! waits past the version overwritten or read), but a transaction that overwrites a
//! variable another one read just before committing may get a stamp a little below the
//! reader's. So the tests check histories by their conflicts, not by their stamps. The
//! argument rests on the clock's contract: readings of two cores at one instant differ by
//! at most the boundary, so a version certainly before the start was stamped, with its
//! locks held, before the attempt began.
//!
//! Not provided: nested transactions (an inner `atomically` is a separate transaction),
//! blocking `orElse`, irrevocable transactions, contention managers beyond backoff, or
//! protection from a closure's side effects outside its variables (they may run more
//! than once). A committing transaction that finds a variable locked aborts at once (no
//! waiting on locks, so no deadlock). An attempt holds an epoch pin while its closure runs,
//! so a transaction that runs for long delays the freeing of replaced values (not their
//! replacement).
//!
//! # Modules
//!
//! * `clock`: [`TxClock`] and the start / read / commit stamp rules;
//! * `tvar`: [`TVar`] and the orec word;
//! * `tx`: [`Tx`], the load, store, commit and validation;
//! * `stm`: [`Stm`], the retry loop and backoff;
//! * `stats`: [`Stats`];
//! * `sync`: the atomics and the reclamation, swapped under `--cfg loom`.
//!
//! [`LogicalClock`]: ordo::LogicalClock
//! [`Ordo`]: ordo::Ordo

#![warn(missing_docs)]

mod clock;
mod stats;
mod stm;
mod sync;
mod tvar;
mod tx;

pub use clock::TxClock;
pub use stats::Stats;
pub use stm::Stm;
pub use tvar::TVar;
pub use tx::{Abort, Retry, Tx};

#[cfg(test)]
mod tests;

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
