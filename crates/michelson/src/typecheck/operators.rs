//! Typing of the operators whose result depends only on the types of the top one or two stack
//! items (`specs/michelson.rst`, "Operations on integers and natural numbers", "Bitwise logical
//! operators", "Operations on Mutez", "BLS12-381 primitives", "Operations on timestamps"): one
//! table row per accepted combination of argument types, the first matching row winning, so
//! that `ADD` on `nat`s is `AddNatNat` before the `int`/`nat` mixture row catches it.
//!
//! Callers pass the stack top last and handle arity and annotations themselves.

use crate::ir::Instr;
use crate::types::Type;
use kestrel_micheline::Prim;

/// An argument type an operator row accepts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Argument {
    Int,
    Nat,
    /// `int` or `nat`.
    Integer,
    Bool,
    Bytes,
    Mutez,
    Timestamp,
    Fr,
    G1,
    G2,
}

impl Argument {
    fn accepts(self, ty: &Type) -> bool {
        match self {
            Argument::Int => matches!(ty, Type::Int),
            Argument::Nat => matches!(ty, Type::Nat),
            Argument::Integer => matches!(ty, Type::Int | Type::Nat),
            Argument::Bool => matches!(ty, Type::Bool),
            Argument::Bytes => matches!(ty, Type::Bytes),
            Argument::Mutez => matches!(ty, Type::Mutez),
            Argument::Timestamp => matches!(ty, Type::Timestamp),
            Argument::Fr => matches!(ty, Type::Bls12381Fr),
            Argument::G1 => matches!(ty, Type::Bls12381G1),
            Argument::G2 => matches!(ty, Type::Bls12381G2),
        }
    }
}

/// The result type of an operator row.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Output {
    Int,
    Nat,
    Bool,
    Bytes,
    Mutez,
    Timestamp,
    Fr,
    G1,
    G2,
    OptionNat,
    OptionMutez,
    /// `option (pair q r)` of `EDIV`.
    Division(Argument, Argument),
}

fn scalar(argument: Argument) -> Type {
    match argument {
        Argument::Int | Argument::Integer => Type::Int,
        Argument::Nat => Type::Nat,
        Argument::Bool => Type::Bool,
        Argument::Bytes => Type::Bytes,
        Argument::Mutez => Type::Mutez,
        Argument::Timestamp => Type::Timestamp,
        Argument::Fr => Type::Bls12381Fr,
        Argument::G1 => Type::Bls12381G1,
        Argument::G2 => Type::Bls12381G2,
    }
}

impl Output {
    fn to_type(self) -> Type {
        match self {
            Output::Int => Type::Int,
            Output::Nat => Type::Nat,
            Output::Bool => Type::Bool,
            Output::Bytes => Type::Bytes,
            Output::Mutez => Type::Mutez,
            Output::Timestamp => Type::Timestamp,
            Output::Fr => Type::Bls12381Fr,
            Output::G1 => Type::Bls12381G1,
            Output::G2 => Type::Bls12381G2,
            Output::OptionNat => Type::option(Type::Nat),
            Output::OptionMutez => Type::option(Type::Mutez),
            Output::Division(quotient, remainder) => {
                Type::option(Type::pair(scalar(quotient), scalar(remainder)))
            }
        }
    }
}

/// One accepted combination: the operator, its arguments top first, the instruction and the
/// result type, and whether only the legacy mode accepts it.
struct Row {
    prim: Prim,
    arguments: &'static [Argument],
    instr: fn() -> Instr,
    result: Output,
    legacy_only: bool,
}

macro_rules! rows {
    ($( $prim:ident [$($argument:ident),+] => $instr:ident : $result:expr $(, $legacy:ident)? ;)*) => {
        &[$(Row {
            prim: Prim::$prim,
            arguments: &[$(Argument::$argument),+],
            instr: || Instr::$instr,
            result: $result,
            legacy_only: rows!(@legacy $($legacy)?),
        }),*]
    };
    (@legacy legacy) => { true };
    (@legacy) => { false };
}

use Argument::{Int as I, Mutez as M, Nat as N};

/// The table, in the order rows are tried.
const ROWS: &[Row] = rows! {
    I_ABS [Int] => Abs: Output::Nat;
    I_ISNAT [Int] => IsNat: Output::OptionNat;
    I_INT [Nat] => Int: Output::Int;
    I_INT [Fr] => IntFr: Output::Int;
    I_INT [Bytes] => IntBytes: Output::Int;
    I_NAT [Bytes] => NatBytes: Output::Nat;
    I_BYTES [Int] => BytesInt: Output::Bytes;
    I_BYTES [Nat] => BytesNat: Output::Bytes;
    I_NEG [Integer] => NegInt: Output::Int;
    I_NEG [Fr] => NegFr: Output::Fr;
    I_NEG [G1] => NegG1: Output::G1;
    I_NEG [G2] => NegG2: Output::G2;
    I_NOT [Bool] => NotBool: Output::Bool;
    I_NOT [Integer] => NotInt: Output::Int;
    I_NOT [Bytes] => NotBytes: Output::Bytes;
    I_LSL [Nat, Nat] => LslNat: Output::Nat;
    I_LSL [Bytes, Nat] => LslBytes: Output::Bytes;
    I_LSR [Nat, Nat] => LsrNat: Output::Nat;
    I_LSR [Bytes, Nat] => LsrBytes: Output::Bytes;
    I_OR [Bool, Bool] => OrBool: Output::Bool;
    I_OR [Nat, Nat] => OrNat: Output::Nat;
    I_OR [Bytes, Bytes] => OrBytes: Output::Bytes;
    I_XOR [Bool, Bool] => XorBool: Output::Bool;
    I_XOR [Nat, Nat] => XorNat: Output::Nat;
    I_XOR [Bytes, Bytes] => XorBytes: Output::Bytes;
    I_AND [Bool, Bool] => AndBool: Output::Bool;
    I_AND [Nat, Nat] => AndNat: Output::Nat;
    I_AND [Int, Nat] => AndIntNat: Output::Nat;
    I_AND [Bytes, Bytes] => AndBytes: Output::Bytes;
    I_ADD [Nat, Nat] => AddNatNat: Output::Nat;
    I_ADD [Integer, Integer] => AddIntInt: Output::Int;
    I_ADD [Timestamp, Int] => AddTimestampInt: Output::Timestamp;
    I_ADD [Int, Timestamp] => AddIntTimestamp: Output::Timestamp;
    I_ADD [Mutez, Mutez] => AddMutez: Output::Mutez;
    I_ADD [Fr, Fr] => AddFr: Output::Fr;
    I_ADD [G1, G1] => AddG1: Output::G1;
    I_ADD [G2, G2] => AddG2: Output::G2;
    I_SUB [Integer, Integer] => SubInt: Output::Int;
    I_SUB [Timestamp, Int] => SubTimestampInt: Output::Timestamp;
    I_SUB [Timestamp, Timestamp] => SubTimestampTimestamp: Output::Int;
    I_SUB [Mutez, Mutez] => SubMutezLegacy: Output::Mutez, legacy;
    I_SUB_MUTEZ [Mutez, Mutez] => SubMutez: Output::OptionMutez;
    I_MUL [Nat, Nat] => MulNatNat: Output::Nat;
    I_MUL [Integer, Integer] => MulIntInt: Output::Int;
    I_MUL [Mutez, Nat] => MulMutezNat: Output::Mutez;
    I_MUL [Nat, Mutez] => MulNatMutez: Output::Mutez;
    I_MUL [G1, Fr] => MulG1Fr: Output::G1;
    I_MUL [G2, Fr] => MulG2Fr: Output::G2;
    I_MUL [Fr, Fr] => MulFrFr: Output::Fr;
    I_MUL [Integer, Fr] => MulIntFr: Output::Fr;
    I_MUL [Fr, Integer] => MulFrInt: Output::Fr;
    I_EDIV [Nat, Nat] => EdivNatNat: Output::Division(N, N);
    I_EDIV [Integer, Integer] => EdivIntInt: Output::Division(I, N);
    I_EDIV [Mutez, Nat] => EdivMutezNat: Output::Division(M, M);
    I_EDIV [Mutez, Mutez] => EdivMutezMutez: Output::Division(N, M);
};

/// Whether `prim` is typed by the table.
pub fn is_operator(prim: Prim) -> bool {
    ROWS.iter().any(|row| row.prim == prim)
}

/// The instruction, the number of arguments it consumes and its result type, for operator
/// `prim` on `stack` (top last); `None` when no row accepts the stack.
pub fn type_operator(prim: Prim, stack: &[Type], legacy: bool) -> Option<(Instr, usize, Type)> {
    ROWS.iter()
        .filter(|row| row.prim == prim && (legacy || !row.legacy_only))
        .find(|row| {
            row.arguments.len() <= stack.len()
                && row
                    .arguments
                    .iter()
                    .zip(stack.iter().rev())
                    .all(|(argument, ty)| argument.accepts(ty))
        })
        .map(|row| ((row.instr)(), row.arguments.len(), row.result.to_type()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(prim: Prim, top_first: &[Type], legacy: bool, expected: Option<(Instr, Type)>) {
        let stack: Vec<Type> = top_first.iter().rev().cloned().collect();
        let actual = type_operator(prim, &stack, legacy);
        match (actual, expected) {
            (None, None) => {}
            (Some((instr, consumed, out)), Some((expected_instr, expected_out))) => assert!(
                std::mem::discriminant(&instr) == std::mem::discriminant(&expected_instr)
                    && consumed == top_first.len()
                    && out == expected_out,
                "{prim:?} on {top_first:?}: got {out}"
            ),
            (actual, _) => panic!("{prim:?} on {top_first:?}: got {}", actual.is_some()),
        }
    }

    #[test]
    fn operators_as_data() {
        check(
            Prim::I_ADD,
            &[Type::Nat, Type::Nat],
            false,
            Some((Instr::AddNatNat, Type::Nat)),
        );
        check(
            Prim::I_ADD,
            &[Type::Nat, Type::Int],
            false,
            Some((Instr::AddIntInt, Type::Int)),
        );
        check(Prim::I_ADD, &[Type::Unit, Type::Int], false, None);
        check(Prim::I_SUB, &[Type::Mutez, Type::Mutez], false, None);
        check(
            Prim::I_SUB,
            &[Type::Mutez, Type::Mutez],
            true,
            Some((Instr::SubMutezLegacy, Type::Mutez)),
        );
        check(
            Prim::I_EDIV,
            &[Type::Int, Type::Nat],
            false,
            Some((
                Instr::EdivIntInt,
                Type::option(Type::pair(Type::Int, Type::Nat)),
            )),
        );
        check(
            Prim::I_ISNAT,
            &[Type::Int],
            false,
            Some((Instr::IsNat, Type::option(Type::Nat))),
        );
        check(
            Prim::I_NEG,
            &[Type::Nat],
            false,
            Some((Instr::NegInt, Type::Int)),
        );
        check(Prim::I_NOT, &[Type::String], false, None);
        // Too short a stack matches nothing.
        check(Prim::I_AND, &[Type::Bool], false, None);
        assert!(is_operator(Prim::I_MUL) && !is_operator(Prim::I_PAIR));
    }
}
