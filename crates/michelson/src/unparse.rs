//! Values back to Micheline (`unparse_data` in Octez): the readable form (strings for addresses,
//! keys, timestamps; flat `Pair a b c` combs) for printing, and the optimized form (bytes and
//! integers; nested binary pairs, as `PACK` writes them).
//!
//! Recursion follows the value, whose depth is bounded by the type size limit; lambdas are
//! copied as nodes (their clone is iterative).

use crate::literals;
use crate::value::{Lambda, Operation, Value};
use kestrel_micheline::{Node, NodeKind, Prim};

/// Which form to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Strings for domain values, flat combs.
    Readable,
    /// Bytes and integers, right combs of three or more as sequences (`{ a ; b ; c }`).
    Optimized,
    /// Bytes and integers, binary pairs (what `PACK` serializes).
    OptimizedLegacy,
}

/// The Micheline form of `value`.
pub fn unparse(value: &Value, mode: Mode) -> Node {
    let readable = mode == Mode::Readable;
    match value {
        Value::Unit => Node::prim(Prim::D_Unit, vec![]),
        Value::Bool(true) => Node::prim(Prim::D_True, vec![]),
        Value::Bool(false) => Node::prim(Prim::D_False, vec![]),
        Value::Int(n) | Value::Nat(n) => Node::int(n.to_bigint()),
        Value::Mutez(m) => Node::int(*m),
        Value::Timestamp(t) => match (readable, literals::timestamp_to_rfc3339(t)) {
            (true, Some(text)) => Node::string(text),
            _ => Node::int(t.to_bigint()),
        },
        Value::String(s) => Node::string(s.to_string()),
        Value::Bytes(b) => Node::bytes(b.to_vec()),
        Value::KeyHash(k) => {
            if readable {
                Node::string(k.to_base58())
            } else {
                Node::bytes(k.to_bytes())
            }
        }
        Value::Key(k) => {
            if readable {
                Node::string(k.to_base58())
            } else {
                Node::bytes(k.to_bytes())
            }
        }
        Value::Signature(s) => {
            if readable {
                Node::string(s.to_base58())
            } else {
                Node::bytes(s.bytes.clone())
            }
        }
        Value::ChainId(c) => {
            if readable {
                Node::string(literals::chain_id_to_base58(c))
            } else {
                Node::bytes(c.to_vec())
            }
        }
        Value::Address(a) => {
            if readable {
                Node::string(a.to_readable())
            } else {
                Node::bytes(a.to_bytes())
            }
        }
        Value::Contract(c) => {
            if readable {
                Node::string(c.address.to_readable())
            } else {
                Node::bytes(c.address.to_bytes())
            }
        }
        Value::Pair(_) => {
            let mut items = Vec::new();
            let mut current = value;
            loop {
                match current {
                    Value::Pair(pair) if mode != Mode::OptimizedLegacy || items.is_empty() => {
                        items.push(unparse(&pair.0, mode));
                        current = &pair.1;
                    }
                    _ => {
                        items.push(unparse(current, mode));
                        break;
                    }
                }
            }
            // Octez's `unparse_pair`: readable combs are flat `Pair a b c`; optimized combs of
            // four or more are sequences, of three or two nested binary pairs; optimized-legacy
            // pairs are always binary (the loop above stops after the first element).
            match mode {
                Mode::Optimized if items.len() >= 4 => Node::seq(items),
                Mode::Readable => Node::prim(Prim::D_Pair, items),
                _ => {
                    let mut nested = items.pop().expect("a pair has two elements");
                    while let Some(left) = items.pop() {
                        nested = Node::prim(Prim::D_Pair, vec![left, nested]);
                    }
                    nested
                }
            }
        }
        Value::Left(v) => Node::prim(Prim::D_Left, vec![unparse(v, mode)]),
        Value::Right(v) => Node::prim(Prim::D_Right, vec![unparse(v, mode)]),
        Value::Some(v) => Node::prim(Prim::D_Some, vec![unparse(v, mode)]),
        Value::None => Node::prim(Prim::D_None, vec![]),
        Value::List(items) => Node::seq(items.iter().map(|v| unparse(v, mode)).collect()),
        Value::Set(items) => Node::seq(items.iter().map(|v| unparse(v, mode)).collect()),
        Value::Map(items) => Node::seq(
            items
                .iter()
                .map(|(k, v)| Node::prim(Prim::D_Elt, vec![unparse(k, mode), unparse(v, mode)]))
                .collect(),
        ),
        Value::BigMap(big_map) => match &big_map.id {
            Some(id) => Node::int(id.to_bigint()),
            None => Node::seq(
                big_map
                    .overlay
                    .iter()
                    .filter_map(|(k, v)| {
                        v.as_ref().map(|v| {
                            Node::prim(Prim::D_Elt, vec![unparse(k, mode), unparse(v, mode)])
                        })
                    })
                    .collect(),
            ),
        },
        Value::Lambda(lambda) => lambda_node(lambda, mode),
        // Octez unparses a ticket as the pair `(ticketer, (contents, amount))` in `mode`:
        // `Pair a b c` when readable, nested binary pairs when optimized.
        Value::Ticket(ticket) => unparse(
            &Value::pair(
                Value::Address(std::rc::Rc::new(ticket.ticketer.clone())),
                Value::pair(ticket.content.clone(), Value::Nat(ticket.amount.clone())),
            ),
            mode,
        ),
        Value::Operation(op) => operation_node(op, mode),
        Value::Bls12381Fr(fr) => Node::bytes(fr.to_vec()),
        Value::Bls12381G1(g) | Value::Bls12381G2(g) => Node::bytes(g.to_vec()),
    }
}

/// A lambda's code as Micheline: `APPLY`'d values appear as `{ PUSH t v ; PAIR ; code }`, and a
/// recursive lambda applied once becomes `{ PUSH t v ; PAIR ; LAMBDA_REC a r code ; SWAP ; EXEC }`
/// (Octez's forms).
pub fn lambda_node(lambda: &Lambda, mode: Mode) -> Node {
    let code = if mode != Mode::Readable {
        normalize_code(&lambda.node)
    } else {
        lambda.node.clone()
    };
    lambda_node_with(lambda, mode, code)
}

/// Octez unparses a lambda's code from its typed form, so `PUSH`ed data is written in the
/// requested form; this rewrites each `PUSH t v` of `code` with `v` in optimized form.
pub fn normalize_code(code: &Node) -> Node {
    normalize_pushes(code, Mode::OptimizedLegacy)
}

/// `code` with the data of every `PUSH` written in `mode`, as Octez's `unparse_code` (the
/// `normalize_script` RPC) writes a script.
pub fn normalize_code_in(code: &Node, mode: crate::data::UnparsingMode) -> Node {
    use crate::data::UnparsingMode as Public;
    normalize_pushes(
        code,
        match mode {
            Public::Readable => Mode::Readable,
            Public::Optimized => Mode::Optimized,
            Public::OptimizedLegacy => Mode::OptimizedLegacy,
        },
    )
}

fn normalize_pushes(code: &Node, mode: Mode) -> Node {
    let mut out = code.clone();
    crate::context::with_empty_lookup(|lookup| rewrite_pushes(&mut out, lookup, mode));
    out
}

/// Rewrites the data of every `PUSH` in `code` in `mode`.
fn rewrite_pushes(code: &mut Node, lookup: crate::context::Lookup<'_>, mode: Mode) {
    let mut pending: Vec<&mut Node> = vec![code];
    while let Some(node) = pending.pop() {
        match &mut node.kind {
            NodeKind::Prim { name, args, .. } => {
                if name.known() == Some(Prim::I_PUSH) && args.len() == 2 {
                    if let Ok(ty) = crate::types::parse_type(&args[0]) {
                        // A pushed lambda is code: normalize it in place rather than
                        // typechecking it again (which, for lambdas nesting lambdas, would
                        // redo the inner ones at every level).
                        if matches!(ty, crate::types::Type::Lambda(..)) {
                            let (_, data) = args.split_at_mut(1);
                            pending.push(&mut data[0]);
                            continue;
                        }
                        let mut tc = crate::typecheck::Typechecker::new(lookup);
                        tc.allow_self = false;
                        if let Ok(value) = tc.parse_data(&args[1], &ty) {
                            args[1] = unparse(&value, mode);
                        }
                    }
                    continue;
                }
                pending.extend(args.iter_mut());
            }
            NodeKind::Seq(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn lambda_node_with(lambda: &Lambda, mode: Mode, code: Node) -> Node {
    if lambda.applied.is_empty() {
        return if lambda.recursive {
            Node::prim(Prim::D_Lambda_rec, vec![code])
        } else {
            code
        };
    }
    // The original argument type: the applied types paired in front of the current argument.
    let mut original_arg = lambda.arg.clone();
    for (ty, _) in lambda.applied.iter().rev() {
        original_arg = crate::types::Type::pair(ty.clone(), original_arg);
    }
    let mut node: Option<Node> = None;
    for (index, (ty, value)) in lambda.applied.iter().enumerate() {
        let push = Node::prim(Prim::I_PUSH, vec![ty.to_node(), unparse(value, mode)]);
        let pair = Node::prim(Prim::I_PAIR, vec![]);
        node = Some(match (index, node) {
            (0, _) if lambda.recursive => Node::seq(vec![
                push,
                pair,
                Node::prim(
                    Prim::I_LAMBDA_REC,
                    vec![
                        original_arg.to_node(),
                        lambda.ret.to_node(),
                        lambda.node.clone(),
                    ],
                ),
                Node::prim(Prim::I_SWAP, vec![]),
                Node::prim(Prim::I_EXEC, vec![]),
            ]),
            (0, _) => Node::seq(vec![push, pair, code.clone()]),
            (_, Some(inner)) => Node::seq(vec![push, pair, inner]),
            (_, None) => Node::seq(vec![]),
        });
        // Each later APPLY captures a value whose type is the head of the remaining argument.
        let _ = &original_arg;
    }
    node.unwrap_or_else(|| Node::seq(vec![]))
}

fn operation_node(op: &Operation, mode: Mode) -> Node {
    let nonce = |n: &u64| Node::bytes(n.to_be_bytes().to_vec());
    let option_key_hash = |d: &Option<literals::KeyHash>| match d {
        Some(k) => Node::prim(Prim::D_Some, vec![unparse(&Value::KeyHash(*k), mode)]),
        None => Node::prim(Prim::D_None, vec![]),
    };
    match op {
        Operation::Transfer {
            param,
            amount,
            destination,
            nonce: n,
            ..
        } => Node::prim(
            kestrel_micheline::PrimName::new("Transfer_tokens"),
            vec![
                unparse(param, mode),
                Node::int(*amount),
                unparse(&Value::Address(std::rc::Rc::new(destination.clone())), mode),
                nonce(n),
            ],
        ),
        Operation::SetDelegate { delegate, nonce: n } => Node::prim(
            kestrel_micheline::PrimName::new("Set_delegate"),
            vec![option_key_hash(delegate), nonce(n)],
        ),
        Operation::CreateContract {
            script,
            delegate,
            amount,
            storage,
            nonce: n,
            ..
        } => Node::prim(
            kestrel_micheline::PrimName::new("Create_contract"),
            vec![
                script.clone(),
                option_key_hash(delegate),
                Node::int(*amount),
                unparse(storage, mode),
                nonce(n),
            ],
        ),
        Operation::Emit {
            tag,
            type_node,
            payload,
            ..
        } => Node {
            // TZT writes events as `Emit %tag type payload` (no nonce).
            kind: NodeKind::Prim {
                name: kestrel_micheline::PrimName::new("Emit"),
                args: vec![type_node.clone(), unparse(payload, mode)],
                annots: if tag.is_empty() {
                    Vec::new()
                } else {
                    vec![format!("%{tag}")]
                },
            },
            span: kestrel_micheline::Span::NONE,
        },
    }
}
