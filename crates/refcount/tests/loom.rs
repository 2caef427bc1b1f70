//! Loom models of the Refcache core, driven through the step API (`testing`), every
//! interleaving within a preemption bound (default 3, `LOOM_MAX_PREEMPTIONS` overrides):
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p oplog-refcount --release --test loom -- --nocapture --test-threads=1
//! ```
//!
//! | model | what it covers |
//! |---|---|
//! | `tryget_races_the_free_decision` | a weak upgrade on core 1 races core 0's review of an object due at a clean zero (002 §8.1.2: whichever clears `dying` first wins): freed exactly once, never while the revived handle exists, and the upgrade fails only if the free came first |
//! | `epoch_advance_races_a_zero` | the epoch barrier (002 §8.1.1, §8.1.3): core 0 sees the global count reach zero and queues the object while core 1, whose cache still holds the reference that keeps it alive, flushes and so advances the epoch; whichever thread's flush ends each epoch, core 0's reviews never free the object while that reference exists, and it is freed once the reference is gone |

#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use oplog_lincheck::testkit::loom_model;
use oplog_refcount::testing::{clone_on, drop_on, flush, review, upgrade_on};
use oplog_refcount::{Config, CoreMode, Domain, Rc};
use std::sync::Arc;

/// Counts its destructor runs.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Two per-CPU cores with two cache entries each and no background reviewer.
fn two_cores() -> Domain {
    Domain::new(Config::new().mode(CoreMode::PerCpu).cpus(2).cache_entries(2).review_period(None)).unwrap()
}

#[test]
fn tryget_races_the_free_decision() {
    loom_model("tryget_races_the_free_decision", 3, || {
        let d = two_cores();
        let drops = Arc::new(AtomicUsize::new(0));
        let r = Rc::new_in(Counted(drops.clone()), &d);
        let w = Rc::downgrade(&r);
        drop_on(&d, r, 0);
        // Epoch 1: the zero is queued on core 0; epoch 2: everyone flushes again.
        for core in [0, 1, 0, 1] {
            flush(&d, core);
        }
        let (d2, w2, drops2) = (d.clone(), w.clone(), drops.clone());
        let upgrader = loom::thread::spawn(move || match upgrade_on(&d2, &w2, 1) {
            Some(h) => {
                assert_eq!(drops2.load(Ordering::SeqCst), 0, "revived after the destructor ran");
                drop_on(&d2, h, 1);
                true
            }
            None => false,
        });
        review(&d, 0);
        let revived = upgrader.join().unwrap();
        if !revived {
            assert_eq!(drops.load(Ordering::SeqCst), 1, "tryget failed, so the review freed it");
        }
        d.collect();
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn epoch_advance_races_a_zero() {
    loom_model("epoch_advance_races_a_zero", 3, || {
        let d = two_cores();
        let drops = Arc::new(AtomicUsize::new(0));
        let r = Rc::new_in(Counted(drops.clone()), &d);
        // The reference that keeps the object alive: +1 in core 1's cache, not yet in the
        // global count (which holds only `r`'s 1).
        let keep = clone_on(&d, &r, 1);
        let (d0, drops0) = (d.clone(), drops.clone());
        let core0 = loom::thread::spawn(move || {
            // -1 on core 0; its flush may bring the global count to a (dirty) zero and queue
            // the object in whatever epoch is current, racing core 1's flush below.
            drop_on(&d0, r, 0);
            for _ in 0..3 {
                review(&d0, 0);
                assert_eq!(drops0.load(Ordering::SeqCst), 0, "freed while core 1 still held a reference");
            }
        });
        flush(&d, 1);
        review(&d, 1);
        core0.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 0, "freed while a reference exists");
        // The last reference goes; a few epochs later the object is freed, exactly once.
        drop_on(&d, keep, 1);
        for core in [0, 1, 0, 1, 0, 1, 0, 1] {
            review(&d, core);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1, "not freed two epochs after the true zero");
    });
}
