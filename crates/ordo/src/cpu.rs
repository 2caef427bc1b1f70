//! Which CPU a thread runs on, which CPUs the process may use, and pinning.
//!
//! [`current`] picks the cheapest reliable way this machine offers:
//!
//! 1. on x86-64 Linux, where glibc (2.35+) registered a restartable-sequence area for the
//!    thread, the area's `cpu_id` field, which the kernel keeps current on every return to
//!    user space: one load relative to the thread pointer ([`rseq_offset`] finds the area);
//! 2. on x86-64, the `rdpid` instruction (reads `IA32_TSC_AUX`, which Linux sets to
//!    `node << 12 | cpu`) once it has been checked against `sched_getcpu` (about 2.4 ns on
//!    the AMD EPYC development host, where the load of step 1 is a fraction of a
//!    nanosecond);
//! 3. otherwise `sched_getcpu` (a vDSO call, or glibc's own read of the rseq area).
//!
//! The `rdpid` check also tells whether the CPU number that `rdtscp` returns next to the
//! time can be trusted ([`tsc_aux_is_cpu`]).
//!
//! A thread may migrate right after asking, so the answer is a hint for choosing a per-core
//! slot, never a proof of where the next instruction runs: users of it (OpLog's per-core
//! slots) must stay correct when it is stale.

use std::io;
use std::sync::atomic::{AtomicU8, Ordering};

const UNKNOWN: u8 = 0;
const AUX_OK: u8 = 1;
const AUX_BAD: u8 = 2;

/// Whether `TSC_AUX` (read by `rdpid`/`rdtscp`) holds the CPU number: 0 unknown, then
/// `AUX_OK` or `AUX_BAD`. Process-wide and written once, so a plain std atomic.
static AUX_STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Mask of the CPU number within Linux's `TSC_AUX` value (`node << 12 | cpu`).
#[cfg(target_arch = "x86_64")]
pub(crate) const TSC_AUX_CPU_MASK: u32 = 0xfff;

/// The CPU the calling thread is running on (a hint: the thread may migrate at any time).
///
/// Under Miri, which cannot ask the OS, a thread pinned to one CPU ([`pin_current_thread`])
/// is on that CPU, and any other thread is given a fixed pseudo-CPU, spread round-robin over
/// [`possible`], so per-CPU code still sees several CPUs and a pinned thread can migrate.
#[inline]
pub fn current() -> usize {
    #[cfg(miri)]
    {
        use std::sync::atomic::AtomicUsize;
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        std::thread_local! {
            static CPU: usize = NEXT.fetch_add(1, Ordering::Relaxed) % possible();
        }
        return MIRI_PINNED.with(std::cell::Cell::get).unwrap_or_else(|| CPU.with(|c| *c));
    }
    #[cfg(not(miri))]
    current_from_os()
}

#[cfg(miri)]
std::thread_local! {
    /// Under Miri: the CPU this thread was last pinned to, if any (see [`current`]).
    static MIRI_PINNED: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

#[inline(always)]
#[cfg(not(miri))]
fn current_from_os() -> usize {
    // The common case inline: one load, one compare (neither sentinel), the rseq field.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        let offset = RSEQ_CPU_OFFSET.load(Ordering::Relaxed);
        if offset > NO_RSEQ {
            // SAFETY: `offset` is glibc's `__rseq_offset` (see `rseq_offset`; both sentinels
            // are below it): the thread's rseq area lies at that offset from the thread
            // pointer for every thread of the process, for the thread's whole life.
            let cpu = unsafe { rseq_cpu_id(offset) };
            if cpu >= 0 {
                return cpu as usize;
            }
        }
    }
    current_from_os_slow()
}

/// [`current_from_os`] when the rseq area's offset is not known yet, or there is no area
/// for the thread: finds the offset on the first call, then falls back to `TSC_AUX` (when it
/// holds the CPU number) or `sched_getcpu`. Out of line, so that the inline path keeps few
/// registers.
#[cold]
#[inline(never)]
#[cfg(not(miri))]
fn current_from_os_slow() -> usize {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        if RSEQ_CPU_OFFSET.load(Ordering::Relaxed) == UNKNOWN_RSEQ {
            RSEQ_CPU_OFFSET.store(rseq_offset().unwrap_or(NO_RSEQ), Ordering::Relaxed);
            return current_from_os();
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        if AUX_STATE.load(Ordering::Relaxed) == UNKNOWN {
            tsc_aux_is_cpu();
        }
        if AUX_STATE.load(Ordering::Relaxed) == AUX_OK {
            return (read_tsc_aux() & TSC_AUX_CPU_MASK) as usize;
        }
    }
    sched_getcpu()
}

/// [`current`]'s first choice: the offset of the rseq area from the thread pointer, once
/// known ([`UNKNOWN_RSEQ`] before the first call, [`NO_RSEQ`] where there is none).
#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
static RSEQ_CPU_OFFSET: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(UNKNOWN_RSEQ);
#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
const UNKNOWN_RSEQ: isize = isize::MIN;
#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
const NO_RSEQ: isize = isize::MIN + 1;

/// The offset from the thread pointer of the restartable-sequence area glibc registered for
/// every thread (`__rseq_offset`, glibc 2.35+), if it did: `None` where glibc is older, was
/// told not to register (`glibc.pthread.rseq=0`) or the kernel refused (`__rseq_size` is 0
/// then). The area starts with `cpu_id_start` and `cpu_id` (32 bits each), then `rseq_cs`.
/// A thread whose own registration failed reads a negative `cpu_id`.
#[cfg(all(target_os = "linux", not(miri)))]
pub fn rseq_offset() -> Option<isize> {
    static OFFSET: std::sync::OnceLock<Option<isize>> = std::sync::OnceLock::new();
    *OFFSET.get_or_init(|| {
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks a symbol up.
        let size = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr()) };
        // SAFETY: as above.
        let offset = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr()) };
        if size.is_null() || offset.is_null() {
            return None;
        }
        // SAFETY: glibc defines `__rseq_size` as `const unsigned int` and `__rseq_offset` as
        // `const ptrdiff_t`, set before main runs and never changed.
        let (size, offset) = unsafe { (*size.cast::<u32>(), *offset.cast::<isize>()) };
        // 20 bytes (glibc 2.35+) cover cpu_id_start, cpu_id, rseq_cs and flags.
        (size >= 20).then_some(offset)
    })
}

/// The `cpu_id` field of the calling thread's rseq area: its CPU, or a negative value if
/// the thread has no registered area.
///
/// # Safety
/// `offset` is [`rseq_offset`]'s answer.
#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
#[inline(always)]
unsafe fn rseq_cpu_id(offset: isize) -> i32 {
    let cpu: i32;
    // SAFETY: the caller passes glibc's `__rseq_offset`, so `fs:[offset + 4]` is the `cpu_id`
    // field of this thread's rseq area, which lives as long as the thread; a plain 32-bit
    // load the kernel keeps current (it rewrites the field before returning to user space
    // on another CPU).
    unsafe {
        core::arch::asm!("mov {cpu:e}, dword ptr fs:[{off} + 4]", off = in(reg) offset, cpu = out(reg) cpu,
            options(nostack, readonly, preserves_flags));
    }
    cpu
}

/// Whether the CPU number the hardware reports next to each timestamp (`TSC_AUX`) is the
/// OS's CPU number on this machine. Checked once against `sched_getcpu` and cached.
pub fn tsc_aux_is_cpu() -> bool {
    match AUX_STATE.load(Ordering::Relaxed) {
        AUX_OK => return true,
        AUX_BAD => return false,
        _ => {}
    }
    let ok = check_tsc_aux();
    AUX_STATE.store(if ok { AUX_OK } else { AUX_BAD }, Ordering::Relaxed);
    ok
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
fn check_tsc_aux() -> bool {
    if !crate::hw::hardware_clock_available() {
        return false;
    }
    let has_rdpid = crate::hw::cpuid(7).ecx & (1 << 22) != 0;
    if !has_rdpid {
        return false;
    }
    // Compare with sched_getcpu, discarding samples where the thread moved in between.
    let mut agreed = 0;
    for _ in 0..64 {
        let before = sched_getcpu();
        let aux = (read_tsc_aux() & TSC_AUX_CPU_MASK) as usize;
        let after = sched_getcpu();
        if before != after {
            continue;
        }
        if aux != before {
            return false;
        }
        agreed += 1;
    }
    agreed > 0
}

#[cfg(any(not(target_arch = "x86_64"), miri))]
fn check_tsc_aux() -> bool {
    false
}

/// Reads `IA32_TSC_AUX` with `rdpid`. Only called once [`check_tsc_aux`] saw the CPUID bit.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
fn read_tsc_aux() -> u32 {
    let aux: u64;
    // SAFETY: only reached after CPUID leaf 7 reported RDPID (AUX_STATE is AUX_OK only then,
    // and check_tsc_aux executes it only after seeing the bit); it reads a register into
    // `aux` and touches no memory.
    unsafe {
        core::arch::asm!("rdpid {}", out(reg) aux, options(nostack, nomem, preserves_flags));
    }
    aux as u32
}

/// `sched_getcpu`, or 0 where the OS cannot tell.
#[inline]
pub fn sched_getcpu() -> usize {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu has no preconditions; it returns -1 on failure.
        let c = unsafe { libc::sched_getcpu() };
        if c >= 0 {
            return c as usize;
        }
    }
    0
}

/// Number of CPUs the OS may ever report (configured CPUs, at least 1): every value
/// [`current`] returns is below it except on hot-plug, which callers must tolerate.
pub fn possible() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n > 0 { n as usize } else { 1 }
}

/// The CPUs in the calling thread's affinity mask, ascending. Where affinity is not
/// supported, `0..available_parallelism`.
pub fn allowed() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid, writable cpu_set_t of the size we pass; pid 0 is the
        // calling thread.
        let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc == 0 {
            let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
            // SAFETY: CPU_ISSET only reads `set`, and every index is below CPU_SETSIZE.
            let cpus: Vec<usize> = (0..max).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n).collect()
}

/// Pins the calling thread to `cpu`.
///
/// # Errors
/// The OS error when the CPU does not exist or is outside the allowed set, or
/// `Unsupported` where the OS has no thread affinity.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("CPU {cpu} is beyond CPU_SETSIZE")));
        }
        // SAFETY: a zeroed cpu_set_t is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu` < CPU_SETSIZE (checked above), so CPU_SET writes inside `set`.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: `set` is a valid cpu_set_t of the size we pass; pid 0 is this thread.
        let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        #[cfg(miri)]
        MIRI_PINNED.with(|p| p.set(Some(cpu)));
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        Err(io::Error::new(io::ErrorKind::Unsupported, "thread affinity is only implemented on Linux"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot pin threads or ask the OS for the CPU")]
    fn current_is_a_possible_cpu_and_matches_pinning() {
        let allowed = allowed();
        assert!(!allowed.is_empty());
        for &cpu in &allowed {
            let seen = std::thread::spawn(move || {
                pin_current_thread(cpu).expect("pinning to an allowed CPU");
                (current(), sched_getcpu())
            })
            .join()
            .unwrap();
            assert_eq!(seen, (cpu, cpu), "pinned to CPU {cpu}");
            assert!(cpu < possible());
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot pin threads")]
    fn pinning_to_a_nonexistent_cpu_fails() {
        let err = std::thread::spawn(|| pin_current_thread(100_000)).join().unwrap();
        assert!(err.is_err());
    }
}
