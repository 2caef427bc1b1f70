//! Soak: long runs whose resident memory must stay bounded.
//!
//! * `updates_without_reads_keep_memory_bounded`: 2 threads doing `OPLOG_SOAK_UPDATES`
//!   updates in all (default 10⁸ in release builds, 2·10⁶ in debug builds) and never
//!   reading, on a counter, an ordered set and an unordered set. Without reads, logs are
//!   applied only when they fill (the update that fills one synchronizes), so this is where
//!   a log that never flushes, or storage that is never reused, would show.
//! * `mixed_run_stays_correct_and_bounded`: `OPLOG_SOAK_SECS` seconds (default 2) of 3
//!   threads updating and reading counters and ordered sets that collide in their log
//!   caches, checked against per-thread models at the end.
//!
//! Resident memory comes from `/proc/self/statm`, sampled every few milliseconds by a
//! monitor thread; each test prints its baseline and peak (run with `--nocapture`), and
//! fails if the peak exceeds the baseline taken after warm-up by more than
//! [`GROWTH_LIMIT`]. `.ci/run` runs the release build with the full count; `.ci/run --full`
//! adds the 10-minute mixed run.

mod common;

use common::{Rng, SetOp, with_watchdog};
use oplog::{Config, Counter, CounterLog, Domain, OpLog, Ordered, Unordered, Update};
use oplog_lincheck::env;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Environment variable: total updates of the update-only run.
const UPDATES_VAR: &str = "OPLOG_SOAK_UPDATES";
/// Environment variable: seconds of the mixed run.
const SECS_VAR: &str = "OPLOG_SOAK_SECS";
/// Most the resident set may grow past its warmed-up baseline.
const GROWTH_LIMIT: u64 = 32 << 20;
/// Keys each set workload cycles through.
const KEYS: u64 = 1024;

/// One soak at a time: resident memory is per process.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Resident set size in bytes, from `/proc/self/statm` (`None` where there is none, and
/// under Miri, which cannot read it).
fn resident_bytes() -> Option<u64> {
    if cfg!(miri) {
        return None;
    }
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions; _SC_PAGESIZE is always supported on Linux.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * page.max(1) as u64)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// Raises its flag when dropped, by a normal exit or by a panic unwinding.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Samples the resident set while `run` works; `run` calls the callback it is given once
/// it is warmed up, which takes the baseline. Returns (baseline, peak) in bytes, or `None`
/// where resident memory cannot be read.
fn watch_memory(run: impl FnOnce(&(dyn Fn() + Sync))) -> Option<(u64, u64)> {
    if resident_bytes().is_none() {
        run(&|| {});
        return None;
    }
    let baseline = AtomicU64::new(0);
    let peak = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                if baseline.load(Ordering::SeqCst) != 0 {
                    peak.fetch_max(resident_bytes().unwrap_or(0), Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let warmed = || {
            let now = resident_bytes().unwrap_or(0);
            if baseline.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                peak.fetch_max(now, Ordering::SeqCst);
            }
        };
        // Stops the watcher however `run` ends: a failed assertion in it must fail the test
        // at once, not leave the scope waiting for the watcher until the watchdog aborts.
        let stop_watching = StopOnDrop(&done);
        run(&warmed);
        warmed();
        peak.fetch_max(resident_bytes().unwrap_or(0), Ordering::SeqCst);
        drop(stop_watching);
    });
    Some((baseline.into_inner(), peak.into_inner()))
}

/// Reports and checks a run's memory.
fn check_memory(what: &str, detail: &str, memory: Option<(u64, u64)>) {
    match memory {
        None => eprintln!("soak {what}: {detail}; resident memory not measurable here"),
        Some((baseline, peak)) => {
            eprintln!(
                "soak {what}: {detail}; resident memory {:.1} MiB after warm-up, peak {:.1} MiB (+{:.1} MiB)",
                mib(baseline),
                mib(peak),
                mib(peak.saturating_sub(baseline))
            );
            assert!(
                peak <= baseline + GROWTH_LIMIT,
                "{what}: resident memory grew from {:.1} MiB to {:.1} MiB (limit +{:.0} MiB)",
                mib(baseline),
                mib(peak),
                mib(GROWTH_LIMIT)
            );
        }
    }
}

/// Runs `update(thread, i)` for `i` in `0..per_thread` on 2 threads, calling `warmed` once
/// both are a tenth of the way through.
fn two_threads(per_thread: u64, warmed: &(dyn Fn() + Sync), update: impl Fn(u64, u64) + Sync) {
    let progress = AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..2 {
            let (update, progress) = (&update, &progress);
            s.spawn(move || {
                for i in 0..per_thread {
                    update(t, i);
                    if i == per_thread / 10 && progress.fetch_add(1, Ordering::SeqCst) == 1 {
                        warmed();
                    }
                }
            });
        }
    });
}

/// Inserts or removes keys of a bounded range, so the set itself stays small.
#[derive(Debug)]
struct Toggle(u64);

impl Update for Toggle {
    type Target = BTreeSet<u64>;
    fn exec(self, set: &mut BTreeSet<u64>) {
        if !set.remove(&self.0) {
            set.insert(self.0);
        }
    }
}

#[test]
fn updates_without_reads_keep_memory_bounded() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let default = if cfg!(miri) {
        400
    } else if cfg!(debug_assertions) {
        2_000_000
    } else {
        100_000_000
    };
    let total = env::number(UPDATES_VAR, default, 2).unwrap_or_else(|e| panic!("{e}"));
    let per_thread = total / 2;
    let limit = Duration::from_secs(600);
    with_watchdog("soak: updates without reads", limit, || {
        let d = Domain::<CounterLog>::new(Config::per_cpu()).unwrap();
        let c = Counter::with_domain(&d, 0);
        soak_updates("counter, per-CPU", per_thread, |_, _| c.inc());
        assert_eq!(c.read() as u64, 2 * per_thread);

        let d = Domain::<Ordered<Toggle>>::new(Config::per_cpu()).unwrap();
        let set = OpLog::with_domain(&d, BTreeSet::new());
        soak_updates("ordered set, per-CPU", per_thread, |t, i| set.update(Toggle(t * KEYS + i % KEYS)));
        // Each thread toggled each of its keys per_thread / KEYS times (plus the rest).
        let odd = (0..KEYS).filter(|k| (per_thread / KEYS + u64::from(*k < per_thread % KEYS)) % 2 == 1).count();
        assert_eq!(set.read(|s| s.len()), 2 * odd);

        let d = Domain::<Unordered<SetOp>>::new(Config::per_thread()).unwrap();
        let set = OpLog::with_domain(&d, BTreeSet::new());
        soak_updates("unordered set, per-thread", per_thread, |t, i| set.update(SetOp::Add(t * KEYS + i % KEYS)));
        assert_eq!(set.read(|s| s.len()) as u64, 2 * KEYS.min(per_thread));
    });
}

/// Runs `update` on 2 threads, `per_thread` times each, watching and checking memory.
fn soak_updates(what: &str, per_thread: u64, update: impl Fn(u64, u64) + Sync) {
    let start = Instant::now();
    let memory = watch_memory(|warmed| two_threads(per_thread, warmed, update));
    let detail = format!("{} updates in {:.1} s", 2 * per_thread, start.elapsed().as_secs_f64());
    check_memory(what, &detail, memory);
}

#[test]
fn mixed_run_stays_correct_and_bounded() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let secs = env::number(SECS_VAR, 2, 1).unwrap_or_else(|e| panic!("{e}"));
    let run_for = if cfg!(miri) { Duration::from_millis(1) } else { Duration::from_secs(secs) };
    const THREADS: u64 = 3;
    const OBJECTS: usize = 4;
    with_watchdog("soak: mixed run", run_for + Duration::from_secs(300), || {
        // Two slots per cache for four objects of each kind: they keep evicting each other.
        let counters_domain = Domain::<CounterLog>::new(Config::per_thread().cache_slots(2)).unwrap();
        let sets_domain = Domain::<Ordered<SetOp>>::new(Config::per_cpu().cache_slots(2).max_log_len(32)).unwrap();
        let counters: Vec<Counter> = (0..OBJECTS).map(|_| Counter::with_domain(&counters_domain, 0)).collect();
        let sets: Vec<OpLog<Ordered<SetOp>>> =
            (0..OBJECTS).map(|_| OpLog::with_domain(&sets_domain, BTreeSet::new())).collect();
        let stop = AtomicBool::new(false);
        let operations = AtomicU64::new(0);
        let start = Instant::now();
        let mut results = Vec::new();
        let memory = watch_memory(|warmed| {
            results = std::thread::scope(|s| {
                let workers: Vec<_> = (0..THREADS)
                    .map(|t| {
                        let (counters, sets, stop, operations) = (&counters, &sets, &stop, &operations);
                        s.spawn(move || {
                            let mut rng = Rng::with_seed(t + 1);
                            let mut sums = vec![0i64; OBJECTS];
                            let mut models = vec![BTreeSet::new(); OBJECTS];
                            let mut n = 0u64;
                            const BATCH: u64 = if cfg!(miri) { 16 } else { 256 };
                            while !stop.load(Ordering::Relaxed) {
                                for _ in 0..BATCH {
                                    let i = rng.usize(..OBJECTS);
                                    match rng.u64(..100) {
                                        0 => {
                                            counters[i].read();
                                        }
                                        1 => {
                                            // This thread's keys are exactly as its model says.
                                            let mine = sets[i].read(|s| {
                                                s.range(t * 100_000..(t + 1) * 100_000)
                                                    .copied()
                                                    .collect::<BTreeSet<_>>()
                                            });
                                            assert_eq!(mine, models[i], "thread {t}, set {i}");
                                        }
                                        2..50 => {
                                            let d = rng.i64(-2..3);
                                            counters[i].add(d);
                                            sums[i] += d;
                                        }
                                        _ => {
                                            let k = t * 100_000 + rng.u64(..64);
                                            let op = if rng.bool() { SetOp::Add(k) } else { SetOp::Remove(k) };
                                            op.apply_to(&mut models[i]);
                                            sets[i].update(op);
                                        }
                                    }
                                }
                                n += BATCH;
                                if cfg!(miri) {
                                    break;
                                }
                            }
                            operations.fetch_add(n, Ordering::Relaxed);
                            (sums, models)
                        })
                    })
                    .collect();
                std::thread::sleep(run_for / 10);
                warmed();
                while start.elapsed() < run_for {
                    std::thread::sleep(Duration::from_millis(10));
                }
                stop.store(true, Ordering::Relaxed);
                workers.into_iter().map(|w| w.join().unwrap()).collect::<Vec<_>>()
            });
        });
        for i in 0..OBJECTS {
            assert_eq!(counters[i].read(), results.iter().map(|(sums, _)| sums[i]).sum::<i64>(), "counter {i}");
            let expected: BTreeSet<u64> = results.iter().flat_map(|(_, models)| models[i].iter().copied()).collect();
            assert_eq!(sets[i].read(|s| s.clone()), expected, "set {i}");
        }
        check_memory(
            "mixed run",
            &format!(
                "{} operations on {THREADS} threads in {:.1} s",
                operations.load(Ordering::Relaxed),
                start.elapsed().as_secs_f64()
            ),
            memory,
        );
    });
}
