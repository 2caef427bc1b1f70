//! ANALYZER (002 §6.1): for every pair of operations, the states and arguments for which
//! the pair SIM-commutes, and the condition that says when.
//!
//! 002's ANALYZER executes the model symbolically with an SMT solver. This one enumerates,
//! which 002 §6.1.1 calls concrete commutativity analysis, made finite and exact over small
//! domains:
//!
//! 1. **States.** Breadth-first from the model's initial states, applying every operation
//!    with every argument, up to [`Bounds::depth`] operations. Each state reached from
//!    [`Model::init`] keeps the operations that reached it: its *set-up*, replayed by tests
//!    (002 Figure 6-6). States that differ only by a renaming of their symbols (values that
//!    matter only by equality) are one state.
//! 2. **Arguments.** For a pair of kinds and a state, every assignment of the two
//!    operations' parameters: integers over their ranges; symbols either one of the state's
//!    symbols or a fresh one, fresh symbols numbered in order of first use, so that each
//!    pattern of equal and distinct fresh values appears once (002 §6.2's isomorphism
//!    groups).
//! 3. **Cases.** A state with both operations' arguments is a case. Cases equal up to a
//!    renaming of symbols are one case: each is put in canonical form (symbols of the
//!    arguments numbered in order of appearance, the state's other symbols numbered to
//!    make the state least), and repeats are dropped. For a pair of one kind, `(A, B)` and
//!    `(B, A)` are the same case.
//! 4. **The test.** Each case runs through 002 Figure 6-4: both orders from the same state,
//!    commuting when each operation's response is the same in both orders and both orders
//!    end in the same state ([`commutes`]). Every step is first checked for determinism
//!    ([`check_deterministic`]).
//! 5. **The condition.** Each case is described by facts: the model's own
//!    ([`Explore::facts`]), whether each two symbol arguments are equal, and how each
//!    integer argument of one operation compares with each of the other's. Cases with the
//!    same facts form a class; [`condition`](crate::condition) finds the shortest formula
//!    over the facts that holds exactly for the classes that commute.
//!
//! Canonical forms try every numbering of a state's remaining symbols up to
//! [`MAX_PERMUTED`] of them; beyond that, symbols keep their ascending order, and a few
//! isomorphic cases may be counted twice (never missed).

use std::collections::HashSet;
use std::fmt;

use oplog_model::explore::{Arg, Explore, NamedOp, OpKind, Param, map_op_symbols, symbols};
use oplog_model::{Model, NotDeterministic, check_deterministic};

use crate::condition::{Summary, Var};

mod enumerate;

pub use enumerate::MAX_PERMUTED;
use enumerate::{arg_lists, build, canonical_case, reachable};

/// How far the analyzer searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Longest set-up: states reachable in at most this many operations.
    pub depth: usize,
    /// Give up (with an error) beyond this many distinct states.
    pub max_states: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { depth: 3, max_states: 20_000 }
    }
}

/// A model the analyzer cannot trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// The same operation on the same state gave two outcomes.
    NotDeterministic(NotDeterministic),
    /// The model contradicts itself (an operation that does not split back into its kind
    /// and arguments, facts named differently for the same pair, ...).
    Inconsistent {
        /// The model's name.
        model: String,
        /// What was wrong.
        detail: String,
    },
    /// More than [`Bounds::max_states`] states within the depth bound.
    TooManyStates {
        /// The model's name.
        model: String,
        /// The bound that was exceeded.
        limit: usize,
        /// The depth being searched.
        depth: usize,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::NotDeterministic(e) => write!(f, "{e}"),
            ModelError::Inconsistent { model, detail } => write!(f, "model `{model}` is inconsistent: {detail}"),
            ModelError::TooManyStates { model, limit, depth } => write!(
                f,
                "model `{model}` has more than {limit} states within {depth} operations; lower the depth bound"
            ),
        }
    }
}

impl std::error::Error for ModelError {}

impl From<NotDeterministic> for ModelError {
    fn from(e: NotDeterministic) -> Self {
        ModelError::NotDeterministic(e)
    }
}

/// How a case came out of 002 Figure 6-4 (the terminals of Figure 6-5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Same responses and same final state in both orders.
    Commutes,
    /// An operation's response depends on the order.
    DiffersInResponse,
    /// The responses agree but the final states differ.
    DiffersInState,
}

impl Verdict {
    /// Whether the case commutes.
    pub fn commutes(self) -> bool {
        self == Verdict::Commutes
    }
}

/// 002 Figure 6-4: whether `a` and `b` SIM-commute from `s0`.
///
/// For two operations SIM commutativity reduces to this: each prefix of one operation
/// commutes trivially, so only the two full orders need comparing.
///
/// # Errors
/// [`NotDeterministic`] if any of the four steps is not deterministic.
pub fn commutes<M: Model + ?Sized>(
    model: &M,
    s0: &M::State,
    a: &M::Op,
    b: &M::Op,
) -> Result<Verdict, NotDeterministic> {
    /// Both responses and the final state of one order.
    type Run<M> = (<M as Model>::Ret, <M as Model>::Ret, <M as Model>::State);
    let run = |first: &M::Op, second: &M::Op| -> Result<Run<M>, NotDeterministic> {
        let mut s = s0.clone();
        check_deterministic(model, &s, first)?;
        let r1 = model.step(&mut s, first);
        check_deterministic(model, &s, second)?;
        let r2 = model.step(&mut s, second);
        Ok((r1, r2, s))
    };
    let (ra, rab, sab) = run(a, b)?;
    let (rb, rba, sba) = run(b, a)?;
    Ok(if ra != rba || rb != rab {
        Verdict::DiffersInResponse
    } else if sab != sba {
        Verdict::DiffersInState
    } else {
        Verdict::Commutes
    })
}

/// A state the search reached.
#[derive(Clone, Debug)]
pub struct Reached<M: Model> {
    /// The state, in canonical form.
    pub state: M::State,
    /// Operations from [`Model::init`] that reach it, or `None` for a state only reached
    /// from another of [`Explore::initial_states`].
    pub setup: Option<Vec<M::Op>>,
}

/// One case of a pair: a state, the two operations, and the verdict.
#[derive(Clone, Debug)]
pub struct Case<M: Model> {
    /// The initial state.
    pub state: M::State,
    /// Operations from [`Model::init`] that reach `state`, if known.
    pub setup: Option<Vec<M::Op>>,
    /// Operation A (of the pair's first kind).
    pub a: M::Op,
    /// Operation B (of the pair's second kind).
    pub b: M::Op,
    /// What 002 Figure 6-4 said.
    pub verdict: Verdict,
    /// The value of each of the pair's facts ([`Pair::summary`]'s variables).
    pub facts: Vec<bool>,
}

/// Everything the analyzer found about one pair of operation kinds.
#[derive(Clone, Debug)]
pub struct Pair<M: Model> {
    /// Index of A's kind.
    pub a: usize,
    /// Index of B's kind.
    pub b: usize,
    /// A's name (`add`).
    pub a_name: &'static str,
    /// B's name.
    pub b_name: &'static str,
    /// Display names of A's parameters.
    pub a_params: Vec<String>,
    /// Display names of B's parameters (renamed where they clash with A's).
    pub b_params: Vec<String>,
    /// Whether both are blind updates.
    pub blind: bool,
    /// Every case, in enumeration order.
    pub cases: Vec<Case<M>>,
    /// The condition over the cases' facts.
    pub summary: Summary,
}

impl<M: Model> Pair<M> {
    /// `add(x) / remove(y)`.
    pub fn title(&self) -> String {
        let sig = |name: &str, params: &[String]| format!("{name}({})", params.join(", "));
        format!("{} / {}", sig(self.a_name, &self.a_params), sig(self.b_name, &self.b_params))
    }

    /// Number of cases that commute.
    pub fn commutative(&self) -> usize {
        self.cases.iter().filter(|c| c.verdict.commutes()).count()
    }

    /// The classes (distinct fact values) with how many cases commute and how many do not,
    /// in order of first appearance.
    pub fn classes(&self) -> Vec<(Vec<bool>, usize, usize)> {
        let mut classes: Vec<(Vec<bool>, usize, usize)> = Vec::new();
        for case in &self.cases {
            let i = match classes.iter().position(|c| c.0 == case.facts) {
                Some(i) => i,
                None => {
                    classes.push((case.facts.clone(), 0, 0));
                    classes.len() - 1
                }
            };
            if case.verdict.commutes() { classes[i].1 += 1 } else { classes[i].2 += 1 }
        }
        classes
    }
}

/// The analysis of one model.
#[derive(Clone, Debug)]
pub struct Analysis<M: Model> {
    /// The model's name.
    pub model: String,
    /// Its operation kinds.
    pub kinds: Vec<OpKind>,
    /// The states searched.
    pub states: Vec<Reached<M>>,
    /// Every unordered pair of kinds, A's kind first, in kind order.
    pub pairs: Vec<Pair<M>>,
}

/// Analyzes every pair of `model`'s operation kinds within `bounds`.
///
/// # Errors
/// A [`ModelError`] naming what is wrong with the model.
pub fn analyze<M: Explore>(model: &M, bounds: &Bounds) -> Result<Analysis<M>, ModelError> {
    let kinds = model.kinds();
    if kinds.is_empty() {
        return Err(inconsistent(model, "it has no operation kinds".into()));
    }
    let states = reachable(model, &kinds, bounds)?;
    let mut pairs = Vec::new();
    for a in 0..kinds.len() {
        for b in a..kinds.len() {
            pairs.push(analyze_pair(model, &kinds, &states, a, b)?);
        }
    }
    Ok(Analysis { model: model.name().to_owned(), kinds, states, pairs })
}

pub(crate) fn inconsistent<M: Model + ?Sized>(model: &M, detail: String) -> ModelError {
    ModelError::Inconsistent { model: model.name().to_owned(), detail }
}

/// Display names for B's parameters: a name A also uses becomes the next unused letter
/// (`x` → `y`, as in "add(x) / remove(y)"; 002 writes rename(a, b) / rename(c, d)), or
/// gets a prime when it is longer than one letter.
fn b_names(a: &[String], b: &[Param]) -> Vec<String> {
    let mut used: Vec<String> = a.to_vec();
    let mut names = Vec::new();
    for p in b {
        let mut name = p.name.to_owned();
        if used.contains(&name) {
            let letter = name.chars().next().filter(|c| c.is_ascii_lowercase() && name.len() == 1);
            name = match letter {
                Some(c) => (1..26)
                    .map(|i| (((c as u8 - b'a' + i) % 26) + b'a') as char)
                    .map(String::from)
                    .find(|n| !used.contains(n))
                    .unwrap_or_else(|| format!("{name}'")),
                None => {
                    let mut n = format!("{name}'");
                    while used.contains(&n) {
                        n.push('\'');
                    }
                    n
                }
            };
        }
        used.push(name.clone());
        names.push(name);
    }
    names
}

/// The analyzer's own facts (equal symbols, compared integers) and the model's, for one
/// case: their variables and values.
fn case_facts<M: Explore>(model: &M, state: &M::State, ops: [(&M::Op, &[String]); 2]) -> (Vec<Var>, Vec<bool>) {
    let mut vars = Vec::new();
    let mut values = Vec::new();
    let args: Vec<Vec<(String, Arg)>> =
        ops.iter().map(|(op, names)| names.iter().cloned().zip(model.split(op).1).collect()).collect();
    let all: Vec<&(String, Arg)> = args.iter().flatten().collect();
    for (i, (x, ax)) in all.iter().enumerate() {
        for (y, ay) in &all[i + 1..] {
            if let (Arg::Symbol(sx), Arg::Symbol(sy)) = (ax, ay) {
                vars.push(Var::Fact { holds: format!("{x} = {y}"), fails: format!("{x} ≠ {y}") });
                values.push(sx == sy);
            }
        }
    }
    for (p, ap) in &args[0] {
        for (q, aq) in &args[1] {
            if let (Arg::Int(ip), Arg::Int(iq)) = (ap, aq) {
                vars.push(Var::Le(p.clone(), q.clone()));
                values.push(ip <= iq);
                vars.push(Var::Ge(p.clone(), q.clone()));
                values.push(ip >= iq);
            }
        }
    }
    let named = [NamedOp { op: ops[0].0, names: ops[0].1 }, NamedOp { op: ops[1].0, names: ops[1].1 }];
    for fact in model.facts(state, &named) {
        vars.push(Var::Fact { holds: fact.holds, fails: fact.fails });
        values.push(fact.value);
    }
    (vars, values)
}

fn analyze_pair<M: Explore>(
    model: &M,
    kinds: &[OpKind],
    states: &[Reached<M>],
    ka: usize,
    kb: usize,
) -> Result<Pair<M>, ModelError> {
    let a_params: Vec<String> = kinds[ka].params.iter().map(|p| p.name.to_owned()).collect();
    let b_params = b_names(&a_params, &kinds[kb].params);
    let params: Vec<Param> = kinds[ka].params.iter().chain(&kinds[kb].params).copied().collect();
    let split_at = kinds[ka].params.len();
    let mut seen: HashSet<(M::Op, M::Op, M::State)> = HashSet::new();
    let mut cases = Vec::new();
    let mut vars: Option<Vec<Var>> = None;
    for reached in states {
        let syms = symbols(model, &reached.state);
        let fresh = syms.last().map_or(0, |s| s + 1);
        for args in arg_lists(&params, &syms, fresh) {
            let (Some(a), Some(b)) =
                (build(model, kinds, ka, &args[..split_at])?, build(model, kinds, kb, &args[split_at..])?)
            else {
                continue;
            };
            let mut canon = canonical_case(model, &reached.state, &a, &b);
            if ka == kb {
                let swapped = canonical_case(model, &reached.state, &b, &a);
                if (&swapped.0, &swapped.1, &swapped.2) < (&canon.0, &canon.1, &canon.2) {
                    canon = swapped;
                }
            }
            let (a, b, state, mut relabel) = canon;
            if !seen.insert((a.clone(), b.clone(), state.clone())) {
                continue;
            }
            let verdict = commutes(model, &state, &a, &b)?;
            let (case_vars, facts) = case_facts(model, &state, [(&a, &a_params), (&b, &b_params)]);
            match &vars {
                None => vars = Some(case_vars),
                Some(v) if *v != case_vars => {
                    return Err(inconsistent(
                        model,
                        format!(
                            "the facts of pair {}/{} change with the arguments: {v:?} then {case_vars:?}",
                            kinds[ka].name, kinds[kb].name
                        ),
                    ));
                }
                Some(_) => {}
            }
            let setup = reached
                .setup
                .as_ref()
                .map(|ops| ops.iter().map(|o| map_op_symbols(model, o, &mut |s| relabel.get(s))).collect());
            cases.push(Case { state, setup, a, b, verdict, facts });
        }
    }
    let vars = vars.unwrap_or_default();
    // Commutativity is symmetric, but a pair of one kind keeps one orientation of each case:
    // describe both, so that the condition does not lean on the orientation kept.
    let mut described: Vec<(Vec<bool>, bool)> = cases.iter().map(|c| (c.facts.clone(), c.verdict.commutes())).collect();
    if ka == kb {
        for c in &cases {
            let (_, swapped) = case_facts(model, &c.state, [(&c.b, &a_params), (&c.a, &b_params)]);
            described.push((swapped, c.verdict.commutes()));
        }
    }
    let summary = Summary::new(vars, described);
    Ok(Pair {
        a: ka,
        b: kb,
        a_name: kinds[ka].name,
        b_name: kinds[kb].name,
        a_params,
        b_params,
        blind: kinds[ka].blind && kinds[kb].blind,
        cases,
        summary,
    })
}

/// `op` as text with its kind's name: `add(s0)`, `truncate(1)`.
pub fn show_op<M: Explore>(model: &M, op: &M::Op) -> String {
    let (kind, args) = model.split(op);
    let name = model.kinds().get(kind).map_or("?", |k| k.name);
    let args: Vec<String> = args
        .iter()
        .map(|a| match a {
            Arg::Symbol(s) => format!("s{s}"),
            Arg::Int(i) => i.to_string(),
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oplog_model::counter::CounterModel;
    use oplog_model::set::{SetModel, SetOp};

    #[test]
    fn b_parameters_are_renamed_like_the_texts() {
        let a = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(b_names(&a, &[Param::symbol("a"), Param::symbol("b")]), ["c", "d"]);
        assert_eq!(b_names(&["x".to_owned()], &[Param::symbol("x")]), ["y"]);
        assert_eq!(b_names(&["start".to_owned()], &[Param::int("start", 0, 1)]), ["start'"]);
        assert_eq!(b_names(&["x".to_owned()], &[Param::symbol("k")]), ["k"]);
    }

    #[test]
    fn set_add_remove_commute_iff_the_keys_differ() {
        let analysis = analyze(&SetModel, &Bounds::default()).unwrap();
        let pair = analysis.pairs.iter().find(|p| (p.a_name, p.b_name) == ("add", "remove")).unwrap();
        assert_eq!(pair.title(), "add(x) / remove(y)");
        assert_eq!(pair.summary.render(), "iff x ≠ y");
        for case in &pair.cases {
            let (SetOp::Add(x), SetOp::Remove(y)) = (case.a, case.b) else { panic!() };
            assert_eq!(case.verdict.commutes(), x != y);
        }
        // x = y: in S or not, 4 states; x ≠ y: each of x, y in S or fresh.
        assert!(pair.cases.len() > 8, "{}", pair.cases.len());
        let contains = analysis.pairs.iter().find(|p| (p.a_name, p.b_name) == ("contains", "contains")).unwrap();
        assert_eq!(contains.summary.render(), "always");
    }

    #[test]
    fn every_counter_pair_has_the_expected_condition() {
        let analysis = analyze(&CounterModel, &Bounds::default()).unwrap();
        let got: Vec<(String, String)> = analysis.pairs.iter().map(|p| (p.title(), p.summary.render())).collect();
        let want = [
            ("inc() / inc()", "always"),
            ("inc() / dec()", "always"),
            ("inc() / read()", "never"),
            ("dec() / dec()", "always"),
            ("dec() / read()", "never"),
            ("read() / read()", "always"),
        ];
        assert_eq!(got, want.map(|(a, b)| (a.to_owned(), b.to_owned())));
        // One case per state from -3 to 3.
        assert!(analysis.pairs.iter().all(|p| p.cases.len() == 7));
    }

    /// A model whose split does not match its build.
    #[derive(Debug)]
    struct Broken;
    impl Model for Broken {
        type State = u8;
        type Op = u8;
        type Ret = ();
        fn name(&self) -> &str {
            "broken"
        }
        fn init(&self) -> u8 {
            0
        }
        fn step(&self, _: &mut u8, _: &u8) {}
    }
    impl Explore for Broken {
        fn kinds(&self) -> Vec<OpKind> {
            vec![OpKind::blind("poke", &[])]
        }
        fn build(&self, _: usize, _: &[Arg]) -> Option<u8> {
            Some(1)
        }
        fn split(&self, _: &u8) -> (usize, Vec<Arg>) {
            (0, vec![Arg::Int(1)])
        }
        fn map_symbols(&self, s: &u8, _: &mut dyn FnMut(u64) -> u64) -> u8 {
            *s
        }
    }

    #[test]
    fn an_inconsistent_model_is_a_clear_error() {
        let err = analyze(&Broken, &Bounds::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "model `broken` is inconsistent: 1, built as poke[], splits into kind 0 with [Int(1)]"
        );
    }

    #[test]
    fn too_many_states_is_a_clear_error() {
        let err = analyze(&CounterModel, &Bounds { depth: 5, max_states: 4 }).unwrap_err();
        assert_eq!(
            err.to_string(),
            "model `counter` has more than 4 states within 5 operations; lower the depth bound"
        );
    }
}
