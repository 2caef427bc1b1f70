//! The closing summary: per structure and implementation, then over every structure for
//! each family of implementations together ([`FAMILIES`]: the OpLog versions, the Refcache
//! versions, the sloppy counters, the mutex baselines), the share of commutative cases
//! that are conflict-free, for update pairs and for all pairs, with every exception among
//! the update pairs of the scalable families listed with its reason.
//!
//! Counting, per row: `commutative` is the analyzer's count of commutative cases;
//! `checked` the cases traced on the implementation: all but the untraceable ones (none
//! for the covered structures) and those outside its contract (`outside_contract`, see
//! `crate::impls`); the percentage is `conflict_free / checked`. Nothing else is left
//! out, and the outside-contract cases are reported beside it.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::report::StructureReport;

/// Case counts over a set of pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Commutative cases (the analyzer's count).
    pub commutative: usize,
    /// Of those, outside the implementation's contract (not run).
    pub outside_contract: usize,
    /// Of those, traced on the implementation.
    pub checked: usize,
    /// Of the checked, conflict-free in the steady state.
    pub conflict_free: usize,
    /// Of the checked, conflict-free when cold.
    pub cold_conflict_free: usize,
    /// Of the checked, conflict-free when quiescent (the set-up's updates read first).
    pub quiescent_conflict_free: usize,
}

impl Counts {
    /// `conflict_free / checked` in percent (100 when nothing was checked).
    pub fn percent(&self) -> f64 {
        share(self.conflict_free, self.checked)
    }

    /// `conflict_free / commutative` in percent: counting every case not checked (outside
    /// the contract, or untraceable) as not conflict-free.
    pub fn percent_of_commutative(&self) -> f64 {
        share(self.conflict_free, self.commutative)
    }

    fn add(&mut self, other: &Counts) {
        self.commutative += other.commutative;
        self.outside_contract += other.outside_contract;
        self.checked += other.checked;
        self.conflict_free += other.conflict_free;
        self.cold_conflict_free += other.cold_conflict_free;
        self.quiescent_conflict_free += other.quiescent_conflict_free;
    }

    /// `conflict_free/checked (p%)`.
    fn show(&self) -> String {
        format!("{}/{} ({:.1}%)", self.conflict_free, self.checked, self.percent())
    }
}

/// A commutative update-pair case group of a scalable family's implementation that was
/// not conflict-free.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateException {
    /// The structure.
    pub structure: String,
    /// The implementation.
    pub implementation: String,
    /// The pair's title.
    pub pair: String,
    /// Cases in the group.
    pub cases: usize,
    /// Why they conflict.
    pub reason: String,
    /// One of them.
    pub example: String,
}

/// One row: an implementation of a structure, or (`structure` = `all`) a family of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The structure, or `all`.
    pub structure: String,
    /// The implementation's id, or the family (`oplog`, `mutex`).
    pub implementation: String,
    /// Implementations summed (1 for one implementation).
    pub impls: usize,
    /// The implementation's contract, if any.
    pub contract: Option<String>,
    /// Over pairs of two updates.
    pub updates: Counts,
    /// Over every pair.
    pub all: Counts,
}

/// The summary of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Per structure and implementation, in report order.
    pub rows: Vec<Row>,
    /// Each family of [`FAMILIES`] with at least one implementation in the rows, summed
    /// (`structure` = `all`, `implementation` = the family's prefix), in that order.
    pub families: Vec<Row>,
    /// Every exception among the update pairs of the scalable families' implementations.
    pub exceptions: Vec<UpdateException>,
}

/// A family of implementations the summary sums over: those whose id starts with its
/// prefix (see [`crate::impls`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Family {
    /// The id prefix, and the family row's `impl`.
    pub prefix: &'static str,
    /// Its name in sentences (`OpLog`: "OpLog versions, update pairs: …").
    pub name: &'static str,
    /// Whether its design promises conflict-free updates (its update-pair exceptions are
    /// listed), rather than being a baseline.
    pub scalable: bool,
}

/// The families, in summary order.
pub const FAMILIES: [Family; 4] = [
    Family { prefix: "oplog", name: "OpLog", scalable: true },
    Family { prefix: "refcache", name: "Refcache", scalable: true },
    Family { prefix: "sloppy", name: "Sloppy-counter", scalable: true },
    Family { prefix: "mutex", name: "Mutex", scalable: false },
];

impl Family {
    /// The family of implementation `id`, if any.
    pub fn of(id: &str) -> Option<&'static Family> {
        FAMILIES.iter().find(|f| id.starts_with(f.prefix))
    }
}

impl Summary {
    /// Sums `reports` (see the module docs).
    pub fn new(reports: &[StructureReport]) -> Self {
        let mut rows = Vec::new();
        let mut exceptions = Vec::new();
        for r in reports {
            for imp in &r.impls {
                let (mut updates, mut all) = (Counts::default(), Counts::default());
                for (pair, ip) in r.pairs.iter().zip(&imp.pairs) {
                    let c = Counts {
                        commutative: pair.commutative,
                        outside_contract: ip.outside_contract(),
                        checked: ip.traced,
                        conflict_free: ip.conflict_free,
                        cold_conflict_free: ip.cold_conflict_free,
                        quiescent_conflict_free: ip.quiescent_conflict_free,
                    };
                    all.add(&c);
                    if !pair.update_pair {
                        continue;
                    }
                    updates.add(&c);
                    if Family::of(&imp.id).is_some_and(|f| f.scalable) {
                        exceptions.extend(ip.exceptions.iter().map(|e| UpdateException {
                            structure: r.structure.clone(),
                            implementation: imp.id.clone(),
                            pair: pair.title.clone(),
                            cases: e.cases,
                            reason: e.reason.clone(),
                            example: e.example.clone(),
                        }));
                    }
                }
                rows.push(Row {
                    structure: r.structure.clone(),
                    implementation: imp.id.clone(),
                    impls: 1,
                    contract: imp.contract.clone(),
                    updates,
                    all,
                });
            }
        }
        let families = FAMILIES
            .iter()
            .filter_map(|family| {
                let mut sum = Row {
                    structure: "all".into(),
                    implementation: family.prefix.into(),
                    impls: 0,
                    contract: None,
                    updates: Counts::default(),
                    all: Counts::default(),
                };
                for row in rows.iter().filter(|r| r.implementation.starts_with(family.prefix)) {
                    sum.impls += 1;
                    sum.updates.add(&row.updates);
                    sum.all.add(&row.all);
                }
                (sum.impls > 0).then_some(sum)
            })
            .collect();
        Summary { rows, families, exceptions }
    }

    /// The family row of the family with this prefix, if it has implementations.
    pub fn family(&self, prefix: &str) -> Option<&Row> {
        self.families.iter().find(|r| r.implementation == prefix)
    }

    /// The summary as text: a table, the OpLog verdict, and every exception.
    pub fn render(&self) -> String {
        let mut table = vec![vec![
            "structure".to_owned(),
            "impl".to_owned(),
            "update pairs".to_owned(),
            "all pairs".to_owned(),
            "cold update pairs".to_owned(),
            "quiescent all pairs".to_owned(),
            "outside contract (update/all)".to_owned(),
        ]];
        for row in self.rows.iter().chain(&self.families) {
            let name = if row.structure == "all" {
                format!("{} ({} impls)", row.implementation, row.impls)
            } else {
                row.implementation.clone()
            };
            table.push(vec![
                row.structure.clone(),
                name,
                row.updates.show(),
                row.all.show(),
                format!("{}/{}", row.updates.cold_conflict_free, row.updates.checked),
                format!("{}/{}", row.all.quiescent_conflict_free, row.all.checked),
                format!("{}/{}", row.updates.outside_contract, row.all.outside_contract),
            ]);
        }
        let mut out = String::new();
        let _ = writeln!(out, "== summary: commutative cases that are conflict-free (steady state), of those checked");
        out.push_str(&oplog_table::align(&table, 2));
        for family in FAMILIES.iter().filter(|f| f.scalable) {
            if let Some(row) = self.family(family.prefix) {
                self.render_family(&mut out, family, row);
            }
        }
        if let Some(m) = self.family("mutex").map(|r| &r.updates) {
            let _ = writeln!(
                out,
                "Mutex baselines, update pairs: {} of {} conflict-free ({:.1}%).",
                m.conflict_free,
                m.checked,
                m.percent()
            );
        }
        out
    }

    /// A scalable family's verdict: its update pairs, the cases outside its contracts, its
    /// pairs with a read once quiescent, and its update-pair exceptions.
    fn render_family(&self, out: &mut String, family: &Family, row: &Row) {
        let o = &row.updates;
        let _ = writeln!(
            out,
            "\n{} versions, update pairs: {} of {} checked commutative cases are conflict-free ({:.1}%), over {} of \
             {}.",
            family.name,
            o.conflict_free,
            o.checked,
            o.percent(),
            count(row.impls, "version"),
            count(self.structures(family.prefix), "structure"),
        );
        let untraceable = o.commutative - o.checked - o.outside_contract;
        let _ = writeln!(
            out,
            "Of all {} commutative update-pair cases of these versions, {} were checked and {} are outside their \
             contracts (the identity rule of the absorbing versions, a handle or reference held to release), not run \
             on them (the other versions and the baselines run those they admit){}; conflict-free of all: {} ({:.1}%).",
            o.commutative,
            o.checked,
            o.outside_contract,
            if untraceable > 0 { format!("; {untraceable} have no set-up and were not traced") } else { String::new() },
            o.conflict_free,
            o.percent_of_commutative(),
        );
        let all = &row.all;
        let _ = writeln!(
            out,
            "{} versions, pairs that are not two updates, once the set-up's updates were read or reviewed \
             (quiescent): {} of {} conflict-free (steady state: {}).",
            family.name,
            all.quiescent_conflict_free - o.quiescent_conflict_free,
            all.checked - o.checked,
            all.conflict_free - o.conflict_free,
        );
        let listed: Vec<&UpdateException> =
            self.exceptions.iter().filter(|e| e.implementation.starts_with(family.prefix)).collect();
        if listed.is_empty() {
            let _ = writeln!(out, "Exceptions among {} update pairs: none.", family.name);
        } else {
            let _ = writeln!(out, "Exceptions among {} update pairs:", family.name);
            for e in listed {
                let _ =
                    writeln!(out, "  {} {} {}: {} cases: {}", e.structure, e.implementation, e.pair, e.cases, e.reason);
                let _ = writeln!(out, "      e.g. {}", e.example);
            }
        }
    }

    /// Number of distinct structures with an implementation whose id starts with `prefix`.
    fn structures(&self, prefix: &str) -> usize {
        let mut names: Vec<&str> =
            self.rows.iter().filter(|r| r.implementation.starts_with(prefix)).map(|r| r.structure.as_str()).collect();
        names.dedup();
        names.len()
    }

    /// One JSON object per row, tagged `"annex": "summary"`. Rows of a scalable family's
    /// implementation carry the exceptions among their update pairs (`update_exceptions`;
    /// the family's `all` row every one of the family); the others carry `null` there (the
    /// baselines' exceptions are listed in the pair lines).
    pub fn json_lines(&self) -> Vec<Value> {
        let exceptions: Vec<Value> = self
            .exceptions
            .iter()
            .map(|e| {
                json!({
                    "structure": e.structure, "impl": e.implementation, "pair": e.pair, "cases": e.cases,
                    "reason": e.reason, "example": e.example,
                })
            })
            .collect();
        self.rows
            .iter()
            .chain(&self.families)
            .map(|row| {
                let own = self.exceptions.iter().zip(&exceptions).filter(|(e, _)| {
                    if row.structure == "all" {
                        e.implementation.starts_with(&row.implementation)
                    } else {
                        e.structure == row.structure && e.implementation == row.implementation
                    }
                });
                let listed = Family::of(&row.implementation)
                    .is_some_and(|f| f.scalable)
                    .then(|| own.map(|(_, v)| v.clone()).collect::<Vec<Value>>());
                let mut line = json!({
                    "annex": "summary",
                    "structure": row.structure,
                    "impl": row.implementation,
                    "impls": row.impls,
                    "contract": row.contract,
                    "update_exceptions": listed,
                });
                for (prefix, c) in [("update", &row.updates), ("all", &row.all)] {
                    let fields = [
                        ("commutative_cases", json!(c.commutative)),
                        ("outside_contract_cases", json!(c.outside_contract)),
                        ("checked_cases", json!(c.checked)),
                        ("conflict_free_cases", json!(c.conflict_free)),
                        ("cold_conflict_free_cases", json!(c.cold_conflict_free)),
                        ("quiescent_conflict_free_cases", json!(c.quiescent_conflict_free)),
                        ("conflict_free_percent", json!(round1(c.percent()))),
                        ("conflict_free_percent_of_commutative", json!(round1(c.percent_of_commutative()))),
                    ];
                    for (name, value) in fields {
                        line[format!("{prefix}_{name}")] = value;
                    }
                }
                line
            })
            .collect()
    }
}

/// `n things`, singular for one.
fn count(n: usize, thing: &str) -> String {
    if n == 1 { format!("1 {thing}") } else { format!("{n} {thing}s") }
}

/// `part / whole` in percent (100 when `whole` is 0).
fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 { 100.0 } else { 100.0 * part as f64 / whole as f64 }
}

/// `x` to one decimal place.
fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
