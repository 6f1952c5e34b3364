//! Operation fields that are cryptographic values: key hashes, public keys, signatures,
//! contracts (implicit or originated, Octez's `Contract_repr.encoding`), and the fixed-size
//! hashes with a base58check JSON form (block, block payload, protocol, context, operation-list,
//! nonce, smart rollup and DAL hashes). The binary forms are `kestrel-crypto`'s; this module adds
//! the operation encodings' framing and the prefixes that only the protocol uses.

use kestrel_crypto::base58::{self, Prefix};
use kestrel_crypto::{
    BlockHash, ContextHash, ContractHash, Destination, OperationHash, ProtocolHash, PublicKey,
    PublicKeyHash, ScriptExprHash, Signature, SignatureScheme, SmartRollupAddress,
};
use kestrel_encoding::Reader;
use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind, JsonError};
use crate::field::Field;
use crate::json::{self, write_string};

/// Reads a base58check JSON string with `parse`.
fn read_b58<T, E: std::fmt::Display>(
    value: &Value,
    path: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, JsonError> {
    let text = json::as_str(value, path)?;
    parse(text).map_err(|error| JsonError::new(path, error.to_string()))
}

impl<'a> Field<'a> for PublicKeyHash {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let bytes = reader.take_array_ref::<{ PublicKeyHash::SIZE_BYTES }>()?;
        PublicKeyHash::try_from_bytes(bytes).map_err(|_| {
            DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "public key hash",
                    tag: u16::from(bytes[0]),
                },
                offset,
            )
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bytes());
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, &self.to_b58check());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        read_b58(value, path, PublicKeyHash::from_b58check)
    }
}

impl<'a> Field<'a> for PublicKey {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let tag = reader.take_u8()?;
        let scheme = SignatureScheme::from_tag(tag).ok_or_else(|| {
            DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "public key",
                    tag: u16::from(tag),
                },
                offset,
            )
        })?;
        let key = reader.take(scheme.public_key_size_bytes())?;
        PublicKey::try_new(scheme, key)
            .map_err(|error| DecodeError::invalid("public key", error.to_string(), offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        self.write_bytes(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, &self.to_b58check());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        read_b58(value, path, PublicKey::from_b58check)
    }
}

/// A signature as data-encoding's `Signature.encoding` writes it inside a size-delimited region:
/// all the region's bytes (64 for ed25519/secp256k1/p256, 96 for BLS).
impl<'a> Field<'a> for Signature {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let bytes = reader.take(reader.remaining_bytes())?;
        Signature::try_from_bytes(bytes)
            .map_err(|error| DecodeError::invalid("signature", error.to_string(), offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, &self.to_b58check());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        read_b58(value, path, Signature::from_b58check)
    }
}

/// A BLS signature of fixed size (`Bls.encoding`: 96 bytes, a `BLsig` in JSON), as in a reveal's
/// or a consensus-key update's proof of possession.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlsSignature(pub Signature);

impl<'a> Field<'a> for BlsSignature {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let bytes = reader.take(Signature::BLS_SIZE_BYTES)?;
        Signature::try_new(Some(SignatureScheme::Bls), bytes)
            .map(BlsSignature)
            .map_err(|error| DecodeError::invalid("BLS signature", error.to_string(), offset))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, &self.0.to_b58check());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let signature = read_b58(value, path, Signature::from_b58check)?;
        if signature.scheme() != Some(SignatureScheme::Bls) {
            return Err(JsonError::new(path, "expected a BLS signature"));
        }
        Ok(BlsSignature(signature))
    }
}

/// A contract (`Contract_repr.encoding`): an implicit account (`00` and its key hash) or an
/// originated contract (`01`, its hash, a zero padding byte); 22 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Contract(pub Destination);

impl Contract {
    fn check(destination: Destination, offset: usize) -> Result<Self, DecodeError> {
        match destination {
            Destination::SmartRollup(_) => Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "contract",
                    tag: 3,
                },
                offset,
            )),
            other => Ok(Contract(other)),
        }
    }
}

impl<'a> Field<'a> for Contract {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        let bytes = reader.take_array_ref::<22>()?;
        let destination = Destination::try_from_bytes(bytes).map_err(|error| match error {
            kestrel_crypto::CryptoError::UnknownTag { tag, .. } => DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "contract",
                    tag: u16::from(tag),
                },
                offset,
            ),
            other => DecodeError::invalid("contract", other.to_string(), offset),
        })?;
        Self::check(destination, offset)
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_bytes());
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, &self.0.to_b58check());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let destination = read_b58(value, path, Destination::from_b58check)?;
        Self::check(destination, 0).map_err(|_| JsonError::new(path, "expected tz… or KT1…"))
    }
}

/// An originated contract (`Contract_repr.originated_encoding`): the same 22 bytes as
/// [`Contract`], only the originated case.
impl<'a> Field<'a> for ContractHash {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let offset = reader.offset();
        match Contract::read(reader)?.0 {
            Destination::Originated(hash) => Ok(hash),
            _ => Err(DecodeError::new(
                DecodeErrorKind::UnknownTag {
                    what: "originated contract",
                    tag: 0,
                },
                offset,
            )),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        Contract(Destination::Originated(*self)).write(out);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(out, &self.to_b58check());
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        read_b58(value, path, ContractHash::from_b58check)
    }
}

macro_rules! crypto_hash_field {
    ($type:ty, $size:expr) => {
        impl<'a> Field<'a> for $type {
            fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
                Ok(<$type>::new(reader.take_array::<$size>()?))
            }
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(self.as_bytes());
            }
            fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
                write_string(out, &self.to_b58check());
                Ok(())
            }
            fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
                read_b58(value, path, <$type>::from_b58check)
            }
        }
    };
}

crypto_hash_field!(BlockHash, 32);
crypto_hash_field!(ProtocolHash, 32);
crypto_hash_field!(ContextHash, 32);
crypto_hash_field!(SmartRollupAddress, 20);
crypto_hash_field!(OperationHash, 32);
crypto_hash_field!(ScriptExprHash, 32);

/// Declares a fixed-size hash whose text form is base58check with `prefix`.
macro_rules! protocol_hash {
    ($(#[$doc:meta])* $name:ident, [$($byte:expr),+], $size:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub [u8; $size]);

        impl $name {
            /// The base58check prefix of the text form.
            pub const PREFIX: Prefix = Prefix { bytes: &[$($byte),+], payload_size: $size };

            /// The base58check text form.
            pub fn to_b58check(&self) -> String {
                base58::encode_check(Self::PREFIX, &self.0)
            }

            /// Reads the base58check text form.
            pub fn from_b58check(text: &str) -> Result<Self, base58::Base58Error> {
                let payload = base58::decode_check(Self::PREFIX, text)?;
                let mut bytes = [0u8; $size];
                bytes.copy_from_slice(&payload);
                Ok(Self(bytes))
            }
        }

        impl<'a> Field<'a> for $name {
            fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
                Ok(Self(reader.take_array::<$size>()?))
            }
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.0);
            }
            fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
                write_string(out, &self.to_b58check());
        Ok(())
    }
            fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
                read_b58(value, path, Self::from_b58check)
            }
        }
    };
}

// Prefixes: Octez `src/lib_crypto/base58.ml` (`Prefix`) unless noted.
protocol_hash!(
    /// A block payload hash (`vh…`; `src/proto_025_PsUshuai/lib_protocol/block_payload_hash.ml`).
    BlockPayloadHash, [1, 106, 242], 32
);
protocol_hash!(
    /// The hash of a block's operation lists (`LLo…`).
    OperationListListHash, [29, 159, 109], 32
);
protocol_hash!(
    /// A seed nonce hash (`nce…`; `lib_protocol/nonce_hash.ml`).
    NonceHash, [69, 220, 169], 32
);
protocol_hash!(
    /// A smart rollup commitment hash (`src1…`).
    SmartRollupCommitmentHash, [17, 165, 134, 138], 32
);
protocol_hash!(
    /// A smart rollup PVM state hash (`srs1…`).
    SmartRollupStateHash, [17, 165, 235, 240], 32
);
protocol_hash!(
    /// A DAL commitment or shard proof, a compressed G1 point (`sh…`, Octez's `slot_header`).
    DalCommitment, [2, 116, 180], 48
);

protocol_hash!(
    /// A blinded public key hash of a fundraiser commitment (`btz1…`;
    /// `lib_protocol/blinded_public_key_hash.ml`).
    BlindedPublicKeyHash, [1, 2, 49, 223], 20
);

protocol_hash!(
    /// A zk rollup address (`epx1…`; `lib_protocol/zk_rollup_repr.ml`).
    ZkRollupAddress, [1, 23, 224, 125], 20
);

/// An ed25519 public key hash as `Ed25519.Public_key_hash.encoding` writes it: the 20 bytes,
/// without a scheme tag (a `tz1…` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ed25519PublicKeyHash(pub [u8; 20]);

impl<'a> Field<'a> for Ed25519PublicKeyHash {
    fn read(reader: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(Self(reader.take_array::<20>()?))
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
    fn write_json(&self, out: &mut String) -> Result<(), JsonError> {
        write_string(
            out,
            &PublicKeyHash::new(SignatureScheme::Ed25519, self.0).to_b58check(),
        );
        Ok(())
    }
    fn read_json(value: &Value, path: &str) -> Result<Self, JsonError> {
        let hash = read_b58(value, path, PublicKeyHash::from_b58check)?;
        if hash.scheme() != SignatureScheme::Ed25519 {
            return Err(JsonError::new(path, "expected a tz1 key hash"));
        }
        Ok(Self(*hash.hash_bytes()))
    }
}
