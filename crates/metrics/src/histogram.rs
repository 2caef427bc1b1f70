//! Histogram storage: log-linear buckets recorded per core, merged on read, with quantiles.
//!
//! A value's bucket is its magnitude's IEEE 754 exponent and the top [`SUB_BITS`] bits of its
//! mantissa: the bit pattern shifted right, one integer shift, no logarithm. Each power of two
//! is split into 2^`SUB_BITS` = 16 equal buckets, so a bucket spans at most 1/16 of its
//! lower bound and its midpoint is within 1/32 (3.125 %) of every value in it, across the
//! whole `f64` range. Negative values go to a mirrored set of buckets by magnitude.
//!
//! Each core keeps a `LocalHistogram`: a dense run of counters over the buckets it has
//! seen (grown at either end on demand, which is safe because the core's slot lock is held),
//! plus count, sum, minimum and maximum. A read merges every core's into a
//! [`HistogramSnapshot`], whose quantiles walk the merged buckets.

/// Mantissa bits that pick the sub-bucket within a power of two (16 sub-buckets).
pub const SUB_BITS: u32 = 4;

/// The largest relative distance between a quantile [`HistogramSnapshot::quantile`] reports
/// and the sample it stands for: half a bucket over the bucket's lower bound, 1/32.
pub const RELATIVE_ERROR: f64 = 1.0 / (1u64 << (SUB_BITS + 1)) as f64;

/// The bucket of a non-negative magnitude (`+inf` has its own): its exponent and top mantissa
/// bits.
#[inline(always)]
fn bucket(magnitude: f64) -> u32 {
    (magnitude.to_bits() >> (52 - SUB_BITS)) as u32
}

/// The magnitude standing for bucket `b`: its midpoint (0 for the bucket of zero and the
/// smallest subnormals, infinity for infinity's).
fn representative(b: u32) -> f64 {
    let lo = f64::from_bits(u64::from(b) << (52 - SUB_BITS));
    if lo.is_infinite() || b == 0 {
        return lo;
    }
    let hi = f64::from_bits(u64::from(b + 1) << (52 - SUB_BITS));
    lo + (hi - lo) / 2.0
}

/// Counts over a contiguous run of buckets, starting at bucket `first`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Buckets {
    first: u32,
    counts: Vec<u64>,
}

impl Buckets {
    #[inline]
    fn add(&mut self, b: u32, n: u64) {
        if let Some(c) = b.checked_sub(self.first).and_then(|i| self.counts.get_mut(i as usize)) {
            *c += n;
        } else {
            self.add_outside(b, n);
        }
    }

    /// Grows the run to cover `b` (at either end), then counts.
    #[cold]
    fn add_outside(&mut self, b: u32, n: u64) {
        if self.counts.is_empty() {
            self.first = b;
            self.counts.push(n);
        } else if b < self.first {
            let grow = (self.first - b) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = b;
            self.counts[0] = n;
        } else {
            let i = (b - self.first) as usize;
            self.counts.resize(i + 1, 0);
            self.counts[i] = n;
        }
    }

    fn merge(&mut self, other: &Buckets) {
        for (i, &n) in other.counts.iter().enumerate() {
            if n != 0 {
                self.add(other.first + i as u32, n);
            }
        }
    }

    /// (bucket, count) of every non-empty bucket, ascending.
    fn iter(&self) -> impl DoubleEndedIterator<Item = (u32, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, n)| **n != 0).map(|(i, &n)| (self.first + i as u32, n))
    }
}

/// One core's samples of one histogram.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LocalHistogram {
    positive: Buckets,
    negative: Buckets,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    nan: u64,
}

impl Default for LocalHistogram {
    fn default() -> Self {
        Self {
            positive: Buckets::default(),
            negative: Buckets::default(),
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            nan: 0,
        }
    }
}

impl LocalHistogram {
    /// Records `value` `n` times (NaN is counted apart: it has no place in an order).
    #[inline]
    pub(crate) fn record(&mut self, value: f64, n: u64) {
        if value.is_nan() {
            self.nan += n;
            return;
        }
        self.count += n;
        self.sum += value * n as f64;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        if value.is_sign_negative() {
            self.negative.add(bucket(-value), n);
        } else {
            self.positive.add(bucket(value), n);
        }
    }
}

/// A histogram's samples merged over every core at one instant (a consistent cut): count,
/// sum, extremes and quantiles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistogramSnapshot {
    merged: LocalHistogram,
}

impl HistogramSnapshot {
    /// Adds one core's samples.
    pub(crate) fn merge(&mut self, core: &LocalHistogram) {
        let m = &mut self.merged;
        m.positive.merge(&core.positive);
        m.negative.merge(&core.negative);
        m.count += core.count;
        m.sum += core.sum;
        m.min = m.min.min(core.min);
        m.max = m.max.max(core.max);
        m.nan += core.nan;
    }

    /// Samples recorded (NaN excluded; see [`HistogramSnapshot::nan`]).
    pub fn count(&self) -> u64 {
        self.merged.count
    }

    /// Sum of the samples (NaN excluded). Per-core partial sums are added in an unspecified
    /// grouping, so it may differ from a sequential sum in the last bits.
    pub fn sum(&self) -> f64 {
        self.merged.sum
    }

    /// The smallest sample, exactly; `None` if there is none.
    pub fn min(&self) -> Option<f64> {
        (self.merged.count > 0).then_some(self.merged.min)
    }

    /// The largest sample, exactly; `None` if there is none.
    pub fn max(&self) -> Option<f64> {
        (self.merged.count > 0).then_some(self.merged.max)
    }

    /// NaN samples recorded: counted, but outside count, sum and quantiles (NaN has no
    /// place in an order).
    pub fn nan(&self) -> u64 {
        self.merged.nan
    }

    /// The `q`-quantile (nearest rank: the sample of rank `ceil(q * count)`), within
    /// [`RELATIVE_ERROR`] of that sample and never outside [min, max]; `q = 0` and `q = 1`
    /// give the minimum and maximum exactly. `None` if there are no samples.
    ///
    /// # Panics
    /// If `q` is not within `0.0..=1.0` (NaN included).
    pub fn quantile(&self, q: f64) -> Option<f64> {
        assert!((0.0..=1.0).contains(&q), "quantile {q} is not within 0..=1");
        let m = &self.merged;
        if m.count == 0 {
            return None;
        }
        if q == 0.0 {
            return Some(m.min);
        }
        if q == 1.0 {
            return Some(m.max);
        }
        let rank = ((q * m.count as f64).ceil() as u64).clamp(1, m.count);
        let ordered = m
            .negative
            .iter()
            .rev()
            .map(|(b, n)| (-representative(b), n))
            .chain(m.positive.iter().map(|(b, n)| (representative(b), n)));
        let mut seen = 0;
        for (value, n) in ordered {
            seen += n;
            if seen >= rank {
                return Some(value.clamp(m.min, m.max));
            }
        }
        Some(m.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(values: &[f64]) -> HistogramSnapshot {
        let mut local = LocalHistogram::default();
        values.iter().for_each(|&v| local.record(v, 1));
        let mut s = HistogramSnapshot::default();
        s.merge(&local);
        s
    }

    /// The exact nearest-rank quantile of `values`.
    fn exact(values: &[f64], q: f64) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    #[test]
    fn quantiles_are_within_the_relative_error_of_the_exact_ones() {
        // Spread over many octaves, both signs, with zero.
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut values = vec![0.0];
        for _ in 0..if cfg!(miri) { 200 } else { 20_000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let magnitude = (x % 1_000_000) as f64 * 1e-3 * 2f64.powi((x >> 40) as i32 % 20 - 10);
            values.push(if x & 1 == 0 { magnitude } else { -magnitude });
        }
        let s = snapshot(&values);
        assert_eq!(s.count(), values.len() as u64);
        for q in [0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0] {
            let (got, want) = (s.quantile(q).unwrap(), exact(&values, q));
            assert!((got - want).abs() <= want.abs() * RELATIVE_ERROR, "q = {q}: {got} against the exact {want}");
        }
        assert_eq!(s.min(), Some(exact(&values, 0.0)));
        assert_eq!(s.max(), Some(exact(&values, 1.0)));
    }

    #[test]
    fn merging_cores_equals_recording_in_one() {
        let (a, b) = ([1.0, 2.0, 1e9, -3.5], [0.25, 7.0, -1e-9]);
        let mut cores = [LocalHistogram::default(), LocalHistogram::default()];
        a.iter().for_each(|&v| cores[0].record(v, 1));
        b.iter().for_each(|&v| cores[1].record(v, 1));
        let mut merged = HistogramSnapshot::default();
        cores.iter().for_each(|c| merged.merge(c));
        let all: Vec<f64> = a.iter().chain(&b).copied().collect();
        let one = snapshot(&all);
        assert_eq!(merged.count(), one.count());
        assert_eq!((merged.min(), merged.max()), (one.min(), one.max()));
        for q in [0.1, 0.5, 0.9] {
            assert_eq!(merged.quantile(q), one.quantile(q));
        }
    }

    #[test]
    fn special_values() {
        let s = snapshot(&[f64::NAN, f64::INFINITY, 5.0, f64::NEG_INFINITY]);
        assert_eq!((s.count(), s.nan()), (3, 1));
        let median = s.quantile(0.5).unwrap();
        assert!((median - 5.0).abs() <= 5.0 * RELATIVE_ERROR, "{median}");
        assert_eq!(snapshot(&[5.0]).quantile(0.5), Some(5.0), "one sample is reported exactly (clamped)");
        assert_eq!(s.quantile(1.0), Some(f64::INFINITY));
        assert_eq!(s.quantile(0.0), Some(f64::NEG_INFINITY));
        let empty = HistogramSnapshot::default();
        assert_eq!((empty.quantile(0.5), empty.min(), empty.max()), (None, None, None));
    }

    #[test]
    #[should_panic(expected = "quantile 1.5 is not within 0..=1")]
    fn a_quantile_outside_zero_to_one_is_rejected() {
        let _ = snapshot(&[1.0]).quantile(1.5);
    }

    #[test]
    fn buckets_grow_at_both_ends() {
        let mut b = Buckets::default();
        b.add(10, 1);
        b.add(7, 2);
        b.add(12, 3);
        b.add(10, 1);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![(7, 2), (10, 2), (12, 3)]);
    }
}
