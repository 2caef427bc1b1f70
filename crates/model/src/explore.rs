//! What a commutativity analyzer needs from a model beyond [`Model::step`]: the operation
//! kinds with their parameters, how to build and take apart operations, how to rename the
//! values that matter only by equality, and a vocabulary of facts for conditions a person
//! can read.
//!
//! 002 §6.1 has ANALYZER execute the model symbolically; this workspace's analyzer
//! (`crates/commuter`) enumerates instead, and [`Explore`] is what makes enumeration finite
//! and exact:
//!
//! * every parameter is either a [`Values::Symbol`], a value that matters only by
//!   equality (a key, an event, a mapping's identity; `tuninterpreted` in 002 Figure 6-3),
//!   or a small [`Values::Int`] range whose values matter (an offset). Symbols are drawn from
//!   a small pool, and two assignments with the same pattern of equal and distinct symbols
//!   are one case (002 §6.2's isomorphism groups), which [`Explore::map_symbols`] makes
//!   checkable;
//! * operations are rebuilt from kinds and arguments ([`Explore::build`]) and taken apart
//!   again ([`Explore::split`]), so the analyzer can enumerate and rename them without
//!   knowing the model's types;
//! * [`Explore::facts`] names the properties of a state and arguments that decide
//!   commutativity ("x ∈ S"); the analyzer adds equalities between symbols and comparisons
//!   between integers itself, and reports any case class its facts cannot separate.

use crate::Model;

/// The values a parameter ranges over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Values {
    /// Values that matter only by equality (keys, identities). The analyzer draws them
    /// from a small pool and treats assignments with the same pattern of equal and distinct
    /// values as one (002 §6.2).
    Symbol,
    /// Integers from `lo` to `hi` (inclusive) whose values matter, enumerated one by one.
    Int {
        /// Smallest value.
        lo: i64,
        /// Largest value.
        hi: i64,
    },
}

/// One parameter of an operation kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// Its name in conditions and tests (`x`, `offset`).
    pub name: &'static str,
    /// What it ranges over.
    pub values: Values,
}

impl Param {
    /// A parameter that matters only by equality.
    pub const fn symbol(name: &'static str) -> Self {
        Param { name, values: Values::Symbol }
    }

    /// An integer parameter ranging over `lo..=hi`.
    pub const fn int(name: &'static str, lo: i64, hi: i64) -> Self {
        Param { name, values: Values::Int { lo, hi } }
    }
}

/// One kind of operation: its name, parameters, and whether it is a blind update.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpKind {
    /// Its name (`add`, `dequeue`).
    pub name: &'static str,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// A *blind update*: it returns nothing, so an implementation may defer it and log it
    /// (000 §4.1). Operations that return something (reads, `dequeue`) are not.
    pub blind: bool,
}

impl OpKind {
    /// A blind update.
    pub fn blind(name: &'static str, params: &[Param]) -> Self {
        OpKind { name, params: params.to_vec(), blind: true }
    }

    /// An operation that returns something.
    pub fn returning(name: &'static str, params: &[Param]) -> Self {
        OpKind { name, params: params.to_vec(), blind: false }
    }
}

/// One argument value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arg {
    /// A value of a [`Values::Symbol`] parameter.
    Symbol(u64),
    /// A value of a [`Values::Int`] parameter.
    Int(i64),
}

impl Arg {
    /// The symbol, if this is one.
    pub fn symbol(self) -> Option<u64> {
        match self {
            Arg::Symbol(s) => Some(s),
            Arg::Int(_) => None,
        }
    }

    /// The integer, if this is one.
    pub fn int(self) -> Option<i64> {
        match self {
            Arg::Int(i) => Some(i),
            Arg::Symbol(_) => None,
        }
    }
}

/// A statement about a state and arguments that holds or fails, written both ways so a
/// condition reads naturally (`x ∈ S` / `x ∉ S`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fact {
    /// The statement when it holds.
    pub holds: String,
    /// The statement when it fails.
    pub fails: String,
    /// Whether it holds.
    pub value: bool,
}

impl Fact {
    /// A fact.
    pub fn new(holds: impl Into<String>, fails: impl Into<String>, value: bool) -> Self {
        Fact { holds: holds.into(), fails: fails.into(), value }
    }
}

/// An operation with the display names of its parameters in one analyzed pair (the
/// analyzer renames the second operation's parameters when they clash: `add(x)` /
/// `remove(y)`).
#[derive(Clone, Copy, Debug)]
pub struct NamedOp<'a, Op> {
    /// The operation.
    pub op: &'a Op,
    /// Display names of its parameters, in order.
    pub names: &'a [String],
}

impl<Op> NamedOp<'_, Op> {
    /// The display name of parameter `i`.
    ///
    /// # Panics
    /// If the operation has no parameter `i` (a model bug).
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }
}

/// What the commutativity analyzer needs from a model (see the module docs).
///
/// States and operations must be ordered (`Ord`) so that the analyzer can pick one
/// canonical representative among renamings of a case.
pub trait Explore: Model<State: Ord, Op: Ord> {
    /// The operation kinds, in the order reports list them.
    fn kinds(&self) -> Vec<OpKind>;

    /// The operation of kind `kind` (an index into [`Explore::kinds`]) with `args` (one per
    /// parameter, of the parameter's variant), or `None` if the combination is not an
    /// operation (an interval whose end precedes its start).
    fn build(&self, kind: usize, args: &[Arg]) -> Option<Self::Op>;

    /// The kind and arguments of `op`: `build(split(op)) == Some(op)`.
    fn split(&self, op: &Self::Op) -> (usize, Vec<Arg>);

    /// `state` with every symbol `s` in it replaced by `f(s)` (`f` is injective on the
    /// state's symbols). A state holding no symbols is returned unchanged.
    fn map_symbols(&self, state: &Self::State, f: &mut dyn FnMut(u64) -> u64) -> Self::State;

    /// The states the analyzer starts from (default: [`Model::init`]). States reached from
    /// `init` by operations get set-up sequences that tests replay on implementations;
    /// other seeds can be analyzed but not traced.
    fn initial_states(&self) -> Vec<Self::State> {
        vec![self.init()]
    }

    /// Facts about `state` and the arguments of `ops` (both operations of a pair) that
    /// commutativity may depend on, such as "x ∈ S" for each symbol argument `x`. The
    /// analyzer adds equalities between symbol arguments and comparisons between integer
    /// arguments itself. The list's names must depend only on the operations' kinds and
    /// parameter names, not on the values. Default: none.
    fn facts(&self, state: &Self::State, ops: &[NamedOp<'_, Self::Op>]) -> Vec<Fact> {
        let _ = (state, ops);
        Vec::new()
    }
}

/// The symbols in `state`, ascending, without repeats.
pub fn symbols<M: Explore + ?Sized>(model: &M, state: &M::State) -> Vec<u64> {
    let mut seen = Vec::new();
    model.map_symbols(state, &mut |s| {
        seen.push(s);
        s
    });
    seen.sort_unstable();
    seen.dedup();
    seen
}

/// `op` with every symbol argument `s` replaced by `f(s)`.
///
/// # Panics
/// If the model cannot rebuild an operation from its own split (a model bug the analyzer
/// checks for first).
pub fn map_op_symbols<M: Explore + ?Sized>(model: &M, op: &M::Op, f: &mut dyn FnMut(u64) -> u64) -> M::Op {
    let (kind, args) = model.split(op);
    let args: Vec<Arg> = args
        .into_iter()
        .map(|a| match a {
            Arg::Symbol(s) => Arg::Symbol(f(s)),
            int => int,
        })
        .collect();
    model.build(kind, &args).expect("a model rebuilds a renamed operation")
}

/// For a fact about each symbol argument of `ops`: `holds(name)`, `fails(name)` and the
/// value `test(symbol)`. The common case of [`Explore::facts`] ("x ∈ S").
pub fn symbol_facts<Op>(
    ops: &[NamedOp<'_, Op>],
    split: impl Fn(&Op) -> Vec<Arg>,
    holds: impl Fn(&str) -> String,
    fails: impl Fn(&str) -> String,
    test: impl Fn(u64) -> bool,
) -> Vec<Fact> {
    let mut facts = Vec::new();
    for named in ops {
        for (i, arg) in split(named.op).into_iter().enumerate() {
            if let Arg::Symbol(s) = arg {
                facts.push(Fact::new(holds(named.name(i)), fails(named.name(i)), test(s)));
            }
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{counter, lru, queue, rmap, set};

    /// Every argument list of `kind` over symbols `0..3` and the kind's integer ranges.
    fn arg_lists(kind: &OpKind) -> Vec<Vec<Arg>> {
        let mut lists = vec![Vec::new()];
        for p in &kind.params {
            let values: Vec<Arg> = match p.values {
                Values::Symbol => (0..3).map(Arg::Symbol).collect(),
                Values::Int { lo, hi } => (lo..=hi).map(Arg::Int).collect(),
            };
            lists =
                lists.into_iter().flat_map(|l| values.iter().map(move |v| [l.clone(), vec![*v]].concat())).collect();
        }
        lists
    }

    /// Builds every operation, splits it back, and renames a state it reached.
    fn round_trip<M: Explore>(model: &M) {
        let mut state = model.init();
        for (k, kind) in model.kinds().iter().enumerate() {
            for args in arg_lists(kind) {
                let Some(op) = model.build(k, &args) else { continue };
                assert_eq!(model.split(&op), (k, args.clone()), "{}: {op:?}", model.name());
                model.step(&mut state, &op);
            }
        }
        let shifted = model.map_symbols(&state, &mut |s| s + 10);
        assert_eq!(model.map_symbols(&shifted, &mut |s| s - 10), state);
        assert!(symbols(model, &shifted).iter().all(|&s| s >= 10));
    }

    #[test]
    fn every_model_builds_splits_and_renames_consistently() {
        round_trip(&counter::CounterModel);
        round_trip(&counter::ZeroReportingCounter);
        round_trip(&set::SetModel);
        round_trip(&rmap::RmapModel);
        round_trip(&queue::QueueModel);
        round_trip(&lru::LruModel);
    }

    #[test]
    fn symbol_facts_name_each_symbol_argument() {
        let names = [String::from("x")];
        let ops = [NamedOp { op: &set::SetOp::Add(4), names: &names }];
        let facts = set::SetModel.facts(&[4].into(), &ops);
        assert_eq!(facts, vec![Fact::new("x ∈ S", "x ∉ S", true)]);
    }
}
