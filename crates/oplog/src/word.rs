//! An object's word: its lock, its representation and adaptive policy, and where its
//! operations are logged (the `object` module docs, "The object's word").
//!
//! The word is two 32-bit halves, written by different parties:
//!
//! * the *holder* half ([`HOLDERS`]): the object lock, the representation, the read bias,
//!   the last sampled direct updater's tag, the adaptive policy's score, a coarse time
//!   stamp and whether the restart it records came soon after the one before
//!   ([`HOT_ONCE`]). Only the compare-and-swap that takes the lock and the lock's holder
//!   change it, so the holder unlocks with a plain store of what it decided
//!   ([`Word::unlock`]): a direct update or a read through
//!   the lock costs one atomic read-modify-write, where a mutex costs two (its unlock must
//!   learn whether a thread sleeps). Measured on one thread updating `read-mix`'s table
//!   in place (2-core host, 2026-11-26): 5.5 ns per update with the unlock an exclusive or
//!   of the whole word, 4.4 ns with a store, against 4.3 ns for a `std` mutex.
//! * the *log* half: the core mask (bit `c % 31` set: core `c` may own a log-cache slot
//!   for the object) and [`BACKLOG`] (the object has a backlog, kept by `crate::backlog`).
//!   Updaters and evictors set its bits without the lock. The lock's holder clears them;
//!   so does an evictor, for the core whose slot it holds, but only once the log it took
//!   out is in the backlog, with [`BACKLOG`] set, or applied, or folded into the object
//!   while no read of it was under way (`object`'s `eviction`). So a holder that loads the
//!   half after taking the lock sees every log made before, and the half cannot turn
//!   quiescent while it holds the lock.
//!
//! Code that needs both halves reads them as one `u64` value ([`Word::load`]: the holder
//! half above the log half; two loads), in which the bit constants below are defined, so
//! that a value can be tested for the lock and for logs at once.

use crate::primitive::{AtomicU32, Ordering};

/// Bit 63 of an object's word: the object lock.
pub(crate) const LOCK: u64 = 1 << 63;
/// Bit 62: the object is in the direct representation (`object` docs, "Representations").
pub(crate) const DIRECT: u64 = 1 << 62;
/// Bit 61: reads may take the concurrent path (`object` docs, "Concurrent reads"); every
/// lock acquisition then waits for the readers in the domain's table and clears it.
pub(crate) const BIAS: u64 = 1 << 61;
/// Bits 53..59: the adaptive policy's score (`object` docs, "Representations").
pub(crate) const SCORE_SHIFT: u32 = 53;
/// The score's largest value.
pub(crate) const SCORE_MAX: u64 = 0x3f;
/// The score's bits.
pub(crate) const SCORE: u64 = SCORE_MAX << SCORE_SHIFT;
/// Bits 59..61: the tag of the thread that made the last sampled direct update, or the
/// first since a read (`object`'s `thread_tag`), or 0 if a read came after it.
pub(crate) const TAG_SHIFT: u32 = 59;
/// The tag's bits.
pub(crate) const TAG: u64 = 0b11 << TAG_SHIFT;
/// Bits 32..52: when a direct object's count of changes of updater last restarted
/// because its domain's hot objects outgrew the log cache (`object`'s `back_to_logged`),
/// in units of [`STAMP_UNIT_NS`] modulo the field's span; 0 if it did not.
pub(crate) const STAMP_SHIFT: u32 = 32;
/// The stamp's bits.
pub(crate) const STAMP: u64 = ((1 << 20) - 1) << STAMP_SHIFT;
/// Bit 52: the last restart the stamp records came within the window of the one before
/// it (`object`'s `back_to_logged`): a direct object goes back to logged at the next one
/// that does, so that it takes three fills of its count in a row, each soon after the
/// last.
pub(crate) const HOT_ONCE: u64 = 1 << 52;
/// The record of a direct object's last restart: its [`STAMP`] and [`HOT_ONCE`], kept and
/// cleared together.
pub(crate) const RESTART: u64 = STAMP | HOT_ONCE;
/// Nanoseconds per unit of [`STAMP`]: about a microsecond, so the field spans about a
/// second.
pub(crate) const STAMP_UNIT_NS: u32 = 1024;
/// The holder half: the bits only the lock's holder changes.
// Used by the assertion below only, which the crate's oldest supported toolchain
// (`rust-version`, built by `.ci/run`) does not count as a use.
#[allow(dead_code)]
pub(crate) const HOLDERS: u64 = LOCK | DIRECT | SCORE | TAG | BIAS | RESTART;
/// Bits 0..31 of the log half: core `c` may own a slot for the object if bit `c % 31` is
/// set.
pub(crate) const CORE_BIT_COUNT: usize = 31;
/// The core mask's bits.
pub(crate) const CORE_BITS: u64 = (1 << CORE_BIT_COUNT) - 1;
/// Bit 31: the object has an entry in its domain's backlog table (`crate::backlog`), set
/// when the entry is made and cleared when it is taken, both under the table shard's lock.
pub(crate) const BACKLOG: u64 = 1 << CORE_BIT_COUNT;
const _: () = assert!(HOLDERS >> 32 << 32 == HOLDERS && (CORE_BITS | BACKLOG) == u32::MAX as u64);

/// The mask bit of core `core`.
#[inline(always)]
pub(crate) fn core_bit(core: usize) -> u64 {
    1 << (core % CORE_BIT_COUNT)
}

/// Whether a value of the word says that nothing is logged for its object: no core may
/// hold a log and there is no backlog.
#[inline(always)]
pub(crate) fn quiescent_word(word: u64) -> bool {
    word & (CORE_BITS | BACKLOG) == 0
}

/// An object's word (module docs).
pub(crate) struct Word {
    /// The holder half ([`HOLDERS`] shifted down by 32).
    holders: AtomicU32,
    /// The log half ([`CORE_BITS`] and [`BACKLOG`]).
    logs: AtomicU32,
}

/// Whether this CPU has `prefetchw` (CPUID leaf `0x8000_0001`, ECX bit 8: AMD since the
/// K8, Intel since Broadwell), which [`Word::prefetch_for_write`] needs. (A CPUID
/// instruction: asked once per domain, never on an update.)
pub(crate) fn prefetchw_supported() -> bool {
    #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
    {
        // SAFETY: every x86-64 CPU has CPUID and its extended leaves up to 0x8000_0001.
        #[allow(unused_unsafe)]
        let ecx = unsafe { core::arch::x86_64::__cpuid(0x8000_0001) }.ecx;
        ecx & (1 << 8) != 0
    }
    #[cfg(not(all(target_arch = "x86_64", not(loom), not(miri))))]
    false
}

/// The holder half of a value of the word.
#[inline(always)]
fn high(value: u64) -> u32 {
    (value >> 32) as u32
}

impl Word {
    /// A word whose holder half is that of `value`, with nothing logged.
    pub(crate) fn new(value: u64) -> Self {
        // Both halves under the one name the tracer's reports use for the word.
        Word { holders: AtomicU32::new(high(value), "OpLog.word"), logs: AtomicU32::new(0, "OpLog.word") }
    }

    /// Asks the CPU to bring the word's line into this core's cache for writing, before a
    /// load that would bring it in shared and a compare-and-swap that would then fetch it
    /// again, exclusive: two transfers of a line that another core wrote last, where one
    /// does (x86-64 `prefetchw`; nothing elsewhere). Only a hint: it changes no value, and
    /// a line it takes from another core's cache is one that core must fetch back to
    /// read, so it is for words that are about to be written (`solo`).
    ///
    /// # Safety
    /// [`prefetchw_supported`] said true.
    #[inline(always)]
    pub(crate) unsafe fn prefetch_for_write(&self) {
        // SAFETY: the CPU has `prefetchw` (the caller's contract). A prefetch reads and
        // writes nothing architecturally and cannot fault, whatever the address.
        #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
        unsafe {
            core::arch::asm!("prefetchw [{}]", in(reg) std::ptr::from_ref(self), options(nostack, preserves_flags, readonly));
        }
    }

    /// Both halves (the holder half first).
    #[inline(always)]
    pub(crate) fn load(&self, order: Ordering) -> u64 {
        self.holders(order) | self.logs(order)
    }

    /// The holder half (the log half's bits 0).
    #[inline(always)]
    pub(crate) fn holders(&self, order: Ordering) -> u64 {
        u64::from(self.holders.load(order)) << 32
    }

    /// The log half (the holder half's bits 0).
    #[inline(always)]
    pub(crate) fn logs(&self, order: Ordering) -> u64 {
        u64::from(self.logs.load(order))
    }

    /// Sets the holder half to that of `new` if it is that of `seen`; `Err` gives the
    /// holder half found. Used to take the lock (`new` has [`LOCK`], `seen` not), with a
    /// sequentially consistent `success`: the lock is the holder's half of a Dekker
    /// handshake with an evictor that folds a log into the object without it and then
    /// checks the lock (`object`'s `eviction`), so a holder's later loads of the instance
    /// must not pass it (on x86-64 the same instruction as an acquire).
    #[inline(always)]
    pub(crate) fn take(&self, seen: u64, new: u64, success: Ordering) -> Result<(), u64> {
        self.holders
            .compare_exchange(high(seen), high(new), success, Ordering::Relaxed)
            .map(drop)
            .map_err(|now| u64::from(now) << 32)
    }

    /// Unlocks, leaving the holder half of `want` (its [`LOCK`] bit ignored), where the
    /// holder half was `before` while locked. Only the lock's holder may call it: nobody
    /// else writes the half meanwhile. A release store; sequentially consistent if it sets
    /// [`BIAS`], which lets readers in without the lock: they acquire what the holder wrote
    /// by loading the word (`object` docs, "Concurrent reads"). (Orderings picked by
    /// branches, not by a value: an ordering known only at run time compiles to a jump
    /// table.)
    #[inline(always)]
    pub(crate) fn unlock(&self, before: u64, want: u64) {
        let half = high(want & !LOCK);
        if want & !before & BIAS != 0 {
            self.holders.store(half, Ordering::SeqCst);
        } else {
            self.holders.store(half, Ordering::Release);
        }
    }

    /// Clears holder bits `bits`; only the lock's holder may call it.
    #[inline(always)]
    pub(crate) fn clear_holders(&self, bits: u64, order: Ordering) {
        self.holders.fetch_and(!high(bits), order);
    }

    /// Sets log bits `bits` (no lock needed). Sequentially consistent: a synchronize that
    /// does not see a bit cannot have missed what was logged before it was set.
    #[inline(always)]
    pub(crate) fn set_logs(&self, bits: u64) {
        self.logs.fetch_or(bits as u32, Ordering::SeqCst);
    }

    /// Clears log bits `bits`; only the lock's holder, or an evictor that holds the
    /// object's slot for the core of the bit, may call it (`object`'s `install`).
    #[inline(always)]
    pub(crate) fn clear_logs(&self, bits: u64) {
        self.logs.fetch_and(!(bits as u32), Ordering::SeqCst);
    }
}

/// Core indices below `cores` whose mask bit is set in `bits` (core `c` has bit
/// `c % CORE_BIT_COUNT`), bit by bit: only the cores a set bit names are visited.
pub(crate) fn cores_of(bits: u64, cores: usize) -> CoresOf {
    CoresOf { rest: bits & CORE_BITS, next: cores, cores }
}

/// The iterator of [`cores_of`]: a plain loop, since it runs on every synchronize and
/// direct update.
pub(crate) struct CoresOf {
    /// Bits not visited yet.
    rest: u64,
    /// The next core of the bit being visited (`cores` or more: take the next bit).
    next: usize,
    cores: usize,
}

impl Iterator for CoresOf {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.next >= self.cores {
            if self.rest == 0 {
                return None;
            }
            self.next = self.rest.trailing_zeros() as usize;
            self.rest &= self.rest - 1;
        }
        let core = self.next;
        self.next += CORE_BIT_COUNT;
        Some(core)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_halves_keep_their_bits_apart() {
        let w = Word::new(DIRECT | LOCK | 5);
        assert_eq!(w.load(Ordering::Relaxed), DIRECT | LOCK, "the log half starts empty");
        w.set_logs(core_bit(3) | BACKLOG);
        assert_eq!(w.load(Ordering::Relaxed), DIRECT | LOCK | (1 << 3) | BACKLOG);
        assert_eq!(w.take(DIRECT, DIRECT | LOCK, Ordering::Acquire), Err(DIRECT | LOCK), "taken: fails");
        w.unlock(DIRECT | LOCK, DIRECT | BIAS | LOCK);
        assert_eq!(w.holders(Ordering::Relaxed), DIRECT | BIAS, "the unlock leaves the lock bit clear");
        assert_eq!(w.take(DIRECT | BIAS, DIRECT | LOCK, Ordering::Acquire), Ok(()));
        w.clear_logs(core_bit(34));
        assert_eq!(w.logs(Ordering::Relaxed), BACKLOG, "core 34 shares core 3's bit");
        w.clear_holders(LOCK, Ordering::Release);
        assert!(!quiescent_word(w.load(Ordering::Relaxed)));
        w.clear_logs(BACKLOG);
        assert!(quiescent_word(w.load(Ordering::Relaxed)));
    }

    #[test]
    fn cores_of_visits_every_core_of_a_bit() {
        let v: Vec<_> = cores_of(core_bit(1) | core_bit(5), 40).collect();
        assert_eq!(v, [1, 32, 5, 36]);
        assert_eq!(cores_of(BACKLOG | LOCK, 40).count(), 0, "only mask bits name cores");
    }
}
