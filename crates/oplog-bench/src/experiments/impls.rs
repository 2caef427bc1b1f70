//! What the data-structure experiments share: a table of implementations, each an id and a
//! measuring function, and the loop that measures each at every thread count.

use std::io;
use std::sync::Arc;

use oplog::{Config, Domain, LogKind};
use serde_json::Value;

use crate::harness::{Run, Settings, Throughput};
use crate::output::{Record, Sink};

/// One implementation an experiment measures: its stable id (the `impl` field of records)
/// and how to measure it at one point, given the point's parameter `P` (`()` when the
/// experiment sweeps only threads).
#[derive(Clone, Copy, Debug)]
pub struct Impl<P = ()> {
    /// Stable id.
    pub id: &'static str,
    measure: fn(&Run, P) -> Throughput,
}

impl<P> Impl<P> {
    /// The implementation `id`, measured by `measure`.
    pub const fn new(id: &'static str, measure: fn(&Run, P) -> Throughput) -> Self {
        Self { id, measure }
    }

    /// Measures this implementation at one point.
    pub fn measure(&self, run: &Run, param: P) -> Throughput {
        (self.measure)(run, param)
    }
}

/// Measures every implementation with parameter `param` at every thread count of
/// `settings`, pushing one record per point, with the fields `extra` added.
pub fn run_over_threads<P: Copy>(
    experiment: &str,
    impls: &[Impl<P>],
    param: P,
    extra: &[(&str, Value)],
    settings: &Settings,
    sink: &mut Sink,
) -> io::Result<()> {
    for &threads in &settings.threads {
        for entry in impls {
            sink.point(entry.id, threads);
            let run = settings.at(threads);
            let throughput = entry.measure(&run, param);
            let record = Record::new(experiment, entry.id, &run, &throughput);
            sink.push(extra.iter().fold(record, |r, (key, value)| r.with(key, value.clone())))?;
        }
    }
    Ok(())
}

/// A fresh per-CPU domain for one repetition (the texts' design: a log per core), so no
/// log-cache state carries over between points.
pub fn per_cpu_domain<L: LogKind>() -> Arc<Domain<L>> {
    Domain::new(Config::per_cpu()).expect("the default per-CPU configuration is valid")
}

/// Asserts that ids are unique (for the experiments' tests).
#[cfg(test)]
pub fn assert_unique_ids<P>(impls: &[Impl<P>]) {
    let ids: std::collections::HashSet<_> = impls.iter().map(|e| e.id).collect();
    assert_eq!(ids.len(), impls.len(), "duplicate implementation id");
}
