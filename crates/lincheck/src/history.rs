//! Concurrent histories: completed operations with the real-time interval they ran in.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// One completed operation: who ran it, what it was, what it returned, and the tickets
/// taken just before its invocation and just after its response (see [`Recorder`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<Op, Ret> {
    /// The thread (0-based within the history) that ran it.
    pub thread: usize,
    /// The operation with its arguments.
    pub op: Op,
    /// What it returned.
    pub ret: Ret,
    /// Ticket taken before the invocation.
    pub call: u64,
    /// Ticket taken after the response.
    pub response: u64,
}

impl<Op, Ret> Operation<Op, Ret> {
    /// Whether this operation returned before `other` was invoked (so any linearization
    /// must put it first).
    pub fn precedes(&self, other: &Self) -> bool {
        self.response < other.call
    }
}

/// Why a list of operations is not a well-formed history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistoryError {
    /// An operation's response ticket is not after its call ticket.
    ResponseBeforeCall {
        /// Its index in the list.
        index: usize,
        /// Its call ticket.
        call: u64,
        /// Its response ticket.
        response: u64,
    },
    /// Two events share a ticket, so their order is unknown.
    DuplicateTicket(u64),
    /// Two operations of one thread overlap: a thread runs one operation at a time.
    OverlapInThread {
        /// The thread.
        thread: usize,
    },
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryError::ResponseBeforeCall { index, call, response } => {
                write!(f, "operation {index} responds at ticket {response}, not after its call at ticket {call}")
            }
            HistoryError::DuplicateTicket(t) => write!(f, "two events share ticket {t}: their order is unknown"),
            HistoryError::OverlapInThread { thread } => {
                write!(f, "thread {thread} has two overlapping operations: a thread runs one at a time")
            }
        }
    }
}

impl std::error::Error for HistoryError {}

/// A concurrent history of completed operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct History<Op, Ret> {
    ops: Vec<Operation<Op, Ret>>,
}

impl<Op, Ret> History<Op, Ret> {
    /// Checks that `ops` form a history: every response after its call, all tickets
    /// distinct, and each thread's operations one after another.
    ///
    /// # Errors
    /// [`HistoryError`] naming the first problem found.
    pub fn new(ops: Vec<Operation<Op, Ret>>) -> Result<Self, HistoryError> {
        let mut tickets = Vec::with_capacity(2 * ops.len());
        for (index, o) in ops.iter().enumerate() {
            if o.response <= o.call {
                return Err(HistoryError::ResponseBeforeCall { index, call: o.call, response: o.response });
            }
            tickets.extend([o.call, o.response]);
        }
        tickets.sort_unstable();
        if let Some(w) = tickets.windows(2).find(|w| w[0] == w[1]) {
            return Err(HistoryError::DuplicateTicket(w[0]));
        }
        let mut by_thread: Vec<(usize, u64, u64)> = ops.iter().map(|o| (o.thread, o.call, o.response)).collect();
        by_thread.sort_unstable();
        if let Some(w) = by_thread.windows(2).find(|w| w[0].0 == w[1].0 && w[1].1 < w[0].2) {
            return Err(HistoryError::OverlapInThread { thread: w[0].0 });
        }
        Ok(Self { ops })
    }

    /// The operations, in the order given.
    pub fn ops(&self) -> &[Operation<Op, Ret>] {
        &self.ops
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the history is empty.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl<Op: fmt::Debug, Ret: fmt::Debug> fmt::Display for History<Op, Ret> {
    /// One line per operation, by call ticket: thread, `[call, response]`, operation and
    /// response.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut order: Vec<&Operation<Op, Ret>> = self.ops.iter().collect();
        order.sort_by_key(|o| o.call);
        for o in order {
            writeln!(f, "  thread {} [{:>4}, {:>4}] {:?} -> {:?}", o.thread, o.call, o.response, o.op, o.ret)?;
        }
        Ok(())
    }
}

/// The real-time clock of a recording: one shared ticket counter (see the crate docs,
/// "Real-time order").
#[derive(Debug, Default)]
pub struct Recorder {
    tickets: AtomicU64,
}

impl Recorder {
    /// A recorder whose first ticket is 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `run(&op)` as thread `thread`, taking a ticket before and after.
    pub fn record<Op, Ret>(&self, thread: usize, op: Op, run: impl FnOnce(&Op) -> Ret) -> Operation<Op, Ret> {
        let call = self.tickets.fetch_add(1, Ordering::SeqCst);
        let ret = run(&op);
        let response = self.tickets.fetch_add(1, Ordering::SeqCst);
        Operation { thread, op, ret, call, response }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(thread: usize, call: u64, response: u64) -> Operation<(), ()> {
        Operation { thread, op: (), ret: (), call, response }
    }

    #[test]
    fn malformed_histories_are_rejected_naming_the_problem() {
        assert_eq!(
            History::new(vec![op(0, 5, 5)]).unwrap_err(),
            HistoryError::ResponseBeforeCall { index: 0, call: 5, response: 5 }
        );
        assert_eq!(History::new(vec![op(0, 1, 4), op(1, 4, 6)]).unwrap_err(), HistoryError::DuplicateTicket(4));
        let err = History::new(vec![op(0, 1, 4), op(0, 2, 6)]).unwrap_err();
        assert_eq!(err.to_string(), "thread 0 has two overlapping operations: a thread runs one at a time");
        assert_eq!(History::new(vec![op(0, 1, 2), op(0, 3, 4), op(1, 0, 5)]).unwrap().len(), 3);
    }

    #[test]
    fn the_recorder_orders_sequential_operations() {
        let r = Recorder::new();
        let a = r.record(0, 1, |x| x + 1);
        let b = r.record(1, 2, |x| x * 10);
        assert_eq!((a.ret, b.ret), (2, 20));
        assert!(a.precedes(&b) && !b.precedes(&a));
        let h = History::new(vec![b, a]).unwrap();
        assert_eq!(h.to_string(), "  thread 0 [   0,    1] 1 -> 2\n  thread 1 [   2,    3] 2 -> 20\n");
    }
}
