//! Busy work and cycle counts in clock ticks, for experiments stated in cycles (the serial
//! and parallel sections of 001 Appendix A, the cycles per write of 000 Figure 4).
//!
//! The texts count CPU cycles. A user-space program reads the Ordo clock instead: on
//! x86-64 the time-stamp counter (`rdtscp`), which ticks at the CPU's nominal frequency,
//! so a tick is one cycle at that frequency (a core running above or below it does more or
//! fewer real cycles per tick); on aarch64 the generic timer, whose ticks are usually far
//! longer than a cycle; under `ORDO_CLOCK=monotonic` nanoseconds. Results therefore carry
//! their [`unit()`] and also their length in nanoseconds where it matters.
//!
//! [`spin`] waits for a number of ticks by reading the clock in a loop. One read costs
//! tens of ticks (about 18 ns for `rdtscp` here), which bounds its precision: a spin of
//! 400 ticks ends between 400 and about 450.

use ordo::{Clock, Ordo, Source};

/// Spins until `ticks` ticks of `clock` have passed since the call (returns at once for
/// 0). Touches no shared memory.
#[inline]
pub fn spin(clock: &Ordo, ticks: u64) {
    if ticks == 0 {
        return;
    }
    let start = clock.get_time();
    while clock.get_time().wrapping_sub(start) < ticks {}
}

/// The unit of `clock`'s readings: `"tsc-ticks"` (x86-64), `"timer-ticks"` (other
/// hardware clocks) or `"ns"`.
pub fn unit(clock: &Ordo) -> &'static str {
    match clock.source() {
        Source::Hardware if cfg!(target_arch = "x86_64") => "tsc-ticks",
        Source::Hardware => "timer-ticks",
        Source::Monotonic => "ns",
    }
}

/// `ticks` of `clock` in nanoseconds.
pub fn ticks_to_ns(clock: &Ordo, ticks: f64) -> f64 {
    ticks / clock.ticks_per_ns()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn spins_at_least_the_requested_ticks() {
        let clock = Ordo::monotonic();
        assert_eq!(unit(&clock), "ns");
        let started = Instant::now();
        spin(&clock, 2_000_000); // 2 ms of the OS clock
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(2), "{waited:?}");
        let started = Instant::now();
        spin(&clock, 0);
        assert!(started.elapsed() < Duration::from_millis(2));
        assert_eq!(ticks_to_ns(&clock, 400.0), 400.0);
    }
}
