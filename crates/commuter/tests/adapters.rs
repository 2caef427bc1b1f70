//! The adapters of the structures crate's and the refcount crate's implementations (list,
//! rmap, queue, LRU, name-cache entry, open-file list, Refcache, sloppy counter): each
//! answers as its model, on the generated tests and on long random sequences; contracts
//! admit exactly what the identity rule allows; and the mutex baselines conflict where
//! the OpLog versions' updates do not.

use commuter::impls::list::IDENTITY as LIST_IDENTITY;
use commuter::impls::{self, Impl};
use commuter::models::{namecache, open_files, refcache::RefcacheModel};
use commuter::structures::{self, Options};
use commuter::testgen::Test;
use commuter::tracer::{CPUS, Cores, Setup, check};
use oplog_lincheck::testkit::Rng;
use oplog_model::Concurrent;
use oplog_model::counter::CounterModel;
use oplog_model::explore::{Explore, Values};
use oplog_model::lru::{LruModel, LruOp};
use oplog_model::queue::{QueueModel, QueueOp};
use oplog_model::rmap::{Mapping, RmapModel, RmapOp};
use oplog_model::set::{SetModel, SetOp};

/// Whole cache lines per allocation, as the checker runs (`commuter::lines`).
#[global_allocator]
static ALLOCATOR: commuter::lines::Lines = commuter::lines::Lines;

/// Runs `steps` random operations (symbols from a pool of five, integers over their
/// ranges, only operations the contract admits) on a fresh object of every implementation,
/// comparing each response with the model's.
fn random_sequences_match<M: Explore>(model: &M, imps: &[Impl<M>], steps: usize) {
    let kinds = model.kinds();
    for imp in imps {
        let object = (imp.build)();
        let mut state = model.init();
        let mut rng = Rng::with_seed(0x2545_f491_4f6c_dd1d);
        let mut done = 0;
        while done < steps {
            let k = rng.usize(..kinds.len());
            let args: Vec<_> = kinds[k]
                .params
                .iter()
                .map(|p| match p.values {
                    Values::Symbol => oplog_model::explore::Arg::Symbol(rng.u64(..5)),
                    Values::Int { lo, hi } => oplog_model::explore::Arg::Int(rng.i64(lo..=hi)),
                })
                .collect();
            let Some(op) = model.build(k, &args) else { continue };
            if imp.contract.is_some_and(|c| !(c.admits)(&state, &op)) {
                continue;
            }
            let want = model.step(&mut state, &op);
            assert_eq!(object.call(&op), want, "{} after {done} operations: {op:?}", imp.id);
            done += 1;
        }
    }
}

#[test]
fn adapters_answer_as_their_models_on_random_sequences() {
    random_sequences_match(&SetModel, &impls::list::impls(), 400);
    random_sequences_match(&RmapModel, &impls::rmap::impls(), 400);
    random_sequences_match(&QueueModel, &impls::queue::impls(), 400);
    random_sequences_match(&LruModel, &impls::lru::impls(), 400);
    random_sequences_match(&CounterModel, &impls::counter::impls(), 400);
    random_sequences_match(&RefcacheModel, &impls::refcache::impls(), 400);
    random_sequences_match(&namecache::MODEL, &impls::namecache::impls(), 400);
    random_sequences_match(&open_files::MODEL, &impls::open_files::impls(), 400);
}

/// The name-cache entry (000 §3): the OpLog entry's lookups count their reference on their
/// own core and only read the generation, so two lookups never conflict, where the stock
/// entry's always do (its spinlock) and the lock-free one's do when one of them takes a
/// reference (its compare-and-swap). The open-file list: the OpLog version's updates are
/// conflict-free, the per-core lists' only when no close searches another core's list.
#[test]
fn the_name_cache_entry_and_the_open_file_list_answer_as_their_models() {
    let cores = Cores::new(CPUS);
    let check = |name: &str| {
        let structure = structures::all().into_iter().find(|s| s.name() == name).unwrap();
        structure.check(&cores, &Options::default()).unwrap()
    };
    let entry = check("namecache");
    let lookups = entry.pairs.iter().position(|p| p.title == "lookup(g) / lookup(h)").unwrap();
    let free = |id: &str| {
        let imp = entry.impls.iter().find(|i| i.id == id).unwrap();
        (imp.pairs[lookups].conflict_free, imp.pairs[lookups].traced)
    };
    assert_eq!(free("oplog"), (100, 100));
    assert_eq!(free("spinlock"), (0, 100));
    // Both stale: both only load the word (the generation differs from both arguments).
    let (cas, all) = free("cas");
    assert!(cas > 0 && cas < all, "{cas} of {all}");
    let files = check("open-files");
    for (i, imp) in files.impls.iter().enumerate() {
        let updates = files.totals(i, true);
        match imp.id.as_str() {
            "oplog" => assert_eq!(updates.conflict_free, updates.commutative),
            "percore" => assert!(updates.conflict_free > 0 && updates.conflict_free < updates.commutative),
            _ => assert_eq!(files.totals(i, false).conflict_free, 0, "{}", imp.id),
        }
    }
}

#[test]
fn every_generated_test_answers_as_the_model_and_updates_conflict_only_on_the_mutex() {
    let cores = Cores::new(CPUS);
    for name in ["list", "rmap", "queue", "lru"] {
        let structure = structures::all().into_iter().find(|s| s.name() == name).unwrap();
        // A response the model does not give would be an error here.
        let report = structure.check(&cores, &Options::default()).unwrap();
        assert!(report.impls.iter().any(|i| i.id == "mutex"), "{name} has a mutex baseline");
        assert!(report.impls.iter().any(|i| i.id.starts_with("oplog")), "{name} has an OpLog version");
        for (i, imp) in report.impls.iter().enumerate() {
            let updates = report.totals(i, true);
            assert!(updates.commutative > 0, "{name} {}: some update pair is checked", imp.id);
            if imp.id.starts_with("oplog") {
                assert_eq!(updates.conflict_free, updates.commutative, "{name} {}", imp.id);
                assert_eq!(updates.cold_conflict_free, 0, "{name} {}: a first touch writes OpLog.word", imp.id);
            } else {
                assert_eq!(report.totals(i, false).conflict_free, 0, "{name} {}", imp.id);
            }
            // Only the absorbing versions leave cases out, and they say which rule.
            assert_eq!(imp.contract.is_some(), updates.outside_contract > 0, "{name} {}", imp.id);
        }
    }
}

#[test]
fn the_identity_rule_admits_a_test_only_if_both_orders_follow_it() {
    let test = |setup: Vec<SetOp>, a, b| Test::<SetModel> { case: 0, setup, a, b };
    let admits = |t: &Test<SetModel>| LIST_IDENTITY.admits_test(&SetModel, t);
    assert!(admits(&test(vec![], SetOp::Add(0), SetOp::Add(1))));
    assert!(admits(&test(vec![SetOp::Add(0)], SetOp::Remove(0), SetOp::Add(1))));
    assert!(admits(&test(vec![SetOp::Add(0)], SetOp::Contains(0), SetOp::Remove(0))));
    // Two concurrent updates of one element: one order breaks the rule.
    assert!(!admits(&test(vec![], SetOp::Add(0), SetOp::Remove(0))));
    assert!(!admits(&test(vec![], SetOp::Add(0), SetOp::Add(0))));
    // Adding a present element, removing an absent one.
    assert!(!admits(&test(vec![SetOp::Add(0)], SetOp::Add(0), SetOp::Contains(1))));
    assert!(!admits(&test(vec![], SetOp::Remove(0), SetOp::Add(1))));
    // A set-up that breaks it.
    assert!(!admits(&test(vec![SetOp::Remove(3)], SetOp::Add(0), SetOp::Add(1))));
    let m = |m, start, end| Mapping { start, end, m };
    let rmap = |setup: Vec<RmapOp>, a, b| {
        commuter::impls::rmap::IDENTITY.admits_test(&RmapModel, &Test::<RmapModel> { case: 0, setup, a, b })
    };
    assert!(rmap(vec![RmapOp::Add(m(0, 0, 1))], RmapOp::Remove(m(0, 0, 1)), RmapOp::Add(m(0, 0, 2))));
    assert!(!rmap(vec![RmapOp::Add(m(0, 0, 1))], RmapOp::Remove(m(0, 0, 2)), RmapOp::Truncate(0)));
}

/// The contract is real: an absorbing list given two adds of one element panics when the
/// second is applied (debug builds check the identity rule), where the basic list has set
/// semantics.
#[test]
#[cfg(debug_assertions)]
fn an_absorbing_list_outside_its_contract_panics_and_the_basic_one_does_not() {
    use oplog::{Config, Domain};
    use oplog_structures::list::{BasicList, GlobalAbsorbList};
    let d = Domain::new(Config::per_cpu().cpus(CPUS)).unwrap();
    let basic = BasicList::with_domain(&d, Default::default());
    basic.call(&SetOp::Add(1));
    basic.call(&SetOp::Add(1));
    assert_eq!(basic.call(&SetOp::Contains(1)), oplog_model::set::SetRet::Present(true));
    let panicked = std::panic::catch_unwind(|| {
        let d = Domain::new(Config::per_cpu().cpus(CPUS)).unwrap();
        let absorbing = GlobalAbsorbList::with_domain(&d, Default::default());
        absorbing.call(&SetOp::Add(1));
        absorbing.call(&SetOp::Contains(1));
        absorbing.call(&SetOp::Add(1));
        absorbing.call(&SetOp::Contains(1));
    });
    assert!(panicked.is_err());
}

#[test]
fn steady_oplog_updates_touch_only_their_core_and_the_mutex_conflicts_on_its_lock() {
    let cores = Cores::new(CPUS);
    let steady = |imp: &Impl<LruModel>, a, b| {
        let test = Test::<LruModel> { case: 0, setup: vec![LruOp::Touch(0), LruOp::Touch(1)], a, b };
        check(&cores, &LruModel, imp, &test, Setup::Steady).unwrap()
    };
    let lru = impls::lru::impls();
    assert!(steady(&lru[0], LruOp::Touch(2), LruOp::Remove(0)).conflict_free());
    assert!(steady(&lru[0], LruOp::Touch(1), LruOp::Touch(1)).conflict_free());
    let mutex = steady(&lru[1], LruOp::Touch(2), LruOp::Remove(0));
    assert!(mutex.by_operation().iter().all(|(_, _, a, b)| a.iter().chain(b).all(|t| t.label == "MutexLru.list")));
    assert!(!mutex.conflict_free());

    let queue = impls::queue::impls();
    let test = Test::<QueueModel> {
        case: 0,
        setup: vec![QueueOp::Enqueue(0)],
        a: QueueOp::Enqueue(1),
        b: QueueOp::Enqueue(1),
    };
    assert!(check(&cores, &QueueModel, &queue[0], &test, Setup::Steady).unwrap().conflict_free());
    // Cold, the first update on each core installs the queue in its log cache: the only
    // conflict is the object word both set their bit in.
    let cold = check(&cores, &QueueModel, &queue[0], &test, Setup::Cold).unwrap();
    assert!(!cold.conflict_free());
    assert!(only_the_object_word(&cold), "{cold:?}");
    assert!(!check(&cores, &QueueModel, &queue[1], &test, Setup::Steady).unwrap().conflict_free());

    let rmap = impls::rmap::impls();
    let (a, b) = (Mapping { start: 0, end: 1, m: 0 }, Mapping { start: 0, end: 2, m: 1 });
    let test = Test::<RmapModel> { case: 0, setup: vec![RmapOp::Add(a)], a: RmapOp::Remove(a), b: RmapOp::Add(b) };
    for imp in &rmap {
        let outcome = check(&cores, &RmapModel, imp, &test, Setup::Steady).unwrap();
        assert_eq!(outcome.conflict_free(), imp.id.starts_with("oplog"), "{}: {outcome:?}", imp.id);
        if imp.id.starts_with("oplog") {
            let cold = check(&cores, &RmapModel, imp, &test, Setup::Cold).unwrap();
            assert!(!cold.conflict_free() && only_the_object_word(&cold), "{}: {cold:?}", imp.id);
        }
    }
}

/// Whether every conflicting access of `outcome` is to `OpLog.word` (a first touch).
fn only_the_object_word(outcome: &commuter::tracer::Outcome) -> bool {
    outcome.by_operation().iter().all(|(_, _, a, b)| a.iter().chain(b).all(|t| t.label == "OpLog.word"))
}
