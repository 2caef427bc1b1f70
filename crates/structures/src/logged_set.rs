//! An OpLog over a set-like sequential type, with the texts' absorption.
//!
//! The rmap (000 §4.3), the list of 000 §7.3 and the open-object list (000 §7.4) share one
//! shape: their deferrable updates are `add(item)` and `remove(item)` on an underlying set
//! (an interval tree, a singly linked list, a hash set), and their reads see the set after
//! every update. [`LoggedSet`] is that OpLog object, generic over the sequential type
//! ([`SetLike`]), over how much absorption it does ([`Absorption`]), and over whether its
//! log is ordered by timestamp.
//!
//! # Absorption (000 §4.2, §5.2, §7.3)
//!
//! * **Local** ([`AbsorbLocal`]): when a `remove(x)` is pushed and this core's log still
//!   holds the `add(x)`, both go: the add is taken out of the log and the remove is not
//!   logged (000 §5.2: "push would remove the logged add instead of logging the rem"). A
//!   thread that adds and removes its own items never grows its log, never synchronizes,
//!   and so scales linearly (000 §7.3, "OpLog local absorption").
//! * **Global** ([`AbsorbGlobal`], and [`AbsorbLocal`] too): during synchronize, before any
//!   operation runs, an `add(x)` and a `remove(x)` that are both in the batch cancel
//!   (000 §5.2 `try_absorb`: "if the operation is a RemOp and OpLog has not yet executed
//!   the AddOp ... removes both operations"). This catches pairs split across cores (the
//!   parent maps, the child unmaps). It counts, per item, adds minus removes in the batch;
//!   an item whose count is 0 loses all its operations, one whose count is ±1 keeps only
//!   its last operation of that sign.
//!
//! Both rely on the **identity rule** (crate docs): the updates naming one item alternate
//! in real time, `add, remove, add, ...`. Then an add and a remove of the same item that
//! are both still in the logs have no effect together, whatever their position among the
//! other items' operations (those commute with them), so cancelling them changes nothing a
//! read can observe; and a read in between would have drained them from the logs first.
//! Debug builds check the rule when the operations are applied: an absorbing set panics at
//! the synchronize that applies an add of a present item or a remove of an absent one.
//!
//! # Ordered or not
//!
//! With `ORDERED = true` (the texts' default) each update is timestamped and the logs are
//! merged in timestamp order. Under the identity rule the order is not needed (000 §7.3:
//! "the operations do not have to be executed in order"): updates of different items
//! commute, and the only updates of one item that can meet in one batch are cancelled by
//! global absorption whatever their order, because a synchronize's batch is a consistent
//! cut (an add that completed before its remove began is in the same batch as the remove,
//! or an earlier one). So `ORDERED = false` skips the clock on every update, and requires
//! global absorption, which [`LoggedSet::with_domain`] checks at compile time.
//!
//! # Counting
//!
//! The instance counts the operations it executed and the ones global absorption
//! cancelled ([`Stats`]); with the number of updates issued, that tells how many local
//! absorption cancelled. Tests use it to prove pairs were absorbed.

pub use crate::applied::{Applied, Stats};

use oplog::log::{LocalLog, Queue};
use oplog::{Domain, OpLog, Update};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::Arc;

/// A sequential set whose updates [`LoggedSet`] logs.
pub trait SetLike: Send + 'static {
    /// The items: compared for absorption, hashed for global absorption.
    type Item: Clone + Eq + Hash + fmt::Debug + Send + 'static;

    /// Inserts `item`; false if it was already present (nothing changes).
    fn insert(&mut self, item: Self::Item) -> bool;

    /// Removes `item`; false if it was absent.
    fn remove(&mut self, item: &Self::Item) -> bool;
}

impl<T: Clone + Eq + Hash + fmt::Debug + Send + 'static> SetLike for HashSet<T> {
    type Item = T;
    fn insert(&mut self, item: T) -> bool {
        HashSet::insert(self, item)
    }
    fn remove(&mut self, item: &T) -> bool {
        HashSet::remove(self, item)
    }
}

/// How much absorption a [`LoggedSet`] does (a type-level switch; see the module docs).
pub trait Absorption: Send + Sync + 'static {
    /// Whether a remove cancels its add in the calling core's log.
    const LOCAL: bool;
    /// Whether an add and a remove of one item in a synchronize's batch cancel.
    const GLOBAL: bool;
}

/// No absorption: every update is executed ("OpLog basic", 000 §7.3). Set semantics for
/// any sequence of updates; no identity rule.
#[derive(Debug)]
pub enum Basic {}

/// Global absorption only ("OpLog global absorption", 000 §7.3).
#[derive(Debug)]
pub enum AbsorbGlobal {}

/// Local absorption, plus global absorption for pairs split across cores ("OpLog local
/// absorption", 000 §7.3; the rmap of 000 §5.2).
#[derive(Debug)]
pub enum AbsorbLocal {}

impl Absorption for Basic {
    const LOCAL: bool = false;
    const GLOBAL: bool = false;
}

impl Absorption for AbsorbGlobal {
    const LOCAL: bool = false;
    const GLOBAL: bool = true;
}

impl Absorption for AbsorbLocal {
    const LOCAL: bool = true;
    const GLOBAL: bool = true;
}

/// Which update a [`SetUpdate`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Change {
    /// `add(item)`.
    Add,
    /// `remove(item)`.
    Remove,
}

/// One logged update of a [`LoggedSet`]: the `AddOp` / `RemOp` of 000 Figure 7.
pub struct SetUpdate<C: SetLike, A> {
    change: Change,
    item: C::Item,
    absorption: PhantomData<fn() -> A>,
}

impl<C: SetLike, A> SetUpdate<C, A> {
    /// The update `change(item)`.
    pub fn new(change: Change, item: C::Item) -> Self {
        Self { change, item, absorption: PhantomData }
    }

    /// Which update this is.
    pub fn change(&self) -> Change {
        self.change
    }

    /// The item it names.
    pub fn item(&self) -> &C::Item {
        &self.item
    }
}

impl<C: SetLike, A> fmt::Debug for SetUpdate<C, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}({:?})", self.change, self.item)
    }
}

impl<C: SetLike, A: Absorption> Update for SetUpdate<C, A> {
    type Target = Applied<C>;

    fn exec(self, target: &mut Applied<C>) {
        target.count_executed();
        let absorbing = A::LOCAL || A::GLOBAL;
        let shown = (cfg!(debug_assertions) && absorbing).then(|| self.item.clone());
        let changed = match self.change {
            Change::Add => target.inner.insert(self.item),
            Change::Remove => target.inner.remove(&self.item),
        };
        if let Some(item) = shown {
            assert!(
                changed,
                "identity rule violated: {:?}({item:?}) found the item {} (an absorbing OpLog set needs \
                 the updates of one item to alternate add, remove, add, ...)",
                self.change,
                if self.change == Change::Add { "already present" } else { "absent" },
            );
        }
    }

    fn absorb_local(self, log: &mut LocalLog<'_, Self>) -> Option<Self> {
        // 000 §5.2: a remove that meets its own add in this core's log cancels it. Adds are
        // never absorbed locally, so pushing one scans nothing.
        if A::LOCAL
            && self.change == Change::Remove
            && log.remove_latest(|o| o.change == Change::Add && o.item == self.item).is_some()
        {
            return None;
        }
        Some(self)
    }

    fn absorb_global(target: &Applied<C>, ops: &mut VecDeque<Self>) {
        if A::GLOBAL && ops.len() >= 2 {
            target.count_absorbed_globally(cancel_pairs(ops));
        }
    }
}

/// Global absorption: for each item, adds minus removes over the batch; 0 drops all its
/// operations, ±1 keeps its last operation of that sign. Items with a larger count break
/// the identity rule and are left alone. Returns how many operations were dropped.
fn cancel_pairs<C: SetLike, A>(ops: &mut VecDeque<SetUpdate<C, A>>) -> u64 {
    /// Per item: adds minus removes, and the index of the last add and the last remove.
    struct Tally {
        net: i64,
        last_add: usize,
        last_remove: usize,
    }
    let mut tallies: HashMap<&C::Item, Tally> = HashMap::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let t = match tallies.entry(&op.item) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Tally { net: 0, last_add: usize::MAX, last_remove: usize::MAX }),
        };
        match op.change {
            Change::Add => {
                t.net += 1;
                t.last_add = i;
            }
            Change::Remove => {
                t.net -= 1;
                t.last_remove = i;
            }
        }
    }
    let keep: Vec<bool> = ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let t = &tallies[&op.item];
            match t.net {
                0 => false,
                1 => i == t.last_add,
                -1 => i == t.last_remove,
                _ => true,
            }
        })
        .collect();
    drop(tallies);
    let before = ops.len();
    let mut i = 0;
    ops.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    (before - ops.len()) as u64
}

/// The log kind of a [`LoggedSet`].
pub type SetKind<C, A, const ORDERED: bool> = Queue<SetUpdate<C, A>, ORDERED>;

/// An OpLog object over the set-like sequential type `C`, with absorption `A`, whose log is
/// ordered by timestamp when `ORDERED` (see the module docs).
pub struct LoggedSet<C: SetLike, A: Absorption, const ORDERED: bool> {
    log: OpLog<SetKind<C, A, ORDERED>>,
}

impl<C: SetLike, A: Absorption, const ORDERED: bool> LoggedSet<C, A, ORDERED> {
    /// Wraps `set` as an object of `domain`.
    ///
    /// An unordered set must absorb globally (the module docs explain why); that is checked
    /// when this is compiled.
    pub fn with_domain(domain: &Arc<Domain<SetKind<C, A, ORDERED>>>, set: C) -> Self {
        const {
            assert!(
                ORDERED || A::GLOBAL,
                "an unordered LoggedSet must absorb globally: a remove may be gathered before its add"
            )
        };
        Self { log: OpLog::with_domain(domain, Applied::new(set)) }
    }

    /// Wraps `set` as an object of the process-wide per-CPU domain of its kind.
    ///
    /// # Panics
    /// When the set is ordered and the process-wide clock's configuration is malformed.
    pub fn new(set: C) -> Self {
        Self::with_domain(&Domain::global(), set)
    }

    /// Logs `add(item)`. Absorbing sets require the identity rule (module docs).
    #[inline]
    pub fn add(&self, item: C::Item) {
        self.log.update(SetUpdate::new(Change::Add, item));
    }

    /// Logs `remove(item)`, or cancels the `add(item)` still in this core's log.
    /// Absorbing sets require the identity rule (module docs).
    #[inline]
    pub fn remove(&self, item: C::Item) {
        self.log.update(SetUpdate::new(Change::Remove, item));
    }

    /// Synchronizes and runs `f` on the up-to-date set (000 Figure 7 `truncate`: synchronize,
    /// read the underlying instance, unlock).
    ///
    /// # Panics
    /// If `f` panics, or, in debug builds of an absorbing set, if an update breaks the
    /// identity rule.
    pub fn read<R>(&self, f: impl FnOnce(&C) -> R) -> R {
        self.log.read(|a| f(&a.inner))
    }

    /// Synchronizes and runs `f` on the up-to-date set, which it may change directly (the
    /// object lock is held meanwhile; updates from other threads keep being logged).
    pub fn modify<R>(&self, f: impl FnOnce(&mut C) -> R) -> R {
        f(&mut self.log.synchronize().inner)
    }

    /// Synchronizes and returns what the instance has done so far.
    pub fn stats(&self) -> Stats {
        self.log.read(Applied::stats)
    }

    /// The representation the set's object is in now (the adaptive policy's choice, in the
    /// default domain; `oplog` module docs, "Representations").
    pub fn representation(&self) -> oplog::Representation {
        self.log.representation()
    }

    /// The domain this set's logs live in.
    pub fn domain(&self) -> &Domain<SetKind<C, A, ORDERED>> {
        self.log.domain()
    }

    /// Applies every logged update and returns the set.
    pub fn into_inner(self) -> C {
        self.log.into_inner().inner
    }
}

impl<C: SetLike, A: Absorption, const ORDERED: bool> fmt::Debug for LoggedSet<C, A, ORDERED> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoggedSet").field("ordered", &ORDERED).field("log", &self.log).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    type Op = SetUpdate<HashSet<u32>, AbsorbLocal>;

    fn ops(list: &[(Change, u32)]) -> VecDeque<Op> {
        list.iter().map(|&(c, x)| Op::new(c, x)).collect()
    }

    fn shown(ops: &VecDeque<Op>) -> Vec<(Change, u32)> {
        ops.iter().map(|o| (o.change, o.item)).collect()
    }

    use Change::{Add, Remove};

    #[test]
    fn global_absorption_cancels_pairs_in_either_order_and_keeps_the_rest() {
        let mut batch = ops(&[(Add, 1), (Add, 2), (Remove, 3), (Remove, 1), (Add, 3), (Remove, 2), (Add, 2)]);
        let dropped = cancel_pairs(&mut batch);
        assert_eq!(dropped, 6);
        assert_eq!(shown(&batch), vec![(Add, 2)]);
    }

    #[test]
    fn global_absorption_keeps_the_last_of_an_unpaired_sign() {
        // Scrambled unordered batch for one item that alternated add, remove, add.
        let mut batch = ops(&[(Add, 7), (Remove, 7), (Add, 7), (Add, 8)]);
        assert_eq!(cancel_pairs(&mut batch), 2);
        assert_eq!(shown(&batch), vec![(Add, 7), (Add, 8)]);
        let mut batch = ops(&[(Remove, 7), (Add, 7), (Remove, 7)]);
        assert_eq!(cancel_pairs(&mut batch), 2);
        assert_eq!(shown(&batch), vec![(Remove, 7)]);
    }

    #[test]
    fn global_absorption_leaves_rule_breakers_alone() {
        let mut batch = ops(&[(Add, 1), (Add, 1)]);
        assert_eq!(cancel_pairs(&mut batch), 0);
        assert_eq!(batch.len(), 2);
    }

    #[test]
    fn the_basic_set_has_set_semantics_for_any_sequence() {
        let d = Domain::new(oplog::Config::per_thread()).unwrap();
        let s = LoggedSet::<BTreeSetU32, Basic, true>::with_domain(&d, BTreeSetU32::default());
        s.add(1);
        s.add(1);
        s.remove(2);
        s.add(3);
        s.remove(3);
        assert_eq!(s.read(|s| s.0.iter().copied().collect::<Vec<_>>()), vec![1]);
        assert_eq!(s.stats(), Stats { executed: 5, absorbed_globally: 0 });
    }

    #[test]
    fn local_absorption_keeps_a_threads_own_pairs_out_of_the_instance() {
        let d = Domain::new(oplog::Config::per_thread()).unwrap();
        let s = LoggedSet::<BTreeSetU32, AbsorbLocal, false>::with_domain(&d, BTreeSetU32::default());
        for i in 0..1000 {
            s.add(i);
            s.remove(i);
        }
        s.add(5000);
        assert_eq!(s.read(|s| s.0.len()), 1);
        assert_eq!(s.stats(), Stats { executed: 1, absorbed_globally: 0 });
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "identity rule violated: Add(4) found the item already present")]
    fn debug_builds_reject_an_add_of_a_present_item() {
        let d = Domain::new(oplog::Config::per_thread()).unwrap();
        let s = LoggedSet::<BTreeSetU32, AbsorbGlobal, true>::with_domain(&d, BTreeSetU32::default());
        s.add(4);
        s.read(|_| ());
        s.add(4);
        s.read(|_| ());
    }

    /// A `BTreeSet` as a [`SetLike`].
    #[derive(Debug, Default)]
    struct BTreeSetU32(BTreeSet<u32>);

    impl SetLike for BTreeSetU32 {
        type Item = u32;
        fn insert(&mut self, x: u32) -> bool {
            self.0.insert(x)
        }
        fn remove(&mut self, x: &u32) -> bool {
            self.0.remove(x)
        }
    }
}
