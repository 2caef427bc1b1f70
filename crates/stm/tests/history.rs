//! Recorded histories of small concurrent runs, checked against a serial order.
//!
//! Each committed transaction records what it read and wrote. Every write is a
//! read-modify-write of a variable the transaction read, with a value no other transaction writes,
//! so the history itself says who wrote each value read (write→read edges) and which
//! write replaced which (each version has at most one successor, or an update was lost),
//! and from those, which transaction overwrote what another read (read→write edges). The
//! history is serializable iff this conflict graph is acyclic (Adya's direct
//! serialization graph); the test sorts it topologically, replays the transactions in
//! that order on a sequential model (a map from variable to value) and checks that every
//! read saw the replayed value and that the final state matches.
//!
//! The order is taken from the conflicts, not from commit stamps: on Ordo two
//! transactions may commit at stamps within the uncertainty window of each other in either
//! order (see the crate docs), so sorting by stamps is not a valid serial order.
#![cfg(not(loom))]

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use oplog_lincheck::testkit::{Rng, with_watchdog};
use ordo::{LogicalClock, Ordo};
use ordo_stm::{Stm, TVar, TxClock};

const VARS: usize = if cfg!(miri) { 3 } else { 6 };
const THREADS: usize = if cfg!(miri) { 2 } else { 4 };
const TXNS: usize = if cfg!(miri) { 8 } else { 400 };
const RUNS: u64 = if cfg!(miri) { 1 } else { 5 };

/// One committed transaction.
#[derive(Clone, Debug, Default)]
struct Record {
    reads: Vec<(usize, u64)>,
    writes: Vec<(usize, u64)>,
}

/// Runs the workload and returns every committed transaction and the final values.
fn record<C: TxClock>(stm: &Stm<C>, seed: u64) -> (Vec<Record>, Vec<u64>) {
    let vars: Vec<TVar<u64>> = (0..VARS).map(|_| TVar::new(stm, 0)).collect();
    let vars = &vars;
    let log = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let log = &log;
            s.spawn(move || {
                let mut rng = Rng::with_seed(seed.wrapping_mul(31) ^ t as u64);
                let mut mine = Vec::new();
                for seq in 0..TXNS {
                    // A value no other transaction writes: (thread + 1) << 32 | seq.
                    let value = ((t as u64 + 1) << 32) | seq as u64;
                    let touched: Vec<usize> = (0..rng.usize(1..=3)).map(|_| rng.usize(..VARS)).collect();
                    let writes: Vec<bool> = touched.iter().map(|_| rng.u8(..3) == 0).collect();
                    let rec = stm.atomically(|tx| {
                        let mut rec = Record::default();
                        for (&v, &w) in touched.iter().zip(&writes) {
                            if rec.writes.iter().any(|&(x, _)| x == v) {
                                continue; // read once, before writing
                            }
                            rec.reads.push((v, tx.read(&vars[v])?));
                            if w {
                                tx.write(&vars[v], value);
                                rec.writes.push((v, value));
                            }
                        }
                        rec.reads.dedup();
                        Ok(rec)
                    });
                    mine.push(rec);
                }
                log.lock().unwrap().extend(mine);
            });
        }
    });
    let finals = stm.atomically(|tx| vars.iter().map(|v| tx.read(v)).collect::<Result<Vec<_>, _>>());
    (log.into_inner().unwrap(), finals)
}

/// Checks that `history` (with initial value 0 everywhere) is conflict-serializable and
/// ends in `finals`; panics with what is wrong.
fn check(history: &[Record], finals: &[u64]) {
    const INIT: usize = usize::MAX;
    let n = history.len();
    // Who wrote each value (0: the initial state).
    let mut writer: HashMap<(usize, u64), usize> = HashMap::new();
    for (i, t) in history.iter().enumerate() {
        for &(x, v) in &t.writes {
            assert!(writer.insert((x, v), i).is_none(), "value {v} written twice to variable {x}");
        }
    }
    let writer_of = |x: usize, v: u64| if v == 0 { Some(INIT) } else { writer.get(&(x, v)).copied() };
    // Which write replaced each version: the transaction that read it and wrote the variable.
    let mut successor: HashMap<(usize, u64), usize> = HashMap::new();
    for (i, t) in history.iter().enumerate() {
        for &(x, _) in &t.writes {
            let &(_, read) = t.reads.iter().find(|r| r.0 == x).expect("every write follows a read");
            if let Some(other) = successor.insert((x, read), i) {
                panic!("lost update: transactions {other} and {i} both replaced value {read} of variable {x}");
            }
        }
    }
    // The conflict graph.
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    let mut edge = |from: usize, to: usize, edges: &mut Vec<Vec<usize>>| {
        if from != INIT && from != to {
            edges[from].push(to);
            indegree[to] += 1;
        }
    };
    for (i, t) in history.iter().enumerate() {
        for &(x, v) in &t.reads {
            let w =
                writer_of(x, v).unwrap_or_else(|| panic!("transaction {i} read {v} from variable {x}: never written"));
            edge(w, i, &mut edges); // write -> read (and write -> write for a read-modify-write)
            if let Some(&next) = successor.get(&(x, v)) {
                edge(i, next, &mut edges); // read -> the write that replaced what was read
            }
        }
    }
    // Topological order.
    let mut ready: VecDeque<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_front() {
        order.push(i);
        for &j in &edges[i] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.push_back(j);
            }
        }
    }
    assert_eq!(order.len(), n, "the conflict graph has a cycle: not serializable");
    // Replay on the sequential model.
    let mut model = vec![0u64; finals.len()];
    for &i in &order {
        for &(x, v) in &history[i].reads {
            assert_eq!(model[x], v, "transaction {i} read {v} from variable {x}, the serial order has {}", model[x]);
        }
        for &(x, v) in &history[i].writes {
            model[x] = v;
        }
    }
    assert_eq!(model, finals, "the serial replay ends elsewhere than the run");
}

fn histories<C: TxClock>(make: impl Fn() -> Stm<C>) {
    for seed in 0..RUNS {
        let (history, finals) = record(&make(), seed);
        assert_eq!(history.len(), THREADS * TXNS);
        check(&history, &finals);
    }
}

#[test]
fn histories_on_a_logical_clock_are_serializable() {
    with_watchdog("histories on a logical clock", Duration::from_secs(60), || {
        histories(|| Stm::new(LogicalClock::new()))
    });
}

#[test]
fn histories_on_ordo_are_serializable() {
    with_watchdog("histories on Ordo", Duration::from_secs(60), || histories(|| Stm::new(Ordo::clone(ordo::global()))));
}

#[test]
fn histories_on_a_wide_window_are_serializable() {
    let settings =
        ordo::Settings { source: ordo::SourceChoice::Monotonic, boundary: Some(20_000), ..ordo::Settings::default() };
    with_watchdog("histories on a wide window", Duration::from_secs(60), || {
        histories(|| Stm::new(Ordo::from_settings(&settings)))
    });
}

/// The checker itself: a lost update, a cycle and a wrong final state are caught.
#[test]
fn the_checker_rejects_non_serializable_histories() {
    let rec =
        |reads: &[(usize, u64)], writes: &[(usize, u64)]| Record { reads: reads.to_vec(), writes: writes.to_vec() };
    let ok = [rec(&[(0, 0)], &[(0, 1)]), rec(&[(0, 1)], &[(0, 2)])];
    check(&ok, &[2]);
    let lost = std::panic::catch_unwind(|| check(&[rec(&[(0, 0)], &[(0, 1)]), rec(&[(0, 0)], &[(0, 2)])], &[2]));
    assert!(lost.is_err(), "two writers of one version");
    let cyclic = std::panic::catch_unwind(|| {
        // Write skew: A reads both initial values and writes y; B reads both and writes x.
        check(&[rec(&[(0, 0), (1, 0)], &[(1, 1)]), rec(&[(1, 0), (0, 0)], &[(0, 2)])], &[2, 1])
    });
    assert!(cyclic.is_err(), "a cycle of read -> write edges");
    let wrong_end = std::panic::catch_unwind(|| check(&ok, &[1]));
    assert!(wrong_end.is_err());
}
