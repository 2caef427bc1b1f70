//! The migration rule for ordered logs in per-CPU domains.
//!
//! A thread that logs an update on CPU 0 and then, after migrating, its inverse on CPU 1
//! puts the two in different logs, ordered only by their timestamps. So when a thread's
//! CPU changed since its previous ordered update in a domain, its next timestamp is taken
//! with [`Clock::new_time`] of the previous one: certainly after it on every core (003
//! Figure 3), whatever the skew between the two CPUs' clocks and whatever the previous
//! timestamp was raised to in its slot.
//!
//! The clock's own guarantees already imply this order (a migration passes through
//! memory, and the raw clock order respects communication or OpLog waits out the window;
//! see the crate docs), so this is a second line of defence: it costs one thread-local
//! lookup per ordered update and a wait of at most twice the boundary per migration.
//! A thread remembers its last four domains; an update in a fifth has no floor.

use crate::primitive::thread_local_const;
use ordo::Clock;
use std::cell::Cell;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Last {
    domain: u64,
    core: usize,
    stamp: u64,
}

const EMPTY: Last = Last { domain: 0, core: 0, stamp: 0 };
const WAYS: usize = 4;

thread_local_const! {
    static LAST: Cell<[Last; WAYS]> = Cell::new([EMPTY; WAYS]);
}

/// The least timestamp the calling thread may use for an ordered update it logs on
/// `core` in domain `domain`.
#[inline]
pub(crate) fn floor(clock: &dyn Clock, domain: u64, core: usize) -> u64 {
    let last = LAST.with(|l| l.get().into_iter().find(|e| e.domain == domain));
    match last {
        Some(l) if l.core != core => clock.new_time(l.stamp),
        _ => 0,
    }
}

/// Records the timestamp the calling thread's update got on `core` in `domain`.
#[inline]
pub(crate) fn record(domain: u64, core: usize, stamp: u64) {
    LAST.with(|l| {
        let mut all = l.get();
        let i = all.iter().position(|e| e.domain == domain || e.domain == 0).unwrap_or(WAYS - 1);
        // Most recent first, so the entry used least recently falls off the end.
        all[..=i].rotate_right(1);
        all[0] = Last { domain, core, stamp };
        l.set(all);
    });
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use ordo::{LogicalClock, TimeOrder};

    #[test]
    fn a_changed_core_gets_a_stamp_certainly_after_the_last() {
        std::thread::spawn(|| {
            let clock = LogicalClock::new();
            assert_eq!(floor(&clock, 1, 0), 0);
            record(1, 0, 500);
            assert_eq!(floor(&clock, 1, 0), 0);
            let f = floor(&clock, 1, 1);
            assert_eq!(clock.cmp_time(f, 500), TimeOrder::After);
            // Other domains are independent.
            assert_eq!(floor(&clock, 2, 1), 0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_least_recently_used_domain_is_forgotten_first() {
        std::thread::spawn(|| {
            let clock = LogicalClock::new();
            for d in 1..=5 {
                record(d, 0, 100);
            }
            assert_eq!(floor(&clock, 1, 1), 0, "domain 1 fell off");
            for d in 2..=5 {
                assert!(floor(&clock, d, 1) > 100, "domain {d} kept");
            }
        })
        .join()
        .unwrap();
    }
}
