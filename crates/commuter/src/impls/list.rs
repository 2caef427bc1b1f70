//! The linked list of 000 §7.3 (`oplog_structures::list`): the three OpLog variants the
//! text measures and a mutex around the sequential list. Its model is the set
//! ([`SetModel`]): the list holds each element once and no operation observes node order.
//!
//! The two absorbing variants require the identity rule ([`IDENTITY`]; see the
//! [module docs](super) on contracts); `oplog-basic` and `mutex` take any sequence.

use oplog_model::set::{SetModel, SetOp, SetRet};
use oplog_structures::list::{BasicList, ConcurrentList, GlobalAbsorbList, LocalAbsorbList, MutexList};

use super::{Contract, Impl, Object, WARM_KEY, domain};

/// Any [`ConcurrentList`] of `u64` elements as an [`Object`] of the set model.
#[derive(Debug)]
pub struct ListObject<L>(pub L);

impl<L: ConcurrentList<u64> + Send> Object<SetModel> for ListObject<L> {
    fn run(&self, op: &SetOp) -> SetRet {
        match *op {
            SetOp::Add(x) => self.0.add(x),
            SetOp::Remove(x) => self.0.remove(x),
            SetOp::Contains(x) => return SetRet::Present(self.0.contains(&x)),
        }
        SetRet::Done
    }

    /// Adds and removes an element the model never uses: the core's slot now holds the
    /// list (local absorption cancels the pair in the log; the other variants apply both at
    /// the next synchronize), and the list is unchanged. The identity rule holds: the
    /// element is absent, then present.
    fn warm(&self) {
        self.0.add(WARM_KEY);
        self.0.remove(WARM_KEY);
    }
}

/// The identity rule of the absorbing variants, over the set model: `add(x)` only while
/// `x` is absent, `remove(x)` only while it is present.
pub const IDENTITY: Contract<SetModel> = Contract {
    name: "identity rule: an element is added only while absent and removed only while present (the updates of one \
           element alternate, so two concurrent updates of one element are not allowed)",
    admits: |set, op| match *op {
        SetOp::Add(x) => !set.contains(&x),
        SetOp::Remove(x) => set.contains(&x),
        SetOp::Contains(_) => true,
    },
};

/// The list's implementations under test.
pub fn impls() -> Vec<Impl<SetModel>> {
    vec![
        Impl {
            id: "oplog-basic",
            about: "oplog_structures::list::BasicList: ordered log, no absorption (000 §7.3 \"OpLog basic\")",
            build: || Box::new(ListObject(BasicList::with_domain(&domain(), Default::default()))),
            contract: None,
        },
        Impl {
            id: "oplog-global-absorb",
            about: "oplog_structures::list::GlobalAbsorbList: ordered log, add/remove pairs cancel in a synchronize's \
                    batch",
            build: || Box::new(ListObject(GlobalAbsorbList::with_domain(&domain(), Default::default()))),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "oplog-local-absorb",
            about: "oplog_structures::list::LocalAbsorbList: unordered log, a remove cancels its add in the core's log",
            build: || Box::new(ListObject(LocalAbsorbList::with_domain(&domain(), Default::default()))),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::list::MutexList: the sequential list under a mutex",
            build: || Box::new(ListObject(MutexList::new())),
            contract: None,
        },
    ]
}
