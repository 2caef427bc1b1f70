//! Enumeration (module docs of [`analyzer`](super), steps 1 to 3): the states within the
//! depth bound, argument lists with fresh symbols numbered in order of first use, and
//! canonical forms up to renaming of symbols.

use std::collections::{HashMap, HashSet};

use oplog_model::check_deterministic;
use oplog_model::explore::{Arg, Explore, OpKind, Param, Values, map_op_symbols, symbols};

use super::{Bounds, ModelError, Reached, inconsistent};

/// States whose remaining symbols number at most this are canonicalized exactly (every
/// numbering is tried: at most 720).
pub const MAX_PERMUTED: usize = 6;

/// Builds an operation and checks the model splits it back into the same kind and
/// arguments.
pub(super) fn build<M: Explore>(
    model: &M,
    kinds: &[OpKind],
    kind: usize,
    args: &[Arg],
) -> Result<Option<M::Op>, ModelError> {
    let Some(op) = model.build(kind, args) else { return Ok(None) };
    let (k, back) = model.split(&op);
    if k != kind || back != args {
        return Err(inconsistent(
            model,
            format!("{op:?}, built as {}{args:?}, splits into kind {k} with {back:?}", kinds[kind].name),
        ));
    }
    Ok(Some(op))
}

/// Every argument list for `params` whose symbols are drawn from `existing` or are fresh
/// (numbered from `fresh` in order of first use).
pub(super) fn arg_lists(params: &[Param], existing: &[u64], fresh: u64) -> Vec<Vec<Arg>> {
    fn go(params: &[Param], existing: &[u64], next: u64, prefix: &mut Vec<Arg>, out: &mut Vec<Vec<Arg>>, fresh: u64) {
        let Some((p, rest)) = params.split_first() else {
            out.push(prefix.clone());
            return;
        };
        match p.values {
            Values::Symbol => {
                for &s in existing.iter().chain(&(fresh..next).collect::<Vec<_>>()) {
                    prefix.push(Arg::Symbol(s));
                    go(rest, existing, next, prefix, out, fresh);
                    prefix.pop();
                }
                prefix.push(Arg::Symbol(next));
                go(rest, existing, next + 1, prefix, out, fresh);
                prefix.pop();
            }
            Values::Int { lo, hi } => {
                for i in lo..=hi {
                    prefix.push(Arg::Int(i));
                    go(rest, existing, next, prefix, out, fresh);
                    prefix.pop();
                }
            }
        }
    }
    let mut out = Vec::new();
    go(params, existing, fresh, &mut Vec::new(), &mut out, fresh);
    out
}

/// A renaming of symbols: known ones by a table, others to fresh numbers after it.
#[derive(Clone, Debug, Default)]
pub(super) struct Relabel {
    map: HashMap<u64, u64>,
    next: u64,
}

impl Relabel {
    pub(super) fn get(&mut self, s: u64) -> u64 {
        let next = &mut self.next;
        *self.map.entry(s).or_insert_with(|| {
            *next += 1;
            *next - 1
        })
    }
}

/// Every ordering of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// Canonical form of `state` after the symbols `fixed` were numbered `0..fixed.len()`:
/// the state's other symbols get the next numbers in the order that makes the state least.
fn canonical<M: Explore>(model: &M, state: &M::State, fixed: &[u64]) -> (M::State, Relabel) {
    let base =
        Relabel { map: fixed.iter().enumerate().map(|(i, &s)| (s, i as u64)).collect(), next: fixed.len() as u64 };
    let rest: Vec<u64> = symbols(model, state).into_iter().filter(|s| !base.map.contains_key(s)).collect();
    let orders = if rest.len() <= MAX_PERMUTED { permutations(rest.len()) } else { vec![(0..rest.len()).collect()] };
    let mut best: Option<(M::State, Relabel)> = None;
    for order in orders {
        let mut relabel = base.clone();
        for &i in &order {
            relabel.get(rest[i]);
        }
        let renamed = model.map_symbols(state, &mut |s| relabel.map[&s]);
        if best.as_ref().is_none_or(|(b, _)| renamed < *b) {
            best = Some((renamed, relabel));
        }
    }
    best.expect("at least one ordering")
}

/// Every state within `bounds.depth` operations of the model's initial states (module
/// docs, step 1).
pub(super) fn reachable<M: Explore>(
    model: &M,
    kinds: &[OpKind],
    bounds: &Bounds,
) -> Result<Vec<Reached<M>>, ModelError> {
    let init = model.init();
    let mut seen: HashSet<M::State> = HashSet::new();
    let mut states: Vec<Reached<M>> = Vec::new();
    for seed in model.initial_states() {
        let (state, _) = canonical(model, &seed, &[]);
        if seen.insert(state.clone()) {
            let setup = (seed == init).then(Vec::new);
            states.push(Reached { state, setup });
        }
    }
    let mut frontier: Vec<usize> = (0..states.len()).collect();
    for _ in 0..bounds.depth {
        let mut next = Vec::new();
        for &i in &frontier {
            let here = Reached::<M> { state: states[i].state.clone(), setup: states[i].setup.clone() };
            let syms = symbols(model, &here.state);
            let fresh = syms.last().map_or(0, |s| s + 1);
            for (k, kind) in kinds.iter().enumerate() {
                for args in arg_lists(&kind.params, &syms, fresh) {
                    let Some(op) = build(model, kinds, k, &args)? else { continue };
                    check_deterministic(model, &here.state, &op)?;
                    let mut s = here.state.clone();
                    model.step(&mut s, &op);
                    let (s, mut relabel) = canonical(model, &s, &[]);
                    if !seen.insert(s.clone()) {
                        continue;
                    }
                    if states.len() >= bounds.max_states {
                        return Err(ModelError::TooManyStates {
                            model: model.name().to_owned(),
                            limit: bounds.max_states,
                            depth: bounds.depth,
                        });
                    }
                    let setup = here.setup.as_ref().map(|ops| {
                        let mut ops = ops.clone();
                        ops.push(op.clone());
                        ops.iter().map(|o| map_op_symbols(model, o, &mut |x| relabel.get(x))).collect()
                    });
                    next.push(states.len());
                    states.push(Reached { state: s, setup });
                }
            }
        }
        frontier = next;
    }
    Ok(states)
}

/// Canonical form of a case (module docs, step 3): the operations renamed, the state, and
/// the renaming (for the set-up).
pub(super) fn canonical_case<M: Explore>(
    model: &M,
    state: &M::State,
    a: &M::Op,
    b: &M::Op,
) -> (M::Op, M::Op, M::State, Relabel) {
    let mut order = Vec::new();
    for op in [a, b] {
        for arg in model.split(op).1 {
            if let Arg::Symbol(s) = arg
                && !order.contains(&s)
            {
                order.push(s);
            }
        }
    }
    let (state, mut relabel) = canonical(model, state, &order);
    let a = map_op_symbols(model, a, &mut |s| relabel.get(s));
    let b = map_op_symbols(model, b, &mut |s| relabel.get(s));
    (a, b, state, relabel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oplog_model::Model;
    use oplog_model::set::SetModel;

    #[test]
    fn fresh_symbols_appear_once_per_pattern() {
        let p = [Param::symbol("x"), Param::symbol("y")];
        let lists = arg_lists(&p, &[], 0);
        assert_eq!(lists, vec![vec![Arg::Symbol(0), Arg::Symbol(0)], vec![Arg::Symbol(0), Arg::Symbol(1)]]);
        // With one existing symbol 0: x ∈ {0, new}, y ∈ {0, x if new, another new}.
        assert_eq!(arg_lists(&p, &[0], 1).len(), 5);
        let ints = arg_lists(&[Param::int("o", 0, 2)], &[], 0);
        assert_eq!(ints.len(), 3);
    }

    #[test]
    fn set_states_are_counted_up_to_renaming() {
        // Within 3 operations a set holds 0 to 3 keys: four states up to renaming.
        let states = reachable(&SetModel, &SetModel.kinds(), &Bounds::default()).unwrap();
        let sizes: Vec<usize> = states.iter().map(|r| r.state.len()).collect();
        assert_eq!(sizes, [0, 1, 2, 3]);
        for r in &states {
            let mut s = SetModel.init();
            for op in r.setup.as_ref().unwrap() {
                SetModel.step(&mut s, op);
            }
            assert_eq!(s, r.state, "the set-up reaches the state");
        }
    }
}
