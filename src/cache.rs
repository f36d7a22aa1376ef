//! A bounded memo: a map with a budget (in the caller's unit: words, bytes)
//! that starts over when a new value would exceed it. Values costing more
//! than a quarter of the budget are not kept. Used by the per-thread caches
//! of compiled terminal tables, schema-pattern DFAs and lexeme-loop walks.

use std::borrow::Borrow;
use crate::hash::FxMap as HashMap;
use std::hash::Hash;

pub(crate) struct Bounded<K, V> {
    map: HashMap<K, V>,
    used: usize,
    budget: usize,
}

impl<K: Hash + Eq, V: Clone> Bounded<K, V> {
    pub fn new(budget: usize) -> Self {
        Bounded { map: HashMap::default(), used: 0, budget }
    }

    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.map.get(key).cloned()
    }

    /// Keeps `value` under `key` at `cost`.
    pub fn insert(&mut self, key: K, value: V, cost: usize) {
        if self.used + cost > self.budget {
            self.map.clear();
            self.used = 0;
        }
        if cost <= self.budget / 4 {
            self.used += cost;
            self.map.insert(key, value);
        }
    }
}
