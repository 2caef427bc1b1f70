//! An LRU list (000 §1: "LRU lists, for example, are frequently updated but rarely read"):
//! `touch` marks an item most recently used (adding it if absent), `remove` takes an item
//! out (the object was freed), `evict` removes and returns the least recently used one, as
//! `oplog_structures::lru`.
//!
//! The order of items is observable through `evict`, so two `touch`es of different items
//! never commute; a `touch` commutes with an `evict` when the list is not empty and the
//! touched item is not the one evicted. Removing one item leaves the order of the others
//! alone, so `remove` commutes with every update of another item.

use crate::Model;
use crate::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param, symbol_facts};

/// An LRU operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LruOp {
    /// Mark the item most recently used.
    Touch(u64),
    /// Take the item out (no effect if absent).
    Remove(u64),
    /// Remove and return the least recently used item.
    Evict,
}

/// An LRU list's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LruRet {
    /// `touch` and `remove` (blind updates).
    Done,
    /// `evict`: the item removed, or `None` when the list was empty.
    Evicted(Option<u64>),
}

/// The LRU model: items from least to most recently used, each once.
#[derive(Clone, Copy, Debug, Default)]
pub struct LruModel;

impl Model for LruModel {
    type State = Vec<u64>;
    type Op = LruOp;
    type Ret = LruRet;

    fn name(&self) -> &str {
        "lru"
    }

    fn init(&self) -> Vec<u64> {
        Vec::new()
    }

    fn step(&self, list: &mut Vec<u64>, op: &LruOp) -> LruRet {
        match *op {
            LruOp::Touch(x) => {
                list.retain(|&y| y != x);
                list.push(x);
                LruRet::Done
            }
            LruOp::Remove(x) => {
                list.retain(|&y| y != x);
                LruRet::Done
            }
            LruOp::Evict => LruRet::Evicted((!list.is_empty()).then(|| list.remove(0))),
        }
    }
}

impl Explore for LruModel {
    fn kinds(&self) -> Vec<OpKind> {
        let x = [Param::symbol("x")];
        vec![OpKind::blind("touch", &x), OpKind::blind("remove", &x), OpKind::returning("evict", &[])]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<LruOp> {
        match (kind, args) {
            (0, &[Arg::Symbol(x)]) => Some(LruOp::Touch(x)),
            (1, &[Arg::Symbol(x)]) => Some(LruOp::Remove(x)),
            (2, []) => Some(LruOp::Evict),
            _ => None,
        }
    }

    fn split(&self, op: &LruOp) -> (usize, Vec<Arg>) {
        match *op {
            LruOp::Touch(x) => (0, vec![Arg::Symbol(x)]),
            LruOp::Remove(x) => (1, vec![Arg::Symbol(x)]),
            LruOp::Evict => (2, Vec::new()),
        }
    }

    fn map_symbols(&self, list: &Vec<u64>, f: &mut dyn FnMut(u64) -> u64) -> Vec<u64> {
        list.iter().map(|&x| f(x)).collect()
    }

    /// Whether the list is empty; for each item argument, whether it is listed and whether
    /// it is the least recently used.
    fn facts(&self, list: &Vec<u64>, ops: &[NamedOp<'_, LruOp>]) -> Vec<Fact> {
        let split = |op: &LruOp| self.split(op).1;
        let mut facts = vec![Fact::new("L = ∅", "L ≠ ∅", list.is_empty())];
        facts.extend(symbol_facts(ops, split, |x| format!("{x} ∈ L"), |x| format!("{x} ∉ L"), |k| list.contains(&k)));
        facts.extend(symbol_facts(
            ops,
            split,
            |x| format!("{x} = L[0]"),
            |x| format!("{x} ≠ L[0]"),
            |k| list.first() == Some(&k),
        ));
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evict_takes_the_least_recently_touched_and_remove_takes_any() {
        let m = LruModel;
        let mut l = m.init();
        for x in [1, 2, 3, 1] {
            m.step(&mut l, &LruOp::Touch(x));
        }
        assert_eq!(l, vec![2, 3, 1]);
        m.step(&mut l, &LruOp::Remove(3));
        m.step(&mut l, &LruOp::Remove(4));
        assert_eq!(l, vec![2, 1], "removing keeps the others' order");
        m.step(&mut l, &LruOp::Touch(3));
        assert_eq!(m.step(&mut l, &LruOp::Evict), LruRet::Evicted(Some(2)));
        assert_eq!(m.step(&mut l, &LruOp::Evict), LruRet::Evicted(Some(1)));
        assert_eq!(m.step(&mut l, &LruOp::Evict), LruRet::Evicted(Some(3)));
        assert_eq!(m.step(&mut l, &LruOp::Evict), LruRet::Evicted(None));
    }
}
