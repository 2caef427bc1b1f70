//! The rmap's sequential type: an interval tree of mappings (000 §3, Figure 7
//! `IntervalTree<Mapping>`).
//!
//! Linux keeps, per file, an augmented interval tree of the virtual memory areas that map
//! the file (000 §3: "each file has an associated interval tree ... A file's interval tree
//! maps intervals of the file to virtual address mappings"). This one is an AVL tree of
//! [`Mapping`]s ordered by `(start, end, id)`, each node augmented with the largest `end`
//! in its subtree, so that the mappings overlapping a range are found by visiting only the
//! subtrees that can hold one: O(log n + k) for k results.
//!
//! Nodes live in one vector (an arena) and are linked by index; removed nodes' cells are
//! reused by later inserts, so a tree whose size stays bounded stops allocating.

use super::Mapping;
use std::cmp::Ordering;
use std::fmt;

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    mapping: Mapping,
    /// The largest `end` in this node's subtree.
    max_end: u64,
    left: u32,
    right: u32,
    height: u8,
}

/// An interval tree of [`Mapping`]s (a set: each mapping at most once).
#[derive(Clone, Default)]
pub struct IntervalTree {
    nodes: Vec<Node>,
    /// Indices of unused cells of `nodes`.
    free: Vec<u32>,
    root: Option<u32>,
    len: usize,
}

impl IntervalTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of mappings.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tree holds no mapping.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inserts `m`; false if that exact mapping is already present.
    pub fn insert(&mut self, m: Mapping) -> bool {
        let mut inserted = false;
        let root = self.insert_at(self.root_index(), m, &mut inserted);
        self.root = Some(root);
        if inserted {
            self.len += 1;
        }
        inserted
    }

    /// Removes `m`; false if that exact mapping is absent.
    pub fn remove(&mut self, m: &Mapping) -> bool {
        let mut removed = NIL;
        let root = self.remove_at(self.root_index(), m, &mut removed);
        self.root = (root != NIL).then_some(root);
        if removed == NIL {
            return false;
        }
        self.free.push(removed);
        self.len -= 1;
        true
    }

    /// Whether `m` is present.
    pub fn contains(&self, m: &Mapping) -> bool {
        let mut t = self.root_index();
        while t != NIL {
            let n = self.node(t);
            t = match m.cmp(&n.mapping) {
                Ordering::Less => n.left,
                Ordering::Greater => n.right,
                Ordering::Equal => return true,
            };
        }
        false
    }

    /// Calls `f` on every mapping that overlaps the half-open range `from..to` (`start < to`
    /// and `end > from`), in order.
    pub fn for_each_overlapping(&self, from: u64, to: u64, mut f: impl FnMut(&Mapping)) {
        if from < to {
            self.overlapping_at(self.root_index(), from, to, &mut f);
        }
    }

    /// Every mapping, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Mapping> + '_ {
        InOrder { tree: self, stack: Vec::new(), next: self.root_index() }
    }

    fn root_index(&self) -> u32 {
        self.root.unwrap_or(NIL)
    }

    fn node(&self, i: u32) -> &Node {
        &self.nodes[i as usize]
    }

    fn node_mut(&mut self, i: u32) -> &mut Node {
        &mut self.nodes[i as usize]
    }

    fn height(&self, i: u32) -> u8 {
        if i == NIL { 0 } else { self.node(i).height }
    }

    fn max_end(&self, i: u32) -> u64 {
        if i == NIL { 0 } else { self.node(i).max_end }
    }

    fn alloc(&mut self, mapping: Mapping) -> u32 {
        let node = Node { mapping, max_end: mapping.end(), left: NIL, right: NIL, height: 1 };
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                let i = u32::try_from(self.nodes.len()).ok().filter(|&i| i != NIL).expect("interval tree is full");
                self.nodes.push(node);
                i
            }
        }
    }

    /// Recomputes `t`'s height and `max_end` from its children.
    fn update(&mut self, t: u32) {
        let (l, r) = (self.node(t).left, self.node(t).right);
        let height = 1 + self.height(l).max(self.height(r));
        let max_end = self.node(t).mapping.end().max(self.max_end(l)).max(self.max_end(r));
        let n = self.node_mut(t);
        n.height = height;
        n.max_end = max_end;
    }

    fn rotate_right(&mut self, t: u32) -> u32 {
        let l = self.node(t).left;
        self.node_mut(t).left = self.node(l).right;
        self.node_mut(l).right = t;
        self.update(t);
        self.update(l);
        l
    }

    fn rotate_left(&mut self, t: u32) -> u32 {
        let r = self.node(t).right;
        self.node_mut(t).right = self.node(r).left;
        self.node_mut(r).left = t;
        self.update(t);
        self.update(r);
        r
    }

    /// Restores `t`'s balance after one of its subtrees changed height by one; returns the
    /// subtree's new root.
    fn rebalance(&mut self, t: u32) -> u32 {
        self.update(t);
        let (l, r) = (self.node(t).left, self.node(t).right);
        let balance = i32::from(self.height(l)) - i32::from(self.height(r));
        if balance > 1 {
            if self.height(self.node(l).left) < self.height(self.node(l).right) {
                let nl = self.rotate_left(l);
                self.node_mut(t).left = nl;
            }
            self.rotate_right(t)
        } else if balance < -1 {
            if self.height(self.node(r).right) < self.height(self.node(r).left) {
                let nr = self.rotate_right(r);
                self.node_mut(t).right = nr;
            }
            self.rotate_left(t)
        } else {
            t
        }
    }

    fn insert_at(&mut self, t: u32, m: Mapping, inserted: &mut bool) -> u32 {
        if t == NIL {
            *inserted = true;
            return self.alloc(m);
        }
        match m.cmp(&self.node(t).mapping) {
            Ordering::Less => {
                let l = self.insert_at(self.node(t).left, m, inserted);
                self.node_mut(t).left = l;
            }
            Ordering::Greater => {
                let r = self.insert_at(self.node(t).right, m, inserted);
                self.node_mut(t).right = r;
            }
            Ordering::Equal => return t,
        }
        if *inserted { self.rebalance(t) } else { t }
    }

    /// Removes `m` from the subtree at `t`, storing the freed cell in `removed`.
    fn remove_at(&mut self, t: u32, m: &Mapping, removed: &mut u32) -> u32 {
        if t == NIL {
            return NIL;
        }
        match m.cmp(&self.node(t).mapping) {
            Ordering::Less => {
                let l = self.remove_at(self.node(t).left, m, removed);
                self.node_mut(t).left = l;
            }
            Ordering::Greater => {
                let r = self.remove_at(self.node(t).right, m, removed);
                self.node_mut(t).right = r;
            }
            Ordering::Equal => {
                *removed = t;
                let (l, r) = (self.node(t).left, self.node(t).right);
                if l == NIL {
                    return r;
                }
                if r == NIL {
                    return l;
                }
                // Two children: the successor (the right subtree's minimum) takes t's place.
                let (r, min) = self.take_min(r);
                let n = self.node_mut(min);
                n.left = l;
                n.right = r;
                return self.rebalance(min);
            }
        }
        if *removed == NIL { t } else { self.rebalance(t) }
    }

    /// Detaches the minimum of the subtree at `t` (not NIL); returns the subtree's new root
    /// and the detached node.
    fn take_min(&mut self, t: u32) -> (u32, u32) {
        let l = self.node(t).left;
        if l == NIL {
            return (self.node(t).right, t);
        }
        let (nl, min) = self.take_min(l);
        self.node_mut(t).left = nl;
        (self.rebalance(t), min)
    }

    fn overlapping_at(&self, t: u32, from: u64, to: u64, f: &mut impl FnMut(&Mapping)) {
        // Nothing in this subtree ends after `from`.
        if t == NIL || self.node(t).max_end <= from {
            return;
        }
        let n = self.node(t);
        self.overlapping_at(n.left, from, to, f);
        // Everything to the right starts at or after this node's start.
        if n.mapping.start() >= to {
            return;
        }
        if n.mapping.end() > from {
            f(&n.mapping);
        }
        self.overlapping_at(n.right, from, to, f);
    }

    /// Checks the tree's invariants (order, balance, heights, `max_end`, length); panics
    /// with the first violation. For tests.
    pub fn check_invariants(&self) {
        fn walk(
            tree: &IntervalTree,
            t: u32,
            lo: Option<&Mapping>,
            hi: Option<&Mapping>,
            count: &mut usize,
        ) -> (u8, u64) {
            if t == NIL {
                return (0, 0);
            }
            let n = tree.node(t);
            assert!(lo.is_none_or(|lo| *lo < n.mapping), "order violated at {:?}", n.mapping);
            assert!(hi.is_none_or(|hi| n.mapping < *hi), "order violated at {:?}", n.mapping);
            *count += 1;
            let (hl, el) = walk(tree, n.left, lo, Some(&n.mapping), count);
            let (hr, er) = walk(tree, n.right, Some(&n.mapping), hi, count);
            assert!(hl.abs_diff(hr) <= 1, "unbalanced at {:?}: {hl} vs {hr}", n.mapping);
            assert_eq!(n.height, 1 + hl.max(hr), "stale height at {:?}", n.mapping);
            let max_end = n.mapping.end().max(el).max(er);
            assert_eq!(n.max_end, max_end, "stale max_end at {:?}", n.mapping);
            (n.height, max_end)
        }
        let mut count = 0;
        walk(self, self.root_index(), None, None, &mut count);
        assert_eq!(count, self.len, "length is stale");
        assert_eq!(self.nodes.len(), self.len + self.free.len(), "arena cells leaked");
    }
}

impl fmt::Debug for IntervalTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl super::super::logged_set::SetLike for IntervalTree {
    type Item = Mapping;
    fn insert(&mut self, m: Mapping) -> bool {
        IntervalTree::insert(self, m)
    }
    fn remove(&mut self, m: &Mapping) -> bool {
        IntervalTree::remove(self, m)
    }
}

/// In-order iterator over an [`IntervalTree`].
struct InOrder<'a> {
    tree: &'a IntervalTree,
    stack: Vec<u32>,
    next: u32,
}

impl<'a> Iterator for InOrder<'a> {
    type Item = &'a Mapping;
    fn next(&mut self) -> Option<&'a Mapping> {
        while self.next != NIL {
            self.stack.push(self.next);
            self.next = self.tree.node(self.next).left;
        }
        let t = self.stack.pop()?;
        let n = self.tree.node(t);
        self.next = n.right;
        Some(&n.mapping)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn m(id: u64, start: u64, end: u64) -> Mapping {
        Mapping::new(id, start..end).unwrap()
    }

    /// xorshift, so failures reproduce.
    fn rng(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn matches_a_btreeset_under_random_inserts_removes_and_queries() {
        let mut tree = IntervalTree::new();
        let mut model = BTreeSet::new();
        let mut s = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000 {
            let start = rng(&mut s) % 200;
            let mapping = m(rng(&mut s) % 8, start, start + 1 + rng(&mut s) % 40);
            if rng(&mut s).is_multiple_of(3) {
                assert_eq!(tree.remove(&mapping), model.remove(&mapping), "step {step}");
            } else {
                assert_eq!(tree.insert(mapping), model.insert(mapping), "step {step}");
            }
            assert_eq!(tree.contains(&mapping), model.contains(&mapping));
            if step % 97 == 0 {
                tree.check_invariants();
                assert!(tree.iter().eq(model.iter()));
                let from = rng(&mut s) % 250;
                let to = from + rng(&mut s) % 60;
                let mut found = Vec::new();
                tree.for_each_overlapping(from, to, |m| found.push(*m));
                let expected: Vec<Mapping> =
                    model.iter().filter(|m| from < to && m.start() < to && m.end() > from).copied().collect();
                assert_eq!(found, expected, "overlapping {from}..{to} at step {step}");
            }
        }
        assert_eq!(tree.len(), model.len());
    }

    #[test]
    fn removing_everything_reuses_cells() {
        let mut tree = IntervalTree::new();
        for round in 0..3 {
            for i in 0..100 {
                assert!(tree.insert(m(i, i, i + 10)), "round {round}");
            }
            for i in (0..100).rev() {
                assert!(tree.remove(&m(i, i, i + 10)));
            }
            assert!(tree.is_empty());
            tree.check_invariants();
        }
        assert_eq!(tree.nodes.len(), 100, "cells are reused");
    }

    #[test]
    fn an_empty_query_range_finds_nothing() {
        let mut tree = IntervalTree::new();
        tree.insert(m(1, 0, 10));
        let mut n = 0;
        tree.for_each_overlapping(5, 5, |_| n += 1);
        tree.for_each_overlapping(6, 5, |_| n += 1);
        assert_eq!(n, 0);
        tree.for_each_overlapping(9, 10, |_| n += 1);
        tree.for_each_overlapping(10, 11, |_| n += 10);
        assert_eq!(n, 1, "half-open: 0..10 overlaps 9..10, not 10..11");
    }
}
