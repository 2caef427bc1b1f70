//! 002 Figure 8-2 replayed step by step: one object, three cores, eight epochs, with every
//! flush, review and epoch advance explicit, and the object's fields checked after each step.
//!
//! The figure itself is missing from the text we have (only its caption remains), so the
//! history is reconstructed from the text of 002 §8.1.1, one requirement per epoch:
//!
//! * epoch 1: "despite six reference count manipulations spread over three cores ... the
//!   object's global reference count is never written to";
//! * epoch 2: "the inc and dec in epoch 2 are applied to the global reference count in the
//!   opposite order of how they actually occurred. As a result, core 0 observes the global
//!   count temporarily drop to zero when it flushes in epoch 2 ... This is remedied as soon as
//!   core 1 flushes its increment";
//! * epoch 4: "core 0 reexamines the object at the beginning of epoch 4 ... it can see that the
//!   global count is non-zero ... the object should not be freed";
//! * epochs 4–8: "core 0's review will observe a zero global reference count at the end of
//!   epoch 4, and again when it reexamines the object in epoch 6. However, the true count is
//!   not zero, and the global reference count was temporarily non-zero during the epoch. We
//!   call this a dirty zero and ... review will queue the object to be examined again two
//!   epochs later, in epoch 8."
//!
//! Each core "calls review" once per epoch, in the order written; the last one ends the epoch.

#![cfg(not(loom))]

use oplog_refcount::testing::{cached_delta, clone_on, drop_on, flush, queued_epochs, review, upgrade_on};
use oplog_refcount::{Config, CoreMode, Domain, ObjectState, Rc, Weak};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts its destructor runs.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn three_cores() -> Domain {
    Domain::new(Config::new().mode(CoreMode::PerCpu).cpus(3).cache_entries(16).review_period(None)).unwrap()
}

/// The object's fields: (global count, queued, dirty, dying).
fn fields(w: &Weak<Counted>) -> (i64, bool, bool, bool) {
    let ObjectState { global, queued, dirty, dying, freed } = w.state().unwrap();
    assert!(!freed || global == 0);
    (global, queued, dirty, dying)
}

#[test]
fn figure_8_2_eight_epochs_of_one_object() {
    let d = three_cores();
    let drops = Arc::new(AtomicUsize::new(0));
    // The object starts with one reference (r0), counted in its global count.
    let r0 = Rc::new_in(Counted(drops.clone()), &d);
    let w = Rc::downgrade(&r0);
    assert_eq!((d.epoch(), fields(&w)), (1, (1, false, false, false)));

    // Epoch 1: an inc and a dec on each of the three cores; every delta is 0 and the count is
    // not, so no flush writes the object.
    for core in 0..3 {
        let r = clone_on(&d, &r0, core);
        drop_on(&d, r, core);
        assert_eq!(cached_delta(&d, &w, core), Some(0));
    }
    let before = w.state().unwrap();
    for (core, epoch_after) in [(0, 1), (1, 1), (2, 2)] {
        assert_eq!(review(&d, core), 0);
        assert_eq!(d.epoch(), epoch_after, "core {core} flushed; the last one ends the epoch");
        assert_eq!(cached_delta(&d, &w, core), None, "a flush empties the cache");
    }
    assert_eq!(w.state().unwrap(), before, "epoch 1 never wrote the object's fields");

    // Epoch 2: a thread on core 1 takes a reference (ra), then r0 is dropped on core 0. Core 0
    // flushes first: the dec reaches the global count before the inc.
    let ra = clone_on(&d, &r0, 1);
    drop_on(&d, r0, 0);
    assert_eq!(review(&d, 0), 0);
    assert_eq!(fields(&w), (0, true, false, true), "a global zero that is not a true zero: queued, dying");
    assert_eq!(queued_epochs(&d, &w, 0), vec![2]);
    assert_eq!(review(&d, 1), 0);
    assert_eq!(fields(&w), (1, true, false, true), "core 1's increment remedies it");
    assert_eq!(review(&d, 2), 0);
    assert_eq!(d.epoch(), 3);

    // Epoch 3: nothing happens; core 0 flushes last, which starts epoch 4, and then examines
    // the object queued in epoch 2: the count is 1, so it leaves the queue and is not freed.
    assert_eq!(review(&d, 1), 0);
    assert_eq!(review(&d, 2), 0);
    assert_eq!(queued_epochs(&d, &w, 0), vec![2], "epoch 3 < 2 + 2: not examined yet");
    assert_eq!(review(&d, 0), 0);
    assert_eq!(d.epoch(), 4);
    assert_eq!(fields(&w), (1, false, false, false));
    assert!(queued_epochs(&d, &w, 0).is_empty());

    // Epoch 4: cores 1 and 2 flush early. Then core 2 takes a reference (rb, cached on core 2
    // until epoch 5) and ra is dropped on core 0. Core 0 flushes last: a zero again, queued in
    // epoch 4, while the true count is 1.
    assert_eq!(review(&d, 1), 0);
    assert_eq!(review(&d, 2), 0);
    let rb = clone_on(&d, &ra, 2);
    drop_on(&d, ra, 0);
    assert_eq!(review(&d, 0), 0);
    assert_eq!(d.epoch(), 5);
    assert_eq!(fields(&w), (0, true, false, true));
    assert_eq!(queued_epochs(&d, &w, 0), vec![4]);
    assert_eq!(cached_delta(&d, &w, 2), Some(1), "the true count is 1");

    // Epoch 5: core 2 flushes rb's increment (the count is temporarily 1), then takes another
    // reference (rc, cached); rb is dropped on core 1, whose flush brings the count back to
    // zero while the object is queued: a dirty zero. Core 0 ends the epoch and re-examines
    // the object in epoch 6: zero again, but dirty, so it is queued again for epoch 8.
    assert_eq!(review(&d, 2), 0);
    assert_eq!(fields(&w), (1, true, false, true));
    let rc = clone_on(&d, &rb, 2);
    drop_on(&d, rb, 1);
    assert_eq!(review(&d, 1), 0);
    assert_eq!(fields(&w), (0, true, true, true), "a zero on a queued object marks it dirty");
    assert_eq!(review(&d, 0), 0);
    assert_eq!(d.epoch(), 6);
    assert_eq!(fields(&w), (0, true, false, true), "queued again, clean");
    assert_eq!(queued_epochs(&d, &w, 0), vec![6]);
    assert_eq!(drops.load(Ordering::SeqCst), 0);

    // Epochs 6 and 7: core 2 flushes rc's increment; core 0 waits for epoch 8.
    for (core, epoch_after) in [(1, 6), (2, 6), (0, 7), (1, 7), (2, 7)] {
        assert_eq!(review(&d, core), 0);
        assert_eq!(d.epoch(), epoch_after);
    }
    assert_eq!(fields(&w), (1, true, false, true));
    assert_eq!(queued_epochs(&d, &w, 0), vec![6], "epoch 7 < 6 + 2");
    // Epoch 8: core 0 re-examines it and finds the count non-zero: not freed.
    assert_eq!(review(&d, 0), 0);
    assert_eq!(d.epoch(), 8);
    assert_eq!(fields(&w), (1, false, false, false));
    assert_eq!(drops.load(Ordering::SeqCst), 0, "the object was never freed while referenced");

    // Beyond the figure: the last reference is dropped on core 2. Its flush queues the object
    // on core 2 in epoch 8; core 2 frees it when it reviews in epoch 10, and not before.
    drop_on(&d, rc, 2);
    for (core, freed) in [(0, 0), (1, 0), (2, 0), (0, 0), (1, 0)] {
        assert_eq!(review(&d, core), freed);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
    }
    assert_eq!(queued_epochs(&d, &w, 2), vec![8]);
    assert_eq!(review(&d, 2), 1, "a true zero, clean for a whole epoch: freed");
    assert_eq!(d.epoch(), 10);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(w.is_freed());
    assert!(upgrade_on(&d, &w, 1).is_none(), "tryget fails once the object is freed");
}

#[test]
fn tryget_that_clears_dying_first_beats_the_review() {
    let d = three_cores();
    let drops = Arc::new(AtomicUsize::new(0));
    let r = Rc::new_in(Counted(drops.clone()), &d);
    let w = Rc::downgrade(&r);
    drop_on(&d, r, 0);
    // Epoch 1: the zero is seen and queued on core 0. Epoch 2: everyone flushes again.
    for core in [0, 1, 2, 1, 2] {
        flush(&d, core);
    }
    assert_eq!((d.epoch(), fields(&w)), (2, (0, true, false, true)));
    // A revival on core 1: dying is cleared and the increment waits in core 1's cache.
    let revived = upgrade_on(&d, &w, 1).expect("not freed: tryget revives it");
    assert_eq!(fields(&w), (0, true, false, false));
    assert_eq!(cached_delta(&d, &w, 1), Some(1));
    // Core 0 ends epoch 2 and examines: a clean zero, but no longer dying: queued again.
    assert_eq!(review(&d, 0), 0);
    assert_eq!(d.epoch(), 3);
    assert_eq!(fields(&w), (0, true, false, true));
    assert_eq!(queued_epochs(&d, &w, 0), vec![3]);
    // Core 1's flush brings the revived reference in; the next examination keeps the object.
    for core in [1, 2, 0, 1, 2, 0] {
        assert_eq!(review(&d, core), 0);
    }
    assert_eq!((d.epoch(), fields(&w)), (5, (1, false, false, false)));
    assert_eq!(revived.0.load(Ordering::SeqCst), 0, "the revived handle reaches the live value");
    drop_on(&d, revived, 2);
    assert_eq!(d.collect(), 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn zero_deltas_flushed_in_the_interim_also_dirty_a_zero() {
    let d = three_cores();
    let drops = Arc::new(AtomicUsize::new(0));
    let r = Rc::new_in(Counted(drops.clone()), &d);
    let w = Rc::downgrade(&r);
    // Core 1 takes and releases a reference (delta 0) while the last one is dropped on core 0.
    let t = clone_on(&d, &r, 1);
    drop_on(&d, r, 0);
    flush(&d, 0);
    assert_eq!(fields(&w), (0, true, false, true));
    drop_on(&d, t, 1);
    assert_eq!(cached_delta(&d, &w, 1), Some(0));
    flush(&d, 1);
    assert_eq!(fields(&w), (0, true, true, true), "\"even if ... the deltas themselves were zero\"");
    flush(&d, 2);
    for core in [0, 1, 2] {
        flush(&d, core);
    }
    assert_eq!(d.epoch(), 3);
    assert_eq!(review(&d, 0), 0, "dirty: queued again instead of freed");
    assert_eq!(queued_epochs(&d, &w, 0), vec![3]);
    assert_eq!(d.collect(), 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
#[should_panic(expected = "core 5 does not exist in this domain (its cores: [0, 1, 2])")]
fn a_missing_core_is_named() {
    let d = three_cores();
    flush(&d, 5);
}
