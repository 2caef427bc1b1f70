//! `metrics`: updates per second through the `metrics` facade, for three recorders.
//!
//! Rust services count through `metrics::counter!("name").increment(1)`: the macro asks the
//! recorder to register the key on every use and drops the handle it gets back. The stock
//! recorders answer from a registry of shared `Arc<AtomicU64>`s behind sharded locks, so each
//! use writes several lines every core shares (the lock word, the `Arc` count, the counter:
//! 000 §3.1). `oplog-metrics` answers from per-core storage and a per-core handle cache.
//!
//! Every thread installs the recorder under test as its thread's default
//! (`metrics::set_default_local_recorder`: a process can set its global recorder only once,
//! and the local one is what the macros use first, so each id measures its own recorder),
//! then loops over one of three paths:
//!
//! - the macro path, `counter!(NAME).increment(1)` (ids `oplog-metrics`, `metrics-util`,
//!   `prometheus-exporter`: the recorders as users meet them);
//! - a held handle, registered once per thread, then `increment(1)` (ids with `-handle`),
//!   beside `fast-counter` (`ConcurrentCounter::add(1)`, sharded padded atomics: the
//!   published crate closest to Java's `LongAdder`, one per CPU) and `facade-floor` (a
//!   handle of the worker's own whose `increment` is a plain load and store of a padded
//!   word: what any held handle costs at least, the facade's `dyn` call included);
//! - histogram records through the macro path, `histogram!(NAME).record(v)` with `v`
//!   cycling over 1024 values spanning three decades (ids with `-histogram`).
//!
//! Recorders: `oplog-metrics` is [`PerCoreRecorder::new`] (per-thread cores);
//! `metrics-util` is `metrics_util::registry::Registry` with its atomic storage behind a
//! minimal `Recorder` (the registry every stock recorder builds on); `prometheus-exporter` is
//! `metrics-exporter-prometheus`' own recorder (`PrometheusBuilder::build_recorder`, no HTTP
//! listener), the one most users install. A fresh recorder per repetition.
//!
//! Verified after each repetition: the counter's total (for `prometheus-exporter`, as its own
//! `render()` reports it) equals the increments the workers counted, and a histogram's count
//! equals the records.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use fast_counter::ConcurrentCounter;
use metrics::{Counter, CounterFn, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusRecorder};
use metrics_util::registry::{AtomicStorage, Registry};
use oplog_metrics::PerCoreRecorder;

use super::impls::{Impl, ThreadSweep};
use crate::harness::{Run, Stop, Throughput};
use crate::output::verdict::{Against, Roles, Target};
use crate::pin;

/// The counter's name.
const COUNTER: &str = "bench_requests";

/// The histogram's name.
const HISTOGRAM: &str = "bench_latency_seconds";

/// Updates between two checks of the stop flag.
const BATCH: u64 = 64;

/// A recorder under test: how to build one, and how to read back what it recorded.
trait Subject: Sync + Sized {
    /// A fresh recorder.
    fn new() -> Self;

    /// The recorder the macros and handles go through.
    fn recorder(&self) -> &(dyn Recorder + Sync);

    /// The total of counter [`COUNTER`].
    fn counter_total(&self) -> u64;

    /// The records of histogram [`HISTOGRAM`].
    fn histogram_count(&self) -> u64;
}

impl Subject for PerCoreRecorder {
    fn new() -> Self {
        PerCoreRecorder::new()
    }

    fn recorder(&self) -> &(dyn Recorder + Sync) {
        self
    }

    fn counter_total(&self) -> u64 {
        self.counter(&Key::from_static_name(COUNTER)).unwrap_or(0)
    }

    fn histogram_count(&self) -> u64 {
        self.histogram(&Key::from_static_name(HISTOGRAM)).map_or(0, |h| h.count())
    }
}

/// `metrics-util`'s registry with atomic storage as a recorder: what its stock recorders
/// do on registration (find or insert the key, clone the `Arc` into a handle), nothing more.
struct AtomicRegistry(Registry<Key, AtomicStorage>);

impl Recorder for AtomicRegistry {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        self.0.get_or_create_counter(key, |c| Counter::from_arc(c.clone()))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.0.get_or_create_gauge(key, |g| Gauge::from_arc(g.clone()))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        self.0.get_or_create_histogram(key, |h| Histogram::from_arc(h.clone()))
    }
}

impl Subject for AtomicRegistry {
    fn new() -> Self {
        AtomicRegistry(Registry::atomic())
    }

    fn recorder(&self) -> &(dyn Recorder + Sync) {
        self
    }

    fn counter_total(&self) -> u64 {
        self.0.get_counter(&Key::from_static_name(COUNTER)).map_or(0, |c| c.load(std::sync::atomic::Ordering::SeqCst))
    }

    fn histogram_count(&self) -> u64 {
        let mut n = 0;
        if let Some(h) = self.0.get_histogram(&Key::from_static_name(HISTOGRAM)) {
            h.clear_with(|block| n += block.len() as u64);
        }
        n
    }
}

/// The value of the sample line `name value` in a Prometheus text rendering.
fn sample(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

impl Subject for PrometheusRecorder {
    fn new() -> Self {
        PrometheusBuilder::new().build_recorder()
    }

    fn recorder(&self) -> &(dyn Recorder + Sync) {
        self
    }

    fn counter_total(&self) -> u64 {
        sample(&self.handle().render(), COUNTER)
    }

    fn histogram_count(&self) -> u64 {
        sample(&self.handle().render(), &format!("{HISTOGRAM}_count"))
    }
}

/// The path a worker takes.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `counter!(COUNTER).increment(1)`.
    Macro,
    /// A handle registered once, then `increment(1)`.
    Handle,
    /// `histogram!(HISTOGRAM).record(v)`.
    Histogram,
}

/// Measures `S` on `path`, verifying the totals after each repetition.
fn measure<S: Subject>(run: &Run, path: Path) -> Throughput {
    run.throughput_checked(
        S::new,
        |subject: &S, _, stop: &Stop| {
            let _local = metrics::set_default_local_recorder(subject.recorder());
            match path {
                Path::Macro => stop.run_batched(BATCH, || metrics::counter!(COUNTER).increment(1)),
                Path::Handle => {
                    let counter = metrics::counter!(COUNTER);
                    stop.run_batched(BATCH, || counter.increment(1))
                }
                Path::Histogram => {
                    let mut i = 0u32;
                    stop.run_batched(BATCH, || {
                        i = i.wrapping_add(1);
                        // 1 µs to about 1 ms.
                        metrics::histogram!(HISTOGRAM).record(f64::from(1 + (i & 1023)) * 1e-6);
                    })
                }
            }
        },
        |subject, ops| {
            let (what, got) = match path {
                Path::Macro | Path::Handle => ("counter total", subject.counter_total()),
                Path::Histogram => ("histogram count", subject.histogram_count()),
            };
            assert_eq!(got, ops, "{path:?}: the recorder's {what} is {got}, but the workers made {ops} updates");
        },
    )
}

/// `fast-counter`'s `ConcurrentCounter` with one cell per CPU, as `percore-atomic` has.
fn measure_fast_counter(run: &Run) -> Throughput {
    run.throughput_checked(
        || ConcurrentCounter::new(pin::cpu_id_bound()),
        |counter: &ConcurrentCounter, _, stop: &Stop| stop.run_batched(BATCH, || counter.add(1)),
        |counter, ops| {
            let sum = counter.sum();
            assert_eq!(u64::try_from(sum).ok(), Some(ops), "fast-counter: sum {sum}, but the workers made {ops} adds");
        },
    )
}

/// `facade-floor`'s handle: a padded word of one worker's own, incremented with a plain
/// load and store. Correct only because each worker owns its handle; not a recorder.
#[derive(Default)]
struct PlainCell(CachePadded<AtomicU64>);

impl CounterFn for PlainCell {
    fn increment(&self, value: u64) {
        self.0.store(self.0.load(Ordering::Relaxed).wrapping_add(value), Ordering::Relaxed);
    }

    fn absolute(&self, value: u64) {
        self.0.fetch_max(value, Ordering::Relaxed);
    }
}

/// `facade-floor`: each worker increments a handle of its own whose `increment` is a plain
/// load and store ([`PlainCell`]), through the facade's `dyn CounterFn` call as every held
/// handle is: the floor of a held handle's increment, so every run shows how far from it
/// the recorders' handles are.
fn measure_facade_floor(run: &Run) -> Throughput {
    run.throughput_checked(
        || (0..run.threads.max(1)).map(|_| Arc::new(PlainCell::default())).collect::<Vec<_>>(),
        |cells: &Vec<Arc<PlainCell>>, thread, stop: &Stop| {
            let counter = Counter::from_arc(cells[thread].clone());
            stop.run_batched(BATCH, || counter.increment(1))
        },
        |cells, ops| {
            let sum: u64 = cells.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
            assert_eq!(sum, ops, "facade-floor: sum {sum}, but the workers made {ops} increments");
        },
    )
}

/// The implementations, in table order.
pub const IMPLS: &[Impl] = &[
    Impl::new("oplog-metrics", |run, ()| measure::<PerCoreRecorder>(run, Path::Macro)),
    Impl::new("metrics-util", |run, ()| measure::<AtomicRegistry>(run, Path::Macro)),
    Impl::new("prometheus-exporter", |run, ()| measure::<PrometheusRecorder>(run, Path::Macro)),
    Impl::new("oplog-metrics-handle", |run, ()| measure::<PerCoreRecorder>(run, Path::Handle)),
    Impl::new("metrics-util-handle", |run, ()| measure::<AtomicRegistry>(run, Path::Handle)),
    Impl::new("prometheus-exporter-handle", |run, ()| measure::<PrometheusRecorder>(run, Path::Handle)),
    Impl::new("fast-counter", |run, ()| measure_fast_counter(run)),
    Impl::new("facade-floor", |run, ()| measure_facade_floor(run)),
    Impl::new("oplog-metrics-histogram", |run, ()| measure::<PerCoreRecorder>(run, Path::Histogram)),
    Impl::new("metrics-util-histogram", |run, ()| measure::<AtomicRegistry>(run, Path::Histogram)),
    Impl::new("prometheus-exporter-histogram", |run, ()| measure::<PrometheusRecorder>(run, Path::Histogram)),
];

/// The `metrics` experiment.
pub static METRICS: ThreadSweep = ThreadSweep {
    name: "metrics",
    description: "updates per second through the `metrics` facade: counter! macro, held handle, histogram! \
                  (oplog-metrics against metrics-util and metrics-exporter-prometheus; 000 Figure 8)",
    versus: "metrics-util",
    impls: IMPLS,
    param: (),
    extra: &[],
    per_thread: None,
    annexes: None,
    roles: Roles {
        default: Some("oplog-metrics"),
        baselines: &["metrics-util", "prometheus-exporter"],
        floor: Some("facade-floor"),
        // Issue 11.
        targets: &[
            Target { id: "oplog-metrics", threads: 2, x: None, against: Against::Id("metrics-util"), min: 5.0 },
            Target { id: "oplog-metrics", threads: 2, x: None, against: Against::Id("prometheus-exporter"), min: 5.0 },
            Target { id: "oplog-metrics", threads: 2, x: None, against: Against::OneThread, min: 1.8 },
            Target { id: "oplog-metrics-handle", threads: 2, x: None, against: Against::Id("fast-counter"), min: 1.0 },
            Target { id: "oplog-metrics-histogram", threads: 2, x: None, against: Against::OneThread, min: 1.8 },
        ],
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::impls::smoke_test;

    #[test]
    fn every_impl_runs_and_verifies() {
        smoke_test(IMPLS, ());
    }

    #[test]
    fn samples_are_read_from_a_rendering() {
        let text = "# TYPE x counter\nx 12\nx_count 3\n";
        assert_eq!((sample(text, "x"), sample(text, "x_count")), (12, 3));
        assert_eq!(sample(text, "y"), 0);
    }

    #[test]
    #[should_panic(expected = "the recorder's counter total is 0, but the workers made")]
    fn a_recorder_that_loses_updates_fails_the_run() {
        /// Counts nothing.
        struct Lossy(AtomicRegistry);
        impl Subject for Lossy {
            fn new() -> Self {
                Lossy(AtomicRegistry::new())
            }
            fn recorder(&self) -> &(dyn Recorder + Sync) {
                &metrics::NoopRecorder
            }
            fn counter_total(&self) -> u64 {
                self.0.counter_total()
            }
            fn histogram_count(&self) -> u64 {
                self.0.histogram_count()
            }
        }
        let placement = crate::pin::Placement::from_process();
        let run = Run { threads: 1, duration: std::time::Duration::from_millis(1), reps: 1, placement: &placement };
        measure::<Lossy>(&run, Path::Macro);
    }
}
