//! One attempt of a transaction: TL2's transactional load, buffered store and commit
//! (003 §4.3; Dice, Shalev and Shavit's TL2).
//!
//! * **Load** ([`Tx::read`]): a variable written by this attempt answers from the write
//!   set. Otherwise the orec is read; it must be unlocked and its version must be in the
//!   attempt's snapshot ([`clock::seen`]: not newer than the start stamp, and on Ordo not
//!   within the uncertainty window of it); then the value is cloned and the orec read
//!   again, unchanged. The orec word joins the read set. Every value a transaction sees
//!   is therefore from one snapshot, the state at its start, even in an attempt that will
//!   abort (TL2's consistent reads, opacity).
//! * **Store** ([`Tx::write`]): buffered in the write set; nothing shared is touched.
//! * **Commit**: a read-only attempt commits at once (its reads were consistent at its
//!   start). Otherwise: lock every written variable's orec (a locked one aborts the attempt:
//!   no waiting, so no deadlock); take the commit stamp ([`clock::commit`]); validate the
//!   read set, every orec unlocked (or locked by this attempt) with a version in the
//!   snapshot, the same test as the load, so on Ordo an uncertain pair aborts here too;
//!   install each new value and release its orec with the commit stamp as its version.
//!   On the logical clock a commit stamp of `start + 1` means nobody committed since the
//!   start, and validation is skipped (TL2's shortcut).
//!
//! A replaced value is retired to the epoch collector ([`crate::sync`]). An attempt that
//! does not commit (a conflict, a user abort, a panic in user code) is dropped: its staged
//! values are freed and any orec it still holds is restored, so nothing of it is visible.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;

use crate::clock::{self, Seen, TxClock};
use crate::stats::bump;
use crate::stm::Stm;
use crate::sync::{AtomicU64, Guard, Ordering};
use crate::tvar::{LOCKED, TVar, is_locked, unlocked, version};

/// Why an attempt stopped: returned by [`Tx::read`] on a conflict and by [`Tx::retry`].
///
/// Pass it on with `?`; [`Stm::atomically`] then runs the transaction again (after a
/// backoff on a conflict, after a change on a [`Tx::retry`]). A transaction cannot commit
/// once one of its reads has failed, even if the closure swallows the error.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    pub(crate) cause: Cause,
}

/// What stopped an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cause {
    /// A variable was locked by another transaction's commit.
    Locked,
    /// A variable's orec changed while its value was being read.
    Changed,
    /// A variable's version is newer than the attempt's start.
    Newer(u64),
    /// A variable's version is within the uncertainty window of the start.
    Uncertain(u64),
    /// The user asked to wait until something read changes ([`Tx::retry`]).
    Wait,
}

impl Cause {
    /// The version the next attempt must start after, if this cause was a version.
    pub(crate) fn version(self) -> Option<u64> {
        match self {
            Cause::Newer(v) | Cause::Uncertain(v) => Some(v),
            Cause::Locked | Cause::Changed | Cause::Wait => None,
        }
    }
}

impl fmt::Debug for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Retry({:?})", self.cause)
    }
}

impl fmt::Display for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cause {
            Cause::Locked => f.write_str("transaction conflict: a variable is being committed by another transaction"),
            Cause::Changed => f.write_str("transaction conflict: a variable changed while it was read"),
            Cause::Newer(v) => write!(f, "transaction conflict: a variable's version {v} is newer than the snapshot"),
            Cause::Uncertain(v) => {
                write!(f, "transaction conflict: a variable's version {v} is within the clock's uncertainty window")
            }
            Cause::Wait => f.write_str("transaction retry: waiting for a variable it read to change"),
        }
    }
}

impl std::error::Error for Retry {}

/// How a transaction of [`Stm::try_atomically`] stops early: run again, or give up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abort<E> {
    /// Run the transaction again (from [`Tx::read`] or [`Tx::retry`], through `?`).
    Retry(Retry),
    /// Abandon the transaction: nothing it wrote is applied, and `try_atomically` returns
    /// `Err(e)`.
    User(E),
}

impl<E> From<Retry> for Abort<E> {
    fn from(r: Retry) -> Self {
        Abort::Retry(r)
    }
}

/// An orec word read by the attempt.
struct ReadEntry<'env> {
    orec: &'env AtomicU64,
    word: u64,
}

/// A value staged for a variable, with what is needed to install or free it.
struct WriteEntry<'env> {
    orec: &'env AtomicU64,
    /// The `TVar<T>`.
    var: *const (),
    /// A `Box<T>` from `Box::into_raw`, owned by the write set until installed.
    value: *mut (),
    ops: &'static ValueOps,
    /// The orec word before this attempt locked it (meaningful while locked).
    locked_from: u64,
}

/// The type-specific operations on a staged value (a vtable for `T`).
struct ValueOps {
    /// Installs the value in the variable and retires the value it replaces.
    install: unsafe fn(var: *const (), value: *mut (), guard: &Guard),
    /// Frees a staged value that will not be installed.
    free: unsafe fn(value: *mut ()),
}

/// # Safety
/// `var` is a live `TVar<T>` whose orec this thread holds locked; `value` is a `Box<T>`
/// from `Box::into_raw` that nothing else owns.
unsafe fn install<T: Send + Sync + 'static>(var: *const (), value: *mut (), guard: &Guard) {
    // SAFETY: the caller's contract.
    let var = unsafe { &*var.cast::<TVar<T>>() };
    let old = var.swap(value.cast());
    // SAFETY: `old` was the variable's box and is now unreachable from it; only the holder
    // of the orec lock swaps, so it is retired once.
    unsafe { guard.retire(old) };
}

/// # Safety
/// `value` is a `Box<T>` from `Box::into_raw` that nothing else owns.
unsafe fn free<T>(value: *mut ()) {
    // SAFETY: the caller's contract.
    drop(unsafe { Box::from_raw(value.cast::<T>()) });
}

/// The [`ValueOps`] of `T`.
fn ops<T: Send + Sync + 'static>() -> &'static ValueOps {
    const { &ValueOps { install: install::<T>, free: free::<T> } }
}

/// A Bloom-filter bit for an orec address (a quick "not in the write set").
#[inline]
fn filter_bit(orec: &AtomicU64) -> u64 {
    let addr = ptr::from_ref(orec) as usize as u64;
    1 << (addr.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58)
}

thread_local! {
    /// The id of the [`Stm`] this thread last committed a write to, and its commit stamp:
    /// where the thread's next attempt on a running clock starts after ([`clock::start`]).
    /// One entry: a thread alternating between STMs only waits less (and may abort more).
    static LAST_COMMIT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// This thread's last commit stamp on the [`Stm`] `stm`, if its last commit was there.
#[inline]
fn last_commit(stm: u64) -> Option<u64> {
    LAST_COMMIT.try_with(Cell::get).ok().and_then(|(id, end)| (id == stm).then_some(end))
}

/// A transaction attempt, handed to the closure of [`Stm::atomically`].
///
/// `'env` is how long the variables it touches must live: at least the whole
/// `atomically` call, so a variable created inside the closure cannot be used:
///
/// ```compile_fail
/// use ordo::LogicalClock;
/// use ordo_stm::{Stm, TVar};
/// let stm = Stm::new(LogicalClock::new());
/// stm.atomically(|tx| {
///     let local = TVar::new(&stm, 1);
///     tx.read(&local) // error: `local` does not live long enough
/// });
/// ```
pub struct Tx<'env, C: TxClock> {
    stm: &'env Stm<C>,
    start: u64,
    reads: Vec<ReadEntry<'env>>,
    writes: Vec<WriteEntry<'env>>,
    /// Bloom filter of the write set's orec addresses.
    filter: u64,
    /// How many leading entries of `writes` hold their orec locked.
    held: usize,
    /// Set by the first failed read: the attempt cannot commit.
    doomed: Option<Retry>,
    guard: Guard,
    /// Pinned to its thread (the epoch guard is per thread).
    _not_send: PhantomData<*mut ()>,
}

impl<'env, C: TxClock> Tx<'env, C> {
    /// Starts an attempt; `after` is the version that aborted the previous one, if any.
    pub(crate) fn begin(stm: &'env Stm<C>, after: Option<u64>) -> Self {
        let guard = Guard::pin();
        let after = if C::NOW_IS_ISSUED { after } else { after.max(last_commit(stm.id())) };
        let start = clock::start(stm.clock(), after);
        bump(|c| &c.start_stamps);
        Tx {
            stm,
            start,
            reads: Vec::new(),
            writes: Vec::new(),
            filter: 0,
            held: 0,
            doomed: None,
            guard,
            _not_send: PhantomData,
        }
    }

    /// Reads `var`: the value this transaction wrote to it, or else its value in the
    /// transaction's snapshot.
    ///
    /// # Errors
    /// [`Retry`] when `var` is being committed, or was written after the snapshot began (on
    /// Ordo: or within the clock's uncertainty window of it). Pass it on with `?`.
    ///
    /// # Panics
    /// If `var` belongs to another [`Stm`]; or with whatever `T::clone` panics with (the
    /// attempt is then dropped, see [`Stm::atomically`]).
    pub fn read<T: Clone + Send + Sync + 'static>(&mut self, var: &'env TVar<T>) -> Result<T, Retry> {
        self.check_owner(var.stm());
        if let Some(r) = self.doomed {
            return Err(r);
        }
        if let Some(i) = self.staged(&var.orec) {
            // SAFETY: the entry was staged for `var`, a `TVar<T>`, so it holds a `Box<T>`
            // the write set owns.
            return Ok(unsafe { &*self.writes[i].value.cast::<T>() }.clone());
        }
        let before = var.orec.load(Ordering::Acquire);
        if is_locked(before) {
            return Err(self.doom(Cause::Locked));
        }
        self.check_seen(version(before))?;
        let ptr = var.load();
        // SAFETY: `ptr` is the variable's box or one it replaced after this thread pinned
        // (`self.guard`, pinned before the load): a replaced box is freed only once every
        // thread pinned at its retirement has unpinned. Published values are never mutated.
        let value = unsafe { &*ptr }.clone();
        // The value belongs to version `before` only if the orec did not move meanwhile (a
        // commit locks the orec before it swaps the pointer; the Acquire load of the
        // pointer orders this load after it).
        if var.orec.load(Ordering::Acquire) != before {
            return Err(self.doom(Cause::Changed));
        }
        self.reads.push(ReadEntry { orec: &var.orec, word: before });
        Ok(value)
    }

    /// Writes `value` to `var`, visible to other transactions once this one commits.
    ///
    /// # Panics
    /// If `var` belongs to another [`Stm`]; or with whatever the `Drop` of a value this
    /// transaction wrote to `var` before panics with.
    pub fn write<T: Send + Sync + 'static>(&mut self, var: &'env TVar<T>, value: T) {
        self.check_owner(var.stm());
        let value = Box::into_raw(Box::new(value)).cast::<()>();
        if let Some(i) = self.staged(&var.orec) {
            let old = std::mem::replace(&mut self.writes[i].value, value);
            // SAFETY: `old` was this entry's staged `Box<T>`, owned by the write set and
            // replaced just now.
            unsafe { (self.writes[i].ops.free)(old) };
            return;
        }
        self.filter |= filter_bit(&var.orec);
        self.writes.push(WriteEntry {
            orec: &var.orec,
            var: ptr::from_ref(var).cast(),
            value,
            ops: ops::<T>(),
            locked_from: 0,
        });
    }

    /// Asks to run the transaction again once a variable it has read changes (the
    /// `retry` of composable memory transactions): return `Err(tx.retry())`. Nothing the
    /// attempt wrote is applied; the thread waits (spinning, then yielding and sleeping)
    /// until another transaction commits to one of the variables this attempt read.
    ///
    /// If the attempt has already failed a read, the transaction runs again at once.
    /// [`Stm::atomically`] panics if a retrying attempt has read nothing, since no commit
    /// could ever wake it.
    pub fn retry(&self) -> Retry {
        self.doomed.unwrap_or(Retry { cause: Cause::Wait })
    }

    /// Why the attempt cannot commit, if one of its reads failed.
    pub(crate) fn failed(&self) -> Option<Retry> {
        self.doomed
    }

    /// Panics unless `stm` is this transaction's [`Stm`].
    #[inline]
    fn check_owner(&self, stm: u64) {
        assert!(
            stm == self.stm.id(),
            "a TVar of Stm #{stm} was used in a transaction of Stm #{}: a TVar belongs to the Stm it was created with",
            self.stm.id()
        );
    }

    /// Marks the attempt as unable to commit, and returns the error to pass on.
    fn doom(&mut self, cause: Cause) -> Retry {
        let r = Retry { cause };
        self.doomed = Some(r);
        r
    }

    /// `Ok` if a variable at `version` is in the snapshot; otherwise dooms the attempt.
    #[inline]
    fn check_seen(&mut self, version: u64) -> Result<(), Retry> {
        match clock::seen(self.stm.clock(), version, self.start) {
            Seen::Visible => Ok(()),
            Seen::Newer => Err(self.doom(Cause::Newer(version))),
            Seen::Uncertain => Err(self.doom(Cause::Uncertain(version))),
        }
    }

    /// The index of the write-set entry for `orec`, if any.
    #[inline]
    fn staged(&self, orec: &AtomicU64) -> Option<usize> {
        if self.filter & filter_bit(orec) == 0 {
            return None;
        }
        self.writes.iter().rposition(|w| ptr::eq(w.orec, orec))
    }

    /// Commits the attempt, or says why it cannot.
    pub(crate) fn commit(&mut self) -> Result<(), Retry> {
        if let Some(r) = self.doomed {
            return Err(r);
        }
        if self.writes.is_empty() {
            bump(|c| &c.read_only_commits);
            return Ok(());
        }
        // 1. Lock the write set.
        let mut newest = 0;
        for i in 0..self.writes.len() {
            let orec = self.writes[i].orec;
            let word = orec.load(Ordering::Relaxed);
            if is_locked(word)
                || orec.compare_exchange(word, word | LOCKED, Ordering::Acquire, Ordering::Relaxed).is_err()
            {
                self.release_held();
                return Err(self.doom(Cause::Locked));
            }
            self.writes[i].locked_from = word;
            self.held = i + 1;
            newest = newest.max(version(word));
        }
        // 2. The commit stamp, certainly after the start and every version overwritten.
        let end = clock::commit(self.stm.clock(), self.start, newest);
        bump(|c| &c.commit_stamps);
        // 3. Validate the read set (TL2 skips it when nothing committed since the start).
        if !(C::NOW_IS_ISSUED && end == self.start.wrapping_add(1))
            && let Err(r) = self.validate()
        {
            self.release_held();
            return Err(r);
        }
        // 4. Install the values and release the orecs at the commit stamp.
        for w in self.writes.drain(..) {
            // SAFETY: `w.var` is the live `TVar` the entry was staged for ('env), its orec
            // is locked by this attempt, and `w.value` is the staged box, handed over here.
            unsafe { (w.ops.install)(w.var, w.value, &self.guard) };
            w.orec.store(unlocked(end), Ordering::Release);
        }
        self.held = 0;
        if !C::NOW_IS_ISSUED {
            // A thread being torn down keeps no hint (its next attempt would be its last).
            let _ = LAST_COMMIT.try_with(|c| c.set((self.stm.id(), end)));
        }
        Ok(())
    }

    /// Checks every orec read: unlocked, or locked by this attempt, at a version in the
    /// snapshot.
    fn validate(&mut self) -> Result<(), Retry> {
        for i in 0..self.reads.len() {
            let orec = self.reads[i].orec;
            let mut word = orec.load(Ordering::Acquire);
            if is_locked(word) {
                match self.staged(orec) {
                    Some(w) => word = self.writes[w].locked_from,
                    None => return Err(self.doom(Cause::Locked)),
                }
            }
            self.check_seen(version(word))?;
        }
        Ok(())
    }

    /// Restores every orec this attempt holds locked to its word before the lock.
    fn release_held(&mut self) {
        for w in &self.writes[..self.held] {
            w.orec.store(w.locked_from, Ordering::Release);
        }
        self.held = 0;
    }

    /// The orec words read, for a [`Tx::retry`] wait (they outlive the attempt).
    pub(crate) fn into_reads(mut self) -> Vec<(&'env AtomicU64, u64)> {
        std::mem::take(&mut self.reads).into_iter().map(|r| (r.orec, r.word)).collect()
    }
}

impl<C: TxClock> Drop for Tx<'_, C> {
    fn drop(&mut self) {
        self.release_held();
        for w in self.writes.drain(..) {
            // SAFETY: a staged box that was never installed, owned by the write set.
            unsafe { (w.ops.free)(w.value) };
        }
    }
}

impl<C: TxClock> fmt::Debug for Tx<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tx")
            .field("start", &self.start)
            .field("reads", &self.reads.len())
            .field("writes", &self.writes.len())
            .field("doomed", &self.doomed)
            .finish_non_exhaustive()
    }
}
