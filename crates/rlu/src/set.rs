//! The texts' benchmarks on RLU: a sorted linked list ([`RluList`]) and a hash set whose
//! buckets are such lists ([`RluHashSet`]; 003 §6.4: "the hash table uses one linked list
//! per bucket").
//!
//! The list is RLU's own example (the RLU paper's linked list, in the style of RCU lists):
//!
//! * `contains` walks the list in a read section, never waiting and never retrying;
//! * `insert` finds the predecessor and locks it (any writer that removes the successor, or
//!   inserts after the same node, or removes the predecessor itself, must lock it too, so
//!   they conflict), allocates the node and links it into the predecessor's copy;
//! * `remove` locks the predecessor and the node, links the predecessor's copy past the
//!   node, and frees the node, which RLU does once the commit's quiescence period is over
//!   (no section that could still hold the node's address is running).
//!
//! Every operation on one key is one section: linearizable at the section's start (read)
//! or commit (write), which `tests/lincheck.rs` checks against `oplog_model::set`.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hash};

use ordo::Clock;

use crate::domain::{RegisterError, Rlu};
use crate::handle::{Handle, Stats};
use crate::object::{Link, RluObject, Value};
use crate::section::{Conflict, Section};

/// A list node. A list's head is an object of its own type ([`Head`]), so that a node holds
/// its key as it is (no `Option` for a keyless head): with `u64` keys a node object is 32
/// bytes (the copy word, the domain, the key, the link) instead of 40. A lookup walks about
/// half a bucket, a chain of dependent loads whose time is its cache misses: in glibc's
/// 48-byte chunks (16-byte aligned) a 32-byte node spans two cache lines one time in four,
/// a 40-byte one two times in four. [`find`] also reads each node once, not twice.
#[derive(Clone)]
struct Node<K> {
    key: K,
    next: Link<Node<K>>,
}

type Object<K> = RluObject<Node<K>>;

/// A list's head: the link to its first node.
type Head<K> = RluObject<Link<Node<K>>>;

/// The object whose `next` link a walk stands on: the head, or a node.
enum Prev<'a, K> {
    Head(&'a Head<K>),
    Node(&'a Object<K>),
}

impl<K> Clone for Prev<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Prev<'_, K> {}

impl<'a, K: Value> Prev<'a, K> {
    /// Its link in this section's copy (locking it).
    fn lock_next<'s, C: Clock>(self, s: &'s mut Section<'_, C>) -> Result<&'s mut Link<Node<K>>, Conflict>
    where
        'a: 's,
    {
        match self {
            Prev::Head(head) => s.lock(head),
            Prev::Node(node) => Ok(&mut s.lock(node)?.next),
        }
    }
}

/// Where `key` goes in the list from `head`: its predecessor (the last node with a smaller
/// key, or the head), and the next node with whether it holds `key`.
fn find<'a, 's: 'a, K: Ord + Value, C: Clock>(
    s: &Section<'s, C>,
    head: &'a Head<K>,
    key: &K,
) -> (Prev<'a, K>, Option<(&'a Object<K>, bool)>) {
    let mut prev = Prev::Head(head);
    let mut next = *s.get(head);
    loop {
        // SAFETY: read in this section from a node of the list; nodes are freed only with
        // `Section::free` after being unlinked.
        let Some(node) = (unsafe { s.deref(next) }) else {
            return (prev, None);
        };
        // One dereference per node: its key and its link come from the same version.
        let value = s.get(node);
        match value.key.cmp(key) {
            std::cmp::Ordering::Less => {
                prev = Prev::Node(node);
                next = value.next;
            }
            std::cmp::Ordering::Equal => return (prev, Some((node, true))),
            std::cmp::Ordering::Greater => return (prev, Some((node, false))),
        }
    }
}

fn insert<K: Ord + Value, C: Clock>(s: &mut Section<'_, C>, head: &Head<K>, key: &K) -> Result<bool, Conflict> {
    let (prev, next) = find(s, head, key);
    if let Some((_, true)) = next {
        return Ok(false);
    }
    let after = *prev.lock_next(s)?;
    debug_assert!(after == next.map_or(Link::null(), |(n, _)| Link::from_raw(std::ptr::from_ref(n).cast_mut())));
    let node = s.alloc(Node { key: key.clone(), next: after });
    *prev.lock_next(s)? = node;
    Ok(true)
}

fn remove<K: Ord + Value, C: Clock>(s: &mut Section<'_, C>, head: &Head<K>, key: &K) -> Result<bool, Conflict> {
    let (prev, Some((node, true))) = find(s, head, key) else {
        return Ok(false);
    };
    let after = s.lock(node)?.next;
    let unlinked = std::mem::replace(prev.lock_next(s)?, after);
    debug_assert!(unlinked.points_to(node));
    // SAFETY: allocated by `insert` with `Section::alloc` (`unlinked` is the link it
    // returned, copied through the list); unlinked just above.
    unsafe { s.free(unlinked)? };
    Ok(true)
}

fn contains<K: Ord + Value, C: Clock>(s: &Section<'_, C>, head: &Head<K>, key: &K) -> bool {
    matches!(find(s, head, key), (_, Some((_, true))))
}

/// Appends the keys of the list from `head`, in order.
fn collect<K: Value, C: Clock>(s: &Section<'_, C>, head: &Head<K>, out: &mut Vec<K>) {
    let mut next = *s.get(head);
    // SAFETY: as in `find`.
    while let Some(node) = unsafe { s.deref(next) } {
        let node = s.get(node);
        out.push(node.key.clone());
        next = node.next;
    }
}

/// Frees every node of the list from `head` (no section can be running).
fn free_list<K: Value>(head: &mut Head<K>) {
    let mut next = std::mem::take(head.get_mut());
    while !next.is_null() {
        // SAFETY: every node was allocated by `Section::alloc` as a `Box` and is reachable
        // only from here; the caller holds the structure exclusively.
        let node = unsafe { Box::from_raw(next.as_ptr()) };
        next = node.into_inner().next;
    }
}

/// A set of keys in one sorted linked list on RLU.
pub struct RluList<K: Value, C: Clock> {
    rlu: Rlu<C>,
    head: [Head<K>; 1],
}

impl<K: Ord + Value, C: Clock> RluList<K, C> {
    /// An empty list in a new domain on `clock`.
    pub fn new(clock: C) -> Self {
        Self::with_domain(Rlu::new(clock))
    }

    /// An empty list in `rlu` (for a domain with another capacity).
    pub fn with_domain(rlu: Rlu<C>) -> Self {
        let head = [rlu.object(Link::null())];
        Self { rlu, head }
    }

    /// The domain.
    pub fn rlu(&self) -> &Rlu<C> {
        &self.rlu
    }

    /// A handle for one thread.
    ///
    /// # Errors
    /// [`RegisterError`] when the domain's thread slots are all taken.
    pub fn handle(&self) -> Result<SetHandle<'_, K, C, ()>, RegisterError> {
        Ok(SetHandle { handle: self.rlu.register()?, heads: &self.head, hasher: &(), bucket: |_, _| 0 })
    }
}

impl<K: Value, C: Clock> Drop for RluList<K, C> {
    fn drop(&mut self) {
        free_list(&mut self.head[0]);
    }
}

impl<K: Value, C: Clock> fmt::Debug for RluList<K, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RluList").field("rlu", &self.rlu).finish_non_exhaustive()
    }
}

/// A hash set on RLU: a fixed number of buckets, each a sorted linked list.
pub struct RluHashSet<K: Value, C: Clock, S = RandomState> {
    rlu: Rlu<C>,
    heads: Box<[Head<K>]>,
    hasher: S,
}

/// A hash set was asked for with no bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoBuckets;

impl fmt::Display for NoBuckets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an RLU hash set needs at least one bucket")
    }
}

impl std::error::Error for NoBuckets {}

impl<K: Hash + Ord + Value, C: Clock> RluHashSet<K, C> {
    /// An empty set of `buckets` buckets in a new domain on `clock`.
    ///
    /// # Errors
    /// [`NoBuckets`] if `buckets` is 0.
    pub fn new(clock: C, buckets: usize) -> Result<Self, NoBuckets> {
        Self::with_domain(Rlu::new(clock), buckets, RandomState::new())
    }
}

impl<K: Hash + Ord + Value, C: Clock, S: BuildHasher> RluHashSet<K, C, S> {
    /// An empty set of `buckets` buckets in `rlu`, hashing with `hasher`.
    ///
    /// # Errors
    /// [`NoBuckets`] if `buckets` is 0.
    pub fn with_domain(rlu: Rlu<C>, buckets: usize, hasher: S) -> Result<Self, NoBuckets> {
        if buckets == 0 {
            return Err(NoBuckets);
        }
        let heads = (0..buckets).map(|_| rlu.object(Link::null())).collect();
        Ok(Self { rlu, heads, hasher })
    }

    /// The domain.
    pub fn rlu(&self) -> &Rlu<C> {
        &self.rlu
    }

    /// The number of buckets.
    pub fn buckets(&self) -> usize {
        self.heads.len()
    }

    /// A handle for one thread.
    ///
    /// # Errors
    /// [`RegisterError`] when the domain's thread slots are all taken.
    pub fn handle(&self) -> Result<SetHandle<'_, K, C, S>, RegisterError> {
        Ok(SetHandle {
            handle: self.rlu.register()?,
            heads: &self.heads,
            hasher: &self.hasher,
            bucket: |hasher, key| hasher.hash_one(key),
        })
    }
}

impl<K: Value, C: Clock, S> Drop for RluHashSet<K, C, S> {
    fn drop(&mut self) {
        self.heads.iter_mut().for_each(free_list);
    }
}

impl<K: Value, C: Clock, S> fmt::Debug for RluHashSet<K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RluHashSet").field("rlu", &self.rlu).field("buckets", &self.heads.len()).finish_non_exhaustive()
    }
}

/// One thread's access to an [`RluList`] or an [`RluHashSet`]: each operation is one RLU
/// section.
pub struct SetHandle<'a, K: Value, C: Clock, S> {
    handle: Handle<'a, C>,
    heads: &'a [Head<K>],
    hasher: &'a S,
    /// The hash of a key (the list has one bucket and never calls it).
    bucket: fn(&S, &K) -> u64,
}

impl<'a, K: Ord + Value, C: Clock, S> SetHandle<'a, K, C, S> {
    fn head(&self, key: &K) -> &'a Head<K> {
        let n = self.heads.len();
        if n == 1 { &self.heads[0] } else { &self.heads[((self.bucket)(self.hasher, key) % n as u64) as usize] }
    }

    /// Adds `key`; whether it was absent.
    pub fn insert(&mut self, key: K) -> bool {
        let head = self.head(&key);
        self.handle.write(|s| insert(s, head, &key))
    }

    /// Removes `key`; whether it was present.
    pub fn remove(&mut self, key: &K) -> bool {
        let head = self.head(key);
        self.handle.write(|s| remove(s, head, key))
    }

    /// Whether `key` is present.
    pub fn contains(&mut self, key: &K) -> bool {
        let head = self.head(key);
        self.handle.read(|s| contains(s, head, key))
    }

    /// Every key, sorted, as of one instant (one read section over every bucket).
    pub fn keys(&mut self) -> Vec<K> {
        let heads = self.heads;
        let mut keys = self.handle.read(|s| {
            let mut keys = Vec::new();
            heads.iter().for_each(|head| collect(s, head, &mut keys));
            keys
        });
        keys.sort_unstable();
        keys
    }

    /// What this thread's RLU handle has done (sections, commits, aborts, timestamps).
    pub fn stats(&self) -> Stats {
        self.handle.stats()
    }
}

impl<K: Value, C: Clock, S> fmt::Debug for SetHandle<'_, K, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetHandle").field("handle", &self.handle).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ordo::LogicalClock;

    #[test]
    fn list_keeps_its_keys_sorted_and_unique() {
        let list = RluList::new(LogicalClock::new());
        let mut h = list.handle().unwrap();
        for k in [5u64, 1, 9, 5, 3] {
            h.insert(k);
        }
        assert_eq!(h.keys(), [1, 3, 5, 9]);
        assert!(h.remove(&5) && !h.remove(&5) && !h.remove(&4));
        assert!(h.contains(&9) && !h.contains(&5));
        assert_eq!(h.keys(), [1, 3, 9]);
        let s = h.stats();
        assert_eq!((s.commits, s.aborts), (5, 0), "{s:?}");
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_u64_node_is_four_words() {
        // The copy word, the domain, the key, the link: a node of a `u64` set is 32 bytes,
        // so its hot part sits on one cache line unless its heap chunk straddles two.
        assert_eq!(std::mem::size_of::<Object<u64>>(), 32);
        assert_eq!(std::mem::size_of::<Head<u64>>(), 24);
    }

    #[test]
    fn hash_set_refuses_zero_buckets() {
        let err = RluHashSet::<u64, _>::new(LogicalClock::new(), 0).unwrap_err();
        assert_eq!(err.to_string(), "an RLU hash set needs at least one bucket");
    }

    #[test]
    fn hash_set_matches_a_sequential_set() {
        let set = RluHashSet::new(LogicalClock::new(), 7).unwrap();
        let mut h = set.handle().unwrap();
        let mut model = std::collections::BTreeSet::new();
        let mut x = 1u64;
        for _ in 0..if cfg!(miri) { 60 } else { 2000 } {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = (x >> 33) % 40;
            match (x >> 20) % 3 {
                0 => assert_eq!(h.insert(key), model.insert(key)),
                1 => assert_eq!(h.remove(&key), model.remove(&key)),
                _ => assert_eq!(h.contains(&key), model.contains(&key)),
            }
        }
        assert_eq!(h.keys(), model.into_iter().collect::<Vec<_>>());
    }
}
