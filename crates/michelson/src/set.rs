//! Michelson sets: a persistent B+ tree of the elements (`persistent_tree.rs`, whose keys they
//! are, with no value), so that a write after `DUP` copies only its path.

use crate::persistent_tree::Tree;
use crate::value::Value;

/// Elements per node at most: 30 is the most for which a leaf with its `Rc` counts fits a 1 KiB
/// allocation (mimalloc's next size class is 1.25 KiB: a quarter more memory for a set built in
/// order, and as much more time).
const CAPACITY: usize = 30;

/// A set of comparable values of one type, in Michelson's order.
#[derive(Clone, Default)]
pub struct ValueSet {
    tree: Tree<(), CAPACITY>,
}

impl ValueSet {
    /// The empty set.
    pub fn new() -> ValueSet {
        ValueSet::default()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// Whether the set has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `value` is an element.
    pub fn contains(&self, value: &Value) -> bool {
        self.tree.get(value).is_some()
    }

    /// Adds `value`; false if it was already an element (the set keeps its element).
    #[inline]
    pub fn insert(&mut self, value: Value) -> bool {
        self.tree.insert(value, ()).is_none()
    }

    /// Adds `value`, which is above every element (building in order, as literals do).
    pub(crate) fn push_last(&mut self, value: Value) {
        self.tree.push_last(value, ());
    }

    /// Removes `value`; false if it was not an element.
    pub fn remove(&mut self, value: &Value) -> bool {
        self.tree.remove(value).is_some()
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Value> {
        self.tree.iter().map(|(value, ())| value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistent_tree::testing::{
        key_orders, keys_with_shared_starts, leaf_allocation, root_children, shared_root_children,
    };
    use std::collections::BTreeSet;

    #[test]
    fn a_leaf_fits_a_kibibyte() {
        assert!(leaf_allocation::<(), CAPACITY>() <= 1024);
    }

    /// Checks `set` against the model: length, order, elements and their absence.
    fn check(set: &ValueSet, model: &BTreeSet<Value>, probes: &[Value]) {
        assert_eq!(set.len(), model.len());
        assert_eq!(set.iter().len(), model.len());
        assert!(set.iter().eq(model.iter()), "the same elements in order");
        for probe in probes {
            assert_eq!(set.contains(probe), model.contains(probe));
        }
    }

    /// Inserts and removals in the given key order against std's B-tree set, with copies taken
    /// along the way (as `DUP` shares a set) that must not change when the set does.
    fn against_the_model(keys: &[Value], removals: &[Value]) {
        let mut set = ValueSet::new();
        let mut model = BTreeSet::new();
        let mut copies = Vec::new();
        for (index, key) in keys.iter().enumerate() {
            assert_eq!(set.insert(key.clone()), model.insert(key.clone()));
            if index % 997 == 0 {
                copies.push((set.clone(), model.clone()));
            }
        }
        check(&set, &model, &keys[..keys.len().min(500)]);
        for (index, key) in removals.iter().enumerate() {
            assert_eq!(set.remove(key), model.remove(key));
            if index % 1009 == 0 {
                copies.push((set.clone(), model.clone()));
                check(&set, &model, &removals[..removals.len().min(100)]);
            }
        }
        check(&set, &model, removals);
        for (copy, copy_model) in &copies {
            check(copy, copy_model, &keys[..keys.len().min(200)]);
        }
        for key in keys {
            set.remove(key);
        }
        assert!(set.is_empty());
        assert_eq!(set.iter().next(), None);
        assert!(set.insert(keys[0].clone()));
        check(&set, &BTreeSet::from([keys[0].clone()]), &keys[..1]);
    }

    #[test]
    fn sets_agree_with_a_model_in_every_order() {
        for (keys, removals) in key_orders() {
            against_the_model(&keys, &removals);
        }
    }

    #[test]
    fn sets_agree_with_a_model_when_prefixes_say_little() {
        for (keys, removals) in keys_with_shared_starts() {
            against_the_model(&keys, &removals);
        }
    }

    #[test]
    fn a_set_built_in_order_is_the_set_inserted_in_any_order() {
        let mut built = ValueSet::new();
        for n in 0..5_000 {
            built.push_last(Value::nat(n * 2));
        }
        let model: BTreeSet<Value> = (0..5_000).map(|n| Value::nat(n * 2)).collect();
        check(
            &built,
            &model,
            &(0..200).map(Value::nat).collect::<Vec<_>>(),
        );
    }

    #[test]
    fn a_write_to_a_shared_set_copies_only_its_path() {
        let mut set = ValueSet::new();
        for n in 0..100_000 {
            set.insert(Value::nat(n));
        }
        let copy = set.clone();
        set.insert(Value::nat(1_000_000));
        assert_eq!(
            shared_root_children(&set.tree, &copy.tree),
            root_children(&set.tree) - 1,
            "one child copied, the others shared"
        );
        assert_eq!(copy.len() + 1, set.len());
    }
}
