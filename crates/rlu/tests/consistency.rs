//! RLU under real threads, more of them than this machine has cores, on each clock: every
//! read section sees a consistent snapshot (transfers between accounts are seen whole), no
//! write is lost, and the hash set and the list end holding exactly the keys their
//! operations' results account for.
#![cfg(not(loom))]

mod common;

use std::time::Duration;

use common::{logical, ordo, sized, wide_window};
use oplog_lincheck::testkit::{Rng, with_watchdog};
use ordo::Clock;
use ordo_rlu::{Rlu, RluHashSet, RluList, RluObject, SetHandle};

/// Threads of each test (this machine has two cores; CI's too).
const THREADS: usize = common::sized(8, 4);
const ACCOUNTS: usize = 6;
const START_BALANCE: i64 = 100;
const LIMIT: Duration = Duration::from_secs(120);

/// Half the threads move money between accounts, one transfer per write section, and count
/// it in a counter object; the other half sum every account in one read section, which must
/// always give the same total. At the end the counter equals the transfers made.
fn transfers_are_seen_whole<C: Clock>(clock: C) {
    let rlu = Rlu::new(clock);
    let accounts: Vec<RluObject<i64>> = (0..ACCOUNTS).map(|_| rlu.object(START_BALANCE)).collect();
    let transfers = rlu.object(0u64);
    let total = START_BALANCE * ACCOUNTS as i64;
    let rounds = sized(1500, 8);
    let made: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (rlu, accounts, transfers) = (&rlu, &accounts, &transfers);
                s.spawn(move || {
                    let mut h = rlu.register().unwrap();
                    let mut rng = Rng::with_seed(t as u64);
                    let mut made = 0;
                    for _ in 0..rounds {
                        if t % 2 == 0 {
                            let (from, to) = (rng.usize(0..ACCOUNTS), rng.usize(0..ACCOUNTS));
                            let amount = rng.i64(1..=30);
                            let moved = h.write(|s| {
                                if from == to || *s.get(&accounts[from]) < amount {
                                    return Ok(false);
                                }
                                *s.lock(&accounts[from])? -= amount;
                                *s.lock(&accounts[to])? += amount;
                                *s.lock(transfers)? += 1;
                                Ok(true)
                            });
                            made += u64::from(moved);
                        } else {
                            let pause = rng.u32(0..sized(400, 4) as u32);
                            let (sum, negative) = h.read(|s| {
                                // A pause between reads keeps the section open across
                                // writers' commits.
                                let balances: Vec<i64> = accounts
                                    .iter()
                                    .map(|a| {
                                        (0..pause).for_each(|_| std::hint::spin_loop());
                                        *s.get(a)
                                    })
                                    .collect();
                                (balances.iter().sum::<i64>(), balances.iter().any(|&b| b < 0))
                            });
                            assert_eq!(sum, total, "a read section saw part of a transfer");
                            assert!(!negative, "a read section saw a negative balance");
                        }
                    }
                    made
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    let mut h = rlu.register().unwrap();
    assert_eq!(h.read(|s| accounts.iter().map(|a| *s.get(a)).sum::<i64>()), total);
    assert_eq!(h.read(|s| *s.get(&transfers)), made, "a transfer was lost");
}

#[test]
fn transfers_are_seen_whole_on_the_logical_clock() {
    with_watchdog("transfers, logical clock", LIMIT, || transfers_are_seen_whole(logical()));
}

#[test]
fn transfers_are_seen_whole_on_ordo() {
    with_watchdog("transfers, Ordo", LIMIT, || transfers_are_seen_whole(ordo()));
}

#[test]
fn transfers_are_seen_whole_with_a_wide_uncertainty_window() {
    with_watchdog("transfers, wide window", LIMIT, || transfers_are_seen_whole(wide_window()));
}

/// Every thread runs random operations on `keys` keys and keeps, per key, how many of its
/// inserts and removes changed the set; at the end each key is present exactly when its
/// changes sum to 1, and no sum is outside 0..=1 (no insert or remove was lost or doubled).
fn operations_account_for_the_contents<'a, C: Clock + 'a, S: 'a>(
    handle: impl Fn() -> SetHandle<'a, u64, C, S> + Sync,
    keys: u64,
) {
    let ops = sized(3000, 16);
    let changes: Vec<Vec<i64>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let handle = &handle;
                s.spawn(move || {
                    let mut h = handle();
                    let mut rng = Rng::with_seed(100 + t as u64);
                    let mut changes = vec![0i64; keys as usize];
                    for _ in 0..ops {
                        let k = rng.u64(0..keys);
                        match rng.u8(0..10) {
                            0..3 => changes[k as usize] += i64::from(h.insert(k)),
                            3..6 => changes[k as usize] -= i64::from(h.remove(&k)),
                            _ => {
                                h.contains(&k);
                            }
                        }
                    }
                    changes
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let expected: Vec<u64> = (0..keys)
        .filter(|&k| {
            let sum: i64 = changes.iter().map(|c| c[k as usize]).sum();
            assert!((0..=1).contains(&sum), "key {k}: its inserts and removes sum to {sum}");
            sum == 1
        })
        .collect();
    let found = handle().keys();
    assert_eq!(found, expected);
}

fn hash_set<C: Clock>(clock: C) {
    let set = RluHashSet::<u64, C>::new(clock, 8).unwrap();
    operations_account_for_the_contents(|| set.handle().unwrap(), 64);
}

fn list<C: Clock>(clock: C) {
    // Few keys in one list: most writes conflict.
    let list = RluList::<u64, C>::new(clock);
    operations_account_for_the_contents(|| list.handle().unwrap(), 12);
}

#[test]
fn hash_set_on_the_logical_clock() {
    with_watchdog("hash set, logical clock", LIMIT, || hash_set(logical()));
}

#[test]
fn hash_set_on_ordo() {
    with_watchdog("hash set, Ordo", LIMIT, || hash_set(ordo()));
}

#[test]
fn hash_set_with_a_wide_uncertainty_window() {
    with_watchdog("hash set, wide window", LIMIT, || hash_set(wide_window()));
}

#[test]
fn list_on_the_logical_clock() {
    with_watchdog("list, logical clock", LIMIT, || list(logical()));
}

#[test]
fn list_on_ordo() {
    with_watchdog("list, Ordo", LIMIT, || list(ordo()));
}
