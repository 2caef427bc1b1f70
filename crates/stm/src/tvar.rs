//! Transactional variables: a value behind a pointer, guarded by a versioned write-lock
//! (TL2's ownership record, "orec", 003 §4.3 footnote 5) of the variable's own.
//!
//! The orec is one word: `version << 1 | locked`. Unlocked, it holds the commit stamp of
//! the last transaction that wrote the variable; a committing transaction sets the low bit
//! (keeping the version, so that a transaction that locked a variable it also read can
//! still validate it), installs the new value, and stores its commit stamp unlocked.
//!
//! The value is immutable once published: a commit swaps in a new box and retires the old
//! one to the epoch collector ([`crate::sync`]), so a reader never sees a value change
//! under it, only a different pointer.

use std::fmt;
use std::marker::PhantomData;

use crate::clock::TxClock;
use crate::stm::Stm;
use crate::sync::{AtomicPtr, AtomicU64, Ordering};

/// The lock bit of an orec word.
pub(crate) const LOCKED: u64 = 1;

/// The version an orec word holds (locked or not).
#[inline]
pub(crate) fn version(word: u64) -> u64 {
    word >> 1
}

/// Whether an orec word is locked.
#[inline]
pub(crate) fn is_locked(word: u64) -> bool {
    word & LOCKED != 0
}

/// The unlocked orec word of `version`.
#[inline]
pub(crate) fn unlocked(version: u64) -> u64 {
    debug_assert!(version >> 63 == 0, "version {version} does not fit an orec");
    version << 1
}

/// A transactional variable: read and written inside [`Stm::atomically`].
///
/// A `TVar` belongs to the [`Stm`] it was created with (its versions are that STM's clock's
/// timestamps); a transaction of another `Stm` that touches it panics. Values are cloned
/// out on every read and boxed on every commit that writes them, so `T` is typically small
/// or cheap to clone (an integer, an `Arc`, a small struct).
pub struct TVar<T> {
    pub(crate) orec: AtomicU64,
    value: AtomicPtr<T>,
    stm: u64,
    /// The variable owns the current value's box.
    _owns: PhantomData<Box<T>>,
}

// SAFETY: sharing a `TVar` lets other threads clone the value (`T: Sync`) and replace it,
// so that the old value is dropped by whichever thread reclaims it (`T: Send`).
unsafe impl<T: Send + Sync> Sync for TVar<T> {}
// SAFETY: moving a `TVar` moves the value it owns.
unsafe impl<T: Send> Send for TVar<T> {}

impl<T: Send + Sync + 'static> TVar<T> {
    /// A variable of `stm` holding `value`, at version 0 (before every transaction).
    pub fn new<C: TxClock>(stm: &Stm<C>, value: T) -> Self {
        Self {
            orec: AtomicU64::new(unlocked(0)),
            value: AtomicPtr::new(Box::into_raw(Box::new(value))),
            stm: stm.id(),
            _owns: PhantomData,
        }
    }

    /// The value, through exclusive access (no transaction can be using the variable).
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: the pointer is always a live box the variable owns; `&mut self` excludes
        // every transaction (they borrow the variable) and so every other reference to it.
        unsafe { &mut *self.value.load(Ordering::Relaxed) }
    }

    /// The value, consuming the variable.
    pub fn into_inner(self) -> T {
        let ptr = self.value.load(Ordering::Relaxed);
        std::mem::forget(self);
        // SAFETY: the variable owned this box and is forgotten, so it is freed only here.
        *unsafe { Box::from_raw(ptr) }
    }

    /// The id of the [`Stm`] the variable belongs to.
    #[inline]
    pub(crate) fn stm(&self) -> u64 {
        self.stm
    }

    /// The current value pointer (the reader holds a [`Guard`](crate::sync::Guard)).
    #[inline]
    pub(crate) fn load(&self) -> *mut T {
        self.value.load(Ordering::Acquire)
    }

    /// Installs `new` (a box from `Box::into_raw`) and returns the old pointer, for the
    /// committer to retire. Only under the variable's orec lock.
    #[inline]
    pub(crate) fn swap(&self, new: *mut T) -> *mut T {
        self.value.swap(new, Ordering::AcqRel)
    }
}

impl<T> Drop for TVar<T> {
    fn drop(&mut self) {
        // SAFETY: the current box is owned by the variable and no transaction borrows it
        // any more (`&mut self`); replaced boxes were retired separately.
        drop(unsafe { Box::from_raw(self.value.load(Ordering::Relaxed)) });
    }
}

impl<T> fmt::Debug for TVar<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = self.orec.load(Ordering::Relaxed);
        f.debug_struct("TVar")
            .field("version", &version(word))
            .field("locked", &is_locked(word))
            .finish_non_exhaustive()
    }
}
