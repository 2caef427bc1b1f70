//! The linked list of 000 §7.3 (`oplog_structures::list`): the three OpLog variants the
//! text measures and a mutex around the sequential list. Its model is the set
//! ([`SetModel`]): the list holds each element once and no operation observes node order.
//!
//! The two absorbing variants require the identity rule ([`IDENTITY`]; see the
//! [module docs](super) on contracts); `oplog-basic` and `mutex` take any sequence.

use oplog_model::Concurrent;
use oplog_model::set::{SetModel, SetOp};
use oplog_structures::list::{BasicList, GlobalAbsorbList, LocalAbsorbList, MutexList};

use super::{Contract, Impl, Object, WARM_KEY, domain, identity_rule, identity_rule_name};

/// Adds and removes an element the model never uses: the core's slot now holds the list
/// (local absorption cancels the pair in the log; the other variants apply both at the next
/// synchronize), and the list is unchanged. The identity rule holds: the element is absent,
/// then present.
fn warm(list: &dyn Concurrent<SetModel>) {
    list.call(&SetOp::Add(WARM_KEY));
    list.call(&SetOp::Remove(WARM_KEY));
}

/// Looks up a key the model never uses, twice: the first read applies what the set-up
/// logged, the second finds nothing logged and lets the following reads take the
/// concurrent path (see the counter's `quiesce`).
fn quiesce(list: &dyn Concurrent<SetModel>) {
    list.call(&SetOp::Contains(WARM_KEY));
    list.call(&SetOp::Contains(WARM_KEY));
}

impl Object<SetModel> for BasicList<u64> {
    fn warm(&self) {
        warm(self);
    }
    fn quiesce(&self) {
        quiesce(self);
    }
}

impl Object<SetModel> for GlobalAbsorbList<u64> {
    fn warm(&self) {
        warm(self);
    }
    fn quiesce(&self) {
        quiesce(self);
    }
}

impl Object<SetModel> for LocalAbsorbList<u64> {
    fn warm(&self) {
        warm(self);
    }
    fn quiesce(&self) {
        quiesce(self);
    }
}

impl Object<SetModel> for MutexList<u64> {
    fn warm(&self) {
        warm(self);
    }
}

/// The identity rule of the absorbing variants, over the set model: `add(x)` only while
/// `x` is absent, `remove(x)` only while it is present.
pub const IDENTITY: Contract<SetModel> = Contract {
    name: identity_rule_name!("an element", "element"),
    admits: |set, op| match *op {
        SetOp::Add(x) => identity_rule(true, set.contains(&x)),
        SetOp::Remove(x) => identity_rule(false, set.contains(&x)),
        SetOp::Contains(_) => true,
    },
};

/// The list's implementations under test.
pub fn impls() -> Vec<Impl<SetModel>> {
    vec![
        Impl {
            id: "oplog-basic",
            about: "oplog_structures::list::BasicList: ordered log, no absorption (000 §7.3 \"OpLog basic\")",
            build: || Box::new(BasicList::with_domain(&domain(), Default::default())),
            contract: None,
        },
        Impl {
            id: "oplog-global-absorb",
            about: "oplog_structures::list::GlobalAbsorbList: ordered log, add/remove pairs cancel in a synchronize's \
                    batch",
            build: || Box::new(GlobalAbsorbList::with_domain(&domain(), Default::default())),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "oplog-local-absorb",
            about: "oplog_structures::list::LocalAbsorbList: unordered log, a remove cancels its add in the core's log",
            build: || Box::new(LocalAbsorbList::with_domain(&domain(), Default::default())),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::list::MutexList: the sequential list under a mutex",
            build: || Box::new(MutexList::new()),
            contract: None,
        },
    ]
}
