//! The notification queue of 000 §3 (`oplog_structures::notify`): the OpLog queue, whose
//! `enqueue` is a timestamped per-core update and whose `dequeue` synchronizes, and
//! `Mutex<VecDeque>`.

use oplog_model::queue::{QueueModel, QueueOp, QueueRet};
use oplog_structures::notify::{EventQueue, MutexQueue, OpLogQueue};

use super::{Impl, Object, WARM_KEY, domain};

/// Any [`EventQueue`] of `u64` events as an [`Object`] of the queue model.
#[derive(Debug)]
pub struct QueueObject<Q>(pub Q);

impl<Q: EventQueue<u64> + Send> Object<QueueModel> for QueueObject<Q> {
    fn run(&self, op: &QueueOp) -> QueueRet {
        match *op {
            QueueOp::Enqueue(e) => self.0.enqueue(e),
            QueueOp::Dequeue => return QueueRet::Event(self.0.dequeue()),
        }
        QueueRet::Done
    }

    /// Enqueues an event the model never uses and dequeues it again on the same core: the
    /// core's slot keeps the queue (a synchronize leaves installed objects installed), and
    /// the queue is empty again. Warming runs on the fresh queue, before the set-up, so the
    /// event dequeued is the one just enqueued.
    ///
    /// # Panics
    /// If the dequeue returns anything else (the queue was not empty, or lost the event).
    fn warm(&self) {
        self.0.enqueue(WARM_KEY);
        let got = self.0.dequeue();
        assert_eq!(got, Some(WARM_KEY), "warming dequeues the event it enqueued on the fresh queue");
    }
}

/// The queue's implementations under test.
pub fn impls() -> Vec<Impl<QueueModel>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog_structures::notify::OpLogQueue: timestamped per-core logs over a VecDeque",
            build: || Box::new(QueueObject(OpLogQueue::new(&domain()))),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::notify::MutexQueue: a VecDeque under a mutex",
            build: || Box::new(QueueObject(MutexQueue::new())),
            contract: None,
        },
    ]
}
