//! The reverse map of 000 §4.3 (Figure 7): for one file, the mappings of it into address
//! spaces. `add` and `remove` are called by `mmap`, `fork` and `exit` (blind updates);
//! `truncate(o)` finds every mapping that reaches past page `o` and unmaps those pages.
//!
//! A mapping is a region's identity (a `vm_area_struct` pointer in Linux; it matters only
//! by equality) with the page interval `[s, e)` it maps. The state is the set of mappings,
//! as in `oplog_structures::rmap`: `add(m, s, e)` inserts the mapping, `remove(m, s, e)`
//! takes it out (the caller names the whole mapping, as Linux passes the `vm_area_struct`,
//! which knows its range), and either is a no-op when the mapping already is or is not
//! there. Truncating does not change the reverse map (the regions stay; their pages go):
//! its response is every piece it unmapped, `(m, s, e)` from page `max(s, o)`, ordered by
//! `(s, e, m)` as the interval tree walks them.
//!
//! Pages run from 0 to [`PAGES`]: small, because the analyzer enumerates every interval.

use crate::Model;
use crate::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param};
use std::collections::BTreeSet;

/// Number of pages the analyzer's intervals span (`0 ≤ s < e ≤ PAGES`).
pub const PAGES: i64 = 2;

/// Region `m` maps pages `[start, end)`. Ordered by `(start, end, m)`, the interval
/// tree's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mapping {
    /// First page.
    pub start: i64,
    /// One past the last page.
    pub end: i64,
    /// The region's identity.
    pub m: u64,
}

/// A reverse-map operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RmapOp {
    /// Record the mapping.
    Add(Mapping),
    /// Forget the mapping.
    Remove(Mapping),
    /// Unmap every page from `offset` on from every mapping reaching past it.
    Truncate(i64),
}

/// What `truncate` unmapped from one mapping: its pages from `from` to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Piece {
    /// The mapping.
    pub mapping: Mapping,
    /// First page unmapped.
    pub from: i64,
}

/// A reverse map's response.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RmapRet {
    /// `add` and `remove` (blind updates).
    Done,
    /// `truncate`: the pieces it unmapped, in mapping order.
    Unmapped(Vec<Piece>),
}

/// The reverse-map model: a set of mappings.
#[derive(Clone, Copy, Debug, Default)]
pub struct RmapModel;

impl Model for RmapModel {
    type State = BTreeSet<Mapping>;
    type Op = RmapOp;
    type Ret = RmapRet;

    fn name(&self) -> &str {
        "rmap"
    }

    fn init(&self) -> Self::State {
        BTreeSet::new()
    }

    fn step(&self, map: &mut Self::State, op: &RmapOp) -> RmapRet {
        match *op {
            RmapOp::Add(mapping) => {
                map.insert(mapping);
                RmapRet::Done
            }
            RmapOp::Remove(mapping) => {
                map.remove(&mapping);
                RmapRet::Done
            }
            RmapOp::Truncate(offset) => RmapRet::Unmapped(
                map.iter()
                    .filter(|m| m.end > offset)
                    .map(|&mapping| Piece { mapping, from: mapping.start.max(offset) })
                    .collect(),
            ),
        }
    }
}

impl Explore for RmapModel {
    fn kinds(&self) -> Vec<OpKind> {
        let mapping = [Param::symbol("m"), Param::int("s", 0, PAGES - 1), Param::int("e", 1, PAGES)];
        vec![
            OpKind::blind("add", &mapping),
            OpKind::blind("remove", &mapping),
            OpKind::returning("truncate", &[Param::int("o", 0, PAGES)]),
        ]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<RmapOp> {
        match (kind, args) {
            (0 | 1, &[Arg::Symbol(m), Arg::Int(start), Arg::Int(end)]) if start < end => {
                let mapping = Mapping { start, end, m };
                Some(if kind == 0 { RmapOp::Add(mapping) } else { RmapOp::Remove(mapping) })
            }
            (2, &[Arg::Int(o)]) => Some(RmapOp::Truncate(o)),
            _ => None,
        }
    }

    fn split(&self, op: &RmapOp) -> (usize, Vec<Arg>) {
        match *op {
            RmapOp::Add(Mapping { start, end, m }) => (0, vec![Arg::Symbol(m), Arg::Int(start), Arg::Int(end)]),
            RmapOp::Remove(Mapping { start, end, m }) => (1, vec![Arg::Symbol(m), Arg::Int(start), Arg::Int(end)]),
            RmapOp::Truncate(o) => (2, vec![Arg::Int(o)]),
        }
    }

    fn map_symbols(&self, map: &Self::State, f: &mut dyn FnMut(u64) -> u64) -> Self::State {
        map.iter().map(|&mapping| Mapping { m: f(mapping.m), ..mapping }).collect()
    }

    /// For each update, whether its mapping is in the map (`(m, s, e) ∈ M`); for two
    /// updates, whether they name the same mapping. (The analyzer compares a mapping's end
    /// with a truncation offset itself.)
    fn facts(&self, map: &Self::State, ops: &[NamedOp<'_, RmapOp>]) -> Vec<Fact> {
        let mut facts = Vec::new();
        let mut updates = Vec::new();
        for named in ops {
            if let RmapOp::Add(mapping) | RmapOp::Remove(mapping) = *named.op {
                let shown = format!("({}, {}, {})", named.name(0), named.name(1), named.name(2));
                facts.push(Fact::new(format!("{shown} ∈ M"), format!("{shown} ∉ M"), map.contains(&mapping)));
                updates.push((shown, mapping));
            }
        }
        if let [(a, ma), (b, mb)] = updates.as_slice() {
            facts.push(Fact::new(format!("{a} = {b}"), format!("{a} ≠ {b}"), ma == mb));
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_reports_the_pieces_past_the_offset_and_keeps_the_mappings() {
        let model = RmapModel;
        let mut s = model.init();
        let a = Mapping { start: 0, end: 1, m: 1 };
        let b = Mapping { start: 0, end: 2, m: 2 };
        model.step(&mut s, &RmapOp::Add(a));
        model.step(&mut s, &RmapOp::Add(b));
        model.step(&mut s, &RmapOp::Add(b));
        assert_eq!(s.len(), 2, "a mapping is in the map once");
        assert_eq!(model.step(&mut s, &RmapOp::Truncate(1)), RmapRet::Unmapped(vec![Piece { mapping: b, from: 1 }]));
        assert_eq!(
            model.step(&mut s, &RmapOp::Truncate(0)),
            RmapRet::Unmapped(vec![Piece { mapping: a, from: 0 }, Piece { mapping: b, from: 0 }])
        );
        // Removing names the whole mapping: the same region with another range is another
        // mapping.
        model.step(&mut s, &RmapOp::Remove(Mapping { start: 1, end: 2, m: 2 }));
        assert_eq!(s.len(), 2);
        model.step(&mut s, &RmapOp::Remove(b));
        assert_eq!(model.step(&mut s, &RmapOp::Truncate(0)), RmapRet::Unmapped(vec![Piece { mapping: a, from: 0 }]));
    }
}
