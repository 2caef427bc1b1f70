//! Implementations under test: one small adapter per implementation of a model.
//!
//! A structure answers the model's operations through [`oplog_model::Concurrent`], the
//! workspace's one adapter trait: `oplog_structures` implements it for each of its
//! structures (the linearizability suite and the structures' tests drive them through the
//! same implementations; those of the open-file list and the name-cache entry answer the
//! [`Explored`](crate::models::Explored) model through them), and the counter, the set and
//! Refcache here implement it themselves. What the
//! tracer adds is [`Object::warm`]: how to bring an object into its steady state on a core
//! without changing its abstract state. An [`Impl`] names an implementation, builds fresh
//! objects, and states its [`Contract`] if it has one. Covering a new structure is a model
//! (in `oplog-model`, with its `Explore` extension there or in [`crate::models`]), its
//! `Concurrent` implementations, an `Object` impl per implementation, and one entry in
//! [`crate::structures`].
//!
//! An id names the design: `oplog…` for OpLog versions, `refcache…` for Refcache,
//! `sloppy…` for sloppy counters, `mutex…` for the mutex baselines (the texts' "stock"
//! versions: the sequential type under one lock), and the texts' other baselines by their
//! names (`spinlock`, `cas`, `percore`); the summary sums the families by these prefixes
//! ([`crate::summary::FAMILIES`]). Every object under test is built in a domain of its own
//! (per-CPU states for [`CPUS`] CPUs, or per-thread ones), so no other object competes for
//! its log-cache slots or delta-cache entries: the report's steady state has no collisions
//! (`tests/tracer.rs` and `tests/refcount.rs` show what one costs).
//!
//! | structure | model | implementations |
//! |---|---|---|
//! | counter | `CounterModel` | [`counter::OplogCounter`] (`oplog`, `oplog-perthread`), [`counter::SloppyCount`] (`sloppy`, `sloppy-perthread`), [`counter::MutexCounter`] (`mutex`) |
//! | set | `SetModel` | [`set::OplogSet`] (`oplog`), [`set::MutexSet`] (`mutex`) |
//! | list | `SetModel` | `oplog_structures::list`: `BasicList` (`oplog-basic`), `GlobalAbsorbList` (`oplog-global-absorb`), `LocalAbsorbList` (`oplog-local-absorb`), `MutexList` (`mutex`) |
//! | rmap | `RmapModel` | `oplog_structures::rmap`: `OpLogRmap` (`oplog`), `OrderedOpLogRmap` (`oplog-ordered`), `MutexRmap` (`mutex`), and [`rmap::BasicOplogRmap`] (`oplog-basic`) |
//! | queue | `QueueModel` | `oplog_structures::notify`: `OpLogQueue` (`oplog`), `MutexQueue` (`mutex`) |
//! | lru | `LruModel` | `oplog_structures::lru`: `OpLogLru` (`oplog`), `MutexLru` (`mutex`) |
//! | refcache | [`RefcacheModel`](crate::models::refcache::RefcacheModel) | [`refcache::RefcacheObject`]: `oplog_refcount::Rc`/`Weak` per-CPU (`refcache`) and per-thread (`refcache-perthread`); [`refcache::MutexRefcount`] (`mutex`) |
//! | namecache | `EntryModel` ([`Explored`](crate::models::Explored)) | `oplog_structures::namecache`: `OpLogEntry` (`oplog`), `SpinlockEntry` (`spinlock`), `CasEntry` (`cas`) |
//! | open-files | `OpenFilesModel` ([`Explored`](crate::models::Explored)) | `oplog_structures::open_files`: `OpLogOpenFiles` (`oplog`), `PerCoreOpenFiles` (`percore`), `MutexOpenFiles` (`mutex`) |
//!
//! The counter's list also holds the sloppy counter of 004 §4.3 ([`counter::SloppyCount`]:
//! `sloppy`, `sloppy-perthread`): its interface is the counter's.
//!
//! # Left out: the lock-free baselines
//!
//! The structures crate's lock-free baselines (`HarrisList`, the rmap's `LockFreeRmap`,
//! the queue's `SegQueue`) keep their shared state in crossbeam's atomics, not in
//! `oplog_percore::primitive`, so the tracer would see none of their accesses and report every
//! case conflict-free. They are not covered rather than covered wrongly.
//!
//! # Contracts
//!
//! The absorbing OpLog variants (the rmap's, the list's `oplog-global-absorb` and
//! `oplog-local-absorb`, the open-file list's) require the *identity rule*
//! (`oplog_structures` crate docs, [`identity_rule`]): an
//! item is added only while absent and removed only while present, so the updates of one
//! item alternate in real time, and two concurrent updates of one item are not allowed.
//! The models allow every sequence, so some commutative cases (`add(x)` / `add(x)`, or
//! `add(x)` of an `x` already present) are outside these implementations' contract. A
//! test is run on an implementation only if every step of its set-up followed by A then B,
//! and of its set-up followed by B then A, is admitted by the contract
//! ([`Contract::admits_test`]); the others are counted and reported as outside the
//! contract, never silently dropped. (Debug builds of the absorbing variants assert the
//! rule, so running them would panic.)
//!
//! Some interfaces have a precondition for every implementation, which the model answers
//! with a response no implementation gives: a Refcache handle is cloned or dropped only
//! while one is held ([`refcache::HANDLE`]), a name-cache reference is released only while
//! one is held ([`namecache::HELD`]). Their cases are counted and listed the same way.

use oplog_model::{Concurrent, Model};

use crate::testgen::Test;
use crate::tracer::CPUS;

pub mod counter;
pub mod list;
pub mod lru;
pub mod namecache;
pub mod open_files;
pub mod queue;
pub mod refcache;
pub mod rmap;
pub mod set;

/// A structure answering a model's operations ([`Concurrent`]), as the tracer runs it
/// (see the module docs).
pub trait Object<M: Model>: Concurrent<M> + Send {
    /// Brings the object into its steady state on the calling core without changing its
    /// abstract state (for OpLog structures: installs it in the core's log cache). Called
    /// on each test core on the fresh object, before the set-up operations. The default
    /// does nothing.
    fn warm(&self) {}

    /// Applies what the set-up logged, without changing the abstract state, so that reads
    /// find the object quiescent (for OpLog structures: two reads through the object lock,
    /// the first applies the logs, the second lets later reads take the concurrent path;
    /// for Refcache: one review,
    /// which flushes every core's deltas to the object's count). Called on the set-up core
    /// after the set-up operations in [`Setup::Quiescent`](crate::tracer::Setup). The
    /// default does nothing: structures without a pure read (every read of the rmap, the
    /// queue and the LRU changes them), the sloppy counter (nothing is deferred: its spares
    /// are the state) and the baselines.
    fn quiesce(&self) {}
}

/// A precondition an implementation puts on the operations it is given (see the module
/// docs): which operation it admits in which model state.
pub struct Contract<M: Model> {
    /// What it requires, for reports (`identity rule: …`).
    pub name: &'static str,
    /// Whether the implementation admits `op` in model state `state`.
    pub admits: fn(&M::State, &M::Op) -> bool,
}

impl<M: Model> Clone for Contract<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Model> Copy for Contract<M> {}

impl<M: Model> std::fmt::Debug for Contract<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contract").field("name", &self.name).finish_non_exhaustive()
    }
}

impl<M: Model> Contract<M> {
    /// Whether every step of `test` is admitted, in both orders of A and B (the two
    /// operations are concurrent, so the implementation may see either order).
    pub fn admits_test(&self, model: &M, test: &Test<M>) -> bool {
        [[&test.a, &test.b], [&test.b, &test.a]].into_iter().all(|order| {
            let mut state = model.init();
            test.setup.iter().chain(order).all(|op| {
                let ok = (self.admits)(&state, op);
                model.step(&mut state, op);
                ok
            })
        })
    }
}

/// An implementation of model `M` under test.
pub struct Impl<M: Model> {
    /// Stable id: `oplog…` for OpLog versions, `mutex…` for mutex baselines.
    pub id: &'static str,
    /// One line: what it is.
    pub about: &'static str,
    /// Builds a fresh object in the model's initial state.
    pub build: fn() -> Box<dyn Object<M>>,
    /// The implementation's precondition, if it has one.
    pub contract: Option<Contract<M>>,
}

impl<M: Model> std::fmt::Debug for Impl<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Impl")
            .field("id", &self.id)
            .field("about", &self.about)
            .field("contract", &self.contract)
            .finish_non_exhaustive()
    }
}

/// Whether an update follows the identity rule (module docs, "Contracts"): an add
/// (`adds`) only of an absent item, a remove only of a present one.
pub fn identity_rule(adds: bool, present: bool) -> bool {
    adds != present
}

/// The name of an identity-rule contract for items called `$item` (`"a file", "file"`).
macro_rules! identity_rule_name {
    ($an_item:literal, $item:literal) => {
        concat!(
            "identity rule: ",
            $an_item,
            " is added only while absent and removed only while present (the updates of one ",
            $item,
            " alternate, so two concurrent updates of one ",
            $item,
            " are not allowed)"
        )
    };
}
pub(crate) use identity_rule_name;

/// A key the models never use (their symbols are small), for warming set-like structures
/// with an add and a remove that cancel.
pub const WARM_KEY: u64 = u64::MAX;

/// A fresh per-CPU domain over [`CPUS`] CPUs for one OpLog object under test.
///
/// # Panics
/// If the configuration is rejected (a bug in this crate), or the process-wide clock's
/// configuration (`ORDO_*`) is malformed for an ordered kind (`commuter` checks it first).
pub fn domain<L: oplog::LogKind>() -> std::sync::Arc<oplog::Domain<L>> {
    oplog::Domain::new(oplog::Config::per_cpu().cpus(CPUS)).unwrap_or_else(|e| panic!("domain under test: {e}"))
}
