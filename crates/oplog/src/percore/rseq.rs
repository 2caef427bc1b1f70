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
use crate::primitive::Backoff;
#[cfg(oplog_rseq)]
use std::sync::OnceLock;

/// glibc's rseq signature on x86 (sysdeps/unix/sysv/linux/x86/bits/rseq.h). The kernel
/// checks that the four bytes before an abort handler hold the registered signature.
#[cfg(oplog_rseq)]
const RSEQ_SIG: u32 = 0x5305_3053;

#[cfg(oplog_rseq)]
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ: libc::c_long = 1 << 8;

/// Byte offsets of the owner flags within a slot (`Slot` and `OwnerLock` are `repr(C)` with
/// the lock first, and a `CachePadded` puts its value at offset 0).
#[cfg(oplog_rseq)]
const BUSY: usize = std::mem::offset_of!(OwnerLock, busy);
#[cfg(oplog_rseq)]
const REQ: usize = std::mem::offset_of!(OwnerLock, req);

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
    /// Offset of the rseq area from the thread pointer.
    offset: isize,
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
        offset().map(|offset| Table { offset, bases })
    }

    /// Tries to enter the slot `offset` bytes past the calling CPU's first slot until the
    /// outcome is [`Enter::Entered`] (the slot's lock held as
    /// [`Held::Owner`](super::Held::Owner)), [`Enter::Requested`] (a remote thread holds
    /// the slot or left it in spin mode: the caller decides) or [`Enter::Unavailable`] (a
    /// thread that cannot use the sequence, which must take a slot through the remote
    /// protocol instead). Waits while another thread of this CPU holds the slot.
    #[inline(always)]
    pub(crate) fn enter(&self, offset: usize) -> Enter {
        let mut backoff = Backoff::default();
        loop {
            // SAFETY: `bases` holds each CPU's first slot of arrays that outlive `self`, and
            // callers keep `offset` inside every array, so each `base + offset` is a live slot.
            match unsafe { try_enter(self.offset, self.bases.as_ptr(), self.bases.len(), offset) } {
                // A thread preempted inside its operation on this CPU.
                Enter::Busy(_) => backoff.snooze(),
                Enter::Aborted => {}
                done => return done,
            }
        }
    }
}

/// The offset of the rseq area from the thread pointer, if the fast path can be used: glibc
/// registered an area ([`ordo::cpu::rseq_offset`]) and the kernel accepts the membarrier
/// registration.
#[cfg(oplog_rseq)]
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
        Some(offset)
    })
}

/// Under tracing: `Some(0)` (the stand-in has no rseq area to find) where the remote side's
/// barrier exists ([`barrier::init`](crate::primitive::barrier::init)), so the stand-in is
/// used wherever it is correct, whatever glibc registered.
#[cfg(oplog_trace)]
pub(crate) fn offset() -> Option<isize> {
    crate::primitive::barrier::init().then_some(0)
}

/// Tries to take the slot at byte offset `slot_offset` of the calling CPU's cache, where
/// `bases[cpu]` is the address of CPU `cpu`'s first slot and `bases` has `ncpus` entries.
///
/// # Safety
/// `rseq_offset` comes from [`offset`]; every `bases[i] + slot_offset` is the address of a
/// live `Slot` that stays alive for the call.
#[cfg(oplog_rseq)]
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
            ".pushsection __rseq_cs, \"aw\"",
            ".balign 32",
            "8:",
            ".long 0, 0",
            ".quad 2f, 3f - 2f, 4f",
            ".popsection",
            "lea {tmp}, [rip + 8b]",
            "mov qword ptr fs:[{off} + 8], {tmp}",
            "2:",
            "mov {cpu:e}, dword ptr fs:[{off} + 4]",
            "cmp {cpu}, {n}",
            "jae 5f",
            "mov {tmp}, qword ptr [{bases} + {cpu} * 8]",
            "add {tmp}, {offset}",
            "cmp byte ptr [{tmp} + {busy}], 0",
            "jne 6f",
            "cmp byte ptr [{tmp} + {req}], 0",
            "jne 7f",
            "mov byte ptr [{tmp} + {busy}], 1",
            "3:",
            "xor {st:e}, {st:e}",
            "jmp 9f",
            ".byte 0x0f, 0xb9, 0x3d",
            ".long {sig}",
            "4:",
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
            "9:",
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

/// Under tracing: the calling thread's stand-in for its rseq area, whose words the sequence
/// accesses at the real area's offsets (`cpu_id` at 4, `rseq_cs` at 8). Only its address is
/// used (accesses to it are recorded, not made): like the real area it is per thread, so
/// it is never shared between simulated cores.
#[cfg(oplog_trace)]
#[repr(C, align(32))]
struct Area([u64; 4]);

#[cfg(oplog_trace)]
std::thread_local! {
    static AREA: Area = const { Area([0; 4]) };
}

/// The stand-in for the restartable sequence under tracing (module docs): the same loads and
/// stores as the sequence, recorded, in the same order, with the same outcomes.
///
/// # Safety
/// As the real sequence's: every `bases[i] + slot_offset`, for `i < ncpus`, is the address of
/// a live `Slot` that stays alive for the call (`rseq_offset` is unused).
#[cfg(oplog_trace)]
#[inline(always)]
pub(crate) unsafe fn try_enter(rseq_offset: isize, bases: *const *const u8, ncpus: usize, slot_offset: usize) -> Enter {
    use crate::primitive::trace::{AccessKind, record};
    let _ = rseq_offset;
    let area = AREA.with(|a| std::ptr::from_ref(a).cast::<u8>());
    // `mov qword ptr fs:[off + 8], tmp`: the sequence's descriptor into the thread's area.
    record(area.wrapping_add(8), 8, AccessKind::Store, "rseq.rseq_cs");
    // `mov cpu, dword ptr fs:[off + 4]`: the CPU number the kernel keeps there.
    record(area.wrapping_add(4), 4, AccessKind::Load, "rseq.cpu_id");
    let cpu = crate::primitive::current_cpu();
    if cpu >= ncpus {
        return Enter::Unavailable;
    }
    // SAFETY: `cpu < ncpus`, the length of `bases`.
    let entry = unsafe { bases.add(cpu) };
    // `mov tmp, qword ptr [bases + cpu * 8]`: the slot table.
    record(entry.cast(), std::mem::size_of::<*const u8>(), AccessKind::Load, "PerCore.rseq_table");
    // SAFETY: `entry` is in bounds (above); the caller guarantees that `bases[cpu] +
    // slot_offset` is a live slot, which starts with its `OwnerLock` (`Slot` is `repr(C)`
    // with the lock first, at offset 0 of its `CachePadded`).
    let lock = unsafe { &*(*entry).add(slot_offset).cast::<OwnerLock>() };
    match lock.rseq_stand_in() {
        Ok(()) => Enter::Entered(cpu, std::ptr::from_ref(lock).cast()),
        Err(e) => e.outcome(cpu),
    }
}

/// Why the stand-in did not commit ([`OwnerLock::rseq_stand_in`]).
#[cfg(oplog_trace)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotEntered {
    /// `busy` was set: [`Enter::Busy`].
    Busy,
    /// `req` was set: [`Enter::Requested`].
    Requested,
    /// The weak compare-and-swap failed spuriously: [`Enter::Aborted`].
    Aborted,
}

#[cfg(oplog_trace)]
impl NotEntered {
    fn outcome(self, cpu: usize) -> Enter {
        match self {
            NotEntered::Busy => Enter::Busy(cpu),
            NotEntered::Requested => Enter::Requested(cpu),
            NotEntered::Aborted => Enter::Aborted,
        }
    }
}
