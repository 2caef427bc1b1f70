//! Refcache's interface (002 §8.1): one reference-counted object, the strong handles held
//! on it, and a weak reference to it.
//!
//! 002 §8.1 reduces the reference counter's interface until its updates commute: `inc` and
//! `dec` return nothing, "and hence always commute, even if the count reaches zero", and a
//! separate `review` finds the objects whose count reached zero and frees them. Weak
//! references (§8.1.2) add `tryget`, which revives an object whose count reached zero as
//! long as no review has freed it. As `oplog_refcount` offers them:
//!
//! | operation | `oplog_refcount` | response |
//! |---|---|---|
//! | `inc` | `Rc::clone` of a held handle | nothing |
//! | `dec` | dropping a held handle | nothing |
//! | `tryget` | `Weak::upgrade` (Figure 8-3 `tryget`) | whether it gave a handle |
//! | `collect` | `Domain::collect`: review until every object whose handles are all gone is freed | whether it freed the object |
//!
//! The model's `collect` is the review run to completion, not one review pass: a single
//! pass frees an object only two epochs after a flush saw its count at zero, and which
//! flush sees a zero depends on which cores hold which deltas (002 Figure 8-2), which no
//! sequential specification can say. Collecting to completion frees exactly the objects
//! with no handle, whatever the cores did, so the model is deterministic; the lag between
//! the last `dec` and the free is what the interface allows (the object stays revivable
//! until then).
//!
//! The state is the number of strong handles held and whether the object was freed. `inc`
//! and `dec` need a handle to clone or drop: the model answers [`RcRet::NoHandle`] without
//! one, which no implementation can be asked (the handle API has nothing to call), so the
//! implementations' contract ([`crate::impls::refcache::HANDLE`]) leaves those cases out.

use oplog_model::Model;
use oplog_model::explore::{Arg, Explore, Fact, NamedOp, OpKind};

/// A Refcache operation on the one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RcOp {
    /// Clone a held strong handle.
    Inc,
    /// Drop a held strong handle.
    Dec,
    /// Upgrade the weak reference.
    Tryget,
    /// Review until every object without a handle is freed.
    Collect,
}

/// A Refcache operation's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RcRet {
    /// `inc`, `dec`.
    Done,
    /// `inc` or `dec` with no strong handle held (nothing to clone or drop; outside the
    /// implementations' contract).
    NoHandle,
    /// `tryget`: whether it gave a strong handle (false once the object is freed).
    Upgraded(bool),
    /// `collect`: whether it freed the object.
    Freed(bool),
}

/// The object as the interface sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RcState {
    /// Strong handles held (the true reference count).
    pub strong: u32,
    /// Freed by a review: the weak reference is null.
    pub freed: bool,
}

/// Refcache's interface (see the module docs), starting with the creating handle.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefcacheModel;

impl Model for RefcacheModel {
    type State = RcState;
    type Op = RcOp;
    type Ret = RcRet;

    fn name(&self) -> &str {
        "refcache"
    }

    fn init(&self) -> RcState {
        RcState { strong: 1, freed: false }
    }

    fn step(&self, s: &mut RcState, op: &RcOp) -> RcRet {
        match op {
            RcOp::Inc | RcOp::Dec if s.strong == 0 => RcRet::NoHandle,
            RcOp::Inc => {
                s.strong += 1;
                RcRet::Done
            }
            RcOp::Dec => {
                s.strong -= 1;
                RcRet::Done
            }
            RcOp::Tryget if s.freed => RcRet::Upgraded(false),
            RcOp::Tryget => {
                s.strong += 1;
                RcRet::Upgraded(true)
            }
            RcOp::Collect => {
                let frees = s.strong == 0 && !s.freed;
                s.freed |= frees;
                RcRet::Freed(frees)
            }
        }
    }
}

/// The operations, in kind order.
const OPS: [RcOp; 4] = [RcOp::Inc, RcOp::Dec, RcOp::Tryget, RcOp::Collect];

impl Explore for RefcacheModel {
    fn kinds(&self) -> Vec<OpKind> {
        vec![
            OpKind::blind("inc", &[]),
            OpKind::blind("dec", &[]),
            OpKind::returning("tryget", &[]),
            OpKind::returning("collect", &[]),
        ]
    }

    fn build(&self, kind: usize, args: &[Arg]) -> Option<RcOp> {
        OPS.get(kind).copied().filter(|_| args.is_empty())
    }

    fn split(&self, op: &RcOp) -> (usize, Vec<Arg>) {
        (OPS.iter().position(|o| o == op).expect("every Refcache op is in OPS"), Vec::new())
    }

    fn map_symbols(&self, s: &RcState, _: &mut dyn FnMut(u64) -> u64) -> RcState {
        *s
    }

    /// Whether no handle is held (`n = 0`), one is (`n = 1`: a `dec` drops the last), and
    /// whether the object is freed.
    fn facts(&self, s: &RcState, _: &[NamedOp<'_, RcOp>]) -> Vec<Fact> {
        vec![
            Fact::new("n = 0", "n ≠ 0", s.strong == 0),
            Fact::new("n = 1", "n ≠ 1", s.strong == 1),
            Fact::new("freed", "not freed", s.freed),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::{Bounds, analyze};

    #[test]
    fn a_handle_less_object_is_revived_until_collected() {
        let m = RefcacheModel;
        let mut s = m.init();
        assert_eq!(m.step(&mut s, &RcOp::Dec), RcRet::Done);
        assert_eq!(m.step(&mut s, &RcOp::Inc), RcRet::NoHandle, "no handle left to clone");
        assert_eq!(m.step(&mut s, &RcOp::Tryget), RcRet::Upgraded(true), "revived: not collected yet");
        assert_eq!(m.step(&mut s, &RcOp::Collect), RcRet::Freed(false), "a handle is held");
        assert_eq!(m.step(&mut s, &RcOp::Dec), RcRet::Done);
        assert_eq!(m.step(&mut s, &RcOp::Collect), RcRet::Freed(true));
        assert_eq!(m.step(&mut s, &RcOp::Tryget), RcRet::Upgraded(false));
        assert_eq!(m.step(&mut s, &RcOp::Collect), RcRet::Freed(false), "freed once");
        assert_eq!(s, RcState { strong: 0, freed: true });
    }

    /// 002 §8.1: `inc` and `dec` commute whenever both have a handle to act on (even when
    /// the count reaches zero); a review does not commute with a `dec` that drops the last
    /// handle, nor with a `tryget` of an object whose handles are all gone.
    #[test]
    fn the_conditions_are_those_of_002_section_8_1() {
        let analysis = analyze(&RefcacheModel, &Bounds::default()).unwrap();
        let got: Vec<(String, String)> = analysis.pairs.iter().map(|p| (p.title(), p.summary.render())).collect();
        let want = [
            ("inc() / inc()", "always"),
            ("inc() / dec()", "iff n ≠ 1"),
            ("inc() / tryget()", "unless n = 0 ∧ not freed"),
            ("inc() / collect()", "always"),
            ("dec() / dec()", "iff n ≠ 1"),
            ("dec() / tryget()", "unless n = 0 ∧ not freed"),
            ("dec() / collect()", "iff n ≠ 1"),
            ("tryget() / tryget()", "always"),
            ("tryget() / collect()", "unless n = 0 ∧ not freed"),
            ("collect() / collect()", "unless n = 0 ∧ not freed"),
        ];
        assert_eq!(got, want.map(|(a, b)| (a.to_owned(), b.to_owned())));
    }
}
