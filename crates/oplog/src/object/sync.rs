//! Synchronize (the `object` module docs, "Synchronize"; 000 §5.1 `Object::synchronize`,
//! 001 §10.2): the gather, which swaps each publishing slot's log for an empty one and
//! releases the slot before the apply; the apply under the object lock; whether an object
//! is quiescent; giving up an object's slots; retiring an object.

use super::*;

/// What a synchronize gathered (for the adaptive policy).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Gathered {
    /// Operations (evicted and handed-off logs counted as full, except in
    /// [`Obj::take_backlog`]'s own answer, which counts what they held).
    pub(super) ops: usize,
    /// Whether the logs gathered (the slots' and the backlog's) absorbed much of what was
    /// pushed into them ([`absorbed`]), or a slot of the mask showed the object's log
    /// emptied by local absorption (`log_cache::emptied`): work a direct update would have
    /// done, so logging paid even on one core.
    pub(super) absorbed: bool,
    /// The mask bits ([`core_bit`]) of the cores whose slots or backlogged logs held some.
    pub(super) cores: u64,
    /// Evicted and handed-off logs taken from the backlog.
    pub(super) backlog_logs: usize,
    /// The operations those logs held.
    pub(super) backlog_ops: usize,
    /// The operations pushed into those logs (more than they held where local absorption
    /// shrank them).
    pub(super) backlog_pushes: usize,
}

impl Gathered {
    /// Whether the logs taken from the backlog held so few operations each that logging
    /// did not pay ([`THRASH_PUSHES`]): the object keeps losing its slots.
    pub(super) fn thrashing(&self) -> bool {
        self.backlog_logs > 0 && self.backlog_ops < self.backlog_logs * THRASH_PUSHES
    }
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// Gathers and applies every logged update. The object lock is held.
    /// Returns an estimate of how many operations it gathered (for the adaptive policy),
    /// and the lease on the instance that holds them all (for a read: module docs,
    /// "Representations").
    pub(super) fn sync_locked(self) -> (Gathered, Lease<L>) {
        // A direct object gives up the slots it still holds (logs of updates that found the
        // lock taken, or, for kinds whose logs may be applied alone, slots kept at the
        // switch), even empty ones, so that its core mask empties and its next reads and
        // updates visit no slot.
        let word = self.get().word.load(Ordering::Relaxed);
        let direct = word & DIRECT != 0;
        if !(direct && word & CORE_BITS != 0) {
            // Before the check, and after the lock (the holder's half of its handshake
            // with an evictor that folds a log without it, `Word::take`).
            dekker_fence();
            let lease = self.direct().lease();
            if self.quiescent() {
                return (Gathered::default(), lease);
            }
        }
        // Before the gather: a concurrent reader must not find the logs gone before their
        // operations are applied.
        self.exclude_readers();
        let (batch, gathered, mut lease) = self.gather(direct, true);
        self.apply_locked(batch, &mut lease);
        (gathered, lease)
    }

    /// On a switch to direct: applies what is logged and gives up the object's slots, so
    /// that its core mask empties and the check for logs that every direct update and read
    /// makes ([`Obj::quiescent`]) visits no slot. Without `barriers`, only where that needs
    /// none (every slot that publishes the object is in spin mode, on its spin lock, or the
    /// calling thread's own), and otherwise nothing: only for kinds whose logs may be
    /// applied alone, whose logs may wait for the next read. The object lock is held.
    pub(super) fn give_up_slots(self, barriers: bool) {
        debug_assert!(barriers || self.applies_alone(), "logs left in their slots on a switch to direct must commute");
        // Before the gather, as in `sync_locked`: a concurrent reader must not find the
        // logs gone before their operations are applied.
        self.exclude_readers();
        if let Some((batch, _, mut lease)) = self.gather_with(true, false, barriers) {
            self.apply_locked(batch, &mut lease);
        }
    }

    /// Applies `batch` to the instance, and to `lease`, and returns how many operations it
    /// left ([`LogKind::cut`]): those are kept for the next synchronize. The object lock is
    /// held. If an operation panics, the ones not yet run are kept too.
    pub(super) fn apply_locked(self, mut batch: L::Batch, lease: &mut Lease<L>) -> usize {
        if L::batch_len(&batch) == 0 {
            return 0;
        }
        struct Keep<'a, 'b, L: LogKind> {
            obj: Obj<'a, L>,
            batch: &'b mut L::Batch,
        }
        impl<L: LogKind> Drop for Keep<'_, '_, L> {
            fn drop(&mut self) {
                if L::batch_len(self.batch) > 0 {
                    self.obj.domain().backlogs.put_carry(
                        self.obj.id(),
                        &self.obj.get().word,
                        std::mem::take(self.batch),
                    );
                }
            }
        }
        self.exclude_readers();
        let keep = Keep { obj: self, batch: &mut batch };
        let state = self.get().state.get_mut();
        // SAFETY: the object lock is held, so this is the only access to the state.
        self.direct().apply(unsafe { state.deref() }, lease, keep.batch);
        if !L::APPLY_ALONE && L::applied_without_global_absorption(keep.batch) {
            self.domain().learn_no_global_absorption();
        }
        // What a cut left ([`LogKind::cut`]), which `keep` puts back in the backlog.
        L::batch_len(keep.batch)
    }

    /// Collects, at one instant, every operation logged for this object: its backlog,
    /// then the log of each core whose slot publishes it (module docs, "Synchronize").
    /// With `release`, also gives up every slot it owns (drop, a switch to direct, a
    /// synchronize of a direct object). With `spin_mode`, leaves the slots it had to take
    /// in spin mode: a synchronize that had to take slots will likely come back, and later
    /// ones then need no barrier (owners take the slots' spin locks until they have entered
    /// them `SPIN_MODE_ENTRIES` times without one; `percore::OwnerLock`).
    fn gather(self, release: bool, spin_mode: bool) -> (L::Batch, Gathered, Lease<L>) {
        self.gather_with(release, spin_mode, true).expect("a gather that may send barriers takes its slots")
    }

    /// [`Obj::gather`], or, without `barriers`, `None` (taking nothing) where it would need a
    /// barrier to take a slot (`HeldSlots::lock`).
    fn gather_with(self, release: bool, spin_mode: bool, barriers: bool) -> Option<(L::Batch, Gathered, Lease<L>)> {
        let d = self.domain();
        let mut held = HeldSlots::lock(self, release, barriers)?;
        // Logs that local absorption emptied, whose slots were not taken.
        let emptied_logs = held.emptied;
        let lease = std::mem::take(&mut held.lease);
        // Handed-off logs are full; evicted ones are counted as full too.
        let (mut batch, from_backlog) = self.take_backlog().unwrap_or_default();
        let Gathered { backlog_logs, backlog_ops, backlog_pushes, cores: mut core_mask, .. } = from_backlog;
        let mut ops = backlog_logs * d.max_log_len;
        let Some(slots) = held.slots.as_mut() else {
            let absorbed = from_backlog.absorbed || emptied_logs;
            let gathered = Gathered { ops, absorbed, cores: core_mask, backlog_logs, backlog_ops, backlog_pushes };
            return Some((batch, gathered, lease));
        };
        let (before, mut pushed) = (L::batch_len(&batch), 0);
        if spin_mode {
            slots.keep_spin_mode(true);
        }
        let mut still_owned = 0;
        let mut emptied: SmallVec<[usize; INLINE_SLOTS]> = SmallVec::new();
        for (i, (core, _, data)) in slots.iter_mut().enumerate() {
            if data.owner == self.as_owner() {
                L::gather(&mut batch, core, &mut data.log);
                let pushes = std::mem::take(&mut data.pushes);
                d.stats.retire(core, pushes);
                ops += pushes as usize;
                pushed += pushes as usize;
                emptied.push(i);
                core_mask |= core_bit(core);
                if release {
                    data.owner = NO_OWNER;
                } else {
                    still_owned |= core_bit(core);
                }
            }
        }
        for i in emptied {
            slots.publish(i, 0);
            if L::CUTS {
                slots.clear_low_mark(i);
            }
        }
        if release {
            // Every core of the mask is held: the bits of cores that no longer own the
            // object (or never did, sharing a bit) can go.
            let gone = held.bits & !still_owned;
            if gone != 0 {
                self.get().word.clear_logs(gone);
            }
        }
        drop(held);
        // What the backlog's logs and the slots' logs kept of what was pushed into them. (A
        // folded log counts 1 however many pushes it took, absorbed from two pushes on, and
        // 0 when they cancel, which may also empty what the backlog held.)
        let kept = backlog_ops + L::batch_len(&batch).saturating_sub(before);
        let absorbed = absorbed(kept, backlog_pushes + pushed) || emptied_logs;
        Some((batch, Gathered { ops, absorbed, cores: core_mask, backlog_logs, backlog_ops, backlog_pushes }, lease))
    }

    /// Whether nothing is logged for this object: no slot publishes it and it has no
    /// backlog. The object lock is held, so a `true` stays true for everything that
    /// completed before the check (module docs, "Synchronize").
    #[inline(always)]
    pub(super) fn quiescent(self) -> bool {
        self.quiescent_from(self.get().word.logs(Ordering::SeqCst))
    }

    /// [`Obj::quiescent`] from a value of the word just loaded: its log half shows nothing,
    /// or no slot of its mask publishes the object and it has no backlog.
    #[inline(always)]
    pub(super) fn quiescent_from(self, word: u64) -> bool {
        quiescent_word(word) || self.quiescent_slots()
    }

    /// [`Obj::quiescent`] for a word whose core mask is not empty: no slot of the mask
    /// publishes the object, and then the backlog is empty. Slots first: a hand-off puts a
    /// log in the backlog ([`BACKLOG`] set) before its slot stops publishing the object.
    #[inline(never)]
    fn quiescent_slots(self) -> bool {
        let word = &self.get().word;
        let seen = word.logs(Ordering::SeqCst);
        if seen & CORE_BITS == 0 {
            return seen & BACKLOG == 0;
        }
        self.no_slot_publishes(seen & CORE_BITS) && word.logs(Ordering::SeqCst) & BACKLOG == 0
    }

    /// Whether no core of the mask `bits` publishes this object in its slot.
    #[inline(never)]
    pub(super) fn no_slot_publishes(self, bits: u64) -> bool {
        let d = self.domain();
        let index = self.slot_index();
        let id = self.id() as usize;
        cores_of(bits, d.slots.cores_in_use()).all(|c| d.slots.published(c, index) != id)
    }

    /// Applies everything and gives up every slot, continuing past panicking operations
    /// (drop and `into_inner`); returns the first panic. The object lock is held by the
    /// only remaining owner.
    pub(super) fn retire(self) -> Option<Box<dyn Any + Send>> {
        self.exclude_readers();
        let (mut batch, _, mut lease) = self.gather(true, false);
        let state = self.get().state.get_mut();
        let mut first = None;
        while L::batch_len(&batch) > 0 {
            let before = L::batch_len(&batch);
            let r = catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: the object lock is held and the caller is the last handle.
                let stored = unsafe { state.deref() };
                self.direct().apply(stored, &mut lease, &mut batch);
            }));
            if let Err(p) = r {
                if L::batch_len(&batch) >= before {
                    // The kind's merge or absorption hook panicked before running anything:
                    // retrying would panic again. The panic is reported below.
                    batch = L::Batch::default();
                }
                first.get_or_insert(p);
            }
        }
        first
    }
}
