//! The timestamp steps both schemes share: where a transaction's timestamps come from and how
//! they are compared, as 003 §4.2 turns them from a logical clock to Ordo.
//!
//! | step | call | logical clock | Ordo |
//! |---|---|---|---|
//! | a transaction's start (its snapshot) | [`Stamps::start`] = `new_time(floor)` | CAS increment of the shared counter | one clock read (waits out the boundary only if the session's last commit is that recent) |
//! | a start moved past a newer version (OCC's extension) | [`Stamps::after`] = `new_time(t)` | CAS increment | clock reads until certainly after `t` |
//! | OCC's commit timestamp | [`Stamps::occ_commit`] = `get_time` | `fetch_add` | one clock read |
//! | MVCC's commit timestamp | [`Stamps::after`]`(start)` = `new_time(start)` | CAS increment | clock reads until certainly after the start |
//! | every comparison | [`Stamps::order`] = `cmp_time` | exact (`Uncertain` only for equal stamps) | `Uncertain` within the boundary: the caller aborts conservatively |
//!
//! Every timestamp a transaction takes is counted in the session's [`Stats`], so the benchmark
//! can report timestamps per transaction. A stamp must fit in 62 bits (both schemes pack it
//! beside flag bits); every clock of the `ordo` crate does for centuries.

use ordo::{Clock, TimeOrder};

use crate::Stats;

/// The largest stamp the schemes can store (62 bits).
pub(crate) const MAX_STAMP: u64 = (1 << 62) - 1;

/// A clock, used through the steps above.
#[derive(Debug)]
pub struct Stamps<C> {
    clock: C,
}

impl<C: Clock> Stamps<C> {
    pub(crate) fn new(clock: C) -> Self {
        Self { clock }
    }

    pub(crate) fn clock(&self) -> &C {
        &self.clock
    }

    /// The start timestamp of a transaction whose session last committed (or was told to
    /// wait past) `floor`: certainly after `floor`, so the session sees its own writes.
    #[inline]
    pub(crate) fn start(&self, floor: u64, stats: &mut Stats) -> u64 {
        self.after(floor, stats)
    }

    /// A timestamp certainly after `t` (`new_time`).
    #[inline]
    pub(crate) fn after(&self, t: u64, stats: &mut Stats) -> u64 {
        stats.timestamps += 1;
        checked(self.clock.new_time(t))
    }

    /// OCC's commit timestamp (`get_time`).
    #[inline]
    pub(crate) fn occ_commit(&self, stats: &mut Stats) -> u64 {
        stats.timestamps += 1;
        checked(self.clock.get_time())
    }

    /// The current time without taking a timestamp (a load for the logical clock): the
    /// garbage collector's horizon and tags, never a transaction's stamp.
    #[inline]
    pub(crate) fn now(&self) -> u64 {
        self.clock.now()
    }

    /// How `a` compares with `b` (`cmp_time`).
    #[inline]
    pub(crate) fn order(&self, a: u64, b: u64) -> TimeOrder {
        self.clock.cmp_time(a, b)
    }

    /// Whether `a` is certainly before `b`.
    #[inline]
    pub(crate) fn before(&self, a: u64, b: u64) -> bool {
        self.order(a, b) == TimeOrder::Before
    }

    /// The clock's uncertainty window.
    #[inline]
    pub(crate) fn boundary(&self) -> u64 {
        self.clock.boundary()
    }
}

/// `t`, after checking that it fits the 62 bits the schemes store.
#[inline]
fn checked(t: u64) -> u64 {
    assert!(t <= MAX_STAMP, "timestamp {t} does not fit in 62 bits: the clock is not one the store supports");
    t
}
