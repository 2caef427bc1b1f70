//! Serializability of recorded histories: small runs of random transactions on a few keys,
//! under real threads (more than the cores), every committed transaction's reads, writes
//! and stamp recorded; then a serial order consistent with the stamps must reproduce every
//! read (`common::serial_order`). Both schemes, on the logical clock, Ordo, and Ordo with a
//! wide boundary.

mod common;

use std::sync::Mutex;
use std::time::Duration;

use common::{Committed, serial_order};
use oplog_lincheck::testkit::{Rng, with_watchdog};
use ordo::Clock;
use ordo_txn::{Db, Scheme};

/// Keys of the store: few, so transactions conflict.
const KEYS: u64 = 6;

fn transactions_per_thread() -> u64 {
    if cfg!(miri) { 12 } else { 300 }
}

/// Runs the random workload and returns every committed transaction.
fn record<S: Scheme, C: Clock>(db: &Db<S, C>, seed: u64) -> Vec<Committed> {
    let all = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for thread in 0..common::threads() as u64 {
            let all = &all;
            scope.spawn(move || {
                let mut rng = Rng::with_seed(seed ^ thread.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                let mut session = db.session();
                let mut mine = Vec::new();
                for n in 0..transactions_per_thread() {
                    let ops: Vec<(u8, u64)> = (0..rng.u64(1..=4)).map(|_| (rng.u8(0..3), rng.u64(0..KEYS))).collect();
                    // Some transactions yield between operations, so that others commit in
                    // the middle of them (conflicts every run, not by luck of scheduling).
                    let pause = rng.u8(0..4) == 0;
                    let mut seen = Committed::default();
                    if rng.u8(0..5) == 0 {
                        session.read(|tx| {
                            seen = Committed::default();
                            for &(_, key) in &ops {
                                let v = tx.get(key)?;
                                seen.read(key, v);
                                if pause {
                                    std::thread::yield_now();
                                }
                            }
                            Ok(())
                        });
                    } else {
                        session.transaction(|tx| {
                            seen = Committed::default();
                            for (j, &(op, key)) in ops.iter().enumerate() {
                                match op {
                                    0 => {
                                        let v = tx.get(key)?;
                                        seen.read(key, v);
                                    }
                                    1 => {
                                        // A value no other write uses.
                                        let v = (thread + 1) << 40 | n << 8 | j as u64;
                                        tx.put(key, v)?;
                                        seen.write(key, v);
                                    }
                                    _ => {
                                        let v = tx.get(key)?;
                                        seen.read(key, v);
                                        tx.put(key, v + 1)?;
                                        seen.write(key, v + 1);
                                    }
                                }
                                if pause {
                                    std::thread::yield_now();
                                }
                            }
                            Ok(())
                        });
                    }
                    seen.stamp = session.last_stamp();
                    mine.push(seen);
                }
                all.lock().unwrap().extend(mine);
            });
        }
    });
    all.into_inner().unwrap()
}

fn histories_are_serializable<S: Scheme, C: Clock>(name: &str, clock: fn() -> C) {
    let runs = if cfg!(miri) { 1 } else { 4 };
    for run in 0..runs {
        let db = Db::<S, C>::new(clock(), KEYS).unwrap();
        let txns = record(&db, 0x5eed ^ run);
        assert_eq!(txns.len() as u64, common::threads() as u64 * transactions_per_thread());
        if let Err(e) = serial_order(&txns, KEYS as usize, db.clock().boundary()) {
            panic!("{name}, run {run}: {e}");
        }
        // The final state is the last write of each key in that order: read it back.
        let order = serial_order(&txns, KEYS as usize, db.clock().boundary()).unwrap();
        let mut expected = vec![0u64; KEYS as usize];
        for &i in &order {
            for &(k, v) in &txns[i].writes {
                expected[k as usize] = v;
            }
        }
        let actual: Vec<u64> = db.read(|tx| (0..KEYS).map(|k| tx.get(k)).collect());
        assert_eq!(actual, expected, "{name}, run {run}: final state");
    }
}

#[test]
fn recorded_histories_have_a_serial_order_consistent_with_the_stamps() {
    with_watchdog("serial histories", Duration::from_secs(120), || every_setup!(histories_are_serializable));
}
#[test]
fn the_checker_accepts_serial_histories_and_rejects_a_lost_update() {
    let t = |stamp, reads: &[(u64, u64)], writes: &[(u64, u64)]| Committed {
        stamp,
        reads: reads.to_vec(),
        writes: writes.to_vec(),
    };
    // Two increments of key 0, stamped in order.
    let good = [t(10, &[(0, 0)], &[(0, 1)]), t(20, &[(0, 1)], &[(0, 2)])];
    assert_eq!(serial_order(&good, 1, 0), Ok(vec![0, 1]));
    // Stamped in the wrong order: rejected with an exact clock, accepted within a boundary.
    let swapped = [t(20, &[(0, 0)], &[(0, 1)]), t(10, &[(0, 1)], &[(0, 2)])];
    assert!(serial_order(&swapped, 1, 0).is_err());
    assert_eq!(serial_order(&swapped, 1, 10), Ok(vec![0, 1]));
    // A lost update: both read 0.
    let lost = [t(10, &[(0, 0)], &[(0, 1)]), t(20, &[(0, 0)], &[(0, 1)])];
    assert!(serial_order(&lost, 1, 1_000).is_err());
    // Write skew (each reads what the other writes): no serial order, whatever the boundary.
    let skew = [t(10, &[(0, 0), (1, 0)], &[(0, 5)]), t(11, &[(0, 0), (1, 0)], &[(1, 5)])];
    assert!(serial_order(&skew, 2, 1_000).is_err());
}
