//! COMMUTER for Rust types (002 ch. 6): which operations of an interface commute, and is an
//! implementation conflict-free for them.
//!
//! The scalable commutativity rule (002 ch. 4) says that whenever operations commute
//! (SIM commutativity, 002 §4.2) some implementation is conflict-free for them, and
//! conflict-free operations scale on a multicore because no cache line moves between
//! cores (002 ch. 3). This crate checks both halves for the workspace's structures:
//!
//! | step | module | 002 |
//! |---|---|---|
//! | the interface, once, in Rust | `oplog_model::Model` + `oplog_model::explore::Explore` | Figure 6-3 |
//! | which pairs commute, when, as a condition a person can read | [`analyzer`], [`condition`] | §6.1, Figures 6-4, 6-5 |
//! | one concrete test per commutative case | [`testgen`] | §6.2, Figure 6-6 |
//! | run each test on two cores, report every shared cache line | [`tracer`] | §6.3 |
//! | per structure, implementation and pair: commutative vs conflict-free | [`report`], [`heatmap`] | Figure 7-1 |
//! | per structure and implementation, and over all OpLog versions: the share conflict-free | [`summary`] | |
//! | the allocator it runs on: whole cache lines per allocation | [`lines`] | |
//! | the implementations under test | [`impls`], [`structures`] | |
//! | models written here (Refcache's; the `Explore` extension of the open-file list's and the name-cache entry's) | [`models`] | Figure 6-3 |
//!
//! Run it with `cargo run --release --manifest-path crates/commuter/Cargo.toml` (tables;
//! `--json` for one object per structure, implementation and pair; `--out DIR` for the
//! heatmaps), or through `oplog-bench commuter`.
//!
//! This crate is its own cargo workspace because it builds `oplog` with the `trace`
//! feature, which swaps every shared-memory primitive for a recording one; in the main
//! workspace that feature would be unified into every build (tests, benchmarks).
//!
//! # Reading the results
//!
//! Conflict-freedom is decided on the accesses the library makes through
//! `oplog_percore::primitive` (atomics, mutexes, cells) and the heap data behind cells it reports
//! (queue logs' entries, slot tables), on the default per-CPU path (the restartable
//! sequence's recording stand-in), at 64-byte line granularity, where 002's MTRACE sees
//! every access (`oplog_percore::primitive::trace` lists the limits). Allocations get whole lines
//! ([`lines`]), so the verdicts do not depend on where the system allocator put two
//! unrelated objects. `oplog-refcount` and `oplog-structures`
//! reach shared memory through the same primitives, so Refcache, the sloppy counter and
//! the texts' structures are traced like OpLog itself. OpLog structures are conflict-free
//! for commutative *updates*; reads synchronize, and conflict by design; Refcache's `inc`
//! and `dec` are conflict-free and its review is not (002 §8.1): [`report`] explains every
//! kind of exception. Implementations with a precondition (the absorbing versions' identity
//! rule, a handle held to clone or drop) are not run on the cases it forbids; those are
//! counted as outside the contract ([`impls`], "Contracts"). [`summary`] sums it all up,
//! over each family: the OpLog versions, the Refcache versions, the sloppy counters, the
//! mutex baselines.

pub mod analyzer;
pub mod condition;
pub mod heatmap;
pub mod impls;
pub mod lines;
pub mod models;
pub mod report;
pub mod structures;
pub mod summary;
pub mod testgen;
pub mod tracer;
