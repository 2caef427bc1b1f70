//! Models written here for the structures whose sequential specification has no
//! [`Explore`](oplog_model::explore::Explore) extension in `oplog-model`, or none at all.
//!
//! * [`Explored<M>`] gives a model of `oplog-model` the extension the analyzer needs,
//!   without a second copy of its specification: the model's own [`Model`] answers every
//!   step, and this crate adds the operation kinds, their argument domains and the facts
//!   ([`open_files`] for the open-file list, [`namecache`] for the name-cache entry). The
//!   structures crate's implementations answer it through their own `Concurrent` impls
//!   (`explored!`).
//! * [`refcache::RefcacheModel`] is Refcache's interface (002 §8.1), which no other tool
//!   of the workspace uses: `inc`, `dec`, `tryget`, and `collect`.

use oplog_model::Model;

pub mod namecache;
pub mod open_files;
pub mod refcache;

/// A model of `oplog-model` with its `Explore` extension written in this crate (see the
/// module docs): every [`Model`] item is `M`'s.
#[derive(Clone, Copy, Debug, Default)]
pub struct Explored<M>(pub M);

impl<M: Model> Model for Explored<M> {
    type State = M::State;
    type Op = M::Op;
    type Ret = M::Ret;

    fn name(&self) -> &str {
        self.0.name()
    }

    fn init(&self) -> M::State {
        self.0.init()
    }

    fn step(&self, state: &mut M::State, op: &M::Op) -> M::Ret {
        self.0.step(state, op)
    }
}

/// Implements `oplog_model::Concurrent<Explored<$model>>` for each listed type by its
/// `Concurrent<$model>`: the structures crate's one mapping from model operations to
/// methods, reused as is.
macro_rules! explored {
    ($model:ty: $($ty:ty),+ $(,)?) => {
        $(
            impl oplog_model::Concurrent<$crate::models::Explored<$model>> for $ty {
                fn call(&self, op: &<$model as oplog_model::Model>::Op) -> <$model as oplog_model::Model>::Ret {
                    oplog_model::Concurrent::<$model>::call(self, op)
                }
            }
        )+
    };
}
pub(crate) use explored;
