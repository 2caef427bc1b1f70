//! The tracer sees heap data behind a cell: a conflict planted in the entries of two cores'
//! queue logs, whose buffers this test's allocator packs into one cache line, is reported
//! with the entries' label; the same updates with the buffers on lines of their own share
//! nothing. The tracer records the slot's cell (`Slot.data`: the log's `Vec` header) on
//! each core's own line either way, so without the entries' own records the planted
//! conflict would hide behind it.
//!
//! Its own test binary: the planting allocator is this binary's global allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::{Cell, UnsafeCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use commuter::lines::Lines;
use commuter::tracer::{CPU_A, CPU_B, CPUS, Cores, LINE, conflicts};
use oplog::log::{Unordered, Update};
use oplog::{Config, Domain, OpLog, Representation};
use oplog_percore::primitive::trace::AccessKind;

/// An update of 16 bytes (an unordered log stores the operation alone), so a core's first
/// log buffer (four entries, `Vec`'s smallest) is one line's worth.
#[derive(Debug)]
struct Add(u32, [u32; 3]);

impl Update for Add {
    type Target = u64;
    const APPLY_ALONE: bool = true;
    fn exec(self, target: &mut u64) {
        *target += u64::from(self.0) + u64::from(self.1[0]);
    }
}

/// Bytes of a core's first log buffer: the allocation the planting allocator serves.
const LOG_BUFFER: usize = 4 * std::mem::size_of::<Add>();

/// Where the arena's first packed buffer starts: half a line in, so consecutive buffers
/// straddle lines and the end of one shares a line with the start of the next.
const FIRST: usize = LINE / 2;

/// Where the arena's first padded buffer starts (line-aligned; the packed ones come before).
const FIRST_PADDED: usize = ARENA_BYTES / 2;

/// Bytes of the arena.
const ARENA_BYTES: usize = 4096;

/// Line-aligned memory the planting allocator packs log buffers into.
#[repr(C, align(64))]
struct Arena(UnsafeCell<[u8; ARENA_BYTES]>);

// SAFETY: the arena's bytes are handed out as disjoint allocations (`NEXT` only grows), each
// used by one owner at a time, as any allocator's memory is.
unsafe impl Sync for Arena {}

static ARENA: Arena = Arena(UnsafeCell::new([0; ARENA_BYTES]));
static NEXT: AtomicUsize = AtomicUsize::new(FIRST);
static NEXT_PADDED: AtomicUsize = AtomicUsize::new(FIRST_PADDED);

/// Where this test's allocator puts a log buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Where the checker's allocator does ([`Lines`]: whole lines of its own).
    Default,
    /// In the arena, back to back from half a line in.
    Packed,
    /// In the arena, each on lines of its own.
    Padded,
}

std::thread_local! {
    /// Where allocations of [`LOG_BUFFER`] bytes on this thread go.
    static PLANTING: Cell<Place> = const { Cell::new(Place::Default) };
}

/// The checker's allocator ([`Lines`]), except that while [`PLANTING`] says so on the
/// allocating thread, log buffers come from [`ARENA`] (never reused: freeing one is a no-op).
struct Planting;

impl Planting {
    fn arena() -> std::ops::Range<usize> {
        let start = ARENA.0.get() as usize;
        start..start + ARENA_BYTES
    }
}

// SAFETY: arena allocations are in bounds, aligned (the arena is line-aligned, and every
// offset is `FIRST` plus a multiple of `LOG_BUFFER`, or `FIRST_PADDED` plus a multiple of two
// lines, all multiples of the 16 bytes at most that a served layout asks for) and disjoint
// (packed ones end below `FIRST_PADDED`); everything else is `Lines`'s.
unsafe impl GlobalAlloc for Planting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let place = PLANTING.try_with(Cell::get).unwrap_or(Place::Default);
        if layout.size() == LOG_BUFFER && layout.align() <= 16 && place != Place::Default {
            let (next, step, end) = match place {
                Place::Packed => (&NEXT, LOG_BUFFER, FIRST_PADDED),
                _ => (&NEXT_PADDED, 2 * LINE, ARENA_BYTES),
            };
            let at = next.fetch_add(step, Ordering::Relaxed);
            if at + LOG_BUFFER <= end {
                // SAFETY: `at + LOG_BUFFER` is within the arena (checked above).
                return unsafe { ARENA.0.get().cast::<u8>().add(at) };
            }
        }
        // SAFETY: the caller's layout has a non-zero size, as `GlobalAlloc::alloc` requires.
        unsafe { Lines.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !Planting::arena().contains(&(ptr as usize)) {
            // SAFETY: `ptr` is not in the arena, so `Lines` returned it for `layout`.
            unsafe { Lines.dealloc(ptr, layout) }
        }
    }
}

#[global_allocator]
static ALLOCATOR: Planting = Planting;

/// Runs `f` on `cpu` with log buffers placed at `place`.
fn on<R: Send + 'static>(cores: &Cores, cpu: usize, place: Place, f: impl FnOnce() -> R + Send + 'static) -> R {
    cores.run(cpu, move || {
        PLANTING.with(|p| p.set(place));
        let r = f();
        PLANTING.with(|p| p.set(Place::Default));
        r
    })
}

/// Each core's first update installs the object and allocates its log buffer at `place`;
/// then A logs three more updates on CPU A and B one more on CPU B, traced. Returns the
/// conflicts and every address the updates wrote entries at.
fn steady_updates(place: Place) -> (Vec<commuter::tracer::Conflict>, Vec<usize>) {
    let cores = Cores::new(CPUS);
    let d = Domain::<Unordered<Add>>::new(Config::per_cpu().cpus(CPUS).representation(Representation::Logged)).unwrap();
    let object = Arc::new(OpLog::with_domain(&d, 0));
    for cpu in [CPU_A, CPU_B] {
        let o = Arc::clone(&object);
        on(&cores, cpu, place, move || o.update(Add(1, [0; 3])));
    }
    let (oa, ob) = (Arc::clone(&object), Arc::clone(&object));
    let ((), ta) = cores.trace(CPU_A, move || (0..3).for_each(|i| oa.update(Add(i, [0; 3]))));
    let ((), tb) = cores.trace(CPU_B, move || ob.update(Add(10, [0; 3])));
    let entries = ta.iter().chain(&tb).filter(|a| a.label == "Log.entries").map(|a| a.addr).collect();
    assert_eq!(object.read(|v| *v), 2 + 3 + 10, "every update applied");
    (conflicts(&ta, &tb), entries)
}

#[test]
fn a_conflict_planted_in_the_heap_entries_of_two_cores_logs_is_reported() {
    let (found, entries) = steady_updates(Place::Packed);
    let arena = Planting::arena();
    // A's buffer is the arena's first, from half a line in: its last two entries share a
    // line with B's buffer, which follows it, and B's second entry is on that line.
    assert_eq!(found.len(), 1, "the planted conflict is reported, and nothing else: {found:?}");
    assert_eq!(entries.len(), 4, "each update wrote one entry");
    assert!(entries.iter().all(|a| arena.contains(a)), "both logs' buffers are planted: {entries:#x?}");
    let c = &found[0];
    assert_eq!(c.labels(), ["Log.entries"], "{c:?}");
    assert!(c.first.iter().chain(&c.second).all(|t| t.kind == AccessKind::CellWrite));
    assert_eq!(c.line, (arena.start + FIRST + LOG_BUFFER) / LINE);
}

#[test]
fn the_same_updates_with_each_buffer_on_lines_of_its_own_are_conflict_free() {
    let (found, entries) = steady_updates(Place::Padded);
    assert_eq!(entries.len(), 4, "each update wrote one entry");
    assert!(entries.iter().all(|a| Planting::arena().contains(a)), "both logs' buffers are placed: {entries:#x?}");
    assert!(found.is_empty(), "{found:?}");
}
