//! A thread's handle on a domain: its slot, its write logs, and the two kinds of section.

use std::cell::Cell;
use std::fmt;

use ordo::Clock;

use crate::domain::Rlu;
use crate::object::{Allocated, Entry};
use crate::section::{Conflict, Section};
use crate::sync::Backoff;

/// What a thread did through its handle: the costs RLU's design trades.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Sections entered (read sections, and every attempt of a write section).
    pub sections: u64,
    /// Write sections committed (with at least one object locked).
    pub commits: u64,
    /// Write-section attempts aborted: a lock held by another writer, or a panic after the
    /// attempt locked or allocated something.
    pub aborts: u64,
    /// Timestamps read with [`Clock::now`]: one per section, one per commit stamp, one per
    /// stamp taken for a committing writer (`helped`). A load of the shared counter on the
    /// logical clock; a reading of the core's clock on Ordo.
    pub now_calls: u64,
    /// [`Clock::new_time`] calls: one per commit. A compare-and-swap on the shared counter
    /// on the logical clock; a wait of up to twice the uncertainty window on Ordo.
    pub new_time_calls: u64,
    /// Commit stamps this thread took for a writer it found between the start of its commit
    /// and its stamp (a compare-and-swap on that writer's slot).
    pub helped: u64,
}

impl Stats {
    /// Timestamps taken: `now_calls + new_time_calls`.
    pub fn timestamps(&self) -> u64 {
        self.now_calls + self.new_time_calls
    }
}

/// The state a handle keeps for its thread: private, except what its slot publishes.
pub(crate) struct Local {
    pub(crate) slot: usize,
    /// The slot's run counter as this thread last wrote it.
    pub(crate) run: u64,
    /// The current section's start time.
    pub(crate) local_clock: u64,
    /// The current write section's copies.
    pub(crate) log: Vec<Entry>,
    /// Copies of the previous commit and of aborted attempts, unlocked but possibly still
    /// read: freed after the next quiescence period (the second of Figure 7's two logs).
    pub(crate) retired: Vec<Entry>,
    /// Objects the current write section allocated.
    pub(crate) allocated: Vec<Allocated>,
    /// Scratch for `synchronize`: the slots to wait for and their run counters.
    pub(crate) waiting: Vec<(usize, u64)>,
    pub(crate) stats: Stats,
    /// Stamps taken for other writers (counted from `&Section`).
    pub(crate) helped: Cell<u64>,
}

impl Local {
    pub(crate) fn new(slot: usize, run: u64) -> Self {
        Self {
            slot,
            run,
            local_clock: 0,
            log: Vec::new(),
            retired: Vec::new(),
            allocated: Vec::new(),
            waiting: Vec::new(),
            stats: Stats::default(),
            helped: Cell::new(0),
        }
    }
}

/// A thread's registration with an [`Rlu`] domain: runs read and write sections.
///
/// One handle per thread per domain; a thread may move a handle to another thread
/// (`Send`), but two handles of one domain on one thread must not nest a write section in
/// another section (the commit would wait for the outer section forever: it panics
/// instead). Dropping the handle waits for a quiescence period if its last commit's copies
/// are still to be freed (unless its thread holds a section of the domain open through
/// another handle: then it leaves them allocated), then gives its slot back.
pub struct Handle<'r, C: Clock> {
    rlu: &'r Rlu<C>,
    local: Local,
}

// SAFETY: the handle's logs point to copies it owns and to objects of its domain, which
// are `Send + Sync` (`Value`); nothing in it is bound to the thread that made it (the thread
// tag is taken anew at every section entry).
unsafe impl<C: Clock> Send for Handle<'_, C> {}

impl<'r, C: Clock> Handle<'r, C> {
    pub(crate) fn new(rlu: &'r Rlu<C>, local: Local) -> Self {
        Self { rlu, local }
    }

    /// The domain.
    pub fn rlu(&self) -> &'r Rlu<C> {
        self.rlu
    }

    /// Runs `f` in a read section: every object it reads through
    /// [`Section::get`] is seen as of one instant, the section's start (the writes of every
    /// commit certainly before it, none of the others). Readers never wait and never retry.
    pub fn read<R>(&mut self, f: impl for<'s> FnOnce(&Section<'s, C>) -> R) -> R {
        let mut section = Section::open(self.rlu, &mut self.local);
        let result = f(&section);
        section.close();
        result
    }

    /// Runs `f` in a write section: it reads like a read section and writes by locking
    /// objects ([`Section::lock`]), which copies them into this thread's log. When `f`
    /// returns `Ok`, the section commits (every write appears at once to sections that start
    /// after the commit); when it returns [`Conflict`] (an object was locked by another
    /// writer), its writes are discarded and `f` runs again from the start, after a short
    /// backoff. A panic in `f` discards its writes and releases its locks, and propagates.
    pub fn write<R>(&mut self, mut f: impl for<'s> FnMut(&mut Section<'s, C>) -> Result<R, Conflict>) -> R {
        let mut backoff = Backoff::default();
        loop {
            let mut section = Section::open(self.rlu, &mut self.local);
            match f(&mut section) {
                Ok(result) => {
                    section.close();
                    drop(section);
                    if self.local.log.is_empty() {
                        // Nothing locked: what it allocated (if anything) is the caller's.
                        self.local.allocated.clear();
                    } else {
                        self.rlu.commit(&mut self.local);
                    }
                    return result;
                }
                Err(Conflict) => {
                    section.abort();
                    drop(section);
                    self.rlu.trim_retired(&mut self.local);
                    backoff.snooze();
                }
            }
        }
    }

    /// What this handle has done so far.
    pub fn stats(&self) -> Stats {
        let helped = self.local.helped.get();
        Stats { now_calls: self.local.stats.now_calls + helped, helped, ..self.local.stats }
    }
}

impl<C: Clock> Drop for Handle<'_, C> {
    fn drop(&mut self) {
        debug_assert!(self.local.log.is_empty() && self.local.allocated.is_empty(), "sections are closed");
        if !self.local.retired.is_empty() {
            if self.rlu.nested_section(self.local.slot) {
                // A quiescence period would wait for this thread's own open section: leave
                // the copies allocated rather than hang (a leak, never a dangling read).
                self.local.retired.clear();
            } else {
                self.rlu.synchronize(&mut self.local, None);
                Rlu::<C>::destroy_retired(&mut self.local);
            }
        }
        self.rlu.release(self.local.slot);
    }
}

impl<C: Clock> fmt::Debug for Handle<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").field("slot", &self.local.slot).field("stats", &self.stats()).finish_non_exhaustive()
    }
}
