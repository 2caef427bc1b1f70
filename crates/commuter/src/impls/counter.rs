//! The counter (000 Figure 8): OpLog's [`oplog::Counter`] in a per-CPU and a per-thread
//! domain, the sloppy counter of 004 §4.3 (`oplog_refcount::SloppyCounter`) in a per-CPU
//! and a per-thread domain, and a mutex around an integer.
//!
//! The sloppy counter's interface is the counter's: `inc` takes a reference (from the
//! calling core's spares if it has one, else from the central count), `dec` releases one
//! into the core's spares (the excess over the threshold goes back to the central count),
//! and `read` is `SloppyCounter::value`, which locks every core's spares. Its steady state
//! is a core holding a spare reference: warming takes one from the central count and
//! releases it again on that core.

use oplog::{Config, Counter, CounterLog, Domain};
use oplog_model::Concurrent;
use oplog_model::counter::{CounterModel, CounterOp, CounterRet};
use oplog_percore::primitive::Mutex;
use oplog_refcount::{CoreMode, SloppyConfig, SloppyCounter, SloppyDomain};

use super::{Impl, Object};
use crate::tracer::CPUS;

/// [`oplog::Counter`]: `inc`/`dec` fold into the calling core's slot, `read` synchronizes.
#[derive(Debug)]
pub struct OplogCounter(Counter);

impl OplogCounter {
    /// A counter at 0 in a fresh domain built from `config`.
    ///
    /// # Panics
    /// If the configuration is rejected (a bug in this crate).
    pub fn new(config: Config) -> Self {
        let domain = Domain::<CounterLog>::new(config).unwrap_or_else(|e| panic!("counter domain: {e}"));
        OplogCounter(Counter::with_domain(&domain, 0))
    }
}

impl Concurrent<CounterModel> for OplogCounter {
    fn call(&self, op: &CounterOp) -> CounterRet {
        match op {
            CounterOp::Inc => self.0.inc(),
            CounterOp::Dec => self.0.dec(),
            CounterOp::Read => return CounterRet::Value(self.0.read()),
        }
        CounterRet::Done
    }
}

impl Object<CounterModel> for OplogCounter {
    /// Adds 0: takes this core's slot for the counter without changing its value.
    fn warm(&self) {
        self.0.add(0);
    }

    /// Reads the counter twice: the first read applies what the set-up logged, the second
    /// finds nothing logged and lets the following reads take the concurrent path (a read
    /// that found logs, or the first read after a direct update, leaves the reader bias
    /// unset: OpLog's module docs, "Reads").
    fn quiesce(&self) {
        self.0.read();
        self.0.read();
    }
}

/// [`SloppyCounter`] in a domain of its own (004 §4.3; see the module docs).
#[derive(Debug)]
pub struct SloppyCount(SloppyCounter);

impl SloppyCount {
    /// A counter at 0 in a fresh sloppy domain of `mode` cores (per-CPU: [`CPUS`] of them)
    /// with the default threshold.
    ///
    /// # Panics
    /// If the configuration is rejected (a bug in this crate).
    pub fn new(mode: CoreMode) -> Self {
        let domain = SloppyDomain::new(SloppyConfig::new().mode(mode).cpus(CPUS))
            .unwrap_or_else(|e| panic!("sloppy domain under test: {e}"));
        SloppyCount(SloppyCounter::with_domain(&domain, 0))
    }
}

impl Concurrent<CounterModel> for SloppyCount {
    fn call(&self, op: &CounterOp) -> CounterRet {
        match op {
            CounterOp::Inc => self.0.inc(),
            CounterOp::Dec => self.0.dec(),
            CounterOp::Read => return CounterRet::Value(self.0.value()),
        }
        CounterRet::Done
    }
}

impl Object<CounterModel> for SloppyCount {
    /// Takes a reference and releases it: this core now holds one spare, and the value is
    /// unchanged.
    fn warm(&self) {
        self.0.inc();
        self.0.dec();
    }
}

/// The baseline: one integer under a mutex.
#[derive(Debug)]
pub struct MutexCounter(Mutex<i64>);

impl Concurrent<CounterModel> for MutexCounter {
    fn call(&self, op: &CounterOp) -> CounterRet {
        let mut v = self.0.lock();
        match op {
            CounterOp::Inc => *v += 1,
            CounterOp::Dec => *v -= 1,
            CounterOp::Read => return CounterRet::Value(*v),
        }
        CounterRet::Done
    }
}

impl Object<CounterModel> for MutexCounter {}

/// The counter's implementations under test.
pub fn impls() -> Vec<Impl<CounterModel>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog::Counter, per-CPU slots (000 Figure 8)",
            build: || Box::new(OplogCounter::new(Config::per_cpu().cpus(CPUS))),
            contract: None,
        },
        Impl {
            id: "oplog-perthread",
            about: "oplog::Counter, per-thread slots",
            build: || Box::new(OplogCounter::new(Config::per_thread())),
            contract: None,
        },
        Impl {
            id: "sloppy",
            about: "oplog_refcount::SloppyCounter, per-CPU spares (004 §4.3)",
            build: || Box::new(SloppyCount::new(CoreMode::PerCpu)),
            contract: None,
        },
        Impl {
            id: "sloppy-perthread",
            about: "oplog_refcount::SloppyCounter, per-thread spares",
            build: || Box::new(SloppyCount::new(CoreMode::PerThread)),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "an i64 under a mutex",
            build: || Box::new(MutexCounter(Mutex::new(0, "MutexCounter.value"))),
            contract: None,
        },
    ]
}
