//! `…/context/…` RPCs on the state of any block (the router passes its ledger): the protocol
//! constants, contracts (balance, counter, manager key, script, storage, entrypoints), big-map
//! values and the liquidity-baking CPMM's address.

use kestrel_crypto::{ContractHash, Destination, PublicKeyHash, ScriptExprHash};
use kestrel_micheline::Node;
use kestrel_protocol::{Ledger, LedgerError};
use serde_json::{Map, Value};

use super::{error, quoted, Response};

/// The sandbox's `blocks_per_cycle` (`constants_sandbox`).
pub const BLOCKS_PER_CYCLE: i32 = 8;

/// The sandbox's `max_operations_time_to_live` ([`crate::chain::MAX_OPERATIONS_TIME_TO_LIVE`]).
pub const MAX_OPERATIONS_TIME_TO_LIVE: i32 = crate::chain::MAX_OPERATIONS_TIME_TO_LIVE as i32;

/// Protocol 025's sandbox constants as the constants RPC answers them
/// (`lib_parameters/default_parameters.ml`, `constants_sandbox`); the values application reads
/// are overwritten from the ledger's constants.
const SANDBOX_CONSTANTS: &str = include_str!("sandbox_constants.json");

pub fn route(ledger: &Ledger, rest: &[&str]) -> Response {
    let answer = match rest {
        ["constants"] => Ok(Some(constants(ledger))),
        ["contracts", id, rest @ ..] => contract(ledger, id, rest),
        ["big_maps", id, key] => big_map_value(ledger, id, key),
        ["liquidity_baking", "cpmm_address"] => cpmm_address(ledger),
        _ => Ok(None),
    };
    match answer {
        Ok(Some(json)) => Response::json(json),
        Ok(None) => error::not_found(),
        Err(ledger_error) => error::chain_error(&ledger_error.into()),
    }
}

fn constants(ledger: &Ledger) -> String {
    let mut value: Value =
        serde_json::from_str(SANDBOX_CONSTANTS).expect("the sandbox constants are JSON");
    let constants = ledger.constants();
    if let Some(object) = value.as_object_mut() {
        let mut set = |name: &str, value: Value| {
            object.insert(name.to_string(), value);
        };
        set(
            "hard_gas_limit_per_operation",
            Value::from(constants.hard_gas_limit_per_operation.to_string()),
        );
        set(
            "hard_gas_limit_per_block",
            Value::from(constants.hard_gas_limit_per_block.to_string()),
        );
        set(
            "hard_storage_limit_per_operation",
            Value::from(constants.hard_storage_limit_per_operation.to_string()),
        );
        set(
            "cost_per_byte",
            Value::from(constants.cost_per_byte_mutez.to_string()),
        );
        set(
            "origination_size",
            Value::from(constants.origination_size_bytes),
        );
        let rollup = kestrel_crypto::SmartRollupAddress::try_from_bytes(&[0; 20])
            .expect("20 bytes")
            .to_b58check();
        set("smart_rollup_canonical_rollup_address", Value::from(rollup));
        set(
            "minimal_block_delay",
            Value::from(constants.minimal_block_delay_seconds.to_string()),
        );
    }
    value.to_string()
}

fn contract(ledger: &Ledger, id: &str, rest: &[&str]) -> Result<Option<String>, LedgerError> {
    let Ok(destination) = Destination::from_b58check(id) else {
        return Ok(None);
    };
    match destination {
        Destination::Implicit(account) => implicit(ledger, &account, rest),
        Destination::Originated(contract) => {
            if !ledger.is_allocated(&destination)? {
                return Ok(None);
            }
            originated(ledger, &contract, rest)
        }
        Destination::SmartRollup(_) => Ok(None),
    }
}

fn implicit(
    ledger: &Ledger,
    account: &PublicKeyHash,
    rest: &[&str],
) -> Result<Option<String>, LedgerError> {
    let destination = Destination::Implicit(*account);
    // A never-seen account's counter is the global counter (`Contract.get_counter`).
    let counter = match ledger.counter(account)? {
        Some(counter) => counter,
        None => ledger.global_counter()?,
    };
    let manager_key = ledger.manager_key(account)?;
    Ok(match rest {
        [] => {
            let mut object = Map::new();
            object.insert(
                "balance".into(),
                Value::from(ledger.balance(&destination)?.to_string()),
            );
            if let Some(delegate) = ledger.delegate(&destination)? {
                object.insert("delegate".into(), Value::from(delegate.to_b58check()));
            }
            object.insert("counter".into(), Value::from(counter.to_string()));
            object.insert("revealed".into(), Value::from(manager_key.is_some()));
            Some(Value::Object(object).to_string())
        }
        ["balance"] | ["spendable"] | ["full_balance"] => {
            Some(quoted(&ledger.balance(&destination)?.to_string()))
        }
        ["counter"] => Some(quoted(&counter.to_string())),
        ["manager_key"] => Some(match manager_key {
            Some(key) => quoted(&key.to_b58check()),
            None => "null".to_string(),
        }),
        ["delegate"] => ledger
            .delegate(&destination)?
            .map(|delegate| quoted(&delegate.to_b58check())),
        _ => None,
    })
}

fn originated(
    ledger: &Ledger,
    contract: &ContractHash,
    rest: &[&str],
) -> Result<Option<String>, LedgerError> {
    let destination = Destination::Originated(*contract);
    let script = || -> Result<Option<(Node, Node)>, LedgerError> {
        Ok(
            match (ledger.script(contract)?, ledger.storage(contract)?) {
                (Some(code), Some(storage)) => Some((code, storage)),
                _ => None,
            },
        )
    };
    let script_json = |(code, storage): &(Node, Node)| {
        format!(
            "{{\"code\":{},\"storage\":{}}}",
            kestrel_micheline::json::to_json_string(code),
            kestrel_micheline::json::to_json_string(storage)
        )
    };
    Ok(match rest {
        [] => {
            let mut json = format!("{{\"balance\":\"{}\"", ledger.balance(&destination)?);
            if let Some(delegate) = ledger.delegate(&destination)? {
                json.push_str(&format!(",\"delegate\":\"{}\"", delegate.to_b58check()));
            }
            if let Some(script) = script()? {
                json.push_str(&format!(",\"script\":{}", script_json(&script)));
            }
            json.push('}');
            Some(json)
        }
        ["balance"] | ["spendable"] | ["full_balance"] => {
            Some(quoted(&ledger.balance(&destination)?.to_string()))
        }
        ["delegate"] => ledger
            .delegate(&destination)?
            .map(|delegate| quoted(&delegate.to_b58check())),
        ["script"] => script()?.map(|script| script_json(&script)),
        ["storage"] => ledger
            .storage(contract)?
            .map(|storage| kestrel_micheline::json::to_json_string(&storage)),
        ["entrypoints"] => ledger
            .script(contract)?
            .map(|code| super::scripts::entrypoints_json(&code)),
        _ => None,
    })
}

/// `liquidity_baking/cpmm_address`: the CPMM's address, when genesis originated it.
fn cpmm_address(ledger: &Ledger) -> Result<Option<String>, LedgerError> {
    let (cpmm, _, _) = kestrel_protocol::apply::liquidity_baking_addresses();
    Ok(ledger
        .script(&cpmm)?
        .map(|_| quoted(&Destination::Originated(cpmm).to_b58check())))
}

fn big_map_value(ledger: &Ledger, id: &str, key: &str) -> Result<Option<String>, LedgerError> {
    let (Ok(id), Ok(key)) = (id.parse::<i64>(), ScriptExprHash::from_b58check(key)) else {
        return Ok(None);
    };
    Ok(ledger
        .big_map_get(id, key.as_bytes())?
        .map(|value| kestrel_micheline::json::to_json_string(&value)))
}
