//! Converts what `validate_and_apply` returns (`kestrel_protocol::apply::results`) into the
//! protocol's receipt types (`kestrel_protocol::receipt`), which the renderer prints and the
//! estimation reads. Application and receipts were built side by side with two shapes of the
//! same metadata; this is the one seam between them, to fold into the protocol crate once
//! application returns receipt types.

use kestrel_crypto::{Entrypoint, ScriptExprHash};
use kestrel_micheline::Node;
use kestrel_protocol::apply::results as applied;
use kestrel_protocol::crypto_fields::Contract;
use kestrel_protocol::field::{Milligas, Z64};
use kestrel_protocol::internal::{
    Event, InternalKind, InternalOperation, InternalOrigination, InternalTransaction,
    MichelineExpr, TransactionDestination,
};
use kestrel_protocol::manager::Delegation;
use kestrel_protocol::receipt::{
    self, BalanceUpdate, ContentsMetadata, InternalOperationResult, LazyStorageDiff,
    LazyStorageItem, ManagerMetadata, ManagerResult, OperationResult, ProtocolError, StorageDiff,
    TransactionOutcome,
};
use kestrel_protocol::script::{LazyExpr, Parameters, Script};
use kestrel_protocol::Mutez;
use std::borrow::Cow;

/// The receipt of each content.
pub fn contents_metadata(metadata: &[applied::ContentsMetadata]) -> Vec<ContentsMetadata<'static>> {
    metadata
        .iter()
        .map(|content| match content {
            applied::ContentsMetadata::Manager(manager) => {
                ContentsMetadata::Manager(ManagerMetadata {
                    balance_updates: balance_updates(&manager.balance_updates),
                    operation_result: manager_result(&manager.operation_result),
                    internal_operation_results: manager
                        .internal_operation_results
                        .iter()
                        .map(internal)
                        .collect(),
                })
            }
        })
        .collect()
}

fn balance_updates(updates: &[applied::BalanceUpdate]) -> Vec<BalanceUpdate> {
    updates
        .iter()
        .map(|update| BalanceUpdate {
            balance: match &update.balance {
                applied::Balance::Contract(destination) => {
                    receipt::Balance::Contract(Contract(*destination))
                }
                applied::Balance::BlockFees => receipt::Balance::BlockFees,
                applied::Balance::StorageFees => receipt::Balance::StorageFees,
            },
            change: update.change,
            origin: match update.origin {
                applied::UpdateOrigin::Block => receipt::UpdateOrigin::Block,
                applied::UpdateOrigin::Simulation => receipt::UpdateOrigin::Simulation,
            },
        })
        .collect()
}

fn errors(errors: &[applied::ProtocolError]) -> Vec<ProtocolError> {
    errors
        .iter()
        .map(|error| ProtocolError {
            // Application does not classify its errors; every one it raises is permanent for
            // the operation (Octez's `Permanent` for script failures and ill-typed data).
            category: "permanent".to_string(),
            id: error.id.clone(),
            fields: error.fields.clone(),
        })
        .collect()
}

fn status<T, U>(
    result: &applied::OperationResult<T>,
    convert: impl Fn(&T) -> U,
) -> OperationResult<U> {
    match result {
        applied::OperationResult::Applied(value) => OperationResult::Applied(convert(value)),
        applied::OperationResult::Failed(list) => OperationResult::Failed(errors(list)),
        applied::OperationResult::Skipped => OperationResult::Skipped,
        applied::OperationResult::Backtracked {
            errors: list,
            result,
        } => OperationResult::Backtracked {
            errors: list.as_deref().map(errors),
            result: convert(result),
        },
    }
}

fn expr(node: &Node) -> MichelineExpr<'static> {
    MichelineExpr(Cow::Owned(binary(node)))
}

fn lazy(node: &Node) -> LazyExpr<'static> {
    LazyExpr(Cow::Owned(binary(node)))
}

/// Application's nodes come from typechecked values, whose binary form always exists.
fn binary(node: &Node) -> Vec<u8> {
    kestrel_micheline::binary::encode(node).unwrap_or_default()
}

fn size(bytes: u64) -> Z64 {
    Z64(i64::try_from(bytes).unwrap_or(i64::MAX))
}

fn transaction(result: &applied::TransactionResult) -> TransactionOutcome<'static> {
    TransactionOutcome::Contract(receipt::TransactionResult {
        storage: result.storage.as_ref().map(expr),
        balance_updates: balance_updates(&result.balance_updates),
        ticket_updates: Vec::new(),
        originated_contracts: result.originated_contracts.clone(),
        consumed_milligas: Milligas(result.consumed_milligas),
        storage_size: size(result.storage_size),
        paid_storage_size_diff: size(result.paid_storage_size_diff),
        allocated_destination_contract: result.allocated_destination_contract,
        lazy_storage_diff: result.lazy_storage_diff.as_ref().map(lazy_storage_diff),
        address_registry_diff: Vec::new(),
    })
}

fn origination(result: &applied::OriginationResult) -> receipt::OriginationResult<'static> {
    receipt::OriginationResult {
        balance_updates: balance_updates(&result.balance_updates),
        originated_contracts: result.originated_contracts.clone(),
        consumed_milligas: Milligas(result.consumed_milligas),
        storage_size: size(result.storage_size),
        paid_storage_size_diff: size(result.paid_storage_size_diff),
        lazy_storage_diff: result.lazy_storage_diff.as_ref().map(lazy_storage_diff),
    }
}

fn delegation(result: &applied::DelegationResult) -> receipt::DelegationResult {
    receipt::DelegationResult {
        consumed_milligas: Milligas(result.consumed_milligas),
        balance_updates: balance_updates(&result.balance_updates),
    }
}

fn gas(consumed_milligas: u64) -> receipt::RevealResult {
    receipt::RevealResult {
        consumed_milligas: Milligas(consumed_milligas),
    }
}

fn manager_result(result: &applied::ManagerResult) -> ManagerResult<'static> {
    match result {
        applied::ManagerResult::Reveal(r) => {
            ManagerResult::Reveal(status(r, |r| gas(r.consumed_milligas)))
        }
        applied::ManagerResult::Transaction(r) => {
            ManagerResult::Transaction(status(r, transaction))
        }
        applied::ManagerResult::Origination(r) => {
            ManagerResult::Origination(status(r, origination))
        }
        applied::ManagerResult::Delegation(r) => ManagerResult::Delegation(status(r, delegation)),
        applied::ManagerResult::IncreasePaidStorage(r) => {
            ManagerResult::IncreasePaidStorage(status(r, |r| receipt::IncreasePaidStorageResult {
                balance_updates: balance_updates(&r.balance_updates),
                consumed_milligas: Milligas(r.consumed_milligas),
            }))
        }
    }
}

fn lazy_storage_diff(diff: &applied::LazyStorageDiff) -> LazyStorageDiff<'static> {
    let updates = |items: &[applied::BigMapUpdateItem]| -> Vec<receipt::BigMapUpdate<'static>> {
        items
            .iter()
            .map(|item| receipt::BigMapUpdate {
                key_hash: ScriptExprHash::new(item.key_hash),
                key: expr(&item.key),
                value: item.value.as_ref().map(expr),
            })
            .collect()
    };
    LazyStorageDiff(
        diff.big_maps
            .iter()
            .map(|item| LazyStorageItem::BigMap {
                id: Z64(item.id),
                diff: match &item.action {
                    applied::BigMapAction::Alloc {
                        key_type,
                        value_type,
                        updates: items,
                    } => StorageDiff::Alloc {
                        updates: updates(items),
                        alloc: receipt::lazy_storage::BigMapAlloc {
                            key_type: expr(key_type),
                            value_type: expr(value_type),
                        },
                    },
                    applied::BigMapAction::Copy {
                        source,
                        updates: items,
                    } => StorageDiff::Copy {
                        source: Z64(*source),
                        updates: updates(items),
                    },
                    applied::BigMapAction::Update { updates: items } => {
                        StorageDiff::Update(updates(items))
                    }
                    applied::BigMapAction::Remove => StorageDiff::Remove,
                },
            })
            .collect(),
    )
}

fn internal(result: &applied::InternalOperationResult) -> InternalOperationResult<'static> {
    let operation = match &result.payload {
        applied::InternalPayload::Transaction {
            amount,
            destination,
            parameters,
        } => InternalKind::Transaction(InternalTransaction {
            amount: Mutez(*amount),
            destination: TransactionDestination(*destination),
            parameters: parameters.as_ref().map(|(entrypoint, value)| Parameters {
                entrypoint: Entrypoint::try_new(entrypoint)
                    .unwrap_or_else(|_| Entrypoint::default_entrypoint()),
                value: lazy(value),
            }),
        }),
        applied::InternalPayload::Origination {
            delegate,
            code,
            storage,
            credit,
        } => InternalKind::Origination(InternalOrigination {
            balance: Mutez(*credit),
            delegate: *delegate,
            script: Script {
                code: lazy(code),
                storage: lazy(storage),
            },
        }),
        applied::InternalPayload::Delegation { delegate } => InternalKind::Delegation(Delegation {
            delegate: *delegate,
        }),
        applied::InternalPayload::Event {
            tag,
            payload_type,
            payload,
        } => InternalKind::Event(Event {
            ty: expr(payload_type),
            tag: Entrypoint::try_new(tag).ok().filter(|t| !t.is_default()),
            payload: Some(expr(payload)),
        }),
    };
    let result_of = match &result.result {
        applied::InternalResult::Transaction(r) => {
            ManagerResult::Transaction(status(r, transaction))
        }
        applied::InternalResult::Origination(r) => {
            ManagerResult::Origination(status(r, origination))
        }
        applied::InternalResult::Delegation(r) => ManagerResult::Delegation(status(r, delegation)),
        applied::InternalResult::Event(r) => {
            ManagerResult::Event(status(r, |r| gas(r.consumed_milligas)))
        }
    };
    InternalOperationResult {
        operation: InternalOperation {
            source: TransactionDestination(result.source),
            nonce: u16::try_from(result.nonce).unwrap_or(u16::MAX),
            operation,
        },
        result: result_of,
    }
}
