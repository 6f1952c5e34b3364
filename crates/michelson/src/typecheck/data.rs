//! Typing of data: a Micheline node read as a value of a given type (`specs/michelson.rst`,
//! "Core data types", "Domain specific data types"), readable and optimized forms alike.
//!
//! Recursion follows the type, whose size is bounded by `MAX_TYPE_SIZE`; lists, sets, maps and
//! right combs are walked with loops.

use super::{TcError, TcErrorKind, Typechecker};
use crate::int::Int;
use crate::list::List;
use crate::literals::{self, Address, Key, KeyHash, Signature};
use crate::map::ValueMap;
use crate::set::ValueSet;
use crate::types::Type;
use crate::value::{BigMap, Contract, Lambda, Ticket, Value};
use kestrel_micheline::{Node, NodeKind, Prim};
use num_traits::ToPrimitive;
use std::collections::BTreeMap;
use std::rc::Rc;

fn invalid(node: &Node, ty: &Type) -> TcError {
    TcError::new(
        node.span,
        TcErrorKind::InvalidData {
            expected: ty.to_string(),
            found: crate::print::node_to_string(node),
        },
    )
}

/// Whether `text` is a valid Michelson string: printable ASCII and `\n`.
pub fn valid_string(text: &str) -> bool {
    text.bytes().all(|b| (32..=126).contains(&b) || b == b'\n')
}

/// How a literal map's bindings are charged: a `map` inserts each key, a `big_map` hashes each
/// key and inserts the hash (`parse_items` and `parse_big_map_items`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum ElementCost {
    Map,
    BigMap,
}

/// What Octez's `parse_data` charges for a leaf of type `ty` written as `node`, besides the
/// `parse_data_cycle` of every call: printable checks, readable and optimized decodings
/// (`Michelson_v1_gas.Cost_of.Typechecking`).
fn leaf_cost(ty: &Type, node: &Node) -> u64 {
    use crate::gas::typecheck as cost;
    match (ty, &node.kind) {
        (Type::String, NodeKind::String(text)) => cost::cost_check_printable(text.len() as u64),
        (Type::Timestamp, NodeKind::String(text)) => {
            cost::cost_timestamp_readable_decoding(text.len() as u64)
        }
        (Type::KeyHash | Type::Address | Type::Contract(_), NodeKind::String(_)) => {
            cost::COST_DECODE_KEY_HASH_READABLE
        }
        (Type::KeyHash | Type::Address | Type::Contract(_), NodeKind::Bytes(_)) => {
            cost::COST_DECODE_KEY_HASH_OPTIMIZED
        }
        (Type::Key, NodeKind::String(_)) => cost::COST_DECODE_PUBLIC_KEY_READABLE,
        (Type::Key, NodeKind::Bytes(_)) => cost::COST_DECODE_PUBLIC_KEY_OPTIMIZED,
        (Type::Signature, NodeKind::String(_)) => cost::COST_DECODE_SIGNATURE_READABLE,
        (Type::Signature, NodeKind::Bytes(_)) => cost::COST_DECODE_SIGNATURE_OPTIMIZED,
        (Type::ChainId, NodeKind::String(_)) => cost::COST_DECODE_CHAIN_ID_READABLE,
        (Type::ChainId, NodeKind::Bytes(_)) => cost::COST_DECODE_CHAIN_ID_OPTIMIZED,
        (Type::Bls12381Fr, NodeKind::Bytes(_) | NodeKind::Int(_)) => cost::COST_DECODE_BLS12_381_FR,
        (Type::Bls12381G1, NodeKind::Bytes(_)) => cost::COST_DECODE_BLS12_381_G1,
        (Type::Bls12381G2, NodeKind::Bytes(_)) => cost::COST_DECODE_BLS12_381_G2,
        _ => 0,
    }
}

/// The arguments of `node` when it is primitive `expected`.
fn prim_args(node: &Node, expected: Prim) -> Option<&[Node]> {
    match &node.kind {
        NodeKind::Prim { name, args, .. } if name.known() == Some(expected) => Some(args),
        _ => None,
    }
}

impl Typechecker<'_> {
    /// Reads `node` as a value of type `ty`.
    pub fn parse_data(&mut self, node: &Node, ty: &Type) -> Result<Value, TcError> {
        self.charge_gas(crate::gas::typecheck::COST_PARSE_DATA_CYCLE + leaf_cost(ty, node));
        self.check_gas(node.span)?;
        self.traced_depth += 1;
        let value = self.parse_data_traced(node, ty);
        self.traced_depth -= 1;
        value
    }

    /// [`Typechecker::parse_data`] past its first cycle, where Octez traces errors under the
    /// data.
    fn parse_data_traced(&mut self, node: &Node, ty: &Type) -> Result<Value, TcError> {
        let bad = || invalid(node, ty);
        match ty {
            Type::Unit => prim_args(node, Prim::D_Unit)
                .filter(|a| a.is_empty())
                .map(|_| Value::Unit)
                .ok_or_else(bad),
            Type::Bool => match &node.kind {
                NodeKind::Prim { name, args, .. } if args.is_empty() => match name.known() {
                    Some(Prim::D_True) => Ok(Value::Bool(true)),
                    Some(Prim::D_False) => Ok(Value::Bool(false)),
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            },
            Type::Int => match &node.kind {
                NodeKind::Int(n) => Ok(Value::Int(Int::from(n))),
                _ => Err(bad()),
            },
            Type::Nat => match &node.kind {
                NodeKind::Int(n) if n.sign() != num_bigint::Sign::Minus => {
                    Ok(Value::Nat(Int::from(n)))
                }
                _ => Err(bad()),
            },
            Type::Mutez => match &node.kind {
                NodeKind::Int(n) => match n.to_i64() {
                    Some(m) if m >= 0 => Ok(Value::Mutez(m)),
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            },
            Type::String => match &node.kind {
                NodeKind::String(s) if valid_string(s) => Ok(Value::String(Rc::from(s.as_str()))),
                _ => Err(bad()),
            },
            Type::Bytes => match &node.kind {
                NodeKind::Bytes(b) => Ok(Value::Bytes(Rc::from(b.as_slice()))),
                _ => Err(bad()),
            },
            Type::Timestamp => match &node.kind {
                NodeKind::Int(n) => Ok(Value::Timestamp(Int::from(n))),
                NodeKind::String(s) => literals::timestamp_from_rfc3339(s)
                    .or_else(|| {
                        // Octez also reads a decimal integer in a string as seconds.
                        let digits = s.strip_prefix('-').unwrap_or(s);
                        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                            s.parse::<num_bigint::BigInt>().ok().map(Int::from)
                        } else {
                            None
                        }
                    })
                    .map(Value::Timestamp)
                    .ok_or_else(bad),
                _ => Err(bad()),
            },
            Type::ChainId => match &node.kind {
                NodeKind::String(s) => literals::chain_id_from_base58(s)
                    .map(Value::ChainId)
                    .ok_or_else(bad),
                NodeKind::Bytes(b) => <[u8; 4]>::try_from(b.as_slice())
                    .map(Value::ChainId)
                    .map_err(|_| bad()),
                _ => Err(bad()),
            },
            Type::KeyHash => match &node.kind {
                NodeKind::String(s) => KeyHash::from_base58(s).map(Value::KeyHash).ok_or_else(bad),
                NodeKind::Bytes(b) => KeyHash::from_bytes(b).map(Value::KeyHash).ok_or_else(bad),
                _ => Err(bad()),
            },
            Type::Key => match &node.kind {
                NodeKind::String(s) => Key::from_base58(s)
                    .map(|k| Value::Key(Rc::new(k)))
                    .ok_or_else(bad),
                NodeKind::Bytes(b) => Key::from_bytes(b)
                    .map(|k| Value::Key(Rc::new(k)))
                    .ok_or_else(bad),
                _ => Err(bad()),
            },
            Type::Signature => match &node.kind {
                NodeKind::String(s) => Signature::from_base58(s)
                    .map(|k| Value::Signature(Rc::new(k)))
                    .ok_or_else(bad),
                NodeKind::Bytes(b) => Signature::from_bytes(b)
                    .map(|k| Value::Signature(Rc::new(k)))
                    .ok_or_else(bad),
                _ => Err(bad()),
            },
            Type::Address => self
                .parse_address(node)
                .map(|a| Value::Address(Rc::new(a)))
                .ok_or_else(bad),
            Type::Contract(param) => {
                let address = self.parse_address(node).ok_or_else(bad)?;
                self.charge_gas(crate::gas::typecheck::cost_parse_contract(
                    &address.destination,
                    param,
                ));
                let entrypoint = address.entrypoint.clone();
                let (found, cost) = self.contract_entrypoint_type(&address, &entrypoint, param);
                self.charge_gas(cost);
                let found = found.ok_or_else(bad)?;
                if &found != param.as_ref() {
                    return Err(bad());
                }
                Ok(Value::Contract(Rc::new(Contract {
                    address,
                    param_type: (**param).clone(),
                })))
            }
            Type::Pair(..) => self.parse_pair(node, ty),
            Type::Or(left, right) => match &node.kind {
                NodeKind::Prim { name, args, .. } if args.len() == 1 => match name.known() {
                    Some(Prim::D_Left) => {
                        Ok(Value::Left(Rc::new(self.parse_data(&args[0], left)?)))
                    }
                    Some(Prim::D_Right) => {
                        Ok(Value::Right(Rc::new(self.parse_data(&args[0], right)?)))
                    }
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            },
            Type::Option(inner) => match &node.kind {
                NodeKind::Prim { name, args, .. } => match (name.known(), args.len()) {
                    (Some(Prim::D_Some), 1) => Ok(Value::some(self.parse_data(&args[0], inner)?)),
                    (Some(Prim::D_None), 0) => Ok(Value::None),
                    _ => Err(bad()),
                },
                _ => Err(bad()),
            },
            Type::List(inner) => match &node.kind {
                NodeKind::Seq(items) => {
                    let mut values = Vec::with_capacity(items.len());
                    for item in items.iter().rev() {
                        values.push(self.parse_data(item, inner)?);
                    }
                    Ok(Value::List(Rc::new(List::from_reversed(values))))
                }
                _ => Err(bad()),
            },
            Type::Set(inner) => match &node.kind {
                NodeKind::Seq(items) => {
                    let mut set = ValueSet::new();
                    let mut previous: Option<Value> = None;
                    for item in items {
                        let value = self.parse_data(item, inner)?;
                        if let Some(previous) = &previous {
                            self.charge_gas(crate::interpret::compare_cost(previous, &value));
                            if previous >= &value {
                                return Err(TcError::new(item.span, TcErrorKind::UnorderedSet));
                            }
                        }
                        self.charge_gas(crate::gas::interpreter::cost_set_update(
                            crate::interpret::comparable_size(&value),
                            set.len() as u64,
                        ));
                        previous = Some(value.clone());
                        set.push_last(value);
                    }
                    Ok(Value::Set(Rc::new(set)))
                }
                _ => Err(bad()),
            },
            Type::Map(key_type, value_type) => match &node.kind {
                NodeKind::Seq(items) => {
                    let bindings =
                        self.parse_elts(items, key_type, value_type, ElementCost::Map)?;
                    let mut map = ValueMap::new();
                    for (key, value) in bindings {
                        map.push_last(key, value);
                    }
                    Ok(Value::Map(Rc::new(map)))
                }
                _ => Err(bad()),
            },
            Type::BigMap(key_type, value_type) => match &node.kind {
                NodeKind::Seq(items) => {
                    let contents =
                        self.parse_elts(items, key_type, value_type, ElementCost::BigMap)?;
                    Ok(Value::BigMap(Rc::new(BigMap {
                        id: None,
                        key_type: (**key_type).clone(),
                        value_type: (**value_type).clone(),
                        overlay: contents.into_iter().map(|(k, v)| (k, Some(v))).collect(),
                    })))
                }
                NodeKind::Prim { name, args, .. }
                    if name.known() == Some(Prim::D_Pair) && args.len() == 2 =>
                {
                    // TZT's `Pair id { Elt key (Some value | None) }`: a stored big map and a diff.
                    let NodeKind::Int(id) = &args[0].kind else {
                        return Err(bad());
                    };
                    let id = Int::from(id);
                    if self.context.host.big_map_types(&id).value.is_none() {
                        return Err(bad());
                    }
                    let NodeKind::Seq(items) = &args[1].kind else {
                        return Err(bad());
                    };
                    let diff = self.parse_elts(
                        items,
                        key_type,
                        &Type::option((**value_type).clone()),
                        ElementCost::BigMap,
                    )?;
                    let overlay = diff
                        .into_iter()
                        .map(|(k, v)| match v {
                            Value::Some(v) => (k, Some((*v).clone())),
                            _ => (k, None),
                        })
                        .collect();
                    Ok(Value::BigMap(Rc::new(BigMap {
                        id: Some(id),
                        key_type: (**key_type).clone(),
                        value_type: (**value_type).clone(),
                        overlay,
                    })))
                }
                NodeKind::Int(id) => {
                    // `Big_map.exists`, then the stored types parsed and compared with the
                    // expected ones (`parse_comparable_ty`, `parse_big_map_value_ty`, `ty_eq`).
                    let id = Int::from(id);
                    let read = self.context.host.big_map_types(&id);
                    self.charge_gas(read.cost_milli);
                    let stored = read.value.ok_or_else(bad)?;
                    self.charge_gas(
                        super::charges::parse_type(&stored.key_type)
                            .saturating_add(super::charges::parse_type(&stored.value_type))
                            .saturating_add(super::charges::ty_eq(key_type, &stored.key_type))
                            .saturating_add(super::charges::ty_eq(value_type, &stored.value_type)),
                    );
                    if &stored.key_type != key_type.as_ref()
                        || &stored.value_type != value_type.as_ref()
                    {
                        return Err(bad());
                    }
                    Ok(Value::BigMap(Rc::new(BigMap {
                        id: Some(id),
                        key_type: (**key_type).clone(),
                        value_type: (**value_type).clone(),
                        overlay: BTreeMap::new(),
                    })))
                }
                _ => Err(bad()),
            },
            Type::Lambda(arg, ret) => {
                let (code, recursive) = match &node.kind {
                    NodeKind::Seq(_) => (node, false),
                    NodeKind::Prim { name, args, .. }
                        if name.known() == Some(Prim::D_Lambda_rec) && args.len() == 1 =>
                    {
                        (&args[0], true)
                    }
                    _ => return Err(bad()),
                };
                if !matches!(code.kind, NodeKind::Seq(_)) {
                    return Err(bad());
                }
                // A lambda written as data inside code is typechecked by a nested run of the
                // typechecker; bound that nesting so it cannot exhaust the host stack.
                if self.nesting >= super::MAX_NESTED_TYPECHECKS {
                    return Err(TcError::new(node.span, TcErrorKind::TooDeep));
                }
                self.nesting += 1;
                let lambda = self.typecheck_lambda(code, arg, ret, recursive);
                self.nesting -= 1;
                let lambda = lambda?;
                Ok(Value::Lambda(Rc::new(lambda)))
            }
            Type::Ticket(content_type) => {
                // Readable form `Pair ticketer content amount` (TZT).
                let ticket_type = Type::pair(
                    Type::Address,
                    Type::pair((**content_type).clone(), Type::Nat),
                );
                let parsed = self.parse_data(node, &ticket_type)?;
                let Value::Pair(outer) = parsed else {
                    return Err(bad());
                };
                let (ticketer, rest) = &*outer;
                let (Value::Address(ticketer), Value::Pair(inner)) = (ticketer, rest) else {
                    return Err(bad());
                };
                let (content, amount) = &**inner;
                let Value::Nat(amount) = amount else {
                    return Err(bad());
                };
                if amount.is_zero() {
                    return Err(bad());
                }
                Ok(Value::Ticket(Rc::new(Ticket {
                    ticketer: (**ticketer).clone(),
                    content_type: (**content_type).clone(),
                    content: content.clone(),
                    amount: amount.clone(),
                })))
            }
            Type::Bls12381Fr => match &node.kind {
                NodeKind::Bytes(b) if b.len() <= 32 => crate::bls::fr_from_bytes(b)
                    .map(|fr| Value::Bls12381Fr(Rc::new(fr)))
                    .ok_or_else(bad),
                NodeKind::Int(n) => Ok(Value::Bls12381Fr(Rc::new(crate::bls::fr_from_int(n)))),
                _ => Err(bad()),
            },
            Type::Bls12381G1 => match &node.kind {
                NodeKind::Bytes(b) if crate::bls::g1_valid(b) => {
                    Ok(Value::Bls12381G1(Rc::from(b.as_slice())))
                }
                _ => Err(bad()),
            },
            Type::Bls12381G2 => match &node.kind {
                NodeKind::Bytes(b) if crate::bls::g2_valid(b) => {
                    Ok(Value::Bls12381G2(Rc::from(b.as_slice())))
                }
                _ => Err(bad()),
            },
            Type::Never | Type::Operation => Err(bad()),
            Type::Chest | Type::ChestKey | Type::SaplingState(_) | Type::SaplingTransaction(_) => {
                Err(TcError::new(
                    node.span,
                    TcErrorKind::Unsupported(ty.to_string()),
                ))
            }
        }
    }

    /// The bindings of `{ Elt key value ; ... }`, in order, their keys strictly increasing.
    fn parse_elts(
        &mut self,
        items: &[Node],
        key_type: &Type,
        value_type: &Type,
        element_cost: ElementCost,
    ) -> Result<Vec<(Value, Value)>, TcError> {
        let mut bindings = Vec::with_capacity(items.len());
        let mut previous: Option<Value> = None;
        for item in items {
            let Some([key, value]) =
                prim_args(item, Prim::D_Elt).and_then(|a| <&[Node; 2]>::try_from(a).ok())
            else {
                return Err(invalid(
                    item,
                    &Type::Map(Rc::new(key_type.clone()), Rc::new(value_type.clone())),
                ));
            };
            let key = self.parse_data(key, key_type)?;
            if element_cost == ElementCost::BigMap {
                // A big map's bindings are indexed by the hash of the packed key.
                self.charge_gas(crate::pack::big_map_key_hash_cost(&key));
            }
            let value = self.parse_data(value, value_type)?;
            if let Some(previous) = &previous {
                self.charge_gas(crate::interpret::compare_cost(previous, &key));
                if previous >= &key {
                    return Err(TcError::new(item.span, TcErrorKind::UnorderedMap));
                }
            }
            self.charge_gas(match element_cost {
                ElementCost::Map => crate::gas::interpreter::cost_map_update(
                    crate::interpret::comparable_size(&key),
                    bindings.len() as u64,
                ),
                ElementCost::BigMap => {
                    crate::gas::interpreter::cost_big_map_update(bindings.len() as u64)
                }
            });
            previous = Some(key.clone());
            bindings.push((key, value));
        }
        Ok(bindings)
    }

    /// Pairs: `Pair a b`, `Pair a b c ...` (right comb) and `{ a ; b ; c }`, walked with a loop
    /// down the right comb.
    fn parse_pair(&mut self, node: &Node, ty: &Type) -> Result<Value, TcError> {
        // Flatten the node's right comb into components as far as the type's comb goes.
        let mut lefts: Vec<Value> = Vec::new();
        let mut current_ty = ty;
        let mut pending: Vec<&Node> = vec![node];
        let mut first_level = true;
        loop {
            let Type::Pair(left_ty, right_ty) = current_ty else {
                // Last component: a single node.
                if pending.len() != 1 {
                    return Err(invalid(node, ty));
                }
                let last = self.parse_data(pending[0], current_ty)?;
                let mut result = last;
                while let Some(left) = lefts.pop() {
                    result = Value::pair(left, result);
                }
                return Ok(result);
            };
            // Octez parses each level of a right comb with its own `parse_data` call; the first
            // was charged by the caller.
            if !first_level {
                self.charge_gas(crate::gas::typecheck::COST_PARSE_DATA_CYCLE);
            }
            first_level = false;
            // `pending` holds the nodes still to match `current_ty`: either one node (a Pair
            // or sequence) or several (the rest of an n-ary Pair).
            if pending.len() == 1 {
                let single = pending[0];
                let components: &[Node] = match &single.kind {
                    NodeKind::Prim {
                        name,
                        args,
                        annots: _,
                    } if name.known() == Some(Prim::D_Pair) && args.len() >= 2 => args,
                    NodeKind::Seq(items) if items.len() >= 2 => items,
                    _ => return Err(invalid(single, current_ty)),
                };
                pending = components.iter().collect();
            }
            let first = pending.remove(0);
            lefts.push(self.parse_data(first, left_ty)?);
            current_ty = right_ty;
        }
    }

    /// Reads an address in readable or optimized form.
    pub fn parse_address(&self, node: &Node) -> Option<Address> {
        match &node.kind {
            NodeKind::String(s) => Address::from_string(s),
            NodeKind::Bytes(b) => Address::from_bytes(b),
            _ => None,
        }
    }

    /// Typechecks a lambda's code.
    pub fn typecheck_lambda(
        &mut self,
        code: &Node,
        arg: &Type,
        ret: &Type,
        recursive: bool,
    ) -> Result<Lambda, TcError> {
        let mut stack = vec![arg.clone()];
        if recursive {
            stack.insert(0, Type::lambda(arg.clone(), ret.clone()));
        }
        // The lambda's descriptor in the typed IR, then its code.
        self.charge(super::charges::lambda_descriptor(&stack, ret));
        // Looked up before the body's instructions, in prefix order ([`Typechecker::location_of`]).
        let location = self.location_of(code);
        let (mut compiled, out) = self.typecheck_code(code, stack)?;
        compiled.location = location;
        self.charge_body_end(&out, None);
        match out {
            None => {}
            Some(out) if out.len() == 1 && &out[0] == ret => {
                self.charge_gas(super::charges::ty_eq(&out[0], ret));
            }
            Some(out) => {
                return Err(TcError::new(
                    code.span,
                    TcErrorKind::BadReturn {
                        expected: ret.to_string(),
                        found: super::stack_to_string(&out),
                    },
                ))
            }
        }
        // Octez keeps the lambda's code normalized: it unparses it (`normalized_lam`),
        // typechecking its `PUSH`ed constants again, after the lambda's own parse (so errors
        // there are not traced under this lambda, except for a `Lambda_rec`, parsed whole
        // under its trace); outside another unparsing it also charges the result's
        // serialization.
        let traced = !recursive && self.traced_depth > 0;
        if traced {
            self.traced_depth -= 1;
        }
        let serialize = self.unparse_depth == 0;
        let normalized = self.charge_unparse_code(code);
        if traced {
            self.traced_depth += 1;
        }
        normalized?;
        if serialize {
            self.charge_gas(super::charges::serialize_normalized_lambda(code));
            self.check_gas(code.span)?;
        }
        Ok(Lambda {
            node: code.clone(),
            code: Rc::new(compiled),
            recursive,
            arg: arg.clone(),
            ret: ret.clone(),
            applied: Vec::new(),
        })
    }
}
