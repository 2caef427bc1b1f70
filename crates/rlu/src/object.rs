//! RLU objects, their copies, and the links between objects.
//!
//! An [`RluObject`] is a value with a one-word header, the pointer to its *copy*: null
//! while the object is unlocked, else the copy a writer made of it in its write log (003
//! §4.1: "writers first lock the object and then copy those objects to their own write
//! log"). Locking *is* installing the copy, with one compare-and-swap, so a reader that
//! finds the header non-null also finds, in the copy, which thread owns the lock.
//!
//! A copy ([`CopyOf`]) lives in its writer's log from the lock until a quiescence period
//! after the writer unlocked it: readers that stole it may still be reading it after the
//! commit. The log holds copies type-erased, as [`Logged`] trait objects, so one write log
//! holds copies of objects of any type.

use std::fmt;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use crate::sync::{AtomicPtr, Cell, Ordering};

/// What an RLU object can hold: a writer clones the value into its log, readers on other
/// threads read it, and the commit clones the new value back.
pub trait Value: Clone + Send + Sync + 'static {}

impl<T: Clone + Send + Sync + 'static> Value for T {}

/// A value protected by RLU: read in sections through [`Section::get`](crate::Section::get),
/// written through [`Section::lock`](crate::Section::lock).
///
/// Objects belong to the [`Rlu`](crate::Rlu) domain that made them
/// ([`Rlu::object`](crate::Rlu::object), [`Section::alloc`](crate::Section::alloc)); a
/// section of another domain refuses them.
pub struct RluObject<T> {
    /// The writer's copy while the object is locked; null while it is not.
    pub(crate) copy: AtomicPtr<CopyOf<T>>,
    /// The id of the domain the object belongs to.
    pub(crate) domain: u64,
    pub(crate) value: Cell<T>,
}

// SAFETY: the value is read by sections on many threads (shared `&T`, hence `T: Sync`) and
// written only by the writer holding the object's lock, after a quiescence period in which
// every section that could still read the old value has ended (the write-back of
// `Domain::commit`); values move between threads (`T: Send`).
unsafe impl<T: Send + Sync> Sync for RluObject<T> {}

impl<T: Value> RluObject<T> {
    pub(crate) fn new(domain: u64, value: T) -> Self {
        Self { copy: AtomicPtr::new(ptr::null_mut()), domain, value: Cell::new(value) }
    }

    /// The value, with exclusive access: no section can be reading or writing it.
    pub fn get_mut(&mut self) -> &mut T {
        debug_assert!(self.copy.load(Ordering::Relaxed).is_null(), "an object borrowed mutably is locked");
        self.value.get_mut()
    }

    /// The value, taken out of the object.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T> fmt::Debug for RluObject<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RluObject")
            .field("domain", &self.domain)
            .field("locked", &!self.copy.load(Ordering::Relaxed).is_null())
            .finish_non_exhaustive()
    }
}

/// A pointer to an object allocated with [`Section::alloc`](crate::Section::alloc), to be
/// stored inside other objects' values (a list's `next`): `Copy`, possibly null, and
/// dereferenced only inside a section with the unsafe
/// [`Section::deref`](crate::Section::deref), as with `crossbeam-epoch`'s `Shared`.
pub struct Link<T>(*mut RluObject<T>);

impl<T> Link<T> {
    /// The null link.
    pub const fn null() -> Self {
        Self(ptr::null_mut())
    }

    /// Whether the link is null.
    pub fn is_null(self) -> bool {
        self.0.is_null()
    }

    /// Whether the link points to `object`.
    pub fn points_to(self, object: &RluObject<T>) -> bool {
        ptr::eq(self.0, object)
    }

    pub(crate) fn from_raw(raw: *mut RluObject<T>) -> Self {
        Self(raw)
    }

    pub(crate) fn as_ptr(self) -> *mut RluObject<T> {
        self.0
    }
}

impl<T> Clone for Link<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Link<T> {}

impl<T> PartialEq for Link<T> {
    fn eq(&self, other: &Self) -> bool {
        ptr::eq(self.0, other.0)
    }
}

impl<T> Eq for Link<T> {}

impl<T> Default for Link<T> {
    fn default() -> Self {
        Self::null()
    }
}

impl<T> fmt::Debug for Link<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Link({:p})", self.0)
    }
}

// SAFETY: a link is an address; every access through it goes through `Section::deref`,
// whose contract covers the object's lifetime, and through the object's own `Sync`.
unsafe impl<T: Send + Sync> Send for Link<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send + Sync> Sync for Link<T> {}

/// A writer's copy of an object, in its write log.
///
/// Readers on other threads read `owner` (immutable once the copy is published by the
/// compare-and-swap that locks the object) and, when they steal, `value` (written by the
/// owner before its commit publishes its write clock, never written after). `staged` and
/// `original` are the owner's alone.
pub(crate) struct CopyOf<T> {
    /// The slot of the writer that holds the lock.
    pub(crate) owner: usize,
    original: *const RluObject<T>,
    /// The new value: a clone of the original, then whatever the writer makes of it.
    pub(crate) value: Cell<MaybeUninit<T>>,
    /// Before the write-back, a clone of `value` (made before the commit, so that a
    /// panicking `clone` aborts cleanly); after it, the original's old value, dropped with
    /// the copy.
    staged: Cell<MaybeUninit<T>>,
}

impl<T: Value> CopyOf<T> {
    pub(crate) fn new(owner: usize, original: &RluObject<T>) -> Self {
        Self { owner, original, value: Cell::new(MaybeUninit::uninit()), staged: Cell::new(MaybeUninit::uninit()) }
    }
}

/// The operations a commit or an abort applies to a copy of any type.
///
/// # Safety
///
/// Every method is called only by the thread whose log holds the copy, with the copy's
/// state as each method states.
pub(crate) trait Logged {
    /// The address of the original object.
    fn original(&self) -> *const ();
    /// Clones the value into the staging area. Requires an initialized value.
    unsafe fn stage(&self);
    /// Swaps the staged value with the original's. Requires a staged value and that no
    /// section can read the original (the quiescence period is over, and the lock is held).
    unsafe fn write_back(&self);
    /// Clears the original's copy pointer.
    unsafe fn unlock(&self);
    /// Frees the original through `object`, the pointer `Section::alloc` returned for it (a
    /// pointer with the allocation's provenance); it is unreachable for every section that
    /// has not ended.
    unsafe fn free_original(&self, object: NonNull<()>);
    /// Drops the parts that are initialized.
    unsafe fn drop_parts(&self, value: bool, staged: bool);
}

impl<T: Value> Logged for CopyOf<T> {
    fn original(&self) -> *const () {
        self.original.cast()
    }

    unsafe fn stage(&self) {
        // SAFETY: the caller guarantees an initialized value; readers only read it too.
        let v = self.value.with(|p| unsafe { (*p).assume_init_ref().clone() });
        // SAFETY: only the owner touches `staged`.
        self.staged.with_mut(|p| unsafe { (*p).write(v) });
    }

    unsafe fn write_back(&self) {
        // SAFETY: the original outlives its lock (it is freed only after its unlock); no
        // section reads it now (caller); `staged` is initialized (caller).
        let original = unsafe { &*self.original };
        self.staged.with_mut(|s| {
            original.value.with_mut(|o| {
                // SAFETY: see above; both pointers are valid, aligned and distinct.
                unsafe { ptr::swap(o, (*s).as_mut_ptr()) }
            })
        });
    }

    unsafe fn unlock(&self) {
        // SAFETY: the original outlives its lock (caller).
        let original = unsafe { &*self.original };
        debug_assert!(
            ptr::eq(original.copy.load(Ordering::Relaxed), self),
            "unlocking an object locked by another copy"
        );
        original.copy.store(ptr::null_mut(), Ordering::Release);
    }

    unsafe fn free_original(&self, object: NonNull<()>) {
        debug_assert!(ptr::eq(object.as_ptr().cast_const(), self.original()), "freeing another object");
        // SAFETY: allocated as a `Box` by `Section::alloc`, `object` is that box's pointer,
        // and the object is unreachable (caller).
        drop(unsafe { Box::from_raw(object.as_ptr().cast::<RluObject<T>>()) });
    }

    unsafe fn drop_parts(&self, value: bool, staged: bool) {
        if value {
            // SAFETY: initialized (caller); no reader can still read it (caller).
            self.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
        if staged {
            // SAFETY: initialized (caller); the owner's alone.
            self.staged.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

/// One copy in a write log, with what is initialized in it.
pub(crate) struct Entry {
    pub(crate) copy: NonNull<dyn Logged>,
    /// The copy's value was cloned from the original.
    pub(crate) value: bool,
    /// The staging area holds a value (the new one before the write-back, the old one after).
    pub(crate) staged: bool,
    /// The commit frees the original through this pointer
    /// ([`Section::free`](crate::Section::free)).
    pub(crate) free: Option<NonNull<()>>,
}

impl Entry {
    /// An entry for a freshly locked copy (nothing initialized yet).
    pub(crate) fn new<T: Value>(copy: *mut CopyOf<T>) -> Self {
        let copy: *mut dyn Logged = copy;
        // SAFETY: `copy` comes from `Box::into_raw`.
        Self { copy: unsafe { NonNull::new_unchecked(copy) }, value: false, staged: false, free: None }
    }

    pub(crate) fn logged(&self) -> &dyn Logged {
        // SAFETY: the log owns the copy until `destroy`.
        unsafe { self.copy.as_ref() }
    }

    /// Drops what the copy holds and frees it.
    ///
    /// # Safety
    /// No section can still read the copy: the quiescence period that followed its unlock
    /// is over, or it was never readable (its value was never stolen: the commit never
    /// published a write clock for it).
    pub(crate) unsafe fn destroy(self) {
        // SAFETY: caller; the box was leaked by `Section::lock`.
        unsafe {
            self.copy.as_ref().drop_parts(self.value, self.staged);
            drop(Box::from_raw(self.copy.as_ptr()));
        }
    }
}

/// An object allocated in a write section: freed if the section aborts (nothing can reach
/// it then), handed over to the structure if it commits.
pub(crate) struct Allocated {
    ptr: *mut (),
    drop: unsafe fn(*mut ()),
}

impl Allocated {
    pub(crate) fn new<T: Value>(object: *mut RluObject<T>) -> Self {
        /// Frees a `Box<RluObject<T>>`.
        unsafe fn drop_box<T>(p: *mut ()) {
            // SAFETY: `p` came from `Box::into_raw` of a `Box<RluObject<T>>` (caller).
            drop(unsafe { Box::from_raw(p.cast::<RluObject<T>>()) });
        }
        Self { ptr: object.cast(), drop: drop_box::<T> }
    }

    /// Frees the object.
    ///
    /// # Safety
    /// Nothing can reach it: the section that allocated it aborted.
    pub(crate) unsafe fn free(self) {
        // SAFETY: caller.
        unsafe { (self.drop)(self.ptr) }
    }
}
