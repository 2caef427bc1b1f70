//! The reverse map: every variant against the model, absorption counted, bad input.

mod common;

use common::{LIMIT, Rng, Schedule, THREADS, configs, domain, pin_round_robin, run_turns, schedule, with_watchdog};
use oplog::Config;
use oplog_model::rmap::{self as model, RmapModel, RmapOp, RmapRet};
use oplog_model::{Concurrent, Model};
use oplog_structures::applied::Stats;
use oplog_structures::rmap::{LockFreeRmap, Mapping, MutexRmap, OpLogRmap, OrderedOpLogRmap, Rmap, RmapError};
use std::collections::BTreeSet;

/// A fixed pool of mappings of one 64-page file: overlapping, nested, adjacent.
fn pool() -> Vec<Mapping> {
    (0..12u64)
        .map(|id| {
            let start = (id * 7) % 50;
            Mapping::new(id, start..start + 1 + (id * 13) % 20).unwrap()
        })
        .collect()
}

/// The model's name for a mapping.
fn in_model(m: Mapping) -> model::Mapping {
    model::Mapping { start: m.start() as i64, end: m.end() as i64, m: m.id() }
}

/// Flips a random pool mapping (add if absent, remove if present: the identity rule), or
/// truncates.
fn next_op(rng: &mut Rng, state: &BTreeSet<model::Mapping>) -> RmapOp {
    let pool = pool();
    match rng.u8(..10) {
        0 | 1 => RmapOp::Truncate(rng.i64(0..70)),
        _ => {
            let m = in_model(pool[rng.usize(..pool.len())]);
            if state.contains(&m) { RmapOp::Remove(m) } else { RmapOp::Add(m) }
        }
    }
}

#[test]
fn every_variant_matches_the_model_with_threads_taking_turns() {
    with_watchdog("rmap turns", LIMIT, || {
        for threads in THREADS {
            let s = schedule(&RmapModel, threads, 1_500, 17 + threads as u64, next_op);
            run_turns("mutex", &[&MutexRmap::new() as &dyn Rmap], threads, &s);
            run_turns("lockfree", &[&LockFreeRmap::new() as &dyn Rmap], threads, &s);
            for (name, config) in configs() {
                oplog_turns::<false>(&format!("oplog {name}"), &config, threads, &s);
                oplog_turns::<true>(&format!("oplog-ordered {name}"), &config, threads, &s);
            }
        }
    });
}

/// Two OpLog rmaps in one domain (with a one-slot cache they evict each other's logs).
fn oplog_turns<const ORDERED: bool>(name: &str, config: &Config, threads: usize, s: &Schedule<RmapModel>) {
    let d = domain(config);
    let (a, b) = (OpLogRmap::<ORDERED>::new(&d), OpLogRmap::<ORDERED>::new(&d));
    run_turns(name, &[&a as &dyn Rmap, &b], threads, s);
    let expected: Vec<model::Mapping> = s.final_state.iter().copied().collect();
    assert_eq!(a.mappings().into_iter().map(in_model).collect::<Vec<_>>(), expected, "{name}");
}

#[test]
fn free_running_threads_on_their_own_mappings_match_their_own_models() {
    // Each thread forks: maps its own regions and unmaps them, and truncates now and then.
    // Other threads' mappings come and go meanwhile, but a thread's own mappings must appear
    // in its truncates exactly as its program order says.
    with_watchdog("rmap free running", LIMIT, || {
        let variants: Vec<(&str, Box<dyn Rmap>)> = vec![
            ("mutex", Box::new(MutexRmap::new())),
            ("lockfree", Box::new(LockFreeRmap::new())),
            ("oplog per-cpu", Box::new(OpLogRmap::<false>::new(&domain(&Config::per_cpu().max_log_len(8))))),
            ("oplog per-thread", Box::new(OpLogRmap::<false>::new(&domain(&Config::per_thread().max_log_len(8))))),
            ("oplog-ordered per-cpu", Box::new(OrderedOpLogRmap::new(&domain(&Config::per_cpu().max_log_len(8))))),
        ];
        for (name, rmap) in &variants {
            let rmap = &**rmap;
            let expected: BTreeSet<Mapping> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..3u64)
                    .map(|me| {
                        s.spawn(move || {
                            pin_round_robin(me as usize);
                            let mut rng = Rng::with_seed(me + 99);
                            let mut mine = BTreeSet::new();
                            for i in 0..4_000 {
                                let start = rng.u64(..60);
                                let id = me << 32 | rng.u64(..16);
                                let m = Mapping::new(id, start..start + 1 + rng.u64(..8)).unwrap();
                                if let Some(old) = mine.iter().find(|o: &&Mapping| o.id() == id).copied() {
                                    mine.remove(&old);
                                    rmap.remove(old);
                                } else {
                                    mine.insert(m);
                                    rmap.add(m);
                                }
                                if i % 200 == 0 {
                                    let offset = rng.u64(..64);
                                    let seen: BTreeSet<Mapping> = rmap
                                        .truncate(offset)
                                        .into_iter()
                                        .filter(|u| u.mapping.id() >> 32 == me)
                                        .map(|u| u.mapping)
                                        .collect();
                                    let want: BTreeSet<Mapping> =
                                        mine.iter().filter(|m| m.end() > offset).copied().collect();
                                    assert_eq!(seen, want, "{name}: thread {me}, op {i}, truncate({offset})");
                                }
                            }
                            mine
                        })
                    })
                    .collect();
                handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(rmap.mappings(), expected.into_iter().collect::<Vec<_>>(), "{name}");
        }
    });
}

#[test]
fn a_remove_meeting_its_add_in_the_same_log_is_absorbed_locally() {
    let rmap = OrderedOpLogRmap::new(&domain(&Config::per_thread()));
    let pool = pool();
    // A fork and exit on one thread: every mapping added and removed again.
    for _ in 0..100 {
        for m in &pool {
            rmap.add(*m);
        }
        for m in &pool {
            rmap.remove(*m);
        }
    }
    rmap.add(pool[0]);
    assert_eq!(rmap.truncate(0).len(), 1);
    assert_eq!(rmap.logged().stats(), Stats { executed: 1, absorbed_globally: 0 });
}

#[test]
fn a_remove_on_another_core_is_absorbed_during_synchronize() {
    // The parent maps, the child unmaps on another thread (000 §5.2): the pairs are in
    // different logs, and meet only in the synchronize's batch.
    let rmap = OpLogRmap::<false>::new(&domain(&Config::per_thread()));
    let pool = pool();
    for m in &pool {
        rmap.add(*m);
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            for m in &pool[1..] {
                rmap.remove(*m);
            }
        });
    });
    assert_eq!(rmap.mappings(), vec![pool[0]]);
    let n = pool.len() as u64;
    assert_eq!(rmap.logged().stats(), Stats { executed: 1, absorbed_globally: 2 * (n - 1) });
}

/// A fresh rmap of every variant, the OpLog ones each in a per-CPU domain of its own.
fn every_variant() -> Vec<Box<dyn Rmap>> {
    vec![
        Box::new(MutexRmap::new()),
        Box::new(LockFreeRmap::new()),
        Box::new(OpLogRmap::<false>::new(&domain(&Config::per_cpu()))),
        Box::new(OrderedOpLogRmap::new(&domain(&Config::per_cpu()))),
    ]
}

#[test]
fn truncate_reports_the_unmapped_pieces_in_mapping_order() {
    let a = Mapping::new(1, 0..10).unwrap();
    let b = Mapping::new(2, 5..8).unwrap();
    let c = Mapping::new(3, 20..30).unwrap();
    for rmap in every_variant() {
        for m in [c, a, b] {
            rmap.add(m);
        }
        let got = rmap.truncate(6);
        let want: Vec<(u64, u64)> = vec![(1, 6), (2, 6), (3, 20)];
        assert_eq!(got.iter().map(|u| (u.mapping.id(), u.from)).collect::<Vec<_>>(), want);
        // Truncate unmaps pages; the regions stay in the rmap.
        assert_eq!(rmap.mappings(), vec![a, b, c]);
        assert_eq!(rmap.truncate(30), vec![]);
    }
}

#[test]
fn an_empty_or_reversed_mapping_is_rejected() {
    let (start, end) = (9, 3);
    assert_eq!(Mapping::new(4, start..end), Err(RmapError::EmptyRange { id: 4, start: 9, end: 3 }));
    let e = Mapping::new(4, 3..3).unwrap_err().to_string();
    assert!(e.contains("mapping 4: page range 3..3 is empty or reversed"), "{e}");
}

#[test]
#[cfg(debug_assertions)]
fn debug_builds_report_a_mapping_added_twice() {
    let rmap = OpLogRmap::<false>::new(&domain(&Config::per_thread()));
    let m = Mapping::new(1, 0..4).unwrap();
    rmap.add(m);
    assert_eq!(rmap.mappings(), vec![m]);
    rmap.add(m);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rmap.truncate(0))).unwrap_err();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains("identity rule violated: Add(Mapping { start: 0, end: 4, id: 1 }) found the item already present"),
        "{msg}"
    );
    // The object stays usable.
    assert_eq!(rmap.truncate(0).into_iter().map(|u| u.mapping).collect::<Vec<_>>(), vec![m]);
}

#[test]
fn every_variant_answers_the_models_operations_on_a_fixed_script() {
    let m = model::Mapping { start: 2, end: 9, m: 1 };
    let script = [RmapOp::Add(m), RmapOp::Truncate(5), RmapOp::Remove(m), RmapOp::Truncate(0)];
    let mut state = RmapModel.init();
    let want: Vec<RmapRet> = script.iter().map(|op| RmapModel.step(&mut state, op)).collect();
    assert_eq!(want[1], RmapRet::Unmapped(vec![model::Piece { mapping: m, from: 5 }]));
    assert_eq!(want[3], RmapRet::Unmapped(vec![]));
    for rmap in every_variant() {
        let got: Vec<RmapRet> = script.iter().map(|op| rmap.call(op)).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn a_model_mapping_the_rmap_cannot_hold_is_rejected_by_name() {
    let rmap = MutexRmap::new();
    for (bad, says) in [
        (model::Mapping { start: -1, end: 3, m: 7 }, "page -1 is negative"),
        (model::Mapping { start: 4, end: 4, m: 7 }, "mapping 7: page range 4..4 is empty or reversed"),
    ] {
        let panic = std::panic::catch_unwind(|| rmap.call(&RmapOp::Add(bad))).unwrap_err();
        let msg = panic.downcast_ref::<String>().unwrap();
        assert!(msg.contains(says), "{msg}");
    }
    assert!(rmap.mappings().is_empty());
}
