//! The name-cache entry of 000 §3 (stat) and 004 §4.4: a generation number and a
//! reference count, as `oplog_structures::namecache`.
//!
//! A lookup reads the entry's generation before copying its fields, then takes a reference
//! only if the generation is unchanged: `lookup(g)` takes one if the generation is `g` and
//! otherwise fails, reporting the current generation. `release` drops a reference,
//! `invalidate` bumps the generation (wrapping at 2³²) and returns the new one,
//! `generation` and `refcount` read.
//!
//! Releasing a reference that was never taken is a caller bug: the implementations panic
//! (at once, or when the count is next read). The model answers [`EntryRet::NotHeld`], which
//! no implementation returns, and changes nothing, so a history that releases more than it
//! took can never be explained.

use crate::Model;

/// A name-cache-entry operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntryOp {
    /// Take a reference if the generation is still this one.
    Lookup(u32),
    /// Drop a reference taken by a successful lookup.
    Release,
    /// Bump the generation.
    Invalidate,
    /// Read the generation.
    Generation,
    /// Read the reference count.
    Refcount,
}

/// A name-cache entry's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryRet {
    /// `lookup`: the reference was taken.
    Taken,
    /// `lookup`: the generation had changed; this is the current one.
    Stale(u32),
    /// `release`.
    Done,
    /// `release` with no reference held (a caller bug no implementation answers).
    NotHeld,
    /// `invalidate` (the new generation) and `generation`.
    Generation(u32),
    /// `refcount`.
    Refcount(u64),
}

/// The entry's state: its generation and the references held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entry {
    /// The generation.
    pub generation: u32,
    /// References held.
    pub refs: u64,
}

/// The name-cache-entry model, starting at generation `initial` with no references.
#[derive(Clone, Copy, Debug, Default)]
pub struct EntryModel {
    /// The generation of a fresh entry.
    pub initial: u32,
}

impl Model for EntryModel {
    type State = Entry;
    type Op = EntryOp;
    type Ret = EntryRet;

    fn name(&self) -> &str {
        "name-cache entry"
    }

    fn init(&self) -> Entry {
        Entry { generation: self.initial, refs: 0 }
    }

    fn step(&self, e: &mut Entry, op: &EntryOp) -> EntryRet {
        match *op {
            EntryOp::Lookup(g) if g == e.generation => {
                e.refs += 1;
                EntryRet::Taken
            }
            EntryOp::Lookup(_) => EntryRet::Stale(e.generation),
            EntryOp::Release => match e.refs.checked_sub(1) {
                Some(left) => {
                    e.refs = left;
                    EntryRet::Done
                }
                None => EntryRet::NotHeld,
            },
            EntryOp::Invalidate => {
                e.generation = e.generation.wrapping_add(1);
                EntryRet::Generation(e.generation)
            }
            EntryOp::Generation => EntryRet::Generation(e.generation),
            EntryOp::Refcount => EntryRet::Refcount(e.refs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_lookups_fail_and_generations_wrap() {
        let m = EntryModel { initial: u32::MAX };
        let mut e = m.init();
        assert_eq!(m.step(&mut e, &EntryOp::Lookup(u32::MAX)), EntryRet::Taken);
        assert_eq!(m.step(&mut e, &EntryOp::Invalidate), EntryRet::Generation(0));
        assert_eq!(m.step(&mut e, &EntryOp::Lookup(u32::MAX)), EntryRet::Stale(0));
        assert_eq!(m.step(&mut e, &EntryOp::Refcount), EntryRet::Refcount(1));
        assert_eq!(m.step(&mut e, &EntryOp::Release), EntryRet::Done);
        assert_eq!(m.step(&mut e, &EntryOp::Release), EntryRet::NotHeld, "nothing was held");
        assert_eq!(e, Entry { generation: 0, refs: 0 });
    }
}
