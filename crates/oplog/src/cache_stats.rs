//! What a domain's log caches did: misses, evictions and hand-offs, counted per core and
//! read at run time ([`Domain::cache_stats`](crate::Domain::cache_stats)).
//!
//! The log cache (001 ch. 7) bounds memory: each core has `cache_slots` slots shared by
//! every object of the domain, and an object that is not in a core's cache takes a slot
//! there, evicting its owner's log (a *miss*, an install). Once the hot objects outnumber
//! the slots, most updates miss (and, once a domain's hot objects outgrew its cache, a miss
//! may spare the slot instead: its object goes direct, or applies the update in place:
//! [`CacheStats::misses_to_direct`], [`CacheStats::misses_in_place`]); these counters let a
//! user see that happen and size the cache (see the crate docs, "Choosing", for the
//! measured trade).
//!
//! Counting costs nothing on the update fast path: every event is counted where it
//! happens, on a slow path (taking a slot, handing a log off, a synchronize's gather),
//! with a relaxed load and store (no read-modify-write: a miss must stay cheap) on a line
//! of the core's own stripe. So a count can be lost when two threads bump one stripe at
//! once: a thread preempted between its load and its store on a CPU another thread then
//! uses, or more than 64 cores sharing stripes. These are statistics, not
//! synchronization. Updates are counted when
//! their slot's count of pushes is reset: when their log is gathered by a synchronize, or
//! evicted, or the object takes the slot again after losing it. So `updates` lags behind
//! the updates made by at most the pushes still sitting in slots (at most `cache_slots`
//! logs per core), and the hit rate is exact over any period in which the logs were
//! gathered or evicted at its end, such as a read of every object.
//!
//! The counters are plain std atomics, not [`primitive`](crate::primitive)'s: they are
//! instrumentation, not part of the protocol that loom models or the commutativity
//! checker traces.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// At most this many stripes of counters per domain: cores beyond share a stripe (a
/// contended counter only on misses, and only past 64 cores).
const MAX_STRIPES: usize = 64;

/// One stripe's counters (one core's, up to [`MAX_STRIPES`] cores).
#[derive(Debug, Default)]
struct Stripe {
    updates: AtomicU64,
    installs: AtomicU64,
    evictions: AtomicU64,
    evictions_to_backlog: AtomicU64,
    hand_offs: AtomicU64,
    misses_to_direct: AtomicU64,
    misses_in_place: AtomicU64,
}

/// One event of the log caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// An object took a slot it did not own (a cache miss).
    Install,
    /// The slot it took held another object's non-empty log, which was applied at once.
    EvictionApplied,
    /// ... which went to its object's backlog.
    EvictionToBacklog,
    /// An owner moved its own full log to the object's backlog.
    HandOff,
    /// A miss switched its object to direct instead of taking the slot.
    MissToDirect,
    /// A miss applied its update in place instead of taking the slot.
    MissInPlace,
}

/// The per-domain counters, striped by core.
#[derive(Debug)]
pub(crate) struct CacheCounters {
    stripes: Box<[CachePadded<Stripe>]>,
}

impl CacheCounters {
    /// Counters for a domain of `cores` cores.
    pub(crate) fn new(cores: usize) -> Self {
        let n = cores.clamp(1, MAX_STRIPES).next_power_of_two();
        Self { stripes: (0..n).map(|_| CachePadded::default()).collect() }
    }

    #[inline(always)]
    fn stripe(&self, core: usize) -> &Stripe {
        &self.stripes[core & (self.stripes.len() - 1)]
    }

    /// Counts `event` on `core`.
    #[inline]
    pub(crate) fn count(&self, core: usize, event: Event) {
        let s = self.stripe(core);
        let counter = match event {
            Event::Install => &s.installs,
            Event::EvictionApplied => &s.evictions,
            Event::EvictionToBacklog => {
                bump(&s.evictions, 1);
                &s.evictions_to_backlog
            }
            Event::HandOff => &s.hand_offs,
            Event::MissToDirect => &s.misses_to_direct,
            Event::MissInPlace => &s.misses_in_place,
        };
        bump(counter, 1);
    }

    /// Counts `pushes` updates of `core` whose slot count was just reset (nothing when 0).
    #[inline]
    pub(crate) fn retire(&self, core: usize, pushes: u32) {
        if pushes != 0 {
            bump(&self.stripe(core).updates, u64::from(pushes));
        }
    }

    /// A snapshot of the sums over all stripes (the domain adds its barriers).
    pub(crate) fn snapshot(&self) -> CacheStats {
        let sum = |f: fn(&Stripe) -> &AtomicU64| self.stripes.iter().map(|s| f(s).load(Ordering::Relaxed)).sum();
        CacheStats {
            updates: sum(|s| &s.updates),
            installs: sum(|s| &s.installs),
            evictions: sum(|s| &s.evictions),
            evictions_to_backlog: sum(|s| &s.evictions_to_backlog),
            hand_offs: sum(|s| &s.hand_offs),
            misses_to_direct: sum(|s| &s.misses_to_direct),
            misses_in_place: sum(|s| &s.misses_in_place),
            barriers: 0,
        }
    }
}

/// Adds `n` to a counter of the calling core's stripe (see the module docs for why not a
/// `fetch_add`).
#[inline(always)]
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

/// What a domain's log caches did since the domain was built
/// ([`Domain::cache_stats`](crate::Domain::cache_stats)); see the [module docs](self).
///
/// Subtract two snapshots ([`CacheStats::since`]) for a period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Logged updates, counted once their log left its slot or was gathered (lags by the
    /// pushes still in slots). Updates applied in place (the direct representation) are
    /// not logged and not counted.
    pub updates: u64,
    /// Times an object took a slot it did not own: cache misses.
    pub installs: u64,
    /// Installs that displaced another object's non-empty log.
    pub evictions: u64,
    /// Of those, the logs that went to their object's backlog (the rest were applied at
    /// once: logs that may be applied alone, or that were all their object had logged).
    pub evictions_to_backlog: u64,
    /// Full logs their owner moved to the object's backlog.
    pub hand_offs: u64,
    /// Misses that switched their object to the direct representation instead of taking
    /// the slot, in a domain whose hot objects outgrew its cache (the update was applied
    /// in place, and is not in `updates`).
    pub misses_to_direct: u64,
    /// Misses of hot objects applied in place under the object's lock, leaving the slot to
    /// an active log, in such a domain (not in `updates` either).
    pub misses_in_place: u64,
    /// Barriers (`membarrier` calls: interrupts) that this domain's synchronizes asked for
    /// to take other cores' slots, which restartable sequences or per-thread owners enter
    /// without a lock (`oplog_percore::PerCore::barriers`): one per CPU interrupted alone,
    /// one per barrier to every CPU. None where slots are in spin mode, the caller's own,
    /// or on the spin lock ([`Config::rseq`](crate::Config::rseq)`(false)`). Updates
    /// synchronize only where the crate docs say ("Barriers"): an update-only workload of
    /// counters, or of kinds whose logs may be applied alone, asks for none (of an ordered
    /// kind, only where a full backlog's cut leaves most of it).
    pub barriers: u64,
}

impl CacheStats {
    /// The share of counted updates that found their object's log in the cache: `1 −
    /// misses / updates`, counting the misses that spared the slot on both sides (`1 −
    /// (installs + m) / (updates + m)`, `m` = `misses_to_direct + misses_in_place`), or
    /// `None` before any update was counted. Exact over a period that ends with every log
    /// gathered (module docs).
    pub fn hit_rate(&self) -> Option<f64> {
        let updates = self.updates + self.misses_to_direct + self.misses_in_place;
        let misses = self.misses();
        (updates > 0).then(|| 1.0 - (misses.min(updates) as f64 / updates as f64))
    }

    /// Updates that did not find their object's log in the cache: those that installed a
    /// log and those that spared the slot (`misses_to_direct + misses_in_place`).
    pub fn misses(&self) -> u64 {
        self.installs + self.misses_to_direct + self.misses_in_place
    }

    /// What happened between `earlier` and this snapshot.
    pub fn since(&self, earlier: &CacheStats) -> CacheStats {
        CacheStats {
            updates: self.updates.wrapping_sub(earlier.updates),
            installs: self.installs.wrapping_sub(earlier.installs),
            evictions: self.evictions.wrapping_sub(earlier.evictions),
            evictions_to_backlog: self.evictions_to_backlog.wrapping_sub(earlier.evictions_to_backlog),
            hand_offs: self.hand_offs.wrapping_sub(earlier.hand_offs),
            misses_to_direct: self.misses_to_direct.wrapping_sub(earlier.misses_to_direct),
            misses_in_place: self.misses_in_place.wrapping_sub(earlier.misses_in_place),
            barriers: self.barriers.wrapping_sub(earlier.barriers),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_over_stripes_and_periods() {
        let c = CacheCounters::new(3);
        c.count(0, Event::Install);
        c.count(2, Event::Install);
        c.count(2, Event::EvictionToBacklog);
        c.count(1, Event::EvictionApplied);
        c.count(1, Event::HandOff);
        c.retire(0, 10);
        c.retire(5, 0);
        let s = c.snapshot();
        assert_eq!(
            s,
            CacheStats {
                updates: 10,
                installs: 2,
                evictions: 2,
                evictions_to_backlog: 1,
                hand_offs: 1,
                misses_to_direct: 0,
                misses_in_place: 0,
                barriers: 0,
            }
        );
        assert_eq!(s.hit_rate(), Some(0.8));
        // Two misses went direct, one was applied in place: 5 misses in 13 updates.
        c.count(3, Event::MissToDirect);
        c.count(0, Event::MissToDirect);
        c.count(1, Event::MissInPlace);
        let direct = c.snapshot();
        assert_eq!(direct.since(&s), CacheStats { misses_to_direct: 2, misses_in_place: 1, ..CacheStats::default() });
        assert!((direct.hit_rate().unwrap() - 8.0 / 13.0).abs() < 1e-12);
        let s = direct;
        c.retire(7, 10);
        let later = c.snapshot().since(&s);
        assert_eq!(later, CacheStats { updates: 10, ..CacheStats::default() });
        assert_eq!(later.hit_rate(), Some(1.0));
        assert_eq!(CacheStats::default().hit_rate(), None);
    }
}
