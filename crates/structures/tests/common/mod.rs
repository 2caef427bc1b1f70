//! Helpers shared by the integration tests: schedules checked against a model with threads
//! taking turns, and the domain configurations every OpLog variant is tested under. The
//! watchdog, pinning and the seeded generator are the workspace's (`oplog_lincheck::testkit`).
#![allow(dead_code)]

use oplog::{Config, Domain, LogKind};
pub use oplog_lincheck::testkit::{Rng, pin_round_robin, with_watchdog};
use oplog_model::{Concurrent, Model};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A schedule: which thread runs which operation, in turn order, with the model's
/// response to each.
pub struct Schedule<M: Model> {
    pub steps: Vec<(usize, M::Op, M::Ret)>,
    pub final_state: M::State,
}

/// Builds a schedule of `turns` operations over `threads` threads: `next` picks each
/// operation from the model's current state (so it can respect the identity rule).
pub fn schedule<M: Model>(
    model: &M,
    threads: usize,
    turns: usize,
    seed: u64,
    mut next: impl FnMut(&mut Rng, &M::State) -> M::Op,
) -> Schedule<M> {
    let mut rng = Rng::with_seed(seed);
    let mut state = model.init();
    let steps = (0..turns)
        .map(|_| {
            let thread = rng.usize(..threads);
            let op = next(&mut rng, &state);
            let response = model.step(&mut state, &op);
            (thread, op, response)
        })
        .collect();
    Schedule { steps, final_state: state }
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
) where
    M::Op: Sync,
    M::Ret: Sync,
{
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
