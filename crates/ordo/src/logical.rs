//! The logical clock: one shared atomic counter (003 Figure 6, "logical timestamping").
//!
//! This is the baseline Ordo replaces. Every timestamp is a `fetch_add` on one cache line,
//! so timestamps are unique and totally ordered with no uncertainty, but every core that
//! asks for one takes that line away from the last core that did: the cost grows with the
//! number of cores asking (003 Figure 8b).

use crate::{Clock, TimeOrder};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// A clock that is one shared counter: exact, but contended.
#[derive(Debug, Default)]
pub struct LogicalClock {
    counter: CachePadded<AtomicU64>,
}

impl LogicalClock {
    /// A counter starting at 0 (the first timestamp is 1).
    pub fn new() -> Self {
        Self::default()
    }
}

impl Clock for LogicalClock {
    #[inline]
    fn get_time(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The last timestamp handed out (0 before the first), without taking a new one.
    #[inline]
    fn now(&self) -> u64 {
        self.counter.load(Ordering::SeqCst)
    }

    fn boundary(&self) -> u64 {
        0
    }

    /// One atomic counter is linearizable: a timestamp taken after observing another
    /// thread's write is larger than every timestamp that thread took before writing.
    fn raw_order_is_causal(&self) -> bool {
        true
    }

    fn cmp_time(&self, a: u64, b: u64) -> TimeOrder {
        TimeOrder::compare(a, b, 0)
    }

    /// Moves the counter past `t` (if it is not already) and returns a fresh value.
    fn new_time(&self, t: u64) -> u64 {
        let mut cur = self.counter.load(Ordering::SeqCst);
        loop {
            let next = cur.max(t) + 1;
            match self.counter.compare_exchange_weak(cur, next, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return next,
                Err(seen) => cur = seen,
            }
        }
    }

    fn name(&self) -> &'static str {
        "logical"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_unique_across_threads_and_increase_per_thread() {
        let clock = LogicalClock::new();
        let mut all: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let v: Vec<u64> = (0..1000).map(|_| clock.get_time()).collect();
                        assert!(v.windows(2).all(|w| w[0] < w[1]));
                        v
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4000);
    }

    #[test]
    fn now_reads_without_advancing() {
        let c = LogicalClock::new();
        assert_eq!(c.now(), 0);
        let t = c.get_time();
        assert_eq!(c.now(), t);
        assert_eq!(c.now(), t, "now() must not take a timestamp");
        assert!(c.new_time(c.now()) > t);
    }

    #[test]
    fn new_time_is_after_its_argument_even_far_ahead() {
        let clock = LogicalClock::new();
        let t = clock.new_time(1_000);
        assert_eq!(clock.cmp_time(t, 1_000), TimeOrder::After);
        assert!(clock.get_time() > t);
        assert_eq!(clock.cmp_time(5, 5), TimeOrder::Uncertain);
        assert_eq!(clock.cmp_time(4, 5), TimeOrder::Before);
    }
}
