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
use oplog::{Counter, CounterLog, Domain, LogKind, OpLog, Update};
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
        independent(rng, threads, ops, random_counter_op)
    }
}

fn random_counter_op(rng: &mut Rng) -> CounterOp {
    match rng.u8(0..10) {
        0..4 => CounterOp::Inc,
        4..6 => CounterOp::Dec,
        _ => CounterOp::Read,
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

/// An OpLog set of `u64` over the core directly, on log kind `K` (an [`oplog::Ordered`] or
/// [`oplog::Unordered`] log by default): updates are logged, `contains` synchronizes.
pub struct SetObject<K: LogKind<State = BTreeSet<u64>, Op = SetUpdate> = Queue<SetUpdate, true>>(pub OpLog<K>);

impl<K: LogKind<State = BTreeSet<u64>, Op = SetUpdate>> Concurrent<SetModel> for SetObject<K> {
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
    type Object = SetObject<Queue<SetUpdate, O>>;
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

/// A random operation of the set workloads on [`KEYS`] keys (`removes: false` draws no
/// `remove`).
pub fn random_set_op(rng: &mut Rng, removes: bool) -> SetOp {
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

/// Two objects of one kind, each operation tagged with the one it acts on ([`Pair`]).
pub struct ObjectPair<O>(pub [O; 2]);

impl<M: Model, O: Concurrent<M>> Concurrent<Pair<M>> for ObjectPair<O> {
    fn call(&self, (second, op): &(bool, M::Op)) -> M::Ret {
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
    type Object = ObjectPair<SetObject>;
    fn model(&self) -> Pair<SetModel> {
        Pair::new(SetModel)
    }
    fn name(&self) -> String {
        format!("two ordered sets evicting each other, {}", self.label)
    }
    fn new_object(&self) -> Self::Object {
        let set = || SetObject(OpLog::with_domain(&self.domain, BTreeSet::new()));
        ObjectPair([set(), set()])
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<(bool, SetOp)>> {
        independent(rng, threads, ops, |rng| (rng.bool(), random_set_op(rng, true)))
    }
}

/// An object whose every call first moves it to the other representation
/// ([`OpLog::switch_representation`]), so histories switch between logged and direct
/// updates while other threads' operations are in flight.
pub struct Switching<O> {
    object: O,
    calls: std::sync::atomic::AtomicUsize,
}

/// An object under test that can switch its representation.
pub trait Switchable {
    /// [`OpLog::switch_representation`] of the object.
    fn switch_representation(&self, to: oplog::Representation);
}

impl Switchable for SetObject {
    fn switch_representation(&self, to: oplog::Representation) {
        self.0.switch_representation(to);
    }
}

impl Switchable for CounterObject {
    fn switch_representation(&self, to: oplog::Representation) {
        self.0.as_oplog().switch_representation(to);
    }
}

impl<M: Model, O: Concurrent<M> + Switchable> Concurrent<M> for Switching<O> {
    fn call(&self, op: &M::Op) -> M::Ret {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let to = if n.is_multiple_of(2) { oplog::Representation::Direct } else { oplog::Representation::Logged };
        self.object.switch_representation(to);
        self.object.call(op)
    }
}

/// [`Switching`] objects of adapter `A`.
pub struct SwitchingAdapter<A>(pub A);

impl<A: Adapter> Adapter for SwitchingAdapter<A>
where
    A::Object: Switchable,
{
    type Model = A::Model;
    type Object = Switching<A::Object>;
    fn model(&self) -> A::Model {
        self.0.model()
    }
    fn name(&self) -> String {
        format!("{}, switching representation on every call", self.0.name())
    }
    fn new_object(&self) -> Switching<A::Object> {
        Switching { object: self.0.new_object(), calls: Default::default() }
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<<A::Model as Model>::Op>> {
        self.0.plans(rng, threads, ops)
    }
}

/// `M` plus one operation outside it, `None`: a *churn*, which creates an object in the
/// domain under test, updates it (evicting whatever log owns the slot it lands in) and
/// drops it, while the other threads' operations run. It changes nothing the model sees
/// and answers `None`.
#[derive(Clone, Debug)]
pub struct WithChurn<M> {
    pub inner: M,
    pub name: String,
}

impl<M: Model> WithChurn<M> {
    pub fn new(inner: M) -> Self {
        let name = format!("{} with churn", inner.name());
        Self { inner, name }
    }
}

impl<M: Model> Model for WithChurn<M> {
    type State = M::State;
    type Op = Option<M::Op>;
    type Ret = Option<M::Ret>;
    fn name(&self) -> &str {
        &self.name
    }
    fn init(&self) -> Self::State {
        self.inner.init()
    }
    fn step(&self, state: &mut Self::State, op: &Self::Op) -> Self::Ret {
        op.as_ref().map(|op| self.inner.step(state, op))
    }
}

/// Objects under test plus the domain their churn ([`WithChurn`]) creates objects in.
pub struct Stormed<O, L: LogKind> {
    objects: O,
    domain: Arc<Domain<L>>,
    churn: fn(&Arc<Domain<L>>),
}

impl<M: Model, O: Concurrent<M>, L: LogKind> Concurrent<WithChurn<M>> for Stormed<O, L> {
    fn call(&self, op: &Option<M::Op>) -> Option<M::Ret> {
        match op {
            Some(op) => Some(self.objects.call(op)),
            None => {
                (self.churn)(&self.domain);
                None
            }
        }
    }
}

/// An eviction storm (issue 14 item 4): a pair of objects in a domain with one log-cache
/// slot per core, so that their updates evict each other's logs, and churns that create,
/// update and drop other objects of the same domain meanwhile (their logs evict the pair's
/// and are evicted by them, their drops race those evictions).
pub struct Storm<M: Model, O, L: LogKind> {
    model: M,
    domain: Arc<Domain<L>>,
    label: String,
    new: fn(&Arc<Domain<L>>) -> O,
    churn: fn(&Arc<Domain<L>>),
    op: fn(&mut Rng) -> M::Op,
}

impl<M: Model + Clone + Sync, O, L: LogKind> Adapter for Storm<M, O, L>
where
    M::Op: Send + Sync,
    O: Concurrent<M> + Send + Sync,
    Domain<L>: Send + Sync,
{
    type Model = WithChurn<Pair<M>>;
    type Object = Stormed<ObjectPair<O>, L>;
    fn model(&self) -> Self::Model {
        WithChurn::new(Pair::new(self.model.clone()))
    }
    fn name(&self) -> String {
        format!("eviction storm of {}, {}", self.model.name(), self.label)
    }
    fn new_object(&self) -> Self::Object {
        let objects = ObjectPair([(self.new)(&self.domain), (self.new)(&self.domain)]);
        Stormed { objects, domain: self.domain.clone(), churn: self.churn }
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<Option<(bool, M::Op)>>> {
        independent(rng, threads, ops, |rng| (rng.u8(0..4) != 0).then(|| (rng.bool(), (self.op)(rng))))
    }
}

/// Counters in an eviction storm.
pub fn counter_storm(config: oplog::Config, label: String) -> Storm<CounterModel, CounterObject, CounterLog> {
    Storm {
        model: CounterModel,
        domain: Domain::new(config.cache_slots(1)).unwrap(),
        label,
        new: |d| CounterObject(Counter::with_domain(d, 0)),
        churn: |d| {
            let c = Counter::with_domain(d, 0);
            c.add(3);
            c.dec();
            assert_eq!(c.read(), 2, "a churned counter lost an update");
        },
        op: random_counter_op,
    }
}

/// Grow-only unordered sets in an eviction storm: adds commute, and the kind keeps the
/// default global absorption, so its domain learns at its first apply that its logs may
/// be applied alone (and its switches to direct give up slots only without a barrier).
pub fn grow_only_set_storm(
    config: oplog::Config,
    label: String,
) -> Storm<SetModel, SetObject<Queue<SetUpdate, false>>, Queue<SetUpdate, false>> {
    Storm {
        model: SetModel,
        domain: Domain::new(config.cache_slots(1)).unwrap(),
        label: format!("grow-only, {label}"),
        new: |d| SetObject(OpLog::with_domain(d, BTreeSet::new())),
        churn: |d| {
            let s = OpLog::with_domain(d, BTreeSet::new());
            s.update(SetUpdate(SetOp::Add(1)));
            s.update(SetUpdate(SetOp::Add(2)));
            assert_eq!(s.read(|s| s.iter().copied().collect::<Vec<_>>()), [1, 2], "a churned set lost an update");
        },
        op: |rng| random_set_op(rng, false),
    }
}

/// Ordered sets in an eviction storm.
pub fn set_storm(config: oplog::Config, label: String) -> Storm<SetModel, SetObject, Queue<SetUpdate, true>> {
    Storm {
        model: SetModel,
        domain: Domain::new(config.cache_slots(1)).unwrap(),
        label,
        new: |d| SetObject(OpLog::with_domain(d, BTreeSet::new())),
        churn: |d| {
            let s = OpLog::with_domain(d, BTreeSet::new());
            s.update(SetUpdate(SetOp::Add(1)));
            s.update(SetUpdate(SetOp::Add(2)));
            s.update(SetUpdate(SetOp::Remove(1)));
            assert_eq!(s.read(|s| s.iter().copied().collect::<Vec<_>>()), [2], "a churned set lost an update");
        },
        op: |rng| random_set_op(rng, true),
    }
}
