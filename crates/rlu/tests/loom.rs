//! Loom models of RLU's quiescence against a concurrent reader: every interleaving (within
//! a preemption bound, default 3; `LOOM_MAX_PREEMPTIONS` overrides) of a writer committing
//! two objects and a reader reading both, with the slot and object atomics and the value
//! cells swapped for loom's (`src/sync.rs`). Loom checks every cell access: a write-back
//! while a section may still read the old value fails the model, as does a read section
//! that sees one of the two writes without the other.
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p ordo-rlu --release --test loom -- --nocapture --test-threads=1
//! ```
//!
//! The clock is a loom counter that every thread reads plus a per-thread offset within the
//! boundary: a valid Ordo clock (two readings at one instant differ by at most the
//! boundary, each thread's readings never decrease, `new_time(t)` returns a reading
//! certainly after `t`) whose comparisons can come out `Uncertain`. With boundary 0 and no
//! offsets it is the logical clock.
//!
//! | model | what it covers |
//! |---|---|
//! | `a_reader_sees_a_commit_whole_on_a_counter` | the logical clock: the reader either started before the stamp (the writer waits for it, it reads both old values) or after (it steals both copies, or reads both written back) |
//! | `an_uncertain_reader_neither_steals_nor_is_skipped` | a reader whose clock runs ahead by the boundary: its start compares `Uncertain` with the stamp, so it must not steal, and the writer must wait for it |
//! | `a_writer_ahead_of_the_reader` | the writer's clock runs ahead: its stamp may be certainly after the reader's start |
//! | `a_stamp_is_seen_by_every_reader_after_it` | the reader commits first: its advance may come between the writer's clock reading and its stamp, so its read section can start after the stamp before the stamp is visible (the reason for the pending state: without it, the writer skips the reader and writes back under it) |
//! | `two_writers_of_one_object` | a lock conflict: one writer aborts and retries; both increments land |
#![cfg(loom)]

use std::cell::Cell;
use std::sync::Arc;

use loom::sync::atomic::{AtomicU64, Ordering};
use oplog_lincheck::testkit::loom_model;
use ordo::Clock;
use ordo_rlu::{Rlu, RluObject};

loom::thread_local! {
    /// How far this thread's clock runs ahead of the shared counter.
    static OFFSET: Cell<u64> = Cell::new(0);
}

/// A counter read by every thread with a per-thread offset of at most `boundary`.
struct SkewedClock {
    counter: AtomicU64,
    boundary: u64,
}

impl SkewedClock {
    fn new(boundary: u64) -> Self {
        Self { counter: AtomicU64::new(1), boundary }
    }
}

impl Clock for SkewedClock {
    fn get_time(&self) -> u64 {
        self.counter.load(Ordering::SeqCst) + OFFSET.with(Cell::get)
    }
    fn boundary(&self) -> u64 {
        self.boundary
    }
    fn raw_order_is_causal(&self) -> bool {
        true
    }
    /// Moves the counter so that this thread's reading passes `t + boundary`.
    fn new_time(&self, t: u64) -> u64 {
        let offset = OFFSET.with(Cell::get);
        self.counter.fetch_max((t + self.boundary + 1).saturating_sub(offset), Ordering::SeqCst);
        self.get_time()
    }
    fn name(&self) -> &'static str {
        "loom-skewed"
    }
}

/// A writer sets both objects to 1 in one write section while the main thread reads both
/// in one read section; the reader must see (0, 0) or (1, 1).
fn commit_against_reader(boundary: u64, writer_offset: u64, reader_offset: u64) {
    let rlu = Arc::new(Rlu::with_capacity(SkewedClock::new(boundary), 2).unwrap());
    let objects: Arc<[RluObject<u64>; 2]> = Arc::new([rlu.object(0), rlu.object(0)]);
    let writer = {
        let (rlu, objects) = (rlu.clone(), objects.clone());
        loom::thread::spawn(move || {
            OFFSET.with(|o| o.set(writer_offset));
            let mut h = rlu.register().unwrap();
            h.write(|s| {
                *s.lock(&objects[0])? = 1;
                *s.lock(&objects[1])? = 1;
                Ok(())
            });
        })
    };
    OFFSET.with(|o| o.set(reader_offset));
    let mut h = rlu.register().unwrap();
    let seen = h.read(|s| (*s.get(&objects[0]), *s.get(&objects[1])));
    assert!(seen == (0, 0) || seen == (1, 1), "a read section saw half a commit: {seen:?}");
    writer.join().unwrap();
    assert_eq!(h.read(|s| (*s.get(&objects[0]), *s.get(&objects[1]))), (1, 1));
}

#[test]
fn a_reader_sees_a_commit_whole_on_a_counter() {
    loom_model("a_reader_sees_a_commit_whole_on_a_counter", 3, || commit_against_reader(0, 0, 0));
}

#[test]
fn an_uncertain_reader_neither_steals_nor_is_skipped() {
    loom_model("an_uncertain_reader_neither_steals_nor_is_skipped", 3, || commit_against_reader(2, 0, 2));
}

#[test]
fn a_writer_ahead_of_the_reader() {
    loom_model("a_writer_ahead_of_the_reader", 3, || commit_against_reader(2, 2, 0));
}

#[test]
fn a_stamp_is_seen_by_every_reader_after_it() {
    loom_model("a_stamp_is_seen_by_every_reader_after_it", 3, || {
        let rlu = Arc::new(Rlu::with_capacity(SkewedClock::new(0), 2).unwrap());
        let objects: Arc<[RluObject<u64>; 2]> = Arc::new([rlu.object(0), rlu.object(0)]);
        let writer = {
            let (rlu, objects) = (rlu.clone(), objects.clone());
            loom::thread::spawn(move || {
                rlu.register().unwrap().write(|s| {
                    *s.lock(&objects[0])? = 1;
                    Ok(())
                })
            })
        };
        // This thread's commit may advance the counter between the writer's clock reading
        // and its stamp; its read section then starts after that reading.
        let mut h = rlu.register().unwrap();
        h.write(|s| {
            *s.lock(&objects[1])? = 1;
            Ok(())
        });
        let seen = h.read(|s| *s.get(&objects[0]));
        assert!(seen <= 1);
        writer.join().unwrap();
        assert_eq!(h.read(|s| (*s.get(&objects[0]), *s.get(&objects[1]))), (1, 1));
    });
}

#[test]
fn two_writers_of_one_object() {
    loom_model("two_writers_of_one_object", 2, || {
        let rlu = Arc::new(Rlu::with_capacity(SkewedClock::new(0), 2).unwrap());
        let object = Arc::new(rlu.object(0u64));
        let other = {
            let (rlu, object) = (rlu.clone(), object.clone());
            loom::thread::spawn(move || {
                rlu.register().unwrap().write(|s| {
                    *s.lock(&object)? += 1;
                    Ok(())
                })
            })
        };
        let mut h = rlu.register().unwrap();
        h.write(|s| {
            *s.lock(&object)? += 1;
            Ok(())
        });
        other.join().unwrap();
        assert_eq!(h.read(|s| *s.get(&object)), 2);
    });
}
