//! Applying an object's backlog (the `object` module docs, "Update, logged" step 5, and
//! "The cut"): the evicted and handed-off logs taken out under the object lock, after the
//! concurrent readers are excluded; a full ordered backlog applied up to the stamp cut
//! without taking a slot; a backlog applied alone. `crate::backlog` holds the domain's
//! table the logs wait in.

use super::*;

/// A backlog of evicted logs this many times over its limit makes the next install wait
/// for the object lock (a synchronize already in progress) instead of leaving the backlog
/// to it (`Obj::apply_backlog`). Full logs have their own caps ([`SHARED_FACTOR`],
/// [`OVERFULL_FACTOR`]).
///
/// [`SHARED_FACTOR`]: super::update::SHARED_FACTOR
/// [`OVERFULL_FACTOR`]: super::update::OVERFULL_FACTOR
const HARD_LIMIT_FACTOR: usize = 4;

impl<'a, L: LogKind> Obj<'a, L> {
    /// [`Obj::apply_backlog`], keeping the first panic of an operation it applies in
    /// `deferred` instead of unwinding (the update that called it is not yet logged, or
    /// must return normally first).
    #[cold]
    #[inline(never)]
    pub(super) fn apply_backlog_keeping_panic(
        self,
        waiting: usize,
        deferred: &mut Option<Box<dyn Any + Send>>,
    ) -> bool {
        match catch_unwind(AssertUnwindSafe(|| self.apply_backlog(waiting))) {
            Ok(checked) => checked,
            Err(p) => {
                deferred.get_or_insert(p);
                // The panicking operation was dropped and the rest kept for the next
                // synchronize; do not apply again for this update.
                false
            }
        }
    }

    /// Whether the mask shows a core other than `core` logging this object (a core sharing
    /// `core`'s bit, beyond [`CORE_BIT_COUNT`] cores, does not show).
    #[inline]
    pub(super) fn others_log(self, core: usize, order: Ordering) -> bool {
        self.get().word.logs(order) & CORE_BITS & !core_bit(core) != 0
    }

    /// Applies this object's backlog of `waiting` evicted logs before it takes a slot again
    /// (see `install`). While another synchronize of this object runs, that one (or the
    /// next) takes the backlog and the install goes ahead, until the backlog is
    /// [`HARD_LIMIT_FACTOR`] times over its limit: then this waits for the object lock.
    /// Without that wait, a synchronizer preempted while holding the lock let every other
    /// thread's evictions grow the backlog for as long as it stayed off the CPU. Returns
    /// whether the next install should check the backlog again (it synchronized).
    #[cold]
    fn apply_backlog(self, waiting: usize) -> bool {
        if reentry::involved(self.id() as usize) {
            // This thread holds the lock or reads the object (an update from inside the
            // object's own `exec` or read closure): the synchronize it is running, or the
            // next, takes the backlog.
            return false;
        }
        let mut lock = match self.try_lock() {
            Some(lock) => lock,
            None if waiting >= HARD_LIMIT_FACTOR * self.domain().backlog_limit => self.lock("update"),
            // A synchronize is running: it or the next will take the backlog.
            None => return false,
        };
        if self.applies_alone() {
            // Their evictions were weighed one by one, by the evictors that applied them (and
            // a folded log's batch length is no count of operations).
            self.apply_backlog_alone();
        } else {
            // Up to the cut, taking no slot, where the kind cuts; otherwise (or where the
            // cut left too much) every logged operation, taking every slot that holds some.
            let gathered = self.apply_backlog_cut().unwrap_or_else(|| self.sync_locked().0);
            // A backlog full of logs that held little: the object keeps losing its slots.
            // Otherwise, full logs handed off by one core's owner, which local absorption did
            // not shrink, and no other core's: a flush from one core (an object updated by
            // one thread goes direct whatever its kind).
            if gathered.thrashing() {
                self.observe_evictions(&mut lock, true, TO_DIRECT);
            } else {
                self.observe_flush(&mut lock, gathered.cores.count_ones() == 1 && !gathered.absorbed);
            }
        }
        drop(lock);
        true
    }

    /// Applies the object's backlog up to the stamp cut ([`Obj::stamp_cut`]) for kinds that
    /// cut ([`LogKind::CUTS`]): no slot is taken, so no barrier is sent, and the operations
    /// stamped after the cut stay in the backlog (module docs, "The cut"). Returns what the
    /// backlog held, or `None` where the kind does not cut or the backlog is empty; also
    /// synchronizes the whole object where the cut left more than half of the backlog's
    /// operations (a slot's log began long ago: its core updated the object once and went
    /// on to others), which bounds the backlog. The object lock is held.
    fn apply_backlog_cut(self) -> Option<Gathered> {
        if !L::CUTS {
            return None;
        }
        // Before the backlog is taken (module docs, "The cut").
        let (below, logging) = self.stamp_cut();
        let (mut batch, mut gathered) = self.take_backlog()?;
        // For the policy, as a synchronize would have found them: the cores that log the
        // object now (or whose slot holds another object's log).
        gathered.cores |= logging;
        let taken = L::batch_len(&batch);
        L::cut(&mut batch, below);
        let left = self.apply_locked(batch, &mut Lease::<L>::default());
        if left * 2 > taken {
            self.sync_locked();
        }
        Some(gathered)
    }

    /// The stamp below which every operation logged for this object and not yet applied
    /// is in its backlog, or belongs to an update that has not completed (module docs,
    /// "The cut"): the clock's reading now, less its uncertainty window, or the lowest low
    /// mark of the slots of the cores in the object's mask, if lower; and the mask bits
    /// ([`core_bit`]) of the cores whose slot has a mark. Reads those slots' marks without
    /// taking them. The object lock is held.
    fn stamp_cut(self) -> (u64, u64) {
        let d = self.domain();
        // First: the reading comes before the loads below (`ordo::Clock::now`).
        let mut below = d.clock.now().saturating_sub(d.clock.boundary());
        let bits = self.get().word.logs(Ordering::SeqCst) & CORE_BITS;
        // The cores in use after the mask: a core that set its bit was allocated before.
        let (index, mut marked) = (self.slot_index(), 0);
        for core in cores_of(bits, d.slots.cores_in_use()) {
            let mark = d.slots.low_mark(core, index);
            if mark != NO_LOW_MARK {
                (below, marked) = (below.min(mark), marked | core_bit(core));
            }
        }
        (below, marked)
    }

    /// Applies the object's backlog and nothing else: no slot is taken, so no barrier is
    /// sent (kinds whose logs may be applied alone, [`LogKind::APPLY_ALONE`]; each core's
    /// handed-off or evicted logs are older than what its slot holds now, so per-core order
    /// is kept). The object lock is held.
    fn apply_backlog_alone(self) {
        if let Some((batch, _)) = self.take_backlog() {
            self.apply_locked(batch, &mut Lease::<L>::default());
        }
    }

    /// The object's whole backlog as a batch to apply alone, to which the caller adds a
    /// log. The object lock is held. Taking it all keeps the backlog free of carried
    /// operations while the batch applies: those of an earlier panic come first in it, and
    /// a panic in this batch stores what it did not run as the only carry.
    pub(super) fn backlog_batch(self) -> L::Batch {
        self.take_backlog().map_or_else(L::Batch::default, |(batch, _)| batch)
    }

    /// Takes the object's backlog as one batch (the carried operations first, then the
    /// evicted and handed-off logs, oldest first) with what those logs held; `None` if it
    /// has none. The object lock is held. Concurrent readers leave first
    /// ([`Obj::exclude_readers`]): once [`BACKLOG`] is clear, a reader that finds no slot
    /// publishing the object takes it for quiescent and reads the instance, which lacks the
    /// backlog's operations until the caller applies them. (A backlog applied up to its
    /// cut, or alone, used to exclude them only once taken: a thread reading a biased
    /// ordered set it had just updated could miss its own handed-off logs.)
    pub(super) fn take_backlog(self) -> Option<(L::Batch, Gathered)> {
        if self.get().word.logs(Ordering::SeqCst) & BACKLOG == 0 {
            return None;
        }
        self.exclude_readers();
        let backlog = self.domain().backlogs.take(self.id(), &self.get().word)?;
        let logs = backlog.evicted.len();
        let mut batch = backlog.carry;
        let carried = L::batch_len(&batch);
        let (mut cores, mut pushes) = (0, 0);
        for Parked { core, pushes: p, mut log } in backlog.evicted {
            L::gather(&mut batch, core, &mut log);
            cores |= core_bit(core);
            pushes += p as usize;
        }
        let ops = L::batch_len(&batch) - carried;
        let absorbed = absorbed(ops, pushes);
        Some((batch, Gathered { ops, absorbed, cores, backlog_logs: logs, backlog_ops: ops, backlog_pushes: pushes }))
    }
}
