//! The linked list of 000 §7.3 (Figure 12): `add` links an element in, `remove` unlinks one
//! occurrence of it, `contains` looks for it.
//!
//! A list may hold an element more than once, and no operation here observes the order of
//! the list, so its abstract state is the multiset of its elements (which makes two lists
//! equal exactly when no sequence of these operations can tell them apart). Unlike
//! [`SetModel`](crate::set::SetModel), `add(x)` then `remove(x)` restores any list, which is
//! what lets OpLog's list cancel the pair by absorption (000 §7.3).

use crate::Model;
use crate::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param, symbol_facts};
use std::collections::BTreeMap;

/// A list operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ListOp {
    /// Link the element in (again, if already present).
    Add(u64),
    /// Unlink one occurrence of the element (no effect if absent).
    Remove(u64),
    /// Whether the element occurs.
    Contains(u64),
}

/// A list's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListRet {
    /// `add` and `remove` (blind updates).
    Done,
    /// `contains`.
    Present(bool),
}

/// The list model: element → number of occurrences (never 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct ListModel;

impl Model for ListModel {
    type State = BTreeMap<u64, u32>;
    type Op = ListOp;
    type Ret = ListRet;

    fn name(&self) -> &str {
        "list"
    }

    fn init(&self) -> BTreeMap<u64, u32> {
        BTreeMap::new()
    }

    fn step(&self, list: &mut BTreeMap<u64, u32>, op: &ListOp) -> ListRet {
        match *op {
            ListOp::Add(x) => {
                *list.entry(x).or_default() += 1;
                ListRet::Done
            }
            ListOp::Remove(x) => {
                if let Some(n) = list.get_mut(&x) {
                    *n -= 1;
                    if *n == 0 {
                        list.remove(&x);
                    }
                }
                ListRet::Done
            }
            ListOp::Contains(x) => ListRet::Present(list.contains_key(&x)),
        }
    }
}

impl Explore for ListModel {
    fn kinds(&self) -> Vec<OpKind> {
        let x = [Param::symbol("x")];
        vec![OpKind::blind("add", &x), OpKind::blind("remove", &x), OpKind::returning("contains", &x)]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<ListOp> {
        let &[Arg::Symbol(x)] = args else { return None };
        [ListOp::Add(x), ListOp::Remove(x), ListOp::Contains(x)].get(kind).copied()
    }

    fn split(&self, op: &ListOp) -> (usize, Vec<Arg>) {
        match *op {
            ListOp::Add(x) => (0, vec![Arg::Symbol(x)]),
            ListOp::Remove(x) => (1, vec![Arg::Symbol(x)]),
            ListOp::Contains(x) => (2, vec![Arg::Symbol(x)]),
        }
    }

    fn map_symbols(&self, list: &BTreeMap<u64, u32>, f: &mut dyn FnMut(u64) -> u64) -> BTreeMap<u64, u32> {
        list.iter().map(|(&k, &n)| (f(k), n)).collect()
    }

    /// `x ∈ L` and whether `x` occurs at least twice, for each element argument.
    fn facts(&self, list: &BTreeMap<u64, u32>, ops: &[NamedOp<'_, ListOp>]) -> Vec<Fact> {
        let split = |op: &ListOp| self.split(op).1;
        let count = |k: u64| list.get(&k).copied().unwrap_or(0);
        let mut facts = symbol_facts(ops, split, |x| format!("{x} ∈ L"), |x| format!("{x} ∉ L"), |k| count(k) >= 1);
        facts.extend(symbol_facts(ops, split, |x| format!("#{x} ≥ 2"), |x| format!("#{x} < 2"), |k| count(k) >= 2));
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_counts_occurrences() {
        let m = ListModel;
        let mut l = m.init();
        m.step(&mut l, &ListOp::Add(1));
        m.step(&mut l, &ListOp::Add(1));
        m.step(&mut l, &ListOp::Remove(1));
        assert_eq!(m.step(&mut l, &ListOp::Contains(1)), ListRet::Present(true));
        m.step(&mut l, &ListOp::Remove(1));
        m.step(&mut l, &ListOp::Remove(1));
        assert_eq!(m.step(&mut l, &ListOp::Contains(1)), ListRet::Present(false));
        assert_eq!(l, m.init(), "no zero counts are kept");
    }
}
