//! Settings shared by the crate's domains, and the error a bad setting gets.

use oplog_percore::{LayoutError, MAX_CPUS, MAX_THREADS};
use std::fmt;
use std::time::Duration;

pub(crate) use oplog_percore::Layout;
pub use oplog_percore::{CoreMode, DEFAULT_MAX_THREADS};

/// Why a configuration was rejected. Each variant carries the rejected value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `cpus` is 0 or above 65536 ([`LayoutError::Cpus`]).
    Cpus(usize),
    /// `max_threads` is 0 or above 65535 ([`LayoutError::MaxThreads`]).
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
            ConfigError::Cpus(n) => write!(f, "cpus = {n}: expected 1 to {MAX_CPUS} per-CPU states"),
            ConfigError::MaxThreads(n) => write!(f, "max_threads = {n}: expected 1 to {MAX_THREADS} threads"),
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

impl From<LayoutError> for ConfigError {
    fn from(e: LayoutError) -> Self {
        match e {
            LayoutError::Cpus(n) => ConfigError::Cpus(n),
            LayoutError::MaxThreads(n) => ConfigError::MaxThreads(n),
        }
    }
}

/// Largest delta cache (entries per core).
pub(crate) const MAX_CACHE_ENTRIES: usize = 1 << 20;

/// Largest sloppy-counter threshold.
pub(crate) const MAX_THRESHOLD: u64 = 1 << 40;

/// Defines the layout setters (`mode`, `cpus`, `max_threads`) on a config type with a
/// `layout: Layout` field, documented once for both domains.
macro_rules! layout_setters {
    ($ty:ty) => {
        impl $ty {
            /// Per-CPU or per-thread states (default [`CoreMode::PerThread`](crate::CoreMode::PerThread)).
            pub fn mode(mut self, mode: $crate::CoreMode) -> Self {
                self.layout = self.layout.with_mode(mode);
                self
            }

            /// Per-CPU domains: the number of per-CPU states (default: the CPUs the OS may
            /// report); CPU `c` uses state `c % n`. 1 to 65536.
            pub fn cpus(mut self, n: usize) -> Self {
                self.layout = self.layout.cpus(n);
                self
            }

            /// Per-thread domains: how many live threads get a state of their own (default
            /// [`DEFAULT_MAX_THREADS`](crate::DEFAULT_MAX_THREADS)); further threads share one
            /// locked state. 1 to 65535.
            pub fn max_threads(mut self, n: usize) -> Self {
                self.layout = self.layout.max_threads(n);
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
    fn layout_errors_keep_their_names_and_values() {
        let err = ConfigError::from(Layout::per_cpu().cpus(0).validate().unwrap_err());
        assert_eq!(err, ConfigError::Cpus(0));
        assert!(err.to_string().starts_with("cpus = 0: expected 1 to 65536"), "{err}");
        let err = ConfigError::from(Layout::per_thread().max_threads(0).validate().unwrap_err());
        assert!(err.to_string().starts_with("max_threads = 0"), "{err}");
        assert!(ConfigError::ReviewPeriod(Duration::ZERO).to_string().contains("None"));
    }
}
