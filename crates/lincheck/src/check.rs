//! The linearizability checker: Wing and Gong's search with Lowe's memoization (see the
//! crate docs, "The search").

use crate::history::History;
use oplog_model::{Model, NotDeterministic, check_deterministic};
use std::collections::HashSet;
use std::fmt;

/// Most operations one history may hold (a configuration's set of linearized operations is
/// a `u128`). The suites' histories hold at most 4 threads × a few operations.
pub const MAX_OPS: usize = 128;

/// (state, operation) pairs already found deterministic are remembered up to this many,
/// then forgotten and checked again (bounds memory over long runs).
const VERIFIED_LIMIT: usize = 1 << 16;

/// A witness: indices into [`History::ops`] in an order that explains the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linearization(pub Vec<usize>);

/// A history that no sequential order explains, with what the search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The model's name.
    pub model: String,
    /// The history, one operation per line (see [`History`]'s `Display`).
    pub history: String,
    /// The longest prefix the search managed to linearize, one operation per entry.
    pub longest_prefix: Vec<String>,
    /// Every operation that could have come next after that prefix (its interval starts
    /// before any remaining operation ends), with what it returned and what the model
    /// answers there.
    pub stuck: Vec<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the history is not linearizable with respect to model `{}`:", self.model)?;
        write!(f, "{}", self.history)?;
        writeln!(f, "longest linearizable prefix ({} operations):", self.longest_prefix.len())?;
        for p in &self.longest_prefix {
            writeln!(f, "  {p}")?;
        }
        writeln!(f, "after it, no operation can come next:")?;
        for s in &self.stuck {
            writeln!(f, "  {s}")?;
        }
        Ok(())
    }
}

/// Why [`Checker::check`] did not return a linearization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// The history is not linearizable.
    NotLinearizable(Box<Violation>),
    /// The model is not deterministic, so it cannot judge histories.
    Model(NotDeterministic),
    /// The history holds more than [`MAX_OPS`] operations.
    TooLong {
        /// How many it holds.
        ops: usize,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::NotLinearizable(v) => write!(f, "{v}"),
            CheckError::Model(e) => write!(f, "cannot check linearizability: {e}"),
            CheckError::TooLong { ops } => {
                write!(f, "a history of {ops} operations is too long to check: at most {MAX_OPS}")
            }
        }
    }
}

impl std::error::Error for CheckError {}

/// End of the event list.
const NIL: usize = usize::MAX;

/// One call or response event in the search's doubly linked list.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The operation (index into the history); unused for the head.
    op: usize,
    call: bool,
    prev: usize,
    next: usize,
    /// For a call: its response's node.
    partner: usize,
}

/// Checks histories against one model (see the crate docs, "The search").
#[derive(Debug)]
pub struct Checker<M: Model> {
    model: M,
    verified: HashSet<(M::State, M::Op)>,
}

impl<M: Model> Checker<M> {
    /// A checker for `model`.
    pub fn new(model: M) -> Self {
        Self { model, verified: HashSet::new() }
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Finds a linearization of `history`, or says why there is none.
    ///
    /// # Errors
    /// [`CheckError::NotLinearizable`] with the longest prefix found;
    /// [`CheckError::Model`] if the model answered one (state, operation) pair twice
    /// differently; [`CheckError::TooLong`] past [`MAX_OPS`] operations.
    pub fn check(&mut self, history: &History<M::Op, M::Ret>) -> Result<Linearization, CheckError> {
        let ops = history.ops();
        if ops.len() > MAX_OPS {
            return Err(CheckError::TooLong { ops: ops.len() });
        }
        let mut nodes = event_list(history);
        let mut state = self.model.init();
        let mut linearized: u128 = 0;
        // Each lifted call node with the state before it ran.
        let mut stack: Vec<(usize, M::State)> = Vec::with_capacity(ops.len());
        let mut seen: HashSet<(u128, M::State)> = HashSet::new();
        let mut longest: (Vec<usize>, M::State) = (Vec::new(), state.clone());
        let mut entry = nodes[0].next;
        while nodes[0].next != NIL {
            let node = nodes[entry];
            if node.call {
                let o = &ops[node.op];
                self.verify(&state, &o.op)?;
                let mut next = state.clone();
                if self.model.step(&mut next, &o.op) == o.ret {
                    let lin = linearized | (1u128 << node.op);
                    if seen.insert((lin, next.clone())) {
                        stack.push((entry, std::mem::replace(&mut state, next)));
                        linearized = lin;
                        lift(&mut nodes, entry);
                        if stack.len() > longest.0.len() {
                            longest = (stack.iter().map(|&(e, _)| nodes[e].op).collect(), state.clone());
                        }
                        entry = nodes[0].next;
                        continue;
                    }
                }
                entry = node.next;
            } else {
                // A response before any call that can still be linearized: back up.
                let Some((e, before)) = stack.pop() else {
                    return Err(CheckError::NotLinearizable(Box::new(self.violation(history, &longest))));
                };
                state = before;
                linearized &= !(1u128 << nodes[e].op);
                unlift(&mut nodes, e);
                entry = nodes[e].next;
            }
        }
        Ok(Linearization(stack.iter().map(|&(e, _)| nodes[e].op).collect()))
    }

    /// Calls [`check_deterministic`] on a pair not seen before.
    fn verify(&mut self, state: &M::State, op: &M::Op) -> Result<(), CheckError> {
        let key = (state.clone(), op.clone());
        if self.verified.contains(&key) {
            return Ok(());
        }
        check_deterministic(&self.model, state, op).map_err(CheckError::Model)?;
        if self.verified.len() >= VERIFIED_LIMIT {
            self.verified.clear();
        }
        self.verified.insert(key);
        Ok(())
    }

    /// Describes why the search failed, from the longest prefix it linearized.
    fn violation(&self, history: &History<M::Op, M::Ret>, longest: &(Vec<usize>, M::State)) -> Violation {
        let ops = history.ops();
        let (prefix, state) = longest;
        let rest: Vec<usize> = (0..ops.len()).filter(|i| !prefix.contains(i)).collect();
        let first_response = rest.iter().map(|&i| ops[i].response).min().unwrap_or(u64::MAX);
        let stuck = rest
            .iter()
            .filter(|&&i| ops[i].call < first_response)
            .map(|&i| {
                let o = &ops[i];
                let mut s = state.clone();
                let expected = self.model.step(&mut s, &o.op);
                let verdict = if expected == o.ret {
                    "the model agrees, but nothing can follow it".to_owned()
                } else {
                    format!("the model answers {expected:?}")
                };
                format!("thread {} {:?} returned {:?}; {verdict}", o.thread, o.op, o.ret)
            })
            .collect();
        Violation {
            model: self.model.name().to_owned(),
            history: history.to_string(),
            longest_prefix: prefix
                .iter()
                .map(|&i| format!("thread {} {:?} -> {:?}", ops[i].thread, ops[i].op, ops[i].ret))
                .collect(),
            stuck,
        }
    }
}

/// The history's call and response events sorted by ticket, as a doubly linked list whose
/// node 0 is the head.
fn event_list<Op, Ret>(history: &History<Op, Ret>) -> Vec<Node> {
    let ops = history.ops();
    let mut events: Vec<(u64, usize, bool)> =
        ops.iter().enumerate().flat_map(|(i, o)| [(o.call, i, true), (o.response, i, false)]).collect();
    events.sort_unstable_by_key(|e| e.0);
    let len = events.len();
    let mut nodes = Vec::with_capacity(len + 1);
    nodes.push(Node { op: NIL, call: false, prev: NIL, next: if len > 0 { 1 } else { NIL }, partner: NIL });
    let mut response_node = vec![0; ops.len()];
    for (k, &(_, op, call)) in events.iter().enumerate() {
        let index = k + 1;
        nodes.push(Node { op, call, prev: k, next: if index < len { index + 1 } else { NIL }, partner: NIL });
        if !call {
            response_node[op] = index;
        }
    }
    for node in nodes.iter_mut().skip(1).filter(|n| n.call) {
        node.partner = response_node[node.op];
    }
    nodes
}

/// Removes a call and its response from the list (their own links are kept for `unlift`).
fn lift(nodes: &mut [Node], call: usize) {
    for x in [call, nodes[call].partner] {
        let Node { prev, next, .. } = nodes[x];
        nodes[prev].next = next;
        if next != NIL {
            nodes[next].prev = prev;
        }
    }
}

/// Puts back what [`lift`] removed; lifts are undone in reverse order.
fn unlift(nodes: &mut [Node], call: usize) {
    for x in [nodes[call].partner, call] {
        let Node { prev, next, .. } = nodes[x];
        nodes[prev].next = x;
        if next != NIL {
            nodes[next].prev = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Operation;
    use oplog_model::counter::{CounterModel, CounterOp, CounterRet};
    use oplog_model::set::{SetModel, SetOp, SetRet};
    use std::cell::Cell;

    fn op<O, R>(thread: usize, call: u64, response: u64, op: O, ret: R) -> Operation<O, R> {
        Operation { thread, op, ret, call, response }
    }

    #[test]
    fn overlapping_operations_may_take_either_order() {
        // thread 0: add(1) spans [0, 5]; thread 1: contains(1) spans [1, 2] and sees it.
        let h = History::new(vec![
            op(0, 0, 5, SetOp::Add(1), SetRet::Done),
            op(1, 1, 2, SetOp::Contains(1), SetRet::Present(true)),
            op(1, 3, 4, SetOp::Remove(1), SetRet::Done),
            op(1, 6, 7, SetOp::Contains(1), SetRet::Present(false)),
        ])
        .unwrap();
        let lin = Checker::new(SetModel).check(&h).unwrap();
        assert_eq!(lin, Linearization(vec![0, 1, 2, 3]));
        assert_witness(&SetModel, &h, &lin);
    }

    #[test]
    fn real_time_order_must_be_kept() {
        // add(1) returned before contains(1) was invoked, so contains must see it.
        let h = History::new(vec![
            op(0, 0, 1, SetOp::Add(1), SetRet::Done),
            op(1, 2, 3, SetOp::Contains(1), SetRet::Present(false)),
        ])
        .unwrap();
        let err = Checker::new(SetModel).check(&h).unwrap_err();
        let CheckError::NotLinearizable(v) = &err else { panic!("{err}") };
        assert_eq!(v.longest_prefix, vec!["thread 0 Add(1) -> Done"]);
        assert_eq!(v.stuck, vec!["thread 1 Contains(1) returned Present(false); the model answers Present(true)"]);
        let text = err.to_string();
        assert!(text.starts_with("the history is not linearizable with respect to model `set`:"), "{text}");
        assert!(text.contains("thread 1 [   2,    3] Contains(1) -> Present(false)"), "{text}");
    }

    #[test]
    fn a_stale_read_between_two_completed_updates_is_caught() {
        // Counter: inc, inc both complete; a later read returns 1.
        let h = History::new(vec![
            op(0, 0, 1, CounterOp::Inc, CounterRet::Done),
            op(1, 2, 3, CounterOp::Inc, CounterRet::Done),
            op(2, 4, 5, CounterOp::Read, CounterRet::Value(1)),
        ])
        .unwrap();
        assert!(matches!(Checker::new(CounterModel).check(&h), Err(CheckError::NotLinearizable(_))));
        // Overlapping the second inc, the same read is fine.
        let h = History::new(vec![
            op(0, 0, 1, CounterOp::Inc, CounterRet::Done),
            op(1, 2, 6, CounterOp::Inc, CounterRet::Done),
            op(2, 4, 5, CounterOp::Read, CounterRet::Value(1)),
        ])
        .unwrap();
        assert_eq!(Checker::new(CounterModel).check(&h).unwrap(), Linearization(vec![0, 2, 1]));
    }

    /// Asserts that `lin` explains `h`: a permutation that keeps real-time order and gives
    /// every operation its recorded response.
    fn assert_witness<M: Model>(model: &M, h: &History<M::Op, M::Ret>, lin: &Linearization) {
        let mut sorted = lin.0.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..h.len()).collect::<Vec<_>>(), "not a permutation: {lin:?}");
        let mut state = model.init();
        for (pos, &i) in lin.0.iter().enumerate() {
            assert_eq!(model.step(&mut state, &h.ops()[i].op), h.ops()[i].ret, "operation {i} in {lin:?}");
            for &later in &lin.0[pos + 1..] {
                assert!(!h.ops()[later].precedes(&h.ops()[i]), "{later} returned before {i} began: {lin:?}");
            }
        }
    }

    #[test]
    fn backtracking_finds_an_order_that_works() {
        // The first guess (add first) fails at the first read; the search must back up and
        // put the remove first and the add after the first read.
        let h = History::new(vec![
            op(0, 0, 10, SetOp::Add(1), SetRet::Done),
            op(1, 1, 11, SetOp::Remove(1), SetRet::Done),
            op(2, 2, 3, SetOp::Contains(1), SetRet::Present(false)),
            op(2, 12, 13, SetOp::Contains(1), SetRet::Present(true)),
        ])
        .unwrap();
        let lin = Checker::new(SetModel).check(&h).unwrap();
        assert_witness(&SetModel, &h, &lin);
        let pos = |i| lin.0.iter().position(|&x| x == i).unwrap();
        assert!(pos(1) < pos(0) && pos(2) < pos(0), "{lin:?}");
    }

    #[test]
    fn many_concurrent_operations_check_quickly_thanks_to_memoization() {
        // 12 overlapping increments, then a read of 11: 12! = 479,001,600 orders to reject
        // without memoization, at most 2^12 configurations with it.
        let mut ops: Vec<_> =
            (0..12).map(|t| op(t, t as u64, 100 + t as u64, CounterOp::Inc, CounterRet::Done)).collect();
        ops.push(op(12, 200, 201, CounterOp::Read, CounterRet::Value(11)));
        let h = History::new(ops).unwrap();
        assert!(matches!(Checker::new(CounterModel).check(&h), Err(CheckError::NotLinearizable(_))));
    }

    #[test]
    fn the_empty_history_is_linearizable() {
        let h: History<SetOp, SetRet> = History::new(Vec::new()).unwrap();
        assert_eq!(Checker::new(SetModel).check(&h).unwrap(), Linearization(Vec::new()));
    }

    #[test]
    fn too_long_histories_are_refused() {
        let ops = (0..=MAX_OPS as u64).map(|i| op(0, 2 * i, 2 * i + 1, CounterOp::Inc, CounterRet::Done)).collect();
        let err = Checker::new(CounterModel).check(&History::new(ops).unwrap()).unwrap_err();
        assert_eq!(err.to_string(), "a history of 129 operations is too long to check: at most 128");
    }

    /// A model whose `read` answers differently each time it is asked.
    struct Flaky(Cell<i64>);

    impl Model for Flaky {
        type State = i64;
        type Op = CounterOp;
        type Ret = CounterRet;
        fn name(&self) -> &str {
            "flaky counter"
        }
        fn init(&self) -> i64 {
            0
        }
        fn step(&self, s: &mut i64, op: &CounterOp) -> CounterRet {
            self.0.set(self.0.get() + 1);
            match op {
                CounterOp::Read => CounterRet::Value(*s + self.0.get()),
                _ => CounterModel.step(s, op),
            }
        }
    }

    #[test]
    fn a_nondeterministic_model_is_rejected_with_a_clear_error() {
        let h = History::new(vec![op(0, 0, 1, CounterOp::Read, CounterRet::Value(1))]).unwrap();
        let err = Checker::new(Flaky(Cell::new(0))).check(&h).unwrap_err();
        assert!(matches!(err, CheckError::Model(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "cannot check linearizability: model `flaky counter` is not deterministic: Read on state 0 gave \
             Value(1) -> 0 once and Value(2) -> 0 the next time"
        );
    }
}
