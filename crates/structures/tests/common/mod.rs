//! Helpers shared by the integration tests: schedules checked against a model with threads
//! taking turns, a watchdog, pinning and a deterministic generator.
#![allow(dead_code)]

use oplog::{Config, Domain, LogKind};
use oplog_structures::spec::{Concurrent, Model};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// Runs `f`, aborting the process (which no hang survives) if it takes longer than `limit`.
pub fn with_watchdog<R>(name: &str, limit: Duration, f: impl FnOnce() -> R) -> R {
    let (tx, rx) = mpsc::channel::<()>();
    let name = name.to_string();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(limit) == Err(mpsc::RecvTimeoutError::Timeout) {
            eprintln!("watchdog: `{name}` did not finish within {limit:?}: deadlock or livelock");
            std::process::abort();
        }
    });
    let r = f();
    drop(tx);
    watchdog.join().unwrap();
    r
}

/// Pins the calling thread round-robin over the CPUs this process may use.
pub fn pin_round_robin(i: usize) {
    let cpus = ordo::cpu::allowed();
    ordo::cpu::pin_current_thread(cpus[i % cpus.len()]).expect("pin to an allowed CPU");
}

/// A small deterministic generator (xorshift), so failures reproduce.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// Next value.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// A value below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// A schedule: which thread runs which operation, in turn order, with the model's
/// response to each.
pub struct Schedule<M: Model> {
    pub steps: Vec<(usize, M::Op, M::Response)>,
    pub final_state: M,
}

/// Builds a schedule of `turns` operations over `threads` threads: `next` picks each
/// operation from the model's current state (so it can respect the identity rule).
pub fn schedule<M: Model>(
    threads: usize,
    turns: usize,
    seed: u64,
    mut next: impl FnMut(&mut Rng, &M) -> M::Op,
) -> Schedule<M> {
    let mut rng = Rng(seed | 1);
    let mut model = M::default();
    let steps = (0..turns)
        .map(|_| {
            let thread = rng.below(threads as u64) as usize;
            let op = next(&mut rng, &model);
            let response = model.apply(&op);
            (thread, op, response)
        })
        .collect();
    Schedule { steps, final_state: model }
}

/// Runs `schedule` with its threads taking turns through a shared counter, so every
/// operation completes before the next begins (usually on another thread and CPU): the
/// real-time order is total, and a linearizable implementation must answer each operation
/// exactly as the model did. Every operation runs on each of `objects` in turn (objects
/// sharing a domain with a tiny log cache evict each other's logs).
pub fn run_turns<M: Model, I: Concurrent<M> + ?Sized>(
    what: &str,
    objects: &[&I],
    threads: usize,
    schedule: &Schedule<M>,
) {
    let turn = AtomicUsize::new(0);
    let steps = &schedule.steps;
    std::thread::scope(|s| {
        for me in 0..threads {
            let turn = &turn;
            s.spawn(move || {
                pin_round_robin(me);
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    loop {
                        let t = turn.load(Ordering::Acquire);
                        if t >= steps.len() {
                            return;
                        }
                        let (owner, op, expected) = &steps[t];
                        if *owner != me {
                            // More threads than CPUs: let the thread whose turn it is run.
                            std::thread::yield_now();
                            continue;
                        }
                        for (i, object) in objects.iter().enumerate() {
                            let got = object.call(op);
                            assert_eq!(&got, expected, "{what}: object {i}, turn {t} (thread {me}): {op:?}");
                        }
                        turn.store(t + 1, Ordering::Release);
                    }
                }));
                if let Err(panic) = result {
                    // Release the other threads, then fail.
                    turn.store(usize::MAX, Ordering::Release);
                    std::panic::resume_unwind(panic);
                }
            });
        }
    });
}

/// Domain configurations every OpLog variant is tested under: per-CPU and per-thread slots
/// with the default limits, and with tiny logs (frequent flushes) and a one-slot log cache
/// (every other object's update evicts).
pub fn configs() -> Vec<(&'static str, Config)> {
    vec![
        ("per-cpu", Config::per_cpu()),
        ("per-thread", Config::per_thread()),
        ("per-cpu, log 3, 1 slot", Config::per_cpu().max_log_len(3).cache_slots(1)),
        ("per-thread, log 2, 1 slot", Config::per_thread().max_log_len(2).cache_slots(1)),
    ]
}

/// A fresh domain for `config`.
pub fn domain<L: LogKind>(config: &Config) -> Arc<Domain<L>> {
    Domain::new(config.clone()).expect("test configurations are valid")
}

/// The thread counts the turn tests run with.
pub const THREADS: [usize; 3] = [2, 3, 4];

/// The watchdog limit of one test.
pub const LIMIT: Duration = Duration::from_secs(120);
