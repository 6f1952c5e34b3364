//! Michelson maps: a persistent B+ tree of the bindings (`persistent_tree.rs`), so that a write
//! after `DUP` copies only its path, as Octez's persistent AVL maps do.

use crate::persistent_tree::Tree;
use crate::value::Value;
use arrayvec::ArrayVec;

/// Bindings per node at most: 17 is the most for which a leaf (a prefix, a key and a value per
/// binding) with its `Rc` counts fits a 1 KiB allocation, as a set's leaf does.
const CAPACITY: usize = 17;

/// A map from comparable keys of one type to values of one type, in Michelson's order of keys.
#[derive(Clone, Default)]
pub struct ValueMap {
    tree: Tree<ArrayVec<Value, CAPACITY>, CAPACITY>,
}

impl ValueMap {
    /// The empty map.
    pub fn new() -> ValueMap {
        ValueMap::default()
    }

    /// The number of bindings.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// Whether the map has no binding.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value bound to `key`, if any.
    pub fn get(&self, key: &Value) -> Option<&Value> {
        self.tree.get(key)
    }

    /// Whether `key` is bound.
    pub fn contains_key(&self, key: &Value) -> bool {
        self.get(key).is_some()
    }

    /// Binds `key` to `value`; the value it replaces, if any.
    #[inline]
    pub fn insert(&mut self, key: Value, value: Value) -> Option<Value> {
        self.tree.insert(key, value)
    }

    /// Binds `key`, which is above every bound key, to `value` (building in order, as `MAP` and
    /// literals do).
    pub(crate) fn push_last(&mut self, key: Value, value: Value) {
        self.tree.push_last(key, value);
    }

    /// Unbinds `key`; the value it had, if any.
    pub fn remove(&mut self, key: &Value) -> Option<Value> {
        self.tree.remove(key)
    }

    /// The bindings in increasing order of key.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Value, &Value)> {
        self.tree.iter()
    }

    /// The values in increasing order of key.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> {
        self.tree.iter().map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistent_tree::testing::{
        key_orders, keys_with_shared_starts, leaf_allocation, root_children, shared_root_children,
    };
    use std::collections::BTreeMap;

    #[test]
    fn a_leaf_fits_a_kibibyte() {
        assert!(leaf_allocation::<ArrayVec<Value, CAPACITY>, CAPACITY>() <= 1024);
    }

    /// Checks `map` against the model: length, bindings in order, and lookups.
    fn check(map: &ValueMap, model: &BTreeMap<Value, Value>, probes: &[Value]) {
        assert_eq!(map.len(), model.len());
        assert_eq!(map.iter().len(), model.len());
        assert!(map.iter().eq(model.iter()), "the same bindings in order");
        assert!(map.values().eq(model.values()));
        for probe in probes {
            assert_eq!(map.get(probe), model.get(probe));
            assert_eq!(map.contains_key(probe), model.contains_key(probe));
        }
    }

    /// Bindings (each key bound to the step that bound it, so that rebinding a key changes its
    /// value), then removals, in the given key orders against std's B-tree map, with copies
    /// taken along the way (as `DUP` shares a map) that must not change when the map does.
    fn against_the_model(keys: &[Value], removals: &[Value]) {
        let mut map = ValueMap::new();
        let mut model = BTreeMap::new();
        let mut copies = Vec::new();
        for (step, key) in keys.iter().enumerate() {
            let value = Value::nat(step as u64);
            assert_eq!(
                map.insert(key.clone(), value.clone()),
                model.insert(key.clone(), value)
            );
            if step % 997 == 0 {
                copies.push((map.clone(), model.clone()));
            }
        }
        check(&map, &model, &keys[..keys.len().min(500)]);
        for (step, key) in removals.iter().enumerate() {
            assert_eq!(map.remove(key), model.remove(key));
            if step % 1009 == 0 {
                copies.push((map.clone(), model.clone()));
                check(&map, &model, &removals[..removals.len().min(100)]);
            }
        }
        check(&map, &model, removals);
        for (copy, copy_model) in &copies {
            check(copy, copy_model, &keys[..keys.len().min(200)]);
        }
        for key in keys {
            map.remove(key);
        }
        assert!(map.is_empty());
        assert_eq!(map.iter().next(), None);
        assert_eq!(map.insert(keys[0].clone(), Value::Unit), None);
        check(
            &map,
            &BTreeMap::from([(keys[0].clone(), Value::Unit)]),
            &keys[..1],
        );
    }

    #[test]
    fn maps_agree_with_a_model_in_every_order() {
        for (keys, removals) in key_orders() {
            against_the_model(&keys, &removals);
        }
    }

    #[test]
    fn maps_agree_with_a_model_when_prefixes_say_little() {
        for (keys, removals) in keys_with_shared_starts() {
            against_the_model(&keys, &removals);
        }
    }

    #[test]
    fn a_map_built_in_order_is_the_map_bound_in_any_order() {
        let mut built = ValueMap::new();
        for n in 0..5_000 {
            built.push_last(Value::nat(n * 2), Value::nat(n));
        }
        let model: BTreeMap<Value, Value> = (0..5_000)
            .map(|n| (Value::nat(n * 2), Value::nat(n)))
            .collect();
        check(
            &built,
            &model,
            &(0..200).map(Value::nat).collect::<Vec<_>>(),
        );
    }

    #[test]
    fn a_write_to_a_shared_map_copies_only_its_path() {
        let mut map = ValueMap::new();
        for n in 0..100_000 {
            map.insert(Value::nat(n), Value::nat(n));
        }
        let copy = map.clone();
        map.insert(Value::nat(50_000), Value::Unit);
        assert_eq!(
            shared_root_children(&map.tree, &copy.tree),
            root_children(&map.tree) - 1,
            "one child copied, the others shared"
        );
        assert_eq!(copy.get(&Value::nat(50_000)), Some(&Value::nat(50_000)));
        assert_eq!(map.get(&Value::nat(50_000)), Some(&Value::Unit));
        assert_eq!(copy.len(), map.len());
    }
}
