//! What Octez charges while it typechecks a script, and the size of the typed code it builds
//! (`Script_ir_translator.parse_instr`, `parse_data`, `parse_ty`, `ty_eq`, `stack_eq`,
//! `check_dupable_ty`, `find_entrypoint`, `code_size` and `Script_typed_ir_size`, proto_alpha).
//!
//! The typechecker calls these at the same points as Octez does: [`instruction`] once per
//! instruction node before its arguments or bodies are looked at, [`block`] once per sequence,
//! [`ty_eq`] and [`stack_eq`] wherever Octez unifies types. The costs are the ones of
//! [`crate::gas::typecheck`]. Octez's typed IR is not ours, so its node count (charged at 45
//! milligas per node once the code is typechecked, `Script_typed_ir_size_costs.nodes_cost`) is
//! counted here from what each Octez instruction holds: one node per instruction, per type node
//! it stores and per value node it pushes (`Script_typed_ir_size.kinstr_size`).
//!
//! Callers pass stacks top last, as the typechecker keeps them.

use super::ir_size;
use crate::gas::typecheck as cost;
use crate::types::{Type, WorkStack};
use crate::value::Value;
use kestrel_micheline::{Node, NodeKind, Prim};

/// Milligas and typed-IR nodes charged for one typechecking step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Charge {
    /// Milligas consumed.
    pub gas_milli: u64,
    /// Nodes of Octez's typed IR the step builds (counted for `code_size`).
    pub ir_nodes: u64,
    /// Bytes of Octez's size model for what the step builds (`code_size`, see [`ir_size`]).
    pub ir_bytes: u64,
}

impl Charge {
    fn add(&mut self, other: Charge) {
        self.gas_milli = self.gas_milli.saturating_add(other.gas_milli);
        self.ir_nodes = self.ir_nodes.saturating_add(other.ir_nodes);
        self.ir_bytes = self.ir_bytes.saturating_add(other.ir_bytes);
    }
}

/// Octez's type size (`Type_size`): one per type node.
pub fn type_size(ty: &Type) -> u64 {
    ty.size() as u64
}

/// `ty_eq` of two types: `cost_TY_EQ` of the smaller size.
pub fn ty_eq(left: &Type, right: &Type) -> u64 {
    cost::cost_ty_eq(type_size(left), type_size(right))
}

/// [`ty_eq`] with the sizes from `cache`.
fn cached_ty_eq(left: &Type, right: &Type, cache: &mut ir_size::MeasureCache) -> u64 {
    cost::cost_ty_eq(cache.measure(left).0, cache.measure(right).0)
}

/// `stack_eq` of two stacks of the same depth: one `ty_eq` per level. Where the two types of a
/// level are the same (the only case that typechecks) one size walk serves both.
pub fn stack_eq(left: &[Type], right: &[Type], cache: &mut ir_size::MeasureCache) -> u64 {
    left.iter().zip(right).fold(0u64, |total, (a, b)| {
        let cost = if a == b {
            let size = cache.measure(a).0;
            cost::cost_ty_eq(size, size)
        } else {
            cached_ty_eq(a, b, cache)
        };
        total.saturating_add(cost)
    })
}

/// `parse_ty` of a type: one `parse_type_cycle` per node (a flat `pair a b c` is parsed as
/// `pair a (pair b c)`, whose nodes [`Type`] has too), and one more per `big_map`, whose
/// arguments `parse_big_map_ty` parses after a cycle of its own.
pub fn parse_type(ty: &Type) -> u64 {
    if !ty.is_compound() {
        return cost::COST_PARSE_TYPE_CYCLE;
    }
    let mut nodes = 0u64;
    let mut big_maps = 0u64;
    ty.for_each_node(|ty| {
        nodes += 1;
        big_maps += u64::from(matches!(ty, Type::BigMap(..)));
    });
    parse_type_cycles(nodes, big_maps)
}

/// [`parse_type`] of a type of `nodes` nodes of which `big_maps` are big maps.
pub fn parse_type_cycles(nodes: u64, big_maps: u64) -> u64 {
    (nodes.saturating_add(big_maps)).saturating_mul(cost::COST_PARSE_TYPE_CYCLE)
}

/// The nodes `check_dupable_ty` visits: it stops at sets (their elements are comparable),
/// lambdas and contracts, and follows only the value type of maps and big maps.
pub fn dupable_check_nodes(ty: &Type) -> u64 {
    let mut visited = 0u64;
    let mut pending: WorkStack<&Type> = smallvec::smallvec![ty];
    while let Some(ty) = pending.pop() {
        visited += 1;
        match ty {
            Type::Pair(a, b) | Type::Or(a, b) => {
                pending.push(b);
                pending.push(a);
            }
            Type::Option(a) | Type::List(a) | Type::Map(_, a) | Type::BigMap(_, a) => {
                pending.push(a)
            }
            _ => {}
        }
    }
    visited
}

/// The nodes of a value `Script_typed_ir_size.value_size` counts: one per value node (a pair, an
/// option, each list or set element, each map key and value). A lambda counts one here; the
/// nodes of its code are counted when it is typechecked.
pub fn value_nodes(value: &Value) -> u64 {
    let mut count = 0u64;
    let mut pending: WorkStack<&Value> = smallvec::smallvec![value];
    while let Some(value) = pending.pop() {
        count += 1;
        match value {
            Value::Pair(pair) => {
                pending.push(&pair.0);
                pending.push(&pair.1);
            }
            Value::Left(inner) | Value::Right(inner) | Value::Some(inner) => pending.push(inner),
            Value::List(items) => pending.extend(items.iter()),
            Value::Set(items) => pending.extend(items.iter()),
            Value::Map(map) => {
                for (key, bound) in map.iter() {
                    pending.push(key);
                    pending.push(bound);
                }
            }
            _ => {}
        }
    }
    count
}

/// The number of Micheline nodes of an expression (`Script_repr.micheline_nodes`, and the node
/// count of `Script_typed_ir_size.node_size`).
pub fn micheline_nodes(node: &Node) -> u64 {
    count_nodes(node, false)
}

/// Counts the nodes of `node`, and its annotations too if `with_annotations`. The walk keeps
/// whole argument lists pending (one entry per application or sequence, not per node), inline
/// for ordinary depths: the typechecker counts every script's nodes more than once.
fn count_nodes(node: &Node, with_annotations: bool) -> u64 {
    let mut count = 0u64;
    let mut pending: WorkStack<&[Node]> = smallvec::smallvec![std::slice::from_ref(node)];
    while let Some(nodes) = pending.pop() {
        count = count.saturating_add(nodes.len() as u64);
        for node in nodes {
            let children = match &node.kind {
                NodeKind::Prim { args, annots, .. } => {
                    if with_annotations {
                        count = count.saturating_add(annots.len() as u64);
                    }
                    args
                }
                NodeKind::Seq(items) => items,
                _ => continue,
            };
            if !children.is_empty() {
                pending.push(children);
            }
        }
    }
    count
}

/// What serializing the normalized code of a lambda written as data costs
/// ([`crate::gas::typecheck::cost_serialize_normalized_lambda`]): its nodes, and its
/// serialized size with each annotation counted as a string.
pub fn serialize_normalized_lambda(code: &Node) -> u64 {
    let (nodes, serialized_nodes, int_bytes, string_bytes) = serialized_size(code);
    cost::cost_serialize_normalized_lambda(nodes, serialized_nodes, int_bytes, string_bytes)
}

/// `Script_repr.micheline_serialization_cost` of `node` (writing a contract's code or storage
/// to the context, `Script_repr.force_bytes_cost`).
pub fn micheline_serialization(node: &Node) -> u64 {
    let (_, serialized_nodes, int_bytes, string_bytes) = serialized_size(node);
    cost::cost_encode_micheline(serialized_nodes, int_bytes, string_bytes)
}

/// `Script_repr.deserialized_cost` of `node` (`cost_DECODING_MICHELINE`, at least 10): what
/// reading a stored expression back costs, e.g. a stored big-map value
/// (`Storage.Big_map.Contents.find`'s `consume_deserialize_gas`).
pub fn micheline_deserialization(node: &Node) -> u64 {
    let (_, serialized_nodes, int_bytes, string_bytes) = serialized_size(node);
    cost::cost_decode_micheline(serialized_nodes, int_bytes, string_bytes).max(10)
}

/// Nodes of `node`, then its nodes, integer bytes and string bytes as `Script_repr.
/// Micheline_size` counts them, each annotation a string node (`of_annots`).
fn serialized_size(node: &Node) -> (u64, u64, u64, u64) {
    let (nodes, int_bytes, string_bytes) = crate::pack::micheline_counts(node);
    let (mut annotations, mut annotation_bytes) = (0u64, 0u64);
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        match &node.kind {
            NodeKind::Prim { args, annots, .. } => {
                annotations += annots.len() as u64;
                annotation_bytes += annots.iter().map(|a| a.len() as u64).sum::<u64>();
                pending.extend(args.iter());
            }
            NodeKind::Seq(items) => pending.extend(items.iter()),
            _ => {}
        }
    }
    (
        nodes,
        nodes.saturating_add(annotations),
        int_bytes,
        string_bytes.saturating_add(annotation_bytes),
    )
}

/// The node count `Script_typed_ir_size.node_size` gives a Micheline expression (the code of
/// a script, of its views, of a `CREATE_CONTRACT`): one per node and one per annotation.
pub fn node_size_nodes(node: &Node) -> u64 {
    count_nodes(node, true)
}

/// Nodes of a stack type as `Script_typed_ir_size.stack_ty_size` counts them: one per level
/// plus its type's nodes, and one for the bottom.
pub fn stack_type_nodes(stack: &[Type]) -> u64 {
    stack
        .iter()
        .fold(1u64, |total, ty| total.saturating_add(1 + type_size(ty)))
}

/// The descriptor of a lambda (or of the script's code) in the typed IR: its input and output
/// stack types (`kdescr_size`); its instructions are counted as they are typechecked.
pub fn lambda_descriptor_nodes(input: &[Type], output: &Type) -> u64 {
    stack_type_nodes(input).saturating_add(stack_type_nodes(std::slice::from_ref(output)))
}

/// `parse_instr` of a sequence of `count` instructions: one cycle for each non-empty suffix
/// (`{a; b; c}`, `{b; c}`, `{c}`), or one for `{}`.
pub fn block(count: usize) -> Charge {
    Charge {
        gas_milli: (count.max(1) as u64).saturating_mul(cost::COST_PARSE_INSTRUCTION_CYCLE),
        ir_nodes: 0,
        ir_bytes: 0,
    }
}

/// An instruction Octez charges nothing more for: one `parse_instr` cycle, one IR node.
pub const PLAIN_INSTRUCTION: Charge = Charge {
    gas_milli: cost::COST_PARSE_INSTRUCTION_CYCLE,
    ir_nodes: 1,
    ir_bytes: ir_size::INSTR_BASE1,
};

/// The end of a block that does not always fail: its `IHalt`.
pub const BLOCK_END: Charge = Charge {
    gas_milli: 0,
    ir_nodes: 1,
    ir_bytes: ir_size::INSTR_BASE0,
};

/// A lambda's descriptor (or the script code's): its `Lam`, `kdescr` and stack types; its
/// instructions are counted as they are typechecked.
pub fn lambda_descriptor(input: &[Type], output: &Type) -> Charge {
    Charge {
        gas_milli: 0,
        ir_nodes: lambda_descriptor_nodes(input, output),
        ir_bytes: ir_size::lambda_descriptor_bytes(input, output),
    }
}

/// A value an instruction stores (`PUSH`).
pub fn stored_value(value: &Value) -> Charge {
    Charge {
        gas_milli: 0,
        ir_nodes: value_nodes(value),
        ir_bytes: ir_size::value_bytes(value),
    }
}

/// The integer argument of `DROP n`, `DIG n`, ... when there is one.
fn small_argument(args: &[Node]) -> Option<usize> {
    use num_traits::ToPrimitive;
    match args.first().map(|a| &a.kind) {
        Some(NodeKind::Int(n)) => n.to_usize(),
        _ => None,
    }
}

/// The type `n` levels below the top (0 = top) of a stack kept top last.
fn level(stack: &[Type], n: usize) -> Option<&Type> {
    stack.len().checked_sub(n + 1).map(|index| &stack[index])
}

/// The top `count` levels of a stack kept top last, top first.
fn top_levels(stack: &[Type], count: usize) -> impl Iterator<Item = &Type> {
    stack.iter().rev().take(count)
}

/// What Octez charges for instruction `prim` with arguments `args` on `stack`, before it
/// parses any type or data argument and before any body ([`parse_type`] and the data costs are
/// charged where those are parsed): its `parse_instr` cycle, proof arguments, dupable checks
/// and type unifications, and the typed-IR nodes the instruction holds besides parsed types and
/// pushed values. Ill-typed input charges what can be computed; the typechecker rejects it
/// right after.
pub fn instruction(
    prim: Prim,
    args: &[Node],
    stack: &[Type],
    cache: &mut ir_size::MeasureCache,
) -> Charge {
    let mut charge = Charge {
        gas_milli: cost::COST_PARSE_INSTRUCTION_CYCLE,
        ir_nodes: 1,
        ir_bytes: instruction_bytes(prim, args, stack, cache),
    };
    let top = level(stack, 0);
    let second = level(stack, 1);
    let third = level(stack, 2);
    let n = small_argument(args);
    let numbered = args.len() == 1 && n.is_some();
    let proof = |n: usize| cost::cost_proof_argument(n as u64);
    // A proof argument's witness: its nodes always, its bytes where `instruction_bytes` would
    // have counted them (a numbered instruction; `DIP n`), measured in one walk per level.
    let witness = |levels: &mut dyn Iterator<Item = &Type>,
                   with_bytes: bool,
                   cache: &mut ir_size::MeasureCache| {
        let (nodes, bytes) = ir_size::prefix_witness(levels, cache);
        Charge {
            gas_milli: 0,
            ir_nodes: nodes,
            ir_bytes: if with_bytes { bytes } else { 0 },
        }
    };
    let mut extra = Charge::default();
    match prim {
        // No typed instruction: `CAST` keeps the stack, `RENAME` drops an annotation.
        Prim::I_CAST => {
            charge.ir_nodes = 0;
            charge.ir_bytes = 0;
            if let (Some(top), Some(Ok(cast))) = (top, args.first().map(crate::types::parse_type)) {
                extra.gas_milli = cached_ty_eq(&cast, top, cache);
            }
        }
        Prim::I_RENAME => {
            charge.ir_nodes = 0;
            charge.ir_bytes = 0;
        }
        Prim::I_DROP | Prim::I_DIP if args.len() == 2 || (prim == Prim::I_DROP && n.is_some()) => {
            let depth = n.unwrap_or(0);
            extra = witness(
                &mut top_levels(stack, depth),
                prim == Prim::I_DIP || numbered,
                cache,
            );
            extra.gas_milli = proof(depth);
        }
        Prim::I_DIG => {
            let depth = n.unwrap_or(0);
            extra = witness(&mut top_levels(stack, depth), numbered, cache);
            extra.gas_milli = proof(depth);
        }
        Prim::I_DUG => {
            let depth = n.unwrap_or(0);
            extra = witness(&mut stack.iter().rev().skip(1).take(depth), numbered, cache);
            extra.gas_milli = proof(depth);
        }
        Prim::I_DUP => {
            let depth = n.unwrap_or(1);
            if n.is_some() {
                extra.gas_milli = proof(depth);
            }
            if let Some(ty) = depth.checked_sub(1).and_then(|d| level(stack, d)) {
                extra.gas_milli = extra
                    .gas_milli
                    .saturating_add(dupable_check_nodes(ty) * cost::COST_CHECK_DUPABLE_CYCLE);
            }
        }
        Prim::I_PAIR | Prim::I_UNPAIR | Prim::I_GET | Prim::I_UPDATE if n.is_some() => {
            extra.gas_milli = proof(n.unwrap_or(0));
        }
        Prim::I_CONS => {
            if let (Some(element), Some(Type::List(expected))) = (top, second) {
                extra.gas_milli = cached_ty_eq(element, expected, cache);
            }
        }
        Prim::I_MEM | Prim::I_GET => match (top, second) {
            (Some(key), Some(Type::Set(expected) | Type::Map(expected, _))) => {
                extra.gas_milli = cached_ty_eq(key, expected, cache)
            }
            (Some(key), Some(Type::BigMap(expected, _))) => {
                extra.gas_milli = cached_ty_eq(key, expected, cache)
            }
            _ => {}
        },
        Prim::I_UPDATE | Prim::I_GET_AND_UPDATE => match (top, second, third) {
            (Some(element), Some(Type::Bool), Some(Type::Set(expected))) => {
                extra.gas_milli = cached_ty_eq(element, expected, cache)
            }
            (
                Some(key),
                Some(Type::Option(bound)),
                Some(Type::Map(key_type, value_type) | Type::BigMap(key_type, value_type)),
            ) => {
                extra.gas_milli = cached_ty_eq(key, key_type, cache)
                    .saturating_add(cached_ty_eq(bound, value_type, cache));
            }
            _ => {}
        },
        Prim::I_EXEC => {
            if let (Some(argument), Some(Type::Lambda(parameter, _))) = (top, second) {
                extra.gas_milli = cached_ty_eq(argument, parameter, cache);
            }
        }
        Prim::I_APPLY => {
            if let (Some(captured), Some(Type::Lambda(parameter, _))) = (top, second) {
                if let Type::Pair(captured_type, _) = parameter.as_ref() {
                    extra.gas_milli = cached_ty_eq(captured, captured_type, cache);
                    extra.ir_nodes = cache.measure(captured_type).0;
                }
            }
        }
        Prim::I_COMPARE => {
            if let (Some(a), Some(b)) = (top, second) {
                extra.gas_milli = cached_ty_eq(a, b, cache);
                extra.ir_nodes = cache.measure(a).0;
            }
        }
        Prim::I_TRANSFER_TOKENS => {
            if let (Some(argument), Some(Type::Contract(parameter))) = (top, third) {
                extra.gas_milli = cached_ty_eq(argument, parameter, cache);
            }
        }
        Prim::I_JOIN_TICKETS => {
            if let Some(Type::Pair(a, b)) = top {
                if let (Type::Ticket(a), Type::Ticket(b)) = (a.as_ref(), b.as_ref()) {
                    extra.gas_milli = cached_ty_eq(a, b, cache);
                    extra.ir_nodes = cache.measure(a).0;
                }
            }
        }
        Prim::I_FAILWITH | Prim::I_PACK => {
            if let Some(ty) = top {
                extra.ir_nodes = cache.measure(ty).0;
            }
        }
        Prim::I_EMIT => {
            // `IEmit` keeps the payload type and its Micheline (`unparsed_ty`), whose locations
            // are stripped: the stack's type unparsed (`EMIT`), or the written type, unified
            // with the stack's (`EMIT ty`).
            if let Some(payload) = top {
                let payload_size = cache.measure(payload).0;
                match args.first() {
                    None => {
                        extra.gas_milli = cost::cost_unparse_type(payload_size)
                            .saturating_add(cost::cost_strip_locations(payload_size));
                        extra.ir_nodes = payload_size.saturating_mul(2);
                    }
                    Some(written) => {
                        if let Ok(ty) = crate::types::parse_type(written) {
                            extra.gas_milli = cached_ty_eq(&ty, payload, cache);
                        }
                        extra.gas_milli = extra
                            .gas_milli
                            .saturating_add(cost::cost_strip_locations(micheline_nodes(written)));
                        extra.ir_nodes = payload_size.saturating_add(node_size_nodes(written));
                    }
                }
            }
        }
        Prim::I_VIEW => {
            if let Some(NodeKind::String(name)) = args.first().map(|a| &a.kind) {
                extra.gas_milli = cost::cost_check_printable(name.len() as u64);
            }
            if let Some(input) = top {
                extra.ir_nodes = cache.measure(input).0;
            }
        }
        _ => {}
    }
    charge.add(extra);
    charge
}

/// The typed-IR nodes of a type an instruction stores once parsed (`PUSH`, `NIL`, `NONE`,
/// `LEFT`, `RIGHT`, `EMPTY_SET`, `EMPTY_MAP`'s key, `EMPTY_BIG_MAP`, `UNPACK`, `CONTRACT`,
/// `VIEW`'s output, `SELF`'s parameter); `EMPTY_MAP`'s value type is kept only for logging.
pub fn stored_type(ty: &Type) -> Charge {
    let (ir_nodes, ir_bytes) = ir_size::type_measure(ty);
    Charge {
        gas_milli: 0,
        ir_nodes,
        ir_bytes,
    }
}

/// The bytes of the typed instruction Octez builds for `prim` on `stack`
/// (`Script_typed_ir_size.kinstr_size`): its block by the number of continuations it holds,
/// its other fields, and what they hold besides the types and values parsed from its arguments
/// (counted by [`stored_type`] and [`stored_value`]), the entrypoint it names
/// ([`stored_entrypoint`]) and its bodies.
fn instruction_bytes(
    prim: Prim,
    args: &[Node],
    stack: &[Type],
    cache: &mut ir_size::MeasureCache,
) -> u64 {
    use ir_size::{
        peano_witness_bytes, type_bytes, INSTR_BASE0, INSTR_BASE1, INSTR_BASE2, INSTR_BASE3, WORD,
    };
    let n = small_argument(args);
    let numbered = args.len() == 1 && n.is_some();
    let mut top_type = || level(stack, 0).map_or(0, |ty| cache.measure(ty).1);
    match prim {
        Prim::I_IF | Prim::I_IF_NONE | Prim::I_IF_LEFT | Prim::I_IF_CONS => INSTR_BASE3,
        Prim::I_LOOP | Prim::I_LOOP_LEFT => INSTR_BASE2,
        // `IOpt_map` holds no more; the others keep a type for logging only (a word).
        Prim::I_MAP if matches!(level(stack, 0), Some(Type::Option(_))) => INSTR_BASE2,
        Prim::I_ITER | Prim::I_MAP => INSTR_BASE2 + WORD,
        // The proof witnesses of `DIP n`, `DROP n`, `DIG n`, `DUG n` are counted with their
        // nodes (`instruction`).
        Prim::I_DIP if args.len() == 2 => INSTR_BASE2 + 2 * WORD,
        Prim::I_DIP => INSTR_BASE2 + WORD,
        Prim::I_FAILWITH => INSTR_BASE0 + WORD + top_type(),
        Prim::I_NEVER => INSTR_BASE0,
        Prim::I_DROP | Prim::I_DIG | Prim::I_DUG if numbered => INSTR_BASE1 + 2 * WORD,
        Prim::I_DUP | Prim::I_PAIR | Prim::I_UNPAIR | Prim::I_GET | Prim::I_UPDATE if numbered => {
            INSTR_BASE1 + 2 * WORD + peano_witness_bytes(n.unwrap_or(0))
        }
        Prim::I_PUSH | Prim::I_EMPTY_MAP | Prim::I_EMPTY_BIG_MAP => INSTR_BASE1 + 2 * WORD,
        Prim::I_NONE
        | Prim::I_LEFT
        | Prim::I_RIGHT
        | Prim::I_NIL
        | Prim::I_EMPTY_SET
        | Prim::I_EXEC
        | Prim::I_LAMBDA
        | Prim::I_LAMBDA_REC
        | Prim::I_UNPACK
        | Prim::I_TICKET
        | Prim::I_TICKET_DEPRECATED
        | Prim::I_READ_TICKET
        | Prim::I_SAPLING_EMPTY_STATE => INSTR_BASE1 + WORD,
        Prim::I_COMPARE | Prim::I_PACK => INSTR_BASE1 + WORD + top_type(),
        Prim::I_APPLY => {
            let captured = match level(stack, 1) {
                Some(Type::Lambda(parameter, _)) => match parameter.as_ref() {
                    Type::Pair(captured, _) => type_bytes(captured),
                    _ => 0,
                },
                _ => 0,
            };
            INSTR_BASE1 + WORD + captured
        }
        Prim::I_JOIN_TICKETS => {
            let contents = match level(stack, 0) {
                Some(Type::Pair(a, _)) => match a.as_ref() {
                    Type::Ticket(contents) => type_bytes(contents),
                    _ => 0,
                },
                _ => 0,
            };
            INSTR_BASE1 + WORD + contents
        }
        Prim::I_CONTRACT | Prim::I_SELF => INSTR_BASE1 + 2 * WORD,
        Prim::I_CREATE_CONTRACT => INSTR_BASE1 + 2 * WORD,
        Prim::I_VIEW => {
            // `view_signature_size`: its block, its name, its input type (the output type is
            // a parsed argument).
            let name = match args.first().map(|a| &a.kind) {
                Some(NodeKind::String(name)) => name.len() as u64,
                _ => 0,
            };
            INSTR_BASE1 + 2 * WORD + ir_size::H3W + ir_size::string_size(name) + top_type()
        }
        Prim::I_EMIT => {
            // The payload type and its Micheline: the stack's unparsed, or the written one.
            let payload = top_type();
            let unparsed = match args.first() {
                Some(written) => ir_size::node_bytes(written),
                None => level(stack, 0).map_or(0, |ty| ir_size::node_bytes(&ty.to_node())),
            };
            INSTR_BASE1 + 3 * WORD + payload + unparsed
        }
        _ => INSTR_BASE1,
    }
}

/// The entrypoint an instruction stores (`CONTRACT`, `SELF`, `EMIT`'s tag; empty for
/// `default`): a string (`Entrypoint.in_memory_size`).
pub fn stored_entrypoint(name: &str) -> Charge {
    Charge {
        gas_milli: 0,
        ir_nodes: 0,
        ir_bytes: ir_size::entrypoint_size(name),
    }
}

/// `collect_lazy_storage` of a value before the code runs (`fold_lazy_storage`): one
/// `parse_data_cycle` per call, where a call on a type without big maps stops at once and the
/// others follow the value (both halves of a pair, the present side of an `or`, a `Some`, every
/// list element and map value); a stored big map (with an id) costs one more cycle.
pub fn collect_lazy_storage(ty: &Type, value: &Value) -> u64 {
    lazy_storage_walk(ty, value, true)
}

/// `extract_lazy_storage_diff`'s walk of a value (`extract_lazy_storage_updates`): the same
/// calls as [`collect_lazy_storage`], but a big map costs one cycle whether stored or not.
pub fn extract_lazy_storage(ty: &Type, value: &Value) -> u64 {
    lazy_storage_walk(ty, value, false)
}

fn lazy_storage_walk(ty: &Type, value: &Value, stored_costs_more: bool) -> u64 {
    let mut calls = 0u64;
    let mut pending = vec![(ty, value)];
    while let Some((ty, value)) = pending.pop() {
        calls += 1;
        if !ty.has_big_map() {
            continue;
        }
        match (ty, value) {
            (Type::BigMap(..), Value::BigMap(big_map)) => {
                calls += u64::from(stored_costs_more && big_map.id.is_some());
            }
            (Type::Pair(left, right), Value::Pair(pair)) => {
                pending.push((right, &pair.1));
                pending.push((left, &pair.0));
            }
            (Type::Or(left, _), Value::Left(inner)) => pending.push((left, inner)),
            (Type::Or(_, right), Value::Right(inner)) => pending.push((right, inner)),
            (Type::Option(inner_type), Value::Some(inner)) => pending.push((inner_type, inner)),
            (Type::List(element), Value::List(items)) => {
                pending.extend(items.iter().map(|item| (element.as_ref(), item)))
            }
            (Type::Map(_, bound), Value::Map(map)) => {
                pending.extend(map.values().map(|item| (bound.as_ref(), item)))
            }
            _ => {}
        }
    }
    calls.saturating_mul(cost::COST_COLLECT_LAZY_STORAGE_CYCLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(prim: Prim, args: &[Node], stack: &[Type], expected: (u64, u64)) {
        let charge = instruction(prim, args, stack, &mut ir_size::MeasureCache::default());
        assert_eq!(
            (charge.gas_milli, charge.ir_nodes),
            expected,
            "{prim:?} on {stack:?}"
        );
    }

    fn int(n: i64) -> Node {
        Node::int(n)
    }

    #[test]
    fn instruction_charges_as_data() {
        let pair = Type::pair(Type::Nat, Type::Unit);
        check(Prim::I_CAR, &[], std::slice::from_ref(&pair), (220, 1));
        // DUP of a pair: three dupable-check steps.
        check(
            Prim::I_DUP,
            &[],
            std::slice::from_ref(&pair),
            (220 + 300, 1),
        );
        // EMIT of a pair: unparse_ty (20 per node) and strip_locations (51 per node) of the
        // stack's type; the IR keeps the type and its Micheline.
        check(
            Prim::I_EMIT,
            &[],
            std::slice::from_ref(&pair),
            (220 + 60 + 153, 1 + 3 + 3),
        );
        // EMIT nat on a nat: ty_eq (35 + 22) and strip_locations of the written `nat`.
        check(
            Prim::I_EMIT,
            &[Node::prim(Prim::T_nat, vec![])],
            &[Type::Nat],
            (220 + 57 + 51, 1 + 1 + 1),
        );
        // COMPARE of two nats: one ty_eq of size 1 and the type stored in the IR.
        check(Prim::I_COMPARE, &[], &[Type::Nat, Type::Nat], (220 + 57, 2));
        // DIG 2: a proof argument of 2 and a witness holding the two levels above.
        check(
            Prim::I_DIG,
            &[int(2)],
            &[Type::Unit, pair.clone(), Type::Nat],
            (220 + 100, 1 + (1 + 1) + (1 + 3)),
        );
        // DROP 1 goes through the proof-argument path too.
        check(
            Prim::I_DROP,
            &[int(1)],
            std::slice::from_ref(&pair),
            (220 + 50, 1 + 4),
        );
        check(Prim::I_DROP, &[], &[pair], (220, 1));
        check(Prim::I_RENAME, &[], &[Type::Nat], (220, 0));
    }

    #[test]
    fn sizes_as_data() {
        assert_eq!(block(0).gas_milli, 220);
        assert_eq!(block(3).gas_milli, 660);
        assert_eq!(stack_type_nodes(&[Type::pair(Type::Nat, Type::Unit)]), 5);
        let set = Type::Set(std::rc::Rc::new(Type::pair(Type::Nat, Type::Nat)));
        assert_eq!(dupable_check_nodes(&set), 1);
        let map = Type::Map(
            std::rc::Rc::new(Type::Nat),
            std::rc::Rc::new(Type::option(Type::Unit)),
        );
        assert_eq!(dupable_check_nodes(&map), 3);
    }
}
