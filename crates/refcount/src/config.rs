//! Settings shared by the crate's domains, and the error a bad setting gets.

use std::fmt;
use std::time::Duration;

/// Where a thread's increments and decrements go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CoreMode {
    /// One state per CPU (a Refcache delta cache, a sloppy counter's spare references),
    /// chosen by the CPU the thread runs on and locked for the operation, with a Linux
    /// restartable sequence where available (no atomic instruction) and a normally
    /// uncontended spin lock elsewhere; either keeps a thread that migrates in the middle of
    /// an operation correct. The texts' design (002 §8.1, 004 §4.3); memory is fixed per CPU.
    PerCpu,
    /// One state per thread, written by that thread alone with no atomic read-modify-write
    /// and no fence; a reviewer takes it over with a process-wide barrier (`membarrier`).
    /// The fastest updates; memory is per thread that uses the domain (a thread's state is
    /// handed to the next thread when it exits). Where `membarrier` is unavailable (non-Linux,
    /// Miri) the per-thread states are locked like per-CPU ones. The default.
    PerThread,
}

/// Default number of threads a per-thread domain gives their own state at once; further
/// threads share one locked state.
pub const DEFAULT_MAX_THREADS: usize = 1024;

pub(crate) const MAX_CORES: usize = 1 << 16;

/// Why a configuration was rejected. Each variant carries the rejected value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `cpus` is 0 or above 65536.
    Cpus(usize),
    /// `max_threads` is 0 or above 65535.
    MaxThreads(usize),
    /// `cache_entries` is not a power of two from 1 to 2²⁰.
    CacheEntries(usize),
    /// `review_period` is zero.
    ReviewPeriod(Duration),
    /// A sloppy counter's `threshold` is 0 or above 2⁴⁰.
    Threshold(u64),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Cpus(n) => write!(f, "cpus = {n}: expected 1 to {MAX_CORES} per-CPU states"),
            ConfigError::MaxThreads(n) => write!(f, "max_threads = {n}: expected 1 to {} threads", MAX_CORES - 1),
            ConfigError::CacheEntries(n) => {
                write!(
                    f,
                    "cache_entries = {n}: a delta cache needs a power of two from 1 to {MAX_CACHE_ENTRIES} entries"
                )
            }
            ConfigError::ReviewPeriod(d) => {
                write!(f, "review_period = {d:?}: use a positive period, or None to review only when asked")
            }
            ConfigError::Threshold(t) => write!(f, "threshold = {t}: expected 1 to {MAX_THRESHOLD} spare references"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Largest delta cache (entries per core).
pub(crate) const MAX_CACHE_ENTRIES: usize = 1 << 20;

/// Largest sloppy-counter threshold.
pub(crate) const MAX_THRESHOLD: u64 = 1 << 40;

/// How a domain lays out its per-core states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) mode: CoreMode,
    /// Per-CPU domains: the number of states (default: the CPUs the OS may report).
    pub(crate) cpus: Option<usize>,
    /// Per-thread domains: threads with a state of their own.
    pub(crate) max_threads: usize,
}

impl Layout {
    pub(crate) const DEFAULT: Layout =
        Layout { mode: CoreMode::PerThread, cpus: None, max_threads: DEFAULT_MAX_THREADS };

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(n) = self.cpus
            && (n == 0 || n > MAX_CORES)
        {
            return Err(ConfigError::Cpus(n));
        }
        if self.max_threads == 0 || self.max_threads >= MAX_CORES {
            return Err(ConfigError::MaxThreads(self.max_threads));
        }
        Ok(())
    }
}

/// Defines the layout setters (`mode`, `cpus`, `max_threads`) on a config type with a
/// `layout: Layout` field, documented once for both domains.
macro_rules! layout_setters {
    ($ty:ty) => {
        impl $ty {
            /// Per-CPU or per-thread states (default [`CoreMode::PerThread`](crate::CoreMode::PerThread)).
            pub fn mode(mut self, mode: $crate::CoreMode) -> Self {
                self.layout.mode = mode;
                self
            }

            /// Per-CPU domains: the number of per-CPU states (default: the CPUs the OS may
            /// report); CPU `c` uses state `c % n`. 1 to 65536.
            pub fn cpus(mut self, n: usize) -> Self {
                self.layout.cpus = Some(n);
                self
            }

            /// Per-thread domains: how many live threads get a state of their own (default
            /// [`DEFAULT_MAX_THREADS`](crate::DEFAULT_MAX_THREADS)); further threads share one
            /// locked state. 1 to 65535.
            pub fn max_threads(mut self, n: usize) -> Self {
                self.layout.max_threads = n;
                self
            }
        }
    };
}

pub(crate) use layout_setters;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_out_of_range_are_rejected_by_name() {
        let bad = Layout { cpus: Some(0), ..Layout::DEFAULT };
        assert_eq!(bad.validate(), Err(ConfigError::Cpus(0)));
        let bad = Layout { max_threads: 0, ..Layout::DEFAULT };
        let err = bad.validate().unwrap_err();
        assert!(err.to_string().starts_with("max_threads = 0"), "{err}");
        assert!(Layout::DEFAULT.validate().is_ok());
        assert!(ConfigError::ReviewPeriod(Duration::ZERO).to_string().contains("None"));
    }
}
