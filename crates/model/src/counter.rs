//! The counter of 000 Figure 8 (`inc`, `dec`, `read`), with the variant of 002 §8.1 whose
//! `dec` reports reaching zero (the reference-count interface whose commutativity Refcache
//! exploits).

use crate::Model;
use crate::explore::{Arg, Explore, Fact, NamedOp, OpKind};

/// A counter operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

    /// [`CounterModel`]'s step, with `dec` answering whether it reached zero.
    fn step(&self, value: &mut i64, op: &CounterOp) -> CounterRet {
        match CounterModel.step(value, op) {
            CounterRet::Done if *op == CounterOp::Dec => CounterRet::ReachedZero(*value == 0),
            ret => ret,
        }
    }
}

/// The operations of both counters, in kind order.
const OPS: [CounterOp; 3] = [CounterOp::Inc, CounterOp::Dec, CounterOp::Read];

fn build(kind: usize, args: &[Arg]) -> Option<CounterOp> {
    OPS.get(kind).copied().filter(|_| args.is_empty())
}

fn split(op: &CounterOp) -> (usize, Vec<Arg>) {
    (OPS.iter().position(|o| o == op).expect("every counter op is in OPS"), Vec::new())
}

impl Explore for CounterModel {
    fn kinds(&self) -> Vec<OpKind> {
        vec![OpKind::blind("inc", &[]), OpKind::blind("dec", &[]), OpKind::returning("read", &[])]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<CounterOp> {
        build(kind, args)
    }

    fn split(&self, op: &CounterOp) -> (usize, Vec<Arg>) {
        split(op)
    }

    fn map_symbols(&self, value: &i64, _: &mut dyn FnMut(u64) -> u64) -> i64 {
        *value
    }
}

impl Explore for ZeroReportingCounter {
    fn kinds(&self) -> Vec<OpKind> {
        vec![OpKind::blind("inc", &[]), OpKind::returning("dec", &[]), OpKind::returning("read", &[])]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<CounterOp> {
        build(kind, args)
    }

    fn split(&self, op: &CounterOp) -> (usize, Vec<Arg>) {
        split(op)
    }

    fn map_symbols(&self, value: &i64, _: &mut dyn FnMut(u64) -> u64) -> i64 {
        *value
    }

    /// Whether the count is 0, 1 or 2: a `dec` reaches zero from 1, and one of two `dec`s
    /// from 2.
    fn facts(&self, value: &i64, _: &[NamedOp<'_, CounterOp>]) -> Vec<Fact> {
        (0..=2).map(|v| Fact::new(format!("c = {v}"), format!("c ≠ {v}"), *value == v)).collect()
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
