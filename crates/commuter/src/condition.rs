//! Commutativity conditions a person can read: the smallest formula over a pair's facts
//! that separates the cases that commute from those that do not.
//!
//! 002's ANALYZER reports the disjunction of the symbolic path conditions under which a pair
//! commutes (§6.1.2). Enumeration gives cases instead, each with a truth value for every
//! fact ("x ∈ S", "x = y"); cases with the same values form a *class*. The condition is a
//! disjunction of conjunctions of facts (a DNF) that is true for every class that commutes
//! and false for every class that does not; classes never observed are free either way.
//! It is found like a two-level logic minimizer: for each commuting class, the smallest
//! sets of its facts that exclude every non-commuting class (prime implicants, searched
//! up to [`MAX_LITERALS`] facts), then a greedy cover. Both polarities are computed and the
//! shorter one is printed ("commute iff x ≠ y", or "commute unless …").
//!
//! A class with cases of both verdicts means the facts cannot tell them apart: it is
//! reported, never hidden, and the model's vocabulary ([`Explore::facts`]) should grow.
//!
//! [`Explore::facts`]: oplog_model::explore::Explore::facts

use std::collections::BTreeSet;
use std::fmt;

/// Implicants are searched up to this many facts; beyond, a class's full description is
/// used (exact, but long).
pub const MAX_LITERALS: usize = 4;

/// A fact a condition can mention.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    /// A fact with its two readings.
    Fact {
        /// The reading when it holds (`x ∈ S`).
        holds: String,
        /// The reading when it fails (`x ∉ S`).
        fails: String,
    },
    /// `left ≤ right` (integers); printed together with a matching [`Var::Ge`].
    Le(String, String),
    /// `left ≥ right` (integers).
    Ge(String, String),
}

impl Var {
    /// The text of this fact with value `value`, on its own.
    pub fn reading(&self, value: bool) -> String {
        match (self, value) {
            (Var::Fact { holds, .. }, true) => holds.clone(),
            (Var::Fact { fails, .. }, false) => fails.clone(),
            (Var::Le(l, r), true) => format!("{l} ≤ {r}"),
            (Var::Le(l, r), false) => format!("{l} > {r}"),
            (Var::Ge(l, r), true) => format!("{l} ≥ {r}"),
            (Var::Ge(l, r), false) => format!("{l} < {r}"),
        }
    }
}

/// A conjunction: for each variable, a required value or `None` (not mentioned).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cube(pub Vec<Option<bool>>);

impl Cube {
    /// Whether the class with fact values `v` satisfies the conjunction.
    pub fn matches(&self, v: &[bool]) -> bool {
        self.0.iter().zip(v).all(|(l, x)| l.is_none_or(|l| l == *x))
    }

    /// Number of facts mentioned.
    pub fn literals(&self) -> usize {
        self.0.iter().filter(|l| l.is_some()).count()
    }
}

/// When a pair commutes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// In every enumerated case.
    Always,
    /// In no enumerated case.
    Never,
    /// Exactly when one of the conjunctions holds.
    Iff(Vec<Cube>),
    /// Exactly when none of the conjunctions holds.
    Unless(Vec<Cube>),
}

/// A pair's condition with what it could not decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The facts, in the order of each class's values.
    pub vars: Vec<Var>,
    /// The condition over the decided classes.
    pub condition: Condition,
    /// Classes (fact values) holding cases of both verdicts.
    pub undecided: Vec<Vec<bool>>,
}

impl Summary {
    /// Finds the condition for classes given as `(fact values, commutes)`, one entry per
    /// case.
    pub fn new(vars: Vec<Var>, cases: impl IntoIterator<Item = (Vec<bool>, bool)>) -> Self {
        let mut on = BTreeSet::new();
        let mut off = BTreeSet::new();
        for (v, commutes) in cases {
            assert_eq!(v.len(), vars.len(), "a class needs one value per fact");
            if commutes {
                on.insert(v)
            } else {
                off.insert(v)
            };
        }
        let undecided: Vec<Vec<bool>> = on.intersection(&off).cloned().collect();
        for v in &undecided {
            on.remove(v);
            off.remove(v);
        }
        let (on, off): (Vec<_>, Vec<_>) = (on.into_iter().collect(), off.into_iter().collect());
        let condition = if on.is_empty() {
            if off.is_empty() && !undecided.is_empty() { Condition::Iff(Vec::new()) } else { Condition::Never }
        } else if off.is_empty() {
            Condition::Always
        } else {
            let relevant = relevant_vars(vars.len(), &on, &off);
            let iff = cover(&on, &off, &relevant);
            let unless = cover(&off, &on, &relevant);
            // Fewer facts mentioned, then fewer alternatives; ties read as "iff".
            let size = |c: &[Cube]| (c.iter().map(Cube::literals).sum::<usize>(), c.len());
            if size(&unless) < size(&iff) { Condition::Unless(unless) } else { Condition::Iff(iff) }
        };
        Summary { vars, condition, undecided }
    }

    /// The condition as text: `always`, `never`, `iff x ≠ y`, `unless x = y ∧ x ∈ S`.
    pub fn render(&self) -> String {
        let mut text = match &self.condition {
            Condition::Always => "always".to_owned(),
            Condition::Never => "never".to_owned(),
            Condition::Iff(cubes) => format!("iff {}", render_dnf(&self.vars, cubes)),
            Condition::Unless(cubes) => format!("unless {}", render_dnf(&self.vars, cubes)),
        };
        if !self.undecided.is_empty() {
            text.push_str(&format!(
                " (the facts do not decide {} class{}: {})",
                self.undecided.len(),
                if self.undecided.len() == 1 { "" } else { "es" },
                self.undecided.iter().map(|v| self.describe(v)).collect::<Vec<_>>().join("; ")
            ));
        }
        text
    }

    /// A class's fact values as text (`x ≠ y ∧ x ∈ S`).
    pub fn describe(&self, values: &[bool]) -> String {
        let cube = Cube(values.iter().map(|&v| Some(v)).collect());
        let text = render_cube(&self.vars, &cube);
        if text.is_empty() { "every case".to_owned() } else { text }
    }

    /// The shortest description of class `values` that tells it apart from every class in
    /// `classes` (`x = y ∧ x ∉ L` rather than every fact of the class).
    pub fn describe_among(&self, values: &[bool], classes: &[Vec<bool>]) -> String {
        let others: Vec<Vec<bool>> = classes.iter().filter(|c| c.as_slice() != values).cloned().collect();
        let mut all = others.clone();
        all.push(values.to_vec());
        let relevant = relevant_vars(values.len(), &all, &[]);
        let cube = smallest_excluding(values, &others, &relevant).remove(0);
        let text = render_cube(&self.vars, &cube);
        if text.is_empty() { "every case".to_owned() } else { text }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// Variables whose value differs between two observed classes.
fn relevant_vars(n: usize, on: &[Vec<bool>], off: &[Vec<bool>]) -> Vec<usize> {
    (0..n).filter(|&i| on.iter().chain(off).any(|v| v[i]) && on.iter().chain(off).any(|v| !v[i])).collect()
}

/// The smallest conjunctions of `v`'s own fact values (over `relevant` variables, up to
/// [`MAX_LITERALS`] of them) that no class in `off` satisfies; if there are none that
/// small, `v`'s full description over the relevant facts (which excludes every `off`
/// class that differs from `v` on a relevant fact).
fn smallest_excluding(v: &[bool], off: &[Vec<bool>], relevant: &[usize]) -> Vec<Cube> {
    let n = v.len();
    for size in 1..=relevant.len().min(MAX_LITERALS) {
        let found: Vec<Cube> = subsets(relevant, size)
            .into_iter()
            .map(|subset| {
                let mut cube = vec![None; n];
                for &i in &subset {
                    cube[i] = Some(v[i]);
                }
                Cube(cube)
            })
            .filter(|cube| !off.iter().any(|o| cube.matches(o)))
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    let mut cube = vec![None; n];
    for &i in relevant {
        cube[i] = Some(v[i]);
    }
    vec![Cube(cube)]
}

/// A small set of cubes over `relevant` variables covering every class in `on` and none in
/// `off` (see the module docs).
fn cover(on: &[Vec<bool>], off: &[Vec<bool>], relevant: &[usize]) -> Vec<Cube> {
    let candidates: BTreeSet<Cube> = on.iter().flat_map(|v| smallest_excluding(v, off, relevant)).collect();
    let mut uncovered: Vec<&Vec<bool>> = on.iter().collect();
    let mut chosen: Vec<Cube> = Vec::new();
    while !uncovered.is_empty() {
        let best = candidates
            .iter()
            .max_by_key(|c| {
                let covers = uncovered.iter().filter(|v| c.matches(v)).count();
                // Ties: fewer facts, then facts listed earlier (the model's order).
                let positions: Vec<usize> =
                    c.0.iter().enumerate().filter(|(_, l)| l.is_some()).map(|(i, _)| i).collect();
                (covers, std::cmp::Reverse(c.literals()), std::cmp::Reverse(positions))
            })
            .expect("every commuting class has a candidate")
            .clone();
        uncovered.retain(|v| !best.matches(v));
        chosen.push(best);
    }
    // Drop cubes the others make redundant.
    let mut i = 0;
    while i < chosen.len() {
        let others: Vec<&Cube> = chosen.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, c)| c).collect();
        if on.iter().filter(|v| chosen[i].matches(v)).all(|v| others.iter().any(|c| c.matches(v))) {
            chosen.remove(i);
        } else {
            i += 1;
        }
    }
    chosen.sort_by_key(|c| (c.literals(), c.clone()));
    chosen
}

/// Every `size`-element subset of `items`, in lexicographic order.
fn subsets(items: &[usize], size: usize) -> Vec<Vec<usize>> {
    if size == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        for mut rest in subsets(&items[i + 1..], size - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

fn render_dnf(vars: &[Var], cubes: &[Cube]) -> String {
    let parts: Vec<String> = cubes
        .iter()
        .map(|c| {
            let text = render_cube(vars, c);
            if cubes.len() > 1 && c.literals() > 1 { format!("({text})") } else { text }
        })
        .collect();
    parts.join(" ∨ ")
}

/// A conjunction as text, merging `p ≤ q` and `p ≥ q` on the same integers into `p = q`,
/// `p < q` or `p > q`.
fn render_cube(vars: &[Var], cube: &Cube) -> String {
    let mut parts = Vec::new();
    let mut done = vec![false; vars.len()];
    for (i, var) in vars.iter().enumerate() {
        let Some(value) = cube.0[i] else { continue };
        if done[i] {
            continue;
        }
        done[i] = true;
        if let Var::Le(l, r) = var {
            let partner = vars.iter().position(|w| *w == Var::Ge(l.clone(), r.clone()));
            if let Some(j) = partner.filter(|&j| cube.0[j].is_some()) {
                done[j] = true;
                parts.push(match (value, cube.0[j] == Some(true)) {
                    (true, true) => format!("{l} = {r}"),
                    (true, false) => format!("{l} < {r}"),
                    (false, true) => format!("{l} > {r}"),
                    (false, false) => format!("false ({l} ≤ {r} and {l} ≥ {r} both fail)"),
                });
                continue;
            }
        }
        parts.push(var.reading(value));
    }
    parts.join(" ∧ ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(name: &str) -> Var {
        Var::Fact { holds: name.to_owned(), fails: format!("¬{name}") }
    }

    #[test]
    fn one_fact_decides() {
        // x = y, x ∈ S: commute iff x ≠ y.
        let vars = vec![
            Var::Fact { holds: "x = y".into(), fails: "x ≠ y".into() },
            Var::Fact { holds: "x ∈ S".into(), fails: "x ∉ S".into() },
        ];
        let cases = [
            (vec![false, false], true),
            (vec![false, true], true),
            (vec![true, false], false),
            (vec![true, true], false),
        ];
        let s = Summary::new(vars, cases);
        assert_eq!(s.render(), "iff x ≠ y");
    }

    #[test]
    fn always_never_and_unobserved_classes_are_free() {
        let vars = vec![fact("a"), fact("b")];
        assert_eq!(Summary::new(vars.clone(), [(vec![true, false], true)]).render(), "always");
        assert_eq!(Summary::new(vars.clone(), [(vec![true, false], false)]).render(), "never");
        // Only two classes observed: one fact suffices even though a second one varies.
        let s = Summary::new(vars, [(vec![true, true], true), (vec![false, false], false)]);
        assert_eq!(s.render(), "iff a");
    }

    #[test]
    fn the_shorter_polarity_is_printed() {
        // Commute unless a, b and c all hold: "iff ¬a ∨ ¬b ∨ ¬c" mentions as many facts as
        // "unless a ∧ b ∧ c" but needs three alternatives.
        let vars = vec![fact("a"), fact("b"), fact("c")];
        let mut cases = Vec::new();
        for bits in 0..8u8 {
            let v = vec![bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
            cases.push((v.clone(), !(v[0] && v[1] && v[2])));
        }
        assert_eq!(Summary::new(vars, cases).render(), "unless a ∧ b ∧ c");
    }

    #[test]
    fn integer_comparisons_merge() {
        let vars = vec![Var::Le("e".into(), "o".into()), Var::Ge("e".into(), "o".into())];
        // Commute iff e ≤ o.
        let cases = [(vec![true, false], true), (vec![true, true], true), (vec![false, true], false)];
        assert_eq!(Summary::new(vars.clone(), cases).render(), "iff e ≤ o");
        // Commute iff e = o.
        let cases = [(vec![true, false], false), (vec![true, true], true), (vec![false, true], false)];
        assert_eq!(Summary::new(vars, cases).render(), "iff e = o");
    }

    #[test]
    fn a_class_with_both_verdicts_is_reported() {
        let vars = vec![fact("a")];
        let s = Summary::new(vars, [(vec![true], true), (vec![true], false), (vec![false], false)]);
        assert_eq!(s.undecided, vec![vec![true]]);
        assert_eq!(s.render(), "never (the facts do not decide 1 class: a)");
    }

    #[test]
    fn a_class_is_described_by_what_sets_it_apart() {
        let vars = vec![fact("a"), fact("b"), fact("c")];
        let classes = vec![vec![true, true, false], vec![false, true, false], vec![false, false, true]];
        let s = Summary::new(vars, classes.iter().map(|c| (c.clone(), c[0])));
        assert_eq!(s.describe_among(&classes[0], &classes), "a");
        assert_eq!(s.describe_among(&classes[1], &classes), "¬a ∧ b");
        assert_eq!(s.describe(&classes[1]), "¬a ∧ b ∧ ¬c");
    }

    #[test]
    fn a_disjunction_is_found() {
        // Commute iff a ∨ (b ∧ c).
        let vars = vec![fact("a"), fact("b"), fact("c")];
        let mut cases = Vec::new();
        for bits in 0..8u8 {
            let v = vec![bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
            cases.push((v.clone(), v[0] || (v[1] && v[2])));
        }
        assert_eq!(Summary::new(vars, cases).render(), "iff a ∨ (b ∧ c)");
    }
}
