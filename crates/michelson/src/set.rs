//! Michelson sets: a B-tree of the elements, each stored with an order-preserving 64-bit prefix
//! that comparisons look at first.
//!
//! Why: std's B-tree finds a key by a linear scan of each node on its path (about 60 keys for
//! a new largest element of a set of millions), and comparing two [`Value`]s tests both tags,
//! then both integer representations, before comparing numbers. With the prefix in front, most
//! of those comparisons are one `u64` comparison: the gas-per-time table's set class (`UPDATE` on
//! a growing set of nats) runs 0.78× the instructions it took before (BENCHMARKS.md, "Michelson:
//! sets keyed by a prefix"). Gas does not depend on the representation.
//!
//! The prefix is monotone: `prefix(a) < prefix(b)` implies `a < b`, so ordering by
//! `(prefix, value)` is exactly Michelson's order on the values; equal prefixes fall back to the
//! full comparison.

use crate::int::Int;
use crate::value::Value;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// A set of comparable values of one type, in Michelson's order.
#[derive(Clone, Default)]
pub struct ValueSet {
    elements: BTreeSet<Prefixed>,
}

/// An element with its prefix.
#[derive(Clone)]
struct Prefixed {
    prefix: u64,
    value: Value,
}

impl Prefixed {
    fn new(value: Value) -> Prefixed {
        Prefixed {
            prefix: prefix(&value),
            value,
        }
    }
}

impl Ord for Prefixed {
    #[inline]
    fn cmp(&self, other: &Prefixed) -> Ordering {
        // Two branches rather than `u64::cmp`'s three-way value, which the B-tree's search
        // tests again.
        if self.prefix < other.prefix {
            Ordering::Less
        } else if self.prefix > other.prefix {
            Ordering::Greater
        } else {
            self.value.cmp(&other.value)
        }
    }
}

impl PartialOrd for Prefixed {
    fn partial_cmp(&self, other: &Prefixed) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Prefixed {
    fn eq(&self, other: &Prefixed) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Prefixed {}

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

/// A byte string's prefix: its first 8 bytes, big-endian, padded with zeros. Michelson orders
/// strings and bytes lexicographically, a proper prefix first; padding with the smallest byte
/// keeps that order (a string and its extension by zero bytes share a prefix, compared in full).
fn bytes_prefix(bytes: &[u8]) -> u64 {
    let mut first = [0u8; 8];
    let n = bytes.len().min(8);
    first[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(first)
}

/// The prefix of a value: from its leftmost component for pairs (compared first), 0 for types
/// without a cheap one (every comparison of two such values is a full one).
fn prefix(value: &Value) -> u64 {
    let mut value = value;
    loop {
        return match value {
            Value::Int(n) | Value::Nat(n) | Value::Timestamp(n) => int_prefix(n),
            Value::Mutez(n) => (*n as u64) ^ (1 << 63),
            Value::Bool(b) => u64::from(*b),
            Value::String(s) => bytes_prefix(s.as_bytes()),
            Value::Bytes(b) => bytes_prefix(b),
            Value::Pair(pair) => {
                value = &pair.0;
                continue;
            }
            _ => 0,
        };
    }
}

impl ValueSet {
    /// The empty set.
    pub fn new() -> ValueSet {
        ValueSet::default()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether the set has no element.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Whether `value` is an element.
    pub fn contains(&self, value: &Value) -> bool {
        self.elements.contains(&Prefixed::new(value.clone()))
    }

    /// Adds `value`; false if it was already an element (the set keeps its element).
    pub fn insert(&mut self, value: Value) -> bool {
        self.elements.insert(Prefixed::new(value))
    }

    /// Removes `value`; false if it was not an element.
    pub fn remove(&mut self, value: Value) -> bool {
        self.elements.remove(&Prefixed::new(value))
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.elements.iter().map(|element| &element.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use std::rc::Rc;

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
                Value::pair(Value::Int(Int::Small(1)), Value::Int(Int::Small(5))),
                Value::pair(Value::Int(Int::Small(1)), Value::Int(Int::Small(6))),
                Value::pair(Value::Int(Int::Small(2)), Value::Int(Int::Small(0))),
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
                    assert_eq!(
                        Prefixed::new(a.clone()).cmp(&Prefixed::new(b.clone())),
                        a.cmp(b)
                    );
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
            assert!(set.remove(list[1].clone()));
            assert!(!set.contains(&list[1]));
            assert!(!set.remove(list[1].clone()));
            assert_eq!(set.len(), list.len() - 1);
        }
    }
}
