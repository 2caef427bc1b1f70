//! Threads doing interleaved add/remove on a set through the ordered log, checked against
//! a sequential model.
//!
//! The threads take turns through a shared turn counter, so every operation completes
//! before the next one (on another thread, usually another CPU) begins: the real-time
//! order is total, and a linearizable set must end exactly like the sequential model
//! applied in turn order. Reads in the middle check every prefix too.

mod common;

use common::{Rng, SetOp, pin_round_robin, take_turns, with_watchdog};
use oplog::{Config, Domain, OpLog, Ordered};
use ordo::{Clock, LogicalClock, Ordo};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// Turns per run (a few under Miri, which runs code ~100 times slower).
const TURNS: usize = if cfg!(miri) { 16 } else { 20_000 };
/// Turns of the shorter runs.
const SHORT: usize = TURNS / 4;

/// Runs `turns` operations over `threads` threads taking turns; every `read_every` turns
/// the thread whose turn it is synchronizes and compares with the model.
fn turns(config: Config, threads: usize, turns: usize, read_every: usize, seed: u64) {
    let domain = Domain::<Ordered<SetOp>>::new(config).unwrap();
    let set = OpLog::<Ordered<SetOp>>::with_domain(&domain, BTreeSet::new());
    // The schedule: which thread does which operation, decided up front.
    let mut rng = Rng::with_seed(seed);
    let schedule: Vec<(usize, SetOp)> = (0..turns)
        .map(|_| {
            let t = rng.usize(..threads);
            let k = rng.u64(..16);
            (t, if rng.bool() { SetOp::Add(k) } else { SetOp::Remove(k) })
        })
        .collect();
    let mut models = Vec::with_capacity(turns + 1);
    let mut model = BTreeSet::new();
    models.push(model.clone());
    for (_, op) in &schedule {
        op.apply_to(&mut model);
        models.push(model.clone());
    }
    let threads_of: Vec<usize> = schedule.iter().map(|&(t, _)| t).collect();
    take_turns(threads, &threads_of, |t, me| {
        set.update(schedule[t].1.clone());
        if (t + 1) % read_every == 0 {
            let seen = set.read(|s| s.clone());
            assert_eq!(seen, models[t + 1], "after turn {t} (thread {me})");
        }
    });
    assert_eq!(set.into_inner(), model);
}

#[test]
fn two_to_four_threads_per_cpu_slots_hardware_clock() {
    with_watchdog("per-cpu turns", Duration::from_secs(120), || {
        for threads in 2..=4 {
            turns(Config::per_cpu(), threads, TURNS, 7, threads as u64);
        }
    });
}

#[test]
fn two_to_four_threads_per_thread_slots() {
    with_watchdog("per-thread turns", Duration::from_secs(120), || {
        for threads in 2..=4 {
            turns(Config::per_thread(), threads, TURNS, 7, 100 + threads as u64);
        }
    });
}

#[test]
fn small_logs_and_a_tiny_cache_flush_and_evict_without_reordering() {
    with_watchdog("small logs", Duration::from_secs(120), || {
        turns(Config::per_cpu().max_log_len(3).cache_slots(1), 3, SHORT, 1000, 7);
        turns(Config::per_thread().max_log_len(2).cache_slots(1), 3, SHORT, 1000, 8);
    });
}

#[test]
fn the_logical_clock_orders_updates_too() {
    let clock: Arc<dyn Clock> = Arc::new(LogicalClock::new());
    with_watchdog("logical clock", Duration::from_secs(120), move || {
        turns(Config::per_cpu().clock(clock.clone()), 3, SHORT, 5, 11);
    });
}

#[test]
fn commit_wait_keeps_order_when_raw_order_is_not_trusted() {
    // The OS clock can give two CPUs the same reading, so raw order is not causal and
    // every ordered update waits until the clock has moved past its stamp.
    let clock: Arc<dyn Clock> = Arc::new(Ordo::monotonic());
    let d = Domain::<Ordered<SetOp>>::new(Config::per_cpu().clock(clock.clone())).unwrap();
    assert!(d.commit_wait());
    with_watchdog("commit wait", Duration::from_secs(120), move || {
        turns(Config::per_cpu().clock(clock.clone()), 3, SHORT, 5, 12);
        turns(Config::per_thread().clock(clock), 2, SHORT, 5, 13);
    });
}

#[test]
fn free_running_threads_on_disjoint_keys_read_their_own_updates() {
    // Without turns the interleaving is arbitrary, but each thread owns its keys: every
    // read a thread makes shows them as its own program order left them (the updates it
    // made completed before), and the set ends as the union of the threads' models. Short
    // logs (1, 4 and 16 operations) are handed off all the time, so backlogs fill and are
    // applied (up to the cut) while other threads read, on the concurrent path whenever a
    // read found nothing logged. (A backlog taken before the concurrent readers were
    // excluded made a thread miss its own handed-off logs here within half a second,
    // usually in the first configuration, `object::Obj::take_backlog`.)
    with_watchdog("free running", Duration::from_secs(120), || {
        let configs = [Config::per_cpu(), Config::per_cpu().rseq(false), Config::per_thread()];
        // One length under Miri, which runs code ~100 times slower.
        let logs: &[usize] = if cfg!(miri) { &[1] } else { &[1, 4, 16] };
        for (config, log) in configs.into_iter().flat_map(|c| logs.iter().map(move |&log| (c.clone(), log))) {
            let domain = Domain::<Ordered<SetOp>>::new(config.max_log_len(log)).unwrap();
            let set = OpLog::<Ordered<SetOp>>::with_domain(&domain, BTreeSet::new());
            let expected: BTreeSet<u64> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..4u64)
                    .map(|me| {
                        let set = &set;
                        s.spawn(move || {
                            pin_round_robin(me as usize);
                            let mut rng = Rng::with_seed(me + 1);
                            let mut model = BTreeSet::new();
                            let mine = me * 1000..(me + 1) * 1000;
                            for i in 0..TURNS / 2 {
                                let k = mine.start + rng.u64(..32);
                                let op = if rng.bool() { SetOp::Add(k) } else { SetOp::Remove(k) };
                                op.apply_to(&mut model);
                                set.update(op);
                                if rng.usize(..8) == 0 {
                                    let seen = set.read(|s| s.range(mine.clone()).copied().collect::<BTreeSet<_>>());
                                    assert_eq!(seen, model, "thread {me}, update {i}, logs of {log}");
                                }
                            }
                            model
                        })
                    })
                    .collect();
                hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(set.read(|s| s.clone()), expected, "logs of {log}");
        }
    });
}
