//! The internal instance of the OpLog versions: the unchanged sequential type, plus
//! counters of what the synchronizes did to it.
//!
//! The counters are written only while a synchronize holds the object lock (never on the
//! update path), and let tests prove that absorption happened: updates issued minus
//! updates executed minus updates absorbed during synchronize is what local absorption
//! cancelled.

use std::cell::Cell;

/// A sequential instance and its counters.
#[derive(Debug, Default)]
pub struct Applied<T> {
    /// The sequential type (the "internal instance" of 000 §4.1).
    pub inner: T,
    executed: u64,
    /// A `Cell` because global absorption sees the instance by shared reference; the
    /// instance is only ever touched under the object lock.
    absorbed_globally: Cell<u64>,
}

/// What an OpLog version's instance has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Updates executed on the sequential instance.
    pub executed: u64,
    /// Updates cancelled by global absorption during synchronize.
    pub absorbed_globally: u64,
}

impl<T> Applied<T> {
    /// Wraps `inner` with zeroed counters.
    pub fn new(inner: T) -> Self {
        Self { inner, executed: 0, absorbed_globally: Cell::new(0) }
    }

    /// Counts one executed update (call from `Update::exec`).
    #[inline]
    pub fn count_executed(&mut self) {
        self.executed += 1;
    }

    /// Counts `n` updates cancelled by global absorption (call from `Update::absorb_global`).
    #[inline]
    pub fn count_absorbed_globally(&self, n: u64) {
        self.absorbed_globally.set(self.absorbed_globally.get() + n);
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        Stats { executed: self.executed, absorbed_globally: self.absorbed_globally.get() }
    }
}
