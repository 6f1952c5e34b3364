//! Fuzzes Michelson's persistent set and map against std's `BTreeSet` and `BTreeMap` under the
//! same order (`Value`'s `Ord`, Michelson's comparison): the input is a type shape, then a stream
//! of operations (insert, remove, membership or lookup, keep a copy as `DUP` does) on keys of that
//! shape, drawn so that they collide often, share long prefixes, and cross the small/big integer
//! boundary; each goes to the set and the map alike. After each operation the answers must agree;
//! at the end the collections and every copy kept along the way must hold exactly their model's
//! entries, in order.

#![no_main]

use kestrel_michelson::{Int, Value, ValueMap, ValueSet};
use libfuzzer_sys::fuzz_target;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Reads the fuzzer's bytes, yielding zeros once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        first
    }
}

/// An integer from a few bytes: small of either sign, near the `i64` bounds, or big.
fn int(bytes: &mut Bytes) -> Int {
    let kind = bytes.byte();
    let n = i64::from(bytes.byte() as i8) * i64::from(bytes.byte());
    match kind % 6 {
        0 => Int::from(i64::MAX - n.abs()),
        1 => Int::from(i64::MIN + n.abs()),
        2 => Int::from(i64::MAX).mul(&Int::from(n)),
        3 => Int::from(n << (kind % 56)),
        _ => Int::from(n),
    }
}

/// A string of the alphabet `ab\0` that often shares a long start with others.
fn text(bytes: &mut Bytes) -> Rc<str> {
    let length = usize::from(bytes.byte() % 12);
    let mut text = String::from("common-");
    for _ in 0..length {
        text.push(['a', 'b', '\0'][usize::from(bytes.byte() % 3)]);
    }
    Rc::from(text)
}

/// A value of the shape `shape` (one shape per run: the elements of a set share a type).
fn value(shape: u8, bytes: &mut Bytes) -> Value {
    match shape % 7 {
        0 => Value::Int(int(bytes)),
        1 => Value::pair(
            Value::nat(u64::from(bytes.byte() % 2)),
            Value::Int(int(bytes)),
        ),
        2 => {
            let option = if bytes.byte() % 3 == 0 {
                Value::None
            } else {
                Value::Some(Rc::new(Value::Int(int(bytes))))
            };
            Value::pair(Value::Bool(bytes.byte() % 2 == 0), option)
        }
        3 => {
            if bytes.byte() % 2 == 0 {
                Value::Left(Rc::new(Value::Int(int(bytes))))
            } else {
                Value::Right(Rc::new(Value::String(text(bytes))))
            }
        }
        4 => Value::String(text(bytes)),
        5 => Value::pair(
            Value::Unit,
            Value::pair(
                Value::Mutez(i64::from(bytes.byte())),
                Value::String(text(bytes)),
            ),
        ),
        _ => Value::pair(Value::Int(int(bytes)), Value::Int(int(bytes))),
    }
}

/// The collections under test and their models.
#[derive(Clone, Default)]
struct Collections {
    set: ValueSet,
    set_model: BTreeSet<Value>,
    map: ValueMap,
    map_model: BTreeMap<Value, Value>,
}

impl Collections {
    fn check(&self) {
        assert_eq!(self.set.len(), self.set_model.len());
        assert!(
            self.set.iter().eq(self.set_model.iter()),
            "the same elements in order"
        );
        assert_eq!(self.map.len(), self.map_model.len());
        assert!(
            self.map.iter().eq(self.map_model.iter()),
            "the same bindings in order"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes(data);
    let shape = bytes.byte();
    let mut now = Collections::default();
    let mut copies = Vec::new();
    let mut count = 0;
    while !bytes.0.is_empty() {
        let operation = bytes.byte();
        let key = value(shape, &mut bytes);
        count += 1;
        let bound = Value::nat(count);
        match operation % 8 {
            0..=3 => {
                assert_eq!(
                    now.set.insert(key.clone()),
                    now.set_model.insert(key.clone())
                );
                let old = now.map.insert(key.clone(), bound.clone());
                assert_eq!(old, now.map_model.insert(key, bound));
            }
            4 | 5 => {
                assert_eq!(now.set.remove(&key), now.set_model.remove(&key));
                assert_eq!(now.map.remove(&key), now.map_model.remove(&key));
            }
            6 => {
                assert_eq!(now.set.contains(&key), now.set_model.contains(&key));
                assert_eq!(now.map.get(&key), now.map_model.get(&key));
            }
            _ => copies.push(now.clone()),
        }
    }
    now.check();
    for copy in &copies {
        copy.check();
    }
});
