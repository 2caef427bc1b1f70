//! One core's reference delta cache (002 §8.1.1): a fixed-size, direct-mapped table of
//! `⟨object, delta⟩` entries. An increment or decrement adds to its object's entry; an object
//! that maps to an entry held by another object evicts that one first (002 Figure 8-3 `inc`).
//! Its size bounds the per-core memory and sets the collision rate, the knob 002 §8.1 offers
//! between space and scalability.

use super::object::Header;
use std::ptr::NonNull;

/// One entry: an object (or none) and the change to its count not yet flushed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) obj: Option<NonNull<Header>>,
    pub(crate) delta: i64,
}

impl Entry {
    const EMPTY: Entry = Entry { obj: None, delta: 0 };
}

/// A direct-mapped table of deltas (see the module docs).
#[derive(Debug)]
pub(crate) struct DeltaCache {
    entries: Box<[Entry]>,
    mask: usize,
}

impl DeltaCache {
    /// A cache of `entries` entries (a power of two, checked by the domain's configuration).
    pub(crate) fn new(entries: usize) -> Self {
        debug_assert!(entries.is_power_of_two());
        DeltaCache { entries: vec![Entry::EMPTY; entries].into_boxed_slice(), mask: entries - 1 }
    }

    /// The entry `obj` maps to (which may hold another object).
    #[inline(always)]
    pub(crate) fn entry(&mut self, obj: NonNull<Header>) -> &mut Entry {
        let i = index(obj, self.mask);
        // SAFETY: `index` masks with `len - 1`.
        unsafe { self.entries.get_unchecked_mut(i) }
    }

    /// The delta cached for `obj`, if it holds an entry.
    pub(crate) fn get(&self, obj: NonNull<Header>) -> Option<i64> {
        let e = self.entries[index(obj, self.mask)];
        (e.obj == Some(obj)).then_some(e.delta)
    }

    /// Empties the cache, calling `f(object, delta)` for every entry that held an object.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(NonNull<Header>, i64)) {
        for e in self.entries.iter_mut() {
            if let Some(obj) = e.obj.take() {
                f(obj, std::mem::take(&mut e.delta));
            }
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry holds an object.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.iter().all(|e| e.obj.is_none())
    }
}

/// Fibonacci hashing of the object's address (allocations are at least 16-byte aligned, so
/// the low bits carry nothing; the multiply spreads consecutive allocations over the table).
#[inline(always)]
fn index(obj: NonNull<Header>, mask: usize) -> usize {
    ((obj.as_ptr() as usize as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn consecutive_allocations_spread_and_drain_empties() {
        let mut c = DeltaCache::new(256);
        let objs: Vec<NonNull<Header>> =
            (1..=128usize).map(|i| NonNull::new(std::ptr::without_provenance_mut(i * 48)).unwrap()).collect();
        let mut used = std::collections::HashSet::new();
        for &o in &objs {
            used.insert(index(o, 255));
        }
        assert!(used.len() > 80, "only {} of 128 objects got distinct entries", used.len());
        let e = c.entry(objs[0]);
        *e = Entry { obj: Some(objs[0]), delta: 3 };
        assert_eq!(c.get(objs[0]), Some(3));
        assert_eq!(c.get(objs[1]), None);
        let mut seen = Vec::new();
        c.drain(|o, d| seen.push((o, d)));
        assert_eq!(seen, vec![(objs[0], 3)]);
        assert!(c.is_empty());
        assert_eq!(c.len(), 256);
    }
}
