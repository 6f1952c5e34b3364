//! A map that is emptied when it reaches its bound: the per-thread caches of parsed keys,
//! typechecked scripts and parameter types keep what a workload reuses without growing with
//! the state. Emptying whole is enough there: an entry is cheap to rebuild, and a workload that
//! reuses anything reuses far fewer than the bound.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// A map of at most `max` entries, emptied when an insertion would pass it.
pub(crate) struct BoundedCache<K, V> {
    entries: HashMap<K, V>,
    max: usize,
}

impl<K: Eq + Hash, V: Clone> BoundedCache<K, V> {
    /// An empty cache holding at most `max` entries.
    pub(crate) fn new(max: usize) -> BoundedCache<K, V> {
        BoundedCache {
            entries: HashMap::new(),
            max,
        }
    }

    /// A copy of the value kept for `key`.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.entries.get(key).cloned()
    }

    /// Keeps `value` for `key`, emptying the cache first when it is full.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        if self.entries.len() >= self.max {
            self.entries.clear();
        }
        self.entries.insert(key, value);
    }
}
