//! `stm`: transactions per second of TL2 on a logical clock and on Ordo (003 §4.3, the
//! STAMP runs of Figure 15), beside one mutex around the same sequential structure.
//!
//! Implementations (ids stable): `tl2-logical` (`ordo_stm::Stm<LogicalClock>`: TL2's
//! global version clock, a shared counter), `tl2-ordo` (`Stm<Ordo>`, the process-wide
//! calibrated clock: start at `get_time`, commit at `new_time(start)`, aborts on stamps
//! within the uncertainty window), `mutex` (the same sequential code on a `Vec<u64>` under
//! one `std::sync::Mutex`). The STM versions keep one `TVar<u64>` per word of the
//! structure. The workloads ([`workload`]; the x axis is the workload's number):
//!
//! 1. `set`: a hash set of 1024 keys, 80 % lookups, 10 % inserts, 10 % removes;
//! 2. `bank`: the contended mix, 16 accounts, 90 % transfers, 10 % audits of all accounts;
//! 3. `kmeans`: the assignment phase of kmeans, in the spirit of STAMP's (one
//!    transaction per point, adding it to its center's count and sums).
//!
//! One operation is one transaction (kmeans: one point; its chunk grabs, one per 64
//! points, are not counted). Each repetition ends with a check of the structure against
//! what the threads did ([`workload::Workload::verify`]), and every bank audit checks the
//! total inside its transaction.
//!
//! **Fields.** Records of the TL2 ids carry `abort_rate` (aborted attempts per attempt),
//! `uncertain_abort_rate` (the part on the uncertainty window), `timestamps_per_txn` and
//! `commit_stamps_per_txn` (clock operations per committed transaction: a start, and a
//! commit stamp unless read-only). Every record carries the cost of one call of each clock
//! primitive at its thread count ([`ClockCost`], measured beside it with every thread
//! calling it in a loop): `logical_now_ns` (a load of the counter: TL2's start stamp),
//! `logical_new_time_ns` (a CAS of it: TL2's commit stamp), `ordo_now_ns` (one `get_time`:
//! the Ordo start stamp) and `ordo_new_time_ns` (one `new_time` after the previous: the
//! whole uncertainty window, the most a commit stamp waits).
//!
//! **Annexes.** `ratios`: per workload and thread count, Ordo/logical, each against
//! `mutex`, scaling over one thread, and the abort rates with their ratio. `crossover`:
//! the core count at which Ordo/logical reaches 1, from the linear model of
//! [`super::timestamps`], with the cost a core adds to each access of the counter's line
//! taken two ways: the growth from 1 to 2 threads of one access as TL2 takes them (it
//! combines a load and a CAS per commit: `(logical_now_ns + logical_new_time_ns) / 2` per
//! access), and one line transfer measured by the `contention` experiment
//! ([`LineTransfer`]). This 2-core machine can show only the first step, so beyond 2 it is
//! the model's prediction.
//!
//! **Shared-line writes for timestamps.** `tl2-ordo` takes every timestamp with
//! `Ordo::get_time` / `new_time`, which read the core's clock (`rdtscp`) and write no memory
//! (`Ordo` holds no atomic or cell; TL2's start and commit stamps call nothing else; the
//! per-thread hint of the last commit stamp is a thread-local). `logical_now_ns` and
//! `logical_new_time_ns` against `ordo_now_ns` and `ordo_new_time_ns` across thread counts
//! show what the shared counter costs instead.

use std::io;
use std::sync::Mutex;

use ordo::{LogicalClock, Ordo};
use ordo_stm::{Stats, Stm, TVar, TxClock};
use serde_json::{Value, json};

use super::timestamps::{ClockCost, Crossover, LineTransfer, TWO_CORES_NOTE, clock_cost, clock_step, ratio};
use crate::experiments::{Experiment, Metric, Ratios, XAxis, global_clock};
use crate::harness::{Run, Settings, Stop, Throughput};
use crate::output::verdict::Roles;
use crate::output::{Annex, Record, Sink, round};

pub mod workload;

use workload::{Op, Points, ThreadState, TxWords, Workload};

/// Operations between two checks of the stop flag.
const BATCH: u64 = 32;

/// The implementations, in table order.
pub const IDS: [&str; 3] = ["tl2-logical", "tl2-ordo", "mutex"];

/// A structure's words and how to run one operation on them atomically.
trait Memory: Sync {
    /// Runs `op` as one transaction (or critical section) and returns its result.
    fn run(&self, op: Op, points: &Points) -> u64;
    /// The words, once the workers are done.
    fn words(&self) -> Vec<u64>;
}

/// The words as `TVar`s of one STM.
struct Tl2<C> {
    stm: Stm<C>,
    vars: Vec<TVar<u64>>,
}

impl<C: TxClock> Tl2<C> {
    fn new(clock: C, words: Vec<u64>) -> Self {
        let stm = Stm::new(clock);
        let vars = words.into_iter().map(|w| TVar::new(&stm, w)).collect();
        Self { stm, vars }
    }
}

impl<C: TxClock> Memory for Tl2<C> {
    #[inline]
    fn run(&self, op: Op, points: &Points) -> u64 {
        self.stm.atomically(|tx| op.run(points, &mut TxWords { tx, vars: &self.vars }))
    }

    fn words(&self) -> Vec<u64> {
        self.stm.atomically(|tx| self.vars.iter().map(|v| tx.read(v)).collect())
    }
}

/// The words under one lock.
struct Locked(Mutex<Vec<u64>>);

impl Memory for Locked {
    #[inline]
    fn run(&self, op: Op, points: &Points) -> u64 {
        let mut words = self.0.lock().expect("no operation panics");
        op.run(points, &mut words[..]).expect("plain memory has no conflicts")
    }

    fn words(&self) -> Vec<u64> {
        self.0.lock().expect("no operation panics").clone()
    }
}

/// One repetition's memory and what each worker did.
struct Shared<M> {
    memory: M,
    states: Vec<Mutex<ThreadState>>,
    stats: Mutex<Stats>,
}

/// A measured point: throughput and the transactions' counts over all repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Operations (transactions) per second, all threads.
    pub throughput: Throughput,
    /// TL2's counts over all repetitions (zero for a lock).
    pub stats: Stats,
}

/// Measures TL2 on `clock` running `workload` (also the `boundary` experiment's TL2 ids, on
/// clocks with a pinned window).
pub fn measure_tl2<C: TxClock + Clone>(run: &Run, workload: Workload, points: &Points, clock: &C) -> Measured {
    measure(run, workload, points, |w| Tl2::new(clock.clone(), w))
}

fn measure<M: Memory>(run: &Run, workload: Workload, points: &Points, make: impl Fn(Vec<u64>) -> M) -> Measured {
    let mut stats = Stats::default();
    let throughput = run.throughput_checked(
        || Shared {
            memory: make(workload.initial()),
            states: (0..run.threads).map(|_| Mutex::default()).collect(),
            stats: Mutex::default(),
        },
        |shared: &Shared<M>, thread, stop: &Stop| {
            let mut state = ThreadState::new(thread);
            let before = Stats::thread();
            let mut counted = 0;
            stop.run_batched(BATCH, || {
                let op = workload.next_op(&mut state, points);
                let result = shared.memory.run(op, points);
                workload.completed(&mut state, op, result);
                counted += u64::from(Workload::counts(op));
            });
            let mut total = shared.stats.lock().expect("no worker panics holding it");
            *total = total.plus(&(Stats::thread() - before));
            *shared.states[thread].lock().expect("one writer") = state;
            counted
        },
        |shared, _| {
            let states: Vec<ThreadState> =
                shared.states.iter().map(|s| std::mem::take(&mut *s.lock().expect("workers are done"))).collect();
            workload.verify(&shared.memory.words(), &states, points);
            stats = stats.plus(&shared.stats.lock().expect("workers are done"));
        },
    );
    Measured { throughput, stats }
}

/// Measures implementation `id` on `workload`.
fn measure_id(id: &str, run: &Run, workload: Workload, points: &Points, ordo: &Ordo) -> Measured {
    match id {
        "tl2-logical" => measure(run, workload, points, |w| Tl2::new(LogicalClock::new(), w)),
        "tl2-ordo" => measure_tl2(run, workload, points, ordo),
        "mutex" => measure(run, workload, points, |w| Locked(Mutex::new(w))),
        other => unreachable!("unknown stm implementation {other}"),
    }
}

/// One access to the logical counter as TL2 takes them, in ns: per commit a start load
/// and a commit CAS, so the mean of the two.
fn tl2_access_ns(cost: &ClockCost) -> f64 {
    (cost.logical_now_ns + cost.logical_new_time_ns) / 2.0
}

/// One measured point, kept for the annexes.
struct Point {
    workload: Workload,
    threads: usize,
    id: &'static str,
    ops_per_sec: f64,
    stats: Stats,
}

/// The `stm` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct StmExperiment;

impl StmExperiment {
    fn find<'a>(points: &'a [Point], workload: Workload, threads: usize, id: &str) -> Option<&'a Point> {
        points.iter().find(|p| p.workload == workload && p.threads == threads && p.id == id)
    }

    /// The `ratios` annex.
    fn ratios_annex(points: &[Point], threads: &[usize]) -> Annex {
        let mut annex = Annex::new(
            "ratios",
            "per workload: Ordo/logical, each vs mutex, scaling over 1T, abort rates (aborted attempts per attempt)",
            &[
                "workload",
                "threads",
                "ordo_over_logical",
                "ordo_over_mutex",
                "logical_over_mutex",
                "ordo_scaling",
                "logical_scaling",
                "mutex_scaling",
                "abort_rate_logical",
                "abort_rate_ordo",
                "abort_ratio_ordo_over_logical",
            ],
        );
        for w in Workload::ALL {
            for &t in threads {
                let ops = |id: &str, t: usize| Self::find(points, w, t, id).map(|p| p.ops_per_sec);
                let abort = |id: &str| Self::find(points, w, t, id).map(|p| p.stats.abort_rate());
                if ops("tl2-ordo", t).is_none() && ops("tl2-logical", t).is_none() {
                    continue;
                }
                annex.row(vec![
                    json!(w.name()),
                    json!(t),
                    ratio(ops("tl2-ordo", t), ops("tl2-logical", t)),
                    ratio(ops("tl2-ordo", t), ops("mutex", t)),
                    ratio(ops("tl2-logical", t), ops("mutex", t)),
                    ratio(ops("tl2-ordo", t), ops("tl2-ordo", 1)),
                    ratio(ops("tl2-logical", t), ops("tl2-logical", 1)),
                    ratio(ops("mutex", t), ops("mutex", 1)),
                    abort("tl2-logical").map_or(Value::Null, |a| json!(round(4, a))),
                    abort("tl2-ordo").map_or(Value::Null, |a| json!(round(4, a))),
                    ratio(abort("tl2-ordo"), abort("tl2-logical")),
                ]);
            }
        }
        annex
    }

    /// The `crossover` annex: [`Crossover`] per workload, from the one-thread points, with two
    /// measures of `x`: the growth of one TL2 access to the counter (`tl2_access_ns`) from 1 to 2 threads
    /// (`clock_step_ns`, measured beside the runs) and one contended line transfer
    /// (`transfer_ns`, from `contention`).
    fn crossover_annex(points: &[Point], clock_step_ns: Option<f64>, transfer_ns: f64, source: &str) -> Annex {
        let mut annex = Annex::new(
            "crossover",
            &format!(
                "predicted cores where Ordo/logical reaches 1: t_L(n) = t_L(1) + k*x*(n-1), t_O(n) = t_O(1); x = clock_step_ns (one TL2 counter access, the mean of a load and a CAS, at 2T - at 1T) or transfer_ns ({source})"
            ),
            &[
                "workload",
                "logical_ns_per_txn_1t",
                "ordo_ns_per_txn_1t",
                "clock_accesses_per_txn",
                "clock_step_ns",
                "transfer_ns",
                "crossover_cores_clock_step",
                "crossover_cores_transfer",
                "model_ratio_2t",
                "measured_ratio_2t",
            ],
        );
        let opt = |v: Option<f64>| v.map_or(Value::Null, |v| json!(round(1, v)));
        for w in Workload::ALL {
            let (Some(l1), Some(o1)) = (Self::find(points, w, 1, "tl2-logical"), Self::find(points, w, 1, "tl2-ordo"))
            else {
                continue;
            };
            let with = |x: f64| Crossover {
                logical_ns: 1e9 / l1.ops_per_sec,
                ordo_ns: 1e9 / o1.ops_per_sec,
                accesses: l1.stats.stamps_per_commit(),
                transfer_ns: x,
            };
            let by_transfer = with(transfer_ns);
            let by_step = clock_step_ns.map(with);
            let at_2 = |id: &str| Self::find(points, w, 2, id).map(|p| p.ops_per_sec);
            let measured = ratio(at_2("tl2-ordo"), at_2("tl2-logical"));
            annex.row(vec![
                json!(w.name()),
                json!(round(1, by_transfer.logical_ns)),
                json!(round(1, by_transfer.ordo_ns)),
                json!(round(2, by_transfer.accesses)),
                opt(clock_step_ns),
                json!(round(1, transfer_ns)),
                opt(by_step.and_then(|m| m.cores())),
                opt(by_transfer.cores()),
                json!(round(2, by_step.unwrap_or(by_transfer).ratio(2.0))),
                measured,
            ]);
        }
        annex.note(TWO_CORES_NOTE);
        annex
    }
}

impl Experiment for StmExperiment {
    fn name(&self) -> &'static str {
        "stm"
    }

    fn description(&self) -> &'static str {
        "STM transactions per second: TL2 on a logical clock and on Ordo vs one mutex; hash set, contended bank, kmeans in the spirit of STAMP (003 §4.3, Figure 15)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IDS.to_vec()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: "workload", label: "workload (1 = set, 2 = bank, 3 = kmeans)" }
    }

    fn metric(&self) -> Metric {
        Metric::TRANSACTIONS_PER_SEC
    }

    fn log_y(&self) -> bool {
        true
    }

    fn ratios(&self) -> Ratios {
        // Across workloads a ratio column means nothing; the `ratios` annex has them.
        Ratios::NONE
    }

    fn roles(&self) -> Roles {
        Roles { default: Some("tl2-ordo"), baselines: &["mutex"], floor: None, targets: &[] }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * Workload::ALL.len() * IDS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let ordo = global_clock()?;
        let data = Points::new();
        let mut measured = Vec::new();
        let mut costs: Vec<(usize, ClockCost)> = Vec::new();
        for &threads in &settings.threads {
            let run = settings.at(threads);
            let cost = clock_cost(&run, ordo);
            costs.push((threads, cost));
            for workload in Workload::ALL {
                for id in IDS {
                    sink.point(id, threads);
                    let m = measure_id(id, &run, workload, &data, ordo);
                    let mut record = Record::new(self.name(), id, &run, &m.throughput)
                        .with("workload", workload.code())
                        .with("workload_name", workload.name());
                    if id != "mutex" {
                        let commits = m.stats.commits.max(1) as f64;
                        let attempts = (m.stats.commits + m.stats.aborts).max(1) as f64;
                        record = record
                            .with("abort_rate", round(4, m.stats.abort_rate()))
                            .with("uncertain_abort_rate", round(4, m.stats.uncertain_aborts as f64 / attempts))
                            .with("timestamps_per_txn", round(3, m.stats.stamps_per_commit()))
                            .with("commit_stamps_per_txn", round(3, m.stats.commit_stamps as f64 / commits));
                    }
                    sink.push(cost.fields(record))?;
                    measured.push(Point { workload, threads, id, ops_per_sec: m.throughput.median, stats: m.stats });
                }
            }
        }
        sink.annex(Self::ratios_annex(&measured, &settings.threads))?;
        let transfer = LineTransfer::measure(settings, ordo);
        let step = clock_step(&costs, tl2_access_ns);
        sink.annex(Self::crossover_annex(&measured, step, transfer.ns, &transfer.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    #[test]
    fn every_impl_runs_every_workload_and_verifies() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        let ordo = Ordo::monotonic();
        let data = Points::new();
        for workload in Workload::ALL {
            for id in IDS {
                let m = measure_id(id, &run, workload, &data, &ordo);
                assert!(m.throughput.median > 0.0, "{id} on {workload:?}");
                assert_eq!(m.stats.commits == 0, id == "mutex", "{id} on {workload:?}: {:?}", m.stats);
            }
        }
    }

    #[test]
    fn a_tl2_access_is_the_mean_of_its_load_and_its_cas() {
        let cost =
            ClockCost { logical_now_ns: 2.0, logical_new_time_ns: 10.0, ordo_now_ns: 9.0, ordo_new_time_ns: 30.0 };
        assert_eq!(tl2_access_ns(&cost), 6.0);
    }

    #[test]
    fn annexes_pair_the_points() {
        let stats = Stats { commits: 100, aborts: 25, start_stamps: 125, commit_stamps: 75, ..Stats::default() };
        let p = |workload, threads, id, ops_per_sec| Point { workload, threads, id, ops_per_sec, stats };
        let points = vec![
            p(Workload::Bank, 1, "tl2-logical", 1e6),
            p(Workload::Bank, 1, "tl2-ordo", 0.8e6),
            p(Workload::Bank, 1, "mutex", 2e6),
            p(Workload::Bank, 2, "tl2-logical", 1.2e6),
            p(Workload::Bank, 2, "tl2-ordo", 1.5e6),
        ];
        let ratios = StmExperiment::ratios_annex(&points, &[1, 2]);
        assert_eq!(ratios.rows.len(), 2);
        assert_eq!(ratios.rows[1][2], json!(1.25), "ordo/logical at 2T");
        assert_eq!(ratios.rows[1][5], json!(1.88), "ordo 2T/1T");
        assert_eq!(ratios.rows[1][4], Value::Null, "mutex at 2T was not measured");
        assert_eq!(ratios.rows[0][10], json!(1.0), "same abort rates");
        let crossover = StmExperiment::crossover_annex(&points, Some(25.0), 50.0, "test");
        assert_eq!(crossover.rows.len(), 1);
        // t_L(1) = 1000 ns, t_O(1) = 1250 ns, k = 2: with x = 25, n* = 1 + 250 / 50; with
        // x = 50, n* = 1 + 250 / 100.
        assert_eq!(crossover.rows[0][6], json!(6.0));
        assert_eq!(crossover.rows[0][7], json!(3.5));
        assert_eq!(crossover.rows[0][8], json!(0.84), "the model at 2T, with the clock step");
        assert_eq!(crossover.rows[0][9], json!(1.25));
    }
}
