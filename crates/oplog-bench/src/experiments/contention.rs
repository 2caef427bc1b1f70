//! `contention`: the cost of one write to a cache line that other cores write too (000 §3.1,
//! Figure 4), beside the same write to a line of one's own.
//!
//! Each of T pinned threads writes in a loop, and waits after each write until it has
//! completed, to one of:
//!
//! - `shared-line`: one `AtomicU64` all threads store to (a plain `mov` on x86-64);
//! - `shared-line-atomic`: the same line, written with `fetch_add` (`lock xadd`), the atomic
//!   increment that 000 §3.1 found "only about 1.5% longer than for a mov";
//! - `own-line`: a cache-padded `AtomicU64` per thread: the uncontended cost of the same
//!   store and wait, so `shared-line / own-line` is what contention adds.
//!
//! **Waiting for the write.** 000 §3.1 executes `cpuid` after each store. Here a
//! sequentially consistent fence follows each store (`mfence` on x86-64, `dmb ish` on
//! aarch64): it drains the store buffer, so the next instruction waits until the store has
//! obtained the line in exclusive state, which is the point of the `cpuid`. `cpuid` would
//! also serialize the pipeline, and under virtualization (this machine is a KVM guest) it
//! traps to the hypervisor, costing thousands of cycles that would swamp the coherence
//! cost. `fetch_add` needs no fence: a locked instruction already waits for the line.
//!
//! **Counting cycles.** Each worker reads the Ordo clock before and after its loop; a
//! record's `cycles_per_write` is the mean over threads of (ticks / writes), median over
//! repetitions, in the clock's ticks (`tick_unit`: on x86-64 TSC ticks, one per cycle at
//! the nominal frequency; see [`crate::spin`]); `ns_per_write` is the same in
//! nanoseconds. `ops_per_sec` counts writes of all threads per second.
//!
//! 000 Figure 4 grows from 182 cycles (2 writers) to 8182 (48 writers), about 160 cycles
//! per added writer: each writer waits for the line to visit every other writer. With two
//! cores this machine shows the first step; [`transfer_ticks`] extracts it as the cost of
//! one line transfer, which the `spinlock` experiment's model uses.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use crossbeam_utils::CachePadded;
use ordo::{Clock, Ordo};

use crate::experiments::{Experiment, Metric, Ratios, global_clock};
use crate::harness::{Run, Settings, Stop, Throughput, median};
use crate::output::{Record, Sink, round};
use crate::spin;

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
    timings: Box<[CachePadded<(AtomicU64, AtomicU64)>]>,
}

impl Lines {
    fn new(threads: usize) -> Self {
        let padded = || (0..threads).map(|_| CachePadded::new(AtomicU64::new(0))).collect();
        Self {
            shared: CachePadded::new(AtomicU64::new(0)),
            own: padded(),
            timings: (0..threads).map(|_| CachePadded::new((AtomicU64::new(0), AtomicU64::new(0)))).collect(),
        }
    }

    /// Mean over workers of ticks per write.
    fn ticks_per_write(&self) -> f64 {
        let per_thread: Vec<f64> = self
            .timings
            .iter()
            .map(|t| t.0.load(Ordering::Relaxed) as f64 / t.1.load(Ordering::Relaxed).max(1) as f64)
            .collect();
        per_thread.iter().sum::<f64>() / per_thread.len().max(1) as f64
    }
}

/// One measured point: throughput and the median of ticks per write over repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Writes per second, all threads.
    pub throughput: Throughput,
    /// Median over repetitions of the mean ticks per write.
    pub ticks_per_write: f64,
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
            lines.timings[thread].0.store(elapsed, Ordering::Relaxed);
            lines.timings[thread].1.store(writes, Ordering::Relaxed);
            writes
        },
        |lines, ops| {
            if target == Target::SharedLineAtomic {
                assert_eq!(lines.shared.load(Ordering::Relaxed), ops, "fetch_add lost increments");
            }
            ticks.push(lines.ticks_per_write());
        },
    );
    Measured { throughput, ticks_per_write: median(&ticks) }
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

/// The `contention` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Contention;

impl Experiment for Contention {
    fn name(&self) -> &'static str {
        "contention"
    }

    fn description(&self) -> &'static str {
        "clock ticks per write (store + fence, or fetch_add) to one shared cache line vs one line per writer (000 Figure 4)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IMPLS.iter().map(|t| t.id()).collect()
    }

    fn metric(&self) -> Metric {
        Metric { key: "cycles_per_write", label: "ticks per write (x86-64: TSC cycles)", higher_is_better: false }
    }

    fn ratios(&self) -> Ratios {
        Ratios { scaling: true, versus: Some(Target::OwnLine.id()) }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * IMPLS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let clock = global_clock()?;
        for &threads in &settings.threads {
            for target in IMPLS {
                sink.point(target.id(), threads);
                let run = settings.at(threads);
                let m = measure(target, clock, &run);
                sink.push(
                    Record::new(self.name(), target.id(), &run, &m.throughput)
                        .with("cycles_per_write", round(1, m.ticks_per_write))
                        .with("ns_per_write", round(1, spin::ticks_to_ns(clock, m.ticks_per_write)))
                        .with("tick_unit", spin::unit(clock)),
                )?;
            }
        }
        Ok(())
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
