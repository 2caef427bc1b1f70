//! The counter of 000 Figure 8 (`inc`, `dec`, `read`), with the variant of 002 §8.1 whose
//! `dec` reports reaching zero (the reference-count interface whose commutativity Refcache
//! exploits).

use crate::Model;

/// A counter operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterOp {
    /// Add 1.
    Inc,
    /// Subtract 1.
    Dec,
    /// Return the value.
    Read,
}

/// A counter's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterRet {
    /// `inc`, and `dec` in [`CounterModel`].
    Done,
    /// `dec` in [`ZeroReportingCounter`]: whether the count reached zero.
    ReachedZero(bool),
    /// `read`.
    Value(i64),
}

/// The plain counter: `inc` and `dec` return nothing, `read` the value.
#[derive(Clone, Copy, Debug, Default)]
pub struct CounterModel;

impl Model for CounterModel {
    type State = i64;
    type Op = CounterOp;
    type Ret = CounterRet;

    fn name(&self) -> &str {
        "counter"
    }

    fn init(&self) -> i64 {
        0
    }

    fn step(&self, value: &mut i64, op: &CounterOp) -> CounterRet {
        match op {
            CounterOp::Inc => {
                *value += 1;
                CounterRet::Done
            }
            CounterOp::Dec => {
                *value -= 1;
                CounterRet::Done
            }
            CounterOp::Read => CounterRet::Value(*value),
        }
    }
}

/// A reference count whose `dec` reports whether the count reached zero (002 §8.1): `inc` and
/// `dec` commute exactly when no reordering makes a `dec` reach zero.
#[derive(Clone, Copy, Debug, Default)]
pub struct ZeroReportingCounter;

impl Model for ZeroReportingCounter {
    type State = i64;
    type Op = CounterOp;
    type Ret = CounterRet;

    fn name(&self) -> &str {
        "zero-reporting counter"
    }

    fn init(&self) -> i64 {
        0
    }

    fn step(&self, value: &mut i64, op: &CounterOp) -> CounterRet {
        match op {
            CounterOp::Inc => {
                *value += 1;
                CounterRet::Done
            }
            CounterOp::Dec => {
                *value -= 1;
                CounterRet::ReachedZero(*value == 0)
            }
            CounterOp::Read => CounterRet::Value(*value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dec_reports_reaching_zero() {
        let m = ZeroReportingCounter;
        let mut s = 1;
        assert_eq!(m.step(&mut s, &CounterOp::Dec), CounterRet::ReachedZero(true));
        assert_eq!(m.step(&mut s, &CounterOp::Dec), CounterRet::ReachedZero(false));
        assert_eq!(m.step(&mut s, &CounterOp::Read), CounterRet::Value(-1));
        assert_eq!(CounterModel.step(&mut s, &CounterOp::Inc), CounterRet::Done);
    }
}
