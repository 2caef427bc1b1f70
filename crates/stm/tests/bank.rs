//! Serializability under real threads (more threads than cores): transfers among accounts
//! never change the total, and every transaction that reads all accounts sees that total,
//! inside the closure (every attempt reads one snapshot, even one that will abort) and in
//! its result. Both clocks.
#![cfg(not(loom))]

use std::time::Duration;

use oplog_lincheck::testkit::{Rng, with_watchdog};
use ordo::{LogicalClock, Ordo};
use ordo_stm::{Stats, Stm, TVar, TxClock};

const ACCOUNTS: usize = if cfg!(miri) { 4 } else { 16 };
const THREADS: usize = if cfg!(miri) { 3 } else { 8 };
const TXNS: usize = if cfg!(miri) { 12 } else { 3_000 };
const START: i64 = 1_000;

fn bank<C: TxClock>(stm: &Stm<C>, seed: u64) -> Stats {
    let accounts: Vec<TVar<i64>> = (0..ACCOUNTS).map(|_| TVar::new(stm, START)).collect();
    let total = START * ACCOUNTS as i64;
    let accounts = &accounts;
    let stats = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                s.spawn(move || {
                    let before = Stats::thread();
                    let mut rng = Rng::with_seed(seed ^ t as u64);
                    for i in 0..TXNS {
                        if i % 8 == 7 {
                            let seen = stm.atomically(|tx| {
                                let mut sum = 0;
                                for a in accounts {
                                    sum += tx.read(a)?;
                                }
                                // Checked inside the attempt: a zombie must not see a torn
                                // transfer either.
                                assert_eq!(sum, total, "an attempt read an inconsistent snapshot");
                                Ok(sum)
                            });
                            assert_eq!(seen, total);
                        } else {
                            let (from, to) = (rng.usize(..ACCOUNTS), rng.usize(..ACCOUNTS));
                            let amount = rng.i64(1..=50);
                            stm.atomically(|tx| {
                                let a = tx.read(&accounts[from])?;
                                tx.write(&accounts[from], a - amount);
                                let b = tx.read(&accounts[to])?;
                                tx.write(&accounts[to], b + amount);
                                Ok(())
                            });
                        }
                    }
                    Stats::thread() - before
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).fold(Stats::default(), |a, b| a.plus(&b))
    });
    let end: i64 = stm.atomically(|tx| accounts.iter().try_fold(0, |sum, a| Ok(sum + tx.read(a)?)));
    assert_eq!(end, total);
    assert_eq!(stats.commits, (THREADS * TXNS) as u64, "every transaction committed once");
    stats
}

#[test]
fn transfers_keep_the_total_on_a_logical_clock() {
    with_watchdog("bank on a logical clock", Duration::from_secs(60), || {
        let stats = bank(&Stm::new(LogicalClock::new()), 1);
        assert_eq!(stats.uncertain_aborts, 0, "a counter has no uncertainty window");
        eprintln!("logical: {stats:?}");
    });
}

#[test]
fn transfers_keep_the_total_on_ordo() {
    with_watchdog("bank on Ordo", Duration::from_secs(60), || {
        let stats = bank(&Stm::new(Ordo::clone(ordo::global())), 2);
        eprintln!("ordo: {stats:?}");
    });
}

#[test]
fn transfers_keep_the_total_on_ordo_with_a_wide_window() {
    // A boundary of 20 µs on the OS clock: most conflicts fall inside the window, so the
    // uncertain paths (abort at load and at validation, start after `new_time`) run often.
    with_watchdog("bank on a wide window", Duration::from_secs(60), || {
        let settings = ordo::Settings {
            source: ordo::SourceChoice::Monotonic,
            boundary: Some(20_000),
            ..ordo::Settings::default()
        };
        let stats = bank(&Stm::new(Ordo::from_settings(&settings)), 3);
        eprintln!("wide window: {stats:?}");
    });
}
