//! Checks the cost functions against the recorded octez-client traces
//! (`../shared/testdata/michelson-regression/opcodes/*.out`).
//!
//! For every recorded step whose location is a plain (non-control) instruction of a script
//! without macros before that point, the test recomputes the step's cost with this module's
//! functions from the recorded stacks (before = previous step, after = this step) and compares
//! it to the recorded "just consumed gas". Where the untyped stack text cannot tell two types
//! apart (a `mutez` and a `nat` both print as integers), the step must match one of the
//! candidate models; each candidate is a specific formula, so a wrong model still fails.
//!
//! Octez numbers Micheline nodes in prefix order from the script's root; macro expansion
//! renumbers nodes after the first macro, so steps located after a macro are skipped.

// The reader is shared with the integration tests; not all of its API is used here.
#[allow(dead_code)]
#[path = "../../tests/common/octez_output.rs"]
mod octez_output;

use std::collections::BTreeMap;

use kestrel_micheline::node::{Node, NodeKind};
use kestrel_micheline::parse::{parse_expression, parse_toplevel};
use num_bigint::BigInt;

use super::interpreter as cost;
use super::size::{self, Curve};

/// A candidate explanation of a step's gas: a label and its milligas.
type Candidate = (&'static str, u64);

fn prim_name(node: &Node) -> Option<&str> {
    match &node.kind {
        NodeKind::Prim { name, .. } => Some(name.as_str()),
        _ => None,
    }
}

fn prim_args(node: &Node) -> &[Node] {
    match &node.kind {
        NodeKind::Prim { args, .. } => args,
        _ => &[],
    }
}

/// The script's nodes in Octez's location order (prefix order from the root), with the index of
/// each node's innermost enclosing `LAMBDA` (if any).
fn locate(root: &Node) -> Vec<(&Node, Option<usize>)> {
    let mut located = Vec::new();
    let mut pending: Vec<(&Node, Option<usize>)> = vec![(root, None)];
    while let Some((node, lambda)) = pending.pop() {
        let index = located.len();
        located.push((node, lambda));
        let inner_lambda =
            if prim_name(node) == Some("LAMBDA") || prim_name(node) == Some("LAMBDA_REC") {
                Some(index)
            } else {
                lambda
            };
        for child in node.children().iter().rev() {
            pending.push((child, inner_lambda));
        }
    }
    located
}

/// Instructions of the recorded protocol that `kestrel_micheline`'s primitive table does not
/// list yet (they are not macros: they keep their own location).
const RECENT_INSTRUCTIONS: &[&str] = &["IS_IMPLICIT_ACCOUNT", "INDEX_ADDRESS", "GET_ADDRESS_INDEX"];

fn is_macro_or_unknown(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Prim { name, .. }
        if name.known().is_none() && !RECENT_INSTRUCTIONS.contains(&name.as_str()))
}

/// Seconds since the epoch of an RFC 3339 UTC timestamp as octez-client prints them.
fn timestamp_seconds(text: &str) -> Option<BigInt> {
    let bytes = text.as_bytes();
    if bytes.len() != 20 || bytes[4] != b'-' || bytes[10] != b'T' || bytes[19] != b'Z' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let adjusted_year = if month <= 2 { year - 1 } else { year };
    let era = adjusted_year.div_euclid(400);
    let year_of_era = adjusted_year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    Some(BigInt::from(
        days * 86_400 + hour * 3_600 + minute * 60 + second,
    ))
}

fn int_bytes_of(node: &Node) -> Option<u64> {
    match &node.kind {
        NodeKind::Int(value) => Some(size::int_bytes(value)),
        NodeKind::String(text) => timestamp_seconds(text).map(|seconds| size::int_bytes(&seconds)),
        _ => None,
    }
}

fn length_of(node: &Node) -> Option<u64> {
    match &node.kind {
        NodeKind::String(text) => Some(text.len() as u64),
        NodeKind::Bytes(bytes) => Some(bytes.len() as u64),
        _ => None,
    }
}

/// The two halves of a pair node, reading `Pair a b c` as `Pair a (Pair b c)`.
fn pair_halves(node: &Node) -> Option<(&Node, PairRest<'_>)> {
    if prim_name(node) != Some("Pair") {
        return None;
    }
    let args = prim_args(node);
    match args.len() {
        0 | 1 => None,
        2 => Some((&args[0], PairRest::Node(&args[1]))),
        _ => Some((&args[0], PairRest::Comb(&args[1..]))),
    }
}

enum PairRest<'a> {
    Node(&'a Node),
    Comb(&'a [Node]),
}

/// A value to walk: a node, or the tail of a comb written flat.
#[derive(Clone, Copy)]
enum Walk<'a> {
    Node(&'a Node),
    Comb(&'a [Node]),
}

impl<'a> Walk<'a> {
    fn split(self) -> Option<(Walk<'a>, Walk<'a>)> {
        match self {
            Walk::Node(node) => {
                let (left, rest) = pair_halves(node)?;
                Some((Walk::Node(left), rest.into()))
            }
            Walk::Comb(items) => match items {
                [first, second] => Some((Walk::Node(first), Walk::Node(second))),
                [first, rest @ ..] if rest.len() >= 2 => {
                    Some((Walk::Node(first), Walk::Comb(rest)))
                }
                _ => None,
            },
        }
    }
    fn node(self) -> Option<&'a Node> {
        match self {
            Walk::Node(node) => Some(node),
            Walk::Comb(_) => None,
        }
    }
    fn is_pair(self) -> bool {
        matches!(self, Walk::Comb(_)) || self.node().and_then(prim_name) == Some("Pair")
    }
}

impl<'a> From<PairRest<'a>> for Walk<'a> {
    fn from(rest: PairRest<'a>) -> Walk<'a> {
        match rest {
            PairRest::Node(node) => Walk::Node(node),
            PairRest::Comb(items) => Walk::Comb(items),
        }
    }
}

/// What the gas model sees of an untyped recorded value (leaf kinds recognized by shape).
fn node_view(walk: Walk<'_>) -> size::CompareView<Walk<'_>> {
    use size::CompareView as View;
    if walk.is_pair() {
        return match walk.split() {
            Some((left, right)) => View::Pair(left, right),
            None => View::Unit,
        };
    }
    let Some(node) = walk.node() else {
        return View::Unit;
    };
    let first = || prim_args(node).first().map(Walk::Node);
    match &node.kind {
        NodeKind::Int(value) => View::Int {
            numbits: value.bits(),
        },
        NodeKind::String(text) => {
            if let Some(seconds) = timestamp_seconds(text) {
                View::Timestamp {
                    numbits: seconds.bits(),
                }
            } else if looks_like_address(text) {
                let entrypoint_length = text
                    .split_once('%')
                    .map_or(0, |(_, name)| name.len() as u64);
                View::Address { entrypoint_length }
            } else if looks_like_key(text) {
                View::Key(curve_of_key(text).unwrap_or(Curve::Ed25519))
            } else if looks_like_signature(text) {
                View::Signature
            } else {
                View::String {
                    length: text.len() as u64,
                }
            }
        }
        NodeKind::Bytes(bytes) => View::Bytes {
            length: bytes.len() as u64,
        },
        NodeKind::Prim { .. } => match prim_name(node) {
            Some("True" | "False") => View::Bool,
            Some("Left") => first().map_or(View::Unit, View::Left),
            Some("Right") => first().map_or(View::Unit, View::Right),
            Some("Some") => first().map_or(View::Unit, View::Some),
            Some("None") => View::None,
            _ => View::Unit,
        },
        NodeKind::Seq(_) => View::Unit,
    }
}

/// `COMPARE` of two untyped recorded values, through the library's generic walk.
fn compare_cost(left: &Node, right: &Node) -> Option<u64> {
    Some(cost::cost_compare_values(
        Walk::Node(left),
        Walk::Node(right),
        node_view,
    ))
}

/// `Gas_comparable_input_size.size_of_comparable_value` of an untyped key, through the
/// library's generic walk.
fn key_size(key: &Node) -> Option<u64> {
    Some(size::comparable_size_of(Walk::Node(key), node_view))
}

fn collection_len(node: &Node) -> Option<u64> {
    match &node.kind {
        NodeKind::Seq(items) => Some(items.len() as u64),
        _ => None,
    }
}

fn is_map_literal(node: &Node) -> Option<bool> {
    match &node.kind {
        NodeKind::Seq(items) if items.is_empty() => None,
        NodeKind::Seq(items) => Some(items.iter().all(|item| prim_name(item) == Some("Elt"))),
        _ => None,
    }
}

fn small_arg(node: &Node) -> Option<u64> {
    match &prim_args(node).first()?.kind {
        NodeKind::Int(value) => u64::try_from(value).ok(),
        _ => None,
    }
}

fn curve_of_key(text: &str) -> Option<Curve> {
    match text.get(..4)? {
        "edpk" => Some(Curve::Ed25519),
        "sppk" => Some(Curve::Secp256k1),
        "p2pk" => Some(Curve::P256),
        "BLpk" => Some(Curve::Bls12_381),
        _ => None,
    }
}

fn both_ints(before: &[Node]) -> Option<(u64, u64)> {
    match (&before.first()?.kind, &before.get(1)?.kind) {
        (NodeKind::Int(a), NodeKind::Int(b)) => Some((size::int_bytes(a), size::int_bytes(b))),
        _ => None,
    }
}

fn is_bool(node: &Node) -> bool {
    matches!(prim_name(node), Some("True" | "False"))
}

/// The candidate costs of instruction `instruction` given the stack before it; `None` when the
/// step is not one this test can explain from untyped values.
fn candidates(
    instruction: &Node,
    before: &[Node],
    script_uses_mutez: bool,
) -> Option<Vec<Candidate>> {
    let name = prim_name(instruction)?;
    let has_arg = !prim_args(instruction).is_empty();
    let top = before.first();
    let second = before.get(1);
    let one = |label, value| Some(vec![(label, value)]);
    match name {
        "DROP" if has_arg => one("DROP n", cost::cost_drop_n(small_arg(instruction)?)),
        "DROP" => one("DROP", cost::COST_DROP),
        "DUP" if has_arg => one("DUP n", cost::cost_dup_n(small_arg(instruction)?)),
        "DUP" => one("DUP", cost::COST_DUP),
        "DIG" => one("DIG n", cost::cost_dig(small_arg(instruction)?)),
        "DUG" => one("DUG n", cost::cost_dug(small_arg(instruction)?)),
        "PAIR" if has_arg => one("PAIR n", cost::cost_pair_n(small_arg(instruction)?)),
        "PAIR" => one("PAIR", cost::COST_PAIR),
        "UNPAIR" if has_arg => one("UNPAIR n", cost::cost_unpair_n(small_arg(instruction)?)),
        "UNPAIR" => one("UNPAIR", cost::COST_UNPAIR),
        "GET" if has_arg => one("GET n", cost::cost_get_n(small_arg(instruction)?)),
        "UPDATE" if has_arg => one("UPDATE n", cost::cost_update_n(small_arg(instruction)?)),
        "SWAP" => one("SWAP", cost::COST_SWAP),
        "PUSH" => one("PUSH", cost::COST_PUSH),
        "UNIT" => one("UNIT", cost::COST_UNIT),
        "SOME" => one("SOME", cost::COST_SOME),
        "NONE" => one("NONE", cost::COST_NONE),
        "CAR" => one("CAR", cost::COST_CAR),
        "CDR" => one("CDR", cost::COST_CDR),
        "LEFT" => one("LEFT", cost::COST_LEFT),
        "RIGHT" => one("RIGHT", cost::COST_RIGHT),
        "CONS" => one("CONS", cost::COST_CONS),
        "NIL" => one("NIL", cost::COST_NIL),
        "EMPTY_MAP" => one("EMPTY_MAP", cost::COST_EMPTY_MAP),
        "EMPTY_SET" => one("EMPTY_SET", cost::COST_EMPTY_SET),
        "EMPTY_BIG_MAP" => one("EMPTY_BIG_MAP", cost::COST_EMPTY_BIG_MAP),
        "EQ" => one("EQ", cost::COST_EQ),
        "NEQ" => one("NEQ", cost::COST_NEQ),
        "LT" => one("LT", cost::COST_LT),
        "GT" => one("GT", cost::COST_GT),
        "LE" => one("LE", cost::COST_LE),
        "GE" => one("GE", cost::COST_GE),
        "ISNAT" => one("ISNAT", cost::COST_IS_NAT),
        "ADDRESS" => one("ADDRESS", cost::COST_ADDRESS),
        "SELF_ADDRESS" => one("SELF_ADDRESS", cost::COST_SELF_ADDRESS),
        "SELF" => one("SELF", cost::COST_SELF),
        "AMOUNT" => one("AMOUNT", cost::COST_AMOUNT),
        "BALANCE" => one("BALANCE", cost::COST_BALANCE),
        "NOW" => one("NOW", cost::COST_NOW),
        "LEVEL" => one("LEVEL", cost::COST_LEVEL),
        "SOURCE" => one("SOURCE", cost::COST_SOURCE),
        "SENDER" => one("SENDER", cost::COST_SENDER),
        "CHAIN_ID" => one("CHAIN_ID", cost::COST_CHAIN_ID),
        "IMPLICIT_ACCOUNT" => one("IMPLICIT_ACCOUNT", cost::COST_IMPLICIT_ACCOUNT),
        "IS_IMPLICIT_ACCOUNT" => one("IS_IMPLICIT_ACCOUNT", cost::COST_IS_IMPLICIT_ACCOUNT),
        "MIN_BLOCK_TIME" => one("MIN_BLOCK_TIME", cost::COST_MIN_BLOCK_TIME),
        "HASH_KEY" => one("HASH_KEY", cost::COST_HASH_KEY),
        "LAMBDA" => one("LAMBDA", cost::COST_LAMBDA),
        "SIZE" => match &top?.kind {
            NodeKind::String(_) => one("SIZE string", cost::COST_STRING_SIZE),
            NodeKind::Bytes(_) => one("SIZE bytes", cost::COST_BYTES_SIZE),
            NodeKind::Seq(_) => one("SIZE collection", cost::COST_LIST_SIZE),
            _ => None,
        },
        "NOT" => match &top?.kind {
            NodeKind::Int(value) => one("NOT int", cost::cost_not_int(size::int_bytes(value))),
            NodeKind::Bytes(bytes) => one("NOT bytes", cost::cost_not_bytes(bytes.len() as u64)),
            _ if is_bool(top?) => one("NOT bool", cost::COST_NOT),
            _ => None,
        },
        "AND" | "OR" | "XOR" => {
            let (a, b) = (top?, second?);
            if is_bool(a) && is_bool(b) {
                let value = match name {
                    "AND" => cost::COST_AND,
                    "OR" => cost::COST_OR,
                    _ => cost::COST_XOR,
                };
                return one("bool logic", value);
            }
            if let (NodeKind::Bytes(x), NodeKind::Bytes(y)) = (&a.kind, &b.kind) {
                let (x, y) = (x.len() as u64, y.len() as u64);
                let value = match name {
                    "AND" => cost::cost_and_bytes(x, y),
                    "OR" => cost::cost_or_bytes(x, y),
                    _ => cost::cost_xor_bytes(x, y),
                };
                return one("bytes logic", value);
            }
            let (x, y) = both_ints(before)?;
            let value = match name {
                "AND" => cost::cost_and_nat(x, y),
                "OR" => cost::cost_or_nat(x, y),
                _ => cost::cost_xor_nat(x, y),
            };
            one("nat logic", value)
        }
        "ABS" => one("ABS", cost::cost_abs(int_bytes_of(top?)?)),
        "NEG" => match &top?.kind {
            NodeKind::Int(value) => one("NEG", cost::cost_neg(size::int_bytes(value))),
            _ => bls_candidates(name, top?, second),
        },
        "INT" => match &top?.kind {
            NodeKind::Int(_) => one("INT nat", cost::COST_INT_NAT),
            // A `bls12_381_fr` prints as 32 bytes, like a `bytes` of that length.
            NodeKind::Bytes(bytes) if bytes.len() == 32 => Some(vec![
                ("INT bytes", cost::cost_int_bytes(32)),
                ("INT bls12_381_fr", cost::COST_INT_BLS12_381_FR),
            ]),
            NodeKind::Bytes(bytes) => one("INT bytes", cost::cost_int_bytes(bytes.len() as u64)),
            _ => None,
        },
        "NAT" => one("NAT bytes", cost::cost_nat_bytes(length_of(top?)?)),
        "BYTES" => {
            let size = int_bytes_of(top?)?;
            Some(vec![
                ("BYTES nat", cost::cost_bytes_nat(size)),
                ("BYTES int", cost::cost_bytes_int(size)),
            ])
        }
        "ADD" | "MUL"
            if matches!(top?.kind, NodeKind::Bytes(_))
                || matches!(second.map(|node| &node.kind), Some(NodeKind::Bytes(_))) =>
        {
            bls_candidates(name, top?, second)
        }
        "ADD" | "SUB" | "MUL" | "EDIV" => {
            let (a, b) = (top?, second?);
            let timestamps = (
                matches!(&a.kind, NodeKind::String(_)),
                matches!(&b.kind, NodeKind::String(_)),
            );
            let (x, y) = (int_bytes_of(a)?, int_bytes_of(b)?);
            let mut found = match (name, timestamps) {
                ("ADD", (false, false)) => vec![("ADD int", cost::cost_add_int(x, y))],
                ("ADD", (true, false)) => vec![(
                    "ADD timestamp int",
                    cost::cost_add_timestamp_to_seconds(x, y),
                )],
                ("ADD", (false, true)) => vec![(
                    "ADD int timestamp",
                    cost::cost_add_seconds_to_timestamp(x, y),
                )],
                ("SUB", (false, false)) => vec![("SUB int", cost::cost_sub_int(x, y))],
                ("SUB", (true, false)) => {
                    vec![("SUB timestamp int", cost::cost_sub_timestamp_seconds(x, y))]
                }
                ("SUB", (true, true)) => vec![("SUB timestamps", cost::cost_diff_timestamps(x, y))],
                ("MUL", (false, false)) => vec![("MUL int", cost::cost_mul_int(x, y))],
                ("EDIV", (false, false)) => vec![("EDIV int", cost::cost_ediv_int(x, y))],
                _ => return None,
            };
            if script_uses_mutez && timestamps == (false, false) {
                found.extend(match name {
                    "ADD" => vec![("ADD mutez", cost::COST_ADD_TEZ)],
                    "SUB" => vec![("SUB mutez (legacy)", cost::COST_SUB_TEZ_LEGACY)],
                    "MUL" => vec![("MUL mutez nat", cost::COST_MUL_TEZ_NAT)],
                    _ => vec![
                        ("EDIV mutez", cost::COST_EDIV_TEZ),
                        ("EDIV mutez nat", cost::COST_EDIV_TEZ_NAT),
                    ],
                });
            }
            Some(found)
        }
        "SUB_MUTEZ" => one("SUB_MUTEZ", cost::COST_SUB_MUTEZ),
        "LSL" | "LSR" => match (&top?.kind, &second?.kind) {
            (NodeKind::Int(value), NodeKind::Int(_)) => {
                let size = size::int_bytes(value);
                if name == "LSL" {
                    one("LSL nat", cost::cost_lsl_nat(size))
                } else {
                    one("LSR nat", cost::cost_lsr_nat(size))
                }
            }
            (NodeKind::Bytes(bytes), NodeKind::Int(shift)) => {
                let shift = u64::try_from(shift).ok()?;
                let length = bytes.len() as u64;
                if name == "LSL" {
                    one("LSL bytes", cost::cost_lsl_bytes(length, shift))
                } else {
                    one("LSR bytes", cost::cost_lsr_bytes(length, shift))
                }
            }
            _ => None,
        },
        "COMPARE" => one("COMPARE", compare_cost(top?, second?)?),
        "CONCAT" => match &top?.kind {
            NodeKind::Seq(items) => {
                let mut total = 0u64;
                for item in items {
                    total += length_of(item)?;
                }
                let precheck = cost::cost_concat_precheck(items.len() as u64);
                one("CONCAT list", precheck + cost::cost_concat_string(total))
            }
            NodeKind::String(_) => one(
                "CONCAT strings",
                cost::cost_concat_string_pair(length_of(top?)?, length_of(second?)?),
            ),
            NodeKind::Bytes(_) => one(
                "CONCAT bytes",
                cost::cost_concat_bytes_pair(length_of(top?)?, length_of(second?)?),
            ),
            _ => None,
        },
        "SLICE" => one("SLICE", cost::cost_slice_string(length_of(before.get(2)?)?)),
        "SHA256" => one("SHA256", cost::cost_sha256(length_of(top?)?)),
        "SHA512" => one("SHA512", cost::cost_sha512(length_of(top?)?)),
        "BLAKE2B" => one("BLAKE2B", cost::cost_blake2b(length_of(top?)?)),
        "KECCAK" => one("KECCAK", cost::cost_keccak(length_of(top?)?)),
        "SHA3" => one("SHA3", cost::cost_sha3(length_of(top?)?)),
        "CHECK_SIGNATURE" => {
            let NodeKind::String(key) = &top?.kind else {
                return None;
            };
            one(
                "CHECK_SIGNATURE",
                cost::cost_check_signature(curve_of_key(key)?, length_of(before.get(2)?)?),
            )
        }
        "MEM" | "GET" => {
            let key = key_size(top?)?;
            let collection = second?;
            let count = collection_len(collection)?;
            match (name, is_map_literal(collection)) {
                ("MEM", Some(false)) => one("MEM set", cost::cost_set_mem(key, count)),
                (_, Some(true)) if name == "MEM" => one("MEM map", cost::cost_map_mem(key, count)),
                ("GET", Some(true)) => one("GET map", cost::cost_map_get(key, count)),
                ("MEM", None) => Some(vec![
                    ("MEM set", cost::cost_set_mem(key, count)),
                    ("MEM map", cost::cost_map_mem(key, count)),
                ]),
                ("GET", None) => one("GET map", cost::cost_map_get(key, count)),
                _ => None,
            }
        }
        "UPDATE" | "GET_AND_UPDATE" => {
            let key = key_size(top?)?;
            let collection = before.get(2)?;
            let count = collection_len(collection)?;
            if name == "GET_AND_UPDATE" {
                return one(
                    "GET_AND_UPDATE map",
                    cost::cost_map_get_and_update(key, count),
                );
            }
            if is_bool(second?) {
                one("UPDATE set", cost::cost_set_update(key, count))
            } else {
                one("UPDATE map", cost::cost_map_update(key, count))
            }
        }
        _ => None,
    }
}

/// BLS12-381 arithmetic, told apart by the byte lengths of the points (`fr` 32, `g1` 96,
/// `g2` 192) and by integer operands.
fn bls_candidates(name: &str, top: &Node, second: Option<&Node>) -> Option<Vec<Candidate>> {
    let length = |node: &Node| match &node.kind {
        NodeKind::Bytes(bytes) => Some(bytes.len()),
        _ => None,
    };
    let one = |label, value| Some(vec![(label, value)]);
    match (name, length(top), second.map(|node| (node, length(node)))) {
        ("NEG", Some(32), _) => one("NEG bls12_381_fr", cost::COST_NEG_BLS12_381_FR),
        ("NEG", Some(96), _) => one("NEG bls12_381_g1", cost::COST_NEG_BLS12_381_G1),
        ("NEG", Some(192), _) => one("NEG bls12_381_g2", cost::COST_NEG_BLS12_381_G2),
        ("ADD", Some(32), Some((_, Some(32)))) => {
            one("ADD bls12_381_fr", cost::COST_ADD_BLS12_381_FR)
        }
        ("ADD", Some(96), Some((_, Some(96)))) => {
            one("ADD bls12_381_g1", cost::COST_ADD_BLS12_381_G1)
        }
        ("ADD", Some(192), Some((_, Some(192)))) => {
            one("ADD bls12_381_g2", cost::COST_ADD_BLS12_381_G2)
        }
        ("MUL", Some(32), Some((_, Some(32)))) => {
            one("MUL bls12_381_fr", cost::COST_MUL_BLS12_381_FR)
        }
        ("MUL", Some(96), Some((_, Some(32)))) => {
            one("MUL bls12_381_g1", cost::COST_MUL_BLS12_381_G1)
        }
        ("MUL", Some(192), Some((_, Some(32)))) => {
            one("MUL bls12_381_g2", cost::COST_MUL_BLS12_381_G2)
        }
        ("MUL", Some(32), Some((node, None))) => match &node.kind {
            NodeKind::Int(value) => one(
                "MUL fr × int",
                cost::cost_mul_bls12_381_fr_z(size::int_bytes(value)),
            ),
            _ => None,
        },
        ("MUL", None, Some((_, Some(32)))) => match &top.kind {
            NodeKind::Int(value) => one(
                "MUL int × fr",
                cost::cost_mul_bls12_381_z_fr(size::int_bytes(value)),
            ),
            _ => None,
        },
        _ => None,
    }
}

/// Hashing a big-map key of type `int`/`nat`/`string` (`Script_ir_translator.hash_comparable_data`):
/// packing it (one node) and `BLAKE2B` of the packed bytes.
fn big_map_key_hash_cost(key: &Node) -> Option<u64> {
    use super::typecheck;
    let (int_bytes, string_bytes, packed_length) = match &key.kind {
        NodeKind::Int(value) => {
            // Zarith: 6 value bits in the first byte, 7 in each following one.
            let bits = value.bits();
            let zarith_length = if bits <= 6 {
                1
            } else {
                1 + (bits - 6).div_ceil(7)
            };
            (size::int_bytes(value), 0, 2 + zarith_length)
        }
        NodeKind::String(text) => (0, text.len() as u64, 6 + text.len() as u64),
        _ => return None,
    };
    let pack = typecheck::cost_pack(
        typecheck::COST_UNPARSE_DATA_CYCLE,
        1,
        int_bytes,
        string_bytes,
    );
    Some(pack + cost::cost_blake2b(packed_length))
}

#[derive(Default)]
struct Tally {
    matched: BTreeMap<String, usize>,
    mismatched: Vec<String>,
    unexplained: BTreeMap<String, usize>,
}

/// Instructions whose charge is not only the interpreter step (big maps read the context,
/// the others parse or unparse values while running): not checked here.
const PARTIALLY_CARBONATED: &[&str] = &[
    "PACK",
    "INDEX_ADDRESS",
    "GET_ADDRESS_INDEX",
    "UNPACK",
    "APPLY",
    "CONTRACT",
    "TRANSFER_TOKENS",
    "CREATE_CONTRACT",
    "VIEW",
    "EMIT",
    "SET_DELEGATE",
    "FAILWITH",
    "TICKET",
    "VOTING_POWER",
    "TOTAL_VOTING_POWER",
];

/// Control instructions: their steps include continuation costs; checked separately.
const CONTROL: &[&str] = &[
    "IF",
    "IF_LEFT",
    "IF_CONS",
    "IF_NONE",
    "LOOP",
    "LOOP_LEFT",
    "ITER",
    "MAP",
    "DIP",
    "EXEC",
];

// ---------------------------------------------------------------------------------------------
// Macro expansion, only to number nodes as Octez does: octez-client expands macros before
// sending the script, and the protocol numbers the nodes of the expanded tree in prefix order.
// Macros not handled here stay unknown primitives, and steps located after them are skipped.

fn prim(name: &str, args: Vec<Node>) -> Node {
    Node::prim(kestrel_micheline::prim::PrimName::new(name), args)
}

fn fail_sequence() -> Node {
    Node::seq(vec![prim("UNIT", vec![]), prim("FAILWITH", vec![])])
}

const COMPARISONS: &[&str] = &["EQ", "NEQ", "LT", "GT", "LE", "GE"];

/// The expansion of one macro application (its arguments already expanded), if handled.
fn expand_macro(name: &str, args: &[Node]) -> Option<Node> {
    let two_branches = |args: &[Node]| -> Option<(Node, Node)> {
        match args {
            [first, second] => Some((first.clone(), second.clone())),
            _ => None,
        }
    };
    if let Some(op) = name
        .strip_prefix("CMP")
        .filter(|op| COMPARISONS.contains(op))
    {
        return Some(Node::seq(vec![prim("COMPARE", vec![]), prim(op, vec![])]));
    }
    if let Some(op) = name
        .strip_prefix("IFCMP")
        .filter(|op| COMPARISONS.contains(op))
    {
        let (then, otherwise) = two_branches(args)?;
        return Some(Node::seq(vec![
            prim("COMPARE", vec![]),
            prim(op, vec![]),
            prim("IF", vec![then, otherwise]),
        ]));
    }
    if let Some(op) = name
        .strip_prefix("IF")
        .filter(|op| COMPARISONS.contains(op))
    {
        let (then, otherwise) = two_branches(args)?;
        return Some(Node::seq(vec![
            prim(op, vec![]),
            prim("IF", vec![then, otherwise]),
        ]));
    }
    let assert_if = |test: Node| -> Node {
        Node::seq(vec![
            test,
            prim(
                "IF",
                vec![Node::seq(vec![]), Node::seq(vec![fail_sequence()])],
            ),
        ])
    };
    if let Some(op) = name
        .strip_prefix("ASSERT_CMP")
        .filter(|op| COMPARISONS.contains(op))
    {
        let test = Node::seq(vec![prim("COMPARE", vec![]), prim(op, vec![])]);
        return Some(assert_if(test));
    }
    if let Some(op) = name
        .strip_prefix("ASSERT_")
        .filter(|op| COMPARISONS.contains(op))
    {
        return Some(assert_if(prim(op, vec![])));
    }
    let fail_branch = || Node::seq(vec![fail_sequence()]);
    let empty = || Node::seq(vec![]);
    match (name, args) {
        ("FAIL", []) => Some(fail_sequence()),
        ("ASSERT", []) => Some(Node::seq(vec![prim("IF", vec![empty(), fail_branch()])])),
        ("ASSERT_NONE", []) => Some(Node::seq(vec![prim(
            "IF_NONE",
            vec![empty(), fail_branch()],
        )])),
        ("ASSERT_SOME", []) => Some(Node::seq(vec![prim(
            "IF_NONE",
            vec![fail_branch(), empty()],
        )])),
        ("ASSERT_LEFT", []) => Some(Node::seq(vec![prim(
            "IF_LEFT",
            vec![empty(), fail_branch()],
        )])),
        ("ASSERT_RIGHT", []) => Some(Node::seq(vec![prim(
            "IF_LEFT",
            vec![fail_branch(), empty()],
        )])),
        ("IF_SOME", [then, otherwise]) => Some(Node::seq(vec![prim(
            "IF_NONE",
            vec![otherwise.clone(), then.clone()],
        )])),
        ("IF_RIGHT", [then, otherwise]) => Some(Node::seq(vec![prim(
            "IF_LEFT",
            vec![otherwise.clone(), then.clone()],
        )])),
        _ => {
            // C[AD]+R with at least two letters: a sequence of CAR/CDR.
            let letters = name.strip_prefix('C')?.strip_suffix('R')?;
            if letters.len() >= 2
                && letters.chars().all(|c| c == 'A' || c == 'D')
                && args.is_empty()
            {
                let steps = letters
                    .chars()
                    .map(|c| prim(if c == 'A' { "CAR" } else { "CDR" }, vec![]))
                    .collect();
                return Some(Node::seq(steps));
            }
            None
        }
    }
}

/// The script with the handled macros expanded (recursion bounded by the test scripts).
fn expand_macros(node: &Node) -> Node {
    match &node.kind {
        NodeKind::Seq(items) => Node::seq(items.iter().map(expand_macros).collect()),
        NodeKind::Prim { name, args, .. } => {
            let args: Vec<Node> = args.iter().map(expand_macros).collect();
            let text = name.as_str();
            // `CAR n` / `CDR n` are macros for `GET (2n + 1)` / `GET 2n`.
            if let (Some(field), [index]) = (
                match text {
                    "CAR" => Some(1),
                    "CDR" => Some(0),
                    _ => None,
                },
                args.as_slice(),
            ) {
                if let NodeKind::Int(value) = &index.kind {
                    let get = value * 2 + field;
                    return Node::seq(vec![prim("GET", vec![Node::int(get)])]);
                }
            }
            if name.known().is_none() {
                if let Some(expanded) = expand_macro(text, &args) {
                    return expanded;
                }
            }
            Node::new(NodeKind::Prim {
                name: name.clone(),
                args,
                annots: Vec::new(),
            })
        }
        _ => node.clone(),
    }
}

/// The script's root as Octez numbers it: a file written `{ parameter ..; storage ..; code .. }`
/// has the braced sequence itself as root.
fn script_root(toplevel: &Node) -> &Node {
    match &toplevel.kind {
        NodeKind::Seq(items) if items.len() == 1 && matches!(items[0].kind, NodeKind::Seq(_)) => {
            &items[0]
        }
        _ => toplevel,
    }
}

/// The end (exclusive) of each node's subtree in location order.
fn subtree_ends(located: &[(&Node, Option<usize>)]) -> Vec<usize> {
    let mut ends = vec![0usize; located.len() + 1];
    ends[located.len()] = located.len();
    for index in (0..located.len()).rev() {
        let mut end = index + 1;
        for _ in located[index].0.children() {
            end = ends[end];
        }
        ends[index] = end;
    }
    ends
}

/// For each located node, the location of the node right before it in the same sequence.
fn previous_siblings(located: &[(&Node, Option<usize>)], ends: &[usize]) -> Vec<Option<usize>> {
    let mut previous = vec![None; located.len()];
    for (index, (node, _)) in located.iter().enumerate() {
        if matches!(node.kind, NodeKind::Seq(_)) {
            let mut child = index + 1;
            let mut last: Option<usize> = None;
            for _ in node.children() {
                previous[child] = last;
                last = Some(child);
                child = ends[child];
            }
        }
    }
    previous
}

/// Octez logs the control steps of `LOOP` and `LOOP_LEFT` (entering, iterating, leaving) at the
/// location of the instruction that **follows** the loop. Returns the candidates for such a
/// step, or `None` when the step is that following instruction's own execution.
fn loop_control_candidates(
    loop_location: usize,
    loop_node: &Node,
    ends: &[usize],
    previous: &octez_output::TraceStep,
    before: &[Node],
) -> Option<Vec<Candidate>> {
    let previous_location = previous.location as usize;
    let inside = previous_location > loop_location && previous_location < ends[loop_location];
    let exits = loop_exits(loop_node, before)?;
    let continuation = if exits {
        cost::COST_CONS_CONTINUATION
    } else {
        0
    };
    if inside {
        // A body finished: `IHalt`, the next test, and `KCons` when leaving.
        let label = if exits { "loop exit" } else { "loop iteration" };
        return Some(vec![(
            label,
            cost::COST_HALT + cost::COST_LOOP_IN + continuation,
        )]);
    }
    if previous_location < loop_location {
        // Entering: the loop instruction itself, then the first test.
        return Some(vec![(
            "loop entry",
            cost::COST_LOOP + cost::COST_LOOP_IN + continuation,
        )]);
    }
    None
}

/// Whether the loop stops on this test, from the value on top of the stack.
fn loop_exits(loop_node: &Node, before: &[Node]) -> Option<bool> {
    let top = prim_name(before.first()?)?;
    match (prim_name(loop_node)?, top) {
        ("LOOP", "True") | ("LOOP_LEFT", "Left") => Some(false),
        ("LOOP", "False") | ("LOOP_LEFT", "Right") => Some(true),
        _ => None,
    }
}

/// The candidates for a step logged at the location of a control instruction (`IF*`, `DIP`,
/// `ITER`, `MAP`, `EXEC`): its entry (the instruction's own cost plus the first continuation),
/// or the end of one of its bodies (`IHalt` plus the continuations popped).
fn control_candidates(
    control: &Node,
    location: usize,
    ends: &[usize],
    previous: &octez_output::TraceStep,
    before: &[Node],
    after: &[Node],
) -> Option<Vec<Candidate>> {
    let name = prim_name(control)?;
    let previous_location = previous.location as usize;
    let closes_body = previous_location == location
        || (previous_location > location && previous_location < ends[location]);
    let halt = cost::COST_HALT;
    let next = cost::COST_CONS_CONTINUATION;
    match (name, closes_body) {
        ("IF" | "IF_NONE" | "IF_LEFT" | "IF_CONS", false) => {
            Some(vec![("IF* entry", cost::COST_IF)])
        }
        ("IF" | "IF_NONE" | "IF_LEFT" | "IF_CONS", true) => {
            Some(vec![("IF* branch end", halt + next)])
        }
        ("DIP", false) => match prim_args(control).len() {
            1 => Some(vec![("DIP entry", cost::COST_DIP)]),
            _ => Some(vec![("DIP n entry", cost::cost_dip_n(small_arg(control)?))]),
        },
        ("DIP", true) => {
            let depth = if prim_args(control).len() == 1 {
                1
            } else {
                small_arg(control)?
            };
            Some(vec![(
                "DIP body end",
                halt + depth * cost::COST_UNDIP + next,
            )])
        }
        // `EXEC` logs no entry step (its cost goes to the lambda's first instruction): every
        // step at its location is the return, whose body lies elsewhere in the script.
        ("EXEC", _) => Some(vec![("EXEC return", halt + cost::COST_RETURN + next)]),
        ("ITER", false) => {
            let collection = before.first()?;
            let count = collection_len(collection)?;
            let empty_exit = if count == 0 { next } else { 0 };
            let entry = match is_map_literal(collection) {
                Some(true) => vec![("ITER map entry", cost::cost_map_iter(count))],
                Some(false) => vec![
                    ("ITER list entry", cost::COST_LIST_ITER),
                    ("ITER set entry", cost::cost_set_iter(count)),
                ],
                None => vec![
                    ("ITER list entry", cost::COST_LIST_ITER),
                    ("ITER set entry", cost::cost_set_iter(0)),
                    ("ITER map entry", cost::cost_map_iter(0)),
                ],
            };
            Some(
                entry
                    .into_iter()
                    .map(|(label, value)| (label, value + cost::COST_ITER + empty_exit))
                    .collect(),
            )
        }
        ("ITER", true) => Some(vec![
            ("ITER next element", halt + cost::COST_ITER),
            ("ITER end", halt + cost::COST_ITER + next),
        ]),
        ("MAP", false) => {
            let collection = before.first()?;
            let count = collection_len(collection)?;
            match is_map_literal(collection) {
                Some(true) => Some(vec![(
                    "MAP map entry",
                    cost::cost_map_map(count) + cost::cost_map_enter_body(0),
                )]),
                Some(false) => Some(vec![(
                    "MAP list entry",
                    cost::COST_LIST_MAP + cost::cost_list_enter_body(false, 0),
                )]),
                None => Some(vec![
                    (
                        "MAP empty list",
                        cost::COST_LIST_MAP + cost::cost_list_enter_body(true, 0) + next,
                    ),
                    (
                        "MAP empty map",
                        cost::cost_map_map(0) + cost::cost_map_enter_body(0) + next,
                    ),
                ]),
            }
        }
        ("MAP", true) => {
            let mut found = vec![(
                "MAP list next element",
                halt + cost::COST_LIST_EXIT_BODY + cost::cost_list_enter_body(false, 0),
            )];
            let result = after.first();
            if let Some(count) = result.and_then(collection_len) {
                found.push((
                    "MAP list end",
                    halt + cost::COST_LIST_EXIT_BODY
                        + cost::cost_list_enter_body(true, count)
                        + next,
                ));
            }
            // On a map, the end inserts the last (greatest) key into the result built so far.
            if let Some(result) = result.filter(|node| is_map_literal(node) == Some(true)) {
                let bindings = result.children();
                let last_key = prim_args(bindings.last()?).first()?;
                let accumulated = bindings.len() as u64 - 1;
                found.push((
                    "MAP map end",
                    halt + cost::cost_map_exit_body(key_size(last_key)?, accumulated)
                        + cost::cost_map_enter_body(accumulated + 1)
                        + next,
                ));
            }
            // Moving to the next binding inserts the previous key, which the trace does not
            // show; with the short keys of the recorded scripts the update costs its intercept.
            found.push((
                "MAP map next element (short key)",
                halt + cost::cost_map_exit_body(0, 0) + cost::cost_map_enter_body(1),
            ));
            Some(found)
        }
        _ => None,
    }
}

fn check_run(file: &str, run: &octez_output::Run, toplevel: &Node, tally: &mut Tally) {
    let expanded = expand_macros(script_root(toplevel));
    let located = locate(&expanded);
    let ends = subtree_ends(&located);
    let previous_sibling = previous_siblings(&located, &ends);
    let first_macro = located
        .iter()
        .position(|(node, _)| is_macro_or_unknown(node))
        .unwrap_or(located.len());
    let script_text_uses = |word: &str| {
        located
            .iter()
            .any(|(node, _)| prim_name(node) == Some(word))
    };
    let script_uses_mutez = script_text_uses("mutez");
    // Big-map accesses read the context (not modelled); their other instructions are checked.
    let script_uses_big_map = script_text_uses("big_map");
    for pair in run.trace.windows(2) {
        let (previous, step) = (&pair[0], &pair[1]);
        let location = step.location as usize;
        if location >= first_macro {
            continue;
        }
        let Some((instruction, lambda)) = located.get(location) else {
            continue;
        };
        let Some(name) = prim_name(instruction) else {
            continue;
        };
        if name == "CONTRACT" {
            let target = previous
                .stack
                .first()
                .and_then(|text| parse_expression(text).ok());
            if let Some(NodeKind::String(address)) = target.as_ref().map(|node| &node.kind) {
                if address.starts_with("tz") && !address.contains('%') {
                    let found = [("CONTRACT implicit", cost::COST_CONTRACT_IMPLICIT)];
                    record(tally, file, step, location, name, &found, previous);
                }
            }
            continue;
        }
        if name == "APPLY" {
            // The captured value is unparsed like PACK does, and its (here one-node) type.
            let captured = previous
                .stack
                .first()
                .and_then(|text| parse_expression(text).ok());
            if let Some(captured) =
                captured.filter(|node| matches!(node.kind, NodeKind::Int(_) | NodeKind::String(_)))
            {
                let (int_bytes, string_bytes) = match &captured.kind {
                    NodeKind::Int(value) => (size::int_bytes(value), 0),
                    NodeKind::String(text) => (0, text.len() as u64),
                    _ => (0, 0),
                };
                let unparse = super::typecheck::cost_pack(
                    super::typecheck::COST_UNPARSE_DATA_CYCLE,
                    1,
                    int_bytes,
                    string_bytes,
                );
                let expected =
                    cost::cost_apply(false) + unparse + super::typecheck::cost_unparse_type(1);
                record(
                    tally,
                    file,
                    step,
                    location,
                    name,
                    &[("APPLY", expected)],
                    previous,
                );
            }
            continue;
        }
        if PARTIALLY_CARBONATED.contains(&name) {
            continue;
        }
        if script_uses_big_map && matches!(name, "MEM" | "GET" | "UPDATE" | "GET_AND_UPDATE") {
            // Big maps built from a literal live in memory during the run (no context read):
            // the overlay cost plus hashing the key (PACK, then BLAKE2B of the packed bytes).
            let parsed: Option<Vec<Node>> = previous
                .stack
                .iter()
                .map(|text| parse_expression(text).ok())
                .collect();
            if let (Some(before), true) = (parsed, matches!(name, "MEM" | "GET")) {
                if let (Some(key), Some(map)) = (before.first(), before.get(1)) {
                    if let (Some(hash), Some(overlay)) =
                        (big_map_key_hash_cost(key), collection_len(map))
                    {
                        let access = if name == "MEM" {
                            cost::cost_big_map_mem(overlay)
                        } else {
                            cost::cost_big_map_get(overlay)
                        };
                        record(
                            tally,
                            file,
                            step,
                            location,
                            name,
                            &[("big_map access", access + hash)],
                            previous,
                        );
                    }
                }
            }
            continue;
        }
        let Ok(before) = previous
            .stack
            .iter()
            .map(|text| parse_expression(text))
            .collect::<Result<Vec<Node>, _>>()
        else {
            continue;
        };
        if CONTROL.contains(&name) {
            // Macros inside the control's bodies shift the locations of what follows them.
            if ends[location] > first_macro {
                continue;
            }
            let Ok(after) = step
                .stack
                .iter()
                .map(|text| parse_expression(text))
                .collect::<Result<Vec<Node>, _>>()
            else {
                continue;
            };
            match control_candidates(instruction, location, &ends, previous, &before, &after) {
                Some(found) => record(tally, file, step, location, name, &found, previous),
                None => *tally.unexplained.entry(name.to_string()).or_default() += 1,
            }
            continue;
        }
        let loop_before = previous_sibling[location]
            .filter(|&sibling| matches!(prim_name(located[sibling].0), Some("LOOP" | "LOOP_LEFT")));
        if let Some(loop_location) = loop_before {
            let (loop_node, _) = located[loop_location];
            if let Some(found) =
                loop_control_candidates(loop_location, loop_node, &ends, previous, &before)
            {
                record(
                    tally,
                    file,
                    step,
                    location,
                    "loop control",
                    &found,
                    previous,
                );
                continue;
            }
            if previous.location as usize != location {
                continue;
            }
        }
        let Some(mut found) = candidates(instruction, &before, script_uses_mutez) else {
            *tally.unexplained.entry(name.to_string()).or_default() += 1;
            continue;
        };
        // The first instruction of a lambda body run by `EXEC` also carries `EXEC`'s cost, since
        // Octez logs no step for `EXEC` itself.
        let previous_lambda = located
            .get(previous.location as usize)
            .and_then(|(_, l)| *l);
        if lambda.is_some() && previous_lambda != *lambda {
            for candidate in &mut found {
                candidate.1 += cost::COST_EXEC;
            }
        }
        record(tally, file, step, location, name, &found, previous);
    }
}

fn record(
    tally: &mut Tally,
    file: &str,
    step: &octez_output::TraceStep,
    location: usize,
    name: &str,
    found: &[Candidate],
    previous: &octez_output::TraceStep,
) {
    match found.iter().find(|(_, value)| *value == step.gas_milli) {
        Some((label, _)) => *tally.matched.entry(label.to_string()).or_default() += 1,
        None => tally.mismatched.push(format!(
            "{file}:{} location {location} {name}: recorded {} milligas, model {found:?}, stack before {:?}",
            step.line, step.gas_milli, previous.stack
        )),
    }
}

#[test]
fn instruction_costs_match_recorded_traces() {
    let Some(dir) = kestrel_testdata::require(
        "michelson-regression/opcodes",
        "instruction_costs_match_recorded_traces",
    ) else {
        return;
    };
    let testdata = kestrel_testdata::testdata_dir();
    let mut tally = Tally::default();
    for path in kestrel_testdata::files_with_suffix(&dir, ".out") {
        let file = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let output =
            octez_output::read_file(&path).unwrap_or_else(|error| panic!("{file}: {error}"));
        for run in output.runs() {
            let script_path = run.command.script_path(&testdata);
            let source = std::fs::read_to_string(&script_path)
                .unwrap_or_else(|error| panic!("{}: {error}", script_path.display()));
            let script =
                parse_toplevel(&source).unwrap_or_else(|error| panic!("{file}: {error:?}"));
            check_run(&file, run, &script, &mut tally);
        }
    }
    let matched: usize = tally.matched.values().sum();
    eprintln!("matched {matched} steps: {:?}", tally.matched);
    eprintln!("not explained from untyped stacks: {:?}", tally.unexplained);
    for line in &tally.mismatched {
        eprintln!("MISMATCH {line}");
    }
    assert!(
        tally.mismatched.is_empty(),
        "{} mismatches",
        tally.mismatched.len()
    );
    assert!(matched >= 1_000, "only {matched} steps matched");
}

// ---------------------------------------------------------------------------------------------
// The first step of a trace: everything charged before the first instruction runs.

/// A type node's name and arguments, reading `pair a b c` as `pair a (pair b c)` through
/// [`pair_type_halves`].
fn type_name(ty: &Node) -> Option<&str> {
    prim_name(ty)
}

/// The children types of a `pair` type, right-combing `pair a b c`.
fn pair_type_halves(ty: &Node) -> Option<(&Node, TypeRest<'_>)> {
    let args = prim_args(ty);
    match args.len() {
        2 => Some((&args[0], TypeRest::Node(&args[1]))),
        n if n > 2 => Some((&args[0], TypeRest::Comb(&args[1..]))),
        _ => None,
    }
}

enum TypeRest<'a> {
    Node(&'a Node),
    Comb(&'a [Node]),
}

/// The data-typechecking cost Octez charges for `value` of type `ty` (`parse_data`): one
/// [`typecheck::COST_PARSE_DATA_CYCLE`] per value node, `check_printable` for strings, readable
/// timestamp and address decoding, and for maps and sets the insertion
/// ([`cost::cost_map_update`] / [`cost::cost_set_update`] at the current size) plus the
/// ordering comparison with the previous key. Recursion is bounded by the recorded test data.
fn parse_data_cost(ty: &Node, value: Walk<'_>, ty_rest: Option<&[Node]>) -> Option<u64> {
    use super::typecheck;
    let mut total = typecheck::COST_PARSE_DATA_CYCLE;
    let name = match ty_rest {
        Some(_) => "pair",
        None => type_name(ty)?,
    };
    match name {
        "pair" => {
            let (left_ty, right_ty) = match ty_rest {
                Some(items) => (
                    &items[0],
                    if items.len() == 2 {
                        TypeRest::Node(&items[1])
                    } else {
                        TypeRest::Comb(&items[1..])
                    },
                ),
                None => pair_type_halves(ty)?,
            };
            let (left, right) = match value {
                Walk::Node(node) if matches!(node.kind, NodeKind::Seq(_)) => {
                    let items = node.children();
                    match items.len() {
                        2 => (Walk::Node(&items[0]), Walk::Node(&items[1])),
                        n if n > 2 => (Walk::Node(&items[0]), Walk::Comb(&items[1..])),
                        _ => return None,
                    }
                }
                other => other.split()?,
            };
            total += parse_data_cost(left_ty, left, None)?;
            total += match right_ty {
                TypeRest::Node(node) => parse_data_cost(node, right, None)?,
                TypeRest::Comb(items) => parse_data_cost(&items[0], right, Some(items))?,
            };
        }
        _ => {
            let node = value.node()?;
            let args = prim_args(ty);
            match (name, &node.kind) {
                ("unit" | "bool" | "int" | "nat" | "mutez" | "bytes", _) => {}
                ("bls12_381_fr", NodeKind::Bytes(_)) => {
                    total += typecheck::COST_DECODE_BLS12_381_FR
                }
                ("bls12_381_fr", NodeKind::Int(_)) => {}
                ("string", NodeKind::String(text)) => {
                    total += typecheck::cost_check_printable(text.len() as u64)
                }
                ("timestamp", NodeKind::Int(_)) => {}
                ("timestamp", NodeKind::String(text)) => {
                    total += typecheck::cost_timestamp_readable_decoding(text.len() as u64)
                }
                ("address" | "key_hash", NodeKind::String(_)) => {
                    total += typecheck::COST_DECODE_KEY_HASH_READABLE
                }
                ("signature", NodeKind::String(_)) => {
                    total += typecheck::COST_DECODE_SIGNATURE_READABLE
                }
                ("key", NodeKind::String(_)) => total += typecheck::COST_DECODE_PUBLIC_KEY_READABLE,
                ("option", _) => match prim_name(node)? {
                    "None" => {}
                    "Some" => {
                        total += parse_data_cost(
                            args.first()?,
                            Walk::Node(prim_args(node).first()?),
                            None,
                        )?
                    }
                    _ => return None,
                },
                ("or", _) => {
                    let side = match prim_name(node)? {
                        "Left" => args.first()?,
                        "Right" => args.get(1)?,
                        _ => return None,
                    };
                    total += parse_data_cost(side, Walk::Node(prim_args(node).first()?), None)?;
                }
                ("list", NodeKind::Seq(items)) => {
                    for item in items {
                        total += parse_data_cost(args.first()?, Walk::Node(item), None)?;
                    }
                }
                ("set", NodeKind::Seq(items)) => {
                    let element_ty = args.first()?;
                    for (index, item) in items.iter().enumerate() {
                        total += parse_data_cost(element_ty, Walk::Node(item), None)?;
                        total += cost::cost_set_update(key_size(item)?, index as u64);
                        if index > 0 {
                            total += compare_cost(&items[index - 1], item)?;
                        }
                    }
                }
                ("map", NodeKind::Seq(items)) => {
                    let (key_ty, value_ty) = (args.first()?, args.get(1)?);
                    let mut previous_key: Option<&Node> = None;
                    for (index, binding) in items.iter().enumerate() {
                        let [key, bound] = prim_args(binding) else {
                            return None;
                        };
                        total += parse_data_cost(key_ty, Walk::Node(key), None)?;
                        total += parse_data_cost(value_ty, Walk::Node(bound), None)?;
                        total += cost::cost_map_update(key_size(key)?, index as u64);
                        if let Some(previous) = previous_key {
                            total += compare_cost(previous, key)?;
                        }
                        previous_key = Some(key);
                    }
                }
                _ => return None,
            }
        }
    }
    Some(total)
}

/// The declared `parameter` and `storage` types of a script.
fn declared_types(root: &Node) -> Option<(&Node, &Node)> {
    let mut parameter = None;
    let mut storage = None;
    for item in root.children() {
        match prim_name(item) {
            Some("parameter") => parameter = prim_args(item).first(),
            Some("storage") => storage = prim_args(item).first(),
            _ => {}
        }
    }
    Some((parameter?, storage?))
}

#[test]
fn first_step_data_costs_explain_differences_between_runs() {
    let Some(dir) =
        kestrel_testdata::require("michelson-regression/opcodes", "first_step_data_costs")
    else {
        return;
    };
    let testdata = kestrel_testdata::testdata_dir();
    // Script → (first-step gas minus the modelled data costs) of each run.
    let mut residuals: BTreeMap<String, Vec<(i64, u64, String)>> = BTreeMap::new();
    for path in kestrel_testdata::files_with_suffix(&dir, ".out") {
        let output = octez_output::read_file(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        for run in output.runs() {
            let source =
                std::fs::read_to_string(run.command.script_path(&testdata)).expect("script");
            let toplevel = parse_toplevel(&source).expect("script parses");
            let root = script_root(&toplevel);
            // Big-map literals are copied into temporary big maps (hashing, diffs): not modelled.
            if locate(root)
                .iter()
                .any(|(node, _)| prim_name(node) == Some("big_map"))
            {
                continue;
            }
            let Some((parameter_ty, storage_ty)) = declared_types(root) else {
                continue;
            };
            let (Ok(storage), Ok(input)) = (
                parse_expression(&run.command.storage),
                parse_expression(&run.command.input),
            ) else {
                continue;
            };
            let (Some(storage_cost), Some(input_cost)) = (
                parse_data_cost(storage_ty, Walk::Node(&storage), None),
                parse_data_cost(parameter_ty, Walk::Node(&input), None),
            ) else {
                continue;
            };
            let first = run.trace.first().map(|step| step.gas_milli).unwrap_or(0);
            residuals
                .entry(run.command.script.clone())
                .or_default()
                .push((
                    first as i64 - (storage_cost + input_cost) as i64,
                    storage_cost + input_cost,
                    format!(
                        "storage {} input {}",
                        run.command.storage, run.command.input
                    ),
                ));
        }
    }
    let mut compared_scripts = 0;
    let mut compared_runs = 0;
    let mut differing_data = 0;
    for (script, runs) in &residuals {
        if runs.len() < 2 {
            continue;
        }
        compared_scripts += 1;
        compared_runs += runs.len();
        let first = runs[0].0;
        for (residual, _, data) in runs {
            assert_eq!(
                *residual, first,
                "{script}: {data} leaves {residual}, another run {first}"
            );
        }
        let data_costs: std::collections::BTreeSet<u64> =
            runs.iter().map(|(_, data_cost, _)| *data_cost).collect();
        if data_costs.len() > 1 {
            differing_data += 1;
        }
    }
    eprintln!("first steps: {compared_runs} runs of {compared_scripts} scripts ({differing_data} whose runs differ in data cost) agree");
    assert!(
        compared_scripts >= 30 && compared_runs >= 80 && differing_data >= 10,
        "{compared_scripts} scripts, {compared_runs} runs, {differing_data} differing"
    );
}

// ---------------------------------------------------------------------------------------------
// PACK and UNPACK, found by the shape of their steps (a value becoming `0x05…` bytes, bytes
// becoming `Some v`/`None`), wherever they are in the scripts.

/// Counts of a binary Micheline expression: nodes, `int_bytes` of its integers, bytes of its
/// strings and byte sequences. `None` on malformed input.
fn binary_micheline_counts(bytes: &[u8]) -> Option<(u64, u64, u64)> {
    let (mut nodes, mut int_bytes, mut string_bytes) = (0u64, 0u64, 0u64);
    let mut offset = 0usize;
    // Pending nodes to read; sequences push their byte length as a bound we do not need.
    let mut pending: u64 = 1;
    let read_u32 = |offset: &mut usize| -> Option<usize> {
        let slice = bytes.get(*offset..*offset + 4)?;
        *offset += 4;
        Some(u32::from_be_bytes([slice[0], slice[1], slice[2], slice[3]]) as usize)
    };
    while pending > 0 {
        pending -= 1;
        nodes += 1;
        let tag = *bytes.get(offset)?;
        offset += 1;
        match tag {
            0x00 => {
                // Zarith: 6 value bits in the first byte, then 7 per byte.
                let mut bits = 0u64;
                let mut value = num_bigint::BigInt::from(0);
                let mut first = true;
                loop {
                    let byte = *bytes.get(offset)?;
                    offset += 1;
                    let (payload, width) = if first {
                        (byte & 0x3f, 6)
                    } else {
                        (byte & 0x7f, 7)
                    };
                    value += num_bigint::BigInt::from(payload) << bits;
                    bits += width;
                    first = false;
                    if byte & 0x80 == 0 {
                        break;
                    }
                }
                int_bytes += size::int_bytes(&value);
            }
            0x01 | 0x0a => {
                let length = read_u32(&mut offset)?;
                offset += length;
                string_bytes += length as u64;
            }
            0x02 => {
                // A sequence: its items follow; count them by reading to the announced end.
                let length = read_u32(&mut offset)?;
                let end = offset + length;
                let inner = binary_sequence_counts(bytes.get(offset..end)?)?;
                nodes += inner.0;
                int_bytes += inner.1;
                string_bytes += inner.2;
                offset = end;
            }
            0x03 => offset += 1,
            0x04 => {
                offset += 1;
                let length = read_u32(&mut offset)?;
                offset += length;
            }
            0x05..=0x08 => {
                offset += 1;
                pending += u64::from((tag - 0x03) / 2);
                if tag % 2 == 0 {
                    // Annotations follow the arguments; not used by PACK of values.
                    return None;
                }
            }
            0x09 => {
                offset += 1;
                let length = read_u32(&mut offset)?;
                let end = offset + length;
                let inner = binary_sequence_counts(bytes.get(offset..end)?)?;
                nodes += inner.0;
                int_bytes += inner.1;
                string_bytes += inner.2;
                offset = end;
                let annotations = read_u32(&mut offset)?;
                offset += annotations;
            }
            _ => return None,
        }
    }
    (offset == bytes.len()).then_some((nodes, int_bytes, string_bytes))
}

/// Counts of a concatenation of binary Micheline expressions (a sequence's body).
fn binary_sequence_counts(mut bytes: &[u8]) -> Option<(u64, u64, u64)> {
    let mut total = (0, 0, 0);
    while !bytes.is_empty() {
        // Find the shortest prefix that is one expression.
        let mut found = None;
        for end in 1..=bytes.len() {
            if let Some(counts) = binary_micheline_counts(&bytes[..end]) {
                found = Some((end, counts));
                break;
            }
        }
        let (end, counts) = found?;
        total = (total.0 + counts.0, total.1 + counts.1, total.2 + counts.2);
        bytes = &bytes[end..];
    }
    Some(total)
}

fn looks_like_address(text: &str) -> bool {
    let base = text.split('%').next().unwrap_or(text);
    base.len() == 36
        && ["tz1", "tz2", "tz3", "tz4", "KT1"]
            .iter()
            .any(|prefix| base.starts_with(prefix))
}

fn looks_like_key(text: &str) -> bool {
    ["edpk", "sppk", "p2pk", "BLpk"]
        .iter()
        .any(|prefix| text.starts_with(prefix))
}

fn looks_like_signature(text: &str) -> bool {
    ["edsig", "spsig", "p2sig", "sig", "BLsig"]
        .iter()
        .any(|prefix| text.starts_with(prefix))
}

fn is_code(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Seq(items) => {
            !items.is_empty()
                && items.iter().all(|item| {
                    prim_name(item).is_some_and(|name| {
                        name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                    })
                })
        }
        _ => false,
    }
}

/// `unparse_data` in optimized mode, from the readable value (leaf kinds recognized by shape).
fn unparse_cost(value: &Node) -> u64 {
    use super::typecheck;
    let mut total = 0;
    let mut pending = vec![value];
    while let Some(node) = pending.pop() {
        if is_code(node) {
            total += typecheck::COST_UNPARSE_DATA_CYCLE
                + typecheck::COST_UNPARSE_INSTRUCTION_CYCLE * locate(node).len() as u64;
            continue;
        }
        if prim_name(node) != Some("Elt") {
            total += typecheck::COST_UNPARSE_DATA_CYCLE;
        }
        if let NodeKind::String(text) = &node.kind {
            if looks_like_address(text) {
                total += typecheck::COST_ENCODE_KEY_HASH_OPTIMIZED;
            } else if looks_like_key(text) {
                total += typecheck::COST_ENCODE_PUBLIC_KEY_OPTIMIZED;
            } else if looks_like_signature(text) {
                total += typecheck::COST_ENCODE_SIGNATURE_OPTIMIZED;
            }
        }
        pending.extend(node.children());
    }
    total
}

/// `parse_data` of a value decoded from optimized bytes (leaf kinds recognized by shape).
fn parse_optimized_cost(value: &Node) -> Option<u64> {
    use super::typecheck;
    let mut total = 0;
    let mut pending = vec![value];
    while let Some(node) = pending.pop() {
        if is_code(node) {
            return None;
        }
        if prim_name(node) == Some("Elt") {
            pending.extend(node.children());
            continue;
        }
        total += typecheck::COST_PARSE_DATA_CYCLE;
        match &node.kind {
            NodeKind::String(text) if looks_like_address(text) => {
                total += typecheck::COST_DECODE_KEY_HASH_OPTIMIZED
            }
            NodeKind::String(text) if looks_like_key(text) => {
                total += typecheck::COST_DECODE_PUBLIC_KEY_OPTIMIZED
            }
            NodeKind::String(text) if looks_like_signature(text) => {
                total += typecheck::COST_DECODE_SIGNATURE_OPTIMIZED
            }
            NodeKind::String(text) if timestamp_seconds(text).is_some() => {}
            NodeKind::String(text) => total += typecheck::cost_check_printable(text.len() as u64),
            NodeKind::Seq(items) if is_map_literal(node) == Some(true) => {
                for (index, binding) in items.iter().enumerate() {
                    let key = prim_args(binding).first()?;
                    total += cost::cost_map_update(key_size(key)?, index as u64);
                    if index > 0 {
                        total += compare_cost(prim_args(&items[index - 1]).first()?, key)?;
                    }
                }
            }
            _ => {}
        }
        pending.extend(node.children());
    }
    Some(total)
}

#[test]
fn pack_and_unpack_costs_match_recorded_traces() {
    use super::typecheck;
    let Some(dir) =
        kestrel_testdata::require("michelson-regression/opcodes", "pack_and_unpack_costs")
    else {
        return;
    };
    let mut tally = Tally::default();
    for path in kestrel_testdata::files_with_suffix(&dir, ".out") {
        let file = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let output =
            octez_output::read_file(&path).unwrap_or_else(|error| panic!("{file}: {error}"));
        for run in output.runs() {
            for pair in run.trace.windows(2) {
                let (previous, step) = (&pair[0], &pair[1]);
                if previous.stack.is_empty()
                    || previous.stack.len() != step.stack.len()
                    || previous.stack[1..] != step.stack[1..]
                {
                    continue;
                }
                let (Some(before), Some(after)) = (previous.stack.first(), step.stack.first())
                else {
                    continue;
                };
                let (Ok(before), Ok(after)) = (parse_expression(before), parse_expression(after))
                else {
                    continue;
                };
                match (&before.kind, &after.kind) {
                    // PACK: a value that is not already packed becomes 0x05… bytes.
                    (_, NodeKind::Bytes(packed))
                        if packed.first() == Some(&0x05)
                            && !matches!(&before.kind, NodeKind::Bytes(b) if b.first() == Some(&0x05)) =>
                    {
                        let Some((nodes, int_bytes, string_bytes)) =
                            binary_micheline_counts(&packed[1..])
                        else {
                            continue;
                        };
                        let expected = typecheck::cost_pack(
                            unparse_cost(&before),
                            nodes,
                            int_bytes,
                            string_bytes,
                        );
                        record(
                            &mut tally,
                            &file,
                            step,
                            step.location as usize,
                            "PACK",
                            &[("PACK", expected)],
                            previous,
                        );
                    }
                    // UNPACK: bytes become `Some v` or `None`.
                    (NodeKind::Bytes(input), NodeKind::Prim { .. })
                        if matches!(prim_name(&after), Some("Some" | "None")) =>
                    {
                        let length = input.len() as u64;
                        let decoding = typecheck::cost_unpack_decoding(length);
                        let candidates: Vec<Candidate> = match prim_name(&after) {
                            // `SOME` on bytes also turns bytes into `Some`: only packed input is UNPACK.
                            Some("Some") if input.first() != Some(&0x05) => continue,
                            Some("Some") => {
                                let Some(value) = prim_args(&after).first() else {
                                    continue;
                                };
                                let Some(parse) = parse_optimized_cost(value) else {
                                    continue;
                                };
                                let mut found = vec![("UNPACK Some", decoding + parse)];
                                // A sequence of plain values may be a list or a set: a set also
                                // pays each insertion and the ordering comparisons.
                                if let NodeKind::Seq(items) = &value.kind {
                                    if is_map_literal(value) == Some(false) {
                                        let mut set_extra = 0;
                                        for (index, item) in items.iter().enumerate() {
                                            let Some(size) = key_size(item) else { continue };
                                            set_extra += cost::cost_set_update(size, index as u64);
                                            if index > 0 {
                                                set_extra += compare_cost(&items[index - 1], item)
                                                    .unwrap_or(0);
                                            }
                                        }
                                        found.push((
                                            "UNPACK Some (set)",
                                            decoding + parse + set_extra,
                                        ));
                                    }
                                }
                                found
                            }
                            _ if input.first() == Some(&0x05) && input.len() > 1 => vec![(
                                "UNPACK ill-typed",
                                decoding + typecheck::cost_unpack_failed(length - 1),
                            )],
                            _ => vec![("UNPACK not packed", decoding)],
                        };
                        record(
                            &mut tally,
                            &file,
                            step,
                            step.location as usize,
                            "UNPACK",
                            &candidates,
                            previous,
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    let matched: usize = tally.matched.values().sum();
    eprintln!("PACK/UNPACK matched {matched}: {:?}", tally.matched);
    for line in &tally.mismatched {
        eprintln!("MISMATCH {line}");
    }
    assert!(
        tally.mismatched.is_empty(),
        "{} mismatches",
        tally.mismatched.len()
    );
    assert!(matched >= 30, "only {matched} PACK/UNPACK steps found");
}
