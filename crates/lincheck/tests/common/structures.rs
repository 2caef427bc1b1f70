//! The structures of `oplog-structures` under the checker: one adapter for all
//! ([`Structure`]: a name, the model, a factory of fresh objects and a plan), and per
//! structure a plan of operations that respects its documented preconditions.
//!
//! The absorbing variants (both rmaps, the global- and local-absorption lists, the open-file
//! list) require the **identity rule**: the updates naming one item alternate add, remove,
//! add, ... in real time. Their plans ([`identity_plans`]) give every thread items of its
//! own and make each thread flip them (add while absent, remove while present), so the rule
//! holds in every interleaving, while reads (`contains`, `truncate`, `list`) look at every
//! thread's items. The other structures take any sequence and get operations drawn
//! independently over a few shared keys.

use oplog_lincheck::{Adapter, Rng, independent};
use oplog_model::lru::LruOp;
use oplog_model::namecache::EntryOp;
use oplog_model::open_files::OpenFilesOp;
use oplog_model::queue::QueueOp;
use oplog_model::rmap::{Mapping, RmapOp};
use oplog_model::set::SetOp;
use oplog_model::{Concurrent, Model};

/// Draws the operations of one history: `threads` lists of `ops` operations.
pub type Plans<Op> = fn(&mut Rng, usize, usize) -> Vec<Vec<Op>>;

/// A structure under test: fresh objects from `new`, operations from `plans`.
pub struct Structure<M: Model, O> {
    name: String,
    model: M,
    new: Box<dyn Fn() -> O + Sync>,
    plans: Plans<M::Op>,
}

impl<M: Model, O> Structure<M, O> {
    pub fn new(name: impl Into<String>, model: M, new: impl Fn() -> O + Sync + 'static, plans: Plans<M::Op>) -> Self {
        Self { name: name.into(), model, new: Box::new(new), plans }
    }
}

impl<M: Model + Clone + Sync, O: Concurrent<M> + Send> Adapter for Structure<M, O> {
    type Model = M;
    type Object = O;
    fn model(&self) -> M {
        self.model.clone()
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn new_object(&self) -> O {
        (self.new)()
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<M::Op>> {
        (self.plans)(rng, threads, ops)
    }
}

/// Items each thread owns in an identity-rule plan.
pub const OWN: u64 = 2;

/// Plans under the identity rule (module docs): thread `t` owns items `t * OWN ..
/// (t + 1) * OWN`; `read_pct` percent of its operations are reads drawn by `read` (given the
/// number of items of all threads), the others flip one of its items (`flip(item, true)`
/// adds it, `flip(item, false)` removes it).
pub fn identity_plans<Op>(
    rng: &mut Rng,
    threads: usize,
    ops: usize,
    read_pct: u8,
    flip: impl Fn(u64, bool) -> Op,
    read: impl Fn(&mut Rng, u64) -> Op,
) -> Vec<Vec<Op>> {
    let items = threads as u64 * OWN;
    (0..threads as u64)
        .map(|t| {
            let mut present = [false; OWN as usize];
            (0..ops)
                .map(|_| {
                    if rng.u8(..100) < read_pct {
                        return read(rng, items);
                    }
                    let i = rng.usize(..OWN as usize);
                    present[i] = !present[i];
                    flip(t * OWN + i as u64, present[i])
                })
                .collect()
        })
        .collect()
}

/// Item `i` of the rmap plans as a mapping: region `i` over one or two of pages 0..4, so
/// mappings overlap and truncations cut some and spare others.
fn mapping(i: u64) -> Mapping {
    let start = (i % 3) as i64;
    Mapping { start, end: start + 1 + (i % 2) as i64, m: i }
}

/// The rmaps (identity rule): each thread maps and unmaps its own regions; truncations at
/// pages 0..=3 read every thread's.
pub fn rmap_plans(rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<RmapOp>> {
    identity_plans(
        rng,
        threads,
        ops,
        35,
        |i, add| if add { RmapOp::Add(mapping(i)) } else { RmapOp::Remove(mapping(i)) },
        |rng, _| RmapOp::Truncate(rng.i64(0..=3)),
    )
}

/// The notification queue (any sequence): enqueues of events unique in the history (so any
/// reordering shows) and dequeues, on every thread.
pub fn queue_plans(rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<QueueOp>> {
    (0..threads as u64)
        .map(|t| {
            (0..ops as u64)
                .map(|i| if rng.u8(..10) < 6 { QueueOp::Enqueue(t * 100 + i) } else { QueueOp::Dequeue })
                .collect()
        })
        .collect()
}

/// The LRU list (any sequence): touches and removals of three shared keys, evictions.
pub fn lru_plans(rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<LruOp>> {
    independent(rng, threads, ops, |rng| match rng.u8(..20) {
        0..9 => LruOp::Touch(rng.u64(..3)),
        9..13 => LruOp::Remove(rng.u64(..3)),
        _ => LruOp::Evict,
    })
}

/// The basic list (any sequence): adds, removes and lookups of three shared elements.
pub fn any_set_plans(rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<SetOp>> {
    independent(rng, threads, ops, |rng| super::random_set_op(rng, true))
}

/// The absorbing lists (identity rule): each thread adds and removes its own elements;
/// lookups ask for any thread's.
pub fn identity_set_plans(rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<SetOp>> {
    identity_plans(
        rng,
        threads,
        ops,
        35,
        |x, add| if add { SetOp::Add(x) } else { SetOp::Remove(x) },
        |rng, items| SetOp::Contains(rng.u64(..items)),
    )
}

/// The open-file list (identity rule: a handle is unique while open): each thread opens
/// and closes its own files; listings read every thread's.
pub fn open_files_plans(rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<OpenFilesOp>> {
    identity_plans(
        rng,
        threads,
        ops,
        30,
        |f, open| if open { OpenFilesOp::Open(f) } else { OpenFilesOp::Close(f) },
        |_, _| OpenFilesOp::List,
    )
}

/// The name-cache entry, one of two mixes per history (a fresh entry is at generation 0):
///
/// * references: lookups of generation 0 (never invalidated, so they succeed), releases
///   of references the releasing thread took earlier (a release without one is a caller
///   bug), and reads of the count and the generation;
/// * generations: invalidations racing lookups of generations 0..3 (some stale, some not)
///   and reads of the generation.
///
/// Never `refcount` beside a lookup that can fail: the entry documents that a failing
/// lookup on the OpLog counter has already added its reference, so a concurrent
/// `refcount` may over-count it (000 §3's protocol; `oplog_structures::namecache`).
pub fn entry_plans(rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<EntryOp>> {
    if rng.bool() {
        (0..threads)
            .map(|_| {
                let mut held = 0;
                (0..ops)
                    .map(|_| match rng.u8(..10) {
                        0..3 if held > 0 => {
                            held -= 1;
                            EntryOp::Release
                        }
                        0..6 => {
                            held += 1;
                            EntryOp::Lookup(0)
                        }
                        6..9 => EntryOp::Refcount,
                        _ => EntryOp::Generation,
                    })
                    .collect()
            })
            .collect()
    } else {
        independent(rng, threads, ops, |rng| match rng.u8(..10) {
            0..3 => EntryOp::Invalidate,
            3..8 => EntryOp::Lookup(rng.u32(0..3)),
            _ => EntryOp::Generation,
        })
    }
}
