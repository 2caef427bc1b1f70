//! The two locks of per-core state: a spin lock, and the [`OwnerLock`], which has a cheap
//! path for a slot's single owner.
//!
//! Both are built on [`primitive`](crate::primitive) atomics so that loom checks them.

use crate::primitive::{AtomicBool, Backoff, Ordering, barrier};

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
    crate::reentry::check_waiting();
    panic!(
        "oplog: a per-thread slot was entered again by the thread that holds it (a call back into OpLog from code that runs while the slot is held)"
    );
}

/// How an [`OwnerLock`] was taken, so it is released the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// Through the owner's flag (per-thread slots, and per-CPU slots entered by rseq).
    Owner,
    /// Through the spin lock (per-CPU slots without rseq, and owners' slow paths).
    Shared,
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
#[derive(Debug)]
#[repr(C)]
pub struct OwnerLock {
    lock: SpinLock,
    pub(crate) busy: AtomicBool,
    pub(crate) req: AtomicBool,
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
        }
    }

    /// Takes the lock through the spin lock (per-CPU slots).
    #[inline]
    pub fn lock_shared(&self) -> Held {
        self.lock.lock();
        Held::Shared
    }

    /// Takes the lock as the slot's owner thread. Only the one thread that owns this slot
    /// may call this, and only where [`barrier::init`] returned true.
    #[inline]
    pub fn lock_owner(&self) -> Held {
        // Only the owner sets `busy`: finding it set means this thread entered the slot
        // again from inside its own critical section.
        if self.busy.load(Ordering::Relaxed) {
            owner_reentered();
        }
        self.busy.store(true, Ordering::Relaxed);
        barrier::light();
        // Acquire: if a remote just finished, see what it did to the slot.
        if !self.req.load(Ordering::Acquire) {
            return Held::Owner;
        }
        self.owner_back_off()
    }

    #[cold]
    fn owner_back_off(&self) -> Held {
        self.busy.store(false, Ordering::Release);
        self.lock_shared()
    }

    /// Releases the lock taken as `held`.
    #[inline]
    pub fn unlock(&self, held: Held) {
        match held {
            Held::Owner => self.busy.store(false, Ordering::Release),
            Held::Shared => self.lock.unlock(),
            Held::Remote => self.remote_end(),
        }
    }

    /// First half of a remote acquisition of a per-thread slot: excludes other remote
    /// threads and asks the owner to stay out. Call [`barrier::heavy`] once after the
    /// first halves of every slot being taken, then [`OwnerLock::remote_wait`] on each.
    pub fn remote_begin(&self) {
        self.lock.lock();
        self.req.store(true, Ordering::Relaxed);
    }

    /// Second half: waits until the owner is out of its critical section.
    pub fn remote_wait(&self) {
        let mut backoff = Backoff::default();
        // Acquire: see everything the owner wrote before leaving.
        while self.busy.load(Ordering::Acquire) {
            backoff.snooze();
        }
    }

    /// Takes the lock remotely in one go (one heavy barrier for this slot alone). Only where
    /// [`barrier::init`] returned true.
    pub fn lock_remote(&self) -> Held {
        self.remote_begin();
        barrier::heavy();
        self.remote_wait();
        Held::Remote
    }

    /// Releases a remote acquisition.
    pub fn remote_end(&self) {
        self.req.store(false, Ordering::Release);
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
                    let held = s.lock.lock_owner();
                    // SAFETY: the slot lock is held.
                    unsafe { *s.value.get_mut().deref() += 1 };
                    s.lock.unlock(held);
                }
            });
            sc.spawn(move || {
                for _ in 0..N / 100 {
                    s.lock.remote_begin();
                    barrier::heavy();
                    s.lock.remote_wait();
                    // SAFETY: the slot lock is held remotely.
                    unsafe { *s.value.get_mut().deref() += 100 };
                    s.lock.remote_end();
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
                        let held = s.lock.lock_shared();
                        // SAFETY: the slot lock is held.
                        unsafe { *s.value.get_mut().deref() += 1 };
                        s.lock.unlock(held);
                    }
                });
            }
        });
        // SAFETY: all threads have joined.
        assert_eq!(unsafe { *s.value.get().deref() }, 3 * N);
    }
}
