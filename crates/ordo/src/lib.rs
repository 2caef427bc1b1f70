//! Ordo: scalable timestamps from invariant per-core hardware clocks (003).
//!
//! Modern CPUs give every core a clock that ticks at a constant rate whatever the core's
//! frequency or sleep state (x86 `rdtscp`, ARM `cntvct_el0`). Reading it touches no shared
//! memory, so it scales with the number of cores, unlike a shared atomic counter (003
//! Figure 8). The clocks are not exactly synchronized, but under the invariance assumption
//! their skew is constant, and 003 §3.2 measures an upper bound for it: the *boundary*
//! (`ORDO_BOUNDARY`). With it, Ordo offers the API of 003 Figure 3:
//!
//! * [`Clock::get_time`]: the current clock, read so it cannot be satisfied before earlier
//!   loads, nor later loads before it (see [`hw`](crate) notes in [`Ordo`]);
//! * [`Clock::stamp`]: the same reading without holding later loads back, for stamping an
//!   operation that is stored with its stamp;
//! * [`Clock::new_time`]`(t)`: a time that every core's clock certainly considers after `t`
//!   (it waits until the local clock exceeds `t + boundary`);
//! * [`Clock::cmp_time`]`(a, b)`: [`TimeOrder::Before`], [`TimeOrder::After`], or
//!   [`TimeOrder::Uncertain`] when the two are within the boundary of each other.
//!
//! # Pieces
//!
//! * [`Ordo`]: the calibrated clock. [`global`] builds one per process on first use,
//!   configured from the environment ([`Settings`]) and measured once ([`calibrate`]):
//!   every ordered pair of CPUs, 003 Figure 4, kept as a signed [`OffsetMatrix`].
//! * [`LogicalClock`]: one shared atomic counter behind the same [`Clock`] trait, the
//!   contended baseline.
//! * [`cpu`]: which CPU a thread is on, the allowed CPUs, pinning.
//!
//! # Raw order and communication
//!
//! Besides the boundary, calibration reports whether every pairwise minimum offset was
//! positive ([`OffsetMatrix::all_positive`]), exposed as [`Clock::raw_order_is_causal`]:
//! whether a clock read that follows, through shared memory, another core's clock read is
//! always the larger of the two. 000 §6.1 and 003 §6.2 found this held on every machine
//! they tried; OpLog's ordered log depends on it and falls back to waiting out the boundary
//! where it is false (see the `oplog` crate).

#![warn(missing_docs)]

pub mod calibrate;
mod clock;
pub mod cpu;
mod hw;
mod logical;
pub mod settings;

pub use calibrate::OffsetMatrix;
pub use clock::{Basis, Calibration, ConfigError, Ordo, Source, global, try_global};
pub use logical::LogicalClock;
pub use settings::{Settings, SettingsError, SourceChoice};

/// How two timestamps compare, given a clock's uncertainty window (003 Figure 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeOrder {
    /// The first timestamp is certainly earlier.
    Before,
    /// The first timestamp is certainly later.
    After,
    /// The two are within the boundary of each other: their order is unknown.
    Uncertain,
}

impl TimeOrder {
    /// Compares `a` with `b` under uncertainty window `boundary` (003 Figure 3 `cmp_time`):
    /// `After` if `a > b + boundary`, `Before` if `a + boundary < b`, else `Uncertain`.
    #[inline]
    pub fn compare(a: u64, b: u64, boundary: u64) -> Self {
        if a > b.saturating_add(boundary) {
            TimeOrder::After
        } else if a.saturating_add(boundary) < b {
            TimeOrder::Before
        } else {
            TimeOrder::Uncertain
        }
    }
}

/// A source of timestamps with a known uncertainty window: the API of 003 Figure 3.
///
/// Timestamps are opaque clock ticks; only their comparisons mean anything.
pub trait Clock: Send + Sync {
    /// The current time on the calling core, read only once this thread's earlier loads and
    /// read-modify-writes are visible to every core, and before any of its later loads (the
    /// hardware clocks: `rdtscp; lfence` on x86-64, `dsb ish; isb; mrs; isb` on aarch64; see
    /// the `hw` module), so that a stamp taken after a lock is acquired, or after a write is
    /// observed, orders after it (003 §4's commit protocols rely on this).
    fn get_time(&self) -> u64;

    /// The current time, to stamp an operation with (OpLog's ordered logs, 000 §4.1): read
    /// only once this thread's earlier loads and read-modify-writes are visible to every
    /// core, as [`get_time`](Clock::get_time), but without keeping later loads after it.
    /// A stamp is stored with the operation it orders (a data dependency), and the stores
    /// that tell another core the operation happened become visible only after the
    /// reading, so what `get_time` adds, holding back later loads (a snapshot's start
    /// needs it), buys a stamp nothing. On x86-64 this is `rdtscp` without the `lfence`:
    /// 17 ns against 22 ns back to back, and 10 % more events per second in `notify`'s
    /// two producers (AMD EPYC 2-core host, 2026-11-29). Defaults to `get_time`.
    #[inline]
    fn stamp(&self) -> u64 {
        self.get_time()
    }

    /// The current time without making a new one: where a snapshot starts (a reader's
    /// start time in RLU, TL2 and OCC / MVCC, 003 §4). For the logical clock this is a plain
    /// load of the counter (a reader must not advance it, Figure 7 line 6); for a hardware
    /// clock it is [`get_time`](Clock::get_time).
    #[inline]
    fn now(&self) -> u64 {
        self.get_time()
    }

    /// The current time and, where the hardware returns it in the same instruction
    /// (x86 `rdtscp` with Linux's `TSC_AUX`), the CPU the reading was taken on.
    #[inline]
    fn get_time_and_cpu(&self) -> (u64, Option<usize>) {
        (self.get_time(), None)
    }

    /// The uncertainty window in ticks: readings of two cores taken at the same instant
    /// differ by at most this much.
    fn boundary(&self) -> u64;

    /// Whether a reading taken after observing (through shared memory) another core's
    /// write is always larger than any reading that core took before the write.
    fn raw_order_is_causal(&self) -> bool;

    /// Compares two timestamps (003 Figure 3 `cmp_time`).
    #[inline]
    fn cmp_time(&self, a: u64, b: u64) -> TimeOrder {
        TimeOrder::compare(a, b, self.boundary())
    }

    /// A timestamp certainly after `t` on every core: spins until the local clock passes
    /// `t + boundary` (003 Figure 3 `new_time`).
    fn new_time(&self, t: u64) -> u64 {
        loop {
            let now = self.get_time();
            if self.cmp_time(now, t) == TimeOrder::After {
                return now;
            }
            core::hint::spin_loop();
        }
    }

    /// A short name for reports (`rdtscp`, `monotonic`, `logical`, ...).
    fn name(&self) -> &'static str;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_follows_figure_3() {
        assert_eq!(TimeOrder::compare(100, 50, 10), TimeOrder::After);
        assert_eq!(TimeOrder::compare(50, 100, 10), TimeOrder::Before);
        assert_eq!(TimeOrder::compare(60, 50, 10), TimeOrder::Uncertain);
        assert_eq!(TimeOrder::compare(61, 50, 10), TimeOrder::After);
        assert_eq!(TimeOrder::compare(40, 50, 10), TimeOrder::Uncertain);
        assert_eq!(TimeOrder::compare(39, 50, 10), TimeOrder::Before);
        assert_eq!(TimeOrder::compare(7, 7, 0), TimeOrder::Uncertain);
        assert_eq!(TimeOrder::compare(u64::MAX, 1, u64::MAX), TimeOrder::Uncertain);
    }
}

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
