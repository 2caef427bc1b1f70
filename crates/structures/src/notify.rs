//! The notification queue of 000 §3 (inotify, Figure 2): many threads enqueue events, one
//! consumer dequeues them in order.
//!
//! Inotify appends a notification each time a watched file changes, and an application
//! reads them. "The kernel serializes updates to the queue with a spinlock. This helps
//! preserve the correct order when operations occur on different cores" (000 §3). With
//! OpLog the enqueue is a deferred update timestamped by the core's clock, so the order is
//! kept without a shared lock; the consumer's dequeue is a read: it synchronizes, which
//! merges the per-core logs by timestamp onto the queue's tail, then takes from the head.
//! The queue is read often, which 000 Figure 2 shows OpLog still wins at small core
//! counts; reading in batches ([`EventQueue::dequeue_into`], as `read(2)` on an inotify
//! descriptor returns every queued event that fits) amortizes the synchronize.
//!
//! Variants, all implementing [`EventQueue`]:
//!
//! | type | id in `oplog-bench notify` | what it does |
//! |---|---|---|
//! | [`OpLogQueue`] | `oplog` | ordered per-core logs over a `VecDeque` |
//! | [`MutexQueue`] | `mutex` | `Mutex<VecDeque>`: the stock design |
//! | [`SegQueueBaseline`] | `segqueue` | crossbeam's lock-free `SegQueue` |
//!
//! The text describes no absorption for this queue. (Inotify itself coalesces an event
//! identical to the last unread one; that is a semantic choice of inotify, not of OpLog,
//! and none of the variants here makes it, so that all three have the same FIFO
//! semantics.)
//!
//! # Operations
//!
//! * `enqueue(e)`: appends `e`. Linearizable: if one enqueue completes before another
//!   begins, its event is dequeued first.
//! * `dequeue()`: removes and returns the oldest event, or `None` if the queue is empty.
//! * `dequeue_into(out, max)`: removes up to `max` of the oldest events, appending them to
//!   `out` in order; returns how many. One linearizable operation on [`OpLogQueue`] and
//!   [`MutexQueue`]; on [`SegQueueBaseline`] it is `max` dequeues in a row.
//! * `len()`: the number of queued events.
//!
//! The model is `oplog_model::queue::QueueModel` (`enqueue`, `dequeue`); `dequeue_into` and
//! `len` are checked against its state by the tests.

use crossbeam_queue::SegQueue;
use oplog::{Domain, OpLog, Ordered, Update};
use oplog_model::queue::{QueueModel, QueueOp, QueueRet};
use oplog_percore::primitive::Mutex;
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

/// A FIFO queue of events with many producers (see the module docs for each operation).
pub trait EventQueue<E>: Sync {
    /// Appends `e`.
    fn enqueue(&self, e: E);
    /// Removes and returns the oldest event.
    fn dequeue(&self) -> Option<E>;
    /// Moves up to `max` of the oldest events to the end of `out`; returns how many.
    fn dequeue_into(&self, out: &mut Vec<E>, max: usize) -> usize;
    /// Number of events queued.
    fn len(&self) -> usize;
    /// Whether no event is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The representation the OpLog object behind this variant is in now (the adaptive
    /// policy's choice in a default domain); `None` for variants not built on OpLog.
    fn representation(&self) -> Option<oplog::Representation> {
        None
    }
}

/// Moves up to `max` events from the front of `queue` to `out`.
fn drain_front<E>(queue: &mut VecDeque<E>, out: &mut Vec<E>, max: usize) -> usize {
    let n = max.min(queue.len());
    out.extend(queue.drain(..n));
    n
}

/// The logged update of [`OpLogQueue`]: append one event (the queue's only update).
pub struct Enqueue<E>(pub E);

impl<E: Send + 'static> Update for Enqueue<E> {
    type Target = VecDeque<E>;
    #[inline]
    fn exec(self, queue: &mut VecDeque<E>) {
        queue.push_back(self.0);
    }
}

impl<E: fmt::Debug> fmt::Debug for Enqueue<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Enqueue").field(&self.0).finish()
    }
}

/// The log kind of [`OpLogQueue`] (to build its domain).
pub type Kind<E> = Ordered<Enqueue<E>>;

/// The OpLog notification queue (`oplog`).
pub struct OpLogQueue<E: Send + 'static> {
    queue: OpLog<Kind<E>>,
}

impl<E: Send + 'static> OpLogQueue<E> {
    /// An empty queue whose logs live in `domain`.
    pub fn new(domain: &Arc<Domain<Kind<E>>>) -> Self {
        Self { queue: OpLog::with_domain(domain, VecDeque::new()) }
    }
}

impl<E: Send + 'static> Default for OpLogQueue<E> {
    /// An empty queue in the process-wide per-CPU domain.
    fn default() -> Self {
        Self::new(&Domain::global())
    }
}

impl<E: Send + 'static> fmt::Debug for OpLogQueue<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpLogQueue").field("queue", &self.queue).finish()
    }
}

impl<E: Send + 'static> EventQueue<E> for OpLogQueue<E> {
    fn representation(&self) -> Option<oplog::Representation> {
        Some(self.queue.representation())
    }
    #[inline]
    fn enqueue(&self, e: E) {
        self.queue.update(Enqueue(e));
    }
    fn dequeue(&self) -> Option<E> {
        self.queue.synchronize().pop_front()
    }
    fn dequeue_into(&self, out: &mut Vec<E>, max: usize) -> usize {
        drain_front(&mut self.queue.synchronize(), out, max)
    }
    fn len(&self) -> usize {
        self.queue.read(VecDeque::len)
    }
}

/// `Mutex<VecDeque>` (`mutex`).
#[derive(Debug)]
pub struct MutexQueue<E> {
    queue: Mutex<VecDeque<E>>,
}

impl<E> MutexQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self { queue: Mutex::new(VecDeque::new(), "MutexQueue.queue") }
    }
}

impl<E> Default for MutexQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Send> EventQueue<E> for MutexQueue<E> {
    #[inline]
    fn enqueue(&self, e: E) {
        self.queue.lock().push_back(e);
    }
    fn dequeue(&self) -> Option<E> {
        self.queue.lock().pop_front()
    }
    fn dequeue_into(&self, out: &mut Vec<E>, max: usize) -> usize {
        drain_front(&mut self.queue.lock(), out, max)
    }
    fn len(&self) -> usize {
        self.queue.lock().len()
    }
}

/// crossbeam's lock-free segmented queue (`segqueue`).
#[derive(Debug)]
pub struct SegQueueBaseline<E> {
    queue: SegQueue<E>,
}

impl<E> SegQueueBaseline<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self { queue: SegQueue::new() }
    }
}

impl<E> Default for SegQueueBaseline<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Send> EventQueue<E> for SegQueueBaseline<E> {
    #[inline]
    fn enqueue(&self, e: E) {
        self.queue.push(e);
    }
    fn dequeue(&self) -> Option<E> {
        self.queue.pop()
    }
    fn dequeue_into(&self, out: &mut Vec<E>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            match self.queue.pop() {
                Some(e) => out.push(e),
                None => break,
            }
            n += 1;
        }
        n
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
}

/// Runs a model operation on any queue of `u64` events (the
/// [`Concurrent`](oplog_model::Concurrent) implementations of every variant and of
/// `dyn EventQueue<u64>`).
fn call<Q: EventQueue<u64> + ?Sized>(queue: &Q, op: &QueueOp) -> QueueRet {
    match *op {
        QueueOp::Enqueue(e) => queue.enqueue(e),
        QueueOp::Dequeue => return QueueRet::Event(queue.dequeue()),
    }
    QueueRet::Done
}

crate::concurrent!(QueueModel, call, dyn EventQueue<u64>, [[] OpLogQueue<u64>, [] MutexQueue<u64>, [] SegQueueBaseline<u64>]);
