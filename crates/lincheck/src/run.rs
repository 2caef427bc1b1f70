//! The driver: records many small random histories of an implementation and checks each.
//!
//! For every history, a fresh object is built ([`Adapter::new_object`]), 2 to 4 worker
//! threads each get a few random operations ([`Adapter::plans`], seeded per history so the
//! operation lists can be reproduced), each preceded by a short random spin, and run them
//! through [`Concurrent::call`] while a [`Recorder`] stamps each call and response. The
//! workers of a history meet at a spinning rendezvous first: a blocking barrier alone
//! wakes them tens of microseconds apart, longer than a whole history takes, and the
//! histories would come out sequential. [`Report::overlapping`] counts how many
//! operations really ran concurrently with another thread's.
//! The collected history goes to the [`Checker`]. The workers live for the whole run, so
//! structures with per-thread state see the same threads again and again, as in real use.
//!
//! A [`Watchdog`] watches the run: a history that hangs aborts the process with the
//! structure's name and the history's number.

use crate::check::{CheckError, Checker, MAX_OPS, Violation};
use crate::env;
use crate::history::{History, Operation, Recorder};
use crate::testkit::Watchdog;
use fastrand::Rng;
use oplog_model::{Concurrent, Model, NotDeterministic};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// The operation type of an adapter's model.
pub type OpOf<A> = <<A as Adapter>::Model as Model>::Op;
/// The response type of an adapter's model.
pub type RetOf<A> = <<A as Adapter>::Model as Model>::Ret;

/// What the runner needs beyond the implementation itself: the model, fresh objects (one
/// per history) and the operations of each history.
///
/// The object runs the operations through [`Concurrent`], the one adapter trait of the
/// workspace (`oplog-model`): the structures crate implements it for its structures, so an
/// adapter here is usually a domain, a name and an operation mix.
pub trait Adapter: Sync {
    /// The sequential specification the implementation must be linearizable to.
    type Model: Model;
    /// The object under test.
    type Object: Concurrent<Self::Model> + Send;

    /// The model.
    fn model(&self) -> Self::Model;

    /// What is under test, for reports (`"ordered set, per-CPU"`).
    fn name(&self) -> String;

    /// A fresh object in the model's initial state.
    fn new_object(&self) -> Self::Object;

    /// The operations of one history: `threads` lists of `ops_per_thread` operations, list
    /// `t` run in order by thread `t`. Keep arguments in a small range so that operations
    /// conflict. Most adapters draw each operation on its own ([`independent`]); an
    /// implementation with a precondition on the sequence of operations (an identity rule)
    /// draws lists that respect it.
    fn plans(&self, rng: &mut Rng, threads: usize, ops_per_thread: usize) -> Vec<Vec<OpOf<Self>>>;
}

/// `threads` lists of `ops_per_thread` operations, each drawn by `op` on its own: the
/// [`Adapter::plans`] of implementations that accept any sequence.
pub fn independent<Op>(
    rng: &mut Rng,
    threads: usize,
    ops_per_thread: usize,
    mut op: impl FnMut(&mut Rng) -> Op,
) -> Vec<Vec<Op>> {
    (0..threads).map(|_| (0..ops_per_thread).map(|_| op(rng)).collect()).collect()
}

/// Environment variable: histories per structure (default [`DEFAULT_HISTORIES`]).
pub const HISTORIES_VAR: &str = "OPLOG_LINCHECK_HISTORIES";
/// Environment variable: the seed of the operation lists (default: random, and printed).
pub const SEED_VAR: &str = "OPLOG_LINCHECK_SEED";
/// Histories per structure when [`HISTORIES_VAR`] is unset (a few under Miri).
pub const DEFAULT_HISTORIES: u64 = if cfg!(miri) { 3 } else { 10_000 };
/// Most threads a history may use.
pub const MAX_THREADS: usize = 16;
/// Longest random spin before an operation, in spin-loop hints.
const MAX_DELAY: u32 = 64;

/// What a run does; build with [`Config::new`] or [`Config::from_env`] and the setters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    histories: u64,
    min_threads: usize,
    max_threads: usize,
    ops_per_thread: usize,
    seed: u64,
    stall_limit: Duration,
    pinned: bool,
}

/// Why a [`Config`] was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// No histories to run.
    Histories(u64),
    /// The thread range is empty, starts at 0, or exceeds [`MAX_THREADS`].
    Threads(usize, usize),
    /// No operations per thread.
    OpsPerThread(usize),
    /// A history would exceed [`MAX_OPS`] operations.
    TooManyOps(usize),
    /// The stall limit is zero.
    StallLimit,
    /// A malformed environment variable.
    Env(env::EnvError),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Histories(n) => write!(f, "histories = {n}: run at least one history"),
            ConfigError::Threads(lo, hi) => {
                write!(f, "threads = {lo}..={hi}: expected a non-empty range within 1..={MAX_THREADS}")
            }
            ConfigError::OpsPerThread(n) => write!(f, "ops_per_thread = {n}: each thread needs at least 1 operation"),
            ConfigError::TooManyOps(n) => {
                write!(f, "a history of up to {n} operations is too long to check: at most {MAX_OPS}")
            }
            ConfigError::StallLimit => write!(f, "stall_limit = 0: a history needs some time to run"),
            ConfigError::Env(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// `histories` histories of 2 to 4 threads with 3 operations each, a random seed, and
    /// a 60-second stall limit.
    pub fn new(histories: u64) -> Self {
        // A random seed: std's hash keys come from the OS (and from Miri's generator).
        let seed = std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), histories);
        Self {
            histories,
            min_threads: 2,
            max_threads: 4,
            ops_per_thread: 3,
            seed,
            stall_limit: Duration::from_secs(60),
            pinned: true,
        }
    }

    /// [`Config::new`] with the history count from [`HISTORIES_VAR`] and the seed from
    /// [`SEED_VAR`] where they are set.
    ///
    /// # Errors
    /// [`ConfigError::Env`] when either is malformed.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// [`Config::from_env`] reading variables through `lookup` (`None`: unset).
    ///
    /// # Errors
    /// [`ConfigError::Env`] when either variable is malformed.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let histories = env::parse_number(HISTORIES_VAR, lookup(HISTORIES_VAR).as_deref(), DEFAULT_HISTORIES, 1)
            .map_err(ConfigError::Env)?;
        let config = Self::new(histories);
        let seed =
            env::parse_number(SEED_VAR, lookup(SEED_VAR).as_deref(), config.seed, 0).map_err(ConfigError::Env)?;
        Ok(config.seed(seed))
    }

    /// Each history uses between `min` and `max` threads (chosen per history).
    pub fn threads(mut self, min: usize, max: usize) -> Self {
        (self.min_threads, self.max_threads) = (min, max);
        self
    }

    /// Whether worker `w` is pinned to CPU `w` (round-robin over the allowed CPUs; the
    /// default), so that a history's first threads run on different CPUs and really
    /// overlap. Unpinned, with more threads than CPUs, the scheduler moves workers between
    /// CPUs, in the middle of an operation too: a per-CPU structure then sees a thread's
    /// updates land on different cores.
    pub fn pinned(mut self, pinned: bool) -> Self {
        self.pinned = pinned;
        self
    }

    /// Operations each thread runs per history.
    pub fn ops_per_thread(mut self, n: usize) -> Self {
        self.ops_per_thread = n;
        self
    }

    /// The seed the operation lists derive from.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// How long one history may run before the watchdog aborts the process.
    pub fn stall_limit(mut self, limit: Duration) -> Self {
        self.stall_limit = limit;
        self
    }

    /// Number of histories.
    pub fn histories(&self) -> u64 {
        self.histories
    }

    /// The seed.
    pub fn get_seed(&self) -> u64 {
        self.seed
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// The first setting out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.histories == 0 {
            return Err(ConfigError::Histories(0));
        }
        if self.min_threads == 0 || self.min_threads > self.max_threads || self.max_threads > MAX_THREADS {
            return Err(ConfigError::Threads(self.min_threads, self.max_threads));
        }
        if self.ops_per_thread == 0 {
            return Err(ConfigError::OpsPerThread(0));
        }
        if self.max_threads * self.ops_per_thread > MAX_OPS {
            return Err(ConfigError::TooManyOps(self.max_threads * self.ops_per_thread));
        }
        if self.stall_limit.is_zero() {
            return Err(ConfigError::StallLimit);
        }
        Ok(())
    }

    /// The seed of history `index`'s operation lists.
    fn history_seed(&self, index: u64) -> u64 {
        self.seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// A run in which every history was linearizable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// What was tested.
    pub structure: String,
    /// Histories checked.
    pub histories: u64,
    /// Operations over all histories.
    pub operations: u64,
    /// Operations whose interval overlapped an operation of another thread.
    pub overlapping: u64,
    /// The run's seed.
    pub seed: u64,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} histories ({} operations, {:.0}% overlapping another thread's) linearizable in {:.1} s \
             (seed {})",
            self.structure,
            self.histories,
            self.operations,
            100.0 * self.overlapping as f64 / self.operations.max(1) as f64,
            self.elapsed.as_secs_f64(),
            self.seed
        )
    }
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The configuration was rejected.
    Config(ConfigError),
    /// A history was not linearizable.
    NotLinearizable {
        /// What was tested.
        structure: String,
        /// Which history (0-based).
        index: u64,
        /// The run's seed.
        seed: u64,
        /// What the checker found.
        violation: Box<Violation>,
    },
    /// The model is not deterministic.
    Model(NotDeterministic),
    /// An operation panicked.
    Panicked {
        /// What was tested.
        structure: String,
        /// Which history.
        index: u64,
        /// The run's seed.
        seed: u64,
        /// The panicking thread.
        thread: usize,
        /// The panic message.
        message: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Config(e) => write!(f, "bad linearizability run configuration: {e}"),
            RunError::NotLinearizable { structure, index, seed, violation } => {
                write!(f, "{structure}: history #{index} (operation lists from {SEED_VAR}={seed}) failed: {violation}")
            }
            RunError::Model(e) => write!(f, "cannot check linearizability: {e}"),
            RunError::Panicked { structure, index, seed, thread, message } => write!(
                f,
                "{structure}: history #{index} ({SEED_VAR}={seed}): an operation on thread {thread} panicked: {message}"
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// One history's work, shared with the workers.
struct Job<A: Adapter> {
    object: A::Object,
    /// Per thread: operations, each with the spin before it.
    plans: Vec<Vec<(u32, OpOf<A>)>>,
    /// Threads of this history that reached the rendezvous.
    arrived: AtomicUsize,
}

/// Waits, spinning, until all `n` threads of a history have arrived (yielding now and
/// then, so that more threads than CPUs still get there).
fn rendezvous(arrived: &AtomicUsize, n: usize) {
    arrived.fetch_add(1, Ordering::SeqCst);
    let mut spins = 0u32;
    while arrived.load(Ordering::SeqCst) < n {
        spins += 1;
        if spins.is_multiple_of(4096) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Spins for `n` spin-loop hints.
fn delay(n: u32) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// Number of operations that overlap an operation of another thread.
fn overlapping<O, R>(ops: &[Operation<O, R>]) -> u64 {
    ops.iter().filter(|a| ops.iter().any(|b| b.thread != a.thread && !a.precedes(b) && !b.precedes(a))).count() as u64
}

/// Records and checks `config.histories()` histories of `adapter`'s implementation.
///
/// # Errors
/// The first history that is not linearizable, a model that is not deterministic, an
/// operation that panicked, or a rejected configuration.
pub fn run<A: Adapter>(adapter: &A, config: &Config) -> Result<Report, RunError>
where
    OpOf<A>: Send + Sync,
    RetOf<A>: Send,
{
    config.validate().map_err(RunError::Config)?;
    let structure = adapter.name();
    let mut checker = Checker::new(adapter.model());
    let watchdog = Watchdog::start(&format!("linearizability of {structure}"), config.stall_limit);
    let workers = config.max_threads;
    let recorder = Recorder::new();
    let start = Barrier::new(workers + 1);
    let end = Barrier::new(workers + 1);
    let job: RwLock<Option<Job<A>>> = RwLock::new(None);
    type Outcome<O, R> = Result<Vec<Operation<O, R>>, String>;
    let results: Vec<Mutex<Outcome<OpOf<A>, RetOf<A>>>> = (0..workers).map(|_| Mutex::new(Ok(Vec::new()))).collect();
    let began = Instant::now();
    std::thread::scope(|s| {
        for (w, result) in results.iter().enumerate() {
            let (recorder, start, end, job) = (&recorder, &start, &end, &job);
            s.spawn(move || {
                // Worker `w` on CPU `w` (round-robin): a history's first threads run on
                // different CPUs, so their operations really overlap. Left to itself, the
                // scheduler often wakes them on one CPU, where they take turns and the history
                // comes out sequential. Best effort: a refusal leaves the thread unpinned.
                // (`Config::pinned`: unpinned on request.)
                if config.pinned {
                    let cpus = ordo::cpu::allowed();
                    let _ = ordo::cpu::pin_current_thread(cpus[w % cpus.len()]);
                }
                loop {
                    start.wait();
                    {
                        let guard = job.read().unwrap_or_else(PoisonError::into_inner);
                        let Some(job) = guard.as_ref() else { return };
                        let plan = job.plans.get(w).map_or(&[][..], Vec::as_slice);
                        if !plan.is_empty() {
                            rendezvous(&job.arrived, job.plans.len());
                        }
                        let outcome = catch_unwind(AssertUnwindSafe(|| {
                            plan.iter()
                                .map(|(pause, op)| {
                                    delay(*pause);
                                    recorder.record(w, op.clone(), |op| job.object.call(op))
                                })
                                .collect::<Vec<_>>()
                        }))
                        .map_err(|p| panic_message(&*p));
                        *result.lock().unwrap_or_else(PoisonError::into_inner) = outcome;
                    }
                    end.wait();
                }
            });
        }
        let (mut operations, mut overlaps) = (0, 0);
        let outcome = (0..config.histories).try_for_each(|index| {
            let mut rng = Rng::with_seed(config.history_seed(index));
            let threads = rng.usize(config.min_threads..=config.max_threads);
            let ops = adapter.plans(&mut rng, threads, config.ops_per_thread);
            assert_eq!(ops.len(), threads, "{structure}: plans must give one list per thread");
            let plans =
                ops.into_iter().map(|list| list.into_iter().map(|op| (rng.u32(0..=MAX_DELAY), op)).collect()).collect();
            let object = adapter.new_object();
            *job.write().unwrap_or_else(PoisonError::into_inner) =
                Some(Job { object, plans, arrived: AtomicUsize::new(0) });
            start.wait();
            end.wait();
            // Drop the object (applying whatever it still holds) before the next history.
            drop(job.write().unwrap_or_else(PoisonError::into_inner).take());
            let mut ops = Vec::new();
            for (thread, r) in results.iter().enumerate() {
                match std::mem::replace(&mut *r.lock().unwrap_or_else(PoisonError::into_inner), Ok(Vec::new())) {
                    Ok(mut o) => ops.append(&mut o),
                    Err(message) => {
                        return Err(RunError::Panicked {
                            structure: structure.clone(),
                            index,
                            seed: config.seed,
                            thread,
                            message,
                        });
                    }
                }
            }
            operations += ops.len() as u64;
            overlaps += overlapping(&ops);
            let history = History::new(ops).expect("the recorder's tickets are distinct and per-thread sequential");
            checker.check(&history).map_err(|e| match e {
                CheckError::NotLinearizable(violation) => {
                    RunError::NotLinearizable { structure: structure.clone(), index, seed: config.seed, violation }
                }
                CheckError::Model(e) => RunError::Model(e),
                CheckError::TooLong { ops } => RunError::Config(ConfigError::TooManyOps(ops)),
            })?;
            watchdog.progress(format!("history #{index} checked"));
            Ok(())
        });
        // Release the workers: no job means stop.
        start.wait();
        outcome.map(|()| Report {
            structure: structure.clone(),
            histories: config.histories,
            operations,
            overlapping: overlaps,
            seed: config.seed,
            elapsed: began.elapsed(),
        })
    })
}

/// The message of a panic payload.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a non-string panic payload)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use oplog_model::counter::{CounterModel, CounterOp, CounterRet};
    use std::sync::atomic::{AtomicI64, Ordering};

    /// A correct counter: one atomic.
    struct AtomicCounter(AtomicI64);

    impl Concurrent<CounterModel> for AtomicCounter {
        fn call(&self, op: &CounterOp) -> CounterRet {
            match op {
                CounterOp::Inc => self.0.fetch_add(1, Ordering::SeqCst),
                CounterOp::Dec => self.0.fetch_sub(1, Ordering::SeqCst),
                CounterOp::Read => return CounterRet::Value(self.0.load(Ordering::SeqCst)),
            };
            CounterRet::Done
        }
    }

    /// A broken counter: reads miss the last increment.
    struct LaggingCounter(AtomicI64);

    impl Concurrent<CounterModel> for LaggingCounter {
        fn call(&self, op: &CounterOp) -> CounterRet {
            match op {
                CounterOp::Inc => {
                    self.0.fetch_add(1, Ordering::SeqCst);
                    CounterRet::Done
                }
                _ => CounterRet::Value(self.0.load(Ordering::SeqCst).saturating_sub(1).max(0)),
            }
        }
    }

    /// An object that panics on every operation.
    struct Panicky;

    impl Concurrent<CounterModel> for Panicky {
        fn call(&self, _: &CounterOp) -> CounterRet {
            panic!("no reads today")
        }
    }

    /// A counter adapter: `name`, a fresh object from `new`, operations from `ops`.
    struct Counters<O> {
        name: &'static str,
        new: fn() -> O,
        ops: &'static [CounterOp],
    }

    impl<O: Concurrent<CounterModel> + Send> Adapter for Counters<O> {
        type Model = CounterModel;
        type Object = O;
        fn model(&self) -> CounterModel {
            CounterModel
        }
        fn name(&self) -> String {
            self.name.into()
        }
        fn new_object(&self) -> O {
            (self.new)()
        }
        fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<CounterOp>> {
            independent(rng, threads, ops, |rng| self.ops[rng.usize(0..self.ops.len())])
        }
    }

    const ATOMIC: Counters<AtomicCounter> = Counters {
        name: "atomic counter",
        new: || AtomicCounter(AtomicI64::new(0)),
        ops: &[CounterOp::Inc, CounterOp::Dec, CounterOp::Read],
    };

    const LAGGING: Counters<LaggingCounter> = Counters {
        name: "lagging counter",
        new: || LaggingCounter(AtomicI64::new(0)),
        ops: &[CounterOp::Inc, CounterOp::Read],
    };

    #[test]
    fn a_correct_object_passes_every_history() {
        let config = Config::new(if cfg!(miri) { 4 } else { 500 });
        let report = run(&ATOMIC, &config).unwrap();
        assert_eq!(report.histories, config.histories());
        assert!(report.operations >= 2 * 3 * config.histories());
        assert!(report.to_string().starts_with("atomic counter: "), "{report}");
    }

    #[test]
    fn a_broken_object_is_caught_with_its_history() {
        let err = run(&LAGGING, &Config::new(if cfg!(miri) { 20 } else { 500 })).unwrap_err();
        let RunError::NotLinearizable { structure, violation, .. } = &err else { panic!("{err}") };
        assert_eq!(structure, "lagging counter");
        assert!(violation.stuck.iter().any(|s| s.contains("Read returned Value(")), "{err}");
        assert!(err.to_string().contains("OPLOG_LINCHECK_SEED="), "{err}");
    }

    #[test]
    fn a_panicking_operation_is_reported_not_hung() {
        let panicky = Counters { name: "panicky", new: || Panicky, ops: &[CounterOp::Read] };
        let err = run(&panicky, &Config::new(3)).unwrap_err();
        assert!(matches!(&err, RunError::Panicked { message, .. } if message == "no reads today"), "{err}");
    }

    #[test]
    fn bad_configurations_are_rejected_with_a_clear_message() {
        let bad = |c: Config| run(&ATOMIC, &c).unwrap_err().to_string();
        assert_eq!(
            bad(Config::new(0)),
            "bad linearizability run configuration: histories = 0: run at least one history"
        );
        assert!(
            bad(Config::new(1).threads(0, 2)).ends_with("threads = 0..=2: expected a non-empty range within 1..=16")
        );
        assert!(bad(Config::new(1).threads(3, 2)).contains("threads = 3..=2"));
        assert!(bad(Config::new(1).threads(1, 17)).contains("threads = 1..=17"));
        assert!(bad(Config::new(1).ops_per_thread(0)).ends_with("each thread needs at least 1 operation"));
        assert!(
            bad(Config::new(1).threads(2, 16).ops_per_thread(9))
                .ends_with("a history of up to 144 operations is too long to check: at most 128")
        );
        assert!(
            bad(Config::new(1).stall_limit(Duration::ZERO))
                .ends_with("stall_limit = 0: a history needs some time to run")
        );
    }

    #[test]
    fn the_environment_sets_the_count_and_the_seed_or_says_what_is_wrong() {
        let lookup = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let c = Config::from_lookup(lookup(&[])).unwrap();
        assert_eq!(c.histories(), DEFAULT_HISTORIES);
        let c = Config::from_lookup(lookup(&[(HISTORIES_VAR, "1_000_000"), (SEED_VAR, "7")])).unwrap();
        assert_eq!((c.histories(), c.get_seed()), (1_000_000, 7));
        let err = Config::from_lookup(lookup(&[(HISTORIES_VAR, "lots")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "OPLOG_LINCHECK_HISTORIES=\"lots\" is not valid: expected a whole number, at least 1 (for example \
                 OPLOG_LINCHECK_HISTORIES={DEFAULT_HISTORIES})"
            )
        );
        assert!(Config::from_lookup(lookup(&[(HISTORIES_VAR, "0")])).is_err());
        let err = Config::from_lookup(lookup(&[(SEED_VAR, "-1")])).unwrap_err();
        assert!(err.to_string().starts_with("OPLOG_LINCHECK_SEED=\"-1\" is not valid"), "{err}");
    }

    #[test]
    fn the_same_seed_gives_the_same_operation_lists() {
        let c = Config::new(1).seed(42);
        assert_eq!(c.history_seed(7), Config::new(1).seed(42).history_seed(7));
        assert_ne!(c.history_seed(7), c.history_seed(8));
    }
}
