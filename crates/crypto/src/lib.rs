//! Tezos cryptography for Kestrel: the hash functions Michelson and the context use; the
//! base58check and binary forms of hashes, key hashes, keys, signatures and addresses; signature
//! verification for the four Tezos schemes (`CHECK_SIGNATURE`); and BLS12-381 arithmetic for
//! Michelson's `bls12_381_fr`, `bls12_381_g1`, `bls12_381_g2` and `PAIRING_CHECK`.
//!
//! Pure computation: no I/O, no global state. Every constructor from bytes or text returns a
//! typed [`CryptoError`] and never panics, whatever the input.
//!
//! Map: [`hash`] (digests), [`base58`] (prefixes, base58check), [`hashes`] (fixed-size hashes:
//! chain id, `KT1`, `sr1`, block/operation/protocol/expression hashes), [`keys`] (key hashes,
//! keys, signatures, verification), [`address`] (Michelson `address` with entrypoint), [`bls`]
//! (BLS12-381 scalars, points, pairing check).

#![forbid(unsafe_code)]

pub mod address;
pub mod base58;
pub mod bls;
pub mod error;
pub mod hash;
pub mod hashes;
pub mod keys;
#[cfg(test)]
mod testing;

pub use address::{Address, Destination, Entrypoint};
pub use error::CryptoError;
pub use hashes::{
    BlockHash, ChainId, ContextHash, ContractHash, OperationHash, ProtocolHash, ScriptExprHash,
    SmartRollupAddress,
};
pub use keys::{PublicKey, PublicKeyHash, Signature, SignatureScheme};
