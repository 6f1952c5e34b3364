//! The operations contracts emit (`apply_internal_operations`): applied one at a time, depth
//! first — what an operation emits runs before the operations after it — each paying the
//! manager-operation cost out of the content's gas; the first failure fails it and skips the
//! rest. Nonces count the operation's emissions from 0, in the order the code emitted them.

use kestrel_crypto::Destination;
use kestrel_michelson::{InternalOperation, UnparsingMode};

use super::call::{self, Parameter};
use super::gas::{GasMeter, MANAGER_OPERATION_MILLI};
use super::lazy_storage::expression;
use super::manager::{credit_implicit, set_delegate, to_implicit};
use super::originate::{self, NewContract};
use super::ticket;
use super::{ApplyError, Env, Fault};
use crate::field::{Milligas, Mutez};
use crate::internal::{
    Event, InternalKind, InternalOperation as ReceiptOperation, InternalOrigination,
    InternalTransaction, TransactionDestination,
};
use crate::ledger::LedgerError;
use crate::manager::Delegation;
use crate::receipt::{
    DelegationResult, EventResult, InternalOperationResult, ManagerResult, OperationResult,
    TransactionOutcome, TransactionResult,
};
use crate::script::{LazyExpr, Parameters, Script};

/// An emitted operation waiting to run.
struct Pending {
    sender: Destination,
    nonce: u64,
    operation: InternalOperation,
}

/// Operations emitted by a contract, with the contract.
pub type Emitted = Vec<(Destination, InternalOperation)>;

/// Runs `emitted` (by the content's call) and all they emit: whether all succeeded, and their
/// results in the order they ran (then the skipped ones).
pub fn apply_all(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    emitted: Emitted,
) -> Result<(bool, Vec<InternalOperationResult<'static>>), LedgerError> {
    let mut worklist = number(env, emitted);
    worklist.reverse();
    let mut results = Vec::new();
    while let Some(pending) = worklist.pop() {
        let mut sub_meter = GasMeter::new(meter.remaining_milli());
        let outcome = apply_one(env, &mut sub_meter, &pending);
        let charged = meter.consume(sub_meter.consumed_milli());
        let outcome = match (outcome, charged) {
            (Ok(done), Ok(())) => Ok(done),
            (Err(fault), _) => Err(fault),
            (Ok(_), Err(exhausted)) => Err(exhausted.into()),
        };
        match outcome {
            Ok((result, emitted)) => {
                results.push(internal_result(&pending, result));
                let mut next = number(env, emitted);
                next.reverse();
                worklist.extend(next);
            }
            Err(Fault::Ledger(error)) => return Err(error),
            Err(Fault::Operation(error)) => {
                results.push(internal_result(
                    &pending,
                    failed(&pending.operation, &error),
                ));
                while let Some(skipped) = worklist.pop() {
                    let status = skipped_result(&skipped.operation);
                    results.push(internal_result(&skipped, status));
                }
                return Ok((false, results));
            }
        }
    }
    Ok((true, results))
}

/// Gives each emitted operation its operation-wide nonce.
fn number(env: &mut Env<'_>, emitted: Emitted) -> Vec<Pending> {
    let base = env.next_internal_nonce;
    let mut next = base;
    let pending = emitted
        .into_iter()
        .map(|(sender, operation)| {
            let nonce = base + local_nonce(&operation);
            next = next.max(nonce + 1);
            Pending {
                sender,
                nonce,
                operation,
            }
        })
        .collect();
    env.next_internal_nonce = next;
    pending
}

fn local_nonce(operation: &InternalOperation) -> u64 {
    match operation {
        InternalOperation::Transaction { nonce, .. }
        | InternalOperation::Origination { nonce, .. }
        | InternalOperation::Delegation { nonce, .. }
        | InternalOperation::Event { nonce, .. } => *nonce,
    }
}

/// `apply_internal_operation_contents`.
fn apply_one(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    pending: &Pending,
) -> Result<(ManagerResult<'static>, Emitted), Fault> {
    meter.consume(MANAGER_OPERATION_MILLI)?;
    let sender = pending.sender;
    match &pending.operation {
        InternalOperation::Transaction {
            destination,
            amount_mutez,
            parameter,
            parameter_type,
            ..
        } => {
            let amount = u64::try_from(*amount_mutez).map_err(|_| ApplyError::BalanceOverflow)?;
            let (result, emitted) = match destination.destination.to_crypto() {
                Destination::Implicit(account) if parameter_type.has_ticket() => (
                    to_implicit_with_ticket(env, meter, sender, account, amount, parameter)?,
                    Vec::new(),
                ),
                Destination::Implicit(account) => (
                    to_implicit(env, meter, sender, account, amount)?,
                    Vec::new(),
                ),
                Destination::Originated(contract) => {
                    let args = call::CallArgs {
                        sender,
                        contract,
                        amount,
                        entrypoint: entrypoint_name(&destination.entrypoint),
                        parameter: Parameter::Typed(parameter),
                    };
                    let (result, emitted) = call::call(env, meter, &args)?;
                    let from = Destination::Originated(contract);
                    let emitted = emitted.into_iter().map(|operation| (from, operation));
                    (result, emitted.collect())
                }
                Destination::SmartRollup(_) => {
                    return Err(ApplyError::UnsupportedKind("transaction to a smart rollup").into())
                }
            };
            let outcome = TransactionOutcome::Contract(result);
            Ok((
                ManagerResult::Transaction(OperationResult::Applied(outcome)),
                emitted,
            ))
        }
        InternalOperation::Origination {
            address,
            delegate,
            credit_mutez,
            script,
            storage,
            storage_type,
            ..
        } => {
            let Destination::Originated(address) = address.to_crypto() else {
                return Err(
                    ApplyError::UnsupportedKind("origination at an implicit address").into(),
                );
            };
            let contract = NewContract {
                address,
                sender,
                code: script,
                storage,
                storage_type,
                delegate: delegate.map(|delegate| delegate.to_crypto()),
                credit: u64::try_from(*credit_mutez).map_err(|_| ApplyError::BalanceOverflow)?,
            };
            let result = originate::originate(env, meter, &contract)?;
            Ok((
                ManagerResult::Origination(OperationResult::Applied(result)),
                Vec::new(),
            ))
        }
        InternalOperation::Delegation { delegate, .. } => {
            let delegate = delegate.map(|delegate| delegate.to_crypto());
            set_delegate(env.ledger, &sender, delegate.as_ref())?;
            let result = DelegationResult {
                consumed_milligas: Milligas(meter.consumed_milli()),
                balance_updates: Vec::new(),
            };
            Ok((
                ManagerResult::Delegation(OperationResult::Applied(result)),
                Vec::new(),
            ))
        }
        InternalOperation::Event { .. } => {
            let result = EventResult {
                consumed_milligas: Milligas(meter.consumed_milli()),
            };
            Ok((
                ManagerResult::Event(OperationResult::Applied(result)),
                Vec::new(),
            ))
        }
    }
}

/// `apply_transaction_to_implicit_with_ticket`: a ticket (the argument) and any amount, even
/// none, to an implicit account. The ticket's balance moved with the sender's accounting; the
/// receipt shows the account's gain.
fn to_implicit_with_ticket(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    sender: Destination,
    account: kestrel_crypto::PublicKeyHash,
    amount: u64,
    ticket: &kestrel_michelson::Value,
) -> Result<TransactionResult<'static>, Fault> {
    let destination = Destination::Implicit(account);
    let ticket_updates = match ticket::Token::of_ticket(ticket) {
        Some((token, amount)) => vec![ticket::receipt_item(
            meter,
            &token,
            vec![(destination, amount)],
        )?],
        None => Vec::new(),
    };
    credit_implicit(env, meter, sender, account, amount, ticket_updates)
}

/// The VM's entrypoint of an address (empty for `default`).
fn entrypoint_name(entrypoint: &str) -> &str {
    match entrypoint {
        "" => "default",
        name => name,
    }
}

fn internal_result(
    pending: &Pending,
    result: ManagerResult<'static>,
) -> InternalOperationResult<'static> {
    InternalOperationResult {
        operation: ReceiptOperation {
            source: TransactionDestination(pending.sender),
            nonce: u16::try_from(pending.nonce).unwrap_or(u16::MAX),
            operation: payload(&pending.operation),
        },
        result,
    }
}

/// An operation a script emitted as a receipt shows it (and the `run_code` RPC answers it):
/// `sender` the contract that ran, the nonce the one the run gave it.
pub fn emitted_operation(
    sender: Destination,
    operation: &InternalOperation,
) -> ReceiptOperation<'static> {
    ReceiptOperation {
        source: TransactionDestination(sender),
        nonce: u16::try_from(local_nonce(operation)).unwrap_or(u16::MAX),
        operation: payload(operation),
    }
}

/// What the receipt shows of an emitted operation (Micheline in optimized form).
fn payload(operation: &InternalOperation) -> InternalKind<'static> {
    let optimized = |value| {
        expression(&kestrel_michelson::normalize(
            value,
            UnparsingMode::Optimized,
        ))
    };
    match operation {
        InternalOperation::Transaction {
            destination,
            amount_mutez,
            parameter,
            ..
        } => {
            let entrypoint = entrypoint_name(&destination.entrypoint);
            let argument = kestrel_michelson::normalize(parameter, UnparsingMode::Optimized);
            let is_unit_default = entrypoint == "default"
                && argument.known_prim() == Some(kestrel_micheline::Prim::D_Unit);
            let parameters = kestrel_crypto::Entrypoint::try_new(entrypoint)
                .ok()
                .filter(|_| !is_unit_default)
                .map(|entrypoint| Parameters {
                    entrypoint,
                    value: LazyExpr(expression(&argument).0),
                });
            InternalKind::Transaction(InternalTransaction {
                amount: Mutez(u64::try_from(*amount_mutez).unwrap_or(0)),
                destination: TransactionDestination(destination.destination.to_crypto()),
                parameters,
            })
        }
        InternalOperation::Origination {
            delegate,
            credit_mutez,
            script,
            storage,
            ..
        } => InternalKind::Origination(InternalOrigination {
            balance: Mutez(u64::try_from(*credit_mutez).unwrap_or(0)),
            delegate: delegate.map(|delegate| delegate.to_crypto()),
            script: Script {
                code: LazyExpr(expression(script).0),
                storage: LazyExpr(optimized(storage).0),
            },
        }),
        InternalOperation::Delegation { delegate, .. } => InternalKind::Delegation(Delegation {
            delegate: delegate.map(|delegate| delegate.to_crypto()),
        }),
        InternalOperation::Event {
            tag,
            payload_type,
            payload,
            ..
        } => InternalKind::Event(Event {
            ty: expression(payload_type),
            tag: kestrel_crypto::Entrypoint::try_new(tag)
                .ok()
                .filter(|_| !tag.is_empty()),
            payload: Some(optimized(payload)),
        }),
    }
}

fn failed(operation: &InternalOperation, error: &ApplyError) -> ManagerResult<'static> {
    let errors = error.to_protocol_errors();
    match operation {
        InternalOperation::Transaction { .. } => {
            ManagerResult::Transaction(OperationResult::Failed(errors))
        }
        InternalOperation::Origination { .. } => {
            ManagerResult::Origination(OperationResult::Failed(errors))
        }
        InternalOperation::Delegation { .. } => {
            ManagerResult::Delegation(OperationResult::Failed(errors))
        }
        InternalOperation::Event { .. } => ManagerResult::Event(OperationResult::Failed(errors)),
    }
}

fn skipped_result(operation: &InternalOperation) -> ManagerResult<'static> {
    match operation {
        InternalOperation::Transaction { .. } => {
            ManagerResult::Transaction(OperationResult::Skipped)
        }
        InternalOperation::Origination { .. } => {
            ManagerResult::Origination(OperationResult::Skipped)
        }
        InternalOperation::Delegation { .. } => ManagerResult::Delegation(OperationResult::Skipped),
        InternalOperation::Event { .. } => ManagerResult::Event(OperationResult::Skipped),
    }
}
