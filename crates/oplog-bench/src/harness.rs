//! The throughput runner every experiment uses.
//!
//! One measured point is "T threads hammer fresh shared state for a fixed wall-clock time".
//! For each repetition the runner:
//!
//! 1. builds the shared state with the experiment's factory (untimed);
//! 2. spawns T threads, each pinned by the [`Placement`] (thread `i` on `allowed[i % n]`);
//! 3. opens a start gate once all T are ready, so they begin together;
//! 4. sleeps for the duration, then raises the [`Stop`] flag;
//! 5. joins the workers; each returns how many operations it completed and when it stopped;
//! 6. computes `ops / (last stop − start)`, runs the experiment's check on the state, and drops
//!    the state (untimed).
//!
//! The point's result is the median over repetitions, with min and max kept ([`Throughput`]).
//! Workers poll the stop flag once per batch of operations ([`Stop::run_batched`]), so the
//! flag's cache line is read rarely and never written during the run.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use oplog::Representation;
use serde_json::Value;

use crate::pin::Placement;

/// What every experiment is asked to do: thread counts, duration, repetitions, placement,
/// and whether to run a quick version.
///
/// `quick` (`--quick`) asks every experiment for a short version: the command line already
/// shortens the duration and repetitions, and each experiment also measures fewer points
/// of its own sweeps (pick them with [`Settings::sweep`]) and smaller problem sizes, so that
/// `all --quick` stays well under a minute.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Thread counts to measure, sorted ascending, without duplicates, each ≥ 1.
    pub threads: Vec<usize>,
    /// Wall-clock time of one repetition.
    pub duration: Duration,
    /// Repetitions per point; the reported value is their median.
    pub reps: u32,
    /// Where worker threads run.
    pub placement: Placement,
    /// Run the quick version of every experiment (fewer sweep points, smaller sizes).
    pub quick: bool,
    /// `--points`: the values of the experiment's swept parameter to measure, alone
    /// ([`Settings::sweep`]); `None` for its whole sweep.
    pub points: Option<Vec<f64>>,
}

/// A value of a swept parameter, as `--points` names it.
pub trait SweepPoint: Copy {
    /// The value as a number.
    fn value(self) -> f64;
}

macro_rules! sweep_point {
    ($($t:ty),*) => {$(
        impl SweepPoint for $t {
            fn value(self) -> f64 {
                self as f64
            }
        }
    )*};
}
sweep_point!(u32, u64, usize, f64);

impl Settings {
    /// The points of a swept parameter to measure: those of `full` that `--points` names,
    /// else `full`, or `quick` with `--quick`.
    pub fn sweep<T: SweepPoint>(&self, full: &[T], quick: &[T]) -> Vec<T> {
        match &self.points {
            Some(points) => full.iter().copied().filter(|x| points.contains(&x.value())).collect(),
            None if self.quick => quick.to_vec(),
            None => full.to_vec(),
        }
    }

    /// A problem size: `full`, or `quick` with `--quick`.
    pub fn size(&self, full: usize, quick: usize) -> usize {
        if self.quick { quick } else { full }
    }

    /// The runner for one point of this configuration at `threads` threads.
    pub fn at(&self, threads: usize) -> Run<'_> {
        Run { threads, duration: self.duration, reps: self.reps, placement: &self.placement }
    }
}

/// The stop flag shared by the workers of one repetition.
#[derive(Debug, Default)]
pub struct Stop {
    /// Padded so that the polled flag never shares a line with data under test.
    flag: CachePadded<AtomicBool>,
}

impl Stop {
    /// A flag that is not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the run is over.
    #[inline]
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Ends the run: workers return at their next check.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Calls `op` in batches of `batch` (at least 1) until the flag is raised, checking it only
    /// between batches and always completing at least one batch. Returns how many times `op`
    /// ran.
    #[inline]
    pub fn run_batched(&self, batch: u64, mut op: impl FnMut()) -> u64 {
        let batch = batch.max(1);
        let mut ops = 0;
        // At least one batch, even if the thread first runs after the stop (a loaded machine
        // can leave it unscheduled for a whole short run): every point measures something,
        // and the elapsed time runs to the last worker's return, so it is counted fairly.
        loop {
            for _ in 0..batch {
                op();
            }
            ops += batch;
            if self.is_stopped() {
                return ops;
            }
        }
    }
}

/// Throughput of one point over its repetitions, in operations per second.
#[derive(Clone, Debug, PartialEq)]
pub struct Throughput {
    /// Median over repetitions (mean of the middle two for an even count).
    pub median: f64,
    /// Slowest repetition.
    pub min: f64,
    /// Fastest repetition.
    pub max: f64,
    /// Each repetition's ops/s, in the order run.
    pub samples: Vec<f64>,
    /// What the last repetition noted besides its rate, the records' extra fields (each
    /// key once): `ended_in`, the representation an OpLog implementation's object ended in
    /// ([`Throughput::ended_in`]), and an experiment's own (`notify`'s `consumed_in_run`).
    pub notes: Notes,
}

/// What a repetition noted besides its rate: key and value, each key once
/// ([`Throughput::notes`]).
pub type Notes = Vec<(&'static str, Value)>;

impl Throughput {
    /// Summarises per-repetition rates. Panics if `samples` is empty.
    pub fn from_samples(samples: Vec<f64>) -> Self {
        assert!(!samples.is_empty(), "a throughput needs at least one sample");
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Self { median: median(&samples), min, max, samples, notes: Vec::new() }
    }

    /// This throughput, noting `value` under `key` (replacing an earlier note of `key`).
    pub fn note(mut self, key: &'static str, value: impl Into<Value>) -> Self {
        self.notes.retain(|(k, _)| *k != key);
        self.notes.push((key, value.into()));
        self
    }

    /// This throughput, noting as `ended_in` that the object measured ended its last
    /// repetition in `representation` (the adaptive policy's choice in a default domain,
    /// named by [`representation_name`]); nothing for `None` (an implementation not built
    /// on OpLog).
    pub fn ended_in(self, representation: Option<Representation>) -> Self {
        match representation {
            Some(r) => self.note("ended_in", representation_name(r)),
            None => self,
        }
    }

    /// What was noted under `key`, if anything.
    pub fn noted(&self, key: &str) -> Option<&Value> {
        self.notes.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// How records and annexes name a representation: `logged`, `direct` (`adaptive` is a
/// domain's setting, never where an object is).
pub fn representation_name(representation: Representation) -> &'static str {
    match representation {
        Representation::Logged => "logged",
        Representation::Direct => "direct",
        Representation::Adaptive => "adaptive",
    }
}

/// The median of `values`: the middle one, or the mean of the middle two for an even count.
/// Panics if `values` is empty.
pub fn median(values: &[f64]) -> f64 {
    assert!(!values.is_empty(), "median of no values");
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 }
}

/// The outcome of one repetition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepResult {
    /// Operations completed by all workers together.
    pub ops: u64,
    /// From the opening of the start gate to the last worker's return.
    pub elapsed: Duration,
}

impl RepResult {
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// Runner for one point: a thread count with the settings' duration, reps and placement.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// Number of worker threads.
    pub threads: usize,
    /// Wall-clock time of one repetition.
    pub duration: Duration,
    /// Number of repetitions.
    pub reps: u32,
    /// Where the workers run.
    pub placement: &'a Placement,
}

impl Run<'_> {
    /// Measures throughput: for each repetition, `make` builds fresh shared state and every
    /// thread runs `worker(&state, thread_index, &stop)`, which returns its operation count.
    pub fn throughput<S, M, W>(&self, make: M, worker: W) -> Throughput
    where
        S: Sync,
        M: FnMut() -> S,
        W: Fn(&S, usize, &Stop) -> u64 + Sync,
    {
        self.throughput_checked(make, worker, |_, _| {})
    }

    /// Like [`Run::throughput`], and after each repetition calls `check(&state, total_ops)`
    /// before the state is dropped (untimed), e.g. to verify that no update was lost. The
    /// check reports a violation by panicking.
    pub fn throughput_checked<S, M, W, C>(&self, mut make: M, worker: W, mut check: C) -> Throughput
    where
        S: Sync,
        M: FnMut() -> S,
        W: Fn(&S, usize, &Stop) -> u64 + Sync,
        C: FnMut(&S, u64),
    {
        let samples = (0..self.reps.max(1))
            .map(|_| {
                let shared = make();
                let rep = self.run_once(&shared, &worker);
                check(&shared, rep.ops);
                drop(shared);
                rep.ops_per_sec()
            })
            .collect();
        Throughput::from_samples(samples)
    }

    /// Measures `n` implementations at this point side by side: repetition `r` of every one
    /// runs before repetition `r + 1` of any, so that a change in the host's state during
    /// the point (the host behind this machine's virtual CPUs changes between runs and within
    /// one: a mutex at two threads measured 30M ops/s in one minute and 90M in another) falls
    /// on all of them alike, and the ratios the verdict reports compare like with like.
    /// `measure(i, run)` measures implementation `i` once (`run.reps` is 1) and returns its
    /// throughput and what else it observed; the result holds, per implementation, its
    /// throughput over all repetitions (with its last repetition's [`Throughput::notes`]) and
    /// what its last repetition observed. `before(i)`
    /// runs before implementation `i`'s first repetition (progress).
    pub fn side_by_side<X>(
        &self,
        n: usize,
        mut before: impl FnMut(usize),
        mut measure: impl FnMut(usize, &Run<'_>) -> (Throughput, X),
    ) -> Vec<(Throughput, X)> {
        let once = Run { reps: 1, ..*self };
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut last: Vec<Option<(Notes, X)>> = (0..n).map(|_| None).collect();
        for rep in 0..self.reps.max(1) {
            for i in 0..n {
                if rep == 0 {
                    before(i);
                }
                let (t, x) = measure(i, &once);
                samples[i].extend(t.samples);
                last[i] = Some((t.notes, x));
            }
        }
        samples
            .into_iter()
            .zip(last)
            .map(|(s, last)| {
                let (notes, x) = last.expect("every implementation was measured");
                (Throughput { notes, ..Throughput::from_samples(s) }, x)
            })
            .collect()
    }

    /// Runs one timed repetition of `worker` on `threads` pinned threads over `shared`.
    ///
    /// Panics if a thread cannot be spawned (after stopping the ones already running) and
    /// re-raises a worker's panic.
    pub fn run_once<S, W>(&self, shared: &S, worker: &W) -> RepResult
    where
        S: Sync,
        W: Fn(&S, usize, &Stop) -> u64 + Sync,
    {
        self.run_threads(shared, worker, true)
    }

    /// Runs a fixed amount of work once: like [`Run::run_once`], but the stop flag is never
    /// raised and the repetition lasts until every worker has returned (the settings'
    /// duration is not used). `elapsed` runs from the start gate to the last return.
    pub fn run_to_completion<S, W>(&self, shared: &S, worker: &W) -> RepResult
    where
        S: Sync,
        W: Fn(&S, usize, &Stop) -> u64 + Sync,
    {
        self.run_threads(shared, worker, false)
    }

    /// Spawns the pinned workers, opens the gate, and, when `timed`, raises the stop flag
    /// after the duration; then joins them.
    fn run_threads<S, W>(&self, shared: &S, worker: &W, timed: bool) -> RepResult
    where
        S: Sync,
        W: Fn(&S, usize, &Stop) -> u64 + Sync,
    {
        assert!(self.threads >= 1, "a run needs at least one thread");
        let stop = Stop::new();
        let gate = StartGate::default();
        thread::scope(|scope| {
            let mut handles = Vec::with_capacity(self.threads);
            let mut spawn_error = None;
            for index in 0..self.threads {
                let (stop, gate, placement) = (&stop, &gate, self.placement);
                let spawned = thread::Builder::new().name(format!("bench-{index}")).spawn_scoped(scope, move || {
                    placement.pin_current(index);
                    gate.arrive_and_wait();
                    let ops = worker(shared, index, stop);
                    (ops, Instant::now())
                });
                match spawned {
                    Ok(handle) => handles.push(handle),
                    Err(e) => {
                        spawn_error = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = spawn_error {
                // Let the threads that did start finish at once, then report.
                stop.stop();
                gate.open();
                for handle in handles {
                    let _ = handle.join();
                }
                panic!("cannot spawn benchmark thread {} of {}: {e}", gate.arrived(), self.threads);
            }

            gate.wait_for(self.threads);
            let start = Instant::now();
            gate.open();
            if timed {
                thread::sleep(self.duration);
                stop.stop();
            }

            let mut ops = 0u64;
            let mut end = start;
            for handle in handles {
                match handle.join() {
                    Ok((n, finished)) => {
                        ops += n;
                        end = end.max(finished);
                    }
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            RepResult { ops, elapsed: end - start }
        })
    }
}

/// Releases all workers at once, after every one of them is pinned and ready.
#[derive(Debug, Default)]
struct StartGate {
    arrived: CachePadded<AtomicUsize>,
    open: CachePadded<AtomicBool>,
}

impl StartGate {
    /// Worker side: announce readiness, then wait until the gate opens.
    fn arrive_and_wait(&self) {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        while !self.open.load(Ordering::Acquire) {
            thread::yield_now();
        }
    }

    /// Main side: wait until `n` workers have arrived.
    fn wait_for(&self, n: usize) {
        while self.arrived.load(Ordering::Acquire) < n {
            thread::yield_now();
        }
    }

    fn arrived(&self) -> usize {
        self.arrived.load(Ordering::Acquire)
    }

    fn open(&self) {
        self.open.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn side_by_side_interleaves_repetitions_and_keeps_every_sample() {
        let placement = Placement::from_process();
        let run = Run { threads: 1, duration: Duration::from_millis(1), reps: 3, placement: &placement };
        let mut order = Vec::new();
        let mut firsts = Vec::new();
        let measured = run.side_by_side(
            2,
            |i| firsts.push(i),
            |i, once| {
                assert_eq!(once.reps, 1, "one repetition at a time");
                order.push(i);
                let rate = (10 * (i + 1) + order.len()) as f64;
                (Throughput::from_samples(vec![rate]), order.len())
            },
        );
        assert_eq!(order, [0, 1, 0, 1, 0, 1], "repetition r of each before r + 1 of any");
        assert_eq!(firsts, [0, 1], "progress once per implementation, before its first repetition");
        assert_eq!(measured[0].0.samples, [11.0, 13.0, 15.0]);
        assert_eq!(measured[1].0.samples, [22.0, 24.0, 26.0]);
        assert_eq!((measured[0].0.median, measured[1].1), (13.0, 6), "the median, and what the last repetition saw");
    }

    #[test]
    fn side_by_side_keeps_the_representation_of_the_last_repetition() {
        let placement = Placement::from_process();
        let run = Run { threads: 1, duration: Duration::from_millis(1), reps: 3, placement: &placement };
        let mut rep = 0;
        let measured = run.side_by_side(
            2,
            |_| {},
            |i, _| {
                rep += 1;
                let ended = (i == 0).then_some(if rep < 5 { Representation::Logged } else { Representation::Direct });
                (Throughput::from_samples(vec![1.0]).ended_in(ended), ())
            },
        );
        assert_eq!(measured[0].0.noted("ended_in"), Some(&Value::from("direct")), "the last repetition's");
        assert_eq!(measured[1].0.noted("ended_in"), None, "nothing noted for an implementation that does not choose");
        let noted = Throughput::from_samples(vec![1.0]).note("seen", 0.5).note("seen", 0.25);
        assert_eq!(noted.notes, [("seen", Value::from(0.25))], "a key is noted once, the last value");
    }

    #[test]
    fn median_odd_even_and_unsorted() {
        assert_eq!(median(&[5.0]), 5.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[10.0, 10.0, 1.0]), 10.0);
    }

    #[test]
    #[should_panic(expected = "median of no values")]
    fn median_of_nothing_panics() {
        median(&[]);
    }

    #[test]
    fn throughput_keeps_min_max_and_samples() {
        let t = Throughput::from_samples(vec![3.0, 9.0, 1.0]);
        assert_eq!((t.median, t.min, t.max), (3.0, 1.0, 9.0));
        assert_eq!(t.samples, vec![3.0, 9.0, 1.0]);
    }

    #[test]
    fn run_batched_counts_whole_batches() {
        let stop = Stop::new();
        let mut calls = 0u64;
        let ops = stop.run_batched(8, || {
            calls += 1;
            if calls == 20 {
                stop.stop();
            }
        });
        // Stopped during the third batch; the batch completes.
        assert_eq!(ops, 24);
        assert_eq!(calls, 24);

        let stop = Stop::new();
        let ops = stop.run_batched(0, || stop.stop());
        assert_eq!(ops, 1, "a batch of 0 is treated as 1");
    }

    #[test]
    fn runner_counts_every_op_and_checks_each_rep() {
        let placement = Placement::unpinned();
        let run = Run { threads: 3, duration: Duration::from_millis(10), reps: 3, placement: &placement };
        let mut made = 0;
        let mut checked = 0;
        let t = run.throughput_checked(
            || {
                made += 1;
                AtomicU64::new(0)
            },
            |counter, _, stop| {
                stop.run_batched(16, || {
                    counter.fetch_add(1, Ordering::Relaxed);
                })
            },
            |counter, ops| {
                checked += 1;
                assert!(ops > 0);
                assert_eq!(counter.load(Ordering::Relaxed), ops);
            },
        );
        assert_eq!((made, checked), (3, 3));
        assert_eq!(t.samples.len(), 3);
        assert!(t.min > 0.0 && t.min <= t.median && t.median <= t.max);
    }

    #[test]
    fn every_thread_index_runs_once() {
        let placement = Placement::from_process();
        let run = Run { threads: 4, duration: Duration::from_millis(1), reps: 1, placement: &placement };
        let seen: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
        let rep = run.run_once(&seen, &|seen: &Vec<AtomicU64>, i, _: &Stop| {
            seen[i].fetch_add(1, Ordering::Relaxed);
            1
        });
        assert_eq!(rep.ops, 4);
        assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn fixed_work_runs_until_every_worker_returns() {
        let placement = Placement::from_process();
        // A duration far longer than the work: completion must not wait for it.
        let run = Run { threads: 2, duration: Duration::from_secs(60), reps: 1, placement: &placement };
        let total = AtomicU64::new(0);
        let started = Instant::now();
        let rep = run.run_to_completion(&total, &|total: &AtomicU64, i, stop: &Stop| {
            assert!(!stop.is_stopped());
            total.fetch_add(1000 + i as u64, Ordering::Relaxed);
            1000
        });
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(rep.ops, 2000);
        assert_eq!(total.load(Ordering::Relaxed), 2001);
    }

    /// One thread, 1 ms, one repetition, unpinned, the whole sweep.
    fn one_ms() -> Settings {
        Settings {
            threads: vec![1],
            duration: Duration::from_millis(1),
            reps: 1,
            placement: Placement::unpinned(),
            quick: false,
            points: None,
        }
    }

    #[test]
    fn quick_settings_pick_the_quick_sweep() {
        let mut settings = one_ms();
        assert_eq!(settings.sweep(&[0u32, 50, 100], &[50]), [0, 50, 100]);
        assert_eq!(settings.size(1_000_000, 1000), 1_000_000);
        settings.quick = true;
        assert_eq!(settings.sweep(&[0u32, 50, 100], &[50]), [50]);
        assert_eq!(settings.size(1_000_000, 1000), 1000);
    }

    #[test]
    fn points_pick_from_the_full_sweep_in_its_order() {
        let mut settings = Settings { quick: true, points: Some(vec![100.0, 0.0]), ..one_ms() };
        assert_eq!(settings.sweep(&[0u32, 50, 100], &[50]), [0, 100]);
        assert_eq!(settings.sweep(&[0.125, 1.0], &[1.0]), [] as [f64; 0]);
        settings.points = Some(vec![4096.0]);
        assert_eq!(settings.sweep(&[1usize, 4096, 65_536], &[1]), [4096]);
    }

    #[test]
    #[should_panic(expected = "worker failed")]
    fn worker_panic_propagates() {
        let placement = Placement::unpinned();
        let run = Run { threads: 2, duration: Duration::from_millis(1), reps: 1, placement: &placement };
        run.throughput(|| (), |_, _, _| panic!("worker failed"));
    }
}
