//! The name-cache entry of 000 §3 and 004 §4.4 (`oplog_structures::namecache`): the
//! OpLog entry, whose lookup counts its reference in the OpLog distributed counter and then
//! reads the generation, beside the texts' baselines, the entry under a ticket spinlock and
//! the lock-free entry that packs generation and count in one word.
//!
//! Releasing a reference that was never taken is a caller bug (the baselines panic, the
//! OpLog entry's count goes negative), which the model answers with `NotHeld`: every
//! implementation has the contract [`HELD`].

use oplog_model::namecache::{EntryModel, EntryOp};
use oplog_structures::namecache::{CasEntry, NameEntry, OpLogEntry, SpinlockEntry};

use super::{Contract, Impl, Object, domain};
use crate::models::namecache::MODEL;
use crate::models::{Explored, explored};

explored!(EntryModel: SpinlockEntry, CasEntry, OpLogEntry);

impl Object<Explored<EntryModel>> for OpLogEntry {
    /// Looks the fresh entry up at its generation (0) and releases the reference: the
    /// core's slot now holds the counter, and the count is 0 again.
    fn warm(&self) {
        assert_eq!(self.lookup(MODEL.0.initial), Ok(()), "a fresh entry is at its initial generation");
        self.release();
    }

    /// Reads the reference count twice (a synchronize of the counter; see the counter's
    /// `quiesce`).
    fn quiesce(&self) {
        self.refcount();
        self.refcount();
    }
}

impl Object<Explored<EntryModel>> for SpinlockEntry {}

impl Object<Explored<EntryModel>> for CasEntry {}

/// The callers' obligation: a reference is released only while one is held.
pub const HELD: Contract<Explored<EntryModel>> = Contract {
    name: "a reference is released only while one is held (taken by a lookup)",
    admits: |entry, op| *op != EntryOp::Release || entry.refs > 0,
};

/// The name-cache entry's implementations under test (each a fresh entry at generation 0).
pub fn impls() -> Vec<Impl<Explored<EntryModel>>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog_structures::namecache::OpLogEntry: the OpLog distributed counter beside the generation \
                    (000 §3)",
            build: || Box::new(OpLogEntry::new(&domain(), MODEL.0.initial)),
            contract: Some(HELD),
        },
        Impl {
            id: "spinlock",
            about: "oplog_structures::namecache::SpinlockEntry: the count under a ticket spinlock (\"stock\")",
            build: || Box::new(SpinlockEntry::new(MODEL.0.initial)),
            contract: Some(HELD),
        },
        Impl {
            id: "cas",
            about: "oplog_structures::namecache::CasEntry: generation and count in one word, one compare-and-swap \
                    (004 §4.4)",
            build: || Box::new(CasEntry::new(MODEL.0.initial)),
            contract: Some(HELD),
        },
    ]
}
