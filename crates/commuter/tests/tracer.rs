//! The tracer on hand-made cases: known conflicts (a shared counter, false sharing, a
//! mutex, a written cell), known conflict-freedom (per-core lines, shared reads), OpLog's
//! counter in its steady and cold states on the default per-CPU path (the restartable
//! sequence's recording stand-in), a log-cache collision (which the report's runs never
//! have: each object has its own domain), and a wrong implementation caught by the model.
//! Heap data behind a cell (a conflict planted in two cores' log entries) is in `heap.rs`.

use std::sync::Arc;

use commuter::impls::counter::OplogCounter;
use commuter::impls::set::OplogSet;
use commuter::impls::{Impl, Object};
use commuter::report::{Conflicted, Design, exceptions};
use commuter::testgen::Test;
use commuter::tracer::{CPU_A, CPU_B, CPUS, Conflict, Cores, Setup, check, conflicts};
use oplog::{Config, Domain};
use oplog_model::Concurrent;
use oplog_model::counter::{CounterModel, CounterOp, CounterRet};
use oplog_model::set::{SetModel, SetOp};
use oplog_percore::primitive::trace::{Access, AccessKind, record};
use oplog_percore::primitive::{AtomicU64, Mutex, Ordering, UnsafeCell};
use oplog_structures::list::{BasicList, ConcurrentList};

/// Whole cache lines per allocation, as the checker runs (`commuter::lines`).
#[global_allocator]
static ALLOCATOR: commuter::lines::Lines = commuter::lines::Lines;

/// Runs `a` on CPU A and then `b` on CPU B, traced, and returns the conflicts.
fn trace_pair<T: Send + Sync + 'static>(
    cores: &Cores,
    shared: &Arc<T>,
    a: fn(&T),
    b: fn(&T),
) -> (Vec<Conflict>, Vec<Access>, Vec<Access>) {
    let (sa, sb) = (Arc::clone(shared), Arc::clone(shared));
    let ((), ta) = cores.trace(CPU_A, move || a(&sa));
    let ((), tb) = cores.trace(CPU_B, move || b(&sb));
    (conflicts(&ta, &tb), ta, tb)
}

#[test]
fn two_cores_incrementing_one_atomic_conflict_on_its_line() {
    let cores = Cores::new(2);
    let shared = Arc::new(AtomicU64::new(0, "Shared.count"));
    let inc = |c: &AtomicU64| {
        c.fetch_add(1, Ordering::Relaxed);
    };
    let (c, ta, _) = trace_pair(&cores, &shared, inc, inc);
    assert_eq!(ta.len(), 1);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].labels(), ["Shared.count"]);
    assert_eq!(c[0].first[0].kind, AccessKind::Rmw);
    assert_eq!(c[0].line, ta[0].addr / 64);
}

#[test]
fn reading_one_line_from_two_cores_is_conflict_free() {
    let cores = Cores::new(2);
    let shared = Arc::new(AtomicU64::new(0, "Shared.count"));
    let load = |c: &AtomicU64| {
        c.load(Ordering::Relaxed);
    };
    let (c, ta, tb) = trace_pair(&cores, &shared, load, load);
    assert_eq!(ta[0].addr, tb[0].addr, "both read the same word");
    assert!(c.is_empty(), "{c:?}");
}

/// Two counters, each on its own line.
#[repr(C)]
struct PerCore {
    a: Padded,
    b: Padded,
}

#[repr(C, align(64))]
struct Padded(AtomicU64);

/// Two counters on one line.
#[repr(C, align(64))]
struct SameLine {
    a: AtomicU64,
    b: AtomicU64,
}

#[test]
fn per_core_lines_are_conflict_free_and_false_sharing_is_not() {
    let cores = Cores::new(2);
    let padded =
        Arc::new(PerCore { a: Padded(AtomicU64::new(0, "PerCore.a")), b: Padded(AtomicU64::new(0, "PerCore.b")) });
    let (c, ta, tb) = trace_pair(
        &cores,
        &padded,
        |p| {
            p.a.0.fetch_add(1, Ordering::Relaxed);
        },
        |p| {
            p.b.0.fetch_add(1, Ordering::Relaxed);
        },
    );
    assert!(!ta.is_empty() && !tb.is_empty());
    assert!(c.is_empty(), "{c:?}");

    let packed = Arc::new(SameLine { a: AtomicU64::new(0, "SameLine.a"), b: AtomicU64::new(0, "SameLine.b") });
    let (c, _, _) = trace_pair(
        &cores,
        &packed,
        |p| p.a.store(1, Ordering::Relaxed),
        |p| {
            p.b.load(Ordering::Relaxed);
        },
    );
    assert_eq!(c.len(), 1, "a write and a read of one line conflict even on different fields");
    assert_eq!(c[0].labels(), ["SameLine.a", "SameLine.b"]);
}

#[test]
fn a_mutex_and_a_written_cell_conflict_with_their_labels() {
    let cores = Cores::new(2);
    let m = Arc::new(Mutex::new(0u64, "Guarded.value"));
    let read = |m: &Mutex<u64>| {
        let _ = *m.lock();
    };
    let (c, _, _) = trace_pair(&cores, &m, read, read);
    assert!(!c.is_empty(), "taking a lock writes its word");
    assert_eq!(c[0].labels(), ["Guarded.value"]);

    #[repr(align(64))]
    struct Cell(UnsafeCell<[u64; 4]>);
    // SAFETY: the test only starts accesses (which is what the tracer records) and never
    // dereferences them.
    unsafe impl Sync for Cell {}
    let cell = Arc::new(Cell(UnsafeCell::new([0; 4], "Cell.words")));
    let read = |c: &Cell| {
        let _ = c.0.get();
    };
    let write = |c: &Cell| {
        let _ = c.0.get_mut();
    };
    let (c, _, _) = trace_pair(&cores, &cell, read, read);
    assert!(c.is_empty(), "two reads of a cell share it");
    let (c, _, _) = trace_pair(&cores, &cell, write, read);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].first[0].kind, AccessKind::CellWrite);
}

#[test]
fn oplog_counter_updates_on_two_cores_are_conflict_free_once_installed() {
    let cores = Cores::new(CPUS);
    let counter: Arc<OplogCounter> = Arc::new(OplogCounter::new(Config::per_cpu().cpus(CPUS)));
    let inc = |c: &OplogCounter| {
        c.call(&CounterOp::Inc);
    };
    // The default path: the restartable sequence's stand-in where its remote side's barrier
    // exists, which sets the slot's owner flag; the spin lock elsewhere.
    let entry = if oplog_percore::per_cpu_fast_path() { "Slot.busy" } else { "Slot.lock" };
    // Cold: each core's first update installs the counter in its log cache, setting its
    // bit in the object word.
    let (c, ta, tb) = trace_pair(&cores, &counter, inc, inc);
    assert!(ta.iter().any(|a| a.label == entry) && tb.iter().any(|a| a.label == entry));
    assert!(c.iter().any(|c| c.labels().contains(&"OpLog.word")), "{c:?}");
    // Steady: the same updates again write only each core's own slot (and their own rseq
    // area; they read the slot table and the object word for its representation, which
    // both cores only read).
    let (c, ta, _) = trace_pair(&cores, &counter, inc, inc);
    let own_slot_or_read = |a: &Access| {
        a.label.starts_with("Slot.")
            || a.label.starts_with("rseq.")
            || (["OpLog.word", "PerCore.rseq_table"].contains(&a.label) && a.kind == AccessKind::Load)
    };
    assert!(ta.iter().all(own_slot_or_read), "{ta:?}");
    assert!(c.is_empty(), "{c:?}");
    // Two updates on one core share its slot: the tracer sees the slot's line (installed,
    // the default path's increment is the folded sequence, which writes the slot's log).
    let steady = if oplog_percore::per_cpu_fast_path() { "Slot.data" } else { "Slot.lock" };
    let (s1, s2) = (Arc::clone(&counter), Arc::clone(&counter));
    let ((), t1) = cores.trace(CPU_A, move || inc(&s1));
    let ((), t2) = cores.trace(CPU_A, move || inc(&s2));
    assert!(conflicts(&t1, &t2).iter().any(|c| c.labels().contains(&steady)));
    // A read synchronizes: it locks the other core's slot.
    let read = |c: &OplogCounter| {
        c.call(&CounterOp::Read);
    };
    let (c, _, _) = trace_pair(&cores, &counter, inc, read);
    assert!(c.iter().any(|c| c.labels().contains(&"Slot.lock")), "{c:?}");
    assert_eq!(counter.call(&CounterOp::Read), CounterRet::Value(7));
}

/// The default configuration's per-CPU path, traced: an installed counter's increment is
/// the folded sequence's stand-in, which makes the sequence's accesses (its descriptor and
/// the CPU number in the thread's own rseq area, the slot table, the slot's flags, its
/// published word and the log's owner, then the count and the sum: the commit), never the
/// spin lock and no store to the flags, and two cores' steady updates of the OpLog counter
/// share no written line. A read then takes A's slot through the remote protocol, meeting
/// the flags the sequence read.
#[test]
fn default_path_counter_updates_enter_by_the_restartable_sequence_and_are_conflict_free() {
    if !oplog_percore::primitive::barrier::init() {
        eprintln!("skipped: no membarrier here, so per-CPU slots take their spin lock (the default elsewhere)");
        return;
    }
    assert!(oplog_percore::per_cpu_fast_path(), "traced builds take the restartable sequence's stand-in");
    let cores = Cores::new(CPUS);
    let counter: Arc<OplogCounter> = Arc::new(OplogCounter::new(Config::per_cpu().cpus(CPUS)));
    let inc = |c: &OplogCounter| {
        c.call(&CounterOp::Inc);
    };
    trace_pair(&cores, &counter, inc, inc);
    let (c, ta, tb) = trace_pair(&cores, &counter, inc, inc);
    assert!(c.is_empty(), "{c:?}");
    use AccessKind::*;
    let sequence = [
        ("OpLog.word", Load),
        ("rseq.rseq_cs", Store),
        ("rseq.cpu_id", Load),
        ("PerCore.rseq_table", Load),
        ("Slot.busy", Load),
        ("Slot.req", Load),
        ("Slot.published", Load),
        ("Slot.data", CellWrite),
        ("Slot.data", CellWrite),
    ];
    for t in [&ta, &tb] {
        let seen: Vec<(&str, AccessKind)> = t.iter().map(|a| (a.label, a.kind)).collect();
        assert_eq!(seen, sequence, "the representation, then the sequence: {t:?}");
    }
    // Each core reads its own CPU's entry of the slot table, in its own rseq area.
    let at = |t: &[Access], label| t.iter().find(|a| a.label == label).unwrap().addr;
    assert_eq!(at(&tb, "PerCore.rseq_table") - at(&ta, "PerCore.rseq_table"), 8);
    assert_ne!(at(&ta, "rseq.cpu_id"), at(&tb, "rseq.cpu_id"));
    let read = |c: &OplogCounter| {
        c.call(&CounterOp::Read);
    };
    let (c, _, _) = trace_pair(&cores, &counter, inc, read);
    let labels: Vec<&str> = c.iter().flat_map(Conflict::labels).collect();
    assert!(labels.contains(&"Slot.busy") && labels.contains(&"Slot.req"), "{c:?}");
}

#[test]
fn check_runs_both_orders_in_steady_and_cold_states() {
    let cores = Cores::new(CPUS);
    let imp = &commuter::impls::counter::impls()[0];
    assert_eq!(imp.id, "oplog");
    let test = Test::<CounterModel> { case: 0, setup: vec![CounterOp::Inc], a: CounterOp::Inc, b: CounterOp::Dec };
    assert!(check(&cores, &CounterModel, imp, &test, Setup::Steady).unwrap().conflict_free());
    let cold = check(&cores, &CounterModel, imp, &test, Setup::Cold).unwrap();
    assert!(!cold.ab.is_empty() && !cold.ba.is_empty(), "{cold:?}");
    let mutex = commuter::impls::counter::impls().into_iter().find(|i| i.id == "mutex").unwrap();
    assert!(!check(&cores, &CounterModel, &mutex, &test, Setup::Steady).unwrap().conflict_free());
}

/// A logical clock (one shared counter) that reports its reads to the tracer, as a
/// clock outside `oplog` must for the tracer to see it.
#[derive(Debug, Default)]
struct TracedLogicalClock(ordo::LogicalClock);

impl ordo::Clock for TracedLogicalClock {
    fn get_time(&self) -> u64 {
        record(std::ptr::from_ref(&self.0).cast(), 8, AccessKind::Rmw, "Clock.logical");
        self.0.get_time()
    }
    fn boundary(&self) -> u64 {
        self.0.boundary()
    }
    fn raw_order_is_causal(&self) -> bool {
        self.0.raw_order_is_causal()
    }
    fn name(&self) -> &'static str {
        "traced logical"
    }
}

#[test]
fn an_ordered_update_reading_a_shared_clock_conflicts_and_the_report_says_why() {
    let cores = Cores::new(CPUS);
    let imp = Impl::<SetModel> {
        id: "oplog-logical-clock",
        about: "the OpLog set stamped by a logical clock",
        build: || {
            let clock: Arc<dyn ordo::Clock> = Arc::new(TracedLogicalClock::default());
            Box::new(OplogSet::with_config(Config::per_cpu().cpus(CPUS).clock(clock)))
        },
        contract: None,
    };
    let test = Test::<SetModel> { case: 0, setup: Vec::new(), a: SetOp::Add(0), b: SetOp::Add(1) };
    let outcome = check(&cores, &SetModel, &imp, &test, Setup::Steady).unwrap();
    let lines = outcome.by_operation();
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|(_, _, a, b)| a.iter().chain(b).all(|t| t.label == "Clock.logical")), "{lines:?}");
    let cases =
        [Conflicted { lines: lines.into_iter().map(|(_, _, a, b)| (a, b)).collect(), test: test.render(&SetModel) }];
    let e = exceptions(&cases, true, Design::OpLog);
    assert!(e[0].reason.starts_with("a clock read"), "{}", e[0].reason);
    // The same set on Ordo's clock (the default) is conflict-free.
    let ordo_set = &commuter::impls::set::impls()[0];
    assert!(check(&cores, &SetModel, ordo_set, &test, Setup::Steady).unwrap().conflict_free());
}

/// A counter whose `read` is off by one.
struct OffByOne(Mutex<i64>);

impl Object<CounterModel> for OffByOne {}

impl Concurrent<CounterModel> for OffByOne {
    fn call(&self, op: &CounterOp) -> CounterRet {
        let mut v = self.0.lock();
        match op {
            CounterOp::Inc => *v += 1,
            CounterOp::Dec => *v -= 1,
            CounterOp::Read => return CounterRet::Value(*v + 1),
        }
        CounterRet::Done
    }
}

#[test]
fn a_response_the_model_does_not_give_is_reported() {
    let cores = Cores::new(CPUS);
    let imp = Impl::<CounterModel> {
        id: "mutex-broken",
        about: "reads one too many",
        build: || Box::new(OffByOne(Mutex::new(0, "OffByOne.value"))),
        contract: None,
    };
    let test = Test::<CounterModel> { case: 0, setup: vec![CounterOp::Inc], a: CounterOp::Read, b: CounterOp::Read };
    let err = check(&cores, &CounterModel, &imp, &test, Setup::Steady).unwrap_err();
    assert_eq!(
        err.to_string(),
        "implementation `mutex-broken` returned Value(2) for read() where the model returns Value(1) (test: setup: \
         inc() | A: read() | B: read())"
    );
}

/// Two lists in one domain whose log caches have one slot: an update of one evicts the
/// other's log and appends it to the victim's backlog, which the update on the other core
/// appends to as well. The report names it.
#[test]
fn a_log_cache_collision_conflicts_and_the_report_names_it() {
    let cores = Cores::new(CPUS);
    let d = Domain::new(Config::per_cpu().cpus(CPUS).cache_slots(1)).unwrap();
    let victim = Arc::new(BasicList::<u64>::with_domain(&d, Default::default()));
    let object = Arc::new(BasicList::<u64>::with_domain(&d, Default::default()));
    for cpu in [CPU_A, CPU_B] {
        let v = Arc::clone(&victim);
        cores.run(cpu, move || v.add(cpu as u64 + 10));
    }
    let (oa, ob) = (Arc::clone(&object), Arc::clone(&object));
    let ((), ta) = cores.trace(CPU_A, move || oa.add(1));
    let ((), tb) = cores.trace(CPU_B, move || ob.add(2));
    let found = conflicts(&ta, &tb);
    let labels: Vec<&str> = found.iter().flat_map(|c| c.labels()).collect();
    assert!(labels.contains(&"Backlogs.map"), "both evictions append to the victim's backlog: {found:?}");
    let case = Conflicted { lines: found.into_iter().map(|c| (c.first, c.second)).collect(), test: "collision".into() };
    let reason = &exceptions(&[case], true, Design::OpLog)[0].reason;
    assert!(reason.contains("a log-cache collision"), "{reason}");
    assert!(object.contains(&1) && object.contains(&2) && victim.contains(&10) && victim.contains(&11));
}

/// Two reads of an OpLog object whose set-up updates were read first (quiescent) take the
/// concurrent read path and share no written line; with the set-up's update still logged,
/// the first read synchronizes and they conflict (the steady state).
#[test]
fn reads_of_a_quiescent_oplog_object_are_conflict_free() {
    let cores = Cores::new(CPUS);
    for imp in commuter::impls::counter::impls().into_iter().filter(|i| i.id.starts_with("oplog")) {
        let test =
            Test::<CounterModel> { case: 0, setup: vec![CounterOp::Inc], a: CounterOp::Read, b: CounterOp::Read };
        let quiescent = check(&cores, &CounterModel, &imp, &test, Setup::Quiescent).unwrap();
        assert!(quiescent.conflict_free(), "{}: {:?}", imp.id, quiescent.describe());
        let steady = check(&cores, &CounterModel, &imp, &test, Setup::Steady).unwrap();
        assert!(!steady.conflict_free(), "{}: the first read synchronizes the logged increment", imp.id);
    }
    let test = Test::<SetModel> { case: 0, setup: vec![SetOp::Add(1)], a: SetOp::Contains(1), b: SetOp::Contains(2) };
    let sets = commuter::impls::set::impls().into_iter().filter(|i| i.id == "oplog");
    let lists = commuter::impls::list::impls().into_iter().filter(|i| i.id.starts_with("oplog"));
    let mut checked = 0;
    for imp in sets.chain(lists) {
        let quiescent = check(&cores, &SetModel, &imp, &test, Setup::Quiescent).unwrap();
        assert!(quiescent.conflict_free(), "{}: {:?}", imp.id, quiescent.describe());
        checked += 1;
    }
    assert_eq!(checked, 4, "the OpLog set and its three lists");
}
