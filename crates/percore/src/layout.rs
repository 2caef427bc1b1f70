//! Where a [`PerCore`](crate::PerCore)'s cores are and how many there are: the one layout
//! type that the configurations of OpLog domains, Refcache and sloppy-counter domains and
//! the `metrics` recorder build on, validated here once.

use std::fmt;

/// Where per-core state lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoreMode {
    /// One core per CPU, chosen by the CPU the thread runs on and locked for the operation:
    /// with a Linux restartable sequence where available (x86-64, glibc 2.35+; no atomic
    /// instruction), with a normally uncontended spin lock elsewhere. Either keeps a thread
    /// that migrates in the middle of an operation correct. The texts' design (000 §4.1,
    /// 002 §8.1, 004 §4.3); memory is fixed per CPU.
    PerCpu,
    /// One core per thread, entered by its owner thread alone with no atomic
    /// read-modify-write and no fence; a remote thread takes it over with a process-wide
    /// barrier (`membarrier`). Memory is per thread that uses the state (a thread's index
    /// goes to the next thread when it exits; threads beyond `max_threads` share one locked
    /// core). Where `membarrier` is unavailable (non-Linux, Miri) the cores are locked like
    /// per-CPU ones.
    PerThread,
}

/// Default number of threads that get a core of their own in a per-thread layout.
pub const DEFAULT_MAX_THREADS: usize = 1024;

/// Most cores a per-CPU layout may have.
pub const MAX_CPUS: usize = 1 << 16;

/// Most threads a per-thread layout may give a core of their own (the shared core makes
/// the total [`MAX_CPUS`]).
pub const MAX_THREADS: usize = MAX_CPUS - 1;

/// How per-core state is laid out: per CPU or per thread ([`CoreMode`]), and how many
/// cores. Build with [`Layout::per_cpu`] (the default) or [`Layout::per_thread`] and the
/// setters; [`Layout::validate`] says what is out of range.
///
/// ```
/// use oplog_percore::{CoreMode, Layout, LayoutError};
///
/// let layout = Layout::per_thread().max_threads(64);
/// assert_eq!((layout.mode(), layout.cores()), (CoreMode::PerThread, 65));
/// assert_eq!(Layout::per_cpu().cpus(0).validate(), Err(LayoutError::Cpus(0)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    mode: CoreMode,
    cpus: Option<usize>,
    max_threads: usize,
}

impl Default for Layout {
    /// [`Layout::per_cpu`].
    fn default() -> Self {
        Self::per_cpu()
    }
}

impl Layout {
    /// One core per CPU the OS may report ([`CoreMode::PerCpu`]).
    pub const fn per_cpu() -> Self {
        Layout { mode: CoreMode::PerCpu, cpus: None, max_threads: DEFAULT_MAX_THREADS }
    }

    /// One core per thread, for up to [`DEFAULT_MAX_THREADS`] threads at once
    /// ([`CoreMode::PerThread`]).
    pub const fn per_thread() -> Self {
        Layout { mode: CoreMode::PerThread, ..Self::per_cpu() }
    }

    /// The same layout in `mode`.
    pub const fn with_mode(self, mode: CoreMode) -> Self {
        Layout { mode, ..self }
    }

    /// Per-CPU layouts: `n` cores instead of one per CPU the OS may report; CPU `c` uses
    /// core `c % n`. 1 to [`MAX_CPUS`].
    pub const fn cpus(self, n: usize) -> Self {
        Layout { cpus: Some(n), ..self }
    }

    /// Per-thread layouts: how many live threads get a core of their own (default
    /// [`DEFAULT_MAX_THREADS`]); further threads share one locked core. 1 to
    /// [`MAX_THREADS`].
    pub const fn max_threads(self, n: usize) -> Self {
        Layout { max_threads: n, ..self }
    }

    /// Per CPU or per thread.
    pub const fn mode(&self) -> CoreMode {
        self.mode
    }

    /// Per-thread layouts: the threads with a core of their own.
    pub const fn thread_limit(&self) -> usize {
        self.max_threads
    }

    /// Whether the settings are in range: `cpus` (when set) from 1 to [`MAX_CPUS`],
    /// `max_threads` from 1 to [`MAX_THREADS`] (checked in both modes, so that a mode
    /// switched later never meets an unchecked limit).
    ///
    /// # Errors
    /// The first setting out of range, with its value.
    pub const fn validate(&self) -> Result<(), LayoutError> {
        if let Some(n) = self.cpus
            && (n == 0 || n > MAX_CPUS)
        {
            return Err(LayoutError::Cpus(n));
        }
        if self.max_threads == 0 || self.max_threads > MAX_THREADS {
            return Err(LayoutError::MaxThreads(self.max_threads));
        }
        Ok(())
    }

    /// The number of core indices a [`PerCore`](crate::PerCore) of this layout has: the
    /// per-CPU cores (`cpus`, or the CPUs the OS may report), or the per-thread indices
    /// plus the shared one (`max_threads + 1`).
    pub fn cores(&self) -> usize {
        match self.mode {
            CoreMode::PerCpu => self.cpus.unwrap_or_else(ordo::cpu::possible),
            CoreMode::PerThread => self.max_threads + 1,
        }
    }
}

/// Why a [`Layout`] was rejected. Each variant carries the rejected value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// `cpus` is 0 or above [`MAX_CPUS`].
    Cpus(usize),
    /// `max_threads` is 0 or above [`MAX_THREADS`].
    MaxThreads(usize),
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Cpus(n) => write!(f, "cpus = {n}: expected 1 to {MAX_CPUS} per-CPU cores"),
            LayoutError::MaxThreads(n) => write!(f, "max_threads = {n}: expected 1 to {MAX_THREADS} threads"),
        }
    }
}

impl std::error::Error for LayoutError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_out_of_range_are_rejected_by_name() {
        for n in [0, MAX_CPUS + 1] {
            let err = Layout::per_cpu().cpus(n).validate().unwrap_err();
            assert_eq!(err, LayoutError::Cpus(n));
            assert!(err.to_string().starts_with(&format!("cpus = {n}: expected 1 to 65536")), "{err}");
        }
        for n in [0, MAX_THREADS + 1] {
            let err = Layout::per_thread().max_threads(n).validate().unwrap_err();
            assert_eq!(err, LayoutError::MaxThreads(n));
            assert_eq!(err.to_string(), format!("max_threads = {n}: expected 1 to 65535 threads"));
        }
        assert!(Layout::per_cpu().cpus(MAX_CPUS).validate().is_ok());
        assert!(Layout::per_thread().max_threads(MAX_THREADS).validate().is_ok());
        assert_eq!(Layout::default(), Layout::per_cpu());
    }

    #[test]
    fn cores_count_the_shared_thread_index() {
        assert_eq!(Layout::per_cpu().cpus(3).cores(), 3);
        assert_eq!(Layout::per_thread().max_threads(7).cores(), 8);
        assert_eq!(Layout::per_thread().cpus(3).with_mode(CoreMode::PerCpu).cores(), 3);
    }
}
