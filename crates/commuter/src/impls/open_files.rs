//! The open-file list of 000 §7.4 (`oplog_structures::open_files`): the OpLog set of open
//! files (unordered log, local and global absorption), the set under a mutex, and the
//! per-core lists of 004 §4.5 (`close` on another core than the `open` searches and locks
//! the other cores' lists).
//!
//! The OpLog version absorbs, so it requires the identity rule ([`IDENTITY`]; see the
//! [module docs](super) on contracts): a file is opened only while closed and closed only
//! while open. The per-core lists need it too, although their docs promise set semantics
//! for any sequence: an `open` of a file already open on another core's list adds it to the
//! calling core's list a second time, so `list()` returns it twice (found by this checker:
//! `setup: open(s0) | A: open(s0) | B: list()` answers `[s0, s0]`), and one `close` leaves
//! the other copy. The mutex version takes any sequence.

use oplog_model::Concurrent;
use oplog_model::open_files::{OpenFilesModel, OpenFilesOp};
use oplog_structures::open_files::{MutexOpenFiles, OpLogOpenFiles, OpenFiles, PerCoreOpenFiles};

use super::{Contract, Impl, Object, WARM_KEY, domain, identity_rule, identity_rule_name};
use crate::models::{Explored, explored};
use crate::tracer::CPUS;

explored!(OpenFilesModel: OpLogOpenFiles, MutexOpenFiles, PerCoreOpenFiles);

/// Opens and closes a file the model never uses: the core's slot (OpLog) or list (per-core)
/// now holds it, and the set is unchanged. The identity rule holds.
fn warm(files: &dyn Concurrent<Explored<OpenFilesModel>>) {
    files.call(&OpenFilesOp::Open(WARM_KEY));
    files.call(&OpenFilesOp::Close(WARM_KEY));
}

impl Object<Explored<OpenFilesModel>> for OpLogOpenFiles {
    fn warm(&self) {
        warm(self);
    }

    /// Lists the open files twice: the first read applies what the set-up logged (see the
    /// counter's `quiesce`).
    fn quiesce(&self) {
        self.open_files();
        self.open_files();
    }
}

impl Object<Explored<OpenFilesModel>> for MutexOpenFiles {
    fn warm(&self) {
        warm(self);
    }
}

impl Object<Explored<OpenFilesModel>> for PerCoreOpenFiles {
    fn warm(&self) {
        warm(self);
    }
}

/// The identity rule of the OpLog and per-core versions: a file is opened only while
/// closed and closed only while open (a file handle is unique while open).
pub const IDENTITY: Contract<Explored<OpenFilesModel>> = Contract {
    name: identity_rule_name!("a file", "file"),
    admits: |files, op| match *op {
        OpenFilesOp::Open(f) => identity_rule(true, files.contains(&f)),
        OpenFilesOp::Close(f) => identity_rule(false, files.contains(&f)),
        OpenFilesOp::List => true,
    },
};

/// The open-file list's implementations under test.
pub fn impls() -> Vec<Impl<Explored<OpenFilesModel>>> {
    vec![
        Impl {
            id: "oplog",
            about: "oplog_structures::open_files::OpLogOpenFiles: unordered per-core logs over a set, local and global \
                    absorption (000 §7.4)",
            build: || Box::new(OpLogOpenFiles::new(&domain())),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "percore",
            about: "oplog_structures::open_files::PerCoreOpenFiles: one locked list per core (004 §4.5)",
            build: || Box::new(PerCoreOpenFiles::with_cores(CPUS)),
            contract: Some(IDENTITY),
        },
        Impl {
            id: "mutex",
            about: "oplog_structures::open_files::MutexOpenFiles: the set under a mutex",
            build: || Box::new(MutexOpenFiles::new()),
            contract: None,
        },
    ]
}
