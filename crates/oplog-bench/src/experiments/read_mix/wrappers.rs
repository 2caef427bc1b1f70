//! The ways `read-mix` wraps one [`StatsTable`] for concurrent use.
//!
//! - [`OplogTable`] (`oplog`): `OpLog<Unordered<Add>>` in a per-CPU domain made for each
//!   repetition with the default [`Config`]: the object adapts its representation to the
//!   mix ([`Representation::Adaptive`]). Logged, an update appends to the calling CPU's
//!   log and a read synchronizes (merges every core's log into the table) and reads;
//!   direct, an update applies in place under the object lock. Pinned beside it:
//!   `oplog-rseq` (logged, slots entered with a restartable sequence, the default entry),
//!   `oplog-spinlock` (logged, [`Config::rseq`] off: slots entered with the texts' per-core
//!   spin lock, so a synchronize needs no `membarrier`) and `oplog-direct` (direct).
//! - [`MutexTable`] (`mutex`): `std::sync::Mutex<StatsTable>`.
//! - [`RwLockTable`] (`rwlock`): `std::sync::RwLock<StatsTable>`.
//! - [`NrTable`] (`node-replication`): the `node-replication` crate (0.1), the Rust
//!   implementation of black-box replication (ASPLOS 2017): a shared operation log, one
//!   replica of the table per NUMA node, flat combining within a replica, and a
//!   readers-writer lock per replica. Each worker registers with the replica and gets a
//!   `ReplicaToken`. **One replica**: the design calls for one per NUMA node, and this
//!   machine has one node. On a multi-node machine this is conservative for
//!   node-replication (its threads would then share one replica across nodes); adding
//!   replicas needs care, because in 0.1 an appender waits for every replica to consume the
//!   log, so a replica whose threads have all stopped blocks the others at the end of a run.
//!   The crate's default log size (32 MiB) is used, built fresh each repetition.
//!
//!   **Stranded updates.** In node-replication 0.1 an update is enqueued in the thread's
//!   context and then combined by whichever thread holds the combiner lock; a thread that
//!   finds the lock taken waits for its response and retries combining itself only after
//!   2^29 polls (`get_response`). If the combiner had already collected the contexts, the
//!   update waits for the next combine, which some other thread's update normally brings
//!   soon. At the end of a run the other threads have stopped, so the last update of a
//!   worker could wait 2^29 polls (seconds) and stretch the measured time. Every worker
//!   therefore calls [`SharedTable::help`] until all workers have finished: for
//!   node-replication a no-op update (`add(slot, 0)`), which combines whatever is pending.

use std::sync::{Arc, Mutex, RwLock};

use node_replication::{Log, Replica, ReplicaToken};
use oplog::{Config, Domain, OpLog, Representation, Unordered};

use super::table::{Add, Read, StatsTable};

/// A concurrent wrapper of [`StatsTable`].
pub trait SharedTable: Sync + Sized {
    /// Stable id: the `impl` field of records.
    const ID: &'static str;
    /// What a worker thread holds to use the table (a replica token, or nothing).
    type Handle;

    /// A zeroed table.
    fn new() -> Self;
    /// Called once by each worker thread before its first operation.
    fn register(&self) -> Self::Handle;
    /// Adds 1 to counter `slot`.
    fn add(&self, handle: &Self::Handle, slot: usize);
    /// Counter `slot`, including every add that completed before the call.
    fn get(&self, handle: &Self::Handle, slot: usize) -> u64;
    /// The sum of all counters; called after the workers have been joined.
    fn total(&self) -> u64;
    /// Called repeatedly by a worker that has finished, until every worker has: lets
    /// wrappers complete operations other threads left pending (see the module docs).
    fn help(&self, handle: &Self::Handle) {
        let _ = handle;
        std::hint::spin_loop();
    }
    /// The representation OpLog's wrappers are in now; `None` for the others.
    fn representation(&self) -> Option<Representation> {
        None
    }
}

/// How an [`OplogTable`] is configured: its id's suffix.
pub mod mode {
    /// `oplog`: the default configuration.
    pub const DEFAULT: u8 = 0;
    /// `oplog-rseq`: logged, slots entered with a restartable sequence.
    pub const RSEQ: u8 = 1;
    /// `oplog-spinlock`: logged, slots entered with the per-core spin lock.
    pub const SPINLOCK: u8 = 2;
    /// `oplog-direct`: direct updates under the object lock.
    pub const DIRECT: u8 = 3;
}

/// OpLog over the table with an unordered log, in the configuration `MODE` (see [`mode`]).
pub struct OplogTable<const MODE: u8>(OpLog<Unordered<Add>>);

impl<const MODE: u8> SharedTable for OplogTable<MODE> {
    const ID: &'static str = match MODE {
        mode::DEFAULT => "oplog",
        mode::RSEQ => "oplog-rseq",
        mode::SPINLOCK => "oplog-spinlock",
        _ => "oplog-direct",
    };
    type Handle = ();

    fn new() -> Self {
        let config = match MODE {
            mode::DEFAULT => Config::per_cpu(),
            mode::RSEQ => Config::per_cpu().representation(Representation::Logged),
            mode::SPINLOCK => Config::per_cpu().rseq(false).representation(Representation::Logged),
            _ => Config::per_cpu().representation(Representation::Direct),
        };
        let domain = Domain::new(config).expect("a per-CPU configuration is valid");
        Self(OpLog::with_domain(&domain, StatsTable::default()))
    }

    fn register(&self) {}

    #[inline]
    fn add(&self, _: &(), slot: usize) {
        self.0.update(Add { slot, n: 1 });
    }

    #[inline]
    fn get(&self, _: &(), slot: usize) -> u64 {
        self.0.read(|t| t.get(slot))
    }

    fn total(&self) -> u64 {
        self.0.read(StatsTable::total)
    }

    fn representation(&self) -> Option<Representation> {
        Some(self.0.representation())
    }
}

/// `mutex`: the table behind a `std::sync::Mutex`.
pub struct MutexTable(Mutex<StatsTable>);

impl MutexTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, StatsTable> {
        self.0.lock().expect("stats table mutex poisoned")
    }
}

impl SharedTable for MutexTable {
    const ID: &'static str = "mutex";
    type Handle = ();

    fn new() -> Self {
        Self(Mutex::new(StatsTable::default()))
    }

    fn register(&self) {}

    #[inline]
    fn add(&self, _: &(), slot: usize) {
        self.lock().add(slot, 1);
    }

    #[inline]
    fn get(&self, _: &(), slot: usize) -> u64 {
        self.lock().get(slot)
    }

    fn total(&self) -> u64 {
        self.lock().total()
    }
}

/// `rwlock`: the table behind a `std::sync::RwLock` (reads share the lock).
pub struct RwLockTable(RwLock<StatsTable>);

impl SharedTable for RwLockTable {
    const ID: &'static str = "rwlock";
    type Handle = ();

    fn new() -> Self {
        Self(RwLock::new(StatsTable::default()))
    }

    fn register(&self) {}

    #[inline]
    fn add(&self, _: &(), slot: usize) {
        self.0.write().expect("stats table rwlock poisoned").add(slot, 1);
    }

    #[inline]
    fn get(&self, _: &(), slot: usize) -> u64 {
        self.0.read().expect("stats table rwlock poisoned").get(slot)
    }

    fn total(&self) -> u64 {
        self.0.read().expect("stats table rwlock poisoned").total()
    }
}

/// `node-replication`: one replica of the table over a shared log.
pub struct NrTable {
    replica: Arc<Replica<'static, StatsTable>>,
    /// Kept with the replica (the replica also holds a reference).
    _log: Arc<Log<'static, Add>>,
}

impl SharedTable for NrTable {
    const ID: &'static str = "node-replication";
    type Handle = ReplicaToken;

    fn new() -> Self {
        let log = Arc::new(Log::<Add>::default());
        Self { replica: Replica::new(&log), _log: log }
    }

    fn register(&self) -> ReplicaToken {
        self.replica.register().unwrap_or_else(|| {
            panic!(
                "node-replication: no free thread slot in the replica (at most {} threads)",
                node_replication::MAX_THREADS_PER_REPLICA
            )
        })
    }

    #[inline]
    fn add(&self, token: &ReplicaToken, slot: usize) {
        self.replica.execute_mut(Add { slot, n: 1 }, *token);
    }

    #[inline]
    fn get(&self, token: &ReplicaToken, slot: usize) -> u64 {
        self.replica.execute(Read::Get(slot), *token)
    }

    fn total(&self) -> u64 {
        let token = self.register();
        self.replica.execute(Read::Total, token)
    }

    fn help(&self, token: &ReplicaToken) {
        self.replica.execute_mut(Add { slot: 0, n: 0 }, *token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counts_under_threads<T: SharedTable>() {
        let table = T::new();
        let finished = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..2 {
                let (table, finished) = (&table, &finished);
                s.spawn(move || {
                    let h = table.register();
                    for i in 0..1000 {
                        table.add(&h, (i + t) % 64);
                        if i % 10 == 0 {
                            assert!(table.get(&h, 0) <= 2000);
                        }
                    }
                    finished.fetch_add(1, Ordering::AcqRel);
                    while finished.load(Ordering::Acquire) < 2 {
                        table.help(&h);
                    }
                });
            }
        });
        assert_eq!(table.total(), 2000, "{}", T::ID);
        let h = table.register();
        // Slot 0: thread 0 at i = 0, 64, .., 960 (16 adds), thread 1 at i = 63, .., 959 (15).
        assert_eq!(table.get(&h, 0), 31, "{}", T::ID);
    }

    #[test]
    fn every_wrapper_counts_exactly() {
        counts_under_threads::<OplogTable<{ mode::DEFAULT }>>();
        counts_under_threads::<OplogTable<{ mode::RSEQ }>>();
        counts_under_threads::<OplogTable<{ mode::SPINLOCK }>>();
        counts_under_threads::<OplogTable<{ mode::DIRECT }>>();
        counts_under_threads::<MutexTable>();
        counts_under_threads::<RwLockTable>();
        counts_under_threads::<NrTable>();
    }
}
