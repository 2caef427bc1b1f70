//! Refcache (002 §8.1, `oplog_refcount`): an [`Rc`] with its [`Weak`] in a per-CPU and in
//! a per-thread [`Domain`], and a count under a mutex.
//!
//! The adapter holds the strong handles the model counts (the handles threads would hold,
//! kept where the tracer does not look: a `std` mutex around a `Vec`) and one weak handle.
//! `inc` clones the last held handle on the calling core, `dec` drops it there, `tryget`
//! upgrades the weak handle and keeps what it gives, `collect` is `Domain::collect`. Each
//! object has a domain of its own without a background reviewer (`review_period(None)`),
//! so nothing flushes a delta cache between the traced operations and no other object
//! competes for a cache entry: the steady state has no delta-cache collision
//! (`tests/refcount.rs` shows what one costs).
//!
//! States of a test ([`crate::tracer`]): *steady* clones and drops a handle on each test
//! core first (its delta cache holds an entry for the object, at delta 0); *cold* does
//! not; *quiescent* is steady, then one review (`Domain::review`) after the set-up: every
//! delta is flushed to the object's global count, and an object whose handles are all gone
//! is now on a review queue, *dying* (002 §8.1.2), not yet freed (a review frees an object
//! two epochs after it first saw it at zero).

use oplog_model::{Concurrent, Model as _};
use oplog_percore::primitive::Mutex;
use oplog_refcount::{Config, CoreMode, Domain, Rc, Weak};

use super::{Contract, Impl, Object};
use crate::models::refcache::{RcOp, RcRet, RcState, RefcacheModel};
use crate::tracer::CPUS;

/// An object of a Refcache domain with the handles the model counts (see the module docs).
/// Fields drop in order: the handles, then the weak handle, then the domain, whose last
/// handle's drop frees the object (`Domain::collect`) with no reviewer thread to start.
#[derive(Debug)]
pub struct RefcacheObject {
    strong: std::sync::Mutex<Vec<Rc<u64>>>,
    weak: Weak<u64>,
    domain: Domain,
}

impl RefcacheObject {
    /// One object with its creating handle, in a fresh domain of `mode` cores (per-CPU:
    /// [`CPUS`] of them) that reviews only when asked.
    ///
    /// # Panics
    /// If the configuration is rejected (a bug in this crate).
    pub fn new(mode: CoreMode) -> Self {
        let config = Config::new().mode(mode).cpus(CPUS).review_period(None);
        let domain = Domain::new(config).unwrap_or_else(|e| panic!("Refcache domain under test: {e}"));
        let rc = Rc::new_in(0, &domain);
        RefcacheObject { weak: Rc::downgrade(&rc), strong: std::sync::Mutex::new(vec![rc]), domain }
    }

    /// The held strong handles (a poisoned lock only means a test panicked holding it).
    fn strong(&self) -> std::sync::MutexGuard<'_, Vec<Rc<u64>>> {
        self.strong.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Concurrent<RefcacheModel> for RefcacheObject {
    fn call(&self, op: &RcOp) -> RcRet {
        match op {
            RcOp::Inc => {
                let mut strong = self.strong();
                let Some(clone) = strong.last().cloned() else { return RcRet::NoHandle };
                strong.push(clone);
                RcRet::Done
            }
            RcOp::Dec => {
                let Some(handle) = self.strong().pop() else { return RcRet::NoHandle };
                drop(handle);
                RcRet::Done
            }
            RcOp::Tryget => {
                let upgraded = self.weak.upgrade();
                let got = upgraded.is_some();
                self.strong().extend(upgraded);
                RcRet::Upgraded(got)
            }
            RcOp::Collect => RcRet::Freed(self.domain.collect() > 0),
        }
    }
}

impl Object<RefcacheModel> for RefcacheObject {
    /// Clones a handle and drops the clone: this core's delta cache now holds the object's
    /// entry (delta 0), and the count is unchanged. Runs on the fresh object, which holds its
    /// creating handle.
    fn warm(&self) {
        assert_eq!(self.call(&RcOp::Inc), RcRet::Done, "a fresh object holds its creating handle");
        self.call(&RcOp::Dec);
    }

    /// One review of every core: the set-up's deltas reach the object's global count (see
    /// the module docs). It frees nothing: only a `collect` of the set-up could have queued
    /// the object before, and a collection leaves nothing queued.
    fn quiesce(&self) {
        assert_eq!(self.domain.review(), 0, "one review pass frees nothing here");
    }
}

/// The baseline: the sequential reference count (the model's own state and step: a count
/// and a freed flag) under one mutex, so every operation writes the one shared line, as
/// `Arc`'s count does.
#[derive(Debug)]
pub struct MutexRefcount(Mutex<RcState>);

impl Concurrent<RefcacheModel> for MutexRefcount {
    fn call(&self, op: &RcOp) -> RcRet {
        RefcacheModel.step(&mut self.0.lock(), op)
    }
}

impl Object<RefcacheModel> for MutexRefcount {}

/// The handle API's precondition: a strong handle is cloned or dropped only while one is
/// held (see [`crate::models::refcache`]).
pub const HANDLE: Contract<RefcacheModel> = Contract {
    name: "a strong handle is cloned (inc) or dropped (dec) only while one is held: with none there is nothing to \
           call",
    admits: |s, op| !matches!(op, RcOp::Inc | RcOp::Dec) || s.strong > 0,
};

/// Refcache's implementations under test.
pub fn impls() -> Vec<Impl<RefcacheModel>> {
    vec![
        Impl {
            id: "refcache",
            about: "oplog_refcount::Rc and Weak, per-CPU delta caches (002 §8.1)",
            build: || Box::new(RefcacheObject::new(CoreMode::PerCpu)),
            contract: Some(HANDLE),
        },
        Impl {
            id: "refcache-perthread",
            about: "oplog_refcount::Rc and Weak, per-thread delta caches",
            build: || Box::new(RefcacheObject::new(CoreMode::PerThread)),
            contract: Some(HANDLE),
        },
        Impl {
            id: "mutex",
            about: "the count and a freed flag under a mutex",
            build: || Box::new(MutexRefcount(Mutex::new(RefcacheModel.init(), "MutexRefcount.count"))),
            contract: Some(HANDLE),
        },
    ]
}
