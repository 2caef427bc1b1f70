//! Scalable reference counting: sloppy counters (004 §4.3) and Refcache (002 §8.1), with an
//! `Arc`-like handle on Refcache.
//!
//! A shared reference count is the textbook scalability bottleneck: every `Arc::clone` and
//! drop writes the count's cache line, so threads on different cores cloning one object take
//! turns owning that line (000 §3.1; on the development machine a contended `fetch_add` costs
//! several times an uncontended one). Both schemes here keep those writes on the calling core:
//!
//! * **Sloppy counters** ([`SloppyCounter`], [`sloppy`]) keep, per core, spare references that
//!   the core can hand out without touching the central count. Exact value on demand (lock
//!   every core); memory proportional to objects × cores.
//! * **Refcache** ([`Rc`] / [`Weak`] in a [`Domain`]; engine in [`refcache`]) keeps, per core,
//!   a fixed cache of count *deltas*, flushed to each object's global count once per epoch;
//!   objects whose count stayed a clean zero for a whole epoch are freed by a periodic review.
//!   Memory proportional to objects + cores; the price is a delay (10–20 ms by default) between
//!   the last drop and the destructor.
//!
//! ```
//! use oplog_refcount::{Config, Domain, Rc};
//!
//! let domain = Domain::new(Config::new()).unwrap(); // reviews every 10 ms in the background
//! let config = Rc::new_in(String::from("shared"), &domain);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| {
//!             for _ in 0..100 {
//!                 let mine = config.clone(); // +1 in this core's cache
//!                 assert_eq!(mine.as_str(), "shared");
//!             } // -1 in this core's cache
//!         });
//!     }
//! });
//! ```
//!
//! # Which to use
//!
//! | need | use |
//! |---|---|
//! | shared ownership of heap objects, cloned and dropped from many cores | [`Rc`] |
//! | destructor must run at the last drop, at once | `std::sync::Arc` |
//! | a counter of references or resources whose exact value is read now and then | [`SloppyCounter`] |
//! | a counter read often, in a structure built on OpLog | `oplog::Counter` |
//!
//! # Per core in user space
//!
//! Both schemes need "per-core" state that one operation updates atomically with respect to
//! the others on that core; the kernels of the texts disable preemption. Here each core's
//! state has a lock, taken by the calling thread for one operation ([`CoreMode`]): per-CPU
//! states (the texts' design, chosen by the CPU the thread runs on, entered with a Linux
//! restartable sequence where available and an uncontended spin lock elsewhere, correct
//! under migration) or per-thread states (the default: entered without any atomic
//! read-modify-write). Either way a reviewer takes a core over with a process-wide
//! `membarrier` when owners use the fast path. The mechanics are `oplog_percore`'s, shared
//! with OpLog's log caches.
//!
//! # Pieces
//!
//! | module | what it holds |
//! |---|---|
//! | [`sloppy`] | sloppy counters: [`SloppyCounter`], [`SloppyDomain`] |
//! | [`refcache`] | the Refcache engine: delta caches, epochs, review queues, dirty zeros, weak references (module docs explain the algorithm) |
//! | [`Rc`], [`Weak`] (`handle`) | the `Arc`/`Weak`-shaped handles |
//! | [`Domain`] (`domain`) | a family of objects: configuration, background review, shutdown |
//! | `cores` | per-core state (per CPU or per thread) on `oplog_percore` |
//! | [`ConfigError`], [`CoreMode`] (`config`) | what the domains' configurations share: the per-core layout's setters, the limits, the error a bad setting gets |
//! | [`testing`] | step-by-step control: operations on a chosen core, flush, review (for tests and models) |
//!
//! All shared-memory state goes through [`oplog_percore::primitive`], so `--cfg loom` and the tracer
//! see it.

#![warn(missing_docs)]

mod config;
mod cores;
mod domain;
mod handle;
pub mod refcache;
pub mod sloppy;
pub mod testing;

pub use config::{ConfigError, CoreMode, DEFAULT_MAX_THREADS};
pub use domain::{Config, DEFAULT_CACHE_ENTRIES, DEFAULT_REVIEW_PERIOD, Domain};
pub use handle::{Rc, Weak};
pub use refcache::object::ObjectState;
pub use sloppy::{SloppyConfig, SloppyCounter, SloppyDomain};

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
