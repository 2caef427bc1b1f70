//! Heap accounting for the `memory` experiment: a global allocator that counts the live
//! bytes allocated by the threads that ask to be counted.
//!
//! [`CountingAlloc`] forwards every call to [`System`]. A [`Tally`] is one count of live
//! bytes; a thread joins it with [`Tally::count_this_thread`], and while the returned guard
//! lives, the thread's allocations add their requested size to that tally and its
//! deallocations subtract theirs. The difference of two readings of
//! [`Tally::live_bytes`] is the heap growth of the counted threads in between.
//!
//! Why a per-thread opt-in into a tally, rather than counting always or measuring in a
//! child process:
//!
//! * Counting always would put an atomic add on one shared cache line into every
//!   allocation of every experiment: exactly the contention the throughput experiments
//!   measure, on the hot path of allocation-heavy baselines.
//! * A child process could only count always (the global allocator is fixed per binary),
//!   so it needs the same switch, plus a second process protocol.
//! * A process-wide switch and total would also count unrelated threads (the test harness
//!   runs tests in parallel threads), which makes exact accounting impossible; separate
//!   tallies keep concurrent measurements apart.
//!
//! An uncounted thread pays one read of a thread-local pointer per allocation: no shared
//! write, no atomic. The pointer is a `const`-initialized `Cell`, which needs no lazy
//! initialization and no destructor, so reading it inside the allocator cannot allocate or
//! fail, even while the thread is being torn down.
//!
//! What is counted is the *requested* size (`Layout::size`): the memory the program asks
//! for. The allocator's own per-block overhead (8 to 16 bytes per block with glibc) comes
//! on top, and only penalizes designs with many small blocks. Memory allocated by a counted
//! thread and freed by an uncounted one (or the reverse) skews a tally; the `memory`
//! experiment counts every thread that touches its objects.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, Ordering};

thread_local! {
    /// The tally this thread's allocations go to, or null when not counted.
    static TALLY: Cell<*const AtomicI64> = const { Cell::new(std::ptr::null()) };
}

/// The global allocator of `oplog-bench`: [`System`], plus accounting for counted threads.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAlloc;

#[inline]
fn record(delta: i64) {
    let tally = TALLY.get();
    if !tally.is_null() {
        // SAFETY: a non-null pointer was set by `Tally::count_this_thread` from a live
        // `&Tally`; the returned guard borrows that tally and resets the pointer when it
        // drops, so the tally outlives every use of the pointer.
        unsafe { &*tally }.fetch_add(delta, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is `System`'s; the accounting only reads a thread-local flag and
// adds to an atomic, neither of which allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees (non-zero size layout).
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            record(layout.size() as i64);
        }
        ptr
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            record(layout.size() as i64);
        }
        ptr
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller passes a block this allocator (that is, `System`) returned,
        // with its layout.
        unsafe { System.dealloc(ptr, layout) };
        record(-(layout.size() as i64));
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees (a live block of `layout`, a valid
        // new size).
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            record(new_size as i64 - layout.size() as i64);
        }
        new
    }
}

/// One count of live heap bytes, fed by the threads that join it.
#[derive(Debug, Default)]
pub struct Tally {
    /// Allocations minus deallocations of the counted threads, in requested bytes.
    live: AtomicI64,
}

impl Tally {
    /// A tally at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Live bytes allocated by the threads counted into this tally so far (allocations
    /// minus deallocations). Only differences between two readings mean anything.
    pub fn live_bytes(&self) -> i64 {
        self.live.load(Ordering::Relaxed)
    }

    /// Counts this thread's allocations into this tally until the guard is dropped (then
    /// restores the thread's previous tally, if any, so guards nest).
    #[must_use = "counting stops when the guard is dropped"]
    pub fn count_this_thread(&self) -> Counting<'_> {
        Counting { previous: TALLY.replace(&self.live), _tally: std::marker::PhantomData }
    }
}

/// Guard returned by [`Tally::count_this_thread`]; borrows the tally it counts into.
#[derive(Debug)]
pub struct Counting<'a> {
    previous: *const AtomicI64,
    _tally: std::marker::PhantomData<&'a Tally>,
}

impl Drop for Counting<'_> {
    fn drop(&mut self) {
        TALLY.set(self.previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    #[test]
    fn counted_threads_see_exact_heap_growth() {
        let tally = Tally::new();
        let _counting = tally.count_this_thread();
        let block: Vec<u8> = black_box(Vec::with_capacity(1 << 20));
        // Other threads of the test binary count into other tallies, or none: exact.
        assert_eq!(tally.live_bytes(), 1 << 20);
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.extend(0..100u64);
        v.shrink_to_fit();
        assert_eq!(tally.live_bytes(), (1 << 20) + 800, "realloc counts the size change");
        drop((block, v));
        assert_eq!(tally.live_bytes(), 0);
    }

    #[test]
    fn only_threads_that_opt_in_are_counted() {
        const MIB: i64 = 1 << 20;
        let tally = Tally::new();
        let _counting = tally.count_this_thread();
        let spawn = |counted: bool| {
            let before = tally.live_bytes();
            let block = std::thread::scope(|s| {
                s.spawn(|| {
                    let _guard = counted.then(|| tally.count_this_thread());
                    black_box(vec![7u8; MIB as usize])
                })
                .join()
                .unwrap()
            });
            let grown = tally.live_bytes() - before;
            drop(block); // freed on this counted thread
            grown
        };
        // Spawning allocates a little on this thread, some of it freed by the child.
        let uncounted = spawn(false);
        assert!(uncounted.abs() < 4096, "{uncounted}");
        let counted = spawn(true);
        assert!((MIB..MIB + 4096).contains(&counted), "{counted}");
    }

    #[test]
    fn guards_nest_and_restore() {
        let (outer, inner) = (Tally::new(), Tally::new());
        let counting = outer.count_this_thread();
        {
            let _inner = inner.count_this_thread();
            black_box(vec![1u8; 100]);
        }
        let v = black_box(vec![1u8; 64]);
        assert_eq!((outer.live_bytes(), inner.live_bytes()), (64, 0), "the inner guard restored the outer tally");
        drop(counting);
        drop(v);
        assert_eq!(outer.live_bytes(), 64, "an uncounted thread changes nothing");
    }
}
