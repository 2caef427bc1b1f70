//! The counter log of 000 Figure 8 / 001 Figure 6-3: a per-core "log" that is one integer.
//!
//! `push` folds the operation (a signed delta) into the core's value at once; `gather`
//! adds the core's value to the batch; `apply` adds the batch to the shared value. Order
//! does not matter, so the clock is never read, and an object that no core has touched
//! recently costs only its own value (the log cache holds the per-core values). The
//! shared value is the counter's direct log ([`DirectSum`]): direct updates add to it
//! with one atomic instruction, and so does a lock holder applying a batch.

use super::{DirectLog, LogKind};
use crate::primitive::{AtomicU64, Ordering};

/// A log kind whose operations are signed deltas folded into one integer per core.
///
/// Arithmetic wraps, like the unsigned counters of the texts.
#[derive(Debug)]
pub struct CounterLog;

impl LogKind for CounterLog {
    type State = i64;
    type Op = i64;
    type Log = i64;
    type Batch = i64;
    type Direct = DirectSum;
    const ORDERED: bool = false;
    /// Deltas add up in any grouping: a core's log may be applied alone.
    const APPLY_ALONE: bool = true;
    /// A counter's log is one integer in its slot, so a larger cache costs only its slots
    /// (128 KiB per core): 1,024 counters that two threads increment at random all stay
    /// logged, where 256 slots send most of them direct, whose values the threads then
    /// take from each other (`oplog-bench objects`, 2-core AMD EPYC host, 2026-11-29,
    /// medians of 3 × 300 ms: 718M updates per second against 278M, 370M against 202M on
    /// one thread; 642M against 93M while the host's line round trip was 380 ns; 16 and
    /// 65,536 counters unchanged). Four times more, 4,096 slots (512 KiB per core), was
    /// measured against it and not taken (`oplog-bench objects --threads 1,2 --points
    /// 1024,4096,65536`, 2-core AMD EPYC host, 2026-12-01, alternated runs while the line
    /// round trip stayed about 65 ns): 4,096 counters that two threads increment at
    /// random stay logged (under 1 % direct, against 75 %), 249-370M updates per second
    /// against 204M (Zipf: 359-427M against 253M); but two threads on 65,536 counters
    /// lose a tenth (314M against 354-355M; Zipf 185M against 206-213M; not isolated:
    /// the slots alone fill half of this host's 1 MiB second-level cache); one thread and
    /// 1,024 counters unchanged. A program whose few thousand hot counters threads share
    /// sets [`Config::cache_slots`](crate::Config::cache_slots).
    const CACHE_SLOTS: usize = 1024;

    #[inline(always)]
    fn push(log: &mut i64, op: i64, _stamp: u64) -> usize {
        *log = log.wrapping_add(op);
        0
    }

    #[inline]
    fn is_empty(log: &i64) -> bool {
        *log == 0
    }

    fn gather(batch: &mut i64, _core: usize, log: &mut i64) {
        *batch = batch.wrapping_add(std::mem::take(log));
    }

    fn batch_len(batch: &i64) -> usize {
        usize::from(*batch != 0)
    }

    fn apply(state: &mut i64, batch: &mut i64) {
        *state = state.wrapping_add(std::mem::take(batch));
    }

    #[inline]
    fn exec(state: &mut i64, op: i64) {
        *state = state.wrapping_add(op);
    }
}

/// The counter's direct log, which is its value: one atomic integer that direct updates
/// add their delta to, one atomic read-modify-write each, like a plain atomic counter, and
/// that a lock holder adds a gathered batch to the same way (`object` module docs,
/// "Representations"). The object's entry keeps nothing of the value, so a counter costs
/// its handle, its lock word and this.
#[derive(Debug)]
pub struct DirectSum(AtomicU64);

impl DirectSum {
    /// The value now.
    #[inline(always)]
    fn load(&self) -> i64 {
        self.0.load(Ordering::SeqCst) as i64
    }

    /// Adds `delta`.
    // Sequentially consistent, as every access of the object's word: a reader or a
    // synchronize loads the value before it checks the word's log half, and the value's
    // order among the other updates rests on it. On x86-64 the same instruction as a
    // relaxed add.
    #[inline(always)]
    fn add(&self, delta: i64) {
        self.0.fetch_add(delta as u64, Ordering::SeqCst);
    }
}

impl DirectLog<CounterLog> for DirectSum {
    const LOCK_FREE: bool = true;
    type Stored = ();
    /// `(base, value)`: the value loaded, and what the holder has made of it;
    /// [`DirectLog::commit`] adds the difference.
    type Lease = (i64, i64);

    fn split(state: i64) -> ((), Self) {
        ((), Self(AtomicU64::new(state as u64, "OpLog.direct")))
    }

    fn join(&self, (): ()) -> i64 {
        self.load()
    }

    #[inline(always)]
    fn push(&self, op: i64) -> Result<(), i64> {
        self.add(op);
        Ok(())
    }

    fn fold(&self, batch: &mut i64) {
        let delta = std::mem::take(batch);
        if delta != 0 {
            self.add(delta);
        }
    }

    #[inline(always)]
    fn lease(&self) -> (i64, i64) {
        let value = self.load();
        (value, value)
    }

    #[inline(always)]
    fn view<'s>((): &'s (), lease: &'s (i64, i64)) -> &'s i64 {
        &lease.1
    }

    #[inline(always)]
    fn view_mut<'s>((): &'s mut (), lease: &'s mut (i64, i64)) -> &'s mut i64 {
        &mut lease.1
    }

    #[inline(always)]
    fn commit(&self, &(base, value): &(i64, i64)) {
        if value != base {
            self.add(value.wrapping_sub(base));
        }
    }

    fn apply(&self, (): &mut (), lease: &mut (i64, i64), batch: &mut i64) {
        let delta = std::mem::take(batch);
        if delta != 0 {
            self.add(delta);
            lease.0 = lease.0.wrapping_add(delta);
            lease.1 = lease.1.wrapping_add(delta);
        }
    }

    fn exec(&self, (): &mut (), op: i64) {
        self.add(op);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn push_folds_and_gather_sums() {
        let mut a = 0;
        let mut b = 0;
        assert_eq!(CounterLog::push(&mut a, 3, 0), 0);
        CounterLog::push(&mut a, -1, 0);
        CounterLog::push(&mut b, 5, 0);
        let mut batch = 0;
        CounterLog::gather(&mut batch, 0, &mut a);
        CounterLog::gather(&mut batch, 1, &mut b);
        assert!(CounterLog::is_empty(&a) && CounterLog::is_empty(&b));
        assert_eq!(CounterLog::batch_len(&batch), 1);
        let mut state = 10;
        CounterLog::apply(&mut state, &mut batch);
        assert_eq!((state, batch), (17, 0));
        assert_eq!(CounterLog::batch_len(&batch), 0);
    }

    #[test]
    fn arithmetic_wraps() {
        let mut log = i64::MAX;
        CounterLog::push(&mut log, 1, 0);
        assert_eq!(log, i64::MIN);
    }
}
