//! What the RLU test suites share: the clocks every test runs on, and sizes under Miri.
#![allow(dead_code)]

use ordo::{LogicalClock, Ordo, Settings, SourceChoice};

/// Scales a count down under Miri, which runs code thousands of times slower.
pub const fn sized(normal: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { normal }
}

/// The original RLU's clock: one shared counter.
pub fn logical() -> LogicalClock {
    LogicalClock::new()
}

/// RLU-Ordo's clock: the hardware clock with a pinned boundary of 1,000 ticks (no
/// calibration in tests), or the OS clock where there is no invariant hardware clock.
pub fn ordo() -> Ordo {
    Ordo::from_settings(&Settings { source: SourceChoice::Hardware, boundary: Some(1_000), ..Settings::default() })
}

/// Ordo on the OS monotonic clock (nanoseconds) with a wide window of 20 µs: many
/// comparisons come out `Uncertain`, so readers decline to steal and writers wait for
/// readers that a narrow window would let pass.
pub fn wide_window() -> Ordo {
    Ordo::from_settings(&Settings { source: SourceChoice::Monotonic, boundary: Some(20_000), ..Settings::default() })
}
