//! The open-object list of 000 §7.4: every open file of a file system, added on `open`,
//! removed on `close`, and iterated rarely (to decide whether the file system can be
//! remounted read-only, 004 §4.5).
//!
//! Variants, all implementing [`OpenFiles`]:
//!
//! * [`OpLogOpenFiles`]: the set of open files as an OpLog object (000 §7.4: 8 lines of
//!   OpLog against 133 for per-core lists). File handles are unique while open, so the
//!   updates need no order (an unordered log: no clock read), and a close on the core
//!   that opened the file cancels the open in that core's log (local absorption; global
//!   absorption during synchronize for a file closed on another core).
//! * [`MutexOpenFiles`]: the stock design, one set behind one lock.
//! * [`PerCoreOpenFiles`]: the per-core lists of 004 §4.5: `open` locks the current core's
//!   list and adds the file; `close` removes it from the current core's list, or, if the
//!   process migrated since the open, searches the other cores' lists ("expensively
//!   removed from the list of the original core"); iteration locks every list.
//!
//! # Operations
//!
//! * `open(f)`: file `f` is open. `f` must not be open already (identity rule, crate docs).
//! * `close(f)`: file `f` is closed. `f` must be open.
//! * `open_files()`: every open file, ascending.
//!
//! The identity rule is what makes the OpLog variant's absorption invisible, and the
//! per-core lists need it too (a file opened again while open on another core's list is
//! listed twice: `open` looks only at the current core's list, as in 004 §4.5, where a
//! `struct file` is opened once); only [`MutexOpenFiles`] gives set semantics to any
//! sequence (found by the commutativity checker, `crates/commuter`). The model is
//! `oplog_model::open_files::OpenFilesModel`.

use crate::logged_set::{AbsorbLocal, LoggedSet, SetKind};
use crossbeam_utils::CachePadded;
use oplog::Domain;
use oplog_model::open_files::{OpenFilesModel, OpenFilesOp, OpenFilesRet};
use oplog_percore::primitive::{Mutex, MutexGuard, current_cpu};
use std::collections::HashSet;
use std::sync::Arc;

/// An open file's identity (the texts' `struct file *`).
pub use oplog_model::open_files::FileId;

/// The set of a file system's open files (see the module docs for each operation).
pub trait OpenFiles: Sync {
    /// File `f` was opened.
    fn open(&self, f: FileId);
    /// File `f` was closed.
    fn close(&self, f: FileId);
    /// Every open file, ascending.
    fn open_files(&self) -> Vec<FileId>;
}

fn sorted(set: &HashSet<FileId>) -> Vec<FileId> {
    let mut v: Vec<FileId> = set.iter().copied().collect();
    v.sort_unstable();
    v
}

/// The log kind of [`OpLogOpenFiles`] (to build its domain).
pub type Kind = SetKind<HashSet<FileId>, AbsorbLocal, false>;

/// The open-file set as an OpLog object.
#[derive(Debug)]
pub struct OpLogOpenFiles {
    set: LoggedSet<HashSet<FileId>, AbsorbLocal, false>,
}

impl OpLogOpenFiles {
    /// An empty set whose logs live in `domain`.
    pub fn new(domain: &Arc<Domain<Kind>>) -> Self {
        Self { set: LoggedSet::with_domain(domain, HashSet::new()) }
    }

    /// The underlying logged set (for its statistics and domain).
    pub fn logged(&self) -> &LoggedSet<HashSet<FileId>, AbsorbLocal, false> {
        &self.set
    }
}

impl Default for OpLogOpenFiles {
    /// An empty set in the process-wide per-CPU domain.
    fn default() -> Self {
        Self::new(&Domain::global())
    }
}

impl OpenFiles for OpLogOpenFiles {
    #[inline]
    fn open(&self, f: FileId) {
        self.set.add(f);
    }
    #[inline]
    fn close(&self, f: FileId) {
        self.set.remove(f);
    }
    fn open_files(&self) -> Vec<FileId> {
        self.set.read(sorted)
    }
}

/// One set of open files behind one lock.
#[derive(Debug)]
pub struct MutexOpenFiles {
    set: Mutex<HashSet<FileId>>,
}

impl MutexOpenFiles {
    /// An empty set.
    pub fn new() -> Self {
        Self { set: Mutex::new(HashSet::new(), "MutexOpenFiles.set") }
    }
}

impl Default for MutexOpenFiles {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenFiles for MutexOpenFiles {
    fn open(&self, f: FileId) {
        self.set.lock().insert(f);
    }
    fn close(&self, f: FileId) {
        self.set.lock().remove(&f);
    }
    fn open_files(&self) -> Vec<FileId> {
        sorted(&self.set.lock())
    }
}

/// Per-core lists of open files (004 §4.5).
#[derive(Debug)]
pub struct PerCoreOpenFiles {
    lists: Box<[CachePadded<Mutex<HashSet<FileId>>>]>,
}

impl PerCoreOpenFiles {
    /// One list per CPU the system may report.
    pub fn new() -> Self {
        Self::with_cores(ordo::cpu::possible())
    }

    /// `cores` lists (at least 1); CPU `c` uses list `c % cores`.
    pub fn with_cores(cores: usize) -> Self {
        let lists = (0..cores.max(1)).map(|_| CachePadded::new(Mutex::new(HashSet::new(), "PerCoreOpenFiles.list")));
        Self { lists: lists.collect() }
    }

    fn home(&self) -> usize {
        current_cpu() % self.lists.len()
    }
}

impl Default for PerCoreOpenFiles {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenFiles for PerCoreOpenFiles {
    fn open(&self, f: FileId) {
        self.lists[self.home()].lock().insert(f);
    }

    fn close(&self, f: FileId) {
        let home = self.home();
        if self.lists[home].lock().remove(&f) {
            return;
        }
        // Opened on another core: search the others, one at a time. The file is in exactly
        // one list (identity rule), so it cannot move while this runs.
        for (i, list) in self.lists.iter().enumerate() {
            if i != home && list.lock().remove(&f) {
                return;
            }
        }
    }

    fn open_files(&self) -> Vec<FileId> {
        // Every list at once, in index order, so the answer is one instant's set.
        let guards: Vec<MutexGuard<'_, HashSet<FileId>>> = self.lists.iter().map(|l| l.lock()).collect();
        let mut v: Vec<FileId> = guards.iter().flat_map(|g| g.iter().copied()).collect();
        v.sort_unstable();
        v
    }
}

/// Runs a model operation on any open-file list (the
/// [`Concurrent`](oplog_model::Concurrent) implementations of every variant and of
/// `dyn OpenFiles`).
fn call<O: OpenFiles + ?Sized>(files: &O, op: &OpenFilesOp) -> OpenFilesRet {
    match *op {
        OpenFilesOp::Open(f) => files.open(f),
        OpenFilesOp::Close(f) => files.close(f),
        OpenFilesOp::List => return OpenFilesRet::Files(files.open_files()),
    }
    OpenFilesRet::Done
}

crate::concurrent!(OpenFilesModel, call, dyn OpenFiles, [[] OpLogOpenFiles, [] MutexOpenFiles, [] PerCoreOpenFiles]);
