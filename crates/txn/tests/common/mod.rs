//! What the integration tests share: the clocks every test runs on, the thread count, and
//! the serial-order checker for recorded histories.

#![allow(dead_code)]

use std::collections::HashSet;

use ordo::settings::{Settings, SourceChoice};
use ordo::{LogicalClock, Ordo};

/// The process-wide Ordo clock (calibrated hardware clock; the OS clock under Miri).
pub fn ordo() -> Ordo {
    ordo::global().as_ref().clone()
}

/// Ordo with a wide pinned boundary (5000 ticks), so that stamps often fall within it:
/// the conservative aborts and the checker's freedom within the boundary are exercised.
pub fn ordo_wide() -> Ordo {
    Ordo::from_settings(&Settings { source: SourceChoice::Hardware, boundary: Some(5_000), calibration_runs: 1 })
}

/// The logical clock.
pub fn logical() -> LogicalClock {
    LogicalClock::new()
}

/// Runs `$f::<Scheme, _>(name, make_clock)` for both schemes on the logical clock, Ordo,
/// and Ordo with a wide boundary (`make_clock: fn() -> C` builds a fresh clock).
#[macro_export]
macro_rules! every_setup {
    ($f:ident) => {{
        use ordo_txn::{Mvcc, Occ};
        $f::<Occ, _>("occ-logical", common::logical);
        $f::<Occ, _>("occ-ordo", common::ordo);
        $f::<Occ, _>("occ-ordo-wide", common::ordo_wide);
        $f::<Mvcc, _>("mvcc-logical", common::logical);
        $f::<Mvcc, _>("mvcc-ordo", common::ordo);
        $f::<Mvcc, _>("mvcc-ordo-wide", common::ordo_wide);
    }};
}

/// Worker threads for the concurrency tests: more than the cores (3 under Miri).
pub fn threads() -> usize {
    if cfg!(miri) { 3 } else { 2 * std::thread::available_parallelism().map_or(2, |n| n.get()) + 1 }
}

/// A committed transaction as its closure saw it (its committed attempt).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    /// The session's `last_stamp` after the commit.
    pub stamp: u64,
    /// Values read from the store (keys the transaction had not written yet), in order.
    pub reads: Vec<(u64, u64)>,
    /// The last value written to each key.
    pub writes: Vec<(u64, u64)>,
}

impl Committed {
    /// Records a read of `key`, unless the attempt wrote `key` before (then it read itself).
    pub fn read(&mut self, key: u64, value: u64) {
        if !self.writes.iter().any(|(k, _)| *k == key) {
            self.reads.push((key, value));
        }
    }

    /// Records a write.
    pub fn write(&mut self, key: u64, value: u64) {
        match self.writes.iter_mut().find(|(k, _)| *k == key) {
            Some(w) => w.1 = value,
            None => self.writes.push((key, value)),
        }
    }
}

/// Nodes the search may visit before giving up (a failure, never a pass).
const BUDGET: u64 = 5_000_000;

/// Finds a serial order of `txns` that (1) puts a transaction whose stamp is certainly
/// before another's (`a + boundary < b`) first, and (2) replayed from a store of `keys`
/// zeros, gives every transaction the values it read. Returns the order (indices), or
/// what went wrong.
pub fn serial_order(txns: &[Committed], keys: usize, boundary: u64) -> Result<Vec<usize>, String> {
    let mut sorted: Vec<usize> = (0..txns.len()).collect();
    sorted.sort_by_key(|&i| txns[i].stamp);
    let mut search = Search {
        txns,
        sorted,
        boundary,
        state: vec![0; keys],
        done: vec![false; txns.len()],
        order: Vec::new(),
        failed: HashSet::new(),
        nodes: 0,
        deepest: (0, 0),
    };
    if search.dfs(0)? {
        Ok(search.order)
    } else {
        let (placed, stuck) = search.deepest;
        Err(format!(
            "no serial order consistent with the stamps explains the reads ({} transactions; at \
             most {placed} placed, then none of the candidates fit, the earliest being {:?})",
            txns.len(),
            txns[stuck]
        ))
    }
}

struct Search<'a> {
    txns: &'a [Committed],
    sorted: Vec<usize>,
    boundary: u64,
    state: Vec<u64>,
    done: Vec<bool>,
    order: Vec<usize>,
    /// (first undone position, which of the next 128 are done, state) known to fail.
    failed: HashSet<(usize, u128, Vec<u64>)>,
    nodes: u64,
    /// The most transactions placed at once, and the first one left at that point.
    deepest: (usize, usize),
}

impl Search<'_> {
    fn dfs(&mut self, mut first: usize) -> Result<bool, String> {
        while first < self.sorted.len() && self.done[self.sorted[first]] {
            first += 1;
        }
        if first == self.sorted.len() {
            return Ok(true);
        }
        self.nodes += 1;
        if self.nodes > BUDGET {
            return Err(format!("search budget of {BUDGET} nodes exceeded at {} placed", self.order.len()));
        }
        let mut mask = 0u128;
        for (j, &i) in self.sorted[first..].iter().take(128).enumerate() {
            if self.done[i] {
                mask |= 1 << j;
            }
        }
        if self.order.len() >= self.deepest.0 {
            self.deepest = (self.order.len(), self.sorted[first]);
        }
        let key = (first, mask, self.state.clone());
        if self.failed.contains(&key) {
            return Ok(false);
        }
        let limit = self.txns[self.sorted[first]].stamp.saturating_add(self.boundary);
        for pos in first..self.sorted.len() {
            let i = self.sorted[pos];
            let t = &self.txns[i];
            if t.stamp > limit {
                break;
            }
            if self.done[i] || !t.reads.iter().all(|&(k, v)| self.state[k as usize] == v) {
                continue;
            }
            let saved: Vec<(u64, u64)> = t.writes.iter().map(|&(k, _)| (k, self.state[k as usize])).collect();
            for &(k, v) in &t.writes {
                self.state[k as usize] = v;
            }
            self.done[i] = true;
            self.order.push(i);
            if self.dfs(first)? {
                return Ok(true);
            }
            self.order.pop();
            self.done[i] = false;
            for &(k, v) in &saved {
                self.state[k as usize] = v;
            }
        }
        self.failed.insert(key);
        Ok(false)
    }
}
