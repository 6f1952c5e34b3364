//! Base58check with Tezos' versioned prefixes: `base58(prefix ‖ payload ‖ checksum)` where the
//! checksum is the first 4 bytes of SHA-256(SHA-256(prefix ‖ payload)).

use std::fmt;

/// A Tezos base58check prefix: the version bytes and the payload size they introduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// The version bytes written before the payload.
    pub bytes: &'static [u8],
    /// The exact payload size for this prefix.
    pub payload_size: usize,
}

/// `expr...`: script-expression hashes (blake2b-256 of PACKed data).
pub const SCRIPT_EXPR_HASH: Prefix = Prefix {
    bytes: &[13, 44, 64, 27],
    payload_size: 32,
};

/// `Co...`: context hashes.
pub const CONTEXT_HASH: Prefix = Prefix {
    bytes: &[79, 199],
    payload_size: 32,
};

/// Why a base58check string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base58Error {
    /// A character outside the base58 alphabet.
    InvalidCharacter,
    /// The checksum did not match.
    InvalidChecksum,
    /// The decoded bytes did not start with the expected prefix.
    WrongPrefix,
    /// The payload had the wrong size for the prefix.
    WrongSize {
        /// The size the prefix requires.
        expected: usize,
        /// The size found.
        found: usize,
    },
}

impl fmt::Display for Base58Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Base58Error::InvalidCharacter => f.write_str("invalid base58 character"),
            Base58Error::InvalidChecksum => f.write_str("invalid base58check checksum"),
            Base58Error::WrongPrefix => f.write_str("unexpected base58check prefix"),
            Base58Error::WrongSize { expected, found } => {
                write!(f, "payload of {found} bytes where {expected} are required")
            }
        }
    }
}

impl std::error::Error for Base58Error {}

/// Encodes `payload` under `prefix`. The payload size must match the prefix (a caller bug otherwise).
pub fn encode_check(prefix: Prefix, payload: &[u8]) -> String {
    assert_eq!(
        payload.len(),
        prefix.payload_size,
        "payload size for prefix"
    );
    let mut bytes = Vec::with_capacity(prefix.bytes.len() + payload.len());
    bytes.extend_from_slice(prefix.bytes);
    bytes.extend_from_slice(payload);
    bs58::encode(bytes).with_check().into_string()
}

/// Decodes a base58check string carrying `prefix`, returning the payload.
pub fn decode_check(prefix: Prefix, text: &str) -> Result<Vec<u8>, Base58Error> {
    let bytes = bs58::decode(text)
        .with_check(None)
        .into_vec()
        .map_err(|error| match error {
            bs58::decode::Error::InvalidChecksum { .. } | bs58::decode::Error::NoChecksum => {
                Base58Error::InvalidChecksum
            }
            _ => Base58Error::InvalidCharacter,
        })?;
    let Some(payload) = bytes.strip_prefix(prefix.bytes) else {
        return Err(Base58Error::WrongPrefix);
    };
    if payload.len() != prefix.payload_size {
        return Err(Base58Error::WrongSize {
            expected: prefix.payload_size,
            found: payload.len(),
        });
    }
    Ok(payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_expression_hash_round_trips() {
        // From the Tezos documentation: hash of PACK (Pair 1 "foo") : pair nat string.
        let hex = "f65884dadd3a5ff1a6f8057fa442a2e8ecdbe1217f7759512509b36c016c5bce";
        let payload: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let text = encode_check(SCRIPT_EXPR_HASH, &payload);
        assert_eq!(
            text,
            "exprvPNUJQXpct6VrbJQCazrDgh7pN8d8SH8P1UFHMrRPmQnxC16nr"
        );
        assert_eq!(decode_check(SCRIPT_EXPR_HASH, &text), Ok(payload));
        assert_eq!(
            decode_check(CONTEXT_HASH, &text),
            Err(Base58Error::WrongPrefix)
        );
    }
}
