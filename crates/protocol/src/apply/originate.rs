//! Originations (`apply.ml`, `Origination` and `apply_origination`; `Contract_storage.raw_originate`):
//! the address from the operation's origination nonce, the script typechecked (external ones; an
//! internal one was checked by `CREATE_CONTRACT`), the storage's big maps allocated, code and
//! storage written in optimized form, the delegate and the credit, the storage paid for.

use kestrel_crypto::{ContractHash, Destination, PublicKeyHash};
use kestrel_micheline::Node;
use kestrel_michelson::{CodeContext, Config, Environment, Script, Type, UnparsingMode, Value};

use super::call::{z64, LAZY_EXPR_PREFIX_BYTES};
use super::gas::{deserialization_milli, write_access_milli, GasMeter};
use super::lazy_storage::{self, encoded_length};
use super::token::{self, Account};
use super::{paid_storage, ApplyError, Env, Fault};
use crate::field::Milligas;
use crate::host::LedgerHost;
use crate::manager::Origination;
use crate::receipt::{LazyStorageDiff, OriginationResult};

/// What an origination writes.
pub struct NewContract<'a> {
    /// Its address.
    pub address: ContractHash,
    /// Who originates it (and pays the credit).
    pub sender: Destination,
    /// Its code, as given.
    pub code: &'a Node,
    /// Its initial storage, typechecked.
    pub storage: &'a Value,
    /// The storage's type.
    pub storage_type: &'a Type,
    /// Its delegate.
    pub delegate: Option<PublicKeyHash>,
    /// Mutez credited.
    pub credit: u64,
}

/// An origination operation signed by `source`.
pub fn external(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    source: PublicKeyHash,
    origination: &Origination<'_>,
) -> Result<OriginationResult<'static>, Fault> {
    let address = env.nonce.next_contract();
    let storage_bytes = origination.script.storage.bytes();
    let code_bytes = origination.script.code.bytes();
    meter.consume(deserialization_milli(storage_bytes.len() as u64))?;
    meter.consume(deserialization_milli(code_bytes.len() as u64))?;
    let decode = |bytes: &[u8]| {
        kestrel_micheline::binary::decode(bytes)
            .map_err(|error| ApplyError::IllTypedContract(error.to_string()))
    };
    let (code, storage) = (decode(code_bytes)?, decode(storage_bytes)?);
    let config = Config {
        legacy: false,
        gas_limit_milli: meter.remaining_milli(),
    };
    let script = Script::typecheck(&code, &config)
        .map_err(|error| ApplyError::IllTypedContract(error.to_string()))?;
    meter.consume(script.typecheck_gas_milli())?;
    let storage = typecheck_storage(env, &script, &storage, meter)?;
    super::forged::refuse_forged_big_maps(&storage)?;
    let contract = NewContract {
        address,
        sender: Destination::Implicit(source),
        code: &code,
        storage: &storage,
        storage_type: script.storage_type(),
        delegate: origination.delegate,
        credit: origination.balance.0,
    };
    originate(env, meter, &contract)
}

/// Parses the initial storage against the script's storage type, with its cost.
pub fn typecheck_storage(
    env: &mut Env<'_>,
    script: &Script,
    storage: &Node,
    meter: &mut GasMeter,
) -> Result<Value, Fault> {
    let environment = Environment::default();
    let mut host = LedgerHost::new(env.ledger, &mut env.nonce);
    let context = CodeContext {
        environment: &environment,
        self_parameter: script.parameter_node(),
        host: &mut host,
        legacy: false,
    };
    let checked =
        kestrel_michelson::typecheck_data_metered(storage, script.storage_type(), &context);
    if let Some(error) = host.take_error() {
        return Err(error.into());
    }
    if let Some(location) = super::forged::forged_id_location(script.storage_type(), storage) {
        return Err(
            ApplyError::ForgedLazyStorageId(Box::new(super::error::ForgedValue {
                location,
                expression: storage.clone(),
                expected_type: script.storage_type().to_node(),
                called: None,
            }))
            .into(),
        );
    }
    let (value, cost) = checked.map_err(|error| ApplyError::IllTypedContract(error.to_string()))?;
    meter.consume(cost)?;
    Ok(value)
}

/// `apply_origination`: writes the contract and pays the credit.
pub fn originate(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    contract: &NewContract<'_>,
) -> Result<OriginationResult<'static>, Fault> {
    let lazy_storage_diff = write(env, meter, contract)?;
    let destination = Destination::Originated(contract.address);
    let balance_updates = token::transfer(
        env.ledger,
        Account::Contract(contract.sender),
        Account::Contract(destination),
        contract.credit,
        env.origin,
    )?;
    let (storage_size, paid_storage_size_diff) =
        paid_storage::record(env.ledger, &contract.address)?;
    Ok(OriginationResult {
        balance_updates,
        originated_contracts: vec![contract.address],
        consumed_milligas: Milligas(meter.consumed_milli()),
        storage_size: z64(storage_size),
        paid_storage_size_diff: z64(paid_storage_size_diff),
        lazy_storage_diff,
    })
}

/// `Contract.raw_originate` and what precedes it: the storage's big maps allocated, code and
/// storage written in optimized form with no storage paid yet, the delegate set. Returns the
/// big-map changes as the receipt shows them.
pub fn write(
    env: &mut Env<'_>,
    meter: &mut GasMeter,
    contract: &NewContract<'_>,
) -> Result<Option<LazyStorageDiff<'static>>, Fault> {
    meter.consume(kestrel_michelson::lazy_storage_walk_cost_milli(
        contract.storage_type,
        contract.storage,
    ))?;
    meter.consume(kestrel_michelson::lazy_storage_extract_cost_milli(
        contract.storage_type,
        contract.storage,
    ))?;
    let (storage, diffs) = {
        let mut host = LedgerHost::new(env.ledger, &mut env.nonce);
        let extracted = kestrel_michelson::extract_origination_big_maps(
            contract.storage,
            contract.storage_type,
            &mut host,
        );
        if let Some(error) = host.take_error() {
            return Err(error.into());
        }
        extracted
    };
    meter.consume(kestrel_michelson::big_map_diff_cost_milli(&diffs))?;
    meter.consume(kestrel_michelson::unparse_data_cost_milli(&storage))?;
    meter.consume(kestrel_michelson::unparse_code_cost_milli(contract.code))?;
    let storage = kestrel_michelson::normalize(&storage, UnparsingMode::Optimized);
    let code = kestrel_michelson::normalize_code(contract.code);
    let (code_size, storage_size) = (
        encoded_length(&code) + LAZY_EXPR_PREFIX_BYTES,
        encoded_length(&storage) + LAZY_EXPR_PREFIX_BYTES,
    );
    // `Contract.raw_originate`: each expression serialized (`Script.force_bytes`), then written.
    meter.consume(kestrel_michelson::serialization_cost_milli(&code))?;
    meter.consume(write_access_milli(code_size))?;
    meter.consume(kestrel_michelson::serialization_cost_milli(&storage))?;
    meter.consume(write_access_milli(storage_size))?;
    let destination = Destination::Originated(contract.address);
    env.ledger.set_balance(&destination, 0)?;
    env.ledger.set_script(&contract.address, &code)?;
    env.ledger.set_storage(&contract.address, &storage)?;
    let lazy = lazy_storage::apply(env.ledger, &diffs)?;
    meter.consume(lazy.gas_milli)?;
    let total = i128::from(code_size) + i128::from(storage_size) + lazy.size_diff_bytes;
    env.ledger.set_paid_bytes(&contract.address, 0)?;
    env.ledger
        .set_used_bytes(&contract.address, u128::try_from(total).unwrap_or(0))?;
    if let Some(delegate) = &contract.delegate {
        // `Delegate.Contract.init`: only to a registered delegate.
        if !super::manager::registered(env.ledger, delegate)? {
            return Err(ApplyError::UnregisteredDelegate(*delegate).into());
        }
        env.ledger.set_delegate(&destination, Some(delegate))?;
    }
    Ok(lazy.receipt)
}
