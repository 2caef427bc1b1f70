//! Linearizability checking for the OpLog workspace.
//!
//! A concurrent object is *linearizable* (Herlihy and Wing 1990) when every concurrent
//! history of it can be explained by some sequential order of its operations that (1) gives
//! every operation the response it really returned, when replayed on the object's sequential
//! specification, and (2) keeps every operation that returned before another was invoked
//! ahead of it. The crate docs of `oplog` promise exactly that for its reads; this crate
//! tests the promise on random histories of the real implementation.
//!
//! # Pieces
//!
//! | module | what it holds |
//! |---|---|
//! | [`history`] | [`Operation`]s with their real-time interval, [`History`], and the [`Recorder`] that stamps them |
//! | [`check`] | the [`Checker`]: Wing and Gong's search with Lowe's memoization, against an [`oplog_model::Model`] |
//! | [`mod@run`] | the driver: an [`Adapter`] builds a fresh object per history (an [`oplog_model::Concurrent`] implementation) and draws each history's operations; [`run()`](run::run) records and checks many small random histories on 2 to 4 threads |
//! | [`testkit`] | what every test suite of the workspace shares: [`Watchdog`] and [`with_watchdog`] (a hung test aborts with a message instead of hanging CI), CPU pinning, the seeded generator, the loom model driver |
//! | [`mod@env`] | strict parsing of the counts the suites read from the environment |
//!
//! # Real-time order
//!
//! [`Recorder`] keeps one shared counter. A thread takes a ticket from it (an atomic
//! fetch-add) just before invoking an operation and another just after the response. If
//! operation A's response ticket is below operation B's call ticket, then A's response
//! *happens before* B's invocation (both fetch-adds are read-modify-writes of one location,
//! so they are totally ordered and synchronize), which is the order linearizability must
//! keep. Operations whose intervals overlap may be linearized either way.
//!
//! # The search (Wing and Gong 1993; Lowe 2017)
//!
//! The call and response events are put in one list sorted by ticket. The search walks the
//! list: at a call, it tries to linearize that operation now (step the model; the response
//! must match), removes ("lifts") the call and its response from the list and starts again
//! from the front; at a response, no pending operation can come next, so it backtracks to
//! the last choice and tries the next call. A history is linearizable when the list
//! empties. Lowe's improvement memoizes every configuration reached, the set of linearized
//! operations and the model state after them: reaching one again cannot succeed where it
//! failed before, which turns the exponential search into one bounded by the number of
//! distinct configurations. Histories here hold at most [`check::MAX_OPS`] operations, so a
//! configuration's set is a 128-bit mask.
//!
//! Before trusting a model, the checker calls [`oplog_model::check_deterministic`] on every
//! (state, operation) pair it steps, and fails with [`CheckError::Model`] naming the model,
//! the state and the operation if the model answers twice differently.
//!
//! # Adding a structure
//!
//! Write (or reuse) its sequential model in `oplog-model` and its
//! [`oplog_model::Concurrent`] implementation (the structures crate has one per structure
//! trait), implement [`Adapter`] for a small struct that builds the object and draws the
//! operations (respecting the structure's preconditions), and add one test that calls
//! [`run()`](run::run) with [`Config::from_env`]. `tests/linearizable.rs` lists the
//! workspace's structures that way.

#![warn(missing_docs)]

pub mod check;
pub mod env;
pub mod history;
pub mod run;
pub mod testkit;

pub use check::{CheckError, Checker, Linearization, Violation};
pub use env::EnvError;
pub use history::{History, HistoryError, Operation, Recorder};
pub use run::{Adapter, Config, ConfigError, Report, RunError, independent, run};
pub use testkit::{Rng, Watchdog, with_watchdog};
