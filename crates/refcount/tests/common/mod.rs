//! Instrumented values and handles for the concurrency tests: every destructor run is
//! counted, and a destructor that runs twice, or while a strong handle exists, or a handle
//! that reaches a dropped value, is recorded as a violation that fails the test. The seeded
//! generator is the workspace's (`oplog_lincheck::testkit::Rng`).

#![allow(dead_code)]

pub use oplog_lincheck::testkit::Rng;
use oplog_refcount::{Domain, Rc, Weak};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Scales a test size down under Miri.
pub fn size(native: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// What happened to a set of objects `0..n`.
pub struct Tracker {
    /// Live strong handles of each object, kept by [`H`] (an exact, contended count: the
    /// oracle the destructor checks against).
    handles: Vec<AtomicIsize>,
    dropped: Vec<AtomicBool>,
    drops: AtomicUsize,
    violations: Mutex<Vec<String>>,
}

impl Tracker {
    pub fn new(n: usize) -> Arc<Tracker> {
        Arc::new(Tracker {
            handles: (0..n).map(|_| AtomicIsize::new(0)).collect(),
            dropped: (0..n).map(|_| AtomicBool::new(false)).collect(),
            drops: AtomicUsize::new(0),
            violations: Mutex::new(Vec::new()),
        })
    }

    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }

    pub fn is_dropped(&self, id: usize) -> bool {
        self.dropped[id].load(Ordering::SeqCst)
    }

    fn violation(&self, what: String) {
        self.violations.lock().unwrap().push(what);
    }

    /// Panics with every violation seen.
    pub fn assert_clean(&self) {
        let v = self.violations.lock().unwrap();
        assert!(v.is_empty(), "{} violation(s): {:?}", v.len(), &v[..v.len().min(10)]);
    }
}

/// The value behind each tracked object; its destructor checks the tracker.
pub struct Value {
    pub id: usize,
    tracker: Arc<Tracker>,
    /// Another object this one keeps alive (for chains).
    pub next: Option<H>,
}

impl Drop for Value {
    fn drop(&mut self) {
        let t = &self.tracker;
        if t.dropped[self.id].swap(true, Ordering::SeqCst) {
            t.violation(format!("object {}: destructor ran twice", self.id));
        }
        let live = t.handles[self.id].load(Ordering::SeqCst);
        if live != 0 {
            t.violation(format!("object {}: destructor ran while {live} strong handle(s) existed", self.id));
        }
        t.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// A strong handle that keeps the tracker's count of live handles.
pub struct H(Option<Rc<Value>>);

impl H {
    pub fn new_in(id: usize, tracker: &Arc<Tracker>, domain: &Domain) -> H {
        Self::with_next(id, tracker, domain, None)
    }

    pub fn with_next(id: usize, tracker: &Arc<Tracker>, domain: &Domain, next: Option<H>) -> H {
        tracker.handles[id].fetch_add(1, Ordering::SeqCst);
        H(Some(Rc::new_in(Value { id, tracker: tracker.clone(), next }, domain)))
    }

    pub fn rc(&self) -> &Rc<Value> {
        self.0.as_ref().unwrap()
    }

    /// Reads through the handle: the value must not have been dropped.
    pub fn check(&self) -> usize {
        let v = self.rc();
        if v.tracker.is_dropped(v.id) {
            v.tracker.violation(format!("object {}: a strong handle reached the dropped value", v.id));
        }
        v.id
    }

    pub fn downgrade(&self) -> Weak<Value> {
        Rc::downgrade(self.rc())
    }

    /// `Weak::upgrade`, counted in the tracker once it succeeded.
    pub fn upgrade(w: &Weak<Value>) -> Option<H> {
        let rc = w.upgrade()?;
        rc.tracker.handles[rc.id].fetch_add(1, Ordering::SeqCst);
        let h = H(Some(rc));
        h.check();
        Some(h)
    }
}

impl Clone for H {
    fn clone(&self) -> H {
        let v = self.rc();
        v.tracker.handles[v.id].fetch_add(1, Ordering::SeqCst);
        H(Some(v.clone()))
    }
}

impl Drop for H {
    fn drop(&mut self) {
        let rc = self.0.take().unwrap();
        // Uncount first: the destructor cannot run while `rc` still exists.
        rc.tracker.handles[rc.id].fetch_sub(1, Ordering::SeqCst);
        drop(rc);
    }
}
