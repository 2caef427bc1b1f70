//! The linearizability suite: random concurrent histories of every OpLog structure, each
//! checked against the structure's sequential model (see the `oplog-lincheck` crate docs).
//!
//! One test per structure and configuration; each runs `OPLOG_LINCHECK_HISTORIES`
//! histories (default 10,000) of 2 to 4 threads with 3 operations each. The operation lists
//! come from `OPLOG_LINCHECK_SEED` (default: random; every report and failure prints it). To add a
//! structure, write its adapter (or its plan) in `common/` and add a line here.
//!
//! First the OpLog core's own objects (the counter, sets over `OpLog`, objects evicting each
//! other, eviction storms of counters, ordered sets and grow-only unordered sets in which
//! other objects are created and dropped under every representation; the storms share the
//! histories among their six configurations; and the
//! counter and both sets under every representation with more unpinned threads than CPUs,
//! which migrate), then
//! every OpLog structure of `oplog-structures`, half of its histories in a
//! per-CPU domain and half in a per-thread one. The absorbing ones (both rmaps, two of the lists, the open-file list)
//! get plans that keep their identity rule: each thread adds and removes only items of its
//! own, alternately, while reads see every thread's (`common/structures.rs`).

mod common;

use common::structures::{
    Structure, any_set_plans, entry_plans, identity_set_plans, lru_plans, open_files_plans, queue_plans, rmap_plans,
};
use common::{
    CollidingSets, CounterAdapter, SetAdapter, SwitchingAdapter, check, check_both_slot_kinds, check_with,
    counter_storm, grow_only_set_storm, set_storm,
};
use oplog::{Config, Domain, LogKind, Representation};
use oplog_model::lru::LruModel;
use oplog_model::namecache::EntryModel;
use oplog_model::open_files::OpenFilesModel;
use oplog_model::queue::QueueModel;
use oplog_model::rmap::RmapModel;
use oplog_model::set::SetModel;
use oplog_structures::list::{BasicList, GlobalAbsorbList, LocalAbsorbList, SeqList};
use oplog_structures::lru::OpLogLru;
use oplog_structures::namecache::OpLogEntry;
use oplog_structures::notify::OpLogQueue;
use oplog_structures::open_files::OpLogOpenFiles;
use oplog_structures::rmap::OpLogRmap;
use ordo::{Clock, LogicalClock, Ordo};
use std::sync::Arc;

#[test]
fn counter_per_cpu() {
    check(CounterAdapter::new(Config::per_cpu(), "per-CPU"));
}

#[test]
fn counter_per_thread() {
    check(CounterAdapter::new(Config::per_thread(), "per-thread"));
}

#[test]
fn ordered_set_per_cpu() {
    check(SetAdapter::<true>::new(Config::per_cpu(), "per-CPU", true));
}

#[test]
fn ordered_set_per_thread() {
    check(SetAdapter::<true>::new(Config::per_thread(), "per-thread", true));
}

#[test]
fn ordered_set_with_logs_that_flush_on_update() {
    check(SetAdapter::<true>::new(Config::per_cpu().max_log_len(2), "per-CPU, logs of 2", true));
}

#[test]
fn ordered_set_with_the_logical_clock() {
    let clock: Arc<dyn Clock> = Arc::new(LogicalClock::new());
    check(SetAdapter::<true>::new(Config::per_thread().clock(clock), "per-thread, logical clock", true));
}

#[test]
fn ordered_set_with_commit_wait() {
    // The OS clock's raw order is not causal, so every update waits out the window.
    let clock: Arc<dyn Clock> = Arc::new(Ordo::monotonic());
    check(SetAdapter::<true>::new(Config::per_cpu().clock(clock), "per-CPU, monotonic clock with commit wait", true));
}

#[test]
fn ordered_set_direct() {
    let config = Config::per_cpu().representation(Representation::Direct);
    check(SetAdapter::<true>::new(config, "per-CPU, direct representation", true));
}

#[test]
fn ordered_set_logged() {
    let config = Config::per_thread().representation(Representation::Logged);
    check(SetAdapter::<true>::new(config, "per-thread, logged representation", true));
}

#[test]
fn ordered_set_switching_representation_mid_history() {
    check(SwitchingAdapter(SetAdapter::<true>::new(Config::per_cpu(), "per-CPU", true)));
}

#[test]
fn counter_direct() {
    check(CounterAdapter::new(Config::per_thread().representation(Representation::Direct), "per-thread, direct"));
}

#[test]
fn counter_direct_per_cpu() {
    check(CounterAdapter::new(Config::per_cpu().representation(Representation::Direct), "per-CPU, direct"));
}

/// Direct updates add to the counter's value while others log in their slots: a read
/// loads the value at the instant it holds the slots.
#[test]
fn counter_switching_representation_mid_history() {
    check(SwitchingAdapter(CounterAdapter::new(Config::per_cpu(), "per-CPU")));
}

#[test]
fn unordered_grow_only_set_per_cpu() {
    check(SetAdapter::<false>::new(Config::per_cpu(), "per-CPU", false));
}

#[test]
fn unordered_grow_only_set_per_thread() {
    check(SetAdapter::<false>::new(Config::per_thread(), "per-thread", false));
}

#[test]
fn ordered_sets_evicting_each_other_per_cpu() {
    check(CollidingSets::new(Config::per_cpu(), "per-CPU"));
}

#[test]
fn ordered_sets_evicting_each_other_per_thread() {
    check(CollidingSets::new(Config::per_thread().max_log_len(3), "per-thread, logs of 3"));
}

/// Eviction storms under every representation and both slot kinds, histories split evenly
/// among the six (each run checks a pair of objects in a one-slot domain while churns
/// create, update and drop other objects of it).
fn storms<A: oplog_lincheck::Adapter>(storm: impl Fn(Config, String) -> A)
where
    <A::Model as oplog_model::Model>::Op: Send + Sync,
    <A::Model as oplog_model::Model>::Ret: Send,
{
    let env = oplog_lincheck::Config::from_env().unwrap_or_else(|e| panic!("{e}"));
    let share = oplog_lincheck::Config::new(env.histories().div_ceil(6)).seed(env.get_seed());
    for (slots, config) in [("per-CPU", Config::per_cpu()), ("per-thread", Config::per_thread())] {
        for representation in [Representation::Adaptive, Representation::Logged, Representation::Direct] {
            let label = format!("{slots}, {representation:?}");
            check_with(storm(config.clone().representation(representation), label), &share);
        }
    }
}

#[test]
fn counters_in_an_eviction_storm() {
    storms(counter_storm);
}

#[test]
fn ordered_sets_in_an_eviction_storm() {
    storms(set_storm);
}

#[test]
fn grow_only_sets_in_an_eviction_storm() {
    storms(grow_only_set_storm);
}

/// Counters and ordered and unordered sets under every representation and both slot
/// kinds, with 3 to 6 unpinned threads (more than this machine's CPUs: the scheduler moves
/// them between CPUs, in the middle of an update too), histories split evenly among the
/// eighteen.
#[test]
fn unpinned_threads_that_migrate_under_every_representation() {
    let env = oplog_lincheck::Config::from_env().unwrap_or_else(|e| panic!("{e}"));
    let share =
        oplog_lincheck::Config::new(env.histories().div_ceil(18)).seed(env.get_seed()).threads(3, 6).pinned(false);
    let runs = [
        (Config::per_cpu(), Representation::Adaptive, "per-CPU, adaptive, unpinned"),
        (Config::per_cpu(), Representation::Logged, "per-CPU, logged, unpinned"),
        (Config::per_cpu(), Representation::Direct, "per-CPU, direct, unpinned"),
        (Config::per_thread(), Representation::Adaptive, "per-thread, adaptive, unpinned"),
        (Config::per_thread(), Representation::Logged, "per-thread, logged, unpinned"),
        (Config::per_thread(), Representation::Direct, "per-thread, direct, unpinned"),
    ];
    for (config, representation, label) in runs {
        let config = config.representation(representation);
        check_with(CounterAdapter::new(config.clone(), label), &share);
        check_with(SetAdapter::<true>::new(config.clone(), label, true), &share);
        check_with(SetAdapter::<false>::new(config, label, false), &share);
    }
}

/// A fresh domain for `config`.
fn domain<L: LogKind>(config: Config) -> Arc<Domain<L>> {
    Domain::new(config).unwrap()
}

#[test]
fn rmap_unordered() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("rmap (unordered log), {slots}"),
            RmapModel,
            move || OpLogRmap::<false>::new(&d),
            rmap_plans,
        )
    });
}

#[test]
fn rmap_ordered() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("rmap (ordered log), {slots}"),
            RmapModel,
            move || OpLogRmap::<true>::new(&d),
            rmap_plans,
        )
    });
}

#[test]
fn notification_queue() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("notification queue, {slots}"),
            QueueModel,
            move || OpLogQueue::<u64>::new(&d),
            queue_plans,
        )
    });
}

#[test]
fn lru_list() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(format!("LRU list, {slots}"), LruModel, move || OpLogLru::<u64>::new(&d), lru_plans)
    });
}

#[test]
fn list_basic() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("list, basic, {slots}"),
            SetModel,
            move || BasicList::with_domain(&d, SeqList::new()),
            any_set_plans,
        )
    });
}

#[test]
fn list_global_absorption() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("list, global absorption, {slots}"),
            SetModel,
            move || GlobalAbsorbList::with_domain(&d, SeqList::new()),
            identity_set_plans,
        )
    });
}

#[test]
fn list_local_absorption() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("list, local absorption, {slots}"),
            SetModel,
            move || LocalAbsorbList::with_domain(&d, SeqList::new()),
            identity_set_plans,
        )
    });
}

#[test]
fn open_files() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("open files, {slots}"),
            OpenFilesModel,
            move || OpLogOpenFiles::new(&d),
            open_files_plans,
        )
    });
}

#[test]
fn name_cache_entry() {
    check_both_slot_kinds(|slots, config| {
        let d = domain(config);
        Structure::new(
            format!("name-cache entry (OpLog counter), {slots}"),
            EntryModel::default(),
            move || OpLogEntry::new(&d, 0),
            entry_plans,
        )
    });
}
