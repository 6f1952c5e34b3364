//! Calling an originated contract (`apply_transaction_to_smart_contract`): the tez moved, the
//! script loaded and typechecked (what Octez charges on a script-cache miss), the code run by
//! `kestrel_michelson::execute` under what the operation's gas leaves, the new storage and
//! big-map changes written, the storage paid for, and the operations the code emitted.

use std::sync::Arc;

use kestrel_crypto::{ContractHash, Destination};
use kestrel_micheline::Node;
use kestrel_michelson::{
    Address, CodeContext, Environment, InternalOperation, Script, Type, UnparsingMode, Value,
};

use super::gas::{
    cache_access_milli, deserialization_milli, read_access_milli, size_nodes_milli,
    write_access_milli, GasMeter, CONTRACT_FIELD_PATH_LENGTH,
};
use super::lazy_storage::{self, encoded_length};
use super::script_cache::CachedScript;
use super::ticket;
use super::ticket_scan::{scan, type_has_tickets_cost};
use super::token::{self, Account};
use super::{paid_storage, ApplyError, Env, Fault};
use crate::field::{Milligas, Z64};
use crate::host::{vm_destination, LedgerHost};
use crate::internal::MichelineExpr;
use crate::ledger::{ApplyStage, LedgerError};
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
    let (code_bytes, storage_bytes) = load(env, &args.contract)?;
    let storage_length = storage_bytes.len() as u64;
    charge_load(env, meter, code_bytes.len() as u64, storage_length)?;
    let storage = decode(&storage_bytes, &args.contract, "storage")?;
    let balance_updates = token::transfer(
        env.ledger,
        Account::Contract(args.sender),
        Account::Contract(destination),
        args.amount,
        env.origin,
    )?;
    let script = super::script_cache::typechecked(&code_bytes, meter.remaining_milli(), || {
        decode(&code_bytes, &args.contract, "code")
    })?;
    // `Script_cache.find` inserts the script it loaded and elaborated.
    meter.consume(cache_access_milli(env.script_cache.bytes()))?;
    env.script_cache.insert(script.cached_size_bytes(&storage));
    let environment = environment(env, args)?;
    if let Parameter::Untyped(node) = args.parameter {
        refuse_forged_argument(
            env,
            &script,
            &environment,
            args.entrypoint,
            node,
            destination,
        )?;
    }
    let parameter = match args.parameter {
        Parameter::Untyped(node) => node.clone(),
        Parameter::Typed(value) => kestrel_michelson::normalize(value, UnparsingMode::Optimized),
    };
    let argument_reparse_milli = match args.parameter {
        Parameter::Untyped(_) => 0,
        Parameter::Typed(_) => {
            typed_argument_reparse_milli(env, &script, &environment, args.entrypoint, &parameter)?
        }
    };
    let left = env.ledger.clock().switch(ApplyStage::Execution);
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
    let (host_error, host_charged_milli) = (host.take_error(), host.charged_milli());
    env.ledger.clock().switch(left);
    if let Some(error) = host_error {
        return Err(error.into());
    }
    meter.consume(host_charged_milli)?;
    let execution = run.map_err(ApplyError::Execution)?;
    meter.consume(
        execution
            .consumed_milligas
            .saturating_sub(argument_reparse_milli),
    )?;
    charge_after_run(meter, &script, &storage, &execution.storage)?;
    let tickets = ticket_diffs(
        env,
        meter,
        &script,
        &environment,
        args,
        &storage,
        &execution,
    )?;
    let new_storage = kestrel_michelson::normalize(&execution.storage, UnparsingMode::Optimized);
    // `script_size` of the new storage, then `Script_cache.update`.
    meter.consume(size_nodes_milli(script.storage_size_nodes(&new_storage)))?;
    meter.consume(cache_access_milli(env.script_cache.bytes()))?;
    // Encoded once: its length is charged for, and the bytes are both stored and the receipt's.
    let new_bytes = kestrel_micheline::binary::encode(&new_storage).ok();
    let new_length = new_bytes.as_ref().map_or(0, |bytes| bytes.len() as u64);
    meter.consume(kestrel_michelson::serialization_cost_milli(&new_storage))?;
    meter.consume(write_access_milli(new_length + LAZY_EXPR_PREFIX_BYTES))?;
    let left = env.ledger.clock().switch(ApplyStage::StateWrites);
    let lazy = lazy_storage::apply(env.ledger, &execution.big_map_diff);
    env.ledger.clock().switch(left);
    let lazy = lazy?;
    meter.consume(lazy.gas_milli)?;
    match &new_bytes {
        // Unchanged storage (an FA1.2 transfer changes only its big map) is not written again.
        Some(bytes) if bytes[..] == storage_bytes[..] => {}
        Some(bytes) => env.ledger.set_storage_encoded(&args.contract, bytes)?,
        // Refused there as unencodable.
        None => env.ledger.set_storage(&args.contract, &new_storage)?,
    }
    let storage_diff = i128::from(new_length) - i128::from(storage_length);
    paid_storage::add_used(
        env.ledger,
        &args.contract,
        storage_diff + lazy.size_diff_bytes,
    )?;
    // `Ticket_accounting.update_ticket_balances`, then `Ticket_balance.adjust_storage_space`.
    let size_diff = ticket::update_balances(
        env.ledger,
        meter,
        &destination,
        &tickets.diffs,
        &execution.operations,
    )?;
    let ticket_paid_bytes = ticket::adjust_storage_space(env.ledger, size_diff)?;
    let (storage_size, paid_storage_size_diff) = paid_storage::record(env.ledger, &args.contract)?;
    let result = TransactionResult {
        storage: Some(MichelineExpr(std::borrow::Cow::Owned(
            new_bytes.unwrap_or_default(),
        ))),
        balance_updates,
        ticket_updates: tickets.receipt,
        // `Contract.originated_from_current_nonce` lists the contracts originated since the call
        // began that exist when it ends: those the code asks for are originated afterwards, by
        // their internal operations, which list them.
        originated_contracts: Vec::new(),
        consumed_milligas: Milligas(meter.consumed_milli()),
        storage_size: z64(storage_size),
        paid_storage_size_diff: z64(paid_storage_size_diff.saturating_add(ticket_paid_bytes)),
        allocated_destination_contract: false,
        lazy_storage_diff: lazy.receipt,
        address_registry_diff: Vec::new(),
    };
    Ok((result, execution.operations))
}

/// The call's ticket changes (`Ticket_accounting.ticket_diffs`, charged): its argument as the
/// whole parameter's value (the entrypoint's value wrapped in its `Left`s and `Right`s; parsed
/// again when it came as Micheline), its old storage (parsed again) and its new storage, each
/// scanned only when its type holds tickets.
fn ticket_diffs(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    script: &CachedScript,
    environment: &Environment,
    args: &CallArgs<'_>,
    old_storage: &Node,
    execution: &kestrel_michelson::Execution,
) -> Result<ticket::CallDiffs, Fault> {
    // Looked up only for a parameter that may hold tickets (an FA1.2 call pays nothing here).
    let entrypoint = match script.parameter_has_tickets {
        true => script.entrypoint(args.entrypoint),
        false => None,
    };
    let argument = match entrypoint {
        Some((ty, path)) => {
            let value = match args.parameter {
                Parameter::Typed(value) => Some(value.clone()),
                Parameter::Untyped(node) => {
                    parse_argument(env, script, environment, node, &ty)?.map(|(value, _)| value)
                }
            };
            value.map(|value| {
                path.iter().rev().fold(value, |inner, &left| match left {
                    true => Value::Left(std::rc::Rc::new(inner)),
                    false => Value::Right(std::rc::Rc::new(inner)),
                })
            })
        }
        _ => None,
    };
    let storage_type = script.storage_type();
    let old_storage = match script.storage_has_tickets {
        true => parse_argument(env, script, environment, old_storage, storage_type)?
            .map(|(value, _)| value),
        false => None,
    };
    let ledger: &crate::ledger::Ledger = env.ledger;
    let mut read = |id: i64, ty: &Type| ticket::stored_values(ledger, meter, id, ty);
    let argument = scan(
        script.parameter_type(),
        script.parameter_has_tickets,
        argument.as_ref(),
        Some(&mut read),
    )?;
    let big_maps = match script.storage_has_tickets {
        true => ticket::lazy_storage_tickets(ledger, meter, &execution.big_map_diff)?,
        false => Vec::new(),
    };
    let scans = ticket::CallScans {
        argument,
        old_storage: scan(
            storage_type,
            script.storage_has_tickets,
            old_storage.as_ref(),
            None,
        )?,
        new_storage: scan(
            storage_type,
            script.storage_has_tickets,
            Some(&execution.storage),
            None,
        )?,
        big_maps,
    };
    let self_contract = Destination::Originated(args.contract);
    Ok(ticket::call_diffs(meter, &self_contract, &scans)?)
}

/// A byte count as a receipt's `Z`.
pub fn z64(bytes: u64) -> Z64 {
    Z64(i64::try_from(bytes).unwrap_or(i64::MAX))
}

/// An implicit account's argument may not name stored big maps: checked when the entrypoint's
/// type has big maps (the run parses the argument again, as Octez's does once).
fn refuse_forged_argument(
    env: &mut Env<'_>,
    script: &CachedScript,
    environment: &Environment,
    entrypoint: &str,
    argument: &Node,
    called: Destination,
) -> Result<(), Fault> {
    let Some(ty) = script.entrypoint_type(entrypoint) else {
        return Ok(());
    };
    // No entrypoint's type holds a ticket when the whole parameter type holds none.
    let forgeable = ty.has_big_map() || (script.parameter_has_tickets && ty.has_ticket());
    if !forgeable {
        return Ok(());
    }
    if let Some(location) = super::forged::forged_id_location(&ty, argument) {
        return Err(
            ApplyError::ForgedLazyStorageId(Box::new(super::error::ForgedValue {
                location,
                expression: argument.clone(),
                expected_type: ty.to_node(),
                called: Some(called),
            }))
            .into(),
        );
    }
    if let Some((value, _)) = parse_argument(env, script, environment, argument, &ty)? {
        super::forged::refuse_forged_big_maps(&value)?;
    }
    Ok(())
}

/// The argument parsed as the entrypoint's type, with its cost; `None` when it is ill-typed,
/// which the run itself reports.
fn parse_argument(
    env: &mut Env<'_>,
    script: &Script,
    environment: &Environment,
    argument: &Node,
    ty: &Type,
) -> Result<Option<(Value, u64)>, Fault> {
    let mut host = LedgerHost::new(env.ledger, &mut env.nonce);
    let context = CodeContext {
        environment,
        self_parameter: script.parameter_node(),
        host: &mut host,
        legacy: false,
    };
    let parsed = kestrel_michelson::typecheck_data_metered(argument, ty, &context);
    match host.take_error() {
        Some(error) => Err(error.into()),
        None => Ok(parsed.ok()),
    }
}

/// A contract's argument is already typed: Octez checks its type against the entrypoint's
/// (`lift_execution_arg`, `ty_eq`) where the run parses its Micheline. What the run charged in
/// excess, in milligas.
fn typed_argument_reparse_milli(
    env: &mut Env<'_>,
    script: &Script,
    environment: &Environment,
    entrypoint: &str,
    argument: &Node,
) -> Result<u64, Fault> {
    let Some(ty) = script.entrypoint_type(entrypoint) else {
        return Ok(0);
    };
    let parsed = parse_argument(env, script, environment, argument, &ty)?;
    Ok(parsed.map_or(0, |(_, parse_milli)| {
        parse_milli.saturating_sub(kestrel_michelson::type_equality_cost_milli(&ty, &ty))
    }))
}

/// A contract's code and storage as stored (binary Micheline).
type StoredScript = (Arc<[u8]>, Arc<[u8]>);

/// The contract's code and storage as stored (their lengths are what Octez charges for, and a
/// cached script needs no decoding); a contract without them does not exist.
fn load(env: &Env<'_>, contract: &ContractHash) -> Result<StoredScript, Fault> {
    let destination = Destination::Originated(*contract);
    let code = env
        .ledger
        .script_bytes(contract)?
        .ok_or(ApplyError::NonExistingContract(destination))?;
    let storage = env
        .ledger
        .storage_bytes(contract)?
        .ok_or_else(|| LedgerError::Corrupt {
            path: format!("contracts/index/{}/storage", destination.to_b58check()),
            expected: "the storage of a contract with code",
        })?;
    Ok((code, storage))
}

/// A contract's stored `field` (code or storage) decoded.
fn decode(bytes: &[u8], contract: &ContractHash, field: &str) -> Result<Node, Fault> {
    kestrel_micheline::binary::decode(bytes).map_err(|_| {
        Fault::Ledger(LedgerError::Corrupt {
            path: format!(
                "contracts/index/{}/{field}",
                Destination::Originated(*contract).to_b58check()
            ),
            expected: "binary Micheline",
        })
    })
}

/// `Script_cache.find` on a miss: the lookup, then finding the code and the storage
/// (`Contract.get_script`) and decoding them.
fn charge_load(
    env: &Env<'_>,
    meter: &mut GasMeter,
    code_length: u64,
    storage_length: u64,
) -> Result<(), Fault> {
    meter.consume(cache_access_milli(env.script_cache.bytes()))?;
    meter.consume(fetch_and_decode_milli(code_length))?;
    meter.consume(fetch_and_decode_milli(storage_length))?;
    Ok(())
}

/// A carbonated `find` of a contract's code or storage of `length` bytes (a membership check,
/// then the read) and its decoding, charged twice: once by the storage accessor
/// (`Make_carbonated_map_expr.find`), once by the parser (`force_decode_in_context
/// ~consume_deserialization_gas:When_needed`, as the accessor charged without decoding).
fn fetch_and_decode_milli(length: u64) -> u64 {
    read_access_milli(CONTRACT_FIELD_PATH_LENGTH, 0)
        .saturating_add(read_access_milli(
            CONTRACT_FIELD_PATH_LENGTH,
            length + LAZY_EXPR_PREFIX_BYTES,
        ))
        .saturating_add(deserialization_milli(length).saturating_mul(2))
}

/// What reading another contract's code costs (`Contract.get_script_code`, for `CONTRACT` and
/// `contract` values).
pub fn contract_code_read_milli(code: &Node) -> u64 {
    fetch_and_decode_milli(encoded_length(code))
}

/// [`contract_code_read_milli`] of a code stored as `length` bytes (the writer is the only
/// encoder here, so a stored code's length is its encoded length).
pub(crate) fn stored_code_read_milli(length: usize) -> u64 {
    fetch_and_decode_milli(length as u64)
}

/// What Octez charges around the run that the VM does not (`Script_cache.find`'s insertion and
/// `script_size` of the loaded script, then `Script_interpreter.execute`'s epilogue up to the
/// ticket accounting): the storage's lazy-storage walk (`extract_lazy_storage_diff`), unparsing
/// it, the ticket scans of the parameter and storage types.
fn charge_after_run(
    meter: &mut GasMeter,
    script: &Script,
    old_storage: &Node,
    storage: &Value,
) -> Result<(), Fault> {
    let storage_type = script.storage_type();
    for cost in [
        size_nodes_milli(script.storage_size_nodes(old_storage)),
        kestrel_michelson::lazy_storage_extract_cost_milli(storage_type, storage),
        kestrel_michelson::unparse_data_cost_milli(storage),
        type_has_tickets_cost(script.parameter_type()),
        type_has_tickets_cost(storage_type),
    ] {
        meter.consume(cost)?;
    }
    Ok(())
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
