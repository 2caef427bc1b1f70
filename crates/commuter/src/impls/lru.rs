//! The LRU list of 000 §1 (`oplog_structures::lru`): the OpLog LRU, whose `touch` and
//! `remove` are timestamped per-core updates (a newer update of the log's last key
//! replaces it) and whose `evict` synchronizes, and the same list under a mutex.

use oplog_model::lru::LruModel;
use oplog_structures::lru::{ConcurrentLru, MutexLru, OpLogLru};

use super::{Impl, Object, WARM_KEY, domain};

/// Touches and removes a key the model never uses: the core's slot now holds the list (the
/// remove replaces the touch in the log, and removes an absent key when applied), and the
/// list is unchanged.
fn warm(lru: &dyn ConcurrentLru<u64>) {
    lru.touch(WARM_KEY);
    lru.remove(WARM_KEY);
}

impl Object<LruModel> for OpLogLru<u64> {
    fn warm(&self) {
        warm(self);
    }
}

impl Object<LruModel> for MutexLru<u64> {
    fn warm(&self) {
        warm(self);
    }
}

/// The LRU's implementations under test.
pub fn impls() -> Vec<Impl<LruModel>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog_structures::lru::OpLogLru: timestamped per-core logs over a doubly linked list",
            build: || Box::new(OpLogLru::new(&domain())),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::lru::MutexLru: the list under a mutex",
            build: || Box::new(MutexLru::new()),
            contract: None,
        },
    ]
}
