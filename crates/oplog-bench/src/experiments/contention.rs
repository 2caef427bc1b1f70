//! `contention`: what sharing a cache line costs, by how it is shared, and where
//! conflict-free accesses stop scaling (000 §3.1, Figure 4; 002 §3.2–3.3, Figures 3-3 to
//! 3-5).
//!
//! **Writes in a loop (000 Figure 4).** Each of T pinned threads writes in a loop, and
//! waits after each write until it has completed, to one of:
//!
//! - `shared-line`: one `AtomicU64` all threads store to (a plain `mov` on x86-64);
//! - `shared-line-atomic`: the same line, written with `fetch_add` (`lock xadd`), the atomic
//!   increment that 000 §3.1 found "only about 1.5% longer than for a mov";
//! - `own-line`: a cache-padded `AtomicU64` per thread: the uncontended cost of the same
//!   store and wait, so `shared-line / own-line` is what contention adds.
//!
//! **One access at a time, by sharing (002 Figures 3-3 and 3-4).** [`sharing`] times single
//! accesses that every thread makes at once, round after round: `read-read` (one line
//! every thread reads), `own-write` (a line of each thread's own), `write-write` (one line
//! every thread writes) and `read-write` (one line thread 0 writes and the other threads
//! then read; from two threads). The first two are conflict-free and should cost the same
//! at every thread count; the last two conflict and grow with it.
//!
//! **Capacity (002 Figure 3-5).** [`capacity`] walks regions of 4 KiB to 64 MiB (`--quick`:
//! 4 KiB, 256 KiB, 16 MiB), one shared region read by every thread (`region-read`) and one
//! region per thread read and written (`region-write`), at every thread count: the
//! `capacity` annex and the `contention-capacity.svg` figure (x: region size, one line per
//! kind and thread count).
//!
//! **Waiting for the write.** 000 §3.1 executes `cpuid` after each store. Here a
//! sequentially consistent fence follows each store (`mfence` on x86-64, `dmb ish` on
//! aarch64): it drains the store buffer, so the next instruction waits until the store has
//! obtained the line in exclusive state, which is the point of the `cpuid`. `cpuid` would
//! also serialize the pipeline, and under virtualization (this machine is a KVM guest) it
//! traps to the hypervisor, costing thousands of cycles that would swamp the coherence
//! cost. `fetch_add` needs no fence: a locked instruction already waits for the line.
//!
//! **Counting cycles.** Costs are in the Ordo clock's ticks (`tick_unit`: on x86-64 TSC
//! ticks, one per cycle at the nominal frequency; see [`crate::spin`]), with the same in
//! nanoseconds beside them. Every record's `cycles_per_access` is what the table and the
//! plot show: for the loop ids the mean over threads of (ticks / writes), median over
//! repetitions (also kept as `cycles_per_write`, the field's name before the sharing ids);
//! for the sharing ids the median single access net of the clock reading's own cost
//! ([`sharing`]), median over repetitions, with `p99_cycles` and `timer_ticks`.
//! `min_cycles_per_access` and `max_cycles_per_access` are the repetitions' extremes (the
//! noise band of `oplog-bench compare`). `ops_per_sec` counts accesses of all threads per
//! second (for the sharing ids, the pace of the rounds).
//!
//! 000 Figure 4 grows from 182 cycles (2 writers) to 8182 (48 writers), about 160 cycles
//! per added writer: each writer waits for the line to visit every other writer. With two
//! cores this machine shows the first step; [`transfer_ticks`] extracts it as the cost of
//! one line transfer, which the `spinlock` experiment's model and the timestamp
//! experiments' crossover models use.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use crossbeam_utils::CachePadded;
use ordo::{Clock, Ordo};

use serde_json::json;

use crate::experiments::{Experiment, Metric, Ratios, global_clock};
use crate::harness::{Run, Settings, Stop, Throughput, median};
use crate::output::plot::{Chart, Scale};
use crate::output::{Annex, Record, Series, Sink, round};
use crate::spin;

pub mod capacity;
pub mod sharing;

use sharing::SHARINGS;

/// Writes between two checks of the stop flag.
const BATCH: u64 = 64;

/// The write targets measured, in table order.
pub const IMPLS: [Target; 3] = [Target::SharedLine, Target::SharedLineAtomic, Target::OwnLine];

/// Where and how a worker writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A store plus fence to the one line all threads write.
    SharedLine,
    /// A `fetch_add` to the one line all threads write.
    SharedLineAtomic,
    /// A store plus fence to the thread's own padded line.
    OwnLine,
}

impl Target {
    /// Stable id: the `impl` field of records.
    pub fn id(self) -> &'static str {
        match self {
            Target::SharedLine => "shared-line",
            Target::SharedLineAtomic => "shared-line-atomic",
            Target::OwnLine => "own-line",
        }
    }
}

/// The lines of one repetition and what each worker measured.
struct Lines {
    shared: CachePadded<AtomicU64>,
    own: Box<[CachePadded<AtomicU64>]>,
    /// Per worker: (ticks, writes) of its loop.
    timings: Timings,
}

impl Lines {
    fn new(threads: usize) -> Self {
        let padded = || (0..threads).map(|_| CachePadded::new(AtomicU64::new(0))).collect();
        Self { shared: CachePadded::new(AtomicU64::new(0)), own: padded(), timings: Timings::new(threads) }
    }

    /// Mean over workers of ticks per write.
    fn ticks_per_write(&self) -> f64 {
        self.timings.mean()
    }
}

/// Each worker's ticks and accesses in one repetition, on a line of its own.
pub(crate) struct Timings(Box<[CachePadded<(AtomicU64, AtomicU64)>]>);

impl Timings {
    pub(crate) fn new(threads: usize) -> Self {
        Self((0..threads).map(|_| CachePadded::new((AtomicU64::new(0), AtomicU64::new(0)))).collect())
    }

    /// Records worker `thread`'s `ticks` over `accesses`.
    pub(crate) fn set(&self, thread: usize, ticks: u64, accesses: u64) {
        self.0[thread].0.store(ticks, Ordering::Relaxed);
        self.0[thread].1.store(accesses, Ordering::Relaxed);
    }

    /// Mean over workers of ticks per access.
    pub(crate) fn mean(&self) -> f64 {
        let per_thread =
            self.0.iter().map(|t| t.0.load(Ordering::Relaxed) as f64 / t.1.load(Ordering::Relaxed).max(1) as f64);
        per_thread.sum::<f64>() / self.0.len().max(1) as f64
    }
}

/// One measured point: throughput and the median of ticks per write over repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Writes per second, all threads.
    pub throughput: Throughput,
    /// Median over repetitions of the mean ticks per write.
    pub ticks_per_write: f64,
    /// Per repetition, the mean ticks per write.
    pub per_rep: Vec<f64>,
}

/// Measures `target` at one point.
pub fn measure(target: Target, clock: &Ordo, run: &Run) -> Measured {
    let mut ticks = Vec::new();
    let throughput = run.throughput_checked(
        || Lines::new(run.threads),
        |lines: &Lines, thread, stop: &Stop| {
            let line = match target {
                Target::SharedLine | Target::SharedLineAtomic => &*lines.shared,
                Target::OwnLine => &*lines.own[thread],
            };
            let start = clock.get_time();
            let mut value = 0u64;
            let writes = match target {
                Target::SharedLineAtomic => stop.run_batched(BATCH, || {
                    line.fetch_add(1, Ordering::Relaxed);
                }),
                Target::SharedLine | Target::OwnLine => stop.run_batched(BATCH, || {
                    value += 1;
                    line.store(value, Ordering::Relaxed);
                    fence(Ordering::SeqCst);
                }),
            };
            let elapsed = clock.get_time().wrapping_sub(start);
            lines.timings.set(thread, elapsed, writes);
            writes
        },
        |lines, ops| {
            if target == Target::SharedLineAtomic {
                assert_eq!(lines.shared.load(Ordering::Relaxed), ops, "fetch_add lost increments");
            }
            ticks.push(lines.ticks_per_write());
        },
    );
    Measured { throughput, ticks_per_write: median(&ticks), per_rep: ticks }
}

/// The cost of moving a written line between two cores, in clock ticks: `shared-line`
/// minus `own-line` ticks per write at two threads, or `None` when fewer than two CPUs are
/// available to pin to.
pub fn transfer_ticks(settings: &Settings, clock: &Ordo) -> Option<f64> {
    if settings.placement.cpus().is_none_or(|cpus| cpus.len() < 2) {
        return None;
    }
    let run = settings.at(2);
    let shared = measure(Target::SharedLine, clock, &run).ticks_per_write;
    let own = measure(Target::OwnLine, clock, &run).ticks_per_write;
    Some((shared - own).max(0.0))
}

/// The record field every id carries and the table shows.
const METRIC_KEY: &str = "cycles_per_access";

/// `record` with the cost of one access (`ticks`, median over the repetitions `per_rep`)
/// in ticks and ns, its extremes over repetitions, and the tick unit.
fn with_cost(record: Record, clock: &Ordo, ticks: f64, per_rep: &[f64]) -> Record {
    let extreme = |f: fn(f64, f64) -> f64, start: f64| round(1, per_rep.iter().copied().fold(start, f));
    record
        .with(METRIC_KEY, round(1, ticks))
        .with("ns_per_access", round(1, spin::ticks_to_ns(clock, ticks)))
        .with("min_cycles_per_access", extreme(f64::min, f64::INFINITY))
        .with("max_cycles_per_access", extreme(f64::max, 0.0))
        .with("tick_unit", spin::unit(clock))
}

/// The `contention` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Contention;

impl Contention {
    /// Measures the `capacity` annex and its figure at every thread count and region size.
    fn capacity(&self, settings: &Settings, clock: &Ordo, sink: &mut Sink) -> io::Result<()> {
        let sizes = settings.sweep(&capacity::REGION_BYTES, &capacity::QUICK_REGION_BYTES);
        let mut annex = Annex::new(
            "capacity",
            &format!(
                "capacity (002 Figure 3-5): ticks per line of a random walk through one shared region read by every \
                 thread (region-read) or a region per thread, written (region-write); tick unit {}",
                spin::unit(clock)
            ),
            &["threads", "access", "region_bytes", "cycles_per_access", "ns_per_access", "accesses_per_sec"],
        );
        let mut series: Vec<Series> = Vec::new();
        for &threads in &settings.threads {
            for access in capacity::ACCESSES {
                let mut points = Vec::new();
                for &bytes in &sizes {
                    sink.point(&format!("{} {}", access.id(), size_label(bytes)), threads);
                    let run = settings.at(threads);
                    let m = capacity::measure(access, bytes, clock, &run);
                    annex.row(vec![
                        json!(threads),
                        json!(access.id()),
                        json!(bytes),
                        json!(round(1, m.ticks_per_access)),
                        json!(round(1, spin::ticks_to_ns(clock, m.ticks_per_access))),
                        json!(m.throughput.median.round() as u64),
                    ]);
                    points.push(((bytes >> 10) as f64, m.ticks_per_access));
                }
                series.push(Series { label: format!("{} ({threads}T)", access.id()), points });
            }
        }
        sink.annex(annex)?;
        let chart = Chart {
            title: "contention: ticks per access against the region each thread walks (002 Figure 3-5)",
            x_label: "region size (KiB)",
            y_label: "ticks per access (x86-64: TSC cycles)",
            x_scale: Scale::Log,
            log_y: true,
        };
        sink.figure("capacity", &chart, &series)
    }
}

/// `bytes` as `4 KiB` or `16 MiB`, for progress messages.
fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 { format!("{} MiB", bytes >> 20) } else { format!("{} KiB", bytes >> 10) }
}

impl Experiment for Contention {
    fn name(&self) -> &'static str {
        "contention"
    }

    fn description(&self) -> &'static str {
        "clock ticks per access to one cache line: writes in a loop (000 Figure 4), read/read, own write, write/write, \
         read/write (002 Figures 3-3, 3-4); capacity annex (002 Figure 3-5)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IMPLS.iter().map(|t| t.id()).chain(SHARINGS.iter().map(|s| s.id())).collect()
    }

    fn metric(&self) -> Metric {
        Metric { key: METRIC_KEY, label: "ticks per access (x86-64: TSC cycles)", higher_is_better: false, timed: true }
    }

    fn ratios(&self) -> Ratios {
        Ratios { scaling: true, versus: Some(Target::OwnLine.id()) }
    }

    fn points(&self, settings: &Settings) -> u64 {
        let sharing: usize = settings.threads.iter().map(|&t| SHARINGS.iter().filter(|s| s.runs_at(t)).count()).sum();
        (settings.threads.len() * IMPLS.len() + sharing) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let clock = global_clock()?;
        for &threads in &settings.threads {
            for target in IMPLS {
                sink.point(target.id(), threads);
                let run = settings.at(threads);
                let m = measure(target, clock, &run);
                let record = Record::new(self.name(), target.id(), &run, &m.throughput)
                    .with("cycles_per_write", round(1, m.ticks_per_write))
                    .with("ns_per_write", round(1, spin::ticks_to_ns(clock, m.ticks_per_write)));
                sink.push(with_cost(record, clock, m.ticks_per_write, &m.per_rep))?;
            }
            for sharing in SHARINGS.into_iter().filter(|s| s.runs_at(threads)) {
                sink.point(sharing.id(), threads);
                let run = settings.at(threads);
                let l = sharing::measure(sharing, clock, &run);
                let record = Record::new(self.name(), sharing.id(), &run, &l.throughput)
                    .with("p99_cycles", round(1, l.p99))
                    .with("timer_ticks", round(1, l.timer));
                sink.push(with_cost(record, clock, l.median, &l.medians))?;
            }
        }
        self.capacity(settings, clock, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    #[test]
    fn every_target_writes_and_times_its_writes() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 2, placement: &placement };
        let clock = Ordo::monotonic();
        for target in IMPLS {
            let m = measure(target, &clock, &run);
            assert!(m.throughput.median > 0.0, "{}", target.id());
            // A write and its wait take some time, and less than the whole run.
            assert!(m.ticks_per_write > 0.0 && m.ticks_per_write < 5e6, "{}: {}", target.id(), m.ticks_per_write);
        }
    }

    #[test]
    fn ids_are_stable() {
        let ids: Vec<_> = IMPLS.iter().map(|t| t.id()).collect();
        assert_eq!(ids, ["shared-line", "shared-line-atomic", "own-line"]);
    }
}
