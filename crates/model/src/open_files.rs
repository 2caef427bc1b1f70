//! The open-object list of 000 §7.4 (004 §4.5): every open file of a file system, added on
//! `open`, removed on `close`, listed rarely (to decide whether the file system can be
//! remounted read-only), as `oplog_structures::open_files`.
//!
//! The state is the set of open files. `open` of an open file and `close` of a closed one
//! change nothing here; the OpLog implementation forbids them (its identity rule: a file
//! handle is unique while open), the others accept them. `list` returns every open file,
//! ascending.

use crate::Model;
use std::collections::BTreeSet;

/// An open file's identity (the texts' `struct file *`).
pub type FileId = u64;

/// An open-file-list operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpenFilesOp {
    /// File `f` was opened.
    Open(FileId),
    /// File `f` was closed.
    Close(FileId),
    /// Every open file.
    List,
}

/// An open-file list's response.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpenFilesRet {
    /// `open` and `close` (blind updates).
    Done,
    /// `list`: the open files, ascending.
    Files(Vec<FileId>),
}

/// The open-file-list model: a set of file ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenFilesModel;

impl Model for OpenFilesModel {
    type State = BTreeSet<FileId>;
    type Op = OpenFilesOp;
    type Ret = OpenFilesRet;

    fn name(&self) -> &str {
        "open files"
    }

    fn init(&self) -> BTreeSet<FileId> {
        BTreeSet::new()
    }

    fn step(&self, files: &mut BTreeSet<FileId>, op: &OpenFilesOp) -> OpenFilesRet {
        match *op {
            OpenFilesOp::Open(f) => {
                files.insert(f);
                OpenFilesRet::Done
            }
            OpenFilesOp::Close(f) => {
                files.remove(&f);
                OpenFilesRet::Done
            }
            OpenFilesOp::List => OpenFilesRet::Files(files.iter().copied().collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_gives_the_open_files_ascending() {
        let m = OpenFilesModel;
        let mut s = m.init();
        for op in [OpenFilesOp::Open(9), OpenFilesOp::Open(2), OpenFilesOp::Open(5), OpenFilesOp::Close(9)] {
            assert_eq!(m.step(&mut s, &op), OpenFilesRet::Done);
        }
        assert_eq!(m.step(&mut s, &OpenFilesOp::List), OpenFilesRet::Files(vec![2, 5]));
    }
}
