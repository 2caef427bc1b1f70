//! `rlu`: hash-set operations per second on read-log-update with a logical clock and with
//! Ordo, beside the same hash set under one readers-writer lock (003 §6.4, Figure 11).
//!
//! The table is 003 Figure 11's: 1,000 buckets, each a sorted linked list, starting with
//! 100 nodes per bucket (every even key of `0..200,000`; `--quick`: 100 buckets of 10
//! nodes). Each worker draws keys uniformly from the whole range; with probability
//! `update_pct` % (the x axis: 2 and 40, the text's two mixes) the operation is an insert
//! or a remove (one each way), otherwise a lookup. One operation is one RLU section.
//!
//! Implementations (ids stable): `rlu-ordo` (`ordo_rlu::RluHashSet<u64, Ordo>` on the
//! process-wide calibrated clock: the default), `rlu-logical` (the same code on
//! `ordo::LogicalClock`, the original RLU's shared counter), `rwlock` (the baseline:
//! [`locked::LockedHashSet`], the RLU set's structure, with as many buckets, each a sorted
//! linked list of boxed nodes, under one `std::sync::RwLock`). Results written before this
//! baseline was made like for like measured `RwLock<std::collections::HashSet<u64>>` under
//! the same id: an open-addressing table that finds a key in about one probe where a bucket
//! list walks about 50 nodes, so `rwlock` figures from then are not comparable with later
//! ones.
//!
//! **Reading the figures.** A lookup walks about 50 nodes (half a bucket), a chain of
//! dependent loads over a table of about 4.8 MB at the text's size (100,000 nodes of 48 heap
//! bytes), so its time is the cache misses it takes, not its instructions (about 1,100).
//! The table outgrows a core's L2 and lives in the L3 that the machine's cores (here, the
//! host's, under this virtual machine) share. The measurements fit one explanation: how much
//! of the table stays there depends on how often each line is touched again. One thread
//! touches each line half as often as two, and half as often again when it shares its CPU
//! with another process. So while anything else loads the machine or the host, one-thread
//! lookups fall out to memory (2 to 7 µs each instead of about 1 µs) while two threads
//! keep the table warm for each other, and 2T/1T reads far above 2: 4 to 11 on a machine
//! shared with other builds and benchmarks, 2.0 to 2.2 when it was quiet. The instruction
//! count per lookup is the same at one and two threads (callgrind), and a 1.6 MB table
//! scales by 2.0 either way. Read the scaling from a quiet machine, and compare runs.
//!
//! **Verification.** Every worker counts, per key, the inserts and removes that changed the
//! set; after each repetition every key must be present exactly when its starting presence
//! plus those changes is 1, and no sum may leave 0..=1.
//!
//! **Fields.** RLU records carry `timestamps_per_op` (clock calls per operation: the section
//! start, and per commit a stamp and an advance), `commits_per_op`, `aborts_per_op` and
//! `helped_per_op` (commit stamps a reader installed for a writer it found between the
//! start of its commit and its stamp: a compare-and-swap on that writer's slot, the one
//! write to another thread's line that RLU makes for a timestamp, on either clock).
//! Every record carries the cost of one call of each clock primitive at its thread count
//! ([`ClockCost`], measured beside the runs with every thread calling it in a
//! loop): `logical_now_ns` (a load of the shared counter: each section start),
//! `logical_new_time_ns` (a CAS of it past the last value: what each commit pays),
//! `ordo_now_ns` (one `get_time`), `ordo_new_time_ns` (one `new_time` after the previous:
//! the uncertainty window; an RLU commit waits for its stamp plus the window, about twice
//! that). RLU takes each primitive alone, so its annexes read the fields as they are.
//!
//! **Annexes.** `versus`: per thread count and mix, Ordo/logical, each RLU version against
//! `rwlock`, and each id's scaling over one thread. `crossover`: the core count at which
//! Ordo/logical reaches 1, from the linear model of [`super::timestamps`]: the logical
//! clock's line costs each operation `k·x` more per added core, with `k` the accesses
//! that must fetch the line (2 per commit: the commit's CAS, and one section start on
//! another core that finds the line gone; section starts between commits hit in the
//! cache, so this holds while `commits_per_op × (n − 1) < 1`), and `x` either the growth
//! of `logical_new_time_ns` from 1 to 2 threads, one line transfer measured by the
//! `contention` experiment, or the text's 160 cycles per added core (000 §3.1, a 48-core
//! machine: two vCPUs of one host core transfer a line far more cheaply). This 2-core
//! machine shows only `n = 2`; beyond it the crossover is the model's prediction.
//!
//! **No shared-line write for a timestamp.** `rlu-ordo` takes its timestamps with
//! `Ordo::get_time` and `new_time`, which read the core's clock (`rdtscp`) and no memory:
//! `ordo_now_ns` and `ordo_new_time_ns` stay flat from 1 to 2 threads while
//! `logical_new_time_ns` grows. What RLU itself writes around a stamp is the same on both
//! clocks: the committing writer's own slot, and, `helped_per_op` times per operation,
//! a pending writer's slot.

use std::collections::hash_map::RandomState;
use std::io;
use std::sync::{Mutex, PoisonError};

use ordo::{Clock, LogicalClock, Ordo};
use ordo_rlu::{Rlu, RluHashSet, SetHandle, Stats};
use serde_json::{Value, json};

use super::read_mix::SplitMix64;
use super::spinlock::TEXT_TRANSFER_CYCLES;
use super::timestamps::{ClockCost, Crossover, LineTransfer, TWO_CORES_NOTE, clock_cost, clock_step, ratio};
use crate::experiments::{Experiment, XAxis, global_clock};
use crate::harness::{Run, Settings, Stop, Throughput};
use crate::output::plot::Scale;
use crate::output::verdict::{Against, Roles, Target};
use crate::output::{Annex, Record, Sink, round};

pub mod locked;

use locked::LockedHashSet;

/// Operations between two checks of the stop flag.
const BATCH: u64 = 32;

/// The implementations, in table order.
pub const IDS: [&str; 3] = ["rlu-ordo", "rlu-logical", "rwlock"];

/// Update percentages measured (003 Figure 11's two mixes), with and without `--quick`.
pub const UPDATE_PCTS: [u32; 2] = [2, 40];

/// The hash table's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Buckets (one sorted list each in the RLU table).
    pub buckets: usize,
    /// Nodes per bucket at the start.
    pub nodes_per_bucket: usize,
}

impl Shape {
    /// 003 Figure 11: 1,000 buckets of 100 nodes.
    pub const TEXT: Shape = Shape { buckets: 1000, nodes_per_bucket: 100 };
    /// `--quick`.
    pub const QUICK: Shape = Shape { buckets: 100, nodes_per_bucket: 10 };

    /// The key range: twice the starting size (every even key is present at the start).
    pub fn keys(self) -> u64 {
        2 * (self.buckets * self.nodes_per_bucket) as u64
    }
}

/// A set under test, as the workers use it.
trait Table: Sync {
    /// What one worker holds.
    type Handle<'a>
    where
        Self: 'a;
    fn handle(&self) -> Self::Handle<'_>;
    fn insert(h: &mut Self::Handle<'_>, key: u64) -> bool;
    fn remove(h: &mut Self::Handle<'_>, key: u64) -> bool;
    fn contains(h: &mut Self::Handle<'_>, key: u64) -> bool;
    /// The RLU handle's counters (zero for the lock).
    fn stats(h: &Self::Handle<'_>) -> Stats;
    /// Every key, sorted (the workers are done).
    fn keys(&self) -> Vec<u64>;
}

impl<C: Clock> Table for RluHashSet<u64, C> {
    type Handle<'a>
        = SetHandle<'a, u64, C, RandomState>
    where
        C: 'a;
    fn handle(&self) -> Self::Handle<'_> {
        RluHashSet::handle(self).expect("the domain has a thread slot per worker")
    }
    fn insert(h: &mut Self::Handle<'_>, key: u64) -> bool {
        h.insert(key)
    }
    fn remove(h: &mut Self::Handle<'_>, key: u64) -> bool {
        h.remove(&key)
    }
    fn contains(h: &mut Self::Handle<'_>, key: u64) -> bool {
        h.contains(&key)
    }
    fn stats(h: &Self::Handle<'_>) -> Stats {
        h.stats()
    }
    fn keys(&self) -> Vec<u64> {
        Table::handle(self).keys()
    }
}

impl Table for LockedHashSet {
    type Handle<'a> = &'a LockedHashSet;
    fn handle(&self) -> Self::Handle<'_> {
        self
    }
    fn insert(h: &mut Self::Handle<'_>, key: u64) -> bool {
        h.insert(key)
    }
    fn remove(h: &mut Self::Handle<'_>, key: u64) -> bool {
        h.remove(key)
    }
    fn contains(h: &mut Self::Handle<'_>, key: u64) -> bool {
        h.contains(key)
    }
    fn stats(_: &Self::Handle<'_>) -> Stats {
        Stats::default()
    }
    fn keys(&self) -> Vec<u64> {
        LockedHashSet::keys(self)
    }
}

/// An RLU table of `shape` on `clock`, with a thread slot for each of `threads` workers
/// and one more, holding every even key.
fn rlu_table<C: Clock>(clock: C, shape: Shape, threads: usize) -> RluHashSet<u64, C> {
    let rlu = Rlu::with_capacity(clock, threads + 1).expect("a capacity within the domain's limits");
    let set = RluHashSet::with_domain(rlu, shape.buckets, RandomState::new()).expect("at least one bucket");
    let mut h = set.handle().expect("a fresh domain has free slots");
    (0..shape.keys()).step_by(2).for_each(|k| {
        h.insert(k);
    });
    drop(h);
    set
}

/// The lock table of `shape`, holding every even key (inserted in the same order as into
/// the RLU table).
fn locked_table(shape: Shape) -> LockedHashSet {
    let set = LockedHashSet::new(shape.buckets);
    (0..shape.keys()).step_by(2).for_each(|k| {
        set.insert(k);
    });
    set
}

/// One repetition's state: the table, and per worker its changes per key and its stats.
struct Shared<T> {
    table: T,
    changes: Vec<Mutex<Vec<i32>>>,
    stats: Vec<Mutex<Stats>>,
}

/// What one point measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Operations per second over the repetitions.
    pub throughput: Throughput,
    /// The workers' RLU counters, summed over the repetitions.
    pub stats: Stats,
    /// Operations over the repetitions.
    pub ops: u64,
}

/// Panics unless the final `keys` are exactly what the starting contents (every even key
/// below `range`) and each worker's `changes` per key account for.
fn verify(keys: &[u64], range: u64, changes: &[Vec<i32>]) {
    let mut present = vec![false; range as usize];
    for &k in keys {
        assert!(k < range && !present[k as usize], "key {k} is in the set twice, or outside 0..{range}");
        present[k as usize] = true;
    }
    for k in 0..range {
        let sum = i64::from(k % 2 == 0) + changes.iter().map(|c| i64::from(c[k as usize])).sum::<i64>();
        assert!((0..=1).contains(&sum), "key {k}: its start and its successful inserts and removes sum to {sum}");
        assert_eq!(
            present[k as usize],
            sum == 1,
            "key {k}: present {} after changes summing to {sum}",
            present[k as usize]
        );
    }
}

fn measure<T: Table>(run: &Run, shape: Shape, update_pct: u32, make: impl Fn() -> T) -> Measured {
    let keys = shape.keys();
    let mut stats = Stats::default();
    let mut ops = 0;
    let throughput = run.throughput_checked(
        || Shared {
            table: make(),
            changes: (0..run.threads).map(|_| Mutex::new(vec![0; keys as usize])).collect(),
            stats: (0..run.threads).map(|_| Mutex::default()).collect(),
        },
        |shared: &Shared<T>, thread, stop: &Stop| {
            let mut changes =
                std::mem::take(&mut *shared.changes[thread].lock().unwrap_or_else(PoisonError::into_inner));
            let mut h = shared.table.handle();
            let mut rng = SplitMix64::new(thread as u64 + 1);
            let mut found = 0u64;
            let n = stop.run_batched(BATCH, || {
                let bits = rng.next_u64();
                let key = (bits >> 32) % keys;
                // The low 32 bits pick the kind (multiply-shift: a percentile), bit 0 the way.
                if ((bits & 0xFFFF_FFFF) * 100) >> 32 < u64::from(update_pct) {
                    if bits & 1 == 0 {
                        changes[key as usize] += i32::from(T::insert(&mut h, key));
                    } else {
                        changes[key as usize] -= i32::from(T::remove(&mut h, key));
                    }
                } else {
                    found += u64::from(T::contains(&mut h, key));
                }
            });
            std::hint::black_box(found);
            *shared.stats[thread].lock().unwrap_or_else(PoisonError::into_inner) = T::stats(&h);
            *shared.changes[thread].lock().unwrap_or_else(PoisonError::into_inner) = changes;
            n
        },
        |shared, done| {
            let changes: Vec<Vec<i32>> = shared
                .changes
                .iter()
                .map(|c| std::mem::take(&mut *c.lock().unwrap_or_else(PoisonError::into_inner)))
                .collect();
            verify(&shared.table.keys(), keys, &changes);
            for s in &shared.stats {
                let s = *s.lock().unwrap_or_else(PoisonError::into_inner);
                stats.sections += s.sections;
                stats.commits += s.commits;
                stats.aborts += s.aborts;
                stats.now_calls += s.now_calls;
                stats.new_time_calls += s.new_time_calls;
                stats.helped += s.helped;
            }
            ops += done;
        },
    );
    Measured { throughput, stats, ops }
}

/// Measures implementation `id` at one point.
fn measure_id(id: &str, run: &Run, shape: Shape, update_pct: u32, ordo: &Ordo) -> Measured {
    match id {
        "rlu-ordo" => measure(run, shape, update_pct, || rlu_table(ordo.clone(), shape, run.threads)),
        "rlu-logical" => measure(run, shape, update_pct, || rlu_table(LogicalClock::new(), shape, run.threads)),
        "rwlock" => measure(run, shape, update_pct, || locked_table(shape)),
        other => unreachable!("unknown rlu implementation {other}"),
    }
}

/// One measured point, kept for the annexes.
#[derive(Clone, Debug, PartialEq)]
struct Point {
    id: &'static str,
    threads: usize,
    update_pct: u32,
    ops_per_sec: f64,
    stats: Stats,
    ops: u64,
}

impl Point {
    fn per_op(&self, n: u64) -> f64 {
        n as f64 / self.ops.max(1) as f64
    }
}

/// The `rlu` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct RluExperiment;

impl RluExperiment {
    fn find<'a>(points: &'a [Point], id: &str, threads: usize, update_pct: u32) -> Option<&'a Point> {
        points.iter().find(|p| p.id == id && p.threads == threads && p.update_pct == update_pct)
    }

    /// The `versus` annex.
    fn versus_annex(points: &[Point], threads: &[usize]) -> Annex {
        let mut annex = Annex::new(
            "versus",
            "Ordo/logical, each RLU version against rwlock, and scaling over one thread, per thread count and mix",
            &[
                "threads",
                "update_pct",
                "ordo_vs_logical",
                "ordo_vs_rwlock",
                "logical_vs_rwlock",
                "ordo_scaling",
                "logical_scaling",
                "rwlock_scaling",
            ],
        );
        for &t in threads {
            for pct in UPDATE_PCTS {
                let at = |id: &str, t: usize| Self::find(points, id, t, pct).map(|p| p.ops_per_sec);
                let (o, l, r) = (at("rlu-ordo", t), at("rlu-logical", t), at("rwlock", t));
                if o.is_none() && l.is_none() && r.is_none() {
                    continue;
                }
                annex.row(vec![
                    json!(t),
                    json!(pct),
                    ratio(o, l),
                    ratio(o, r),
                    ratio(l, r),
                    ratio(o, at("rlu-ordo", 1)),
                    ratio(l, at("rlu-logical", 1)),
                    ratio(r, at("rwlock", 1)),
                ]);
            }
        }
        annex
    }

    /// The `crossover` annex: per mix, [`Crossover`] from the one-thread points, with `x`
    /// the growth of a logical `new_time` from 1 to 2 threads (`clock_step_ns`) or one
    /// line transfer (`transfer_ns`).
    fn crossover_annex(
        points: &[Point],
        clock_step_ns: Option<f64>,
        transfer_ns: f64,
        text_transfer_ns: f64,
        source: &str,
    ) -> Annex {
        let mut annex = Annex::new(
            "crossover",
            &format!(
                "predicted cores where Ordo/logical reaches 1: t_L(n) = t_L(1) + k*x*(n-1), t_O(n) = t_O(1), k = 2 line fetches per commit; x = clock_step_ns, transfer_ns ({source}) or text_transfer_ns (000 §3.1: 160 cycles per added core)"
            ),
            &[
                "update_pct",
                "logical_ns_per_op_1t",
                "ordo_ns_per_op_1t",
                "line_fetches_per_op",
                "clock_step_ns",
                "transfer_ns",
                "text_transfer_ns",
                "crossover_cores_clock_step",
                "crossover_cores_transfer",
                "crossover_cores_text",
                "model_ratio_2t",
                "measured_ratio_2t",
            ],
        );
        let opt = |v: Option<f64>| v.map_or(Value::Null, |v| json!(round(1, v)));
        for pct in UPDATE_PCTS {
            let (Some(l1), Some(o1)) =
                (Self::find(points, "rlu-logical", 1, pct), Self::find(points, "rlu-ordo", 1, pct))
            else {
                continue;
            };
            let with = |x: f64| Crossover {
                logical_ns: 1e9 / l1.ops_per_sec,
                ordo_ns: 1e9 / o1.ops_per_sec,
                accesses: 2.0 * l1.per_op(l1.stats.commits),
                transfer_ns: x,
            };
            let by_transfer = with(transfer_ns);
            let by_step = clock_step_ns.map(with);
            let at_2 = |id: &str| Self::find(points, id, 2, pct).map(|p| p.ops_per_sec);
            let measured = ratio(at_2("rlu-ordo"), at_2("rlu-logical"));
            annex.row(vec![
                json!(pct),
                json!(round(1, by_transfer.logical_ns)),
                json!(round(1, by_transfer.ordo_ns)),
                json!(round(3, by_transfer.accesses)),
                opt(clock_step_ns),
                json!(round(1, transfer_ns)),
                json!(round(1, text_transfer_ns)),
                opt(by_step.and_then(|m| m.cores())),
                opt(by_transfer.cores()),
                opt(with(text_transfer_ns).cores()),
                json!(round(2, by_step.unwrap_or(by_transfer).ratio(2.0))),
                measured,
            ]);
        }
        annex.note(TWO_CORES_NOTE);
        annex
    }
}

impl Experiment for RluExperiment {
    fn name(&self) -> &'static str {
        "rlu"
    }

    fn description(&self) -> &'static str {
        "hash-set ops/s on read-log-update with a logical clock and with Ordo vs the same bucket lists under one RwLock, at 2 % and 40 % updates (003 §6.4, Figure 11)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IDS.to_vec()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: "update_pct", label: "updates (% of operations)" }
    }

    fn x_scale(&self) -> Scale {
        Scale::Even
    }

    fn roles(&self) -> Roles {
        // Issue 10: the Ordo version scales on read-mostly work.
        const TARGETS: &[Target] =
            &[Target { id: "rlu-ordo", threads: 2, x: Some((2.0, 2.0)), against: Against::OneThread, min: 1.8 }];
        Roles { default: Some("rlu-ordo"), baselines: &["rwlock"], floor: None, targets: TARGETS }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * UPDATE_PCTS.len() * IDS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let ordo = global_clock()?;
        let shape = if settings.quick { Shape::QUICK } else { Shape::TEXT };
        let mut points = Vec::new();
        let mut costs: Vec<(usize, ClockCost)> = Vec::new();
        for &threads in &settings.threads {
            let run = settings.at(threads);
            let cost = clock_cost(&run, ordo);
            costs.push((threads, cost));
            for pct in UPDATE_PCTS {
                for id in IDS {
                    sink.point(id, threads);
                    let m = measure_id(id, &run, shape, pct, ordo);
                    let point = Point {
                        id,
                        threads,
                        update_pct: pct,
                        ops_per_sec: m.throughput.median,
                        stats: m.stats,
                        ops: m.ops,
                    };
                    let mut record = Record::new(self.name(), id, &run, &m.throughput).with("update_pct", pct);
                    if id != "rwlock" {
                        record = record
                            .with("timestamps_per_op", round(3, point.per_op(m.stats.timestamps())))
                            .with("commits_per_op", round(4, point.per_op(m.stats.commits)))
                            .with("aborts_per_op", round(4, point.per_op(m.stats.aborts)))
                            .with("helped_per_op", round(6, point.per_op(m.stats.helped)));
                    }
                    sink.push(cost.fields(record))?;
                    points.push(point);
                }
            }
        }
        sink.annex(Self::versus_annex(&points, &settings.threads))?;
        let transfer = LineTransfer::measure(settings, ordo);
        let step = clock_step(&costs, |c| c.logical_new_time_ns);
        let text_ns = TEXT_TRANSFER_CYCLES / ordo.ticks_per_ns();
        sink.annex(Self::crossover_annex(&points, step, transfer.ns, text_ns, &transfer.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    /// A tiny table, so that the smoke test's keys conflict.
    const TINY: Shape = Shape { buckets: 8, nodes_per_bucket: 4 };

    #[test]
    fn every_impl_runs_both_mixes_and_verifies() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        let ordo = Ordo::monotonic();
        for pct in UPDATE_PCTS {
            for id in IDS {
                let m = measure_id(id, &run, TINY, pct, &ordo);
                assert!(m.throughput.median > 0.0 && m.ops > 0, "{id} at {pct}%");
                assert_eq!(m.stats.sections > 0, id != "rwlock", "{id}: {:?}", m.stats);
            }
        }
    }

    #[test]
    #[should_panic(expected = "key 3: present false after changes summing to 1")]
    fn a_lost_insert_fails_the_run() {
        // Key 3 starts absent; a worker's insert of it succeeded, but the set lacks it.
        let mut changes = vec![0; 4];
        changes[3] = 1;
        verify(&[0, 2], 4, &[changes]);
    }

    #[test]
    #[should_panic(expected = "key 0: its start and its successful inserts and removes sum to 2")]
    fn a_doubled_insert_fails_the_run() {
        verify(&[0, 2], 4, &[vec![1, 0, 0, 0]]);
    }

    #[test]
    fn annexes_pair_the_points() {
        let stats = Stats { commits: 50, ..Stats::default() };
        let p = |id, threads, ops_per_sec| Point { id, threads, update_pct: 40, ops_per_sec, stats, ops: 100 };
        let points = vec![
            p("rlu-logical", 1, 1e6),
            p("rlu-ordo", 1, 0.5e6),
            p("rwlock", 1, 2e6),
            p("rlu-logical", 2, 1.5e6),
            p("rlu-ordo", 2, 1e6),
        ];
        let versus = RluExperiment::versus_annex(&points, &[1, 2]);
        assert_eq!(versus.rows.len(), 2);
        assert_eq!(versus.rows[1][2], json!(0.67));
        assert_eq!(versus.rows[1][5], json!(2.0));
        assert_eq!(versus.rows[1][7], Value::Null);
        // t_L(1) = 1000 ns, t_O(1) = 2000 ns, k = 2 × 0.5 = 1 fetch per op, x = 250 ns:
        // the ratio reaches 1 at n = 1 + 1000 / 250 = 5.
        let crossover = RluExperiment::crossover_annex(&points, None, 250.0, 100.0, "test");
        assert_eq!(crossover.rows.len(), 1);
        assert_eq!(crossover.rows[0][3], json!(1.0));
        assert_eq!(crossover.rows[0][8], json!(5.0));
        // With the text's 100 ns per added core: n = 1 + 1000 / 100 = 11.
        assert_eq!(crossover.rows[0][9], json!(11.0));
        assert_eq!(crossover.rows[0][11], json!(0.67));
    }
}
