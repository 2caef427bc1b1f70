//! Every shared-memory primitive the library uses: atomics, cells, mutexes, fences, spin
//! hints, thread-locals and "which CPU am I on".
//!
//! Nothing else in the crate names `std::sync::atomic`, `std::cell::UnsafeCell` or
//! `std::sync::Mutex` for state shared between threads. That makes this the one place where
//! an alternative implementation plugs in, the way crossbeam routes its primitives:
//!
//! * default: thin wrappers over `std`, compiled away;
//! * `--cfg loom`: the [`loom`](https://docs.rs/loom) model checker's versions, so loom
//!   explores every interleaving of the slot locks, eviction and synchronize. Under loom,
//!   [`current_cpu`] returns a per-thread value the test sets with `set_current_cpu`
//!   (so a test can "migrate" a thread), and both halves of the asymmetric barrier are full
//!   `SeqCst` fences;
//! * the `trace` cargo feature: the same `std` primitives, each recording every access
//!   (thread, address, size, kind, label) into a per-thread buffer while a trace session
//!   is active on that thread (the `trace` module), for the commutativity checker's tracer (002
//!   §6.3). Under tracing, [`current_cpu`] can be set per thread with `set_current_cpu`,
//!   as under loom, so a test runs one operation "on CPU 0" and another "on CPU 1".
//!
//! Every constructor takes a label naming the field (`"Slot.lock"`); the default build
//! drops it, a tracing build stores it (so traced structures are larger: each primitive
//! carries a 16-byte label) and reports it with each access.
//!
//! Process-wide counters that no modelled interleaving depends on (object and domain ids)
//! use `std` atomics directly; they are documented where they are defined.

#[cfg(not(loom))]
use std::sync::atomic as imp_atomic;

#[cfg(percore_trace)]
pub mod trace;
#[cfg(percore_trace)]
use trace::{AccessKind, record};

#[cfg(loom)]
use loom::sync::atomic as imp_atomic;

pub use std::sync::atomic::Ordering;

/// Records an access to `$self`'s atomic under tracing; nothing otherwise.
macro_rules! record_atomic {
    ($self:ident, $int:ty, $kind:ident) => {
        #[cfg(percore_trace)]
        record(std::ptr::from_ref(&$self.inner).cast(), std::mem::size_of::<$int>(), AccessKind::$kind, $self.label);
    };
}

macro_rules! atomic_wrapper {
    ($name:ident, $int:ty) => {
        #[doc = concat!("A labelled `", stringify!($name), "` (see the module docs).")]
        #[derive(Debug)]
        #[cfg_attr(not(percore_trace), repr(transparent))]
        pub struct $name {
            inner: imp_atomic::$name,
            #[cfg(percore_trace)]
            label: &'static str,
        }

        impl $name {
            /// Creates the atomic; `label` names the field for tracing builds.
            #[inline]
            pub fn new(v: $int, label: &'static str) -> Self {
                #[cfg(not(percore_trace))]
                let _ = label;
                Self {
                    inner: imp_atomic::$name::new(v),
                    #[cfg(percore_trace)]
                    label,
                }
            }
            /// Under tracing: records an access of `kind` to this atomic, as its own
            /// operations do, without making one (for stand-ins that record the accesses of
            /// code the tracer cannot see, such as the restartable sequence's plain loads and
            /// stores, and synchronize through [`untraced`](Self::untraced)).
            #[cfg(percore_trace)]
            #[allow(dead_code, reason = "used by the restartable-sequence stand-in, on some types only")]
            #[inline(always)]
            pub(crate) fn record(&self, kind: AccessKind) {
                record(std::ptr::from_ref(&self.inner).cast(), std::mem::size_of::<$int>(), kind, self.label);
            }
            /// Under tracing: the atomic itself, whose operations are not recorded (see
            /// [`record`](Self::record)).
            #[cfg(percore_trace)]
            #[allow(dead_code, reason = "used by the restartable-sequence stand-in, on some types only")]
            #[inline(always)]
            pub(crate) fn untraced(&self) -> &imp_atomic::$name {
                &self.inner
            }
            /// Atomic load.
            #[inline(always)]
            pub fn load(&self, o: Ordering) -> $int {
                record_atomic!(self, $int, Load);
                self.inner.load(o)
            }
            /// Atomic store.
            #[inline(always)]
            pub fn store(&self, v: $int, o: Ordering) {
                record_atomic!(self, $int, Store);
                self.inner.store(v, o)
            }
            /// Atomic swap.
            #[inline(always)]
            pub fn swap(&self, v: $int, o: Ordering) -> $int {
                record_atomic!(self, $int, Rmw);
                self.inner.swap(v, o)
            }
            /// Atomic compare-and-exchange (traced as a read-modify-write even when it
            /// fails: the instruction takes the line exclusively either way).
            #[inline(always)]
            pub fn compare_exchange(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                record_atomic!(self, $int, Rmw);
                self.inner.compare_exchange(current, new, success, failure)
            }
        }
    };
}

macro_rules! atomic_int_ops {
    ($name:ident, $int:ty) => {
        impl $name {
            /// Atomic add, returning the previous value.
            #[inline(always)]
            pub fn fetch_add(&self, v: $int, o: Ordering) -> $int {
                record_atomic!(self, $int, Rmw);
                self.inner.fetch_add(v, o)
            }
            /// Atomic subtract, returning the previous value.
            #[inline(always)]
            pub fn fetch_sub(&self, v: $int, o: Ordering) -> $int {
                record_atomic!(self, $int, Rmw);
                self.inner.fetch_sub(v, o)
            }
            /// Atomic bitwise or, returning the previous value.
            #[inline(always)]
            pub fn fetch_or(&self, v: $int, o: Ordering) -> $int {
                record_atomic!(self, $int, Rmw);
                self.inner.fetch_or(v, o)
            }
            /// Atomic bitwise and, returning the previous value.
            #[inline(always)]
            pub fn fetch_and(&self, v: $int, o: Ordering) -> $int {
                record_atomic!(self, $int, Rmw);
                self.inner.fetch_and(v, o)
            }
            /// Atomic maximum, returning the previous value.
            #[inline(always)]
            pub fn fetch_max(&self, v: $int, o: Ordering) -> $int {
                record_atomic!(self, $int, Rmw);
                self.inner.fetch_max(v, o)
            }
            /// Atomic bitwise exclusive or, returning the previous value.
            #[inline(always)]
            pub fn fetch_xor(&self, v: $int, o: Ordering) -> $int {
                record_atomic!(self, $int, Rmw);
                self.inner.fetch_xor(v, o)
            }
        }
    };
}

atomic_wrapper!(AtomicBool, bool);
atomic_wrapper!(AtomicU32, u32);
atomic_wrapper!(AtomicU64, u64);
atomic_wrapper!(AtomicUsize, usize);
atomic_int_ops!(AtomicU32, u32);
atomic_int_ops!(AtomicU64, u64);
atomic_int_ops!(AtomicUsize, usize);

/// A memory fence.
#[inline(always)]
pub fn fence(o: Ordering) {
    imp_atomic::fence(o)
}

/// Orders a sequentially consistent read-modify-write before a later sequentially
/// consistent load of another location (the two halves of a Dekker handshake). The
/// language's model already does (sequentially consistent operations are totally ordered),
/// so this compiles to nothing; loom models such accesses as acquire/release only, so
/// under loom it is a real `SeqCst` fence.
#[inline(always)]
pub fn dekker_fence() {
    #[cfg(loom)]
    loom::sync::atomic::fence(Ordering::SeqCst);
}

/// Hint for a spin-wait iteration (under loom: a yield, so the model can make progress).
#[inline(always)]
pub fn spin_loop() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Gives up the CPU (used by spin-waits that have waited long).
#[inline]
pub fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Waits `2^step` CPU hints (one under loom, where a hint is a yield): the wait between
/// two polls of a word another core holds at step `step` of an exponential backoff.
/// Polling less often leaves the line to its holder, which then runs its next operations
/// without losing it: two threads mixing reads and updates of one direct object (2-core
/// host, 2026-11-26, 2 × 10M operations, three runs each) went from 25-27M to 40-44M
/// ops/s at 50 % updates, and from 19-21M to 40M at 90 % (`Mutex`: 27-34M), against one
/// hint between polls.
#[inline]
pub fn spin_wait(step: u32) {
    for _ in 0..if cfg!(loom) { 1 } else { 1u32 << step } {
        spin_loop();
    }
}

/// Spin-wait helper: spins with exponential backoff ([`spin_wait`], steps 0 to
/// [`Backoff::SPIN_STEPS`], as crossbeam's `Backoff`), then yields the CPU each time so a
/// preempted lock holder can run.
#[derive(Debug, Default)]
pub struct Backoff(u32);

impl Backoff {
    /// The last step that spins (2^6 = 64 hints); 127 hints in all before the first yield.
    pub const SPIN_STEPS: u32 = 6;

    /// One waiting step.
    #[inline]
    pub fn snooze(&mut self) {
        if self.0 <= Self::SPIN_STEPS {
            spin_wait(self.0);
            self.0 += 1;
        } else {
            // Waited long: a wait inside `must_not_wait` may be for what this thread holds.
            check_waiting();
            yield_now();
        }
    }
}

thread_local_const! {
    /// Why the calling thread must not wait (set by [`must_not_wait`]), if it must not.
    static MUST_NOT_WAIT: std::cell::Cell<Option<&'static str>> = std::cell::Cell::new(None);
}

/// Runs `f` with the calling thread marked as unable to wait: every spin-wait of this crate
/// (a [`Backoff`], a slot's lock) that has spun long enough to start yielding panics with
/// `why` instead of waiting on, since what it waits for may be what the thread holds (OpLog
/// runs `Update::absorb_local` so, under the thread's own log slot). The mark is checked only
/// on the slow path of a wait; nothing is checked when nothing waits. Nests: the previous
/// mark is back when `f` returns or unwinds.
#[inline]
pub fn must_not_wait<R>(why: &'static str, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<&'static str>);
    impl Drop for Restore {
        #[inline]
        fn drop(&mut self) {
            let _ = MUST_NOT_WAIT.try_with(|m| m.set(self.0));
        }
    }
    let before = MUST_NOT_WAIT.try_with(|m| m.replace(Some(why))).unwrap_or(None);
    let _restore = Restore(before);
    f()
}

/// Called by spin-waits that have waited long: panics with the reason if the calling thread
/// runs inside [`must_not_wait`].
#[cold]
pub(crate) fn check_waiting() {
    if let Some(why) = MUST_NOT_WAIT.try_with(std::cell::Cell::get).unwrap_or(None) {
        panic!("{why}");
    }
}

#[cfg(not(loom))]
mod cell {
    #[cfg(percore_trace)]
    use super::trace::{AccessKind, record};

    /// A labelled interior-mutability cell with loom's access API. Under tracing, `get` and
    /// `get_mut` record a read or write of the whole value (`size_of::<T>()` bytes at the
    /// cell); memory the value points to (a `Vec`'s buffer) is recorded only where the code
    /// that reaches it reports it (`trace::record_slice`; see the `trace` module's docs).
    #[derive(Debug)]
    pub struct UnsafeCell<T> {
        cell: std::cell::UnsafeCell<T>,
        #[cfg(percore_trace)]
        label: &'static str,
    }

    /// A read access to an [`UnsafeCell`]'s contents.
    #[derive(Debug)]
    pub struct ConstPtr<T>(*const T);

    /// A write access to an [`UnsafeCell`]'s contents.
    #[derive(Debug)]
    pub struct MutPtr<T>(*mut T);

    impl<T> UnsafeCell<T> {
        /// Byte offset of the value in the cell (for inline assembly that addresses it).
        #[cfg(any(percore_rseq, percore_trace))]
        pub const VALUE_OFFSET: usize = std::mem::offset_of!(Self, cell);

        /// Creates the cell; `label` names the field for tracing builds.
        #[inline]
        pub fn new(v: T, label: &'static str) -> Self {
            #[cfg(not(percore_trace))]
            let _ = label;
            Self {
                cell: std::cell::UnsafeCell::new(v),
                #[cfg(percore_trace)]
                label,
            }
        }
        /// Starts a read access.
        #[inline(always)]
        pub fn get(&self) -> ConstPtr<T> {
            #[cfg(percore_trace)]
            record(self.cell.get().cast_const().cast(), std::mem::size_of::<T>(), AccessKind::CellRead, self.label);
            ConstPtr(self.cell.get())
        }
        /// Starts a write access.
        #[inline(always)]
        pub fn get_mut(&self) -> MutPtr<T> {
            #[cfg(percore_trace)]
            record(self.cell.get().cast_const().cast(), std::mem::size_of::<T>(), AccessKind::CellWrite, self.label);
            MutPtr(self.cell.get())
        }
        /// Unwraps the value.
        #[inline]
        pub fn into_inner(self) -> T {
            self.cell.into_inner()
        }
        /// The value's address, with no access recorded (`GuardAccess`, whose guard recorded
        /// its access when it started).
        #[inline(always)]
        pub(super) fn ptr(&self) -> *mut T {
            self.cell.get()
        }
    }

    impl<T> ConstPtr<T> {
        /// Dereferences the access.
        ///
        /// # Safety
        /// No write access to the same cell may be live for the lifetime of the reference.
        #[inline(always)]
        pub unsafe fn deref(&self) -> &T {
            // SAFETY: the pointer comes from a live UnsafeCell; the caller guarantees no
            // concurrent write access.
            unsafe { &*self.0 }
        }
    }

    impl<T> MutPtr<T> {
        /// Dereferences the access.
        ///
        /// # Safety
        /// No other access to the same cell may be live for the lifetime of the reference.
        #[allow(clippy::mut_from_ref)]
        #[inline(always)]
        pub unsafe fn deref(&self) -> &mut T {
            // SAFETY: the pointer comes from a live UnsafeCell; the caller guarantees
            // exclusivity.
            unsafe { &mut *self.0 }
        }
    }
}

#[cfg(loom)]
mod cell {
    pub use loom::cell::{ConstPtr, MutPtr};

    /// A labelled interior-mutability cell (loom's, under `--cfg loom`).
    #[derive(Debug)]
    pub struct UnsafeCell<T>(loom::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        /// Creates the cell; `label` names the field for tracing builds.
        pub fn new(v: T, label: &'static str) -> Self {
            let _ = label;
            Self(loom::cell::UnsafeCell::new(v))
        }
        /// Starts a read access.
        pub fn get(&self) -> ConstPtr<T> {
            self.0.get()
        }
        /// Starts a write access.
        pub fn get_mut(&self) -> MutPtr<T> {
            self.0.get_mut()
        }
        /// Unwraps the value.
        pub fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }
}

pub use cell::{ConstPtr, MutPtr, UnsafeCell};

/// The access that a lock's guard keeps to the cell its lock guards, from the acquisition to
/// the release. Each borrow is made afresh from the cell's address, so that two shared ones
/// may live at once: made from the write access, each would be a unique borrow that ends
/// the others (undefined behaviour under Stacked Borrows, which Miri reports). Under loom
/// the guard holds the tracked write access until [`GuardAccess::end`]; elsewhere it holds
/// nothing (a zero-sized type).
pub struct GuardAccess<T> {
    #[cfg(loom)]
    access: Option<MutPtr<T>>,
    _cell: std::marker::PhantomData<*mut T>,
}

impl<T> GuardAccess<T> {
    /// Starts the write access of a guard that has just taken the lock of `cell` (under
    /// tracing, one write of the cell is recorded, for the guard's whole span).
    #[inline(always)]
    pub fn start(cell: &UnsafeCell<T>) -> Self {
        // Elsewhere only the tracer's record: each borrow is made from the cell's address.
        let access = cell.get_mut();
        #[cfg(not(loom))]
        let _ = access;
        Self {
            #[cfg(loom)]
            access: Some(access),
            _cell: std::marker::PhantomData,
        }
    }

    /// A shared borrow of the value, for as long as the guard is borrowed.
    ///
    /// # Safety
    /// `cell` is the cell this access started on, the guard holds its lock, and the access
    /// has not ended.
    #[inline(always)]
    pub unsafe fn shared<'a>(&'a self, cell: &'a UnsafeCell<T>) -> &'a T {
        #[cfg(loom)]
        {
            let _ = cell;
            // SAFETY: the caller guarantees the lock and that `access` (Some until `end`)
            // is the write access to `cell`; `&self` keeps mutable borrows from living.
            unsafe { self.access.as_ref().unwrap_unchecked().deref() }
        }
        // SAFETY: the caller guarantees the lock, so no other thread accesses the value,
        // and `&self` keeps the guard's own mutable borrows from living meanwhile.
        #[cfg(not(loom))]
        unsafe {
            &*cell.ptr()
        }
    }

    /// A mutable borrow of the value, for as long as the guard is borrowed.
    ///
    /// # Safety
    /// As [`GuardAccess::shared`].
    #[inline(always)]
    pub unsafe fn exclusive<'a>(&'a mut self, cell: &'a UnsafeCell<T>) -> &'a mut T {
        #[cfg(loom)]
        {
            let _ = cell;
            // SAFETY: as in `shared`; `&mut self` makes this the only borrow.
            unsafe { self.access.as_ref().unwrap_unchecked().deref() }
        }
        // SAFETY: as in `shared`; `&mut self` makes this the only borrow.
        #[cfg(not(loom))]
        unsafe {
            &mut *cell.ptr()
        }
    }

    /// Ends the access; the guard calls it before it releases the lock, so that loom sees
    /// the access end inside the lock.
    #[inline(always)]
    pub fn end(&mut self) {
        #[cfg(loom)]
        {
            self.access = None;
        }
    }
}

/// A labelled mutex for slow paths (pending buffers, registries). Poisoning is ignored:
/// the data it guards is kept consistent by the code that holds it, which never runs user
/// code while locked.
///
/// Under tracing, locking records a lock acquire at the mutex, dropping the guard a lock
/// release, and each dereference of the guard a cell read or write of the guarded value.
#[derive(Debug)]
pub struct Mutex<T> {
    inner: imp_mutex::Mutex<T>,
    #[cfg(percore_trace)]
    label: &'static str,
}

#[cfg(not(loom))]
use std::sync as imp_mutex;

#[cfg(loom)]
use loom::sync as imp_mutex;

/// Guard returned by [`Mutex::lock`].
#[cfg(not(percore_trace))]
pub type MutexGuard<'a, T> = imp_mutex::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// Creates the mutex; `label` names the field for tracing builds.
    pub fn new(v: T, label: &'static str) -> Self {
        #[cfg(not(percore_trace))]
        let _ = label;
        Self {
            inner: imp_mutex::Mutex::new(v),
            #[cfg(percore_trace)]
            label,
        }
    }

    /// Locks the mutex.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        let guard = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        #[cfg(percore_trace)]
        let guard = {
            record(std::ptr::from_ref(self).cast(), MUTEX_WORD, AccessKind::LockAcquire, self.label);
            MutexGuard { guard, mutex: std::ptr::from_ref(self).cast(), label: self.label }
        };
        guard
    }
}

/// Bytes of a traced mutex's lock word (recorded for acquire and release).
#[cfg(percore_trace)]
const MUTEX_WORD: usize = std::mem::size_of::<std::sync::Mutex<()>>();

/// Guard returned by [`Mutex::lock`]: records the release when dropped and every access to
/// the guarded value.
#[cfg(percore_trace)]
#[derive(Debug)]
pub struct MutexGuard<'a, T> {
    guard: std::sync::MutexGuard<'a, T>,
    mutex: *const u8,
    label: &'static str,
}

#[cfg(percore_trace)]
impl<T> std::ops::Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        let value: &T = &self.guard;
        record(std::ptr::from_ref(value).cast(), std::mem::size_of::<T>(), AccessKind::CellRead, self.label);
        value
    }
}

#[cfg(percore_trace)]
impl<T> std::ops::DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        let label = self.label;
        let value: &mut T = &mut self.guard;
        record(std::ptr::from_mut(value).cast_const().cast(), std::mem::size_of::<T>(), AccessKind::CellWrite, label);
        value
    }
}

#[cfg(percore_trace)]
impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        record(self.mutex, MUTEX_WORD, AccessKind::LockRelease, self.label);
    }
}

/// Declares a thread-local with a constant initializer; under `--cfg loom`, loom's
/// per-simulated-thread version.
#[macro_export]
#[doc(hidden)]
macro_rules! __thread_local_const {
    ($(#[$m:meta])* static $name:ident: $t:ty = $init:expr;) => {
        #[cfg(not(loom))]
        ::std::thread_local! { $(#[$m])* static $name: $t = const { $init }; }
        #[cfg(loom)]
        $crate::primitive::__loom::thread_local! { $(#[$m])* static $name: $t = $init; }
    };
}

#[doc(inline)]
pub use crate::__thread_local_const as thread_local_const;

/// Loom, for [`thread_local_const`]'s expansion in other crates.
#[cfg(loom)]
#[doc(hidden)]
pub use loom as __loom;

/// `cpu` folded onto a table of `n` rows (CPU ids beyond it, after hot plug, share rows):
/// `cpu % n`, without the division in the common case.
#[inline(always)]
pub fn fold_cpu(cpu: usize, n: usize) -> usize {
    if cpu < n { cpu } else { cpu % n }
}

/// The CPU the calling thread runs on (a hint: it may migrate at once).
#[cfg(not(any(loom, percore_trace)))]
#[inline(always)]
pub fn current_cpu() -> usize {
    ordo::cpu::current()
}

#[cfg(loom)]
loom::thread_local! {
    static LOOM_CPU: std::cell::Cell<usize> = std::cell::Cell::new(0);
}

/// The CPU the calling thread runs on: under loom, the value the test last set for this
/// simulated thread with [`set_current_cpu`] (0 by default).
#[cfg(loom)]
pub fn current_cpu() -> usize {
    LOOM_CPU.with(|c| c.get())
}

/// Under loom: makes the calling simulated thread appear to run on `cpu` (a migration).
#[cfg(loom)]
pub fn set_current_cpu(cpu: usize) {
    LOOM_CPU.with(|c| c.set(cpu))
}

/// The CPU the calling thread runs on: under tracing, the value set for this thread with
/// [`set_current_cpu`], else the OS's answer.
#[cfg(percore_trace)]
#[inline]
pub fn current_cpu() -> usize {
    trace::cpu_override().unwrap_or_else(ordo::cpu::current)
}

/// Under tracing: makes the calling thread appear to run on `cpu` from now on, whatever
/// CPU the OS runs it on (so a test places operations on CPUs deterministically).
#[cfg(percore_trace)]
pub fn set_current_cpu(cpu: usize) {
    trace::set_cpu_override(cpu);
}

/// The two halves of an asymmetric barrier (the "asymmetric Dekker" pattern).
///
/// A frequent, single owner thread announces itself with a store and then reads a flag
/// after a [`light`](barrier::light) barrier; a rare remote thread sets the flag, runs a
/// [`heavy`](barrier::heavy) barrier, then reads the owner's store. Together they guarantee
/// that at least one of the two sees the other's store.
///
/// On Linux, `heavy` is `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which runs a full
/// memory barrier on every CPU currently running a thread of this process (and a context
/// switch implies one), so `light` only has to stop the compiler from reordering: the
/// owner's fast path has no fence and no atomic read-modify-write. [`init`](barrier::init)
/// says whether this is available; where it is not, callers must not use the pair (OpLog
/// then locks per-thread slots like per-CPU ones). Under loom both halves are `SeqCst`
/// fences, the textbook form of the same protocol.
pub mod barrier {
    #[cfg(all(not(loom), target_os = "linux"))]
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    #[cfg(all(not(loom), not(miri), target_os = "linux"))]
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;
    #[cfg(all(not(loom), target_os = "linux"))]
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ: libc::c_long = 1 << 7;
    /// `membarrier`'s flag: interrupt only the CPU named by its third argument.
    #[cfg(all(not(loom), target_os = "linux"))]
    const MEMBARRIER_CMD_FLAG_CPU: libc::c_long = 1;

    /// Whether [`heavy`] uses the rseq variant of membarrier, which also restarts every
    /// restartable sequence in progress (set once, before any rseq owner exists).
    #[cfg(all(not(loom), target_os = "linux"))]
    static RSEQ_VARIANT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// Makes [`heavy`] also restart restartable sequences (`crate::rseq` calls this after
    /// registering, before creating any domain that uses them).
    #[cfg(all(not(loom), target_os = "linux"))]
    pub fn use_rseq_variant() {
        RSEQ_VARIANT.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Registers this process for expedited membarrier (once) and says whether the
    /// asymmetric pair can be used.
    pub fn init() -> bool {
        #[cfg(all(not(loom), not(miri), target_os = "linux"))]
        {
            static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            *AVAILABLE.get_or_init(|| {
                // SAFETY: membarrier with REGISTER_PRIVATE_EXPEDITED takes no pointers; it
                // fails with an error code on kernels that lack it.
                let rc =
                    unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) };
                rc == 0
            })
        }
        #[cfg(all(not(loom), any(miri, not(target_os = "linux"))))]
        return false;
        #[cfg(loom)]
        return true;
    }

    /// The owner's barrier: stops the compiler from moving memory accesses across it.
    #[inline(always)]
    pub fn light() {
        #[cfg(not(loom))]
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
        #[cfg(loom)]
        loom::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    /// The remote side's barrier, on every CPU running this process. Only valid after
    /// [`init`] returned true.
    ///
    /// **Shared.** Barriers that remote sides need at the same time are combined
    /// (`Shared`): a call returns at once, without its own system call, if a barrier that
    /// began after the call did has completed meanwhile. A barrier costs microseconds, so a
    /// waiter usually finds its work done.
    pub fn heavy() {
        #[cfg(all(not(loom), target_os = "linux"))]
        {
            debug_assert!(init(), "barrier::heavy without membarrier registration");
            let ticket = ALL.ticket();
            ALL.issue(
                ticket,
                || false,
                || {
                    membarrier(0, 0);
                },
            );
        }
        #[cfg(all(not(loom), not(target_os = "linux")))]
        unreachable!("barrier::heavy is only used where init() returned true");
        #[cfg(loom)]
        loom::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }

    /// [`heavy`] for owners that can only be running on CPU `cpu`: the per-CPU slots
    /// entered through a restartable sequence, whose owner is on the slot's CPU while it
    /// is inside the sequence (the kernel aborts the sequence on preemption and migration)
    /// and has made its entry visible if it left the CPU since. With the rseq variant the
    /// barrier interrupts that one CPU (`MEMBARRIER_CMD_FLAG_CPU`, Linux 5.10) instead of
    /// every CPU running the process; elsewhere, or where the kernel refuses the flag, it is
    /// [`heavy`].
    ///
    /// **Shared** as [`heavy`] is, per CPU: a call returns without its own system call if
    /// a barrier to the same CPU, or one to every CPU, began after the call did and has
    /// completed meanwhile (synchronizes of different objects that find logs on the same
    /// CPU at the same time send it one interrupt).
    pub fn heavy_on(cpu: usize) {
        #[cfg(all(not(loom), target_os = "linux"))]
        {
            use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
            static REFUSED: AtomicBool = AtomicBool::new(false);
            if RSEQ_VARIANT.load(Relaxed)
                && !REFUSED.load(Relaxed)
                && let Ok(flag_cpu) = libc::c_long::try_from(cpu)
            {
                let all = ALL.ticket();
                // The barrier to `cpu`, or, where the kernel refuses the flag, to every CPU.
                let targeted = || {
                    if membarrier(MEMBARRIER_CMD_FLAG_CPU, flag_cpu) != 0 {
                        REFUSED.store(true, Relaxed);
                        heavy();
                    }
                };
                match per_cpu().get(cpu) {
                    Some(one) => one.issue(one.ticket(), || ALL.done_since(all), targeted),
                    None => targeted(),
                }
                return;
            }
            heavy();
        }
        #[cfg(not(all(not(loom), target_os = "linux")))]
        {
            let _ = cpu;
            heavy();
        }
    }

    /// The barriers to every CPU ([`heavy`]).
    #[cfg(all(not(loom), target_os = "linux"))]
    static ALL: Shared = Shared::new();

    /// The barriers to each CPU alone ([`heavy_on`]), one per CPU the system has (CPUs
    /// beyond, if any come online, go unshared).
    #[cfg(all(not(loom), target_os = "linux"))]
    fn per_cpu() -> &'static [Shared] {
        static PER_CPU: std::sync::OnceLock<Box<[Shared]>> = std::sync::OnceLock::new();
        PER_CPU.get_or_init(|| {
            // SAFETY: sysconf takes no pointers; it returns -1 for an unknown name.
            let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
            (0..usize::try_from(cpus).unwrap_or(0)).map(|_| Shared::new()).collect()
        })
    }

    /// One kind of barrier, whose callers at the same time share one system call. A caller
    /// takes a [`ticket`](Shared::ticket) after its stores (its requests) and then
    /// [`issue`](Shared::issue)s: if a barrier of this kind that took a later ticket has
    /// completed, it began after the caller's stores were visible, which is all the
    /// asymmetric pair needs, and the caller returns without its own. Issuers take turns
    /// under a lock, so barriers complete in ticket order.
    #[cfg(all(not(loom), any(test, target_os = "linux")))]
    struct Shared {
        /// Barriers begun (each takes a ticket).
        begun: std::sync::atomic::AtomicU64,
        /// Barriers completed, as one past the ticket of the last one.
        done: std::sync::atomic::AtomicU64,
        turn: std::sync::Mutex<()>,
    }

    #[cfg(all(not(loom), any(test, target_os = "linux")))]
    impl Shared {
        const fn new() -> Self {
            Self {
                begun: std::sync::atomic::AtomicU64::new(0),
                done: std::sync::atomic::AtomicU64::new(0),
                turn: std::sync::Mutex::new(()),
            }
        }

        /// A caller's ticket: any barrier of this kind that takes a later one begins after
        /// the caller's stores before this call are visible (the fence orders them first).
        fn ticket(&self) -> u64 {
            use std::sync::atomic::{Ordering::SeqCst, fence};
            fence(SeqCst);
            self.begun.load(SeqCst)
        }

        /// Whether a barrier of this kind that took `ticket` or later has completed.
        fn done_since(&self, ticket: u64) -> bool {
            self.done.load(std::sync::atomic::Ordering::SeqCst) > ticket
        }

        /// Runs `barrier` for the caller holding `ticket`, unless, once it is this caller's
        /// turn, a barrier of this kind begun since has completed, or `covered` says that
        /// one that covers it has.
        fn issue(&self, ticket: u64, covered: impl FnOnce() -> bool, barrier: impl FnOnce()) {
            use std::sync::atomic::Ordering::SeqCst;
            let _turn = self.turn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if self.done_since(ticket) || covered() {
                return;
            }
            let mine = self.begun.fetch_add(1, SeqCst);
            barrier();
            self.done.store(mine + 1, SeqCst);
        }
    }

    #[cfg(all(test, not(loom)))]
    mod tests {
        use super::Shared;
        use std::cell::Cell;

        #[test]
        fn a_barrier_begun_after_a_ticket_serves_it() {
            let shared = Shared::new();
            let issued = Cell::new(0);
            let barrier = || issued.set(issued.get() + 1);
            let early = shared.ticket();
            shared.issue(shared.ticket(), || false, barrier);
            assert_eq!(issued.get(), 1);
            // Taken before that barrier began: served by it.
            shared.issue(early, || false, barrier);
            assert_eq!(issued.get(), 1);
            // Taken after it completed: needs a barrier of its own.
            shared.issue(shared.ticket(), || false, barrier);
            assert_eq!(issued.get(), 2);
            // Unless one that covers it completed.
            shared.issue(shared.ticket(), || true, barrier);
            assert_eq!(issued.get(), 2);
        }

        #[test]
        fn concurrent_callers_each_return_after_a_barrier_that_began_after_them() {
            use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
            let shared = Shared::new();
            // Barrier number `n` (from 1) records when it began and ended on a clock of
            // events.
            let clock = AtomicU64::new(0);
            let spans = std::sync::Mutex::new(Vec::new());
            let threads = if cfg!(miri) { 3 } else { 8 };
            let rounds = if cfg!(miri) { 5 } else { 2000 };
            let issued = AtomicU64::new(0);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        for _ in 0..rounds {
                            let asked = clock.fetch_add(1, SeqCst);
                            shared.issue(
                                shared.ticket(),
                                || false,
                                || {
                                    let began = clock.fetch_add(1, SeqCst);
                                    issued.fetch_add(1, SeqCst);
                                    let ended = clock.fetch_add(1, SeqCst);
                                    spans.lock().unwrap().push((began, ended));
                                },
                            );
                            let returned = clock.fetch_add(1, SeqCst);
                            let spans = spans.lock().unwrap();
                            assert!(
                                spans.iter().any(|&(b, e)| b > asked && e < returned),
                                "a caller returned with no barrier begun after it asked"
                            );
                        }
                    });
                }
            });
            assert!(issued.load(SeqCst) <= (threads * rounds) as u64);
        }
    }

    /// `membarrier` with the process's command (the rseq variant once registered) and
    /// `flags` and `cpu`; returns the system call's result (0, or -1 when the kernel
    /// refuses `flags`). Panics on any other failure: the process registered for it
    /// ([`init`], `crate::rseq::offset`), which callers checked.
    #[cfg(all(not(loom), target_os = "linux"))]
    fn membarrier(flags: libc::c_long, cpu: libc::c_long) -> libc::c_long {
        let cmd = if RSEQ_VARIANT.load(std::sync::atomic::Ordering::SeqCst) {
            MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ
        } else {
            MEMBARRIER_CMD_PRIVATE_EXPEDITED
        };
        // SAFETY: membarrier with PRIVATE_EXPEDITED(_RSEQ) takes no pointers; `cpu` is only
        // read with MEMBARRIER_CMD_FLAG_CPU.
        let rc = unsafe { libc::syscall(libc::SYS_membarrier, cmd, flags, cpu) };
        assert!(rc == 0 || flags != 0, "membarrier(PRIVATE_EXPEDITED) failed after registration");
        rc
    }
}
