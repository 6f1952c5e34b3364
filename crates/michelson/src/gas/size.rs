//! The sizes Octez feeds into its cost functions, measured exactly as Octez measures them.
//!
//! Two different integer sizes exist in Octez and must not be mixed up:
//!
//! * [`int_bytes`] (`Michelson_v1_gas.Cost_of.int_size_in_bytes` / `z_bytes`): `(numbits + 7) / 8`,
//!   the number of bytes of the magnitude rounded **up**. It is the size of the operands of the
//!   arithmetic instructions (`ADD`, `MUL`, `NEG`, `ABS`, `LSL`, `EDIV`, ...), of `COMPARE` on
//!   `int`/`nat`/`timestamp`, and of `BYTES`/`INT`/`NAT` conversions.
//! * [`comparable_int_size`] (`Gas_comparable_input_size.integer`): `numbits / 8`, rounded
//!   **down**. It is the per-key size of map and set lookups (`MEM`, `GET`, `UPDATE`,
//!   `GET_AND_UPDATE` on `map`/`set`), through [`comparable_size_of`].
//!
//! Strings and bytes are measured by their length in bytes; collections by their element count.
//! All sizes are `u64`; callers convert `usize` lengths with `as u64` (lossless on 64-bit hosts).

use num_bigint::BigInt;

/// Bytes of a `key_hash` (`Signature.Public_key_hash.size`: one tag byte and a 20-byte hash).
pub const KEY_HASH_SIZE_BYTES: u64 = 21;

/// Bytes of a `chain_id` (`Script_chain_id.size`).
pub const CHAIN_ID_SIZE_BYTES: u64 = 4;

/// Bytes of a `mutez` for gas purposes (`Gas_comparable_input_size.mutez`: stored on an int64).
pub const MUTEZ_SIZE_BYTES: u64 = 8;

/// The longest entrypoint name Octez accepts, in bytes (`Michelson_v1_gas.entrypoint_size`).
pub const ENTRYPOINT_MAX_SIZE_BYTES: u64 = 31;

/// Bytes charged per key of a `big_map` overlay operation (`Script_expr_hash.size`): big-map
/// keys are hashed before lookup, so the key size is constant.
pub const BIG_MAP_KEY_HASH_SIZE_BYTES: u64 = 32;

/// Bytes of a `signature` for gas purposes (`Script_signature.size`, the generic signature
/// encoding: 64 bytes; BLS signatures are longer but Octez charges the same constant).
pub const SIGNATURE_SIZE_BYTES: u64 = 64;

/// `Z.numbits` of the magnitude of `value` (0 for 0).
pub fn numbits(value: &BigInt) -> u64 {
    value.bits()
}

/// `int_size_in_bytes` / `z_bytes`: bytes of the magnitude of an `int`, `nat`, `mutez`-as-integer
/// or `timestamp` (seconds), rounded up: 0 → 0, 1..=255 → 1, 256 → 2, -948 → 2.
pub fn int_bytes(value: &BigInt) -> u64 {
    numbits(value).div_ceil(8)
}

/// `Gas_comparable_input_size.integer` (and `.timestamp`): `numbits / 8` rounded down,
/// the key size of an `int`/`nat`/`timestamp` in map and set costs: 0..=127 → 0, 128..=32767 → 1.
pub fn comparable_int_size(value: &BigInt) -> u64 {
    comparable_int_size_of(numbits(value))
}

/// Bytes of a public key of the given curve (`Signature.Public_key.size`, tag included).
pub const fn public_key_size_bytes(curve: Curve) -> u64 {
    match curve {
        Curve::Ed25519 => 33,
        Curve::Secp256k1 | Curve::P256 => 34,
        Curve::Bls12_381 => 49,
    }
}

/// The signature schemes whose costs differ (`Michelson_v1_gas.Cost_of.Interpreter.algo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    /// `edpk` keys, `tz1` addresses.
    Ed25519,
    /// `sppk` keys, `tz2` addresses.
    Secp256k1,
    /// `p2pk` keys, `tz3` addresses.
    P256,
    /// `BLpk` keys, `tz4` addresses.
    Bls12_381,
}

/// The length of the default entrypoint's name, `default`: `Gas_comparable_input_size.address`
/// measures `Entrypoint.to_string`, which names the default entrypoint too.
pub const DEFAULT_ENTRYPOINT_LENGTH_BYTES: u64 = 7;

/// The size of an `address` for map/set key costs (`Gas_comparable_input_size.address`):
/// the key-hash size plus the entrypoint name's length, where `entrypoint_length_bytes` is 0
/// for the default entrypoint (entrypoint names are never empty), measured as `default`.
pub const fn address_size(entrypoint_length_bytes: u64) -> u64 {
    let entrypoint = if entrypoint_length_bytes == 0 {
        DEFAULT_ENTRYPOINT_LENGTH_BYTES
    } else {
        entrypoint_length_bytes
    };
    KEY_HASH_SIZE_BYTES + entrypoint
}

/// One node of a comparable value as the gas model sees it, produced by the caller's `view`
/// function for [`comparable_size_of`] and [`super::interpreter::cost_compare_values`]. `V` is
/// the caller's handle on a value (e.g. `&Value`); both walks use an explicit stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareView<V> {
    /// `Unit`.
    Unit,
    /// `True` / `False`.
    Bool,
    /// An `int` or `nat`, by the bit length of its magnitude (`Z.numbits`).
    Int {
        /// `Z.numbits` of the value.
        numbits: u64,
    },
    /// A `timestamp`, by the bit length of its seconds since the epoch.
    Timestamp {
        /// `Z.numbits` of the seconds.
        numbits: u64,
    },
    /// A `string`, by its length in bytes.
    String {
        /// Length in bytes.
        length: u64,
    },
    /// A `bytes`, by its length.
    Bytes {
        /// Length in bytes.
        length: u64,
    },
    /// A `mutez`.
    Mutez,
    /// A `key_hash`.
    KeyHash,
    /// An `address`, with the length of its entrypoint name (0 for the default entrypoint).
    Address {
        /// Length of the entrypoint name in bytes.
        entrypoint_length: u64,
    },
    /// A `key`, by curve.
    Key(Curve),
    /// A `signature`.
    Signature,
    /// A `chain_id`.
    ChainId,
    /// `Pair left right`.
    Pair(V, V),
    /// `Left v`.
    Left(V),
    /// `Right v`.
    Right(V),
    /// `Some v`.
    Some(V),
    /// `None`.
    None,
}

/// [`comparable_int_size`] of an integer of `numbits` bits.
#[inline]
pub const fn comparable_int_size_of(numbits: u64) -> u64 {
    numbits / 8
}

/// `Gas_comparable_input_size.size_of_comparable_value` of a value seen through `view`: the
/// key size of map and set costs. Walks with an explicit stack (no recursion).
pub fn comparable_size_of<V: Copy>(value: V, view: impl Fn(V) -> CompareView<V>) -> u64 {
    let mut total = 0u64;
    let mut pending: crate::types::WorkStack<V> = smallvec::smallvec![value];
    while let Some(current) = pending.pop() {
        let node = match view(current) {
            CompareView::Unit | CompareView::Bool => 1,
            CompareView::Int { numbits } | CompareView::Timestamp { numbits } => {
                comparable_int_size_of(numbits)
            }
            CompareView::String { length } | CompareView::Bytes { length } => length,
            CompareView::Mutez => MUTEZ_SIZE_BYTES,
            CompareView::KeyHash => KEY_HASH_SIZE_BYTES,
            CompareView::Address { entrypoint_length } => address_size(entrypoint_length),
            CompareView::Key(curve) => public_key_size_bytes(curve),
            CompareView::Signature => SIGNATURE_SIZE_BYTES,
            CompareView::ChainId => CHAIN_ID_SIZE_BYTES,
            CompareView::Pair(left, right) => {
                pending.push(right);
                pending.push(left);
                1
            }
            CompareView::Left(inner) | CompareView::Right(inner) | CompareView::Some(inner) => {
                pending.push(inner);
                1
            }
            CompareView::None => 1,
        };
        total = super::arith::add(total, node);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_int(value: i64, expected_int_bytes: u64, expected_comparable: u64) {
        let value = BigInt::from(value);
        assert_eq!(int_bytes(&value), expected_int_bytes, "int_bytes({value})");
        assert_eq!(
            comparable_int_size(&value),
            expected_comparable,
            "comparable_int_size({value})"
        );
    }

    #[test]
    fn integer_sizes_round_as_octez() {
        check_int(0, 0, 0);
        check_int(1, 1, 0);
        check_int(255, 1, 1);
        check_int(127, 1, 0);
        check_int(256, 2, 1);
        check_int(-948, 2, 1);
        check_int(65535, 2, 2);
        check_int(65536, 3, 2);
    }

    /// A tiny comparable value type for the generic walks.
    #[derive(Debug)]
    pub(super) enum Sample {
        Nat(u64),
        Text(&'static str),
        Pair(Box<Sample>, Box<Sample>),
        Some(Box<Sample>),
    }

    pub(super) fn view(sample: &Sample) -> CompareView<&Sample> {
        match sample {
            Sample::Nat(value) => CompareView::Int {
                numbits: u64::from(u64::BITS - value.leading_zeros()),
            },
            Sample::Text(text) => CompareView::String {
                length: text.len() as u64,
            },
            Sample::Pair(left, right) => CompareView::Pair(left, right),
            Sample::Some(inner) => CompareView::Some(inner),
        }
    }

    #[test]
    fn generic_key_size_walk() {
        // (Pair "ab" (Some 256)) = 1 + 2 + 1 + (256 has 9 bits → 1)
        let value = Sample::Pair(
            Box::new(Sample::Text("ab")),
            Box::new(Sample::Some(Box::new(Sample::Nat(256)))),
        );
        assert_eq!(comparable_size_of(&value, view), 5);
        assert_eq!(comparable_size_of(&Sample::Nat(127), view), 0);
        assert_eq!(comparable_size_of(&Sample::Nat(255), view), 1);
    }

    #[test]
    fn address_sizes_name_the_default_entrypoint() {
        assert_eq!(address_size(0), 21 + 7);
        assert_eq!(address_size(3), 21 + 3);
    }
}
