//! Stable homes for objects: each domain keeps its objects' shared parts in a slab.
//!
//! A log-cache slot names the object owning it, and an evictor must reach that object to
//! apply the log it evicts (000 §6, 001 ch. 7 synchronize the victim). Rust values move, so
//! an [`OpLog`](crate::OpLog) is a handle to a shared part that never moves: an entry of its
//! domain's slab.
//!
//! Entries are packed in chunks of at least 16 KiB, each aligned to its own size and
//! starting with a header naming the slab's owner (the domain) and the number of the
//! chunk's first entry ([`Slab::index_of`]). An entry finds its owner by
//! masking its address, so objects do not store a pointer to their domain: a counter costs
//! its 8-byte handle plus an 8-byte entry (its lock word) and an 8-byte companion (its
//! value, below), with no per-object allocator header. Freed entries are reused; chunks live
//! until the slab is dropped, which the domain does only once no object exists (every
//! object holds its domain).
//!
//! Each entry may have a *companion* of type `C` (zero-sized by default), kept in an area
//! after the chunk's entries rather than inside the entry, and found from the entry's
//! address ([`Slab::companion`]): the counter's value (its direct log), which direct
//! updates write while the entry's lock word stays read-only (so the word's line stays in
//! every updating core's cache, and each update moves one line, as a plain atomic
//! counter's does). Entry `i` of a chunk has the `i`-th companion from the area's end, so
//! finding it costs a mask, a shift and a subtraction from a constant (`Slab::SCALE`), on
//! the path of every direct update to its atomic add (where a mapping by division, which
//! spread neighbouring entries' companions over the area, cost 0.3–0.8 ns more per update:
//! one thread incrementing a random one of 1,024 counters, pinned to a core, 2-core Intel
//! Xeon host, 2026-11-28, five alternated runs). Instead, a chunk hands its entries out in
//! an order that keeps entries made together apart (below). Counted from the start, each
//! 8-byte counter entry sat 8,184 bytes before its companion, the same distance for all
//! (two pages less 8 bytes), and one thread updating 65,536 counters drawn with Zipf
//! popularity, nearly all direct, ran 11 % slower than with 16-byte entries (171M against
//! 192M updates/s; 2-core AMD EPYC host, 2026-11-29, three alternated runs; a gap of 1 KiB
//! more between the areas gave 181M); counted from the end, 193M against 194M. The
//! companions' area holds whole groups (`Slab::SIDE_SLOTS`), so that those of a group
//! still share a line.
//!
//! # Placement
//!
//! Programs make objects together and deal them out: a server makes its workers' or its
//! connections' statistics in a loop and hands object `i` to worker `i mod T`. Packed in the
//! order they were made, neighbours in memory then belong to different threads, and in the
//! direct representation (each update writes its object in place) every update takes the
//! line from the other thread. So a chunk hands its entries out in *groups*
//! ([`Slab::PER_GROUP`]: the entries, or companions, that share a line), 32 groups to a
//! block ([`SPREAD`]): the `r`-th entry of a block goes to group `r mod 32` ([`Slab::place`]).
//! Entries made one after the other are then on different lines, and so are their companions
//! (two threads each updating its own counter, made together: 9–12 ns per update with the two
//! companions on one line, 2.0–2.5 ns apart, 2-core host, 2026-11-27), and the entries that
//! share a line were made a multiple of 32 apart (of 16, 8, … in the smaller blocks of a
//! chunk's tail): dealt out to 2, 4, …, 32 threads in turn, each thread's objects share
//! lines only with its own. Where an entry's users write it
//! ([`Entry::WRITTEN`]), no entry shares the chunk's first line either, whose header every
//! update of every entry reads to find the domain ([`Slab::owner_of`]). Two threads each
//! updating the 8 of 16 objects of a 24-byte state that it was dealt, direct, 2-core AMD
//! host, 2026-11-29, medians of 3 × 300 ms (`objects`' private popularity): 61–65M updates/s
//! made in order beside the header, 65M off the header alone, 324M with both; in the host's
//! slow state (a 380 ns line round trip) 23M against 317M, and counters dealt out the same
//! way, 1,024 of them, 74M against 354M; objects drawn uniformly, unchanged.
//!
//! Within a block, each entry's place in its group is the exclusive-or of `r`'s bits taken
//! `log2(PER_GROUP)` at a time, which keeps entries made together apart in the log cache
//! too (`object`'s slot index is the entry's number in the slab, [`Slab::index_of`]: chunk
//! after chunk, each entry by its place in its chunk, modulo the cache's slots, a power of
//! two): any run of `2^s` entries made from a multiple of `2^s` on in a
//! block lands on `2^s` different slot indices, so a block of 256 counters fills a cache of
//! 256 slots, and 8 counters made in a row one of 8.
//!
//! Packed entries whose size is a power of two up to a line (a 16-byte entry, an
//! object with a 24-byte state's 32) start at a multiple of their size, so none straddles
//! two lines: one that did took two lines from the other core whenever another thread had
//! updated it or a neighbour (two threads each updating a random one of 256 or 1,024 such
//! 32-byte objects in place, 2-core Intel Xeon host, 2026-11-28, three runs alternated:
//! 46–51M updates/s with every other entry straddling, 51–56M with none). It costs at most
//! an entry's size less the header's 8 bytes per chunk.
//!
//! An entry may also ask for its *head* (its first [`Entry::HEAD`] bytes: an object's
//! lock word) to sit alone at the end of a cache line, the rest of it starting on the
//! next line, and for no other entry to share its lines. An object's word is loaded by
//! every update of the object, and its state is written by whoever applies a log; packed,
//! the word shares lines with its own state and with its neighbours', and each apply takes
//! those lines from the updating cores, one store at a time (measured, Intel Xeon 2-core
//! host, 2026-11-27: two threads each pushing to its own object holding a table of 64
//! counters, applying its own full logs, 18 ns per update packed and 12.8 apart, as on one
//! thread; both pushing to one such object, 25 ns against 15). It costs up to a line and a
//! half per entry, so only entries with more than a line of state ask (`object`).

use crate::primitive::Mutex;
use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ptr::NonNull;

/// Smallest chunk: 16 KiB.
const MIN_CHUNK_BYTES: usize = 16 * 1024;

/// Groups in a block of a chunk's entries ([`Slab::place`]): entries of one group were
/// handed out a multiple of 32 apart, so that objects made in a row and dealt out to 2, 4,
/// …, 32 threads in turn share no line with another thread's (module docs, "Placement").
const SPREAD: usize = 32;

/// A cache line, as the companions' rows count it.
const LINE: usize = 64;

/// The start of every chunk.
#[repr(C)]
struct Header {
    owner: *const (),
    /// What [`Slab::index_of`] adds to an entry's offset in the chunk over the stride: the
    /// chunk's number times [`Slab::PER_CHUNK`], less the offset of the first entry over
    /// the stride (wrapping), so that the slab's entries are numbered densely from 0.
    first: usize,
}

/// How a slab places its entries (module docs).
pub(crate) trait Entry {
    /// 0: entries packed one after the other. Otherwise the entry's first `HEAD` bytes sit
    /// at the end of a cache line that holds nothing else, its other bytes start the next
    /// line, and no other entry shares its lines. A `HEAD` above a line, or one that the
    /// entry's alignment does not allow there, packs the entries.
    const HEAD: usize;
    /// Whether the entry is written where its owner is used (an object updated in place):
    /// then no entry shares the chunk's first line, whose header every use of every entry
    /// of the chunk reads ([`Slab::owner_of`]; module docs, "Placement").
    const WRITTEN: bool;
}

/// A slab of `T`s at stable addresses, each of which can find the slab's owner and its
/// companion `C`.
pub(crate) struct Slab<T: Entry, C = ()> {
    inner: Mutex<Inner<T>>,
    _companion: std::marker::PhantomData<C>,
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
unsafe impl<T: Entry + Send, C: Send + Sync> Send for Slab<T, C> {}
// SAFETY: as above; companions are reached, shared, by their entries' owners.
unsafe impl<T: Entry + Send, C: Send + Sync> Sync for Slab<T, C> {}

impl<T: Entry, C> Slab<T, C> {
    /// The entry's head that sits alone on a line ([`Entry::HEAD`]), or 0: packed.
    const HEAD: usize = {
        let head = T::HEAD;
        let align = std::mem::align_of::<T>();
        if head > 0
            && head <= LINE
            && head < std::mem::size_of::<T>()
            && align <= LINE
            && (LINE - head).is_multiple_of(align)
        {
            head
        } else {
            0
        }
    };
    /// Bytes from one entry to the next: its size, packed; otherwise its head's line and
    /// the lines of the rest.
    const STRIDE: usize = if Self::HEAD == 0 {
        std::mem::size_of::<T>()
    } else {
        LINE + (std::mem::size_of::<T>() - Self::HEAD).next_multiple_of(LINE)
    };
    /// Bytes in a chunk: a power of two, so an entry's chunk is its address rounded down.
    const CHUNK_BYTES: usize = {
        // Room for one entry and its companion, with the companions' alignment.
        let need = Self::FIRST + Self::STRIDE + Self::SIDE_ALIGN + std::mem::size_of::<C>();
        let bytes = if need > MIN_CHUNK_BYTES { need.next_power_of_two() } else { MIN_CHUNK_BYTES };
        assert!(std::mem::align_of::<T>() <= bytes && Self::SIDE_ALIGN <= bytes);
        bytes
    };
    /// Offset of the first entry in a chunk: after the header, or, where the head sits
    /// alone, at the end of the chunk's second line (the first holds the header). Packed
    /// entries whose size is a power of two up to a line start at a multiple of it, so that
    /// none straddles two lines (module docs).
    const FIRST: usize = if Self::HEAD == 0 {
        let size = std::mem::size_of::<T>();
        let step = if size.is_power_of_two() && size <= LINE { size } else { std::mem::align_of::<T>() };
        let header = if T::WRITTEN { LINE } else { std::mem::size_of::<Header>() };
        header.next_multiple_of(step)
    } else {
        2 * LINE - Self::HEAD
    };
    /// Companions per cache line (at least one).
    const PER_ROW: usize = {
        let size = std::mem::size_of::<C>();
        if size == 0 || size >= LINE { 1 } else { LINE / size }
    };
    /// Entries a chunk hands out as one *group* ([`Slab::place`]): as many as share a line of
    /// entries or of companions, whichever is more, rounded up to a power of two (1 where
    /// neither shares a line).
    const PER_GROUP: usize = {
        let entries = if Self::STRIDE >= LINE { 1 } else { LINE.div_ceil(Self::STRIDE) };
        let companions = Self::PER_ROW;
        (if entries > companions { entries } else { companions }).next_power_of_two()
    };
    /// Alignment of the companions' area: a cache line, or more if `C` needs it (no more
    /// than `C` needs where companions take no room).
    const SIDE_ALIGN: usize = if std::mem::size_of::<C>() == 0 || std::mem::align_of::<C>() > LINE {
        std::mem::align_of::<C>()
    } else {
        LINE
    };
    /// Entries per chunk (aligning the companions' area may cost up to a line, and
    /// rounding it to whole groups up to a group's companions but one).
    const PER_CHUNK: usize =
        (Self::CHUNK_BYTES - Self::FIRST - Self::SIDE_ALIGN - (Self::PER_GROUP - 1) * std::mem::size_of::<C>())
            / (Self::STRIDE + std::mem::size_of::<C>());
    /// Companions the companions' area holds: [`Slab::PER_CHUNK`] rounded up to whole
    /// groups, so that the companions of a group, counted from the area's end, share a
    /// line ([`Slab::companion`]).
    const SIDE_SLOTS: usize = Self::PER_CHUNK.next_multiple_of(Self::PER_GROUP);
    /// Bytes of entries per byte of companion, where that divides both the stride and the
    /// first entry's offset (a counter: 2), so that [`Slab::companion`] divides the entry's
    /// offset alone.
    const SCALE: Option<usize> = {
        let size = std::mem::size_of::<C>();
        if size > 0 && Self::STRIDE.is_multiple_of(size) && Self::FIRST.is_multiple_of(Self::STRIDE / size) {
            Some(Self::STRIDE / size)
        } else {
            None
        }
    };
    /// Offset of the companions' area in a chunk: after the entries.
    const SIDE: usize = (Self::FIRST + Self::PER_CHUNK * Self::STRIDE).next_multiple_of(Self::SIDE_ALIGN);
    const _FITS: () = assert!(Self::SIDE + Self::SIDE_SLOTS * std::mem::size_of::<C>() <= Self::CHUNK_BYTES);

    pub(crate) fn new() -> Self {
        assert!(std::mem::size_of::<T>() > 0, "slab entries must have a size");
        let () = Self::_FITS;
        Self {
            inner: Mutex::new(Inner { chunks: Vec::new(), used: 0, free: Vec::new(), live: 0 }, "Slab.inner"),
            _companion: std::marker::PhantomData,
        }
    }

    fn layout() -> Layout {
        Layout::from_size_align(Self::CHUNK_BYTES, Self::CHUNK_BYTES).expect("a power-of-two chunk is a valid layout")
    }

    /// The companion of `entry`, in the companions' area after the chunk's entries: entry
    /// `i` of the chunk has the `i`-th companion from the area's end ([`Slab::place`] keeps
    /// entries made one after the other apart; module docs).
    ///
    /// # Safety
    /// `entry` points into a live chunk of this kind of slab (it came from `alloc`).
    #[inline(always)]
    pub(crate) unsafe fn companion(entry: *const T) -> *const C {
        let offset = entry.addr() & (Self::CHUNK_BYTES - 1);
        let side = match Self::SCALE {
            // As below, with the subtraction folded into the constant (exact: FIRST and
            // offset are multiples of the scale): two instructions on the path to the add.
            Some(scale) => {
                Self::SIDE + (Self::SIDE_SLOTS - 1) * std::mem::size_of::<C>() + Self::FIRST / scale - offset / scale
            }
            None => {
                Self::SIDE + (Self::SIDE_SLOTS - 1 - (offset - Self::FIRST) / Self::STRIDE) * std::mem::size_of::<C>()
            }
        };
        // SAFETY: the entry lies in a chunk (aligned to CHUNK_BYTES) at FIRST + index *
        // STRIDE with index < PER_CHUNK <= SIDE_SLOTS, so its companion (SIDE_SLOTS - 1 -
        // index from the area's start) lies inside the area, inside the
        // same allocation (`_FITS`), aligned for C (SIDE is a multiple of its alignment, as
        // is its size); the pointer keeps the entry's provenance (the whole chunk).
        unsafe { entry.cast::<u8>().sub(offset).add(side).cast::<C>() }
    }

    /// The index in its chunk of the `k`-th entry a chunk hands out (module docs,
    /// "Placement"). The chunk's entries go in blocks of [`SPREAD`] groups of
    /// [`Slab::PER_GROUP`] entries (the chunk's tail in blocks half as large, and so on;
    /// the last few, fewer than two groups, in order). Within a block, the `r`-th entry
    /// handed out goes to group `r mod SPREAD`, at the position in the group that the
    /// exclusive-or of `r`'s bits taken `log2(PER_GROUP)` at a time gives. So entries
    /// handed out one after the other are in different groups (on different lines), the
    /// entries of a group were handed out `SPREAD` apart, and any run of `2^s` entries
    /// handed out from a multiple of `2^s` on falls on `2^s` different indices modulo
    /// `2^s`: each window of `log2(PER_GROUP)` bits that the group number does not show is
    /// folded into the position, once.
    fn place(k: usize) -> usize {
        let group = Self::PER_GROUP;
        if group == 1 {
            return k;
        }
        let mut base = 0;
        let mut size = SPREAD * group;
        while size >= 2 * group {
            if base + size > Self::PER_CHUNK {
                size /= 2;
            } else if k >= base + size {
                base += size;
            } else {
                let r = k - base;
                let shift = group.trailing_zeros();
                let (mut position, mut bits) = (0, r);
                while bits != 0 {
                    position ^= bits;
                    bits >>= shift;
                }
                return base + r % (size / group) * group + (position & (group - 1));
            }
        }
        k
    }

    /// The header of the chunk holding `entry`.
    ///
    /// # Safety
    /// `entry` points into a live chunk of a slab of `T`s (it came from `alloc`), which
    /// outlives `'a`.
    #[inline(always)]
    unsafe fn header<'a>(entry: *const T) -> &'a Header {
        let header = entry.map_addr(|a| a & !(Self::CHUNK_BYTES - 1)).cast::<Header>();
        // SAFETY: chunks are aligned to CHUNK_BYTES and start with a header, written before
        // any entry was handed out and never after, so rounding an entry's address down to
        // a multiple of CHUNK_BYTES gives its chunk's header; the pointer keeps the entry's
        // provenance (the whole chunk allocation). The caller uses the reference only while
        // the entry, and so its chunk, lives (`'a`).
        unsafe { &*header }
    }

    /// The `owner` given to [`Slab::alloc`] for the chunk holding `entry`.
    ///
    /// # Safety
    /// `entry` points into a live chunk of a slab of `T`s (it came from `alloc`).
    #[inline(always)]
    pub(crate) unsafe fn owner_of(entry: *const T) -> *const () {
        // SAFETY: the caller's guarantee.
        unsafe { Self::header(entry) }.owner
    }

    /// The number of `entry` in the slab: chunk `k`'s entries are numbered from
    /// `k × PER_CHUNK`, each by its position in the chunk (not by the order it was handed
    /// out in), so that `n` entries made in a row take numbers within `n` plus a chunk's
    /// worth of each other whatever addresses their chunks got. A log cache indexed by it
    /// modulo its size (`object`'s slot index) gives the entries of the chunks filled so
    /// far different slots wherever they number no more than its slots (the last chunk's
    /// first entries are spread over its range, "Placement", and may wrap onto the first
    /// chunk's), where indexing by address over size mapped every chunk onto the same
    /// slots (chunks are aligned to their size, a multiple of the cache's span for small
    /// entries).
    ///
    /// # Safety
    /// `entry` points into a live chunk of a slab of `T`s (it came from `alloc`).
    #[inline(always)]
    pub(crate) unsafe fn index_of(entry: *const T) -> usize {
        // SAFETY: the caller's guarantee.
        let first = unsafe { Self::header(entry) }.first;
        first.wrapping_add((entry.addr() & (Self::CHUNK_BYTES - 1)) / Self::STRIDE)
    }

    /// Gives an entry back for reuse.
    ///
    /// # Safety
    /// `entry` came from [`Slab::alloc`] on this slab, its value has been dropped or moved
    /// out, and nothing uses it afterwards.
    pub(crate) unsafe fn free(&self, entry: NonNull<T>) {
        // SAFETY: the entry came from `alloc`, which wrote its companion; nothing uses it now.
        unsafe { Self::companion(entry.as_ptr()).cast_mut().drop_in_place() };
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

impl<T: Entry, C> Slab<T, C> {
    /// Moves `value` into a free entry and `companion` into its companion, and returns the
    /// entry's address, stable until [`Slab::free`]. `owner` is what [`Slab::owner_of`]
    /// returns for the entries; it must be the same on every call.
    pub(crate) fn alloc(&self, value: T, companion: C, owner: *const ()) -> NonNull<T> {
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
                        // Entry `i` of the chunk lies at FIRST + i × STRIDE: its offset over the
                        // stride is i + FIRST / STRIDE (rounded down), whatever `i`.
                        let first = (s.chunks.len() * Self::PER_CHUNK).wrapping_sub(Self::FIRST / Self::STRIDE);
                        // SAFETY: the chunk is freshly allocated, aligned for `Header`.
                        unsafe { chunk.as_ptr().write(Header { owner, first }) };
                        s.chunks.push(chunk);
                        s.used = 0;
                    }
                    let chunk = *s.chunks.last().expect("a chunk was just ensured");
                    // SAFETY: FIRST + place(used) * STRIDE + size <= SIDE <= CHUNK_BYTES
                    // (place(used) < PER_CHUNK), so the entry lies inside the chunk; FIRST and STRIDE are
                    // multiples of T's alignment (packed: STRIDE is T's size; apart: FIRST
                    // is a line plus LINE - HEAD, which the alignment divides, STRIDE whole
                    // lines, and the alignment is at most a line), and the chunk is aligned
                    // to CHUNK_BYTES ≥ that alignment.
                    let p = unsafe { chunk.cast::<u8>().add(Self::FIRST + Self::place(s.used) * Self::STRIDE) };
                    s.used += 1;
                    p.cast::<T>()
                }
            }
        };
        // SAFETY: `entry` is inside a live chunk, aligned, and unused (fresh or given back by
        // `free`), so writing a value into it, and `companion` into its companion,
        // overwrites nothing live (a given-back entry's companion was dropped by `free`).
        unsafe {
            entry.as_ptr().write(value);
            Self::companion(entry.as_ptr()).cast_mut().write(companion);
        }
        entry
    }
}

impl<T: Entry, C> Drop for Slab<T, C> {
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

    impl<const N: usize> Entry for [u64; N] {
        const HEAD: usize = 0;
        const WRITTEN: bool = false;
    }

    impl<const N: usize> Entry for [u8; N] {
        const HEAD: usize = 0;
        const WRITTEN: bool = false;
    }

    /// An entry whose first 8 bytes (a word) sit alone on a line.
    #[repr(C)]
    struct Apart {
        word: u64,
        state: [u64; 13],
    }

    impl Entry for Apart {
        const HEAD: usize = std::mem::offset_of!(Apart, state);
        const WRITTEN: bool = true;
    }

    /// Entries that ask for it have their head alone at the end of a line and the rest from
    /// the next line on, and no two entries share a line; companions still work.
    #[test]
    fn a_head_apart_sits_alone_on_its_line() {
        type S = Slab<Apart, Counted>;
        let slab = S::new();
        assert_eq!(S::STRIDE, 3 * LINE, "the head's line and two lines of state");
        let n = S::PER_CHUNK + 3;
        let ptrs: Vec<_> = (0..n as u64)
            .map(|i| slab.alloc(Apart { word: i, state: [i; 13] }, Counted::default(), std::ptr::null()))
            .collect();
        let mut spans: Vec<(usize, usize)> = ptrs
            .iter()
            .map(|p| {
                let a = p.as_ptr().addr();
                assert_eq!((a + 8) % LINE, 0, "the state starts a line");
                (a + 8 - LINE, a + std::mem::size_of::<Apart>())
            })
            .collect();
        spans.sort_unstable();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "entries share no line: {w:?}");
        }
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY: the entry came from `alloc` and is live.
            let e = unsafe { p.as_ref() };
            assert_eq!((e.word, e.state[12]), (i as u64, i as u64));
            // SAFETY: as above.
            assert_eq!(unsafe { (*S::companion(p.as_ptr())).0 }, 0);
        }
        for p in ptrs {
            // SAFETY: each entry is freed once and not used again.
            unsafe { slab.free(p) };
        }
    }

    /// Each chunk's entries take the numbers after the previous chunk's, one per entry, in
    /// packed and apart layouts alike.
    #[test]
    fn entries_are_numbered_densely_chunk_after_chunk() {
        fn numbers<T: Entry>(make: impl Fn(usize) -> T) {
            let slab = Slab::<T>::new();
            let n = 3 * Slab::<T>::PER_CHUNK;
            let ptrs: Vec<_> = (0..n).map(|i| slab.alloc(make(i), (), std::ptr::null())).collect();
            // SAFETY: every entry came from `alloc` and is live.
            let mut numbers: Vec<usize> = ptrs.iter().map(|p| unsafe { Slab::<T>::index_of(p.as_ptr()) }).collect();
            for (chunk, numbers) in numbers.chunks(Slab::<T>::PER_CHUNK).enumerate() {
                let first = chunk * Slab::<T>::PER_CHUNK;
                assert!(numbers.iter().all(|&x| (first..first + Slab::<T>::PER_CHUNK).contains(&x)), "chunk {chunk}");
            }
            numbers.sort_unstable();
            assert_eq!(numbers, (0..n).collect::<Vec<_>>());
            for p in ptrs {
                // SAFETY: each entry is freed once and not used again.
                unsafe { slab.free(p) };
            }
        }
        numbers(|i| [i as u64; 1]);
        numbers(|i| [i as u64; 3]);
        numbers(|i| Apart { word: i as u64, state: [0; 13] });
    }

    #[test]
    fn entries_are_stable_reused_and_find_their_owner() {
        let owner = std::ptr::without_provenance::<()>(0xdead_beef);
        let slab = Slab::<[u64; 2]>::new();
        let n = 3 * Slab::<[u64; 2]>::PER_CHUNK + 5;
        let ptrs: Vec<_> = (0..n as u64).map(|i| slab.alloc([i, i], (), owner)).collect();
        assert_eq!(slab.live(), n);
        assert_eq!(slab.footprint() / (16 * 1024), 4, "four 16 KiB chunks, small bookkeeping");
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY: all entries are live and hold the values written.
            assert_eq!(unsafe { p.as_ref() }[0], i as u64);
            // SAFETY: the entry came from `alloc`.
            assert_eq!(unsafe { Slab::<[u64; 2]>::owner_of(p.as_ptr()) }, owner);
        }
        // SAFETY: each entry is freed once and not used again.
        unsafe { slab.free(ptrs[7]) };
        let again = slab.alloc([9, 9], (), owner);
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
    fn packed_entries_of_a_power_of_two_size_never_straddle_a_line() {
        fn check<T: Entry + Default>() {
            let owner = std::ptr::without_provenance::<()>(0xdead_beef);
            let slab = Slab::<T>::new();
            let ptrs: Vec<_> = (0..Slab::<T>::PER_CHUNK + 3).map(|_| slab.alloc(T::default(), (), owner)).collect();
            for p in &ptrs {
                let (start, end) = (p.as_ptr().addr(), p.as_ptr().addr() + std::mem::size_of::<T>() - 1);
                assert_eq!(
                    start / LINE,
                    end / LINE,
                    "a {}-byte entry at {start:#x} straddles",
                    std::mem::size_of::<T>()
                );
            }
            for p in ptrs {
                // SAFETY: each entry came from `alloc`, is freed once and not used again.
                unsafe { slab.free(p) };
            }
        }
        check::<[u64; 2]>();
        check::<[u64; 4]>();
        check::<[u64; 8]>();
    }

    /// The indices a chunk of `Slab<T, C>` hands out, in order, checked to be a permutation.
    fn handed_out<T: Entry, C>() -> Vec<usize> {
        let order: Vec<usize> = (0..Slab::<T, C>::PER_CHUNK).map(Slab::<T, C>::place).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..order.len()).collect::<Vec<_>>(), "each entry handed out once");
        order
    }

    /// A chunk hands out every entry once, in blocks of 32 groups (16-byte entries with
    /// 8-byte companions: groups of 8, a companion line, blocks of 256): the next entry in
    /// another group, the entries of a group handed out 32 apart, and any aligned run of
    /// `2^s` entries of a block on `2^s` different indices modulo `2^s` (caches of any size
    /// up to the block's).
    #[test]
    fn a_chunk_hands_out_each_entry_once_in_groups_32_apart() {
        type S = Slab<[u64; 2], u64>;
        assert_eq!((S::PER_GROUP, S::PER_CHUNK, S::SIDE_SLOTS), (8, 677, 680));
        let order = handed_out::<[u64; 2], u64>();
        // Two full blocks, then the tail: 128 + 32 + 16 in halving blocks, 5 in order.
        for w in order[..672].windows(2) {
            assert_ne!(
                w[0] / 8,
                w[1] / 8,
                "entries {} and {} handed out one after the other share a group",
                w[0],
                w[1]
            );
        }
        assert_eq!(&order[672..], &[672, 673, 674, 675, 676]);
        for block in order[..512].chunks(256) {
            let mut first_of_group = std::collections::HashMap::new();
            for (k, &i) in block.iter().enumerate() {
                let first = *first_of_group.entry(i / 8).or_insert(k);
                assert_eq!(k % 32, first % 32, "entries handed out {first}th and {k}th share a group");
            }
            for s in 0..=8 {
                let m = 1 << s;
                for run in block.chunks(m) {
                    let mut residues: Vec<usize> = run.iter().map(|i| i % m).collect();
                    residues.sort_unstable();
                    residues.dedup();
                    assert_eq!(residues.len(), m, "{run:?} falls on {m} different indices modulo {m}");
                }
            }
        }
        assert_eq!(&order[..10], &[0, 9, 18, 27, 36, 45, 54, 63, 65, 72]);
        // 32-byte entries without companions: groups of two, a line.
        assert_eq!(Slab::<[u64; 4]>::PER_GROUP, 2);
        assert_eq!(&handed_out::<[u64; 4], ()>()[..8], &[0, 3, 5, 6, 9, 10, 12, 15]);
        // 24-byte entries: groups of 4 (as many as share a line, 3, rounded up).
        assert_eq!(Slab::<[u64; 3]>::PER_GROUP, 4);
        // Entries of a line or more, and their companions, share no line: in order.
        assert_eq!(Slab::<[u64; 8], [u64; 8]>::PER_GROUP, 1);
        assert_eq!(handed_out::<[u64; 8], [u64; 8]>(), (0..Slab::<[u64; 8], [u64; 8]>::PER_CHUNK).collect::<Vec<_>>());
    }

    /// An entry that its users write, as an object updated in place.
    #[derive(Default)]
    struct Written {
        _state: [u64; 4],
    }

    impl Entry for Written {
        const HEAD: usize = 0;
        const WRITTEN: bool = true;
    }

    /// Written entries keep off the header's line, and objects made in a row and dealt out
    /// to 2, 4, …, 32 threads in turn share no line with another thread's (the first 256
    /// of a chunk, blocks of 64 for 32-byte entries).
    #[test]
    fn written_entries_keep_off_the_header_and_apart_from_other_threads() {
        type S = Slab<Written>;
        assert_eq!(S::FIRST, LINE);
        let slab = S::new();
        let ptrs: Vec<_> = (0..S::PER_CHUNK).map(|_| slab.alloc(Written::default(), (), std::ptr::null())).collect();
        let addrs: Vec<usize> = ptrs.iter().map(|p| p.as_ptr().addr()).collect();
        let chunk = addrs[0] & !(S::CHUNK_BYTES - 1);
        for &a in &addrs {
            assert!(a - chunk >= LINE, "an entry at {:#x} shares the header's line", a - chunk);
        }
        // The first object made on each line: the others there were made 32 apart from it.
        let mut first_on_line = std::collections::HashMap::new();
        for (k, &a) in addrs[..256].iter().enumerate() {
            let first = *first_on_line.entry(a / LINE).or_insert(k);
            for threads in [2, 4, 8, 16, 32] {
                assert_eq!(k % threads, first % threads, "objects {first} and {k} share a line");
            }
        }
        for p in ptrs {
            // SAFETY: each entry came from `alloc`, is freed once and not used again.
            unsafe { slab.free(p) };
        }
    }

    #[test]
    fn large_entries_get_larger_chunks() {
        let slab = Slab::<[u8; 40_000]>::new();
        assert_eq!(Slab::<[u8; 40_000]>::CHUNK_BYTES, 64 * 1024);
        let p = slab.alloc([1; 40_000], (), std::ptr::null());
        // SAFETY: the entry came from `alloc`.
        assert!(unsafe { Slab::<[u8; 40_000]>::owner_of(p.as_ptr()) }.is_null());
        // SAFETY: freed once.
        unsafe { slab.free(p) };
    }

    /// A companion that counts how many are alive, to check that `alloc` makes and `free`
    /// drops one per entry.
    #[derive(Debug)]
    struct Counted(u64);

    static ALIVE: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

    impl Default for Counted {
        fn default() -> Self {
            ALIVE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Counted(0)
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            ALIVE.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Every entry has its own companion, fresh from `alloc`, outside the entry, inside the
    /// chunk, found again from the entry's address; `free` drops it, and a reused entry gets
    /// a fresh one.
    #[test]
    fn each_entry_has_its_own_companion() {
        type S = Slab<[u64; 2], Counted>;
        let slab = S::new();
        let n = 2 * S::PER_CHUNK + 3;
        let ptrs: Vec<_> = (0..n as u64).map(|i| slab.alloc([i, i], Counted::default(), std::ptr::null())).collect();
        assert_eq!(ALIVE.load(std::sync::atomic::Ordering::Relaxed), n as isize);
        let mut previous: Option<(usize, usize)> = None;
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY: the entry came from `alloc`; its companion is alive and only this
            // test touches it.
            let c = unsafe { &mut *S::companion(p.as_ptr()).cast_mut() };
            assert_eq!(c.0, 0, "a fresh companion");
            c.0 = i as u64 + 1;
            let (entry, side) = (p.as_ptr().addr(), std::ptr::from_ref(c).addr());
            assert!(side >= entry + 16 || side + 8 <= entry, "outside the entry");
            assert_eq!(entry & !(S::CHUNK_BYTES - 1), side & !(S::CHUNK_BYTES - 1), "in the entry's chunk");
            assert_eq!(side % std::mem::align_of::<Counted>(), 0, "aligned");
            let chunk = entry & !(S::CHUNK_BYTES - 1);
            // A chunk's last few entries, fewer than two groups, go in order (`place`).
            let in_tail = i % S::PER_CHUNK >= S::PER_CHUNK - S::PER_CHUNK % (2 * S::PER_GROUP);
            if let Some((last_entry, last_side)) = previous.filter(|&(e, _)| e & !(S::CHUNK_BYTES - 1) == chunk) {
                if !in_tail {
                    assert_ne!(
                        side / LINE,
                        last_side / LINE,
                        "entries made one after the other: companions on other lines"
                    );
                }
                assert_ne!(side.wrapping_sub(entry), last_side.wrapping_sub(last_entry), "no fixed distance");
            }
            previous = Some((entry, side));
        }
        for (i, p) in ptrs.iter().enumerate() {
            // SAFETY: as above.
            assert_eq!(unsafe { &*S::companion(p.as_ptr()) }.0, i as u64 + 1, "each its own");
        }
        // SAFETY: freed once, not used again.
        unsafe { slab.free(ptrs[4]) };
        assert_eq!(ALIVE.load(std::sync::atomic::Ordering::Relaxed), n as isize - 1);
        let again = slab.alloc([0, 0], Counted::default(), std::ptr::null());
        assert_eq!(again, ptrs[4]);
        // SAFETY: the entry came from `alloc`.
        assert_eq!(unsafe { &*S::companion(again.as_ptr()) }.0, 0, "a reused entry gets a fresh companion");
        for (i, p) in ptrs.into_iter().enumerate() {
            if i != 4 {
                // SAFETY: as above.
                unsafe { slab.free(p) };
            }
        }
        // SAFETY: as above.
        unsafe { slab.free(again) };
        assert_eq!(ALIVE.load(std::sync::atomic::Ordering::Relaxed), 0);
    }
}
