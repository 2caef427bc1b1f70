//! A panic inside a transaction aborts it cleanly and loses nothing else: no write of it is
//! kept, no record stays locked or claimed, the session stays usable, and other threads go
//! on (under a watchdog: a leaked lock or claim would hang them).

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use oplog_lincheck::testkit::{Rng, with_watchdog};
use ordo::Clock;
use ordo_txn::{Config, Db, Scheme};

const KEYS: u64 = 4;
const INITIAL: u64 = 100;

fn message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

fn a_panic_aborts_cleanly<S: Scheme, C: Clock>(name: &str, clock: fn() -> C) {
    let db = Db::<S, C>::with_config(clock(), &Config::new(KEYS).initial(INITIAL)).unwrap();
    let mut session = db.session();
    // A panic after writing (MVCC has installed versions and claimed the old ones).
    let caught = catch_unwind(AssertUnwindSafe(|| {
        session.transaction(|tx| {
            tx.put(0, 1)?;
            let v = tx.get(1)?;
            tx.put(1, v + 1)?;
            panic!("boom in the middle");
            #[allow(unreachable_code)]
            Ok(())
        })
    }));
    assert_eq!(message(caught.unwrap_err()), "boom in the middle", "{name}");
    // A panic in a read-only transaction, and a bad key.
    let caught = catch_unwind(AssertUnwindSafe(|| session.read(|tx| tx.get(KEYS))));
    assert_eq!(
        message(caught.unwrap_err()),
        format!("key {KEYS} is out of range: this store has {KEYS} keys (0..{KEYS})")
    );
    let caught = catch_unwind(AssertUnwindSafe(|| session.transaction(|tx| tx.put(99, 0))));
    assert!(message(caught.unwrap_err()).starts_with("key 99 is out of range"), "{name}");

    // Nothing was kept; another session writes the same keys without conflict, at once.
    let mut other = db.session();
    assert_eq!(other.read(|tx| Ok((tx.get(0)?, tx.get(1)?))), (INITIAL, INITIAL), "{name}");
    other.transaction(|tx| {
        tx.put(0, 7)?;
        tx.put(1, 8)
    });
    assert_eq!(other.stats().conflicts, 0, "{name}: the panicked attempt left a record locked or claimed");
    // The panicking session goes on.
    session.transaction(|tx| {
        let v = tx.get(0)?;
        tx.put(2, v)
    });
    assert_eq!(db.read(|tx| Ok((tx.get(0)?, tx.get(1)?, tx.get(2)?))), (7, 8, 7), "{name}");
}

#[test]
fn a_panic_in_a_transaction_keeps_nothing_and_blocks_nobody() {
    every_setup!(a_panic_aborts_cleanly);
}

/// One thread keeps panicking in the middle of transfers while others transfer: the total
/// holds and the others finish.
fn panics_beside_transfers<S: Scheme, C: Clock>(name: &str, clock: fn() -> C) {
    let db = Db::<S, C>::with_config(clock(), &Config::new(KEYS).initial(INITIAL)).unwrap();
    let rounds = if cfg!(miri) { 12 } else { 1_000 };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut session = db.session();
            for _ in 0..rounds / 4 {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    session.transaction(|tx| {
                        let a = tx.get(0)?;
                        tx.put(0, a + 1_000)?;
                        tx.put(3, 0)?;
                        if a < u64::MAX {
                            panic!("a transfer that breaks the total, then panics");
                        }
                        Ok(())
                    })
                }));
                assert!(r.is_err());
            }
        });
        for thread in 0..2 {
            let db = &db;
            scope.spawn(move || {
                let mut rng = Rng::with_seed(thread);
                let mut session = db.session();
                for _ in 0..rounds {
                    let (from, to) = (rng.u64(0..KEYS), rng.u64(0..KEYS));
                    session.transaction(|tx| {
                        let a = tx.get(from)?;
                        tx.put(from, a - 1)?;
                        let b = tx.get(to)?;
                        tx.put(to, b + 1)
                    });
                }
            });
        }
        scope.spawn(|| {
            let mut session = db.session();
            for _ in 0..rounds {
                let total = session.read(|tx| (0..KEYS).map(|k| tx.get(k)).sum::<Result<u64, _>>());
                assert_eq!(total, KEYS * INITIAL, "{name}: an audit saw a panicked transfer");
            }
        });
    });
    assert_eq!(db.read(|tx| (0..KEYS).map(|k| tx.get(k)).sum::<Result<u64, _>>()), KEYS * INITIAL, "{name}");
}

#[test]
fn panics_beside_transfers_lose_nothing() {
    with_watchdog("panics beside transfers", Duration::from_secs(120), || every_setup!(panics_beside_transfers));
}
