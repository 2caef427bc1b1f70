//! The LRU list: every variant against the model, free-running threads on their own keys,
//! absorption counted.

mod common;

use common::{LIMIT, Rng, THREADS, configs, domain, pin_round_robin, run_turns, schedule, with_watchdog};
use oplog::Config;
use oplog_model::lru::{LruModel, LruOp};
use oplog_model::{Concurrent, Model};
use oplog_structures::applied::Stats;
use oplog_structures::lru::{ConcurrentLru, MutexLru, OpLogLru};

fn next_op(rng: &mut Rng, _: &Vec<u64>) -> LruOp {
    match rng.u8(..20) {
        0..3 => LruOp::Evict,
        3..5 => LruOp::Remove(rng.u64(..12)),
        // Runs of the same key, so local absorption has something to absorb.
        5..8 => LruOp::Touch(0),
        _ => LruOp::Touch(rng.u64(..12)),
    }
}

#[test]
fn every_variant_matches_the_model_with_threads_taking_turns() {
    with_watchdog("lru turns", LIMIT, || {
        for threads in THREADS {
            let s = schedule(&LruModel, threads, 1_500, 41 + threads as u64, next_op);
            let mutex = MutexLru::new();
            run_turns("mutex", &[&mutex as &dyn ConcurrentLru<u64>], threads, &s);
            assert_eq!(mutex.order(), s.final_state, "mutex: the final order");
            for (name, config) in configs() {
                let d = domain(&config);
                let (a, b) = (OpLogLru::new(&d), OpLogLru::new(&d));
                run_turns(&format!("oplog {name}"), &[&a as &dyn ConcurrentLru<u64>, &b], threads, &s);
                assert_eq!((a.order(), b.order()), (s.final_state.clone(), s.final_state.clone()), "oplog {name}");
            }
        }
    });
}

#[test]
fn free_running_threads_on_their_own_keys_keep_their_own_recency_order() {
    // Keys are disjoint per thread, so the relative order of one thread's keys is decided by
    // that thread's program order alone.
    with_watchdog("lru free running", LIMIT, || {
        let variants: Vec<(&str, Box<dyn ConcurrentLru<u64>>)> = vec![
            ("mutex", Box::new(MutexLru::new())),
            ("oplog per-cpu", Box::new(OpLogLru::new(&domain(&Config::per_cpu())))),
            ("oplog per-thread", Box::new(OpLogLru::new(&domain(&Config::per_thread())))),
        ];
        for (name, lru) in &variants {
            let lru = &**lru;
            let models: Vec<Vec<u64>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..3u64)
                    .map(|me| {
                        s.spawn(move || {
                            pin_round_robin(me as usize);
                            let mut rng = Rng::with_seed(me + 5);
                            let mut model = LruModel.init();
                            for _ in 0..20_000 {
                                let k = me << 32 | rng.u64(..20);
                                let op = if rng.u8(..10) == 0 { LruOp::Remove(k) } else { LruOp::Touch(k) };
                                LruModel.step(&mut model, &op);
                                lru.call(&op);
                            }
                            model
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let order = lru.order();
            for (me, model) in models.iter().enumerate() {
                let mine: Vec<u64> = order.iter().copied().filter(|k| k >> 32 == me as u64).collect();
                assert_eq!(&mine, model, "{name}: thread {me}");
            }
            // Evicting drains the list in that order.
            let mut evicted = Vec::new();
            while let Some(k) = lru.evict() {
                evicted.push(k);
            }
            assert_eq!(evicted, order, "{name}");
        }
    });
}

#[test]
fn a_run_of_updates_of_one_key_is_absorbed_into_one() {
    // Pinned, so per-CPU updates all land in one CPU's log.
    pin_round_robin(0);
    for config in [Config::per_cpu(), Config::per_thread()] {
        let lru = OpLogLru::new(&domain(&config));
        for k in 0..10u64 {
            for _ in 0..1_000 {
                lru.touch(k);
            }
            lru.remove(k);
            lru.touch(k);
        }
        assert_eq!(lru.order(), (0..10).collect::<Vec<_>>());
        // 10 020 updates; each key's run collapsed into its last touch.
        assert_eq!(lru.stats(), Stats { executed: 10, absorbed_globally: 0 }, "{config:?}");
        // Interleaved keys are not absorbed (only the log's last entry is examined).
        for _ in 0..5 {
            lru.touch(1);
            lru.touch(2);
        }
        assert_eq!(lru.evict(), Some(0));
        assert_eq!(lru.stats().executed, 20);
    }
}
