//! The allocator the checker runs on: the system's, with every allocation given whole cache
//! lines of its own (its size rounded up to a multiple of [`LINE`], its start aligned to
//! one).
//!
//! The tracer records heap data behind cells (queue logs' entries, slot tables), so a line
//! that the system allocator happens to share between two allocations (one core's log
//! buffer and the slot table another core reads, say) would be reported as a conflict. That
//! is a property of where `malloc` put two unrelated objects, and it changes from run to
//! run (glibc hands a chunk freed on one thread to that thread's next allocation, wherever
//! it was carved). 002's MTRACE ran sv6, whose allocators are per core; here the checker
//! asks for line-granular allocations instead, so its verdicts are about the data the
//! structures share, the same on every run. Conflicts on shared heap data itself (two cores
//! writing one buffer) are reported as before; `tests/heap.rs` plants one.
//!
//! The binary (`main.rs`) and the test binaries that trace declare it as their global
//! allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: commuter::lines::Lines = commuter::lines::Lines;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

use crate::tracer::LINE;

/// The system allocator, giving every allocation whole cache lines (module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Lines;

impl Lines {
    /// `layout` widened to whole lines: its size rounded up to a multiple of [`LINE`] and
    /// its alignment at least [`LINE`].
    ///
    /// # Panics
    /// If the rounded size overflows `isize` (no allocation that large can succeed).
    pub fn widen(layout: Layout) -> Layout {
        let size = layout.size().next_multiple_of(LINE);
        Layout::from_size_align(size, layout.align().max(LINE)).expect("an allocation rounded up to whole lines")
    }
}

// SAFETY: every call passes the system allocator the widened layout, the same one for an
// allocation's alloc, realloc and dealloc (widening is a function of the caller's layout,
// which the caller passes back unchanged); a widened layout is at least as large and as
// aligned as the caller's, so the memory returned satisfies the caller's layout.
unsafe impl GlobalAlloc for Lines {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the widened layout has a non-zero size, as the caller's has.
        unsafe { System.alloc(Self::widen(layout)) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(Self::widen(layout)) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by the system allocator with the widened `layout`.
        unsafe { System.dealloc(ptr, Self::widen(layout)) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = Self::widen(layout);
        let new = Self::widen(Layout::from_size_align(new_size, layout.align()).expect("a valid reallocation size"));
        // SAFETY: `ptr` was allocated by the system allocator with `old`; `new` has the
        // same alignment as `old` and a non-zero size.
        unsafe { System.realloc(ptr, old, new.size()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_widened_to_whole_aligned_lines() {
        let l = Lines::widen(Layout::from_size_align(24, 8).unwrap());
        assert_eq!((l.size(), l.align()), (64, 64));
        let l = Lines::widen(Layout::from_size_align(65, 128).unwrap());
        assert_eq!((l.size(), l.align()), (128, 128));
    }
}
