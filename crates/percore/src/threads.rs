//! Per-thread indices: which index of a per-thread [`PerCore`](super::PerCore) the calling
//! thread owns.
//!
//! A thread claims an index the first time it enters a per-thread `PerCore` and gives it
//! back when it exits; the slots (and anything left in them) stay with the index for the
//! next thread. The hot path is one thread-local load and a compare: a one-entry cache of the
//! last pool used. Threads beyond the pool's capacity, and threads whose thread-locals are
//! already torn down, get `None` (callers share index 0 under its lock).

use crate::primitive::{Mutex, MutexGuard, thread_local_const};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Source of unique pool ids. Process-wide and never part of a modelled interleaving, so a
/// plain std atomic (see [`crate::primitive`]).
static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

/// The thread indices `1..=capacity` of one per-thread `PerCore`.
pub(crate) struct Pool {
    id: u64,
    capacity: usize,
    free: Mutex<Free>,
}

/// A held pool (see [`Pool::hold`]).
pub(crate) struct Hold<'a>(#[allow(dead_code)] MutexGuard<'a, Free>);

#[derive(Default)]
pub(crate) struct Free {
    returned: Vec<usize>,
    next: usize,
}

impl Pool {
    /// The pool's id (the key of the thread-local fast path).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Pool {
            id: NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed),
            capacity,
            free: Mutex::new(Free { returned: Vec::new(), next: 1 }, "Pool.free"),
        })
    }

    /// Hands out an index and runs `claim` on it, both under the pool's lock (so that
    /// [`Pool::hold`] excludes claims), or `None` if all indices are in use.
    fn acquire(&self, claim: impl FnOnce(usize) -> *const ()) -> Option<(usize, *const ())> {
        let mut f = self.free.lock();
        let index = match f.returned.pop() {
            Some(i) => i,
            None if f.next <= self.capacity => {
                f.next += 1;
                f.next - 1
            }
            None => return None,
        };
        Some((index, claim(index)))
    }

    /// Holds the pool: no thread claims an index until the guard drops. Returns one past
    /// the largest index ever handed out.
    pub(crate) fn hold(&self) -> (usize, Hold<'_>) {
        let f = self.free.lock();
        (f.next, Hold(f))
    }

    /// Takes an index back.
    fn release(&self, index: usize) {
        self.free.lock().returned.push(index);
    }
}

/// The last pool this thread used: its id, the pointer given at claim time, the index.
#[derive(Clone, Copy)]
struct Fast {
    pool: u64,
    ptr: *const (),
    index: usize,
}

impl Fast {
    const EMPTY: Fast = Fast { pool: 0, ptr: std::ptr::null(), index: 0 };
}

/// A thread's claim on one pool's index; gives it back on drop (thread exit).
struct Registration {
    pool: u64,
    ptr: *const (),
    index: usize,
    owner: Weak<Pool>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Forget the fast path first, so nothing on this thread writes the slots after the
        // index has been handed to another thread.
        let _ = FAST.try_with(|f| {
            if f.get().pool == self.pool {
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

/// The calling thread's index in `pool` (whose id is `pool_id`, passed separately so the
/// hot path does not reach into the pool), and the pointer `claim(index)` returned when the
/// thread claimed it (the caller's per-index storage); claims an index on first use.
/// `None` when the thread has none (see the module docs).
#[inline(always)]
pub(crate) fn current(
    pool_id: u64,
    pool: &Arc<Pool>,
    claim: impl FnOnce(usize) -> *const (),
) -> Option<(usize, *const ())> {
    if let Some(claimed) = cached(pool_id) {
        return Some(claimed);
    }
    current_slow(pool, claim)
}

/// [`current`]'s answer where the thread's one-entry cache holds it (the pool it used
/// last); `None` otherwise, without claiming. `pool_id` is a pool's (pool ids start at 1;
/// the empty cache holds 0).
#[inline(always)]
pub(crate) fn cached(pool_id: u64) -> Option<(usize, *const ())> {
    let f = FAST.with(Cell::get);
    (f.pool == pool_id).then_some((f.index, f.ptr))
}

/// The calling thread's index in the pool whose id is `pool_id`, if it has claimed one,
/// without claiming.
pub(crate) fn claimed(pool_id: u64) -> Option<usize> {
    let f = FAST.try_with(Cell::get).ok()?;
    if f.pool == pool_id {
        return Some(f.index);
    }
    REGISTRATIONS.try_with(|regs| regs.borrow().iter().find(|r| r.pool == pool_id).map(|r| r.index)).ok()?
}

#[cold]
fn current_slow(pool: &Arc<Pool>, claim: impl FnOnce(usize) -> *const ()) -> Option<(usize, *const ())> {
    let (index, ptr) = REGISTRATIONS
        .try_with(|regs| {
            let mut regs = regs.borrow_mut();
            if let Some(r) = regs.iter().find(|r| r.pool == pool.id) {
                return Some((r.index, r.ptr));
            }
            // Drop claims on pools that no longer exist.
            regs.retain(|r| r.owner.strong_count() > 0);
            let (index, ptr) = pool.acquire(claim)?;
            regs.push(Registration { pool: pool.id, ptr, index, owner: Arc::downgrade(pool) });
            Some((index, ptr))
        })
        .ok()??;
    FAST.with(|f| f.set(Fast { pool: pool.id, ptr, index }));
    Some((index, ptr))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn index_of(pool: &Arc<Pool>) -> Option<usize> {
        current(pool.id(), pool, std::ptr::without_provenance).map(|(i, p)| {
            assert_eq!(p.addr(), i, "the claim's pointer comes back");
            i
        })
    }

    #[test]
    fn a_thread_keeps_its_index_and_returns_it_at_exit() {
        let pool = Pool::new(2);
        let first = std::thread::scope(|s| {
            s.spawn(|| {
                let i = index_of(&pool).unwrap();
                assert_eq!(index_of(&pool), Some(i));
                i
            })
            .join()
            .unwrap()
        });
        let second = std::thread::spawn({
            let pool = pool.clone();
            move || index_of(&pool).unwrap()
        })
        .join()
        .unwrap();
        // The first thread exited, so the second reused its index.
        assert_eq!((first, second), (1, 1));
    }

    #[test]
    fn threads_beyond_the_capacity_get_none() {
        let pool = Pool::new(1);
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            let h1 = s.spawn(|| {
                let r = index_of(&pool);
                barrier.wait();
                barrier.wait();
                r
            });
            barrier.wait();
            let r2 = s.spawn(|| index_of(&pool)).join().unwrap();
            barrier.wait();
            assert_eq!(h1.join().unwrap(), Some(1));
            assert_eq!(r2, None);
        });
    }

    #[test]
    fn two_pools_on_one_thread_each_get_an_index() {
        let (p1, p2) = (Pool::new(4), Pool::new(4));
        std::thread::spawn(move || {
            let a = index_of(&p1).unwrap();
            let b = index_of(&p2).unwrap();
            assert_eq!(index_of(&p1), Some(a));
            assert_eq!(index_of(&p2), Some(b));
        })
        .join()
        .unwrap();
    }
}
