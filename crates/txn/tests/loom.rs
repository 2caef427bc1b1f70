//! loom models of the engines' commit against a concurrent reader (and writer), with every
//! atomic of the engines swapped for loom's (`src/sync.rs`): every interleaving up to a
//! preemption bound. (Under loom a session runs a collection pass every 2 commits.)
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p ordo-txn --release --test loom -- --nocapture --test-threads=1
//! ```
//!
//! The clock is a loom atomic "real time" that every reading advances, plus a per-thread
//! offset: with boundary 0 and no offsets it is the logical clock; with boundary 1 and
//! offsets 0 and 1 the two threads' readings disagree within the boundary as Ordo's
//! per-core clocks do, so the models go through the uncertain comparisons and their
//! conservative aborts too.
#![cfg(loom)]

use std::cell::Cell;

use loom::sync::Arc;
use loom::sync::atomic::AtomicU64;
use loom::thread;
use oplog_lincheck::testkit::loom_model;
use ordo::{Clock, TimeOrder};
use ordo_txn::{Abort, Config, Db, Mvcc, Occ, Scheme};
use std::sync::atomic::Ordering::SeqCst;

loom::thread_local! {
    /// This thread's clock offset.
    static OFFSET: Cell<u64> = Cell::new(0);
}

/// Loom's clock (see the module docs).
#[derive(Debug)]
struct ModelClock {
    real: AtomicU64,
    boundary: u64,
}

impl ModelClock {
    fn new(boundary: u64) -> Self {
        Self { real: AtomicU64::new(10), boundary }
    }
}

impl Clock for ModelClock {
    fn get_time(&self) -> u64 {
        self.real.fetch_add(1, SeqCst) + 1 + OFFSET.with(|o| o.get())
    }

    fn boundary(&self) -> u64 {
        self.boundary
    }

    fn raw_order_is_causal(&self) -> bool {
        self.boundary == 0
    }

    fn cmp_time(&self, a: u64, b: u64) -> TimeOrder {
        TimeOrder::compare(a, b, self.boundary)
    }

    fn name(&self) -> &'static str {
        "loom"
    }
}

const INITIAL: u64 = 10;

fn store<S: Scheme>(boundary: u64) -> Arc<Db<S, ModelClock>> {
    Arc::new(Db::with_config(ModelClock::new(boundary), &Config::new(2).initial(INITIAL).max_sessions(3)).unwrap())
}

/// A transfer of 3 from key 0 to key 1 commits while a read-only transaction reads both:
/// the reader sees the state before or after, never a mix.
fn commit_against_reader<S: Scheme + 'static>(boundary: u64) {
    let db = store::<S>(boundary);
    let writer = {
        let db = db.clone();
        thread::spawn(move || {
            db.transaction(|tx| {
                let a = tx.get(0)?;
                tx.put(0, a - 3)?;
                let b = tx.get(1)?;
                tx.put(1, b + 3)
            })
        })
    };
    OFFSET.with(|o| o.set(boundary));
    let seen = db.read(|tx| Ok((tx.get(0)?, tx.get(1)?)));
    assert!(seen == (INITIAL, INITIAL) || seen == (INITIAL - 3, INITIAL + 3), "the reader saw {seen:?}");
    writer.join().unwrap();
    assert_eq!(db.read(|tx| Ok((tx.get(0)?, tx.get(1)?))), (INITIAL - 3, INITIAL + 3));
}

/// Two increments of key 0 race (each also reads key 1): both commit, none is lost.
fn commit_against_writer<S: Scheme + 'static>(boundary: u64) {
    let db = store::<S>(boundary);
    let other = {
        let db = db.clone();
        thread::spawn(move || {
            db.transaction(|tx| {
                let a = tx.get(0)?;
                tx.put(0, a + 1)
            })
        })
    };
    OFFSET.with(|o| o.set(boundary));
    db.transaction(|tx| {
        let a = tx.get(0)?;
        let b = tx.get(1)?;
        tx.put(0, a + b)
    });
    other.join().unwrap();
    let v = db.read(|tx| tx.get(0));
    assert!(v == INITIAL + INITIAL + 1 || v == INITIAL + 1 + INITIAL, "a lost update: {v}");
}

/// MVCC: a writer installs a version and gives up; a concurrent reader never sees it and a
/// concurrent writer of the same key gets it after the rollback.
fn abort_against_reader_and_writer(boundary: u64) {
    let db = store::<Mvcc>(boundary);
    let aborter = {
        let db = db.clone();
        thread::spawn(move || {
            let r: Result<(), ()> = db.try_transaction(|tx| {
                tx.put(0, 99)?;
                Err(Abort::User(()))
            });
            assert_eq!(r, Err(()));
        })
    };
    OFFSET.with(|o| o.set(boundary));
    let seen = db.read(|tx| tx.get(0));
    assert_eq!(seen, INITIAL, "the reader saw an aborted write");
    db.transaction(|tx| tx.put(0, 5));
    aborter.join().unwrap();
    assert_eq!(db.read(|tx| tx.get(0)), 5);
}

/// MVCC: a session commits twice to key 0, the second commit running a collection pass
/// (every 2 commits under loom) that unlinks the first version, while a reader reads key 0.
/// The reader must find its version every time: with the logical clock a read-only MVCC
/// transaction never conflicts, unless the collector took a version it could still see.
fn collection_against_a_reader() {
    let db = store::<Mvcc>(0);
    let writer = {
        let db = db.clone();
        thread::spawn(move || {
            let mut s = db.session();
            for _ in 0..2 {
                s.transaction(|tx| {
                    let a = tx.get(0)?;
                    tx.put(0, a + 1)
                });
            }
        })
    };
    let mut reader = db.session();
    let seen = reader.read(|tx| tx.get(0));
    assert!((INITIAL..=INITIAL + 2).contains(&seen), "the reader saw {seen}");
    assert_eq!(reader.stats().conflicts, 0, "the collector unlinked a version a reader could see");
    drop(reader);
    writer.join().unwrap();
    assert_eq!(db.read(|tx| tx.get(0)), INITIAL + 2);
}

#[test]
fn occ_commit_against_a_reader() {
    loom_model("occ commit / reader, logical", 4, || commit_against_reader::<Occ>(0));
    loom_model("occ commit / reader, uncertain", 4, || commit_against_reader::<Occ>(1));
}

#[test]
fn mvcc_commit_against_a_reader() {
    loom_model("mvcc commit / reader, logical", 2, || commit_against_reader::<Mvcc>(0));
    loom_model("mvcc commit / reader, uncertain", 2, || commit_against_reader::<Mvcc>(1));
}

#[test]
fn occ_commit_against_a_writer() {
    loom_model("occ commit / writer, logical", 4, || commit_against_writer::<Occ>(0));
    loom_model("occ commit / writer, uncertain", 3, || commit_against_writer::<Occ>(1));
}

#[test]
fn mvcc_commit_against_a_writer() {
    loom_model("mvcc commit / writer, logical", 2, || commit_against_writer::<Mvcc>(0));
    loom_model("mvcc commit / writer, uncertain", 2, || commit_against_writer::<Mvcc>(1));
}

#[test]
fn mvcc_collection_against_a_reader() {
    loom_model("mvcc collection / reader, logical", 2, collection_against_a_reader);
}

#[test]
fn mvcc_abort_against_a_reader_and_a_writer() {
    loom_model("mvcc abort / reader + writer, logical", 2, || abort_against_reader_and_writer(0));
}
