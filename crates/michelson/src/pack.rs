//! Typed `PACK` and `UNPACK` (`specs/michelson.rst`, "PACK"): a value is unparsed in optimized
//! form (bytes for addresses, keys, signatures, chain ids; integers for timestamps; binary pairs)
//! and serialized as `0x05` followed by binary Micheline; `UNPACK` reads it back and typechecks
//! it as data of the expected type. Signature checking lives here too because it needs the
//! crypto crate's key types.

use crate::context::Lookup;
use crate::literals::{Key, Signature};
use crate::typecheck::unparse_code::UnparseExhausted;
use crate::types::Type;
use crate::unparse::{unparse, Mode};
use crate::value::{Lambda, Value};
use kestrel_crypto::keys::{PublicKey, Signature as CryptoSignature, SignatureScheme};
use std::rc::Rc;

/// `PACK`: the serialized optimized form of `value`.
pub fn pack_value(
    value: &Value,
    _ty: &Type,
) -> Result<Vec<u8>, kestrel_micheline::binary::EncodeError> {
    kestrel_micheline::pack::pack(&unparse(value, Mode::OptimizedLegacy))
}

/// `PACK` with what Octez charges for it (`Script_ir_translator.pack_data`): unparsing the
/// value in optimized mode ([`unparse_cost`]), then stripping locations and serializing the
/// expression ([`crate::gas::typecheck::cost_pack`] of its node, integer-byte and string-byte
/// counts).
pub fn pack_with_cost(
    value: &Value,
) -> Result<(Vec<u8>, u64), kestrel_micheline::binary::EncodeError> {
    let node = unparse(value, Mode::OptimizedLegacy);
    let (nodes, int_bytes, string_bytes) = micheline_counts(&node);
    let cost =
        crate::gas::typecheck::cost_pack(unparse_cost(value), nodes, int_bytes, string_bytes);
    Ok((kestrel_micheline::pack::pack(&node)?, cost))
}

/// What `APPLY` pays to unparse the value it captures ([`pack_cost`]) within `budget_milli`:
/// unparsing a lambda can run out of gas inside a constant it typechecks again, which Octez
/// reports as a static error ([`UnparseExhausted`]).
pub fn pack_cost_within(value: &Value, budget_milli: u64) -> Result<u64, UnparseExhausted> {
    let mut exhausted = None;
    let unparse_milli =
        unparse_cost_with(
            value,
            |lambda| match crate::typecheck::unparse_code::lambda_unparse_cost(lambda, budget_milli)
            {
                Ok(cost) => cost,
                Err(error) => {
                    exhausted.get_or_insert(error);
                    crate::gas::arith::SATURATED
                }
            },
        );
    if let Some(error) = exhausted {
        return Err(error);
    }
    let node = unparse(value, Mode::OptimizedLegacy);
    let (nodes, int_bytes, string_bytes) = micheline_counts(&node);
    Ok(crate::gas::typecheck::cost_pack(
        unparse_milli,
        nodes,
        int_bytes,
        string_bytes,
    ))
}

/// What packing `value` costs, without the bytes (`EMIT`, `CREATE_CONTRACT` and the final
/// storage unparse it the same way).
pub fn pack_cost(value: &Value) -> u64 {
    let node = unparse(value, Mode::OptimizedLegacy);
    let (nodes, int_bytes, string_bytes) = micheline_counts(&node);
    crate::gas::typecheck::cost_pack(unparse_cost(value), nodes, int_bytes, string_bytes)
}

/// Hashing a big-map key (`Script_ir_translator.hash_comparable_data`): packing it, then
/// `BLAKE2B` of the packed bytes. Comparable keys (all big-map keys are) are measured without
/// building the packed form, since the interpreter needs only the cost, not the hash.
pub fn big_map_key_hash_cost(key: &Value) -> u64 {
    if let Some(profile) = comparable_pack_profile(key) {
        return crate::gas::typecheck::cost_pack(
            profile.unparse_cost,
            profile.nodes,
            profile.int_bytes,
            profile.string_bytes,
        )
        .saturating_add(crate::gas::interpreter::cost_blake2b(
            profile.packed_length.saturating_add(1),
        ));
    }
    match pack_with_cost(key) {
        Ok((bytes, cost)) => {
            cost.saturating_add(crate::gas::interpreter::cost_blake2b(bytes.len() as u64))
        }
        Err(_) => pack_cost(key),
    }
}

/// What packing a comparable value involves, measured on the value itself.
#[derive(Debug, Default, PartialEq, Eq)]
struct PackProfile {
    /// [`unparse_cost`] of the value.
    unparse_cost: u64,
    /// Nodes of its optimized Micheline form.
    nodes: u64,
    /// Bytes of its integers' magnitudes, rounded up.
    int_bytes: u64,
    /// Bytes of its strings and byte sequences.
    string_bytes: u64,
    /// Length of its binary Micheline form, without the `0x05` prefix.
    packed_length: u64,
}

/// The [`PackProfile`] of a comparable value, walked with an explicit stack: integers,
/// mutez and timestamps are `int` nodes (tag and Zarith bytes), strings `string` nodes, bytes,
/// key hashes, keys, signatures, addresses and chain ids `bytes` nodes (tag, 4-byte length,
/// content), `Unit`/`True`/`False`/`None` primitives without arguments, `Some`/`Left`/`Right`
/// with one and `Pair` with two. `None` for anything else (the caller packs it instead).
fn comparable_pack_profile(value: &Value) -> Option<PackProfile> {
    use crate::gas::typecheck as cost;
    let mut profile = PackProfile::default();
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        profile.nodes += 1;
        profile.unparse_cost = profile
            .unparse_cost
            .saturating_add(cost::COST_UNPARSE_DATA_CYCLE);
        let mut bytes_node = |length: u64, encoding: u64| {
            profile.string_bytes += length;
            profile.packed_length += 5 + length;
            profile.unparse_cost = profile.unparse_cost.saturating_add(encoding);
        };
        match value {
            Value::Int(n) | Value::Nat(n) | Value::Timestamp(n) => {
                let bits = n.bits();
                profile.int_bytes += bits.div_ceil(8);
                profile.packed_length += 1 + zarith_length(bits);
            }
            Value::Mutez(amount) => {
                let bits = u64::from(64 - amount.unsigned_abs().leading_zeros());
                profile.int_bytes += bits.div_ceil(8);
                profile.packed_length += 1 + zarith_length(bits);
            }
            Value::String(text) => {
                profile.string_bytes += text.len() as u64;
                profile.packed_length += 5 + text.len() as u64;
            }
            Value::Bytes(bytes) => bytes_node(bytes.len() as u64, 0),
            Value::KeyHash(_) => bytes_node(21, cost::COST_ENCODE_KEY_HASH_OPTIMIZED),
            Value::Key(key) => bytes_node(
                key.bytes.len() as u64 + 1,
                cost::COST_ENCODE_PUBLIC_KEY_OPTIMIZED,
            ),
            Value::Signature(signature) => bytes_node(
                signature.bytes.len() as u64,
                cost::COST_ENCODE_SIGNATURE_OPTIMIZED,
            ),
            Value::Address(address) => bytes_node(
                22 + address.entrypoint.len() as u64,
                cost::COST_ENCODE_KEY_HASH_OPTIMIZED,
            ),
            Value::ChainId(_) => bytes_node(4, cost::COST_ENCODE_CHAIN_ID_OPTIMIZED),
            Value::Unit | Value::Bool(_) | Value::None => profile.packed_length += 2,
            Value::Some(inner) | Value::Left(inner) | Value::Right(inner) => {
                profile.packed_length += 2;
                pending.push(inner);
            }
            Value::Pair(pair) => {
                profile.packed_length += 2;
                pending.push(&pair.1);
                pending.push(&pair.0);
            }
            _ => return None,
        }
    }
    Some(profile)
}

/// Bytes of Zarith's encoding of an integer of `bits` significant bits: six in the first byte
/// (beside the sign), seven in each following one.
fn zarith_length(bits: u64) -> u64 {
    if bits <= 6 {
        1
    } else {
        1 + (bits - 6).div_ceil(7)
    }
}

/// `unparse_data` of a value in optimized mode (`Michelson_v1_gas.Cost_of.Unparsing`): one
/// `unparse_data_cycle` per value node (map bindings are not nodes of their own), the optimized
/// encoding of keys, key hashes, addresses, contracts, signatures, chain ids and BLS values,
/// a ticket as the pair it unparses to (`unparse_data_rec`'s `Ticket_t` case), and for a lambda its code's `unparse_code_rec` (`typecheck::unparse_code`: one
/// `unparse_instr_cycle` per node, its `PUSH`ed constants typechecked and unparsed again).
pub fn unparse_cost(value: &Value) -> u64 {
    unparse_cost_with(value, |lambda| {
        crate::typecheck::unparse_code::lambda_unparse_cost(
            lambda,
            crate::host::HARD_GAS_LIMIT_PER_OPERATION_MILLI,
        )
        .unwrap_or(crate::gas::arith::SATURATED)
    })
}

/// [`unparse_cost`] with the cost of each lambda's code given by `lambda_cost` (the data
/// cycle of the lambda itself is counted here).
pub fn unparse_cost_with(value: &Value, mut lambda_cost: impl FnMut(&Rc<Lambda>) -> u64) -> u64 {
    use crate::gas::typecheck as cost;
    let mut total = 0u64;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        let leaf = match value {
            Value::Key(_) => cost::COST_ENCODE_PUBLIC_KEY_OPTIMIZED,
            Value::KeyHash(_) | Value::Address(_) | Value::Contract(_) => {
                cost::COST_ENCODE_KEY_HASH_OPTIMIZED
            }
            Value::Signature(_) => cost::COST_ENCODE_SIGNATURE_OPTIMIZED,
            Value::ChainId(_) => cost::COST_ENCODE_CHAIN_ID_OPTIMIZED,
            Value::Bls12381Fr(_) => cost::COST_ENCODE_BLS12_381_FR,
            Value::Bls12381G1(_) => cost::COST_ENCODE_BLS12_381_G1,
            Value::Bls12381G2(_) => cost::COST_ENCODE_BLS12_381_G2,
            Value::Lambda(lambda) => lambda_cost(lambda),
            // Unparsed as the pair `(ticketer, (contents, amount))`: beside the ticket's own
            // cycle, one for each pair, the address (and its encoding) and the amount.
            Value::Ticket(ticket) => {
                pending.push(&ticket.content);
                (4 * cost::COST_UNPARSE_DATA_CYCLE)
                    .saturating_add(cost::COST_ENCODE_KEY_HASH_OPTIMIZED)
            }
            Value::Pair(pair) => {
                pending.push(&pair.1);
                pending.push(&pair.0);
                0
            }
            Value::Left(inner) | Value::Right(inner) | Value::Some(inner) => {
                pending.push(inner);
                0
            }
            Value::List(items) => {
                items.append_to(&mut pending);
                0
            }
            Value::Set(items) => {
                pending.extend(items.iter());
                0
            }
            Value::Map(map) => {
                for (key, bound) in map.iter() {
                    pending.push(bound);
                    pending.push(key);
                }
                0
            }
            _ => 0,
        };
        total = total
            .saturating_add(cost::COST_UNPARSE_DATA_CYCLE)
            .saturating_add(leaf);
    }
    total
}

/// Nodes (`Elt` included), integer bytes (magnitudes rounded up to bytes) and string/bytes
/// lengths of an expression, as `Script_repr`'s serialization costs count them.
pub fn micheline_counts(node: &kestrel_micheline::Node) -> (u64, u64, u64) {
    use kestrel_micheline::NodeKind;
    let (mut nodes, mut int_bytes, mut string_bytes) = (0u64, 0u64, 0u64);
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        nodes += 1;
        match &node.kind {
            NodeKind::Int(value) => int_bytes += crate::gas::size::int_bytes(value),
            NodeKind::String(text) => string_bytes += text.len() as u64,
            NodeKind::Bytes(bytes) => string_bytes += bytes.len() as u64,
            NodeKind::Prim { args, .. } => pending.extend(args.iter()),
            NodeKind::Seq(items) => pending.extend(items.iter()),
        }
    }
    (nodes, int_bytes, string_bytes)
}

/// `UNPACK` with what Octez charges for it: the instruction and the Micheline decoding of the
/// whole input ([`crate::gas::typecheck::cost_unpack_decoding`]), then the typechecking of the
/// decoded value (`parse_data`), or, when it does not typecheck,
/// [`crate::gas::typecheck::cost_unpack_failed`]; input without the `0x05` prefix or that does
/// not decode costs only the decoding.
pub(crate) fn unpack_with_cost(
    bytes: &[u8],
    ty: &Type,
    context: Lookup<'_>,
) -> (Option<Value>, u64) {
    use crate::gas::typecheck as cost;
    let decoding = cost::cost_unpack_decoding(bytes.len() as u64);
    let Ok(node) = kestrel_micheline::pack::unpack(bytes) else {
        return (None, decoding);
    };
    let mut tc = crate::typecheck::Typechecker::new(context);
    tc.allow_self = false;
    match tc.parse_data(&node, ty) {
        Ok(value) => (
            Some(value),
            decoding.saturating_add(u64::try_from(tc.gas_consumed_milli).unwrap_or(0)),
        ),
        Err(_) => (
            None,
            decoding.saturating_add(cost::cost_unpack_failed(
                (bytes.len() as u64).saturating_sub(1),
            )),
        ),
    }
}

/// `UNPACK`: the value of type `ty` packed in `bytes`, if any.
pub(crate) fn unpack_value(bytes: &[u8], ty: &Type, context: Lookup<'_>) -> Option<Value> {
    let node = kestrel_micheline::pack::unpack(bytes).ok()?;
    let mut tc = crate::typecheck::Typechecker::new(context);
    tc.allow_self = false;
    tc.parse_data(&node, ty).ok()
}

/// The hash a big map is keyed by (Octez's `Script_expr_hash` of the key): BLAKE2b-256 of the
/// packed key.
pub fn big_map_key_hash(key: &Value, key_type: &Type) -> [u8; 32] {
    // A comparable value packs without error: its depth and size are bounded by its type's, and
    // its nodes are all encodable; an empty packing would only make the lookup miss.
    let packed = pack_value(key, key_type).unwrap_or_default();
    kestrel_crypto::hash::blake2b_256(&packed)
}

/// `CHECK_SIGNATURE`: whether `signature` by `key` is valid for `message`, as the protocol
/// environment checks it (`Signature.check`, environment V16: BLS with the proof-of-possession
/// scheme, the message not prefixed by the key).
pub fn check_signature(key: &Key, signature: &Signature, message: &[u8]) -> bool {
    let Ok(public_key) = PublicKey::try_from_bytes(&key.to_bytes()) else {
        return false;
    };
    let scheme = SignatureScheme::from_tag(key.kind);
    let Ok(signature) = CryptoSignature::try_new(scheme, &signature.bytes) else {
        return false;
    };
    public_key.check(&signature, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::int::Int;
    use std::rc::Rc;

    /// A tz4 `CHECK_SIGNATURE` accepts a signature made with the proof-of-possession scheme
    /// (Octez's `Bls.check`) and rejects one made with message augmentation.
    #[test]
    fn bls_signatures_are_checked_with_the_proof_of_possession_scheme() {
        let secret = blst::min_pk::SecretKey::key_gen(&[9u8; 32], &[]).expect("key");
        let key_bytes = secret.sk_to_pk().compress();
        let key = Key {
            kind: 3,
            bytes: key_bytes.to_vec(),
        };
        let message = b"\x05\x01\x00\x00\x00\x02hi";
        let sign = |dst: &[u8], augmentation: &[u8]| Signature {
            bytes: secret.sign(message, dst, augmentation).compress().to_vec(),
            kind: Some(3),
        };
        let pop = sign(kestrel_crypto::keys::BLS_POP_SCHEME_SIGNATURE_DST, &[]);
        let augmented = sign(kestrel_crypto::keys::BLS_SIGNATURE_DST, &key_bytes);
        assert!(check_signature(&key, &pop, message));
        assert!(!check_signature(&key, &pop, b"other"));
        assert!(!check_signature(&key, &augmented, message));
    }

    /// The profile measured on the value agrees with packing it for real.
    #[test]
    fn comparable_profile_matches_packing() {
        let values = [
            Value::Nat(Int::from(0)),
            Value::Int(Int::from(-948)),
            Value::Nat(Int::from(1i64 << 40)),
            Value::Mutez(1_000_000),
            Value::String(Rc::from("foobar")),
            Value::Bytes(Rc::from(&[0u8, 0xaa, 0xbb][..])),
            Value::Unit,
            Value::Bool(true),
            Value::some(Value::Nat(Int::from(7))),
            Value::None,
            Value::Left(Rc::new(Value::String(Rc::from("a")))),
            Value::pair(Value::Nat(Int::from(1)), Value::String(Rc::from("b"))),
        ];
        for value in &values {
            let profile = comparable_pack_profile(value).expect("comparable");
            let node = unparse(value, Mode::OptimizedLegacy);
            let (nodes, int_bytes, string_bytes) = micheline_counts(&node);
            let (bytes, cost) = pack_with_cost(value).expect("packs");
            assert_eq!(
                (profile.nodes, profile.int_bytes, profile.string_bytes),
                (nodes, int_bytes, string_bytes),
                "{node:?}"
            );
            assert_eq!(profile.packed_length + 1, bytes.len() as u64, "{node:?}");
            assert_eq!(
                crate::gas::typecheck::cost_pack(
                    profile.unparse_cost,
                    profile.nodes,
                    profile.int_bytes,
                    profile.string_bytes
                ),
                cost,
                "{node:?}"
            );
        }
    }
}
