//! Whether a counter that one core alone updates is cheaper logged or direct, on this host:
//! measured once per domain, the first time the adaptive policy asks.
//!
//! A counter updated by one thread gains nothing from its log but the update's own cost:
//! logged, an increment folds into the core's slot (`percore`'s `PerCore::fold`: a
//! restartable sequence, or the owner flag of a per-thread slot, and a plain add); direct,
//! it is one atomic read-modify-write on the counter's direct log, on a line in the core's
//! own cache. Which one costs less depends on the processor, by a factor of about three
//! either way, so the policy measures instead of assuming (one thread incrementing one
//! counter, `Counter::inc`, pinned to each representation):
//!
//! | host | logged | direct | `AtomicU64::fetch_add` |
//! |---|---|---|---|
//! | AMD EPYC (Zen 4), 2-core VM, 2026-11-25 | 3.7 ns | 2.3 ns | 2.3 ns |
//! | Intel Xeon, 2-core VM, 2026-11-27 | 3.05 ns | 9.8 ns | 6.6 ns |
//!
//! (Per-CPU slots entered through their spin lock, where the kernel has no restartable
//! sequences, cost 12.7 ns logged on the Xeon: there direct wins too.)
//!
//! The measurement times what each representation adds: [`SOLO_ROUNDS`] rounds, each
//! [`SOLO_OPS`] folds of 0 into the slot that holds the counter's log, then as many
//! uncontended atomic adds on a line of the caller's stack, and keeps each one's fastest
//! round (a round that a preemption or an interrupt lengthened is not the cost). About
//! 10 µs, once per domain, inside the sampled update that first asks. A fold that declines
//! (the thread moved to another CPU, or another object took the slot) leaves the domain
//! unmeasured, and a later sample measures again. Under loom nothing is measured: the
//! models see the policy as it was before (direct).
//!
//! **Logged must win by a margin** ([`logged_pays`]: its rounds under two thirds of the
//! direct ones). The probe times the fold alone, on a slot whose address is already
//! computed, and the add alone, in tight loops; a caller's logged update also finds its
//! slot first (from the object's entry: the domain, the CPU's slot array, the slot), where
//! a direct one computes its value's address from the entry's, and in a caller's loop the
//! logged update costs more than the probe says. On an AMD EPYC (Zen 4) 2-core host,
//! 2026-12-01, whose atomic adds cost about as much as a fold, the probe timed 110-120 ns
//! of folds against 130-140 ns of adds (64 of each), and the domain kept such counters
//! logged; in `oplog-bench objects` one thread then made 334-337M updates/s on one counter
//! and 237M on 1,024 counters drawn at random, against 455-457M and 401-410M with them
//! direct (`atomic`: 466-473M and 421-432M). (Which part of the logged path costs the
//! difference was not isolated: a version of the fold that returned through `asm!` labels,
//! eight instructions shorter, ran no faster.) The Xeon's probe (3.05 against 9.8 ns)
//! still keeps them logged.
//!
//! **Except where the hot objects outnumber the log cache.** There most objects end
//! direct, switched by evictions of logs that did not pay (`object` module docs,
//! "Representations"), and the few that keep a slot to themselves would stay logged: a
//! caller updating objects drawn at random then meets both representations, and the
//! branch between them, which depends on a load of the object's word, mispredicts on
//! every other update. One thread incrementing 512 counters at random in a per-CPU domain
//! with 256 slots (Intel Xeon, 2026-11-27): 100M updates/s with every counter direct,
//! 48M with half of them logged. So once [`THRASHED_SHARE`] of a cache's worth of objects
//! (a quarter: 64 of the default 256 slots, 256 of a counter's 1,024) have switched to
//! direct that way, a counter updated by one core alone goes direct as elsewhere. The count never goes down: a
//! domain whose working set once outgrew its cache keeps the direct answer. Such a domain
//! ([`Solo::outgrown`]) also sends a direct object back to logged only if it is hot: its
//! count of changes of updater fills up three times in a row, each within a short window
//! of the last (`object`'s `back_to_logged`).
//!
//! In such a domain an update also asks for its object's word exclusive before it loads
//! it ([`Word::prefetch_for_write`], x86-64 `prefetchw`, where the CPU has it): most
//! objects there are direct, and a direct update's load of the word, which another core
//! wrote last, brings the line in shared, for the lock's compare-and-swap to fetch it
//! again. Two threads each updating a random one of N objects of a user's type
//! (`objects`' `logged-oplog`, AMD EPYC 2-core host, 2026-11-29, alternated runs; a
//! `Mutex` each, 163-166M at 1,024): N = 1,024 went from 154-157M updates per second to
//! 165-171M (54M to 74M while the host ran slow), 4,096 from 171-181M to 235-244M (53M
//! to 79M), 65,536 from 212-226M to 230-240M (58M to 82M). The test costs every update
//! the load of the flag: 3-4 % at 256 objects, which fit the cache (203-206M to
//! 196-199M), and nothing measurable for one object that two threads log (`read-mix`,
//! 100 % updates, 383-392M either way). (Asking whether the CPU has `prefetchw` at each
//! update, through a lazily set static, cost 8 % at 256 objects: the domain asks once, when
//! it outgrows its cache, and keeps the answer beside the flag the update tests.)
//!
//! A domain pinned to the direct representation ([`crate::Representation::Direct`]) asks
//! from the start: all its objects are direct. Two threads each updating a random one of N
//! objects of a 24-byte state, pinned direct, AMD EPYC 2-core host, 2026-11-29, medians of
//! 3 × 300 ms: N = 1,024 went from 186-190M updates per second to 232-236M, 4,096 from
//! 175M to 234M (a `Mutex` each, 145-173M and 160M). (A counter's direct update adds to
//! its direct log without loading the word for the lock: it never asks. An object switched
//! to logged by hand there still asks, and takes its word's line from the other cores that
//! log it at each update: pin such a domain to logged, or leave it adaptive.)

use crate::word::{Word, prefetchw_supported};
use std::hint::black_box;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// The share of a core's log-cache slots (one in this many) whose worth of objects
/// switched to direct by evictions makes counters that one core alone updates go direct
/// whatever was measured (module docs).
const THRASHED_SHARE: usize = 4;

/// Rounds of each side of the measurement; the fastest round of each counts.
const SOLO_ROUNDS: usize = 5;
/// Operations per round: enough that the clock's own cost (two reads, tens of
/// nanoseconds) stays small beside the round's.
const SOLO_OPS: usize = 256;

/// Whether a counter that one core alone updates should stay logged, from the fastest
/// rounds of the two sides of the measurement: only if the folds took less than two
/// thirds of the time of the atomic adds (module docs, "Logged must win by a margin"). A
/// tie, as a clock too coarse to tell, is direct.
fn logged_pays(logged: u128, direct: u128) -> bool {
    logged.saturating_mul(3) < direct.saturating_mul(2)
}

const UNMEASURED: u8 = 0;
const LOGGED: u8 = 1;
const DIRECT: u8 = 2;

/// [`Solo::outgrown`]'s bit of the `outgrown` byte.
const OUTGROWN: u8 = 1;
/// Set with [`OUTGROWN`] where the CPU has what [`Word::prefetch_for_write`] needs: the
/// one bit an update tests ([`Solo::prefetch_for_update`]).
const PREFETCH: u8 = 2;

/// A domain's answer: unmeasured, or which representation costs less for a counter that
/// one core alone updates; and how many objects evictions switched to direct. (Plain std
/// atomics: a cache of a measurement and a statistic, never part of a modelled
/// interleaving; the count is written only at such a switch.)
#[derive(Debug)]
pub(crate) struct Solo {
    answer: AtomicU8,
    thrashed: AtomicUsize,
    /// [`OUTGROWN`] once `thrashed` reached `thrash_limit`, with [`PREFETCH`] where the
    /// CPU has `prefetchw` (from the start in a domain pinned to direct): one load and one
    /// test, where every update asks.
    outgrown: AtomicU8,
    /// The count of [`Solo::thrashed`] objects from which the answer is direct: a
    /// [`THRASHED_SHARE`] of a core's log-cache slots.
    thrash_limit: usize,
}

impl Solo {
    /// Unmeasured, for a domain of `cache_slots` slots per core; `direct` where the domain
    /// is pinned to the direct representation, whose updates then ask for their object's
    /// word exclusive from the start (module docs).
    pub(crate) fn new(cache_slots: usize, direct: bool) -> Self {
        Solo {
            answer: AtomicU8::new(UNMEASURED),
            thrashed: AtomicUsize::new(0),
            outgrown: AtomicU8::new(if direct && prefetchw_supported() { PREFETCH } else { 0 }),
            thrash_limit: cache_slots.div_ceil(THRASHED_SHARE),
        }
    }

    /// Whether a counter updated by one core alone should stay logged: measured so here,
    /// and the hot objects did not outgrow the cache (module docs). False while unmeasured.
    #[inline]
    pub(crate) fn stays_logged(&self) -> bool {
        self.answer.load(Ordering::Relaxed) == LOGGED && !self.outgrown()
    }

    /// Whether the domain's hot objects outgrew its log cache: [`THRASHED_SHARE`] of a
    /// cache's worth of objects switched to direct by evictions (module docs).
    #[inline]
    pub(crate) fn outgrown(&self) -> bool {
        self.outgrown.load(Ordering::Relaxed) & OUTGROWN != 0
    }

    /// Where the domain's hot objects outgrew its log cache, or the domain is pinned to
    /// direct, asks for `word` exclusive before an update loads it (module docs); nothing
    /// elsewhere.
    #[inline(always)]
    pub(crate) fn prefetch_for_update(&self, word: &Word) {
        if self.outgrown.load(Ordering::Relaxed) & PREFETCH != 0 {
            // SAFETY: `PREFETCH` is set only where `prefetchw_supported()` said true.
            unsafe { word.prefetch_for_write() };
        }
    }

    /// Whether nothing was measured yet.
    #[inline]
    pub(crate) fn unmeasured(&self) -> bool {
        self.answer.load(Ordering::Relaxed) == UNMEASURED
    }

    /// Counts an object that evictions of its logs switched to direct, up to the limit:
    /// past it the count says nothing more, and a domain whose objects keep switching
    /// does not write a line that every miss reads (`outgrown`).
    pub(crate) fn thrashed(&self) {
        if !self.outgrown() && self.thrashed.fetch_add(1, Ordering::Relaxed) + 1 >= self.thrash_limit {
            let prefetch = if prefetchw_supported() { PREFETCH } else { 0 };
            self.outgrown.store(OUTGROWN | prefetch, Ordering::Relaxed);
        }
    }

    /// Measures (module docs) with `fold`, one fold of 0 into the counter's slot that says
    /// whether the slot took it, and keeps the answer; nothing if a fold declined.
    pub(crate) fn measure(&self, mut fold: impl FnMut() -> bool) {
        if cfg!(loom) {
            return;
        }
        let probe = AtomicU64::new(0);
        let (mut logged, mut direct) = (u128::MAX, u128::MAX);
        for _ in 0..SOLO_ROUNDS {
            let start = Instant::now();
            for _ in 0..SOLO_OPS {
                if !fold() {
                    return;
                }
            }
            logged = logged.min(start.elapsed().as_nanos());
            let start = Instant::now();
            for _ in 0..SOLO_OPS {
                // Sequentially consistent, as the direct log's add (`log::counter`).
                probe.fetch_add(black_box(1), Ordering::SeqCst);
            }
            direct = direct.min(start.elapsed().as_nanos());
        }
        self.set(logged_pays(logged, direct));
    }

    /// Records the answer: `logged` if a counter updated by one core alone should stay logged.
    pub(crate) fn set(&self, logged: bool) {
        self.answer.store(if logged { LOGGED } else { DIRECT }, Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_declined_fold_leaves_it_unmeasured_and_an_answer_is_kept() {
        let solo = Solo::new(256, false);
        assert!(solo.unmeasured() && !solo.stays_logged());
        solo.measure(|| false);
        assert!(solo.unmeasured(), "a fold declined");
        // A fold that costs far more than an atomic add: direct.
        solo.measure(|| {
            std::thread::sleep(std::time::Duration::from_micros(1));
            true
        });
        assert!(!solo.unmeasured() && !solo.stays_logged());
        solo.set(true);
        assert!(solo.stays_logged());
    }

    /// The margin logged updates must win by: the probe's figures from two hosts (module
    /// docs), and the edges.
    #[test]
    fn logged_stays_only_where_the_folds_cost_under_two_thirds_of_the_adds() {
        // Zen 4, 2026-12-01: folds a little faster than adds, direct faster in a loop.
        assert!(!logged_pays(110, 140));
        assert!(!logged_pays(120, 130));
        // Xeon, 2026-11-27 (per update, in tenths of ns): logged about three times faster.
        assert!(logged_pays(31, 98));
        // Zen 4, 2026-11-25: direct faster in the probe too.
        assert!(!logged_pays(37, 23));
        assert!(logged_pays(199, 300) && !logged_pays(200, 300));
        assert!(!logged_pays(0, 0), "a clock too coarse to tell: direct");
    }

    /// Once a quarter of a cache's worth of objects switched to direct by evictions, the
    /// measured answer no longer keeps counters logged.
    #[test]
    fn objects_that_outgrow_the_cache_make_counters_go_direct() {
        let (solo, larger) = (Solo::new(256, false), Solo::new(512, false));
        for s in [&solo, &larger] {
            s.set(true);
            (0..63).for_each(|_| s.thrashed());
            assert!(s.stays_logged());
            s.thrashed();
        }
        assert!(!solo.stays_logged() && larger.stays_logged());
    }

    /// Updates ask for their word exclusive once the domain outgrew its cache, and in a
    /// domain pinned to direct from the start (where the CPU has `prefetchw`), which has not
    /// outgrown anything for that.
    #[test]
    fn a_domain_pinned_to_direct_prefetches_from_the_start() {
        let prefetches = |s: &Solo| s.outgrown.load(Ordering::Relaxed) & PREFETCH != 0;
        let (adaptive, direct) = (Solo::new(4, false), Solo::new(4, true));
        assert!(!prefetches(&adaptive) && !adaptive.outgrown());
        assert_eq!(prefetches(&direct), prefetchw_supported());
        assert!(!direct.outgrown());
        adaptive.thrashed();
        assert!(adaptive.outgrown() && prefetches(&adaptive) == prefetchw_supported());
    }
}
