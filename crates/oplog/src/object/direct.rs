//! The direct representation's update (the `object` module docs, "Representations"; 000
//! §2): applied in place under the object lock, as under a mutex, or added to the counter's
//! lock-free direct log; a taken lock waited for briefly before the update logs itself
//! instead; the count of changes of updater that sends an object back to logged.

use super::*;

/// How long a direct update waits for a taken lock before it logs itself instead
/// ([`Obj::lock_briefly`]): polls of the lock, with exponential backoff between them
/// ([`spin_wait`]: 1 + 2 + … + 32 = 63 spin-loop hints, about as many as a `std` mutex
/// spins before it sleeps). No hint follows the last poll: the update then logs itself at
/// once. One poll under loom, whose models explore every step of a spin: an update that
/// finds the lock taken logs itself without yielding to the holder first (a spin-loop
/// hint is a yield there, after which the holder always finished), so that models reach
/// an update logged while the lock is held.
const BRIEF_WAIT_STEPS: u32 = if cfg!(loom) { 1 } else { 7 };

impl<'a, L: LogKind> Obj<'a, L> {
    /// An update in the direct representation: applied in place under the object lock,
    /// after everything logged before it (module docs, "Representations"). `seen` is the
    /// holder half of the word, which the caller just loaded. The common case is inline:
    /// the lock is free, and the policy's count of changes of updater
    /// ([`count_direct_update`]) does not switch the object back to logged; the unlock
    /// leaves the count and the calling thread's tag.
    #[inline(always)]
    pub(super) fn update_direct(self, op: L::Op, seen: u64) {
        // A sampled update that finds its own thread's tag in the word has nothing to tell
        // the policy: it stays lock-free too (whoever holds the lock), so the entry's line,
        // which neighbouring objects share, is written only when the updater changes or
        // after a read (two threads each updating its own of two neighbouring counters,
        // their direct logs on separate lines: 7.1 ns per update with every 64th one taking
        // the lock, 1.9-2.3 ns without, 2026-11-27).
        let lock_free = <L::Direct as DirectLog<L>>::LOCK_FREE;
        if !lock_free {
            return self.update_direct_locking(op, seen);
        }
        let op = if !sampled_direct_update() || seen & TAG == thread_tag() << TAG_SHIFT {
            match self.direct().push(op) {
                Ok(()) => return,
                Err(op) => op,
            }
        } else {
            op
        };
        self.update_direct_sampled(op, seen);
    }

    /// [`Obj::update_direct`] through the object lock for a kind with a lock-free direct
    /// log: a sampled update, or one the direct log refused. Out of line: inline, its
    /// registers made every caller of [`OpLog::add`] save six (the fold's docs in
    /// `oplog_percore`, `PerCore::fold`, give the cost).
    #[cold]
    #[inline(never)]
    fn update_direct_sampled(self, op: L::Op, seen: u64) {
        self.update_direct_locking(op, seen);
    }

    /// [`Obj::update_direct`] through the object lock.
    #[inline(always)]
    fn update_direct_locking(self, op: L::Op, seen: u64) {
        if seen & (LOCK | BIAS) != 0 {
            return self.update_direct_held(op, seen);
        }
        if let Err(op) = self.update_direct_fast(op, seen, false) {
            self.update_direct_slow(op, seen);
        }
    }

    /// [`Obj::update_direct`] when the word it loaded shows the lock taken or the read bias
    /// set. An update from inside the object's own `exec` or read closure is logged: it
    /// must not wait for the lock this thread holds, or for its own read (neither is
    /// possible while the word shows neither the lock nor the bias: this thread's own lock
    /// shows, and a writer that clears the bias under a concurrent read holds the lock
    /// until the read ends). Otherwise a free lock is taken revoking the bias, and a taken
    /// one waited for briefly ([`Obj::update_direct_slow`]).
    #[cold]
    #[inline(never)]
    fn update_direct_held(self, op: L::Op, seen: u64) {
        if reentry::involved(self.id() as usize) {
            return self.append_logged(op);
        }
        let op = if seen & LOCK == 0 {
            match self.update_direct_fast(op, seen, true) {
                Ok(()) => return,
                Err(op) => op,
            }
        } else {
            op
        };
        self.update_direct_slow(op, seen);
    }

    /// A direct update of an object whose holder half `seen` shows the lock free: a
    /// spin lock's update, whose unlock stores the policy's count of changes of updater
    /// ([`count_direct_update`]) and the calling thread's tag. With `revoke`, the lock's
    /// compare-and-swap also revokes the read bias, if set (module docs, "Concurrent
    /// reads"), and the readers that entered before it are waited for; without, `seen`
    /// shows no bias. `Err` gives the operation back if the holder half was not `seen`, or
    /// if logs must be applied first ([`Obj::logs_first`], checked under the lock only:
    /// rare, and checked before it too, it cost every update two instructions).
    #[inline(always)]
    fn update_direct_fast(self, op: L::Op, seen: u64, revoke: bool) -> Result<(), L::Op> {
        let Some(lock) = FastLock::take(self, seen, if revoke { BIAS } else { 0 }) else { return Err(op) };
        if revoke && seen & BIAS != 0 {
            dekker_fence();
            self.wait_for_readers();
        }
        // Under the lock: the log half changes without it (an update that found the lock
        // taken, or read the representation before a switch, logged itself).
        if self.logs_first() {
            drop(lock);
            return Err(op);
        }
        // SAFETY: the object lock is held and no reader is on the concurrent path (the bias
        // is clear, only a lock holder sets it, and the readers that entered while it was
        // set have left), so this is the only access.
        unsafe { self.exec_in_place(op) };
        // The sampled updates leave their thread's tag and count a change of updater
        // (module docs, "Representations"), after the lock's compare-and-swap, where a
        // mispredicted branch on the tag does not delay the lock ([`count_direct_update`]).
        // A switch back to logged (rare) is decided out of line.
        let lock_free = <L::Direct as DirectLog<L>>::LOCK_FREE;
        if !lock_free && !sampled_locked_update() {
            // Unsampled: the word keeps the last sampled updater's tag, the one the next
            // sampled update compares with, unless a read cleared it: the first update
            // since a read leaves one, which keeps the read bias off (`rebias`).
            let tag = if seen & TAG == 0 { thread_tag() << TAG_SHIFT } else { 0 };
            lock.release((seen & !BIAS) | tag);
            return Ok(());
        }
        let tag = thread_tag();
        let change = if lock_free { SAMPLED_CHANGE } else { LOCKED_SAMPLED_CHANGE };
        let want = count_direct_update(seen, tag, 0, true, change);
        if want & DIRECT == 0 {
            self.release_switching(lock, seen, tag, change);
        } else {
            lock.release(want & !BIAS);
        }
        Ok(())
    }

    /// Unlocks after a direct update whose count of changes of updater reached its top
    /// ([`count_direct_update`]): back to logged if the domain adapts and the calling
    /// core's slot lets it ([`Obj::back_to_logged`]); in a domain pinned to direct, the
    /// count stays at its top.
    #[cold]
    #[inline(never)]
    fn release_switching(self, lock: FastLock<'a>, seen: u64, tag: u64, change: u64) {
        lock.release(self.counted(seen, tag, 0, change) & !BIAS);
    }

    /// The holder bits `word` with a direct update counted ([`count_direct_update`], with
    /// the domain's representation), back to logged where the count says so and the
    /// calling core's slot lets it ([`Obj::back_to_logged`]). The object lock is held.
    pub(super) fn counted(self, word: u64, tag: u64, logged: u64, change: u64) -> u64 {
        let adaptive = self.domain().representation == Representation::Adaptive;
        let want = count_direct_update(word, tag, logged, adaptive, change);
        if word & DIRECT & !want != 0 { self.back_to_logged(want) } else { want }
    }

    /// The word `want` that a direct update's unlock leaves when its count of changes of
    /// updater switches the object back to logged ([`count_direct_update`]), unless the
    /// calling core's log-cache slot for the object holds another object's log: logging
    /// would evict that log at once (the hot objects outnumber the cache's slots), and the
    /// next evictions would switch it to direct again. Then the object stays direct, with
    /// its count restarted (module docs, "Representations"). In a domain whose hot objects
    /// outgrew the cache ([`Solo::outgrown`]), the object also stays direct unless its
    /// count got there within [`hot_window`] of a restart (`hot_again`); there an object
    /// whose logs may be applied alone goes back to logged whoever holds its slot (its
    /// misses against an active log are applied in place: `eviction`, "A miss that spares
    /// the slot"). The object lock is held.
    #[cold]
    #[inline(never)]
    pub(super) fn back_to_logged(self, want: u64) -> u64 {
        let d = self.domain();
        let outgrown = d.solo.outgrown();
        // Where a hot object's miss is applied in place rather than evict an active log
        // (`spares_the_slot`), it may go back to logged whoever holds its slot.
        if !(outgrown && L::APPLY_ALONE)
            && let Some(core) = d.slots.caller_core()
            && holds_a_log(d.slots.published(core, self.slot_index()), self.id())
        {
            return want | DIRECT;
        }
        if outgrown {
            let now = stamp_now();
            let hot = hot_again(want, now, hot_window::<L>());
            if !(hot && want & HOT_ONCE != 0) {
                // Direct still, the count restarted at `now`: only the third fill in a
                // row, each within the window of the one before, switches.
                let once = if hot { HOT_ONCE } else { 0 };
                return (want & !RESTART) | DIRECT | once | (now << STAMP_SHIFT);
            }
            // Back to logged with its stamp, which says that it was hot: its misses take
            // a slot (`spares_the_slot`), and its first flush of a shared log is timed
            // from it (`observe_flush`).
            return want & !HOT_ONCE;
        }
        want & !RESTART
    }

    /// A direct update that could not take the fast path: something is logged or read
    /// concurrently, or the lock was taken (by another update, a read, a [`Synced`] guard,
    /// or this thread itself from inside the object's own `exec`). A taken lock is waited
    /// for briefly, as a mutex spins before it sleeps ([`Obj::lock_briefly`]); if it stays
    /// taken, the update is logged instead, as in the logged representation, so an update
    /// never waits long (module docs, "Representations"); the next synchronize or direct
    /// update applies it first.
    #[cold]
    #[inline(never)]
    fn update_direct_slow(self, op: L::Op, seen: u64) {
        if !self.try_lock_seen(seen) && !self.lock_briefly() {
            return self.append_logged(op);
        }
        self.apply_direct(ObjectLock::held(self), op);
    }

    /// Polls the lock of a direct object up to [`BRIEF_WAIT_STEPS`] times, with exponential
    /// backoff (polling less often leaves the line to the holder: [`spin_wait`]), and takes
    /// it; `false` if it stayed taken, the object went back to logged, or the calling
    /// thread holds or reads this object (it would wait for itself). Measured against
    /// logging at once, with two threads each mixing reads and updates of one object
    /// holding `read-mix`'s table (2-core host, 2026-11-26, three runs each): 50 % updates
    /// 18.5–19.8M → 23.1–25.3M ops/s, 10 % 40–59M → 43–65M; `oplog-bench read-mix` at two
    /// threads and 50 % went from 8.5–15.7M to 23–24M with the rest of that change. An
    /// update logged while the lock was taken makes the next read gather every core's log
    /// under the lock, which keeps the lock longer and makes more updates log.
    #[inline(never)]
    pub(super) fn lock_briefly(self) -> bool {
        if reentry::involved(self.id() as usize) {
            return false;
        }
        let word = &self.get().word;
        for step in 0..BRIEF_WAIT_STEPS {
            if step > 0 {
                spin_wait(step - 1);
            }
            let now = word.holders(Ordering::Relaxed);
            if now & DIRECT == 0 {
                return false;
            }
            if now & LOCK == 0 && self.try_lock_seen(now) {
                return true;
            }
        }
        false
    }

    #[inline(always)]
    pub(super) fn apply_direct(self, mut lock: ObjectLock<'a, L>, op: L::Op) {
        // Logs may hold updates from before the switch, or from updates that read the
        // representation just before it: they come first, unless every operation commutes
        // with every other one (module docs, "Representations").
        if !self.applies_alone() && !self.quiescent() {
            match catch_unwind(AssertUnwindSafe(|| self.sync_locked())) {
                // Updates that found the lock taken logged themselves: they weigh as
                // updates of another thread (the policy's score).
                Ok((gathered, _)) => lock.logged_updates = gathered.ops as u64,
                Err(p) => {
                    // Another operation panicked; the ones after it wait in the backlog, so
                    // this update is logged behind them (kept, in order) before the panic
                    // goes on.
                    self.append_logged(op);
                    drop(lock);
                    resume_unwind(p);
                }
            }
        }
        self.exec_locked(op);
        lock.count_direct_update = true;
    }

    /// Runs `op` on the instance, once concurrent readers have left. The object lock is
    /// held, and what must come before `op` was applied.
    pub(super) fn exec_locked(self, op: L::Op) {
        self.exclude_readers();
        // SAFETY: the object lock is held and readers excluded, so this is the only access
        // to the state.
        unsafe { self.exec_in_place(op) };
    }

    /// Applies `op` to the instance at once ([`DirectLog::exec`]).
    ///
    /// # Safety
    /// The object lock is held and no reader is on the concurrent path: this is the only
    /// access to the state.
    #[inline(always)]
    unsafe fn exec_in_place(self, op: L::Op) {
        let state = self.get().state.get_mut();
        // SAFETY: the caller's guarantee.
        self.direct().exec(unsafe { state.deref() }, op);
        // Under loom the pointer tracks the access until it is dropped.
        #[allow(clippy::drop_non_drop)]
        drop(state);
    }
}
