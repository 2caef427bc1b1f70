//! An update's logged path (the `object` module docs, "Update, logged"; 000 §4.1, Figure 6
//! `Object::log`): entering the calling core's slot, the inline push of an unordered kind,
//! a miss that takes the slot (`eviction` holds what happens to the log it evicts), and a
//! full log's hand-off to the backlog or apply by its owner, with the factors that size a
//! log before it falls due.

use super::*;

/// A full log that may be applied alone, whose owner found the object lock taken, keeps
/// growing in its slot up to this many times the domain's log length, its owner trying the
/// lock again every [`OVERFULL_RETRY`] pushes, before it goes to the backlog (module
/// docs, "Update" step 5). A log handed off to the backlog is applied later by another
/// core, from lines in this core's cache, and passes through the domain's backlog table:
/// with two threads pushing to one object of `read-mix`'s table, a quarter to half of the
/// full logs were handed off, and keeping them cut that to under 1 %. Measured with a cap
/// of 4 times against handing off at once (`read-mix`'s `oplog` at 100 % updates, runs
/// alternated, 2026-11-27, before [`SHARED_FACTOR`]): on the 2-core AMD host, two
/// threads went from 60–64M to 68–73M updates/s in the host's slower mode and did not
/// change in its faster one (120–150M); on the 16-core Intel machine, medians of four
/// runs went from 58M to 59M at 2 threads, 71M to 67M at 4, 75M to 89M at 8 and 79M to
/// 82M at 16. Twice [`SHARED_FACTOR`], so that two owners whose shared logs fall due
/// together both keep theirs while one applies (with the cap at [`SHARED_FACTOR`]
/// itself, a quarter of the shared logs were handed off). The slot's memory bound grows
/// by the same factor, for objects whose logs may be applied alone.
pub(super) const OVERFULL_FACTOR: usize = 2 * SHARED_FACTOR;

/// A log that may be applied alone, of an object that another core logs too, falls due
/// at this many times the domain's log length, not at the length itself (module docs,
/// "Update" step 5): each apply by its owner first takes the instance's lines from the
/// core that applied last, a cost a longer log shares among more updates. Measured with
/// two pinned threads pushing to one object holding `read-mix`'s table of 64 counters
/// (Intel Xeon 2-core host, 2026-11-27, eight alternated runs of each): 98–115M updates/s
/// at the length (128) → 124–136M at 3 times → 134–140M at 4 (a cap of 8) → 137–149M at
/// 8 (a cap of 16); in the host's faster mode, 130–144M → 160–210M at 4. Then 8 against
/// 4 on the 2-core AMD host (2026-11-30, `oplog-bench read-mix --points 99,100 --threads
/// 1,2`, four alternated rounds in each of the host's states): two threads at 100 %
/// updates 299–316M → 369–375M updates/s in its slower state, where each apply first
/// waits about 400 ns for the lines (two threads against one: 1.67–1.76 → 2.08–2.13),
/// and 401–423M → 430–442M in its faster one; 99 % and one thread unchanged. `objects`
/// at two threads, slower state: the user type at 256 objects 184–213M → 225–229M, at
/// 1,024 with Zipf popularity 61–62M → 58–59M, the rest unchanged. One thread's logs,
/// and those of an object only one core logs, fall due at the length as before.
pub(super) const SHARED_FACTOR: usize = 8;

/// Pushes between an over-full log's tries of the object lock ([`OVERFULL_FACTOR`]).
const OVERFULL_RETRY: usize = 8;

/// Resumes the panic of another operation that an update met on its way (`deferred`),
/// once the update itself is done.
fn resume_deferred(deferred: Option<Box<dyn Any + Send>>) {
    if let Some(p) = deferred {
        resume_unwind(p);
    }
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// Applies `op` in place if the object is direct, or appends it to this thread's log
    /// (module docs, "Update").
    #[inline(always)]
    pub(super) fn append(self, op: L::Op) {
        // In a domain whose hot objects outgrew the log cache most objects are direct, and
        // the load below would bring the word's line in shared, for the lock's
        // compare-and-swap to fetch again, exclusive: ask for it exclusive at once (`solo`).
        self.domain().solo.prefetch_for_update(&self.get().word);
        // The representation, before entering the slot: a direct update then touches no
        // slot, so a synchronize or direct update that checks the slots for logs finds
        // their lines clean. Relaxed: a stale answer is correct either way (module docs,
        // "Representations").
        let seen = self.get().word.holders(Ordering::Relaxed);
        if seen & DIRECT != 0 {
            return self.update_direct(op, seen);
        }
        self.append_logged(op);
    }

    /// Appends `op` to this thread's log (module docs, "Update"); hands a full log to the
    /// object's backlog. The common case, a slot that already holds the object's log and
    /// has room, is the whole fast path ([`Obj::append_inline`] for unordered kinds);
    /// everything else is out of line.
    #[inline(always)]
    pub(super) fn append_logged(self, op: L::Op) {
        if Self::INLINE_PUSH {
            let slots = &self.domain().slots;
            let entered = if self.enters_locked() {
                slots.try_enter_locked(self.slot_index())
            } else {
                slots.try_enter(self.slot_index())
            };
            return match entered {
                Some(guard) => self.append_inline(guard, op),
                None => self.append_entering(op),
            };
        }
        let slots = &self.domain().slots;
        let guard =
            if self.enters_locked() { slots.enter_locked(self.slot_index()) } else { slots.enter(self.slot_index()) };
        self.append_entered(guard, op);
    }

    /// Whether this object's updates enter their slot *locked* (`percore`'s
    /// `PerCore::enter_locked`): where its logs are not applied alone
    /// ([`Obj::applies_alone`]), an update may have to gather every core's log of the
    /// object (a full backlog, a direct update: crate docs, "Barriers"), and a slot left in
    /// spin mode is taken without a barrier.
    #[inline(always)]
    fn enters_locked(self) -> bool {
        // Ordered kinds (the queue's) never learn it: no load.
        !(L::APPLY_ALONE || (!L::ORDERED && self.applies_alone()))
    }

    /// Enters the calling core's slot for this object's update, locked where
    /// [`Obj::enters_locked`] says so.
    fn enter_slot(self) -> Entered<'a, SlotData<L>> {
        if self.enters_locked() {
            self.enter_locked_out_of_line()
        } else {
            self.domain().slots.enter(self.slot_index())
        }
    }

    /// `PerCore::enter_locked` of this object's slot, out of line: where its common case
    /// (`PerCore::try_enter_locked`) did not enter.
    #[inline(never)]
    fn enter_locked_out_of_line(self) -> Entered<'a, SlotData<L>> {
        self.domain().slots.enter_locked(self.slot_index())
    }

    /// Whether this kind's logged update takes [`Obj::append_inline`]'s path: an unordered
    /// kind (no stamp, nothing to do once the slot is released) whose updates touch nothing
    /// but the log (no lock-free direct log to sample for).
    const INLINE_PUSH: bool = !L::ORDERED && !L::CUTS && !<L::Direct as DirectLog<L>>::LOCK_FREE;

    /// [`Obj::append_logged`] of a kind of [`Obj::INLINE_PUSH`] in the slot the calling
    /// core entered with no call (`percore`'s `PerCore::try_enter`): the push,
    /// where the slot publishes the object and the push stores its operation without
    /// allocating ([`LogKind::push_fits`]), and the log's hand-off or apply if it is due.
    /// A miss, or a log that must grow, takes [`Obj::append_entered`]'s path, out of line.
    #[inline(always)]
    fn append_inline(self, mut guard: Entered<'a, SlotData<L>>, op: L::Op) {
        if guard.published() != self.id() as usize || !L::push_fits(&guard.log) {
            return self.append_entered_out_of_line(guard, op);
        }
        debug_assert!(guard.owner == self.as_owner(), "a slot publishes an object that does not own it");
        let core = guard.core();
        guard.pushes = guard.pushes.wrapping_add(1);
        let len = Self::push(&mut guard, op, 0);
        let full = self.full_len(len, self.domain().max_log_len, core);
        if full != 0 {
            return self.finish_append(guard, core, 0, full, None, None);
        }
        if len == 0 && L::is_empty(&guard.log) {
            guard.publish_lazily(emptied(self.id()));
        }
    }

    /// [`Obj::append_inline`] when the entered slot does not publish the object, or its log
    /// must grow.
    #[inline(never)]
    fn append_entered_out_of_line(self, guard: Entered<'a, SlotData<L>>, op: L::Op) {
        self.append_entered(guard, op);
    }

    /// [`Obj::append_logged`] of a kind of [`Obj::INLINE_PUSH`] when the slot could not be
    /// entered without a call.
    #[inline(never)]
    fn append_entering(self, op: L::Op) {
        self.append_entered(self.enter_slot(), op);
    }

    /// [`Obj::append_logged`] in the entered slot, whichever way it was entered.
    #[inline(always)]
    fn append_entered(self, mut guard: Entered<'a, SlotData<L>>, op: L::Op) {
        let d = self.domain();
        // The published word names the slot's owner (`SlotData::owner`). An owner that
        // stopped publishing (a synchronize took its log, or absorption emptied it) publishes
        // again before the push.
        if guard.published() != self.id() as usize {
            if guard.owner != self.as_owner() {
                return self.append_slow(guard, op);
            }
            guard.publish(self.id() as usize);
        }
        debug_assert!(guard.owner == self.as_owner(), "a slot publishes an object that does not own it");
        let core = guard.core();
        let stamp = self.stamp(&mut guard, core);
        guard.pushes = guard.pushes.wrapping_add(1);
        let sampled = <L::Direct as DirectLog<L>>::LOCK_FREE && guard.pushes % SAMPLE_EVERY == LOGGED_SAMPLE;
        let max = d.max_log_len;
        let len = Self::push(&mut guard, op, stamp);
        let full = self.full_len(len, max, core);
        if full != 0 {
            return self.finish_append(guard, core, stamp, full, None, None);
        }
        if len == 0 && !<L::Direct as DirectLog<L>>::LOCK_FREE && L::is_empty(&guard.log) {
            // Local absorption emptied the log (a remove took back its add): a read need not
            // take this slot, and learns that logging did a direct update's work here.
            guard.publish_lazily(emptied(self.id()));
        }
        drop(guard);
        self.after_append(core, stamp);
        if sampled {
            self.observe_sampled_update();
        }
    }

    /// [`Obj::append_logged`] when the entered slot does not hold the object's log: takes
    /// the slot (evicting its owner's log) if needed, publishes the object, pushes.
    #[cold]
    #[inline(never)]
    fn append_slow(self, mut guard: Entered<'a, SlotData<L>>, mut op: L::Op) {
        let d = self.domain();
        let mut check_backlog = true;
        let mut may_spare = true;
        // A panic of another operation while this update applied the object's backlog:
        // resumed once this update is logged (it is kept, whatever else panicked).
        let mut deferred: Option<Box<dyn Any + Send>> = None;
        loop {
            let core = guard.core();
            let mut eviction = None;
            if guard.owner != self.as_owner() {
                if let Some(how) = may_spare.then(|| self.spares_the_slot(&guard)).flatten() {
                    drop(guard);
                    match self.apply_missed(core, op, how) {
                        Ok(()) => return resume_deferred(deferred),
                        Err(back) => op = back,
                    }
                    may_spare = false;
                    guard = self.enter_slot();
                    continue;
                }
                match self.install(&mut guard, core, check_backlog) {
                    Ok(e) => eviction = e,
                    Err(Refused::Backlog(waiting)) => {
                        drop(guard);
                        check_backlog = self.apply_backlog_keeping_panic(waiting, &mut deferred);
                        guard = self.enter_slot();
                        continue;
                    }
                    Err(Refused::Kept) => {
                        // Only where the direct log is lock free, which takes `op` as is.
                        drop(guard);
                        match self.direct().push(op) {
                            Ok(()) => {
                                d.stats.count(core, Event::MissInPlace);
                                return resume_deferred(deferred);
                            }
                            Err(back) => op = back,
                        }
                        guard = self.enter_slot();
                        continue;
                    }
                }
            }
            let stamp = self.stamp(&mut guard, core);
            // Published before the push, under the slot lock: a synchronize that does not
            // see it cannot have missed a completed update (module docs, "Synchronize").
            if guard.published() != self.id() as usize {
                guard.publish(self.id() as usize);
            }
            guard.pushes = guard.pushes.wrapping_add(1);
            let full = self.full_len(Self::push(&mut guard, op, stamp), d.max_log_len, core);
            return self.finish_append(guard, core, stamp, full, eviction, deferred);
        }
    }

    /// What [`Obj::finish_append`] takes of a push that left `len` entries in its log:
    /// `len` if the log is due for its hand-off or apply (module docs, "Update" step 5),
    /// else 0. A log is due at the domain's limit; one that may be applied alone is due
    /// there only if no other core logs the object, else at [`SHARED_FACTOR`] times the
    /// limit, and, while its owner keeps it because the lock is taken, again every
    /// [`OVERFULL_RETRY`] pushes, and at [`OVERFULL_FACTOR`] times the limit whatever
    /// else. (A log that folds its operations into a fixed-size value, whose push returns
    /// 0, is never due: the test then folds away at compile time.)
    #[inline(always)]
    fn full_len(self, len: usize, max: usize, core: usize) -> usize {
        let due = len != 0
            && len >= max
            && (!self.applies_alone()
                || len >= OVERFULL_FACTOR * max
                || ((len - max).is_multiple_of(OVERFULL_RETRY) && self.apply_alone_due(len, max, core)));
        if due { len } else { 0 }
    }

    /// [`Obj::full_len`] of a log that may be applied alone, `len` entries long, at a
    /// retry point over the limit `max`: due if no other core logs the object, else from
    /// [`SHARED_FACTOR`] times the limit.
    #[cold]
    #[inline(never)]
    fn apply_alone_due(self, len: usize, max: usize, core: usize) -> bool {
        len >= SHARED_FACTOR * max || !self.others_log(core, Ordering::Relaxed)
    }

    /// The stamp of an update in the entered slot of `core`: the clock (read for a stamp,
    /// `ordo::Clock::stamp`: after the slot's entry, without holding the push back),
    /// raised to the migration floor and to the slot's last stamp (ordered kinds; 0
    /// otherwise).
    #[inline(always)]
    fn stamp(self, guard: &mut Entered<'_, SlotData<L>>, core: usize) -> u64 {
        if !L::ORDERED {
            return 0;
        }
        let d = self.domain();
        let t = d.clock.stamp();
        let raw = if d.slots.mode() == CoreMode::PerCpu { t.max(migration::floor(&*d.clock, d.id, core)) } else { t };
        let stamp = raw.max(guard.last_stamp);
        guard.last_stamp = stamp;
        stamp
    }

    /// Pushes `op`, stamped `stamp`, to the entered slot's log ([`LogKind::push`]) and
    /// returns the log's length. For kinds that cut ([`LogKind::CUTS`]), the first push
    /// since the slot's log was last taken sets the slot's low mark to its stamp, before
    /// the update completes: the slot's stamps never decrease, so the mark bounds every
    /// stamp its log holds (module docs, "The cut"). Once per log: the mark's store
    /// is a full barrier.
    #[inline(always)]
    fn push(guard: &mut Entered<'_, SlotData<L>>, op: L::Op, stamp: u64) -> usize {
        let len = L::push(&mut guard.log, op, stamp);
        if L::CUTS && guard.low_mark() == NO_LOW_MARK {
            guard.set_low_mark(stamp);
        }
        len
    }

    /// What an ordered update does once its slot is released (module docs, "Update").
    #[inline(always)]
    fn after_append(self, core: usize, stamp: u64) {
        if L::ORDERED {
            let d = self.domain();
            if d.slots.mode() == CoreMode::PerCpu {
                migration::record(d.id, core, stamp);
            }
            if d.commit_wait {
                // The clock's raw order does not respect communication here: make every
                // later reading on any core larger before returning (crate docs).
                d.clock.new_time(stamp);
            }
        }
    }

    /// The end of an update whose push filled the log (`full`: its length, 0 if not due, [`Obj::full_len`])
    /// or that took its slot:
    /// hands the full log off or applies it, releases the slot, finishes the eviction,
    /// applies a full backlog, and resumes a panic of another operation met on the way.
    #[cold]
    #[inline(never)]
    fn finish_append(
        self,
        mut guard: Entered<'a, SlotData<L>>,
        core: usize,
        stamp: u64,
        full: usize,
        mut eviction: Option<Eviction<L>>,
        mut deferred: Option<Box<dyn Any + Send>>,
    ) {
        let d = self.domain();
        let mut backlog = 0;
        if full != 0 {
            // A log that may be applied alone is applied by its owner, which wrote it (its
            // lines are in this core's cache), if the object lock is free and no eviction
            // is pending; if the lock is taken, it stays in the slot up to its cap (the
            // owner is back here every `OVERFULL_RETRY` pushes, `Obj::full_len`). Every
            // other full log goes to the backlog.
            match self.take_own_full_log(&mut guard, core, eviction.is_none()) {
                Some(own) => eviction = Some(own),
                None if self.applies_alone() && eviction.is_none() && full < OVERFULL_FACTOR * d.max_log_len => {}
                None => backlog = self.hand_off(&mut guard, core),
            }
        }
        drop(guard);
        if let Some(e) = eviction {
            e.finish();
        }
        self.after_append(core, stamp);
        if backlog >= d.backlog_limit {
            self.apply_backlog_keeping_panic(backlog, &mut deferred);
        }
        resume_deferred(deferred);
    }

    /// The owner's hand-off of its full log (module docs, "Update" step 5): moves the log
    /// of the entered slot into the object's backlog, without a barrier and without
    /// touching another core's slot; returns the backlog's length.
    #[cold]
    #[inline(never)]
    fn hand_off(self, guard: &mut Entered<'_, SlotData<L>>, core: usize) -> usize {
        let log = L::take_full(&mut guard.log);
        // Into the backlog before the slot stops publishing the object, both under the
        // slot lock: a synchronize finds the log in one place or the other.
        let d = self.domain();
        // The slot's count of pushes is per log: the next log starts from 0 (what a
        // synchronize or eviction weighs is what the log in the slot took).
        let pushes = std::mem::take(&mut guard.pushes);
        let waiting = d.backlogs.push_evicted(self.id(), &self.get().word, Parked { core, pushes, log });
        d.stats.count(core, Event::HandOff);
        d.stats.retire(core, pushes);
        log_left(guard);
        waiting
    }
}
