//! loom models of TL2's commit against a concurrent reader: every interleaving (up to a
//! preemption bound) of the orec, value and clock accesses, with the crate's atomics
//! swapped for loom's (`src/sync.rs`).
//!
//! Run with (a separate target directory keeps the normal build cache):
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p ordo-stm --release --test loom -- --nocapture --test-threads=1
//! ```
//!
//! The clocks are loom atomics too, so their ordering is modelled: a counter (TL2's global
//! version clock, `NOW_IS_ISSUED`) and a "skewed" clock, a counter that every reading
//! advances, with a boundary of 2 ticks and `NOW_IS_ISSUED = false`, which takes the
//! Ordo paths: versions within the window of a start abort, `new_time` waits past it.
//! Under loom replaced values are leaked rather than reclaimed (crossbeam-epoch is outside
//! the model; see `src/sync.rs`).
//!
//! | model | what it covers |
//! |---|---|
//! | `reader_sees_a_commit_whole_*` | a read-only transaction of two variables against a commit writing both: it sees both old values or both new ones, never one of each |
//! | `two_writers_lose_no_update_*` | two read-modify-write commits on the same two variables: no update lost |
//! | `write_skew_is_prevented_*` | two transactions that each read one variable and write the other: commit-time validation lets at most one write |
#![cfg(loom)]

use std::sync::Arc;

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;
use oplog_lincheck::testkit::loom_model;
use ordo::Clock;
use ordo_stm::{Stm, TVar, TxClock};

/// TL2's global version clock, on a loom atomic.
struct Counter(AtomicU64);

impl Clock for Counter {
    fn get_time(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    fn boundary(&self) -> u64 {
        0
    }
    fn raw_order_is_causal(&self) -> bool {
        true
    }
    fn new_time(&self, t: u64) -> u64 {
        let mut cur = self.0.load(Ordering::SeqCst);
        loop {
            let next = cur.max(t) + 1;
            match self.0.compare_exchange(cur, next, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return next,
                Err(seen) => cur = seen,
            }
        }
    }
    fn name(&self) -> &'static str {
        "loom-counter"
    }
}

impl TxClock for Counter {
    const NOW_IS_ISSUED: bool = true;
}

/// A running clock with an uncertainty window of 2 ticks: every reading advances it.
struct Skewed(AtomicU64);

impl Clock for Skewed {
    fn get_time(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
    fn boundary(&self) -> u64 {
        2
    }
    fn raw_order_is_causal(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "loom-skewed"
    }
}

impl TxClock for Skewed {
    const NOW_IS_ISSUED: bool = false;
}

/// A writer commits `x = y = 1` while a reader reads both in one transaction.
fn reader_sees_a_commit_whole<C: TxClock + 'static>(clock: fn() -> C) {
    let stm = Arc::new(Stm::new(clock()));
    let vars = Arc::new((TVar::new(&stm, 0u32), TVar::new(&stm, 0u32)));
    let writer = {
        let (stm, vars) = (stm.clone(), vars.clone());
        thread::spawn(move || {
            stm.atomically(|tx| {
                tx.write(&vars.0, 1);
                tx.write(&vars.1, 1);
                Ok(())
            })
        })
    };
    let (x, y) = stm.atomically(|tx| Ok((tx.read(&vars.0)?, tx.read(&vars.1)?)));
    assert_eq!(x, y, "the reader saw half a commit");
    writer.join().unwrap();
    assert_eq!(stm.atomically(|tx| Ok((tx.read(&vars.0)?, tx.read(&vars.1)?))), (1, 1));
}

#[test]
fn reader_sees_a_commit_whole_on_a_counter() {
    loom_model("reader_sees_a_commit_whole_on_a_counter", 3, || {
        reader_sees_a_commit_whole(|| Counter(AtomicU64::new(0)))
    });
}

#[test]
fn reader_sees_a_commit_whole_on_a_skewed_clock() {
    loom_model("reader_sees_a_commit_whole_on_a_skewed_clock", 3, || {
        reader_sees_a_commit_whole(|| Skewed(AtomicU64::new(0)))
    });
}

/// Two writers each move 1 from `x` to `y`: no update is lost. (No third thread reads
/// meanwhile: loom cannot bound two threads that back off while a third holds a lock; the
/// reader's side is the model above.)
fn two_writers_lose_no_update<C: TxClock + 'static>(clock: fn() -> C) {
    let stm = Arc::new(Stm::new(clock()));
    let vars = Arc::new((TVar::new(&stm, 2u32), TVar::new(&stm, 0u32)));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let (stm, vars) = (stm.clone(), vars.clone());
            thread::spawn(move || {
                stm.atomically(|tx| {
                    let x = tx.read(&vars.0)?;
                    let y = tx.read(&vars.1)?;
                    tx.write(&vars.0, x - 1);
                    tx.write(&vars.1, y + 1);
                    Ok(())
                })
            })
        })
        .collect();
    writers.into_iter().for_each(|w| w.join().unwrap());
    assert_eq!(stm.atomically(|tx| Ok((tx.read(&vars.0)?, tx.read(&vars.1)?))), (0, 2), "an update was lost");
}

#[test]
fn two_writers_lose_no_update_on_a_counter() {
    loom_model("two_writers_lose_no_update_on_a_counter", 3, || {
        two_writers_lose_no_update(|| Counter(AtomicU64::new(0)))
    });
}

#[test]
fn two_writers_lose_no_update_on_a_skewed_clock() {
    loom_model("two_writers_lose_no_update_on_a_skewed_clock", 3, || {
        two_writers_lose_no_update(|| Skewed(AtomicU64::new(0)))
    });
}

/// Write skew: one transaction sets `x` if `y` is 0, the other sets `y` if `x` is 0.
/// Serially one of them sees the other's write and does nothing; only commit-time
/// validation of the read set keeps both from writing.
fn write_skew_is_prevented<C: TxClock + 'static>(clock: fn() -> C) {
    let stm = Arc::new(Stm::new(clock()));
    let vars = Arc::new((TVar::new(&stm, 0u32), TVar::new(&stm, 0u32)));
    let other = {
        let (stm, vars) = (stm.clone(), vars.clone());
        thread::spawn(move || {
            stm.atomically(|tx| {
                if tx.read(&vars.0)? == 0 {
                    tx.write(&vars.1, 1);
                }
                Ok(())
            })
        })
    };
    stm.atomically(|tx| {
        if tx.read(&vars.1)? == 0 {
            tx.write(&vars.0, 1);
        }
        Ok(())
    });
    other.join().unwrap();
    let (x, y) = stm.atomically(|tx| Ok((tx.read(&vars.0)?, tx.read(&vars.1)?)));
    assert_eq!(x + y, 1, "both wrote (write skew) or neither did: x = {x}, y = {y}");
}

#[test]
fn write_skew_is_prevented_on_a_counter() {
    loom_model("write_skew_is_prevented_on_a_counter", 3, || write_skew_is_prevented(|| Counter(AtomicU64::new(0))));
}

#[test]
fn write_skew_is_prevented_on_a_skewed_clock() {
    loom_model("write_skew_is_prevented_on_a_skewed_clock", 3, || {
        write_skew_is_prevented(|| Skewed(AtomicU64::new(0)))
    });
}
