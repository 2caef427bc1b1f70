//! The reverse map of 000 §4.3 (Figure 7): for one file, the mappings of it into address
//! spaces. `add` and `remove` are called by `mmap`, `fork` and `exit` (blind updates);
//! `truncate(o)` finds every mapping that reaches past page `o` and unmaps those pages.
//!
//! A mapping is an identity (a `vm_area_struct` pointer in Linux; it matters only by
//! equality) with a page interval `[s, e)`. Adding an identity already present changes
//! nothing (a region is added once, 000 §5.2). Truncating does not change the reverse map
//! (the regions stay; their pages go): its response is the set of mappings it unmapped
//! pages from, which is what the rest of the system observes.
//!
//! Pages run from 0 to [`PAGES`]: small, because the analyzer enumerates every interval.

use crate::Model;
use crate::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param, symbol_facts};
use std::collections::BTreeMap;

/// Number of pages the analyzer's intervals span (`0 ≤ s < e ≤ PAGES`).
pub const PAGES: i64 = 2;

/// A reverse-map operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RmapOp {
    /// Record mapping `m` of pages `[start, end)`.
    Add {
        /// The mapping's identity.
        m: u64,
        /// First page.
        start: i64,
        /// One past the last page.
        end: i64,
    },
    /// Forget mapping `m`.
    Remove(u64),
    /// Unmap every page from `offset` on from every mapping reaching past it.
    Truncate(i64),
}

/// A reverse map's response.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RmapRet {
    /// `add` and `remove` (blind updates).
    Done,
    /// `truncate`: the mappings it unmapped pages from, ascending.
    Unmapped(Vec<u64>),
}

/// The reverse-map model: mapping → `(start, end)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RmapModel;

impl Model for RmapModel {
    type State = BTreeMap<u64, (i64, i64)>;
    type Op = RmapOp;
    type Ret = RmapRet;

    fn name(&self) -> &str {
        "rmap"
    }

    fn init(&self) -> Self::State {
        BTreeMap::new()
    }

    fn step(&self, map: &mut Self::State, op: &RmapOp) -> RmapRet {
        match *op {
            RmapOp::Add { m, start, end } => {
                map.entry(m).or_insert((start, end));
                RmapRet::Done
            }
            RmapOp::Remove(m) => {
                map.remove(&m);
                RmapRet::Done
            }
            RmapOp::Truncate(offset) => {
                RmapRet::Unmapped(map.iter().filter(|&(_, &(_, end))| end > offset).map(|(&m, _)| m).collect())
            }
        }
    }
}

impl Explore for RmapModel {
    fn kinds(&self) -> Vec<OpKind> {
        vec![
            OpKind::blind("add", &[Param::symbol("m"), Param::int("s", 0, PAGES - 1), Param::int("e", 1, PAGES)]),
            OpKind::blind("remove", &[Param::symbol("m")]),
            OpKind::returning("truncate", &[Param::int("o", 0, PAGES)]),
        ]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<RmapOp> {
        match (kind, args) {
            (0, &[Arg::Symbol(m), Arg::Int(start), Arg::Int(end)]) if start < end => {
                Some(RmapOp::Add { m, start, end })
            }
            (1, &[Arg::Symbol(m)]) => Some(RmapOp::Remove(m)),
            (2, &[Arg::Int(o)]) => Some(RmapOp::Truncate(o)),
            _ => None,
        }
    }

    fn split(&self, op: &RmapOp) -> (usize, Vec<Arg>) {
        match *op {
            RmapOp::Add { m, start, end } => (0, vec![Arg::Symbol(m), Arg::Int(start), Arg::Int(end)]),
            RmapOp::Remove(m) => (1, vec![Arg::Symbol(m)]),
            RmapOp::Truncate(o) => (2, vec![Arg::Int(o)]),
        }
    }

    fn map_symbols(&self, map: &Self::State, f: &mut dyn FnMut(u64) -> u64) -> Self::State {
        map.iter().map(|(&m, &range)| (f(m), range)).collect()
    }

    /// For each mapping argument `m`, `m ∈ M`; for each mapping argument and each
    /// truncation offset `o` of the other operation, whether `m` is mapped past `o`.
    fn facts(&self, map: &Self::State, ops: &[NamedOp<'_, RmapOp>]) -> Vec<Fact> {
        let mut facts = symbol_facts(
            ops,
            |op| self.split(op).1,
            |m| format!("{m} ∈ M"),
            |m| format!("{m} ∉ M"),
            |m| map.contains_key(&m),
        );
        for (i, a) in ops.iter().enumerate() {
            for (j, b) in ops.iter().enumerate() {
                let (&(RmapOp::Add { m, .. } | RmapOp::Remove(m)), &RmapOp::Truncate(o)) = (a.op, b.op) else {
                    continue;
                };
                if i == j {
                    continue;
                }
                let past = map.get(&m).is_some_and(|&(_, end)| end > o);
                let (m, o) = (a.name(0), b.name(0));
                facts.push(Fact::new(format!("{m} mapped past {o}"), format!("{m} not mapped past {o}"), past));
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_reports_mappings_past_the_offset_and_keeps_them() {
        let m = RmapModel;
        let mut s = m.init();
        m.step(&mut s, &RmapOp::Add { m: 1, start: 0, end: 1 });
        m.step(&mut s, &RmapOp::Add { m: 2, start: 0, end: 2 });
        m.step(&mut s, &RmapOp::Add { m: 2, start: 1, end: 2 });
        assert_eq!(s[&2], (0, 2), "a mapping is added once");
        assert_eq!(m.step(&mut s, &RmapOp::Truncate(1)), RmapRet::Unmapped(vec![2]));
        assert_eq!(m.step(&mut s, &RmapOp::Truncate(0)), RmapRet::Unmapped(vec![1, 2]));
        m.step(&mut s, &RmapOp::Remove(2));
        assert_eq!(m.step(&mut s, &RmapOp::Truncate(0)), RmapRet::Unmapped(vec![1]));
    }
}
