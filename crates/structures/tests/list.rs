//! The list of 000 §7.3: every variant against the model, absorption counted, the Harris
//! list under concurrent inserts and deletes of shared keys.

mod common;

use common::{LIMIT, Rng, THREADS, configs, domain, pin_round_robin, run_turns, schedule, with_watchdog};
use oplog::Config;
use oplog_model::set::{SetModel, SetOp};
use oplog_structures::applied::Stats;
use oplog_structures::list::{BasicList, ConcurrentList, GlobalAbsorbList, HarrisList, LocalAbsorbList, SeqList};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};

/// Flips an element of a small pool (the identity rule), or reads.
fn flip(rng: &mut Rng, set: &BTreeSet<u64>) -> SetOp {
    let x = rng.u64(..16);
    match rng.u8(..10) {
        0 | 1 => SetOp::Contains(x),
        _ if set.contains(&x) => SetOp::Remove(x),
        _ => SetOp::Add(x),
    }
}

/// Any operation at all (set semantics, no identity rule).
fn any(rng: &mut Rng, _: &BTreeSet<u64>) -> SetOp {
    let x = rng.u64(..16);
    match rng.u8(..10) {
        0 | 1 => SetOp::Contains(x),
        2..6 => SetOp::Remove(x),
        _ => SetOp::Add(x),
    }
}

/// Every list in `lists` holds exactly the model's final set.
fn holds(what: &str, lists: &[&dyn ConcurrentList<u64>], set: &BTreeSet<u64>) {
    for (i, list) in lists.iter().enumerate() {
        assert!(list.snapshot().iter().eq(set.iter()), "{what}: list {i}'s snapshot");
    }
}

#[test]
fn every_variant_matches_the_model_with_threads_taking_turns() {
    with_watchdog("list turns", LIMIT, || {
        for threads in THREADS {
            let seed = 5 + threads as u64;
            let flips = schedule(&SetModel, threads, 1_500, seed, flip);
            let anything = schedule(&SetModel, threads, 1_500, seed, any);
            for s in [&flips, &anything] {
                let list = HarrisList::new();
                run_turns("lockfree", &[&list as &dyn ConcurrentList<u64>], threads, s);
                holds("lockfree", &[&list], &s.final_state);
            }
            for (name, config) in configs() {
                // The basic list has set semantics for any sequence.
                let d = domain(&config);
                let (a, b) = (BasicList::with_domain(&d, SeqList::new()), BasicList::with_domain(&d, SeqList::new()));
                run_turns(&format!("oplog-basic {name}"), &[&a as &dyn ConcurrentList<u64>, &b], threads, &anything);
                holds(&format!("oplog-basic {name}"), &[&a, &b], &anything.final_state);
                // The absorbing ones under the identity rule.
                let d = domain(&config);
                let (a, b) = (
                    GlobalAbsorbList::with_domain(&d, SeqList::new()),
                    GlobalAbsorbList::with_domain(&d, SeqList::new()),
                );
                run_turns(
                    &format!("oplog-global-absorb {name}"),
                    &[&a as &dyn ConcurrentList<u64>, &b],
                    threads,
                    &flips,
                );
                holds(&format!("oplog-global-absorb {name}"), &[&a, &b], &flips.final_state);
                let d = domain(&config);
                let (a, b) = (
                    LocalAbsorbList::with_domain(&d, SeqList::new()),
                    LocalAbsorbList::with_domain(&d, SeqList::new()),
                );
                run_turns(
                    &format!("oplog-local-absorb {name}"),
                    &[&a as &dyn ConcurrentList<u64>, &b],
                    threads,
                    &flips,
                );
                holds(&format!("oplog-local-absorb {name}"), &[&a, &b], &flips.final_state);
            }
        }
    });
}

/// The Figure 12 loop, free running: each thread adds its own element and removes it
/// again, and keeps a few long-lived ones; at the end the list holds exactly those.
fn figure_12_loop(name: &str, list: &dyn ConcurrentList<u64>) {
    let expected: BTreeSet<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3u64)
            .map(|me| {
                s.spawn(move || {
                    pin_round_robin(me as usize);
                    let mut kept = BTreeSet::new();
                    for i in 0..5_000u64 {
                        let x = me << 32 | i;
                        list.add(x);
                        if i % 1000 == 0 {
                            kept.insert(x);
                            assert!(list.contains(&x), "{name}: thread {me} lost {x:#x}");
                        } else {
                            list.remove(x);
                        }
                    }
                    kept
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(list.snapshot(), expected.into_iter().collect::<Vec<_>>(), "{name}");
}

#[test]
fn free_running_threads_adding_and_removing_their_own_elements() {
    with_watchdog("list free running", LIMIT, || {
        figure_12_loop("lockfree", &HarrisList::new());
        for (name, config) in [("per-cpu", Config::per_cpu()), ("per-thread", Config::per_thread())] {
            figure_12_loop(&format!("basic {name}"), &BasicList::with_domain(&domain(&config), SeqList::new()));
            figure_12_loop(&format!("global {name}"), &GlobalAbsorbList::with_domain(&domain(&config), SeqList::new()));
            figure_12_loop(&format!("local {name}"), &LocalAbsorbList::with_domain(&domain(&config), SeqList::new()));
        }
    });
}

#[test]
fn harris_list_under_concurrent_inserts_and_deletes_of_shared_keys() {
    // Every thread inserts and deletes the same few keys. Per key, successful inserts minus
    // successful deletes must be 1 if the key is present at the end and 0 if not, and no
    // insert or delete may succeed twice in a row for one key (the net stays in 0..=1).
    with_watchdog("harris", LIMIT, || {
        const KEYS: usize = 8;
        let list = HarrisList::new();
        let net: Vec<AtomicI64> = (0..KEYS).map(|_| AtomicI64::new(0)).collect();
        std::thread::scope(|s| {
            for me in 0..4u64 {
                let (list, net) = (&list, &net);
                s.spawn(move || {
                    pin_round_robin(me as usize);
                    let mut rng = Rng::with_seed(me * 31 + 7);
                    for _ in 0..50_000 {
                        let k = rng.u64(..KEYS as u64);
                        if rng.bool() {
                            if list.insert(k) {
                                net[k as usize].fetch_add(1, Ordering::SeqCst);
                            }
                        } else if list.remove(&k) {
                            net[k as usize].fetch_sub(1, Ordering::SeqCst);
                        }
                        if rng.u8(..100) == 0 {
                            // A traversal concurrent with the updates: sorted, no duplicates.
                            let mut seen = Vec::new();
                            list.for_each(|k| seen.push(*k));
                            assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
                        }
                    }
                });
            }
        });
        for (k, n) in net.iter().enumerate() {
            let n = n.load(Ordering::SeqCst);
            assert!(n == 0 || n == 1, "key {k}: {n} more inserts than deletes succeeded");
            assert_eq!(list.contains(&(k as u64)), n == 1, "key {k}");
        }
    });
}

#[test]
fn local_absorption_executes_nothing_for_a_threads_own_pairs() {
    for config in [Config::per_cpu(), Config::per_thread()] {
        let list = LocalAbsorbList::with_domain(&domain(&config), SeqList::new());
        std::thread::scope(|s| {
            for me in 0..2u64 {
                let list = &list;
                s.spawn(move || {
                    pin_round_robin(me as usize);
                    for i in 0..10_000 {
                        list.add(me << 32 | i);
                        list.remove(me << 32 | i);
                    }
                });
            }
        });
        assert!(list.snapshot().is_empty());
        // Pinned threads never migrate between an add and its remove on per-CPU slots;
        // per-thread slots are the thread's own. Every pair was cancelled on push.
        assert_eq!(list.stats(), Stats { executed: 0, absorbed_globally: 0 }, "{config:?}");
    }
}

#[test]
fn global_absorption_cancels_pairs_in_a_full_log() {
    // One thread, no reads: the log fills (128 entries), the flush's synchronize finds
    // every add with its remove and executes nothing.
    let list = GlobalAbsorbList::with_domain(&domain(&Config::per_thread()), SeqList::new());
    for i in 0..1_000u64 {
        list.add(i);
        list.remove(i);
    }
    assert!(list.snapshot().is_empty());
    assert_eq!(list.stats(), Stats { executed: 0, absorbed_globally: 2_000 });
    // The basic list executes every one.
    let basic = BasicList::with_domain(&domain(&Config::per_thread()), SeqList::new());
    for i in 0..1_000u64 {
        basic.add(i);
        basic.remove(i);
    }
    assert!(basic.snapshot().is_empty());
    assert_eq!(basic.stats(), Stats { executed: 2_000, absorbed_globally: 0 });
}

#[test]
fn an_element_added_on_one_thread_and_removed_on_another_is_cancelled_globally() {
    // The unordered local-absorption list must not apply the remove before the add when
    // the remove's log is gathered first: global absorption pairs them in any order.
    // Both threads stay alive throughout, so they own different per-thread logs.
    let list = LocalAbsorbList::with_domain(&domain(&Config::per_thread()), SeqList::new());
    let added = std::sync::Barrier::new(2);
    let removed = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        s.spawn(|| {
            (0..50u64).for_each(|i| list.add(i));
            added.wait();
            removed.wait();
        });
        s.spawn(|| {
            added.wait();
            (0..50u64).for_each(|i| list.remove(i));
            removed.wait();
        });
    });
    list.add(1_000);
    assert_eq!(list.snapshot(), vec![1_000]);
    assert_eq!(list.stats(), Stats { executed: 1, absorbed_globally: 100 });
}
