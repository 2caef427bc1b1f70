//! [`OpLog`]: one shared object whose updates are logged per core and applied on read, or,
//! when its mix of reads and updates says so, applied in place.
//!
//! # The object's word
//!
//! One 64-bit word per object, in two 32-bit halves (`crate::word`). The *holder* half:
//! the object lock (bit 63), the representation (bit 62), the read bias (bit 61), the tag
//! of the last sampled direct updater (bits 59..61) and the adaptive policy's score (bits 53..59);
//! only the compare-and-swap that takes the lock and the lock's holder change it, so the
//! holder unlocks with a plain store. The *log* half: whether the object has a backlog
//! (bit 31, kept by `crate::backlog`) and the core mask (bits 0..31; core `c` may own a
//! log-cache slot for the object if bit `c % 31` is set), which updaters and evictors set
//! without the lock, and which the lock's holder clears (an evictor clears its own core's
//! bit too, once the log it took out is in the backlog, applied, or folded). An update in
//! the logged representation only *reads* the holder half; a direct update or a read through the
//! lock takes the lock from the holder half it loaded, and checks the log half once it
//! holds the lock (every log made before shows there, and the half cannot turn quiescent
//! meanwhile).
//!
//! # Update, logged (000 §4.1, Figure 6 `Object::log`)
//!
//! 1. Read the representation from the object's word (a relaxed load; direct updates
//!    go their own way, see "Representations"). Enter the object's slot in the log
//!    cache of the core: the CPU the thread runs on
//!    (per-CPU domains, through a restartable sequence or the slot's spin lock) or the
//!    thread's own index (per-thread domains, through the owner flag). Kinds whose logs
//!    are not applied alone ([`Obj::applies_alone`]) enter it *locked*
//!    (`Obj::enter_slot`): in spin mode, which the owner's entry sets without a barrier,
//!    so that the updates that must gather every core's log (below, and "The cut",
//!    "Representations") take it without one (crate docs, "Barriers").
//! 2. Ordered kinds: read the clock, raise the stamp to the migration floor
//!    ([`crate::migration`]) and to the slot's last stamp.
//! 3. If another object (the victim) owns the slot, take the victim's log out of it and
//!    take the slot, setting this core's bit in the object's mask (a load first: a bit
//!    already set is not written again; `log_cache`). The victim's log goes to its backlog
//!    ([`crate::backlog`]), with no lock, no barrier and no other core's slot, or is applied
//!    at once if a try-lock of the victim succeeds and the log may be applied alone or is
//!    all the victim has logged, after the slot is released (`eviction`); a counter's log
//!    is folded into the victim's value with one atomic add, without the victim's lock,
//!    where that tells the victim's policy nothing (`eviction`, "Eviction by one fold").
//! 4. *Publish* the object in the slot (a word of the slot that remote readers may load
//!    without its lock, [`crate::percore::PerCore::published`]), if the slot does not
//!    already, then push the operation (the log kind may absorb it). If local absorption
//!    emptied the log (a remove took back its add: an rmap's fork, mapped and unmapped),
//!    the slot publishes the object marked *emptied* instead (a release store, `log_cache`'s
//!    `emptied`), until the next push: a synchronize then takes no slot and finds nothing
//!    logged, and a read may take the concurrent path (one thread forking and truncating
//!    every third fork, `fork-truncate`'s loop, 2-core Intel Xeon host, 2026-11-28: a read
//!    of the rmap went from 240–330 ns to 60–70 ns, and the loop from 4.1–4.8M forks/s
//!    to 6.6–6.7M, against 3.2M for the tree under a `Mutex`).
//! 5. If the log reached the domain's limit, the owner *hands it off*: moves it to the
//!    object's backlog and stops publishing the object, still under its slot lock, with no
//!    barrier and no other core's slot. If that fills the backlog (its limit), the backlog
//!    is applied (a try-lock: a synchronize already running takes it): for kinds that cut
//!    ([`LogKind::CUTS`]: the ordered ones), up to a stamp that no slot's log precedes,
//!    taking no slot and sending no barrier ("The cut", below); for the others, by a
//!    synchronize of the whole object. Kinds
//!    whose logs may be applied alone ([`LogKind::APPLY_ALONE`], set by
//!    [`crate::Update::APPLY_ALONE`] for queue kinds; and an [`Unordered`](crate::Unordered)
//!    kind without global absorption of its own, once a synchronize has shown that:
//!    [`LogKind::applied_without_global_absorption`]) do better: the owner try-locks the
//!    object and, if it is free, takes its own log out and applies it after unlocking the
//!    slot (the log's lines are in its own cache: measured, applying another core's log
//!    costs more than the rest of the update path). If another core logs the object too,
//!    the owner lets its log grow to a few times the limit first ([`SHARED_FACTOR`]):
//!    each apply then moves the instance's lines from the core that applied last, and
//!    longer logs pay for that less often. If the lock is busy (another core
//!    applies its own log), the log stays in the slot and keeps growing, its owner trying
//!    the lock again every few pushes, up to a few times the limit ([`OVERFULL_FACTOR`]);
//!    only then does it go to the backlog, and a full backlog is applied alone, taking no
//!    other core's slot. Such an update-only workload never locks another core's slot nor
//!    sends a barrier.
//! 6. Unlock the slot; finish the eviction of step 3, if any.
//!
//! The common case of an unordered kind ([`Obj::INLINE_PUSH`]) is inline: the slot
//! entered with no call (`percore`'s `PerCore::try_enter`: one restartable sequence that
//! finds it free, the owner flag of the thread's own slot, or the CPU's spin lock; for a
//! kind that enters locked, `PerCore::try_enter_locked`: one try at the spin lock of a
//! slot in spin mode), a
//! slot that publishes the object, a push that stores its operation without allocating
//! ([`LogKind::push_fits`]), then steps 5 and 6. Every other case (a slot held, requested
//! or in spin mode, a miss, a log that must grow) takes the steps above out of line, so
//! the inline path carries none of their code (two threads adding to `read-mix`'s table
//! with the domain pinned to logged, 2-core AMD EPYC host, 2026-11-30, alternated runs:
//! on one thread at 100 % updates, 168-204M updates/s before, 222-232M after; on the
//! spin lock, 107-111M before, 118-124M after; two threads, 423-429M before, 442-470M
//! after; at 90 % updates, 27-28M before and after). Two threads at 99 % updates,
//! where a read every hundred updates takes the slots and most of the time goes to the
//! reads, lost instead: 89-92M before, 82-85M after (the spin lock: 104-107M, 89-90M);
//! the cause was not found (the slot's entry and release are the same as before).
//!
//! Nothing on this path writes a cache line another core uses, except when the slot
//! changes owner (a log-cache miss) and the object's backlog when a log is handed off.
//! (The slot's published word, which a log emptied by absorption changes, is on the
//! slot's own line: another core only loads it, at a synchronize.)
//!
//! # Where an object lives
//!
//! An [`OpLog`] is a handle to its `Object`, which never moves: an entry of its domain's
//! slab ([`crate::slab`]): slots name their owner by a pointer to that entry, which an
//! evictor can follow, and the entry finds its domain from its chunk's header. Where the
//! state takes a line or more and is applied operation by operation (every kind but the
//! counter), the word sits alone on its cache line, apart from the state and from other
//! objects: every update loads the word, and an apply writes the state (`read-mix`'s
//! table at 100 % updates, two threads, Intel Xeon 2-core host, 2026-11-27: 67–77M
//! updates/s with the word packed against the state, 107–134M apart). The owner is
//! alive while a slot names it: dropping an object takes its lock and then its slots, and an
//! evictor holds one of those slots until it holds the lock, or until it has folded the
//! log into the object (`eviction`, "Eviction by one fold"). (A slot may keep naming an
//! object whose log it emptied; nobody follows that pointer, since only a non-empty log is
//! evicted, or, for a counter, an empty one whose slot still publishes its owner.)
//!
//! # Synchronize (000 §5.1 `Object::synchronize`): it costs what it merges
//!
//! 1. Take the object lock.
//! 2. If no core of the mask publishes the object and it has no backlog, nothing is
//!    logged: stop here. No other core's slot is locked and no barrier is sent. (A slot
//!    that marks the object's log emptied does not publish it; step 4 of "Update".) Where
//!    the word shows the mask empty and the lock free, [`OpLog::synchronize`] takes steps 1
//!    and 2 as a read through the lock does (`Obj::synchronize_quiescent`): the lock's one
//!    compare-and-swap also revokes the read bias for the guard's mutable access, and its
//!    [`Synced`] guard, two words, unlocks with one store, so a guard costs less than a
//!    `std` mutex's lock and unlock (one thread, 2-core AMD EPYC host, 2026-11-29:
//!    6.5 ns against 9.5 ns; 15.7 ns before).
//! 3. Otherwise, exclude concurrent readers (below), then lock, at once, the slots of the
//!    cores that publish the object, in ascending core order (one `membarrier` if some are
//!    entered through the owner protocol and not in spin mode), and check that no other
//!    core of the mask started publishing meanwhile; if one did, unlock and start over.
//!    Holding every such slot at one instant makes the set of operations gathered a
//!    consistent cut: it contains every update that completed before the synchronize
//!    began (each published its object before its push, and a hand-off moves the log to
//!    the backlog before the slot stops publishing), and if it contains an update it
//!    contains every update that finished before that one started.
//! 4. Take the object's backlog (operations left by a panic, then evicted and handed-off
//!    logs), then each slot's log, into one batch; stop publishing; leave the slots in spin
//!    mode (the next synchronize needs no barrier; `percore::OwnerLock`); unlock them.
//!    Updates continue from here on (001 §10.2): an updater waits only for the gather,
//!    never for the apply.
//! 5. Apply the batch to the internal instance ([`LogKind::apply`]: merge, global
//!    absorption, execute), then run the read on it while still holding the object lock.
//!
//! # The cut: a full ordered backlog applied without taking a slot
//!
//! A full backlog of an ordered object cannot simply be applied: a core's slot may hold
//! operations older than some in the backlog, and they must run first. A synchronize
//! takes every slot for that (their spin locks: such kinds' slots are in spin mode, see
//! "Update", step 1), which two threads updating one ordered object paid once per full backlog
//! (8 logs of 128 operations here). Instead, each slot publishes a *low mark* beside its
//! published word ([`crate::percore::PerCore::low_mark`]): the stamp of its log's first
//! push since the log was last taken out (a store with a full barrier, before that update
//! completes; once per log), cleared once the log is taken out (a hand-off, an eviction,
//! a gather) and in its new place. The holder of the object lock then:
//!
//! 1. reads the clock ([`ordo::Clock::now`], which keeps later loads after it) and takes
//!    the reading less the clock's uncertainty window as the cut;
//! 2. lowers the cut to the low mark of the object's slot on every core of its mask
//!    (loads, no slot taken);
//! 3. takes the backlog, and applies its operations stamped before the cut, in stamp
//!    order ([`LogKind::cut`]); those after it stay in the backlog, for the next apply
//!    or synchronize.
//!
//! Why nothing runs out of order: take an applied operation `y` and an operation `x`
//! stamped before it that did not run. If `x`'s update had completed when the cut was
//! read (step 2), `x` was in a slot (whose mark bounds the cut below `x`'s stamp, so `y`
//! would not have run) or already in the backlog (and ran, in order); a slot whose log
//! left it shows its mark cleared only once the log is in the backlog. Otherwise `x`'s
//! update completed after the mark loads, which it follows: it is concurrent with `y`'s,
//! since `y`'s stamp, below the reading less the window, was read before step 1 began.
//! So the order applied is a linearization, as a synchronize's is (an update that was
//! under way runs after what its stamp would put it before; nothing that completed
//! earlier does). Where the cut leaves more than half of the backlog (a slot's log began
//! long ago: its core logged the object once and moved on), the object is synchronized
//! as before, which bounds the backlog. Two threads appending to one ordered object (a
//! probe, `Ordered` adds to 8 counters, 2-core AMD EPYC host, 2026-11-30): 41-44M
//! updates/s with a synchronize per full backlog, 54-55M with the cut, against 62-70M
//! for two objects, one per thread (the clock's `rdtscp` takes half the time there).
//!
//! # Representations (000 §2: K42-style online reconfiguration)
//!
//! *Logged* is the above. *Direct*: an update takes the object lock, synchronizes (logs
//! from before the switch, or from updates that read the representation just before it,
//! come first), applies the operation in place ([`LogKind::exec`]) and unlocks: a mutex,
//! except that an update that finds the lock taken spins for it only briefly
//! (`BRIEF_WAIT_STEPS` polls with exponential backoff, 63 spin-loop hints, about what a
//! `std` mutex spins before it sleeps), then logs itself
//! as in the logged representation instead of waiting longer, so updates continue while a
//! reader holds a [`Synced`] guard, whatever the representation. (Logging at once, without
//! the spin, measured slower at two threads: an update logged while the lock is taken makes
//! the next read gather every core's log under the lock, which holds the lock longer and
//! makes more updates log; see `Obj::lock_briefly`.) The common direct update, by the
//! thread that made the last one, is inline at the call site; one by another thread also
//! counts for the policy (below), out of line.
//! Every update first reads the representation from the word with a relaxed load, before
//! entering its slot (a load of a line every updater keeps in its cache until a
//! synchronize or a direct update writes it; the adaptive policy writes nothing on the
//! update path), and a direct update touches no slot. The lock's first compare-and-swap
//! starts from the value loaded (no second load), and unlocking stores whatever the holder
//! decided about the representation, the score and the read bias in the same instruction,
//! so a direct update or read costs one atomic read-modify-write, where a mutex costs two
//! (`crate::word`: one thread updating `read-mix`'s table, 5.5 ns per update with the
//! unlock an atomic exclusive or, 4.4 ns with a store, against 4.3 ns for a `std` mutex,
//! whose uncontended path is shorter). A switch to direct applies what is
//! logged and gives up the object's slots, emptying its core mask: the check for logs that
//! each direct update and read makes then visits no slot. A stale answer is correct either
//! way, since both paths keep every update and its order; an update that read the word
//! just before a switch to direct logs in its slot (setting its core's bit again), and the
//! next synchronize or direct update applies it first.
//!
//! Kinds whose logs may be applied alone ([`LogKind::APPLY_ALONE`], the counter; and an
//! [`Unordered`](crate::Unordered) kind that keeps the default global absorption, once its
//! domain learned it, `Obj::applies_alone`) skip
//! both: every operation commutes with every other one, so a direct update applies in
//! place at once and leaves what is logged to the next read (or to the eviction that
//! folds it, step 3 of "Update"), and a switch to direct gathers nothing (a learned kind's
//! gathers what it can take without a barrier: its slots then empty where one thread
//! updated it, and other cores' logs wait for the next read; `oplog-bench objects`,
//! `logged-oplog` at 1,024 objects, two threads: 20-21 barriers per million updates
//! before, none since). Neither then
//! locks another core's slot, so neither ever sends a barrier: with many hot objects that
//! move between the representations (issue 14), a switch on 16 cores used to interrupt
//! every CPU (`oplog-bench objects`, 1,024 counters, 16 threads: 9.3M updates/s against
//! 129M for one `AtomicU64` each; 108M since).
//!
//! A kind may also have a lock-free *direct log* ([`DirectLog`]), which then holds the
//! instance: the counter's is its value, one integer. A direct update takes no lock at
//! all, but adds its delta to the value with one atomic instruction, like a plain atomic
//! counter, and a lock holder applies a gathered batch the same way, one more add. A read
//! works on a *lease* ([`DirectLog::lease`]): the value loaded at the instant the
//! synchronize holds the slots that publish the object (between locking them and checking
//! the mask again, `HeldSlots::lock`), plus what it gathered; or, with nothing logged, the
//! value loaded before the word's log half is checked once more (under the lock on its
//! fast path, after the announcement on the concurrent path). An update logged in a slot
//! that completed before a direct update the load includes has set its core's bit by
//! then, so the check sees it (or the held slots hold it), and a direct update that
//! completed before an update in a held slot started is in the load. A [`Synced`] guard
//! shows its lease, and the holder's change is added, at the unlock, to what direct
//! updates added meanwhile. Reads never write the value, so a read of a counter that
//! others update directly takes the concurrent path (a load) where the bias allows.
//! The value is the slab entry's companion (`crate::slab`), and the entry keeps only the
//! word: the word, which every direct update loads, then stays read-only in each updating
//! core's cache, and an update moves one line between cores, where a word and a value on
//! one line took two transfers (a load, then the read-modify-write). With 65,536 counters
//! and two threads each incrementing a random one (2-core host, 2026-11-27, `objects`'
//! probe), direct updates went from 102M per second (under the lock) to 233M with a direct
//! log inside the entry and 356M as its companion, against 439M for one `AtomicU64` each.
//! A counter costs its 8-byte handle, its 8-byte word and its 8-byte value: 24 bytes,
//! where a value in the entry beside the word and a separate direct log of deltas that
//! the next synchronize took with an exchange cost 32. Eight words now share a line
//! where four did, and a word that a sampled direct update or a miss writes takes twice
//! as many neighbours from the other core: two threads each incrementing a random one of
//! 1,024 counters ran 2–4 % slower (2-core AMD EPYC host, 2026-11-29, alternated runs),
//! 12 % in the host's slow state (a 370 ns line round trip: 90M updates/s against 103M;
//! the same entries padded to 16 bytes, 102M). A reader of a counter that another thread
//! increments gained more: 36–39M reads/s against 7–12M, and the increments 60M/s
//! against 46–48M (one thread each, adaptive, fast state).
//! Such updates write nothing the adaptive policy sees, so one in [`SAMPLE_EVERY`] (64)
//! per thread shows it the rest: a sampled direct update takes the lock and leaves its
//! thread's tag, as every direct update of other kinds does (each change of updater
//! weighing [`SAMPLED_CHANGE`], 8), unless the tag is its own already (nothing to count:
//! then it adds without the lock too, so that one thread's updates never write the
//! entry's line, which neighbouring objects share), and a sampled logged one looks at the
//! core mask: no other core's bit counts towards direct, as a flush from one core does
//! (`Obj::observe_sampled_update`), where a counter that one thread updates costs less
//! direct (one atomic add) than logged. That depends on the processor, by about three
//! times either way (one thread incrementing one counter: on the AMD host 270M updates per
//! second logged, 430M direct, 440M for an `AtomicU64`; on an Intel Xeon 330M logged, 100M
//! direct, 150M for an `AtomicU64`), so each domain measures it, the first time the policy
//! asks (`solo`), and where logging costs clearly less (under two thirds of the direct
//! update's time in the domain's probe) such a counter stays logged.
//!
//! An adaptive object ([`Representation::Adaptive`], the default) starts logged and is
//! moved by what its lock holders observe (reads, flushes of full logs, evictions, direct
//! updates), with hysteresis, never by a write on the logged update path:
//!
//! * logged: a read that finds a small batch logged since the last synchronize (fewer
//!   than 2 operations, or 16 where taking another core's log sends a barrier:
//!   `Thresholds`, below), or only operations of the reader's own core, raises the score,
//!   unless local absorption shrank what was logged (a quarter or more of the pushes) or
//!   emptied a log: each absorbed pair is two direct updates saved, so logging pays
//!   however little is left, and the object remembers it (`ABSORBS`): a read that then
//!   finds nothing logged at all weighs nothing (the updates may have cancelled on their
//!   core, or another read took them), where otherwise it counts as a small batch. (Two
//!   threads forking and truncating every third fork, 2-core host, 2026-11-28: pinned
//!   logged, 1.8–1.95M forks/s; pinned direct, 0.95M; a `Mutex`, 1.95M. The rmap used to
//!   flap to direct there now and then; it stayed logged in every run since.) So does a
//!   full log applied by its owner while no other core logs the object, and, for kinds
//!   whose logs are not applied alone, a
//!   backlog of full logs handed off by one core's owner that local absorption did not
//!   shrink (each log in the backlog keeps the count of pushes it took), applied once the
//!   backlog is full; `TO_DIRECT` (4) such observations in a row switch the
//!   object to direct; a read or flush that finds other cores' operations (a consumer
//!   reading a producer's) resets the score. Evictions weigh too (issue 14: more hot objects than
//!   log-cache slots): a log evicted from the cache before it took `THRASH_PUSHES` (8)
//!   operations did not pay for its miss, and raises the score twice as much as such a
//!   read (`THRASH_WEIGHT`: two such evictions in a row switch; the
//!   evictor holds the victim's lock from its try-lock, and weighs it once its slot is
//!   released); an evicted log that took more resets it; a backlog the victim finds full
//!   of such logs switches it at once. An object that misses the cache on most of its
//!   updates thus ends direct: one atomic read-modify-write per update instead of a miss
//!   (measured with `oplog-bench objects`);
//! * direct: the score's weight counts the direct updates made by another thread than the
//!   one before since the last read (told by a 2-bit thread tag that sampled updates
//!   leave in the word and reads clear), plus the updates that found the
//!   lock taken and logged themselves (counted by whoever applies them; not for kinds
//!   whose logs may be applied alone, whose reads may find logs from before the switch);
//!   the second read in a row that finds the weight at 4 or more (8 with barriers)
//!   switches back to logged, and so does the update that brings it to `WEIGHT_MAX` (31) without a
//!   read between, unless the updating core's log-cache slot for the object holds another
//!   object's log (logging would evict it at once, and the evictions would switch the
//!   object back: with more hot objects than slots, a switch every ~35 updates); then the
//!   count restarts. Likewise in a domain whose hot objects outgrew the cache (`solo`):
//!   there the count must reach the top three times in a row, each within [`HOT_WINDOW_NS`]
//!   of the last (100 µs, 800 µs for a counter, whose changes are sampled 8 times less
//!   often; the word keeps a coarse stamp of the last restart and a bit, `HOT_ONCE`, for a
//!   restart that came within the window), which an object that threads update in turn
//!   does and one drawn now and then among thousands does not (twice in a row, such objects
//!   did now and then, by chance, and flapped: [`HOT_WINDOW_NS`]); and there a log shared
//!   with other cores that fills slowly (`policy`'s `COLD_FLUSH_NS`) switches its object to direct
//!   (`Obj::observe_flush`), and an object with nothing logged that misses the cache
//!   switches to direct at once rather than evict a log, while a hot one whose operations
//!   commute applies a miss against another active log in place (`eviction`, "A miss that
//!   spares the slot"). The count is sampled: one direct update in
//!   `policy`'s `LOCKED_SAMPLE_EVERY` (8) per thread looks at the tag in the word, that of the last
//!   sampled updater, and leaves its own when it unlocks, in the same instruction; a
//!   change of updater it finds weighs 8 ([`LOCKED_SAMPLED_CHANGE`]; a counter's sampled
//!   updates, one in 64 that take the lock, weigh [`SAMPLED_CHANGE`]). The other updates
//!   leave the word's tag as it is, except the first since a read, which leaves its own.
//!   Where the last updater is another thread half the time, so is the last sampled one,
//!   and two threads taking turns on one object are still told within about 16 updates
//!   each. Counting every update cost a fifth of the throughput where two threads update
//!   many objects at random (two threads each updating a random one of 1,024 objects of a
//!   24-byte state, pinned direct, 2-core Intel Xeon host, 2026-11-28, medians of seven
//!   alternated runs: 56M updates/s counting every update, 71M sampled, 73M for one `std`
//!   mutex each), and leaving the tag at every update another 3–8 % (the same with 4,096
//!   and 65,536 objects, pinned direct and adaptive, medians of eleven alternated runs).
//!
//! So an object updated by a single thread is direct whatever its mix: logging saves one
//! core no more than its lock, and a direct update costs less than a push (measured with
//! `read-mix` at one thread, 2026-11-25: direct 139M updates/s, logged 90M, at 100 %
//! updates), except a counter where its domain measured the opposite (above). Updates
//! from several threads move the object's lines at every direct update,
//! so an object they share is direct only while reads come about as often as updates
//! (fewer than about four changes of updater between reads, eight with barriers). Both
//! directions need the signal twice or more in a row, against flapping.
//!
//! The two thresholds (`Thresholds`) are fixed per domain by what a read pays to take
//! another core's log. With a lock alone, a read that gathers two operations has paid for
//! itself. Where the taking sends that core a barrier (the default slots: per-CPU with
//! restartable sequences, or per-thread with asymmetric fences), a read costs microseconds,
//! and logging pays only for larger batches: at two threads and 90 % updates the object
//! used to stay logged, its reads each paying a barrier for a handful of operations, at
//! two thirds of a `Mutex`'s throughput. A switch
//! costs nothing beyond the read's own lock and unlock; a switch to direct also gives up
//! the object's slots (above), unless its logs may be applied alone.
//! [`OpLog::switch_representation`] switches by hand.
//!
//! # Concurrent reads
//!
//! A read of an object with nothing logged needs no synchronize, and reads must not write
//! a shared line (002 ch. 3). While the object is *biased* (bit 61), a read announces
//! itself in its CPU's row of the domain's reader table (`crate::readers`, BRAVO-style),
//! re-checks the bias, checks that nothing is logged (step 2 above), and reads the
//! instance without the lock. A lock holder that is about to change the instance (apply a
//! batch, a direct update, a [`Synced`] guard, drop) first clears the bias (a direct
//! update in the compare-and-swap that takes the lock), then waits
//! until no cell of the object's column holds the object (a Dekker handshake: the reader
//! stores then loads the word, the writer stores the word then loads the cells). It does
//! so before it takes logs to apply them (the backlog, a slot's log), not only before the
//! instance changes: a reader that no longer finds them where updates leave them would
//! take the object for quiescent and read an instance that lacks them
//! (`Obj::take_backlog`). A read
//! through the lock that found nothing logged sets the bias again (one that found logs
//! does not: the next synchronize would revoke it; in the direct representation, only the
//! second read in a row with no update between, against churn in write-heavy mixes), so
//! after updates the reads are concurrent from the second one on. Reads
//! through the lock that change nothing do not exclude concurrent readers. A read that
//! finds the lock taken waits for it while watching the word, and takes the concurrent
//! path as soon as the holder sets the bias, instead of queueing behind the other waiting
//! reads (`Obj::lock_for_read`). On the 16-core Xeon (2026-11-27, `read-mix`, three runs
//! alternated with the tree before) that doubled the 1 % update mix: 8 threads went from
//! 33–35M to 59–67M ops/s and 16 from 23–25M to 44–51M (0.21–0.24x `node-replication` to
//! 0.40–0.47x); at 10 % nothing changed, at 50 % and 16 threads it lost a tenth (2.6–2.7M
//! to 2.2–2.4M), and two threads did not change, there or on the 2-core host.
//!
//! # Where the code lives
//!
//! This module holds the handle ([`OpLog`]) and its public operations, the object and what
//! every path asks of it; each path is a submodule: `update` (the logged update),
//! `backlog_apply` (an object's backlog applied, and the cut), `eviction` and `log_cache`
//! (the per-core log cache and what leaves it), `direct` (the direct update), `read`
//! (reads and the synchronize guard), `sync` (gather and apply), `lock` (the object lock),
//! `policy` (the adaptive policy and its thresholds) and `solo` (what one core's updates
//! cost each way, measured).
//!
//! [`SHARED_FACTOR`]: update::SHARED_FACTOR
//! [`OVERFULL_FACTOR`]: update::OVERFULL_FACTOR

mod backlog_apply;
mod direct;
mod eviction;
mod lock;
mod log_cache;
mod policy;
mod read;
mod solo;
mod sync;
mod update;

pub(crate) use log_cache::SlotData;
pub(crate) use policy::Thresholds;
pub use read::Synced;
pub(crate) use solo::Solo;

use crate::backlog::Parked;
use crate::cache_stats::Event;
use crate::domain::{Domain, Representation};
use crate::log::{CounterLog, DirectLog, LogKind};
use crate::migration;
use crate::percore::{CoreMode, Entered, INLINE_SLOTS, NO_LOW_MARK, Remote};
use crate::primitive::{
    AtomicUsize, Backoff, ConstPtr, GuardAccess, Ordering, UnsafeCell, dekker_fence, spin_wait, thread_local_const,
};
use crate::reentry;
use crate::slab::Slab;
use crate::word::{
    BACKLOG, BIAS, CORE_BIT_COUNT, CORE_BITS, DIRECT, HOT_ONCE, LOCK, RESTART, SCORE, SCORE_SHIFT, STAMP, STAMP_SHIFT,
    STAMP_UNIT_NS, TAG, TAG_SHIFT, Word, core_bit, cores_of, quiescent_word,
};
use eviction::Eviction;
use lock::*;
use log_cache::{HeldSlots, NO_OWNER, Refused, emptied, holds_a_log, log_left};
use policy::*;
use smallvec::SmallVec;
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::ptr::NonNull;
use std::sync::Arc;
use sync::*;

/// A shared object of sequential type `L::State` whose updates are logged per core and
/// applied when it is read (000 §4–6). See the [crate docs](crate) for what reads observe.
///
/// The handle is one pointer; the object itself lives in its domain's slab.
pub struct OpLog<L: LogKind> {
    object: NonNull<Object<L>>,
}

/// An object itself, which never moves (an entry of its domain's slab; [`OpLog`] is its
/// handle, [`Obj`] a reference to it). Its domain is the slab's owner ([`Obj::domain`]);
/// each object holds one strong count of it.
#[repr(C)]
pub(crate) struct Object<L: LogKind> {
    /// [`LOCK`], [`DIRECT`], [`BIAS`], the policy's score, the core mask and [`BACKLOG`]
    /// (module docs, "The object's word").
    word: Word,
    /// The instance, or, where the direct log holds it (the counter), nothing
    /// ([`DirectLog::Stored`]).
    state: UnsafeCell<Stored<L>>,
}

/// What an object's entry keeps of its instance ([`DirectLog::Stored`]).
type Stored<L> = <<L as LogKind>::Direct as DirectLog<L>>::Stored;

/// A reader's or lock holder's copy of an instance that the direct log holds
/// ([`DirectLog::Lease`]; zero-sized for every kind but the counter).
type Lease<L> = <<L as LogKind>::Direct as DirectLog<L>>::Lease;

/// An object's word sits alone on its cache line, apart from its state and from other
/// objects, where the state is a line or more and the kind's logs are applied operation by
/// operation (`crate::slab`: every update loads the word, and an apply writes the state).
/// A counter (a lock-free direct log: its apply is one add) and a smaller state are packed.
/// A direct update of a kind without a lock-free direct log writes the entry (the lock in
/// its word, its state), so such entries keep off the line of their chunk's header, which
/// every update reads to find the domain (`crate::slab`, "Placement": two threads each
/// updating its own object of a 24-byte state, direct, 2-core host, 2026-11-29, 114M
/// updates/s with one of the two beside the header, 320M without).
impl<L: LogKind> crate::slab::Entry for Object<L> {
    const HEAD: usize = if <L::Direct as DirectLog<L>>::LOCK_FREE || std::mem::size_of::<Stored<L>>() < APART_STATE {
        0
    } else {
        std::mem::offset_of!(Object<L>, state)
    };
    const WRITTEN: bool = !<L::Direct as DirectLog<L>>::LOCK_FREE;
}

/// The size of state from which an object's word sits apart ([`crate::slab::Entry`]).
const APART_STATE: usize = 64;

/// The slab of a domain's objects: each entry's companion is its direct log ([`DirectLog`]:
/// the counter's value; zero-sized for kinds without one), kept apart from the entry
/// (`crate::slab`).
pub(crate) type ObjectSlab<L> = Slab<Object<L>, <L as LogKind>::Direct>;

/// A reference to an [`Object`] that keeps the provenance of its whole slab
/// chunk, so the chunk's header (the domain) can be read from it; `Copy`, like `&`.
pub(crate) struct Obj<'a, L: LogKind> {
    ptr: NonNull<Object<L>>,
    _life: PhantomData<&'a Object<L>>,
}

impl<L: LogKind> Clone for Obj<'_, L> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<L: LogKind> Copy for Obj<'_, L> {}

// SAFETY: the handle owns its slab entry. The internal instance is only accessed with the
// object lock held (or by the owning handle alone, when dropping), so moving or sharing the
// handle shares no unsynchronized access; operations move to whichever thread applies them,
// and the instance may be dropped by any thread, which `LogKind`'s `Op: Send` and
// `State: Send` allow.
unsafe impl<L: LogKind> Send for OpLog<L> {}
// SAFETY: as above.
unsafe impl<L: LogKind> Sync for OpLog<L> {}

impl<L: LogKind> fmt::Debug for OpLog<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpLog").field("id", &self.obj().id()).field("domain", &self.domain().id).finish_non_exhaustive()
    }
}

impl<L: LogKind> OpLog<L> {
    /// Wraps `state` as an object of the process-wide per-CPU domain of `L`
    /// ([`Domain::global`]).
    ///
    /// # Panics
    /// When `L` is ordered and the process-wide clock's configuration is malformed.
    pub fn new(state: L::State) -> Self {
        Self::with_domain(&Domain::global(), state)
    }

    /// Wraps `state` as an object of `domain`.
    pub fn with_domain(domain: &Arc<Domain<L>>, state: L::State) -> Self {
        // The object's strong count of its domain, given back in `release`.
        let owner = Arc::into_raw(domain.clone()).cast::<()>();
        let word = if domain.representation == Representation::Direct { DIRECT } else { 0 };
        const {
            assert!(
                !<L::Direct as DirectLog<L>>::LOCK_FREE || L::APPLY_ALONE,
                "a lock-free direct log needs APPLY_ALONE"
            )
        };
        // A kind that keeps the default global absorption is known as one applied alone
        // before its first update (its absorption run on no operations).
        domain.check_global_absorption(&state);
        let (stored, direct) = L::Direct::split(state);
        let object = domain.slab.alloc(
            Object { word: Word::new(word), state: UnsafeCell::new(stored, "OpLog.state") },
            direct,
            owner,
        );
        OpLog { object }
    }

    #[inline(always)]
    fn obj(&self) -> Obj<'_, L> {
        Obj { ptr: self.object, _life: PhantomData }
    }

    /// The domain this object belongs to.
    pub fn domain(&self) -> &Domain<L> {
        self.obj().domain()
    }

    /// Logs a deferred update (000 Figure 6 `Object::log`). It takes effect, in timestamp
    /// order for ordered kinds, no later than the next synchronize.
    ///
    /// # Panics
    /// Only if user code of another operation panics while this update applies it: when the
    /// update's hand-off fills the object's backlog, when it applies the object's backlog
    /// before taking a slot, when it applies its own full log or a log it evicted from the
    /// cache (kinds whose logs may be applied alone, [`LogKind::APPLY_ALONE`]), when its
    /// eviction switches the evicted object to direct (which applies that object's logs),
    /// or, in the direct representation, when it applies what was logged before it (see the
    /// crate docs on panics). This update itself is kept either way: it is logged or
    /// applied before the panic goes on. Calling `update` from inside this object's own
    /// `exec` or read closure, or while holding its [`Synced`] guard, logs the update: it
    /// never waits for the lock the thread holds.
    #[inline]
    pub fn update(&self, op: L::Op) {
        self.obj().append(op);
    }

    /// Moves the object to `to` now ([`Representation::Adaptive`] leaves it where it is):
    /// applies everything logged, then switches, under the object lock. In an adaptive
    /// domain the policy may move it again; pin the domain's
    /// [`Config::representation`](crate::Config::representation) to keep it.
    ///
    /// # Panics
    /// As [`OpLog::synchronize`].
    pub fn switch_representation(&self, to: Representation) {
        let obj = self.obj();
        let mut lock = obj.lock("switch_representation");
        obj.sync_locked();
        let direct = match to {
            Representation::Adaptive => return,
            Representation::Logged => false,
            Representation::Direct => true,
        };
        if direct {
            obj.give_up_slots(true);
        }
        lock.policy = Some(policy_bits(direct, 0));
    }

    /// The representation this object is in now (see [`Representation`]; never
    /// [`Representation::Adaptive`]).
    pub fn representation(&self) -> Representation {
        if self.obj().get().word.holders(Ordering::Relaxed) & DIRECT == 0 {
            Representation::Logged
        } else {
            Representation::Direct
        }
    }

    /// Applies every logged update and returns a guard giving access to the up-to-date
    /// internal instance, holding the object lock until dropped (000 Figure 6
    /// `Object::synchronize` and `unlock`). Updates from other threads continue meanwhile.
    /// Where nothing is logged and no core holds a log-cache slot for the object (a direct
    /// object, say) it costs one compare-and-swap and its guard's drop one store, less than
    /// a `Mutex`'s lock and unlock: an update and a read of the result under one guard
    /// take the lock once, where [`OpLog::update`] then [`OpLog::read`] take it twice.
    ///
    /// # Panics
    /// If an operation panics while being applied. The panicking operation is dropped,
    /// the lock released, and the operations after it kept for the next synchronize.
    #[inline]
    pub fn synchronize(&self) -> Synced<'_, L> {
        let obj = self.obj();
        // Sequentially consistent, as `read`'s load (the fast path may revoke the bias).
        let seen = obj.get().word.load(Ordering::SeqCst);
        match obj.synchronize_quiescent(seen) {
            Some((want, holding, lease)) => Synced::new(obj, want, holding, lease),
            None => obj.synchronize_locked(),
        }
    }

    /// Synchronizes and runs `f` on the up-to-date instance.
    ///
    /// # Panics
    /// As [`OpLog::synchronize`], or if `f` panics.
    // Inline: the common paths (the concurrent read, a read through the lock of an object
    // with nothing logged) then compile into the caller with `f`. Left to the compiler, it
    // stayed a call that saved six registers: one thread mixing reads and updates of a
    // 64-counter table at random, half each, took 12.8-13.4 ns per operation, against
    // 9.9-10.8 inline (reads only: 8.1-8.9 ns against 6.8-7.5; a `Mutex`, 11.0-11.5 ns at
    // half each; 2-core AMD EPYC host, 2026-11-30).
    #[inline]
    pub fn read<R>(&self, f: impl FnOnce(&L::State) -> R) -> R {
        let obj = self.obj();
        // Sequentially consistent, as the reader's second load (`enter_reader`).
        let mut seen = obj.get().word.load(Ordering::SeqCst);
        if seen & BIAS != 0 {
            match obj.enter_reader(seen) {
                // SAFETY: `enter_reader` validated the entry.
                Ok(reader) => return unsafe { reader.read(f) },
                Err(now) => seen = now,
            }
        }
        obj.read_locked(f, seen)
    }

    /// Applies every logged update and returns the instance.
    ///
    /// # Panics
    /// If an operation panics. All other operations are still applied first, then the
    /// first panic is resumed (the instance is dropped during unwinding).
    pub fn into_inner(self) -> L::State {
        let this = ManuallyDrop::new(self);
        let (state, panic) = this.release();
        if let Some(p) = panic {
            drop(state);
            resume_unwind(p);
        }
        state
    }

    /// Retires the object (applies everything, gives up its slots), frees its slab entry
    /// and returns the instance and the first panic of an operation. Consumes the handle:
    /// callers must not use or drop it afterwards.
    fn release(&self) -> (L::State, Option<Box<dyn Any + Send>>) {
        let obj = self.obj();
        let panic = {
            let _lock = obj.lock("into_inner or drop");
            obj.retire()
        };
        // SAFETY: the object holds one strong count of its domain, taken in `with_domain`
        // with `Arc::into_raw`; this takes it back, once.
        let domain = unsafe { Arc::from_raw(obj.domain_ptr()) };
        // SAFETY: the object is retired (no slot names it, so no evictor can reach it) and
        // this handle is its only owner, which the caller gives up: read the object out
        // once and give the entry back to the slab it came from.
        let Object { word: _, state } = unsafe { self.object.as_ptr().read() };
        // Before the entry's companion goes with it.
        let state = obj.direct().join(state.into_inner());
        // SAFETY: as above; the value was just moved out.
        unsafe { domain.slab.free(self.object) };
        (state, panic)
    }
}

impl OpLog<CounterLog> {
    /// [`OpLog::update`] of a counter: where the calling core's slot holds the counter's
    /// log, the delta is folded into it (`percore`'s `PerCore::fold`: the fast path of
    /// "Update, logged"): on per-CPU slots entered by restartable sequences in one
    /// sequence, without taking the slot (no store to the slot's flags); on per-thread
    /// slots on the owner protocol, taking the slot with nothing else of an entry;
    /// elsewhere through an entry of the slot. Every other case (the slot
    /// holds another object's log, or is held or being taken) takes [`OpLog::update`]'s
    /// path, out of line. The direct update is inline
    /// too: called out of line, one thread updating 65,536 counters ran 25–30 % slower
    /// (55M against 80M updates/s, 2-core host, measured several times; the cause was not
    /// found), while the per-CPU increments of one hot counter ran at most 12 % faster, a
    /// difference the 16-core machine did not confirm.
    #[inline(always)]
    pub(crate) fn add(&self, delta: i64) {
        let obj = self.obj();
        let d = obj.domain();
        // Relaxed, as `append`: a direct object that a stale load calls logged has no slot
        // that holds its log, so the fold declines.
        let seen = obj.get().word.holders(Ordering::Relaxed);
        if seen & DIRECT != 0 {
            obj.update_direct(delta, seen);
        } else {
            match d.slots.fold(obj.slot_index(), obj.id() as usize, delta) {
                Some(pushes) if pushes % SAMPLE_EVERY == LOGGED_SAMPLE => self.observe_sampled_fold(),
                Some(_) => {}
                None => self.add_declined(delta),
            }
        }
    }

    /// The sampled update of a logged counter that folded ([`SAMPLE_EVERY`]): measures, if
    /// the adaptive policy may need it and nothing was measured yet, whether a counter that
    /// one core alone updates costs less logged or direct here ([`solo`]), then shows the
    /// update to the policy ([`Obj::observe_sampled_update`]).
    #[cold]
    #[inline(never)]
    fn observe_sampled_fold(&self) {
        let obj = self.obj();
        let d = obj.domain();
        if d.representation == Representation::Adaptive && d.solo.unmeasured() {
            let (index, key) = (obj.slot_index(), obj.id() as usize);
            d.solo.measure(|| d.slots.fold(index, key, 0).is_some());
        }
        obj.observe_sampled_update();
    }

    /// [`OpLog::add`] when the fold declined (the slot holds another object's log, or is
    /// held or being taken): out of line, so that the fold's callers need no registers
    /// saved. Not cold: it is most updates of counters that miss the log cache.
    #[inline(never)]
    fn add_declined(&self, delta: i64) {
        self.obj().append_logged(delta);
    }
}

impl<L: LogKind> Drop for OpLog<L> {
    /// Applies every pending operation to the instance, then drops it (nothing logged is
    /// lost). If operations panic, the others still run and the first panic is resumed
    /// after the instance is dropped, unless the thread is already panicking.
    fn drop(&mut self) {
        let (state, panic) = self.release();
        drop(state);
        if let Some(p) = panic
            && !std::thread::panicking()
        {
            resume_unwind(p);
        }
    }
}

impl<'a, L: LogKind> Obj<'a, L> {
    /// The object.
    #[inline(always)]
    fn get(self) -> &'a Object<L> {
        // SAFETY: the entry holds the object from `with_domain` until its
        // handle is dropped or consumed, which the lifetime `'a` (a borrow of the handle, or
        // the victim's lock held by an evictor) outlasts; it is only accessed through shared
        // references.
        unsafe { self.ptr.as_ref() }
    }

    /// The object's domain: the owner of the slab chunk it lives in.
    #[inline(always)]
    fn domain(self) -> &'a Domain<L> {
        // SAFETY: the pointer is the domain's `Arc` data pointer (see `domain_ptr`), and the
        // object holds a strong count of the domain, so the domain outlives this borrow.
        unsafe { &*self.domain_ptr() }
    }

    /// The object's domain as the pointer `Arc::into_raw` gave (with the provenance of the
    /// whole `Arc` allocation, so `Arc::from_raw` may use it).
    #[inline(always)]
    fn domain_ptr(self) -> *const Domain<L> {
        // SAFETY: every `Object<L>` is an entry of its domain's slab, allocated with the
        // domain's `Arc::into_raw` pointer as owner (`OpLog::with_domain`), and `ptr` has the
        // provenance of the whole chunk (it came from the slab).
        unsafe { ObjectSlab::<L>::owner_of(self.ptr.as_ptr()).cast::<Domain<L>>() }
    }

    /// The object's direct log: its slab entry's companion.
    #[inline(always)]
    fn direct(self) -> &'a L::Direct {
        // SAFETY: every `Object<L>` is an entry of an `ObjectSlab<L>` (as in `domain_ptr`),
        // whose companion lives as long as the entry, which `'a` outlasts (as in `get`); it
        // is only accessed through shared references.
        unsafe { &*ObjectSlab::<L>::companion(self.ptr.as_ptr()) }
    }

    /// The object's identity in slots and backlogs: its address.
    #[inline(always)]
    fn id(self) -> u64 {
        self.ptr.as_ptr().addr() as u64
    }

    /// The object a slot's owner field names (see `install`).
    ///
    /// # Safety
    /// `owner` came from [`Obj::as_owner`] of an object that is still alive for `'a`.
    unsafe fn from_owner(owner: *const ()) -> Self {
        // SAFETY: owner fields of live objects are pointers to slab entries, never null.
        Obj { ptr: unsafe { NonNull::new_unchecked(owner.cast_mut().cast()) }, _life: PhantomData }
    }

    /// This object as a slot's owner field (a pointer with the entry's provenance).
    #[inline(always)]
    fn as_owner(self) -> *const () {
        self.ptr.as_ptr().cast_const().cast()
    }

    /// Whether this object's logs may be applied alone, one at a time, before the other
    /// cores' logs are gathered: its kind declares it ([`LogKind::APPLY_ALONE`]), or its
    /// domain learned that the kind has no global absorption (from the first object made,
    /// [`LogKind::absorbs_nothing_globally`], or an apply,
    /// [`LogKind::applied_without_global_absorption`]). The rules of such kinds follow
    /// it: where a full or evicted log is applied or kept, a direct update that leaves what
    /// is logged to the next read, a switch to direct that leaves other cores' logs where
    /// taking them needs a barrier (`set_policy`), the policy's weighing at a read (module
    /// docs, "Representations"); a hot object's miss applied in place (`eviction`) follows
    /// the declaration only.
    #[inline(always)]
    fn applies_alone(self) -> bool {
        L::APPLY_ALONE || self.domain().no_global_absorption()
    }

    /// Whether a direct update must apply what is logged before its own operation: the
    /// log half shows logs in slots or a backlog, and the kind's operations do not all
    /// commute ([`Obj::applies_alone`]: then what is logged may wait for the next read;
    /// module docs, "Representations").
    #[inline(always)]
    fn logs_first(self) -> bool {
        !L::APPLY_ALONE && !quiescent_word(self.get().word.logs(Ordering::SeqCst)) && !self.learned_to_apply_alone()
    }

    /// Whether the domain learned that this kind's logs may be applied alone (out of line:
    /// asked only where something is logged).
    #[cold]
    #[inline(never)]
    fn learned_to_apply_alone(self) -> bool {
        self.domain().no_global_absorption()
    }
}

/// The operations the unit tests and the in-crate loom models share.
#[cfg(test)]
mod test_ops {
    /// Adds to a `u64`; its operations commute, so a core's log may be applied alone (and
    /// a miss applied in place).
    pub(super) struct AddAlone(pub(super) u64);

    impl crate::Update for AddAlone {
        type Target = u64;
        const APPLY_ALONE: bool = true;
        fn exec(self, t: &mut u64) {
            *t += self.0;
        }
    }

    /// [`AddAlone`] as a user writes it, with only `exec`: its domain learns at its first
    /// apply that its logs may be applied alone.
    #[cfg(loom)]
    pub(super) struct AddLearned(pub(super) u64);

    #[cfg(loom)]
    impl crate::Update for AddLearned {
        type Target = u64;
        fn exec(self, t: &mut u64) {
            *t += self.0;
        }
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::test_ops::AddLearned;
    use super::*;
    use crate::{Config, Unordered};
    use loom::thread;
    use oplog_lincheck::testkit::loom_model;
    use std::sync::Arc;

    /// A switch to direct on evidence other than a read, of a kind whose domain learned
    /// that its logs may be applied alone, gives up the object's slots only where that
    /// needs no barrier (`Obj::give_up_slots`): racing another thread that
    /// logs an update in its own per-thread slot (owner protocol) and reads, the switch
    /// takes the slots when the other thread's needs no barrier (it has none yet) and
    /// leaves them otherwise; a direct update after it and the reads see every completed
    /// update, once (each adds its own bit).
    #[test]
    fn a_switch_without_a_barrier_races_a_logged_update_and_a_read() {
        // Whether some interleaving gave the slots up (a std atomic: outside the model).
        static GAVE_UP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        static KEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        loom_model("a_switch_without_a_barrier_races_a_logged_update_and_a_read", 3, || {
            let d = Domain::<Unordered<AddLearned>>::new(
                Config::per_thread().max_threads(2).cache_slots(1).representation(Representation::Logged),
            )
            .unwrap();
            let o = Arc::new(OpLog::with_domain(&d, 0));
            o.update(AddLearned(1));
            assert_eq!(o.read(|v| *v), 1);
            assert!(d.no_global_absorption(), "the first object taught the domain");
            let writer = {
                let o = o.clone();
                thread::spawn(move || {
                    o.update(AddLearned(2));
                    let seen = o.read(|v| *v);
                    assert!(seen & 2 == 2, "the writer read {seen} after its update");
                })
            };
            o.update(AddLearned(4));
            {
                let obj = o.obj();
                let mut lock = obj.lock("test");
                let now = obj.get().word.holders(Ordering::Relaxed);
                obj.set_policy(&mut lock, now, true, 0, false);
                let mask = obj.get().word.logs(Ordering::SeqCst) & CORE_BITS;
                let flag = if mask == 0 { &GAVE_UP } else { &KEPT };
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            assert_eq!(o.representation(), Representation::Direct);
            o.update(AddLearned(8));
            let seen = o.read(|v| *v);
            assert!(seen & 13 == 13, "read {seen} after the switch");
            writer.join().unwrap();
            assert_eq!(o.read(|v| *v), 15);
        });
        assert!(GAVE_UP.load(std::sync::atomic::Ordering::Relaxed), "no interleaving gave the slots up");
        assert!(KEPT.load(std::sync::atomic::Ordering::Relaxed), "no interleaving kept the other thread's log");
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
