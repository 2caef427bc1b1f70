//! The reverse map of 000 §4.3 (`oplog_structures::rmap`): the OpLog rmap with an
//! unordered log (the default, `oplog`) and with the text's timestamped one
//! (`oplog-ordered`), both with local and global absorption, and the interval tree under a
//! mutex.
//!
//! Both OpLog versions absorb, so they require the identity rule ([`IDENTITY`]; see the
//! [module docs](super) on contracts), which leaves most of the model's commutative update
//! cases (adding a present mapping, removing an absent one, two updates of one mapping)
//! outside their contract. [`BasicOplogRmap`] (`oplog-basic`) is the same OpLog rmap
//! without absorption, built from the structures crate's parts: it takes any sequence, so
//! those cases are traced on an OpLog rmap too.

use oplog::Domain;
use oplog_model::Concurrent;
use oplog_model::rmap::{RmapModel, RmapOp, RmapRet};
use oplog_structures::logged_set::{Basic, LoggedSet, SetKind};
use oplog_structures::rmap::{IntervalTree, Mapping, MutexRmap, OpLogRmap, Rmap, Unmapped, truncate_tree};

use super::{Contract, Impl, Object, WARM_KEY, domain, identity_rule, identity_rule_name};

/// The log kind of [`BasicOplogRmap`].
pub type BasicKind = SetKind<IntervalTree, Basic, true>;

/// The OpLog rmap without absorption ("OpLog basic" of 000 §7.3, applied to the rmap):
/// `add` and `remove` are timestamped per-core updates, executed in time order at the next
/// synchronize; `truncate` synchronizes and walks the tree. Set semantics for any
/// sequence: no identity rule.
#[derive(Debug)]
pub struct BasicOplogRmap(LoggedSet<IntervalTree, Basic, true>);

impl BasicOplogRmap {
    /// An empty rmap whose logs live in `domain`.
    pub fn new(domain: &std::sync::Arc<Domain<BasicKind>>) -> Self {
        BasicOplogRmap(LoggedSet::with_domain(domain, IntervalTree::new()))
    }
}

impl Rmap for BasicOplogRmap {
    fn add(&self, m: Mapping) {
        self.0.add(m);
    }
    fn remove(&self, m: Mapping) {
        self.0.remove(m);
    }
    fn truncate(&self, offset: u64) -> Vec<Unmapped> {
        self.0.read(|tree| truncate_tree(tree, offset))
    }
    fn mappings(&self) -> Vec<Mapping> {
        self.0.read(|tree| tree.iter().copied().collect())
    }
}

impl Concurrent<RmapModel> for BasicOplogRmap {
    /// As every rmap of `oplog_structures` (through `dyn Rmap`).
    fn call(&self, op: &RmapOp) -> RmapRet {
        (self as &dyn Rmap).call(op)
    }
}

/// Adds and removes a mapping of a region the model never uses: the core's slot now holds
/// the rmap (local absorption cancels the pair in the log), and the map is unchanged.
fn warm(rmap: &dyn Rmap) {
    let m = Mapping::new(WARM_KEY, 0..1).expect("a one-page mapping");
    rmap.add(m);
    rmap.remove(m);
}

impl<const ORDERED: bool> Object<RmapModel> for OpLogRmap<ORDERED> {
    fn warm(&self) {
        warm(self);
    }
}

impl Object<RmapModel> for BasicOplogRmap {
    fn warm(&self) {
        warm(self);
    }
}

impl Object<RmapModel> for MutexRmap {
    fn warm(&self) {
        warm(self);
    }
}

/// The identity rule of the OpLog rmaps, over the rmap model: a mapping is added only
/// while absent and removed only while present (000 §5.2: a region cannot be reused while
/// it is logged).
pub const IDENTITY: Contract<RmapModel> = Contract {
    name: identity_rule_name!("a mapping", "mapping"),
    admits: |map, op| match op {
        RmapOp::Add(m) => identity_rule(true, map.contains(m)),
        RmapOp::Remove(m) => identity_rule(false, map.contains(m)),
        RmapOp::Truncate(_) => true,
    },
};

/// The rmap's implementations under test.
pub fn impls() -> Vec<Impl<RmapModel>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog_structures::rmap::OpLogRmap: unordered per-core logs over an interval tree, local and global \
                    absorption",
            build: || Box::new(OpLogRmap::<false>::new(&domain())),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "oplog-ordered",
            about: "oplog_structures::rmap::OrderedOpLogRmap: the same with timestamped logs (000 Figure 7)",
            build: || Box::new(OpLogRmap::<true>::new(&domain())),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "oplog-basic",
            about: "BasicOplogRmap: timestamped per-core logs over the interval tree, no absorption, any sequence",
            build: || Box::new(BasicOplogRmap::new(&domain())),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::rmap::MutexRmap: the interval tree under a mutex",
            build: || Box::new(MutexRmap::new()),
            contract: None,
        },
    ]
}
