//! Tezos public key hashes (`tz1`..`tz5`), public keys (`edpk`, `sppk`, `p2pk`, `BLpk`, `mdpk`) and
//! signatures (`edsig`, `spsig1`, `p2sig`, `BLsig`, `mdsig`, generic `sig`): text and binary forms as
//! Michelson's `key_hash`, `key` and `signature` use them (michelson.rst, "Domain specific data"),
//! and `CHECK_SIGNATURE`.
//!
//! Binary forms follow Octez's `Signature` encodings (`src/lib_crypto/signature_v1.ml` and later):
//! - key hash: scheme tag (0 ed25519, 1 secp256k1, 2 p256, 3 BLS, 4 ML-DSA-44) then the 20-byte
//!   hash;
//! - key: scheme tag then the key (32 bytes; 33 SEC1-compressed; 33 SEC1-compressed; 48
//!   compressed G1; 1,312 ML-DSA-44);
//! - signature: no tag; 64 bytes read as a signature of unknown scheme, or 96 bytes read as a BLS
//!   signature (compressed G2 point), or 2,420 bytes as an ML-DSA-44 one.
//!
//! Values are valid by construction: secp256k1, p256 and BLS keys are points of their group and
//! BLS signatures points of G2 (as Octez checks when reading them); secp256k1 signature components
//! are below the group order (libsecp256k1's `parse_compact`). Ed25519 keys and the other
//! signatures are any bytes of their size, as in Octez.
//!
//! Verification (Octez `Signature.check`): ed25519, secp256k1 and p256 sign the blake2b-256
//! digest of the message; BLS signs the message itself in the min-pk "message augmentation"
//! scheme (`BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_AUG_`, the key prefixed to the message). A
//! signature read from its binary form (unknown scheme) verifies under a key of any scheme whose
//! signature size is 64 bytes; a key never verifies a signature tagged with another scheme.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use bls12_381::{G1Affine, G2Affine};

use crate::base58::{self, Prefix};
use crate::error::CryptoError;
use crate::hash::{blake2b_160, blake2b_256};

/// The domain separation tag of Tezos BLS signatures: the IETF BLS signature draft's min-pk
/// message-augmentation ciphersuite (Octez `bls.ml` uses `Bls12_381_signature.MinPk.Aug`).
pub const BLS_SIGNATURE_DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_AUG_";

/// The domain separation tag of BLS signatures in the proof-of-possession scheme (the IETF BLS
/// signature draft's min-pk `POP` ciphersuite), which Octez's `Signature.V3.check` uses for tz4
/// operation signatures (`src/lib_crypto/bls.ml`, `check` = `MinPk.Pop.verify`).
pub const BLS_POP_SCHEME_SIGNATURE_DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";

/// The domain separation tag of BLS proofs of possession (`MinPk.Pop.pop_prove`: the key's
/// signature of its own compressed bytes).
pub const BLS_PROOF_OF_POSSESSION_DST: &[u8] = b"BLS_POP_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";

/// A signature scheme, in the order of its binary tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SignatureScheme {
    /// Ed25519 (tag 0; `tz1`, `edpk`, `edsig`).
    Ed25519,
    /// ECDSA over secp256k1 (tag 1; `tz2`, `sppk`, `spsig1`).
    Secp256k1,
    /// ECDSA over NIST P-256 (tag 2; `tz3`, `p2pk`, `p2sig`).
    P256,
    /// BLS over BLS12-381, min-pk (tag 3; `tz4`, `BLpk`, `BLsig`).
    Bls,
    /// ML-DSA-44, FIPS 204 (tag 4; `tz5`, `mdpk`, `mdsig`), new in protocol 025.
    MlDsa44,
}

impl SignatureScheme {
    /// Every scheme, in tag order.
    pub const ALL: [SignatureScheme; 5] = [
        SignatureScheme::Ed25519,
        SignatureScheme::Secp256k1,
        SignatureScheme::P256,
        SignatureScheme::Bls,
        SignatureScheme::MlDsa44,
    ];

    /// The binary tag of keys and key hashes of this scheme.
    pub const fn tag(self) -> u8 {
        self as u8
    }

    /// The scheme of a binary tag.
    pub fn from_tag(tag: u8) -> Option<Self> {
        Self::ALL.get(usize::from(tag)).copied()
    }

    /// The size of a public key of this scheme in bytes (without the tag).
    pub const fn public_key_size_bytes(self) -> usize {
        match self {
            SignatureScheme::Ed25519 => 32,
            SignatureScheme::Secp256k1 | SignatureScheme::P256 => 33,
            SignatureScheme::Bls => 48,
            SignatureScheme::MlDsa44 => ML_DSA_44_PUBLIC_KEY_SIZE_BYTES,
        }
    }

    /// The size of a signature of this scheme in bytes.
    pub const fn signature_size_bytes(self) -> usize {
        match self {
            SignatureScheme::Bls => 96,
            SignatureScheme::MlDsa44 => ML_DSA_44_SIGNATURE_SIZE_BYTES,
            _ => 64,
        }
    }

    const fn public_key_hash_prefix(self) -> Prefix {
        match self {
            SignatureScheme::Ed25519 => base58::ED25519_PUBLIC_KEY_HASH,
            SignatureScheme::Secp256k1 => base58::SECP256K1_PUBLIC_KEY_HASH,
            SignatureScheme::P256 => base58::P256_PUBLIC_KEY_HASH,
            SignatureScheme::Bls => base58::BLS12_381_PUBLIC_KEY_HASH,
            SignatureScheme::MlDsa44 => base58::ML_DSA_44_PUBLIC_KEY_HASH,
        }
    }

    const fn public_key_prefix(self) -> Prefix {
        match self {
            SignatureScheme::Ed25519 => base58::ED25519_PUBLIC_KEY,
            SignatureScheme::Secp256k1 => base58::SECP256K1_PUBLIC_KEY,
            SignatureScheme::P256 => base58::P256_PUBLIC_KEY,
            SignatureScheme::Bls => base58::BLS12_381_PUBLIC_KEY,
            SignatureScheme::MlDsa44 => base58::ML_DSA_44_PUBLIC_KEY,
        }
    }
}

/// The size of an ML-DSA-44 public key (FIPS 204, table 2: 1,312 bytes).
pub const ML_DSA_44_PUBLIC_KEY_SIZE_BYTES: usize = 1312;

/// The size of an ML-DSA-44 signature (FIPS 204, table 2: 2,420 bytes).
pub const ML_DSA_44_SIGNATURE_SIZE_BYTES: usize = 2420;

const PUBLIC_KEY_HASH_PREFIXES: [Prefix; 5] = [
    base58::ED25519_PUBLIC_KEY_HASH,
    base58::SECP256K1_PUBLIC_KEY_HASH,
    base58::P256_PUBLIC_KEY_HASH,
    base58::BLS12_381_PUBLIC_KEY_HASH,
    base58::ML_DSA_44_PUBLIC_KEY_HASH,
];

const PUBLIC_KEY_PREFIXES: [Prefix; 5] = [
    base58::ED25519_PUBLIC_KEY,
    base58::SECP256K1_PUBLIC_KEY,
    base58::P256_PUBLIC_KEY,
    base58::BLS12_381_PUBLIC_KEY,
    base58::ML_DSA_44_PUBLIC_KEY,
];

fn decode_with(
    what: &'static str,
    text: &str,
    prefixes: &[Prefix],
) -> Result<(usize, Vec<u8>), CryptoError> {
    let decoded =
        base58::decode_check_raw(text).map_err(|error| CryptoError::base58(what, error))?;
    let (index, payload) = base58::split_prefix(&decoded, prefixes)
        .map_err(|error| CryptoError::base58(what, error))?;
    Ok((index, payload.to_vec()))
}

// ---------------------------------------------------------------------------------------------
// Public key hashes

/// A public key hash (`tz1`, `tz2`, `tz3`, `tz4`), Michelson's `key_hash`: the blake2b-160 of a
/// public key and the key's scheme. Ordered as Michelson compares key hashes (scheme tag, then
/// hash bytes), which is the order of the binary forms.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PublicKeyHash {
    scheme: SignatureScheme,
    hash: [u8; 20],
}

impl PublicKeyHash {
    /// The size of the hash in bytes.
    pub const HASH_SIZE_BYTES: usize = 20;
    /// The size of the binary form in bytes: tag and hash.
    pub const SIZE_BYTES: usize = 21;
    const WHAT: &'static str = "public key hash";

    /// A key hash of `scheme` with hash bytes `hash`.
    pub const fn new(scheme: SignatureScheme, hash: [u8; 20]) -> Self {
        Self { scheme, hash }
    }

    /// The scheme of the hashed key.
    pub fn scheme(&self) -> SignatureScheme {
        self.scheme
    }

    /// The 20 hash bytes (without the tag).
    pub fn hash_bytes(&self) -> &[u8; 20] {
        &self.hash
    }

    /// Reads the binary form: tag then 20 bytes, nothing more.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        let Some((&tag, hash)) = bytes.split_first() else {
            return Err(CryptoError::length(Self::WHAT, Self::SIZE_BYTES, 0));
        };
        let scheme = SignatureScheme::from_tag(tag).ok_or(CryptoError::UnknownTag {
            what: Self::WHAT,
            tag,
        })?;
        let hash = <[u8; 20]>::try_from(hash)
            .map_err(|_| CryptoError::length(Self::WHAT, Self::SIZE_BYTES, bytes.len()))?;
        Ok(Self { scheme, hash })
    }

    /// The binary form: tag then hash.
    pub fn to_bytes(&self) -> [u8; 21] {
        let mut bytes = [0u8; 21];
        bytes[0] = self.scheme.tag();
        bytes[1..].copy_from_slice(&self.hash);
        bytes
    }

    /// Reads the text form (`tz1...`, `tz2...`, `tz3...`, `tz4...`).
    pub fn from_b58check(text: &str) -> Result<Self, CryptoError> {
        let (index, payload) = decode_with(Self::WHAT, text, &PUBLIC_KEY_HASH_PREFIXES)?;
        let mut hash = [0u8; 20];
        hash.copy_from_slice(&payload);
        Ok(Self {
            scheme: SignatureScheme::ALL[index],
            hash,
        })
    }

    /// The text form.
    pub fn to_b58check(&self) -> String {
        base58::encode_check(self.scheme.public_key_hash_prefix(), &self.hash)
    }
}

impl fmt::Display for PublicKeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_b58check())
    }
}

impl fmt::Debug for PublicKeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKeyHash({})", self.to_b58check())
    }
}

impl FromStr for PublicKeyHash {
    type Err = CryptoError;

    fn from_str(text: &str) -> Result<Self, CryptoError> {
        Self::from_b58check(text)
    }
}

// ---------------------------------------------------------------------------------------------
// Public keys

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum KeyBytes {
    Ed25519([u8; 32]),
    Secp256k1([u8; 33]),
    P256([u8; 33]),
    Bls([u8; 48]),
    MlDsa44(Box<[u8; ML_DSA_44_PUBLIC_KEY_SIZE_BYTES]>),
}

/// A public key, Michelson's `key`. Ordered as Michelson compares keys: by scheme tag, then by
/// key bytes, except that p256 keys compare by their uncompressed coordinates `x ‖ y` (Octez
/// keeps p256 keys uncompressed and compares those bytes).
#[derive(Clone)]
pub struct PublicKey {
    bytes: KeyBytes,
    /// The key decoded once when it is read, so verification does not decode it again.
    parsed: ParsedKey,
}

#[derive(Clone)]
enum ParsedKey {
    /// `None` for 32 bytes that are not a canonical point encoding: such a key verifies nothing.
    Ed25519(Option<ed25519_dalek::VerifyingKey>),
    Secp256k1(secp256k1::PublicKey),
    P256(p256::ecdsa::VerifyingKey),
    /// blst decompresses at each verification; the pairing dominates its cost.
    Bls,
    /// Any 1,312 bytes decode to a key (FIPS 204 `pkDecode` has no invalid input).
    MlDsa44(Box<ml_dsa::VerifyingKey<ml_dsa::MlDsa44>>),
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for PublicKey {}

impl Hash for PublicKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bytes.hash(state);
    }
}

impl PartialOrd for PublicKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PublicKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.bytes, &other.bytes) {
            (KeyBytes::P256(a), KeyBytes::P256(b)) => {
                // x is the compressed form without its parity byte; only equal x needs y.
                a[1..].cmp(&b[1..]).then_with(|| p256_y(a).cmp(&p256_y(b)))
            }
            (a, b) => a.cmp(b),
        }
    }
}

/// The y coordinate of a p256 key, big-endian (the key was checked when it was read).
fn p256_y(compressed: &[u8; 33]) -> [u8; 32] {
    let mut y = [0u8; 32];
    if let Ok(key) = p256::PublicKey::from_sec1_bytes(compressed) {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        if let Some(coordinate) = key.to_encoded_point(false).y() {
            y.copy_from_slice(coordinate);
        }
    }
    y
}

impl PublicKey {
    const WHAT: &'static str = "public key";

    /// Reads a key of `scheme` from its bytes (without tag), checking the point as Octez does.
    pub fn try_new(scheme: SignatureScheme, key: &[u8]) -> Result<Self, CryptoError> {
        let expected = scheme.public_key_size_bytes();
        if key.len() != expected {
            return Err(CryptoError::length(Self::WHAT, expected, key.len()));
        }
        let invalid = CryptoError::InvalidPoint { what: Self::WHAT };
        let (bytes, parsed) = match scheme {
            SignatureScheme::Ed25519 => {
                let bytes: [u8; 32] = array(key);
                // HACL* (Octez's ed25519) refuses non-canonical encodings, which the decoder
                // here would accept; Octez still reads such keys, they just verify nothing.
                let parsed = ed25519_key_encoding_is_canonical(&bytes)
                    .then(|| ed25519_dalek::VerifyingKey::from_bytes(&bytes).ok())
                    .flatten();
                (KeyBytes::Ed25519(bytes), ParsedKey::Ed25519(parsed))
            }
            SignatureScheme::Secp256k1 => {
                let parsed = secp256k1::PublicKey::from_slice(key).map_err(|_| invalid)?;
                (
                    KeyBytes::Secp256k1(array(key)),
                    ParsedKey::Secp256k1(parsed),
                )
            }
            SignatureScheme::P256 => {
                let parsed =
                    p256::ecdsa::VerifyingKey::from_sec1_bytes(key).map_err(|_| invalid)?;
                (KeyBytes::P256(array(key)), ParsedKey::P256(parsed))
            }
            SignatureScheme::Bls => {
                let bytes: [u8; 48] = array(key);
                if G1Affine::from_compressed(&bytes).is_none().into() {
                    return Err(invalid);
                }
                (KeyBytes::Bls(bytes), ParsedKey::Bls)
            }
            SignatureScheme::MlDsa44 => {
                let bytes: Box<[u8; ML_DSA_44_PUBLIC_KEY_SIZE_BYTES]> = Box::new(array(key));
                let encoded = ml_dsa::EncodedVerifyingKey::<ml_dsa::MlDsa44>::try_from(key)
                    .map_err(|_| CryptoError::length(Self::WHAT, expected, key.len()))?;
                let parsed = ml_dsa::VerifyingKey::<ml_dsa::MlDsa44>::decode(&encoded);
                (
                    KeyBytes::MlDsa44(bytes),
                    ParsedKey::MlDsa44(Box::new(parsed)),
                )
            }
        };
        Ok(Self { bytes, parsed })
    }

    /// The scheme of the key.
    pub fn scheme(&self) -> SignatureScheme {
        match self.bytes {
            KeyBytes::Ed25519(_) => SignatureScheme::Ed25519,
            KeyBytes::Secp256k1(_) => SignatureScheme::Secp256k1,
            KeyBytes::P256(_) => SignatureScheme::P256,
            KeyBytes::Bls(_) => SignatureScheme::Bls,
            KeyBytes::MlDsa44(_) => SignatureScheme::MlDsa44,
        }
    }

    /// The key bytes (without tag).
    pub fn key_bytes(&self) -> &[u8] {
        match &self.bytes {
            KeyBytes::Ed25519(bytes) => bytes,
            KeyBytes::Secp256k1(bytes) | KeyBytes::P256(bytes) => bytes,
            KeyBytes::Bls(bytes) => bytes,
            KeyBytes::MlDsa44(bytes) => &bytes[..],
        }
    }

    /// The size of the binary form in bytes (tag and key).
    pub fn size_bytes(&self) -> usize {
        1 + self.key_bytes().len()
    }

    /// Reads the binary form: tag then key, nothing more.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        let Some((&tag, key)) = bytes.split_first() else {
            return Err(CryptoError::length(Self::WHAT, 1, 0));
        };
        let scheme = SignatureScheme::from_tag(tag).ok_or(CryptoError::UnknownTag {
            what: Self::WHAT,
            tag,
        })?;
        if key.len() != scheme.public_key_size_bytes() {
            return Err(CryptoError::length(
                Self::WHAT,
                1 + scheme.public_key_size_bytes(),
                bytes.len(),
            ));
        }
        Self::try_new(scheme, key)
    }

    /// Appends the binary form (tag then key) to `out`.
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        out.push(self.scheme().tag());
        out.extend_from_slice(self.key_bytes());
    }

    /// The binary form: tag then key.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_bytes());
        self.write_bytes(&mut out);
        out
    }

    /// Reads the text form (`edpk...`, `sppk...`, `p2pk...`, `BLpk...`).
    pub fn from_b58check(text: &str) -> Result<Self, CryptoError> {
        let (index, payload) = decode_with(Self::WHAT, text, &PUBLIC_KEY_PREFIXES)?;
        Self::try_new(SignatureScheme::ALL[index], &payload)
    }

    /// The text form.
    pub fn to_b58check(&self) -> String {
        base58::encode_check(self.scheme().public_key_prefix(), self.key_bytes())
    }

    /// The key's hash (`HASH_KEY`): blake2b-160 of the key bytes, with the key's scheme.
    pub fn hash(&self) -> PublicKeyHash {
        PublicKeyHash::new(self.scheme(), blake2b_160(self.key_bytes()))
    }

    /// Whether `signature` is this key's signature of `message` (`CHECK_SIGNATURE`); see the
    /// module documentation for what each scheme signs. Never fails: anything malformed is
    /// simply not a valid signature.
    pub fn verify(&self, signature: &Signature, message: &[u8]) -> bool {
        use SignatureBytes as S;
        match (&self.parsed, &self.bytes, &signature.0) {
            (ParsedKey::Ed25519(key), _, S::Ed25519(bytes) | S::Unknown(bytes)) => key
                .as_ref()
                .is_some_and(|key| verify_ed25519(key, bytes, message)),
            (ParsedKey::Secp256k1(key), _, S::Secp256k1(bytes) | S::Unknown(bytes)) => {
                verify_secp256k1(key, bytes, message)
            }
            (ParsedKey::P256(key), _, S::P256(bytes) | S::Unknown(bytes)) => {
                verify_p256(key, bytes, message)
            }
            (ParsedKey::Bls, KeyBytes::Bls(key), S::Bls(bytes)) => verify_bls(key, bytes, message),
            (ParsedKey::MlDsa44(key), _, S::MlDsa44(bytes)) => {
                verify_ml_dsa_44(key, bytes, message)
            }
            _ => false,
        }
    }
}

impl PublicKey {
    /// Whether `signature` is this key's signature of `message` as Octez's protocol checks
    /// operations (`Signature.V3.check`, protocol environment V16): as [`PublicKey::verify`],
    /// except that BLS uses the proof-of-possession scheme (the message alone, not prefixed by
    /// the key) — a tz4 key is revealed with its proof of possession.
    pub fn check(&self, signature: &Signature, message: &[u8]) -> bool {
        match (&self.bytes, &signature.0) {
            (KeyBytes::Bls(key), SignatureBytes::Bls(bytes)) => {
                verify_bls_with(key, bytes, message, BLS_POP_SCHEME_SIGNATURE_DST, &[])
            }
            (KeyBytes::Bls(_), _) => false,
            _ => self.verify(signature, message),
        }
    }

    /// Whether `proof` is this BLS key's proof of possession (`Bls.pop_verify`: its signature of
    /// its own compressed bytes under [`BLS_PROOF_OF_POSSESSION_DST`]). False for other schemes.
    pub fn verify_proof_of_possession(&self, proof: &Signature) -> bool {
        match (&self.bytes, &proof.0) {
            (KeyBytes::Bls(key), SignatureBytes::Bls(bytes)) => {
                verify_bls_with(key, bytes, key, BLS_PROOF_OF_POSSESSION_DST, &[])
            }
            _ => false,
        }
    }
}

/// Whether every `(key, signature, message)` checks as [`PublicKey::check`]. The ed25519 ones
/// are verified together with `ed25519-dalek`'s batch equation over the blake2b-256 digests
/// (faster per signature), the others one by one. The batch equation does not make the single
/// check's rejection of non-canonical keys (such keys verify nothing here either way: they are
/// not parsed) but, like every batch equation, it can accept a signature with small-order
/// components that a single check rejects; when it fails, nothing says which item failed, so
/// callers check singly to name it.
pub fn check_batch(items: &[(&PublicKey, &Signature, &[u8])]) -> bool {
    let mut digests = Vec::new();
    let mut signatures = Vec::new();
    let mut keys = Vec::new();
    for (key, signature, message) in items {
        match (&key.parsed, &signature.0) {
            (
                ParsedKey::Ed25519(parsed),
                SignatureBytes::Ed25519(bytes) | SignatureBytes::Unknown(bytes),
            ) => {
                let Some(parsed) = parsed else {
                    return false;
                };
                digests.push(blake2b_256(message));
                signatures.push(ed25519_dalek::Signature::from_bytes(bytes));
                keys.push(*parsed);
            }
            _ => {
                if !key.check(signature, message) {
                    return false;
                }
            }
        }
    }
    match digests.len() {
        0 => true,
        1 => {
            use ed25519_dalek::Verifier;
            keys[0].verify(&digests[0], &signatures[0]).is_ok()
        }
        _ => {
            let messages: Vec<&[u8]> = digests.iter().map(|digest| digest.as_slice()).collect();
            ed25519_dalek::verify_batch(&messages, &signatures, &keys).is_ok()
        }
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_b58check())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_b58check())
    }
}

impl FromStr for PublicKey {
    type Err = CryptoError;

    fn from_str(text: &str) -> Result<Self, CryptoError> {
        Self::from_b58check(text)
    }
}

/// Copies a slice whose length the caller has checked into an array.
fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(bytes);
    out
}

fn verify_ed25519(key: &ed25519_dalek::VerifyingKey, signature: &[u8; 64], message: &[u8]) -> bool {
    use ed25519_dalek::Verifier;
    let signature = ed25519_dalek::Signature::from_bytes(signature);
    key.verify(&blake2b_256(message), &signature).is_ok()
}

/// Whether an ed25519 point encoding is canonical (RFC 8032, section 5.1.3): y below
/// p = 2^255 - 19, and no sign bit when x is 0 (y = 1 or y = p - 1).
fn ed25519_key_encoding_is_canonical(key: &[u8; 32]) -> bool {
    let sign_bit = key[31] & 0x80 != 0;
    let mut y = *key;
    y[31] &= 0x7f;
    // y >= p exactly when y is p..2^255-1: bytes 1..31 all 0xff (top byte 0x7f) and byte 0 >= 0xed.
    let top_all_ones = y[31] == 0x7f && y[1..31].iter().all(|&byte| byte == 0xff);
    if top_all_ones && y[0] >= 0xed {
        return false;
    }
    let is_one = y[0] == 1 && y[1..].iter().all(|&byte| byte == 0);
    let is_minus_one = top_all_ones && y[0] == 0xec;
    !(sign_bit && (is_one || is_minus_one))
}

fn verify_secp256k1(key: &secp256k1::PublicKey, signature: &[u8; 64], message: &[u8]) -> bool {
    // libsecp256k1, as Octez: compact parsing refuses components not below the order, and
    // verification refuses zero components and high s.
    let Ok(signature) = secp256k1::ecdsa::Signature::from_compact(signature) else {
        return false;
    };
    let digest = secp256k1::Message::from_digest(blake2b_256(message));
    secp256k1::ecdsa::verify(&signature, digest, key).is_ok()
}

fn verify_p256(key: &p256::ecdsa::VerifyingKey, signature: &[u8; 64], message: &[u8]) -> bool {
    use p256::ecdsa::signature::hazmat::PrehashVerifier;
    let Ok(signature) = p256::ecdsa::Signature::from_slice(signature) else {
        return false;
    };
    key.verify_prehash(&blake2b_256(message), &signature)
        .is_ok()
}

fn verify_bls(key: &[u8; 48], signature: &[u8; 96], message: &[u8]) -> bool {
    verify_bls_with(key, signature, message, BLS_SIGNATURE_DST, key)
}

/// BLS min-pk verification of `augmentation ‖ message` under `dst`.
fn verify_bls_with(
    key: &[u8; 48],
    signature: &[u8; 96],
    message: &[u8],
    dst: &[u8],
    augmentation: &[u8],
) -> bool {
    // KeyValidate of the IETF draft: the identity (compressed form: flags 0b11, all zero) is not
    // a key.
    if key[0] & BLS_INFINITY_FLAG != 0 {
        return false;
    }
    // Both were checked to be points of their prime-order subgroups when read, so the subgroup
    // checks are not repeated (`false` arguments below). blst is the library Octez verifies
    // with; its safe API hashes `augmentation ‖ message` to G2 with `dst`.
    let Ok(key_point) = blst::min_pk::PublicKey::uncompress(key) else {
        return false;
    };
    let Ok(signature_point) = blst::min_pk::Signature::uncompress(signature) else {
        return false;
    };
    signature_point.verify(false, message, dst, augmentation, &key_point, false)
        == blst::BLST_ERROR::BLST_SUCCESS
}

/// ML-DSA-44 verification as Octez's `Mldsa44.check`: the signature of the blake2b-256 digest
/// of the message, in FIPS 204's pure mode with the empty context (libcrux `verify`).
fn verify_ml_dsa_44(
    key: &ml_dsa::VerifyingKey<ml_dsa::MlDsa44>,
    signature: &[u8; ML_DSA_44_SIGNATURE_SIZE_BYTES],
    message: &[u8],
) -> bool {
    let Ok(encoded) = ml_dsa::EncodedSignature::<ml_dsa::MlDsa44>::try_from(&signature[..]) else {
        return false;
    };
    let Some(signature) = ml_dsa::Signature::<ml_dsa::MlDsa44>::decode(&encoded) else {
        return false;
    };
    key.verify_with_context(&blake2b_256(message), &[], &signature)
}

/// The infinity flag of the ZCash point serialization (second most significant bit).
const BLS_INFINITY_FLAG: u8 = 0x40;

// ---------------------------------------------------------------------------------------------
// Signatures

#[derive(Clone)]
enum SignatureBytes {
    Ed25519([u8; 64]),
    Secp256k1([u8; 64]),
    P256([u8; 64]),
    Bls([u8; 96]),
    MlDsa44(Box<[u8; ML_DSA_44_SIGNATURE_SIZE_BYTES]>),
    Unknown([u8; 64]),
}

/// A signature, Michelson's `signature`. It remembers the scheme its text form named (for
/// printing and for which keys it can verify under); a signature read from bytes has an unknown
/// scheme unless it is 96 bytes (BLS). Equality, order and hashing are those of the binary form,
/// as in Octez (so `edsig...` and the `sig...` of the same bytes are equal).
#[derive(Clone)]
pub struct Signature(SignatureBytes);

/// In the order of `SignatureScheme::ALL`, then the generic `sig...` (unknown scheme).
const SIGNATURE_PREFIXES: [Prefix; 6] = [
    base58::ED25519_SIGNATURE,
    base58::SECP256K1_SIGNATURE,
    base58::P256_SIGNATURE,
    base58::BLS12_381_SIGNATURE,
    base58::ML_DSA_44_SIGNATURE,
    base58::GENERIC_SIGNATURE,
];

impl Signature {
    const WHAT: &'static str = "signature";

    /// The size of the binary form of every non-BLS signature.
    pub const SIZE_BYTES: usize = 64;
    /// The size of the binary form of a BLS signature.
    pub const BLS_SIZE_BYTES: usize = 96;

    /// A signature of `scheme` (or of unknown scheme when `None`) from its bytes, checked as Octez
    /// checks each scheme's signatures.
    pub fn try_new(scheme: Option<SignatureScheme>, bytes: &[u8]) -> Result<Self, CryptoError> {
        let expected = scheme.map_or(Self::SIZE_BYTES, SignatureScheme::signature_size_bytes);
        if bytes.len() != expected {
            return Err(CryptoError::length(Self::WHAT, expected, bytes.len()));
        }
        let inner = match scheme {
            Some(SignatureScheme::Ed25519) => SignatureBytes::Ed25519(array(bytes)),
            Some(SignatureScheme::Secp256k1) => {
                // libsecp256k1's compact parsing (Octez `Secp256k1.of_bytes_opt`) refuses
                // components not below the order.
                if secp256k1::ecdsa::Signature::from_compact(bytes).is_err() {
                    return Err(CryptoError::ScalarOutOfRange { what: Self::WHAT });
                }
                SignatureBytes::Secp256k1(array(bytes))
            }
            Some(SignatureScheme::P256) => SignatureBytes::P256(array(bytes)),
            Some(SignatureScheme::Bls) => {
                let point: [u8; 96] = array(bytes);
                if G2Affine::from_compressed(&point).is_none().into() {
                    return Err(CryptoError::InvalidPoint { what: Self::WHAT });
                }
                SignatureBytes::Bls(point)
            }
            // Octez's `Mldsa44.of_bytes_opt` takes any bytes of the size; malformed ones
            // verify nothing.
            Some(SignatureScheme::MlDsa44) => SignatureBytes::MlDsa44(Box::new(array(bytes))),
            None => SignatureBytes::Unknown(array(bytes)),
        };
        Ok(Self(inner))
    }

    /// Reads the binary form: 96 bytes are a BLS signature, 2,420 an ML-DSA-44 one, 64 bytes a
    /// signature of unknown scheme (Octez `Signature.of_bytes_opt`).
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Self, CryptoError> {
        match bytes.len() {
            Self::BLS_SIZE_BYTES => Self::try_new(Some(SignatureScheme::Bls), bytes),
            ML_DSA_44_SIGNATURE_SIZE_BYTES => Self::try_new(Some(SignatureScheme::MlDsa44), bytes),
            _ => Self::try_new(None, bytes),
        }
    }

    /// The scheme the signature was read as, `None` for a signature of unknown scheme.
    pub fn scheme(&self) -> Option<SignatureScheme> {
        match self.0 {
            SignatureBytes::Ed25519(_) => Some(SignatureScheme::Ed25519),
            SignatureBytes::Secp256k1(_) => Some(SignatureScheme::Secp256k1),
            SignatureBytes::P256(_) => Some(SignatureScheme::P256),
            SignatureBytes::Bls(_) => Some(SignatureScheme::Bls),
            SignatureBytes::MlDsa44(_) => Some(SignatureScheme::MlDsa44),
            SignatureBytes::Unknown(_) => None,
        }
    }

    /// The binary form (64, 96 or 2,420 bytes).
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            SignatureBytes::Ed25519(bytes)
            | SignatureBytes::Secp256k1(bytes)
            | SignatureBytes::P256(bytes)
            | SignatureBytes::Unknown(bytes) => bytes,
            SignatureBytes::Bls(bytes) => bytes,
            SignatureBytes::MlDsa44(bytes) => &bytes[..],
        }
    }

    /// Reads the text form (`edsig...`, `spsig1...`, `p2sig...`, `BLsig...`, `mdsig...`, `sig...`).
    pub fn from_b58check(text: &str) -> Result<Self, CryptoError> {
        let (index, payload) = decode_with(Self::WHAT, text, &SIGNATURE_PREFIXES)?;
        let scheme = SignatureScheme::ALL.get(index).copied();
        Self::try_new(scheme, &payload)
    }

    /// The text form, with the prefix of the scheme the signature was read as.
    pub fn to_b58check(&self) -> String {
        let prefix = match self.0 {
            SignatureBytes::Ed25519(_) => base58::ED25519_SIGNATURE,
            SignatureBytes::Secp256k1(_) => base58::SECP256K1_SIGNATURE,
            SignatureBytes::P256(_) => base58::P256_SIGNATURE,
            SignatureBytes::Bls(_) => base58::BLS12_381_SIGNATURE,
            SignatureBytes::MlDsa44(_) => base58::ML_DSA_44_SIGNATURE,
            SignatureBytes::Unknown(_) => base58::GENERIC_SIGNATURE,
        };
        base58::encode_check(prefix, self.as_bytes())
    }
}

impl PartialEq for Signature {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Signature {}

impl PartialOrd for Signature {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Signature {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Signature {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_b58check())
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Signature({})", self.to_b58check())
    }
}

impl FromStr for Signature {
    type Err = CryptoError;

    fn from_str(text: &str) -> Result<Self, CryptoError> {
        Self::from_b58check(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base58::Base58Error;
    use crate::testing::{hex_literals, packed_bytes, quoted, read};

    /// `PACK` of a key hash, key or signature literal (TZT `pack_*` files): the literal's text
    /// form and the bytes its binary form must be.
    fn pack_vector(file: &str, test_name: &str) -> Option<(String, Vec<u8>)> {
        let text = read(&format!("tzt/{file}"), test_name)?;
        let literal = quoted(&text)[0].to_owned();
        let packed = hex_literals(&text).pop().unwrap();
        Some((literal, packed_bytes(&packed).to_vec()))
    }

    #[test]
    fn key_hashes_match_tzt_pack_vectors() {
        for (file, scheme) in [
            ("pack_keyhash_01.tzt", SignatureScheme::Ed25519),
            ("pack_keyhash_02.tzt", SignatureScheme::Secp256k1),
            ("pack_keyhash_03.tzt", SignatureScheme::P256),
            ("pack_keyhash_04.tzt", SignatureScheme::Bls),
        ] {
            let Some((text, bytes)) = pack_vector(file, "key_hashes_match_tzt_pack_vectors") else {
                return;
            };
            let hash = PublicKeyHash::from_b58check(&text).unwrap();
            assert_eq!(hash.scheme(), scheme, "{file}");
            assert_eq!(hash.to_bytes().to_vec(), bytes, "{file}");
            assert_eq!(PublicKeyHash::try_from_bytes(&bytes), Ok(hash), "{file}");
            assert_eq!(hash.to_b58check(), text, "{file}");
            assert_eq!(text.parse::<PublicKeyHash>(), Ok(hash));
        }
    }

    #[test]
    fn keys_match_tzt_pack_vectors() {
        for (file, scheme) in [
            ("pack_key_00.tzt", SignatureScheme::Ed25519),
            ("pack_key_01.tzt", SignatureScheme::Secp256k1),
            ("pack_key_02.tzt", SignatureScheme::P256),
            ("pack_key_03.tzt", SignatureScheme::Bls),
        ] {
            let Some((text, bytes)) = pack_vector(file, "keys_match_tzt_pack_vectors") else {
                return;
            };
            let key = PublicKey::from_b58check(&text).unwrap();
            assert_eq!(key.scheme(), scheme, "{file}");
            assert_eq!(key.to_bytes(), bytes, "{file}");
            assert_eq!(key.size_bytes(), bytes.len());
            assert_eq!(
                PublicKey::try_from_bytes(&bytes).as_ref(),
                Ok(&key),
                "{file}"
            );
            assert_eq!(key.to_b58check(), text, "{file}");
        }
    }

    #[test]
    fn signatures_match_tzt_pack_vectors() {
        for (file, scheme) in [
            ("pack_signature_00.tzt", SignatureScheme::Ed25519),
            ("pack_signature_01.tzt", SignatureScheme::Secp256k1),
            ("pack_signature_02.tzt", SignatureScheme::P256),
            ("pack_signature_03.tzt", SignatureScheme::Bls),
        ] {
            let Some((text, bytes)) = pack_vector(file, "signatures_match_tzt_pack_vectors") else {
                return;
            };
            let signature = Signature::from_b58check(&text).unwrap();
            assert_eq!(signature.scheme(), Some(scheme), "{file}");
            assert_eq!(signature.as_bytes(), &bytes[..], "{file}");
            assert_eq!(signature.to_b58check(), text, "{file}");
            // The binary form forgets the scheme, except for BLS (the only 96-byte signatures).
            let read_back = Signature::try_from_bytes(&bytes).unwrap();
            assert_eq!(read_back, signature, "{file}");
            let expected_scheme = (scheme == SignatureScheme::Bls).then_some(scheme);
            assert_eq!(read_back.scheme(), expected_scheme, "{file}");
        }
    }

    #[test]
    fn signature_literals_from_tzt_parse() {
        for index in 0..=5 {
            let file = format!("tzt/signature_literal_{index:02}.tzt");
            let Some(text) = read(&file, "signature_literals_from_tzt_parse") else {
                return;
            };
            let parsed = match quoted(&text).first() {
                Some(literal) => Signature::from_b58check(literal),
                None => Signature::try_from_bytes(&hex_literals(&text)[0]),
            };
            assert!(parsed.is_ok(), "{file}: {parsed:?}");
        }
    }

    #[test]
    fn generic_and_typed_signatures_of_the_same_bytes_are_equal() {
        // compare_signature_00.tzt: COMPARE of an edsig and the sig of its bytes is 0.
        let Some(text) = read(
            "tzt/compare_signature_00.tzt",
            "generic_and_typed_signatures_of_the_same_bytes_are_equal",
        ) else {
            return;
        };
        let literals = quoted(&text);
        let typed = Signature::from_b58check(literals[0]).unwrap();
        let generic = Signature::from_b58check(literals[1]).unwrap();
        assert_eq!(generic.scheme(), None);
        assert_eq!(typed.cmp(&generic), Ordering::Equal);
        assert_eq!(generic.to_b58check(), literals[1]);
    }

    #[test]
    fn hash_key_matches_tzt() {
        let Some(text) = read("tzt/hash_key_00.tzt", "hash_key_matches_tzt") else {
            return;
        };
        let literals = quoted(&text);
        let key = PublicKey::from_b58check(literals[0]).unwrap();
        assert_eq!(key.hash().to_b58check(), literals[1]);
    }

    /// Reads a TZT stack element literal of type `key` or `signature` (string or bytes).
    fn stack_literal<T>(
        line: &str,
        from_text: fn(&str) -> Result<T, CryptoError>,
        from_bytes: fn(&[u8]) -> Result<T, CryptoError>,
    ) -> T {
        match quoted(line).first() {
            Some(text) => from_text(text).unwrap(),
            None => from_bytes(&hex_literals(line)[0]).unwrap(),
        }
    }

    #[test]
    fn check_signature_tzt_vectors() {
        for file in [
            "checksignature_00.tzt",
            "checksignature_01.tzt",
            "checksignature_02.tzt",
        ] {
            let Some(text) = read(&format!("tzt/{file}"), "check_signature_tzt_vectors") else {
                return;
            };
            let element = |kind: &str| {
                text.split("Stack_elt ")
                    .find(|part| part.starts_with(kind))
                    .unwrap_or_else(|| panic!("{file}: no {kind}"))
                    .split(';')
                    .next()
                    .unwrap()
                    .to_owned()
            };
            let key = stack_literal(
                &element("key "),
                PublicKey::from_b58check,
                PublicKey::try_from_bytes,
            );
            let signature = stack_literal(
                &element("signature "),
                Signature::from_b58check,
                Signature::try_from_bytes,
            );
            let message = hex_literals(&element("bytes "))[0].clone();
            let expected = element("bool ").contains("True");
            assert_eq!(key.verify(&signature, &message), expected, "{file}");
        }
    }

    #[test]
    fn check_signature_regression_run_ed25519() {
        // octez-client run of opcodes/check_signature.tz: the contract checks the storage's
        // signature of PACK "hello" under the parameter's key, and the run succeeded.
        let Some(text) = read(
            "michelson-regression/opcodes/test_Michelson_opcodes-_check_signature.out",
            "check_signature_regression_run_ed25519",
        ) else {
            return;
        };
        let literals = quoted(&text);
        let signature =
            Signature::from_b58check(literals.iter().find(|s| s.starts_with("edsig")).unwrap())
                .unwrap();
        let key =
            PublicKey::from_b58check(literals.iter().find(|s| s.starts_with("edpk")).unwrap())
                .unwrap();
        let packed_hello = hex::decode("05010000000568656c6c6f").unwrap();
        assert!(text.contains("0x05010000000568656c6c6f"));
        assert!(key.verify(&signature, &packed_hello));
        assert!(!key.verify(&signature, b"hello"));
        // The same bytes as a signature of unknown scheme verify too; under another scheme, never.
        let generic = Signature::try_from_bytes(signature.as_bytes()).unwrap();
        assert!(key.verify(&generic, &packed_hello));
        let as_p256 =
            Signature::try_new(Some(SignatureScheme::P256), signature.as_bytes()).unwrap();
        assert!(!key.verify(&as_p256, &packed_hello));
    }

    // Vectors generated for this test with independent implementations (python-ecdsa 0.19.2 with
    // RFC 6979 nonces, py_ecc 8.0.0's `G2MessageAugmentation`), signing
    // blake2b-256("kestrel crypto test vector") for ECDSA and the message itself for BLS.
    const MESSAGE: &[u8] = b"kestrel crypto test vector";
    const P256_KEY: &str = "p2pk67CsKMwd7w6T3hdULcLgasFPZpzSgHJDSb1a38fgrcoiskrnNSs";
    const P256_KEY_HASH: &str = "tz3esMqMPpyBETwe8ydgRdprqtuPUa3mDczx";
    const P256_SIGNATURE_LOW_S: &str = "p2signQQbTbxhxMXbgtxkTFUpmuRQmCNkBKHt7v1QF9CxPvxVzQB2U7cUeLvqrqGK1QB4iBbQwLD66iVZtzmEu8jLnerQPa1Uq";
    const P256_SIGNATURE_HIGH_S: &str = "p2signQQbTbxhxMXbgtxkTFUpmuRQmCNkBKHt7v1QF9CxPvxXtNeUqJBwqmJ1LrxF3DfdWtV4bu2wuaoH7KUsU9xbZY2jLS9r1";
    const SECP256K1_KEY: &str = "sppk7cDhfS6W9mRsyU1wzmAZ8GMy2kgdvd6gVkDZZGiTvGJWwUzD9XQ";
    const SECP256K1_KEY_HASH: &str = "tz2ThMFXWdQGVyHGRxRJsfY25nNUaopDfmAX";
    const SECP256K1_SIGNATURE_LOW_S: &str = "spsig1Y2fGPvaEFALmwqaDN2JrNizAW1ovkVww8g34RcczQnGgATFHHvS1goR6P4sJwvzwGUtVUgnqjTJQ1jSHY74aBdqX9xPPH";
    const SECP256K1_SIGNATURE_HIGH_S: &str = "spsig1Y2fGPvaEFALmwqaDN2JrNizAW1ovkVww8g34RcczQnGh8rPHDBaucZXciw97tB82nqUCYHcJ16kYVPMc8BeZ66Wswi868";
    const BLS_KEY: &str =
        "BLpk1xiHrDkPvs1po9oMuDmAMmFeHFMAURj2wHWJvHeXu58v1fxcpZJjdbLcNVy7JEfQsBW33Mko";
    const BLS_KEY_HASH: &str = "tz4MtfUzmC9Jc8s7kXCzUdkKPBCvYCNffTqC";
    const BLS_SIGNATURE: &str = "BLsig9ndQVZ1bVCJUcWH9utsxMHgMD5WF1bEXCVwPcmodmnuh8zBeJAAroZZFHatf9ZG6cAYe3nEVTUnLrWUDrPLt4P6KubEbu19VtVcJASH4Cpy9iaJtAqYwQbpLvXsNabt832byRf9nP";

    fn check_verify(key: &str, key_hash: &str, signature: &str, expected: bool) {
        let key = PublicKey::from_b58check(key).unwrap();
        assert_eq!(key.hash().to_b58check(), key_hash);
        let signature = Signature::from_b58check(signature).unwrap();
        assert_eq!(key.verify(&signature, MESSAGE), expected, "{signature}");
        assert!(!key.verify(&signature, b"another message"));
        if signature.scheme() != Some(SignatureScheme::Bls) {
            let generic = Signature::try_from_bytes(signature.as_bytes()).unwrap();
            assert_eq!(key.verify(&generic, MESSAGE), expected);
        }
    }

    #[test]
    fn p256_verifies_independent_vectors_with_either_s() {
        check_verify(P256_KEY, P256_KEY_HASH, P256_SIGNATURE_LOW_S, true);
        check_verify(P256_KEY, P256_KEY_HASH, P256_SIGNATURE_HIGH_S, true);
    }

    #[test]
    fn secp256k1_verifies_low_s_only() {
        // libsecp256k1 (Octez) accepts only low-s signatures.
        check_verify(
            SECP256K1_KEY,
            SECP256K1_KEY_HASH,
            SECP256K1_SIGNATURE_LOW_S,
            true,
        );
        check_verify(
            SECP256K1_KEY,
            SECP256K1_KEY_HASH,
            SECP256K1_SIGNATURE_HIGH_S,
            false,
        );
    }

    #[test]
    fn bls_verifies_independent_vector() {
        check_verify(BLS_KEY, BLS_KEY_HASH, BLS_SIGNATURE, true);
        // Another key of the same scheme does not verify it.
        let Some((other_key, _)) =
            pack_vector("pack_key_03.tzt", "bls_verifies_independent_vector")
        else {
            return;
        };
        let other_key = PublicKey::from_b58check(&other_key).unwrap();
        let signature = Signature::from_b58check(BLS_SIGNATURE).unwrap();
        assert!(!other_key.verify(&signature, MESSAGE));
    }

    #[test]
    fn secp256k1_signature_components_must_be_below_the_order() {
        let mut bytes = [0xffu8; 64];
        assert_eq!(
            Signature::try_new(Some(SignatureScheme::Secp256k1), &bytes),
            Err(CryptoError::ScalarOutOfRange { what: "signature" })
        );
        bytes[..32].fill(1);
        assert!(Signature::try_new(Some(SignatureScheme::Secp256k1), &bytes).is_err());
        bytes.fill(1);
        assert!(Signature::try_new(Some(SignatureScheme::Secp256k1), &bytes).is_ok());
    }

    #[test]
    fn ml_dsa_44_keys_and_signatures() {
        use ml_dsa::{KeyGen, MlDsa44};
        let pair = MlDsa44::key_gen_internal(&[7u8; 32].into());
        let key_bytes = pair.verifying_key().encode();
        let key = PublicKey::try_new(SignatureScheme::MlDsa44, &key_bytes).unwrap();
        assert_eq!(PublicKey::try_from_bytes(&key.to_bytes()), Ok(key.clone()));
        let text = key.to_b58check();
        assert!(text.starts_with("mdpk"), "{text}");
        assert_eq!(PublicKey::from_b58check(&text).as_ref(), Ok(&key));
        assert!(key.hash().to_b58check().starts_with("tz5"));
        // Octez signs the blake2b-256 digest in pure mode with the empty context.
        let message = b"\x03operation bytes";
        let signature = pair
            .signing_key()
            .sign_deterministic(&blake2b_256(message), &[])
            .unwrap();
        let signature = Signature::try_from_bytes(&signature.encode()).unwrap();
        assert_eq!(signature.scheme(), Some(SignatureScheme::MlDsa44));
        assert!(signature.to_b58check().starts_with("mdsig"));
        assert_eq!(
            Signature::from_b58check(&signature.to_b58check()).as_ref(),
            Ok(&signature)
        );
        assert!(key.verify(&signature, message));
        assert!(key.check(&signature, message));
        assert!(!key.verify(&signature, b"\x03other bytes"));
        let mut mutated = signature.as_bytes().to_vec();
        mutated[100] ^= 1;
        assert!(!key.verify(&Signature::try_from_bytes(&mutated).unwrap(), message));
    }

    #[test]
    fn binary_rejections_carry_the_rule() {
        // Tag 4 is tz5 (ML-DSA-44) since protocol 025; 5 names no scheme.
        assert_eq!(
            PublicKeyHash::try_from_bytes(&[4; 21]).map(|hash| hash.scheme()),
            Ok(SignatureScheme::MlDsa44)
        );
        assert_eq!(
            PublicKeyHash::try_from_bytes(&[5; 21]),
            Err(CryptoError::UnknownTag {
                what: "public key hash",
                tag: 5
            })
        );
        assert_eq!(
            PublicKeyHash::try_from_bytes(&[0; 22]),
            Err(CryptoError::WrongLength {
                what: "public key hash",
                expected: 21,
                found: 22
            })
        );
        assert_eq!(
            PublicKey::try_from_bytes(&[]),
            Err(CryptoError::WrongLength {
                what: "public key",
                expected: 1,
                found: 0
            })
        );
        assert_eq!(
            PublicKey::try_from_bytes(&[1; 33]),
            Err(CryptoError::WrongLength {
                what: "public key",
                expected: 34,
                found: 33
            })
        );
        // 0x05 is not a SEC1 compressed-point tag.
        let mut secp = [5u8; 34];
        secp[0] = 1;
        assert_eq!(
            PublicKey::try_from_bytes(&secp),
            Err(CryptoError::InvalidPoint { what: "public key" })
        );
        assert_eq!(
            PublicKey::try_from_bytes(&[3; 49]),
            Err(CryptoError::InvalidPoint { what: "public key" })
        );
        assert_eq!(
            Signature::try_from_bytes(&[0; 65]),
            Err(CryptoError::WrongLength {
                what: "signature",
                expected: 64,
                found: 65
            })
        );
        assert_eq!(
            Signature::try_from_bytes(&[0; 96]),
            Err(CryptoError::InvalidPoint { what: "signature" })
        );
    }

    #[test]
    fn text_rejections_carry_the_rule() {
        // A key hash is not a key, and a key is not a signature.
        assert_eq!(
            PublicKey::from_b58check(P256_KEY_HASH),
            Err(CryptoError::Base58 {
                what: "public key",
                error: Base58Error::WrongPrefix
            })
        );
        assert_eq!(
            Signature::from_b58check(P256_KEY).unwrap_err(),
            CryptoError::Base58 {
                what: "signature",
                error: Base58Error::WrongPrefix
            }
        );
        let too_long = "1".repeat(base58::MAX_ENCODED_LENGTH + 1);
        assert_eq!(
            Signature::from_b58check(&too_long),
            Err(CryptoError::Base58 {
                what: "signature",
                error: Base58Error::TooLong {
                    length: base58::MAX_ENCODED_LENGTH + 1
                }
            })
        );
        assert!(PublicKeyHash::from_b58check("").is_err());
    }

    #[test]
    fn p256_keys_order_by_uncompressed_coordinates() {
        let key = PublicKey::from_b58check(P256_KEY).unwrap();
        let mut other_parity = key.to_bytes();
        other_parity[1] ^= 1; // 0x02 <-> 0x03: the same x, the other y (p - y).
        let other = PublicKey::try_from_bytes(&other_parity).unwrap();
        let y = p256_y(&array(key.key_bytes()));
        let other_y = p256_y(&array(other.key_bytes()));
        assert_ne!(y, other_y);
        assert_eq!(key.cmp(&other), y.cmp(&other_y));
        assert_eq!(other.cmp(&key), other_y.cmp(&y));
        assert_eq!(key.cmp(&key.clone()), Ordering::Equal);
        // Across schemes, the tag decides.
        let secp = PublicKey::from_b58check(SECP256K1_KEY).unwrap();
        let bls = PublicKey::from_b58check(BLS_KEY).unwrap();
        assert!(secp < key && key < bls);
    }

    #[test]
    fn ed25519_non_canonical_key_encodings_never_verify() {
        let mut p_minus_one = [0xffu8; 32];
        p_minus_one[0] = 0xec;
        p_minus_one[31] = 0x7f;
        let mut one = [0u8; 32];
        one[0] = 1;
        assert!(ed25519_key_encoding_is_canonical(&p_minus_one));
        assert!(ed25519_key_encoding_is_canonical(&one));
        for (mut bytes, canonical) in [(p_minus_one, false), (one, false)] {
            bytes[31] |= 0x80; // x = 0 with the sign bit set
            assert_eq!(ed25519_key_encoding_is_canonical(&bytes), canonical);
        }
        let mut p = p_minus_one;
        p[0] = 0xed; // y = p
        assert!(!ed25519_key_encoding_is_canonical(&p));
        let mut p_minus_two = p_minus_one;
        p_minus_two[0] = 0xeb;
        assert!(ed25519_key_encoding_is_canonical(&p_minus_two));
        // The TZT vector whose key is y = p - 1 (checksignature_02) stays valid; with the sign
        // bit set the same signature no longer verifies.
        let key = PublicKey::try_new(SignatureScheme::Ed25519, &p_minus_one).unwrap();
        let mut signature = [0u8; 64];
        signature[..32].copy_from_slice(&p_minus_one);
        let signature = Signature::try_from_bytes(&signature).unwrap();
        assert!(key.verify(&signature, b"world"));
        let mut signed = p_minus_one;
        signed[31] |= 0x80;
        let key = PublicKey::try_new(SignatureScheme::Ed25519, &signed).unwrap();
        assert!(!key.verify(&signature, b"world"));
    }

    #[test]
    fn key_hash_order_is_binary_order() {
        let hashes: Vec<PublicKeyHash> = (0..4u8)
            .flat_map(|tag| {
                [[0u8; 20], [0xff; 20]]
                    .map(|hash| PublicKeyHash::new(SignatureScheme::from_tag(tag).unwrap(), hash))
            })
            .collect();
        for a in &hashes {
            for b in &hashes {
                assert_eq!(a.cmp(b), a.to_bytes().cmp(&b.to_bytes()));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn key_hash_forms_round_trip(tag in 0u8..4, hash in proptest::array::uniform20(0u8..)) {
            let key_hash = PublicKeyHash::new(SignatureScheme::from_tag(tag).unwrap(), hash);
            proptest::prop_assert_eq!(PublicKeyHash::try_from_bytes(&key_hash.to_bytes()), Ok(key_hash));
            proptest::prop_assert_eq!(PublicKeyHash::from_b58check(&key_hash.to_b58check()), Ok(key_hash));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(0u8.., 0..200)) {
            let _ = PublicKeyHash::try_from_bytes(&bytes);
            let _ = PublicKey::try_from_bytes(&bytes);
            if let Ok(signature) = Signature::try_from_bytes(&bytes) {
                proptest::prop_assert_eq!(signature.as_bytes(), &bytes[..]);
                proptest::prop_assert_eq!(Signature::from_b58check(&signature.to_b58check()), Ok(signature));
            }
        }

        #[test]
        fn generic_signature_text_round_trips(bytes in proptest::collection::vec(0u8.., 64)) {
            let signature = Signature::try_from_bytes(&bytes).unwrap();
            let text = signature.to_b58check();
            proptest::prop_assert!(text.starts_with("sig"));
            proptest::prop_assert_eq!(Signature::from_b58check(&text), Ok(signature));
        }
    }
}
