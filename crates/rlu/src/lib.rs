//! Read-log-update (RLU) on a logical clock or on the Ordo clock (003 §4.1, Figure 7).
//!
//! RLU extends RCU to several concurrent writers: readers never wait and never retry; a
//! writer *locks* each object it changes by copying it into its own per-thread write log,
//! changes the copies, and *commits* by advancing a clock. Sections that start after the
//! commit read the writer's copies (they *steal* them); sections that started before keep
//! reading the old values, and the writer waits for them RCU-style (run counters) before it
//! writes the copies back. Two writers of one object conflict: the second aborts and retries.
//!
//! ```
//! use ordo::LogicalClock;
//! use ordo_rlu::Rlu;
//!
//! let rlu = Rlu::new(LogicalClock::new());
//! let (a, b) = (rlu.object(100u64), rlu.object(0u64));
//! std::thread::scope(|s| {
//!     s.spawn(|| {
//!         let mut h = rlu.register().unwrap();
//!         for _ in 0..100 {
//!             // Move one unit from `a` to `b`: both writes appear at once.
//!             h.write(|s| {
//!                 *s.lock(&a)? -= 1;
//!                 *s.lock(&b)? += 1;
//!                 Ok(())
//!             });
//!         }
//!     });
//!     s.spawn(|| {
//!         let mut h = rlu.register().unwrap();
//!         for _ in 0..100 {
//!             // Readers see every transfer whole.
//!             assert_eq!(h.read(|s| s.get(&a) + s.get(&b)), 100);
//!         }
//!     });
//! });
//! assert_eq!(rlu.register().unwrap().read(|s| (*s.get(&a), *s.get(&b))), (0, 100));
//! ```
//!
//! Structures: [`RluList`] (a sorted linked list) and [`RluHashSet`] (a list per bucket),
//! the text's benchmarks (003 §6.4, Figure 11), with [`SetHandle`] for one thread's
//! operations. Build your own with [`Section::alloc`], [`Link`], [`Section::deref`] and
//! [`Section::free`] (the unsafe part: links are raw addresses, as in RCU).
//!
//! # One code, two clocks
//!
//! [`Rlu<C>`] is generic over [`ordo::Clock`]; the difference between the original RLU and
//! the text's RLU-Ordo is only what `C`'s three calls cost:
//!
//! | step (Figure 7) | [`ordo::LogicalClock`] (RLU) | [`ordo::Ordo`] (RLU-Ordo) |
//! |---|---|---|
//! | section start: `local_clock` | `now()`: a load of the shared counter | `now()` = `get_time()`: this core's clock |
//! | steal if the writer's stamp is before the start | `cmp_time(local, stamp) == After`: `local > stamp` | the same: `local > stamp + boundary`; `Uncertain` does not steal |
//! | commit stamp | `now()`, a load | `now()`, this core's clock |
//! | advance past the stamp | `new_time(stamp)`: a CAS of the counter to `max + 1` (the original's `fetch_and_add`) | `new_time(stamp + boundary)`: waits until this core's clock passes `stamp + 2 × boundary` |
//! | quiescence: a reader started after the stamp | `cmp_time(local, stamp) == After` | the same; `Uncertain` waits |
//!
//! The Ordo version therefore writes no shared cache line to obtain a timestamp: its
//! `now()` reads the core's clock (`rdtscp`), and its `new_time` reads it in a loop. The only
//! shared lines RLU-Ordo writes are RLU's own: an object's lock word, the thread's own slot,
//! and, rarely, a committing writer's slot (below).
//!
//! # The protocol
//!
//! Each registered thread has a slot (`ctx` of Figure 7) on its own cache line: a run
//! counter (odd inside a section), the start time of its section (`local_clock`), and its
//! `write_clock` (idle, or the stamp of the commit in progress). An [`RluObject`] carries
//! one word, the pointer to its copy (null when unlocked); the copy names its owner.
//!
//! * **Section entry** (`rlu_reader_lock`): clear `local_clock`, make the run counter odd,
//!   full fence, `local_clock = now()`. **Exit**: make the run counter even.
//! * **Dereference** (`rlu_dereference`, [`Section::get`]): an unlocked object's value; the
//!   section's own copy; or, for an object locked by another thread, that thread's copy if
//!   its `write_clock` is certainly before the section's start, else the object's value.
//! * **Lock** (`rlu_try_lock`, [`Section::lock`]): compare-and-swap the copy pointer from
//!   null to a fresh copy in this thread's log, then clone the value into it. A pointer
//!   owned by another thread is a [`Conflict`]: the section aborts (locks released, copies
//!   and allocations discarded) and runs again.
//! * **Commit** (`rlu_commit_write_log`), after the section's exit: take the stamp, advance
//!   the clock past it, *synchronize* (wait until every section that was running has ended
//!   or started certainly after the stamp), write every copy back, unlock, set
//!   `write_clock` idle, and swap the two write logs: the previous commit's copies are freed
//!   now (the quiescence period just ended), this commit's wait for the next one, because
//!   readers that stole them may still be reading.
//!
//! ## Where this differs from Figure 7, and why
//!
//! Figure 7 is pseudo-code; three of its steps need more care in real code, for both clocks.
//!
//! * **The commit stamp.** A reader steals a writer's copies when the writer's stamp is
//!   before its start, and the synchronize skips readers that started after the stamp. Both
//!   are only right if every reader that started after the stamp also *sees* the stamp in
//!   the writer's slot. Figure 7 stores `write_clock = global_clock + 1` after reading the
//!   counter: if another commit advances the counter in between, a reader can start after
//!   that value, find `write_clock` still idle (reading the old values), and then be skipped
//!   by the synchronize, which writes back under its feet. With Ordo the same happens
//!   whenever the writer is delayed between reading its clock and publishing the stamp.
//!   Here the writer first publishes *pending*, then (after a fence) reads the clock and
//!   installs the reading; a reader that finds *pending* reads its own clock and installs
//!   that instead (one compare-and-swap decides; see [`Stats::helped`]). Either way the stamp
//!   is a reading taken after the pending state was visible, so a reader whose start is
//!   certainly after it started after the pending state too, and sees the stamp on every
//!   dereference.
//! * **Advancing past the stamp before the quiescence.** The synchronize waits only for
//!   sections running when it scans the run counters; later sections must therefore be
//!   certainly after the stamp, or they read the old values while the writer writes back.
//!   The logical clock's advance (`fetch_and_add`, here `new_time(stamp)`) ensures it. Ordo's
//!   Figure 7 stamp `new_time(local_clock + ORDO_BOUNDARY)` does not: a reader starting
//!   right after it can compare `Uncertain`. So the commit calls
//!   `new_time(stamp + boundary)`: once this core's clock passes `stamp + 2 × boundary`,
//!   every core's is past `stamp + boundary`. This is the uncertainty window the Ordo
//!   version waits out, once per commit (the `new_time_calls` of [`Stats`]). Figure 7's
//!   other purpose for `local_clock + ORDO_BOUNDARY`, a stamp above the stamps of the
//!   commits the writer's section saw, holds without it: the section saw a commit only if
//!   its start was certainly after that commit's stamp, and the new stamp, read later, is at
//!   least that start minus the boundary.
//! * **A section's start time is cleared at entry.** Ordo readings of one thread that
//!   migrates between cores need not increase, so a writer must never judge a section by
//!   the start time of the thread's previous section: until the new one is stored, the
//!   writer sees 0 and waits.
//!
//! The clock readings themselves are kept in place by a fence after them (`lfence` on
//! x86-64, `isb` on aarch64): `rdtscp` lets later loads run before the reading.
//!
//! ## Why a writer may copy the value it locked
//!
//! When a section locks an object, the object's value is the one its snapshot sees: a
//! commit that changed the object after the section started would have waited for the
//! section before writing back and unlocking (the section is running and not after the
//! stamp), so the compare-and-swap on the still-locked object would have failed; a commit
//! certainly before the section's start has written back or still holds the lock (again
//! a conflict).
//!
//! # Memory
//!
//! A copy is freed after the quiescence period that follows its unlock (the next commit of
//! the same thread, or the handle's drop); copies of aborted attempts wait the same way
//! (readers may have found them), and a handle that aborts many times in a row waits for a
//! quiescence period itself. An object unlinked by a commit and passed to
//! [`Section::free`] is freed right after that commit's quiescence period: sections that
//! start later cannot reach it. Objects allocated by a section that aborts are freed at
//! once: only its own copies, which no reader reads, linked them.
//!
//! # Panics
//!
//! A panic inside a write section (or in `T::clone` while locking or committing) aborts
//! the section: its locks are released, its copies and allocations discarded; nothing else
//! changes and the handle stays usable. A write section that commits while the same thread
//! holds a section of the same domain open through another handle would wait for itself
//! forever; it is aborted with a panic instead.
//!
//! # Modules
//!
//! | module | what it holds |
//! |---|---|
//! | `domain` | [`Rlu`]: the clock, the thread slots, entry / exit / commit / synchronize / abort |
//! | `handle` | [`Handle`]: a thread's slot and write logs, [`Handle::read`] and [`Handle::write`]; [`Stats`] |
//! | `section` | [`Section`]: `get`, `lock`, `alloc`, `deref`, `free`; [`Conflict`] |
//! | `object` | [`RluObject`], [`Link`], the copies and the type-erased write log |
//! | `set` | [`RluList`], [`RluHashSet`], [`SetHandle`] |
//! | `sync` | the std / loom swap point, the clock fence, backoff |

#![warn(missing_docs)]

mod domain;
mod handle;
mod object;
mod section;
mod set;
mod sync;

pub use domain::{CapacityError, RegisterError, Rlu};
pub use handle::{Handle, Stats};
pub use object::{Link, RluObject, Value};
pub use section::{Conflict, Section};
pub use set::{NoBuckets, RluHashSet, RluList, SetHandle};

/// The crate README's example, compiled and run as a doc test (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
