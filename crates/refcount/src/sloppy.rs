//! Sloppy counters (004 §4.3): one central count plus per-core spare references.
//!
//! "A sloppy counter represents one logical counter as a single shared central counter and a
//! set of per-core counts of spare references. When a core increments a sloppy counter by V,
//! it first tries to acquire a spare reference by decrementing its per-core counter by V. If
//! the per-core counter is greater than or equal to V ... the decrement succeeds. Otherwise
//! the core must acquire the references from the central counter, so it increments the shared
//! counter by V. When a core decrements a sloppy counter by V, it releases these references as
//! local spare references, incrementing its per-core counter by V. ... If the local count grows
//! above some threshold, spare references are released by decrementing both the per-core count
//! and the central count." (004 §4.3, Figure 2.)
//!
//! The invariant: **central = Σ per-core spares + references in use**, at every point where no
//! operation is in progress. Every operation runs entirely under its core's lock (central
//! updates included), so [`SloppyCounter::value`], which takes every core's lock at once, sees
//! such a point and returns `central − Σ spares` exactly.
//!
//! A counter that keeps being taken and released on the same cores touches only their spares:
//! after the first miss, `inc` takes a spare and `dec` gives it back. The price is memory,
//! "space proportional to the number of cores" per counter (004 §4.3). As in Linux, where each
//! CPU's counters live in that CPU's per-CPU area, a counter here is an index into per-core
//! arrays of spares owned by its [`SloppyDomain`]: 8 bytes per counter per core, each core's
//! array on its own memory, so no two cores write one cache line.
//!
//! Finding the true value is expensive (every core's lock, and with per-thread cores a
//! process-wide barrier), "so sloppy counters should only be used for objects that are
//! relatively infrequently de-allocated"; so is dropping a counter, whose index must be
//! zeroed on every core before reuse: drops are batched ([`RETIRE_BATCH`]).

use crate::config::{ConfigError, Layout, MAX_THRESHOLD, layout_setters};
use crate::cores::{Cores, MakeState};
use oplog_percore::primitive::{AtomicU64, Mutex, Ordering};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Default threshold: a core keeps at most this many spare references of one counter.
pub const DEFAULT_THRESHOLD: u64 = 64;

/// Dropped counters whose indices are zeroed together (one lock of every core per batch).
pub const RETIRE_BATCH: usize = 256;

/// Settings for a [`SloppyDomain`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SloppyConfig {
    layout: Layout,
    threshold: u64,
}

impl Default for SloppyConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl SloppyConfig {
    /// Per-thread cores, threshold [`DEFAULT_THRESHOLD`].
    pub fn new() -> Self {
        SloppyConfig { layout: Layout::per_thread(), threshold: DEFAULT_THRESHOLD }
    }

    /// Spare references a core may hold for one counter before it releases the excess to the
    /// central count (keeping half the threshold). 1 to 2⁴⁰.
    pub fn threshold(mut self, n: u64) -> Self {
        self.threshold = n;
        self
    }
}

layout_setters!(SloppyConfig);

/// A family of sloppy counters sharing per-core arrays of spare references (see the module
/// docs).
pub struct SloppyDomain {
    cores: Cores<Spares>,
    threshold: i64,
    indices: Mutex<Indices>,
}

impl fmt::Debug for SloppyDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SloppyDomain")
            .field("mode", &self.cores.mode())
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

/// One core's spare references, indexed by counter.
#[derive(Debug, Default)]
struct Spares {
    counts: Vec<i64>,
}

/// Counter indices: free ones, dropped ones not yet zeroed, and the next never used.
#[derive(Debug)]
struct Indices {
    free: Vec<usize>,
    retired: Vec<usize>,
    next: usize,
}

impl SloppyDomain {
    /// A domain configured by `config`.
    ///
    /// # Errors
    /// When a setting is out of range; the error names it and the value.
    pub fn new(config: SloppyConfig) -> Result<Arc<Self>, ConfigError> {
        config.layout.validate()?;
        if config.threshold == 0 || config.threshold > MAX_THRESHOLD {
            return Err(ConfigError::Threshold(config.threshold));
        }
        let make: MakeState<Spares> = Box::new(|_| Spares::default());
        Ok(Arc::new(SloppyDomain {
            cores: Cores::new(config.layout, make),
            threshold: config.threshold as i64,
            indices: Mutex::new(Indices { free: Vec::new(), retired: Vec::new(), next: 0 }, "Sloppy.indices"),
        }))
    }

    /// The process-wide domain with the default configuration.
    pub fn global() -> &'static Arc<Self> {
        static GLOBAL: OnceLock<Arc<SloppyDomain>> = OnceLock::new();
        GLOBAL.get_or_init(|| SloppyDomain::new(SloppyConfig::new()).expect("the default configuration is valid"))
    }

    /// The spare-reference threshold.
    pub fn threshold(&self) -> u64 {
        self.threshold as u64
    }

    /// Per-CPU or per-thread cores.
    pub fn mode(&self) -> crate::CoreMode {
        self.cores.mode()
    }

    /// Number of per-core states created so far (per-CPU: every CPU; per-thread: the shared
    /// one and each one a thread has claimed).
    pub fn cores(&self) -> usize {
        self.cores.created().len()
    }

    /// Bytes of the per-core spare arrays and tables: this grows with the number of counters
    /// times the number of cores (004 §4.3's "space proportional to the number of cores").
    pub fn footprint(&self) -> usize {
        let mut all = self.cores.lock_all();
        let arrays: usize = all.iter_mut().map(|(_, s)| s.counts.capacity() * std::mem::size_of::<i64>()).sum();
        drop(all);
        self.cores.footprint() + arrays
    }

    fn allocate(&self) -> usize {
        let mut ix = self.indices.lock();
        if ix.free.is_empty() && !ix.retired.is_empty() {
            self.zero_retired(&mut ix);
        }
        match ix.free.pop() {
            Some(i) => i,
            None => {
                ix.next += 1;
                ix.next - 1
            }
        }
    }

    fn retire(&self, index: usize) {
        let mut ix = self.indices.lock();
        ix.retired.push(index);
        if ix.retired.len() >= RETIRE_BATCH {
            self.zero_retired(&mut ix);
        }
    }

    /// Zeroes the spares of every retired index on every core and makes them free.
    fn zero_retired(&self, ix: &mut Indices) {
        let mut all = self.cores.lock_all();
        for (_, spares) in all.iter_mut() {
            for &i in &ix.retired {
                if let Some(c) = spares.counts.get_mut(i) {
                    *c = 0;
                }
            }
        }
        drop(all);
        let retired = std::mem::take(&mut ix.retired);
        ix.free.extend(retired);
    }
}

/// A counter of references (or any resource) whose increments and decrements usually touch
/// only the calling core's spare references (see the module docs).
///
/// ```
/// use oplog_refcount::SloppyCounter;
///
/// let refs = SloppyCounter::new(1); // the creator's reference
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             for _ in 0..100 {
///                 refs.inc(); // take a reference ...
///                 refs.dec(); // ... and give it back
///             }
///         });
///     }
/// });
/// assert_eq!(refs.value(), 1);
/// assert_eq!(refs.central(), refs.spares().iter().sum::<i64>() + 1);
/// ```
pub struct SloppyCounter {
    central: AtomicU64,
    index: usize,
    domain: Arc<SloppyDomain>,
}

impl fmt::Debug for SloppyCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SloppyCounter").field("index", &self.index).field("central", &self.central()).finish()
    }
}

impl SloppyCounter {
    /// A counter with `initial` references in use, in the process-wide domain.
    pub fn new(initial: i64) -> Self {
        Self::with_domain(SloppyDomain::global(), initial)
    }

    /// A counter with `initial` references in use, in `domain`.
    pub fn with_domain(domain: &Arc<SloppyDomain>, initial: i64) -> Self {
        SloppyCounter {
            central: AtomicU64::new(initial as u64, "Sloppy.central"),
            index: domain.allocate(),
            domain: domain.clone(),
        }
    }

    /// The domain this counter belongs to.
    pub fn domain(&self) -> &Arc<SloppyDomain> {
        &self.domain
    }

    /// Takes one reference.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    /// Releases one reference.
    #[inline]
    pub fn dec(&self) {
        self.sub(1);
    }

    /// Takes `v` references: from this core's spares if it holds at least `v`, else from the
    /// central count.
    ///
    /// # Panics
    /// If `v` exceeds `i64::MAX`.
    #[inline]
    pub fn add(&self, v: u64) {
        let v = amount(v);
        let i = self.index;
        self.domain.cores.with_local(|_, s| self.add_in(s, i, v));
    }

    /// Releases `v` references into this core's spares; above the threshold, the excess goes
    /// back to the central count.
    ///
    /// # Panics
    /// If `v` exceeds `i64::MAX`.
    #[inline]
    pub fn sub(&self, v: u64) {
        let v = amount(v);
        let i = self.index;
        self.domain.cores.with_local(|_, s| self.sub_in(s, i, v));
    }

    /// [`SloppyCounter::add`] as if run on core `core` (for tests); false if that core does not
    /// exist.
    pub fn add_on(&self, core: usize, v: u64) -> bool {
        let v = amount(v);
        self.domain.cores.with_core(core, |s| self.add_in(s, self.index, v)).is_some()
    }

    /// [`SloppyCounter::sub`] as if run on core `core` (for tests); false if that core does not
    /// exist.
    pub fn sub_on(&self, core: usize, v: u64) -> bool {
        let v = amount(v);
        self.domain.cores.with_core(core, |s| self.sub_in(s, self.index, v)).is_some()
    }

    #[inline(always)]
    fn add_in(&self, s: &mut Spares, i: usize, v: i64) {
        match s.counts.get_mut(i) {
            Some(c) if *c >= v => *c -= v,
            _ => {
                self.central.fetch_add(v as u64, Ordering::Relaxed);
            }
        }
    }

    #[inline(always)]
    fn sub_in(&self, s: &mut Spares, i: usize, v: i64) {
        if i >= s.counts.len() {
            s.counts.resize((i + 1).next_power_of_two(), 0);
        }
        let c = &mut s.counts[i];
        *c += v;
        if *c > self.domain.threshold {
            let release = *c - self.domain.threshold / 2;
            *c -= release;
            self.central.fetch_sub(release as u64, Ordering::Relaxed);
        }
    }

    /// The central count (spares included: see the invariant in the module docs).
    pub fn central(&self) -> i64 {
        self.central.load(Ordering::Relaxed) as i64
    }

    /// Every core's spare references for this counter, read at one instant (cores in index
    /// order; cores that never held one read 0).
    pub fn spares(&self) -> Vec<i64> {
        let mut all = self.domain.cores.lock_all();
        all.iter_mut().map(|(_, s)| s.counts.get(self.index).copied().unwrap_or(0)).collect()
    }

    /// The references in use, exactly: `central − Σ spares` at one instant (every core
    /// locked). Negative if more were released than taken.
    pub fn value(&self) -> i64 {
        let mut all = self.domain.cores.lock_all();
        let spares: i64 = all.iter_mut().map(|(_, s)| s.counts.get(self.index).copied().unwrap_or(0)).sum();
        self.central() - spares
    }

    /// Returns every core's spares to the central count (004 §4.3's reconciliation) and the
    /// references in use, which the central count now equals.
    pub fn reconcile(&self) -> i64 {
        let mut all = self.domain.cores.lock_all();
        let mut spares = 0;
        for (_, s) in all.iter_mut() {
            if let Some(c) = s.counts.get_mut(self.index) {
                spares += std::mem::take(c);
            }
        }
        self.central.fetch_sub(spares as u64, Ordering::Relaxed);
        self.central()
    }
}

/// `v` as a signed amount.
#[inline(always)]
fn amount(v: u64) -> i64 {
    i64::try_from(v)
        .unwrap_or_else(|_| panic!("a sloppy counter cannot add or subtract {v} (more than i64::MAX) at once"))
}

impl Drop for SloppyCounter {
    fn drop(&mut self) {
        self.domain.retire(self.index);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::CoreMode;

    fn domain(mode: CoreMode, threshold: u64) -> Arc<SloppyDomain> {
        SloppyDomain::new(SloppyConfig::new().mode(mode).cpus(3).max_threads(3).threshold(threshold)).unwrap()
    }

    #[test]
    fn figure_2_a_released_reference_is_reused_without_the_central_count() {
        let d = domain(CoreMode::PerCpu, 8);
        let c = SloppyCounter::with_domain(&d, 0);
        assert!(c.add_on(0, 1), "core 0 acquires a reference from the central counter");
        assert_eq!((c.central(), c.spares()), (1, vec![0, 0, 0]));
        assert!(c.sub_on(0, 1), "releasing it adds a spare on core 0");
        assert_eq!((c.central(), c.spares()), (1, vec![1, 0, 0]));
        assert!(c.add_on(0, 1), "another thread on core 0 takes the spare");
        assert_eq!((c.central(), c.spares(), c.value()), (1, vec![0, 0, 0], 1));
        assert!(c.add_on(1, 1), "core 1 has no spare: central");
        assert_eq!((c.central(), c.value()), (2, 2));
        assert!(!c.add_on(7, 1), "no core 7");
    }

    #[test]
    fn spares_above_the_threshold_go_back_to_the_central_count() {
        let d = domain(CoreMode::PerCpu, 8);
        let c = SloppyCounter::with_domain(&d, 0);
        c.add_on(1, 20);
        assert_eq!(c.central(), 20);
        for _ in 0..8 {
            c.sub_on(1, 1);
        }
        assert_eq!((c.central(), c.spares()[1]), (20, 8), "at the threshold: kept");
        c.sub_on(1, 1);
        assert_eq!((c.central(), c.spares()[1]), (15, 4), "above: release down to half the threshold");
        c.add_on(1, 5);
        assert_eq!((c.central(), c.spares()[1]), (20, 4), "fewer spares than V: central");
        assert_eq!(c.value(), 16);
        assert_eq!(c.reconcile(), 16);
        assert_eq!((c.central(), c.spares()), (16, vec![0, 0, 0]));
    }

    #[test]
    fn dropped_counters_leave_no_spares_to_their_successors() {
        let d = domain(CoreMode::PerCpu, 1000);
        let first: Vec<SloppyCounter> = (0..RETIRE_BATCH).map(|_| SloppyCounter::with_domain(&d, 0)).collect();
        for c in &first {
            c.add_on(2, 3);
            c.sub_on(2, 3);
        }
        drop(first);
        let again: Vec<SloppyCounter> = (0..RETIRE_BATCH).map(|_| SloppyCounter::with_domain(&d, 0)).collect();
        assert!(again.iter().all(|c| c.index < RETIRE_BATCH), "indices are reused");
        assert!(again.iter().all(|c| c.spares() == vec![0, 0, 0] && c.value() == 0));
    }

    #[test]
    #[should_panic(expected = "cannot add or subtract 18446744073709551615 (more than i64::MAX)")]
    fn an_amount_beyond_i64_is_rejected() {
        let d = domain(CoreMode::PerCpu, 8);
        SloppyCounter::with_domain(&d, 0).add(u64::MAX);
    }

    #[test]
    fn bad_settings_are_rejected() {
        assert_eq!(SloppyDomain::new(SloppyConfig::new().threshold(0)).unwrap_err(), ConfigError::Threshold(0));
        assert_eq!(SloppyDomain::new(SloppyConfig::new().cpus(0)).unwrap_err(), ConfigError::Cpus(0));
        let d = SloppyDomain::new(SloppyConfig::new().threshold(5)).unwrap();
        assert_eq!(d.threshold(), 5);
        assert_eq!(d.mode(), CoreMode::PerThread);
    }
}
