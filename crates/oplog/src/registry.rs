//! Per-thread domains: which thread index (and so which log cache) the calling thread
//! owns in each domain.
//!
//! A thread gets an index the first time it updates an object of a per-thread domain and
//! gives it back when it exits; the cache and any logs still in it stay with the index for
//! the next thread (logs are owned by objects, not threads, so nothing is lost). The hot
//! path is one thread-local load and a compare: a one-entry cache of the last domain used.
//! Threads beyond the domain's `max_threads`, and threads whose thread-locals are already
//! torn down, get `None` and share the domain's locked cache at index 0.

use crate::domain::Domain;
use crate::log::LogKind;
use crate::primitive::thread_local_const;
use crate::slot::CoreCache;
use std::cell::{Cell, RefCell};
use std::sync::{Arc, Weak};

/// Something that hands out thread indices and wants them back.
trait ThreadIndexOwner: Send + Sync {
    fn release(&self, index: usize);
}

impl<L: LogKind> ThreadIndexOwner for Domain<L> {
    fn release(&self, index: usize) {
        self.release_thread_index(index);
    }
}

/// The last domain this thread used: its id, its cache (type-erased), its index.
#[derive(Clone, Copy)]
struct Fast {
    domain: u64,
    core: *const (),
    index: usize,
}

impl Fast {
    const EMPTY: Fast = Fast { domain: 0, core: std::ptr::null(), index: 0 };
}

/// A thread's claim on one domain's thread index; gives it back on drop (thread exit).
struct Registration {
    domain: u64,
    core: *const (),
    index: usize,
    owner: Weak<dyn ThreadIndexOwner>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Forget the fast path first, so nothing on this thread writes the cache after the
        // index has been handed to another thread.
        let _ = FAST.try_with(|f| {
            if f.get().domain == self.domain {
                f.set(Fast::EMPTY);
            }
        });
        if let Some(owner) = self.owner.upgrade() {
            owner.release(self.index);
        }
    }
}

thread_local_const! {
    static FAST: Cell<Fast> = Cell::new(Fast::EMPTY);
}

thread_local_const! {
    static REGISTRATIONS: RefCell<Vec<Registration>> = RefCell::new(Vec::new());
}

/// The calling thread's index and log cache in per-thread `domain`, claiming one on first
/// use; `None` when it has none (see the module docs).
#[inline(always)]
///
/// `arc` is `domain` as the pointer its `Arc` gave out (`Arc::into_raw`), for claiming.
pub(crate) fn thread_core<L: LogKind>(domain: &Domain<L>, arc: *const Domain<L>) -> Option<(usize, &CoreCache<L>)> {
    let f = FAST.with(Cell::get);
    if f.domain == domain.id {
        // SAFETY: FAST holds this domain's id only if `thread_core_slow` stored it with a
        // pointer to this domain's cache at `f.index` (domain ids are never reused), and
        // caches live as long as their domain, which `domain` keeps alive.
        return Some((f.index, unsafe { &*f.core.cast::<CoreCache<L>>() }));
    }
    thread_core_slow(domain, arc)
}

#[cold]
fn thread_core_slow<L: LogKind>(domain: &Domain<L>, arc: *const Domain<L>) -> Option<(usize, &CoreCache<L>)> {
    let (index, core) = REGISTRATIONS
        .try_with(|regs| {
            let mut regs = regs.borrow_mut();
            if let Some(r) = regs.iter().find(|r| r.domain == domain.id) {
                return Some((r.index, r.core));
            }
            // Drop claims on domains that no longer exist.
            regs.retain(|r| r.owner.strong_count() > 0);
            let index = domain.acquire_thread_index()?;
            let core = std::ptr::from_ref(domain.thread_cache(index)).cast::<()>();
            // SAFETY: `arc` came from `Arc::into_raw` of this domain's `Arc`, which is alive
            // (the caller borrows the domain); this views it as that `Arc` without touching
            // the count (ManuallyDrop) to take a weak reference.
            let arc = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(arc) });
            let owner: Weak<dyn ThreadIndexOwner> = Arc::downgrade(&*arc) as Weak<dyn ThreadIndexOwner>;
            regs.push(Registration { domain: domain.id, core, index, owner });
            Some((index, core))
        })
        .ok()??;
    FAST.with(|f| f.set(Fast { domain: domain.id, core, index }));
    // SAFETY: `core` points to this domain's cache at `index` (just looked up or created),
    // which lives as long as the domain.
    Some((index, unsafe { &*core.cast::<CoreCache<L>>() }))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::domain::Config;
    use crate::log::CounterLog;

    /// `thread_core` for a domain held in an `Arc`.
    fn core_of(d: &Arc<Domain<CounterLog>>) -> Option<(usize, &CoreCache<CounterLog>)> {
        thread_core(d, Arc::as_ptr(d))
    }

    #[test]
    fn a_thread_keeps_its_index_and_returns_it_at_exit() {
        let d = Domain::<CounterLog>::new(Config::per_thread().max_threads(2)).unwrap();
        let (a, b) = std::thread::scope(|s| {
            s.spawn(|| {
                let (i, c1) = core_of(&d).unwrap();
                let (j, c2) = core_of(&d).unwrap();
                assert_eq!(i, j);
                assert!(std::ptr::eq(c1, c2));
                i
            })
            .join()
            .unwrap();
            let b = s.spawn(|| core_of(&d).unwrap().0).join().unwrap();
            (1, b)
        });
        // The first thread exited, so the second reused its index.
        assert_eq!((a, b), (1, 1));
    }

    #[test]
    fn threads_beyond_the_limit_get_none() {
        let d = Domain::<CounterLog>::new(Config::per_thread().max_threads(1)).unwrap();
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            let h1 = s.spawn(|| {
                let r = core_of(&d).map(|(i, _)| i);
                barrier.wait();
                barrier.wait();
                r
            });
            barrier.wait();
            let r2 = s.spawn(|| core_of(&d).map(|(i, _)| i)).join().unwrap();
            barrier.wait();
            assert_eq!(h1.join().unwrap(), Some(1));
            assert_eq!(r2, None);
        });
    }

    #[test]
    fn two_domains_on_one_thread_each_get_an_index() {
        let d1 = Domain::<CounterLog>::new(Config::per_thread()).unwrap();
        let d2 = Domain::<CounterLog>::new(Config::per_thread()).unwrap();
        std::thread::spawn(move || {
            let a = core_of(&d1).unwrap().0;
            let b = core_of(&d2).unwrap().0;
            assert_eq!(core_of(&d1).unwrap().0, a);
            assert_eq!(core_of(&d2).unwrap().0, b);
        })
        .join()
        .unwrap();
    }
}
