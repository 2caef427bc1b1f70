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
//! * aarch64: `cntvct_el0` between two `isb`s, so the read cannot be satisfied before
//!   earlier instructions complete, nor later ones before it. The generic timer runs at a constant architected rate, so it is
//!   treated as invariant.
//! * elsewhere: no hardware clock; [`crate::Source::Monotonic`] is used instead.

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

/// Reads the hardware clock.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub(crate) fn read() -> u64 {
    let t: u64;
    // SAFETY: `isb` and a read of the virtual counter are available to EL0 on Linux (the
    // kernel enables CNTKCTL_EL1.EL0VCTEN); neither touches memory. No `nomem`: the block
    // is also a compiler barrier.
    unsafe {
        core::arch::asm!("isb", "mrs {t}, cntvct_el0", "isb", t = out(reg) t, options(nostack, preserves_flags));
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
