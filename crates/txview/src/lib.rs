//! Zero-copy, allocation-free views of Solana wire transactions (legacy, v0 and v1), their
//! sanitization with exactly `agave-transaction-view`'s answers, a resolved view giving each
//! account's role, a builder, and ed25519 signature checks.
//!
//! Spec: `../shared/specs/solana-transaction-format.md`, `simd-0385-transaction-v1.md` (v1),
//! `simd-0160` (instruction limit), `simd-0296` (v1 size), `simd-0406` (accounts per instruction).
//!
//! Layout (DESIGN.md principle 4, "one module per wire section"): each `*_frame` module frames one
//! section with `try_new(bytes, &mut offset)` and keeps its edge tests beside it; a frame is offsets
//! and counts, a view (`transaction_view`) pairs it with the bytes; `sanitize` checks a frame;
//! parsed and sanitized views are different types.
//!
//! Invariants: parsing, sanitizing and iterating never allocate and never copy the packet (a test
//! with a counting allocator checks it); every array is bounds-checked once, while framing; input
//! never causes a panic (fuzzed). The builder and signature checks do allocate.

#![forbid(unsafe_code)]

mod address_table_lookup_frame;
mod builder;
mod bytes;
mod error;
mod fast_frame;
mod instructions_frame;
pub mod limits;
mod message_header_frame;
mod resolved_transaction_view;
mod sanitize;
mod signature_frame;
mod static_account_keys_frame;
mod transaction_config_frame;
mod transaction_frame;
mod transaction_view;
mod verify;

pub use address_table_lookup_frame::{AddressTableLookup, AddressTableLookupIterator};
pub use builder::{
    AddressTableLookupSpec, InstructionSpec, MessageHeader, Transaction, TransactionConfig,
};
pub use error::{ErrorClass, Field, ParseError, ResolveError, SanitizeError, TransactionViewError};
pub use instructions_frame::{Instruction, InstructionsIterator};
pub use resolved_transaction_view::{AccountRole, LoadedAddresses, ResolvedTransactionView};
pub use sanitize::SanitizeConfig;
pub use transaction_config_frame::TransactionConfigView;
pub use transaction_view::{SanitizedTransactionView, TransactionView, UnsanitizedTransactionView};
pub use verify::{
    verify_signatures, verify_signatures_batch, verify_signatures_cached, KeyCache, VerifyError,
};

/// A 32-byte account address (ed25519 public key or program-derived address).
pub type Address = [u8; limits::ADDRESS_BYTES];
/// A 64-byte ed25519 signature.
pub type Signature = [u8; limits::SIGNATURE_BYTES];
/// A 32-byte blockhash (v1: lifetime specifier).
pub type Hash = [u8; limits::HASH_BYTES];

/// The wire format of a transaction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TransactionVersion {
    /// No version byte; no address table lookups.
    Legacy,
    /// Version byte `0x80`; may load accounts through address table lookups.
    V0,
    /// Version byte `0x81` (SIMD-0385): fixed-size instruction headers, config values, signatures
    /// last, no lookups.
    V1,
}
