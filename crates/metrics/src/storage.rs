//! Where the recorder keeps its metrics: one [`CoreState`] per core in an
//! [`oplog_percore::PerCore`], and a shared [`Registry`] of keys that only the first
//! registration of a key on a core, reads and descriptions touch.
//!
//! **Updates.** A counter increment adds to the calling thread's cell for the counter
//! (the `local` module: through a handle made on the thread, a compare of the thread's
//! pointer and a plain load and store; otherwise a thread-local load first). A gauge or
//! histogram update enters the calling thread's slot of the [`PerCore`] (the owner protocol:
//! plain stores, no atomic read-modify-write) and updates that core's cell for the metric's
//! index. Neither writes a cache line that another core writes (000 §4.1, the per-core
//! values of 000 Figure 8).
//!
//! **Registration.** A key the thread has registered before is answered from its handle
//! cache (`local`): no lock, and an `Arc` clone on a line only this thread writes. The first
//! registration of a key on a thread takes the [`Registry`]'s lock once.
//!
//! **Reads.** A gauge or histogram read takes every core's slot at once
//! ([`PerCore::lock_all`]): a consistent cut, since every update runs entirely inside one
//! slot's lock; it adds up gauge deltas and merges histograms. Counters are summed from the
//! threads' cells (see `local` for what a read during increments returns). Nothing is
//! reset, so reads never lose an update.
//!
//! **Memory.** Per live thread that counts: 8 bytes per counter (in chunks of 64 cells,
//! then doubling), folded away when the thread exits, and a cached handle (about 80 bytes)
//! per key it registered. Per core of the `PerCore` (thread indices, reused by the next
//! thread after one exits, values kept): 16 bytes per gauge, and per histogram the buckets
//! it has seen (8 bytes each, 16 per power of two of the values' range) plus 80. Memory
//! follows the number of threads alive at once, not the number ever started.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard};

use metrics::{CounterFn, GaugeFn, HistogramFn, Key, KeyName, SharedString, Unit};
use oplog_percore::{Layout, PerCore};

use crate::histogram::{HistogramSnapshot, LocalHistogram};
use crate::local::{Local, Owned};

/// What kind of metric a key was registered as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// Hashes a [`Key`] by the hash it carries (its `Hash` impl writes exactly that `u64`), so a
/// cache lookup hashes nothing.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not reached for `Key` (see above); FNV-1a keeps any other use correct.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// A map keyed by [`Key`]. `Key`'s hash and equality use only its name and labels, never
/// interior mutability (the `metrics` docs say so), so it is a sound map key.
#[allow(clippy::mutable_key_type)]
type KeyMap<V> = HashMap<Key, V, BuildHasherDefault<KeyHasher>>;

/// Whether `a` and `b` are the same key: by the addresses of their name and labels first
/// (a macro's key is the same static on every call, and so is its retained clone), then by
/// their text.
#[inline(always)]
fn same_key(a: &Key, b: &Key) -> bool {
    let (an, bn) = (a.name(), b.name());
    let (al, bl) = (a.labels().as_slice(), b.labels().as_slice());
    (std::ptr::eq(an, bn) && std::ptr::eq(al, bl)) || a == b
}

/// Slots of [`HandleMap`]'s direct-mapped front.
const RECENT: usize = 16;

/// Handles by key: a direct-mapped front of [`RECENT`] slots by the hash the key carries
/// (one compare of addresses for a macro's static key), then a map by that hash, then
/// [`same_key`].
pub(crate) struct HandleMap<H> {
    entries: Vec<(Key, H)>,
    by_hash: HashMap<u64, Vec<usize>, BuildHasherDefault<KeyHasher>>,
    /// `entries` index + 1 of the last key found in each slot (0: none).
    recent: [usize; RECENT],
}

impl<H> Default for HandleMap<H> {
    fn default() -> Self {
        Self { entries: Vec::new(), by_hash: HashMap::default(), recent: [0; RECENT] }
    }
}

impl<H: Clone> HandleMap<H> {
    #[inline(always)]
    fn get(&mut self, key: &Key) -> Option<H> {
        let slot = key.get_hash() as usize % RECENT;
        if let Some((k, h)) = self.recent[slot].checked_sub(1).map(|i| &self.entries[i])
            && same_key(k, key)
        {
            return Some(h.clone());
        }
        self.get_slow(key, slot)
    }

    #[cold]
    fn get_slow(&mut self, key: &Key, slot: usize) -> Option<H> {
        let i = *self.by_hash.get(&key.get_hash())?.iter().find(|&&i| same_key(&self.entries[i].0, key))?;
        self.recent[slot] = i + 1;
        Some(self.entries[i].1.clone())
    }

    /// Keeps `handle` for `key` unless one is there; returns the one kept and the spare.
    fn insert(&mut self, key: &Key, handle: H) -> (H, Option<H>) {
        if let Some(h) = self.get(key) {
            return (h, Some(handle));
        }
        self.by_hash.entry(key.get_hash()).or_default().push(self.entries.len());
        self.entries.push((key.to_retained(), handle.clone()));
        (handle, None)
    }
}

/// The handles one thread has been handed, one per key: cloning one touches a reference
/// count that only this thread writes.
#[derive(Default)]
pub(crate) struct HandleCache {
    counters: HandleMap<metrics::Counter>,
    gauges: HandleMap<metrics::Gauge>,
    histograms: HandleMap<metrics::Histogram>,
}

/// A gauge's per-core cell: the increments this core made since the gauge's `epoch`-th set.
#[derive(Clone, Copy, Debug, Default)]
struct GaugeCell {
    epoch: u64,
    delta: f64,
}

/// One core's values of every metric, indexed by the metric's registration index.
#[derive(Default)]
pub(crate) struct CoreState {
    gauges: Vec<GaugeCell>,
    histograms: Vec<LocalHistogram>,
}

/// The element `i` of `v`, growing `v` with defaults to reach it (a metric registered after
/// this core last grew its table).
#[inline(always)]
fn cell<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if i >= v.len() {
        grow(v, i);
    }
    // SAFETY: `grow` made `v.len() > i` if it was not already.
    unsafe { v.get_unchecked_mut(i) }
}

#[cold]
#[inline(never)]
fn grow<T: Default>(v: &mut Vec<T>, i: usize) {
    v.resize_with(i + 1, T::default);
}

/// The keys of one kind, in registration order (a key's index is its position).
#[derive(Default)]
struct Table {
    index: KeyMap<usize>,
    keys: Vec<Key>,
}

impl Table {
    /// The index of `key`, registering it if new.
    fn index_of(&mut self, key: &Key) -> usize {
        if let Some(&i) = self.index.get(key) {
            return i;
        }
        let i = self.keys.len();
        let key = key.to_retained();
        self.index.insert(key.clone(), i);
        self.keys.push(key);
        i
    }
}

/// The unit and help text a `describe_*` call gave a name.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Description {
    pub(crate) unit: Option<Unit>,
    pub(crate) help: String,
}

/// Every key registered, the gauges' shared state, and the descriptions.
#[derive(Default)]
struct Registry {
    counters: Table,
    gauges: Table,
    gauge_states: Vec<Arc<GaugeState>>,
    histograms: Table,
    descriptions: HashMap<(Kind, String), Description>,
}

/// What a gauge shares between cores: how many times it was set, and the value it was last
/// set to. Increments never write it.
#[derive(Debug, Default)]
struct GaugeState {
    /// Bumped by every `set`, under `base`'s lock; read by increments (a shared line, but
    /// only written by `set`).
    epoch: AtomicU64,
    /// The value of the last `set` (0 before any).
    base: Mutex<f64>,
}

/// Everything registered, read back at one instant.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub(crate) counters: Vec<(Key, u64)>,
    pub(crate) gauges: Vec<(Key, f64)>,
    pub(crate) histograms: Vec<(Key, HistogramSnapshot)>,
    pub(crate) descriptions: HashMap<(Kind, String), Description>,
}

/// Locks a mutex, taking it over if a panicking holder poisoned it: every critical section
/// here leaves the data consistent at every point where it could panic (allocation aside).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The recorder's storage (see the module docs).
pub(crate) struct Storage {
    local: Local,
    cores: PerCore<CoreState>,
    registry: RwLock<Registry>,
}

impl Storage {
    /// Storage whose per-thread cores hand out `max_threads` thread indices (beyond them,
    /// threads share index 0).
    ///
    /// # Panics
    /// If `max_threads` is 0 or above [`oplog_percore::MAX_THREADS`], naming it.
    pub(crate) fn new(max_threads: usize) -> Self {
        let layout = Layout::per_thread().max_threads(max_threads);
        Self {
            local: Local::new(),
            cores: PerCore::new(layout, 1, false, |_, _| CoreState::default()),
            registry: RwLock::default(),
        }
    }

    fn registry(&self) -> RwLockReadGuard<'_, Registry> {
        self.registry.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn registry_mut(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.registry.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The calling thread's cached handle of kind `get` for `key`, or `make(index)` for the
    /// key's index in `table`, registered and cached.
    #[inline(always)]
    fn handle<H: Clone>(
        &self,
        key: &Key,
        cache: impl Fn(&mut HandleCache) -> &mut HandleMap<H>,
        slow: impl FnOnce() -> H,
    ) -> H {
        match self.local.with_cache(|c| cache(c).get(key)) {
            Some(Some(h)) => h,
            _ => {
                let handle = slow();
                // Dropped after the cache is let go (the contract of `with_cache`).
                let kept = self.local.with_cache(|c| cache(c).insert(key, handle.clone()));
                kept.map_or(handle, |(h, _spare)| h)
            }
        }
    }

    /// The calling thread's counter handle for `key`.
    #[inline]
    pub(crate) fn counter(self: &Arc<Self>, key: &Key) -> metrics::Counter {
        self.handle(key, |c| &mut c.counters, || self.new_counter(key))
    }

    #[cold]
    fn new_counter(self: &Arc<Self>, key: &Key) -> metrics::Counter {
        let index = self.registry_mut().counters.index_of(key);
        let owned = self.local.owned(index);
        metrics::Counter::from_arc(Arc::new(CounterHandle { storage: self.clone(), index, owned }))
    }

    /// The calling thread's gauge handle for `key`.
    #[inline]
    pub(crate) fn gauge(self: &Arc<Self>, key: &Key) -> metrics::Gauge {
        self.handle(key, |c| &mut c.gauges, || self.new_gauge(key))
    }

    #[cold]
    fn new_gauge(self: &Arc<Self>, key: &Key) -> metrics::Gauge {
        let (index, state) = {
            let mut registry = self.registry_mut();
            let index = registry.gauges.index_of(key);
            if index == registry.gauge_states.len() {
                registry.gauge_states.push(Arc::default());
            }
            (index, registry.gauge_states[index].clone())
        };
        metrics::Gauge::from_arc(Arc::new(GaugeHandle { storage: self.clone(), index, state }))
    }

    /// The calling thread's histogram handle for `key`.
    #[inline]
    pub(crate) fn histogram(self: &Arc<Self>, key: &Key) -> metrics::Histogram {
        self.handle(key, |c| &mut c.histograms, || self.new_histogram(key))
    }

    #[cold]
    fn new_histogram(self: &Arc<Self>, key: &Key) -> metrics::Histogram {
        let index = self.registry_mut().histograms.index_of(key);
        metrics::Histogram::from_arc(Arc::new(HistogramHandle { storage: self.clone(), index }))
    }

    /// Records `describe_*`: the last description of a name wins.
    pub(crate) fn describe(&self, kind: Kind, name: KeyName, unit: Option<Unit>, help: SharedString) {
        let description = Description { unit, help: help.into_owned() };
        self.registry_mut().descriptions.insert((kind, name.as_str().to_owned()), description);
    }

    /// Every metric's value at one instant (a consistent cut over every core).
    pub(crate) fn snapshot(&self) -> Snapshot {
        let registry = self.registry();
        let counters = self.local.read_all(registry.counters.keys.len());
        let mut gauges = vec![0.0; registry.gauges.keys.len()];
        let mut histograms = vec![HistogramSnapshot::default(); registry.histograms.keys.len()];
        {
            let mut all = self.cores.lock_all();
            // Each gauge's last set and its epoch, held until the cells are read so no set
            // comes between.
            let bases: Vec<MutexGuard<'_, f64>> = registry.gauge_states.iter().map(|g| lock(&g.base)).collect();
            let epochs: Vec<u64> = registry.gauge_states.iter().map(|g| g.epoch.load(Ordering::SeqCst)).collect();
            for (g, base) in gauges.iter_mut().zip(&bases) {
                *g = **base;
            }
            for (_, _, core) in all.iter_mut() {
                for ((total, cell), &epoch) in gauges.iter_mut().zip(&core.gauges).zip(&epochs) {
                    if cell.epoch == epoch {
                        *total += cell.delta;
                    }
                }
                for (total, h) in histograms.iter_mut().zip(&core.histograms) {
                    total.merge(h);
                }
            }
        }
        Snapshot {
            counters: registry.counters.keys.iter().cloned().zip(counters).collect(),
            gauges: registry.gauges.keys.iter().cloned().zip(gauges).collect(),
            histograms: registry.histograms.keys.iter().cloned().zip(histograms).collect(),
            descriptions: registry.descriptions.clone(),
        }
    }

    /// The value of counter `key` at one instant, if registered.
    pub(crate) fn counter_value(&self, key: &Key) -> Option<u64> {
        let index = *self.registry().counters.index.get(key)?;
        Some(self.local.read(index))
    }

    /// The value of gauge `key` at one instant, if registered.
    pub(crate) fn gauge_value(&self, key: &Key) -> Option<f64> {
        let registry = self.registry();
        let index = *registry.gauges.index.get(key)?;
        let state = &registry.gauge_states[index];
        let mut all = self.cores.lock_all();
        let base = lock(&state.base);
        let epoch = state.epoch.load(Ordering::SeqCst);
        let cells = all.iter_mut().filter_map(|(_, _, c)| c.gauges.get(index).copied());
        Some(cells.filter(|c| c.epoch == epoch).fold(*base, |a, c| a + c.delta))
    }

    /// Histogram `key` merged over every core at one instant, if registered.
    pub(crate) fn histogram_value(&self, key: &Key) -> Option<HistogramSnapshot> {
        let index = *self.registry().histograms.index.get(key)?;
        let mut all = self.cores.lock_all();
        let mut total = HistogramSnapshot::default();
        for (_, _, core) in all.iter_mut() {
            if let Some(h) = core.histograms.get(index) {
                total.merge(h);
            }
        }
        Some(total)
    }

    /// The recorder's last clone is gone: threads let go of their handle caches (which
    /// hold this storage). Handles held elsewhere keep working.
    pub(crate) fn close(&self) {
        self.local.close();
    }
}

/// A counter handle: a metric index in a storage, and the cell of the thread it was made
/// for (every thread is handed its own handle; one given to another thread still works,
/// through that thread's own cell).
struct CounterHandle {
    storage: Arc<Storage>,
    index: usize,
    owned: Owned,
}

impl CounterFn for CounterHandle {
    #[inline]
    fn increment(&self, value: u64) {
        if !self.owned.try_add(value) {
            self.increment_elsewhere(value);
        }
    }

    fn absolute(&self, value: u64) {
        self.storage.local.absolute(self.index, value);
    }
}

impl CounterHandle {
    /// An increment on a thread other than the one the handle was made for, through that
    /// thread's own cell: out of line, so that the owner's path needs no stack frame.
    #[cold]
    #[inline(never)]
    fn increment_elsewhere(&self, value: u64) {
        self.storage.local.add(self.index, value);
    }
}

/// A gauge handle: a metric index and the gauge's shared state.
struct GaugeHandle {
    storage: Arc<Storage>,
    index: usize,
    state: Arc<GaugeState>,
}

impl GaugeFn for GaugeHandle {
    #[inline]
    fn increment(&self, value: f64) {
        let mut core = self.storage.cores.enter(0);
        // Inside the slot: a read holding every slot sees this increment whole or not at all.
        let epoch = self.state.epoch.load(Ordering::SeqCst);
        let c = cell(&mut core.gauges, self.index);
        if c.epoch != epoch {
            // A set came since this core's last increment: what it had is overwritten.
            *c = GaugeCell { epoch, delta: 0.0 };
        }
        c.delta += value;
    }

    fn decrement(&self, value: f64) {
        self.increment(-value);
    }

    fn set(&self, value: f64) {
        let mut base = lock(&self.state.base);
        self.state.epoch.fetch_add(1, Ordering::SeqCst);
        *base = value;
    }
}

/// A histogram handle: a metric index in a storage.
struct HistogramHandle {
    storage: Arc<Storage>,
    index: usize,
}

impl HistogramFn for HistogramHandle {
    #[inline]
    fn record(&self, value: f64) {
        let mut core = self.storage.cores.enter(0);
        cell(&mut core.histograms, self.index).record(value, 1);
    }

    fn record_many(&self, value: f64, count: usize) {
        let mut core = self.storage.cores.enter(0);
        cell(&mut core.histograms, self.index).record(value, count as u64);
    }
}
