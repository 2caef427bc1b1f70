//! Sequential specifications ("models") of the structures this workspace builds.
//!
//! A model describes a sequential interface once: its abstract state, its operations with
//! their arguments, and their responses. Every tool reads the same description:
//!
//! * the commutativity checker (`commuter`, 002 ch. 6) enumerates states and operations and
//!   decides SIM commutativity with [`Model::step`], using what [`explore::Explore`] adds
//!   (operation kinds, argument domains, renaming of values that matter only by equality);
//! * the linearizability checker replays concurrent histories against [`Model::step`];
//! * tests compare implementations with it.
//!
//! [`Concurrent`] is the other half, written once for every tool too: how an implementation
//! runs a model's operation. Each structure implements it once (the structures crate for its
//! traits' objects, `dyn Rmap` and the like), and the linearizability checker, the
//! commutativity checker's tracer and the structures' tests all drive implementations
//! through it.
//!
//! Models must be deterministic: the same operation on equal states gives equal responses and
//! equal next states. [`check_deterministic`] verifies that for a given state and operation,
//! and every tool calls it before trusting a model, reporting a [`NotDeterministic`] error
//! that names the model, the state and the operation.
//!
//! | model | operations | text |
//! |---|---|---|
//! | [`counter::CounterModel`] | `inc`, `dec`, `read` | 000 Figure 8 |
//! | [`counter::ZeroReportingCounter`] | `inc`, `dec` (reports reaching zero), `read` | 002 §8.1 |
//! | [`set::SetModel`] | `add`, `remove`, `contains` | 000 §7.3 (the list), §7.4 |
//! | [`rmap::RmapModel`] | `add`, `remove`, `truncate` | 000 §4.3, Figure 7 |
//! | [`queue::QueueModel`] | `enqueue`, `dequeue` | 000 §3 (inotify) |
//! | [`lru::LruModel`] | `touch`, `remove`, `evict` | 000 §1 |
//! | [`open_files::OpenFilesModel`] | `open`, `close`, `list` | 000 §7.4, 004 §4.5 |
//! | [`namecache::EntryModel`] | `lookup`, `release`, `invalidate`, `generation`, `refcount` | 000 §3, 004 §4.4 |
//!
//! Every model but the last two also implements [`explore::Explore`] (the commutativity
//! checker covers those structures); the open-file list and the name-cache entry have the
//! plain [`Model`] (the linearizability suite and the structures' tests use them), and the
//! checker gives them the extension in its own crate (`crates/commuter/src/models`).

use std::fmt::{self, Debug};
use std::hash::Hash;
use std::sync::Arc;

pub mod counter;
pub mod explore;
pub mod lru;
pub mod namecache;
pub mod open_files;
pub mod queue;
pub mod rmap;
pub mod set;

/// A sequential specification: state, operations, responses.
pub trait Model {
    /// The abstract state. Equality is observational equivalence for the tools: two states
    /// are equal exactly when no sequence of operations can tell them apart.
    type State: Clone + Eq + Hash + Debug;
    /// One operation with its arguments.
    type Op: Clone + Eq + Hash + Debug;
    /// What an operation returns (`()` for blind updates).
    type Ret: Clone + Eq + Hash + Debug;

    /// A short name for reports and errors.
    fn name(&self) -> &str;

    /// The initial state.
    fn init(&self) -> Self::State;

    /// Applies `op` to `state` and returns its response.
    fn step(&self, state: &mut Self::State, op: &Self::Op) -> Self::Ret;
}

/// A concurrent implementation of the structure that `M` specifies: runs one of the model's
/// operations and answers as the model would express it.
///
/// Implementations are shared by threads (`Sync`). A linearizable implementation, driven by
/// operations whose real-time order is total, answers exactly what [`Model::step`] answers to
/// the same operations in that order; under concurrency, some order that keeps the real-time
/// order must explain its answers (the linearizability checker's question).
pub trait Concurrent<M: Model + ?Sized>: Sync {
    /// Runs `op` on this implementation and returns its response.
    fn call(&self, op: &M::Op) -> M::Ret;
}

impl<M: Model + ?Sized, C: Concurrent<M> + ?Sized> Concurrent<M> for &C {
    fn call(&self, op: &M::Op) -> M::Ret {
        (**self).call(op)
    }
}

impl<M: Model + ?Sized, C: Concurrent<M> + ?Sized> Concurrent<M> for Box<C> {
    fn call(&self, op: &M::Op) -> M::Ret {
        (**self).call(op)
    }
}

impl<M: Model + ?Sized, C: Concurrent<M> + Send + ?Sized> Concurrent<M> for Arc<C> {
    fn call(&self, op: &M::Op) -> M::Ret {
        (**self).call(op)
    }
}

/// A model gave two different outcomes for the same operation on the same state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotDeterministic {
    /// The model's name.
    pub model: String,
    /// The state, formatted.
    pub state: String,
    /// The operation, formatted.
    pub op: String,
    /// The two outcomes (response and next state), formatted.
    pub outcomes: [String; 2],
}

impl fmt::Display for NotDeterministic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "model `{}` is not deterministic: {} on state {} gave {} once and {} the next time",
            self.model, self.op, self.state, self.outcomes[0], self.outcomes[1]
        )
    }
}

impl std::error::Error for NotDeterministic {}

/// Applies `op` to two copies of `state` and checks both runs agree.
///
/// # Errors
/// [`NotDeterministic`] naming the model, state, operation and both outcomes.
pub fn check_deterministic<M: Model + ?Sized>(model: &M, state: &M::State, op: &M::Op) -> Result<(), NotDeterministic> {
    let (mut a, mut b) = (state.clone(), state.clone());
    let (ra, rb) = (model.step(&mut a, op), model.step(&mut b, op));
    if ra == rb && a == b {
        return Ok(());
    }
    Err(NotDeterministic {
        model: model.name().to_owned(),
        state: format!("{state:?}"),
        op: format!("{op:?}"),
        outcomes: [format!("{ra:?} -> {a:?}"), format!("{rb:?} -> {b:?}")],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A broken model whose response depends on how often it ran.
    struct Flaky(Cell<u32>);

    impl Model for Flaky {
        type State = u32;
        type Op = ();
        type Ret = u32;
        fn name(&self) -> &str {
            "flaky"
        }
        fn init(&self) -> u32 {
            0
        }
        fn step(&self, _: &mut u32, _: &()) -> u32 {
            self.0.set(self.0.get() + 1);
            self.0.get()
        }
    }

    #[test]
    fn a_nondeterministic_model_is_named_in_the_error() {
        let err = check_deterministic(&Flaky(Cell::new(0)), &0, &()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "model `flaky` is not deterministic: () on state 0 gave 1 -> 0 once and 2 -> 0 the next time"
        );
    }

    #[test]
    fn the_shipped_models_are_deterministic() {
        let c = counter::CounterModel;
        let mut s = c.init();
        for op in [counter::CounterOp::Inc, counter::CounterOp::Dec, counter::CounterOp::Read, counter::CounterOp::Dec]
        {
            check_deterministic(&c, &s, &op).unwrap();
            c.step(&mut s, &op);
        }
        let m = set::SetModel;
        let mut s = m.init();
        for op in [set::SetOp::Add(1), set::SetOp::Contains(1), set::SetOp::Remove(1), set::SetOp::Remove(1)] {
            check_deterministic(&m, &s, &op).unwrap();
            m.step(&mut s, &op);
        }
    }
}

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
