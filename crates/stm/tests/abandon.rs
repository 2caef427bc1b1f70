//! Transactions that do not commit: a panic in the closure or in a value's `Clone`, a user
//! abort, and a `retry` that waits for another thread. Each leaves no lock held and no
//! partial write visible, and loses nothing of the other threads' transactions.
#![cfg(not(loom))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use oplog_lincheck::testkit::{Rng, with_watchdog};
use ordo::{LogicalClock, Ordo};
use ordo_stm::{Abort, Stats, Stm, TVar, TxClock};

const ROUNDS: usize = if cfg!(miri) { 5 } else { 500 };

/// One thread's transactions panic after writing, while two others transfer between the
/// same accounts; the panics reach the caller, and afterwards the total is intact, every
/// transfer happened, and a transaction on every account commits (no lock was left held).
fn panics_lose_nothing<C: TxClock>(stm: &Stm<C>) {
    let accounts: Vec<TVar<i64>> = (0..4).map(|_| TVar::new(stm, 100)).collect();
    let transfers = TVar::new(stm, 0u64);
    let (accounts, transfers) = (&accounts, &transfers);
    std::thread::scope(|s| {
        s.spawn(move || {
            for i in 0..ROUNDS {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    stm.atomically(|tx| -> Result<(), _> {
                        let a = tx.read(&accounts[i % 4])?;
                        tx.write(&accounts[i % 4], a + 1_000_000);
                        tx.write(&accounts[(i + 1) % 4], 0);
                        panic!("user code fails mid-transaction");
                    })
                }));
                let message = r.expect_err("the panic reaches the caller");
                assert_eq!(message.downcast_ref::<&str>(), Some(&"user code fails mid-transaction"));
            }
        });
        for t in 0..2 {
            s.spawn(move || {
                let mut rng = Rng::with_seed(t);
                for _ in 0..ROUNDS {
                    let (from, to) = (rng.usize(..4), rng.usize(..4));
                    stm.atomically(|tx| {
                        let a = tx.read(&accounts[from])?;
                        tx.write(&accounts[from], a - 7);
                        let b = tx.read(&accounts[to])?;
                        tx.write(&accounts[to], b + 7);
                        let n = tx.read(transfers)?;
                        tx.write(transfers, n + 1);
                        Ok(())
                    });
                }
            });
        }
    });
    let (total, n) = stm.atomically(|tx| {
        let mut total = 0;
        for a in accounts {
            let v = tx.read(a)?;
            tx.write(a, v); // locks every account at commit: none may be left locked
            total += v;
        }
        Ok((total, tx.read(transfers)?))
    });
    assert_eq!(total, 400, "a panicking transaction's writes became visible");
    assert_eq!(n, 2 * ROUNDS as u64, "a transfer was lost");
}

#[test]
fn a_panic_in_a_transaction_loses_nothing_on_a_logical_clock() {
    with_watchdog("panics on a logical clock", Duration::from_secs(60), || {
        panics_lose_nothing(&Stm::new(LogicalClock::new()))
    });
}

#[test]
fn a_panic_in_a_transaction_loses_nothing_on_ordo() {
    with_watchdog("panics on Ordo", Duration::from_secs(60), || {
        panics_lose_nothing(&Stm::new(Ordo::clone(ordo::global())))
    });
}

/// A value whose `clone` panics while its flag is set.
struct Fragile<'a>(&'a AtomicBool);

impl Clone for Fragile<'_> {
    fn clone(&self) -> Self {
        assert!(!self.0.load(Ordering::Relaxed), "clone failed");
        Fragile(self.0)
    }
}

#[test]
fn a_panic_in_clone_abandons_the_attempt() {
    static FAIL: AtomicBool = AtomicBool::new(false);
    let stm = Stm::new(LogicalClock::new());
    let (x, y) = (TVar::new(&stm, Fragile(&FAIL)), TVar::new(&stm, 1u32));
    FAIL.store(true, Ordering::Relaxed);
    let r = catch_unwind(AssertUnwindSafe(|| {
        stm.atomically(|tx| {
            tx.write(&y, 2);
            tx.read(&x).map(drop)
        })
    }));
    assert!(r.is_err());
    FAIL.store(false, Ordering::Relaxed);
    assert_eq!(stm.atomically(|tx| tx.read(&y)), 1, "the staged write was discarded");
    stm.atomically(|tx| {
        let f = tx.read(&x)?;
        tx.write(&x, f);
        {
            tx.write(&y, 3);
            Ok(())
        }
    });
    assert_eq!(stm.atomically(|tx| tx.read(&y)), 3);
}

#[test]
fn a_user_abort_on_one_thread_does_not_disturb_another() {
    let stm = Stm::new(Ordo::clone(ordo::global()));
    let (x, count) = (TVar::new(&stm, 0i64), TVar::new(&stm, 0u64));
    let (stm, x, count) = (&stm, &x, &count);
    std::thread::scope(|s| {
        s.spawn(move || {
            for i in 0..ROUNDS as i64 {
                let r: Result<(), i64> = stm.try_atomically(|tx| {
                    let v = tx.read(x)?;
                    tx.write(x, v - 1_000);
                    Err(Abort::User(i))
                });
                assert_eq!(r, Err(i));
            }
        });
        s.spawn(move || {
            for _ in 0..ROUNDS {
                stm.atomically(|tx| {
                    let v = tx.read(x)?;
                    tx.write(x, v + 1);
                    let c = tx.read(count)?;
                    {
                        tx.write(count, c + 1);
                        Ok(())
                    }
                });
            }
        });
    });
    assert_eq!(stm.atomically(|tx| Ok((tx.read(x)?, tx.read(count)?))), (ROUNDS as i64, ROUNDS as u64));
}

/// A consumer retries until the producer has put something in the slot; each item is
/// taken once, in order.
fn retry_waits_for_a_change<C: TxClock>(stm: &Stm<C>) {
    let slot: TVar<Option<u32>> = TVar::new(stm, None);
    let items = if cfg!(miri) { 3 } else { 200 };
    let (stm, slot) = (stm, &slot);
    let before = Stats::thread();
    let taken = std::thread::scope(|s| {
        s.spawn(move || {
            for i in 0..items {
                stm.atomically(|tx| match tx.read(slot)? {
                    Some(_) => Err(tx.retry()), // wait for the consumer
                    None => {
                        tx.write(slot, Some(i));
                        Ok(())
                    }
                });
            }
        });
        (0..items)
            .map(|_| {
                stm.atomically(|tx| match tx.read(slot)? {
                    None => Err(tx.retry()),
                    Some(v) => {
                        tx.write(slot, None);
                        Ok(v)
                    }
                })
            })
            .collect::<Vec<_>>()
    });
    assert_eq!(taken, (0..items).collect::<Vec<_>>());
    assert!((Stats::thread() - before).commits >= items as u64);
}

#[test]
fn retry_waits_for_another_thread_on_a_logical_clock() {
    with_watchdog("retry on a logical clock", Duration::from_secs(60), || {
        retry_waits_for_a_change(&Stm::new(LogicalClock::new()))
    });
}

#[test]
fn retry_waits_for_another_thread_on_ordo() {
    with_watchdog("retry on Ordo", Duration::from_secs(60), || {
        retry_waits_for_a_change(&Stm::new(Ordo::clone(ordo::global())))
    });
}

#[test]
fn a_swallowed_conflict_cannot_commit() {
    // The closure ignores a failed read and carries on; the attempt must not commit with
    // the made-up value. A first attempt at a start stamp older than the variable's version
    // is arranged by committing from another thread inside the closure, once.
    let stm = Stm::new(LogicalClock::new());
    let x = TVar::new(&stm, 1u64);
    let y = TVar::new(&stm, 0u64);
    let mut first = true;
    stm.atomically(|tx| {
        if first {
            first = false;
            std::thread::scope(|s| {
                s.spawn(|| {
                    stm.atomically(|tx2| {
                        tx2.write(&x, 2);
                        Ok(())
                    })
                });
            });
        }
        let v = tx.read(&x).unwrap_or(100); // swallowed on the first attempt
        tx.write(&y, v);
        Ok(())
    });
    assert_eq!(stm.atomically(|tx| tx.read(&y)), 2);
}
