//! The texts' update-heavy data structures on OpLog, each beside the baselines the texts
//! compare it against.
//!
//! Every structure comes in the same shape:
//!
//! * the **sequential type** OpLog wraps unchanged (the "underlying type" of 000 §5.1), for
//!   example the rmap's [`IntervalTree`](rmap::interval_tree::IntervalTree);
//! * its **update operations** as an [`oplog::Update`] (the `Op`s of 000 Figure 7), with the
//!   absorption the text describes;
//! * the **OpLog version(s)**, built from an `Arc<`[`oplog::Domain`]`>` so the caller chooses
//!   per-CPU or per-thread log slots;
//! * the **baselines**: a lock around the same sequential type (built on
//!   [`oplog_percore::primitive`], so loom and the tracer see its shared accesses), and the texts'
//!   lock-free alternatives;
//! * a **trait** every variant implements ([`rmap::Rmap`], [`list::ConcurrentList`], ...), so
//!   a benchmark or test can drive them generically;
//! * a **model**: the structure's sequential specification in `oplog-model`, and an
//!   [`oplog_model::Concurrent`] implementation for the trait object (`dyn Rmap`) and for
//!   every variant, which runs the model's operations on it: the linearizability suite,
//!   the commutativity checker and the tests here drive every variant through it.
//!
//! | structure | model (`oplog_model::…`) |
//! |---|---|
//! | [`rmap`] | `rmap::RmapModel` (page numbers are `i64` there; the conversion is checked) |
//! | [`notify`] | `queue::QueueModel` (`u64` events) |
//! | [`lru`] | `lru::LruModel` (`u64` keys) |
//! | [`list`] | `set::SetModel` (`u64` elements) |
//! | [`open_files`] | `open_files::OpenFilesModel` |
//! | [`namecache`] | `namecache::EntryModel` |
//!
//! The traits' extra reads for verification (`Rmap::mappings`, `ConcurrentLru::order`,
//! `ConcurrentList::snapshot`, `EventQueue::len`) and the batched `dequeue_into` are not
//! model operations: the models describe the interface the checkers analyze, and the tests
//! check those reads against the model's state directly.
//!
//! | module | structure | text | OpLog version | baselines |
//! |---|---|---|---|---|
//! | [`rmap`] | reverse map: interval tree of mappings, `add` / `remove` / `truncate` | 000 §3, §4.3, §5.2, Figure 7 | unordered log (and the text's timestamped one), local and global absorption | mutex around the tree; lock-free list |
//! | [`notify`] | notification queue (inotify): many producers, one consumer | 000 §3, Figure 2 | ordered log | `Mutex<VecDeque>`; crossbeam `SegQueue` |
//! | [`lru`] | LRU list: `touch` on every access, `evict` the least recently used | 000 §1 | ordered log, a newer op on a key absorbs older ones | mutex around the list |
//! | [`list`] | singly linked list | 000 §7.3, Figure 12 | basic, global absorption, local absorption | lock-free Harris list with epoch reclamation; mutex around the list |
//! | [`open_files`] | open-object list: add on open, remove on close, iterate rarely | 000 §7.4, 004 §4.5 | unordered log, local and global absorption | mutex around the set; per-core lists (004 §4.5) |
//! | [`namecache`] | name-cache entry: generation number and reference count | 000 §3 (stat), 004 §4.4 | OpLog distributed counter | ticket spinlock; compare-and-swap |
//!
//! [`logged_set`] holds what the rmap, the list and the open-object list share: an OpLog
//! over any set-like sequential type whose updates are `add(item)` / `remove(item)`, with the
//! texts' local and global absorption. [`applied`] is the internal instance of the OpLog
//! versions with counters that prove absorption. [`ticket`] holds the ticket spinlock of the
//! "stock" baselines.
//!
//! # Absorption and identities
//!
//! Cancelling an `add(x)` with a later `remove(x)` is only invisible to readers when nothing
//! else acts on `x` in between (see [`oplog::Update::absorb_local`]). The texts get that
//! from identities: an rmap region cannot be reused while it is logged (000 §5.2), a list
//! element belongs to one thread (000 §7.3), a file handle is unique while open. The
//! absorbing variants here make it a documented precondition, the **identity rule**: the
//! updates naming one item alternate in real time, `add`, `remove`, `add`, ... (an item is
//! added only while absent and removed only while present). Debug builds check it when the
//! operations are applied. Variants without absorption, and the baselines, accept any
//! sequence with set semantics.

#![warn(missing_docs)]

pub mod applied;
pub mod list;
pub mod logged_set;
pub mod lru;
pub mod namecache;
pub mod notify;
pub mod open_files;
pub mod rmap;
pub mod ticket;

/// Implements `oplog_model::Concurrent<$model>` for `dyn $trait` and for each listed type
/// (after its generic parameters in brackets, `[]` for none) by running `$call(self, op)`:
/// the structure's one mapping from model operations to its methods, shared by every
/// variant.
macro_rules! concurrent {
    ($model:ty, $call:path, dyn $trait:path, [$([$($generics:tt)*] $ty:ty),* $(,)?]) => {
        impl oplog_model::Concurrent<$model> for dyn $trait {
            fn call(&self, op: &<$model as oplog_model::Model>::Op) -> <$model as oplog_model::Model>::Ret {
                $call(self, op)
            }
        }
        $(
            impl<$($generics)*> oplog_model::Concurrent<$model> for $ty {
                fn call(&self, op: &<$model as oplog_model::Model>::Op) -> <$model as oplog_model::Model>::Ret {
                    $call(self, op)
                }
            }
        )*
    };
}
pub(crate) use concurrent;

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
