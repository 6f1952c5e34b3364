//! octez-client's `Optimized` unparsing of right combs: a value of `pair t1 .. tn` is written
//! `Pair a b` for two elements, `Pair a (Pair b c)` for three and the sequence `{ a ; b ; .. }`
//! for four or more (`Script_ir_unparser.unparse_pair`). The Michelson crate unparses pairs as
//! binary `Pair`s (`Optimized_legacy`, what `PACK` writes); this rewrites that form, following
//! the type. Recursion follows the type, whose size Michelson bounds.

use crate::client::engine::{shape, TypeShape};
use kestrel_micheline::{Node, NodeKind, Prim};
use kestrel_michelson::Type;

/// Rewrites the binary pairs of `node`, a value of `ty` in optimized form, as octez-client's
/// `Optimized` mode writes them.
pub fn optimize_combs(node: &Node, ty: &Type) -> Node {
    match (shape(ty), &node.kind) {
        (TypeShape::Pair(..), _) => {
            let mut elements = Vec::new();
            let (mut ty, mut node) = (ty, node);
            loop {
                match (shape(ty), pair_args(node)) {
                    (TypeShape::Pair(left, right), Some((first, rest))) => {
                        elements.push(optimize_combs(first, left));
                        ty = right;
                        node = rest;
                    }
                    _ => {
                        elements.push(optimize_combs(node, ty));
                        break;
                    }
                }
            }
            match elements.len() {
                0..=2 => Node::prim(Prim::D_Pair, elements),
                3 => {
                    let last = elements.split_off(1);
                    elements.push(Node::prim(Prim::D_Pair, last));
                    Node::prim(Prim::D_Pair, elements)
                }
                _ => Node::seq(elements),
            }
        }
        (TypeShape::Or(left, right), NodeKind::Prim { name, args, .. }) => {
            let inner = match name.known() {
                Some(Prim::D_Left) => left,
                Some(Prim::D_Right) => right,
                _ => return node.clone(),
            };
            with_args(
                node,
                args.iter().map(|a| optimize_combs(a, inner)).collect(),
            )
        }
        (TypeShape::Option(inner), NodeKind::Prim { args, .. }) => with_args(
            node,
            args.iter().map(|a| optimize_combs(a, inner)).collect(),
        ),
        (TypeShape::Elements(inner), NodeKind::Seq(items)) => {
            Node::seq(items.iter().map(|i| optimize_combs(i, inner)).collect()).with_span(node.span)
        }
        (TypeShape::Map(key, value), NodeKind::Seq(items)) => Node::seq(
            items
                .iter()
                .map(|item| match &item.kind {
                    NodeKind::Prim { args, .. } if args.len() == 2 => with_args(
                        item,
                        vec![
                            optimize_combs(&args[0], key),
                            optimize_combs(&args[1], value),
                        ],
                    ),
                    _ => item.clone(),
                })
                .collect(),
        )
        .with_span(node.span),
        _ => node.clone(),
    }
}

/// The two arguments of a `Pair a b` node.
fn pair_args(node: &Node) -> Option<(&Node, &Node)> {
    match &node.kind {
        NodeKind::Prim { name, args, .. }
            if name.known() == Some(Prim::D_Pair) && args.len() == 2 =>
        {
            Some((&args[0], &args[1]))
        }
        _ => None,
    }
}

/// `node` (a primitive application) with `args` in place of its arguments.
fn with_args(node: &Node, args: Vec<Node>) -> Node {
    match &node.kind {
        NodeKind::Prim { name, annots, .. } => Node {
            kind: NodeKind::Prim {
                name: name.clone(),
                args,
                annots: annots.clone(),
            },
            span: node.span,
        },
        _ => node.clone(),
    }
}
