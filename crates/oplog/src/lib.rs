//! OpLog: scalable update-heavy data structures from per-core operation logs.
//!
//! On a multicore machine, a structure that every core updates stops scaling because each
//! update takes the structure's cache lines away from the last core that wrote them, and
//! the coherence hardware serializes those transfers (000 §3.1: 182 cycles per contended
//! write with 2 writers, 8182 with 48). Many such structures are updated far more often
//! than they are read, and their updates return nothing. OpLog (000 §4–6; 001 ch. 5–7)
//! exploits that: an update is appended to the calling core's log for the object and
//! returns, touching only core-local memory; a read first *synchronizes*, merging every
//! core's log and applying the operations to the one internal instance of the unchanged
//! sequential type, then reads it.
//!
//! | name | what it is |
//! |---|---|
//! | [`OpLog`]`<K>` | one shared object whose updates are logged in log kind `K`: [`OpLog::update`], [`OpLog::read`], [`OpLog::synchronize`] (a [`Synced`] guard) |
//! | [`Update`] | your type's deferred updates, usually an enum: `exec`, and optional absorption hooks |
//! | [`Ordered`]`<U>`, [`Unordered`]`<U>` | the log kinds for your `Update`: applied in timestamp order, or updates that commute |
//! | [`Counter`] | the distributed counter (000 Figure 8; kind [`CounterLog`]) |
//! | [`Domain`], [`Config`], [`ConfigError`] | objects that share per-core log caches, per CPU or per thread ([`CoreMode`]), with limits, a clock and a [`Representation`]; [`CacheStats`] says what the caches did |
//! | [`log`] | [`LogKind`], for a log kind of your own |
//!
//! # Using it
//!
//! By default each object adapts to its own mix ([`Representation::Adaptive`]): logged
//! while updates from several threads come between reads (or reads are rare), applied in
//! place under a lock (like a mutex) while reads are frequent or one thread does the
//! updating, unless its log absorbs much of what one thread pushes (an rmap's unmap
//! cancels its map), which a direct update would have to do. A [`Counter`] that one thread
//! updates stays logged where its domain measures a logged increment cheaper than a direct
//! one (an atomic add: on the Intel Xeons we measured, a logged increment costs a third of
//! it; on the AMD host, more), and goes direct elsewhere. [`OpLog::representation`] says
//! which it is in now.
//!
//! **Choosing.** OpLog pays off most where several cores update one object between reads.
//! Where reads come as often as updates, or one thread does the updating, the default goes
//! direct, and runs about as fast as a `Mutex` around the type, often faster (a direct
//! update is one atomic read-modify-write and a store, a `Mutex` two, but the default adds
//! the policy's bookkeeping and the re-entry check). A thread that reads back each update
//! it makes calls two operations that each take the object's lock, where a `Mutex` holds
//! one lock across both; under one [`OpLog::synchronize`] guard it takes one, and where
//! nothing is logged a guard costs less than a `Mutex`'s lock and unlock (an update and a
//! read under one guard, 6.8–7.1 ns on one thread, against 9.6–10.0 ns under one `Mutex`
//! lock: `cargo run --release -p oplog --example hotpath`, 2026-11-29). Measure on your own
//! mix: `oplog-bench read-mix --threads 1,2`
//! times the default, each pinned representation and `Mutex`, `RwLock` and
//! `node-replication` on a 64-counter table at 0–100 % updates, records the representation
//! the default ended in, and opens with a verdict naming the fastest at each point. On the
//! 2-core development machine (AMD EPYC under KVM, 2026-11-29, one run) the default ran on
//! one thread at 1.30–1.56x the best of those baselines at every mix but 50 % updates
//! (0.94x `Mutex`), ending direct at every mix but read-only, and on two threads at 1.54x
//! (50 %, `Mutex`) to 15.1x (100 %) the best baseline (1.69x `node-replication` read-only,
//! 4.09x at 99 %). On a 16-core Xeon (2026-11-27, README "On 16 cores") the default led
//! every baseline at every mix at 2 and 4 threads (1.13–29.9x), and at one thread all but
//! 50 % (0.82x `Mutex`); mixes of 10–90 % updates at 8–16 threads reach only 0.20–0.66x
//! `node-replication`, whose readers read a local replica (1 % updates: 1.02x at 8 threads,
//! 0.41x at 16). The open issue on read/update mixes tracks the gap. Pin a representation
//! for the whole domain with [`Config::representation`] when you know the mix
//! ([`Representation::Logged`] for update-heavy objects read rarely,
//! [`Representation::Direct`] for read-heavy ones).
//!
//! **Many hot objects: the log cache.** Each core keeps `cache_slots` logs for all the
//! objects of a domain, 128 bytes per slot: by default ([`LogKind::CACHE_SLOTS`]) 256 slots,
//! 32 KiB per core ([`DEFAULT_CACHE_SLOTS`]), and 1,024 for counters, whose logs are one
//! integer each (128 KiB per core). An object updated on a core where its log is not
//! cached takes a slot and evicts another object's log (a miss). Objects take slots in the
//! order of their entries in the domain's slab, so a domain with no more objects than slots
//! has nearly every object in a slot of its own. Pinned to the logged representation, one
//! thread updating N counters uniformly hits in about `cache_slots / N` of its updates
//! (measured, 2,000,000 updates on one CPU, from installs, [`Domain::cache_stats`]): 256
//! slots give 1.0 at N = 256, 0.25 at 1,024, 0.06 at 4,096, 0.004 at 65,536; 1,024 slots
//! 0.99 at 1,024 and 0.25 at 4,096; 4,096 slots (512 KiB per core) 0.99 at 4,096 (the
//! misses left are those of the slab's last chunk, whose few objects are spread over its
//! range). In the
//! default adaptive representation an object whose logs keep being evicted before they
//! take 8 operations switches to direct (updates in place under its lock), so misses stop
//! (an object of a user type touched for the first time costs about 100 ns per update
//! until then, on the 2-core host, against 4 ns direct afterwards). Once a quarter of a
//! cache's worth of objects went direct that way (the domain's hot objects outgrew its
//! cache), a miss switches its object to direct at once instead of evicting another log,
//! unless the object has logs on another core or came back to logged because threads
//! update it in turn; there only hot objects go back to logged (a hot counter's miss
//! against another hot counter's log is applied in place), and cold shared logs go
//! direct. So at N = 1,024 with 256 slots nearly every object ends direct, and from a
//! fresh domain at N = 65,536, 3 % of the first 80,000 logged updates install a log
//! instead of nearly all.
//! Watch [`Domain::cache_stats`] at run time; raise [`Config::cache_slots`] when a hot set
//! that several cores update does not fit, since a direct object serializes its updaters.
//! `oplog-bench objects` measures throughput against the number of objects.
//! On a host where moving a cache line between the updating cores is slow (a virtual
//! machine whose CPUs sit far apart on its host: a 400 ns round trip, against 45 ns), the
//! processor keeps throughput up by overlapping many updates' transfers, and overlaps fewer
//! the more each update does: there, two threads updating 65,536 objects drawn uniformly
//! ran direct counters at 0.4× an array of `AtomicU64` (150–160M against 371–391M updates/s;
//! 26 instructions per update against 8, loop included) and a user type at 0.63–0.68× a
//! `Mutex` each (66–71M against 104–105M; 75 instructions against 44), where reaching each
//! atomic through a pointer, as through any handle, cost 0.58× alone (225M); at 45 ns the
//! counters ran at 0.9× (2-core AMD EPYC host, 2026-11-30).
//! The handle is the floor once objects are direct and their working set leaves the
//! first-level cache: an object is reached through its handle's pointer, one more line
//! per update than an array of plain values. `oplog-bench objects` measures that layout
//! without OpLog (`indirect-atomic`, `logged-indirect-mutex`): one thread on 65,536 objects
//! of a 24-byte user type, a handle to a `Mutex` ran at 0.78–0.80× a `Mutex` each
//! (110–112M against 139–141M updates/s), and the default OpLog at 0.8–0.9× that
//! (88–100M; same host, 2026-12-01).
//!
//! Describe the deferred updates of a sequential type as an [`Update`] (usually an enum),
//! wrap the type in [`OpLog`]`<`[`Ordered`]`<YourOp>>`, call [`OpLog::update`] for updates and
//! [`OpLog::synchronize`] (or [`OpLog::read`]) before reads:
//!
//! ```
//! use oplog::{OpLog, Ordered, Update};
//! use std::collections::BTreeSet;
//!
//! enum SetOp { Insert(u32), Remove(u32) }
//!
//! impl Update for SetOp {
//!     type Target = BTreeSet<u32>;
//!     fn exec(self, set: &mut BTreeSet<u32>) {
//!         match self {
//!             SetOp::Insert(x) => { set.insert(x); }
//!             SetOp::Remove(x) => { set.remove(&x); }
//!         }
//!     }
//! }
//!
//! let set = OpLog::<Ordered<SetOp>>::new(BTreeSet::new());
//! std::thread::scope(|s| {
//!     s.spawn(|| set.update(SetOp::Insert(1)));
//!     s.spawn(|| set.update(SetOp::Insert(2)));
//! });
//! set.update(SetOp::Remove(1));
//! assert_eq!(set.read(|s| s.iter().copied().collect::<Vec<_>>()), vec![2]);
//! ```
//!
//! [`Counter`] is the distributed counter of 000 Figure 8 on the [`CounterLog`] kind.
//!
//! # Pieces
//!
//! | module | what it holds |
//! |---|---|
//! | [`log`] | log kinds: the [`LogKind`] trait, [`Ordered`], [`Unordered`], [`CounterLog`], the [`Update`] trait with local and global absorption hooks |
//! | [`OpLog`] (`object`) | an object: update, synchronize, drop |
//! | `object::update` | the logged update: the slot entered, the inline push, a miss, a full log handed off or applied by its owner |
//! | `object::backlog_apply` | an object's backlog applied under its lock; a full ordered backlog applied up to the stamp cut |
//! | `object::direct` | the direct update: in place under the object lock, or the counter's lock-free add |
//! | `object::read` | the concurrent read, the read through the lock, the [`Synced`] guard |
//! | `object::sync` | synchronize: the gather (swap and release), the apply, retiring an object |
//! | `object::lock` | the object lock: its tries, the fast paths' lock and the full guard |
//! | `object::policy` | the adaptive policy: thresholds, score steps, sampling, observations |
//! | `object::solo` | what a counter that one core updates costs logged and direct, measured once per domain |
//! | [`Domain`] (`domain`) | objects sharing per-core log caches, the clock and the limits; [`CoreMode`] per CPU or per thread; [`Representation`] |
//! | `word` | the object's 64-bit word: the lock, the representation, the read bias, the policy's score, the backlog bit and the core mask |
//! | `readers` | the per-CPU reader table of concurrent reads |
//! | `reentry` | the misuse checks: calls back into OpLog that would wait for themselves |
//! | `object::log_cache` | the per-core direct-mapped log cache (001 ch. 7): what a slot holds, taking a slot on a miss, taking an object's slots for a synchronize |
//! | `object::eviction` | how a log leaves the cache when another object takes its slot: to the backlog, applied at once, or a counter's folded with one atomic add |
//! | [`cache_stats`] | what the log caches did: misses, evictions, hand-offs, barriers ([`Domain::cache_stats`]) |
//! | `slab` | where objects live: stable homes an evictor can reach |
//! | `backlog` | each object's backlog: logs that left the cache (evicted or handed off) and operations left by a panic |
//! | `migration` | the migration rule |
//! | [`Counter`] (`counter`) | the distributed counter |
//!
//! # What a read observes
//!
//! A synchronize locks the object's slot on every core that may hold its log, all at
//! once, and gathers them (see [`OpLog`]'s module docs, `object`). The gathered set is a
//! consistent cut: it holds every update that *completed* before the synchronize began,
//! and whenever it holds an update it holds every update that completed before that one
//! began. Updates concurrent with the synchronize may or may not be in it; those that are
//! not are applied by the next one. For [`CounterLog`] and [`Unordered`] kinds (commuting
//! operations) this makes reads linearizable.
//!
//! For [`Ordered`] kinds the gathered operations run in timestamp order, ties by core id,
//! each core's log in its own order. Reads are linearizable if timestamps respect
//! real-time order: whenever update A completes before update B begins, A's stamp is
//! below B's. That holds in either of two cases, chosen per domain from the clock:
//!
//! * **The clock's raw order respects communication** ([`ordo::Clock::raw_order_is_causal`]):
//!   a clock read that follows, through memory, another core's read is larger. `ordo`
//!   measures this during calibration (every pairwise minimum offset positive; 000 §6.1 and
//!   003 §6.2 always found it so) and the logical clock guarantees it. Updates then take a
//!   plain clock reading.
//! * **Otherwise** (a machine where calibration saw a non-positive offset, the OS clock
//!   fallback, or a custom clock), each ordered update *waits out the uncertainty window*
//!   before returning: it spins until [`ordo::Clock::new_time`] of its stamp, the commit
//!   wait of Spanner that 000 §6.1 proposes. Any update that begins afterwards, on any
//!   core, reads a larger clock. [`Domain::commit_wait`] tells which case applies.
//!
//! Stamps are also raised to the last stamp of the slot they are pushed to, so one log's
//! stamps never decrease, and, when a thread's CPU changed since its previous ordered
//! update, to [`ordo::Clock::new_time`] of that update's stamp (`migration`), so one
//! thread's updates are never reordered by a migration.
//!
//! Entries within the clock's uncertainty window of each other are ordered by their raw
//! stamps, not by core id: see [`log`]'s `queue` docs for why the texts' core-id rule
//! (003 §4.4) would be unsound for updates ordered in real time.
//!
//! # Barriers
//!
//! Where updates enter their core's slot without a lock (a restartable sequence in per-CPU
//! domains on Linux, the owner flag in per-thread domains), taking a log out of another
//! core's slot needs a barrier: a `membarrier` system call, which interrupts the CPUs it
//! targets (microseconds). Nothing else does, and **no update ever sends one**: only reads,
//! synchronizes, [`OpLog::into_inner`] and drops do. [`CacheStats::barriers`] counts them
//! at run time; [`Config::rseq`]`(false)` keeps every slot on its spin lock, so none is
//! ever sent (at one compare-and-swap per update).
//!
//! * **Reads and synchronizes** of an object with nothing logged take no slot and send
//!   none. One that finds logs in other cores' lock-free slots sends one barrier, never
//!   more: for per-CPU slots, to the one CPU that holds them (never the caller's own), or,
//!   where they are on two CPUs or more, to every CPU running the process (the kernel
//!   targets one CPU per call); per-thread slots take one barrier for all. The slots it
//!   took stay in spin mode ([`Config::rseq`]), so the synchronizes that follow while the
//!   object is read often send none. Synchronizes that ask for a barrier at the same time
//!   share one: a caller returns without its own system call when a barrier to the same
//!   CPU, or to every CPU, began after it asked and has completed.
//! * **Updates** of a [`Counter`], and of kinds whose logs may be applied alone (those
//!   that declare [`Update::APPLY_ALONE`], and an [`Unordered`] kind that keeps the default
//!   [`Update::absorb_global`], which its domain's first object shows),
//!   take no other core's slot that needs one: a full log is handed off or applied by its
//!   owner, an evicted log goes to its object's backlog or is applied at once, a full
//!   backlog is applied alone, and a direct update or a switch to direct leaves what is
//!   logged to the next read (a learned kind's switch gives up the object's slots where
//!   none of them needs a barrier: they are the calling thread's own, or in spin mode).
//!   An [`Ordered`] kind's full backlog is applied up to a stamp that no core's log
//!   precedes, taking no slot.
//! * **Updates of every other kind** (ordered, or an [`Unordered`] kind with a global
//!   absorption of its own, whose operations pair across cores) must meet every logged
//!   operation in three
//!   cases: the backlog fills while the kind neither cuts nor is applied alone; an ordered
//!   backlog's cut leaves more than half of it (a core logged the object long ago and went
//!   on to others, or went idle); a direct update, or the adaptive policy's switch to
//!   direct, finds logs on other cores (they run first). A log in a lock-free slot could
//!   leave it only with a barrier or its owner's help, which may never come (the memory
//!   bound and the order of operations rule out leaving it there), so such kinds never
//!   leave a log in one: their updates enter their slot *locked*, leaving it in spin mode
//!   (the owner's entry puts it there itself, with no barrier; later entries take its
//!   spin lock, and the count that ends spin mode does not run), and their gathers take
//!   every slot with its lock alone. Their reads send no barrier either. The price is the
//!   spin lock's compare-and-swap on each update (2-core AMD EPYC host, 2026-11-30,
//!   alternated runs of `oplog-bench`: `fork`'s `oplog-ordered`, an ordered rmap that is
//!   never read, 4.0-4.2M forks/s before and 3.2-3.3M since at one thread, 8.1-8.2M and
//!   6.5M at two; `fork`'s default `oplog`, whose rmap has a global absorption of its
//!   own, `notify`, `lru` and `fork-truncate` within the noise of before, which the
//!   binary's layout alone makes large here: `counter`'s `percore-store` floor, code
//!   this does not touch, differed by 15 % between the two binaries; and `objects`'
//!   user type, which learns from its first object that it has no global absorption,
//!   too, now with no barrier at all where it sent 0.03-0.08 per million updates).
//!
//! # Panics in user code
//!
//! [`Update::exec`] and the absorption hooks run while a synchronize holds the object
//! lock. If one panics, the lock is released as the panic unwinds (no deadlock), the
//! panicking operation is dropped (it may have partly changed the instance, as with a
//! panic under a mutex; there is no poisoning), and every operation gathered after it is
//! kept, in order, ahead of anything newer, for the next synchronize. The panic reaches
//! the caller of [`OpLog::synchronize`] or [`OpLog::read`], or of the [`OpLog::update`]
//! that ran the operations: one whose hand-off filled the object's backlog, one that
//! applied its own backlog before taking a slot again, one that applied its own full log
//! (kinds whose logs may be applied alone: [`Update::APPLY_ALONE`], an [`Unordered`] kind
//! that keeps the default [`Update::absorb_global`], the counter), one that
//! applied a log it evicted from the cache (such kinds, or any log that was all the
//! evicted object had logged), one whose eviction switched the evicted object to
//! direct (the adaptive policy; the switch applies that object's logs), or a direct update
//! (which applies what was logged before it).
//! That update itself is always kept: it is logged (or applied) before the panic goes on.
//! Nothing else on the update path runs user code except [`Update::absorb_local`].
//!
//! # Misuse
//!
//! A read, synchronize, `into_inner` or drop of an object from inside its own
//! [`Update::exec`], absorption hooks or read closure would wait for itself: it panics with
//! a message naming the mistake instead, as does any OpLog call from inside
//! [`Update::absorb_local`] that would wait for the slot the hook runs under. (A read
//! inside the read closure of the same object may also just work, when both take the
//! concurrent path.) Updates of an object from inside its own `exec` or read closure are
//! logged and applied by the next synchronize. The checks cost nothing on the update path.
//!
//! # Drop
//!
//! Dropping an [`OpLog`] (or calling [`OpLog::into_inner`]) gathers every pending
//! operation, applies all of them to the instance (continuing past operations that panic,
//! then resuming the first panic unless the thread is already unwinding), releases the
//! object's log-cache slots, and only then drops the instance. Nothing logged is silently
//! lost.
//!
//! # Memory bound
//!
//! * Per object: an 8-byte handle, and in the domain's slab the instance plus an 8-byte
//!   word (lock and core mask); a [`Counter`]'s instance is its 8-byte value (which its
//!   direct updates add to with one atomic instruction), so it is 24 bytes whatever the
//!   number of cores ([`Domain::object_footprint`]).
//! * Per domain, fixed: for each core (CPU, or thread in per-thread domains),
//!   `cache_slots` slots of 128 bytes ([`Domain::cache_footprint`]).
//! * Per domain, also: a reader table of one 128-byte line per possible CPU.
//! * Logs: a log holds at most `max_log_len` entries (the update that fills it hands it to
//!   the object's backlog, or applies it when the kind's logs may be applied alone and the
//!   object lock is free); a slot keeps its log's storage after a synchronize. A log that
//!   may be applied alone is applied at eight times `max_log_len` when another core logs
//!   its object too, and one whose owner finds the lock taken stays in its slot and grows
//!   to at most sixteen times `max_log_len` while the owner tries the lock again, before it
//!   goes to the backlog. A counter's log evicted from the cache is folded into the
//!   counter's value by the evictor with one atomic add, without the counter's lock, where
//!   the eviction tells the counter's adaptive policy nothing (`object::eviction`, "Eviction
//!   by one fold"). Otherwise an evicted log is applied by the evictor at once when the
//!   owner's lock is free and the log may be applied alone (a counter's) or is all the
//!   owner has logged (no backlog, no other core's log); every other evicted log waits in
//!   the owner's backlog. An object whose backlog
//!   reaches twice the CPU count (at least 8, at most 128) logs has it applied by the
//!   update that hands the last one off, or before it takes a slot again, or, while
//!   another synchronize of it is running, once the backlog reaches four times that, so
//!   neither hand-offs nor evictions grow memory without bound: an ordered object's up to
//!   a stamp that no core's log precedes, keeping the operations after it (less than half
//!   of it, or the object is synchronized), any other's by a synchronize; an object that is no longer
//!   updated keeps at most one evicted log per core until its next read
//!   ([`Domain::backlogged_logs`], [`Domain::backlog_limit`]). Updates from inside the
//!   object's own `exec` or read closure are the exception: they never wait for the lock
//!   their thread holds, so they can grow the backlog past the bound.

#![warn(missing_docs)]

mod backlog;
pub mod cache_stats;
mod counter;
mod domain;
pub mod log;
mod migration;
mod object;
mod readers;
mod reentry;
mod slab;
mod word;

// The per-core machinery and the primitives, by the names the modules use.
use oplog_percore::{self as percore, primitive};

pub use cache_stats::CacheStats;
pub use counter::Counter;
pub use domain::{
    Config, ConfigError, DEFAULT_CACHE_SLOTS, DEFAULT_MAX_LOG_LEN, Domain, MAX_CACHE_BYTES, Representation,
};
pub use log::{CounterLog, LogKind, Ordered, Unordered, Update};
pub use object::{OpLog, Synced};
pub use oplog_percore::{CoreMode, DEFAULT_MAX_THREADS};

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
