//! The reverse map (rmap) of 000 §3 and §4.3: per file, every mapping of the file into an
//! address space.
//!
//! `fork`, `exit` and `mmap` add and remove mappings and never read the rmap; truncating
//! the file reads it, to find every mapping of the pages past the new end (000 §3:
//! "Linux reads these reverse mappings when it truncates a file or swaps a physical page
//! out"). Every variant implements [`Rmap`]:
//!
//! | type | id in `oplog-bench fork` | what it does |
//! |---|---|---|
//! | [`OpLogRmap`] | `oplog` | 000 Figure 7: add and remove are logged per core; truncate synchronizes and queries the one [`IntervalTree`]. A remove that meets its add in this core's log cancels it; an add and a remove in one synchronize's batch cancel (000 §5.2). Unordered: no clock read (see [`OpLogRmap`]) |
//! | [`OrderedOpLogRmap`] | `oplog-ordered` | the same with every update timestamped and the logs merged in time order, as the text |
//! | [`MutexRmap`] | `mutex` | "stock": the same interval tree behind one lock |
//! | [`LockFreeRmap`] | `lockfree` | 000 §3's "lock-free" line: the interval tree replaced by a lock-free list of mappings ([`HarrisList`]) |
//!
//! # Operations
//!
//! Offsets are in pages of the file (any unit works; the texts use pages).
//!
//! * `add(m)`: the mapping `m` (an id and a half-open page range `start..end`, built by
//!   [`Mapping::new`], which rejects empty ranges) now maps the file.
//! * `remove(m)`: `m` no longer maps the file.
//! * `truncate(offset)`: the file shrinks to `offset` pages: every mapping that overlaps
//!   `offset..` has its pages from `max(start, offset)` to its end unmapped (000 Figure 7:
//!   `unmap(m, offset, m->end)`). Returns those pieces ([`Unmapped`]), ordered by mapping.
//!   As in Linux, the mappings themselves stay in the rmap (the address-space regions
//!   still exist; touching the pages past the end faults): truncate does not change the
//!   set of mappings, it reads it.
//! * `mappings()`: every mapping, ordered (a read, for verification).
//!
//! **Identity rule** (crate docs): a mapping is added while absent and removed while
//! present, so the updates of one mapping alternate in real time. [`OpLogRmap`]'s
//! absorption relies on it (000 §5.2 keeps a region's id from being reused while it is in
//! a log); debug builds check it when the operations are applied. [`MutexRmap`] and
//! [`LockFreeRmap`] give set semantics to any sequence.

pub mod interval_tree;

pub use interval_tree::IntervalTree;

use crate::list::HarrisList;
use crate::logged_set::{AbsorbLocal, LoggedSet, SetKind};
use oplog::Domain;
use oplog_model::rmap::{self as model, Piece, RmapModel, RmapOp, RmapRet};
use oplog_percore::primitive::Mutex;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// One mapping of a file: an address-space region (`id`, the texts' `vm_area_struct`
/// pointer) mapping the file's pages `start..end`.
///
/// Ordered by `(start, end, id)`, the interval tree's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mapping {
    start: u64,
    end: u64,
    id: u64,
}

impl Mapping {
    /// The mapping of pages `pages` by region `id`.
    ///
    /// # Errors
    /// [`RmapError::EmptyRange`] when `pages` is empty or reversed (`end <= start`).
    pub fn new(id: u64, pages: Range<u64>) -> Result<Self, RmapError> {
        if pages.end <= pages.start {
            return Err(RmapError::EmptyRange { id, start: pages.start, end: pages.end });
        }
        Ok(Self { start: pages.start, end: pages.end, id })
    }

    /// The region's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// First page mapped.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// One past the last page mapped.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The pages mapped.
    pub fn pages(&self) -> Range<u64> {
        self.start..self.end
    }

    /// The piece of this mapping that truncating the file to `offset` pages unmaps, if any.
    pub fn unmapped_by_truncate(&self, offset: u64) -> Option<Unmapped> {
        (self.end > offset).then(|| Unmapped { mapping: *self, from: self.start.max(offset) })
    }
}

/// Why a mapping was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RmapError {
    /// The page range `start..end` maps nothing.
    EmptyRange {
        /// The region's id.
        id: u64,
        /// First page given.
        start: u64,
        /// End given.
        end: u64,
    },
}

impl fmt::Display for RmapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RmapError::EmptyRange { id, start, end } => {
                write!(f, "mapping {id}: page range {start}..{end} is empty or reversed (a mapping needs end > start)")
            }
        }
    }
}

impl std::error::Error for RmapError {}

/// What `truncate` unmapped from one mapping: its pages `from..mapping.end()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Unmapped {
    /// The mapping.
    pub mapping: Mapping,
    /// First page unmapped.
    pub from: u64,
}

/// A reverse map (see the module docs for each operation).
pub trait Rmap: Sync {
    /// `m` now maps the file.
    fn add(&self, m: Mapping);
    /// `m` no longer maps the file.
    fn remove(&self, m: Mapping);
    /// Unmaps every mapping's pages from `offset` on; returns what was unmapped, ordered by
    /// mapping.
    fn truncate(&self, offset: u64) -> Vec<Unmapped>;
    /// Every mapping, ordered.
    fn mappings(&self) -> Vec<Mapping>;
    /// The representation the OpLog object behind this variant is in now (the adaptive
    /// policy's choice in a default domain); `None` for variants not built on OpLog.
    fn representation(&self) -> Option<oplog::Representation> {
        None
    }
}

/// What truncating `tree` to `offset` unmaps, ordered by mapping: the `truncate` of every
/// variant over the interval tree (and of other OpLog rmaps built from [`LoggedSet`]).
pub fn truncate_tree(tree: &IntervalTree, offset: u64) -> Vec<Unmapped> {
    let mut out = Vec::new();
    tree.for_each_overlapping(offset, u64::MAX, |m| out.extend(m.unmapped_by_truncate(offset)));
    out
}

/// The log kind of an [`OpLogRmap`] (to build its domain): unordered by default.
pub type Kind<const ORDERED: bool = false> = SetKind<IntervalTree, AbsorbLocal, ORDERED>;

/// The OpLog rmap of 000 Figure 7 and §5.2, with local and global absorption.
///
/// `ORDERED = true` is the text's design, every update stamped with the clock and the logs
/// merged in time order ([`OrderedOpLogRmap`], `oplog-ordered` in `oplog-bench`). The
/// default skips the clock (`oplog`): under the identity rule the rmap's updates need no
/// order, because updates of different mappings commute and the add and remove of one
/// mapping that meet in a synchronize cancel whatever their order (see
/// [`crate::logged_set`], "Ordered or not"; 000 §7.3 makes the same observation for the
/// list). On the machines measured here the clock read is the larger part of an ordered
/// update's cost.
#[derive(Debug)]
pub struct OpLogRmap<const ORDERED: bool = false> {
    set: LoggedSet<IntervalTree, AbsorbLocal, ORDERED>,
}

/// The text's timestamped OpLog rmap.
pub type OrderedOpLogRmap = OpLogRmap<true>;

impl<const ORDERED: bool> OpLogRmap<ORDERED> {
    /// An empty rmap whose logs live in `domain`.
    pub fn new(domain: &Arc<Domain<Kind<ORDERED>>>) -> Self {
        Self { set: LoggedSet::with_domain(domain, IntervalTree::new()) }
    }

    /// The underlying logged set (for its statistics and domain).
    pub fn logged(&self) -> &LoggedSet<IntervalTree, AbsorbLocal, ORDERED> {
        &self.set
    }
}

impl<const ORDERED: bool> Default for OpLogRmap<ORDERED> {
    /// An empty rmap in the process-wide per-CPU domain.
    fn default() -> Self {
        Self::new(&Domain::global())
    }
}

impl<const ORDERED: bool> Rmap for OpLogRmap<ORDERED> {
    fn representation(&self) -> Option<oplog::Representation> {
        Some(self.set.representation())
    }
    #[inline]
    fn add(&self, m: Mapping) {
        self.set.add(m);
    }
    #[inline]
    fn remove(&self, m: Mapping) {
        self.set.remove(m);
    }
    fn truncate(&self, offset: u64) -> Vec<Unmapped> {
        self.set.read(|tree| truncate_tree(tree, offset))
    }
    fn mappings(&self) -> Vec<Mapping> {
        self.set.read(|tree| tree.iter().copied().collect())
    }
}

/// The interval tree behind one lock (`mutex`): the stock Linux rmap of 000 §3.
#[derive(Debug)]
pub struct MutexRmap {
    tree: Mutex<IntervalTree>,
}

impl MutexRmap {
    /// An empty rmap.
    pub fn new() -> Self {
        Self { tree: Mutex::new(IntervalTree::new(), "MutexRmap.tree") }
    }
}

impl Default for MutexRmap {
    fn default() -> Self {
        Self::new()
    }
}

impl Rmap for MutexRmap {
    #[inline]
    fn add(&self, m: Mapping) {
        self.tree.lock().insert(m);
    }
    #[inline]
    fn remove(&self, m: Mapping) {
        self.tree.lock().remove(&m);
    }
    fn truncate(&self, offset: u64) -> Vec<Unmapped> {
        truncate_tree(&self.tree.lock(), offset)
    }
    fn mappings(&self) -> Vec<Mapping> {
        self.tree.lock().iter().copied().collect()
    }
}

/// A lock-free list of mappings (`lockfree`): 000 §3's rmap "that replaces the interval
/// trees with lock-free lists". Truncate walks the whole list.
#[derive(Debug, Default)]
pub struct LockFreeRmap {
    list: HarrisList<Mapping>,
}

impl LockFreeRmap {
    /// An empty rmap.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Rmap for LockFreeRmap {
    #[inline]
    fn add(&self, m: Mapping) {
        self.list.insert(m);
    }
    #[inline]
    fn remove(&self, m: Mapping) {
        self.list.remove(&m);
    }
    fn truncate(&self, offset: u64) -> Vec<Unmapped> {
        let mut out = Vec::new();
        self.list.for_each(|m| out.extend(m.unmapped_by_truncate(offset)));
        out
    }
    fn mappings(&self) -> Vec<Mapping> {
        let mut out = Vec::new();
        self.list.for_each(|m| out.push(*m));
        out
    }
}

/// Runs a model operation on any rmap (the [`Concurrent`](oplog_model::Concurrent)
/// implementations of every variant and of `dyn Rmap`). The model's pages are `i64`.
///
/// # Panics
/// If the model names a mapping this rmap cannot hold: a negative page or an empty range.
fn call<R: Rmap + ?Sized>(rmap: &R, op: &RmapOp) -> RmapRet {
    match *op {
        RmapOp::Add(m) => rmap.add(from_model(m)),
        RmapOp::Remove(m) => rmap.remove(from_model(m)),
        RmapOp::Truncate(offset) => {
            let offset = u64::try_from(offset).unwrap_or_else(|_| panic!("truncate({offset}): a negative offset"));
            return RmapRet::Unmapped(rmap.truncate(offset).into_iter().map(to_model).collect());
        }
    }
    RmapRet::Done
}

/// The rmap's mapping for the model's.
fn from_model(m: model::Mapping) -> Mapping {
    let page = |p: i64| u64::try_from(p).unwrap_or_else(|_| panic!("model mapping {m:?}: page {p} is negative"));
    Mapping::new(m.m, page(m.start)..page(m.end)).unwrap_or_else(|e| panic!("model mapping {m:?}: {e}"))
}

/// The model's piece for what the rmap unmapped.
fn to_model(u: Unmapped) -> Piece {
    let page = |p: u64| i64::try_from(p).expect("pages that came from the model fit in i64");
    let m = u.mapping;
    Piece { mapping: model::Mapping { start: page(m.start), end: page(m.end), m: m.id }, from: page(u.from) }
}

crate::concurrent!(RmapModel, call, dyn Rmap, [[const O: bool] OpLogRmap<O>, [] MutexRmap, [] LockFreeRmap]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_reversed_range_is_rejected_with_a_clear_error() {
        // A reversed range, as a caller computing `start..end` wrongly would pass.
        let (start, end) = (10, 5);
        let e = Mapping::new(7, start..end).unwrap_err();
        assert_eq!(e, RmapError::EmptyRange { id: 7, start: 10, end: 5 });
        assert_eq!(e.to_string(), "mapping 7: page range 10..5 is empty or reversed (a mapping needs end > start)");
        assert!(Mapping::new(1, 3..3).is_err());
        assert_eq!(Mapping::new(1, 3..4).unwrap().pages(), 3..4);
    }

    #[test]
    fn truncate_unmaps_from_the_offset_or_the_start() {
        let m = Mapping::new(1, 10..20).unwrap();
        assert_eq!(m.unmapped_by_truncate(20), None);
        assert_eq!(m.unmapped_by_truncate(15), Some(Unmapped { mapping: m, from: 15 }));
        assert_eq!(m.unmapped_by_truncate(0), Some(Unmapped { mapping: m, from: 10 }));
    }
}
