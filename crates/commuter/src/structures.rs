//! The structures the checker covers: each a model, a search depth, and the
//! implementations under test, run through analyzer, test generator and tracer into a
//! [`StructureReport`].
//!
//! Every test of a pair runs on every implementation whose [`Contract`](crate::impls::Contract)
//! admits it; the others are counted as outside that implementation's contract. Adding a
//! structure is an `Impl` list in [`crate::impls`] and one line in [`all`].

use std::fmt;

use oplog_model::counter::CounterModel;
use oplog_model::explore::Explore;
use oplog_model::lru::LruModel;
use oplog_model::queue::QueueModel;
use oplog_model::rmap::RmapModel;
use oplog_model::set::SetModel;

use crate::analyzer::{Bounds, ModelError, analyze};
use crate::impls::{self, Impl};
use crate::models::refcache::RefcacheModel;
use crate::models::{namecache, open_files};
use crate::report::{Conflicted, Design, ImplPair, ImplReport, PairReport, StructureReport, exceptions};
use crate::testgen::{self, Test};
use crate::tracer::{Cores, Mismatch, Outcome, Setup, check};

/// Why a structure could not be checked.
#[derive(Debug)]
pub enum Error {
    /// The model is not usable.
    Model(ModelError),
    /// An implementation gave a response the model does not.
    Mismatch(Mismatch),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Model(e) => write!(f, "{e}"),
            Error::Mismatch(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

/// What to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Overrides every structure's search depth.
    pub depth: Option<usize>,
}

/// A structure the checker covers (type-erased over its model).
pub trait Structure: Sync {
    /// Its name (`set`): the `structure` field of the report.
    fn name(&self) -> &'static str;

    /// Analyzes the model, generates the tests and traces them on every implementation.
    ///
    /// # Errors
    /// [`Error`] if the model is unusable or an implementation answers wrongly.
    fn check(&self, cores: &Cores, options: &Options) -> Result<StructureReport, Error>;
}

/// A model with its implementations under test.
pub struct Covered<M: Explore> {
    /// The structure's name.
    pub name: &'static str,
    /// Its sequential specification.
    pub model: M,
    /// The default search depth.
    pub depth: usize,
    /// Its implementations (none: commutativity only).
    pub impls: fn() -> Vec<Impl<M>>,
}

impl<M> Structure for Covered<M>
where
    M: Explore + Sync + 'static,
    M::Op: Send + Sync + 'static,
    M::Ret: Send + 'static,
{
    fn name(&self) -> &'static str {
        self.name
    }

    fn check(&self, cores: &Cores, options: &Options) -> Result<StructureReport, Error> {
        let depth = options.depth.unwrap_or(self.depth);
        let model = &self.model;
        let analysis = analyze(model, &Bounds { depth, ..Bounds::default() }).map_err(Error::Model)?;
        let mut pairs = Vec::new();
        let mut tests: Vec<Vec<Test<M>>> = Vec::new();
        for pair in &analysis.pairs {
            let (pair_tests, untraceable) = testgen::generate(pair);
            pairs.push(PairReport {
                op_a: pair.a_name.to_owned(),
                op_b: pair.b_name.to_owned(),
                title: pair.title(),
                update_pair: pair.blind,
                cases: pair.cases.len(),
                commutative: pair.commutative(),
                untraceable,
                condition: pair.summary.render(),
                classes: {
                    let classes = pair.classes();
                    let all: Vec<Vec<bool>> = classes.iter().map(|c| c.0.clone()).collect();
                    classes.into_iter().map(|(v, y, n)| (pair.summary.describe_among(&v, &all), y, n)).collect()
                },
                tests: pair_tests.iter().map(|t| t.render(model)).collect(),
            });
            tests.push(pair_tests);
        }
        let mut reports = Vec::new();
        for imp in (self.impls)() {
            let design = Design::of(imp.id);
            let mut imp_pairs = Vec::new();
            for (pair, pair_tests) in pairs.iter().zip(&tests) {
                let mut ip = ImplPair::default();
                let (mut conflicted, mut quiescent_only) = (Vec::new(), Vec::new());
                for (t, test) in pair_tests.iter().enumerate() {
                    if imp.contract.is_some_and(|c| !c.admits_test(model, test)) {
                        ip.outside_tests.push(t);
                        continue;
                    }
                    ip.traced += 1;
                    let steady = check(cores, model, &imp, test, Setup::Steady).map_err(Error::Mismatch)?;
                    let cold = check(cores, model, &imp, test, Setup::Cold).map_err(Error::Mismatch)?;
                    ip.cold_conflict_free += usize::from(cold.conflict_free());
                    let quiescent = check(cores, model, &imp, test, Setup::Quiescent).map_err(Error::Mismatch)?;
                    ip.quiescent_conflict_free += usize::from(quiescent.conflict_free());
                    let grouped = |outcome: &Outcome| Conflicted {
                        lines: outcome.by_operation().into_iter().map(|(_, _, a, b)| (a, b)).collect(),
                        test: test.render(model),
                    };
                    if steady.conflict_free() {
                        ip.conflict_free += 1;
                        if !quiescent.conflict_free() {
                            quiescent_only.push(grouped(&quiescent));
                        }
                    } else {
                        ip.lines.push((t, steady.describe()));
                        conflicted.push(grouped(&steady));
                    }
                }
                ip.exceptions = exceptions(&conflicted, pair.update_pair, design);
                ip.quiescent_exceptions = exceptions(&quiescent_only, pair.update_pair, design);
                imp_pairs.push(ip);
            }
            reports.push(ImplReport {
                id: imp.id.to_owned(),
                about: imp.about.to_owned(),
                contract: imp.contract.map(|c| c.name.to_owned()),
                pairs: imp_pairs,
            });
        }
        Ok(StructureReport {
            structure: self.name.to_owned(),
            model: analysis.model,
            states: analysis.states.len(),
            depth,
            pairs,
            impls: reports,
        })
    }
}

/// Every structure, in report order. The list's model is the set's (see
/// `oplog_model::set`); the sloppy counter is one of the counter's implementations (its
/// interface is the counter's).
pub fn all() -> Vec<Box<dyn Structure>> {
    vec![
        Box::new(Covered { name: "counter", model: CounterModel, depth: 3, impls: impls::counter::impls }),
        Box::new(Covered { name: "set", model: SetModel, depth: 3, impls: impls::set::impls }),
        Box::new(Covered { name: "list", model: SetModel, depth: 3, impls: impls::list::impls }),
        Box::new(Covered { name: "rmap", model: RmapModel, depth: 2, impls: impls::rmap::impls }),
        Box::new(Covered { name: "queue", model: QueueModel, depth: 3, impls: impls::queue::impls }),
        Box::new(Covered { name: "lru", model: LruModel, depth: 3, impls: impls::lru::impls }),
        Box::new(Covered { name: "refcache", model: RefcacheModel, depth: 3, impls: impls::refcache::impls }),
        Box::new(Covered { name: "namecache", model: namecache::MODEL, depth: 3, impls: impls::namecache::impls }),
        Box::new(Covered { name: "open-files", model: open_files::MODEL, depth: 3, impls: impls::open_files::impls }),
    ]
}
