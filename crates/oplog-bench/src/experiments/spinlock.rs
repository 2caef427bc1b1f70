//! `spinlock`: the collapse of non-scalable locks (001 Appendix A), measured on this
//! machine and predicted by the appendix's Markov model for 1..48 cores.
//!
//! Every thread loops: spin for `parallel_cycles` ticks outside the lock, then take the
//! lock, spin [`SERIAL_TICKS`] (400, 001 §A.2) inside it, increment a counter the lock
//! protects, release. Locks ([`locks`]): `ticket` (001 Figure A-1), `mcs` (a queue lock
//! whose waiters each spin on their own line) and `mutex` (`std::sync::Mutex`). After each
//! repetition the protected counter must equal the iterations the workers counted, so a
//! lock that fails to exclude fails the run. Records carry `parallel_cycles`,
//! `serial_cycles`, `tick_unit` and, once the one-thread point is measured, `speedup`.
//!
//! Two cores cannot show a collapse at 13 or 24 cores (001 Figures ). The model
//! ([`model`], equation A.1) stands in for the larger machine (DESIGN.md, "Evidence beyond
//! two cores"): the `model` annex and the `spinlock-model.svg` figure give its predicted
//! speedup of the ticket lock for 1..48 cores at each parallel-work setting, with `s` = the
//! serial section, `a` = parallel + serial work, and `c` = the cost of one line transfer
//! measured here by the `contention` experiment's method (shared-line minus own-line ticks
//! per write at two threads), or 160 cycles (000 §3.1's slope per writer) where fewer than
//! two CPUs are available or the measurement comes out below one tick (noise on a loaded
//! machine); the annex's title says which. The `speedup` annex puts the measured speedups at the thread
//! counts run beside the model's prediction for those counts.

use std::io;

use ordo::Ordo;
use serde_json::{Value, json};

use crate::experiments::impls::Impl;
use crate::experiments::{Experiment, XAxis, contention, global_clock};
use crate::harness::{Run, Settings, Stop, SweepPoint, Throughput};
use crate::output::plot::{Chart, Scale};
use crate::output::{Annex, Record, Series, Sink, round};
use crate::spin;

pub mod locks;
pub mod model;

use locks::{BenchLock, Guarded, McsLock, StdMutex, TicketLock};
use model::Model;

/// Length of the serial section in clock ticks (001 §A.2: 400 cycles).
pub const SERIAL_TICKS: u64 = 400;
/// Parallel work per iteration, in ticks: 400 and 3200 contend even on two cores; 12.5 K to
/// 200 K are 001 Figure A-2's settings.
pub const PARALLEL_TICKS: [u64; 5] = [400, 3_200, 12_500, 50_000, 200_000];
/// Parallel work per iteration with `--quick`.
pub const QUICK_PARALLEL_TICKS: [u64; 3] = [400, 12_500, 200_000];
/// Core counts the model predicts.
pub const MODEL_CORES: usize = 48;
/// Line transfer cost used when it cannot be measured: 000 §3.1's ~160 cycles per writer.
pub const TEXT_TRANSFER_CYCLES: f64 = 160.0;

/// One point of a lock's measurement (also `serial-sweep`'s): `parallel` ticks of work
/// outside the lock, then `serial` inside it, both spun on `clock`.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    /// The clock the work is spun on.
    pub clock: &'static Ordo,
    /// Ticks of work outside the lock per iteration.
    pub parallel: u64,
    /// Ticks of work inside the lock per iteration.
    pub serial: u64,
}

/// The locks measured, in table order (also `serial-sweep`'s).
pub const IMPLS: [Impl<Point>; 3] = [of::<TicketLock>(), of::<McsLock>(), of::<StdMutex>()];

/// The row of [`IMPLS`] for lock `L`: [`BenchLock::ID`], measured at one [`Point`] (the
/// protected counter verified after each repetition); monomorphised.
const fn of<L: BenchLock>() -> Impl<Point> {
    Impl::new(L::ID, measure::<L>)
}

fn measure<L: BenchLock>(run: &Run, Point { clock, parallel, serial }: Point) -> Throughput {
    run.throughput_checked(
        Guarded::<L>::default,
        |guarded: &Guarded<L>, _, stop: &Stop| {
            stop.run_batched(1, || {
                spin::spin(clock, parallel);
                guarded.increment(|| spin::spin(clock, serial));
            })
        },
        |guarded, ops| {
            let count = guarded.count();
            assert_eq!(count, ops, "lock `{}` let {} of {ops} increments collide", L::ID, ops - count);
        },
    )
}

/// The line-transfer cost `c` for the model and where it came from: measured by the
/// `contention` experiment's method, or 000 §3.1's 160 cycles per writer where there is no
/// second CPU or the measurement is below one tick (noise on a loaded machine).
pub fn transfer_cost(settings: &Settings, clock: &Ordo) -> (f64, String) {
    match contention::transfer_ticks(settings, clock) {
        Some(t) if t >= 1.0 => (t, "one line transfer, measured here".to_owned()),
        Some(t) => (TEXT_TRANSFER_CYCLES, format!("000 §3.1's slope: the measured {t:.1} is noise")),
        None => (TEXT_TRANSFER_CYCLES, "000 §3.1's slope: no second CPU here".to_owned()),
    }
}

/// The `spinlock` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spinlock;

/// Measured ops/s by (parallel ticks, threads, lock index).
type Measured = Vec<(u64, usize, usize, f64)>;

impl Spinlock {
    /// Measured speedup of lock `lock` at `parallel` and `threads` over one thread, if both
    /// points were measured.
    fn measured_speedup(measured: &Measured, parallel: u64, threads: usize, lock: usize) -> Option<f64> {
        let at = |t: usize| measured.iter().find(|m| (m.0, m.1, m.2) == (parallel, t, lock)).map(|m| m.3);
        Some(at(threads)? / at(1)?)
    }

    /// The `model` annex: predicted speedup for 1..=48 cores, one column per parallel
    /// setting.
    fn model_annex(parallels: &[u64], transfer: f64, source: &str) -> Annex {
        let columns: Vec<String> =
            std::iter::once("cores".to_owned()).chain(parallels.iter().map(|p| format!("parallel_{p}"))).collect();
        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut annex = Annex::new(
            "model",
            &format!(
                "ticket lock speedup predicted by 001 eq. (A.1), speedup = (n - w_n)/(1 - w_1): s = {SERIAL_TICKS}, \
                 a = parallel + s, c = {transfer:.0} ticks ({source})"
            ),
            &columns,
        );
        let models: Vec<Model> =
            parallels.iter().map(|&p| Model::for_loop(p as f64, SERIAL_TICKS as f64, transfer)).collect();
        for n in 1..=MODEL_CORES {
            let mut row = vec![json!(n)];
            row.extend(models.iter().map(|m| json!(round(2, m.speedup(n)))));
            annex.row(row);
        }
        annex
    }

    /// The `speedup` annex: measured speedups beside the model's, at the thread counts run.
    fn speedup_annex(parallels: &[u64], threads: &[usize], measured: &Measured, transfer: f64) -> Annex {
        let mut columns = vec!["parallel_cycles", "threads"];
        columns.extend(IMPLS.iter().map(|e| e.id));
        columns.push("model");
        let mut annex =
            Annex::new("speedup", "measured speedup over one thread beside the model's prediction", &columns);
        for &p in parallels {
            let model = Model::for_loop(p as f64, SERIAL_TICKS as f64, transfer);
            for &t in threads {
                let mut row = vec![json!(p), json!(t)];
                row.extend(
                    (0..IMPLS.len())
                        .map(|i| Self::measured_speedup(measured, p, t, i).map_or(Value::Null, |s| json!(round(2, s)))),
                );
                row.push(json!(round(2, model.speedup(t))));
                annex.row(row);
            }
        }
        annex
    }

    /// The series of the `model` figure: each setting's prediction, and the ticket lock's
    /// measured speedups.
    fn figure_series(parallels: &[u64], threads: &[usize], measured: &Measured, transfer: f64) -> Vec<Series> {
        let mut series = Vec::new();
        for &p in parallels {
            let model = Model::for_loop(p as f64, SERIAL_TICKS as f64, transfer);
            let points = (1..=MODEL_CORES).map(|n| (n as f64, model.speedup(n))).collect();
            series.push(Series { label: format!("model, parallel {p}"), points });
        }
        for &p in parallels {
            let points: Vec<(f64, f64)> =
                threads.iter().filter_map(|&t| Some((t as f64, Self::measured_speedup(measured, p, t, 0)?))).collect();
            if !points.is_empty() {
                series.push(Series { label: format!("ticket measured, parallel {p}"), points });
            }
        }
        series
    }
}

impl Experiment for Spinlock {
    fn name(&self) -> &'static str {
        "spinlock"
    }

    fn description(&self) -> &'static str {
        "ticket, MCS and std mutex with a 400-tick serial section and varying parallel work, beside 001 Appendix A's model"
    }

    fn ids(&self) -> Vec<&'static str> {
        IMPLS.iter().map(|e| e.id).collect()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: "parallel_cycles", label: "parallel work per iteration (clock ticks)" }
    }

    fn x_scale(&self) -> Scale {
        Scale::Log
    }

    fn log_y(&self) -> bool {
        true
    }

    fn sweep_points(&self) -> Option<Vec<f64>> {
        Some(PARALLEL_TICKS.iter().map(|&x| x.value()).collect())
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * settings.sweep(&PARALLEL_TICKS, &QUICK_PARALLEL_TICKS).len() * IMPLS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let clock: &'static Ordo = global_clock()?;
        let parallels = settings.sweep(&PARALLEL_TICKS, &QUICK_PARALLEL_TICKS);
        let mut measured: Measured = Vec::new();
        for &threads in &settings.threads {
            for &parallel in &parallels {
                for (i, entry) in IMPLS.iter().enumerate() {
                    sink.point(entry.id, threads);
                    let run = settings.at(threads);
                    let t = entry.measure(&run, Point { clock, parallel, serial: SERIAL_TICKS });
                    measured.push((parallel, threads, i, t.median));
                    let mut record = Record::new(self.name(), entry.id, &run, &t)
                        .with("parallel_cycles", parallel)
                        .with("serial_cycles", SERIAL_TICKS)
                        .with("tick_unit", spin::unit(clock));
                    if let Some(s) = Self::measured_speedup(&measured, parallel, threads, i) {
                        record = record.with("speedup", round(2, s));
                    }
                    sink.push(record)?;
                }
            }
        }
        let (transfer, source) = transfer_cost(settings, clock);
        let source = source.as_str();
        sink.annex(Self::model_annex(&parallels, transfer, source))?;
        sink.annex(Self::speedup_annex(&parallels, &settings.threads, &measured, transfer))?;
        let chart = Chart {
            title: "spinlock: ticket lock speedup, 001 Appendix A model (1..48 cores) and measured",
            x_label: "cores",
            y_label: "speedup over one core",
            x_scale: Scale::Linear,
            log_y: false,
        };
        sink.figure("model", &chart, &Self::figure_series(&parallels, &settings.threads, &measured, transfer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::impls::smoke_test;

    #[test]
    fn every_lock_runs_and_excludes_under_contention() {
        // A point's clock is `'static` (a run's is the global one): leak this test's.
        let clock = Box::leak(Box::new(Ordo::monotonic()));
        smoke_test(&IMPLS, Point { clock, parallel: 100, serial: SERIAL_TICKS });
    }

    #[test]
    fn annexes_hold_the_model_and_the_measured_speedups() {
        let measured: Measured = vec![(400, 1, 0, 100.0), (400, 2, 0, 150.0), (400, 1, 1, 100.0)];
        let model = Spinlock::model_annex(&[400, 12_500], 160.0, "test");
        assert_eq!(model.rows.len(), MODEL_CORES);
        assert_eq!(model.columns, ["cores", "parallel_400", "parallel_12500"]);
        assert_eq!(model.rows[0], vec![json!(1), json!(1.0), json!(1.0)]);
        let speedup = Spinlock::speedup_annex(&[400], &[1, 2], &measured, 160.0);
        assert_eq!(speedup.columns, ["parallel_cycles", "threads", "ticket", "mcs", "mutex", "model"]);
        assert_eq!(speedup.rows[1][2], json!(1.5));
        assert_eq!(speedup.rows[1][3], Value::Null, "mcs at 2 threads was not measured");
        let predicted = Model::for_loop(400.0, 400.0, 160.0).speedup(2);
        assert_eq!(speedup.rows[1][5], json!(round(2, predicted)));
        let series = Spinlock::figure_series(&[400], &[1, 2], &measured, 160.0);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].points.len(), MODEL_CORES);
        assert_eq!(series[1].points, vec![(1.0, 1.0), (2.0, 1.5)]);
    }
}
