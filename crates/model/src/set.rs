//! A set of keys: `add`, `remove`, `contains` (the shape of the texts' lists and of the
//! open-object list, 000 §7.3–7.4).

use crate::Model;
use std::collections::BTreeSet;

/// A set operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
