//! Fuzzes `kestrel_encoding::arena` over untrusted bytes, against `mu` on the same format: an
//! arithmetic expression, `mu expression (obj3 (req "op" uint8) (req "left" operand)
//! (req "right" operand))` with `operand = union [0: int32; 1: expression]`. The first byte
//! picks the depth limit; for the rest, the arena and `mu` must agree (the same error kind at
//! the same offset, or values that re-encode to the input exactly, from the arena and from
//! `mu`), and neither may panic or overflow the stack.

#![no_main]

use kestrel_encoding::arena::{read_tag, unexpected_tag, write_tag};
use kestrel_encoding::reader::Reader;
use kestrel_encoding::writer::Writer;
use kestrel_encoding::{
    boxed, case, int32, mu_with_max_depth, obj, req, uint8, union, Arena, DecodeError, EncodeError,
    Encoding, Mu, NodeCodec, RecursiveArena, Step, TagSize,
};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

#[derive(Debug, PartialEq)]
enum Operand {
    Value(i32),
    Expression(Box<(u8, Operand, Operand)>),
}

/// The `mu` encoding with each depth limit from 1 to 64, built once (a `mu` is never freed).
fn expression_mu(max_depth: usize) -> Mu<(u8, Operand, Operand)> {
    static ENCODINGS: OnceLock<Vec<Mu<(u8, Operand, Operand)>>> = OnceLock::new();
    ENCODINGS.get_or_init(|| (1..=64).map(build_expression_mu).collect())[max_depth - 1]
}

fn build_expression_mu(max_depth: usize) -> Mu<(u8, Operand, Operand)> {
    mu_with_max_depth("expression", max_depth, |expression| {
        let operand = || {
            union(
                TagSize::Uint8,
                (
                    case(
                        0,
                        "value",
                        int32(),
                        |operand: &Operand| match operand {
                            Operand::Value(value) => Some(value),
                            Operand::Expression(_) => None,
                        },
                        Operand::Value,
                    ),
                    case(
                        1,
                        "expression",
                        boxed(expression),
                        |operand: &Operand| match operand {
                            Operand::Expression(inner) => Some(inner),
                            Operand::Value(_) => None,
                        },
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
    .expect("the expression encoding builds")
}

/// A side in the arena: a literal or the next child.
type Side = Option<i32>;

struct ExpressionCodec;

fn read_side(reader: &mut Reader<'_>) -> Result<Side, DecodeError> {
    match read_tag(reader, TagSize::Uint8)? {
        (0, _) => Ok(Some(int32().read(reader)?)),
        (1, _) => Ok(None),
        (tag, offset) => Err(unexpected_tag(tag, offset)),
    }
}

fn write_side(side: Side, writer: &mut Writer<'_>) -> Result<Step, EncodeError> {
    match side {
        Some(value) => {
            write_tag(writer, 0, TagSize::Uint8);
            int32().write(&value, writer)?;
            Ok(Step::End)
        }
        None => {
            write_tag(writer, 1, TagSize::Uint8);
            Ok(Step::Child)
        }
    }
}

fn step(side: Side) -> Step {
    if side.is_some() {
        Step::End
    } else {
        Step::Child
    }
}

impl NodeCodec for ExpressionCodec {
    type Node<'a> = (u8, Side, Side);

    fn read_head<'a>(
        &self,
        reader: &mut Reader<'a>,
    ) -> Result<((u8, Side, Side), Step), DecodeError> {
        let op = uint8().read(reader)?;
        let left = read_side(reader)?;
        if left.is_none() {
            return Ok(((op, left, None), Step::Child));
        }
        let right = read_side(reader)?;
        Ok(((op, left, right), step(right)))
    }

    fn read_after_child<'a>(
        &self,
        node: &mut (u8, Side, Side),
        child_index: usize,
        reader: &mut Reader<'a>,
    ) -> Result<Step, DecodeError> {
        if child_index == 0 && node.1.is_none() {
            node.2 = read_side(reader)?;
            return Ok(step(node.2));
        }
        Ok(Step::End)
    }

    fn write_head(
        &self,
        node: &(u8, Side, Side),
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        uint8().write(&node.0, writer)?;
        if write_side(node.1, writer)? == Step::Child {
            return Ok(Step::Child);
        }
        write_side(node.2, writer)
    }

    fn write_after_child(
        &self,
        node: &(u8, Side, Side),
        child_index: usize,
        writer: &mut Writer<'_>,
    ) -> Result<Step, EncodeError> {
        if child_index == 0 && node.1.is_none() {
            return write_side(node.2, writer);
        }
        Ok(Step::End)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&limit, input)) = data.split_first() else {
        return;
    };
    // Depth limits from 1 to 64 (`mu` recurses on the host, so it is kept to shallow limits).
    let max_depth = usize::from(limit % 64) + 1;
    let arena_encoding = RecursiveArena::with_max_depth(ExpressionCodec, max_depth);
    let mut arena = Arena::new();
    let from_arena = arena_encoding.decode_into(input, &mut arena);
    let from_mu = expression_mu(max_depth).decode(input);
    match (&from_arena, &from_mu) {
        (Ok(()), Ok(value)) => {
            assert_eq!(arena_encoding.encode(&arena).expect("re-encodes"), input);
            assert_eq!(
                expression_mu(max_depth).encode(value).expect("re-encodes"),
                input
            );
        }
        (Err(arena_error), Err(mu_error)) => {
            assert_eq!(
                (&arena_error.kind, arena_error.offset),
                (&mu_error.kind, mu_error.offset)
            );
        }
        _ => panic!("the arena and mu disagree: {from_arena:?} / {from_mu:?}"),
    }
});
