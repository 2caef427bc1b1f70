//! The singly linked list of 000 §7.3 (Figure 12): OpLog basic, OpLog global absorption,
//! OpLog local absorption, and the lock-free list they are compared with.
//!
//! 000 §7.3 measures how much each OpLog technique matters with a list that every thread
//! adds its own element to and removes it from again, once per "system call". The
//! variants, all implementing [`ConcurrentList`]:
//!
//! | type | id in `oplog-bench list` | what it does |
//! |---|---|---|
//! | [`BasicList`] | `oplog-basic` | ordered log, no absorption: batching only |
//! | [`GlobalAbsorbList`] | `oplog-global-absorb` | ordered log; an add and a remove of one element in a synchronize's batch cancel (000 §5.2 `try_absorb`) |
//! | [`LocalAbsorbList`] | `oplog-local-absorb` | unordered log (000 §7.3: "the operations do not have to be executed in order"); a remove cancels its add in the calling core's log, global absorption catches pairs split across cores |
//! | [`HarrisList`] | `lockfree` | the lock-free list of 000 §7.3 (its reference \[17\], Harris), with epoch reclamation |
//! | [`MutexList`] | `mutex` | the [`SeqList`] behind one lock: the "stock" design the other structures are compared with, so the commutativity checker can set a lock-based list beside the OpLog ones (000 §7.3 itself measures the lock-free list) |
//!
//! The sequential type is [`SeqList`], a singly linked list with set semantics; the OpLog
//! variants are [`LoggedSet`]s over it (see [`crate::logged_set`] for the absorption and
//! the identity rule the absorbing variants require).
//!
//! # Operations
//!
//! * `add(x)`: inserts `x`. Set semantics: adding a present element changes nothing
//!   (`BasicList`, `HarrisList`, `MutexList`); the absorbing variants require `x` to be
//!   absent.
//! * `remove(x)`: removes `x`; removing an absent element changes nothing (`BasicList`,
//!   `HarrisList`, `MutexList`); the absorbing variants require `x` to be present.
//! * `contains(x)`, `snapshot()`: reads. The OpLog variants synchronize first; the
//!   lock-free list's `snapshot` is a weakly consistent traversal (exact when no update
//!   runs concurrently).
//!
//! Updates return nothing: on the OpLog variants they are deferred (000 §4.1).
//!
//! The model is `oplog_model::set::SetModel` (`add`, `remove`, `contains`): the list holds
//! each element once and no operation observes the order of its nodes. `snapshot` is
//! checked against the model's state by the tests.

mod harris;

pub use harris::HarrisList;

use crate::logged_set::{AbsorbGlobal, AbsorbLocal, Absorption, Basic, LoggedSet, SetKind, SetLike};
use oplog_model::set::{SetModel, SetOp, SetRet};
use oplog_percore::primitive::Mutex;
use std::fmt;
use std::hash::Hash;

/// The sequential type: a singly linked list with set semantics (new elements go to the
/// front; `remove` unlinks the one node holding the element).
pub struct SeqList<T> {
    head: Link<T>,
    len: usize,
}

type Link<T> = Option<Box<ListNode<T>>>;

struct ListNode<T> {
    value: T,
    next: Link<T>,
}

impl<T> Default for SeqList<T> {
    fn default() -> Self {
        Self { head: None, len: 0 }
    }
}

impl<T: PartialEq> SeqList<T> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inserts `value` at the front unless it is present; returns whether it was inserted.
    pub fn insert(&mut self, value: T) -> bool {
        if self.contains(&value) {
            return false;
        }
        let next = self.head.take();
        self.head = Some(Box::new(ListNode { value, next }));
        self.len += 1;
        true
    }

    /// Unlinks the node holding `value`; returns whether there was one.
    pub fn remove(&mut self, value: &T) -> bool {
        let mut link = &mut self.head;
        loop {
            match link {
                None => return false,
                Some(node) if node.value == *value => {
                    *link = node.next.take();
                    self.len -= 1;
                    return true;
                }
                Some(node) => link = &mut node.next,
            }
        }
    }

    /// Whether `value` is present.
    pub fn contains(&self, value: &T) -> bool {
        self.iter().any(|v| v == value)
    }

    /// The elements, front first.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        std::iter::successors(self.head.as_deref(), |n| n.next.as_deref()).map(|n| &n.value)
    }
}

impl<T> Drop for SeqList<T> {
    fn drop(&mut self) {
        // Iteratively, so a long list cannot overflow the stack.
        let mut link = self.head.take();
        while let Some(mut node) = link {
            link = node.next.take();
        }
    }
}

impl<T: fmt::Debug + PartialEq> fmt::Debug for SeqList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Clone + Eq + Hash + fmt::Debug + Send + 'static> SetLike for SeqList<T> {
    type Item = T;
    fn insert(&mut self, item: T) -> bool {
        SeqList::insert(self, item)
    }
    fn remove(&mut self, item: &T) -> bool {
        SeqList::remove(self, item)
    }
}

/// Element types the list variants accept.
pub trait Element: Clone + Ord + Hash + fmt::Debug + Send + Sync + 'static {}
impl<T: Clone + Ord + Hash + fmt::Debug + Send + Sync + 'static> Element for T {}

/// "OpLog basic" (000 §7.3): ordered log, no absorption.
pub type BasicList<T> = LoggedSet<SeqList<T>, Basic, true>;
/// "OpLog global absorption" (000 §7.3): ordered log, pairs cancelled during synchronize.
pub type GlobalAbsorbList<T> = LoggedSet<SeqList<T>, AbsorbGlobal, true>;
/// "OpLog local absorption" (000 §7.3): unordered log, pairs cancelled on push (and during
/// synchronize when split across cores).
pub type LocalAbsorbList<T> = LoggedSet<SeqList<T>, AbsorbLocal, false>;

/// The log kind of [`BasicList`] (to build its domain).
pub type BasicKind<T> = SetKind<SeqList<T>, Basic, true>;
/// The log kind of [`GlobalAbsorbList`].
pub type GlobalAbsorbKind<T> = SetKind<SeqList<T>, AbsorbGlobal, true>;
/// The log kind of [`LocalAbsorbList`].
pub type LocalAbsorbKind<T> = SetKind<SeqList<T>, AbsorbLocal, false>;

/// A concurrent list with set semantics (see the module docs for each operation).
pub trait ConcurrentList<T>: Sync {
    /// Adds `x`.
    fn add(&self, x: T);
    /// Removes `x`.
    fn remove(&self, x: T);
    /// Whether `x` is in the list.
    fn contains(&self, x: &T) -> bool;
    /// Every element, in ascending order.
    fn snapshot(&self) -> Vec<T>;
    /// The representation the OpLog object behind this variant is in now (the adaptive
    /// policy's choice in a default domain); `None` for variants not built on OpLog.
    fn representation(&self) -> Option<oplog::Representation> {
        None
    }
}

impl<T: Element, A: Absorption, const ORDERED: bool> ConcurrentList<T> for LoggedSet<SeqList<T>, A, ORDERED> {
    fn representation(&self) -> Option<oplog::Representation> {
        Some(LoggedSet::representation(self))
    }
    #[inline]
    fn add(&self, x: T) {
        LoggedSet::add(self, x);
    }
    #[inline]
    fn remove(&self, x: T) {
        LoggedSet::remove(self, x);
    }
    fn contains(&self, x: &T) -> bool {
        self.read(|l| l.contains(x))
    }
    fn snapshot(&self) -> Vec<T> {
        let mut v: Vec<T> = self.read(|l| l.iter().cloned().collect());
        v.sort_unstable();
        v
    }
}

impl<T: Element> ConcurrentList<T> for HarrisList<T> {
    #[inline]
    fn add(&self, x: T) {
        self.insert(x);
    }
    #[inline]
    fn remove(&self, x: T) {
        HarrisList::remove(self, &x);
    }
    fn contains(&self, x: &T) -> bool {
        HarrisList::contains(self, x)
    }
    fn snapshot(&self) -> Vec<T> {
        let mut v = Vec::new();
        self.for_each(|x| v.push(x.clone()));
        v
    }
}

/// The [`SeqList`] behind one lock (`mutex`): every operation takes it, so any two
/// operations conflict on its cache line. Built on [`oplog_percore::primitive::Mutex`], so loom and
/// the commutativity checker's tracer see the lock.
pub struct MutexList<T> {
    list: Mutex<SeqList<T>>,
}

impl<T: Element> fmt::Debug for MutexList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutexList").field("list", &self.list).finish()
    }
}

impl<T: Element> MutexList<T> {
    /// An empty list.
    pub fn new() -> Self {
        Self { list: Mutex::new(SeqList::new(), "MutexList.list") }
    }
}

impl<T: Element> Default for MutexList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Element> ConcurrentList<T> for MutexList<T> {
    #[inline]
    fn add(&self, x: T) {
        self.list.lock().insert(x);
    }
    #[inline]
    fn remove(&self, x: T) {
        self.list.lock().remove(&x);
    }
    fn contains(&self, x: &T) -> bool {
        self.list.lock().contains(x)
    }
    fn snapshot(&self) -> Vec<T> {
        let mut v: Vec<T> = self.list.lock().iter().cloned().collect();
        v.sort_unstable();
        v
    }
}

/// Runs a model operation on any list of `u64` elements (the
/// [`Concurrent`](oplog_model::Concurrent) implementations of every variant and of
/// `dyn ConcurrentList<u64>`).
fn call<L: ConcurrentList<u64> + ?Sized>(list: &L, op: &SetOp) -> SetRet {
    match *op {
        SetOp::Add(x) => list.add(x),
        SetOp::Remove(x) => list.remove(x),
        SetOp::Contains(x) => return SetRet::Present(list.contains(&x)),
    }
    SetRet::Done
}

crate::concurrent!(
    SetModel,
    call,
    dyn ConcurrentList<u64>,
    [[A: Absorption, const O: bool] LoggedSet<SeqList<u64>, A, O>, [] HarrisList<u64>, [] MutexList<u64>]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_list_is_a_set() {
        let mut l = SeqList::new();
        assert!(l.insert(1));
        assert!(l.insert(2));
        assert!(!l.insert(1));
        assert_eq!(l.iter().copied().collect::<Vec<_>>(), vec![2, 1]);
        assert!(l.remove(&1));
        assert!(!l.remove(&1));
        assert!(l.remove(&2));
        assert!(l.is_empty());
    }

    #[test]
    fn the_mutex_list_matches_the_model_and_keeps_concurrent_updates() {
        use oplog_lincheck::testkit::Rng;
        use oplog_model::{Concurrent, Model};
        let list = MutexList::new();
        let mut model = SetModel.init();
        let mut rng = Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        for step in 0..2_000 {
            let x = rng.u64(..16);
            let op = match rng.u8(..7) {
                0..2 => SetOp::Contains(x),
                2..4 => SetOp::Remove(x),
                _ => SetOp::Add(x),
            };
            assert_eq!(list.call(&op), SetModel.step(&mut model, &op), "step {step}: {op:?}");
            assert!(list.snapshot().iter().eq(model.iter()), "step {step}: snapshot");
        }
        // Four threads add and remove their own elements; each keeps its last one.
        let list = MutexList::new();
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let list = &list;
                scope.spawn(move || {
                    for i in 0..500 {
                        list.add(t * 1000 + i);
                        if i % 2 == 0 {
                            list.remove(t * 1000 + i);
                        }
                    }
                });
            }
        });
        let expected: Vec<u64> = (0..4).flat_map(|t| (1..500).step_by(2).map(move |i| t * 1000 + i)).collect();
        assert_eq!(list.snapshot(), expected);
    }

    #[test]
    #[cfg_attr(miri, ignore)] // safe code, and 200,000 nodes would take Miri many minutes
    fn dropping_a_long_list_does_not_overflow_the_stack() {
        let mut l = SeqList::new();
        for i in 0..200_000u32 {
            // Push directly: `insert` scans for duplicates.
            let next = l.head.take();
            l.head = Some(Box::new(ListNode { value: i, next }));
        }
        drop(l);
    }
}
