//! A true per-CPU fast path: entering a per-CPU slot with a Linux restartable sequence
//! (rseq) instead of an atomic read-modify-write.
//!
//! The texts' per-core lock (000 §4.1) costs an uncontended atomic exchange per update,
//! about 5 ns here, most of an update's cost. With rseq the kernel aborts a short
//! instruction sequence if the thread is preempted, migrated or signalled before its final
//! store, so a thread can do "read my CPU number, check the slot of that CPU is free, mark
//! it taken" as if no other thread could run on that CPU in between, with plain loads and
//! one plain store.
//!
//! The slot's `busy` flag ([`OwnerLock`]) becomes a lock that threads on one CPU take through
//! the sequence and release with a plain store (from whatever CPU they run on by then). A
//! remote thread (a synchronizer) uses the slot lock's remote protocol: it sets `req`, runs
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)` (which restarts every sequence in
//! progress and runs a full barrier on every CPU running this process), then waits for
//! `busy` to clear. A sequence that sees `req` does not commit. So either the remote sees
//! the owner's `busy`, or the owner's (re)started sequence sees `req`.
//!
//! A sum needs no lock at all ([`Table::fold`], OpLog's counter): one sequence checks that
//! the calling CPU's slot is neither held nor requested (one 16-bit load of both flags) and
//! publishes the counter (whose log it then holds, [`Fold`]), and commits the add itself
//! (the kernel's per-CPU counters do the same), so an increment makes no store to the
//! slot's flags and never takes the slot (`Counter::inc` 5.5 -> 4.0 ns on one thread here,
//! `hotpath` example).
//!
//! Each sequence's exits (its abort handler, and the branches for a slot it cannot use)
//! live in section `__rseq_failure`, as librseq places them, so that the commit falls
//! through to the code after the sequence with no jump taken; the first attempt's outcome
//! is checked inline and everything but success is out of line ([`Table::fold`],
//! `PerCore::enter_cpu`). With the flags' single load and the published word checked
//! alone, that took a logged counter increment from 2.91 to 2.39 ns per update at one and
//! at two threads (a loop incrementing one counter, pinned, 2-core host, 2026-11-27, five
//! alternated runs each), `oplog-bench counter`'s `oplog-percpu` at two threads from
//! 658–700M to 782–859M increments per second (two alternated runs each), and a push to
//! an unordered log at one thread from 9.55 to 8.58 ns (six alternated runs).
//!
//! Available on x86-64 Linux when glibc registered an rseq area for the thread (glibc 2.35+,
//! published through `__rseq_offset`/`__rseq_size`) and the kernel accepts the membarrier
//! registration; elsewhere per-CPU slots use their spin lock. A thread without an rseq area
//! (cpu field -1) takes the slot through the remote protocol. Never under loom or Miri.
//!
//! **Under the `trace` feature** the tracer cannot see into inline assembly, so the
//! sequence is replaced by a *stand-in* ([`try_enter`]'s traced version) that makes the
//! same memory accesses, each recorded through the tracing primitives: the store of the
//! sequence's descriptor into the thread's rseq area (`rseq.rseq_cs`), the load of the CPU
//! number from it (`rseq.cpu_id`), the load of that CPU's slot address from the table
//! (`PerCore.rseq_table`), the loads of the slot's `busy` and `req` flags and the commit
//! store to `busy` (`Slot.busy`, `Slot.req`). Its atomicity, which the kernel gives the real
//! sequence by restarting it, comes from an unrecorded compare-and-swap on `busy` (a
//! spurious failure of the weak compare-and-swap stands for an abort), so the stand-in is a
//! correct lock for the crate's own tests. It needs no rseq area, only the membarrier the
//! remote side uses: traced builds take this path wherever `membarrier` exists, so the
//! commutativity checker traces the default configuration.

use super::lock::OwnerLock;
use super::{Fold, Slot};
use crate::primitive::Backoff;
#[cfg(percore_rseq)]
use std::sync::OnceLock;

/// glibc's rseq signature on x86 (sysdeps/unix/sysv/linux/x86/bits/rseq.h). The kernel
/// checks that the four bytes before an abort handler hold the registered signature.
#[cfg(percore_rseq)]
const RSEQ_SIG: u32 = 0x5305_3053;

#[cfg(percore_rseq)]
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ: libc::c_long = 1 << 8;

/// Byte offsets of the owner flags within a slot (`Slot` and `OwnerLock` are `repr(C)` with
/// the lock first, and a `CachePadded` puts its value at offset 0).
#[cfg(percore_rseq)]
const BUSY: usize = std::mem::offset_of!(OwnerLock, busy);
#[cfg(percore_rseq)]
const REQ: usize = std::mem::offset_of!(OwnerLock, req);
// The fold checks both flags with one 16-bit load.
#[cfg(percore_rseq)]
const _: () = assert!(REQ == BUSY + 1);

/// Outcome of one attempt to enter the calling CPU's slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Enter {
    /// The slot of this CPU (address given) is now held (its `busy` flag set).
    Entered(usize, *const u8),
    /// Another thread holds the slot of this CPU (preempted inside its update).
    Busy(usize),
    /// A remote thread is taking the slot of this CPU.
    Requested(usize),
    /// Preempted, migrated or signalled before committing: try again.
    Aborted,
    /// This thread has no rseq area, or its CPU is beyond the table.
    Unavailable,
}

/// The slot addresses of a per-CPU `PerCore` for the fast path.
pub(crate) struct Table {
    /// Address of each CPU's first slot; each slot starts with its [`OwnerLock`].
    pub(super) bases: Box<[*const u8]>,
}

// SAFETY: the pointers address slots owned by the `PerCore` that owns the table, which are
// shared between threads exactly like it (slots are Sync); the table is never written
// after construction.
unsafe impl Send for Table {}
// SAFETY: as above.
unsafe impl Sync for Table {}

impl Table {
    /// The table for per-CPU slot arrays starting at `bases` (each slot starting with its
    /// [`OwnerLock`]), if restartable sequences are usable here. The slots must outlive the
    /// table.
    pub(crate) fn new(bases: Box<[*const u8]>) -> Option<Self> {
        offset().map(|_| Table { bases })
    }

    /// One attempt of [`Table::enter`], with any of [`Enter`]'s outcomes.
    #[inline(always)]
    pub(crate) fn try_enter_once(&self, offset: usize) -> Enter {
        // SAFETY: `bases` holds each CPU's first slot of arrays that outlive `self`, and
        // callers keep `offset` inside every array, so each `base + offset` is a live slot.
        unsafe { try_enter(area_offset(), self.bases.as_ptr(), self.bases.len(), offset) }
    }

    /// Tries to enter the slot `offset` bytes past the calling CPU's first slot until the
    /// outcome is [`Enter::Entered`] (the slot's lock held as
    /// [`Taken::Owner`](super::Taken::Owner)), [`Enter::Requested`] (a remote thread holds
    /// the slot or left it in spin mode: the caller decides) or [`Enter::Unavailable`] (a
    /// thread that cannot use the sequence, which must take a slot through the remote
    /// protocol instead). Waits while another thread of this CPU holds the slot.
    #[inline(always)]
    pub(crate) fn enter(&self, offset: usize) -> Enter {
        let mut backoff = Backoff::default();
        loop {
            match self.try_enter_once(offset) {
                // A thread preempted inside its operation on this CPU.
                Enter::Busy(_) => backoff.snooze(),
                Enter::Aborted => {}
                done => return done,
            }
        }
    }
}

impl Table {
    /// Applies a folded update to the calling CPU's slot `offset` bytes past its first slot
    /// in one restartable sequence (see [`try_fold`]): the count once done, `None` if the
    /// slot is held, being taken, or does not hold `key`'s state (the caller then enters
    /// the slot). Retries only when the sequence was aborted.
    ///
    /// # Safety
    /// The table's slots are `Slot<S>`s, and `offset` is a multiple of their padded size
    /// inside every CPU's array.
    #[inline(always)]
    pub(crate) unsafe fn fold<S: Fold>(&self, offset: usize, key: usize, delta: i64) -> Option<u32> {
        // SAFETY: as `enter`; the caller guarantees the slot type.
        match unsafe { try_fold::<S>(area_offset(), self.bases.as_ptr(), self.bases.len(), offset, key, delta) } {
            Folded::Done(count) => Some(count),
            // SAFETY: as this function's.
            other => unsafe { self.fold_again::<S>(other, offset, key, delta) },
        }
    }

    /// [`Table::fold`] after a first attempt that did not commit: out of line and cold, so
    /// that the commit falls through to the caller's next instruction.
    ///
    /// # Safety
    /// As [`Table::fold`].
    #[cold]
    #[inline(never)]
    unsafe fn fold_again<S: Fold>(&self, mut outcome: Folded, offset: usize, key: usize, delta: i64) -> Option<u32> {
        loop {
            match outcome {
                Folded::Done(count) => return Some(count),
                Folded::Declined => return None,
                Folded::Aborted => {
                    // SAFETY: as `fold`.
                    outcome = unsafe {
                        try_fold::<S>(area_offset(), self.bases.as_ptr(), self.bases.len(), offset, key, delta)
                    }
                }
            }
        }
    }
}

/// Outcome of one [`try_fold`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Folded {
    /// Committed, with the state's [`Fold::COUNT`] after the increment.
    Done(u32),
    /// Nothing done: the caller enters the slot.
    Declined,
    /// Preempted, migrated or signalled before committing: try again.
    Aborted,
}

/// The offset of the rseq area from the thread pointer, if the fast path can be used: glibc
/// registered an area ([`ordo::cpu::rseq_offset`]) and the kernel accepts the membarrier
/// registration.
#[cfg(percore_rseq)]
pub(crate) fn offset() -> Option<isize> {
    static OFFSET: OnceLock<Option<isize>> = OnceLock::new();
    *OFFSET.get_or_init(|| {
        let offset = ordo::cpu::rseq_offset()?;
        if !crate::primitive::barrier::init() {
            return None;
        }
        // SAFETY: the registration takes no pointers; it fails on kernels without it.
        let rc = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) };
        if rc != 0 {
            return None;
        }
        crate::primitive::barrier::use_rseq_variant();
        // Before any table exists (tables are built from this answer, which the once-lock
        // publishes), so every reader of `RSEQ_OFFSET` sees it.
        RSEQ_OFFSET.store(offset, std::sync::atomic::Ordering::Relaxed);
        Some(offset)
    })
}

/// [`offset`]'s answer where it is `Some`, set before any table exists.
#[cfg(percore_rseq)]
static RSEQ_OFFSET: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

/// The offset of the calling thread's rseq area, for a sequence on a table (which exists only
/// where [`offset`] found one). Read from a static rather than from the table, so the CPU
/// number's load does not wait for the loads that lead to the table (object, domain,
/// table). The stand-in under tracing has no area: 0.
#[inline(always)]
fn area_offset() -> isize {
    #[cfg(percore_rseq)]
    return RSEQ_OFFSET.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(percore_rseq))]
    return 0;
}

/// Under tracing: `Some(0)` (the stand-in has no rseq area to find) where the remote side's
/// barrier exists ([`barrier::init`](crate::primitive::barrier::init)), so the stand-in is
/// used wherever it is correct, whatever glibc registered.
#[cfg(percore_trace)]
pub(crate) fn offset() -> Option<isize> {
    crate::primitive::barrier::init().then_some(0)
}

/// The start of every sequence here, as `asm!` text: the sequence's descriptor (label 8, in
/// section `__rseq_cs`: it starts at label 2, commits with the instruction before label 3,
/// and aborts to label 4) stored in the thread's rseq area (`{off}` from the thread
/// pointer); then, inside the sequence, the calling CPU's number into `{cpu}` (jumping to
/// label 5 when it is not below `{n}`) and the address of its slot, `{offset}` bytes past
/// `{bases}[cpu]`, into `{tmp}`.
#[cfg(percore_rseq)]
macro_rules! sequence_start {
    () => {
        concat!(
            ".pushsection __rseq_cs, \"aw\"\n",
            ".balign 32\n",
            "8:\n",
            ".long 0, 0\n",
            ".quad 2f, 3f - 2f, 4f\n",
            ".popsection\n",
            "lea {tmp}, [rip + 8b]\n",
            "mov qword ptr fs:[{off} + 8], {tmp}\n",
            "2:\n",
            "mov {cpu:e}, dword ptr fs:[{off} + 4]\n",
            "cmp {cpu}, {n}\n",
            "jae 5f\n",
            "mov {tmp}, qword ptr [{bases} + {cpu} * 8]\n",
            "add {tmp}, {offset}\n",
        )
    };
}

/// The start of a sequence's out-of-line exits, as `asm!` text: switches to section
/// `__rseq_failure` (as librseq does), so that the sequence's commit falls through to its
/// end with no jump taken, and places label 4 there, where the kernel resumes an aborted
/// sequence, preceded by the signature (`{sig}`) it checks in the four bytes before an
/// abort handler. Every exit sets `{st}` and jumps back to label 9 (the end of the asm
/// text), and [`exits_end`] closes the section.
#[cfg(percore_rseq)]
macro_rules! exits_start {
    () => {
        concat!(".pushsection __rseq_failure, \"ax\"\n", ".byte 0x0f, 0xb9, 0x3d\n", ".long {sig}\n", "4:\n")
    };
}

/// The end of a sequence's out-of-line exits ([`exits_start`]) and of its asm text: back
/// to the sequence's own section, at label 9, right after the commit.
#[cfg(percore_rseq)]
macro_rules! exits_end {
    () => {
        concat!(".popsection\n", "9:\n")
    };
}

/// Tries to take the slot at byte offset `slot_offset` of the calling CPU's cache, where
/// `bases[cpu]` is the address of CPU `cpu`'s first slot and `bases` has `ncpus` entries.
///
/// # Safety
/// `rseq_offset` comes from [`offset`]; every `bases[i] + slot_offset` is the address of a
/// live `Slot` that stays alive for the call.
#[cfg(percore_rseq)]
#[inline(always)]
pub(crate) unsafe fn try_enter(rseq_offset: isize, bases: *const *const u8, ncpus: usize, slot_offset: usize) -> Enter {
    let status: u32;
    let cpu: usize;
    let slot: *const u8;
    // SAFETY: the caller guarantees the addresses. The sequence between labels 2 and 3 is
    // registered through a descriptor (label 8, in section __rseq_cs) stored in the thread's
    // rseq area; the kernel resumes at label 4 (preceded by RSEQ_SIG) instead of inside it.
    // The only store inside is the final commit to `busy`.
    unsafe {
        core::arch::asm!(
            "xor {st:e}, {st:e}",
            sequence_start!(),
            "cmp byte ptr [{tmp} + {busy}], 0",
            "jne 6f",
            "cmp byte ptr [{tmp} + {req}], 0",
            "jne 7f",
            "mov byte ptr [{tmp} + {busy}], 1",
            "3:",
            exits_start!(),
            "mov {st:e}, 3",
            "jmp 9f",
            "5:",
            "mov {st:e}, 4",
            "jmp 9f",
            "6:",
            "mov {st:e}, 1",
            "jmp 9f",
            "7:",
            "mov {st:e}, 2",
            "jmp 9f",
            exits_end!(),
            off = in(reg) rseq_offset,
            bases = in(reg) bases,
            n = in(reg) ncpus,
            offset = in(reg) slot_offset,
            cpu = out(reg) cpu,
            tmp = out(reg) slot,
            st = out(reg) status,
            busy = const BUSY,
            req = const REQ,
            sig = const RSEQ_SIG,
            options(nostack),
        );
    }
    match status {
        0 => Enter::Entered(cpu, slot),
        1 => Enter::Busy(cpu),
        2 => Enter::Requested(cpu),
        3 => Enter::Aborted,
        _ => Enter::Unavailable,
    }
}

/// A folded update in one restartable sequence: on the calling CPU's slot at byte offset
/// `slot_offset` (`bases` and `ncpus` as for [`try_enter`]), if its `busy` and `req` flags
/// are clear and its published word equals `key` (the owner of the state's sum, [`Fold`]),
/// increments the state's [`Fold::COUNT`] and adds `delta` to its [`Fold::VALUE`]. The
/// add is the sequence's commit: until it, the kernel aborts the sequence on preemption,
/// migration or a signal, and a remote taker's barrier aborts it too, so the update lands
/// only while no other thread can hold the slot, as if the caller had entered it and
/// released it. (An abort after the count's increment and before the commit lets the
/// retry count the update twice: the count is the policy's and the statistics' measure,
/// not a value anyone reads back exactly.)
///
/// # Safety
/// As [`try_enter`], with every slot a `Slot<S>`.
#[cfg(percore_rseq)]
#[inline(always)]
unsafe fn try_fold<S: Fold>(
    rseq_offset: isize,
    bases: *const *const u8,
    ncpus: usize,
    slot_offset: usize,
    key: usize,
    delta: i64,
) -> Folded {
    // Eight registers, so that a caller with the object's address and the operand live
    // needs none saved: the count reuses the CPU number's register (dead once the slot's
    // address is loaded), and the outcome the slot address's (an address is neither 0 nor
    // 1, which the exits write).
    let slot: usize;
    let count: u64;
    // SAFETY: as `try_enter`. The offsets address the slot's flags, its published word and
    // the `Fold` fields of its state (`Fold`'s contract); the only stores inside the
    // sequence are the count's increment and the final commit.
    unsafe {
        core::arch::asm!(
            sequence_start!(),
            // `busy` and `req` at once (adjacent bytes).
            "cmp word ptr [{tmp} + {busy}], 0",
            "jne 5f",
            "cmp qword ptr [{tmp} + {published}], {key}",
            "jne 5f",
            "mov {cpu:e}, dword ptr [{tmp} + {count}]",
            "inc {cpu:e}",
            "mov dword ptr [{tmp} + {count}], {cpu:e}",
            "add qword ptr [{tmp} + {value}], {delta}",
            "3:",
            exits_start!(),
            "mov {tmp:e}, 1",
            "jmp 9f",
            "5:",
            "xor {tmp:e}, {tmp:e}",
            "jmp 9f",
            exits_end!(),
            off = in(reg) rseq_offset,
            bases = in(reg) bases,
            n = in(reg) ncpus,
            offset = in(reg) slot_offset,
            key = in(reg) key,
            delta = in(reg) delta,
            cpu = out(reg) count,
            tmp = out(reg) slot,
            busy = const BUSY,
            published = const std::mem::offset_of!(Slot<S>, published),
            count = const Slot::<S>::STATE + S::COUNT,
            value = const Slot::<S>::STATE + S::VALUE,
            sig = const RSEQ_SIG,
            options(nostack),
        );
    }
    match slot {
        0 => Folded::Declined,
        1 => Folded::Aborted,
        _ => Folded::Done(count as u32),
    }
}

/// Under tracing: the calling thread's stand-in for its rseq area, whose words the sequence
/// accesses at the real area's offsets (`cpu_id` at 4, `rseq_cs` at 8). Only its address is
/// used (accesses to it are recorded, not made): like the real area it is per thread, so
/// it is never shared between simulated cores.
#[cfg(percore_trace)]
#[repr(C, align(32))]
struct Area([u64; 4]);

#[cfg(percore_trace)]
std::thread_local! {
    static AREA: Area = const { Area([0; 4]) };
}

/// The stand-in for the restartable sequence under tracing (module docs): the same loads and
/// stores as the sequence, recorded, in the same order, with the same outcomes.
///
/// # Safety
/// As the real sequence's: every `bases[i] + slot_offset`, for `i < ncpus`, is the address of
/// a live `Slot` that stays alive for the call (`rseq_offset` is unused).
#[cfg(percore_trace)]
#[inline(always)]
pub(crate) unsafe fn try_enter(rseq_offset: isize, bases: *const *const u8, ncpus: usize, slot_offset: usize) -> Enter {
    let _ = rseq_offset;
    // SAFETY: as this function's.
    let Some((cpu, slot)) = (unsafe { stand_in_slot(bases, ncpus, slot_offset) }) else {
        return Enter::Unavailable;
    };
    // SAFETY: a live slot starts with its `OwnerLock` (`Slot` is `repr(C)` with the lock
    // first, at offset 0 of its `CachePadded`).
    let lock = unsafe { &*slot.cast::<OwnerLock>() };
    match lock.rseq_stand_in() {
        Ok(()) => Enter::Entered(cpu, slot),
        Err(e) => e.outcome(cpu),
    }
}

/// The stand-in sequence's first steps, recorded: the descriptor's store and the CPU
/// number's load in the thread's area, and the load of that CPU's slot address from the
/// table. The CPU and the slot `slot_offset` bytes past its first one, or `None` if the
/// CPU is beyond the table.
///
/// # Safety
/// As [`try_enter`]'s.
#[cfg(percore_trace)]
#[inline(always)]
unsafe fn stand_in_slot(bases: *const *const u8, ncpus: usize, slot_offset: usize) -> Option<(usize, *const u8)> {
    use crate::primitive::trace::{AccessKind, record};
    let area = AREA.with(|a| std::ptr::from_ref(a).cast::<u8>());
    // `mov qword ptr fs:[off + 8], tmp`: the sequence's descriptor into the thread's area.
    record(area.wrapping_add(8), 8, AccessKind::Store, "rseq.rseq_cs");
    // `mov cpu, dword ptr fs:[off + 4]`: the CPU number the kernel keeps there.
    record(area.wrapping_add(4), 4, AccessKind::Load, "rseq.cpu_id");
    let cpu = crate::primitive::current_cpu();
    if cpu >= ncpus {
        return None;
    }
    // SAFETY: `cpu < ncpus`, the length of `bases`.
    let entry = unsafe { bases.add(cpu) };
    // `mov tmp, qword ptr [bases + cpu * 8]`: the slot table.
    record(entry.cast(), std::mem::size_of::<*const u8>(), AccessKind::Load, "PerCore.rseq_table");
    // SAFETY: `entry` is in bounds (above); the caller guarantees that `bases[cpu] +
    // slot_offset` is a live slot.
    Some((cpu, unsafe { (*entry).add(slot_offset) }))
}

/// The stand-in for [`try_fold`]'s sequence under tracing: the same loads and stores,
/// recorded, in the same order (the first steps of [`stand_in_slot`], the loads of `busy`,
/// `req` and the published word, the stores of the count and the sum),
/// with the same outcomes. Exclusion comes from the unrecorded compare-and-swap of
/// [`OwnerLock::rseq_stand_in`], released unrecorded after the commit (the real sequence
/// stores no flag).
///
/// # Safety
/// As [`try_enter`]'s, with every slot a `Slot<S>`.
#[cfg(percore_trace)]
#[inline(always)]
unsafe fn try_fold<S: Fold>(
    rseq_offset: isize,
    bases: *const *const u8,
    ncpus: usize,
    slot_offset: usize,
    key: usize,
    delta: i64,
) -> Folded {
    use crate::primitive::Ordering;
    use crate::primitive::trace::{AccessKind, record};
    let _ = rseq_offset;
    // SAFETY: as this function's.
    let Some((_, slot)) = (unsafe { stand_in_slot(bases, ncpus, slot_offset) }) else {
        return Folded::Declined;
    };
    // SAFETY: the caller guarantees a live `Slot<S>`, which starts with its `OwnerLock`.
    let (lock, slot) = unsafe { (&*slot.cast::<OwnerLock>(), &*slot.cast::<Slot<S>>()) };
    match lock.stand_in_take() {
        Ok(()) => {}
        Err(NotEntered::Aborted) => return Folded::Aborted,
        Err(_) => return Folded::Declined,
    }
    let state = std::ptr::from_ref(slot).cast::<u8>().wrapping_add(Slot::<S>::STATE);
    let field = |offset: usize, size: usize, kind: AccessKind| {
        record(state.wrapping_add(offset), size, kind, "Slot.data");
        state.wrapping_add(offset).cast_mut()
    };
    // `cmp qword ptr [slot + published], key` (recorded by the traced atomic).
    let done = slot.published.load(Ordering::Relaxed) == key;
    let mut pushes = 0;
    if done {
        // SAFETY: the stand-in holds the slot (`busy`), and `Fold`'s contract makes the
        // offsets those of a `u32` and an `i64` of the state.
        unsafe {
            let count = field(S::COUNT, 4, AccessKind::CellWrite).cast::<u32>();
            *count = (*count).wrapping_add(1);
            pushes = *count;
            let value = field(S::VALUE, 8, AccessKind::CellWrite).cast::<i64>();
            *value = (*value).wrapping_add(delta);
        }
    }
    lock.stand_in_release();
    if done { Folded::Done(pushes) } else { Folded::Declined }
}

/// Why the stand-in did not commit ([`OwnerLock::rseq_stand_in`]).
#[cfg(percore_trace)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotEntered {
    /// `busy` was set: [`Enter::Busy`].
    Busy,
    /// `req` was set: [`Enter::Requested`].
    Requested,
    /// The weak compare-and-swap failed spuriously: [`Enter::Aborted`].
    Aborted,
}

#[cfg(percore_trace)]
impl NotEntered {
    fn outcome(self, cpu: usize) -> Enter {
        match self {
            NotEntered::Busy => Enter::Busy(cpu),
            NotEntered::Requested => Enter::Requested(cpu),
            NotEntered::Aborted => Enter::Aborted,
        }
    }
}
