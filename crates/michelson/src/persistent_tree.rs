//! The persistent B+ tree under Michelson's sets and maps (`set.rs`, `map.rs`): comparable
//! keys in Michelson's order, each stored beside an order-preserving 64-bit prefix that searches
//! look at first, and a value per key (`()` for a set).
//!
//! Why persistent: `DUP` of a set or map is a reference-count increment, and Octez's sets and
//! maps are persistent AVL trees, so `DUP ; UPDATE` on n entries costs O(log n) there and is
//! charged as such. A collection that copied itself on the first write after a `DUP` would do
//! O(n) work for that charge. Here nodes sit behind `Rc`s and a write copies only the nodes on
//! its path that are shared ([`unshare`]): O(log n) nodes of at most `N` entries; an
//! unshared tree is updated in place.
//!
//! Why a prefix: comparing two [`Value`]s tests both tags, then both integer representations,
//! before comparing numbers. Each node keeps its keys' prefixes in an array of their own, and a
//! search counts the prefixes below the sought key's in one pass without branches (the loads are
//! independent, so a node's cache misses overlap instead of following one another as a halving
//! search's do); only the keys whose prefix equals the sought key's (usually none or one) are
//! compared in full. The prefix is monotone: `prefix(a) < prefix(b)` implies `a < b`, so ordering
//! by `(prefix, key)` is exactly Michelson's order on the keys. Gas does not depend on the
//! representation.
//!
//! Shape: leaves hold the entries (keys, and values in an array beside them, so that a search
//! walks keys only), branches hold separators (`keys[i]` is above every key of `children[i]` and
//! at or below every key of `children[i + 1]`). A node's arrays are inline in it (a leaf is one
//! allocation, one place in memory). A full node splits in two halves, except at the right edge
//! of the tree where it splits off only the new entry, so that keys added in increasing order
//! (the common way to build a set or map, and the only way `MAP` and literals build one) fill
//! their leaves. Removal drops nodes that become empty and does not rebalance: a node is entered
//! only through a split, so the depth stays logarithmic in the number of insertions (6 levels for
//! the 20 M entries a 1,040,000-gas operation could add at most), and the recursion of `insert`
//! and `remove`, and of the drop glue, is bounded by it.

use crate::int::Int;
use crate::literals::{Address, Destination, KeyHash};
use crate::value::Value;
use arrayvec::ArrayVec;
use std::rc::Rc;

/// Keys in Michelson's order, each with a value kept in `S`; at most `N` entries per node
/// (entries of a leaf, children of a branch). Wider nodes make a write to a shared tree copy more (a node per
/// level) and a scattered insertion move more; each user picks the widest `N` for which its
/// leaf, with the `Rc`'s counts, fits one allocator size class.
#[derive(Clone)]
pub(crate) struct Tree<S: Values, const N: usize> {
    root: Rc<Node<S, N>>,
    len: usize,
}

/// The values a leaf keeps beside its keys, at their keys' positions: an array for a map, nothing
/// at all for a set (so that a set's leaf does no work for them).
pub(crate) trait Values: Clone + Default {
    /// The value of one key.
    type Value: Clone;
    /// Inserts `value` at `index`, shifting the values from there on.
    fn insert_value(&mut self, index: usize, value: Self::Value);
    /// Removes the value at `index`, shifting the values after it.
    fn remove_value(&mut self, index: usize) -> Self::Value;
    /// The values from `at` on, moved out.
    fn split_values(&mut self, at: usize) -> Self;
    /// The value at `index`.
    fn value(&self, index: usize) -> &Self::Value;
    /// The value at `index`, to replace.
    fn value_mut(&mut self, index: usize) -> &mut Self::Value;
}

/// A set's leaf keeps no values.
impl Values for () {
    type Value = ();
    #[inline(always)]
    fn insert_value(&mut self, _: usize, (): ()) {}
    #[inline(always)]
    fn remove_value(&mut self, _: usize) {}
    #[inline(always)]
    fn split_values(&mut self, _: usize) {}
    #[inline(always)]
    fn value(&self, _: usize) -> &() {
        &()
    }
    #[inline(always)]
    fn value_mut(&mut self, _: usize) -> &mut () {
        self
    }
}

impl<T: Clone, const N: usize> Values for ArrayVec<T, N> {
    type Value = T;
    fn insert_value(&mut self, index: usize, value: T) {
        self.insert(index, value);
    }
    fn remove_value(&mut self, index: usize) -> T {
        self.remove(index)
    }
    fn split_values(&mut self, at: usize) -> Self {
        split_off(self, at)
    }
    fn value(&self, index: usize) -> &T {
        &self[index]
    }
    fn value_mut(&mut self, index: usize) -> &mut T {
        &mut self[index]
    }
}

/// A node; branches are boxed so that a leaf (most nodes) takes its own size, not a branch's,
/// and keeps its entries in the allocation its `Rc` points to.
#[allow(clippy::large_enum_variant)]
enum Node<S: Values, const N: usize> {
    Leaf(Leaf<S, N>),
    Branch(Box<Branch<S, N>>),
}

/// Entries in increasing order of key: keys with their prefixes, and their values.
struct Leaf<S: Values, const N: usize> {
    prefixes: ArrayVec<u64, N>,
    keys: ArrayVec<Value, N>,
    values: S,
}

/// Children in increasing order, separated by `keys` (one fewer than the children), with the
/// keys' prefixes.
struct Branch<S: Values, const N: usize> {
    prefixes: ArrayVec<u64, N>,
    keys: ArrayVec<Value, N>,
    children: ArrayVec<Rc<Node<S, N>>, N>,
}

/// What an insertion below a node did.
enum Insertion<S: Values, const N: usize> {
    /// The key was there: its value was replaced by the new one, this is the old one.
    Replaced(S::Value),
    /// Added without splitting the node.
    Added,
    /// Added, and the node split: `right` goes after it, separated by `key`.
    Split {
        prefix: u64,
        key: Value,
        right: Rc<Node<S, N>>,
    },
}

/// The positions `first..end` of the entries whose prefix is `prefix` in `prefixes` (sorted):
/// every entry before `first` is below a key with that prefix, every entry from `end` on above
/// it.
#[inline]
fn prefix_run(prefixes: &[u64], prefix: u64) -> (usize, usize) {
    if prefixes.last().is_none_or(|&last| last < prefix) {
        // Appending at the end, the common case when a tree is built in order.
        return (prefixes.len(), prefixes.len());
    }
    let mut below = 0;
    let mut at_or_below = 0;
    for &other in prefixes {
        below += usize::from(other < prefix);
        at_or_below += usize::from(other <= prefix);
    }
    (below, at_or_below)
}

/// The second half of `entries` (from `half` on), moved out.
fn split_off<T, const N: usize>(entries: &mut ArrayVec<T, N>, half: usize) -> ArrayVec<T, N> {
    entries.drain(half..).collect()
}

impl<S: Values, const N: usize> Leaf<S, N> {
    fn new() -> Leaf<S, N> {
        Leaf {
            prefixes: ArrayVec::new(),
            keys: ArrayVec::new(),
            values: S::default(),
        }
    }

    /// The position of `key` (`Ok`) or where it would go (`Err`).
    #[inline]
    fn find(&self, key: &Value, prefix: u64) -> Result<usize, usize> {
        let (first, end) = prefix_run(&self.prefixes, prefix);
        match self.keys[first..end].binary_search(key) {
            Ok(index) => Ok(first + index),
            Err(index) => Err(first + index),
        }
    }

    fn insert_at(&mut self, index: usize, prefix: u64, key: Value, value: S::Value) {
        self.prefixes.insert(index, prefix);
        self.keys.insert(index, key);
        self.values.insert_value(index, value);
    }

    fn insert<const LAST: bool>(
        &mut self,
        prefix: u64,
        key: Value,
        value: S::Value,
        rightmost: bool,
    ) -> Insertion<S, N> {
        let index = if LAST {
            self.keys.len()
        } else {
            match self.find(&key, prefix) {
                Ok(index) => {
                    return Insertion::Replaced(std::mem::replace(
                        self.values.value_mut(index),
                        value,
                    ))
                }
                Err(index) => index,
            }
        };
        if !self.keys.is_full() {
            self.insert_at(index, prefix, key, value);
            return Insertion::Added;
        }
        let mut right = Leaf::new();
        if rightmost && index == N {
            right.insert_at(0, prefix, key, value);
        } else {
            let half = N / 2;
            right.prefixes = split_off(&mut self.prefixes, half);
            right.keys = split_off(&mut self.keys, half);
            right.values = self.values.split_values(half);
            if index <= half {
                self.insert_at(index, prefix, key, value);
            } else {
                right.insert_at(index - half, prefix, key, value);
            }
        }
        Insertion::Split {
            prefix: right.prefixes[0],
            key: right.keys[0].clone(),
            right: Rc::new(Node::Leaf(right)),
        }
    }

    /// Removes `key`'s entry, returning its value.
    fn remove(&mut self, key: &Value, prefix: u64) -> Option<S::Value> {
        let index = self.find(key, prefix).ok()?;
        self.prefixes.remove(index);
        self.keys.remove(index);
        Some(self.values.remove_value(index))
    }
}

impl<S: Values, const N: usize> Branch<S, N> {
    fn new() -> Branch<S, N> {
        Branch {
            prefixes: ArrayVec::new(),
            keys: ArrayVec::new(),
            children: ArrayVec::new(),
        }
    }

    /// The child whose range holds `key`: the number of separators at or below it.
    #[inline]
    fn route(&self, key: &Value, prefix: u64) -> usize {
        let (first, end) = prefix_run(&self.prefixes, prefix);
        first + self.keys[first..end].partition_point(|separator| separator <= key)
    }

    fn insert_at(&mut self, index: usize, prefix: u64, key: Value, right: Rc<Node<S, N>>) {
        self.prefixes.insert(index, prefix);
        self.keys.insert(index, key);
        self.children.insert(index + 1, right);
    }

    fn insert<const LAST: bool>(
        &mut self,
        prefix: u64,
        key: Value,
        value: S::Value,
        rightmost: bool,
    ) -> Insertion<S, N> {
        let index = if LAST {
            self.children.len() - 1
        } else {
            self.route(&key, prefix)
        };
        let child_rightmost = rightmost && index + 1 == self.children.len();
        let (prefix, key, right) = match insert::<S, N, LAST>(
            &mut self.children[index],
            prefix,
            key,
            value,
            child_rightmost,
        ) {
            Insertion::Split { prefix, key, right } => (prefix, key, right),
            done => return done,
        };
        if !self.children.is_full() {
            self.insert_at(index, prefix, key, right);
            return Insertion::Added;
        }
        let mut upper = Branch::new();
        if rightmost && index + 1 == N {
            // The right edge grows by one child: start a branch holding only it.
            upper.children.push(right);
            return Insertion::Split {
                prefix,
                key,
                right: Rc::new(Node::Branch(Box::new(upper))),
            };
        }
        // Split in halves of children; the separator between them goes up, then the new child
        // goes into its half (child `index + 1`, after separator `index`).
        let half = N / 2;
        upper.prefixes = split_off(&mut self.prefixes, half);
        upper.keys = split_off(&mut self.keys, half);
        upper.children = split_off(&mut self.children, half);
        let (Some(up_prefix), Some(up_key)) = (self.prefixes.pop(), self.keys.pop()) else {
            unreachable!("a full branch has separators");
        };
        if index < half {
            self.insert_at(index, prefix, key, right);
        } else {
            upper.insert_at(index - half, prefix, key, right);
        }
        Insertion::Split {
            prefix: up_prefix,
            key: up_key,
            right: Rc::new(Node::Branch(Box::new(upper))),
        }
    }

    /// Removes `key`'s entry below this branch, returning its value.
    fn remove(&mut self, key: &Value, prefix: u64) -> Option<S::Value> {
        let index = self.route(key, prefix);
        let removed = remove(&mut self.children[index], key, prefix)?;
        if self.children[index].is_empty() {
            self.children.remove(index);
            // The separator on either side of the removed child separates its neighbours as well.
            let separator = index.saturating_sub(1);
            if separator < self.keys.len() {
                self.keys.remove(separator);
                self.prefixes.remove(separator);
            }
        }
        Some(removed)
    }
}

impl<S: Values, const N: usize> Node<S, N> {
    fn is_empty(&self) -> bool {
        match self {
            Node::Leaf(leaf) => leaf.keys.is_empty(),
            Node::Branch(branch) => branch.children.is_empty(),
        }
    }
}

/// Adds `key` with `value` below `node`, copying the node first if it is shared: where the
/// key's order puts it (replacing an equal key's value), or with `LAST` after every key (the
/// caller knows the key is above them all). `rightmost`: the node is on the tree's right edge.
fn insert<S: Values, const N: usize, const LAST: bool>(
    node: &mut Rc<Node<S, N>>,
    prefix: u64,
    key: Value,
    value: S::Value,
    rightmost: bool,
) -> Insertion<S, N> {
    match unshare(node) {
        Node::Leaf(leaf) => leaf.insert::<LAST>(prefix, key, value, rightmost),
        Node::Branch(branch) => branch.insert::<LAST>(prefix, key, value, rightmost),
    }
}

/// Removes `key`'s entry below `node`, copying the node first if it is shared; its value, if
/// the key was there.
fn remove<S: Values, const N: usize>(
    node: &mut Rc<Node<S, N>>,
    key: &Value,
    prefix: u64,
) -> Option<S::Value> {
    match unshare(node) {
        Node::Leaf(leaf) => leaf.remove(key, prefix),
        Node::Branch(branch) => branch.remove(key, prefix),
    }
}

/// `node`, copied first if it is shared (`Rc::make_mut`'s job). The copy's entries are cloned
/// straight into its new allocation: a clone built on the stack and moved into an `Rc`, as
/// `Rc::make_mut` does, copied the 1 KiB node three to four times more (a fifth of the
/// instructions of a write to a shared map).
fn unshare<S: Values, const N: usize>(node: &mut Rc<Node<S, N>>) -> &mut Node<S, N> {
    if Rc::get_mut(node).is_none() {
        let mut copy: Rc<Node<S, N>> = Rc::new(match &**node {
            Node::Leaf(_) => Node::Leaf(Leaf::new()),
            Node::Branch(_) => Node::Branch(Box::new(Branch::new())),
        });
        match (Rc::get_mut(&mut copy), &**node) {
            (Some(Node::Leaf(copy)), Node::Leaf(leaf)) => {
                copy.prefixes.clone_from(&leaf.prefixes);
                copy.keys.clone_from(&leaf.keys);
                copy.values.clone_from(&leaf.values);
            }
            (Some(Node::Branch(copy)), Node::Branch(branch)) => {
                copy.prefixes.clone_from(&branch.prefixes);
                copy.keys.clone_from(&branch.keys);
                copy.children.clone_from(&branch.children);
            }
            _ => unreachable!("a fresh node of the same kind"),
        }
        *node = copy;
    }
    Rc::get_mut(node).unwrap_or_else(|| unreachable!("the node was just unshared"))
}

fn empty_leaf<S: Values, const N: usize>() -> Rc<Node<S, N>> {
    Rc::new(Node::Leaf(Leaf::new()))
}

/// An integer's prefix: its `i64` value with the sign bit flipped (so unsigned order is signed
/// order); a big value (beyond every `i64`) takes the extreme on the side of its sign, which it
/// shares with `i64::MIN` or `i64::MAX` (equal prefixes are compared in full).
fn int_prefix(n: &Int) -> u64 {
    match n {
        Int::Small(n) => (*n as u64) ^ (1 << 63),
        Int::Big(n) if n.sign() == num_bigint::Sign::Minus => 0,
        Int::Big(_) => u64::MAX,
    }
}

/// The first 7 bytes of `bytes` (at least 7 long), big-endian, in the low 56 bits.
fn seven_bytes(bytes: &[u8]) -> u64 {
    let mut first = [0u8; 8];
    first[1..].copy_from_slice(&bytes[..7]);
    u64::from_be_bytes(first)
}

/// A byte string's prefix: its first 8 bytes, big-endian, padded with zeros. Michelson orders
/// strings and bytes lexicographically, a proper prefix first; padding with the smallest byte
/// keeps that order (a string and its extension by zero bytes share a prefix, compared in full).
fn bytes_prefix(bytes: &[u8]) -> u64 {
    let mut first = [0u8; 8];
    let n = bytes.len().min(8);
    first[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(first)
}

/// A key hash's prefix: its kind, then the first 7 bytes of the hash (the fields' order).
fn key_hash_prefix(hash: &KeyHash) -> u64 {
    (u64::from(hash.kind) << 56) | seven_bytes(&hash.hash)
}

/// An address's prefix: the kind of destination in the top 2 bits, then an implicit account's
/// key kind (kinds from 63 on share 63) and the first 7 bytes of the hash.
fn address_prefix(address: &Address) -> u64 {
    match &address.destination {
        Destination::Implicit(hash) => {
            (u64::from(hash.kind.min(63)) << 56) | seven_bytes(&hash.hash)
        }
        Destination::Originated(hash) => (1 << 62) | seven_bytes(hash),
        Destination::SmartRollup(hash) => (2 << 62) | seven_bytes(hash),
    }
}

/// The prefix of a key: from its leftmost component for pairs (compared first), 0 for types
/// without a cheap one (every comparison of two such keys is a full one).
fn prefix(key: &Value) -> u64 {
    let mut key = key;
    loop {
        return match key {
            Value::Int(n) | Value::Nat(n) | Value::Timestamp(n) => int_prefix(n),
            Value::Mutez(n) => (*n as u64) ^ (1 << 63),
            Value::Bool(b) => u64::from(*b),
            Value::String(s) => bytes_prefix(s.as_bytes()),
            Value::Bytes(b) => bytes_prefix(b),
            Value::KeyHash(hash) => key_hash_prefix(hash),
            Value::Address(address) => address_prefix(address),
            Value::Pair(pair) => {
                key = &pair.0;
                continue;
            }
            _ => 0,
        };
    }
}

impl<S: Values, const N: usize> Default for Tree<S, N> {
    fn default() -> Tree<S, N> {
        Tree {
            root: empty_leaf(),
            len: 0,
        }
    }
}

impl<S: Values, const N: usize> Tree<S, N> {
    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The value of `key`, if it is there.
    pub(crate) fn get(&self, key: &Value) -> Option<&S::Value> {
        let prefix = prefix(key);
        let mut node = &*self.root;
        loop {
            match node {
                Node::Leaf(leaf) => {
                    return leaf.find(key, prefix).ok().map(|i| leaf.values.value(i))
                }
                Node::Branch(branch) => node = &branch.children[branch.route(key, prefix)],
            }
        }
    }

    /// Binds `key` to `value`; the value it replaces, if the key was there (the tree keeps its
    /// key).
    #[inline]
    pub(crate) fn insert(&mut self, key: Value, value: S::Value) -> Option<S::Value> {
        self.insert_in::<false>(key, value)
    }

    /// Binds `key`, which is above every key of the tree, to `value`: no comparison on the way
    /// (building in order, as `MAP` and literals do).
    pub(crate) fn push_last(&mut self, key: Value, value: S::Value) {
        debug_assert!(self.last_key().is_none_or(|last| *last < key));
        self.insert_in::<true>(key, value);
    }

    #[inline]
    fn insert_in<const LAST: bool>(&mut self, key: Value, value: S::Value) -> Option<S::Value> {
        let prefix = prefix(&key);
        match insert::<S, N, LAST>(&mut self.root, prefix, key, value, true) {
            Insertion::Replaced(old) => return Some(old),
            Insertion::Added => {}
            Insertion::Split { prefix, key, right } => {
                let mut root = Branch::new();
                root.prefixes.push(prefix);
                root.keys.push(key);
                root.children.push(Rc::clone(&self.root));
                root.children.push(right);
                self.root = Rc::new(Node::Branch(Box::new(root)));
            }
        }
        self.len += 1;
        None
    }

    /// The greatest key, if any.
    fn last_key(&self) -> Option<&Value> {
        let mut node = &*self.root;
        loop {
            match node {
                Node::Leaf(leaf) => return leaf.keys.last(),
                Node::Branch(branch) => node = branch.children.last()?,
            }
        }
    }

    /// Removes `key`; its value, if it was there.
    pub(crate) fn remove(&mut self, key: &Value) -> Option<S::Value> {
        let removed = remove(&mut self.root, key, prefix(key))?;
        self.len -= 1;
        // A root left with one child (or none) gives way to it.
        while let Node::Branch(branch) = &*self.root {
            if branch.children.len() > 1 {
                break;
            }
            self.root = branch.children.first().cloned().unwrap_or_else(empty_leaf);
        }
        Some(removed)
    }

    /// The entries in increasing order of key.
    pub(crate) fn iter(&self) -> Iter<'_, S, N> {
        let mut iter = Iter {
            branches: Vec::new(),
            leaf: None,
            index: 0,
            remaining: self.len,
        };
        iter.descend(&self.root);
        iter
    }
}

/// The entries of a [`Tree`] in increasing order of key.
pub(crate) struct Iter<'a, S: Values, const N: usize> {
    /// The branches above the current leaf, each with the index of the child being walked.
    branches: Vec<(&'a Branch<S, N>, usize)>,
    /// The current leaf, and the position of its next entry.
    leaf: Option<&'a Leaf<S, N>>,
    index: usize,
    remaining: usize,
}

impl<'a, S: Values, const N: usize> Iter<'a, S, N> {
    /// Walks down to the first leaf below `node`.
    fn descend(&mut self, mut node: &'a Node<S, N>) {
        loop {
            match node {
                Node::Leaf(leaf) => {
                    self.leaf = Some(leaf);
                    self.index = 0;
                    return;
                }
                Node::Branch(branch) => {
                    self.branches.push((&**branch, 0));
                    node = &branch.children[0];
                }
            }
        }
    }
}

impl<'a, S: Values, const N: usize> Iterator for Iter<'a, S, N> {
    type Item = (&'a Value, &'a S::Value);

    fn next(&mut self) -> Option<(&'a Value, &'a S::Value)> {
        loop {
            if let Some(leaf) = self.leaf {
                if let Some(key) = leaf.keys.get(self.index) {
                    let value = leaf.values.value(self.index);
                    self.index += 1;
                    self.remaining -= 1;
                    return Some((key, value));
                }
            }
            let (branch, index) = self.branches.pop()?;
            if let Some(child) = branch.children.get(index + 1) {
                self.branches.push((branch, index + 1));
                self.descend(child);
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<S: Values, const N: usize> ExactSizeIterator for Iter<'_, S, N> {}

/// Size and sharing checks for the users' trees.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The bytes of a leaf's allocation: `Rc`'s two counts, then the node.
    pub(crate) fn leaf_allocation<S: Values, const N: usize>() -> usize {
        2 * std::mem::size_of::<usize>() + std::mem::size_of::<Node<S, N>>()
    }

    /// How many of the root's children two trees share (after a write to one of them).
    pub(crate) fn shared_root_children<S: Values, const N: usize>(
        a: &Tree<S, N>,
        b: &Tree<S, N>,
    ) -> usize {
        let (Node::Branch(a), Node::Branch(b)) = (&*a.root, &*b.root) else {
            panic!("both trees have branches");
        };
        a.children
            .iter()
            .zip(&b.children)
            .filter(|&(a, b)| Rc::ptr_eq(a, b))
            .count()
    }

    /// The number of the root's children.
    pub(crate) fn root_children<S: Values, const N: usize>(tree: &Tree<S, N>) -> usize {
        match &*tree.root {
            Node::Branch(branch) => branch.children.len(),
            Node::Leaf(_) => 0,
        }
    }

    /// A deterministic stream of numbers (a linear congruential generator).
    pub(crate) fn numbers(seed: u64) -> impl Iterator<Item = u64> {
        let mut state = seed;
        std::iter::repeat_with(move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    /// Values of each prefixed type, in Michelson's order, including neighbours that share a
    /// prefix (so the fallback to the full comparison is what orders them).
    fn ordered_lists() -> Vec<Vec<Value>> {
        let big = |text: &str| Int::from(text.parse::<BigInt>().expect("a decimal integer"));
        let ints = |wrap: fn(Int) -> Value| {
            vec![
                wrap(big("-100000000000000000000")),
                wrap(big("-9223372036854775809")),
                wrap(Int::Small(i64::MIN)),
                wrap(Int::Small(-1)),
                wrap(Int::Small(0)),
                wrap(Int::Small(1)),
                wrap(Int::Small(i64::MAX)),
                wrap(big("9223372036854775808")),
                wrap(big("100000000000000000000")),
            ]
        };
        let bytes = |items: &[&[u8]]| {
            items
                .iter()
                .map(|b| Value::Bytes(Rc::from(*b)))
                .collect::<Vec<_>>()
        };
        let strings = |items: &[&str]| {
            items
                .iter()
                .map(|s| Value::String(Rc::from(*s)))
                .collect::<Vec<_>>()
        };
        let hash = |first: u8, eighth: u8| {
            let mut hash = [0u8; 20];
            hash[0] = first;
            hash[7] = eighth;
            hash
        };
        let key_hash = |kind: u8, first: u8, eighth: u8| KeyHash {
            kind,
            hash: hash(first, eighth),
        };
        let address = |destination: Destination, entrypoint: &str| {
            Value::Address(Rc::new(Address {
                destination,
                entrypoint: entrypoint.to_string(),
            }))
        };
        vec![
            ints(Value::Int),
            ints(Value::Timestamp),
            vec![Value::Mutez(0), Value::Mutez(1), Value::Mutez(i64::MAX)],
            vec![Value::Bool(false), Value::Bool(true)],
            bytes(&[
                b"",
                b"\0",
                b"\0\0",
                b"ab",
                b"ab\0",
                b"ab\0\x01",
                b"abcdefgh",
                b"abcdefgh\0",
                b"abcdefghi",
                b"abcdefgi",
                b"\xff",
            ]),
            strings(&["", "a", "abcdefgh", "abcdefgh0", "abcdefgh1", "b"]),
            vec![
                Value::KeyHash(key_hash(0, 0, 0)),
                Value::KeyHash(key_hash(0, 0, 1)),
                Value::KeyHash(key_hash(0, 1, 0)),
                Value::KeyHash(key_hash(1, 0, 0)),
                Value::KeyHash(key_hash(3, 255, 255)),
            ],
            vec![
                address(Destination::Implicit(key_hash(0, 0, 0)), ""),
                address(Destination::Implicit(key_hash(0, 0, 0)), "a"),
                address(Destination::Implicit(key_hash(0, 0, 1)), ""),
                address(Destination::Implicit(key_hash(2, 0, 0)), ""),
                address(Destination::Originated(hash(0, 0)), ""),
                address(Destination::Originated(hash(0, 0)), "b"),
                address(Destination::Originated(hash(0, 5)), ""),
                address(Destination::Originated(hash(9, 0)), ""),
                address(Destination::SmartRollup(hash(0, 0)), ""),
                address(Destination::SmartRollup(hash(0, 1)), ""),
            ],
            vec![
                Value::pair(Value::Int(Int::Small(1)), Value::Int(Int::Small(5))),
                Value::pair(Value::Int(Int::Small(1)), Value::Int(Int::Small(6))),
                Value::pair(Value::Int(Int::Small(2)), Value::Int(Int::Small(0))),
            ],
        ]
    }

    #[test]
    fn the_prefix_is_monotone_and_the_tree_keeps_michelsons_order() {
        for list in ordered_lists() {
            for (i, a) in list.iter().enumerate() {
                for (j, b) in list.iter().enumerate() {
                    assert_eq!(a.cmp(b), i.cmp(&j), "the list is in Michelson's order");
                    if prefix(a) < prefix(b) {
                        assert!(a < b, "a smaller prefix belongs to a smaller key");
                    }
                }
            }
            // Narrow nodes, so that even these short lists split.
            let mut tree: Tree<ArrayVec<usize, 4>, 4> = Tree::default();
            for (index, key) in list.iter().enumerate().rev() {
                assert_eq!(tree.insert(key.clone(), index), None);
            }
            assert_eq!(tree.insert(list[0].clone(), 100), Some(0));
            assert_eq!(tree.len(), list.len());
            assert!(tree.iter().zip(&list).all(|((a, _), b)| a.cmp(b).is_eq()));
            assert_eq!(tree.get(&list[0]), Some(&100));
            assert_eq!(tree.get(&list[1]), Some(&1));
            assert_eq!(tree.remove(&list[1]), Some(1));
            assert_eq!(tree.get(&list[1]), None);
            assert_eq!(tree.remove(&list[1]), None);
            assert_eq!(tree.len(), list.len() - 1);
            let mut built: Tree<ArrayVec<usize, 4>, 4> = Tree::default();
            for (index, key) in list.iter().enumerate() {
                built.push_last(key.clone(), index);
            }
            assert!(built.iter().map(|(_, &v)| v).eq(0..list.len()));
            assert!(list
                .iter()
                .enumerate()
                .all(|(i, key)| built.get(key) == Some(&i)));
        }
    }

    #[test]
    fn the_prefix_run_is_the_range_of_equal_prefixes() {
        let prefixes: Vec<u64> = (0..40).map(|i| i / 3 * 2).collect();
        for length in 0..prefixes.len() {
            let slice = &prefixes[..length];
            for prefix in 0..30 {
                let below = slice.iter().filter(|&&other| other < prefix).count();
                let at_or_below = slice.iter().filter(|&&other| other <= prefix).count();
                assert_eq!(prefix_run(slice, prefix), (below, at_or_below));
            }
        }
    }
}
