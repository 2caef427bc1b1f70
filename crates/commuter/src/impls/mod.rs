//! Implementations under test: one small adapter per implementation of a model.
//!
//! A structure answers the model's operations through [`oplog_model::Concurrent`], the
//! workspace's one adapter trait: `oplog_structures` implements it for each of its
//! structures (the linearizability suite and the structures' tests drive them through the
//! same implementations), and the counter and set here implement it themselves. What the
//! tracer adds is [`Object::warm`]: how to bring an object into its steady state on a core
//! without changing its abstract state. An [`Impl`] names an implementation, builds fresh
//! objects, and states its [`Contract`] if it has one. Covering a new structure is a model
//! (in `oplog-model`), its `Concurrent` implementations, an `Object` impl per
//! implementation, and one entry in [`crate::structures`].
//!
//! Ids starting with `oplog` are OpLog versions; ids starting with `mutex` are the mutex
//! baselines (the texts' "stock" versions: the sequential type under one lock). Every OpLog
//! object is built in a domain of its own (per-CPU slots for [`CPUS`] CPUs), so no other
//! object competes for its log-cache slots: the report's steady state has no log-cache
//! collisions (`tests/tracer.rs` shows what one costs).
//!
//! | structure | model | implementations |
//! |---|---|---|
//! | counter | `CounterModel` | [`counter::OplogCounter`] (`oplog`, `oplog-perthread`), [`counter::MutexCounter`] (`mutex`) |
//! | set | `SetModel` | [`set::OplogSet`] (`oplog`), [`set::MutexSet`] (`mutex`) |
//! | list | `SetModel` | `oplog_structures::list`: `BasicList` (`oplog-basic`), `GlobalAbsorbList` (`oplog-global-absorb`), `LocalAbsorbList` (`oplog-local-absorb`), `MutexList` (`mutex`) |
//! | rmap | `RmapModel` | `oplog_structures::rmap`: `OpLogRmap` (`oplog`), `OrderedOpLogRmap` (`oplog-ordered`), `MutexRmap` (`mutex`), and [`rmap::BasicOplogRmap`] (`oplog-basic`) |
//! | queue | `QueueModel` | `oplog_structures::notify`: `OpLogQueue` (`oplog`), `MutexQueue` (`mutex`) |
//! | lru | `LruModel` | `oplog_structures::lru`: `OpLogLru` (`oplog`), `MutexLru` (`mutex`) |
//!
//! # Left out: the lock-free baselines
//!
//! The structures crate's lock-free baselines (`HarrisList`, the rmap's `LockFreeRmap`,
//! the queue's `SegQueue`) keep their shared state in crossbeam's atomics, not in
//! `oplog::primitive`, so the tracer would see none of their accesses and report every
//! case conflict-free. They are not covered rather than covered wrongly.
//!
//! # Contracts
//!
//! The absorbing OpLog variants (the rmap's, the list's `oplog-global-absorb` and
//! `oplog-local-absorb`) require the *identity rule* (`oplog_structures` crate docs): an
//! item is added only while absent and removed only while present, so the updates of one
//! item alternate in real time, and two concurrent updates of one item are not allowed.
//! The models allow every sequence, so some commutative cases (`add(x)` / `add(x)`, or
//! `add(x)` of an `x` already present) are outside these implementations' contract. A
//! test is run on an implementation only if every step of its set-up followed by A then B,
//! and of its set-up followed by B then A, is admitted by the contract
//! ([`Contract::admits_test`]); the others are counted and reported as outside the
//! contract, never silently dropped. (Debug builds of the absorbing variants assert the
//! rule, so running them would panic.)

use oplog_model::{Concurrent, Model};

use crate::testgen::Test;
use crate::tracer::CPUS;

pub mod counter;
pub mod list;
pub mod lru;
pub mod queue;
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
    /// find the object quiescent (for OpLog structures: a read through the object lock,
    /// which also lets later reads take the concurrent path). Called on the set-up core
    /// after the set-up operations in [`Setup::Quiescent`](crate::tracer::Setup). The
    /// default does nothing: structures without a pure read (every read of the rmap, the
    /// queue and the LRU changes them) and the baselines.
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
