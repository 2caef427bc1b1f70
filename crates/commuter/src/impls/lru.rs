//! The LRU list of 000 §1 (`oplog_structures::lru`): the OpLog LRU, whose `touch` and
//! `remove` are timestamped per-core updates (a newer update of the log's last key
//! replaces it) and whose `evict` synchronizes, and the same list under a mutex.

use oplog_model::lru::{LruModel, LruOp, LruRet};
use oplog_structures::lru::{ConcurrentLru, MutexLru, OpLogLru};

use super::{Impl, Object, WARM_KEY, domain};

/// Any [`ConcurrentLru`] of `u64` keys as an [`Object`] of the LRU model.
#[derive(Debug)]
pub struct LruObject<L>(pub L);

impl<L: ConcurrentLru<u64> + Send> Object<LruModel> for LruObject<L> {
    fn run(&self, op: &LruOp) -> LruRet {
        match *op {
            LruOp::Touch(x) => self.0.touch(x),
            LruOp::Remove(x) => self.0.remove(x),
            LruOp::Evict => return LruRet::Evicted(self.0.evict()),
        }
        LruRet::Done
    }

    /// Touches and removes a key the model never uses: the core's slot now holds the list
    /// (the remove replaces the touch in the log, and removes an absent key when applied),
    /// and the list is unchanged.
    fn warm(&self) {
        self.0.touch(WARM_KEY);
        self.0.remove(WARM_KEY);
    }
}

/// The LRU's implementations under test.
pub fn impls() -> Vec<Impl<LruModel>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog_structures::lru::OpLogLru: timestamped per-core logs over a doubly linked list",
            build: || Box::new(LruObject(OpLogLru::new(&domain()))),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::lru::MutexLru: the list under a mutex",
            build: || Box::new(LruObject(MutexLru::new())),
            contract: None,
        },
    ]
}
