//! The transaction runner: [`Stm::atomically`] runs a closure as a transaction until an
//! attempt commits, backing off after conflicts and waiting after [`Tx::retry`].

use std::fmt;

use crate::clock::TxClock;
use crate::stats::bump;
use crate::sync::{AtomicU64, Ordering, spin_hint, yield_now};
use crate::tx::{Abort, Cause, Retry, Tx};

/// Ids of [`Stm`]s, process-wide (a plain std counter: no model depends on it).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A software transactional memory: TL2 on the clock `C` (003 §4.3).
///
/// `Stm<LogicalClock>` is the original TL2 with its global version clock;
/// `Stm<Ordo>` is TL2-Ordo. Both run the same code (see the crate docs). Create the
/// variables with [`TVar::new`](crate::TVar::new) and run transactions with
/// [`atomically`](Stm::atomically) from any number of threads.
pub struct Stm<C> {
    clock: C,
    id: u64,
}

impl<C: TxClock> Stm<C> {
    /// A transactional memory timestamped by `clock`.
    pub fn new(clock: C) -> Self {
        Self { clock, id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed) }
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The id that ties variables to this STM.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Runs `f` as a transaction and returns its result once an attempt commits.
    ///
    /// `f` may run several times: after a conflict (an `Err` from [`Tx::read`], passed on
    /// with `?`, or a failed commit) it runs again after a randomized exponential backoff,
    /// and after [`Tx::retry`] once a variable it read has changed. So `f` should have no
    /// effects outside its transaction. Every value an attempt reads comes from one
    /// snapshot, even in an attempt that will abort. Transactions do not nest: an
    /// `atomically` inside `f` is a transaction of its own.
    ///
    /// # Panics
    /// If `f` panics: the attempt is abandoned (nothing it wrote is visible, no lock is
    /// held, other threads' transactions go on) and the panic continues in the caller.
    /// If an attempt retries ([`Tx::retry`]) having read nothing, which no commit could end.
    pub fn atomically<'env, R>(&'env self, mut f: impl FnMut(&mut Tx<'env, C>) -> Result<R, Retry>) -> R {
        match self.run(|tx| f(tx).map_err(Abort::<std::convert::Infallible>::Retry)) {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// Like [`atomically`](Stm::atomically), but `f` may also give up: returning
    /// `Err(Abort::User(e))` discards the attempt (nothing it wrote is applied) and returns
    /// `Err(e)`. Conflicts pass through `?` as [`Abort::Retry`].
    ///
    /// An attempt that gives up after one of its reads failed (an error it did not pass
    /// on) is run again instead, since what it decided on was not a snapshot.
    ///
    /// # Panics
    /// As [`atomically`](Stm::atomically).
    pub fn try_atomically<'env, R, E>(
        &'env self,
        f: impl FnMut(&mut Tx<'env, C>) -> Result<R, Abort<E>>,
    ) -> Result<R, E> {
        self.run(f)
    }

    fn run<'env, R, E>(&'env self, mut f: impl FnMut(&mut Tx<'env, C>) -> Result<R, Abort<E>>) -> Result<R, E> {
        let mut backoff = Backoff::new();
        let mut after = None;
        loop {
            let mut tx = Tx::begin(self, after);
            let outcome = f(&mut tx);
            let cause = match (outcome, tx.failed()) {
                (_, Some(r)) => r.cause,
                (Ok(result), None) => match tx.commit() {
                    Ok(()) => {
                        bump(|c| &c.commits);
                        return Ok(result);
                    }
                    Err(r) => r.cause,
                },
                (Err(Abort::User(e)), None) => {
                    drop(tx);
                    bump(|c| &c.user_aborts);
                    return Err(e);
                }
                (Err(Abort::Retry(r)), None) => r.cause,
            };
            if cause == Cause::Wait {
                bump(|c| &c.retries);
                let reads = tx.into_reads();
                assert!(
                    !reads.is_empty(),
                    "Tx::retry in a transaction that has read no variable: no commit could ever wake it"
                );
                wait_for_change(&reads);
                after = None;
            } else {
                drop(tx);
                bump(|c| &c.aborts);
                if matches!(cause, Cause::Uncertain(_)) {
                    bump(|c| &c.uncertain_aborts);
                }
                after = cause.version();
                // A version within the window is no contention: the next attempt waits it
                // out at its start (`new_time`), and backing off would only add to that.
                if !matches!(cause, Cause::Uncertain(_)) {
                    backoff.snooze();
                }
            }
        }
    }
}

impl<C: TxClock> fmt::Debug for Stm<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stm").field("id", &self.id).field("clock", &self.clock.name()).finish()
    }
}

/// Waits until one of the orecs `reads` no longer holds the word read.
fn wait_for_change(reads: &[(&AtomicU64, u64)]) {
    let mut backoff = Backoff::new();
    while reads.iter().all(|(orec, word)| orec.load(Ordering::Acquire) == *word) {
        backoff.wait();
    }
}

/// Randomized exponential backoff between attempts.
struct Backoff {
    step: u32,
    rng: u64,
}

impl Backoff {
    /// The largest spin is `2^MAX_STEP` hints.
    const MAX_STEP: u32 = 8;

    fn new() -> Self {
        // A per-thread seed: the address of a local differs between threads.
        let here = 0u8;
        let seed = std::ptr::from_ref(&here) as usize as u64;
        Self { step: 0, rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1 }
    }

    /// A xorshift step.
    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// After a conflict: spins a random count below a bound that doubles each time, and
    /// once the bound is at its largest also yields (with more threads than cores, the
    /// transaction in the way may be waiting for this CPU).
    fn snooze(&mut self) {
        if cfg!(loom) {
            yield_now();
            return;
        }
        let bound = 1u64 << self.step.min(Self::MAX_STEP);
        for _ in 0..=self.next() % bound {
            spin_hint();
        }
        if self.step >= Self::MAX_STEP {
            yield_now();
        }
        self.step += 1;
    }

    /// While waiting for a change ([`Tx::retry`]): spins, then yields, then sleeps up to
    /// a millisecond at a time.
    fn wait(&mut self) {
        if cfg!(loom) || self.step < Self::MAX_STEP {
            self.snooze();
        } else if self.step < 2 * Self::MAX_STEP {
            yield_now();
            self.step += 1;
        } else {
            std::thread::sleep(std::time::Duration::from_micros(1 << (self.step - 2 * Self::MAX_STEP).min(10)));
            self.step += 1;
        }
    }
}
