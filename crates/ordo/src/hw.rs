//! Raw reads of the per-core hardware clock, and detection of whether it is invariant.
//!
//! * x86-64: `rdtscp`. It waits until every earlier instruction has executed and every
//!   earlier load is globally visible before it reads the counter (Intel SDM, RDTSCP), so a
//!   timestamp taken after observing another core's write is read after that write arrived.
//!   Later instructions, though, "may begin execution before the read operation is
//!   performed": an `lfence` after it (the SDM's remedy) keeps every later load after the
//!   reading, which a snapshot's start time needs (RLU's, TL2's, OCC's and MVCC's start,
//!   003 §4). It is issued through `asm!` without `nomem`, so the compiler cannot move memory
//!   operations across it either. The same instruction returns `IA32_TSC_AUX`, which Linux
//!   sets to `node << 12 | cpu`; [`crate::cpu`] validates that before trusting it.
//!   Invariance is CPUID leaf `0x8000_0007`, EDX bit 8 ("invariant TSC": constant rate in
//!   every P-, C- and T-state, 003 §2).
//!   A locked read-modify-write (`lock cmpxchg`, `lock xadd`) is globally visible once it
//!   has executed (locked instructions drain the store buffer and write atomically), so a
//!   reading after one is read after every other core can see it; a *plain* store, though,
//!   may still sit in the store buffer when `rdtscp` reads the counter.
//! * aarch64: `dsb ish; isb; mrs cntvct_el0; isb` (see [the aarch64 reading](#the-aarch64-reading)
//!   for why each instruction is there). The generic timer runs at a constant architected
//!   rate, so it is treated as invariant.
//! * elsewhere: no hardware clock; [`crate::Source::Monotonic`] is used instead.
//!
//! # The aarch64 reading
//!
//! What a reading must order, from its users: a snapshot's start (`now()` in RLU, TL2, OCC
//! and MVCC, 003 §4) must be read before the snapshot's loads, and a reading taken after
//! observing another core's write must be read after that write arrived (the crate's
//! `raw_order_is_causal`, 000 §6.1). Commit protocols add a third: they lock (a CAS on
//! each record's lock word), *then* take the commit timestamp (OCC and TL2, 003 §4.2 and
//! §4.3; `crates/txn`'s `occ.rs`, commit steps 1 and 2), and rely on every core that did not
//! see the lock having loaded the record before that timestamp was read. On x86-64
//! `rdtscp` gives all three for locked read-modify-writes (above). On aarch64 the rules of
//! the Arm Architecture Reference Manual (DDI 0487) are:
//!
//! 1. *Generic Timer*: reads of `CNTVCT_EL0` "can occur speculatively and out of order
//!    relative to other instructions executed on the same PE"; an `ISB` before the read
//!    keeps it after the earlier instructions (the manual's example: a load that obtained a
//!    signal to read the counter), and one after it keeps later instructions, loads
//!    included, from executing before it. That gives the first two requirements.
//! 2. *ISB* is a context synchronization event: it makes later instructions be fetched
//!    after it completes. It does not wait for earlier stores to be observed by other
//!    cores: a store is performed to the memory system after its instruction has executed.
//! 3. *Acquire and release* (`LDAR`, `STLR`, `LDAXR`/`STLXR`, `CASAL`: what Rust's
//!    `compare_exchange` compiles to) order *memory accesses* among themselves. A counter
//!    read is a system-register read, not a memory access, so neither the release nor the
//!    acquire half of a CAS orders it; and nothing in them makes the store observed before
//!    the next instruction executes.
//! 4. *DSB* (Data Synchronization Barrier) completes only when every explicit memory
//!    access before it in program order is complete for its shareability domain (a store:
//!    observed by every observer in the domain), and no instruction after it in program
//!    order executes until it completes.
//!
//! So with `isb; mrs; isb` alone a CAS's store may still be unobserved by the other cores
//! when the counter is read: the commit timestamp `w` is read at some instant, the lock
//! becomes visible later (nothing in the architecture bounds how much later). A reader on
//! another core can read its start `r` in between, certainly after `w` once the delay
//! exceeds the boundary, then load the record, see it unlocked and take its old value
//! (whose version is before `r`); once the writer installs and unlocks with version `w`,
//! the same reader accepts `w`'s new values elsewhere (`w` is before `r`): an inconsistent
//! snapshot, which the x86-64 reading rules out. Hence the `dsb ish` first (rule 4): every
//! earlier load and store, the lock's included, is observed by every core of the Inner
//! Shareable domain (all the cores Linux schedules on) before the counter is read; then
//! `isb; mrs; isb` as rule 1 prescribes (rule 4 alone already keeps the read after the
//! `dsb`; the `isb` costs little beside it and is what the Generic Timer chapter names for
//! ordering a counter read). This is stronger than x86-64's `rdtscp`, since it orders plain
//! stores too, and it costs a wait for the store buffer to drain at every reading; the
//! callers above need only the read-modify-write half, so a cheaper reading for timestamps
//! that follow no lock would be a separate entry point, not this one.

/// Which hardware counter this build can read, if any.
pub(crate) const HARDWARE_NAME: &str = if cfg!(target_arch = "x86_64") {
    "rdtscp"
} else if cfg!(target_arch = "aarch64") {
    "cntvct_el0"
} else {
    "none"
};

/// Reads the hardware clock and the `TSC_AUX` register in one instruction.
///
/// Only meaningful when [`hardware_clock_available`] returned true.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn read_with_aux() -> (u64, u32) {
    let lo: u32;
    let hi: u32;
    let aux: u32;
    // SAFETY: `rdtscp` reads the time-stamp counter and TSC_AUX into eax/edx/ecx and touches
    // no memory; callers only reach it after `hardware_clock_available` confirmed through
    // CPUID that the instruction exists. `lfence` (SSE2, part of every x86-64 CPU) touches no
    // memory either. No `nomem` option: the pair doubles as a compiler barrier.
    unsafe {
        core::arch::asm!("rdtscp", "lfence", out("eax") lo, out("edx") hi, out("ecx") aux,
            options(nostack, preserves_flags));
    }
    ((u64::from(hi) << 32) | u64::from(lo), aux)
}

/// Reads the hardware clock.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn read() -> u64 {
    read_with_aux().0
}

/// Reads the hardware clock once every earlier instruction has executed and every earlier
/// load is globally visible, letting later instructions run before it (`rdtscp` without
/// the `lfence`: [`crate::Clock::stamp`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn read_unfenced() -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: as `read_with_aux`'s `rdtscp`, without the `lfence`: it touches no memory and
    // is only reached once `hardware_clock_available` confirmed the instruction exists.
    // No `nomem`: the compiler does not move memory operations across it.
    unsafe {
        core::arch::asm!("rdtscp", out("eax") lo, out("edx") hi, out("ecx") _, options(nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Reads the hardware clock ([`read`]: no cheaper reading on this target).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn read_unfenced() -> u64 {
    read()
}

/// Reads the hardware clock.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub(crate) fn read() -> u64 {
    let t: u64;
    // SAFETY: `dsb ish`, `isb` and a read of the virtual counter are available to EL0 on
    // Linux (the kernel enables CNTKCTL_EL1.EL0VCTEN); none of them reads or writes memory
    // (the barrier only waits for earlier accesses). No `nomem`: the block is also a
    // compiler barrier. Why each instruction: the module docs, "The aarch64 reading".
    unsafe {
        core::arch::asm!("dsb ish", "isb", "mrs {t}, cntvct_el0", "isb", t = out(reg) t,
            options(nostack, preserves_flags));
    }
    t
}

/// Reads the hardware clock (no hardware clock on this target: the OS monotonic clock).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
pub(crate) fn read() -> u64 {
    monotonic_ns()
}

/// Whether this CPU has a hardware clock we can use (never under Miri, which cannot run the
/// instructions: the OS clock is used instead).
#[cfg(miri)]
pub(crate) fn hardware_clock_available() -> bool {
    false
}

/// Whether this CPU has a hardware clock we can use: present, readable from user space and
/// invariant (constant rate regardless of frequency and sleep states).
#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) fn hardware_clock_available() -> bool {
    let max_ext = cpuid(0x8000_0000).eax;
    if max_ext < 0x8000_0007 {
        return false;
    }
    let has_rdtscp = cpuid(0x8000_0001).edx & (1 << 27) != 0;
    let invariant = cpuid(0x8000_0007).edx & (1 << 8) != 0;
    has_rdtscp && invariant
}

/// `CPUID` leaf `leaf`. `__cpuid` is a safe function in recent Rust and an unsafe one in the
/// oldest the workspace supports (its `rust-version`), hence the block and the allowance.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[allow(unused_unsafe)]
pub(crate) fn cpuid(leaf: u32) -> core::arch::x86_64::CpuidResult {
    // SAFETY: every x86-64 CPU implements CPUID; the instruction only reads.
    unsafe { core::arch::x86_64::__cpuid(leaf) }
}

/// Whether this CPU has a hardware clock we can use (the aarch64 generic timer always is).
#[cfg(all(target_arch = "aarch64", not(miri)))]
pub(crate) fn hardware_clock_available() -> bool {
    true
}

/// Whether this CPU has a hardware clock we can use (none on this target).
#[cfg(all(not(any(target_arch = "x86_64", target_arch = "aarch64")), not(miri)))]
pub(crate) fn hardware_clock_available() -> bool {
    false
}

/// The OS monotonic clock in nanoseconds (`CLOCK_MONOTONIC`, which Linux keeps monotonic
/// across CPUs).
///
/// Under Miri (where it stands in for the hardware clock) the reading is bracketed by
/// `SeqCst` fences. Miri's memory model knows nothing of clocks: without them it lets a load
/// after one thread's reading miss a store another thread made before an earlier reading,
/// which the hardware rules out (`rdtscp` reads after earlier loads and locked
/// read-modify-writes are globally visible, and the `lfence` after it keeps later loads
/// after the reading; see the module docs). Miri orders `SeqCst` fences in the order it
/// executes them, which its clock follows, so the fences give the reading that causality.
/// They are stronger than the hardware in one respect, stated so no test leans on it: a
/// *plain* store before a reading may still sit in an x86 store buffer when the counter is
/// read; only a locked read-modify-write (or a fence) before the reading is ordered.
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    #[cfg(miri)]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    let t = monotonic_ns_unfenced();
    #[cfg(miri)]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    t
}

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline]
fn monotonic_ns_unfenced() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC is supported everywhere
    // this crate builds (Linux, the BSDs, macOS).
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    debug_assert_eq!(rc, 0);
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// Estimates the hardware clock's rate in ticks per nanosecond by reading it and the OS
/// monotonic clock `window_ns` apart.
pub(crate) fn estimate_ticks_per_ns(window_ns: u64) -> f64 {
    let (m0, t0) = (monotonic_ns(), read());
    let mut m1 = m0;
    let mut t1 = t0;
    while m1.saturating_sub(m0) < window_ns {
        core::hint::spin_loop();
        m1 = monotonic_ns();
        t1 = read();
    }
    (t1.wrapping_sub(t0)) as f64 / (m1 - m0) as f64
}
