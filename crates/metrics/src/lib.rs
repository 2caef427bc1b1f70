//! A [`metrics`] recorder whose counters, gauges and histograms are per-core.
//!
//! Rust services count through the `metrics` facade (`metrics::counter!("requests")
//! .increment(1)`), and the macro calls [`Recorder::register_counter`] on every use. The
//! stock recorders answer with a shared lock, an `Arc` clone and drop, and a `fetch_add` on
//! one word: atomic read-modify-writes on cache lines that every core writes, which the
//! coherence hardware serializes (000 §3.1). [`PerCoreRecorder`] keeps every update on the
//! calling core's own memory, the approach of OpLog's distributed counter (000 Figure 8,
//! 000 §4.1), and pays on the read, which a scraper makes every few seconds.
//!
//! ```
//! use oplog_metrics::PerCoreRecorder;
//!
//! let recorder = PerCoreRecorder::new();
//! // `metrics::set_global_recorder(recorder.clone())` in a program; here, for this thread:
//! metrics::with_local_recorder(&recorder, || {
//!     metrics::describe_counter!("requests", metrics::Unit::Count, "Requests served.");
//!     std::thread::scope(|s| {
//!         for _ in 0..4 {
//!             s.spawn(|| {
//!                 metrics::with_local_recorder(&recorder, || {
//!                     for _ in 0..1000 {
//!                         metrics::counter!("requests", "route" => "/").increment(1);
//!                     }
//!                 })
//!             });
//!         }
//!     });
//! });
//! assert!(recorder.render().contains("requests{route=\"/\"} 4000"));
//! ```
//!
//! # How
//!
//! Every core here is a thread. Counters keep one cell per thread per counter, written by
//! that thread alone with a plain load and store, and each thread keeps a cache of the
//! handles it has been handed (the `local` module); gauges and histograms live in an
//! [`oplog_percore::PerCore`] of per-thread slots, entered by their owner with plain stores
//! (no atomic read-modify-write where `membarrier` exists) and taken all at once by readers.
//! The `storage` module's docs give the details; in short:
//!
//! - **Counter `increment`** adds to the thread's cell: no shared line is written. A
//!   handle knows the cell of the thread it was made on, and finds it by comparing that
//!   thread's pointer with the caller's (one instruction, no thread-local lookup).
//! - **Registration of a known key** (`counter!`, `gauge!`, `histogram!` on every use) finds
//!   the key in the thread's cache (by the hash the key carries and the addresses of its
//!   name and labels) and clones the thread's own `Arc` handle: the reference count it
//!   writes is on a line only this thread touches. The first registration of a key on a
//!   thread takes the shared registry's lock, once.
//! - **Reads** ([`PerCoreRecorder::render`], [`PerCoreRecorder::counter`], ...) sum the
//!   counter cells of every live thread plus what exited threads left, and take every
//!   core's slot at once for gauges and histograms (a consistent cut). A read includes
//!   every update that completed before it began; once the writers are done it is exact.

//! # Semantics
//!
//! - **Counters** are `u64` and wrap on overflow. [`metrics::Counter::absolute`]`(v)` keeps its
//!   documented meaning exactly, "sets the counter to at least `v`": under the counter
//!   cells' lock (which serializes `absolute` calls and thread exits) it reads the total
//!   and, if below `v`, adds the difference. Increments are never lost: one running
//!   meanwhile is either in the total read or added on top, so afterwards the counter is at
//!   least `v` plus the increments the read missed. It takes a lock every counter of the
//!   recorder shares: meant for syncing with an external counter, not for a hot path.
//! - **Gauges** are a base value, replaced by `set`, plus per-core deltas that
//!   `increment` and `decrement` add to. A `set` bumps the gauge's epoch; a core's delta
//!   counts only if it was made in the current epoch. So a concurrent `set(v)` and
//!   `increment(d)` resolve in the order the increment read the epoch: an increment that
//!   read it before the set bumped it is ordered *before* the set (the gauge ends at `v`),
//!   one that read it after is ordered *after* (the gauge ends at `v + d`); either way every
//!   read agrees with that one order. Increments and decrements write only their core's
//!   cell (they read the epoch, a line only `set` writes); `set` takes the gauge's own lock.
//!   Deltas of different cores are summed in an unspecified grouping: exact for values that
//!   are integers below 2^53, otherwise within floating-point rounding of the sequential sum.
//! - **Histograms** record into per-core log-linear buckets (16 per power of two), merged on
//!   read: count, sum, exact min and max, and quantiles within
//!   [`histogram::RELATIVE_ERROR`] (1/32) of the sample of that rank
//!   ([`HistogramSnapshot::quantile`]). NaN samples are counted apart
//!   ([`HistogramSnapshot::nan`]).
//! - **Descriptions** (`describe_*`) keep the last unit and help text given for a name.
//!
//! # Rendering
//!
//! [`PerCoreRecorder::render`] writes every registered metric in the Prometheus text format
//! (histograms as summaries with the quantiles of [`render::QUANTILES`]); the [`render`]
//! module says how names that the format cannot hold are escaped, and which collisions are
//! reported ([`PerCoreRecorder::try_render`]). `examples/serve.rs` serves it over HTTP.
//!
//! # Not supported
//!
//! Metrics are never removed (no idle timeout), histograms are not rendered as Prometheus
//! histograms with `le` buckets, and metadata (level, target) is ignored. The recorder
//! holds [`oplog_percore::DEFAULT_MAX_THREADS`] thread indices for gauges, histograms and the
//! handle caches; threads beyond that many alive at once share one core under a lock that
//! costs a process-wide barrier per entry (correct, slow): raise it with
//! [`PerCoreRecorder::with_max_threads`]. Counters have no such limit.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;

use metrics::{Key, KeyName, Metadata, Recorder, SharedString, Unit};

pub mod histogram;
mod local;
pub mod render;
mod storage;

pub use histogram::HistogramSnapshot;
pub use render::RenderError;

use storage::{Kind, Storage};

/// The last clone of a recorder: closes it when dropped, so that threads let go of their
/// handle caches and the storage is freed once no handle is held anywhere.
struct Owner {
    storage: Arc<Storage>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.storage.close();
    }
}

/// A `metrics` recorder on per-core storage (see the crate docs). Cheap to clone: clones
/// share the metrics, so one clone can be installed with [`metrics::set_global_recorder`]
/// and another kept to [`render`](PerCoreRecorder::render).
#[derive(Clone)]
pub struct PerCoreRecorder {
    owner: Arc<Owner>,
}

impl fmt::Debug for PerCoreRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PerCoreRecorder").finish_non_exhaustive()
    }
}

impl Default for PerCoreRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl PerCoreRecorder {
    /// A recorder whose cores can be [`oplog_percore::DEFAULT_MAX_THREADS`] threads alive at once.
    pub fn new() -> Self {
        Self::with_max_threads(NonZeroUsize::new(oplog_percore::DEFAULT_MAX_THREADS).expect("the default is not zero"))
    }

    /// A recorder whose cores can be `max_threads` threads alive at once; gauge and
    /// histogram updates and registrations from threads beyond them share one core under a
    /// lock (counters are unaffected).
    ///
    /// # Panics
    /// If `max_threads` is above [`oplog_percore::MAX_THREADS`] (65,535), naming it.
    pub fn with_max_threads(max_threads: NonZeroUsize) -> Self {
        Self { owner: Arc::new(Owner { storage: Arc::new(Storage::new(max_threads.get())) }) }
    }

    fn storage(&self) -> &Arc<Storage> {
        &self.owner.storage
    }

    /// Every registered metric in the Prometheus text format, read at one instant. Metrics
    /// the format cannot tell apart are left out with a comment line each (see
    /// [`PerCoreRecorder::try_render`]).
    pub fn render(&self) -> String {
        render::render(&self.storage().snapshot()).0
    }

    /// As [`PerCoreRecorder::render`], but an error listing every metric left out, if any.
    pub fn try_render(&self) -> Result<String, RenderError> {
        match render::render(&self.storage().snapshot()) {
            (text, None) => Ok(text),
            (_, Some(error)) => Err(error),
        }
    }

    /// The value of counter `key`, or `None` if no counter has that key.
    pub fn counter(&self, key: &Key) -> Option<u64> {
        self.storage().counter_value(key)
    }

    /// The value of gauge `key`, or `None` if no gauge has that key.
    pub fn gauge(&self, key: &Key) -> Option<f64> {
        self.storage().gauge_value(key)
    }

    /// Histogram `key` merged over every core, or `None` if no histogram has that key.
    pub fn histogram(&self, key: &Key) -> Option<HistogramSnapshot> {
        self.storage().histogram_value(key)
    }
}

impl Recorder for PerCoreRecorder {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.storage().describe(Kind::Counter, key, unit, description);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.storage().describe(Kind::Gauge, key, unit, description);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.storage().describe(Kind::Histogram, key, unit, description);
    }

    #[inline]
    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> metrics::Counter {
        self.storage().counter(key)
    }

    #[inline]
    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> metrics::Gauge {
        self.storage().gauge(key)
    }

    #[inline]
    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> metrics::Histogram {
        self.storage().histogram(key)
    }
}

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
