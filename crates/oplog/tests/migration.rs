//! A thread that logs an update on one CPU, migrates, and logs the inverse on another:
//! the read must see them in program order although they sit in different per-CPU logs.

mod common;

use common::{SetOp, with_watchdog};
use oplog::{Config, Domain, OpLog, Ordered};
use ordo::cpu;
use std::collections::BTreeSet;
use std::time::Duration;

/// Round trips between the two CPUs (a few under Miri).
const ROUNDS: u64 = if cfg!(miri) { 10 } else { 2000 };

fn migrate_and_invert(config: Config) {
    let cpus = cpu::allowed();
    if cpus.len() < 2 {
        eprintln!("skipped: needs two CPUs");
        return;
    }
    let (a, b) = (cpus[0], cpus[1]);
    let domain = Domain::<Ordered<SetOp>>::new(config).unwrap();
    let set = OpLog::<Ordered<SetOp>>::with_domain(&domain, BTreeSet::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            for k in 0..ROUNDS {
                // add on one CPU, remove on the other: absent afterwards.
                cpu::pin_current_thread(a).unwrap();
                set.update(SetOp::Add(k));
                cpu::pin_current_thread(b).unwrap();
                set.update(SetOp::Remove(k));
                // remove then add, the other way round: present afterwards.
                cpu::pin_current_thread(b).unwrap();
                set.update(SetOp::Remove(k + 1_000_000));
                cpu::pin_current_thread(a).unwrap();
                set.update(SetOp::Add(k + 1_000_000));
                if k % 97 == 0 {
                    set.read(|s| {
                        assert!(!s.contains(&k), "key {k}: the remove logged on CPU {b} ran before the add on CPU {a}");
                        assert!(s.contains(&(k + 1_000_000)), "key {k}: add on CPU {a} ran before the earlier remove");
                    });
                }
            }
        });
    });
    let s = set.into_inner();
    assert_eq!(s, (0..ROUNDS).map(|k| k + 1_000_000).collect::<BTreeSet<_>>());
}

#[test]
fn migration_keeps_program_order_per_cpu() {
    with_watchdog("migration", Duration::from_secs(120), || migrate_and_invert(Config::per_cpu()));
}

#[test]
fn migration_keeps_program_order_with_a_tiny_cache_and_short_logs() {
    with_watchdog("migration small", Duration::from_secs(120), || {
        migrate_and_invert(Config::per_cpu().cache_slots(1).max_log_len(2))
    });
}

#[test]
fn migration_keeps_program_order_per_thread() {
    with_watchdog("migration per-thread", Duration::from_secs(120), || migrate_and_invert(Config::per_thread()));
}
