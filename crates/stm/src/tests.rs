//! Unit tests of the transaction mechanics on one thread (the concurrent behaviour is in
//! tests/: bank, histories, panics, loom).

use ordo::{LogicalClock, Ordo};

use crate::{Abort, Stats, Stm, TVar, TxClock};

fn clocks() -> (Stm<LogicalClock>, Stm<Ordo>) {
    (Stm::new(LogicalClock::new()), Stm::new(Ordo::monotonic()))
}

fn reads_its_own_writes<C: TxClock>(stm: &Stm<C>) {
    let x = TVar::new(stm, 1u64);
    let seen = stm.atomically(|tx| {
        let a = tx.read(&x)?;
        tx.write(&x, a + 1);
        let b = tx.read(&x)?;
        tx.write(&x, b * 10);
        Ok((a, b, tx.read(&x)?))
    });
    assert_eq!(seen, (1, 2, 20));
    assert_eq!(stm.atomically(|tx| tx.read(&x)), 20);
}

#[test]
fn a_transaction_reads_its_own_writes() {
    let (l, o) = clocks();
    reads_its_own_writes(&l);
    reads_its_own_writes(&o);
}

#[test]
fn a_user_abort_applies_nothing_and_returns_the_error() {
    let stm = Stm::new(LogicalClock::new());
    let x = TVar::new(&stm, String::from("kept"));
    let before = Stats::thread();
    let r: Result<(), &str> = stm.try_atomically(|tx| {
        tx.write(&x, String::from("discarded"));
        Err(Abort::User("no"))
    });
    assert_eq!(r, Err("no"));
    assert_eq!(stm.atomically(|tx| tx.read(&x)), "kept");
    let d = Stats::thread() - before;
    assert_eq!((d.user_aborts, d.commits), (1, 1));
}

#[test]
fn commits_count_their_timestamps() {
    let (l, o) = clocks();
    let x = TVar::new(&l, 0u32);
    let before = Stats::thread();
    l.atomically(|tx| {
        tx.write(&x, 5);
        Ok(())
    });
    l.atomically(|tx| tx.read(&x));
    let d = Stats::thread() - before;
    assert_eq!((d.commits, d.read_only_commits, d.start_stamps, d.commit_stamps), (2, 1, 2, 1));
    let y = TVar::new(&o, 0u32);
    o.atomically(|tx| {
        tx.write(&y, 5);
        Ok(())
    });
    assert_eq!(o.atomically(|tx| tx.read(&y)), 5);
}

#[test]
#[should_panic(expected = "a TVar belongs to the Stm it was created with")]
fn a_variable_of_another_stm_is_refused() {
    let (a, b) = (Stm::new(LogicalClock::new()), Stm::new(LogicalClock::new()));
    let x = TVar::new(&a, 0u8);
    b.atomically(|tx| tx.read(&x));
}

#[test]
#[should_panic(expected = "Tx::retry in a transaction that has read no variable")]
fn a_retry_with_nothing_read_is_refused() {
    let stm = Stm::new(LogicalClock::new());
    stm.atomically(|tx| -> Result<(), _> { Err(tx.retry()) });
}

#[test]
fn values_are_dropped_once() {
    use std::sync::Arc;
    let stm = Stm::new(LogicalClock::new());
    let token = Arc::new(());
    {
        let x = TVar::new(&stm, token.clone());
        for _ in 0..10 {
            stm.atomically(|tx| {
                let v = tx.read(&x)?;
                tx.write(&x, v.clone());
                tx.write(&x, v);
                Ok(())
            });
        }
        let _: Result<(), ()> = stm.try_atomically(|tx| {
            tx.write(&x, token.clone());
            Err(Abort::User(()))
        });
        assert_eq!(x.into_inner().as_ref(), &());
    }
    // Replaced values wait for the epoch collector: flush it until the epoch has moved on
    // (other tests' threads pin it too, so this can take a few rounds).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        crossbeam_epoch::pin().flush();
        if Arc::strong_count(&token) == 1 {
            return;
        }
        std::thread::yield_now();
    }
    panic!("{} references left", Arc::strong_count(&token));
}

#[test]
fn get_mut_and_debug() {
    let stm = Stm::new(LogicalClock::new());
    let mut x = TVar::new(&stm, 3);
    *x.get_mut() += 1;
    assert_eq!(stm.atomically(|tx| tx.read(&x)), 4);
    stm.atomically(|tx| {
        tx.write(&x, 5);
        Ok(())
    });
    let shown = format!("{x:?} {stm:?}");
    assert!(shown.contains("version: 1") && shown.contains("logical"), "{shown}");
}
