//! Sequential specifications, and implementations driven by their operations.
//!
//! A [`Model`] is the simplest sequential implementation of a structure's semantics, with
//! its operations and responses as plain data (`Clone + Debug + Eq`). It is the reference
//! every variant is checked against: a linearizable implementation, driven by operations
//! whose real-time order is total, must answer exactly what the model answers to the same
//! operations in that order. The commutativity checker (002 ch. 6) takes the same models.
//!
//! [`Concurrent`] is how an implementation is driven by a model's operations: each
//! structure's trait gets a blanket implementation, so any variant of it can be passed to
//! a generic test or checker.

use std::fmt::Debug;

/// A sequential specification: state, operations, responses.
pub trait Model: Clone + Default + Debug + Send + Sync {
    /// One operation, with its arguments.
    type Op: Clone + Debug + Eq + Send + Sync;
    /// What an operation returns.
    type Response: Clone + Debug + Eq + Send + Sync;

    /// Runs `op` on this state and returns its response.
    fn apply(&mut self, op: &Self::Op) -> Self::Response;
}

/// A concurrent implementation of the structure that `M` specifies.
pub trait Concurrent<M: Model>: Sync {
    /// Runs `op` on this implementation and returns its response.
    fn call(&self, op: &M::Op) -> M::Response;
}
