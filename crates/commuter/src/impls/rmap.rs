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
use oplog_model::rmap::{Mapping, Piece, RmapModel, RmapOp, RmapRet};
use oplog_structures::logged_set::{Basic, LoggedSet, SetKind};
use oplog_structures::rmap::{self, IntervalTree, MutexRmap, OpLogRmap, OrderedOpLogRmap, Rmap, truncate_tree};

use super::{Contract, Impl, Object, WARM_KEY, domain};

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
    fn add(&self, m: rmap::Mapping) {
        self.0.add(m);
    }
    fn remove(&self, m: rmap::Mapping) {
        self.0.remove(m);
    }
    fn truncate(&self, offset: u64) -> Vec<rmap::Unmapped> {
        self.0.read(|tree| truncate_tree(tree, offset))
    }
    fn mappings(&self) -> Vec<rmap::Mapping> {
        self.0.read(|tree| tree.iter().copied().collect())
    }
}

/// Any [`Rmap`] as an [`Object`] of the rmap model. Page numbers convert one to one.
#[derive(Debug)]
pub struct RmapObject<R>(pub R);

/// The structure's mapping for the model's.
///
/// # Panics
/// If the model's range is empty (the model builds none) or negative.
fn mapping(m: Mapping) -> rmap::Mapping {
    let page = |p: i64| u64::try_from(p).expect("model pages are not negative");
    rmap::Mapping::new(m.m, page(m.start)..page(m.end)).expect("model mappings are not empty")
}

/// The model's piece for what the structure unmapped.
fn piece(u: rmap::Unmapped) -> Piece {
    let page = |p: u64| i64::try_from(p).expect("pages the model gave fit in i64");
    let m = u.mapping;
    Piece { mapping: Mapping { start: page(m.start()), end: page(m.end()), m: m.id() }, from: page(u.from) }
}

impl<R: Rmap + Send> Object<RmapModel> for RmapObject<R> {
    fn run(&self, op: &RmapOp) -> RmapRet {
        match *op {
            RmapOp::Add(m) => self.0.add(mapping(m)),
            RmapOp::Remove(m) => self.0.remove(mapping(m)),
            RmapOp::Truncate(o) => {
                let offset = u64::try_from(o).expect("model offsets are not negative");
                return RmapRet::Unmapped(self.0.truncate(offset).into_iter().map(piece).collect());
            }
        }
        RmapRet::Done
    }

    /// Adds and removes a mapping of a region the model never uses: the core's slot now
    /// holds the rmap (local absorption cancels the pair in the log), and the map is
    /// unchanged.
    fn warm(&self) {
        let m = rmap::Mapping::new(WARM_KEY, 0..1).expect("a one-page mapping");
        self.0.add(m);
        self.0.remove(m);
    }
}

/// The identity rule of the OpLog rmaps, over the rmap model: a mapping is added only
/// while absent and removed only while present (000 §5.2: a region cannot be reused while
/// it is logged).
pub const IDENTITY: Contract<RmapModel> = Contract {
    name: "identity rule: a mapping is added only while absent and removed only while present (the updates of one \
           mapping alternate, so two concurrent updates of one mapping are not allowed)",
    admits: |map, op| match op {
        RmapOp::Add(m) => !map.contains(m),
        RmapOp::Remove(m) => map.contains(m),
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
            build: || Box::new(RmapObject(OpLogRmap::<false>::new(&domain()))),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "oplog-ordered",
            about: "oplog_structures::rmap::OrderedOpLogRmap: the same with timestamped logs (000 Figure 7)",
            build: || Box::new(RmapObject(OrderedOpLogRmap::new(&domain()))),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "oplog-basic",
            about: "BasicOplogRmap: timestamped per-core logs over the interval tree, no absorption, any sequence",
            build: || Box::new(RmapObject(BasicOplogRmap::new(&domain()))),
            contract: None,
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::rmap::MutexRmap: the interval tree under a mutex",
            build: || Box::new(RmapObject(MutexRmap::new())),
            contract: None,
        },
    ]
}
