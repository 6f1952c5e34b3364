//! Michelson sets: a persistent B+ tree of the elements, each stored beside an
//! order-preserving 64-bit prefix that searches look at first.
//!
//! Why persistent: `DUP` of a set is a reference-count increment, and Octez's sets are
//! persistent AVL trees, so `DUP ; UPDATE` on a set of n elements costs O(log n) there and is
//! charged as such. A set that copied itself on the first write after a `DUP` would do O(n) work
//! for that charge. Here nodes sit behind `Rc`s and a write copies only the nodes on its path
//! that are shared (`Rc::make_mut`): O(log n) nodes of at most [`CAPACITY`] entries; an unshared
//! set is updated in place.
//!
//! Why a prefix: comparing two [`Value`]s tests both tags, then both integer representations,
//! before comparing numbers. Each node keeps its entries' prefixes in an array of their own, and a
//! search counts the prefixes below the sought value's in one pass without branches (the loads are
//! independent, so a node's cache misses overlap instead of following one another as a halving
//! search's do); only the entries whose prefix equals the sought value's (usually none or one) are
//! compared in full. The prefix is monotone: `prefix(a) < prefix(b)` implies `a < b`, so ordering
//! by `(prefix, value)` is exactly Michelson's order on the values. Gas does not depend on the
//! representation.
//!
//! Shape: leaves hold the elements, branches hold separators (`keys[i]` is above every element
//! of `children[i]` and at or below every element of `children[i + 1]`). A node's arrays are
//! inline in it (a leaf is one allocation, one place in memory). A full node splits in two halves, except
//! at the right edge of the tree where it splits off only the new entry, so that elements added
//! in increasing order (the common way to build a set) fill their leaves. Removal drops nodes that
//! become empty and does not rebalance: a node is entered only through a split, so the depth stays
//! logarithmic in the number of insertions (6 levels for the 20 M elements a 1,040,000-gas
//! operation could add at most), and the recursion of `insert` and `remove`, and of the drop
//! glue, is bounded by it.

use crate::int::Int;
use crate::literals::{Address, Destination, KeyHash};
use crate::value::Value;
use arrayvec::ArrayVec;
use std::rc::Rc;

/// Entries per node at most: elements of a leaf, children of a branch. Wider nodes make a write
/// to a shared set copy more (a node per level), and a scattered insertion move more; 30 is the
/// most for which a leaf with its `Rc` counts fits a 1 KiB allocation (mimalloc's next size class
/// is 1.25 KiB: a quarter more memory for a set built in order, and as much more time).
const CAPACITY: usize = 30;

/// A set of comparable values of one type, in Michelson's order.
#[derive(Clone)]
pub struct ValueSet {
    root: Node,
    len: usize,
}

/// A node: a shared leaf or branch. The kind sits beside the pointer (in the parent's array of
/// children), so a search knows what it descends into before it reaches it, and each kind takes
/// its own size: a leaf and its `Rc` counts fit a 1 KiB allocation, a branch does not.
#[derive(Clone)]
enum Node {
    Leaf(Rc<Leaf>),
    Branch(Rc<Branch>),
}

/// Elements in increasing order, with their prefixes.
#[derive(Clone)]
struct Leaf {
    prefixes: ArrayVec<u64, CAPACITY>,
    values: ArrayVec<Value, CAPACITY>,
}

/// Children in increasing order, separated by `keys` (one fewer than the children), with the
/// keys' prefixes.
#[derive(Clone)]
struct Branch {
    prefixes: ArrayVec<u64, CAPACITY>,
    keys: ArrayVec<Value, CAPACITY>,
    children: ArrayVec<Node, CAPACITY>,
}

/// What an insertion below a node did.
enum Insertion {
    /// The value was an element already.
    Present,
    /// Added without splitting the node.
    Added,
    /// Added, and the node split: `right` goes after it, separated by `key`.
    Split {
        prefix: u64,
        key: Value,
        right: Node,
    },
}

/// The positions `first..end` of the entries whose prefix is `prefix` in `prefixes` (sorted):
/// every entry before `first` is below a value with that prefix, every entry from `end` on
/// above it.
#[inline]
fn prefix_run(prefixes: &[u64], prefix: u64) -> (usize, usize) {
    if prefixes.last().is_none_or(|&last| last < prefix) {
        // Appending at the end, the common case when a set is built in order.
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

impl Leaf {
    fn new() -> Leaf {
        Leaf {
            prefixes: ArrayVec::new(),
            values: ArrayVec::new(),
        }
    }

    /// The position of `value` (`Ok`) or where it would go (`Err`).
    #[inline]
    fn find(&self, value: &Value, prefix: u64) -> Result<usize, usize> {
        let (first, end) = prefix_run(&self.prefixes, prefix);
        match self.values[first..end].binary_search(value) {
            Ok(index) => Ok(first + index),
            Err(index) => Err(first + index),
        }
    }

    fn insert_at(&mut self, index: usize, prefix: u64, value: Value) {
        self.prefixes.insert(index, prefix);
        self.values.insert(index, value);
    }

    fn insert(&mut self, prefix: u64, value: Value, rightmost: bool) -> Insertion {
        let index = match self.find(&value, prefix) {
            Ok(_) => return Insertion::Present,
            Err(index) => index,
        };
        if !self.values.is_full() {
            self.insert_at(index, prefix, value);
            return Insertion::Added;
        }
        let mut right = Leaf::new();
        if rightmost && index == CAPACITY {
            right.insert_at(0, prefix, value);
        } else {
            let half = CAPACITY / 2;
            right.prefixes = split_off(&mut self.prefixes, half);
            right.values = split_off(&mut self.values, half);
            if index <= half {
                self.insert_at(index, prefix, value);
            } else {
                right.insert_at(index - half, prefix, value);
            }
        }
        Insertion::Split {
            prefix: right.prefixes[0],
            key: right.values[0].clone(),
            right: Node::Leaf(Rc::new(right)),
        }
    }
}

impl Branch {
    /// The child whose range holds `value`: the number of keys at or below it.
    #[inline]
    fn route(&self, value: &Value, prefix: u64) -> usize {
        if self.prefixes.last().is_none_or(|&last| last < prefix) {
            // Past every key, the common case when a set is built in order.
            return self.prefixes.len();
        }
        self.touch_children();
        let (first, end) = prefix_run(&self.prefixes, prefix);
        first + self.keys[first..end].partition_point(|key| key <= value)
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

    fn insert_at(&mut self, index: usize, prefix: u64, key: Value, right: Node) {
        self.prefixes.insert(index, prefix);
        self.keys.insert(index, key);
        self.children.insert(index + 1, right);
    }

    fn insert(&mut self, prefix: u64, value: Value, rightmost: bool) -> Insertion {
        let index = self.route(&value, prefix);
        let child_rightmost = rightmost && index + 1 == self.children.len();
        let (prefix, key, right) =
            match insert(&mut self.children[index], prefix, value, child_rightmost) {
                Insertion::Split { prefix, key, right } => (prefix, key, right),
                done => return done,
            };
        if !self.children.is_full() {
            self.insert_at(index, prefix, key, right);
            return Insertion::Added;
        }
        let mut upper = Branch {
            prefixes: ArrayVec::new(),
            keys: ArrayVec::new(),
            children: ArrayVec::new(),
        };
        if rightmost && index + 1 == CAPACITY {
            // The right edge grows by one child: start a branch holding only it.
            upper.children.push(right);
            return Insertion::Split {
                prefix,
                key,
                right: Node::Branch(Rc::new(upper)),
            };
        }
        // Split in halves of children; the key between them goes up, then the new child goes
        // into its half (child `index + 1`, after key `index`).
        let half = CAPACITY / 2;
        upper.prefixes = split_off(&mut self.prefixes, half);
        upper.keys = split_off(&mut self.keys, half);
        upper.children = split_off(&mut self.children, half);
        let (Some(up_prefix), Some(up_key)) = (self.prefixes.pop(), self.keys.pop()) else {
            unreachable!("a full branch has keys");
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

    /// Removes `value` below this branch; false if it was not an element.
    fn remove(&mut self, value: &Value, prefix: u64) -> bool {
        let index = self.route(value, prefix);
        if !remove(&mut self.children[index], value, prefix) {
            return false;
        }
        if self.children[index].is_empty() {
            self.children.remove(index);
            // The key on either side of the removed child separates its neighbours as well.
            let key = index.saturating_sub(1);
            if key < self.keys.len() {
                self.keys.remove(key);
                self.prefixes.remove(key);
            }
        }
        true
    }
}

impl Node {
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
            Node::Leaf(leaf) => leaf.values.is_empty(),
            Node::Branch(branch) => branch.children.is_empty(),
        }
    }
}

/// Adds `value` below `node`, copying the node first if it is shared. `rightmost`: the node is
/// on the tree's right edge.
fn insert(node: &mut Node, prefix: u64, value: Value, rightmost: bool) -> Insertion {
    match node {
        Node::Leaf(leaf) => Rc::make_mut(leaf).insert(prefix, value, rightmost),
        Node::Branch(branch) => Rc::make_mut(branch).insert(prefix, value, rightmost),
    }
}

/// Removes `value` below `node`, copying the node first if it is shared; false if it was not an
/// element.
fn remove(node: &mut Node, value: &Value, prefix: u64) -> bool {
    match node {
        Node::Leaf(leaf) => match leaf.find(value, prefix) {
            Ok(index) => {
                let leaf = Rc::make_mut(leaf);
                leaf.prefixes.remove(index);
                leaf.values.remove(index);
                true
            }
            Err(_) => false,
        },
        Node::Branch(branch) => Rc::make_mut(branch).remove(value, prefix),
    }
}

fn empty_leaf() -> Node {
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

/// The prefix of a value: the first 8 bytes of its components' encodings ([`PrefixBits`]), so
/// that the components after the first (the right of a pair whose left is the same in every
/// element, say) still tell elements apart without a full comparison.
fn prefix(value: &Value) -> u64 {
    let mut prefix = PrefixBits { bits: 0, len: 0 };
    prefix.push_value(value);
    (prefix.bits >> 64) as u64
}

impl Default for ValueSet {
    fn default() -> ValueSet {
        ValueSet {
            root: empty_leaf(),
            len: 0,
        }
    }
}

impl ValueSet {
    /// The empty set.
    pub fn new() -> ValueSet {
        ValueSet::default()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `value` is an element.
    pub fn contains(&self, value: &Value) -> bool {
        let prefix = prefix(value);
        let mut node = &self.root;
        loop {
            match node {
                Node::Leaf(leaf) => return leaf.find(value, prefix).is_ok(),
                Node::Branch(branch) => node = &branch.children[branch.route(value, prefix)],
            }
        }
    }

    /// Adds `value`; false if it was already an element (the set keeps its element).
    pub fn insert(&mut self, value: Value) -> bool {
        let prefix = prefix(&value);
        match insert(&mut self.root, prefix, value, true) {
            Insertion::Present => return false,
            Insertion::Added => {}
            Insertion::Split { prefix, key, right } => {
                let mut root = Branch {
                    prefixes: ArrayVec::new(),
                    keys: ArrayVec::new(),
                    children: ArrayVec::new(),
                };
                root.prefixes.push(prefix);
                root.keys.push(key);
                root.children.push(self.root.clone());
                root.children.push(right);
                self.root = Node::Branch(Rc::new(root));
            }
        }
        self.len += 1;
        true
    }

    /// Removes `value`; false if it was not an element.
    pub fn remove(&mut self, value: &Value) -> bool {
        if !remove(&mut self.root, value, prefix(value)) {
            return false;
        }
        self.len -= 1;
        // A root left with one child (or none) gives way to it.
        while let Node::Branch(branch) = &self.root {
            if branch.children.len() > 1 {
                break;
            }
            self.root = branch.children.first().cloned().unwrap_or_else(empty_leaf);
        }
        true
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Value> {
        let mut iter = Iter {
            branches: Vec::new(),
            leaf: [].iter(),
            remaining: self.len,
        };
        iter.descend(&self.root);
        iter
    }
}

/// The elements of a [`ValueSet`] in increasing order.
struct Iter<'a> {
    /// The branches above the current leaf, each with the index of the child being walked.
    branches: Vec<(&'a Branch, usize)>,
    leaf: std::slice::Iter<'a, Value>,
    remaining: usize,
}

impl<'a> Iter<'a> {
    /// Walks down to the first leaf below `node`.
    fn descend(&mut self, mut node: &'a Node) {
        loop {
            match node {
                Node::Leaf(leaf) => {
                    self.leaf = leaf.values.iter();
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

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Value;

    fn next(&mut self) -> Option<&'a Value> {
        loop {
            if let Some(value) = self.leaf.next() {
                self.remaining -= 1;
                return Some(value);
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

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use std::collections::BTreeSet;

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
    fn the_prefix_is_monotone_and_the_set_keeps_michelsons_order() {
        for list in ordered_lists() {
            for (i, a) in list.iter().enumerate() {
                for (j, b) in list.iter().enumerate() {
                    assert_eq!(a.cmp(b), i.cmp(&j), "the list is in Michelson's order");
                    if prefix(a) < prefix(b) {
                        assert!(a < b, "a smaller prefix belongs to a smaller value");
                    }
                }
            }
            let mut set = ValueSet::new();
            for value in list.iter().rev() {
                assert!(set.insert(value.clone()));
            }
            assert!(
                !set.insert(list[0].clone()),
                "an element is not added twice"
            );
            assert_eq!(set.len(), list.len());
            assert!(set.iter().zip(&list).all(|(a, b)| a.cmp(b).is_eq()));
            assert!(set.contains(&list[1]));
            assert!(set.remove(&list[1]));
            assert!(!set.contains(&list[1]));
            assert!(!set.remove(&list[1]));
            assert_eq!(set.len(), list.len() - 1);
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
        let values: Vec<Value> = numbers(5)
            .zip(numbers(6))
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
        let prefixes: BTreeSet<u64> = (0..100_000)
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

    #[test]
    fn a_leaf_fits_a_kibibyte() {
        // `Rc`'s two counts, then the node.
        assert!(2 * std::mem::size_of::<usize>() + std::mem::size_of::<Leaf>() <= 1024);
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

    /// A deterministic stream of numbers (a linear congruential generator).
    fn numbers(seed: u64) -> impl Iterator<Item = u64> {
        let mut state = seed;
        std::iter::repeat_with(move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        })
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
        against_the_model(&increasing, &removals);
        against_the_model(&decreasing, &removals);
        against_the_model(&random, &removals);
        against_the_model(&random, &increasing);
    }

    #[test]
    fn sets_agree_with_a_model_when_prefixes_are_equal() {
        // Strings sharing their first 8 bytes, and pairs sharing their left component: every
        // search goes to the full comparison.
        let strings: Vec<Value> = numbers(3)
            .take(6_000)
            .map(|n| Value::String(Rc::from(format!("abcdefgh{}", n % 4_000))))
            .collect();
        let pairs: Vec<Value> = numbers(4)
            .take(6_000)
            .map(|n| Value::pair(Value::nat(n % 3), Value::nat(n % 2_000)))
            .collect();
        against_the_model(&strings, &strings[..3_000]);
        against_the_model(&pairs, &pairs[1_000..4_000]);
    }

    #[test]
    fn a_write_to_a_shared_set_copies_only_its_path() {
        let mut set = ValueSet::new();
        for n in 0..100_000 {
            set.insert(Value::nat(n));
        }
        let copy = set.clone();
        set.insert(Value::nat(1_000_000));
        let Node::Branch(root) = &set.root else {
            panic!("a set of 100,000 elements has branches");
        };
        let Node::Branch(copy_root) = &copy.root else {
            panic!("a set of 100,000 elements has branches");
        };
        let shared = root
            .children
            .iter()
            .zip(&copy_root.children)
            .filter(|&(a, b)| match (a, b) {
                (Node::Leaf(a), Node::Leaf(b)) => Rc::ptr_eq(a, b),
                (Node::Branch(a), Node::Branch(b)) => Rc::ptr_eq(a, b),
                _ => false,
            })
            .count();
        assert_eq!(
            shared,
            root.children.len() - 1,
            "one child copied, the others shared"
        );
        assert_eq!(copy.len() + 1, set.len());
    }
}
