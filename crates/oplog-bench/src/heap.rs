//! Heap accounting for memory figures: the binary's global allocator forwards to the system
//! allocator and keeps, per thread, the net number of bytes that thread has allocated.
//!
//! A measurement sums [`thread_bytes`] deltas over the threads that did the work, so other
//! threads (other tests, background threads) do not disturb it, and memory allocated on one
//! thread and freed on another balances out in the sum. The figures are bytes *requested*;
//! the allocator's own per-block overhead is not included. The cost is one thread-local add
//! per allocation, with no shared write.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The counting allocator (see the module docs).
#[derive(Debug)]
pub struct CountingAlloc;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

std::thread_local! {
    static NET: Cell<i64> = const { Cell::new(0) };
}

fn count(bytes: i64) {
    // While a thread's locals are torn down its last frees go uncounted: it is exiting.
    let _ = NET.try_with(|n| n.set(n.get() + bytes));
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the `GlobalAlloc`
// contract; the counting touches only a thread-local integer and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// Net bytes the calling thread has allocated since it started (negative if it freed more
/// than it allocated).
pub fn thread_bytes() -> i64 {
    NET.try_with(Cell::get).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_and_frees_are_counted_per_thread() {
        let before = thread_bytes();
        let v: Vec<u64> = Vec::with_capacity(1000);
        assert_eq!(thread_bytes() - before, 8000);
        let moved = std::thread::spawn(move || {
            let start = thread_bytes();
            drop(v);
            thread_bytes() - start
        })
        .join()
        .unwrap();
        assert_eq!(moved, -8000, "freed on another thread: counted there");
    }
}
