//! One manager content (`apply_manager_contents`): its fee and counter, its kind applied under
//! its gas limit, its internal operations, and the storage it burns within its storage limit.

use kestrel_crypto::{Destination, PublicKeyHash};
use kestrel_micheline::{Node, NodeKind, Prim};

use super::call::{self, Parameter};
use super::gas::{
    deserialization_milli, GasMeter, MANAGER_OPERATION_MILLI, TRANSFER_OPERATION_MILLI,
};
use super::internal;
use super::ticket;
use super::token::{self, Account};
use super::{originate, ApplyError, Env, Fault};
use crate::contents::{ManagerKind, ManagerOperation};
use crate::field::Milligas;
use crate::ledger::{Ledger, LedgerError, Manager};
use crate::manager::{IncreasePaidStorage, Transaction, TransferTicket};
use crate::receipt::{
    BalanceUpdate, DelegationResult, IncreasePaidStorageResult, InternalOperationResult,
    ManagerMetadata, ManagerResult, OperationResult, OriginationResult, ProtocolError,
    RevealResult, TransactionOutcome, TransactionResult, TransferTicketResult, UpdateOrigin,
};

/// Bytes of `Unit` in binary Micheline: what decoding an absent parameter is charged for.
const UNIT_PARAMETER_BYTES: u64 = 2;

/// `take_fees` for one content: the counter advanced (the source's and the global one) and the
/// fee moved to the block's fees. Validation made sure it is payable.
pub fn take_fees(
    ledger: &mut Ledger,
    content: &ManagerOperation<'_>,
    origin: UpdateOrigin,
) -> Result<Vec<BalanceUpdate>, LedgerError> {
    let source = content.header.source;
    let counter = ledger.counter(&source)?.unwrap_or_default();
    ledger.set_counter(&source, counter.saturating_add(1))?;
    let global = ledger.global_counter()?;
    ledger.set_global_counter(global.saturating_add(1))?;
    let from = Account::Contract(Destination::Implicit(source));
    match token::transfer(
        ledger,
        from,
        Account::BlockFees,
        content.header.fee.0,
        origin,
    ) {
        Ok(updates) => Ok(updates),
        Err(Fault::Ledger(error)) => Err(error),
        Err(Fault::Operation(error)) => Err(LedgerError::Corrupt {
            path: format!("fees of a validated operation: {error}"),
            expected: "a payable fee",
        }),
    }
}

/// What a content produced before its burns.
pub enum Success {
    Reveal(RevealResult),
    Transaction(TransactionResult<'static>),
    Origination(OriginationResult<'static>),
    Delegation(DelegationResult),
    IncreasePaidStorage(IncreasePaidStorageResult),
    TransferTicket(TransferTicketResult<'static>),
}

/// Applies one content: `(result, internal results, success)`.
pub fn apply_content(
    env: &mut Env<'_>,
    content: &ManagerOperation<'_>,
    signature_check_milli: u64,
) -> Result<
    (
        ManagerResult<'static>,
        Vec<InternalOperationResult<'static>>,
        bool,
    ),
    LedgerError,
> {
    let gas_limit_milli =
        u64::try_from(content.header.gas_limit.0.saturating_mul(1000)).unwrap_or(u64::MAX);
    let mut meter = GasMeter::new(gas_limit_milli);
    let kind = &content.operation;
    let (success, emitted) = match apply_kind(env, &mut meter, content, signature_check_milli) {
        Ok(done) => done,
        Err(Fault::Ledger(error)) => return Err(error),
        Err(Fault::Operation(error)) => return Ok((failed(kind, &error), Vec::new(), false)),
    };
    let (internal_ok, mut internals) = internal::apply_all(env, &mut meter, emitted)?;
    if !internal_ok {
        return Ok((applied(success), internals, false));
    }
    let mut success = success;
    let mut storage_left = i128::try_from(content.header.storage_limit.0).unwrap_or(i128::MAX);
    let burnt = burn_content(env, &mut success, &mut storage_left)
        .and_then(|()| burn_internals(env, &mut internals, &mut storage_left));
    match burnt {
        Ok(()) => Ok((applied(success), internals, true)),
        Err(Fault::Operation(error)) => Ok((backtracked_with(success, error), internals, false)),
        Err(Fault::Ledger(error)) => Err(error),
    }
}

/// The kind's own application (`apply_manager_operation`).
fn apply_kind(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    content: &ManagerOperation<'_>,
    signature_check_milli: u64,
) -> Result<
    (
        Success,
        Vec<(Destination, kestrel_michelson::InternalOperation)>,
    ),
    Fault,
> {
    meter.consume(MANAGER_OPERATION_MILLI.saturating_add(signature_check_milli))?;
    let source = content.header.source;
    match &content.operation {
        ManagerKind::Reveal(reveal) => {
            let manager = Manager::PublicKey(Box::new(reveal.public_key.clone()));
            env.ledger.set_manager(&source, &manager)?;
            let result = RevealResult {
                consumed_milligas: Milligas(meter.consumed_milli()),
            };
            Ok((Success::Reveal(result), Vec::new()))
        }
        ManagerKind::Transaction(transaction) => apply_transaction(env, meter, source, transaction),
        ManagerKind::Origination(origination) => {
            let result = originate::external(env, meter, source, origination)?;
            Ok((Success::Origination(result), Vec::new()))
        }
        ManagerKind::Delegation(delegation) => {
            let contract = Destination::Implicit(source);
            set_delegate(env.ledger, &contract, delegation.delegate.as_ref())?;
            let result = DelegationResult {
                balance_updates: Vec::new(),
                consumed_milligas: Milligas(meter.consumed_milli()),
            };
            Ok((Success::Delegation(result), Vec::new()))
        }
        ManagerKind::IncreasePaidStorage(increase) => {
            let result = increase_paid_storage(env, meter, source, increase)?;
            Ok((Success::IncreasePaidStorage(result), Vec::new()))
        }
        ManagerKind::TransferTicket(transfer) => {
            let (result, emitted) = transfer_ticket(env, meter, source, transfer)?;
            Ok((Success::TransferTicket(result), emitted))
        }
        other => Err(ApplyError::UnsupportedKind(other.kind_name()).into()),
    }
}

fn apply_transaction(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    source: PublicKeyHash,
    transaction: &Transaction<'_>,
) -> Result<
    (
        Success,
        Vec<(Destination, kestrel_michelson::InternalOperation)>,
    ),
    Fault,
> {
    let (entrypoint, parameter) = match &transaction.parameters {
        Some(parameters) => {
            let bytes = parameters.value.bytes();
            meter.consume(deserialization_milli(bytes.len() as u64))?;
            let node = kestrel_micheline::binary::decode(bytes)
                .map_err(|error| ApplyError::IllTypedContract(error.to_string()))?;
            (parameters.entrypoint.as_str().to_string(), node)
        }
        None => {
            meter.consume(deserialization_milli(UNIT_PARAMETER_BYTES))?;
            ("default".to_string(), Node::prim(Prim::D_Unit, Vec::new()))
        }
    };
    let sender = Destination::Implicit(source);
    let amount = transaction.amount.0;
    match transaction.destination.0 {
        Destination::Implicit(account) => {
            if entrypoint != "default" {
                return Err(ApplyError::UnsupportedEntrypoint(entrypoint).into());
            }
            if !is_unit(&parameter) {
                return Err(ApplyError::BadContractParameter(sender).into());
            }
            let result = to_implicit(env, meter, sender, account, amount)?;
            Ok((Success::Transaction(result), Vec::new()))
        }
        Destination::Originated(contract) => {
            let call = call::CallArgs {
                sender,
                contract,
                amount,
                entrypoint: &entrypoint,
                parameter: Parameter::Untyped(&parameter),
            };
            let (result, emitted) = call::call(env, meter, &call)?;
            let from = Destination::Originated(contract);
            let emitted = emitted
                .into_iter()
                .map(|operation| (from, operation))
                .collect();
            Ok((Success::Transaction(result), emitted))
        }
        Destination::SmartRollup(_) => {
            Err(ApplyError::UnsupportedKind("transaction to a smart rollup").into())
        }
    }
}

/// `Transfer_ticket`: `amount` of the ticket moved from the source's balance to the
/// destination's — to an implicit account directly, to a contract by an internal call of its
/// entrypoint with the ticket (which shows the contract's gain in its own receipt).
fn transfer_ticket(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    source: PublicKeyHash,
    transfer: &TransferTicket<'_>,
) -> Result<
    (
        TransferTicketResult<'static>,
        Vec<(Destination, kestrel_michelson::InternalOperation)>,
    ),
    Fault,
> {
    let contents = decode_lazy(meter, transfer.ticket_contents.bytes())?;
    let ty = decode_lazy(meter, transfer.ticket_ty.bytes())?;
    let invalid = |why: String| Fault::from(ApplyError::InvalidTicketContents(why));
    // `Ticket_transfer.parse_ticket`: the type (`parse_comparable_ty`), then the contents
    // (`parse_comparable_data`).
    let (content_type, type_milli) = kestrel_michelson::typecheck_type(&ty, false)
        .map_err(|error| invalid(error.to_string()))?;
    meter.consume(type_milli)?;
    if !content_type.is_comparable() {
        return Err(invalid("the contents' type is not comparable".into()));
    }
    let (_, contents_milli) =
        kestrel_michelson::typecheck_data_standalone(&contents, &content_type, false)
            .map_err(|error| invalid(error.to_string()))?;
    meter.consume(contents_milli)?;
    let ticketer = transfer.ticket_ticketer.0;
    let amount = num_bigint::BigInt::from(transfer.ticket_amount.0.clone());
    // The ticket as a value of type `ticket <ty>` (its readable form `Pair ticketer contents
    // amount`): what the destination contract receives.
    let ticket_type = kestrel_michelson::Type::Ticket(std::rc::Rc::new(content_type));
    let ticket_node = Node::prim(
        Prim::D_Pair,
        vec![
            Node::bytes(ticketer.to_bytes().to_vec()),
            contents,
            Node::int(amount.clone()),
        ],
    );
    let (ticket, _) =
        kestrel_michelson::typecheck_data_standalone(&ticket_node, &ticket_type, false)
            .map_err(|error| invalid(error.to_string()))?;
    let (token, _) =
        ticket::Token::of_ticket(&ticket).ok_or_else(|| invalid("not a ticket".into()))?;
    let sender = Destination::Implicit(source);
    let destination = transfer.destination.0;
    let entrypoint = transfer.entrypoint.0.as_str();
    let emitted = match destination {
        Destination::Originated(_) => {
            // `parse_ticket_and_operation` unparses the ticket as the call's argument.
            meter.consume(kestrel_michelson::unparse_data_cost_milli(&ticket))?;
            let operation = kestrel_michelson::InternalOperation::Transaction {
                destination: kestrel_michelson::Address {
                    destination: crate::host::vm_destination(&destination),
                    entrypoint: if entrypoint == "default" {
                        String::new()
                    } else {
                        entrypoint.to_string()
                    },
                },
                amount_mutez: 0,
                parameter: ticket,
                parameter_type: ticket_type,
                nonce: 0,
            };
            vec![(sender, operation)]
        }
        _ if entrypoint != "default" => {
            return Err(ApplyError::NoSuchEntrypoint(entrypoint.to_string()).into())
        }
        _ => Vec::new(),
    };
    let paid = ticket::transfer(env.ledger, meter, &token, &sender, &destination, &amount)?;
    let mut updates = vec![(sender, -amount.clone())];
    if emitted.is_empty() {
        updates.push((destination, amount));
    }
    let result = TransferTicketResult {
        balance_updates: Vec::new(),
        ticket_updates: vec![ticket::receipt_item(meter, &token, updates)?],
        consumed_milligas: Milligas(meter.consumed_milli()),
        paid_storage_size_diff: crate::field::Z64(i64::try_from(paid).unwrap_or(i64::MAX)),
    };
    Ok((result, emitted))
}

/// A lazy expression of an operation decoded, its deserialization charged.
fn decode_lazy(meter: &mut GasMeter, bytes: &[u8]) -> Result<Node, Fault> {
    meter.consume(deserialization_milli(bytes.len() as u64))?;
    kestrel_micheline::binary::decode(bytes)
        .map_err(|error| ApplyError::InvalidTicketContents(error.to_string()).into())
}

fn is_unit(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Prim { args, .. } if args.is_empty() && node.known_prim() == Some(Prim::D_Unit))
}

/// `apply_transaction_to_implicit`: a non-zero amount, allocating the destination if needed.
pub fn to_implicit(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    sender: Destination,
    account: PublicKeyHash,
    amount: u64,
) -> Result<TransactionResult<'static>, Fault> {
    if amount == 0 {
        return Err(ApplyError::EmptyTransaction(Destination::Implicit(account)).into());
    }
    credit_implicit(env, meter, sender, account, amount, Vec::new())
}

/// A transfer to an implicit account, allocating it if needed, its receipt showing
/// `ticket_updates` (a ticket sent along, `apply_transaction_to_implicit_with_ticket`, where the
/// amount may be zero: nothing moves then).
pub fn credit_implicit(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    sender: Destination,
    account: PublicKeyHash,
    amount: u64,
    ticket_updates: Vec<crate::receipt::ticket::TicketReceiptItem<'static>>,
) -> Result<TransactionResult<'static>, Fault> {
    let destination = Destination::Implicit(account);
    meter.consume(TRANSFER_OPERATION_MILLI)?;
    let allocated = env.ledger.is_allocated(&destination)?;
    let balance_updates = if amount == 0 {
        Vec::new()
    } else {
        token::transfer(
            env.ledger,
            Account::Contract(sender),
            Account::Contract(destination),
            amount,
            env.origin,
        )?
    };
    Ok(TransactionResult {
        storage: None,
        balance_updates,
        ticket_updates,
        originated_contracts: Vec::new(),
        consumed_milligas: Milligas(meter.consumed_milli()),
        storage_size: crate::field::Z64(0),
        paid_storage_size_diff: crate::field::Z64(0),
        allocated_destination_contract: !allocated,
        lazy_storage_diff: None,
        address_registry_diff: Vec::new(),
    })
}

/// Whether `account` is a registered delegate (`Delegate_storage.registered`): an implicit
/// account delegating to itself, since registration (`Storage.Delegates.add`) happens only with
/// self-delegation and a registered delegate can change its delegate no more (`No_deletion`).
pub fn registered(ledger: &Ledger, account: &PublicKeyHash) -> Result<bool, Fault> {
    Ok(ledger.delegate(&Destination::Implicit(*account))?.as_ref() == Some(account))
}

/// `Contract.Delegate.set`: a delegate must be registered (delegate to itself), except for
/// self-delegation, which registers.
pub fn set_delegate(
    ledger: &mut Ledger,
    contract: &Destination,
    delegate: Option<&PublicKeyHash>,
) -> Result<(), Fault> {
    let not_tz5 = |account: &PublicKeyHash| {
        if account.scheme() == kestrel_crypto::SignatureScheme::MlDsa44 {
            Err(ApplyError::Tz5CannotBeADelegate(*account))
        } else {
            Ok(())
        }
    };
    match (contract, delegate) {
        (Destination::Implicit(source), Some(delegate)) if source == delegate => {
            // `set_self_delegate`: a registered delegate is active here (deactivation is not
            // modelled), so registering again is refused.
            if registered(ledger, source)? {
                return Err(ApplyError::ActiveDelegate.into());
            }
            not_tz5(source)?;
        }
        _ => {
            if let Destination::Implicit(account) = contract {
                if registered(ledger, account)? {
                    return Err(ApplyError::NoDeletion(*account).into());
                }
            }
            let current = ledger.delegate(contract)?;
            if delegate.is_some() && delegate == current.as_ref() {
                return Err(ApplyError::CurrentDelegate.into());
            }
            if let Some(delegate) = delegate {
                not_tz5(delegate)?;
                if !registered(ledger, delegate)? {
                    return Err(ApplyError::UnregisteredDelegate(*delegate).into());
                }
            }
        }
    }
    ledger.set_delegate(contract, delegate)?;
    Ok(())
}

fn increase_paid_storage(
    env: &mut Env<'_>,
    meter: &GasMeter,
    source: PublicKeyHash,
    increase: &IncreasePaidStorage,
) -> Result<IncreasePaidStorageResult, Fault> {
    let amount = u64::try_from(&increase.amount.0)
        .ok()
        .filter(|amount| *amount > 0)
        .ok_or(ApplyError::NegativeStorageInput)?;
    let contract = Destination::Originated(increase.destination);
    if !env.ledger.is_allocated(&contract)? {
        return Err(ApplyError::NonExistingContract(contract).into());
    }
    let paid = env.ledger.paid_bytes(&increase.destination)?;
    env.ledger.set_paid_bytes(
        &increase.destination,
        paid.saturating_add(u128::from(amount)),
    )?;
    let cost = env
        .ledger
        .constants()
        .cost_per_byte_mutez
        .saturating_mul(amount);
    let payer = Account::Contract(Destination::Implicit(source));
    let balance_updates =
        token::transfer(env.ledger, payer, Account::StorageFees, cost, env.origin)?;
    Ok(IncreasePaidStorageResult {
        balance_updates,
        consumed_milligas: Milligas(meter.consumed_milli()),
    })
}

/// `burn_manager_storage_fees`: on failure the result is left as it was.
fn burn_content(
    env: &mut Env<'_>,
    success: &mut Success,
    storage_left: &mut i128,
) -> Result<(), Fault> {
    match success {
        Success::Transaction(result) => burn_transaction(env, result, storage_left),
        Success::Origination(result) => burn_origination(env, result, storage_left),
        Success::TransferTicket(result) => {
            let burnt = burn_storage(env, storage_left, paid_bytes(result.paid_storage_size_diff))?;
            result.balance_updates.extend(burnt);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `burn_internal_storage_fees` for each applied internal result, in order.
fn burn_internals(
    env: &mut Env<'_>,
    internals: &mut [InternalOperationResult<'static>],
    storage_left: &mut i128,
) -> Result<(), Fault> {
    for internal in internals.iter_mut() {
        match &mut internal.result {
            ManagerResult::Transaction(OperationResult::Applied(TransactionOutcome::Contract(
                result,
            ))) => burn_transaction(env, result, storage_left)?,
            ManagerResult::Origination(OperationResult::Applied(result)) => {
                burn_origination(env, result, storage_left)?
            }
            _ => {}
        }
    }
    Ok(())
}

/// The burn of the bytes newly paid for, the transfer, and the allocation's burn.
fn burn_transaction(
    env: &mut Env<'_>,
    result: &mut TransactionResult<'static>,
    storage_left: &mut i128,
) -> Result<(), Fault> {
    let mut updates = burn_storage(env, storage_left, paid_bytes(result.paid_storage_size_diff))?;
    updates.extend(result.balance_updates.iter().cloned());
    if result.allocated_destination_contract {
        let origination_size = env.ledger.constants().origination_size_bytes;
        updates.extend(burn_storage(env, storage_left, origination_size)?);
    }
    result.balance_updates = updates;
    Ok(())
}

/// The burn of the bytes paid for, the origination's burn, and the credit.
fn burn_origination(
    env: &mut Env<'_>,
    result: &mut OriginationResult<'static>,
    storage_left: &mut i128,
) -> Result<(), Fault> {
    let mut updates = burn_storage(env, storage_left, paid_bytes(result.paid_storage_size_diff))?;
    let origination_size = env.ledger.constants().origination_size_bytes;
    updates.extend(burn_storage(env, storage_left, origination_size)?);
    updates.extend(result.balance_updates.iter().cloned());
    result.balance_updates = updates;
    Ok(())
}

/// `Fees.burn_storage_fees`: `bytes` out of the storage limit, `cost_per_byte` each burnt.
fn burn_storage(
    env: &mut Env<'_>,
    storage_left: &mut i128,
    bytes: u64,
) -> Result<Vec<BalanceUpdate>, Fault> {
    *storage_left -= i128::from(bytes);
    if *storage_left < 0 {
        return Err(ApplyError::StorageExhausted.into());
    }
    let cost = env
        .ledger
        .constants()
        .cost_per_byte_mutez
        .saturating_mul(bytes);
    let payer = Account::Contract(Destination::Implicit(env.payer));
    token::transfer(env.ledger, payer, Account::StorageFees, cost, env.origin)
}

fn paid_bytes(diff: crate::field::Z64) -> u64 {
    u64::try_from(diff.0).unwrap_or(0)
}

fn applied(success: Success) -> ManagerResult<'static> {
    match success {
        Success::Reveal(result) => ManagerResult::Reveal(OperationResult::Applied(result)),
        Success::Transaction(result) => ManagerResult::Transaction(OperationResult::Applied(
            TransactionOutcome::Contract(result),
        )),
        Success::Origination(result) => {
            ManagerResult::Origination(OperationResult::Applied(result))
        }
        Success::Delegation(result) => ManagerResult::Delegation(OperationResult::Applied(result)),
        Success::IncreasePaidStorage(result) => {
            ManagerResult::IncreasePaidStorage(OperationResult::Applied(result))
        }
        Success::TransferTicket(result) => {
            ManagerResult::TransferTicket(OperationResult::Applied(result))
        }
    }
}

fn backtracked_with(success: Success, error: ApplyError) -> ManagerResult<'static> {
    let mut result = applied(success);
    let errors = error.to_protocol_errors();
    backtrack_result(&mut result, Some(errors));
    result
}

/// The result of a content that failed.
fn failed(kind: &ManagerKind<'_>, error: &ApplyError) -> ManagerResult<'static> {
    let errors = error.to_protocol_errors();
    match kind {
        ManagerKind::Reveal(_) => ManagerResult::Reveal(OperationResult::Failed(errors)),
        ManagerKind::Origination(_) => ManagerResult::Origination(OperationResult::Failed(errors)),
        ManagerKind::Delegation(_) => ManagerResult::Delegation(OperationResult::Failed(errors)),
        ManagerKind::IncreasePaidStorage(_) => {
            ManagerResult::IncreasePaidStorage(OperationResult::Failed(errors))
        }
        ManagerKind::TransferTicket(_) => {
            ManagerResult::TransferTicket(OperationResult::Failed(errors))
        }
        _ => ManagerResult::Transaction(OperationResult::Failed(errors)),
    }
}

/// The result of a content not tried.
pub fn skipped(content: &ManagerOperation<'_>) -> ManagerResult<'static> {
    match &content.operation {
        ManagerKind::Reveal(_) => ManagerResult::Reveal(OperationResult::Skipped),
        ManagerKind::Origination(_) => ManagerResult::Origination(OperationResult::Skipped),
        ManagerKind::Delegation(_) => ManagerResult::Delegation(OperationResult::Skipped),
        ManagerKind::IncreasePaidStorage(_) => {
            ManagerResult::IncreasePaidStorage(OperationResult::Skipped)
        }
        ManagerKind::TransferTicket(_) => ManagerResult::TransferTicket(OperationResult::Skipped),
        _ => ManagerResult::Transaction(OperationResult::Skipped),
    }
}

/// `mark_backtracked`: applied results (the content's and its internal operations') become
/// backtracked.
pub fn backtrack(metadata: &mut ManagerMetadata<'static>) {
    backtrack_result(&mut metadata.operation_result, None);
    for internal in &mut metadata.internal_operation_results {
        backtrack_result(&mut internal.result, None);
    }
}

fn backtrack_result(result: &mut ManagerResult, errors: Option<Vec<ProtocolError>>) {
    match result {
        ManagerResult::Reveal(result) => backtrack_status(result, errors),
        ManagerResult::Transaction(result) => backtrack_status(result, errors),
        ManagerResult::Origination(result) => backtrack_status(result, errors),
        ManagerResult::Delegation(result) => backtrack_status(result, errors),
        ManagerResult::IncreasePaidStorage(result) => backtrack_status(result, errors),
        ManagerResult::TransferTicket(result) => backtrack_status(result, errors),
        ManagerResult::Event(result) => backtrack_status(result, errors),
        _ => {}
    }
}

fn backtrack_status<T>(status: &mut OperationResult<T>, errors: Option<Vec<ProtocolError>>) {
    let taken = std::mem::replace(status, OperationResult::Skipped);
    *status = match taken {
        OperationResult::Applied(result) => OperationResult::Backtracked { errors, result },
        other => other,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Genesis;

    /// A tz1 account of 20 bytes `byte`.
    fn account(byte: u8) -> PublicKeyHash {
        let mut bytes = [byte; 21];
        bytes[0] = 0;
        PublicKeyHash::try_from_bytes(&bytes).expect("key hash")
    }

    /// Delegations in turn on the mockup genesis (five registered bootstrap delegates), each
    /// with the Octez error it gets (`delegate_storage.ml`), or none when it is applied.
    #[test]
    fn delegations_follow_octez_rules() {
        let genesis = Genesis::mockup();
        let bootstrap: Vec<PublicKeyHash> = genesis
            .accounts
            .iter()
            .map(|account| account.public_key.hash())
            .collect();
        let mut ledger = Ledger::genesis(&genesis).expect("genesis");
        let (newcomer, stranger) = (account(1), account(2));
        for allocated in [newcomer, stranger] {
            ledger.allocate_implicit(&allocated).expect("allocated");
        }
        let implicit = Destination::Implicit;
        let cases = [
            (newcomer, Some(bootstrap[1]), None),
            (newcomer, Some(bootstrap[1]), Some("delegate.unchanged")),
            (
                bootstrap[0],
                Some(bootstrap[1]),
                Some("delegate.no_deletion"),
            ),
            (
                bootstrap[0],
                Some(bootstrap[0]),
                Some("delegate.already_active"),
            ),
            (bootstrap[3], None, Some("delegate.no_deletion")),
            (
                stranger,
                Some(newcomer),
                Some("contract.manager.unregistered_delegate"),
            ),
            (newcomer, None, None),
            // Self-delegation registers: the newcomer may now be chosen.
            (newcomer, Some(newcomer), None),
            (stranger, Some(newcomer), None),
            (newcomer, Some(newcomer), Some("delegate.already_active")),
        ];
        for (contract, delegate, expected) in cases {
            let got = match set_delegate(&mut ledger, &implicit(contract), delegate.as_ref()) {
                Ok(()) => None,
                Err(Fault::Operation(error)) => Some(error.to_protocol_errors()[0].id.clone()),
                Err(Fault::Ledger(error)) => panic!("ledger: {error}"),
            };
            let expected = expected.map(|id| format!("{}{id}", super::super::ERROR_ID_PREFIX));
            assert_eq!(got, expected, "{contract} to {delegate:?}");
        }
        assert_eq!(
            ledger.delegate(&implicit(stranger)).expect("readable"),
            Some(newcomer)
        );
    }
}
