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
    root: Node<S, N>,
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

/// A node: a shared leaf or branch. The kind sits beside the pointer (in the parent's array of
/// children), so a search knows what it descends into before it reaches it, and each kind takes
/// its own size: a leaf keeps its entries in the one allocation its `Rc` points to, sized to a
/// class of the allocator, and a branch (larger) does not widen it.
#[derive(Clone)]
enum Node<S: Values, const N: usize> {
    Leaf(Rc<Leaf<S, N>>),
    Branch(Rc<Branch<S, N>>),
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
    children: ArrayVec<Node<S, N>, N>,
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
        right: Node<S, N>,
    },
}

/// Whether `prefix` is above every one of `prefixes` (sorted): the key goes after every entry,
/// the common case when a tree is built in order.
#[inline]
fn past_every(prefixes: &[u64], prefix: u64) -> bool {
    prefixes.last().is_none_or(|&last| last < prefix)
}

/// The positions `first..end` of the entries whose prefix is `prefix` in `prefixes` (sorted):
/// every entry before `first` is below a key with that prefix, every entry from `end` on above
/// it.
#[inline]
fn prefix_run(prefixes: &[u64], prefix: u64) -> (usize, usize) {
    if past_every(prefixes, prefix) {
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
            right: Node::Leaf(Rc::new(right)),
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
        if past_every(&self.prefixes, prefix) {
            // The last child, with no child's line to load early.
            return self.prefixes.len();
        }
        self.touch_children();
        let (first, end) = prefix_run(&self.prefixes, prefix);
        first + self.keys[first..end].partition_point(|separator| separator <= key)
    }

    /// Loads a word of each cache line of the children's array while the prefixes are searched:
    /// the child's line is then on its way before the search says which child it is. In a large
    /// tree both are cache misses, and without this they come one after the other at every level.
    #[inline]
    fn touch_children(&self) {
        for child in self.children.iter().step_by(4) {
            std::hint::black_box(child.address());
        }
    }

    fn insert_at(&mut self, index: usize, prefix: u64, key: Value, right: Node<S, N>) {
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
                right: Node::Branch(Rc::new(upper)),
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
            right: Node::Branch(Rc::new(upper)),
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
    /// The node's address (loads the pointer, not the node).
    #[inline]
    fn address(&self) -> *const () {
        match self {
            Node::Leaf(leaf) => Rc::as_ptr(leaf).cast(),
            Node::Branch(branch) => Rc::as_ptr(branch).cast(),
        }
    }

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
    node: &mut Node<S, N>,
    prefix: u64,
    key: Value,
    value: S::Value,
    rightmost: bool,
) -> Insertion<S, N> {
    match node {
        Node::Leaf(leaf) => unshare(leaf).insert::<LAST>(prefix, key, value, rightmost),
        Node::Branch(branch) => unshare(branch).insert::<LAST>(prefix, key, value, rightmost),
    }
}

/// Removes `key`'s entry below `node`, copying the node first if it is shared; its value, if
/// the key was there.
fn remove<S: Values, const N: usize>(
    node: &mut Node<S, N>,
    key: &Value,
    prefix: u64,
) -> Option<S::Value> {
    match node {
        Node::Leaf(leaf) => unshare(leaf).remove(key, prefix),
        Node::Branch(branch) => unshare(branch).remove(key, prefix),
    }
}

/// A kind of node whose copy is filled in place (see [`unshare`]).
trait Entries {
    /// A node without entries.
    fn empty() -> Self;
    /// Makes this (empty) node hold clones of `other`'s entries.
    fn clone_entries_from(&mut self, other: &Self);
}

impl<S: Values, const N: usize> Entries for Leaf<S, N> {
    fn empty() -> Self {
        Leaf::new()
    }

    fn clone_entries_from(&mut self, other: &Self) {
        self.prefixes.clone_from(&other.prefixes);
        self.keys.clone_from(&other.keys);
        self.values.clone_from(&other.values);
    }
}

impl<S: Values, const N: usize> Entries for Branch<S, N> {
    fn empty() -> Self {
        Branch::new()
    }

    fn clone_entries_from(&mut self, other: &Self) {
        self.prefixes.clone_from(&other.prefixes);
        self.keys.clone_from(&other.keys);
        self.children.clone_from(&other.children);
    }
}

/// `node`, copied first if it is shared (`Rc::make_mut`'s job). The copy's entries are cloned
/// straight into its new allocation: a clone built on the stack and moved into an `Rc`, as
/// `Rc::make_mut` does, copied the 1 KiB node three to four times more (a fifth of the
/// instructions of a write to a shared map).
fn unshare<T: Entries>(node: &mut Rc<T>) -> &mut T {
    if Rc::get_mut(node).is_none() {
        let mut copy = Rc::new(T::empty());
        Rc::get_mut(&mut copy)
            .unwrap_or_else(|| unreachable!("a fresh node is not shared"))
            .clone_entries_from(node);
        *node = copy;
    }
    Rc::get_mut(node).unwrap_or_else(|| unreachable!("the node was just unshared"))
}

fn empty_leaf<S: Values, const N: usize>() -> Node<S, N> {
    Node::Leaf(Rc::new(Leaf::new()))
}

/// The bits of a value's prefix as they are written: the encodings of its components in the
/// order Michelson compares them, each encoding order-preserving and, while the prefix goes on,
/// prefix-free (no encoding is the start of another), so that comparing two prefixes byte by
/// byte compares the components one after the other. A component with no exact short encoding
/// (a big integer, a string, a key) writes what orders it and ends the prefix; the rest stays
/// zero, and values whose prefixes are equal are compared in full.
struct PrefixBits {
    /// The bits written, from the top.
    bits: u128,
    /// How many are written.
    len: u32,
}

impl PrefixBits {
    /// Appends the low `width` bits of `encoding` (`width` at most 72, a whole number of bytes);
    /// true if there is room for more.
    #[inline]
    fn push(&mut self, encoding: u128, width: u32) -> bool {
        if width > 0 && self.len < 64 {
            self.bits |= (encoding << (128 - width)) >> self.len;
            self.len += width;
        }
        self.len < 64
    }

    /// Appends the start of an encoding that does not determine the value: the prefix ends.
    fn end_with(&mut self, encoding: u128, width: u32) -> bool {
        self.push(encoding, width);
        false
    }

    /// Appends the first 8 bytes of `bytes`, padded with zeros (the smallest byte, so a string
    /// and its extension by zero bytes share a prefix and are compared in full); the prefix ends.
    fn end_with_bytes(&mut self, bytes: &[u8]) -> bool {
        let n = bytes.len().min(8);
        let mut first = [0u8; 8];
        first[..n].copy_from_slice(&bytes[..n]);
        self.end_with(u128::from(u64::from_be_bytes(first)), 64)
    }

    /// Appends `value`'s encoding; true if it was exact and the prefix may go on.
    fn push_value(&mut self, value: &Value) -> bool {
        match value {
            Value::Unit => true,
            Value::Bool(b) => self.push(u128::from(*b), 8),
            Value::Int(n) | Value::Nat(n) | Value::Timestamp(n) => match n {
                Int::Small(n) => self.push_small_int(*n),
                // Below and above every small integer's header; which big value is larger is
                // left to the full comparison.
                Int::Big(n) if n.sign() == num_bigint::Sign::Minus => self.end_with(0x00, 8),
                Int::Big(_) => self.end_with(0xff, 8),
            },
            Value::Mutez(n) => self.push_small_int(*n),
            Value::String(s) => self.end_with_bytes(s.as_bytes()),
            Value::Bytes(b) => self.end_with_bytes(b),
            Value::KeyHash(hash) => self.end_with(u128::from(key_hash_prefix(hash)), 64),
            Value::Address(address) => self.end_with(u128::from(address_prefix(address)), 64),
            Value::Pair(pair) => self.push_value(&pair.0) && self.push_value(&pair.1),
            Value::Left(inner) => self.push(0, 8) && self.push_value(inner),
            Value::Right(inner) => self.push(1, 8) && self.push_value(inner),
            Value::None => self.push(0, 8),
            Value::Some(inner) => self.push(1, 8) && self.push_value(inner),
            _ => false,
        }
    }

    /// An `i64` as a header byte and its magnitude's significant bytes, big-endian: the header
    /// orders by sign and length (0x80 + length for the non-negative, 0x7f − length for the
    /// negative, whose bytes are complemented so that a larger magnitude sorts lower), and says
    /// where the encoding ends.
    #[inline]
    fn push_small_int(&mut self, n: i64) -> bool {
        let magnitude = n.unsigned_abs();
        let length = 8 - magnitude.leading_zeros() / 8;
        let width = 8 * length;
        let (header, body) = if n >= 0 {
            (0x80 + length, magnitude)
        } else {
            (0x7f - length, !magnitude)
        };
        let body = u128::from(body) & ((1u128 << width) - 1);
        self.push((u128::from(header) << width) | body, width + 8)
    }
}

/// The first 7 bytes of `bytes` (at least 7 long), big-endian, in the low 56 bits.
fn seven_bytes(bytes: &[u8]) -> u64 {
    let mut first = [0u8; 8];
    first[1..].copy_from_slice(&bytes[..7]);
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

/// The prefix of a key: the first 8 bytes of its components' encodings ([`PrefixBits`]), so
/// that the components after the first (the right of a pair whose left is the same in every
/// key, say) still tell keys apart without a full comparison.
fn prefix(key: &Value) -> u64 {
    let mut prefix = PrefixBits { bits: 0, len: 0 };
    prefix.push_value(key);
    (prefix.bits >> 64) as u64
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
        let mut node = &self.root;
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
                root.children.push(self.root.clone());
                root.children.push(right);
                self.root = Node::Branch(Rc::new(root));
            }
        }
        self.len += 1;
        None
    }

    /// The greatest key, if any.
    fn last_key(&self) -> Option<&Value> {
        let mut node = &self.root;
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
        while let Node::Branch(branch) = &self.root {
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
        2 * std::mem::size_of::<usize>() + std::mem::size_of::<Leaf<S, N>>()
    }

    /// How many of the root's children two trees share (after a write to one of them).
    pub(crate) fn shared_root_children<S: Values, const N: usize>(
        a: &Tree<S, N>,
        b: &Tree<S, N>,
    ) -> usize {
        let (Node::Branch(a), Node::Branch(b)) = (&a.root, &b.root) else {
            panic!("both trees have branches");
        };
        a.children
            .iter()
            .zip(&b.children)
            .filter(|&(a, b)| a.address() == b.address())
            .count()
    }

    /// The number of the root's children.
    pub(crate) fn root_children<S: Values, const N: usize>(tree: &Tree<S, N>) -> usize {
        match &tree.root {
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

    /// Keys to insert in increasing, decreasing and scattered order (with repeats), each with
    /// keys to remove afterwards (some present, some not).
    pub(crate) fn key_orders() -> Vec<(Vec<Value>, Vec<Value>)> {
        let increasing: Vec<Value> = (0..20_000).map(Value::nat).collect();
        let decreasing: Vec<Value> = increasing.iter().rev().cloned().collect();
        let random: Vec<Value> = numbers(1)
            .take(20_000)
            .map(|n| Value::nat(n % 15_000))
            .collect();
        let removals: Vec<Value> = numbers(2)
            .take(15_000)
            .map(|n| Value::nat(n % 25_000))
            .collect();
        vec![
            (increasing.clone(), removals.clone()),
            (decreasing, removals.clone()),
            (random.clone(), removals),
            (random, increasing),
        ]
    }

    /// Keys whose prefixes say little: strings sharing their first 8 bytes (every search
    /// compares them in full), and pairs sharing their left component (told apart only by the
    /// prefix's later bytes); each with keys to remove afterwards.
    pub(crate) fn keys_with_shared_starts() -> Vec<(Vec<Value>, Vec<Value>)> {
        let strings: Vec<Value> = numbers(3)
            .take(6_000)
            .map(|n| Value::String(format!("abcdefgh{}", n % 4_000).into()))
            .collect();
        let pairs: Vec<Value> = numbers(4)
            .take(6_000)
            .map(|n| Value::pair(Value::nat(n % 3), Value::nat(n % 2_000)))
            .collect();
        vec![
            (strings.clone(), strings[..3_000].to_vec()),
            (pairs.clone(), pairs[1_000..4_000].to_vec()),
        ]
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
            // Pairs whose left is the same: the right orders them, small or big, of either
            // sign, at every length of encoding.
            ints(|n| Value::pair(Value::nat(0), Value::Int(n))),
            [-(1 << 40), -256, -255, -1, 0, 1, 255, 256, 1 << 40, 1 << 56]
                .into_iter()
                .map(|n| Value::pair(Value::Bool(true), Value::Int(Int::Small(n))))
                .collect(),
            vec![
                Value::pair(Value::Unit, Value::Mutez(0)),
                Value::pair(Value::Unit, Value::Mutez(300)),
                Value::pair(Value::Unit, Value::Mutez(i64::MAX)),
            ],
            vec![
                Value::None,
                Value::Some(Rc::new(Value::nat(0))),
                Value::Some(Rc::new(Value::nat(7))),
            ],
            vec![
                Value::Left(Rc::new(Value::pair(Value::nat(3), Value::nat(1)))),
                Value::Left(Rc::new(Value::pair(Value::nat(3), Value::nat(2)))),
                Value::Right(Rc::new(Value::String(Rc::from("")))),
                Value::Right(Rc::new(Value::String(Rc::from("a")))),
            ],
            vec![
                Value::pair(Value::nat(1), Value::String(Rc::from("abcdef"))),
                Value::pair(Value::nat(1), Value::String(Rc::from("abcdefg"))),
                Value::pair(Value::nat(1), Value::String(Rc::from("abd"))),
                Value::pair(Value::nat(2), Value::String(Rc::from(""))),
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
    fn the_prefix_is_monotone_on_random_nested_values() {
        let big = Int::from(
            "123456789012345678901234567890"
                .parse::<BigInt>()
                .expect("digits"),
        );
        let int = |n: u64| match n % 7 {
            0 => Int::Small(n as i64 >> (n % 60)),
            1 => Int::Small(-((n >> (n % 60)) as i64)),
            2 => big.clone(),
            3 => Int::Small(i64::MIN + (n % 3) as i64),
            _ => Int::Small((n % 300) as i64 - 150),
        };
        let values: Vec<Value> = testing::numbers(5)
            .zip(testing::numbers(6))
            .take(400)
            .map(|(a, b)| {
                let right = match b % 3 {
                    0 => Value::Some(Rc::new(Value::Int(int(b)))),
                    1 => Value::None,
                    _ => Value::Some(Rc::new(Value::Int(int(b / 3)))),
                };
                let left = if a % 2 == 0 {
                    Value::Left(Rc::new(Value::Int(int(a))))
                } else {
                    Value::Right(Rc::new(Value::Bool(a % 4 == 1)))
                };
                Value::pair(left, right)
            })
            .collect();
        for a in &values {
            for b in &values {
                if prefix(a) < prefix(b) {
                    assert!(a < b, "{a} < {b}");
                }
            }
        }
    }

    #[test]
    fn pairs_with_the_same_left_have_distinct_prefixes() {
        let prefixes: std::collections::BTreeSet<u64> = (0..100_000)
            .map(|n| prefix(&Value::pair(Value::nat(0), Value::nat(n * 40_000))))
            .collect();
        assert_eq!(prefixes.len(), 100_000);
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
