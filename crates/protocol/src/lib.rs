//! Tezos protocol 025 (Ushuaia) for Kestrel: the operation layer — a codec for the operation
//! kinds of `operation_repr.ml` in binary (data-encoding, read with `kestrel-encoding`'s
//! borrowing [`Reader`](kestrel_encoding::Reader)) and in the RPC's JSON, both ways; the signed
//! form (the `0x03` watermark, the tagged BLS signature prefix); operation hashes (`o…`).
//!
//! Map: [`field`] (the `Field` trait: one value in both forms; integers, Zarith, mutez,
//! options, sizes, lists, bytes), `record` (the `record!` macro deriving a kind's two forms from
//! its field list), [`crypto_fields`] (key hashes, keys, signatures, contracts, hashes),
//! [`script`] (lazy Micheline, scripts, entrypoints, parameters), [`manager`] (manager header
//! and kinds), [`consensus`] (attestations, aggregates, double-signing evidence), [`voting`]
//! (proposals, ballots), [`anonymous`] (nonces, activations, drains, no-ops), [`dal`] (slot
//! commitments, entrapment evidence), [`block_header`] (headers in double baking evidence and
//! alone, timestamps), [`internal`] (operations emitted by contracts), [`contents`] (the
//! `contents` union), [`operation`] (whole operations, signed and unsigned, hashes), [`signature`]
//! (signature checks, batched; proofs of possession), [`error`].
//!
//! ```
//! use kestrel_protocol::{Contents, ManagerKind, Operation};
//!
//! // A transfer of 1 tez from bootstrap1 to bootstrap2, as JSON, to bytes and back.
//! let operation = Operation::from_json_str(r#"{
//!   "branch": "BKpbfCvh777DQHnXjU2sqHvVUNZ7dBAdqEfKkdw8EGSkD9LSYXb",
//!   "contents": [{"kind": "transaction", "source": "tz1KqTpEZ7Yob7QbPE4Hy4Wo8fHG8LhKxZSx",
//!     "fee": "1000", "counter": "1", "gas_limit": "3040", "storage_limit": "257",
//!     "amount": "1000000", "destination": "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN"}]}"#)?;
//! let bytes = operation.encode_unsigned();
//! let decoded = Operation::decode_unsigned(&bytes).expect("round trip");
//! let Contents::Manager(manager) = &decoded.contents[0] else { unreachable!() };
//! assert!(matches!(&manager.operation, ManagerKind::Transaction(t) if t.amount.0 == 1_000_000));
//! # Ok::<(), kestrel_protocol::JsonError>(())
//! ```

#![forbid(unsafe_code)]

pub mod anonymous;
pub mod apply;
pub mod block_header;
mod bounded_cache;
pub mod consensus;
pub mod contents;
pub mod crypto_fields;
pub mod dal;
pub mod error;
pub mod field;
pub mod host;
pub mod internal;
mod json;
pub mod ledger;
pub mod manager;
pub mod operation;
pub mod receipt;
mod record;
pub mod render;
pub mod script;
pub mod signature;
pub mod values;
pub mod voting;
pub mod workload;

pub use apply::{
    validate_and_apply, validate_and_apply_block, BlockContext, Mode, StageTimings, ValidationError,
};
pub use contents::{Contents, ManagerKind, ManagerOperation};
pub use error::{DecodeError, DecodeErrorKind, JsonError, PARSE_ERROR_ID};
pub use field::{Field, Mutez};
pub use ledger::{Constants, Genesis, Ledger, LedgerError};
pub use operation::{Operation, RawOperation, SignedOperation};
pub use receipt::{
    Balance, BalanceUpdate, ContentsAndMetadata, ContentsMetadata, DelegationResult, EventResult,
    IncreasePaidStorageResult, InternalOperationResult, LazyStorageDiff, ManagerMetadata,
    ManagerResult, OperationResult, OperationWithMetadata, OriginationResult, ProtocolError,
    RevealResult, SetDepositsLimitResult, TransactionOutcome, TransactionResult, UpdateOrigin,
};
pub use render::{render_failed_simulation, render_receipt};
pub use signature::{check_all, SignatureError};
