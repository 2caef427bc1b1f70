//! The lock-free baseline of 000 §7.3 (its reference \[17\]: Harris, "A pragmatic implementation of
//! non-blocking linked-lists"), with epoch-based reclamation.
//!
//! A sorted singly linked list of unique keys. Deletion is two steps: a remove first marks
//! the node (sets the low tag bit of its `next` pointer, so no insert can link after it),
//! which is the moment the key leaves the set, then unlinks it with a compare-and-swap on
//! its predecessor. Any thread that meets a marked node while searching unlinks it too
//! (Michael's variant), so a search never passes more than it must. A node is freed by the
//! thread whose compare-and-swap unlinked it, through crossbeam-epoch's deferred
//! destruction: it is dropped once every thread that could still hold a reference to it
//! has unpinned.
//!
//! Every operation pins the epoch, searches from the head, and writes shared lines: the
//! predecessor's `next` on insert and unlink, the node's own `next` on mark. That is the
//! contention 000 §3 measures on the "lock-free" lines.

use crossbeam_epoch::{self as epoch, Atomic, Guard, Owned, Shared};
use std::fmt;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

struct Node<T> {
    key: T,
    /// Tag bit 1: this node is logically deleted.
    next: Atomic<Node<T>>,
}

/// A lock-free sorted set as a singly linked list (Harris, Michael).
pub struct HarrisList<T> {
    head: Atomic<Node<T>>,
}

impl<T> Default for HarrisList<T> {
    fn default() -> Self {
        Self { head: Atomic::null() }
    }
}

impl<T: Ord + Send + Sync + 'static> HarrisList<T> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Finds the first unmarked node whose key is `>= key`, unlinking marked nodes on the
    /// way. Returns the link that points to it (in an unmarked node, or the head) and the
    /// node (null at the end).
    fn find<'g>(&'g self, key: &T, guard: &'g Guard) -> (&'g Atomic<Node<T>>, Shared<'g, Node<T>>) {
        'retry: loop {
            let mut prev = &self.head;
            let mut curr = prev.load(Acquire, guard);
            loop {
                // SAFETY: `curr` was loaded from a link reachable while `guard` pins the
                // epoch; nodes are only freed after being unlinked and a grace period.
                let Some(node) = (unsafe { curr.as_ref() }) else {
                    return (prev, curr);
                };
                let next = node.next.load(Acquire, guard);
                if next.tag() == 1 {
                    // `node` is deleted: unlink it. Fails if `prev` changed or was marked.
                    match prev.compare_exchange(curr, next.with_tag(0), AcqRel, Acquire, guard) {
                        Ok(_) => {
                            // SAFETY: this compare-and-swap unlinked `node`, so no new
                            // reference to it can be made; it is freed after every thread
                            // pinned now has unpinned.
                            unsafe { guard.defer_destroy(curr) };
                            curr = next.with_tag(0);
                            continue;
                        }
                        Err(_) => continue 'retry,
                    }
                }
                if node.key >= *key {
                    return (prev, curr);
                }
                prev = &node.next;
                curr = next;
            }
        }
    }

    /// Inserts `key`; false if it was present.
    pub fn insert(&self, key: T) -> bool {
        let guard = &epoch::pin();
        let mut new = Owned::new(Node { key, next: Atomic::null() });
        loop {
            let (prev, curr) = self.find(&new.key, guard);
            // SAFETY: as in `find`.
            if let Some(node) = unsafe { curr.as_ref() }
                && node.key == new.key
            {
                return false;
            }
            new.next.store(curr, Relaxed);
            match prev.compare_exchange(curr, new, AcqRel, Acquire, guard) {
                Ok(_) => return true,
                Err(e) => new = e.new,
            }
        }
    }

    /// Removes `key`; false if it was absent.
    pub fn remove(&self, key: &T) -> bool {
        let guard = &epoch::pin();
        loop {
            let (prev, curr) = self.find(key, guard);
            // SAFETY: as in `find`.
            let Some(node) = (unsafe { curr.as_ref() }) else {
                return false;
            };
            if node.key != *key {
                return false;
            }
            let next = node.next.load(Acquire, guard);
            if next.tag() == 1 {
                // Another remove marked it first; `find` will unlink it.
                continue;
            }
            // The linearization point: marking takes the key out of the set.
            if node.next.compare_exchange(next, next.with_tag(1), AcqRel, Acquire, guard).is_err() {
                continue;
            }
            match prev.compare_exchange(curr, next, AcqRel, Acquire, guard) {
                // SAFETY: unlinked by this compare-and-swap (see `find`).
                Ok(_) => unsafe { guard.defer_destroy(curr) },
                // Someone changed `prev`: a search unlinks the marked node.
                Err(_) => {
                    self.find(key, guard);
                }
            }
            return true;
        }
    }

    /// Whether `key` is present (wait-free: marks are skipped, not unlinked).
    pub fn contains(&self, key: &T) -> bool {
        let guard = &epoch::pin();
        let mut curr = self.head.load(Acquire, guard);
        // SAFETY: as in `find`.
        while let Some(node) = unsafe { curr.as_ref() } {
            let next = node.next.load(Acquire, guard);
            if node.key >= *key {
                return node.key == *key && next.tag() == 0;
            }
            curr = next;
        }
        false
    }

    /// Calls `f` on every key present during the traversal, in order (a weakly consistent
    /// iteration, like the texts' lock-free rmap traversal).
    pub fn for_each(&self, mut f: impl FnMut(&T)) {
        let guard = &epoch::pin();
        let mut curr = self.head.load(Acquire, guard);
        // SAFETY: as in `find`.
        while let Some(node) = unsafe { curr.as_ref() } {
            let next = node.next.load(Acquire, guard);
            if next.tag() == 0 {
                f(&node.key);
            }
            curr = next.with_tag(0);
        }
    }
}

impl<T> Drop for HarrisList<T> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no other thread can reach the list, so its nodes can be
        // walked and freed without pinning.
        let guard = unsafe { epoch::unprotected() };
        let mut curr = self.head.load(Relaxed, guard);
        while !curr.is_null() {
            // SAFETY: every node still linked is owned by the list and freed exactly once
            // here (unlinked ones were handed to the collector and are no longer linked).
            let node = unsafe { curr.into_owned() };
            curr = node.next.load(Relaxed, guard).with_tag(0);
        }
    }
}

impl<T: Ord + Send + Sync + fmt::Debug + 'static> fmt::Debug for HarrisList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut set = f.debug_set();
        self.for_each(|k| {
            set.entry(k);
        });
        set.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_set_semantics() {
        let l = HarrisList::new();
        assert!(l.insert(3));
        assert!(l.insert(1));
        assert!(!l.insert(3));
        assert!(l.insert(2));
        assert!(l.contains(&2));
        assert!(l.remove(&2));
        assert!(!l.remove(&2));
        assert!(!l.contains(&2));
        let mut keys = Vec::new();
        l.for_each(|k| keys.push(*k));
        assert_eq!(keys, vec![1, 3]);
    }

    #[test]
    fn concurrent_inserts_and_removes_of_shared_keys_balance() {
        // Small enough for Miri, which checks the epoch-protected accesses.
        use std::sync::atomic::{AtomicI64, Ordering};
        let per_thread = if cfg!(miri) { 60 } else { 20_000 };
        let list = HarrisList::new();
        let net: Vec<AtomicI64> = (0..4).map(|_| AtomicI64::new(0)).collect();
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let (list, net) = (&list, &net);
                s.spawn(move || {
                    let mut x = t + 1;
                    for _ in 0..per_thread {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let k = (x >> 33) % 4;
                        if x & (1 << 20) == 0 {
                            if list.insert(k) {
                                net[k as usize].fetch_add(1, Ordering::SeqCst);
                            }
                        } else if list.remove(&k) {
                            net[k as usize].fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        for (k, n) in net.iter().enumerate() {
            let n = n.load(Ordering::SeqCst);
            assert!(n == 0 || n == 1, "key {k}: net {n}");
            assert_eq!(list.contains(&(k as u64)), n == 1);
        }
    }
}
