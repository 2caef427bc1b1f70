//! The analyzer on the texts' own examples: two renames (002 Figure 6-3 and the six
//! conditions listed after Figure 6-4), and the counter whose `dec` reports reaching zero
//! (002 §8.1).

use std::cell::Cell;
use std::collections::BTreeMap;

use commuter::analyzer::{Bounds, ModelError, analyze};
use oplog_model::Model;
use oplog_model::counter::{CounterOp, ZeroReportingCounter};
use oplog_model::explore::{Arg, Explore, OpKind, Param};

/// Whole cache lines per allocation, as the checker runs (`commuter::lines`).
#[global_allocator]
static ALLOCATOR: commuter::lines::Lines = commuter::lines::Lines;

/// 002 Figure 6-3: a directory of file names (symbols) bound to inode numbers, and each
/// inode's link count. Inode numbers are small integers here (the analyzer treats them as
/// values, which only makes its classes finer).
#[derive(Clone, Copy, Debug)]
struct RenameModel;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Fs {
    dir: BTreeMap<u64, i64>,
    nlink: BTreeMap<i64, i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Rename(u64, u64);

const ENOENT: i32 = -1;

impl Model for RenameModel {
    type State = Fs;
    type Op = Rename;
    type Ret = i32;

    fn name(&self) -> &str {
        "rename"
    }

    fn init(&self) -> Fs {
        Fs { dir: BTreeMap::new(), nlink: BTreeMap::new() }
    }

    /// Figure 6-3, line by line.
    fn step(&self, fs: &mut Fs, &Rename(src, dst): &Rename) -> i32 {
        let Some(&inum) = fs.dir.get(&src) else { return ENOENT };
        if src == dst {
            return 0;
        }
        if let Some(&old) = fs.dir.get(&dst) {
            *fs.nlink.get_mut(&old).expect("every bound inode has a link count") -= 1;
        }
        fs.dir.insert(dst, inum);
        fs.dir.remove(&src);
        0
    }
}

impl Explore for RenameModel {
    fn kinds(&self) -> Vec<OpKind> {
        vec![OpKind::returning("rename", &[Param::symbol("a"), Param::symbol("b")])]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<Rename> {
        match (kind, args) {
            (0, &[Arg::Symbol(a), Arg::Symbol(b)]) => Some(Rename(a, b)),
            _ => None,
        }
    }

    fn split(&self, &Rename(a, b): &Rename) -> (usize, Vec<Arg>) {
        (0, vec![Arg::Symbol(a), Arg::Symbol(b)])
    }

    fn map_symbols(&self, fs: &Fs, f: &mut dyn FnMut(u64) -> u64) -> Fs {
        Fs { dir: fs.dir.iter().map(|(&n, &i)| (f(n), i)).collect(), nlink: fs.nlink.clone() }
    }

    /// Generated states (002's analyzer starts from an unconstrained symbolic state): up to
    /// four names, grouped into hard links of the same inode in every possible way.
    fn initial_states(&self) -> Vec<Fs> {
        let mut states = Vec::new();
        for names in 0..=4u64 {
            for groups in partitions(names as usize) {
                let dir: BTreeMap<u64, i64> = (0..names).map(|n| (n, groups[n as usize] as i64)).collect();
                let mut nlink = BTreeMap::new();
                for &i in dir.values() {
                    *nlink.entry(i).or_insert(0) += 1;
                }
                states.push(Fs { dir, nlink });
            }
        }
        states
    }
}

/// Every way to put `n` items into groups, as each item's group number (groups numbered
/// in order of first use).
fn partitions(n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for _ in 0..n {
        out = out
            .into_iter()
            .flat_map(|p: Vec<usize>| {
                let groups = p.iter().max().map_or(0, |m| m + 1);
                (0..=groups).map(move |g| [p.clone(), vec![g]].concat())
            })
            .collect();
    }
    out
}

/// The six conditions listed after 002 Figure 6-4, for `rename(a, b)` / `rename(c, d)`.
fn six_conditions(fs: &Fs, Rename(a, b): Rename, Rename(c, d): Rename) -> [bool; 6] {
    let exists = |x: u64| fs.dir.contains_key(&x);
    let distinct = [a, b, c, d].iter().enumerate().all(|(i, x)| [a, b, c, d][i + 1..].iter().all(|y| x != y));
    [
        // Both source files exist, and the file names are all different.
        exists(a) && exists(c) && distinct,
        // One rename's source does not exist, and it is not the other rename's destination.
        (exists(a) && !exists(c) && b != c) || (exists(c) && !exists(a) && d != a),
        // Neither a nor c exists.
        !exists(a) && !exists(c),
        // Both calls are self-renames.
        a == b && c == d,
        // One call is a self-rename of an existing file and it is not the other call's source.
        (exists(a) && a == b && a != c) || (exists(c) && c == d && c != a),
        // Two hard links to the same inode are renamed to the same new name.
        exists(a) && exists(c) && fs.dir[&a] == fs.dir[&c] && a != c && b == d,
    ]
}

#[test]
fn two_renames_commute_exactly_when_one_of_the_six_conditions_holds() {
    let analysis = analyze(&RenameModel, &Bounds { depth: 0, ..Bounds::default() }).unwrap();
    assert_eq!(analysis.pairs.len(), 1);
    let pair = &analysis.pairs[0];
    assert_eq!(pair.title(), "rename(a, b) / rename(c, d)");
    let mut by_condition = [0usize; 6];
    for case in &pair.cases {
        let conditions = six_conditions(&case.state, case.a, case.b);
        // The pair's orientation is arbitrary: the conditions are symmetric as a whole.
        let swapped = six_conditions(&case.state, case.b, case.a);
        assert_eq!(conditions.contains(&true), swapped.contains(&true));
        assert_eq!(
            case.verdict.commutes(),
            conditions.contains(&true),
            "{:?} / {:?} from {:?}: {:?}, conditions {conditions:?}",
            case.a,
            case.b,
            case.state,
            case.verdict
        );
        for (i, _) in conditions.iter().enumerate().filter(|(_, c)| **c) {
            by_condition[i] += 1;
        }
    }
    // Every condition is exercised, and the enumeration is not trivially small.
    assert!(by_condition.iter().all(|&n| n > 0), "{by_condition:?}");
    assert!(pair.cases.len() > 1000, "{} cases", pair.cases.len());
    assert!(pair.commutative() > 100 && pair.commutative() < pair.cases.len());
    // None of these states was reached by operations: tests cannot replay them.
    assert!(pair.cases.iter().all(|c| c.setup.is_none() || c.state == RenameModel.init()));
}

/// 002 §8.1: "a sequence of inc and dec operations commutes if (and only if) the count
/// does not reach zero in any reordering".
#[test]
fn inc_and_dec_commute_exactly_when_no_reordering_reaches_zero() {
    let analysis = analyze(&ZeroReportingCounter, &Bounds::default()).unwrap();
    let mut checked = 0;
    for pair in analysis.pairs.iter().filter(|p| p.a_name != "read" && p.b_name != "read") {
        for case in &pair.cases {
            // Count along both orders; a dec reaches zero if the count after it is 0.
            let reaches_zero = |ops: [CounterOp; 2]| {
                let mut count = case.state;
                ops.iter().any(|op| {
                    count += if *op == CounterOp::Inc { 1 } else { -1 };
                    *op == CounterOp::Dec && count == 0
                })
            };
            let zero = reaches_zero([case.a, case.b]) || reaches_zero([case.b, case.a]);
            assert_eq!(case.verdict.commutes(), !zero, "{:?} / {:?} from {}", case.a, case.b, case.state);
            checked += 1;
        }
    }
    assert_eq!(checked, 3 * 7, "inc/inc, inc/dec, dec/dec from the counts -3..=3");
    let conditions: Vec<String> = analysis.pairs.iter().map(|p| format!("{}: {}", p.title(), p.summary)).collect();
    assert!(conditions.contains(&"inc() / dec(): iff c ≠ 0 ∧ c ≠ 1".to_owned()), "{conditions:?}");
    assert!(conditions.contains(&"dec() / dec(): iff c ≠ 1 ∧ c ≠ 2".to_owned()), "{conditions:?}");
}

/// A model whose `step` depends on how often it ran.
#[derive(Debug)]
struct Flaky(Cell<i64>);

impl Model for Flaky {
    type State = i64;
    type Op = ();
    type Ret = i64;
    fn name(&self) -> &str {
        "flaky"
    }
    fn init(&self) -> i64 {
        0
    }
    fn step(&self, _: &mut i64, _: &()) -> i64 {
        self.0.set(self.0.get() + 1);
        self.0.get()
    }
}

impl Explore for Flaky {
    fn kinds(&self) -> Vec<OpKind> {
        vec![OpKind::returning("tick", &[])]
    }
    fn build(&self, _: usize, _: &[Arg]) -> Option<()> {
        Some(())
    }
    fn split(&self, _: &()) -> (usize, Vec<Arg>) {
        (0, Vec::new())
    }
    fn map_symbols(&self, s: &i64, _: &mut dyn FnMut(u64) -> u64) -> i64 {
        *s
    }
}

#[test]
fn a_nondeterministic_model_is_reported() {
    let err = analyze(&Flaky(Cell::new(0)), &Bounds::default()).unwrap_err();
    assert!(matches!(err, ModelError::NotDeterministic(_)));
    assert_eq!(
        err.to_string(),
        "model `flaky` is not deterministic: () on state 0 gave 1 -> 0 once and 2 -> 0 the next time"
    );
}
