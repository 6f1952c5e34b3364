//! Typechecking, parsing, unparsing and encoding costs, in milligas, as charged by Octez's
//! `Script_ir_translator` and `Michelson_v1_gas.Cost_of.{Typechecking, Unparsing}` (proto_alpha).
//!
//! These are paid before the first instruction runs (parsing the script, its types, the
//! storage and the parameter), and while running by the instructions that parse or unparse
//! values: `UNPACK` (parse), `PACK`, `APPLY`, `TRANSFER_TOKENS`, `EMIT`, `CREATE_CONTRACT`
//! (unparse), `CONTRACT` and `VIEW` (parse a type/script). Where they are charged:
//!
//! * `parse_ty`: [`COST_PARSE_TYPE_CYCLE`] per type node (a flat `pair a b c` is parsed as
//!   `pair a (pair b c)`, so the inner pair counts too).
//! * `parse_instr`: [`COST_PARSE_INSTRUCTION_CYCLE`] per call: once per instruction and, for a
//!   sequence of n instructions, once per suffix (`{a; b; c}`, `{b; c}`, `{c}`); plus
//!   [`cost_proof_argument`] for `DIG`/`DUG`/`DROP n`/`DUP n`/`PAIR n`/`UNPAIR n`/`GET n`/
//!   `UPDATE n`, [`COST_PARSE_DATA_CYCLE`] per type node of `DUP`'s dupable check, type
//!   parsing for `NIL`/`NONE`/`LEFT`/`RIGHT`/`PUSH`/`EMPTY_*`/`LAMBDA`, data parsing for `PUSH`,
//!   and [`cost_ty_eq`] wherever two types are unified (`CONS`, branch merges, the final stack
//!   against `pair (list operation) storage`).
//! * `parse_data`: [`COST_PARSE_DATA_CYCLE`] per value node, [`cost_check_printable`] per
//!   string, the readable/optimized decodings below, and per map or set element the insertion
//!   (`cost_map_update`/`cost_set_update` at the current size) plus the ordering comparison
//!   with the previous key (checked on the recorded first steps by `oracle_tests`).
//! * the typed code's size: [`cost_typed_ir_size_nodes`].

use super::arith::{add, isqrt, max, mul, safe, shift_right as lsr};

/// One step of `parse_instr`, charged for every instruction node typechecked
/// (`cost_TYPECHECKING_CODE`).
pub const COST_PARSE_INSTRUCTION_CYCLE: u64 = 220;
/// One step of `parse_data`, charged for every data node typechecked (`cost_TYPECHECKING_DATA`);
/// also the cost of one step of the dupable-type check.
pub const COST_PARSE_DATA_CYCLE: u64 = 100;
/// One step of `parse_ty`, charged for every type node parsed (`cost_PARSE_TYPE 1`).
pub const COST_PARSE_TYPE_CYCLE: u64 = 60;
/// One step of the dupable-type check of `DUP`/`DUP n` (`Typechecking.check_dupable_cycle`,
/// which reuses `cost_TYPECHECKING_DATA`), charged per type node the check visits.
pub const COST_CHECK_DUPABLE_CYCLE: u64 = COST_PARSE_DATA_CYCLE;
/// One step of `fold_lazy_storage` (`collect_lazy_storage` charges
/// `Typecheck_costs.parse_instr_cycle` per call), paid at least once for the parameter and once
/// for the storage before the code runs.
pub const COST_COLLECT_LAZY_STORAGE_CYCLE: u64 = COST_PARSE_INSTRUCTION_CYCLE;
/// One step of `unparse_instr` (`cost_UNPARSING_CODE`).
pub const COST_UNPARSE_INSTRUCTION_CYCLE: u64 = 115;
/// One step of `unparse_data` (`cost_UNPARSING_DATA`).
pub const COST_UNPARSE_DATA_CYCLE: u64 = 65;
/// One step of the entrypoint search in a parameter type (`cost_FIND_ENTRYPOINT`, two
/// comparisons of the longest entrypoint: `cost_N_ICompare 31 31`).
pub const COST_FIND_ENTRYPOINT_CYCLE: u64 = 35;
/// Reading a contract's balance to check it exists (`Storage_costs.read_access ~path_length:4
/// ~read_bytes:8`, see [`cost_read_access`]).
pub const COST_CONTRACT_EXISTS: u64 = cost_read_access(4, 8);
/// The fixed cost of a transfer operation created by `TRANSFER_TOKENS` (`transfer_operation`,
/// `step_cost 2000`... expressed in milligas: 2000 gas units is 2_000_000 milligas).
pub const COST_TRANSFER_OPERATION: u64 = 2_000 * super::MILLIGAS_PER_GAS;
/// The fixed cost of a manager operation (`manager_operation`: `step_cost 100`).
pub const COST_MANAGER_OPERATION: u64 = 100 * super::MILLIGAS_PER_GAS;

/// `ty_eq` of two types (`cost_TY_EQ`): `35 + 22 · min(size_a, size_b)`, sizes in type nodes.
pub const fn cost_ty_eq(type_size_a: u64, type_size_b: u64) -> u64 {
    let smaller = if type_size_a < type_size_b {
        type_size_a
    } else {
        type_size_b
    };
    add(mul(safe(smaller), 22), 35)
}

/// Expanding global constants in an expression of `nodes` Micheline nodes that holds none
/// (`Global_constants_costs.expand_no_constants_branch_cost`, model
/// `global_constants_storage/expand_no_constant_branch`), charged on the whole script before
/// `parse_toplevel`. The public model reads
/// `100 + 4.639474 · n · log n`; the recorded traces pin the protocol they come from to
/// `100 + 4.75 · v` with `v = n · log2 (n + 1)` and Octez's `log2 x = 1 + numbits x`
/// (`v·4 + v/2 + v/4`, each term rounded down): a script of 15 nodes pays for
/// `log2 16 = 6`, not `log2 15 = 5`, which only the `n + 1` form explains, and every one of the
/// recorded first steps that has no other unmodelled cost agrees to the milligas.
pub const fn cost_expand_no_constants(nodes: u64) -> u64 {
    let n = safe(nodes);
    let weight = mul(n, super::arith::log2(add(n, 1)));
    add(
        add(add(100, mul(weight, 4)), lsr(weight, 1)),
        lsr(weight, 2),
    )
}

/// `unparse_ty` of a type of `type_size` nodes (`cost_UNPARSE_TYPE`): `max 10 (20 · size)`.
pub const fn cost_unparse_type(type_size: u64) -> u64 {
    max(10, mul(safe(type_size), 20))
}

/// Checking that a string literal is printable (`cost_CHECK_PRINTABLE`): `15 + 10 · length`.
pub const fn cost_check_printable(length: u64) -> u64 {
    add(mul(safe(length), 10), 15)
}

/// Parsing a `timestamp` written as an RFC 3339 string (`cost_TIMESTAMP_READABLE_DECODING`):
/// `105 + 0.047 · length · sqrt(length)`.
pub fn cost_timestamp_readable_decoding(length: u64) -> u64 {
    let length = safe(length);
    let weight = mul(isqrt(length), length);
    add(add(lsr(weight, 5), lsr(weight, 6)), 105)
}

/// Printing a `timestamp` as an RFC 3339 string (`cost_TIMESTAMP_READABLE_ENCODING`).
pub const COST_TIMESTAMP_READABLE_ENCODING: u64 = 820;

/// Proof arguments of `DIG`/`DUG`/`DIP n`/`DROP n`/`PAIR n`/`UNPAIR n`/`GET n`/`UPDATE n`
/// at typechecking (`Typechecking.proof_argument`): `50 · n`.
pub const fn cost_proof_argument(n: u64) -> u64 {
    mul(safe(n), 50)
}

/// `parse_contract` of an address, as `CONTRACT` and a `contract` literal pay it: one
/// `parse_instr_cycle`, and for an implicit account the unification of the expected parameter
/// type with `unit`. (An originated contract's script is read from the context: not modelled.)
pub fn cost_parse_contract(
    destination: &crate::literals::Destination,
    expected: &crate::types::Type,
) -> u64 {
    let unify = match destination {
        crate::literals::Destination::Implicit(_) => cost_ty_eq(expected.size() as u64, 1),
        _ => 0,
    };
    add(COST_PARSE_INSTRUCTION_CYCLE, unify)
}

/// Reading `read_bytes` bytes at a context path of `path_length` segments
/// (`Storage_costs.read_access`): `200000 + 5000 · path_length + 2 · read_bytes` milligas.
pub const fn cost_read_access(path_length: u64, read_bytes: u64) -> u64 {
    add(
        add(200_000, mul(5_000, safe(path_length))),
        mul(2, safe(read_bytes)),
    )
}

/// Writing `written_bytes` bytes to the context (`Storage_costs.write_access`):
/// `200000 + 4 · written_bytes` milligas.
pub const fn cost_write_access(written_bytes: u64) -> u64 {
    add(200_000, mul(4, safe(written_bytes)))
}

// Key, signature, chain id and BLS decoding/encoding (the typechecker charges the most
// expensive curve, since the curve is known only after decoding).

/// Decoding a `key` from bytes (max over curves of `cost_DECODING_PUBLIC_KEY_*`: BLS).
pub const COST_DECODE_PUBLIC_KEY_OPTIMIZED: u64 = 74_000;
/// Decoding a `key` from base58 (max over curves of `cost_B58CHECK_DECODING_PUBLIC_KEY_*`).
pub const COST_DECODE_PUBLIC_KEY_READABLE: u64 = 79_000;
/// Decoding a `key_hash` (or an `address`, a `contract`) from bytes.
pub const COST_DECODE_KEY_HASH_OPTIMIZED: u64 = 60;
/// Decoding a `key_hash` (or a `contract`) from base58 (`B58CHECK_DECODING_PUBLIC_KEY_HASH_bls`).
pub const COST_DECODE_KEY_HASH_READABLE: u64 = 3_600;
/// Decoding a `signature` from bytes (`DECODING_SIGNATURE_bls`).
pub const COST_DECODE_SIGNATURE_OPTIMIZED: u64 = 40;
/// Decoding a `signature` from base58.
pub const COST_DECODE_SIGNATURE_READABLE: u64 = 6_400;
/// Decoding a `chain_id` from bytes.
pub const COST_DECODE_CHAIN_ID_OPTIMIZED: u64 = 50;
/// Decoding a `chain_id` from base58.
pub const COST_DECODE_CHAIN_ID_READABLE: u64 = 1_600;
/// Decoding a `bls12_381_g1` point.
pub const COST_DECODE_BLS12_381_G1: u64 = 54_600;
/// Decoding a `bls12_381_g2` point.
pub const COST_DECODE_BLS12_381_G2: u64 = 69_000;
/// Decoding a `bls12_381_fr` scalar.
pub const COST_DECODE_BLS12_381_FR: u64 = 120;
/// Encoding a `key` to bytes (max over curves: secp256k1).
pub const COST_ENCODE_PUBLIC_KEY_OPTIMIZED: u64 = 455;
/// Encoding a `key` to base58 (max over curves: BLS).
pub const COST_ENCODE_PUBLIC_KEY_READABLE: u64 = 5_900;
/// Encoding a `key_hash` (or an `address`, a `contract`) to bytes (BLS).
pub const COST_ENCODE_KEY_HASH_OPTIMIZED: u64 = 80;
/// Encoding a `key_hash` (or an `address`, a `contract`) to base58.
pub const COST_ENCODE_KEY_HASH_READABLE: u64 = 3_200;
/// Encoding a `signature` to bytes (BLS).
pub const COST_ENCODE_SIGNATURE_OPTIMIZED: u64 = 55;
/// Encoding a `signature` to base58.
pub const COST_ENCODE_SIGNATURE_READABLE: u64 = 8_300;
/// Encoding a `chain_id` to bytes.
pub const COST_ENCODE_CHAIN_ID_OPTIMIZED: u64 = 50;
/// Encoding a `chain_id` to base58.
pub const COST_ENCODE_CHAIN_ID_READABLE: u64 = 1_800;
/// Encoding a `bls12_381_g1` point.
pub const COST_ENCODE_BLS12_381_G1: u64 = 3_200;
/// Encoding a `bls12_381_g2` point.
pub const COST_ENCODE_BLS12_381_G2: u64 = 3_900;
/// Encoding a `bls12_381_fr` scalar.
pub const COST_ENCODE_BLS12_381_FR: u64 = 80;
/// Decoding a `chest_key`.
pub const COST_DECODE_CHEST_KEY: u64 = 9_550;
/// Encoding a `chest_key`.
pub const COST_ENCODE_CHEST_KEY: u64 = 7_840;

/// Decoding a `chest` of `length` bytes (`cost_DECODING_Chest`): `3750 + length/32`.
pub const fn cost_decode_chest(length: u64) -> u64 {
    add(lsr(safe(length), 5), 3_750)
}

/// Encoding a `chest` whose plaintext has `plaintext_length` bytes (`cost_ENCODING_Chest`).
pub const fn cost_encode_chest(plaintext_length: u64) -> u64 {
    let n = safe(plaintext_length);
    add(add(lsr(n, 4), lsr(n, 8)), 3_215)
}

// ---------------------------------------------------------------------------------------------
// Micheline serialization (`Script_repr_costs_generated`, `Script_repr`) and the `PACK`/`UNPACK`
// charges built on them.

/// Serializing a Micheline expression to binary (`cost_ENCODING_MICHELINE`):
/// `100 · nodes + 25 · int_bytes + 10 · string_bytes`, where `nodes` counts every node
/// (`Elt` included), `int_bytes` sums the `int_bytes` (rounded up) of the integer nodes and
/// `string_bytes` the lengths of the string and bytes nodes.
pub const fn cost_encode_micheline(nodes: u64, int_bytes: u64, string_bytes: u64) -> u64 {
    add(
        add(mul(safe(nodes), 100), mul(safe(int_bytes), 25)),
        mul(safe(string_bytes), 10),
    )
}

/// Deserializing a Micheline expression (`cost_DECODING_MICHELINE`):
/// `60 · nodes + 10 · int_bytes + 10 · string_bytes`.
pub const fn cost_decode_micheline(nodes: u64, int_bytes: u64, string_bytes: u64) -> u64 {
    add(
        add(mul(safe(nodes), 60), mul(safe(int_bytes), 10)),
        mul(safe(string_bytes), 10),
    )
}

/// Deserializing Micheline from `length` bytes when only the length is known
/// (`cost_DECODING_MICHELINE_bytes`): `max 10 (20 · length)`.
pub const fn cost_decode_micheline_bytes(length: u64) -> u64 {
    max(10, mul(safe(length), 20))
}

/// Serializing Micheline to `length` bytes when only the length is known
/// (`cost_ENCODING_MICHELINE_bytes`): `max 10 (33 · length)`.
pub const fn cost_encode_micheline_bytes(length: u64) -> u64 {
    max(10, mul(safe(length), 33))
}

/// `Micheline.strip_locations` over `nodes` nodes (`cost_strip_locations_micheline`): `51 · nodes`.
pub const fn cost_strip_locations(nodes: u64) -> u64 {
    mul(safe(nodes), 51)
}

/// What `account_for_future_serialization_cost` charges after `unparse_code` has normalized
/// the code of a lambda written as data (`Script_ir_translator.normalized_lam`; the walk itself
/// is `typecheck::unparse_code`): stripping the locations of its `nodes` nodes, then encoding
/// the result, whose size counts each annotation as a string node (`Script_repr.
/// Micheline_size`): `serialized_nodes`, `int_bytes` and `string_bytes` include them.
pub const fn cost_serialize_normalized_lambda(
    nodes: u64,
    serialized_nodes: u64,
    int_bytes: u64,
    string_bytes: u64,
) -> u64 {
    add(
        cost_strip_locations(nodes),
        cost_encode_micheline(serialized_nodes, int_bytes, string_bytes),
    )
}

/// Removing annotations from `nodes` nodes (`cost_strip_annotations`): `51 · nodes`.
pub const fn cost_strip_annotations(nodes: u64) -> u64 {
    mul(safe(nodes), 51)
}

/// Counting the nodes of a Micheline expression (`cost_MICHELINE_NODES`): `6.5 · nodes`.
pub const fn cost_micheline_nodes(nodes: u64) -> u64 {
    add(lsr(safe(nodes), 1), mul(safe(nodes), 6))
}

/// Computing the in-memory size of `nodes` typed-IR nodes (`Script_typed_ir_size_costs.
/// nodes_cost`, charged for the typechecked code and for ticket sizes): `45 · nodes`.
pub const fn cost_typed_ir_size_nodes(nodes: u64) -> u64 {
    mul(safe(nodes), 45)
}

/// Top-level `unparse_data` in optimized mode, which is all `PACK` costs (and what `APPLY` pays
/// for its captured value, and big-map key hashing before its `BLAKE2B`): unparsing the value
/// (`unparse_cost`: one
/// [`COST_UNPARSE_DATA_CYCLE`] per data node, `Elt` excluded, one
/// [`COST_UNPARSE_INSTRUCTION_CYCLE`] per instruction node of a lambda — its `PUSH`ed
/// constants typechecked and unparsed again, `typecheck::unparse_code` —, plus the optimized
/// encoding of keys, key hashes/addresses, signatures, chain ids and BLS values), then
/// stripping locations and serializing the optimized expression, whose `nodes`, `int_bytes` and
/// `string_bytes` are counted as in [`cost_encode_micheline`]. Checked on every `PACK` of the
/// recorded traces.
pub const fn cost_pack(unparse_cost: u64, nodes: u64, int_bytes: u64, string_bytes: u64) -> u64 {
    add(
        add(
            unparse_cost,
            cost_encode_micheline(nodes, int_bytes, string_bytes),
        ),
        cost_strip_locations(nodes),
    )
}

/// Gas of allocating `words` words (`Gas_limit_repr.alloc_cost`): `2000 · (words + 1)` milligas.
pub const fn cost_alloc(words: u64) -> u64 {
    mul(2_000, add(safe(words), 1))
}

/// Gas of allocating `bytes` bytes (`Gas_limit_repr.alloc_bytes_cost`).
pub const fn cost_alloc_bytes(bytes: u64) -> u64 {
    cost_alloc(safe(bytes).div_ceil(8))
}

/// Gas of allocating a `bytes`-byte OCaml string (`Gas_limit_repr.alloc_mbytes_cost`): a 12-word
/// header plus the bytes.
pub const fn cost_alloc_mbytes(bytes: u64) -> u64 {
    add(cost_alloc(12), cost_alloc_bytes(bytes))
}

/// `steps` abstract steps (`Gas_limit_repr.step_cost`): `1000 · steps` milligas.
pub const fn cost_step(steps: u64) -> u64 {
    mul(safe(steps), super::MILLIGAS_PER_GAS)
}

/// `UNPACK` whose bytes decode as Micheline but do not typecheck against the expected type
/// (`Cost_of.Interpreter.unpack_failed`, the worst case "a set of 1-byte values"): with
/// `length` the bytes after the `0x05` prefix and `d = numbits(length)`,
/// `length · alloc_mbytes(1) + length · d · (alloc(3) + step(1))`.
pub const fn cost_unpack_failed(payload_length: u64) -> u64 {
    let length = safe(payload_length);
    let bits = super::arith::numbits(length);
    add(
        mul(length, cost_alloc_mbytes(1)),
        mul(length, mul(bits, add(cost_alloc(3), cost_step(1)))),
    )
}

/// `UNPACK` of `length` bytes before the value is typechecked: the instruction
/// ([`super::interpreter::cost_unpack`]) and the Micheline decoding
/// ([`cost_decode_micheline_bytes`] of the whole input). On success Octez then charges the
/// value's `parse_data` costs ([`COST_PARSE_DATA_CYCLE`] per node and the leaf costs); when the
/// type does not match, [`cost_unpack_failed`]; an input without the `0x05` prefix (or that does
/// not decode) costs nothing more.
pub const fn cost_unpack_decoding(length: u64) -> u64 {
    add(
        super::interpreter::cost_unpack(length),
        cost_decode_micheline_bytes(length),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typecheck_spot_values() {
        assert_eq!(cost_ty_eq(1, 5), 57);
        assert_eq!(cost_unparse_type(0), 10);
        assert_eq!(cost_unparse_type(3), 60);
        assert_eq!(cost_check_printable(5), 65);
        assert_eq!(
            cost_timestamp_readable_decoding(20),
            105 + ((4 * 20) >> 5) + ((4 * 20) >> 6)
        );
        assert_eq!(
            COST_FIND_ENTRYPOINT_CYCLE,
            super::super::interpreter::cost_compare(31, 31)
        );
    }

    #[test]
    fn pack_and_unpack_spot_values_from_recorded_traces() {
        // PACK Unit: one node, no integer or string bytes.
        assert_eq!(cost_pack(COST_UNPARSE_DATA_CYCLE, 1, 0, 0), 216);
        // PACK (Pair 19 10): three nodes, two one-byte integers.
        assert_eq!(cost_pack(3 * COST_UNPARSE_DATA_CYCLE, 3, 2, 0), 698);
        // UNPACK int of 0x050000 (3 bytes): decoding, then one data node.
        assert_eq!(cost_unpack_decoding(3) + COST_PARSE_DATA_CYCLE, 421);
        // UNPACK of 0x (not packed) and of an ill-typed 0x050041 as nat.
        assert_eq!(cost_unpack_decoding(0), 270);
        assert_eq!(cost_unpack_decoding(3) + cost_unpack_failed(2), 96_321);
    }

    #[test]
    fn lambda_normalization_spot_values() {
        // `{ PACK }` given as a `lambda string bytes` (packunpack_rev_cty): after its two
        // nodes are unparsed (2 · 115), their locations stripped (2 · 51), their encoding
        // (2 · 100).
        assert_eq!(2 * 115 + cost_serialize_normalized_lambda(2, 2, 0, 0), 532);
        // `{ PUSH @x int 300 ; DROP }`: 5 nodes, the annotation `@x` serialized as a 2-byte
        // string node, `300` as 2 integer bytes.
        assert_eq!(
            cost_serialize_normalized_lambda(5, 6, 2, 2),
            5 * 51 + 6 * 100 + 2 * 25 + 2 * 10
        );
    }
}
