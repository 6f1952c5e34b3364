//! Tezos cryptography for Kestrel: the hash functions Michelson and the context use, and the
//! base58check forms of hashes, keys, addresses and signatures.
//!
//! Pure computation: no I/O, no global state.

#![forbid(unsafe_code)]

pub mod base58;
pub mod hash;
