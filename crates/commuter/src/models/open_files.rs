//! The open-file list's `Explore` extension (000 §7.4, 004 §4.5): the specification is
//! `oplog_model::open_files::OpenFilesModel`, a set of file ids; `open(f)` and `close(f)`
//! are blind updates and `list()` returns every open file. A file id matters only by
//! equality (a symbol).

use std::collections::BTreeSet;

use oplog_model::explore::{Arg, Explore, Fact, NamedOp, OpKind, Param, symbol_facts};
use oplog_model::open_files::{FileId, OpenFilesModel, OpenFilesOp};

use super::Explored;

/// The open-file list's model as the analyzer explores it.
pub const MODEL: Explored<OpenFilesModel> = Explored(OpenFilesModel);

impl Explore for Explored<OpenFilesModel> {
    fn kinds(&self) -> Vec<OpKind> {
        let f = [Param::symbol("f")];
        vec![OpKind::blind("open", &f), OpKind::blind("close", &f), OpKind::returning("list", &[])]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<OpenFilesOp> {
        match (kind, args) {
            (0, &[Arg::Symbol(f)]) => Some(OpenFilesOp::Open(f)),
            (1, &[Arg::Symbol(f)]) => Some(OpenFilesOp::Close(f)),
            (2, []) => Some(OpenFilesOp::List),
            _ => None,
        }
    }

    fn split(&self, op: &OpenFilesOp) -> (usize, Vec<Arg>) {
        match *op {
            OpenFilesOp::Open(f) => (0, vec![Arg::Symbol(f)]),
            OpenFilesOp::Close(f) => (1, vec![Arg::Symbol(f)]),
            OpenFilesOp::List => (2, Vec::new()),
        }
    }

    fn map_symbols(&self, files: &BTreeSet<FileId>, f: &mut dyn FnMut(u64) -> u64) -> BTreeSet<FileId> {
        files.iter().map(|&x| f(x)).collect()
    }

    /// `f ∈ S` for each file argument.
    fn facts(&self, files: &BTreeSet<FileId>, ops: &[NamedOp<'_, OpenFilesOp>]) -> Vec<Fact> {
        symbol_facts(ops, |op| self.split(op).1, |f| format!("{f} ∈ S"), |f| format!("{f} ∉ S"), |x| files.contains(&x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::{Bounds, analyze};

    #[test]
    fn updates_commute_unless_they_name_one_file_and_list_commutes_with_no_change() {
        let analysis = analyze(&MODEL, &Bounds::default()).unwrap();
        let got: Vec<(String, String)> = analysis.pairs.iter().map(|p| (p.title(), p.summary.render())).collect();
        let want = [
            ("open(f) / open(g)", "always"),
            ("open(f) / close(g)", "iff f ≠ g"),
            ("open(f) / list()", "iff f ∈ S"),
            ("close(f) / close(g)", "always"),
            ("close(f) / list()", "iff f ∉ S"),
            ("list() / list()", "always"),
        ];
        assert_eq!(got, want.map(|(a, b)| (a.to_owned(), b.to_owned())));
    }
}
