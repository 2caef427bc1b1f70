//! A set of keys: `add`, `remove`, `contains` (the shape of the texts' lists and of the
//! open-object list, 000 §7.3–7.4).
//!
//! It is also the list's model: the linked list of 000 §7.3 (`oplog_structures::list`) holds
//! each element once, adding a present element or removing an absent one changes nothing,
//! and no operation observes the order of its nodes, so its abstract state is this set.

use crate::Model;
use crate::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param, symbol_facts};
use std::collections::BTreeSet;

/// A set operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SetOp {
    /// Insert a key (no effect if present).
    Add(u64),
    /// Remove a key (no effect if absent).
    Remove(u64),
    /// Whether a key is present.
    Contains(u64),
}

/// A set's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetRet {
    /// `add` and `remove` (blind updates, as logged by OpLog).
    Done,
    /// `contains`.
    Present(bool),
}

/// The set model with blind `add`/`remove`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetModel;

impl Model for SetModel {
    type State = BTreeSet<u64>;
    type Op = SetOp;
    type Ret = SetRet;

    fn name(&self) -> &str {
        "set"
    }

    fn init(&self) -> BTreeSet<u64> {
        BTreeSet::new()
    }

    fn step(&self, set: &mut BTreeSet<u64>, op: &SetOp) -> SetRet {
        match *op {
            SetOp::Add(k) => {
                set.insert(k);
                SetRet::Done
            }
            SetOp::Remove(k) => {
                set.remove(&k);
                SetRet::Done
            }
            SetOp::Contains(k) => SetRet::Present(set.contains(&k)),
        }
    }
}

impl Explore for SetModel {
    fn kinds(&self) -> Vec<OpKind> {
        let x = [Param::symbol("x")];
        vec![OpKind::blind("add", &x), OpKind::blind("remove", &x), OpKind::returning("contains", &x)]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<SetOp> {
        let &[Arg::Symbol(x)] = args else { return None };
        [SetOp::Add(x), SetOp::Remove(x), SetOp::Contains(x)].get(kind).copied()
    }

    fn split(&self, op: &SetOp) -> (usize, Vec<Arg>) {
        match *op {
            SetOp::Add(x) => (0, vec![Arg::Symbol(x)]),
            SetOp::Remove(x) => (1, vec![Arg::Symbol(x)]),
            SetOp::Contains(x) => (2, vec![Arg::Symbol(x)]),
        }
    }

    fn map_symbols(&self, set: &BTreeSet<u64>, f: &mut dyn FnMut(u64) -> u64) -> BTreeSet<u64> {
        set.iter().map(|&k| f(k)).collect()
    }

    /// `x ∈ S` for each key argument.
    fn facts(&self, set: &BTreeSet<u64>, ops: &[NamedOp<'_, SetOp>]) -> Vec<Fact> {
        symbol_facts(ops, |op| self.split(op).1, |x| format!("{x} ∈ S"), |x| format!("{x} ∉ S"), |k| set.contains(&k))
    }
}
