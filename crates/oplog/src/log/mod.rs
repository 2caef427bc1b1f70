//! Log kinds: what a per-core log holds and how logs are merged and applied (000 §5.2).
//!
//! OpLog's mechanics (slots, the log cache, synchronize) are generic over a [`LogKind`],
//! which decides three things:
//!
//! * what one core's log for one object is ([`LogKind::Log`]) and how an operation is
//!   pushed onto it, including *local absorption* (000 §4.2: a push that cancels or
//!   combines with an entry already in this core's log);
//! * how the logs gathered by one synchronize become one sequence ([`LogKind::gather`]
//!   into a [`LogKind::Batch`]), including *global absorption* during synchronize (000
//!   §5.2 `try_absorb`);
//! * how that sequence is applied to the one internal instance ([`LogKind::apply`]).
//!
//! Three kinds come with the crate:
//!
//! | kind | log | merge | reads the clock |
//! |---|---|---|---|
//! | [`Ordered`] | queue of timestamped operations | by timestamp, ties by core id | yes |
//! | [`Unordered`] | queue of operations that commute | concatenation | no |
//! | [`CounterLog`] | one folded integer (000 Figure 8) | sum | no |
//!
//! Users add their own by implementing [`LogKind`]; most users only implement [`Update`]
//! for an enum of their type's update operations and pick [`Ordered`] or [`Unordered`].

mod counter;
mod queue;

pub use counter::CounterLog;
pub use queue::{LocalLog, Ordered, Queue, QueueBatch, QueueLog, Unordered};

use crate::primitive::thread_local_const;
use std::cell::Cell;
use std::collections::VecDeque;

/// A kind of per-core log (000 Figure 6: `Log::push`, `Log::apply`, `Log::try_absorb`).
///
/// # Contract
///
/// OpLog calls these functions with the object's slot or object lock held, never two at
/// once for the same log or batch. `apply` may run user code that panics: it must remove
/// each operation from the batch *before* running it, so that after a panic the batch
/// holds exactly the operations not yet started (OpLog keeps them for the next
/// synchronize). No function here may call back into the same OpLog object.
pub trait LogKind: Sized + Send + Sync + 'static {
    /// The underlying sequential type (the "internal instance", 000 §4.1).
    type State: Send;
    /// One deferred update operation.
    type Op: Send;
    /// One core's log for one object.
    type Log: Default + Send;
    /// Operations gathered by a synchronize, in the order they will be applied, plus any
    /// left over from an earlier synchronize in which an operation panicked.
    type Batch: Default + Send;

    /// The direct representation's shared log, and where the instance lives
    /// ([`DirectLog`]): `()` for kinds whose instance is in the object's entry and whose
    /// direct updates take the object lock (every kind but a folded one like the counter,
    /// whose value is its direct log).
    type Direct: DirectLog<Self>;

    /// Whether pushes need a timestamp. When false OpLog never reads the clock for this
    /// kind, and every stamp passed to [`LogKind::push`] is 0.
    const ORDERED: bool;

    /// Whether one core's log may be applied alone, before the other cores' logs of the
    /// same object are gathered. True only when every operation commutes with every other
    /// one *and* applying any subset gives a state some order of those operations would
    /// (a counter's deltas). Then an update that evicts an object's log from the log cache
    /// applies that log at once, and a backlog of handed-off logs that reaches its limit is
    /// applied alone; otherwise the evicted log waits in the backlog and a full backlog
    /// synchronizes the whole object. Default false: an [`Unordered`] log may rely on seeing
    /// every core's log together (for example global absorption pairing a `remove` with its
    /// `add` from another core). Queue kinds take [`Update::APPLY_ALONE`].
    const APPLY_ALONE: bool = false;

    /// Slots in each core's log cache of a domain whose [`Config`](crate::Config) does not
    /// set [`Config::cache_slots`](crate::Config::cache_slots): a power of two. Default
    /// [`DEFAULT_CACHE_SLOTS`](crate::DEFAULT_CACHE_SLOTS) (256). Each slot costs 128 bytes
    /// per core, and keeps its log's storage: a kind whose log grows with its operations
    /// holds up to a full log per slot that objects update.
    const CACHE_SLOTS: usize = crate::DEFAULT_CACHE_SLOTS;

    /// Whether [`LogKind::cut`] limits an apply to the operations stamped before a time
    /// (only for [`LogKind::ORDERED`] kinds). Then a backlog of handed-off logs that
    /// reaches its limit is applied up to a cut that no slot's log precedes, read from the
    /// slots' low marks without taking any slot: no barrier, and the owners keep pushing
    /// (`object` module docs, "The cut"). Otherwise a full backlog synchronizes the
    /// whole object. Default false; the crate's [`Ordered`] kinds cut.
    const CUTS: bool = false;

    /// Limits the next [`LogKind::apply`] of `batch` to its operations stamped before
    /// `below`: that apply runs those, in order, and leaves every later one in the batch,
    /// in an order the apply after it keeps (OpLog keeps them for the next synchronize).
    /// Called only where [`LogKind::CUTS`] is true, after everything is gathered into
    /// `batch` and before it is applied. The default does nothing.
    fn cut(batch: &mut Self::Batch, below: u64) {
        let _ = (batch, below);
    }

    /// Whether the [`LogKind::apply`] of `batch` that just returned showed that this kind's
    /// logs may be applied alone after all, though [`LogKind::APPLY_ALONE`] is false: it
    /// ran no global absorption (an [`Unordered`] kind, whose operations commute, with the
    /// default [`Update::absorb_global`]). OpLog then treats the domain's objects as it
    /// treats those of an `APPLY_ALONE` kind: a full or evicted log is applied alone (no
    /// barrier, no other core's slot), a direct update leaves what is logged to the next
    /// read, and a switch to direct gathers only what it can take without a barrier.
    /// Default false.
    fn applied_without_global_absorption(batch: &Self::Batch) -> bool {
        let _ = batch;
        false
    }

    /// Whether this kind's global absorption is [`Update::absorb_global`]'s default, which
    /// pairs nothing across cores, shown by running it on no operations against `state`
    /// (a new object's instance, before anyone else can reach it): then the kind's logs
    /// may be applied alone, as [`LogKind::applied_without_global_absorption`] would show
    /// at the first apply. OpLog asks when a domain's first object is made, so that the
    /// domain's updates are treated one way from the start (crate docs, "Barriers").
    /// Default false.
    fn absorbs_nothing_globally(state: &Self::State) -> bool {
        let _ = state;
        false
    }

    /// Appends `op` to this core's `log` with timestamp `stamp`, or absorbs it into an
    /// entry already there. Returns the number of entries the log now holds; OpLog flushes
    /// (synchronizes the object) when it reaches the domain's limit. Kinds that fold
    /// operations into a fixed-size value return 0.
    fn push(log: &mut Self::Log, op: Self::Op, stamp: u64) -> usize;

    /// Whether the next [`LogKind::push`] to `log` stores its operation without allocating
    /// (`true` where the kind cannot tell). OpLog's inline update path pushes only then,
    /// and leaves a push that grows the log to its out-of-line path.
    #[inline(always)]
    fn push_fits(log: &Self::Log) -> bool {
        let _ = log;
        true
    }

    /// Whether `log` holds nothing to apply.
    fn is_empty(log: &Self::Log) -> bool;

    /// Takes a full `log` out of its slot for the object's backlog, leaving an empty one
    /// that is ready for as many entries (the owner's hand-off; the log is applied, and
    /// freed, by whichever thread synchronizes next). The default leaves `Default::default()`.
    fn take_full(log: &mut Self::Log) -> Self::Log {
        std::mem::take(log)
    }

    /// Moves every entry of `log`, the log of core `core`, into `batch`, leaving `log`
    /// empty but, where it can, with its storage kept for reuse. Called for the logs of
    /// one synchronize in this order: logs evicted from the log cache (oldest first), then
    /// each core's cached log by ascending core id.
    fn gather(batch: &mut Self::Batch, core: usize, log: &mut Self::Log);

    /// How many operations `batch` still holds (folded kinds: 1 if it holds a non-zero
    /// change, else 0).
    fn batch_len(batch: &Self::Batch) -> usize;

    /// Orders what was gathered since the last call after what the batch already held,
    /// applies global absorption, then applies the operations to `state` in order,
    /// removing each from `batch` before running it.
    fn apply(state: &mut Self::State, batch: &mut Self::Batch);

    /// Applies one operation to `state` at once: an update of an object in the direct
    /// representation ([`Representation::Direct`](crate::Representation::Direct)), after
    /// every logged operation has been applied. The default pushes it to an empty log and
    /// applies that; kinds override it to skip the log.
    fn exec(state: &mut Self::State, op: Self::Op) {
        let mut log = Self::Log::default();
        Self::push(&mut log, op, 0);
        let mut batch = Self::Batch::default();
        Self::gather(&mut batch, 0, &mut log);
        Self::apply(state, &mut batch);
    }
}

/// The direct representation's log, and where the instance lives. `()`, the kind without
/// one: the instance is in the object's slab entry, and direct updates take the object lock
/// and apply in place ([`LogKind::exec`]). A *lock-free* direct log (the counter's sum,
/// [`CounterLog`]) holds the instance itself, one value that direct updates fold into with
/// one atomic read-modify-write each, without the lock, and that applying a batch folds
/// into the same way; the entry then keeps nothing of it ([`DirectLog::Stored`] is `()`),
/// and readers and lock holders work on a *lease*: the value loaded at one instant (by a
/// synchronize, at the instant it holds the slots that publish the object; with nothing
/// logged, before it checks that once more), plus what the holder applied or changed
/// (`object` module docs, "Representations").
///
/// A kind with a lock-free direct log must have [`LogKind::APPLY_ALONE`]: its direct
/// updates run while the lock's holder applies other logs.
pub trait DirectLog<L: LogKind>: Send + Sync + Sized {
    /// Whether direct updates push here ([`DirectLog::push`]) instead of taking the lock.
    const LOCK_FREE: bool;

    /// What the object's slab entry keeps of the instance: the instance itself, or `()`
    /// where this log holds it.
    type Stored: Send;

    /// A reader's or lock holder's copy of the instance, where this log holds it (`()`
    /// where the entry does): see [`DirectLog::lease`].
    type Lease: Default;

    /// Splits a new object's instance into what its entry keeps and this log.
    fn split(state: L::State) -> (Self::Stored, Self);

    /// Joins them back into the instance ([`DirectLog::split`]'s inverse). Called once
    /// everything is applied and no update can run (the object's last handle is being
    /// consumed).
    fn join(&self, stored: Self::Stored) -> L::State;

    /// Folds `op` in, or gives it back (`Err`) if this kind has no lock-free direct log.
    fn push(&self, op: L::Op) -> Result<(), L::Op>;

    /// Folds a gathered `batch` in without the object lock, as [`DirectLog::push`] folds
    /// one operation (an evicted log: `object`'s `eviction`), emptying it. Called only
    /// where [`DirectLog::LOCK_FREE`].
    fn fold(&self, batch: &mut L::Batch);

    /// The instance as it is now, for a read or a lock holder: one load where this log
    /// holds it, nothing otherwise.
    fn lease(&self) -> Self::Lease;

    /// The instance that `lease` (with the entry's part `stored`) shows.
    fn view<'s>(stored: &'s Self::Stored, lease: &'s Self::Lease) -> &'s L::State;

    /// [`DirectLog::view`], for a lock holder that may change the instance: the change
    /// takes effect with [`DirectLog::commit`].
    fn view_mut<'s>(stored: &'s mut Self::Stored, lease: &'s mut Self::Lease) -> &'s mut L::State;

    /// Makes what a lock holder changed through [`DirectLog::view_mut`] part of the
    /// instance (where this log holds it: the change, added to what direct updates added
    /// meanwhile). The object lock is held.
    fn commit(&self, lease: &Self::Lease);

    /// Applies `batch` ([`LogKind::apply`]'s contract), and to `lease` too. The object
    /// lock is held and concurrent readers are excluded.
    fn apply(&self, stored: &mut Self::Stored, lease: &mut Self::Lease, batch: &mut L::Batch);

    /// Applies one operation at once ([`LogKind::exec`]). The object lock is held and
    /// concurrent readers are excluded.
    fn exec(&self, stored: &mut Self::Stored, op: L::Op);
}

/// No direct log: the instance is in the entry, and direct updates take the object lock.
impl<L: LogKind> DirectLog<L> for () {
    const LOCK_FREE: bool = false;
    type Stored = L::State;
    type Lease = ();

    fn split(state: L::State) -> (L::State, ()) {
        (state, ())
    }

    fn join(&self, stored: L::State) -> L::State {
        stored
    }

    #[inline(always)]
    fn push(&self, op: L::Op) -> Result<(), L::Op> {
        Err(op)
    }

    fn fold(&self, _: &mut L::Batch) {
        unreachable!("no lock-free direct log to fold into")
    }

    #[inline(always)]
    fn lease(&self) {}

    #[inline(always)]
    fn view<'s>(stored: &'s L::State, _: &'s ()) -> &'s L::State {
        stored
    }

    #[inline(always)]
    fn view_mut<'s>(stored: &'s mut L::State, _: &'s mut ()) -> &'s mut L::State {
        stored
    }

    #[inline(always)]
    fn commit(&self, _: &()) {}

    #[inline(always)]
    fn apply(&self, stored: &mut L::State, _: &mut (), batch: &mut L::Batch) {
        L::apply(stored, batch);
    }

    #[inline(always)]
    fn exec(&self, stored: &mut L::State, op: L::Op) {
        L::exec(stored, op);
    }
}

/// A deferrable update operation on a sequential type: the `Op` of 000 Figure 6.
///
/// Implement it for an enum of your type's update methods (the "blind" methods whose
/// effect can happen after they return, 000 §4.1) and wrap the type in
/// [`OpLog`](crate::OpLog)`<`[`Ordered`]`<YourOp>>`, or [`Unordered`] when every pair of
/// operations commutes.
pub trait Update: Send + Sized + 'static {
    /// The sequential type this operation updates.
    type Target: Send;

    /// Whether any subset of the logged operations may be applied alone, before the other
    /// cores' logs are gathered ([`LogKind::APPLY_ALONE`]): true only when every operation
    /// commutes with every other one, so any subset, applied in any order, gives a state
    /// some order of those operations would (adds to counters, unions of sets), and
    /// [`Update::absorb_global`] does not rely on seeing every core's log. Then a full log
    /// handed off by its owner, or evicted, is applied under the object lock without
    /// taking any other core's slot (no barrier), which keeps update-only workloads
    /// scaling. Default false: then a full log waits in the object's backlog, and a full
    /// backlog synchronizes the whole object, taking every core's slot (with its spin
    /// lock: such a kind's updates leave their slots in spin mode, so that they never send
    /// a barrier, at one compare-and-swap each; crate docs, "Barriers").
    ///
    /// An [`Unordered`] kind that keeps the default [`Update::absorb_global`] needs no
    /// declaration: its operations commute (the contract of `Unordered`) and nothing pairs
    /// them across cores, so OpLog applies its full and evicted logs alone: making the
    /// domain's first object runs the kind's global absorption on no operations, which
    /// shows that the default ran ([`LogKind::absorbs_nothing_globally`]; an apply would
    /// show it too, [`LogKind::applied_without_global_absorption`]). Two threads each updating a
    /// random one of 16 or 256 objects that count requests, bytes and the largest response
    /// (`oplog-bench objects`' `RouteStats`, only `exec`; 2-core Intel Xeon host,
    /// 2026-11-28, medians of five alternated runs) made 60M and 56M updates/s with every
    /// full log handed off to the backlog, 110M and 109M with them applied alone, against
    /// 21M and 62M for one `std` mutex per object. Declare it for an `Unordered` kind whose
    /// own global absorption pairs nothing across cores, so that its logs are applied
    /// alone too; and for any kind whose logs may be, so that it holds before the first
    /// synchronize (a kind that learns it is treated as one that declares it from then on,
    /// except that a switch to direct still gives up the object's slots where that needs no
    /// barrier, and a hot object's miss takes a slot rather than apply in place).
    const APPLY_ALONE: bool = false;

    /// Runs the operation on the internal instance (000 Figure 6 `Op::exec`).
    fn exec(self, target: &mut Self::Target);

    /// Local absorption (000 §4.2, §5.2): called when this operation is about to be
    /// appended to the calling core's log, which holds `log` (oldest first). Return `None`
    /// if the operation was absorbed: it cancelled an entry (remove it from `log`) or was
    /// combined into one (modify it in `log`). Return `Some(self)` to append it.
    ///
    /// Absorption must not change what any read can observe. Cancelling `add(x)` with a
    /// later `remove(x)` on the same core is only safe when no other core can act on `x`
    /// in between, for example when `x` is a unique identity owned by one thread (000
    /// §5.2 keeps rmap regions from being reused while logged). The default absorbs
    /// nothing.
    fn absorb_local(self, log: &mut LocalLog<'_, Self>) -> Option<Self> {
        let _ = log;
        Some(self)
    }

    /// Global absorption during synchronize (000 §5.2 `try_absorb`): `ops` is every
    /// operation about to be applied, in order, and `target` the instance before any of
    /// them runs. Remove or rewrite operations whose combined effect is nothing, such as a
    /// `remove(x)` whose `add(x)` is still in `ops` and was never applied. The same safety
    /// rule as [`Update::absorb_local`] applies. The default does nothing; an
    /// [`Unordered`] kind that keeps it has its logs applied alone, as if it declared
    /// [`Update::APPLY_ALONE`] (OpLog learns it when the domain's first object is made,
    /// running this absorption on no operations: [`LogKind::absorbs_nothing_globally`]).
    /// An override is called that way too, once per domain.
    fn absorb_global(target: &Self::Target, ops: &mut VecDeque<Self>) {
        let _ = target;
        note_default_global_absorption(ops);
    }
}

thread_local_const! {
    /// The address of the operations that the default [`Update::absorb_global`] last ran
    /// on in this thread, or 0 ([`default_global_absorption_ran_on`]).
    static DEFAULT_GLOBAL_ABSORPTION: Cell<usize> = Cell::new(0);
}

/// Records that the default [`Update::absorb_global`] ran on `ops`. Only that default
/// calls it (it is not public): an override never records anything.
fn note_default_global_absorption<U>(ops: &VecDeque<U>) {
    let _ = DEFAULT_GLOBAL_ABSORPTION.try_with(|c| c.set(std::ptr::from_ref(ops).addr()));
}

/// Forgets what [`note_default_global_absorption`] recorded: called before a kind's
/// global absorption runs, so that a record left by another apply whose operations sat
/// at the same address is never taken for this one's.
pub(crate) fn forget_default_global_absorption() {
    let _ = DEFAULT_GLOBAL_ABSORPTION.try_with(|c| c.set(0));
}

/// Whether the default [`Update::absorb_global`] was the last global absorption to run in
/// this thread, and ran on `ops` (an apply nested in an operation of this one records its
/// own operations' address: the answer is then false, which costs only the learning).
pub(crate) fn default_global_absorption_ran_on<U>(ops: &VecDeque<U>) -> bool {
    DEFAULT_GLOBAL_ABSORPTION.try_with(Cell::get).is_ok_and(|at| at == std::ptr::from_ref(ops).addr())
}
