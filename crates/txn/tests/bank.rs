//! Bank transfers under real threads (more than the cores), both schemes on every clock:
//! the total never changes, and every read-only audit — and every attempt of one, even an
//! attempt that later aborts — sees exactly that total.

mod common;

use std::time::Duration;

use oplog_lincheck::testkit::{Rng, Watchdog};
use ordo::Clock;
use ordo_txn::{Abort, Config, Db, Scheme, Stats};

const ACCOUNTS: u64 = 8;
const INITIAL: u64 = 1_000;
const TOTAL: u64 = ACCOUNTS * INITIAL;

fn operations_per_thread() -> u64 {
    if cfg!(miri) { 15 } else { 5_000 }
}

/// Not enough money in the source account: the transfer gives up.
#[derive(Debug, PartialEq)]
struct Insufficient;

fn bank<S: Scheme, C: Clock>(name: &str, clock: fn() -> C) {
    let watchdog = Watchdog::start(&format!("bank {name}"), Duration::from_secs(60));
    let db = Db::<S, C>::with_config(clock(), &Config::new(ACCOUNTS).initial(INITIAL)).unwrap();
    let stats: Vec<Stats> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..common::threads() as u64)
            .map(|thread| {
                let db = &db;
                scope.spawn(move || {
                    let mut rng = Rng::with_seed(thread + 17);
                    let mut session = db.session();
                    for _ in 0..operations_per_thread() {
                        if rng.u8(0..4) == 0 {
                            let total = session.read(|tx| (0..ACCOUNTS).map(|k| tx.get(k)).sum::<Result<u64, _>>());
                            assert_eq!(total, TOTAL, "an audit saw money appear or vanish");
                            continue;
                        }
                        let (from, to, amount) = (rng.u64(0..ACCOUNTS), rng.u64(0..ACCOUNTS), rng.u64(1..=300));
                        let audit_too = rng.bool();
                        let result = session.try_transaction(|tx| {
                            if audit_too {
                                // Every attempt sees a consistent snapshot, so the sum holds
                                // even in an attempt that will abort.
                                let seen = (0..ACCOUNTS).map(|k| tx.get(k)).sum::<Result<u64, _>>()?;
                                assert_eq!(seen, TOTAL, "an attempt saw an inconsistent state");
                            }
                            let balance = tx.get(from)?;
                            if balance < amount {
                                return Err(Abort::User(Insufficient));
                            }
                            tx.put(from, balance - amount)?;
                            let target = tx.get(to)?;
                            tx.put(to, target + amount)?;
                            Ok(())
                        });
                        assert!(result.is_ok() || result == Err(Insufficient));
                    }
                    session.stats()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    watchdog.progress("workers done");
    let total = db.read(|tx| (0..ACCOUNTS).map(|k| tx.get(k)).sum::<Result<u64, _>>());
    assert_eq!(total, TOTAL, "{name}: the final total");
    let all = stats.iter().fold(Stats::default(), |a, s| a.merged(s));
    let ops = common::threads() as u64 * operations_per_thread();
    assert_eq!(all.commits + all.user_aborts, ops, "{name}: every operation committed or gave up once");
    assert!(all.timestamps >= ops, "{name}: every transaction takes a start timestamp");
}

#[test]
fn transfers_keep_the_total_and_every_audit_sees_it() {
    every_setup!(bank);
}
