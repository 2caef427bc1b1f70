//! The Markov model of a ticket spin lock (001 Appendix A.4): predicted speedup of a
//! lock-protected workload on `n` cores.
//!
//! **The chain** (001 Figure A-4). State `k` (0..=n) is the number of cores holding or
//! waiting for the lock. Parameters, all in the same time unit (clock ticks here):
//!
//! - `a`: the average time between consecutive lock acquisitions on one core without
//!   contention; a core outside the queue arrives at rate `1/a`, so from state `k` the
//!   arrival rate is `a_k = (n − k)/a`;
//! - `s`: the time spent in the serial section;
//! - `c`: the time the cache line's home directory takes to answer one request. A
//!   hand-off with `k` requests outstanding delays the next holder by `c·k/2` on average.
//!
//! **Steady state** (balance `P_k · a_k = P_{k+1} · s_k`), equation (A.1):
//!
//! ```text
//!            (1 / (a^k (n−k)!)) · Π_{i=1..k} (s + i·c)
//! P_k = ─────────────────────────────────────────────────────
//!        Σ_{i=0..n} (1 / (a^i (n−i)!)) · Π_{j=1..i} (s + j·c)
//! ```
//!
//! **Speedup** (A.4): `w = Σ i·P_i` cores wait or hold on average, so `n − w` do useful
//! work. 001 A.2 defines measured speedup as throughput on n cores over throughput on one;
//! with throughput proportional to `n − w`, the model's speedup on the same definition is
//! `(n − w_n) / (1 − w_1)` ([`Model::speedup`]); [`Model::busy_cores`] is `n − w` itself.
//!
//! **A discrepancy in the text, and what is implemented.** The text states the service
//! rate as `s_k = 1/(s + c·k/2)`. Substituted into the balance equation, that gives
//! `P_k ∝ n!/(a^k (n−k)!) · Π_{i=0..k−1} (s + i·c/2)`, not (A.1): (A.1) follows from
//! `s_k = 1/(s + (k+1)·c)`, a hand-off in state `k+1` costing `c` per contender rather than
//! `c/2` per waiter. This module implements (A.1) exactly as printed, since it is the
//! closed form the appendix validates against measurements (Figures A-5, A-6). With this
//! reading `c` is the cost of one line transfer per contender; the experiment measures it
//! on this machine ([`super::super::contention::transfer_ticks`]).
//!
//! The products overflow `f64` for many cores, so the weights are computed as logarithms,
//! shifted by their maximum, then exponentiated (the normalization cancels the shift).

/// The model's parameters (one time unit throughout).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// `a`: time between consecutive acquisitions on one core without contention.
    pub a: f64,
    /// `s`: time in the serial section.
    pub s: f64,
    /// `c`: time for the home directory to answer one cache line request.
    pub c: f64,
}

impl Model {
    /// The model of a loop spending `parallel` outside and `serial` inside the lock, with
    /// line transfers costing `transfer`: `a = parallel + serial` (an uncontended core
    /// acquires once per iteration), `s = serial`, `c = transfer`.
    pub fn for_loop(parallel: f64, serial: f64, transfer: f64) -> Self {
        Self { a: parallel + serial, s: serial, c: transfer }
    }

    /// `P_0..=P_n` on `n` cores, equation (A.1). Panics unless `a > 0`, `s ≥ 0`, `c ≥ 0`.
    pub fn steady_state(&self, n: usize) -> Vec<f64> {
        assert!(self.a > 0.0 && self.s >= 0.0 && self.c >= 0.0, "invalid model parameters {self:?}");
        // ln of the numerator of (A.1) for each k: −k·ln a − ln (n−k)! + Σ_{i=1..k} ln(s + i·c).
        let ln_factorial = |m: usize| (2..=m).map(|i| (i as f64).ln()).sum::<f64>();
        let mut ln_product = 0.0;
        let ln_weights: Vec<f64> = (0..=n)
            .map(|k| {
                if k > 0 {
                    ln_product += (self.s + k as f64 * self.c).ln();
                }
                ln_product - k as f64 * self.a.ln() - ln_factorial(n - k)
            })
            .collect();
        let max = ln_weights.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = ln_weights.iter().map(|w| (w - max).exp()).collect();
        let total: f64 = weights.iter().sum();
        weights.iter().map(|w| w / total).collect()
    }

    /// `w`: the expected number of cores holding or waiting for the lock on `n` cores.
    pub fn waiting(&self, n: usize) -> f64 {
        self.steady_state(n).iter().enumerate().map(|(i, p)| i as f64 * p).sum()
    }

    /// `n − w`: cores doing useful work on average (001 A.4's "speedup").
    pub fn busy_cores(&self, n: usize) -> f64 {
        n as f64 - self.waiting(n)
    }

    /// Speedup on `n` cores over one core: `(n − w_n) / (1 − w_1)`.
    pub fn speedup(&self, n: usize) -> f64 {
        self.busy_cores(n) / self.busy_cores(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn matches_hand_computed_values_of_a1() {
        // n = 2, a = 1000, s = 400, c = 100. Numerators of (A.1):
        //   k=0: 1/(a^0 · 2!) = 0.5
        //   k=1: 1/(a · 1!) · (s + c) = 500/1000 = 0.5
        //   k=2: 1/(a² · 0!) · (s + c)(s + 2c) = 500 · 600 / 10^6 = 0.3
        // Sum 1.3, so P = (0.5, 0.5, 0.3)/1.3, w = (0.5 + 0.6)/1.3 = 11/13.
        let m = Model { a: 1000.0, s: 400.0, c: 100.0 };
        let p = m.steady_state(2);
        for (got, want) in p.iter().zip([0.5 / 1.3, 0.5 / 1.3, 0.3 / 1.3]) {
            assert!(close(*got, want), "{p:?}");
        }
        assert!(close(m.waiting(2), 11.0 / 13.0));
        assert!(close(m.busy_cores(2), 2.0 - 11.0 / 13.0));
        // n = 1: numerators 1/1! = 1 and (s + c)/a = 0.5, so w = 1/3 and n − w = 2/3.
        assert!(close(m.busy_cores(1), 2.0 / 3.0));
        assert!(close(m.speedup(2), (15.0 / 13.0) / (2.0 / 3.0)));
        assert!(close(m.speedup(1), 1.0));
    }

    #[test]
    fn probabilities_are_a_distribution_even_for_many_cores() {
        let m = Model::for_loop(12_500.0, 400.0, 160.0);
        for n in [1, 2, 48, 256] {
            let p = m.steady_state(n);
            assert_eq!(p.len(), n + 1);
            assert!(close(p.iter().sum(), 1.0), "n = {n}");
            assert!(p.iter().all(|x| x.is_finite() && *x >= 0.0), "n = {n}: {p:?}");
        }
    }

    #[test]
    fn without_serial_work_or_transfers_every_core_is_busy() {
        let m = Model { a: 1000.0, s: 1e-12, c: 0.0 };
        assert!((m.speedup(48) - 48.0).abs() < 1e-6);
    }

    #[test]
    fn short_serial_sections_collapse_and_long_parallel_work_scales() {
        // 400-tick serial section with 160-tick transfers (000 §3.1's slope).
        let short = Model::for_loop(12_500.0, 400.0, 160.0);
        let speedups: Vec<f64> = (1..=48).map(|n| short.speedup(n)).collect();
        let (peak_at, peak) = speedups.iter().enumerate().fold((0, 0.0), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
        // It rises, peaks well below 48, then collapses (001 §A.2, Figure A-5).
        assert!(peak_at + 1 < 40 && speedups[47] < 0.5 * peak, "{speedups:?}");
        // Two hundred thousand ticks of parallel work keep scaling to 48 cores.
        let long = Model::for_loop(200_000.0, 400.0, 160.0);
        assert!(long.speedup(48) > 30.0, "{}", long.speedup(48));
        assert!((2..=48).all(|n| long.speedup(n) > long.speedup(n - 1)));
    }
}
