//! Glue between Michelson's BLS12-381 values (kept as their binary forms inside `Value`) and
//! `kestrel_crypto::bls` arithmetic.

use kestrel_crypto::bls::{Fr, G1, G2};
use num_bigint::BigInt;

/// Reads an `Fr` literal (at most 32 bytes little-endian, below r).
pub fn fr_from_bytes(bytes: &[u8]) -> Option<[u8; 32]> {
    Fr::try_from_bytes(bytes).ok().map(|fr| fr.to_bytes())
}

/// An integer reduced modulo r.
pub fn fr_from_int(value: &BigInt) -> [u8; 32] {
    Fr::from_bigint(value).to_bytes()
}

/// Whether `bytes` is a valid G1 point.
pub fn g1_valid(bytes: &[u8]) -> bool {
    G1::try_from_bytes(bytes).is_ok()
}

/// Whether `bytes` is a valid G2 point.
pub fn g2_valid(bytes: &[u8]) -> bool {
    G2::try_from_bytes(bytes).is_ok()
}

/// Decodes a stored scalar.
pub fn fr(bytes: &[u8; 32]) -> Fr {
    // Stored scalars were validated when built.
    Fr::try_from_bytes(bytes).unwrap_or_else(|_| Fr::zero())
}

/// Decodes a stored G1 point.
pub fn g1(bytes: &[u8]) -> G1 {
    G1::try_from_bytes(bytes).unwrap_or_else(|_| G1::identity())
}

/// Decodes a stored G2 point.
pub fn g2(bytes: &[u8]) -> G2 {
    G2::try_from_bytes(bytes).unwrap_or_else(|_| G2::identity())
}
