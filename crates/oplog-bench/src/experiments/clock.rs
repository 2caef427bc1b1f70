//! `clock`: the cost of timestamps (003 Figure 8b) and the calibration matrix (003 Figure 9).
//!
//! Every thread takes timestamps in a loop, from one of:
//!
//! - `get_time`: the process-wide Ordo clock's raw reading (`rdtscp` here), which touches no
//!   shared memory;
//! - `new_time`: Ordo's `new_time(previous)`, a timestamp certainly after the previous one on
//!   every core, so each waits out the uncertainty window ("O" in 003 Figure 8b);
//! - `logical`: one shared atomic counter (`fetch_add`), the clock Ordo replaces ("A").
//!
//! Records carry `ops_per_sec` (timestamps per second, all threads) and
//! `per_thread_ops_per_sec`. Two annexes describe the clock: `calibration` (source, boundary
//! in ticks and nanoseconds, smallest offset, whether raw order respects communication) and
//! `offsets`, the signed minimum offset for every ordered pair of CPUs (row = the CPU that
//! published its clock, column = the CPU that read it), in ticks.

use std::io;
use std::sync::Arc;

use ordo::{Clock, LogicalClock, Ordo};
use serde_json::{Value, json};

use crate::experiments::{Experiment, Ratios, global_clock};
use crate::harness::{Run, Settings, Stop, Throughput};
use crate::output::verdict::Roles;
use crate::output::{Annex, Record, Sink, round};

/// Timestamps between two checks of the stop flag.
const BATCH: u64 = 64;

/// The timestamp sources measured, in table order.
pub const IMPLS: [&str; 3] = ["get_time", "new_time", "logical"];

/// The `clock` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClockExperiment;

impl ClockExperiment {
    fn measure(id: &str, ordo: &Arc<Ordo>, run: &Run) -> Throughput {
        match id {
            "get_time" => run.throughput(
                || ordo.clone(),
                |o: &Arc<Ordo>, _, stop: &Stop| {
                    let mut sink = 0u64;
                    let n = stop.run_batched(BATCH, || sink = sink.wrapping_add(o.get_time()));
                    std::hint::black_box(sink);
                    n
                },
            ),
            "new_time" => run.throughput(
                || ordo.clone(),
                |o: &Arc<Ordo>, _, stop: &Stop| {
                    let mut t = o.get_time();
                    let n = stop.run_batched(BATCH, || t = o.new_time(t));
                    std::hint::black_box(t);
                    n
                },
            ),
            "logical" => run.throughput(LogicalClock::new, |c: &LogicalClock, _, stop: &Stop| {
                let mut sink = 0u64;
                let n = stop.run_batched(BATCH, || sink = sink.wrapping_add(c.get_time()));
                std::hint::black_box(sink);
                n
            }),
            other => unreachable!("unknown clock impl {other}"),
        }
    }

    /// The `calibration` and `offsets` annexes for `ordo`.
    pub fn annexes(ordo: &Ordo) -> Vec<Annex> {
        let mut summary = Annex::new(
            "calibration",
            &format!("clock: {}", ordo.describe()),
            &[
                "source",
                "boundary_ticks",
                "boundary_ns",
                "min_offset_ticks",
                "raw_order_respects_communication",
                "runs_per_pair",
                "calibration_ms",
            ],
        );
        let cal = ordo.calibration();
        summary.row(vec![
            json!(ordo.name()),
            json!(ordo.boundary()),
            json!(round(1, ordo.boundary_ns())),
            cal.and_then(|c| c.matrix.min()).map_or(Value::Null, |m| json!(m)),
            json!(ordo.raw_order_is_causal()),
            cal.map_or(Value::Null, |c| json!(c.runs)),
            cal.map_or(Value::Null, |c| json!(round(1, c.elapsed.as_secs_f64() * 1e3))),
        ]);
        let mut annexes = vec![summary];
        if let Some(c) = cal {
            let cpus = c.matrix.cpus();
            let columns: Vec<String> =
                std::iter::once("writer".to_owned()).chain(cpus.iter().map(|r| format!("cpu{r}"))).collect();
            let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
            let mut offsets = Annex::new(
                "offsets",
                "minimum offset reader - writer, in ticks (003 Figure 9; row = writer)",
                &columns,
            );
            for &w in cpus {
                let mut row = vec![json!(w)];
                row.extend(cpus.iter().map(|&r| c.matrix.offset(w, r).map_or(Value::Null, |o| json!(o))));
                offsets.row(row);
            }
            annexes.push(offsets);
        }
        annexes
    }
}

impl Experiment for ClockExperiment {
    fn name(&self) -> &'static str {
        "clock"
    }

    fn description(&self) -> &'static str {
        "timestamps per second: Ordo get_time, new_time, and a logical clock (003 Figure 8b, Figure 9)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IMPLS.to_vec()
    }

    fn ratios(&self) -> Ratios {
        Ratios { scaling: true, versus: Some("logical") }
    }

    fn roles(&self) -> Roles {
        Roles { default: None, baselines: &["logical"], floor: None, targets: &[] }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * IMPLS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let ordo = global_clock()?;
        for &threads in &settings.threads {
            for id in IMPLS {
                sink.point(id, threads);
                let run = settings.at(threads);
                let t = Self::measure(id, ordo, &run);
                sink.push(
                    Record::new(self.name(), id, &run, &t).with("per_thread_ops_per_sec", t.median / threads as f64),
                )?;
            }
        }
        for annex in Self::annexes(ordo) {
            sink.annex(annex)?;
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
    fn every_source_produces_timestamps() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        let ordo = Arc::new(Ordo::monotonic());
        for id in IMPLS {
            assert!(ClockExperiment::measure(id, &ordo, &run).median > 0.0, "{id}");
        }
    }

    #[test]
    fn the_offsets_annex_is_a_full_square_matrix() {
        let ordo = ordo::global();
        let annexes = ClockExperiment::annexes(ordo);
        assert_eq!(annexes[0].name, "calibration");
        if let Some(c) = ordo.calibration() {
            let n = c.matrix.cpus().len();
            let offsets = &annexes[1];
            assert_eq!(offsets.rows.len(), n);
            assert!(offsets.rows.iter().all(|r| r.len() == n + 1));
            // The diagonal is empty, everything else measured.
            for (i, row) in offsets.rows.iter().enumerate() {
                for (j, v) in row[1..].iter().enumerate() {
                    assert_eq!(v.is_null(), i == j);
                }
            }
        }
    }
}
