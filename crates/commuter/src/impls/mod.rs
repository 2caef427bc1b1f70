//! Implementations under test: one small adapter per implementation of a model.
//!
//! An adapter makes a structure answer the model's operations ([`Object::run`]) and says
//! how to bring it into its steady state on a core without changing its abstract state
//! ([`Object::warm`]). An [`Impl`] names it and builds fresh objects. Covering a new
//! structure is a model (in `oplog-model`), an `Object` impl per implementation, and one
//! entry in [`crate::structures`].
//!
//! Ids starting with `oplog` are OpLog versions; ids starting with `mutex` are the mutex
//! baselines (the texts' "stock" versions: the sequential type under one lock).
//!
//! | structure | implementations |
//! |---|---|
//! | counter | [`counter::OplogCounter`] (`oplog`, `oplog-perthread`), [`counter::MutexCounter`] (`mutex`) |
//! | set | [`set::OplogSet`] (`oplog`), [`set::MutexSet`] (`mutex`) |

use oplog_model::Model;

pub mod counter;
pub mod set;

/// A structure answering a model's operations (see the module docs).
pub trait Object<M: Model>: Send + Sync {
    /// Runs `op` on the structure and returns its response.
    fn run(&self, op: &M::Op) -> M::Ret;

    /// Brings the object into its steady state on the calling core without changing its
    /// abstract state (for OpLog structures: installs it in the core's log cache). The
    /// default does nothing.
    fn warm(&self) {}
}

/// An implementation of model `M` under test.
pub struct Impl<M: Model> {
    /// Stable id: `oplog…` for OpLog versions, `mutex…` for mutex baselines.
    pub id: &'static str,
    /// One line: what it is.
    pub about: &'static str,
    /// Builds a fresh object in the model's initial state.
    pub build: fn() -> Box<dyn Object<M>>,
}

impl<M: Model> std::fmt::Debug for Impl<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Impl").field("id", &self.id).field("about", &self.about).finish()
    }
}

/// A key the models never use (their symbols are small), for warming set-like structures
/// with an add and a remove that cancel.
pub const WARM_KEY: u64 = u64::MAX;
