//! Stable homes for objects: each domain keeps its objects' shared parts in a slab.
//!
//! A log-cache slot names the object owning it, and an evictor must reach that object to
//! apply the log it evicts (000 §6, 001 ch. 7 synchronize the victim). Rust values move, so
//! an [`OpLog`](crate::OpLog) is a handle to a shared part that never moves: an entry of its
//! domain's slab.
//!
//! Entries are packed in chunks of at least 16 KiB, each aligned to its own size and
//! starting with a header naming the slab's owner (the domain). An entry finds its owner by
//! masking its address, so objects do not store a pointer to their domain: a counter costs
//! its 8-byte handle plus a 16-byte entry (its lock word and value), with no per-object
//! allocator header. Freed entries are reused; chunks live until the slab is dropped, which
//! the domain does only once no object exists (every object holds its domain).

use crate::primitive::Mutex;
use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ptr::NonNull;

/// Smallest chunk: 16 KiB.
const MIN_CHUNK_BYTES: usize = 16 * 1024;

/// The start of every chunk.
#[repr(C)]
struct Header {
    owner: *const (),
}

/// A slab of `T`s at stable addresses, each of which can find the slab's owner.
pub(crate) struct Slab<T> {
    inner: Mutex<Inner<T>>,
}

struct Inner<T> {
    /// Every chunk, allocated with [`Slab::layout`] and freed on drop.
    chunks: Vec<NonNull<Header>>,
    /// Entries handed out from the last chunk.
    used: usize,
    /// Entries given back, reused first.
    free: Vec<NonNull<T>>,
    /// Entries currently holding a value.
    live: usize,
}

// SAFETY: the slab only hands out and takes back entries; the values in them are reached by
// their owners (`OpLog` handles), which are Send/Sync only when `T`'s contents are. The
// bookkeeping is behind the mutex, and the owner pointers in chunk headers are only read.
unsafe impl<T: Send> Send for Slab<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Slab<T> {}

impl<T> Slab<T> {
    /// Bytes in a chunk: a power of two, so an entry's chunk is its address rounded down.
    const CHUNK_BYTES: usize = {
        let need = Self::FIRST + std::mem::size_of::<T>();
        let bytes = if need > MIN_CHUNK_BYTES { need.next_power_of_two() } else { MIN_CHUNK_BYTES };
        assert!(std::mem::align_of::<T>() <= bytes);
        bytes
    };
    /// Offset of the first entry in a chunk.
    const FIRST: usize = std::mem::size_of::<Header>().next_multiple_of(std::mem::align_of::<T>());
    /// Entries per chunk.
    const PER_CHUNK: usize = (Self::CHUNK_BYTES - Self::FIRST) / std::mem::size_of::<T>();

    pub(crate) fn new() -> Self {
        assert!(std::mem::size_of::<T>() > 0, "slab entries must have a size");
        Self { inner: Mutex::new(Inner { chunks: Vec::new(), used: 0, free: Vec::new(), live: 0 }, "Slab.inner") }
    }

    fn layout() -> Layout {
        Layout::from_size_align(Self::CHUNK_BYTES, Self::CHUNK_BYTES).expect("a power-of-two chunk is a valid layout")
    }

    /// Moves `value` into a free entry and returns its address, stable until [`Slab::free`].
    /// `owner` is what [`Slab::owner_of`] returns for the entries; it must be the same on
    /// every call.
    pub(crate) fn alloc(&self, value: T, owner: *const ()) -> NonNull<T> {
        let entry = {
            let mut s = self.inner.lock();
            s.live += 1;
            match s.free.pop() {
                Some(p) => p,
                None => {
                    if s.chunks.is_empty() || s.used == Self::PER_CHUNK {
                        let layout = Self::layout();
                        // SAFETY: the layout has a non-zero size.
                        let raw = unsafe { alloc(layout) };
                        let Some(chunk) = NonNull::new(raw.cast::<Header>()) else { handle_alloc_error(layout) };
                        // SAFETY: the chunk is freshly allocated, aligned for `Header`.
                        unsafe { chunk.as_ptr().write(Header { owner }) };
                        s.chunks.push(chunk);
                        s.used = 0;
                    }
                    let chunk = *s.chunks.last().expect("a chunk was just ensured");
                    // SAFETY: FIRST + used * size < CHUNK_BYTES (used < PER_CHUNK), so the
                    // entry lies inside the chunk; FIRST is a multiple of T's alignment and
                    // the chunk is aligned to CHUNK_BYTES ≥ that alignment.
                    let p = unsafe { chunk.cast::<u8>().add(Self::FIRST + s.used * std::mem::size_of::<T>()) };
                    s.used += 1;
                    p.cast::<T>()
                }
            }
        };
        // SAFETY: `entry` is inside a live chunk, aligned, and unused (fresh or given back by
        // `free`), so writing a value into it overwrites nothing live.
        unsafe { entry.as_ptr().write(value) };
        entry
    }

    /// The `owner` given to [`Slab::alloc`] for the chunk holding `entry`.
    ///
    /// # Safety
    /// `entry` points into a live chunk of a slab of `T`s (it came from `alloc`).
    #[inline(always)]
    pub(crate) unsafe fn owner_of(entry: *const T) -> *const () {
        let header = entry.map_addr(|a| a & !(Self::CHUNK_BYTES - 1)).cast::<Header>();
        // SAFETY: chunks are aligned to CHUNK_BYTES and start with a header, so rounding an
        // entry's address down to a multiple of CHUNK_BYTES gives its chunk's header; the
        // pointer keeps the entry's provenance (the whole chunk allocation).
        unsafe { (*header).owner }
    }

    /// Gives an entry back for reuse.
    ///
    /// # Safety
    /// `entry` came from [`Slab::alloc`] on this slab, its value has been dropped or moved
    /// out, and nothing uses it afterwards.
    pub(crate) unsafe fn free(&self, entry: NonNull<T>) {
        let mut s = self.inner.lock();
        s.live -= 1;
        s.free.push(entry);
    }

    /// Bytes the slab holds (chunks and its free list), for memory reports.
    pub(crate) fn footprint(&self) -> usize {
        let s = self.inner.lock();
        s.chunks.len() * Self::CHUNK_BYTES
            + s.free.capacity() * std::mem::size_of::<NonNull<T>>()
            + s.chunks.capacity() * std::mem::size_of::<NonNull<Header>>()
    }

    /// Entries holding a value.
    pub(crate) fn live(&self) -> usize {
        self.inner.lock().live
    }
}

impl<T> Drop for Slab<T> {
    fn drop(&mut self) {
        let s = self.inner.lock();
        debug_assert_eq!(s.live, 0, "a slab dropped while entries are in use");
        for &chunk in &s.chunks {
            // SAFETY: each chunk was allocated with this layout and is freed once, here; its
            // entries hold no live values (every owner freed its entry before the domain,
            // and so the slab, could be dropped).
            unsafe { dealloc(chunk.as_ptr().cast(), Self::layout()) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn entries_are_stable_reused_and_find_their_owner() {
        let owner = std::ptr::without_provenance::<()>(0xdead_beef);
        let slab = Slab::<[u64; 2]>::new();
        let n = 3 * Slab::<[u64; 2]>::PER_CHUNK + 5;
        let ptrs: Vec<_> = (0..n as u64).map(|i| slab.alloc([i, i], owner)).collect();
        assert_eq!(slab.live(), n);
        assert_eq!(slab.footprint() / (16 * 1024), 4, "four 16 KiB chunks, small bookkeeping");
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY: all entries are live and hold the values written.
            assert_eq!(unsafe { p.as_ref() }[0], i as u64);
            // SAFETY: the entry came from `alloc`.
            assert_eq!(unsafe { Slab::owner_of(p.as_ptr()) }, owner);
        }
        // SAFETY: each entry is freed once and not used again.
        unsafe { slab.free(ptrs[7]) };
        let again = slab.alloc([9, 9], owner);
        assert_eq!(again, ptrs[7], "a freed entry is reused first");
        for (i, p) in ptrs.into_iter().enumerate() {
            if i != 7 {
                // SAFETY: as above.
                unsafe { slab.free(p) };
            }
        }
        // SAFETY: as above.
        unsafe { slab.free(again) };
        assert_eq!(slab.live(), 0);
    }

    #[test]
    fn large_entries_get_larger_chunks() {
        let slab = Slab::<[u8; 40_000]>::new();
        assert_eq!(Slab::<[u8; 40_000]>::CHUNK_BYTES, 64 * 1024);
        let p = slab.alloc([1; 40_000], std::ptr::null());
        // SAFETY: the entry came from `alloc`.
        assert!(unsafe { Slab::owner_of(p.as_ptr()) }.is_null());
        // SAFETY: freed once.
        unsafe { slab.free(p) };
    }
}
