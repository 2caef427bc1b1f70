//! The linearizability suite: random concurrent histories of every OpLog structure, each
//! checked against the structure's sequential model (see the `oplog-lincheck` crate docs).
//!
//! One test per structure and configuration; each runs `OPLOG_LINCHECK_HISTORIES`
//! histories (default 10,000) of 2 to 4 threads with 3 operations each. The operation lists
//! come from `OPLOG_LINCHECK_SEED` (default: random; every report and failure prints it). To add a
//! structure, write its adapter in `common/mod.rs` and add a line here.

mod common;

use common::{CollidingSets, CounterAdapter, SetAdapter, check};
use oplog::Config;
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
