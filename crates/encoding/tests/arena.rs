//! The arena ([`RecursiveArena`]) against the tree of owned values ([`mu`]) on the same format:
//! the same bytes both ways for arbitrary values, the same verdict (value, or error kind and
//! offset) on arbitrary bytes, typed errors at depth 100,000 with no stack overflow, and the
//! arena's own encode errors.

// Helpers of this test file unwrap what the test itself constructs (clippy.toml allows it only
// inside `#[test]` functions).
#![allow(clippy::unwrap_used)]

use kestrel_encoding::arena::{read_tag, unexpected_tag, write_tag};
use kestrel_encoding::reader::Reader;
use kestrel_encoding::writer::Writer;
use kestrel_encoding::{
    boxed, case, case_with, dynamic_size_with, int32, mu_with_max_depth, obj, req, tup, uint16,
    uint8, union, variable_string, Arena, ArenaEncodeError, DecodeError, DecodeErrorKind,
    EncodeError, EncodeErrorKind, Encoding, LengthKind, Mu, NodeCodec, RecursiveArena, Step,
    TagSize,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// An arithmetic expression: `mu expression (obj3 (req "op" uint8) (req "left" operand)
// (req "right" operand))` where `operand = union [0: int32; 1: expression]` (the shape of the
// eval benchmark's request).

#[derive(Debug, Clone, PartialEq)]
enum Operand {
    Value(i32),
    Expression(Box<Expression>),
}

type Expression = (u8, Operand, Operand);

fn operand_value(operand: &Operand) -> Option<&i32> {
    match operand {
        Operand::Value(value) => Some(value),
        Operand::Expression(_) => None,
    }
}

#[allow(clippy::borrowed_box)]
fn operand_expression(operand: &Operand) -> Option<&Box<Expression>> {
    match operand {
        Operand::Expression(expression) => Some(expression),
        Operand::Value(_) => None,
    }
}

fn expression_mu(max_depth: usize) -> Mu<Expression> {
    mu_with_max_depth("expression", max_depth, |expression| {
        let operand = || {
            union(
                TagSize::Uint8,
                (
                    case(0, "value", int32(), operand_value, Operand::Value),
                    case(
                        1,
                        "expression",
                        boxed(expression),
                        operand_expression,
                        Operand::Expression,
                    ),
                ),
            )
        };
        obj((
            req("op", uint8()),
            req("left", operand()?),
            req("right", operand()?),
        ))
    })
    .unwrap()
}

/// One side of an expression node in the arena: a literal, or the next child.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Value(i32),
    Child,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct ExpressionNode {
    op: u8,
    left: Side,
    right: Side,
}

struct ExpressionCodec;

fn read_side(reader: &mut Reader<'_>) -> Result<Side, DecodeError> {
    let (tag, offset) = read_tag(reader, TagSize::Uint8)?;
    match tag {
        0 => Ok(Side::Value(int32().read(reader)?)),
        1 => Ok(Side::Child),
        _ => Err(unexpected_tag(tag, offset)),
    }
}

fn write_side(side: Side, writer: &mut Writer<'_>) -> Result<Step, EncodeError> {
    match side {
        Side::Value(value) => {
            write_tag(writer, 0, TagSize::Uint8);
            int32().write(&value, writer)?;
            Ok(Step::End)
        }
        Side::Child => {
            write_tag(writer, 1, TagSize::Uint8);
            Ok(Step::Child)
        }
    }
}

impl NodeCodec for ExpressionCodec {
    type Node<'a> = ExpressionNode;

    const MIN_NODE_BYTES: usize = 3;

    fn node_size_bytes(&self, node: &ExpressionNode) -> usize {
        let literal = |side: Side| match side {
            Side::Value(_) => 4,
            Side::Child => 0,
        };
        3 + literal(node.left) + literal(node.right)
    }

    fn read_head<'a>(
        &self,
        reader: &mut Reader<'a>,
    ) -> Result<(ExpressionNode, Step), DecodeError> {
        let op = uint8().read(reader)?;
        let left = read_side(reader)?;
        let mut node = ExpressionNode {
            op,
            left,
            right: Side::Child,
        };
        if left == Side::Child {
            return Ok((node, Step::Child));
        }
        node.right = read_side(reader)?;
        let step = if node.right == Side::Child {
            Step::Child
        } else {
            Step::End
        };
        Ok((node, step))
    }

    fn read_after_child<'a>(
        &self,
        node: &mut ExpressionNode,
        child_index: usize,
        reader: &mut Reader<'a>,
    ) -> Result<Step, DecodeError> {
        // After the left child comes the right side; after a right child, nothing.
        if child_index == 0 && node.left == Side::Child {
            node.right = read_side(reader)?;
            if node.right == Side::Child {
                return Ok(Step::Child);
            }
        }
        Ok(Step::End)
    }

    fn write_head(
        &self,
        node: &ExpressionNode,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        uint8().write(&node.op, writer)?;
        if write_side(node.left, writer)? == Step::Child {
            return Ok(Step::Child);
        }
        write_side(node.right, writer)
    }

    fn write_after_child(
        &self,
        node: &ExpressionNode,
        child_index: usize,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        if child_index == 0 && node.left == Side::Child {
            return write_side(node.right, writer);
        }
        Ok(Step::End)
    }
}

fn expression_to_arena(expression: &Expression, arena: &mut Arena<ExpressionNode>) {
    let (op, left, right) = expression;
    let side = |operand: &Operand| match operand {
        Operand::Value(value) => Side::Value(*value),
        Operand::Expression(_) => Side::Child,
    };
    let index = arena.open(ExpressionNode {
        op: *op,
        left: side(left),
        right: side(right),
    });
    for operand in [left, right] {
        if let Operand::Expression(inner) = operand {
            expression_to_arena(inner, arena);
        }
    }
    arena.close(index);
}

fn expression_from_arena(arena: &Arena<ExpressionNode>, index: usize) -> Expression {
    let node = arena.get(index).unwrap();
    let mut children = arena.children(index);
    let mut operand = |side: Side| match side {
        Side::Value(value) => Operand::Value(value),
        Side::Child => Operand::Expression(Box::new(expression_from_arena(
            arena,
            children.next().unwrap(),
        ))),
    };
    let left = operand(node.left);
    let right = operand(node.right);
    (node.op, left, right)
}

fn expression_strategy() -> impl Strategy<Value = Expression> {
    let leaf = (any::<u8>(), any::<i32>(), any::<i32>())
        .prop_map(|(op, left, right)| (op, Operand::Value(left), Operand::Value(right)));
    leaf.prop_recursive(8, 64, 2, |inner| {
        let operand = prop_oneof![
            any::<i32>().prop_map(Operand::Value),
            inner.prop_map(|expression| Operand::Expression(Box::new(expression))),
        ];
        (any::<u8>(), operand.clone(), operand)
    })
}

// ---------------------------------------------------------------------------------------------
// A tree with a string in a head, a trailing field after the children and three children
// shapes: `mu tree (union [0: int32; 1: obj3 (req "left" tree) (req "right" tree)
// (req "weight" uint16); 2: obj2 (req "label" (dynamic_size ~kind:`Uint8 string)) (req "body" tree)])`.

#[derive(Debug, Clone, PartialEq)]
enum Tree {
    Leaf(i32),
    Pair(Box<Tree>, Box<Tree>, u16),
    Labeled(String, Box<Tree>),
}

fn tree_mu(max_depth: usize) -> Mu<Tree> {
    mu_with_max_depth("tree", max_depth, |tree| {
        union(
            TagSize::Uint8,
            (
                case(
                    0,
                    "leaf",
                    int32(),
                    |tree: &Tree| match tree {
                        Tree::Leaf(value) => Some(value),
                        _ => None,
                    },
                    Tree::Leaf,
                ),
                case_with(
                    1,
                    "pair",
                    tup((boxed(tree), boxed(tree), uint16()))?,
                    |tree: &Tree| match tree {
                        Tree::Pair(left, right, weight) => {
                            Some((left.clone(), right.clone(), *weight))
                        }
                        _ => None,
                    },
                    |(left, right, weight)| Tree::Pair(left, right, weight),
                ),
                case_with(
                    2,
                    "labeled",
                    tup((
                        dynamic_size_with(LengthKind::Uint8, variable_string()),
                        boxed(tree),
                    ))?,
                    |tree: &Tree| match tree {
                        Tree::Labeled(label, body) => Some((label.as_str(), body.clone())),
                        _ => None,
                    },
                    |(label, body): (&str, Box<Tree>)| Tree::Labeled(label.to_owned(), body),
                ),
            ),
        )
    })
    .unwrap()
}

/// A tree node in the arena; labels borrow from the input.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TreeNode<'a> {
    Leaf(i32),
    Pair { weight: u16 },
    Labeled(&'a str),
}

struct TreeCodec;

impl NodeCodec for TreeCodec {
    type Node<'a> = TreeNode<'a>;

    fn read_head<'a>(&self, reader: &mut Reader<'a>) -> Result<(TreeNode<'a>, Step), DecodeError> {
        let (tag, offset) = read_tag(reader, TagSize::Uint8)?;
        match tag {
            0 => Ok((TreeNode::Leaf(int32().read(reader)?), Step::End)),
            // The weight follows both children; it is filled in after the second.
            1 => Ok((TreeNode::Pair { weight: 0 }, Step::Child)),
            2 => {
                let label = dynamic_size_with(LengthKind::Uint8, variable_string()).read(reader)?;
                Ok((TreeNode::Labeled(label), Step::Child))
            }
            _ => Err(unexpected_tag(tag, offset)),
        }
    }

    fn read_after_child<'a>(
        &self,
        node: &mut TreeNode<'a>,
        child_index: usize,
        reader: &mut Reader<'a>,
    ) -> Result<Step, DecodeError> {
        match (node, child_index) {
            (TreeNode::Pair { .. }, 0) => Ok(Step::Child),
            (TreeNode::Pair { weight }, _) => {
                *weight = uint16().read(reader)?;
                Ok(Step::End)
            }
            _ => Ok(Step::End),
        }
    }

    fn write_head(
        &self,
        node: &TreeNode<'_>,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        match node {
            TreeNode::Leaf(value) => {
                write_tag(writer, 0, TagSize::Uint8);
                int32().write(value, writer)?;
                Ok(Step::End)
            }
            TreeNode::Pair { .. } => {
                write_tag(writer, 1, TagSize::Uint8);
                Ok(Step::Child)
            }
            TreeNode::Labeled(label) => {
                write_tag(writer, 2, TagSize::Uint8);
                dynamic_size_with(LengthKind::Uint8, variable_string()).write(label, writer)?;
                Ok(Step::Child)
            }
        }
    }

    fn write_after_child(
        &self,
        node: &TreeNode<'_>,
        child_index: usize,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        match (node, child_index) {
            (TreeNode::Pair { .. }, 0) => Ok(Step::Child),
            (TreeNode::Pair { weight }, _) => {
                uint16().write(weight, writer)?;
                Ok(Step::End)
            }
            _ => Ok(Step::End),
        }
    }
}

fn tree_to_arena<'t>(tree: &'t Tree, arena: &mut Arena<TreeNode<'t>>) {
    match tree {
        Tree::Leaf(value) => {
            arena.push_leaf(TreeNode::Leaf(*value));
        }
        Tree::Pair(left, right, weight) => {
            let index = arena.open(TreeNode::Pair { weight: *weight });
            tree_to_arena(left, arena);
            tree_to_arena(right, arena);
            arena.close(index);
        }
        Tree::Labeled(label, body) => {
            let index = arena.open(TreeNode::Labeled(label));
            tree_to_arena(body, arena);
            arena.close(index);
        }
    }
}

fn tree_from_arena(arena: &Arena<TreeNode<'_>>, index: usize) -> Tree {
    let mut children = arena.children(index);
    let mut child = || Box::new(tree_from_arena(arena, children.next().unwrap()));
    match *arena.get(index).unwrap() {
        TreeNode::Leaf(value) => Tree::Leaf(value),
        TreeNode::Pair { weight } => {
            let left = child();
            let right = child();
            Tree::Pair(left, right, weight)
        }
        TreeNode::Labeled(label) => Tree::Labeled(label.to_owned(), child()),
    }
}

fn tree_strategy() -> impl Strategy<Value = Tree> {
    any::<i32>()
        .prop_map(Tree::Leaf)
        .prop_recursive(8, 64, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone(), any::<u16>()).prop_map(|(left, right, weight)| {
                    Tree::Pair(Box::new(left), Box::new(right), weight)
                }),
                ("[a-z\u{e9}]{0,12}", inner)
                    .prop_map(|(label, body)| Tree::Labeled(label, Box::new(body))),
            ]
        })
}

// ---------------------------------------------------------------------------------------------
// Checks.

/// What a decode produced, comparable across the two readers.
#[derive(Debug, PartialEq)]
enum Verdict<T> {
    Value(T),
    Error(DecodeErrorKind, usize),
}

fn verdict<T>(result: Result<T, DecodeError>) -> Verdict<T> {
    match result {
        Ok(value) => Verdict::Value(value),
        Err(error) => Verdict::Error(error.kind.clone(), error.offset),
    }
}

/// A codec with the `mu` encoding of the same format, and the way from its arena to `mu`'s
/// values, so one check serves both formats.
trait Reference: NodeCodec + Sized {
    type Value: PartialEq + std::fmt::Debug + 'static;
    fn mu(max_depth: usize) -> Mu<Self::Value>;
    fn from_arena(arena: &Arena<Self::Node<'_>>, index: usize) -> Self::Value;
}

impl Reference for ExpressionCodec {
    type Value = Expression;

    fn mu(max_depth: usize) -> Mu<Expression> {
        expression_mu(max_depth)
    }

    fn from_arena(arena: &Arena<ExpressionNode>, index: usize) -> Expression {
        expression_from_arena(arena, index)
    }
}

impl Reference for TreeCodec {
    type Value = Tree;

    fn mu(max_depth: usize) -> Mu<Tree> {
        tree_mu(max_depth)
    }

    fn from_arena(arena: &Arena<TreeNode<'_>>, index: usize) -> Tree {
        tree_from_arena(arena, index)
    }
}

/// The arena and `mu` agree on `input`: same value or same error kind at the same offset; a
/// value the arena reads re-encodes to `input` exactly.
fn check_bytes<C: Reference>(codec: C, input: &[u8], max_depth: usize) {
    let arena_encoding = RecursiveArena::with_max_depth(codec, max_depth);
    let mut arena = Arena::new();
    let from_arena = verdict(
        arena_encoding
            .decode_into(input, &mut arena)
            .map(|()| C::from_arena(&arena, 0)),
    );
    let from_mu = verdict(C::mu(max_depth).decode(input));
    assert_eq!(from_arena, from_mu);
    if matches!(from_arena, Verdict::Value(_)) {
        assert_eq!(arena_encoding.encode(&arena).unwrap(), input);
    }
}

fn check_expression_bytes(input: &[u8], max_depth: usize) {
    check_bytes(ExpressionCodec, input, max_depth);
}

proptest! {
    #[test]
    fn expression_same_bytes_both_ways(expression in expression_strategy()) {
        let mut arena = Arena::new();
        expression_to_arena(&expression, &mut arena);
        let from_arena = RecursiveArena::new(ExpressionCodec).encode(&arena).unwrap();
        let from_mu = expression_mu(64).encode(&expression).unwrap();
        prop_assert_eq!(&from_arena, &from_mu);
        // This codec gives exact node sizes, so the hint is the encoded size.
        prop_assert_eq!(
            RecursiveArena::new(ExpressionCodec).size_hint_bytes(&arena, 0),
            from_arena.len()
        );
        let mut decoded = Arena::new();
        RecursiveArena::new(ExpressionCodec).decode_into(&from_mu, &mut decoded).unwrap();
        prop_assert_eq!(decoded.iter().collect::<Vec<_>>(), arena.iter().collect::<Vec<_>>());
        prop_assert_eq!(expression_from_arena(&decoded, 0), expression);
    }

    #[test]
    fn tree_same_bytes_both_ways(tree in tree_strategy()) {
        let mut arena = Arena::new();
        tree_to_arena(&tree, &mut arena);
        let from_arena = RecursiveArena::new(TreeCodec).encode(&arena).unwrap();
        let from_mu = tree_mu(64).encode(&tree).unwrap();
        prop_assert_eq!(&from_arena, &from_mu);
        // With the default node size (one byte), the hint is the node count, a lower bound.
        let hint = RecursiveArena::new(TreeCodec).size_hint_bytes(&arena, 0);
        prop_assert!(hint == arena.len() && hint <= from_arena.len());
        let mut decoded = Arena::new();
        RecursiveArena::new(TreeCodec).decode_into(&from_mu, &mut decoded).unwrap();
        prop_assert_eq!(tree_from_arena(&decoded, 0), tree);
    }

    #[test]
    fn expression_arbitrary_bytes_agree(input in proptest::collection::vec(
        prop_oneof![3 => 0u8..3, 1 => any::<u8>()], 0..96)) {
        check_expression_bytes(&input, 4);
        check_expression_bytes(&input, 64);
    }

    #[test]
    fn tree_arbitrary_bytes_agree(input in proptest::collection::vec(
        prop_oneof![3 => 0u8..4, 1 => any::<u8>()], 0..96)) {
        check_bytes(TreeCodec, &input, 3);
        check_bytes(TreeCodec, &input, 64);
    }

    /// Reading a value into an arena that already holds others appends it after them.
    #[test]
    fn values_share_an_arena(first in tree_strategy(), second in tree_strategy()) {
        let encoding = tree_mu(64);
        let mut input = encoding.encode(&first).unwrap();
        let first_bytes = input.len();
        encoding.encode_into(&second, &mut input).unwrap();
        let arena_encoding = RecursiveArena::new(TreeCodec);
        let mut arena = Arena::new();
        let mut reader = Reader::new(&input);
        let first_root = arena_encoding.read_into(&mut reader, &mut arena).unwrap();
        prop_assert_eq!(reader.offset(), first_bytes);
        let second_root = arena_encoding.read_into(&mut reader, &mut arena).unwrap();
        reader.finish().unwrap();
        prop_assert_eq!((first_root, Some(second_root)), (0, arena.subtree_end(0)));
        prop_assert_eq!(tree_from_arena(&arena, first_root), first);
        prop_assert_eq!(tree_from_arena(&arena, second_root), second);
        let mut out = Vec::new();
        let end = arena_encoding.write(&arena, second_root, &mut Writer::new(&mut out)).unwrap();
        prop_assert_eq!(end, arena.len());
        prop_assert_eq!(&out[..], &input[first_bytes..]);
    }
}

#[test]
fn handwritten_vectors() {
    // (add 1 2), then (sub (add 1 2) 3), then a bad tag, a truncated value, extra bytes.
    let cases: &[&[u8]] = &[
        &[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2],
        &[1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3],
        &[0, 2, 0, 0, 0, 1],
        &[1, 1, 0, 0],
        &[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 9],
        &[],
    ];
    for input in cases {
        check_expression_bytes(input, 64);
    }
    let mut arena = Arena::new();
    RecursiveArena::new(ExpressionCodec)
        .decode_into(cases[1], &mut arena)
        .unwrap();
    assert_eq!(arena.len(), 2);
    assert_eq!(arena.children(0).collect::<Vec<_>>(), vec![1]);
    assert_eq!(arena.subtree_end(0), Some(2));
    let error = RecursiveArena::new(ExpressionCodec)
        .decode_into(cases[2], &mut arena)
        .unwrap_err();
    assert_eq!(
        (error.kind.clone(), error.offset),
        (DecodeErrorKind::UnexpectedTag(2), 1)
    );
}

/// Depth 100,000: `100_000` nested left operands, then the innermost leaf and the right sides.
fn deep_expression_bytes(depth: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    for _ in 1..depth {
        bytes.extend_from_slice(&[0, 1]);
    }
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 8]);
    for _ in 1..depth {
        bytes.extend_from_slice(&[0, 0, 0, 0, 9]);
    }
    bytes
}

#[test]
fn depth_100_000_is_a_typed_error_at_the_default_limit() {
    let input = deep_expression_bytes(100_000);
    let mut arena = Arena::new();
    let error = RecursiveArena::new(ExpressionCodec)
        .decode_into(&input, &mut arena)
        .unwrap_err();
    let limit = kestrel_encoding::arena::DEFAULT_MAX_DEPTH;
    assert_eq!(
        (error.kind.clone(), error.offset),
        (
            DecodeErrorKind::DepthLimitExceeded { max_depth: limit },
            2 * limit
        )
    );
    // `mu` rejects it with the same error.
    let from_mu = expression_mu(limit).decode(&input).unwrap_err();
    assert_eq!(
        (from_mu.kind.clone(), from_mu.offset),
        (error.kind.clone(), error.offset)
    );
}

#[test]
fn depth_100_000_decodes_and_encodes_with_a_raised_limit() {
    // The arena's stack is on the heap, so a limit above the input's depth is safe: the walk
    // never recurses on the host.
    let input = deep_expression_bytes(100_000);
    let encoding = RecursiveArena::with_max_depth(ExpressionCodec, 100_000);
    let mut arena = Arena::new();
    encoding.decode_into(&input, &mut arena).unwrap();
    assert_eq!(arena.len(), 100_000);
    assert_eq!(arena.subtree_end(0), Some(100_000));
    assert_eq!(arena.children(99_998).collect::<Vec<_>>(), vec![99_999]);
    assert_eq!(encoding.encode(&arena).unwrap(), input);
    // One level more than the limit allows fails on both paths.
    let tighter = RecursiveArena::with_max_depth(ExpressionCodec, 99_999);
    assert_eq!(
        tighter
            .decode_into(&input, &mut Arena::new())
            .unwrap_err()
            .kind,
        DecodeErrorKind::DepthLimitExceeded { max_depth: 99_999 }
    );
    match tighter.encode(&arena).unwrap_err() {
        ArenaEncodeError::Encode(error) => assert_eq!(
            error.kind,
            EncodeErrorKind::DepthLimitExceeded { max_depth: 99_999 }
        ),
        other => panic!("expected a depth error, got {other:?}"),
    }
}

#[test]
fn malformed_arenas_are_encode_errors() {
    let encoding = RecursiveArena::new(ExpressionCodec);
    let node = |left, right| ExpressionNode { op: 0, left, right };
    let check = |nodes: &[ExpressionNode], expected: ArenaEncodeError| {
        let mut arena = Arena::new();
        for &node in nodes {
            arena.push_leaf(node);
        }
        assert_eq!(encoding.encode(&arena).unwrap_err(), expected);
    };
    check(
        &[node(Side::Child, Side::Value(1))],
        ArenaEncodeError::MissingChild { parent_index: 0 },
    );
    check(
        &[
            node(Side::Child, Side::Child),
            node(Side::Value(1), Side::Value(2)),
        ],
        ArenaEncodeError::MissingChild { parent_index: 0 },
    );
    check(
        &[
            node(Side::Value(1), Side::Value(2)),
            node(Side::Value(1), Side::Value(2)),
        ],
        ArenaEncodeError::UnreachedNodes { first_index: 1 },
    );
    check(
        &[],
        ArenaEncodeError::MissingRoot {
            root_index: 0,
            length: 0,
        },
    );
}

#[test]
fn recycle_keeps_the_allocation() {
    let tree = Tree::Pair(
        Box::new(Tree::Labeled("x".into(), Box::new(Tree::Leaf(1)))),
        Box::new(Tree::Leaf(2)),
        3,
    );
    let bytes = tree_mu(64).encode(&tree).unwrap();
    let encoding = RecursiveArena::new(TreeCodec);
    let mut arena: Arena<TreeNode<'_>> = Arena::new();
    encoding.decode_into(&bytes, &mut arena).unwrap();
    let capacity = arena.capacity();
    assert!(capacity >= 4);
    let copy = bytes.clone();
    let mut recycled: Arena<TreeNode<'_>> = arena.recycle();
    assert!(recycled.is_empty());
    assert_eq!(recycled.capacity(), capacity);
    encoding.decode_into(&copy, &mut recycled).unwrap();
    assert_eq!(tree_from_arena(&recycled, 0), tree);
}
