//! The two locks of per-core state: a spin lock, and the [`OwnerLock`], which has a cheap
//! path for a slot's single owner.
//!
//! Both are built on [`primitive`](crate::primitive) atomics so that loom checks them.

use crate::primitive::{AtomicBool, AtomicUsize, Backoff, Ordering, barrier};

/// A test-and-test-and-set spin lock that yields the CPU after spinning a while.
///
/// OpLog's locks are held for a handful of instructions (a push, a gather), so spinning is
/// cheaper than parking; yielding keeps a preempted holder from being starved.
#[derive(Debug)]
pub struct SpinLock {
    locked: AtomicBool,
}

impl SpinLock {
    /// An unlocked spin lock; `label` names the field for tracing builds.
    pub fn new(label: &'static str) -> Self {
        Self { locked: AtomicBool::new(false, label) }
    }

    /// Takes the lock, spinning (then yielding) while another thread holds it.
    #[inline]
    pub fn lock(&self) {
        if !self.try_acquire() {
            self.lock_contended();
        }
    }

    /// One attempt. A compare-and-swap rather than a swap: a failed attempt writes
    /// nothing, so waiters do not bounce the line between them, and loom's spin-loop
    /// handling (a waiter's later loads see stores newer than what it saw before it
    /// yielded) is not defeated by the waiter's own stores.
    #[inline(always)]
    fn try_acquire(&self) -> bool {
        self.locked.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    #[cold]
    fn lock_contended(&self) {
        let mut backoff = Backoff::default();
        loop {
            while self.locked.load(Ordering::Relaxed) {
                backoff.snooze();
            }
            if self.try_acquire() {
                return;
            }
        }
    }

    /// Releases the lock. Only its holder may call this.
    #[inline]
    pub fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

#[cold]
#[inline(never)]
fn owner_reentered() -> ! {
    crate::primitive::check_waiting();
    panic!(
        "oplog-percore: a per-thread slot was entered again by the thread that holds it (a call back from code that runs while the slot is held)"
    );
}

/// Entries of a slot in spin mode (see [`OwnerLock`]) without a remote acquisition, after
/// which the slot returns to the owner protocol: a barrier costs about as much as this many
/// uncontended compare-and-swaps on this machine class (microseconds against nanoseconds),
/// so a slot taken remotely less often than this is cheaper in owner mode.
pub const SPIN_MODE_ENTRIES: usize = 4096;

/// How an [`OwnerLock`] was taken, so it is released the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Through the owner's flag (per-thread slots, and per-CPU slots entered by rseq).
    Owner,
    /// Through the spin lock (per-CPU slots without rseq, owners' slow paths, and owners
    /// of a slot in spin mode).
    Spin,
    /// Through the spin lock, by the entry that ends the slot's spin mode: unlocking
    /// returns the slot to the owner protocol.
    SpinModeEnd,
    /// Through the remote protocol (a thread with no owner path into an owner-protocol
    /// slot).
    Remote,
}

/// The lock of one per-core slot.
///
/// Per-CPU slots are written by whichever thread runs on that CPU, so every access takes
/// the spin lock (000 §4.1: "OpLog acquires a per-core lock protecting the per-core log;
/// this lock is not usually contended"), unless the slot is entered through a restartable
/// sequence (`rseq`), which uses the owner flags below.
///
/// Per-thread slots have one owner thread, which updates them far more often than anyone
/// else touches them. The owner enters by storing `busy` and then checking `req` after a
/// [`barrier::light`] (a compiler fence where `membarrier` exists): no atomic
/// read-modify-write, no fence instruction. A remote thread (a synchronizer, or a thread
/// dropping an object) takes the spin lock, stores `req`, runs [`barrier::heavy`] (once
/// for all the slots it takes), and then waits for `busy` to clear. The asymmetric barrier
/// guarantees that the owner sees `req` or the remote sees `busy`, so they never both
/// enter. An owner that sees `req` backs off and takes the spin lock like anyone else.
///
/// Per-CPU slots on Linux use the same owner protocol, entered through a restartable
/// sequence (`rseq`), which needs the flags at fixed offsets: hence `repr(C)`.
///
/// **Spin mode.** A slot taken remotely often pays a barrier each time. A remote taker may
/// leave the slot in *spin mode* instead of releasing it to its owner ([`Remote`'s
/// `keep_spin_mode`](super::Remote::keep_spin_mode)): `req` stays set, so owners (rseq
/// sequences and [`OwnerLock::lock_owner`]) see a request and enter through the spin lock,
/// and later remote takers need no barrier: no owner can be inside, since the barrier that
/// put the slot in spin mode drained them and every later owner entry sees `req`. The
/// entry that finds [`SPIN_MODE_ENTRIES`] owner entries since the last remote acquisition
/// ends spin mode when it unlocks. `spin` and `spin_entries` are only accessed under the
/// spin lock.
#[derive(Debug)]
#[repr(C)]
pub struct OwnerLock {
    lock: SpinLock,
    pub(crate) busy: AtomicBool,
    pub(crate) req: AtomicBool,
    spin: AtomicBool,
    spin_entries: AtomicUsize,
}

impl Default for OwnerLock {
    fn default() -> Self {
        Self::new()
    }
}

impl OwnerLock {
    /// An unlocked lock.
    pub fn new() -> Self {
        Self {
            lock: SpinLock::new("Slot.lock"),
            busy: AtomicBool::new(false, "Slot.busy"),
            req: AtomicBool::new(false, "Slot.req"),
            spin: AtomicBool::new(false, "Slot.spin"),
            spin_entries: AtomicUsize::new(0, "Slot.spin_entries"),
        }
    }

    /// Takes the lock through the spin lock (per-CPU slots).
    #[inline]
    pub fn lock_spin(&self) -> Taken {
        self.lock.lock();
        Taken::Spin
    }

    /// Takes the lock as the slot's owner thread. Only the one thread that owns this slot
    /// may call this, and only where [`barrier::init`] returned true.
    #[inline]
    pub fn lock_owner(&self) -> Taken {
        if self.try_lock_owner() {
            return Taken::Owner;
        }
        // Only the owner sets `busy` (and `try_lock_owner` cleared what it set): finding it
        // set means this thread entered the slot again from inside its own critical section.
        if self.busy.load(Ordering::Relaxed) {
            owner_reentered();
        }
        self.owner_back_off()
    }

    /// Under tracing: the restartable sequence's part on this slot (`super::rseq`'s
    /// stand-in). Records what the sequence's instructions access: a load of `busy`, then
    /// (if clear) a load of `req`, then (if clear) the commit store to `busy`. Exclusion
    /// comes from an unrecorded weak compare-and-swap that sets `busy` before `req` is
    /// checked (undone, unrecorded, if `req` is set), standing in for the kernel's restart:
    /// with the remote side's barrier between its store of `req` and its load of `busy`,
    /// either the remote sees `busy` or this sees `req`, as with the real sequence. On `Ok`
    /// the lock is held as [`Taken::Owner`].
    #[cfg(percore_trace)]
    #[inline(always)]
    pub(crate) fn rseq_stand_in(&self) -> Result<(), super::rseq::NotEntered> {
        self.stand_in_take()?;
        // `mov byte ptr [slot + busy], 1`: the commit.
        self.busy.record(crate::primitive::trace::AccessKind::Store);
        Ok(())
    }

    /// Under tracing: [`OwnerLock::rseq_stand_in`] but the commit's store, which the folded
    /// sequence (`super::rseq`'s `try_fold`) does not make: records the loads of `busy` and
    /// `req` and takes the slot unrecorded; [`OwnerLock::stand_in_release`] gives it back.
    #[cfg(percore_trace)]
    #[inline(always)]
    pub(crate) fn stand_in_take(&self) -> Result<(), super::rseq::NotEntered> {
        use super::rseq::NotEntered;
        use crate::primitive::trace::AccessKind;
        // `cmp byte ptr [slot + busy], 0`
        self.busy.record(AccessKind::Load);
        if let Err(busy) = self.busy.untraced().compare_exchange_weak(false, true, Ordering::SeqCst, Ordering::Relaxed)
        {
            return Err(if busy { NotEntered::Busy } else { NotEntered::Aborted });
        }
        // `cmp byte ptr [slot + req], 0`
        self.req.record(AccessKind::Load);
        if self.req.untraced().load(Ordering::SeqCst) {
            self.stand_in_release();
            return Err(NotEntered::Requested);
        }
        Ok(())
    }

    /// Under tracing: gives back a slot taken by [`OwnerLock::stand_in_take`], unrecorded.
    #[cfg(percore_trace)]
    #[inline(always)]
    pub(crate) fn stand_in_release(&self) {
        self.busy.untraced().store(false, Ordering::Release);
    }

    /// [`OwnerLock::lock_owner`]'s fast path alone: takes the lock as the slot's owner
    /// thread and returns `true`, unless a remote thread is taking the slot or holds it in
    /// spin mode (`req` set) or this thread already holds it (`busy` set): then `false`,
    /// with the lock as it was, and the caller takes [`OwnerLock::lock_owner`]'s way. The
    /// same callers as `lock_owner`; release with [`Taken::Owner`].
    #[inline(always)]
    pub fn try_lock_owner(&self) -> bool {
        if self.busy.load(Ordering::Relaxed) {
            return false;
        }
        self.busy.store(true, Ordering::Relaxed);
        barrier::light();
        // Acquire: if a remote just finished, see what it did to the slot.
        if !self.req.load(Ordering::Acquire) {
            return true;
        }
        self.busy.store(false, Ordering::Release);
        false
    }

    /// The owner's way in when `req` is set: through the spin lock (`busy` is clear:
    /// [`OwnerLock::try_lock_owner`] left it so).
    #[cold]
    fn owner_back_off(&self) -> Taken {
        self.lock.lock();
        // The owner is the only thread that enters through the owner flag, so holding the
        // spin lock excludes everyone, whatever the mode.
        self.count_spin_entry()
    }

    /// An owner's entry through the spin lock of a slot that may be in spin mode (the rseq
    /// sequence saw `req`): `Some` if it is, with the lock held; `None` (lock released) if
    /// the request was a remote acquisition that has ended: try the owner path again.
    /// Inline: an owner whose slot a remote taker keeps in spin mode comes here on every
    /// entry.
    #[inline(always)]
    pub fn enter_spin_mode(&self) -> Option<Taken> {
        self.lock.lock();
        if self.spin.load(Ordering::Relaxed) {
            Some(self.count_spin_entry())
        } else {
            self.lock.unlock();
            None
        }
    }

    /// Makes the slot, held as `taken`, stay in spin mode once released, without a barrier,
    /// so that a remote taker needs none to take what its holder leaves in it
    /// ([`PerCore::enter_locked`](crate::PerCore::enter_locked)). Returns how the slot is
    /// held now (release it so), or `None` where it was entered through the owner flag and
    /// a remote taker holds the spin lock: that taker is taking the slot (it waits for
    /// `busy`); release the slot as `taken` and enter again.
    ///
    /// - Through the owner flag: no other owner is inside (the flag excludes them), and the
    ///   spin lock, taken with one try, excludes every other thread. Sets `req` and `spin`,
    ///   then clears `busy` with a release store: an owner entry that then finds `busy`
    ///   clear finds `req` set (the restartable sequence loads `busy`, then `req`, which
    ///   x86-64 keeps in order; a per-thread slot's one owner is this thread) and waits for
    ///   the spin lock, held as [`Taken::Spin`] until this holder releases it.
    /// - Through the spin lock: spin mode already (an owner's entry that found it), or the
    ///   back-off of a per-thread slot's one owner, which holds the spin lock; an entry
    ///   that would end spin mode keeps it.
    /// - Remotely: `req` is set, and the release keeps spin mode.
    pub fn hold_in_spin_mode(&self, taken: Taken) -> Option<Taken> {
        match taken {
            Taken::Owner => {
                if !self.lock.try_acquire() {
                    return None;
                }
                self.set_spin_mode();
                self.busy.store(false, Ordering::Release);
                Some(Taken::Spin)
            }
            Taken::Spin | Taken::SpinModeEnd => {
                if taken == Taken::SpinModeEnd || !self.spin.load(Ordering::Relaxed) {
                    self.set_spin_mode();
                }
                Some(Taken::Spin)
            }
            Taken::Remote => {
                self.set_spin_mode();
                Some(Taken::Remote)
            }
        }
    }

    /// Puts the slot in spin mode with its count restarted; the spin lock is held, or the
    /// slot is not shared yet (a per-thread layout's shared index, which no owner enters,
    /// starts in spin mode for good: its remote takers, the only kind it has, then need no
    /// barrier).
    pub(crate) fn set_spin_mode(&self) {
        self.spin.store(true, Ordering::Relaxed);
        self.spin_entries.store(0, Ordering::Relaxed);
        self.req.store(true, Ordering::Relaxed);
    }

    /// One try at the spin lock of a slot in spin mode, for any thread: `true` with the lock
    /// held (release it as [`Taken::Spin`]; the entry does not count towards the end of
    /// spin mode, see [`OwnerLock::hold_in_spin_mode`]), `false` with nothing held where
    /// the lock is taken or the slot is not in spin mode (then owners may be inside
    /// without the lock). In spin mode every owner and remote taker takes the spin lock,
    /// so it alone excludes them all.
    #[inline(always)]
    pub fn try_lock_in_spin_mode(&self) -> bool {
        if !self.lock.try_acquire() {
            return false;
        }
        if self.spin.load(Ordering::Relaxed) {
            return true;
        }
        self.lock.unlock();
        false
    }

    /// Counts an owner's entry under the spin lock; the entry that reaches
    /// [`SPIN_MODE_ENTRIES`] ends spin mode when it unlocks.
    fn count_spin_entry(&self) -> Taken {
        if !self.spin.load(Ordering::Relaxed) {
            return Taken::Spin;
        }
        let n = self.spin_entries.load(Ordering::Relaxed) + 1;
        self.spin_entries.store(n, Ordering::Relaxed);
        if n >= SPIN_MODE_ENTRIES { Taken::SpinModeEnd } else { Taken::Spin }
    }

    /// Releases the lock taken as `taken`.
    #[inline(always)]
    pub fn unlock(&self, taken: Taken) {
        // The owner's release is the update path's last step: one compare and a store, the
        // other kinds out of line (the spin lock's release inline too cost `oplog-bench
        // notify` a fifth of its throughput at one producer, 2-core AMD EPYC host,
        // 2026-11-30, alternated runs: 43-46M events/s against 59-60M).
        if taken == Taken::Owner {
            self.busy.store(false, Ordering::Release);
        } else {
            self.unlock_other(taken);
        }
    }

    /// [`OwnerLock::unlock`] of a lock not taken through the owner's flag.
    #[inline(never)]
    fn unlock_other(&self, taken: Taken) {
        match taken {
            Taken::Owner => self.busy.store(false, Ordering::Release),
            Taken::Spin => self.lock.unlock(),
            Taken::SpinModeEnd => self.remote_end(Some(false)),
            Taken::Remote => self.remote_end(None),
        }
    }

    /// First half of a remote acquisition of an owner-protocol slot: excludes other remote
    /// threads and asks the owner to stay out. Returns whether a barrier is needed: call
    /// [`barrier::heavy`] once after the first halves of every slot being taken if any
    /// returned true, then [`OwnerLock::remote_wait`] on each. A slot in spin mode needs
    /// none.
    pub fn remote_begin(&self) -> bool {
        self.lock.lock();
        if self.spin.load(Ordering::Relaxed) {
            self.spin_entries.store(0, Ordering::Relaxed);
            return false;
        }
        self.req.store(true, Ordering::Relaxed);
        true
    }

    /// Second half: waits until the owner is out of its critical section.
    pub fn remote_wait(&self) {
        let mut backoff = Backoff::default();
        // Acquire: see everything the owner wrote before leaving.
        while self.busy.load(Ordering::Acquire) {
            backoff.snooze();
        }
    }

    /// Releases a remote acquisition, leaving the slot in spin mode (`Some(true)`),
    /// returning it to the owner protocol (`Some(false)`) or as it was (`None`).
    pub fn remote_end(&self, spin_mode: Option<bool>) {
        let spin = spin_mode.unwrap_or_else(|| self.spin.load(Ordering::Relaxed));
        if spin != self.spin.load(Ordering::Relaxed) {
            self.spin.store(spin, Ordering::Relaxed);
            self.spin_entries.store(0, Ordering::Relaxed);
        }
        // Release: the owner that sees `req` clear sees what this holder did to the slot.
        self.req.store(spin, Ordering::Release);
        self.lock.unlock();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::primitive::UnsafeCell;

    struct Shared {
        lock: OwnerLock,
        value: UnsafeCell<u64>,
    }
    // SAFETY: `value` is only accessed with `lock` held.
    unsafe impl Sync for Shared {}

    #[test]
    fn owner_and_remote_exclude_each_other() {
        if !barrier::init() {
            eprintln!("skipped: no membarrier");
            return;
        }
        let s = Shared { lock: OwnerLock::new(), value: UnsafeCell::new(0, "test.value") };
        const N: u64 = 200_000;
        let s = &s;
        std::thread::scope(|sc| {
            sc.spawn(move || {
                for _ in 0..N {
                    let taken = s.lock.lock_owner();
                    // SAFETY: the slot lock is held.
                    unsafe { *s.value.get_mut().deref() += 1 };
                    s.lock.unlock(taken);
                }
            });
            sc.spawn(move || {
                for i in 0..N / 100 {
                    if s.lock.remote_begin() {
                        barrier::heavy();
                    }
                    s.lock.remote_wait();
                    // SAFETY: the slot lock is held remotely.
                    unsafe { *s.value.get_mut().deref() += 100 };
                    // Alternate: leave the slot in spin mode, then return it to the owner.
                    s.lock.remote_end(Some(i % 4 < 2));
                }
            });
        });
        // SAFETY: both threads have joined.
        assert_eq!(unsafe { *s.value.get().deref() }, 2 * N);
    }

    #[test]
    fn shared_lockers_exclude_each_other() {
        const N: u64 = if cfg!(miri) { 100 } else { 100_000 };
        let s = Shared { lock: OwnerLock::new(), value: UnsafeCell::new(0, "test.value") };
        let s = &s;
        std::thread::scope(|sc| {
            for _ in 0..3 {
                sc.spawn(move || {
                    for _ in 0..N {
                        let taken = s.lock.lock_spin();
                        // SAFETY: the slot lock is held.
                        unsafe { *s.value.get_mut().deref() += 1 };
                        s.lock.unlock(taken);
                    }
                });
            }
        });
        // SAFETY: all threads have joined.
        assert_eq!(unsafe { *s.value.get().deref() }, 3 * N);
    }
}
