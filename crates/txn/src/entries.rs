//! A transaction's read or write set: entries keyed by record key, in insertion order, found
//! by a linear scan while the set is small (the common, short transaction) and through a
//! hash index once it grows past [`SCAN_LIMIT`]. Cleared between attempts, keeping capacity.

use std::collections::HashMap;

/// Entries up to which lookups scan instead of using the index.
const SCAN_LIMIT: usize = 16;

/// Entries keyed by `u64`, each key at most once.
#[derive(Debug)]
pub(crate) struct Entries<T> {
    items: Vec<(u64, T)>,
    /// key → position in `items`; filled only once `items` is longer than [`SCAN_LIMIT`].
    index: HashMap<u64, usize>,
}

impl<T> Default for Entries<T> {
    fn default() -> Self {
        Self { items: Vec::new(), index: HashMap::new() }
    }
}

impl<T> Entries<T> {
    /// Removes every entry.
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.index.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn position(&self, key: u64) -> Option<usize> {
        if self.items.len() <= SCAN_LIMIT {
            self.items.iter().position(|(k, _)| *k == key)
        } else {
            self.index.get(&key).copied()
        }
    }

    /// The entry of `key`.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<&T> {
        self.position(key).map(|i| &self.items[i].1)
    }

    /// The entry of `key`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: u64) -> Option<&mut T> {
        self.position(key).map(|i| &mut self.items[i].1)
    }

    /// Adds an entry for `key`, which must not have one.
    pub(crate) fn push(&mut self, key: u64, value: T) {
        debug_assert!(self.position(key).is_none(), "key {key} entered twice");
        self.items.push((key, value));
        if self.items.len() > SCAN_LIMIT {
            if self.index.is_empty() {
                self.index.extend(self.items.iter().enumerate().map(|(i, (k, _))| (*k, i)));
            } else {
                self.index.insert(key, self.items.len() - 1);
            }
        }
    }

    /// The `i`-th entry (insertion order, or key order after [`Entries::sort_by_key`]).
    pub(crate) fn at(&self, i: usize) -> &(u64, T) {
        &self.items[i]
    }

    /// The `i`-th entry, mutably.
    pub(crate) fn at_mut(&mut self, i: usize) -> &mut (u64, T) {
        &mut self.items[i]
    }

    /// The entries, in insertion order (or key order after [`Entries::sort_by_key`]).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(u64, T)> {
        self.items.iter()
    }

    /// Sorts the entries by key (a commit's lock order); lookups keep working.
    pub(crate) fn sort_by_key(&mut self) {
        self.items.sort_unstable_by_key(|(k, _)| *k);
        if !self.index.is_empty() {
            self.index.clear();
            self.index.extend(self.items.iter().enumerate().map(|(i, (k, _))| (*k, i)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_agree_before_and_after_the_index_and_after_sorting() {
        let mut e = Entries::default();
        for k in (0..40u64).rev() {
            e.push(k * 3, k);
            for j in k..40 {
                assert_eq!(e.get(j * 3), Some(&j), "key {} with {} entries", j * 3, e.len());
            }
            assert_eq!(e.get(1), None);
        }
        *e.get_mut(30).unwrap() = 99;
        e.sort_by_key();
        let keys: Vec<u64> = e.iter().map(|(k, _)| *k).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(e.get(30), Some(&99));
        assert_eq!(e.get(117), Some(&39));
        e.clear();
        assert!(e.is_empty() && e.get(30).is_none());
    }
}
