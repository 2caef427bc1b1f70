//! The set: an OpLog object over a `BTreeSet` with a timestamp-ordered log (`add` and
//! `remove` do not commute in general, so their order matters), and a mutex around a
//! `BTreeSet`.

use std::collections::BTreeSet;

use oplog::{Config, Domain, OpLog, Ordered, Update};
use oplog_model::Concurrent;
use oplog_model::set::{SetModel, SetOp, SetRet};
use oplog_percore::primitive::Mutex;

use super::{Impl, Object, WARM_KEY};
use crate::tracer::CPUS;

/// A logged set update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetUpdate {
    /// Insert a key.
    Add(u64),
    /// Remove a key.
    Remove(u64),
}

impl Update for SetUpdate {
    type Target = BTreeSet<u64>;

    fn exec(self, set: &mut BTreeSet<u64>) {
        match self {
            SetUpdate::Add(k) => {
                set.insert(k);
            }
            SetUpdate::Remove(k) => {
                set.remove(&k);
            }
        }
    }
}

/// The OpLog set: `add` and `remove` are logged on the calling core, `contains`
/// synchronizes.
#[derive(Debug)]
pub struct OplogSet(OpLog<Ordered<SetUpdate>>);

impl OplogSet {
    /// An empty set in a fresh per-CPU domain over [`CPUS`] CPUs, stamped by the
    /// process-wide Ordo clock.
    ///
    /// # Panics
    /// If the process-wide clock's configuration (`ORDO_*`) is malformed.
    pub fn new() -> Self {
        Self::with_config(Config::per_cpu().cpus(CPUS))
    }

    /// An empty set in a fresh domain built from `config` (another clock, per-thread
    /// slots).
    ///
    /// # Panics
    /// If `config` is rejected.
    pub fn with_config(config: Config) -> Self {
        let domain = Domain::new(config).unwrap_or_else(|e| panic!("set domain: {e}"));
        OplogSet(OpLog::with_domain(&domain, BTreeSet::new()))
    }
}

impl Default for OplogSet {
    fn default() -> Self {
        Self::new()
    }
}

impl Concurrent<SetModel> for OplogSet {
    fn call(&self, op: &SetOp) -> SetRet {
        match *op {
            SetOp::Add(k) => self.0.update(SetUpdate::Add(k)),
            SetOp::Remove(k) => self.0.update(SetUpdate::Remove(k)),
            SetOp::Contains(k) => return SetRet::Present(self.0.read(|s| s.contains(&k))),
        }
        SetRet::Done
    }
}

impl Object<SetModel> for OplogSet {
    /// Logs `add` and `remove` of a key the models never use: the core's slot now holds
    /// the object, and the set is unchanged.
    fn warm(&self) {
        self.0.update(SetUpdate::Add(WARM_KEY));
        self.0.update(SetUpdate::Remove(WARM_KEY));
    }

    /// Reads the set twice (see the counter's `quiesce`).
    fn quiesce(&self) {
        self.0.read(|_| ());
        self.0.read(|_| ());
    }
}

/// The baseline: a `BTreeSet` under a mutex.
#[derive(Debug)]
pub struct MutexSet(Mutex<BTreeSet<u64>>);

impl Concurrent<SetModel> for MutexSet {
    fn call(&self, op: &SetOp) -> SetRet {
        let mut set = self.0.lock();
        match *op {
            SetOp::Add(k) => {
                set.insert(k);
            }
            SetOp::Remove(k) => {
                set.remove(&k);
            }
            SetOp::Contains(k) => return SetRet::Present(set.contains(&k)),
        }
        SetRet::Done
    }
}

impl Object<SetModel> for MutexSet {}

/// The set's implementations under test.
pub fn impls() -> Vec<Impl<SetModel>> {
    vec![
        Impl {
            id: "oplog",
            about: "OpLog<Ordered<SetUpdate>> over a BTreeSet, per-CPU slots",
            build: || Box::new(OplogSet::new()),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "a BTreeSet under a mutex",
            build: || Box::new(MutexSet(Mutex::new(BTreeSet::new(), "MutexSet.set"))),
            contract: None,
        },
    ]
}
