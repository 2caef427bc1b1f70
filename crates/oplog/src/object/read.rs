//! Reads and synchronize guards (the `object` module docs, "Concurrent reads" and
//! "Synchronize"; 000 §5.1 `Object::synchronize`): the concurrent read of an object with
//! nothing logged, through the domain's reader table (`crate::readers`), and its exclusion
//! by a lock holder; the read and the synchronize through the lock; the [`Synced`] guard.

use super::*;

/// A read on the concurrent path: the calling thread's entry in the domain's reader table
/// (see `crate::readers`), cleared on drop.
pub(super) struct Reader<'a, L: LogKind> {
    cell: &'a AtomicUsize,
    /// `Some` from validation until drop; dropped before the cell is cleared so loom sees
    /// the access end inside the entry.
    state: Option<ConstPtr<Stored<L>>>,
    /// Taken before validation ([`DirectLog::lease`]).
    pub(super) lease: Lease<L>,
    _holding: reentry::Holding,
}

impl<L: LogKind> Reader<'_, L> {
    /// The instance.
    ///
    /// # Safety
    /// The entry must have been validated ([`Obj::enter_reader`] returned it).
    unsafe fn state(&self) -> &L::State {
        // SAFETY: `state` is Some until drop; a validated entry excludes every write
        // access (module docs, "Concurrent reads").
        L::Direct::view(unsafe { self.state.as_ref().unwrap_unchecked().deref() }, &self.lease)
    }

    /// Runs `f` on the instance, then leaves the reader table.
    ///
    /// # Safety
    /// As [`Reader::state`].
    #[inline(always)]
    pub(super) unsafe fn read<R>(self, f: impl FnOnce(&L::State) -> R) -> R {
        // SAFETY: the caller's guarantee.
        let r = f(unsafe { self.state() });
        drop(self);
        r
    }
}

impl<L: LogKind> Drop for Reader<'_, L> {
    fn drop(&mut self) {
        self.state = None;
        self.cell.store(0, Ordering::Release);
    }
}

/// The up-to-date internal instance of an [`OpLog`], locked until dropped.
///
/// Two words, so that it comes back from [`OpLog::synchronize`] in registers, as a `std`
/// mutex's guard does. A guard of five words was built on the stack and copied on its way
/// out, in 16-byte loads that each waited for the two 8-byte stores they read to reach
/// the cache (a sampling profile put half of the time there): with the lock taken on the
/// fast path, a guard cost 16–17 ns, against 6.5 ns now and 9.5 ns for a mutex's lock and
/// unlock (one thread, 2-core AMD EPYC host, 2026-11-29).
#[must_use = "the guard unlocks the object when dropped: unused, it unlocks at once"]
pub struct Synced<'a, L: LogKind> {
    obj: Obj<'a, L>,
    /// The holder half that the unlock leaves ([`Word::unlock`]'s `want`; the lock bit is
    /// ignored), and in the low half the lock's re-entry record ([`reentry::Holding`]).
    release: u64,
    /// Ended before the unlock (zero-sized but under loom).
    access: GuardAccess<Stored<L>>,
    /// Committed before the unlock (zero-sized but for the counter, whose guard is then
    /// four words: [`DirectLog::Lease`]).
    pub(super) lease: Lease<L>,
}

impl<'a, L: LogKind> Synced<'a, L> {
    /// The guard of `obj`'s lock, which this thread holds with the re-entry record
    /// `holding`, whose unlock leaves the holder bits of `want`, on the instance that
    /// `lease` shows.
    #[inline(always)]
    pub(super) fn new(obj: Obj<'a, L>, want: u64, holding: reentry::Holding, lease: Lease<L>) -> Self {
        Synced {
            obj,
            release: (want & !u64::from(u32::MAX)) | holding.into_raw() as u64,
            access: GuardAccess::start(&obj.get().state),
            lease,
        }
    }
}

impl<L: LogKind> Deref for Synced<'_, L> {
    type Target = L::State;
    fn deref(&self) -> &L::State {
        // SAFETY: the access started on the state when the guard was made, with the object
        // lock held until drop, where the access ends; the object outlives `'a`.
        L::Direct::view(unsafe { self.access.shared(&self.obj.get().state) }, &self.lease)
    }
}

impl<L: LogKind> DerefMut for Synced<'_, L> {
    fn deref_mut(&mut self) -> &mut L::State {
        // SAFETY: as in `deref`.
        L::Direct::view_mut(unsafe { self.access.exclusive(&self.obj.get().state) }, &mut self.lease)
    }
}

impl<L: LogKind> Drop for Synced<'_, L> {
    #[inline]
    fn drop(&mut self) {
        self.access.end();
        self.obj.direct().commit(&self.lease);
        // The guard never sets the bias: a release store.
        self.obj.get().word.unlock(self.release, self.release);
        drop(reentry::Holding::from_raw(self.release as u32 as usize));
    }
}

impl<L: LogKind> fmt::Debug for Synced<'_, L>
where
    L::State: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Synced").field(&**self).finish()
    }
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// Runs `f` on the instance that `lease` shows ([`DirectLog::view`]).
    ///
    /// # Safety
    /// The object lock is held, so no write access to the state is live.
    #[inline(always)]
    unsafe fn view_locked<R>(self, lease: &Lease<L>, f: impl FnOnce(&L::State) -> R) -> R {
        let state = self.get().state.get();
        // SAFETY: the caller's guarantee.
        let r = f(L::Direct::view(unsafe { state.deref() }, lease));
        // Under loom the pointer tracks the access until it is dropped.
        #[allow(clippy::drop_non_drop)]
        drop(state);
        r
    }

    /// A read through the object lock: synchronizes, runs `f`, and lets the following
    /// reads take the concurrent path until the next change (module docs, "Concurrent
    /// reads").
    /// `seen` is the value of the word the caller just loaded. The common case, nothing
    /// logged, is inline (a read of a direct object after an update, say); the rest is
    /// [`Obj::read_synced`].
    #[inline(always)]
    pub(super) fn read_locked<R>(self, f: impl FnOnce(&L::State) -> R, seen: u64) -> R {
        // Nothing logged (module docs, "The object's word"): nothing to apply, and the
        // policy's step and the bias are decided from `seen`. A switch to direct (which
        // gives up slots) takes the general path below.
        if let Some((want, lock, lease)) = self.lock_quiescent(seen, 0) {
            // SAFETY: the object lock is held.
            let r = unsafe { self.view_locked(&lease, f) };
            lock.release(want | if rebias(seen, 0) { BIAS } else { 0 });
            return r;
        }
        self.read_synced(f, seen)
    }

    /// [`OpLog::synchronize`] of an object whose word `seen` shows its lock free and
    /// nothing logged, as [`Obj::read_locked`] reads one: the lock's compare-and-swap,
    /// which also revokes the read bias (the guard gives mutable access), and no gather.
    /// Returns what the guard's unlock leaves (the policy's step at a read), the lock's
    /// re-entry record and the lease on the instance; `None` where the general path is
    /// needed: `seen` shows the lock taken or logs, the step switches the object to direct
    /// (which gives up its slots), or logs arrived before the lock was taken.
    #[inline(always)]
    pub(super) fn synchronize_quiescent(self, seen: u64) -> Option<(u64, reentry::Holding, Lease<L>)> {
        let (want, lock, lease) = self.lock_quiescent(seen, BIAS)?;
        Some((want & !BIAS, lock.keep(), lease))
    }

    /// The lock of an object whose word `seen` shows it free and nothing logged, taken in
    /// one compare-and-swap from `seen` that also clears the holder bits `clear` ([`BIAS`],
    /// for a holder that will change the instance: then the concurrent readers are waited
    /// for, or none), with the holder bits of a read's policy step ([`Obj::read_bits`]);
    /// the fast paths of [`Obj::read_locked`] and [`OpLog::synchronize`]. `None` where the
    /// general path is needed: `seen` shows the lock taken or logs, the step switches the
    /// object to direct (which gives up its slots), or logs arrived before the lock was
    /// taken (the lock is then dropped: it only unlocks). The lease on the instance is
    /// taken before that last check (module docs, "Representations").
    #[inline(always)]
    fn lock_quiescent(self, seen: u64, clear: u64) -> Option<(u64, FastLock<'a>, Lease<L>)> {
        if seen & (LOCK | CORE_BITS | BACKLOG) != 0 {
            return None;
        }
        let want = self.read_bits(seen, Gathered::default())?;
        let lock = FastLock::take(self, seen, clear)?;
        if seen & clear & BIAS != 0 {
            dekker_fence();
            self.wait_for_readers();
        }
        let lease = self.direct().lease();
        // Again under the lock: the log half changes without it.
        quiescent_word(self.get().word.logs(Ordering::SeqCst)).then_some((want, lock, lease))
    }

    /// [`OpLog::synchronize`] on the general path: takes the lock, synchronizes, observes
    /// the read, and excludes the concurrent readers (the guard gives mutable access).
    #[cold]
    #[inline(never)]
    pub(super) fn synchronize_locked(self) -> Synced<'a, L> {
        let mut lock = self.lock("read or synchronize");
        let (gathered, lease) = self.sync_locked();
        self.observe_read(&mut lock, gathered);
        self.exclude_readers();
        let (want, holding) = lock.keep();
        Synced::new(self, want, holding, lease)
    }

    /// [`Obj::read_locked`] when something may be logged, the lock was taken, or the
    /// policy's step switches the object: takes the lock, synchronizes, observes the read.
    #[inline(never)]
    fn read_synced<R>(self, f: impl FnOnce(&L::State) -> R, seen: u64) -> R {
        let mut lock = match self.lock_for_read(seen) {
            Ok(lock) => lock,
            // SAFETY: `enter_reader` validated the entry.
            Err(reader) => return unsafe { reader.read(f) },
        };
        let (gathered, lease) = self.sync_locked();
        let before = self.get().word.holders(Ordering::Relaxed);
        self.observe_read(&mut lock, gathered);
        // SAFETY: the object lock is held.
        let r = unsafe { self.view_locked(&lease, f) };
        // Set with the unlock, in the same instruction.
        lock.bias = rebias(before, gathered.ops);
        drop(lock);
        r
    }

    /// Takes the object lock for a read that loaded the word `seen`, or, while waiting for
    /// it, enters the reader table as soon as the holder lets reads take the concurrent
    /// path again (module docs, "Concurrent reads"): `Err` then holds the validated entry.
    /// After an update revokes the bias, the reads that arrive while the lock is taken no
    /// longer queue for it one after another: the one that sets the bias again (its unlock)
    /// releases all of them at once.
    fn lock_for_read(self, seen: u64) -> Result<ObjectLock<'a, L>, Reader<'a, L>> {
        if !self.try_lock_seen(seen) {
            reentry::check_lock(self.id() as usize, "read or synchronize");
            let word = &self.get().word;
            let mut backoff = Backoff::default();
            loop {
                // Sequentially consistent, as `OpLog::read`'s load. (The log half is not
                // needed: the entry checks it again, and the lock is taken from this half.)
                let now = word.holders(Ordering::SeqCst);
                // Biased with something logged, the entry fails: the lock, then.
                if now & BIAS != 0
                    && let Ok(reader) = self.enter_reader(now)
                {
                    return Err(reader);
                }
                if now & LOCK == 0 && self.try_lock_seen(now) {
                    break;
                }
                backoff.snooze();
            }
        }
        Ok(ObjectLock::held(self))
    }

    /// Enters the domain's reader table for this object, which the caller found biased
    /// towards concurrent reads in the word `seen`, if it still is and has nothing logged
    /// (module docs, "Concurrent reads"); `Err` sends the read through the lock, with the
    /// latest value of the word loaded. [`OpLog::read`] checks the bias first, so an
    /// unbiased read (a thread that reads and updates alone, say) runs none of this.
    #[inline(always)]
    pub(super) fn enter_reader(self, seen: u64) -> Result<Reader<'a, L>, u64> {
        let word = &self.get().word;
        let id = self.id() as usize;
        let cell = self.domain().readers.cell(self.reader_key());
        if cell.compare_exchange(0, id, Ordering::SeqCst, Ordering::Relaxed).is_err() {
            return Err(seen);
        }
        let mut reader =
            Reader { cell, state: None, lease: Default::default(), _holding: reentry::Holding::scoped_reading(id) };
        // After announcing the reader: a writer either sees the announcement (and waits)
        // or cleared the bias before this load (`exclude_readers`).
        dekker_fence();
        // Before the word's log half is checked (module docs, "Representations").
        reader.lease = self.direct().lease();
        let seen = word.load(Ordering::SeqCst);
        if seen & BIAS == 0 || !self.quiescent_from(seen) {
            return Err(seen);
        }
        // The access starts only now that the entry is valid.
        reader.state = Some(self.get().state.get());
        Ok(reader)
    }

    /// Makes the instance writable: revokes the bias towards concurrent reads and waits
    /// for the concurrent readers to leave (module docs, "Concurrent reads"). Called with
    /// the object lock held before anything changes the instance; reads through the lock
    /// that change nothing leave the concurrent readers be.
    #[inline]
    pub(super) fn exclude_readers(self) {
        let word = &self.get().word;
        if word.holders(Ordering::SeqCst) & BIAS != 0 {
            // Clear first, then wait: a reader that announces itself after the scan passes
            // its cell sees the bias gone. The next reads go through the lock until one
            // finds nothing changed again.
            word.clear_holders(BIAS, Ordering::SeqCst);
            dekker_fence();
            self.wait_for_readers();
        }
    }

    /// Waits until no reader of the domain's table reads this object. The object lock is
    /// held. Panics if the calling thread is one of them (a write inside its own read
    /// closure).
    #[cold]
    #[inline(never)]
    pub(super) fn wait_for_readers(self) {
        let id = self.id() as usize;
        for cell in self.domain().readers.column(self.reader_key()) {
            if cell.load(Ordering::SeqCst) != id {
                continue;
            }
            reentry::check_reading(id);
            let mut backoff = Backoff::default();
            while cell.load(Ordering::SeqCst) == id {
                backoff.snooze();
            }
        }
    }

    /// This object's column in its domain's reader table (`crate::readers`).
    #[inline(always)]
    pub(super) fn reader_key(self) -> usize {
        self.id() as usize / std::mem::size_of::<Object<L>>()
    }
}
