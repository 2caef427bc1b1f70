//! Queue logs: each core's log is a queue of operations (000 §4.1).
//!
//! [`Ordered`] stamps every operation with the time it was logged and merges the gathered
//! queues by timestamp, so operations run in the order they happened (000 §4.1: "OpLog
//! executes logged updates in temporal order"). Entries with equal timestamps are ordered
//! by core id (003 §4.4), and entries of one core keep their queue order.
//!
//! Why equal timestamps, and not every pair within the clock's uncertainty window, go to
//! core order: two updates whose timestamps are within the window can still be ordered in
//! real time (one finished before the other began), and the raw timestamps already order
//! those correctly, either because the machine's clocks respect communication (measured by
//! `ordo`'s calibration) or because OpLog waits out the window before an update returns
//! (see the crate docs). Sorting such a pair by core id instead would put the later one
//! first whenever its core id is smaller, breaking linearizability; waiting twice the
//! window on every update would be needed to make that rule safe.
//!
//! [`Unordered`] is for operations that all commute: it never reads the clock and applies
//! the gathered queues one after another.
//!
//! Under the `trace` feature the entries' heap buffers are recorded as they are accessed
//! (a push writes its entry, absorption reads and rewrites entries, a gather reads a log's
//! entries and writes the batch's, an apply rewrites and reads the batch's), labelled
//! `Log.entries` and `Batch.entries`, so the tracer sees the lines behind the slot's cell.

use super::{LogKind, Update};
use std::collections::VecDeque;
use std::marker::PhantomData;

#[cfg(all(feature = "trace", not(loom)))]
use crate::primitive::trace::{AccessKind, record_slice};

/// The tracer's label for the entries of a core's log (their heap buffer).
#[cfg(all(feature = "trace", not(loom)))]
pub(crate) const LOG_ENTRIES: &str = "Log.entries";

/// The tracer's label for the operations of a batch (their heap buffers).
#[cfg(all(feature = "trace", not(loom)))]
pub(crate) const BATCH_ENTRIES: &str = "Batch.entries";

/// Under tracing, records an access to the elements of `deque` from index `from` on.
#[cfg(all(feature = "trace", not(loom)))]
fn record_deque<T>(deque: &VecDeque<T>, from: usize, kind: AccessKind) {
    let (front, back) = deque.as_slices();
    if from < front.len() {
        record_slice(&front[from..], kind, BATCH_ENTRIES);
        record_slice(back, kind, BATCH_ENTRIES);
    } else {
        record_slice(&back[from - front.len()..], kind, BATCH_ENTRIES);
    }
}

/// One core's log of a queue kind: its operations, oldest first, and, for an ordered kind,
/// the timestamp of each in an array beside them. An unordered kind stores no stamps: its
/// log is its operations alone, half the bytes for an 8-byte operation, and those bytes are
/// what a synchronize that gathers another core's log takes from that core's cache, and
/// what the owner writes again afterwards. Two threads adding to `read-mix`'s table at 99 %
/// updates (a probe, 3 × 300 ms per run, 2-core AMD EPYC host, 2026-11-29, alternated
/// runs): 80-87M operations per second with a 16-byte entry of stamp and operation against
/// 98-102M with the operation alone (default configuration, 80 ns line round trip); pinned
/// to logged while the round trip was 390 ns, 32.7M against 45.0M (medians of 8 runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLog<U, const ORDERED: bool> {
    ops: Vec<U>,
    /// The stamp of each operation (ordered kinds; empty otherwise).
    stamps: Vec<u64>,
}

impl<U, const O: bool> Default for QueueLog<U, O> {
    fn default() -> Self {
        Self { ops: Vec::new(), stamps: Vec::new() }
    }
}

impl<U, const O: bool> QueueLog<U, O> {
    /// An empty log with room for `n` operations.
    pub fn with_capacity(n: usize) -> Self {
        Self { ops: Vec::with_capacity(n), stamps: if O { Vec::with_capacity(n) } else { Vec::new() } }
    }

    /// The logged operations, oldest first.
    pub fn ops(&self) -> &[U] {
        &self.ops
    }

    /// The stamp of each logged operation (empty for an unordered kind).
    pub fn stamps(&self) -> &[u64] {
        &self.stamps
    }

    /// Operations the log has room for without growing.
    pub fn capacity(&self) -> usize {
        self.ops.capacity()
    }

    /// Appends `op`, and its stamp where the kind is ordered.
    #[inline(always)]
    fn append(&mut self, op: U, stamp: u64) {
        if O {
            push_traced(&mut self.stamps, stamp);
        }
        push_traced(&mut self.ops, op);
    }
}

/// Pushes `x` onto one of a log's arrays; under tracing, records what the push wrote: the
/// new element, or, if the push moved the elements to a larger buffer, the old buffer's
/// elements (read) and every element of the new one.
#[inline(always)]
fn push_traced<T>(v: &mut Vec<T>, x: T) {
    #[cfg(all(feature = "trace", not(loom)))]
    let before = v.as_ptr();
    v.push(x);
    #[cfg(all(feature = "trace", not(loom)))]
    {
        let moved = v.len() - 1;
        if std::ptr::eq(v.as_ptr(), before) {
            record_slice(&v[moved..], AccessKind::CellWrite, LOG_ENTRIES);
        } else {
            if moved > 0 {
                crate::primitive::trace::record(
                    before.cast(),
                    moved * std::mem::size_of::<T>(),
                    AccessKind::CellRead,
                    LOG_ENTRIES,
                );
            }
            record_slice(v, AccessKind::CellWrite, LOG_ENTRIES);
        }
    }
}

/// A log kind that queues operations of type `U`, merging by timestamp when `ORDERED`.
///
/// Use the aliases [`Ordered`] and [`Unordered`].
pub struct Queue<U, const ORDERED: bool>(PhantomData<fn(U)>);

impl<U, const O: bool> std::fmt::Debug for Queue<U, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if O { "Ordered" } else { "Unordered" })
    }
}

/// Timestamp-ordered queue log: operations apply in the order they were logged.
pub type Ordered<U> = Queue<U, true>;

/// Queue log for operations that commute: no clock, applied in gather order.
pub type Unordered<U> = Queue<U, false>;

/// The batch of a queue log: operations whose order is final, then (ordered kinds) those
/// gathered since, to be merged by stamp. Unordered kinds gather straight into `ready`:
/// gather order is their order, and one buffer is one allocation per synchronize.
#[derive(Debug)]
pub struct QueueBatch<U> {
    ready: VecDeque<U>,
    fresh: Vec<(u64, usize, U)>,
    /// Where each gathered log starts in `fresh` (a core's log is in stamp order, so
    /// `fresh` is that many sorted runs, which [`merge_runs`] merges), and the next run
    /// of the chain it is in, which the merge sets ([`NO_RUN`] until then).
    runs: Vec<(usize, usize)>,
    /// The next apply runs only the operations of `fresh` stamped before this
    /// ([`LogKind::cut`]); `u64::MAX`: all of them.
    below: u64,
}

impl<U> Default for QueueBatch<U> {
    fn default() -> Self {
        Self { ready: VecDeque::new(), fresh: Vec::new(), runs: Vec::new(), below: u64::MAX }
    }
}

impl<U> QueueBatch<U> {
    /// Takes the cut the batch was given ([`LogKind::cut`]; none is `u64::MAX`), moves the
    /// fresh entries stamped at or after it out, and returns them as a batch of their own
    /// (empty where the cut leaves nothing). What stays and what leaves each keep their
    /// order, and each run leaves its entries before the cut in one run and those after it
    /// in another (a core's log is in stamp order: its prefix and its suffix). Only the
    /// entries after the cut move (few: a cut leaves about one log per core that logs the
    /// object); those before it close up in place. Where `runs` does not describe `fresh`
    /// (its first run does not start at 0), neither part gets runs, and the merge sorts
    /// instead.
    fn split_later(&mut self) -> QueueBatch<U> {
        let below = std::mem::replace(&mut self.below, u64::MAX);
        let mut later = QueueBatch::default();
        let count = self.fresh.iter().filter(|e| e.0 >= below).count();
        if count == 0 {
            return later;
        }
        let (fresh, runs, n) = (&self.fresh, &mut self.runs, self.fresh.len());
        if runs.first().is_some_and(|&(s, _)| s == 0) {
            let mut keep_runs = Vec::with_capacity(runs.len());
            let (mut kept, mut moved) = (0, 0);
            for r in 0..runs.len() {
                let (start, end) = (runs[r].0, runs.get(r + 1).map_or(n, |&(s, _)| s));
                let k = fresh[start..end].iter().filter(|e| e.0 < below).count();
                if k > 0 {
                    keep_runs.push((kept, NO_RUN));
                }
                if k < end - start {
                    later.runs.push((moved, NO_RUN));
                }
                (kept, moved) = (kept + k, moved + end - start - k);
            }
            *runs = keep_runs;
        } else {
            runs.clear();
        }
        later.fresh.reserve_exact(count);
        later.fresh.extend(self.fresh.extract_if(.., |e| e.0 >= below));
        later
    }
}

/// No run: the end of a chain ([`QueueBatch::runs`]).
const NO_RUN: usize = usize::MAX;

/// The most chains of runs [`merge_runs`] merges (each chain is one core's logs, or
/// more than one where a core's stamps went back); more are sorted.
const MERGED_CHAINS: usize = 8;

/// Moves the operations of `fresh` into `ready` in the order of a stable sort by
/// (stamp, core), if `fresh` is the sorted runs that start where `runs` says, one core's each:
/// a merge, one move per operation, where the sort moved each one twice more through a
/// buffer it allocated (a consumer of two producers' events, `notify`, spent 7-9 % of
/// its time there). A core's runs are in gather order, which is the order its logs were
/// made in, so each run whose first key is at least the last key of its core's previous
/// one extends that core's chain; a run that is not starts a new chain for its core.
/// The chains, at most [`MERGED_CHAINS`] of them, are merged by their heads' keys; equal
/// keys are of one core, whose earlier chain goes first, as the sort kept gather order.
/// The chains are kept in `runs`: each run's second field is set to the next run of its
/// chain. Returns false, with nothing moved, if `fresh` is not such runs or has more
/// chains.
fn merge_runs<U>(fresh: &mut Vec<(u64, usize, U)>, runs: &mut [(usize, usize)], ready: &mut VecDeque<U>) -> bool {
    let n = fresh.len();
    if runs.first().map_or(n != 0, |&(s, _)| s != 0) {
        return false;
    }
    let key = |e: &(u64, usize, U)| (e.0, e.1);
    let end_of = |runs: &[(usize, usize)], r: usize| runs.get(r + 1).map_or(n, |&(s, _)| s);
    // Each chain's first and last run and core (each run's successor is in `runs`).
    let (mut first, mut last, mut core) = ([NO_RUN; MERGED_CHAINS], [NO_RUN; MERGED_CHAINS], [0; MERGED_CHAINS]);
    let mut chains = 0;
    for r in 0..runs.len() {
        let (start, end) = (runs[r].0, end_of(runs, r));
        if start >= end
            || !fresh[start..end].is_sorted_by_key(key)
            || fresh[start..end].iter().any(|e| e.1 != fresh[start].1)
        {
            return false;
        }
        let c = fresh[start].1;
        // The latest chain of this core, if this run continues it.
        match (0..chains).rev().find(|&k| core[k] == c) {
            Some(k) if key(&fresh[end_of(runs, last[k]) - 1]) <= key(&fresh[start]) => {
                runs[last[k]].1 = r;
                last[k] = r;
            }
            _ if chains == MERGED_CHAINS => return false,
            _ => {
                (first[chains], last[chains], core[chains]) = (r, r, c);
                chains += 1;
            }
        }
    }
    // Each chain's next element, and the end of the run it is in.
    let (mut head, mut run_of, mut stop) = ([0; MERGED_CHAINS], first, [0; MERGED_CHAINS]);
    for k in 0..chains {
        (head[k], stop[k]) = (runs[first[k]].0, end_of(runs, first[k]));
    }
    ready.reserve(n);
    let base = fresh.as_ptr();
    // SAFETY: every element is moved out exactly once below (each chain's head moves past
    // what it read, and the chains' runs partition `fresh`), and with the length 0 the
    // vector drops none of them. Nothing below can panic (the pushes do not allocate after
    // the reserve), and if it did, the elements not yet moved would leak, never drop
    // twice. The buffer stays the vector's.
    unsafe { fresh.set_len(0) };
    loop {
        let mut best: Option<((u64, usize), usize)> = None;
        for k in 0..chains {
            if head[k] < stop[k] {
                // SAFETY: `head[k]` is below `stop[k]` <= n: an element not yet moved out.
                let e = key(unsafe { &*base.add(head[k]) });
                // Strictly smaller: of equal keys (one core's), the earlier chain's first.
                if best.is_none_or(|(b, _)| e < b) {
                    best = Some((e, k));
                }
            }
        }
        let Some((_, k)) = best else { return true };
        // SAFETY: as above; the head moves past it, so it is read once.
        let (_, _, op) = unsafe { std::ptr::read(base.add(head[k])) };
        ready.push_back(op);
        head[k] += 1;
        if head[k] == stop[k] && runs[run_of[k]].1 != NO_RUN {
            run_of[k] = runs[run_of[k]].1;
            (head[k], stop[k]) = (runs[run_of[k]].0, end_of(runs, run_of[k]));
        }
    }
}

/// The calling core's log, as shown to [`Update::absorb_local`].
#[derive(Debug)]
pub struct LocalLog<'a, U> {
    ops: &'a mut Vec<U>,
    /// The stamps beside the operations (an ordered kind's; empty otherwise).
    stamps: &'a mut Vec<u64>,
}

impl<'a, U> LocalLog<'a, U> {
    /// Wraps a log.
    pub fn new<const O: bool>(log: &'a mut QueueLog<U, O>) -> Self {
        Self { ops: &mut log.ops, stamps: &mut log.stamps }
    }

    /// Number of entries in this core's log.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether this core's log is empty.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The logged operations, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &U> + '_ {
        #[cfg(all(feature = "trace", not(loom)))]
        record_slice(self.ops, AccessKind::CellRead, LOG_ENTRIES);
        self.ops.iter()
    }

    /// Removes and returns the most recent operation matching `pred` (the cancellation
    /// of 000 §4.2: a remove that meets its own add).
    pub fn remove_latest(&mut self, pred: impl FnMut(&U) -> bool) -> Option<U> {
        let found = self.ops.iter().rposition(pred);
        // The scan read the operations from the end back to the match.
        #[cfg(all(feature = "trace", not(loom)))]
        record_slice(&self.ops[found.unwrap_or(0)..], AccessKind::CellRead, LOG_ENTRIES);
        let i = found?;
        let op = self.ops.remove(i);
        if !self.stamps.is_empty() {
            self.stamps.remove(i);
            #[cfg(all(feature = "trace", not(loom)))]
            record_slice(&self.stamps[i..], AccessKind::CellWrite, LOG_ENTRIES);
        }
        // The operations after it moved down one.
        #[cfg(all(feature = "trace", not(loom)))]
        record_slice(&self.ops[i..], AccessKind::CellWrite, LOG_ENTRIES);
        Some(op)
    }

    /// The most recent operation, to combine the new one into (000 §4.2: many increments
    /// become one "add n").
    pub fn last_mut(&mut self) -> Option<&mut U> {
        #[cfg(all(feature = "trace", not(loom)))]
        record_slice(&self.ops[self.ops.len().saturating_sub(1)..], AccessKind::CellWrite, LOG_ENTRIES);
        self.ops.last_mut()
    }
}

impl<U: Update, const O: bool> LogKind for Queue<U, O> {
    type State = U::Target;
    type Op = U;
    type Log = QueueLog<U, O>;
    type Batch = QueueBatch<U>;
    type Direct = ();
    const ORDERED: bool = O;
    const APPLY_ALONE: bool = U::APPLY_ALONE;
    const CUTS: bool = O;

    #[inline]
    fn push(log: &mut QueueLog<U, O>, op: U, stamp: u64) -> usize {
        if let Some(op) = crate::reentry::absorbing(|| op.absorb_local(&mut LocalLog::new(log))) {
            log.append(op, stamp);
        }
        log.ops.len()
    }

    #[inline(always)]
    fn push_fits(log: &QueueLog<U, O>) -> bool {
        log.ops.len() < log.ops.capacity() && (!O || log.stamps.len() < log.stamps.capacity())
    }

    fn is_empty(log: &QueueLog<U, O>) -> bool {
        log.ops.is_empty()
    }

    /// Unordered operations commute: without global absorption, any subset may be applied
    /// alone. Ordered ones are applied by timestamp, across every core's log.
    fn applied_without_global_absorption(batch: &QueueBatch<U>) -> bool {
        !O && super::default_global_absorption_ran_on(&batch.ready)
    }

    fn absorbs_nothing_globally(state: &U::Target) -> bool {
        if O {
            return false;
        }
        super::forget_default_global_absorption();
        let mut none = VecDeque::new();
        U::absorb_global(state, &mut none);
        super::default_global_absorption_ran_on(&none)
    }

    fn take_full(log: &mut QueueLog<U, O>) -> QueueLog<U, O> {
        // One allocation per hand-off instead of the log growing again from nothing.
        let capacity = log.capacity();
        std::mem::replace(log, QueueLog::with_capacity(capacity))
    }

    fn gather(batch: &mut QueueBatch<U>, core: usize, log: &mut QueueLog<U, O>) {
        #[cfg(all(feature = "trace", not(loom)))]
        {
            record_slice(&log.stamps, AccessKind::CellRead, LOG_ENTRIES);
            record_slice(&log.ops, AccessKind::CellRead, LOG_ENTRIES);
        }
        if O {
            #[cfg(all(feature = "trace", not(loom)))]
            let from = batch.fresh.len();
            if !log.ops.is_empty() {
                batch.runs.push((batch.fresh.len(), NO_RUN));
            }
            batch.fresh.extend(log.stamps.drain(..).zip(log.ops.drain(..)).map(|(stamp, op)| (stamp, core, op)));
            #[cfg(all(feature = "trace", not(loom)))]
            record_slice(&batch.fresh[from..], AccessKind::CellWrite, BATCH_ENTRIES);
        } else {
            #[cfg(all(feature = "trace", not(loom)))]
            let from = batch.ready.len();
            batch.ready.extend(log.ops.drain(..));
            #[cfg(all(feature = "trace", not(loom)))]
            record_deque(&batch.ready, from, AccessKind::CellWrite);
        }
    }

    fn cut(batch: &mut QueueBatch<U>, below: u64) {
        batch.below = below;
    }

    fn batch_len(batch: &QueueBatch<U>) -> usize {
        batch.ready.len() + batch.fresh.len()
    }

    fn apply(state: &mut U::Target, batch: &mut QueueBatch<U>) {
        // A cut ([`LogKind::cut`]) keeps the operations stamped after it for later.
        let later = if O { batch.split_later() } else { QueueBatch::default() };
        if O {
            // The merge (or sort) reads and moves the gathered operations.
            #[cfg(all(feature = "trace", not(loom)))]
            record_slice(&batch.fresh, AccessKind::CellWrite, BATCH_ENTRIES);
            // Stable: equal (stamp, core) keeps gather order, which puts a core's evicted
            // log before its current one and keeps each log's own order.
            if !merge_runs(&mut batch.fresh, &mut batch.runs, &mut batch.ready) {
                batch.fresh.sort_by_key(|&(stamp, core, _)| (stamp, core));
            }
            batch.runs.clear();
        }
        batch.ready.extend(batch.fresh.drain(..).map(|(_, _, op)| op));
        if !later.fresh.is_empty() {
            (batch.fresh, batch.runs) = (later.fresh, later.runs);
        }
        // Global absorption may rewrite any operation; each is then read out.
        #[cfg(all(feature = "trace", not(loom)))]
        record_deque(&batch.ready, 0, AccessKind::CellWrite);
        super::forget_default_global_absorption();
        U::absorb_global(state, &mut batch.ready);
        // Applied from a `Vec`'s iterator, a pointer bump (a `VecDeque`'s `pop_front` carries
        // its wrapping head index from one operation to the next, a chain of dependent
        // instructions that cost more than a small `exec`). The conversion keeps the buffer
        // (it rotates a wrapped deque in place). If an operation panics, `Unapplied` puts
        // the rest back in the batch for the next synchronize.
        let mut rest =
            Unapplied { ops: Vec::from(std::mem::take(&mut batch.ready)).into_iter(), batch: &mut batch.ready };
        for op in rest.ops.by_ref() {
            op.exec(state);
        }
    }

    /// Runs the operation: nothing is logged, so there is nothing to absorb it into.
    #[inline]
    fn exec(state: &mut U::Target, op: U) {
        op.exec(state);
    }
}

/// The operations of a batch not yet applied: put back into the batch when dropped, so
/// that those after an operation that panicked are kept, in order.
struct Unapplied<'a, U> {
    ops: std::vec::IntoIter<U>,
    batch: &'a mut VecDeque<U>,
}

impl<U> Drop for Unapplied<'_, U> {
    fn drop(&mut self) {
        self.batch.extend(self.ops.by_ref());
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A log of `entries` (stamp, operation), as pushes that absorbed nothing make it.
    fn log_of<U, const O: bool>(entries: impl IntoIterator<Item = (u64, U)>) -> QueueLog<U, O> {
        let mut log = QueueLog::default();
        for (stamp, op) in entries {
            log.append(op, stamp);
        }
        log
    }

    #[derive(Debug, Clone, PartialEq)]
    enum SetOp {
        Add(u32),
        Remove(u32),
    }

    impl Update for SetOp {
        type Target = Vec<u32>;
        fn exec(self, t: &mut Vec<u32>) {
            match self {
                SetOp::Add(x) => t.push(x),
                SetOp::Remove(x) => t.retain(|&y| y != x),
            }
        }
        fn absorb_local(self, log: &mut LocalLog<'_, Self>) -> Option<Self> {
            match self {
                SetOp::Remove(x) if log.remove_latest(|o| *o == SetOp::Add(x)).is_some() => None,
                op => Some(op),
            }
        }
    }

    #[test]
    fn ordered_merge_is_by_stamp_then_core_and_keeps_each_log_in_order() {
        let mut core0 = log_of([(5, SetOp::Add(1)), (9, SetOp::Add(3))]);
        let mut core1 = log_of([(5, SetOp::Add(2)), (7, SetOp::Add(4))]);
        let mut batch = QueueBatch::default();
        // Gather core 1 first: the sort must still put core 0's stamp-5 entry first.
        Ordered::<SetOp>::gather(&mut batch, 1, &mut core1);
        Ordered::<SetOp>::gather(&mut batch, 0, &mut core0);
        assert!(core0.ops.is_empty() && core1.ops.is_empty() && core0.stamps.is_empty());
        let mut state = Vec::new();
        Ordered::<SetOp>::apply(&mut state, &mut batch);
        assert_eq!(state, vec![1, 2, 4, 3]);
        assert_eq!(Ordered::<SetOp>::batch_len(&batch), 0);
    }

    /// A xorshift generator from `seed`: each call draws a number below its argument.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |bound| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        }
    }

    /// Gathers `logs` random logs into `batch`, of up to 5 entries each on cores 0 to 3,
    /// stamped from `from` to `from + 7` (in stamp order, as a core's logs are, except in
    /// every fifth `round`), and records their entries in `expected`. Every entry adds a
    /// number of its own.
    fn gather_random(
        batch: &mut QueueBatch<SetOp>,
        expected: &mut Vec<(u64, usize, SetOp)>,
        (logs, from, round): (usize, u64, usize),
        next: &mut impl FnMut(u64) -> u64,
    ) {
        for l in 0..logs {
            let core = next(4) as usize;
            let len = next(6) as usize;
            let mut stamps: Vec<u64> = (0..len).map(|_| from + next(8)).collect();
            if round % 5 != 0 {
                stamps.sort_unstable();
            }
            let id = |i: usize| (round * 10_000 + from as usize * 1_000 + l * 10 + i) as u32;
            let entries: Vec<_> = stamps.iter().enumerate().map(|(i, &stamp)| (stamp, SetOp::Add(id(i)))).collect();
            expected.extend(entries.iter().map(|(stamp, op)| (*stamp, core, op.clone())));
            Ordered::<SetOp>::gather(batch, core, &mut log_of(entries));
        }
    }

    /// The numbers `entries` add, in their order.
    fn added(entries: &[(u64, usize, SetOp)]) -> Vec<u32> {
        entries.iter().map(|(_, _, op)| if let SetOp::Add(x) = op { *x } else { 0 }).collect()
    }

    /// Whatever the gathered logs (sorted by stamp, as a core's are, or not; one core's
    /// logs in stamp order or not; up to four times [`MERGED_CHAINS`] of them; stamps that
    /// tie within and across logs), an ordered batch applies in the order of a stable sort
    /// by (stamp, core).
    #[test]
    fn ordered_batches_apply_in_stable_stamp_and_core_order() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        // Fewer under Miri, which runs the merge's unsafe code.
        for round in 0..if cfg!(miri) { 40 } else { 500 } {
            let logs = 1 + next(4 * MERGED_CHAINS as u64) as usize;
            let mut batch = QueueBatch::default();
            let mut expected = Vec::new();
            gather_random(&mut batch, &mut expected, (logs, 0, round), &mut next);
            expected.sort_by_key(|&(stamp, core, _)| (stamp, core));
            let mut state = Vec::new();
            Ordered::<SetOp>::apply(&mut state, &mut batch);
            assert_eq!(state, added(&expected), "round {round}");
            assert_eq!(Ordered::<SetOp>::batch_len(&batch), 0);
        }
    }

    /// Each core's logs, gathered in the order they were made, chain into one run per
    /// core, which merge; more cores than chains, or a log out of stamp order, are left to
    /// the sort, with nothing moved.
    #[test]
    fn one_chain_per_core_merges_and_too_many_chains_do_not() {
        let batch_of = |logs: &[(usize, &[u64])]| {
            let mut batch = QueueBatch::default();
            for (i, &(core, stamps)) in logs.iter().enumerate() {
                let mut log = log_of(stamps.iter().map(|&stamp| (stamp, SetOp::Add((i * 10) as u32 + stamp as u32))));
                Ordered::<SetOp>::gather(&mut batch, core, &mut log);
            }
            batch
        };
        let sorted = |batch: &QueueBatch<SetOp>| {
            let mut v: Vec<_> = batch.fresh.iter().map(|(s, c, op)| (*s, *c, op.clone())).collect();
            v.sort_by_key(|&(s, c, _)| (s, c));
            v.into_iter().map(|(_, _, op)| op).collect::<Vec<_>>()
        };
        // Three cores, each handing off logs in turn (a backlog), stamps tying across cores
        // and within a core's consecutive logs.
        let mut batch = batch_of(&[(0, &[1, 4]), (1, &[2, 3]), (2, &[4]), (0, &[4, 9]), (1, &[3, 8]), (0, &[9])]);
        let expected = sorted(&batch);
        let mut ready = VecDeque::new();
        assert!(merge_runs(&mut batch.fresh, &mut batch.runs, &mut ready));
        assert!(batch.fresh.is_empty());
        assert_eq!(Vec::from(ready), expected);
        // One more core than chains.
        let cores: Vec<(usize, &[u64])> = (0..=MERGED_CHAINS).map(|c| (c, &[5u64][..])).collect();
        let mut batch = batch_of(&cores);
        let mut ready = VecDeque::new();
        assert!(!merge_runs(&mut batch.fresh, &mut batch.runs, &mut ready));
        assert_eq!((batch.fresh.len(), ready.len()), (MERGED_CHAINS + 1, 0));
        // A log out of stamp order.
        let mut batch = batch_of(&[(0, &[1, 2]), (1, &[3, 2])]);
        assert!(!merge_runs(&mut batch.fresh, &mut batch.runs, &mut ready));
        assert_eq!((batch.fresh.len(), ready.len()), (4, 0));
    }

    /// A cut applies the operations stamped before it in the order of the whole merge and
    /// leaves the rest, whose runs still merge (with logs gathered later) in that order.
    /// Randomized as the merge's test: logs in stamp order or not, ties, many cores.
    #[test]
    fn a_cut_applies_what_precedes_it_and_keeps_the_rest_in_order() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for round in 0..if cfg!(miri) { 40 } else { 500 } {
            let mut batch = QueueBatch::default();
            let mut expected = Vec::new();
            let logs = 1 + next(2 * MERGED_CHAINS as u64) as usize;
            gather_random(&mut batch, &mut expected, (logs, 0, round), &mut next);
            let below = next(10);
            expected.sort_by_key(|&(stamp, core, _)| (stamp, core));
            let split = expected.partition_point(|e| e.0 < below);
            let mut state = Vec::new();
            Ordered::<SetOp>::cut(&mut batch, below);
            Ordered::<SetOp>::apply(&mut state, &mut batch);
            assert_eq!(state, added(&expected[..split]), "round {round}: the operations before the cut");
            assert_eq!(Ordered::<SetOp>::batch_len(&batch), expected.len() - split, "round {round}: the rest");
            // The rest waits, as in a backlog's carry, for logs gathered after it.
            let mut later = expected.split_off(split);
            let logs = next(3) as usize;
            gather_random(&mut batch, &mut later, (logs, 8, round), &mut next);
            later.sort_by_key(|&(stamp, core, _)| (stamp, core));
            state.clear();
            Ordered::<SetOp>::apply(&mut state, &mut batch);
            assert_eq!(state, added(&later), "round {round}: the rest, then what came after");
            assert_eq!(Ordered::<SetOp>::batch_len(&batch), 0);
        }
    }

    /// An operation that panics before a cut leaves the ones after it, and those after the
    /// cut, in the batch, in order.
    #[test]
    fn a_panic_before_the_cut_keeps_everything_after_it() {
        let mut batch = QueueBatch::default();
        Ordered::<Op>::gather(&mut batch, 0, &mut log_of([(1, Op::Push(1)), (2, Op::Boom), (5, Op::Push(5))]));
        Ordered::<Op>::gather(&mut batch, 1, &mut log_of([(3, Op::Push(3)), (6, Op::Push(6))]));
        Ordered::<Op>::cut(&mut batch, 4);
        let mut state = Vec::new();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Ordered::<Op>::apply(&mut state, &mut batch)));
        assert!(r.is_err());
        assert_eq!((state.clone(), Ordered::<Op>::batch_len(&batch)), (vec![1], 3));
        Ordered::<Op>::apply(&mut state, &mut batch);
        assert_eq!(state, vec![1, 3, 5, 6]);
    }

    #[test]
    fn unordered_applies_in_gather_order() {
        let mut a = log_of([(0, SetOp::Add(9))]);
        let mut b = log_of([(0, SetOp::Add(1))]);
        assert!(a.stamps().is_empty(), "an unordered log keeps no stamps");
        let mut batch = QueueBatch::default();
        Unordered::<SetOp>::gather(&mut batch, 0, &mut a);
        Unordered::<SetOp>::gather(&mut batch, 1, &mut b);
        let mut state = Vec::new();
        Unordered::<SetOp>::apply(&mut state, &mut batch);
        assert_eq!(state, vec![9, 1]);
    }

    #[test]
    fn local_absorption_cancels_a_remove_meeting_its_add() {
        let mut log = QueueLog::default();
        assert_eq!(Ordered::<SetOp>::push(&mut log, SetOp::Add(1), 1), 1);
        assert_eq!(Ordered::<SetOp>::push(&mut log, SetOp::Add(2), 2), 2);
        assert_eq!(Ordered::<SetOp>::push(&mut log, SetOp::Remove(1), 3), 1);
        assert_eq!((log.stamps(), log.ops()), (&[2][..], &[SetOp::Add(2)][..]), "the stamp went with its add");
        // A remove with no add in this log is appended.
        assert_eq!(Ordered::<SetOp>::push(&mut log, SetOp::Remove(7), 4), 2);
        assert_eq!(log.stamps(), [2, 4]);
        let mut log = QueueLog::default();
        Unordered::<SetOp>::push(&mut log, SetOp::Add(1), 0);
        Unordered::<SetOp>::push(&mut log, SetOp::Add(2), 0);
        Unordered::<SetOp>::push(&mut log, SetOp::Remove(1), 0);
        assert_eq!((log.stamps(), log.ops()), (&[][..], &[SetOp::Add(2)][..]));
    }

    /// Under tracing, the entries behind a log's cell are recorded where they are: a push
    /// writes its entry (all of them when the buffer grows), absorption reads the log and
    /// rewrites what moved, a gather reads the log and writes the batch, an apply rewrites
    /// the batch.
    #[cfg(all(feature = "trace", not(loom)))]
    #[test]
    fn queue_logs_record_their_heap_entries() {
        use crate::primitive::trace::Session;
        let (op, stamp) = (std::mem::size_of::<SetOp>(), std::mem::size_of::<u64>());
        let mut log = QueueLog::with_capacity(4);
        let session = Session::start().unwrap();
        Ordered::<SetOp>::push(&mut log, SetOp::Add(1), 1);
        Ordered::<SetOp>::push(&mut log, SetOp::Add(2), 2);
        Ordered::<SetOp>::push(&mut log, SetOp::Remove(1), 3);
        let (ops, stamps) = (log.ops.as_ptr() as usize, log.stamps.as_ptr() as usize);
        let mut batch = QueueBatch::default();
        Ordered::<SetOp>::gather(&mut batch, 0, &mut log);
        let fresh = batch.fresh.as_ptr() as usize;
        let mut state = Vec::new();
        Ordered::<SetOp>::apply(&mut state, &mut batch);
        let seen: Vec<_> = session.finish().into_iter().map(|a| (a.label, a.kind, a.addr, a.size)).collect();
        use AccessKind::*;
        assert_eq!(
            seen[..10],
            [
                (LOG_ENTRIES, CellWrite, stamps, stamp),
                (LOG_ENTRIES, CellWrite, ops, op),
                (LOG_ENTRIES, CellWrite, stamps + stamp, stamp),
                (LOG_ENTRIES, CellWrite, ops + op, op),
                // The remove met its add: the scan read both operations, the second moved
                // down, and its stamp with it.
                (LOG_ENTRIES, CellRead, ops, 2 * op),
                (LOG_ENTRIES, CellWrite, stamps, stamp),
                (LOG_ENTRIES, CellWrite, ops, op),
                (LOG_ENTRIES, CellRead, stamps, stamp),
                (LOG_ENTRIES, CellRead, ops, op),
                (BATCH_ENTRIES, CellWrite, fresh, std::mem::size_of::<(u64, usize, SetOp)>()),
            ]
        );
        assert!(seen[10..].iter().all(|a| a.0 == BATCH_ENTRIES), "{seen:?}");
        assert_eq!(state, [2]);
    }

    #[test]
    fn gather_keeps_the_log_storage() {
        let mut log = QueueLog::with_capacity(64);
        Ordered::<SetOp>::push(&mut log, SetOp::Add(1), 1);
        let mut batch = QueueBatch::default();
        Ordered::<SetOp>::gather(&mut batch, 0, &mut log);
        assert!(log.ops.is_empty() && log.stamps.is_empty() && log.capacity() >= 64 && log.stamps.capacity() >= 64);
    }

    /// A push fits while both arrays have room, and stops fitting where either must grow;
    /// taking a full log keeps its room.
    #[test]
    fn a_push_fits_while_the_log_has_room() {
        let mut log = QueueLog::with_capacity(3);
        let room = log.capacity();
        for i in 0..room {
            assert!(Ordered::<SetOp>::push_fits(&log), "entry {i} of {room}");
            Ordered::<SetOp>::push(&mut log, SetOp::Add(i as u32), i as u64);
        }
        assert!(!Ordered::<SetOp>::push_fits(&log), "full");
        let taken = Ordered::<SetOp>::take_full(&mut log);
        assert_eq!(taken.ops().len(), room);
        assert!(Ordered::<SetOp>::push_fits(&log), "a fresh log with the same room");
        let mut unordered = QueueLog::<SetOp, false>::with_capacity(1);
        assert!(Unordered::<SetOp>::push_fits(&unordered), "an unordered log has no stamps to fit");
        Unordered::<SetOp>::push(&mut unordered, SetOp::Add(1), 0);
        assert_eq!(Unordered::<SetOp>::push_fits(&unordered), unordered.capacity() > 1);
    }

    struct Boom;
    impl Update for Boom {
        type Target = Vec<u32>;
        fn exec(self, _: &mut Vec<u32>) {
            panic!("boom");
        }
    }

    /// Pushes a number, or panics.
    #[derive(Debug)]
    enum Op {
        Push(u32),
        Boom,
    }

    impl Update for Op {
        type Target = Vec<u32>;
        fn exec(self, t: &mut Vec<u32>) {
            match self {
                Op::Push(x) => t.push(x),
                Op::Boom => Boom.exec(t),
            }
        }
    }

    #[test]
    fn a_panicking_operation_leaves_the_rest_in_the_batch() {
        let mut log = log_of([(1, Op::Push(1)), (2, Op::Boom), (3, Op::Push(3))]);
        let mut batch = QueueBatch::default();
        Ordered::<Op>::gather(&mut batch, 0, &mut log);
        let mut state = Vec::new();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Ordered::<Op>::apply(&mut state, &mut batch)));
        assert!(r.is_err());
        assert_eq!(state, vec![1]);
        assert_eq!(Ordered::<Op>::batch_len(&batch), 1);
        Ordered::<Op>::apply(&mut state, &mut batch);
        assert_eq!(state, vec![1, 3]);
    }
}
