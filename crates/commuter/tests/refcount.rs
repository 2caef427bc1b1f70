//! The reference counts of `oplog-refcount` under the checker: 002 §8.1's claim that
//! Refcache's `inc` and `dec` are conflict-free, measured in every state the tracer builds;
//! what a review and a revival cost; a delta-cache collision (which the report's runs never
//! have: each object has its own domain); and the sloppy counter's central count.

use std::sync::Arc;

use commuter::report::{Conflicted, Design, StructureReport, exceptions};
use commuter::structures::{self, Options};
use commuter::tracer::{CPU_A, CPU_B, CPUS, Cores, conflicts};
use oplog_refcount::{Config, CoreMode, Domain, Rc, SloppyConfig, SloppyCounter, SloppyDomain, testing};

/// Whole cache lines per allocation, as the checker runs (`commuter::lines`).
#[global_allocator]
static ALLOCATOR: commuter::lines::Lines = commuter::lines::Lines;

fn report(name: &str) -> StructureReport {
    let structure = structures::all().into_iter().find(|s| s.name() == name).expect("a covered structure");
    // A response the model does not give would be an error here.
    structure.check(&Cores::new(CPUS), &Options::default()).unwrap()
}

/// 002 §8.1: "inc and dec are conflict-free with high probability" (the exception being
/// delta-cache collisions, absent here), and a review conflicts. Measured: every
/// commutative `inc`/`dec` case is conflict-free on both Refcache versions with the object
/// in the cores' caches (steady) and after a review flushed them (quiescent), and on the
/// per-CPU version also at each core's first touch (cold: an empty cache entry is taken
/// without writing anything shared); every case with a `collect` conflicts, and a
/// `tryget` conflicts with another only when it revives a dying object.
#[test]
fn refcache_inc_and_dec_are_conflict_free_in_every_state_and_reviews_are_not() {
    let report = report("refcache");
    let ids: Vec<&str> = report.impls.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["refcache", "refcache-perthread", "mutex"]);
    for imp in &report.impls {
        for (pair, ip) in report.pairs.iter().zip(&imp.pairs) {
            let what = format!("{} {}", imp.id, pair.title);
            assert!(ip.traced > 0 || pair.commutative == ip.outside_contract(), "{what}");
            if imp.id == "mutex" {
                assert_eq!(ip.conflict_free, 0, "{what}");
                continue;
            }
            if pair.op_a == "collect" || pair.op_b == "collect" {
                assert_eq!(ip.conflict_free, 0, "{what}");
                assert!(ip.exceptions.iter().all(|e| e.reason.starts_with("a review (collect) reconciles")), "{what}");
            } else {
                assert_eq!(ip.conflict_free, ip.traced, "{what}: {:?}", ip.exceptions);
            }
            if pair.update_pair {
                assert_eq!(ip.quiescent_conflict_free, ip.traced, "{what}: {:?}", ip.quiescent_exceptions);
                let cold = if imp.id == "refcache" { ip.traced } else { 0 };
                assert_eq!(ip.cold_conflict_free, cold, "{what}: per-thread cores are claimed at first use");
            }
            if pair.title == "tryget() / tryget()" {
                let revivals = &ip.quiescent_exceptions;
                assert_eq!(revivals.len(), 1, "{what}: {revivals:?}");
                assert!(revivals[0].reason.starts_with("tryget revived a dying object"), "{what}");
                assert_eq!(revivals[0].example, "setup: dec() | A: tryget() | B: tryget()");
            }
        }
    }
}

/// Two objects in a per-CPU domain whose delta caches have one entry: each test core holds
/// a delta for the victim, so an increment of the other object evicts it, writing the
/// victim's word on both cores. The report names the collision.
#[test]
fn a_delta_cache_collision_conflicts_and_the_report_names_it() {
    let cores = Cores::new(CPUS);
    let config = Config::new().mode(CoreMode::PerCpu).cpus(CPUS).cache_entries(1).review_period(None);
    let d = Domain::new(config).unwrap();
    let victim = Rc::new_in(0u64, &d);
    let object = Arc::new(Rc::new_in(1u64, &d));
    let held = [CPU_A, CPU_B].map(|core| testing::clone_on(&d, &victim, core));
    let (oa, ob) = (Arc::clone(&object), Arc::clone(&object));
    let (ca, ta) = cores.trace(CPU_A, move || Rc::clone(&oa));
    let (cb, tb) = cores.trace(CPU_B, move || Rc::clone(&ob));
    let found = conflicts(&ta, &tb);
    assert!(!found.is_empty() && found.iter().all(|c| c.labels() == ["Header.state"]), "{found:?}");
    let case = Conflicted { lines: found.into_iter().map(|c| (c.first, c.second)).collect(), test: "collision".into() };
    let reason = &exceptions(&[case], true, Design::Refcache)[0].reason;
    assert!(reason.starts_with("a delta-cache collision"), "{reason}");
    // Nothing was lost: once every handle is gone, both objects are freed.
    drop((held, ca, cb, victim, object));
    assert_eq!(d.collect(), 2);
}

/// The sloppy counter (004 §4.3) in the counter's report: its updates are conflict-free
/// while a core has a spare reference (steady); at a core's first `inc` it takes one from
/// the central count, which two cores both write (cold); its reads lock every core.
#[test]
fn sloppy_updates_touch_the_central_count_only_without_a_spare() {
    let report = report("counter");
    for imp in report.impls.iter().filter(|i| i.id.starts_with("sloppy")) {
        for (pair, ip) in report.pairs.iter().zip(&imp.pairs) {
            let what = format!("{} {}", imp.id, pair.title);
            if pair.update_pair {
                assert_eq!(ip.conflict_free, ip.traced, "{what}");
                if imp.id == "sloppy" {
                    let cold = if pair.title == "inc() / inc()" { 0 } else { ip.traced };
                    assert_eq!(ip.cold_conflict_free, cold, "{what}: only two takes from the central count conflict");
                }
            } else if ip.traced > 0 {
                assert_eq!(ip.conflict_free, 0, "{what}");
                assert!(ip.exceptions.iter().all(|e| e.reason.starts_with("a read (value) reconciles")), "{what}");
            }
        }
    }
}

/// Spares above the threshold go back to the central count: with a threshold of 1, a core
/// holding one spare that releases another writes the central count, and so does the other
/// core's: a conflict the report explains.
#[test]
fn releases_above_the_threshold_write_the_central_count() {
    let cores = Cores::new(CPUS);
    let d = SloppyDomain::new(SloppyConfig::new().mode(CoreMode::PerCpu).cpus(CPUS).threshold(1)).unwrap();
    let counter = Arc::new(SloppyCounter::with_domain(&d, 0));
    for core in [CPU_A, CPU_B] {
        assert!(counter.add_on(core, 1) && counter.sub_on(core, 1), "each test core holds one spare");
    }
    let (a, b) = (Arc::clone(&counter), Arc::clone(&counter));
    let ((), ta) = cores.trace(CPU_A, move || a.dec());
    let ((), tb) = cores.trace(CPU_B, move || b.dec());
    let found = conflicts(&ta, &tb);
    assert!(!found.is_empty() && found.iter().all(|c| c.labels() == ["Sloppy.central"]), "{found:?}");
    let case = Conflicted { lines: found.into_iter().map(|c| (c.first, c.second)).collect(), test: "threshold".into() };
    assert!(exceptions(&[case], true, Design::Sloppy)[0].reason.starts_with("the central count (Sloppy.central)"));
    assert_eq!(counter.value(), -2);
    assert_eq!(counter.spares(), vec![0, 0, 0], "both released down to half the threshold");
}
