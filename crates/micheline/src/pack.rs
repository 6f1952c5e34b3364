//! PACK, UNPACK and script-expression hashes of untyped Micheline.
//!
//! Michelson's `PACK` writes the byte `0x05` followed by the binary Micheline of the value
//! ([`crate::binary`]); `UNPACK` reverses it. This module packs the expression *as given*: the
//! typed, optimized forms (addresses and keys as bytes, right combs, ...) are produced by the
//! Michelson crate before it calls [`pack`]. The script-expression hash (`expr...`, what
//! `octez-client hash data` prints as "Script-expression-ID-Hash" and what big-map keys are
//! indexed by) is base58check with prefix `[13, 44, 64, 27]` of blake2b-256 of the packed bytes.

use crate::binary::{self, DecodeError, DecodeErrorKind, DecodeLimits, EncodeError};
use crate::node::Node;
use kestrel_crypto::{base58, hash};
use std::fmt;

/// The first byte of packed data (the "Michelson data" watermark).
pub const PACK_PREFIX: u8 = 0x05;

/// Why bytes could not be unpacked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnpackError {
    /// The input is empty.
    Empty,
    /// The first byte is not [`PACK_PREFIX`].
    WrongPrefix(u8),
    /// The binary Micheline after the prefix is malformed (offsets count the prefix byte).
    Decode(DecodeError),
}

impl fmt::Display for UnpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnpackError::Empty => f.write_str("empty input: packed data starts with 0x05"),
            UnpackError::WrongPrefix(byte) => {
                write!(f, "packed data starts with 0x05, not 0x{byte:02x}")
            }
            UnpackError::Decode(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for UnpackError {}

impl UnpackError {
    /// The byte offset of the error in the packed input.
    pub fn offset_bytes(&self) -> usize {
        match self {
            UnpackError::Empty | UnpackError::WrongPrefix(_) => 0,
            UnpackError::Decode(error) => error.offset_bytes,
        }
    }
}

/// Packs `node`: `0x05` followed by its binary encoding.
pub fn pack(node: &Node) -> Result<Vec<u8>, EncodeError> {
    let mut out = vec![PACK_PREFIX];
    binary::encode_into(node, &mut out)?;
    Ok(out)
}

/// Unpacks `packed` with default limits.
pub fn unpack(packed: &[u8]) -> Result<Node, UnpackError> {
    unpack_with(packed, DecodeLimits::default())
}

/// Unpacks `packed`: checks the `0x05` prefix and decodes the rest, which must be one expression.
pub fn unpack_with(packed: &[u8], limits: DecodeLimits) -> Result<Node, UnpackError> {
    match packed.first() {
        None => return Err(UnpackError::Empty),
        Some(&PACK_PREFIX) => {}
        Some(&other) => return Err(UnpackError::WrongPrefix(other)),
    }
    let mut offset = 1;
    let node = binary::decode_prefix(packed, &mut offset, limits).map_err(UnpackError::Decode)?;
    if offset != packed.len() {
        return Err(UnpackError::Decode(DecodeError {
            kind: DecodeErrorKind::ExtraBytes,
            offset_bytes: offset,
        }));
    }
    Ok(node)
}

/// The blake2b-256 digest of already packed bytes (the raw script-expression hash).
pub fn expression_digest(packed: &[u8]) -> [u8; 32] {
    hash::blake2b_256(packed)
}

/// The `expr...` base58check hash of already packed bytes.
pub fn expression_hash_of_packed(packed: &[u8]) -> String {
    base58::encode_check(base58::SCRIPT_EXPR_HASH, &expression_digest(packed))
}

/// Packs `node` and returns its `expr...` hash.
pub fn expression_hash(node: &Node) -> Result<String, EncodeError> {
    Ok(expression_hash_of_packed(&pack(node)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_expression;
    use crate::prim::Prim;

    #[test]
    fn documented_vector() {
        // From the Tezos documentation: `Pair 1 "foo"` packs to 05070700010100000003666f6f and
        // hashes to exprvPNUJQXpct6VrbJQCazrDgh7pN8d8SH8P1UFHMrRPmQnxC16nr.
        let node = parse_expression("Pair 1 \"foo\"").unwrap_or_else(|e| panic!("{e}"));
        let packed = pack(&node).unwrap_or_else(|e| panic!("{e}"));
        let mut hex = String::new();
        crate::print::write_hex(&mut hex, &packed);
        assert_eq!(hex, "05070700010100000003666f6f");
        let mut digest = String::new();
        crate::print::write_hex(&mut digest, &expression_digest(&packed));
        assert_eq!(
            digest,
            "f65884dadd3a5ff1a6f8057fa442a2e8ecdbe1217f7759512509b36c016c5bce"
        );
        assert_eq!(
            expression_hash(&node).unwrap_or_default(),
            "exprvPNUJQXpct6VrbJQCazrDgh7pN8d8SH8P1UFHMrRPmQnxC16nr"
        );
        assert_eq!(unpack(&packed), Ok(node));
    }

    #[test]
    fn unpack_errors() {
        assert_eq!(unpack(&[]), Err(UnpackError::Empty));
        assert_eq!(
            unpack(&[0x06, 0x03, 0x0b]),
            Err(UnpackError::WrongPrefix(6))
        );
        assert_eq!(
            unpack(&[0x05, 0x03, 0x0b, 0x00]).map_err(|e| e.offset_bytes()),
            Err(3)
        );
        assert_eq!(
            unpack(&[0x05, 0x03, 0xff]).map_err(|e| e.offset_bytes()),
            Err(2)
        );
        assert_eq!(
            unpack(&[0x05, 0x03, 0x0b]),
            Ok(Node::prim(Prim::D_Unit, vec![]))
        );
    }
}
