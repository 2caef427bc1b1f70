//! Loom models of the Refcache core, driven through the step API (`testing`): run with
//! `RUSTFLAGS="--cfg loom" cargo test -p oplog-refcount --test loom --release`.
//!
//! `tryget_races_the_free_decision`: a weak upgrade on core 1 races core 0's review of an
//! object that is due at a clean zero (002 §8.1.2: whichever clears `dying` first wins). In
//! every interleaving the object is freed exactly once, never while the revived handle
//! exists, and the upgrade fails only if the free came first.

#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use oplog_refcount::testing::{drop_on, flush, review, upgrade_on};
use oplog_refcount::{Config, CoreMode, Domain, Rc};
use std::sync::Arc;

struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn tryget_races_the_free_decision() {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    loom::model(|| {
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = Domain::new(Config::new().mode(CoreMode::PerCpu).cpus(2).cache_entries(2).review_period(None)).unwrap();
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
    eprintln!("loom explored {} interleavings", RUNS.load(std::sync::atomic::Ordering::Relaxed));
}
