//! The operations contracts emit (`apply_internal_operations`): applied one at a time, depth
//! first — what an operation emits runs before the operations after it — each paying the
//! manager-operation cost out of the content's gas; the first failure fails it and skips the
//! rest. Nonces count the operation's emissions from 0, in the order the code emitted them.

use kestrel_crypto::Destination;
use kestrel_michelson::{InternalOperation, UnparsingMode};

use super::call::{self, Parameter};
use super::gas::{GasMeter, MANAGER_OPERATION_MILLI};
use super::manager::{set_delegate, to_implicit};
use super::originate::{self, NewContract};
use super::results::{
    DelegationResult, EventResult, InternalOperationResult, InternalPayload, InternalResult,
    OperationResult, TransactionResult,
};
use super::{ApplyError, Env, Fault};
use crate::ledger::LedgerError;

/// An emitted operation waiting to run.
struct Pending {
    sender: Destination,
    nonce: u64,
    operation: InternalOperation,
}

/// Runs `emitted` (by the contract content's call) and all they emit: whether all succeeded,
/// and their results in the order they ran (then the skipped ones).
pub fn apply_all(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    emitted: Vec<(Destination, InternalOperation)>,
) -> Result<(bool, Vec<InternalOperationResult>), LedgerError> {
    let mut worklist = number(env, emitted);
    worklist.reverse();
    let mut results = Vec::new();
    while let Some(pending) = worklist.pop() {
        let payload = payload(&pending.operation);
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
                results.push(internal_result(&pending, payload, result));
                let mut next = number(env, emitted);
                next.reverse();
                worklist.extend(next);
            }
            Err(Fault::Ledger(error)) => return Err(error),
            Err(Fault::Operation(error)) => {
                results.push(internal_result(
                    &pending,
                    payload,
                    failed(&pending.operation, &error),
                ));
                while let Some(skipped) = worklist.pop() {
                    let payload = payload_of(&skipped);
                    let status = skipped_result(&skipped.operation);
                    results.push(internal_result(&skipped, payload, status));
                }
                return Ok((false, results));
            }
        }
    }
    Ok((true, results))
}

/// Gives each emitted operation its operation-wide nonce.
fn number(env: &mut Env<'_>, emitted: Vec<(Destination, InternalOperation)>) -> Vec<Pending> {
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

type Emitted = Vec<(Destination, InternalOperation)>;

/// `apply_internal_operation_contents`.
fn apply_one(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    pending: &Pending,
) -> Result<(InternalResult, Emitted), Fault> {
    meter.consume(MANAGER_OPERATION_MILLI)?;
    let sender = pending.sender;
    match &pending.operation {
        InternalOperation::Transaction {
            destination,
            amount_mutez,
            parameter,
            ..
        } => {
            let amount = u64::try_from(*amount_mutez).map_err(|_| ApplyError::BalanceOverflow)?;
            let (result, emitted) = match destination.destination.to_crypto() {
                Destination::Implicit(account) => (
                    to_implicit(env, meter, sender, account, amount)?,
                    Vec::new(),
                ),
                Destination::Originated(contract) => {
                    let entrypoint = match destination.entrypoint.as_str() {
                        "" => "default",
                        name => name,
                    };
                    let args = call::CallArgs {
                        sender,
                        contract,
                        amount,
                        entrypoint,
                        parameter: Parameter::Typed(parameter),
                    };
                    let (result, emitted) = call::call(env, meter, &args)?;
                    let from = Destination::Originated(contract);
                    (
                        result,
                        emitted
                            .into_iter()
                            .map(|operation| (from, operation))
                            .collect(),
                    )
                }
                Destination::SmartRollup(_) => {
                    return Err(ApplyError::UnsupportedKind("transaction to a smart rollup").into())
                }
            };
            Ok((
                InternalResult::Transaction(OperationResult::Applied(result)),
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
                InternalResult::Origination(OperationResult::Applied(result)),
                Vec::new(),
            ))
        }
        InternalOperation::Delegation { delegate, .. } => {
            let delegate = delegate.map(|delegate| delegate.to_crypto());
            set_delegate(env.ledger, &sender, delegate.as_ref())?;
            let result = DelegationResult {
                balance_updates: Vec::new(),
                consumed_milligas: meter.consumed_milli(),
            };
            Ok((
                InternalResult::Delegation(OperationResult::Applied(result)),
                Vec::new(),
            ))
        }
        InternalOperation::Event { .. } => {
            let result = EventResult {
                consumed_milligas: meter.consumed_milli(),
            };
            Ok((
                InternalResult::Event(OperationResult::Applied(result)),
                Vec::new(),
            ))
        }
    }
}

fn internal_result(
    pending: &Pending,
    payload: InternalPayload,
    result: InternalResult,
) -> InternalOperationResult {
    InternalOperationResult {
        source: pending.sender,
        nonce: pending.nonce,
        payload,
        result,
    }
}

fn payload_of(pending: &Pending) -> InternalPayload {
    payload(&pending.operation)
}

/// What the receipt shows of an emitted operation.
fn payload(operation: &InternalOperation) -> InternalPayload {
    let optimized = |value| kestrel_michelson::normalize(value, UnparsingMode::Optimized);
    match operation {
        InternalOperation::Transaction {
            destination,
            amount_mutez,
            parameter,
            ..
        } => {
            let entrypoint = match destination.entrypoint.as_str() {
                "" => "default".to_string(),
                name => name.to_string(),
            };
            let argument = optimized(parameter);
            let is_unit_default = entrypoint == "default"
                && argument.known_prim() == Some(kestrel_micheline::Prim::D_Unit);
            InternalPayload::Transaction {
                amount: u64::try_from(*amount_mutez).unwrap_or(0),
                destination: destination.destination.to_crypto(),
                parameters: (!is_unit_default).then_some((entrypoint, argument)),
            }
        }
        InternalOperation::Origination {
            delegate,
            credit_mutez,
            script,
            storage,
            ..
        } => InternalPayload::Origination {
            delegate: delegate.map(|delegate| delegate.to_crypto()),
            code: script.clone(),
            storage: optimized(storage),
            credit: u64::try_from(*credit_mutez).unwrap_or(0),
        },
        InternalOperation::Delegation { delegate, .. } => InternalPayload::Delegation {
            delegate: delegate.map(|delegate| delegate.to_crypto()),
        },
        InternalOperation::Event {
            tag,
            payload_type,
            payload,
            ..
        } => InternalPayload::Event {
            tag: tag.clone(),
            payload_type: payload_type.clone(),
            payload: optimized(payload),
        },
    }
}

fn failed(operation: &InternalOperation, error: &ApplyError) -> InternalResult {
    let errors = error.to_protocol_errors();
    match operation {
        InternalOperation::Transaction { .. } => {
            InternalResult::Transaction(OperationResult::Failed(errors))
        }
        InternalOperation::Origination { .. } => {
            InternalResult::Origination(OperationResult::Failed(errors))
        }
        InternalOperation::Delegation { .. } => {
            InternalResult::Delegation(OperationResult::Failed(errors))
        }
        InternalOperation::Event { .. } => InternalResult::Event(OperationResult::Failed(errors)),
    }
}

fn skipped_result(operation: &InternalOperation) -> InternalResult {
    match operation {
        InternalOperation::Transaction { .. } => {
            InternalResult::Transaction(OperationResult::<TransactionResult>::Skipped)
        }
        InternalOperation::Origination { .. } => {
            InternalResult::Origination(OperationResult::Skipped)
        }
        InternalOperation::Delegation { .. } => {
            InternalResult::Delegation(OperationResult::Skipped)
        }
        InternalOperation::Event { .. } => InternalResult::Event(OperationResult::Skipped),
    }
}
