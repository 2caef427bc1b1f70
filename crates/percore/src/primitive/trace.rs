//! Recording primitives for the commutativity checker's tracer (`trace` feature; 002 §6.3).
//!
//! With the `trace` feature, every primitive of [`primitive`](super) records each access it
//! makes: atomic loads, stores and read-modify-writes, mutex acquires and releases, and
//! cell reads and writes ([`AccessKind`]), each with the calling thread, the address and
//! size accessed, and the label its constructor was given (`"Slot.lock"`).
//!
//! Recording is per thread and only while a [`Session`] is active on that thread: each
//! access then appends an [`Access`] to a thread-local buffer, which [`Session::finish`]
//! returns. Without a session an access costs one thread-local flag check, so a traced
//! build still runs ordinary code (and the crate's own tests) correctly.
//!
//! # What is and is not seen
//!
//! 002's MTRACE runs the whole kernel in an instrumented emulator and sees every memory
//! access. This tracer sees the accesses the library makes through its primitives, the
//! heap data it reports where it reaches it, and nothing else:
//!
//! * a cell access is recorded as the whole value (`size_of::<T>()` bytes at the cell);
//!   memory reached *through* the value is recorded where the library reports it
//!   ([`record_slice`]):
//!   - the entries of queue logs (`Log.entries`: a push writes its entry, local absorption
//!     reads and rewrites entries, a gather reads them) and of the batches a synchronize
//!     builds from them (`Batch.entries`), in their `Vec`/`VecDeque` heap buffers;
//!   - the slot tables, the heap arrays that lead from a core index to its slots
//!     (`PerCore.cpus`, `PerCore.threads`, and the restartable sequence's
//!     `PerCore.rseq_table`), as loads;
//!   - an object's own part (its word and the cell of its state) lives in its domain's
//!     slab, a heap allocation, and is recorded where it is;
//! * the internal instance's own heap (a `BTreeSet`'s nodes behind `OpLog.state`) is not
//!   recorded: `std`'s trees and hash maps do not expose where their nodes are. Every access
//!   to it is made with the object lock held (which writes `OpLog.word`) or by a concurrent
//!   read that validated `OpLog.word` (a load), so a conflict on it between two operations
//!   of one object also shows on the word; what stays hidden is a line that the allocator
//!   shares between such a node and other data (the commutativity checker gives every
//!   allocation whole lines, so it has none);
//! * heap data behind a mutex (the backlog's map behind `Backlogs.map`) is not recorded;
//!   every access to it takes the mutex, whose acquire and release write the lock word,
//!   which is recorded;
//! * plain fields that never change after construction (an object's id, its domain
//!   pointer) are not recorded: reading them is conflict-free unless something else on
//!   their cache line is written, which the tracer reports as that other field's access;
//! * process-wide id counters and thread-local state are not recorded (except the stand-in
//!   rseq area below);
//! * memory touched by other crates (the clock, the allocator's own metadata) is not
//!   recorded, except where a caller reports it with [`record`].
//!
//! Traced primitives carry their label, so traced structures are larger than in ordinary
//! builds and fields may fall on different cache lines. Per-core log slots are padded to
//! their own lines in both builds, which is what the tracer's verdicts rest on.
//!
//! # The restartable sequence
//!
//! The default per-CPU entry is a restartable sequence (`percore::rseq`): inline assembly,
//! which the tracer cannot see into. Under tracing it is not compiled out but replaced by a
//! stand-in that makes the same memory accesses, recorded in the sequence's order: the
//! store of the sequence's descriptor and the load of the CPU number in the thread's rseq
//! area (`rseq.rseq_cs`, `rseq.cpu_id`; a per-thread stand-in area, as the real one is per
//! thread), the load of the CPU's slot address from the slot table (`PerCore.rseq_table`),
//! the loads of the slot's owner flags (`Slot.busy`, `Slot.req`) and the commit store to
//! `Slot.busy`. The kernel's restart is stood in for by an unrecorded compare-and-swap, so
//! the stand-in is a correct lock. It needs only the remote side's `membarrier`, not glibc's
//! rseq registration, so a traced build takes the default path wherever `membarrier`
//! exists ([`per_cpu_fast_path`](crate::per_cpu_fast_path)), and the spin lock
//! (the texts' per-core lock, 000 §4.1) elsewhere, as the default configuration does. A
//! slot left in spin mode by a synchronize is entered through its spin lock in both
//! builds.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What an access did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessKind {
    /// An atomic load.
    Load,
    /// An atomic store.
    Store,
    /// An atomic read-modify-write (swap, compare-and-exchange, fetch-and-op).
    Rmw,
    /// A mutex acquire.
    LockAcquire,
    /// A mutex release.
    LockRelease,
    /// A read access to a cell (or a read through a mutex guard).
    CellRead,
    /// A write access to a cell (or a write through a mutex guard).
    CellWrite,
}

impl AccessKind {
    /// Whether the access may write its bytes (everything but loads and cell reads).
    /// A mutex acquire or release writes the lock word; a failed compare-and-exchange
    /// still takes the line exclusively.
    pub fn writes(self) -> bool {
        !matches!(self, AccessKind::Load | AccessKind::CellRead)
    }

    /// A short name: `load`, `store`, `rmw`, `acquire`, `release`, `read`, `write`.
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Rmw => "rmw",
            AccessKind::LockAcquire => "acquire",
            AccessKind::LockRelease => "release",
            AccessKind::CellRead => "read",
            AccessKind::CellWrite => "write",
        }
    }
}

/// One recorded access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// The recording thread's trace id ([`thread_id`]).
    pub thread: usize,
    /// First byte accessed.
    pub addr: usize,
    /// Number of bytes accessed.
    pub size: usize,
    /// What the access did.
    pub kind: AccessKind,
    /// The label of the primitive (the field it is).
    pub label: &'static str,
}

/// Source of per-thread trace ids. Process-wide and not itself traced.
static NEXT_THREAD: AtomicUsize = AtomicUsize::new(1);

std::thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static BUFFER: RefCell<Vec<Access>> = const { RefCell::new(Vec::new()) };
    static THREAD: Cell<usize> = const { Cell::new(0) };
    static CPU: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The calling thread's trace id: a small number, fixed for the thread's life, unique in
/// the process.
pub fn thread_id() -> usize {
    THREAD.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_THREAD.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

/// Records an access by the calling thread if a [`Session`] is active on it.
///
/// The library's primitives call this; code outside it that touches shared memory the
/// checker should see (a clock, a baseline built on `std` atomics) may call it too.
#[inline]
pub fn record(addr: *const u8, size: usize, kind: AccessKind, label: &'static str) {
    if ACTIVE.try_with(Cell::get).unwrap_or(false) {
        record_slow(addr as usize, size, kind, label);
    }
}

/// Records an access of `kind` to the elements of `elements` (nothing if they take no
/// bytes): heap data behind a cell, such as the entries of a queue log, which the cell's own
/// record (its `size_of` bytes) does not cover.
#[inline]
pub fn record_slice<T>(elements: &[T], kind: AccessKind, label: &'static str) {
    let size = std::mem::size_of_val(elements);
    if size > 0 {
        record(elements.as_ptr().cast(), size, kind, label);
    }
}

#[cold]
fn record_slow(addr: usize, size: usize, kind: AccessKind, label: &'static str) {
    let thread = thread_id();
    let _ = BUFFER.try_with(|b| b.borrow_mut().push(Access { thread, addr, size, kind, label }));
}

/// Recording on the calling thread, from [`Session::start`] until [`Session::finish`] (or
/// drop). Sessions do not nest; each thread has its own.
#[derive(Debug)]
pub struct Session {
    /// Sessions belong to the thread that started them.
    _not_send: PhantomData<*const ()>,
}

/// A session was started on a thread that already has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlreadyTracing;

impl std::fmt::Display for AlreadyTracing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a trace session is already active on this thread (sessions do not nest)")
    }
}

impl std::error::Error for AlreadyTracing {}

impl Session {
    /// Starts recording the calling thread's accesses.
    ///
    /// # Errors
    /// [`AlreadyTracing`] if this thread already has an active session.
    pub fn start() -> Result<Session, AlreadyTracing> {
        if ACTIVE.with(Cell::get) {
            return Err(AlreadyTracing);
        }
        BUFFER.with(|b| b.borrow_mut().clear());
        ACTIVE.with(|a| a.set(true));
        Ok(Session { _not_send: PhantomData })
    }

    /// Stops recording and returns the accesses in the order they were made.
    pub fn finish(self) -> Vec<Access> {
        ACTIVE.with(|a| a.set(false));
        BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = ACTIVE.try_with(|a| a.set(false));
    }
}

/// The CPU set for this thread with [`set_cpu_override`], if any.
#[inline]
pub(crate) fn cpu_override() -> Option<usize> {
    CPU.try_with(Cell::get).ok().flatten()
}

/// Makes [`current_cpu`](super::current_cpu) return `cpu` on this thread.
pub(crate) fn set_cpu_override(cpu: usize) {
    CPU.with(|c| c.set(Some(cpu)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitive::{AtomicU64, Mutex, Ordering as O, UnsafeCell, current_cpu, set_current_cpu};

    #[test]
    fn nothing_is_recorded_outside_a_session() {
        let a = AtomicU64::new(0, "test.a");
        a.store(1, O::Relaxed);
        let s = Session::start().unwrap();
        assert_eq!(s.finish(), Vec::new());
    }

    #[test]
    fn every_primitive_records_address_size_kind_and_label() {
        let a = AtomicU64::new(0, "test.a");
        let c = UnsafeCell::new([0u8; 40], "test.c");
        let m = Mutex::new(7u32, "test.m");
        let s = Session::start().unwrap();
        a.load(O::Relaxed);
        a.store(2, O::Relaxed);
        a.fetch_add(1, O::Relaxed);
        let _ = a.compare_exchange(9, 1, O::Relaxed, O::Relaxed);
        let _ = c.get();
        let _ = c.get_mut();
        {
            let mut g = m.lock();
            *g += 1;
            assert_eq!(*g, 8);
        }
        let log = s.finish();
        let kinds: Vec<(AccessKind, &str, usize)> = log.iter().map(|x| (x.kind, x.label, x.size)).collect();
        use AccessKind::*;
        assert_eq!(
            kinds,
            [
                (Load, "test.a", 8),
                (Store, "test.a", 8),
                (Rmw, "test.a", 8),
                (Rmw, "test.a", 8),
                (CellRead, "test.c", 40),
                (CellWrite, "test.c", 40),
                (LockAcquire, "test.m", std::mem::size_of::<std::sync::Mutex<()>>()),
                (CellWrite, "test.m", 4),
                (CellRead, "test.m", 4),
                (LockRelease, "test.m", std::mem::size_of::<std::sync::Mutex<()>>()),
            ]
        );
        assert!(log.iter().all(|x| x.thread == thread_id()));
        let a_addr = log[0].addr;
        assert!(log[..4].iter().all(|x| x.addr == a_addr));
        assert_eq!(log[4].addr, c.get().deref_addr());
        assert_eq!(log[6].addr, log[9].addr, "acquire and release name the same lock");
    }

    impl<T> crate::primitive::ConstPtr<T> {
        fn deref_addr(&self) -> usize {
            // SAFETY: no write access to the cell is live in this test.
            std::ptr::from_ref(unsafe { self.deref() }) as usize
        }
    }

    #[test]
    fn sessions_are_per_thread_and_do_not_nest() {
        let s = Session::start().unwrap();
        assert_eq!(Session::start().unwrap_err(), AlreadyTracing);
        let a = AtomicU64::new(0, "test.a");
        std::thread::scope(|sc| {
            sc.spawn(|| {
                // Another thread records nothing into this session.
                a.store(1, O::Relaxed);
                let inner = Session::start().unwrap();
                a.load(O::Relaxed);
                assert_eq!(inner.finish().len(), 1);
            });
        });
        assert_eq!(s.finish(), Vec::new());
        // A finished session can be followed by a new one.
        Session::start().unwrap().finish();
    }

    #[test]
    fn current_cpu_can_be_set_per_thread() {
        std::thread::spawn(|| {
            set_current_cpu(5);
            assert_eq!(current_cpu(), 5);
            std::thread::spawn(|| assert!(cpu_override().is_none())).join().unwrap();
        })
        .join()
        .unwrap();
    }
}
