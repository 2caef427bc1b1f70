//! The object lock (the `object` module docs, "The object's word"; `crate::word`): the
//! tries that start from a loaded word (an evictor's among them), the lock of the fast
//! paths ([`FastLock`]), whose unlock stores what its holder decided without loading the
//! word again, and the full guard ([`ObjectLock`]), which stores the policy's decision,
//! the count of direct updates and the read bias as it unlocks.

use super::*;

/// The object lock as the fast paths take it: one compare-and-swap from a value of the word
/// just loaded, whose holder bits ([`HOLDERS`](crate::word::HOLDERS)) then cannot change
/// until the unlock, so the unlock stores them without loading the word again
/// ([`FastLock::release`]). Dropped without a release (the code it guards unwinds, or
/// finds logs to apply first), it only unlocks, keeping no policy change.
pub(super) struct FastLock<'a> {
    word: &'a Word,
    seen: u64,
    /// The re-entry record (`reentry`) as [`reentry::Holding::into_raw`] gave it, dropped
    /// once the lock is released. Raw, not an `Option` of the record, and dropped by an
    /// inline `Drop`: the lock is three words that the fast paths returning it
    /// (`Obj::lock_quiescent`) keep in registers. As four words with an out-of-line drop,
    /// a [`Synced`] guard of an object with nothing logged cost 5.2–6.5 ns to take and
    /// drop around an update and a read, against 3.9 ns now (`hotpath`, one thread, 2-core
    /// AMD EPYC host, 2026-12-01, three runs each).
    holding: usize,
}

impl<'a> FastLock<'a> {
    /// Takes `obj`'s lock if its holder half is that of `seen` (which shows it free),
    /// clearing the holder bits `clear` ([`BIAS`] or none) in the same instruction.
    #[inline(always)]
    pub(super) fn take<L: LogKind>(obj: Obj<'a, L>, seen: u64, clear: u64) -> Option<Self> {
        let word = &obj.get().word;
        let clear = seen & clear;
        // Revoking the bias is the writer's half of a Dekker handshake with the readers
        // (`Obj::exclude_readers`); the lock itself, with an evictor that folds a log
        // without it (`Word::take`).
        let new = (seen | LOCK) & !clear;
        word.take(seen, new, Ordering::SeqCst).ok()?;
        Some(FastLock { word, seen: seen & !clear, holding: reentry::Holding::scoped(obj.id() as usize).into_raw() })
    }

    /// Keeps the lock taken, for a guard that unlocks it itself; returns the re-entry
    /// record, which the guard drops once it has unlocked.
    #[inline(always)]
    pub(super) fn keep(self) -> reentry::Holding {
        let holding = reentry::Holding::from_raw(self.holding);
        // Still locked: the unlock of `Drop` must not run.
        std::mem::forget(self);
        holding
    }

    /// Unlocks, leaving the holder bits of `want` (the other bits of `want` are ignored).
    #[inline(always)]
    pub(super) fn release(self, want: u64) {
        self.word.unlock(self.seen, want);
        // Unlocked: `keep` skips the unwinding unlock of `Drop`; the record goes after.
        drop(self.keep());
    }
}

impl Drop for FastLock<'_> {
    #[inline]
    fn drop(&mut self) {
        self.word.unlock(self.seen, self.seen);
        drop(reentry::Holding::from_raw(self.holding));
    }
}

/// Holds an object's lock bit; releases it on drop, storing what the holder decided about
/// the bits only a lock holder changes ([`DIRECT`], [`SCORE`], [`BIAS`]) in the same
/// instruction.
pub(super) struct ObjectLock<'a, L: LogKind> {
    obj: Obj<'a, L>,
    /// The [`DIRECT`] and [`SCORE`] bits to set when unlocking ([`policy_bits`]), and
    /// [`STAMP`]'s if it changes.
    pub(super) policy: Option<u64>,
    /// Count a direct update in the policy's score when unlocking.
    pub(super) count_direct_update: bool,
    /// With it, updates it found logged (they found the lock taken), each weighing as
    /// another thread's.
    pub(super) logged_updates: u64,
    /// Set [`BIAS`] when unlocking.
    pub(super) bias: bool,
    _holding: reentry::Holding,
}

impl<'a, L: LogKind> ObjectLock<'a, L> {
    /// The guard of a lock the calling thread has just taken.
    pub(super) fn held(obj: Obj<'a, L>) -> Self {
        ObjectLock {
            obj,
            policy: None,
            count_direct_update: false,
            logged_updates: 0,
            bias: false,
            _holding: reentry::Holding::new(obj.id() as usize),
        }
    }

    /// Keeps the lock taken, for a guard that unlocks it itself ([`Synced`]): returns the
    /// holder bits the unlock is to leave, as dropping this would, and the re-entry record,
    /// which the guard drops once it has unlocked. Only a lock holder changes those bits,
    /// so they are the same when the guard unlocks.
    pub(super) fn keep(self) -> (u64, reentry::Holding) {
        let this = ManuallyDrop::new(self);
        let want = this.release_bits(this.obj.get().word.holders(Ordering::Relaxed));
        // SAFETY: read once out of a value that is never dropped (`ManuallyDrop`).
        let holding = unsafe { std::ptr::read(&this._holding) };
        (want, holding)
    }

    /// The holder bits the unlock leaves where the holder half is `now`: what the holder
    /// decided about the policy, the count of direct updates and the bias.
    fn release_bits(&self, now: u64) -> u64 {
        if self.policy.is_none() && !self.count_direct_update && !self.bias {
            return now;
        }
        let mut want = match self.policy {
            // A new policy comes from a read or a switch: no direct update since. It keeps
            // the stamp unless it brings its own or switches (each representation has its
            // own use for it: `back_to_logged`, `observe_flush`).
            Some(policy) if policy & STAMP != 0 || (policy ^ now) & DIRECT != 0 => (now & BIAS) | policy,
            Some(policy) => (now & (BIAS | RESTART)) | policy,
            None => now & (DIRECT | SCORE | TAG | BIAS | RESTART),
        };
        if self.count_direct_update {
            want = self.obj.counted(want, thread_tag(), self.logged_updates, change_weight::<L>());
        }
        if self.bias {
            want |= BIAS;
        }
        want
    }
}

impl<L: LogKind> Drop for ObjectLock<'_, L> {
    fn drop(&mut self) {
        // Only a lock holder changes these bits, so the value read here stays theirs until
        // the unlock below.
        let word = &self.obj.get().word;
        let now = word.holders(Ordering::Relaxed);
        word.unlock(now, self.release_bits(now));
    }
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// Takes the object lock, waiting for it; `what` names the caller's operation for the
    /// re-entry diagnostic (see `reentry`).
    pub(super) fn lock(self, what: &str) -> ObjectLock<'a, L> {
        if !self.try_lock_raw() {
            reentry::check_lock(self.id() as usize, what);
            let mut backoff = Backoff::default();
            loop {
                while self.get().word.holders(Ordering::Relaxed) & LOCK != 0 {
                    backoff.snooze();
                }
                if self.try_lock_raw() {
                    break;
                }
            }
        }
        ObjectLock::held(self)
    }

    pub(super) fn try_lock(self) -> Option<ObjectLock<'a, L>> {
        self.try_lock_raw().then(|| ObjectLock::held(self))
    }

    /// Sets the lock bit if it was clear; the caller then owns the lock. A compare-and-swap
    /// that retries only while the lock stays free and holder bits change under it (a
    /// holder came and went), so a failed attempt writes nothing (see
    /// `lock::SpinLock::lock` for why that matters, loom included).
    #[inline]
    pub(super) fn try_lock_raw(self) -> bool {
        self.try_lock_seen(self.get().word.holders(Ordering::Relaxed))
    }

    /// [`Obj::try_lock_raw`] for an evictor holding this object's slot on the core whose
    /// bit is `clear` (0: none), after taking its log out: once it holds the lock, it also
    /// clears that bit if the lock was taken from an object that was not biased: no read
    /// on the concurrent path can then be running (whoever cleared the bias waited for
    /// them, and only a lock holder sets it), so none can skip the slot for the missing bit
    /// (see `install`). A biased object's bit must wait until its readers are gone (or the
    /// log is in its backlog): a reader that passed the bias check may load the mask after
    /// the bit went. `None` if the lock was taken; otherwise whether the bit was cleared.
    pub(super) fn try_lock_evicting(self, clear: u64) -> Option<bool> {
        let word = &self.get().word;
        let mut now = word.holders(Ordering::Relaxed);
        while now & LOCK == 0 {
            match word.take(now, now | LOCK, Ordering::SeqCst) {
                Ok(()) => {
                    let c = if now & BIAS == 0 { clear } else { 0 };
                    if c != 0 {
                        word.clear_logs(c);
                    }
                    return Some(c != 0);
                }
                Err(seen) => now = seen,
            }
        }
        None
    }

    /// [`Obj::try_lock_raw`], starting from `seen`, a value of the word just loaded.
    #[inline]
    pub(super) fn try_lock_seen(self, seen: u64) -> bool {
        let word = &self.get().word;
        let mut now = seen;
        while now & LOCK == 0 {
            match word.take(now, now | LOCK, Ordering::SeqCst) {
                Ok(()) => return true,
                Err(seen) => now = seen,
            }
        }
        false
    }
}
