//! The RLU hash set and list are linearizable sets: random concurrent histories of 2 to 4
//! threads, each checked by `oplog-lincheck` against `oplog_model::set::SetModel`
//! (`OPLOG_LINCHECK_HISTORIES` histories per test, default 10,000; `OPLOG_LINCHECK_SEED`
//! replays one run). Each operation runs on a handle taken from a pool for that call, so
//! handles (and their logs of copies still to free) move between the worker threads.
#![cfg(not(loom))]

mod common;

use std::sync::{Mutex, PoisonError};

use common::{logical, ordo, wide_window};
use oplog_lincheck::{Adapter, Config, Rng, independent, run};
use oplog_model::Concurrent;
use oplog_model::set::{SetModel, SetOp, SetRet};
use ordo::Clock;
use ordo_rlu::{RluHashSet, RluList, SetHandle};

/// Keys of the histories: few, so operations conflict.
const KEYS: u64 = 4;

/// A set under test with a pool of handles: `Concurrent::call` does not say which thread
/// calls, so each call takes a handle (registering a new one when the pool is empty) and
/// returns it. A handle needs the set it borrows to outlive it, hence the leaked set, which
/// `Drop` reclaims after the handles.
///
/// `Send` and `Sync` as the set and its handles are: the raw pointer is only the box that
/// `Drop` frees.
struct PooledSet<C: Clock + 'static> {
    /// The leaked box: borrowed by the handles, freed by `Drop`.
    raw: *mut RluHashSet<u64, C>,
    pool: Mutex<Vec<SetHandle<'static, u64, C, std::collections::hash_map::RandomState>>>,
}

impl<C: Clock + 'static> PooledSet<C> {
    fn new(set: RluHashSet<u64, C>) -> Self {
        Self { raw: Box::into_raw(Box::new(set)), pool: Mutex::new(Vec::new()) }
    }
}

// SAFETY: see the type's docs: the box is shared as the set is, and freed by `Drop` only.
unsafe impl<C: Clock + 'static> Send for PooledSet<C> {}
// SAFETY: as for `Send`; shared access goes through `set` and the mutex.
unsafe impl<C: Clock + 'static> Sync for PooledSet<C> {}

impl<C: Clock + 'static> Drop for PooledSet<C> {
    fn drop(&mut self) {
        self.pool.get_mut().unwrap_or_else(PoisonError::into_inner).clear();
        // SAFETY: leaked by `new`; every handle borrowing it was dropped just above, and no
        // other reference to it remains (references are made only by `call`).
        drop(unsafe { Box::from_raw(self.raw) });
    }
}

impl<C: Clock + 'static> Concurrent<SetModel> for PooledSet<C> {
    fn call(&self, op: &SetOp) -> SetRet {
        let pooled = self.pool.lock().unwrap_or_else(PoisonError::into_inner).pop();
        // SAFETY: the box lives until `Drop`, which first drops every handle borrowing it.
        let set: &'static RluHashSet<u64, C> = unsafe { &*self.raw };
        let mut h = pooled.unwrap_or_else(|| set.handle().expect("a free thread slot"));
        let ret = apply(&mut h, op);
        self.pool.lock().unwrap_or_else(PoisonError::into_inner).push(h);
        ret
    }
}

/// Runs `op` through a handle of the hash set or of the list (the same [`SetHandle`]),
/// answering as [`SetModel`] does.
fn apply<C: Clock, S>(h: &mut SetHandle<'_, u64, C, S>, op: &SetOp) -> SetRet {
    match *op {
        SetOp::Add(k) => {
            h.insert(k);
            SetRet::Done
        }
        SetOp::Remove(k) => {
            h.remove(&k);
            SetRet::Done
        }
        SetOp::Contains(k) => SetRet::Present(h.contains(&k)),
    }
}

/// Hash sets of `buckets` buckets on clocks made by `clock`.
struct HashSetAdapter<F> {
    clock: F,
    buckets: usize,
    label: &'static str,
}

impl<C: Clock + 'static, F: Fn() -> C + Sync> Adapter for HashSetAdapter<F> {
    type Model = SetModel;
    type Object = PooledSet<C>;
    fn model(&self) -> SetModel {
        SetModel
    }
    fn name(&self) -> String {
        format!("RLU hash set ({} buckets), {}", self.buckets, self.label)
    }
    fn new_object(&self) -> PooledSet<C> {
        PooledSet::new(RluHashSet::new((self.clock)(), self.buckets).unwrap())
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<SetOp>> {
        independent(rng, threads, ops, |rng| {
            let k = rng.u64(0..KEYS);
            match rng.u8(0..10) {
                0..4 => SetOp::Add(k),
                4..7 => SetOp::Remove(k),
                _ => SetOp::Contains(k),
            }
        })
    }
}

/// One test at a time: each runs 4 workers, and the machine may have 2 cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn check<C: Clock + 'static>(clock: impl Fn() -> C + Sync, buckets: usize, label: &'static str) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
    let report = run(&HashSetAdapter { clock, buckets, label }, &config).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
}

#[test]
fn one_bucket_on_the_logical_clock() {
    check(logical, 1, "logical clock");
}

#[test]
fn two_buckets_on_ordo() {
    // Built once: building an `Ordo` measures its tick rate.
    let clock = ordo();
    check(|| clock.clone(), 2, "Ordo");
}

#[test]
fn one_bucket_with_a_wide_uncertainty_window() {
    let clock = wide_window();
    check(|| clock.clone(), 1, "Ordo, 20 µs window");
}

/// The list is the hash set's bucket; one sequential history through its own type checks
/// that `RluList` is that same structure.
#[test]
fn the_list_matches_the_model_sequentially() {
    let list = RluList::new(ordo());
    let mut h = list.handle().unwrap();
    let mut state = oplog_model::Model::init(&SetModel);
    let mut rng = Rng::with_seed(7);
    for _ in 0..common::sized(500, 30) {
        let k = rng.u64(0..KEYS);
        let op = [SetOp::Add(k), SetOp::Remove(k), SetOp::Contains(k)][rng.usize(0..3)];
        let expected = oplog_model::Model::step(&SetModel, &mut state, &op);
        let got = apply(&mut h, &op);
        assert_eq!(got, expected, "{op:?}");
    }
    assert_eq!(h.keys(), state.into_iter().collect::<Vec<_>>());
}
