//! Adapters from the workspace's structures to their sequential models, shared by the
//! linearizability suite (`linearizable.rs`) and the broken-merge proof (`broken_merge.rs`).
//!
//! Adding a structure: its model goes in `oplog-model`, an adapter here (build the object,
//! draw a random operation, run one), and one test line in `linearizable.rs`.
#![allow(dead_code)]

use oplog::log::Queue;
use oplog::{Counter, CounterLog, Domain, OpLog, Update};
use oplog_lincheck::{Adapter, Config, Report, Rng, run};
use oplog_model::Model;
use oplog_model::counter::{CounterModel, CounterOp, CounterRet};
use oplog_model::set::{SetModel, SetOp, SetRet};
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
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let config = Config::from_env().unwrap_or_else(|e| panic!("{e}"));
    let report = run(&adapter, &config).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
    report
}

/// [`Counter`] as [`CounterModel`]: `inc`, `dec`, `read`.
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
    type Object = Counter;
    fn model(&self) -> CounterModel {
        CounterModel
    }
    fn name(&self) -> String {
        format!("counter, {}", self.label)
    }
    fn new_object(&self) -> Counter {
        Counter::with_domain(&self.domain, 0)
    }
    fn random_op(&self, rng: &mut Rng) -> CounterOp {
        match rng.u8(0..10) {
            0..4 => CounterOp::Inc,
            4..6 => CounterOp::Dec,
            _ => CounterOp::Read,
        }
    }
    fn apply(&self, c: &Counter, op: &CounterOp) -> CounterRet {
        match op {
            CounterOp::Inc => c.inc(),
            CounterOp::Dec => c.dec(),
            CounterOp::Read => return CounterRet::Value(c.read()),
        }
        CounterRet::Done
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

/// Runs a set operation on an OpLog set: updates are logged, `contains` synchronizes.
fn apply_set<const O: bool>(set: &OpLog<Queue<SetUpdate, O>>, op: &SetOp) -> SetRet {
    match *op {
        SetOp::Contains(k) => SetRet::Present(set.read(|s| s.contains(&k))),
        update => {
            set.update(SetUpdate(update));
            SetRet::Done
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
    type Object = OpLog<Queue<SetUpdate, O>>;
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
        OpLog::with_domain(&self.domain, BTreeSet::new())
    }
    fn random_op(&self, rng: &mut Rng) -> SetOp {
        random_set_op(rng, self.removes)
    }
    fn apply(&self, set: &Self::Object, op: &SetOp) -> SetRet {
        apply_set(set, op)
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
    type Object = [OpLog<Queue<SetUpdate, true>>; 2];
    fn model(&self) -> Pair<SetModel> {
        Pair::new(SetModel)
    }
    fn name(&self) -> String {
        format!("two ordered sets evicting each other, {}", self.label)
    }
    fn new_object(&self) -> Self::Object {
        [OpLog::with_domain(&self.domain, BTreeSet::new()), OpLog::with_domain(&self.domain, BTreeSet::new())]
    }
    fn random_op(&self, rng: &mut Rng) -> (bool, SetOp) {
        (rng.bool(), random_set_op(rng, true))
    }
    fn apply(&self, sets: &Self::Object, (second, op): &(bool, SetOp)) -> SetRet {
        apply_set(&sets[usize::from(*second)], op)
    }
}
