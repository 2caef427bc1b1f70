//! The lock of one core's state: a spin lock, plus a fast path for a single owner thread.
//!
//! **Stand-in.** `oplog` implements the same protocol for its log slots (`SlotLock` in
//! `crates/oplog/src/lock.rs`) but does not export it; this minimal version exists until it
//! does, and should then be replaced by it (the protocol is identical, the code is not shared).
//!
//! * Per-CPU core state is written by whichever thread runs on that CPU, so every access
//!   takes the spin lock ([`CoreLock::lock_spin`]), which is normally uncontended and keeps a
//!   thread that migrates in the middle of an operation correct (the state stays locked,
//!   whichever CPU the thread finishes on).
//! * Per-thread core state has one owner thread. The owner enters by storing `busy` and
//!   reading `req` after [`barrier::light`] (a compiler fence where `membarrier` exists): no
//!   atomic read-modify-write and no fence instruction ([`CoreLock::lock_owner`]). A remote
//!   thread (a reviewer flushing the core, a sloppy counter reconciling) takes the spin lock,
//!   stores `req`, runs [`barrier::heavy`] (once for every core it takes), then waits for
//!   `busy` to clear. The asymmetric barrier guarantees that the owner sees `req` or the remote
//!   sees `busy`; an owner that sees `req` backs off and takes the spin lock like anyone else.

use oplog::primitive::{AtomicBool, Backoff, Ordering, barrier};

/// How a [`CoreLock`] was taken, so that it is released the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    /// Through the owner's `busy` flag.
    Owner,
    /// Through the spin lock.
    Spin,
    /// Through the remote protocol (spin lock and `req`).
    Remote,
}

/// The lock of one core's state (see the module docs).
#[derive(Debug)]
pub(crate) struct CoreLock {
    spin: AtomicBool,
    busy: AtomicBool,
    req: AtomicBool,
}

impl CoreLock {
    pub(crate) fn new() -> Self {
        Self {
            spin: AtomicBool::new(false, "Core.spin"),
            busy: AtomicBool::new(false, "Core.busy"),
            req: AtomicBool::new(false, "Core.req"),
        }
    }

    /// Takes the spin lock (test-and-test-and-set, yielding after a while so that a preempted
    /// holder can run).
    #[inline]
    pub(crate) fn lock_spin(&self) -> Held {
        if self.spin.swap(true, Ordering::Acquire) {
            self.lock_spin_contended();
        }
        Held::Spin
    }

    #[cold]
    fn lock_spin_contended(&self) {
        let mut backoff = Backoff::default();
        loop {
            while self.spin.load(Ordering::Relaxed) {
                backoff.snooze();
            }
            if !self.spin.swap(true, Ordering::Acquire) {
                return;
            }
        }
    }

    /// Takes the lock as the core's owner thread. Only the one thread that owns this core may
    /// call this, and only where [`barrier::init`] returned true.
    #[inline(always)]
    pub(crate) fn lock_owner(&self) -> Held {
        self.busy.store(true, Ordering::Relaxed);
        barrier::light();
        // Acquire: if a remote just finished, see what it did to the state.
        if !self.req.load(Ordering::Acquire) {
            return Held::Owner;
        }
        self.owner_back_off()
    }

    #[cold]
    fn owner_back_off(&self) -> Held {
        self.busy.store(false, Ordering::Release);
        self.lock_spin()
    }

    /// First half of a remote acquisition: excludes other remote and spin lockers and asks the
    /// owner to stay out. Run [`barrier::heavy`] once after the first halves of all the cores
    /// being taken, then [`CoreLock::remote_wait`] on each.
    pub(crate) fn remote_begin(&self) {
        self.lock_spin();
        self.req.store(true, Ordering::Relaxed);
    }

    /// Second half: waits until the owner is out of its critical section.
    pub(crate) fn remote_wait(&self) {
        let mut backoff = Backoff::default();
        // Acquire: see everything the owner wrote before leaving.
        while self.busy.load(Ordering::Acquire) {
            backoff.snooze();
        }
    }

    /// Releases the lock taken as `held`.
    #[inline(always)]
    pub(crate) fn unlock(&self, held: Held) {
        match held {
            Held::Owner => self.busy.store(false, Ordering::Release),
            Held::Spin => self.spin.store(false, Ordering::Release),
            Held::Remote => {
                self.req.store(false, Ordering::Release);
                self.spin.store(false, Ordering::Release);
            }
        }
    }
}
