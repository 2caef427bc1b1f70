//! Eviction: how a log leaves the log cache when another object takes its slot (issue 14:
//! many hot objects), and the owner's own full log applied alone, both finished once the
//! slot is released.
//!
//! When an update takes a slot another object (the victim) owns ([`evict_owner`], called
//! by [`Obj::install`]), the victim's log comes out of the slot and:
//!
//! * goes to the victim's backlog ([`crate::backlog`]): no lock, no barrier, no other core's
//!   slot; the victim's next synchronize merges it;
//! * or, if a *try*-lock of the victim succeeds (the reverse of the usual lock order, so
//!   never a wait), and the log may be applied alone ([`LogKind::APPLY_ALONE`], the
//!   counter: one fold of its value) or is all the victim has logged (no backlog, no other
//!   core's bit in its mask: [`Obj::logged_on_core_only`]), is applied at once after the
//!   slot is released ([`Eviction::finish`]): a whole synchronize that spares the backlog
//!   (one thread evicting the logs of a user type's objects: 300–410 ns per update with each
//!   log parked, 85 ns applied).
//!
//! The victim's bit for this core is cleared (per-CPU domains of at most 31 CPUs, where no
//! two cores share a bit), so that its next synchronize does not visit this slot. Either
//! way the evictor that holds the victim's lock weighs the eviction for the victim's
//! adaptive policy: a log evicted before it took `THRASH_PUSHES` operations did not pay for
//! its miss, and pushes the victim towards direct updates (the `object` module docs,
//! "Representations"). (000 §6 synchronizes the victim while holding the slot, which
//! deadlocks against the victim's own synchronize.)
//!
//! The same [`Eviction`] carries an owner's own full log of a kind whose logs may be applied
//! alone ([`Obj::take_own_full_log`]; `object` module docs, "Update" step 5).
//!
//! # Eviction by one fold
//!
//! A counter's log is one integer, and its value a lock-free direct log ([`DirectLog`]), so
//! where the eviction tells the victim's policy nothing ([`Obj::weighs_eviction`]: the
//! domain does not adapt, the victim is direct, or the log took [`THRASH_PUSHES`]
//! operations or more and the victim's score is 0), the evictor folds the log into the
//! victim's value with one atomic add ([`DirectLog::fold`]): no lock, no barrier, no other
//! core's slot, no policy update. Where no other core shares this core's bit (per-CPU
//! domains of at most 31 CPUs) it then clears the bit, a second atomic read-modify-write,
//! on the victim's word; elsewhere the bit stays, as on every other eviction there. (Issue
//! 14 asks for one. Leaving the bit everywhere was measured: two threads each
//! incrementing a Zipf-drawn one of 4,096 or 65,536 counters, 2-core AMD EPYC host,
//! 2026-12-01, alternated runs, ran 7-9 % slower than with the victim's lock, and the
//! cache's hit rate fell from 0.997 to 0.98-0.99: a bit left behind makes the object look
//! logged on another core to the policy's checks of the mask (the sampled update's,
//! `Obj::observe_sampled_update`, among others; making the miss that spares the slot look
//! past such bits did not help), so hot counters moved between the representations
//! differently. With the bit cleared, the same runs matched the locked eviction.)
//!
//! Without the lock, the fold can fall between the two steps of a read of the victim that
//! finds nothing logged: it loads the value first, then checks the mask and the slots
//! (in that order: an update logged on a core that completed before a direct update the
//! value includes has set its core's bit by then). A read that loaded the value before
//! the fold and checks this slot after it stops publishing the victim would take the
//! victim for quiescent without the folded operations, which completed before it began. So
//! after the fold, while the slot still publishes the victim, the evictor checks whether
//! such a read may be under way ([`Obj::read_may_be_under_way`]): the victim's lock is
//! taken (reads through the lock, and every other holder, take it before they load the
//! value), or a reader is announced in the victim's column of the reader table (the
//! concurrent path announces itself before it loads the value). Both are Dekker
//! handshakes: the fold and the lock's compare-and-swap are sequentially consistent, and
//! so are the announcement and the loads. If none, no read can hold a value from before the
//! fold and check this slot after it changes, and the slot is taken. Otherwise the victim
//! keeps the slot, still publishing it with an empty log ([`Kept`]): a read that loaded the
//! old value finds the slot publishing the victim and takes the general path, whose value
//! is loaded while it holds that slot, after the fold. The evicting update then adds its
//! own delta to its counter's value in place, and a later update that finds such a slot
//! (its owner published, its log empty) checks the same before it takes it. Tested: a
//! loom model of each race (`tests/loom.rs`, `a_folded_eviction_races_reads_updates_and_a_drop`)
//! fails without either half of the check.
//!
//! # A miss that spares the slot
//!
//! In a domain whose hot objects outgrew the cache ([`Solo::outgrown`]: a quarter of a
//! cache's worth of objects went direct through evictions), taking the slot would evict a
//! log that will not pay for its miss either, and the object taking it will likely be
//! evicted in turn before its own log pays: each object then goes direct only after two
//! such evictions, each a try-lock and an apply under the victim's lock, and a fresh
//! domain spends its first tens of milliseconds there (two threads each updating a random
//! one of 65,536 objects of a 24-byte state: 26–32M updates/s over the first 2M updates,
//! against 54–74M in steady state). So there an update that misses switches its own object
//! to direct and applies itself in place, leaving the slot's log where it is
//! ([`Obj::spares_the_slot`], [`Obj::apply_missed`]), if the object has nothing logged
//! (an empty core mask and no backlog: the switch has nothing to gather and no slot to
//! give up) and no stamp in its word (one that came back to logged because threads update
//! it in turn keeps its restart's stamp, `object`'s `back_to_logged`: it takes the slot,
//! as before). The object lock is try-locked after the slot is released: an update never
//! waits there, and if the lock is taken the update takes the slot as before. The switch
//! is a direct update whose unlock sets the representation: updates of other cores that
//! read the representation before it log themselves, and the next synchronize or direct
//! update applies them first (`object` module docs, "Representations"). Same probe, from a
//! fresh domain (2-core Intel Xeon host, 2026-11-28): the first 2M updates ran at 47M
//! updates/s instead of 26M, installs fell from 132,519 to 3,785, and 65,210 misses went
//! direct.
//!
//! A stamped object of a kind whose logs may be applied alone ([`LogKind::APPLY_ALONE`]:
//! its operations commute with whatever is logged) that misses a log that took
//! [`THRASH_PUSHES`] operations or more (another hot object's, on the same slot index of
//! the direct-mapped cache) applies itself in place under its lock instead, and stays
//! logged: two hot objects on one slot index would otherwise evict each other's logs at
//! every turn. That lets such objects go back to logged when they are hot whoever holds
//! their slot (`object`'s `back_to_logged`), where other kinds wait for a free slot: with
//! the objects experiment's Zipf draw over 4,096 counters and two threads, the hot
//! counters stayed direct behind the slots' first owners, 76-88 % of the updates went to
//! direct counters, whose lines the two cores pass back and forth, and two threads ran
//! slower than one; now half the updates go to logged counters (probe, 2-core Intel Xeon
//! host, 2026-11-28, two threads: 83-112M updates/s before, 104-117M after; with 1,024
//! counters 121-131M before, 135-138M after; with 65,536, 115-134M before, 113-129M after).

use super::*;

/// The victim of an eviction keeps its slot ([`evict_owner`]): its log was folded into it,
/// but a read of it may be under way (module docs, "Eviction by one fold").
#[derive(Clone, Copy, Debug)]
pub(super) struct Kept;

/// Takes the log out of the locked `slot` of `core`, which its owner (the victim) loses
/// to the calling update (see the module docs). Returns the eviction to finish once the
/// slot is released, if the victim's lock was free; `None` if the slot had no owner or an
/// empty log, or the log went to the victim's backlog or was folded into the victim;
/// [`Kept`] if the victim keeps the slot.
pub(super) fn evict_owner<L: LogKind>(
    d: &Domain<L>,
    slot: &mut Entered<'_, SlotData<L>>,
    core: usize,
) -> Result<Option<Eviction<L>>, Kept> {
    let victim = slot.owner;
    let mut eviction = None;
    if victim == NO_OWNER {
        return Ok(None);
    }
    // SAFETY: a slot's owner is a live object: the victim cannot finish dropping while
    // we hold this slot, which it still owns (`object` module docs, "Where an object lives").
    let v = unsafe { Obj::<L>::from_owner(victim) };
    let lock_free = <L::Direct as DirectLog<L>>::LOCK_FREE;
    if L::is_empty(&slot.log) {
        // A log folded by an eviction that left the slot to its owner, still published
        // (below), or whose operations cancelled out: the slot goes on the same condition.
        if lock_free && slot.published() == victim.addr() && v.read_may_be_under_way() {
            return Err(Kept);
        }
        return Ok(None);
    }
    let mut log = std::mem::take(&mut slot.log);
    let thrashing = (slot.pushes as usize) < THRASH_PUSHES;
    // Once its log is out of this slot, the victim has no log on this core (an object
    // has one slot index): its bit goes, where no other core shares it (per-CPU
    // domains of at most 31 CPUs), so that its next synchronize, or its switch to
    // direct, does not visit this slot (a barrier on the owner path), and its
    // policy's sampled checks do not count this core as logging it. Only a holder of
    // this slot sets the bit, and a gather holding every slot of the mask clears it,
    // so it is cleared here while the slot is held, and only once nobody can miss the
    // log for it: once the log is in the victim's backlog, or its readers are
    // excluded (a concurrent reader that no longer sees the bit skips this slot,
    // which still publishes the victim, and checks the backlog instead), or it is
    // folded and no read is under way.
    let clear =
        if d.slots.mode() == CoreMode::PerCpu && d.slots.cores() <= CORE_BIT_COUNT { core_bit(core) } else { 0 };
    if lock_free && !v.weighs_eviction(thrashing) {
        // Module docs, "Eviction by one fold".
        let mut batch = L::Batch::default();
        L::gather(&mut batch, core, &mut log);
        // The fold: one atomic add.
        v.direct().fold(&mut batch);
        d.stats.count(core, Event::EvictionApplied);
        if v.read_may_be_under_way() {
            d.stats.retire(core, std::mem::take(&mut slot.pushes));
            return Err(Kept);
        }
        if clear != 0 {
            v.get().word.clear_logs(clear);
        }
        return Ok(None);
    }
    // If the victim's lock is free (a try-lock: the reverse of the usual lock order,
    // so never a wait), a log that may be applied alone is applied at once, and so is
    // any other log that is all the victim has logged: no backlog, and no other
    // core's bit in its mask (bits unique per core). Applying it is then a whole
    // synchronize: an update of another core whose bit is not set yet has not
    // completed, and comes after, as in a gather that does not see it. Every other
    // log goes to the victim's backlog, with no barrier and no other core's slot.
    let mut cleared = false;
    let locked = |cleared: &mut bool| {
        !reentry::involved(v.id() as usize) && v.try_lock_evicting(clear).map(|c| *cleared = c).is_some()
    };
    let park = |log| {
        d.backlogs.push_evicted(v.id(), &v.get().word, Parked { core, pushes: slot.pushes, log });
        d.stats.count(core, Event::EvictionToBacklog);
    };
    if locked(&mut cleared) {
        let batch = if v.applies_alone() || v.logged_on_core_only(core) {
            // The victim stops looking quiescent to concurrent readers when this slot
            // publishes its new owner: they must wait for the apply.
            // (Biased, the bit waits until they are gone: one that passed the bias
            // check may not have loaded the mask yet.)
            v.exclude_readers();
            let mut batch = v.backlog_batch();
            L::gather(&mut batch, core, &mut log);
            d.stats.count(core, Event::EvictionApplied);
            batch
        } else {
            // Whoever synchronizes the victim next takes it from the backlog.
            park(log);
            L::Batch::default()
        };
        // Either way, the eviction is evidence for the victim's policy, weighed once
        // the slot is released: a log that held little says the victim keeps losing
        // its slot (the backlog is applied then only if the victim switches).
        eviction = Some(Eviction { victim: v.ptr, batch, why: Why::Evicted { thrashing } });
    } else {
        park(log);
    }
    if clear != 0 && !cleared {
        v.get().word.clear_logs(clear);
    }
    if L::CUTS {
        // The log is in the victim's backlog, or with the victim's lock in this
        // eviction: the mark bounded it alone.
        slot.clear_low_mark();
    }
    Ok(eviction)
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// Whether an eviction of one of this object's logs is evidence for its adaptive
    /// policy (module docs, "Representations"), which its lock holder weighs: where it
    /// adapts and is logged, a log evicted before it took [`THRASH_PUSHES`] operations
    /// (`thrashing`) raises its score, and any other resets a score that is not 0. (A
    /// relaxed load: the score may change meanwhile, and then one eviction goes unweighed.)
    fn weighs_eviction(self, thrashing: bool) -> bool {
        let now = self.get().word.holders(Ordering::Relaxed);
        let score = (now & SCORE) >> SCORE_SHIFT;
        // As `Eviction::finish` would weigh it (`Obj::observe_evictions`).
        let weight = if thrashing { THRASH_WEIGHT } else { 0 };
        self.domain().representation == Representation::Adaptive
            && now & DIRECT == 0
            && logged_step(score, weight) != (false, score)
    }

    /// Whether a read of this object may have loaded its value before a fold that the
    /// caller, an evictor that holds one of its slots, still publishing it, has just made,
    /// and not yet checked that slot (module docs, "Eviction by one fold"): the object
    /// lock is taken, or a reader is announced in the object's column of the reader table
    /// (whatever the bias: one announced before the fold may find it set again by the time
    /// it checks). Loads only: the evictor's half of a Dekker handshake with the lock's
    /// compare-and-swap and with the reader's announcement, each followed by the load of
    /// the value.
    fn read_may_be_under_way(self) -> bool {
        dekker_fence();
        if self.get().word.holders(Ordering::SeqCst) & LOCK != 0 {
            return true;
        }
        let id = self.id() as usize;
        self.domain().readers.column(self.reader_key()).any(|cell| cell.load(Ordering::SeqCst) == id)
    }

    /// What this update, which missed the cache (the entered slot holds another object's
    /// log), does instead of taking the slot (module docs, "A miss that spares the slot");
    /// `None`: it takes the slot. Only where the domain adapts, its
    /// hot objects outgrew the cache ([`Solo::outgrown`]) and the slot's log is not empty
    /// (taking the slot would evict it). An object with nothing logged anywhere and no
    /// stamp in its word (it did not come back to logged because threads update it in
    /// turn, nor flush a shared log, since it last switched) goes direct; one of a kind
    /// whose logs may be applied alone, stamped, that misses a log that took
    /// [`THRASH_PUSHES`] or more (another hot object's, say) applies itself in place.
    pub(super) fn spares_the_slot(self, slot: &Entered<'_, SlotData<L>>) -> Option<Spared> {
        let d = self.domain();
        let word = &self.get().word;
        if d.representation != Representation::Adaptive
            || !d.solo.outgrown()
            || slot.owner == NO_OWNER
            || L::is_empty(&slot.log)
            || reentry::involved(self.id() as usize)
        {
            return None;
        }
        if stamp_of(word.holders(Ordering::Relaxed)) == 0 {
            quiescent_word(word.logs(Ordering::Relaxed)).then_some(Spared::ToDirect)
        } else {
            (L::APPLY_ALONE && slot.pushes as usize >= THRASH_PUSHES).then_some(Spared::InPlace)
        }
    }

    /// Applies `op` in place as `how` says (module docs, "A miss that spares the slot") if
    /// the object lock is free (a try-lock: the slot of `core` was released before, so this
    /// is the usual lock order, but an update does not wait here) and, to switch to direct,
    /// the object still has nothing logged; otherwise gives `op` back, to be logged.
    pub(super) fn apply_missed(self, core: usize, op: L::Op, how: Spared) -> Result<(), L::Op> {
        let Some(mut lock) = self.try_lock() else { return Err(op) };
        let now = self.get().word.holders(Ordering::Relaxed);
        if now & DIRECT != 0 {
            self.apply_direct(lock, op);
        } else if how == Spared::InPlace {
            // Its operations commute with what is logged: that may wait for the next read.
            self.exec_locked(op);
            self.domain().stats.count(core, Event::MissInPlace);
        } else if self.quiescent() {
            // Nothing logged: nothing to give up, and no reader to wait for but those of
            // the instance, which `apply_direct` excludes.
            lock.policy = Some(policy_bits(true, 0));
            self.domain().stats.count(core, Event::MissToDirect);
            self.apply_direct(lock, op);
        } else {
            return Err(op);
        }
        Ok(())
    }

    /// For kinds whose logs may be applied alone, and if `allowed`: try-locks the object
    /// (the reverse of the usual lock order, so never a wait) and takes the entered slot's
    /// full log out, to be applied once the slot is released (module docs, "Update" step
    /// 5). `None` leaves the log where it is.
    pub(super) fn take_own_full_log(
        self,
        guard: &mut Entered<'_, SlotData<L>>,
        core: usize,
        allowed: bool,
    ) -> Option<Eviction<L>> {
        if !self.applies_alone() || !allowed || reentry::involved(self.id() as usize) || !self.try_lock_raw() {
            return None;
        }
        // The instance is about to change: concurrent readers (which cannot have
        // validated since this slot published the object) must leave first.
        self.exclude_readers();
        let mut batch = self.backlog_batch();
        let before = L::batch_len(&batch);
        L::gather(&mut batch, core, &mut guard.log);
        let pushes = std::mem::take(&mut guard.pushes) as usize;
        let absorbed = absorbed(L::batch_len(&batch).saturating_sub(before), pushes);
        self.domain().stats.retire(core, pushes as u32);
        log_left(guard);
        Some(Eviction { victim: self.ptr, batch, why: Why::OwnFullLog { core, absorbed } })
    }

    /// Whether `core`'s log is all this object has logged: no backlog, and no other core's
    /// bit in its mask, where each core has a bit of its own (at most
    /// [`CORE_BIT_COUNT`] cores). The object lock is held, so logs of updates that
    /// completed before show in the mask.
    fn logged_on_core_only(self, core: usize) -> bool {
        self.domain().slots.cores() <= CORE_BIT_COUNT
            && self.get().word.logs(Ordering::SeqCst) & BACKLOG == 0
            && !self.others_log(core, Ordering::SeqCst)
    }
}

/// What an update that missed the cache does instead of taking the slot
/// ([`Obj::spares_the_slot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Spared {
    /// Switches its object to direct and applies itself in place.
    ToDirect,
    /// Applies itself in place under the object lock; the object stays logged.
    InPlace,
}

/// A log taken out of a slot that may be applied alone ([`LogKind::APPLY_ALONE`]): evicted
/// from the slot, or its owner's own full log. Its object (the victim) was locked with a
/// try-lock while the slot was held; it is applied after the slot is released.
pub(super) struct Eviction<L: LogKind> {
    victim: NonNull<Object<L>>,
    batch: L::Batch,
    /// Why the log left its slot, for the victim's adaptive policy.
    why: Why,
}

/// Why an [`Eviction`]'s log left its slot.
#[derive(Clone, Copy, Debug)]
enum Why {
    /// Another object took the slot; `thrashing` if the log held fewer than
    /// [`THRASH_PUSHES`] operations.
    Evicted { thrashing: bool },
    /// The log filled up on `core`, and its owner applies it; `absorbed` if local
    /// absorption kept it much shorter than the pushes that made it ([`absorbed`]).
    OwnFullLog { core: usize, absorbed: bool },
}

impl<L: LogKind> Eviction<L> {
    /// Applies the evicted log to the victim and unlocks it.
    pub(super) fn finish(self) {
        // The evictor holds the victim's lock (taken while it held one of the victim's
        // slots), and dropping an object takes its lock first, so the victim is alive until
        // the guard below unlocks it.
        let victim = Obj::<L> { ptr: self.victim, _life: PhantomData };
        let mut lock = ObjectLock::held(victim);
        victim.apply_locked(self.batch, &mut Lease::<L>::default());
        match self.why {
            Why::Evicted { thrashing } => victim.observe_evictions(&mut lock, thrashing, THRASH_WEIGHT),
            Why::OwnFullLog { core, absorbed } if victim.domain().representation == Representation::Adaptive => {
                // From one core only if no other core's slot publishes the object (the mask
                // keeps the bits of cores that logged long ago) and it has no backlog.
                let word = victim.get().word.logs(Ordering::Relaxed);
                let alone = word & BACKLOG == 0 && victim.no_slot_publishes(word & CORE_BITS & !core_bit(core));
                victim.observe_flush(&mut lock, alone && !absorbed);
            }
            Why::OwnFullLog { .. } => {}
        }
    }
}

/// loom model of the in-place miss ("A miss that spares the slot"), in the crate because
/// it stamps its object directly: the models of `tests/loom.rs` go through the public API,
/// where reaching a stamp (an object back to logged because threads updated it in turn
/// within [`hot_window`]) takes more operations than a model's prelude allows. Run by
/// `.ci/run`'s loom step with the crate's unit tests (`--lib`).
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::object::test_ops::AddAlone;
    use crate::{Config, Unordered};
    use loom::thread;
    use oplog_lincheck::testkit::loom_model;
    use std::sync::Arc;

    /// In a domain whose hot objects outgrew its log cache, a stamped object's miss against
    /// another object's log of [`THRASH_PUSHES`] operations applies itself in place, leaving
    /// the slot, while another core reads the object (on the concurrent path: the apply
    /// must wait for it), logs an update of it and reads it again: nothing is lost or
    /// applied twice, each read sees its own thread's completed update, and the slot's log
    /// stays its owner's.
    #[test]
    fn a_miss_applies_in_place_racing_a_logged_update_and_a_read() {
        // Whether some interleaving took the path (a std atomic: outside the model).
        static IN_PLACE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        loom_model("a_miss_applies_in_place_racing_a_logged_update_and_a_read", 3, || {
            let d = Domain::<Unordered<AddAlone>>::new(Config::per_cpu().cpus(2).cache_slots(1)).unwrap();
            d.solo.thrashed();
            assert!(d.solo.outgrown(), "one switch outgrows a cache of one slot");
            // Another hot object's log in CPU 0's slot, of enough operations to be spared.
            let other = OpLog::with_domain(&d, 0);
            (0..THRASH_PUSHES).for_each(|_| other.update(AddAlone(1)));
            let hot = Arc::new(OpLog::with_domain(&d, 0));
            let word = &hot.obj().get().word;
            let now = word.holders(Ordering::Relaxed);
            word.take(now, now | (5 << STAMP_SHIFT), Ordering::Relaxed).unwrap();
            // A read with nothing logged lets the next ones take the concurrent path.
            assert_eq!(hot.read(|v| *v), 0);
            assert_ne!(word.holders(Ordering::Relaxed) & BIAS, 0, "the read biased the object");
            let writer = {
                let hot = hot.clone();
                thread::spawn(move || {
                    crate::primitive::set_current_cpu(1);
                    let first = hot.read(|v| *v);
                    assert!(first <= 1, "CPU 1 read {first} before its update");
                    hot.update(AddAlone(10));
                    let seen = hot.read(|v| *v);
                    assert!(seen == 10 || seen == 11, "CPU 1 read {seen} after its update");
                })
            };
            let before = d.cache_stats();
            hot.update(AddAlone(1));
            if d.cache_stats().since(&before).misses_in_place == 1 {
                IN_PLACE.store(true, std::sync::atomic::Ordering::Relaxed);
                let core = d.slots.caller_core().unwrap();
                assert_eq!(d.slots.published(core, 0), other.obj().id() as usize, "the slot stays");
            }
            let seen = hot.read(|v| *v);
            assert!(seen == 1 || seen == 11, "CPU 0 read {seen} after its update");
            writer.join().unwrap();
            assert_eq!((hot.read(|v| *v), other.read(|v| *v)), (11, THRASH_PUSHES as u64));
        });
        assert!(IN_PLACE.load(std::sync::atomic::Ordering::Relaxed), "no interleaving applied the miss in place");
    }
}
