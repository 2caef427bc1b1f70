//! What the data-structure experiments share: a table of implementations, each an id, a
//! measuring function and whatever else the experiment keeps per implementation, and
//! [`ThreadSweep`], the experiment that measures each of them at every thread count and
//! then adds its annexes.

use std::io;
use std::sync::Arc;

use oplog::{Config, Domain, LogKind};

use crate::experiments::{Experiment, Ratios};
use crate::harness::{Run, Settings, Throughput};
use crate::output::verdict::Roles;
use crate::output::{Record, Sink};

/// One implementation an experiment measures: its stable id (the `impl` field of records),
/// how to measure it at one point, given the point's parameter `P` (`()` when the
/// experiment sweeps only threads), what else the experiment keeps for it, `X` (`()` when
/// nothing; for example how `refcount`'s memory annex measures it, or the workload an
/// `objects` id runs), and what a measurement returns, `R` (its [`Throughput`] unless the
/// experiment also records what it observed).
#[derive(Clone, Copy, Debug)]
pub struct Impl<P = (), X = (), R = Throughput> {
    /// Stable id.
    pub id: &'static str,
    measure: fn(&Run, P) -> R,
    /// What else the experiment keeps for this implementation.
    pub data: X,
}

impl<P, R> Impl<P, (), R> {
    /// The implementation `id`, measured by `measure`.
    pub const fn new(id: &'static str, measure: fn(&Run, P) -> R) -> Self {
        Self { id, measure, data: () }
    }
}

impl<P, X, R> Impl<P, X, R> {
    /// The implementation `id`, measured by `measure`, with `data` kept for the experiment.
    pub const fn with_data(id: &'static str, measure: fn(&Run, P) -> R, data: X) -> Self {
        Self { id, measure, data }
    }

    /// Measures this implementation at one point.
    pub fn measure(&self, run: &Run, param: P) -> R {
        (self.measure)(run, param)
    }
}

/// An experiment whose x axis is the thread count: every implementation of `impls`,
/// measured with `param`, at every thread count of the settings (side by side, see
/// [`Run::side_by_side`]); then its annexes, if any.
#[derive(Debug)]
pub struct ThreadSweep<P: 'static = (), X: 'static = ()> {
    /// [`Experiment::name`].
    pub name: &'static str,
    /// [`Experiment::description`].
    pub description: &'static str,
    /// The baseline of the table's ratio column.
    pub versus: &'static str,
    /// The implementations, in table order.
    pub impls: &'static [Impl<P, X>],
    /// The parameter every point is measured with.
    pub param: P,
    /// Fields added to every record.
    pub extra: &'static [(&'static str, i64)],
    /// If set, a field added to every record: the median divided by the thread count.
    pub per_thread: Option<&'static str>,
    /// If set, pushes the experiment's annexes after the sweep.
    pub annexes: Option<fn(&Settings, &mut Sink) -> io::Result<()>>,
    /// [`Experiment::roles`]: the default id, the baselines, the targets.
    pub roles: Roles,
}

impl<P: Copy + Sync, X: Sync> Experiment for ThreadSweep<P, X> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn ids(&self) -> Vec<&'static str> {
        self.impls.iter().map(|e| e.id).collect()
    }

    fn ratios(&self) -> Ratios {
        Ratios { scaling: true, versus: Some(self.versus) }
    }

    fn roles(&self) -> Roles {
        self.roles
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * self.impls.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        for &threads in &settings.threads {
            let run = settings.at(threads);
            let measured = run.side_by_side(
                self.impls.len(),
                |i| sink.point(self.impls[i].id, threads),
                |i, once| (self.impls[i].measure(once, self.param), ()),
            );
            for (entry, (throughput, ())) in self.impls.iter().zip(measured) {
                let mut record = Record::new(self.name, entry.id, &run, &throughput);
                if let Some(key) = self.per_thread {
                    record = record.with(key, throughput.median / threads as f64);
                }
                sink.push(self.extra.iter().fold(record, |r, &(key, value)| r.with(key, value)))?;
            }
        }
        match self.annexes {
            Some(annexes) => annexes(settings, sink),
            None => Ok(()),
        }
    }
}

/// A fresh per-CPU domain for one repetition (a log per core), so no log-cache state
/// carries over between points. Slots are entered with a restartable sequence where the
/// platform has them: updates use no atomic instruction, and a synchronize pays a
/// `membarrier` (an interrupt on every CPU running the process).
pub fn per_cpu_domain<L: LogKind>() -> Arc<Domain<L>> {
    Domain::new(Config::per_cpu()).expect("the default per-CPU configuration is valid")
}

/// A fresh per-CPU domain (as [`per_cpu_domain`]) stamped by `clock`, whose ordered updates
/// each wait out `clock`'s uncertainty window before returning ([`Config::commit_wait`]):
/// 003 §6.3's OplogORDO (Figure 10), the `-commit-wait` ids of `fork`, `notify` and
/// `boundary`.
pub fn commit_wait_domain<L: LogKind>(clock: Arc<dyn ordo::Clock>) -> Arc<Domain<L>> {
    Domain::new(Config::per_cpu().clock(clock).commit_wait(true))
        .expect("the per-CPU configuration with a clock is valid")
}

/// A fresh per-CPU domain whose slots are guarded by spin locks, as in the texts (000 §4.1:
/// "a per-core lock protecting the per-core log"): updates pay an uncontended atomic, a
/// synchronize takes the locks and needs no `membarrier`. The `oplog-locked` ids.
pub fn per_cpu_locked_domain<L: LogKind>() -> Arc<Domain<L>> {
    Domain::new(Config::per_cpu().rseq(false)).expect("the per-CPU configuration without rseq is valid")
}

/// For the experiments' tests: ids are unique, and every implementation runs briefly at 2
/// threads with `param`, passing its own verification.
#[cfg(test)]
pub fn smoke_test<P: Copy, X>(impls: &[Impl<P, X>], param: P) {
    let ids: std::collections::HashSet<_> = impls.iter().map(|e| e.id).collect();
    assert_eq!(ids.len(), impls.len(), "duplicate implementation id");
    brief_run(|run| {
        for entry in impls {
            assert!(entry.measure(run, param).median > 0.0, "{} measured nothing", entry.id);
        }
    });
}

/// For the experiments' tests: `f` with a brief run (2 threads, one repetition of 5 ms).
#[cfg(test)]
pub fn brief_run<R>(f: impl FnOnce(&Run) -> R) -> R {
    let placement = crate::pin::Placement::from_process();
    f(&Run { threads: 2, duration: std::time::Duration::from_millis(5), reps: 1, placement: &placement })
}

/// For the tests of experiments over OpLog structures: measured briefly at 2 threads, each
/// implementation whose id starts with `oplog` notes the representation its object ended
/// in ([`Throughput::ended_in`](crate::harness::Throughput::ended_in)), and no other does.
#[cfg(test)]
pub fn notes_representations<P: Copy, X>(impls: &[Impl<P, X>], param: P) {
    brief_run(|run| {
        for entry in impls {
            let t = entry.measure(run, param);
            let ended_in = t.noted("ended_in").and_then(|v| v.as_str());
            if entry.id.starts_with("oplog") {
                assert!(matches!(ended_in, Some("logged" | "direct")), "{} noted {ended_in:?}", entry.id);
            } else {
                assert_eq!(ended_in, None, "{} is not built on OpLog", entry.id);
            }
        }
    });
}
