//! Adapters from the workspace's structures to their sequential models, shared by the
//! linearizability suite (`linearizable.rs`) and the broken-merge proof (`broken_merge.rs`):
//! here the OpLog core's own objects (a counter, sets over `OpLog` directly), in
//! [`structures`] the structures of `oplog-structures`.
//!
//! Adding a structure: its model goes in `oplog-model`, its `Concurrent` implementation
//! beside it (the structures crate has one per structure), an adapter or a plan here, and one
//! test line in `linearizable.rs`.
#![allow(dead_code)]

pub mod structures;

use oplog::log::Queue;
use oplog::{Counter, CounterLog, Domain, OpLog, Update};
use oplog_lincheck::{Adapter, Config, Report, Rng, independent, run};
use oplog_model::counter::{CounterModel, CounterOp, CounterRet};
use oplog_model::set::{SetModel, SetOp, SetRet};
use oplog_model::{Concurrent, Model};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

/// One structure at a time: the test harness runs tests in parallel, and with every test's
/// 4 workers competing for the CPUs, the workers of one history rarely run at once.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs the suite's histories (count and seed from the environment) and prints the report.
pub fn check<A: Adapter>(adapter: A) -> Report
where
    <A::Model as Model>::Op: Send + Sync,
    <A::Model as Model>::Ret: Send,
{
    check_with(adapter, &Config::from_env().unwrap_or_else(|e| panic!("{e}")))
}

/// Runs `config`'s histories and prints the report.
pub fn check_with<A: Adapter>(adapter: A, config: &Config) -> Report
where
    <A::Model as Model>::Op: Send + Sync,
    <A::Model as Model>::Ret: Send,
{
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let report = run(&adapter, config).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
    report
}

/// Runs the suite's histories for one structure, half in a per-CPU domain and half in a
/// per-thread one (`adapter` builds the structure's adapter for a slot kind's name and
/// configuration). Both halves draw their operation lists from the same seed, so the
/// printed seed replays either.
pub fn check_both_slot_kinds<A: Adapter>(adapter: impl Fn(&str, oplog::Config) -> A)
where
    <A::Model as Model>::Op: Send + Sync,
    <A::Model as Model>::Ret: Send,
{
    let env = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
    let half = Config::new(env.histories().div_ceil(2)).seed(env.get_seed());
    for (slots, config) in [("per-CPU", oplog::Config::per_cpu()), ("per-thread", oplog::Config::per_thread())] {
        check_with(adapter(slots, config), &half);
    }
}

/// [`Counter`] as [`CounterModel`]: `inc`, `dec`, `read`.
pub struct CounterObject(pub Counter);

impl Concurrent<CounterModel> for CounterObject {
    fn call(&self, op: &CounterOp) -> CounterRet {
        match op {
            CounterOp::Inc => self.0.inc(),
            CounterOp::Dec => self.0.dec(),
            CounterOp::Read => return CounterRet::Value(self.0.read()),
        }
        CounterRet::Done
    }
}

/// Counters of one domain.
pub struct CounterAdapter {
    pub domain: Arc<Domain<CounterLog>>,
    pub label: &'static str,
}

impl CounterAdapter {
    pub fn new(config: oplog::Config, label: &'static str) -> Self {
        Self { domain: Domain::new(config).unwrap(), label }
    }
}

impl Adapter for CounterAdapter {
    type Model = CounterModel;
    type Object = CounterObject;
    fn model(&self) -> CounterModel {
        CounterModel
    }
    fn name(&self) -> String {
        format!("counter, {}", self.label)
    }
    fn new_object(&self) -> CounterObject {
        CounterObject(Counter::with_domain(&self.domain, 0))
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<CounterOp>> {
        independent(rng, threads, ops, |rng| match rng.u8(0..10) {
            0..4 => CounterOp::Inc,
            4..6 => CounterOp::Dec,
            _ => CounterOp::Read,
        })
    }
}

/// The deferred half of [`SetOp`] as an OpLog update (`Contains` is a read).
#[derive(Debug)]
pub struct SetUpdate(pub SetOp);

impl Update for SetUpdate {
    type Target = BTreeSet<u64>;
    fn exec(self, set: &mut BTreeSet<u64>) {
        SetModel.step(set, &self.0);
    }
}

/// Keys of the set workloads: few, so operations conflict.
const KEYS: u64 = 3;

/// An OpLog set of `u64` over the core directly: updates are logged, `contains`
/// synchronizes.
pub struct SetObject<const O: bool>(pub OpLog<Queue<SetUpdate, O>>);

impl<const O: bool> Concurrent<SetModel> for SetObject<O> {
    fn call(&self, op: &SetOp) -> SetRet {
        match *op {
            SetOp::Contains(k) => SetRet::Present(self.0.read(|s| s.contains(&k))),
            update => {
                self.0.update(SetUpdate(update));
                SetRet::Done
            }
        }
    }
}

/// An OpLog set of `u64` on an [`oplog::Ordered`] log (`O = true`) or an
/// [`oplog::Unordered`] one, as [`SetModel`]. Unordered logs require commuting updates, so
/// `removes: false` draws only `add` and `contains` (a grow-only set).
pub struct SetAdapter<const O: bool> {
    pub domain: Arc<Domain<Queue<SetUpdate, O>>>,
    pub label: &'static str,
    pub removes: bool,
}

impl<const O: bool> SetAdapter<O> {
    pub fn new(config: oplog::Config, label: &'static str, removes: bool) -> Self {
        Self { domain: Domain::new(config).unwrap(), label, removes }
    }
}

impl<const O: bool> Adapter for SetAdapter<O> {
    type Model = SetModel;
    type Object = SetObject<O>;
    fn model(&self) -> SetModel {
        SetModel
    }
    fn name(&self) -> String {
        let kind = match (O, self.removes) {
            (true, _) => "ordered set",
            (false, true) => "unordered set",
            (false, false) => "unordered grow-only set",
        };
        format!("{kind}, {}", self.label)
    }
    fn new_object(&self) -> Self::Object {
        SetObject(OpLog::with_domain(&self.domain, BTreeSet::new()))
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<SetOp>> {
        independent(rng, threads, ops, |rng| random_set_op(rng, self.removes))
    }
}

fn random_set_op(rng: &mut Rng, removes: bool) -> SetOp {
    let k = rng.u64(0..KEYS);
    match rng.u8(0..10) {
        0..4 => SetOp::Add(k),
        4..7 if removes => SetOp::Remove(k),
        _ => SetOp::Contains(k),
    }
}

/// Two independent instances of a model, each operation tagged with the one it acts on.
/// Linearizability is local (Herlihy and Wing 1990, Theorem 1): a pair of linearizable
/// objects is linearizable as a pair, so this checks two objects that share log-cache
/// slots and evict each other's logs.
#[derive(Clone, Debug)]
pub struct Pair<M> {
    pub inner: M,
    pub name: String,
}

impl<M: Model> Pair<M> {
    pub fn new(inner: M) -> Self {
        let name = format!("pair of {}", inner.name());
        Self { inner, name }
    }
}

impl<M: Model> Model for Pair<M> {
    type State = (M::State, M::State);
    type Op = (bool, M::Op);
    type Ret = M::Ret;
    fn name(&self) -> &str {
        &self.name
    }
    fn init(&self) -> Self::State {
        (self.inner.init(), self.inner.init())
    }
    fn step(&self, (a, b): &mut Self::State, (second, op): &Self::Op) -> M::Ret {
        self.inner.step(if *second { b } else { a }, op)
    }
}

/// Two ordered OpLog sets, each operation tagged with the one it acts on.
pub struct SetPair(pub [SetObject<true>; 2]);

impl Concurrent<Pair<SetModel>> for SetPair {
    fn call(&self, (second, op): &(bool, SetOp)) -> SetRet {
        self.0[usize::from(*second)].call(op)
    }
}

/// Two ordered OpLog sets in a domain with one log-cache slot per core, so every update of
/// one evicts the other's log on that core.
pub struct CollidingSets {
    pub domain: Arc<Domain<Queue<SetUpdate, true>>>,
    pub label: &'static str,
}

impl CollidingSets {
    pub fn new(config: oplog::Config, label: &'static str) -> Self {
        Self { domain: Domain::new(config.cache_slots(1)).unwrap(), label }
    }
}

impl Adapter for CollidingSets {
    type Model = Pair<SetModel>;
    type Object = SetPair;
    fn model(&self) -> Pair<SetModel> {
        Pair::new(SetModel)
    }
    fn name(&self) -> String {
        format!("two ordered sets evicting each other, {}", self.label)
    }
    fn new_object(&self) -> SetPair {
        let set = || SetObject(OpLog::with_domain(&self.domain, BTreeSet::new()));
        SetPair([set(), set()])
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<(bool, SetOp)>> {
        independent(rng, threads, ops, |rng| (rng.bool(), random_set_op(rng, true)))
    }
}

/// An ordered set whose every call first moves it to the other representation
/// ([`OpLog::switch_representation`]), so histories switch between logged and direct
/// updates while other threads' operations are in flight.
pub struct SwitchingSet {
    set: SetObject<true>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Concurrent<SetModel> for SwitchingSet {
    fn call(&self, op: &SetOp) -> SetRet {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let to = if n.is_multiple_of(2) { oplog::Representation::Direct } else { oplog::Representation::Logged };
        self.set.0.switch_representation(to);
        self.set.call(op)
    }
}

/// [`SwitchingSet`]s of one domain.
pub struct SwitchingSetAdapter(pub SetAdapter<true>);

impl Adapter for SwitchingSetAdapter {
    type Model = SetModel;
    type Object = SwitchingSet;
    fn model(&self) -> SetModel {
        SetModel
    }
    fn name(&self) -> String {
        format!("{}, switching representation on every call", self.0.name())
    }
    fn new_object(&self) -> SwitchingSet {
        SwitchingSet { set: self.0.new_object(), calls: Default::default() }
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<SetOp>> {
        self.0.plans(rng, threads, ops)
    }
}
