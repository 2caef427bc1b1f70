//! The experiments `oplog-bench` can run, and the registry that lists them.
//!
//! An experiment is a type implementing [`Experiment`]: it knows its name, what it measures,
//! what its x axis is, and how to run its points through the [`harness`](crate::harness) and
//! push one [`Record`] per point into the [`Sink`].
//!
//! Adding one = a new module here plus one line in [`REGISTRY`]; the command line, `all`, the
//! progress bar, the table, the JSON lines, the CSV and the SVG all follow from the registry.

use std::io;

use crate::harness::Settings;
use crate::output::plot::Scale;
use crate::output::verdict::Roles;
use crate::output::{Record, Sink};

pub mod boundary;
pub mod clock;
pub mod commuter;
pub mod contention;
pub mod counter;
pub mod fork;
pub mod impls;
pub mod list;
pub mod loc;
pub mod lru;
pub mod memory;
pub mod metrics;
pub mod notify;
pub mod objects;
pub mod read_mix;
pub mod refcount;
pub mod rlu;
pub mod serial_sweep;
pub mod spinlock;
pub mod stat;
pub mod stm;
pub mod timestamps;
pub mod txn;

/// Every experiment, in the order `all` runs them. Names must be unique and must not be
/// [`ALL`].
pub static REGISTRY: &[&dyn Experiment] = &[
    &counter::COUNTER,
    &clock::ClockExperiment,
    &contention::Contention,
    &memory::Memory,
    &read_mix::ReadMix,
    &spinlock::Spinlock,
    &serial_sweep::SerialSweep,
    &stat::STAT,
    &fork::FORK,
    &fork::ForkTruncate,
    &list::LIST,
    &notify::NOTIFY,
    &lru::LRU,
    &objects::ObjectsExperiment,
    &refcount::REFCOUNT,
    &rlu::RluExperiment,
    &stm::StmExperiment,
    &txn::TxnExperiment,
    &boundary::BoundaryExperiment,
    &metrics::METRICS,
    &commuter::CommuterExperiment,
    &loc::LocExperiment,
];

/// The pseudo-experiment name that runs every entry of [`REGISTRY`].
pub const ALL: &str = "all";

/// One of the papers' experiments.
pub trait Experiment: Sync {
    /// Stable id: the command-line name and the `experiment` field of its records.
    fn name(&self) -> &'static str;

    /// One line: what is measured, and which text it comes from.
    fn description(&self) -> &'static str;

    /// The ids of the implementations it measures (the `impl` field of its records), in
    /// table order; empty for an experiment that reports only annexes.
    fn ids(&self) -> Vec<&'static str>;

    /// What the plot's x axis and the table's columns are.
    fn x_axis(&self) -> XAxis {
        XAxis::Threads
    }

    /// The value the table shows and the plot draws on its y axis (default: ops/s).
    fn metric(&self) -> Metric {
        Metric::OPS_PER_SEC
    }

    /// How the plot places x values (default: linear).
    fn x_scale(&self) -> Scale {
        Scale::Linear
    }

    /// Whether the plot's y axis is logarithmic (for values over orders of magnitude).
    fn log_y(&self) -> bool {
        false
    }

    /// Which ratio columns the terminal table adds.
    fn ratios(&self) -> Ratios {
        Ratios::NONE
    }

    /// Which ids are the default configuration, the baselines and the floor, and the
    /// targets: what the [verdict](crate::output::verdict) judges.
    fn roles(&self) -> Roles {
        Roles::NONE
    }

    /// The values of its swept parameter (its x axis) that `--points` may pick, in sweep
    /// order: every point of the full sweep. `None` (the default) where `--points` does not
    /// apply: no swept parameter, or results that need the whole sweep (a crossover, a
    /// normalization to one of its points).
    fn sweep_points(&self) -> Option<Vec<f64>> {
        None
    }

    /// How many records [`Experiment::run`] will push with these settings (the progress
    /// bar's total).
    fn points(&self, settings: &Settings) -> u64;

    /// Builds or loads what the experiment needs before anything is measured (for example a
    /// program it runs), printing its own progress on stderr. [`crate::run`] prepares every
    /// selected experiment before the first measurement, so this time is never counted as
    /// an experiment's. Default: nothing.
    fn prepare(&self) -> io::Result<()> {
        Ok(())
    }

    /// Measures every point and pushes one record per point into `sink`.
    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()>;
}

/// The x axis of an experiment's plot and the columns of its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XAxis {
    /// The number of threads (`threads` field of each record).
    Threads,
    /// A swept parameter, stored in each record's `extra` under `key` as a number.
    Param {
        /// The field name in [`Record::extra`].
        key: &'static str,
        /// Axis label, e.g. "updates (% of operations)".
        label: &'static str,
    },
}

impl XAxis {
    /// The axis label for plots.
    pub fn label(&self) -> &'static str {
        match self {
            XAxis::Threads => "threads",
            XAxis::Param { label, .. } => label,
        }
    }

    /// The record's position on this axis, or `None` if the record lacks a numeric value.
    pub fn value(&self, record: &Record) -> Option<f64> {
        match self {
            XAxis::Threads => Some(record.threads as f64),
            XAxis::Param { key, .. } => record.extra.get(*key).and_then(|v| v.as_f64()),
        }
    }

    /// Column heading for position `x` in the terminal table: `4T`, or `update_pct=10`.
    pub fn heading(&self, x: f64) -> String {
        match self {
            XAxis::Threads => format!("{x}T"),
            XAxis::Param { key, .. } => format!("{key}={x}"),
        }
    }
}

/// The value of a record that an experiment's table and plot show: `ops_per_sec`, or a
/// numeric experiment-specific field such as `cycles_per_write` or `bytes_per_object`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    /// The record field: `ops_per_sec` or a key of [`Record::extra`].
    pub key: &'static str,
    /// Unit label for the table's title line and the plot's y axis, e.g. "ops/s".
    pub label: &'static str,
    /// Whether more is better (throughput) or less (ticks, bytes).
    pub higher_is_better: bool,
    /// Whether the value is a time or a rate, which the host's state moves (module `host`),
    /// rather than a count such as bytes: `compare` checks the runs' round trips only then.
    pub timed: bool,
}

impl Metric {
    /// Median operations per second (all threads together).
    pub const OPS_PER_SEC: Metric = Metric { key: "ops_per_sec", label: "ops/s", higher_is_better: true, timed: true };

    /// Median transactions per second (all threads together): `ops_per_sec` of the
    /// transactional experiments.
    pub const TRANSACTIONS_PER_SEC: Metric =
        Metric { key: "ops_per_sec", label: "transactions/s", higher_is_better: true, timed: true };

    /// The record's value of this metric, or `None` if the record lacks a numeric one.
    pub fn value(&self, record: &Record) -> Option<f64> {
        if self.key == "ops_per_sec" {
            Some(record.ops_per_sec)
        } else {
            record.extra.get(self.key).and_then(|v| v.as_f64())
        }
    }
}

/// Ratio columns of the terminal table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratios {
    /// Add one column per x after the first: value at x / value at the first x (`2T/1T`).
    pub scaling: bool,
    /// Add a column: each row's value at the last x / this implementation's value there.
    pub versus: Option<&'static str>,
}

impl Ratios {
    /// No ratio columns.
    pub const NONE: Ratios = Ratios { scaling: false, versus: None };
}

/// The experiment registered under `name`, if any (not [`ALL`]).
pub fn by_name(name: &str) -> Option<&'static dyn Experiment> {
    REGISTRY.iter().copied().find(|e| e.name() == name)
}

/// The process-wide Ordo clock (calibrated on first use), or its configuration error as
/// an `InvalidInput` I/O error.
pub fn global_clock() -> io::Result<&'static std::sync::Arc<ordo::Ordo>> {
    ordo::try_global().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
}

/// The experiments a command-line name stands for: [`ALL`] is every one, in registry order.
pub fn select(name: &str) -> Vec<&'static dyn Experiment> {
    if name == ALL { REGISTRY.to_vec() } else { by_name(name).into_iter().collect() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn registry_names_are_unique_and_not_all() {
        let names: HashSet<_> = REGISTRY.iter().map(|e| e.name()).collect();
        assert_eq!(names.len(), REGISTRY.len());
        assert!(!names.contains(ALL));
        for e in REGISTRY {
            assert!(!e.description().is_empty(), "{} has no description", e.name());
        }
    }

    #[test]
    fn select_all_and_one() {
        assert_eq!(select(ALL).len(), REGISTRY.len());
        assert_eq!(select("counter").len(), 1);
        assert!(select("nope").is_empty());
    }
}
