//! The bytes Octez's size model gives a typechecked script in memory
//! (`Script_typed_ir_size`, `Cache_memory_helpers`, protocol 025): the script cache's size is
//! the sum of its scripts' sizes (`Script_ir_translator.script_size`: the typed code's
//! `code_size` plus the storage's `value_size`), and the cost of every cache lookup and update
//! grows with it.
//!
//! The model counts OCaml blocks: a header word plus the fields of each typed-IR instruction,
//! type and value, with constants Octez measured (`Obj.reachable_words`) for the leaves. The
//! typechecker adds an instruction's bytes where it counts its typed-IR node
//! (`charges::instruction` and the charges beside it); this module holds the sizes of what the
//! instructions carry (types, stack types, proof witnesses, values, Micheline).

use crate::types::{Type, WorkStack};
use crate::value::Value;
use kestrel_micheline::{Node, NodeKind};
use num_bigint::BigInt;

/// A machine word, bytes (`word_size`).
pub const WORD: u64 = 8;
/// A block header (`header_size`).
pub const HEADER: u64 = WORD;
/// A block of one field (`h1w`).
pub const H1W: u64 = HEADER + WORD;
/// A block of two fields (`h2w`).
pub const H2W: u64 = HEADER + 2 * WORD;
/// A block of three fields (`h3w`).
pub const H3W: u64 = HEADER + 3 * WORD;
/// A block of four fields (`h4w`).
pub const H4W: u64 = HEADER + 4 * WORD;
/// A block of five fields (`h5w`).
pub const H5W: u64 = HEADER + 5 * WORD;

/// An instruction with no continuation (`IHalt`, `IFailwith`, `INever`: `base0`).
pub const INSTR_BASE0: u64 = H1W;
/// An instruction with one continuation (`base1`).
pub const INSTR_BASE1: u64 = H2W;
/// An instruction with a body and a continuation (`base2`).
pub const INSTR_BASE2: u64 = H3W;
/// An instruction with two branches and a continuation (`base3`).
pub const INSTR_BASE3: u64 = H4W;

/// A `Lam` (descriptor and Micheline) and its `kdescr` (location, stack types, instruction).
pub const LAMBDA_BLOCKS: u64 = H2W + H4W;

/// `Set_t` values: the boxed module's measured size, and a tree node per element.
const SET_BOXING_BYTES: u64 = 536;
/// `Map_t` values: the boxed module's measured size, and a tree node per binding.
const MAP_BOXING_BYTES: u64 = 696;
/// `key_hash_size`, measured.
const KEY_HASH_BYTES: u64 = 64;
/// `chain_id_size`, measured.
const CHAIN_ID_BYTES: u64 = 16;
/// `mutez_size` (`h2w`).
const MUTEZ_BYTES: u64 = H2W;
/// `signature_size` of an ed25519, secp256k1 or p256 signature (and of an unknown one).
const SIGNATURE_BYTES: u64 = 96;
/// `signature_size` of a BLS signature.
const BLS_SIGNATURE_BYTES: u64 = 128;
/// `signature_size` of an ML-DSA-44 signature.
const MLDSA_SIGNATURE_BYTES: u64 = 2448;
/// `blake2b_hash_size`: a boxed 20-byte string.
const BLAKE2B_HASH_BYTES: u64 = H1W + string_size(20);
/// `public_key_hash_in_memory_size`.
const PUBLIC_KEY_HASH_BYTES: u64 = H1W + BLAKE2B_HASH_BYTES;

/// `string_size_gen`: a string of `len` bytes with its header and padding.
pub const fn string_size(len: u64) -> u64 {
    HEADER + len + (8 - len % 8)
}

/// `z_size`: nothing for an integer of at most 62 bits (an immediate), else its limbs.
pub fn z_size(z: &BigInt) -> u64 {
    bits_size(z.bits())
}

/// [`z_size`] of an integer of `bits` significant bits.
fn bits_size(bits: u64) -> u64 {
    if bits <= 62 {
        0
    } else {
        WORD * bits.div_ceil(64) + 32
    }
}

/// `Entrypoint.in_memory_size`; the empty name stands for `default`.
pub fn entrypoint_size(name: &str) -> u64 {
    let name = if name.is_empty() { "default" } else { name };
    string_size(name.len() as u64)
}

/// `ty_size`'s bytes: nothing for a basic type (shared), a block with its metadata and
/// fields for each compound one.
pub fn type_bytes(ty: &Type) -> u64 {
    type_measure(ty).1
}

/// A type's node count (Octez's type size) and [`type_bytes`], in one walk: proof witnesses
/// count both for each level they hold.
pub fn type_measure(ty: &Type) -> (u64, u64) {
    if !ty.is_compound() {
        return (1, scalar_type_bytes(ty));
    }
    let mut nodes = 0u64;
    let mut total = 0u64;
    ty.for_each_node(|ty| {
        nodes += 1;
        total = total.saturating_add(type_node_bytes(ty));
    });
    (nodes, total)
}

/// The slots of a [`MeasureCache`] (a power of two).
const MEASURE_SLOTS: usize = 256;

/// [`type_measure`] of the compound types a typechecking meets, by identity: the types on a
/// stack are clones sharing their arguments, and proof witnesses (`DIG n`, `DUG n`, ...)
/// measure the same levels again and again. Direct-mapped by the address of a type's first
/// argument; each slot holds a clone of the type it answers for, so an address it compares is
/// never reused for another type while the entry lives (types are immutable).
#[derive(Default)]
pub struct MeasureCache {
    slots: Vec<Option<(Type, (u64, u64))>>,
}

impl MeasureCache {
    /// [`type_measure`] of `ty`.
    pub fn measure(&mut self, ty: &Type) -> (u64, u64) {
        let first = match ty {
            Type::Pair(a, _)
            | Type::Or(a, _)
            | Type::Lambda(a, _)
            | Type::Map(a, _)
            | Type::BigMap(a, _)
            | Type::Option(a)
            | Type::List(a)
            | Type::Set(a)
            | Type::Contract(a)
            | Type::Ticket(a) => a,
            scalar => return (1, scalar_type_bytes(scalar)),
        };
        if self.slots.is_empty() {
            self.slots.resize(MEASURE_SLOTS, None);
        }
        // Fibonacci hashing of the address, its alignment bits dropped.
        let address = (std::rc::Rc::as_ptr(first) as usize as u64) >> 4;
        let slot = (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % MEASURE_SLOTS;
        if let Some((held, measure)) = &self.slots[slot] {
            if same_node(held, ty) {
                return *measure;
            }
        }
        let measure = type_measure(ty);
        self.slots[slot] = Some((ty.clone(), measure));
        measure
    }
}

/// Whether two types are the same node: the same constructor over the same arguments.
fn same_node(a: &Type, b: &Type) -> bool {
    use std::rc::Rc;
    match (a, b) {
        (Type::Pair(a1, a2), Type::Pair(b1, b2))
        | (Type::Or(a1, a2), Type::Or(b1, b2))
        | (Type::Lambda(a1, a2), Type::Lambda(b1, b2))
        | (Type::Map(a1, a2), Type::Map(b1, b2))
        | (Type::BigMap(a1, a2), Type::BigMap(b1, b2)) => Rc::ptr_eq(a1, b1) && Rc::ptr_eq(a2, b2),
        (Type::Option(a), Type::Option(b))
        | (Type::List(a), Type::List(b))
        | (Type::Set(a), Type::Set(b))
        | (Type::Contract(a), Type::Contract(b))
        | (Type::Ticket(a), Type::Ticket(b)) => Rc::ptr_eq(a, b),
        _ => false,
    }
}

/// The bytes of one node of a type, without its arguments' ([`type_measure`] adds them up).
pub fn type_node_bytes(ty: &Type) -> u64 {
    match ty {
        Type::Pair(..) | Type::Or(..) => H1W + 3 * WORD,
        Type::Lambda(..) | Type::Map(..) | Type::BigMap(..) | Type::Option(_) => H1W + 2 * WORD,
        Type::List(_) | Type::Set(_) | Type::Contract(_) | Type::Ticket(_) => H1W + WORD,
        scalar => scalar_type_bytes(scalar),
    }
}

/// [`type_bytes`] of a type without type arguments.
fn scalar_type_bytes(ty: &Type) -> u64 {
    match ty {
        // `base_compound_no_meta`, the memo size (counted as nothing) and a word.
        Type::SaplingState(_) | Type::SaplingTransaction(_) => HEADER + WORD,
        _ => 0,
    }
}

/// `stack_ty_size`'s bytes: a two-field block per level, with its type.
pub fn stack_bytes(stack: &[Type]) -> u64 {
    stack.iter().fold(0u64, |total, ty| {
        total.saturating_add(H2W.saturating_add(type_bytes(ty)))
    })
}

/// A lambda's `Lam` and descriptor with its input and output stack types.
pub fn lambda_descriptor_bytes(input: &[Type], output: &Type) -> u64 {
    LAMBDA_BLOCKS
        .saturating_add(stack_bytes(input))
        .saturating_add(stack_bytes(std::slice::from_ref(output)))
}

/// A stack-prefix witness (`KPrefix` per level, with that level's type): its typed-IR nodes
/// (one per level and its type's) and bytes.
pub fn prefix_witness<'a>(
    levels: impl Iterator<Item = &'a Type>,
    cache: &mut MeasureCache,
) -> (u64, u64) {
    levels.fold((0u64, 0u64), |(nodes, bytes), ty| {
        let (type_nodes, type_bytes) = cache.measure(ty);
        (
            nodes.saturating_add(1 + type_nodes),
            bytes.saturating_add(H3W.saturating_add(type_bytes)),
        )
    })
}

/// A Peano-shaped witness of `n` (`PAIR n`, `UNPAIR n`, `GET n`, `UPDATE n`, `DUP n`).
pub fn peano_witness_bytes(n: usize) -> u64 {
    (HEADER + H1W).saturating_mul(n as u64)
}

/// `node_size`'s bytes of a Micheline expression: a block per node, a list cell per argument
/// or item, and each annotation a boxed string.
pub fn node_bytes(node: &Node) -> u64 {
    node_measure(node).1
}

/// The node count `Script_typed_ir_size.node_size` gives a Micheline expression (one per node
/// and one per annotation, as [`super::charges::node_size_nodes`]) and its [`node_bytes`], in
/// one walk: a script's code and views count both.
pub fn node_measure(node: &Node) -> (u64, u64) {
    let mut nodes = 0u64;
    let mut total = 0u64;
    // Whole argument lists are kept pending (one entry per application or sequence), inline
    // for ordinary depths: the typechecker measures every script's code.
    let mut pending: WorkStack<&[Node]> = smallvec::smallvec![std::slice::from_ref(node)];
    while let Some(siblings) = pending.pop() {
        for node in siblings {
            let children = node.children();
            if !children.is_empty() {
                pending.push(children);
            }
            let (own_nodes, own_bytes) = node_own_measure(node);
            nodes = nodes.saturating_add(own_nodes);
            total = total.saturating_add(own_bytes);
        }
    }
    (nodes, total)
}

/// One node's part of [`node_measure`], without its arguments' or items'.
pub fn node_own_measure(node: &Node) -> (u64, u64) {
    match &node.kind {
        NodeKind::Int(z) => (1, H2W + z_size(z)),
        NodeKind::String(s) => (1, H2W + string_size(s.len() as u64)),
        NodeKind::Bytes(b) => (1, H2W + string_size(b.len() as u64)),
        NodeKind::Prim { args, annots, .. } => {
            let annotations: u64 = annots
                .iter()
                .map(|a| H2W + string_size(a.len() as u64))
                .sum();
            (
                1 + annots.len() as u64,
                annotations + 3 * WORD * args.len() as u64 + H4W,
            )
        }
        NodeKind::Seq(items) => (1, 3 * WORD * items.len() as u64 + H2W),
    }
}

/// `value_size`'s bytes of a pushed value (a lambda's own blocks and code are counted when it
/// is typechecked).
pub fn value_bytes(value: &Value) -> u64 {
    let mut total = 0u64;
    let mut pending: Vec<&Value> = vec![value];
    while let Some(value) = pending.pop() {
        let bytes = match value {
            Value::Unit | Value::Bool(_) | Value::None | Value::Lambda(_) => 0,
            Value::Int(z) | Value::Nat(z) | Value::Timestamp(z) => bits_size(z.bits()),
            Value::String(s) => string_size(s.len() as u64),
            Value::Bytes(b) => string_size(b.len() as u64),
            Value::Mutez(_) => MUTEZ_BYTES,
            Value::KeyHash(_) => KEY_HASH_BYTES,
            Value::Key(key) => key_bytes(Some(key.kind)),
            Value::Signature(signature) => signature_bytes(signature.bytes.len()),
            Value::ChainId(_) => CHAIN_ID_BYTES,
            Value::Address(address) => {
                address_bytes(address.destination.is_implicit(), &address.entrypoint)
            }
            Value::Pair(pair) => {
                pending.push(&pair.0);
                pending.push(&pair.1);
                H2W
            }
            Value::Left(inner) | Value::Right(inner) => {
                pending.push(inner);
                H1W
            }
            Value::Some(inner) => {
                pending.push(inner);
                H1W
            }
            Value::List(items) => {
                pending.extend(items.iter());
                H2W + H2W * items.len() as u64
            }
            Value::Set(items) => {
                pending.extend(items.iter());
                SET_BOXING_BYTES + H4W * items.len() as u64
            }
            Value::Map(map) => {
                for (key, bound) in map.iter() {
                    pending.push(key);
                    pending.push(bound);
                }
                MAP_BOXING_BYTES + H5W * map.len() as u64
            }
            // Not pushable, hence never in a script's code; a stored big map is measured by
            // `storage_bytes`.
            Value::BigMap(_)
            | Value::Contract(_)
            | Value::Operation(_)
            | Value::Ticket(_)
            | Value::Bls12381Fr(_)
            | Value::Bls12381G1(_)
            | Value::Bls12381G2(_) => 0,
        };
        total = total.saturating_add(bytes);
    }
    total
}

/// `public_key_size` by the key's tag (0 ed25519, 1 secp256k1, 2 p256, 3 BLS, 4 ML-DSA-44).
fn key_bytes(tag: Option<u8>) -> u64 {
    H1W + match tag {
        Some(1) => 72,
        Some(2) => 96,
        Some(4) => 1328,
        _ => 64,
    }
}

/// `signature_size` by the signature's length.
fn signature_bytes(length: usize) -> u64 {
    match length {
        96 => BLS_SIGNATURE_BYTES,
        0..=64 => SIGNATURE_BYTES,
        _ => MLDSA_SIGNATURE_BYTES,
    }
}

/// `address_size`: the address block, its destination (`Destination.in_memory_size`, a
/// contract: implicit or originated; a smart rollup's hash is counted as an originated
/// contract's) and its entrypoint.
fn address_bytes(implicit: bool, entrypoint: &str) -> u64 {
    let contract = if implicit {
        H1W + PUBLIC_KEY_HASH_BYTES
    } else {
        H1W + BLAKE2B_HASH_BYTES
    };
    H2W + H1W + contract + entrypoint_size(entrypoint)
}

/// `value_size`'s bytes of a stored value of type `ty` written as Micheline
/// (`Script_ir_translator.script_size` of a loaded script's storage).
pub fn storage_bytes(ty: &Type, node: &Node) -> u64 {
    storage_size(ty, node).bytes
}

/// `value_size`'s nodes of a stored value of type `ty` written as Micheline, which
/// `script_size` charges for (`Script_typed_ir_size_costs.nodes_cost`).
pub fn storage_nodes(ty: &Type, node: &Node) -> u64 {
    storage_size(ty, node).nodes
}

/// What `value_size` measures.
struct ValueSize {
    nodes: u64,
    bytes: u64,
}

/// `value_size`'s nodes and bytes of a stored value of type `ty` written as Micheline: a node
/// per value, pair block included (pairs may be written as combs or sequences); a map's
/// bindings are a key and a value each; a stored big map (its id) counts its block and the
/// nodes and bytes of its types; a ticket its block, ticketer and amount, and its contents; a
/// lambda counts its Micheline (its typed code is not rebuilt here).
fn storage_size(ty: &Type, node: &Node) -> ValueSize {
    let mut total = 0u64;
    let mut nodes = 0u64;
    let mut pending: Vec<(&Type, &Node)> = vec![(ty, node)];
    while let Some((ty, node)) = pending.pop() {
        nodes = nodes.saturating_add(1);
        let bytes = match (ty, &node.kind) {
            (Type::Int | Type::Nat | Type::Timestamp, NodeKind::Int(z)) => z_size(z),
            (Type::String, NodeKind::String(s)) => string_size(s.len() as u64),
            (Type::Bytes, NodeKind::Bytes(b)) => string_size(b.len() as u64),
            (Type::Mutez, _) => MUTEZ_BYTES,
            (Type::KeyHash, _) => KEY_HASH_BYTES,
            (Type::Key, NodeKind::Bytes(b)) => key_bytes(b.first().copied()),
            (Type::Key, NodeKind::String(s)) => key_bytes(Some(key_tag(s))),
            (Type::Signature, NodeKind::Bytes(b)) => signature_bytes(b.len()),
            (Type::Signature, NodeKind::String(s)) => {
                signature_bytes(if s.starts_with("BLsig") { 96 } else { 64 })
            }
            (Type::ChainId, _) => CHAIN_ID_BYTES,
            (Type::Address, NodeKind::String(s)) => {
                let (address, entrypoint) = s.split_once('%').unwrap_or((s, ""));
                address_bytes(!address.starts_with("KT1"), entrypoint)
            }
            (Type::Address, NodeKind::Bytes(b)) => {
                // Binary form: a 22-byte contract (tag 0 implicit) then the entrypoint.
                let entrypoint = b
                    .get(22..)
                    .map_or("", |e| std::str::from_utf8(e).unwrap_or(""));
                address_bytes(b.first() == Some(&0), entrypoint)
            }
            (Type::Pair(_, _), NodeKind::Prim { args, .. }) if args.len() >= 2 => {
                let blocks = comb_items(ty, args, &mut pending);
                nodes = nodes.saturating_add(blocks - 1);
                H2W * blocks
            }
            (Type::Pair(_, _), NodeKind::Seq(items)) if items.len() >= 2 => {
                let blocks = comb_items(ty, items, &mut pending);
                nodes = nodes.saturating_add(blocks - 1);
                H2W * blocks
            }
            (Type::Or(left, right), NodeKind::Prim { args, .. }) if args.len() == 1 => {
                let is_left = node.known_prim() == Some(kestrel_micheline::Prim::D_Left);
                pending.push((if is_left { left } else { right }, &args[0]));
                H1W
            }
            (Type::Option(inner), NodeKind::Prim { args, .. }) => {
                if let Some(arg) = args.first() {
                    pending.push((inner, arg));
                    H1W
                } else {
                    0
                }
            }
            (Type::List(element), NodeKind::Seq(items)) => {
                pending.extend(items.iter().map(|item| (element.as_ref(), item)));
                H2W + H2W * items.len() as u64
            }
            (Type::Set(element), NodeKind::Seq(items)) => {
                pending.extend(items.iter().map(|item| (element.as_ref(), item)));
                SET_BOXING_BYTES + H4W * items.len() as u64
            }
            (Type::Map(key, bound), NodeKind::Seq(items)) => {
                for item in items {
                    if let NodeKind::Prim { args, .. } = &item.kind {
                        if let [k, v] = args.as_slice() {
                            pending.push((key, k));
                            pending.push((bound, v));
                        }
                    }
                }
                MAP_BOXING_BYTES + H5W * items.len() as u64
            }
            (Type::BigMap(key, bound), NodeKind::Int(id)) => {
                // `big_map_size`: the block, its id (an option of an integer), its types and
                // an empty overlay.
                nodes = nodes.saturating_add((key.size() + bound.size()) as u64);
                H4W + H1W + z_size(id) + type_bytes(key) + type_bytes(bound) + H2W
            }
            // `ticket_size`, its contents measured by the walk (`value_traverse`): written as
            // `Pair ticketer contents amount` or `Pair ticketer (Pair contents amount)`.
            (Type::Ticket(contents), NodeKind::Prim { args, .. }) => {
                let rest = match args.as_slice() {
                    [_, contents, amount] => Some((contents, amount)),
                    [_, pair] => match &pair.kind {
                        NodeKind::Prim { args, .. } if args.len() == 2 => {
                            Some((&args[0], &args[1]))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                let Some((value, amount)) = rest else {
                    continue;
                };
                pending.push((contents, value));
                let amount_bytes = match &amount.kind {
                    NodeKind::Int(z) => z_size(z),
                    _ => 0,
                };
                H3W + H1W + BLAKE2B_HASH_BYTES + amount_bytes
            }
            (Type::Lambda(_, _), _) => {
                nodes = nodes.saturating_add(super::charges::micheline_nodes(node) - 1);
                node_bytes(node)
            }
            _ => 0,
        };
        total = total.saturating_add(bytes);
    }
    ValueSize {
        nodes,
        bytes: total,
    }
}

/// A right comb written flat (`Pair a b c`, `{a; b; c}`) of type `ty`: its items are queued
/// with their types, and the number of its pair blocks returned (at least 1).
fn comb_items<'a>(ty: &'a Type, items: &'a [Node], pending: &mut Vec<(&'a Type, &'a Node)>) -> u64 {
    let mut blocks = 0u64;
    let mut ty = ty;
    for (index, item) in items.iter().enumerate() {
        if index + 1 == items.len() {
            pending.push((ty, item));
            break;
        }
        let Type::Pair(left, right) = ty else {
            break;
        };
        blocks += 1;
        pending.push((left, item));
        ty = right;
    }
    blocks.max(1)
}

/// The tag of a public key written in base58 (by its prefix), as its binary form has it.
fn key_tag(text: &str) -> u8 {
    match text.get(..4) {
        Some("sppk") => 1,
        Some("p2pk") => 2,
        Some("BLpk") => 3,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_octez_helpers() {
        assert_eq!(string_size(0), 16);
        assert_eq!(string_size(7), 16);
        assert_eq!(string_size(8), 24);
        assert_eq!(BLAKE2B_HASH_BYTES, 48);
        assert_eq!(PUBLIC_KEY_HASH_BYTES, 64);
        assert_eq!(entrypoint_size(""), 16);
        assert_eq!(z_size(&BigInt::from(1u64 << 61)), 0);
        assert_eq!(z_size(&BigInt::from(1u64 << 62)), 40);
        // pair nat (list unit): the pair and the list.
        let ty = Type::pair(Type::Nat, Type::list(Type::Unit));
        assert_eq!(type_bytes(&ty), 40 + 24);
        // `{ UNIT }`: a sequence of one item, a primitive without arguments.
        let node = Node::seq(vec![Node::prim(kestrel_micheline::Prim::I_UNIT, vec![])]);
        assert_eq!(node_bytes(&node), 24 + 24 + 40);
    }
}
