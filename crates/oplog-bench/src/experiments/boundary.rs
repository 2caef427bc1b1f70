//! `boundary`: how much Ordo-using workloads depend on the uncertainty window, with the
//! window pinned at 1/8× to 8× the measured one (003 §6.7, Figure 16); and the clock that
//! makes an OpLog domain wait the window out after every ordered update (003 §6.3, the
//! OplogORDO of Figure 10), which `fork` and `notify` use for their commit-wait ids.
//!
//! **Waiting out the window.** An ordered OpLog domain waits out its clock's window after
//! each update ([`oplog::Domain::commit_wait`]) where the clock's raw order does not respect
//! communication; on every machine measured here it does, so the default domains take raw
//! stamps (003's Oplog). The `-commit-wait` ids force the wait ([`oplog::Config::commit_wait`],
//! [`super::impls::commit_wait_domain`]).
//!
//! **The sweep.** The base is the process-wide clock's boundary: measured by calibration,
//! or pinned by `ORDO_BOUNDARY` (then that value), or 1 tick where it is 0 (the OS clock,
//! which the kernel keeps synchronized, has no window to scale). For each scale `s` of
//! [`SCALES`] (`--quick`: [`QUICK_SCALES`]) a fresh clock of the same source is built with
//! its boundary pinned at `s` × base (`ordo::Settings` with `boundary` set, as
//! `ORDO_BOUNDARY` would, without touching the process-wide clock), and each workload runs
//! on it:
//!
//! - `tl2-ordo-set`, `tl2-ordo-bank`: TL2 on that clock (`ordo_stm::Stm<Ordo>`: a start at
//!   `get_time`, a commit stamp at `new_time(start)`, which waits out the window, and an
//!   abort on every version within the window of the start) running the `stm`
//!   experiment's `set` (hash set, 20 % updates: the shape of 003 Figure 16's 98 %-read
//!   hash table, with more writes) and `bank` (the contended mix) workloads
//!   ([`super::stm::workload`]); records carry `abort_rate` and `uncertain_abort_rate`;
//! - `fork-commit-wait`: the `fork` experiment's ordered OpLog rmap on a domain that waits
//!   out that clock's window after each of a fork's 8 updates ([`fork::measure_commit_wait`]).
//!
//! The table and the plot show throughput at each scale over its own throughput at 1×
//! (`normalized`, Figure 16's y axis); records also carry `ops_per_sec`, `boundary_ticks`,
//! `boundary_ns` and `base_boundary_ticks`. The `spread` annex gives per id and thread count
//! the lowest and highest normalized throughput and abort rate over the sweep (003 found
//! RLU within ±3 %); the `aborts` figure plots the TL2 abort rates against the scale.
//! Every repetition verifies its structure (the `stm` workloads' checks, the rmap's
//! mappings).

use std::io;
use std::sync::Arc;

use ordo::settings::{MAX_BOUNDARY, Settings as OrdoSettings, SourceChoice};
use ordo::{Basis, Clock, Ordo, Source};
use ordo_stm::Stats;
use serde_json::json;

use super::fork;
use super::stm::workload::{Points, Workload};
use super::stm::{self, Measured};
use crate::experiments::{Experiment, Metric, XAxis, global_clock};
use crate::harness::{Run, Settings};
use crate::output::plot::{Chart, Scale};
use crate::output::{Annex, Record, Series, Sink, round};

/// Scales of the measured boundary swept (003 Figure 16: 1/8× to 8×).
pub const SCALES: [f64; 7] = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0];

/// Scales swept with `--quick`.
pub const QUICK_SCALES: [f64; 3] = [0.125, 1.0, 8.0];

/// The workloads, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// TL2 on Ordo running the `stm` experiment's `set` workload.
    Tl2Set,
    /// TL2 on Ordo running the `stm` experiment's `bank` workload.
    Tl2Bank,
    /// `fork` on the ordered OpLog rmap waiting out the window.
    ForkCommitWait,
}

/// The workloads measured, in table order.
pub const SUBJECTS: [Subject; 3] = [Subject::Tl2Set, Subject::Tl2Bank, Subject::ForkCommitWait];

impl Subject {
    /// Stable id: the `impl` field of records.
    pub fn id(self) -> &'static str {
        match self {
            Subject::Tl2Set => "tl2-ordo-set",
            Subject::Tl2Bank => "tl2-ordo-bank",
            Subject::ForkCommitWait => "fork-commit-wait",
        }
    }

    /// The `stm` workload a TL2 subject runs.
    fn tl2(self) -> Option<Workload> {
        match self {
            Subject::Tl2Set => Some(Workload::Set),
            Subject::Tl2Bank => Some(Workload::Bank),
            Subject::ForkCommitWait => None,
        }
    }
}

/// Measures `subject` on `clock` at one point.
pub fn measure(subject: Subject, run: &Run, clock: &Arc<Ordo>) -> Measured {
    match subject.tl2() {
        // Set and bank need no kmeans points.
        Some(workload) => stm::measure_tl2(run, workload, &Points::empty(), clock.as_ref()),
        None => Measured { throughput: fork::measure_commit_wait(run, None, clock), stats: Stats::default() },
    }
}

/// The boundary the sweep scales, and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Base {
    /// Ticks of the process-wide clock's window (1 where that is 0).
    pub ticks: u64,
    /// How it was obtained, for the annex's title.
    pub source: String,
}

impl Base {
    /// The base of the sweep for the process-wide clock `global`.
    pub fn of(global: &Ordo) -> Base {
        let source = match global.basis() {
            Basis::Measured(_) => "measured by calibration",
            Basis::Pinned => "pinned by ORDO_BOUNDARY",
            Basis::OsClock => "the OS clock's",
        };
        match global.boundary() {
            0 => Base { ticks: 1, source: format!("1 tick: the {source} boundary is 0") },
            b => Base { ticks: b, source: source.to_owned() },
        }
    }

    /// The boundary at `scale`, at least 0 and at most `ordo`'s limit.
    pub fn scaled(&self, scale: f64) -> u64 {
        ((self.ticks as f64 * scale).round() as u64).min(MAX_BOUNDARY)
    }
}

/// A clock of `global`'s source with its boundary pinned at `ticks` (as `ORDO_BOUNDARY`
/// would pin the process-wide one).
pub fn pinned(global: &Ordo, ticks: u64) -> Ordo {
    let source = match global.source() {
        Source::Hardware => SourceChoice::Hardware,
        Source::Monotonic => SourceChoice::Monotonic,
    };
    Ordo::from_settings(&OrdoSettings { source, boundary: Some(ticks.min(MAX_BOUNDARY)), ..OrdoSettings::default() })
}

/// The `boundary` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct BoundaryExperiment;

/// The field of records holding the scale (the x axis).
const KEY: &str = "boundary_scale";

/// One measured point, kept for the annex and the figure.
struct Point {
    subject: Subject,
    threads: usize,
    scale: f64,
    normalized: f64,
    stats: Stats,
}

impl BoundaryExperiment {
    /// The `spread` annex: per id and thread count, the extremes over the sweep.
    fn spread_annex(points: &[Point], base: &Base, settings: &Settings) -> Annex {
        let mut annex = Annex::new(
            "spread",
            &format!(
                "spread over the sweep: normalized throughput (1 = at the base boundary, {} ticks, {}) and TL2 \
                 abort rate, lowest and highest (003 Figure 16: RLU within +-3 %)",
                base.ticks, base.source
            ),
            &["threads", "impl", "lowest", "highest", "abort_rate_lowest", "abort_rate_highest"],
        );
        for &threads in &settings.threads {
            for subject in SUBJECTS {
                let of: Vec<&Point> = points.iter().filter(|p| p.subject == subject && p.threads == threads).collect();
                if of.is_empty() {
                    continue;
                }
                let extreme = |f: &dyn Fn(&Point) -> f64, min: bool| {
                    let values = of.iter().map(|p| f(p));
                    let v = if min { values.fold(f64::INFINITY, f64::min) } else { values.fold(0.0, f64::max) };
                    json!(round(4, v))
                };
                let aborts = |p: &Point| p.stats.abort_rate();
                let tl2 = subject.tl2().is_some();
                annex.row(vec![
                    json!(threads),
                    json!(subject.id()),
                    extreme(&|p| p.normalized, true),
                    extreme(&|p| p.normalized, false),
                    if tl2 { extreme(&aborts, true) } else { json!(null) },
                    if tl2 { extreme(&aborts, false) } else { json!(null) },
                ]);
            }
        }
        annex
    }

    /// The `aborts` figure's series: each TL2 id's abort rate against the scale, per
    /// thread count.
    fn abort_series(points: &[Point], settings: &Settings) -> Vec<Series> {
        let mut series = Vec::new();
        for &threads in &settings.threads {
            for subject in SUBJECTS.into_iter().filter(|s| s.tl2().is_some()) {
                let mut pts: Vec<(f64, f64)> = points
                    .iter()
                    .filter(|p| p.subject == subject && p.threads == threads)
                    .map(|p| (p.scale, p.stats.abort_rate()))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                if !pts.is_empty() {
                    series.push(Series { label: format!("{} ({threads}T)", subject.id()), points: pts });
                }
            }
        }
        series
    }
}

impl Experiment for BoundaryExperiment {
    fn name(&self) -> &'static str {
        "boundary"
    }

    fn description(&self) -> &'static str {
        "Ordo workloads' throughput with the boundary pinned at 1/8x..8x the measured one, over 1x (003 Figure 16)"
    }

    fn ids(&self) -> Vec<&'static str> {
        SUBJECTS.iter().map(|s| s.id()).collect()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: KEY, label: "boundary / measured boundary" }
    }

    fn x_scale(&self) -> Scale {
        Scale::Log
    }

    fn metric(&self) -> Metric {
        Metric { key: "normalized", label: "throughput / throughput at 1x", higher_is_better: true, timed: true }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * SUBJECTS.len() * settings.sweep(&SCALES, &QUICK_SCALES).len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let global = global_clock()?;
        let base = Base::of(global);
        let scales = settings.sweep(&SCALES, &QUICK_SCALES);
        // The base first: every other scale is normalized by it.
        let order: Vec<f64> = std::iter::once(1.0).chain(scales.iter().copied().filter(|&s| s != 1.0)).collect();
        let clocks: Vec<(f64, Arc<Ordo>)> =
            order.iter().map(|&s| (s, Arc::new(pinned(global, base.scaled(s))))).collect();
        let mut points = Vec::new();
        for &threads in &settings.threads {
            for subject in SUBJECTS {
                let mut at_base = None;
                for (scale, clock) in &clocks {
                    sink.point(&format!("{} x{scale}", subject.id()), threads);
                    let run = settings.at(threads);
                    let m = measure(subject, &run, clock);
                    let base_ops = *at_base.get_or_insert(m.throughput.median);
                    let normalized = m.throughput.median / base_ops;
                    let mut record = Record::new(self.name(), subject.id(), &run, &m.throughput)
                        .with(KEY, *scale)
                        .with("normalized", round(4, normalized))
                        .with("boundary_ticks", clock.boundary())
                        .with("boundary_ns", round(1, clock.boundary_ns()))
                        .with("base_boundary_ticks", base.ticks);
                    if subject.tl2().is_some() {
                        let attempts = (m.stats.commits + m.stats.aborts).max(1) as f64;
                        record = record
                            .with("abort_rate", round(4, m.stats.abort_rate()))
                            .with("uncertain_abort_rate", round(4, m.stats.uncertain_aborts as f64 / attempts));
                    }
                    sink.push(record)?;
                    points.push(Point { subject, threads, scale: *scale, normalized, stats: m.stats });
                }
            }
        }
        sink.annex(Self::spread_annex(&points, &base, settings))?;
        let chart = Chart {
            title: "boundary: TL2 abort rate against the Ordo boundary (x the measured one)",
            x_label: "boundary / measured boundary",
            y_label: "aborted attempts per attempt",
            x_scale: Scale::Log,
            log_y: false,
        };
        sink.figure("aborts", &chart, &Self::abort_series(&points, settings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use oplog::{Ordered, Update};
    use std::time::Duration;

    struct Push(u64);
    impl Update for Push {
        type Target = Vec<u64>;
        fn exec(self, v: &mut Vec<u64>) {
            v.push(self.0);
        }
    }

    #[test]
    fn the_commit_wait_domain_waits_even_on_a_causal_clock() {
        let causal: Arc<dyn Clock> = Arc::new(ordo::LogicalClock::new());
        assert!(causal.raw_order_is_causal());
        let domain = crate::experiments::impls::commit_wait_domain::<Ordered<Push>>(causal);
        assert!(domain.commit_wait());
        let log = oplog::OpLog::with_domain(&domain, Vec::new());
        (0..100).for_each(|i| log.update(Push(i)));
        assert_eq!(log.read(|v| v.clone()), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn the_base_scales_and_a_zero_window_becomes_one_tick() {
        let base = Base::of(&Ordo::monotonic());
        assert_eq!(base.ticks, 1);
        assert!(base.source.contains("is 0"), "{}", base.source);
        let b = Base { ticks: 120, source: String::new() };
        assert_eq!(b.scaled(0.125), 15);
        assert_eq!(b.scaled(8.0), 960);
        assert_eq!(Base { ticks: MAX_BOUNDARY, source: String::new() }.scaled(8.0), MAX_BOUNDARY);
        let clock = pinned(&Ordo::monotonic(), 37);
        assert_eq!((clock.boundary(), clock.source()), (37, Source::Monotonic));
    }

    #[test]
    fn every_subject_runs_and_verifies_on_a_pinned_clock() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        let clock = Arc::new(pinned(&Ordo::monotonic(), 50));
        for subject in SUBJECTS {
            let m = measure(subject, &run, &clock);
            assert!(m.throughput.median > 0.0, "{}", subject.id());
            if subject.tl2().is_some() {
                assert!(m.stats.commits > 0, "{}: {:?}", subject.id(), m.stats);
            }
        }
    }
}
