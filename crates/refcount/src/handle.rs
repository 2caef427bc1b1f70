//! [`Rc`] and [`Weak`]: `Arc`-shaped handles whose counts live in Refcache (see [`Rc`]).

use crate::domain::{Domain, Inner};
use crate::refcache::object::{Header, ObjectState};
use oplog_percore::primitive::{AtomicUsize, Ordering, fence};
use std::borrow::Borrow;
use std::cmp::Ordering as CmpOrdering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

/// The allocation behind [`Rc`] and [`Weak`]. `repr(C)` with the header first: a pointer to
/// the allocation is a pointer to its [`Header`].
#[repr(C)]
struct RcBox<T> {
    header: Header,
    /// Weak handles, plus one held by all the strong handles together until the value is
    /// dropped (as in `Arc`); the allocation goes when it reaches zero.
    weak: AtomicUsize,
    domain: Arc<Inner>,
    value: ManuallyDrop<T>,
}

/// Above this many weak handles the process aborts, as `Arc` does.
const MAX_WEAK: usize = isize::MAX as usize;

/// A thread-safe reference-counted pointer whose clone and drop touch only core-local state.
///
/// Like [`std::sync::Arc`], but cloning and dropping only add ±1 to a delta in the calling
/// core's cache: no write to memory another core uses (002 §8.1, [`crate::refcache`]). Every
/// `Rc` lives in a [`Domain`]; [`Rc::new`] uses [`Domain::global`].
///
/// The price is that nobody knows the count: the value is dropped by a *review*, one to two
/// review periods after its last handle went (10–20 ms with the default period), on the thread
/// that reviews, perhaps after the scope that made it ended: hence `T: Send + 'static`.
///
/// ```compile_fail
/// // A `std::rc::Rc` is not `Send`: its destructor must not run on the reviewing thread.
/// let _ = oplog_refcount::Rc::new(std::rc::Rc::new(1));
/// ```
///
/// And hence what `Arc` has and `Rc` has not:
/// `strong_count`, `get_mut`, `try_unwrap`, `make_mut` and `into_inner` all need the exact
/// count now, which is the reconciliation Refcache defers. [`Domain::collect`] frees
/// everything whose handles are gone, at once.
///
/// [`Rc::downgrade`] gives a [`Weak`], Refcache's weak reference (002 §8.1.2): its
/// [`upgrade`](Weak::upgrade) is `tryget`, which succeeds until a review has freed the value,
/// even after the count reached zero (it revives the object). Creating and dropping `Weak`s
/// updates a shared count in the allocation (as `Arc`'s do), so they are not conflict-free;
/// upgrades are, unless they revive a dying object.
///
/// Memory: each allocation holds the value and a 32-byte header (the Refcache word, the free
/// function, the weak count, the domain); each core of the domain holds a fixed delta cache
/// ([`Domain::footprint`]).
///
/// ```
/// use oplog_refcount::{Config, Domain, Rc};
///
/// let domain = Domain::new(Config::new()).unwrap();
/// let shared = Rc::new_in(vec![1, 2, 3], &domain);
/// let weak = Rc::downgrade(&shared);
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         let mine = shared.clone(); // core-local: no shared write
///         s.spawn(move || assert_eq!(mine.len(), 3));
///     }
/// });
/// drop(shared);
/// // The vector is freed by the domain's background review within a few periods, or now:
/// domain.collect();
/// assert!(weak.upgrade().is_none());
/// ```
pub struct Rc<T> {
    ptr: NonNull<RcBox<T>>,
    _owns: PhantomData<RcBox<T>>,
}

/// A weak reference to an [`Rc`]'s value: does not keep it alive, and can revive it while a
/// review has not yet freed it ([`Weak::upgrade`], Refcache's `tryget`).
///
/// ```
/// use oplog_refcount::{Config, Domain, Rc};
///
/// let domain = Domain::new(Config::new().review_period(None)).unwrap();
/// let strong = Rc::new_in(String::from("cached"), &domain);
/// let weak = Rc::downgrade(&strong);
/// drop(strong);
/// // The count is zero, but no review has freed the value: it can be revived.
/// let revived = weak.upgrade().expect("not freed yet");
/// drop(revived);
/// domain.collect();
/// assert!(weak.upgrade().is_none());
/// ```
pub struct Weak<T> {
    /// `None` for [`Weak::new`].
    ptr: Option<NonNull<RcBox<T>>>,
    _owns: PhantomData<RcBox<T>>,
}

// SAFETY: as `Arc<T>`: handles share `&T` between threads (T: Sync) and the value is dropped
// on whichever thread reviews (T: Send); the rest of the allocation is atomics and the domain.
unsafe impl<T: Send + Sync> Send for Rc<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Rc<T> {}
// SAFETY: as above; a weak handle can become a strong one.
unsafe impl<T: Send + Sync> Send for Weak<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Weak<T> {}

/// Construction requires `T: Send + 'static`: the value is dropped later, by whichever thread
/// reviews the domain, possibly after the creating scope has ended.
impl<T: Send + 'static> Rc<T> {
    /// Puts `value` in a new allocation in the process-wide [`Domain::global`].
    pub fn new(value: T) -> Rc<T> {
        Self::new_in(value, Domain::global())
    }

    /// Puts `value` in a new allocation in `domain`. The new handle is counted in the
    /// object's global count, so creating touches no core cache.
    pub fn new_in(value: T, domain: &Domain) -> Rc<T> {
        let boxed = Box::new(RcBox {
            header: Header::new(1, free::<T>),
            weak: AtomicUsize::new(1, "RcBox.weak"),
            domain: domain.inner().clone(),
            value: ManuallyDrop::new(value),
        });
        Rc { ptr: NonNull::from(Box::leak(boxed)), _owns: PhantomData }
    }
}

impl<T> Rc<T> {
    /// A new weak handle to this value. Updates the allocation's shared weak count.
    pub fn downgrade(this: &Self) -> Weak<T> {
        // SAFETY: a strong handle keeps the allocation alive.
        unsafe { RcBox::inc_weak(this.ptr) };
        Weak { ptr: Some(this.ptr), _owns: PhantomData }
    }

    /// Whether two handles point to the same allocation (like [`std::sync::Arc::ptr_eq`]).
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        this.ptr == other.ptr
    }

    /// A pointer to the value, valid while a handle exists.
    pub fn as_ptr(this: &Self) -> *const T {
        // SAFETY: the allocation is live while `this` exists; no reference is created.
        unsafe { &raw const (*this.ptr.as_ptr()).value }.cast::<T>()
    }

    /// The object's Refcache fields right now (its global count is not its true count: see
    /// [`crate::refcache`]). For tests and diagnostics.
    pub fn state(this: &Self) -> ObjectState {
        // SAFETY: a strong handle keeps the allocation alive.
        unsafe { RcBox::header(this.ptr) }.snapshot()
    }

    /// The allocation as the engine's object.
    #[inline(always)]
    pub(crate) fn header_ptr(this: &Self) -> NonNull<Header> {
        this.ptr.cast()
    }

    /// The engine of this handle's domain.
    #[inline(always)]
    pub(crate) fn inner(this: &Self) -> &Inner {
        // SAFETY: a strong handle keeps the allocation alive.
        unsafe { RcBox::domain(this.ptr) }
    }

    /// Gives up this handle without counting its release (the caller counted it elsewhere).
    pub(crate) fn forget(this: Self) {
        std::mem::forget(this);
    }

    /// A handle for a reference that has just been counted (by the caller).
    ///
    /// # Safety
    /// One increment for the new handle has been counted for `ptr`'s live object.
    pub(crate) unsafe fn counted(ptr: NonNull<Header>) -> Self {
        Rc { ptr: ptr.cast(), _owns: PhantomData }
    }
}

/// Field accessors through a raw pointer. A weak handle never makes a reference to the whole
/// allocation: a review may be dropping the value in place at the same time.
impl<T> RcBox<T> {
    /// # Safety
    /// `ptr` is a live allocation for `'a`.
    unsafe fn header<'a>(ptr: NonNull<Self>) -> &'a Header {
        // SAFETY: the caller guarantees the allocation; only the header field is referenced.
        unsafe { &(*ptr.as_ptr()).header }
    }

    /// # Safety
    /// `ptr` is a live allocation for `'a`.
    unsafe fn domain<'a>(ptr: NonNull<Self>) -> &'a Inner {
        // SAFETY: the caller guarantees the allocation; only the domain field is referenced.
        unsafe { &(*ptr.as_ptr()).domain }
    }

    /// Counts a new weak handle.
    ///
    /// # Safety
    /// `ptr` is a live allocation.
    unsafe fn inc_weak(ptr: NonNull<Self>) {
        // SAFETY: the caller guarantees the allocation; only the weak count is referenced.
        let weak = unsafe { &(*ptr.as_ptr()).weak };
        if weak.fetch_add(1, Ordering::Relaxed) >= MAX_WEAK {
            std::process::abort();
        }
    }
}

/// Releases one share of the allocation (a weak handle's, or the strong handles' after the
/// value was dropped); the last one deallocates.
///
/// # Safety
/// `ptr` is a live allocation and the caller owns one share of it, which it gives up.
unsafe fn release_weak<T>(ptr: NonNull<RcBox<T>>) {
    // SAFETY: the caller's share keeps the allocation alive for this access.
    let weak = unsafe { &(*ptr.as_ptr()).weak };
    if weak.fetch_sub(1, Ordering::Release) != 1 {
        return;
    }
    // Acquire: every use of the allocation by the other shares happened before this.
    fence(Ordering::Acquire);
    // SAFETY: that was the last share: nothing else names the allocation, which `Rc::new_in`
    // made with `Box`. The value was already dropped (`ManuallyDrop` keeps it from being
    // dropped twice); the header, weak count and domain handle are dropped here.
    drop(unsafe { Box::from_raw(ptr.as_ptr()) });
}

/// The [`Header`]'s free function for `RcBox<T>`: drops the value, then releases the strong
/// handles' share of the allocation.
///
/// # Safety
/// `header` is the header of a live `RcBox<T>` that a review just found at a true zero and
/// marked freed, so no handle can reach the value any more.
unsafe fn free<T>(header: NonNull<Header>) {
    let ptr = header.cast::<RcBox<T>>();
    /// Releases the share even if the destructor panics.
    struct Release<T>(NonNull<RcBox<T>>);
    impl<T> Drop for Release<T> {
        fn drop(&mut self) {
            // SAFETY: the strong handles' share, which `free` owns now.
            unsafe { release_weak(self.0) };
        }
    }
    let _release = Release(ptr);
    // SAFETY: the value is dropped once: the review that marked the object freed is its only
    // owner, and nothing reads it afterwards.
    unsafe { ManuallyDrop::drop(&mut (*ptr.as_ptr()).value) };
}

impl<T> Clone for Rc<T> {
    /// A new handle: +1 in the calling core's delta cache.
    #[inline(always)]
    fn clone(&self) -> Rc<T> {
        Rc::inner(self).refcache.update(Rc::header_ptr(self), 1);
        Rc { ptr: self.ptr, _owns: PhantomData }
    }
}

impl<T> Drop for Rc<T> {
    /// −1 in the calling core's delta cache. The value is dropped later, by the review that
    /// finds its count at a true zero.
    #[inline(always)]
    fn drop(&mut self) {
        Rc::inner(self).refcache.update(Rc::header_ptr(self), -1);
    }
}

impl<T> Deref for Rc<T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: a strong handle keeps the value alive and nothing mutates it.
        unsafe { &(*self.ptr.as_ptr()).value }
    }
}

impl<T> AsRef<T> for Rc<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T> Borrow<T> for Rc<T> {
    fn borrow(&self) -> &T {
        self
    }
}

impl<T: Default + Send + 'static> Default for Rc<T> {
    /// `T::default()` in the process-wide domain.
    fn default() -> Rc<T> {
        Rc::new(T::default())
    }
}

impl<T: Send + 'static> From<T> for Rc<T> {
    /// `value` in the process-wide domain.
    fn from(value: T) -> Rc<T> {
        Rc::new(value)
    }
}

impl<T: fmt::Debug> fmt::Debug for Rc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: fmt::Display> fmt::Display for Rc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T> fmt::Pointer for Rc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&Rc::as_ptr(self), f)
    }
}

impl<T: PartialEq> PartialEq for Rc<T> {
    fn eq(&self, other: &Rc<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Rc<T> {}

impl<T: PartialOrd> PartialOrd for Rc<T> {
    fn partial_cmp(&self, other: &Rc<T>) -> Option<CmpOrdering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: Ord> Ord for Rc<T> {
    fn cmp(&self, other: &Rc<T>) -> CmpOrdering {
        (**self).cmp(&**other)
    }
}

impl<T: Hash> Hash for Rc<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl<T> Unpin for Rc<T> {}

impl<T> Weak<T> {
    /// A weak handle to nothing: [`Weak::upgrade`] always returns `None`.
    pub const fn new() -> Weak<T> {
        Weak { ptr: None, _owns: PhantomData }
    }

    /// Refcache's `tryget` (002 §8.1.2): a strong handle if the value has not been freed, even
    /// if its count reached zero (the object is then revived and a pending review will not
    /// free it). Counted in the calling core's cache; a shared write only when reviving.
    pub fn upgrade(&self) -> Option<Rc<T>> {
        let ptr = self.ptr?;
        // SAFETY: this weak handle keeps the allocation (and so the domain) alive.
        let domain = unsafe { RcBox::domain(ptr) };
        if !domain.refcache.tryget(ptr.cast()) {
            return None;
        }
        // SAFETY: `tryget` counted one increment for the new handle.
        Some(unsafe { Rc::counted(ptr.cast()) })
    }

    /// Whether two weak handles point to the same allocation (two [`Weak::new`]s are equal).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }

    /// Whether a review has freed the value (false for [`Weak::new`], which never had one).
    pub fn is_freed(&self) -> bool {
        self.ptr.is_some_and(|p| {
            // SAFETY: this weak handle keeps the allocation alive.
            unsafe { RcBox::header(p) }.is_freed()
        })
    }

    /// The object's Refcache fields right now; `None` for [`Weak::new`].
    pub fn state(&self) -> Option<ObjectState> {
        // SAFETY: this weak handle keeps the allocation alive.
        self.ptr.map(|p| unsafe { RcBox::header(p) }.snapshot())
    }

    /// The allocation as the engine's object, with its domain's engine.
    pub(crate) fn target(&self) -> Option<(NonNull<Header>, &Inner)> {
        let p = self.ptr?;
        // SAFETY: this weak handle keeps the allocation alive.
        Some((p.cast(), unsafe { RcBox::domain(p) }))
    }
}

impl<T> Clone for Weak<T> {
    fn clone(&self) -> Weak<T> {
        if let Some(p) = self.ptr {
            // SAFETY: this weak handle keeps the allocation alive.
            unsafe { RcBox::inc_weak(p) };
        }
        Weak { ptr: self.ptr, _owns: PhantomData }
    }
}

impl<T> Drop for Weak<T> {
    fn drop(&mut self) {
        if let Some(p) = self.ptr {
            // SAFETY: this handle owns one share of the allocation, given up here.
            unsafe { release_weak(p) };
        }
    }
}

impl<T> Default for Weak<T> {
    fn default() -> Weak<T> {
        Weak::new()
    }
}

impl<T> fmt::Debug for Weak<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(Weak)")
    }
}
