//! Calling an originated contract (`apply_transaction_to_smart_contract`): the tez moved, the
//! script loaded and typechecked (what Octez charges on a script-cache miss), the code run by
//! `kestrel_michelson::execute` under what the operation's gas leaves, the new storage and
//! big-map changes written, the storage paid for, and the operations the code emitted.

use kestrel_crypto::{ContractHash, Destination};
use kestrel_micheline::Node;
use kestrel_michelson::{
    Address, CodeContext, Environment, InternalOperation, Script, UnparsingMode, Value,
};

use super::gas::{
    cache_access_milli, deserialization_milli, read_access_milli, size_nodes_milli,
    type_has_tickets_milli, write_access_milli, GasMeter, CONTRACT_FIELD_PATH_LENGTH,
    MINIMAL_CACHED_CONTRACT_BYTES,
};
use super::lazy_storage::{self, encoded_length, expression};
use super::token::{self, Account};
use super::{paid_storage, ApplyError, Env, Fault};
use crate::field::{Milligas, Z64};
use crate::host::{vm_destination, LedgerHost};
use crate::ledger::LedgerError;
use crate::receipt::TransactionResult;

/// Bytes of the length prefix of a stored lazy expression (code, storage).
pub const LAZY_EXPR_PREFIX_BYTES: u64 = 4;

/// A call's argument: Micheline from an operation, or a value from a contract.
#[derive(Debug, Clone, Copy)]
pub enum Parameter<'a> {
    /// From a manager operation's bytes.
    Untyped(&'a Node),
    /// From `TRANSFER_TOKENS`.
    Typed(&'a Value),
}

/// Who calls what with what.
#[derive(Debug, Clone, Copy)]
pub struct CallArgs<'a> {
    /// The caller.
    pub sender: Destination,
    /// The contract called.
    pub contract: ContractHash,
    /// Mutez transferred.
    pub amount: u64,
    /// The entrypoint.
    pub entrypoint: &'a str,
    /// The argument.
    pub parameter: Parameter<'a>,
}

/// Runs the call: its result, and the operations the code emitted (nonces not yet assigned).
pub fn call(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    args: &CallArgs<'_>,
) -> Result<(TransactionResult<'static>, Vec<InternalOperation>), Fault> {
    let destination = Destination::Originated(args.contract);
    let (code, storage) = load(env, &args.contract)?;
    let storage_length = encoded_length(&storage);
    charge_load(meter, encoded_length(&code), storage_length)?;
    let balance_updates = token::transfer(
        env.ledger,
        Account::Contract(args.sender),
        Account::Contract(destination),
        args.amount,
        env.origin,
    )?;
    let code_bytes = kestrel_micheline::binary::encode(&code)
        .map_err(|error| ApplyError::IllTypedContract(format!("{error:?}")))?;
    let script = super::script_cache::typechecked(&code, &code_bytes, meter.remaining_milli())
        .map_err(|error| ApplyError::IllTypedContract(error.to_string()))?;
    let environment = environment(env, args)?;
    if let Parameter::Untyped(node) = args.parameter {
        refuse_forged_argument(env, &script, &environment, args.entrypoint, node)?;
    }
    let parameter = match args.parameter {
        Parameter::Untyped(node) => node.clone(),
        Parameter::Typed(value) => kestrel_michelson::normalize(value, UnparsingMode::Optimized),
    };
    let mut host = LedgerHost::new(env.ledger, &mut env.nonce);
    let run = kestrel_michelson::execute(
        &script,
        args.entrypoint,
        &parameter,
        &storage,
        &environment,
        &mut host,
        meter.remaining_milli(),
    );
    if let Some(error) = host.take_error() {
        return Err(error.into());
    }
    meter.consume(host.charged_milli())?;
    let execution = run.map_err(ApplyError::Execution)?;
    meter.consume(execution.consumed_milligas)?;
    charge_after_run(meter, &script, &execution.storage)?;
    let new_storage = kestrel_michelson::normalize(&execution.storage, UnparsingMode::Optimized);
    let new_length = encoded_length(&new_storage);
    meter.consume(write_access_milli(new_length + LAZY_EXPR_PREFIX_BYTES))?;
    let lazy = lazy_storage::apply(env.ledger, &execution.big_map_diff)?;
    meter.consume(lazy.gas_milli)?;
    env.ledger.set_storage(&args.contract, &new_storage)?;
    let storage_diff = i128::from(new_length) - i128::from(storage_length);
    paid_storage::add_used(
        env.ledger,
        &args.contract,
        storage_diff + lazy.size_diff_bytes,
    )?;
    let (storage_size, paid_storage_size_diff) = paid_storage::record(env.ledger, &args.contract)?;
    let originated_contracts = execution
        .operations
        .iter()
        .filter_map(|operation| match operation {
            InternalOperation::Origination { address, .. } => match address.to_crypto() {
                Destination::Originated(hash) => Some(hash),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let result = TransactionResult {
        storage: Some(expression(&new_storage)),
        balance_updates,
        ticket_updates: Vec::new(),
        originated_contracts,
        consumed_milligas: Milligas(meter.consumed_milli()),
        storage_size: z64(storage_size),
        paid_storage_size_diff: z64(paid_storage_size_diff),
        allocated_destination_contract: false,
        lazy_storage_diff: lazy.receipt,
        address_registry_diff: Vec::new(),
    };
    Ok((result, execution.operations))
}

/// A byte count as a receipt's `Z`.
pub fn z64(bytes: u64) -> Z64 {
    Z64(i64::try_from(bytes).unwrap_or(i64::MAX))
}

/// An implicit account's argument may not name stored big maps: checked when the entrypoint's
/// type has big maps (the run parses the argument again, as Octez's does once).
fn refuse_forged_argument(
    env: &mut Env<'_>,
    script: &Script,
    environment: &Environment,
    entrypoint: &str,
    argument: &Node,
) -> Result<(), Fault> {
    let declared = script
        .entrypoints()
        .into_iter()
        .find(|(name, _)| name == entrypoint)
        .map(|(_, ty)| ty);
    let ty = match declared {
        Some(ty) => ty,
        None if entrypoint == "default" => script.parameter_type().clone(),
        None => return Ok(()),
    };
    if !ty.has_big_map() {
        return Ok(());
    }
    let mut host = LedgerHost::new(env.ledger, &mut env.nonce);
    let context = CodeContext {
        environment,
        self_parameter: script.parameter_node(),
        host: &mut host,
        legacy: false,
    };
    // An ill-typed argument is reported by the run itself.
    if let Ok(value) = kestrel_michelson::typecheck_data(argument, &ty, &context) {
        super::forged::refuse_forged_big_maps(&value)?;
    }
    match host.take_error() {
        Some(error) => Err(error.into()),
        None => Ok(()),
    }
}

/// The contract's code and storage; a contract without them does not exist.
fn load(env: &Env<'_>, contract: &ContractHash) -> Result<(Node, Node), Fault> {
    let destination = Destination::Originated(*contract);
    let code = env
        .ledger
        .script(contract)?
        .ok_or(ApplyError::NonExistingContract(destination))?;
    let storage = env
        .ledger
        .storage(contract)?
        .ok_or_else(|| LedgerError::Corrupt {
            path: format!("contracts/index/{}/storage", destination.to_b58check()),
            expected: "the storage of a contract with code",
        })?;
    Ok((code, storage))
}

/// `Script_cache.find` on a miss: finding the code and the storage (`Contract.get_script`) and
/// decoding them.
fn charge_load(meter: &mut GasMeter, code_length: u64, storage_length: u64) -> Result<(), Fault> {
    meter.consume(find_and_decode_milli(code_length))?;
    meter.consume(find_and_decode_milli(storage_length))?;
    Ok(())
}

/// A carbonated `find` of a contract's code or storage of `length` bytes (a membership check,
/// then the read) and its decoding.
fn find_and_decode_milli(length: u64) -> u64 {
    read_access_milli(CONTRACT_FIELD_PATH_LENGTH, 0)
        .saturating_add(read_access_milli(
            CONTRACT_FIELD_PATH_LENGTH,
            length + LAZY_EXPR_PREFIX_BYTES,
        ))
        .saturating_add(deserialization_milli(length))
}

/// What reading another contract's code costs (`Contract.get_script_code`, for `CONTRACT` and
/// `contract` values).
pub fn contract_code_read_milli(code: &Node) -> u64 {
    find_and_decode_milli(encoded_length(code))
}

/// What Octez charges around the run that the VM does not: the script cache's lookup and two
/// updates (the cache starts each block empty, as in Octez's mockup mode, so every call misses
/// and inserts), the size of the loaded storage, the ticket scans of the parameter and storage
/// types, and unparsing the new storage.
fn charge_after_run(meter: &mut GasMeter, script: &Script, storage: &Value) -> Result<(), Fault> {
    let inserted_bytes = MINIMAL_CACHED_CONTRACT_BYTES;
    let storage_nodes = encoded_nodes(&kestrel_michelson::normalize(
        storage,
        UnparsingMode::Optimized,
    ));
    for cost in [
        cache_access_milli(0),
        cache_access_milli(0),
        cache_access_milli(inserted_bytes),
        size_nodes_milli(storage_nodes),
        type_has_tickets_milli(script.parameter_type().size() as u64),
        type_has_tickets_milli(script.storage_type().size() as u64),
        kestrel_michelson::unparse_data_cost_milli(storage),
    ] {
        meter.consume(cost)?;
    }
    Ok(())
}

/// The nodes of a Micheline expression.
fn encoded_nodes(node: &Node) -> u64 {
    let mut count = 0;
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        count += 1;
        pending.extend(node.children());
    }
    count
}

/// What the code's context instructions push.
fn environment(env: &Env<'_>, args: &CallArgs<'_>) -> Result<Environment, Fault> {
    let self_destination = Destination::Originated(args.contract);
    let balance = env.ledger.balance(&self_destination)?;
    let mutez = |value: u64| i64::try_from(value).map_err(|_| ApplyError::BalanceOverflow);
    Ok(Environment {
        amount_mutez: mutez(args.amount)?,
        balance_mutez: mutez(balance)?,
        now_seconds: env.block.timestamp_seconds,
        level: env.block.level,
        min_block_time_seconds: env.ledger.constants().minimal_block_delay_seconds,
        source: Address::new(vm_destination(&Destination::Implicit(env.payer))),
        sender: Address::new(vm_destination(&args.sender)),
        self_address: Address::new(vm_destination(&self_destination)),
        chain_id: *env.block.chain_id.as_bytes(),
    })
}
