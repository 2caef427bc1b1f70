//! The OpLog distributed counter (000 Figure 8) in both slot modes.
//!
//! - [`OplogPerCpu`] (`oplog-percpu`): per-CPU log slots, each guarded by its own lock
//!   (normally uncontended), chosen by the CPU the thread runs on.
//! - [`OplogPerThread`] (`oplog-perthread`): per-thread slots, written by their owner with
//!   no atomic read-modify-write.
//!
//! Each repetition builds a fresh domain, so no log cache state carries over between points.

use std::sync::Arc;

use oplog::{Config, Counter, CounterLog, Domain};

use super::CounterImpl;

fn counter(config: Config) -> Counter {
    let domain: Arc<Domain<CounterLog>> = Domain::new(config).expect("the default domain configuration is valid");
    Counter::with_domain(&domain, 0)
}

fn read(c: &Counter) -> u64 {
    u64::try_from(c.read()).expect("an increment-only counter is never negative")
}

/// The OpLog counter on per-CPU slots.
#[derive(Debug)]
pub struct OplogPerCpu(Counter);

impl CounterImpl for OplogPerCpu {
    const ID: &'static str = "oplog-percpu";

    fn new(_threads: usize) -> Self {
        Self(counter(Config::per_cpu()))
    }

    #[inline]
    fn inc(&self, _thread: usize) {
        self.0.inc();
    }

    fn read(&self) -> u64 {
        read(&self.0)
    }
}

/// The OpLog counter on per-thread slots.
#[derive(Debug)]
pub struct OplogPerThread(Counter);

impl CounterImpl for OplogPerThread {
    const ID: &'static str = "oplog-perthread";

    fn new(_threads: usize) -> Self {
        Self(counter(Config::per_thread()))
    }

    #[inline]
    fn inc(&self, _thread: usize) {
        self.0.inc();
    }

    fn read(&self) -> u64 {
        read(&self.0)
    }
}
