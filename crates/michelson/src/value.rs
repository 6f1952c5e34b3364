//! Michelson values as the interpreter holds them (`specs/michelson.rst`, "Core data types").
//!
//! Values share structure: every compound value sits behind an `Rc`, so `DUP` of a list, map,
//! string or lambda is a reference-count increment; lists (`list.rs`), sets (`set.rs`) and maps (`map.rs`)
//! are persistent, so a write to one of two copies does not copy the whole collection.
//! Comparison follows Michelson's order and is defined only between values of one comparable type.

use crate::int::Int;
use crate::ir::Code;
use crate::list::List;
use crate::literals::{Address, Key, KeyHash, Signature};
use crate::map::ValueMap;
use crate::set::ValueSet;
use crate::types::Type;
use kestrel_micheline::Node;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A Michelson value.
#[derive(Clone)]
#[allow(missing_docs)]
pub enum Value {
    Unit,
    Bool(bool),
    Int(Int),
    Nat(Int),
    Mutez(i64),
    Timestamp(Int),
    String(Rc<str>),
    Bytes(Rc<[u8]>),
    KeyHash(KeyHash),
    Key(Rc<Key>),
    Signature(Rc<Signature>),
    ChainId([u8; 4]),
    Address(Rc<Address>),
    Pair(Rc<(Value, Value)>),
    Left(Rc<Value>),
    Right(Rc<Value>),
    Some(Rc<Value>),
    None,
    List(Rc<List>),
    Set(Rc<ValueSet>),
    Map(Rc<ValueMap>),
    BigMap(Rc<BigMap>),
    Lambda(Rc<Lambda>),
    Contract(Rc<Contract>),
    Operation(Rc<Operation>),
    Ticket(Rc<Ticket>),
    /// A scalar of BLS12-381's field, 32 bytes little-endian, reduced.
    Bls12381Fr(Rc<[u8; 32]>),
    /// A G1 point, 96 bytes uncompressed.
    Bls12381G1(Rc<[u8]>),
    /// A G2 point, 192 bytes uncompressed.
    Bls12381G2(Rc<[u8]>),
}

/// A big map: an identifier of its stored contents (if any) and the overlay of changes made by
/// this run (`None` removes a key).
#[derive(Clone)]
pub struct BigMap {
    /// The identifier of the stored big map this one is a view of, if any.
    pub id: Option<Int>,
    /// The key type.
    pub key_type: Type,
    /// The value type.
    pub value_type: Type,
    /// Bindings added (`Some`) or removed (`None`) on top of the stored contents.
    pub overlay: BTreeMap<Value, Option<Value>>,
}

/// A lambda: its Micheline code (what PACK and printing show) and its typed code.
pub struct Lambda {
    /// The code as written (after macro expansion), for PACK and printing.
    pub node: Node,
    /// The typechecked code.
    pub code: Rc<Code>,
    /// Whether it is a `Lambda_rec` (the lambda itself is pushed under its argument).
    pub recursive: bool,
    /// Its argument type.
    pub arg: Type,
    /// Its result type.
    pub ret: Type,
    /// Values already applied with `APPLY`, outermost last: each one is paired with the argument.
    pub applied: Vec<(Type, Value)>,
}

/// A typed contract reference: an address (with entrypoint) and its parameter type.
pub struct Contract {
    /// The destination, its entrypoint included (`default` is kept empty).
    pub address: Address,
    /// The type of the entrypoint's parameter.
    pub param_type: Type,
}

/// An operation emitted by the contract.
pub enum Operation {
    /// `TRANSFER_TOKENS`.
    Transfer {
        /// The parameter value.
        param: Value,
        /// Its type.
        param_type: Type,
        /// Amount in mutez.
        amount: i64,
        /// Destination address with entrypoint.
        destination: Address,
        /// Operation nonce.
        nonce: u64,
        /// The argument's big maps moved to temporary ids (to a contract).
        big_map_diff: Vec<crate::big_map_diff::BigMapDiff>,
    },
    /// `SET_DELEGATE`.
    SetDelegate {
        /// The new delegate, or none.
        delegate: Option<KeyHash>,
        /// Operation nonce.
        nonce: u64,
    },
    /// `CREATE_CONTRACT`.
    CreateContract {
        /// The script (parameter, storage, code) as Micheline.
        script: Node,
        /// The delegate.
        delegate: Option<KeyHash>,
        /// Initial balance in mutez.
        amount: i64,
        /// Initial storage.
        storage: Value,
        /// Its type.
        storage_type: Type,
        /// Address of the new contract.
        address: Address,
        /// Operation nonce.
        nonce: u64,
        /// The storage's big maps moved to temporary ids.
        big_map_diff: Vec<crate::big_map_diff::BigMapDiff>,
    },
    /// `EMIT`.
    Emit {
        /// The event tag (entrypoint-like name, may be empty).
        tag: String,
        /// The event type as written (with annotations).
        type_node: Node,
        /// The payload type.
        payload_type: Type,
        /// The payload.
        payload: Value,
        /// Operation nonce.
        nonce: u64,
    },
}

/// A ticket: who issued it, its content and amount.
pub struct Ticket {
    /// The issuing contract.
    pub ticketer: Address,
    /// The content type.
    pub content_type: Type,
    /// The content.
    pub content: Value,
    /// The amount (a nat).
    pub amount: Int,
}

impl Value {
    /// `Pair a b`.
    pub fn pair(a: Value, b: Value) -> Value {
        Value::Pair(Rc::new((a, b)))
    }

    /// `Some v`.
    pub fn some(v: Value) -> Value {
        Value::Some(Rc::new(v))
    }

    /// A nat from a u64.
    pub fn nat(n: u64) -> Value {
        match i64::try_from(n) {
            Ok(small) => Value::Nat(Int::Small(small)),
            Err(_) => Value::Nat(Int::from(num_bigint::BigInt::from(n))),
        }
    }

    /// A list from elements in order (head first).
    pub fn list_from(mut items: Vec<Value>) -> Value {
        items.reverse();
        Value::List(Rc::new(List::from_reversed(items)))
    }

    /// A rank for comparing values of different constructors of one type (`or`, `option`).
    fn rank(&self) -> u8 {
        match self {
            Value::Left(_) => 0,
            Value::Right(_) => 1,
            Value::None => 0,
            Value::Some(_) => 1,
            Value::Bool(false) => 0,
            Value::Bool(true) => 1,
            _ => 2,
        }
    }
}

/// A value prints as its readable Micheline on one line (`Pair 1 "a"`).
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let node = crate::unparse::unparse(self, crate::unparse::Mode::Readable);
        write!(f, "{}", crate::print::node_to_string(&node))
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl Ord for Value {
    /// Michelson's order on comparable values; right combs are walked with a loop.
    #[inline]
    fn cmp(&self, other: &Value) -> Ordering {
        // Integers first, inline: the keys of most sets and maps.
        match (self, other) {
            (Value::Int(x), Value::Int(y)) | (Value::Nat(x), Value::Nat(y)) => x.cmp(y),
            _ => self.cmp_general(other),
        }
    }
}

impl Value {
    /// [`Ord::cmp`] for every comparable type (pairs compared without recursion).
    #[inline(never)]
    fn cmp_general(&self, other: &Value) -> Ordering {
        let mut a = self;
        let mut b = other;
        loop {
            let order = match (a, b) {
                (Value::Pair(x), Value::Pair(y)) => match x.0.cmp(&y.0) {
                    Ordering::Equal => {
                        a = &x.1;
                        b = &y.1;
                        continue;
                    }
                    order => order,
                },
                (Value::Unit, Value::Unit) => Ordering::Equal,
                (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
                (Value::Int(x), Value::Int(y)) | (Value::Nat(x), Value::Nat(y)) => x.cmp(y),
                (Value::Timestamp(x), Value::Timestamp(y)) => x.cmp(y),
                (Value::Mutez(x), Value::Mutez(y)) => x.cmp(y),
                (Value::String(x), Value::String(y)) => x.cmp(y),
                (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
                (Value::KeyHash(x), Value::KeyHash(y)) => x.cmp(y),
                (Value::Key(x), Value::Key(y)) => x.cmp(y),
                (Value::Signature(x), Value::Signature(y)) => x.cmp(y),
                (Value::ChainId(x), Value::ChainId(y)) => x.cmp(y),
                (Value::Address(x), Value::Address(y)) => x.cmp(y),
                (Value::Left(x), Value::Left(y))
                | (Value::Right(x), Value::Right(y))
                | (Value::Some(x), Value::Some(y)) => {
                    a = x;
                    b = y;
                    continue;
                }
                (Value::None, Value::None) => Ordering::Equal,
                _ => a.rank().cmp(&b.rank()),
            };
            return order;
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    /// Structural equality; for non-comparable values (lists, maps, lambdas, operations) it
    /// compares contents, which is what the TZT runner needs.
    fn eq(&self, other: &Value) -> bool {
        let mut pending = vec![(self, other)];
        while let Some((a, b)) = pending.pop() {
            let equal = match (a, b) {
                (Value::Pair(x), Value::Pair(y)) => {
                    pending.push((&x.0, &y.0));
                    pending.push((&x.1, &y.1));
                    true
                }
                (Value::Left(x), Value::Left(y))
                | (Value::Right(x), Value::Right(y))
                | (Value::Some(x), Value::Some(y)) => {
                    pending.push((x, y));
                    true
                }
                (Value::List(x), Value::List(y)) => {
                    if x.len() == y.len() {
                        pending.extend(x.iter().zip(y.iter()));
                        true
                    } else {
                        false
                    }
                }
                (Value::Set(x), Value::Set(y)) => {
                    x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p.cmp(q).is_eq())
                }
                (Value::Map(x), Value::Map(y)) => {
                    if x.len() == y.len() {
                        for ((kx, vx), (ky, vy)) in x.iter().zip(y.iter()) {
                            if !kx.cmp(ky).is_eq() {
                                return false;
                            }
                            pending.push((vx, vy));
                        }
                        true
                    } else {
                        false
                    }
                }
                (Value::BigMap(x), Value::BigMap(y)) => {
                    x.id == y.id && x.overlay.len() == y.overlay.len() && {
                        for ((kx, vx), (ky, vy)) in x.overlay.iter().zip(y.overlay.iter()) {
                            if !kx.cmp(ky).is_eq() {
                                return false;
                            }
                            match (vx, vy) {
                                (Some(vx), Some(vy)) => pending.push((vx, vy)),
                                (None, None) => {}
                                _ => return false,
                            }
                        }
                        true
                    }
                }
                (Value::Lambda(x), Value::Lambda(y)) => {
                    let mode = crate::unparse::Mode::OptimizedLegacy;
                    crate::unparse::lambda_node(x, mode) == crate::unparse::lambda_node(y, mode)
                }
                (Value::Contract(x), Value::Contract(y)) => {
                    x.address == y.address && x.param_type == y.param_type
                }
                (Value::Ticket(x), Value::Ticket(y)) => {
                    pending.push((&x.content, &y.content));
                    x.ticketer == y.ticketer && x.amount == y.amount
                }
                (Value::Operation(x), Value::Operation(y)) => Rc::ptr_eq(x, y),
                (Value::Bls12381Fr(x), Value::Bls12381Fr(y)) => x == y,
                (Value::Bls12381G1(x), Value::Bls12381G1(y)) => x == y,
                (Value::Bls12381G2(x), Value::Bls12381G2(y)) => x == y,
                _ => {
                    a.cmp(b).is_eq()
                        && a.rank() == b.rank()
                        && std::mem::discriminant(a) == std::mem::discriminant(b)
                }
            };
            if !equal {
                return false;
            }
        }
        true
    }
}

impl Eq for Value {}

impl Drop for Lambda {
    /// Values captured by `APPLY` can be lambdas holding captured lambdas, as deep as a loop
    /// makes them; free that chain with a loop rather than host recursion. (Other values are
    /// bounded in depth by the type size limit.)
    fn drop(&mut self) {
        let mut pending: Vec<Value> = self.applied.drain(..).map(|(_, value)| value).collect();
        while let Some(value) = pending.pop() {
            if let Value::Lambda(rc) = value {
                if let Ok(mut lambda) = Rc::try_unwrap(rc) {
                    pending.extend(lambda.applied.drain(..).map(|(_, value)| value));
                }
            }
        }
    }
}
