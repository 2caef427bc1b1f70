//! The three places TL2 uses its clock, written once for every clock: the start stamp of an
//! attempt, the test a version must pass to be read, and the commit stamp (003 §4.3).
//!
//! | | logical clock (TL2) | Ordo (TL2-Ordo) |
//! |---|---|---|
//! | start | `now()`: a load of the counter | `new_time(t)`, `t` this thread's last commit stamp or the version that aborted it; else `get_time()` |
//! | a version `v` is read if | `v <= start` | `cmp_time(v, start) == Before` (`Uncertain` aborts) |
//! | commit | `new_time(max(start, newest overwritten))`: a CAS to max + 1 | `new_time(max(start, newest overwritten))`: waits out the window |
//!
//! The only difference the code sees is [`TxClock::NOW_IS_ISSUED`]: a counter's `now()` is
//! the last timestamp it handed out, so a version equal to the start was issued before the
//! attempt began and belongs to its snapshot; a running clock's reading may tie with a
//! version taken on another core, so only versions certainly before it do. Everything else
//! goes through [`Clock`]: `now`, `new_time`, `cmp_time`.
//!
//! **Start.** 003 §4.3 assigns start "with the value of `new_time()`" without saying after
//! what. Here an attempt on a running clock starts at `new_time(t)`, `t` being the later
//! of the calling thread's last commit stamp on this STM and the version that aborted its
//! previous attempt (newer than its start, or within the window of it); with neither, at
//! `get_time()`. So a thread reads its own last writes, and the version that stopped it,
//! without an uncertain abort: it waits out the window once (when the commit was less than
//! a window ago) instead of aborting on it. A counter needs no wait: its `now()` is
//! already at least every version it has issued.
//!
//! **Commit stamp.** `new_time(t)` is certainly after `t` on every core, so the commit stamp
//! is certainly after the start (TL2's `end > start`, which the text's change preserves) and
//! after the version of every variable the commit overwrites: versions of one variable
//! strictly increase, which makes "the orec changed" detectable by comparing words.

use ordo::{Clock, LogicalClock, Ordo, TimeOrder};

/// A clock TL2 can run on: an [`ordo::Clock`] plus what its `now()` means.
///
/// Implemented for [`LogicalClock`] (the original TL2 global version clock) and [`Ordo`]
/// (003 §4.3's TL2-Ordo). To run on another clock, implement [`Clock`] and this trait; the
/// contract is that of [`Clock`] (003 Figure 3: readings of two cores at one instant differ
/// by at most [`Clock::boundary`], and [`Clock::new_time`]`(t)` is certainly after `t` on
/// every core), plus the constant below.
pub trait TxClock: Clock {
    /// Whether [`Clock::now`] returns the last timestamp the clock issued (a counter, like
    /// [`LogicalClock`]) rather than a reading of a running clock (like [`Ordo`]).
    ///
    /// `true` is only correct when every timestamp equal to or below a `now()` reading was
    /// issued (by [`Clock::get_time`] or [`Clock::new_time`]) before that reading: TL2 then
    /// reads versions equal to its start. `false` is always safe: only versions certainly
    /// before the start are read.
    const NOW_IS_ISSUED: bool;
}

impl TxClock for LogicalClock {
    const NOW_IS_ISSUED: bool = true;
}

impl TxClock for Ordo {
    const NOW_IS_ISSUED: bool = false;
}

/// How a version compares with an attempt's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Written before the attempt began: part of its snapshot.
    Visible,
    /// Certainly written after the attempt began.
    Newer,
    /// Within the uncertainty window of the start: its order is unknown.
    Uncertain,
}

/// The start stamp of an attempt; `after` is a timestamp the start must be certainly after
/// on a running clock (the thread's last commit stamp, or the version that aborted its
/// previous attempt), if any.
#[inline]
pub(crate) fn start<C: TxClock>(clock: &C, after: Option<u64>) -> u64 {
    match after {
        Some(version) if !C::NOW_IS_ISSUED => clock.new_time(version),
        _ => clock.now(),
    }
}

/// Whether a variable at `version` may be read by an attempt that started at `start`.
#[inline]
pub(crate) fn seen<C: TxClock>(clock: &C, version: u64, start: u64) -> Seen {
    match clock.cmp_time(version, start) {
        TimeOrder::Before => Seen::Visible,
        TimeOrder::After => Seen::Newer,
        TimeOrder::Uncertain if C::NOW_IS_ISSUED && version <= start => Seen::Visible,
        TimeOrder::Uncertain => Seen::Uncertain,
    }
}

/// The commit stamp of an attempt that started at `start` and overwrites variables whose
/// newest version is `newest`.
#[inline]
pub(crate) fn commit<C: TxClock>(clock: &C, start: u64, newest: u64) -> u64 {
    clock.new_time(start.max(newest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_reads_the_version_equal_to_its_start() {
        let c = LogicalClock::new();
        let v = c.get_time();
        let s = start(&c, None);
        assert_eq!(s, v, "start is a load of the counter");
        assert_eq!(seen(&c, v, s), Seen::Visible);
        assert_eq!(seen(&c, v + 1, s), Seen::Newer);
        // After an abort on a version, a counter starts at `now()`, which is past it.
        assert_eq!(start(&c, Some(v)), v);
        let end = commit(&c, s, 0);
        assert!(end > s);
        assert_eq!(seen(&c, end, s), Seen::Newer);
    }

    #[test]
    fn a_running_clock_reads_only_versions_certainly_before_its_start() {
        let o = Ordo::monotonic();
        let base = 1_000_000;
        assert_eq!(seen(&o, base, base), Seen::Uncertain, "a tie is not an order");
        assert_eq!(seen(&o, base - 1, base), Seen::Visible);
        assert_eq!(seen(&o, base + 1, base), Seen::Newer);
    }

    #[test]
    fn an_abort_on_a_version_waits_out_its_window() {
        let o = Ordo::monotonic();
        let v = o.get_time() + 2_000; // 2 µs ahead of this core's clock
        let s = start(&o, Some(v));
        assert_eq!(seen(&o, v, s), Seen::Visible);
        let end = commit(&o, s, v);
        assert_eq!(o.cmp_time(end, s), TimeOrder::After);
    }
}
