//! TESTGEN (002 §6.2): one concrete test per commutative case.
//!
//! 002's TESTGEN solves each path condition for concrete values and enumerates
//! assignments that differ in their pattern of equal and distinct values ("conflict
//! coverage"). The analyzer already works case by case over exactly those patterns, so a
//! test is a commutative case made concrete: the set-up operations that reach its state
//! from the initial one, then operation A for one core and operation B for another (002
//! Figure 6-6). Every such test should have a conflict-free implementation (002 §4.4).
//!
//! Cases whose state was generated rather than reached by operations have no set-up and
//! are counted as untraceable.

use oplog_model::Model;
use oplog_model::explore::Explore;

use crate::analyzer::{Pair, show_op};

/// A concrete test: set-up, then A on one core and B on another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Test<M: Model> {
    /// Index of the case in its pair.
    pub case: usize,
    /// Operations that bring a fresh object to the case's state.
    pub setup: Vec<M::Op>,
    /// Operation A.
    pub a: M::Op,
    /// Operation B.
    pub b: M::Op,
}

impl<M: Explore> Test<M> {
    /// The test as text, in the shape of 002 Figure 6-6:
    /// `setup: add(s0); add(s1) | A: add(s0) | B: remove(s1)`.
    pub fn render(&self, model: &M) -> String {
        let setup: Vec<String> = self.setup.iter().map(|op| show_op(model, op)).collect();
        let setup = if setup.is_empty() { "-".to_owned() } else { setup.join("; ") };
        format!("setup: {setup} | A: {} | B: {}", show_op(model, &self.a), show_op(model, &self.b))
    }
}

/// The tests of `pair` (one per commutative case with a set-up), and how many commutative
/// cases had none.
pub fn generate<M: Model>(pair: &Pair<M>) -> (Vec<Test<M>>, usize) {
    let mut tests = Vec::new();
    let mut untraceable = 0;
    for (i, case) in pair.cases.iter().enumerate().filter(|(_, c)| c.verdict.commutes()) {
        match &case.setup {
            Some(setup) => tests.push(Test { case: i, setup: setup.clone(), a: case.a.clone(), b: case.b.clone() }),
            None => untraceable += 1,
        }
    }
    (tests, untraceable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::{Bounds, analyze};
    use oplog_model::set::{SetModel, SetOp};

    #[test]
    fn one_test_per_commutative_case_whose_setup_reaches_its_state() {
        let analysis = analyze(&SetModel, &Bounds::default()).unwrap();
        let pair = analysis.pairs.iter().find(|p| (p.a_name, p.b_name) == ("add", "remove")).unwrap();
        let (tests, untraceable) = generate(pair);
        assert_eq!(untraceable, 0);
        assert_eq!(tests.len(), pair.commutative());
        for t in &tests {
            let case = &pair.cases[t.case];
            let mut s = SetModel.init();
            for op in &t.setup {
                SetModel.step(&mut s, op);
            }
            assert_eq!(s, case.state);
            let (SetOp::Add(x), SetOp::Remove(y)) = (t.a, t.b) else { panic!("{t:?}") };
            assert_ne!(x, y);
        }
        let one = tests.iter().find(|t| t.setup.len() == 1).unwrap();
        assert!(one.render(&SetModel).starts_with("setup: add(s"), "{}", one.render(&SetModel));
    }
}
