//! The notification queue of 000 §3 (inotify): `enqueue` appends an event, `dequeue` takes
//! the oldest one.
//!
//! First in, first out: two `enqueue`s commute only when they append the same event, and a
//! `dequeue` commutes with an `enqueue` only when the queue is not empty (002 §5.3 on
//! ordered communication).

use crate::Model;
use crate::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param};
use std::collections::VecDeque;

/// A queue operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QueueOp {
    /// Append an event.
    Enqueue(u64),
    /// Remove and return the oldest event.
    Dequeue,
}

/// A queue's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueRet {
    /// `enqueue` (a blind update).
    Done,
    /// `dequeue`: the oldest event, or `None` when the queue was empty.
    Event(Option<u64>),
}

/// The queue model: events, oldest first.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueModel;

impl Model for QueueModel {
    type State = VecDeque<u64>;
    type Op = QueueOp;
    type Ret = QueueRet;

    fn name(&self) -> &str {
        "queue"
    }

    fn init(&self) -> VecDeque<u64> {
        VecDeque::new()
    }

    fn step(&self, queue: &mut VecDeque<u64>, op: &QueueOp) -> QueueRet {
        match *op {
            QueueOp::Enqueue(e) => {
                queue.push_back(e);
                QueueRet::Done
            }
            QueueOp::Dequeue => QueueRet::Event(queue.pop_front()),
        }
    }
}

impl Explore for QueueModel {
    fn kinds(&self) -> Vec<OpKind> {
        vec![OpKind::blind("enqueue", &[Param::symbol("e")]), OpKind::returning("dequeue", &[])]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<QueueOp> {
        match (kind, args) {
            (0, &[Arg::Symbol(e)]) => Some(QueueOp::Enqueue(e)),
            (1, []) => Some(QueueOp::Dequeue),
            _ => None,
        }
    }

    fn split(&self, op: &QueueOp) -> (usize, Vec<Arg>) {
        match *op {
            QueueOp::Enqueue(e) => (0, vec![Arg::Symbol(e)]),
            QueueOp::Dequeue => (1, Vec::new()),
        }
    }

    fn map_symbols(&self, queue: &VecDeque<u64>, f: &mut dyn FnMut(u64) -> u64) -> VecDeque<u64> {
        queue.iter().map(|&e| f(e)).collect()
    }

    /// Whether the queue is empty, holds one event, and whether its two oldest are equal.
    fn facts(&self, queue: &VecDeque<u64>, _: &[NamedOp<'_, QueueOp>]) -> Vec<Fact> {
        vec![
            Fact::new("Q = ∅", "Q ≠ ∅", queue.is_empty()),
            Fact::new("|Q| = 1", "|Q| ≠ 1", queue.len() == 1),
            Fact::new("Q[0] = Q[1]", "Q[0] ≠ Q[1]", queue.len() >= 2 && queue[0] == queue[1]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out() {
        let m = QueueModel;
        let mut q = m.init();
        m.step(&mut q, &QueueOp::Enqueue(3));
        m.step(&mut q, &QueueOp::Enqueue(1));
        assert_eq!(m.step(&mut q, &QueueOp::Dequeue), QueueRet::Event(Some(3)));
        assert_eq!(m.step(&mut q, &QueueOp::Dequeue), QueueRet::Event(Some(1)));
        assert_eq!(m.step(&mut q, &QueueOp::Dequeue), QueueRet::Event(None));
    }
}
