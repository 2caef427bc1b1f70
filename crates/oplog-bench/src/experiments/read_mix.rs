//! `read-mix`: throughput of one sequential structure wrapped three ways, as the share of
//! updates among operations goes from 0 to 100 %: where does each wrapper win?
//!
//! OpLog is built for update-heavy data (000 §1: updates far more often than reads); a
//! read pays a synchronize that merges every core's log. A mutex pays a shared line for
//! every operation. Node replication (the `node-replication` crate) reads a local replica
//! under a readers-writer lock and sends every update through a shared log with flat
//! combining. The structure is a table of 64 counters ([`table`]: why it was chosen);
//! [`wrappers`] holds the wrappers: `oplog` (the default configuration: each object adapts
//! its representation to the mix), the baselines `mutex`, `rwlock` and `node-replication`,
//! and OpLog pinned to one representation: `oplog-rseq` (logged, slots entered with a
//! restartable sequence), `oplog-spinlock` (logged, the texts' per-core spin lock) and
//! `oplog-direct` (updates in place under the object lock).
//!
//! Each worker draws operations from its own pseudo-random sequence (SplitMix64, seeded by
//! the thread index, the same for every wrapper): with probability `update_pct` % an
//! `add(slot, 1)`, otherwise a `get(slot)`, on a uniformly drawn slot. After each
//! repetition the table's total must equal the number of adds the workers made, so a lost
//! update fails the run. A worker that has stopped keeps calling the wrapper's `help` until
//! all have stopped (node-replication can otherwise strand a last update for seconds; see
//! [`wrappers`]). Records carry `update_pct`, and OpLog's records the representation the
//! object ended the last repetition in (`ended_in`); the `versus` annex gives, per thread
//! count and update percentage, the best baseline, the default `oplog`'s throughput
//! relative to it and to each baseline, which wrapper was fastest and what the default
//! ended in.

use std::collections::HashMap;
use std::hint::black_box;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use serde_json::{Value, json};

use crate::experiments::impls::Impl;
use crate::experiments::{Experiment, XAxis};
use crate::harness::{Run, Settings, Stop, SweepPoint, Throughput};
use crate::output::plot::Scale;
use crate::output::verdict::{Against, Roles, Target};
use crate::output::{Annex, Record, Sink, round};

pub mod table;
pub mod wrappers;

use wrappers::{MutexTable, NrTable, OplogTable, RwLockTable, SharedTable, mode};

/// Update percentages measured.
pub const UPDATE_PCTS: [u32; 7] = [0, 1, 10, 50, 90, 99, 100];
/// Update percentages measured with `--quick`.
pub const QUICK_UPDATE_PCTS: [u32; 4] = [0, 50, 99, 100];

/// Operations between two checks of the stop flag.
const BATCH: u64 = 32;

/// Every wrapper, in table order: the default, the baselines, the pinned modes.
pub const IMPLS: [Impl<u32>; 7] = [
    of::<OplogTable<{ mode::DEFAULT }>>(),
    of::<MutexTable>(),
    of::<RwLockTable>(),
    of::<NrTable>(),
    of::<OplogTable<{ mode::RSEQ }>>(),
    of::<OplogTable<{ mode::SPINLOCK }>>(),
    of::<OplogTable<{ mode::DIRECT }>>(),
];

/// The row of [`IMPLS`] for wrapper `T`: [`SharedTable::ID`], measured at one point with
/// `update_pct` % updates, noting the representation it ended the last repetition in
/// ([`SharedTable::representation`], [`Throughput::ended_in`]); monomorphised.
const fn of<T: SharedTable>() -> Impl<u32> {
    Impl::new(T::ID, measure::<T>)
}

/// The baselines the default is judged against.
const BASELINES: [&str; 3] = [MutexTable::ID, RwLockTable::ID, NrTable::ID];

/// SplitMix64: a small, fast generator with full 64-bit output (Steele et al. 2014).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// One operation drawn from 64 random bits: `(is_update, slot)`. The low 32 bits pick the
/// kind (`update_pct` % updates, by multiply-shift, no division), the top 6 the slot.
#[inline]
pub fn draw(bits: u64, update_pct: u32) -> (bool, usize) {
    let percentile = ((bits & 0xFFFF_FFFF) * 100) >> 32;
    (percentile < u64::from(update_pct), (bits >> 58) as usize)
}

/// The state of one repetition: the wrapped table, each worker's count of adds, and how
/// many workers have finished.
struct Shared<T> {
    table: T,
    adds: Box<[CachePadded<AtomicU64>]>,
    finished: CachePadded<AtomicUsize>,
}

/// Runs wrapper `T` at one point.
fn measure<T: SharedTable>(run: &Run, update_pct: u32) -> Throughput {
    let mut ended_in = None;
    let t = run.throughput_checked(
        || Shared {
            table: T::new(),
            adds: (0..run.threads).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            finished: CachePadded::new(AtomicUsize::new(0)),
        },
        |shared: &Shared<T>, thread, stop: &Stop| {
            let table = &shared.table;
            let handle = table.register();
            let mut rng = SplitMix64::new(thread as u64 + 1);
            let (mut adds, mut seen) = (0u64, 0u64);
            let ops = stop.run_batched(BATCH, || {
                let (update, slot) = draw(rng.next_u64(), update_pct);
                if update {
                    table.add(&handle, slot);
                    adds += 1;
                } else {
                    seen = seen.wrapping_add(table.get(&handle, slot));
                }
            });
            black_box(seen);
            shared.adds[thread].store(adds, Ordering::Relaxed);
            // Complete what other workers left pending before anyone returns.
            shared.finished.fetch_add(1, Ordering::AcqRel);
            while shared.finished.load(Ordering::Acquire) < run.threads {
                table.help(&handle);
            }
            ops
        },
        |shared, _| {
            let adds: u64 = shared.adds.iter().map(|a| a.load(Ordering::Relaxed)).sum();
            ended_in = shared.table.representation();
            let total = shared.table.total();
            assert_eq!(total, adds, "`{}` lost updates: the table sums to {total} after {adds} adds", T::ID);
        },
    );
    t.ended_in(ended_in)
}

/// What one `(threads, update_pct)` point measured: ops/s per wrapper (in [`IMPLS`]
/// order) and the representation the default ended in.
type PointResults = HashMap<(usize, u32), (Vec<f64>, Option<Value>)>;

/// The `read-mix` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadMix;

impl ReadMix {
    /// The `versus` annex from `results[(threads, update_pct)] = (ops/s per wrapper, what
    /// the default ended in)`.
    fn versus(points: &[(usize, u32)], results: &PointResults) -> Annex {
        let mut annex = Annex::new(
            "versus",
            "the default oplog against the best baseline and each, the fastest wrapper, and the representation oplog ended in",
            &[
                "threads",
                "update_pct",
                "best_baseline",
                "oplog_vs_best",
                "oplog_vs_mutex",
                "oplog_vs_rwlock",
                "oplog_vs_node_replication",
                "fastest",
                "oplog_ended_in",
            ],
        );
        let index = |id: &str| IMPLS.iter().position(|e| e.id == id).expect("a registered wrapper");
        let oplog = index(OplogTable::<{ mode::DEFAULT }>::ID);
        for point in points {
            let Some((ops, ended_in)) = results.get(point) else { continue };
            let ratio = |i: usize| {
                if ops[i] > 0.0 { json!(round(2, ops[oplog] / ops[i])) } else { json!(null) }
            };
            let best = BASELINES.iter().map(|id| index(id)).max_by(|&a, &b| ops[a].total_cmp(&ops[b]));
            let fastest = (0..ops.len()).max_by(|&a, &b| ops[a].total_cmp(&ops[b])).map(|i| IMPLS[i].id);
            let mut row = vec![json!(point.0), json!(point.1), json!(best.map(|i| IMPLS[i].id))];
            row.push(best.map_or(json!(null), ratio));
            row.extend(BASELINES.iter().map(|id| ratio(index(id))));
            row.extend([json!(fastest), json!(ended_in)]);
            annex.row(row);
        }
        annex
    }
}

impl Experiment for ReadMix {
    fn name(&self) -> &'static str {
        "read-mix"
    }

    fn description(&self) -> &'static str {
        "ops/s of a 64-counter table wrapped as OpLog (default and pinned modes), Mutex, RwLock and node-replication, by share of updates"
    }

    fn ids(&self) -> Vec<&'static str> {
        IMPLS.iter().map(|e| e.id).collect()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: "update_pct", label: "updates (% of operations)" }
    }

    fn x_scale(&self) -> Scale {
        Scale::Even
    }

    fn roles(&self) -> Roles {
        // Issue 9: the default never far behind the best baseline, ahead where updates dominate.
        const TARGETS: &[Target] = &[
            Target { id: "oplog", threads: 1, x: None, against: Against::BestBaseline, min: 0.8 },
            Target { id: "oplog", threads: 2, x: None, against: Against::BestBaseline, min: 0.8 },
            Target { id: "oplog", threads: 2, x: Some((90.0, 90.0)), against: Against::BestBaseline, min: 1.0 },
            Target { id: "oplog", threads: 2, x: Some((99.0, 100.0)), against: Against::BestBaseline, min: 2.0 },
            Target { id: "oplog", threads: 2, x: Some((100.0, 100.0)), against: Against::OneThread, min: 1.8 },
        ];
        Roles { default: Some("oplog"), baselines: &BASELINES, floor: None, targets: TARGETS }
    }

    fn sweep_points(&self) -> Option<Vec<f64>> {
        Some(UPDATE_PCTS.iter().map(|&x| x.value()).collect())
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * settings.sweep(&UPDATE_PCTS, &QUICK_UPDATE_PCTS).len() * IMPLS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let mut points = Vec::new();
        let mut results = HashMap::new();
        for &threads in &settings.threads {
            for pct in settings.sweep(&UPDATE_PCTS, &QUICK_UPDATE_PCTS) {
                let mut ops = Vec::new();
                let mut default_ended_in = None;
                let run = settings.at(threads);
                let measured = run.side_by_side(
                    IMPLS.len(),
                    |i| sink.point(IMPLS[i].id, threads),
                    |i, once| (IMPLS[i].measure(once, pct), ()),
                );
                for (entry, (t, ())) in IMPLS.iter().zip(measured) {
                    ops.push(t.median);
                    if entry.id == OplogTable::<{ mode::DEFAULT }>::ID {
                        default_ended_in = t.noted("ended_in").cloned();
                    }
                    sink.push(Record::new(self.name(), entry.id, &run, &t).with("update_pct", pct))?;
                }
                points.push((threads, pct));
                results.insert((threads, pct), (ops, default_ended_in));
            }
        }
        sink.annex(Self::versus(&points, &results))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    #[test]
    fn draws_follow_the_update_share() {
        let mut rng = SplitMix64::new(1);
        let mut slots = [0u32; 64];
        for (pct, low, high) in [(0, 0, 0), (50, 4700, 5300), (99, 9850, 9950), (100, 10_000, 10_000)] {
            let updates = (0..10_000)
                .filter(|_| {
                    let (update, slot) = draw(rng.next_u64(), pct);
                    slots[slot] += 1;
                    update
                })
                .count();
            assert!((low..=high).contains(&updates), "{pct}%: {updates} updates");
        }
        assert!(slots.iter().all(|&n| n > 400), "slots are drawn uniformly: {slots:?}");
    }

    #[test]
    fn every_wrapper_runs_every_mix_without_losing_updates() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(10), reps: 1, placement: &placement };
        for entry in IMPLS {
            // Each run checks the table against the adds made. (A single short run can do
            // no work at all when both workers are preempted past its end on a loaded
            // machine; three in a row do not.)
            let total: f64 = [0, 50, 100].iter().map(|&pct| entry.measure(&run, pct).median).sum();
            assert!(total > 0.0, "{} did nothing", entry.id);
        }
    }

    #[test]
    fn versus_names_the_fastest() {
        let results = HashMap::from([
            ((2, 99), (vec![300.0, 100.0, 120.0, 150.0, 1.0, 200.0, 1.0], Some("logged".into()))),
            ((2, 0), (vec![1.0, 4.0, 8.0, 2.0, 1.0, 3.0, 9.0], Some("direct".into()))),
        ]);
        let annex = ReadMix::versus(&[(2, 0), (2, 99)], &results);
        let row = |r: &[serde_json::Value]| r.to_vec();
        assert_eq!(
            row(&annex.rows[0]),
            vec![
                json!(2),
                json!(0),
                json!("rwlock"),
                json!(0.13),
                json!(0.25),
                json!(0.13),
                json!(0.5),
                json!("oplog-direct"),
                json!("direct")
            ]
        );
        assert_eq!(
            row(&annex.rows[1]),
            vec![
                json!(2),
                json!(99),
                json!("node-replication"),
                json!(2.0),
                json!(3.0),
                json!(2.5),
                json!(2.0),
                json!("oplog"),
                json!("logged")
            ]
        );
    }
}
