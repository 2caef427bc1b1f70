//! A section: what a thread sees and writes between entering and leaving RLU (003 Figure 7
//! `rlu_dereference`, `rlu_try_lock`, `rlu_free`).

use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use ordo::{Clock, TimeOrder};

use crate::domain::{IDLE, PENDING, Rlu, Slot};
use crate::handle::Local;
use crate::object::{Allocated, CopyOf, Entry, Link, RluObject, Value};
use crate::sync::{Ordering, ReadGuard};

/// An object a write section wanted to lock is locked by another writer: the section is
/// aborted and run again ([`Handle::write`](crate::Handle::write)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict;

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an RLU object is locked by another writer")
    }
}

impl std::error::Error for Conflict {}

/// One section of one thread, from its entry to its exit. Read sections get `&Section`
/// ([`get`](Section::get) and [`deref`](Section::deref)); write sections get
/// `&mut Section`, which also [`lock`](Section::lock)s, [`alloc`](Section::alloc)ates and
/// [`free`](Section::free)s.
///
/// `'s` is the section's lifetime: object references from [`Section::deref`] live that
/// long, and cannot leave the closure that runs the section.
pub struct Section<'s, C: Clock> {
    rlu: &'s Rlu<C>,
    local: &'s mut Local,
    open: bool,
    /// Under loom, the reads the section made, registered until it ends.
    #[cfg(loom)]
    reads: std::cell::RefCell<Vec<ReadGuard>>,
    _invariant: PhantomData<fn(&'s ()) -> &'s ()>,
}

impl<'s, C: Clock> Section<'s, C> {
    /// Enters a section.
    pub(crate) fn open(rlu: &'s Rlu<C>, local: &'s mut Local) -> Self {
        rlu.enter(local);
        Self {
            rlu,
            local,
            open: true,
            #[cfg(loom)]
            reads: std::cell::RefCell::new(Vec::new()),
            _invariant: PhantomData,
        }
    }

    /// Leaves the section (its writes, if any, are then committed by the handle).
    pub(crate) fn close(&mut self) {
        #[cfg(loom)]
        self.reads.get_mut().clear();
        self.rlu.exit(self.local);
        self.open = false;
    }

    /// Leaves the section, giving up its writes.
    pub(crate) fn abort(&mut self) {
        self.close();
        self.rlu.abort(self.local);
    }

    /// `object`'s value as this section sees it (003 Figure 7 `rlu_dereference`): this
    /// thread's own copy if it locked the object, the copy of a writer whose commit stamp is
    /// certainly before the section's start (it *steals* the copy), otherwise the object's
    /// value.
    ///
    /// # Panics
    /// If `object` belongs to another domain.
    pub fn get<'a, T: Value>(&'a self, object: &'a RluObject<T>) -> &'a T {
        self.check_domain(object.domain);
        let copy = object.copy.load(Ordering::Acquire);
        if !copy.is_null() {
            // SAFETY: a copy found in an object of this domain stays allocated until a
            // quiescence period of this domain that begins after its unlock, and that period
            // waits for this section; `owner` is immutable once published (Acquire above).
            let owner = unsafe { ptr::addr_of!((*copy).owner).read() };
            if owner == self.local.slot {
                // SAFETY: this section's own copy (only this thread writes it, and `lock`
                // returns only once its value is initialized); no other reference to it is
                // live, since `lock` borrows the section mutably.
                return unsafe { (*copy).value.with(|p| (*p).assume_init_ref()) };
            }
            if self.steals_from(&self.rlu.slots[owner]) {
                // SAFETY: as above for the allocation; the value was written before the
                // writer published its stamp (read above, SeqCst) and is never written again
                // while the copy is readable.
                let (value, guard) = unsafe { (*copy).value.read() };
                self.keep(guard);
                // SAFETY: initialized (see above); valid for the section.
                return unsafe { (*value).assume_init_ref() };
            }
        }
        let (value, guard) = object.value.read();
        self.keep(guard);
        // SAFETY: a writer writes the value back only after every section that could read
        // it without stealing (this one) has ended.
        unsafe { &*value }
    }

    /// Locks `object` for this write section and returns its copy to modify (003 Figure 7
    /// `rlu_try_lock`): the first lock copies the value into this thread's write log; the
    /// commit writes the copy back. Other sections see the new value only after the commit.
    ///
    /// # Errors
    /// [`Conflict`] if another writer holds the object's lock; return it from the write
    /// section (with `?`) to retry the section.
    ///
    /// # Panics
    /// If `object` belongs to another domain.
    pub fn lock<'a, T: Value>(&'a mut self, object: &'a RluObject<T>) -> Result<&'a mut T, Conflict> {
        self.check_domain(object.domain);
        let me = self.local.slot;
        let current = object.copy.load(Ordering::Acquire);
        let copy = if current.is_null() {
            let fresh = Box::into_raw(Box::new(CopyOf::new(me, object)));
            if object.copy.compare_exchange(ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire).is_err() {
                // SAFETY: never published.
                drop(unsafe { Box::from_raw(fresh) });
                return Err(Conflict);
            }
            self.local.log.push(Entry::new(fresh));
            let undo = UndoLockOnUnwind { local: &mut *self.local, armed: true };
            // The lock is held: no writer writes the value back now, and this section's
            // snapshot already sees its latest commit (crate docs, "Why a writer may copy").
            let value = object.value.with(|p| {
                // SAFETY: see above.
                unsafe { (*p).clone() }
            });
            // SAFETY: only this thread writes the copy; readers read its value only after
            // this thread's commit publishes a stamp.
            unsafe { (*fresh).value.with_mut(|p| (*p).write(value)) };
            undo.disarm();
            if let Some(entry) = self.local.log.last_mut() {
                entry.value = true;
            }
            fresh
        } else {
            // SAFETY: as in `get`.
            let owner = unsafe { ptr::addr_of!((*current).owner).read() };
            if owner != me {
                return Err(Conflict);
            }
            current
        };
        // SAFETY: this section's own copy, initialized; the returned borrow holds the section
        // mutably, so no other reference to it is live.
        Ok(unsafe { (*copy).value.with_mut(|p| (*p).assume_init_mut()) })
    }

    /// A new object holding `value`, for this write section to link into the structure. If
    /// the section aborts, the object is freed; if it commits, the structure owns it (free
    /// it later with [`Section::free`]).
    pub fn alloc<T: Value>(&mut self, value: T) -> Link<T> {
        let raw = Box::into_raw(Box::new(self.rlu.object(value)));
        self.local.allocated.push(Allocated::new(raw));
        Link::from_raw(raw)
    }

    /// The object `link` points to, or `None` for a null link.
    ///
    /// # Safety
    /// `link` is null or was read in this section from an object value (through
    /// [`Section::get`] or [`Section::lock`]) of this domain, or allocated in it: the
    /// structure frees an object only with [`Section::free`], after unlinking it.
    pub unsafe fn deref<T>(&self, link: Link<T>) -> Option<&'s RluObject<T>> {
        // SAFETY: caller; an unlinked object is freed only after every section that could
        // have read a link to it has ended.
        unsafe { link.as_ptr().as_ref() }
    }

    /// Frees the object `link` points to once this write section has committed and every
    /// section that might still read it has ended (003 Figure 7's deferred free). Locks the
    /// object first, so that no other writer frees or modifies it meanwhile. A null link is
    /// ignored.
    ///
    /// # Errors
    /// [`Conflict`] if another writer holds its lock.
    ///
    /// # Safety
    /// The object was allocated with [`Section::alloc`] (`link` is the link it returned, or a
    /// copy of it), and this section's writes unlink it: no section that starts after this
    /// commit can reach it.
    pub unsafe fn free<T: Value>(&mut self, link: Link<T>) -> Result<(), Conflict> {
        let Some(object) = NonNull::new(link.as_ptr()) else { return Ok(()) };
        // SAFETY: the caller's contract (a live object of this domain, for this section).
        self.lock(unsafe { object.as_ref() })?;
        let original = object.as_ptr().cast_const().cast::<()>();
        if let Some(entry) = self.local.log.iter_mut().rev().find(|e| e.logged().original() == original) {
            entry.free = Some(object.cast());
        }
        Ok(())
    }

    /// The section's start time on the domain's clock.
    pub fn start(&self) -> u64 {
        self.local.local_clock
    }

    /// Whether this section reads `writer`'s copies: its commit stamp is published and
    /// certainly before this section's start (`Uncertain` is not).
    fn steals_from(&self, writer: &Slot) -> bool {
        let mut stamp = writer.write_clock.load(Ordering::SeqCst);
        if stamp == PENDING {
            stamp = self.take_stamp_for(writer);
        }
        stamp != IDLE && self.rlu.clock.cmp_time(self.local.local_clock, stamp) == TimeOrder::After
    }

    /// The stamp of a writer found between the start of its commit and its stamp: this
    /// thread reads the clock (after having seen the pending state) and installs the
    /// reading, unless the writer or another reader installed one first.
    fn take_stamp_for(&self, writer: &Slot) -> u64 {
        let reading = self.rlu.clock.now();
        match writer.write_clock.compare_exchange(PENDING, reading, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {
                self.local.helped.set(self.local.helped.get() + 1);
                reading
            }
            Err(installed) => installed,
        }
    }

    fn check_domain(&self, domain: u64) {
        if domain != self.rlu.id {
            wrong_domain();
        }
    }

    /// Under loom, keeps a read registered until the section ends.
    #[inline(always)]
    fn keep(&self, guard: ReadGuard) {
        #[cfg(loom)]
        self.reads.borrow_mut().push(guard);
        #[cfg(not(loom))]
        let () = guard;
    }
}

#[cold]
#[inline(never)]
fn wrong_domain() -> ! {
    panic!("an RluObject was used in a section of another RLU domain than the one that made it")
}

impl<C: Clock> Drop for Section<'_, C> {
    /// A section left by a panic: its writes are given up and its locks released.
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        if self.local.log.is_empty() && self.local.allocated.is_empty() {
            self.close();
        } else {
            self.abort();
        }
    }
}

impl<C: Clock> fmt::Debug for Section<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Section")
            .field("start", &self.local.local_clock)
            .field("locked", &self.local.log.len())
            .finish_non_exhaustive()
    }
}

/// Releases the lock just taken if copying the value panics (`T::clone`).
struct UndoLockOnUnwind<'a> {
    local: &'a mut Local,
    armed: bool,
}

impl UndoLockOnUnwind<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for UndoLockOnUnwind<'_> {
    fn drop(&mut self) {
        if self.armed
            && let Some(entry) = self.local.log.pop()
        {
            // SAFETY: the object is locked by this copy, whose value is not initialized;
            // readers may hold the copy's address, so it waits for a quiescence period.
            unsafe { entry.logged().unlock() };
            self.local.retired.push(entry);
        }
    }
}
