//! Stable homes for objects: each domain keeps its objects' shared parts in a slab.
//!
//! A log-cache slot names the object owning it, and an evictor must reach that object to
//! apply the log it evicts (000 §6, 001 ch. 7 synchronize the victim). Rust values move, so
//! an [`OpLog`](crate::OpLog) is a handle to a shared part that never moves: an entry of its
//! domain's slab. Entries are fixed-size and packed in chunks (no per-object allocator
//! header), so a counter costs its 8-byte handle plus a 24-byte entry. Freed entries are
//! reused; chunks live until the domain is dropped, which cannot happen while an object
//! exists (every object holds its domain).

use crate::primitive::Mutex;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// Entries in the first chunk; each further chunk doubles, up to [`MAX_CHUNK`].
const FIRST_CHUNK: usize = 16;
const MAX_CHUNK: usize = 4096;

/// A slab of `T`s at stable addresses.
pub(crate) struct Slab<T> {
    inner: Mutex<Inner<T>>,
}

struct Inner<T> {
    /// Every chunk with its length, allocated with `Box::into_raw` and freed on drop.
    chunks: Vec<(NonNull<MaybeUninit<T>>, usize)>,
    /// Entries handed out from the last chunk.
    used: usize,
    /// Entries given back, reused first.
    free: Vec<NonNull<T>>,
    /// Entries currently holding a value.
    live: usize,
}

// SAFETY: the slab only hands out and takes back entries; the values in them are reached by
// their owners (`OpLog` handles), which are Send/Sync only when `T`'s contents are. The
// bookkeeping is behind the mutex.
unsafe impl<T: Send> Send for Slab<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Slab<T> {}

impl<T> Slab<T> {
    pub(crate) fn new() -> Self {
        Self { inner: Mutex::new(Inner { chunks: Vec::new(), used: 0, free: Vec::new(), live: 0 }, "Slab.inner") }
    }

    /// Moves `value` into a free entry and returns its address, stable until [`Slab::free`].
    pub(crate) fn alloc(&self, value: T) -> NonNull<T> {
        let entry = {
            let mut s = self.inner.lock();
            s.live += 1;
            match s.free.pop() {
                Some(p) => p,
                None => {
                    let last_len = s.chunks.last().map_or(0, |c| c.1);
                    if s.used == last_len {
                        let len = (last_len * 2).clamp(FIRST_CHUNK, MAX_CHUNK);
                        let chunk = Box::into_raw(Box::<[T]>::new_uninit_slice(len));
                        // SAFETY: Box::into_raw never returns null.
                        s.chunks.push((unsafe { NonNull::new_unchecked(chunk.cast::<MaybeUninit<T>>()) }, len));
                        s.used = 0;
                    }
                    let (chunk, _) = *s.chunks.last().expect("a chunk was just ensured");
                    // SAFETY: `used` < the last chunk's length, so the entry is inside it.
                    let p = unsafe { chunk.add(s.used) }.cast::<T>();
                    s.used += 1;
                    p
                }
            }
        };
        // SAFETY: `entry` is inside a live chunk, properly aligned, and unused (fresh or
        // given back by `free`), so writing a value into it overwrites nothing live.
        unsafe { entry.as_ptr().write(value) };
        entry
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
        s.chunks.iter().map(|c| c.1 * std::mem::size_of::<T>()).sum::<usize>()
            + s.free.capacity() * std::mem::size_of::<NonNull<T>>()
            + s.chunks.capacity() * std::mem::size_of::<(NonNull<MaybeUninit<T>>, usize)>()
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
        for &(chunk, len) in &s.chunks {
            // SAFETY: each chunk came from `Box::into_raw` of a boxed slice of `len` entries
            // and is freed exactly once, here. The entries hold no live values (every owner
            // freed its entry before the domain, and so the slab, could be dropped), and
            // `MaybeUninit` drops nothing.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(chunk.as_ptr(), len)) });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn entries_are_stable_reused_and_counted() {
        let slab = Slab::<[u64; 3]>::new();
        let ptrs: Vec<_> = (0..100u64).map(|i| slab.alloc([i, i, i])).collect();
        assert_eq!(slab.live(), 100);
        // SAFETY: all entries are live and hold the values written.
        assert!(ptrs.iter().enumerate().all(|(i, p)| unsafe { p.as_ref() }[0] == i as u64));
        // SAFETY: each entry is freed once and not used again.
        unsafe { slab.free(ptrs[7]) };
        let again = slab.alloc([9, 9, 9]);
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
        assert!(slab.footprint() >= 100 * 24);
    }
}
