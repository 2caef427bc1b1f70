//! `memory`: bytes per object for 1,000,000 counters (000 §7.3), each updated once by every
//! thread.
//!
//! 000 §7.3: a distributed counter with "an 8-byte integer per core" costs 384 bytes per
//! object on 48 cores, 5 GB for 15 million dentries; OpLog keeps per-core state only in a
//! fixed-size per-core log cache, so an object costs its own instance plus a constant.
//! Three layouts of one counter per object are measured:
//!
//! - `oplog`: [`oplog::Counter`] (000 Figure 8) in one per-CPU domain made for the run: an
//!   8-byte handle in the `Vec` plus an 8-byte entry in the domain's object slab (the
//!   object's word) and the entry's 8-byte companion (the value, which direct updates add
//!   to);
//! - `percore`: a heap array of one `AtomicU64` per possible CPU, *unpadded* (8 bytes per
//!   core, the text's accounting; padding each to a cache line, as a contention-free
//!   per-core counter would, costs 64 bytes per core: the `at-scale` annex shows both);
//! - `plain`: one `AtomicU64`.
//!
//! **How bytes are measured.** The experiment counts real heap bytes through the binary's
//! counting allocator ([`crate::alloc_count`]): the main thread and every worker join one
//! [`Tally`] while they build, update and read the objects (not while threads are spawned
//! and joined). For each repetition:
//!
//! 1. build the implementation's context (the OpLog domain) and note the live bytes;
//! 2. allocate the objects in one `Vec` (its buffer is `size_of` × count: the inline part);
//! 3. T pinned threads each increment every object once (timed: `ops_per_sec` is these
//!    increments per second);
//! 4. note the live bytes and the domain's [`cache_footprint`](oplog::Domain::cache_footprint):
//!    `bytes_per_object` = (growth since step 1 − growth of the log caches) / count. The
//!    log caches are the domain's fixed cost, which does not grow with the number of
//!    objects: it is reported separately (the `fixed-cost` annex). The objects' slab
//!    entries, and any log evicted from the caches and waiting for its object (OpLog
//!    applies evicted logs at once; one waits only while its object is locked), *are*
//!    counted per object;
//! 5. read every counter (which must equal T), note the live bytes again:
//!    `bytes_per_object_after_read`, the steady state of objects nobody updates any more.
//!
//! Bytes are requested sizes; the allocator's per-block headers come on top (they only
//! matter for `percore`, one heap block per object). The `at-scale` annex computes, from
//! these measured parts, what each layout costs at this machine's core count, at 48 and
//! at 256 cores: `percore` grows by 8 bytes (64 padded) per core per object; `oplog` after
//! reads has no per-core part per object, plus a fixed `cache_slots` × slot size per core
//! for all objects together. If evicted logs were waiting for their objects, an OpLog object
//! would also hold one log per core that updated it; `bytes_per_object` (measured before
//! the reads) would show it, and it is not extrapolated.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use oplog::{Config, Counter, CounterLog, Domain};
use serde_json::json;

use crate::alloc_count::Tally;
use crate::experiments::impls::Impl;
use crate::experiments::{Experiment, Metric};
use crate::harness::{Run, Settings, Stop, Throughput, median};
use crate::output::verdict::Roles;
use crate::output::{Annex, Record, Sink, round};
use crate::pin;

/// Objects per repetition (000 §7.3 is about millions of dentries).
pub const OBJECTS: usize = 1_000_000;
/// Objects per repetition with `--quick`.
pub const QUICK_OBJECTS: usize = 200_000;

/// Core counts the `at-scale` annex extrapolates to, besides this machine's.
pub const SCALE_CORES: [usize; 2] = [48, 256];

/// A layout of one counter per object.
pub trait CounterLayout: Sync + Sized {
    /// Stable id: the `impl` field of records.
    const ID: &'static str;
    /// One object.
    type Object: Sync;

    /// The shared context objects are made in (the OpLog domain); called with counting on.
    fn new() -> Self;
    /// A new object at zero.
    fn make(&self) -> Self::Object;
    /// Adds one.
    fn inc(object: &Self::Object);
    /// The value, after all incrementing threads have been joined.
    fn read(object: &Self::Object) -> u64;
    /// Bytes of per-core state that is allocated once for all objects (the log caches).
    fn fixed_bytes(&self) -> usize {
        0
    }
    /// The number of cores whose state the object or the context holds (0: none).
    fn cores(&self) -> usize;
}

/// `oplog`: the OpLog distributed counter in a per-CPU domain of its own.
pub struct OplogLayout {
    domain: Arc<Domain<CounterLog>>,
}

impl CounterLayout for OplogLayout {
    const ID: &'static str = "oplog";
    type Object = Counter;

    fn new() -> Self {
        Self { domain: Domain::new(Config::per_cpu()).expect("the default per-CPU configuration is valid") }
    }

    fn make(&self) -> Counter {
        Counter::with_domain(&self.domain, 0)
    }

    #[inline]
    fn inc(object: &Counter) {
        object.inc();
    }

    fn read(object: &Counter) -> u64 {
        u64::try_from(object.read()).expect("an increment-only counter is never negative")
    }

    fn fixed_bytes(&self) -> usize {
        self.domain.cache_footprint()
    }

    fn cores(&self) -> usize {
        self.domain.cores()
    }
}

/// `percore`: one unpadded `AtomicU64` per possible CPU, indexed by the current CPU.
pub struct PerCoreLayout {
    cores: usize,
}

impl CounterLayout for PerCoreLayout {
    const ID: &'static str = "percore";
    type Object = Box<[AtomicU64]>;

    fn new() -> Self {
        Self { cores: pin::cpu_id_bound() }
    }

    fn make(&self) -> Box<[AtomicU64]> {
        (0..self.cores).map(|_| AtomicU64::new(0)).collect()
    }

    #[inline]
    fn inc(object: &Box<[AtomicU64]>) {
        // An atomic add: the thread may migrate between reading its CPU and adding.
        object[ordo::cpu::current() % object.len()].fetch_add(1, Ordering::Relaxed);
    }

    fn read(object: &Box<[AtomicU64]>) -> u64 {
        object.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    fn cores(&self) -> usize {
        self.cores
    }
}

/// `plain`: one shared `AtomicU64` per object.
pub struct PlainLayout;

impl CounterLayout for PlainLayout {
    const ID: &'static str = "plain";
    type Object = AtomicU64;

    fn new() -> Self {
        PlainLayout
    }

    fn make(&self) -> AtomicU64 {
        AtomicU64::new(0)
    }

    #[inline]
    fn inc(object: &AtomicU64) {
        object.fetch_add(1, Ordering::Relaxed);
    }

    fn read(object: &AtomicU64) -> u64 {
        object.load(Ordering::Relaxed)
    }

    fn cores(&self) -> usize {
        0
    }
}

/// What one layout cost at one point (medians over repetitions where they vary).
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    /// Increments per second while every thread updated every object once.
    pub throughput: Throughput,
    /// `size_of` one object.
    pub inline_bytes: usize,
    /// Bytes per object after the updates, the fixed cost excluded.
    pub bytes_per_object: f64,
    /// Bytes per object after every object was read once, the fixed cost excluded.
    pub bytes_per_object_after_read: f64,
    /// The context's fixed per-core state after the updates (log caches), in bytes.
    pub fixed_bytes: usize,
    /// Cores whose state the layout holds.
    pub cores: usize,
}

/// The state of one repetition: the layout's context, its objects, and the tally every
/// thread counts into.
struct Objects<'t, L: CounterLayout> {
    layout: L,
    objects: Vec<L::Object>,
    tally: &'t Tally,
}

/// Measures layout `L` with `count` objects at one point.
pub fn measure<L: CounterLayout>(run: &Run, count: usize) -> Footprint {
    let (mut samples, mut after_update, mut after_read) = (Vec::new(), Vec::new(), Vec::new());
    let (mut fixed, mut cores) = (0, 0);
    for _ in 0..run.reps.max(1) {
        let tally = Tally::new();
        // The main thread counts while it builds and reads the objects, not while it spawns
        // and joins the workers (thread bookkeeping it allocates there may be freed by a
        // worker after the worker's count ended).
        let (layout, objects, base, fixed_base) = {
            let _counting = tally.count_this_thread();
            let layout = L::new();
            let (base, fixed_base) = (tally.live_bytes(), layout.fixed_bytes());
            let mut objects = Vec::with_capacity(count);
            objects.extend((0..count).map(|_| layout.make()));
            (layout, objects, base, fixed_base)
        };
        let state = Objects { layout, objects, tally: &tally };

        let rep = run.run_to_completion(&state, &|s: &Objects<L>, _thread, _stop: &Stop| {
            let _counting = s.tally.count_this_thread();
            s.objects.iter().for_each(L::inc);
            s.objects.len() as u64
        });
        samples.push(rep.ops_per_sec());
        let per_object = |fixed_now: usize| {
            let growth = tally.live_bytes() - base - (fixed_now as i64 - fixed_base as i64);
            growth as f64 / count as f64
        };
        fixed = state.layout.fixed_bytes();
        cores = state.layout.cores();
        after_update.push(per_object(fixed));

        {
            let _counting = tally.count_this_thread();
            for (i, object) in state.objects.iter().enumerate() {
                let value = L::read(object);
                assert_eq!(
                    value,
                    run.threads as u64,
                    "`{}` object {i} reads {value} after {} increments",
                    L::ID,
                    run.threads
                );
            }
        }
        after_read.push(per_object(state.layout.fixed_bytes()));
    }
    Footprint {
        throughput: Throughput::from_samples(samples),
        inline_bytes: size_of::<L::Object>(),
        bytes_per_object: median(&after_update),
        bytes_per_object_after_read: median(&after_read),
        fixed_bytes: fixed,
        cores,
    }
}

/// The layouts measured, in table order: each one's id and monomorphised measurement.
const IMPLS: [Impl<usize, (), Footprint>; 3] = [
    Impl::new(OplogLayout::ID, measure::<OplogLayout>),
    Impl::new(PerCoreLayout::ID, measure::<PerCoreLayout>),
    Impl::new(PlainLayout::ID, measure::<PlainLayout>),
];

/// The `memory` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Memory;

impl Memory {
    /// The `at-scale` annex: bytes per object of each layout at `here` cores (measured) and
    /// at [`SCALE_CORES`] (computed from the measured parts), plus OpLog's fixed cost.
    fn at_scale(oplog: &Footprint, percore: &Footprint, plain: &Footprint) -> Annex {
        let mut annex = Annex::new(
            "at-scale",
            &format!(
                "bytes per object at {} cores (measured) and more (computed): percore + 8 B per core (64 B padded); \
                 oplog after every object was read (logs applied: no per-core part) + fixed log caches of {} B per \
                 core. oplog with logs still pending (bytes_per_object) keeps one evicted log per core that updated \
                 the object, so it grows with that count and is not extrapolated",
                percore.cores,
                oplog.fixed_bytes / oplog.cores.max(1)
            ),
            &[
                "cores",
                "plain",
                "oplog_after_read",
                "percore",
                "percore_padded",
                "oplog_fixed_bytes",
                "percore_total_1m_objects_bytes",
                "oplog_after_read_total_1m_objects_bytes",
            ],
        );
        let percore_rest = percore.bytes_per_object - 8.0 * percore.cores as f64;
        let oplog_per_core_fixed = oplog.fixed_bytes as f64 / oplog.cores.max(1) as f64;
        let oplog_steady = oplog.bytes_per_object_after_read;
        for cores in std::iter::once(percore.cores).chain(SCALE_CORES) {
            let percore_bytes = percore_rest + 8.0 * cores as f64;
            let oplog_fixed = oplog_per_core_fixed * cores as f64;
            annex.row(vec![
                json!(cores),
                json!(round(2, plain.bytes_per_object)),
                json!(round(2, oplog_steady)),
                json!(round(2, percore_bytes)),
                json!(round(2, percore_rest + 64.0 * cores as f64)),
                json!(oplog_fixed.round()),
                json!((percore_bytes * 1e6).round()),
                json!((oplog_steady * 1e6 + oplog_fixed).round()),
            ]);
        }
        annex
    }
}

impl Experiment for Memory {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn description(&self) -> &'static str {
        "inline + heap bytes per counter object, 1,000,000 objects (200,000 with --quick) each updated once per thread (000 §7.3)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IMPLS.iter().map(|e| e.id).collect()
    }

    fn metric(&self) -> Metric {
        Metric { key: "bytes_per_object", label: "bytes per object", higher_is_better: false, timed: false }
    }

    fn roles(&self) -> Roles {
        Roles {
            default: Some(OplogLayout::ID),
            baselines: &[PerCoreLayout::ID],
            floor: Some(PlainLayout::ID),
            targets: &[],
        }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * IMPLS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let count = settings.size(OBJECTS, QUICK_OBJECTS);
        let mut last = Vec::new();
        for &threads in &settings.threads {
            last.clear();
            for entry in IMPLS {
                sink.point(entry.id, threads);
                let run = settings.at(threads);
                let f = entry.measure(&run, count);
                sink.push(
                    Record::new(self.name(), entry.id, &run, &f.throughput)
                        .with("objects", count)
                        .with("bytes_per_object", round(2, f.bytes_per_object))
                        .with("inline_bytes", f.inline_bytes)
                        .with("heap_bytes_per_object", round(2, f.bytes_per_object - f.inline_bytes as f64))
                        .with("bytes_per_object_after_read", round(2, f.bytes_per_object_after_read))
                        .with("fixed_bytes", f.fixed_bytes)
                        .with("cores", f.cores),
                )?;
                last.push(f);
            }
        }
        if let [oplog, percore, plain] = &last[..] {
            let mut fixed = Annex::new(
                "fixed-cost",
                "oplog's fixed cost: the domain's log caches (Domain::cache_footprint), shared by all objects",
                &["cores", "cache_footprint_bytes", "bytes_per_core"],
            );
            fixed.row(vec![
                json!(oplog.cores),
                json!(oplog.fixed_bytes),
                json!(oplog.fixed_bytes / oplog.cores.max(1)),
            ]);
            sink.annex(fixed)?;
            sink.annex(Self::at_scale(oplog, percore, plain))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    fn run(placement: &Placement) -> Run<'_> {
        Run { threads: 2, duration: Duration::from_millis(1), reps: 1, placement }
    }

    #[test]
    fn plain_costs_exactly_its_inline_size() {
        let placement = Placement::from_process();
        let f = measure::<PlainLayout>(&run(&placement), 10_000);
        assert_eq!((f.bytes_per_object, f.bytes_per_object_after_read, f.inline_bytes), (8.0, 8.0, 8));
        assert!(f.throughput.median > 0.0);
    }

    #[test]
    fn percore_costs_a_word_per_core_plus_its_pointer() {
        let placement = Placement::from_process();
        let f = measure::<PerCoreLayout>(&run(&placement), 10_000);
        let expected = 16.0 + 8.0 * pin::cpu_id_bound() as f64;
        assert_eq!((f.bytes_per_object, f.bytes_per_object_after_read), (expected, expected));
    }

    #[test]
    fn oplog_reports_its_caches_apart_and_counts_exactly() {
        let placement = Placement::from_process();
        let f = measure::<OplogLayout>(&run(&placement), 10_000);
        assert_eq!(f.inline_bytes, 8, "a handle");
        assert!(f.bytes_per_object >= 24.0, "the slab entry is counted: {f:?}");
        assert!(f.fixed_bytes > 0 && f.cores >= 1, "{f:?}");
    }

    #[test]
    fn at_scale_extrapolates_percore_and_oplog_fixed_cost() {
        let f = |peak: f64, after_read: f64, fixed: usize, cores: usize| Footprint {
            throughput: Throughput::from_samples(vec![1.0]),
            inline_bytes: 8,
            bytes_per_object: peak,
            bytes_per_object_after_read: after_read,
            fixed_bytes: fixed,
            cores,
        };
        let (oplog, percore, plain) = (f(150.0, 40.0, 2 * 32768, 2), f(32.0, 32.0, 0, 2), f(8.0, 8.0, 0, 0));
        let annex = Memory::at_scale(&oplog, &percore, &plain);
        let cores: Vec<_> = annex.rows.iter().map(|r| r[0].clone()).collect();
        assert_eq!(cores, [json!(2), json!(48), json!(256)]);
        // percore: 16 B of pointer + 8 B per core; 64 B per core padded.
        assert_eq!(annex.rows[0][3], json!(32.0));
        assert_eq!(annex.rows[1][3], json!(16.0 + 8.0 * 48.0));
        assert_eq!(annex.rows[2][4], json!(16.0 + 64.0 * 256.0));
        // oplog: the steady state (after reads) per object, fixed cost per core times cores.
        assert!(annex.rows.iter().all(|r| r[2] == json!(40.0)));
        assert_eq!(annex.rows[1][5], json!(32768.0 * 48.0));
        assert_eq!(annex.rows[1][7], json!(40.0 * 1e6 + 32768.0 * 48.0));
    }
}
