//! The LRU list of 000 §1: "LRU lists, for example, are usually updated with every access,
//! but read only during eviction".
//!
//! Every access `touch`es its key (moves it to the most-recently-used end, inserting it if
//! absent); eviction takes the least recently used key. With OpLog a touch is a deferred,
//! timestamped update, and the timestamps define recency across cores: the synchronize
//! before an eviction replays every core's touches in time order onto the one list, so the
//! victim is the key whose last touch is oldest, exactly as with one shared list. (000 §1
//! contrasts this with per-core LRU lists, whose reconciliation has to compare the heads'
//! timestamps by hand.)
//!
//! Variants, both implementing [`ConcurrentLru`]:
//!
//! | type | id in `oplog-bench lru` | what it does |
//! |---|---|---|
//! | [`OpLogLru`] | `oplog` | ordered per-core logs over an [`LruList`] |
//! | [`MutexLru`] | `mutex` | the [`LruList`] behind one lock |
//!
//! # Absorption
//!
//! The text gives none for LRU lists; the semantics allow one. The newest update of a key
//! alone decides where the key ends up (a touch puts it at the MRU end, a remove takes it
//! out, whatever came before), and moving one key does not change the relative order of
//! the others. So an older update of the same key can be dropped as long as no read comes
//! in between, which holds while both are in this core's log. [`OpLogLru`] does this for
//! the log's last entry (a run of accesses to the same key, the common case of a hot key,
//! costs one entry), which keeps the push O(1); the newer update is appended with its own,
//! newer, timestamp. This needs no identity rule.
//!
//! # Operations
//!
//! * `touch(k)`: `k` becomes the most recently used key (inserted if absent).
//! * `remove(k)`: `k` leaves the list (the object was freed); no effect if absent.
//! * `evict()`: removes and returns the least recently used key, `None` if empty.
//! * `order()`: every key, least recently used first (a read, for verification).
//!
//! The model is `oplog_model::lru::LruModel` (`touch`, `remove`, `evict`); `order` is
//! checked against its state by the tests.

use crate::applied::{Applied, Stats};
use oplog::log::LocalLog;
use oplog::{Domain, OpLog, Ordered, Update};
use oplog_model::lru::{LruModel, LruOp, LruRet};
use oplog_percore::primitive::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// Key types the LRU variants accept.
pub trait Key: Clone + Eq + Hash + fmt::Debug + Send + Sync + 'static {}
impl<K: Clone + Eq + Hash + fmt::Debug + Send + Sync + 'static> Key for K {}

const NIL: u32 = u32::MAX;

struct LruNode<K> {
    key: Option<K>,
    /// Towards the least recently used end.
    prev: u32,
    /// Towards the most recently used end.
    next: u32,
}

/// The sequential type: a doubly linked list in recency order, with a hash map from key to
/// node, so `touch`, `remove` and `evict` are O(1).
pub struct LruList<K> {
    map: HashMap<K, u32>,
    nodes: Vec<LruNode<K>>,
    free: Vec<u32>,
    /// Least recently used.
    head: u32,
    /// Most recently used.
    tail: u32,
}

impl<K> Default for LruList<K> {
    fn default() -> Self {
        Self { map: HashMap::new(), nodes: Vec::new(), free: Vec::new(), head: NIL, tail: NIL }
    }
}

impl<K> LruList<K> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The keys, least recently used first.
    pub fn iter(&self) -> impl Iterator<Item = &K> + '_ {
        let mut i = self.head;
        std::iter::from_fn(move || {
            if i == NIL {
                return None;
            }
            let n = &self.nodes[i as usize];
            i = n.next;
            n.key.as_ref()
        })
    }
}

impl<K: Key> LruList<K> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `key` the most recently used, inserting it if absent.
    pub fn touch(&mut self, key: K) {
        if let Some(&i) = self.map.get(&key) {
            if i != self.tail {
                self.unlink(i);
                self.push_tail(i);
            }
            return;
        }
        let node = LruNode { key: Some(key.clone()), prev: NIL, next: NIL };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                let i = u32::try_from(self.nodes.len()).ok().filter(|&i| i != NIL).expect("LRU list is full");
                self.nodes.push(node);
                i
            }
        };
        self.map.insert(key, i);
        self.push_tail(i);
    }

    /// Removes `key`; false if absent.
    pub fn remove(&mut self, key: &K) -> bool {
        let Some(i) = self.map.remove(key) else {
            return false;
        };
        self.release(i);
        true
    }

    /// Removes and returns the least recently used key.
    pub fn evict(&mut self) -> Option<K> {
        if self.head == NIL {
            return None;
        }
        let i = self.head;
        let key = self.release(i);
        self.map.remove(&key);
        Some(key)
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = (self.nodes[i as usize].prev, self.nodes[i as usize].next);
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
    }

    fn push_tail(&mut self, i: u32) {
        let old = self.tail;
        let n = &mut self.nodes[i as usize];
        n.prev = old;
        n.next = NIL;
        if old == NIL {
            self.head = i;
        } else {
            self.nodes[old as usize].next = i;
        }
        self.tail = i;
    }

    /// Unlinks node `i`, frees its cell and returns its key.
    fn release(&mut self, i: u32) -> K {
        self.unlink(i);
        self.free.push(i);
        self.nodes[i as usize].key.take().expect("a linked LRU node holds a key")
    }
}

impl<K: fmt::Debug> fmt::Debug for LruList<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A deferred update of an [`OpLogLru`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LruUpdate<K> {
    /// `touch(k)`.
    Touch(K),
    /// `remove(k)`.
    Remove(K),
}

impl<K> LruUpdate<K> {
    /// The key this update names.
    pub fn key(&self) -> &K {
        match self {
            LruUpdate::Touch(k) | LruUpdate::Remove(k) => k,
        }
    }
}

impl<K: Key> Update for LruUpdate<K> {
    type Target = Applied<LruList<K>>;

    fn exec(self, list: &mut Applied<LruList<K>>) {
        list.count_executed();
        match self {
            LruUpdate::Touch(k) => list.inner.touch(k),
            LruUpdate::Remove(k) => {
                list.inner.remove(&k);
            }
        }
    }

    fn absorb_local(self, log: &mut LocalLog<'_, Self>) -> Option<Self> {
        // The newest update of a key supersedes an older one still in this log (module
        // docs); only the last entry is examined, so the push stays O(1).
        if log.iter().next_back().is_some_and(|last| last.key() == self.key()) {
            log.remove_latest(|_| true);
        }
        Some(self)
    }
}

/// An LRU list (see the module docs for each operation).
pub trait ConcurrentLru<K>: Sync {
    /// `k` becomes the most recently used key.
    fn touch(&self, k: K);
    /// `k` leaves the list.
    fn remove(&self, k: K);
    /// Removes and returns the least recently used key.
    fn evict(&self) -> Option<K>;
    /// Every key, least recently used first.
    fn order(&self) -> Vec<K>;
    /// The representation the OpLog object behind this variant is in now (the adaptive
    /// policy's choice in a default domain); `None` for variants not built on OpLog.
    fn representation(&self) -> Option<oplog::Representation> {
        None
    }
}

/// The log kind of [`OpLogLru`] (to build its domain).
pub type Kind<K> = Ordered<LruUpdate<K>>;

/// The OpLog LRU list (`oplog`).
pub struct OpLogLru<K: Key> {
    list: OpLog<Kind<K>>,
}

impl<K: Key> OpLogLru<K> {
    /// An empty list whose logs live in `domain`.
    pub fn new(domain: &Arc<Domain<Kind<K>>>) -> Self {
        Self { list: OpLog::with_domain(domain, Applied::new(LruList::new())) }
    }

    /// Synchronizes and returns how many updates were executed on the list so far (the
    /// rest were absorbed).
    pub fn stats(&self) -> Stats {
        self.list.read(Applied::stats)
    }
}

impl<K: Key> Default for OpLogLru<K> {
    /// An empty list in the process-wide per-CPU domain.
    fn default() -> Self {
        Self::new(&Domain::global())
    }
}

impl<K: Key> fmt::Debug for OpLogLru<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpLogLru").field("list", &self.list).finish()
    }
}

impl<K: Key> ConcurrentLru<K> for OpLogLru<K> {
    fn representation(&self) -> Option<oplog::Representation> {
        Some(self.list.representation())
    }
    #[inline]
    fn touch(&self, k: K) {
        self.list.update(LruUpdate::Touch(k));
    }
    #[inline]
    fn remove(&self, k: K) {
        self.list.update(LruUpdate::Remove(k));
    }
    fn evict(&self) -> Option<K> {
        self.list.synchronize().inner.evict()
    }
    fn order(&self) -> Vec<K> {
        self.list.read(|l| l.inner.iter().cloned().collect())
    }
}

/// The [`LruList`] behind one lock (`mutex`).
#[derive(Debug)]
pub struct MutexLru<K> {
    list: Mutex<LruList<K>>,
}

impl<K: Key> MutexLru<K> {
    /// An empty list.
    pub fn new() -> Self {
        Self { list: Mutex::new(LruList::new(), "MutexLru.list") }
    }
}

impl<K: Key> Default for MutexLru<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key> ConcurrentLru<K> for MutexLru<K> {
    #[inline]
    fn touch(&self, k: K) {
        self.list.lock().touch(k);
    }
    #[inline]
    fn remove(&self, k: K) {
        self.list.lock().remove(&k);
    }
    fn evict(&self) -> Option<K> {
        self.list.lock().evict()
    }
    fn order(&self) -> Vec<K> {
        self.list.lock().iter().cloned().collect()
    }
}

/// Runs a model operation on any LRU list of `u64` keys (the
/// [`Concurrent`](oplog_model::Concurrent) implementations of every variant and of
/// `dyn ConcurrentLru<u64>`).
fn call<L: ConcurrentLru<u64> + ?Sized>(lru: &L, op: &LruOp) -> LruRet {
    match *op {
        LruOp::Touch(k) => lru.touch(k),
        LruOp::Remove(k) => lru.remove(k),
        LruOp::Evict => return LruRet::Evicted(lru.evict()),
    }
    LruRet::Done
}

crate::concurrent!(LruModel, call, dyn ConcurrentLru<u64>, [[] OpLogLru<u64>, [] MutexLru<u64>]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_matches_the_model() {
        use oplog_lincheck::testkit::Rng;
        use oplog_model::Model;
        let mut list = LruList::new();
        let mut model = LruModel.init();
        let mut rng = Rng::with_seed(0x2545_f491_4f6c_dd1d);
        for step in 0..20_000 {
            let k = rng.u64(..24);
            let op = match rng.u8(..10) {
                0 => LruOp::Evict,
                1 => LruOp::Remove(k),
                _ => LruOp::Touch(k),
            };
            let got = match op {
                LruOp::Touch(k) => {
                    list.touch(k);
                    LruRet::Done
                }
                LruOp::Remove(k) => {
                    list.remove(&k);
                    LruRet::Done
                }
                LruOp::Evict => LruRet::Evicted(list.evict()),
            };
            assert_eq!(got, LruModel.step(&mut model, &op), "step {step}: {op:?}");
            assert!(list.iter().eq(model.iter()), "step {step}");
            assert_eq!(list.len(), model.len());
        }
        assert!(list.nodes.len() <= 24, "cells are reused");
    }

    #[test]
    fn a_newer_update_of_the_last_key_replaces_it_in_the_log() {
        use oplog::LogKind;
        use oplog::log::QueueLog;
        let mut log = QueueLog::default();
        let mut stamp = 0;
        let mut push = |op: LruUpdate<u32>| {
            stamp += 1;
            Kind::<u32>::push(&mut log, op, stamp);
        };
        push(LruUpdate::Touch(1));
        push(LruUpdate::Touch(1));
        push(LruUpdate::Touch(2));
        push(LruUpdate::Remove(2));
        push(LruUpdate::Touch(1));
        let ops = log.ops().to_vec();
        assert_eq!(ops, vec![LruUpdate::Touch(1), LruUpdate::Remove(2), LruUpdate::Touch(1)]);
    }
}
