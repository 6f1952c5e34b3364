//! Base58check with Tezos' versioned prefixes: `base58(prefix ‖ payload ‖ checksum)` where the
//! checksum is the first 4 bytes of SHA-256(SHA-256(prefix ‖ payload)).
//!
//! The prefixes are Octez's (`src/lib_crypto/base58.ml`); each is chosen so that every payload of
//! its size encodes to text starting with the same characters (`tz1`, `edpk`, `BLsig`, ...).
//!
//! Encoding is this module's own ([`encode`]): the number is converted in limbs of five base-58
//! digits, 32 input bits at a time, a few dozen word operations for a hash where a
//! byte-by-digit conversion takes a thousand (a node writes several hashes per block). Decoding
//! ([`decode`]) is the same in reverse: five digits at a time into 32-bit limbs (every address
//! in a contract call's argument is decoded).

use std::fmt;

use crate::hash::sha256;

/// A Tezos base58check prefix: the version bytes and the payload size they introduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// The version bytes written before the payload.
    pub bytes: &'static [u8],
    /// The exact payload size for this prefix.
    pub payload_size: usize,
}

/// The longest base58check text any prefix below produces: `mdsig` ML-DSA-44 signatures, 3,316
/// characters (Octez `src/lib_crypto/base58.ml`, `Prefix.mldsa44_signature`, "mdsig(3316)").
/// Parsers reject longer input before decoding, so decoding cost stays bounded.
pub const MAX_ENCODED_LENGTH: usize = 3316;

macro_rules! prefixes {
    ($($(#[$doc:meta])* $name:ident = [$($byte:expr),+], $size:expr;)+) => {
        $(
            $(#[$doc])*
            pub const $name: Prefix = Prefix { bytes: &[$($byte),+], payload_size: $size };
        )+
    };
}

// Prefix bytes from Octez `src/lib_crypto/base58.ml` (`module Prefix`), `contract_hash.ml` (KT1) and
// `smart_rollup_address.ml` (sr1); the comment after each is the text prefix and encoded length.
prefixes! {
    /// `expr...` (54): script-expression hashes (blake2b-256 of PACKed data).
    SCRIPT_EXPR_HASH = [13, 44, 64, 27], 32;
    /// `Co...` (52): context hashes.
    CONTEXT_HASH = [79, 199], 32;
    /// `B...` (51): block hashes.
    BLOCK_HASH = [1, 52], 32;
    /// `o...` (51): operation hashes.
    OPERATION_HASH = [5, 116], 32;
    /// `P...` (51): protocol hashes.
    PROTOCOL_HASH = [2, 170], 32;
    /// `Net...` (15): chain identifiers.
    CHAIN_ID = [87, 82, 0], 4;
    /// `tz1...` (36): ed25519 public key hashes.
    ED25519_PUBLIC_KEY_HASH = [6, 161, 159], 20;
    /// `tz2...` (36): secp256k1 public key hashes.
    SECP256K1_PUBLIC_KEY_HASH = [6, 161, 161], 20;
    /// `tz3...` (36): p256 public key hashes.
    P256_PUBLIC_KEY_HASH = [6, 161, 164], 20;
    /// `tz4...` (36): BLS12-381 public key hashes.
    BLS12_381_PUBLIC_KEY_HASH = [6, 161, 166], 20;
    /// `KT1...` (36): originated contract hashes.
    CONTRACT_HASH = [2, 90, 121], 20;
    /// `sr1...` (36): smart rollup addresses.
    SMART_ROLLUP_ADDRESS = [6, 124, 117], 20;
    /// `edpk...` (54): ed25519 public keys.
    ED25519_PUBLIC_KEY = [13, 15, 37, 217], 32;
    /// `sppk...` (55): secp256k1 public keys (SEC1 compressed).
    SECP256K1_PUBLIC_KEY = [3, 254, 226, 86], 33;
    /// `p2pk...` (55): p256 public keys (SEC1 compressed).
    P256_PUBLIC_KEY = [3, 178, 139, 127], 33;
    /// `BLpk...` (76): BLS12-381 public keys (compressed G1 point).
    BLS12_381_PUBLIC_KEY = [6, 149, 135, 204], 48;
    /// `edsk...` (54): ed25519 secret keys as their 32-byte seed.
    ED25519_SEED = [13, 15, 58, 7], 32;
    /// `edsk...` (98): ed25519 secret keys as seed and public key (64 bytes).
    ED25519_SECRET_KEY = [43, 246, 78, 7], 64;
    /// `edsig...` (99): ed25519 signatures.
    ED25519_SIGNATURE = [9, 245, 205, 134, 18], 64;
    /// `spsig1...` (99): secp256k1 signatures (`r ‖ s`, big-endian).
    SECP256K1_SIGNATURE = [13, 115, 101, 19, 63], 64;
    /// `p2sig...` (98): p256 signatures (`r ‖ s`, big-endian).
    P256_SIGNATURE = [54, 240, 44, 52], 64;
    /// `sig...` (96): signatures of unspecified scheme (64 bytes).
    GENERIC_SIGNATURE = [4, 130, 43], 64;
    /// `BLsig...` (142): BLS12-381 signatures (compressed G2 point).
    BLS12_381_SIGNATURE = [40, 171, 64, 207], 96;
    /// `tz5...` (36): ML-DSA-44 public key hashes.
    ML_DSA_44_PUBLIC_KEY_HASH = [6, 161, 169], 20;
    /// `mdpk...` (1802): ML-DSA-44 public keys.
    ML_DSA_44_PUBLIC_KEY = [13, 7, 237, 67], 1312;
    /// `mdsig...` (3316): ML-DSA-44 signatures.
    ML_DSA_44_SIGNATURE = [1, 156, 45, 210, 3], 2420;
}

/// Decodes base58check `text` into `prefix ‖ payload` (checksum verified and removed), refusing
/// text longer than [`MAX_ENCODED_LENGTH`].
pub fn decode_check_raw(text: &str) -> Result<Vec<u8>, Base58Error> {
    decode_check_bounded(text, MAX_ENCODED_LENGTH)
}

/// An upper bound on the base58 length of `prefix ‖ payload ‖ checksum` for `prefix`: each byte
/// takes at most log(256)/log(58) < 1.3658 characters, plus one for rounding.
pub const fn max_encoded_length(prefix: Prefix) -> usize {
    (prefix.bytes.len() + prefix.payload_size + 4) * 13658 / 10000 + 1
}

fn decode_check_bounded(text: &str, max_length: usize) -> Result<Vec<u8>, Base58Error> {
    if text.len() > max_length {
        return Err(Base58Error::TooLong { length: text.len() });
    }
    let mut bytes = decode(text)?;
    let Some(body_length) = bytes.len().checked_sub(CHECKSUM_BYTES) else {
        return Err(Base58Error::InvalidChecksum);
    };
    let digest = sha256(&sha256(&bytes[..body_length]));
    if digest[..CHECKSUM_BYTES] != bytes[body_length..] {
        return Err(Base58Error::InvalidChecksum);
    }
    bytes.truncate(body_length);
    Ok(bytes)
}

/// Splits decoded `prefix ‖ payload` bytes by the first of `prefixes` they start with, checking
/// the payload size. Returns the index of the matching prefix and the payload.
pub fn split_prefix<'a>(
    decoded: &'a [u8],
    prefixes: &[Prefix],
) -> Result<(usize, &'a [u8]), Base58Error> {
    for (index, prefix) in prefixes.iter().enumerate() {
        if let Some(payload) = decoded.strip_prefix(prefix.bytes) {
            if payload.len() != prefix.payload_size {
                return Err(Base58Error::WrongSize {
                    expected: prefix.payload_size,
                    found: payload.len(),
                });
            }
            return Ok((index, payload));
        }
    }
    Err(Base58Error::WrongPrefix)
}

/// Why a base58check string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base58Error {
    /// A character outside the base58 alphabet.
    InvalidCharacter,
    /// The checksum did not match.
    InvalidChecksum,
    /// The decoded bytes did not start with the expected prefix.
    WrongPrefix,
    /// The text is longer than any text of the expected forms could be (at most
    /// [`MAX_ENCODED_LENGTH`] for the typed values of this crate).
    TooLong {
        /// The text length in bytes.
        length: usize,
    },
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
            Base58Error::TooLong { length } => {
                write!(f, "base58check text of {length} bytes is too long")
            }
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
    let mut bytes = Vec::with_capacity(prefix.bytes.len() + payload.len() + CHECKSUM_BYTES);
    bytes.extend_from_slice(prefix.bytes);
    bytes.extend_from_slice(payload);
    let digest = sha256(&sha256(&bytes));
    bytes.extend_from_slice(&digest[..CHECKSUM_BYTES]);
    encode(&bytes)
}

/// The bytes of a base58check checksum.
const CHECKSUM_BYTES: usize = 4;

/// The base58 alphabet (Bitcoin's, which Tezos uses).
const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Base-58 digits per limb: 58^5 < 2^30, so a limb shifted by 32 bits plus a carry fits in 64.
const DIGITS_PER_LIMB: usize = 5;

/// 58^5, the base of the limbs.
const LIMB_BASE: u64 = 58u64.pow(DIGITS_PER_LIMB as u32);

/// `bytes` in base 58 (no checksum): a `1` for each leading zero byte, then the digits of the
/// rest read as a big-endian number.
pub fn encode(bytes: &[u8]) -> String {
    let zeros = bytes.iter().take_while(|&&byte| byte == 0).count();
    let number = &bytes[zeros..];
    // Little-endian limbs, each below LIMB_BASE; each byte adds at most log(256)/log(58^5)
    // < 0.28 limb.
    let mut limbs: Vec<u64> = Vec::with_capacity(number.len() * 28 / 100 + 2);
    let head_bytes = number.len() % 4;
    let (head, words) = number.split_at(head_bytes);
    let chunks = std::iter::once((head, head_bytes * 8))
        .filter(|(head, _)| !head.is_empty())
        .chain(words.chunks_exact(4).map(|word| (word, 32)));
    for (chunk, bits) in chunks {
        let mut carry = chunk
            .iter()
            .fold(0u64, |value, &byte| (value << 8) | u64::from(byte));
        for limb in limbs.iter_mut() {
            let value = (*limb << bits) + carry;
            *limb = value % LIMB_BASE;
            carry = value / LIMB_BASE;
        }
        while carry > 0 {
            limbs.push(carry % LIMB_BASE);
            carry /= LIMB_BASE;
        }
    }
    let mut digits = Vec::with_capacity(zeros + limbs.len() * DIGITS_PER_LIMB);
    digits.resize(zeros, ALPHABET[0]);
    let mut first = true;
    for &limb in limbs.iter().rev() {
        let mut limb_digits = [0u8; DIGITS_PER_LIMB];
        let mut value = limb;
        for digit in limb_digits.iter_mut().rev() {
            *digit = ALPHABET[(value % 58) as usize];
            value /= 58;
        }
        // The most significant limb is written without its leading zero digits.
        let start = if first {
            limb_digits
                .iter()
                .position(|&digit| digit != ALPHABET[0])
                .unwrap_or(DIGITS_PER_LIMB)
        } else {
            0
        };
        first = false;
        digits.extend_from_slice(&limb_digits[start..]);
    }
    String::from_utf8(digits).expect("the alphabet is ASCII")
}

/// The value of each ASCII character as a base-58 digit, [`NOT_A_DIGIT`] for the others.
const DIGIT_VALUES: [u8; 128] = {
    let mut values = [NOT_A_DIGIT; 128];
    let mut digit = 0;
    while digit < ALPHABET.len() {
        values[ALPHABET[digit] as usize] = digit as u8;
        digit += 1;
    }
    values
};

/// Marks a character outside the alphabet in [`DIGIT_VALUES`].
const NOT_A_DIGIT: u8 = 0xff;

/// The bytes `text` encodes in base 58 (no checksum): a zero byte for each leading `1`, then the
/// number the other digits write, big-endian. The caller bounds the length (quadratic cost).
pub fn decode(text: &str) -> Result<Vec<u8>, Base58Error> {
    let text = text.as_bytes();
    let zeros = text
        .iter()
        .take_while(|&&digit| digit == ALPHABET[0])
        .count();
    let digits = &text[zeros..];
    // Little-endian 32-bit limbs; each digit adds at most log(58)/log(2^32) < 0.19 limb.
    let mut limbs: Vec<u32> = Vec::with_capacity(digits.len() * 19 / 100 + 2);
    let head_digits = digits.len() % DIGITS_PER_LIMB;
    let (head, groups) = digits.split_at(head_digits);
    let chunks = std::iter::once(head)
        .filter(|head| !head.is_empty())
        .chain(groups.chunks_exact(DIGITS_PER_LIMB));
    for chunk in chunks {
        let mut carry = 0u64;
        let mut scale = 1u64;
        for &character in chunk {
            let value = DIGIT_VALUES
                .get(usize::from(character))
                .copied()
                .filter(|&value| value != NOT_A_DIGIT)
                .ok_or(Base58Error::InvalidCharacter)?;
            carry = carry * 58 + u64::from(value);
            scale *= 58;
        }
        // limb < 2^32 and scale <= 58^5 < 2^30, so limb * scale + carry < 2^63.
        for limb in limbs.iter_mut() {
            let value = u64::from(*limb) * scale + carry;
            *limb = value as u32;
            carry = value >> 32;
        }
        while carry > 0 {
            limbs.push(carry as u32);
            carry >>= 32;
        }
    }
    let mut bytes = Vec::with_capacity(zeros + 4 * limbs.len());
    bytes.resize(zeros, 0);
    let mut number = limbs.iter().rev().flat_map(|limb| limb.to_be_bytes());
    // The most significant limb's leading zero bytes are not part of the number.
    let first = number.by_ref().find(|&byte| byte != 0);
    bytes.extend(first);
    bytes.extend(number);
    Ok(bytes)
}

/// Decodes a base58check string carrying `prefix`, returning the payload.
pub fn decode_check(prefix: Prefix, text: &str) -> Result<Vec<u8>, Base58Error> {
    // Bounded for cost only: text of another prefix gets its own error, not `TooLong`.
    let bound = max_encoded_length(prefix).max(MAX_ENCODED_LENGTH);
    let bytes = decode_check_bounded(text, bound)?;
    let (_, payload) = split_prefix(&bytes, &[prefix])?;
    Ok(payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_length_bounds_hold_for_every_prefix() {
        let prefixes = [
            SCRIPT_EXPR_HASH,
            CONTEXT_HASH,
            BLOCK_HASH,
            OPERATION_HASH,
            PROTOCOL_HASH,
            CHAIN_ID,
            ED25519_PUBLIC_KEY_HASH,
            SECP256K1_PUBLIC_KEY_HASH,
            P256_PUBLIC_KEY_HASH,
            BLS12_381_PUBLIC_KEY_HASH,
            CONTRACT_HASH,
            SMART_ROLLUP_ADDRESS,
            ED25519_PUBLIC_KEY,
            ED25519_SEED,
            ED25519_SECRET_KEY,
            SECP256K1_PUBLIC_KEY,
            P256_PUBLIC_KEY,
            BLS12_381_PUBLIC_KEY,
            ED25519_SIGNATURE,
            SECP256K1_SIGNATURE,
            P256_SIGNATURE,
            GENERIC_SIGNATURE,
            BLS12_381_SIGNATURE,
            ML_DSA_44_PUBLIC_KEY_HASH,
            ML_DSA_44_PUBLIC_KEY,
            ML_DSA_44_SIGNATURE,
        ];
        let mut longest = 0;
        for prefix in prefixes {
            // The all-0xff payload gives the longest text; the prefix fixes the first characters.
            let low = encode_check(prefix, &vec![0; prefix.payload_size]);
            let high = encode_check(prefix, &vec![0xff; prefix.payload_size]);
            assert_eq!(low.len(), high.len(), "{prefix:?}");
            assert!(high.len() <= max_encoded_length(prefix), "{prefix:?}");
            assert_eq!(
                decode_check(prefix, &high),
                Ok(vec![0xff; prefix.payload_size])
            );
            longest = longest.max(high.len());
        }
        assert_eq!(longest, MAX_ENCODED_LENGTH);
    }

    /// A deterministic stream of bytes (xorshift), for comparing with `bs58` on many inputs.
    fn pseudo_random_bytes(seed: u64, length: usize) -> Vec<u8> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..length)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn encode_matches_bs58_on_random_inputs_with_leading_zeros() {
        for seed in 0..2_000u64 {
            let length = (seed % 131) as usize;
            let mut bytes = pseudo_random_bytes(seed, length);
            // Leading zeros (a `1` each), and all-zero or all-0xff inputs, now and then.
            let zeros = ((seed / 131) % 4) as usize;
            bytes.iter_mut().take(zeros).for_each(|byte| *byte = 0);
            if seed % 97 == 0 {
                bytes.iter_mut().for_each(|byte| *byte = 0xff);
            }
            if seed % 89 == 0 {
                bytes.iter_mut().for_each(|byte| *byte = 0);
            }
            assert_eq!(
                encode(&bytes),
                bs58::encode(&bytes).into_string(),
                "{bytes:?}"
            );
        }
        let long = pseudo_random_bytes(7, ML_DSA_44_SIGNATURE.payload_size + 9);
        assert_eq!(encode(&long), bs58::encode(&long).into_string());
    }

    #[test]
    fn decode_matches_bs58_on_random_inputs_and_rejects_what_it_rejects() {
        for seed in 0..2_000u64 {
            let length = (seed % 131) as usize;
            let mut bytes = pseudo_random_bytes(seed, length);
            let zeros = ((seed / 131) % 4) as usize;
            bytes.iter_mut().take(zeros).for_each(|byte| *byte = 0);
            let text = bs58::encode(&bytes).into_string();
            assert_eq!(decode(&text), Ok(bytes.clone()), "{text}");
            let checked = bs58::encode(&bytes).with_check().into_string();
            assert_eq!(decode_check_raw(&checked), Ok(bytes), "{checked}");
            // One digit changed: the checksum (or, rarely, nothing visible) tells.
            if let Some(last) = checked.len().checked_sub(1) {
                let mut altered = checked.clone().into_bytes();
                altered[last] = if altered[last] == b'2' { b'3' } else { b'2' };
                let altered = String::from_utf8(altered).unwrap();
                let expected = bs58::decode(&altered)
                    .with_check(None)
                    .into_vec()
                    .map_err(|_| Base58Error::InvalidChecksum);
                assert_eq!(decode_check_raw(&altered), expected, "{altered}");
            }
        }
        for text in ["0", "tz1O", "l", "I", "tz1\u{e9}"] {
            assert_eq!(decode(text), Err(Base58Error::InvalidCharacter), "{text}");
        }
        assert_eq!(decode(""), Ok(Vec::new()));
        assert_eq!(decode_check_raw("1"), Err(Base58Error::InvalidChecksum));
    }

    #[test]
    fn encode_check_writes_known_tezos_addresses() {
        // bootstrap1's key hash and public key, and the protocol's hash
        // (`src/proto_025_PsUshuai/lib_protocol/TEZOS_PROTOCOL`), read back and written again.
        for (prefix, text) in [
            (
                ED25519_PUBLIC_KEY_HASH,
                "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx",
            ),
            (
                ED25519_PUBLIC_KEY,
                "edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav",
            ),
            (
                PROTOCOL_HASH,
                "PsUshuai9QapM5TGj1JpuVGkdxz5GykdnEvS6Rh8SUVrARvZLCY",
            ),
            (CHAIN_ID, "NetXdQprcVkpaWU"),
            (CONTRACT_HASH, "KT1TxqZ8QtKvLu3V3JH7Gx58n7Co8pgtpQU5"),
        ] {
            let payload = decode_check(prefix, text).expect(text);
            assert_eq!(encode_check(prefix, &payload), text);
        }
    }

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
