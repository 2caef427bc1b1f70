//! The name-cache entry's `Explore` extension (000 §3, 004 §4.4): the specification is
//! `oplog_model::namecache::EntryModel`, a generation number and a reference count.
//!
//! `lookup(g)` takes a reference if the generation is still `g` and otherwise reports the
//! current one; `release` is the one blind update; `invalidate` bumps the generation and
//! returns the new one; `generation` and `refcount` read. A generation is a number (an
//! `invalidate` adds one), so `g` ranges over the generations the search can reach:
//! `0..=`[`MAX_GENERATION`] from a fresh entry at generation 0.

use oplog_model::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param};
use oplog_model::namecache::{Entry, EntryModel, EntryOp};

use super::Explored;

/// The largest generation a `lookup` names: the structure's search depth (every step of a
/// set-up an `invalidate`).
pub const MAX_GENERATION: i64 = 3;

/// The name-cache entry's model as the analyzer explores it (a fresh entry is at
/// generation 0).
pub const MODEL: Explored<EntryModel> = Explored(EntryModel { initial: 0 });

impl Explore for Explored<EntryModel> {
    fn kinds(&self) -> Vec<OpKind> {
        vec![
            OpKind::returning("lookup", &[Param::int("g", 0, MAX_GENERATION)]),
            OpKind::blind("release", &[]),
            OpKind::returning("invalidate", &[]),
            OpKind::returning("generation", &[]),
            OpKind::returning("refcount", &[]),
        ]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<EntryOp> {
        match (kind, args) {
            (0, &[Arg::Int(g)]) => u32::try_from(g).ok().map(EntryOp::Lookup),
            (1, []) => Some(EntryOp::Release),
            (2, []) => Some(EntryOp::Invalidate),
            (3, []) => Some(EntryOp::Generation),
            (4, []) => Some(EntryOp::Refcount),
            _ => None,
        }
    }

    fn split(&self, op: &EntryOp) -> (usize, Vec<Arg>) {
        match *op {
            EntryOp::Lookup(g) => (0, vec![Arg::Int(i64::from(g))]),
            EntryOp::Release => (1, Vec::new()),
            EntryOp::Invalidate => (2, Vec::new()),
            EntryOp::Generation => (3, Vec::new()),
            EntryOp::Refcount => (4, Vec::new()),
        }
    }

    fn map_symbols(&self, e: &Entry, _: &mut dyn FnMut(u64) -> u64) -> Entry {
        *e
    }

    /// `g = gen` for each lookup's generation; whether no reference is held (`r = 0`: a
    /// release is a caller bug) or one is (`r = 1`: one of two releases is).
    fn facts(&self, e: &Entry, ops: &[NamedOp<'_, EntryOp>]) -> Vec<Fact> {
        let mut facts: Vec<Fact> = ops
            .iter()
            .filter_map(|named| match *named.op {
                EntryOp::Lookup(g) => {
                    let name = named.name(0);
                    Some(Fact::new(format!("{name} = gen"), format!("{name} ≠ gen"), g == e.generation))
                }
                _ => None,
            })
            .collect();
        facts.push(Fact::new("r = 0", "r ≠ 0", e.refs == 0));
        facts.push(Fact::new("r = 1", "r ≠ 1", e.refs == 1));
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::{Bounds, analyze};

    /// Lookups commute with each other and with every operation that leaves the
    /// generation alone; `invalidate` commutes only with what ignores the generation.
    #[test]
    fn lookups_commute_unless_the_generation_changes() {
        let analysis = analyze(&MODEL, &Bounds { depth: 2, ..Bounds::default() }).unwrap();
        let condition =
            |a: &str, b: &str| analysis.pairs.iter().find(|p| (p.a_name, p.b_name) == (a, b)).unwrap().summary.render();
        assert_eq!(condition("lookup", "lookup"), "always");
        assert_eq!(condition("lookup", "release"), "unless g = gen ∧ r = 0");
        assert_eq!(condition("lookup", "invalidate"), "never");
        assert_eq!(condition("lookup", "generation"), "always");
        assert_eq!(condition("lookup", "refcount"), "iff g ≠ gen");
        assert_eq!(condition("release", "release"), "iff r ≠ 1");
        assert_eq!(condition("release", "invalidate"), "always");
        assert_eq!(condition("invalidate", "invalidate"), "never");
        assert_eq!(condition("invalidate", "refcount"), "always");
    }
}
