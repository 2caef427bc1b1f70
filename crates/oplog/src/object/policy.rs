//! The adaptive policy (the `object` module docs, "Representations"; 000 §2 proposes
//! K42-style online reconfiguration): its thresholds, with what they were measured
//! against; its steps, computed from the score the word's holder half keeps; the sampling
//! of updates that write nothing it sees; and the observations that move an object between
//! logged and direct: reads, evictions, flushes of full logs and sampled updates.

use super::*;

/// Logged representation: this many reads in a row that find a small batch logged
/// ([`Thresholds::small_batch`]) switch the object to direct.
pub(super) const TO_DIRECT: u64 = 4;

/// The thresholds of the adaptive policy that depend on what a read pays to take other
/// cores' logs (module docs, "Representations"), fixed per domain.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Thresholds {
    /// Logged representation: a read that finds fewer operations than this logged since
    /// the last one counts towards the switch to direct.
    small_batch: usize,
    /// Direct representation: the score's low bits weigh the updates since the last read
    /// that another thread made than the one before (the object's lines then had to move),
    /// and the updates that found the lock taken and logged themselves, up to
    /// [`WEIGHT_MAX`]. The second read in a row that finds the weight at least this
    /// switches the object back to logged; [`OVER_ONCE`] remembers the first.
    to_logged: u64,
}

impl Thresholds {
    /// Where a read takes another core's slot with a lock alone: 2 and 4.
    const LOCKED: Thresholds = Thresholds { small_batch: 2, to_logged: 4 };
    /// Where taking another core's slot sends it a barrier (the owner fast path: per-CPU
    /// slots entered by restartable sequences, or per-thread slots with asymmetric fences),
    /// which costs microseconds: a read must find 16 operations logged for logging to have
    /// paid, and 8 changes of updater between reads say that it will. Measured with two
    /// threads mixing reads and updates of one object (2-core host, 2026-11-26, 2 × 10M
    /// operations, two runs each; `Mutex`: 30-35M ops/s): at 90 % updates 2 and 4 kept the
    /// object logged, at 23M ops/s, while 16 and 8 keep it direct, at 32-33M; at 95 % 36M
    /// against 32-33M (direct or switching), at 99 % 72-75M both (logged).
    pub(super) const BARRIER: Thresholds = Thresholds { small_batch: 16, to_logged: 8 };

    /// The thresholds for a domain whose remote slot acquisitions send barriers or not.
    pub(crate) fn new(barrier: bool) -> Self {
        if barrier { Self::BARRIER } else { Self::LOCKED }
    }
}

/// Direct representation: the largest weight the score holds; the direct update that
/// brings it there switches the object back to logged (updates from several threads and
/// no read between: logging pays).
pub(super) const WEIGHT_MAX: u64 = 31;

/// Direct representation: the score's bit saying that the last read found the weight at
/// [`Thresholds::to_logged`] or more.
const OVER_ONCE: u64 = 32;

/// Logged representation: the score's bit (the one [`OVER_ONCE`] uses when direct) saying
/// that a read found logs that local absorption shrank or emptied since the object was last
/// switched. Then a read that finds nothing logged at all weighs nothing either way: the
/// updates since the last read may have cancelled each other on their core (or another
/// read took them mid-way), which says nothing of how often reads come (`read_policy`).
pub(super) const ABSORBS: u64 = 32;

/// Direct representation, in a domain whose hot objects outgrew the log cache
/// ([`Solo::outgrown`]): an object whose count of changes of updater reaches
/// [`WEIGHT_MAX`] goes back to logged only if it got there within this many nanoseconds
/// of the last time it did, and the time before that too (`Obj::back_to_logged`). Updates
/// drawn at random over many objects bring each one there now and then, and logging them
/// loses (below, [`COLD_FLUSH_NS`]); an object that two threads update in turn gets there
/// in microseconds, and its logs pay. Twice in a row was not enough: two threads each
/// updating a random one of 1,024 objects of a user's type (2-core AMD EPYC host,
/// 2026-11-29, `objects`' `logged-oplog`) brought each object to the top about once a
/// millisecond, and 2 % of those tops came within 100 µs of the last by chance, so about
/// 1,100 objects per 50 ms went back to logged and as many went direct again at their
/// first slow flush. Requiring three took that point from 166-169M updates per second
/// (85 % of the objects direct at the end) to 216M (96-98 %; a `Mutex` each: 159-164M), and
/// the counter's (`oplog`, 800 µs) from 219M to 275M, in alternated runs.
pub(super) const HOT_WINDOW_NS: u64 = 100_000;

/// The coarse time ([`STAMP`]'s units, within its span, never 0) for `back_to_logged`.
/// Under loom, a constant: the models see the second count within the window.
pub(super) fn stamp_now() -> u64 {
    if cfg!(loom) {
        return 1;
    }
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let units = (EPOCH.get_or_init(std::time::Instant::now).elapsed().as_nanos() / u128::from(STAMP_UNIT_NS)) as u64;
    (units & (STAMP >> STAMP_SHIFT)).max(1)
}

/// Whether the object whose holder half is `word` reached [`WEIGHT_MAX`] within `window`
/// nanoseconds ([`hot_window`]) of the restart its stamp records (none: not), at time
/// `now` ([`stamp_now`]).
pub(super) fn hot_again(word: u64, now: u64, window: u64) -> bool {
    let last = stamp_of(word);
    last != 0 && within(last, now, window)
}

/// [`HOT_WINDOW_NS`] for kind `L`: scaled for kinds with a lock-free direct log, whose
/// direct updates show a change of updater one in [`SAMPLE_EVERY`] per thread where the
/// others' show it one in [`LOCKED_SAMPLE_EVERY`], each weighing as much.
pub(super) fn hot_window<L: LogKind>() -> u64 {
    if <L::Direct as DirectLog<L>>::LOCK_FREE {
        HOT_WINDOW_NS * u64::from(SAMPLE_EVERY / LOCKED_SAMPLE_EVERY)
    } else {
        HOT_WINDOW_NS
    }
}

/// The stamp in holder half `word` ([`STAMP`]; 0: none).
pub(super) fn stamp_of(word: u64) -> u64 {
    (word & STAMP) >> STAMP_SHIFT
}

/// Whether stamp `now` ([`stamp_now`]) is at most `ns` nanoseconds after stamp `last`,
/// modulo the stamp's span.
fn within(last: u64, now: u64, ns: u64) -> bool {
    let span = (STAMP >> STAMP_SHIFT) + 1;
    (now + span - last) % span <= ns / u64::from(STAMP_UNIT_NS)
}

/// Logged representation, in a domain whose hot objects outgrew the log cache
/// ([`Solo::outgrown`]): a full log shared with other cores flushed more than this many
/// nanoseconds after the object's last such flush switches it to direct
/// (`Obj::observe_flush`). A log of [`SHARED_FACTOR`] × 128 operations from one core of
/// two fills in tens of microseconds for an object that takes a tenth of the updates, and
/// in tens of milliseconds for one of 1,024 drawn uniformly. Measured with two threads
/// each updating a random one of 1,024 objects of a 24-byte state (2-core Intel Xeon
/// host, 2026-11-28, two runs of four 250 ms rounds each, alternated): before these two
/// rules the objects that owned the slots (a quarter) stayed logged, at 41-77M updates/s;
/// with them every object but a few ends direct, at 90-100M in the host's faster phase
/// and 56-76M in its slower one, where a `Mutex` each made 72-88M. With 4,096 or 65,536
/// objects nothing changed (most were direct already).
///
/// [`SHARED_FACTOR`]: super::update::SHARED_FACTOR
const COLD_FLUSH_NS: u64 = 1_000_000;

/// Logged representation: a log evicted from the cache before its object's updates
/// pushed this many operations into it did not pay for its slot (a miss costs several
/// direct updates; measured with `oplog-bench objects`). Such evictions count towards the
/// switch to direct like reads that find little logged, each weighing [`THRASH_WEIGHT`];
/// an object whose backlog fills with such logs switches at once.
pub(super) const THRASH_PUSHES: usize = 8;

/// What one eviction of a log that did not pay weighs towards the switch to direct (of
/// [`TO_DIRECT`]): two in a row switch. Stronger evidence than a read that found little
/// logged (the log lost its slot before it could pay), and every miss until the switch
/// costs an eviction: with 65,536 objects updated uniformly, objects are updated about 20
/// times in a 200 ms repetition, so four evictions each would be most of their updates.
pub(super) const THRASH_WEIGHT: u64 = 2;

/// The calling thread's tag, 1 to 3: consecutive threads get different ones, so a direct
/// update can tell, from the tag the last one left in the word, whether another thread
/// made it (the adaptive policy's only clue, for free, that the object's lines move
/// between cores). Assigned once per thread from a counter that is not traced: a hint,
/// not synchronization.
#[inline]
pub(super) fn thread_tag() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    thread_local_const! {
        static MINE: std::cell::Cell<u64> = std::cell::Cell::new(0);
    }
    MINE.try_with(|mine| {
        if mine.get() == 0 {
            mine.set(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 3 + 1);
        }
        mine.get()
    })
    .unwrap_or(0)
}

/// Updates of kinds with a lock-free direct log ([`DirectLog`], the counter) whose log
/// and direct updates write nothing the policy sees: one in this many shows the adaptive
/// policy what it would otherwise miss. Direct, one per thread (a per-thread countdown,
/// from the thread's first direct update on) takes the object lock and counts as a
/// sampled direct update of the other kinds does (the thread tag, [`LOCKED_SAMPLE_EVERY`]),
/// so that an object whose updates
/// come from several threads goes back to logged. Logged, one per slot (when the slot's
/// count of pushes reaches [`LOGGED_SAMPLE`] in the period: the count is at hand, in the
/// slot or returned by the restartable sequence, where a thread-local countdown cost two
/// threads incrementing one counter 10–15 %) looks at which cores log the object
/// ([`Obj::observe_sampled_update`]), so that an object updated by one thread goes direct
/// without a read, where that costs less ([`solo`]). (Under loom every other update, so
/// that models reach both paths.)
pub(super) const SAMPLE_EVERY: u32 = if cfg!(loom) { 2 } else { 64 };

/// Where in its period ([`SAMPLE_EVERY`]) a slot's count of pushes samples a logged update:
/// half-way, so that a log's first push makes no observation (under loom, its second).
pub(super) const LOGGED_SAMPLE: u32 = if cfg!(loom) { 0 } else { SAMPLE_EVERY / 2 };

/// What a change of updater seen at a sampled direct update weighs ([`change_weight`]):
/// a sample stands for [`SAMPLE_EVERY`] updates, and 4 changes in a row between samples
/// (with no read) switch the object back to logged ([`WEIGHT_MAX`]).
pub(super) const SAMPLED_CHANGE: u64 = 8;

/// Whether this direct update of a kind with a lock-free direct log is the calling thread's
/// sampled one ([`SAMPLE_EVERY`]): a per-thread countdown, not synchronization.
#[inline(always)]
pub(super) fn sampled_direct_update() -> bool {
    thread_local_const! {
        static LEFT: std::cell::Cell<u32> = std::cell::Cell::new(0);
    }
    LEFT.try_with(|left| count_down(left, SAMPLE_EVERY)).unwrap_or(true)
}

/// One step of a per-thread countdown of period `every`: true at its first step and then
/// once every `every` steps.
#[inline(always)]
fn count_down(left: &std::cell::Cell<u32>, every: u32) -> bool {
    let n = left.get();
    left.set(if n == 0 { every - 1 } else { n - 1 });
    n == 0
}

/// One direct update in this many (per thread) of a kind whose direct updates take the
/// lock counts a change of updater; the others only leave their thread's tag.
const LOCKED_SAMPLE_EVERY: u32 = if cfg!(loom) { 1 } else { 8 };

/// What a change of updater seen at such a sampled update weighs: as many as it stands for.
pub(super) const LOCKED_SAMPLED_CHANGE: u64 = LOCKED_SAMPLE_EVERY as u64;

/// Whether this direct update of a kind whose direct updates take the lock is the calling
/// thread's sampled one ([`LOCKED_SAMPLE_EVERY`]): a per-thread countdown.
#[inline(always)]
pub(super) fn sampled_locked_update() -> bool {
    thread_local_const! {
        static LEFT: std::cell::Cell<u32> = std::cell::Cell::new(0);
    }
    LEFT.try_with(|left| count_down(left, LOCKED_SAMPLE_EVERY)).unwrap_or(true)
}

/// The [`DIRECT`] and [`SCORE`] bits of a policy.
#[inline(always)]
pub(super) fn policy_bits(direct: bool, score: u64) -> u64 {
    (if direct { DIRECT } else { 0 }) | (score << SCORE_SHIFT)
}

/// The adaptive policy's step at a read (module docs, "Representations") of an object whose
/// word is `now` and for which the read `gathered` operations, by a thread whose own core
/// has the mask bit(s) `reader` (0 if it has none), in a domain of `representation`: the
/// new representation (direct or not) and score.
#[inline(always)]
pub(super) fn read_policy<L: LogKind>(
    now: u64,
    gathered: Gathered,
    reader: u64,
    representation: Representation,
    thresholds: Thresholds,
    applies_alone: bool,
) -> (bool, u64) {
    let score = (now & SCORE) >> SCORE_SHIFT;
    if representation != Representation::Adaptive {
        // Pinned: only restart the count of direct updates since the last read.
        return (now & DIRECT != 0, 0);
    }
    if now & DIRECT != 0 {
        // Updates logged while direct (they found the lock taken) weigh as changes of updater;
        // not for kinds whose logs may be applied alone, which switch to direct without
        // gathering, so that what a read finds may have been logged before the switch.
        let logged = if applies_alone { 0 } else { gathered.ops as u64 };
        let over = (score & WEIGHT_MAX) + logged >= thresholds.to_logged;
        if over && score & OVER_ONCE != 0 { (false, 0) } else { (true, if over { OVER_ONCE } else { 0 }) }
    } else {
        // The score counts reads in a row that found little logged, or only the reader's own
        // core's logs, unless local absorption shrank what was logged (or emptied it: then
        // nothing is left to find): logging then saves nothing a lock would not. Another
        // core's logs (a producer's, read by a consumer) say logging pays: the updates stay
        // on their core, and the reader takes them in batches. Absorption says it too,
        // however little is left: each absorbed pair is two direct updates saved (an
        // rmap's fork, mapped and unmapped). (A kind with a lock-free direct log absorbs no
        // work a direct update does: that is one atomic read-modify-write.)
        let pays = gathered.absorbed && !<L::Direct as DirectLog<L>>::LOCK_FREE;
        if pays {
            return (false, ABSORBS);
        }
        if gathered.ops == 0 && gathered.cores == 0 && score & ABSORBS != 0 {
            return (false, score);
        }
        let little = gathered.ops < thresholds.small_batch || gathered.cores & !reader == 0;
        logged_step(score, u64::from(little))
    }
}

/// The logged representation's step (module docs, "Representations") from `score` at an
/// observation that weighs `weight` towards direct (0: logging pays, and the count
/// restarts): the new representation (direct or not) and score, which keeps its
/// [`ABSORBS`] bit while the object stays logged.
#[inline(always)]
pub(super) fn logged_step(score: u64, weight: u64) -> (bool, u64) {
    let (absorbs, count) = (score & ABSORBS, score & !ABSORBS);
    match weight {
        0 => (false, absorbs),
        w if count + w >= TO_DIRECT => (true, 0),
        w => (false, absorbs | (count + w)),
    }
}

/// Whether local absorption kept `kept` entries of `pushes` pushed operations, a quarter or
/// more less: work a direct update would have done (a counter's log folds every push into
/// one value; an rmap's unmap cancels its map). Then logging pays even on one core.
#[inline]
pub(super) fn absorbed(kept: usize, pushes: usize) -> bool {
    kept.saturating_mul(4) < pushes.saturating_mul(3)
}

/// Whether a read through the lock of an object whose holder half was `before` (after
/// applying what was logged), which found `logged` operations logged, lets the following
/// reads take the concurrent path. Logged, updates never revoke the bias, but a synchronize
/// that finds logs does, so the bias pays only while reads find nothing logged: a read that
/// found logs does not set it (at two threads and 90 % updates every read found logs, and
/// revoked the bias it had set itself, scanning the other CPU's reader row). Direct, each
/// update revokes it, so only a second read in a row with no update between (no tag: each
/// read clears it) restores it, against churn in write-heavy mixes.
#[inline(always)]
pub(super) fn rebias(before: u64, logged: usize) -> bool {
    before & BIAS == 0 && if before & DIRECT == 0 { logged == 0 } else { before & TAG == 0 }
}

/// What one change of updater weighs in the direct representation's policy: 1, or, for
/// kinds with a lock-free direct log, whose direct updates are seen only one in
/// [`SAMPLE_EVERY`] per thread, [`SAMPLED_CHANGE`].
#[inline(always)]
pub(super) fn change_weight<L: LogKind>() -> u64 {
    if <L::Direct as DirectLog<L>>::LOCK_FREE { SAMPLED_CHANGE } else { 1 }
}

/// `word` after a direct update by the thread tagged `tag` that found `logged` updates
/// logged (they found the lock taken): the score's weight grows by `change` if another
/// thread made the last tagged direct update since the last read (a sampled one, or the
/// first since the read: [`change_weight`]), and by `logged`; the word holds this thread's
/// tag. At
/// [`WEIGHT_MAX`] the object goes back to logged, with a fresh score (module docs,
/// "Representations"). A domain pinned to direct keeps counting (its reads reset the
/// count) but never switches: `adaptive` is false there.
///
/// The inline path ([`Obj::update_direct_fast`]) counts after the lock's compare-and-swap:
/// at two threads updating many objects at random, whether the last updater was the other
/// thread is a coin toss, and the branch on it mispredicts half the time; before the
/// compare-and-swap, each miss delayed the lock, while after it the branch resolves as the
/// compare-and-swap waits for its line (two threads each updating a random one of 1,024
/// objects of a 24-byte state, pinned direct, 2-core Intel Xeon host, 2026-11-28, medians
/// of nine alternated runs: 51.8M updates/s counted before, 62.1M after; the same number
/// of instructions per update, 83 under callgrind). Computing the count without a branch
/// cost 21 more instructions per update and was no faster at two threads.
#[inline(always)]
pub(super) fn count_direct_update(word: u64, tag: u64, logged: u64, adaptive: bool, change: u64) -> u64 {
    // No tag: a read came after the last direct update, which says nothing of its thread.
    let last = (word & TAG) >> TAG_SHIFT;
    if last == tag && logged == 0 {
        // The same thread again (the common case of a direct object): nothing changes.
        return word;
    }
    let word = (word & !TAG) | (tag << TAG_SHIFT);
    let changed = last != 0 && last != tag;
    if !changed && logged == 0 {
        // The first update since a read: only the tag.
        return word;
    }
    let score = (word & SCORE) >> SCORE_SHIFT;
    let before = score & WEIGHT_MAX;
    let weight = (before + u64::from(changed) * change).saturating_add(logged).min(WEIGHT_MAX);
    // Only a domain pinned to direct keeps a count at the top (an adaptive one switches as
    // the count gets there): it stays, so that the inline path ([`Obj::update_direct_fast`],
    // which asks as if the domain adapted) takes the counted path once, not at every change.
    if adaptive && weight == WEIGHT_MAX && before != WEIGHT_MAX {
        return word & !(DIRECT | SCORE);
    }
    (word & !SCORE) | (((score & OVER_ONCE) | weight) << SCORE_SHIFT)
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// The adaptive policy's step at a read (module docs, "Representations"): `gathered`
    /// operations were logged since the last synchronize. `lock` is the object's lock,
    /// which sets the new policy when it unlocks.
    pub(super) fn observe_read(self, lock: &mut ObjectLock<'a, L>, gathered: Gathered) {
        let now = self.get().word.holders(Ordering::Relaxed);
        let (direct, score) = self.read_step(now, gathered);
        self.set_policy(lock, now, direct, score, true);
        if now & TAG != 0 {
            // No direct update since this read: the unlock clears the tag (`rebias`).
            lock.policy = Some(policy_bits(direct, score));
        }
    }

    /// [`read_policy`] for a read of this object by the calling thread, whose holder half
    /// is `now` and which `gathered` operations: the new representation (direct or not)
    /// and score. The mask bit of the reader's own core ([`core_bit`]) is looked up only
    /// when some core's logs were gathered.
    #[inline(always)]
    fn read_step(self, now: u64, gathered: Gathered) -> (bool, u64) {
        let d = self.domain();
        let reader = if gathered.cores == 0 { 0 } else { d.slots.caller_core().map_or(0, core_bit) };
        read_policy::<L>(now, gathered, reader, d.representation, d.thresholds, self.applies_alone())
    }

    /// The holder bits ([`HOLDERS`](crate::word::HOLDERS) but the lock) a read through
    /// the lock of an object whose holder half is `now` leaves, having `gathered`
    /// operations, before it decides on the bias ([`rebias`]): the policy's step at the
    /// read, no tag (no direct update since this read), and the stamp unless the step
    /// switches the object, as on the general path (`ObjectLock`'s unlock). `None` if the
    /// step switches the object to direct, which gives up its slots first (`set_policy`).
    #[inline(always)]
    pub(super) fn read_bits(self, now: u64, gathered: Gathered) -> Option<u64> {
        let (direct, score) = self.read_step(now, gathered);
        let stays = direct == (now & DIRECT != 0);
        (!direct || stays).then(|| (now & BIAS) | if stays { now & RESTART } else { 0 } | policy_bits(direct, score))
    }

    /// The adaptive policy's view of evictions of this object's logs from the log cache
    /// (module docs, "Representations"): `thrashing` if they held fewer than
    /// [`THRASH_PUSHES`] operations each, which counts `weight` towards the switch to
    /// direct; otherwise logging pays, and the count restarts. The object lock is held.
    pub(super) fn observe_evictions(self, lock: &mut ObjectLock<'a, L>, thrashing: bool, weight: u64) {
        if self.observe_logged(lock, if thrashing { weight } else { 0 }) {
            self.domain().solo.thrashed();
        }
    }

    /// The adaptive policy's view of a full log applied or handed off (module docs,
    /// "Representations"): from one core only (`one_core`: no other core logs the object)
    /// it counts towards the switch to direct, as a read that finds one core's logs does;
    /// otherwise logging pays, and the count restarts. The object lock is held.
    ///
    /// In a domain whose hot objects outgrew the log cache ([`Solo::outgrown`]), a flush of
    /// a log that other cores share comes with a time stamp in the word: one that comes
    /// more than [`COLD_FLUSH_NS`] after the last (or after the object came back to
    /// logged, whose stamp it keeps: `back_to_logged`) switches the object to direct (its logs
    /// fill slowly: it is one of many objects drawn now and then, whose lines leave the
    /// cache between pushes). Not for kinds with a lock-free direct log (the counter), whose
    /// logged update folds into its slot for less than a direct one's atomic add.
    pub(super) fn observe_flush(self, lock: &mut ObjectLock<'a, L>, one_core: bool) {
        let d = self.domain();
        if one_core
            || <L::Direct as DirectLog<L>>::LOCK_FREE
            || d.representation != Representation::Adaptive
            || !d.solo.outgrown()
        {
            self.observe_logged(lock, u64::from(one_core));
            return;
        }
        let now = self.get().word.holders(Ordering::Relaxed);
        let at = stamp_now();
        let last = stamp_of(now);
        if last != 0 && !within(last, at, COLD_FLUSH_NS) {
            // Switching: the stamp goes (a direct object's stamps a restart of its count).
            self.observe_logged(lock, TO_DIRECT);
        } else if !self.observe_logged(lock, 0) {
            let policy = lock.policy.unwrap_or(now & (DIRECT | SCORE));
            lock.policy = Some(policy | (at << STAMP_SHIFT));
        }
    }

    /// The adaptive policy's view of a logged object at a sampled update ([`SAMPLE_EVERY`])
    /// of a kind with a lock-free direct log, whose updates write nothing else it sees: if
    /// no other core's bit is in the mask, only the calling thread logs the object, which
    /// counts towards direct as a flush from one core does, where a direct update (one
    /// atomic read-modify-write) costs less than a logged one; where the domain measured
    /// the opposite, the object stays logged and nothing is counted, unless the domain's
    /// hot objects outnumber its log cache ([`solo`]). If other cores log it, logging
    /// pays. A try-lock: a holder's work is an observation of its own.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_sampled_update(self) {
        let d = self.domain();
        if d.representation != Representation::Adaptive {
            return;
        }
        let Some(core) = d.slots.caller_core() else { return };
        // Nothing to count and no score to reset: no write (the word's line stays shared
        // between the cores that log the object).
        if self.others_log(core, Ordering::Relaxed) {
            if self.get().word.holders(Ordering::Relaxed) & SCORE == 0 {
                return;
            }
        } else if d.solo.stays_logged() {
            return;
        }
        let Some(mut lock) = self.try_lock() else { return };
        let one_core = !self.others_log(core, Ordering::Relaxed);
        if !(one_core && d.solo.stays_logged()) {
            self.observe_flush(&mut lock, one_core);
        }
    }

    /// The logged representation's step ([`logged_step`]) at an observation other than a
    /// read, weighing `weight` towards direct; whether it switches the object to direct.
    /// The object lock is held.
    fn observe_logged(self, lock: &mut ObjectLock<'a, L>, weight: u64) -> bool {
        let now = self.get().word.holders(Ordering::Relaxed);
        if self.domain().representation != Representation::Adaptive || now & DIRECT != 0 {
            return false;
        }
        let (direct, score) = logged_step((now & SCORE) >> SCORE_SHIFT, weight);
        self.set_policy(lock, now, direct, score, false);
        direct
    }

    /// Makes the unlock of `lock` leave the object in the representation `direct` with the
    /// policy's `score`, giving up its slots first on a switch to direct; `now` is the word
    /// as the holder last loaded it, and `read` says whether the holder is a read, which has
    /// just gathered (so the slots it took are in spin mode: giving them up needs no
    /// barrier). Kinds whose logs may be applied alone give up their slots only then, or,
    /// where they do not declare it (they learned it), where that needs no barrier (one
    /// thread's objects: the calling thread's own slot); a switch on other evidence
    /// (evictions, flushes) otherwise leaves their logs to the next read or eviction (module
    /// docs, "Representations"). The object lock is held.
    pub(super) fn set_policy(self, lock: &mut ObjectLock<'a, L>, now: u64, direct: bool, score: u64, read: bool) {
        if direct && now & DIRECT == 0 {
            if !self.applies_alone() || read {
                self.give_up_slots(true);
            } else if !L::APPLY_ALONE {
                self.give_up_slots(false);
            }
        }
        if policy_bits(direct, score) != now & (DIRECT | SCORE) {
            lock.policy = Some(policy_bits(direct, score));
        }
    }
}
