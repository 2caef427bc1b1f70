//! Per-thread counts of what transactions did: commits, aborts and why, timestamps taken.
//!
//! Kept in thread-locals (no shared line is written to count), for every [`Stm`](crate::Stm)
//! the thread uses together. Read them with [`Stats::thread`] before and after a piece of
//! work and subtract.

use std::cell::Cell;
use std::ops::Sub;

/// What transactions on the calling thread have done since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Transactions committed (read-only ones included).
    pub commits: u64,
    /// Of the commits, those that wrote nothing (committed without locking or a commit stamp).
    pub read_only_commits: u64,
    /// Attempts that ended in a conflict and were run again.
    pub aborts: u64,
    /// Of the aborts, those on two timestamps within the clock's uncertainty window (never
    /// on a logical clock).
    pub uncertain_aborts: u64,
    /// Transactions that waited in [`Tx::retry`](crate::Tx::retry) (each wait counts once).
    pub retries: u64,
    /// Transactions the user abandoned with [`Abort::User`](crate::Abort::User).
    pub user_aborts: u64,
    /// Timestamps taken to start attempts (a load of the counter on a logical clock, a
    /// clock reading or `new_time` on Ordo).
    pub start_stamps: u64,
    /// Timestamps taken to commit (`new_time`: a CAS on the counter on a logical clock, a
    /// wait on the local clock on Ordo).
    pub commit_stamps: u64,
}

impl Stats {
    /// The calling thread's counts.
    pub fn thread() -> Stats {
        COUNTS.with(Counts::get)
    }

    /// Aborts per attempt: `aborts / (commits + aborts)` (0 when nothing ran).
    pub fn abort_rate(&self) -> f64 {
        let attempts = self.commits + self.aborts;
        if attempts == 0 { 0.0 } else { self.aborts as f64 / attempts as f64 }
    }

    /// Timestamps (start and commit) per committed transaction (0 when none committed).
    pub fn stamps_per_commit(&self) -> f64 {
        if self.commits == 0 { 0.0 } else { (self.start_stamps + self.commit_stamps) as f64 / self.commits as f64 }
    }

    /// The counts of `self` and `other` together.
    pub fn plus(&self, other: &Stats) -> Stats {
        Stats {
            commits: self.commits + other.commits,
            read_only_commits: self.read_only_commits + other.read_only_commits,
            aborts: self.aborts + other.aborts,
            uncertain_aborts: self.uncertain_aborts + other.uncertain_aborts,
            retries: self.retries + other.retries,
            user_aborts: self.user_aborts + other.user_aborts,
            start_stamps: self.start_stamps + other.start_stamps,
            commit_stamps: self.commit_stamps + other.commit_stamps,
        }
    }
}

impl Sub for Stats {
    type Output = Stats;

    /// What happened between an earlier snapshot `rhs` and `self` (saturating).
    fn sub(self, rhs: Stats) -> Stats {
        Stats {
            commits: self.commits.saturating_sub(rhs.commits),
            read_only_commits: self.read_only_commits.saturating_sub(rhs.read_only_commits),
            aborts: self.aborts.saturating_sub(rhs.aborts),
            uncertain_aborts: self.uncertain_aborts.saturating_sub(rhs.uncertain_aborts),
            retries: self.retries.saturating_sub(rhs.retries),
            user_aborts: self.user_aborts.saturating_sub(rhs.user_aborts),
            start_stamps: self.start_stamps.saturating_sub(rhs.start_stamps),
            commit_stamps: self.commit_stamps.saturating_sub(rhs.commit_stamps),
        }
    }
}

/// One counter per field of [`Stats`].
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) commits: Cell<u64>,
    pub(crate) read_only_commits: Cell<u64>,
    pub(crate) aborts: Cell<u64>,
    pub(crate) uncertain_aborts: Cell<u64>,
    pub(crate) retries: Cell<u64>,
    pub(crate) user_aborts: Cell<u64>,
    pub(crate) start_stamps: Cell<u64>,
    pub(crate) commit_stamps: Cell<u64>,
}

impl Counts {
    fn get(&self) -> Stats {
        Stats {
            commits: self.commits.get(),
            read_only_commits: self.read_only_commits.get(),
            aborts: self.aborts.get(),
            uncertain_aborts: self.uncertain_aborts.get(),
            retries: self.retries.get(),
            user_aborts: self.user_aborts.get(),
            start_stamps: self.start_stamps.get(),
            commit_stamps: self.commit_stamps.get(),
        }
    }
}

thread_local! {
    static COUNTS: Counts = const {
        Counts {
            commits: Cell::new(0),
            read_only_commits: Cell::new(0),
            aborts: Cell::new(0),
            uncertain_aborts: Cell::new(0),
            retries: Cell::new(0),
            user_aborts: Cell::new(0),
            start_stamps: Cell::new(0),
            commit_stamps: Cell::new(0),
        }
    };
}

/// Adds one to the counter `field` picks on the calling thread.
#[inline]
pub(crate) fn bump(field: fn(&Counts) -> &Cell<u64>) {
    // A thread being torn down counts nothing (its counts are gone with it).
    let _ = COUNTS.try_with(|c| {
        let cell = field(c);
        cell.set(cell.get() + 1);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_differences() {
        let a = Stats { commits: 3, aborts: 1, start_stamps: 4, commit_stamps: 2, ..Stats::default() };
        assert_eq!(a.abort_rate(), 0.25);
        assert_eq!(a.stamps_per_commit(), 2.0);
        assert_eq!(Stats::default().abort_rate(), 0.0);
        let b = a.plus(&a);
        assert_eq!(b - a, a);
        assert_eq!(a - b, Stats::default(), "saturates");
    }

    #[test]
    fn bump_counts_on_this_thread_only() {
        let before = Stats::thread();
        bump(|c| &c.retries);
        assert_eq!((Stats::thread() - before).retries, 1);
        std::thread::spawn(|| assert_eq!(Stats::thread(), Stats::default())).join().unwrap();
    }
}
