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
    /// its alignment at least [`LINE`]; `None` if the rounded size overflows `isize` (no
    /// allocation that large can succeed).
    pub fn widen(layout: Layout) -> Option<Layout> {
        let size = layout.size().checked_next_multiple_of(LINE)?;
        Layout::from_size_align(size, layout.align().max(LINE)).ok()
    }
}

// SAFETY: every call passes the system allocator the widened layout, the same one for an
// allocation's alloc, realloc and dealloc (widening is a function of the caller's layout,
// which the caller passes back unchanged); a widened layout is at least as large and as
// aligned as the caller's, so the memory returned satisfies the caller's layout. A layout
// that cannot be widened fails the allocation (null) instead of unwinding, which an
// allocator must not do.
unsafe impl GlobalAlloc for Lines {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::widen(layout) {
            // SAFETY: the widened layout has a non-zero size, as the caller's has.
            Some(wide) => unsafe { System.alloc(wide) },
            None => std::ptr::null_mut(),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match Self::widen(layout) {
            // SAFETY: as in `alloc`.
            Some(wide) => unsafe { System.alloc_zeroed(wide) },
            None => std::ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // `ptr` came from `alloc`, `alloc_zeroed` or `realloc` with this layout, so it widened.
        let Some(wide) = Self::widen(layout) else { return };
        // SAFETY: `ptr` was allocated by the system allocator with the widened `layout`.
        unsafe { System.dealloc(ptr, wide) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let wide = Layout::from_size_align(new_size, layout.align()).ok().and_then(Self::widen);
        let (Some(old), Some(new)) = (Self::widen(layout), wide) else { return std::ptr::null_mut() };
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
        let l = Lines::widen(Layout::from_size_align(24, 8).unwrap()).unwrap();
        assert_eq!((l.size(), l.align()), (64, 64));
        let l = Lines::widen(Layout::from_size_align(65, 128).unwrap()).unwrap();
        assert_eq!((l.size(), l.align()), (128, 128));
    }

    #[test]
    fn a_layout_that_cannot_be_widened_fails_the_allocation_without_unwinding() {
        let huge = Layout::from_size_align(isize::MAX as usize - 10, 1).unwrap();
        assert_eq!(Lines::widen(huge), None);
        // SAFETY: a non-zero size; a null result is the allocator's failure.
        assert!(unsafe { Lines.alloc(huge) }.is_null());
    }
}
