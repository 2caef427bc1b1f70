//! The notification queue of 000 §3 (`oplog_structures::notify`): the OpLog queue, whose
//! `enqueue` is a timestamped per-core update and whose `dequeue` synchronizes, and
//! `Mutex<VecDeque>`.

use oplog_model::queue::QueueModel;
use oplog_structures::notify::{EventQueue, MutexQueue, OpLogQueue};

use super::{Impl, Object, WARM_KEY, domain};

/// Enqueues an event the model never uses and dequeues it again on the same core: the
/// core's slot keeps the queue (a synchronize leaves installed objects installed), and the
/// queue is empty again. Warming runs on the fresh queue, before the set-up, so the event
/// dequeued is the one just enqueued.
///
/// # Panics
/// If the dequeue returns anything else (the queue was not empty, or lost the event).
fn warm(queue: &dyn EventQueue<u64>) {
    queue.enqueue(WARM_KEY);
    let got = queue.dequeue();
    assert_eq!(got, Some(WARM_KEY), "warming dequeues the event it enqueued on the fresh queue");
}

impl Object<QueueModel> for OpLogQueue<u64> {
    fn warm(&self) {
        warm(self);
    }
}

impl Object<QueueModel> for MutexQueue<u64> {
    fn warm(&self) {
        warm(self);
    }
}

/// The queue's implementations under test.
pub fn impls() -> Vec<Impl<QueueModel>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog_structures::notify::OpLogQueue: timestamped per-core logs over a VecDeque",
            build: || Box::new(OpLogQueue::new(&domain())),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::notify::MutexQueue: a VecDeque under a mutex",
            build: || Box::new(MutexQueue::new()),
            contract: None,
        },
    ]
}
