//! The `rwlock` baseline of the `rlu` experiment: the RLU hash set's own structure as a
//! sequential set under one readers-writer lock, so that the comparison is like for like.
//!
//! [`LockedHashSet`] has what [`ordo_rlu::RluHashSet`] has: a fixed number of buckets, a key's
//! bucket `RandomState::hash_one(key) % buckets`, and in each bucket a singly linked list of
//! boxed nodes sorted by key, which `contains`, `insert` and `remove` walk from the head to
//! the first key not smaller than theirs. What differs is only the synchronization: one
//! `std::sync::RwLock` around the whole table (lookups share it, updates take it alone), where
//! RLU's readers take no lock and its writers lock the nodes they change.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{PoisonError, RwLock};

/// A link to the rest of a bucket's list.
type Link = Option<Box<Node>>;

/// A list node.
struct Node {
    key: u64,
    next: Link,
}

/// The buckets and the hasher that picks one.
struct Buckets {
    heads: Box<[Link]>,
    hasher: RandomState,
}

impl Buckets {
    fn head(&self, key: u64) -> &Link {
        &self.heads[self.bucket(key)]
    }

    fn head_mut(&mut self, key: u64) -> &mut Link {
        let b = self.bucket(key);
        &mut self.heads[b]
    }

    fn bucket(&self, key: u64) -> usize {
        (self.hasher.hash_one(key) % self.heads.len() as u64) as usize
    }
}

/// The link at which `key` is or would be: the first whose node's key is not smaller.
fn position(mut link: &mut Link, key: u64) -> &mut Link {
    while link.as_ref().is_some_and(|node| node.key < key) {
        link = &mut link.as_mut().expect("checked by the loop condition").next;
    }
    link
}

/// A hash set of `u64` keys: sorted linked lists in a fixed number of buckets, under one
/// readers-writer lock.
pub struct LockedHashSet {
    inner: RwLock<Buckets>,
}

impl LockedHashSet {
    /// An empty set of `buckets` buckets (at least one).
    pub fn new(buckets: usize) -> Self {
        assert!(buckets > 0, "a hash set needs at least one bucket");
        let heads = (0..buckets).map(|_| None).collect();
        Self { inner: RwLock::new(Buckets { heads, hasher: RandomState::new() }) }
    }

    /// Adds `key`; whether it was absent.
    pub fn insert(&self, key: u64) -> bool {
        let mut buckets = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        let link = position(buckets.head_mut(key), key);
        if link.as_ref().is_some_and(|node| node.key == key) {
            return false;
        }
        let next = link.take();
        *link = Some(Box::new(Node { key, next }));
        true
    }

    /// Removes `key`; whether it was present.
    pub fn remove(&self, key: u64) -> bool {
        let mut buckets = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        let link = position(buckets.head_mut(key), key);
        match link.take() {
            Some(node) if node.key == key => {
                *link = node.next;
                true
            }
            other => {
                *link = other;
                false
            }
        }
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: u64) -> bool {
        let buckets = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        let mut next = buckets.head(key).as_deref();
        while let Some(node) = next {
            if node.key >= key {
                return node.key == key;
            }
            next = node.next.as_deref();
        }
        false
    }

    /// Every key, sorted.
    pub fn keys(&self) -> Vec<u64> {
        let buckets = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        let mut keys = Vec::new();
        for head in &buckets.heads {
            let mut next = head.as_deref();
            while let Some(node) = next {
                keys.push(node.key);
                next = node.next.as_deref();
            }
        }
        keys.sort_unstable();
        keys
    }
}

impl Drop for LockedHashSet {
    /// Frees the lists node by node (a recursive drop of a long list could overflow the stack).
    fn drop(&mut self) {
        let buckets = self.inner.get_mut().unwrap_or_else(PoisonError::into_inner);
        for head in &mut buckets.heads {
            let mut next = head.take();
            while let Some(mut node) = next {
                next = node.next.take();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn matches_a_sequential_set_and_keeps_each_bucket_sorted() {
        let set = LockedHashSet::new(7);
        let mut model = BTreeSet::new();
        let mut x = 1u64;
        for _ in 0..3000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = (x >> 33) % 60;
            match (x >> 20) % 3 {
                0 => assert_eq!(set.insert(key), model.insert(key), "insert {key}"),
                1 => assert_eq!(set.remove(key), model.remove(&key), "remove {key}"),
                _ => assert_eq!(set.contains(key), model.contains(&key), "contains {key}"),
            }
        }
        assert_eq!(set.keys(), model.iter().copied().collect::<Vec<_>>());
        let buckets = set.inner.read().unwrap();
        for head in &buckets.heads {
            let mut keys = Vec::new();
            let mut next = head.as_deref();
            while let Some(node) = next {
                keys.push(node.key);
                next = node.next.as_deref();
            }
            assert!(keys.is_sorted_by(|a, b| a < b), "bucket {keys:?}");
        }
    }

    #[test]
    #[should_panic(expected = "a hash set needs at least one bucket")]
    fn refuses_zero_buckets() {
        LockedHashSet::new(0);
    }
}
