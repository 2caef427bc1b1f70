//! Step-by-step control of a domain: run an operation "on core `c`", flush core `c`, review
//! core `c`, and look at caches, queues and epochs in between.
//!
//! These are the same engine functions the handles and the background reviewer call, with
//! the core chosen by the caller instead of by the calling thread, so a test (or a loom model)
//! can replay a history exactly, as `tests/figure_8_2.rs` replays 002 Figure 8-2. The epoch
//! advances exactly as in the algorithm: when the last core flushes in it; there is no way to
//! force it, which would break the two-epoch rule.
//!
//! Each call takes the core's lock as a remote thread (with a process-wide barrier in
//! per-thread domains), so these are slow. Use a domain without a background reviewer
//! (`review_period(None)`) so that nothing else flushes in between.
//!
//! # Panics
//! Every function panics, naming the core and the cores that exist, if `core` does not exist
//! in the domain (per-thread domains create core `i > 0` when a thread first claims it).

use crate::domain::Domain;
use crate::handle::{Rc, Weak};
use crate::refcache::object::Header;
use std::ptr::NonNull;

#[track_caller]
fn missing(domain: &Domain, core: usize) -> ! {
    panic!("core {core} does not exist in this domain (its cores: {:?})", domain.cores())
}

#[track_caller]
fn check<T>(domain: &Domain, core: usize, r: Option<T>) -> T {
    r.unwrap_or_else(|| missing(domain, core))
}

fn same_domain(rc_domain: &crate::domain::Inner, domain: &Domain) {
    assert!(std::ptr::eq(rc_domain, &**domain.inner()), "the handle belongs to another domain");
}

/// A clone of `rc`, counted on `core` (Figure 8-3 `inc` run on that core).
#[track_caller]
pub fn clone_on<T>(domain: &Domain, rc: &Rc<T>, core: usize) -> Rc<T> {
    same_domain(Rc::inner(rc), domain);
    let obj = Rc::header_ptr(rc);
    check(domain, core, domain.inner().refcache.update_on(core, obj, 1));
    // SAFETY: one increment was just counted for the new handle.
    unsafe { Rc::counted(obj) }
}

/// Drops `rc`, counted on `core` (Figure 8-3 `dec` run on that core).
#[track_caller]
pub fn drop_on<T>(domain: &Domain, rc: Rc<T>, core: usize) {
    same_domain(Rc::inner(&rc), domain);
    let obj = Rc::header_ptr(&rc);
    check(domain, core, domain.inner().refcache.update_on(core, obj, -1));
    Rc::forget(rc);
}

/// [`Weak::upgrade`] run on `core` (Figure 8-3 `tryget`).
#[track_caller]
pub fn upgrade_on<T>(domain: &Domain, weak: &Weak<T>, core: usize) -> Option<Rc<T>> {
    let (obj, inner) = weak.target()?;
    same_domain(inner, domain);
    // SAFETY: a successful tryget counted one increment for the new handle.
    check(domain, core, inner.refcache.tryget_on(core, obj)).then(|| unsafe { Rc::counted(obj) })
}

/// Core `core` flushes its delta cache (Figure 8-3 `flush`): every entry is evicted to its
/// object's global count, and if this is the core's first flush of the epoch and the last
/// core of the epoch to flush, the epoch advances.
#[track_caller]
pub fn flush(domain: &Domain, core: usize) {
    if !domain.inner().refcache.flush(core) {
        missing(domain, core);
    }
}

/// Core `core` reviews (Figure 8-3 `review`): flushes, then examines the entries of its review
/// queue that are two epochs old, freeing true zeros. Returns how many objects it freed.
///
/// # Panics
/// Also resumes a destructor's panic (after the other frees).
#[track_caller]
pub fn review(domain: &Domain, core: usize) -> usize {
    if !domain.cores().contains(&core) {
        missing(domain, core);
    }
    domain.inner().refcache.review(core).unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// Core `core`'s per-core epoch: the last epoch in which it flushed.
#[track_caller]
pub fn flushed_epoch(domain: &Domain, core: usize) -> u64 {
    check(domain, core, domain.inner().refcache.flushed_epoch(core))
}

fn object<T>(weak: &Weak<T>) -> NonNull<Header> {
    weak.target().expect("Weak::new() names no object").0
}

/// The delta `core` caches for `weak`'s object, if its cache holds an entry for it.
#[track_caller]
pub fn cached_delta<T>(domain: &Domain, weak: &Weak<T>, core: usize) -> Option<i64> {
    if !domain.cores().contains(&core) {
        missing(domain, core);
    }
    domain.inner().refcache.cached(core, object(weak))
}

/// The epochs of `core`'s review queue entries for `weak`'s object (at most one, unless a
/// review is examining it right now).
#[track_caller]
pub fn queued_epochs<T>(domain: &Domain, weak: &Weak<T>, core: usize) -> Vec<u64> {
    let obj = object(weak);
    let queue = check(domain, core, domain.inner().refcache.queue_of(core));
    queue.into_iter().filter(|q| q.obj == obj).map(|q| q.epoch).collect()
}
