//! Tezos cryptography for Kestrel: the hash functions Michelson and the context use; the
//! base58check and binary forms of hashes, key hashes, keys, signatures and addresses; signature
//! verification for the five Tezos schemes (`CHECK_SIGNATURE`); and BLS12-381 arithmetic for
//! Michelson's `bls12_381_fr`, `bls12_381_g1`, `bls12_381_g2` and `PAIRING_CHECK`.
//!
//! Pure computation: no I/O, no global state. Every constructor from bytes or text returns a
//! typed [`CryptoError`] and never panics, whatever the input.
//!
//! Map: [`hash`] (digests), [`base58`] (prefixes, base58check), [`hashes`] (fixed-size hashes:
//! chain id, `KT1`, `sr1`, block/operation/protocol/expression hashes), [`keys`] (key hashes,
//! keys, signatures, verification), [`secret_key`] (ed25519 secret keys, signing), [`address`]
//! (Michelson `address` with entrypoint), [`bls`]
//! (BLS12-381 scalars, points, pairing check).
//!
//! ```
//! use kestrel_crypto::{Address, PublicKey, Signature};
//!
//! // Text (readable) and binary (optimized, PACK) forms of Michelson's domain values.
//! let key = PublicKey::from_b58check("edpkuBknW28nW72KG6RoHtYW7p12T6GKc7nAbwYX5m8Wd9sDVC9yav")?;
//! assert_eq!(key.hash().to_b58check(), "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx");
//! assert_eq!(PublicKey::try_from_bytes(&key.to_bytes())?, key);
//!
//! // CHECK_SIGNATURE: the signature of PACK "hello" under that key.
//! let signature = Signature::from_b58check(
//!     "edsigu3QszDjUpeqYqbvhyRxMpVFamEnvm9FYnt7YiiNt9nmjYfh8ZTbsybZ5WnBkhA7zfHsRVyuTnRsGLR6fNHt1Up1FxgyRtF",
//! )?;
//! assert!(key.verify(&signature, b"\x05\x01\x00\x00\x00\x05hello"));
//!
//! let address = Address::from_b58check("KT1Q36KWPSba7dHsH5E4ZsQHehrChc51e19d%transfer")?;
//! assert_eq!(address.to_bytes().len(), 22 + "transfer".len());
//! # Ok::<(), kestrel_crypto::CryptoError>(())
//! ```

#![forbid(unsafe_code)]

pub mod address;
pub mod base58;
pub mod bls;
pub mod error;
pub mod hash;
pub mod hashes;
pub mod keys;
pub mod secret_key;
#[cfg(test)]
mod testing;

pub use address::{Address, Destination, Entrypoint};
pub use error::CryptoError;
pub use hashes::{
    BlockHash, ChainId, ContextHash, ContractHash, OperationHash, ProtocolHash, ScriptExprHash,
    SmartRollupAddress,
};
pub use keys::{check_batch, PublicKey, PublicKeyHash, Signature, SignatureScheme};
pub use secret_key::SecretKey;
