//! Receipts: the metadata Octez attaches to an applied operation, as typed values mirroring
//! protocol 025's `apply_results.ml`, `apply_operation_result.ml`, `apply_internal_results.ml`,
//! `receipt_repr.ml`, `lazy_storage_diff.ml` and `ticket_receipt.ml`, with both of their forms
//! (binary, data-encoding; the RPC's JSON).
//!
//! Map: [`balance`] (balance updates: every balance category, the change, the origin),
//! [`result`] (applied / failed / skipped / backtracked, errors as data), `bson` (the binary form
//! of errors), [`lazy_storage`] (big map and sapling diffs), [`ticket`] (ticket receipts),
//! [`manager`] (one result record per manager kind), [`internal`] (internal operations with
//! their results), [`contents`] (the metadata of each content kind, contents with metadata).
//!
//! Producers (application) build these values with owned data (`'static`); decoders borrow
//! Micheline bytes from their input as the operation codec does.

pub mod balance;
mod bson;
pub mod contents;
pub mod internal;
pub mod lazy_storage;
pub mod manager;
pub mod result;
pub mod ticket;

pub use balance::{Balance, BalanceUpdate, FrozenStaker, UnstakedStaker, UpdateOrigin};
pub use contents::{ContentsAndMetadata, ContentsMetadata, ManagerMetadata, OperationWithMetadata};
pub use internal::InternalOperationResult;
pub use lazy_storage::{BigMapUpdate, LazyStorageDiff, LazyStorageItem, StorageDiff};
pub use manager::{
    DelegationResult, EventResult, IncreasePaidStorageResult, ManagerResult, OriginationResult,
    ResultKind, RevealResult, SetDepositsLimitResult, TransactionOutcome, TransactionResult,
    TransferTicketResult,
};
pub use result::{OperationResult, ProtocolError};
